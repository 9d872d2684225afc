// The cuSPARSE SpGEMM route of the full-vector metrics' similarity rows.
//
// For the items of a tile, the dot products over co-raters and the co-rater
// counts against every item are the rows of C = Q · B (the seed's method,
// Zhou 2018): Q holds the tile's rows of the item-major matrix (rows x
// n_users, gathered on the device: row lengths, a cub scan, a gather) and B
// is the user-major matrix (n_users x n_items).  Values are doubles of the
// sums' units, grid integers q on a rating grid and the ratings otherwise: on
// a grid every product and partial sum is an integer below 2^53, exact in
// any order, so rk_sim_value gets the arguments of the CPU engine and of
// k_sims bit for bit.
//
// Counts and dot products share C's structure, so cusparseSpGEMMreuse
// computes it once (workEstimation, nnz, copy) and the values twice
// (reuse_compute): first with every value of Q and B set to 1 (C = the
// co-rater counts, scattered into N), then with the units (C = the dot
// products, scattered into S with N's counts).  Two plain products would run
// the symbolic phase, the larger part of the work, twice; what reuse costs is
// buffers 4 and 5 held over both numeric phases, which the budget counts.
// The values change in place between the phases, as in NVIDIA's
// spgemm_reuse sample, so no descriptor changes its pointers.
//
// Sub-tiles: the memory of a product grows with its intermediate products
// (Σ over the rows' raters of their rating counts, known on the host), which
// no row height bounds.  Rows are taken while an estimate of their product
// fits the budget; cuSPARSE's own buffer sizes are then checked against it
// and a product that does not fit, or that cuSPARSE refuses for want of
// memory (reuse_nnz also allocates on its own), is halved, down to one row
// (RK_E_GPU with the need when even that does not fit).  Each product's
// memory is freed before the next one.
//
// Checks beside every status (cf. rk_gpu_spgemm.cu: a wrapper once returned
// an all-zero product without an error): C's shape, offsets and columns; the
// counts written add up to the products (each intermediate product adds 1 to
// one count, so a lost or doubled entry shows); Σ of the dot products equals
// Σ over Q's entries of x times the rater's row sum in B.
#include "rk_gpu_internal.h"
#include <cub/device/device_scan.cuh>
#include <math.h>
#include <new>

namespace {

constexpr int kThreads = 256;
constexpr unsigned kFull = 0xffffffffu;
// Deterministic values run to run (the structure is deterministic with either
// reuse algorithm); off the grid the order of the sums would otherwise vary.
// Should cuSPARSE refuse it on the first product (NOT_SUPPORTED or
// INVALID_VALUE), the default algorithm takes over and the run's detail says so.
constexpr cusparseSpGEMMAlg_t kAlg = CUSPARSE_SPGEMM_CSR_ALG_DETERMINITIC;
// Planning estimate of cuSPARSE's buffers, as rk_gpu_spgemm.cu's: bytes per
// intermediate product plus a constant (the buffers themselves are checked).
constexpr size_t kPerProduct = 64;
constexpr size_t kFixed = (size_t)64 << 20;

enum { F_PTR = 1, F_COL = 2, F_VAL = 4 };

struct sp_stats {
    unsigned long long flags;
    unsigned long long nsum;    // Σ of the counts in the product's dense rows
    double got, want, want_abs; // Σ of C's dot products; Σ x · rowsum(B), and of |x| · Σ|y|
};

template <typename T> __device__ T warp_sum(T v)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(kFull, v, o);
    return v;
}

__device__ unsigned warp_or(unsigned v)
{
    for (int o = 16; o > 0; o >>= 1) v |= __shfl_down_sync(kFull, v, o);
    return v;
}

// One warp per row; every lane of a warp sees the same rows.
#define RK_SP_WARP_ROWS(r, n)                                                                       \
    const int lane = threadIdx.x % 32;                                                              \
    for (int64_t r = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32; r < (n);                \
         r += (int64_t)gridDim.x * blockDim.x / 32)

#define RK_SP_GRID_STRIDE(p, n)                                                                     \
    for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < (n);                       \
         p += (int64_t)gridDim.x * blockDim.x)

