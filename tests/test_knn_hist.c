/* rk_knn_cpu_hist: predictions from one model's similarity rows with the
 * users' histories taken from elsewhere (a saved model's --queries with
 * today's ratings, CONTRACT.md §10).  A copy of the training rows answers as
 * rk_knn_cpu bit for bit, in any row order (so a new user with a known
 * user's history gets that user's answers); a changed history is checked
 * against CONTRACT.md §4's formulas spelled out here over the model's lists;
 * unknown users fall back; bad arguments are refused. */
#include "rk_knn.h"
#include "rk_model.h"
#include "test_util.h"

#include <math.h>
#include <string.h>

static const rk_predict_mode all_modes[] = {RK_PREDICT_BASIC, RK_PREDICT_MEANS, RK_PREDICT_BASELINE};

/* Random ratings of nu users and ni items: half stars, or real values. */
static void make_data(rk_triples *t, int nu, int ni, double density, int real, unsigned long long seed)
{
    unsigned long long s = seed;
    rk_triples_alloc(t, (int64_t)nu * ni, 0, NULL);
    int64_t n = 0;
    for (int u = 0; u < nu; u++)
        for (int i = 0; i < ni; i++) {
            if (rk_test_uniform(&s) >= density) continue;
            t->user[n] = u;
            t->item[n] = i;
            t->rating[n] = real ? (float)(1.0 + 4.0 * rk_test_uniform(&s)) : 0.5f * (float)(1 + rk_test_rand(&s) % 10);
            n++;
        }
    t->n = n;
}

/* Rows of m's training ratings as a new matrix of n_rows rows: row r is
 * m's row from[r] (-1: an empty row). */
static void copy_rows(const rk_model *m, const int32_t *from, int32_t n_rows, rk_csr *out)
{
    const rk_csr *U = &m->by_user;
    rk_triples t;
    CU_ASSERT_FATAL(rk_triples_alloc(&t, U->nnz + 1, 0, NULL) == RK_OK);
    int64_t n = 0;
    for (int32_t r = 0; r < n_rows; r++) {
        if (from[r] < 0) continue;
        for (int64_t p = U->ptr[from[r]]; p < U->ptr[from[r] + 1]; p++) {
            t.user[n] = r;
            t.item[n] = U->idx[p];
            t.rating[n] = U->val[p];
            n++;
        }
    }
    t.n = n;
    CU_ASSERT_FATAL(rk_csr_build(&t, n_rows, U->n_cols, out, NULL) == RK_OK);
    rk_triples_free(&t);
}

/* Every (row, item) pair of the first n_rows rows, each item once per row. */
typedef struct qset {
    int64_t n;
    int32_t *u, *i, *used;
    double *pred;
} qset;

static void qset_make(qset *q, int32_t n_rows, int32_t ni)
{
    q->n = (int64_t)n_rows * ni;
    q->u = malloc((size_t)q->n * sizeof *q->u);
    q->i = malloc((size_t)q->n * sizeof *q->i);
    q->used = malloc((size_t)q->n * sizeof *q->used);
    q->pred = malloc((size_t)q->n * sizeof *q->pred);
    for (int64_t t = 0; t < q->n; t++) {
        q->u[t] = (int32_t)(t / ni);
        q->i[t] = (int32_t)(t % ni);
    }
}

static void qset_free(qset *q)
{
    free(q->u); free(q->i); free(q->used); free(q->pred);
}

static rk_queries qset_view(qset *q)
{
    rk_queries v = {q->n, q->u, q->i, q->pred, q->used, NULL, NULL};
    return v;
}

/* Rows of m in the order perm (a few empty rows among them) answer as m's
 * users themselves, bit for bit; with the identity this is a copy of the
 * training rows, the saved model's --queries when RATINGS are the training
 * ratings. */
