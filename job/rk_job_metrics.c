/* metrics.json of a run (rk_job_internal.h).
 *
 * metrics.json is a jansson tree built a section at a time and laid out by
 * rk_json_write: a top-level member per line, the folds and the parts one
 * per line, numbers with 9 significant digits, null for what is not finite. */
#include "config.h"
#include "rk_job_internal.h"
#include "rk_json.h"
#include "rk_omp.h"
#include "rk_gpu.h"
#include "rk_split.h"

#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

void rk_job_report_counts(rk_job_report *rep, const rk_job_opts *o, const rk_data *d)
{
    const rk_dataset *ds = &d->ds;
    rep->t_read_parse = d->t_read_parse;
    rep->t_ids = d->t_ids;
    rep->t_dedupe = d->t_dedupe;
    rep->t_split = d->t_split;
    rep->t_model = d->t_model;
    rep->duplicates_removed = d->duplicates_removed;
    rep->users = rk_ids_count(ds->users);
    rep->items = rk_ids_count(ds->items);
    rep->train_ratings = d->train.n;
    rep->test_ratings = d->test.n;
    rep->ratings = d->train.n + d->test.n;
    rep->skipped_lines = ds->train_report.skipped_lines + ds->test_report.skipped_lines;
    for (int which = 0; which < 2; which++) {
        const rk_load_report *lr = which == 0 ? &ds->train_report : &ds->test_report;
        for (int b = 0; b < lr->n_bad_kept && rep->n_bad < RK_LOAD_BAD_KEPT; b++) {
            const rk_bad_line *bl = &lr->bad[b];
            rep->bad[rep->n_bad].file = which == 0 ? (bl->file < o->n_inputs ? o->inputs[bl->file] : "?") : o->test_path;
            rep->bad[rep->n_bad].line = bl->line;
            rep->n_bad++;
        }
        if (rep->first_bad_reason[0] == '\0' && lr->skipped_lines > 0)
            snprintf(rep->first_bad_reason, sizeof rep->first_bad_reason, "%s", lr->first_bad_reason);
    }
}

/* ---- metrics of the folds ---------------------------------------------------- */

/* The numbers of a fold, by name, for the per-fold objects and the summary. */
enum { M_RMSE, M_MAE, M_FALLBACK_RATE, M_PRECISION, M_RECALL, M_NDCG, M_MAP, M_MRR, M_HIT, M_COVERAGE, M_GINI,
       M_COUNT };
static const char *const m_names[M_COUNT] = {"rmse", "mae", "fallback_rate", "precision", "recall",
                                             "ndcg", "map", "mrr", "hit_rate", "coverage", "gini"};

/* @return 1 when the fold has value v (of the model's, or the baseline's when base). */
static int fold_value(const rk_job_fold *f, int v, int base, double *x)
{
    const rk_rank_result *r = base ? &f->base : &f->rank;
    if (v <= M_FALLBACK_RATE) {
        if (base || !f->have_eval) return 0;
        *x = v == M_RMSE ? f->eval.rmse : v == M_MAE ? f->eval.mae
             : f->eval.n > 0 ? (double)f->eval.fallbacks / (double)f->eval.n : 0.0;
        return 1;
    }
    if (base ? !f->have_base : !f->have_rank) return 0;
    switch (v) {
    case M_PRECISION: *x = r->precision; break;
    case M_RECALL: *x = r->recall; break;
    case M_NDCG: *x = r->ndcg; break;
    case M_MAP: *x = r->map; break;
    case M_MRR: *x = r->mrr; break;
    case M_HIT: *x = r->hit_rate; break;
    case M_COVERAGE: *x = r->coverage; break;
    default: *x = r->gini; break;
    }
    return 1;
}

/*! mean and sample standard deviation of value v over the folds that have it. */
static int fold_stats(const rk_job_report *r, int v, int base, double *mean, double *sd)
{
    double sum = 0.0, sq = 0.0, x;
    int n = 0;
    for (int f = 0; f < r->n_folds; f++)
        if (fold_value(&r->fold[f], v, base, &x)) {
            sum += x;
            n++;
        }
    if (n == 0) return 0;
    *mean = sum / n;
    for (int f = 0; f < r->n_folds; f++)
        if (fold_value(&r->fold[f], v, base, &x)) sq += (x - *mean) * (x - *mean);
    *sd = n > 1 ? sqrt(sq / (n - 1)) : 0.0;
    return 1;
}


/* ---- metrics.json ---------------------------------------------------------- */

/* Each builder returns a new reference, or NULL when out of memory; setting
 * a NULL value fails (json_object_set_new returns -1), so that a failure
 * anywhere reaches the caller as a nonzero "bad". */

/* v as key's value in o (v stolen); nonzero on failure. */
static int set(json_t *o, const char *key, json_t *v)
{
    return json_object_set_new(o, key, v);
}

/* more's members after o's (more released); nonzero on failure. */
static int append(json_t *o, json_t *more)
{
    int r = more != NULL ? json_object_update(o, more) : -1;
    json_decref(more);
    return r;
}

