/* gpu_queries — time the GPU engine's query routes, list lengths and the
 * full-vector metrics on one rating file (loaded once).  Benchmark tool, not
 * a test.
 *   bench/gpu_queries RATINGS subset [Q...]   lists of Q random items (seed 1)
 *       by one query per block and one per kernel, beside the all-items run;
 *       each row: Q, the subset's share of the work (pair updates), and per
 *       route the engine's compute time (similarity + selection) and wall
 *       time (with set-up and upload), best of 3; "ideal" is the all-items
 *       run in full rows (the subsets' rows are full rows) times the share.
 *   bench/gpu_queries RATINGS k [K...]        lists of length K (k above the
 *       GPU selection's limit: host selection), and K = 2000 both ways.
 *   bench/gpu_queries RATINGS metrics [M...]  every metric (default: all) on
 *       the GPU (sims route of rk_gpu_opts, RK_GPU_SIMS env: kernel|spgemm
 *       when built with it) and the CPU engine's similarity + selection. */
#include "rk_gpu.h"
#include "bench_model.h"
#include "rk_load.h"
#include "rk_model.h"
#include "rk_omp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct timing {
    double compute, wall;
    char path[160];
} timing;

static int time_gpu(const rk_model *m, const rk_knn_opts *o, const rk_gpu_opts *g, int reps, timing *best)
{
    rk_error err;
    rk_lists l;
    if (rk_lists_alloc(&l, m->by_item.n_rows, o->k, &err) != RK_OK) return -1;
    best->compute = best->wall = 1e300;
    for (int r = 0; r < reps; r++) {
        rk_knn_stats st;
        memset(l.len, 0, (size_t)m->by_item.n_rows * sizeof *l.len);
        if (rk_gpu_knn(m, o, g, &l, NULL, NULL, NULL, &st, &err) != RK_OK) {
            fprintf(stderr, "gpu_queries: %s\n", err.msg);
            rk_lists_free(&l);
            return -1;
        }
        if (st.sim_s + st.select_s < best->compute) best->compute = st.sim_s + st.select_s;
        if (st.wall_s < best->wall) best->wall = st.wall_s;
        snprintf(best->path, sizeof best->path, "%s", st.path);
    }
    rk_lists_free(&l);
    return 0;
}

static int cmp_i32(const void *a, const void *b)
{
    return (*(const int32_t *)a > *(const int32_t *)b) - (*(const int32_t *)a < *(const int32_t *)b);
}

