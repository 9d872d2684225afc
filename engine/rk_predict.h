/* rk_predict.h — turning chosen neighbours into a rating (prefix rk_predict_).
 *
 * CONTRACT.md §4.  Engines pick, for a query (u, i), the k items j ≠ i that u rated
 * with the highest positive sim(i, j) (ties by ascending index, rk_select.h)
 * and hand them here.  Modes:
 *   basic     Σ w r_uj / Σ w                        fallback μ
 *   means     μ_i + Σ w (r_uj − μ_j) / Σ w          fallback μ_i
 *   baseline  b_ui + Σ w (r_uj − b_uj) / Σ w         fallback b_ui = μ + b_u + b_i
 * A fallback is used when fewer than max(min_k, 1) candidates exist, and for
 * unknown users/items with what is known.  Every prediction is clipped to the
 * model's scale.
 */
#ifndef RK_PREDICT_H
#define RK_PREDICT_H

#include <stdint.h>
#include "rk_status.h"
#include "rk_model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rk_predict_mode {
    RK_PREDICT_BASIC = 0,
    RK_PREDICT_MEANS,
    RK_PREDICT_BASELINE
} rk_predict_mode;

/*! rk_predict_mode_parse() : "basic", "means", "baseline". @return RK_OK or RK_E_ARG. */
rk_status rk_predict_mode_parse(const char *name, rk_predict_mode *out);
const char *rk_predict_mode_name(rk_predict_mode m);

/*! rk_predict_clip() : x clipped to [m->rmin, m->rmax]. */
double rk_predict_clip(const rk_model *m, double x);

/*! rk_predict_fallback() : the clipped fallback estimate for (u, i); u and i
 *  may be unknown (no training rating) or -1. */
double rk_predict_fallback(const rk_model *m, rk_predict_mode mode, int32_t u, int32_t i);

/*! rk_predict_aggregate() : the clipped estimate from n >= 1 neighbours:
 *  nb[t] their item indices, w[t] > 0 their similarities to i, r[t] the
 *  user's ratings of them.  u and i must be known. */
double rk_predict_aggregate(const rk_model *m, rk_predict_mode mode, int32_t u,
                            int32_t i, int32_t n, const int32_t *nb,
                            const double *w, const float *r);

#ifdef __cplusplus
}
#endif
#endif /* RK_PREDICT_H */
