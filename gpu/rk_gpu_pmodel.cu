// rk_gpu_pmodel.cu — the CUDA twin of engine/rk_pmodel.c and rk_pmodel_global.c
// (--predict interpolate and global, CONTRACT.md §4b).  Each result is computed
// by one thread with the CPU's operations in the CPU's order, built with
// -fmad=false (gpu/gpu.am) as the CPU is with -ffp-contract=off, so that the
// two give the same bits:
// - covariance rows: one block an item; for each rater in ascending order the
//   block's threads add to distinct columns, then wait for each other, so
//   every cell sums its raters in the CPU's order;
// - the systems: one thread a query, the CPU's Cholesky on a scratch matrix
//   interleaved across the chunk's threads (coalesced);
// - the global model: one thread an item (the item half of an epoch) and one
//   thread a user (the user half), as the CPU's parallel loops split them.
#include "rk_gpu_internal.h"
#include "rk_pmodel.h"

#include <cub/cub.cuh>

namespace {

struct dmodel {
    int32_t nu, ni;
    const int64_t *uptr, *iptr;
    const int32_t *uidx, *iidx;
    const float *uval, *ival;
    const double *bu, *bi; // the model's ALS baselines
    double mu, rmin, rmax;
};

__device__ __forceinline__ double resid(const dmodel &d, int32_t u, int32_t j, float r)
{
    return (double)r - ((d.mu + d.bu[u]) + d.bi[j]);
}

__device__ __forceinline__ double clip(const dmodel &d, double x)
{
    return x < d.rmin ? d.rmin : (x > d.rmax ? d.rmax : x);
}

__device__ int64_t find_in_row(const dmodel &d, int32_t u, int32_t j)
{
    int64_t lo = d.uptr[u], hi = d.uptr[u + 1];
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (d.uidx[mid] < j) lo = mid + 1;
        else hi = mid;
    }
    return lo < d.uptr[u + 1] && d.uidx[lo] == j ? lo : -1;
}

// ---- interpolation -------------------------------------------------------------

constexpr int kCovThreads = 256;

__global__ void __launch_bounds__(kCovThreads) k_cov(dmodel d, double beta, double diag, double *acc_all,
                                                     int32_t *cnt_all, float *out)
{
    double *acc = acc_all + (size_t)blockIdx.x * (size_t)d.ni;
    int32_t *cnt = cnt_all + (size_t)blockIdx.x * (size_t)d.ni;
    for (int32_t j = blockIdx.x; j < d.ni; j += gridDim.x) {
        for (int64_t p = d.iptr[j]; p < d.iptr[j + 1]; p++) {
            const int32_t v = d.iidx[p];
            const double ej = resid(d, v, j, d.ival[p]);
            for (int64_t r = d.uptr[v] + threadIdx.x; r < d.uptr[v + 1]; r += blockDim.x) {
                const int32_t l = d.uidx[r];
                acc[l] += ej * resid(d, v, l, d.uval[r]);
                cnt[l]++;
            }
            __syncthreads();
        }
        float *row = out + (size_t)j * (size_t)d.ni;
        for (int32_t l = threadIdx.x; l < d.ni; l += blockDim.x) {
            const double num = l == j ? acc[l] + beta * diag : acc[l];
            row[l] = (float)(num / ((double)cnt[l] + beta));
            acc[l] = 0.0;
            cnt[l] = 0;
        }
        __syncthreads();
    }
}

struct interp_args {
    dmodel d;
    const float *cov;
    int64_t q0, q1, stride;   // this chunk's queries; the scratch's stride (threads of a chunk)
    const int32_t *qu, *qi, *used, *nb;
    int k;
    double lambda;
    double *a, *w;            // scratch: cell c of thread t at c * stride + t
    double *pred;
    int32_t *solved;
};

