/* rk_knn_internal.h — what the CPU engine's files share (engine/rk_knn.c,
 * engine/rk_knn_plan.c): the accumulators, the run's read-only state, the
 * per-thread workspace, and the set-up of a run (which accumulation path,
 * which values, how wide a chunk).  Internal to engine/. */
#ifndef RK_KNN_INTERNAL_H
#define RK_KNN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "rk_knn.h"
#include "rk_status.h"

/* Accumulators.  v8i: lanes n, Σx, Σy, Σx², Σy², Σxy and two of padding, so
 * that one entry is one 32-byte vector; acc_d the same in double.  v2u: the
 * six sums of offset grid values as bit fields of two words (pack_plan). */
typedef int32_t v8i __attribute__((vector_size(32)));
typedef double v4d __attribute__((vector_size(32)));
typedef struct acc_d { v4d lo, hi; } acc_d;
typedef uint64_t v2u __attribute__((vector_size(16)));
typedef double v2d __attribute__((vector_size(16))); /* DOT: n and Σxy, all the full-vector metrics read */

enum { PATH_PACKED, PATH_V8I, PATH_DOUBLE, PATH_DOT };

/* Raters whose row positions are kept between chunks (2 x 8 bytes each): few
 * enough that the cursors stay in L1/L2 beside the chunk. */
#define KNN_BLOCK 1024
/* An item whose pair updates reach this many times the item count touches
 * most columns: its row is scanned whole instead of keeping a touched list. */
#define KNN_DENSE_RATIO 4
/* Prefetching: the segment of the rater KNN_AHEAD places on, its first
 * KNN_PF_LINES cache lines (up to the row's end).  The hardware prefetcher
 * needs a few misses to find a new stream, and a segment is only a few
 * lines: without this, half the time went to waiting for the rows. */
#define KNN_AHEAD 8
#define KNN_PF_LINES 4
#define PF_SEGMENT(A, Q, E)                                                            \
    for (int64_t l_ = 0, s_ = 64 / (int64_t)sizeof *(A); l_ < KNN_PF_LINES && (Q) + l_ * s_ < (E); l_++) \
        __builtin_prefetch(&(A)[(Q) + l_ * s_])
/* Largest grid range (in units) packed: the table of contributions has
 * (range + 1)^2 entries. */
#define KNN_PACK_MAX_RANGE 63

/* ---- shared, read-only state of one run ---------------------------------- */

typedef struct knn_ctx {
    const rk_model *m;
    const rk_knn_opts *o;
    rk_sim_params sp;
    int path;              /* PATH_*: which accumulator and value arrays */
    int32_t *uq, *iq;      /* V8I: by_user / by_item values in units; PACKED: iq offset */
    double *uv, *iv;       /* DOUBLE: by_user / by_item values */
    int uconst;            /* DOT: every user's values are one value (rp3beta's
                              transformed matrix): a pair adds that value squared */
    uint32_t *pk;          /* PACKED: by_user entries as item << ybits | offset value */
    v2u *tab;              /* PACKED: tab[x * tab_w + y]: the contribution of (x, y) */
    int32_t tab_w, ybits, qmin;
    int b_n, b_1, b_2;     /* PACKED: field widths of n, Σx / Σy, the squares and Σxy */
    int exact_num;         /* PACKED: n Σxy and Σx Σy stay below 2^53 (exact in double) */
    int32_t chunk;         /* columns per chunk */
    int32_t n_chunks;
    const int64_t *cost;   /* pair updates per item (rk_knn_item_order) */
    int64_t dense_cost;    /* items with at least this cost are scanned whole */
    double scale;          /* the grid scale of the units, 0 for raw values */
    double *ncnt, *nsq;    /* full-vector metrics: |U_i| and ‖x_i‖² in units (rk_knn_item_norms) */
    int64_t *qptr;         /* known queries grouped by item: qptr[n_items + 1] */
    int64_t *qlist;
    rk_lists *lists;
    rk_queries *q;
    const rk_csr *hist;    /* the queries' users' histories (rk_knn_cpu_hist); NULL: the model's */
} knn_ctx;

/* ---- per-thread workspace ------------------------------------------------ */

typedef struct knn_ws {
    void *acc;        /* v2u, v8i or acc_d entries, one per item */
    size_t acc_bytes;
    double *simrow;   /* sim(i, j) of the current item where kept: > 0 (items with queries), or != 0 (--negative) */
    int32_t *touched; /* items j with a co-rater (sparse items) */
    int32_t n_touched;
    int64_t *cur, *end; /* chunked walk: row positions of a block of raters */
    double *hs;       /* heap scores, k */
    int32_t *hi;      /* heap indices, k */
    double *w;        /* aggregation scratch, k */
    int32_t *nb;
    float *r;
    double t_select, t_predict;
} knn_ws;

/*! rk_knn_big_alloc() : bytes (uninitialised) for an array entered at random
 *  places: 2 MB aligned and offered for huge pages when large; free() it. */
void *rk_knn_big_alloc(size_t bytes);

/*! rk_knn_entry_bytes() : the bytes of one accumulator entry of path. */
size_t rk_knn_entry_bytes(int path);

/*! rk_knn_group_queries() : c->qptr / c->qlist from c->q (known queries
 *  grouped by target item).  @return RK_OK, RK_E_NOMEM. */
rk_status rk_knn_group_queries(knn_ctx *c, rk_error *err);

/*! rk_knn_prepare_values() : choose c->path and make its value arrays (grid
 *  units, packed entries, doubles); st->path names it.  @return RK_OK,
 *  RK_E_NOMEM. */
rk_status rk_knn_prepare_values(knn_ctx *c, rk_knn_stats *st, rk_error *err);

/*! rk_knn_plan_chunks() : c->chunk, c->n_chunks and c->dense_cost. */
void rk_knn_plan_chunks(knn_ctx *c);

#endif /* RK_KNN_INTERNAL_H */
