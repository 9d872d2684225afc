/* gpu_paths — time the GPU engine's alternative paths on one rating file.
 *   bench/gpu_paths RATINGS [METRIC...]   the two ways of filling a tile that
 *       holds every item: each pair summed once (symmetric, the default) and
 *       every row in full, for each metric.  Its measurements made msd and
 *       euclidean keep full rows: for them both lines now time the same path.
 *   bench/gpu_paths RATINGS transpose     the item-major matrix built on the
 *       device (cusparseCsr2cscEx2, the default) against uploading the host's.
 *   bench/gpu_paths RATINGS sims [METRIC...]   the two routes of the
 *       full-vector metrics' similarity rows (default: all three): k_sims and
 *       cuSPARSE SpGEMM, with the lists each gives compared.
 * Lists only (k = 20), three runs each, the best run printed.  Benchmark
 * tool, not a test. */
#include "rk_gpu.h"
#include "bench_model.h"
#include "rk_load.h"
#include "rk_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* k_sims against SpGEMM for the full-vector metrics: best of three runs of
 * each, and how many list entries differ between them (ties apart). */
static int sims_routes(const rk_model *m, int n_names, const char *const *names)
{
    static const char *all[] = {"cosine-full", "euclidean-full", "jaccard"};
    if (n_names == 0) {
        names = all;
        n_names = 3;
    }
    rk_error err;
    printf("%-15s %-7s %9s %9s %9s  %s\n", "metric", "route", "sim s", "select s", "engine s", "path; detail");
    for (int a = 0; a < n_names; a++) {
        rk_knn_opts o;
        rk_knn_opts_default(&o);
        if (rk_metric_parse(names[a], &o.sim.metric) != RK_OK) {
            fprintf(stderr, "gpu_paths: unknown metric %s\n", names[a]);
            return 2;
        }
        rk_lists l[2];
        for (int r = 0; r < 2; r++) {
            if (rk_lists_alloc(&l[r], m->by_item.n_rows, o.k, &err) != RK_OK) return 5;
            rk_gpu_opts g = {0};
            g.sims_route = r == 0 ? RK_GPU_SIMS_KERNEL : RK_GPU_SIMS_SPGEMM;
            rk_knn_stats best, st;
            memset(&best, 0, sizeof best);
            for (int rep = 0; rep < 3; rep++) {
                if (rk_gpu_knn(m, &o, &g, &l[r], NULL, NULL, NULL, &st, &err) != RK_OK) {
                    fprintf(stderr, "gpu_paths: %s\n", err.msg);
                    return 5;
                }
                if (rep == 0 || st.sim_s < best.sim_s) best = st;
            }
            const char *sp = strstr(best.detail, "spgemm:");
            printf("%-15s %-7s %9.4f %9.4f %9.4f  %s%s%s\n", names[a], rk_gpu_sims_route_name(g.sims_route),
                   best.sim_s, best.select_s, best.wall_s, best.path, sp != NULL ? "; " : "", sp != NULL ? sp : "");
        }
        int64_t differ = 0;
        for (int32_t i = 0; i < m->by_item.n_rows; i++) {
            differ += l[0].len[i] != l[1].len[i];
            for (int32_t r = 0; r < l[0].len[i] && r < l[1].len[i]; r++) {
                const size_t at = (size_t)i * (size_t)o.k + (size_t)r;
                differ += l[0].nbr[at] != l[1].nbr[at] && l[0].sim[at] != l[1].sim[at];
            }
        }
        printf("%-15s lists: %lld entries differ between the routes (ties apart)\n", names[a], (long long)differ);
        rk_lists_free(&l[0]);
        rk_lists_free(&l[1]);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s RATINGS [METRIC... | transpose | sims [METRIC...]]\n", argv[0]);
        return 2;
    }
    char why[256];
    if (!rk_gpu_available(why, sizeof why)) {
        fprintf(stderr, "gpu_paths: %s\n", why);
        return 77;
    }
    rk_dataset ds;
    rk_model m;
    if (bench_load_model("gpu_paths", argv[1], &ds, &m) != 0) return 3;
    rk_error err;
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
    if (argc >= 3 && strcmp(argv[2], "sims") == 0) {
        int rc = sims_routes(&m, argc - 3, (const char *const *)argv + 3);
        rk_model_free(&m);
        rk_dataset_free(&ds);
        return rc;
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
