/* The full-vector metrics (cosine-full, euclidean-full, jaccard) on the GPU,
 * by both routes of their similarity rows, k_sims and cuSPARSE SpGEMM,
 * against the CPU engine: random data with fixed seeds on a half-star grid,
 * real values and all ones (--implicit), every prediction mode, support and
 * shrinkage, one item, an item rated by every user, users and items with one
 * rating, empty rows, k above the item count, tiles smaller than the data and
 * products smaller than the tiles, products under small memory budgets, and
 * the route's arguments.  Lists must hold the same neighbours and supports
 * (off the grid, where double sums are added in another order, near-ties may
 * swap), similarities within 1e-6 and on the grid the same bits,
 * predictions within 1e-9.  Exits 77 (skipped) when no GPU is usable. */
#include "rk_gpu.h"
#include "rk_knn.h"
#include "rk_model.h"
#include "test_util.h"
#include "test_gpu_main.h"

#include <math.h>
#include <string.h>

typedef enum { VAL_HALF, VAL_REAL, VAL_ONES } value_kind;

typedef struct shape {
    int nu, ni;
    double density;
    value_kind vk;
    int full_item; /* item 0 rated by every user (then no user is empty) */
} shape;

static void make_data(rk_triples *t, const shape *sh, unsigned long long seed)
{
    const int nu = sh->nu, ni = sh->ni;
    unsigned long long s = seed;
    rk_triples_alloc(t, (int64_t)nu * ni + 1, 0, NULL);
    int64_t n = 0;
    for (int u = 0; u < nu; u++) {
        if (nu > 3 && u == nu - 1 && !sh->full_item) continue; /* an empty user */
        const int one = nu > 3 && u == nu - 2;                  /* a user with one rating */
        for (int i = 0; i < ni; i++) {
            if (ni > 3 && i == ni - 1) continue; /* an empty item */
            int rated;
            if (sh->full_item && i == 0) rated = 1;
            else if (one) rated = i == 0;
            else if (ni > 4 && i == ni - 2) rated = u == 0; /* an item with one rating */
            else rated = rk_test_uniform(&s) < sh->density;
            if (!rated) continue;
            double v;
            switch (sh->vk) {
            case VAL_HALF: v = 0.5 * (double)(1 + rk_test_rand(&s) % 10); break;
            case VAL_ONES: v = 1.0; break;
            default: v = 1.0 + 4.0 * rk_test_uniform(&s); break;
            }
            t->user[n] = u;
            t->item[n] = i;
            t->rating[n] = (float)v;
            n++;
        }
    }
    t->n = n;
}

/* One engine's answers. */
typedef struct answers {
    rk_lists l;
    double *pred;
    int32_t *used;
    rk_knn_stats st;
} answers;

typedef struct route_opts {
    rk_gpu_sims_route route;
    int32_t tile, rows; /* tile_items, spgemm_rows (0: sized from memory) */
    size_t budget;      /* spgemm_budget (0: half of what is left) */
} route_opts;

static rk_status run_gpu(const rk_model *m, const rk_knn_opts *o, const route_opts *ro, int64_t nq, const int32_t *qu,
                         const int32_t *qi, answers *a, rk_error *err)
{
    rk_gpu_opts g;
    memset(&g, 0, sizeof g);
    g.sims_route = ro->route;
    g.tile_items = ro->tile;
    g.spgemm_rows = ro->rows;
    g.spgemm_budget = ro->budget;
    for (int64_t q = 0; q < nq; q++) { /* poison: every answer must be written */
        a->pred[q] = -1e300;
        a->used[q] = -7;
    }
    rk_queries q = {nq, qu, qi, a->pred, a->used};
    return rk_gpu_knn(m, o, &g, &a->l, &q, NULL, NULL, &a->st, err);
}

static int g_compared, g_multi_product;

/* b (a GPU route) against a (the CPU).  grid: the sums are exact integers,
 * so the neighbours and the similarities' bits must be the same. */
