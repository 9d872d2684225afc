/* GPU top-N against the CPU engine, which defines its results: both routes
 * (the kernel and cuSPARSE SpGEMM) must hand the sink the same lists and the
 * same fixed-point scores, byte for byte, from lists computed on the CPU
 * (rk_gpu_topn) and from lists still on the device (rk_gpu_knn): random
 * shapes with fixed seeds, every metric, ties, a user who rated every item,
 * N above the candidates, one item, several batches, a catalogue too
 * large for the shared-memory accumulator, and the kernel's sums in 32-bit
 * words at their edges (weights of exactly 1, carries at every add, sums
 * past 2^32, weights too large for the words).  Exits 77 (skipped) without a
 * usable GPU. */
#include "rk_gpu.h"
#include "rk_knn.h"
#include "rk_model.h"
#include "rk_topn.h"
#include "test_util.h"
#include "test_gpu_main.h"
#include "test_topn_util.h"

#include <string.h>


static void knn_opts(rk_knn_opts *o, rk_metric metric, int k)
{
    rk_knn_opts_default(o);
    o->sim.metric = metric;
    o->sim.shrinkage = rk_sim_default_shrinkage(metric);
    o->k = k;
}

static int g_compared;

/* CPU lists → CPU top-N and GPU top-N by `route`: identical. */
static void compare_topn(const rk_model *m, const rk_lists *l, int32_t n, const int32_t *users, int64_t n_users,
                         rk_gpu_topn_route route, int64_t batch, const char *want_path)
{
    int64_t expect = n_users;
    if (users == NULL) {
        expect = 0;
        for (int32_t u = 0; u < m->by_user.n_rows; u++) expect += m->by_user.ptr[u + 1] > m->by_user.ptr[u];
    }
    int32_t n_eff = n < l->n_items ? n : l->n_items;
    collected c, g;
    coll_init(&c, expect, n_eff);
    coll_init(&g, expect, n_eff);
    rk_topn_opts o;
    memset(&o, 0, sizeof o);
    o.n = n_eff;
    o.users = users;
    o.n_users = n_users;
    o.sink = sink;
    o.sink_ud = &c;
    rk_error err;
    rk_topn_stats sc, sg;
    CU_ASSERT_FATAL(rk_topn_cpu(m, l, &o, &sc, &err) == RK_OK);
    o.sink_ud = &g;
    rk_gpu_opts go;
    memset(&go, 0, sizeof go);
    go.topn_route = route;
    go.topn_batch = batch;
    rk_status st = rk_gpu_topn(m, l, &o, &go, &sg, &err);
    if (st != RK_OK) fprintf(stderr, "rk_gpu_topn: %s\n", err.msg);
    CU_ASSERT_FATAL(st == RK_OK);
    CU_ASSERT_EQUAL(g.bad_order, 0);
    CU_ASSERT_EQUAL(g.next, expect);
    CU_ASSERT(coll_equal(&c, &g));
    CU_ASSERT_EQUAL(sg.rows, sc.rows);
    CU_ASSERT_EQUAL(sg.users, sc.users);
    CU_ASSERT_EQUAL(sg.updates, sc.updates);
    if (want_path != NULL) CU_ASSERT(strstr(sg.path, want_path) != NULL);
    if (!coll_equal(&c, &g)) {
        for (int64_t u = 0; u < expect; u++)
            if (c.len[u] != g.len[u] || (c.len[u] > 0 && (c.item[u * n_eff] != g.item[u * n_eff]))) {
                fprintf(stderr, "%s: user %d: CPU %d items (first %d), GPU %d (first %d)\n", sg.path, c.user[u],
                        c.len[u], c.len[u] > 0 ? c.item[u * n_eff] : -1, g.len[u], g.len[u] > 0 ? g.item[u * n_eff] : -1);
                break;
            }
    }
    g_compared++;
    coll_free(&c);
    coll_free(&g);
}

