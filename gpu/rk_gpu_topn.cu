// Top-N recommendations on the GPU (CONTRACT.md §5), from neighbour lists that are
// on the device: the fixed-point weights, the two routes, the batch driver.
//
// kernel route: persistent blocks take users from a counter.  A block adds
// the weights q of its user's lists into a dense accumulator of n_items
// uint64 (in shared memory when it fits, else in a global slot of its own),
// remembers the items it touched, zeroes the items the user rated, compacts
// the touched items' sums into candidates and selects the top N
// (rk_gpu_topn_select.cuh).  Integer sums: any order gives the CPU's values.
// spgemm route: cuSPARSE SpGEMM (rk_gpu_spgemm.cu) makes a batch's scores as
// a CSR matrix of exact doubles; one block a row masks the rated items and
// selects.
// Users go in batches; a batch's results come back into pinned memory and
// reach the sink while the next batch runs.
#include "rk_gpu_internal.h"
#include "rk_gpu_topn_select.cuh"

#include <stdio.h>

namespace {

constexpr int kAccThreads = 1024;
constexpr int kRowThreads = 256;

__global__ void k_fixed(const int32_t *__restrict__ len, const float *__restrict__ sim, int32_t n_items, int32_t k,
                        uint64_t *__restrict__ q)
{
    const int64_t cells = (int64_t)n_items * k;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < cells; t += (int64_t)gridDim.x * blockDim.x) {
        const int32_t i = (int32_t)(t / k), r = (int32_t)(t % k);
        const float s = sim[t];
        // rk_topn_fixed: round(s · 2^32), ties to even, negatives in two's complement
        q[t] = (r < len[i] && (s > 0.0f || s < 0.0f)) ? (uint64_t)__double2ll_rn((double)s * RK_TOPN_ONE) : 0ull;
    }
}

struct topn_out {
    int32_t *len, *item;
    uint64_t *score;
    int32_t n;
};