static void same_answers(const char *what, const answers *a, const answers *b, int ni, int k, int64_t nq, int grid,
                         rk_metric metric)
{
    int shown = 0;
    for (int i = 0; i < ni; i++) {
        CU_ASSERT_EQUAL(b->l.len[i], a->l.len[i]);
        if (b->l.len[i] != a->l.len[i]) {
            if (shown++ < 5)
                fprintf(stderr, "%s %s: item %d has %d neighbours, the CPU %d\n", what, rk_metric_name(metric), i,
                        b->l.len[i], a->l.len[i]);
            continue;
        }
        for (int r = 0; r < a->l.len[i]; r++) {
            const size_t at = (size_t)i * (size_t)k + (size_t)r;
            const float sa = a->l.sim[at], sb = b->l.sim[at];
            const int nbr_ok = b->l.nbr[at] == a->l.nbr[at];
            CU_ASSERT(fabsf(sb - sa) <= 1e-6f);
            if (grid) {
                CU_ASSERT(nbr_ok);
                CU_ASSERT(sb == sa);
            }
            if (nbr_ok) CU_ASSERT_EQUAL(b->l.support[at], a->l.support[at]);
            if ((fabsf(sb - sa) > 1e-6f || (grid && (!nbr_ok || sb != sa)) ||
                 (nbr_ok && b->l.support[at] != a->l.support[at])) && shown++ < 5)
                fprintf(stderr, "%s %s%s: item %d rank %d: %d %.9g (%d co-raters), CPU %d %.9g (%d)\n", what,
                        rk_metric_name(metric), grid ? " on the grid" : "", i, r, b->l.nbr[at], (double)sb,
                        b->l.support[at], a->l.nbr[at], (double)sa, a->l.support[at]);
        }
    }
    for (int64_t q = 0; q < nq; q++) {
        CU_ASSERT(fabs(b->pred[q] - a->pred[q]) <= 1e-9);
        CU_ASSERT_EQUAL(b->used[q], a->used[q]);
        if ((fabs(b->pred[q] - a->pred[q]) > 1e-9 || b->used[q] != a->used[q]) && shown++ < 5)
            fprintf(stderr, "%s %s: query %lld: %.17g (%d used), CPU %.17g (%d)\n", what, rk_metric_name(metric),
                    (long long)q, b->pred[q], b->used[q], a->pred[q], a->used[q]);
    }
}

/* "spgemm: P products, H halved" of the SpGEMM route's detail. */
static int spgemm_counts(const rk_knn_stats *st, long long *products, long long *halved)
{
    const char *p = strstr(st->detail, "spgemm: ");
    return p != NULL && sscanf(p, "spgemm: %lld products, %lld halved", products, halved) == 2;
}

static int answers_alloc(answers *a, int ni, int k, int64_t nq)
{
    memset(a, 0, sizeof *a);
    a->pred = malloc(sizeof(double) * (size_t)nq);
    a->used = malloc(sizeof(int32_t) * (size_t)nq);
    return rk_lists_alloc(&a->l, ni, k, NULL) == RK_OK && a->pred != NULL && a->used != NULL;
}

static void answers_free(answers *a)
{
    rk_lists_free(&a->l);
    free(a->pred);
    free(a->used);
}

/* The CPU, then each route of ro[0..n_ro) (NULL: the kernel and SpGEMM
 * whole), on one data set.  budget_may_fail: a route may stop with RK_E_GPU
 * for want of memory (its answers are then not compared). */
