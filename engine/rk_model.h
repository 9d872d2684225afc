/* rk_model.h — the trained model every engine reads (prefix rk_model_).
 *
 * The training ratings in both orientations plus the statistics that the
 * predictors and pearson-baseline need: the global mean μ, item means μ_i and
 * the ALS baselines b_u, b_i of CONTRACT.md §4 (Surprise's ALS: 10 rounds, items
 * first with regularisation 10, then users with 15).
 *
 * A user or item is "known" when it has at least one training rating.
 */
#ifndef RK_MODEL_H
#define RK_MODEL_H

#include <stdint.h>
#include "rk_status.h"
#include "rk_csr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rk_model {
    rk_csr by_user;    /* n_users x n_items training ratings */
    rk_csr by_item;    /* its transpose, n_items x n_users; only its shape and
                          row offsets (idx, val NULL) when deferred:
                          rk_model_from_csr_deferred */
    double mu;         /* mean training rating */
    double rmin, rmax; /* rating scale used for clipping */
    double *item_mean; /* n_items: mean training rating (μ for unknown items) */
    double *bu;        /* n_users: user baselines (0 for unknown users) */
    double *bi;        /* n_items: item baselines (0 for unknown items) */
    int have_baselines; /* 0: bu and bi are all zero, not yet computed */
    const float *row_val; /* NULL, or every entry of user u's row has the value
                             row_val[u] and by_user.val and by_item.val are NULL:
                             the GPU engine expands them on the device, a host
                             engine needs them filled first (rk_rankw_expand) */
    unsigned borrowed;  /* by_user's arrays that are the caller's (RK_MODEL_BORROW_*):
                           rk_model_free leaves them; rk_model_from_borrowed_csr */
} rk_model;

#define RK_MODEL_BORROW_PTR 1u
#define RK_MODEL_BORROW_IDX 2u
#define RK_MODEL_BORROW_VAL 4u

#define RK_BASELINE_EPOCHS 10
#define RK_BASELINE_REG_I 10.0
#define RK_BASELINE_REG_U 15.0

/*! rk_model_build() : build the model from training triples without
 *  duplicates (dense indices below n_users, n_items).  When have_scale is 0
 *  the scale is the training data's min and max.  Computes μ and the item
 *  means, and the baselines when with_baselines is nonzero (ten passes over
 *  the ratings: only the baseline predictor and pearson-baseline need them;
 *  otherwise bu and bi are zeros until rk_model_baselines).
 *  @return RK_OK, RK_E_EMPTY (no triples), RK_E_DUPLICATE, RK_E_NOMEM.
 *  On failure *m holds nothing. */
rk_status rk_model_build(rk_model *m, const rk_triples *train, int32_t n_users,
                         int32_t n_items, int have_scale, double scale_min,
                         double scale_max, int with_baselines, rk_error *err);

/*! rk_model_from_csr() : as rk_model_build, from the user-major matrix of the
 *  training ratings (rows sorted, no duplicates: rk_csr_build's or
 *  rk_triples_dedupe_csr's), so that a caller that sorted the ratings already
 *  does not sort them again.  Ownership: the model takes *by_user over,
 *  whatever the outcome: on return *by_user is zeroed, and its arrays are
 *  the model's by_user (freed with it, or already freed on failure).
 *  @return RK_OK, RK_E_EMPTY (no entries), RK_E_NOMEM.  On failure *m holds
 *  nothing. */
rk_status rk_model_from_csr(rk_model *m, rk_csr *by_user, int have_scale,
                            double scale_min, double scale_max,
                            int with_baselines, rk_error *err);

/*! rk_model_from_borrowed_csr() : rk_model_from_csr of by_user's arrays
 *  where those of `borrowed` (RK_MODEL_BORROW_* bits) stay the caller's:
 *  read, never written or freed (the caller keeps them unchanged until
 *  rk_model_free); the others become the model's.  by_user is not zeroed.
 *  For callers whose ratings are already a sorted user-major matrix (the
 *  library's data from a CSR matrix: no copy of it).  @return as
 *  rk_model_from_csr (on failure the model's own arrays are freed, the
 *  borrowed ones left). */
rk_status rk_model_from_borrowed_csr(rk_model *m, const rk_csr *by_user, unsigned borrowed, int have_scale,
                                     double scale_min, double scale_max, int with_baselines, rk_error *err);

