/* rk_pmodel_global.c — the global neighbourhood model on the CPU
 * (rk_pmodel.h, CONTRACT.md §4b): each rating's links to its item's list,
 * the training schedule, the estimates; and rk_pmodel_cpu, the model stage
 * after the engine. */
#include "rk_pmodel.h"
#include "rk_omp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rating p (item i, user u): its links into slot/e at *at (NULL: counted only). */
static int64_t links_of(const rk_model *m, const rk_lists *l, int32_t i, int32_t u, uint16_t *slot, float *e)
{
    int64_t n = 0;
    for (int32_t s = 0; s < l->len[i]; s++) {
        const int32_t j = l->nbr[(int64_t)i * l->k + s];
        const int64_t r = rk_csr_entry(&m->by_user, u, j);
        if (r < 0) continue;
        if (slot != NULL) {
            slot[n] = (uint16_t)s;
            e[n] = (float)rk_pmodel_residual(m, u, j, m->by_user.val[r]);
        }
        n++;
    }
    return n;
}

rk_status rk_pmodel_links_cpu(const rk_model *m, const rk_lists *l, int threads, rk_pmodel_links *out, rk_error *err)
{
    const rk_csr *bi = &m->by_item, *bu = &m->by_user;
    const int64_t nnz = bi->ptr[bi->n_rows];
    memset(out, 0, sizeof *out);
    if (l->k > 65536) return rk_error_set(err, RK_E_ARG, "--predict global: lists of %d, above 65536", l->k);
    out->nnz = nnz;
    out->off = malloc((size_t)(nnz + 1) * sizeof *out->off);
    out->by_user = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *out->by_user);
    if (out->off == NULL || out->by_user == NULL) goto nomem;
    const int nt = threads > 0 ? threads : rk_omp_max_threads();
#pragma omp parallel for schedule(dynamic, 64) num_threads(nt)
    for (int32_t i = 0; i < bi->n_rows; i++)
        for (int64_t p = bi->ptr[i]; p < bi->ptr[i + 1]; p++)
            out->off[p + 1] = links_of(m, l, i, bi->idx[p], NULL, NULL);
    out->off[0] = 0;
    for (int64_t p = 0; p < nnz; p++) out->off[p + 1] += out->off[p];
    const int64_t total = out->off[nnz];
    out->slot = malloc((size_t)(total > 0 ? total : 1) * sizeof *out->slot);
    out->e = malloc((size_t)(total > 0 ? total : 1) * sizeof *out->e);
    if (out->slot == NULL || out->e == NULL) goto nomem;
#pragma omp parallel for schedule(dynamic, 64) num_threads(nt)
    for (int32_t i = 0; i < bi->n_rows; i++)
        for (int64_t p = bi->ptr[i]; p < bi->ptr[i + 1]; p++)
            links_of(m, l, i, bi->idx[p], out->slot + out->off[p], out->e + out->off[p]);
    /* user-major entry -> item-major position: items ascending advance each user's cursor */
    int64_t *cur = malloc((size_t)(bu->n_rows > 0 ? bu->n_rows : 1) * sizeof *cur);
    if (cur == NULL) goto nomem;
    memcpy(cur, bu->ptr, (size_t)bu->n_rows * sizeof *cur);
    for (int32_t i = 0; i < bi->n_rows; i++)
        for (int64_t p = bi->ptr[i]; p < bi->ptr[i + 1]; p++) out->by_user[cur[bi->idx[p]]++] = p;
    free(cur);
    return RK_OK;
nomem:
    rk_pmodel_links_free(out);
    return rk_error_set(err, RK_E_NOMEM, "out of memory for the global model's links");
}

void rk_pmodel_links_free(rk_pmodel_links *x)
{
    free(x->off);
    free(x->slot);
    free(x->e);
    free(x->by_user);
    memset(x, 0, sizeof *x);
}