static void compare_routes(const shape *sh, rk_metric metric, int k, rk_predict_mode mode, int min_support,
                           double shrink, int min_k, const route_opts *ro, int n_ro, int budget_may_fail,
                           unsigned long long seed)
{
    rk_triples t;
    rk_error err;
    make_data(&t, sh, seed);
    if (t.n == 0) {
        rk_triples_free(&t);
        return;
    }
    const int nu = sh->nu, ni = sh->ni;
    rk_model m;
    CU_ASSERT_FATAL(rk_model_build(&m, &t, nu, ni, 0, 0, 0, 1, &err) == RK_OK);
    rk_knn_opts o;
    rk_knn_opts_default(&o);
    o.sim.metric = metric;
    o.sim.min_support = min_support;
    o.sim.shrinkage = shrink;
    o.k = k;
    o.mode = mode;
    o.min_k = min_k;
    const int grid = sh->vk != VAL_REAL;
    unsigned long long s = seed ^ 0x5151ULL;
    const int64_t nq = 4 * (int64_t)nu + 3;
    int32_t *qu = malloc(sizeof(int32_t) * (size_t)nq), *qi = malloc(sizeof(int32_t) * (size_t)nq);
    for (int64_t a = 0; a < nq; a++) {
        qu[a] = (int32_t)(rk_test_rand(&s) % (unsigned)nu);
        qi[a] = (int32_t)(rk_test_rand(&s) % (unsigned)ni);
    }
    answers cpu, gpu;
    CU_ASSERT_FATAL(answers_alloc(&cpu, ni, k, nq) && answers_alloc(&gpu, ni, k, nq));
    rk_queries qc = {nq, qu, qi, cpu.pred, cpu.used};
    CU_ASSERT_FATAL(rk_knn_cpu(&m, &o, &cpu.l, &qc, NULL, &err) == RK_OK);
    static const route_opts whole[] = {{RK_GPU_SIMS_KERNEL, 0, 0, 0}, {RK_GPU_SIMS_SPGEMM, 0, 0, 0}};
    if (ro == NULL) {
        ro = whole;
        n_ro = 2;
    }
    for (int r = 0; r < n_ro; r++) {
        char what[96];
        snprintf(what, sizeof what, "%s tile %d rows %d budget %zu", rk_gpu_sims_route_name(ro[r].route), ro[r].tile,
                 ro[r].rows, ro[r].budget);
        rk_status st = run_gpu(&m, &o, &ro[r], nq, qu, qi, &gpu, &err);
        if (st == RK_E_GPU && budget_may_fail && strstr(err.msg, "SpGEMM similarity route needs more than") != NULL) {
            printf("\n    %s: %s", what, err.msg);
            continue;
        }
        if (st != RK_OK) fprintf(stderr, "%s: %s\n", what, err.msg);
        CU_ASSERT_FATAL(st == RK_OK);
        const int spgemm = ro[r].route == RK_GPU_SIMS_SPGEMM;
        CU_ASSERT_EQUAL(strstr(gpu.st.path, "spgemm") != NULL, spgemm);
        long long products = -1, halved = -1;
        CU_ASSERT_EQUAL(spgemm_counts(&gpu.st, &products, &halved), spgemm);
        if (spgemm && ro[r].rows > 0 && halved == 0) {
            /* products of exactly `rows` rows but at the end of each tile */
            const int T = ro[r].tile > 0 && ro[r].tile < ni ? ro[r].tile : ni;
            long long want = 0;
            for (int first = 0; first < ni; first += T) {
                const int rows = ni - first < T ? ni - first : T;
                want += (rows + ro[r].rows - 1) / ro[r].rows;
            }
            CU_ASSERT_EQUAL(products, want);
        }
        if (spgemm && products > 1) g_multi_product++;
        same_answers(what, &cpu, &gpu, ni, k, nq, grid, metric);
    }
    g_compared++;
    answers_free(&cpu);
    answers_free(&gpu);
    free(qu);
    free(qi);
    rk_model_free(&m);
    rk_triples_free(&t);
}

static void compare(const shape *sh, rk_metric metric, int k, rk_predict_mode mode, int min_support, double shrink,
                    int min_k, unsigned long long seed)
{
    compare_routes(sh, metric, k, mode, min_support, shrink, min_k, NULL, 0, 0, seed);
}

/* the full-vector metrics of the metric table */
static rk_metric metrics[RK_METRIC_COUNT];
#define N_METRICS rk_test_metrics(1, metrics)
static const rk_predict_mode modes[] = {RK_PREDICT_BASIC, RK_PREDICT_MEANS, RK_PREDICT_BASELINE};

static void test_every_metric_and_mode(void)
{
    const shape half = {120, 90, 0.2, VAL_HALF, 0}, real = {80, 60, 0.25, VAL_REAL, 0},
                ones = {100, 70, 0.2, VAL_ONES, 0};
    for (int m = 0; m < N_METRICS; m++)
        for (int p = 0; p < 3; p++) {
            compare(&half, metrics[m], 10, modes[p], 1, 0.0, 1, 100 + 10 * m + p);
            compare(&real, metrics[m], 7, modes[p], 2, 0.0, 2, 200 + 10 * m + p);
            compare(&ones, metrics[m], 8, modes[p], 1, 0.0, 1, 300 + 10 * m + p);
        }
}

