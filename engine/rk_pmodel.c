/* rk_pmodel.c — the interpolation and global neighbourhood models on the
 * CPU (rk_pmodel.h, CONTRACT.md §4b).  Every sum runs in a fixed order, so
 * that thread counts and the CUDA twin give the same bits. */
#include "rk_pmodel.h"
#include "rk_omp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void rk_pmodel_opts_default(rk_pmodel_opts *o)
{
    o->interp_shrink = 100.0;
    o->interp_reg = 0.05;
    o->global_lr = 0.005;
    o->global_reg = 0.002;
    o->global_decay = 1.0;
    o->global_epochs = 15;
    o->epochs_at = NULL;
    o->n_at = 0;
    o->pred_at = NULL;
}

/* ---- interpolation ------------------------------------------------------------ */

double rk_pmodel_cov_diag(const rk_model *m)
{
    const rk_csr *bi = &m->by_item;
    double sum = 0.0;
    int64_t items = 0;
    for (int32_t j = 0; j < bi->n_rows; j++) {
        if (bi->ptr[j + 1] == bi->ptr[j]) continue;
        double s = 0.0;
        for (int64_t p = bi->ptr[j]; p < bi->ptr[j + 1]; p++) {
            const double e = rk_pmodel_residual(m, bi->idx[p], j, bi->val[p]);
            s += e * e;
        }
        sum += s / (double)(bi->ptr[j + 1] - bi->ptr[j]);
        items++;
    }
    return items > 0 ? sum / (double)items : 0.0;
}

/* Row j of the shrunk covariance matrix into out (n_items floats): for
 * l ≠ j, s_jl / (n_jl + β), and for l = j, (s_jj + β·diag) / (n_jj + β),
 * s_jl = Σ e_vj e_vl over the users v rating both (ascending v), n_jl their
 * number.  acc (n_items doubles) and cnt (n_items ints) are zeroed scratch,
 * zero again on return. */
static void cov_row(const rk_model *m, int32_t j, double beta, double diag, double *acc, int32_t *cnt, float *out)
{
    const rk_csr *bi = &m->by_item, *bu = &m->by_user;
    const int32_t n = bi->n_rows;
    for (int64_t p = bi->ptr[j]; p < bi->ptr[j + 1]; p++) {
        const int32_t v = bi->idx[p];
        const double ej = rk_pmodel_residual(m, v, j, bi->val[p]);
        for (int64_t r = bu->ptr[v]; r < bu->ptr[v + 1]; r++) {
            const int32_t l = bu->idx[r];
            acc[l] += ej * rk_pmodel_residual(m, v, l, bu->val[r]);
            cnt[l]++;
        }
    }
    for (int32_t l = 0; l < n; l++) {
        const double num = l == j ? acc[l] + beta * diag : acc[l];
        out[l] = (float)(num / ((double)cnt[l] + beta));
        acc[l] = 0.0;
        cnt[l] = 0;
    }
}

rk_status rk_pmodel_cov_cpu(const rk_model *m, double beta, int threads, float **out, rk_error *err)
{
    const int32_t n = m->by_item.n_rows;
    *out = NULL;
    if (n > RK_PMODEL_MAX_ITEMS)
        return rk_error_set(err, RK_E_ARG, "--predict interpolate: %d items, above the %d whose covariance matrix "
                            "(items² floats) it keeps", n, RK_PMODEL_MAX_ITEMS);
    float *cov = malloc((size_t)(n > 0 ? n : 1) * (size_t)(n > 0 ? n : 1) * sizeof *cov);
    RK_CHECK_ALLOC(cov, err);
    const double diag = rk_pmodel_cov_diag(m);
    int failed = 0;
#pragma omp parallel num_threads(threads > 0 ? threads : rk_omp_max_threads())
    {
        double *acc = calloc((size_t)(n > 0 ? n : 1), sizeof *acc);
        int32_t *cnt = calloc((size_t)(n > 0 ? n : 1), sizeof *cnt);
        if (acc == NULL || cnt == NULL) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 16)
        for (int32_t j = 0; j < n; j++)
            if (acc != NULL && cnt != NULL) cov_row(m, j, beta, diag, acc, cnt, cov + (int64_t)j * n);
        free(acc);
        free(cnt);
    }
    if (failed) {
        free(cov);
        return rk_error_set(err, RK_E_NOMEM, "out of memory for the interpolation's rows");
    }
    *out = cov;
    return RK_OK;
}