rk_status rk_pmodel_global_alloc(rk_pmodel_global *g, int32_t n_users, int32_t n_items, int32_t k, rk_error *err)
{
    memset(g, 0, sizeof *g);
    g->n_users = n_users;
    g->n_items = n_items;
    g->k = k;
    const size_t nw = (size_t)n_items * (size_t)k;
    g->bu = calloc((size_t)(n_users > 0 ? n_users : 1), sizeof *g->bu);
    g->bi = calloc((size_t)(n_items > 0 ? n_items : 1), sizeof *g->bi);
    g->w = calloc(nw > 0 ? nw : 1, sizeof *g->w);
    g->c = calloc(nw > 0 ? nw : 1, sizeof *g->c);
    if (g->bu == NULL || g->bi == NULL || g->w == NULL || g->c == NULL) {
        rk_pmodel_global_free(g);
        return rk_error_set(err, RK_E_NOMEM, "out of memory for the global model");
    }
    return RK_OK;
}

rk_status rk_pmodel_global_init(const rk_model *m, const rk_lists *l, rk_pmodel_global *g, rk_error *err)
{
    RK_FORWARD(rk_pmodel_global_alloc(g, m->by_user.n_rows, m->by_item.n_rows, l->k, err));
    memcpy(g->bu, m->bu, (size_t)g->n_users * sizeof *g->bu);
    memcpy(g->bi, m->bi, (size_t)g->n_items * sizeof *g->bi);
    return RK_OK;
}

void rk_pmodel_global_free(rk_pmodel_global *g)
{
    free(g->bu);
    free(g->bi);
    free(g->w);
    free(g->c);
    memset(g, 0, sizeof *g);
}

/* The error of item-major rating p (item i, user u, value r) under g. */
static double rating_error(const rk_model *m, const rk_pmodel_links *x, const rk_pmodel_global *g, int64_t p,
                           int32_t u, int32_t i, float r, double *norm)
{
    const int64_t a = x->off[p], b = x->off[p + 1];
    const double *w = g->w + (int64_t)i * g->k, *c = g->c + (int64_t)i * g->k;
    double sum = 0.0;
    for (int64_t t = a; t < b; t++) sum += w[x->slot[t]] * (double)x->e[t] + c[x->slot[t]];
    *norm = b > a ? 1.0 / sqrt((double)(b - a)) : 0.0;
    return (double)r - (((m->mu + g->bu[u]) + g->bi[i]) + *norm * sum);
}

void rk_pmodel_global_item_step(const rk_model *m, const rk_pmodel_links *x, double lr, double reg, int32_t i,
                                rk_pmodel_global *g)
{
    const rk_csr *bi = &m->by_item;
    double *w = g->w + (int64_t)i * g->k, *c = g->c + (int64_t)i * g->k;
    for (int64_t p = bi->ptr[i]; p < bi->ptr[i + 1]; p++) {
        double norm;
        const double e = rating_error(m, x, g, p, bi->idx[p], i, bi->val[p], &norm);
        g->bi[i] += lr * (e - reg * g->bi[i]);
        const double ne = norm * e;
        for (int64_t t = x->off[p]; t < x->off[p + 1]; t++) {
            const int32_t s = x->slot[t];
            w[s] += lr * (ne * (double)x->e[t] - reg * w[s]);
            c[s] += lr * (ne - reg * c[s]);
        }
    }
}

void rk_pmodel_global_user_step(const rk_model *m, const rk_pmodel_links *x, double lr, double reg, int32_t u,
                                rk_pmodel_global *g)
{
    const rk_csr *bu = &m->by_user;
    for (int64_t p = bu->ptr[u]; p < bu->ptr[u + 1]; p++) {
        double norm;
        const double e = rating_error(m, x, g, x->by_user[p], u, bu->idx[p], bu->val[p], &norm);
        g->bu[u] += lr * (e - reg * g->bu[u]);
    }
}

/* The schedule of CONTRACT.md §4b: epochs of every item's half (items in
 * parallel) then every user's half (users in parallel), the step times
 * global_decay after each epoch; g from rk_pmodel_global_init. */
