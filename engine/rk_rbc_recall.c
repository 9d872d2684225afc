/* Recall of approximate lists against exact ones (rk_rbc.h). */
#include "rk_rbc.h"
#include "rk_rbc_internal.h"
#include "rk_select.h"
#include "rk_omp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Hits of item i's approximate list in its exact list ex[0..n_ex). */
static int64_t hits_of(const rk_lists *approx, int32_t i, const int32_t *ex, int32_t n_ex)
{
    int64_t hits = 0;
    const int32_t *a = approx->nbr + (int64_t)i * approx->k;
    for (int32_t t = 0; t < approx->len[i]; t++)
        for (int32_t e = 0; e < n_ex; e++)
            if (a[t] == ex[e]) {
                hits++;
                break;
            }
    return hits;
}

/* Entries of item i's approximate list as similar as the last of its exact
 * list (n_ex entries, the last one's similarity `last`), at most n_ex: a
 * list that took other items of equal similarity scores these too. */
static int32_t tie_hits(const rk_lists *approx, int32_t i, float last, int32_t n_ex)
{
    int32_t h = 0;
    const float *s = approx->sim + (int64_t)i * approx->k;
    for (int32_t t = 0; t < approx->len[i] && h < n_ex; t++) h += s[t] >= last;
    return h;
}

static void recall_finish(rk_rbc_recall_result *out, double sum)
{
    out->recall = out->evaluated > 0 ? sum / (double)out->evaluated : 0.0;
}

void rk_rbc_recall_of(const rk_lists *approx, const rk_lists *exact, const int32_t *items, int64_t n,
                      rk_rbc_recall_result *out)
{
    double sum = 0.0;
    memset(out, 0, sizeof *out);
    if (items == NULL) n = exact->n_items;
    for (int64_t t = 0; t < n; t++) {
        const int32_t i = items != NULL ? items[t] : (int32_t)t;
        const int32_t n_ex = exact->len[i];
        out->sampled++;
        if (n_ex == 0) continue;
        const int64_t h = hits_of(approx, i, exact->nbr + (int64_t)i * exact->k, n_ex);
        out->evaluated++;
        out->hits += h;
        out->exact_entries += n_ex;
        sum += (double)h / (double)n_ex;
    }
    recall_finish(out, sum);
}

typedef struct sample_key {
    double key;
    int32_t item;
} sample_key;

static int cmp_sample_key(const void *a, const void *b)
{
    const sample_key *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->item > y->item) - (x->item < y->item);
}

