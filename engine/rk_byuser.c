/* The transposed view of a model (rk_byuser.h). */
#include "rk_byuser.h"

#include <stdlib.h>
#include <string.h>

rk_status rk_byuser_view(const rk_model *m, rk_byuser *v, rk_error *err)
{
    memset(v, 0, sizeof *v);
    if (!rk_model_item_major_ready(m))
        return rk_error_set(err, RK_E_ARG, "user mode needs the model's item-major matrix (rk_model_item_major)");
    const rk_csr *U = &m->by_user;
    const int32_t n_users = U->n_rows;
    v->user_mean = malloc((size_t)(n_users > 0 ? n_users : 1) * sizeof *v->user_mean);
    RK_CHECK_ALLOC(v->user_mean, err);
    for (int32_t u = 0; u < n_users; u++) {
        double s = 0.0;
        for (int64_t p = U->ptr[u]; p < U->ptr[u + 1]; p++) s += (double)U->val[p];
        const int64_t n = U->ptr[u + 1] - U->ptr[u];
        v->user_mean[u] = n > 0 ? s / (double)n : m->mu;
    }
    v->model = *m;
    v->model.by_user = m->by_item;
    v->model.by_item = m->by_user;
    v->model.item_mean = v->user_mean;
    v->model.bu = m->bi;
    v->model.bi = m->bu;
    return RK_OK;
}

void rk_byuser_free(rk_byuser *v)
{
    if (v == NULL) return;
    free(v->user_mean);
    memset(v, 0, sizeof *v);
}