static rk_status train(const rk_model *m, const rk_pmodel_links *x, const rk_pmodel_opts *o, int threads,
                       rk_pmodel_global *g, const rk_lists *l, const rk_queries *q, rk_progress_fn progress,
                       void *ud, rk_error *err)
{
    int32_t next = 0; /* the next checkpoint */
    const double t0 = rk_omp_wtime();
    const int nt = threads > 0 ? threads : rk_omp_max_threads();
    double lr = o->global_lr;
    for (int32_t ep = 0; ep < o->global_epochs; ep++) {
        if (progress != NULL && ep + 1 < o->global_epochs &&
            progress(ud, "global model", (double)ep, (double)o->global_epochs, "epochs") != 0)
            return rk_error_set(err, RK_E_CANCELLED, "global model: stopped by the caller's progress callback");
#pragma omp parallel for schedule(dynamic, 16) num_threads(nt)
        for (int32_t i = 0; i < g->n_items; i++) rk_pmodel_global_item_step(m, x, lr, o->global_reg, i, g);
#pragma omp parallel for schedule(dynamic, 256) num_threads(nt)
        for (int32_t u = 0; u < g->n_users; u++) rk_pmodel_global_user_step(m, x, lr, o->global_reg, u, g);
        lr *= o->global_decay;
        for (; next < o->n_at && o->epochs_at[next] == ep + 1; next++) { /* the predictions after ep + 1 epochs */
            rk_queries qc = *q;
            qc.pred = o->pred_at + (int64_t)next * q->n;
            rk_pmodel_global_predict(m, l, g, NULL, NULL, nt, &qc);
        }
    }
    g->train_s = rk_omp_wtime() - t0;
    return RK_OK;
}

/* The neighbour term of the rating of item i by the user pu: R = pu's items
 * (row u of h) in i's list, in list order, ê from pu's ALS b_u; *used = |R|.
 * Returns |R|^-½ Σ (w ê + c), 0 for an empty R. */
static double nbr_term(const rk_model *m, const rk_lists *l, const rk_pmodel_global *g, const rk_csr *h, int32_t u,
                       double bu_als, int32_t i, int32_t *used)
{
    const double *w = g->w + (int64_t)i * g->k, *c = g->c + (int64_t)i * g->k;
    double sum = 0.0;
    int32_t n = 0;
    for (int32_t s = 0; s < l->len[i]; s++) {
        const int32_t j = l->nbr[(int64_t)i * l->k + s];
        const int64_t r = rk_csr_entry(h, u, j);
        if (r < 0) continue;
        const float e = (float)rk_pmodel_residual_bu(m, bu_als, j, h->val[r]);
        sum += w[s] * (double)e + c[s];
        n++;
    }
    *used = n;
    const double norm = n > 0 ? 1.0 / sqrt((double)n) : 0.0;
    return norm * sum;
}

double rk_pmodel_global_fold_user(const rk_model *m, const rk_lists *l, const rk_pmodel_global *g,
                                  const rk_pmodel_opts *o, const rk_csr *hist, int32_t row, double *term)
{
    const rk_predict_user pu = rk_predict_user_at(m, RK_PREDICT_GLOBAL, hist, row);
    /* each rating's neighbour term reads only the history and the trained item side: once, not an epoch */
    for (int64_t x = 0; x < pu.n; x++) {
        int32_t used;
        term[x] = nbr_term(m, l, g, hist, row, pu.bu, pu.item[x], &used);
    }
    double b = pu.bu, lr = o->global_lr;
    for (int32_t ep = 0; ep < o->global_epochs; ep++) {
        for (int64_t x = 0; x < pu.n; x++) {
            const double e = (double)pu.rating[x] - (((m->mu + b) + g->bi[pu.item[x]]) + term[x]);
            b += lr * (e - o->global_reg * b);
        }
        lr *= o->global_decay;
    }
    return b;
}