__global__ void k_interp(interp_args x)
{
    const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, t = x.q0 + tid;
    if (t >= x.q1) return;
    const int32_t n = x.used[t], u = x.qu[t], i = x.qi[t];
    x.solved[t] = 0;
    if (n <= 0) return;
    const int32_t *nb = x.nb + t * x.k;
    const int64_t ld = x.d.ni, S = x.stride;
#define A(r, c) x.a[((int64_t)(r) * n + (c)) * S + tid]
#define W(r) x.w[(int64_t)(r) * S + tid]
    for (int32_t p = 0; p < n; p++) {
        const float *row = x.cov + (int64_t)nb[p] * ld;
        for (int32_t q = 0; q <= p; q++) A(p, q) = (double)row[nb[q]];
        A(p, p) += x.lambda;
        W(p) = (double)x.cov[(int64_t)i * ld + nb[p]];
    }
    for (int32_t c = 0; c < n; c++) {
        double dd = A(c, c);
        for (int32_t s = 0; s < c; s++) dd -= A(c, s) * A(c, s);
        if (!(dd > 0.0)) return;
        dd = sqrt(dd);
        A(c, c) = dd;
        for (int32_t r = c + 1; r < n; r++) {
            double s = A(r, c);
            for (int32_t q = 0; q < c; q++) s -= A(r, q) * A(c, q);
            A(r, c) = s / dd;
        }
    }
    for (int32_t r = 0; r < n; r++) {
        double s = W(r);
        for (int32_t q = 0; q < r; q++) s -= A(r, q) * W(q);
        W(r) = s / A(r, r);
    }
    for (int32_t r = n - 1; r >= 0; r--) {
        double s = W(r);
        for (int32_t q = r + 1; q < n; q++) s -= A(q, r) * W(q);
        W(r) = s / A(r, r);
    }
    double est = (x.d.mu + x.d.bu[u]) + x.d.bi[i];
    for (int32_t r = 0; r < n; r++) {
        const int64_t at = find_in_row(x.d, u, nb[r]);
        est += W(r) * resid(x.d, u, nb[r], x.d.uval[at]);
    }
#undef A
#undef W
    x.pred[t] = clip(x.d, est);
    x.solved[t] = 1;
}

// ---- the global neighbourhood model ------------------------------------------------

struct gmodel {
    int32_t k;
    const int32_t *len, *nbr; // the lists
    const int64_t *off;       // links of item-major rating p: off[p] .. off[p + 1]
    const uint16_t *slot;
    const float *e;
    const int64_t *by_user;   // user-major entry -> item-major position
    double *bu, *bi, *w, *c;  // learned
};

// The item of item-major position p.
__device__ __forceinline__ int32_t item_of(const dmodel &d, int64_t p)
{
    int32_t lo = 0, hi = d.ni; // the last i with iptr[i] <= p
    while (hi - lo > 1) {
        const int32_t mid = lo + (hi - lo) / 2;
        if (d.iptr[mid] <= p) lo = mid;
        else hi = mid;
    }
    return lo;
}

// Links of rating p (item i, user u): counted (slot NULL) or written.
__device__ int64_t links_of(const dmodel &d, const gmodel &g, int32_t i, int32_t u, uint16_t *slot, float *e)
{
    int64_t n = 0;
    for (int32_t s = 0; s < g.len[i]; s++) {
        const int32_t j = g.nbr[(int64_t)i * g.k + s];
        const int64_t r = find_in_row(d, u, j);
        if (r < 0) continue;
        if (slot != NULL) {
            slot[n] = (uint16_t)s;
            e[n] = (float)resid(d, u, j, d.uval[r]);
        }
        n++;
    }
    return n;
}

