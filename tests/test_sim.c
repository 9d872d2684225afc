/* rk_sim: the similarity formulas of CONTRACT.md §2 from the six co-rating sums.
 * Expected values are worked out by hand in the comments, or computed in the
 * test straight from the co-rating vectors (two-pass means, explicit
 * differences), never from rk_sim_value itself. */
#include "rk_sim.h"
#include "test_util.h"

#include <math.h>
#include <string.h>

#define TOL 1e-12

static rk_sim_params P(rk_metric m, int32_t min_support, double shrinkage, double unit)
{
    rk_sim_params p;
    p.metric = m;
    p.min_support = min_support;
    p.shrinkage = shrinkage;
    p.unit = unit;
    return p;
}

/* the six sums of two co-rating vectors */
typedef struct sums { double n, sx, sy, sxx, syy, sxy; } sums;

static sums sums_of(const double *x, const double *y, int n)
{
    sums s = {0, 0, 0, 0, 0, 0};
    for (int k = 0; k < n; k++) {
        s.n += 1;
        s.sx += x[k];
        s.sy += y[k];
        s.sxx += x[k] * x[k];
        s.syy += y[k] * y[k];
        s.sxy += x[k] * y[k];
    }
    return s;
}

static double simv(rk_metric m, int32_t ms, double lam, double unit, sums s)
{
    rk_sim_params p = P(m, ms, lam, unit);
    return rk_sim_value(&p, s.n, s.sx, s.sy, s.sxx, s.syy, s.sxy);
}

static const rk_metric all_metrics[] = {RK_METRIC_PEARSON, RK_METRIC_PEARSON_BASELINE,
                                        RK_METRIC_COSINE, RK_METRIC_MSD, RK_METRIC_EUCLIDEAN};
#define N_METRICS 5

/* x = (1,2,3), y = (2,4,7):
 *   n = 3, Σx = 6, Σy = 13, Σx² = 1+4+9 = 14, Σy² = 4+16+49 = 69, Σxy = 2+8+21 = 31.
 *   pearson: nΣxy − ΣxΣy = 93 − 78 = 15; nΣx² − (Σx)² = 42 − 36 = 6;
 *            nΣy² − (Σy)² = 207 − 169 = 38  →  15 / sqrt(228) ≈ 0.993399
 *   cosine:  31 / sqrt(14·69) = 31 / sqrt(966) ≈ 0.997406
 *   msd:     Σ(x−y)² = 1 + 4 + 16 = 21  →  1 / (1 + 21/3) = 1/8
 *   euclid:  1 / (1 + sqrt(21)) ≈ 0.179129 */
static const double AX[] = {1, 2, 3}, AY[] = {2, 4, 7};

static void test_hand_values(void)
{
    sums s = {3, 6, 13, 14, 69, 31};
    sums c = sums_of(AX, AY, 3);
    CU_ASSERT_DOUBLE_EQUAL(c.sx, s.sx, 0);
    CU_ASSERT_DOUBLE_EQUAL(c.sy, s.sy, 0);
    CU_ASSERT_DOUBLE_EQUAL(c.sxx, s.sxx, 0);
    CU_ASSERT_DOUBLE_EQUAL(c.syy, s.syy, 0);
    CU_ASSERT_DOUBLE_EQUAL(c.sxy, s.sxy, 0);

    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_PEARSON, 1, 0, 1, s), 15.0 / sqrt(228.0), TOL);
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_PEARSON, 1, 0, 1, s), 0.9933992677987828, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_COSINE, 1, 0, 1, s), 31.0 / sqrt(966.0), TOL);
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_MSD, 1, 0, 1, s), 0.125, TOL);
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_EUCLIDEAN, 1, 0, 1, s), 1.0 / (1.0 + sqrt(21.0)), TOL);
}

