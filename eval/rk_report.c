/* report.html (rk_report.h): the page, its tables and the numbers behind the
 * figures; the figures themselves are drawn by rk_report_svg.c. */
#include "rk_report.h"
#include "rk_report_internal.h"
#include "rk_output.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ERR_BINS 32          /* prediction − rating in steps of 0.25 over [−4, 4] */
#define ERR_LO (-4.0)
#define ERR_W 0.25
#define MAX_RATING_GROUPS 20 /* distinct rating values shown one per bar */
#define RATING_BINS 10       /* equal-width bins when there are more */
#define SIM_BINS 20
#define CURVE_POINTS 400

static const char *const CSS =
    "body { font-family: sans-serif; color: #222; max-width: 760px; margin: 24px auto; padding: 0 12px;"
    " line-height: 1.4; }\n"
    "h1 { font-size: 22px; }\n"
    "h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; padding-bottom: 3px; }\n"
    "table { border-collapse: collapse; margin: 8px 0; font-size: 13px; }\n"
    "th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; }\n"
    "td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }\n"
    "tr.sum td { background: #f4f4f4; }\n"
    "p.warn { background: #fff3cd; border-left: 4px solid #c77700; padding: 6px 10px; }\n"
    "code { font-family: monospace; word-break: break-all; }\n"
    ".na { color: #777; font-style: italic; }\n"
    ".sw { display: inline-block; width: 10px; height: 10px; margin-right: 6px; }\n"
    "svg { display: block; margin: 10px 0; }\n"
    "svg .t { font-size: 13px; font-weight: bold; }\n";

static void note(FILE *fp, const char *why)
{
    fprintf(fp, "<p class=\"na\">not available: %s</p>\n", why); /* why: our own text */
}

static void h2(FILE *fp, const char *id, const char *title)
{
    fprintf(fp, "<h2 id=\"%s\">%s</h2>\n", id, title);
}

static void td_text(FILE *fp, const char *s)
{
    fputs("<td>", fp);
    rk_rep_esc(fp, s);
    fputs("</td>", fp);
}

static void td_int(FILE *fp, int64_t v)
{
    fprintf(fp, "<td class=\"n\">%" PRId64 "</td>", v);
}

static void td_fix(FILE *fp, int digits, double v)
{
    fputs("<td class=\"n\">", fp);
    rk_rep_fix(fp, digits, v);
    fputs("</td>", fp);
}

/* ---- 1. the run -------------------------------------------------------------- */

static void sec_run(FILE *fp, const rk_report_data *d)
{
    h2(fp, "run", "The run");
    fputs("<p>Command: ", fp);
    if (d->command != NULL) {
        fputs("<code>", fp);
        rk_rep_esc(fp, d->command);
        fputs("</code>", fp);
    } else {
        fputs("<span class=\"na\">not recorded</span>", fp);
    }
    fputs("<br/>Device: ", fp);
    rk_rep_esc(fp, d->device != NULL ? d->device : "not recorded");
    fputs("</p>\n", fp);
    fputs("<table><tr><th>users</th><th>items</th><th>ratings</th><th>training</th><th>test</th></tr>\n<tr>", fp);
    td_int(fp, d->users);
    td_int(fp, d->items);
    td_int(fp, d->ratings);
    td_int(fp, d->train_ratings);
    td_int(fp, d->test_ratings);
    fputs("</tr></table>\n", fp);
    if (d->n_options <= 0 || d->option_name == NULL || d->option_value == NULL) {
        fputs("<p class=\"na\">no options recorded</p>\n", fp);
        return;
    }
    fputs("<table><tr><th>option</th><th>value</th></tr>\n", fp);
    for (int i = 0; i < d->n_options; i++) {
        fputs("<tr>", fp);
        td_text(fp, d->option_name[i]);
        td_text(fp, d->option_value[i]);
        fputs("</tr>\n", fp);
    }
    fputs("</table>\n", fp);
}

/* ---- 2. time per stage -------------------------------------------------------- */

static double stage_sec(const rk_report_data *d, int i)
{
    double s = d->stage_s[i];
    return isfinite(s) && s > 0 ? s : 0.0;
}