/* Tiles smaller than the data (one row, seven, sixteen) and SpGEMM products
 * smaller than the tiles (forced heights), beside the kernel. */
static void test_tiles_and_products(void)
{
    static const route_opts ro[] = {
        {RK_GPU_SIMS_KERNEL, 7, 0, 0}, {RK_GPU_SIMS_SPGEMM, 1, 0, 0},  {RK_GPU_SIMS_SPGEMM, 7, 3, 0},
        {RK_GPU_SIMS_SPGEMM, 16, 1, 0}, {RK_GPU_SIMS_SPGEMM, 0, 5, 0}, {RK_GPU_SIMS_SPGEMM, 16, 0, 0},
    };
    const shape half = {150, 70, 0.2, VAL_HALF, 0}, real = {150, 70, 0.2, VAL_REAL, 0},
                ones = {150, 70, 0.15, VAL_ONES, 1};
    for (int m = 0; m < N_METRICS; m++) {
        compare_routes(&half, metrics[m], 5, RK_PREDICT_MEANS, 1, 0.0, 1, ro, 6, 0, 400 + m);
        compare_routes(&real, metrics[m], 5, RK_PREDICT_BASELINE, 1, 0.0, 1, ro, 6, 0, 410 + m);
        compare_routes(&ones, metrics[m], 6, RK_PREDICT_BASIC, 1, 0.0, 1, ro, 6, 0, 420 + m);
    }
    CU_ASSERT(g_multi_product > 0);
}

static void test_edges(void)
{
    static const route_opts ro[] = {{RK_GPU_SIMS_KERNEL, 0, 0, 0}, {RK_GPU_SIMS_SPGEMM, 0, 0, 0},
                                    {RK_GPU_SIMS_KERNEL, 7, 0, 0}, {RK_GPU_SIMS_SPGEMM, 7, 2, 0}};
    for (int m = 0; m < N_METRICS; m++) {
        const rk_metric mt = metrics[m];
        const shape one_item = {30, 1, 0.8, VAL_HALF, 0}, few = {40, 8, 0.6, VAL_HALF, 0},
                    everyone = {60, 40, 0.15, VAL_HALF, 1}, everyone_real = {60, 40, 0.15, VAL_REAL, 1},
                    implicit = {80, 50, 0.1, VAL_ONES, 1}, sparse = {200, 150, 0.02, VAL_HALF, 0},
                    dense = {30, 20, 1.0, VAL_ONES, 0};
        compare_routes(&one_item, mt, 5, RK_PREDICT_MEANS, 1, 0.0, 1, ro, 4, 0, 500 + m);
        compare_routes(&few, mt, 50, RK_PREDICT_BASIC, 1, 0.0, 1, ro, 4, 0, 510 + m);      /* k > items */
        compare_routes(&everyone, mt, 6, RK_PREDICT_MEANS, 1, 0.0, 1, ro, 4, 0, 520 + m);  /* an item rated by all */
        compare_routes(&everyone_real, mt, 6, RK_PREDICT_BASELINE, 1, 0.0, 1, ro, 4, 0, 530 + m);
        compare_routes(&implicit, mt, 10, RK_PREDICT_BASIC, 1, 0.0, 1, ro, 4, 0, 540 + m); /* --implicit data */
        compare_routes(&sparse, mt, 5, RK_PREDICT_MEANS, 1, 0.0, 1, ro, 4, 0, 550 + m);    /* many lone ratings */
        compare_routes(&dense, mt, 4, RK_PREDICT_MEANS, 1, 0.0, 1, ro, 4, 0, 560 + m);     /* every pair co-rated */
        compare_routes(&few, mt, 1, RK_PREDICT_MEANS, 3, 5.0, 3, ro, 4, 0, 570 + m);       /* k 1, support, shrinkage */
        compare_routes(&everyone, mt, 1024, RK_PREDICT_BASELINE, 2, 2.5, 2, ro, 4, 0, 580 + m); /* big k */
    }
}

