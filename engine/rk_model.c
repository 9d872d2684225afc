#include "rk_model.h"
#include "rk_omp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void rk_model_free(rk_model *m)
{
    if (m == NULL) return;
    if (!(m->borrowed & RK_MODEL_BORROW_PTR)) free(m->by_user.ptr);
    if (!(m->borrowed & RK_MODEL_BORROW_IDX)) free(m->by_user.idx);
    if (!(m->borrowed & RK_MODEL_BORROW_VAL)) free(m->by_user.val);
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
    /* the ALS walks the item-major rows: a deferred model gets them first
     * (out of memory: the baselines stay zero and not computed, which
     * rk_knn_check_args reports for the metrics that need them) */
    if (!rk_model_item_major_ready(m) && rk_model_item_major(m, NULL) != RK_OK) return;
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

static int sums_parallel(const rk_model *m, rk_item_term term, double scale, double *out);

/* μ and the rating scale from the user-major entries. */
static void model_scale(rk_model *m, int have_scale, double scale_min, double scale_max)
{
    const rk_csr *U = &m->by_user;
    /* sums of blocks of a fixed size, added in block order: the same μ for
     * every thread count and run, ratings on a grid or not (an OpenMP
     * reduction adds the threads' sums in the order they finish) */
    enum { BLOCK = 65536 };
    const int64_t nb = (U->nnz + BLOCK - 1) / BLOCK;
    double *part = malloc((size_t)(nb > 0 ? nb : 1) * sizeof *part);
    double sum = 0.0, lo = INFINITY, hi = -INFINITY;
#pragma omp parallel for schedule(static) reduction(min : lo) reduction(max : hi)
    for (int64_t b = 0; b < nb; b++) {
        double bs = 0.0;
        const int64_t p1 = (b + 1) * BLOCK < U->nnz ? (b + 1) * BLOCK : U->nnz;
        for (int64_t p = b * BLOCK; p < p1; p++) {
            double r = U->val[p];
            bs += r;
            if (r < lo) lo = r;
            if (r > hi) hi = r;
        }
        if (part != NULL) part[b] = bs;
    }
    for (int64_t b = 0; part != NULL && b < nb; b++) sum += part[b];
    for (int64_t p = 0; part == NULL && p < U->nnz; p++) sum += U->val[p]; /* no memory: one pass in order */
    free(part);
    m->mu = sum / (double)U->nnz;
    m->rmin = have_scale ? scale_min : lo;
    m->rmax = have_scale ? scale_max : hi;
}

/* The statistics' arrays, μ and the scale. */
static rk_status model_alloc_stats(rk_model *m, int have_scale, double scale_min, double scale_max, rk_error *err)
{
    const int32_t n_users = m->by_user.n_rows, n_items = m->by_user.n_cols;
    m->item_mean = malloc((size_t)(n_items > 0 ? n_items : 1) * sizeof *m->item_mean);
    m->bi = calloc((size_t)(n_items > 0 ? n_items : 1), sizeof *m->bi);
    m->bu = calloc((size_t)(n_users > 0 ? n_users : 1), sizeof *m->bu);
    if (m->item_mean == NULL || m->bi == NULL || m->bu == NULL)
        return rk_error_set(err, RK_E_NOMEM, "out of memory for the model statistics");
    model_scale(m, have_scale, scale_min, scale_max);
    return RK_OK;
}

/* item_mean holds each item's sum: the means (μ for an item without ratings). */
static void model_means(rk_model *m)
{
    const rk_csr *I = &m->by_item;
    const int32_t n_items = I->n_rows;
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < n_items; i++) {
        const int64_t c = I->ptr[i + 1] - I->ptr[i];
        m->item_mean[i] = c > 0 ? m->item_mean[i] / (double)c : m->mu;
    }
}

/* Takes *by_user over; RK_E_EMPTY without entries. */
static rk_status model_take(rk_model *m, rk_csr *by_user, rk_error *err)
{
    memset(m, 0, sizeof *m);
    m->by_user = *by_user; /* ours from here on, whatever happens */
    memset(by_user, 0, sizeof *by_user);
    if (m->by_user.nnz <= 0) {
        rk_model_free(m);
        return rk_error_set(err, RK_E_EMPTY, "no training ratings");
    }
    return RK_OK;
}