int warp_blocks(int64_t rows)
{
    return (int)std::max<int64_t>(1, std::min<int64_t>((rows * 32 + kThreads - 1) / kThreads, 4096));
}

int flat_blocks(int64_t n)
{
    return (int)std::max<int64_t>(1, std::min<int64_t>((n + kThreads - 1) / kThreads, 4096));
}

__global__ void k_ptr32(const int64_t *__restrict__ p64, int64_t n, int32_t *__restrict__ p32)
{
    RK_SP_GRID_STRIDE(p, n) p32[p] = (int32_t)p64[p];
}

// B's values: 1, or the units (q on the grid, else d).
__global__ void k_fill(const int32_t *__restrict__ q, const double *__restrict__ d, int64_t n, int ones,
                       double *__restrict__ out)
{
    RK_SP_GRID_STRIDE(p, n) out[p] = ones ? 1.0 : q != NULL ? (double)q[p] : d[p];
}

// B's row sums of the units and of their magnitudes (for the checksum).
__global__ void k_rowsums(const int64_t *__restrict__ uptr, const int32_t *__restrict__ q,
                          const double *__restrict__ d, int32_t n_users, double *__restrict__ rs,
                          double *__restrict__ ra)
{
    RK_SP_WARP_ROWS(u, n_users)
    {
        double s = 0.0, a = 0.0;
        for (int64_t p = uptr[u] + lane; p < uptr[u + 1]; p += 32) {
            const double y = q != NULL ? (double)q[p] : d[p];
            s += y;
            a += fabs(y);
        }
        s = warp_sum(s);
        a = warp_sum(a);
        if (lane == 0) {
            rs[u] = s;
            ra[u] = a;
        }
    }
}

// Q's row lengths, and a 0 after them for the exclusive scan's total.
__global__ void k_qlen(const int64_t *__restrict__ iptr, const int32_t *__restrict__ items, int32_t rows,
                       int32_t *__restrict__ len)
{
    RK_SP_GRID_STRIDE(t, (int64_t)rows + 1)
    {
        const int32_t i = t < rows ? items[t] : 0;
        len[t] = t < rows ? (int32_t)(iptr[i + 1] - iptr[i]) : 0;
    }
}

// Q's rows from the item-major matrix: the columns (when qcol is not NULL)
// and the values, 1 or the units; with rs, Σ x · rs[u] and Σ |x| · ra[u].
__global__ void k_qrows(const int64_t *__restrict__ iptr, const int32_t *__restrict__ iidx,
                        const int32_t *__restrict__ iq, const double *__restrict__ id,
                        const int32_t *__restrict__ items, int32_t rows, const int32_t *__restrict__ qptr, int ones,
                        int32_t *__restrict__ qcol, double *__restrict__ qval, const double *__restrict__ rs,
                        const double *__restrict__ ra, sp_stats *stats)
{
    RK_SP_WARP_ROWS(r, rows)
    {
        const int32_t i = items[r];
        const int64_t b = iptr[i], len = iptr[i + 1] - b, at = qptr[r];
        double w = 0.0, wa = 0.0;
        for (int64_t k = lane; k < len; k += 32) {
            const int32_t u = iidx[b + k];
            const double x = ones ? 1.0 : iq != NULL ? (double)iq[b + k] : id[b + k];
            if (qcol != NULL) qcol[at + k] = u;
            qval[at + k] = x;
            if (rs != NULL) {
                w += x * rs[u];
                wa += fabs(x) * ra[u];
            }
        }
        if (rs != NULL) {
            w = warp_sum(w);
            wa = warp_sum(wa);
            if (lane == 0) {
                atomicAdd(&stats->want, w);
                atomicAdd(&stats->want_abs, wa);
            }
        }
    }
}

