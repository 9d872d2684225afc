// The user-major matrix of the ratings, sorted on the GPU (rk_gpu_csr_build
// in rk_gpu.h).  Its CPU twin is rk_triples_dedupe_csr (etl/rk_sort.c),
// which defines the result: a stable sort by (user, item), so the same
// matrix bit for bit when no pair repeats.  The host's sort of a file in
// random order is a scatter into buckets and a radix sort of each (0.27-0.31
// s at Netflix size on 16 cores, BENCHMARKS.md); here the columns go up
// through the pinned stager, CUB sorts 64-bit keys (user, item) with the
// ratings' positions, one kernel writes the rows and counts the repeated
// pairs, and the matrix comes back through pinned buffers.  Repeated pairs
// are then neighbours in the sorted order, their ratings in file order (the
// sort is stable): one thread a pair applies the policy (last, first, mean:
// the host's double sum in the same order), the rows are written again
// without the others, and what the host must do to its triples comes back
// (rk_dup_found: the removed ratings' bits, the means).  The policy
// "error", and repeated pairs beside a holdout (whose draw the host makes
// over the survivors), leave the sort to the host.  Ratings left out (a
// holdout's) are sorted with the others, so that a pair rated twice is
// found across the parts, and skipped when the rows are written: the
// host's matrix after rk_split_holdout_csr.
#include "rk_gpu_internal.h"
#include "rk_mem.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <stdio.h>
#include <vector>
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
__global__ void k_rows(const unsigned long long *key, const uint32_t *pos, const float *rating, const float *sval,
                       int64_t n, int ibits, int32_t n_users, const uint32_t *at, const uint32_t *kept, int32_t *idx,
                       float *val, int64_t *ptr, unsigned long long *dups)
{
    const unsigned long long imask = ((unsigned long long)1 << ibits) - 1;
    for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < n; p += (int64_t)gridDim.x * blockDim.x) {
        const unsigned long long k = key[p];
        const int32_t u = (int32_t)(k >> ibits);
        const int64_t o = at != NULL ? (int64_t)at[p] : p;
        if (kept == NULL || kept[p]) {
            idx[o] = (int32_t)(k & imask);
            val[o] = sval != NULL ? sval[p] : rating[pos[p]];
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

// Repeated pairs resolved by policy (RK_DUP_LAST, FIRST or MEAN), as
// rk_sort.c's walk does: the first entry of each pair is kept (kept[p] = 1)
// with the policy's rating (sval[p]); the other ratings' file positions are
// marked in drop; under MEAN each repeated pair's first position and mean
// are appended to mpos / mval (*nmean of them).
__global__ void k_resolve(const unsigned long long *key, const uint32_t *pos, const float *rating, int64_t n,
                          int policy, uint32_t *kept, float *sval, unsigned long long *drop, uint32_t *mpos,
                          float *mval, unsigned long long *nmean)
{
    for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < n; p += (int64_t)gridDim.x * blockDim.x) {
        const unsigned long long k = key[p];
        if (p > 0 && key[p - 1] == k) {
            kept[p] = 0;
            continue;
        }
        kept[p] = 1;
        int64_t r = p + 1;
        while (r < n && key[r] == k) r++;
        if (r - p == 1) {
            sval[p] = rating[pos[p]];
            continue;
        }
        const int64_t s = policy == RK_DUP_LAST ? r - 1 : p;
        float v = rating[pos[s]];
        if (policy == RK_DUP_MEAN) { /* summed in file order, as the host does */
            double sum = rating[pos[p]];
            for (int64_t j = p + 1; j < r; j++) sum += rating[pos[j]];
            v = (float)(sum / (double)(r - p));
            const unsigned long long m = atomicAdd(nmean, 1ULL);
            mpos[m] = pos[p];
            mval[m] = v;
        }
        sval[p] = v;
        for (int64_t j = p; j < r; j++)
            if (j != s) atomicOr(&drop[pos[j] >> 6], 1ULL << (pos[j] & 63));
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

// The repeated pairs (dups of them) resolved by policy on the device, the
// rows written again without the ratings removed (the sorted keys and
// positions are intact; the spare buffers hold the kept flags, their sum
// and the policy's ratings), and what the host must do to its triples in
// *found.  *fits = 0: over the memory budget, nothing done.
struct sorted_run {
    const unsigned long long *key; // sorted
    const uint32_t *pos;           // their positions in t
    unsigned long long *key_spare; // the sort's other buffers, free now
    uint32_t *pos_spare;
    const float *rating;
    int64_t n;
    int ibits;
    int32_t n_users;
};

rk_status resolve_dups(const sorted_run &r, rk_dup_policy policy, unsigned long long dups, void *d_cub,
                       size_t cub_bytes, const rk_gpu_opts *g, dev_mem &mem, stager &sg, cudaStream_t s,
                       int32_t *d_idx, float *d_val, int64_t *d_ptr, unsigned long long *d_dups, rk_dup_found *found,
                       int *fits, rk_error *err)
{
    *fits = 0;
    const int64_t n = r.n;
    const unsigned grid = rk_grid_for(n, kThreads);
    const size_t words = ((size_t)n + 63) / 64;
    size_t budget = 0;
    RK_FORWARD(rk_gpu_budget_left(g, mem, &budget, err));
    if (words * 8 + (size_t)dups * 8 + 8 > budget) return RK_OK;
    unsigned long long *d_drop, *d_nmean;
    uint32_t *d_mpos;
    float *d_mval;
    RK_FORWARD(mem.alloc(&d_drop, words, err));
    RK_FORWARD(mem.alloc(&d_mpos, (size_t)dups, err));
    RK_FORWARD(mem.alloc(&d_mval, (size_t)dups, err));
    RK_FORWARD(mem.alloc(&d_nmean, 1, err));
    RK_CUDA_CHECK(err, cudaMemsetAsync(d_drop, 0, words * sizeof *d_drop, s));
    RK_CUDA_CHECK(err, cudaMemsetAsync(d_nmean, 0, sizeof *d_nmean, s));
    uint32_t *d_kept = (uint32_t *)r.key_spare, *d_at = d_kept + n;
    float *d_sval = (float *)r.pos_spare;
    k_resolve<<<grid, kThreads, 0, s>>>(r.key, r.pos, r.rating, n, (int)policy, d_kept, d_sval, d_drop, d_mpos,
                                        d_mval, d_nmean);
    RK_LAUNCH_CHECK(err, "k_resolve");
    RK_CUDA_CHECK(err, cub::DeviceScan::ExclusiveSum(d_cub, cub_bytes, d_kept, d_at, n, s));
    k_rows<<<grid, kThreads, 0, s>>>(r.key, r.pos, r.rating, d_sval, n, r.ibits, r.n_users, d_at, d_kept, d_idx,
                                     d_val, d_ptr, d_dups);
    RK_LAUNCH_CHECK(err, "k_rows");
    unsigned long long nmean = 0;
    RK_CUDA_CHECK(err, cudaMemcpyAsync(&nmean, d_nmean, sizeof nmean, cudaMemcpyDeviceToHost, s));
    RK_CUDA_CHECK(err, cudaStreamSynchronize(s));
    const size_t nm = nmean > 0 ? (size_t)nmean : 1;
    found->drop = (uint64_t *)malloc(words * sizeof *found->drop);
    found->mean_pos = (int64_t *)malloc(nm * sizeof *found->mean_pos);
    found->mean_val = (float *)malloc(nm * sizeof *found->mean_val);
    std::vector<uint32_t> mpos(nm);
    if (found->drop == NULL || found->mean_pos == NULL || found->mean_val == NULL)
        return rk_error_set(err, RK_E_NOMEM, "out of memory for %llu repeated ratings", dups);
    RK_FORWARD(sg.copy_back(found->drop, d_drop, words * sizeof *found->drop, s, err));
    if (nmean > 0) {
        RK_CUDA_CHECK(err, cudaMemcpy(mpos.data(), d_mpos, nmean * sizeof *d_mpos, cudaMemcpyDeviceToHost));
        RK_CUDA_CHECK(err, cudaMemcpy(found->mean_val, d_mval, nmean * sizeof *d_mval, cudaMemcpyDeviceToHost));
    }
    for (size_t k = 0; k < (size_t)nmean; k++) found->mean_pos[k] = mpos[k];
    found->removed = (int64_t)dups;
    found->n_means = (int64_t)nmean;
    *fits = 1;
    return RK_OK;
}

} // namespace

extern "C" rk_status rk_gpu_csr_build(const rk_triples *t, int32_t n_users, int32_t n_items,
                                      const uint64_t *leave_out, rk_dup_policy policy, rk_dup_found *found,
                                      const rk_gpu_opts *g, rk_csr *out, int *taken, rk_error *err)
{
    *taken = 0;
    memset(out, 0, sizeof *out);
    if (found != NULL) memset(found, 0, sizeof *found);
    const int64_t n = t->n;
    const unsigned grid = rk_grid_for(n, kThreads);
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
    int mapped = 0; // the columns from the rows uploaded beside the parse, else from t
    if (g != NULL && g->rows != NULL)
        RK_FORWARD(rk_gpu_rows_columns(g, n, n_users, n_items, mem, sg, s, &d_user, &d_item, &d_rating, &mapped, err));
    if (!mapped) {
        RK_FORWARD(upload(&d_user, t->user, (size_t)n, mem, sg, s, err));
        RK_FORWARD(upload(&d_item, t->item, (size_t)n, mem, sg, s, err));
        RK_FORWARD(upload(&d_rating, t->rating, (size_t)n, mem, sg, s, err));
    }
    if (leave_out != NULL) RK_FORWARD(upload(&d_out, (const unsigned long long *)leave_out, words, mem, sg, s, err));
    for (int b = 0; b < 2; b++) {
        RK_FORWARD(mem.alloc(&d_key[b], (size_t)n, err));
        RK_FORWARD(mem.alloc(&d_pos[b], (size_t)n, err));
    }
    RK_FORWARD(mem.alloc(&d_ptr, (size_t)n_users + 1, err));
    RK_FORWARD(mem.alloc(&d_dups, 1, err));
    RK_FORWARD(mem.alloc((char **)&d_cub, cub_bytes, err));
    RK_CUDA_CHECK(err, cudaMemsetAsync(d_dups, 0, sizeof *d_dups, s));
    k_keys<<<grid, kThreads, 0, s>>>(d_user, d_item, n, ibits, d_key[0], d_pos[0]);
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
        k_kept<<<grid, kThreads, 0, s>>>(vals.Current(), n, d_out, d_kept);
        RK_LAUNCH_CHECK(err, "k_kept");
        RK_CUDA_CHECK(err, cub::DeviceScan::ExclusiveSum(d_cub, scan_bytes, d_kept, d_at, n, s));
    }
    // the columns are free now: the rows go where user and item were
    int32_t *d_idx = d_item;
    float *d_val = (float *)d_user;
    k_rows<<<grid, kThreads, 0, s>>>(keys.Current(), vals.Current(), d_rating, NULL, n, ibits, n_users, d_at,
                                     d_kept, d_idx, d_val, d_ptr, d_dups);
    RK_LAUNCH_CHECK(err, "k_rows");
    unsigned long long dups = 0;
    int64_t nnz = 0;
    RK_CUDA_CHECK(err, cudaMemcpyAsync(&dups, d_dups, sizeof dups, cudaMemcpyDeviceToHost, s));
    RK_CUDA_CHECK(err, cudaMemcpyAsync(&nnz, d_ptr + n_users, sizeof nnz, cudaMemcpyDeviceToHost, s));
    RK_CUDA_CHECK(err, cudaStreamSynchronize(s));
    if (dups > 0) { // "error", and the draw of a holdout over the survivors, are the host's
        if (found == NULL || leave_out != NULL || policy == RK_DUP_ERROR) return RK_OK;
        const sorted_run run = {keys.Current(), vals.Current(), keys.Alternate(), vals.Alternate(), d_rating, n, ibits,
                                n_users};
        int fits = 0;
        RK_FORWARD(resolve_dups(run, policy, dups, d_cub, cub_bytes, g, mem, sg, s, d_idx, d_val, d_ptr, d_dups, found,
                                &fits, err));
        if (!fits) return RK_OK;
        RK_CUDA_CHECK(err, cudaMemcpyAsync(&nnz, d_ptr + n_users, sizeof nnz, cudaMemcpyDeviceToHost, s));
        RK_CUDA_CHECK(err, cudaStreamSynchronize(s));
    }

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
