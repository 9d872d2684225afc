/* The CPU user-based top-N engine (engine/rk_utopn.c) against a brute force
 * written here from the definition of CONTRACT.md §6b, taken in the other
 * orientation (item by item over its raters, where the engine goes
 * neighbour by neighbour over their items): exact integer sums of
 * rk_topn_fixed(sim), naive double sums, a full sort with the tie rule.
 * Random shapes and random per-user lists with fixed seeds; hand-made edge
 * cases (empty lists, neighbours who rated only the user's items, N above
 * the candidates, ties, weights that round to 0); users in any order with
 * repeats; batches, threads and bad arguments. */
#include "rk_utopn.h"
#include "rk_topn.h"
#include "rk_knn.h"
#include "rk_model.h"
#include "test_util.h"
#include "test_topn_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- random per-user lists ------------------------------------------------------------ */

typedef enum { SIM_REAL, SIM_STEPS, SIM_TINY } sim_kind;

typedef struct nbr_sim { float s; int32_t v; } nbr_sim;

static int nbr_sim_cmp(const void *a, const void *b)
{
    const nbr_sim *x = a, *y = b;
    if (x->s != y->s) return x->s > y->s ? -1 : 1;
    return (x->v > y->v) - (x->v < y->v);
}

/* Lists of capacity k for the nu users: distinct neighbours other than the
 * user, positive similarities sorted descending, ties by ascending index.
 * SIM_STEPS draws from {1/4, 1/2, 3/4, 1} (many equal scores), SIM_TINY mixes
 * in weights that round to 0 in fixed point. */
static void make_ulists(rk_lists *l, int32_t nu, int32_t k, sim_kind sk, unsigned long long seed)
{
    rk_error err;
    unsigned long long s = seed;
    CU_ASSERT_FATAL(rk_lists_alloc(l, nu, k, &err) == RK_OK);
    int32_t *perm = malloc((size_t)nu * sizeof *perm);
    nbr_sim *tmp = malloc((size_t)k * sizeof *tmp);
    CU_ASSERT_FATAL(perm != NULL && tmp != NULL);
    for (int32_t u = 0; u < nu; u++) {
        int32_t m = 0;
        for (int32_t v = 0; v < nu; v++)
            if (v != u) perm[m++] = v;
        int32_t len = (int32_t)(rk_test_rand(&s) % (uint64_t)(k + 1));
        if (len > m) len = m;
        for (int32_t r = 0; r < len; r++) { /* partial Fisher-Yates: distinct neighbours */
            int32_t j = r + (int32_t)(rk_test_rand(&s) % (uint64_t)(m - r));
            int32_t t = perm[r];
            perm[r] = perm[j];
            perm[j] = t;
            float sim = sk == SIM_STEPS ? 0.25f * (float)(1 + rk_test_rand(&s) % 4)
                                        : (float)(0.002 + 0.998 * rk_test_uniform(&s));
            if (sk == SIM_TINY && rk_test_rand(&s) % 3 == 0) sim = 1e-12f;
            tmp[r] = (nbr_sim){sim, perm[r]};
        }
        qsort(tmp, (size_t)len, sizeof *tmp, nbr_sim_cmp);
        l->len[u] = len;
        for (int32_t r = 0; r < len; r++) {
            l->nbr[(int64_t)u * k + r] = tmp[r].v;
            l->sim[(int64_t)u * k + r] = tmp[r].s;
            l->support[(int64_t)u * k + r] = 1;
        }
    }
    free(perm);
    free(tmp);
}

/* ---- the brute-force reference --------------------------------------------------------- */

typedef struct ranked { uint64_t s; int32_t i; double d; } ranked;

static int ranked_cmp(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->s != y->s) return x->s > y->s ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

static int rated_by(const rk_model *m, int32_t u, int32_t c)
{
    for (int64_t p = m->by_user.ptr[u]; p < m->by_user.ptr[u + 1]; p++)
        if (m->by_user.idx[p] == c) return 1;
    return 0;
}

/* Item by item: every rater v of c (by_item) found in u's list adds its
 * similarity, exactly in fixed point and naively in double; then a full
 * sort.  Also checks rk_utopn_dense.  @return the length; out has room for n. */
