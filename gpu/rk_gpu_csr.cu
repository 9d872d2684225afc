// The user-major matrix of the ratings, sorted on the GPU (rk_gpu_csr_build
// in rk_gpu.h).  Its CPU twin is rk_triples_dedupe_csr (etl/rk_sort.c),
// which defines the result: a stable sort by (user, item), so the same
// matrix bit for bit when no pair repeats.  The host's sort of a file in
// random order is a scatter into buckets and a radix sort of each (0.27-0.31
// s at Netflix size on 16 cores, BENCHMARKS.md); here the columns go up
// through the pinned stager, CUB sorts 64-bit keys (user, item) with the
// ratings' positions, one kernel writes the rows and counts the repeated
// pairs, and the matrix comes back through pinned buffers.  A repeated pair
// leaves the whole job to the host, whose duplicate policy it is.  Ratings
// left out (a holdout's) are sorted with the others, so that a pair rated
// twice is found across the parts, and skipped when the rows are written:
// the host's matrix after rk_split_holdout_csr.
#include "rk_gpu_internal.h"
#include "rk_mem.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <stdio.h>
#include <stdlib.h>

namespace {

constexpr int kThreads = 256;

int bits_for(uint64_t v)
{
    int b = 0;
    while (v > 0) {
        b++;
        v >>= 1;
    }
    return b;
}

unsigned grid_for(int64_t n)
{
    const int64_t b = (n + kThreads - 1) / kThreads;
    return (unsigned)std::min<int64_t>(std::max<int64_t>(b, 1), 65535 * 8);
}

__global__ void k_keys(const int32_t *user, const int32_t *item, int64_t n, int ibits, unsigned long long *key,
                       uint32_t *pos)
{
    for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < n; p += (int64_t)gridDim.x * blockDim.x) {
        key[p] = (unsigned long long)(uint32_t)user[p] << ibits | (uint32_t)item[p];
        pos[p] = (uint32_t)p;
    }
}

// Which sorted entries the matrix keeps (1) and which were left out (0):
// bit pos of leave_out set.
__global__ void k_kept(const uint32_t *pos, int64_t n, const unsigned long long *leave_out, uint32_t *kept)
{
    for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < n; p += (int64_t)gridDim.x * blockDim.x) {
        const uint32_t q = pos[p];
        kept[p] = (uint32_t)(~leave_out[q >> 6] >> (q & 63) & 1ULL);
    }
}

// The sorted keys into rows: each kept entry's item and rating at its place
// (at[p]: the kept entries before it; NULL: all are kept, p), the start of
// every user's row (users without ratings start where the next one does),
// and the repeated pairs counted among all the entries.
__global__ void k_rows(const unsigned long long *key, const uint32_t *pos, const float *rating, int64_t n, int ibits,
                       int32_t n_users, const uint32_t *at, const uint32_t *kept, int32_t *idx, float *val,
                       int64_t *ptr, unsigned long long *dups)
{
    const unsigned long long imask = ((unsigned long long)1 << ibits) - 1;
    for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < n; p += (int64_t)gridDim.x * blockDim.x) {
        const unsigned long long k = key[p];
        const int32_t u = (int32_t)(k >> ibits);
        const int64_t o = at != NULL ? (int64_t)at[p] : p;
        if (kept == NULL || kept[p]) {
            idx[o] = (int32_t)(k & imask);
            val[o] = rating[pos[p]];
        }
        int32_t from = 0;
        if (p > 0) {
            const unsigned long long prev = key[p - 1];
            if (prev == k) atomicAdd(dups, 1ULL);
            from = (int32_t)(prev >> ibits) + 1;
        }
        for (int32_t x = from; x <= u; x++) ptr[x] = o;
        if (p == n - 1) {
            const int64_t end = o + (kept == NULL || kept[p] ? 1 : 0);
            for (int32_t x = u + 1; x <= n_users; x++) ptr[x] = end;
        }
    }
}

