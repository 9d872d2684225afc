/* test_subset_util.h — random models and list comparisons shared by the
 * subset-query tests of the CPU engine (test_subset.c) and of the GPU
 * (test_gpu_subset.c). */
#ifndef RK_TEST_SUBSET_UTIL_H
#define RK_TEST_SUBSET_UTIL_H

#include "rk_knn.h"
#include "rk_model.h"
#include "test_util.h"

#include <math.h>
#include <string.h>

/* A random model of nu users and ni items: ratings on the half-star grid
 * (real = 0: exact sums), real values (1) or integers of ±2^22 (2), the last
 * user and item empty, the user before it with one rating, item 0 rated by
 * everyone (popular = 1). */
static inline void rk_ts_model(rk_model *m, int nu, int ni, double density, int real, int popular,
                               unsigned long long seed)
{
    rk_triples t;
    rk_error err;
    unsigned long long s = seed;
    rk_triples_alloc(&t, (int64_t)nu * ni + 1, 0, NULL);
    int64_t n = 0;
    for (int u = 0; u < nu; u++) {
        if (nu > 3 && u == nu - 1) continue;
        const int one = nu > 3 && u == nu - 2;
        for (int i = 0; i < ni; i++) {
            if (ni > 3 && i == ni - 1) continue;
            const int take = one ? i == 0 : (popular && i == 0) || rk_test_uniform(&s) < density;
            if (!take) continue;
            t.user[n] = u;
            t.item[n] = i;
            if (real == 2) /* integers of ±2^22: 64-bit sums for the full-vector metrics (rk_knn_wide_grid) */
                t.rating[n] = (float)((double)(rk_test_rand(&s) % 8388609u) - 4194304.0);
            else
                t.rating[n] = real ? (float)(1.0 + 4.0 * rk_test_uniform(&s)) : (float)(0.5 * (double)(1 + rk_test_rand(&s) % 10));
            n++;
        }
    }
    t.n = n;
    CU_ASSERT_FATAL(rk_model_build(m, &t, nu, ni, 0, 0, 0, 1, &err) == RK_OK);
    rk_triples_free(&t);
}

/* n_rows distinct random items (a partial Fisher–Yates shuffle). */
static inline int32_t *rk_ts_subset(int ni, int n_rows, unsigned long long seed)
{
    int32_t *all = malloc(sizeof(int32_t) * (size_t)(ni > 0 ? ni : 1));
    unsigned long long s = seed;
    for (int i = 0; i < ni; i++) all[i] = i;
    for (int t = 0; t < n_rows; t++) {
        int r = t + (int)(rk_test_rand(&s) % (unsigned)(ni - t));
        int32_t x = all[t];
        all[t] = all[r];
        all[r] = x;
    }
    return all;
}

/* Lists of the subset's items in `got` equal those of `full` (similarities
 * within tol, neighbours equal unless tied within 1e-6), the other lists of
 * `got` are empty.  @return the number of mismatches. */
static inline int rk_ts_compare_subset(const rk_lists *full, const rk_lists *got, const int32_t *rows, int n_rows,
                                       float tol)
{
    int bad = 0;
    char *in = calloc((size_t)full->n_items + 1, 1);
    for (int t = 0; t < n_rows; t++) in[rows[t]] = 1;
    for (int i = 0; i < full->n_items; i++) {
        if (!in[i]) {
            bad += got->len[i] != 0;
            continue;
        }
        if (got->len[i] != full->len[i]) {
            fprintf(stderr, "item %d: %d neighbours, expected %d\n", i, got->len[i], full->len[i]);
            bad++;
            continue;
        }
        for (int r = 0; r < full->len[i]; r++) {
            const size_t at = (size_t)i * full->k + r;
            if (!(fabsf(got->sim[at] - full->sim[at]) <= tol)) bad++;
            if (got->nbr[at] != full->nbr[at]) bad += !(fabsf(got->sim[at] - full->sim[at]) <= 1e-6f);
            else bad += got->support[at] != full->support[at];
        }
    }
    free(in);
    return bad;
}

#endif /* RK_TEST_SUBSET_UTIL_H */