// The kernel route, part A: the scores of each user of the batch, compacted
// into its row of the batch's candidate matrix (key = the fixed-point sum,
// col = the item; row b at coff[b], ccnt[b] entries).  Blocks are persistent,
// one a slot of the global scratch; SMEM: the accumulator lives in shared
// memory (one block an SM at ML-20M size), else in the block's global slot.
// SIGNED (lists with negative weights): a sum can come back to 0, so the
// items met are marked in the slot's bitmap g_seen instead of told by a
// zero sum, and only positive sums become candidates (rk_topn.c's
// user_topn_signed).
// WORDS (unsigned sums below 2^63, kWords): each sum is kept in two 32-bit
// words, lo[c] and hi[c] (the bytes of one uint64): a weight adds its low
// word to lo[c] and its high word, plus the carry out of lo, to hi[c] — the
// exact 64-bit sum of the 64-bit atomics, which shared memory runs about
// seven times slower (BENCHMARKS.md).  hi stays below 2^31, so its top bit
// marks the items met: the first add to an item finds lo at 0 and sets it
// (an exact wrap of lo to 0 later finds it set).
enum { kPlain = 0, kSigned = 1, kWords = 2 };
template <bool SMEM, int MODE>
__global__ void __launch_bounds__(kAccThreads, 1)
    k_topn_acc(const int64_t *__restrict__ uptr, const int32_t *__restrict__ uidx, rk_dev_lists L,
               const int32_t *__restrict__ users, int32_t count, uint64_t *__restrict__ g_acc,
               int32_t *__restrict__ g_touched, unsigned *__restrict__ g_seen, uint64_t *__restrict__ ckey,
               int32_t *__restrict__ ccol, const int64_t *__restrict__ coff, int32_t *__restrict__ ccnt)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    __shared__ int s_nt, s_nc;
    const int32_t n_items = L.n_items, k = L.k;
    const int64_t slot = blockIdx.x;
    uint64_t *acc = SMEM ? reinterpret_cast<uint64_t *>(smem_raw) : g_acc + slot * n_items;
    constexpr bool SIGNED = MODE == kSigned, WORDS = MODE == kWords;
    unsigned *lo = reinterpret_cast<unsigned *>(acc), *hi = lo + n_items; // WORDS: the two words
    constexpr unsigned kMet = 0x80000000u;
    int32_t *touched = g_touched + slot * n_items;
    unsigned *seen = SIGNED ? g_seen + slot * ((n_items + 31) / 32) : NULL;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, n_warps = blockDim.x >> 5;
    if (SMEM) {
        for (int32_t c = threadIdx.x; c < n_items; c += blockDim.x) acc[c] = 0;
    }
    if (threadIdx.x == 0) s_nt = s_nc = 0;
    __syncthreads();
    for (int32_t b = blockIdx.x; b < count; b += gridDim.x) {
        const int32_t u = users[b];
        const int64_t p0 = uptr[u], n_u = uptr[u + 1] - p0;
        // a warp a rated item, its lanes over the item's list; the next item's
        // index and length are loaded before this one's atomics
        int64_t p = warp;
        int32_t j = p < n_u ? uidx[p0 + p] : 0;
        int32_t len = p < n_u ? L.len[j] : 0;
        while (p < n_u) {
            const int64_t pn = p + n_warps;
            const int32_t jn = pn < n_u ? uidx[p0 + pn] : 0;
            for (int32_t r = lane; r < len; r += 32) {
                const int64_t at = (int64_t)j * k + r;
                const uint64_t w = L.q[at];
                if (w == 0) continue; // below 2^-33: counts as 0, as on the CPU
                const int32_t c = L.nbr[at];
                if (SIGNED) {
                    atomicAdd((unsigned long long *)&acc[c], (unsigned long long)w);
                    const unsigned bit = 1u << (c & 31);
                    if (!(atomicOr(&seen[c >> 5], bit) & bit)) touched[atomicAdd(&s_nt, 1)] = c;
                } else if (WORDS) {
                    // rk_gpu_sims.cu's add_wide, but the high word is left alone when
                    // nothing goes to it, as for most weights here; the similarity
                    // kernel measured slower with that test (0.0241 -> 0.0278 s, H200)
                    const unsigned wl = (unsigned)w, old = atomicAdd(&lo[c], wl);
                    const unsigned up = (unsigned)(w >> 32) + (old + wl < old ? 1u : 0u);
                    if (old == 0u && !(atomicOr(&hi[c], kMet) & kMet)) touched[atomicAdd(&s_nt, 1)] = c;
                    if (up != 0u) atomicAdd(&hi[c], up);
                } else if (atomicAdd((unsigned long long *)&acc[c], (unsigned long long)w) == 0ull) {
                    touched[atomicAdd(&s_nt, 1)] = c;
                }
            }
            const int32_t lenn = pn < n_u ? L.len[jn] : 0;
            p = pn;
            j = jn;
            len = lenn;
        }
        __syncthreads();
        for (int64_t q = threadIdx.x; q < n_u; q += blockDim.x) { // never a rated item
            const int32_t c = uidx[p0 + q];
            if (WORDS) lo[c] = hi[c] = 0u;
            else acc[c] = 0;
        }
        __syncthreads();
        const int nt = s_nt;
        const int64_t base = coff[b];
        for (int t = threadIdx.x; t < nt; t += blockDim.x) {
            const int32_t c = touched[t];
            uint64_t v;
            if (WORDS) {
                v = (uint64_t)(hi[c] & ~kMet) << 32 | lo[c];
                lo[c] = hi[c] = 0u;
            } else {
                v = acc[c];
                acc[c] = 0;
            }
            if (SIGNED) seen[c >> 5] = 0u; // every item of the word is in touched: cleared by one of them
            if (SIGNED ? (int64_t)v > 0 : v != 0) {
                const int pos = atomicAdd(&s_nc, 1);
                ckey[base + pos] = v;
                ccol[base + pos] = c;
            }
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            ccnt[b] = s_nc;
            s_nt = s_nc = 0;
        }
        __syncthreads();
    }
}

struct csr_cand {
    const uint64_t *k;
    const int32_t *col;
    __device__ uint64_t key(int e) const { return k[e]; }
    __device__ int32_t idx(int e) const { return col[e]; }
};

__device__ void select_row(const uint64_t *key, const int32_t *col, int32_t C, int32_t b, topn_out out)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    __shared__ rk_sel_shared sh;
    uint64_t *sort_key = reinterpret_cast<uint64_t *>(smem_raw);
    int32_t *sort_idx = reinterpret_cast<int32_t *>(sort_key + rk_sel_p2(out.n));
    csr_cand cand{key, col};
    const int m = rk_sel_topn(cand, C, out.n, &sh, sort_key, sort_idx, out.item + (int64_t)b * out.n,
                              out.score + (int64_t)b * out.n);
    if (threadIdx.x == 0) out.len[b] = m;
}

