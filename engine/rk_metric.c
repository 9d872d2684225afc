/* rk_metric.c — the metric table (rk_metric.h). */
#include "rk_metric.h"

#include <stdio.h>
#include <string.h>

/* Indexed by the enum; the order of the rows is the order of --help.  The
 * file codes are MODEL_FORMAT.md's and never change. */
static const rk_metric_row rows[RK_METRIC_COUNT] = {
    /* metric                     name              code sums              full resid sym shrinkage ranking */
    [RK_METRIC_PEARSON] = {RK_METRIC_PEARSON, "pearson", 1, RK_SUMS_PEARSON, 0, 0, 1, 0.0},
    [RK_METRIC_PEARSON_BASELINE] = {RK_METRIC_PEARSON_BASELINE, "pearson-baseline", 2, RK_SUMS_PRODUCTS, 0, 1, 1,
                                    100.0},
    [RK_METRIC_COSINE] = {RK_METRIC_COSINE, "cosine", 3, RK_SUMS_PRODUCTS, 0, 0, 1, 0.0},
    [RK_METRIC_MSD] = {RK_METRIC_MSD, "msd", 4, RK_SUMS_DIFF, 0, 0, 1, 0.0},
    [RK_METRIC_EUCLIDEAN] = {RK_METRIC_EUCLIDEAN, "euclidean", 5, RK_SUMS_DIFF, 0, 0, 1, 0.0},
    [RK_METRIC_COSINE_FULL] = {RK_METRIC_COSINE_FULL, "cosine-full", 6, RK_SUMS_DOT, 1, 0, 1, 0.0},
    [RK_METRIC_EUCLIDEAN_FULL] = {RK_METRIC_EUCLIDEAN_FULL, "euclidean-full", 7, RK_SUMS_DOT, 1, 0, 1, 0.0},
    [RK_METRIC_JACCARD] = {RK_METRIC_JACCARD, "jaccard", 8, RK_SUMS_DOT, 1, 0, 1, 0.0},
    [RK_METRIC_WEIGHTED_COSINE] = {RK_METRIC_WEIGHTED_COSINE, "weighted-cosine", 9, RK_SUMS_DOT, 1, 0, 0, 0.0, 1},
    [RK_METRIC_RP3BETA] = {RK_METRIC_RP3BETA, "rp3beta", 10, RK_SUMS_DOT, 1, 0, 0, 0.0, 1},
};

const rk_metric_row *rk_metric_row_of(rk_metric m)
{
    return (unsigned)m < RK_METRIC_COUNT ? &rows[m] : NULL;
}

int rk_metric_count(void) { return RK_METRIC_COUNT; }

rk_status rk_metric_parse(const char *name, rk_metric *out)
{
    for (int m = 0; m < RK_METRIC_COUNT && name != NULL; m++) {
        if (rows[m].name != NULL && strcmp(name, rows[m].name) == 0) {
            *out = (rk_metric)m;
            return RK_OK;
        }
    }
    return RK_E_ARG;
}

const char *rk_metric_name(rk_metric m)
{
    const rk_metric_row *r = rk_metric_row_of(m);
    return r != NULL && r->name != NULL ? r->name : "unknown";
}

rk_status rk_metric_from_code(uint32_t c, rk_metric *out)
{
    for (int m = 0; m < RK_METRIC_COUNT; m++) {
        if (c != 0 && rows[m].file_code == c) {
            *out = (rk_metric)m;
            return RK_OK;
        }
    }
    return RK_E_MODEL;
}

int rk_metric_names(char *buf, size_t cap, int full)
{
    int len = 0;
    if (cap > 0) buf[0] = '\0';
    for (int m = 0; m < RK_METRIC_COUNT; m++) {
        if ((full >= 0 && rows[m].full != full) || rows[m].ranking) continue;
        const size_t at = (size_t)len < cap ? (size_t)len : cap;
        len += snprintf(buf + at, cap - at, "%s%s", len > 0 ? ", " : "", rows[m].name);
    }
    return len;
}
