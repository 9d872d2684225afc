/* The set-up of a CPU engine run (rk_knn_internal.h): which accumulation
 * path the values allow, the values in its form, the chunk width, the
 * queries grouped by item. */
#define _GNU_SOURCE /* madvise, MADV_HUGEPAGE */
#include "rk_knn_internal.h"
#include "rk_csr.h"
#include "rk_metric.h"
#include "rk_omp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The rows are entered at random places, once per rater and chunk: with 4 KB
 * pages nearly every entry is a TLB miss as well.  Large arrays are aligned
 * to 2 MB and offered to the kernel for huge pages; free() releases them. */
void *rk_knn_big_alloc(size_t bytes)
{
    const size_t huge = (size_t)2 << 20;
    if (bytes < 2 * huge) return malloc(bytes > 0 ? bytes : 1);
    bytes = (bytes + huge - 1) / huge * huge;
    void *p = aligned_alloc(huge, bytes);
#ifdef MADV_HUGEPAGE
    if (p != NULL) (void)madvise(p, bytes, MADV_HUGEPAGE); /* advice only: failure is harmless */
#endif
    return p;
}

size_t rk_knn_entry_bytes(int path)
{
    return path == PATH_PACKED ? sizeof(v2u) : path == PATH_V8I ? sizeof(v8i) : path == PATH_DOT ? sizeof(v2d)
                                                                                                  : sizeof(acc_d);
}

/* ---- choosing the accumulation path -------------------------------------- */

rk_status rk_knn_group_queries(knn_ctx *c, rk_error *err)
{
    const rk_model *m = c->m;
    rk_queries *q = c->q;
    int32_t n_items = m->by_item.n_rows;
    c->qptr = calloc((size_t)n_items + 2, sizeof *c->qptr);
    RK_CHECK_ALLOC(c->qptr, err);
    int64_t known = 0;
    for (int64_t t = 0; t < q->n; t++) {
        const int32_t i = q->item[t];
        const rk_predict_user pu = rk_predict_user_at(m, c->o->mode, c->hist, q->user[t]);
        q->used[t] = -1; /* known: predict_item answers it */
        if (pu.n > 0 && rk_model_item_known(m, i)) {
            c->qptr[i + 2]++;
            known++;
        } else {
            q->pred[t] = rk_predict_fallback_user(m, c->o->mode, &pu, i);
            q->used[t] = 0;
        }
    }
    for (int32_t i = 0; i < n_items; i++) c->qptr[i + 2] += c->qptr[i + 1];
    c->qlist = malloc((size_t)(known > 0 ? known : 1) * sizeof *c->qlist);
    RK_CHECK_ALLOC(c->qlist, err);
    for (int64_t t = 0; t < q->n; t++)
        if (q->used[t] < 0) c->qlist[c->qptr[q->item[t] + 1]++] = t;
    return RK_OK;
}

static int bits_for(uint64_t v)
{
    int b = 0;
    while (b < 64 && (v >> b) != 0) b++;
    return b;
}

/* Packed entries hold the sums of offset values x' = q - qmin in [0, range]
 * as fields of two words: n | Σx'² | Σy'² and Σx' | Σy' | Σx'y', each as wide
 * as its largest possible value (n is at most the most popular item's rater
 * count), so that adding two entries never carries from one field into the
 * next.  The stream of a user's row packs the item and y' into 32 bits.
 * @return 1 and the widths in c when everything fits, else 0. */
static int pack_plan(knn_ctx *c, int32_t qmin, int32_t qmax, int64_t max_deg, int32_t n_items)
{
    int64_t range = (int64_t)qmax - qmin;
    if (range < 0 || range > KNN_PACK_MAX_RANGE) return 0;
    c->b_n = bits_for((uint64_t)max_deg);
    c->b_1 = bits_for((uint64_t)max_deg * (uint64_t)range);
    c->b_2 = bits_for((uint64_t)max_deg * (uint64_t)(range * range));
    c->ybits = bits_for((uint64_t)range);
    c->qmin = qmin;
    c->tab_w = (int32_t)range + 1;
    double qa = fmax(fabs((double)qmin), fabs((double)qmax));
    c->exact_num = (double)max_deg * (double)max_deg * qa * qa < 9007199254740992.0;
    return c->b_n + 2 * c->b_2 <= 64 && 2 * c->b_1 + c->b_2 <= 64 &&
           ((uint64_t)n_items << c->ybits) <= ((uint64_t)1 << 32);
}

