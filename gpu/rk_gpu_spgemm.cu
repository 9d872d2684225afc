// The cuSPARSE SpGEMM route of the top-N scores (CONTRACT.md §5): C = A · L.
// L: row i is list i, columns sorted, values double(q) (q <= 2^32).  A: the
// batch users' rated items whose list is not empty, values 1.0, so nnz(A) and
// nnz(C) are at most the products.  Scores are sums of integers below 2^53:
// exact in double in any order, equal to the CPU's fixed-point sums.
// Per batch, the documented sequence (CUDALibrarySamples cuSPARSE/spgemm),
// CUSPARSE_SPGEMM_DEFAULT (= ALG1, the fastest; int32 product counts, hence
// RK_SPGEMM_MAX_PRODUCTS).  ALG1's first compute call gives an upper bound of
// buffer2, "generally several times larger than the actual memory used", and
// its second takes any size (INSUFFICIENT_RESOURCES when too small): buffer2
// is capped to the budget of rk_spgemm_bytes.  Every product is validated (a
// wrapper got an all-zero product without an error): product counts, C's
// offsets, sorted columns, integral values, and C's sum against Σ of the
// lists' sums over A's entries, taken while counting A.
#include "rk_gpu_internal.h"
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <new>

// A device buffer that only grows; its contents are not kept when it does.
// cudaFree waits for the device, so no pending work uses the old buffer.
template <typename T> struct rk_spgemm_buf {
    T *p = NULL;
    size_t cap = 0;
    ~rk_spgemm_buf()
    {
        if (p != NULL) cudaFree(p);
    }
    rk_status need(size_t count, rk_error *err)
    {
        if (count < 1) count = 1;
        if (p != NULL && count <= cap) return RK_OK;
        if (p != NULL) RK_CUDA_CHECK(err, cudaFree(p));
        p = NULL;
        cap = 0;
        cudaError_t e = cudaMalloc((void **)&p, count * sizeof(T));
        if (e != cudaSuccess) {
            cudaGetLastError();
            char what[96];
            snprintf(what, sizeof what, "cudaMalloc(%zu bytes)", count * sizeof(T));
            return rk_gpu_fail(err, what, cudaGetErrorString(e), __FILE__, __LINE__);
        }
        cap = count;
        return RK_OK;
    }
};

struct rk_spgemm {
    cusparseHandle_t h = NULL;
    cudaStream_t st = NULL;
    int32_t n_items = 0;
    cusparseSpMatDescr_t mat_l = NULL;
    rk_spgemm_buf<int32_t> l_ptr, l_col, a_ptr, a_col, c_ptr, c_col;
    rk_spgemm_buf<double> l_val, a_val, c_val;
    rk_spgemm_buf<unsigned long long> l_sum, stats;
    rk_spgemm_buf<int64_t> kept, off;
    rk_spgemm_buf<unsigned char> scan_tmp, buf1, buf2;
};

namespace {

// cuSPARSE's buffer1 + buffer2 budget of a batch: bytes per product, plus a constant.
constexpr size_t kSparsePerProduct = 64;
constexpr size_t kSparseFixed = (size_t)64 << 20;
constexpr int kThreads = 256;
constexpr unsigned kFull = 0xffffffffu;

enum { S_PRODUCTS, S_EXPECT, S_FLAGS, S_SUM, S_N };                         // the stats words
enum { F_USER = 1, F_ITEM = 2, F_LIST = 4, F_PTR = 8, F_COL = 16, F_VAL = 32 }; // the flag bits

__device__ unsigned long long warp_sum(unsigned long long v)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(kFull, v, o);
    return v;
}

__device__ unsigned warp_or(unsigned v)
{
    for (int o = 16; o > 0; o >>= 1) v |= __shfl_down_sync(kFull, v, o);
    return v;
}

#define RK_WARP_ROWS(r, n)                                                                          \
    const int lane = threadIdx.x % 32;                                                              \
    for (int64_t r = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32; r < (n);                \
         r += (int64_t)gridDim.x * blockDim.x / 32)

int warp_blocks(int64_t rows)
{
    return (int)std::max<int64_t>(1, std::min<int64_t>((rows * 32 + kThreads - 1) / kThreads, 4096));
}

