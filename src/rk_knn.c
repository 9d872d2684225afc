/* The CPU engine: one similarity row per item and thread, lists and
 * predictions answered while the row exists (rk_knn.h). */
#include "rk_knn.h"
#include "rk_select.h"

#include "rk_omp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Accumulators: lanes n, Σx, Σy, Σx², Σy², Σxy (two lanes of padding so that
 * one entry is one 32- or 64-byte vector). */
typedef int32_t v8i __attribute__((vector_size(32)));
typedef double v4d __attribute__((vector_size(32)));
typedef struct acc_d { v4d lo, hi; } acc_d;

static double wall_now(void) { return rk_omp_wtime(); }

void rk_knn_opts_default(rk_knn_opts *o)
{
    memset(o, 0, sizeof *o);
    o->sim.metric = RK_METRIC_PEARSON;
    o->sim.min_support = 1;
    o->sim.shrinkage = 0.0;
    o->sim.unit = 1.0;
    o->k = 20;
    o->mode = RK_PREDICT_MEANS;
    o->min_k = 1;
}

int rk_knn_needs_baselines(const rk_knn_opts *o)
{
    return o->mode == RK_PREDICT_BASELINE || o->sim.metric == RK_METRIC_PEARSON_BASELINE;
}

rk_status rk_knn_check_args(const rk_model *m, const rk_knn_opts *o, const rk_lists *lists, rk_error *err)
{
    if (o->k < 1) return rk_error_set(err, RK_E_ARG, "k must be at least 1 (got %d)", o->k);
    if (lists != NULL && (lists->n_items != m->by_item.n_rows || lists->k != o->k))
        return rk_error_set(err, RK_E_ARG, "neighbour lists of shape %d x %d for %d items and k = %d",
                            lists->n_items, lists->k, m->by_item.n_rows, o->k);
    if (rk_knn_needs_baselines(o) && !m->have_baselines)
        return rk_error_set(err, RK_E_ARG, "these options need the model's baselines, and it was built without them");
    return RK_OK;
}

rk_status rk_lists_alloc(rk_lists *l, int32_t n_items, int32_t k, rk_error *err)
{
    memset(l, 0, sizeof *l);
    if (n_items < 0 || k < 1) return rk_error_set(err, RK_E_ARG, "bad list shape %d x %d", n_items, k);
    size_t cells = (size_t)n_items * (size_t)k;
    if (cells / (size_t)k != (size_t)n_items || cells > ((size_t)1 << 40))
        return rk_error_set(err, RK_E_RANGE, "%d lists of %d neighbours are too many", n_items, k);
    if (cells == 0) cells = 1;
    l->n_items = n_items;
    l->k = k;
    l->len = calloc((size_t)(n_items > 0 ? n_items : 1), sizeof *l->len);
    /* zeroed: the cells past each list's length are defined too */
    l->nbr = calloc(cells, sizeof *l->nbr);
    l->sim = calloc(cells, sizeof *l->sim);
    l->support = calloc(cells, sizeof *l->support);
    if (l->len == NULL || l->nbr == NULL || l->sim == NULL || l->support == NULL) {
        rk_lists_free(l);
        return rk_error_set(err, RK_E_NOMEM, "out of memory for %d neighbour lists of %d", n_items, k);
    }
    return RK_OK;
}

void rk_lists_free(rk_lists *l)
{
    if (l == NULL) return;
    free(l->len);
    free(l->nbr);
    free(l->sim);
    free(l->support);
    memset(l, 0, sizeof *l);
}

/* ---- shared, read-only state of one run ---------------------------------- */

typedef struct knn_ctx {
    const rk_model *m;
    const rk_knn_opts *o;
    rk_sim_params sp;
    int grid;              /* 1: exact int32 sums of values in units */
    int32_t *uq, *iq;      /* grid: by_user / by_item values in units */
    double *uv, *iv;       /* double path: by_user / by_item values */
    int64_t *qptr;         /* known queries grouped by item: qptr[n_items + 1] */
    int64_t *qlist;
    rk_lists *lists;
    rk_queries *q;
} knn_ctx;

/* ---- per-thread workspace ------------------------------------------------ */

typedef struct knn_ws {
    v8i *acc_i;
    acc_d *acc_d;
    double *simrow;   /* sim(i, j) > 0 of the current item, else 0 */
    int32_t *touched; /* items j with a co-rater */
    int32_t n_touched;
    double *hs;       /* heap scores, k */
    int32_t *hi;      /* heap indices, k */
    double *w;        /* aggregation scratch, k */
    int32_t *nb;
    float *r;
    double t_select, t_predict;
} knn_ws;

