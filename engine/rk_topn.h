/* rk_topn.h — item-based top-N recommendations (CONTRACT.md §5) and their CPU engine
 * (prefix rk_topn_).
 *
 * For user u, every item c that u did not rate in training gets
 *     score(u, c) = Σ over items j rated by u of sim(j, c), c in j's list,
 * (Deshpande & Karypis' item-based top-N over the neighbour lists of §3).
 * Items with a positive score are ranked by score, higher first, equal
 * scores by ascending internal index, and the first N are kept.  Lists
 * made with --negative yes hold negative similarities too; they are summed
 * with their sign.
 *
 * Scores are sums in 64-bit fixed point: every list similarity s is turned
 * once into q = round(s · 2^32) (rk_topn_fixed) and the q are added as
 * integers, so the order of summation cannot change a score or flip a
 * near-tie: the CPU engine and both GPU routes give identical lists.  The
 * resolution is 2^-32 (2.3e-10); every float similarity >= 2^-9 is a
 * multiple of 2^-32, so list similarities above 0.002 are summed exactly
 * (smaller ones are rounded by at most 1.2e-10 each).  A sum stays below
 * 2^63 for any user (at most 2^31 - 1 rated items, each adding at most 2^32).
 *
 * Results leave the engines in batches of users through a sink, in request
 * order, so that memory does not grow with the number of users and writing
 * overlaps computing.  All buffers are the engine's; the sink copies what it
 * keeps.
 */
#ifndef RK_TOPN_H
#define RK_TOPN_H

#include <math.h>
#include <stdint.h>
#include "rk_status.h"
#include "rk_progress.h"
#include "rk_model.h"
#include "rk_knn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fraction bits of the fixed-point scores. */
#define RK_TOPN_FRAC_BITS 32
#define RK_TOPN_ONE 4294967296.0 /* 2^RK_TOPN_FRAC_BITS */

/*! rk_topn_fixed() : a list similarity in fixed point, round(s · 2^32)
 *  (ties to even), a negative one (signed lists, --negative yes) in two's
 *  complement, so that unsigned sums wrap to the signed sum; 0 for 0 or
 *  NaN.  The GPU computes the same value with __double2ll_rn. */
static inline uint64_t rk_topn_fixed(float s)
{
    if (!(s > 0.0f || s < 0.0f)) return 0;
    return (uint64_t)(int64_t)llrint((double)s * RK_TOPN_ONE);
}

/*! rk_topn_lists_signed() : 1 when a list of l holds a negative similarity
 *  (lists made with --negative yes): top-N then sums signed weights, and
 *  an item whose sum is not positive is never recommended. */
int rk_topn_lists_signed(const rk_lists *l);

/*! rk_topn_score() : a fixed-point score as a double (exact below 2^53,
 *  that is for users with fewer than 2^21 rated items). */
static inline double rk_topn_score(uint64_t q)
{
    return (double)q / RK_TOPN_ONE;
}

/* One batch of results: users first .. first + count - 1 of the request.
 * User b's list is item/score[b * n .. b * n + len[b]), best first. */
typedef struct rk_topn_batch {
    int64_t first;          /* position of the batch's first user in the request */
    int64_t count;          /* users in the batch */
    const int32_t *user;    /* count dense user indices */
    int32_t n;              /* the capacity of each list: min(N, n_items) (at least 1) */
    const int32_t *len;     /* count list lengths, 0..n */
    const int32_t *item;    /* count * n dense item indices */
    const uint64_t *score;  /* count * n fixed-point scores (rk_topn_score) */
} rk_topn_batch;

/* Receives the batches in request order, from the calling thread.  A status
 * other than RK_OK stops the engine, which returns it. */
typedef rk_status (*rk_topn_sink)(void *ud, const rk_topn_batch *b, rk_error *err);

typedef struct rk_topn_opts {
    int32_t n;              /* N >= 1 recommendations per user */
    const int32_t *users;   /* dense indices of the users to serve, in the order wanted;
                               NULL: every user with a training rating, ascending */
    int64_t n_users;        /* entries of users[] (ignored when users is NULL) */
    int64_t batch;          /* users per sink call at most (0: the engine's choice) */
    rk_topn_sink sink;      /* required */
    void *sink_ud;
    int threads;            /* 0: OpenMP's default */
    rk_progress_fn progress; /* may be NULL; reports "top-N" in users */
    void *progress_ud;
} rk_topn_opts;

typedef struct rk_topn_stats {
    double wall_s;          /* the whole call, the sink's time included */
    double compute_s;       /* scoring and selection (GPU: kernel time, CUDA events) */
    double sink_s;          /* time spent in the sink */
    double upload_s;        /* GPU: set-up and host-to-device copies for this stage */
    int64_t users;          /* users served */
    int64_t rows;           /* recommendations made: Σ list lengths */
    int64_t updates;        /* list entries summed into scores */
    char path[64];          /* "cpu", "gpu kernel", "gpu spgemm", ... */
    char detail[96];        /* where the time went, in words */
} rk_topn_stats;

/*! rk_topn_check() : the checks every engine makes: n >= 1, a sink, lists
 *  shaped for m's items (l may be NULL: not checked), user indices in range.  @return RK_OK or RK_E_ARG. */
rk_status rk_topn_check(const rk_model *m, const rk_lists *l, const rk_topn_opts *o, rk_error *err);

/*! rk_topn_cpu() : top-N from the neighbour lists l (rk_knn_cpu or the GPU
 *  engine) for the users of o, on the CPU: OpenMP over users, one dense
 *  accumulator of n_items fixed-point sums per thread, a bounded heap.
 *  Memory: O(threads × n_items + batch × n).  st may be NULL.
 *  @return RK_OK, RK_E_ARG, RK_E_NOMEM, or the sink's status. */
rk_status rk_topn_cpu(const rk_model *m, const rk_lists *l, const rk_topn_opts *o, rk_topn_stats *st,
                      rk_error *err);

/*! rk_topn_dense() : the reference for tests: the scores of CONTRACT.md §5 for one
 *  user summed naively in double into scores[n_items] (0 for rated items
 *  and items without a score).  No fixed point, no selection. */
void rk_topn_dense(const rk_model *m, const rk_lists *l, int32_t user, double *scores);

/*! rk_topn_request() : the users a request serves: o->users, or (when NULL)
 *  every user of m with a training rating, ascending, in *all (malloc'ed;
 *  free it).  @return RK_OK or RK_E_NOMEM. */
rk_status rk_topn_request(const rk_model *m, const rk_topn_opts *o, int32_t **all, const int32_t **users,
                          int64_t *n_users, rk_error *err);

#ifdef __cplusplus
}
#endif
#endif /* RK_TOPN_H */
