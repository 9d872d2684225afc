// The item-major matrix built on the device (rk_gpu_internal.h): the
// user-major CSR goes up once and cusparseCsr2cscEx2 transposes it, so that
// only one orientation of the ratings crosses PCIe.
//
// cusparseCsr2cscEx2 takes int32 row offsets and an int nnz: the offsets are
// narrowed before the call and the output's column offsets widened after it.
// CSR2CSC_ALG1 is documented as deterministic but not as keeping the row
// indices of a column sorted (CUDA 11's cusparse.h: "ALG1 faster, deterministic;
// ALG2 low memory, non-deterministic"; CUDA 12 removed ALG2).  The host's
// rk_csr_transpose does keep them sorted, so the result is checked and, only
// if some row is not strictly ascending, sorted with cub's segmented sort.
#include "rk_gpu_internal.h"
#include <cub/device/device_segmented_sort.cuh>

namespace {

// A device buffer freed when it goes out of scope: the temporaries of one
// transpose.  cudaFree waits for the device, so pending work is done first.
template <typename T> struct tmp_buf {
    T *p = NULL;
    ~tmp_buf()
    {
        if (p != NULL) cudaFree(p);
    }
    rk_status alloc(size_t count, rk_error *err)
    {
        size_t bytes = (count > 0 ? count : 1) * sizeof(T);
        cudaError_t e = cudaMalloc((void **)&p, bytes);
        if (e != cudaSuccess) {
            cudaGetLastError();
            p = NULL;
            char what[96];
            snprintf(what, sizeof what, "cudaMalloc(%zu bytes)", bytes);
            return rk_gpu_fail(err, what, cudaGetErrorString(e), __FILE__, __LINE__);
        }
        return RK_OK;
    }
};

__global__ void k_narrow(const int64_t *__restrict__ in, int64_t n, int32_t *__restrict__ out)
{
    for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < n; p += (int64_t)gridDim.x * blockDim.x)
        out[p] = (int32_t)in[p];
}

__global__ void k_widen(const int32_t *__restrict__ in, int64_t n, int64_t *__restrict__ out)
{
    for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < n; p += (int64_t)gridDim.x * blockDim.x)
        out[p] = in[p];
}

// *bad = 1 when some row's indices are not strictly ascending (one warp a row).
__global__ void k_rows_sorted(const int64_t *__restrict__ ptr, const int32_t *__restrict__ idx, int32_t n_rows,
                              int *bad)
{
    const int lane = threadIdx.x % 32;
    const int64_t warps = (int64_t)gridDim.x * blockDim.x / 32;
    for (int64_t r = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32; r < n_rows; r += warps) {
        int found = 0;
        for (int64_t p = ptr[r] + 1 + lane; p < ptr[r + 1]; p += 32) found |= idx[p - 1] >= idx[p];
        if (__any_sync(0xffffffffu, found) && lane == 0) atomicOr(bad, 1);
    }
}

int blocks_for(int64_t n, int per_block)
{
    int64_t b = (n + per_block - 1) / per_block;
    return (int)std::max<int64_t>(1, std::min<int64_t>(b, 4096));
}

rk_status rows_sorted(const rk_dev_csr *c, cudaStream_t st, int *sorted, rk_error *err)
{
    tmp_buf<int> bad;
    RK_FORWARD(bad.alloc(1, err));
    RK_CUDA_CHECK(err, cudaMemsetAsync(bad.p, 0, sizeof(int), st));
    k_rows_sorted<<<blocks_for((int64_t)c->n_rows * 32, 256), 256, 0, st>>>(c->ptr, c->idx, c->n_rows, bad.p);
    RK_LAUNCH_CHECK(err, "k_rows_sorted");
    int h = 1;
    RK_CUDA_CHECK(err, cudaMemcpyAsync(&h, bad.p, sizeof h, cudaMemcpyDeviceToHost, st));
    RK_CUDA_CHECK(err, cudaStreamSynchronize(st));
    *sorted = h == 0;
    return RK_OK;
}

