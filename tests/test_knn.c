/* The CPU engine against a slow, obviously correct implementation written
 * here: dense double matrices, the CONTRACT.md §2–§4 formulas spelled out, every
 * pair summed over users directly (the full-vector metrics of CONTRACT.md §6b over
 * whole columns, unrated cells 0).  Random data with fixed seeds, every metric
 * and prediction mode, plus edge cases. */
#include "rk_knn.h"
#include "rk_model.h"
#include "rk_omp.h"
#include "test_util.h"

#include <math.h>
#include <string.h>

/* ---- the brute-force reference --------------------------------------------- */

typedef struct ref {
    int nu, ni;
    double *R, *B;  /* nu x ni dense ratings and indicator */
    double mu, rmin, rmax;
    double *imean, *bu, *bi;
    double *S;      /* ni x ni similarities */
    double *N;      /* ni x ni supports */
} ref;

#define AT(M, a, b, cols) ((M)[(size_t)(a) * (size_t)(cols) + (size_t)(b)])

static void ref_free(ref *r)
{
    free(r->R); free(r->B); free(r->imean); free(r->bu); free(r->bi); free(r->S); free(r->N);
}

/* The ranking similarities' parameters in these tests: asymmetric, with a
 * denominator term, so that a swapped factor fails. */
#define T_ALPHA 0.7
#define T_BETA 0.4
#define T_DEN 2.5

static void ref_build(ref *r, int nu, int ni, const rk_triples *t, rk_metric metric,
                      int min_support, double shrink)
{
    r->nu = nu;
    r->ni = ni;
    r->R = calloc((size_t)nu * ni, sizeof(double));
    r->B = calloc((size_t)nu * ni, sizeof(double));
    for (int64_t p = 0; p < t->n; p++) {
        AT(r->R, t->user[p], t->item[p], ni) = t->rating[p];
        AT(r->B, t->user[p], t->item[p], ni) = 1.0;
    }
    double sum = 0, cnt = 0;
    r->rmin = INFINITY;
    r->rmax = -INFINITY;
    for (int u = 0; u < nu; u++)
        for (int i = 0; i < ni; i++)
            if (AT(r->B, u, i, ni) > 0) {
                double v = AT(r->R, u, i, ni);
                sum += v;
                cnt += 1;
                if (v < r->rmin) r->rmin = v;
                if (v > r->rmax) r->rmax = v;
            }
    r->mu = sum / cnt;
    r->imean = calloc((size_t)ni, sizeof(double));
    r->bi = calloc((size_t)ni, sizeof(double));
    r->bu = calloc((size_t)nu, sizeof(double));
    for (int i = 0; i < ni; i++) {
        double s = 0, c = 0;
        for (int u = 0; u < nu; u++)
            if (AT(r->B, u, i, ni) > 0) { s += AT(r->R, u, i, ni); c += 1; }
        r->imean[i] = c > 0 ? s / c : r->mu;
    }
    for (int e = 0; e < 10; e++) {
        for (int i = 0; i < ni; i++) {
            double d = 0, c = 0;
            for (int u = 0; u < nu; u++)
                if (AT(r->B, u, i, ni) > 0) { d += AT(r->R, u, i, ni) - r->mu - r->bu[u]; c += 1; }
            r->bi[i] = d / (10.0 + c);
        }
        for (int u = 0; u < nu; u++) {
            double d = 0, c = 0;
            for (int i = 0; i < ni; i++)
                if (AT(r->B, u, i, ni) > 0) { d += AT(r->R, u, i, ni) - r->mu - r->bi[i]; c += 1; }
            r->bu[u] = d / (15.0 + c);
        }
    }
    r->S = calloc((size_t)ni * ni, sizeof(double));
    r->N = calloc((size_t)ni * ni, sizeof(double));
    for (int a = 0; a < ni; a++)
        for (int b = 0; b < ni; b++) {
            if (a == b) continue;
            double n = 0, sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0, d2 = 0;
            /* whole columns: rater counts, squared norms, dot product, squared distance */
            double ca = 0, cb = 0, na = 0, nb = 0, fdot = 0, fd2 = 0;
            for (int u = 0; u < nu; u++) {
                double xa = AT(r->R, u, a, ni), xb = AT(r->R, u, b, ni); /* 0 where unrated */
                ca += AT(r->B, u, a, ni);
                cb += AT(r->B, u, b, ni);
                na += xa * xa;
                nb += xb * xb;
                fdot += xa * xb;
                fd2 += (xa - xb) * (xa - xb);
            }
            for (int u = 0; u < nu; u++) {
                if (AT(r->B, u, a, ni) == 0 || AT(r->B, u, b, ni) == 0) continue;
                double x = AT(r->R, u, a, ni), y = AT(r->R, u, b, ni);
                if (metric == RK_METRIC_PEARSON_BASELINE) {
                    x -= r->mu + r->bu[u] + r->bi[a];
                    y -= r->mu + r->bu[u] + r->bi[b];
                }
                n += 1; sx += x; sy += y; sxx += x * x; syy += y * y; sxy += x * y;
                d2 += (x - y) * (x - y);
            }
            AT(r->N, a, b, ni) = n;
            double s = 0;
            if (n >= (min_support > 1 ? min_support : 1)) {
                if (metric == RK_METRIC_PEARSON) {
                    /* CONTRACT.md §2 as written: means over the co-raters */
                    double vx = n * sxx - sx * sx, vy = n * syy - sy * sy;
                    s = (vx > 1e-9 * n * sxx && vy > 1e-9 * n * syy) ? (n * sxy - sx * sy) / sqrt(vx * vy) : 0.0;
                } else if (metric == RK_METRIC_COSINE || metric == RK_METRIC_PEARSON_BASELINE) {
                    s = (sxx > 0 && syy > 0) ? sxy / sqrt(sxx * syy) : 0.0;
                } else if (metric == RK_METRIC_MSD) {
                    s = 1.0 / (1.0 + d2 / n);
                } else if (metric == RK_METRIC_COSINE_FULL) {
                    s = (na > 0 && nb > 0) ? fdot / sqrt(na * nb) : 0.0;
                } else if (metric == RK_METRIC_EUCLIDEAN_FULL) {
                    s = 1.0 / (1.0 + sqrt(fd2));
                } else if (metric == RK_METRIC_JACCARD) {
                    s = n / (ca + cb - n); /* |x ∧ y| / |x ∨ y| of the rating patterns */
                } else if (metric == RK_METRIC_EUCLIDEAN) {
                    s = 1.0 / (1.0 + sqrt(d2));
                } else if (metric == RK_METRIC_WEIGHTED_COSINE) {
                    /* x_a·x_b / (‖x_a‖^{2α} ‖x_b‖^{2(1−α)} + λ) over the whole columns */
                    const double den = pow(na, T_ALPHA) * pow(nb, 1.0 - T_ALPHA) + T_DEN;
                    s = den > 0 ? fdot / den : 0.0;
                } else if (metric == RK_METRIC_RP3BETA) {
                    s = fdot * pow(ca, -T_ALPHA) * pow(cb, -T_BETA);
                } else {
                    CU_FAIL("a metric of the table without a brute-force formula here");
                }
                if (shrink > 0) s *= (n - 1) / (n - 1 + shrink);
                if (fabs(s) < 1e-12) s = 0.0; /* a rounding residue of an exact 0 */
            }
            AT(r->S, a, b, ni) = s;
        }
}