// The kernel route, part B: one small block a user selects from its row.
__global__ void __launch_bounds__(kRowThreads)
    k_topn_select(const uint64_t *__restrict__ ckey, const int32_t *__restrict__ ccol,
                  const int64_t *__restrict__ coff, const int32_t *__restrict__ ccnt, topn_out out)
{
    const int32_t b = blockIdx.x;
    select_row(ckey + coff[b], ccol + coff[b], ccnt[b], b, out);
}

// The spgemm route's selection: row b of the batch's score matrix; the exact
// double sums become integer keys in place, 0 for the items the user rated.
__global__ void __launch_bounds__(kRowThreads)
    k_topn_rows(const int64_t *__restrict__ uptr, const int32_t *__restrict__ uidx, const int32_t *__restrict__ users,
                const int32_t *__restrict__ cptr, const int32_t *__restrict__ ccol, double *cval, topn_out out)
{
    const int b = blockIdx.x;
    const int32_t u = users[b];
    const int64_t lo = uptr[u], hi = uptr[u + 1];
    const int32_t e0 = cptr[b], C = cptr[b + 1] - e0;
    uint64_t *key = reinterpret_cast<uint64_t *>(cval + e0);
    for (int e = threadIdx.x; e < C; e += blockDim.x) {
        const int32_t c = ccol[e0 + e];
        int64_t a = lo, z = hi;
        while (a < z) {
            const int64_t mid = (a + z) >> 1;
            if (uidx[mid] < c) a = mid + 1; else z = mid;
        }
        const bool rated = a < hi && uidx[a] == c;
        const double v = cval[e0 + e];
        key[e] = rated || !(v > 0.0) ? 0ull : (uint64_t)v;
    }
    __syncthreads();
    select_row(key, ccol + e0, C, b, out);
}

// The largest weight of the lists (unsigned lists: the bound of kWords).
__global__ void k_qmax(const int32_t *__restrict__ len, const uint64_t *__restrict__ q, int32_t n_items, int32_t k,
                       unsigned long long *__restrict__ out)
{
    const int64_t cells = (int64_t)n_items * k;
    unsigned long long m = 0;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < cells; t += (int64_t)gridDim.x * blockDim.x)
        if ((int32_t)(t % k) < len[t / k]) m = max(m, (unsigned long long)q[t]);
    for (int o = 16; o > 0; o >>= 1) m = max(m, __shfl_down_sync(0xffffffffu, m, o));
    if ((threadIdx.x & 31) == 0 && m != 0) atomicMax(out, m);
}

// Intermediate products of each user of the request: Σ len[j] over its items.
__global__ void k_products(const int64_t *__restrict__ uptr, const int32_t *__restrict__ uidx,
                           const int32_t *__restrict__ len, const int32_t *__restrict__ users, int64_t n,
                           int64_t *__restrict__ prod)
{
    const int lane = threadIdx.x & 31;
    const int64_t warps = (int64_t)gridDim.x * blockDim.x / 32;
    for (int64_t b = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32; b < n; b += warps) {
        const int32_t u = users[b];
        int64_t s = 0;
        for (int64_t p = uptr[u] + lane; p < uptr[u + 1]; p += 32) s += len[uidx[p]];
        for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
        if (lane == 0) prod[b] = s;
    }
}

// Pinned host buffers of one batch's results.
struct host_batch {
    int32_t *len = NULL, *item = NULL;
    uint64_t *score = NULL;
    cudaEvent_t ready = NULL, k0 = NULL, km = NULL, k1 = NULL; // km: scores done, selection next
    int64_t first = 0, count = 0;
    ~host_batch()
    {
        if (ready != NULL) cudaEventSynchronize(ready);
        cudaFreeHost(len);
        cudaFreeHost(item);
        cudaFreeHost(score);
        if (ready != NULL) cudaEventDestroy(ready);
        if (k0 != NULL) cudaEventDestroy(k0);
        if (km != NULL) cudaEventDestroy(km);
        if (k1 != NULL) cudaEventDestroy(k1);
    }
};

struct spgemm_guard {
    rk_spgemm *p = NULL;
    ~spgemm_guard() { rk_spgemm_free(p); }
};

} // namespace

