/* The item-major matrix left for later (rk_model_from_csr_deferred): the
 * same statistics and per-item sums as the model built at once, bit for
 * bit, on ratings whose sums are exact in any order (partial sums per
 * thread), on sums that are not (one thread in user order), and on ratings
 * whose means are not (the matrix then built at once); the same arrays once
 * rk_model_item_major builds them; and the same lists,
 * predictions and ranking values from every CPU engine given the deferred
 * model, for every metric of the table. */
#include "rk_model.h"
#include "rk_knn.h"
#include "rk_rankw.h"
#include "rk_rbc.h"
#include "rk_byuser.h"
#include "rk_omp.h"
#include "test_util.h"

#include <math.h>
#include <string.h>

typedef enum vals_kind {
    VALS_HALF,  /* 0.5 .. 5 in halves: exact sums, partials per thread */
    VALS_ANY,   /* floats of no grid: the means need the item-major walk */
    VALS_WIDE,  /* halves and 1e20: sums past 2^53, the same */
    VALS_BIG    /* 2^24 + even numbers: exact means, squares whose sums round (one thread) */
} vals_kind;

/* nu x ni ratings, each pair present with probability p, in a shuffled order. */
static rk_triples make_triples(int32_t nu, int32_t ni, double p, vals_kind kind, unsigned long long seed)
{
    unsigned long long st = seed;
    rk_triples t;
    memset(&t, 0, sizeof t);
    const int64_t cap = (int64_t)nu * ni;
    t.user = malloc((size_t)cap * sizeof *t.user);
    t.item = malloc((size_t)cap * sizeof *t.item);
    t.rating = malloc((size_t)cap * sizeof *t.rating);
    for (int32_t u = 0; u < nu; u++)
        for (int32_t i = 0; i < ni; i++) {
            /* a popular head: item i rated with probability p * 3 / (1 + i / 50) */
            if (rk_test_uniform(&st) >= p * 3.0 / (1.0 + i / 50.0)) continue;
            float r;
            if (kind == VALS_HALF) r = 0.5f * (float)(1 + rk_test_rand(&st) % 10);
            else if (kind == VALS_ANY) r = (float)(0.1 + 4.9 * rk_test_uniform(&st));
            else if (kind == VALS_BIG) r = (float)(16777216 + 2 * (rk_test_rand(&st) % 1000));
            else r = rk_test_rand(&st) % 97 == 0 ? 1e20f : 0.5f * (float)(1 + rk_test_rand(&st) % 10);
            t.user[t.n] = u;
            t.item[t.n] = i;
            t.rating[t.n] = r;
            t.n++;
        }
    for (int64_t a = t.n - 1; a > 0; a--) { /* file order is not sorted */
        const int64_t b = (int64_t)(rk_test_rand(&st) % (unsigned long long)(a + 1));
        int32_t x = t.user[a]; t.user[a] = t.user[b]; t.user[b] = x;
        x = t.item[a]; t.item[a] = t.item[b]; t.item[b] = x;
        float r = t.rating[a]; t.rating[a] = t.rating[b]; t.rating[b] = r;
    }
    return t;
}

static void free_triples(rk_triples *t)
{
    free(t->user);
    free(t->item);
    free(t->rating);
    memset(t, 0, sizeof *t);
}

/* The eager model (a) and the deferred one (b) of the same ratings. */
static void two_models(const rk_triples *t, int32_t nu, int32_t ni, rk_model *a, rk_model *b)
{
    rk_csr c1, c2;
    CU_ASSERT_EQUAL_FATAL(rk_csr_build(t, nu, ni, &c1, NULL), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_csr_build(t, nu, ni, &c2, NULL), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_model_from_csr(a, &c1, 0, 0, 0, 0, NULL), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_model_from_csr_deferred(b, &c2, 0, 0, 0, NULL), RK_OK);
}

#define SAME(x, y, n) CU_ASSERT_EQUAL(memcmp((x), (y), (size_t)(n) * sizeof *(x)), 0)

/* The sums of every term, deferred against built, and the built model's
 * against a walk of its rows written here. */
