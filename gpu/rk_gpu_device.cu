// The GPU as a device (rk_gpu.h): whether one is usable, how many there
// are, starting a context ahead of time, what the engine takes, and the
// memory a call may still use; the error status of a failed CUDA call.
#include "rk_gpu_internal.h"
#include "rk_cusparse_dl.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>

rk_status rk_gpu_fail(rk_error *err, const char *call, const char *why, const char *file, int line)
{
    // the error is the status now: cleared, so that the next call (a later
    // engine's, a library's check of the last error) does not fail on it;
    // a sticky error (a fault in a kernel) stays, as it must
    cudaGetLastError();
    int dev = -1;
    cudaGetDevice(&dev);
    return rk_error_set(err, RK_E_GPU, "%s failed: %s (%s:%d, device %d)", call, why, file, line, dev);
}

rk_status rk_gpu_budget_left(const rk_gpu_opts *g, const dev_mem &mem, size_t *out, rk_error *err)
{
    size_t free_b = 0, total_b = 0;
    RK_CUDA_CHECK(err, cudaMemGetInfo(&free_b, &total_b));
    size_t budget = free_b > ((size_t)512 << 20) ? free_b - ((size_t)512 << 20) : 0;
    if (g != NULL && g->memory_cap > 0)
        budget = g->memory_cap > mem.bytes ? std::min(budget, g->memory_cap - mem.bytes) : 0;
    *out = budget;
    return RK_OK;
}

// The driver is asked first; cuSPARSE is loaded (rk_cusparse_dl.c) only when
// it sees a device, so that a machine without one never opens the library:
// the reason then begins "no CUDA device" (--device auto runs on the CPU in
// silence, rk_backend_no_gpu_here); with a device, a missing library is the
// whole reason (a note under auto, exit 5 under --device gpu).
extern "C" int rk_gpu_available(char *buf, size_t cap)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        if (buf != NULL && cap > 0)
            snprintf(buf, cap, "no CUDA device: %s", e != cudaSuccess ? cudaGetErrorString(e) : "none found");
        cudaGetLastError();
        return 0;
    }
    char lib[240];
    if (!rk_cusparse_load(lib, sizeof lib)) {
        if (buf != NULL && cap > 0) snprintf(buf, cap, "%s", lib);
        return 0;
    }
    cudaDeviceProp p;
    e = cudaGetDeviceProperties(&p, 0);
    if (e != cudaSuccess) {
        if (buf != NULL && cap > 0) snprintf(buf, cap, "cudaGetDeviceProperties: %s", cudaGetErrorString(e));
        return 0;
    }
    if (p.major < 6) {
        if (buf != NULL && cap > 0) snprintf(buf, cap, "%s has compute capability %d.%d (6.0 needed)", p.name, p.major, p.minor);
        return 0;
    }
    if (buf != NULL && cap > 0) snprintf(buf, cap, "%s", p.name);
    return 1;
}

extern "C" int rk_gpu_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
}

extern "C" int rk_gpu_warmup(int device)
{
    bool ok = cudaSetDevice(device) == cudaSuccess && cudaFree(0) == cudaSuccess;
    if (!ok) cudaGetLastError();
    // the engine's first transposition paid cuSPARSE's set-up and the loading
    // of its kernels (BENCHMARKS.md, issue 21): done here, beside the load
    char why[8];
    if (ok && rk_cusparse_load(why, sizeof why)) {
        rk_error e;
        if (rk_gpu_transpose_warm(&e) != RK_OK) cudaGetLastError(); /* the engine will say what fails */
    }
    if (ok) { // the first call's pinned pieces, pinned here beside the load
        char *p[2] = {NULL, NULL};
        rk_error e;
        for (char *&b : p)
            if (rk_gpu_pinned_take(&b, &e) != RK_OK) cudaGetLastError();
        for (char *b : p)
            if (b != NULL) rk_gpu_pinned_give(b);
    }
    return ok ? 1 : 0;
}

// The pinned pieces of the stagers, kept for the process (two per call
// under way: a few at most).
static pthread_mutex_t pinned_lock = PTHREAD_MUTEX_INITIALIZER;
static std::vector<char *> pinned_pool;

rk_status rk_gpu_pinned_take(char **buf, rk_error *err)
{
    *buf = NULL;
    pthread_mutex_lock(&pinned_lock);
    if (!pinned_pool.empty()) {
        *buf = pinned_pool.back();
        pinned_pool.pop_back();
    }
    pthread_mutex_unlock(&pinned_lock);
    if (*buf != NULL) return RK_OK;
    // portable: the pieces serve every device of --gpus
    RK_CUDA_CHECK(err, cudaHostAlloc((void **)buf, stager::kPiece, cudaHostAllocPortable));
    return RK_OK;
}

void rk_gpu_pinned_give(char *buf)
{
    pthread_mutex_lock(&pinned_lock);
    try {
        pinned_pool.push_back(buf);
    } catch (...) { // no room to keep it: freed (waits for the device)
        cudaFreeHost(buf);
    }
    pthread_mutex_unlock(&pinned_lock);
}

// The user-major matrix the data stage's sort left on the device
// (rk_gpu_csr_build with keep_csr): its host arrays name it.
namespace {
struct resident_csr {
    int device = -1;
    const int64_t *h_ptr = NULL;
    const int32_t *h_idx = NULL;
    const float *h_val = NULL;
    int32_t n_rows = 0, n_cols = 0;
    int64_t nnz = 0;
    int64_t *d_ptr = NULL;
    int32_t *d_idx = NULL;
    float *d_val = NULL;
};
// readers: the engine calls copying from it, on several devices at once
pthread_rwlock_t resident_lock = PTHREAD_RWLOCK_INITIALIZER;
resident_csr resident;

void resident_free(resident_csr &r)
{
    if (r.device >= 0) {
        int cur = -1;
        cudaGetDevice(&cur);
        cudaSetDevice(r.device);
        cudaFree(r.d_ptr);
        cudaFree(r.d_idx);
        cudaFree(r.d_val);
        if (cur >= 0) cudaSetDevice(cur);
        cudaGetLastError();
    }
    r = resident_csr();
}
} // namespace

