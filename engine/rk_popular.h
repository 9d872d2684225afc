/* rk_popular.h — the most-popular baseline recommender (prefix rk_popular_).
 *
 * Every user is recommended the N items with the most training ratings that
 * the user did not rate, equal counts by ascending item index; items without
 * a training rating are never recommended.  It is the floor every ranking
 * number of a real recommender should clear (`--baseline popular`).  It
 * takes the options, the sink and the batches of the top-N engines
 * (rk_topn.h); a score is the item's rating count, in the engines' fixed
 * point (count × 2^32, so that rk_topn_score gives the count back).
 */
#ifndef RK_POPULAR_H
#define RK_POPULAR_H

#include "rk_status.h"
#include "rk_model.h"
#include "rk_topn.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! rk_popular_topn() : the baseline's lists for the users of o, in batches
 *  through o->sink.  Memory: O(n_items + threads × (n_items bits) + batch × n).
 *  Users without a training rating (in o->users) get the first N popular
 *  items.  o->progress reports the stage "baseline" in users.
 *  st may be NULL (path "popular"; updates stays 0).  @return RK_OK, RK_E_ARG (rk_topn_check),
 *  RK_E_NOMEM, or the sink's status. */
rk_status rk_popular_topn(const rk_model *m, const rk_topn_opts *o, rk_topn_stats *st, rk_error *err);

#ifdef __cplusplus
}
#endif
#endif /* RK_POPULAR_H */
