/* rk_jobopt.c — every option of the nightly job by name (rk_jobopt.h): the
 * table, the strict parsing of the values into rk_job_opts, one message for
 * each bad value. */
#define _POSIX_C_SOURCE 200809L
#include "rk_jobopt.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    OPT_FORMAT = 256, OPT_DELIMITER, OPT_HEADER, OPT_NO_HEADER, OPT_COLUMNS,
    OPT_RATING_SCALE, OPT_DUPLICATES, OPT_SKIP_BAD, OPT_METRIC, OPT_MIN_SUPPORT,
    OPT_SHRINKAGE, OPT_PREDICT, OPT_MIN_K, OPT_TEST, OPT_HOLDOUT, OPT_SEED,
    OPT_OUT, OPT_NO_NEIGHBORS, OPT_DEVICE, OPT_GPU_MEMORY, OPT_THREADS,
    OPT_TOP_N, OPT_USERS, OPT_GPU_TOPN, OPT_ITEMS, OPT_GPU_QUERY, OPT_GPU_SIMS,
    OPT_SPLIT, OPT_FOLDS, OPT_WRITE_FOLDS, OPT_RELEVANCE, OPT_BASELINE, OPT_REPORT,
    OPT_SAVE_MODEL, OPT_MODEL, OPT_QUERIES, OPT_MEMORY_LIMIT, OPT_BY, OPT_IMPLICIT,
    OPT_APPROX, OPT_REPS, OPT_PROBES, OPT_APPROX_CHECK, OPT_GPUS, OPT_MPI_LOAD, OPT_MPI_OUTPUT,
    OPT_RANK, OPT_RANK_K, OPT_ALPHA, OPT_BETA, OPT_WEIGHTING, OPT_BM25, OPT_RANK_VALUES, OPT_RANK_SHRINK,
    OPT_LOCALITY, OPT_NORMALIZE, OPT_CUTOFFS, OPT_TUNE, OPT_TUNE_METRIC, OPT_TUNE_FRACTION, OPT_TUNE_GRID,
    OPT_TUNE_ROUNDS, OPT_USER_METRICS, OPT_TUNE_USERS, OPT_NEGATIVE, OPT_DIR_GLOB, OPT_MAX_LINE, OPT_K,
    OPT_INTERP_SHRINK, OPT_INTERP_REG, OPT_GLOBAL_LR, OPT_GLOBAL_REG, OPT_GLOBAL_DECAY, OPT_GLOBAL_EPOCHS, OPT_TOPN_SCORE,
    OPT_TUNE_PREDICT
};

/* The option groups, as the usage text and the manual page list them. */
enum { G_INPUT, G_SIMILARITY, G_RANKING, G_EVALUATION, G_DEVICE };

typedef struct row {
    rk_jobopt pub;
    int id, group;
    const char *shown; /* a saved model fixes it: its name in the refusal (rk_job_opts_check) */
} row;

