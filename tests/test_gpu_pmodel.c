/* --predict interpolate and global on the GPU (rk_gpu_pmodel.cu, through the
 * CUDA backend: the engine's chosen neighbours, then the model stage) against
 * their CPU twin (engine/rk_pmodel.c through the CPU backend), which defines
 * the result: the same predictions bit for bit and the same neighbour
 * counts, on random shapes with fixed seeds (ratings on and off the
 * half-star grid, k from 1 to above the items, unknown users and items in
 * the queries, a one-item and a one-user edge), and the trained global model
 * a saved model keeps (biases and weights) the same bits.  Exits 77 (skipped) when no
 * GPU is usable. */
#include "test_gpu_main.h"
#include "rk_backend.h"
#include "rk_pmodel.h"
#include "test_pmodel_util.h"

#include <math.h>
#include <string.h>


static void run(const rk_backend *be, const rk_model *m, rk_predict_mode mode, int k, int64_t nq, const int32_t *qu,
                const int32_t *qi, double *pred, int32_t *used, rk_pmodel_global *keep, double *at)
{
    rk_knn_opts o;
    rk_knn_opts_default(&o);
    o.sim.metric = RK_METRIC_PEARSON_BASELINE;
    o.sim.shrinkage = 20.0;
    o.k = k;
    o.mode = mode;
    o.pm.global_epochs = 4;
    static const int32_t at_epochs[2] = {1, 3}; /* a search's checkpoints (global) */
    if (mode == RK_PREDICT_GLOBAL) {
        o.pm.epochs_at = at_epochs;
        o.pm.n_at = 2;
        o.pm.pred_at = at;
    }
    rk_lists l;
    rk_error err;
    CU_ASSERT_FATAL(rk_lists_alloc(&l, m->by_item.n_rows, o.k, &err) == RK_OK);
    rk_queries q = {nq, qu, qi, pred, used, NULL, mode == RK_PREDICT_GLOBAL ? keep : NULL};
    rk_gpu_opts g;
    memset(&g, 0, sizeof g);
    const rk_status s = be->knn(m, &o, &g, &l, &q, NULL, NULL, NULL, &err);
    if (s != RK_OK) fprintf(stderr, "%s: %s\n", be->name, err.msg);
    CU_ASSERT_FATAL(s == RK_OK);
    rk_lists_free(&l);
}

static void compare(int nu, int ni, double dens, int grid, int k, unsigned long long seed, int want_known)
{
    rk_model m;
    pmodel_make_model(&m, nu, ni, dens, grid, seed);
    const int64_t nq = 3 * (int64_t)nu + 7;
    int32_t *qu = malloc((size_t)nq * sizeof *qu), *qi = malloc((size_t)nq * sizeof *qi);
    int32_t *uc = malloc((size_t)nq * sizeof *uc), *ug = malloc((size_t)nq * sizeof *ug);
    double *pc = malloc((size_t)nq * sizeof *pc), *pg = malloc((size_t)nq * sizeof *pg);
    double *ac = calloc(2 * (size_t)nq, sizeof *ac), *ag = calloc(2 * (size_t)nq, sizeof *ag);
    unsigned long long s = seed * 31 + 1;
    for (int64_t t = 0; t < nq; t++) {
        qu[t] = (int32_t)(rk_test_rand(&s) % (unsigned)(nu + 1)) - (t % 50 == 0); /* -1 and nu: unknown */
        qi[t] = (int32_t)(rk_test_rand(&s) % (unsigned)(ni + 1));                 /* ni: unknown */
    }
    for (int mode = RK_PREDICT_INTERPOLATE; mode <= RK_PREDICT_GLOBAL; mode++) {
        rk_pmodel_global gc, gg; /* global: the trained model a saved model keeps, the CPU's bits too */
        memset(&gc, 0, sizeof gc);
        memset(&gg, 0, sizeof gg);
        run(rk_backend_get(RK_BACKEND_CPU), &m, (rk_predict_mode)mode, k, nq, qu, qi, pc, uc, &gc, ac);
        run(rk_backend_get(RK_BACKEND_CUDA), &m, (rk_predict_mode)mode, k, nq, qu, qi, pg, ug, &gg, ag);
        if (mode == RK_PREDICT_GLOBAL) {
            const size_t nw = (size_t)gc.n_items * (size_t)gc.k;
            CU_ASSERT_FATAL(gc.n_users == gg.n_users && gc.n_items == gg.n_items && gc.k == gg.k && gc.n_items == ni);
            CU_ASSERT(memcmp(gc.bu, gg.bu, (size_t)gc.n_users * sizeof *gc.bu) == 0);
            CU_ASSERT(memcmp(gc.bi, gg.bi, (size_t)gc.n_items * sizeof *gc.bi) == 0);
            CU_ASSERT(memcmp(gc.w, gg.w, nw * sizeof *gc.w) == 0 && memcmp(gc.c, gg.c, nw * sizeof *gc.c) == 0);
            CU_ASSERT(memcmp(ac, ag, 2 * (size_t)nq * sizeof *ac) == 0); /* the checkpoints' predictions */
        }
        rk_pmodel_global_free(&gc);
        rk_pmodel_global_free(&gg);
        int64_t diff = 0, known = 0;
        for (int64_t t = 0; t < nq; t++) {
            diff += memcmp(&pc[t], &pg[t], sizeof pc[t]) != 0 || uc[t] != ug[t];
            known += uc[t] > 0;
        }
        if (diff > 0)
            fprintf(stderr, "%s %dx%d k %d grid %d seed %llu: %lld of %lld differ\n",
                    rk_predict_mode_name((rk_predict_mode)mode), nu, ni, k, grid, seed, (long long)diff, (long long)nq);
        CU_ASSERT_EQUAL(diff, 0);
        CU_ASSERT(known > 0 || !want_known);
    }
    free(qu), free(qi), free(uc), free(ug), free(pc), free(pg), free(ac), free(ag);
    rk_model_free(&m);
}

static void test_random_shapes(void)
{
    compare(60, 40, 0.25, 1, 10, 1, 1);
    compare(200, 90, 0.1, 0, 20, 2, 1);
    compare(150, 30, 0.4, 1, 40, 3, 1);  /* k above the items */
    compare(500, 300, 0.03, 0, 25, 4, 1);
    compare(40, 120, 0.2, 1, 1, 5, 1);   /* one neighbour */
    compare(1200, 400, 0.02, 1, 30, 6, 1);
}

static void test_edges(void)
{
    compare(30, 1, 1.0, 1, 5, 7, 0);  /* one item: no neighbour */
    compare(1, 25, 1.0, 0, 5, 8, 0);  /* one user */
    compare(2, 2, 1.0, 1, 1, 9, 0);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"random shapes, the CPU's bits", test_random_shapes},
        {"one item, one user", test_edges},
        {NULL, NULL},
    };
    return rk_test_gpu_main("gpu_pmodel", cases, cases);
}
