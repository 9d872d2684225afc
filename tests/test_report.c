/* rk_report: the page is well-formed XML with nothing fetched from elsewhere,
 * strings are escaped, the numbers shown match an independent computation
 * (fold RMSEs and their mean and sample sd, the Gini index by pairwise
 * differences, shares, histogram bins, list lengths), the number of figures
 * follows from the data, and empty or degenerate data give the "not
 * available" notes and no NaN or Inf.  With RK_REPORT_OUT set, the page of
 * the full data is also written there (to look at it: bench/render_report.sh). */
#define _POSIX_C_SOURCE 200809L
#include "rk_report.h"
#include "test_util.h"

#include <ctype.h>
#include <math.h>
#include <string.h>
#include <strings.h>

/* ---- the page ----------------------------------------------------------------- */

static char *render(const rk_report_data *d, rk_status *st)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    CU_ASSERT_FATAL(fp != NULL);
    rk_error err;
    rk_error_clear(&err);
    *st = rk_report_write(fp, d, &err);
    CU_ASSERT_FATAL(fclose(fp) == 0);
    CU_ASSERT_FATAL(buf != NULL);
    CU_ASSERT(strlen(buf) == len); /* no NUL inside */
    return buf;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle)) n++;
    return n;
}

static int count_nocase(const char *hay, const char *needle)
{
    int n = 0;
    size_t k = strlen(needle);
    for (const char *p = hay; *p; p++) n += strncasecmp(p, needle, k) == 0;
    return n;
}

/* 1 when the section whose <h2> has this id holds needle. */
static int in_section(const char *page, const char *id, const char *needle)
{
    char h[64];
    snprintf(h, sizeof h, "<h2 id=\"%s\"", id);
    const char *a = strstr(page, h);
    if (a == NULL) return 0;
    const char *z = strstr(a + 1, "<h2");
    size_t n = z != NULL ? (size_t)(z - a) : strlen(a);
    char *s = malloc(n + 1);
    memcpy(s, a, n);
    s[n] = '\0';
    int found = strstr(s, needle) != NULL;
    free(s);
    return found;
}

/* ---- a small XML checker ---------------------------------------------------------- */

static int name_char(int c)
{
    return isalnum(c) || c == '-' || c == '_' || c == ':' || c == '.';
}