__global__ void k_links(dmodel d, gmodel g, int64_t nnz, int64_t *count, uint16_t *slot, float *e, int64_t *by_user)
{
    for (int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; p < nnz; p += (int64_t)gridDim.x * blockDim.x) {
        const int32_t i = item_of(d, p), u = d.iidx[p];
        if (count != NULL) {
            count[p] = links_of(d, g, i, u, NULL, NULL);
            by_user[find_in_row(d, u, i)] = p;
        } else {
            links_of(d, g, i, u, slot + g.off[p], e + g.off[p]);
        }
    }
}

__device__ double rating_error(const dmodel &d, const gmodel &g, int64_t p, int32_t u, int32_t i, float r,
                               double *norm)
{
    const int64_t a = g.off[p], b = g.off[p + 1];
    const double *w = g.w + (int64_t)i * g.k, *c = g.c + (int64_t)i * g.k;
    double sum = 0.0;
    for (int64_t t = a; t < b; t++) sum += w[g.slot[t]] * (double)g.e[t] + c[g.slot[t]];
    *norm = b > a ? 1.0 / sqrt((double)(b - a)) : 0.0;
    return (double)r - (((d.mu + g.bu[u]) + g.bi[i]) + *norm * sum);
}

__global__ void k_item_step(dmodel d, gmodel g, double lr, double reg)
{
    const int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= d.ni) return;
    double *w = g.w + (int64_t)i * g.k, *c = g.c + (int64_t)i * g.k;
    for (int64_t p = d.iptr[i]; p < d.iptr[i + 1]; p++) {
        double norm;
        const double e = rating_error(d, g, p, d.iidx[p], i, d.ival[p], &norm);
        g.bi[i] += lr * (e - reg * g.bi[i]);
        const double ne = norm * e;
        for (int64_t t = g.off[p]; t < g.off[p + 1]; t++) {
            const int32_t s = g.slot[t];
            w[s] += lr * (ne * (double)g.e[t] - reg * w[s]);
            c[s] += lr * (ne - reg * c[s]);
        }
    }
}

__global__ void k_user_step(dmodel d, gmodel g, double lr, double reg)
{
    const int32_t u = blockIdx.x * blockDim.x + threadIdx.x;
    if (u >= d.nu) return;
    for (int64_t p = d.uptr[u]; p < d.uptr[u + 1]; p++) {
        double norm;
        const double e = rating_error(d, g, g.by_user[p], u, d.uidx[p], d.uval[p], &norm);
        g.bu[u] += lr * (e - reg * g.bu[u]);
    }
}

__global__ void k_global_predict(dmodel d, gmodel g, int64_t nq, const int32_t *qu, const int32_t *qi, double *pred,
                                 int32_t *used)
{
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nq) return;
    const int32_t u = qu[t], i = qi[t];
    const bool ku = u >= 0 && u < d.nu && d.uptr[u + 1] > d.uptr[u];
    const bool ki = i >= 0 && i < d.ni && d.iptr[i + 1] > d.iptr[i];
    double est;
    int32_t n = 0;
    if (ku && ki) {
        const double *w = g.w + (int64_t)i * g.k, *c = g.c + (int64_t)i * g.k;
        double sum = 0.0;
        for (int32_t s = 0; s < g.len[i]; s++) {
            const int32_t j = g.nbr[(int64_t)i * g.k + s];
            const int64_t r = find_in_row(d, u, j);
            if (r < 0) continue;
            const float e = (float)resid(d, u, j, d.uval[r]);
            sum += w[s] * (double)e + c[s];
            n++;
        }
        const double norm = n > 0 ? 1.0 / sqrt((double)n) : 0.0;
        est = ((d.mu + g.bu[u]) + g.bi[i]) + norm * sum;
    } else {
        est = d.mu;
        if (ku) est += g.bu[u];
        if (ki) est += g.bi[i];
    }
    pred[t] = clip(d, est);
    used[t] = n;
}