/* The model of m->by_user (taken or borrowed): its item-major matrix and statistics. */
static rk_status model_complete(rk_model *m, int have_scale, double scale_min, double scale_max, int with_baselines,
                                rk_error *err)
{
    rk_status s = rk_csr_transpose(&m->by_user, &m->by_item, err);
    if (s == RK_OK) s = model_alloc_stats(m, have_scale, scale_min, scale_max, err);
    if (s == RK_OK) s = rk_model_item_sums(m, RK_ITEM_VALUE, 0.0, m->item_mean, err);
    if (s == RK_OK) model_means(m);
    if (s != RK_OK) {
        rk_model_free(m);
        return s;
    }
    if (with_baselines) rk_model_baselines(m);
    return RK_OK;
}

rk_status rk_model_from_csr(rk_model *m, rk_csr *by_user, int have_scale, double scale_min,
                            double scale_max, int with_baselines, rk_error *err)
{
    RK_FORWARD(model_take(m, by_user, err));
    return model_complete(m, have_scale, scale_min, scale_max, with_baselines, err);
}

rk_status rk_model_from_borrowed_csr(rk_model *m, const rk_csr *by_user, unsigned borrowed, int have_scale,
                                     double scale_min, double scale_max, int with_baselines, rk_error *err)
{
    memset(m, 0, sizeof *m);
    m->by_user = *by_user;
    m->borrowed = borrowed;
    if (m->by_user.nnz <= 0) {
        rk_model_free(m);
        return rk_error_set(err, RK_E_EMPTY, "no training ratings");
    }
    return model_complete(m, have_scale, scale_min, scale_max, with_baselines, err);
}

/* The sums per thread of a pass over by_user: partial tables of n_items
 * entries each, at most RK_MODEL_PARTIAL_BYTES of them in all. */
#define RK_MODEL_PARTIAL_BYTES ((size_t)64 << 20)
#define RK_MODEL_PAR_MIN 65536

static int partial_threads(const rk_csr *U)
{
    int nt = rk_omp_max_threads();
    if (U->nnz < RK_MODEL_PAR_MIN) return 1;
    while (nt > 1 && (size_t)nt * ((size_t)U->n_cols + 1) * sizeof(double) > RK_MODEL_PARTIAL_BYTES) nt--;
    return nt < 1 ? 1 : nt;
}

rk_status rk_model_from_csr_deferred(rk_model *m, rk_csr *by_user, int have_scale, double scale_min,
                                     double scale_max, rk_error *err)
{
    RK_FORWARD(model_take(m, by_user, err));
    const rk_csr *U = &m->by_user;
    rk_csr *I = &m->by_item;
    I->n_rows = U->n_cols;
    I->n_cols = U->n_rows;
    I->nnz = U->nnz;
    I->ptr = malloc(((size_t)U->n_cols + 1) * sizeof *I->ptr);
    rk_status s = I->ptr != NULL ? rk_csr_column_offsets(U, I->ptr, err)
                                 : rk_error_set(err, RK_E_NOMEM, "out of memory for the item offsets");
    /* the item means by parts when they are exactly the walk's sums (ratings
     * on a half or quarter grid), else the item-major matrix now */
    if (s == RK_OK) s = model_alloc_stats(m, have_scale, scale_min, scale_max, err);
    if (s == RK_OK && !sums_parallel(m, RK_ITEM_VALUE, 0.0, m->item_mean)) {
        s = rk_model_item_major(m, err);
        if (s == RK_OK) s = rk_model_item_sums(m, RK_ITEM_VALUE, 0.0, m->item_mean, err);
    }
    if (s == RK_OK) model_means(m);
    if (s != RK_OK) rk_model_free(m);
    return s;
}

int rk_model_item_major_ready(const rk_model *m)
{
    return m->by_item.nnz <= 0 || m->by_item.idx != NULL;
}