/* Every metric is symmetric in (x, y). */
static void test_symmetry(void)
{
    sums s = {3, 6, 13, 14, 69, 31}, t = {3, 13, 6, 69, 14, 31};
    for (int m = 0; m < N_METRICS; m++)
        CU_ASSERT_DOUBLE_EQUAL(simv(all_metrics[m], 1, 0, 1, s), simv(all_metrics[m], 1, 0, 1, t), 1e-15);
}

/* x = (1,2,3), y = (3,2,1): Σy = 6, Σy² = 14, Σxy = 3+4+3 = 10.
 *   pearson: (30 − 36) / sqrt(6·6) = −1;  cosine: 10/14 = 5/7;
 *   msd: Σ(x−y)² = 4+0+4 = 8 → 1/(1+8/3) = 3/11;  euclid 1/(1+sqrt 8). */
static void test_negative_correlation(void)
{
    sums s = {3, 6, 6, 14, 14, 10};
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_PEARSON, 1, 0, 1, s), -1.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_COSINE, 1, 0, 1, s), 5.0 / 7.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_MSD, 1, 0, 1, s), 3.0 / 11.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_EUCLIDEAN, 1, 0, 1, s), 1.0 / (1.0 + sqrt(8.0)), TOL);
}

/* identical vectors: msd = euclid = 1, pearson = cosine = 1 */
static void test_identical(void)
{
    const double x[] = {1, 4, 2.5, 5};
    sums s = sums_of(x, x, 4);
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_MSD, 1, 0, 1, s), 1.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_EUCLIDEAN, 1, 0, 1, s), 1.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_PEARSON, 1, 0, 1, s), 1.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_COSINE, 1, 0, 1, s), 1.0, TOL);
}

/* x constant: nΣx² − (Σx)² = 0, so pearson is 0 (CONTRACT.md §2: 0 when the denominator
 * is 0), whichever side is constant. x = (3,3,3), y = (1,2,3):
 *   Σx = 9, Σx² = 27 → 81 − 81 = 0.  Cosine is defined: 18 / sqrt(27·14). */
static void test_pearson_zero_variance(void)
{
    sums s = {3, 9, 6, 27, 14, 18}, t = {3, 6, 9, 14, 27, 18};
    CU_ASSERT_EQUAL(simv(RK_METRIC_PEARSON, 1, 0, 1, s), 0.0);
    CU_ASSERT_EQUAL(simv(RK_METRIC_PEARSON, 1, 0, 1, t), 0.0);
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_COSINE, 1, 0, 1, s), 18.0 / sqrt(378.0), TOL);
    /* both constant */
    sums b = {2, 8, 4, 32, 8, 16};
    CU_ASSERT_EQUAL(simv(RK_METRIC_PEARSON, 1, 0, 1, b), 0.0);
    /* a single co-rater never has a variance */
    sums one = {1, 3, 5, 9, 25, 15};
    CU_ASSERT_EQUAL(simv(RK_METRIC_PEARSON, 1, 0, 1, one), 0.0);

    /* non-integer constants, summed in double: the variance term is rounding
     * noise, not a variance, and the similarity must still be exactly 0 */
    const double consts[] = {0.1, 0.3, 3.7, 4.2, 2.9, 1.1, 0.7};
    for (size_t c = 0; c < sizeof consts / sizeof consts[0]; c++)
        for (int n = 2; n <= 40; n++) {
            double x[40], y[40];
            for (int k = 0; k < n; k++) {
                x[k] = consts[c];
                y[k] = 0.5 * (double)(1 + k % 9);
            }
            sums v = sums_of(x, y, n);
            CU_ASSERT_EQUAL(simv(RK_METRIC_PEARSON, 1, 0, 1, v), 0.0);
            sums w = sums_of(y, x, n);
            CU_ASSERT_EQUAL(simv(RK_METRIC_PEARSON, 1, 0, 1, w), 0.0);
        }
}