// L's rows (ptr = the scan of len) in list order, each list's Σ q.
__global__ void k_lists(rk_dev_lists L, const int32_t *ptr, int32_t *col, double *val, unsigned long long *lsum,
                        unsigned long long *stats)
{
    RK_WARP_ROWS(i, L.n_items)
    {
        const int32_t b = ptr[i], m = ptr[i + 1] - b;
        if (m < 0 || m > L.k) { // uniform in the warp
            if (lane == 0) atomicOr(&stats[S_FLAGS], (unsigned long long)F_LIST);
            continue;
        }
        unsigned long long s = 0;
        int bad = 0;
        for (int32_t r = lane; r < m; r += 32) {
            const int64_t at = i * (int64_t)L.k + r;
            const int32_t j = L.nbr[at];
            const uint64_t q = L.q[at];
            bad |= j < 0 || j >= L.n_items || q > (1ull << 32);
            col[b + r] = j;
            val[b + r] = (double)q;
            s += q;
        }
        s = warp_sum(s);
        bad = __any_sync(kFull, bad);
        if (lane == 0) {
            lsum[i] = s;
            if (bad) atomicOr(&stats[S_FLAGS], (unsigned long long)F_LIST);
        }
    }
}

// Per batch row: A's entries (rated items with a non-empty list), and the
// batch's products and expected Σ of scores.
__global__ void k_count(rk_dev_csr R, const int32_t *users, int32_t count, const int32_t *lptr,
                        const unsigned long long *lsum, int32_t n_items, int64_t *kept, unsigned long long *stats)
{
    RK_WARP_ROWS(b, count)
    {
        const int32_t u = users[b];
        if (u < 0 || u >= R.n_rows) { // uniform in the warp
            if (lane == 0) {
                kept[b] = 0;
                atomicOr(&stats[S_FLAGS], (unsigned long long)F_USER);
            }
            continue;
        }
        unsigned long long k = 0, prods = 0, expect = 0;
        int bad = 0;
        for (int64_t p = R.ptr[u] + lane; p < R.ptr[u + 1]; p += 32) {
            const int32_t j = R.idx[p];
            if (j < 0 || j >= n_items) {
                bad = 1;
                continue;
            }
            const int32_t m = lptr[j + 1] - lptr[j];
            k += m > 0;
            prods += (unsigned long long)m;
            expect += lsum[j];
        }
        k = warp_sum(k);
        prods = warp_sum(prods);
        expect = warp_sum(expect);
        bad = __any_sync(kFull, bad);
        if (lane == 0) {
            kept[b] = (int64_t)k;
            atomicAdd(&stats[S_PRODUCTS], prods);
            atomicAdd(&stats[S_EXPECT], expect);
            if (bad) atomicOr(&stats[S_FLAGS], (unsigned long long)F_ITEM);
        }
    }
}

// A's rows: an ordered compaction of each user's row (k_count checked the indices).
__global__ void k_gather(rk_dev_csr R, const int32_t *users, int32_t count, const int32_t *lptr, const int64_t *off,
                         int32_t *aptr, int32_t *acol, double *aval)
{
    RK_WARP_ROWS(b, count)
    {
        const int32_t u = users[b];
        int64_t dst = off[b];
        if (lane == 0) {
            aptr[b] = (int32_t)dst;
            if (b == count - 1) aptr[count] = (int32_t)off[count];
        }
        const int64_t end = R.ptr[u + 1];
        for (int64_t p0 = R.ptr[u]; p0 < end; p0 += 32) {
            const int64_t p = p0 + lane;
            const int32_t j = p < end ? R.idx[p] : 0;
            const bool keep = p < end && lptr[j + 1] > lptr[j];
            const unsigned mask = __ballot_sync(kFull, keep);
            if (keep) {
                const int64_t at = dst + __popc(mask & ((1u << lane) - 1u));
                acol[at] = j;
                aval[at] = 1.0;
            }
            dst += __popc(mask);
        }
    }
}

