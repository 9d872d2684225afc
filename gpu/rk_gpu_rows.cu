// The training rows uploaded while the loader parses later blocks
// (rk_gpu_rows_* in rk_gpu.h), and their raw ids mapped to dense indices on
// the device for rk_gpu_csr_build (rk_gpu_rows_columns).  The CPU twin of
// the mapping is the loader's id map (etl/rk_ids.c), which defines it: an
// id's index is the number of distinct ids below it, here the popcounts of
// a bitmap of the map's values before the id's bit.
//
// The parse runs on every core but one (the CUDA warm-up's, idle once the
// context is up): one thread copies each block's rows (16 bytes of raw ids
// and a 4-byte rating a row) into two pinned buffers and the copy engine
// takes them on a stream of its own, so that the ratings cross PCIe while
// later blocks are parsed instead of after the ids stage.  The load never
// waits for the context: a thread still starting it, or lagging at the
// load's end by more than kTailMax rows, is dropped, and rk_gpu_csr_build
// uploads the host's indices as before (the same matrix).
#include "rk_gpu_internal.h"

#include <cub/device/device_scan.cuh>

#include <new>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

namespace {

constexpr int64_t kTailMax = (int64_t)8 << 20;      // rows left to copy the load's end waits for, at most
constexpr int64_t kPieceRows = stager::kPiece / 8;   // rows of one column in one pinned buffer
constexpr uint64_t kRangeMax = (uint64_t)1 << 31;    // ids' span a bitmap maps (256 MB of bits)
constexpr int kThreads = 256;
const char *const kGrouped = "the ratings came grouped by user (the host's sort keeps them)";

unsigned grid_for(int64_t n)
{
    const int64_t b = (n + kThreads - 1) / kThreads;
    return (unsigned)std::min<int64_t>(std::max<int64_t>(b, 1), 65535 * 8);
}

double now_s()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

} // namespace

struct rk_gpu_rows {
    int device = -1;
    int64_t min_rows = 0;
    int (*device_fn)(void *) = NULL; // the device once the context is up (rk_gpu_rows_new)
    void *device_ud = NULL;
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
    pthread_t th;
    // under mu
    bool started = false;  // the thread exists
    const int64_t *u = NULL, *i = NULL;
    const float *r = NULL;
    int64_t cap = 0, ready_to = 0, sent_to = 0;
    bool grouped = true;   // the users never decreased in rows [0, scanned_to): nothing is copied yet
    int64_t scanned_to = 0, last_u = INT64_MIN;
    bool done = false;     // hold(1): every row was handed
    bool stop = false;     // dropped: the thread stops before its next piece
    bool busy = false;     // the thread reads the rows now
    bool dev = false;      // the device's context is up: the thread sets up or copies
    bool complete = false; // every row copied, the stream synchronized
    bool exited = false;
    bool taken = false;
    double wait_s = 0;
    char why[160] = "";
    // the thread's
    cudaStream_t st = NULL;
    int64_t *d_u = NULL, *d_i = NULL;
    float *d_r = NULL;
    char *pin[2] = {NULL, NULL};
    cudaEvent_t ev[2] = {NULL, NULL};
    int next = 0;
};

namespace {

// The first reason the upload stopped (under mu).
void stop_why(rk_gpu_rows *p, const char *fmt, ...)
{
    if (!p->stop && p->why[0] == '\0') {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->why, sizeof p->why, fmt, ap);
        va_end(ap);
    }
    p->stop = true;
    pthread_cond_broadcast(&p->cv);
}

// A failing call stops the upload (not under mu).
bool cuda_ok(rk_gpu_rows *p, cudaError_t e, const char *what)
{
    if (e == cudaSuccess) return true;
    cudaGetLastError();
    pthread_mutex_lock(&p->mu);
    stop_why(p, "%s: %s", what, cudaGetErrorString(e));
    pthread_mutex_unlock(&p->mu);
    return false;
}