static void check_same_answers(const rk_model *m, const rk_knn_opts *o, int shuffle, unsigned long long seed)
{
    const int32_t nu = m->by_user.n_rows, ni = m->by_item.n_rows, n_rows = nu + 2;
    int32_t *from = malloc((size_t)n_rows * sizeof *from);
    for (int32_t r = 0; r < nu; r++) from[r] = r;
    from[nu] = from[nu + 1] = -1;
    unsigned long long s = seed;
    for (int32_t r = n_rows - 1; shuffle && r > 0; r--) {
        int32_t x = (int32_t)(rk_test_rand(&s) % (unsigned)(r + 1)), tmp = from[r];
        from[r] = from[x];
        from[x] = tmp;
    }
    rk_csr hist;
    copy_rows(m, from, n_rows, &hist);
    qset a, b;
    qset_make(&a, n_rows, ni);
    qset_make(&b, n_rows, ni);
    for (int64_t t = 0; t < b.n; t++) b.u[t] = from[a.u[t]]; /* the model's own user, or -1 */
    rk_queries qa = qset_view(&a), qb = qset_view(&b);
    rk_error err;
    CU_ASSERT_FATAL(rk_knn_cpu_hist(m, o, &hist, &qa, NULL, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_knn_cpu(m, o, NULL, &qb, NULL, &err) == RK_OK);
    int64_t differ = 0, real = 0;
    for (int64_t t = 0; t < a.n; t++) {
        differ += memcmp(&a.pred[t], &b.pred[t], sizeof a.pred[t]) != 0 || a.used[t] != b.used[t];
        real += a.used[t] > 0;
    }
    CU_ASSERT_EQUAL(differ, 0);
    CU_ASSERT(real > 0);
    if (differ > 0)
        fprintf(stderr, "%s/%s shuffle %d: %lld of %lld answers differ\n", rk_metric_name(o->sim.metric),
                rk_predict_mode_name(o->mode), shuffle, (long long)differ, (long long)a.n);
    qset_free(&a);
    qset_free(&b);
    rk_csr_free(&hist);
    free(from);
}

static void test_copies_answer_alike(void)
{
    static const rk_metric metrics[] = {RK_METRIC_PEARSON, RK_METRIC_PEARSON_BASELINE, RK_METRIC_COSINE,
                                        RK_METRIC_MSD, RK_METRIC_COSINE_FULL};
    for (int rep = 0; rep < 4; rep++) {
        rk_triples t;
        make_data(&t, 30 + rep, 12 + 3 * rep, 0.4, rep % 2, 500 + rep);
        rk_model m;
        CU_ASSERT_FATAL(rk_model_build(&m, &t, 30 + rep, 12 + 3 * rep, 0, 0, 0, 1, NULL) == RK_OK);
        for (size_t mi = 0; mi < sizeof metrics / sizeof metrics[0]; mi++)
            for (int md = 0; md < 3; md++) {
                rk_knn_opts o;
                rk_knn_opts_default(&o);
                o.sim.metric = metrics[mi];
                o.mode = all_modes[md];
                o.k = 2 + rep;
                o.min_k = 1 + md % 2;
                o.threads = 1 + rep % 2;
                check_same_answers(&m, &o, 0, 0);
                check_same_answers(&m, &o, 1, 77 + (unsigned long long)(rep * 31 + md));
            }
        rk_model_free(&m);
        rk_triples_free(&t);
    }
}

/* A history that is no row of the model: CONTRACT.md §4 over the model's
 * similarities (its lists with k = every item: the positive row), μ, μ_i and
 * b_i, with b_u = Σ (r − μ − b_j) / (15 + n) over the history. */
static double expect(const rk_model *m, const rk_lists *l, rk_predict_mode mode, const int32_t *hi, const float *hr,
                     int hn, int32_t i, int *used)
{
    double bu = 0.0, num = 0.0, den = 0.0;
    for (int a = 0; a < hn; a++) bu += (double)hr[a] - m->mu - m->bi[hi[a]];
    bu /= 15.0 + hn;
    *used = 0;
    for (int t = 0; t < l->len[i]; t++) {
        const int32_t j = l->nbr[(size_t)i * l->k + t];
        const double w = l->sim[(size_t)i * l->k + t];
        for (int a = 0; a < hn; a++) {
            if (hi[a] != j) continue;
            const double dev = mode == RK_PREDICT_BASIC ? hr[a]
                             : mode == RK_PREDICT_MEANS ? hr[a] - m->item_mean[j]
                                                        : hr[a] - (m->mu + bu + m->bi[j]);
            num += w * dev;
            den += w;
            ++*used;
        }
    }
    double est = mode == RK_PREDICT_BASIC ? m->mu : mode == RK_PREDICT_MEANS ? m->item_mean[i] : m->mu + bu + m->bi[i];
    if (*used > 0) est = (mode == RK_PREDICT_BASIC ? 0.0 : est) + num / den;
    return est < m->rmin ? m->rmin : est > m->rmax ? m->rmax : est;
}

static void test_changed_history(void)
{
    const int nu = 40, ni = 15;
    rk_triples t;
    make_data(&t, nu, ni, 0.5, 1, 900);
    rk_model m;
    CU_ASSERT_FATAL(rk_model_build(&m, &t, nu, ni, 0, 0, 0, 1, NULL) == RK_OK);
    /* two histories: user 0's row with every rating changed and item 3 added
     * or dropped; a short one of a newcomer */
    const rk_csr *U = &m.by_user;
    int32_t hi[2][16];
    float hr[2][16];
    int hn[2] = {0, 0}, has3 = 0;
    for (int64_t p = U->ptr[0]; p < U->ptr[1]; p++) has3 |= U->idx[p] == 3;
    for (int32_t j = 0; j < ni; j++) {
        int in0 = 0;
        for (int64_t p = U->ptr[0]; p < U->ptr[1]; p++) in0 |= U->idx[p] == j;
        if (j == 3) in0 = !has3;
        if (in0) { hi[0][hn[0]] = j; hr[0][hn[0]++] = (float)(1 + (j * 7) % 5); }
        if (j % 4 == 1) { hi[1][hn[1]] = j; hr[1][hn[1]++] = j % 8 == 1 ? 4.5f : 1.5f; }
    }
    rk_triples h;
    rk_triples_alloc(&h, hn[0] + hn[1], 0, NULL);
    h.n = 0;
    for (int r = 0; r < 2; r++)
        for (int a = 0; a < hn[r]; a++) {
            h.user[h.n] = r; h.item[h.n] = hi[r][a]; h.rating[h.n] = hr[r][a]; h.n++;
        }
    rk_csr hist;
    CU_ASSERT_FATAL(rk_csr_build(&h, 2, ni, &hist, NULL) == RK_OK);
    rk_lists l;
    CU_ASSERT_FATAL(rk_lists_alloc(&l, ni, ni, NULL) == RK_OK);
    qset q;
    qset_make(&q, 2, ni);
    int real = 0;
    for (int md = 0; md < 3; md++) {
        rk_knn_opts o;
        rk_knn_opts_default(&o);
        o.mode = all_modes[md];
        o.k = ni; /* every positive candidate: no selection to redo here */
        CU_ASSERT_FATAL(rk_knn_cpu(&m, &o, &l, NULL, NULL, NULL) == RK_OK);
        rk_queries v = qset_view(&q);
        CU_ASSERT_FATAL(rk_knn_cpu_hist(&m, &o, &hist, &v, NULL, NULL) == RK_OK);
        for (int64_t a = 0; a < q.n; a++) {
            int used;
            const int r = q.u[a];
            const double e = expect(&m, &l, o.mode, hi[r], hr[r], hn[r], q.i[a], &used);
            CU_ASSERT(fabs(e - q.pred[a]) < 1e-6); /* the lists keep float similarities */
            CU_ASSERT_EQUAL(used, q.used[a]);
            real += used > 0;
            if (fabs(e - q.pred[a]) >= 1e-6 || used != q.used[a])
                fprintf(stderr, "%s (%d,%d): %.9g (%d), expected %.9g (%d)\n", rk_predict_mode_name(o.mode), r,
                        q.i[a], q.pred[a], q.used[a], e, used);
        }
    }
    CU_ASSERT(real > 20);
    qset_free(&q);
    rk_lists_free(&l);
    rk_csr_free(&hist);
    rk_triples_free(&h);
    rk_model_free(&m);
    rk_triples_free(&t);
}

/* Users 0 and 1 of the history; row 1 is empty, -1 and 5 are out of range.
 * The fallbacks are the model's for an unknown user; a known user with an
 * unknown item keeps the b_u of their history in the baseline mode. */
static void test_unknown_users(void)
{
    rk_triples t;
    make_data(&t, 20, 8, 0.6, 0, 1300);
    rk_model m;
    CU_ASSERT_FATAL(rk_model_build(&m, &t, 20, 9, 0, 0, 0, 1, NULL) == RK_OK); /* item 8: no rating */
    rk_triples h;
    rk_triples_alloc(&h, 2, 0, NULL);
    h.n = 2;
    h.user[0] = 0; h.item[0] = 2; h.rating[0] = 5.0f;
    h.user[1] = 0; h.item[1] = 5; h.rating[1] = 4.0f;
    rk_csr hist;
    CU_ASSERT_FATAL(rk_csr_build(&h, 2, 9, &hist, NULL) == RK_OK);
    int32_t qu[] = {1, -1, 5, 1, 0};
    int32_t qi[] = {0, 0, 0, 8, 8};
    double pred[5];
    int32_t used[5];
    rk_queries q = {5, qu, qi, pred, used, NULL, NULL};
    rk_knn_opts o;
    rk_knn_opts_default(&o);
    o.mode = RK_PREDICT_BASELINE;
    CU_ASSERT_FATAL(rk_knn_cpu_hist(&m, &o, &hist, &q, NULL, NULL) == RK_OK);
    const double clip0 = fmin(fmax(m.mu + m.bi[0], m.rmin), m.rmax);
    const double bu = ((5.0 - m.mu - m.bi[2]) + (4.0 - m.mu - m.bi[5])) / 17.0;
    for (int a = 0; a < 3; a++) CU_ASSERT_EQUAL(pred[a], clip0);
    CU_ASSERT_EQUAL(pred[3], fmin(fmax(m.mu, m.rmin), m.rmax));
    CU_ASSERT_DOUBLE_EQUAL(pred[4], fmin(fmax(m.mu + bu, m.rmin), m.rmax), 1e-12);
    for (int a = 0; a < 5; a++) CU_ASSERT_EQUAL(used[a], 0);
    rk_csr_free(&hist);
    rk_triples_free(&h);
    rk_model_free(&m);
    rk_triples_free(&t);
}

static void test_bad_arguments(void)
{
    rk_triples t;
    make_data(&t, 10, 6, 0.6, 0, 1700);
    rk_model m;
    CU_ASSERT_FATAL(rk_model_build(&m, &t, 10, 6, 0, 0, 0, 1, NULL) == RK_OK);
    int32_t from[3] = {0, 1, 2};
    rk_csr hist;
    copy_rows(&m, from, 3, &hist);
    int32_t qu[] = {0}, qi[] = {1}, used[1];
    double pred[1];
    rk_queries q = {1, qu, qi, pred, used, NULL, NULL};
    rk_knn_opts o;
    rk_knn_opts_default(&o);
    rk_error err;
    CU_ASSERT_EQUAL(rk_knn_cpu_hist(&m, &o, NULL, &q, NULL, &err), RK_E_ARG);
    hist.n_cols = 5;
    CU_ASSERT_EQUAL(rk_knn_cpu_hist(&m, &o, &hist, &q, NULL, &err), RK_E_ARG);
    hist.n_cols = 6;
    const int32_t rows[] = {1};
    o.rows = rows;
    o.n_rows = 1;
    CU_ASSERT_EQUAL(rk_knn_cpu_hist(&m, &o, &hist, &q, NULL, &err), RK_E_ARG);
    o.rows = NULL;
    o.n_rows = 0;
    CU_ASSERT_EQUAL(rk_knn_cpu_hist(&m, &o, &hist, &q, NULL, &err), RK_OK);
    rk_csr_free(&hist);
    rk_model_free(&m);
    rk_triples_free(&t);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"copies of the training rows, in any order, answer as rk_knn_cpu", test_copies_answer_alike},
        {"a changed history against the formulas", test_changed_history},
        {"unknown users fall back", test_unknown_users},
        {"bad arguments", test_bad_arguments},
        {NULL, NULL},
    };
    return rk_test_main("knn_hist", cases);
}