static void test_random_shapes(void)
{
    unsigned long long s = 99;
    for (int rep = 0; rep < 24; rep++) {
        /* one draw a statement: the order of an initializer list's calls is unspecified */
        shape sh;
        sh.nu = 2 + (int)(rk_test_rand(&s) % 200);
        sh.ni = 1 + (int)(rk_test_rand(&s) % 150);
        sh.density = 0.02 + 0.5 * rk_test_uniform(&s);
        sh.vk = (value_kind)(rep % 3);
        sh.full_item = rep % 5 == 0;
        route_opts ro[2] = {{RK_GPU_SIMS_KERNEL, 0, 0, 0}, {RK_GPU_SIMS_SPGEMM, 0, 0, 0}};
        if (rep % 2) {
            ro[0].tile = 1 + (int32_t)(rk_test_rand(&s) % 20);
            ro[1].tile = 1 + (int32_t)(rk_test_rand(&s) % 20);
        }
        if (rep % 3) ro[1].rows = (int32_t)(rk_test_rand(&s) % 9);
        const int k = 1 + (int)(rk_test_rand(&s) % 40);
        compare_routes(&sh, metrics[rep % N_METRICS], k, modes[(rep / 3) % 3], 1 + rep % 3, rep % 4 == 0 ? 10.0 : 0.0,
                       1 + rep % 2, ro, 2, 0, 600 + rep);
    }
    CU_ASSERT(g_compared > 80);
}

/* Wide rows: more items than one shared-memory chunk of k_sims holds. */
static void test_many_items(void)
{
    static const route_opts ro[] = {{RK_GPU_SIMS_KERNEL, 0, 0, 0}, {RK_GPU_SIMS_SPGEMM, 0, 0, 0},
                                    {RK_GPU_SIMS_SPGEMM, 4096, 700, 0}};
    const shape half = {400, 20000, 0.004, VAL_HALF, 0}, real = {300, 12000, 0.006, VAL_REAL, 1};
    compare_routes(&half, RK_METRIC_COSINE_FULL, 20, RK_PREDICT_MEANS, 1, 0.0, 1, ro, 3, 0, 700);
    compare_routes(&real, RK_METRIC_JACCARD, 20, RK_PREDICT_BASELINE, 1, 0.0, 1, ro, 3, 0, 701);
    compare_routes(&half, RK_METRIC_EUCLIDEAN_FULL, 20, RK_PREDICT_BASIC, 2, 0.0, 1, ro, 3, 0, 702);
}

/* Products under budgets from 256 MB down to 64 KB, 32-row tiles of one
 * product each (the height forced past the estimate): each
 * either fits (a product too large for the budget is halved) and gives the
 * CPU's answers, or stops with RK_E_GPU naming what one row needs.  A budget
 * of one byte cannot hold one row. */
static void test_small_budgets(void)
{
    route_opts ro[8];
    int n = 0;
    for (size_t b = (size_t)256 << 20; b >= ((size_t)16 << 10); b /= 8) ro[n++] = (route_opts){RK_GPU_SIMS_SPGEMM, 32, 32, b};
    const shape half = {300, 100, 0.3, VAL_HALF, 1}, real = {300, 100, 0.3, VAL_REAL, 0};
    printf("\n    budgets:");
    compare_routes(&half, RK_METRIC_COSINE_FULL, 8, RK_PREDICT_MEANS, 1, 0.0, 1, ro, n, 1, 800);
    compare_routes(&real, RK_METRIC_JACCARD, 8, RK_PREDICT_BASIC, 1, 0.0, 1, ro, n, 1, 801);

    rk_triples t;
    rk_error err;
    make_data(&t, &half, 802);
    rk_model m;
    CU_ASSERT_FATAL(rk_model_build(&m, &t, half.nu, half.ni, 0, 0, 0, 1, &err) == RK_OK);
    rk_knn_opts o;
    rk_knn_opts_default(&o);
    o.sim.metric = RK_METRIC_EUCLIDEAN_FULL;
    o.k = 5;
    answers a;
    CU_ASSERT_FATAL(answers_alloc(&a, half.ni, o.k, 1));
    const int32_t zero = 0;
    const route_opts tiny = {RK_GPU_SIMS_SPGEMM, 0, 0, 1};
    CU_ASSERT(run_gpu(&m, &o, &tiny, 1, &zero, &zero, &a, &err) == RK_E_GPU);
    CU_ASSERT(strstr(err.msg, "SpGEMM similarity route needs more than") != NULL);
    CU_ASSERT(strstr(err.msg, "kernel route") != NULL);
    const route_opts fine = {RK_GPU_SIMS_SPGEMM, 0, 0, (size_t)256 << 20};
    CU_ASSERT(run_gpu(&m, &o, &fine, 1, &zero, &zero, &a, &err) == RK_OK);
    answers_free(&a);
    rk_model_free(&m);
    rk_triples_free(&t);
}