static int cmp_item(const void *a, const void *b)
{
    const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The sample, ascending: the `want` items of smallest hash key (every item
 * when want >= n_items).  NULL when out of memory. */
static int32_t *draw_sample(int32_t n_items, int64_t want, uint64_t seed, int64_t *got)
{
    const size_t n = (size_t)(n_items > 0 ? n_items : 1);
    int32_t *out = malloc(n * sizeof *out);
    if (out == NULL) return NULL;
    if (want >= n_items) {
        for (int32_t i = 0; i < n_items; i++) out[i] = i;
        *got = n_items;
        return out;
    }
    sample_key *k = malloc(n * sizeof *k);
    if (k == NULL) {
        free(out);
        return NULL;
    }
    for (int32_t i = 0; i < n_items; i++) {
        k[i].key = rk_rbc_hash_unit(seed, RK_RBC_SALT_SAMPLE, (uint64_t)i);
        k[i].item = i;
    }
    qsort(k, n, sizeof *k, cmp_sample_key);
    for (int64_t t = 0; t < want; t++) out[t] = k[t].item;
    free(k);
    qsort(out, (size_t)want, sizeof *out, cmp_item);
    *got = want;
    return out;
}

typedef struct exact_ws {
    int32_t *cnt;     /* n_items: co-raters with the query */
    double *dot;      /* n_items */
    int32_t *touched;
    double *hs;       /* k */
    int32_t *hi;
} exact_ws;

static void exact_ws_free(exact_ws *w)
{
    free(w->cnt); free(w->dot); free(w->touched); free(w->hs); free(w->hi);
}

static int exact_ws_init(exact_ws *w, int32_t n_items, int32_t k)
{
    const size_t n = (size_t)(n_items > 0 ? n_items : 1);
    w->cnt = calloc(n, sizeof *w->cnt);
    w->dot = calloc(n, sizeof *w->dot);
    w->touched = malloc(n * sizeof *w->touched);
    w->hs = malloc((size_t)k * sizeof *w->hs);
    w->hi = malloc((size_t)k * sizeof *w->hi);
    if (w->cnt == NULL || w->dot == NULL || w->touched == NULL || w->hs == NULL || w->hi == NULL) {
        exact_ws_free(w);
        return -1;
    }
    return 0;
}

/* What the exact list needs: values in units of both orientations, norms. */
typedef struct exact_ctx {
    const rk_model *m;
    rk_sim_params sp;
    double *ival, *uval;
    double *ncnt, *nsq;
} exact_ctx;

/* Item i's exact list (indices, best first) into w->hi[0..return): the
 * co-rating sums of every item sharing a rater with i, each pair's products
 * added in ascending user order (i's raters in order), as rk_knn_cpu does. */
static int32_t exact_list(const exact_ctx *c, exact_ws *w, int32_t i, int32_t k)
{
    const rk_csr *I = &c->m->by_item, *U = &c->m->by_user;
    int32_t nt = 0;
    for (int64_t p = I->ptr[i]; p < I->ptr[i + 1]; p++) {
        const int32_t u = I->idx[p];
        const double x = c->ival[p];
        for (int64_t q = U->ptr[u]; q < U->ptr[u + 1]; q++) {
            const int32_t j = U->idx[q];
            if (w->cnt[j]++ == 0) w->touched[nt++] = j;
            w->dot[j] += x * c->uval[q];
        }
    }
    rk_topk h;
    rk_topk_init(&h, k, w->hs, w->hi);
    for (int32_t t = 0; t < nt; t++) {
        const int32_t j = w->touched[t];
        if (j != i) {
            const double s = rk_sim_value(&c->sp, (double)w->cnt[j], c->ncnt[i], c->ncnt[j], c->nsq[i], c->nsq[j],
                                          w->dot[j]);
            if (s > 0.0) rk_topk_push(&h, s, j);
        }
        w->cnt[j] = 0;
        w->dot[j] = 0.0;
    }
    rk_topk_sort(&h);
    return h.n;
}

rk_status rk_rbc_recall(const rk_model *m, const rk_knn_opts *o, const rk_lists *approx, int64_t sample,
                        uint64_t seed, int threads, rk_rbc_recall_result *out, rk_error *err)
{
    const rk_csr *I = &m->by_item, *U = &m->by_user;
    const double t0 = rk_omp_wtime();
    exact_ctx c;
    rk_status s = RK_OK;
    memset(out, 0, sizeof *out);
    if (!rk_metric_is_full(o->sim.metric))
        return rk_error_set(err, RK_E_ARG, "recall of the random ball cover: %s is not a full-vector metric",
                            rk_metric_name(o->sim.metric));
    if (approx == NULL) return rk_error_set(err, RK_E_ARG, "recall: no lists");
    RK_FORWARD(rk_knn_check_args(m, o, approx, NULL, err));
    if (sample < 0) return rk_error_set(err, RK_E_ARG, "recall: a sample of %lld queries", (long long)sample);
    memset(&c, 0, sizeof c);
    c.m = m;
    const double scale = rk_knn_grid_scale(m, NULL);
    c.sp = rk_rbc_sim_params(o, scale);
    const size_t n = (size_t)(I->n_rows > 0 ? I->n_rows : 1);
    c.ival = malloc((size_t)(I->nnz > 0 ? I->nnz : 1) * sizeof *c.ival);
    c.uval = malloc((size_t)(U->nnz > 0 ? U->nnz : 1) * sizeof *c.uval);
    c.ncnt = malloc(n * sizeof *c.ncnt);
    c.nsq = malloc(n * sizeof *c.nsq);
    int64_t got = 0;
    int32_t *qh = NULL, *qn = NULL, *qt = NULL;
    int32_t *items = draw_sample(I->n_rows, sample, seed, &got);
    if (c.ival == NULL || c.uval == NULL || c.ncnt == NULL || c.nsq == NULL || items == NULL) {
        s = rk_error_set(err, RK_E_NOMEM, "out of memory for the recall of %d items", I->n_rows);
        goto done;
    }
    rk_rbc_values(m, scale, c.ival);
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < U->nnz; p++)
        c.uval[p] = scale > 0.0 ? nearbyint((double)U->val[p] * scale) : (double)U->val[p];
    rk_knn_item_norms(m, NULL, scale, c.ncnt, c.nsq);

    /* per query: hits and exact entries, summed in sample order afterwards,
     * so that the mean does not depend on the thread count */
    qh = malloc((size_t)(got > 0 ? got : 1) * sizeof *qh);
    qn = malloc((size_t)(got > 0 ? got : 1) * sizeof *qn);
    qt = malloc((size_t)(got > 0 ? got : 1) * sizeof *qt);
    if (qh == NULL || qn == NULL || qt == NULL) {
        s = rk_error_set(err, RK_E_NOMEM, "out of memory for the recall of %lld queries", (long long)got);
        goto done;
    }
    int failed = 0;
#pragma omp parallel num_threads(threads > 0 ? threads : rk_omp_max_threads())
    {
        exact_ws w;
        const int ok = exact_ws_init(&w, I->n_rows, o->k) == 0;
#pragma omp atomic
        failed += !ok;
#pragma omp barrier
        if (!failed) {
#pragma omp for schedule(dynamic, 16)
            for (int64_t t = 0; t < got; t++) {
                const int32_t i = items[t];
                qn[t] = exact_list(&c, &w, i, o->k);
                qh[t] = (int32_t)hits_of(approx, i, w.hi, qn[t]);
                qt[t] = qn[t] > 0 ? tie_hits(approx, i, (float)w.hs[qn[t] - 1], qn[t]) : 0;
            }
        }
        if (ok) exact_ws_free(&w);
    }
    if (failed) {
        s = rk_error_set(err, RK_E_NOMEM, "out of memory for the recall's rows");
        goto done;
    }
    double sum = 0.0, sum_ties = 0.0;
    for (int64_t t = 0; t < got; t++) {
        if (qn[t] == 0) continue;
        sum_ties += (double)qt[t] / (double)qn[t];
        out->evaluated++;
        out->hits += qh[t];
        out->exact_entries += qn[t];
        sum += (double)qh[t] / (double)qn[t];
    }
    out->sampled = got;
    recall_finish(out, sum);
    out->recall_ties = out->evaluated > 0 ? sum_ties / (double)out->evaluated : 0.0;
    out->wall_s = rk_omp_wtime() - t0;
done:
    free(items);
    free(qh);
    free(qn);
    free(qt);
    free(c.ival);
    free(c.uval);
    free(c.ncnt);
    free(c.nsq);
    return s;
}
