// Top-k of each similarity row (CONTRACT.md §3): positive similarities, higher
// first, equal ones by ascending index — the order of rk_topk (engine/rk_select.h);
// for signed lists (--negative yes) every nonzero similarity by its magnitude.
//
// One block per row.  A positive double orders like its bit pattern, so a
// radix select over the 64-bit keys (8 bits a pass, most significant first)
// finds the k-th largest value K in at most 8 passes over the row; keys
// above K are all taken, and among keys equal to K the lowest indices are
// taken by an ordered compaction.  The k winners are then sorted in shared
// memory by a bitonic network on (key descending, index ascending).
#include "rk_gpu_internal.h"
#include "rk_select.h"

#include <stdlib.h>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

namespace {

constexpr int kThreads = 256;

// The selection key of a similarity: its bits when it is kept (s > 0, or
// s != 0 by its magnitude for signed lists), else 0.
__device__ __forceinline__ uint64_t key_of(double s, bool neg)
{
    if (neg) return s > 0.0 || s < 0.0 ? (uint64_t)__double_as_longlong(fabs(s)) : 0ull;
    return s > 0.0 ? (uint64_t)__double_as_longlong(s) : 0ull;
}

// 1 when (ka, ia) ranks before (kb, ib)
__device__ __forceinline__ bool before(uint64_t ka, int32_t ia, uint64_t kb, int32_t ib)
{
    return ka > kb || (ka == kb && ia < ib);
}

// Bitonic sort of n (a power of two) pairs, best first.
__device__ void bitonic_sort(uint64_t *key, int32_t *idx, int n)
{
    for (int size = 2; size <= n; size <<= 1) {
        for (int stride = size >> 1; stride > 0; stride >>= 1) {
            __syncthreads();
            for (int a = threadIdx.x; a < n; a += blockDim.x) {
                int b = a ^ stride;
                if (b <= a) continue;
                bool up = (a & size) == 0; // this half sorts best first
                bool swap = up ? before(key[b], idx[b], key[a], idx[a]) : before(key[a], idx[a], key[b], idx[b]);
                if (swap) {
                    uint64_t tk = key[a]; key[a] = key[b]; key[b] = tk;
                    int32_t ti = idx[a]; idx[a] = idx[b]; idx[b] = ti;
                }
            }
        }
    }
    __syncthreads();
}

template <typename Row>
__device__ void select_row(const Row &row, int32_t n, int32_t k, bool neg, uint64_t *ckey, int32_t *cidx,
                           int32_t *out_n)
{
    typedef cub::BlockReduce<int, kThreads> Reduce;
    typedef cub::BlockScan<int, kThreads> Scan;
    __shared__ union {
        typename Reduce::TempStorage reduce;
        typename Scan::TempStorage scan;
    } tmp;
    __shared__ uint32_t hist[256];
    __shared__ uint64_t s_prefix;
    __shared__ int s_need, s_done, s_count, s_total;

    int local = 0;
    for (int32_t j = threadIdx.x; j < n; j += blockDim.x) local += key_of(row(j), neg) != 0;
    int P = Reduce(tmp.reduce).Sum(local);
    if (threadIdx.x == 0) {
        s_total = P;
        s_prefix = 0;
        s_need = k;
        s_done = 0;
        s_count = 0;
    }
    __syncthreads();
    P = s_total;

    uint64_t K = 1; // every positive key is >= 1
    int need_eq = 0;
    if (P > k) {
        uint64_t mask = 0;
        for (int shift = 56; shift >= 0; shift -= 8) {
            for (int b = threadIdx.x; b < 256; b += blockDim.x) hist[b] = 0;
            __syncthreads();
            const uint64_t prefix = s_prefix;
            for (int32_t j = threadIdx.x; j < n; j += blockDim.x) {
                uint64_t key = key_of(row(j), neg);
                if (key != 0 && (key & mask) == prefix) atomicAdd(&hist[(key >> shift) & 255u], 1u);
            }
            __syncthreads();
            if (threadIdx.x == 0) {
                int need = s_need, cum = 0;
                for (int d = 255; d >= 0; d--) {
                    int h = (int)hist[d];
                    if (cum + h >= need) {
                        s_need = need - cum;
                        s_prefix = prefix | ((uint64_t)d << shift);
                        s_done = (h == need - cum);
                        break;
                    }
                    cum += h;
                }
            }
            mask |= (uint64_t)255 << shift;
            __syncthreads();
            if (s_done) break;
        }
        K = s_prefix;
        // done early: every key carrying the prefix is taken (>= K);
        // otherwise K is exact and s_need of the keys equal to K are taken
        need_eq = s_done ? 0 : s_need;
    }

    // keys above K (or all positives when P <= k): unordered, they are sorted below
    for (int32_t j = threadIdx.x; j < n; j += blockDim.x) {
        uint64_t key = key_of(row(j), neg);
        bool take = need_eq ? key > K : (key != 0 && key >= K);
        if (take) {
            int pos = atomicAdd(&s_count, 1);
            ckey[pos] = key;
            cidx[pos] = j;
        }
    }
    __syncthreads();
    // ties at K: the lowest indices, by an ordered compaction
    if (need_eq > 0) {
        int taken = 0;
        for (int32_t base = 0; base < n && taken < need_eq; base += blockDim.x) {
            int32_t j = base + threadIdx.x;
            int flag = (j < n && key_of(row(j), neg) == K) ? 1 : 0, rank, total;
            Scan(tmp.scan).ExclusiveSum(flag, rank, total);
            if (flag && taken + rank < need_eq) {
                int pos = s_count + taken + rank;
                ckey[pos] = K;
                cidx[pos] = j;
            }
            taken += total;
            __syncthreads();
        }
        __syncthreads();
        if (threadIdx.x == 0) s_count += need_eq;
        __syncthreads();
    }
    int m = s_count < k ? s_count : k;
    int p2 = 1;
    while (p2 < m) p2 <<= 1;
    for (int a = m + threadIdx.x; a < p2; a += blockDim.x) {
        ckey[a] = 0;
        cidx[a] = 0x7fffffff;
    }
    bitonic_sort(ckey, cidx, p2);
    *out_n = m;
}

struct tile_row {
    const double *S;
    __device__ double operator()(int32_t j) const { return S[j]; }
};

__global__ void __launch_bounds__(kThreads) k_select(rk_select_args a)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    int32_t kcap = 1;
    while (kcap < a.k) kcap <<= 1;
    uint64_t *ckey = reinterpret_cast<uint64_t *>(smem_raw);
    int32_t *cidx = reinterpret_cast<int32_t *>(ckey + kcap);
    const int32_t t = blockIdx.x;
    const int32_t item = a.tile_items != NULL ? a.tile_items[t] : t;
    const int64_t at = a.row_is_item ? item : t;
    tile_row row{a.S + at * a.ld};
    int32_t m;
    select_row(row, a.n_cols, a.k, a.negative != 0, ckey, cidx, &m);
    const int64_t base = (int64_t)item * a.k;
    for (int r = threadIdx.x; r < m; r += blockDim.x) {
        int32_t j = cidx[r];
        a.nbr[base + r] = j;
        a.sim[base + r] = (float)row(j); // signed: the key holds |sim|
        a.sup[base + r] = a.N != NULL ? a.N[at * a.ld + j] : 0;
    }
    if (threadIdx.x == 0) a.len[item] = m;
}

} // namespace