// Sort each row of c by index, values along (c's rows never repeat an index).
rk_status sort_rows(rk_dev_csr *c, cudaStream_t st, rk_error *err)
{
    const size_t n = (size_t)c->nnz;
    tmp_buf<int32_t> keys;
    tmp_buf<float> vals;
    tmp_buf<unsigned char> scratch;
    RK_FORWARD(keys.alloc(n, err));
    RK_FORWARD(vals.alloc(n, err));
    RK_CUDA_CHECK(err, cudaMemcpyAsync(keys.p, c->idx, n * sizeof(int32_t), cudaMemcpyDeviceToDevice, st));
    RK_CUDA_CHECK(err, cudaMemcpyAsync(vals.p, c->v, n * sizeof(float), cudaMemcpyDeviceToDevice, st));
    size_t bytes = 0;
    RK_CUDA_CHECK(err, cub::DeviceSegmentedSort::SortPairs(NULL, bytes, keys.p, c->idx, vals.p, c->v, c->nnz, c->n_rows,
                                                           c->ptr, c->ptr + 1, st));
    RK_FORWARD(scratch.alloc(bytes, err));
    RK_CUDA_CHECK(err, cub::DeviceSegmentedSort::SortPairs(scratch.p, bytes, keys.p, c->idx, vals.p, c->v, c->nnz,
                                                           c->n_rows, c->ptr, c->ptr + 1, st));
    return RK_OK;
}

} // namespace

int rk_gpu_transpose_fits(int64_t nnz)
{
    return nnz >= 0 && nnz <= (int64_t)INT32_MAX;
}

rk_status rk_gpu_transpose(cusparseHandle_t h, const rk_dev_csr *by_user, rk_dev_csr *by_item, dev_mem &mem,
                           cudaStream_t st, rk_error *err)
{
    memset(by_item, 0, sizeof *by_item);
    const int32_t m = by_user->n_rows, n = by_user->n_cols;
    const int64_t nnz = by_user->nnz;
    if (m < 0 || n < 0 || !rk_gpu_transpose_fits(nnz))
        return rk_error_set(err, RK_E_RANGE, "a %d x %d matrix with %lld entries is beyond cusparseCsr2cscEx2 (int32)",
                            m, n, (long long)nnz);
    by_item->n_rows = n;
    by_item->n_cols = m;
    by_item->nnz = nnz;
    RK_FORWARD(mem.alloc(&by_item->ptr, (size_t)n + 1, err));
    RK_FORWARD(mem.alloc(&by_item->idx, (size_t)nnz, err));
    RK_FORWARD(mem.alloc(&by_item->v, (size_t)nnz, err));
    if (nnz == 0) { // no cuSPARSE call: m or n may be 0
        RK_CUDA_CHECK(err, cudaMemsetAsync(by_item->ptr, 0, ((size_t)n + 1) * sizeof(int64_t), st));
        return RK_OK;
    }

    RK_CUSPARSE_CHECK(err, cusparseSetStream(h, st));
    tmp_buf<int32_t> row_ptr, col_ptr;
    tmp_buf<unsigned char> work;
    RK_FORWARD(row_ptr.alloc((size_t)m + 1, err));
    RK_FORWARD(col_ptr.alloc((size_t)n + 1, err));
    k_narrow<<<blocks_for((int64_t)m + 1, 256), 256, 0, st>>>(by_user->ptr, (int64_t)m + 1, row_ptr.p);
    RK_LAUNCH_CHECK(err, "k_narrow");
    size_t bytes = 0;
    RK_CUSPARSE_CHECK(err, cusparseCsr2cscEx2_bufferSize(h, m, n, (int)nnz, by_user->v, row_ptr.p, by_user->idx,
                                                         by_item->v, col_ptr.p, by_item->idx, CUDA_R_32F,
                                                         CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO,
                                                         CUSPARSE_CSR2CSC_ALG1, &bytes));
    RK_FORWARD(work.alloc(bytes, err));
    RK_CUSPARSE_CHECK(err, cusparseCsr2cscEx2(h, m, n, (int)nnz, by_user->v, row_ptr.p, by_user->idx, by_item->v,
                                              col_ptr.p, by_item->idx, CUDA_R_32F, CUSPARSE_ACTION_NUMERIC,
                                              CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, work.p));
    k_widen<<<blocks_for((int64_t)n + 1, 256), 256, 0, st>>>(col_ptr.p, (int64_t)n + 1, by_item->ptr);
    RK_LAUNCH_CHECK(err, "k_widen");

    int sorted = 0;
    RK_FORWARD(rows_sorted(by_item, st, &sorted, err));
    if (!sorted) {
        RK_FORWARD(sort_rows(by_item, st, err));
        RK_FORWARD(rows_sorted(by_item, st, &sorted, err));
        if (!sorted) return rk_error_set(err, RK_E_INTERNAL, "the transposed matrix has unsorted rows after the sort");
    }
    return RK_OK;
}