/* Candidates j of row a with S > 0, best first (sim desc, index asc); with
 * g_negative (signed lists) every S != 0 by |S|. */
static const double *g_row;
static int g_negative;
static int cmp_rank(const void *pa, const void *pb)
{
    int a = *(const int *)pa, b = *(const int *)pb;
    const double va = g_negative ? fabs(g_row[a]) : g_row[a], vb = g_negative ? fabs(g_row[b]) : g_row[b];
    if (va != vb) return va > vb ? -1 : 1;
    return a - b;
}

static double ref_predict(const ref *r, int u, int i, int k, rk_predict_mode mode, int min_k, int *used)
{
    int ni = r->ni;
    int ku = 0, ki = 0;
    for (int j = 0; j < ni; j++) ku |= AT(r->B, u, j, ni) > 0;
    for (int v = 0; v < r->nu; v++) ki |= AT(r->B, v, i, ni) > 0;
    double fb = r->mu;
    if (mode == RK_PREDICT_MEANS && ki) fb = r->imean[i];
    if (mode == RK_PREDICT_BASELINE) fb = r->mu + (ku ? r->bu[u] : 0) + (ki ? r->bi[i] : 0);
    *used = 0;
    double est = fb;
    if (ku && ki) {
        int *cand = malloc(sizeof(int) * (size_t)ni), nc = 0;
        for (int j = 0; j < ni; j++)
            if (j != i && AT(r->B, u, j, ni) > 0 && AT(r->S, i, j, ni) > 0) cand[nc++] = j;
        g_row = &AT(r->S, i, 0, ni);
        qsort(cand, (size_t)nc, sizeof(int), cmp_rank);
        if (nc > k) nc = k;
        if (nc >= (min_k > 1 ? min_k : 1)) {
            double num = 0, den = 0;
            for (int t = 0; t < nc; t++) {
                int j = cand[t];
                double w = AT(r->S, i, j, ni), ruj = AT(r->R, u, j, ni), dev;
                if (mode == RK_PREDICT_BASIC) dev = ruj;
                else if (mode == RK_PREDICT_MEANS) dev = ruj - r->imean[j];
                else dev = ruj - (r->mu + r->bu[u] + r->bi[j]);
                num += w * dev;
                den += w;
            }
            double base = mode == RK_PREDICT_BASIC ? 0 : mode == RK_PREDICT_MEANS ? r->imean[i]
                                                                                 : r->mu + r->bu[u] + r->bi[i];
            est = base + num / den;
            *used = nc;
        }
        free(cand);
    }
    if (est < r->rmin) est = r->rmin;
    if (est > r->rmax) est = r->rmax;
    return est;
}

/* ---- random data ------------------------------------------------------------- */

typedef enum { VAL_HALF, VAL_REAL, VAL_TIES, VAL_ONES } value_kind;

static void make_data(rk_triples *t, int nu, int ni, double density, value_kind vk, unsigned long long seed)
{
    unsigned long long s = seed;
    int64_t cap = (int64_t)nu * ni;
    rk_triples_alloc(t, cap, 0, NULL);
    int64_t n = 0;
    for (int u = 0; u < nu; u++)
        for (int i = 0; i < ni; i++) {
            /* the last user and the last item stay empty when there are several */
            if ((nu > 2 && u == nu - 1) || (ni > 2 && i == ni - 1)) continue;
            if (rk_test_uniform(&s) >= density) continue;
            double v;
            if (vk == VAL_HALF) v = 0.5 * (double)(1 + rk_test_rand(&s) % 10);
            else if (vk == VAL_TIES) v = (double)(1 + rk_test_rand(&s) % 2);
            else if (vk == VAL_ONES) v = 1.0; /* --implicit: every rating counts as 1 */
            else v = 1.0 + 4.0 * rk_test_uniform(&s);
            t->user[n] = u;
            t->item[n] = i;
            t->rating[n] = (float)v;
            n++;
        }
    /* a user with a single rating */
    if (nu > 3 && ni > 1) {
        for (int64_t p = 0; p < n; p++)
            if (t->user[p] == nu - 2) t->user[p] = -1;
        int64_t w = 0;
        for (int64_t p = 0; p < n; p++)
            if (t->user[p] >= 0) {
                t->user[w] = t->user[p]; t->item[w] = t->item[p]; t->rating[w] = t->rating[p]; w++;
            }
        n = w;
        t->user[n] = nu - 2; t->item[n] = 0; t->rating[n] = vk == VAL_ONES ? 1.0f : 3.0f; n++;
    }
    t->n = n;
}

