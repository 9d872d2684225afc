// rk_gpu_internal.h — what the .cu files of gpu/ share: the check macros and
// the kernel launchers.  Never included outside gpu/.
#ifndef RK_GPU_INTERNAL_H
#define RK_GPU_INTERNAL_H

#include <cuda_runtime.h>
#include <cusparse.h>
#include <stdint.h>
#include <string.h>
#include <algorithm>
#include <vector>
#include "rk_gpu.h"
#include "rk_omp.h"
#include "rk_sim.h"

// Largest k the GPU selection kernels take (the CPU engine has no limit).
#define RK_GPU_MAX_K RK_GPU_SELECT_MAX_K // rk_gpu.h

// ---- error checks: every failure becomes RK_E_GPU naming call, file, line ----

rk_status rk_gpu_fail(rk_error *err, const char *call, const char *why, const char *file, int line);

#define RK_CHECK_GEN(err, expr, type, ok, to_string)                                 \
    do {                                                                             \
        type rk_chk_ = (expr);                                                       \
        if (rk_chk_ != (ok)) return rk_gpu_fail((err), #expr, to_string(rk_chk_),    \
                                                __FILE__, __LINE__);                 \
    } while (0)
#define RK_CUDA_CHECK(err, expr) RK_CHECK_GEN(err, expr, cudaError_t, cudaSuccess, cudaGetErrorString)
#define RK_CUSPARSE_CHECK(err, expr)                                                 \
    RK_CHECK_GEN(err, expr, cusparseStatus_t, CUSPARSE_STATUS_SUCCESS, cusparseGetErrorString)

// After each launch: the launch error, and with RK_GPU_SYNC_ERRORS the
// kernel's own fault, so that an asynchronous error names its kernel.
#ifdef RK_GPU_SYNC_ERRORS
#define RK_LAUNCH_CHECK(err, what)                                                   \
    do {                                                                             \
        RK_CUDA_CHECK(err, cudaGetLastError());                                      \
        cudaError_t rk_sync_ = cudaDeviceSynchronize();                              \
        if (rk_sync_ != cudaSuccess)                                                 \
            return rk_gpu_fail((err), what, cudaGetErrorString(rk_sync_), __FILE__, __LINE__); \
    } while (0)
#else
#define RK_LAUNCH_CHECK(err, what)                                                   \
    do {                                                                             \
        cudaError_t rk_launch_ = cudaGetLastError();                                 \
        if (rk_launch_ != cudaSuccess)                                               \
            return rk_gpu_fail((err), what, cudaGetErrorString(rk_launch_), __FILE__, __LINE__); \
    } while (0)
#endif

// ---- device memory and uploads ------------------------------------------------

// Every device allocation of one run, freed together.
struct dev_mem {
    std::vector<void *> ptrs;
    std::vector<size_t> sizes;
    size_t bytes = 0;
    ~dev_mem()
    {
        for (void *p : ptrs) cudaFree(p);
    }
    // Free one allocation early (the similarity tile before top-N).
    void release(void *p)
    {
        for (size_t t = 0; t < ptrs.size(); t++)
            if (ptrs[t] == p) {
                cudaFree(p);
                bytes -= sizes[t];
                ptrs.erase(ptrs.begin() + (long)t);
                sizes.erase(sizes.begin() + (long)t);
                return;
            }
    }
    template <typename T> rk_status alloc(T **p, size_t count, rk_error *err)
    {
        *p = NULL;
        size_t bytes = (count > 0 ? count : 1) * sizeof(T);
        cudaError_t e = cudaMalloc((void **)p, bytes);
        if (e != cudaSuccess) {
            cudaGetLastError();
            char what[96];
            snprintf(what, sizeof what, "cudaMalloc(%zu bytes)", bytes);
            return rk_gpu_fail(err, what, cudaGetErrorString(e), __FILE__, __LINE__);
        }
        ptrs.push_back(*p);
        sizes.push_back(bytes);
        this->bytes += bytes;
        return RK_OK;
    }
};

// The device's memory a run may still take: what is free less a reserve
// for the libraries (512 MiB), within g's cap less what mem holds
// (rk_gpu.cu; every engine sizes its tiles from it).
rk_status rk_gpu_budget_left(const rk_gpu_opts *g, const dev_mem &mem, size_t *out, rk_error *err);

