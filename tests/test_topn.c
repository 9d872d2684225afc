/* The CPU top-N engine (engine/rk_topn.c) against an independent brute-force
 * scorer: exact integer sums of the fixed-point weights taken in another
 * order, a full sort with the tie rule, on random shapes with fixed seeds and
 * on edge cases (a user who rated every item, users whose items have empty
 * lists, N above the candidates, ties, one item); the fixed-point
 * conversion; batching, threads and the sink's status. */
#include "rk_topn.h"
#include "rk_knn.h"
#include "rk_model.h"
#include "test_util.h"
#include "test_topn_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- fixed point ------------------------------------------------------------------ */

static void test_fixed(void)
{
    CU_ASSERT_EQUAL(rk_topn_fixed(1.0f), (uint64_t)1 << 32);
    CU_ASSERT_EQUAL(rk_topn_fixed(0.5f), (uint64_t)1 << 31);
    CU_ASSERT_EQUAL(rk_topn_fixed(0.0f), 0);
    /* signed lists (--negative yes): two's complement, so sums wrap to the signed sum */
    CU_ASSERT_EQUAL((int64_t)rk_topn_fixed(-0.25f), -((int64_t)1 << 30));
    CU_ASSERT_EQUAL((int64_t)rk_topn_fixed(-1.0f), -((int64_t)1 << 32));
    CU_ASSERT_EQUAL(rk_topn_fixed(-0.25f) + rk_topn_fixed(0.5f), (uint64_t)1 << 30);
    CU_ASSERT_EQUAL(rk_topn_fixed(-1e-12f), 0);
    CU_ASSERT_EQUAL(rk_topn_fixed(-0.0f), 0);
    CU_ASSERT_EQUAL(rk_topn_fixed(NAN), 0);
    CU_ASSERT_EQUAL(rk_topn_fixed(1e-12f), 0);                 /* below half a unit */
    CU_ASSERT_EQUAL(rk_topn_fixed(ldexpf(1.0f, -33)), 0);      /* exactly half a unit: ties to even */
    CU_ASSERT_EQUAL(rk_topn_fixed(ldexpf(3.0f, -33)), 2);      /* 1.5 units: to even */
    CU_ASSERT_EQUAL(rk_topn_fixed(ldexpf(1.0f, -32)), 1);
    /* every float >= 2^-9 is a multiple of 2^-32: exact */
    unsigned long long s = 11;
    for (int t = 0; t < 100000; t++) {
        float f = (float)(ldexp(1.0, -9) + (1.0 - ldexp(1.0, -9)) * rk_test_uniform(&s));
        uint64_t q = rk_topn_fixed(f);
        CU_ASSERT_EQUAL(rk_topn_score(q), (double)f);
        if (rk_topn_score(q) != (double)f) break;
    }
    /* below it, the error is at most half a unit */
    for (int t = 0; t < 100000; t++) {
        float f = (float)(ldexp(1.0, -9) * rk_test_uniform(&s));
        double d = fabs(rk_topn_score(rk_topn_fixed(f)) - (double)f);
        CU_ASSERT(d <= ldexp(1.0, -33));
        if (d > ldexp(1.0, -33)) break;
    }
    CU_ASSERT_EQUAL(rk_topn_score(((uint64_t)5 << 32) + ((uint64_t)1 << 31)), 5.5);
}

/* ---- data ---------------------------------------------------------------------------- */


static int g_negative; /* make_lists: signed lists (--negative yes) */