static void sec_time(FILE *fp, const rk_report_data *d)
{
    h2(fp, "time", "Time per stage");
    if (d->n_stages <= 0 || d->stage_s == NULL) {
        note(fp, "no stage times");
        return;
    }
    double total = 0;
    for (int i = 0; i < d->n_stages; i++) total += stage_sec(d, i);
    if (total > 0) rk_rep_svg_stacked(fp, d->n_stages, d->stage_name, d->stage_s, total);
    else note(fp, "the stages took no measurable time");
    fputs("<table><tr><th>stage</th><th class=\"n\">seconds</th><th class=\"n\">share</th></tr>\n", fp);
    for (int i = 0; i < d->n_stages; i++) {
        double s = stage_sec(d, i);
        fprintf(fp, "<tr><td><span class=\"sw\" style=\"background: %s\"></span>",
                rk_rep_palette[i % RK_REP_PALETTE]);
        if (d->stage_name != NULL && d->stage_name[i] != NULL) rk_rep_esc(fp, d->stage_name[i]);
        else fprintf(fp, "stage %d", i + 1);
        fprintf(fp, "</td><td class=\"n\">%.3f</td><td class=\"n\">%.1f %%</td></tr>\n", s,
                total > 0 ? 100.0 * s / total : 0.0);
    }
    fprintf(fp, "<tr class=\"sum\"><td>total</td><td class=\"n\">%.3f</td><td class=\"n\">%.1f %%</td></tr>\n",
            total, total > 0 ? 100.0 : 0.0);
    fputs("</table>\n", fp);
}

/* ---- 3. prediction errors ----------------------------------------------------- */

/* v with the fewest decimals (up to 6) that read back as the same float. */
static void fmt_value(char *buf, size_t cap, float v)
{
    for (int dg = 0; dg <= 6; dg++) {
        snprintf(buf, cap, "%.*f", dg, (double)v);
        if ((float)strtod(buf, NULL) == v) return;
    }
}

/* Index of v in the sorted vals[n], or the slot where it goes as −1 − slot. */
static int find_value(const float *vals, int n, float v)
{
    int a = 0, b = n;
    while (a < b) {
        int m = (a + b) / 2;
        if (vals[m] < v) a = m + 1;
        else b = m;
    }
    return a < n && vals[a] == v ? a : -1 - a;
}

/* Sections that show one fold's data say so when there were several. */
static void last_fold(FILE *fp, const rk_report_data *d)
{
    if (d->n_folds > 1)
        fprintf(fp, "<p>The last of the %d folds; the means over every fold are in \"Ranking\" and the fold "
                    "table.</p>\n", d->n_folds);
}

