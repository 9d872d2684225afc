// The random ball cover on the GPU (rk_gpu_rbc in rk_gpu.h).  The CPU twin
// rk_rbc_cpu (engine/rk_rbc.c) defines the result; this file computes the same
// lists with the same candidates, sums and selection order:
//  - the host draws the representatives, makes the values and norms and the
//    representatives' index with the CPU's functions (rk_rbc.h);
//  - k_rep_pass: one warp per item walks its raters in ascending order and,
//    lanes over each rater's representatives (distinct, so no two lanes add
//    to one sum), adds to per-warp sums: every sum receives its products in
//    ascending user order, as on the CPU; lane 0 keeps the P nearest;
//  - the host builds the balls and the index of the items in no ball from
//    the owners (rk_rbc_balls_build, the CPU's code);
//  - k_ball_pass: one warp per query, a lane per candidate: the pair's sums
//    walk the shorter of the two sorted rater lists in ascending order and
//    find each rater in the other by binary search, one lane for the whole
//    pair, so the order of the additions is the CPU's (ascending users).  A candidate met through
//    several raters is summed by the lane that met it through the first
//    co-rater only (each pair once, with no set to test).  Each lane keeps a
//    heap of its best k; lane 0 merges the 32.
// This file is compiled with -fmad=false (gpu/gpu.am): a fused multiply-add
// rounds once where the CPU rounds twice, and off the rating grid (or in
// rk_sim_value's euclidean-full) the sums would then differ in the last bit.
#include "rk_gpu_internal.h"
#include "rk_rbc.h"
#include "rk_omp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>

namespace {

constexpr int kBlock = 128; // 4 warps
constexpr unsigned kFull = 0xffffffffu;

struct ent {
    double s;
    int32_t j, n;
};

__device__ __forceinline__ bool better(double sa, int32_t ia, double sb, int32_t ib)
{
    return sa > sb || (sa == sb && ia < ib);
}

// A bounded heap whose root is the worst entry (rk_topk's, engine/rk_select.h).
__device__ void sift_down(ent *h, int32_t n, int32_t pos)
{
    const ent x = h[pos];
    for (;;) {
        int32_t c = 2 * pos + 1;
        if (c >= n) break;
        if (c + 1 < n && better(h[c].s, h[c].j, h[c + 1].s, h[c + 1].j)) c++;
        if (!better(x.s, x.j, h[c].s, h[c].j)) break;
        h[pos] = h[c];
        pos = c;
    }
    h[pos] = x;
}

__device__ void heap_push(ent *h, int32_t *n, int32_t cap, ent e)
{
    if (*n < cap) {
        int32_t pos = (*n)++;
        while (pos > 0) {
            const int32_t par = (pos - 1) / 2;
            if (!better(h[par].s, h[par].j, e.s, e.j)) break;
            h[pos] = h[par];
            pos = par;
        }
        h[pos] = e;
    } else if (cap > 0 && better(e.s, e.j, h[0].s, h[0].j)) {
        h[0] = e;
        sift_down(h, *n, 0);
    }
}

// Best first, in place (the heap is then no heap).
__device__ void heap_sort(ent *h, int32_t n)
{
    for (int32_t t = n - 1; t > 0; t--) {
        const ent x = h[0];
        h[0] = h[t];
        h[t] = x;
        sift_down(h, t, 0);
    }
}

__device__ __forceinline__ unsigned long long warp_sum(unsigned long long v)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(kFull, v, o);
    return v;
}

// ---- the rep pass ---------------------------------------------------------------

struct rep_args {
    const int64_t *iptr;
    const int32_t *iidx;
    const double *ival;          // by_item values in units
    const int64_t *rptr;         // user -> representatives (rk_rbc_index)
    const int32_t *rrep;
    const double *rval;
    const int32_t *reps;
    const double *ncnt, *nsq;
    rk_sim_params near;
    int32_t n_items, R, keep, T;
    int32_t *cnt;                // per warp: R co-rater counts
    double *dot;                 // per warp: R sums
    int32_t *touched;            // per warp: R
    double *ts;                  // per warp: R nearness of the touched
    double *ks;                  // per warp: keep, the nearest so far (best first)
    int32_t *kr;
    int32_t *probe, *nprobe, *owner;
    int32_t *next;               // the next item to take
    unsigned long long *reads;
};