// The model's two matrices and baselines on the device.
rk_status upload_model(const rk_model *m, dmodel *d, dev_mem &mem, stager &sg, cudaStream_t s, rk_error *err)
{
    const rk_csr *U = &m->by_user, *I = &m->by_item;
    d->nu = U->n_rows;
    d->ni = I->n_rows;
    d->mu = m->mu;
    d->rmin = m->rmin;
    d->rmax = m->rmax;
    RK_FORWARD(upload((int64_t **)&d->uptr, U->ptr, (size_t)U->n_rows + 1, mem, sg, s, err));
    RK_FORWARD(upload((int32_t **)&d->uidx, U->idx, (size_t)U->nnz, mem, sg, s, err));
    RK_FORWARD(upload((float **)&d->uval, U->val, (size_t)U->nnz, mem, sg, s, err));
    RK_FORWARD(upload((int64_t **)&d->iptr, I->ptr, (size_t)I->n_rows + 1, mem, sg, s, err));
    RK_FORWARD(upload((int32_t **)&d->iidx, I->idx, (size_t)I->nnz, mem, sg, s, err));
    RK_FORWARD(upload((float **)&d->ival, I->val, (size_t)I->nnz, mem, sg, s, err));
    RK_FORWARD(upload((double **)&d->bu, m->bu, (size_t)U->n_rows, mem, sg, s, err));
    return upload((double **)&d->bi, m->bi, (size_t)I->n_rows, mem, sg, s, err);
}

rk_status interpolate(const rk_model *m, const rk_knn_opts *o, const dmodel &d, rk_queries *q, dev_mem &mem,
                      stager &sg, cudaStream_t s, char *detail, size_t cap, rk_error *err)
{
    const double t0 = rk_omp_wtime();
    const int32_t n = d.ni, k = o->k;
    if (n > RK_PMODEL_MAX_ITEMS)
        return rk_error_set(err, RK_E_ARG, "--predict interpolate: %d items, above the %d whose covariance matrix "
                            "(items² floats) it keeps", n, RK_PMODEL_MAX_ITEMS);
    float *cov;
    double *acc;
    int32_t *cnt;
    const int blocks = std::max(1, std::min(n, 264));
    RK_FORWARD(mem.alloc(&cov, (size_t)n * (size_t)n, err));
    RK_FORWARD(mem.alloc(&acc, (size_t)blocks * (size_t)n, err));
    RK_FORWARD(mem.alloc(&cnt, (size_t)blocks * (size_t)n, err));
    RK_CUDA_CHECK(err, cudaMemsetAsync(acc, 0, (size_t)blocks * (size_t)n * sizeof(double), s));
    RK_CUDA_CHECK(err, cudaMemsetAsync(cnt, 0, (size_t)blocks * (size_t)n * sizeof(int32_t), s));
    if (n > 0) {
        k_cov<<<blocks, kCovThreads, 0, s>>>(d, o->pm.interp_shrink, rk_pmodel_cov_diag(m), acc, cnt, cov);
        RK_LAUNCH_CHECK(err, "k_cov");
    }
    RK_CUDA_CHECK(err, cudaStreamSynchronize(s));
    const double t1 = rk_omp_wtime();
    interp_args x;
    x.d = d;
    x.cov = cov;
    x.k = k;
    x.lambda = o->pm.interp_reg;
    RK_FORWARD(upload((int32_t **)&x.qu, q->user, (size_t)q->n, mem, sg, s, err));
    RK_FORWARD(upload((int32_t **)&x.qi, q->item, (size_t)q->n, mem, sg, s, err));
    RK_FORWARD(upload((int32_t **)&x.used, q->used, (size_t)q->n, mem, sg, s, err));
    RK_FORWARD(upload((int32_t **)&x.nb, q->nb, (size_t)q->n * (size_t)k, mem, sg, s, err));
    RK_FORWARD(mem.alloc(&x.pred, (size_t)q->n, err));
    RK_FORWARD(mem.alloc(&x.solved, (size_t)q->n, err));
    // the chunk's scratch: k² + k doubles a thread, within 2 GiB
    const int64_t per = ((int64_t)k * k + k) * (int64_t)sizeof(double);
    const int64_t chunk =
        std::max<int64_t>(256, std::min<int64_t>(std::max<int64_t>(q->n, 1), ((int64_t)2 << 30) / per));
    x.stride = chunk;
    RK_FORWARD(mem.alloc(&x.a, (size_t)chunk * (size_t)k * (size_t)k, err));
    RK_FORWARD(mem.alloc(&x.w, (size_t)chunk * (size_t)k, err));
    for (int64_t q0 = 0; q0 < q->n; q0 += chunk) {
        x.q0 = q0;
        x.q1 = std::min<int64_t>(q->n, q0 + chunk);
        k_interp<<<(unsigned)((x.q1 - q0 + 127) / 128), 128, 0, s>>>(x);
        RK_LAUNCH_CHECK(err, "k_interp");
    }
    std::vector<double> pred((size_t)std::max<int64_t>(q->n, 1));
    std::vector<int32_t> solved(pred.size());
    RK_FORWARD(sg.copy_back(pred.data(), x.pred, (size_t)q->n * sizeof(double), s, err));
    RK_FORWARD(sg.copy_back(solved.data(), x.solved, (size_t)q->n * sizeof(int32_t), s, err));
    for (int64_t t = 0; t < q->n; t++)
        if (solved[(size_t)t]) q->pred[t] = pred[(size_t)t];
    snprintf(detail, cap, "gpu: covariances %.4f s, systems %.4f s (%lld a chunk)", t1 - t0,
             rk_omp_wtime() - t1, (long long)chunk);
    return RK_OK;
}

