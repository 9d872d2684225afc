/* rk_rbc.h — approximate neighbour lists by random ball cover (prefix rk_rbc_).
 *
 * Cayton's random ball cover ("A nearest neighbor data structure for graphics
 * hardware") over the item vectors (user vectors with --by user, through the
 * transposed view), for the full-vector metrics of CONTRACT.md §6b only:
 *  1. draw R representatives among the items with more than T raters (the
 *     tail bound T, below) (rk_rbc_draw_reps);
 *  2. rep pass: for every such item, its "nearness" to every representative,
 *     and its P nearest; its owner is the nearest one, so that these items
 *     fall into R disjoint balls;
 *  3. ball pass: item i's list is the top k (CONTRACT.md §3 order, only sim > 0) of
 *     the items of the balls of its P nearest representatives and of the
 *     items in no ball that share a rater with i, i excluded.
 * Items in no ball: the tail (at most T raters: a vector with one or two
 * raters has no direction to speak of, and is the exact neighbour of
 * everything its raters rated) and the orphans (no rater in common with any
 * representative: nearness 0 to every one).  They are found through their
 * raters (an index user -> such items), and their own lists are computed
 * through their raters (every item sharing one: the exact list), both cheap
 * for short vectors; what the balls do not hold costs no recall.
 *
 * Within the candidates the lists are exact: a pair's similarity is the
 * exact engines' (rk_sim_value over the co-raters' n and Σxy in the same units,
 * the whole vectors' counts and norms of rk_knn_item_norms), so an approximate
 * list is what rk_knn_cpu's list would be if the catalogue held only the
 * candidates.  With P >= R every ball is visited and the lists are rk_knn_cpu's.
 *
 * Nearness is the metric's own similarity without --min-support and
 * --shrinkage (which filter lists, not geometry: with shrinkage a pair that
 * shares one rater has similarity 0, and would tell nothing about where an
 * item lies); equal nearness goes to the representative of lower index.  A
 * representative that shares no rater with the item (nearness 0) is never
 * among its P nearest.
 *
 * Work is counted in pair evaluations (pairs whose similarity is computed),
 * against brute force's n(n-1): the rep pass counts R for each item it
 * ranks (the queries are the catalogue itself, so the pass that assigns the
 * items also ranks the representatives for the queries; every R, though the
 * inverted index computes only those sharing a rater), the ball pass one for
 * every member of a probed ball, the paths through raters one for every
 * item met that shares a rater.
 *
 * Determinism: representatives come from a hash of (seed, item); each item's
 * rep pass and list depend only on the data, so the result does not depend on
 * the thread count.  The CUDA twin (rk_gpu_rbc in gpu/rk_gpu.h) computes the
 * same lists; this CPU engine defines them.
 */
#ifndef RK_RBC_H
#define RK_RBC_H

#include <stdint.h>
#include "rk_status.h"
#include "rk_model.h"
#include "rk_knn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How representatives are drawn (weighted sampling without replacement). */
typedef enum rk_rbc_draw {
    RK_RBC_DRAW_RATERS = 0, /* weight |U_i|: popular items cover more raters (fewer orphans) */
    RK_RBC_DRAW_UNIFORM     /* every item above the tail alike (Cayton's draw) */
} rk_rbc_draw;

/* Probes per query (options' 0) and tail bound (options' -1) by default. */
#define RK_RBC_DEFAULT_PROBES 8
#define RK_RBC_DEFAULT_TAIL 2

typedef struct rk_rbc_opts {
    int32_t reps;      /* R >= 0 (0: rk_rbc_default_reps); more than the items above the tail: all */
    int32_t probes;    /* P >= 0 (0: RK_RBC_DEFAULT_PROBES); P >= R visits every ball (exact) */
    int32_t tail;      /* T: items with at most T raters stay out of the balls (-1: the default) */
    uint64_t seed;     /* the draw of the representatives */
    rk_rbc_draw draw;
    int threads;       /* 0: OpenMP default */
} rk_rbc_opts;

