/* rk_model: μ, item means, scale, known users/items, the ALS baselines of
 * CONTRACT.md §4 against a straightforward re-implementation over the triples, and
 * the residuals, on tiny hand-made data sets. */
#include "rk_model.h"
#include "rk_knn.h"
#include "test_util.h"

#include <math.h>
#include <string.h>

/* The data set (5 users, 5 items; user 4 and item 4 have no rating), in a
 * file order that is not sorted:
 *
 *            i0    i1    i2    i3    i4
 *   u0       4     3     .     4.5   .
 *   u1       4.5   .     1     .     .
 *   u2       .     2     2     4     .
 *   u3       1.5   .     .     3.5   .
 *   u4       .     .     .     .     .
 *
 *   Σ = 4+3+4.5 + 4.5+1 + 2+2+4 + 1.5+3.5 = 30 over 10 ratings → μ = 3
 *   item means: i0 (4+4.5+1.5)/3 = 10/3, i1 (3+2)/2 = 2.5, i2 (1+2)/2 = 1.5,
 *               i3 (4.5+4+3.5)/3 = 4, i4 unknown → μ = 3
 *   data scale: min 1, max 4.5 */
#define NU 5
#define NI 5
#define NR 10
static int32_t D_user[NR] = {2, 0, 1, 3, 0, 2, 1, 0, 3, 2};
static int32_t D_item[NR] = {3, 1, 0, 3, 0, 1, 2, 3, 0, 2};
static float D_rating[NR] = {4, 3, 4.5f, 3.5f, 4, 2, 1, 4.5f, 1.5f, 2};

static rk_triples data_triples(void)
{
    rk_triples t;
    t.n = NR;
    t.user = D_user;
    t.item = D_item;
    t.rating = D_rating;
    t.time = NULL;
    return t;
}

/* The baselines, straight from CONTRACT.md §4 over the triples (not the CSR):
 * b = 0; 10 rounds of: every b_i = Σ_u (r − μ − b_u) / (10 + |U_i|), then every
 * b_u = Σ_i (r − μ − b_i) / (15 + |I_u|). */
static void ref_baselines(const rk_triples *t, int nu, int ni, double mu, double *bu, double *bi)
{
    for (int u = 0; u < nu; u++) bu[u] = 0;
    for (int i = 0; i < ni; i++) bi[i] = 0;
    for (int epoch = 0; epoch < 10; epoch++) {
        for (int i = 0; i < ni; i++) {
            double s = 0;
            int c = 0;
            for (int64_t p = 0; p < t->n; p++)
                if (t->item[p] == i) {
                    s += (double)t->rating[p] - mu - bu[t->user[p]];
                    c++;
                }
            bi[i] = s / (10.0 + c);
        }
        for (int u = 0; u < nu; u++) {
            double s = 0;
            int c = 0;
            for (int64_t p = 0; p < t->n; p++)
                if (t->user[p] == u) {
                    s += (double)t->rating[p] - mu - bi[t->item[p]];
                    c++;
                }
            bu[u] = s / (15.0 + c);
        }
    }
}

static void test_stats(void)
{
    rk_triples t = data_triples();
    rk_model m;
    rk_error err;
    rk_error_clear(&err);
    rk_status s = rk_model_build(&m, &t, NU, NI, 0, 0, 0, 1, &err);
    CU_ASSERT_EQUAL_FATAL(s, RK_OK);
    CU_ASSERT_DOUBLE_EQUAL(m.mu, 3.0, 1e-15);
    CU_ASSERT_EQUAL(m.rmin, 1.0);
    CU_ASSERT_EQUAL(m.rmax, 4.5);
    const double means[NI] = {10.0 / 3.0, 2.5, 1.5, 4.0, 3.0};
    for (int i = 0; i < NI; i++) CU_ASSERT_DOUBLE_EQUAL(m.item_mean[i], means[i], 1e-15);
    /* dimensions: every index space, the unrated ones included */
    CU_ASSERT_EQUAL(m.by_user.n_rows, NU);
    CU_ASSERT_EQUAL(m.by_user.n_cols, NI);
    CU_ASSERT_EQUAL(m.by_user.nnz, NR);
    CU_ASSERT_EQUAL(m.by_item.n_rows, NI);
    CU_ASSERT_EQUAL(m.by_item.n_cols, NU);
    CU_ASSERT_EQUAL(m.by_item.nnz, NR);
    /* the input is not modified */
    CU_ASSERT_EQUAL(D_user[0], 2);
    CU_ASSERT_EQUAL(D_rating[2], 4.5f);
    rk_model_free(&m);
    CU_ASSERT_PTR_NULL(m.item_mean);
    CU_ASSERT_PTR_NULL(m.bu);
    CU_ASSERT_PTR_NULL(m.by_user.ptr);
    rk_model_free(&m); /* twice is harmless */
    rk_model_free(NULL);
}