rk_status global(const rk_model *m, const rk_knn_opts *o, const rk_lists *l, const dmodel &d, rk_queries *q,
                 dev_mem &mem, stager &sg, cudaStream_t s, char *detail, size_t cap, rk_error *err)
{
    const double t0 = rk_omp_wtime();
    const int64_t nnz = m->by_item.nnz, nw = (int64_t)d.ni * l->k;
    if (l->k > 65536) return rk_error_set(err, RK_E_ARG, "--predict global: lists of %d, above 65536", l->k);
    gmodel g;
    g.k = l->k;
    RK_FORWARD(upload((int32_t **)&g.len, l->len, (size_t)d.ni, mem, sg, s, err));
    RK_FORWARD(upload((int32_t **)&g.nbr, l->nbr, (size_t)nw, mem, sg, s, err));
    int64_t *off, *count, *by_user;
    RK_FORWARD(mem.alloc(&off, (size_t)nnz + 1, err));
    RK_FORWARD(mem.alloc(&count, (size_t)nnz + 1, err));
    RK_FORWARD(mem.alloc(&by_user, (size_t)nnz, err));
    g.off = off;
    g.by_user = by_user;
    const unsigned grid = rk_grid_for(nnz, 256);
    RK_CUDA_CHECK(err, cudaMemsetAsync(count, 0, ((size_t)nnz + 1) * sizeof(int64_t), s));
    if (nnz > 0) {
        k_links<<<grid, 256, 0, s>>>(d, g, nnz, count + 1, NULL, NULL, by_user);
        RK_LAUNCH_CHECK(err, "k_links (count)");
    }
    size_t tmp_bytes = 0;
    RK_CUDA_CHECK(err, cub::DeviceScan::InclusiveSum(NULL, tmp_bytes, count, off, nnz + 1, s));
    void *tmp;
    RK_FORWARD(mem.alloc((char **)&tmp, tmp_bytes, err));
    RK_CUDA_CHECK(err, cub::DeviceScan::InclusiveSum(tmp, tmp_bytes, count, off, nnz + 1, s));
    int64_t total = 0;
    RK_CUDA_CHECK(err, cudaMemcpyAsync(&total, off + nnz, sizeof total, cudaMemcpyDeviceToHost, s));
    RK_CUDA_CHECK(err, cudaStreamSynchronize(s));
    uint16_t *slot;
    float *e;
    RK_FORWARD(mem.alloc(&slot, (size_t)total, err));
    RK_FORWARD(mem.alloc(&e, (size_t)total, err));
    g.slot = slot;
    g.e = e;
    if (nnz > 0) {
        k_links<<<grid, 256, 0, s>>>(d, g, nnz, NULL, slot, e, NULL);
        RK_LAUNCH_CHECK(err, "k_links (fill)");
    }
    RK_FORWARD(upload(&g.bu, m->bu, (size_t)d.nu, mem, sg, s, err));
    RK_FORWARD(upload(&g.bi, m->bi, (size_t)d.ni, mem, sg, s, err));
    RK_FORWARD(mem.alloc(&g.w, (size_t)nw, err));
    RK_FORWARD(mem.alloc(&g.c, (size_t)nw, err));
    RK_CUDA_CHECK(err, cudaMemsetAsync(g.w, 0, (size_t)nw * sizeof(double), s));
    RK_CUDA_CHECK(err, cudaMemsetAsync(g.c, 0, (size_t)nw * sizeof(double), s));
    RK_CUDA_CHECK(err, cudaStreamSynchronize(s));
    const double t1 = rk_omp_wtime();
    // the queries, on the device before the epochs when a search asks for checkpoints (rk_pmodel_opts)
    int32_t *qu = NULL, *qi = NULL, *used = NULL;
    double *pred = NULL;
    if (q->n > 0) {
        RK_FORWARD(upload(&qu, q->user, (size_t)q->n, mem, sg, s, err));
        RK_FORWARD(upload(&qi, q->item, (size_t)q->n, mem, sg, s, err));
        RK_FORWARD(mem.alloc(&pred, (size_t)q->n, err));
        RK_FORWARD(mem.alloc(&used, (size_t)q->n, err));
    }
    int32_t next = 0; // the next checkpoint
    double lr = o->pm.global_lr;
    for (int32_t ep = 0; ep < o->pm.global_epochs; ep++) {
        if (o->progress != NULL && ep + 1 < o->pm.global_epochs &&
            o->progress(o->progress_ud, "global model", (double)ep, (double)o->pm.global_epochs, "epochs") != 0)
            return rk_error_set(err, RK_E_CANCELLED, "global model: stopped by the caller's progress callback");
        if (d.ni > 0) k_item_step<<<(d.ni + 127) / 128, 128, 0, s>>>(d, g, lr, o->pm.global_reg);
        RK_LAUNCH_CHECK(err, "k_item_step");
        if (d.nu > 0) k_user_step<<<(d.nu + 127) / 128, 128, 0, s>>>(d, g, lr, o->pm.global_reg);
        RK_LAUNCH_CHECK(err, "k_user_step");
        lr *= o->pm.global_decay;
        for (; next < o->pm.n_at && o->pm.epochs_at[next] == ep + 1; next++) { // the predictions after ep + 1
            if (q->n == 0) continue;
            k_global_predict<<<(unsigned)((q->n + 127) / 128), 128, 0, s>>>(d, g, q->n, qu, qi, pred, used);
            RK_LAUNCH_CHECK(err, "k_global_predict (checkpoint)");
            RK_FORWARD(sg.copy_back(o->pm.pred_at + (int64_t)next * q->n, pred, (size_t)q->n * sizeof(double), s,
                                    err));
        }
    }
    RK_CUDA_CHECK(err, cudaStreamSynchronize(s));
    const double t2 = rk_omp_wtime();
    if (q->global != NULL) { // the trained model for a saved model: the caller's
        rk_pmodel_global *k = q->global;
        RK_FORWARD(rk_pmodel_global_alloc(k, d.nu, d.ni, l->k, err));
        rk_status c = sg.copy_back(k->bu, g.bu, (size_t)d.nu * sizeof(double), s, err);
        if (c == RK_OK) c = sg.copy_back(k->bi, g.bi, (size_t)d.ni * sizeof(double), s, err);
        if (c == RK_OK) c = sg.copy_back(k->w, g.w, (size_t)nw * sizeof(double), s, err);
        if (c == RK_OK) c = sg.copy_back(k->c, g.c, (size_t)nw * sizeof(double), s, err);
        if (c != RK_OK) {
            rk_pmodel_global_free(k);
            return c;
        }
        k->train_s = t2 - t1;
    }
    if (q->n == 0) {
        snprintf(detail, cap, "gpu: links %.4f s (%lld), training %.4f s (%d epochs)", t1 - t0, (long long)total,
                 t2 - t1, o->pm.global_epochs);
        return RK_OK;
    }
    k_global_predict<<<(unsigned)((q->n + 127) / 128), 128, 0, s>>>(d, g, q->n, qu, qi, pred, used);
    RK_LAUNCH_CHECK(err, "k_global_predict");
    RK_FORWARD(sg.copy_back(q->pred, pred, (size_t)q->n * sizeof(double), s, err));
    RK_FORWARD(sg.copy_back(q->used, used, (size_t)q->n * sizeof(int32_t), s, err));
    snprintf(detail, cap, "gpu: links %.4f s (%lld), training %.4f s (%d epochs), answers %.4f s",
             t1 - t0, (long long)total, t2 - t1, o->pm.global_epochs, rk_omp_wtime() - t2);
    return RK_OK;
}