typedef struct rk_rbc_stats {
    int32_t reps, probes;     /* R and P used */
    int32_t tail;             /* T used */
    int64_t queries;          /* items with a rater (the rest have empty lists) */
    int64_t tail_items;       /* items with 1..T raters */
    int64_t orphans;          /* items above the tail sharing no rater with any representative */
    int64_t largest_ball;     /* items in the largest representative's ball */
    int64_t rep_pairs;        /* pair evaluations of the rep pass: items above the tail x R */
    int64_t ball_pairs;       /* of the ball pass: members of the probed balls */
    int64_t rater_pairs;      /* through raters: items in no ball met by a query, and the whole
                                 rows of the tail's and the orphans' lists */
    int64_t pair_evals;       /* rep_pairs + ball_pairs + rater_pairs */
    int64_t brute_pairs;      /* brute force: n_items (n_items - 1) */
    int64_t entry_reads;      /* rater entries of the lists the passes walk (the sparse work behind
                                 the pair evaluations): each rater's list of representatives or of
                                 items, and each ball candidate's whole vector (a short query
                                 searching a long candidate's vector reads fewer) */
    double reps_s;            /* drawing and indexing the representatives */
    double assign_s;          /* the rep pass and the balls */
    double query_s;           /* the ball pass (lists) */
    double init_s, upload_s, download_s; /* GPU: start-up, copies to and from the device */
    double wall_s;            /* the whole call */
    char device[128];         /* "cpu" or the GPU's name */
} rk_rbc_stats;

/*! rk_rbc_opts_default() : R and P from the data (0), the default tail, seed 0,
 *  draw by raters. */
void rk_rbc_opts_default(rk_rbc_opts *r);

/* Items per ball that the default R aims at. */
#define RK_RBC_BALL_ITEMS 24

/*! rk_rbc_default_reps() : R for n_placed items above the tail when the
 *  options leave it 0: ceil(n_placed / 24) (0 when n_placed is 0).  Measured
 *  with bench/rbc_sweep (engine/rk_rbc.c): at P 8 recall@20 peaks where a ball
 *  holds 20-30 items, at 10,000, 100,000 and 1,000,000 items alike. */
int32_t rk_rbc_default_reps(int64_t n_placed);

/*! rk_rbc_check() : the checks both engines make before they start: a
 *  full-vector metric (rk_metric_is_full), rk_knn_check_args, R and P not
 *  negative.  @return RK_OK or RK_E_ARG. */
rk_status rk_rbc_check(const rk_model *m, const rk_knn_opts *o, const rk_rbc_opts *r, const rk_lists *lists,
                       rk_error *err);

/*! rk_rbc_cpu() : the approximate lists of every item into lists (allocated
 *  with rk_lists_alloc for m's item count and o->k; same shape and meaning as
 *  rk_knn_cpu's: support = co-raters n), on the CPU.  o: metric (full-vector),
 *  k, min_support, shrinkage, threads and progress are read.  st may be NULL.
 *  @return RK_OK, RK_E_ARG, RK_E_NOMEM. */
rk_status rk_rbc_cpu(const rk_model *m, const rk_knn_opts *o, const rk_rbc_opts *r, rk_lists *lists,
                     rk_rbc_stats *st, rk_error *err);

/* ---- recall against the exact lists ------------------------------------- */

typedef struct rk_rbc_recall_result {
    int64_t sampled;       /* queries drawn */
    int64_t evaluated;     /* of them, those whose exact list is not empty */
    int64_t hits;          /* entries of the approximate lists found in the exact lists */
    int64_t exact_entries; /* entries of the exact lists */
    double recall;         /* mean over the evaluated queries of hits / |exact list| (0 when none) */
    double recall_ties;    /* the same, an entry a hit when it is as similar as the exact list's
                              last one: equal similarities taken instead of the exact list's
                              (lower index first) count (rk_rbc_recall only) */
    double wall_s;
} rk_rbc_recall_result;

/*! rk_rbc_recall() : recall@k of `approx` (lists of every item of m, k =
 *  o->k) against the exact lists of `sample` items drawn uniformly without
 *  replacement from a hash of (seed, item) (every item when sample >= the
 *  item count).  Each sampled item's exact list is computed here over every
 *  item that shares a rater with it (the others have similarity 0), with the
 *  similarity of rk_knn_cpu: the list rk_knn_cpu would write.  threads: 0 =
 *  OpenMP default.  @return RK_OK, RK_E_ARG (metric not full-vector, lists of
 *  the wrong shape), RK_E_NOMEM. */
rk_status rk_rbc_recall(const rk_model *m, const rk_knn_opts *o, const rk_lists *approx, int64_t sample,
                        uint64_t seed, int threads, rk_rbc_recall_result *out, rk_error *err);