/* ---- the comparison ----------------------------------------------------------- */

static int g_checked_lists, g_checked_preds, g_negative_seen;
static int32_t g_chunk; /* chunk_items for the engine: 0 = sized from the cache */

static void compare(int nu, int ni, double density, value_kind vk, rk_metric metric, int k,
                    rk_predict_mode mode, int min_support, double shrink, int min_k,
                    unsigned long long seed)
{
    rk_triples t;
    make_data(&t, nu, ni, density, vk, seed);
    if (t.n == 0) { rk_triples_free(&t); return; }
    rk_model m;
    rk_error err;
    CU_ASSERT_FATAL(rk_model_build(&m, &t, nu, ni, 0, 0, 0, 1, &err) == RK_OK);
    ref r;
    ref_build(&r, nu, ni, &t, metric, min_support, shrink);

    rk_knn_opts o;
    rk_knn_opts_default(&o);
    o.sim.metric = metric;
    o.sim.min_support = min_support;
    o.sim.shrinkage = shrink;
    o.sim.alpha = T_ALPHA;
    o.sim.beta = T_BETA;
    o.sim.den_shrink = T_DEN;
    o.k = k;
    o.mode = mode;
    o.min_k = min_k;
    o.chunk_items = g_chunk;
    o.negative = g_negative;
    rk_lists l;
    CU_ASSERT_FATAL(rk_lists_alloc(&l, ni, k, &err) == RK_OK);

    /* queries: every (u, i) of a sample, known and unknown alike */
    unsigned long long s = seed ^ 0xABCDEFULL;
    int64_t nq = 3 * (int64_t)nu + 5;
    int32_t *qu = malloc(sizeof(int32_t) * (size_t)nq), *qi = malloc(sizeof(int32_t) * (size_t)nq);
    double *pred = malloc(sizeof(double) * (size_t)nq);
    int32_t *used = malloc(sizeof(int32_t) * (size_t)nq);
    for (int64_t a = 0; a < nq; a++) {
        qu[a] = (int32_t)(rk_test_rand(&s) % (unsigned)nu);
        qi[a] = (int32_t)(rk_test_rand(&s) % (unsigned)ni);
    }
    rk_queries q = {nq, qu, qi, pred, used, NULL, NULL};
    CU_ASSERT_FATAL(rk_knn_cpu(&m, &o, &l, &q, NULL, &err) == RK_OK);

    int *cand = malloc(sizeof(int) * (size_t)ni);
    for (int i = 0; i < ni; i++) {
        int nc = 0;
        for (int j = 0; j < ni; j++)
            if (AT(r.S, i, j, ni) > 0 || (g_negative && AT(r.S, i, j, ni) < 0)) cand[nc++] = j;
        g_row = &AT(r.S, i, 0, ni);
        qsort(cand, (size_t)nc, sizeof(int), cmp_rank);
        if (nc > k) nc = k;
        CU_ASSERT_EQUAL(l.len[i], nc);
        if (l.len[i] != nc) {
            fprintf(stderr, "item %d: %d neighbours, reference %d (metric %s)\n", i, l.len[i], nc, rk_metric_name(metric));
            continue;
        }
        for (int t2 = 0; t2 < nc; t2++) {
            int32_t got = l.nbr[(size_t)i * k + t2];
            double gs = l.sim[(size_t)i * k + t2], rs = AT(r.S, i, cand[t2], ni);
            g_negative_seen += gs < 0;
            /* a different neighbour is only allowed where the similarities (their
             * magnitudes, for signed lists) tie */
            if (got != cand[t2]) {
                const double a = AT(r.S, i, got, ni), tol = metric == RK_METRIC_PEARSON_BASELINE ? 1e-6 : 1e-12;
                CU_ASSERT(g_negative ? fabs(fabs(a) - fabs(rs)) <= tol : fabs(a - rs) <= tol);
                if (g_negative) CU_ASSERT(fabs(gs - a) <= 1e-6); /* the value is the neighbour's own */
            } else {
                CU_ASSERT(fabs(gs - rs) <= 1e-6);
            }
            CU_ASSERT_EQUAL(l.support[(size_t)i * k + t2], (int32_t)AT(r.N, i, got, ni));
            /* no neighbour twice, never the item itself */
            CU_ASSERT(got != i);
            for (int t3 = 0; t3 < t2; t3++) CU_ASSERT(l.nbr[(size_t)i * k + t3] != got);
        }
        g_checked_lists++;
    }
    /* the engine keeps pearson-baseline residuals in float (CONTRACT.md §2 asks 1e-4) */
    double ptol = metric == RK_METRIC_PEARSON_BASELINE ? 1e-6 : 1e-9;
    for (int64_t a = 0; a < nq; a++) {
        int ru;
        double rp = ref_predict(&r, qu[a], qi[a], k, mode, min_k, &ru);
        CU_ASSERT(fabs(rp - pred[a]) <= ptol);
        CU_ASSERT_EQUAL(ru, used[a]);
        if (fabs(rp - pred[a]) > ptol || ru != used[a])
            fprintf(stderr, "query (%d,%d) %s/%s: %.12g (%d used), reference %.12g (%d)\n", qu[a], qi[a],
                    rk_metric_name(metric), rk_predict_mode_name(mode), pred[a], used[a], rp, ru);
        g_checked_preds++;
    }
    free(cand); free(qu); free(qi); free(pred); free(used);
    rk_lists_free(&l);
    ref_free(&r);
    rk_model_free(&m);
    rk_triples_free(&t);
}