/* o, or NULL (o released) when bad. */
static json_t *done(json_t *o, int bad)
{
    if (!bad) return o;
    json_decref(o);
    return NULL;
}

static json_t *json_rank_main(const rk_rank_result *k);

/* The user metrics at every cutoff of --cutoffs: [{n, precision, ...}, ...]. */
static json_t *json_cutoffs(const rk_rank_result *k)
{
    json_t *a = json_array();
    int bad = a == NULL;
    for (int c = 0; c < k->n_cutoffs && !bad; c++) {
        const rk_rank_at *x = &k->at[c];
        bad |= json_array_append_new(a, json_pack("{s:i, s:o, s:o, s:o, s:o, s:o, s:o}", "n", x->n, "precision",
                                                  rk_json_num(x->precision), "recall", rk_json_num(x->recall),
                                                  "ndcg", rk_json_num(x->ndcg), "map", rk_json_num(x->map), "mrr",
                                                  rk_json_num(x->mrr), "hit_rate", rk_json_num(x->hit_rate)));
    }
    return done(a, bad);
}

static json_t *json_rank(const rk_rank_result *k)
{
    json_t *x = json_rank_main(k);
    int bad = x == NULL;
    if (!bad) bad |= set(x, "map", rk_json_num(k->map));
    if (!bad && k->n_cutoffs > 1) bad |= set(x, "cutoffs", json_cutoffs(k));
    return done(x, bad);
}

static json_t *json_rank_main(const rk_rank_result *k)
{
    return json_pack("{s:i, s:o, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:i, s:o, s:o}",
                     "n", k->n, "relevance", rk_json_num(k->relevance), "users", (json_int_t)k->users,
                     "users_without_list", (json_int_t)k->users_without_list, "precision",
                     rk_json_num(k->precision), "recall", rk_json_num(k->recall), "ndcg", rk_json_num(k->ndcg),
                     "mrr", rk_json_num(k->mrr), "hit_rate", rk_json_num(k->hit_rate), "lists",
                     (json_int_t)k->lists, "rows", (json_int_t)k->rows, "items_recommended",
                     k->items_recommended, "coverage", rk_json_num(k->coverage), "gini", rk_json_num(k->gini));
}

/* One fold's object of the "folds" array. */
static json_t *json_fold(const rk_job_fold *f, int index)
{
    const rk_eval_result *e = &f->eval;
    return json_pack("{s:i, s:I, s:I, s:o, s:o, s:I, s:o, s:I, s:I, s:I, s:o, s:o, s:{s:o, s:o, s:o, s:o, s:o, s:o, s:o}}",
                     "fold", index + 1, "train_ratings", (json_int_t)f->train_ratings, "test_ratings",
                     (json_int_t)f->test_ratings, "rmse", rk_json_num(f->have_eval ? e->rmse : NAN), "mae",
                     rk_json_num(f->have_eval ? e->mae : NAN), "fallbacks", (json_int_t)e->fallbacks,
                     "fallback_rate", rk_json_num(e->n > 0 ? (double)e->fallbacks / (double)e->n : NAN),
                     "test_pairs", (json_int_t)e->n, "unknown_users", (json_int_t)e->unknown_users,
                     "unknown_items", (json_int_t)e->unknown_items,
                     "ranking", f->have_rank ? json_rank(&f->rank) : json_null(),
                     "baseline_popular", f->have_base ? json_rank(&f->base) : json_null(),
                     "timings_s", "engine", rk_json_num(f->t_engine), "similarity", rk_json_num(f->t_similarity),
                     "select", rk_json_num(f->t_select), "predict", rk_json_num(f->t_predict),
                     "recommend", rk_json_num(f->t_recommend), "baseline", rk_json_num(f->t_baseline),
                     "write", rk_json_num(f->t_write));
}

/* {"mean", "sd"} over the folds of value `off` (a double member of
 * rk_rank_at) at cutoff c. */
static json_t *cutoff_stat(const rk_job_report *r, int base, int c, size_t off)
{
    double sum = 0.0, sq = 0.0;
    int n = 0;
    for (int f = 0; f < r->n_folds; f++) {
        const rk_rank_result *k = base ? &r->fold[f].base : &r->fold[f].rank;
        if ((base ? r->fold[f].have_base : r->fold[f].have_rank) && c < k->n_cutoffs) {
            sum += *(const double *)((const char *)&k->at[c] + off);
            n++;
        }
    }
    const double mean = n > 0 ? sum / n : 0.0;
    for (int f = 0; f < r->n_folds; f++) {
        const rk_rank_result *k = base ? &r->fold[f].base : &r->fold[f].rank;
        if ((base ? r->fold[f].have_base : r->fold[f].have_rank) && c < k->n_cutoffs) {
            const double x = *(const double *)((const char *)&k->at[c] + off) - mean;
            sq += x * x;
        }
    }
    return json_pack("{s:o, s:o}", "mean", rk_json_num(mean), "sd", rk_json_num(n > 1 ? sqrt(sq / (n - 1)) : 0.0));
}