/*! rk_model_from_csr_deferred() : as rk_model_from_csr without baselines,
 *  but the item-major matrix is left for later: by_item has its shape and
 *  its row offsets (ptr: each item's count), and no idx or val until
 *  rk_model_item_major builds them.  The item means are the same doubles as
 *  rk_model_from_csr's: summed by parts from by_user when that is exact
 *  (rk_model_item_sums), else from the item-major matrix, built at once
 *  (the model is then complete).  The GPU engine transposes on
 *  the device and needs only the offsets, so a job on the GPU never builds
 *  the item-major matrix on the host; every CPU engine given such a model
 *  builds it for the call (rk_model_complete_copy).  Ownership of *by_user
 *  as rk_model_from_csr.  @return RK_OK, RK_E_EMPTY, RK_E_NOMEM. */
rk_status rk_model_from_csr_deferred(rk_model *m, rk_csr *by_user, int have_scale, double scale_min,
                                     double scale_max, rk_error *err);

/*! rk_model_item_major_ready() : 1 when by_item has its entries (or the
 *  model has none), 0 when rk_model_from_csr_deferred left them out. */
int rk_model_item_major_ready(const rk_model *m);

/*! rk_model_item_major() : build a deferred model's item-major entries in
 *  place (nothing when they are there): the same arrays as
 *  rk_model_from_csr's.  @return RK_OK or RK_E_NOMEM (m unchanged). */
rk_status rk_model_item_major(rk_model *m, rk_error *err);

/*! rk_model_complete_copy() : *out = *m sharing m's arrays, with an
 *  item-major matrix of its own when m's was deferred, for a call that reads
 *  it from a model it may not change (a complete m: nothing is built).
 *  Release with rk_model_complete_free (which frees only what this made).
 *  @return RK_OK or RK_E_NOMEM. */
rk_status rk_model_complete_copy(const rk_model *m, rk_model *out, rk_error *err);
void rk_model_complete_free(rk_model *out, const rk_model *m);

/* What rk_model_item_sums adds up for each entry (u, i, v). */
typedef enum rk_item_term {
    RK_ITEM_VALUE = 0,  /* v */
    RK_ITEM_SQUARE,     /* x², x = v, or v·scale rounded to an integer when scale > 0 */
    RK_ITEM_POSITIVE,   /* max(v, 0) */
    RK_ITEM_RATER_ROWS  /* the length of user u's row */
} rk_item_term;

/*! rk_model_item_sums() : out[i] (n_items) = the sum over item i's entries
 *  of the term, in double, added in ascending user order from 0.0: the
 *  walk of by_item's row, bit for bit, whether or not by_item has its
 *  entries.  Without them the sums come from by_user, with partial sums
 *  per thread when every partial sum is exact (the terms are integers, or
 *  multiples of 2^-16, and each item's Σ|term| stays within the 53 bits of
 *  a double; ratings on a half or quarter grid are), otherwise by one
 *  thread in user order.  @return RK_OK (err is for what may come). */
rk_status rk_model_item_sums(const rk_model *m, rk_item_term term, double scale, double *out, rk_error *err);

/*! rk_model_baselines() : compute bu and bi (CONTRACT.md §4) unless already done. */
void rk_model_baselines(rk_model *m);

/*! rk_model_user_baseline() : the ALS user step (CONTRACT.md §4) over one
 *  history given m's μ and b_i: Σ_j (r_j − μ − b_j) / (15 + n), summed in the
 *  order given, over the n items item[] (m's indices) rated rating[].  It is
 *  the last step of the fitting, so for a user's own training row (ascending
 *  items) it returns m->bu[u] exactly; a saved model's --queries estimate
 *  the b_u of a history from elsewhere with it (CONTRACT.md §10). */
double rk_model_user_baseline(const rk_model *m, const int32_t *item, const float *rating, int64_t n);

/*! rk_model_user_known() / rk_model_item_known() : 1 when the index is in
 *  range and has a training rating, else 0 (negative indices are unknown). */
int rk_model_user_known(const rk_model *m, int32_t u);
int rk_model_item_known(const rk_model *m, int32_t i);

/*! rk_model_residuals() : values e_ui = r_ui − (μ + b_u + b_i) aligned with
 *  by_user (out_by_user[by_user.nnz]) and with by_item (out_by_item[by_item.nnz]);
 *  either may be NULL.  Used by pearson-baseline, in double so that its sums
 *  carry no rounding beyond float64's. */
void rk_model_residuals(const rk_model *m, double *out_by_user, double *out_by_item);

void rk_model_free(rk_model *m);

#ifdef __cplusplus
}
#endif
#endif /* RK_MODEL_H */
