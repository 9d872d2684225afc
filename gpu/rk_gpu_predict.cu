// Predictions for the queries whose target item has a row in the tile
// (CONTRACT.md §4): the k items j ≠ i that u rated with the highest positive
// sim(i, j), ties by ascending index, aggregated per mode.
//
// One warp per query.  The candidates are u's row; their similarities are
// gathered from the tile row of i.  When more than k are positive, a
// per-warp radix select finds the k-th largest similarity K; keys above it
// are taken and ties at K by ascending position (= ascending item index) via
// ballots, so the chosen set is exactly the CPU engine's.
#include "rk_gpu_internal.h"

namespace {

constexpr int kWarps = 8;
constexpr unsigned kAll = 0xffffffffu;

__device__ __forceinline__ uint64_t key_of(double s)
{
    return s > 0.0 ? (uint64_t)__double_as_longlong(s) : 0ull;
}

template <typename T> __device__ __forceinline__ T warp_sum(T v)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kAll, v, o);
    return v;
}

__device__ __forceinline__ double clip(double x, double lo, double hi)
{
    return x < lo ? lo : (x > hi ? hi : x);
}

__global__ void __launch_bounds__(kWarps * 32) k_predict(rk_predict_args a)
{
    __shared__ uint32_t hist[kWarps][256];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int32_t q = blockIdx.x * kWarps + warp;
    if (q >= a.nq) return;
    const int32_t u = a.q_user[q], i = a.q_item[q];
    const double *row = a.S + (int64_t)a.q_row[q] * a.ld;
    const int64_t lo = a.uptr[u], hi = a.uptr[u + 1];
#define SIM_AT(p) (a.uidx[p] != i ? row[a.uidx[p]] : 0.0)

    int P = 0;
    for (int64_t p = lo + lane; p < hi; p += 32) P += key_of(SIM_AT(p)) != 0;
    P = warp_sum(P);

    double base, fallback;
    if (a.mode == RK_PREDICT_BASIC) {
        base = 0.0;
        fallback = a.mu;
    } else if (a.mode == RK_PREDICT_MEANS) {
        base = a.item_mean[i];
        fallback = base;
    } else {
        base = a.mu + a.bu[u] + a.bi[i];
        fallback = base;
    }
    // the candidates are the first k of the P positive ones (CONTRACT.md §4)
    const int need_min = a.min_k > 1 ? a.min_k : 1;
    if ((P < a.k ? P : a.k) < need_min) {
        if (lane == 0) {
            a.pred[q] = clip(fallback, a.rmin, a.rmax);
            a.used[q] = 0;
        }
        if (a.nb != NULL)
            for (int x = lane; x < a.k; x += 32) a.nb[(int64_t)q * a.k + x] = -1;
        return;
    }

    uint64_t K = 1;
    int need_eq = 0;
    if (P > a.k) {
        uint64_t prefix = 0, mask = 0;
        int need = a.k, done = 0;
        for (int shift = 56; shift >= 0 && !done; shift -= 8) {
            for (int b = lane; b < 256; b += 32) hist[warp][b] = 0;
            __syncwarp();
            for (int64_t p = lo + lane; p < hi; p += 32) {
                uint64_t key = key_of(SIM_AT(p));
                if (key != 0 && (key & mask) == prefix) atomicAdd(&hist[warp][(key >> shift) & 255u], 1u);
            }
            __syncwarp();
            int d_sel = 0, cum_sel = 0, h_sel = 0;
            if (lane == 0) {
                int cum = 0;
                for (int d = 255; d >= 0; d--) {
                    int h = (int)hist[warp][d];
                    if (cum + h >= need) {
                        d_sel = d;
                        cum_sel = cum;
                        h_sel = h;
                        break;
                    }
                    cum += h;
                }
            }
            d_sel = __shfl_sync(kAll, d_sel, 0);
            cum_sel = __shfl_sync(kAll, cum_sel, 0);
            h_sel = __shfl_sync(kAll, h_sel, 0);
            need -= cum_sel;
            prefix |= (uint64_t)d_sel << shift;
            mask |= (uint64_t)255 << shift;
            done = h_sel == need;
            __syncwarp();
        }
        K = prefix;
        need_eq = done ? 0 : need;
    }

    double num = 0.0, den = 0.0;
    int used = 0, ties_taken = 0, used_nb = 0;
    const double mu_u = a.mode >= RK_PREDICT_BASELINE ? a.mu + a.bu[u] : 0.0;
    for (int64_t p0 = lo; p0 < hi; p0 += 32) {
        const int64_t p = p0 + lane;
        double s = p < hi ? SIM_AT(p) : 0.0;
        uint64_t key = key_of(s);
        bool take = need_eq ? key > K : (key != 0 && key >= K);
        if (need_eq) {
            // ties at K in position order: the first need_eq of them
            bool tie = key != 0 && key == K;
            unsigned ballot = __ballot_sync(kAll, tie);
            int rank = __popc(ballot & ((1u << lane) - 1u));
            if (tie && ties_taken + rank < need_eq) take = true;
            ties_taken += __popc(ballot);
        }
        if (a.nb != NULL) { // the items taken, in position order: ascending (rk_queries.nb)
            const unsigned tb = __ballot_sync(kAll, take);
            if (take) a.nb[(int64_t)q * a.k + used_nb + __popc(tb & ((1u << lane) - 1u))] = a.uidx[p];
            used_nb += __popc(tb);
        }
        if (take) {
            int32_t j = a.uidx[p];
            double r = (double)a.uval[p], dev;
            if (a.mode == RK_PREDICT_BASIC) dev = r;
            else if (a.mode == RK_PREDICT_MEANS) dev = r - a.item_mean[j];
            else dev = r - (mu_u + a.bi[j]);
            num += s * dev;
            den += s;
            used++;
        }
    }
#undef SIM_AT
    num = warp_sum(num);
    den = warp_sum(den);
    used = warp_sum(used);
    if (lane == 0) {
        a.pred[q] = clip(den > 0.0 ? base + num / den : fallback, a.rmin, a.rmax);
        a.used[q] = den > 0.0 ? used : 0;
    }
    if (a.nb != NULL)
        for (int x = used_nb + lane; x < a.k; x += 32) a.nb[(int64_t)q * a.k + x] = -1;
}

} // namespace

