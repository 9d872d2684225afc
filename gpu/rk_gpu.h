/* rk_gpu.h — the only door to the CUDA engine (prefix rk_gpu_).  Plain C.
 *
 * The engine has the contract of rk_knn_cpu (engine/rk_knn.h): same lists, same
 * predictions (similarities within 1e-4, lists identical except among ties).
 * Every CUDA/cuSPARSE failure becomes RK_E_GPU with the failing call, file and
 * line in the message; nothing here aborts or prints.  Built without CUDA,
 * rk_gpu_available() answers 0 and rk_gpu_knn() returns RK_E_GPU.  A CUDA
 * build needs no CUDA library to start: the runtime is linked statically
 * and cuSPARSE is opened at run time (rk_cusparse_dl.c); without the driver
 * or libcusparse, rk_gpu_available() answers 0 with the reason.
 */
#ifndef RK_GPU_H
#define RK_GPU_H

#include <stddef.h>
#include <stdint.h>
#include "rk_status.h"
#include "rk_knn.h"
#include "rk_topn.h"
#include "rk_rbc.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! rk_gpu_available() : @return 1 when a CUDA device can be used and
 *  cuSPARSE is loaded, else 0; the device name (or the reason none is usable)
 *  goes to buf (cap bytes).  Without a device (or driver) the reason begins
 *  "no CUDA device" (and names libcusparse when it is missing too). */
int rk_gpu_available(char *buf, size_t cap);

/*! rk_gpu_device_count() : @return the CUDA devices visible (0 when none,
 *  or built without CUDA). */
int rk_gpu_device_count(void);

/*! rk_gpu_warmup() : start the CUDA context of device `device` (an ordinal),
 *  so that rk_gpu_knn does not wait for it; meant for a thread of its own
 *  while the data load.  @return 1 when the device answered, else 0. */
int rk_gpu_warmup(int device);

/*! rk_gpu_supports() : @return 1 when the GPU engine takes these options
 *  (k at most its selection limit), else 0 with the reason in why. */
int rk_gpu_supports(const rk_knn_opts *o, char *why, size_t cap);

/* The training ratings' rows uploaded while the loader parses later blocks
 * (etl/rk_load.h, rk_rows_feed: rk_gpu_rows_ready and rk_gpu_rows_hold are
 * its calls, the object its ud), so that rk_gpu_csr_build finds them on the
 * device and maps their raw ids to dense indices there (g->rows, with the
 * id maps' values) instead of uploading the host's indices.  A thread of
 * its own copies each block's rows through two pinned buffers on a stream
 * of its own, once the device's context has started (rk_gpu_warmup may be
 * starting it).  The load never waits for the context: where the upload
 * fails, cannot start, or lags at the load's end by more than a few blocks,
 * it is dropped and rk_gpu_csr_build uploads as before; the matrix is the
 * same either way. */
typedef struct rk_gpu_rows rk_gpu_rows;

typedef struct rk_gpu_rows_report {
    int complete;        /* every row is on the device */
    int taken;           /* rk_gpu_csr_build mapped them (else it uploaded the host's indices) */
    int64_t rows;        /* rows copied */
    double wait_s;       /* the load's wait for the last rows' copies */
    char why[160];       /* why not complete or not taken ("" when taken) */
} rk_gpu_rows_report;

/*! rk_gpu_rows_new() : an upload beside the parse, for rows whose arrays
 *  hold min_rows or more (fewer: the host's upload is as fast); nothing
 *  starts before the first rows.  device(ud) names the device once its
 *  context is up (-2: not yet, polled every millisecond; -1: none usable).
 *  @return NULL: no memory. */
rk_gpu_rows *rk_gpu_rows_new(int64_t min_rows, int (*device)(void *ud), void *ud);
/*! rk_gpu_rows_ready(), rk_gpu_rows_hold(), rk_gpu_rows_release() :
 *  rk_rows_feed's calls (ud: an rk_gpu_rows).  cap: the rows the arrays hold
 *  (the device's buffers).  The rows' pages stay registered with the driver
 *  from ready until release. */