/* "summary"."cutoffs": per cutoff of --cutoffs, mean and sd over the folds. */
static json_t *json_summary_cutoffs(const rk_job_report *r, int base)
{
    static const struct { const char *name; size_t off; } v[] = {
        {"precision", offsetof(rk_rank_at, precision)}, {"recall", offsetof(rk_rank_at, recall)},
        {"ndcg", offsetof(rk_rank_at, ndcg)}, {"map", offsetof(rk_rank_at, map)},
        {"mrr", offsetof(rk_rank_at, mrr)}, {"hit_rate", offsetof(rk_rank_at, hit_rate)}};
    const rk_rank_result *k0 = base ? &r->fold[r->n_folds - 1].base : &r->fold[r->n_folds - 1].rank;
    json_t *a = json_array();
    int bad = a == NULL;
    for (int c = 0; c < k0->n_cutoffs && !bad; c++) {
        json_t *o = json_pack("{s:i}", "n", k0->at[c].n);
        bad |= o == NULL;
        for (size_t x = 0; x < sizeof v / sizeof v[0] && !bad; x++) bad |= set(o, v[x].name, cutoff_stat(r, base, c, v[x].off));
        bad |= json_array_append_new(a, o);
    }
    return done(a, bad);
}

/* "summary": mean and sd over the folds of every value some fold has. */
static json_t *json_summary(const rk_job_report *r, int base)
{
    json_t *s = json_object();
    int bad = s == NULL;
    double mean, sd;
    for (int v = 0; v < M_COUNT; v++)
        if (fold_stats(r, v, base, &mean, &sd))
            bad |= set(s, m_names[v], json_pack("{s:o, s:o}", "mean", rk_json_num(mean), "sd", rk_json_num(sd)));
    const rk_job_fold *last = r->n_folds > 0 ? &r->fold[r->n_folds - 1] : NULL;
    if (!bad && last != NULL && (base ? last->have_base : last->have_rank) &&
        (base ? last->base.n_cutoffs : last->rank.n_cutoffs) > 1)
        bad |= set(s, "cutoffs", json_summary_cutoffs(r, base));
    return done(s, bad);
}

int rk_job_verdict(const rk_job_opts *o, const rk_job_report *r, char *buf, size_t cap)
{
    double model = 0.0, base = 0.0, sd;
    if (cap > 0) buf[0] = '\0';
    if (r->n_folds <= 0 || !fold_stats(r, M_NDCG, 0, &model, &sd) || !fold_stats(r, M_NDCG, 1, &base, &sd))
        return -1;
    const int below = model < base;
    if (!below) {
        snprintf(buf, cap, "NDCG@%d %.4f, %.2fx most-popular's %.4f", r->top_n, model, base > 0 ? model / base : 0.0,
                 base);
        return 0;
    }
    snprintf(buf, cap, "the recommendations rank below most-popular (NDCG@%d %.4f against %.4f): %s", r->top_n,
             model, base,
             rk_rankw_on(&o->rank) && !o->by_user && o->approx == RK_APPROX_NONE
                 ? "try --tune, or --rank weighted-cosine"
                 : "top-N comes from the --metric lists here; in item mode without --approx the default ranking "
                   "model (no --rank lists) ranks from co-occurrence, and --tune searches it");
    return 1;
}

/* "metrics": the one split's values, or the means over the folds. */
static json_t *json_metrics(const rk_job_report *r)
{
    if (!r->have_eval && !r->fold[r->n_folds > 0 ? r->n_folds - 1 : 0].have_rank)
        return json_pack("{s:n, s:n, s:n, s:i}", "rmse", "mae", "fallbacks", "test_pairs", 0);
    double mean, sd;
    int64_t fallbacks = 0, pairs = 0, uu = 0, ui = 0;
    for (int f = 0; f < r->n_folds; f++) {
        fallbacks += r->fold[f].eval.fallbacks;
        pairs += r->fold[f].eval.n;
        uu += r->fold[f].eval.unknown_users;
        ui += r->fold[f].eval.unknown_items;
    }
    json_t *m = json_pack("{s:o, s:o, s:I, s:o, s:I, s:I, s:I}",
                          "rmse", rk_json_num(fold_stats(r, M_RMSE, 0, &mean, &sd) ? mean : NAN),
                          "mae", rk_json_num(fold_stats(r, M_MAE, 0, &mean, &sd) ? mean : NAN),
                          "fallbacks", (json_int_t)fallbacks,
                          "fallback_rate", rk_json_num(pairs > 0 ? (double)fallbacks / (double)pairs : NAN),
                          "test_pairs", (json_int_t)pairs, "unknown_users", (json_int_t)uu,
                          "unknown_items", (json_int_t)ui);
    int bad = m == NULL;
    for (int v = M_PRECISION; v < M_COUNT; v++)
        if (fold_stats(r, v, 0, &mean, &sd)) bad |= set(m, m_names[v], rk_json_num(mean));
    return done(m, bad);
}