static const rk_metric metrics[] = {RK_METRIC_PEARSON, RK_METRIC_PEARSON_BASELINE, RK_METRIC_COSINE,
                                    RK_METRIC_MSD, RK_METRIC_EUCLIDEAN};
static const rk_gpu_topn_route routes[] = {RK_GPU_TOPN_KERNEL, RK_GPU_TOPN_SPGEMM};

static void test_random_shapes(void)
{
    unsigned long long s = 7077;
    g_compared = 0;
    for (int rep = 0; rep < 24; rep++) {
        int nu = 2 + (int)(rk_test_rand(&s) % 300), ni = 1 + (int)(rk_test_rand(&s) % 400);
        rk_model m;
        rk_lists l;
        rk_knn_opts ko;
        rk_error err;
        make_model(&m, nu, ni, 0.02 + 0.4 * rk_test_uniform(&s), (value_kind)(rep % 3), 800 + (unsigned)rep);
        knn_opts(&ko, metrics[rep % 5], 1 + (int)(rk_test_rand(&s) % 30));
        CU_ASSERT_FATAL(rk_lists_alloc(&l, ni, ko.k, &err) == RK_OK);
        CU_ASSERT_FATAL(rk_knn_cpu(&m, &ko, &l, NULL, NULL, &err) == RK_OK);
        int32_t n = 1 + (int32_t)(rk_test_rand(&s) % (rep % 4 == 0 ? 600 : 25));
        int64_t batch = rep % 3 == 0 ? 1 + (int64_t)(rk_test_rand(&s) % 9) : 0;
        for (int r = 0; r < 2; r++) compare_topn(&m, &l, n, NULL, 0, routes[r], batch, NULL);
        /* a subset in any order, with repeats */
        int32_t users[64];
        int64_t nsub = 1 + (int64_t)(rk_test_rand(&s) % 64);
        for (int64_t t = 0; t < nsub; t++) users[t] = (int32_t)(rk_test_rand(&s) % (unsigned)nu);
        for (int r = 0; r < 2; r++) compare_topn(&m, &l, n, users, nsub, routes[r], 3, NULL);
        rk_lists_free(&l);
        rk_model_free(&m);
    }
    CU_ASSERT(g_compared == 96);
}