struct stream_events {
    cudaStream_t st = NULL;
    cudaEvent_t ev[4] = {NULL, NULL, NULL, NULL};
    ~stream_events()
    {
        for (cudaEvent_t e : ev)
            if (e != NULL) cudaEventDestroy(e);
        if (st != NULL) cudaStreamDestroy(st);
    }
};

// A pinned (portable) host buffer of stager::kPiece bytes from the process's
// pool, allocated when the pool is empty; given back, it stays pinned for the
// next call until the process ends (rk_gpu_device.cu).  Thread-safe.
rk_status rk_gpu_pinned_take(char **buf, rk_error *err);
void rk_gpu_pinned_give(char *buf);

// Host-to-device copies through two pinned buffers: the CPU threads copy one
// piece into a pinned buffer while the copy engine moves the other.  From
// pageable memory the driver stages through a buffer of its own, one thread,
// at about 3 GB/s on the GPU machine.
// The pinned buffers come from a pool the process keeps (rk_gpu_pinned_take):
// cudaHostAlloc of two pieces cost 6-10 ms a call on the GPU machine, and
// cudaFreeHost waits for the whole device.
struct stager {
    static constexpr size_t kPiece = (size_t)8 << 20;
    char *buf[2] = {NULL, NULL};
    cudaEvent_t done[2] = {NULL, NULL};
    int next = 0;
    ~stager()
    {
        for (int b = 0; b < 2; b++) {
            if (done[b] != NULL) {
                cudaEventSynchronize(done[b]);
                cudaEventDestroy(done[b]);
            }
            if (buf[b] != NULL) rk_gpu_pinned_give(buf[b]);
        }
    }
    rk_status init(rk_error *err)
    {
        for (int b = 0; b < 2; b++) {
            RK_FORWARD(rk_gpu_pinned_take(&buf[b], err));
            RK_CUDA_CHECK(err, cudaEventCreateWithFlags(&done[b], cudaEventDisableTiming));
        }
        return RK_OK;
    }
    rk_status copy(void *d, const void *h, size_t bytes, cudaStream_t st, rk_error *err)
    {
        if (buf[0] == NULL) { // not initialised: a plain copy
            if (bytes > 0) RK_CUDA_CHECK(err, cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, st));
            return RK_OK;
        }
        for (size_t off = 0; off < bytes; off += kPiece) {
            const size_t len = std::min(kPiece, bytes - off);
            const int b = next;
            next ^= 1;
            RK_CUDA_CHECK(err, cudaEventSynchronize(done[b]));
            const char *src = (const char *)h + off;
            char *dst = buf[b];
            const int64_t parts = (int64_t)((len + ((size_t)1 << 20) - 1) >> 20);
#pragma omp parallel for schedule(static) if (parts > 1)
            for (int64_t q = 0; q < parts; q++) {
                size_t a = (size_t)q << 20, e = std::min(len, a + ((size_t)1 << 20));
                memcpy(dst + a, src + a, e - a);
            }
            RK_CUDA_CHECK(err, cudaMemcpyAsync((char *)d + off, dst, len, cudaMemcpyHostToDevice, st));
            RK_CUDA_CHECK(err, cudaEventRecord(done[b], st));
        }
        return RK_OK;
    }
    // Device-to-host the same way round: the copy engine fills one pinned
    // buffer while the CPU threads empty the other into h.  Synchronous:
    // h holds the bytes on return.
    rk_status copy_back(void *h, const void *d, size_t bytes, cudaStream_t st, rk_error *err)
    {
        if (buf[0] == NULL) {
            if (bytes > 0) RK_CUDA_CHECK(err, cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, st));
            RK_CUDA_CHECK(err, cudaStreamSynchronize(st));
            return RK_OK;
        }
        const size_t pieces = (bytes + kPiece - 1) / kPiece;
        for (int b = 0; b < 2; b++) RK_CUDA_CHECK(err, cudaEventSynchronize(done[b])); // earlier uploads
        for (size_t k = 0; k < pieces && k < 2; k++) RK_FORWARD(piece_back(d, bytes, k, st, err));
        for (size_t k = 0; k < pieces; k++) {
            const int b = (int)(k & 1);
            RK_CUDA_CHECK(err, cudaEventSynchronize(done[b]));
            const size_t off = k * kPiece, len = std::min(kPiece, bytes - off);
            const char *src = buf[b];
            char *dst = (char *)h + off;
            const int64_t parts = (int64_t)((len + ((size_t)1 << 20) - 1) >> 20);
#pragma omp parallel for schedule(static) if (parts > 1)
            for (int64_t q = 0; q < parts; q++) {
                size_t a = (size_t)q << 20, e = std::min(len, a + ((size_t)1 << 20));
                memcpy(dst + a, src + a, e - a);
            }
            if (k + 2 < pieces) RK_FORWARD(piece_back(d, bytes, k + 2, st, err));
        }
        next = 0;
        return RK_OK;
    }
    // Piece k of d into buffer k & 1, its event recorded.
    rk_status piece_back(const void *d, size_t bytes, size_t k, cudaStream_t st, rk_error *err)
    {
        const int b = (int)(k & 1);
        const size_t off = k * kPiece, len = std::min(kPiece, bytes - off);
        RK_CUDA_CHECK(err, cudaMemcpyAsync(buf[b], (const char *)d + off, len, cudaMemcpyDeviceToHost, st));
        RK_CUDA_CHECK(err, cudaEventRecord(done[b], st));
        return RK_OK;
    }
};