static void ws_free(knn_ws *w)
{
    free(w->acc_i);
    free(w->acc_d);
    free(w->simrow);
    free(w->touched);
    free(w->hs);
    free(w->hi);
    free(w->w);
    free(w->nb);
    free(w->r);
    memset(w, 0, sizeof *w);
}

static int ws_init(knn_ws *w, const knn_ctx *c)
{
    size_t n = (size_t)(c->m->by_item.n_rows > 0 ? c->m->by_item.n_rows : 1);
    size_t k = (size_t)c->o->k;
    memset(w, 0, sizeof *w);
    if (c->grid)
        w->acc_i = aligned_alloc(32, n * sizeof *w->acc_i);
    else
        w->acc_d = aligned_alloc(64, n * sizeof *w->acc_d);
    w->simrow = calloc(n, sizeof *w->simrow);
    w->touched = malloc(n * sizeof *w->touched);
    w->hs = malloc(k * sizeof *w->hs);
    w->hi = malloc(k * sizeof *w->hi);
    w->w = malloc(k * sizeof *w->w);
    w->nb = malloc(k * sizeof *w->nb);
    w->r = malloc(k * sizeof *w->r);
    if ((c->grid ? (void *)w->acc_i : (void *)w->acc_d) == NULL || w->simrow == NULL ||
        w->touched == NULL || w->hs == NULL || w->hi == NULL || w->w == NULL ||
        w->nb == NULL || w->r == NULL) {
        ws_free(w);
        return -1;
    }
    if (c->grid)
        memset(w->acc_i, 0, n * sizeof *w->acc_i);
    else
        memset(w->acc_d, 0, n * sizeof *w->acc_d);
    return 0;
}

/* ---- accumulation of the co-rating sums of item i ------------------------- */

static void accumulate_grid(const knn_ctx *c, knn_ws *w, int32_t i)
{
    const rk_csr *I = &c->m->by_item, *U = &c->m->by_user;
    v8i *acc = w->acc_i;
    int32_t nt = 0;
    for (int64_t p = I->ptr[i]; p < I->ptr[i + 1]; p++) {
        int32_t u = I->idx[p], x = c->iq[p];
        const v8i xv = {1, x, 0, x * x, 0, 0, 0, 0};
        const int32_t *js = U->idx, *ys = c->uq;
        for (int64_t pp = U->ptr[u]; pp < U->ptr[u + 1]; pp++) {
            int32_t j = js[pp], y = ys[pp];
            v8i *a = &acc[j];
            if ((*a)[0] == 0) w->touched[nt++] = j;
            *a += xv + (v8i){0, 0, y, 0, y * y, x * y, 0, 0};
        }
    }
    w->n_touched = nt;
}

static void accumulate_double(const knn_ctx *c, knn_ws *w, int32_t i)
{
    const rk_csr *I = &c->m->by_item, *U = &c->m->by_user;
    acc_d *acc = w->acc_d;
    int32_t nt = 0;
    for (int64_t p = I->ptr[i]; p < I->ptr[i + 1]; p++) {
        int32_t u = I->idx[p];
        double x = c->iv[p];
        const v4d xlo = {1.0, x, 0.0, x * x};
        for (int64_t pp = U->ptr[u]; pp < U->ptr[u + 1]; pp++) {
            int32_t j = U->idx[pp];
            double y = c->uv[pp];
            acc_d *a = &acc[j];
            if (a->lo[0] == 0.0) w->touched[nt++] = j;
            a->lo += xlo + (v4d){0.0, 0.0, y, 0.0};
            a->hi += (v4d){y * y, x * y, 0.0, 0.0};
        }
    }
    w->n_touched = nt;
}

/* ---- similarities of the touched items and the neighbour list ------------ */

/* The sums of entry j as doubles, in the order of rk_sim_value. */
static inline void sums_at(const knn_ctx *c, const knn_ws *w, int32_t j, double s[6])
{
    if (c->grid) {
        const v8i a = w->acc_i[j];
        for (int t = 0; t < 6; t++) s[t] = (double)a[t];
    } else {
        const acc_d *a = &w->acc_d[j];
        s[0] = a->lo[0]; s[1] = a->lo[1]; s[2] = a->lo[2];
        s[3] = a->lo[3]; s[4] = a->hi[0]; s[5] = a->hi[1];
    }
}

