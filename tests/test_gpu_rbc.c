/* The random ball cover on the GPU (rk_gpu_rbc) against its CPU twin
 * rk_rbc_cpu, which defines the result: the same lists entry for entry
 * (neighbours, float similarities, supports) and the same counts, for every
 * full-vector metric and value kind (implicit, half stars, real values off
 * the grid, ties), tails, probes from one to every ball, every item a
 * representative, k above the item count, empty items, support and
 * shrinkage, a small memory cap (few warps), and a larger catalogue.
 * Exits 77 (skipped) when no GPU is usable. */
#define RBC_TEST_GPU 1 /* rbc_recall_fixed can run rk_gpu_rbc */
#include "test_gpu_main.h"
#include "rk_gpu.h"
#include "rk_rbc.h"
#include "test_rbc_util.h"

#include <stdint.h>
#include <string.h>

static int g_runs;

static void compare(int nu, int ni, int groups, double density, rbc_val_kind vk, rk_metric metric, int k,
                    int min_support, double shrink, int32_t reps, int32_t probes, int32_t tail, size_t cap,
                    unsigned long long seed)
{
    rk_triples t;
    rk_model m;
    rk_error err;
    rbc_make_data(&t, nu, ni, groups, density, vk, seed);
    CU_ASSERT_FATAL(rk_model_build(&m, &t, nu, ni, 0, 0, 0, 0, &err) == RK_OK);
    rk_triples_free(&t);
    rk_knn_opts o;
    rk_knn_opts_default(&o);
    o.sim.metric = metric;
    o.k = k;
    o.sim.min_support = min_support;
    o.sim.shrinkage = shrink;
    rk_rbc_opts r;
    rk_rbc_opts_default(&r);
    r.reps = reps;
    r.probes = probes;
    r.tail = tail;
    r.seed = seed;
    rk_gpu_opts g;
    memset(&g, 0, sizeof g);
    g.memory_cap = cap;
    rk_lists lc, lg;
    CU_ASSERT_FATAL(rk_lists_alloc(&lc, ni, k, NULL) == RK_OK);
    CU_ASSERT_FATAL(rk_lists_alloc(&lg, ni, k, NULL) == RK_OK);
    for (int32_t i = 0; i < ni; i++) lg.len[i] = -7; /* poison: every length must be written */
    rk_rbc_stats sc, sg;
    CU_ASSERT_FATAL(rk_rbc_cpu(&m, &o, &r, &lc, &sc, NULL) == RK_OK);
    rk_status s = rk_gpu_rbc(&m, &o, &r, &g, &lg, &sg, &err);
    if (s != RK_OK) fprintf(stderr, "rk_gpu_rbc: %s\n", err.msg);
    CU_ASSERT_FATAL(s == RK_OK);
    char what[160];
    snprintf(what, sizeof what, "%s %dx%d R %d P %d T %d seed %llu", rk_metric_name(metric), nu, ni, reps, probes,
             tail, seed);
    CU_ASSERT(rbc_lists_equal(&lg, &lc, what));
    CU_ASSERT_EQUAL(sg.reps, sc.reps);
    CU_ASSERT_EQUAL(sg.probes, sc.probes);
    CU_ASSERT_EQUAL(sg.tail, sc.tail);
    CU_ASSERT_EQUAL(sg.queries, sc.queries);
    CU_ASSERT_EQUAL(sg.tail_items, sc.tail_items);
    CU_ASSERT_EQUAL(sg.orphans, sc.orphans);
    CU_ASSERT_EQUAL(sg.largest_ball, sc.largest_ball);
    CU_ASSERT_EQUAL(sg.rep_pairs, sc.rep_pairs);
    CU_ASSERT_EQUAL(sg.ball_pairs, sc.ball_pairs);
    CU_ASSERT_EQUAL(sg.rater_pairs, sc.rater_pairs);
    CU_ASSERT_EQUAL(sg.pair_evals, sc.pair_evals);
    CU_ASSERT_EQUAL(sg.brute_pairs, sc.brute_pairs);
    CU_ASSERT_EQUAL(sg.entry_reads, sc.entry_reads);
    if (sg.pair_evals != sc.pair_evals || sg.entry_reads != sc.entry_reads)
        fprintf(stderr, "%s: pairs %lld/%lld (balls %lld/%lld, raters %lld/%lld), reads %lld/%lld\n", what,
                (long long)sg.pair_evals, (long long)sc.pair_evals, (long long)sg.ball_pairs,
                (long long)sc.ball_pairs, (long long)sg.rater_pairs, (long long)sc.rater_pairs,
                (long long)sg.entry_reads, (long long)sc.entry_reads);
    g_runs++;
    rk_lists_free(&lc);
    rk_lists_free(&lg);
    rk_model_free(&m);
}

static const rk_metric full_metrics[] = {RK_METRIC_COSINE_FULL, RK_METRIC_EUCLIDEAN_FULL, RK_METRIC_JACCARD};

