// The training rows uploaded while the loader parses later blocks
// (rk_gpu_rows_* in rk_gpu.h), and their raw ids mapped to dense indices on
// the device for rk_gpu_csr_build (rk_gpu_rows_columns).  The CPU twin of
// the mapping is the loader's id map (etl/rk_ids.c), which defines it: an
// id's index is the number of distinct ids below it, here the popcounts of
// a bitmap of the map's values before the id's bit.
//
// The parse runs on every core but one (the CUDA warm-up's, idle once the
// context is up).  On that core one thread registers the rows' pages with
// the driver (cudaHostRegister, in pieces of kPieceBytes as blocks become
// final: their 16 bytes of raw ids and 4-byte rating a row) and the copy
// engine reads them from there on a stream of its own, so that the ratings
// cross PCIe while later blocks are parsed, with no copy by a core.  A first
// version copied them through two pinned buffers: one core's copies (about
// 6 GB/s) fell behind the parse and slowed it (BENCHMARKS.md).  The
// registration is undone in the thread once the copies are done, while the
// ids stage runs, and the loader waits for that (release) before it cuts or
// frees the rows.  The load never waits for the context: a thread still
// waiting for it, or lagging at the load's end by more than kTailMax rows,
// is dropped, and rk_gpu_csr_build uploads the host's indices as before
// (the same matrix).
#include "rk_gpu_internal.h"

#include <cub/device/device_scan.cuh>

#include <new>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

namespace {

constexpr int64_t kTailMax = (int64_t)16 << 20;          // rows left to copy the load's end waits for, at most
constexpr int64_t kScanRows = (int64_t)1 << 20;          // rows of the users scanned at a time
constexpr uintptr_t kPieceBytes = (uintptr_t)32 << 20;   // a column's bytes registered at a time, at least
constexpr uintptr_t kAlign = (uintptr_t)2 << 20;         // pieces end on huge-page boundaries
constexpr uint64_t kRangeMax = (uint64_t)1 << 31;        // ids' span a bitmap maps (256 MB of bits)
constexpr int kThreads = 256;
constexpr int kMaxPieces = 4096;
const char *const kGrouped = "the ratings came grouped by user (the host's sort keeps them)";

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
    const void *col[3] = {NULL, NULL, NULL}; // u, i (8 bytes a row), r (4)
    int64_t cap = 0, ready_to = 0, sent_to = 0;
    bool grouped = true;   // the users never decreased in rows [0, scanned_to): nothing is copied yet
    int64_t scanned_to = 0, last_u = INT64_MIN;
    bool done = false;     // hold(1): every row was handed
    bool stop = false;     // dropped: the thread stops before its next piece
    bool busy = false;     // the thread reads the rows now (the scan)
    bool dev = false;      // the device's context is up: the thread sets up or copies
    bool complete = false; // every row copied, the stream synchronized
    bool copied = false;   // the copies are over (complete or not): nothing reads the rows
    bool exited = false;   // the registration undone, the thread ended
    bool taken = false;
    double wait_s = 0;
    char why[160] = "";
    // the thread's
    cudaStream_t st = NULL;
    void *d_col[3] = {NULL, NULL, NULL};
    uintptr_t reg_end[3] = {0, 0, 0};   // each column's bytes registered, from its start
    const void *piece[kMaxPieces];      // the registered pieces, to undo
    int n_pieces = 0;
    uintptr_t ends[3][kMaxPieces];      // each column's pieces' ends (bytes from its start), in order
    int n_ends[3] = {0, 0, 0}, at[3] = {0, 0, 0}; // and the piece its next copy starts in
};

namespace {

constexpr size_t kRowBytes[3] = {8, 8, 4};

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
    if (!cuda_ok(p, cudaSetDevice(p->device), "cudaSetDevice") ||
        !cuda_ok(p, cudaStreamCreateWithFlags(&p->st, cudaStreamNonBlocking), "cudaStreamCreate"))
        return false;
    for (int c = 0; c < 3; c++)
        if (!cuda_ok(p, cudaMalloc(&p->d_col[c], (size_t)cap * kRowBytes[c]), "cudaMalloc")) return false;
    return true;
}