rk_status rk_knn_prepare_values(knn_ctx *c, rk_knn_stats *st, rk_error *err)
{
    const rk_model *m = c->m;
    const rk_csr *U = &m->by_user, *I = &m->by_item;
    double s = rk_metric_on_residuals(c->sp.metric) ? 0.0 : rk_knn_grid_scale(m, NULL);
    if (s == 0.0) {
        /* the full-vector metrics need only n and Σxy of a pair */
        c->path = rk_metric_is_full(c->sp.metric) && !rk_metric_on_residuals(c->sp.metric) ? PATH_DOT : PATH_DOUBLE;
        c->uv = malloc((size_t)(U->nnz > 0 ? U->nnz : 1) * sizeof *c->uv);
        c->iv = malloc((size_t)(I->nnz > 0 ? I->nnz : 1) * sizeof *c->iv);
        if (c->uv == NULL || c->iv == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory for double values");
        c->sp.unit = 1.0;
        if (rk_metric_on_residuals(c->sp.metric)) {
            rk_model_residuals(m, c->uv, c->iv);
            snprintf(st->path, sizeof st->path, "double residuals");
        } else {
#pragma omp parallel for
            for (int64_t p = 0; p < U->nnz; p++) c->uv[p] = U->val[p];
#pragma omp parallel for
            for (int64_t p = 0; p < I->nnz; p++) c->iv[p] = I->val[p];
            if (c->path == PATH_DOT) {
                int varies = 0;
#pragma omp parallel for schedule(dynamic, 1024) reduction(| : varies)
                for (int32_t u = 0; u < U->n_rows; u++)
                    for (int64_t p = U->ptr[u] + 1; p < U->ptr[u + 1]; p++)
                        if (!(c->uv[p] == c->uv[U->ptr[u]])) {
                            varies = 1;
                            break;
                        }
                c->uconst = !varies;
            }
            snprintf(st->path, sizeof st->path, "%s", c->path != PATH_DOT ? "double" : c->uconst ? "double dot, a value per user" : "double dot");
        }
        return RK_OK;
    }
    c->sp.unit = 1.0 / s;
    c->scale = s;
    c->iq = malloc((size_t)(I->nnz > 0 ? I->nnz : 1) * sizeof *c->iq);
    if (c->iq == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory for grid values");
    int32_t qmin = INT32_MAX, qmax = INT32_MIN;
#pragma omp parallel for reduction(min : qmin) reduction(max : qmax)
    for (int64_t p = 0; p < I->nnz; p++) {
        c->iq[p] = (int32_t)nearbyint((double)I->val[p] * s);
        if (c->iq[p] < qmin) qmin = c->iq[p];
        if (c->iq[p] > qmax) qmax = c->iq[p];
    }
    if (pack_plan(c, qmin, qmax, rk_csr_longest_row(I), I->n_rows)) {
        c->path = PATH_PACKED;
        c->pk = rk_knn_big_alloc((size_t)U->nnz * sizeof *c->pk);
        c->tab = aligned_alloc(16, (size_t)c->tab_w * (size_t)c->tab_w * sizeof *c->tab);
        if (c->pk == NULL || c->tab == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory for grid values");
#pragma omp parallel for
        for (int64_t p = 0; p < U->nnz; p++)
            c->pk[p] = (uint32_t)U->idx[p] << c->ybits | (uint32_t)((int32_t)nearbyint((double)U->val[p] * s) - qmin);
#pragma omp parallel for
        for (int64_t p = 0; p < I->nnz; p++) c->iq[p] -= qmin;
        for (uint64_t x = 0; x < (uint64_t)c->tab_w; x++)
            for (uint64_t y = 0; y < (uint64_t)c->tab_w; y++)
                c->tab[x * (uint64_t)c->tab_w + y] =
                    (v2u){1 | x * x << c->b_n | y * y << (c->b_n + c->b_2), x | y << c->b_1 | x * y << (2 * c->b_1)};
        snprintf(st->path, sizeof st->path, "packed int grid 1/%g", s);
        return RK_OK;
    }
    c->path = PATH_V8I;
    c->uq = malloc((size_t)(U->nnz > 0 ? U->nnz : 1) * sizeof *c->uq);
    if (c->uq == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory for grid values");
#pragma omp parallel for
    for (int64_t p = 0; p < U->nnz; p++) c->uq[p] = (int32_t)nearbyint((double)U->val[p] * s);
    snprintf(st->path, sizeof st->path, "int32 grid 1/%g", s);
    return RK_OK;
}

/* Columns per chunk: half of the L2 cache (the rest holds the rows being
 * read, the cursors and the heap), unless the options force a width. */
void rk_knn_plan_chunks(knn_ctx *c)
{
    const int32_t n_items = c->m->by_item.n_rows;
    long l2 = -1;
#ifdef _SC_LEVEL2_CACHE_SIZE
    l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    if (l2 < 64 * 1024 || l2 > 64L * 1024 * 1024) l2 = 512 * 1024; /* unknown or implausible */
    int64_t chunk = c->o->chunk_items > 0 ? c->o->chunk_items : (int64_t)(l2 / 2) / (int64_t)rk_knn_entry_bytes(c->path);
    if (chunk < 1) chunk = 1;
    if (chunk >= n_items) chunk = n_items > 0 ? n_items : 1;
    c->chunk = (int32_t)chunk;
    c->n_chunks = n_items > 0 ? (int32_t)((n_items + chunk - 1) / chunk) : 1;
    c->dense_cost = (int64_t)KNN_DENSE_RATIO * (n_items > 0 ? n_items : 1);
}