rk_status rk_gpu_select_launch(const rk_select_args *a, cudaStream_t st, rk_error *err)
{
    if (a->rows <= 0) return RK_OK;
    if (a->k < 1 || a->k > RK_GPU_MAX_K)
        return rk_error_set(err, RK_E_ARG, "GPU selection takes 1 <= k <= %d (got %d)", RK_GPU_MAX_K, a->k);
    int32_t kcap = 1;
    while (kcap < a->k) kcap <<= 1;
    size_t smem = (size_t)kcap * (sizeof(uint64_t) + sizeof(int32_t));
    RK_CUDA_CHECK(err, cudaFuncSetAttribute(k_select, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    k_select<<<a->rows, kThreads, smem, st>>>(*a);
    RK_LAUNCH_CHECK(err, "k_select");
    return RK_OK;
}

// ---- k above the GPU's limit: the host selects from the tile's rows ---------

rk_status rk_gpu_select_host(const double *d_S, const int32_t *d_N, int32_t n_cols, const int32_t *items, int32_t rows,
                             int negative, rk_host_select &hs, cudaStream_t st, rk_error *err)
{
    const size_t cells = (size_t)rows * (size_t)n_cols;
    if (hs.S.size() < cells) {
        hs.S.resize(cells);
        hs.N.resize(cells);
    }
    RK_CUDA_CHECK(err, cudaMemcpyAsync(hs.S.data(), d_S, cells * sizeof(double), cudaMemcpyDeviceToHost, st));
    RK_CUDA_CHECK(err, cudaMemcpyAsync(hs.N.data(), d_N, cells * sizeof(int32_t), cudaMemcpyDeviceToHost, st));
    RK_CUDA_CHECK(err, cudaStreamSynchronize(st));
    rk_lists *l = hs.out;
    const int32_t k = l->k;
    int failed = 0;
#pragma omp parallel reduction(+ : failed)
    {
        double *score = (double *)malloc((size_t)k * sizeof(double));
        int32_t *idx = (int32_t *)malloc((size_t)k * sizeof(int32_t));
        if (score == NULL || idx == NULL) failed++;
#pragma omp for schedule(dynamic, 1)
        for (int32_t t = 0; t < rows; t++) {
            if (score == NULL || idx == NULL) continue;
            const double *Srow = hs.S.data() + (size_t)t * n_cols;
            const int32_t *Nrow = hs.N.data() + (size_t)t * n_cols;
            rk_topk h;
            rk_topk_init(&h, k, score, idx);
            for (int32_t j = 0; j < n_cols; j++) {
                if (Srow[j] > 0.0) rk_topk_push(&h, Srow[j], j);
                else if (negative && Srow[j] < 0.0) rk_topk_push(&h, -Srow[j], j);
            }
            rk_topk_sort(&h);
            const int32_t i = items[t];
            const int64_t base = (int64_t)i * k;
            l->len[i] = h.n;
            for (int32_t r = 0; r < h.n; r++) {
                l->nbr[base + r] = h.idx[r];
                l->sim[base + r] = (float)Srow[h.idx[r]];
                l->support[base + r] = Nrow[h.idx[r]];
            }
        }
        free(score);
        free(idx);
    }
    if (failed) return rk_error_set(err, RK_E_NOMEM, "out of memory for the host selection of k = %d", k);
    return RK_OK;
}

// rk_gpu_select_rows (rk_gpu.h): the selection alone, for tests.
extern "C" rk_status rk_gpu_select_rows(const double *rows, int32_t n_rows, int32_t n_cols, int negative,
                                        rk_lists *out, rk_error *err)
{
    if (out->n_items != n_rows) return rk_error_set(err, RK_E_ARG, "lists for %d rows, %d given", out->n_items, n_rows);
    char why[256];
    if (!rk_gpu_available(why, sizeof why)) return rk_error_set(err, RK_E_GPU, "no usable GPU: %s", why);
    dev_mem mem;
    double *d_S;
    int32_t *d_len, *d_nbr, *d_sup;
    float *d_sim;
    const size_t cells = (size_t)n_rows * (size_t)n_cols, kc = (size_t)n_rows * (size_t)out->k;
    stager plain; // not initialised: plain copies
    RK_FORWARD(upload(&d_S, rows, cells, mem, plain, 0, err));
    RK_FORWARD(mem.alloc(&d_len, (size_t)n_rows, err));
    RK_FORWARD(mem.alloc(&d_nbr, kc, err));
    RK_FORWARD(mem.alloc(&d_sup, kc, err));
    RK_FORWARD(mem.alloc(&d_sim, kc, err));
    rk_select_args sel;
    memset(&sel, 0, sizeof sel);
    sel.S = d_S;
    sel.N = NULL;
    sel.ld = n_cols;
    sel.n_cols = n_cols;
    sel.tile_items = NULL;
    sel.rows = n_rows;
    sel.k = out->k;
    sel.len = d_len;
    sel.nbr = d_nbr;
    sel.sup = d_sup;
    sel.sim = d_sim;
    sel.negative = negative;
    RK_FORWARD(rk_gpu_select_launch(&sel, 0, err));
    RK_CUDA_CHECK(err, cudaMemcpy(out->len, d_len, (size_t)n_rows * sizeof(int32_t), cudaMemcpyDeviceToHost));
    RK_CUDA_CHECK(err, cudaMemcpy(out->nbr, d_nbr, kc * sizeof(int32_t), cudaMemcpyDeviceToHost));
    RK_CUDA_CHECK(err, cudaMemcpy(out->sim, d_sim, kc * sizeof(float), cudaMemcpyDeviceToHost));
    RK_CUDA_CHECK(err, cudaMemcpy(out->support, d_sup, kc * sizeof(int32_t), cudaMemcpyDeviceToHost));
    return RK_OK;
}