__global__ void __launch_bounds__(kBlock) k_rep_pass(rep_args a)
{
    __shared__ int32_t s_nt[kBlock / 32];
    const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
    const int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int32_t *cnt = a.cnt + w * a.R, *touched = a.touched + w * a.R, *kr = a.kr + w * a.keep;
    double *dot = a.dot + w * a.R, *ts = a.ts + w * a.R, *ks = a.ks + w * a.keep;
    unsigned long long reads = 0;
    for (;;) {
        int32_t i = 0;
        if (lane == 0) i = atomicAdd(a.next, 1);
        i = __shfl_sync(kFull, i, 0);
        if (i >= a.n_items) break;
        const int64_t p0 = a.iptr[i], p1 = a.iptr[i + 1];
        if (p1 - p0 <= (int64_t)a.T || p1 == p0) {
            if (lane == 0) {
                a.owner[i] = p1 == p0 ? RK_RBC_EMPTY : RK_RBC_TAIL;
                a.nprobe[i] = 0;
            }
            continue;
        }
        if (lane == 0) s_nt[wib] = 0;
        __syncwarp();
        for (int64_t p = p0; p < p1; p++) {
            const int32_t u = a.iidx[p];
            const double x = a.ival[p];
            const int64_t e0 = a.rptr[u], e1 = a.rptr[u + 1];
            if (lane == 0) reads += 1 + (unsigned long long)(e1 - e0);
            for (int64_t e = e0 + lane; e < e1; e += 32) {
                const int32_t r = a.rrep[e];
                const int32_t c = cnt[r];
                if (c == 0) touched[atomicAdd(&s_nt[wib], 1)] = r;
                cnt[r] = c + 1;
                dot[r] = __dadd_rn(dot[r], __dmul_rn(x, a.rval[e]));
            }
            __syncwarp();
        }
        const int32_t nt = s_nt[wib];
        for (int32_t t = lane; t < nt; t += 32) {
            const int32_t r = touched[t], j = a.reps[r];
            ts[t] = rk_sim_value(&a.near, (double)cnt[r], a.ncnt[i], a.ncnt[j], a.nsq[i], a.nsq[j], dot[r]);
            cnt[r] = 0;
            dot[r] = 0.0;
        }
        __syncwarp();
        if (lane == 0) { // the `keep` nearest with nearness > 0, best first (touched in any order)
            int32_t nk = 0;
            for (int32_t t = 0; t < nt; t++) {
                const double s = ts[t];
                const int32_t r = touched[t];
                if (!(s > 0.0)) continue;
                if (nk == a.keep && !better(s, r, ks[nk - 1], kr[nk - 1])) continue;
                int32_t pos = nk < a.keep ? nk++ : a.keep - 1;
                while (pos > 0 && better(s, r, ks[pos - 1], kr[pos - 1])) {
                    ks[pos] = ks[pos - 1];
                    kr[pos] = kr[pos - 1];
                    pos--;
                }
                ks[pos] = s;
                kr[pos] = r;
            }
            for (int32_t t = 0; t < nk; t++) a.probe[(int64_t)i * a.keep + t] = kr[t];
            a.nprobe[i] = nk;
            a.owner[i] = nk > 0 ? kr[0] : RK_RBC_ORPHAN;
        }
        __syncwarp();
    }
    if (lane == 0 && reads > 0) atomicAdd(a.reads, reads);
}

// ---- the ball pass --------------------------------------------------------------

struct ball_args {
    const int64_t *iptr;
    const int32_t *iidx;
    const double *ival;
    const int64_t *uptr;         // by_user: the items a rater rated
    const int32_t *uidx;
    const double *ncnt, *nsq;
    rk_sim_params sp;
    int32_t n_items, k, R, keep;
    int all_balls;
    const int32_t *owner, *probe, *nprobe;
    const int64_t *ball_ptr;
    const int32_t *ball_items;
    const int64_t *optr;         // user -> the items in no ball
    const int32_t *oitem;
    ent *heaps;                  // per warp: 33 heaps of k (32 lanes, the merge)
    int32_t *len, *nbr, *sup;
    float *sim;
    int32_t *next;
    unsigned long long *reads, *bpairs, *rpairs;
};