// C's structure and values, and Σ of its values.
__global__ void k_check(const int32_t *cptr, const int32_t *ccol, const double *cval, int32_t count, int64_t nnz,
                        int32_t n_items, unsigned long long *stats)
{
    RK_WARP_ROWS(r, count)
    {
        const int64_t s = cptr[r], e = cptr[r + 1];
        unsigned flags = ((r == 0 && s != 0) || (r == count - 1 && e != nnz)) ? F_PTR : 0;
        if (s < 0 || e < s || e > nnz) { // uniform in the warp
            if (lane == 0) atomicOr(&stats[S_FLAGS], (unsigned long long)F_PTR);
            continue;
        }
        unsigned long long sum = 0;
        for (int64_t p = s + lane; p < e; p += 32) {
            const int32_t c = ccol[p];
            if (c < 0 || c >= n_items || (p > s && ccol[p - 1] >= c)) flags |= F_COL;
            const double v = cval[p];
            if (v >= 0.0 && v <= 9007199254740992.0 && v == floor(v)) sum += (unsigned long long)v;
            else flags |= F_VAL;
        }
        sum = warp_sum(sum);
        flags = warp_or(flags);
        if (lane == 0) {
            atomicAdd(&stats[S_SUM], sum);
            if (flags) atomicOr(&stats[S_FLAGS], (unsigned long long)flags);
        }
    }
}

rk_status read_back(void *h, const void *d, size_t bytes, cudaStream_t st, rk_error *err)
{
    RK_CUDA_CHECK(err, cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, st));
    RK_CUDA_CHECK(err, cudaStreamSynchronize(st));
    return RK_OK;
}

struct batch_descr {
    cusparseSpMatDescr_t a = NULL, c = NULL;
    cusparseSpGEMMDescr_t g = NULL;
    ~batch_descr()
    {
        if (g != NULL) cusparseSpGEMM_destroyDescr(g);
        if (a != NULL) cusparseDestroySpMat(a);
        if (c != NULL) cusparseDestroySpMat(c);
    }
};

rk_status empty_scores(rk_spgemm *c, int32_t count, rk_dev_scores *out, rk_error *err)
{
    RK_FORWARD(c->c_ptr.need((size_t)count + 1, err));
    RK_FORWARD(c->c_col.need(1, err));
    RK_FORWARD(c->c_val.need(1, err));
    RK_CUDA_CHECK(err, cudaMemsetAsync(c->c_ptr.p, 0, ((size_t)count + 1) * sizeof(int32_t), c->st));
    RK_CUDA_CHECK(err, cudaStreamSynchronize(c->st));
    *out = rk_dev_scores{count, 0, c->c_ptr.p, c->c_col.p, c->c_val.p};
    return RK_OK;
}