static void check_sums(const rk_model *a, const rk_model *b)
{
    const int32_t n = a->by_item.n_rows;
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    static const double scales[] = {0.0, 1.0, 2.0};
    for (int term = RK_ITEM_VALUE; term <= RK_ITEM_RATER_ROWS; term++)
        for (int s = 0; s < 3; s++) {
            CU_ASSERT_EQUAL(rk_model_item_sums(a, (rk_item_term)term, scales[s], x, NULL), RK_OK);
            CU_ASSERT_EQUAL(rk_model_item_sums(b, (rk_item_term)term, scales[s], y, NULL), RK_OK);
            SAME(x, y, n);
        }
    CU_ASSERT_EQUAL(rk_model_item_sums(a, RK_ITEM_VALUE, 0.0, x, NULL), RK_OK);
    int walk_ok = 1;
    for (int32_t i = 0; i < n; i++) {
        double t = 0.0;
        for (int64_t p = a->by_item.ptr[i]; p < a->by_item.ptr[i + 1]; p++) t += a->by_item.val[p];
        walk_ok &= t == x[i];
    }
    CU_ASSERT(walk_ok);
    free(x);
    free(y);
}

static void check_models(vals_kind kind, int threads, unsigned long long seed)
{
    const int32_t nu = 2500, ni = 400;
    rk_triples t = make_triples(nu, ni, 0.12, kind, seed);
    CU_ASSERT_FATAL(t.n > 65536); /* past the one-thread threshold */
    rk_omp_set_threads(threads);
    rk_model a, b;
    two_models(&t, nu, ni, &a, &b);
    /* means by parts, or by one thread: exactly the walk's; else built at once */
    const int deferred = kind == VALS_HALF || kind == VALS_BIG || threads == 1;
    CU_ASSERT(rk_model_item_major_ready(&a));
    CU_ASSERT_EQUAL(!rk_model_item_major_ready(&b), deferred);
    CU_ASSERT_EQUAL(b.by_item.idx == NULL, deferred);
    CU_ASSERT_EQUAL(b.by_item.val == NULL, deferred);
    CU_ASSERT_EQUAL(b.by_item.n_rows, a.by_item.n_rows);
    CU_ASSERT_EQUAL(b.by_item.n_cols, a.by_item.n_cols);
    CU_ASSERT_EQUAL(b.by_item.nnz, a.by_item.nnz);
    SAME(a.by_item.ptr, b.by_item.ptr, ni + 1);
    CU_ASSERT_EQUAL(a.mu, b.mu);
    CU_ASSERT_EQUAL(a.rmin, b.rmin);
    CU_ASSERT_EQUAL(a.rmax, b.rmax);
    SAME(a.item_mean, b.item_mean, ni);
    check_sums(&a, &b);
    /* a copy with its own item-major matrix, then the model's own */
    rk_model c;
    CU_ASSERT_EQUAL_FATAL(rk_model_complete_copy(&b, &c, NULL), RK_OK);
    CU_ASSERT(rk_model_item_major_ready(&c));
    SAME(a.by_item.idx, c.by_item.idx, a.by_item.nnz);
    SAME(a.by_item.val, c.by_item.val, a.by_item.nnz);
    rk_model_complete_free(&c, &b);
    CU_ASSERT_EQUAL(!rk_model_item_major_ready(&b), deferred);
    CU_ASSERT_EQUAL_FATAL(rk_model_item_major(&b, NULL), RK_OK);
    CU_ASSERT(rk_model_item_major_ready(&b));
    SAME(a.by_item.ptr, b.by_item.ptr, ni + 1);
    SAME(a.by_item.idx, b.by_item.idx, a.by_item.nnz);
    SAME(a.by_item.val, b.by_item.val, a.by_item.nnz);
    CU_ASSERT_EQUAL(rk_model_item_major(&b, NULL), RK_OK); /* nothing left to do */
    rk_model_free(&a);
    rk_model_free(&b);
    free_triples(&t);
}

static void test_half_grid(void)
{
    for (int th = 1; th <= 8; th += 3) check_models(VALS_HALF, th, 11 + (unsigned)th);
}

static void test_no_grid(void)
{
    for (int th = 1; th <= 8; th += 3) check_models(VALS_ANY, th, 21 + (unsigned)th);
}

static void test_wide(void)
{
    for (int th = 1; th <= 8; th += 3) check_models(VALS_WIDE, th, 31 + (unsigned)th);
}

static void test_big(void)
{
    for (int th = 1; th <= 8; th += 3) check_models(VALS_BIG, th, 41 + (unsigned)th);
}