rk_status rk_gpu_resident_keep(int device, const rk_csr *h, const int64_t *d_ptr, const int32_t *d_idx,
                               const float *d_val, cudaStream_t st, rk_error *err)
{
    resident_csr r;
    r.device = device;
    r.h_ptr = h->ptr;
    r.h_idx = h->idx;
    r.h_val = h->val;
    r.n_rows = h->n_rows;
    r.n_cols = h->n_cols;
    r.nnz = h->nnz;
    const size_t n = (size_t)(h->nnz > 0 ? h->nnz : 1);
    cudaError_t e = cudaMalloc((void **)&r.d_ptr, ((size_t)h->n_rows + 1) * sizeof *r.d_ptr);
    if (e == cudaSuccess) e = cudaMalloc((void **)&r.d_idx, n * sizeof *r.d_idx);
    if (e == cudaSuccess) e = cudaMalloc((void **)&r.d_val, n * sizeof *r.d_val);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(r.d_ptr, d_ptr, ((size_t)h->n_rows + 1) * sizeof *r.d_ptr, cudaMemcpyDeviceToDevice, st);
    if (e == cudaSuccess) e = cudaMemcpyAsync(r.d_idx, d_idx, (size_t)h->nnz * sizeof *r.d_idx, cudaMemcpyDeviceToDevice, st);
    if (e == cudaSuccess) e = cudaMemcpyAsync(r.d_val, d_val, (size_t)h->nnz * sizeof *r.d_val, cudaMemcpyDeviceToDevice, st);
    if (e == cudaSuccess) e = cudaStreamSynchronize(st);
    if (e != cudaSuccess) {
        resident_free(r);
        return rk_gpu_fail(err, "keeping the sorted matrix on the device", cudaGetErrorString(e), __FILE__, __LINE__);
    }
    pthread_rwlock_wrlock(&resident_lock);
    resident_free(resident);
    resident = r;
    pthread_rwlock_unlock(&resident_lock);
    return RK_OK;
}

// Another device's matrix: read over NVLink when this device may access
// that one's memory (peer access enabled here once; already enabled is no
// error), else not at all (through the host it would cross PCIe twice).
// RECKNN_GPU_PEER=0: not at all, each device uploads its own copy.
static bool peer_readable(int device, int holder)
{
    const char *env = getenv("RECKNN_GPU_PEER"); // 0: never (for measurements)
    if (env != NULL && strcmp(env, "0") == 0) return false;
    int can = 0;
    if (cudaDeviceCanAccessPeer(&can, device, holder) != cudaSuccess || !can) {
        cudaGetLastError();
        return false;
    }
    const cudaError_t e = cudaDeviceEnablePeerAccess(holder, 0); // the caller's current device is `device`
    if (e == cudaErrorPeerAccessAlreadyEnabled) cudaGetLastError();
    else if (e != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return true;
}

static cudaError_t copy_from(void *dst, int device, const void *src, int holder, size_t bytes, cudaStream_t st)
{
    if (device == holder) return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, st);
    return cudaMemcpyPeerAsync(dst, device, src, holder, bytes, st);
}

rk_status rk_gpu_resident_copy(int device, const rk_csr *h, int64_t *d_ptr, int32_t *d_idx, float *d_val,
                               cudaStream_t st, int *copied, rk_error *err)
{
    *copied = 0;
    pthread_rwlock_rdlock(&resident_lock);
    const resident_csr r = resident;
    const bool same = r.device >= 0 && r.h_ptr == h->ptr && r.h_idx == h->idx && r.n_rows == h->n_rows &&
                      r.n_cols == h->n_cols && r.nnz == h->nnz &&
                      (r.device == device || peer_readable(device, r.device));
    cudaError_t e = cudaSuccess;
    if (same) {
        const size_t n = (size_t)h->nnz;
        e = copy_from(d_ptr, device, r.d_ptr, r.device, ((size_t)h->n_rows + 1) * sizeof *d_ptr, st);
        if (e == cudaSuccess) e = copy_from(d_idx, device, r.d_idx, r.device, n * sizeof *d_idx, st);
        if (e == cudaSuccess && r.h_val == h->val)
            e = copy_from(d_val, device, r.d_val, r.device, n * sizeof *d_val, st);
        if (e == cudaSuccess) e = cudaStreamSynchronize(st); // the lock guards the copies' sources
        if (e == cudaSuccess) *copied = 1 | 2 | (r.h_val == h->val ? 4 : 0) | (r.device != device ? 8 : 0);
    }
    pthread_rwlock_unlock(&resident_lock);
    if (e != cudaSuccess) return rk_gpu_fail(err, "copying the kept matrix", cudaGetErrorString(e), __FILE__, __LINE__);
    return RK_OK;
}

extern "C" void rk_gpu_forget_csr(void)
{
    pthread_rwlock_wrlock(&resident_lock);
    resident_free(resident);
    pthread_rwlock_unlock(&resident_lock);
}

extern "C" int rk_gpu_supports(const rk_knn_opts *o, char *why, size_t cap)
{
    // k above the GPU's selection limit: the host selects from the GPU's rows
    (void)o;
    if (why != NULL && cap > 0) why[0] = '\0';
    return 1;
}
