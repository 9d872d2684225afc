// Co-rating sums and similarity rows of a tile of items.
//
// One block per target item i.  The columns (items j) are cut into chunks
// that fit in shared memory; for each chunk the block zeroes its
// accumulators, every warp takes raters u of i from a shared counter and adds
// the pair contributions of u's items in the chunk with shared-memory atomics
// (the user rows are sorted, so a chunk is one segment of each row, located
// by seg[]), and the block then turns the sums into similarities with
// rk_sim_value — the same inline function as the CPU engine — and writes the
// row to the tile.  When the tile holds every item, the similarities are
// symmetric and each pair is summed once (columns after the row's item);
// k_mirror fills the rest.  On a rating grid the sums are exact int32, so CPU and
// GPU agree bit for bit; otherwise they are doubles, except for the full-vector
// metrics of large integer values (the ranking model's, rk_knn_wide_grid): their
// n and Σxy are exact 64-bit integers, as exact as the CPU's double sums of the
// same products.  Σxy is kept in two 32-bit words (low word, then the high word
// with the low word's carry), because shared-memory atomics are native on 32
// bits: 64-bit (or double) ones summed these pairs several times slower.
#include "rk_gpu_internal.h"
#include <cub/device/device_radix_sort.cuh>

namespace {

constexpr int kThreads = 1024;
constexpr int kWarp = 32;

template <typename A> __device__ __forceinline__ void acc_add(A *p, A v) { atomicAdd(p, v); }

// The sums kind of the 64-bit integer route (not a metric-table row): n, and
// Σxy in a low and a high 32-bit word.
constexpr int kDotWide = 100;
template <int NS> __host__ __device__ constexpr int n_sums() { return NS == kDotWide ? 3 : rk_sums_count(NS); }

// (lo, hi) += v mod 2^64: the low word's carry goes into the high one, so the
// pair holds the exact two's complement sum (every Σxy here is below 2^53).
__device__ __forceinline__ void add_wide(unsigned *lo, unsigned *hi, unsigned long long v)
{
    const unsigned l = (unsigned)v, old = atomicAdd(lo, l);
    atomicAdd(hi, (unsigned)(v >> 32) + (old + l < old ? 1u : 0u));
}

__device__ __forceinline__ double wide_value(unsigned lo, unsigned hi)
{
    return (double)(long long)(((unsigned long long)hi << 32) | lo);
}

template <typename A, int NS>
__device__ __forceinline__ void add_pair(A *acc, int32_t C, int32_t jj, A x, A y)
{
    if (NS == RK_SUMS_PEARSON) {
        acc_add(&acc[0 * C + jj], A(1));
        acc_add(&acc[1 * C + jj], x);
        acc_add(&acc[2 * C + jj], y);
        acc_add(&acc[3 * C + jj], x * x);
        acc_add(&acc[4 * C + jj], y * y);
        acc_add(&acc[5 * C + jj], x * y);
    } else if (NS == RK_SUMS_PRODUCTS) {
        acc_add(&acc[0 * C + jj], A(1));
        acc_add(&acc[1 * C + jj], x * x);
        acc_add(&acc[2 * C + jj], y * y);
        acc_add(&acc[3 * C + jj], x * y);
    } else if (NS == RK_SUMS_DOT) {
        acc_add(&acc[0 * C + jj], A(1));
        acc_add(&acc[1 * C + jj], x * y);
    } else if (NS == kDotWide) { // A is unsigned: x and y are the int32 units
        acc_add(&acc[0 * C + jj], A(1));
        const long long xy = (long long)(int32_t)x * (long long)(int32_t)y;
        add_wide((unsigned *)&acc[1 * C + jj], (unsigned *)&acc[2 * C + jj], (unsigned long long)xy);
    } else {
        acc_add(&acc[0 * C + jj], A(1));
        acc_add(&acc[1 * C + jj], (x - y) * (x - y));
    }
}

template <typename A, int NS>
__device__ __forceinline__ double sim_of(const rk_sim_params &sp, const A *acc, int32_t C, int32_t jj, int32_t *n_out,
                                         int32_t i, int32_t j, const double *ncnt, const double *nsq)
{
    double n = (double)acc[jj];
    *n_out = (int32_t)acc[jj];
    if (n == 0.0) return 0.0;
    if (NS == kDotWide)
        return rk_sim_value(&sp, n, ncnt[i], ncnt[j], nsq[i], nsq[j],
                            wide_value((unsigned)acc[1 * C + jj], (unsigned)acc[2 * C + jj]));
    if (NS == RK_SUMS_DOT) // the whole vectors' counts and norms (rk_sim_value's convention)
        return rk_sim_value(&sp, n, ncnt[i], ncnt[j], nsq[i], nsq[j], (double)acc[1 * C + jj]);
    if (NS == RK_SUMS_PEARSON)
        return rk_sim_value(&sp, n, (double)acc[1 * C + jj], (double)acc[2 * C + jj], (double)acc[3 * C + jj],
                            (double)acc[4 * C + jj], (double)acc[5 * C + jj]);
    if (NS == RK_SUMS_PRODUCTS)
        return rk_sim_value(&sp, n, 0.0, 0.0, (double)acc[1 * C + jj], (double)acc[2 * C + jj],
                            (double)acc[3 * C + jj]);
    // Σ(x−y)² stands for Σx² + Σy² − 2Σxy: the same exact value on a grid
    return rk_sim_value(&sp, n, 0.0, 0.0, (double)acc[1 * C + jj], 0.0, 0.0);
}

// The first position p in [lo, hi) of a sorted row with idx[p] > i, found by
// the whole warp: 32 evenly spaced probes narrow the range 32-fold a step
// (two steps for rows of up to a thousand items), so there is no chain of
// dependent loads as in a binary search.
__device__ __forceinline__ int64_t warp_first_after(const int32_t *__restrict__ idx, int64_t lo, int64_t hi,
                                                    int32_t i, int lane)
{
    while (hi - lo > kWarp) {
        const int64_t step = (hi - lo + kWarp - 1) / kWarp;
        const int64_t p = lo + lane * step;
        const unsigned at_or_before = __ballot_sync(0xffffffffu, p < hi && idx[p] <= i);
        const int cnt = __popc(at_or_before); // probes 0..cnt-1 are <= i, the rest > i
        const int64_t nlo = cnt > 0 ? lo + (int64_t)(cnt - 1) * step + 1 : lo;
        const int64_t nhi = lo + (int64_t)cnt * step < hi ? lo + (int64_t)cnt * step : hi;
        lo = nlo;
        hi = nhi;
    }
    const int64_t p = lo + lane;
    return lo + __popc(__ballot_sync(0xffffffffu, p < hi && idx[p] <= i));
}

// V: value type of the matrices (int32 grid units or double); A: accumulator.
template <typename V, typename A, int NS>
__global__ void __launch_bounds__(kThreads) k_sims(const int64_t *__restrict__ iptr, const int32_t *__restrict__ iidx,
                                                   const V *__restrict__ ival, const int64_t *__restrict__ uptr,
                                                   const int32_t *__restrict__ uidx, const V *__restrict__ uval,
                                                   const int64_t *__restrict__ seg, int32_t n_chunks, int32_t C,
                                                   int32_t n_items, const int32_t *__restrict__ tile_items,
                                                   int sym, rk_sim_params sp, const double *__restrict__ ncnt,
                                                   const double *__restrict__ nsq, double *__restrict__ S,
                                                   int32_t *__restrict__ N)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    A *acc = reinterpret_cast<A *>(smem_raw);
    __shared__ int next_rater;