rk_status rk_gpu_fixed_launch(const int32_t *len, const float *sim, int32_t n_items, int32_t k, uint64_t *q,
                              cudaStream_t st, rk_error *err)
{
    if ((int64_t)n_items * k == 0) return RK_OK;
    k_fixed<<<1024, 256, 0, st>>>(len, sim, n_items, k, q);
    RK_LAUNCH_CHECK(err, "k_fixed");
    return RK_OK;
}

namespace {

// One top-N call on the device: its state and a method per stage.  The
// members that hold device, pinned or cuSPARSE memory are declared in the
// order of their release (the last first), so that an error in any stage
// returns and the destructor cleans up.
struct topn_call {
    const rk_model *m;
    const rk_topn_dev_in *in;
    const rk_topn_opts *o;
    const rk_gpu_opts *g;
    cudaStream_t st;
    rk_topn_stats *ts;
    double t_call = 0;
    dev_mem mem;
    std::vector<int32_t> all; // every user with a rating, when the request names none
    stager plain;             // plain copies: the request is small
    int32_t n_items = 0, n = 0;
    rk_gpu_topn_route route = RK_GPU_TOPN_KERNEL;
    const int32_t *users = NULL;
    int64_t n_users = 0;
    int32_t *d_users = NULL;
    std::vector<int64_t> prod; // each user's list entries to sum
    std::vector<int64_t> cut;  // batch boundaries in the request
    int64_t max_count = 0;
    topn_out dout[2];
    host_batch hb[2];
    // the route's own state
    size_t sort_bytes = 0, acc_smem = 0;
    bool smem_acc = false;
    bool words = false;      // unsigned sums in two 32-bit words (every sum below 2^63)
    int grid = 0;
    uint64_t *g_acc = NULL, *d_ckey = NULL;
    int32_t *g_touched = NULL, *d_ccol = NULL, *d_ccnt = NULL;
    unsigned *g_seen = NULL; // signed lists: a bitmap of the items met, per slot
    int64_t *d_coff = NULL;
    std::vector<int64_t> coff;
    spgemm_guard sg;