static void test_metrics_and_values(void)
{
    static const rbc_val_kind kinds[] = {RBC_VAL_IMPLICIT, RBC_VAL_HALF, RBC_VAL_REAL, RBC_VAL_TIES};
    g_runs = 0;
    for (int mi = 0; mi < 3; mi++)
        for (int vi = 0; vi < 4; vi++)
            for (int v = 0; v < 3; v++)
                compare(50 + 10 * v, 120, 4, 0.15, kinds[vi], full_metrics[mi], 10, v == 1 ? 2 : 1,
                        v == 2 ? 4.0 : 0.0, 0, v == 0 ? 1 : 0, v, 0,
                        700 + 31 * (unsigned long long)(mi * 12 + vi * 3 + v));
    CU_ASSERT_EQUAL(g_runs, 36);
}

/* Every ball visited (the exact lists), every item a representative, no
 * tail, probes beyond the positive ones, k above the item count. */
static void test_shapes(void)
{
    for (int mi = 0; mi < 3; mi++) {
        compare(40, 70, 3, 0.2, RBC_VAL_HALF, full_metrics[mi], 8, 1, 0.0, 5, 1000, -1, 0, 11);
        compare(40, 70, 3, 0.2, RBC_VAL_IMPLICIT, full_metrics[mi], 8, 1, 0.0, 70, 1, 0, 0, 12);
        compare(40, 70, 3, 0.2, RBC_VAL_REAL, full_metrics[mi], 8, 1, 0.0, 70, 70, 0, 0, 13);
        compare(30, 9, 2, 0.3, RBC_VAL_IMPLICIT, full_metrics[mi], 20, 1, 0.0, 0, 3, 1, 0, 14);
        compare(10, 5, 1, 0.5, RBC_VAL_TIES, full_metrics[mi], 1, 1, 0.0, 0, 0, 50, 0, 15); /* all tail */
        compare(25, 1, 1, 0.5, RBC_VAL_HALF, full_metrics[mi], 3, 1, 0.0, 0, 0, 0, 0, 16);  /* one item */
    }
}

/* A memory cap that leaves room for only a few warps of scratch. */
static void test_small_memory(void)
{
    compare(200, 600, 6, 0.05, RBC_VAL_IMPLICIT, RK_METRIC_COSINE_FULL, 20, 1, 0.0, 0, 4, -1, (size_t)1 << 20, 21);
    compare(200, 600, 6, 0.05, RBC_VAL_REAL, RK_METRIC_JACCARD, 20, 1, 0.0, 0, 4, -1, (size_t)1 << 20, 22);
}

/* A larger catalogue, closer to the benchmark's shape: many tail items,
 * communities, some heavy users. */
static void test_larger(void)
{
    compare(1500, 6000, 30, 0.02, RBC_VAL_IMPLICIT, RK_METRIC_COSINE_FULL, 20, 1, 0.0, 0, 8, -1, 0, 31);
    compare(1500, 6000, 30, 0.02, RBC_VAL_HALF, RK_METRIC_EUCLIDEAN_FULL, 20, 1, 0.0, 0, 8, -1, 0, 32);
    compare(1500, 6000, 30, 0.02, RBC_VAL_REAL, RK_METRIC_JACCARD, 20, 2, 0.0, 0, 16, 3, 0, 33);
}

static void test_refusals(void)
{
    rk_triples t;
    rk_model m;
    rbc_make_data(&t, 10, 10, 1, 0.5, RBC_VAL_IMPLICIT, 1);
    CU_ASSERT_FATAL(rk_model_build(&m, &t, 10, 10, 0, 0, 0, 0, NULL) == RK_OK);
    rk_triples_free(&t);
    rk_knn_opts o;
    rk_knn_opts_default(&o); /* pearson: not a full-vector metric */
    rk_rbc_opts r;
    rk_rbc_opts_default(&r);
    rk_lists l;
    rk_error err;
    CU_ASSERT_FATAL(rk_lists_alloc(&l, 10, o.k, NULL) == RK_OK);
    CU_ASSERT(rk_gpu_rbc(&m, &o, &r, NULL, &l, NULL, &err) == RK_E_ARG);
    o.sim.metric = RK_METRIC_JACCARD;
    CU_ASSERT(rk_gpu_rbc(&m, &o, &r, NULL, NULL, NULL, &err) == RK_E_ARG);
    CU_ASSERT(rk_gpu_rbc(&m, &o, &r, NULL, &l, NULL, &err) == RK_OK);
    rk_lists_free(&l);
    rk_model_free(&m);
}

/* the GPU's lists have the CPU's recall on the fixed seed */
static void test_recall_fixed_seed(void)
{
    rk_rbc_recall_result c, g;
    rbc_recall_fixed(RK_METRIC_COSINE_FULL, 0, &c);
    rbc_recall_fixed(RK_METRIC_COSINE_FULL, 1, &g);
    CU_ASSERT(c.recall == g.recall && c.hits == g.hits && c.recall_ties == g.recall_ties);
}

int main(void)
{
    static const rk_test_case quick[] = {
        {"shapes: every ball, every item a representative, tails", test_shapes},
        {"refusals", test_refusals},
        {NULL, NULL},
    };
    static const rk_test_case cases[] = {
        {"every metric and value kind", test_metrics_and_values},
        {"shapes: every ball, every item a representative, tails", test_shapes},
        {"a small memory cap", test_small_memory},
        {"a larger catalogue", test_larger},
        {"refusals", test_refusals},
        {"recall on a fixed seed", test_recall_fixed_seed},
        {NULL, NULL},
    };
    return rk_test_gpu_main("gpu-rbc", cases, quick);
}