/* cosine / pearson-baseline with an all-zero side: the denominator is 0 */
static void test_zero_denominators(void)
{
    sums z = {3, 0, 6, 0, 14, 0};
    CU_ASSERT_EQUAL(simv(RK_METRIC_COSINE, 1, 0, 1, z), 0.0);
    CU_ASSERT_EQUAL(simv(RK_METRIC_PEARSON_BASELINE, 1, 0, 1, z), 0.0);
    CU_ASSERT_EQUAL(simv(RK_METRIC_PEARSON, 1, 0, 1, z), 0.0);
}

/* n < max(min_support, 1) → 0 for every metric. */
static void test_min_support(void)
{
    sums s = {3, 6, 13, 14, 69, 31};
    for (int m = 0; m < N_METRICS; m++) {
        CU_ASSERT_NOT_EQUAL(simv(all_metrics[m], 3, 0, 1, s), 0.0);
        CU_ASSERT_NOT_EQUAL(simv(all_metrics[m], 2, 0, 1, s), 0.0);
        CU_ASSERT_EQUAL(simv(all_metrics[m], 4, 0, 1, s), 0.0);
        CU_ASSERT_EQUAL(simv(all_metrics[m], 1000, 0, 1, s), 0.0);
    }
    /* n = 0 is never a pair, whatever min_support says (0, negative, 1):
     * msd/euclid would otherwise read 1/(1 + 0/0) or 1 */
    sums none = {0, 0, 0, 0, 0, 0};
    const int32_t supports[] = {-5, 0, 1};
    for (int m = 0; m < N_METRICS; m++)
        for (int q = 0; q < 3; q++) {
            double v = simv(all_metrics[m], supports[q], 0, 1, none);
            CU_ASSERT_EQUAL(v, 0.0);
        }
    /* min_support 0 counts as 1: n = 1 passes.  x = 2, y = 4: msd 1/(1+4) */
    sums one = {1, 2, 4, 4, 16, 8};
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_MSD, 0, 0, 1, one), 0.2, TOL);
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_MSD, -3, 0, 1, one), 0.2, TOL);
    /* euclid: 1 / (1 + 2) */
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_EUCLIDEAN, 1, 0, 1, one), 1.0 / 3.0, TOL);
    CU_ASSERT_EQUAL(simv(RK_METRIC_MSD, 2, 0, 1, one), 0.0);
}

/* sim × (n−1)/(n−1+λ).  With n = 3: (2)/(2+λ). */
static void test_shrinkage(void)
{
    sums s = {3, 6, 13, 14, 69, 31};
    /* λ = 10: factor 2/12 = 1/6 */
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_PEARSON, 1, 10, 1, s), 15.0 / sqrt(228.0) / 6.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_COSINE, 1, 10, 1, s), 31.0 / sqrt(966.0) / 6.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_MSD, 1, 10, 1, s), 0.125 / 6.0, TOL);
    /* λ = 0.5: factor 2/2.5 = 0.8 */
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_EUCLIDEAN, 1, 0.5, 1, s), 0.8 / (1.0 + sqrt(21.0)), TOL);
    /* a negative correlation shrinks towards 0: −1 × 2/(2+4) */
    sums neg = {3, 6, 6, 14, 14, 10};
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_PEARSON, 1, 4, 1, neg), -1.0 / 3.0, TOL);
    /* n = 1: factor 0/λ = 0 */
    sums one = {1, 2, 4, 4, 16, 8};
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_MSD, 1, 5, 1, one), 0.0, TOL);
    /* large n: (n−1)/(n−1+λ) with n = 101, λ = 100 → 1/2.  Pearson of the
     * sums of x = k, y = 2k (k = 1..101) is 1. */
    double x[101], y[101];
    for (int k = 0; k < 101; k++) {
        x[k] = k + 1;
        y[k] = 2 * (k + 1);
    }
    sums big = sums_of(x, y, 101);
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_PEARSON, 1, 100, 1, big), 0.5, 1e-12);
}

