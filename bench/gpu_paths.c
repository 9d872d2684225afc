/* gpu_paths — time the GPU engine's alternative paths on one rating file.
 *   bench/gpu_paths RATINGS [METRIC...]   the two ways of filling a tile that
 *       holds every item: each pair summed once (symmetric, the default) and
 *       every row in full, for each metric.  Its measurements made msd and
 *       euclidean keep full rows: for them both lines now time the same path.
 *   bench/gpu_paths RATINGS transpose     the item-major matrix built on the
 *       device (cusparseCsr2cscEx2, the default) against uploading the host's.
 * Lists only (k = 20), three runs each, the best run printed.  Benchmark
 * tool, not a test. */
#include "rk_gpu.h"
#include "rk_load.h"
#include "rk_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s RATINGS [METRIC...]\n", argv[0]);
        return 2;
    }
    char why[256];
    if (!rk_gpu_available(why, sizeof why)) {
        fprintf(stderr, "gpu_paths: %s\n", why);
        return 77;
    }
    rk_error err;
    rk_dataset ds;
    rk_load_opts lo;
    rk_load_opts_default(&lo);
    const char *in[1] = {argv[1]};
    if (rk_load_dataset(in, 1, NULL, &lo, &ds, &err) != RK_OK ||
        rk_triples_dedupe(&ds.train, rk_ids_count(ds.users), rk_ids_count(ds.items), RK_DUP_LAST, NULL, &err) != RK_OK) {
        fprintf(stderr, "gpu_paths: %s\n", err.msg);
        return 3;
    }
    rk_model m;
    if (rk_model_build(&m, &ds.train, rk_ids_count(ds.users), rk_ids_count(ds.items), 0, 0, 0, 1, &err) != RK_OK) {
        fprintf(stderr, "gpu_paths: %s\n", err.msg);
        return 3;
    }
    if (argc == 3 && strcmp(argv[2], "transpose") == 0) {
        rk_knn_opts o;
        rk_knn_opts_default(&o);
        rk_lists l;
        if (rk_lists_alloc(&l, m.by_item.n_rows, o.k, &err) != RK_OK) return 5;
        printf("%-22s %9s  %s\n", "item-major matrix", "upload s", "set-up detail");
        for (int host = 0; host < 2; host++) {
            rk_gpu_opts g = {0};
            g.host_transpose = host;
            rk_knn_stats best, st;
            memset(&best, 0, sizeof best);
            for (int rep = 0; rep < 3; rep++) {
                if (rk_gpu_knn(&m, &o, &g, &l, NULL, NULL, NULL, &st, &err) != RK_OK) {
                    fprintf(stderr, "gpu_paths: %s\n", err.msg);
                    return 5;
                }
                if (rep == 0 || st.upload_s < best.upload_s) best = st;
            }
            printf("%-22s %9.4f  %s\n", host ? "uploaded from the host" : "transposed on device", best.upload_s,
                   best.detail);
        }
        rk_lists_free(&l);
        rk_model_free(&m);
        rk_dataset_free(&ds);
        return 0;
    }
    static const char *all[] = {"pearson", "pearson-baseline", "cosine", "msd", "euclidean"};
    const char *const *names = argc > 2 ? (const char *const *)argv + 2 : all;
    int n_names = argc > 2 ? argc - 2 : 5;
    printf("%-17s %-10s %9s %9s %9s  %s\n", "metric", "tile", "sim s", "select s", "engine s", "pair updates/s");
    for (int a = 0; a < n_names; a++) {
        rk_knn_opts o;
        rk_knn_opts_default(&o);
        if (rk_metric_parse(names[a], &o.sim.metric) != RK_OK) {
            fprintf(stderr, "gpu_paths: unknown metric %s\n", names[a]);
            return 2;
        }
        o.sim.shrinkage = rk_sim_default_shrinkage(o.sim.metric);
        rk_lists l;
        if (rk_lists_alloc(&l, m.by_item.n_rows, o.k, &err) != RK_OK) return 5;
        for (int full = 0; full < 2; full++) {
            rk_gpu_opts g = {0};
            g.full_rows = full;
            rk_knn_stats best, st;
            memset(&best, 0, sizeof best);
            for (int rep = 0; rep < 3; rep++) {
                if (rk_gpu_knn(&m, &o, &g, &l, NULL, NULL, NULL, &st, &err) != RK_OK) {
                    fprintf(stderr, "gpu_paths: %s\n", err.msg);
                    return 5;
                }
                if (rep == 0 || st.sim_s < best.sim_s) best = st;
            }
            printf("%-17s %-10s %9.4f %9.4f %9.4f  %.3g  [%s]\n", names[a], full ? "full rows" : "symmetric",
                   best.sim_s, best.select_s, best.wall_s, (double)best.pair_updates / best.sim_s, best.path);
        }
        rk_lists_free(&l);
    }
    rk_model_free(&m);
    rk_dataset_free(&ds);
    return 0;
}