rk_status rk_model_item_major(rk_model *m, rk_error *err)
{
    if (rk_model_item_major_ready(m)) return RK_OK;
    rk_csr t;
    RK_FORWARD(rk_csr_transpose(&m->by_user, &t, err));
    rk_csr_free(&m->by_item);
    m->by_item = t;
    return RK_OK;
}

rk_status rk_model_complete_copy(const rk_model *m, rk_model *out, rk_error *err)
{
    *out = *m;
    if (rk_model_item_major_ready(m)) return RK_OK;
    return rk_csr_transpose(&m->by_user, &out->by_item, err);
}

void rk_model_complete_free(rk_model *out, const rk_model *m)
{
    if (out->by_item.ptr != m->by_item.ptr) rk_csr_free(&out->by_item);
    memset(out, 0, sizeof *out);
}

/* Round to an integer: on a grid the scaled values are integers already
 * (rk_knn_grid checked them), so libm's call per value is only the
 * fallback. */
static inline double round_grid(double x)
{
    return fabs(x) < 4503599627370496.0 && (double)(int64_t)x == x ? x : nearbyint(x);
}

static inline double item_term(rk_item_term term, double scale, const rk_csr *U, int32_t u, float v)
{
    switch (term) {
    case RK_ITEM_VALUE: return (double)v;
    case RK_ITEM_SQUARE: {
        const double x = scale > 0.0 ? round_grid((double)v * scale) : (double)v;
        return x * x;
    }
    case RK_ITEM_POSITIVE: return v > 0.0f ? (double)v : 0.0;
    case RK_ITEM_RATER_ROWS: return (double)(U->ptr[u + 1] - U->ptr[u]);
    }
    return 0.0;
}

/* What a thread saw of its terms: every one an integer (ints), a multiple
 * of 2^-16 (q16), a negative one (neg), and Σ|term| (mag). */
typedef struct term_flags {
    int ints, q16, neg;
    double mag;
} term_flags;

/* One thread's sums over users [u0, u1) into part. */
static void sums_share(const rk_csr *U, const float *rv, rk_item_term term, double scale, int32_t u0, int32_t u1,
                       double *part, term_flags *f)
{
    int all_int = 1, all_q = 1, neg = 0;
    double tot = 0.0;
    for (int32_t u = u0; u < u1; u++)
        for (int64_t p = U->ptr[u]; p < U->ptr[u + 1]; p++) {
            const double x = item_term(term, scale, U, u, U->val != NULL ? U->val[p] : rv != NULL ? rv[u] : 0.0f);
            const double ax = fabs(x), y = ax * 65536.0;
            all_int &= ax < 4503599627370496.0 && (double)(int64_t)ax == ax;
            all_q &= y < 4503599627370496.0 && (double)(int64_t)y == y;
            neg |= x < 0.0;
            tot += ax;
            part[U->idx[p]] += x;
        }
    f->ints = all_int;
    f->q16 = all_q;
    f->neg = neg;
    f->mag = tot;
}

/* The walk's order by one thread: each item's terms in ascending user order. */
static void sums_walk(const rk_csr *U, const float *rv, rk_item_term term, double scale, int32_t n, double *out)
{
    term_flags f;
    for (int32_t i = 0; i < n; i++) out[i] = 0.0;
    sums_share(U, rv, term, scale, 0, U->n_rows, out, &f);
}

/* The raters' row lengths per item: integers, in 64-bit partial sums. */
static int rater_rows_parallel(const rk_csr *U, int32_t n, int nt, double *out)
{
    int64_t *part = calloc((size_t)nt * ((size_t)n + 1), sizeof *part);
    if (part == NULL) return 0;
#pragma omp parallel num_threads(nt)
    {
        const int th = rk_omp_thread_num(), T = rk_omp_num_threads();
        int32_t u0, u1;
        rk_csr_row_share(U, th, T, &u0, &u1);
        int64_t *c = part + (size_t)th * ((size_t)n + 1);
        for (int32_t u = u0; u < u1; u++) {
            const int64_t len = U->ptr[u + 1] - U->ptr[u];
            for (int64_t p = U->ptr[u]; p < U->ptr[u + 1]; p++) c[U->idx[p]] += len;
        }
    }
    int ok = 1;
#pragma omp parallel for schedule(static) reduction(&& : ok)
    for (int32_t i = 0; i < n; i++) {
        int64_t t = 0;
        for (int q = 0; q < nt; q++) t += part[(size_t)q * ((size_t)n + 1) + (size_t)i];
        out[i] = (double)t;
        ok = ok && t < ((int64_t)1 << 53); /* the walk's double sums exact too */
    }
    free(part);
    return ok;
}