static void test_default_shrinkage(void)
{
    CU_ASSERT_EQUAL(rk_sim_default_shrinkage(RK_METRIC_PEARSON_BASELINE), 100.0);
    CU_ASSERT_EQUAL(rk_sim_default_shrinkage(RK_METRIC_PEARSON), 0.0);
    CU_ASSERT_EQUAL(rk_sim_default_shrinkage(RK_METRIC_COSINE), 0.0);
    CU_ASSERT_EQUAL(rk_sim_default_shrinkage(RK_METRIC_MSD), 0.0);
    CU_ASSERT_EQUAL(rk_sim_default_shrinkage(RK_METRIC_EUCLIDEAN), 0.0);
}

/* pearson-baseline reads sxx, syy, sxy as Σe_i², Σe_j², Σe_i e_j and ignores
 * sx, sy: it is the cosine of the residuals, not re-centred.
 *   e_i = (0.5, −1, 0.25), e_j = (−0.5, 0.75, 1)
 *   Σe_i² = 0.25 + 1 + 0.0625 = 1.3125, Σe_j² = 0.25 + 0.5625 + 1 = 1.8125,
 *   Σe_i e_j = −0.25 − 0.75 + 0.25 = −0.75
 *   → −0.75 / sqrt(1.3125 · 1.8125) ≈ −0.486265
 * Re-centred (pearson of the same values) it would be:
 *   Σe_i = −0.25, Σe_j = 1.25; (3·(−0.75) + 0.3125) / sqrt(3.875 · 3.875) = −0.5 */
static void test_pearson_baseline(void)
{
    const double ei[] = {0.5, -1, 0.25}, ej[] = {-0.5, 0.75, 1};
    sums s = sums_of(ei, ej, 3);
    CU_ASSERT_DOUBLE_EQUAL(s.sxx, 1.3125, 0);
    CU_ASSERT_DOUBLE_EQUAL(s.syy, 1.8125, 0);
    CU_ASSERT_DOUBLE_EQUAL(s.sxy, -0.75, 0);
    double expect = -0.75 / sqrt(1.3125 * 1.8125);
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_PEARSON_BASELINE, 1, 0, 1, s), expect, TOL);
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_PEARSON, 1, 0, 1, s), -0.5, TOL);
    /* sx, sy are unused: garbage there changes nothing */
    sums g = s;
    g.sx = 1e6;
    g.sy = -7;
    CU_ASSERT_EQUAL(simv(RK_METRIC_PEARSON_BASELINE, 1, 0, 1, g),
                    simv(RK_METRIC_PEARSON_BASELINE, 1, 0, 1, s));
    /* with the default λ = 100 and n = 3: × 2/102 */
    double lam = rk_sim_default_shrinkage(RK_METRIC_PEARSON_BASELINE);
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_PEARSON_BASELINE, 1, lam, 1, s), expect * 2.0 / 102.0, TOL);
    /* and the support rule applies */
    CU_ASSERT_EQUAL(simv(RK_METRIC_PEARSON_BASELINE, 4, 0, 1, s), 0.0);
}

/* Ratings x = (1.5, 3, 4.5, 5), y = (2, 2.5, 5, 3):
 *   x − y = (−0.5, 0.5, −0.5, 2) → Σ(x−y)² = 0.25·3 + 4 = 4.75, n = 4
 *   msd = 1/(1 + 4.75/4) = 1/2.1875 = 16/35;  euclid = 1/(1 + sqrt 4.75)
 * In half-star units (q = 2r): qx = (3,6,9,10), qy = (4,5,10,6)
 *   Σqx² = 9+36+81+100 = 226, Σqy² = 16+25+100+36 = 177, Σqxqy = 12+30+90+60 = 192
 *   Σ(qx−qy)² = 226 + 177 − 384 = 19 = 4.75 / 0.25.
 * Unit-1 sums of the real ratings: Σx² = 56.5, Σy² = 44.25, Σxy = 48. */
