// One symmetric tile summed by several GPUs (rk_gpu.h, rk_gpu_sym): the
// parts' three meetings, and the kernel that fills a part's rows from the
// owners' tiles.
//
// Meetings, in order, each waited for by every part (or passed for it when
// it leaves):
//   0 the decision: every part says whether it can share (its tile of every
//     item fits, it reads the others' devices); all yes: the tile is shared;
//   1 the sums: every part has summed the upper triangle of its rows and
//     published its tile; a part that failed or left ends the others' calls;
//   2 the mirrors: every part has read what it needed of the others' tiles,
//     so that each may free its own.
// A part whose call ends early (an error anywhere) leaves: the meetings it
// has not reached count it as failed; if it had published its tile, it waits
// for meeting 2 before its memory goes.  A part leaves once; its later calls
// see a finished round and sum their rows in full.
#include "rk_gpu_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <condition_variable>
#include <mutex>
#include <new>

namespace {

constexpr int kSymMeetings = 3;
constexpr int kSymMaxParts = 64;

// The tiles of every part, a kernel argument (1 KiB).
struct sym_tiles {
    const double *S[kSymMaxParts];
    const int32_t *N[kSymMaxParts];
};

// Row r of the target part's tile (part_of[r] == me) below its diagonal,
// from the owner of column c's row: S[r][c] = S_owner(c)[c][r] for c < r,
// through shared memory so that the reads go along the owners' rows and the
// writes along the target's; the diagonal is 0.  k_mirror's shape.
constexpr int kTile = 32;
__global__ void k_mirror_shared(double *__restrict__ S, int32_t *__restrict__ N, int32_t n, sym_tiles t,
                                const int32_t *__restrict__ part_of, int32_t me)
{
    __shared__ double ts[kTile][kTile + 1];
    __shared__ int32_t tn[kTile][kTile + 1];
    const int32_t bx = blockIdx.x, by = blockIdx.y; // block column, block row of the target
    if (by < bx) return;
    const int32_t tx = threadIdx.x;
    for (int32_t ty = threadIdx.y; ty < kTile; ty += blockDim.y) {
        const int32_t r = bx * kTile + ty, c = by * kTile + tx; // source (upper): row r < column c
        if (r < n && c < n && r < c && part_of[c] == me) {
            const int32_t o = part_of[r];
            ts[ty][tx] = t.S[o][(int64_t)r * n + c];
            tn[ty][tx] = t.N[o][(int64_t)r * n + c];
        }
    }
    __syncthreads();
    for (int32_t ty = threadIdx.y; ty < kTile; ty += blockDim.y) {
        const int32_t r = by * kTile + ty, c = bx * kTile + tx; // target (lower): column c <= row r
        if (r < n && c < n && c <= r && part_of[r] == me) {
            S[(int64_t)r * n + c] = c < r ? ts[tx][ty] : 0.0;
            N[(int64_t)r * n + c] = c < r ? tn[tx][ty] : 0;
        }
    }
}

// RECKNN_GPU_SYM_FAULT=P:STEP (decide, sums): part P's call fails there (tests).
bool fault_at(int part, const char *step)
{
    const char *f = getenv("RECKNN_GPU_SYM_FAULT");
    int p = -1;
    char what[16] = "";
    return f != NULL && sscanf(f, "%d:%15s", &p, what) == 2 && p == part && strcmp(what, step) == 0;
}

} // namespace

struct rk_gpu_sym {
    int n_parts = 0;
    int32_t n_items = 0;
    std::vector<int> devices;
    std::vector<int32_t> part_of;
    std::vector<int64_t> cost;
    std::mutex mu;
    std::condition_variable cv;
    int arrived[kSymMeetings] = {0, 0, 0};
    int failed[kSymMeetings] = {0, 0, 0};
    std::vector<int> step; // the meetings each part has reached
    std::vector<const double *> S;
    std::vector<const int32_t *> N;
    int shared = 0;
};