/* ---- several ranks and GPUs ------------------------------------------------- */

int rk_job_stage_parts(const rk_job_report *r, int stage)
{
    int n = 0;
    for (int x = 0; x < r->n_parts; x++) n += r->part[x].stage == stage;
    return n;
}

double rk_job_balance(const rk_job_report *r, int stage, rk_job_balance_of what)
{
    double mx = 0.0, sum = 0.0;
    for (int x = 0; x < r->n_parts; x++) {
        const rk_job_part *p = &r->part[x];
        if (p->stage != stage) continue;
        const double v = what == RK_JOB_BALANCE_ENGINE_S ? p->engine_s
                         : what == RK_JOB_BALANCE_WORK   ? (double)p->work
                         : what == RK_JOB_BALANCE_TOPN_S ? p->topn_s
                                                         : (double)p->topn_work;
        sum += v;
        if (v > mx) mx = v;
    }
    return sum > 0.0 ? mx * rk_job_stage_parts(r, stage) / sum : 0.0;
}

/* The balance of one stage's parts (null when the stage has none). */
static json_t *json_balance(const rk_job_report *r, int stage)
{
    if (stage != RK_JOB_STAGE_LISTS && rk_job_stage_parts(r, stage) == 0) return json_null();
    return json_pack("{s:o, s:o, s:o, s:o}", "engine_s", rk_json_num(rk_job_balance(r, stage, RK_JOB_BALANCE_ENGINE_S)),
                     "work", rk_json_num(rk_job_balance(r, stage, RK_JOB_BALANCE_WORK)),
                     "topn_s", rk_json_num(rk_job_balance(r, stage, RK_JOB_BALANCE_TOPN_S)),
                     "topn_work", rk_json_num(rk_job_balance(r, stage, RK_JOB_BALANCE_TOPN_WORK)));
}


/* The "scale" member: ranks, load mode, exchange time, and every part's
 * stage, rows, work and times (one per line) with their balance, the
 * lists' stage's and the ranking stage's apart. */
static json_t *json_scale(const rk_job_report *r, rk_json_layout *ly)
{
    json_t *parts = rk_json_lined(ly, json_array());
    int bad = parts == NULL;
    for (int x = 0; x < r->n_parts && !bad; x++) {
        const rk_job_part *p = &r->part[x];
        bad |= json_array_append_new(parts, json_pack(
            "{s:s, s:i, s:i, s:i, s:i, s:I, s:o, s:I, s:I, s:I, s:o, s:b, s:s, s:s}", "stage",
            p->stage == RK_JOB_STAGE_RANKING ? "ranking" : "lists", "rank", p->rank, "worker", p->worker,
            "device", p->device, "rows", p->rows, "work", (json_int_t)p->work, "engine_s", rk_json_num(p->engine_s),
            "topn_users", (json_int_t)p->topn_users, "topn_work", (json_int_t)p->topn_work, "topn_rows",
            (json_int_t)p->topn_rows, "topn_s", rk_json_num(p->topn_s), "gpu_failed", p->fell_back != 0,
            "engine_detail", p->engine_detail, "topn_detail", p->topn_detail));
    }
    if (bad) {
        json_decref(parts);
        return NULL;
    }
    json_t *out = r->out_slices > 0
                      ? json_pack("{s:s, s:i, s:i, s:I, s:o}", "mode", "slices", "slices", r->out_slices,
                                  "written_by_their_rank", r->out_direct, "bytes", (json_int_t)r->out_bytes,
                                  "join_s", rk_json_num(r->t_out_join))
                      : json_null();
    return json_pack("{s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "ranks", r->ranks > 0 ? r->ranks : 1,
                     "load", r->dist_load[0] != '\0' ? rk_json_str(r->dist_load) : json_null(),
                     "load_s", rk_json_num(r->t_dist_load), "exchange_s", rk_json_num(r->t_exchange), "output", out,
                     "balance", json_balance(r, RK_JOB_STAGE_LISTS), "balance_ranking",
                     json_balance(r, RK_JOB_STAGE_RANKING), "parts", parts);
}

/* ---- the members of metrics.json, by section ----------------------------------- */