// n and Σxy of query i (its raters idx/val[pi0, pi1)) with candidate j (its
// raters idx/val[pj0, pj1)), over their co-raters in ascending user order:
// the shorter row is walked and each of its raters found in the longer one by
// binary search (the same co-raters in the same order either way).  first >= 0:
// -1 unless `first` is the pair's first co-rater.
__device__ int32_t pair_sums(const int32_t *__restrict__ idx, const double *__restrict__ val, int64_t pi0,
                             int64_t pi1, int64_t pj0, int64_t pj1, int32_t first, double *dot)
{
    const bool walk_i = pi1 - pi0 < pj1 - pj0;
    const int64_t w0 = walk_i ? pi0 : pj0, w1 = walk_i ? pi1 : pj1, s1 = walk_i ? pj1 : pi1;
    int64_t lo = walk_i ? pj0 : pi0;
    int32_t n = 0;
    double d = 0.0;
    for (int64_t q = w0; q < w1 && lo < s1; q++) {
        const int32_t u = idx[q];
        int64_t a = lo, b = s1;
        while (a < b) {
            const int64_t mid = a + (b - a) / 2;
            if (idx[mid] < u) a = mid + 1; else b = mid;
        }
        lo = a;
        if (a < s1 && idx[a] == u) {
            if (n == 0 && first >= 0 && u != first) return -1;
            n++;
            const double x = walk_i ? val[q] : val[a], y = walk_i ? val[a] : val[q]; // query's, candidate's
            d = __dadd_rn(d, __dmul_rn(x, y));
            lo = a + 1;
        }
    }
    *dot = d;
    return n;
}

__device__ __forceinline__ void offer(const ball_args &a, int32_t i, int32_t j, int32_t n, double d, ent *h,
                                      int32_t *hn)
{
    if (n <= 0) return;
    const double s = rk_sim_value(&a.sp, (double)n, a.ncnt[i], a.ncnt[j], a.nsq[i], a.nsq[j], d);
    if (s > 0.0) heap_push(h, hn, a.k, ent{s, j, n});
}