// Part p at meeting m, ok or not; waits for every part.  @return 1 when
// every part came ok (0 when p had already passed m: it left).
static int arrive(rk_gpu_sym *sh, int p, int m, bool ok)
{
    std::unique_lock<std::mutex> lk(sh->mu);
    if (sh->step[(size_t)p] != m) return 0;
    sh->step[(size_t)p] = m + 1;
    sh->arrived[m]++;
    sh->failed[m] += !ok;
    if (m == 0 && sh->arrived[0] == sh->n_parts) sh->shared = sh->failed[0] == 0;
    sh->cv.notify_all();
    sh->cv.wait(lk, [sh, m] { return sh->arrived[m] == sh->n_parts; });
    return sh->failed[m] == 0;
}

void rk_gpu_sym_leave_part(rk_gpu_sym *sh, int p)
{
    if (sh == NULL || p < 0 || p >= sh->n_parts) return;
    std::unique_lock<std::mutex> lk(sh->mu);
    const int at = sh->step[(size_t)p];
    if (at >= kSymMeetings) return;
    if (at == 2) { // its kernels may still read the others' tiles
        lk.unlock();
        cudaDeviceSynchronize();
        cudaGetLastError();
        lk.lock();
    }
    for (int m = at; m < kSymMeetings; m++) {
        sh->arrived[m]++;
        sh->failed[m]++;
        if (m == 0 && sh->arrived[0] == sh->n_parts) sh->shared = 0;
    }
    sh->step[(size_t)p] = kSymMeetings;
    sh->cv.notify_all();
    // published (it came to meeting 1): the others may read its tile until meeting 2
    if (at >= 2) sh->cv.wait(lk, [sh] { return sh->arrived[2] == sh->n_parts; });
}

// Whether this part's device (the current one) reads every other part's.
static bool peers_readable(const rk_gpu_sym *sh, int p)
{
    const int dev = sh->devices[(size_t)p];
    for (int o = 0; o < sh->n_parts; o++) {
        const int d = sh->devices[(size_t)o];
        if (d == dev) continue;
        int can = 0;
        if (cudaDeviceCanAccessPeer(&can, dev, d) != cudaSuccess || !can) {
            cudaGetLastError();
            return false;
        }
        const cudaError_t e = cudaDeviceEnablePeerAccess(d, 0);
        if (e != cudaSuccess) cudaGetLastError(); // already enabled: no error
        if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) return false;
    }
    return true;
}

rk_status rk_gpu_sym_decide(rk_gpu_sym *sh, int p, bool can, const int32_t *order, int32_t n_run, bool *yes,
                            std::vector<int32_t> &own, int64_t *work, rk_error *err)
{
    if (fault_at(p, "decide")) return rk_error_set(err, RK_E_GPU, "a fault injected by RECKNN_GPU_SYM_FAULT at decide");
    own.clear();
    *work = 0;
    *yes = false;
    // the call's rows must be the part's
    int32_t n_own = 0;
    for (int32_t i = 0; i < sh->n_items; i++) n_own += sh->part_of[(size_t)i] == p;
    bool ok = can && n_own == n_run;
    for (int32_t t = 0; ok && t < n_run; t++) ok = sh->part_of[(size_t)order[t]] == p;
    ok = ok && peers_readable(sh, p);
    if (!arrive(sh, p, 0, ok)) return RK_OK;
    *yes = true;
    own.assign(order, order + n_run); // heaviest first over the upper triangle, ties by index
    const std::vector<int64_t> &c = sh->cost;
    std::sort(own.begin(), own.end(), [&c](int32_t a, int32_t b) {
        return c[(size_t)a] != c[(size_t)b] ? c[(size_t)a] > c[(size_t)b] : a < b;
    });
    for (int32_t i : own) *work += c[(size_t)i];
    return RK_OK;
}

