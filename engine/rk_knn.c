/* The CPU engine: one similarity row per item and thread, lists and
 * predictions answered while the row exists (rk_knn.h).
 *
 * Where the time goes: every co-rating pair adds one entry of six sums into
 * the thread's accumulator row, at the column of the other item.  When the
 * popularity head is flat, those columns spread over the whole row, and a row
 * larger than the L2 cache makes nearly every update a cache miss.  So the
 * columns are taken in chunks that fit in L2 (the GPU kernel does the same
 * with shared memory), and ratings on a small grid pack the six sums into 16
 * bytes instead of 32, so that a chunk holds twice the columns. */
#include "rk_knn_internal.h"
#include "rk_select.h"

#include "rk_omp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>



static double wall_now(void) { return rk_omp_wtime(); }



static void ws_free(knn_ws *w)
{
    free(w->acc); free(w->simrow); free(w->touched); free(w->cur); free(w->end);
    free(w->hs); free(w->hi); free(w->w); free(w->nb); free(w->r);
    memset(w, 0, sizeof *w);
}


static int ws_init(knn_ws *w, const knn_ctx *c)
{
    size_t n = (size_t)(c->m->by_item.n_rows > 0 ? c->m->by_item.n_rows : 1);
    size_t k = (size_t)c->o->k;
    memset(w, 0, sizeof *w);
    w->acc_bytes = n * rk_knn_entry_bytes(c->path);
    w->acc = aligned_alloc(64, (w->acc_bytes + 63) / 64 * 64);
    w->simrow = calloc(n, sizeof *w->simrow);
    w->touched = malloc(n * sizeof *w->touched);
    w->cur = malloc(KNN_BLOCK * sizeof *w->cur); w->end = malloc(KNN_BLOCK * sizeof *w->end);
    w->hs = malloc(k * sizeof *w->hs); w->hi = malloc(k * sizeof *w->hi);
    w->w = malloc(k * sizeof *w->w); w->nb = malloc(k * sizeof *w->nb); w->r = malloc(k * sizeof *w->r);
    if (w->acc == NULL || w->simrow == NULL || w->touched == NULL || w->cur == NULL || w->end == NULL ||
        w->hs == NULL || w->hi == NULL || w->w == NULL || w->nb == NULL || w->r == NULL) {
        ws_free(w);
        return -1;
    }
    memset(w->acc, 0, w->acc_bytes);
    return 0;
}

/* ---- accumulation of the co-rating sums of item i ------------------------- */

/* Runs the body (the last argument) for every rater u of item i (its by_item
 * position p, after PER_RATER) and every entry pp of u's row.  The raters are
 * taken in blocks; for each of the nch chunks of columns (1: whole rows) every rater of the block goes on
 * along its row (sorted by item) from where the previous chunk stopped, while
 * KEY (the entry's item, shifted left by SHIFT) is below the chunk's end.
 * Every entry still receives its raters in ascending order, so floating-point
 * sums are those of the plain double loop, bit for bit.  Rows start at random
 * places: PF prefetches the segment [q_, qe_) of the rater KNN_AHEAD places on. */