static int32_t reference(const rk_model *m, const rk_lists *l, int32_t u, int32_t n, ranked *out, int exact_sims)
{
    const rk_csr *I = &m->by_item;
    int32_t ni = I->n_rows, len = 0;
    ranked *all = malloc((size_t)ni * sizeof *all);
    double *dense = malloc((size_t)ni * sizeof *dense);
    CU_ASSERT_FATAL(all != NULL && dense != NULL);
    rk_utopn_dense(m, l, u, dense);
    for (int32_t c = 0; c < ni; c++) {
        int rated = rated_by(m, u, c);
        uint64_t sum = 0;
        double d = 0.0;
        for (int64_t p = I->ptr[c + 1] - 1; p >= I->ptr[c]; p--) { /* backwards on purpose */
            int32_t v = I->idx[p];
            for (int32_t r = 0; r < l->len[u]; r++)
                if (l->nbr[(int64_t)u * l->k + r] == v) {
                    float sim = l->sim[(int64_t)u * l->k + r];
                    sum += rk_topn_fixed(sim);
                    d += (double)sim;
                }
        }
        if (rated) {
            CU_ASSERT_EQUAL(dense[c], 0.0);
            continue;
        }
        CU_ASSERT(fabs(dense[c] - d) <= 1e-12 * (1.0 + d));
        /* the fixed-point sum agrees with the double one to float precision,
         * exactly when every similarity is a multiple of 2^-32 */
        CU_ASSERT(fabs(rk_topn_score(sum) - d) <= 1e-6 * (1.0 + d));
        if (exact_sims) CU_ASSERT_EQUAL(rk_topn_score(sum), d);
        if (sum > 0) all[len++] = (ranked){sum, c, d};
    }
    qsort(all, (size_t)len, sizeof *all, ranked_cmp);
    if (len > n) len = n;
    memcpy(out, all, (size_t)len * sizeof *out);
    free(all);
    free(dense);
    return len;
}

static int g_cases, g_ties;

/* Run the engine for users[] (NULL: every user), compare every list with the
 * reference; the results stay in *c (coll_free them). */
static void check_engine(const rk_model *m, const rk_lists *l, int32_t n, const int32_t *users, int64_t n_users,
                         int64_t batch, int threads, int exact_sims, collected *c)
{
    rk_topn_opts o;
    rk_topn_stats st;
    rk_error err;
    const rk_csr *U = &m->by_user;
    const int32_t ni = m->by_item.n_rows, cap = n < ni ? n : ni;
    int64_t expect_users = 0;
    if (users == NULL) {
        for (int32_t u = 0; u < U->n_rows; u++) expect_users += U->ptr[u + 1] > U->ptr[u];
    } else {
        expect_users = n_users;
    }
    coll_init(c, expect_users, cap); /* the sink refuses batches of capacity above min(N, n_items) */
    memset(&o, 0, sizeof o);
    o.n = n;
    o.users = users;
    o.n_users = n_users;
    o.batch = batch;
    o.sink = sink;
    o.sink_ud = c;
    o.threads = threads;
    CU_ASSERT_FATAL(rk_utopn_cpu(m, l, &o, &st, &err) == RK_OK);
    CU_ASSERT_EQUAL(c->bad_order, 0);
    CU_ASSERT_EQUAL(c->next, expect_users);
    CU_ASSERT_EQUAL(st.users, expect_users);
    CU_ASSERT_STRING_EQUAL(st.path, "cpu user");
    if (batch > 0) CU_ASSERT_EQUAL(c->calls, (expect_users + batch - 1) / batch);
    ranked *ref = malloc((size_t)cap * sizeof *ref);
    CU_ASSERT_FATAL(ref != NULL);
    int64_t rows = 0, at = 0, updates = 0;
    for (int32_t u = 0; u < U->n_rows && users == NULL; u++) {
        if (U->ptr[u + 1] == U->ptr[u]) continue;
        CU_ASSERT_EQUAL(c->user[at], u);
        at++;
    }
    for (int64_t b = 0; b < expect_users; b++) {
        int32_t u = users != NULL ? users[b] : c->user[b];
        if (users != NULL) CU_ASSERT_EQUAL(c->user[b], u);
        for (int32_t r = 0; r < l->len[u]; r++) { /* the rows a neighbour of nonzero weight costs */
            int32_t v = l->nbr[(int64_t)u * l->k + r];
            if (rk_topn_fixed(l->sim[(int64_t)u * l->k + r]) > 0) updates += U->ptr[v + 1] - U->ptr[v];
        }
        int32_t len = reference(m, l, u, n, ref, exact_sims);
        CU_ASSERT_EQUAL(c->len[b], len);
        if (c->len[b] != len) {
            fprintf(stderr, "user %d: engine %d items, reference %d\n", u, c->len[b], len);
            continue;
        }
        rows += len;
        for (int32_t r = 0; r < len; r++) {
            CU_ASSERT_EQUAL(c->item[b * cap + r], ref[r].i);
            CU_ASSERT_EQUAL(c->score[b * cap + r], ref[r].s);
            double e = rk_topn_score(c->score[b * cap + r]);
            CU_ASSERT(fabs(e - ref[r].d) <= 1e-6 * ref[r].d);
            if (r > 0 && ref[r].s == ref[r - 1].s) g_ties++;
        }
    }
    CU_ASSERT_EQUAL(st.rows, rows);
    CU_ASSERT_EQUAL(st.updates, updates);
    g_cases++;
    free(ref);
}