__global__ void __launch_bounds__(kBlock) k_ball_pass(ball_args a)
{
    const int lane = threadIdx.x & 31;
    const int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    ent *lh = a.heaps + (w * 33 + lane) * (int64_t)a.k, *fh = a.heaps + (w * 33 + 32) * (int64_t)a.k;
    unsigned long long reads = 0, bp = 0, rp = 0;
    for (;;) {
        int32_t i = 0;
        if (lane == 0) i = atomicAdd(a.next, 1);
        i = __shfl_sync(kFull, i, 0);
        if (i >= a.n_items) break;
        const int32_t own = a.owner[i];
        if (own == RK_RBC_EMPTY) {
            if (lane == 0) a.len[i] = 0;
            continue;
        }
        const int64_t pi0 = a.iptr[i], pi1 = a.iptr[i + 1];
        if (lane == 0) reads += (unsigned long long)(pi1 - pi0);
        int32_t hn = 0;
        if (own < 0) { // the tail, the orphans: every item the raters rated
            for (int64_t p = pi0; p < pi1; p++) {
                const int32_t u = a.iidx[p];
                const int64_t q0 = a.uptr[u], q1 = a.uptr[u + 1];
                if (lane == 0) reads += 1 + (unsigned long long)(q1 - q0);
                for (int64_t q = q0 + lane; q < q1; q += 32) {
                    const int32_t j = a.uidx[q];
                    double d;
                    if (j == i) continue;
                    const int32_t n = pair_sums(a.iidx, a.ival, pi0, pi1, a.iptr[j], a.iptr[j + 1], u, &d);
                    if (n < 0) continue;
                    rp++;
                    offer(a, i, j, n, d, lh, &hn);
                }
            }
        } else {
            const int32_t nb = a.all_balls ? a.R : a.nprobe[i];
            for (int32_t t = 0; t < nb; t++) {
                const int32_t b = a.all_balls ? t : a.probe[(int64_t)i * a.keep + t];
                for (int64_t q = a.ball_ptr[b] + lane; q < a.ball_ptr[b + 1]; q += 32) {
                    const int32_t j = a.ball_items[q];
                    double d;
                    if (j == i) continue;
                    const int64_t pj0 = a.iptr[j], pj1 = a.iptr[j + 1];
                    reads += (unsigned long long)(pj1 - pj0);
                    bp++;
                    const int32_t n = pair_sums(a.iidx, a.ival, pi0, pi1, pj0, pj1, -1, &d);
                    offer(a, i, j, n, d, lh, &hn);
                }
            }
            for (int64_t p = pi0; p < pi1; p++) { // the items in no ball, through the raters
                const int32_t u = a.iidx[p];
                const int64_t q0 = a.optr[u], q1 = a.optr[u + 1];
                if (lane == 0) reads += 1 + (unsigned long long)(q1 - q0);
                for (int64_t q = q0 + lane; q < q1; q += 32) {
                    const int32_t j = a.oitem[q];
                    double d;
                    const int32_t n = pair_sums(a.iidx, a.ival, pi0, pi1, a.iptr[j], a.iptr[j + 1], u, &d);
                    if (n < 0) continue;
                    rp++;
                    offer(a, i, j, n, d, lh, &hn);
                }
            }
        }
        __syncwarp();
        int32_t fn = 0;
        for (int l = 0; l < 32; l++) {
            const int32_t c = __shfl_sync(kFull, hn, l);
            if (lane == 0)
                for (int32_t t = 0; t < c; t++) heap_push(fh, &fn, a.k, a.heaps[(w * 33 + l) * (int64_t)a.k + t]);
        }
        if (lane == 0) {
            heap_sort(fh, fn);
            const int64_t base = (int64_t)i * a.k;
            a.len[i] = fn;
            for (int32_t t = 0; t < fn; t++) {
                a.nbr[base + t] = fh[t].j;
                a.sim[base + t] = (float)fh[t].s;
                a.sup[base + t] = fh[t].n;
            }
        }
        __syncwarp();
    }
    reads = warp_sum(reads);
    bp = warp_sum(bp);
    rp = warp_sum(rp);
    if (lane == 0) {
        if (reads > 0) atomicAdd(a.reads, reads);
        if (bp > 0) atomicAdd(a.bpairs, bp);
        if (rp > 0) atomicAdd(a.rpairs, rp);
    }
}

// ---- host side ----------------------------------------------------------------

// Arrays that C code allocated with malloc.
struct c_arrays {
    std::vector<void *> p;
    ~c_arrays()
    {
        for (void *x : p) free(x);
    }
};

struct balls_guard {
    rk_rbc_balls b;
    balls_guard() { memset(&b, 0, sizeof b); }
    ~balls_guard() { rk_rbc_balls_free(&b); }
};

// Warps of a persistent grid: as many as run at once, fewer when their
// scratch (per_warp bytes each) would not fit in the budget; a multiple of
// the warps of a block.
rk_status plan_warps(const cudaDeviceProp &prop, size_t budget, size_t per_warp, int64_t work, const char *what,
                     int64_t *warps, rk_error *err)
{
    const int64_t per_block = kBlock / 32;
    int64_t w = (int64_t)prop.multiProcessorCount * (prop.maxThreadsPerMultiProcessor / 32);
    if (per_warp > 0) w = std::min(w, (int64_t)(budget / per_warp));
    w = std::min(w, (work + per_block - 1) / per_block * per_block);
    w = w / per_block * per_block;
    if (w < per_block)
        return rk_error_set(err, RK_E_GPU, "the %s needs %zu bytes of device memory per warp, and %zu are left", what,
                            per_warp * (size_t)per_block, budget);
    *warps = w;
    return RK_OK;
}