// The first phase's C (co-rater counts) into the product's N rows, with C's
// offsets, columns and values checked.
__global__ void k_scatter_counts(const int32_t *__restrict__ cptr, const int32_t *__restrict__ ccol,
                                 const double *__restrict__ cval, int32_t rows, int64_t nnz, int32_t n_items,
                                 int32_t n_users, int32_t *__restrict__ N, sp_stats *stats)
{
    RK_SP_WARP_ROWS(r, rows)
    {
        const int64_t s = cptr[r], e = cptr[r + 1];
        if ((r == 0 && s != 0) || (r == rows - 1 && e != nnz) || s < 0 || e < s || e > nnz) { // uniform in the warp
            if (lane == 0) atomicOr(&stats->flags, (unsigned long long)F_PTR);
            continue;
        }
        int32_t *Nrow = N + r * (int64_t)n_items;
        unsigned flags = 0;
        for (int64_t p = s + lane; p < e; p += 32) {
            const int32_t j = ccol[p];
            const double v = cval[p];
            if (j < 0 || j >= n_items) {
                flags |= F_COL;
                continue;
            }
            if (!(v >= 1.0 && v <= (double)n_users && v == floor(v))) {
                flags |= F_VAL;
                continue;
            }
            Nrow[j] = (int32_t)v;
        }
        flags = warp_or(flags);
        if (lane == 0 && flags != 0) atomicOr(&stats->flags, (unsigned long long)flags);
    }
}

__global__ void k_count_sum(const int32_t *__restrict__ N, int64_t cells, sp_stats *stats)
{
    unsigned long long s = 0;
    RK_SP_GRID_STRIDE(p, cells) s += (unsigned long long)(uint32_t)N[p];
    s = warp_sum(s);
    if (threadIdx.x % 32 == 0 && s != 0) atomicAdd(&stats->nsum, s);
}

// The second phase's C (dot products) into S, as k_sims writes a row: the
// item itself 0, every other co-rated item rk_sim_value of the whole
// vectors' counts and norms, the co-rater count and the dot product.
__global__ void k_scatter_sims(const int32_t *__restrict__ cptr, const int32_t *__restrict__ ccol,
                               const double *__restrict__ cval, int32_t rows, int32_t n_items,
                               const int32_t *__restrict__ items, rk_sim_params sp, const double *__restrict__ ncnt,
                               const double *__restrict__ nsq, const int32_t *__restrict__ N,
                               double *__restrict__ S, sp_stats *stats)
{
    RK_SP_WARP_ROWS(r, rows)
    {
        const int32_t i = items[r];
        const int64_t off = r * (int64_t)n_items, e = cptr[r + 1];
        double got = 0.0;
        unsigned flags = 0;
        for (int64_t p = cptr[r] + lane; p < e; p += 32) {
            const int32_t j = ccol[p];
            const double dot = cval[p];
            got += dot;
            if (j < 0 || j >= n_items) { // checked in the first phase; the same structure
                flags |= F_COL;
                continue;
            }
            const double n = (double)N[off + j];
            S[off + j] = j == i || n == 0.0 ? 0.0 : rk_sim_value(&sp, n, ncnt[i], ncnt[j], nsq[i], nsq[j], dot);
        }
        got = warp_sum(got);
        flags = warp_or(flags);
        if (lane == 0) {
            atomicAdd(&stats->got, got);
            if (flags != 0) atomicOr(&stats->flags, (unsigned long long)flags);
        }
    }
}

rk_status read_back(void *h, const void *d, size_t bytes, cudaStream_t st, rk_error *err)
{
    RK_CUDA_CHECK(err, cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, st));
    RK_CUDA_CHECK(err, cudaStreamSynchronize(st));
    return RK_OK;
}

struct sub_descr {
    cusparseSpMatDescr_t q = NULL, c = NULL;
    cusparseSpGEMMDescr_t g = NULL;
    ~sub_descr()
    {
        if (g != NULL) cusparseSpGEMM_destroyDescr(g);
        if (q != NULL) cusparseDestroySpMat(q);
        if (c != NULL) cusparseDestroySpMat(c);
    }
};

// Device bytes a product of these rows is planned at (its arrays exactly,
// cuSPARSE's buffers by the estimate).
size_t sub_bytes(int64_t rows, int64_t nnz_q, int64_t products, int32_t n_items)
{
    const size_t r = (size_t)rows, q = (size_t)nnz_q, p = (size_t)products;
    const size_t c_max = std::min(p, r * (size_t)(n_items > 0 ? n_items : 0));
    return (3 * (r + 1)) * sizeof(int32_t)              // Q's lengths and offsets, C's offsets
           + (q + c_max) * (sizeof(int32_t) + sizeof(double)) // Q's and C's entries
           + ((size_t)1 << 20)                          // the scan's scratch
           + kPerProduct * p + kFixed;                  // cuSPARSE's buffers
}

} // namespace