static void test_random(void)
{
    unsigned long long s = 6022;
    g_cases = g_ties = 0;
    for (int t = 0; t < 40; t++) {
        int nu = 1 + (int)(rk_test_rand(&s) % 60), ni = 1 + (int)(rk_test_rand(&s) % 50);
        double density = 0.05 + 0.5 * rk_test_uniform(&s);
        sim_kind sk = (sim_kind)(t % 3);
        int32_t k = 1 + (int32_t)(rk_test_rand(&s) % 12);
        int32_t n = 1 + (int32_t)(rk_test_rand(&s) % 15);
        int64_t batch = 1 + (int64_t)(rk_test_rand(&s) % 7);
        rk_model m;
        rk_lists l;
        make_model(&m, nu, ni, density, (value_kind)(t % 3), s + (unsigned long long)t);
        make_ulists(&l, nu, k, sk, s ^ (unsigned long long)(t * 977));
        collected c0, c1, c2, c3;
        check_engine(&m, &l, n, NULL, 0, 0, 0, sk != SIM_TINY, &c0);
        check_engine(&m, &l, n, NULL, 0, 1, 1, sk != SIM_TINY, &c1);
        check_engine(&m, &l, n, NULL, 0, batch, 2, sk != SIM_TINY, &c2);
        CU_ASSERT(coll_equal(&c0, &c1));
        CU_ASSERT(coll_equal(&c1, &c2)); /* threads 1 and 2, batches 1 and more: identical */
        check_engine(&m, &l, ni + 5, NULL, 0, 0, 2, sk != SIM_TINY, &c3); /* N above every list */
        coll_free(&c0);
        coll_free(&c1);
        coll_free(&c2);
        coll_free(&c3);
        rk_lists_free(&l);
        rk_model_free(&m);
    }
    CU_ASSERT(g_cases == 160);
    CU_ASSERT(g_ties > 0); /* the tie rule was exercised */
}

/* An explicit order with repeats, users without a training rating included
 * (they are served: their neighbours' items all count). */