int rk_pmodel_solve(const float *cov, int64_t ld, int32_t i, const int32_t *nb, int32_t n, double lambda, double *a,
                    double *w)
{
    for (int32_t x = 0; x < n; x++) {
        const float *row = cov + (int64_t)nb[x] * ld;
        for (int32_t y = 0; y <= x; y++) a[x * n + y] = (double)row[nb[y]];
        a[x * n + x] += lambda;
        w[x] = (double)cov[(int64_t)i * ld + nb[x]];
    }
    /* A = L Lᵀ in the lower triangle, column by column */
    for (int32_t c = 0; c < n; c++) {
        double d = a[c * n + c];
        for (int32_t t = 0; t < c; t++) d -= a[c * n + t] * a[c * n + t];
        if (!(d > 0.0)) return 0;
        d = sqrt(d);
        a[c * n + c] = d;
        for (int32_t x = c + 1; x < n; x++) {
            double s = a[x * n + c];
            for (int32_t t = 0; t < c; t++) s -= a[x * n + t] * a[c * n + t];
            a[x * n + c] = s / d;
        }
    }
    for (int32_t x = 0; x < n; x++) { /* L y = b */
        double s = w[x];
        for (int32_t t = 0; t < x; t++) s -= a[x * n + t] * w[t];
        w[x] = s / a[x * n + x];
    }
    for (int32_t x = n - 1; x >= 0; x--) { /* Lᵀ w = y */
        double s = w[x];
        for (int32_t t = x + 1; t < n; t++) s -= a[t * n + x] * w[t];
        w[x] = s / a[x * n + x];
    }
    return 1;
}

/* The residual of the user's rating of item j, found in row u of h, with the user's b_u. */
static double user_residual(const rk_model *m, const rk_csr *h, int32_t u, double bu, int32_t j)
{
    return rk_pmodel_residual_bu(m, bu, j, h->val[rk_csr_entry(h, u, j)]);
}

rk_status rk_pmodel_interpolate_cpu(const rk_model *m, const float *cov, const rk_pmodel_opts *o, int32_t k,
                                    const rk_csr *hist, int threads, rk_queries *q, rk_error *err)
{
    const rk_csr *h = hist != NULL ? hist : &m->by_user;
    const int64_t ld = m->by_item.n_rows;
    int failed = 0;
#pragma omp parallel num_threads(threads > 0 ? threads : rk_omp_max_threads())
    {
        double *a = malloc((size_t)k * (size_t)k * sizeof *a), *w = malloc((size_t)k * sizeof *w);
        if (a == NULL || w == NULL) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(dynamic, 256)
        for (int64_t t = 0; t < q->n; t++) {
            const int32_t n = q->used[t], u = q->user[t], i = q->item[t];
            const int32_t *nb = q->nb + t * k;
            if (n <= 0 || a == NULL || w == NULL || !rk_pmodel_solve(cov, ld, i, nb, n, o->interp_reg, a, w))
                continue;
            /* b_u: m->bu[u] for a training row, else the history's (the same bits for a copy of one) */
            const double bu = rk_predict_user_at(m, RK_PREDICT_INTERPOLATE, hist, u).bu;
            double est = (m->mu + bu) + m->bi[i];
            for (int32_t x = 0; x < n; x++) est += w[x] * user_residual(m, h, u, bu, nb[x]);
            q->pred[t] = rk_predict_clip(m, est);
        }
        free(a);
        free(w);
    }
    return failed ? rk_error_set(err, RK_E_NOMEM, "out of memory for the interpolation's systems") : RK_OK;
}