static void test_units(void)
{
    sums q = {4, 28, 25, 226, 177, 192};
    sums r = {4, 14, 12.5, 56.5, 44.25, 48};
    const double qx[] = {3, 6, 9, 10}, qy[] = {4, 5, 10, 6};
    const double rx[] = {1.5, 3, 4.5, 5}, ry[] = {2, 2.5, 5, 3};
    sums cq = sums_of(qx, qy, 4), cr = sums_of(rx, ry, 4);
    CU_ASSERT(memcmp(&cq, &q, sizeof q) == 0);
    CU_ASSERT(memcmp(&cr, &r, sizeof r) == 0);

    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_MSD, 1, 0, 0.5, q), 16.0 / 35.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_MSD, 1, 0, 1.0, r), 16.0 / 35.0, TOL);
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_EUCLIDEAN, 1, 0, 0.5, q), 1.0 / (1.0 + sqrt(4.75)), TOL);
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_EUCLIDEAN, 1, 0, 1.0, r), 1.0 / (1.0 + sqrt(4.75)), TOL);
    /* reading the unit-0.5 sums as unit 1 would be a different (wrong) value:
     * 1/(1 + 19/4) */
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_MSD, 1, 0, 1.0, q), 4.0 / 23.0, TOL);
    /* with shrinkage too (n = 4, λ = 3: factor 1/2) */
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_MSD, 1, 3, 0.5, q), 8.0 / 35.0, TOL);
    /* pearson and cosine are scale-free: the unit changes nothing */
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_PEARSON, 1, 0, 0.5, q), simv(RK_METRIC_PEARSON, 1, 0, 1, r), 1e-14);
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_COSINE, 1, 0, 0.5, q), simv(RK_METRIC_COSINE, 1, 0, 1, r), 1e-14);
    CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_COSINE, 1, 0, 1, r), 48.0 / sqrt(56.5 * 44.25), TOL);
}

/* Sums that break Cauchy–Schwarz (as float rounding can, slightly) are
 * clipped to [−1, 1]. */
static void test_clipping(void)
{
    /* cosine: Σxy / sqrt(Σx² Σy²) = 2 / 1 */
    sums c = {2, 0, 0, 1, 1, 2};
    CU_ASSERT_EQUAL(simv(RK_METRIC_COSINE, 1, 0, 1, c), 1.0);
    CU_ASSERT_EQUAL(simv(RK_METRIC_PEARSON_BASELINE, 1, 0, 1, c), 1.0);
    c.sxy = -3;
    CU_ASSERT_EQUAL(simv(RK_METRIC_COSINE, 1, 0, 1, c), -1.0);
    CU_ASSERT_EQUAL(simv(RK_METRIC_PEARSON_BASELINE, 1, 0, 1, c), -1.0);
    /* pearson: (2·5 − 0) / sqrt(2·2) = 5 */
    sums p = {2, 0, 0, 1, 1, 5};
    CU_ASSERT_EQUAL(simv(RK_METRIC_PEARSON, 1, 0, 1, p), 1.0);
    p.sxy = -5;
    CU_ASSERT_EQUAL(simv(RK_METRIC_PEARSON, 1, 0, 1, p), -1.0);
    /* still within [−1, 1] with shrinkage: raw 5 × 1/2 */
    p.sxy = 5;
    double v = simv(RK_METRIC_PEARSON, 1, 1, 1, p);
    CU_ASSERT(v <= 1.0 && v >= -1.0);

    /* exactly proportional non-integer data, summed in double: mathematically
     * 1; never above 1 after rounding */
    unsigned long long st = 7;
    for (int rep = 0; rep < 2000; rep++) {
        int n = 2 + (int)(rk_test_rand(&st) % 30);
        double a = 0.05 + 3 * rk_test_uniform(&st), b = rk_test_uniform(&st) * 2 - 1;
        double x[32], y[32];
        for (int k = 0; k < n; k++) {
            x[k] = 0.1 * (double)(1 + rk_test_rand(&st) % 50);
            y[k] = a * x[k] + b;
        }
        x[0] = 0.1;
        x[1] = 4.9; /* never constant */
        y[0] = a * x[0] + b;
        y[1] = a * x[1] + b;
        sums s = sums_of(x, y, n);
        double pe = simv(RK_METRIC_PEARSON, 1, 0, 1, s);
        CU_ASSERT(pe <= 1.0 && pe > 1.0 - 1e-9);
        sums cs = sums_of(x, x, n);
        double co = simv(RK_METRIC_COSINE, 1, 0, 1, cs);
        CU_ASSERT(co <= 1.0 && co > 1.0 - 1e-12);
        for (int k = 0; k < n; k++) y[k] = -y[k];
        s = sums_of(x, y, n);
        pe = simv(RK_METRIC_PEARSON, 1, 0, 1, s);
        CU_ASSERT(pe >= -1.0 && pe < -1.0 + 1e-9);
    }
}