static void sec_errors(FILE *fp, const rk_report_data *d)
{
    h2(fp, "errors", "Prediction errors");
    if (d->n_pred <= 0 || d->truth == NULL || d->pred == NULL) {
        note(fp, "no test set");
        return;
    }
    last_fold(fp, d);
    /* one pass: the histogram, the totals, the range and the distinct rating
     * values (until there are too many to show one bar each) */
    double hist[ERR_BINS] = {0}, se = 0, ae = 0, sum = 0;
    float vals[MAX_RATING_GROUPS + 1], tmin = INFINITY, tmax = -INFINITY;
    int nv = 0;
    int64_t used = 0;
    for (int64_t t = 0; t < d->n_pred; t++) {
        double r = d->truth[t], e = d->pred[t] - r;
        if (!isfinite(e)) continue;
        double b = floor((e - ERR_LO) / ERR_W); /* clamped before the cast: e may be huge */
        hist[b < 0 ? 0 : b >= ERR_BINS ? ERR_BINS - 1 : (int)b] += 1;
        se += e * e;
        ae += fabs(e);
        sum += e;
        used++;
        tmin = fminf(tmin, d->truth[t]);
        tmax = fmaxf(tmax, d->truth[t]);
        if (nv <= MAX_RATING_GROUPS) {
            int at = find_value(vals, nv, d->truth[t]);
            if (at < 0) {
                at = -1 - at;
                memmove(vals + at + 1, vals + at, (size_t)(nv - at) * sizeof *vals);
                vals[at] = d->truth[t];
                nv++;
            }
        }
    }
    fprintf(fp, "<p>%" PRId64 " predictions: RMSE ", used);
    rk_rep_fix(fp, 4, used > 0 ? sqrt(se / used) : 0.0);
    fputs(", MAE ", fp);
    rk_rep_fix(fp, 4, used > 0 ? ae / used : 0.0);
    fputs(", mean error ", fp);
    rk_rep_fix(fp, 4, used > 0 ? sum / used : 0.0);
    if (used < d->n_pred) fprintf(fp, " (%" PRId64 " left out: not finite)", d->n_pred - used);
    fputs(".</p>\n", fp);
    rk_rep_hist h = {"Prediction − rating (errors beyond ±4 in the end bins)", "prediction − rating",
                     "predictions", ERR_BINS, hist, ERR_LO, ERR_LO + ERR_BINS * ERR_W, 1.0, 0, 0.0, 1,
                     rk_rep_palette[0]};
    rk_rep_svg_hist(fp, &h);

    /* RMSE per true rating: one bar per value, or equal-width bins */
    int binned = nv > MAX_RATING_GROUPS, ng = binned ? RATING_BINS : nv;
    double cnt[MAX_RATING_GROUPS] = {0}, sse[MAX_RATING_GROUPS] = {0}, width = binned ? (tmax - tmin) / ng : 0;
    for (int64_t t = 0; t < d->n_pred; t++) {
        double e = d->pred[t] - d->truth[t];
        if (!isfinite(e)) continue;
        int g = binned ? (int)((d->truth[t] - tmin) / width) : find_value(vals, nv, d->truth[t]);
        if (g < 0) g = 0;
        if (g >= ng) g = ng - 1;
        cnt[g] += 1;
        sse[g] += e * e;
    }
    double rmse[MAX_RATING_GROUPS];
    char label[MAX_RATING_GROUPS][RK_REP_LABEL], sub[MAX_RATING_GROUPS][RK_REP_LABEL],
        top[MAX_RATING_GROUPS][RK_REP_LABEL], n_s[12];
    for (int g = 0; g < ng; g++) {
        rmse[g] = cnt[g] > 0 ? sqrt(sse[g] / cnt[g]) : 0.0;
        if (binned)
            snprintf(label[g], RK_REP_LABEL, "%.2f–%.2f", tmin + g * width, g + 1 == ng ? tmax : tmin + (g + 1) * width);
        else
            fmt_value(label[g], RK_REP_LABEL, vals[g]);
        rk_rep_short(n_s, sizeof n_s, cnt[g]);
        snprintf(sub[g], RK_REP_LABEL, "n %s", n_s);
        if (cnt[g] > 0 && !isfinite(rmse[g])) snprintf(top[g], RK_REP_LABEL, "n/a"); /* squares overflowed */
        else if (cnt[g] > 0) snprintf(top[g], RK_REP_LABEL, "%.3f", rmse[g]);
        else top[g][0] = '\0';
    }
    rk_rep_bars b = {"RMSE per true rating (n: predictions)", binned ? "true rating (bins)" : "true rating",
                     "RMSE", ng, rmse, label, sub, top, rk_rep_palette[4], 0};
    rk_rep_svg_bars(fp, &b);
}

/* ---- 4. neighbour lists --------------------------------------------------------- */

static int32_t list_len(const rk_lists *l, int32_t i)
{
    int32_t n = l->len[i];
    return n < 0 ? 0 : n > l->k ? l->k : n;
}

