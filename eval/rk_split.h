/* rk_split.h — evaluation splits of the ratings (prefix rk_split_).
 *
 * CONTRACT.md §6.  Every split works on the deduplicated ratings `all` (parallel
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
    RK_SPLIT_RATINGS = 0, /* --holdout F over all ratings (rk_split_holdout) */
    RK_SPLIT_USER,        /* --split user: about F of each user's ratings */
    RK_SPLIT_TEMPORAL,    /* --split temporal: each user's latest F by timestamp */
    RK_SPLIT_USERS_OUT    /* --split users: about F of the users held out, each with a fold-in
                             part (training, part 2) and a test part (rk_split_users_out) */
} rk_split_kind;

/* The share of a held-out user's ratings that --split users tests (the
 * rest is its fold-in part), as in the Mult-VAE and EASE protocols. */
#define RK_SPLIT_USERS_TEST_FRACTION 0.2

/*! rk_split_kind_parse() : "ratings", "user", "temporal", "users".  @return RK_OK or RK_E_ARG. */
rk_status rk_split_kind_parse(const char *name, rk_split_kind *out);
const char *rk_split_kind_name(rk_split_kind k);

/*! rk_split_folds() : K-fold over n ratings: fold[t] in [0, k) (caller's
 *  array of n).  The ratings are put in a seeded random order (the key of
 *  rating t is splitmix64(seed, t), ties by t) and dealt into k parts of
 *  sizes n/k or n/k + 1, the larger parts first: every rating is in exactly
 *  one fold.  The seed's keys are those of rk_split_holdout, so fold 0 is
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

/*! rk_split_users_out() : held-out users (strong generalisation): of the
 *  users with n_u >= 2 ratings, the round(frac_users × their number) with
 *  the smallest keys splitmix64(seed key, u) (ties by index, at least one
 *  and at most all) are held out; each of them gives t_u = floor(frac_test ×
 *  n_u + 1/2), at most n_u − 1, of its ratings to the test set (part 1, the
 *  smallest rating keys as in rk_split_user) and keeps the rest as its
 *  fold-in part (part 2); every other rating is part 0.  rk_split_apply(…,
 *  1, …) then gives training = parts 0 and 2.  *n_test (may be NULL) gets the
 *  test ratings.  @return RK_OK, RK_E_ARG (a fraction outside (0, 1), no user
 *  with two ratings, a user index out of range), RK_E_NOMEM. */
rk_status rk_split_users_out(const rk_triples *all, int32_t n_users, double frac_users, double frac_test,
                             uint64_t seed, int32_t *part, int64_t *n_test, rk_error *err);

/*! rk_split_apply() : test = the ratings t with part[t] == which, train =
 *  the others, both in the order of `all` (timestamps copied when present).
 *  Two passes (count, then copy); a `which` no rating has gives an empty
 *  test set.  On failure both are empty.  @return RK_OK, RK_E_NOMEM. */
rk_status rk_split_apply(const rk_triples *all, const int32_t *part, int32_t which, rk_triples *train,
                         rk_triples *test, rk_error *err);

/* ---- the random holdout (rk_split_holdout.c) ---- */

/*! rk_split_holdout() : move round(frac × all->n) ratings (at least one stays),
 *  chosen uniformly at random with `seed`, from `all` into *test; the rest go
 *  to *train.  Both keep the order of `all`.  Rating t is held out when its
 *  key splitmix64(seed, t) is among the smallest: the split depends on the
 *  seed and the ratings' order only, not on the threads.
 *  frac must be in (0, 1).  @return RK_OK, RK_E_ARG, RK_E_NOMEM. */
rk_status rk_split_holdout(const rk_triples *all, double frac, uint64_t seed,
                          rk_triples *train, rk_triples *test, rk_error *err);