// The user-major matrix kept on device `device` by rk_gpu_csr_build
// (keep_csr) for the host arrays of h: a copy of its three device arrays
// (rk_gpu_device.cu), owned by the process until rk_gpu_forget_csr.
rk_status rk_gpu_resident_keep(int device, const rk_csr *h, const int64_t *d_ptr, const int32_t *d_idx,
                               const float *d_val, cudaStream_t st, rk_error *err);
// When h's host arrays are the kept ones (the same ptr and idx arrays and
// shape, on this device or on one whose memory this device can read peer to
// peer, NVLink): ptr and idx copied into the caller's arrays on `device`
// (the current device), and val too when h's values are the kept ones;
// *copied says which (1 ptr, 2 idx, 4 val, 8 from another device; 0:
// nothing kept for h, or out of this device's reach).  Several devices may
// copy at once.
rk_status rk_gpu_resident_copy(int device, const rk_csr *h, int64_t *d_ptr, int32_t *d_idx, float *d_val,
                               cudaStream_t st, int *copied, rk_error *err);

// Blocks of `threads` for a grid-stride loop over n items: enough to cover
// them, at least one, at most 65535 * 8 (the loop strides over the rest).
inline unsigned rk_grid_for(int64_t n, int threads)
{
    const int64_t b = (n + threads - 1) / threads;
    return (unsigned)std::min<int64_t>(std::max<int64_t>(b, 1), 65535 * 8);
}

template <typename T>
rk_status upload(T **d, const T *h, size_t n, dev_mem &mem, stager &sg, cudaStream_t st, rk_error *err)
{
    RK_FORWARD(mem.alloc(d, n, err));
    return sg.copy(*d, h, n * sizeof(T), st, err);
}

// The rows uploaded beside the parse (g->rows, rk_gpu_rows.cu) as the
// columns of the n ratings rk_gpu_csr_build sorts: their raw ids mapped to
// dense indices with the maps' values (g->user_ids, g->item_ids), the
// ratings copied, into mem on stream s; the rows' device buffers are freed.
// *mapped = 0 (RK_OK, nothing in the columns) where the rows are not all
// there or the ids are strings or too far apart: the caller uploads.
rk_status rk_gpu_rows_columns(const rk_gpu_opts *g, int64_t n, int32_t n_users, int32_t n_items, dev_mem &mem,
                              stager &sg, cudaStream_t s, int32_t **d_user, int32_t **d_item, float **d_rating,
                              int *mapped, rk_error *err);

// ---- the matrices on the device -----------------------------------------------

// One CSR on the device.  The values the sums are made of are in q (grid
// units, exact int32 sums) on a rating grid and in d (double) otherwise; v
// holds the real ratings where predictions need them (user-major).
struct rk_dev_csr {
    int32_t n_rows, n_cols;
    int64_t nnz;
    int64_t *ptr;
    int32_t *idx;
    int32_t *q;
    double *d;
    float *v;
};

// Which sums an accumulation keeps: the metric table's rk_metric_sums
// (rk_metric.h), whose values are the accumulators' counts.
// Accumulators a column of each kind keeps.
static inline __host__ __device__ constexpr int rk_sums_count(int kind) { return kind == RK_SUMS_DOT ? 2 : kind; }