static void test_users_order(void)
{
    rk_model m;
    rk_lists l;
    /* 5% density over 40 users: some users have no training rating */
    make_model(&m, 40, 30, 0.05, VAL_HALF, 77);
    make_ulists(&l, 40, 8, SIM_STEPS, 78);
    int32_t unrated = -1;
    for (int32_t u = 0; u < 40 && unrated < 0; u++)
        if (m.by_user.ptr[u + 1] == m.by_user.ptr[u] && l.len[u] > 0) unrated = u;
    CU_ASSERT_FATAL(unrated >= 0);
    int32_t users[] = {39, 0, 17, 38, 5, 17, unrated, 2, 39};
    collected a, b, c;
    check_engine(&m, &l, 4, users, 9, 0, 0, 1, &a);
    check_engine(&m, &l, 4, users, 9, 2, 2, 1, &b);
    check_engine(&m, &l, 4, users, 9, 1, 1, 1, &c);
    CU_ASSERT(coll_equal(&a, &b));
    CU_ASSERT(coll_equal(&a, &c));
    /* repeats are computed again, identically */
    CU_ASSERT_EQUAL(a.len[2], a.len[5]);
    CU_ASSERT(memcmp(a.item + 2 * 4, a.item + 5 * 4, (size_t)a.len[2] * sizeof *a.item) == 0);
    coll_free(&a);
    coll_free(&b);
    coll_free(&c);
    collected e; /* no users at all: no list, no failure */
    check_engine(&m, &l, 4, users, 0, 0, 0, 1, &e);
    CU_ASSERT_EQUAL(e.calls, 0);
    coll_free(&e);
    rk_lists_free(&l);
    rk_model_free(&m);
}

/* Hand-made lists with hand-computed results. */
static void build_small(rk_model *m)
{
    rk_triples t;
    rk_error err;
    /* user 0: {0, 1}; 1: {0, 2, 3}; 2: {1, 3, 4}; 3: {5}; 4: {0, 1}; 5: no rating */
    int32_t tu[] = {0, 0, 1, 1, 1, 2, 2, 2, 3, 4, 4}, ti[] = {0, 1, 0, 2, 3, 1, 3, 4, 5, 0, 1};
    float tr[] = {3, 4, 5, 1, 2, 4, 5, 3, 2, 4, 1};
    CU_ASSERT_FATAL(rk_triples_alloc(&t, 11, 0, &err) == RK_OK);
    memcpy(t.user, tu, sizeof tu);
    memcpy(t.item, ti, sizeof ti);
    memcpy(t.rating, tr, sizeof tr);
    t.n = 11;
    CU_ASSERT_FATAL(rk_model_build(m, &t, 6, 6, 0, 0, 0, 0, &err) == RK_OK);
    rk_triples_free(&t);
}

static void set_list(rk_lists *l, int32_t u, int32_t len, const int32_t *nbr, const float *sim)
{
    l->len[u] = len;
    for (int32_t r = 0; r < len; r++) {
        l->nbr[(int64_t)u * l->k + r] = nbr[r];
        l->sim[(int64_t)u * l->k + r] = sim[r];
    }
}