/* The metrics over co-raters (full: 0) or whole vectors (full: 1), from the
 * metric table, so that a new row is tested without touching this file. */
static rk_metric all_metrics[RK_METRIC_COUNT]; /* the co-rater metrics, filled by main */
static int n_metrics;
static const rk_predict_mode all_modes[] = {RK_PREDICT_BASIC, RK_PREDICT_MEANS, RK_PREDICT_BASELINE};

static void test_random_half_stars(void)
{
    CU_ASSERT(n_metrics >= 5);
    for (int m = 0; m < n_metrics; m++)
        for (int p = 0; p < 3; p++)
            compare(40, 30, 0.3, VAL_HALF, all_metrics[m], 5, all_modes[p], 1,
                    rk_sim_default_shrinkage(all_metrics[m]), 1, 1000 + 10 * m + p);
}

static void test_random_real_values(void)
{
    for (int m = 0; m < n_metrics; m++)
        for (int p = 0; p < 3; p++)
            compare(35, 25, 0.35, VAL_REAL, all_metrics[m], 4, all_modes[p], 1, 0.0, 1, 2000 + 10 * m + p);
}

static void test_support_shrinkage_min_k(void)
{
    for (int m = 0; m < n_metrics; m++) {
        compare(50, 20, 0.4, VAL_HALF, all_metrics[m], 6, RK_PREDICT_MEANS, 4, 10.0, 3, 3000 + m);
        compare(50, 20, 0.4, VAL_REAL, all_metrics[m], 3, RK_PREDICT_BASELINE, 2, 2.5, 2, 3100 + m);
    }
}

static void test_many_ties(void)
{
    for (int m = 0; m < n_metrics; m++)
        compare(30, 25, 0.5, VAL_TIES, all_metrics[m], 3, RK_PREDICT_BASIC, 1, 0.0, 1, 4000 + m);
}

static void test_k_larger_than_items(void)
{
    compare(20, 6, 0.6, VAL_HALF, RK_METRIC_PEARSON, 50, RK_PREDICT_MEANS, 1, 0.0, 1, 5000);
    compare(20, 6, 0.6, VAL_HALF, RK_METRIC_MSD, 50, RK_PREDICT_BASELINE, 1, 0.0, 1, 5001);
}

static void test_one_item(void)
{
    compare(10, 1, 0.9, VAL_HALF, RK_METRIC_PEARSON, 5, RK_PREDICT_MEANS, 1, 0.0, 1, 6000);
    compare(10, 1, 0.9, VAL_HALF, RK_METRIC_COSINE, 1, RK_PREDICT_BASIC, 1, 0.0, 1, 6001);
}

static void test_shapes(void)
{
    unsigned long long s = 77;
    for (int rep = 0; rep < 12; rep++) {
        int nu = 2 + (int)(rk_test_rand(&s) % 40), ni = 1 + (int)(rk_test_rand(&s) % 40);
        double dens = 0.05 + 0.9 * rk_test_uniform(&s);
        int k = 1 + (int)(rk_test_rand(&s) % 12);
        compare(nu, ni, dens, (value_kind)(rep % 3), all_metrics[rep % n_metrics], k, all_modes[rep % 3],
                1 + (int)(rk_test_rand(&s) % 3), (rep % 4 == 0) ? 5.0 : 0.0, 1 + rep % 2, 7000 + rep);
    }
    /* everything was actually compared */
    CU_ASSERT(g_checked_lists > 1000);
    CU_ASSERT(g_checked_preds > 1000);
}

/* --negative yes: every co-rater metric's lists hold the k largest |sim|,
 * signed, against the dense reference; the predictions, checked in the same
 * calls, still read only the positive similarities. */
static void test_negative_lists(void)
{
    const int lists0 = g_checked_lists;
    g_negative = 1;
    for (int m = 0; m < n_metrics; m++) {
        compare(40, 30, 0.3, VAL_HALF, all_metrics[m], 5, RK_PREDICT_MEANS, 1, 0.0, 1, 9100 + m);
        compare(35, 25, 0.35, VAL_REAL, all_metrics[m], 4, RK_PREDICT_BASELINE, 2, 2.5, 1, 9200 + m);
        compare(30, 25, 0.5, VAL_TIES, all_metrics[m], 3, RK_PREDICT_BASIC, 1, 0.0, 1, 9300 + m);
    }
    compare(20, 6, 0.6, VAL_HALF, RK_METRIC_PEARSON, 50, RK_PREDICT_MEANS, 1, 0.0, 1, 9400);
    g_chunk = 3; /* dense and chunked walks */
    compare(60, 40, 0.6, VAL_HALF, RK_METRIC_PEARSON, 7, RK_PREDICT_MEANS, 1, 5.0, 1, 9401);
    g_chunk = 0;
    g_negative = 0;
    CU_ASSERT(g_checked_lists - lists0 > 400);
    CU_ASSERT(g_negative_seen > 100); /* negative neighbours were met */
}

static void test_threads_agree(void)
{
    /* the same run with 1 and 2 threads gives identical lists */
    rk_triples t;
    make_data(&t, 60, 50, 0.3, VAL_HALF, 8000);
    rk_model m;
    CU_ASSERT_FATAL(rk_model_build(&m, &t, 60, 50, 0, 0, 0, 1, NULL) == RK_OK);
    rk_knn_opts o;
    rk_knn_opts_default(&o);
    o.k = 7;
    rk_lists a, b;
    rk_lists_alloc(&a, 50, 7, NULL);
    rk_lists_alloc(&b, 50, 7, NULL);
    o.threads = 1;
    CU_ASSERT(rk_knn_cpu(&m, &o, &a, NULL, NULL, NULL) == RK_OK);
    o.threads = 2;
    CU_ASSERT(rk_knn_cpu(&m, &o, &b, NULL, NULL, NULL) == RK_OK);
    CU_ASSERT(memcmp(a.len, b.len, 50 * sizeof(int32_t)) == 0);
    CU_ASSERT(memcmp(a.nbr, b.nbr, 50 * 7 * sizeof(int32_t)) == 0);
    CU_ASSERT(memcmp(a.sim, b.sim, 50 * 7 * sizeof(float)) == 0);
    rk_lists_free(&a);
    rk_lists_free(&b);
    rk_model_free(&m);
    rk_triples_free(&t);
}