/* The version, the inputs, the counts and the lines skipped. */
static int add_data(json_t *top, const rk_job_opts *o, const rk_job_report *r)
{
    json_t *inputs = json_array(), *bad_lines = json_array();
    int bad = inputs == NULL || bad_lines == NULL;
    for (int i = 0; i < o->n_inputs && !bad; i++) bad |= json_array_append_new(inputs, rk_json_str(o->inputs[i]));
    for (int b = 0; b < r->n_bad && !bad; b++)
        bad |= json_array_append_new(bad_lines, json_pack("{s:o, s:I}", "file", rk_json_str(r->bad[b].file),
                                                          "line", (json_int_t)r->bad[b].line));
    bad |= set(top, "recknn_version", json_string(PACKAGE_VERSION));
    bad |= set(top, "inputs", inputs);
    bad |= set(top, "counts", json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:i, s:I, s:I, s:I}",
                                        "users", (json_int_t)r->users, "items", (json_int_t)r->items,
                                        "ratings", (json_int_t)r->ratings,
                                        "train_ratings", (json_int_t)r->train_ratings,
                                        "test_ratings", (json_int_t)r->test_ratings,
                                        "skipped_lines", (json_int_t)r->skipped_lines,
                                        "duplicates_removed", (json_int_t)r->duplicates_removed,
                                        "neighbor_rows", (json_int_t)r->list_entries, "lists_computed", r->list_rows,
                                        "items_file_ids", (json_int_t)r->items_file_ids,
                                        "items_unknown", (json_int_t)r->items_unknown,
                                        "items_repeated", (json_int_t)r->items_repeated));
    bad |= set(top, "bad_lines", bad_lines);
    if (r->skipped_lines > 0) bad |= set(top, "first_bad_reason", rk_json_str(r->first_bad_reason));
    return bad;
}

/* "options": the input's, then the model's and the engine's, then the
 * evaluation's and the files'. */
static json_t *json_options(const rk_job_opts *o, const rk_dataset *ds, const rk_model *m, rk_json_layout *ly)
{
    const rk_knn_opts *k = &o->knn;
    json_t *x = json_pack("{s:s}", "format", rk_format_name(ds->train_report.format));
    int bad = x == NULL;
    if (!bad && ds->train_report.format == RK_FMT_CSV) {
        char d[2] = {ds->train_report.delimiter, 0};
        bad |= set(x, "delimiter", rk_json_str(d));
        bad |= set(x, "columns", rk_json_str(o->load.columns));
    }
    bad |= append(x, json_pack("{s:s, s:b, s:[o, o], s:b, s:s, s:b, s:s, s:i, s:i, s:o, s:b, s:s, s:i, s:o, s:o, s:o}",
        "duplicates", rk_dup_policy_name(o->duplicates), "skip_bad_lines", o->load.skip_bad_lines != 0,
        "rating_scale", rk_json_num(m->rmin), rk_json_num(m->rmax), "rating_scale_given", o->load.have_scale != 0,
        "by", o->by_user ? "user" : "item", "implicit", o->implicit != 0, "metric", rk_metric_name(k->sim.metric),
        "k", k->k, "min_support", k->sim.min_support, "shrinkage", rk_json_num(k->sim.shrinkage),
        "negative", k->negative != 0,
        "predict", rk_predict_mode_name(k->mode), "min_k", k->min_k, "test", rk_json_str(o->test_path),
        "holdout", rk_json_num(o->holdout), "seed", rk_json_u64(ly, o->seed)));
    bad |= append(x, json_pack("{s:s, s:o, s:o, s:i, s:o, s:b, s:i, s:o, s:o, s:s, s:s, s:s}",
        "device", rk_device_name(o->device), "gpu_memory_gb", rk_json_num(o->gpu_memory_gb),
        "memory_limit_gb", rk_json_num(o->memory_limit_gb), "threads", rk_omp_max_threads(),
        "out", rk_json_str(o->out_dir), "write_neighbors", o->write_neighbors != 0, "top_n", o->top_n,
        "users", rk_json_str(o->users_path), "items", rk_json_str(o->items_path),
        "gpu_topn", rk_gpu_topn_route_name(o->gpu_topn), "gpu_query", rk_gpu_query_route_name(o->gpu_query),
        "gpu_sims", rk_gpu_sims_route_name(o->gpu_sims)));
    bad |= append(x, json_pack("{s:i, s:s, s:b, s:o, s:o, s:b, s:o, s:o, s:o, s:o, s:i, s:i, s:I}",
        "folds", o->folds, "split", rk_split_kind_name(o->split), "write_folds", o->write_folds != 0,
        "relevance", rk_json_num(o->relevance), "baseline", rk_json_str(o->baseline_popular ? "popular" : NULL),
        "report", o->report != 0, "save_model", rk_json_str(o->save_model), "model", rk_json_str(o->model_path),
        "queries", rk_json_str(o->queries_path),
        "approx", rk_json_str(o->approx != RK_APPROX_NONE ? rk_approx_name(o->approx) : NULL),
        "reps", o->approx_reps, "probes", o->approx_probes, "approx_check", (json_int_t)o->approx_check));
    bad |= append(x, json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:i}", "topn_score",
        o->topn_by_prediction ? "prediction" : "sums", "interp_shrink", rk_json_num(k->pm.interp_shrink),
        "interp_reg", rk_json_num(k->pm.interp_reg), "global_lr", rk_json_num(k->pm.global_lr),
        "global_reg", rk_json_num(k->pm.global_reg), "global_decay", rk_json_num(k->pm.global_decay),
        "global_epochs", k->pm.global_epochs));
    return done(x, bad);
}