rk_status build_lists(rk_spgemm *c, const rk_dev_lists *L, rk_error *err)
{
    const int32_t n = L->n_items;
    cudaStream_t st = c->st;
    RK_FORWARD(c->l_ptr.need((size_t)n + 1, err));
    RK_FORWARD(c->l_sum.need((size_t)n, err));
    RK_FORWARD(c->stats.need(S_N, err));
    RK_CUDA_CHECK(err, cudaMemsetAsync(c->l_ptr.p, 0, sizeof(int32_t), st));
    RK_CUDA_CHECK(err, cudaMemsetAsync(c->stats.p, 0, S_N * sizeof(unsigned long long), st));
    if (n == 0) return RK_OK;
    size_t bytes = 0;
    RK_CUDA_CHECK(err, cub::DeviceScan::InclusiveSum(NULL, bytes, L->len, c->l_ptr.p + 1, n, st));
    RK_FORWARD(c->scan_tmp.need(bytes, err));
    RK_CUDA_CHECK(err, cub::DeviceScan::InclusiveSum(c->scan_tmp.p, bytes, L->len, c->l_ptr.p + 1, n, st));
    int32_t total = 0;
    RK_FORWARD(read_back(&total, c->l_ptr.p + n, sizeof total, st, err));
    if (total < 0 || total > (int64_t)n * L->k)
        return rk_error_set(err, RK_E_ARG, "the list lengths add up to %d, outside [0, %d x %d]", total, n, L->k);

    rk_spgemm_buf<int32_t> col; // in list order, then sorted into l_col
    rk_spgemm_buf<double> val;
    rk_spgemm_buf<unsigned char> sort_tmp;
    RK_FORWARD(col.need((size_t)total, err));
    RK_FORWARD(val.need((size_t)total, err));
    RK_FORWARD(c->l_col.need((size_t)total, err));
    RK_FORWARD(c->l_val.need((size_t)total, err));
    k_lists<<<warp_blocks(n), kThreads, 0, st>>>(*L, c->l_ptr.p, col.p, val.p, c->l_sum.p, c->stats.p);
    RK_LAUNCH_CHECK(err, "k_lists");
    if (total > 0) {
        bytes = 0;
        RK_CUDA_CHECK(err, cub::DeviceSegmentedSort::SortPairs(NULL, bytes, col.p, c->l_col.p, val.p, c->l_val.p,
                                                               total, n, c->l_ptr.p, c->l_ptr.p + 1, st));
        RK_FORWARD(sort_tmp.need(bytes, err));
        RK_CUDA_CHECK(err, cub::DeviceSegmentedSort::SortPairs(sort_tmp.p, bytes, col.p, c->l_col.p, val.p,
                                                               c->l_val.p, total, n, c->l_ptr.p, c->l_ptr.p + 1, st));
    }
    unsigned long long sh[S_N];
    RK_FORWARD(read_back(sh, c->stats.p, sizeof sh, st, err));
    if (sh[S_FLAGS] != 0)
        return rk_error_set(err, RK_E_ARG, "malformed neighbour lists: a length outside [0, %d], an item outside "
                                           "[0, %d) or a weight above 2^32", L->k, n);
    if (total > 0)
        RK_CUSPARSE_CHECK(err, cusparseCreateCsr(&c->mat_l, n, n, total, c->l_ptr.p, c->l_col.p, c->l_val.p,
                                                 CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                                 CUDA_R_64F));
    return RK_OK;
}

} // namespace