template <typename T> rk_status upload_plain(T **d, const T *h, size_t n, dev_mem &mem, cudaStream_t s, rk_error *err)
{
    RK_FORWARD(mem.alloc(d, n, err));
    if (n > 0) RK_CUDA_CHECK(err, cudaMemcpyAsync(*d, h, n * sizeof(T), cudaMemcpyHostToDevice, s));
    return RK_OK;
}

// The device arrays of one call.
struct rbc_dev {
    int64_t *iptr, *uptr, *rptr, *bptr, *optr;
    int32_t *iidx, *uidx, *rrep, *reps, *bitems, *oitem;
    double *ival, *rval, *ncnt, *nsq;
    int32_t *owner, *nprobe, *probe, *next, *len, *nbr, *sup;
    float *sim;
    unsigned long long *count; // reads of the rep pass, reads, ball pairs, rater pairs of the ball pass
};

// The rep pass: each placed item's nearest representatives (its probes)
// and its ball, warps sized to the memory left; owner[] comes back.
static rk_status rep_pass(const cudaDeviceProp &prop, const rk_gpu_opts *g, const rk_knn_opts *o, dev_mem &mem,
                          cudaStream_t s, const rbc_dev &d, int32_t n_items, int32_t R, int32_t keep, int32_t T,
                          double scale, int32_t *owner, rk_error *err)
{
    size_t budget;
    RK_FORWARD(rk_gpu_budget_left(g, mem, &budget, err));
    const size_t per_warp = (size_t)R * (2 * sizeof(int32_t) + 2 * sizeof(double)) +
                            (size_t)keep * (sizeof(double) + sizeof(int32_t));
    int64_t warps = 0;
    RK_FORWARD(plan_warps(prop, budget, per_warp, n_items, "rep pass", &warps, err));
    rep_args ra;
    ra.iptr = d.iptr;
    ra.iidx = d.iidx;
    ra.ival = d.ival;
    ra.rptr = d.rptr;
    ra.rrep = d.rrep;
    ra.rval = d.rval;
    ra.reps = d.reps;
    ra.ncnt = d.ncnt;
    ra.nsq = d.nsq;
    ra.near = rk_rbc_near_params(o, scale);
    ra.n_items = n_items;
    ra.R = R;
    ra.keep = keep;
    ra.T = T;
    RK_FORWARD(mem.alloc(&ra.cnt, (size_t)warps * R, err));
    RK_FORWARD(mem.alloc(&ra.dot, (size_t)warps * R, err));
    RK_FORWARD(mem.alloc(&ra.touched, (size_t)warps * R, err));
    RK_FORWARD(mem.alloc(&ra.ts, (size_t)warps * R, err));
    RK_FORWARD(mem.alloc(&ra.ks, (size_t)warps * keep, err));
    RK_FORWARD(mem.alloc(&ra.kr, (size_t)warps * keep, err));
    RK_CUDA_CHECK(err, cudaMemsetAsync(ra.cnt, 0, (size_t)warps * R * sizeof(int32_t), s));
    RK_CUDA_CHECK(err, cudaMemsetAsync(ra.dot, 0, (size_t)warps * R * sizeof(double), s));
    ra.probe = d.probe;
    ra.nprobe = d.nprobe;
    ra.owner = d.owner;
    ra.next = d.next;
    ra.reads = d.count;
    k_rep_pass<<<(unsigned)(warps / (kBlock / 32)), kBlock, 0, s>>>(ra);
    RK_LAUNCH_CHECK(err, "k_rep_pass");
    RK_CUDA_CHECK(err, cudaMemcpyAsync(owner, d.owner, (size_t)n_items * sizeof(int32_t),
                                       cudaMemcpyDeviceToHost, s));
    RK_CUDA_CHECK(err, cudaStreamSynchronize(s));
    mem.release(ra.cnt);
    mem.release(ra.dot);
    mem.release(ra.touched);
    mem.release(ra.ts);
    mem.release(ra.ks);
    mem.release(ra.kr);
    return RK_OK;
}