/* "engine": the similarity engine's path, work and times. */
static json_t *json_engine(const rk_job_report *r, const rk_knn_stats *st)
{
    json_t *e = json_pack("{s:o, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:b}", "path", rk_json_str(st->path),
                          "pair_updates", (json_int_t)st->pair_updates, "pair_updates_per_s",
                          rk_json_num(st->sim_s > 0 ? (double)st->pair_updates / st->sim_s : 0.0),
                          "wall_s", rk_json_num(st->wall_s), "init_s", rk_json_num(st->init_s),
                          "upload_s", rk_json_num(st->upload_s), "download_s", rk_json_num(st->download_s),
                          "detail", rk_json_str(st->detail), "gpu_fallback", r->gpu_fallback != 0);
    int bad = e == NULL;
    if (!bad && st->model[0] != '\0')
        bad |= set(e, "model", json_pack("{s:o, s:o}", "detail", rk_json_str(st->model), "wall_s",
                                         rk_json_num(st->model_s)));
    if (!bad && r->gpu_fallback) bad |= set(e, "gpu_fallback_why", rk_json_str(r->gpu_fallback_why));
    if (!bad && r->gpu_unused[0] != '\0') bad |= set(e, "gpu_unused", rk_json_str(r->gpu_unused));
    if (!bad && r->threads_planned > 0) {
        bad |= set(e, "threads_planned", json_integer(r->threads_planned));
        bad |= set(e, "host_plan_gb", rk_json_num(r->host_plan_gb));
    }
    return done(e, bad);
}

/* One configuration of the ranking model as a JSON object (its own options only). */
static json_t *json_rank_cfg(const rk_rankw_opts *k)
{
    json_t *x = json_pack("{s:s, s:i, s:o, s:o, s:b}", "sim", rk_rankw_sim_name(k->sim), "k", k->k, "alpha",
                          rk_json_num(k->alpha), "locality", rk_json_num(k->q), "normalize", k->normalize != 0);
    int bad = x == NULL;
    if (!bad && k->sim == RK_METRIC_RP3BETA) bad |= set(x, "beta", rk_json_num(k->beta));
    if (!bad && k->sim == RK_METRIC_WEIGHTED_COSINE)
        bad |= append(x, json_pack("{s:s, s:s, s:o}", "weighting", rk_rankw_weighting_name(k->weighting), "values",
                                   k->ratings ? "ratings" : "interactions", "shrink", rk_json_num(k->shrink)));
    if (!bad && k->sim == RK_METRIC_WEIGHTED_COSINE && k->weighting == RK_RANKW_BM25)
        bad |= append(x, json_pack("{s:o, s:o}", "bm25_k1", rk_json_num(k->bm25_k1), "bm25_b", rk_json_num(k->bm25_b)));
    return done(x, bad);
}

/* "topn"."rank": the ranking model top-N was summed from (CONTRACT.md §5b):
 * "lists" (the --metric lists), or its configuration, lists and times. */
static json_t *json_rank_model(const rk_job_report *r)
{
    if (!r->have_rank_model) return json_pack("{s:s}", "sim", "lists");
    const rk_knn_stats *st = &r->rank_lists;
    json_t *x = json_rank_cfg(&r->rank_used);
    int bad = x == NULL;
    if (!bad)
        bad |= append(x, json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "entries",
                                   (json_int_t)r->rank_entries, "quantum", rk_json_num(r->rank_quantum), "path",
                                   rk_json_str(st->path), "device", rk_json_str(st->device), "lists_s",
                                   rk_json_num(st->wall_s), "upload_s", rk_json_num(st->upload_s), "sim_s",
                                   rk_json_num(st->sim_s), "select_s", rk_json_num(st->select_s), "wall_s",
                                   rk_json_num(r->t_rank)));
    if (!bad) bad |= append(x, json_pack("{s:s}", "detail", st->detail));
    return done(x, bad);
}

/* "tune": --tune's search of the last fold: its split, the chosen row and
 * every row (null without --tune). */
static json_t *json_tune(const rk_job_opts *o, const rk_job_report *r, const rk_tune_result *t, rk_json_layout *ly)
{
    if (t == NULL || t->n_rows == 0) return json_null();
    json_t *rows = rk_json_lined(ly, json_array());
    int bad = rows == NULL;
    for (int i = 0; i < t->n_rows && !bad; i++) {
        const rk_tune_row *w = &t->rows[i];
        json_t *x = json_rank_cfg(&w->cfg);
        bad |= x == NULL;
        if (!bad)
            bad |= append(x, json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "precision",
                                       rk_json_num(w->res.precision), "recall", rk_json_num(w->res.recall), "ndcg",
                                       rk_json_num(w->res.ndcg), "map", rk_json_num(w->res.map), "mrr",
                                       rk_json_num(w->res.mrr), "hit_rate", rk_json_num(w->res.hit_rate), "topn_s",
                                       rk_json_num(w->seconds)));
        bad |= json_array_append_new(rows, x);
    }
    json_t *x = json_pack("{s:s, s:i, s:o, s:s, s:i, s:I, s:i, s:i, s:I, s:I, s:I, s:s}", "metric",
                          rk_tune_metric_name(o->tune_metric), "n", r->top_n, "fraction",
                          rk_json_num(o->tune_fraction), "grid", rk_tune_grid_name(o->tune_grid), "rounds",
                          o->tune_rounds > 0 ? o->tune_rounds : 1, "max_users", (json_int_t)o->tune_users, "configs",
                          t->n_rows, "bases", t->bases, "train_ratings", (json_int_t)t->train_ratings,
                          "validation_ratings", (json_int_t)t->val_ratings, "validation_users",
                          (json_int_t)t->val_users, "device", t->device);
    bad |= x == NULL;
    if (!bad)
        bad |= append(x, json_pack("{s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "best", t->best, "best_config",
                                   json_rank_cfg(&t->rows[t->best].cfg), "best_score",
                                   rk_json_num(t->rows[t->best].score), "split_s", rk_json_num(t->t_split),
                                   "lists_s", rk_json_num(t->t_lists), "topn_s", rk_json_num(t->t_topn), "wall_s",
                                   rk_json_num(t->t_total), "rows", rows));
    else
        json_decref(rows);
    return done(x, bad);
}