#define KNN_WALK(SHIFT, KEY, PF, PER_RATER, ...)                                           \
    do {                                                                                   \
        const int64_t p_end_ = I->ptr[i + 1];                                              \
        for (int64_t b0_ = I->ptr[i]; b0_ < p_end_; b0_ += KNN_BLOCK) {                    \
            const int64_t nb_ = p_end_ - b0_ > KNN_BLOCK ? KNN_BLOCK : p_end_ - b0_;        \
            for (int64_t t_ = 0; t_ < nb_; t_++) {                                         \
                w->cur[t_] = U->ptr[I->idx[b0_ + t_]];                                     \
                w->end[t_] = U->ptr[I->idx[b0_ + t_] + 1];                                 \
            }                                                                              \
            for (int32_t ch_ = 0; ch_ < nch; ch_++) {                                      \
                const int last_ = ch_ + 1 == nch;                                          \
                const uint64_t lim_ = (uint64_t)(ch_ + 1) * (uint64_t)c->chunk << (SHIFT); \
                for (int64_t t_ = 0; t_ < nb_; t_++) {                                     \
                    const int64_t p = b0_ + t_;                                            \
                    int64_t pp = w->cur[t_];                                               \
                    const int64_t pe_ = w->end[t_];                                        \
                    if (t_ + KNN_AHEAD < nb_) {                                            \
                        const int64_t q_ = w->cur[t_ + KNN_AHEAD], qe_ = w->end[t_ + KNN_AHEAD]; \
                        PF;                                                                \
                    }                                                                      \
                    PER_RATER;                                                             \
                    if (last_) {                                                           \
                        for (; pp < pe_; pp++) { __VA_ARGS__; }                            \
                    } else {                                                               \
                        for (; pp < pe_ && (uint64_t)(KEY) < lim_; pp++) { __VA_ARGS__; }  \
                    }                                                                      \
                    w->cur[t_] = pp;                                                       \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    } while (0)

/* TRACK: keep the list of touched columns (sparse items); a constant at each
 * call, so the test leaves the dense items' loop. */
static inline __attribute__((always_inline)) void accumulate_packed(const knn_ctx *c, knn_ws *w, int32_t i, const int32_t nch,
                                                                    const int track)
{
    const rk_csr *I = &c->m->by_item, *U = &c->m->by_user;
    const uint32_t *pk = c->pk;
    const int yb = c->ybits;
    const uint32_t ymask = (1u << yb) - 1;
    const uint64_t nmask = ((uint64_t)1 << c->b_n) - 1;
    v2u *acc = w->acc;
    int32_t *touched = w->touched, nt = 0;
    const v2u *t;
    KNN_WALK(yb, pk[pp], PF_SEGMENT(pk, q_, qe_), t = c->tab + (size_t)c->iq[p] * (size_t)c->tab_w, {
        const uint32_t e = pk[pp];
        v2u *a = &acc[e >> yb];
        if (track && ((*a)[0] & nmask) == 0) touched[nt++] = (int32_t)(e >> yb);
        *a += t[e & ymask];
    });
    w->n_touched = nt;
}

static inline __attribute__((always_inline)) void accumulate_v8i(const knn_ctx *c, knn_ws *w, int32_t i, const int32_t nch,
                                                                 const int track)
{
    const rk_csr *I = &c->m->by_item, *U = &c->m->by_user;
    const int32_t *js = U->idx, *ys = c->uq;
    v8i *acc = w->acc;
    int32_t *touched = w->touched, nt = 0, x = 0;
    KNN_WALK(0, js[pp], { PF_SEGMENT(js, q_, qe_); PF_SEGMENT(ys, q_, qe_); }, x = c->iq[p], {
        const int32_t j = js[pp], y = ys[pp];
        v8i *a = &acc[j];
        if (track && (*a)[0] == 0) touched[nt++] = j;
        *a += (v8i){1, x, 0, x * x, 0, 0, 0, 0} + (v8i){0, 0, y, 0, y * y, x * y, 0, 0};
    });
    w->n_touched = nt;
}

static inline __attribute__((always_inline)) void accumulate_double(const knn_ctx *c, knn_ws *w, int32_t i, const int32_t nch,
                                                                    const int track)
{
    const rk_csr *I = &c->m->by_item, *U = &c->m->by_user;
    acc_d *acc = w->acc;
    int32_t *touched = w->touched, nt = 0;
    double x = 0.0;
    KNN_WALK(0, U->idx[pp], { PF_SEGMENT(U->idx, q_, qe_); PF_SEGMENT(c->uv, q_, qe_); }, x = c->iv[p], {
        const int32_t j = U->idx[pp];
        const double y = c->uv[pp];
        acc_d *a = &acc[j];
        if (track && a->lo[0] == 0.0) touched[nt++] = j;
        a->lo += (v4d){1.0, x, 0.0, x * x} + (v4d){0.0, 0.0, y, 0.0};
        a->hi += (v4d){y * y, x * y, 0.0, 0.0};
    });
    w->n_touched = nt;
}

/* The full-vector metrics (the ranking model's among them) read only n and
 * Σxy from the row (FULL_FIX brings the rest): 16 bytes an entry instead of
 * 64, so a chunk holds four times the columns.  Σxy adds the same products
 * in the same order as accumulate_double: the same doubles.  UCONST (a
 * constant at each call): every user's values are one value q_u, so x_ui
 * x_uj is q_u q_u, computed once per rater, and the row's values are not
 * read: the same product, the same sums. */
static inline __attribute__((always_inline)) void accumulate_dot(const knn_ctx *c, knn_ws *w, int32_t i, const int32_t nch,
                                                                 const int track, const int uconst)
{
    const rk_csr *I = &c->m->by_item, *U = &c->m->by_user;
    v2d *acc = w->acc;
    int32_t *touched = w->touched, nt = 0;
    double x = 0.0, xx = 0.0;
    if (uconst) {
        KNN_WALK(0, U->idx[pp], PF_SEGMENT(U->idx, q_, qe_), (x = c->iv[p], xx = x * x), {
            const int32_t j = U->idx[pp];
            v2d *a = &acc[j];
            if (track && (*a)[0] == 0.0) touched[nt++] = j;
            *a += (v2d){1.0, xx};
        });
    } else {
        KNN_WALK(0, U->idx[pp], { PF_SEGMENT(U->idx, q_, qe_); PF_SEGMENT(c->uv, q_, qe_); }, x = c->iv[p], {
            const int32_t j = U->idx[pp];
            v2d *a = &acc[j];
            if (track && (*a)[0] == 0.0) touched[nt++] = j;
            *a += (v2d){1.0, x * c->uv[pp]};
        });
    }
    w->n_touched = nt;
}

/* ---- similarities, the neighbour list ------------------------------------- */

/* The sums of entry j as doubles, in the order of rk_sim_value; the return
 * value is n (0: no co-rater).  Packed sums are of values offset by qmin and
 * are shifted back exactly in 64-bit integers, so the doubles are those of the
 * unpacked sums. */
static inline __attribute__((always_inline)) void unpack(const knn_ctx *c, const v2u a, int64_t f[6])
{
    const uint64_t m_n = ((uint64_t)1 << c->b_n) - 1, m_1 = ((uint64_t)1 << c->b_1) - 1;
    const uint64_t m_2 = ((uint64_t)1 << c->b_2) - 1;
    f[0] = (int64_t)(a[0] & m_n);                          /* n */
    f[1] = (int64_t)(a[1] & m_1);                          /* Σx' */
    f[2] = (int64_t)((a[1] >> c->b_1) & m_1);              /* Σy' */
    f[3] = (int64_t)((a[0] >> c->b_n) & m_2);              /* Σx'² */
    f[4] = (int64_t)((a[0] >> (c->b_n + c->b_2)) & m_2);   /* Σy'² */
    f[5] = (int64_t)((a[1] >> (2 * c->b_1)) & m_2);        /* Σx'y' */
}

static inline __attribute__((always_inline)) double sums_at(const knn_ctx *c, const knn_ws *w, int32_t j, double s[6])
{
    if (c->path == PATH_PACKED) {
        int64_t f[6];
        unpack(c, ((const v2u *)w->acc)[j], f);
        const int64_t n = f[0], q = c->qmin;
        s[0] = (double)n;
        s[1] = (double)(f[1] + n * q);
        s[2] = (double)(f[2] + n * q);
        s[3] = (double)(f[3] + 2 * q * f[1] + n * q * q);
        s[4] = (double)(f[4] + 2 * q * f[2] + n * q * q);
        s[5] = (double)(f[5] + q * (f[1] + f[2]) + n * q * q);
    } else if (c->path == PATH_V8I) {
        const v8i a = ((const v8i *)w->acc)[j];
        for (int t = 0; t < 6; t++) s[t] = (double)a[t];
    } else if (c->path == PATH_DOT) {
        const v2d a = ((const v2d *)w->acc)[j];
        s[0] = a[0]; s[1] = s[2] = s[3] = s[4] = 0.0; s[5] = a[1];
    } else {
        const acc_d *a = &((const acc_d *)w->acc)[j];
        s[0] = a->lo[0]; s[1] = a->lo[1]; s[2] = a->lo[2];
        s[3] = a->lo[3]; s[4] = a->hi[0]; s[5] = a->hi[1];
    }
    return s[0];
}

/* Offer the positive similarities of the columns to the heap (and to simrow
 * when the item has queries): the touched ones, or every column of a dense
 * item.  The order of the offers does not change the selection: the heap's
 * order is total.  PREFILTER skips a column whose similarity cannot be
 * positive.  Once the heap is full and no query needs the row, BOUND skips
 * the root and the division for a column whose similarity before shrinkage
 * (which only lowers it) is below the heap's worst score by a margin far
 * above rounding (thr2 = worst² (1 - 1e-9)): such a column would be refused
 * anyway.  The metric is a constant inside each instantiation so that the
 * compiler folds rk_sim_value's switch out of the loop.  FIX replaces sums
 * before the formula: the full-vector metrics' whole-vector counts and norms. */
#define SIM_LOOP(METRIC, FIX, PREFILTER, BOUND)                                \
    do {                                                                       \
        rk_sim_params lp = c->sp;                                              \
        lp.metric = (METRIC);                                                  \
        const int32_t cnt = dense ? n_items : w->n_touched;                    \
        double thr2 = 0.0;                                                     \
        int full = 0;                                                          \
        (void)thr2;                                                            \
        for (int32_t t = 0; t < cnt; t++) {                                    \
            int32_t j = dense ? t : w->touched[t];                             \
            double s6[6];                                                      \
            if (j == i || sums_at(c, w, j, s6) == 0.0) continue;               \
            FIX;                                                               \
            if (PREFILTER) continue;                                           \
            if (full && (BOUND)) continue;                                     \
            double s = rk_sim_value(&lp, s6[0], s6[1], s6[2], s6[3], s6[4], s6[5]); \
            if (s > 0.0) {                                                     \
                if (rows) w->simrow[j] = s;                                    \
                rk_topk_push(h, s, j);                                         \
                if (!rows && h->n == h->k) {                                   \
                    full = 1;                                                  \
                    thr2 = h->score[0] * h->score[0] * (1.0 - 1e-9);           \
                }                                                              \
            }                                                                  \
        }                                                                      \
    } while (0)

#define SQ(x) ((x) * (x))

/* Pearson on packed sums, in two passes per block of columns.  The first has
 * no branch to mispredict: it keeps the columns whose numerator
 * n Σxy - Σx Σy is positive and that BOUND cannot refuse.  Both tests need no
 * shift back: covariances do not change when the values are offset.  With
 * exact_num the numerator's products are below 2^53, so the integer sign is
 * that of the double prefilter of SIM_LOOP.  The second pass computes the
 * kept columns as SIM_LOOP does; the block's threshold is that of its start,
 * lower than or equal to the current one, so it refuses nothing SIM_LOOP
 * would keep. */
static void pearson_packed(const knn_ctx *c, knn_ws *w, int32_t i, int dense, int rows, rk_topk *h)
{
    enum { B = 256 };
    int32_t cand[B];
    const v2u *acc = w->acc;
    const int32_t cnt = dense ? c->m->by_item.n_rows : w->n_touched;
    rk_sim_params lp = c->sp;
    lp.metric = RK_METRIC_PEARSON;
    for (int32_t t0 = 0; t0 < cnt; t0 += B) {
        const int32_t t1 = cnt - t0 > B ? t0 + B : cnt;
        const double thr2 = !rows && h->n == h->k ? h->score[0] * h->score[0] * (1.0 - 1e-9) : 0.0;
        int32_t nc = 0;
        for (int32_t t = t0; t < t1; t++) {
            const int32_t j = dense ? t : w->touched[t];
            int64_t f[6];
            unpack(c, acc[j], f);
            const int64_t num = f[0] * f[5] - f[1] * f[2];
            const double vxy = (double)(f[0] * f[3] - f[1] * f[1]) * (double)(f[0] * f[4] - f[2] * f[2]);
            cand[nc] = j;
            nc += num > 0 && !((double)num * (double)num < thr2 * vxy);
        }
        for (int32_t t = 0; t < nc; t++) {
            const int32_t j = cand[t];
            double s6[6];
            if (j == i) continue;
            sums_at(c, w, j, s6);
            const double s = rk_sim_value(&lp, s6[0], s6[1], s6[2], s6[3], s6[4], s6[5]);
            if (s > 0.0) {
                if (rows) w->simrow[j] = s;
                rk_topk_push(h, s, j);
            }
        }
    }
}

/* The whole vectors' counts and squared norms in place of the co-rated ones
 * (rk_sim_value's convention for the full-vector metrics). */
#define FULL_FIX                                                               \
    do {                                                                       \
        s6[1] = c->ncnt[i]; s6[2] = c->ncnt[j];                                \
        s6[3] = c->nsq[i]; s6[4] = c->nsq[j];                                  \
    } while (0)

static void similarities(const knn_ctx *c, knn_ws *w, int32_t i, int dense, int rows, rk_topk *h)
{
    const int32_t n_items = c->m->by_item.n_rows;
    if (c->path == PATH_PACKED && c->exact_num && c->sp.metric == RK_METRIC_PEARSON) {
        pearson_packed(c, w, i, dense, rows, h);
        return;
    }
    switch (c->sp.metric) {
    case RK_METRIC_PEARSON:
        /* only positive similarities are ever used: skip the root and the
         * division when the numerator is not positive */
        SIM_LOOP(RK_METRIC_PEARSON, (void)0, s6[0] * s6[5] - s6[1] * s6[2] <= 0.0,
                 SQ(s6[0] * s6[5] - s6[1] * s6[2]) <
                     thr2 * ((s6[0] * s6[3] - s6[1] * s6[1]) * (s6[0] * s6[4] - s6[2] * s6[2])));
        break;
    case RK_METRIC_PEARSON_BASELINE:
        SIM_LOOP(RK_METRIC_PEARSON_BASELINE, (void)0, s6[5] <= 0.0, SQ(s6[5]) < thr2 * (s6[3] * s6[4]));
        break;
    case RK_METRIC_COSINE:
        SIM_LOOP(RK_METRIC_COSINE, (void)0, s6[5] <= 0.0, SQ(s6[5]) < thr2 * (s6[3] * s6[4]));
        break;
    case RK_METRIC_MSD: SIM_LOOP(RK_METRIC_MSD, (void)0, 0, 0); break;
    case RK_METRIC_EUCLIDEAN: SIM_LOOP(RK_METRIC_EUCLIDEAN, (void)0, 0, 0); break;
    case RK_METRIC_COSINE_FULL:
        SIM_LOOP(RK_METRIC_COSINE_FULL, FULL_FIX, s6[5] <= 0.0, SQ(s6[5]) < thr2 * (s6[3] * s6[4]));
        break;
    case RK_METRIC_EUCLIDEAN_FULL: SIM_LOOP(RK_METRIC_EUCLIDEAN_FULL, FULL_FIX, 0, 0); break;
    case RK_METRIC_JACCARD: SIM_LOOP(RK_METRIC_JACCARD, FULL_FIX, 0, 0); break;
    case RK_METRIC_WEIGHTED_COSINE: SIM_LOOP(RK_METRIC_WEIGHTED_COSINE, FULL_FIX, s6[5] <= 0.0, 0); break;
    case RK_METRIC_RP3BETA: SIM_LOOP(RK_METRIC_RP3BETA, FULL_FIX, s6[5] <= 0.0, 0); break;
    case RK_METRIC_COUNT: break; /* refused by rk_knn_check_args */
    }
}

/* --negative yes (CONTRACT.md §3): every column with sim != 0 is offered by
 * its magnitude, and simrow keeps the signed value for write_list (the
 * predictions still read only its positive entries).  No prefilter and no
 * bound: both assume that only positive values are kept. */
static void signed_similarities(const knn_ctx *c, knn_ws *w, int32_t i, int dense, rk_topk *h)
{
    const int32_t cnt = dense ? c->m->by_item.n_rows : w->n_touched;
    const int full = rk_metric_is_full(c->sp.metric);
    for (int32_t t = 0; t < cnt; t++) {
        const int32_t j = dense ? t : w->touched[t];
        double s6[6];
        if (j == i || sums_at(c, w, j, s6) == 0.0) continue;
        if (full) FULL_FIX;
        const double s = rk_sim_value(&c->sp, s6[0], s6[1], s6[2], s6[3], s6[4], s6[5]);
        if (s > 0.0 || s < 0.0) {
            w->simrow[j] = s;
            rk_topk_push(h, fabs(s), j);
        }
    }
}

static void write_list(const knn_ctx *c, knn_ws *w, int32_t i, rk_topk *h)
{
    rk_lists *l = c->lists;
    int64_t base = (int64_t)i * l->k;
    rk_topk_sort(h);
    l->len[i] = h->n;
    for (int32_t t = 0; t < h->n; t++) {
        double s6[6];
        l->nbr[base + t] = h->idx[t];
        /* signed lists are ordered by |sim|: the value is simrow's */
        l->sim[base + t] = (float)(c->o->negative ? w->simrow[h->idx[t]] : h->score[t]);
        l->support[base + t] = (int32_t)sums_at(c, w, h->idx[t], s6);
    }
}
/* ---- predictions for the queries whose target is item i ------------------ */

/* The items of the chosen candidates h (positions in the user's history
 * items[]), ascending, into out[k], -1 after them (rk_queries.nb). */
static void chosen_items(const rk_topk *h, const int32_t *items, int32_t k, int32_t *out)
{
    for (int32_t a = 0; a < h->n; a++) { /* insertion by position: ascending position is ascending item */
        const int32_t p = h->idx[a];
        int32_t b = a;
        for (; b > 0 && out[b - 1] > p; b--) out[b] = out[b - 1];
        out[b] = p;
    }
    for (int32_t a = 0; a < h->n; a++) out[a] = items[out[a]];
    for (int32_t a = h->n; a < k; a++) out[a] = -1;
}

static void predict_item(const knn_ctx *c, knn_ws *w, int32_t i)
{
    const rk_model *m = c->m;
    for (int64_t t = c->qptr[i]; t < c->qptr[i + 1]; t++) {
        int64_t qi = c->qlist[t];
        const rk_predict_user pu = rk_predict_user_at(m, c->o->mode, c->hist, c->q->user[qi]);
        rk_topk h;
        rk_topk_init(&h, c->o->k, w->hs, w->hi);
        /* heap indices are positions in u's history: ascending position is
         * ascending item index, so the tie rule is kept */
        for (int64_t p = 0; p < pu.n; p++) {
            double s = w->simrow[pu.item[p]];
            if (s > 0.0) rk_topk_push(&h, s, (int32_t)p);
        }
        int32_t need = c->o->min_k > 1 ? c->o->min_k : 1;
        if (h.n < need) {
            c->q->pred[qi] = rk_predict_fallback_user(m, c->o->mode, &pu, i);
            c->q->used[qi] = 0;
            for (int32_t a = 0; c->q->nb != NULL && a < c->o->k; a++) c->q->nb[qi * c->o->k + a] = -1;
            continue;
        }
        rk_topk_sort(&h);
        for (int32_t a = 0; a < h.n; a++) {
            w->w[a] = h.score[a];
            w->nb[a] = pu.item[h.idx[a]];
            w->r[a] = pu.rating[h.idx[a]];
        }
        c->q->pred[qi] = rk_predict_aggregate_user(m, c->o->mode, &pu, i, h.n, w->nb, w->w, w->r);
        c->q->used[qi] = h.n;
        if (c->q->nb != NULL) chosen_items(&h, pu.item, c->o->k, c->q->nb + qi * c->o->k);
    }
}

/* Clear what item i left in the row: the whole row when it was dense,
 * else the touched entries. */
static void clear_row(const knn_ctx *c, knn_ws *w, int dense, int rows)
{
    const int32_t n_items = c->m->by_item.n_rows;
    if (dense) {
        memset(w->acc, 0, w->acc_bytes);
        if (rows) memset(w->simrow, 0, (size_t)n_items * sizeof *w->simrow);
        return;
    }
    for (int32_t t = 0; t < w->n_touched; t++) {
        const int32_t j = w->touched[t];
        if (c->path == PATH_PACKED) ((v2u *)w->acc)[j] = (v2u){0, 0};
        else if (c->path == PATH_V8I) ((v8i *)w->acc)[j] = (v8i){0};
        else if (c->path == PATH_DOT) ((v2d *)w->acc)[j] = (v2d){0, 0};
        else ((acc_d *)w->acc)[j] = (acc_d){{0}, {0}};
        if (rows) w->simrow[j] = 0.0;
    }
    w->n_touched = 0;
}

static void knn_item(const knn_ctx *c, knn_ws *w, int32_t i)
{
    rk_topk h;
    const int dense = c->cost[i] >= c->dense_cost;
    const int rows = c->q != NULL && c->qptr[i + 1] > c->qptr[i];
    /* Chunks pay when a rater's row has several entries per chunk.  In a
     * large, sparse catalogue (millions of items, short rows) most of the
     * (rater, chunk) steps find nothing, and walking them cost more than
     * the cache misses they save: rows averaging fewer than two entries a
     * chunk are walked whole.  The sums are the same either way. */
    const int64_t deg = c->m->by_item.ptr[i + 1] - c->m->by_item.ptr[i];
    const int32_t nch = c->o->chunk_items <= 0 && c->cost[i] < 2 * (int64_t)c->n_chunks * deg ? 1 : c->n_chunks;
    /* each call has a constant TRACK, so that each loop is compiled for it */
    if (c->path == PATH_PACKED) {
        if (dense) accumulate_packed(c, w, i, nch, 0); else accumulate_packed(c, w, i, nch, 1);
    } else if (c->path == PATH_V8I) {
        if (dense) accumulate_v8i(c, w, i, nch, 0); else accumulate_v8i(c, w, i, nch, 1);
    } else if (c->path == PATH_DOT) {
        if (c->uconst) {
            if (dense) accumulate_dot(c, w, i, nch, 0, 1); else accumulate_dot(c, w, i, nch, 1, 1);
        } else if (dense) accumulate_dot(c, w, i, nch, 0, 0);
        else accumulate_dot(c, w, i, nch, 1, 0);
    } else if (dense) accumulate_double(c, w, i, nch, 0);
    else accumulate_double(c, w, i, nch, 1);
    rk_topk_init(&h, c->o->k, w->hs, w->hi);
    if (c->o->negative) signed_similarities(c, w, i, dense, &h);
    else similarities(c, w, i, dense, rows, &h);
    double t0 = wall_now();
    if (c->lists != NULL) write_list(c, w, i, &h);
    double t1 = wall_now();
    if (rows) predict_item(c, w, i);
    double t2 = wall_now();
    w->t_select += t1 - t0;
    w->t_predict += t2 - t1;
    clear_row(c, w, dense, rows || c->o->negative);
}


static rk_status knn_run(const rk_model *m, const rk_knn_opts *o, rk_lists *lists, rk_queries *q,
                         const rk_csr *hist, rk_knn_stats *st, rk_error *err)
{
    rk_knn_stats local;
    knn_ctx c;
    int32_t *order = NULL;
    int64_t *cost = NULL, total_cost = 0;
    int32_t n_run = 0;     /* items computed: every item, or the subset's */
    rk_status s = RK_OK;
    int failed = 0;
    double t_begin = wall_now(), t_call = t_begin;

    if (st == NULL) st = &local;
    memset(st, 0, sizeof *st);
    snprintf(st->device, sizeof st->device, "cpu");
    RK_FORWARD(rk_knn_check_args(m, o, lists, q, err));
    memset(&c, 0, sizeof c);
    c.m = m;
    c.o = o;
    c.sp = o->sim;
    c.lists = lists;
    c.q = (q != NULL && q->n > 0) ? q : NULL;
    c.hist = hist;

    s = rk_knn_prepare_values(&c, st, err);
    if (s == RK_OK && rk_metric_is_full(c.sp.metric)) {
        size_t n = (size_t)(m->by_item.n_rows > 0 ? m->by_item.n_rows : 1);
        c.ncnt = malloc(n * sizeof *c.ncnt);
        c.nsq = malloc(n * sizeof *c.nsq);
        if (c.ncnt == NULL || c.nsq == NULL) s = rk_error_set(err, RK_E_NOMEM, "out of memory for the item norms");
        else rk_knn_item_norms(m, &o->sim, c.scale, c.ncnt, c.nsq);
    }
    if (s == RK_OK && c.q != NULL) s = rk_knn_group_queries(&c, err);
    if (s == RK_OK) {
        size_t n = (size_t)(m->by_item.n_rows > 0 ? m->by_item.n_rows : 1);
        order = malloc(n * sizeof *order);
        cost = malloc(n * sizeof *cost);
        if (order == NULL || cost == NULL || (total_cost = rk_knn_subset_order(m, o, order, cost, &n_run)) < 0)
            s = rk_error_set(err, RK_E_NOMEM, "out of memory for the item order");
    }
    if (s != RK_OK) goto done;
    st->pair_updates = total_cost;
    c.cost = cost;
    rk_knn_plan_chunks(&c);

    int32_t n_items = m->by_item.n_rows;
    int64_t done_cost = 0;
    double sel_sum = 0.0, pred_sum = 0.0;
    int nthreads = 1, stop = 0; /* stop: the progress callback asked to stop */
    t_begin = wall_now();
#pragma omp parallel num_threads(o->threads > 0 ? o->threads : rk_omp_max_threads()) \
    reduction(+ : sel_sum, pred_sum)
    {
        knn_ws w;
        int ok = ws_init(&w, &c) == 0;
#pragma omp atomic
        failed += !ok;
#pragma omp barrier
#pragma omp single
        nthreads = rk_omp_num_threads();
        if (!failed) {
            int64_t since_report = 0;
#pragma omp for schedule(dynamic, 1) nowait
            for (int32_t t = 0; t < n_run; t++) {
                int stopped;
#pragma omp atomic read
                stopped = stop;
                if (stopped) continue;
                int32_t i = order[t];
                /* without lists only the rows of queried items are needed */
                if (c.lists == NULL && (c.q == NULL || c.qptr[i + 1] == c.qptr[i])) continue;
                knn_item(&c, &w, i);
                if (o->progress != NULL) {
                    int64_t cst = cost[i], now_done;
#pragma omp atomic capture
                    now_done = done_cost += cst;
                    since_report += cst;
                    if (rk_omp_thread_num() == 0 && since_report > total_cost / 200) {
                        since_report = 0;
                        if (RK_PROGRESS_STOPS(o->progress, o->progress_ud, "similarity", now_done, total_cost,
                                              "pairs")) {
#pragma omp atomic write
                            stop = 1;
                        }
                    }
                }
            }
        }
        sel_sum += w.t_select;
        pred_sum += w.t_predict;
        if (ok) ws_free(&w);
    }
    if (failed) {
        s = rk_error_set(err, RK_E_NOMEM, "out of memory for the per-thread rows (%d items)", n_items);
        goto done;
    }
    if (stop) {
        s = rk_error_set(err, RK_E_CANCELLED, RK_STOPPED_MSG, "similarity");
        goto done;
    }
    RK_PROGRESS(o->progress, o->progress_ud, "similarity", total_cost, total_cost, "pairs");
    double wall = wall_now() - t_begin;
    st->select_s = sel_sum / nthreads;
    st->predict_s = pred_sum / nthreads;
    st->sim_s = wall - st->select_s - st->predict_s;
    if (st->sim_s < 0.0) st->sim_s = 0.0;
    st->wall_s = wall_now() - t_call;
done:
    free(order);
    free(cost);
    free(c.qptr);
    free(c.qlist);
    free(c.uq);
    free(c.iq);
    free(c.pk);
    free(c.tab);
    free(c.uv);
    free(c.iv);
    free(c.ncnt);
    free(c.nsq);
    return s;
}

/* knn_run on a model whose item-major entries are there: a deferred one
 * (rk_model_from_csr_deferred) gets them for the call. */
static rk_status knn_run_full(const rk_model *m, const rk_knn_opts *o, rk_lists *lists, rk_queries *q,
                              const rk_csr *hist, rk_knn_stats *st, rk_error *err)
{
    rk_model full;
    RK_FORWARD(rk_model_complete_copy(m, &full, err));
    rk_status s = knn_run(&full, o, lists, q, hist, st, err);
    rk_model_complete_free(&full, m);
    return s;
}

rk_status rk_knn_cpu(const rk_model *m, const rk_knn_opts *o, rk_lists *lists,
                     rk_queries *q, rk_knn_stats *st, rk_error *err)
{
    return knn_run_full(m, o, lists, q, NULL, st, err);
}

rk_status rk_knn_cpu_hist(const rk_model *m, const rk_knn_opts *o, const rk_csr *hist, rk_queries *q,
                          rk_knn_stats *st, rk_error *err)
{
    if (hist == NULL || hist->n_cols != m->by_item.n_rows || o->rows != NULL)
        return rk_error_set(err, RK_E_ARG, "histories need %d item columns and no subset of rows",
                            m->by_item.n_rows);
    return knn_run_full(m, o, NULL, q, hist, st, err);
}
