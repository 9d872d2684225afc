#include "rk_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void rk_model_free(rk_model *m)
{
    if (m == NULL) return;
    rk_csr_free(&m->by_user);
    rk_csr_free(&m->by_item);
    free(m->item_mean);
    free(m->bu);
    free(m->bi);
    memset(m, 0, sizeof *m);
}

int rk_model_user_known(const rk_model *m, int32_t u)
{
    return u >= 0 && u < m->by_user.n_rows && m->by_user.ptr[u + 1] > m->by_user.ptr[u];
}

int rk_model_item_known(const rk_model *m, int32_t i)
{
    return i >= 0 && i < m->by_item.n_rows && m->by_item.ptr[i + 1] > m->by_item.ptr[i];
}

double rk_model_user_baseline(const rk_model *m, const int32_t *item, const float *rating, int64_t n)
{
    double dev = 0.0;
    for (int64_t p = 0; p < n; p++) dev += (double)rating[p] - m->mu - m->bi[item[p]];
    return dev / (RK_BASELINE_REG_U + (double)n);
}

/* Surprise's ALS baselines (CONTRACT.md §4): b = 0, then per round items first
 * (b_i = Σ_u (r − μ − b_u) / (reg_i + |U_i|)), then users. */
static void model_baselines(rk_model *m)
{
    const rk_csr *U = &m->by_user, *I = &m->by_item;
    for (int epoch = 0; epoch < RK_BASELINE_EPOCHS; epoch++) {
#pragma omp parallel for schedule(dynamic, 256)
        for (int32_t i = 0; i < I->n_rows; i++) {
            double dev = 0.0;
            for (int64_t p = I->ptr[i]; p < I->ptr[i + 1]; p++)
                dev += (double)I->val[p] - m->mu - m->bu[I->idx[p]];
            m->bi[i] = dev / (RK_BASELINE_REG_I + (double)(I->ptr[i + 1] - I->ptr[i]));
        }
#pragma omp parallel for schedule(dynamic, 256)
        for (int32_t u = 0; u < U->n_rows; u++)
            m->bu[u] = rk_model_user_baseline(m, U->idx + U->ptr[u], U->val + U->ptr[u], U->ptr[u + 1] - U->ptr[u]);
    }
}

void rk_model_baselines(rk_model *m)
{
    if (m->have_baselines) return;
    model_baselines(m);
    m->have_baselines = 1;
}

rk_status rk_model_build(rk_model *m, const rk_triples *train, int32_t n_users,
                         int32_t n_items, int have_scale, double scale_min,
                         double scale_max, int with_baselines, rk_error *err)
{
    rk_csr by_user;
    memset(m, 0, sizeof *m);
    if (train->n <= 0) return rk_error_set(err, RK_E_EMPTY, "no training ratings");
    RK_FORWARD(rk_csr_build(train, n_users, n_items, &by_user, err));
    return rk_model_from_csr(m, &by_user, have_scale, scale_min, scale_max, with_baselines, err);
}

rk_status rk_model_from_csr(rk_model *m, rk_csr *by_user, int have_scale, double scale_min,
                            double scale_max, int with_baselines, rk_error *err)
{
    memset(m, 0, sizeof *m);
    m->by_user = *by_user; /* ours from here on, whatever happens */
    memset(by_user, 0, sizeof *by_user);
    const int32_t n_users = m->by_user.n_rows, n_items = m->by_user.n_cols;
    if (m->by_user.nnz <= 0) {
        rk_model_free(m);
        return rk_error_set(err, RK_E_EMPTY, "no training ratings");
    }
    rk_status s = rk_csr_transpose(&m->by_user, &m->by_item, err);
    if (s != RK_OK) {
        rk_model_free(m);
        return s;
    }
    m->item_mean = malloc((size_t)(n_items > 0 ? n_items : 1) * sizeof *m->item_mean);
    m->bi = calloc((size_t)(n_items > 0 ? n_items : 1), sizeof *m->bi);
    m->bu = calloc((size_t)(n_users > 0 ? n_users : 1), sizeof *m->bu);
    if (m->item_mean == NULL || m->bi == NULL || m->bu == NULL) {
        rk_model_free(m);
        return rk_error_set(err, RK_E_NOMEM, "out of memory for the model statistics");
    }
    const rk_csr *U = &m->by_user;
    double sum = 0.0, lo = INFINITY, hi = -INFINITY;
#pragma omp parallel for reduction(+ : sum) reduction(min : lo) reduction(max : hi)
    for (int64_t p = 0; p < U->nnz; p++) {
        double r = U->val[p];
        sum += r;
        if (r < lo) lo = r;
        if (r > hi) hi = r;
    }
    m->mu = sum / (double)U->nnz;
    m->rmin = have_scale ? scale_min : lo;
    m->rmax = have_scale ? scale_max : hi;
    const rk_csr *I = &m->by_item;
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < n_items; i++) {
        int64_t c = I->ptr[i + 1] - I->ptr[i];
        double t = 0.0;
        for (int64_t p = I->ptr[i]; p < I->ptr[i + 1]; p++) t += I->val[p];
        m->item_mean[i] = c > 0 ? t / (double)c : m->mu;
    }
    if (with_baselines) rk_model_baselines(m);
    return RK_OK;
}

void rk_model_residuals(const rk_model *m, double *out_by_user, double *out_by_item)
{
    if (out_by_user != NULL) {
        const rk_csr *U = &m->by_user;
#pragma omp parallel for schedule(dynamic, 256)
        for (int32_t u = 0; u < U->n_rows; u++)
            for (int64_t p = U->ptr[u]; p < U->ptr[u + 1]; p++)
                out_by_user[p] = (double)U->val[p] - (m->mu + m->bu[u] + m->bi[U->idx[p]]);
    }
    if (out_by_item != NULL) {
        const rk_csr *I = &m->by_item;
#pragma omp parallel for schedule(dynamic, 256)
        for (int32_t i = 0; i < I->n_rows; i++)
            for (int64_t p = I->ptr[i]; p < I->ptr[i + 1]; p++)
                out_by_item[p] = (double)I->val[p] - (m->mu + m->bu[I->idx[p]] + m->bi[i]);
    }
}