static void test_given_scale(void)
{
    rk_triples t = data_triples();
    rk_model m;
    CU_ASSERT_EQUAL_FATAL(rk_model_build(&m, &t, NU, NI, 1, 0.5, 5.0, 1, NULL), RK_OK);
    CU_ASSERT_EQUAL(m.rmin, 0.5);
    CU_ASSERT_EQUAL(m.rmax, 5.0);
    CU_ASSERT_DOUBLE_EQUAL(m.mu, 3.0, 1e-15); /* the scale does not change μ */
    rk_model_free(&m);
}

/* The CSR layouts: by_user sorted by (user, item), by_item by (item, user). */
static void test_layout(void)
{
    rk_triples t = data_triples();
    rk_model m;
    CU_ASSERT_EQUAL_FATAL(rk_model_build(&m, &t, NU, NI, 0, 0, 0, 1, NULL), RK_OK);
    const int64_t uptr[NU + 1] = {0, 3, 5, 8, 10, 10};
    const int32_t uidx[NR] = {0, 1, 3, 0, 2, 1, 2, 3, 0, 3};
    const float uval[NR] = {4, 3, 4.5f, 4.5f, 1, 2, 2, 4, 1.5f, 3.5f};
    const int64_t iptr[NI + 1] = {0, 3, 5, 7, 10, 10};
    const int32_t iidx[NR] = {0, 1, 3, 0, 2, 1, 2, 0, 2, 3};
    const float ival[NR] = {4, 4.5f, 1.5f, 3, 2, 1, 2, 4.5f, 4, 3.5f};
    for (int r = 0; r <= NU; r++) CU_ASSERT_EQUAL(m.by_user.ptr[r], uptr[r]);
    for (int r = 0; r <= NI; r++) CU_ASSERT_EQUAL(m.by_item.ptr[r], iptr[r]);
    for (int p = 0; p < NR; p++) {
        CU_ASSERT_EQUAL(m.by_user.idx[p], uidx[p]);
        CU_ASSERT_EQUAL(m.by_user.val[p], uval[p]);
        CU_ASSERT_EQUAL(m.by_item.idx[p], iidx[p]);
        CU_ASSERT_EQUAL(m.by_item.val[p], ival[p]);
    }
    rk_model_free(&m);
}

static void test_known(void)
{
    rk_triples t = data_triples();
    rk_model m;
    CU_ASSERT_EQUAL_FATAL(rk_model_build(&m, &t, NU, NI, 0, 0, 0, 1, NULL), RK_OK);
    for (int u = 0; u < 4; u++) CU_ASSERT_EQUAL(rk_model_user_known(&m, u), 1);
    for (int i = 0; i < 4; i++) CU_ASSERT_EQUAL(rk_model_item_known(&m, i), 1);
    CU_ASSERT_EQUAL(rk_model_user_known(&m, 4), 0); /* in range, no rating */
    CU_ASSERT_EQUAL(rk_model_item_known(&m, 4), 0);
    CU_ASSERT_EQUAL(rk_model_user_known(&m, 5), 0); /* out of range */
    CU_ASSERT_EQUAL(rk_model_item_known(&m, 5), 0);
    CU_ASSERT_EQUAL(rk_model_user_known(&m, -1), 0);
    CU_ASSERT_EQUAL(rk_model_item_known(&m, -1), 0);
    CU_ASSERT_EQUAL(rk_model_user_known(&m, INT32_MAX), 0);
    CU_ASSERT_EQUAL(rk_model_item_known(&m, INT32_MIN), 0);
    /* unknown: b = 0 and item mean μ */
    CU_ASSERT_EQUAL(m.bu[4], 0.0);
    CU_ASSERT_EQUAL(m.bi[4], 0.0);
    CU_ASSERT_DOUBLE_EQUAL(m.item_mean[4], m.mu, 0);
    rk_model_free(&m);
}