static const row table[] = {
    {{"format", 1, 0}, OPT_FORMAT, G_INPUT, NULL},
    {{"delimiter", 1, 0}, OPT_DELIMITER, G_INPUT, NULL},
    {{"header", 0, 0}, OPT_HEADER, G_INPUT, NULL},
    {{"no-header", 0, 0}, OPT_NO_HEADER, G_INPUT, NULL},
    {{"columns", 1, 0}, OPT_COLUMNS, G_INPUT, NULL},
    {{"dir-glob", 1, 0}, OPT_DIR_GLOB, G_INPUT, NULL},
    {{"max-line-bytes", 1, 0}, OPT_MAX_LINE, G_INPUT, NULL},
    {{"rating-scale", 1, 0}, OPT_RATING_SCALE, G_INPUT, NULL},
    {{"duplicates", 1, 0}, OPT_DUPLICATES, G_INPUT, NULL},
    {{"skip-bad-lines", 0, 0}, OPT_SKIP_BAD, G_INPUT, NULL},
    {{"metric", 1, 1}, OPT_METRIC, G_SIMILARITY, "--metric"},
    {{"k", 1, 1}, OPT_K, G_SIMILARITY, "-k"},
    {{"min-support", 1, 1}, OPT_MIN_SUPPORT, G_SIMILARITY, "--min-support"},
    {{"shrinkage", 1, 1}, OPT_SHRINKAGE, G_SIMILARITY, "--shrinkage"},
    {{"negative", 1, 1}, OPT_NEGATIVE, G_SIMILARITY, "--negative"},
    {{"predict", 1, 1}, OPT_PREDICT, G_SIMILARITY, "--predict"},
    {{"min-k", 1, 1}, OPT_MIN_K, G_SIMILARITY, "--min-k"},
    {{"interp-shrink", 1, 1}, OPT_INTERP_SHRINK, G_SIMILARITY, "--interp-shrink"},
    {{"interp-reg", 1, 1}, OPT_INTERP_REG, G_SIMILARITY, "--interp-reg"},
    {{"global-lr", 1, 1}, OPT_GLOBAL_LR, G_SIMILARITY, "--global-lr"},
    {{"global-reg", 1, 1}, OPT_GLOBAL_REG, G_SIMILARITY, "--global-reg"},
    {{"global-decay", 1, 1}, OPT_GLOBAL_DECAY, G_SIMILARITY, "--global-decay"},
    {{"global-epochs", 1, 1}, OPT_GLOBAL_EPOCHS, G_SIMILARITY, "--global-epochs"},
    {{"topn-score", 1, 0}, OPT_TOPN_SCORE, G_SIMILARITY, NULL},
    {{"tune-predict", 0, 0}, OPT_TUNE_PREDICT, G_SIMILARITY, NULL},
    {{"test", 1, 0}, OPT_TEST, G_EVALUATION, NULL},
    {{"holdout", 1, 0}, OPT_HOLDOUT, G_EVALUATION, NULL},
    {{"seed", 1, 0}, OPT_SEED, G_EVALUATION, NULL},
    {{"out", 1, 0}, OPT_OUT, G_EVALUATION, NULL},
    {{"no-neighbors", 0, 0}, OPT_NO_NEIGHBORS, G_EVALUATION, NULL},
    {{"device", 1, 0}, OPT_DEVICE, G_DEVICE, NULL},
    {{"gpu-memory", 1, 0}, OPT_GPU_MEMORY, G_DEVICE, NULL},
    {{"threads", 1, 0}, OPT_THREADS, G_DEVICE, NULL},
    {{"top-n", 1, 0}, OPT_TOP_N, G_EVALUATION, NULL},
    {{"users", 1, 0}, OPT_USERS, G_EVALUATION, NULL},
    {{"rank", 1, 1}, OPT_RANK, G_RANKING, "--rank"},
    {{"rank-k", 1, 1}, OPT_RANK_K, G_RANKING, "--rank-k"},
    {{"alpha", 1, 1}, OPT_ALPHA, G_RANKING, "--alpha"},
    {{"beta", 1, 1}, OPT_BETA, G_RANKING, "--beta"},
    {{"weighting", 1, 1}, OPT_WEIGHTING, G_RANKING, "--weighting"},
    {{"bm25", 1, 1}, OPT_BM25, G_RANKING, "--bm25"},
    {{"rank-values", 1, 1}, OPT_RANK_VALUES, G_RANKING, "--rank-values"},
    {{"rank-shrink", 1, 1}, OPT_RANK_SHRINK, G_RANKING, "--rank-shrink"},
    {{"locality", 1, 1}, OPT_LOCALITY, G_RANKING, "--locality"},
    {{"normalize", 1, 1}, OPT_NORMALIZE, G_RANKING, "--normalize"},
    {{"tune", 0, 0}, OPT_TUNE, G_RANKING, NULL},
    {{"tune-metric", 1, 0}, OPT_TUNE_METRIC, G_RANKING, NULL},
    {{"tune-fraction", 1, 0}, OPT_TUNE_FRACTION, G_RANKING, NULL},
    {{"tune-grid", 1, 0}, OPT_TUNE_GRID, G_RANKING, NULL},
    {{"tune-rounds", 1, 0}, OPT_TUNE_ROUNDS, G_RANKING, NULL},
    {{"tune-users", 1, 0}, OPT_TUNE_USERS, G_RANKING, NULL},
    {{"gpu-topn", 1, 0}, OPT_GPU_TOPN, G_DEVICE, NULL},
    {{"items", 1, 0}, OPT_ITEMS, G_SIMILARITY, NULL},
    {{"gpu-query", 1, 0}, OPT_GPU_QUERY, G_DEVICE, NULL},
    {{"gpu-sims", 1, 0}, OPT_GPU_SIMS, G_DEVICE, NULL},
    {{"split", 1, 0}, OPT_SPLIT, G_EVALUATION, NULL},
    {{"folds", 1, 0}, OPT_FOLDS, G_EVALUATION, NULL},
    {{"write-folds", 0, 0}, OPT_WRITE_FOLDS, G_EVALUATION, NULL},
    {{"relevance", 1, 0}, OPT_RELEVANCE, G_EVALUATION, NULL},
    {{"baseline", 1, 0}, OPT_BASELINE, G_EVALUATION, NULL},
    {{"cutoffs", 1, 0}, OPT_CUTOFFS, G_EVALUATION, NULL},
    {{"report", 0, 0}, OPT_REPORT, G_EVALUATION, NULL},
    {{"user-metrics", 0, 0}, OPT_USER_METRICS, G_EVALUATION, NULL},
    {{"save-model", 1, 0}, OPT_SAVE_MODEL, G_EVALUATION, NULL},
    {{"model", 1, 0}, OPT_MODEL, G_EVALUATION, NULL},
    {{"queries", 1, 0}, OPT_QUERIES, G_EVALUATION, NULL},
    {{"memory-limit", 1, 0}, OPT_MEMORY_LIMIT, G_DEVICE, NULL},
    {{"by", 1, 0}, OPT_BY, G_SIMILARITY, NULL},
    {{"implicit", 0, 1}, OPT_IMPLICIT, G_SIMILARITY, "--implicit"},
    {{"approx", 1, 0}, OPT_APPROX, G_SIMILARITY, NULL},
    {{"reps", 1, 0}, OPT_REPS, G_SIMILARITY, NULL},
    {{"probes", 1, 0}, OPT_PROBES, G_SIMILARITY, NULL},
    {{"approx-check", 1, 0}, OPT_APPROX_CHECK, G_SIMILARITY, NULL},
    {{"gpus", 1, 0}, OPT_GPUS, G_DEVICE, NULL},
    {{"mpi-load", 1, 0}, OPT_MPI_LOAD, G_DEVICE, NULL},
    {{"mpi-output", 1, 0}, OPT_MPI_OUTPUT, G_DEVICE, NULL},
};