rk_status rk_gpu_predict_launch(const rk_predict_args *a, cudaStream_t st, rk_error *err)
{
    if (a->nq <= 0) return RK_OK;
    int blocks = (a->nq + kWarps - 1) / kWarps;
    k_predict<<<blocks, kWarps * 32, 0, st>>>(*a);
    RK_LAUNCH_CHECK(err, "k_predict");
    return RK_OK;
}

rk_status rk_gpu_predict_collect(const host_queries &hq, const double *d_pred, const int32_t *d_used,
                                 const int32_t *d_nb, int32_t k, stager &sg, cudaStream_t s, rk_queries *q,
                                 double *t_back, rk_error *err)
{
    const size_t nq = hq.user.size();
    std::vector<double> pred(nq);
    std::vector<int32_t> used(nq), nb(d_nb != NULL ? nq * (size_t)k : 0);
    if (nq > 0) {
        RK_FORWARD(sg.copy_back(pred.data(), d_pred, nq * sizeof(double), s, err));
        RK_FORWARD(sg.copy_back(used.data(), d_used, nq * sizeof(int32_t), s, err));
        if (d_nb != NULL) RK_FORWARD(sg.copy_back(nb.data(), d_nb, nb.size() * sizeof(int32_t), s, err));
    }
    RK_CUDA_CHECK(err, cudaStreamSynchronize(s));
    *t_back = rk_omp_wtime();
    // 2M answers at Netflix size: 10-20 ms on one core (random writes)
#pragma omp parallel for schedule(static) if (nq > 65536)
    for (size_t t = 0; t < nq; t++) {
        q->pred[hq.orig[t]] = pred[t];
        q->used[hq.orig[t]] = used[t];
        if (d_nb != NULL) memcpy(q->nb + hq.orig[t] * k, nb.data() + t * (size_t)k, (size_t)k * sizeof(int32_t));
    }
    return RK_OK;
}

// Known queries bucketed by the tile of their item, in their order within
// a tile; unknown ones answered here.  Each thread takes a contiguous share
// of the queries, and its share of every tile follows the shares before it:
// the order of one pass (2M queries at Netflix size with --holdout 0.02
// took 0.1 s on one core).
void rk_gpu_plan_queries(const rk_model *m, const rk_knn_opts *o, rk_queries *q, const std::vector<int32_t> &pos_of,
                         int32_t tile_rows, int32_t n_tiles, host_queries *hq)
{
    hq->tile_ptr.assign((size_t)n_tiles + 1, 0);
    if (q == NULL) return;
    const int nt = q->n >= 65536 ? std::max(1, rk_omp_max_threads()) : 1;
    const size_t w = (size_t)n_tiles + 1;
    std::vector<int64_t> off((size_t)nt * w, 0); // thread th's count, then its next slot, per tile
#pragma omp parallel num_threads(nt)
    {
        const int th = rk_omp_thread_num(), T = rk_omp_num_threads();
        const int64_t t0 = q->n * th / T, t1 = q->n * (th + 1) / T;
        int64_t *c = off.data() + (size_t)th * w;
        for (int64_t t = t0; t < t1; t++) {
            const int32_t u = q->user[t], i = q->item[t];
            if (rk_model_user_known(m, u) && rk_model_item_known(m, i)) {
                c[(size_t)(pos_of[(size_t)i] / tile_rows)]++;
            } else {
                q->pred[t] = rk_predict_fallback(m, o->mode, u, i);
                q->used[t] = 0;
            }
        }
#pragma omp barrier
#pragma omp single
        {
            int64_t run = 0;
            for (int32_t tile = 0; tile < n_tiles; tile++) {
                hq->tile_ptr[(size_t)tile] = run;
                for (int x = 0; x < T; x++) {
                    const int64_t n = off[(size_t)x * w + (size_t)tile];
                    off[(size_t)x * w + (size_t)tile] = run;
                    run += n;
                }
            }
            hq->tile_ptr[(size_t)n_tiles] = run;
            hq->user.resize((size_t)run);
            hq->item.resize((size_t)run);
            hq->row.resize((size_t)run);
            hq->orig.resize((size_t)run);
        }
        for (int64_t t = t0; t < t1; t++) {
            const int32_t u = q->user[t], i = q->item[t];
            if (!(rk_model_user_known(m, u) && rk_model_item_known(m, i))) continue;
            const int32_t pos = pos_of[(size_t)i];
            const int64_t at = c[(size_t)(pos / tile_rows)]++;
            hq->user[(size_t)at] = u;
            hq->item[(size_t)at] = i;
            hq->row[(size_t)at] = pos % tile_rows;
            hq->orig[(size_t)at] = t;
        }
    }
}