rk_status rk_gpu_sym_exchange(rk_gpu_sym *sh, int p, double *S, int32_t *N, dev_mem &mem, cudaStream_t s,
                              double *wait_s, double *mirror_s, rk_error *err)
{
    RK_CUDA_CHECK(err, cudaStreamSynchronize(s)); // its sums
    if (fault_at(p, "sums")) return rk_error_set(err, RK_E_GPU, "a fault injected by RECKNN_GPU_SYM_FAULT at sums");
    const int32_t n = sh->n_items;
    int32_t *d_part;
    RK_FORWARD(mem.alloc(&d_part, (size_t)n, err));
    RK_CUDA_CHECK(err, cudaMemcpyAsync(d_part, sh->part_of.data(), (size_t)n * sizeof(int32_t),
                                       cudaMemcpyHostToDevice, s));
    {
        std::lock_guard<std::mutex> lk(sh->mu);
        sh->S[(size_t)p] = S;
        sh->N[(size_t)p] = N;
    }
    const double t0 = rk_omp_wtime();
    if (!arrive(sh, p, 1, true))
        return rk_error_set(err, RK_E_GPU, "another GPU's part of the shared symmetric tile failed before its sums "
                                           "were made");
    const double t1 = rk_omp_wtime();
    sym_tiles t;
    memset(&t, 0, sizeof t);
    for (int o = 0; o < sh->n_parts; o++) {
        t.S[o] = sh->S[(size_t)o];
        t.N[o] = sh->N[(size_t)o];
    }
    const int32_t nb = (n + kTile - 1) / kTile;
    k_mirror_shared<<<dim3(nb, nb), dim3(kTile, 8), 0, s>>>(S, N, n, t, d_part, p);
    RK_LAUNCH_CHECK(err, "k_mirror_shared");
    RK_CUDA_CHECK(err, cudaStreamSynchronize(s));
    const double t2 = rk_omp_wtime();
    arrive(sh, p, 2, true); // every part's reads are done: the tiles may go
    *wait_s = t1 - t0;
    *mirror_s = t2 - t1;
    mem.release(d_part);
    return RK_OK;
}

extern "C" int rk_gpu_sym_applies(const rk_knn_opts *o, const rk_gpu_opts *g)
{
    const rk_metric_row *r = rk_metric_row_of(o->sim.metric);
    // four or six sums a pair (two for msd and euclidean: measured slower once; the full-vector dot products)
    return r != NULL && r->symmetric && (r->sums == RK_SUMS_PEARSON || r->sums == RK_SUMS_PRODUCTS) &&
           o->k <= RK_GPU_MAX_K &&
           !(g != NULL && (g->full_rows || g->host_select || g->sims_route == RK_GPU_SIMS_SPGEMM ||
                           g->query_route == RK_GPU_QUERY_KERNEL));
}

extern "C" rk_status rk_gpu_sym_create(int n_parts, const int *devices, const int32_t *part_of, const int64_t *cost,
                                       int32_t n_items, rk_gpu_sym **out, rk_error *err)
{
    *out = NULL;
    if (n_parts < 2 || n_parts > kSymMaxParts || n_items < 0)
        return rk_error_set(err, RK_E_ARG, "a shared symmetric tile takes 2 to %d parts (got %d) and items >= 0",
                            kSymMaxParts, n_parts);
    for (int32_t i = 0; i < n_items; i++)
        if (part_of[i] < 0 || part_of[i] >= n_parts)
            return rk_error_set(err, RK_E_ARG, "item %d is of part %d, not one of the %d", i, part_of[i], n_parts);
    rk_gpu_sym *sh = new (std::nothrow) rk_gpu_sym;
    if (sh == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory for a shared symmetric tile");
    try {
        sh->n_parts = n_parts;
        sh->n_items = n_items;
        sh->devices.assign(devices, devices + n_parts);
        sh->part_of.assign(part_of, part_of + n_items);
        sh->cost.assign(cost, cost + n_items);
        sh->step.assign((size_t)n_parts, 0);
        sh->S.assign((size_t)n_parts, NULL);
        sh->N.assign((size_t)n_parts, NULL);
    } catch (...) {
        delete sh;
        return rk_error_set(err, RK_E_NOMEM, "out of memory for a shared symmetric tile of %d items", n_items);
    }
    *out = sh;
    return RK_OK;
}

extern "C" void rk_gpu_sym_leave(rk_gpu_sym *sh, int part)
{
    rk_gpu_sym_leave_part(sh, part);
}

extern "C" int rk_gpu_sym_shared(const rk_gpu_sym *sh)
{
    return sh != NULL && sh->shared;
}

extern "C" void rk_gpu_sym_free(rk_gpu_sym *sh)
{
    delete sh;
}