static int run_subset(const rk_model *m, int argc, char **argv)
{
    static const char *def[] = {"1", "2", "4", "8", "16", "32", "64", "128", "256", "384", "512", "768", "1024"};
    const int n = argc > 3 ? argc - 3 : (int)(sizeof def / sizeof def[0]);
    const char *const *qs = argc > 3 ? (const char *const *)argv + 3 : def;
    const int32_t ni = m->by_item.n_rows;
    rk_knn_opts o;
    rk_knn_opts_default(&o);
    rk_gpu_opts g = {0};
    timing all, sym;
    g.query_route = RK_GPU_QUERY_BLOCK;
    if (time_gpu(m, &o, &g, 3, &sym) != 0) return 5;
    g.full_rows = 1; /* the subsets' rows are full rows: the same work per pair */
    if (time_gpu(m, &o, &g, 3, &all) != 0) return 5;
    g.full_rows = 0;
    int32_t *order = malloc(sizeof(int32_t) * (size_t)ni), *perm = malloc(sizeof(int32_t) * (size_t)ni);
    int32_t cnt = 0;
    const int64_t w_all = rk_knn_subset_order(m, &o, order, NULL, &cnt);
    unsigned long long s = 1;
    for (int32_t i = 0; i < ni; i++) perm[i] = i;
    for (int32_t i = ni - 1; i > 0; i--) { /* splitmix64 shuffle */
        unsigned long long z = (s += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
        int32_t j = (int32_t)(z % (unsigned long long)(i + 1)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    printf("all %d items: compute %.6f s, wall %.4f s (%s)\n", ni, sym.compute, sym.wall, sym.path);
    printf("all %d items in full rows: compute %.6f s, wall %.4f s (%s); ideal = this x work\n", ni, all.compute,
           all.wall, all.path);
    printf("%6s %10s %12s %12s %12s %12s %10s %10s\n", "Q", "work", "block comp", "kernel comp", "block wall",
           "kernel wall", "ideal", "best/ideal");
    for (int t = 0; t < n; t++) {
        int32_t q = (int32_t)atoi(qs[t]);
        if (q < 1 || q > ni) continue;
        int32_t *rows = malloc(sizeof(int32_t) * (size_t)q);
        memcpy(rows, perm, sizeof(int32_t) * (size_t)q);
        qsort(rows, (size_t)q, sizeof *rows, cmp_i32);
        o.rows = rows;
        o.n_rows = q;
        const double w = (double)rk_knn_subset_order(m, &o, order, NULL, &cnt) / (double)w_all;
        timing b, k;
        g.query_route = RK_GPU_QUERY_BLOCK;
        if (time_gpu(m, &o, &g, 3, &b) != 0) return 5;
        g.query_route = RK_GPU_QUERY_KERNEL;
        if (time_gpu(m, &o, &g, 3, &k) != 0) return 5;
        const double ideal = all.compute * w, best = b.compute < k.compute ? b.compute : k.compute;
        printf("%6d %10.3g %12.6f %12.6f %12.4f %12.4f %10.3g %10.1f\n", q, w, b.compute, k.compute, b.wall, k.wall,
               ideal, best / ideal);
        free(rows);
    }
    free(order);
    free(perm);
    return 0;
}

static int run_k(const rk_model *m, int argc, char **argv)
{
    static const char *def[] = {"20", "200", "2000", "2100"};
    const int n = argc > 3 ? argc - 3 : 4;
    const char *const *ks = argc > 3 ? (const char *const *)argv + 3 : def;
    printf("%6s %-6s %12s %10s  %s\n", "k", "select", "compute s", "wall s", "path");
    for (int t = 0; t < n; t++) {
        rk_knn_opts o;
        rk_knn_opts_default(&o);
        o.k = atoi(ks[t]);
        for (int host = 0; host < 2; host++) {
            if (!host && o.k > RK_GPU_SELECT_MAX_K) continue;
            if (host && o.k <= RK_GPU_SELECT_MAX_K && o.k != 2000) continue;
            rk_gpu_opts g = {0};
            g.host_select = host;
            timing tm;
            if (time_gpu(m, &o, &g, 3, &tm) != 0) return 5;
            printf("%6d %-6s %12.4f %10.4f  %s\n", o.k, host ? "host" : "gpu", tm.compute, tm.wall, tm.path);
        }
    }
    return 0;
}

static int run_metrics(const rk_model *m, int argc, char **argv)
{
    static const char *def[] = {"pearson", "cosine", "msd", "cosine-full", "euclidean-full", "jaccard"};
    const int n = argc > 3 ? argc - 3 : 6;
    const char *const *ms = argc > 3 ? (const char *const *)argv + 3 : def;
    printf("%-16s %12s %10s %12s  %s\n", "metric", "gpu comp s", "gpu wall s", "cpu s", "gpu path");
    for (int t = 0; t < n; t++) {
        rk_knn_opts o;
        rk_knn_opts_default(&o);
        if (rk_metric_parse(ms[t], &o.sim.metric) != RK_OK) continue;
        rk_gpu_opts g = {0};
        timing tm;
        if (time_gpu(m, &o, &g, 3, &tm) != 0) return 5;
        rk_lists l;
        rk_error err;
        rk_knn_stats st;
        double cpu = -1.0;
        if (getenv("GPU_QUERIES_NO_CPU") == NULL && rk_lists_alloc(&l, m->by_item.n_rows, o.k, &err) == RK_OK) {
            if (rk_knn_cpu(m, &o, &l, NULL, &st, &err) == RK_OK) cpu = st.wall_s;
            rk_lists_free(&l);
        }
        printf("%-16s %12.4f %10.4f %12.4f  %s\n", ms[t], tm.compute, tm.wall, cpu, tm.path);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s RATINGS subset|k|metrics [ARG...]\n", argv[0]);
        return 2;
    }
    char why[256];
    if (!rk_gpu_available(why, sizeof why)) {
        fprintf(stderr, "gpu_queries: %s\n", why);
        return 77;
    }
    rk_dataset ds;
    rk_model m;
    if (bench_load_model("gpu_queries", argv[1], &ds, &m) != 0) return 3;
    printf("%s: %d users, %d items, %lld ratings; %s\n", argv[1], m.by_user.n_rows, m.by_item.n_rows,
           (long long)m.by_user.nnz, why);
    int rc = 2;
    if (strcmp(argv[2], "subset") == 0) rc = run_subset(&m, argc, argv);
    else if (strcmp(argv[2], "k") == 0) rc = run_k(&m, argc, argv);
    else if (strcmp(argv[2], "metrics") == 0) rc = run_metrics(&m, argc, argv);
    else fprintf(stderr, "gpu_queries: unknown mode '%s'\n", argv[2]);
    rk_model_free(&m);
    rk_dataset_free(&ds);
    return rc;
}