/* Row r of h is model user mu's training row: the same items and rating bits. */
static int same_row(const rk_model *m, const rk_csr *h, int32_t r, int32_t mu)
{
    const rk_csr *U = &m->by_user;
    if (mu < 0 || mu >= U->n_rows) return 0;
    const int64_t n = h->ptr[r + 1] - h->ptr[r];
    if (n != U->ptr[mu + 1] - U->ptr[mu] || n == 0) return 0;
    return memcmp(h->idx + h->ptr[r], U->idx + U->ptr[mu], (size_t)n * sizeof *h->idx) == 0 &&
           memcmp(h->val + h->ptr[r], U->val + U->ptr[mu], (size_t)n * sizeof *h->val) == 0;
}

rk_status rk_pmodel_global_user_biases(const rk_model *m, const rk_lists *l, const rk_pmodel_global *g,
                                       const rk_pmodel_opts *o, const rk_csr *hist, const int32_t *model_user,
                                       int threads, double *bt, rk_error *err)
{
    int64_t longest = 1;
    for (int32_t r = 0; r < hist->n_rows; r++)
        if (hist->ptr[r + 1] - hist->ptr[r] > longest) longest = hist->ptr[r + 1] - hist->ptr[r];
    int failed = 0;
#pragma omp parallel num_threads(threads > 0 ? threads : rk_omp_max_threads())
    {
        double *term = malloc((size_t)longest * sizeof *term); /* a row's neighbour terms */
        if (term == NULL) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 64)
        for (int32_t r = 0; r < hist->n_rows; r++) {
            const int32_t mu = model_user != NULL ? model_user[r] : -1;
            if (same_row(m, hist, r, mu)) bt[r] = g->bu[mu];
            else if (term != NULL) bt[r] = rk_pmodel_global_fold_user(m, l, g, o, hist, r, term);
        }
        free(term);
    }
    return failed ? rk_error_set(err, RK_E_NOMEM, "out of memory for the users' folded-in biases") : RK_OK;
}

void rk_pmodel_global_predict(const rk_model *m, const rk_lists *l, const rk_pmodel_global *g,
                              const rk_csr *hist, const double *bt, int threads, rk_queries *q)
{
    const rk_csr *h = hist != NULL ? hist : &m->by_user;
#pragma omp parallel for schedule(static) num_threads(threads > 0 ? threads : rk_omp_max_threads())
    for (int64_t t = 0; t < q->n; t++) {
        const int32_t u = q->user[t], i = q->item[t];
        const rk_predict_user pu = rk_predict_user_at(m, RK_PREDICT_GLOBAL, hist, u);
        const int ku = pu.n > 0, ki = rk_model_item_known(m, i);
        const double b = !ku ? 0.0 : hist != NULL ? bt[u] : g->bu[u];
        int32_t used = 0;
        double est;
        if (ku && ki) {
            const double term = nbr_term(m, l, g, h, u, pu.bu, i, &used);
            est = ((m->mu + b) + g->bi[i]) + term;
        } else {
            est = m->mu;
            if (ku) est += b;
            if (ki) est += g->bi[i];
        }
        q->pred[t] = rk_predict_clip(m, est);
        q->used[t] = used;
    }
}

static rk_status stage(const rk_model *m, const rk_knn_opts *ko, const rk_lists *lists, rk_queries *q,
                       rk_knn_stats *st, rk_error *err)
{
    const double t0 = rk_omp_wtime();
    rk_status s = RK_OK;
    if (ko->mode == RK_PREDICT_INTERPOLATE) {
        float *cov = NULL;
        s = rk_pmodel_cov_cpu(m, ko->pm.interp_shrink, ko->threads, &cov, err);
        const double t1 = rk_omp_wtime();
        if (s == RK_OK) s = rk_pmodel_interpolate_cpu(m, cov, &ko->pm, ko->k, NULL, ko->threads, q, err);
        free(cov);
        if (st != NULL && s == RK_OK)
            snprintf(st->model, sizeof st->model, "cpu: covariances %.4f s, systems %.4f s", t1 - t0,
                     rk_omp_wtime() - t1);
    } else if (ko->mode == RK_PREDICT_GLOBAL) {
        rk_pmodel_links x;
        rk_pmodel_global g;
        memset(&g, 0, sizeof g);
        s = rk_pmodel_links_cpu(m, lists, ko->threads, &x, err);
        const double t1 = rk_omp_wtime();
        if (s == RK_OK) s = rk_pmodel_global_init(m, lists, &g, err);
        if (s == RK_OK)
            s = train(m, &x, &ko->pm, ko->threads, &g, lists, q, ko->progress, ko->progress_ud, err);
        if (s == RK_OK) rk_pmodel_global_predict(m, lists, &g, NULL, NULL, ko->threads, q);
        if (st != NULL && s == RK_OK)
            snprintf(st->model, sizeof st->model, "cpu: links %.4f s (%lld), training %.4f s (%d epochs)",
                     t1 - t0, (long long)x.off[x.nnz], g.train_s, ko->pm.global_epochs);
        if (s == RK_OK && q->global != NULL) *q->global = g; /* the caller's now */
        else rk_pmodel_global_free(&g);
        rk_pmodel_links_free(&x);
    }
    if (st != NULL) st->model_s = rk_omp_wtime() - t0;
    return s;
}