/*! rk_rbc_recall_of() : the same measure from two sets of lists of one
 *  shape: items[0..n) are the queries (NULL: every item, n ignored).  An
 *  entry is a hit when its neighbour is in the exact list of its item. */
void rk_rbc_recall_of(const rk_lists *approx, const rk_lists *exact, const int32_t *items, int64_t n,
                      rk_rbc_recall_result *out);

/* ---- what the CPU engine and its CUDA twin share (host side) ------------- */

/*! rk_rbc_resolve() : R, P and T of a run over m: T = r->tail or the
 *  default; R = r->reps or rk_rbc_default_reps(the items with more than T
 *  raters), capped at those items; P = r->probes or the default, capped at
 *  R.  *n_placed (may be NULL) gets the items with more than T raters. */
void rk_rbc_resolve(const rk_model *m, const rk_rbc_opts *r, int32_t *R, int32_t *P, int32_t *T,
                    int64_t *n_placed);

/*! rk_rbc_draw_reps() : the R representatives (R and T from rk_rbc_resolve)
 *  into reps[R], ascending: the R items with more than T raters of smallest key
 *  -log(u_i) / w_i (Efraimidis and Spirakis' weighted sampling without
 *  replacement), u_i in (0, 1] a hash of (seed, i), w_i = |U_i| or 1 (draw);
 *  equal keys by index.  @return RK_OK or RK_E_NOMEM. */
rk_status rk_rbc_draw_reps(const rk_model *m, int32_t R, int32_t T, uint64_t seed, rk_rbc_draw draw,
                           int32_t *reps, rk_error *err);

/*! rk_rbc_values() : the item-major ratings in the units of the sums:
 *  vals[p] = nearbyint(by_item.val[p] * scale) on the grid of
 *  rk_knn_grid_scale (scale > 0; then every sum is an exact integer), else
 *  the value itself (scale 0), as doubles.  vals: caller-owned, by_item.nnz. */
void rk_rbc_values(const rk_model *m, double scale, double *vals);

/* owner[] of an item: its representative (>= 0), or one of these. */
#define RK_RBC_ORPHAN (-1) /* above the tail, no rater in common with any representative */
#define RK_RBC_TAIL (-2)   /* 1..T raters */
#define RK_RBC_EMPTY (-3)  /* no rater */

/*! rk_rbc_index() : an index user -> (entry, value) of the items items[0..n):
 *  *ptr (n_users + 1 offsets), *ent and *val (allocated here; free() them).
 *  The entries of a user are the positions t of the items in items[] (so the
 *  order of items[] within each user), or the items themselves when
 *  as_items; val holds vals[] (rk_rbc_values) of the rating.  The
 *  representatives' index is rk_rbc_index(m, vals, reps, R, 0, ...).
 *  @return RK_OK or RK_E_NOMEM (nothing then allocated). */
rk_status rk_rbc_index(const rk_model *m, const double *vals, const int32_t *items, int64_t n, int as_items,
                       int64_t **ptr, int32_t **ent, double **val, rk_error *err);

/* The balls and the index of the items in no ball (host arrays). */
typedef struct rk_rbc_balls {
    int32_t R;
    int64_t *ball_ptr;    /* R + 1 */
    int32_t *ball_items;  /* by representative, ascending items within a ball */
    int64_t *optr;        /* n_users + 1: user -> the items in no ball they rated */
    int32_t *oitem;       /* ascending within a user */
    double *oval;         /* the values (rk_rbc_values) */
    int64_t n_orphans, n_tail, largest_ball;
} rk_rbc_balls;

/*! rk_rbc_balls_build() : *b from owner[] (one per item of m; codes above) for
 *  R representatives.  @return RK_OK or RK_E_NOMEM (*b then holds nothing). */
rk_status rk_rbc_balls_build(const rk_model *m, const double *vals, const int32_t *owner, int32_t R,
                             rk_rbc_balls *b, rk_error *err);
void rk_rbc_balls_free(rk_rbc_balls *b);

/*! rk_rbc_near_params() / rk_rbc_sim_params() : the parameters of rk_sim_value
 *  for nearness (the metric, support 1, no shrinkage) and for the lists (the
 *  options'), with unit = 1 / scale (1 for scale 0). */
rk_sim_params rk_rbc_near_params(const rk_knn_opts *o, double scale);
rk_sim_params rk_rbc_sim_params(const rk_knn_opts *o, double scale);

#ifdef __cplusplus
}
#endif
#endif /* RK_RBC_H */
