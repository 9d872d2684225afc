/* rk_predict.h — turning chosen neighbours into a rating (prefix rk_predict_).
 *
 * CONTRACT.md §4.  Engines pick, for a query (u, i), the k items j ≠ i that u rated
 * with the highest positive sim(i, j) (ties by ascending index, rk_select.h)
 * and hand them here.  Modes:
 *   basic     Σ w r_uj / Σ w                        fallback μ
 *   means     μ_i + Σ w (r_uj − μ_j) / Σ w          fallback μ_i
 *   baseline  b_ui + Σ w (r_uj − b_uj) / Σ w         fallback b_ui = μ + b_u + b_i
 * and two whose estimate a model of rk_pmodel.h makes after the engine, with
 * baseline's fallback:
 *   interpolate  b_ui + Σ w_j (r_uj − b_uj), w solved per query (Bell & Koren)
 *   global       the global neighbourhood model (Koren 2008), trained first
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
    RK_PREDICT_BASELINE,
    RK_PREDICT_INTERPOLATE,
    RK_PREDICT_GLOBAL
} rk_predict_mode;

/* The parameters of the two models (rk_pmodel.h), with their defaults
 * (rk_pmodel_opts_default). */
typedef struct rk_pmodel_opts {
    double interp_shrink;  /* β: a pair's residual covariance shrunk by n / (n + β) */
    double interp_reg;     /* λ added to the system's diagonal */
    double global_lr;      /* γ, the step of the first epoch */
    double global_reg;     /* λ of every parameter */
    double global_decay;   /* γ multiplied by it after each epoch */
    int32_t global_epochs;
    /* global, a search's checkpoints (rk_ptune.c; NULL and 0 otherwise): after each epoch e of
     * epochs_at[0 .. n_at) (ascending, at most global_epochs), the queries' predictions then into
     * pred_at + c * n (c: its place, n: the queries), as a run of e epochs would give them */
    const int32_t *epochs_at;
    int32_t n_at;
    double *pred_at;
} rk_pmodel_opts;

/*! rk_pmodel_opts_default() : the defaults of CONTRACT.md §4b. */
void rk_pmodel_opts_default(rk_pmodel_opts *o);

/*! rk_predict_reads_baselines() : 1 for the modes that read b_u and b_i
 *  (baseline, interpolate, global). */
int rk_predict_reads_baselines(rk_predict_mode m);
/*! rk_predict_is_model() : 1 for the modes whose estimate rk_pmodel.h makes
 *  (interpolate, global); the engines then give baseline's estimate and,
 *  for interpolate, the neighbours they chose (rk_queries.nb). */
int rk_predict_is_model(rk_predict_mode m);

/*! rk_predict_mode_parse() : "basic", "means", "baseline", "interpolate", "global".
 *  @return RK_OK or RK_E_ARG. */
rk_status rk_predict_mode_parse(const char *name, rk_predict_mode *out);
const char *rk_predict_mode_name(rk_predict_mode m);

/* A query's user as the predictor sees them: the history the candidates come
 * from (items ascending, in the model's item indices, with their ratings; n 0
 * for an unknown user) and the user's baseline b_u, which only the baseline
 * mode reads.  Every other statistic (μ, μ_i, b_i, the scale) is the
 * model's.  Usually the user's training row; a saved model's --queries take
 * it from today's ratings (CONTRACT.md §10). */
typedef struct rk_predict_user {
    const int32_t *item;
    const float *rating;
    int64_t n;
    double bu;
} rk_predict_user;

/*! rk_predict_user_at() : row u of hist as a query's user: NULL hist means
 *  m's training ratings, and b_u is then m->bu[u]; otherwise (rows in m's
 *  item indices) b_u is estimated from the row by rk_model_user_baseline
 *  when the mode reads it (0 otherwise), which for a copy of m's own row is
 *  m->bu[u] exactly.  A row out of range, negative or empty is an unknown
 *  user (n 0, b_u 0). */
rk_predict_user rk_predict_user_at(const rk_model *m, rk_predict_mode mode, const rk_csr *hist, int32_t u);

/*! rk_predict_clip() : x clipped to [m->rmin, m->rmax]. */
double rk_predict_clip(const rk_model *m, double x);

/*! rk_predict_fallback() : the clipped fallback estimate for (u, i); u and i
 *  may be unknown (no training rating) or -1. */
double rk_predict_fallback(const rk_model *m, rk_predict_mode mode, int32_t u, int32_t i);

/*! rk_predict_fallback_user() : the same for the user pu (known when pu->n > 0). */
double rk_predict_fallback_user(const rk_model *m, rk_predict_mode mode, const rk_predict_user *pu, int32_t i);

/*! rk_predict_aggregate() : the clipped estimate from n >= 1 neighbours:
 *  nb[t] their item indices, w[t] > 0 their similarities to i, r[t] the
 *  user's ratings of them.  u and i must be known. */
double rk_predict_aggregate(const rk_model *m, rk_predict_mode mode, int32_t u,
                            int32_t i, int32_t n, const int32_t *nb,
                            const double *w, const float *r);

/*! rk_predict_aggregate_user() : the same for the user pu (known), whose
 *  b_u is pu->bu; the one implementation of CONTRACT.md §4's formulas. */
double rk_predict_aggregate_user(const rk_model *m, rk_predict_mode mode, const rk_predict_user *pu,
                                 int32_t i, int32_t n, const int32_t *nb, const double *w, const float *r);

#ifdef __cplusplus
}
#endif
#endif /* RK_PREDICT_H */