static void test_baselines_vs_reference(void)
{
    rk_triples t = data_triples();
    rk_model m;
    CU_ASSERT_EQUAL_FATAL(rk_model_build(&m, &t, NU, NI, 0, 0, 0, 1, NULL), RK_OK);
    double bu[NU], bi[NI];
    ref_baselines(&t, NU, NI, 3.0, bu, bi);
    for (int u = 0; u < NU; u++) CU_ASSERT_DOUBLE_EQUAL(m.bu[u], bu[u], 1e-12);
    for (int i = 0; i < NI; i++) CU_ASSERT_DOUBLE_EQUAL(m.bi[i], bi[i], 1e-12);
    /* the baselines are not trivially zero here */
    CU_ASSERT(fabs(bi[2]) > 0.05 && fabs(bu[0]) > 0.01);
    rk_model_free(&m);
}

/* Built without baselines: zeros and the flag down until rk_model_baselines,
 * which then gives exactly the eager values; the engine refuses options that
 * would read the missing baselines. */
static void test_lazy_baselines(void)
{
    rk_triples t = data_triples();
    rk_model eager, lazy;
    CU_ASSERT_EQUAL_FATAL(rk_model_build(&eager, &t, NU, NI, 0, 0, 0, 1, NULL), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_model_build(&lazy, &t, NU, NI, 0, 0, 0, 0, NULL), RK_OK);
    CU_ASSERT_EQUAL(eager.have_baselines, 1);
    CU_ASSERT_EQUAL(lazy.have_baselines, 0);
    for (int u = 0; u < NU; u++) CU_ASSERT_EQUAL(lazy.bu[u], 0.0);
    for (int i = 0; i < NI; i++) CU_ASSERT_EQUAL(lazy.bi[i], 0.0);
    rk_knn_opts o;
    rk_knn_opts_default(&o);
    o.mode = RK_PREDICT_BASELINE;
    rk_error err;
    CU_ASSERT_EQUAL(rk_knn_needs_baselines(&o), 1);
    CU_ASSERT_EQUAL(rk_knn_cpu(&lazy, &o, NULL, NULL, NULL, &err), RK_E_ARG);
    o.mode = RK_PREDICT_MEANS;
    CU_ASSERT_EQUAL(rk_knn_needs_baselines(&o), 0);
    o.sim.metric = RK_METRIC_PEARSON_BASELINE;
    CU_ASSERT_EQUAL(rk_knn_needs_baselines(&o), 1);
    rk_model_baselines(&lazy);
    CU_ASSERT_EQUAL(lazy.have_baselines, 1);
    CU_ASSERT_EQUAL(rk_knn_cpu(&lazy, &o, NULL, NULL, NULL, &err), RK_OK);
    for (int u = 0; u < NU; u++) CU_ASSERT_EQUAL(lazy.bu[u], eager.bu[u]);
    for (int i = 0; i < NI; i++) CU_ASSERT_EQUAL(lazy.bi[i], eager.bi[i]);
    rk_model_free(&eager);
    rk_model_free(&lazy);
}

/* Two hand cases.
 * (a) u0 rates i0 = 5 and i1 = 1: μ = 3.  Round 1: b_i0 = (5−3−0)/11 = 2/11,
 *     b_i1 = −2/11; b_u0 = ((2 − 2/11) + (−2 + 2/11))/17 = 0.  Every later round
 *     repeats that: b_i = ±2/11, b_u = 0.
 * (b) u0 rates i0 = 5, u1 rates i0 = 3: μ = 4.  b_i0 = (1 − 1)/12 = 0;
 *     b_u0 = 1/16, b_u1 = −1/16; then b_i0 = ((1 − 1/16) + (−1 + 1/16))/12 = 0 again. */