// The ball pass: each query's k nearest among the items of the balls it
// probes, warps sized to the memory left, into the lists on the device.
static rk_status ball_pass(const cudaDeviceProp &prop, const rk_gpu_opts *g, const rk_knn_opts *o, dev_mem &mem,
                           cudaStream_t s, const rbc_dev &d, int32_t n_items, int32_t k, int32_t R, int32_t keep,
                           int all_balls, double scale, rk_error *err)
{
    size_t budget;
    RK_FORWARD(rk_gpu_budget_left(g, mem, &budget, err));
    int64_t warps = 0;
    RK_FORWARD(plan_warps(prop, budget, (size_t)33 * k * sizeof(ent), n_items, "ball pass", &warps, err));
    ball_args ba;
    ba.iptr = d.iptr;
    ba.iidx = d.iidx;
    ba.ival = d.ival;
    ba.uptr = d.uptr;
    ba.uidx = d.uidx;
    ba.ncnt = d.ncnt;
    ba.nsq = d.nsq;
    ba.sp = rk_rbc_sim_params(o, scale);
    ba.n_items = n_items;
    ba.k = k;
    ba.R = R;
    ba.keep = keep;
    ba.all_balls = all_balls;
    ba.owner = d.owner;
    ba.probe = d.probe;
    ba.nprobe = d.nprobe;
    ba.ball_ptr = d.bptr;
    ba.ball_items = d.bitems;
    ba.optr = d.optr;
    ba.oitem = d.oitem;
    RK_FORWARD(mem.alloc(&ba.heaps, (size_t)warps * 33 * k, err));
    ba.len = d.len;
    ba.nbr = d.nbr;
    ba.sup = d.sup;
    ba.sim = d.sim;
    ba.next = d.next + 1;
    ba.reads = d.count + 1;
    ba.bpairs = d.count + 2;
    ba.rpairs = d.count + 3;
    k_ball_pass<<<(unsigned)(warps / (kBlock / 32)), kBlock, 0, s>>>(ba);
    RK_LAUNCH_CHECK(err, "k_ball_pass");
    RK_CUDA_CHECK(err, cudaStreamSynchronize(s));
    return RK_OK;
}