#define N_ROWS (sizeof table / sizeof table[0])

/* A bad value: its message, and RK_E_ARG. */
#define FAIL(...) return rk_error_set(err, RK_E_ARG, __VA_ARGS__)

/* ---- strict number parsing ------------------------------------------------------ */

static rk_status parse_ll(const char *opt, const char *s, long long lo, long long hi, long long *out, rk_error *err)
{
    char *end;
    if (s[0] == '\0' || s[0] == ' ' || s[0] == '\t' || s[0] == '\n')
        FAIL("%s: expected an integer, got '%s'", opt, s);
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end != '\0') FAIL("%s: expected an integer, got '%s'", opt, s);
    if (errno == ERANGE || v < lo || v > hi) {
        if (hi == LLONG_MAX || hi == INT_MAX)
            FAIL("%s: '%s' out of range (at least %lld)", opt, s, lo);
        FAIL("%s: '%s' out of range (%lld to %lld)", opt, s, lo, hi);
    }
    *out = v;
    return RK_OK;
}

static rk_status parse_u64(const char *opt, const char *s, uint64_t *out, rk_error *err)
{
    char *end;
    if (s[0] < '0' || s[0] > '9') FAIL("%s: expected an unsigned integer, got '%s'", opt, s);
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end != '\0') FAIL("%s: expected an unsigned integer, got '%s'", opt, s);
    if (errno == ERANGE || v > UINT64_MAX) FAIL("%s: '%s' out of range (0 to %llu)", opt, s,
                                                (unsigned long long)UINT64_MAX);
    *out = (uint64_t)v;
    return RK_OK;
}

/* A finite decimal number (no nan/inf, no hex). */
static int read_double(const char *s, double *out)
{
    char *end;
    if (s[0] == '\0' || s[0] == ' ' || s[0] == '\t' || s[0] == '\n') return 0;
    for (const char *p = s; *p; p++)
        if (!strchr("0123456789+-.eE", *p)) return 0;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v)) return 0;
    *out = v;
    return 1;
}