static void sec_lists(FILE *fp, const rk_report_data *d)
{
    const rk_lists *l = d->lists;
    h2(fp, "lists", "Neighbour lists");
    if (l == NULL) {
        note(fp, "no neighbour lists");
        return;
    }
    last_fold(fp, d);
    if (l->n_items <= 0 || l->k <= 0 || l->len == NULL) {
        note(fp, "the lists are empty");
        return;
    }
    int64_t entries = 0, full = 0, partial = 0, empty = 0;
    double smin = INFINITY, smax = -INFINITY;
    int below_one = 0, sup_bins = 1;
    for (int32_t i = 0; i < l->n_items; i++) {
        int32_t n = list_len(l, i);
        entries += n;
        if (n == l->k) full++;
        else if (n > 0) partial++;
        else empty++;
        for (int32_t j = 0; j < n; j++) {
            double s = l->sim[(int64_t)i * l->k + j];
            if (isfinite(s)) smin = fmin(smin, s), smax = fmax(smax, s);
            int32_t su = l->support[(int64_t)i * l->k + j];
            if (su < 1) below_one = 1;
            int b = 0;
            for (uint32_t v = su > 1 ? (uint32_t)su : 1u; v > 1; v >>= 1) b++;
            if (b + 1 > sup_bins) sup_bins = b + 1;
        }
    }
    fprintf(fp, "<p>%" PRId32 " items, lists of up to k = %" PRId32 ": %" PRId64 " entries, mean length ",
            l->n_items, l->k, entries);
    rk_rep_fix(fp, 2, (double)entries / l->n_items);
    fputs(".</p>\n", fp);
    if (entries == 0) {
        note(fp, "no list has an entry");
    } else {
        /* similarities: [0, 1] when they all lie in it, else their range */
        double lo = 0, hi = 1;
        if (!(smin >= 0 && smax <= 1)) {
            lo = isfinite(smin) ? smin : 0;
            hi = isfinite(smax) ? smax : 1;
            if (!(hi > lo)) lo -= 0.5, hi = lo + 1.0;
        }
        double hist[SIM_BINS] = {0}, sup[32] = {0};
        for (int32_t i = 0; i < l->n_items; i++)
            for (int32_t j = 0, n = list_len(l, i); j < n; j++) {
                double s = l->sim[(int64_t)i * l->k + j];
                if (isfinite(s)) {
                    int b = (int)((s - lo) / (hi - lo) * SIM_BINS);
                    hist[b < 0 ? 0 : b >= SIM_BINS ? SIM_BINS - 1 : b] += 1;
                }
                int32_t su = l->support[(int64_t)i * l->k + j];
                int b = 0;
                for (uint32_t v = su > 1 ? (uint32_t)su : 1u; v > 1; v >>= 1) b++;
                sup[b] += 1;
            }
        int unit = lo == 0 && hi == 1;
        rk_rep_hist h = {"Similarity of the list entries", "similarity", "entries", SIM_BINS, hist, lo, hi,
                         unit ? 0.1 : 0.0, unit ? 1 : -1, 0.0, !unit, rk_rep_palette[0]};
        rk_rep_svg_hist(fp, &h);
        char label[32][RK_REP_LABEL], top[32][RK_REP_LABEL], a[12], z[12];
        for (int b = 0; b < sup_bins; b++) {
            double first = ldexp(1.0, b), last = ldexp(1.0, b + 1) - 1;
            rk_rep_short(a, sizeof a, first);
            rk_rep_short(z, sizeof z, last);
            if (b == 0) snprintf(label[b], RK_REP_LABEL, below_one ? "≤1" : "1");
            else snprintf(label[b], RK_REP_LABEL, "%s–%s", a, z);
            rk_rep_short(top[b], RK_REP_LABEL, sup[b]);
        }
        rk_rep_bars sb = {"Support of the list entries (co-raters, bins doubling in width)", "co-raters",
                          "entries", sup_bins, sup, label, NULL, top, rk_rep_palette[3], 1};
        rk_rep_svg_bars(fp, &sb);
    }
    double v[3] = {(double)full, (double)partial, (double)empty};
    char label[3][RK_REP_LABEL], top[3][RK_REP_LABEL];
    snprintf(label[0], RK_REP_LABEL, "full: %" PRId32, l->k);
    if (l->k > 1) snprintf(label[1], RK_REP_LABEL, "partial: 1–%" PRId32, l->k - 1);
    else snprintf(label[1], RK_REP_LABEL, "partial");
    snprintf(label[2], RK_REP_LABEL, "empty: 0");
    for (int c = 0; c < 3; c++)
        snprintf(top[c], RK_REP_LABEL, "%.0f (%.1f %%)", v[c], 100.0 * v[c] / l->n_items);
    rk_rep_bars lb = {"List lengths", "entries in the list", "items", 3, v, label, NULL, top, rk_rep_palette[6], 1};
    rk_rep_svg_bars(fp, &lb);
}

