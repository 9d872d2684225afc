/* What both engines share (rk_knn.h): options, the argument checks, the
 * list arrays, the rating grid and the item order. */
#include "rk_knn.h"
#include "rk_csr.h"
#include "rk_omp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rk_knn_opts_default(rk_knn_opts *o)
{
    memset(o, 0, sizeof *o);
    o->sim.metric = RK_METRIC_PEARSON;
    o->sim.min_support = 1;
    o->sim.shrinkage = 0.0;
    o->sim.unit = 1.0;
    o->sim.alpha = 0.5;
    o->sim.beta = 0.0;
    o->k = 20;
    o->mode = RK_PREDICT_MEANS;
    rk_pmodel_opts_default(&o->pm);
    o->min_k = 1;
    o->chunk_items = 0;
}

int rk_knn_needs_baselines(const rk_knn_opts *o)
{
    return rk_predict_reads_baselines(o->mode) || rk_metric_on_residuals(o->sim.metric);
}

rk_status rk_knn_check_args(const rk_model *m, const rk_knn_opts *o, const rk_lists *lists, const rk_queries *q,
                            rk_error *err)
{
    if (rk_metric_row_of(o->sim.metric) == NULL)
        return rk_error_set(err, RK_E_ARG, "metric %d is not in the metric table", (int)o->sim.metric);
    if (o->rows != NULL) {
        const int32_t n_items = m->by_item.n_rows;
        if (o->n_rows < 0 || o->n_rows > n_items)
            return rk_error_set(err, RK_E_ARG, "a subset of %d items out of %d", o->n_rows, n_items);
        unsigned char *seen = calloc((size_t)(n_items > 0 ? n_items : 1), 1);
        RK_CHECK_ALLOC(seen, err);
        for (int32_t t = 0; t < o->n_rows; t++) {
            const int32_t i = o->rows[t];
            if (i < 0 || i >= n_items || seen[i]) {
                free(seen);
                return rk_error_set(err, RK_E_ARG, "subset entry %d: item index %d is out of range or repeated", t, i);
            }
            seen[i] = 1;
        }
        /* a query needs its item's whole row: the item must be computed */
        for (int64_t t = 0; q != NULL && t < q->n; t++) {
            const int32_t u = q->user[t], i = q->item[t];
            if (rk_model_user_known(m, u) && rk_model_item_known(m, i) && !seen[i]) {
                free(seen);
                return rk_error_set(err, RK_E_ARG, "prediction query %lld names item %d, which is not among the "
                                    "subset's rows", (long long)t, i);
            }
        }
        free(seen);
    }
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
    free(l->len); free(l->nbr); free(l->sim); free(l->support);
    memset(l, 0, sizeof *l);
}

/* Whether every value times s is an integer, and the largest |value × s|
 * (*qmax, only when they all are).  A value is an integer when its int64
 * conversion equals it, or its magnitude is 2^52 or more (inline, where
 * libm's nearbyint was a call per value), and the blocks stop once one of
 * them found a value that is not (ratings in half stars fail the grid of 1
 * at once, instead of after a whole pass). */
/* on_grid of a model whose values are per user (rk_model.row_val): the
 * values of the users with entries. */
static int rows_on_grid(const rk_csr *U, const float *rv, double s, double *qmax)
{
    int ok = 1;
    double qm = 0.0;
#pragma omp parallel for schedule(static) reduction(&& : ok) reduction(max : qm)
    for (int32_t u = 0; u < U->n_rows; u++) {
        if (U->ptr[u + 1] == U->ptr[u]) continue;
        const double q = (double)rv[u] * s, a = fabs(q);
        ok = ok && (a >= 4503599627370496.0 || (double)(int64_t)q == q);
        if (a > qm) qm = a;
    }
    *qmax = qm;
    return ok;
}

static int on_grid(const rk_csr *U, double s, double *qmax)
{
    const int64_t B = 65536, nb = (U->nnz + B - 1) / B;
    int ok = 1;
    double qm = 0.0;
#pragma omp parallel for schedule(dynamic, 4) reduction(max : qm)
    for (int64_t b = 0; b < nb; b++) {
        if (!__atomic_load_n(&ok, __ATOMIC_RELAXED)) continue;
        const int64_t e = (b + 1) * B < U->nnz ? (b + 1) * B : U->nnz;
        for (int64_t p = b * B; p < e; p++) {
            const double q = (double)U->val[p] * s, a = fabs(q);
            if (!(a >= 4503599627370496.0 || (double)(int64_t)q == q)) {
                __atomic_store_n(&ok, 0, __ATOMIC_RELAXED);
                break;
            }
            if (a > qm) qm = a;
        }
    }
    *qmax = qm;
    return ok;
}