/* Random co-rating vectors on the half-star grid: every metric against the
 * formulas computed directly from the vectors (two-pass means for pearson,
 * explicit differences for msd/euclid), to 1e-12. */
static void test_random_against_direct(void)
{
    unsigned long long st = 12345;
    for (int rep = 0; rep < 500; rep++) {
        int n = 1 + (int)(rk_test_rand(&st) % 25);
        double x[25], y[25], qx[25], qy[25];
        for (int k = 0; k < n; k++) {
            qx[k] = (double)(1 + rk_test_rand(&st) % 10);
            qy[k] = (double)(1 + rk_test_rand(&st) % 10);
            x[k] = 0.5 * qx[k];
            y[k] = 0.5 * qy[k];
        }
        double mx = 0, my = 0;
        for (int k = 0; k < n; k++) {
            mx += x[k];
            my += y[k];
        }
        mx /= n;
        my /= n;
        double cxy = 0, cxx = 0, cyy = 0, d2 = 0, xx = 0, yy = 0, xy = 0;
        for (int k = 0; k < n; k++) {
            cxy += (x[k] - mx) * (y[k] - my);
            cxx += (x[k] - mx) * (x[k] - mx);
            cyy += (y[k] - my) * (y[k] - my);
            d2 += (x[k] - y[k]) * (x[k] - y[k]);
            xx += x[k] * x[k];
            yy += y[k] * y[k];
            xy += x[k] * y[k];
        }
        double e_pe = (cxx > 0 && cyy > 0) ? cxy / sqrt(cxx * cyy) : 0.0;
        double e_co = xy / sqrt(xx * yy);
        double e_msd = 1.0 / (1.0 + d2 / n);
        double e_eu = 1.0 / (1.0 + sqrt(d2));
        double shrink = (double)(n - 1) / (double)(n - 1 + 7);

        sums s = sums_of(x, y, n), q = sums_of(qx, qy, n);
        CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_PEARSON, 1, 0, 1, s), e_pe, TOL);
        CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_PEARSON, 1, 0, 0.5, q), e_pe, TOL);
        CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_COSINE, 1, 0, 1, s), e_co, TOL);
        CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_MSD, 1, 0, 1, s), e_msd, TOL);
        CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_MSD, 1, 0, 0.5, q), e_msd, TOL);
        CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_EUCLIDEAN, 1, 0, 1, s), e_eu, TOL);
        CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_EUCLIDEAN, 1, 0, 0.5, q), e_eu, TOL);
        CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_PEARSON, 1, 7, 1, s), e_pe * shrink, TOL);
        CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_MSD, 1, 7, 0.5, q), e_msd * shrink, TOL);
        CU_ASSERT_DOUBLE_EQUAL(simv(RK_METRIC_EUCLIDEAN, 1, 7, 0.5, q), e_eu * shrink, TOL);
        /* msd/euclid are in (0, 1] */
        double v = simv(RK_METRIC_MSD, 1, 0, 1, s);
        CU_ASSERT(v > 0 && v <= 1);
        v = simv(RK_METRIC_EUCLIDEAN, 1, 0, 1, s);
        CU_ASSERT(v > 0 && v <= 1);
    }
}

