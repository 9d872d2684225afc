/* rk_pmodel.h — rating predictions beyond similarity weights (prefix
 * rk_pmodel_): the two models of --predict interpolate and --predict global
 * (CONTRACT.md §4b), on the CPU; gpu/rk_gpu_pmodel.cu is their CUDA twin,
 * whose results are these bit for bit (the same operations in the same
 * order, no fused multiply-adds).
 *
 * Residuals e_uj = r_uj − (μ + b_u + b_j) with the model's ALS baselines.
 *
 * interpolate (Bell & Koren, ICDM 2007): the engines choose the query's
 * neighbours N (rk_queries.nb, ascending items); the items' residual
 * covariances over their common raters, shrunk, form A (k x k over N) and
 * b (N against i); w solves (A + λI) w = b by Cholesky; the estimate is
 * b_ui + Σ_j w_j e_uj.
 *
 * global (Koren, KDD 2008, §3 without implicit data beyond the ratings):
 * r̂_ui = μ + b_u + b_i + |R|^-½ Σ_{j∈R} (w_ij e_uj + c_ij), R = the items of
 * i's neighbour list that u rated; b_u, b_i, w, c learned by a deterministic
 * schedule of stochastic gradient steps (CONTRACT.md §4b).
 */
#ifndef RK_PMODEL_H
#define RK_PMODEL_H

#include <stdint.h>
#include "rk_status.h"
#include "rk_model.h"
#include "rk_knn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Items beyond which the interpolation's covariance matrix (items² floats) is refused. */
#define RK_PMODEL_MAX_ITEMS 65536
/* Neighbours a query's system may have (its k x k matrix in doubles). */
#define RK_PMODEL_MAX_K 256

/*! rk_pmodel_residual_bu() : e = r − (μ + b_u + b_j), in this order of
 *  operations, for a user whose ALS b_u is bu (a history's, CONTRACT.md §10). */
static inline double rk_pmodel_residual_bu(const rk_model *m, double bu, int32_t j, float r)
{
    return (double)r - ((m->mu + bu) + m->bi[j]);
}

/*! rk_pmodel_residual() : the same for training user u (b_u = m->bu[u]). */
static inline double rk_pmodel_residual(const rk_model *m, int32_t u, int32_t j, float r)
{
    return rk_pmodel_residual_bu(m, m->bu[u], j, r);
}

/* ---- interpolation ------------------------------------------------------------ */

/*! rk_pmodel_cov_diag() : the mean over the items with raters of each item's
 *  mean squared residual (the diagonal's shrinkage target), summed in item
 *  order. */
double rk_pmodel_cov_diag(const rk_model *m);

/*! rk_pmodel_cov_cpu() : the whole matrix (n_items² floats, row-major) into
 *  *out (allocated; free()).  @return RK_OK, RK_E_ARG (more than
 *  RK_PMODEL_MAX_ITEMS items), RK_E_NOMEM. */
rk_status rk_pmodel_cov_cpu(const rk_model *m, double beta, int threads, float **out, rk_error *err);

/*! rk_pmodel_solve() : w (n) solving (A + λI) w = b by Cholesky in a (n x n
 *  doubles, scratch): A[x][y] = cov[nb[x]][nb[y]], b[x] = cov[i][nb[x]].
 *  @return 1, or 0 when a pivot is not positive (w untouched). */
int rk_pmodel_solve(const float *cov, int64_t ld, int32_t i, const int32_t *nb, int32_t n, double lambda, double *a,
                    double *w);

/*! rk_pmodel_interpolate_cpu() : the estimates of the queries whose
 *  neighbours the engine chose (q->used[t] > 0, q->nb): b_ui + Σ w_j e_uj,
 *  clipped; a system without a positive pivot keeps the engine's (the
 *  baseline mode's) estimate.  k: q->nb's row length.  hist: NULL, the
 *  users' training rows; else the queries' histories (rows of q->user, in
 *  m's item indices, as rk_knn_cpu_hist takes them), b_u then estimated
 *  from each (rk_predict_user_at).  @return RK_OK, RK_E_NOMEM. */
rk_status rk_pmodel_interpolate_cpu(const rk_model *m, const float *cov, const rk_pmodel_opts *o, int32_t k,
                                    const rk_csr *hist, int threads, rk_queries *q, rk_error *err);

/* ---- the global neighbourhood model --------------------------------------- */

/* The neighbours each training rating reads: for rating p (item-major order,
 * item i, user u ascending), the slots s of i's list whose item u rated,
 * ascending s, with e_uj: slot[off[p] .. off[p+1]), e[...]. */
typedef struct rk_pmodel_links {
    int64_t nnz;
    int64_t *off;     /* nnz + 1 */
    uint16_t *slot;   /* off[nnz] */
    float *e;         /* off[nnz]: e_uj rounded to float */
    int64_t *by_user; /* nnz: the item-major position of user-major entry p */
} rk_pmodel_links;