rk_status run(const rk_model *m, const rk_knn_opts *o, const rk_rbc_opts *r, const rk_gpu_opts *g, rk_lists *lists,
              rk_rbc_stats *st, rk_error *err)
{
    const double t_call = rk_omp_wtime();
    dev_mem mem;
    stream_events se;
    cudaDeviceProp prop;
    const int dev = g != NULL ? g->device : 0;
    RK_CUDA_CHECK(err, cudaSetDevice(dev));
    RK_CUDA_CHECK(err, cudaFree(0));
    RK_CUDA_CHECK(err, cudaGetDeviceProperties(&prop, dev));
    snprintf(st->device, sizeof st->device, "%.120s", prop.name);
    RK_CUDA_CHECK(err, cudaStreamCreate(&se.st));
    cudaStream_t s = se.st;
    const double t_init = rk_omp_wtime();
    st->init_s = t_init - t_call;

    // host set-up: the CPU twin's functions
    const rk_csr *I = &m->by_item, *U = &m->by_user;
    const int32_t n_items = I->n_rows, n_users = U->n_rows, k = o->k;
    int32_t R, P, T;
    int64_t n_placed;
    rk_rbc_resolve(m, r, &R, &P, &T, &n_placed);
    const int all_balls = P >= R;
    const int32_t keep = all_balls ? 1 : P;
    const double scale = rk_knn_grid_scale(m, NULL);
    std::vector<double> vals((size_t)std::max<int64_t>(I->nnz, 1));
    std::vector<double> ncnt((size_t)std::max(n_items, 1)), nsq(ncnt.size());
    std::vector<int32_t> reps((size_t)std::max(R, 1));
    rk_rbc_values(m, scale, vals.data());
    rk_knn_item_norms(m, NULL, scale, ncnt.data(), nsq.data());
    RK_FORWARD(rk_rbc_draw_reps(m, R, T, r->seed, r->draw, reps.data(), err));
    c_arrays owned;
    int64_t *rptr = NULL;
    int32_t *rrep = NULL;
    double *rval = NULL;
    RK_FORWARD(rk_rbc_index(m, vals.data(), reps.data(), R, 0, &rptr, &rrep, &rval, err));
    owned.p = {rptr, rrep, rval};
    const double t_reps = rk_omp_wtime();
    st->reps_s = t_reps - t_init;

    // upload
    rbc_dev d = {};
    RK_FORWARD(upload_plain(&d.iptr, I->ptr, (size_t)n_items + 1, mem, s, err));
    RK_FORWARD(upload_plain(&d.iidx, I->idx, (size_t)I->nnz, mem, s, err));
    RK_FORWARD(upload_plain(&d.ival, vals.data(), (size_t)I->nnz, mem, s, err));
    RK_FORWARD(upload_plain(&d.uptr, U->ptr, (size_t)n_users + 1, mem, s, err));
    RK_FORWARD(upload_plain(&d.uidx, U->idx, (size_t)U->nnz, mem, s, err));
    RK_FORWARD(upload_plain(&d.ncnt, ncnt.data(), (size_t)n_items, mem, s, err));
    RK_FORWARD(upload_plain(&d.nsq, nsq.data(), (size_t)n_items, mem, s, err));
    RK_FORWARD(upload_plain(&d.reps, reps.data(), (size_t)R, mem, s, err));
    RK_FORWARD(upload_plain(&d.rptr, rptr, (size_t)n_users + 1, mem, s, err));
    RK_FORWARD(upload_plain(&d.rrep, rrep, (size_t)rptr[n_users], mem, s, err));
    RK_FORWARD(upload_plain(&d.rval, rval, (size_t)rptr[n_users], mem, s, err));
    RK_FORWARD(mem.alloc(&d.owner, (size_t)n_items, err));
    RK_FORWARD(mem.alloc(&d.nprobe, (size_t)n_items, err));
    RK_FORWARD(mem.alloc(&d.probe, (size_t)n_items * (size_t)keep, err));
    RK_FORWARD(mem.alloc(&d.next, 2, err));
    RK_FORWARD(mem.alloc(&d.count, 4, err));
    RK_CUDA_CHECK(err, cudaMemsetAsync(d.next, 0, 2 * sizeof(int32_t), s));
    RK_CUDA_CHECK(err, cudaMemsetAsync(d.count, 0, 4 * sizeof(unsigned long long), s));
    RK_CUDA_CHECK(err, cudaStreamSynchronize(s));
    const double t_up = rk_omp_wtime();
    st->upload_s = t_up - t_reps;

    // the rep pass (without representatives every item is in the tail or empty)
    std::vector<int32_t> owner((size_t)std::max(n_items, 1));
    if (R > 0 && n_items > 0) {
        RK_FORWARD(rep_pass(prop, g, o, mem, s, d, n_items, R, keep, T, scale, owner.data(), err));
    } else {
        for (int32_t i = 0; i < n_items; i++) owner[(size_t)i] = I->ptr[i + 1] > I->ptr[i] ? RK_RBC_TAIL : RK_RBC_EMPTY;
        if (n_items > 0)
            RK_CUDA_CHECK(err, cudaMemcpyAsync(d.owner, owner.data(), (size_t)n_items * sizeof(int32_t),
                                               cudaMemcpyHostToDevice, s));
    }
    balls_guard bg;
    RK_FORWARD(rk_rbc_balls_build(m, vals.data(), owner.data(), R, &bg.b, err));
    const rk_rbc_balls &b = bg.b;
    RK_FORWARD(upload_plain(&d.bptr, b.ball_ptr, (size_t)R + 1, mem, s, err));
    RK_FORWARD(upload_plain(&d.bitems, b.ball_items, (size_t)b.ball_ptr[R], mem, s, err));
    RK_FORWARD(upload_plain(&d.optr, b.optr, (size_t)n_users + 1, mem, s, err));
    RK_FORWARD(upload_plain(&d.oitem, b.oitem, (size_t)b.optr[n_users], mem, s, err));
    RK_CUDA_CHECK(err, cudaStreamSynchronize(s));
    const double t_assign = rk_omp_wtime();
    st->assign_s = t_assign - t_up;

    // the ball pass
    const size_t cells = (size_t)n_items * (size_t)k;
    RK_FORWARD(mem.alloc(&d.len, (size_t)n_items, err));
    RK_FORWARD(mem.alloc(&d.nbr, cells, err));
    RK_FORWARD(mem.alloc(&d.sup, cells, err));
    RK_FORWARD(mem.alloc(&d.sim, cells, err));
    RK_CUDA_CHECK(err, cudaMemsetAsync(d.nbr, 0, cells * sizeof(int32_t), s));
    RK_CUDA_CHECK(err, cudaMemsetAsync(d.sup, 0, cells * sizeof(int32_t), s));
    RK_CUDA_CHECK(err, cudaMemsetAsync(d.sim, 0, cells * sizeof(float), s));
    if (n_items > 0) RK_FORWARD(ball_pass(prop, g, o, mem, s, d, n_items, k, R, keep, all_balls, scale, err));
    const double t_query = rk_omp_wtime();
    st->query_s = t_query - t_assign;

    // results
    unsigned long long count[4];
    RK_CUDA_CHECK(err, cudaMemcpyAsync(count, d.count, sizeof count, cudaMemcpyDeviceToHost, s));
    if (n_items > 0) {
        RK_CUDA_CHECK(err, cudaMemcpyAsync(lists->len, d.len, (size_t)n_items * sizeof(int32_t), cudaMemcpyDeviceToHost, s));
        RK_CUDA_CHECK(err, cudaMemcpyAsync(lists->nbr, d.nbr, cells * sizeof(int32_t), cudaMemcpyDeviceToHost, s));
        RK_CUDA_CHECK(err, cudaMemcpyAsync(lists->sim, d.sim, cells * sizeof(float), cudaMemcpyDeviceToHost, s));
        RK_CUDA_CHECK(err, cudaMemcpyAsync(lists->support, d.sup, cells * sizeof(int32_t), cudaMemcpyDeviceToHost, s));
    }
    RK_CUDA_CHECK(err, cudaStreamSynchronize(s));
    const double t_end = rk_omp_wtime();
    st->download_s = t_end - t_query;
    st->wall_s = t_end - t_call;
    st->reps = R;
    st->probes = P;
    st->tail = T;
    st->queries = n_placed + b.n_tail;
    st->tail_items = b.n_tail;
    st->orphans = b.n_orphans;
    st->largest_ball = b.largest_ball;
    st->rep_pairs = n_placed * (int64_t)R;
    st->ball_pairs = (int64_t)count[2];
    st->rater_pairs = (int64_t)count[3];
    st->pair_evals = st->rep_pairs + st->ball_pairs + st->rater_pairs;
    st->brute_pairs = (int64_t)n_items * (n_items > 0 ? n_items - 1 : 0);
    st->entry_reads = (int64_t)(count[0] + count[1]);
    return RK_OK;
}

} // namespace

extern "C" rk_status rk_gpu_rbc(const rk_model *m, const rk_knn_opts *o, const rk_rbc_opts *r, const rk_gpu_opts *g,
                                rk_lists *lists, rk_rbc_stats *st, rk_error *err)
{
    rk_rbc_stats local;
    if (st == NULL) st = &local;
    memset(st, 0, sizeof *st);
    if (lists == NULL) return rk_error_set(err, RK_E_ARG, "the random ball cover needs lists to fill");
    RK_FORWARD(rk_rbc_check(m, o, r, lists, err));
    if (o->k > RK_GPU_MAX_K)
        return rk_error_set(err, RK_E_ARG, "k = %d is above the GPU's limit of %d", o->k, RK_GPU_MAX_K);
    char why[256];
    if (!rk_gpu_available(why, sizeof why)) return rk_error_set(err, RK_E_GPU, "no usable GPU: %s", why);
    rk_model full; // a deferred item-major matrix built for the call; else m itself
    RK_FORWARD(rk_model_complete_copy(m, &full, err));
    rk_status s = run(&full, o, r, g, lists, st, err);
    rk_model_complete_free(&full, m);
    return s;
}