static rk_status parse_double(const char *opt, const char *s, double *out, rk_error *err)
{
    if (!read_double(s, out)) FAIL("%s: expected a finite number, got '%s'", opt, s);
    return RK_OK;
}

/* ---- option values ---------------------------------------------------------------- */

static rk_status parse_delimiter(const char *s, char *out, rk_error *err)
{
    static const struct { const char *name; char c; } names[] = {
        {"tab", '\t'}, {"\\t", '\t'}, {"TAB", '\t'}, {"space", ' '}, {"comma", ','},
        {"semicolon", ';'}, {"pipe", '|'},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].name) == 0) {
            *out = names[i].c;
            return RK_OK;
        }
    if (strlen(s) == 1 && s[0] != '\n' && s[0] != '\r' && s[0] != '"') {
        *out = s[0];
        return RK_OK;
    }
    FAIL("--delimiter: expected one character or tab, space, comma, semicolon, pipe; got '%s'", s);
}

static rk_status check_columns(const char *s, rk_error *err)
{
    int fields = 1;
    size_t len = 0;
    for (const char *p = s;; p++) {
        if (*p == ',' || *p == '\0') {
            if (len == 0) FAIL("--columns: empty field in '%s' (want user,item,rating[,time])", s);
            if (*p == '\0') break;
            fields++;
            len = 0;
        } else {
            len++;
        }
    }
    if (fields < 3 || fields > 4)
        FAIL("--columns: want 3 or 4 fields (user,item,rating[,time]), got %d in '%s'", fields, s);
    return RK_OK;
}

static rk_status parse_scale(const char *s, double *lo, double *hi, rk_error *err)
{
    const char *colon = strchr(s, ':');
    char a[64], b[64];
    if (colon == NULL) FAIL("--rating-scale: expected MIN:MAX, got '%s'", s);
    size_t la = (size_t)(colon - s), lb = strlen(colon + 1);
    if (la >= sizeof a || lb >= sizeof b) FAIL("--rating-scale: expected MIN:MAX, got '%s'", s);
    memcpy(a, s, la);
    a[la] = '\0';
    memcpy(b, colon + 1, lb + 1);
    if (!read_double(a, lo) || !read_double(b, hi))
        FAIL("--rating-scale: expected MIN:MAX with finite numbers, got '%s'", s);
    if (!(*lo < *hi)) FAIL("--rating-scale: MIN must be below MAX, got '%s'", s);
    return RK_OK;
}

/* The value a into dst through a parser (a and err are the caller's). */
#define SET_LL(dst, type, opt, lo, hi)                                                                 \
    do {                                                                                               \
        long long v_;                                                                                  \
        RK_FORWARD(parse_ll(opt, a, lo, hi, &v_, err));                                                \
        dst = (type)v_;                                                                                \
    } while (0)
#define SET_DBL(dst, opt) RK_FORWARD(parse_double(opt, a, &(dst), err))
#define SET_U64(dst, opt) RK_FORWARD(parse_u64(opt, a, &(dst), err))

/* A finite number at least 0 into *out. */
static rk_status parse_nonneg(const char *opt, const char *a, double *out, rk_error *err)
{
    RK_FORWARD(parse_double(opt, a, out, err));
    if (!(*out >= 0.0)) FAIL("%s: must be at least 0, got '%s'", opt, a);
    return RK_OK;
}