/* The upper triangle's work of each row (the GPU's symmetric tile, shared
 * out by it among GPUs) against a count over every pair of every user's
 * items, with 1 and 3 threads, and the full rows' work it halves. */
static void test_sym_cost(void)
{
    for (int shape = 0; shape < 3; shape++) {
        const int nu = 40 + 30 * shape, ni = shape == 2 ? 1 : 25 + 20 * shape;
        rk_triples t;
        make_data(&t, nu, ni, 0.3, VAL_HALF, 8100 + shape);
        rk_model m;
        CU_ASSERT_FATAL(rk_model_build(&m, &t, nu, ni, 0, 0, 0, 1, NULL) == RK_OK);
        int64_t *want = calloc((size_t)ni, sizeof *want), *got = calloc((size_t)ni, sizeof *got);
        int32_t *order = malloc((size_t)ni * sizeof *order);
        int64_t total = 0;
        for (int32_t u = 0; u < m.by_user.n_rows; u++)
            for (int64_t a = m.by_user.ptr[u]; a < m.by_user.ptr[u + 1]; a++)
                for (int64_t b = a + 1; b < m.by_user.ptr[u + 1]; b++) {
                    const int32_t i = m.by_user.idx[a], j = m.by_user.idx[b];
                    want[i < j ? i : j]++;
                    total++;
                }
        const int was = rk_omp_max_threads();
        for (int threads = 1; threads <= 3; threads += 2) {
            rk_omp_set_threads(threads);
            memset(got, 0xff, (size_t)ni * sizeof *got);
            CU_ASSERT_EQUAL(rk_knn_item_sym_cost(&m, got), total);
            CU_ASSERT(memcmp(got, want, (size_t)ni * sizeof *got) == 0);
        }
        rk_omp_set_threads(was);
        /* every pair once against every pair twice and the self-pairs */
        CU_ASSERT_EQUAL(2 * total + m.by_user.nnz, rk_knn_item_order(&m, order, NULL));
        free(want);
        free(got);
        free(order);
        rk_model_free(&m);
        rk_triples_free(&t);
    }
}

/* Columns in chunks of 1, 2, 7 and more than the item count: every chunk
 * boundary falls inside users' rows, and the results must not change. */
static void test_forced_chunks(void)
{
    static const int32_t chunks[] = {1, 2, 7, 1000};
    int before = g_checked_lists;
    for (int c = 0; c < 4; c++) {
        g_chunk = chunks[c];
        for (int m = 0; m < n_metrics; m++)
            for (int p = 0; p < 3; p++) {
                /* half stars: packed sums; real values: double sums */
                compare(30, 23, 0.35, VAL_HALF, all_metrics[m], 4, all_modes[p], 1,
                        rk_sim_default_shrinkage(all_metrics[m]), 1, 9100 + 10 * m + p);
                compare(25, 19, 0.4, VAL_REAL, all_metrics[m], 3, all_modes[p], 2, 0.0, 1, 9200 + 10 * m + p);
            }
        /* dense rows (every item touched) and a single item */
        compare(40, 12, 0.9, VAL_TIES, RK_METRIC_PEARSON, 5, RK_PREDICT_MEANS, 1, 0.0, 1, 9300 + c);
        compare(8, 1, 0.9, VAL_HALF, RK_METRIC_COSINE, 2, RK_PREDICT_BASIC, 1, 0.0, 1, 9310 + c);
    }
    g_chunk = 0;
    CU_ASSERT(g_checked_lists - before > 4 * 5 * 3 * 30);
}

/* A grid too wide to pack (ratings 1..200 on the grid of 1) takes the
 * unpacked integer sums; chunks must not change them either. */
static void test_wide_grid_chunks(void)
{
    rk_triples t;
    make_data(&t, 30, 20, 0.5, VAL_REAL, 9400);
    for (int64_t p = 0; p < t.n; p++) t.rating[p] = (float)floor(t.rating[p] * 50.0); /* 50..250 */
    rk_model m;
    CU_ASSERT_FATAL(rk_model_build(&m, &t, 30, 20, 0, 0, 0, 1, NULL) == RK_OK);
    rk_knn_opts o;
    rk_knn_opts_default(&o);
    o.k = 6;
    rk_lists a, b;
    rk_knn_stats st;
    rk_lists_alloc(&a, 20, 6, NULL);
    rk_lists_alloc(&b, 20, 6, NULL);
    CU_ASSERT(rk_knn_cpu(&m, &o, &a, NULL, &st, NULL) == RK_OK);
    CU_ASSERT(strstr(st.path, "int32 grid") != NULL);
    o.chunk_items = 3;
    CU_ASSERT(rk_knn_cpu(&m, &o, &b, NULL, NULL, NULL) == RK_OK);
    CU_ASSERT(memcmp(a.len, b.len, 20 * sizeof(int32_t)) == 0);
    CU_ASSERT(memcmp(a.nbr, b.nbr, 20 * 6 * sizeof(int32_t)) == 0);
    CU_ASSERT(memcmp(a.sim, b.sim, 20 * 6 * sizeof(float)) == 0);
    CU_ASSERT(memcmp(a.support, b.support, 20 * 6 * sizeof(int32_t)) == 0);
    int listed = 0;
    for (int i = 0; i < 20; i++) listed += a.len[i];
    CU_ASSERT(listed > 20);
    rk_lists_free(&a);
    rk_lists_free(&b);
    rk_model_free(&m);
    rk_triples_free(&t);
}