/* ---- 5. folds ----------------------------------------------------------------- */

/* Mean and sample standard deviation (n − 1; 0 for one value) of n values
 * read with `get`. */
typedef double (*fold_get)(const rk_report_data *d, int f);
static void mean_sd(const rk_report_data *d, fold_get get, double *mean, double *sd)
{
    int n = d->n_folds;
    double s = 0, q = 0;
    for (int f = 0; f < n; f++) s += get(d, f);
    *mean = s / n;
    for (int f = 0; f < n; f++) q += (get(d, f) - *mean) * (get(d, f) - *mean);
    *sd = n > 1 ? sqrt(q / (n - 1)) : 0.0;
}

static double g_n(const rk_report_data *d, int f) { return (double)d->fold_eval[f].n; }
static double g_rmse(const rk_report_data *d, int f) { return d->fold_eval[f].rmse; }
static double g_mae(const rk_report_data *d, int f) { return d->fold_eval[f].mae; }
static double g_fb(const rk_report_data *d, int f) { return (double)d->fold_eval[f].fallbacks; }
static double g_prec(const rk_report_data *d, int f) { return d->fold_rank[f].precision; }
static double g_rec(const rk_report_data *d, int f) { return d->fold_rank[f].recall; }
static double g_ndcg(const rk_report_data *d, int f) { return d->fold_rank[f].ndcg; }
static double g_mrr(const rk_report_data *d, int f) { return d->fold_rank[f].mrr; }
static double g_hit(const rk_report_data *d, int f) { return d->fold_rank[f].hit_rate; }
static double g_cov(const rk_report_data *d, int f) { return d->fold_rank[f].coverage; }
static double b_prec(const rk_report_data *d, int f) { return d->fold_base[f].precision; }
static double b_rec(const rk_report_data *d, int f) { return d->fold_base[f].recall; }
static double b_ndcg(const rk_report_data *d, int f) { return d->fold_base[f].ndcg; }
static double b_mrr(const rk_report_data *d, int f) { return d->fold_base[f].mrr; }
static double b_hit(const rk_report_data *d, int f) { return d->fold_base[f].hit_rate; }
static double b_cov(const rk_report_data *d, int f) { return d->fold_base[f].coverage; }

