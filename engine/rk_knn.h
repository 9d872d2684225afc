/* rk_knn.h — the item-based k-NN engine interface and its CPU engine (prefix rk_knn_).
 *
 * One call computes, for every item i, its similarity row sim(i, ·) over
 * co-raters (rk_sim.h), selects its neighbour list (CONTRACT.md §3) and, while that
 * row exists, answers every prediction query whose target is i (CONTRACT.md §4).
 * Rows are produced one item at a time per thread, so memory is
 * O(threads × n_items) beyond the model, whatever the item count; no n×n
 * matrix ever exists.  The CUDA engine (gpu/rk_gpu.h) has the same contract
 * and this CPU engine defines its results.
 *
 * Ratings on a grid (half stars, whole stars, tenths…) are accumulated as
 * exact integers; other values (and pearson-baseline residuals) in double.
 */
#ifndef RK_KNN_H
#define RK_KNN_H

#include <stdint.h>
#include "rk_status.h"
#include "rk_model.h"
#include "rk_sim.h"
#include "rk_predict.h"
#include "rk_progress.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rk_knn_opts {
    rk_sim_params sim;    /* metric, min_support, shrinkage (unit: ignored, the engine sets it) */
    int32_t k;            /* list length and neighbours per prediction, >= 1 */
    rk_predict_mode mode;
    rk_pmodel_opts pm;    /* the interpolate and global modes' parameters */
    int32_t min_k;        /* fewer candidates than max(min_k, 1): fallback */
    int threads;          /* 0 = OpenMP default */
    rk_progress_fn progress; /* may be NULL */
    void *progress_ud;
    int32_t chunk_items;  /* columns per accumulation chunk (0: sized from the cache); tests */
    int negative;         /* 0: lists hold sim > 0; 1: the k largest |sim| != 0, signed (CONTRACT.md §3,
                             --negative yes); predictions read only positive ones either way */
    /* Subset queries (--items, or --users in user mode): lists only for these
     * n_rows distinct items (dense indices), each against the whole
     * catalogue; the other lists stay empty.  NULL: every item.  Not with
     * prediction queries (RK_E_ARG). */
    const int32_t *rows;
    int32_t n_rows;
    /* rk_knn_item_order's cost of every item of the model the engine is
     * given, where a caller that shares the rows out has them already: the
     * rows' order then comes from them instead of a pass over the ratings
     * (the same order).  NULL: the engine computes them. */
    const int64_t *item_cost;
} rk_knn_opts;

/* Neighbour lists: item i's list is nbr/sim/support[i*k .. i*k + len[i]). */
typedef struct rk_lists {
    int32_t n_items;
    int32_t k;
    int32_t *len;     /* n_items */
    int32_t *nbr;     /* n_items * k */
    float *sim;       /* n_items * k */
    int32_t *support; /* n_items * k: co-raters n */
} rk_lists;

/*! rk_lists_alloc() : arrays for n_items lists of capacity k (lengths 0).
 *  @return RK_OK, RK_E_RANGE (n_items * k overflows), RK_E_NOMEM. */
rk_status rk_lists_alloc(rk_lists *l, int32_t n_items, int32_t k, rk_error *err);
void rk_lists_free(rk_lists *l);

/* Prediction queries and their answers (caller-owned arrays of n). */
typedef struct rk_queries {
    int64_t n;
    const int32_t *user; /* dense indices; unknown users/items get fallbacks */
    const int32_t *item;
    double *pred;        /* out: clipped predictions */
    int32_t *used;       /* out: neighbours aggregated (0 = fallback) */
    int32_t *nb;         /* NULL, or out (n x k): the items of the neighbours chosen for each query, ascending,
                            -1 after used[t] (rk_pmodel.h's interpolation reads them) */
    struct rk_pmodel_global *global; /* NULL, or out: --predict global's trained model, kept for a saved
                                        model (rk_pmodel.h; with n 0 the model is trained all the same) */
} rk_queries;

typedef struct rk_knn_stats {
    double sim_s;          /* accumulating sums and computing similarities */
    double select_s;       /* neighbour-list selection */
    double predict_s;      /* answering queries */
    double init_s;         /* GPU: device and context start-up */
    double upload_s;       /* GPU: host-to-device copies and set-up before the tiles */
    double download_s;     /* GPU: results back to the host */
    double wall_s;         /* the whole engine call */
    int64_t pair_updates;  /* co-rating pair updates performed */
    char path[160];        /* accumulation path used, e.g. "int32 grid 0.5" */
    char device[128];      /* "cpu" or the GPU's name */
    char detail[384];      /* GPU: where the set-up time went, in words */
    double model_s;        /* --predict interpolate or global: the model stage after the engine (rk_pmodel.h) */
    char model[192];       /* its device and where its time went, in words ("" without one) */
} rk_knn_stats;

/*! rk_knn_cpu() : run the engine on the CPU.  `lists` (allocated with
 *  rk_lists_alloc for m's item count and o->k) and `q` may each be NULL to
 *  skip that output; without lists only the similarity rows of the items
 *  that queries name are computed (a saved model's --queries).  `st` may be
 *  NULL.
 *  @return RK_OK, RK_E_ARG (k < 1, lists of the wrong shape), RK_E_NOMEM. */
rk_status rk_knn_cpu(const rk_model *m, const rk_knn_opts *o, rk_lists *lists,
                     rk_queries *q, rk_knn_stats *st, rk_error *err);

