#include "rk_sim.h"

#include <string.h>

static const char *const metric_names[] = {
    [RK_METRIC_PEARSON] = "pearson",
    [RK_METRIC_PEARSON_BASELINE] = "pearson-baseline",
    [RK_METRIC_COSINE] = "cosine",
    [RK_METRIC_MSD] = "msd",
    [RK_METRIC_EUCLIDEAN] = "euclidean",
    [RK_METRIC_COSINE_FULL] = "cosine-full",
    [RK_METRIC_EUCLIDEAN_FULL] = "euclidean-full",
    [RK_METRIC_JACCARD] = "jaccard",
};

rk_status rk_metric_parse(const char *name, rk_metric *out)
{
    for (size_t m = 0; m < sizeof metric_names / sizeof metric_names[0]; m++) {
        if (name != NULL && strcmp(name, metric_names[m]) == 0) {
            *out = (rk_metric)m;
            return RK_OK;
        }
    }
    return RK_E_ARG;
}

const char *rk_metric_name(rk_metric m)
{
    if ((size_t)m < sizeof metric_names / sizeof metric_names[0]) return metric_names[m];
    return "unknown";
}
