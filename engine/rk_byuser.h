/* rk_byuser.h — user-based k-NN as the item engine on the transposed model
 * (prefix rk_byuser_).
 *
 * CONTRACT.md §6b: --by user swaps the roles of users and items in §2–§5.  A view
 * of the model with the two orientations exchanged makes every engine
 * compute user–user similarities over co-rated items, per-user lists, and
 * predictions from the k most similar users who rated the item, with no new
 * engine code: the view's "items" are the users, its "item means" are the
 * user means (KNNWithMeans' user-based means), and its baselines are the
 * model's with b_u and b_i exchanged, so b_ui = μ + b_u + b_i keeps its
 * value while the ALS baselines keep their definitions (b_i with 10, then
 * b_u with 15), as Surprise's user_based=True does.  Queries (u, i) are
 * asked as (i, u).  Top-N from the neighbours' items is rk_utopn.h.
 */
#ifndef RK_BYUSER_H
#define RK_BYUSER_H

#include "rk_status.h"
#include "rk_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A transposed view: `model` borrows m's arrays (never rk_model_free it);
 * the user means are its own. */
typedef struct rk_byuser {
    rk_model model;
    double *user_mean; /* n_users: mean training rating of each user (μ for users without one) */
} rk_byuser;

/*! rk_byuser_view() : the view of m (m must outlive it).  @return RK_OK or RK_E_NOMEM. */
rk_status rk_byuser_view(const rk_model *m, rk_byuser *v, rk_error *err);

/*! rk_byuser_free() : free the view's own arrays (NULL and zeroed are fine). */
void rk_byuser_free(rk_byuser *v);

#ifdef __cplusplus
}
#endif
#endif /* RK_BYUSER_H */