void rk_gpu_rows_ready(void *ud, const int64_t *u, const int64_t *i, const float *r, int64_t cap, int64_t from,
                       int64_t to);
void rk_gpu_rows_hold(void *ud, int done);
void rk_gpu_rows_release(void *ud);
/*! rk_gpu_rows_stats() : what became of the upload. */
void rk_gpu_rows_stats(const rk_gpu_rows *p, rk_gpu_rows_report *st);
/*! rk_gpu_rows_free() : stop and join the thread, free the device buffers. */
void rk_gpu_rows_free(rk_gpu_rows *p);

/* How the GPU computes top-N scores (CONTRACT.md §5). */
typedef enum rk_gpu_topn_route {
    RK_GPU_TOPN_AUTO = 0,   /* the faster one measured (BENCHMARKS.md): the kernel */
    RK_GPU_TOPN_KERNEL,     /* one block per user, fixed-point sums in shared memory */
    RK_GPU_TOPN_SPGEMM      /* cuSPARSE SpGEMM of the rating pattern with the lists */
} rk_gpu_topn_route;

/*! rk_gpu_topn_route_parse() : "auto", "kernel", "spgemm". @return RK_OK or RK_E_ARG. */
rk_status rk_gpu_topn_route_parse(const char *name, rk_gpu_topn_route *out);
const char *rk_gpu_topn_route_name(rk_gpu_topn_route r);

/* How the GPU spreads the rows of a tile (Cordeiro, Meyer and Zola). */
typedef enum rk_gpu_query_route {
    RK_GPU_QUERY_AUTO = 0,  /* a subset of fewer than RK_GPU_QUERY_CROSSOVER rows: one per kernel;
                               else one per block */
    RK_GPU_QUERY_BLOCK,     /* one block per row (item), the rows of a tile side by side */
    RK_GPU_QUERY_KERNEL     /* the whole GPU on one row at a time */
} rk_gpu_query_route;

/* Subset rows below which AUTO takes one query per kernel: the crossover
 * measured on the H100 at ML-20M size (bench/gpu_queries, BENCHMARKS.md):
 * one per kernel was faster at 512 random items (6.9 against 8.0 ms), one
 * per block at 768 (7.9 against 9.9 ms). */
#define RK_GPU_QUERY_CROSSOVER 640

/*! rk_gpu_query_route_parse() : "auto", "block", "kernel". @return RK_OK or RK_E_ARG. */
rk_status rk_gpu_query_route_parse(const char *name, rk_gpu_query_route *out);
const char *rk_gpu_query_route_name(rk_gpu_query_route r);

/* Largest k the GPU's own list selection takes; above it the lists are
 * selected on the host from the GPU's similarity rows (the same lists). */
#define RK_GPU_SELECT_MAX_K 2048

/* How the GPU computes the similarity rows of the full-vector metrics
 * (cosine-full, euclidean-full, jaccard): their dot products and co-rater
 * counts.  The other metrics always take the kernel. */
typedef enum rk_gpu_sims_route {
    RK_GPU_SIMS_AUTO = 0,   /* the kernel, until both are measured on the H100
                               (bench/gpu_paths RATINGS sims) */
    RK_GPU_SIMS_KERNEL,     /* k_sims: one block per item, co-rating sums in shared memory */
    RK_GPU_SIMS_SPGEMM      /* cuSPARSE SpGEMM of the tile's item rows with the user-major
                               matrix; the full-vector metrics only (RK_E_ARG otherwise) */
} rk_gpu_sims_route;

/*! rk_gpu_sims_route_parse() : "auto", "kernel", "spgemm". @return RK_OK or RK_E_ARG. */
rk_status rk_gpu_sims_route_parse(const char *name, rk_gpu_sims_route *out);
const char *rk_gpu_sims_route_name(rk_gpu_sims_route r);