namespace {

struct sparse_handle {
    cusparseHandle_t h = NULL;
    ~sparse_handle()
    {
        if (h != NULL) cusparseDestroy(h);
    }
};

// On the current device: by_user up, transposed there, the result back.
rk_status transpose_check(const rk_csr *by_user, rk_csr *out, rk_error *err)
{
    dev_mem mem;
    stream_events se;
    sparse_handle sh; // after se: destroyed before the stream
    RK_CUDA_CHECK(err, cudaStreamCreate(&se.st));
    RK_CUSPARSE_CHECK(err, cusparseCreate(&sh.h));
    rk_dev_csr du, di;
    memset(&du, 0, sizeof du);
    du.n_rows = by_user->n_rows;
    du.n_cols = by_user->n_cols;
    du.nnz = by_user->nnz;
    stager plain; // not initialised: plain copies
    RK_FORWARD(upload(&du.ptr, by_user->ptr, (size_t)du.n_rows + 1, mem, plain, se.st, err));
    RK_FORWARD(upload(&du.idx, by_user->idx, (size_t)du.nnz, mem, plain, se.st, err));
    RK_FORWARD(upload(&du.v, by_user->val, (size_t)du.nnz, mem, plain, se.st, err));
    RK_FORWARD(rk_gpu_transpose(sh.h, &du, &di, mem, se.st, err));

    out->n_rows = di.n_rows;
    out->n_cols = di.n_cols;
    out->nnz = di.nnz;
    out->ptr = (int64_t *)calloc((size_t)di.n_rows + 1, sizeof *out->ptr);
    out->idx = (int32_t *)malloc((size_t)(di.nnz > 0 ? di.nnz : 1) * sizeof *out->idx);
    out->val = (float *)malloc((size_t)(di.nnz > 0 ? di.nnz : 1) * sizeof *out->val);
    if (out->ptr == NULL || out->idx == NULL || out->val == NULL)
        return rk_error_set(err, RK_E_NOMEM, "out of memory for a %d x %d matrix with %lld entries", di.n_rows,
                            di.n_cols, (long long)di.nnz);
    RK_CUDA_CHECK(err, cudaMemcpyAsync(out->ptr, di.ptr, ((size_t)di.n_rows + 1) * sizeof(int64_t),
                                       cudaMemcpyDeviceToHost, se.st));
    if (di.nnz > 0) {
        RK_CUDA_CHECK(err, cudaMemcpyAsync(out->idx, di.idx, (size_t)di.nnz * sizeof(int32_t), cudaMemcpyDeviceToHost,
                                           se.st));
        RK_CUDA_CHECK(err, cudaMemcpyAsync(out->val, di.v, (size_t)di.nnz * sizeof(float), cudaMemcpyDeviceToHost,
                                           se.st));
    }
    RK_CUDA_CHECK(err, cudaStreamSynchronize(se.st));
    return RK_OK;
}

} // namespace

