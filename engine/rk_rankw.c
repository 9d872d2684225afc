/* rk_rankw.c — the ranking model's transformed matrix and list shaping
 * (rk_rankw.h). */
#include "rk_rankw.h"
#include "rk_csr.h"
#include "rk_mem.h"
#include "rk_omp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rk_rankw_opts_default(rk_rankw_opts *o)
{
    memset(o, 0, sizeof *o);
    o->sim = RK_METRIC_RP3BETA;
    o->weighting = RK_RANKW_NONE;
    o->ratings = 0;
    o->bm25_k1 = 1.2;
    o->bm25_b = 0.75;
    o->alpha = 0.75;
    o->beta = 0.3;
    o->shrink = 0.0;
    o->k = 100;
    o->q = 1.0;
    o->normalize = 1;
}

int rk_rankw_on(const rk_rankw_opts *o) { return o != NULL && rk_metric_is_ranking(o->sim); }

rk_status rk_rankw_parse_sim(const char *name, rk_metric *out)
{
    if (name == NULL) return RK_E_ARG;
    if (strcmp(name, "lists") == 0) *out = RK_METRIC_COUNT;
    else if (strcmp(name, "weighted-cosine") == 0 || strcmp(name, "cosine") == 0) *out = RK_METRIC_WEIGHTED_COSINE;
    else if (strcmp(name, "rp3beta") == 0) *out = RK_METRIC_RP3BETA;
    else return RK_E_ARG;
    return RK_OK;
}

const char *rk_rankw_sim_name(rk_metric m) { return rk_metric_is_ranking(m) ? rk_metric_name(m) : "lists"; }

rk_status rk_rankw_parse_weighting(const char *name, rk_rankw_weighting *out)
{
    if (name == NULL) return RK_E_ARG;
    if (strcmp(name, "none") == 0) *out = RK_RANKW_NONE;
    else if (strcmp(name, "tfidf") == 0 || strcmp(name, "idf") == 0) *out = RK_RANKW_TFIDF;
    else if (strcmp(name, "bm25") == 0) *out = RK_RANKW_BM25;
    else return RK_E_ARG;
    return RK_OK;
}

const char *rk_rankw_weighting_name(rk_rankw_weighting w)
{
    switch (w) {
    case RK_RANKW_NONE: return "none";
    case RK_RANKW_TFIDF: return "tfidf";
    case RK_RANKW_BM25: return "bm25";
    }
    return "unknown";
}

rk_status rk_rankw_check(const rk_rankw_opts *o, rk_error *err)
{
    if (!rk_rankw_on(o)) return RK_OK;
    if (o->k < 1) return rk_error_set(err, RK_E_ARG, "--rank-k must be at least 1");
    if (!(o->q > 0.0) || !isfinite(o->q)) return rk_error_set(err, RK_E_ARG, "--locality must be a number > 0");
    if (o->sim == RK_METRIC_WEIGHTED_COSINE) {
        if (!(o->alpha >= 0.0 && o->alpha <= 1.0))
            return rk_error_set(err, RK_E_ARG, "--alpha must lie in [0, 1] for weighted-cosine");
        if (!(o->shrink >= 0.0) || !isfinite(o->shrink))
            return rk_error_set(err, RK_E_ARG, "--rank-shrink must be a number >= 0");
        if (!(o->bm25_k1 >= 0.0) || !isfinite(o->bm25_k1) || !(o->bm25_b >= 0.0 && o->bm25_b <= 1.0))
            return rk_error_set(err, RK_E_ARG, "--bm25 K1:B needs K1 >= 0 and 0 <= B <= 1");
    } else {
        if (!(o->alpha > 0.0) || !isfinite(o->alpha)) return rk_error_set(err, RK_E_ARG, "--alpha must be > 0 for rp3beta");
        if (!(o->beta >= 0.0) || !isfinite(o->beta)) return rk_error_set(err, RK_E_ARG, "--beta must be >= 0");
    }
    return RK_OK;
}

/* The transformed value of one entry (user u with n_u ratings, item i, value
 * r), before rounding. */
typedef struct wctx {
    const rk_rankw_opts *o;
    double *uf;           /* n_users, once per user: rp3beta |I_u|^(−α/2) (x_ui x_uj = |I_u|^−α);
                             tfidf and bm25 idf_u = max(0, log(n / (1 + |I_u|))); NULL for none */
    double *lnorm;        /* n_items, bm25 only: length norm (1 − b) + b · len_i / mean len */
} wctx;