bool setup(rk_gpu_rows *p, int64_t cap)
{
    rk_error e;
    if (!cuda_ok(p, cudaSetDevice(p->device), "cudaSetDevice") ||
        !cuda_ok(p, cudaStreamCreateWithFlags(&p->st, cudaStreamNonBlocking), "cudaStreamCreate") ||
        !cuda_ok(p, cudaMalloc((void **)&p->d_u, (size_t)cap * 8), "cudaMalloc") ||
        !cuda_ok(p, cudaMalloc((void **)&p->d_i, (size_t)cap * 8), "cudaMalloc") ||
        !cuda_ok(p, cudaMalloc((void **)&p->d_r, (size_t)cap * 4), "cudaMalloc"))
        return false;
    for (int b = 0; b < 2; b++) {
        if (rk_gpu_pinned_take(&p->pin[b], &e) != RK_OK) {
            pthread_mutex_lock(&p->mu);
            stop_why(p, "%s", e.msg);
            pthread_mutex_unlock(&p->mu);
            return false;
        }
        if (!cuda_ok(p, cudaEventCreateWithFlags(&p->ev[b], cudaEventDisableTiming), "cudaEventCreate")) return false;
    }
    return true;
}

// bytes of one column through the next pinned buffer (not under mu).
bool put(rk_gpu_rows *p, void *dst, const void *src, size_t bytes)
{
    const int b = p->next;
    p->next ^= 1;
    if (!cuda_ok(p, cudaEventSynchronize(p->ev[b]), "cudaEventSynchronize")) return false;
    memcpy(p->pin[b], src, bytes);
    return cuda_ok(p, cudaMemcpyAsync(dst, p->pin[b], bytes, cudaMemcpyHostToDevice, p->st), "cudaMemcpyAsync") &&
           cuda_ok(p, cudaEventRecord(p->ev[b], p->st), "cudaEventRecord");
}

// The copies finished, the pinned buffers given back, the stream and its
// events destroyed (the thread's, as it ends).
void release_host(rk_gpu_rows *p)
{
    if (p->st != NULL) cudaStreamSynchronize(p->st);
    for (int b = 0; b < 2; b++) {
        if (p->ev[b] != NULL) cudaEventDestroy(p->ev[b]);
        if (p->pin[b] != NULL) rk_gpu_pinned_give(p->pin[b]);
        p->ev[b] = NULL;
        p->pin[b] = NULL;
    }
    if (p->st != NULL) cudaStreamDestroy(p->st);
    p->st = NULL;
    cudaGetLastError();
}