/* "topn": what top-N served, null without it. */
static json_t *json_topn(const rk_job_opts *o, const rk_job_report *r)
{
    if (r->top_n <= 0) return json_null();
    const rk_topn_stats *t = &r->topn;
    json_t *x = json_pack("{s:i, s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o}", "n", r->top_n,
                          "users", (json_int_t)t->users, "rows", (json_int_t)t->rows, "updates", (json_int_t)t->updates,
                          "path", rk_json_str(t->path), "detail", rk_json_str(t->detail),
                          "compute_s", rk_json_num(t->compute_s), "upload_s", rk_json_num(t->upload_s),
                          "sink_s", rk_json_num(t->sink_s), "wall_s", rk_json_num(t->wall_s));
    int bad = x == NULL;
    if (!bad) bad |= set(x, "rank", json_rank_model(r));
    if (!bad && o->users_path != NULL)
        bad |= append(x, json_pack("{s:I, s:I, s:I, s:o}", "users_file_ids", (json_int_t)r->users_file_ids,
                                   "users_unknown", (json_int_t)r->users_unknown,
                                   "users_repeated", (json_int_t)r->users_repeated, "users_first_unknown",
                                   rk_json_str(r->users_unknown > 0 ? r->users_first_unknown : NULL)));
    return done(x, bad);
}

/* The folds, their summaries, and the times. */
static int add_results(json_t *top, const rk_job_opts *o, const rk_job_report *r, rk_json_layout *ly)
{
    json_t *folds = rk_json_lined(ly, json_array());
    int bad = folds == NULL;
    for (int f = 0; f < r->n_folds && !bad; f++) bad |= json_array_append_new(folds, json_fold(&r->fold[f], f));
    if (o->model_path != NULL)
        bad |= set(top, "saved_model", json_pack("{s:I, s:I, s:I, s:I, s:o}", "queries", (json_int_t)r->queries,
                                                  "queries_unknown", (json_int_t)r->queries_unknown,
                                                  "queries_from_ratings", (json_int_t)r->queries_from_ratings,
                                                  "ratings_unknown_items", (json_int_t)r->ratings_unknown_items,
                                                  "read_s", rk_json_num(r->t_model_io)));
    bad |= set(top, "metrics", json_metrics(r));
    bad |= set(top, "folds", folds);
    bad |= set(top, "summary", json_summary(r, 0));
    bad |= set(top, "summary_baseline_popular", o->baseline_popular ? json_summary(r, 1) : json_null());
    char verdict[320];
    const int below = rk_job_verdict(o, r, verdict, sizeof verdict);
    bad |= set(top, "vs_popular", below < 0 ? json_null()
                                            : json_pack("{s:b, s:s}", "below", below == 1, "verdict", verdict));
    /* the named stages and what falls between them: output folder, device
     * start, splits and models of the folds after the first */
    const double other = r->t_total - r->t_load - r->t_engine - r->t_baseline - r->t_write - r->t_model_io;
    bad |= set(top, "timings_s", json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
        "load", rk_json_num(r->t_load), "engine", rk_json_num(r->t_engine),
        "similarity", rk_json_num(r->t_similarity), "select", rk_json_num(r->t_select),
        "predict", rk_json_num(r->t_predict), "rank", rk_json_num(r->t_rank),
        "recommend", rk_json_num(r->t_recommend), "write", rk_json_num(r->t_write),
        "baseline", rk_json_num(r->t_baseline), "model_io", rk_json_num(r->t_model_io),
        "other", rk_json_num(other > 0.0 ? other : 0.0), "total", rk_json_num(r->t_total)));
    bad |= set(top, "load_detail_s", json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}",
        "read_parse", rk_json_num(r->t_read_parse), "ids", rk_json_num(r->t_ids),
        "duplicates", rk_json_num(r->t_dedupe), "split", rk_json_num(r->t_split), "model", rk_json_num(r->t_model),
        "rows_wait", rk_json_num(r->rows_up.wait_s)));
    const rk_gpu_rows_report *ru = &r->rows_up;
    bad |= set(top, "rows_beside_parse", ru->rows == 0 && !ru->taken ? json_null()
        : json_pack("{s:b, s:I, s:s}", "taken", ru->taken, "rows", (json_int_t)ru->rows, "why", ru->why));
    bad |= set(top, "load_mb_per_s", rk_json_num(r->load_mb_s));
    return bad;
}