double rk_knn_grid(const rk_model *m, double *qmax_out, int *wide)
{
    static const double scales[] = {1, 2, 4, 5, 10, 20, 100};
    const int64_t max_deg = rk_csr_longest_row(&m->by_item);
    if (wide != NULL) *wide = 0;
    for (size_t t = 0; t < sizeof scales / sizeof scales[0]; t++) {
        double qmax = 0.0;
        if (!(m->row_val != NULL ? rows_on_grid(&m->by_user, m->row_val, scales[t], &qmax)
                                 : on_grid(&m->by_user, scales[t], &qmax)))
            continue;
        if (qmax_out != NULL) *qmax_out = qmax;
        /* integers (the grid of 1) whose products sum below 2^53 */
        if (wide != NULL && t == 0)
            *wide = qmax < 2147483647.0 && qmax * qmax * (double)(max_deg + 1) < 9007199254740992.0;
        /* n, Σx, Σx², Σxy of the most popular item stay below 2^31 */
        if (qmax * qmax * (double)(max_deg + 1) < 2147483647.0) return scales[t];
        return 0.0;
    }
    return 0.0;
}

double rk_knn_grid_scale(const rk_model *m, double *qmax_out) { return rk_knn_grid(m, qmax_out, NULL); }

int rk_knn_wide_grid(const rk_model *m)
{
    int wide;
    (void)rk_knn_grid(m, NULL, &wide);
    return wide;
}

void rk_knn_item_norms(const rk_model *m, const rk_sim_params *sp, double scale, double *cnt, double *sq)
{
    const rk_csr *I = &m->by_item;
    const rk_metric metric = sp != NULL ? sp->metric : RK_METRIC_COUNT;
    /* Σ x² of each item's row (from by_user when the item-major entries
     * are deferred: the same doubles) */
    const int squares = metric != RK_METRIC_RP3BETA; /* rp3beta's are the counts' */
    if (squares) (void)rk_model_item_sums(m, RK_ITEM_SQUARE, scale, sq, NULL);
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < I->n_rows; i++) {
        const double acc = squares ? sq[i] : 0.0;
        const double c = (double)(I->ptr[i + 1] - I->ptr[i]);
        cnt[i] = c;
        if (metric == RK_METRIC_WEIGHTED_COSINE) {
            cnt[i] = acc > 0.0 ? pow(acc, sp->alpha) : 0.0;
            sq[i] = acc > 0.0 ? pow(acc, 1.0 - sp->alpha) : 0.0;
        } else if (metric == RK_METRIC_RP3BETA) {
            cnt[i] = c > 0.0 ? pow(c, -sp->alpha) : 0.0;
            sq[i] = c > 0.0 ? pow(c, -sp->beta) : 0.0;
        }
    }
}

static void sort_by_cost(int32_t *order, int32_t n, const int64_t *cost);

/* rk_knn_subset_order from the costs given (o->item_cost): the rows sorted
 * as rk_knn_item_order sorts every item, by descending cost, ties by index. */
static int64_t order_from_costs(const rk_model *m, const rk_knn_opts *o, int32_t *order, int64_t *cost, int32_t *n_out)
{
    const int32_t n_items = m->by_item.n_rows, n = o->rows != NULL ? o->n_rows : n_items;
    int64_t work = 0;
    for (int32_t t = 0; t < n; t++) {
        order[t] = o->rows != NULL ? o->rows[t] : t;
        work += o->item_cost[order[t]];
    }
    sort_by_cost(order, n, o->item_cost);
    if (cost != NULL && n_items > 0) memcpy(cost, o->item_cost, (size_t)n_items * sizeof *cost);
    *n_out = n;
    return work;
}