static void make_lists(const rk_model *m, rk_metric metric, int k, rk_lists *l)
{
    rk_knn_opts o;
    rk_error err;
    rk_knn_opts_default(&o);
    o.sim.metric = metric;
    o.sim.shrinkage = rk_sim_default_shrinkage(metric);
    o.k = k;
    o.negative = g_negative;
    CU_ASSERT_FATAL(rk_lists_alloc(l, m->by_item.n_rows, k, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_knn_cpu(m, &o, l, NULL, NULL, &err) == RK_OK);
}

/* ---- the brute-force reference --------------------------------------------------------- */

typedef struct ranked { uint64_t s; int32_t i; } ranked;

static int ranked_cmp(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->s != y->s) return x->s > y->s ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Exact sums taken candidate by candidate (the engine goes list by list),
 * then a full sort.  @return the length; out has room for n. */
static int32_t reference(const rk_model *m, const rk_lists *l, int32_t u, int32_t n, ranked *out, double *dense)
{
    const rk_csr *U = &m->by_user;
    int32_t ni = l->n_items, len = 0;
    ranked *all = malloc((size_t)(ni > 0 ? ni : 1) * sizeof *all);
    rk_topn_dense(m, l, u, dense);
    for (int32_t c = 0; c < ni; c++) {
        int rated = 0;
        uint64_t sum = 0;
        for (int64_t p = U->ptr[u + 1] - 1; p >= U->ptr[u]; p--) { /* backwards on purpose */
            int32_t j = U->idx[p];
            if (j == c) rated = 1;
            for (int32_t r = l->len[j] - 1; r >= 0; r--)
                if (l->nbr[(int64_t)j * l->k + r] == c) sum += rk_topn_fixed(l->sim[(int64_t)j * l->k + r]);
        }
        /* signed lists: the wrapped sum is the signed one; only positive sums rank */
        if (!rated && (int64_t)sum > 0) all[len++] = (ranked){sum, c};
        /* the naive double sum agrees with the exact one to float precision */
        const double exact = (double)(int64_t)sum / RK_TOPN_ONE;
        CU_ASSERT(rated ? dense[c] == 0.0 : fabs(dense[c] - exact) <= 1e-6 * (1.0 + fabs(dense[c])));
    }
    qsort(all, (size_t)len, sizeof *all, ranked_cmp);
    if (len > n) len = n;
    memcpy(out, all, (size_t)len * sizeof *out);
    free(all);
    return len;
}

static int g_cases, g_ties;

/* Run the engine on m and l for users[] (NULL: every user) and compare every
 * list with the reference. */
static void check_engine(const rk_model *m, const rk_lists *l, int32_t n, const int32_t *users, int64_t n_users,
                         int64_t batch, int threads)
{
    rk_topn_opts o;
    rk_topn_stats st;
    rk_error err;
    int64_t expect_users = 0;
    const rk_csr *U = &m->by_user;
    if (users == NULL) {
        for (int32_t u = 0; u < U->n_rows; u++) expect_users += U->ptr[u + 1] > U->ptr[u];
    } else {
        expect_users = n_users;
    }
    collected c;
    coll_init(&c, expect_users, n);
    memset(&o, 0, sizeof o);
    o.n = n;
    o.users = users;
    o.n_users = n_users;
    o.batch = batch;
    o.sink = sink;
    o.sink_ud = &c;
    o.threads = threads;
    CU_ASSERT_FATAL(rk_topn_cpu(m, l, &o, &st, &err) == RK_OK);
    CU_ASSERT_EQUAL(c.bad_order, 0);
    CU_ASSERT_EQUAL(c.next, expect_users);
    CU_ASSERT_EQUAL(st.users, expect_users);
    ranked *ref = malloc((size_t)n * sizeof *ref);
    double *dense = malloc((size_t)l->n_items * sizeof *dense);
    int64_t rows = 0, at = 0;
    for (int32_t u = 0; u < U->n_rows && users == NULL; u++) {
        if (U->ptr[u + 1] == U->ptr[u]) continue;
        CU_ASSERT_EQUAL(c.user[at], u);
        at++;
    }
    for (int64_t b = 0; b < expect_users; b++) {
        int32_t u = users != NULL ? users[b] : c.user[b];
        if (users != NULL) CU_ASSERT_EQUAL(c.user[b], u);
        int32_t len = reference(m, l, u, n, ref, dense);
        CU_ASSERT_EQUAL(c.len[b], len);
        if (c.len[b] != len) {
            fprintf(stderr, "user %d: engine %d items, reference %d\n", u, c.len[b], len);
            continue;
        }
        rows += len;
        for (int32_t r = 0; r < len; r++) {
            CU_ASSERT_EQUAL(c.item[b * n + r], ref[r].i);
            CU_ASSERT_EQUAL(c.score[b * n + r], ref[r].s);
            if (r > 0 && ref[r].s == ref[r - 1].s) g_ties++;
        }
    }
    CU_ASSERT_EQUAL(st.rows, rows);
    g_cases++;
    free(ref);
    free(dense);
    coll_free(&c);
}

static const rk_metric metrics[] = {RK_METRIC_PEARSON, RK_METRIC_PEARSON_BASELINE, RK_METRIC_COSINE,
                                    RK_METRIC_MSD, RK_METRIC_EUCLIDEAN};

static void test_random(void)
{
    unsigned long long s = 2026;
    g_cases = g_ties = 0;
    for (int t = 0; t < 40; t++) {
        int nu = 1 + (int)(rk_test_rand(&s) % 60), ni = 1 + (int)(rk_test_rand(&s) % 50);
        double density = 0.05 + 0.5 * rk_test_uniform(&s);
        value_kind vk = (value_kind)(t % 3);
        rk_metric metric = metrics[t % 5];
        int k = 1 + (int)(rk_test_rand(&s) % 12);
        int32_t n = 1 + (int32_t)(rk_test_rand(&s) % 15);
        rk_model m;
        rk_lists l;
        make_model(&m, nu, ni, density, vk, s + (unsigned long long)t);
        make_lists(&m, metric, k, &l);
        check_engine(&m, &l, n, NULL, 0, 0, 0);
        check_engine(&m, &l, n, NULL, 0, 1 + (int64_t)(rk_test_rand(&s) % 7), 1);
        check_engine(&m, &l, ni + 5, NULL, 0, 0, 2); /* N above every list */
        rk_lists_free(&l);
        rk_model_free(&m);
    }
    CU_ASSERT(g_cases == 120);
    CU_ASSERT(g_ties > 0); /* the tie rule was exercised */
}

/* Signed lists: the engine's lists with --negative yes, and hand-made lists
 * of ±2^-e whose sums cross 0 and go on (an item must be counted once). */
static void test_signed(void)
{
    unsigned long long s = 4711;
    int signed_seen = 0;
    g_cases = 0;
    g_negative = 1;
    for (int t = 0; t < 12; t++) {
        int nu = 2 + (int)(rk_test_rand(&s) % 60), ni = 2 + (int)(rk_test_rand(&s) % 50);
        rk_model m;
        rk_lists l;
        make_model(&m, nu, ni, 0.1 + 0.4 * rk_test_uniform(&s), (value_kind)(t % 3), s + (unsigned long long)t);
        make_lists(&m, t % 2 ? RK_METRIC_PEARSON : RK_METRIC_PEARSON_BASELINE, 1 + (int)(rk_test_rand(&s) % 12), &l);
        signed_seen += rk_topn_lists_signed(&l);
        check_engine(&m, &l, 1 + (int32_t)(rk_test_rand(&s) % 15), NULL, 0, 0, 0);
        check_engine(&m, &l, ni + 5, NULL, 0, 3, 2);
        rk_lists_free(&l);
        rk_model_free(&m);
    }
    g_negative = 0;
    for (int t = 0; t < 12; t++) {
        const int ni = 3 + t, k = 2 + t % 4;
        rk_model m;
        rk_lists l;
        make_model(&m, 40, ni, 0.7, VAL_HALF, 90 + (unsigned long long)t);
        make_signed_lists(&l, ni, k, &s);
        signed_seen += rk_topn_lists_signed(&l);
        check_engine(&m, &l, 1 + t % 5, NULL, 0, 0, 0);
        check_engine(&m, &l, ni, NULL, 0, 2, 2);
        rk_lists_free(&l);
        rk_model_free(&m);
    }
    CU_ASSERT(signed_seen >= 18);
    CU_ASSERT_EQUAL(g_cases, 48);
}

static void test_users_subset(void)
{
    rk_model m;
    rk_lists l;
    make_model(&m, 40, 30, 0.3, VAL_HALF, 5);
    make_lists(&m, RK_METRIC_COSINE, 6, &l);
    int32_t users[] = {39, 0, 17, 38, 5, 17, 2}; /* any order, repeats computed twice */
    check_engine(&m, &l, 4, users, 7, 0, 0);
    check_engine(&m, &l, 4, users, 7, 2, 2);
    /* a user without training ratings gets an empty list: rebuild with one */
    rk_lists_free(&l);
    rk_model_free(&m);
    rk_triples t;
    rk_error err;
    CU_ASSERT_FATAL(rk_triples_alloc(&t, 6, 0, &err) == RK_OK);
    int32_t tu[] = {0, 0, 1, 1, 3, 3}, ti[] = {0, 1, 0, 2, 1, 2};
    float tr[] = {4, 5, 3, 4, 2, 5};
    memcpy(t.user, tu, sizeof tu);
    memcpy(t.item, ti, sizeof ti);
    memcpy(t.rating, tr, sizeof tr);
    CU_ASSERT_FATAL(rk_model_build(&m, &t, 4, 3, 0, 0, 0, 0, &err) == RK_OK);
    make_lists(&m, RK_METRIC_COSINE, 2, &l);
    int32_t two[] = {2, 0};
    check_engine(&m, &l, 3, two, 2, 0, 0);
    check_engine(&m, &l, 3, NULL, 0, 0, 0); /* user 2 is skipped: no training rating */
    rk_triples_free(&t);
    rk_lists_free(&l);
    rk_model_free(&m);
}

/* Hand-made lists: ties, empty lists, a user who rated everything. */
static void test_edges(void)
{
    rk_triples t;
    rk_error err;
    rk_model m;
    /* users: 0 rated every item; 1 rated item 3 (empty list); 2 rated 0 and 1 */
    int32_t tu[] = {0, 0, 0, 0, 0, 1, 2, 2}, ti[] = {0, 1, 2, 3, 4, 3, 0, 1};
    float tr[] = {3, 4, 5, 1, 2, 4, 5, 3};
    CU_ASSERT_FATAL(rk_triples_alloc(&t, 8, 0, &err) == RK_OK);
    memcpy(t.user, tu, sizeof tu);
    memcpy(t.item, ti, sizeof ti);
    memcpy(t.rating, tr, sizeof tr);
    CU_ASSERT_FATAL(rk_model_build(&m, &t, 3, 5, 0, 0, 0, 0, &err) == RK_OK);
    rk_lists l;
    CU_ASSERT_FATAL(rk_lists_alloc(&l, 5, 3, &err) == RK_OK);
    /* list of 0: 4 (0.5), 2 (0.5), 3 (0.25); list of 1: 2 (0.5), 4 (0.5); 3: empty */
    l.len[0] = 3;
    l.nbr[0] = 2; l.sim[0] = 0.5f;
    l.nbr[1] = 4; l.sim[1] = 0.5f;
    l.nbr[2] = 3; l.sim[2] = 0.25f;
    l.len[1] = 2;
    l.nbr[3] = 2; l.sim[3] = 0.5f;
    l.nbr[4] = 4; l.sim[4] = 0.5f;
    l.len[2] = 1;
    l.nbr[6] = 0; l.sim[6] = 0.125f;
    l.len[3] = 0;
    l.len[4] = 0;
    collected c;
    coll_init(&c, 3, 4);
    rk_topn_opts o;
    memset(&o, 0, sizeof o);
    o.n = 4;
    o.sink = sink;
    o.sink_ud = &c;
    rk_topn_stats st;
    CU_ASSERT_FATAL(rk_topn_cpu(&m, &l, &o, &st, &err) == RK_OK);
    CU_ASSERT_EQUAL(c.len[0], 0); /* rated every item */
    CU_ASSERT_EQUAL(c.len[1], 0); /* item 3 has an empty list */
    /* user 2: items 2 and 4 tie at 1.0 (2 first), then 3 at 0.25; N = 4 > 3 candidates */
    CU_ASSERT_EQUAL(c.len[2], 3);
    CU_ASSERT_EQUAL(c.item[2 * 4 + 0], 2);
    CU_ASSERT_EQUAL(c.item[2 * 4 + 1], 4);
    CU_ASSERT_EQUAL(c.item[2 * 4 + 2], 3);
    CU_ASSERT_EQUAL(c.score[2 * 4 + 0], (uint64_t)1 << 32);
    CU_ASSERT_EQUAL(c.score[2 * 4 + 1], (uint64_t)1 << 32);
    CU_ASSERT_EQUAL(c.score[2 * 4 + 2], (uint64_t)1 << 30);
    CU_ASSERT_EQUAL(st.rows, 3);
    CU_ASSERT_EQUAL(st.updates, 3 + 2 + 1 + 0 + 0 + 0 + 3 + 2);
    coll_free(&c);
    /* N = 1: the tie goes to the lower index */
    coll_init(&c, 3, 1);
    o.n = 1;
    o.sink_ud = &c;
    CU_ASSERT_FATAL(rk_topn_cpu(&m, &l, &o, &st, &err) == RK_OK);
    CU_ASSERT_EQUAL(c.len[2], 1);
    CU_ASSERT_EQUAL(c.item[2], 2);
    coll_free(&c);
    check_engine(&m, &l, 2, NULL, 0, 1, 1);
    /* N far above the 5 items: lists of at most 5, batches of capacity 5 */
    coll_init(&c, 3, 5);
    o.n = 1000000;
    o.sink_ud = &c;
    CU_ASSERT_FATAL(rk_topn_cpu(&m, &l, &o, &st, &err) == RK_OK);
    CU_ASSERT_EQUAL(c.bad_order, 0); /* the sink refuses a batch whose capacity exceeds 5 */
    CU_ASSERT_EQUAL(c.len[2], 3);
    CU_ASSERT_EQUAL(c.item[2 * 5 + 2], 3);
    coll_free(&c);
    rk_lists_free(&l);
    rk_model_free(&m);
    rk_triples_free(&t);
}

/* Weights that round to 0 in fixed point (s < 2^-33) add nothing and must
 * not enter the touched list once per occurrence: here the user's lists
 * hold 3 x 60 such entries for 4 items, far more than the per-thread list of
 * n_items touched items holds. */
static void test_zero_weights(void)
{
    rk_triples t;
    rk_error err;
    rk_model m;
    int32_t tu[] = {0, 0, 0, 1}, ti[] = {0, 1, 2, 3};
    float tr[] = {3, 4, 5, 1};
    CU_ASSERT_FATAL(rk_triples_alloc(&t, 4, 0, &err) == RK_OK);
    memcpy(t.user, tu, sizeof tu);
    memcpy(t.item, ti, sizeof ti);
    memcpy(t.rating, tr, sizeof tr);
    CU_ASSERT_FATAL(rk_model_build(&m, &t, 2, 4, 0, 0, 0, 0, &err) == RK_OK);
    rk_lists l;
    const int32_t k = 64;
    CU_ASSERT_FATAL(rk_lists_alloc(&l, 4, k, &err) == RK_OK);
    for (int32_t j = 0; j < 3; j++) {
        l.len[j] = 60;
        for (int32_t r = 0; r < 60; r++) {
            l.nbr[j * k + r] = r % 2 ? 3 : (j + 1) % 3; /* unrated 3, or a rated item */
            l.sim[j * k + r] = 1e-12f;
        }
    }
    l.sim[2 * k + 59] = 0.5f; /* nbr 3: the only weight that counts */
    collected c;
    coll_init(&c, 2, 2);
    rk_topn_opts o;
    memset(&o, 0, sizeof o);
    o.n = 2;
    o.sink = sink;
    o.sink_ud = &c;
    o.threads = 1;
    rk_topn_stats st;
    CU_ASSERT_FATAL(rk_topn_cpu(&m, &l, &o, &st, &err) == RK_OK);
    CU_ASSERT_EQUAL(c.len[0], 1);
    CU_ASSERT_EQUAL(c.item[0], 3);
    CU_ASSERT_EQUAL(c.score[0], (uint64_t)1 << 31);
    CU_ASSERT_EQUAL(c.len[1], 0); /* item 3's list is empty */
    CU_ASSERT_EQUAL(st.rows, 1);
    CU_ASSERT_EQUAL(st.updates, 3 * 60); /* list entries read, zero weights included */
    coll_free(&c);
    rk_lists_free(&l);
    rk_model_free(&m);
    rk_triples_free(&t);
}

static void test_one_item(void)
{
    rk_model m;
    rk_lists l;
    make_model(&m, 5, 1, 1.0, VAL_HALF, 3);
    make_lists(&m, RK_METRIC_PEARSON, 4, &l);
    check_engine(&m, &l, 3, NULL, 0, 0, 0);
    rk_lists_free(&l);
    rk_model_free(&m);
}

static void test_errors(void)
{
    rk_model m;
    rk_lists l;
    rk_error err;
    make_model(&m, 30, 20, 0.4, VAL_HALF, 9);
    make_lists(&m, RK_METRIC_PEARSON, 5, &l);
    collected c;
    coll_init(&c, 30, 3);
    rk_topn_opts o;
    memset(&o, 0, sizeof o);
    o.n = 3;
    o.batch = 4;
    o.sink = sink;
    o.sink_ud = &c;
    c.fail_at = 2; /* the sink's failure stops the engine and comes back */
    CU_ASSERT_EQUAL(rk_topn_cpu(&m, &l, &o, NULL, &err), RK_E_IO);
    CU_ASSERT(strstr(err.msg, "sink failure 2") != NULL);
    CU_ASSERT_EQUAL(c.calls, 2);
    o.n = 0;
    CU_ASSERT_EQUAL(rk_topn_cpu(&m, &l, &o, NULL, &err), RK_E_ARG);
    o.n = 3;
    o.sink = NULL;
    CU_ASSERT_EQUAL(rk_topn_cpu(&m, &l, &o, NULL, &err), RK_E_ARG);
    o.sink = sink;
    int32_t bad[] = {1, 30};
    o.users = bad;
    o.n_users = 2;
    CU_ASSERT_EQUAL(rk_topn_cpu(&m, &l, &o, NULL, &err), RK_E_ARG);
    coll_free(&c);
    rk_lists_free(&l);
    rk_model_free(&m);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"fixed-point weights and scores", test_fixed},
        {"random shapes against the brute-force scorer", test_random},
        {"signed lists (--negative yes): sums that cross 0, positive sums only", test_signed},
        {"--users: any order, repeats, untrained users", test_users_subset},
        {"ties, empty lists, a user who rated everything, N above the candidates", test_edges},
        {"weights that round to 0: nothing added, touched list bounded", test_zero_weights},
        {"one item", test_one_item},
        {"errors: the sink's status, bad options", test_errors},
        {NULL, NULL},
    };
    return rk_test_main("topn", cases);
}