/* Largest N the GPU top-N selection takes (the CPU engine has no limit). */
#define RK_GPU_MAX_TOPN 2048

typedef struct rk_gpu_opts {
    int device;          /* the CUDA ordinal the call runs on (0 when zeroed) */
    size_t memory_cap;   /* bytes of device memory the engine may use (0 = free memory) */
    int32_t tile_items;  /* force the tile height in items (0 = sized from memory); tests */
    int full_rows;       /* sum every row in full even when one tile holds all the items
                            (by default each pair is then summed once, for the metrics
                            with four or six sums); tests */
    rk_gpu_topn_route topn_route;
    int64_t topn_batch;  /* force the users per top-N batch (0 = sized from memory); tests */
    int host_transpose;  /* upload both orientations instead of transposing on the device; tests */
    int no_segments;     /* find each rater's chunk segment by search instead of the table of
                            n_users x (chunks + 1) offsets, as when the table does not fit; tests */
    rk_gpu_query_route query_route;
    int host_select;     /* select the lists on the host even when k is within the GPU's limit; tests */

    rk_gpu_sims_route sims_route;
    int32_t spgemm_rows; /* force the rows of each SpGEMM product (0 = as many as its memory
                            allows); a product that does not fit is still halved; tests */
    size_t spgemm_budget; /* force the device bytes the SpGEMM products may take below half of
                             what is left beside the similarity tile (0 = that half); tests */
    int keep_csr;        /* rk_gpu_csr_build: keep the matrix on the device for the engine
                            calls on it, until rk_gpu_forget_csr */
    rk_gpu_rows *rows;   /* rk_gpu_csr_build: the ratings' rows uploaded beside the parse (NULL: none) */
    const int64_t *user_ids, *item_ids; /* with rows: the raw id of each dense index, ascending
                                           (rk_ids_values; NULL: string ids) */
    /* rk_gpu_knn with top-N, as one of several parts sharing a job's rows
       (job/rk_job_spread.c): once the call's lists and predictions are on the
       host, and before its top-N, between(between_ud, &lists, &topn, err) is
       called on the calling thread.  It waits for the other parts and gives
       every item's lists (*lists, uploaded over the device's own) and this
       part's top-N request (*topn; NULL: none, the call ends with its lists).
       Its status other than RK_OK ends the call.  The ratings stay on the
       device between the two: they cross PCIe once.  NULL: top-N from the
       call's own lists. */
    rk_status (*between)(void *ud, const rk_lists **lists, const rk_topn_opts **topn, rk_error *err);
    void *between_ud;
    /* rk_gpu_knn as part sym_part of the parts of one process that share a
       symmetric tile (rk_gpu_sym_create; NULL: none): see rk_gpu_sym below. */
    struct rk_gpu_sym *sym;
    int sym_part;
} rk_gpu_opts;

/* ---- one symmetric tile summed by several GPUs -----------------------------
 * One GPU whose tile holds every item sums each co-rating pair once (the
 * upper triangle, mirrored): for Pearson at Netflix size 25-30% less work
 * than full rows.  Parts of one process sharing the items out among GPUs
 * (job/rk_job_spread.c) lose that, unless they share one tile: each part's
 * call (rk_gpu_opts.sym, .sym_part; its rows o->rows = the items whose
 * part_of is its index) holds a tile of every item, sums the upper triangle
 * of its own rows, and once every part has done so fills its rows' lower
 * triangle from the owners' tiles (peer to peer, or the same device's
 * memory), then selects and predicts its own rows.  The parts decide
 * together when they plan their tiles: each says whether its device holds
 * the whole tile, reads the others' devices, and its options sum this
 * metric symmetrically (rk_gpu_sym_applies); if any cannot, or its call
 * failed before, every part sums its rows in full (the same lists).  A
 * part's call that fails after the decision ends the others' calls with
 * RK_E_GPU (each may then be redone, in full rows, elsewhere).  The lists
 * and predictions are those of one GPU, bit for bit.
 * The parts' calls run at the same time on threads of one process, one call
 * a part; an rk_gpu_sym serves one round of calls. */
