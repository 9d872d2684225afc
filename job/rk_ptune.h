/* rk_ptune.h — --tune-predict: the options of --predict interpolate or
 * global chosen on a validation split of a fold's training part (prefix
 * rk_ptune_; CONTRACT.md §6e).
 *
 * The training matrix is split as --tune splits it (rk_tune_split: about
 * `fraction` of each user's ratings held out, drawn from a hash of the seed,
 * the user's rank and the rating's place); every configuration of the
 * mode's grid is fitted on the rest through the engine seam and predicts the
 * held ratings; the configuration of the lowest RMSE (ties: the earlier in
 * the grid) is what the fold then uses on its whole training part.  The test
 * set is never read.
 */
#ifndef RK_PTUNE_H
#define RK_PTUNE_H

#include <stdint.h>
#include "rk_status.h"
#include "rk_model.h"
#include "rk_knn.h"
#include "rk_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One configuration and what it scored on the validation part. */
typedef struct rk_ptune_row {
    int32_t k;            /* neighbours (lists) */
    double shrinkage;     /* the similarity's */
    rk_pmodel_opts pm;    /* the model's */
    double rmse, mae;     /* on the validation ratings */
    double seconds;       /* its engine call and model stage */
} rk_ptune_row;

typedef struct rk_ptune_result {
    int n_rows;
    rk_ptune_row *rows;   /* in grid order */
    int best;             /* index of the chosen row */
    int64_t train_ratings, val_ratings;
    double t_split, t_total;
} rk_ptune_result;

/*! rk_ptune_grid() : the configurations of mode's grid (CONTRACT.md §6e),
 *  from base (its k, shrinkage and model options for what the grid does
 *  not vary), k capped at max_k, into out[cap].  @return how many there are
 *  (may exceed cap); 0 for a mode without a grid. */
int rk_ptune_grid(const rk_knn_opts *base, int32_t max_k, rk_ptune_row *out, int cap);

/*! rk_ptune_run() : the search over m (a fold's training model) with the
 *  validation split of fraction and seed, each configuration on the seam's
 *  current backend (the CPU after a GPU failure under --device auto).
 *  base: the run's engine options (mode, metric, threads, progress).
 *  @return RK_OK, RK_E_ARG (a mode without a grid, or nothing to validate:
 *  no user has two ratings), RK_E_NOMEM, or an engine's status. */
rk_status rk_ptune_run(const rk_model *m, const rk_knn_opts *base, double fraction, uint64_t seed,
                       rk_backend_seam *seam, rk_ptune_result *out, rk_error *err);

/*! rk_ptune_apply() : ko with row's k, shrinkage and model options. */
void rk_ptune_apply(const rk_ptune_row *row, rk_knn_opts *ko);

void rk_ptune_free(rk_ptune_result *r);

#ifdef __cplusplus
}
#endif
#endif /* RK_PTUNE_H */
