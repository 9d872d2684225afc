/* The most-popular baseline (engine/rk_popular.c) against a brute force written
 * here from the training triples themselves (counts and rated sets taken
 * from the triples, not from the model's matrices): for each user every
 * unrated item with a rating sorted by (count desc, index asc), the first N.
 * Random shapes with fixed seeds, every user or an explicit list in any
 * order, N above the candidates, a user who rated every rated item, batch
 * sizes and thread counts; a hand case; errors. */
#include "rk_popular.h"
#include "rk_model.h"
#include "test_util.h"
#include "test_topn_util.h"

#include <stdlib.h>
#include <string.h>

/* Training data kept as triples and a dense rated[] for the reference. */
typedef struct data {
    int32_t nu, ni;
    rk_triples t;
    unsigned char *rated; /* nu * ni */
    int64_t *count;       /* ni */
    rk_model m;
} data;

/* Random ratings; user `full` (when >= 0) rates every item that anyone
 * else rated, and the last item gets no rating when ni > 2. */
static void make_data(data *d, int32_t nu, int32_t ni, double density, int32_t full, unsigned long long seed)
{
    rk_error err;
    unsigned long long s = seed;
    d->nu = nu;
    d->ni = ni;
    d->rated = calloc((size_t)nu * (size_t)ni, 1);
    d->count = calloc((size_t)ni, sizeof *d->count);
    for (int32_t u = 0; u < nu; u++)
        for (int32_t i = 0; i < ni; i++)
            if (u != full && !(ni > 2 && i == ni - 1) && rk_test_uniform(&s) < density) d->rated[u * ni + i] = 1;
    if (full >= 0)
        for (int32_t i = 0; i < ni; i++)
            for (int32_t u = 0; u < nu; u++)
                if (u != full && d->rated[u * ni + i]) d->rated[full * ni + i] = 1;
    int64_t n = 0;
    for (int64_t x = 0; x < (int64_t)nu * ni; x++) n += d->rated[x];
    if (n == 0) { /* at least one rating (and `full` still rates every rated item) */
        d->rated[0] = 1;
        n = 1;
        if (full > 0) {
            d->rated[full * ni] = 1;
            n = 2;
        }
    }
    CU_ASSERT_FATAL(rk_triples_alloc(&d->t, n, 0, &err) == RK_OK);
    /* in a shuffled order: the model must not depend on file order */
    int64_t k = 0;
    for (int32_t i = ni - 1; i >= 0; i--)
        for (int32_t u = 0; u < nu; u++)
            if (d->rated[u * ni + i]) {
                d->t.user[k] = u;
                d->t.item[k] = i;
                d->t.rating[k] = (float)(1 + rk_test_rand(&s) % 5);
                d->count[i]++;
                k++;
            }
    CU_ASSERT_FATAL(rk_model_build(&d->m, &d->t, nu, ni, 0, 0, 0, 0, &err) == RK_OK);
}

static void free_data(data *d)
{
    rk_model_free(&d->m);
    rk_triples_free(&d->t);
    free(d->rated);
    free(d->count);
}

typedef struct cand { int64_t c; int32_t i; } cand;

static int cand_cmp(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->c != y->c) return x->c > y->c ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* The reference list of u: @return its length; out has room for n. */
static int32_t reference(const data *d, int32_t u, int32_t n, cand *out)
{
    cand *all = malloc((size_t)d->ni * sizeof *all);
    int32_t len = 0;
    for (int32_t i = 0; i < d->ni; i++)
        if (d->count[i] > 0 && !d->rated[u * d->ni + i]) all[len++] = (cand){d->count[i], i};
    qsort(all, (size_t)len, sizeof *all, cand_cmp);
    if (len > n) len = n;
    memcpy(out, all, (size_t)len * sizeof *out);
    free(all);
    return len;
}

static int g_runs, g_ties, g_short;

/* Run the baseline and compare every list with the reference; the output
 * lands in c (caller frees). */