rk_status run(const rk_model *m, const rk_knn_opts *o, const rk_gpu_opts *gopt, const rk_lists *lists,
              rk_queries *q, rk_knn_stats *st, rk_error *err)
{
    dev_mem mem;
    stream_events se;
    stager sg;
    RK_CUDA_CHECK(err, cudaSetDevice(gopt != NULL ? gopt->device : 0));
    RK_CUDA_CHECK(err, cudaStreamCreate(&se.st));
    RK_FORWARD(sg.init(err));
    dmodel d;
    RK_FORWARD(upload_model(m, &d, mem, sg, se.st, err));
    char detail[sizeof st->model];
    if (o->mode == RK_PREDICT_INTERPOLATE)
        RK_FORWARD(interpolate(m, o, d, q, mem, sg, se.st, detail, sizeof detail, err));
    else
        RK_FORWARD(global(m, o, lists, d, q, mem, sg, se.st, detail, sizeof detail, err));
    if (st != NULL) snprintf(st->model, sizeof st->model, "%s", detail);
    return RK_OK;
}

} // namespace

extern "C" rk_status rk_gpu_pmodel(const rk_model *m, const rk_knn_opts *o, const rk_gpu_opts *g,
                                   const rk_lists *lists, rk_queries *q, rk_knn_stats *st, rk_error *err)
{
    if (!rk_predict_is_model(o->mode) || q == NULL) return RK_OK;
    if (o->mode == RK_PREDICT_INTERPOLATE && q->nb == NULL)
        return rk_error_set(err, RK_E_ARG, "--predict interpolate: the engine gave no neighbours");
    if (o->mode == RK_PREDICT_GLOBAL && lists == NULL)
        return rk_error_set(err, RK_E_ARG, "--predict global: no lists to train on");
    char why[256];
    if (!rk_gpu_available(why, sizeof why)) return rk_error_set(err, RK_E_GPU, "no usable GPU: %s", why);
    const double t0 = rk_omp_wtime();
    rk_model full; // the item-major matrix the stage walks, built for the call when deferred
    RK_FORWARD(rk_model_complete_copy(m, &full, err));
    const rk_status s = run(&full, o, g, lists, q, st, err);
    rk_model_complete_free(&full, m);
    if (st != NULL) st->model_s = rk_omp_wtime() - t0;
    return s;
}