/* The "Input" options: 1 when ch is one of them (its value checked and set), else 0. */
static rk_status input_option(int ch, const char *a, rk_job_opts *o, rk_error *err)
{
    switch (ch) {
    case OPT_FORMAT:
        if (rk_format_parse(a, &o->load.format) != RK_OK)
            FAIL("--format: unknown format '%s' (auto, movielens, dat, tsv, netflix, csv)", a);
        break;
    case OPT_DELIMITER: RK_FORWARD(parse_delimiter(a, &o->load.delimiter, err)); break;
    case OPT_HEADER: o->load.header = 1; break;
    case OPT_NO_HEADER: o->load.header = 0; break;
    case OPT_COLUMNS:
        RK_FORWARD(check_columns(a, err));
        o->load.columns = a;
        break;
    case OPT_MAX_LINE: SET_LL(o->load.line_max, size_t, "--max-line-bytes", 64, (long long)1 << 40); break;
    case OPT_DIR_GLOB:
        if (a[0] == '\0') FAIL("--dir-glob: empty pattern");
        o->load.dir_glob = a;
        break;
    case OPT_RATING_SCALE:
        RK_FORWARD(parse_scale(a, &o->load.scale_min, &o->load.scale_max, err));
        o->load.have_scale = 1;
        break;
    case OPT_DUPLICATES:
        if (rk_dup_policy_parse(a, &o->duplicates) != RK_OK)
            FAIL("--duplicates: unknown policy '%s' (last, first, mean, error)", a);
        break;
    case OPT_SKIP_BAD: o->load.skip_bad_lines = 1; break;
    default: return rk_error_set(err, RK_E_INTERNAL, "option %d is not of its table row's group", ch);
    }
    return RK_OK;
}

/* The "Similarity" and "Prediction" options: 1 when ch is one of them (its value checked and set), else 0. */
static rk_status similarity_option(int ch, const char *a, rk_job_opts *o, rk_error *err)
{
    switch (ch) {
    case OPT_METRIC:
        if (rk_metric_parse(a, &o->knn.sim.metric) != RK_OK) {
            char names[256];
            rk_metric_names(names, sizeof names, -1); /* the metric table's rows */
            FAIL("--metric: unknown metric '%s' (%s)", a, names);
        }
        if (rk_metric_is_ranking(o->knn.sim.metric))
            FAIL("--metric: %s is a ranking similarity of top-N: use --rank %s", a, a);
        o->metric_given = 1;
        break;
    case OPT_K: SET_LL(o->knn.k, int32_t, "-k", 1, INT32_MAX); break;
    case OPT_MIN_SUPPORT: SET_LL(o->knn.sim.min_support, int32_t, "--min-support", 1, INT32_MAX); break;
    case OPT_SHRINKAGE:
        SET_DBL(o->knn.sim.shrinkage, "--shrinkage");
        if (!(o->knn.sim.shrinkage >= 0.0)) FAIL("--shrinkage: must be at least 0, got '%s'", a);
        o->shrinkage_given = 1;
        break;
    case OPT_PREDICT:
        if (rk_predict_mode_parse(a, &o->knn.mode) != RK_OK)
            FAIL("--predict: unknown mode '%s' (basic, means, baseline, interpolate, global)", a);
        break;
    case OPT_INTERP_SHRINK: RK_FORWARD(parse_nonneg("--interp-shrink", a, &o->knn.pm.interp_shrink, err)); break;
    case OPT_INTERP_REG: RK_FORWARD(parse_nonneg("--interp-reg", a, &o->knn.pm.interp_reg, err)); break;
    case OPT_GLOBAL_LR: RK_FORWARD(parse_nonneg("--global-lr", a, &o->knn.pm.global_lr, err)); break;
    case OPT_GLOBAL_REG: RK_FORWARD(parse_nonneg("--global-reg", a, &o->knn.pm.global_reg, err)); break;
    case OPT_GLOBAL_DECAY: RK_FORWARD(parse_nonneg("--global-decay", a, &o->knn.pm.global_decay, err)); break;
    case OPT_GLOBAL_EPOCHS: SET_LL(o->knn.pm.global_epochs, int32_t, "--global-epochs", 0, 100000); break;
    case OPT_TOPN_SCORE:
        if (strcmp(a, "sums") == 0) o->topn_by_prediction = 0;
        else if (strcmp(a, "prediction") == 0) o->topn_by_prediction = 1;
        else FAIL("--topn-score: expected sums or prediction, got '%s'", a);
        break;
    case OPT_MIN_K: SET_LL(o->knn.min_k, int32_t, "--min-k", 1, INT32_MAX); break;
    case OPT_NEGATIVE:
        if (strcmp(a, "yes") == 0) o->knn.negative = 1;
        else if (strcmp(a, "no") == 0) o->knn.negative = 0;
        else FAIL("--negative: expected yes or no, got '%s'", a);
        break;
    case OPT_IMPLICIT: o->implicit = 1; break;
    case OPT_TUNE_PREDICT: o->tune_predict = 1; break;
    case OPT_APPROX:
        if (rk_approx_parse(a, &o->approx) != RK_OK) FAIL("--approx: unknown method '%s' (rbc)", a);
        break;
    case OPT_REPS: SET_LL(o->approx_reps, int32_t, "--reps", 1, INT32_MAX); break;
    case OPT_PROBES: SET_LL(o->approx_probes, int32_t, "--probes", 1, INT32_MAX); break;
    case OPT_APPROX_CHECK: SET_LL(o->approx_check, int64_t, "--approx-check", 1, INT32_MAX); break;
    case OPT_BY:
        if (strcmp(a, "user") == 0) o->by_user = 1;
        else if (strcmp(a, "item") == 0) o->by_user = 0;
        else FAIL("--by: unknown mode '%s' (item, user)", a);
        break;
    case OPT_ITEMS:
        if (a[0] == '\0') FAIL("--items: empty file name");
        o->items_path = a;
        break;
    default: return rk_error_set(err, RK_E_INTERNAL, "option %d is not of its table row's group", ch);
    }
    return RK_OK;
}