static void test_metric_names(void)
{
    static const struct { const char *name; rk_metric m; } tab[] = {
        {"pearson", RK_METRIC_PEARSON},     {"pearson-baseline", RK_METRIC_PEARSON_BASELINE},
        {"cosine", RK_METRIC_COSINE},       {"msd", RK_METRIC_MSD},
        {"euclidean", RK_METRIC_EUCLIDEAN},
    };
    for (size_t t = 0; t < sizeof tab / sizeof tab[0]; t++) {
        rk_metric out = (rk_metric)77;
        CU_ASSERT_EQUAL(rk_metric_parse(tab[t].name, &out), RK_OK);
        CU_ASSERT_EQUAL(out, tab[t].m);
        CU_ASSERT_STRING_EQUAL(rk_metric_name(tab[t].m), tab[t].name);
        /* round trip name → parse → name */
        rk_metric back = (rk_metric)77;
        CU_ASSERT_EQUAL(rk_metric_parse(rk_metric_name(tab[t].m), &back), RK_OK);
        CU_ASSERT_EQUAL(back, tab[t].m);
    }
    static const char *const bad[] = {"", "Pearson", "PEARSON", "pearson ", " pearson", "pearson-",
                                      "pearson_baseline", "pearsonbaseline", "cos", "cosine\n",
                                      "msd2", "euclid", "unknown", "baseline"};
    for (size_t t = 0; t < sizeof bad / sizeof bad[0]; t++) {
        rk_metric out = (rk_metric)77;
        CU_ASSERT_EQUAL(rk_metric_parse(bad[t], &out), RK_E_ARG);
        CU_ASSERT_EQUAL((int)out, 77); /* untouched on failure */
    }
    rk_metric out = (rk_metric)77;
    CU_ASSERT_EQUAL(rk_metric_parse(NULL, &out), RK_E_ARG);
    CU_ASSERT_EQUAL((int)out, 77);
    CU_ASSERT_STRING_EQUAL(rk_metric_name((rk_metric)99), "unknown");
}

/* Every row of the metric table is complete and consistent: one row per
 * enum value, in enum order; a name that parses back to it; a model-file
 * code that is nonzero, unique and maps back; co-rating sums the engines
 * know (never RK_SUMS_NONE: the GPU would have no kernel for it); the full
 * flag as the full-vector sums need; the default shrinkage that the engine
 * applies; and a value from rk_sim_value for a pair with support, so that a
 * row without a formula (case RK_METRIC_COUNT) is caught here too. */
