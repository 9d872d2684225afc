/* rk_rank.h — ranking metrics of top-N lists against held-out ratings
 * (prefix rk_rank_).
 *
 * CONTRACT.md §6.  A test item is relevant to its user when its held-out rating is
 * at least `relevance` (default 4.0).  For every test user with at least one
 * relevant item, over its list of at most N recommendations (best first):
 *   precision@N  hits / N                        (a shorter list still divides by N)
 *   recall@N     hits / #relevant
 *   NDCG@N       Σ_{hit at rank r} 1/log2(r + 1) over Σ_{r=1..min(N,#relevant)} 1/log2(r + 1)
 *   RR           1 / rank of the first hit (0 when none)
 *   hit          1 when the list holds a relevant item
 * and the means over those users are reported; a user who got no list (not
 * in the training data, or not served) counts with zeros.  Over all lists:
 * catalogue coverage (distinct items recommended / items) and the Gini index
 * of the times each item of the catalogue was recommended, items never
 * recommended included: G = Σ_i (2i − n − 1) c_(i) / (n Σ c), counts sorted
 * ascending, 0 when nothing was recommended.
 *
 * Use: rk_rank_new with the test ratings, then feed every list (rk_rank_add,
 * or rk_rank_sink as a top-N engine's sink), then rk_rank_finish.
 */
#ifndef RK_RANK_H
#define RK_RANK_H

#include <stdint.h>
#include "rk_status.h"
#include "rk_csr.h"
#include "rk_topn.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RK_RANK_RELEVANCE_DEFAULT 4.0
#define RK_RANK_MAX_CUTOFFS 16

/* The user metrics at one cutoff c (the first c places of each list). */
typedef struct rk_rank_at {
    int32_t n;                  /* the cutoff c */
    double precision, recall, ndcg, map, mrr, hit_rate;
} rk_rank_at;

typedef struct rk_rank_result {
    int32_t n;                  /* N of the lists */
    double relevance;           /* threshold used */
    int64_t users;              /* test users with at least one relevant test item */
    int64_t users_without_list; /* of them, users who got no list */
    double precision, recall, ndcg, mrr, hit_rate; /* means over `users` (0 when users == 0) */
    double map;                 /* mean average precision: AP@N = Σ_{hit at rank r} hits@r / r
                                   over min(N, #relevant) */
    int32_t n_cutoffs;          /* the cutoffs asked (rk_rank_set_cutoffs), ascending, the last N */
    rk_rank_at at[RK_RANK_MAX_CUTOFFS];
    int64_t lists;              /* lists fed (every served user) */
    int64_t rows;               /* recommendations fed: Σ list lengths */
    int32_t items_recommended;  /* distinct items in the lists */
    double coverage;            /* items_recommended / n_items */
    double gini;                /* Gini index of the recommendation counts over the n_items items */
} rk_rank_result;

typedef struct rk_rank rk_rank; /* opaque accumulator */

/*! rk_rank_new() : an accumulator for lists of at most n items (n >= 1)
 *  over a catalogue of n_items, judged against the test ratings (dense
 *  indices below n_users and n_items; duplicates not expected, and a
 *  repeated relevant pair counts once).  Memory: O(n_users + n_items +
 *  relevant test ratings).
 *  @return RK_OK, RK_E_ARG (n < 1, an index out of range: the message names
 *  the test rating), RK_E_NOMEM. */
rk_status rk_rank_new(rk_rank **r, const rk_triples *test, int32_t n_users, int32_t n_items, int32_t n,
                      double relevance, rk_error *err);

/*! rk_rank_set_cutoffs() : also measure the user metrics at the cutoffs
 *  cut[0..n_cut) (each in [1, N]; sorted and deduplicated here; N is always
 *  one of them), before the first list.  @return RK_OK, or RK_E_ARG (a
 *  cutoff out of range, more than RK_RANK_MAX_CUTOFFS, or lists already
 *  fed). */
rk_status rk_rank_set_cutoffs(rk_rank *r, const int32_t *cut, int n_cut, rk_error *err);

/*! rk_rank_keep_users() : keep every user's metrics at N, for
 *  rk_rank_user (before the first list).  @return RK_OK or RK_E_NOMEM. */
rk_status rk_rank_keep_users(rk_rank *r, rk_error *err);

/* One user's metrics at N (rk_rank_keep_users). */
typedef struct rk_rank_user_row {
    int64_t relevant;           /* relevant test items (0: the user is not measured) */
    int32_t listed;             /* 1 when a list came for the user */
    int32_t hits;
    double precision, recall, ndcg, ap, rr;
} rk_rank_user_row;

/*! rk_rank_user() : user u's row (zeros outside the range or without
 *  rk_rank_keep_users). */
void rk_rank_user(const rk_rank *r, int32_t u, rk_rank_user_row *out);

/*! rk_rank_users() : the number of user indices (n_users of rk_rank_new). */
int32_t rk_rank_users(const rk_rank *r);

/*! rk_rank_add() : the list of `user` (items best first, len <= n).  Each
 *  user is expected once: a second list of the same user is ignored by the
 *  user metrics (the first counts) and still counted in coverage and Gini.
 *  Whatever the caller passes, nothing is read out of bounds: a user outside
 *  [0, n_users) is ignored altogether, len is taken as 0 when negative and
 *  as n when above n, an item outside [0, n_items) holds its place in the
 *  list but is never a hit nor counted, and an item repeated within one list
 *  is one hit (at its first place). */
void rk_rank_add(rk_rank *r, int32_t user, const int32_t *items, int32_t len);

/*! rk_rank_sink() : rk_rank_add for every list of a top-N batch; matches
 *  rk_topn_sink (ud is the rk_rank).  @return RK_OK. */
rk_status rk_rank_sink(void *ud, const rk_topn_batch *b, rk_error *err);

/*! rk_rank_finish() : the metrics of what was fed so far. */
void rk_rank_finish(const rk_rank *r, rk_rank_result *out);

/*! rk_rank_item_counts() : times each of the n_items items was recommended
 *  (valid until rk_rank_free). */
const int64_t *rk_rank_item_counts(const rk_rank *r);

/*! rk_rank_free() : NULL is fine. */
void rk_rank_free(rk_rank *r);

#ifdef __cplusplus
}
#endif
#endif /* RK_RANK_H */
