/* The GPU engine against the CPU engine, which defines its results: every
 * metric and prediction mode on random data (fixed seeds, many shapes, one
 * item, k above the item count, users with one rating, empty rows, ties),
 * tiles smaller than the data, and the selection kernel against a sort.
 * Exits 77 (skipped) when no GPU is usable. */
#include "rk_gpu.h"
#include "rk_knn.h"
#include "rk_model.h"
#include "test_util.h"
#include "test_gpu_main.h"

#include <math.h>
#include <string.h>

typedef enum { VAL_HALF, VAL_REAL, VAL_TIES, VAL_INT } value_kind;

static void make_data(rk_triples *t, int nu, int ni, double density, value_kind vk, unsigned long long seed)
{
    unsigned long long s = seed;
    rk_triples_alloc(t, (int64_t)nu * ni + 1, 0, NULL);
    int64_t n = 0;
    for (int u = 0; u < nu; u++) {
        if (nu > 3 && u == nu - 1) continue; /* an empty user */
        int one = nu > 3 && u == nu - 2;     /* a user with one rating */
        for (int i = 0; i < ni; i++) {
            if (ni > 3 && i == ni - 1) continue; /* an empty item */
            if (one ? i != 0 : rk_test_uniform(&s) >= density) continue;
            double v;
            switch (vk) {
            case VAL_HALF: v = 0.5 * (double)(1 + rk_test_rand(&s) % 10); break;
            case VAL_TIES: v = (double)(1 + rk_test_rand(&s) % 2); break;
            case VAL_INT: v = (double)(1 + rk_test_rand(&s) % 5); break;
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

static int g_compared;
static int g_negative, g_negative_seen; /* compare(): signed lists (--negative yes) */

static void compare(int nu, int ni, double density, value_kind vk, rk_metric metric, int k,
                    rk_predict_mode mode, int min_support, double shrink, int min_k, int tile,
                    unsigned long long seed)
{
    rk_triples t;
    rk_error err;
    make_data(&t, nu, ni, density, vk, seed);
    if (t.n == 0) {
        rk_triples_free(&t);
        return;
    }
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
    o.negative = g_negative;
    rk_lists lc, lg;
    CU_ASSERT_FATAL(rk_lists_alloc(&lc, ni, k, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_lists_alloc(&lg, ni, k, &err) == RK_OK);
    unsigned long long s = seed ^ 0x5151ULL;
    int64_t nq = 4 * (int64_t)nu + 3;
    int32_t *qu = malloc(sizeof(int32_t) * (size_t)nq), *qi = malloc(sizeof(int32_t) * (size_t)nq);
    double *pc = malloc(sizeof(double) * (size_t)nq), *pg = malloc(sizeof(double) * (size_t)nq);
    int32_t *uc = malloc(sizeof(int32_t) * (size_t)nq), *ug = malloc(sizeof(int32_t) * (size_t)nq);
    for (int64_t a = 0; a < nq; a++) {
        qu[a] = (int32_t)(rk_test_rand(&s) % (unsigned)nu);
        qi[a] = (int32_t)(rk_test_rand(&s) % (unsigned)ni);
        pg[a] = -1e300; /* poison: every answer must be written */
        ug[a] = -7;
    }
    rk_queries qc = {nq, qu, qi, pc, uc}, qg = {nq, qu, qi, pg, ug};
    rk_gpu_opts g = {0};
    g.tile_items = tile;
    CU_ASSERT_FATAL(rk_knn_cpu(&m, &o, &lc, &qc, NULL, &err) == RK_OK);
    rk_status st = rk_gpu_knn(&m, &o, &g, &lg, &qg, NULL, NULL, NULL, &err);
    if (st != RK_OK) fprintf(stderr, "rk_gpu_knn: %s\n", err.msg);
    CU_ASSERT_FATAL(st == RK_OK);
    for (int i = 0; i < ni; i++) {
        CU_ASSERT_EQUAL(lg.len[i], lc.len[i]);
        if (lg.len[i] != lc.len[i]) {
            fprintf(stderr, "item %d: GPU %d neighbours, CPU %d (%s)\n", i, lg.len[i], lc.len[i], rk_metric_name(metric));
            continue;
        }
        for (int r = 0; r < lc.len[i]; r++) {
            size_t at = (size_t)i * k + r;
            CU_ASSERT(fabsf(lg.sim[at] - lc.sim[at]) <= 1e-4f);
            g_negative_seen += lg.sim[at] < 0.0f;
            if (lg.nbr[at] != lc.nbr[at]) {
                CU_ASSERT(fabsf(lg.sim[at] - lc.sim[at]) <= 1e-6f); /* a tie */
            } else {
                CU_ASSERT_EQUAL(lg.support[at], lc.support[at]);
            }
        }
    }
    for (int64_t a = 0; a < nq; a++) {
        CU_ASSERT(fabs(pg[a] - pc[a]) <= 1e-4);
        CU_ASSERT_EQUAL(ug[a], uc[a]);
        if (fabs(pg[a] - pc[a]) > 1e-4 || ug[a] != uc[a])
            fprintf(stderr, "query (%d,%d) %s/%s: GPU %.9g (%d), CPU %.9g (%d)\n", qu[a], qi[a],
                    rk_metric_name(metric), rk_predict_mode_name(mode), pg[a], ug[a], pc[a], uc[a]);
    }
    g_compared++;
    free(qu); free(qi); free(pc); free(pg); free(uc); free(ug);
    rk_lists_free(&lc);
    rk_lists_free(&lg);
    rk_model_free(&m);
    rk_triples_free(&t);
}

/* the co-rater metrics of the metric table */
static rk_metric metrics[RK_METRIC_COUNT];
#define N_METRICS rk_test_metrics(0, metrics)
static const rk_predict_mode modes[] = {RK_PREDICT_BASIC, RK_PREDICT_MEANS, RK_PREDICT_BASELINE};

static void test_every_metric_and_mode(void)
{
    for (int m = 0; m < N_METRICS; m++)
        for (int p = 0; p < 3; p++) {
            double sh = rk_sim_default_shrinkage(metrics[m]);
            compare(120, 90, 0.2, VAL_HALF, metrics[m], 10, modes[p], 1, sh, 1, 0, 100 + 10 * m + p);
            compare(80, 60, 0.25, VAL_REAL, metrics[m], 7, modes[p], 2, 0.0, 2, 0, 200 + 10 * m + p);
        }
}

static void test_tiles_smaller_than_data(void)
{
    for (int m = 0; m < N_METRICS; m++) {
        compare(150, 70, 0.2, VAL_INT, metrics[m], 5, RK_PREDICT_MEANS, 1, 0.0, 1, 1, 300 + m);
        compare(150, 70, 0.2, VAL_HALF, metrics[m], 5, RK_PREDICT_BASELINE, 1, 0.0, 1, 16, 310 + m);
    }
}

static void test_edges(void)
{
    compare(30, 1, 0.8, VAL_HALF, RK_METRIC_PEARSON, 5, RK_PREDICT_MEANS, 1, 0.0, 1, 0, 400); /* one item */
    compare(40, 8, 0.6, VAL_HALF, RK_METRIC_COSINE, 50, RK_PREDICT_BASIC, 1, 0.0, 1, 0, 401);  /* k > items */
    for (int m = 0; m < N_METRICS; m++) /* many exact ties */
        compare(60, 50, 0.4, VAL_TIES, metrics[m], 4, RK_PREDICT_BASIC, 1, 0.0, 1, 7, 410 + m);
    compare(50, 40, 0.3, VAL_HALF, RK_METRIC_PEARSON, 1, RK_PREDICT_MEANS, 3, 5.0, 3, 0, 420);   /* k = 1 */
    compare(300, 40, 0.5, VAL_HALF, RK_METRIC_MSD, 1024, RK_PREDICT_MEANS, 1, 0.0, 1, 0, 421);  /* big k */
}

static void test_random_shapes(void)
{
    unsigned long long s = 99;
    for (int rep = 0; rep < 20; rep++) {
        int nu = 2 + (int)(rk_test_rand(&s) % 200), ni = 1 + (int)(rk_test_rand(&s) % 150);
        compare(nu, ni, 0.02 + 0.5 * rk_test_uniform(&s), (value_kind)(rep % 4), metrics[rep % N_METRICS],
                1 + (int)(rk_test_rand(&s) % 40), modes[rep % 3], 1 + rep % 3, rep % 4 == 0 ? 10.0 : 0.0,
                1 + rep % 2, rep % 3 == 0 ? 1 + (int)(rk_test_rand(&s) % 20) : 0, 500 + rep);
    }
    CU_ASSERT(g_compared > 40);
}

/* --negative yes: the k largest |sim|, signed, on both engines; the
 * predictions in the same calls still read only the positive ones */
static void test_negative(void)
{
    g_negative = 1;
    g_negative_seen = 0;
    for (int m = 0; m < N_METRICS; m++) {
        compare(120, 90, 0.2, VAL_HALF, metrics[m], 10, modes[m % 3], 1, rk_sim_default_shrinkage(metrics[m]), 1, 0,
                1400 + m);
        compare(150, 70, 0.2, VAL_REAL, metrics[m], 5, RK_PREDICT_MEANS, 1, 0.0, 1, 16, 1410 + m);
        compare(60, 50, 0.4, VAL_TIES, metrics[m], 4, RK_PREDICT_BASIC, 1, 0.0, 1, 7, 1420 + m);
    }
    compare(300, 40, 0.5, VAL_HALF, RK_METRIC_PEARSON, 2100, RK_PREDICT_MEANS, 1, 0.0, 1, 0, 1430); /* k > 2048: host selection */
    compare(400, 20000, 0.004, VAL_HALF, RK_METRIC_PEARSON, 20, RK_PREDICT_MEANS, 1, 0.0, 1, 0, 1431);
    g_negative = 0;
    CU_ASSERT(g_negative_seen > 100);
}

/* large enough that the columns need several shared-memory chunks */
static void test_many_items(void)
{
    compare(400, 20000, 0.004, VAL_HALF, RK_METRIC_PEARSON, 20, RK_PREDICT_MEANS, 1, 0.0, 1, 0, 600);
    compare(300, 12000, 0.006, VAL_REAL, RK_METRIC_COSINE, 20, RK_PREDICT_BASELINE, 1, 0.0, 1, 0, 601);
}

/* Each pair summed once (one tile, the default) against every row in full:
 * on a rating grid the sums are exact, so lists and predictions must be the
 * same bits; with real values within rounding. */
static void sym_vs_full(int nu, int ni, double density, value_kind vk, rk_metric metric, unsigned long long seed)
{
    rk_triples t;
    rk_error err;
    make_data(&t, nu, ni, density, vk, seed);
    rk_model m;
    CU_ASSERT_FATAL(rk_model_build(&m, &t, nu, ni, 0, 0, 0, 1, &err) == RK_OK);
    rk_knn_opts o;
    rk_knn_opts_default(&o);
    o.sim.metric = metric;
    o.sim.shrinkage = rk_sim_default_shrinkage(metric);
    o.k = 15;
    rk_lists a, b;
    CU_ASSERT_FATAL(rk_lists_alloc(&a, ni, o.k, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_lists_alloc(&b, ni, o.k, &err) == RK_OK);
    int64_t nq = 3 * (int64_t)nu;
    int32_t *qu = malloc(sizeof(int32_t) * (size_t)nq), *qi = malloc(sizeof(int32_t) * (size_t)nq);
    double *pa = malloc(sizeof(double) * (size_t)nq), *pb = malloc(sizeof(double) * (size_t)nq);
    int32_t *ua = malloc(sizeof(int32_t) * (size_t)nq), *ub = malloc(sizeof(int32_t) * (size_t)nq);
    unsigned long long s = seed ^ 0x77ULL;
    for (int64_t q = 0; q < nq; q++) {
        qu[q] = (int32_t)(rk_test_rand(&s) % (unsigned)nu);
        qi[q] = (int32_t)(rk_test_rand(&s) % (unsigned)ni);
    }
    rk_queries qa = {nq, qu, qi, pa, ua}, qb = {nq, qu, qi, pb, ub};
    rk_gpu_opts ga = {0}, gb = {0};
    gb.full_rows = 1;
    rk_knn_stats sa, sb;
    CU_ASSERT_FATAL(rk_gpu_knn(&m, &o, &ga, &a, &qa, NULL, NULL, &sa, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_gpu_knn(&m, &o, &gb, &b, &qb, NULL, NULL, &sb, &err) == RK_OK);
    /* msd and euclidean (two sums) keep full rows: symmetry did not pay there */
    const int sym = rk_metric_row_of(metric)->sums != RK_SUMS_DIFF && rk_metric_row_of(metric)->symmetric;
    CU_ASSERT_EQUAL(strstr(sa.path, "symmetric") != NULL, sym);
    CU_ASSERT(strstr(sb.path, "symmetric") == NULL);
    CU_ASSERT(sym ? sa.pair_updates < sb.pair_updates : sa.pair_updates == sb.pair_updates);
    /* real values: double sums added in another order, stored as float */
    const double tol = vk == VAL_REAL || metric == RK_METRIC_PEARSON_BASELINE ? 1e-6 : 0.0;
    for (int i = 0; i < ni; i++) {
        CU_ASSERT_EQUAL(a.len[i], b.len[i]);
        for (int r = 0; r < a.len[i] && r < b.len[i]; r++) {
            size_t at = (size_t)i * o.k + r;
            CU_ASSERT(fabsf(a.sim[at] - b.sim[at]) <= (float)tol);
            if (tol == 0.0) {
                CU_ASSERT_EQUAL(a.nbr[at], b.nbr[at]);
                CU_ASSERT_EQUAL(a.support[at], b.support[at]);
            }
        }
    }
    for (int64_t q = 0; q < nq; q++) {
        CU_ASSERT(fabs(pa[q] - pb[q]) <= tol * 1e-3);
        if (tol == 0.0) CU_ASSERT_EQUAL(ua[q], ub[q]);
    }
    free(qu); free(qi); free(pa); free(pb); free(ua); free(ub);
    rk_lists_free(&a);
    rk_lists_free(&b);
    rk_model_free(&m);
    rk_triples_free(&t);
}

static void test_symmetric_tile(void)
{
    for (int m = 0; m < N_METRICS; m++) {
        sym_vs_full(200, 150, 0.1, VAL_HALF, metrics[m], 700 + m);
        sym_vs_full(120, 90, 0.2, VAL_REAL, metrics[m], 710 + m);
    }
    sym_vs_full(300, 12000, 0.006, VAL_HALF, RK_METRIC_PEARSON, 720); /* several column chunks */
    sym_vs_full(50, 2, 0.9, VAL_INT, RK_METRIC_COSINE, 721);           /* two items */
}

/* selection kernel against a sort, rows with many ties and k from 1 to > n;
 * signed rows (g_abs) rank by magnitude */
static const double *g_row;
static int g_abs;
static int cmp_rank(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    const double vx = g_abs ? fabs(g_row[x]) : g_row[x], vy = g_abs ? fabs(g_row[y]) : g_row[y];
    if (vx != vy) return vx > vy ? -1 : 1;
    return x - y;
}

static void test_select_against_sort(void)
{
    unsigned long long s = 4242;
    for (int rep = 0; rep < 30; rep++) {
        int rows = 1 + (int)(rk_test_rand(&s) % 12), cols = 1 + (int)(rk_test_rand(&s) % 5000);
        int k = 1 + (int)(rk_test_rand(&s) % (rep % 3 == 0 ? 2048 : 64));
        double *S = malloc(sizeof(double) * (size_t)rows * cols);
        for (int a = 0; a < rows * cols; a++) {
            double u = rk_test_uniform(&s);
            /* a third negative or zero, many exact ties among the rest */
            S[a] = u < 0.3 ? -u : (rep % 2 ? (double)(1 + rk_test_rand(&s) % 7) / 7.0 : u);
        }
        /* signed rows every other repetition: exact opposites tie by index */
        const int neg = rep % 4 >= 2;
        if (neg)
            for (int a = 1; a < rows * cols; a += 5) S[a] = -S[a - 1];
        rk_lists l;
        rk_error err;
        CU_ASSERT_FATAL(rk_lists_alloc(&l, rows, k, &err) == RK_OK);
        CU_ASSERT_FATAL(rk_gpu_select_rows(S, rows, cols, neg, &l, &err) == RK_OK);
        int *idx = malloc(sizeof(int) * (size_t)cols);
        for (int r = 0; r < rows; r++) {
            int n = 0;
            for (int j = 0; j < cols; j++) {
                const double v = S[(size_t)r * cols + j];
                if (v > 0 || (neg && v < 0)) idx[n++] = j;
            }
            g_row = S + (size_t)r * cols;
            g_abs = neg;
            qsort(idx, (size_t)n, sizeof(int), cmp_rank);
            if (n > k) n = k;
            CU_ASSERT_EQUAL(l.len[r], n);
            for (int t = 0; t < n && t < l.len[r]; t++) {
                CU_ASSERT_EQUAL(l.nbr[(size_t)r * k + t], idx[t]);
                CU_ASSERT_EQUAL(l.sim[(size_t)r * k + t], (float)g_row[idx[t]]);
            }
        }
        free(idx);
        free(S);
        rk_lists_free(&l);
    }
}

/* The deferred item-major matrix (rk_model_from_csr_deferred: offsets,
 * no entries) on the GPU, which transposes on the device, or with
 * host_transpose builds the host's for the call; and more queries than one
 * thread plans (several tiles).  The answers are the CPU's on the model
 * built at once. */
static void test_deferred_many_queries(void)
{
    const int nu = 17000, ni = 60;
    rk_triples t;
    rk_error err;
    make_data(&t, nu, ni, 0.05, VAL_HALF, 700);
    rk_model a, b;
    rk_csr c;
    CU_ASSERT_FATAL(rk_model_build(&a, &t, nu, ni, 0, 0, 0, 0, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_csr_build(&t, nu, ni, &c, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_model_from_csr_deferred(&b, &c, 0, 0, 0, &err) == RK_OK);
    CU_ASSERT_FATAL(!rk_model_item_major_ready(&b));
    const int64_t nq = 70000;
    unsigned long long s = 701;
    int32_t *qu = malloc(sizeof(int32_t) * (size_t)nq), *qi = malloc(sizeof(int32_t) * (size_t)nq);
    double *pc = malloc(sizeof(double) * (size_t)nq), *pg = malloc(sizeof(double) * (size_t)nq);
    int32_t *uc = malloc(sizeof(int32_t) * (size_t)nq), *ug = malloc(sizeof(int32_t) * (size_t)nq);
    for (int64_t q = 0; q < nq; q++) {
        qu[q] = (int32_t)(rk_test_rand(&s) % (unsigned)(nu + 5)); /* a few unknown users */
        qi[q] = (int32_t)(rk_test_rand(&s) % (unsigned)ni);
    }
    static const rk_metric ms[] = {RK_METRIC_PEARSON, RK_METRIC_COSINE_FULL};
    for (int mi = 0; mi < 2; mi++)
        for (int v = 0; v < 3; v++) {
            rk_knn_opts o;
            rk_knn_opts_default(&o);
            o.sim.metric = ms[mi];
            o.k = 12;
            o.mode = RK_PREDICT_MEANS;
            rk_gpu_opts g = {0};
            g.host_transpose = v == 1;
            g.tile_items = v == 2 ? 16 : 0;
            rk_lists lc, lg;
            CU_ASSERT_FATAL(rk_lists_alloc(&lc, ni, o.k, &err) == RK_OK);
            CU_ASSERT_FATAL(rk_lists_alloc(&lg, ni, o.k, &err) == RK_OK);
            for (int64_t q = 0; q < nq; q++) {
                pg[q] = -1e300;
                ug[q] = -7;
            }
            rk_queries qc = {nq, qu, qi, pc, uc}, qg = {nq, qu, qi, pg, ug};
            CU_ASSERT_FATAL(rk_knn_cpu(&a, &o, &lc, &qc, NULL, &err) == RK_OK);
            rk_status st = rk_gpu_knn(&b, &o, &g, &lg, &qg, NULL, NULL, NULL, &err);
            if (st != RK_OK) fprintf(stderr, "rk_gpu_knn: %s\n", err.msg);
            CU_ASSERT_FATAL(st == RK_OK);
            CU_ASSERT(!rk_model_item_major_ready(&b));
            int bad = 0;
            for (int i = 0; i < ni; i++) {
                bad += lg.len[i] != lc.len[i];
                for (int r = 0; r < lc.len[i] && r < lg.len[i]; r++) {
                    const size_t at = (size_t)i * o.k + r;
                    bad += fabsf(lg.sim[at] - lc.sim[at]) > 1e-4f;
                    bad += lg.nbr[at] != lc.nbr[at] && fabsf(lg.sim[at] - lc.sim[at]) > 1e-6f;
                }
            }
            for (int64_t q = 0; q < nq; q++) bad += fabs(pg[q] - pc[q]) > 1e-4 || ug[q] != uc[q];
            CU_ASSERT_EQUAL(bad, 0);
            rk_lists_free(&lc);
            rk_lists_free(&lg);
        }
    free(qu); free(qi); free(pc); free(pg); free(uc); free(ug);
    rk_model_free(&a);
    rk_model_free(&b);
    rk_triples_free(&t);
}

int main(void)
{
    static const rk_test_case quick[] = {
        {"selection kernel against a sort", test_select_against_sort},
        {"tiles smaller than the data", test_tiles_smaller_than_data},
        {"edge cases", test_edges},
        {"each pair once in a symmetric tile", test_symmetric_tile},
        {NULL, NULL},
    };
    static const rk_test_case cases[] = {
        {"selection kernel against a sort", test_select_against_sort},
        {"every metric and mode", test_every_metric_and_mode},
        {"tiles smaller than the data", test_tiles_smaller_than_data},
        {"edge cases", test_edges},
        {"random shapes", test_random_shapes},
        {"several column chunks", test_many_items},
        {"signed lists (--negative yes)", test_negative},
        {"each pair once in a symmetric tile", test_symmetric_tile},
        {"deferred item-major matrix, many queries", test_deferred_many_queries},
        {NULL, NULL},
    };
    return rk_test_gpu_main("gpu", cases, quick);
}
