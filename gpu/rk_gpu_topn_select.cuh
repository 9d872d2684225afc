// rk_gpu_topn_select.cuh — block-wide top-N selection over fixed-point
// scores with the tie rule of CONTRACT.md §5 (higher score first, equal scores by
// ascending item), shared by both top-N routes (rk_gpu_topn.cu).
//
// The candidates are read through a functor: key(e) (a uint64 score, 0 = not
// a candidate) and idx(e) (the item) for e in [0, C).  A radix select, 8 bits
// a pass from the highest byte any key uses, finds the threshold of the N-th
// largest key; entries above it are all taken, and among the keys equal to it
// the lowest items are taken by a second radix select on the inverted item.
// The (at most N) winners are sorted by a bitonic network in shared memory.
// Only gpu/ includes this file.
#ifndef RK_GPU_TOPN_SELECT_CUH
#define RK_GPU_TOPN_SELECT_CUH

#include <stdint.h>

struct rk_sel_shared {
    unsigned int hist[256];
    unsigned long long prefix, maxkey;
    int need, done, count, total;
};

// The sort buffer of the selection for N: p2 = N rounded up to a power of
// two keys (uint64) then p2 items (int32), in rk_sel_sort_bytes(N) bytes of
// dynamic shared memory (a multiple of 16, so that what follows is aligned).
__host__ __device__ inline int rk_sel_p2(int n)
{
    int p2 = 1;
    while (p2 < n) p2 <<= 1;
    return p2;
}
__host__ __device__ inline size_t rk_sel_sort_bytes(int n)
{
    return ((size_t)rk_sel_p2(n) * (sizeof(uint64_t) + sizeof(int32_t)) + 15) & ~(size_t)15;
}

// Threshold of the m-th largest nonzero key (1 <= m <= number of nonzero
// keys).  Returns T and *eq: when *eq is 0, exactly m keys are >= T; else
// the keys > T number m - *eq and *eq of the keys == T are still wanted.
template <class KeyF>
__device__ uint64_t rk_sel_threshold(const KeyF &key, int C, int m, uint64_t maxkey, rk_sel_shared *sh, int *eq)
{
    int top = 0;
    while (top < 56 && (maxkey >> (top + 8)) != 0) top += 8;
    uint64_t prefix = 0, mask = 0;
    int need = m;
    for (int shift = top; shift >= 0; shift -= 8) {
        for (int b = threadIdx.x; b < 256; b += blockDim.x) sh->hist[b] = 0;
        __syncthreads();
        for (int e = threadIdx.x; e < C; e += blockDim.x) {
            const uint64_t k = key(e);
            if (k != 0 && (k & mask) == prefix) atomicAdd(&sh->hist[(k >> shift) & 255u], 1u);
        }
        __syncthreads();
        if (threadIdx.x < 32) {
            // warp 0 finds the bucket: lane l sums buckets 255 - 8l .. 248 - 8l,
            // a scan over the lanes from the top gives the counts above each
            const int lane = threadIdx.x;
            int own = 0;
            for (int d = 255 - 8 * lane; d > 247 - 8 * lane; d--) own += (int)sh->hist[d];
            int incl = own;
            for (int o = 1; o < 32; o <<= 1) {
                const int up = __shfl_up_sync(0xffffffffu, incl, o);
                if (lane >= o) incl += up;
            }
            const unsigned hit = __ballot_sync(0xffffffffu, incl >= need);
            const int first = __ffs(hit) - 1; // the lane holding the need-th key
            if (lane == first) {
                int cum = incl - own;
                for (int d = 255 - 8 * lane; d > 247 - 8 * lane; d--) {
                    const int h = (int)sh->hist[d];
                    if (cum + h >= need) {
                        sh->prefix = prefix | ((uint64_t)d << shift);
                        sh->need = need - cum;
                        sh->done = h == need - cum; // the whole bucket is taken
                        break;
                    }
                    cum += h;
                }
            }
        }
        __syncthreads();
        prefix = sh->prefix;
        need = sh->need;
        mask |= (uint64_t)255 << shift;
        const int done = sh->done;
        __syncthreads(); // everyone has read sh before it is written again
        if (done) {
            *eq = 0; // every key carrying the prefix, and all above it: keys >= prefix
            return prefix;
        }
    }
    *eq = need; // prefix is the exact m-th key
    return prefix;
}