// The host's checks before any copy: indices in range (else the host's sort
// reports them) and whether the users never decrease (the host's sort of
// such a file is a few copies: it keeps it).  @return 0 in range and not
// grouped by user, 1 grouped, -1 out of range.
int host_precheck(const rk_triples *t, int32_t n_users, int32_t n_items)
{
    int bad = 0, grouped = 1;
#pragma omp parallel for schedule(static) reduction(|| : bad) reduction(&& : grouped)
    for (int64_t p = 0; p < t->n; p++) {
        const int32_t u = t->user[p], i = t->item[p];
        bad = bad || u < 0 || u >= n_users || i < 0 || i >= n_items;
        grouped = grouped && (p == 0 || t->user[p - 1] <= u);
    }
    return bad ? -1 : grouped ? 1 : 0;
}

} // namespace

extern "C" rk_status rk_gpu_csr_build(const rk_triples *t, int32_t n_users, int32_t n_items,
                                      const uint64_t *leave_out, const rk_gpu_opts *g, rk_csr *out, int *taken,
                                      rk_error *err)
{
    *taken = 0;
    memset(out, 0, sizeof *out);
    const int64_t n = t->n;
    if (n <= 0 || n > (int64_t)UINT32_MAX || n_users <= 0 || n_items <= 0) return RK_OK;
    if (host_precheck(t, n_users, n_items) != 0) return RK_OK;
    const int ibits = std::max(1, bits_for((uint64_t)n_items - 1)), ubits = std::max(1, bits_for((uint64_t)n_users - 1));
    if (ibits + ubits > 63) return RK_OK;
    char why[256];
    if (!rk_gpu_available(why, sizeof why)) return rk_error_set(err, RK_E_GPU, "no usable GPU: %s", why);
    RK_CUDA_CHECK(err, cudaSetDevice(g != NULL ? g->device : 0));

    dev_mem mem;
    stream_events se;
    RK_CUDA_CHECK(err, cudaStreamCreate(&se.st));
    const cudaStream_t s = se.st;
    // memory: the columns, keys and positions twice, the left-out bits, CUB's
    // scratch (the sort's or the scan's); taken only within the budget
    size_t sort_bytes = 0, scan_bytes = 0;
    RK_CUDA_CHECK(err, cub::DeviceRadixSort::SortPairs(NULL, sort_bytes, (unsigned long long *)NULL,
                                                        (unsigned long long *)NULL, (uint32_t *)NULL,
                                                        (uint32_t *)NULL, n, 0, ibits + ubits, s));
    if (leave_out != NULL)
        RK_CUDA_CHECK(err, cub::DeviceScan::ExclusiveSum(NULL, scan_bytes, (uint32_t *)NULL, (uint32_t *)NULL, n, s));
    const size_t cub_bytes = std::max(sort_bytes, scan_bytes), words = ((size_t)n + 63) / 64;
    size_t budget = 0;
    RK_FORWARD(rk_gpu_budget_left(g, mem, &budget, err));
    const size_t need = (size_t)n * (3 * 4 + 2 * 8 + 2 * 4) + cub_bytes + ((size_t)n_users + 1) * 8 + words * 8;
    if (need > budget) return RK_OK;

    stager sg;
    RK_FORWARD(sg.init(err));
    int32_t *d_user, *d_item;
    float *d_rating;
    unsigned long long *d_key[2], *d_dups, *d_out = NULL;
    uint32_t *d_pos[2];
    int64_t *d_ptr;
    void *d_cub;
    RK_FORWARD(upload(&d_user, t->user, (size_t)n, mem, sg, s, err));
    RK_FORWARD(upload(&d_item, t->item, (size_t)n, mem, sg, s, err));
    RK_FORWARD(upload(&d_rating, t->rating, (size_t)n, mem, sg, s, err));
    if (leave_out != NULL) RK_FORWARD(upload(&d_out, (const unsigned long long *)leave_out, words, mem, sg, s, err));
    for (int b = 0; b < 2; b++) {
        RK_FORWARD(mem.alloc(&d_key[b], (size_t)n, err));
        RK_FORWARD(mem.alloc(&d_pos[b], (size_t)n, err));
    }
    RK_FORWARD(mem.alloc(&d_ptr, (size_t)n_users + 1, err));
    RK_FORWARD(mem.alloc(&d_dups, 1, err));
    RK_FORWARD(mem.alloc((char **)&d_cub, cub_bytes, err));
    RK_CUDA_CHECK(err, cudaMemsetAsync(d_dups, 0, sizeof *d_dups, s));
    k_keys<<<grid_for(n), kThreads, 0, s>>>(d_user, d_item, n, ibits, d_key[0], d_pos[0]);
    RK_LAUNCH_CHECK(err, "k_keys");
    cub::DoubleBuffer<unsigned long long> keys(d_key[0], d_key[1]);
    cub::DoubleBuffer<uint32_t> vals(d_pos[0], d_pos[1]);
    RK_CUDA_CHECK(err, cub::DeviceRadixSort::SortPairs(d_cub, sort_bytes, keys, vals, n, 0, ibits + ubits, s));
    // the left-out entries: kept flags and their exclusive sum, in the
    // keys' spare buffer (8 bytes a rating: two 4-byte arrays)
    uint32_t *d_kept = NULL, *d_at = NULL;
    if (leave_out != NULL) {
        d_kept = (uint32_t *)keys.Alternate();
        d_at = d_kept + n;
        k_kept<<<grid_for(n), kThreads, 0, s>>>(vals.Current(), n, d_out, d_kept);
        RK_LAUNCH_CHECK(err, "k_kept");
        RK_CUDA_CHECK(err, cub::DeviceScan::ExclusiveSum(d_cub, scan_bytes, d_kept, d_at, n, s));
    }
    // the columns are free now: the rows go where user and item were
    int32_t *d_idx = d_item;
    float *d_val = (float *)d_user;
    k_rows<<<grid_for(n), kThreads, 0, s>>>(keys.Current(), vals.Current(), d_rating, n, ibits, n_users, d_at, d_kept,
                                            d_idx, d_val, d_ptr, d_dups);
    RK_LAUNCH_CHECK(err, "k_rows");
    unsigned long long dups = 0;
    int64_t nnz = 0;
    RK_CUDA_CHECK(err, cudaMemcpyAsync(&dups, d_dups, sizeof dups, cudaMemcpyDeviceToHost, s));
    RK_CUDA_CHECK(err, cudaMemcpyAsync(&nnz, d_ptr + n_users, sizeof nnz, cudaMemcpyDeviceToHost, s));
    RK_CUDA_CHECK(err, cudaStreamSynchronize(s));
    if (dups > 0) return RK_OK; // the duplicate policy is the host's

    out->n_rows = n_users;
    out->n_cols = n_items;
    out->nnz = nnz;
    out->ptr = (int64_t *)malloc(((size_t)n_users + 1) * sizeof *out->ptr);
    out->idx = (int32_t *)rk_mem_alloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *out->idx);
    out->val = (float *)rk_mem_alloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *out->val);
    if (out->ptr == NULL || out->idx == NULL || out->val == NULL) {
        rk_csr_free(out);
        return rk_error_set(err, RK_E_NOMEM, "out of memory for a %d x %d matrix with %lld entries", n_users,
                            n_items, (long long)nnz);
    }
    rk_status st = sg.copy_back(out->idx, d_idx, (size_t)nnz * sizeof *out->idx, s, err);
    if (st == RK_OK) st = sg.copy_back(out->val, d_val, (size_t)nnz * sizeof *out->val, s, err);
    if (st == RK_OK) st = sg.copy_back(out->ptr, d_ptr, ((size_t)n_users + 1) * sizeof *out->ptr, s, err);
    if (st == RK_OK && g != NULL && g->keep_csr) st = rk_gpu_resident_keep(g->device, out, d_ptr, d_idx, d_val, s, err);
    if (st != RK_OK) {
        rk_csr_free(out);
        return st;
    }
    *taken = 1;
    return RK_OK;
}
