/* rk_predict: aggregation of hand-computed neighbours in each mode, clipping,
 * and every fallback of CONTRACT.md §4.  The model is written by hand here (only the
 * fields the predictor reads), so these tests depend on no loader code. */
#include "rk_predict.h"
#include "test_util.h"

#include <math.h>
#include <string.h>

#define TOL 1e-12

/* 3 users (u2 has no rating), 4 items (i3 has no rating).
 *   μ = 3, scale [1, 5]
 *   item means μ_i = (3.5, 2, 4, 3 = μ)
 *   b_u = (0.25, −0.5, 0), b_i = (0.4, −0.8, 0.6, 0) */
static int64_t U_ptr[] = {0, 2, 3, 3};
static int64_t I_ptr[] = {0, 1, 2, 3, 3};
static int32_t dummy_idx[3] = {0, 0, 0};
static float dummy_val[3] = {0, 0, 0};
static double item_mean[4] = {3.5, 2.0, 4.0, 3.0};
static double bu[3] = {0.25, -0.5, 0.0};
static double bi[4] = {0.4, -0.8, 0.6, 0.0};

static rk_model hand_model(double rmin, double rmax)
{
    rk_model m;
    memset(&m, 0, sizeof m);
    m.by_user.n_rows = 3;
    m.by_user.n_cols = 4;
    m.by_user.nnz = 3;
    m.by_user.ptr = U_ptr;
    m.by_user.idx = dummy_idx;
    m.by_user.val = dummy_val;
    m.by_item.n_rows = 4;
    m.by_item.n_cols = 3;
    m.by_item.nnz = 3;
    m.by_item.ptr = I_ptr;
    m.by_item.idx = dummy_idx;
    m.by_item.val = dummy_val;
    m.mu = 3.0;
    m.rmin = rmin;
    m.rmax = rmax;
    m.item_mean = item_mean;
    m.bu = bu;
    m.bi = bi;
    return m;
}

/* Query (u0, i0), neighbours i1 (w 0.5, r 4) and i2 (w 0.25, r 2); Σw = 0.75.
 *   basic:    (0.5·4 + 0.25·2) / 0.75 = 2.5 / 0.75 = 10/3
 *   means:    3.5 + (0.5·(4 − 2) + 0.25·(2 − 4)) / 0.75 = 3.5 + 0.5/0.75 = 25/6
 *   baseline: b_00 = 3 + 0.25 + 0.4 = 3.65; b_01 = 3 + 0.25 − 0.8 = 2.45;
 *             b_02 = 3 + 0.25 + 0.6 = 3.85;
 *             3.65 + (0.5·(4 − 2.45) + 0.25·(2 − 3.85)) / 0.75
 *             = 3.65 + (0.775 − 0.4625) / 0.75 = 3.65 + 5/12 = 61/15 */