static double wvalue(const wctx *c, int32_t u, int32_t i, float r)
{
    const rk_rankw_opts *o = c->o;
    if (o->sim == RK_METRIC_RP3BETA) return c->uf[u];
    double v = o->ratings ? (double)r : 1.0;
    if (!(v > 0.0)) return 0.0; /* ratings <= 0 take no part */
    switch (o->weighting) {
    case RK_RANKW_NONE: return v;
    case RK_RANKW_TFIDF: return sqrt(v) * c->uf[u];
    case RK_RANKW_BM25: return v * (o->bm25_k1 + 1.0) / (o->bm25_k1 * c->lnorm[i] + v) * c->uf[u];
    }
    return 0.0;
}

static rk_status wctx_init(const rk_model *m, const rk_rankw_opts *o, wctx *c, rk_error *err)
{
    memset(c, 0, sizeof *c);
    c->o = o;
    const int rp3 = o->sim == RK_METRIC_RP3BETA;
    if (!rp3 && o->weighting == RK_RANKW_NONE) return RK_OK;
    const int32_t nu = m->by_user.n_rows, ni = m->by_item.n_rows;
    c->uf = malloc((size_t)(nu > 0 ? nu : 1) * sizeof *c->uf);
    if (c->uf == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory for the weights");
    /* the catalogue is the items with training ratings: ids that only a test
     * set brings must not change a weight */
    int32_t known = 0;
    for (int32_t i = 0; i < ni; i++) known += m->by_item.ptr[i + 1] > m->by_item.ptr[i];
#pragma omp parallel for schedule(static)
    for (int32_t u = 0; u < nu; u++) {
        const double n_u = (double)(m->by_user.ptr[u + 1] - m->by_user.ptr[u]);
        const double d = rp3 ? pow(n_u, -0.5 * o->alpha) : log((double)known / (1.0 + n_u));
        c->uf[u] = rp3 || d > 0.0 ? d : 0.0;
    }
    if (rp3 || o->weighting != RK_RANKW_BM25) return RK_OK;
    c->lnorm = malloc((size_t)(ni > 0 ? ni : 1) * sizeof *c->lnorm);
    if (c->lnorm == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory for the weights");
    /* each item's Σ max(r, 0) (or its count): from by_user when the
     * item-major entries are deferred, the same doubles */
    if (o->ratings) (void)rk_model_item_sums(m, RK_ITEM_POSITIVE, 0.0, c->lnorm, NULL);
    double total = 0.0;
    for (int32_t i = 0; i < ni; i++) {
        if (!o->ratings) c->lnorm[i] = (double)(m->by_item.ptr[i + 1] - m->by_item.ptr[i]);
        total += c->lnorm[i];
    }
    const double mean = known > 0 && total > 0.0 ? total / (double)known : 1.0;
    for (int32_t i = 0; i < ni; i++) c->lnorm[i] = (1.0 - o->bm25_b) + o->bm25_b * c->lnorm[i] / mean;
    return RK_OK;
}

static void wctx_free(wctx *c)
{
    free(c->uf);
    free(c->lnorm);
}

/* The quantum 2^e: the largest value times it stays below 2^24 (a float
 * holds it exactly) and below √(2^52 / most raters), so that every Σxy and
 * ‖x‖² is an integer below 2^52. */
static double quantum_of(double vmax, int64_t most)
{
    double cap = sqrt(4503599627370496.0 / (double)(most > 0 ? most : 1));
    if (cap > 16777215.0) cap = 16777215.0;
    if (!(vmax > 0.0)) return 1.0;
    int e = (int)floor(log2(cap / vmax));
    double qn = ldexp(1.0, e);
    while (vmax * qn > cap) qn *= 0.5;
    return qn;
}

/* rk_rankw_build, or with rows (rk_rankw_build_rows) the values of a model
 * whose values are per user left per user. */
static rk_status build(const rk_model *m, const rk_rankw_opts *o, int rows, rk_rankw_model *out, rk_error *err)
{
    memset(out, 0, sizeof *out);
    if (!rk_rankw_on(o)) return rk_error_set(err, RK_E_ARG, "no ranking similarity to build");
    wctx c;
    rk_status s = wctx_init(m, o, &c, err);
    rk_model *t = &out->model;
    *t = *m; /* statistics and index arrays shared */
    t->by_user.val = NULL;
    t->by_item.val = NULL;
    if (s != RK_OK) goto done;
    const rk_csr *U = &m->by_user, *I = &m->by_item;
    /* the largest value, then each entry's value once more (the same
     * function of (u, i, r): the same double), rounded to the quantum;
     * rp3beta's value is the user's alone: one a user, copied to the
     * entries by rk_rankw_expand (now, or by an engine: rk_rankw_build_rows) */
    const int per_user = o->sim == RK_METRIC_RP3BETA;
    double vmax = 0.0;
#pragma omp parallel for schedule(dynamic, 1024) reduction(max : vmax)
    for (int32_t u = 0; u < U->n_rows; u++)
        for (int64_t p = U->ptr[u]; p < U->ptr[u + 1]; p++) {
            const double w = wvalue(&c, u, U->idx[p], U->val[p]);
            if (w > vmax) vmax = w;
            if (per_user) break; /* the same for the user's other entries */
        }
    const double qn = quantum_of(vmax, rk_csr_longest_row(I));
    out->quantum = qn;
    out->value_max = vmax;
    if (per_user) {
        float *qu = malloc((size_t)(U->n_rows > 0 ? U->n_rows : 1) * sizeof *qu);
        if (qu == NULL) {
            s = rk_error_set(err, RK_E_NOMEM, "out of memory for the ranking model's values");
            goto done;
        }
#pragma omp parallel for schedule(static)
        for (int32_t u = 0; u < U->n_rows; u++) qu[u] = (float)nearbyint(c.uf[u] * qn);
        out->row_val = qu;
        t->row_val = qu;
        if (!rows) s = rk_rankw_expand(out, err);
        goto done;
    }
    /* a deferred item-major matrix stays deferred: the GPU transposes the
     * user-major values, a CPU engine builds it for its call */
    const int items_too = rk_model_item_major_ready(m);
    float *vu = rk_mem_alloc((size_t)(U->nnz > 0 ? U->nnz : 1) * sizeof *vu);
    float *vi = items_too ? rk_mem_alloc((size_t)(I->nnz > 0 ? I->nnz : 1) * sizeof *vi) : NULL;
    t->by_user.val = vu;
    t->by_item.val = vi;
    if (vu == NULL || (items_too && vi == NULL)) {
        s = rk_error_set(err, RK_E_NOMEM, "out of memory for the ranking model's values");
        goto done;
    }
#pragma omp parallel for schedule(dynamic, 1024)
    for (int32_t u = 0; u < U->n_rows; u++)
        for (int64_t p = U->ptr[u]; p < U->ptr[u + 1]; p++)
            vu[p] = (float)nearbyint(wvalue(&c, u, U->idx[p], U->val[p]) * qn);
    /* by_item in the same values: each entry's own (u, i, r) */
    if (items_too) {
#pragma omp parallel for schedule(dynamic, 1024)
        for (int32_t i = 0; i < I->n_rows; i++)
            for (int64_t p = I->ptr[i]; p < I->ptr[i + 1]; p++)
                vi[p] = (float)nearbyint(wvalue(&c, I->idx[p], i, I->val[p]) * qn);
    }
done:
    wctx_free(&c);
    if (s != RK_OK) rk_rankw_free(out);
    return s;
}

rk_status rk_rankw_build(const rk_model *m, const rk_rankw_opts *o, rk_rankw_model *out, rk_error *err)
{
    return build(m, o, 0, out, err);
}

rk_status rk_rankw_build_rows(const rk_model *m, const rk_rankw_opts *o, rk_rankw_model *out, rk_error *err)
{
    return build(m, o, 1, out, err);
}

rk_status rk_rankw_expand(rk_rankw_model *t, rk_error *err)
{
    rk_model *m = &t->model;
    if (t->row_val == NULL || m->by_user.val != NULL) return RK_OK;
    const rk_csr *U = &m->by_user, *I = &m->by_item;
    const int items_too = rk_model_item_major_ready(m);
    float *vu = rk_mem_alloc((size_t)(U->nnz > 0 ? U->nnz : 1) * sizeof *vu);
    float *vi = items_too ? rk_mem_alloc((size_t)(I->nnz > 0 ? I->nnz : 1) * sizeof *vi) : NULL;
    if (vu == NULL || (items_too && vi == NULL)) {
        free(vu);
        free(vi);
        return rk_error_set(err, RK_E_NOMEM, "out of memory for the ranking model's values");
    }
    const float *qu = t->row_val;
#pragma omp parallel for schedule(dynamic, 1024)
    for (int32_t u = 0; u < U->n_rows; u++)
        for (int64_t p = U->ptr[u]; p < U->ptr[u + 1]; p++) vu[p] = qu[u];
    if (items_too) {
#pragma omp parallel for schedule(dynamic, 1024)
        for (int32_t i = 0; i < I->n_rows; i++)
            for (int64_t p = I->ptr[i]; p < I->ptr[i + 1]; p++) vi[p] = qu[I->idx[p]];
    }
    m->by_user.val = vu;
    m->by_item.val = vi;
    m->row_val = NULL; /* the values are there now: the engines read them as any model's */
    return RK_OK;
}

void rk_rankw_knn_opts(const rk_rankw_opts *o, const rk_rankw_model *t, const rk_knn_opts *base, rk_knn_opts *out)
{
    *out = *base;
    out->sim.metric = o->sim;
    out->sim.min_support = 1;
    out->sim.shrinkage = 0.0;
    out->sim.alpha = o->alpha;
    out->sim.beta = o->beta;
    out->sim.den_shrink = o->shrink * t->quantum * t->quantum;
    out->sim.dot_unit = 1.0 / (t->quantum * t->quantum);
    out->k = o->k;
    out->mode = RK_PREDICT_MEANS;
    out->min_k = 1;
    out->rows = NULL;
    out->n_rows = 0;
    out->negative = 0; /* the ranking similarities are never negative */
}

int rk_rankw_shapes(const rk_rankw_opts *o) { return o->q != 1.0 || o->normalize; }

void rk_rankw_shape(const rk_rankw_opts *o, rk_lists *l)
{
    if (!rk_rankw_shapes(o)) return;
#pragma omp parallel for schedule(dynamic, 256)
    for (int32_t i = 0; i < l->n_items; i++) {
        float *s = l->sim + (int64_t)i * l->k;
        const int32_t n = l->len[i];
        if (o->q != 1.0)
            for (int32_t t = 0; t < n; t++) s[t] = (float)pow((double)s[t], o->q);
        if (o->normalize) {
            double sum = 0.0;
            for (int32_t t = 0; t < n; t++) sum += (double)s[t];
            if (sum > 0.0)
                for (int32_t t = 0; t < n; t++) s[t] = (float)((double)s[t] / sum);
        }
    }
}

void rk_rankw_free(rk_rankw_model *t)
{
    if (t == NULL) return;
    free(t->model.by_user.val);
    free(t->model.by_item.val);
    free(t->row_val);
    memset(t, 0, sizeof *t);
}

rk_status rk_rankw_restrict(const rk_model *m, const uint8_t *drop, rk_model *out, rk_error *err)
{
    const rk_csr *U = &m->by_user;
    rk_csr c;
    memset(&c, 0, sizeof c);
    memset(out, 0, sizeof *out);
    int64_t nnz = 0;
    for (int32_t u = 0; u < U->n_rows; u++)
        if (!drop[u]) nnz += U->ptr[u + 1] - U->ptr[u];
    c.n_rows = U->n_rows;
    c.n_cols = U->n_cols;
    c.nnz = nnz;
    c.ptr = malloc(((size_t)U->n_rows + 1) * sizeof *c.ptr);
    c.idx = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *c.idx);
    c.val = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *c.val);
    if (c.ptr == NULL || c.idx == NULL || c.val == NULL) {
        rk_csr_free(&c);
        return rk_error_set(err, RK_E_NOMEM, "out of memory for the training users' ratings");
    }
    int64_t a = 0;
    c.ptr[0] = 0;
    for (int32_t u = 0; u < U->n_rows; u++) {
        if (!drop[u]) {
            const int64_t n = U->ptr[u + 1] - U->ptr[u];
            memcpy(c.idx + a, U->idx + U->ptr[u], (size_t)n * sizeof *c.idx);
            memcpy(c.val + a, U->val + U->ptr[u], (size_t)n * sizeof *c.val);
            a += n;
        }
        c.ptr[u + 1] = a;
    }
    return rk_model_from_csr(out, &c, 1, m->rmin, m->rmax, 0, err);
}

void rk_rankw_label(const rk_rankw_opts *o, char *buf, size_t cap)
{
    if (!rk_rankw_on(o)) {
        snprintf(buf, cap, "--rank lists");
        return;
    }
    int n = snprintf(buf, cap, "--rank %s --alpha %g", rk_rankw_sim_name(o->sim), o->alpha);
    if (n < 0 || (size_t)n >= cap) return;
    if (o->sim == RK_METRIC_RP3BETA) n += snprintf(buf + n, cap - (size_t)n, " --beta %g", o->beta);
    else
        n += snprintf(buf + n, cap - (size_t)n, " --weighting %s --rank-values %s --rank-shrink %g",
                      rk_rankw_weighting_name(o->weighting), o->ratings ? "ratings" : "interactions", o->shrink);
    if (n < 0 || (size_t)n >= cap) return;
    snprintf(buf + n, cap - (size_t)n, " --rank-k %d --locality %g --normalize %s", o->k, o->q,
             o->normalize ? "yes" : "no");
}