static void test_edges(void)
{
    rk_model m;
    rk_lists l;
    rk_error err;
    build_small(&m);
    CU_ASSERT_FATAL(rk_lists_alloc(&l, 6, 3, &err) == RK_OK);
    /* 0: users 1 and 2 at 1/2, 3 at 1/4 -> item 3: 1/2 + 1/2, items 2 and 4: 1/2 (tie), 5: 1/4 */
    set_list(&l, 0, 3, (int32_t[]){1, 2, 3}, (float[]){0.5f, 0.5f, 0.25f});
    /* 1: user 4 (rated 0 and 1: 0 is 1's own) -> item 1: 1/8 */
    set_list(&l, 1, 1, (int32_t[]){4}, (float[]){0.125f});
    /* 2: an empty list */
    set_list(&l, 2, 0, NULL, NULL);
    /* 3: users 0 and 4 tie at 3/4, both rated {0, 1} -> items 0 and 1 at 1.5, 0 first */
    set_list(&l, 3, 2, (int32_t[]){0, 4}, (float[]){0.75f, 0.75f});
    /* 4: user 0 rated only what 4 rated -> nothing; user 5 rated nothing; a
     * weight below 2^-33 (rounds to 0: its row is not read) */
    set_list(&l, 4, 3, (int32_t[]){0, 5, 2}, (float[]){1.0f, 0.5f, 1e-12f});
    set_list(&l, 5, 1, (int32_t[]){3}, (float[]){0.5f}); /* 5 has no rating: skipped with users = NULL */
    collected c;
    coll_init(&c, 5, 6);
    rk_topn_opts o;
    memset(&o, 0, sizeof o);
    o.n = 10; /* above the 6 items: capacity 6 */
    o.sink = sink;
    o.sink_ud = &c;
    rk_topn_stats st;
    CU_ASSERT_FATAL(rk_utopn_cpu(&m, &l, &o, &st, &err) == RK_OK);
    CU_ASSERT_EQUAL(c.bad_order, 0);
    CU_ASSERT_EQUAL(c.next, 5);
    CU_ASSERT_EQUAL(st.users, 5);
    const uint64_t one = (uint64_t)1 << 32;
    /* user 0: 3 (1.0), 2 (0.5), 4 (0.5), 5 (0.25): 4 candidates, N = 10 */
    CU_ASSERT_EQUAL(c.user[0], 0);
    CU_ASSERT_EQUAL(c.len[0], 4);
    int32_t i0[] = {3, 2, 4, 5};
    uint64_t s0[] = {one, one / 2, one / 2, one / 4};
    for (int r = 0; r < 4; r++) {
        CU_ASSERT_EQUAL(c.item[0 * 6 + r], i0[r]);
        CU_ASSERT_EQUAL(c.score[0 * 6 + r], s0[r]);
    }
    CU_ASSERT_EQUAL(c.len[1], 1);
    CU_ASSERT_EQUAL(c.item[1 * 6], 1);
    CU_ASSERT_EQUAL(c.score[1 * 6], one / 8);
    CU_ASSERT_EQUAL(c.len[2], 0); /* empty list */
    CU_ASSERT_EQUAL(c.len[3], 2);
    CU_ASSERT_EQUAL(c.item[3 * 6 + 0], 0);
    CU_ASSERT_EQUAL(c.item[3 * 6 + 1], 1);
    CU_ASSERT_EQUAL(c.score[3 * 6 + 0], one + one / 2);
    CU_ASSERT_EQUAL(c.score[3 * 6 + 1], one + one / 2);
    CU_ASSERT_EQUAL(c.len[4], 0); /* neighbours' items all rated by the user */
    CU_ASSERT_EQUAL(st.rows, 4 + 1 + 0 + 2 + 0);
    /* rows read: 0: |I_1| + |I_2| + |I_3| = 7; 1: |I_4| = 2; 3: |I_0| + |I_4| = 4;
     * 4: |I_0| + |I_5| = 2 (user 2's weight rounds to 0) */
    CU_ASSERT_EQUAL(st.updates, 7 + 2 + 0 + 4 + 2);
    coll_free(&c);
    /* N = 1: the ties go to the lower index */
    coll_init(&c, 5, 1);
    o.n = 1;
    o.sink_ud = &c;
    CU_ASSERT_FATAL(rk_utopn_cpu(&m, &l, &o, &st, &err) == RK_OK);
    CU_ASSERT_EQUAL(c.len[0], 1);
    CU_ASSERT_EQUAL(c.item[0], 3);
    CU_ASSERT_EQUAL(c.len[3], 1);
    CU_ASSERT_EQUAL(c.item[3], 0);
    coll_free(&c);
    /* N = 2 cuts user 0 inside the tie at 0.5: 3, then 2 (not 4) */
    coll_init(&c, 5, 2);
    o.n = 2;
    o.sink_ud = &c;
    CU_ASSERT_FATAL(rk_utopn_cpu(&m, &l, &o, &st, &err) == RK_OK);
    CU_ASSERT_EQUAL(c.len[0], 2);
    CU_ASSERT_EQUAL(c.item[1], 2);
    coll_free(&c);
    /* user 5 (no rating) on request: user 3's item 5 at 0.5 */
    int32_t five[] = {5, 0};
    coll_init(&c, 2, 3);
    o.n = 3;
    o.users = five;
    o.n_users = 2;
    o.sink_ud = &c;
    CU_ASSERT_FATAL(rk_utopn_cpu(&m, &l, &o, &st, &err) == RK_OK);
    CU_ASSERT_EQUAL(c.len[0], 1);
    CU_ASSERT_EQUAL(c.item[0], 5);
    CU_ASSERT_EQUAL(c.score[0], one / 2);
    CU_ASSERT_EQUAL(c.len[1], 3);
    coll_free(&c);
    /* N far above the items: lists of at most 6 */
    collected d;
    check_engine(&m, &l, 1000000, NULL, 0, 0, 1, 0, &d);
    coll_free(&d);
    rk_lists_free(&l);
    rk_model_free(&m);
}

