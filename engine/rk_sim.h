/* rk_sim.h — item–item similarity from co-rating sums (prefix rk_sim_).
 *
 * CONTRACT.md §2.  For items i ≠ j over the users U_ij who rated both, with x = r_ui
 * and y = r_uj, the sums are n, Σx, Σy, Σx², Σy², Σxy.  Every engine (the CPU
 * engine and the CUDA one) accumulates those sums and calls rk_sim_value()
 * below, so that both compute the same formula.  The function is inline and
 * marked host+device when compiled by nvcc.
 *
 * Sums may be kept in "units": the engines accumulate ratings on a grid as
 * exact integers q = r / unit (half stars: unit 0.5).  Pearson, cosine and
 * pearson-baseline are scale-free; msd and euclidean scale their squared
 * difference by unit².
 */
#ifndef RK_SIM_H
#define RK_SIM_H

#include <math.h>
#include <stdint.h>
#include "rk_status.h"
#include "rk_metric.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__CUDACC__)
#define RK_HD __host__ __device__
#else
#define RK_HD
#endif

typedef struct rk_sim_params {
    rk_metric metric;
    int32_t min_support; /* pairs with n < max(min_support, 1) get 0 */
    double shrinkage;    /* λ >= 0: sim * (n-1)/(n-1+λ) */
    double unit;         /* value of one unit of the sums (1.0 for raw values) */
    /* the ranking similarities (CONTRACT.md §5b); other metrics ignore them */
    double alpha;        /* weighted-cosine: asymmetry α (0.5: cosine); rp3beta: α of the walk */
    double beta;         /* rp3beta: popularity penalty β */
    double den_shrink;   /* weighted-cosine: λ added to the denominator, in units of Σxy */
    double dot_unit;     /* value of one unit of Σxy (rk_rankw's quantum squared; 0: 1) */
} rk_sim_params;

/* Relative threshold under which a variance term counts as zero: with
 * non-integer ratings n·Σx² − (Σx)² of a constant column is rounding noise,
 * not a variance.  Exact integer sums never come near it. */
#define RK_SIM_VAR_EPS 1e-12

/*! rk_sim_value() : the similarity of CONTRACT.md §2 from the six sums (in units).
 *  pearson-baseline reads sxx, syy, sxy as Σe_i², Σe_j², Σe_i·e_j of the
 *  baseline residuals (sx, sy unused).  The full-vector metrics of CONTRACT.md §6b
 *  read sx, sy as the rater counts |U_i|, |U_j| of the two whole vectors,
 *  sxx, syy as their squared norms ‖x‖², ‖y‖² (unrated cells are 0, so these
 *  are sums over each item's own raters), and sxy as the dot product Σxy
 *  over the co-raters; n is still the co-rater count, for the support rule
 *  and shrinkage: like every metric, a pair without max(min_support, 1)
 *  co-raters gets 0 (for euclidean-full, which is positive for every pair,
 *  this keeps the neighbours among items that share a rater).  The ranking
 *  similarities (weighted-cosine, rp3beta) read sx and syy as per-item
 *  factors that rk_knn_item_norms computed on the host (so that every
 *  engine multiplies the same doubles) and are not clamped.  @return a value in [-1, 1] for the
 *  correlation metrics and in (0, 1] for msd/euclidean; 0 when n is below the
 *  support or a denominator is 0. */
static inline RK_HD double rk_sim_value(const rk_sim_params *p, double n,
                                        double sx, double sy, double sxx,
                                        double syy, double sxy)
{
    double ms = p->min_support > 1 ? (double)p->min_support : 1.0;
    double s = 0.0;
    if (n < ms) return 0.0;
    switch (p->metric) {
    case RK_METRIC_PEARSON: {
        double vx = n * sxx - sx * sx;
        double vy = n * syy - sy * sy;
        if (vx <= RK_SIM_VAR_EPS * n * sxx || vy <= RK_SIM_VAR_EPS * n * syy) return 0.0;
        s = (n * sxy - sx * sy) / sqrt(vx * vy);
        break;
    }
    case RK_METRIC_PEARSON_BASELINE:
    case RK_METRIC_COSINE: {
        double den = sqrt(sxx * syy);
        if (!(den > 0.0)) return 0.0;
        s = sxy / den;
        break;
    }
    case RK_METRIC_MSD: {
        double d = sxx + syy - 2.0 * sxy;
        if (d < 0.0) d = 0.0;
        s = 1.0 / (1.0 + d * p->unit * p->unit / n);
        break;
    }
    case RK_METRIC_EUCLIDEAN:
    case RK_METRIC_EUCLIDEAN_FULL: {
        double d = sxx + syy - 2.0 * sxy;
        if (d < 0.0) d = 0.0;
        s = 1.0 / (1.0 + sqrt(d) * p->unit);
        break;
    }
    case RK_METRIC_COSINE_FULL: {
        double den = sqrt(sxx * syy);
        if (!(den > 0.0)) return 0.0;
        s = sxy / den;
        break;
    }
    case RK_METRIC_JACCARD: {
        double uni = sx + sy - n;
        if (!(uni > 0.0)) return 0.0;
        s = n / uni;
        break;
    }
    case RK_METRIC_WEIGHTED_COSINE: {
        /* sx = ‖x_i‖^{2α} of the row item, syy = ‖x_j‖^{2(1−α)} of the column
         * item (rk_knn_item_norms) */
        double den = sx * syy + p->den_shrink / (p->unit * p->unit);
        if (!(den > 0.0)) return 0.0;
        s = sxy / den; /* the units cancel but for λ's */
        break;
    }
    case RK_METRIC_RP3BETA: {
        /* sx = |U_i|^−α of the row item, syy = |U_j|^−β of the column item */
        const double du = p->dot_unit > 0.0 ? p->dot_unit : 1.0;
        s = sxy * (p->unit * p->unit) * du * sx * syy;
        break;
    }
    case RK_METRIC_COUNT: return 0.0; /* not a metric */
    }
    if (p->shrinkage > 0.0) s = s * ((n - 1.0) / (n - 1.0 + p->shrinkage));
    if (p->metric == RK_METRIC_WEIGHTED_COSINE || p->metric == RK_METRIC_RP3BETA) return s; /* unclamped */
    if (s > 1.0) s = 1.0;
    if (s < -1.0) s = -1.0;
    return s;
}

/*! rk_sim_default_shrinkage() : the table's default shrinkage of m (100
 *  for pearson-baseline, else 0; CONTRACT.md §2). */
static inline double rk_sim_default_shrinkage(rk_metric m)
{
    const rk_metric_row *r = rk_metric_row_of(m);
    return r != NULL ? r->shrinkage : 0.0;
}

#ifdef __cplusplus
}
#endif
#endif /* RK_SIM_H */