static void test_baselines_hand(void)
{
    int32_t ua[] = {0, 0}, ia[] = {0, 1};
    float ra[] = {5, 1};
    rk_triples ta = {2, ua, ia, ra, NULL};
    rk_model m;
    CU_ASSERT_EQUAL_FATAL(rk_model_build(&m, &ta, 1, 2, 0, 0, 0, 1, NULL), RK_OK);
    CU_ASSERT_DOUBLE_EQUAL(m.mu, 3.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(m.bi[0], 2.0 / 11.0, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(m.bi[1], -2.0 / 11.0, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(m.bu[0], 0.0, 1e-15);
    rk_model_free(&m);

    int32_t ub[] = {1, 0}, ib[] = {0, 0};
    float rb[] = {3, 5};
    rk_triples tb = {2, ub, ib, rb, NULL};
    CU_ASSERT_EQUAL_FATAL(rk_model_build(&m, &tb, 2, 1, 0, 0, 0, 1, NULL), RK_OK);
    CU_ASSERT_DOUBLE_EQUAL(m.mu, 4.0, 0);
    CU_ASSERT_DOUBLE_EQUAL(m.bi[0], 0.0, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(m.bu[0], 1.0 / 16.0, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(m.bu[1], -1.0 / 16.0, 1e-15);
    CU_ASSERT_EQUAL(m.rmin, 3.0);
    CU_ASSERT_EQUAL(m.rmax, 5.0);
    rk_model_free(&m);
}

/* A larger random data set (unsorted, with holes in both index spaces):
 * μ, means and baselines against the reference, to 1e-12.  Large enough that
 * the OpenMP loops run on several threads. */
static void test_random_vs_reference(void)
{
    enum { RU = 300, RI = 120 };
    unsigned long long st = 31337;
    int32_t *user = malloc(RU * RI * sizeof *user), *item = malloc(RU * RI * sizeof *item);
    float *rating = malloc(RU * RI * sizeof *rating);
    int64_t n = 0;
    for (int u = 0; u < RU; u++)
        for (int i = 0; i < RI; i++)
            if (u % 37 != 5 && i % 29 != 3 && rk_test_uniform(&st) < 0.15) {
                user[n] = u;
                item[n] = i;
                rating[n] = 0.5f * (float)(1 + rk_test_rand(&st) % 10);
                n++;
            }
    /* shuffle the file order */
    for (int64_t p = n - 1; p > 0; p--) {
        int64_t q = (int64_t)(rk_test_rand(&st) % (unsigned long long)(p + 1));
        int32_t a = user[p]; user[p] = user[q]; user[q] = a;
        a = item[p]; item[p] = item[q]; item[q] = a;
        float r = rating[p]; rating[p] = rating[q]; rating[q] = r;
    }
    rk_triples t = {n, user, item, rating, NULL};
    double mu = 0, lo = INFINITY, hi = -INFINITY;
    for (int64_t p = 0; p < n; p++) {
        mu += rating[p];
        lo = fmin(lo, rating[p]);
        hi = fmax(hi, rating[p]);
    }
    mu /= (double)n;
    double *bu = malloc(RU * sizeof *bu), *bi = malloc(RI * sizeof *bi);
    ref_baselines(&t, RU, RI, mu, bu, bi);
    rk_model m;
    CU_ASSERT_EQUAL_FATAL(rk_model_build(&m, &t, RU, RI, 0, 0, 0, 1, NULL), RK_OK);
    CU_ASSERT_DOUBLE_EQUAL(m.mu, mu, 1e-12);
    CU_ASSERT_EQUAL(m.rmin, lo);
    CU_ASSERT_EQUAL(m.rmax, hi);
    int bad_mean = 0, bad_b = 0, bad_known = 0;
    for (int i = 0; i < RI; i++) {
        double s = 0;
        int c = 0;
        for (int64_t p = 0; p < n; p++)
            if (item[p] == i) { s += rating[p]; c++; }
        double e = c > 0 ? s / c : mu;
        bad_mean += fabs(m.item_mean[i] - e) > 1e-12;
        bad_b += fabs(m.bi[i] - bi[i]) > 1e-12;
        bad_known += rk_model_item_known(&m, i) != (c > 0);
    }
    for (int u = 0; u < RU; u++) {
        int c = 0;
        for (int64_t p = 0; p < n; p++) c += user[p] == u;
        bad_b += fabs(m.bu[u] - bu[u]) > 1e-12;
        bad_known += rk_model_user_known(&m, u) != (c > 0);
    }
    CU_ASSERT_EQUAL(bad_mean, 0);
    CU_ASSERT_EQUAL(bad_b, 0);
    CU_ASSERT_EQUAL(bad_known, 0);
    rk_model_free(&m);
    free(user); free(item); free(rating); free(bu); free(bi);
}

/* e_ui = r_ui − (μ + b_u + b_i), aligned with by_user and with by_item. */
static void test_residuals(void)
{
    rk_triples t = data_triples();
    rk_model m;
    CU_ASSERT_EQUAL_FATAL(rk_model_build(&m, &t, NU, NI, 0, 0, 0, 1, NULL), RK_OK);
    double bu[NU], bi[NI];
    ref_baselines(&t, NU, NI, 3.0, bu, bi);
    /* (user, item, rating) in by_user order, then in by_item order (test_layout) */
    const int32_t uu[NR] = {0, 0, 0, 1, 1, 2, 2, 2, 3, 3};
    const int32_t ui[NR] = {0, 1, 3, 0, 2, 1, 2, 3, 0, 3};
    const double ur[NR] = {4, 3, 4.5, 4.5, 1, 2, 2, 4, 1.5, 3.5};
    const int32_t iu[NR] = {0, 1, 3, 0, 2, 1, 2, 0, 2, 3};
    const int32_t ii[NR] = {0, 0, 0, 1, 1, 2, 2, 3, 3, 3};
    const double ir[NR] = {4, 4.5, 1.5, 3, 2, 1, 2, 4.5, 4, 3.5};
    double eu[NR + 1], ei[NR + 1];
    eu[NR] = ei[NR] = 12345.0; /* guard */
    rk_model_residuals(&m, eu, ei);
    for (int p = 0; p < NR; p++) {
        CU_ASSERT_DOUBLE_EQUAL(eu[p], ur[p] - (3.0 + bu[uu[p]] + bi[ui[p]]), 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(ei[p], ir[p] - (3.0 + bu[iu[p]] + bi[ii[p]]), 1e-12);
    }
    CU_ASSERT_EQUAL(eu[NR], 12345.0);
    CU_ASSERT_EQUAL(ei[NR], 12345.0);
    /* either output may be NULL */
    double eu2[NR], ei2[NR];
    rk_model_residuals(&m, NULL, ei2);
    rk_model_residuals(&m, eu2, NULL);
    for (int p = 0; p < NR; p++) {
        CU_ASSERT_EQUAL(eu2[p], eu[p]);
        CU_ASSERT_EQUAL(ei2[p], ei[p]);
    }
    rk_model_residuals(&m, NULL, NULL);
    rk_model_free(&m);
}

static void test_errors(void)
{
    rk_model m;
    rk_error err;
    /* no triples: RK_E_EMPTY, nothing held */
    rk_triples empty = {0, NULL, NULL, NULL, NULL};
    memset(&m, 0x5A, sizeof m);
    rk_error_clear(&err);
    CU_ASSERT_EQUAL(rk_model_build(&m, &empty, 3, 3, 0, 0, 0, 1, &err), RK_E_EMPTY);
    CU_ASSERT_EQUAL(err.status, RK_E_EMPTY);
    CU_ASSERT(strlen(err.msg) > 0);
    CU_ASSERT_PTR_NULL(m.item_mean);
    CU_ASSERT_PTR_NULL(m.bu);
    CU_ASSERT_PTR_NULL(m.bi);
    CU_ASSERT_PTR_NULL(m.by_user.ptr);
    rk_model_free(&m);

    /* a duplicate pair: RK_E_DUPLICATE, nothing held */
    int32_t du[] = {0, 1, 0}, di[] = {1, 1, 1};
    float dr[] = {3, 4, 5};
    rk_triples dup = {3, du, di, dr, NULL};
    memset(&m, 0x5A, sizeof m);
    rk_error_clear(&err);
    CU_ASSERT_EQUAL(rk_model_build(&m, &dup, 2, 2, 0, 0, 0, 1, &err), RK_E_DUPLICATE);
    CU_ASSERT_EQUAL(err.status, RK_E_DUPLICATE);
    CU_ASSERT_PTR_NULL(m.item_mean);
    CU_ASSERT_PTR_NULL(m.by_user.ptr);
    CU_ASSERT_PTR_NULL(m.by_item.ptr);
    rk_model_free(&m);

    /* an index out of range is refused, not read out of bounds */
    int32_t ou[] = {0, 2}, oi[] = {0, 0};
    float orr[] = {3, 4};
    rk_triples oob = {2, ou, oi, orr, NULL};
    rk_status s = rk_model_build(&m, &oob, 2, 1, 0, 0, 0, 1, NULL);
    CU_ASSERT_NOT_EQUAL(s, RK_OK);
    CU_ASSERT_PTR_NULL(m.item_mean);
    rk_model_free(&m);
}

/* rk_model_from_csr: the same model as rk_model_build, and it owns the matrix */
static void test_from_csr(void)
{
    rk_triples t = data_triples();
    rk_model a, b;
    rk_csr by_user;
    CU_ASSERT_EQUAL_FATAL(rk_model_build(&a, &t, NU, NI, 0, 0, 0, 1, NULL), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_csr_build(&t, NU, NI, &by_user, NULL), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_model_from_csr(&b, &by_user, 0, 0, 0, 1, NULL), RK_OK);
    CU_ASSERT_PTR_NULL(by_user.ptr);
    CU_ASSERT_PTR_NULL(by_user.idx);
    CU_ASSERT_EQUAL(by_user.nnz, 0);
    CU_ASSERT_EQUAL(b.by_user.nnz, NR);
    CU_ASSERT_EQUAL(b.by_item.n_rows, NI);
    CU_ASSERT_EQUAL(memcmp(a.by_item.ptr, b.by_item.ptr, (NI + 1) * sizeof *a.by_item.ptr), 0);
    CU_ASSERT_EQUAL(memcmp(a.by_item.idx, b.by_item.idx, NR * sizeof *a.by_item.idx), 0);
    CU_ASSERT_EQUAL(a.mu, b.mu);
    CU_ASSERT_EQUAL(memcmp(a.item_mean, b.item_mean, NI * sizeof *a.item_mean), 0);
    CU_ASSERT_EQUAL(memcmp(a.bu, b.bu, NU * sizeof *a.bu), 0);
    CU_ASSERT_EQUAL(memcmp(a.bi, b.bi, NI * sizeof *a.bi), 0);
    CU_ASSERT_DOUBLE_EQUAL(b.item_mean[0], 10.0 / 3.0, 1e-12);
    rk_model_free(&a);
    rk_model_free(&b);
    /* an empty matrix: RK_E_EMPTY, taken over and freed all the same */
    rk_triples none = {0, NULL, NULL, NULL, NULL};
    rk_error err;
    CU_ASSERT_EQUAL_FATAL(rk_csr_build(&none, 3, 2, &by_user, NULL), RK_OK);
    CU_ASSERT_EQUAL(rk_model_from_csr(&b, &by_user, 0, 0, 0, 0, &err), RK_E_EMPTY);
    CU_ASSERT_PTR_NULL(by_user.ptr);
    CU_ASSERT_PTR_NULL(b.by_user.ptr);
    CU_ASSERT_PTR_NULL(b.item_mean);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"mu, item means and data scale", test_stats},
        {"given scale", test_given_scale},
        {"CSR layouts of both orientations", test_layout},
        {"known and unknown users/items", test_known},
        {"ALS baselines against the reference", test_baselines_vs_reference},
        {"ALS baselines by hand", test_baselines_hand},
        {"baselines computed only when asked for", test_lazy_baselines},
        {"random data against the reference", test_random_vs_reference},
        {"residuals", test_residuals},
        {"empty, duplicate, out-of-range input", test_errors},
        {"from a user-major matrix handed over", test_from_csr},
        {NULL, NULL},
    };
    return rk_test_main("rk_model", cases);
}
