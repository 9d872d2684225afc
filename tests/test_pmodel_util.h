/* test_pmodel_util.h — ratings for the tests of engine/rk_pmodel.h (CPU and GPU). */
#ifndef RK_TEST_PMODEL_UTIL_H
#define RK_TEST_PMODEL_UTIL_H

#include "rk_model.h"
#include "test_util.h"

/* Ratings of nu users and ni items, each pair rated with probability dens
 * (and every user and item once at least), on a half-star grid or (grid 0)
 * real values in [1, 5]; the model with its baselines. */
static inline void pmodel_make_model(rk_model *m, int nu, int ni, double dens, int grid, unsigned long long seed)
{
    rk_triples t;
    CU_ASSERT_FATAL(rk_triples_alloc(&t, (int64_t)nu * ni, 0, NULL) == RK_OK);
    int64_t n = 0;
    unsigned long long s = seed;
    for (int u = 0; u < nu; u++)
        for (int i = 0; i < ni; i++) {
            if (i != u % ni && u != i % nu && rk_test_uniform(&s) >= dens) continue;
            t.user[n] = u;
            t.item[n] = i;
            t.rating[n] = grid ? (float)(0.5 * (double)(1 + rk_test_rand(&s) % 10))
                               : (float)(1.0 + 4.0 * rk_test_uniform(&s));
            n++;
        }
    t.n = n;
    rk_error err;
    CU_ASSERT_FATAL(rk_model_build(m, &t, nu, ni, 0, 0, 0, 1, &err) == RK_OK);
    rk_triples_free(&t);
}

#endif