// Column c's pages registered up to the row `to` (its last piece ends on a
// huge-page boundary unless `last`), in pieces of kPieceBytes at least:
// pieces never share a page, so none is registered twice (not under mu).
bool register_to(rk_gpu_rows *p, int c, int64_t to, bool last)
{
    const uintptr_t base = (uintptr_t)p->col[c], end = base + (uintptr_t)to * kRowBytes[c];
    uintptr_t want = last ? end : end & ~(kAlign - 1);
    if (want <= base + p->reg_end[c] || (!last && want - (base + p->reg_end[c]) < kPieceBytes)) return true;
    if (p->n_pieces == kMaxPieces) {
        pthread_mutex_lock(&p->mu);
        stop_why(p, "more than %d pieces to register", kMaxPieces);
        pthread_mutex_unlock(&p->mu);
        return false;
    }
    void *from = (void *)(base + p->reg_end[c]);
    if (!cuda_ok(p, cudaHostRegister(from, want - (uintptr_t)from, cudaHostRegisterDefault), "cudaHostRegister"))
        return false;
    p->piece[p->n_pieces++] = from;
    p->reg_end[c] = want - base;
    p->ends[c][p->n_ends[c]++] = want - base;
    return true;
}

// The rows [a, b) of every column copied from their registered pages, a
// copy a piece (the driver takes none that runs over from one registered
// range into the next); not under mu: the copies read them after the call
// returns.
bool copy_rows(rk_gpu_rows *p, int64_t a, int64_t b)
{
    for (int c = 0; c < 3; c++) {
        const uintptr_t w = kRowBytes[c], to = (uintptr_t)b * w;
        for (uintptr_t from = (uintptr_t)a * w; from < to;) {
            while (p->ends[c][p->at[c]] <= from) p->at[c]++; /* rows below reg_end lie in a piece */
            const uintptr_t e = std::min(to, p->ends[c][p->at[c]]);
            if (!cuda_ok(p, cudaMemcpyAsync((char *)p->d_col[c] + from, (const char *)p->col[c] + from, e - from,
                                            cudaMemcpyHostToDevice, p->st),
                         "cudaMemcpyAsync"))
                return false;
            from = e;
        }
    }
    return true;
}

// The rows registered in every column (the copies may read them).
int64_t rows_registered(const rk_gpu_rows *p)
{
    int64_t n = INT64_MAX;
    for (int c = 0; c < 3; c++) n = std::min<int64_t>(n, (int64_t)(p->reg_end[c] / kRowBytes[c]));
    return n;
}

// The copies finished, the pages' registration undone, the stream
// destroyed (the thread's, as it ends; not under mu).
void release_host(rk_gpu_rows *p)
{
    if (p->st != NULL) cudaStreamSynchronize(p->st);
    pthread_mutex_lock(&p->mu);
    p->copied = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int k = 0; k < p->n_pieces; k++) cudaHostUnregister((void *)p->piece[k]);
    p->n_pieces = 0;
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

// One step of the users' scan: rows [scanned_to, +kScanRows) (under mu,
// released while reading).
void scan_step(rk_gpu_rows *p)
{
    const int64_t a = p->scanned_to, b = std::min(p->ready_to, a + kScanRows);
    const int64_t *u = (const int64_t *)p->col[0];
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
}

// One step of the copies: the final rows' pages registered, and the rows
// registered in every column copied (under mu, released while calling).
void copy_step(rk_gpu_rows *p)
{
    const int64_t to = p->ready_to;
    const bool last = p->done;
    pthread_mutex_unlock(&p->mu);
    bool good = true;
    for (int c = 0; c < 3 && good; c++) good = register_to(p, c, to, last);
    const int64_t b = std::min(to, rows_registered(p));
    pthread_mutex_lock(&p->mu);
    const int64_t a = p->sent_to;
    if (good && !p->stop && b > a) {
        pthread_mutex_unlock(&p->mu);
        good = copy_rows(p, a, b);
        pthread_mutex_lock(&p->mu);
        if (good) p->sent_to = b;
    }
    if (good && b <= a && !last && p->ready_to == to && !p->done && !p->stop)
        pthread_cond_wait(&p->cv, &p->mu); /* less than a piece: wait for rows */
    pthread_cond_broadcast(&p->cv);
}

