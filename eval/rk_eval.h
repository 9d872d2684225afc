/* rk_eval.h — held-out splits and rating metrics (prefix rk_eval_).
 *
 * SPEC §6.  rk_eval_holdout draws a held-out fraction of the ratings with a
 * seeded generator (the same seed gives the same split on every machine and
 * thread count); rk_eval_ratings computes RMSE, MAE and the fallback and
 * unknown counts over all test pairs.  rk_eval_holdout_plan/_apply/_csr make
 * the same split in parts, for a caller that holds the ratings sorted too;
 * rk_eval_holdout stays whole as their reference.
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

/* A holdout draw over n ratings, as rk_eval_holdout makes it, kept as its
 * threshold: rating t (its position among the n) is held out when
 * (splitmix64(seed, t), t) is at most (key, t) — the want-th smallest pair —
 * so that any pass over the ratings, in any order, can tell which are held
 * out without a table: the data stage uses it to drop them from a matrix
 * that was sorted already. */
typedef struct rk_holdout {
    uint64_t seed_key;  /* derived from the seed */
    int64_t n;          /* ratings drawn from */
    int64_t want;       /* ratings held out: round(frac × n), at most n − 1 */
    uint64_t key;       /* the threshold pair (key, t), the want-th smallest; */
    int64_t t;          /* unused when want == 0 */
} rk_holdout;

/*! rk_eval_holdout_plan() : the draw of rk_eval_holdout over n ratings.
 *  Parallel: two passes of a hash over 0..n−1, no memory per rating.
 *  @return RK_OK, RK_E_ARG (frac outside (0, 1), n < 0), RK_E_NOMEM. */
rk_status rk_eval_holdout_plan(int64_t n, double frac, uint64_t seed,
                               rk_holdout *h, rk_error *err);

/*! rk_eval_holdout_held() : 1 when rating t (0 <= t < h->n) is held out. */
int rk_eval_holdout_held(const rk_holdout *h, int64_t t);

/*! rk_eval_holdout_apply() : rk_eval_holdout with the draw h (all->n must
 *  be h->n): the same train and test, in the order of `all`.
 *  @return RK_OK, RK_E_ARG (sizes differ), RK_E_NOMEM (then both are empty). */
rk_status rk_eval_holdout_apply(const rk_holdout *h, const rk_triples *all,
                                rk_triples *train, rk_triples *test,
                                rk_error *err);

/*! rk_eval_holdout_csr() : drop the held-out ratings from a matrix in place:
 *  pos[p] (entries of a) is the position among the h->n ratings of the
 *  rating stored at entry p (rk_triples_dedupe_csr gives it).  The rows stay
 *  sorted; a's ptr is replaced, idx and val are packed in place (their
 *  capacity stays) or, when too much goes, replaced.  @return RK_OK or
 *  RK_E_NOMEM (a is then unchanged). */
rk_status rk_eval_holdout_csr(const rk_holdout *h, rk_csr *a, const int64_t *pos,
                              rk_error *err);

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