// The device once its context is up, polled every millisecond; -1 when the
// upload was dropped meanwhile or no GPU is usable (under mu).
int wait_device(rk_gpu_rows *p)
{
    for (;;) {
        if (p->stop) return -1;
        const int d = p->device_fn(p->device_ud);
        if (d >= 0) return d;
        if (d == -1) {
            stop_why(p, "no usable GPU");
            return -1;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 1000000;
        if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
        pthread_cond_timedwait(&p->cv, &p->mu, &ts);
    }
}

// The thread: pieces of rows as they become final, until every row is
// copied (done) or the upload is dropped (stop).
void *worker(void *arg)
{
    rk_gpu_rows *p = (rk_gpu_rows *)arg;
    pthread_mutex_lock(&p->mu);
    const int64_t cap = p->cap;
    p->device = wait_device(p);
    p->dev = p->device >= 0;
    pthread_mutex_unlock(&p->mu);
    const bool ok = p->device >= 0 && setup(p, cap); // busy stays false
    pthread_mutex_lock(&p->mu);
    while (ok && !p->stop) {
        if (p->grouped && p->scanned_to < p->ready_to) { /* a file grouped by user is the host's to sort */
            const int64_t a = p->scanned_to, b = std::min(p->ready_to, a + kPieceRows);
            const int64_t *u = p->u;
            int64_t last = p->last_u, k = a;
            p->busy = true;
            pthread_mutex_unlock(&p->mu);
            for (; k < b && u[k] >= last; k++) last = u[k];
            pthread_mutex_lock(&p->mu);
            p->busy = false;
            p->grouped = k == b;
            p->scanned_to = b;
            p->last_u = last;
            pthread_cond_broadcast(&p->cv);
        } else if (!p->grouped && p->sent_to < p->ready_to) {
            const int64_t a = p->sent_to, b = std::min(p->ready_to, a + kPieceRows);
            const int64_t *u = p->u, *i = p->i;
            const float *r = p->r;
            p->busy = true;
            pthread_mutex_unlock(&p->mu);
            const size_t m = (size_t)(b - a);
            const bool good = put(p, p->d_u + a, u + a, m * 8) && put(p, p->d_i + a, i + a, m * 8) &&
                              put(p, p->d_r + a, r + a, m * 4);
            pthread_mutex_lock(&p->mu);
            p->busy = false;
            if (good) p->sent_to = b;
            pthread_cond_broadcast(&p->cv);
        } else if (p->done && p->grouped) { /* scanned to the end: nothing to copy */
            stop_why(p, "%s", kGrouped);
        } else if (p->done) {
            pthread_mutex_unlock(&p->mu);
            const bool good = cuda_ok(p, cudaStreamSynchronize(p->st), "cudaStreamSynchronize");
            pthread_mutex_lock(&p->mu);
            p->complete = good && !p->stop;
            break;
        } else {
            pthread_cond_wait(&p->cv, &p->mu);
        }
    }
    pthread_mutex_unlock(&p->mu);
    release_host(p); /* the pinned buffers back to the pool for the sort's own copies */
    pthread_mutex_lock(&p->mu);
    p->exited = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

// The rows' device buffers freed (from any thread; the device restored).
void drop_device(rk_gpu_rows *p)
{
    if (p->device < 0 || (p->d_u == NULL && p->d_i == NULL && p->d_r == NULL)) return;
    int old = -1;
    cudaGetDevice(&old);
    cudaSetDevice(p->device);
    cudaFree(p->d_u);
    cudaFree(p->d_i);
    cudaFree(p->d_r);
    p->d_u = p->d_i = NULL;
    p->d_r = NULL;
    cudaGetLastError();
    if (old >= 0) cudaSetDevice(old);
}

} // namespace

extern "C" rk_gpu_rows *rk_gpu_rows_new(int64_t min_rows, int (*device)(void *ud), void *ud)
{
    rk_gpu_rows *p = new (std::nothrow) rk_gpu_rows;
    if (p == NULL) return NULL;
    p->min_rows = min_rows;
    p->device_fn = device;
    p->device_ud = ud;
    return p;
}

extern "C" void rk_gpu_rows_ready(void *ud, const int64_t *u, const int64_t *i, const float *r, int64_t cap,
                                  int64_t from, int64_t to)
{
    rk_gpu_rows *p = (rk_gpu_rows *)ud;
    pthread_mutex_lock(&p->mu);
    if (p->stop || p->done) {
        pthread_mutex_unlock(&p->mu);
        return;
    }
    if (!p->started) {
        p->u = u, p->i = i, p->r = r, p->cap = cap;
        if (cap < p->min_rows) {
            stop_why(p, "%lld rows at most: the host's upload is as fast", (long long)cap);
        } else if (pthread_create(&p->th, NULL, worker, p) != 0) {
            stop_why(p, "no thread for the upload");
        } else {
            p->started = true;
        }
    } else if (u != p->u || i != p->i || r != p->r || from != p->ready_to || to > p->cap) {
        stop_why(p, "the rows moved"); // rk_rows_feed's callers never do this
    }
    if (!p->stop) p->ready_to = to;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

extern "C" void rk_gpu_rows_hold(void *ud, int done)
{
    rk_gpu_rows *p = (rk_gpu_rows *)ud;
    const double t0 = now_s();
    pthread_mutex_lock(&p->mu);
    if (!p->started) {
        stop_why(p, done ? "no rows were handed" : "the rows had to move or hold string ids");
    } else if (!done) {
        stop_why(p, "the rows had to move or hold string ids");
    } else if (!p->stop) {
        p->done = true;
        pthread_cond_broadcast(&p->cv);
        const int64_t left = p->ready_to - p->sent_to; /* all of them while grouped so far */
        if (!p->dev && p->device_fn(p->device_ud) < 0) /* never wait for the context */
            stop_why(p, "the device was not ready when the load ended");
        else if (left > kTailMax && p->grouped && p->scanned_to == p->ready_to)
            stop_why(p, "%s", kGrouped);
        else if (left > kTailMax)
            stop_why(p, "%lld rows were left to copy when the load ended", (long long)left);
        else
            while (!p->exited) pthread_cond_wait(&p->cv, &p->mu);
    }
    while (p->busy) pthread_cond_wait(&p->cv, &p->mu); // nothing reads the rows any more
    p->wait_s = now_s() - t0;
    pthread_mutex_unlock(&p->mu);
}

extern "C" void rk_gpu_rows_stats(const rk_gpu_rows *p, rk_gpu_rows_report *st)
{
    memset(st, 0, sizeof *st);
    if (p == NULL) return;
    pthread_mutex_lock((pthread_mutex_t *)&p->mu);
    st->complete = p->complete;
    st->taken = p->taken;
    st->rows = p->sent_to;
    st->wait_s = p->wait_s;
    snprintf(st->why, sizeof st->why, "%s", p->taken ? "" : p->why[0] != '\0' ? p->why : "not used");
    pthread_mutex_unlock((pthread_mutex_t *)&p->mu);
}

extern "C" void rk_gpu_rows_free(rk_gpu_rows *p)
{
    if (p == NULL) return;
    pthread_mutex_lock(&p->mu);
    if (!p->exited) stop_why(p, "freed before the load ended");
    const bool joined = p->started;
    pthread_mutex_unlock(&p->mu);
    if (joined) pthread_join(p->th, NULL);
    drop_device(p);
    delete p;
}

// ---- the ids mapped on the device ----------------------------------------------

namespace {

__global__ void k_bits(const int64_t *vals, int64_t d, int64_t lo, unsigned long long *bits)
{
    for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < d; j += (int64_t)gridDim.x * blockDim.x) {
        const uint64_t p = (uint64_t)vals[j] - (uint64_t)lo;
        atomicOr(&bits[p >> 6], 1ULL << (p & 63));
    }
}

__global__ void k_popc(const unsigned long long *bits, int64_t words, int32_t *cnt)
{
    for (int64_t w = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; w < words; w += (int64_t)gridDim.x * blockDim.x)
        cnt[w] = __popcll(bits[w]);
}

// raw[j]'s index: the ids below it (before[] of its word and the bits
// below it there); an id outside the map is counted in *bad.
__global__ void k_map(const int64_t *raw, int64_t n, int64_t lo, uint64_t range, const unsigned long long *bits,
                      const int32_t *before, int32_t *dense, unsigned long long *bad)
{
    for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < n; j += (int64_t)gridDim.x * blockDim.x) {
        const uint64_t p = (uint64_t)raw[j] - (uint64_t)lo;
        const unsigned long long w = p < range ? bits[p >> 6] : 0ULL, bit = 1ULL << (p & 63);
        if (!(w & bit)) {
            atomicAdd(bad, 1ULL);
            dense[j] = 0;
        } else {
            dense[j] = before[p >> 6] + __popcll(w & (bit - 1));
        }
    }
}

// One column of raw ids into dense indices with the map of vals[0..d).
rk_status map_column(const int64_t *raw, int64_t n, const int64_t *vals, int32_t d, dev_mem &mem, stager &sg,
                     cudaStream_t s, int32_t *dense, unsigned long long *d_bad, rk_error *err)
{
    const int64_t lo = vals[0];
    const uint64_t range = (uint64_t)vals[d - 1] - (uint64_t)lo + 1;
    const int64_t words = (int64_t)((range + 63) / 64);
    int64_t *d_vals;
    unsigned long long *d_bits;
    int32_t *d_cnt, *d_before;
    RK_FORWARD(upload(&d_vals, vals, (size_t)d, mem, sg, s, err));
    RK_FORWARD(mem.alloc(&d_bits, (size_t)words, err));
    RK_FORWARD(mem.alloc(&d_cnt, (size_t)words, err));
    RK_FORWARD(mem.alloc(&d_before, (size_t)words, err));
    size_t scan_bytes = 0;
    RK_CUDA_CHECK(err, cub::DeviceScan::ExclusiveSum(NULL, scan_bytes, d_cnt, d_before, words, s));
    void *d_scan;
    RK_FORWARD(mem.alloc((char **)&d_scan, scan_bytes, err));
    RK_CUDA_CHECK(err, cudaMemsetAsync(d_bits, 0, (size_t)words * sizeof *d_bits, s));
    k_bits<<<grid_for(d), kThreads, 0, s>>>(d_vals, d, lo, d_bits);
    RK_LAUNCH_CHECK(err, "k_bits");
    k_popc<<<grid_for(words), kThreads, 0, s>>>(d_bits, words, d_cnt);
    RK_LAUNCH_CHECK(err, "k_popc");
    RK_CUDA_CHECK(err, cub::DeviceScan::ExclusiveSum(d_scan, scan_bytes, d_cnt, d_before, words, s));
    k_map<<<grid_for(n), kThreads, 0, s>>>(raw, n, lo, range, d_bits, d_before, dense, d_bad);
    RK_LAUNCH_CHECK(err, "k_map");
    return RK_OK;
}

// Why the rows on the device cannot be the columns of n ratings; NULL: they can.
const char *unusable(const rk_gpu_rows *p, const rk_gpu_opts *g, int64_t n, int32_t n_users, int32_t n_items)
{
    if (!p->complete) return p->why[0] != '\0' ? p->why : "the upload did not finish";
    if (p->sent_to != n) return "the rows on the device are not the ratings sorted";
    if (g->user_ids == NULL || g->item_ids == NULL) return "ids that are not integers";
    if (n_users < 1 || n_items < 1) return "no ids";
    const int64_t *v[2] = {g->user_ids, g->item_ids};
    const int32_t d[2] = {n_users, n_items};
    for (int c = 0; c < 2; c++)
        if ((uint64_t)v[c][d[c] - 1] - (uint64_t)v[c][0] >= kRangeMax) return "ids too far apart for a bitmap";
    return NULL;
}

} // namespace

