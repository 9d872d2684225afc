/* bench/grid_scale.c — the grid-scale check (rk_knn_grid_scale, which the CPU
 * engine's set-up and the GPU engine's upload run over every rating) against
 * the version it replaced (a whole pass per scale tried, libm's nearbyint per
 * value), on the ratings of FILE, 5 times each after one untimed call.
 *   bench/grid_scale FILE */
#include "rk_knn.h"
#include "rk_load.h"
#include "rk_model.h"
#include "rk_omp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static double old_scale(const rk_model *m)
{
    static const double scales[] = {1, 2, 4, 5, 10, 20, 100};
    const rk_csr *U = &m->by_user;
    for (size_t t = 0; t < sizeof scales / sizeof scales[0]; t++) {
        double s = scales[t], qmax = 0.0;
        int ok = 1;
#pragma omp parallel for reduction(&& : ok) reduction(max : qmax)
        for (int64_t p = 0; p < U->nnz; p++) {
            double q = (double)U->val[p] * s;
            if (q != nearbyint(q)) ok = 0;
            if (fabs(q) > qmax) qmax = fabs(q);
        }
        if (ok) return s;
    }
    return 0.0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s FILE\n", argv[0]);
        return 2;
    }
    rk_load_opts lo;
    rk_load_opts_default(&lo);
    rk_dataset d;
    rk_error err;
    const char *path = argv[1];
    if (rk_load_dataset(&path, 1, NULL, &lo, &d, &err) != RK_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    rk_model m;
    if (rk_model_build(&m, &d.train, rk_ids_count(d.users), rk_ids_count(d.items), 0, 0, 0, 1, &err) != RK_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    double s_new = rk_knn_grid_scale(&m, NULL), s_old = old_scale(&m);
    double t_new[5], t_old[5];
    for (int r = 0; r < 5; r++) {
        double t0 = rk_omp_wtime();
        s_new = rk_knn_grid_scale(&m, NULL);
        double t1 = rk_omp_wtime();
        s_old = old_scale(&m);
        double t2 = rk_omp_wtime();
        t_new[r] = t1 - t0;
        t_old[r] = t2 - t1;
    }
    printf("%lld ratings, %d threads: scale %g (old %g)\n", (long long)m.by_user.nnz, rk_omp_max_threads(), s_new,
           s_old);
    for (int r = 0; r < 5; r++) printf("  now %.2f ms   before %.2f ms\n", 1e3 * t_new[r], 1e3 * t_old[r]);
    rk_model_free(&m);
    rk_dataset_free(&d);
    return s_new == s_old ? 0 : 1;
}