struct rk_sims_args {
    rk_dev_csr by_item, by_user;   // values in q (grid) or v (floating)
    const int64_t *seg;            // [n_users][n_chunks + 1] chunk starts in user rows, or NULL:
                                   // k_sims then finds them by a warp search of each row
    int32_t n_chunks, chunk;       // columns per chunk
    const int32_t *tile_items;     // items of this tile, one per block
    const int32_t *h_tile_items;   // the same on the host, and the host's item-major row
    const int64_t *h_iptr;         // offsets (one query per kernel sizes its grid from them)
    int32_t tile_rows;
    int sym;                       // the tile holds every item: rows by item, each pair once (1: mirrored
                                   // here; 2: a shared tile's rows, mirrored by rk_gpu_sym_exchange)
    rk_sim_params sp;
    const double *ncnt, *nsq;      // RK_SUMS_DOT: |U_i| and ‖x_i‖² in units of every item
    double *S;                     // [tile_rows][n_items] similarities
    int32_t *N;                    // [tile_rows][n_items] supports
};

// The values the sums are made of (the `grid` argument below): doubles, int32
// grid units with int32 sums, or int32 units with 64-bit sums (the full-vector
// metrics of rk_knn_wide_grid's values).
enum { RK_GPU_VALUES_DOUBLE = 0, RK_GPU_VALUES_INT32 = 1, RK_GPU_VALUES_INT64 = 2 };

// Bytes of shared memory per column for the kind and value path.
size_t rk_gpu_sims_col_bytes(int kind, int grid);

// Accumulate the sums of the tile's items and write their similarity rows.
rk_status rk_gpu_sims_launch(const rk_sims_args *a, int kind, int grid, size_t smem_bytes,
                             cudaStream_t st, rk_error *err);

// One query per kernel: each row of the tile spread over the GPU, batch rows
// a launch (rk_gpu_sims.cu).  acc: batch x rk_gpu_sims_one_bytes() of zeroed
// device memory, left zeroed; smem: the shared memory of a column chunk, as
// for rk_gpu_sims_launch.
size_t rk_gpu_sims_one_bytes(int kind, int grid, int32_t n_items);
rk_status rk_gpu_sims_one_launch(const rk_sims_args *a, int kind, int grid, void *acc, int32_t batch, size_t smem,
                                 int sm_count, cudaStream_t st, rk_error *err);

// The values the sums are made of (rk_gpu_values.cu): with res, the
// baseline residuals r − (μ + b_u + b_i) of c's ratings d_ratings (res: the
// model's μ and baselines on the device; rows_are_users: c's rows are
// users), with the host's order of operations; else with scale > 0 the
// ratings in grid units (int32, c->q), else as doubles (c->d).
struct rk_residual_args {
    double mu;
    const double *bu, *bi;
    int rows_are_users;
};
rk_status rk_gpu_acc_values(rk_dev_csr *c, const float *d_ratings, double scale, const rk_residual_args *res,
                           dev_mem &mem, cudaStream_t st, rk_error *err);

// One symmetric tile shared by several parts (rk_gpu_symshare.cu).
// rk_gpu_sym_decide: part p's say at the decision (can: its tile of every
// item fits and its options sum symmetrically; order[n_run]: its rows); *yes
// when the tile is shared, own then gets its rows heaviest first over the
// upper triangle and *work their pair updates (else: full rows).
// rk_gpu_sym_exchange: after the part's sums on stream s, its tile (S, N, a
// row an item) published, the others' awaited, its rows' lower triangle
// filled from them (wait_s: the wait, mirror_s: the fill); every part's reads
// done when it returns.  rk_gpu_sym_leave_part: rk_gpu_sym_leave.
rk_status rk_gpu_sym_decide(rk_gpu_sym *sh, int p, bool can, const int32_t *order, int32_t n_run, bool *yes,
                            std::vector<int32_t> &own, int64_t *work, rk_error *err);
rk_status rk_gpu_sym_exchange(rk_gpu_sym *sh, int p, double *S, int32_t *N, dev_mem &mem, cudaStream_t s,
                              double *wait_s, double *mirror_s, rk_error *err);