    const int32_t t = blockIdx.x;
    const int32_t i = tile_items[t];
    const int64_t r0 = iptr[i], nr = iptr[i + 1] - r0;
    const int lane = threadIdx.x % kWarp;
    // sym: the tile holds every item, row = item, and only columns j > i are
    // summed here (k_mirror copies the rest from the rows below)
    const int64_t row = sym ? i : t;
    double *Srow = S + row * n_items;
    int32_t *Nrow = N + row * n_items;

    for (int32_t c = 0; c < n_chunks; c++) {
        const int32_t c0 = c * C;
        const int32_t cw = min(C, n_items - c0);
        if (sym && c0 + cw <= i + 1) continue; // the same for the whole block
        for (int32_t a = threadIdx.x; a < n_sums<NS>() * C; a += blockDim.x) acc[a] = A(0);
        if (threadIdx.x == 0) next_rater = 0;
        __syncthreads();
        for (;;) {
            int r = 0;
            if (lane == 0) r = atomicAdd(&next_rater, 1);
            r = __shfl_sync(0xffffffffu, r, 0);
            if (r >= nr) break;
            const int64_t p = r0 + r;
            const int32_t u = iidx[p];
            const A x = (A)ival[p];
            int64_t lo, hi;
            if (seg != NULL) {
                lo = seg[(int64_t)u * (n_chunks + 1) + c];
                hi = seg[(int64_t)u * (n_chunks + 1) + c + 1];
            } else { // no table (it would grow as users x chunks): the warp searches the row
                const int64_t b = uptr[u], e = uptr[u + 1];
                lo = c0 > 0 ? warp_first_after(uidx, b, e, c0 - 1, lane) : b;
                hi = c0 + cw < n_items ? warp_first_after(uidx, lo, e, c0 + cw - 1, lane) : e;
            }
            if (sym && c0 <= i) lo = warp_first_after(uidx, lo, hi, i, lane);
            for (int64_t pp = lo + lane; pp < hi; pp += kWarp)
                add_pair<A, NS>(acc, C, uidx[pp] - c0, x, (A)uval[pp]);
        }
        __syncthreads();
        for (int32_t jj = threadIdx.x; jj < cw; jj += blockDim.x) {
            if (sym && c0 + jj <= i) continue;
            int32_t n;
            double s = sim_of<A, NS>(sp, acc, C, jj, &n, i, c0 + jj, ncnt, nsq);
            if (c0 + jj == i) s = 0.0;
            Srow[c0 + jj] = s;
            Nrow[c0 + jj] = n;
        }
        __syncthreads();
    }
}