rk_status rk_gpu_rows_columns(const rk_gpu_opts *g, int64_t n, int32_t n_users, int32_t n_items, dev_mem &mem,
                              stager &sg, cudaStream_t s, int32_t **d_user, int32_t **d_item, float **d_rating,
                              int *mapped, rk_error *err)
{
    *mapped = 0;
    rk_gpu_rows *p = g->rows;
    pthread_mutex_lock(&p->mu);
    const char *no = unusable(p, g, n, n_users, n_items);
    if (no != NULL && no != p->why) snprintf(p->why, sizeof p->why, "%s", no);
    pthread_mutex_unlock(&p->mu);
    if (no != NULL) {
        drop_device(p);
        return RK_OK;
    }
    unsigned long long *d_bad, bad = 0;
    RK_FORWARD(mem.alloc(d_user, (size_t)n, err));
    RK_FORWARD(mem.alloc(d_item, (size_t)n, err));
    RK_FORWARD(mem.alloc(d_rating, (size_t)n, err));
    RK_FORWARD(mem.alloc(&d_bad, 1, err));
    RK_CUDA_CHECK(err, cudaMemsetAsync(d_bad, 0, sizeof *d_bad, s));
    RK_FORWARD(map_column(p->d_u, n, g->user_ids, n_users, mem, sg, s, *d_user, d_bad, err));
    RK_FORWARD(map_column(p->d_i, n, g->item_ids, n_items, mem, sg, s, *d_item, d_bad, err));
    RK_CUDA_CHECK(err, cudaMemcpyAsync(*d_rating, p->d_r, (size_t)n * sizeof **d_rating, cudaMemcpyDeviceToDevice, s));
    RK_CUDA_CHECK(err, cudaMemcpyAsync(&bad, d_bad, sizeof bad, cudaMemcpyDeviceToHost, s));
    RK_CUDA_CHECK(err, cudaStreamSynchronize(s));
    drop_device(p);
    pthread_mutex_lock(&p->mu);
    if (bad > 0) snprintf(p->why, sizeof p->why, "%llu ids on the device were not in the maps", bad);
    p->taken = bad == 0;
    pthread_mutex_unlock(&p->mu);
    *mapped = bad == 0;
    return RK_OK;
}