/*! rk_knn_cpu_hist() : answer the queries q from m's similarity rows (only
 *  the rows of the queried items are computed, over m's training ratings, as
 *  rk_knn_cpu without lists) with the users' histories taken from hist
 *  instead of m's training ratings: a saved model's --queries, whose users
 *  are today's (CONTRACT.md §10).  hist is user-major in m's item indices
 *  (hist->n_cols is m's item count; rows sorted by item, no duplicates) and
 *  q->user[t] is a row of it; an empty, negative or out-of-range row is an
 *  unknown user (the fallback).  The item side (μ, μ_i, b_i, the scale, the
 *  rows) is m's; the user's b_u, which only the baseline mode reads, is
 *  estimated from the history used (rk_predict_user_at), so that a row equal
 *  to one of m's training rows gets rk_knn_cpu's answers bit for bit.
 *  @return RK_OK, RK_E_ARG (as rk_knn_cpu; hist NULL or of another item
 *  count; o->rows set), RK_E_NOMEM. */
rk_status rk_knn_cpu_hist(const rk_model *m, const rk_knn_opts *o, const rk_csr *hist, rk_queries *q,
                          rk_knn_stats *st, rk_error *err);

/*! rk_knn_grid_scale() : the grid the training values lie on, shared by the
 *  engines: the smallest s in {1, 2, 4, 5, 10, 20, 100} such that every r·s
 *  is an integer and int32 sums over the most popular item cannot overflow.
 *  @return s, or 0 when the values need floating-point sums.  *qmax gets
 *  max |r·s| (may be NULL). */
double rk_knn_grid_scale(const rk_model *m, double *qmax);

/*! rk_knn_wide_grid() : 1 when the training values are integers below 2^31
 *  whose products, summed over the most popular item, stay below 2^53 (the
 *  ranking model's quantised values, CONTRACT.md §5b): every n and Σxy is
 *  then an exact 64-bit integer, and the same exact double when the CPU's
 *  double path adds the products in any order.  The GPU sums the
 *  full-vector metrics of such values in 64-bit integers. */
int rk_knn_wide_grid(const rk_model *m);

/*! rk_knn_grid() : both answers from one pass over the values: the return
 *  value and *qmax as rk_knn_grid_scale's, *wide (may be NULL) as
 *  rk_knn_wide_grid's. */
double rk_knn_grid(const rk_model *m, double *qmax, int *wide);

/*! rk_knn_item_norms() : the whole-vector statistics the full-vector
 *  metrics read (rk_sim_value): cnt[i] = |U_i| and sq[i] = Σ over i's raters
 *  of (r_ui · scale)², with r_ui · scale rounded to the nearest integer when
 *  scale is a grid scale (> 0; the engines' exact units) and scale 0 meaning
 *  raw values.  For the ranking similarities (p, may be NULL: none) the
 *  arrays hold the per-item factors of rk_sim_value instead: weighted-cosine
 *  cnt[i] = sq_i^α, sq[i] = sq_i^(1−α); rp3beta cnt[i] = |U_i|^−α,
 *  sq[i] = |U_i|^−β (0 for an item without raters).  Computed on the host
 *  for every engine, so that the GPU multiplies the same doubles.  cnt and
 *  sq: caller-owned arrays of m's item count. */
void rk_knn_item_norms(const rk_model *m, const rk_sim_params *p, double scale, double *cnt, double *sq);

/*! rk_knn_item_order() : order[n_items] = items by descending work
 *  cost[i] = Σ over raters u of i of |I_u| (ties by index), so that the most
 *  expensive rows start first; cost may be NULL.  @return the total work
 *  (co-rating pair updates, self-pairs included), or -1 when out of memory. */
int64_t rk_knn_item_order(const rk_model *m, int32_t *order, int64_t *cost);

/*! rk_knn_item_sym_cost() : cost[n_items] = each item's work when each
 *  co-rating pair is summed once, in the row of its lower item: Σ over the
 *  raters u of i of the items u rated after i (the GPU's symmetric tile;
 *  its k_sym_cost computes the same).  Reads m->by_user only.  @return the
 *  total, or -1 when out of memory. */
int64_t rk_knn_item_sym_cost(const rk_model *m, int64_t *cost);

/*! rk_knn_needs_baselines() : 1 when these options read the model's
 *  baselines (the baseline predictor, pearson-baseline), else 0.  The engines
 *  refuse such options on a model built without them (RK_E_ARG). */
int rk_knn_needs_baselines(const rk_knn_opts *o);

/*! rk_knn_check_args() : the checks every engine makes before it starts:
 *  k >= 1, lists (may be NULL) shaped for m's items and k, baselines present
 *  when the options read them, a subset (o->rows) of distinct item indices
 *  that holds the item of every query (q, may be NULL) of a known user and
 *  item.  @return RK_OK, RK_E_ARG, RK_E_NOMEM. */
rk_status rk_knn_check_args(const rk_model *m, const rk_knn_opts *o, const rk_lists *lists, const rk_queries *q,
                            rk_error *err);

/*! rk_knn_subset_order() : the items the engine computes, heaviest first
 *  (rk_knn_item_order's order restricted to o->rows, or every item), into
 *  order[] (m's item count entries); cost (may be NULL) as for
 *  rk_knn_item_order (from o->item_cost where given).  *n_out gets how many.  @return the work of those items
 *  (co-rating pair updates), or -1 when out of memory. */
int64_t rk_knn_subset_order(const rk_model *m, const rk_knn_opts *o, int32_t *order, int64_t *cost, int32_t *n_out);

/*! rk_knn_opts_default() : pearson, k 20, support 1, shrinkage 0, means, min_k 1. */
void rk_knn_opts_default(rk_knn_opts *o);

#ifdef __cplusplus
}
#endif
#endif /* RK_KNN_H */