static void check(const data *d, int32_t n, const int32_t *users, int64_t n_users, int64_t batch, int threads,
                  collected *c)
{
    int64_t expect = 0;
    if (users == NULL) {
        for (int32_t u = 0; u < d->nu; u++) {
            int any = 0;
            for (int32_t i = 0; i < d->ni; i++) any |= d->rated[u * d->ni + i];
            expect += any;
        }
    } else {
        expect = n_users;
    }
    coll_init(c, expect, n);
    rk_topn_opts o;
    rk_topn_stats st;
    rk_error err;
    memset(&o, 0, sizeof o);
    o.n = n;
    o.users = users;
    o.n_users = n_users;
    o.batch = batch;
    o.sink = sink;
    o.sink_ud = c;
    o.threads = threads;
    CU_ASSERT_FATAL(rk_popular_topn(&d->m, &o, &st, &err) == RK_OK);
    CU_ASSERT_EQUAL(c->bad_order, 0);
    CU_ASSERT_EQUAL(c->next, expect);
    CU_ASSERT_EQUAL(st.users, expect);
    CU_ASSERT_STRING_EQUAL(st.path, "popular");
    CU_ASSERT(st.wall_s >= st.compute_s && st.compute_s >= 0.0 && st.sink_s >= 0.0);
    if (batch > 0 && expect > 0) CU_ASSERT_EQUAL(c->calls, (expect + batch - 1) / batch);
    cand *ref = malloc((size_t)n * sizeof *ref);
    int64_t rows = 0;
    int32_t prev = -1;
    for (int64_t b = 0; b < expect; b++) {
        int32_t u = c->user[b];
        if (users != NULL) {
            CU_ASSERT_EQUAL(u, users[b]);
        } else { /* every user with a rating, ascending */
            CU_ASSERT(u > prev);
            int any = 0;
            for (int32_t i = 0; i < d->ni; i++) any |= d->rated[u * d->ni + i];
            CU_ASSERT(any);
            prev = u;
        }
        int32_t len = reference(d, u, n, ref);
        CU_ASSERT_EQUAL(c->len[b], len);
        if (c->len[b] != len) continue;
        if (len < n) g_short++;
        rows += len;
        for (int32_t r = 0; r < len; r++) {
            CU_ASSERT_EQUAL(c->item[b * n + r], ref[r].i);
            CU_ASSERT_EQUAL(c->score[b * n + r], (uint64_t)ref[r].c * 4294967296ULL);
            CU_ASSERT_DOUBLE_EQUAL(rk_topn_score(c->score[b * n + r]), (double)ref[r].c, 0.0);
            if (r > 0 && ref[r].c == ref[r - 1].c) g_ties++;
        }
    }
    CU_ASSERT_EQUAL(st.rows, rows);
    g_runs++;
    free(ref);
}

static void test_random(void)
{
    unsigned long long s = 4242;
    g_runs = g_ties = g_short = 0;
    for (int round = 0; round < 40; round++) {
        int32_t nu = 1 + (int32_t)(rk_test_rand(&s) % 50), ni = 1 + (int32_t)(rk_test_rand(&s) % 40);
        double dens = 0.03 + 0.5 * rk_test_uniform(&s);
        int32_t full = nu > 2 ? (int32_t)(rk_test_rand(&s) % (uint64_t)nu) : -1;
        int32_t n = 1 + (int32_t)(rk_test_rand(&s) % 12);
        data d;
        make_data(&d, nu, ni, dens, full, s + (unsigned long long)round);
        collected a, b, c2, e;
        check(&d, n, NULL, 0, 0, 1, &a);
        check(&d, n, NULL, 0, 1, 2, &b);
        CU_ASSERT(coll_equal(&a, &b)); /* threads and batches change nothing */
        check(&d, n, NULL, 0, 1 + (int64_t)(rk_test_rand(&s) % 6), 2, &c2);
        CU_ASSERT(coll_equal(&a, &c2));
        check(&d, ni + 3, NULL, 0, 0, 0, &e); /* N above the candidates */
        /* an explicit list: any order, repeats, users without ratings */
        int64_t k = 1 + (int64_t)(rk_test_rand(&s) % 20);
        int32_t *users = malloc((size_t)k * sizeof *users);
        for (int64_t x = 0; x < k; x++) users[x] = (int32_t)(rk_test_rand(&s) % (uint64_t)nu);
        collected f, g;
        check(&d, n, users, k, 0, 1, &f);
        check(&d, n, users, k, 1, 2, &g);
        CU_ASSERT(coll_equal(&f, &g));
        if (full >= 0) { /* the user who rated every rated item gets nothing */
            collected h;
            check(&d, n, &full, 1, 0, 0, &h);
            CU_ASSERT_EQUAL(h.len[0], 0);
            coll_free(&h);
        }
        free(users);
        coll_free(&a);
        coll_free(&b);
        coll_free(&c2);
        coll_free(&e);
        coll_free(&f);
        coll_free(&g);
        free_data(&d);
    }
    CU_ASSERT(g_ties > 0);  /* the tie rule was exercised */
    CU_ASSERT(g_short > 0); /* and lists shorter than N */
}

/* By hand: 4 users, 5 items.  Ratings: user 0: items 0, 1, 2; user 1: 1, 2;
 * user 2: 2; user 3: none.  Counts: item 2: 3, item 1: 2, item 0: 1, items 3
 * and 4: 0 (never recommended).  Popular order: 2, 1, 0. */
