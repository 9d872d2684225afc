/* Sharing items out by work (rk_part.h). */
#include "rk_part.h"

#include <stdlib.h>

static rk_status check(const int64_t *cost, int32_t n, int32_t parts, rk_error *err)
{
    if (parts < 1) return rk_error_set(err, RK_E_ARG, "work shared among %d parts", parts);
    if (n < 0) return rk_error_set(err, RK_E_ARG, "work of %d items", n);
    for (int32_t i = 0; i < n; i++)
        if (cost[i] < 0) return rk_error_set(err, RK_E_ARG, "item %d has a negative cost", i);
    return RK_OK;
}

rk_status rk_part_ranges(const int64_t *cost, int32_t n, int32_t parts, int32_t *bounds, int64_t *load,
                         rk_error *err)
{
    RK_FORWARD(check(cost, n, parts, err));
    double total = 0.0;
    for (int32_t i = 0; i < n; i++) total += (double)cost[i];
    /* item i belongs to the part its cost's middle falls in: floor(parts x
     * (prefix + cost/2) / total); parts are non-decreasing along the items */
    int32_t p = 0;
    double prefix = 0.0;
    bounds[0] = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t q = total > 0.0 ? (int32_t)((double)parts * (prefix + 0.5 * (double)cost[i]) / total)
                                : (int32_t)((int64_t)parts * i / n); /* no work: by count */
        if (q >= parts) q = parts - 1;
        while (p < q) bounds[++p] = i;
        prefix += (double)cost[i];
    }
    while (p < parts) bounds[++p] = n;
    if (load != NULL)
        for (int32_t q = 0; q < parts; q++) {
            load[q] = 0;
            for (int32_t i = bounds[q]; i < bounds[q + 1]; i++) load[q] += cost[i];
        }
    return RK_OK;
}

static const int64_t *g_cost;
static int by_cost_desc(const void *a, const void *b)
{
    const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    if (g_cost[x] != g_cost[y]) return g_cost[x] > g_cost[y] ? -1 : 1;
    return (x > y) - (x < y);
}

rk_status rk_part_lpt(const int64_t *cost, int32_t n, int32_t parts, int32_t *owner, int64_t *load, rk_error *err)
{
    RK_FORWARD(check(cost, n, parts, err));
    int32_t *order = malloc((size_t)(n > 0 ? n : 1) * sizeof *order);
    int64_t *l = calloc((size_t)parts, sizeof *l);
    if (order == NULL || l == NULL) {
        free(order);
        free(l);
        return rk_error_set(err, RK_E_NOMEM, "out of memory sharing %d items among %d parts", n, parts);
    }
    for (int32_t i = 0; i < n; i++) order[i] = i;
    g_cost = cost; /* qsort has no context argument in C11 */
    qsort(order, (size_t)n, sizeof *order, by_cost_desc);
    for (int32_t t = 0; t < n; t++) {
        int32_t best = 0; /* the least loaded part, lowest index on ties; parts are few */
        for (int32_t q = 1; q < parts; q++)
            if (l[q] < l[best]) best = q;
        owner[order[t]] = best;
        l[best] += cost[order[t]];
    }
    if (load != NULL)
        for (int32_t q = 0; q < parts; q++) load[q] = l[q];
    free(order);
    free(l);
    return RK_OK;
}

double rk_part_balance(const int64_t *load, int32_t parts)
{
    if (parts < 1) return 0.0;
    double sum = 0.0, most = 0.0;
    for (int32_t q = 0; q < parts; q++) {
        sum += (double)load[q];
        if ((double)load[q] > most) most = (double)load[q];
    }
    return sum > 0.0 ? most / (sum / (double)parts) : 0.0;
}