rk_status rk_spgemm_create(cusparseHandle_t h, const rk_dev_lists *L, cudaStream_t st, rk_spgemm **out,
                           rk_error *err)
{
    *out = NULL;
    if (L->n_items < 0 || L->k < 0 || (int64_t)L->n_items * L->k > (int64_t)INT32_MAX)
        return rk_error_set(err, RK_E_RANGE, "%d lists of up to %d items are beyond int32 offsets", L->n_items, L->k);
    rk_spgemm *c = new (std::nothrow) rk_spgemm();
    if (c == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory for the SpGEMM route");
    c->h = h;
    c->st = st;
    c->n_items = L->n_items;
    rk_status s = build_lists(c, L, err);
    if (s != RK_OK) {
        rk_spgemm_free(c);
        return s;
    }
    *out = c;
    return RK_OK;
}

rk_status rk_spgemm_scores(rk_spgemm *c, const rk_dev_csr *R, const int32_t *d_users, int32_t count,
                           int64_t products, rk_dev_scores *out, rk_error *err)
{
    memset(out, 0, sizeof *out);
    if (count < 0 || products < 0 || products > RK_SPGEMM_MAX_PRODUCTS || R->n_cols != c->n_items)
        return rk_error_set(err, RK_E_ARG, "SpGEMM batch of %d users and %lld products (at most %lld), %d items in R, %d in L",
                            count, (long long)products, (long long)RK_SPGEMM_MAX_PRODUCTS, R->n_cols, c->n_items);
    if (count == 0) return empty_scores(c, 0, out, err);
    cudaStream_t st = c->st;

    // A's row lengths, offsets and the batch's products
    RK_FORWARD(c->kept.need((size_t)count, err));
    RK_FORWARD(c->off.need((size_t)count + 1, err));
    RK_CUDA_CHECK(err, cudaMemsetAsync(c->stats.p, 0, S_N * sizeof(unsigned long long), st));
    RK_CUDA_CHECK(err, cudaMemsetAsync(c->off.p, 0, sizeof(int64_t), st));
    k_count<<<warp_blocks(count), kThreads, 0, st>>>(*R, d_users, count, c->l_ptr.p, c->l_sum.p, c->n_items,
                                                      c->kept.p, c->stats.p);
    RK_LAUNCH_CHECK(err, "k_count");
    size_t bytes = 0;
    RK_CUDA_CHECK(err, cub::DeviceScan::InclusiveSum(NULL, bytes, c->kept.p, c->off.p + 1, count, st));
    RK_FORWARD(c->scan_tmp.need(bytes, err));
    RK_CUDA_CHECK(err, cub::DeviceScan::InclusiveSum(c->scan_tmp.p, bytes, c->kept.p, c->off.p + 1, count, st));
    int64_t nnz_a = 0;
    unsigned long long sh[S_N];
    RK_FORWARD(read_back(sh, c->stats.p, sizeof sh, st, err));
    RK_FORWARD(read_back(&nnz_a, c->off.p + count, sizeof nnz_a, st, err));
    if (sh[S_FLAGS] & F_USER) return rk_error_set(err, RK_E_ARG, "a user of the batch is outside [0, %d)", R->n_rows);
    if (sh[S_FLAGS] & F_ITEM) return rk_error_set(err, RK_E_ARG, "R holds an item outside [0, %d)", c->n_items);
    if ((int64_t)sh[S_PRODUCTS] != products)
        return rk_error_set(err, RK_E_INTERNAL, "the batch has %llu intermediate products, %lld were planned",
                            sh[S_PRODUCTS], (long long)products);
    if (products == 0) return empty_scores(c, count, out, err);

    // A: nnz_a <= products (each entry has a non-empty list)
    RK_FORWARD(c->a_ptr.need((size_t)count + 1, err));
    RK_FORWARD(c->a_col.need((size_t)nnz_a, err));
    RK_FORWARD(c->a_val.need((size_t)nnz_a, err));
    RK_FORWARD(c->c_ptr.need((size_t)count + 1, err));
    k_gather<<<warp_blocks(count), kThreads, 0, st>>>(*R, d_users, count, c->l_ptr.p, c->off.p, c->a_ptr.p,
                                                       c->a_col.p, c->a_val.p);
    RK_LAUNCH_CHECK(err, "k_gather");

    // C = A · L
    const double alpha = 1.0, beta = 0.0;
    const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    batch_descr d;
#define RK_GEMM_ARGS c->h, op, op, &alpha, d.a, c->mat_l, &beta, d.c, CUDA_R_64F, CUSPARSE_SPGEMM_DEFAULT, d.g
    RK_CUSPARSE_CHECK(err, cusparseSetStream(c->h, st));
    RK_CUSPARSE_CHECK(err, cusparseSetPointerMode(c->h, CUSPARSE_POINTER_MODE_HOST));
    RK_CUSPARSE_CHECK(err, cusparseCreateCsr(&d.a, count, c->n_items, nnz_a, c->a_ptr.p, c->a_col.p, c->a_val.p,
                                             CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                                             CUDA_R_64F));
    RK_CUSPARSE_CHECK(err, cusparseCreateCsr(&d.c, count, c->n_items, 0, c->c_ptr.p, NULL, NULL, CUSPARSE_INDEX_32I,
                                             CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    RK_CUSPARSE_CHECK(err, cusparseSpGEMM_createDescr(&d.g));
    size_t bs1 = 0, bs2 = 0;
    RK_CUSPARSE_CHECK(err, cusparseSpGEMM_workEstimation(RK_GEMM_ARGS, &bs1, NULL));
    RK_FORWARD(c->buf1.need(bs1, err));
    RK_CUSPARSE_CHECK(err, cusparseSpGEMM_workEstimation(RK_GEMM_ARGS, &bs1, c->buf1.p));
    int64_t n_prods = -1;
    RK_CUSPARSE_CHECK(err, cusparseSpGEMM_getNumProducts(d.g, &n_prods));
    char why[200];
    if (n_prods != products) {
        snprintf(why, sizeof why, "%lld intermediate products, the batch has %lld", (long long)n_prods,
                 (long long)products);
        return rk_gpu_fail(err, "cusparseSpGEMM_getNumProducts", why, __FILE__, __LINE__);
    }
    RK_CUSPARSE_CHECK(err, cusparseSpGEMM_compute(RK_GEMM_ARGS, &bs2, NULL));
    const size_t budget = kSparsePerProduct * (size_t)products + kSparseFixed;
    if (bs1 >= budget) {
        snprintf(why, sizeof why, "buffer1 of %zu bytes for %lld products, beyond rk_spgemm_bytes' %zu", bs1,
                 (long long)products, budget);
        return rk_gpu_fail(err, "cusparseSpGEMM_workEstimation", why, __FILE__, __LINE__);
    }
    if (bs2 > budget - bs1) bs2 = budget - bs1; // ALG1 takes any size (INSUFFICIENT_RESOURCES if too small)
    RK_FORWARD(c->buf2.need(bs2, err));
    RK_CUSPARSE_CHECK(err, cusparseSpGEMM_compute(RK_GEMM_ARGS, &bs2, c->buf2.p));
    int64_t rows_c = -1, cols_c = -1, nnz_c = -1;
    RK_CUSPARSE_CHECK(err, cusparseSpMatGetSize(d.c, &rows_c, &cols_c, &nnz_c));
    if (rows_c != count || cols_c != c->n_items || nnz_c < 0 || nnz_c > products) {
        snprintf(why, sizeof why, "C is %lld x %lld with %lld entries, for %d x %d and %lld products",
                 (long long)rows_c, (long long)cols_c, (long long)nnz_c, count, c->n_items, (long long)products);
        return rk_gpu_fail(err, "cusparseSpGEMM_compute", why, __FILE__, __LINE__);
    }
    RK_FORWARD(c->c_col.need((size_t)nnz_c, err));
    RK_FORWARD(c->c_val.need((size_t)nnz_c, err));
    RK_CUSPARSE_CHECK(err, cusparseCsrSetPointers(d.c, c->c_ptr.p, c->c_col.p, c->c_val.p));
    RK_CUSPARSE_CHECK(err, cusparseSpGEMM_copy(RK_GEMM_ARGS));
#undef RK_GEMM_ARGS

    // validation
    RK_CUDA_CHECK(err, cudaMemsetAsync(c->stats.p + S_FLAGS, 0, 2 * sizeof(unsigned long long), st));
    k_check<<<warp_blocks(count), kThreads, 0, st>>>(c->c_ptr.p, c->c_col.p, c->c_val.p, count, nnz_c, c->n_items,
                                                      c->stats.p);
    RK_LAUNCH_CHECK(err, "k_check");
    RK_FORWARD(read_back(sh, c->stats.p, sizeof sh, st, err));
    if (sh[S_FLAGS] != 0 || sh[S_SUM] != sh[S_EXPECT]) {
        snprintf(why, sizeof why, "C failed validation: %s%s%sscore sum %llu, expected %llu",
                 sh[S_FLAGS] & F_PTR ? "bad row offsets, " : "", sh[S_FLAGS] & F_COL ? "bad or unsorted columns, " : "",
                 sh[S_FLAGS] & F_VAL ? "non-integer values, " : "", sh[S_SUM], sh[S_EXPECT]);
        return rk_gpu_fail(err, "cusparseSpGEMM_copy", why, __FILE__, __LINE__);
    }
    *out = rk_dev_scores{count, nnz_c, c->c_ptr.p, c->c_col.p, c->c_val.p};
    return RK_OK;
}

size_t rk_spgemm_bytes(int64_t products, int32_t rows, int32_t n_items)
{
    const size_t p = products > 0 ? (size_t)products : 0, r = rows > 0 ? (size_t)rows : 0;
    const size_t c_max = n_items >= 0 ? std::min(p, r * (size_t)n_items) : p;
    return 2 * (r + 1) * sizeof(int32_t)                    // A's and C's offsets
           + (p + c_max) * (sizeof(int32_t) + sizeof(double)) // A's and C's entries
           + 2 * (r + 1) * sizeof(int64_t) + r * sizeof(int64_t) + ((size_t)1 << 20) // counts, offsets, scan
           + kSparsePerProduct * p + kSparseFixed;            // cuSPARSE's buffers (capped to this)
}

void rk_spgemm_free(rk_spgemm *c)
{
    if (c == NULL) return;
    if (c->mat_l != NULL) cusparseDestroySpMat(c->mat_l);
    delete c;
}