/* The sums from by_user by partial sums per thread, when they are exactly
 * the walk's: every term a multiple of g (1 or 2^-16) and each item's
 * Σ|term| below 2^52 g, so that every partial sum, in any order, is a
 * multiple of g below 2^53 g, exact in a double.  Terms that are never
 * negative have Σ|term| = the sum itself, checked per item (a computed sum
 * below 2^52 g is within 2^-26 of the true one: the true one is below
 * 2^53 g, all was exact); with negative terms the whole Σ|term| is checked.
 * One thread (small data, or one core) walks the users in order: the
 * walk's order.  @return 1 when out holds the sums, 0 when one thread must
 * walk all the ratings. */
static int sums_parallel(const rk_model *m, rk_item_term term, double scale, double *out)
{
    const rk_csr *U = &m->by_user;
    const int32_t n = m->by_item.n_rows;
    const int nt = partial_threads(U);
    if (nt < 2) { /* one thread: the walk's order itself */
        sums_walk(U, m->row_val, term, scale, n, out);
        return 1;
    }
    if (term == RK_ITEM_RATER_ROWS) return rater_rows_parallel(U, n, nt, out);
    double *part = calloc((size_t)nt * ((size_t)n + 1), sizeof *part);
    if (part == NULL) return 0;
    int all_int = 1, all_q = 1, neg = 0;
    double mag = 0.0;
#pragma omp parallel num_threads(nt) reduction(&& : all_int, all_q) reduction(|| : neg) reduction(+ : mag)
    {
        const int th = rk_omp_thread_num(), T = rk_omp_num_threads();
        int32_t u0, u1;
        term_flags f;
        rk_csr_row_share(U, th, T, &u0, &u1);
        sums_share(U, m->row_val, term, scale, u0, u1, part + (size_t)th * ((size_t)n + 1), &f);
        all_int = f.ints;
        all_q = f.q16;
        neg = f.neg;
        mag = f.mag;
    }
    const double two52 = 4503599627370496.0, grain = all_int ? 1.0 : 65536.0;
    if (!all_q || (neg && mag * grain >= two52)) {
        free(part);
        return 0;
    }
    int fit = 1;
#pragma omp parallel for schedule(static) reduction(&& : fit)
    for (int32_t i = 0; i < n; i++) {
        double t = 0.0;
        for (int q = 0; q < nt; q++) t += part[(size_t)q * ((size_t)n + 1) + (size_t)i];
        out[i] = t;
        fit = fit && (neg || t * grain < two52);
    }
    free(part);
    return fit;
}

rk_status rk_model_item_sums(const rk_model *m, rk_item_term term, double scale, double *out, rk_error *err)
{
    const rk_csr *U = &m->by_user, *I = &m->by_item;
    const int32_t n = I->n_rows;
    (void)err;
    if (rk_model_item_major_ready(m)) { /* the definition: each item's row in order */
#pragma omp parallel for schedule(dynamic, 256)
        for (int32_t i = 0; i < n; i++) {
            double t = 0.0;
            for (int64_t p = I->ptr[i]; p < I->ptr[i + 1]; p++) {
                const int32_t u = I->idx[p]; /* a value a user (row_val): the entry's is its user's */
                const float v = I->val != NULL ? I->val[p] : m->row_val != NULL ? m->row_val[u] : 0.0f;
                t += item_term(term, scale, U, u, v);
            }
            out[i] = t;
        }
        return RK_OK;
    }
    if (!sums_parallel(m, term, scale, out)) sums_walk(U, m->row_val, term, scale, n, out);
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