typedef struct rk_gpu_sym rk_gpu_sym;

/*! rk_gpu_sym_applies() : 1 when the GPU engine sums the similarities of o
 *  (its metric, route and selection) over a symmetric tile once it holds
 *  every item, else 0. */
int rk_gpu_sym_applies(const rk_knn_opts *o, const rk_gpu_opts *g);

/*! rk_gpu_sym_create() : the meeting of n_parts calls (2..64) on
 *  devices[n_parts] for items 0..n_items-1, part_of[n_items] the part of
 *  each item and cost[n_items] each item's work over the upper triangle
 *  (rk_knn_item_sym_cost); both copied.  @return RK_OK, RK_E_ARG,
 *  RK_E_NOMEM, RK_E_GPU (built without CUDA). */
rk_status rk_gpu_sym_create(int n_parts, const int *devices, const int32_t *part_of, const int64_t *cost,
                            int32_t n_items, rk_gpu_sym **out, rk_error *err);
/*! rk_gpu_sym_leave() : part's call will not be made, or has ended: the
 *  others no longer wait for it (its call leaves by itself; a caller whose
 *  thread for a part did not start says so here).  Once per part is enough;
 *  more are no-ops. */
void rk_gpu_sym_leave(rk_gpu_sym *sh, int part);
/*! rk_gpu_sym_shared() : 1 when the parts decided to share the tile. */
int rk_gpu_sym_shared(const rk_gpu_sym *sh);
void rk_gpu_sym_free(rk_gpu_sym *sh);

/*! rk_gpu_knn() : the engine of rk_knn_cpu on the GPU, and, when topn is
 *  not NULL, the top-N of rk_topn_cpu from the lists while they are still on
 *  the device (lists may then be NULL; the batches reach topn->sink as on the
 *  CPU, byte for byte the same).  tst (may be NULL) gets the top-N stage's
 *  statistics.  g->sims_route RK_GPU_SIMS_SPGEMM with a metric other than
 *  the full-vector ones is RK_E_ARG.  @return RK_OK, RK_E_ARG, RK_E_GPU,
 *  RK_E_NOMEM, RK_E_RANGE (the SpGEMM route's 32-bit indices), or the sink's
 *  status. */
rk_status rk_gpu_knn(const rk_model *m, const rk_knn_opts *o, const rk_gpu_opts *g,
                     rk_lists *lists, rk_queries *q, const rk_topn_opts *topn,
                     rk_topn_stats *tst, rk_knn_stats *st, rk_error *err);

/*! rk_gpu_pmodel() : rk_pmodel_cpu's model stage (--predict interpolate or
 *  global, engine/rk_pmodel.h) on device g->device, with its results bit
 *  for bit: interpolate from q->nb, global from lists (every item's).
 *  @return RK_OK, RK_E_GPU, RK_E_NOMEM, RK_E_ARG, RK_E_CANCELLED. */
rk_status rk_gpu_pmodel(const rk_model *m, const rk_knn_opts *o, const rk_gpu_opts *g, const rk_lists *lists,
                        rk_queries *q, rk_knn_stats *st, rk_error *err);

/*! rk_gpu_topn() : top-N on the GPU from lists computed elsewhere (uploaded
 *  first): the same results as rk_topn_cpu.  For tests and for lists read
 *  from a file. */
rk_status rk_gpu_topn(const rk_model *m, const rk_lists *l, const rk_topn_opts *o, const rk_gpu_opts *g,
                      rk_topn_stats *st, rk_error *err);