rk_status rk_pmodel_cpu(const rk_model *m, const rk_knn_opts *ko, const rk_lists *lists, rk_queries *q,
                        rk_knn_stats *st, rk_error *err)
{
    if (!rk_predict_is_model(ko->mode) || q == NULL) return RK_OK;
    if (ko->mode == RK_PREDICT_INTERPOLATE && q->nb == NULL)
        return rk_error_set(err, RK_E_ARG, "--predict interpolate: the engine gave no neighbours");
    if (ko->mode == RK_PREDICT_GLOBAL && lists == NULL)
        return rk_error_set(err, RK_E_ARG, "--predict global: no lists to train on");
    rk_model full; /* the item-major matrix the stage walks, built for the call when deferred */
    RK_FORWARD(rk_model_complete_copy(m, &full, err));
    const rk_status s = stage(&full, ko, lists, q, st, err);
    rk_model_complete_free(&full, m);
    return s;
}

rk_status rk_pmodel_hist_cpu(const rk_model *m, const rk_knn_opts *ko, const rk_lists *lists,
                             const rk_pmodel_global *g, const rk_csr *hist, const int32_t *model_user,
                             rk_queries *q, rk_knn_stats *st, rk_error *err)
{
    if (!rk_predict_is_model(ko->mode) || q == NULL || q->n == 0) return RK_OK;
    if (hist == NULL || (ko->mode == RK_PREDICT_INTERPOLATE && q->nb == NULL) ||
        (ko->mode == RK_PREDICT_GLOBAL && (g == NULL || lists == NULL || g->k != lists->k)))
        return rk_error_set(err, RK_E_ARG, "predict %s: a saved model's answers need the histories%s",
                            rk_predict_mode_name(ko->mode),
                            ko->mode == RK_PREDICT_GLOBAL ? " and the trained model" : " and the neighbours");
    const double t0 = rk_omp_wtime();
    rk_model full;
    RK_FORWARD(rk_model_complete_copy(m, &full, err));
    rk_status s = RK_OK;
    if (ko->mode == RK_PREDICT_INTERPOLATE) {
        float *cov = NULL;
        s = rk_pmodel_cov_cpu(&full, ko->pm.interp_shrink, ko->threads, &cov, err);
        if (s == RK_OK) s = rk_pmodel_interpolate_cpu(&full, cov, &ko->pm, ko->k, hist, ko->threads, q, err);
        free(cov);
    } else {
        double *bt = malloc((size_t)(hist->n_rows > 0 ? hist->n_rows : 1) * sizeof *bt);
        if (bt == NULL) s = rk_error_set(err, RK_E_NOMEM, "out of memory for %d users' biases", hist->n_rows);
        if (s == RK_OK) s = rk_pmodel_global_user_biases(&full, lists, g, &ko->pm, hist, model_user, ko->threads, bt,
                                                         err);
        if (s == RK_OK) rk_pmodel_global_predict(&full, lists, g, hist, bt, ko->threads, q);
        free(bt);
    }
    rk_model_complete_free(&full, m);
    if (st != NULL) st->model_s = rk_omp_wtime() - t0;
    return s;
}