static void test_hand(void)
{
    rk_triples t;
    rk_model m;
    rk_error err;
    const int32_t tu[] = {0, 0, 0, 1, 1, 2}, ti[] = {0, 1, 2, 1, 2, 2};
    const float tr[] = {4, 3, 5, 2, 4, 1};
    CU_ASSERT_FATAL(rk_triples_alloc(&t, 6, 0, &err) == RK_OK);
    memcpy(t.user, tu, sizeof tu);
    memcpy(t.item, ti, sizeof ti);
    memcpy(t.rating, tr, sizeof tr);
    CU_ASSERT_FATAL(rk_model_build(&m, &t, 4, 5, 0, 0, 0, 0, &err) == RK_OK);
    collected c;
    const int32_t users[] = {3, 2, 0, 1};
    coll_init(&c, 4, 2);
    rk_topn_opts o;
    memset(&o, 0, sizeof o);
    o.n = 2;
    o.users = users;
    o.n_users = 4;
    o.sink = sink;
    o.sink_ud = &c;
    rk_topn_stats st;
    CU_ASSERT_FATAL(rk_popular_topn(&m, &o, &st, &err) == RK_OK);
    /* user 3 (no rating): 2 (3), 1 (2); user 2: 1 (2), 0 (1); user 0: nothing; user 1: 0 (1) */
    CU_ASSERT_EQUAL(c.len[0], 2);
    CU_ASSERT_EQUAL(c.item[0], 2);
    CU_ASSERT_EQUAL(c.score[0], (uint64_t)3 << 32);
    CU_ASSERT_EQUAL(c.item[1], 1);
    CU_ASSERT_EQUAL(c.score[1], (uint64_t)2 << 32);
    CU_ASSERT_EQUAL(c.len[1], 2);
    CU_ASSERT_EQUAL(c.item[2], 1);
    CU_ASSERT_EQUAL(c.item[3], 0);
    CU_ASSERT_EQUAL(c.score[3], (uint64_t)1 << 32);
    CU_ASSERT_EQUAL(c.len[2], 0);
    CU_ASSERT_EQUAL(c.len[3], 1);
    CU_ASSERT_EQUAL(c.item[6], 0);
    CU_ASSERT_EQUAL(st.rows, 5);
    CU_ASSERT_EQUAL(st.users, 4);
    coll_free(&c);
    /* users NULL: users 0, 1, 2 (3 has no rating) */
    coll_init(&c, 3, 2);
    o.users = NULL;
    o.sink_ud = &c;
    CU_ASSERT_FATAL(rk_popular_topn(&m, &o, NULL, &err) == RK_OK);
    CU_ASSERT_EQUAL(c.next, 3);
    CU_ASSERT_EQUAL(c.user[0], 0);
    CU_ASSERT_EQUAL(c.user[1], 1);
    CU_ASSERT_EQUAL(c.user[2], 2);
    coll_free(&c);
    rk_model_free(&m);
    rk_triples_free(&t);
}

static int g_progress_calls;
static double g_progress_last;

static int progress(void *ud, const char *stage, double done, double total, const char *unit)
{
    (void)ud;
    CU_ASSERT_STRING_EQUAL(stage, "baseline");
    CU_ASSERT_STRING_EQUAL(unit, "users");
    CU_ASSERT(done <= total);
    g_progress_calls++;
    g_progress_last = done;
    return 0;
}

static void test_errors(void)
{
    data d;
    rk_error err;
    make_data(&d, 30, 20, 0.4, -1, 9);
    collected c;
    coll_init(&c, 30, 3);
    rk_topn_opts o;
    memset(&o, 0, sizeof o);
    o.n = 3;
    o.batch = 4;
    o.sink = sink;
    o.sink_ud = &c;
    o.progress = progress;
    c.fail_at = 2; /* the sink's failure stops the baseline and comes back */
    CU_ASSERT_EQUAL(rk_popular_topn(&d.m, &o, NULL, &err), RK_E_IO);
    CU_ASSERT(strstr(err.msg, "sink failure 2") != NULL);
    CU_ASSERT_EQUAL(c.calls, 2);
    coll_free(&c);
    coll_init(&c, 30, 3);
    o.sink_ud = &c;
    g_progress_calls = 0;
    int32_t some[] = {3, 1, 4, 1, 5, 9, 2};
    o.users = some;
    o.n_users = 7;
    CU_ASSERT_EQUAL(rk_popular_topn(&d.m, &o, NULL, &err), RK_OK);
    CU_ASSERT_EQUAL(g_progress_calls, 1 + 2); /* the start and two batches of 4 */
    CU_ASSERT_DOUBLE_EQUAL(g_progress_last, 7.0, 0.0);
    o.users = NULL;
    o.progress = NULL;
    o.n = 0;
    CU_ASSERT_EQUAL(rk_popular_topn(&d.m, &o, NULL, &err), RK_E_ARG);
    o.n = 3;
    o.sink = NULL;
    CU_ASSERT_EQUAL(rk_popular_topn(&d.m, &o, NULL, &err), RK_E_ARG);
    o.sink = sink;
    int32_t bad[] = {1, 30};
    o.users = bad;
    o.n_users = 2;
    rk_topn_stats st;
    CU_ASSERT_EQUAL(rk_popular_topn(&d.m, &o, &st, &err), RK_E_ARG);
    CU_ASSERT(strstr(err.msg, "30") != NULL);
    CU_ASSERT_STRING_EQUAL(st.path, "popular");
    coll_free(&c);
    free_data(&d);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"a hand case: order, ties, scores, a user without ratings", test_hand},
        {"random shapes against the brute force; batches and threads", test_random},
        {"errors, the sink's status, progress", test_errors},
        {NULL, NULL},
    };
    return rk_test_main("popular", cases);
}