/* The ranking model's options (CONTRACT.md §5b): 1 when ch is one of them (its value checked and set), else 0. */
static rk_status ranking_option(int ch, const char *a, rk_job_opts *o, rk_error *err)
{
    rk_rankw_opts *r = &o->rank;
    switch (ch) {
    case OPT_RANK:
        if (rk_rankw_parse_sim(a, &r->sim) != RK_OK)
            FAIL("--rank: unknown similarity '%s' (rp3beta, weighted-cosine, lists)", a);
        o->rank_given = 1;
        break;
    case OPT_RANK_K: SET_LL(r->k, int32_t, "--rank-k", 1, INT32_MAX); break;
    case OPT_ALPHA: SET_DBL(r->alpha, "--alpha"); break;
    case OPT_BETA: SET_DBL(r->beta, "--beta"); break;
    case OPT_WEIGHTING:
        if (rk_rankw_parse_weighting(a, &r->weighting) != RK_OK)
            FAIL("--weighting: unknown weighting '%s' (none, tfidf, bm25)", a);
        break;
    case OPT_BM25: {
        char buf[128];
        snprintf(buf, sizeof buf, "%s", a);
        char *colon = strchr(buf, ':');
        if (colon == NULL) FAIL("--bm25: expected K1:B, got '%s'", a);
        *colon = '\0';
        RK_FORWARD(parse_double("--bm25", buf, &r->bm25_k1, err));
        RK_FORWARD(parse_double("--bm25", colon + 1, &r->bm25_b, err));
        break;
    }
    case OPT_RANK_VALUES:
        if (strcmp(a, "ratings") == 0) r->ratings = 1;
        else if (strcmp(a, "interactions") == 0) r->ratings = 0;
        else FAIL("--rank-values: unknown values '%s' (interactions, ratings)", a);
        break;
    case OPT_RANK_SHRINK: SET_DBL(r->shrink, "--rank-shrink"); break;
    case OPT_LOCALITY: SET_DBL(r->q, "--locality"); break;
    case OPT_NORMALIZE:
        if (strcmp(a, "yes") == 0) r->normalize = 1;
        else if (strcmp(a, "no") == 0) r->normalize = 0;
        else FAIL("--normalize: expected yes or no, got '%s'", a);
        break;
    case OPT_TUNE: o->tune = 1; break;
    case OPT_TUNE_METRIC:
        if (rk_tune_metric_parse(a, &o->tune_metric) != RK_OK)
            FAIL("--tune-metric: unknown metric '%s' (ndcg, precision, recall, map, mrr, hit_rate)", a);
        break;
    case OPT_TUNE_FRACTION:
        SET_DBL(o->tune_fraction, "--tune-fraction");
        if (!(o->tune_fraction > 0.0 && o->tune_fraction < 1.0))
            FAIL("--tune-fraction: must be a fraction strictly between 0 and 1, got '%s'", a);
        break;
    case OPT_TUNE_USERS: SET_LL(o->tune_users, int64_t, "--tune-users", 0, INT32_MAX); break;
    case OPT_TUNE_ROUNDS: SET_LL(o->tune_rounds, int, "--tune-rounds", 1, 20); break;
    case OPT_TUNE_GRID:
        if (rk_tune_grid_parse(a, &o->tune_grid) != RK_OK)
            FAIL("--tune-grid: unknown grid '%s' (full, small, rp3beta, cosine, bm25)", a);
        break;
    default: return rk_error_set(err, RK_E_INTERNAL, "option %d is not of its table row's group", ch);
    }
    return RK_OK;
}

