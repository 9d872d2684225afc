/* The ranking model's lists (CONTRACT.md §5b) on the GPU against the CPU
 * engine: the transformed values are integers whose sums are exact, so the
 * lists must be the same bit for bit on both GPU similarity routes (k_sims
 * and SpGEMM, whole and cut tiles; the kernel sums them in 64-bit integers),
 * also from values left one a user and expanded on the device (both
 * transpositions), and so must top-N from the shaped lists.
 * Exits 77 (skipped) when no GPU is usable. */
#include "rk_gpu.h"
#include "rk_knn.h"
#include "rk_model.h"
#include "rk_topn.h"
#include "test_rankw.h"
#include "test_gpu_main.h"

static int g_same;

static int same_lists(const rk_lists *a, const rk_lists *b)
{
    for (int32_t i = 0; i < a->n_items; i++) {
        if (a->len[i] != b->len[i]) return 0;
        const size_t at = (size_t)i * (size_t)a->k, n = (size_t)a->len[i];
        if (memcmp(a->nbr + at, b->nbr + at, n * sizeof *a->nbr) != 0 ||
            memcmp(a->sim + at, b->sim + at, n * sizeof *a->sim) != 0 ||
            memcmp(a->support + at, b->support + at, n * sizeof *a->support) != 0)
            return 0;
    }
    return 1;
}

/* top-N into a flat buffer (users in order, n entries each, -1 padded) */
typedef struct flat {
    int32_t n;
    int32_t *item;
    uint64_t *score;
} flat;

static rk_status flat_sink(void *ud, const rk_topn_batch *b, rk_error *err)
{
    (void)err;
    flat *f = ud;
    for (int64_t u = 0; u < b->count; u++)
        for (int32_t r = 0; r < b->len[u]; r++) {
            f->item[(b->first + u) * f->n + r] = b->item[u * b->n + r];
            f->score[(b->first + u) * f->n + r] = b->score[u * b->n + r];
        }
    return RK_OK;
}

static void run_topn(const rk_model *m, const rk_lists *l, int gpu, flat *f, int nu)
{
    rk_topn_opts to;
    memset(&to, 0, sizeof to);
    to.n = f->n;
    to.sink = flat_sink;
    to.sink_ud = f;
    memset(f->item, 0xff, sizeof(int32_t) * (size_t)nu * f->n);
    memset(f->score, 0, sizeof(uint64_t) * (size_t)nu * f->n);
    rk_error err;
    rk_gpu_opts g;
    memset(&g, 0, sizeof g);
    CU_ASSERT_EQUAL(gpu ? rk_gpu_topn(m, l, &to, &g, NULL, &err) : rk_topn_cpu(m, l, &to, NULL, &err), RK_OK);
}

static void check(int nu, int ni, double dens, int ones, int every, int hole, const rk_rankw_opts *o,
                  unsigned long long seed)
{
    rk_triples t;
    rk_model m;
    rk_rankw_model tm;
    rk_knn_opts ko;
    rk_error err;
    if (!rkt_setup(nu, ni, dens, ones, every, hole, o, seed, &t, &m, &tm, &ko)) return;
    rk_lists c, g;
    CU_ASSERT_FATAL(rk_lists_alloc(&c, ni, o->k, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_lists_alloc(&g, ni, o->k, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_knn_cpu(&tm.model, &ko, &c, NULL, NULL, &err) == RK_OK);
    /* the quantised values are integers whose sums fit 2^53: the kernel sums them in 64 bits */
    CU_ASSERT(rk_knn_wide_grid(&tm.model));
    static const struct { rk_gpu_sims_route route; int32_t tile; } routes[] = {
        {RK_GPU_SIMS_KERNEL, 0}, {RK_GPU_SIMS_KERNEL, 7}, {RK_GPU_SIMS_SPGEMM, 0}, {RK_GPU_SIMS_SPGEMM, 5}};
    for (int r = 0; r < 4; r++) {
        rk_gpu_opts go;
        memset(&go, 0, sizeof go);
        go.sims_route = routes[r].route;
        go.tile_items = routes[r].tile;
        rk_knn_stats st;
        memset(&st, 0, sizeof st);
        const rk_status s = rk_gpu_knn(&tm.model, &ko, &go, &g, NULL, NULL, NULL, &st, &err);
        CU_ASSERT_EQUAL(s, RK_OK);
        if (s != RK_OK) fprintf(stderr, "%s\n", err.msg);
        if (routes[r].route == RK_GPU_SIMS_KERNEL) CU_ASSERT(strstr(st.path, "int64 dot") != NULL);
        const int same = s == RK_OK && same_lists(&c, &g);
        CU_ASSERT(same);
        if (!same) fprintf(stderr, "%s: route %d lists differ (seed %llu)\n", rk_metric_name(o->sim), r, seed);
        g_same += same;
    }
    /* values a user (rk_rankw_build_rows): expanded on the device, with the
     * device's transposition and with the host's item-major upload */
    rk_rankw_model tr;
    CU_ASSERT_FATAL(rk_rankw_build_rows(&m, o, &tr, &err) == RK_OK);
    CU_ASSERT_EQUAL(tr.row_val != NULL, o->sim == RK_METRIC_RP3BETA);
    for (int h = 0; h < 2; h++) {
        rk_gpu_opts go;
        memset(&go, 0, sizeof go);
        go.host_transpose = h;
        rk_knn_stats st;
        const rk_status s = rk_gpu_knn(&tr.model, &ko, &go, &g, NULL, NULL, NULL, &st, &err);
        if (s != RK_OK) fprintf(stderr, "%s\n", err.msg);
        const int same = s == RK_OK && same_lists(&c, &g);
        CU_ASSERT(same);
        g_same += same;
    }
    rk_rankw_free(&tr);
    rk_rankw_shape(o, &c);
    flat fc = {5, malloc(sizeof(int32_t) * (size_t)nu * 5), malloc(sizeof(uint64_t) * (size_t)nu * 5)};
    flat fg = {5, malloc(sizeof(int32_t) * (size_t)nu * 5), malloc(sizeof(uint64_t) * (size_t)nu * 5)};
    run_topn(&m, &c, 0, &fc, nu);
    run_topn(&m, &c, 1, &fg, nu);
    CU_ASSERT(memcmp(fc.item, fg.item, sizeof(int32_t) * (size_t)nu * 5) == 0);
    CU_ASSERT(memcmp(fc.score, fg.score, sizeof(uint64_t) * (size_t)nu * 5) == 0);
    free(fc.item); free(fc.score); free(fg.item); free(fg.score);
    rk_lists_free(&c);
    rk_lists_free(&g);
    rk_rankw_free(&tm);
    rk_model_free(&m);
    rk_triples_free(&t);
}

static void test_configs(void)
{
    rk_rankw_opts cf[64];
    const int n = rkt_configs(cf, 64);
    unsigned long long s = 777;
    for (int c = 0; c < n; c++) {
        check(120, 90, 0.15, 0, 0, 0, &cf[c], 100 + c);
        check(100, 70, 0.2, 1, 1, 1, &cf[c], 200 + c);
        const int nu = 2 + (int)(rk_test_rand(&s) % 200), ni = 1 + (int)(rk_test_rand(&s) % 150);
        check(nu, ni, 0.02 + 0.5 * rk_test_uniform(&s), c % 2, c % 3 == 0, 0, &cf[c], 300 + c);
    }
    CU_ASSERT(g_same > 100);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"ranking lists and their top-N: GPU routes bit for bit as the CPU", test_configs},
        {NULL, NULL},
    };
    return rk_test_gpu_main("gpu_rank", cases, NULL);
}