/* The trained model: biases and the weights of each list entry. */
typedef struct rk_pmodel_global {
    int32_t n_users, n_items, k;
    double *bu, *bi;  /* learned biases */
    double *w, *c;    /* n_items * k, aligned with the lists' entries */
    double train_s;
} rk_pmodel_global;

/*! rk_pmodel_links_cpu() : the links of every training rating under lists
 *  l (list slots below 65536).  @return RK_OK, RK_E_NOMEM. */
rk_status rk_pmodel_links_cpu(const rk_model *m, const rk_lists *l, int threads, rk_pmodel_links *out, rk_error *err);
void rk_pmodel_links_free(rk_pmodel_links *x);

/*! rk_pmodel_global_init() : the model's arrays: b_u, b_i from m's ALS
 *  baselines, w = c = 0.  @return RK_OK, RK_E_NOMEM. */
rk_status rk_pmodel_global_init(const rk_model *m, const rk_lists *l, rk_pmodel_global *g, rk_error *err);
void rk_pmodel_global_free(rk_pmodel_global *g);

/*! rk_pmodel_global_item_step() : one epoch's item half for item i at step
 *  lr: its ratings in user order, each error against the current
 *  parameters, then b_i, its w and c stepped (b_u read only). */
void rk_pmodel_global_item_step(const rk_model *m, const rk_pmodel_links *x, double lr, double reg, int32_t i,
                                rk_pmodel_global *g);
/*! rk_pmodel_global_user_step() : the user half for user u: its ratings in
 *  item order, b_u stepped (the rest read only). */
void rk_pmodel_global_user_step(const rk_model *m, const rk_pmodel_links *x, double lr, double reg, int32_t u,
                                rk_pmodel_global *g);

/*! rk_pmodel_global_alloc() : g's arrays for n_users x n_items, lists of
 *  capacity k, all zero.  @return RK_OK, RK_E_NOMEM. */
rk_status rk_pmodel_global_alloc(rk_pmodel_global *g, int32_t n_users, int32_t n_items, int32_t k, rk_error *err);

/*! rk_pmodel_global_fold_user() : the learned bias of a user the model did
 *  not train (CONTRACT.md §10): from the history's ALS b_u, the user half of
 *  every epoch replayed over row `row` of hist (items ascending) with the
 *  trained b_i, w, c and the schedule's steps.  term: scratch of the row's
 *  length (its ratings' neighbour terms, which no epoch changes). */
double rk_pmodel_global_fold_user(const rk_model *m, const rk_lists *l, const rk_pmodel_global *g,
                                  const rk_pmodel_opts *o, const rk_csr *hist, int32_t row, double *term);

/*! rk_pmodel_global_user_biases() : bt[r] for every row r of hist: the
 *  trained b_u of model user model_user[r] when the row is that user's
 *  training row (the same items and the same rating bits), else
 *  rk_pmodel_global_fold_user.  model_user may be NULL (every row folded).
 *  @return RK_OK, RK_E_NOMEM. */
rk_status rk_pmodel_global_user_biases(const rk_model *m, const rk_lists *l, const rk_pmodel_global *g,
                                       const rk_pmodel_opts *o, const rk_csr *hist, const int32_t *model_user,
                                       int threads, double *bt, rk_error *err);

/*! rk_pmodel_global_predict() : every query's clipped estimate from the
 *  trained g: known user and item, r̂ (used = |R|); else μ plus the learned
 *  bias of what is known (used 0).  hist NULL: the training rows and g's
 *  b_u; else the rows of hist with the learned biases bt (one a row). */
void rk_pmodel_global_predict(const rk_model *m, const rk_lists *l, const rk_pmodel_global *g,
                              const rk_csr *hist, const double *bt, int threads, rk_queries *q);

/*! rk_pmodel_hist_cpu() : a saved model's answers (CONTRACT.md §10) with
 *  the users' histories hist, after rk_knn_cpu_hist answered q: interpolate
 *  from the covariances of m's training ratings and q->nb; global from the
 *  saved g (model_user as rk_pmodel_global_user_biases takes it).
 *  @return RK_OK, RK_E_ARG, RK_E_NOMEM. */
rk_status rk_pmodel_hist_cpu(const rk_model *m, const rk_knn_opts *ko, const rk_lists *lists,
                             const rk_pmodel_global *g, const rk_csr *hist, const int32_t *model_user,
                             rk_queries *q, rk_knn_stats *st, rk_error *err);

/*! rk_pmodel_cpu() : the model stage of mode ko->mode after the engine
 *  answered q (with q->nb for interpolate; lists holding every item's list
 *  for global): the CPU's; q->global, when set, gets the trained model,
 *  which the caller frees.  A caller's progress in ko.  @return RK_OK,
 *  RK_E_ARG, RK_E_NOMEM, RK_E_CANCELLED. */
rk_status rk_pmodel_cpu(const rk_model *m, const rk_knn_opts *ko, const rk_lists *lists, rk_queries *q,
                        rk_knn_stats *st, rk_error *err);

#ifdef __cplusplus
}
#endif
#endif /* RK_PMODEL_H */