void rk_gpu_sym_leave_part(rk_gpu_sym *sh, int p);

// The order of a symmetric tile's rows: items by descending work when each
// pair is summed once (ties by index), so that the longest rows start
// first.  scratch: rk_gpu_sym_order_bytes(n_items) bytes of device memory.
size_t rk_gpu_sym_order_bytes(int32_t n_items);
rk_status rk_gpu_sym_order_launch(const rk_dev_csr *by_user, int32_t n_items, void *scratch, size_t bytes,
                                  int32_t *order, cudaStream_t st, rk_error *err);

// seg[u][c] = first position in user u's row whose item is >= c * chunk.
rk_status rk_gpu_segments_launch(const rk_dev_csr *by_user, int32_t n_chunks, int32_t chunk,
                                 int64_t *seg, cudaStream_t st, rk_error *err);

// Top-k of each tile row (CONTRACT.md §3 order): lists[item] for item = tile_items[t].
struct rk_select_args {
    const double *S;
    const int32_t *N;              // may be NULL: supports then 0
    int64_t ld;                    // row stride of S and N
    int32_t n_cols;
    const int32_t *tile_items;     // row t holds item tile_items[t] (NULL: item t)
    int row_is_item;               // 1: item tile_items[t] is in row tile_items[t] (a tile of every item)
    int32_t rows, k;
    int32_t *len, *nbr, *sup;      // per item: len[item], nbr/sim/sup[item * k + r]
    float *sim;
    int negative;                  // 1: signed lists, the k largest |sim| != 0 (--negative yes)
};
rk_status rk_gpu_select_launch(const rk_select_args *a, cudaStream_t st, rk_error *err);

// k above RK_GPU_MAX_K: the tile's rows S and N (rows x n_cols, row t is
// item items[t], a host array) are copied to the host and selected there with
// rk_topk (the CPU engine's selection and order) into hs.out.
struct rk_host_select {
    rk_lists *out;                 // the caller's lists, or own
    rk_lists own;                  // when the caller gave none (top-N only)
    std::vector<double> S;         // a tile's rows on the host
    std::vector<int32_t> N;
    rk_host_select() : out(NULL) { memset(&own, 0, sizeof own); }
    ~rk_host_select() { rk_lists_free(&own); }
    rk_host_select(const rk_host_select &) = delete;
    rk_host_select &operator=(const rk_host_select &) = delete;
};
rk_status rk_gpu_select_host(const double *d_S, const int32_t *d_N, int32_t n_cols, const int32_t *items, int32_t rows,
                             int negative, rk_host_select &hs, cudaStream_t st, rk_error *err);

// The queries of one engine call on the host: the known ones grouped by
// the tile of their item (rk_gpu_plan_queries, rk_gpu_predict.cu).
struct host_queries {
    std::vector<int32_t> user, item, row; // known queries sorted by tile
    std::vector<int64_t> orig;            // their index in the caller's arrays
    std::vector<int64_t> tile_ptr;        // queries of tile t: [tile_ptr[t], tile_ptr[t+1])
};

// Known queries bucketed by the tile of their item (pos_of: an item's
// row among the tiles', tile_rows a tile), in their order within a tile;
// unknown ones answered here (the predictors' fallback).  On every core.
void rk_gpu_plan_queries(const rk_model *m, const rk_knn_opts *o, rk_queries *q, const std::vector<int32_t> &pos_of,
                         int32_t tile_rows, int32_t n_tiles, host_queries *hq);

// The answers of hq's queries (d_pred, d_used and, when q->nb, d_nb of k a
// query) back through sg into the caller's q at their original places;
// *t_back: when the copies ended.
rk_status rk_gpu_predict_collect(const host_queries &hq, const double *d_pred, const int32_t *d_used,
                                 const int32_t *d_nb, int32_t k, stager &sg, cudaStream_t s, rk_queries *q,
                                 double *t_back, rk_error *err);

// Predictions for queries whose target item is a row of the tile.
struct rk_predict_args {
    const double *S;
    int64_t ld;
    int32_t nq;
    const int32_t *q_user, *q_item, *q_row; // q_row: the tile row of the item
    const int64_t *uptr;
    const int32_t *uidx;
    const float *uval;             // real ratings, user-major
    const double *item_mean, *bu, *bi;
    double mu, rmin, rmax;
    int mode, k, min_k;
    double *pred;
    int32_t *used;
    int32_t *nb; // NULL, or k a query: the items taken, ascending (rk_queries.nb)
};
rk_status rk_gpu_predict_launch(const rk_predict_args *a, cudaStream_t st, rk_error *err);