static void test_metric_table(void)
{
    CU_ASSERT_EQUAL(rk_metric_count(), RK_METRIC_COUNT);
    int seen_code[256] = {0};
    for (int m = 0; m < rk_metric_count(); m++) {
        const rk_metric_row *r = rk_metric_row_of((rk_metric)m);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r);
        CU_ASSERT_EQUAL(r->metric, (rk_metric)m);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r->name);
        CU_ASSERT(r->name[0] != '\0');
        rk_metric back = RK_METRIC_COUNT;
        CU_ASSERT_EQUAL(rk_metric_parse(r->name, &back), RK_OK);
        CU_ASSERT_EQUAL(back, (rk_metric)m);
        CU_ASSERT(r->file_code >= 1 && r->file_code < 256);
        if (r->file_code < 256) {
            CU_ASSERT_EQUAL(seen_code[r->file_code], 0);
            seen_code[r->file_code] = 1;
        }
        back = RK_METRIC_COUNT;
        CU_ASSERT_EQUAL(rk_metric_from_code(r->file_code, &back), RK_OK);
        CU_ASSERT_EQUAL(back, (rk_metric)m);
        CU_ASSERT(r->sums == RK_SUMS_PEARSON || r->sums == RK_SUMS_PRODUCTS || r->sums == RK_SUMS_DIFF ||
                  r->sums == RK_SUMS_DOT);
        CU_ASSERT_EQUAL(r->full, r->sums == RK_SUMS_DOT);
        CU_ASSERT_EQUAL(rk_metric_is_full((rk_metric)m), r->full);
        CU_ASSERT(r->shrinkage >= 0.0);
        CU_ASSERT_EQUAL(rk_sim_default_shrinkage((rk_metric)m), r->shrinkage);
        CU_ASSERT(r->residuals == 0 || r->residuals == 1);
        CU_ASSERT(r->symmetric == 0 || r->symmetric == 1);
        /* two co-raters with different ratings: every metric gives a value in [-1, 1] */
        rk_sim_params p = {(rk_metric)m, 1, 0.0, 1.0, 0.5, 0.5, 0.0, 1.0};
        double v = rk_sim_value(&p, 2, 3, r->full ? 4 : 5, 5, 13, 8);
        if (r->ranking) {
            CU_ASSERT(isfinite(v) && v > 0.0); /* unclamped, from per-item factors */
        } else {
            CU_ASSERT(v >= -1.0 && v <= 1.0 && v != 0.0);
        }
        CU_ASSERT_EQUAL(rk_metric_is_ranking((rk_metric)m), r->ranking);
        if (r->ranking) {
            CU_ASSERT(r->full && !r->symmetric && !r->residuals);
        }
    }
    CU_ASSERT_PTR_NULL(rk_metric_row_of(RK_METRIC_COUNT));
    CU_ASSERT_PTR_NULL(rk_metric_row_of((rk_metric)-1));
    rk_metric out = RK_METRIC_COUNT;
    CU_ASSERT_EQUAL(rk_metric_from_code(0, &out), RK_E_MODEL);
    CU_ASSERT_EQUAL(rk_metric_from_code(RK_METRIC_COUNT + 1000, &out), RK_E_MODEL);
    CU_ASSERT_EQUAL(out, RK_METRIC_COUNT);
    /* the message list of --metric: every name once, in table order */
    char names[512];
    const int len = rk_metric_names(names, sizeof names, -1);
    CU_ASSERT(len > 0 && (size_t)len < sizeof names);
    const char *at = names;
    for (int m = 0; m < rk_metric_count(); m++) {
        if (rk_metric_is_ranking((rk_metric)m)) { /* not a --metric: left out */
            CU_ASSERT_PTR_NULL(strstr(names, rk_metric_name((rk_metric)m)));
            continue;
        }
        const char *hit = strstr(at, rk_metric_name((rk_metric)m));
        CU_ASSERT_PTR_NOT_NULL(hit);
        if (hit != NULL) at = hit + strlen(rk_metric_name((rk_metric)m));
    }
    char small[8];
    CU_ASSERT_EQUAL(rk_metric_names(small, sizeof small, -1), len); /* cut, terminated, full length */
    CU_ASSERT_EQUAL(strlen(small), sizeof small - 1);
    char full[256], corater[256];
    rk_metric_names(full, sizeof full, 1);
    rk_metric_names(corater, sizeof corater, 0);
    CU_ASSERT_EQUAL(strlen(full) + strlen(corater) + 2, (size_t)len);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"hand-computed values, every metric", test_hand_values},
        {"symmetry in x and y", test_symmetry},
        {"negative correlation", test_negative_correlation},
        {"identical vectors", test_identical},
        {"pearson zero variance gives 0", test_pearson_zero_variance},
        {"zero denominators give 0", test_zero_denominators},
        {"n below min_support gives 0", test_min_support},
        {"shrinkage (n-1)/(n-1+lambda)", test_shrinkage},
        {"default shrinkage", test_default_shrinkage},
        {"pearson-baseline reads residual sums", test_pearson_baseline},
        {"msd/euclidean in half-star units", test_units},
        {"clipping to [-1, 1]", test_clipping},
        {"random vectors against direct formulas", test_random_against_direct},
        {"metric parse/name", test_metric_names},
        {"the metric table: every row complete", test_metric_table},
        {NULL, NULL},
    };
    return rk_test_main("rk_sim", cases);
}