/* A large, sparse catalogue: items whose raters have short rows are walked
 * whole, the others in chunks (when the cache gives more than one chunk).
 * Lists and predictions must be those of every row in one chunk and of
 * forced narrow chunks, bit for bit, on the packed grid and in double. */
static void test_sparse_catalogue(void)
{
    const int32_t nu = 1000, ni = 200000, heavy = 10;
    for (int real = 0; real < 2; real++) {
        rk_triples t;
        unsigned long long s = 9700 + (unsigned long long)real;
        CU_ASSERT_FATAL(rk_triples_alloc(&t, heavy * 2000 + (nu - heavy) * 20, 0, NULL) == RK_OK);
        int64_t n = 0;
        for (int32_t u = 0; u < nu; u++) {
            const int32_t len = u < heavy ? 2000 : 20;
            /* 97 and 101 are prime to ni: the items of a row are distinct */
            const int32_t start = (int32_t)(rk_test_rand(&s) % (unsigned)(u % 2 ? ni : 3000));
            for (int32_t a = 0; a < len; a++) {
                t.user[n] = u;
                t.item[n] = (int32_t)(((int64_t)start + (int64_t)a * (u < heavy ? 97 : 101)) % ni);
                t.rating[n] = real ? (float)(1.0 + 4.0 * rk_test_uniform(&s))
                                   : (float)(0.5 * (double)(1 + rk_test_rand(&s) % 10));
                n++;
            }
        }
        t.n = n;
        rk_model m;
        CU_ASSERT_FATAL(rk_model_build(&m, &t, nu, ni, 0, 0, 0, 1, NULL) == RK_OK);
        rk_knn_opts o;
        rk_knn_opts_default(&o);
        o.k = 5;
        rk_lists l[3];
        enum { NQ = 3000 };
        static int32_t qu[NQ], qi[NQ], used[3][NQ];
        static double pred[3][NQ];
        for (int a = 0; a < NQ; a++) { /* training pairs: the user rated items beside the target */
            const int64_t p = (int64_t)(rk_test_rand(&s) % (unsigned long long)t.n);
            qu[a] = t.user[p];
            qi[a] = t.item[p];
        }
        const int32_t chunks[3] = {0, ni, 1000}; /* the engine's choice, one chunk, 200 chunks */
        for (int c = 0; c < 3; c++) {
            rk_knn_stats st;
            rk_queries q = {NQ, qu, qi, pred[c], used[c], NULL, NULL};
            o.chunk_items = chunks[c];
            CU_ASSERT_FATAL(rk_lists_alloc(&l[c], ni, o.k, NULL) == RK_OK);
            CU_ASSERT_FATAL(rk_knn_cpu(&m, &o, &l[c], &q, &st, NULL) == RK_OK);
            CU_ASSERT(strstr(st.path, real ? "double" : "packed") != NULL);
        }
        int64_t listed = 0, answered = 0;
        for (int32_t i = 0; i < ni; i++) listed += l[0].len[i];
        for (int a = 0; a < NQ; a++) answered += used[0][a] > 0;
        CU_ASSERT(listed > 10000);
        CU_ASSERT(answered > 100);
        for (int c = 1; c < 3; c++) {
            CU_ASSERT(memcmp(l[0].len, l[c].len, (size_t)ni * sizeof(int32_t)) == 0);
            CU_ASSERT(memcmp(l[0].nbr, l[c].nbr, (size_t)ni * 5 * sizeof(int32_t)) == 0);
            CU_ASSERT(memcmp(l[0].sim, l[c].sim, (size_t)ni * 5 * sizeof(float)) == 0);
            CU_ASSERT(memcmp(l[0].support, l[c].support, (size_t)ni * 5 * sizeof(int32_t)) == 0);
            CU_ASSERT(memcmp(pred[0], pred[c], sizeof pred[0]) == 0);
            CU_ASSERT(memcmp(used[0], used[c], sizeof used[0]) == 0);
        }
        for (int c = 0; c < 3; c++) rk_lists_free(&l[c]);
        rk_model_free(&m);
        rk_triples_free(&t);
    }
}

/* The full-vector metrics (cosine-full, euclidean-full, jaccard) against the
 * dense columns: half stars, real values, ties and all-ones (--implicit)
 * data under every prediction mode, support, shrinkage and min-k, an item
 * rated by every user, one item, k above the item count, column chunks and
 * random shapes. */