/* Fill simrow for the positive similarities and push them into the heap.
 * The metric is a constant inside each instantiation so that the compiler
 * folds rk_sim_value's switch out of the loop. */
#define SIM_LOOP(METRIC, PREFILTER)                                            \
    do {                                                                       \
        rk_sim_params lp = c->sp;                                              \
        lp.metric = (METRIC);                                                  \
        for (int32_t t = 0; t < w->n_touched; t++) {                           \
            int32_t j = w->touched[t];                                         \
            double s6[6];                                                      \
            if (j == i) continue;                                              \
            sums_at(c, w, j, s6);                                              \
            if (PREFILTER) continue;                                           \
            double s = rk_sim_value(&lp, s6[0], s6[1], s6[2], s6[3], s6[4], s6[5]); \
            if (s > 0.0) {                                                     \
                w->simrow[j] = s;                                              \
                rk_topk_push(h, s, j);                                         \
            }                                                                  \
        }                                                                      \
    } while (0)

static void similarities(const knn_ctx *c, knn_ws *w, int32_t i, rk_topk *h)
{
    switch (c->sp.metric) {
    case RK_METRIC_PEARSON:
        /* only positive similarities are ever used: skip the root and the
         * division when the numerator is not positive */
        SIM_LOOP(RK_METRIC_PEARSON, s6[0] * s6[5] - s6[1] * s6[2] <= 0.0);
        break;
    case RK_METRIC_PEARSON_BASELINE:
        SIM_LOOP(RK_METRIC_PEARSON_BASELINE, s6[5] <= 0.0);
        break;
    case RK_METRIC_COSINE:
        SIM_LOOP(RK_METRIC_COSINE, s6[5] <= 0.0);
        break;
    case RK_METRIC_MSD:
        SIM_LOOP(RK_METRIC_MSD, 0);
        break;
    case RK_METRIC_EUCLIDEAN:
        SIM_LOOP(RK_METRIC_EUCLIDEAN, 0);
        break;
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
        sums_at(c, w, h->idx[t], s6);
        l->nbr[base + t] = h->idx[t];
        l->sim[base + t] = (float)h->score[t];
        l->support[base + t] = (int32_t)s6[0];
    }
}

/* ---- predictions for the queries whose target is item i ------------------ */

static void predict_item(const knn_ctx *c, knn_ws *w, int32_t i)
{
    const rk_model *m = c->m;
    const rk_csr *U = &m->by_user;
    for (int64_t t = c->qptr[i]; t < c->qptr[i + 1]; t++) {
        int64_t qi = c->qlist[t];
        int32_t u = c->q->user[qi];
        rk_topk h;
        rk_topk_init(&h, c->o->k, w->hs, w->hi);
        /* heap indices are positions in u's row: ascending position is
         * ascending item index, so the tie rule is kept */
        for (int64_t p = U->ptr[u]; p < U->ptr[u + 1]; p++) {
            double s = w->simrow[U->idx[p]];
            if (s > 0.0) rk_topk_push(&h, s, (int32_t)(p - U->ptr[u]));
        }
        int32_t need = c->o->min_k > 1 ? c->o->min_k : 1;
        if (h.n < need) {
            c->q->pred[qi] = rk_predict_fallback(m, c->o->mode, u, i);
            c->q->used[qi] = 0;
            continue;
        }
        rk_topk_sort(&h);
        for (int32_t a = 0; a < h.n; a++) {
            int64_t p = U->ptr[u] + h.idx[a];
            w->w[a] = h.score[a];
            w->nb[a] = U->idx[p];
            w->r[a] = U->val[p];
        }
        c->q->pred[qi] = rk_predict_aggregate(m, c->o->mode, u, i, h.n, w->nb, w->w, w->r);
        c->q->used[qi] = h.n;
    }
}

static void knn_item(const knn_ctx *c, knn_ws *w, int32_t i)
{
    rk_topk h;
    if (c->grid)
        accumulate_grid(c, w, i);
    else
        accumulate_double(c, w, i);
    rk_topk_init(&h, c->o->k, w->hs, w->hi);
    similarities(c, w, i, &h);
    double t0 = wall_now();
    if (c->lists != NULL) write_list(c, w, i, &h);
    double t1 = wall_now();
    if (c->q != NULL && c->qptr[i + 1] > c->qptr[i]) predict_item(c, w, i);
    double t2 = wall_now();
    w->t_select += t1 - t0;
    w->t_predict += t2 - t1;
    for (int32_t t = 0; t < w->n_touched; t++) {
        int32_t j = w->touched[t];
        w->simrow[j] = 0.0;
        if (c->grid)
            w->acc_i[j] = (v8i){0};
        else
            w->acc_d[j] = (acc_d){{0}, {0}};
    }
    w->n_touched = 0;
}