/* The "Recommendation", "Evaluation", "Saved models" and "Output" options: 1 when ch is one of them (its value checked and set), else 0. */
static rk_status evaluation_option(int ch, const char *a, rk_job_opts *o, rk_error *err)
{
    switch (ch) {
    case OPT_TEST:
        if (a[0] == '\0') FAIL("--test: empty file name");
        o->test_path = a;
        break;
    case OPT_HOLDOUT:
        SET_DBL(o->holdout, "--holdout");
        if (!(o->holdout > 0.0 && o->holdout < 1.0))
            FAIL("--holdout: must be a fraction strictly between 0 and 1, got '%s'", a);
        break;
    case OPT_SEED: SET_U64(o->seed, "--seed"); break;
    case OPT_OUT:
        if (a[0] == '\0') FAIL("--out: empty directory name");
        o->out_dir = a;
        break;
    case OPT_NO_NEIGHBORS: o->write_neighbors = 0; break;
    case OPT_TOP_N:
        SET_LL(o->top_n, int32_t, "--top-n", 0, INT32_MAX);
        o->top_n_given = 1;
        break;
    case OPT_USERS:
        if (a[0] == '\0') FAIL("--users: empty file name");
        o->users_path = a;
        break;
    case OPT_SPLIT:
        if (rk_split_kind_parse(a, &o->split) != RK_OK)
            FAIL("--split: unknown split '%s' (ratings, user, temporal, users)", a);
        break;
    case OPT_FOLDS: SET_LL(o->folds, int32_t, "--folds", 2, RK_JOB_MAX_FOLDS); break;
    case OPT_WRITE_FOLDS: o->write_folds = 1; break;
    case OPT_RELEVANCE:
        SET_DBL(o->relevance, "--relevance");
        o->relevance_given = 1;
        break;
    case OPT_BASELINE:
        if (strcmp(a, "popular") == 0) o->baseline_popular = 1;
        else if (strcmp(a, "none") == 0) o->baseline_popular = 0;
        else FAIL("--baseline: unknown baseline '%s' (popular, none)", a);
        break;
    case OPT_CUTOFFS: {
        o->n_cutoffs = 0;
        const char *p = a;
        while (*p != '\0') {
            char *end;
            errno = 0;
            const long v = strtol(p, &end, 10);
            if (end == p || errno != 0 || v < 1 || v > INT32_MAX || (*end != ',' && *end != '\0'))
                FAIL("--cutoffs: expected a list of positive integers like 10,20,50, got '%s'", a);
            if (o->n_cutoffs >= RK_RANK_MAX_CUTOFFS)
                FAIL("--cutoffs: at most %d values", RK_RANK_MAX_CUTOFFS);
            o->cutoffs[o->n_cutoffs++] = (int32_t)v;
            p = *end == ',' ? end + 1 : end;
        }
        if (o->n_cutoffs == 0) FAIL("--cutoffs: empty list");
        break;
    }
    case OPT_REPORT: o->report = 1; break;
    case OPT_USER_METRICS: o->user_metrics = 1; break;
    case OPT_SAVE_MODEL:
        if (a[0] == '\0') FAIL("--save-model: empty file name");
        o->save_model = a;
        break;
    case OPT_MODEL:
        if (a[0] == '\0') FAIL("--model: empty file name");
        o->model_path = a;
        break;
    case OPT_QUERIES:
        if (a[0] == '\0') FAIL("--queries: empty file name");
        o->queries_path = a;
        break;
    default: return rk_error_set(err, RK_E_INTERNAL, "option %d is not of its table row's group", ch);
    }
    return RK_OK;
}