static rk_status sec_folds(FILE *fp, const rk_report_data *d, rk_error *err)
{
    h2(fp, "folds", "Folds");
    if (d->n_folds <= 0 || d->fold_eval == NULL) {
        note(fp, "no test set");
        return RK_OK;
    }
    static const struct { const char *name; fold_get get; int digits, rank; } col[] = {
        {"test pairs", g_n, 0, 0}, {"RMSE", g_rmse, 4, 0},     {"MAE", g_mae, 4, 0},
        {"fallbacks", g_fb, 0, 0}, {"precision", g_prec, 4, 1}, {"recall", g_rec, 4, 1},
        {"NDCG", g_ndcg, 4, 1},    {"hit rate", g_hit, 4, 1},
    };
    int nc = d->fold_rank != NULL ? 8 : 4;
    fputs("<table><tr><th>fold</th>", fp);
    for (int c = 0; c < nc; c++) fprintf(fp, "<th class=\"n\">%s</th>", col[c].name);
    fputs("</tr>\n", fp);
    for (int f = 0; f < d->n_folds; f++) {
        fprintf(fp, "<tr><td>%d</td>", f + 1);
        for (int c = 0; c < nc; c++) td_fix(fp, col[c].digits, col[c].get(d, f));
        fputs("</tr>\n", fp);
    }
    for (int row = 0; row < 2; row++) {
        fprintf(fp, "<tr class=\"sum\"><td>%s</td>", row == 0 ? "mean" : "sd");
        for (int c = 0; c < nc; c++) {
            double m, s;
            mean_sd(d, col[c].get, &m, &s);
            td_fix(fp, col[c].digits == 0 ? 1 : col[c].digits, row == 0 ? m : s);
        }
        fputs("</tr>\n", fp);
    }
    fputs("</table>\n", fp);
    if (d->n_folds < 2) {
        note(fp, "one fold (no spread to plot)");
        return RK_OK;
    }
    double *v = malloc((size_t)d->n_folds * sizeof *v), m, sd;
    if (v == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory for %d fold values", d->n_folds);
    mean_sd(d, g_rmse, &m, &sd);
    for (int f = 0; f < d->n_folds; f++) v[f] = d->fold_eval[f].rmse;
    char title[80];
    snprintf(title, sizeof title, "RMSE per fold (dashed: the mean, %.4f)", m);
    rk_rep_svg_dots(fp, isfinite(m) ? title : "RMSE per fold", "RMSE", d->n_folds, v, m);
    free(v);
    return RK_OK;
}

/* ---- 6. ranking ---------------------------------------------------------------- */

static void cutoff_table(FILE *fp, const rk_report_data *d);

static void sec_ranking(FILE *fp, const rk_report_data *d)
{
    h2(fp, "ranking", "Ranking against the popularity baseline");
    if (d->fold_rank == NULL) {
        note(fp, "no top-N");
        return;
    }
    if (d->n_folds <= 0) {
        note(fp, "no test set");
        return;
    }
    static const char *const name[6] = {"precision", "recall", "NDCG", "MRR", "hit rate",
                                        "coverage (of the test users' lists)"};
    static const fold_get mg[6] = {g_prec, g_rec, g_ndcg, g_mrr, g_hit, g_cov};
    static const fold_get bg[6] = {b_prec, b_rec, b_ndcg, b_mrr, b_hit, b_cov};
    int ns = d->fold_base != NULL ? 2 : 1;
    double val[12], sd;
    for (int g = 0; g < 6; g++) {
        mean_sd(d, mg[g], &val[g * ns], &sd);
        if (ns == 2) mean_sd(d, bg[g], &val[g * ns + 1], &sd);
    }
    fprintf(fp, "<p>Top-%" PRId32 " lists; relevant: a held-out rating of at least ", d->fold_rank[0].n);
    rk_rep_fix(fp, 2, d->fold_rank[0].relevance);
    fprintf(fp, "; means over %d fold%s.%s</p>\n", d->n_folds, d->n_folds == 1 ? "" : "s",
            ns == 1 ? " The popularity baseline was not computed." : "");
    if (d->verdict != NULL && d->verdict[0] != '\0') {
        fputs(d->verdict_below ? "<p class=\"warn\"><strong>Warning:</strong> " : "<p>", fp);
        rk_rep_esc(fp, d->verdict);
        fputs(".</p>\n", fp);
    }
    fputs("<table><tr><th>metric</th><th class=\"n\">model</th>", fp);
    if (ns == 2) fputs("<th class=\"n\">popularity</th>", fp);
    fputs("</tr>\n", fp);
    for (int g = 0; g < 6; g++) {
        fputs("<tr>", fp);
        td_text(fp, name[g]);
        for (int s = 0; s < ns; s++) td_fix(fp, 4, val[g * ns + s]);
        fputs("</tr>\n", fp);
    }
    fputs("</table>\n", fp);
    static const char *const series[2] = {"model", "popularity baseline"};
    rk_rep_svg_grouped(fp, ns == 2 ? "Model and popularity baseline" : "Model", 6, name, ns, series, val);
    cutoff_table(fp, d);
}

/* The user metrics at every cutoff of --cutoffs (means over the folds; the
 * popularity baseline's NDCG beside them when it was measured). */
static void cutoff_table(FILE *fp, const rk_report_data *d)
{
    const rk_rank_result *r0 = &d->fold_rank[0];
    if (r0->n_cutoffs <= 1 || r0->n_cutoffs > RK_RANK_MAX_CUTOFFS) return;
    for (int f = 1; f < d->n_folds; f++) /* every fold measured at the same cutoffs */
        if (d->fold_rank[f].n_cutoffs != r0->n_cutoffs ||
            (d->fold_base != NULL && d->fold_base[f].n_cutoffs != r0->n_cutoffs))
            return;
    if (d->fold_base != NULL && d->fold_base[0].n_cutoffs != r0->n_cutoffs) return;
    fputs("<p>At each cutoff (<code>--cutoffs</code>), means over the folds:</p>\n<table><tr><th class=\"n\">N</th>"
          "<th class=\"n\">precision</th><th class=\"n\">recall</th><th class=\"n\">NDCG</th>"
          "<th class=\"n\">MAP</th><th class=\"n\">MRR</th><th class=\"n\">hit rate</th>", fp);
    if (d->fold_base != NULL) fputs("<th class=\"n\">NDCG, popularity</th>", fp);
    fputs("</tr>\n", fp);
    for (int c = 0; c < r0->n_cutoffs; c++) {
        double v[7] = {0};
        for (int f = 0; f < d->n_folds; f++) {
            const rk_rank_at *a = &d->fold_rank[f].at[c];
            v[0] += a->precision, v[1] += a->recall, v[2] += a->ndcg, v[3] += a->map, v[4] += a->mrr;
            v[5] += a->hit_rate;
            if (d->fold_base != NULL) v[6] += d->fold_base[f].at[c].ndcg;
        }
        fprintf(fp, "<tr><td class=\"n\">%d</td>", (int)r0->at[c].n);
        for (int x = 0; x < (d->fold_base != NULL ? 7 : 6); x++) td_fix(fp, 4, v[x] / d->n_folds);
        fputs("</tr>\n", fp);
    }
    fputs("</table>\n", fp);
}

/* ---- 6b. tuning ------------------------------------------------------------------ */

typedef struct scored {
    double score;
    int index;
} scored;

/* best first, equal scores in grid order (no state beside the pair: the
 * writer is reentrant) */
static int by_score_desc(const void *a, const void *b)
{
    const scored *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return x->index - y->index;
}

static rk_status sec_tuning(FILE *fp, const rk_report_data *d, rk_error *err)
{
    if (d->n_tune <= 0) return RK_OK;
    h2(fp, "tuning", "Tuning the ranking model");
    scored *order = malloc((size_t)d->n_tune * sizeof *order);
    if (order == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory sorting %d configurations", d->n_tune);
    for (int i = 0; i < d->n_tune; i++) order[i] = (scored){d->tune_score[i], i};
    qsort(order, (size_t)d->n_tune, sizeof *order, by_score_desc);
    fprintf(fp, "<p>%d configurations tried on a validation split of the training data (never the test set), "
                "every one, best first by ", d->n_tune);
    rk_rep_esc(fp, d->tune_metric != NULL ? d->tune_metric : "score");
    fputs(" on the validation part; the chosen one is shaded.</p>\n<table><tr><th>configuration</th>"
          "<th class=\"n\">score</th></tr>\n", fp);
    for (int r = 0; r < d->n_tune; r++) {
        const int i = order[r].index;
        fputs(i == d->tune_best ? "<tr class=\"sum\">" : "<tr>", fp);
        td_text(fp, d->tune_label[i]);
        td_fix(fp, 4, d->tune_score[i]);
        fputs("</tr>\n", fp);
    }
    fputs("</table>\n", fp);
    free(order);
    return RK_OK;
}

/* ---- 7. concentration ------------------------------------------------------------- */

static int desc_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x < y) - (x > y);
}