struct rk_spsims {
    cusparseHandle_t h = NULL;
    cudaStream_t st = NULL;
    rk_dev_csr by_user, by_item;
    const int64_t *h_iptr = NULL, *h_cost = NULL;
    int32_t *bptr = NULL;          // B's offsets in int32: SpGEMM takes 32-bit indices
    double *bval = NULL;           // B's values, rewritten for each phase
    double *rs = NULL, *ra = NULL; // B's row sums of the units and of their magnitudes
    sp_stats *stats = NULL;
    cusparseSpMatDescr_t mat_b = NULL;
    cusparseSpGEMMAlg_t alg = kAlg;
    int alg_taken = 0;             // cuSPARSE has accepted alg once
    const char *refusal = NULL;    // cuSPARSE's status when it refused the last product for memory
    int64_t products = 0, splits = 0;
    double bytes_per_product = 0.0;
};

namespace {

// A buffer of count T from sub within the budget, or *fits = 0 and no buffer.
template <typename T>
rk_status take(dev_mem &sub, size_t budget, T **p, size_t count, size_t *need, int *fits, rk_error *err)
{
    const size_t bytes = (count > 0 ? count : 1) * sizeof(T);
    *p = NULL;
    if (sub.bytes + bytes > budget) {
        *need = sub.bytes + bytes;
        *fits = 0;
        return RK_OK;
    }
    return sub.alloc(p, count, err);
}

// (what the stream still runs may use sub's memory: it finishes before sub goes)
#define RK_TAKE(p, count)                                                                           \
    do {                                                                                            \
        RK_FORWARD(take(sub, a->budget, (p), (size_t)(count), need, fits, err));                    \
        if (!*fits) {                                                                               \
            RK_CUDA_CHECK(err, cudaStreamSynchronize(st));                                          \
            return RK_OK;                                                                           \
        }                                                                                           \
    } while (0)

// A cuSPARSE call that may refuse the product for want of memory: then as a
// budget that does not fit; any other failure is RK_E_GPU.
#define RK_CUSPARSE_FIT(expr) RK_CUSPARSE_FIT_AS((expr), #expr)
#define RK_CUSPARSE_FIT_AS(status, what)                                                            \
    do {                                                                                            \
        cusparseStatus_t rk_fit_ = (status);                                                        \
        if (rk_fit_ == CUSPARSE_STATUS_INSUFFICIENT_RESOURCES || rk_fit_ == CUSPARSE_STATUS_ALLOC_FAILED) { \
            cudaGetLastError(); /* a failed cudaMalloc inside leaves its error behind */            \
            c->refusal = cusparseGetErrorString(rk_fit_);                                           \
            *need = sub.bytes;                                                                      \
            *fits = 0;                                                                              \
            RK_CUDA_CHECK(err, cudaStreamSynchronize(st));                                          \
            return RK_OK;                                                                           \
        }                                                                                           \
        if (rk_fit_ != CUSPARSE_STATUS_SUCCESS)                                                     \
            return rk_gpu_fail(err, what, cusparseGetErrorString(rk_fit_), __FILE__, __LINE__);     \
    } while (0)

// One product: rows [r0, r1) of the tile, nnz_q ratings and `products`
// intermediate products in all.  *fits = 0 (RK_OK, nothing written) when its
// memory would pass the budget; *need then holds the bytes asked at that point.
rk_status product(rk_spsims *c, const rk_spsims_tile_args *a, int32_t r0, int32_t r1, int64_t nnz_q,
                  int64_t products, int *fits, size_t *need, rk_error *err)
{
    *fits = 1;
    c->refusal = NULL;
    if (nnz_q == 0) return RK_OK; // no rater: the rows stay 0
    const int32_t n = r1 - r0, n_items = c->by_user.n_cols, n_users = c->by_user.n_rows;
    const int32_t *items = a->d_items + r0;
    double *S = a->S + (size_t)r0 * (size_t)n_items;
    int32_t *N = a->N + (size_t)r0 * (size_t)n_items;
    cudaStream_t st = c->st;
    char why[256];
    dev_mem sub; // this product's memory: the stream is synchronised before it goes

    // Q
    int32_t *qlen, *qptr, *qcol, *cptr;
    double *qval;
    unsigned char *scan_tmp;
    RK_TAKE(&qlen, (size_t)n + 1);
    RK_TAKE(&qptr, (size_t)n + 1);
    RK_TAKE(&qcol, nnz_q);
    RK_TAKE(&qval, nnz_q);
    RK_TAKE(&cptr, (size_t)n + 1);
    size_t scan_bytes = 0;
    RK_CUDA_CHECK(err, cub::DeviceScan::ExclusiveSum(NULL, scan_bytes, qlen, qptr, n + 1, st));
    RK_TAKE(&scan_tmp, scan_bytes);
    RK_CUDA_CHECK(err, cudaMemsetAsync(c->stats, 0, sizeof(sp_stats), st));
    k_qlen<<<flat_blocks((int64_t)n + 1), kThreads, 0, st>>>(c->by_item.ptr, items, n, qlen);
    RK_LAUNCH_CHECK(err, "k_qlen");
    RK_CUDA_CHECK(err, cub::DeviceScan::ExclusiveSum(scan_tmp, scan_bytes, qlen, qptr, n + 1, st));
    int32_t total = -1;
    RK_FORWARD(read_back(&total, qptr + n, sizeof total, st, err));
    if ((int64_t)total != nnz_q) {
        snprintf(why, sizeof why, "Q has %d entries, its %d items %lld ratings", total, n, (long long)nnz_q);
        return rk_gpu_fail(err, "cub::DeviceScan::ExclusiveSum", why, __FILE__, __LINE__);
    }
    k_qrows<<<warp_blocks(n), kThreads, 0, st>>>(c->by_item.ptr, c->by_item.idx, NULL, NULL, items, n, qptr, 1,
                                                  qcol, qval, NULL, NULL, c->stats);
    RK_LAUNCH_CHECK(err, "k_qrows");
    k_fill<<<flat_blocks(c->by_user.nnz), kThreads, 0, st>>>(NULL, NULL, c->by_user.nnz, 1, c->bval);
    RK_LAUNCH_CHECK(err, "k_fill");

    // C's structure: workEstimation, nnz, copy (NVIDIA's spgemm_reuse sequence)
    const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    sub_descr d;
    RK_CUSPARSE_CHECK(err, cusparseSetStream(c->h, st));
    RK_CUSPARSE_CHECK(err, cusparseSetPointerMode(c->h, CUSPARSE_POINTER_MODE_HOST));
    if (c->mat_b == NULL)
        RK_CUSPARSE_CHECK(err, cusparseCreateCsr(&c->mat_b, n_users, n_items, c->by_user.nnz, c->bptr,
                                                 c->by_user.idx, c->bval, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                                 CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    RK_CUSPARSE_CHECK(err, cusparseCreateCsr(&d.q, n, n_users, nnz_q, qptr, qcol, qval, CUSPARSE_INDEX_32I,
                                             CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    RK_CUSPARSE_CHECK(err, cusparseCreateCsr(&d.c, n, n_items, 0, cptr, NULL, NULL, CUSPARSE_INDEX_32I,
                                             CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    RK_CUSPARSE_CHECK(err, cusparseSpGEMM_createDescr(&d.g));
#define RK_REUSE_ARGS c->h, op, op, d.q, c->mat_b, d.c, c->alg, d.g
    unsigned char *buf1, *buf2, *buf3, *buf4, *buf5;
    size_t bs1 = 0, bs2 = 0, bs3 = 0, bs4 = 0, bs5 = 0;
    cusparseStatus_t first = cusparseSpGEMMreuse_workEstimation(RK_REUSE_ARGS, &bs1, NULL);
    const char *first_call = "cusparseSpGEMMreuse_workEstimation(size query)";
    if ((first == CUSPARSE_STATUS_NOT_SUPPORTED || first == CUSPARSE_STATUS_INVALID_VALUE) &&
        c->alg != CUSPARSE_SPGEMM_DEFAULT && !c->alg_taken) {
        // the deterministic algorithm refused: the default one, on a fresh descriptor
        RK_CUSPARSE_CHECK(err, cusparseSpGEMM_destroyDescr(d.g));
        d.g = NULL;
        RK_CUSPARSE_CHECK(err, cusparseSpGEMM_createDescr(&d.g));
        c->alg = CUSPARSE_SPGEMM_DEFAULT;
        first = cusparseSpGEMMreuse_workEstimation(RK_REUSE_ARGS, &bs1, NULL);
        first_call = "cusparseSpGEMMreuse_workEstimation(size query, CUSPARSE_SPGEMM_DEFAULT after "
                     "CSR_ALG_DETERMINITIC was refused)";
    }
    RK_CUSPARSE_FIT_AS(first, first_call);
    c->alg_taken = 1;
    RK_TAKE(&buf1, bs1);
    RK_CUSPARSE_FIT(cusparseSpGEMMreuse_workEstimation(RK_REUSE_ARGS, &bs1, buf1));
    RK_CUSPARSE_FIT(cusparseSpGEMMreuse_nnz(RK_REUSE_ARGS, &bs2, NULL, &bs3, NULL, &bs4, NULL));
    RK_TAKE(&buf2, bs2);
    RK_TAKE(&buf3, bs3);
    RK_TAKE(&buf4, bs4);
    RK_CUSPARSE_FIT(cusparseSpGEMMreuse_nnz(RK_REUSE_ARGS, &bs2, buf2, &bs3, buf3, &bs4, buf4));
    RK_CUDA_CHECK(err, cudaStreamSynchronize(st));
    sub.release(buf1);
    sub.release(buf2);
    int64_t rows_c = -1, cols_c = -1, nnz_c = -1;
    RK_CUSPARSE_CHECK(err, cusparseSpMatGetSize(d.c, &rows_c, &cols_c, &nnz_c));
    const int64_t c_max = std::min<int64_t>(products, (int64_t)n * n_items);
    if (rows_c != n || cols_c != n_items || nnz_c < 1 || nnz_c > c_max) {
        snprintf(why, sizeof why, "C is %lld x %lld with %lld entries, for %d x %d and at most %lld",
                 (long long)rows_c, (long long)cols_c, (long long)nnz_c, n, n_items, (long long)c_max);
        return rk_gpu_fail(err, "cusparseSpGEMMreuse_nnz", why, __FILE__, __LINE__);
    }
    int32_t *ccol;
    double *cval;
    RK_TAKE(&ccol, nnz_c);
    RK_TAKE(&cval, nnz_c);
    RK_CUSPARSE_CHECK(err, cusparseCsrSetPointers(d.c, cptr, ccol, cval));
    RK_CUSPARSE_FIT(cusparseSpGEMMreuse_copy(RK_REUSE_ARGS, &bs5, NULL));
    RK_TAKE(&buf5, bs5);
    RK_CUSPARSE_FIT(cusparseSpGEMMreuse_copy(RK_REUSE_ARGS, &bs5, buf5));
    RK_CUDA_CHECK(err, cudaStreamSynchronize(st));
    sub.release(buf3);
#undef RK_REUSE_ARGS
    const double peak = (double)std::max(bs1 + bs2 + bs3 + bs4, bs3 + bs4 + bs5);
    c->bytes_per_product = std::max(c->bytes_per_product, peak / (double)products);

    // first phase: every value 1, C = the co-rater counts (nothing written
    // to the tile before this call succeeds)
    const double alpha = 1.0, beta = 0.0;
    RK_CUSPARSE_FIT(cusparseSpGEMMreuse_compute(c->h, op, op, &alpha, d.q, c->mat_b, &beta, d.c, CUDA_R_64F, c->alg,
                                                d.g));
    k_scatter_counts<<<warp_blocks(n), kThreads, 0, st>>>(cptr, ccol, cval, n, nnz_c, n_items, n_users, N, c->stats);
    RK_LAUNCH_CHECK(err, "k_scatter_counts");
    k_count_sum<<<flat_blocks((int64_t)n * n_items), kThreads, 0, st>>>(N, (int64_t)n * n_items, c->stats);
    RK_LAUNCH_CHECK(err, "k_count_sum");
    sp_stats sh;
    RK_FORWARD(read_back(&sh, c->stats, sizeof sh, st, err));
    if (sh.flags != 0 || sh.nsum != (unsigned long long)products) {
        snprintf(why, sizeof why, "the counts failed validation: %s%s%sthey add up to %llu, the products to %lld",
                 sh.flags & F_PTR ? "bad row offsets, " : "", sh.flags & F_COL ? "columns out of range, " : "",
                 sh.flags & F_VAL ? "values not counts, " : "", sh.nsum, (long long)products);
        return rk_gpu_fail(err, "cusparseSpGEMMreuse_compute", why, __FILE__, __LINE__);
    }

    // second phase: the units, C = the dot products
    k_qrows<<<warp_blocks(n), kThreads, 0, st>>>(c->by_item.ptr, c->by_item.idx, c->by_item.q, c->by_item.d, items,
                                                  n, qptr, 0, NULL, qval, c->rs, c->ra, c->stats);
    RK_LAUNCH_CHECK(err, "k_qrows");
    k_fill<<<flat_blocks(c->by_user.nnz), kThreads, 0, st>>>(c->by_user.q, c->by_user.d, c->by_user.nnz, 0, c->bval);
    RK_LAUNCH_CHECK(err, "k_fill");
    RK_CUSPARSE_CHECK(err, cusparseSpGEMMreuse_compute(c->h, op, op, &alpha, d.q, c->mat_b, &beta, d.c, CUDA_R_64F,
                                                       c->alg, d.g));
    k_scatter_sims<<<warp_blocks(n), kThreads, 0, st>>>(cptr, ccol, cval, n, n_items, items, a->sp, a->ncnt, a->nsq,
                                                         N, S, c->stats);
    RK_LAUNCH_CHECK(err, "k_scatter_sims");
    RK_FORWARD(read_back(&sh, c->stats, sizeof sh, st, err));
    // exact on a grid (integers below 2^53); off it, rounding far below 1e-6
    if (sh.flags != 0 || !(fabs(sh.got - sh.want) <= 1e-6 * sh.want_abs)) {
        snprintf(why, sizeof why, "the dot products failed validation: %sthey add up to %.17g, expected %.17g",
                 sh.flags != 0 ? "columns out of range, " : "", sh.got, sh.want);
        return rk_gpu_fail(err, "cusparseSpGEMMreuse_compute", why, __FILE__, __LINE__);
    }
    return RK_OK; // read_back synchronised the stream: sub's memory can go
}
#undef RK_TAKE
#undef RK_CUSPARSE_FIT
#undef RK_CUSPARSE_FIT_AS

} // namespace

rk_status rk_spsims_create(cusparseHandle_t h, const rk_dev_csr *by_user, const rk_dev_csr *by_item,
                           const int64_t *h_item_ptr, const int64_t *h_cost, dev_mem &mem, cudaStream_t st,
                           rk_spsims **out, rk_error *err)
{
    *out = NULL;
    if (by_user->nnz > (int64_t)INT32_MAX)
        return rk_error_set(err, RK_E_RANGE, "the SpGEMM similarity route takes at most %d ratings (cuSPARSE "
                                             "SpGEMM's 32-bit indices), the model has %lld: use the kernel route",
                            INT32_MAX, (long long)by_user->nnz);
    if ((by_user->q == NULL && by_user->d == NULL) || (by_item->q == NULL && by_item->d == NULL) ||
        (by_user->q == NULL) != (by_item->q == NULL) || by_user->n_cols != by_item->n_rows ||
        by_user->n_rows != by_item->n_cols)
        return rk_error_set(err, RK_E_INTERNAL, "rk_spsims_create: the two matrices do not match or have no values");
    rk_spsims *c = new (std::nothrow) rk_spsims();
    if (c == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory for the SpGEMM similarity route");
    c->h = h;
    c->st = st;
    c->by_user = *by_user;
    c->by_item = *by_item;
    c->h_iptr = h_item_ptr;
    c->h_cost = h_cost;
    *out = c; // the caller frees it, on failure too
    const int32_t n_users = by_user->n_rows;
    RK_FORWARD(mem.alloc(&c->bptr, (size_t)n_users + 1, err));
    RK_FORWARD(mem.alloc(&c->bval, (size_t)by_user->nnz, err));
    RK_FORWARD(mem.alloc(&c->rs, (size_t)n_users, err));
    RK_FORWARD(mem.alloc(&c->ra, (size_t)n_users, err));
    RK_FORWARD(mem.alloc(&c->stats, 1, err));
    k_ptr32<<<flat_blocks((int64_t)n_users + 1), kThreads, 0, st>>>(by_user->ptr, (int64_t)n_users + 1, c->bptr);
    RK_LAUNCH_CHECK(err, "k_ptr32");
    if (n_users > 0) {
        k_rowsums<<<warp_blocks(n_users), kThreads, 0, st>>>(by_user->ptr, by_user->q, by_user->d, n_users, c->rs,
                                                             c->ra);
        RK_LAUNCH_CHECK(err, "k_rowsums");
    }
    return RK_OK;
}

rk_status rk_spsims_tile(rk_spsims *c, const rk_spsims_tile_args *a, rk_error *err)
{
    if (a->rows <= 0) return RK_OK;
    const int32_t n_items = c->by_user.n_cols;
    const size_t cells = (size_t)a->rows * (size_t)n_items;
    RK_CUDA_CHECK(err, cudaMemsetAsync(a->S, 0, cells * sizeof(double), c->st));
    RK_CUDA_CHECK(err, cudaMemsetAsync(a->N, 0, cells * sizeof(int32_t), c->st));
    int32_t limit = a->max_rows > 0 ? a->max_rows : a->rows; // halved when a product does not fit
    for (int32_t r0 = 0; r0 < a->rows;) {
        // rows from r0 while the product fits: int32 entries in Q and C (C has
        // at most one entry a product), the estimate unless the height is forced
        int32_t r1 = r0;
        int64_t nnz_q = 0, prods = 0;
        while (r1 < a->rows && r1 - r0 < limit) {
            const int32_t i = a->h_items[r1];
            const int64_t len = c->h_iptr[i + 1] - c->h_iptr[i], pr = c->h_cost[i];
            if (r1 > r0 && (nnz_q + len > (int64_t)INT32_MAX || prods + pr > RK_SPGEMM_MAX_PRODUCTS ||
                            (a->max_rows <= 0 && sub_bytes(r1 - r0 + 1, nnz_q + len, prods + pr, n_items) > a->budget)))
                break;
            nnz_q += len;
            prods += pr;
            r1++;
        }
        int fits = 1;
        size_t need = 0;
        RK_FORWARD(product(c, a, r0, r1, nnz_q, prods, &fits, &need, err));
        if (!fits) {
            if (r1 - r0 == 1) {
                const double MB = 1048576.0;
                char by[160] = "";
                if (c->refusal != NULL)
                    snprintf(by, sizeof by, " (cuSPARSE refused it with %s while %.1f MB were held)", c->refusal,
                             need / MB);
                return rk_error_set(err, RK_E_GPU,
                                    "the SpGEMM similarity route needs more than %.1f MB of device memory for the "
                                    "product of one row (item %d: %lld ratings, %lld intermediate products)%s, %.1f MB "
                                    "are left to it beside the similarity tile: raise --gpu-memory or use the kernel "
                                    "route", need / MB, a->h_items[r0], (long long)nnz_q, (long long)prods, by,
                                    a->budget / MB);
            }
            limit = (r1 - r0) / 2;
            c->splits++;
            continue;
        }
        c->products++;
        r0 = r1;
    }
    return RK_OK;
}

void rk_spsims_counts(const rk_spsims *c, rk_spsims_report *out)
{
    out->products = c != NULL ? c->products : 0;
    out->splits = c != NULL ? c->splits : 0;
    out->bytes_per_product = c != NULL ? c->bytes_per_product : 0.0;
    out->algorithm = c != NULL && c->alg == CUSPARSE_SPGEMM_CSR_ALG_DETERMINITIC ? "deterministic" : "default";
}

void rk_spsims_free(rk_spsims *c, dev_mem *mem)
{
    if (c == NULL) return;
    if (c->mat_b != NULL) cusparseDestroySpMat(c->mat_b);
    if (mem != NULL) {
        void *own[] = {c->bptr, c->bval, c->rs, c->ra, c->stats};
        for (void *p : own)
            if (p != NULL) mem->release(p);
    }
    delete c;
}