static void test_full_vector_metrics(void)
{
    const int before = g_checked_lists, before_p = g_checked_preds;
    rk_metric full_metrics[RK_METRIC_COUNT];
    const int n_full = rk_test_metrics(1, full_metrics);
    CU_ASSERT(n_full >= 5);
    for (int m = 0; m < n_full; m++) {
        const rk_metric mt = full_metrics[m];
        for (int p = 0; p < 3; p++) {
            compare(40, 30, 0.3, VAL_HALF, mt, 5, all_modes[p], 1, 0.0, 1, 11000 + 10 * m + p);
            compare(35, 25, 0.35, VAL_REAL, mt, 4, all_modes[p], 1, 0.0, 1, 11100 + 10 * m + p);
            compare(40, 30, 0.3, VAL_ONES, mt, 6, all_modes[p], 1, 0.0, 1, 11200 + 10 * m + p);
        }
        compare(30, 25, 0.5, VAL_TIES, mt, 3, RK_PREDICT_BASIC, 1, 0.0, 1, 11300 + m);
        compare(50, 20, 0.4, VAL_HALF, mt, 6, RK_PREDICT_MEANS, 4, 10.0, 3, 11400 + m);
        compare(50, 20, 0.4, VAL_REAL, mt, 3, RK_PREDICT_BASELINE, 2, 2.5, 2, 11500 + m);
        compare(25, 15, 1.0, VAL_HALF, mt, 5, RK_PREDICT_MEANS, 1, 0.0, 1, 11600 + m); /* every user rates every item */
        compare(20, 6, 0.6, VAL_HALF, mt, 50, RK_PREDICT_MEANS, 1, 0.0, 1, 11700 + m);  /* k > items */
        compare(10, 1, 0.9, VAL_ONES, mt, 5, RK_PREDICT_MEANS, 1, 0.0, 1, 11800 + m);  /* one item */
        static const int32_t chunks[] = {1, 7};
        for (int c = 0; c < 2; c++) {
            g_chunk = chunks[c];
            compare(30, 23, 0.35, VAL_HALF, mt, 4, RK_PREDICT_MEANS, 1, 0.0, 1, 11900 + 10 * m + c);
            compare(25, 19, 0.4, VAL_REAL, mt, 3, RK_PREDICT_BASIC, 2, 0.0, 1, 11950 + 10 * m + c);
        }
        g_chunk = 0;
    }
    unsigned long long s = 12000;
    for (int rep = 0; rep < 12; rep++) {
        int nu = 2 + (int)(rk_test_rand(&s) % 40), ni = 1 + (int)(rk_test_rand(&s) % 40);
        double dens = 0.05 + 0.9 * rk_test_uniform(&s);
        int k = 1 + (int)(rk_test_rand(&s) % 12);
        compare(nu, ni, dens, (value_kind)(rep % 4), full_metrics[rep % 3], k, all_modes[rep % 3],
                1 + (int)(rk_test_rand(&s) % 3), (rep % 4 == 0) ? 5.0 : 0.0, 1 + rep % 2, 12100 + rep);
    }
    CU_ASSERT(g_checked_lists - before > 1000);
    CU_ASSERT(g_checked_preds - before_p > 1000);
    /* off the grid, the full-vector metrics take the two-sum accumulator that
     * the comparisons above checked; a co-rater metric keeps all six sums */
    rk_triples t;
    make_data(&t, 20, 15, 0.5, VAL_REAL, 12500);
    rk_model mm;
    CU_ASSERT_FATAL(rk_model_build(&mm, &t, 20, 15, 0, 0, 0, 1, NULL) == RK_OK);
    rk_knn_opts o;
    rk_knn_opts_default(&o);
    o.k = 3;
    rk_lists l;
    rk_knn_stats st;
    CU_ASSERT_FATAL(rk_lists_alloc(&l, 15, 3, NULL) == RK_OK);
    for (int m = 0; m < n_full; m++) {
        o.sim.metric = full_metrics[m];
        CU_ASSERT(rk_knn_cpu(&mm, &o, &l, NULL, &st, NULL) == RK_OK);
        CU_ASSERT_STRING_EQUAL(st.path, "double dot");
    }
    o.sim.metric = RK_METRIC_COSINE;
    CU_ASSERT(rk_knn_cpu(&mm, &o, &l, NULL, &st, NULL) == RK_OK);
    CU_ASSERT_STRING_EQUAL(st.path, "double");
    rk_lists_free(&l);
    rk_model_free(&mm);
    rk_triples_free(&t);
}

/* The grid scale as it was first written (a whole pass per scale tried,
 * libm's nearbyint per value): the version that stops early and tests
 * integers inline must give the same scale and qmax on every kind of value. */
static double grid_scale_ref(const rk_model *m, double *qmax_out)
{
    static const double scales[] = {1, 2, 4, 5, 10, 20, 100};
    const rk_csr *U = &m->by_user, *I = &m->by_item;
    int64_t max_deg = 0;
    for (int32_t i = 0; i < I->n_rows; i++)
        if (I->ptr[i + 1] - I->ptr[i] > max_deg) max_deg = I->ptr[i + 1] - I->ptr[i];
    for (size_t t = 0; t < sizeof scales / sizeof scales[0]; t++) {
        double s = scales[t], qmax = 0.0;
        int ok = 1;
        for (int64_t p = 0; p < U->nnz; p++) {
            double q = (double)U->val[p] * s;
            if (q != nearbyint(q)) ok = 0;
            if (fabs(q) > qmax) qmax = fabs(q);
        }
        if (!ok) continue;
        if (qmax_out != NULL) *qmax_out = qmax;
        if (qmax * qmax * (double)(max_deg + 1) < 2147483647.0) return s;
        return 0.0;
    }
    return 0.0;
}

static void test_grid_scale(void)
{
    /* grids of 1, 1/2, 1/4, 1/5, 1/10, 1/20, 1/100, none; negative values;
     * values too large for the int32 sums; values of 2^52 and more */
    static const double steps[] = {1, 0.5, 0.25, 0.2, 0.1, 0.05, 0.01, 0.003, 1e-7};
    static const double mags[] = {5, -5, 1000, 3e7, 1e17};
    for (size_t a = 0; a < sizeof steps / sizeof steps[0]; a++)
        for (size_t b = 0; b < sizeof mags / sizeof mags[0]; b++) {
            rk_triples t;
            make_data(&t, 12, 9, 0.6, VAL_REAL, 700 + a * 10 + b);
            for (int64_t p = 0; p < t.n; p++)
                t.rating[p] = (float)(mags[b] * (double)(int)(t.rating[p] * 7.0) / 35.0);
            for (int64_t p = 0; p < t.n; p++)
                t.rating[p] = (float)(nearbyint((double)t.rating[p] / steps[a]) * steps[a]);
            rk_model m;
            CU_ASSERT_FATAL(rk_model_build(&m, &t, 12, 9, 0, 0, 0, 1, NULL) == RK_OK);
            double q1 = -1.0, q2 = -1.0;
            const double s1 = rk_knn_grid_scale(&m, &q1), s2 = grid_scale_ref(&m, &q2);
            if (s1 != s2 || q1 != q2) fprintf(stderr, "\nstep %g mag %g: scale %g/%g qmax %g/%g\n", steps[a], mags[b], s1, s2, q1, q2);
            CU_ASSERT_EQUAL(s1, s2);
            CU_ASSERT_EQUAL(q1, q2);
            rk_model_free(&m);
            rk_triples_free(&t);
        }
    /* more values than a block of the parallel scan (65,536): half stars
     * with one quarter star among the last users' ratings, or none */
    for (int quarter = 0; quarter < 2; quarter++) {
        rk_triples t;
        make_data(&t, 700, 400, 0.8, VAL_HALF, 7900 + (unsigned long long)quarter);
        CU_ASSERT_FATAL(t.n > 3 * 65536);
        if (quarter) t.rating[t.n - 5] = 2.25f;
        rk_model m;
        CU_ASSERT_FATAL(rk_model_build(&m, &t, 700, 400, 0, 0, 0, 1, NULL) == RK_OK);
        double q1 = -1.0, q2 = -1.0;
        const double s1 = rk_knn_grid_scale(&m, &q1), s2 = grid_scale_ref(&m, &q2);
        CU_ASSERT_EQUAL(s1, quarter ? 4.0 : 2.0);
        CU_ASSERT_EQUAL(s1, s2);
        CU_ASSERT_EQUAL(q1, q2);
        rk_model_free(&m);
        rk_triples_free(&t);
    }
}