static rk_status sec_concentration(FILE *fp, const rk_report_data *d, rk_error *err)
{
    h2(fp, "concentration", "Concentration of the recommendations");
    if (d->n_items <= 0 || d->item_counts == NULL) {
        note(fp, "no top-N");
        return RK_OK;
    }
    int64_t n = d->n_items, *c = malloc((size_t)n * sizeof *c);
    if (c == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory sorting %" PRId64 " item counts", n);
    int64_t recommended = 0;
    double total = 0;
    for (int64_t i = 0; i < n; i++) {
        c[i] = d->item_counts[i] > 0 ? d->item_counts[i] : 0;
        recommended += c[i] > 0;
        total += (double)c[i];
    }
    qsort(c, (size_t)n, sizeof *c, desc_i64);
    /* Gini as in rk_rank.h, G = Σ_i (2i − n − 1) c_(i) / (n Σ c) over counts
     * ascending: the i-th ascending is the (n − i)-th descending (from 0) */
    double g = 0;
    for (int64_t j = 0; j < n; j++) g += (double)(n - 2 * j - 1) * (double)c[j];
    double gini = total > 0 ? g / ((double)n * total) : 0.0;
    int64_t top_n[2] = {(n + 99) / 100, (n + 9) / 10};
    double top_x[2], top_y[2], acc = 0;
    for (int m = 0, j = 0; m < 2; m++) {
        for (; j < top_n[m]; j++) acc += (double)c[j];
        top_x[m] = (double)top_n[m] / n;
        top_y[m] = total > 0 ? acc / total : 0.0;
    }
    fprintf(fp, "<p>Every user's recommendations%s: %" PRId64 " items, %.0f recommendations; catalogue coverage ",
            d->n_folds > 1 ? " (the last fold)" : "", n, total);
    rk_rep_fix(fp, 4, (double)recommended / n);
    fprintf(fp, " (%" PRId64 " of %" PRId64 " items recommended at least once); Gini index ", recommended, n);
    rk_rep_fix(fp, 4, gini);
    fputs(".</p>\n<table><tr><th>most recommended</th><th class=\"n\">items</th>"
          "<th class=\"n\">share of the recommendations</th></tr>\n", fp);
    for (int m = 0; m < 2; m++)
        fprintf(fp, "<tr><td>top %s</td><td class=\"n\">%" PRId64 "</td><td class=\"n\">%.2f %%</td></tr>\n",
                m == 0 ? "1 %" : "10 %", top_n[m], 100.0 * top_y[m]);
    fputs("</table>\n", fp);
    if (!(total > 0)) {
        note(fp, "nothing was recommended");
        free(c);
        return RK_OK;
    }
    /* the curve through CURVE_POINTS + 1 evenly spaced item counts */
    int np = n < CURVE_POINTS ? (int)n : CURVE_POINTS;
    double x[CURVE_POINTS + 1], y[CURVE_POINTS + 1];
    acc = 0;
    x[0] = y[0] = 0;
    for (int k = 1, j = 0; k <= np; k++) {
        int64_t upto = (int64_t)((double)n * k / np + 0.5);
        if (upto > n) upto = n;
        for (; j < upto; j++) acc += (double)c[j];
        x[k] = (double)upto / n;
        y[k] = acc / total;
    }
    free(c);
    rk_rep_svg_curve(fp, np + 1, x, y, top_x, top_y);
    return RK_OK;
}

/* ---- the page --------------------------------------------------------------------- */

rk_status rk_report_write(FILE *fp, const rk_report_data *d, rk_error *err)
{
    if (fp == NULL || d == NULL) return rk_error_set(err, RK_E_ARG, "report: no stream or no data");
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
          "<title>recknn report</title>\n<style>\n", fp);
    fputs(CSS, fp);
    fputs("</style>\n</head>\n<body>\n<h1>recknn report</h1>\n", fp);
    sec_run(fp, d);
    sec_time(fp, d);
    sec_errors(fp, d);
    sec_lists(fp, d);
    RK_FORWARD(sec_folds(fp, d, err));
    sec_ranking(fp, d);
    RK_FORWARD(sec_tuning(fp, d, err));
    RK_FORWARD(sec_concentration(fp, d, err));
    fputs("</body>\n</html>\n", fp);
    if (fflush(fp) != 0 || ferror(fp)) {
        const char *path = rk_out_path_of(fp);
        return rk_error_set(err, RK_E_IO, "cannot write %s: %s", path != NULL ? path : "report.html",
                            strerror(errno != 0 ? errno : EIO));
    }
    return RK_OK;
}