// ---- the item-major matrix built on the device (rk_gpu_transpose.cu) -----------

// by_item = by_userᵀ on the device with cusparseCsr2cscEx2 (CSR2CSC_ALG1):
// ptr (int64), idx and the float ratings v, rows sorted by user, exactly as
// the host's rk_csr_transpose makes them; q and d are left NULL (acc_values
// fills them).  cusparseCsr2cscEx2 counts entries in int: nnz must be below
// 2^31 (rk_gpu_transpose_fits), else the caller uploads the host's matrix.
// Allocations go to mem and live as long as it.
int rk_gpu_transpose_fits(int64_t nnz);

// A host CSR uploaded into *d (v only allocated when h has no values: they
// are then filled on the device, rk_gpu_row_values); q and d left NULL.
rk_status rk_gpu_upload_csr(const rk_csr *h, rk_dev_csr *d, dev_mem &mem, stager &sg, cudaStream_t st, rk_error *err);

// a->v (allocated) filled from values given per row (rk_model.row_val, on
// the device in d_rv): v[p] = d_rv[row of p], or with by_idx d_rv[a->idx[p]]
// (the item-major matrix, whose column indices are users).
rk_status rk_gpu_row_values(const rk_dev_csr *a, const float *d_rv, int by_idx, cudaStream_t st, rk_error *err);
rk_status rk_gpu_transpose(cusparseHandle_t h, const rk_dev_csr *by_user, rk_dev_csr *by_item, dev_mem &mem,
                           cudaStream_t st, rk_error *err);

// The same on a matrix of a few entries, on the current device, with a
// handle and a stream of its own: cuSPARSE's and this file's kernels are
// loaded (CUDA loads a module's kernels when first launched) and cuSPARSE's
// set-up done before the engine's first transposition.  For rk_gpu_warmup.
rk_status rk_gpu_transpose_warm(rk_error *err);

// ---- the SpGEMM route of the full-vector metrics (rk_gpu_spsims.cu) ------------

// A tile's dot products and co-rater counts against every item as C = Q · B
// with cuSPARSE (cusparseSpGEMMreuse, values CUDA_R_64F): Q = the tile's rows
// of the item-major matrix (rows x n_users, gathered on the device), B = the
// user-major matrix (n_users x n_items).  The state holds B (32-bit offsets,
// double values), its row sums for the checksums and the cuSPARSE descriptor
// of B; its arrays come from the run's dev_mem (so the run's budget counts
// them) and go back to it in rk_spsims_free.
struct rk_spsims;

// by_user, by_item: the run's matrices, values in q (grid) or d; h_item_ptr:
// the host's item-major offsets (m->by_item.ptr), h_cost: the products of
// each item's row, Σ over its raters of their rating counts
// (rk_knn_item_order); both host arrays must outlive the state.  RK_E_RANGE
// when the ratings exceed cuSPARSE SpGEMM's 32-bit indices.
rk_status rk_spsims_create(cusparseHandle_t h, const rk_dev_csr *by_user, const rk_dev_csr *by_item,
                           const int64_t *h_item_ptr, const int64_t *h_cost, dev_mem &mem, cudaStream_t st,
                           rk_spsims **out, rk_error *err);

struct rk_spsims_tile_args {
    const int32_t *d_items;   // the tile's items on the device: row t is item d_items[t]
    const int32_t *h_items;   // the same items on the host (to plan the sub-tiles)
    int32_t rows;
    rk_sim_params sp;
    const double *ncnt, *nsq; // |U_i| and ‖x_i‖² in units of every item (device)
    double *S;                // [rows][n_items] similarities, as k_sims writes them
    int32_t *N;               // [rows][n_items] co-rater counts
    size_t budget;            // device bytes one product (sub-tile) may take
    int32_t max_rows;         // rows per product at most (0: no limit but the budget's)
};

// The tile's similarity rows: zeroed, then filled by products of as many
// rows as the budget allows (halved when cuSPARSE asks more than it gives or
// refuses for want of memory, RK_E_GPU when one row does not fit).
rk_status rk_spsims_tile(rk_spsims *c, const rk_spsims_tile_args *a, rk_error *err);