/* ---- choosing the accumulation path -------------------------------------- */

double rk_knn_grid_scale(const rk_model *m, double *qmax_out)
{
    static const double scales[] = {1, 2, 4, 5, 10, 20, 100};
    const rk_csr *U = &m->by_user, *I = &m->by_item;
    int64_t max_deg = 0;
    for (int32_t i = 0; i < I->n_rows; i++)
        if (I->ptr[i + 1] - I->ptr[i] > max_deg) max_deg = I->ptr[i + 1] - I->ptr[i];
    for (size_t t = 0; t < sizeof scales / sizeof scales[0]; t++) {
        double s = scales[t], qmax = 0.0;
        int ok = 1;
#pragma omp parallel for reduction(&& : ok) reduction(max : qmax)
        for (int64_t p = 0; p < U->nnz; p++) {
            double q = (double)U->val[p] * s;
            if (q != nearbyint(q)) ok = 0;
            if (fabs(q) > qmax) qmax = fabs(q);
        }
        if (!ok) continue;
        if (qmax_out != NULL) *qmax_out = qmax;
        /* n, Σx, Σx², Σxy of the most popular item stay below 2^31 */
        if (qmax * qmax * (double)(max_deg + 1) < 2147483647.0) return s;
        return 0.0;
    }
    return 0.0;
}

static rk_status group_queries(knn_ctx *c, rk_error *err)
{
    const rk_model *m = c->m;
    rk_queries *q = c->q;
    int32_t n_items = m->by_item.n_rows;
    c->qptr = calloc((size_t)n_items + 2, sizeof *c->qptr);
    RK_CHECK_ALLOC(c->qptr, err);
    int64_t known = 0;
    for (int64_t t = 0; t < q->n; t++) {
        int32_t u = q->user[t], i = q->item[t];
        if (rk_model_user_known(m, u) && rk_model_item_known(m, i)) {
            c->qptr[i + 2]++;
            known++;
        } else {
            q->pred[t] = rk_predict_fallback(m, c->o->mode, u, i);
            q->used[t] = 0;
        }
    }
    for (int32_t i = 0; i < n_items; i++) c->qptr[i + 2] += c->qptr[i + 1];
    c->qlist = malloc((size_t)(known > 0 ? known : 1) * sizeof *c->qlist);
    RK_CHECK_ALLOC(c->qlist, err);
    for (int64_t t = 0; t < q->n; t++) {
        int32_t u = q->user[t], i = q->item[t];
        if (rk_model_user_known(m, u) && rk_model_item_known(m, i)) c->qlist[c->qptr[i + 1]++] = t;
    }
    return RK_OK;
}