/* Small and empty shapes: one user, one item, items without ratings. */
static void test_shapes(void)
{
    int32_t u1[] = {0, 0, 0}, i1[] = {4, 1, 2};
    float r1[] = {3, 4.5f, 1};
    int32_t u2[] = {3, 0, 5}, i2[] = {0, 0, 0};
    float r2[] = {2, 2.5f, 5};
    const rk_triples ts[2] = {{3, u1, i1, r1, NULL}, {3, u2, i2, r2, NULL}};
    const int32_t nus[2] = {1, 7}, nis[2] = {6, 1};
    for (int x = 0; x < 2; x++) {
        rk_model a, b;
        two_models(&ts[x], nus[x], nis[x], &a, &b);
        SAME(a.by_item.ptr, b.by_item.ptr, nis[x] + 1);
        SAME(a.item_mean, b.item_mean, nis[x]);
        check_sums(&a, &b);
        for (int32_t i = 0; i < nis[x]; i++) CU_ASSERT_EQUAL(rk_model_item_known(&a, i), rk_model_item_known(&b, i));
        rk_model_free(&a);
        rk_model_free(&b);
    }
}

static int same_lists(const rk_lists *x, const rk_lists *y)
{
    const size_t cells = (size_t)x->n_items * (size_t)x->k;
    if (memcmp(x->len, y->len, (size_t)x->n_items * sizeof *x->len) != 0) return 0;
    for (int32_t i = 0; i < x->n_items; i++) {
        const size_t o = (size_t)i * (size_t)x->k, n = (size_t)x->len[i];
        if (memcmp(x->nbr + o, y->nbr + o, n * sizeof *x->nbr) || memcmp(x->sim + o, y->sim + o, n * sizeof *x->sim) ||
            memcmp(x->support + o, y->support + o, n * sizeof *x->support))
            return 0;
    }
    (void)cells;
    return 1;
}

/* The CPU engine's lists and predictions, every metric of the table. */
static void test_knn_every_metric(void)
{
    const int32_t nu = 600, ni = 120;
    rk_triples t = make_triples(nu, ni, 0.1, VALS_HALF, 5);
    rk_omp_set_threads(3);
    rk_model a, b;
    two_models(&t, nu, ni, &a, &b);
    rk_metric ms[RK_METRIC_COUNT];
    const int nm = rk_test_metrics(-1, ms);
    const int64_t nq = 500;
    int32_t *qu = malloc(nq * sizeof *qu), *qi = malloc(nq * sizeof *qi), *used[2];
    double *pred[2];
    for (int64_t q = 0; q < nq; q++) {
        qu[q] = t.user[q];
        qi[q] = (t.item[q] + 7) % ni;
    }
    for (int x = 0; x < 2; x++) {
        pred[x] = malloc(nq * sizeof *pred[x]);
        used[x] = malloc(nq * sizeof *used[x]);
    }
    int compared = 0;
    for (int mi = 0; mi < nm; mi++) {
        rk_knn_opts o;
        rk_knn_opts_default(&o);
        o.sim.metric = ms[mi];
        o.k = 10;
        if (rk_knn_needs_baselines(&o)) continue; /* their models are built at once */
        rk_lists l[2];
        for (int x = 0; x < 2; x++) {
            rk_queries q = {nq, qu, qi, pred[x], used[x], NULL, NULL};
            CU_ASSERT_EQUAL_FATAL(rk_lists_alloc(&l[x], ni, o.k, NULL), RK_OK);
            CU_ASSERT_EQUAL(rk_knn_cpu(x ? &b : &a, &o, &l[x], &q, NULL, NULL), RK_OK);
        }
        CU_ASSERT(!rk_model_item_major_ready(&b)); /* the call built its own */
        CU_ASSERT(same_lists(&l[0], &l[1]));
        SAME(pred[0], pred[1], nq);
        SAME(used[0], used[1], nq);
        rk_lists_free(&l[0]);
        rk_lists_free(&l[1]);
        compared++;
    }
    CU_ASSERT(compared >= 5);
    /* the random ball cover (full-vector metrics) */
    rk_knn_opts o;
    rk_knn_opts_default(&o);
    o.sim.metric = RK_METRIC_COSINE_FULL;
    o.k = 8;
    rk_rbc_opts r;
    rk_rbc_opts_default(&r);
    rk_lists l[2];
    for (int x = 0; x < 2; x++) {
        CU_ASSERT_EQUAL_FATAL(rk_lists_alloc(&l[x], ni, o.k, NULL), RK_OK);
        CU_ASSERT_EQUAL(rk_rbc_cpu(x ? &b : &a, &o, &r, &l[x], NULL, NULL), RK_OK);
    }
    CU_ASSERT(same_lists(&l[0], &l[1]));
    rk_lists_free(&l[0]);
    rk_lists_free(&l[1]);
    /* user mode swaps the orientations: it needs both */
    rk_byuser v;
    CU_ASSERT_EQUAL(rk_byuser_view(&b, &v, NULL), RK_E_ARG);
    for (int x = 0; x < 2; x++) {
        free(pred[x]);
        free(used[x]);
    }
    free(qu);
    free(qi);
    rk_model_free(&a);
    rk_model_free(&b);
    free_triples(&t);
}

