/* rk_split.h — evaluation splits of the ratings (prefix rk_split_).
 *
 * SPEC §6.  Every split works on the deduplicated ratings `all` (parallel
 * arrays, dense user indices below n_users) and marks each rating t with a
 * part: part[t] is a fold number for K-fold, 1 (test) or 0 (training) for the
 * per-user and temporal splits.  rk_split_apply then copies one part out as
 * the test set and the rest as the training set, in the order of `all`.
 * Draws use counter-based keys (splitmix64 of the seed and the rating's
 * position), so a split depends only on the seed and the ratings' order,
 * never on the thread count or the machine.
 */
#ifndef RK_SPLIT_H
#define RK_SPLIT_H

#include <stdint.h>
#include "rk_status.h"
#include "rk_csr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rk_split_kind {
    RK_SPLIT_RATINGS = 0, /* --holdout F over all ratings (rk_eval_holdout) */
    RK_SPLIT_USER,        /* --split user: about F of each user's ratings */
    RK_SPLIT_TEMPORAL     /* --split temporal: each user's latest F by timestamp */
} rk_split_kind;

/*! rk_split_kind_parse() : "ratings", "user", "temporal".  @return RK_OK or RK_E_ARG. */
rk_status rk_split_kind_parse(const char *name, rk_split_kind *out);
const char *rk_split_kind_name(rk_split_kind k);

/*! rk_split_folds() : K-fold over n ratings: fold[t] in [0, k) (caller's
 *  array of n).  The ratings are put in a seeded random order (the key of
 *  rating t is splitmix64(seed, t), ties by t) and dealt into k parts of
 *  sizes n/k or n/k + 1, the larger parts first: every rating is in exactly
 *  one fold.  The seed's keys are those of rk_eval_holdout, so fold 0 is
 *  the holdout of the same seed and size.  2 <= k <= n, else RK_E_ARG
 *  ("--folds K must be between 2 and the number of ratings (N)").
 *  Cost: O(n log n) time (a bucket sort, then small sorts in parallel),
 *  16 bytes per rating of scratch.  @return RK_OK, RK_E_ARG, RK_E_NOMEM. */
rk_status rk_split_folds(int64_t n, int32_t k, uint64_t seed, int32_t *fold, rk_error *err);

/*! rk_split_user() : per-user sample (LensKit's SampleFrac): a user with
 *  n_u >= 2 ratings gives t_u = round(frac × n_u), at most n_u − 1, to the
 *  test set (part[t] = 1): those of its ratings with the smallest keys
 *  splitmix64(seed, t), ties by t.  Users with one rating keep it in
 *  training.  part has all->n entries; *n_test gets Σ t_u (may be NULL).
 *  t_u rounds half up: floor(frac × n_u + 0.5).  frac in (0, 1), user
 *  indices in [0, n_users), else RK_E_ARG.  Cost: a counting sort by user,
 *  O(n + n_users), then each user's ratings sorted (in parallel over users);
 *  16 bytes per rating and 8 per user of scratch.
 *  @return RK_OK, RK_E_ARG, RK_E_NOMEM. */
rk_status rk_split_user(const rk_triples *all, int32_t n_users, double frac, uint64_t seed, int32_t *part,
                        int64_t *n_test, rk_error *err);

/*! rk_split_temporal() : each user's latest t_u ratings (t_u as in
 *  rk_split_user) by timestamp go to the test set; equal timestamps are
 *  ordered by position (a later line is later).  Cost as rk_split_user.
 *  @return RK_OK, RK_E_ARG (frac outside (0, 1), a user index out of
 *  range, or all->time == NULL: the input has no timestamps), RK_E_NOMEM. */
rk_status rk_split_temporal(const rk_triples *all, int32_t n_users, double frac, int32_t *part,
                            int64_t *n_test, rk_error *err);

/*! rk_split_apply() : test = the ratings t with part[t] == which, train =
 *  the others, both in the order of `all` (timestamps copied when present).
 *  Two passes (count, then copy); a `which` no rating has gives an empty
 *  test set.  On failure both are empty.  @return RK_OK, RK_E_NOMEM. */
rk_status rk_split_apply(const rk_triples *all, const int32_t *part, int32_t which, rk_triples *train,
                         rk_triples *test, rk_error *err);

#ifdef __cplusplus
}
#endif
#endif /* RK_SPLIT_H */