    rk_status plan_users(rk_error *err);
    rk_status count_products(rk_error *err);
    void plan_batches(void);
    rk_status alloc_batches(rk_error *err);
    rk_status kernel_state(rk_error *err);
    rk_status launch(size_t t, rk_error *err);
    // the accumulation kernel for the route's accumulator and the lists' sign
    decltype(&k_topn_acc<true, kPlain>) acc_kernel(void) const
    {
        if (in->L.neg) return smem_acc ? k_topn_acc<true, kSigned> : k_topn_acc<false, kSigned>;
        if (words) return smem_acc ? k_topn_acc<true, kWords> : k_topn_acc<false, kWords>;
        return smem_acc ? k_topn_acc<true, kPlain> : k_topn_acc<false, kPlain>;
    }
    rk_status stream(rk_error *err);
};

// N, the route, the users of the request; the SpGEMM route's exactness.
rk_status topn_call::plan_users(rk_error *err)
{
    n_items = in->L.n_items;
    n = o->n < n_items ? o->n : (n_items > 0 ? n_items : 1);
    const rk_csr *U = &m->by_user;
    route = g != NULL ? g->topn_route : RK_GPU_TOPN_AUTO;
    if (route == RK_GPU_TOPN_AUTO) route = RK_GPU_TOPN_KERNEL;
    if (n > RK_GPU_MAX_TOPN)
        return rk_error_set(err, RK_E_ARG, "GPU top-N takes N <= %d (got %d)", RK_GPU_MAX_TOPN, n);
    users = o->users;
    n_users = o->n_users;
    if (users == NULL) {
        all.reserve((size_t)U->n_rows);
        for (int32_t u = 0; u < U->n_rows; u++)
            if (U->ptr[u + 1] > U->ptr[u]) all.push_back(u);
        users = all.data();
        n_users = (int64_t)all.size();
    }
    ts->users = n_users;
    if (n_users == 0 || n_items == 0) return RK_OK;
    if (route == RK_GPU_TOPN_SPGEMM && in->L.neg)
        return rk_error_set(err, RK_E_ARG, "--gpu-topn spgemm sums the lists' weights unsigned, and these lists "
                                           "hold negative similarities (--negative yes): use --gpu-topn kernel");
    if (route == RK_GPU_TOPN_SPGEMM) {
        int64_t max_deg = 0;
        for (int32_t u = 0; u < U->n_rows; u++) max_deg = std::max(max_deg, U->ptr[u + 1] - U->ptr[u]);
        if (max_deg >= ((int64_t)1 << 21))
            return rk_error_set(err, RK_E_ARG, "--gpu-topn spgemm sums in double, exact only for users with fewer "
                                               "than 2^21 ratings (one has %lld): use --gpu-topn kernel",
                                (long long)max_deg);
    }
    snprintf(ts->path, sizeof ts->path, "gpu %s", route == RK_GPU_TOPN_SPGEMM ? "spgemm" : "kernel");
    return RK_OK;
}

// The users up, and each user's list entries to sum (the work of its row).
rk_status topn_call::count_products(rk_error *err)
{
    RK_FORWARD(upload(&d_users, users, (size_t)n_users, mem, plain, st, err));
    int64_t *d_prod;
    RK_FORWARD(mem.alloc(&d_prod, (size_t)n_users, err));
    k_products<<<1024, 256, 0, st>>>(in->R.ptr, in->R.idx, in->L.len, d_users, n_users, d_prod);
    RK_LAUNCH_CHECK(err, "k_products");
    unsigned long long *d_qmax, qmax = 0;
    if (!in->L.neg) { // unsigned lists: their largest weight bounds the sums (kWords)
        RK_FORWARD(mem.alloc(&d_qmax, 1, err));
        RK_CUDA_CHECK(err, cudaMemsetAsync(d_qmax, 0, sizeof *d_qmax, st));
        k_qmax<<<1024, 256, 0, st>>>(in->L.len, in->L.q, in->L.n_items, in->L.k, d_qmax);
        RK_LAUNCH_CHECK(err, "k_qmax");
        RK_CUDA_CHECK(err, cudaMemcpyAsync(&qmax, d_qmax, sizeof qmax, cudaMemcpyDeviceToHost, st));
    }
    prod.resize((size_t)n_users);
    RK_CUDA_CHECK(err, cudaMemcpyAsync(prod.data(), d_prod, (size_t)n_users * sizeof(int64_t),
                                       cudaMemcpyDeviceToHost, st));
    RK_CUDA_CHECK(err, cudaStreamSynchronize(st));
    int64_t updates = 0;
    for (int64_t b = 0; b < n_users; b++) updates += prod[(size_t)b];
    ts->updates = updates;
    // a user's sum for an item adds at most one weight per rated item: below
    // 2^62 with room, hi's top bit is free for the "met" mark
    words = !in->L.neg && (double)rk_csr_longest_row(&m->by_user) * (double)qmax < 4611686018427387904.0;
    return RK_OK;
}

// Batches: about 4 MB of results (34k users at N = 10), twice over (device
// and pinned host): small enough that the sink writes one batch while the
// next is computed, large enough to fill the GPU; a batch's products or
// candidates also fit the route's share of the budget.
void topn_call::plan_batches(void)
{
    const size_t per_user = (size_t)n * (sizeof(int32_t) + sizeof(uint64_t)) + sizeof(int32_t);
    int64_t B = g != NULL && g->topn_batch > 0 ? g->topn_batch : (int64_t)(((size_t)4 << 20) / per_user);
    if (!(g != NULL && g->topn_batch > 0)) B = std::max<int64_t>(B, 4096);
    B = std::max<int64_t>(1, std::min<int64_t>(B, 1 << 17));
    B = std::min(B, n_users);
    cut.assign(1, 0);
    int64_t lim = RK_SPGEMM_MAX_PRODUCTS;
    if (route == RK_GPU_TOPN_SPGEMM && in->budget > 0) {
        // the largest product count whose buffers fit in a third of the budget
        int64_t lo = 1, hi = lim;
        while (lo < hi) {
            const int64_t mid = lo + (hi - lo + 1) / 2;
            if (rk_spgemm_bytes(mid, (int32_t)B, n_items) <= in->budget / 3) lo = mid; else hi = mid - 1;
        }
        lim = lo;
    }
    if (route == RK_GPU_TOPN_KERNEL) {
        // the candidate matrix of a batch (a user holds at most min(products, n_items)
        // candidates of 12 bytes): a quarter of the budget, at most 4 GiB
        lim = (int64_t)(std::min<size_t>(in->budget / 4, (size_t)4 << 30) / 12);
        lim = std::max<int64_t>(lim, n_items);
    }
    int64_t c = 0, sum = 0;
    for (int64_t b = 0; b < n_users; b++) {
        const int64_t w = route == RK_GPU_TOPN_KERNEL ? std::min<int64_t>(prod[(size_t)b], n_items)
                                                      : prod[(size_t)b];
        if (c == B || (c > 0 && sum + w > lim)) {
            cut.push_back(b);
            c = 0;
            sum = 0;
        }
        c++;
        sum += w;
    }
    cut.push_back(n_users);
    max_count = 0;
    for (size_t t = 0; t + 1 < cut.size(); t++) max_count = std::max(max_count, cut[t + 1] - cut[t]);
}

// Device outputs and pinned host copies, two of each.
rk_status topn_call::alloc_batches(rk_error *err)
{
    for (int x = 0; x < 2; x++) {
        dout[x].n = n;
        RK_FORWARD(mem.alloc(&dout[x].len, (size_t)max_count, err));
        RK_FORWARD(mem.alloc(&dout[x].item, (size_t)max_count * n, err));
        RK_FORWARD(mem.alloc(&dout[x].score, (size_t)max_count * n, err));
        RK_CUDA_CHECK(err, cudaHostAlloc((void **)&hb[x].len, (size_t)max_count * sizeof(int32_t), cudaHostAllocDefault));
        RK_CUDA_CHECK(err, cudaHostAlloc((void **)&hb[x].item, (size_t)max_count * n * sizeof(int32_t),
                                         cudaHostAllocDefault));
        RK_CUDA_CHECK(err, cudaHostAlloc((void **)&hb[x].score, (size_t)max_count * n * sizeof(uint64_t),
                                         cudaHostAllocDefault));
        // waited on by blocking, not spinning: with several GPUs, the host
        // threads of the others and the writer need the cores
        RK_CUDA_CHECK(err, cudaEventCreateWithFlags(&hb[x].ready, cudaEventDisableTiming | cudaEventBlockingSync));
        RK_CUDA_CHECK(err, cudaEventCreate(&hb[x].k0));
        RK_CUDA_CHECK(err, cudaEventCreate(&hb[x].km));
        RK_CUDA_CHECK(err, cudaEventCreate(&hb[x].k1));
    }
    return RK_OK;
}

// The kernel route's accumulators, touched lists and candidate matrix.
rk_status topn_call::kernel_state(rk_error *err)
{
    acc_smem = smem_acc ? (size_t)n_items * sizeof(uint64_t) : 0;
    auto kern = acc_kernel();
    RK_CUDA_CHECK(err, cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)acc_smem));
    int per_sm = 0;
    RK_CUDA_CHECK(err, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, kAccThreads, acc_smem));
    grid = std::max(1, per_sm) * in->sm_count;
    grid = (int)std::min<int64_t>(grid, max_count);
    // every block holds a slot of n_items touched indices (and sums, when
    // they are not in shared memory): 264 slots of 2M items would take
    // 6.3 GB, so the slots get at most half the budget (candidates a quarter)
    const size_t slot_bytes = (size_t)n_items * (sizeof(int32_t) + (smem_acc ? 0 : sizeof(uint64_t)));
    const int64_t fit = (int64_t)((in->budget / 2) / slot_bytes);
    if (fit < 1)
        return rk_error_set(err, RK_E_GPU,
                            "GPU top-N needs %.1f MB of device memory for one accumulator of %d items "
                            "(%.1f MB left to it): raise --gpu-memory or use --device cpu",
                            2.0 * (double)slot_bytes / 1048576.0, n_items, (double)in->budget / 1048576.0);
    grid = (int)std::min<int64_t>(grid, fit);
    int64_t cand = 0; // the largest batch's candidates
    for (size_t t = 0; t + 1 < cut.size(); t++) {
        int64_t sum = 0;
        for (int64_t b = cut[t]; b < cut[t + 1]; b++) sum += std::min<int64_t>(prod[(size_t)b], n_items);
        cand = std::max(cand, sum);
    }
    RK_FORWARD(mem.alloc(&g_touched, (size_t)grid * n_items, err));
    if (in->L.neg) {
        const size_t words = (size_t)grid * (size_t)((n_items + 31) / 32);
        RK_FORWARD(mem.alloc(&g_seen, words, err));
        RK_CUDA_CHECK(err, cudaMemsetAsync(g_seen, 0, words * sizeof(unsigned), st));
    }
    RK_FORWARD(mem.alloc(&d_ckey, (size_t)cand, err));
    RK_FORWARD(mem.alloc(&d_ccol, (size_t)cand, err));
    RK_FORWARD(mem.alloc(&d_ccnt, (size_t)max_count, err));
    RK_FORWARD(mem.alloc(&d_coff, (size_t)max_count + 1, err));
    if (!smem_acc) {
        RK_FORWARD(mem.alloc(&g_acc, (size_t)grid * n_items, err));
        RK_CUDA_CHECK(err, cudaMemsetAsync(g_acc, 0, (size_t)grid * n_items * sizeof(uint64_t), st));
    }
    snprintf(ts->path + strlen(ts->path), sizeof ts->path - strlen(ts->path), ", %s accumulator%s",
             smem_acc ? "shared" : "global", words ? " in 32-bit words" : "");
    return RK_OK;
}