/* The ranking model from a deferred model: the same values, norms and lists. */
static void test_rankw(void)
{
    const int32_t nu = 700, ni = 150;
    rk_triples t = make_triples(nu, ni, 0.08, VALS_HALF, 9);
    rk_omp_set_threads(4);
    rk_model a, b;
    two_models(&t, nu, ni, &a, &b);
    for (int cfg = 0; cfg < 3; cfg++) {
        rk_rankw_opts ro;
        rk_rankw_opts_default(&ro);
        if (cfg == 1) {
            ro.sim = RK_METRIC_WEIGHTED_COSINE;
            ro.weighting = RK_RANKW_BM25;
            ro.ratings = 1;
        } else if (cfg == 2) {
            ro.sim = RK_METRIC_RP3BETA;
        }
        rk_rankw_model ta, tb;
        CU_ASSERT_EQUAL_FATAL(rk_rankw_build(&a, &ro, &ta, NULL), RK_OK);
        CU_ASSERT_EQUAL_FATAL(rk_rankw_build(&b, &ro, &tb, NULL), RK_OK);
        CU_ASSERT(!rk_model_item_major_ready(&tb.model));
        CU_ASSERT_EQUAL(ta.quantum, tb.quantum);
        SAME(ta.model.by_user.val, tb.model.by_user.val, a.by_user.nnz);
        rk_knn_opts base, ko;
        rk_knn_opts_default(&base);
        rk_rankw_knn_opts(&ro, &ta, &base, &ko);
        double c1[150], s1[150], c2[150], s2[150];
        rk_knn_item_norms(&ta.model, &ko.sim, 1.0, c1, s1);
        rk_knn_item_norms(&tb.model, &ko.sim, 1.0, c2, s2);
        SAME(c1, c2, ni);
        SAME(s1, s2, ni);
        rk_lists l[2];
        for (int x = 0; x < 2; x++) {
            CU_ASSERT_EQUAL_FATAL(rk_lists_alloc(&l[x], ni, ko.k, NULL), RK_OK);
            CU_ASSERT_EQUAL(rk_knn_cpu(x ? &tb.model : &ta.model, &ko, &l[x], NULL, NULL, NULL), RK_OK);
        }
        CU_ASSERT(same_lists(&l[0], &l[1]));
        int64_t entries = 0;
        for (int32_t i = 0; i < ni; i++) entries += l[0].len[i];
        CU_ASSERT(entries > 0);
        rk_lists_free(&l[0]);
        rk_lists_free(&l[1]);
        rk_rankw_free(&ta);
        rk_rankw_free(&tb);
    }
    /* the items' order by work (the GPU's and the CPU's plans) */
    int32_t o1[150], o2[150];
    int64_t k1[150], k2[150];
    CU_ASSERT_EQUAL(rk_knn_item_order(&a, o1, k1), rk_knn_item_order(&b, o2, k2));
    SAME(o1, o2, ni);
    SAME(k1, k2, ni);
    rk_model_free(&a);
    rk_model_free(&b);
    free_triples(&t);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"ratings on a half grid: partial sums per thread", test_half_grid},
        {"ratings on no grid: the matrix at once", test_no_grid},
        {"sums past 2^53: the matrix at once", test_wide},
        {"squares past 2^53: one thread in user order", test_big},
        {"one user, one item, items without ratings", test_shapes},
        {"CPU engine and ball cover, every metric", test_knn_every_metric},
        {"ranking model, norms and the items' order", test_rankw},
        {NULL, NULL},
    };
    return rk_test_main("rk_model deferred item-major", cases);
}