// Select the top n of C candidates into out_item/out_score (best first);
// returns the count.  sort_key/sort_idx: rk_sel_sort_bytes(n) of shared memory.
template <class Cand>
__device__ int rk_sel_topn(const Cand &cand, int C, int n, rk_sel_shared *sh, uint64_t *sort_key, int32_t *sort_idx,
                           int32_t *out_item, uint64_t *out_score)
{
    // positives and the largest key
    int local = 0;
    unsigned long long lmax = 0;
    if (threadIdx.x == 0) {
        sh->total = 0;
        sh->maxkey = 0;
        sh->count = 0;
    }
    __syncthreads();
    for (int e = threadIdx.x; e < C; e += blockDim.x) {
        const uint64_t k = cand.key(e);
        local += k != 0;
        lmax = k > lmax ? k : lmax;
    }
    for (int o = 16; o > 0; o >>= 1) {
        local += __shfl_down_sync(0xffffffffu, local, o);
        const unsigned long long other = __shfl_down_sync(0xffffffffu, lmax, o);
        lmax = other > lmax ? other : lmax;
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&sh->total, local);
        atomicMax(&sh->maxkey, lmax);
    }
    __syncthreads();
    const int P = sh->total;
    const uint64_t maxkey = sh->maxkey;
    const int m = P < n ? P : n;
    if (m == 0) return 0;

    uint64_t T = 1; // every candidate key is >= 1
    int eq = 0;
    uint64_t T2 = 0;
    if (P > n) {
        auto key = [&](int e) { return (uint64_t)cand.key(e); };
        T = rk_sel_threshold(key, C, m, maxkey, sh, &eq);
        if (eq > 0) {
            // ties at T: the eq lowest items, found as the eq largest inverted items
            auto key2 = [&](int e) {
                return cand.key(e) == T ? ((uint64_t)1 << 32) | (uint64_t)(0xffffffffu - (uint32_t)cand.idx(e))
                                        : (uint64_t)0;
            };
            int eq2;
            T2 = rk_sel_threshold(key2, C, eq, ((uint64_t)1 << 33) - 1, sh, &eq2);
            // the inverted items are unique: T2 is either an exact key or a prefix; keys2 >= T2 number eq
        }
    }
    for (int e = threadIdx.x; e < C; e += blockDim.x) {
        const uint64_t k = cand.key(e);
        if (k == 0) continue;
        bool take;
        if (P <= n) take = true;
        else if (eq == 0) take = k >= T;
        else take = k > T || (k == T && (((uint64_t)1 << 32) | (uint64_t)(0xffffffffu - (uint32_t)cand.idx(e))) >= T2);
        if (take) {
            const int pos = atomicAdd(&sh->count, 1);
            sort_key[pos] = k;
            sort_idx[pos] = cand.idx(e);
        }
    }
    __syncthreads();
    int p2 = 1;
    while (p2 < m) p2 <<= 1;
    for (int a = m + threadIdx.x; a < p2; a += blockDim.x) {
        sort_key[a] = 0;
        sort_idx[a] = 0x7fffffff;
    }
    // bitonic sort, best first: (key descending, item ascending)
    for (int size = 2; size <= p2; size <<= 1) {
        for (int stride = size >> 1; stride > 0; stride >>= 1) {
            __syncthreads();
            for (int a = threadIdx.x; a < p2; a += blockDim.x) {
                const int b = a ^ stride;
                if (b <= a) continue;
                const bool up = (a & size) == 0;
                const uint64_t ka = sort_key[a], kb = sort_key[b];
                const int32_t ia = sort_idx[a], ib = sort_idx[b];
                const bool b_first = kb > ka || (kb == ka && ib < ia);
                const bool a_first = ka > kb || (ka == kb && ia < ib);
                if (up ? b_first : a_first) {
                    sort_key[a] = kb;
                    sort_key[b] = ka;
                    sort_idx[a] = ib;
                    sort_idx[b] = ia;
                }
            }
        }
    }
    __syncthreads();
    for (int r = threadIdx.x; r < m; r += blockDim.x) {
        out_item[r] = sort_idx[r];
        out_score[r] = sort_key[r];
    }
    __syncthreads(); // the shared state and the sort buffer are free again
    return m;
}

#endif // RK_GPU_TOPN_SELECT_CUH