// What a run did: products computed, products halved for want of memory,
// the most bytes of cuSPARSE buffers held at once per intermediate product,
// and the reuse algorithm ("deterministic", or "default" when cuSPARSE
// refused that one).
struct rk_spsims_report {
    int64_t products, splits;
    double bytes_per_product;
    const char *algorithm;
};
void rk_spsims_counts(const rk_spsims *c, rk_spsims_report *out);

// Destroys the descriptor and, when mem is not NULL, gives the state's arrays
// back to it.  Accepts NULL.
void rk_spsims_free(rk_spsims *c, dev_mem *mem);

// ---- top-N on the device (rk_gpu_topn.cu, rk_gpu_spgemm.cu) ----------------------

// The neighbour lists on the device: list i is nbr/q[i * k .. i * k + len[i]),
// best first; q[] are the fixed-point weights rk_topn_fixed(sim).
struct rk_dev_lists {
    int32_t n_items, k;
    const int32_t *len, *nbr;
    const uint64_t *q;
    int neg;                  // 1: some weights are negative (--negative yes): signed sums
};

// A batch's scores as a CSR matrix on the device, one row per user of the
// batch (in batch order), int32 offsets; val[p] = Σ q of CONTRACT.md §5 as an exact
// double (an integer below 2^53).  Items the user rated may be present: the
// selection drops them.
struct rk_dev_scores {
    int32_t rows;
    int64_t nnz;
    const int32_t *ptr;   // rows + 1
    const int32_t *col;   // nnz
    const double *val;    // nnz
};

// cuSPARSE SpGEMM route: scores = pattern(R[users of the batch]) · L, with L
// the n_items x n_items CSR of the lists (columns sorted within each row,
// values double(q)).  rk_spgemm_create builds L once; rk_spgemm_scores
// gathers the batch's rows of R (values 1.0) and multiplies.  The buffers of
// a batch (its A, C and cuSPARSE's work buffers) are kept and reused while
// they are large enough; the returned matrix stays valid until the next call.
// The caller sizes batches so that `products` (Σ over the batch's users of
// Σ len[j] over their items: cuSPARSE's intermediate products) stays below
// RK_SPGEMM_MAX_PRODUCTS and the memory cap.  Every cuSPARSE status is
// checked (RK_CUSPARSE_CHECK).
#define RK_SPGEMM_MAX_PRODUCTS ((int64_t)1 << 30)
struct rk_spgemm;
rk_status rk_spgemm_create(cusparseHandle_t h, const rk_dev_lists *L, cudaStream_t st, rk_spgemm **out,
                           rk_error *err);
rk_status rk_spgemm_scores(rk_spgemm *c, const rk_dev_csr *R, const int32_t *d_users, int32_t count,
                           int64_t products, rk_dev_scores *out, rk_error *err);
// Device bytes rk_spgemm_scores may hold for a batch of `products`
// intermediate products and `rows` users (for sizing batches).
size_t rk_spgemm_bytes(int64_t products, int32_t rows, int32_t n_items);
void rk_spgemm_free(rk_spgemm *c);

// The lists' fixed-point weights q = rk_topn_fixed(sim) (0 past each list's end).
rk_status rk_gpu_fixed_launch(const int32_t *len, const float *sim, int32_t n_items, int32_t k, uint64_t *q,
                              cudaStream_t st, rk_error *err);

// What the top-N stage reads on the device.
struct rk_topn_dev_in {
    rk_dev_csr R;             // the user-major ratings: ptr and idx are read
    rk_dev_lists L;           // the neighbour lists and their weights
    cusparseHandle_t sparse;  // for the spgemm route
    int sm_count;
    size_t smem_optin;        // opt-in shared memory per block
    size_t budget;            // device bytes the stage may take (sizes the spgemm batches)
};

// Top-N for the users of o (rk_topn.h) from the device's lists, by the route
// of g (auto: the kernel); the batches reach o->sink in order.
rk_status rk_gpu_topn_run(const rk_model *m, const rk_topn_dev_in *in, const rk_topn_opts *o, const rk_gpu_opts *g,
                          cudaStream_t st, rk_topn_stats *ts, rk_error *err);

#endif // RK_GPU_INTERNAL_H