static void test_errors(void)
{
    rk_model m;
    rk_lists l, wrong;
    rk_error err;
    make_model(&m, 30, 20, 0.4, VAL_HALF, 9);
    make_ulists(&l, 30, 5, SIM_REAL, 10);
    collected c;
    coll_init(&c, 30, 3);
    rk_topn_opts o;
    memset(&o, 0, sizeof o);
    o.n = 3;
    o.batch = 4;
    o.sink = sink;
    o.sink_ud = &c;
    c.fail_at = 2; /* the sink's failure stops the engine and comes back */
    CU_ASSERT_EQUAL(rk_utopn_cpu(&m, &l, &o, NULL, &err), RK_E_IO);
    CU_ASSERT(strstr(err.msg, "sink failure 2") != NULL);
    CU_ASSERT_EQUAL(c.calls, 2);
    c.fail_at = 0;
    o.n = 0;
    CU_ASSERT_EQUAL(rk_utopn_cpu(&m, &l, &o, NULL, &err), RK_E_ARG);
    o.n = -4;
    CU_ASSERT_EQUAL(rk_utopn_cpu(&m, &l, &o, NULL, &err), RK_E_ARG);
    o.n = 3;
    o.sink = NULL;
    CU_ASSERT_EQUAL(rk_utopn_cpu(&m, &l, &o, NULL, &err), RK_E_ARG);
    o.sink = sink;
    CU_ASSERT_EQUAL(rk_utopn_cpu(&m, NULL, &o, NULL, &err), RK_E_ARG);
    /* lists for the items (20), not the users (30) */
    make_ulists(&wrong, 20, 5, SIM_REAL, 11);
    CU_ASSERT_EQUAL(rk_utopn_cpu(&m, &wrong, &o, NULL, &err), RK_E_ARG);
    rk_lists_free(&wrong);
    make_ulists(&wrong, 31, 5, SIM_REAL, 11);
    CU_ASSERT_EQUAL(rk_utopn_cpu(&m, &wrong, &o, NULL, &err), RK_E_ARG);
    rk_lists_free(&wrong);
    /* a neighbour outside the users, a length beyond the capacity */
    int32_t len3 = l.len[3];
    l.len[3] = 1;
    int32_t keep = l.nbr[3 * 5];
    l.nbr[3 * 5] = 30;
    CU_ASSERT_EQUAL(rk_utopn_cpu(&m, &l, &o, NULL, &err), RK_E_ARG);
    l.nbr[3 * 5] = -1;
    CU_ASSERT_EQUAL(rk_utopn_cpu(&m, &l, &o, NULL, &err), RK_E_ARG);
    l.nbr[3 * 5] = keep;
    l.len[3] = 6;
    CU_ASSERT_EQUAL(rk_utopn_cpu(&m, &l, &o, NULL, &err), RK_E_ARG);
    l.len[3] = len3;
    int32_t bad[] = {1, 30};
    o.users = bad;
    o.n_users = 2;
    CU_ASSERT_EQUAL(rk_utopn_cpu(&m, &l, &o, NULL, &err), RK_E_ARG);
    bad[1] = -1;
    CU_ASSERT_EQUAL(rk_utopn_cpu(&m, &l, &o, NULL, &err), RK_E_ARG);
    /* nothing reached the sink after the failure above */
    CU_ASSERT_EQUAL(c.calls, 2);
    /* and the same lists, repaired, are accepted */
    bad[1] = 29;
    CU_ASSERT_EQUAL(rk_utopn_check(&m, &l, &o, &err), RK_OK);
    coll_free(&c);
    rk_lists_free(&l);
    rk_model_free(&m);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"random shapes and lists against the brute force", test_random},
        {"--users: any order, repeats, untrained users", test_users_order},
        {"ties, empty lists, rated-only neighbours, N above the candidates", test_edges},
        {"errors: the sink's status, bad lists, bad options", test_errors},
        {NULL, NULL},
    };
    return rk_test_main("utopn", cases);
}