/* The route's names, its refusal of the co-rating metrics and of unknown
 * routes, and auto taking the kernel. */
static void test_route_arguments(void)
{
    rk_gpu_sims_route r = RK_GPU_SIMS_AUTO;
    static const char *const names[] = {"auto", "kernel", "spgemm"};
    for (int a = 0; a < 3; a++) {
        CU_ASSERT(rk_gpu_sims_route_parse(names[a], &r) == RK_OK);
        CU_ASSERT_EQUAL((int)r, a);
        CU_ASSERT_STRING_EQUAL(rk_gpu_sims_route_name(r), names[a]);
    }
    CU_ASSERT(rk_gpu_sims_route_parse("cusparse", &r) == RK_E_ARG);
    CU_ASSERT(rk_gpu_sims_route_parse(NULL, &r) == RK_E_ARG);
    CU_ASSERT_STRING_EQUAL(rk_gpu_sims_route_name((rk_gpu_sims_route)9), "unknown");

    const shape sh = {50, 30, 0.3, VAL_HALF, 0};
    rk_triples t;
    rk_error err;
    make_data(&t, &sh, 900);
    rk_model m;
    CU_ASSERT_FATAL(rk_model_build(&m, &t, sh.nu, sh.ni, 0, 0, 0, 1, &err) == RK_OK);
    rk_knn_opts o;
    rk_knn_opts_default(&o);
    o.k = 5;
    answers a;
    CU_ASSERT_FATAL(answers_alloc(&a, sh.ni, o.k, 1));
    const int32_t zero = 0;
    rk_metric corating[RK_METRIC_COUNT];
    const int n_corating = rk_test_metrics(0, corating);
    route_opts ro = {RK_GPU_SIMS_SPGEMM, 0, 0, 0};
    for (int c = 0; c < n_corating; c++) {
        o.sim.metric = corating[c];
        ro.route = RK_GPU_SIMS_SPGEMM;
        CU_ASSERT(run_gpu(&m, &o, &ro, 1, &zero, &zero, &a, &err) == RK_E_ARG);
        CU_ASSERT(strstr(err.msg, "spgemm") != NULL && strstr(err.msg, rk_metric_name(corating[c])) != NULL);
        ro.route = RK_GPU_SIMS_KERNEL; /* the kernel takes every metric */
        CU_ASSERT(run_gpu(&m, &o, &ro, 1, &zero, &zero, &a, &err) == RK_OK);
    }
    o.sim.metric = RK_METRIC_JACCARD;
    ro.route = (rk_gpu_sims_route)7;
    CU_ASSERT(run_gpu(&m, &o, &ro, 1, &zero, &zero, &a, &err) == RK_E_ARG);
    ro.route = RK_GPU_SIMS_AUTO;
    CU_ASSERT(run_gpu(&m, &o, &ro, 1, &zero, &zero, &a, &err) == RK_OK);
    CU_ASSERT(strstr(a.st.path, "spgemm") == NULL);
    answers_free(&a);
    rk_model_free(&m);
    rk_triples_free(&t);
}

int main(void)
{
    static const rk_test_case quick[] = {
        {"route arguments", test_route_arguments},
        {"edge cases", test_edges},
        {NULL, NULL},
    };
    static const rk_test_case cases[] = {
        {"route arguments", test_route_arguments},
        {"every full-vector metric and mode", test_every_metric_and_mode},
        {"tiles and SpGEMM products smaller than the data", test_tiles_and_products},
        {"edge cases", test_edges},
        {"random shapes", test_random_shapes},
        {"wide rows", test_many_items},
        {"SpGEMM under small budgets", test_small_budgets},
        {NULL, NULL},
    };
    return rk_test_gpu_main("gpu-full", cases, quick);
}
