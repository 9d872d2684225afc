/* test_rankw.h — random data and the ranking configurations shared by
 * test_rankw.c (against a float64 brute force) and test_gpu_rank.c (GPU
 * against CPU). */
#ifndef TEST_RANKW_H
#define TEST_RANKW_H

#include <math.h>
#include <string.h>
#include "test_util.h"
#include "rk_rankw.h"
#include "rk_knn.h"
#include "rk_model.h"

/* A random training matrix: each cell rated with probability dens, half
 * stars 0.5..5 (or 1 everywhere with ones); user 0 rates every item when
 * every_item (its idf is 0) and item ni-1 stays unrated when hole. */
static inline void rkt_data(rk_triples *t, int nu, int ni, double dens, int ones, int every_item, int hole,
                            unsigned long long seed)
{
    memset(t, 0, sizeof *t);
    t->user = malloc(sizeof(int32_t) * (size_t)nu * ni + 1);
    t->item = malloc(sizeof(int32_t) * (size_t)nu * ni + 1);
    t->rating = malloc(sizeof(float) * (size_t)nu * ni + 1);
    unsigned long long s = seed;
    for (int u = 0; u < nu; u++)
        for (int i = 0; i < ni; i++) {
            if (hole && i == ni - 1) continue;
            if (!(every_item && u == 0) && rk_test_uniform(&s) >= dens) continue;
            t->user[t->n] = u;
            t->item[t->n] = i;
            t->rating[t->n] = ones ? 1.0f : (float)(0.5 * (double)(1 + rk_test_rand(&s) % 10));
            t->n++;
        }
}

/* The data of rkt_data, its model, the transformed model of o and the
 * engine options of its lists.  @return 0 (nothing allocated) when the
 * draw made no rating. */
static inline int rkt_setup(int nu, int ni, double dens, int ones, int every, int hole, const rk_rankw_opts *o,
                            unsigned long long seed, rk_triples *t, rk_model *m, rk_rankw_model *tm, rk_knn_opts *ko)
{
    rk_error err;
    rkt_data(t, nu, ni, dens, ones, every, hole, seed);
    if (t->n == 0 || rk_model_build(m, t, nu, ni, 0, 0, 0, 0, &err) != RK_OK) {
        rk_triples_free(t);
        return 0;
    }
    CU_ASSERT_FATAL(rk_rankw_build(m, o, tm, &err) == RK_OK);
    rk_knn_opts base;
    rk_knn_opts_default(&base);
    rk_rankw_knn_opts(o, tm, &base, ko);
    return 1;
}

/* The configurations the tests run: every similarity, weighting and value
 * kind, asymmetric α, a denominator term, β, locality and normalisation. */
static inline int rkt_configs(rk_rankw_opts *out, int cap)
{
    int n = 0;
    rk_rankw_opts o;
    static const double rp_ab[][2] = {{0.5, 0.0}, {0.75, 0.3}, {1.0, 0.7}, {1.3, 1.0}};
    for (int a = 0; a < 4 && n < cap; a++) {
        rk_rankw_opts_default(&o);
        o.sim = RK_METRIC_RP3BETA;
        o.alpha = rp_ab[a][0];
        o.beta = rp_ab[a][1];
        o.k = 1 + a * 3;
        o.normalize = a % 2;
        o.q = a == 2 ? 2.0 : 1.0;
        out[n++] = o;
    }
    for (int w = 0; w < 3; w++)
        for (int v = 0; v < 2; v++)
            for (int a = 0; a < 2 && n < cap; a++) {
                rk_rankw_opts_default(&o);
                o.sim = RK_METRIC_WEIGHTED_COSINE;
                o.weighting = (rk_rankw_weighting)w;
                o.ratings = v;
                o.alpha = a ? 0.8 : 0.5;
                o.shrink = a ? 3.0 : 0.0;
                o.k = 2 + 3 * a + w;
                o.normalize = (w + v) % 2;
                o.q = a ? 0.5 : 1.0;
                if (w == 2 && v == 1) { o.bm25_k1 = 2.0; o.bm25_b = 0.3; }
                out[n++] = o;
            }
    return n;
}

#endif