// Batch t on buffer t % 2: its scores, its selection, and the copies back.
rk_status topn_call::launch(size_t t, rk_error *err)
{
    const int x = (int)(t & 1);
    const int64_t first = cut[t], count = cut[t + 1] - first;
    hb[x].first = first;
    hb[x].count = count;
    RK_CUDA_CHECK(err, cudaEventRecord(hb[x].k0, st));
    if (route == RK_GPU_TOPN_KERNEL) {
        coff[0] = 0;
        for (int64_t b = 0; b < count; b++)
            coff[(size_t)b + 1] = coff[(size_t)b] + std::min<int64_t>(prod[(size_t)(first + b)], n_items);
        RK_CUDA_CHECK(err, cudaMemcpyAsync(d_coff, coff.data(), (size_t)(count + 1) * sizeof(int64_t),
                                           cudaMemcpyHostToDevice, st));
        const int gb = (int)std::min<int64_t>(grid, count);
        acc_kernel()<<<gb, kAccThreads, acc_smem, st>>>(in->R.ptr, in->R.idx, in->L, d_users + first,
                                                        (int32_t)count, g_acc, g_touched, g_seen, d_ckey, d_ccol,
                                                        d_coff, d_ccnt);
        RK_LAUNCH_CHECK(err, "k_topn_acc");
        RK_CUDA_CHECK(err, cudaEventRecord(hb[x].km, st));
        k_topn_select<<<(int)count, kRowThreads, sort_bytes, st>>>(d_ckey, d_ccol, d_coff, d_ccnt, dout[x]);
        RK_LAUNCH_CHECK(err, "k_topn_select");
    } else {
        int64_t products = 0;
        for (int64_t b = first; b < first + count; b++) products += prod[(size_t)b];
        rk_dev_scores sc;
        RK_FORWARD(rk_spgemm_scores(sg.p, &in->R, d_users + first, (int32_t)count, products, &sc, err));
        RK_CUDA_CHECK(err, cudaEventRecord(hb[x].km, st));
        if (sc.rows != count)
            return rk_error_set(err, RK_E_INTERNAL, "SpGEMM returned %d rows for %lld users", sc.rows,
                                (long long)count);
        k_topn_rows<<<(int)count, kRowThreads, sort_bytes, st>>>(in->R.ptr, in->R.idx, d_users + first, sc.ptr,
                                                                sc.col, const_cast<double *>(sc.val), dout[x]);
        RK_LAUNCH_CHECK(err, "k_topn_rows");
    }
    RK_CUDA_CHECK(err, cudaEventRecord(hb[x].k1, st));
    RK_CUDA_CHECK(err, cudaMemcpyAsync(hb[x].len, dout[x].len, (size_t)count * sizeof(int32_t),
                                       cudaMemcpyDeviceToHost, st));
    RK_CUDA_CHECK(err, cudaMemcpyAsync(hb[x].item, dout[x].item, (size_t)count * n * sizeof(int32_t),
                                       cudaMemcpyDeviceToHost, st));
    RK_CUDA_CHECK(err, cudaMemcpyAsync(hb[x].score, dout[x].score, (size_t)count * n * sizeof(uint64_t),
                                       cudaMemcpyDeviceToHost, st));
    RK_CUDA_CHECK(err, cudaEventRecord(hb[x].ready, st));
    return RK_OK;
}