/* "files": every other file of the run (metrics.json is written last and
 * is not in its own list), with its size and XXH64 checksum. */
static json_t *json_files(const rk_job_result *res)
{
    json_t *a = json_array();
    for (int i = 0; a != NULL && i < res->n_files; i++) {
        char hex[17];
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)res->files[i].xxh64);
        if (json_array_append_new(a, json_pack("{s:s, s:I, s:s}", "name", res->files[i].name, "bytes",
                                               (json_int_t)res->files[i].bytes, "xxh64", hex)) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

/* A --tune-predict configuration: the options its grid varies. */
static json_t *json_pcfg(const rk_knn_opts *base, const rk_ptune_row *w)
{
    if (base->mode == RK_PREDICT_INTERPOLATE)
        return json_pack("{s:i, s:o, s:o, s:o}", "k", w->k, "shrinkage", rk_json_num(w->shrinkage), "interp_shrink",
                         rk_json_num(w->pm.interp_shrink), "interp_reg", rk_json_num(w->pm.interp_reg));
    return json_pack("{s:i, s:o, s:o, s:i}", "k", w->k, "shrinkage", rk_json_num(w->shrinkage), "global_lr",
                     rk_json_num(w->pm.global_lr), "global_epochs", w->pm.global_epochs);
}

/* "tune_predict": --tune-predict's search of the last fold: its split, the
 * chosen row and every row (null without --tune-predict). */
static json_t *json_ptune(const rk_job_opts *o, const rk_ptune_result *t, rk_json_layout *ly)
{
    if (t == NULL || t->n_rows == 0) return json_null();
    json_t *rows = rk_json_lined(ly, json_array());
    int bad = rows == NULL;
    for (int i = 0; i < t->n_rows && !bad; i++) {
        const rk_ptune_row *w = &t->rows[i];
        json_t *x = json_pcfg(&o->knn, w);
        bad |= x == NULL;
        if (!bad)
            bad |= append(x, json_pack("{s:o, s:o, s:o}", "rmse", rk_json_num(w->rmse), "mae", rk_json_num(w->mae),
                                       "wall_s", rk_json_num(w->seconds)));
        bad |= json_array_append_new(rows, x);
    }
    const rk_ptune_row *b = &t->rows[t->best];
    json_t *x = json_pack("{s:s, s:o, s:i, s:I, s:I, s:i}", "predict", rk_predict_mode_name(o->knn.mode),
                          "fraction", rk_json_num(o->tune_fraction), "configs", t->n_rows, "train_ratings",
                          (json_int_t)t->train_ratings, "validation_ratings", (json_int_t)t->val_ratings, "best",
                          t->best);
    bad |= x == NULL;
    if (!bad)
        bad |= append(x, json_pack("{s:o, s:o, s:o, s:o, s:o}", "best_config", json_pcfg(&o->knn, b), "best_rmse",
                                   rk_json_num(b->rmse), "split_s", rk_json_num(t->t_split), "wall_s",
                                   rk_json_num(t->t_total), "rows", rows));
    else
        json_decref(rows);
    return done(x, bad);
}

rk_status rk_job_metrics_json(FILE *fp, const void *in, rk_error *err)
{
    const rk_job_result *res = in;
    const rk_job_opts *o = res->o;
    const rk_job_report *r = res->rep;
    rk_json_layout ly;
    memset(&ly, 0, sizeof ly);
    json_t *top = json_object();
    int bad = top == NULL;
    bad = bad || add_data(top, o, r);
    bad = bad || set(top, "options", json_options(o, res->ds, res->m, &ly));
    bad = bad || set(top, "device", rk_json_str(r->device));
    bad = bad || set(top, "engine", json_engine(r, res->st));
    bad = bad || set(top, "approx", rk_job_approx_json(o, r));
    bad = bad || set(top, "scale", json_scale(r, &ly));
    bad = bad || set(top, "topn", json_topn(o, r));
    bad = bad || set(top, "tune", json_tune(o, r, res->shown != NULL ? res->shown->tune : NULL, &ly));
    bad = bad || set(top, "tune_predict", json_ptune(o, res->shown != NULL ? res->shown->ptune : NULL, &ly));
    bad = bad || add_results(top, o, r, &ly);
    bad = bad || set(top, "files", json_files(res));
    rk_status s = bad ? rk_error_set(err, RK_E_NOMEM, "out of memory building metrics.json")
                      : rk_json_write(fp, top, &ly, err);
    json_decref(top);
    return s;
}