static void test_edges(void)
{
    rk_model m;
    rk_lists l;
    rk_knn_opts ko;
    rk_error err;
    /* one item: nothing to recommend */
    make_model(&m, 20, 1, 1.0, VAL_HALF, 1);
    knn_opts(&ko, RK_METRIC_PEARSON, 5);
    CU_ASSERT_FATAL(rk_lists_alloc(&l, 1, 5, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_knn_cpu(&m, &ko, &l, NULL, NULL, &err) == RK_OK);
    for (int r = 0; r < 2; r++) compare_topn(&m, &l, 10, NULL, 0, routes[r], 0, NULL);
    rk_lists_free(&l);
    rk_model_free(&m);
    /* many exact ties; N = 1 and N = the GPU's limit */
    make_model(&m, 150, 300, 0.3, VAL_TIES, 2);
    knn_opts(&ko, RK_METRIC_COSINE, 40);
    CU_ASSERT_FATAL(rk_lists_alloc(&l, 300, 40, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_knn_cpu(&m, &ko, &l, NULL, NULL, &err) == RK_OK);
    for (int r = 0; r < 2; r++) {
        compare_topn(&m, &l, 1, NULL, 0, routes[r], 0, NULL);
        compare_topn(&m, &l, 299, NULL, 0, routes[r], 7, NULL);
    }
    rk_lists_free(&l);
    rk_model_free(&m);
    /* N = 2048 from 3000 items */
    make_model(&m, 60, 3000, 0.2, VAL_HALF, 3);
    knn_opts(&ko, RK_METRIC_MSD, 50);
    CU_ASSERT_FATAL(rk_lists_alloc(&l, 3000, 50, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_knn_cpu(&m, &ko, &l, NULL, NULL, &err) == RK_OK);
    for (int r = 0; r < 2; r++) compare_topn(&m, &l, RK_GPU_MAX_TOPN, NULL, 0, routes[r], 0, NULL);
    rk_lists_free(&l);
    rk_model_free(&m);
}

/* 40,000 items: the kernel's accumulator leaves shared memory for a global slot */
static void test_large_catalogue(void)
{
    rk_model m;
    rk_lists l;
    rk_knn_opts ko;
    rk_error err;
    make_model(&m, 500, 40000, 0.002, VAL_HALF, 4);
    knn_opts(&ko, RK_METRIC_PEARSON, 20);
    CU_ASSERT_FATAL(rk_lists_alloc(&l, 40000, 20, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_knn_cpu(&m, &ko, &l, NULL, NULL, &err) == RK_OK);
    compare_topn(&m, &l, 10, NULL, 0, RK_GPU_TOPN_KERNEL, 0, "global");
    compare_topn(&m, &l, 10, NULL, 0, RK_GPU_TOPN_SPGEMM, 0, "spgemm");
    rk_lists_free(&l);
    rk_model_free(&m);
    /* and a small one stays in shared memory */
    make_model(&m, 200, 2000, 0.05, VAL_HALF, 5);
    CU_ASSERT_FATAL(rk_lists_alloc(&l, 2000, 20, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_knn_cpu(&m, &ko, &l, NULL, NULL, &err) == RK_OK);
    compare_topn(&m, &l, 10, NULL, 0, RK_GPU_TOPN_KERNEL, 0, "shared");
    rk_lists_free(&l);
    rk_model_free(&m);
}

/* The whole engine on m with ko: the GPU's lists (left on the device) and
 * top-N of n from them against the CPU engine's lists and top-N; route,
 * batch and tile for the GPU.  Signed lists (ko->negative) must also have
 * the same similarity bits. */
static void engine_vs_cpu(const rk_model *m, const rk_knn_opts *ko, int32_t n, rk_gpu_topn_route route, int64_t batch,
                          int32_t tile)
{
    const int32_t nu = m->by_user.n_rows, ni = m->by_item.n_rows;
    rk_error err;
    rk_lists lc, lg;
    CU_ASSERT_FATAL(rk_lists_alloc(&lc, ni, ko->k, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_lists_alloc(&lg, ni, ko->k, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_knn_cpu(m, ko, &lc, NULL, NULL, &err) == RK_OK);
    if (ko->negative) CU_ASSERT(rk_topn_lists_signed(&lc));
    collected c, g;
    coll_init(&c, nu, n);
    coll_init(&g, nu, n);
    rk_topn_opts o;
    memset(&o, 0, sizeof o);
    o.n = n;
    o.sink = sink;
    o.sink_ud = &c;
    CU_ASSERT_FATAL(rk_topn_cpu(m, &lc, &o, NULL, &err) == RK_OK);
    o.sink_ud = &g;
    rk_gpu_opts go;
    memset(&go, 0, sizeof go);
    go.topn_route = route;
    go.topn_batch = batch;
    go.tile_items = tile; /* several similarity tiles, then top-N */
    rk_topn_stats ts;
    rk_knn_stats ks;
    rk_status st = rk_gpu_knn(m, ko, &go, &lg, NULL, &o, &ts, &ks, &err);
    if (st != RK_OK) fprintf(stderr, "rk_gpu_knn: %s\n", err.msg);
    CU_ASSERT_FATAL(st == RK_OK);
    CU_ASSERT(strstr(ks.path, "device transpose") != NULL);
    for (int32_t i = 0; i < ni; i++) {
        CU_ASSERT_EQUAL(lg.len[i], lc.len[i]);
        for (int32_t r = 0; r < lc.len[i] && r < lg.len[i]; r++) {
            CU_ASSERT_EQUAL(lg.nbr[(int64_t)i * ko->k + r], lc.nbr[(int64_t)i * ko->k + r]);
            if (ko->negative) CU_ASSERT_EQUAL(lg.sim[(int64_t)i * ko->k + r], lc.sim[(int64_t)i * ko->k + r]);
        }
    }
    CU_ASSERT(coll_equal(&c, &g));
    coll_free(&c);
    coll_free(&g);
    rk_lists_free(&lc);
    rk_lists_free(&lg);
}

/* rk_gpu_topn's status for top-n of every user by `route`, the results
 * dropped; ts (may be NULL) gets its statistics. */
static rk_status gpu_topn_status(const rk_model *m, const rk_lists *l, int32_t n, rk_gpu_topn_route route,
                                 rk_topn_stats *ts, rk_error *err)
{
    collected g;
    coll_init(&g, m->by_user.n_rows, n);
    rk_topn_opts o;
    memset(&o, 0, sizeof o);
    o.n = n;
    o.sink = sink;
    o.sink_ud = &g;
    rk_gpu_opts go;
    memset(&go, 0, sizeof go);
    go.topn_route = route;
    const rk_status st = rk_gpu_topn(m, l, &o, &go, ts, err);
    coll_free(&g);
    return st;
}

/* Signed lists (--negative yes): the kernel route with both accumulators
 * against the CPU, from the CPU's lists and inside the engine; the spgemm
 * route, which sums unsigned, refuses them. */
static void test_signed(void)
{
    unsigned long long s = 5150;
    for (int rep = 0; rep < 8; rep++) {
        rk_model m;
        rk_lists l;
        const int32_t ni = 5 + 40 * rep;
        make_model(&m, 30 + 20 * rep, ni, 0.3, VAL_HALF, 1200 + (unsigned)rep);
        make_signed_lists(&l, ni, 2 + rep, &s);
        CU_ASSERT(rk_topn_lists_signed(&l));
        compare_topn(&m, &l, 1 + rep * 3, NULL, 0, RK_GPU_TOPN_KERNEL, rep % 2 ? 0 : 5, "shared");
        rk_lists_free(&l);
        rk_model_free(&m);
    }
    rk_model m;
    rk_lists l;
    make_model(&m, 400, 40000, 0.002, VAL_HALF, 6); /* past shared memory: the global accumulator */
    make_signed_lists(&l, 40000, 12, &s);
    compare_topn(&m, &l, 10, NULL, 0, RK_GPU_TOPN_KERNEL, 0, "global");
    rk_error err;
    CU_ASSERT_EQUAL(gpu_topn_status(&m, &l, 10, RK_GPU_TOPN_SPGEMM, NULL, &err), RK_E_ARG);
    CU_ASSERT(strstr(err.msg, "negative") != NULL);
    rk_lists_free(&l);
    rk_model_free(&m);
    /* the engine's own signed lists, on the device, then top-N */
    for (int rep = 0; rep < 6; rep++) {
        rk_knn_opts ko;
        make_model(&m, 120 + 31 * rep, 90 + 47 * rep, 0.1, rep % 3 == 1 ? VAL_TIES : VAL_HALF, 1300 + (unsigned)rep);
        knn_opts(&ko, RK_METRIC_PEARSON, 4 + rep); /* exact sums on the grid: the same lists */
        ko.negative = 1;
        engine_vs_cpu(&m, &ko, 7, RK_GPU_TOPN_KERNEL, 0, rep % 3 == 2 ? 13 : 0);
        rk_model_free(&m);
    }
}

/* The unsigned sums in two 32-bit words: weights of exactly 1 (2^32: a low
 * word of 0, so the first add to an item finds lo at 0 again and again),
 * the float just below 1 (a carry out of lo at almost every add), tiny ones,
 * dense users whose sums pass 2^32 many times; in shared memory and in the
 * global slots.  Weights so large that a sum could pass 2^62 take the 64-bit
 * atomics instead, with the same results. */
static void test_words(void)
{
    static const float pal[] = {1.0f, 0.99999994f, 0.5f, 0.75f, 0x1p-20f, 0.3f, 1.0f, 0.99999994f};
    unsigned long long s = 6161;
    for (int rep = 0; rep < 6; rep++) {
        rk_model m;
        rk_lists l;
        const int32_t ni = 20 + 70 * rep, k = 3 + 5 * rep;
        make_model(&m, 40 + 25 * rep, ni, rep % 2 ? 0.9 : 0.3, VAL_HALF, 1400 + (unsigned)rep);
        make_palette_lists(&l, ni, k, rep == 5 ? pal : pal + 6, rep == 5 ? 8 : 2, &s); /* 1 and 1 - 2^-24 only, then all */
        compare_topn(&m, &l, 1 + rep * 4, NULL, 0, RK_GPU_TOPN_KERNEL, rep % 2 ? 0 : 7, "shared accumulator in 32-bit words");
        rk_lists_free(&l);
        rk_model_free(&m);
    }
    rk_model m;
    rk_lists l;
    make_model(&m, 300, 40000, 0.004, VAL_HALF, 7); /* past shared memory: the global slots */
    make_palette_lists(&l, 40000, 15, pal, 8, &s);
    compare_topn(&m, &l, 10, NULL, 0, RK_GPU_TOPN_KERNEL, 0, "global accumulator in 32-bit words");
    rk_lists_free(&l);
    rk_model_free(&m);
    /* weights of 10^7: a user of 200 items could pass 2^62 */
    static const float big[] = {1e7f, 3e6f, 1.0f};
    make_model(&m, 50, 300, 0.7, VAL_HALF, 8);
    make_palette_lists(&l, 300, 30, big, 3, &s);
    compare_topn(&m, &l, 10, NULL, 0, RK_GPU_TOPN_KERNEL, 0, "shared accumulator");
    rk_topn_stats ts;
    rk_error err;
    CU_ASSERT_FATAL(gpu_topn_status(&m, &l, 10, RK_GPU_TOPN_KERNEL, &ts, &err) == RK_OK);
    CU_ASSERT(strstr(ts.path, "words") == NULL);
    rk_lists_free(&l);
    rk_model_free(&m);
}

/* The whole engine: lists on the device, top-N from them, against the CPU
 * engine's lists and top-N (grid ratings: the lists are exact too). */
static void test_in_engine(void)
{
    for (int rep = 0; rep < 10; rep++) {
        rk_model m;
        rk_knn_opts ko;
        make_model(&m, 100 + 37 * rep, 80 + 53 * rep, 0.08, rep % 3 == 1 ? VAL_TIES : VAL_HALF, 900 + (unsigned)rep);
        knn_opts(&ko, metrics[rep % 5], 5 + rep);
        if (metrics[rep % 5] == RK_METRIC_PEARSON_BASELINE) ko.sim.metric = RK_METRIC_COSINE; /* double sums */
        engine_vs_cpu(&m, &ko, 1 + rep * 3, routes[rep % 2], rep % 2 ? 0 : 17, rep % 3 == 2 ? 13 : 0);
        rk_model_free(&m);
    }
}

int main(void)
{
    static const rk_test_case quick[] = {
        {"edge cases", test_edges},
        {"in the engine, lists on the device", test_in_engine},
        {"signed lists (--negative yes)", test_signed},
        {"sums in 32-bit words", test_words},
        {NULL, NULL},
    };
    static const rk_test_case cases[] = {
        {"random shapes, both routes", test_random_shapes},
        {"edge cases", test_edges},
        {"a catalogue past shared memory", test_large_catalogue},
        {"in the engine, lists on the device", test_in_engine},
        {"signed lists (--negative yes)", test_signed},
        {"sums in 32-bit words", test_words},
        {NULL, NULL},
    };
    return rk_test_gpu_main("gpu-topn", cases, quick);
}
