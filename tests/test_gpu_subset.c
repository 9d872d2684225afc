/* The GPU engine's subsets (both query routes), its host selection (k above
 * the GPU selection's limit) and the full-vector metrics against the CPU
 * engine, which defines the results.  Exits 77 (skipped) when no GPU is
 * usable. */
#include "test_gpu_main.h"
#include "rk_gpu.h"
#include "test_subset_util.h"

/* every metric of the metric table */
static rk_metric all_metrics[RK_METRIC_COUNT];
#define N_METRICS ((size_t)rk_test_metrics(-1, all_metrics))

/* The CPU's whole run against the GPU's run of n_rows random items (n_rows
 * = ni: every item, rows = NULL) with the given route and selection. */
static void gpu_vs_cpu(int nu, int ni, double density, int real, rk_metric metric, int k, int n_rows,
                       rk_gpu_query_route route, int host_select, int tile, unsigned long long seed)
{
    rk_model m;
    rk_error err;
    rk_ts_model(&m, nu, ni, density, real, 1, seed);
    rk_knn_opts o;
    rk_knn_opts_default(&o);
    o.sim.metric = metric;
    o.sim.shrinkage = metric == RK_METRIC_PEARSON_BASELINE ? 100.0 : 0.0;
    o.k = k;
    rk_lists full, got;
    CU_ASSERT_FATAL(rk_lists_alloc(&full, ni, k, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_lists_alloc(&got, ni, k, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_knn_cpu(&m, &o, &full, NULL, NULL, &err) == RK_OK);
    int32_t *rows = rk_ts_subset(ni, n_rows, seed ^ 0x5eedULL);
    if (n_rows < ni) {
        o.rows = rows;
        o.n_rows = n_rows;
    }
    rk_gpu_opts g = {0};
    g.query_route = route;
    g.host_select = host_select;
    g.tile_items = tile;
    rk_knn_stats st;
    rk_status s = rk_gpu_knn(&m, &o, &g, &got, NULL, NULL, NULL, &st, &err);
    if (s != RK_OK) fprintf(stderr, "rk_gpu_knn: %s\n", err.msg);
    CU_ASSERT_FATAL(s == RK_OK);
    const int one = route == RK_GPU_QUERY_KERNEL ||
                    (route == RK_GPU_QUERY_AUTO && n_rows < ni && n_rows < RK_GPU_QUERY_CROSSOVER);
    CU_ASSERT_EQUAL(strstr(st.path, "one query per kernel") != NULL, one && n_rows > 0);
    CU_ASSERT_EQUAL(strstr(st.path, "host selection") != NULL, host_select || k > RK_GPU_SELECT_MAX_K);
    /* on the grid the sums are exact integers: the same floats; real values
     * are summed in another order */
    const float tol = real == 1 || metric == RK_METRIC_PEARSON_BASELINE ? 1e-6f : 0.0f;
    if (real == 2 && rk_metric_is_full(metric)) CU_ASSERT(strstr(st.path, "int64 dot") != NULL);
    const int bad = rk_ts_compare_subset(&full, &got, rows, n_rows, tol);
    if (bad) fprintf(stderr, "%s, %d of %d rows, route %s, host %d: %d mismatches\n", rk_metric_name(metric), n_rows, ni,
                     rk_gpu_query_route_name(route), host_select, bad);
    CU_ASSERT_EQUAL(bad, 0);
    free(rows);
    rk_lists_free(&full);
    rk_lists_free(&got);
    rk_model_free(&m);
}

static void test_routes(void)
{
    static const rk_gpu_query_route routes[] = {RK_GPU_QUERY_AUTO, RK_GPU_QUERY_BLOCK, RK_GPU_QUERY_KERNEL};
    for (size_t x = 0; x < N_METRICS; x++)
        for (int r = 0; r < 3; r++) {
            gpu_vs_cpu(150, 120, 0.1, 0, all_metrics[x], 10, 1, routes[r], 0, 0, 10 + x);
            gpu_vs_cpu(150, 120, 0.1, 0, all_metrics[x], 10, 9, routes[r], 0, 4, 20 + x); /* 3 tiles */
            gpu_vs_cpu(100, 90, 0.15, 1, all_metrics[x], 7, 80, routes[r], 0, 0, 30 + x);
        }
    /* above the crossover, auto takes blocks; every item by one per kernel */
    gpu_vs_cpu(200, 3 * RK_GPU_QUERY_CROSSOVER, 0.05, 0, RK_METRIC_PEARSON, 20, 2 * RK_GPU_QUERY_CROSSOVER,
               RK_GPU_QUERY_AUTO, 0, 0, 40);
    gpu_vs_cpu(120, 100, 0.1, 0, RK_METRIC_COSINE, 20, 100, RK_GPU_QUERY_KERNEL, 0, 0, 41);
    gpu_vs_cpu(40, 1, 0.5, 0, RK_METRIC_MSD, 5, 1, RK_GPU_QUERY_KERNEL, 0, 0, 42); /* one item */
    gpu_vs_cpu(40, 30, 0.2, 0, RK_METRIC_JACCARD, 5, 0, RK_GPU_QUERY_BLOCK, 0, 0, 43); /* an empty subset */
}

/* RK_GPU_TEST_QUICK: a few small runs of every path for the sanitizer tools */
static void test_quick(void)
{
    static const rk_gpu_query_route routes[] = {RK_GPU_QUERY_BLOCK, RK_GPU_QUERY_KERNEL};
    for (int r = 0; r < 2; r++) {
        gpu_vs_cpu(60, 50, 0.15, 0, RK_METRIC_PEARSON, 5, 4, routes[r], 0, 0, 1);
        gpu_vs_cpu(60, 50, 0.15, 1, RK_METRIC_JACCARD, 5, 6, routes[r], 0, 3, 2);
    }
    gpu_vs_cpu(60, 50, 0.15, 0, RK_METRIC_COSINE_FULL, 5, 50, RK_GPU_QUERY_AUTO, 1, 0, 3);
    gpu_vs_cpu(30, 40, 0.2, 0, RK_METRIC_EUCLIDEAN_FULL, 5, 0, RK_GPU_QUERY_BLOCK, 0, 0, 4);
    /* the 64-bit sums in 32-bit words: blocks, and one query per kernel */
    gpu_vs_cpu(60, 50, 0.2, 2, RK_METRIC_COSINE_FULL, 5, 50, RK_GPU_QUERY_BLOCK, 0, 0, 5);
    gpu_vs_cpu(60, 50, 0.2, 2, RK_METRIC_RP3BETA, 5, 4, RK_GPU_QUERY_KERNEL, 0, 0, 6);
}

static void test_full_metrics_whole_run(void)
{
    for (size_t x = 5; x < N_METRICS; x++) {
        gpu_vs_cpu(300, 200, 0.08, 0, all_metrics[x], 20, 200, RK_GPU_QUERY_AUTO, 0, 0, 50 + x);
        gpu_vs_cpu(200, 150, 0.1, 1, all_metrics[x], 20, 150, RK_GPU_QUERY_AUTO, 0, 16, 60 + x);
        gpu_vs_cpu(300, 12000, 0.004, 0, all_metrics[x], 30, 12000, RK_GPU_QUERY_AUTO, 0, 0, 70 + x); /* chunks */
    }
}

/* Large integers (±2^22): the full-vector metrics' sums in two 32-bit words
 * with carries, by blocks and by one query per kernel, whole runs and tiles,
 * must give the CPU's double sums bit for bit. */
static void test_wide_integers(void)
{
    static const rk_gpu_query_route routes[] = {RK_GPU_QUERY_BLOCK, RK_GPU_QUERY_KERNEL};
    for (size_t x = 0; x < N_METRICS; x++) {
        if (!rk_metric_is_full(all_metrics[x])) continue;
        for (int r = 0; r < 2; r++) {
            gpu_vs_cpu(150, 120, 0.2, 2, all_metrics[x], 10, 7, routes[r], 0, 0, 90 + x);
            gpu_vs_cpu(120, 100, 0.3, 2, all_metrics[x], 8, 100, routes[r], 0, 9, 100 + x);
        }
        gpu_vs_cpu(300, 12000, 0.004, 2, all_metrics[x], 30, 12000, RK_GPU_QUERY_AUTO, 0, 0, 110 + x); /* chunks */
    }
}

static void test_host_selection(void)
{
    for (size_t x = 0; x < N_METRICS; x++) gpu_vs_cpu(120, 100, 0.12, 0, all_metrics[x], 15, 100, RK_GPU_QUERY_AUTO, 1, 0, 80 + x);
    gpu_vs_cpu(120, 100, 0.12, 0, RK_METRIC_PEARSON, 15, 30, RK_GPU_QUERY_BLOCK, 1, 7, 90); /* subset, tiles */
    /* k above the GPU selection's limit: lists of up to 2100 of 2600 items */
    gpu_vs_cpu(60, 2600, 0.3, 0, RK_METRIC_COSINE, RK_GPU_SELECT_MAX_K + 52, 2600, RK_GPU_QUERY_AUTO, 0, 0, 91);
    gpu_vs_cpu(60, 2600, 0.3, 0, RK_METRIC_JACCARD, RK_GPU_SELECT_MAX_K + 52, 10, RK_GPU_QUERY_AUTO, 0, 0, 92);
}

/* k above the limit with prediction queries: the predictions read the
 * similarity rows, not the lists, and match the CPU's */
static void test_large_k_predictions(void)
{
    rk_model m;
    rk_error err;
    const int nu = 50, ni = 2300, k = RK_GPU_SELECT_MAX_K + 10;
    rk_ts_model(&m, nu, ni, 0.3, 0, 1, 777);
    rk_knn_opts o;
    rk_knn_opts_default(&o);
    o.k = k;
    rk_lists lc, lg;
    CU_ASSERT_FATAL(rk_lists_alloc(&lc, ni, k, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_lists_alloc(&lg, ni, k, &err) == RK_OK);
    enum { NQ = 500 };
    int32_t qu[NQ], qi[NQ], uc[NQ], ug[NQ];
    double pc[NQ], pg[NQ];
    unsigned long long s = 31;
    for (int a = 0; a < NQ; a++) {
        qu[a] = (int32_t)(rk_test_rand(&s) % nu);
        qi[a] = (int32_t)(rk_test_rand(&s) % ni);
    }
    rk_queries qc = {NQ, qu, qi, pc, uc, NULL, NULL}, qg = {NQ, qu, qi, pg, ug, NULL, NULL};
    rk_gpu_opts g = {0};
    CU_ASSERT_FATAL(rk_knn_cpu(&m, &o, &lc, &qc, NULL, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_gpu_knn(&m, &o, &g, &lg, &qg, NULL, NULL, NULL, &err) == RK_OK);
    int bad = 0;
    for (int a = 0; a < NQ; a++) bad += !(fabs(pc[a] - pg[a]) <= 1e-9) || uc[a] != ug[a];
    CU_ASSERT_EQUAL(bad, 0);
    int32_t *rows = rk_ts_subset(ni, ni, 1);
    CU_ASSERT_EQUAL(rk_ts_compare_subset(&lc, &lg, rows, ni, 0.0f), 0);
    free(rows);
    rk_lists_free(&lc);
    rk_lists_free(&lg);
    rk_model_free(&m);
}

int main(void)
{
    static const rk_test_case quick[] = {
        {"small runs of every path", test_quick},
        {NULL, NULL},
    };
    static const rk_test_case cases[] = {
        {"subsets on both query routes", test_routes},
        {"full-vector metrics, whole runs", test_full_metrics_whole_run},
        {"full-vector metrics of large integers: 64-bit sums", test_wide_integers},
        {"host selection and k above the GPU's limit", test_host_selection},
        {"k above the limit with predictions", test_large_k_predictions},
        {NULL, NULL},
    };
    return rk_test_gpu_main("gpu-subset", cases, quick);
}