/* The "Device and performance" and "Scale" options: 1 when ch is one of them (its value checked and set), else 0. */
static rk_status device_option(int ch, const char *a, rk_job_opts *o, rk_error *err)
{
    switch (ch) {
    case OPT_DEVICE:
        if (rk_device_parse(a, &o->device) != RK_OK)
            FAIL("--device: unknown device '%s' (auto, cpu, gpu)", a);
        break;
    case OPT_GPU_MEMORY:
        SET_DBL(o->gpu_memory_gb, "--gpu-memory");
        if (!(o->gpu_memory_gb > 0.0)) FAIL("--gpu-memory: must be above 0, got '%s'", a);
        break;
    case OPT_MEMORY_LIMIT:
        SET_DBL(o->memory_limit_gb, "--memory-limit");
        if (!(o->memory_limit_gb > 0.0)) FAIL("--memory-limit: must be above 0, got '%s'", a);
        break;
    case OPT_THREADS: SET_LL(o->knn.threads, int, "--threads", 1, INT_MAX); break;
    case OPT_GPUS: {
        rk_error e;
        rk_error_clear(&e);
        if (a[0] == '\0') FAIL("--gpus: expected all, a count N >= 1 or a comma-separated list of device ordinals "
                        "(e.g. 0,1), got ''");
        if (rk_gpus_parse(a, &o->gpus, &e) != RK_OK) FAIL("--gpus: %s", e.msg);
        break;
    }
    case OPT_MPI_LOAD:
        if (rk_dist_load_parse(a, &o->dist_load) != RK_OK)
            FAIL("--mpi-load: unknown mode '%s' (auto, shard, each, bcast)", a);
        break;
    case OPT_MPI_OUTPUT:
        if (rk_dist_output_parse(a, &o->dist_output) != RK_OK)
            FAIL("--mpi-output: unknown mode '%s' (auto, slices, root)", a);
        break;
    case OPT_GPU_SIMS:
        if (rk_gpu_sims_route_parse(a, &o->gpu_sims) != RK_OK)
            FAIL("--gpu-sims: unknown route '%s' (auto, kernel, spgemm)", a);
        break;
    case OPT_GPU_QUERY:
        if (rk_gpu_query_route_parse(a, &o->gpu_query) != RK_OK)
            FAIL("--gpu-query: unknown route '%s' (auto, block, kernel)", a);
        break;
    case OPT_GPU_TOPN:
        if (rk_gpu_topn_route_parse(a, &o->gpu_topn) != RK_OK)
            FAIL("--gpu-topn: unknown route '%s' (auto, kernel, spgemm)", a);
        break;
    default: return rk_error_set(err, RK_E_INTERNAL, "option %d is not of its table row's group", ch);
    }
    return RK_OK;
}

/* ---- the table ------------------------------------------------------------ */

const rk_jobopt *rk_jobopt_at(size_t i)
{
    return i < N_ROWS ? &table[i].pub : NULL;
}

static const row *find(const char *name)
{
    for (size_t i = 0; name != NULL && i < N_ROWS; i++)
        if (strcmp(table[i].pub.name, name) == 0) return &table[i];
    return NULL;
}

const rk_jobopt *rk_jobopt_find(const char *name)
{
    const row *r = find(name);
    return r != NULL ? &r->pub : NULL;
}

rk_status rk_jobopt_set(rk_job_opts *o, const char *name, const char *value, rk_error *err)
{
    const row *r = find(name);
    if (r == NULL) return rk_error_set(err, RK_E_ARG, "unknown option '%s'", name != NULL ? name : "(null)");
    if (r->pub.has_value && value == NULL) return rk_error_set(err, RK_E_ARG, "option '--%s' needs a value", name);
    if (!r->pub.has_value && value != NULL) return rk_error_set(err, RK_E_ARG, "option '--%s' takes no value", name);
    if (r->shown != NULL && o->model_fixed_opt == NULL) o->model_fixed_opt = r->shown;
    rk_status s;
    switch (r->group) {
    case G_INPUT: s = input_option(r->id, value, o, err); break;
    case G_SIMILARITY: s = similarity_option(r->id, value, o, err); break;
    case G_RANKING: s = ranking_option(r->id, value, o, err); break;
    case G_EVALUATION: s = evaluation_option(r->id, value, o, err); break;
    default: s = device_option(r->id, value, o, err); break;
    }
    return s;
}