static void test_aggregate_modes(void)
{
    rk_model m = hand_model(1, 5);
    const int32_t nb[] = {1, 2};
    const double w[] = {0.5, 0.25};
    const float r[] = {4, 2};
    CU_ASSERT_DOUBLE_EQUAL(rk_predict_aggregate(&m, RK_PREDICT_BASIC, 0, 0, 2, nb, w, r), 10.0 / 3.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(rk_predict_aggregate(&m, RK_PREDICT_MEANS, 0, 0, 2, nb, w, r), 25.0 / 6.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(rk_predict_aggregate(&m, RK_PREDICT_BASELINE, 0, 0, 2, nb, w, r), 61.0 / 15.0, TOL);
    /* scaling every weight changes nothing */
    const double w3[] = {1.5, 0.75};
    CU_ASSERT_DOUBLE_EQUAL(rk_predict_aggregate(&m, RK_PREDICT_MEANS, 0, 0, 2, nb, w3, r), 25.0 / 6.0, TOL);
    /* only the first n neighbours count: n = 1 → i1 alone
     *   basic 4; means 3.5 + (4 − 2) = 5.5 → clipped 5; baseline 3.65 + 1.55 = 5.2 → 5 */
    CU_ASSERT_DOUBLE_EQUAL(rk_predict_aggregate(&m, RK_PREDICT_BASIC, 0, 0, 1, nb, w, r), 4.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(rk_predict_aggregate(&m, RK_PREDICT_MEANS, 0, 0, 1, nb, w, r), 5.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(rk_predict_aggregate(&m, RK_PREDICT_BASELINE, 0, 0, 1, nb, w, r), 5.0, TOL);
}

/* Query (u1, i2): b_u1 = −0.5.  Neighbours i0 (w 0.2, r 3.5), i1 (w 0.6, r 1.5),
 * i3 (w 0.2, r 4.5; an item with μ_i = μ and b_i = 0); Σw = 1.
 *   basic:    0.7 + 0.9 + 0.9 = 2.5
 *   means:    4 + 0.2·(3.5 − 3.5) + 0.6·(1.5 − 2) + 0.2·(4.5 − 3) = 4 − 0.3 + 0.3 = 4
 *   baseline: b_12 = 3 − 0.5 + 0.6 = 3.1; b_10 = 2.9, b_11 = 1.7, b_13 = 2.5
 *             3.1 + 0.2·0.6 + 0.6·(−0.2) + 0.2·2 = 3.1 + 0.12 − 0.12 + 0.4 = 3.5 */
static void test_aggregate_second_user(void)
{
    rk_model m = hand_model(1, 5);
    const int32_t nb[] = {0, 1, 3};
    const double w[] = {0.2, 0.6, 0.2};
    const float r[] = {3.5f, 1.5f, 4.5f};
    CU_ASSERT_DOUBLE_EQUAL(rk_predict_aggregate(&m, RK_PREDICT_BASIC, 1, 2, 3, nb, w, r), 2.5, TOL);
    CU_ASSERT_DOUBLE_EQUAL(rk_predict_aggregate(&m, RK_PREDICT_MEANS, 1, 2, 3, nb, w, r), 4.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(rk_predict_aggregate(&m, RK_PREDICT_BASELINE, 1, 2, 3, nb, w, r), 3.5, TOL);
}

static void test_aggregate_clipping(void)
{
    rk_model m = hand_model(1, 5);
    /* above: means (u0, i2): 4 + 0.9·(4.5 − 2)/0.9 = 6.5 → 5 */
    int32_t nb1[] = {1};
    double w1[] = {0.9};
    float hi[] = {4.5f};
    CU_ASSERT_EQUAL(rk_predict_aggregate(&m, RK_PREDICT_MEANS, 0, 2, 1, nb1, w1, hi), 5.0);
    /* above: baseline (u0, i2): 3.85 + (5 − 2.45) = 6.4 → 5 */
    float five[] = {5};
    CU_ASSERT_EQUAL(rk_predict_aggregate(&m, RK_PREDICT_BASELINE, 0, 2, 1, nb1, w1, five), 5.0);
    /* below: means (u1, i1): 2 + (1 − 4) = −1 → 1 (neighbour i2, μ_2 = 4) */
    int32_t nb2[] = {2};
    double w2[] = {0.3};
    float one[] = {1};
    CU_ASSERT_EQUAL(rk_predict_aggregate(&m, RK_PREDICT_MEANS, 1, 1, 1, nb2, w2, one), 1.0);
    /* below: baseline (u1, i1): 1.7 + (1 − 3.1) = −0.4 → 1 */
    CU_ASSERT_EQUAL(rk_predict_aggregate(&m, RK_PREDICT_BASELINE, 1, 1, 1, nb2, w2, one), 1.0);
    /* basic stays within the scale of the ratings; a narrower scale clips it */
    rk_model n2 = hand_model(2.5, 3.5);
    const int32_t nb[] = {1, 2};
    const double w[] = {0.5, 0.25};
    const float r[] = {4, 2};
    float lows[] = {1, 2}, highs[] = {5, 4};
    /* 10/3 is inside [2.5, 3.5]: kept */
    CU_ASSERT_DOUBLE_EQUAL(rk_predict_aggregate(&n2, RK_PREDICT_BASIC, 0, 0, 2, nb, w, r), 10.0 / 3.0, TOL);
    /* (0.5·1 + 0.25·2)/0.75 = 4/3 → 2.5 */
    CU_ASSERT_EQUAL(rk_predict_aggregate(&n2, RK_PREDICT_BASIC, 0, 0, 2, nb, w, lows), 2.5);
    /* (0.5·5 + 0.25·4)/0.75 = 14/3 → 3.5 */
    CU_ASSERT_EQUAL(rk_predict_aggregate(&n2, RK_PREDICT_BASIC, 0, 0, 2, nb, w, highs), 3.5);
    /* within the scale nothing is clipped: 10/3 inside [1, 5] */
    CU_ASSERT_DOUBLE_EQUAL(rk_predict_aggregate(&m, RK_PREDICT_BASIC, 0, 0, 2, nb, w, r), 10.0 / 3.0, TOL);
}

static void test_clip(void)
{
    rk_model m = hand_model(0.5, 5);
    CU_ASSERT_EQUAL(rk_predict_clip(&m, 7.25), 5.0);
    CU_ASSERT_EQUAL(rk_predict_clip(&m, 5.0), 5.0);
    CU_ASSERT_EQUAL(rk_predict_clip(&m, 4.999), 4.999);
    CU_ASSERT_EQUAL(rk_predict_clip(&m, 0.5), 0.5);
    CU_ASSERT_EQUAL(rk_predict_clip(&m, 0.49), 0.5);
    CU_ASSERT_EQUAL(rk_predict_clip(&m, -3.0), 0.5);
    CU_ASSERT_EQUAL(rk_predict_clip(&m, 2.75), 2.75);
}

/* CONTRACT.md §4 fallbacks.  u0/u1 and i0..i2 are known; u2, i3 are in range but have
 * no rating; −1 and out-of-range indices are unknown too.
 *   basic:    μ = 3 always
 *   means:    μ_i when the item is known (whatever the user), else μ
 *   baseline: μ + b_u + b_i with what is known:
 *             (u0, i0) 3.65, (u0, i3) 3.25, (u2, i0) 3.4, (u2, i3) 3 */
static void test_fallbacks(void)
{
    rk_model m = hand_model(1, 5);
    const int32_t users[] = {0, 2, -1, 3, 1000};
    const int32_t items[] = {0, 3, -1, 4, 1000};
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 5; b++) {
            int ku = a == 0, ki = b == 0;
            int32_t u = users[a], i = items[b];
            CU_ASSERT_DOUBLE_EQUAL(rk_predict_fallback(&m, RK_PREDICT_BASIC, u, i), 3.0, TOL);
            CU_ASSERT_DOUBLE_EQUAL(rk_predict_fallback(&m, RK_PREDICT_MEANS, u, i), ki ? 3.5 : 3.0, TOL);
            double e = 3.0 + (ku ? 0.25 : 0.0) + (ki ? 0.4 : 0.0);
            CU_ASSERT_DOUBLE_EQUAL(rk_predict_fallback(&m, RK_PREDICT_BASELINE, u, i), e, TOL);
        }
    /* other known pairs: (u1, i1) means 2, baseline 3 − 0.5 − 0.8 = 1.7;
     * (u1, i2) baseline 3.1; unknown user with i1: 3 − 0.8 = 2.2; u1 with unknown i3: 2.5 */
    CU_ASSERT_DOUBLE_EQUAL(rk_predict_fallback(&m, RK_PREDICT_MEANS, 1, 1), 2.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(rk_predict_fallback(&m, RK_PREDICT_MEANS, 2, 2), 4.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(rk_predict_fallback(&m, RK_PREDICT_BASELINE, 1, 1), 1.7, TOL);
    CU_ASSERT_DOUBLE_EQUAL(rk_predict_fallback(&m, RK_PREDICT_BASELINE, 1, 2), 3.1, TOL);
    CU_ASSERT_DOUBLE_EQUAL(rk_predict_fallback(&m, RK_PREDICT_BASELINE, -1, 1), 2.2, TOL);
    CU_ASSERT_DOUBLE_EQUAL(rk_predict_fallback(&m, RK_PREDICT_BASELINE, 1, 3), 2.5, TOL);
}

/* Fallbacks are clipped too. */
static void test_fallback_clipping(void)
{
    rk_model m = hand_model(3.2, 3.6);
    CU_ASSERT_EQUAL(rk_predict_fallback(&m, RK_PREDICT_BASIC, 0, 0), 3.2);          /* μ 3 */
    CU_ASSERT_EQUAL(rk_predict_fallback(&m, RK_PREDICT_MEANS, 0, 2), 3.6);          /* 4 */
    CU_ASSERT_EQUAL(rk_predict_fallback(&m, RK_PREDICT_MEANS, 0, 1), 3.2);          /* 2 */
    CU_ASSERT_DOUBLE_EQUAL(rk_predict_fallback(&m, RK_PREDICT_MEANS, 0, 0), 3.5, TOL); /* inside */
    CU_ASSERT_EQUAL(rk_predict_fallback(&m, RK_PREDICT_BASELINE, 0, 0), 3.6);       /* 3.65 */
    CU_ASSERT_EQUAL(rk_predict_fallback(&m, RK_PREDICT_BASELINE, 1, 1), 3.2);       /* 1.7 */
    CU_ASSERT_EQUAL(rk_predict_fallback(&m, RK_PREDICT_BASELINE, -1, -1), 3.2);     /* 3 */
    CU_ASSERT_DOUBLE_EQUAL(rk_predict_fallback(&m, RK_PREDICT_BASELINE, 0, 3), 3.25, TOL);
}

static void test_mode_names(void)
{
    static const struct { const char *name; rk_predict_mode m; } tab[] = {
        {"basic", RK_PREDICT_BASIC}, {"means", RK_PREDICT_MEANS}, {"baseline", RK_PREDICT_BASELINE}};
    for (size_t t = 0; t < 3; t++) {
        rk_predict_mode out = (rk_predict_mode)77;
        CU_ASSERT_EQUAL(rk_predict_mode_parse(tab[t].name, &out), RK_OK);
        CU_ASSERT_EQUAL(out, tab[t].m);
        CU_ASSERT_STRING_EQUAL(rk_predict_mode_name(tab[t].m), tab[t].name);
        rk_predict_mode back = (rk_predict_mode)77;
        CU_ASSERT_EQUAL(rk_predict_mode_parse(rk_predict_mode_name(tab[t].m), &back), RK_OK);
        CU_ASSERT_EQUAL(back, tab[t].m);
    }
    static const char *const bad[] = {"", "Basic", "MEANS", "mean", "means ", "base", "baselines",
                                      "pearson", "knn", "baseline\n"};
    for (size_t t = 0; t < sizeof bad / sizeof bad[0]; t++) {
        rk_predict_mode out = (rk_predict_mode)77;
        CU_ASSERT_EQUAL(rk_predict_mode_parse(bad[t], &out), RK_E_ARG);
        CU_ASSERT_EQUAL((int)out, 77);
    }
    rk_predict_mode out = (rk_predict_mode)77;
    CU_ASSERT_EQUAL(rk_predict_mode_parse(NULL, &out), RK_E_ARG);
    CU_ASSERT_EQUAL((int)out, 77);
    CU_ASSERT_STRING_EQUAL(rk_predict_mode_name((rk_predict_mode)9), "unknown");
}

/* Random neighbour sets: each mode against the formula computed here. */
static void test_aggregate_random(void)
{
    rk_model m = hand_model(-100, 100); /* wide scale: no clipping */
    unsigned long long st = 555;
    int bad = 0;
    for (int rep = 0; rep < 1000; rep++) {
        int n = 1 + (int)(rk_test_rand(&st) % 4);
        int32_t u = (int32_t)(rk_test_rand(&st) % 2), i = (int32_t)(rk_test_rand(&st) % 4);
        int32_t nb[4];
        double w[4];
        float r[4];
        double sw = 0, s_basic = 0, s_means = 0, s_base = 0;
        for (int t = 0; t < n; t++) {
            nb[t] = (int32_t)(rk_test_rand(&st) % 4);
            w[t] = 0.01 + rk_test_uniform(&st);
            r[t] = 0.5f * (float)(1 + rk_test_rand(&st) % 10);
            sw += w[t];
            s_basic += w[t] * r[t];
            s_means += w[t] * (r[t] - item_mean[nb[t]]);
            s_base += w[t] * (r[t] - (3.0 + bu[u] + bi[nb[t]]));
        }
        double eb = s_basic / sw, em = item_mean[i] + s_means / sw,
               ee = 3.0 + bu[u] + bi[i] + s_base / sw;
        bad += fabs(rk_predict_aggregate(&m, RK_PREDICT_BASIC, u, i, n, nb, w, r) - eb) > TOL;
        bad += fabs(rk_predict_aggregate(&m, RK_PREDICT_MEANS, u, i, n, nb, w, r) - em) > TOL;
        bad += fabs(rk_predict_aggregate(&m, RK_PREDICT_BASELINE, u, i, n, nb, w, r) - ee) > TOL;
    }
    CU_ASSERT_EQUAL(bad, 0);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"aggregate: basic, means, baseline by hand", test_aggregate_modes},
        {"aggregate: a second hand case", test_aggregate_second_user},
        {"aggregate: clipping above and below", test_aggregate_clipping},
        {"rk_predict_clip", test_clip},
        {"fallbacks for known/unknown users and items", test_fallbacks},
        {"fallbacks are clipped", test_fallback_clipping},
        {"mode parse/name", test_mode_names},
        {"aggregate: random neighbours against the formulas", test_aggregate_random},
        {NULL, NULL},
    };
    return rk_test_main("rk_predict", cases);
}