// ---- one query per kernel (Cordeiro, Meyer and Zola) --------------------------
// For a few items, one block per item leaves most of the GPU idle.  Here
// each item i is spread over the GPU: block (c, s, b) sums, in shared memory
// as k_sims does, the pairs of column chunk c over the raters s, s + S,
// s + 2S… of the batch's item b, then adds its nonzero partial sums to the
// item's sums in global memory (one L2 atomic per touched column and sum, not
// one per pair); a second kernel turns the global sums into the similarity
// rows and zeroes them for the next batch.  A launch takes a batch of items
// (as many as their global sums allow), so that few items do not pay two
// launches each.
// Integer sums are exact whatever the order: CPU and GPU agree bit for bit
// on a grid.
template <typename V, typename A, int NS>
__global__ void __launch_bounds__(kThreads) k_one_acc(const int64_t *__restrict__ iptr, const int32_t *__restrict__ iidx,
                                                      const V *__restrict__ ival, const int64_t *__restrict__ uptr,
                                                      const int32_t *__restrict__ uidx, const V *__restrict__ uval,
                                                      const int64_t *__restrict__ seg, int32_t n_chunks, int32_t C,
                                                      int32_t n_items, const int32_t *__restrict__ tile_items, int32_t t0,
                                                      A *__restrict__ gacc_all)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    A *acc = reinterpret_cast<A *>(smem_raw);
    __shared__ int next_rater;
    const int32_t i = tile_items[t0 + (int32_t)blockIdx.z];
    A *gacc = gacc_all + (int64_t)blockIdx.z * n_sums<NS>() * n_items;
    const int64_t r0 = iptr[i], nr = iptr[i + 1] - r0;
    const int32_t c = blockIdx.x, S = gridDim.y;
    if ((int64_t)blockIdx.y >= nr) return; // no rater in this slice: the same for the whole block
    const int32_t c0 = c * C, cw = min(C, n_items - c0);
    const int lane = threadIdx.x % kWarp;
    for (int32_t a = threadIdx.x; a < n_sums<NS>() * C; a += blockDim.x) acc[a] = A(0);
    if (threadIdx.x == 0) next_rater = 0;
    __syncthreads();
    for (;;) {
        int k = 0;
        if (lane == 0) k = atomicAdd(&next_rater, 1);
        k = __shfl_sync(0xffffffffu, k, 0);
        const int64_t r = (int64_t)blockIdx.y + (int64_t)k * S;
        if (r >= nr) break;
        const int32_t u = iidx[r0 + r];
        const A x = (A)ival[r0 + r];
        int64_t lo, hi;
        if (n_chunks == 1) {
            lo = uptr[u];
            hi = uptr[u + 1];
        } else if (seg != NULL) {
            lo = seg[(int64_t)u * (n_chunks + 1) + c];
            hi = seg[(int64_t)u * (n_chunks + 1) + c + 1];
        } else {
            const int64_t b = uptr[u], e = uptr[u + 1];
            lo = c0 > 0 ? warp_first_after(uidx, b, e, c0 - 1, lane) : b;
            hi = c0 + cw < n_items ? warp_first_after(uidx, lo, e, c0 + cw - 1, lane) : e;
        }
        for (int64_t pp = lo + lane; pp < hi; pp += kWarp) add_pair<A, NS>(acc, C, uidx[pp] - c0, x, (A)uval[pp]);
    }
    __syncthreads();
    for (int32_t jj = threadIdx.x; jj < cw; jj += blockDim.x) {
        if (acc[jj] == A(0)) continue; // no co-rater in this slice
        if (NS == kDotWide) {
            acc_add(&gacc[c0 + jj], acc[jj]);
            add_wide((unsigned *)&gacc[(int64_t)n_items + c0 + jj], (unsigned *)&gacc[2 * (int64_t)n_items + c0 + jj],
                     ((unsigned long long)acc[2 * C + jj] << 32) | (unsigned)acc[1 * C + jj]);
        } else {
            for (int a = 0; a < n_sums<NS>(); a++) acc_add(&gacc[(int64_t)a * n_items + c0 + jj], acc[a * C + jj]);
        }
    }
}

