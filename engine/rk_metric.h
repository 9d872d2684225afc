/* rk_metric.h — the table of similarity metrics (prefix rk_metric_).
 *
 * One row per metric says everything the rest of the program needs to know
 * about it: its name (command line, metrics.json), its stable code in model
 * files, which co-rating sums an engine accumulates for it, whether it reads
 * whole vectors, whether it needs the baselines' residuals, its default
 * shrinkage and whether it is symmetric.  The CPU engine, the GPU dispatch,
 * the model file, the command line and the tests read the table; the
 * formulas themselves are rk_sim_value (rk_sim.h), which the compiler checks
 * for a case per metric.  A new metric is a row here, an enum value and a
 * case in rk_sim_value; tests/test_sim.c fails for a row left incomplete.
 */
#ifndef RK_METRIC_H
#define RK_METRIC_H

#include <stddef.h>
#include <stdint.h>
#include "rk_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rk_metric {
    RK_METRIC_PEARSON = 0,
    RK_METRIC_PEARSON_BASELINE,
    RK_METRIC_COSINE,
    RK_METRIC_MSD,
    RK_METRIC_EUCLIDEAN,
    /* full-vector metrics (CONTRACT.md §6b): unrated cells count as 0 */
    RK_METRIC_COSINE_FULL,
    RK_METRIC_EUCLIDEAN_FULL,
    RK_METRIC_JACCARD,
    /* ranking similarities (CONTRACT.md §5b): top-N only, over the values of
     * rk_rankw (a weighted or random-walk transform of the matrix) */
    RK_METRIC_WEIGHTED_COSINE,
    RK_METRIC_RP3BETA,
    RK_METRIC_COUNT
} rk_metric;

/* The co-rating sums a pair needs (the value is their number, as the GPU's
 * accumulators count them; RK_SUMS_DOT keeps 2 and reads the items' own
 * counts and norms).  RK_SUMS_NONE marks a row nobody filled in. */
typedef enum rk_metric_sums {
    RK_SUMS_NONE = 0,
    RK_SUMS_DIFF = 2,     /* n, Σ(x−y)²  (msd, euclidean) */
    RK_SUMS_DOT = 3,      /* n, Σxy over the co-raters, with each item's |U_i| and ‖x_i‖² */
    RK_SUMS_PRODUCTS = 4, /* n, Σx², Σy², Σxy  (cosine; pearson-baseline on residuals) */
    RK_SUMS_PEARSON = 6   /* n, Σx, Σy, Σx², Σy², Σxy */
} rk_metric_sums;

typedef struct rk_metric_row {
    rk_metric metric;
    const char *name;      /* --metric NAME, metrics.json */
    uint32_t file_code;    /* model files (MODEL_FORMAT.md): fixed forever, never 0 */
    rk_metric_sums sums;   /* what the engines accumulate per pair */
    int full;              /* 1: whole vectors, unrated = 0 (reads |U_i|, ‖x_i‖²) */
    int residuals;         /* 1: on the baseline residuals r − (μ + b_u + b_i) */
    int symmetric;         /* 1: sim(i, j) = sim(j, i), so a tile may be mirrored */
    double shrinkage;      /* default --shrinkage */
    int ranking;           /* 1: a ranking similarity of --rank (top-N lists over rk_rankw's
                              values; not a --metric, no predictions), unclamped */
} rk_metric_row;

/*! rk_metric_row_of() : the row of metric m; NULL for a value outside the
 *  enum. */
const rk_metric_row *rk_metric_row_of(rk_metric m);

/*! rk_metric_count() : the number of rows (RK_METRIC_COUNT). */
int rk_metric_count(void);

/*! rk_metric_parse() : the metric named `name` (a row's name) into *out.
 *  @return RK_OK or RK_E_ARG. */
rk_status rk_metric_parse(const char *name, rk_metric *out);

/*! rk_metric_name() : m's name, or "unknown" outside the enum. */
const char *rk_metric_name(rk_metric m);

/*! rk_metric_from_code() : the metric whose model-file code is c into *out.
 *  @return RK_OK, or RK_E_MODEL for a code no row has (no message: the
 *  caller names the file). */
rk_status rk_metric_from_code(uint32_t c, rk_metric *out);

/*! rk_metric_names() : the names of the --metric rows (the ranking rows
 *  left out) whose `full` flag is full (full < 0: every such row), in table order, joined by ", " into buf (cap
 *  bytes, always terminated when cap > 0), for messages.  @return the
 *  length the whole list needs, as snprintf. */
int rk_metric_names(char *buf, size_t cap, int full);

/*! rk_metric_is_full() : 1 for the full-vector metrics (the table's `full`
 *  column), whose formulas read each item's whole vector (its rater count
 *  and squared norm) besides the co-rating sums. */
static inline int rk_metric_is_full(rk_metric m)
{
    const rk_metric_row *r = rk_metric_row_of(m);
    return r != NULL && r->full;
}

/*! rk_metric_is_ranking() : 1 for the ranking similarities of --rank
 *  (the table's `ranking` column). */
static inline int rk_metric_is_ranking(rk_metric m)
{
    const rk_metric_row *r = rk_metric_row_of(m);
    return r != NULL && r->ranking;
}

/*! rk_metric_on_residuals() : 1 for the metrics computed on the baseline
 *  residuals (the table's `residuals` column: pearson-baseline). */
static inline int rk_metric_on_residuals(rk_metric m)
{
    const rk_metric_row *r = rk_metric_row_of(m);
    return r != NULL && r->residuals;
}

#ifdef __cplusplus
}
#endif
#endif /* RK_METRIC_H */