// Batch t runs on buffer t % 2 while the host hands batch t - 1 to the sink.
rk_status topn_call::stream(rk_error *err)
{
    const size_t n_batches = cut.size() - 1;
    float kernel_ms = 0.0f, score_ms = 0.0f;
    double sink_s = 0.0;
    int64_t rows = 0;
    RK_PROGRESS(o->progress, o->progress_ud, "top-N", 0, n_users, "users");
    rk_status s = launch(0, err);
    for (size_t t = 0; t < n_batches && s == RK_OK; t++) {
        const int x = (int)(t & 1);
        if (t + 1 < n_batches) {
            // the next batch's buffer was handed to the sink in the last round: free
            s = launch(t + 1, err);
            if (s != RK_OK) break;
        }
        cudaError_t e = cudaEventSynchronize(hb[x].ready);
        if (e != cudaSuccess) {
            s = rk_gpu_fail(err, "cudaEventSynchronize(top-N batch)", cudaGetErrorString(e), __FILE__, __LINE__);
            break;
        }
        float ms = 0.0f, ms1 = 0.0f;
        if (cudaEventElapsedTime(&ms, hb[x].k0, hb[x].k1) == cudaSuccess) kernel_ms += ms;
        if (cudaEventElapsedTime(&ms1, hb[x].k0, hb[x].km) == cudaSuccess) score_ms += ms1;
        const double t0 = rk_omp_wtime();
        for (int64_t b = 0; b < hb[x].count; b++) rows += hb[x].len[b];
        rk_topn_batch bt = {hb[x].first, hb[x].count, users + hb[x].first, n, hb[x].len, hb[x].item, hb[x].score};
        s = o->sink(o->sink_ud, &bt, err);
        sink_s += rk_omp_wtime() - t0;
        const int64_t upto = hb[x].first + hb[x].count;
        if (s == RK_OK && RK_PROGRESS_STOPS(o->progress, o->progress_ud, "top-N", upto, n_users, "users"))
            s = rk_error_set(err, RK_E_CANCELLED, RK_STOPPED_MSG, "top-N");
    }
    if (s != RK_OK) cudaStreamSynchronize(st); // nothing in flight touches freed buffers
    ts->compute_s = kernel_ms / 1000.0;
    snprintf(ts->detail, sizeof ts->detail, "%zu batch%s <=%lld, %.0f MB; scores %.3f, sel %.3f s", n_batches,
             n_batches == 1 ? "" : "es", (long long)max_count, (double)in->budget / 1048576.0, score_ms / 1000.0,
             (kernel_ms - score_ms) / 1000.0);
    ts->sink_s = sink_s;
    ts->rows = rows;
    return s;
}

} // namespace