template <typename A, int NS>
__global__ void k_one_fin(int32_t n_items, const int32_t *__restrict__ tile_items, int32_t t0, rk_sim_params sp,
                          const double *__restrict__ ncnt, const double *__restrict__ nsq, A *__restrict__ acc_all,
                          double *__restrict__ S, int32_t *__restrict__ N)
{
    const int32_t t = t0 + (int32_t)blockIdx.y, i = tile_items[t];
    A *acc = acc_all + (int64_t)blockIdx.y * n_sums<NS>() * n_items;
    double *Srow = S + (int64_t)t * n_items;
    int32_t *Nrow = N + (int64_t)t * n_items;
    for (int32_t j = blockIdx.x * blockDim.x + threadIdx.x; j < n_items; j += gridDim.x * blockDim.x) {
        int32_t n;
        const double s = sim_of<A, NS>(sp, acc, n_items, j, &n, i, j, ncnt, nsq);
        Srow[j] = j == i ? 0.0 : s;
        Nrow[j] = n;
        for (int a = 0; a < n_sums<NS>(); a++) acc[(int64_t)a * n_items + j] = A(0);
    }
}

template <typename V, typename A, int NS>
rk_status launch_one(const rk_sims_args *a, const V *ival, const V *uval, void *acc_raw, int32_t batch, size_t smem,
                     int sm_count, cudaStream_t st, rk_error *err)
{
    A *acc = static_cast<A *>(acc_raw);
    const int32_t n = a->by_item.n_rows;
    auto kern = k_one_acc<V, A, NS>;
    RK_CUDA_CHECK(err, cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    for (int32_t t0 = 0; t0 < a->tile_rows; t0 += batch) {
        const int32_t b = std::min(batch, a->tile_rows - t0);
        // rater slices: as many as the batch's most rated item has raters, up
        // to about four blocks an SM for it alone (one block of 1024 threads
        // with this much shared memory fits an SM at a time); the slices an
        // item has no rater for end at once
        int64_t most = 1;
        for (int32_t t = t0; t < t0 + b; t++) {
            const int32_t i = a->h_tile_items[t];
            most = std::max<int64_t>(most, a->h_iptr[i + 1] - a->h_iptr[i]);
        }
        const int64_t cap = std::max<int64_t>(1, 4 * (int64_t)sm_count / std::max<int32_t>(1, a->n_chunks));
        const int32_t slices = (int32_t)std::min<int64_t>({most, cap, 65535});
        kern<<<dim3(a->n_chunks, slices, b), kThreads, smem, st>>>(a->by_item.ptr, a->by_item.idx, ival,
                                                                    a->by_user.ptr, a->by_user.idx, uval, a->seg,
                                                                    a->n_chunks, a->chunk, n, a->tile_items, t0, acc);
        RK_LAUNCH_CHECK(err, "k_one_acc");
        const int32_t fx = (n + 255) / 256 < 4 * sm_count ? (n + 255) / 256 : 4 * sm_count;
        k_one_fin<A, NS><<<dim3(fx > 0 ? fx : 1, b), 256, 0, st>>>(n, a->tile_items, t0, a->sp, a->ncnt, a->nsq, acc,
                                                                   a->S, a->N);
        RK_LAUNCH_CHECK(err, "k_one_fin");
    }
    return RK_OK;
}

// The lower triangle of a symmetric tile from its upper triangle (through
// shared memory, so that reads and writes are both along rows); the
// diagonal is 0 (an item is never its own neighbour).
constexpr int kMirror = 32;
__global__ void k_mirror(double *__restrict__ S, int32_t *__restrict__ N, int32_t n)
{
    __shared__ double ts[kMirror][kMirror + 1];
    __shared__ int32_t tn[kMirror][kMirror + 1];
    const int32_t bx = blockIdx.x, by = blockIdx.y; // block column, block row
    if (by < bx) return;
    const int32_t tx = threadIdx.x, ty0 = threadIdx.y;
    for (int32_t ty = ty0; ty < kMirror; ty += blockDim.y) {
        const int32_t r = bx * kMirror + ty, c = by * kMirror + tx; // source (upper): row r < column c
        if (r < n && c < n && r < c) {
            ts[ty][tx] = S[(int64_t)r * n + c];
            tn[ty][tx] = N[(int64_t)r * n + c];
        }
    }
    __syncthreads();
    for (int32_t ty = ty0; ty < kMirror; ty += blockDim.y) {
        const int32_t r = by * kMirror + ty, c = bx * kMirror + tx; // target (lower): column c <= row r
        if (r < n && c < n && c <= r) {
            S[(int64_t)r * n + c] = c < r ? ts[tx][ty] : 0.0;
            N[(int64_t)r * n + c] = c < r ? tn[tx][ty] : 0;
        }
    }
}

// Work of item i's row when each pair is summed once: Σ over raters u of
// the number of u's items after i.  One warp per user.
__global__ void k_sym_cost(const int64_t *__restrict__ uptr, const int32_t *__restrict__ uidx, int32_t n_users,
                           unsigned long long *__restrict__ cost)
{
    const int lane = threadIdx.x % kWarp;
    const int32_t warps = (int32_t)(gridDim.x * blockDim.x / kWarp);
    for (int32_t u = (int32_t)((blockIdx.x * blockDim.x + threadIdx.x) / kWarp); u < n_users; u += warps) {
        const int64_t lo = uptr[u], hi = uptr[u + 1];
        for (int64_t p = lo + lane; p < hi; p += kWarp) atomicAdd(&cost[uidx[p]], (unsigned long long)(hi - p - 1));
    }
}

__global__ void k_iota(int32_t *v, int32_t n)
{
    for (int32_t t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += gridDim.x * blockDim.x) v[t] = t;
}

__global__ void k_segments(const int64_t *__restrict__ uptr, const int32_t *__restrict__ uidx, int32_t n_users,
                           int32_t n_chunks, int32_t C, int64_t *__restrict__ seg)
{
    int32_t u = blockIdx.x * blockDim.x + threadIdx.x;
    if (u >= n_users) return;
    int64_t lo = uptr[u], hi = uptr[u + 1];
    int64_t *out = seg + (int64_t)u * (n_chunks + 1);
    out[0] = lo;
    for (int32_t c = 1; c < n_chunks; c++) {
        // first position with item >= c * C (binary search from the last boundary)
        int64_t a = out[c - 1], b = hi;
        const int32_t bound = c * C;
        while (a < b) {
            int64_t mid = a + (b - a) / 2;
            if (uidx[mid] < bound) a = mid + 1; else b = mid;
        }
        out[c] = a;
    }
    out[n_chunks] = hi;
}

template <typename V, typename A, int NS>
rk_status launch(const rk_sims_args *a, const V *ival, const V *uval, size_t smem, cudaStream_t st, rk_error *err)
{
    auto kern = k_sims<V, A, NS>;
    RK_CUDA_CHECK(err, cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    kern<<<a->tile_rows, kThreads, smem, st>>>(a->by_item.ptr, a->by_item.idx, ival, a->by_user.ptr, a->by_user.idx,
                                               uval, a->seg, a->n_chunks, a->chunk, a->by_item.n_rows,
                                               a->tile_items, a->sym, a->sp, a->ncnt, a->nsq, a->S, a->N);
    RK_LAUNCH_CHECK(err, "k_sims");
    if (a->sym == 1) { // 2: a shared tile, whose parts fill their rows' lower triangles (rk_gpu_sym_exchange)
        const int32_t n = a->by_item.n_rows, nb = (n + kMirror - 1) / kMirror;
        k_mirror<<<dim3(nb, nb), dim3(kMirror, 8), 0, st>>>(a->S, a->N, n);
        RK_LAUNCH_CHECK(err, "k_mirror");
    }
    return RK_OK;
}

} // namespace

// A sums kind without a kernel: a metric-table row the GPU does not know.
static rk_status no_kind(int kind, rk_error *err)
{
    return rk_error_set(err, RK_E_INTERNAL, "the GPU has no co-rating kernel for sums kind %d (metric table)", kind);
}

// grid: RK_GPU_VALUES_DOUBLE, _INT32 or _INT64 (int32 units; n and the two
// words of Σxy)
static size_t col_bytes_of(int kind, int grid)
{
    if (grid == RK_GPU_VALUES_INT64) return (size_t)n_sums<kDotWide>() * sizeof(unsigned);
    return (size_t)rk_sums_count(kind) * (grid ? sizeof(int32_t) : sizeof(double));
}

size_t rk_gpu_sims_col_bytes(int kind, int grid) { return col_bytes_of(kind, grid); }

rk_status rk_gpu_sims_launch(const rk_sims_args *a, int kind, int grid, size_t smem, cudaStream_t st, rk_error *err)
{
    if (a->tile_rows <= 0) return RK_OK;
    if (grid == RK_GPU_VALUES_INT64) // the full-vector metrics only
        return kind == RK_SUMS_DOT
                   ? launch<int32_t, unsigned, kDotWide>(a, a->by_item.q, a->by_user.q, smem, st, err)
                   : no_kind(kind, err);
    if (grid) {
        const int32_t *iq = a->by_item.q, *uq = a->by_user.q;
        switch (kind) {
        case RK_SUMS_PEARSON: return launch<int32_t, int32_t, RK_SUMS_PEARSON>(a, iq, uq, smem, st, err);
        case RK_SUMS_PRODUCTS: return launch<int32_t, int32_t, RK_SUMS_PRODUCTS>(a, iq, uq, smem, st, err);
        case RK_SUMS_DOT: return launch<int32_t, int32_t, RK_SUMS_DOT>(a, iq, uq, smem, st, err);
        case RK_SUMS_DIFF: return launch<int32_t, int32_t, RK_SUMS_DIFF>(a, iq, uq, smem, st, err);
        default: return no_kind(kind, err);
        }
    }
    const double *iv = a->by_item.d, *uv = a->by_user.d;
    switch (kind) {
    case RK_SUMS_PEARSON: return launch<double, double, RK_SUMS_PEARSON>(a, iv, uv, smem, st, err);
    case RK_SUMS_PRODUCTS: return launch<double, double, RK_SUMS_PRODUCTS>(a, iv, uv, smem, st, err);
    case RK_SUMS_DOT: return launch<double, double, RK_SUMS_DOT>(a, iv, uv, smem, st, err);
    case RK_SUMS_DIFF: return launch<double, double, RK_SUMS_DIFF>(a, iv, uv, smem, st, err);
    default: return no_kind(kind, err);
    }
}

size_t rk_gpu_sims_one_bytes(int kind, int grid, int32_t n_items)
{
    return col_bytes_of(kind, grid) * (size_t)(n_items > 0 ? n_items : 1);
}

rk_status rk_gpu_sims_one_launch(const rk_sims_args *a, int kind, int grid, void *acc, int32_t batch, size_t smem,
                                 int sm_count, cudaStream_t st, rk_error *err)
{
    if (a->tile_rows <= 0) return RK_OK;
    if (a->sym) return rk_error_set(err, RK_E_INTERNAL, "one query per kernel has no symmetric tile");
    if (batch < 1 || batch > 65535) return rk_error_set(err, RK_E_INTERNAL, "one query per kernel: batch of %d rows", batch);
    if (grid == RK_GPU_VALUES_INT64)
        return kind == RK_SUMS_DOT ? launch_one<int32_t, unsigned, kDotWide>(
                                         a, a->by_item.q, a->by_user.q, acc, batch, smem, sm_count, st, err)
                                   : no_kind(kind, err);
    if (grid) {
        const int32_t *iq = a->by_item.q, *uq = a->by_user.q;
        switch (kind) {
        case RK_SUMS_PEARSON: return launch_one<int32_t, int32_t, RK_SUMS_PEARSON>(a, iq, uq, acc, batch, smem, sm_count, st, err);
        case RK_SUMS_PRODUCTS: return launch_one<int32_t, int32_t, RK_SUMS_PRODUCTS>(a, iq, uq, acc, batch, smem, sm_count, st, err);
        case RK_SUMS_DOT: return launch_one<int32_t, int32_t, RK_SUMS_DOT>(a, iq, uq, acc, batch, smem, sm_count, st, err);
        case RK_SUMS_DIFF: return launch_one<int32_t, int32_t, RK_SUMS_DIFF>(a, iq, uq, acc, batch, smem, sm_count, st, err);
        default: return no_kind(kind, err);
        }
    }
    const double *iv = a->by_item.d, *uv = a->by_user.d;
    switch (kind) {
    case RK_SUMS_PEARSON: return launch_one<double, double, RK_SUMS_PEARSON>(a, iv, uv, acc, batch, smem, sm_count, st, err);
    case RK_SUMS_PRODUCTS: return launch_one<double, double, RK_SUMS_PRODUCTS>(a, iv, uv, acc, batch, smem, sm_count, st, err);
    case RK_SUMS_DOT: return launch_one<double, double, RK_SUMS_DOT>(a, iv, uv, acc, batch, smem, sm_count, st, err);
    case RK_SUMS_DIFF: return launch_one<double, double, RK_SUMS_DIFF>(a, iv, uv, acc, batch, smem, sm_count, st, err);
    default: return no_kind(kind, err);
    }
}

// scratch: cost keys in and out, values in, then cub's own
static size_t sym_order_parts(int32_t n, size_t *cub_bytes)
{
    *cub_bytes = 0;
    cub::DeviceRadixSort::SortPairsDescending(NULL, *cub_bytes, (const unsigned long long *)NULL,
                                              (unsigned long long *)NULL, (const int32_t *)NULL, (int32_t *)NULL, n);
    return 2 * (size_t)n * sizeof(unsigned long long) + (size_t)n * sizeof(int32_t) + 256;
}

size_t rk_gpu_sym_order_bytes(int32_t n_items)
{
    size_t cub_bytes;
    size_t own = sym_order_parts(n_items, &cub_bytes);
    return own + cub_bytes;
}

rk_status rk_gpu_sym_order_launch(const rk_dev_csr *by_user, int32_t n_items, void *scratch, size_t bytes,
                                  int32_t *order, cudaStream_t st, rk_error *err)
{
    if (n_items <= 0) return RK_OK;
    size_t cub_bytes;
    size_t own = sym_order_parts(n_items, &cub_bytes);
    if (bytes < own + cub_bytes) return rk_error_set(err, RK_E_INTERNAL, "sym order: %zu bytes of scratch, %zu needed", bytes, own + cub_bytes);
    unsigned long long *key_in = (unsigned long long *)scratch, *key_out = key_in + n_items;
    int32_t *val_in = (int32_t *)(key_out + n_items);
    void *cub_tmp = (void *)(((uintptr_t)(val_in + n_items) + 255) & ~(uintptr_t)255);
    RK_CUDA_CHECK(err, cudaMemsetAsync(key_in, 0, (size_t)n_items * sizeof *key_in, st));
    if (by_user->n_rows > 0) {
        k_sym_cost<<<1024, 256, 0, st>>>(by_user->ptr, by_user->idx, by_user->n_rows, key_in);
        RK_LAUNCH_CHECK(err, "k_sym_cost");
    }
    k_iota<<<(n_items + 255) / 256, 256, 0, st>>>(val_in, n_items);
    RK_LAUNCH_CHECK(err, "k_iota");
    // stable: equal costs keep ascending item order
    RK_CUDA_CHECK(err, cub::DeviceRadixSort::SortPairsDescending(cub_tmp, cub_bytes, key_in, key_out, val_in, order,
                                                                 n_items, 0, 64, st));
    return RK_OK;
}

rk_status rk_gpu_segments_launch(const rk_dev_csr *by_user, int32_t n_chunks, int32_t chunk, int64_t *seg,
                                 cudaStream_t st, rk_error *err)
{
    if (by_user->n_rows <= 0) return RK_OK;
    int threads = 256, blocks = (by_user->n_rows + threads - 1) / threads;
    k_segments<<<blocks, threads, 0, st>>>(by_user->ptr, by_user->idx, by_user->n_rows, n_chunks, chunk, seg);
    RK_LAUNCH_CHECK(err, "k_segments");
    return RK_OK;
}
