#include "rk_predict.h"

#include <string.h>

static const char *const mode_names[] = {
    [RK_PREDICT_BASIC] = "basic",
    [RK_PREDICT_MEANS] = "means",
    [RK_PREDICT_BASELINE] = "baseline",
    [RK_PREDICT_INTERPOLATE] = "interpolate",
    [RK_PREDICT_GLOBAL] = "global",
};

int rk_predict_reads_baselines(rk_predict_mode m)
{
    return m == RK_PREDICT_BASELINE || m == RK_PREDICT_INTERPOLATE || m == RK_PREDICT_GLOBAL;
}

int rk_predict_is_model(rk_predict_mode m)
{
    return m == RK_PREDICT_INTERPOLATE || m == RK_PREDICT_GLOBAL;
}

rk_status rk_predict_mode_parse(const char *name, rk_predict_mode *out)
{
    for (size_t i = 0; i < sizeof mode_names / sizeof mode_names[0]; i++) {
        if (name != NULL && strcmp(name, mode_names[i]) == 0) {
            *out = (rk_predict_mode)i;
            return RK_OK;
        }
    }
    return RK_E_ARG;
}

const char *rk_predict_mode_name(rk_predict_mode m)
{
    if ((size_t)m < sizeof mode_names / sizeof mode_names[0]) return mode_names[m];
    return "unknown";
}

double rk_predict_clip(const rk_model *m, double x)
{
    if (x < m->rmin) return m->rmin;
    if (x > m->rmax) return m->rmax;
    return x;
}

rk_predict_user rk_predict_user_at(const rk_model *m, rk_predict_mode mode, const rk_csr *hist, int32_t u)
{
    const rk_csr *h = hist != NULL ? hist : &m->by_user;
    rk_predict_user pu = {NULL, NULL, 0, 0.0};
    if (u < 0 || u >= h->n_rows || h->ptr[u + 1] == h->ptr[u]) return pu;
    pu.item = h->idx + h->ptr[u];
    pu.rating = h->val + h->ptr[u];
    pu.n = h->ptr[u + 1] - h->ptr[u];
    if (hist == NULL) pu.bu = m->bu[u];
    else if (rk_predict_reads_baselines(mode)) pu.bu = rk_model_user_baseline(m, pu.item, pu.rating, pu.n);
    return pu;
}

double rk_predict_fallback_user(const rk_model *m, rk_predict_mode mode, const rk_predict_user *pu, int32_t i)
{
    const int ki = rk_model_item_known(m, i);
    double est = m->mu;
    switch (mode) {
    case RK_PREDICT_BASIC:
        break;
    case RK_PREDICT_MEANS:
        if (ki) est = m->item_mean[i];
        break;
    case RK_PREDICT_BASELINE:
    case RK_PREDICT_INTERPOLATE:
    case RK_PREDICT_GLOBAL:
        if (pu->n > 0) est += pu->bu;
        if (ki) est += m->bi[i];
        break;
    }
    return rk_predict_clip(m, est);
}

double rk_predict_fallback(const rk_model *m, rk_predict_mode mode, int32_t u, int32_t i)
{
    const rk_predict_user pu = rk_predict_user_at(m, mode, NULL, u);
    return rk_predict_fallback_user(m, mode, &pu, i);
}

double rk_predict_aggregate_user(const rk_model *m, rk_predict_mode mode, const rk_predict_user *pu,
                                 int32_t i, int32_t n, const int32_t *nb, const double *w, const float *r)
{
    double num = 0.0, den = 0.0, base = 0.0;
    switch (mode) {
    case RK_PREDICT_BASIC:
        for (int32_t t = 0; t < n; t++) {
            num += w[t] * (double)r[t];
            den += w[t];
        }
        break;
    case RK_PREDICT_MEANS:
        base = m->item_mean[i];
        for (int32_t t = 0; t < n; t++) {
            num += w[t] * ((double)r[t] - m->item_mean[nb[t]]);
            den += w[t];
        }
        break;
    case RK_PREDICT_BASELINE:
    case RK_PREDICT_INTERPOLATE: /* their models' estimates come later: baseline's meanwhile */
    case RK_PREDICT_GLOBAL: {
        double mu_u = m->mu + pu->bu;
        base = mu_u + m->bi[i];
        for (int32_t t = 0; t < n; t++) {
            num += w[t] * ((double)r[t] - (mu_u + m->bi[nb[t]]));
            den += w[t];
        }
        break;
    }
    }
    if (!(den > 0.0)) return rk_predict_fallback_user(m, mode, pu, i);
    return rk_predict_clip(m, base + num / den);
}

double rk_predict_aggregate(const rk_model *m, rk_predict_mode mode, int32_t u,
                            int32_t i, int32_t n, const int32_t *nb,
                            const double *w, const float *r)
{
    /* u is known: its training row and m's b_u */
    const rk_predict_user pu = rk_predict_user_at(m, mode, NULL, u);
    return rk_predict_aggregate_user(m, mode, &pu, i, n, nb, w, r);
}