/* A holdout draw over n ratings, as rk_split_holdout makes it, kept as its
 * threshold: rating t (its position among the n) is held out when
 * (splitmix64(seed, t), t) is at most (key, t) — the want-th smallest pair —
 * so that any pass over the ratings, in any order, can tell which are held
 * out without a table: the data stage uses it to drop them from a matrix
 * that was sorted already. */
typedef struct rk_split_draw {
    uint64_t seed_key;  /* derived from the seed */
    int64_t n;          /* ratings drawn from */
    int64_t want;       /* ratings held out: round(frac × n), at most n − 1 */
    uint64_t key;       /* the threshold pair (key, t), the want-th smallest; */
    int64_t t;          /* unused when want == 0 */
} rk_split_draw;

/*! rk_split_holdout_plan() : the draw of rk_split_holdout over n ratings.
 *  Parallel: two passes of a hash over 0..n−1, no memory per rating.
 *  @return RK_OK, RK_E_ARG (frac outside (0, 1), n < 0), RK_E_NOMEM. */
rk_status rk_split_holdout_plan(int64_t n, double frac, uint64_t seed,
                               rk_split_draw *h, rk_error *err);

/*! rk_split_holdout_plan_bits() : rk_split_holdout_plan, and, when bits is
 *  not NULL, what rk_split_holdout_bits writes, from the same two passes
 *  (bits: (n + 63) / 64 words).  @return as rk_split_holdout_plan. */
rk_status rk_split_holdout_plan_bits(int64_t n, double frac, uint64_t seed,
                                    rk_split_draw *h, uint64_t *bits, rk_error *err);

/*! rk_split_holdout_held() : 1 when rating t (0 <= t < h->n) is held out. */
int rk_split_holdout_held(const rk_split_draw *h, int64_t t);

/*! rk_split_holdout_bits() : bit t of bits[(h->n + 63) / 64] set when
 *  rating t is held out (in parallel), for a matrix built without them. */
void rk_split_holdout_bits(const rk_split_draw *h, uint64_t *bits);

/*! rk_split_holdout_apply() : rk_split_holdout with the draw h (all->n must
 *  be h->n): the same train and test, in the order of `all`.
 *  @return RK_OK, RK_E_ARG (sizes differ), RK_E_NOMEM (then both are empty). */
rk_status rk_split_holdout_apply(const rk_split_draw *h, const rk_triples *all,
                                rk_triples *train, rk_triples *test,
                                rk_error *err);

/*! rk_split_holdout_apply_inplace() : rk_split_holdout_apply without the
 *  copy of the training ratings: *all keeps them, in order, in its own
 *  arrays (their capacity stays), and *test gets the held-out ones.  Where
 *  too large a fraction goes for the in-place moves, the copy is made and
 *  replaces *all's arrays.  bits: h's rk_split_holdout_bits, read instead of
 *  drawing each rating again (NULL: drawn).  @return RK_OK, RK_E_ARG (sizes
 *  differ), RK_E_NOMEM (then *all is unchanged and *test empty). */
rk_status rk_split_holdout_apply_inplace(const rk_split_draw *h, const uint64_t *bits, rk_triples *all,
                                        rk_triples *test, rk_error *err);

/*! rk_split_holdout_csr() : drop the held-out ratings `test` (as
 *  rk_split_holdout_apply made them) from the matrix a of all the ratings
 *  (rows sorted, no pair twice: rk_triples_dedupe_csr's), in place: each
 *  held-out rating is found in its row by its item, so the sort need not
 *  carry the ratings' positions.  The rows stay sorted; a's ptr is replaced,
 *  idx and val are packed in place (their capacity stays) or, when too much
 *  goes, replaced.  @return RK_OK, RK_E_NOMEM or RK_E_INTERNAL (a test
 *  rating not in a); a is then unchanged. */
rk_status rk_split_holdout_csr(rk_csr *a, const rk_triples *test,
                              rk_error *err);

#ifdef __cplusplus
}
#endif
#endif /* RK_SPLIT_H */