/* rk_knn_wide_grid: integers below 2^31 with qmax^2 (max degree + 1) below
 * 2^53, against a direct evaluation of the bound on values placed on either
 * side of it (float values: 2^24 and more are integers, steps of 2, 4..). */
static void test_wide_grid(void)
{
    static const double mags[] = {3, 1e6, 16777216.0, 6.7e7, 9.4e7, 1.2e8, 2147483648.0, 5e9};
    for (size_t b = 0; b < sizeof mags / sizeof mags[0]; b++)
        for (int half = 0; half < 2; half++) {
            rk_triples t;
            make_data(&t, 14, 9, 0.7, VAL_HALF, 9100 + b * 2 + (unsigned long long)half);
            for (int64_t p = 0; p < t.n; p++) t.rating[p] = (float)nearbyint(mags[b] * t.rating[p] / 5.0);
            if (half) t.rating[t.n / 2] = 2.5f;
            rk_model m;
            CU_ASSERT_FATAL(rk_model_build(&m, &t, 14, 9, 0, 0, 0, 1, NULL) == RK_OK);
            int64_t deg = 0;
            for (int32_t i = 0; i < m.by_item.n_rows; i++)
                if (m.by_item.ptr[i + 1] - m.by_item.ptr[i] > deg) deg = m.by_item.ptr[i + 1] - m.by_item.ptr[i];
            double qmax = 0.0;
            int ints = 1;
            for (int64_t p = 0; p < m.by_user.nnz; p++) {
                const double v = m.by_user.val[p];
                ints = ints && v == nearbyint(v);
                if (fabs(v) > qmax) qmax = fabs(v);
            }
            const int want = ints && qmax < 2147483648.0 && qmax * qmax * (double)(deg + 1) < 9007199254740992.0;
            CU_ASSERT_EQUAL(rk_knn_wide_grid(&m), want);
            if (b == 0) CU_ASSERT_EQUAL(want, !half); /* small integers pass, a half star fails */
            if (mags[b] >= 2147483648.0) CU_ASSERT_EQUAL(want, 0);
            rk_model_free(&m);
            rk_triples_free(&t);
        }
}

static void test_bad_arguments(void)
{
    rk_triples t;
    make_data(&t, 10, 8, 0.5, VAL_HALF, 9000);
    rk_model m;
    CU_ASSERT_FATAL(rk_model_build(&m, &t, 10, 8, 0, 0, 0, 1, NULL) == RK_OK);
    rk_knn_opts o;
    rk_knn_opts_default(&o);
    rk_lists l;
    rk_error err;
    rk_lists_alloc(&l, 8, 5, NULL);
    o.k = 0;
    CU_ASSERT(rk_knn_cpu(&m, &o, &l, NULL, NULL, &err) == RK_E_ARG);
    o.k = 6; /* lists were made for k = 5 */
    CU_ASSERT(rk_knn_cpu(&m, &o, &l, NULL, NULL, &err) == RK_E_ARG);
    CU_ASSERT(strstr(err.msg, "k = 6") != NULL);
    rk_lists_free(&l);
    CU_ASSERT(rk_lists_alloc(&l, 8, 0, &err) == RK_E_ARG);
    rk_lists_free(&l);
    rk_model_free(&m);
    rk_triples_free(&t);
}

int main(void)
{
    n_metrics = rk_test_metrics(0, all_metrics);
    static const rk_test_case cases[] = {
        {"every metric and mode, half-star ratings", test_random_half_stars},
        {"every metric and mode, real-valued ratings", test_random_real_values},
        {"min-support, shrinkage and min-k", test_support_shrinkage_min_k},
        {"many ties", test_many_ties},
        {"k larger than the item count", test_k_larger_than_items},
        {"one item", test_one_item},
        {"random shapes", test_shapes},
        {"signed lists (--negative yes): the k largest |sim|", test_negative_lists},
        {"1 and 2 threads agree", test_threads_agree},
        {"the upper triangle's work a row", test_sym_cost},
        {"forced column chunks", test_forced_chunks},
        {"unpacked grid in chunks", test_wide_grid_chunks},
        {"a sparse catalogue of 200,000 items: whole rows and chunks agree", test_sparse_catalogue},
        {"full-vector metrics against the dense columns", test_full_vector_metrics},
        {"the grid scale against the pass-per-scale version", test_grid_scale},
        {"the 64-bit integer grid of the full-vector metrics", test_wide_grid},
        {"bad arguments", test_bad_arguments},
        {NULL, NULL},
    };
    return rk_test_main("knn", cases);
}