static rk_status prepare_values(knn_ctx *c, rk_knn_stats *st, rk_error *err)
{
    const rk_model *m = c->m;
    const rk_csr *U = &m->by_user, *I = &m->by_item;
    double s = c->sp.metric == RK_METRIC_PEARSON_BASELINE ? 0.0 : rk_knn_grid_scale(m, NULL);
    if (s == 0.0) {
        c->uv = malloc((size_t)(U->nnz > 0 ? U->nnz : 1) * sizeof *c->uv);
        c->iv = malloc((size_t)(I->nnz > 0 ? I->nnz : 1) * sizeof *c->iv);
        if (c->uv == NULL || c->iv == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory for double values");
        c->sp.unit = 1.0;
        if (c->sp.metric == RK_METRIC_PEARSON_BASELINE) {
            rk_model_residuals(m, c->uv, c->iv);
            snprintf(st->path, sizeof st->path, "double residuals");
        } else {
#pragma omp parallel for
            for (int64_t p = 0; p < U->nnz; p++) c->uv[p] = U->val[p];
#pragma omp parallel for
            for (int64_t p = 0; p < I->nnz; p++) c->iv[p] = I->val[p];
            snprintf(st->path, sizeof st->path, "double");
        }
        return RK_OK;
    }
    c->grid = 1;
    c->sp.unit = 1.0 / s;
    c->uq = malloc((size_t)(U->nnz > 0 ? U->nnz : 1) * sizeof *c->uq);
    c->iq = malloc((size_t)(I->nnz > 0 ? I->nnz : 1) * sizeof *c->iq);
    if (c->uq == NULL || c->iq == NULL)
        return rk_error_set(err, RK_E_NOMEM, "out of memory for grid values");
#pragma omp parallel for
    for (int64_t p = 0; p < U->nnz; p++) c->uq[p] = (int32_t)nearbyint((double)U->val[p] * s);
#pragma omp parallel for
    for (int64_t p = 0; p < I->nnz; p++) c->iq[p] = (int32_t)nearbyint((double)I->val[p] * s);
    snprintf(st->path, sizeof st->path, "int32 grid 1/%g", s);
    return RK_OK;
}

static const int64_t *g_cost_for_sort;
static int cmp_cost_desc(const void *a, const void *b)
{
    int64_t ca = g_cost_for_sort[*(const int32_t *)a], cb = g_cost_for_sort[*(const int32_t *)b];
    if (ca != cb) return ca > cb ? -1 : 1;
    return *(const int32_t *)a - *(const int32_t *)b;
}

int64_t rk_knn_item_order(const rk_model *m, int32_t *order, int64_t *cost_out)
{
    const rk_csr *U = &m->by_user, *I = &m->by_item;
    int32_t n = I->n_rows;
    int64_t *cost = cost_out != NULL ? cost_out : malloc((size_t)(n > 0 ? n : 1) * sizeof *cost);
    if (cost == NULL) return -1;
    int64_t total = 0;
#pragma omp parallel for schedule(dynamic, 256) reduction(+ : total)
    for (int32_t i = 0; i < n; i++) {
        int64_t cst = 0;
        for (int64_t p = I->ptr[i]; p < I->ptr[i + 1]; p++) {
            int32_t u = I->idx[p];
            cst += U->ptr[u + 1] - U->ptr[u];
        }
        cost[i] = cst;
        total += cst;
    }
    for (int32_t i = 0; i < n; i++) order[i] = i;
    /* qsort has no context argument in C11: the comparison reads a static,
     * so concurrent calls are serialised */
#pragma omp critical(rk_knn_item_order)
    {
        g_cost_for_sort = cost;
        qsort(order, (size_t)n, sizeof *order, cmp_cost_desc);
        g_cost_for_sort = NULL;
    }
    if (cost_out == NULL) free(cost);
    return total;
}

rk_status rk_knn_cpu(const rk_model *m, const rk_knn_opts *o, rk_lists *lists,
                     rk_queries *q, rk_knn_stats *st, rk_error *err)
{
    rk_knn_stats local;
    knn_ctx c;
    int32_t *order = NULL;
    int64_t *cost = NULL, total_cost = 0;
    rk_status s = RK_OK;
    int failed = 0;
    double t_begin = wall_now(), t_call = t_begin;

    if (st == NULL) st = &local;
    memset(st, 0, sizeof *st);
    snprintf(st->device, sizeof st->device, "cpu");
    RK_FORWARD(rk_knn_check_args(m, o, lists, err));
    memset(&c, 0, sizeof c);
    c.m = m;
    c.o = o;
    c.sp = o->sim;
    c.lists = lists;
    c.q = (q != NULL && q->n > 0) ? q : NULL;

    s = prepare_values(&c, st, err);
    if (s == RK_OK && c.q != NULL) s = group_queries(&c, err);
    if (s == RK_OK) {
        size_t n = (size_t)(m->by_item.n_rows > 0 ? m->by_item.n_rows : 1);
        order = malloc(n * sizeof *order);
        cost = malloc(n * sizeof *cost);
        if (order == NULL || cost == NULL || (total_cost = rk_knn_item_order(m, order, cost)) < 0)
            s = rk_error_set(err, RK_E_NOMEM, "out of memory for the item order");
    }
    if (s != RK_OK) goto done;
    st->pair_updates = total_cost;

    int32_t n_items = m->by_item.n_rows;
    int64_t done_cost = 0;
    double sel_sum = 0.0, pred_sum = 0.0;
    int nthreads = 1;
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
            for (int32_t t = 0; t < n_items; t++) {
                int32_t i = order[t];
                knn_item(&c, &w, i);
                if (o->progress != NULL) {
                    int64_t cst = cost[i], now_done;
#pragma omp atomic capture
                    now_done = done_cost += cst;
                    since_report += cst;
                    if (rk_omp_thread_num() == 0 && since_report > total_cost / 200) {
                        since_report = 0;
                        o->progress(o->progress_ud, "similarity", (double)now_done, (double)total_cost,
                                    "pairs");
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
    free(c.uv);
    free(c.iv);
    return s;
}
