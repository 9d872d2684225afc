/* rk_eval.h — held-out splits and rating metrics (prefix rk_eval_).
 *
 * SPEC §6.  rk_eval_holdout draws a held-out fraction of the ratings with a
 * seeded generator (the same seed gives the same split on every machine and
 * thread count); rk_eval_ratings computes RMSE, MAE and the fallback and
 * unknown counts over all test pairs.
 */
#ifndef RK_EVAL_H
#define RK_EVAL_H

#include <stdint.h>
#include "rk_status.h"
#include "rk_csr.h"
#include "rk_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! rk_eval_holdout() : move round(frac × all->n) ratings (at least one stays),
 *  chosen uniformly at random with `seed`, from `all` into *test; the rest go
 *  to *train.  Both keep the order of `all`.  Rating t is held out when its
 *  key splitmix64(seed, t) is among the smallest: the split depends on the
 *  seed and the ratings' order only, not on the threads.
 *  frac must be in (0, 1).  @return RK_OK, RK_E_ARG, RK_E_NOMEM. */
rk_status rk_eval_holdout(const rk_triples *all, double frac, uint64_t seed,
                          rk_triples *train, rk_triples *test, rk_error *err);

typedef struct rk_eval_result {
    int64_t n;              /* test pairs */
    double rmse;
    double mae;
    int64_t fallbacks;      /* predictions with no neighbour used */
    int64_t unknown_users;  /* test pairs whose user has no training rating */
    int64_t unknown_items;  /* test pairs whose item has no training rating */
} rk_eval_result;

/*! rk_eval_ratings() : metrics of n predictions pred[] against truth[]
 *  (used[] = neighbours aggregated; user/item to count unknowns in m). */
void rk_eval_ratings(const rk_model *m, int64_t n, const int32_t *user,
                     const int32_t *item, const float *truth,
                     const double *pred, const int32_t *used,
                     rk_eval_result *out);

#ifdef __cplusplus
}
#endif
#endif /* RK_EVAL_H */