rk_status rk_gpu_topn_run(const rk_model *m, const rk_topn_dev_in *in, const rk_topn_opts *o, const rk_gpu_opts *g,
                          cudaStream_t st, rk_topn_stats *ts, rk_error *err)
{
    topn_call c;
    c.m = m;
    c.in = in;
    c.o = o;
    c.g = g;
    c.st = st;
    c.ts = ts;
    c.t_call = rk_omp_wtime();
    RK_FORWARD(c.plan_users(err));
    if (c.n_users == 0 || c.n_items == 0) {
        ts->wall_s = rk_omp_wtime() - c.t_call;
        return RK_OK;
    }
    RK_FORWARD(c.count_products(err));
    c.plan_batches();
    RK_FORWARD(c.alloc_batches(err));
    c.sort_bytes = rk_sel_sort_bytes(c.n);
    c.smem_acc = (size_t)c.n_items * sizeof(uint64_t) + 4096 <= in->smem_optin;
    c.coff.resize((size_t)c.max_count + 1);
    RK_CUDA_CHECK(err, cudaFuncSetAttribute(k_topn_select, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            (int)c.sort_bytes));
    RK_CUDA_CHECK(err, cudaFuncSetAttribute(k_topn_rows, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            (int)c.sort_bytes));
    if (c.route == RK_GPU_TOPN_KERNEL) {
        RK_FORWARD(c.kernel_state(err));
    } else {
        RK_FORWARD(rk_spgemm_create(in->sparse, &in->L, st, &c.sg.p, err));
    }
    RK_CUDA_CHECK(err, cudaStreamSynchronize(st));
    ts->upload_s = rk_omp_wtime() - c.t_call;
    const rk_status s = c.stream(err);
    ts->wall_s = rk_omp_wtime() - c.t_call;
    return s;
}