/* An entity at p ('&'): one of XML's five or a character reference. */
static int entity_len(const char *p)
{
    static const char *const named[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
    for (size_t k = 0; k < 5; k++)
        if (strncmp(p, named[k], strlen(named[k])) == 0) return (int)strlen(named[k]);
    if (p[1] != '#') return 0;
    int k = 2, hex = p[2] == 'x';
    if (hex) k++;
    int start = k;
    while (hex ? isxdigit((unsigned char)p[k]) : isdigit((unsigned char)p[k])) k++;
    return k > start && p[k] == ';' ? k + 1 : 0;
}

/* NULL when s is the doctype and then one well-formed element (elements nest,
 * attributes are quoted, & only in entities, < only in markup), else why not. */
static const char *xml_check(const char *s)
{
    static const char doctype[] = "<!DOCTYPE html>";
    if (strncmp(s, doctype, strlen(doctype)) != 0) return "no doctype";
    const char *p = s + strlen(doctype);
    char stack[64][32];
    int depth = 0, roots = 0;
    while (*p) {
        if (*p == '&') {
            int n = entity_len(p);
            if (n == 0) return "bare &";
            p += n;
        } else if (*p != '<') {
            if (depth == 0 && !isspace((unsigned char)*p)) return "text outside the root";
            p++;
        } else if (strncmp(p, "<!--", 4) == 0) {
            const char *e = strstr(p + 4, "-->");
            if (e == NULL) return "open comment";
            p = e + 3;
        } else if (p[1] == '/') {
            p += 2;
            int n = 0;
            while (name_char((unsigned char)p[n])) n++;
            if (depth == 0 || n == 0 || (int)strlen(stack[depth - 1]) != n || strncmp(stack[depth - 1], p, (size_t)n))
                return "mismatched end tag";
            p += n;
            while (isspace((unsigned char)*p)) p++;
            if (*p++ != '>') return "bad end tag";
            depth--;
        } else {
            p++;
            int n = 0;
            while (name_char((unsigned char)p[n])) n++;
            if (n == 0 || n >= 32 || !isalpha((unsigned char)p[0])) return "bad tag name";
            if (depth == 0 && roots++ > 0) return "two roots";
            if (depth == 64) return "too deep";
            memcpy(stack[depth], p, (size_t)n);
            stack[depth][n] = '\0';
            p += n;
            for (;;) {
                int sp = 0;
                while (isspace((unsigned char)*p)) p++, sp++;
                if (p[0] == '/' && p[1] == '>') {
                    p += 2;
                    break;
                }
                if (*p == '>') {
                    p++;
                    depth++;
                    break;
                }
                if (!sp) return "attribute not separated";
                int a = 0;
                while (name_char((unsigned char)p[a])) a++;
                if (a == 0) return "bad attribute name";
                p += a;
                if (p[0] != '=' || p[1] != '"') return "attribute without a quoted value";
                p += 2;
                while (*p != '"') {
                    if (*p == '\0' || *p == '<') return "bad attribute value";
                    if (*p == '&') {
                        int e = entity_len(p);
                        if (e == 0) return "bare & in an attribute";
                        p += e;
                    } else {
                        p++;
                    }
                }
                p++;
            }
        }
    }
    if (depth != 0) return "unclosed element";
    return roots == 1 ? NULL : "no root";
}

/* The checks every page must pass: well-formed, nothing fetched, no script,
 * no number that is not finite. */
static void check_page(const char *page)
{
    const char *why = xml_check(page);
    if (why != NULL) fprintf(stderr, "\nxml_check: %s\n", why);
    CU_ASSERT(why == NULL);
    CU_ASSERT(strncmp(page, "<!DOCTYPE html>", 15) == 0);
    CU_ASSERT(count_nocase(page, "<script") == 0);
    CU_ASSERT(count_nocase(page, "https://") == 0);
    /* every http:// is the SVG namespace, the one URL allowed */
    CU_ASSERT(count_nocase(page, "http://") == count(page, "xmlns=\"http://www.w3.org/2000/svg\""));
    CU_ASSERT(count_nocase(page, "url(") == 0);
    CU_ASSERT(count_nocase(page, "@import") == 0);
    CU_ASSERT(count_nocase(page, " href=") == 0);
    CU_ASSERT(count_nocase(page, " src=") == 0);
    CU_ASSERT(count_nocase(page, "<svg") == count(page, "</svg>"));
    /* printf's spellings of NaN and Inf (the data here never contain them) */
    CU_ASSERT(count_nocase(page, "nan") == 0);
    CU_ASSERT(count_nocase(page, "inf") == 0);
}

/* ---- the data ------------------------------------------------------------------- */

#define NF 3
#define NI 200 /* items of the counts */

static const char *const opt_name[] = {"k", "metric", "evil"};
static const char *const opt_value[] = {"20", "cosine", "<&\">"};
static const char *const stage_name[] = {"load", "knn <fast>", "write"};
static const double stage_s[] = {1.0, 3.0, 0.0};
/* errors: 4 → +0.5 and −0.5, 3 → +1, 5 → −0.3 and +6.5 (clamped into
 * [3.75, 4.00)), 2 → −5.5 (clamped into [−4.00, −3.75)), 3.5 → +0.3; bins
 * are closed below: [−0.50, −0.25) holds −0.5 and −0.3, [0.25, 0.50) 0.3 */
static const float truth[] = {4, 4, 3, 5, 5, 2, 3.5};
static const double pred[] = {4.5, 3.5, 4, 4.7, 11.5, -3.5, 3.8};
#define NP 7

static int32_t l_len[4] = {3, 1, 0, 3};
static int32_t l_nbr[12] = {1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 1, 2};
static float l_sim[12] = {0.9f, 0.5f, 0.12f, 0.3f, 0, 0, 0, 0, 0, 1.0f, 0.95f, 0.05f};
static int32_t l_sup[12] = {1, 2, 3, 4, 0, 0, 0, 0, 0, 9, 17, 5};
static rk_lists lists = {4, 3, l_len, l_nbr, l_sim, l_sup};

static rk_eval_result evals[NF] = {
    {100, 0.91, 0.71, 3, 0, 0}, {110, 0.85, 0.66, 5, 1, 0}, {105, 1.03, 0.80, 4, 0, 2},
};
static rk_rank_result ranks[NF], base[NF];
static int64_t counts[NI];

static void fill_ranks(void)
{
    for (int f = 0; f < NF; f++) {
        rk_rank_result r = {.n = 10, .relevance = 4.0, .users = 50, .users_without_list = 2,
                            .precision = 0.1 + 0.01 * f, .recall = 0.2 + 0.03 * f, .ndcg = 0.15 + 0.02 * f,
                            .mrr = 0.3 + 0.01 * f, .hit_rate = 0.5 + 0.05 * f, .lists = 60, .rows = 600,
                            .items_recommended = 40 + f, .coverage = 0.2 + 0.01 * f, .gini = 0.7};
        rk_rank_result b = r;
        b.precision = 0.05 + 0.004 * f;
        b.recall = 0.1;
        b.ndcg = 0.08;
        b.mrr = 0.2;
        b.hit_rate = 0.3;
        b.coverage = 0.05;
        ranks[f] = r;
        base[f] = b;
    }
    unsigned long long st = 7;
    for (int i = 0; i < NI; i++) /* a few heavy items, many light or unused ones */
        counts[i] = rk_test_rand(&st) % 3 == 0 ? 0 : (int64_t)(rk_test_rand(&st) % 20) + (i % 37 == 0 ? 500 : 0);
}

static void full_data(rk_report_data *d)
{
    fill_ranks();
    memset(d, 0, sizeof *d);
    d->command = "recknn --metric cosine -k 20 ratings.csv";
    d->n_options = 3;
    d->option_name = opt_name;
    d->option_value = opt_value;
    d->device = "cpu";
    d->users = 943;
    d->items = 1682;
    d->ratings = 100000;
    d->train_ratings = 80000;
    d->test_ratings = 20000;
    d->n_stages = 3;
    d->stage_name = stage_name;
    d->stage_s = stage_s;
    d->n_pred = NP;
    d->truth = truth;
    d->pred = pred;
    d->lists = &lists;
    d->n_folds = NF;
    d->fold_eval = evals;
    d->fold_rank = ranks;
    d->fold_base = base;
    d->n_items = NI;
    d->item_counts = counts;
}

/* Figures the data imply: the time bar (time > 0), two for the errors, the
 * lists' three (two without entries), the fold dots (2 folds or more), the
 * ranking bars, the concentration curve (something recommended). */
static int expected_svgs(const rk_report_data *d)
{
    int n = 0;
    double t = 0;
    for (int i = 0; i < d->n_stages; i++) t += d->stage_s[i] > 0 ? d->stage_s[i] : 0;
    n += t > 0;
    n += d->n_pred > 0 ? 2 : 0;
    if (d->lists != NULL && d->lists->n_items > 0) {
        int64_t e = 0;
        for (int i = 0; i < d->lists->n_items; i++) e += d->lists->len[i];
        n += e > 0 ? 3 : 1;
    }
    n += d->n_folds >= 2;
    n += d->fold_rank != NULL && d->n_folds >= 1;
    int64_t c = 0;
    for (int i = 0; i < d->n_items && d->item_counts != NULL; i++) c += d->item_counts[i];
    n += c > 0;
    return n;
}

/* ---- the tests ------------------------------------------------------------------- */

static void test_full_page(void)
{
    rk_report_data d;
    full_data(&d);
    rk_status st;
    char *page = render(&d, &st);
    CU_ASSERT_EQUAL(st, RK_OK);
    check_page(page);
    CU_ASSERT_EQUAL(count(page, "<svg"), expected_svgs(&d));
    CU_ASSERT_EQUAL(count(page, "<svg"), 9);
    CU_ASSERT_EQUAL(count(page, "<h2"), 7);
    CU_ASSERT(count(page, "not available") == 0);
    char b[128];

    /* the run: escaped option value and stage name, counts */
    CU_ASSERT(strstr(page, "&lt;&amp;&quot;&gt;") != NULL);
    CU_ASSERT(strstr(page, "<&\">") == NULL);
    CU_ASSERT(in_section(page, "time", "knn &lt;fast&gt;"));
    CU_ASSERT(in_section(page, "run", "<td class=\"n\">80000</td>"));
    /* 1 s and 3 s of 4 */
    CU_ASSERT(in_section(page, "time", ">25.0 %<"));
    CU_ASSERT(in_section(page, "time", ">75.0 %<"));
    CU_ASSERT(in_section(page, "time", ">4.000<"));

    /* prediction errors: totals and bins computed here */
    double se = 0, ae = 0;
    int bin_lo = 0, bin_hi = 0, bin_a = 0, bin_b = 0;
    for (int t = 0; t < NP; t++) {
        double e = pred[t] - truth[t];
        se += e * e;
        ae += fabs(e);
        bin_lo += e < -3.75;
        bin_hi += e >= 3.75;
        bin_a += e >= 0.25 && e < 0.5;
        bin_b += e >= -0.5 && e < -0.25;
    }
    snprintf(b, sizeof b, "RMSE %.4f, MAE %.4f", sqrt(se / NP), ae / NP);
    CU_ASSERT(in_section(page, "errors", b));
    snprintf(b, sizeof b, "[-4.00, -3.75): %d<", bin_lo);
    CU_ASSERT(in_section(page, "errors", b));
    snprintf(b, sizeof b, "[3.75, 4.00): %d<", bin_hi);
    CU_ASSERT(in_section(page, "errors", b));
    snprintf(b, sizeof b, "[0.25, 0.50): %d<", bin_a);
    CU_ASSERT(in_section(page, "errors", b));
    snprintf(b, sizeof b, "[-0.50, -0.25): %d<", bin_b);
    CU_ASSERT(in_section(page, "errors", b));
    CU_ASSERT(bin_lo == 1 && bin_hi == 1 && bin_a == 1 && bin_b == 2);
    /* RMSE per true rating, by hand: 4 → 0.5, 3 → 1, 5 → sqrt((0.09 + 42.25)/2), 2 → 5.5, 3.5 → 0.3 */
    CU_ASSERT(in_section(page, "errors", ">0.500<"));
    CU_ASSERT(in_section(page, "errors", ">1.000<"));
    snprintf(b, sizeof b, ">%.3f<", sqrt((0.09 + 42.25) / 2));
    CU_ASSERT(in_section(page, "errors", b));
    CU_ASSERT(in_section(page, "errors", ">5.500<"));
    CU_ASSERT(in_section(page, "errors", ">3.5<")); /* a label of a half-star value */

    /* lists: 7 entries over 4 items; full 2, partial 1, empty 1 */
    CU_ASSERT(in_section(page, "lists", "7 entries, mean length 1.75"));
    CU_ASSERT(in_section(page, "lists", ">2 (50.0 %)<"));
    CU_ASSERT(in_section(page, "lists", ">1 (25.0 %)<"));
    /* support bins 1, 2–3, 4–7, 8–15, 16–31: 1, 2, 2, 1, 1 entries */
    CU_ASSERT(in_section(page, "lists", "2–3: 2.0000<"));
    CU_ASSERT(in_section(page, "lists", "16–31: 1.0000<"));

    /* folds: each RMSE, their mean and sample sd, computed here */
    double m = 0, q = 0;
    for (int f = 0; f < NF; f++) {
        snprintf(b, sizeof b, ">%.4f<", evals[f].rmse);
        CU_ASSERT(in_section(page, "folds", b));
        m += evals[f].rmse / NF;
    }
    for (int f = 0; f < NF; f++) q += (evals[f].rmse - m) * (evals[f].rmse - m);
    snprintf(b, sizeof b, ">%.4f<", m);
    CU_ASSERT(in_section(page, "folds", b));
    snprintf(b, sizeof b, ">%.4f<", sqrt(q / (NF - 1)));
    CU_ASSERT(in_section(page, "folds", b));
    CU_ASSERT(in_section(page, "folds", ">0.0917<")); /* by hand: sqrt(0.0168 / 2) */
    snprintf(b, sizeof b, ">%.4f<", ranks[2].hit_rate);
    CU_ASSERT(in_section(page, "folds", b));

    /* ranking: means of the model and of the baseline */
    double pm = 0, pb = 0;
    for (int f = 0; f < NF; f++) pm += ranks[f].precision / NF, pb += base[f].precision / NF;
    snprintf(b, sizeof b, ">%.4f<", pm);
    CU_ASSERT(in_section(page, "ranking", b));
    snprintf(b, sizeof b, ">%.4f<", pb);
    CU_ASSERT(in_section(page, "ranking", b));
    CU_ASSERT(in_section(page, "ranking", "popularity baseline"));

    /* concentration: Gini as the mean absolute difference, Σ_i Σ_j |c_i − c_j| / (2 n Σ c) */
    double sum = 0, diff = 0;
    int used = 0;
    for (int i = 0; i < NI; i++) {
        sum += (double)counts[i];
        used += counts[i] > 0;
        for (int j = 0; j < NI; j++) diff += fabs((double)(counts[i] - counts[j]));
    }
    snprintf(b, sizeof b, "Gini index %.4f", diff / (2.0 * NI * sum));
    CU_ASSERT(in_section(page, "concentration", b));
    snprintf(b, sizeof b, "coverage %.4f (%d of %d items", (double)used / NI, used, NI);
    CU_ASSERT(in_section(page, "concentration", b));
    /* the top 1 % (2 items) and 10 % (20 items): the largest counts, found by selection */
    int64_t c[NI];
    memcpy(c, counts, sizeof c);
    double top2 = 0, top20 = 0;
    for (int k = 0; k < 20; k++) {
        int best = k;
        for (int j = k + 1; j < NI; j++)
            if (c[j] > c[best]) best = j;
        int64_t t = c[k];
        c[k] = c[best];
        c[best] = t;
        top20 += (double)c[k];
        if (k < 2) top2 += (double)c[k];
    }
    snprintf(b, sizeof b, "<td class=\"n\">2</td><td class=\"n\">%.2f %%</td>", 100 * top2 / sum);
    CU_ASSERT(in_section(page, "concentration", b));
    snprintf(b, sizeof b, "<td class=\"n\">20</td><td class=\"n\">%.2f %%</td>", 100 * top20 / sum);
    CU_ASSERT(in_section(page, "concentration", b));

    const char *out = getenv("RK_REPORT_OUT");
    if (out != NULL && out[0] != '\0') {
        FILE *fp = fopen(out, "w");
        CU_ASSERT(fp != NULL);
        if (fp != NULL) {
            fputs(page, fp);
            CU_ASSERT(fclose(fp) == 0);
        }
    }
    free(page);
}

static void test_empty(void)
{
    rk_report_data d;
    memset(&d, 0, sizeof d);
    rk_status st;
    char *page = render(&d, &st);
    CU_ASSERT_EQUAL(st, RK_OK);
    check_page(page);
    CU_ASSERT_EQUAL(count(page, "<svg"), 0);
    CU_ASSERT_EQUAL(count(page, "<h2"), 7);
    CU_ASSERT_EQUAL(count(page, "<p class=\"na\">not available: "), 6);
    CU_ASSERT(in_section(page, "time", "not available: no stage times"));
    CU_ASSERT(in_section(page, "errors", "not available: no test set"));
    CU_ASSERT(in_section(page, "lists", "not available: no neighbour lists"));
    CU_ASSERT(in_section(page, "folds", "not available: no test set"));
    CU_ASSERT(in_section(page, "ranking", "not available: no top-N"));
    CU_ASSERT(in_section(page, "concentration", "not available: no top-N"));
    free(page);
}

/* One fold, zero time, all-equal values, nothing recommended, errors that
 * are not finite, lists without entries: notes, no NaN, finite figures. */
static void test_degenerate(void)
{
    rk_report_data d;
    full_data(&d);
    static const double zero_s[3] = {0, 0, 0};
    static const float t2[3] = {3, 3, 3};
    static const double p2[3] = {3, 3, NAN};
    static int64_t none[NI];
    d.stage_s = zero_s;
    d.n_pred = 3;
    d.truth = t2;
    d.pred = p2;
    d.n_folds = 1;
    d.item_counts = none;
    int32_t len0[4] = {0, 0, 0, 0};
    rk_lists empty = lists;
    empty.len = len0;
    d.lists = &empty;
    rk_status st;
    char *page = render(&d, &st);
    CU_ASSERT_EQUAL(st, RK_OK);
    check_page(page);
    CU_ASSERT_EQUAL(count(page, "<svg"), expected_svgs(&d));
    CU_ASSERT_EQUAL(count(page, "<svg"), 4); /* errors 2, list lengths, ranking */
    CU_ASSERT(in_section(page, "time", "not available"));
    CU_ASSERT(in_section(page, "lists", "not available: no list has an entry"));
    CU_ASSERT(in_section(page, "folds", "not available: one fold"));
    CU_ASSERT(in_section(page, "folds", "<tr class=\"sum\"><td>sd</td><td class=\"n\">0.0</td>"
                                        "<td class=\"n\">0.0000</td>"));
    CU_ASSERT(in_section(page, "concentration", "not available: nothing was recommended"));
    CU_ASSERT(in_section(page, "concentration", "Gini index 0.0000"));
    CU_ASSERT(in_section(page, "errors", "2 predictions: RMSE 0.0000"));
    CU_ASSERT(in_section(page, "errors", "1 left out"));
    free(page);

    /* equal similarities outside [0, 1], one item recommended, one stage */
    float sims[12];
    for (int k = 0; k < 12; k++) sims[k] = -0.25f;
    rk_lists neg = lists;
    neg.sim = sims;
    d.lists = &neg;
    none[5] = 4;
    static const double one_s[1] = {2.5};
    d.n_stages = 1;
    d.stage_s = one_s;
    d.fold_base = NULL;
    page = render(&d, &st);
    CU_ASSERT_EQUAL(st, RK_OK);
    check_page(page);
    CU_ASSERT_EQUAL(count(page, "<svg"), expected_svgs(&d));
    CU_ASSERT_EQUAL(count(page, "<svg"), 8); /* all but the fold dots */
    CU_ASSERT(in_section(page, "concentration", "coverage 0.0050 (1 of 200 items"));
    /* one item of 200 holds everything: G = (2·200 − 200 − 1) · 4 / (200 · 4) */
    CU_ASSERT(in_section(page, "concentration", "Gini index 0.9950"));
    CU_ASSERT(in_section(page, "ranking", "not computed"));
    CU_ASSERT(in_section(page, "time", ">100.0 %<"));
    none[5] = 0;
    free(page);
}

/* Finite errors whose squares overflow: "n/a", never "inf", and no
 * out-of-range conversion to a bin (run under -fsanitize=undefined). */
static void test_huge(void)
{
    rk_report_data d;
    memset(&d, 0, sizeof d);
    static const float t[3] = {1, 2, 2};
    static const double p[3] = {1e200, -1e200, 2.5};
    d.n_pred = 3;
    d.truth = t;
    d.pred = p;
    rk_status st;
    char *page = render(&d, &st);
    CU_ASSERT_EQUAL(st, RK_OK);
    check_page(page);
    CU_ASSERT_EQUAL(count(page, "<svg"), 2);
    CU_ASSERT(in_section(page, "errors", "3 predictions: RMSE n/a"));
    CU_ASSERT(in_section(page, "errors", "[-4.00, -3.75): 1<"));
    CU_ASSERT(in_section(page, "errors", "[3.75, 4.00): 1<"));
    CU_ASSERT(in_section(page, "errors", "[0.50, 0.75): 1<"));
    free(page);
}

static void test_escaping(void)
{
    rk_report_data d;
    memset(&d, 0, sizeof d);
    /* a control character and a byte that is not UTF-8 become U+FFFD; é stays */
    d.command = "a\x01" "b\xff" "c \xc3\xa9 'q' \xe0\x80\x80 & <x>";
    d.device = "GPU \"H100\"";
    rk_status st;
    char *page = render(&d, &st);
    CU_ASSERT_EQUAL(st, RK_OK);
    check_page(page);
    CU_ASSERT(strstr(page, "a\xEF\xBF\xBD" "b\xEF\xBF\xBD" "c \xc3\xa9 &#39;q&#39; \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"
                           " &amp; &lt;x&gt;") != NULL);
    CU_ASSERT(strstr(page, "GPU &quot;H100&quot;") != NULL);
    free(page);
}

/* The checker itself rejects what it must (else the checks above prove nothing). */
static void test_checker(void)
{
    static const char *const bad[] = {
        "<html></html>",                                   /* no doctype */
        "<!DOCTYPE html><html><p></html>",                 /* unclosed */
        "<!DOCTYPE html><html><b><i></b></i></html>",      /* crossed */
        "<!DOCTYPE html><html><p a=b></p></html>",         /* unquoted */
        "<!DOCTYPE html><html><p a=\"x<y\"></p></html>",   /* < in a value */
        "<!DOCTYPE html><html>a & b</html>",               /* bare & */
        "<!DOCTYPE html><html>&nbsp;</html>",              /* not an XML entity */
        "<!DOCTYPE html><html></html><html></html>",       /* two roots */
        "<!DOCTYPE html><html><p a=\"1\"b=\"2\"/></html>", /* no space */
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) CU_ASSERT(xml_check(bad[k]) != NULL);
    CU_ASSERT(xml_check("<!DOCTYPE html>\n<html><p a=\"&amp;&#39;\">x &lt; y<br/></p><!-- c --></html>\n") == NULL);
}

static void test_write_error(void)
{
    rk_report_data d;
    full_data(&d);
    FILE *fp = fopen("/dev/null", "r"); /* every write fails */
    CU_ASSERT_FATAL(fp != NULL);
    rk_error err;
    rk_error_clear(&err);
    CU_ASSERT_EQUAL(rk_report_write(fp, &d, &err), RK_E_IO);
    CU_ASSERT_EQUAL(err.status, RK_E_IO);
    fclose(fp);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"full page", test_full_page},
        {"empty data", test_empty},
        {"degenerate data", test_degenerate},
        {"huge errors", test_huge},
        {"escaping", test_escaping},
        {"the XML checker", test_checker},
        {"write error", test_write_error},
        {NULL, NULL},
    };
    return rk_test_main("report", cases);
}