// The thread: the users scanned while they never decrease (a file grouped
// by user is the host's to sort), then the rows copied as they become
// final, until every row is copied (done) or the upload is dropped (stop).
void *worker(void *arg)
{
    rk_gpu_rows *p = (rk_gpu_rows *)arg;
    pthread_mutex_lock(&p->mu);
    const int64_t cap = p->cap;
    p->device = wait_device(p);
    p->dev = p->device >= 0;
    pthread_mutex_unlock(&p->mu);
    const bool ok = p->device >= 0 && setup(p, cap);
    pthread_mutex_lock(&p->mu);
    while (ok && !p->stop) {
        if (p->grouped && p->scanned_to < p->ready_to) {
            scan_step(p);
        } else if (p->grouped && p->done) { /* scanned to the end: nothing to copy */
            stop_why(p, "%s", kGrouped);
        } else if (!p->grouped && p->sent_to < p->ready_to) {
            copy_step(p);
        } else if (!p->grouped && p->done) {
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
    release_host(p);
    pthread_mutex_lock(&p->mu);
    p->exited = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

// The rows' device buffers freed (from any thread; the device restored).
void drop_device(rk_gpu_rows *p)
{
    if (p->device < 0 || (p->d_col[0] == NULL && p->d_col[1] == NULL && p->d_col[2] == NULL)) return;
    int old = -1;
    cudaGetDevice(&old);
    cudaSetDevice(p->device);
    for (int c = 0; c < 3; c++) cudaFree(p->d_col[c]);
    p->d_col[0] = p->d_col[1] = p->d_col[2] = NULL;
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
        p->col[0] = u, p->col[1] = i, p->col[2] = r, p->cap = cap;
        if (cap < p->min_rows) {
            stop_why(p, "%lld rows at most: the host's upload is as fast", (long long)cap);
        } else if (pthread_create(&p->th, NULL, worker, p) != 0) {
            stop_why(p, "no thread for the upload");
        } else {
            p->started = true;
        }
    } else if (u != p->col[0] || i != p->col[1] || r != p->col[2] || from != p->ready_to || to > p->cap) {
        stop_why(p, "the rows moved"); // rk_rows_feed's callers never do this
    }
    if (!p->stop) p->ready_to = to;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

extern "C" void rk_gpu_rows_hold(void *ud, int done)
{
    rk_gpu_rows *p = (rk_gpu_rows *)ud;
    const double t0 = rk_omp_wtime();
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
            while (!p->copied) pthread_cond_wait(&p->cv, &p->mu);
    }
    /* nothing reads the rows any more: the scan is over, the copies too */
    while (p->busy || (p->started && !p->copied)) pthread_cond_wait(&p->cv, &p->mu);
    p->wait_s = rk_omp_wtime() - t0;
    pthread_mutex_unlock(&p->mu);
}

extern "C" void rk_gpu_rows_release(void *ud)
{
    rk_gpu_rows *p = (rk_gpu_rows *)ud;
    pthread_mutex_lock(&p->mu);
    if (!p->copied) stop_why(p, "released before the load ended"); /* once held, a no-op but for the wait */
    while (p->started && !p->exited) pthread_cond_wait(&p->cv, &p->mu);
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
    rk_gpu_rows_release(p);
    if (p->started) pthread_join(p->th, NULL);
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
    k_bits<<<rk_grid_for(d, kThreads), kThreads, 0, s>>>(d_vals, d, lo, d_bits);
    RK_LAUNCH_CHECK(err, "k_bits");
    k_popc<<<rk_grid_for(words, kThreads), kThreads, 0, s>>>(d_bits, words, d_cnt);
    RK_LAUNCH_CHECK(err, "k_popc");
    RK_CUDA_CHECK(err, cub::DeviceScan::ExclusiveSum(d_scan, scan_bytes, d_cnt, d_before, words, s));
    k_map<<<rk_grid_for(n, kThreads), kThreads, 0, s>>>(raw, n, lo, range, d_bits, d_before, dense, d_bad);
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
    RK_FORWARD(map_column((const int64_t *)p->d_col[0], n, g->user_ids, n_users, mem, sg, s, *d_user, d_bad, err));
    RK_FORWARD(map_column((const int64_t *)p->d_col[1], n, g->item_ids, n_items, mem, sg, s, *d_item, d_bad, err));
    RK_CUDA_CHECK(err, cudaMemcpyAsync(*d_rating, p->d_col[2], (size_t)n * sizeof **d_rating, cudaMemcpyDeviceToDevice,
                                       s));
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