int64_t rk_knn_subset_order(const rk_model *m, const rk_knn_opts *o, int32_t *order, int64_t *cost, int32_t *n_out)
{
    const int32_t n_items = m->by_item.n_rows;
    if (o->item_cost != NULL) return order_from_costs(m, o, order, cost, n_out);
    int64_t *c = cost != NULL ? cost : malloc((size_t)(n_items > 0 ? n_items : 1) * sizeof *c);
    unsigned char *in = o->rows != NULL ? calloc((size_t)(n_items > 0 ? n_items : 1), 1) : NULL;
    int64_t work = -1;
    if (c == NULL || (o->rows != NULL && in == NULL)) goto done;
    work = rk_knn_item_order(m, order, c);
    if (work < 0 || o->rows == NULL) {
        *n_out = n_items;
        goto done;
    }
    for (int32_t t = 0; t < o->n_rows; t++) in[o->rows[t]] = 1;
    int32_t n = 0;
    work = 0;
    for (int32_t t = 0; t < n_items; t++)
        if (in[order[t]]) {
            work += c[order[t]];
            order[n++] = order[t];
        }
    *n_out = n;
done:
    if (c != cost) free(c);
    free(in);
    return work;
}

static const int64_t *g_cost_for_sort;
static int cmp_cost_desc(const void *a, const void *b)
{
    int64_t ca = g_cost_for_sort[*(const int32_t *)a], cb = g_cost_for_sort[*(const int32_t *)b];
    if (ca != cb) return ca > cb ? -1 : 1;
    return *(const int32_t *)a - *(const int32_t *)b;
}

/* order[n] by descending cost, ties by ascending index.  qsort has no
 * context argument in C11: the comparison reads a static, so concurrent
 * calls are serialised. */
static void sort_by_cost(int32_t *order, int32_t n, const int64_t *cost)
{
#pragma omp critical(rk_knn_item_order)
    {
        g_cost_for_sort = cost;
        qsort(order, (size_t)n, sizeof *order, cmp_cost_desc);
        g_cost_for_sort = NULL;
    }
}

int64_t rk_knn_item_order(const rk_model *m, int32_t *order, int64_t *cost_out)
{
    const rk_csr *I = &m->by_item;
    int32_t n = I->n_rows;
    int64_t *cost = cost_out != NULL ? cost_out : malloc((size_t)(n > 0 ? n : 1) * sizeof *cost);
    if (cost == NULL) return -1;
    /* Σ over an item's raters of their row lengths: integers, exact in a
     * double, from by_item or, when it is deferred, from by_user */
    double *c = malloc((size_t)(n > 0 ? n : 1) * sizeof *c);
    if (c == NULL) {
        if (cost != cost_out) free(cost);
        return -1;
    }
    (void)rk_model_item_sums(m, RK_ITEM_RATER_ROWS, 0.0, c, NULL);
    int64_t total = 0;
    for (int32_t i = 0; i < n; i++) {
        cost[i] = (int64_t)c[i];
        total += cost[i];
    }
    free(c);
    for (int32_t i = 0; i < n; i++) order[i] = i;
    sort_by_cost(order, n, cost);
    if (cost_out == NULL) free(cost);
    return total;
}


int64_t rk_knn_item_sym_cost(const rk_model *m, int64_t *cost)
{
    const rk_csr *U = &m->by_user;
    const int32_t n = U->n_cols;
    /* a row of counts a thread, summed after: no atomics on the popular
     * items; at most 256 MiB of them (fewer threads for a large catalogue) */
    const size_t row = (size_t)(n > 0 ? n : 1) * sizeof(int64_t), cap = (size_t)256 << 20;
    int nt = rk_omp_max_threads();
    if ((size_t)nt * row > cap) nt = cap / row > 0 ? (int)(cap / row) : 1;
    int64_t *part = calloc((size_t)nt * (size_t)(n > 0 ? n : 1), sizeof *part);
    if (part == NULL) return -1;
    int64_t total = 0;
#pragma omp parallel num_threads(nt) reduction(+ : total)
    {
        int64_t *c = part + (size_t)rk_omp_thread_num() * (size_t)(n > 0 ? n : 1);
#pragma omp for schedule(dynamic, 1024)
        for (int32_t u = 0; u < U->n_rows; u++) {
            const int64_t lo = U->ptr[u], hi = U->ptr[u + 1];
            for (int64_t p = lo; p < hi; p++) c[U->idx[p]] += hi - p - 1;
            total += (hi - lo) * (hi - lo - 1) / 2;
        }
    }
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < n; i++) {
        int64_t v = 0;
        for (int t = 0; t < nt; t++) v += part[(size_t)t * (size_t)n + (size_t)i];
        cost[i] = v;
    }
    free(part);
    return total;
}
