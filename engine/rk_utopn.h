/* rk_utopn.h — user-based top-N recommendations (CONTRACT.md §6b, `--by user`) on
 * the CPU (prefix rk_utopn_).
 *
 * In user mode the neighbour lists are per user (an rk_lists whose "items"
 * are users: n_items = number of users, nbr[] user indices).  For user u,
 * every item c that u did not rate in training gets
 *     score(u, c) = Σ over neighbours v in u's list who rated c of sim(u, v),
 * items with a positive score are ranked by score, higher first, equal
 * scores by ascending item index, and the first N are kept.
 *
 * Everything else is the item-based engine's contract (rk_topn.h): scores
 * are sums of rk_topn_fixed(sim) in 64-bit fixed point (weights that round
 * to 0 are skipped), so the order of summation cannot change a score; the
 * results leave through the same rk_topn_opts sink in rk_topn_batch batches,
 * in request order; N is capped at the item count; rk_topn_stats reports the
 * call (path "cpu user").  A sum stays below 2^63 while the lists hold fewer
 * than 2^31 neighbours of similarity at most 1.
 */
#ifndef RK_UTOPN_H
#define RK_UTOPN_H

#include <stdint.h>
#include "rk_status.h"
#include "rk_model.h"
#include "rk_knn.h"
#include "rk_topn.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! rk_utopn_check() : the checks rk_utopn_cpu makes before it starts: those
 *  of rk_topn_check (N >= 1, a sink, user indices in range), ulists present
 *  with one list per user of m (ulists->n_items == m->by_user.n_rows), k >= 1,
 *  every length in [0, k] and every neighbour a user index in range.
 *  @return RK_OK or RK_E_ARG. */
rk_status rk_utopn_check(const rk_model *m, const rk_lists *ulists, const rk_topn_opts *o, rk_error *err);

/*! rk_utopn_cpu() : user-based top-N (CONTRACT.md §6b) for the users of o (NULL:
 *  every user with a training rating, ascending; otherwise o->users in that
 *  order, repeats served again).  m is the model in its ordinary orientation
 *  (m->by_user rows are the users' rated items, sorted; m->by_item exists),
 *  ulists the per-user neighbour lists.  OpenMP over the users of a batch
 *  (o->threads, 0: OpenMP's default), one dense accumulator of n_items
 *  fixed-point sums, an n_items-bit mark of the user's rated items and a
 *  touched list per thread, a bounded heap.  Each batch holds at most
 *  o->batch users (0: the engine's choice, as rk_topn_cpu's) with lists of
 *  capacity min(N, n_items) (at least 1).  Cost per user: Σ over neighbours
 *  v with a nonzero weight of |I_v|; st->updates counts exactly those
 *  (neighbour, item) pairs read.  Memory O(threads × n_items + batch × N).
 *  st may be NULL.
 *  @return RK_OK, RK_E_ARG (rk_utopn_check), RK_E_NOMEM, or the sink's status. */
rk_status rk_utopn_cpu(const rk_model *m, const rk_lists *ulists, const rk_topn_opts *o, rk_topn_stats *st,
                       rk_error *err);

/*! rk_utopn_dense() : the reference for tests: the scores of one user
 *  summed naively in double over the neighbours with sim > 0 into
 *  scores[n_items] (n_items = m->by_item.n_rows; 0 for rated items and items
 *  without a score).  No fixed point, no selection. */
void rk_utopn_dense(const rk_model *m, const rk_lists *ulists, int32_t user, double *scores);

#ifdef __cplusplus
}
#endif
#endif /* RK_UTOPN_H */