/*! rk_gpu_transpose_check() : the item-major matrix of m->by_user built on
 *  the device (cusparseCsr2cscEx2, as the engine does) and copied back into
 *  *out (allocated here; free with rk_csr_free), for tests against the
 *  host's rk_csr_transpose.  @return RK_OK, RK_E_GPU, RK_E_NOMEM. */
rk_status rk_gpu_transpose_check(const rk_csr *by_user, rk_csr *out, rk_error *err);

/*! rk_gpu_csr_build() : the user-major matrix of the ratings t (dense
 *  indices below n_users and n_items) sorted on the GPU (g->device; g may be
 *  NULL): rk_triples_dedupe_csr's matrix bit for bit under `policy`,
 *  allocated here (free with rk_csr_free), *taken = 1.  Pairs rated more
 *  than once are resolved on the GPU (RK_DUP_LAST, FIRST, MEAN) when found
 *  is not NULL: *found then says what rk_triples_resolve must do to t to
 *  make it rk_triples_dedupe_csr's (the caller frees it with
 *  rk_dup_found_free, whatever the return).  With leave_out (NULL: none),
 *  the ratings whose bit is set (bit t of word t / 64) are not in the
 *  matrix: rk_split_holdout_csr's matrix of the rest.  It leaves the sort to
 *  the host (*taken = 0, *out and *found empty, RK_OK) where the host's is
 *  as fast or the work is the host's: a pair rated twice under
 *  RK_DUP_ERROR, beside leave_out or without found, an index out of range,
 *  ratings already grouped by user, 2^32 ratings or more, or more device
 *  memory than g's budget (about 36 bytes a rating).  @return RK_OK,
 *  RK_E_GPU (a failing call: the host may sort instead, the same matrix),
 *  RK_E_NOMEM. */
rk_status rk_gpu_csr_build(const rk_triples *t, int32_t n_users, int32_t n_items, const uint64_t *leave_out,
                           rk_dup_policy policy, rk_dup_found *found, const rk_gpu_opts *g, rk_csr *out, int *taken,
                           rk_error *err);

/*! rk_gpu_forget_csr() : free the matrix rk_gpu_csr_build kept on the device
 *  (g->keep_csr).  While it is kept, an engine call whose model's user-major
 *  matrix has the same host ptr and idx arrays copies them on the device
 *  instead of uploading them (and the values, when they are the same array
 *  too): one copy of the ratings crosses PCIe.  One matrix is kept per
 *  process (a later keep replaces it).  The caller forgets before it frees
 *  or changes those host arrays.  Nothing kept: nothing done. */
void rk_gpu_forget_csr(void);

/*! rk_gpu_select_rows() : the GPU's list selection alone, for tests: the
 *  top out->k positive entries of each of the n_rows rows of rows[n_rows *
 *  n_cols] (row-major), or with negative the top out->k nonzero entries by
 *  magnitude (signed lists), in CONTRACT.md §3 order, into out (shape
 *  n_rows x k; supports are 0).  @return RK_OK, RK_E_ARG, RK_E_GPU. */
rk_status rk_gpu_select_rows(const double *rows, int32_t n_rows, int32_t n_cols, int negative, rk_lists *out,
                             rk_error *err);

/*! rk_gpu_rbc() : rk_rbc_cpu (engine/rk_rbc.h) on the GPU: the same lists
 *  (candidates, similarities, order) and the same counts in st, the CPU
 *  engine defining them.  g: memory_cap is read (may be NULL).
 *  @return RK_OK, RK_E_ARG, RK_E_GPU, RK_E_NOMEM. */
rk_status rk_gpu_rbc(const rk_model *m, const rk_knn_opts *o, const rk_rbc_opts *r, const rk_gpu_opts *g,
                     rk_lists *lists, rk_rbc_stats *st, rk_error *err);

#ifdef __cplusplus
}
#endif
#endif /* RK_GPU_H */