rk_status rk_gpu_transpose_warm(rk_error *err)
{
    // 2 x 3: every kernel of the path runs once
    int64_t ptr[3] = {0, 2, 3};
    int32_t idx[3] = {0, 2, 1};
    float val[3] = {1.0f, 2.0f, 3.0f};
    const rk_csr tiny = {2, 3, 3, ptr, idx, val};
    rk_csr out;
    memset(&out, 0, sizeof out);
    const rk_status s = transpose_check(&tiny, &out, err);
    rk_csr_free(&out);
    return s;
}

extern "C" rk_status rk_gpu_transpose_check(const rk_csr *by_user, rk_csr *out, rk_error *err)
{
    memset(out, 0, sizeof *out);
    char why[256];
    if (!rk_gpu_available(why, sizeof why)) return rk_error_set(err, RK_E_GPU, "no usable GPU: %s", why);
    RK_CUDA_CHECK(err, cudaSetDevice(0));
    rk_status s = transpose_check(by_user, out, err);
    if (s != RK_OK) rk_csr_free(out);
    return s;
}

// ---- values given per row (rk_model.row_val) -------------------------------------

namespace {

// v[p] = rv[u] for every entry p of row u: a warp a row.
__global__ void k_rows_values(const int64_t *ptr, int32_t n_rows, const float *rv, float *v)
{
    const int lane = threadIdx.x & 31;
    const int64_t w0 = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5;
    const int64_t nw = ((int64_t)gridDim.x * blockDim.x) >> 5;
    for (int64_t u = w0; u < n_rows; u += nw) {
        const float x = rv[u];
        for (int64_t p = ptr[u] + lane; p < ptr[u + 1]; p += 32) v[p] = x;
    }
}

// v[p] = rv[idx[p]]: the item-major matrix, whose column indices are the rows of rv.
__global__ void k_idx_values(const int32_t *idx, int64_t nnz, const float *rv, float *v)
{
    for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < nnz; p += (int64_t)gridDim.x * blockDim.x)
        v[p] = rv[idx[p]];
}

} // namespace

rk_status rk_gpu_row_values(const rk_dev_csr *a, const float *d_rv, int by_idx, cudaStream_t st, rk_error *err)
{
    if (a->nnz == 0) return RK_OK;
    if (by_idx) {
        k_idx_values<<<rk_grid_for(a->nnz, 256), 256, 0, st>>>(a->idx, a->nnz, d_rv, a->v);
        RK_LAUNCH_CHECK(err, "k_idx_values");
    } else {
        k_rows_values<<<rk_grid_for((int64_t)a->n_rows * 32, 256), 256, 0, st>>>(a->ptr, a->n_rows, d_rv, a->v);
        RK_LAUNCH_CHECK(err, "k_rows_values");
    }
    return RK_OK;
}

rk_status rk_gpu_upload_csr(const rk_csr *h, rk_dev_csr *d, dev_mem &mem, stager &sg, cudaStream_t st, rk_error *err)
{
    memset(d, 0, sizeof *d);
    d->n_rows = h->n_rows;
    d->n_cols = h->n_cols;
    d->nnz = h->nnz;
    RK_FORWARD(upload(&d->ptr, h->ptr, (size_t)h->n_rows + 1, mem, sg, st, err));
    RK_FORWARD(upload(&d->idx, h->idx, (size_t)h->nnz, mem, sg, st, err));
    if (h->val == NULL) return mem.alloc(&d->v, (size_t)h->nnz, err); // values filled on the device
    RK_FORWARD(upload(&d->v, h->val, (size_t)h->nnz, mem, sg, st, err));
    return RK_OK;
}
