/* Ranking metrics (eval/rk_rank.c) on hand-computed cases, with the
 * arithmetic written out; the Gini index on hand cases and, on random data,
 * against its pairwise form Σ_i Σ_j |c_i − c_j| / (2 n Σ c); random lists
 * against a naive evaluator written here (linear search, no sorting); the
 * sink path against rk_rank_add; bad input. */
#include "rk_rank.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EPS 1e-12

static void set_triples(rk_triples *t, const int32_t *u, const int32_t *i, const float *r, int64_t n)
{
    rk_error err;
    CU_ASSERT_FATAL(rk_triples_alloc(t, n, 0, &err) == RK_OK);
    if (n > 0) {
        memcpy(t->user, u, (size_t)n * sizeof *u);
        memcpy(t->item, i, (size_t)n * sizeof *i);
        memcpy(t->rating, r, (size_t)n * sizeof *r);
    }
}

/* ---- the hand case ----------------------------------------------------------------------- */

/* 5 users, 10 items, N = 3, relevance 4:
 *   user 0: items 1 (5.0) and 2 (4.0) relevant, 3 (3.5) not     #rel = 2
 *   user 1: item 4 (2.0): no relevant item, not counted
 *   user 2: items 5, 6, 7, 8 (4.5) relevant                      #rel = 4 > N
 *   user 3: item 9 (4.0) relevant, and it gets no list           #rel = 1
 *   user 4: no test rating
 * so users = 3 (0, 2, 3). */
static const int32_t H_U[] = {0, 0, 0, 1, 2, 2, 2, 2, 3};
static const int32_t H_I[] = {3, 1, 2, 4, 8, 5, 7, 6, 9};
static const float H_R[] = {3.5f, 5.0f, 4.0f, 2.0f, 4.5f, 4.5f, 4.5f, 4.5f, 4.0f};

static void test_hand(void)
{
    rk_triples t;
    rk_rank *r;
    rk_error err;
    rk_rank_result res;
    set_triples(&t, H_U, H_I, H_R, 9);
    CU_ASSERT_FATAL(rk_rank_new(&r, &t, 5, 10, 3, RK_RANK_RELEVANCE_DEFAULT, &err) == RK_OK);

    /* user 0: [1], a list shorter than N with a hit at rank 1:
     *   precision 1/3 (still over N), recall 1/2, RR 1, hit 1,
     *   DCG = 1/log2(2) = 1, ideal over min(3, 2) = 2 ranks = 1 + 1/log2(3). */
    const int32_t l0[] = {1};
    rk_rank_add(r, 0, l0, 1);
    /* user 1: no relevant item, counts only in lists, rows, coverage, Gini */
    const int32_t l1[] = {5, 6, 7};
    rk_rank_add(r, 1, l1, 3);
    /* user 2: [0, 9, 5], the one hit (5) at rank 3:
     *   precision 1/3, recall 1/4, RR 1/3, hit 1,
     *   DCG = 1/log2(4) = 0.5, ideal over min(3, 4) = 3 ranks = 1 + 1/log2(3) + 0.5. */
    const int32_t l2[] = {0, 9, 5};
    rk_rank_add(r, 2, l2, 3);
    /* user 4: not in the test set */
    const int32_t l4[] = {5, 1, 2};
    rk_rank_add(r, 4, l4, 3);
    /* user 3: no list, zeros everywhere */

    rk_rank_finish(r, &res);
    const double inv_l3 = 1.0 / log2(3.0);
    CU_ASSERT_EQUAL(res.n, 3);
    CU_ASSERT_DOUBLE_EQUAL(res.relevance, 4.0, 0.0);
    CU_ASSERT_EQUAL(res.users, 3);
    CU_ASSERT_EQUAL(res.users_without_list, 1);
    CU_ASSERT_DOUBLE_EQUAL(res.precision, (1.0 / 3 + 1.0 / 3 + 0) / 3, EPS); /* 2/9 */
    CU_ASSERT_DOUBLE_EQUAL(res.recall, (0.5 + 0.25 + 0) / 3, EPS);          /* 0.25 */
    CU_ASSERT_DOUBLE_EQUAL(res.ndcg, (1.0 / (1.0 + inv_l3) + 0.5 / (1.5 + inv_l3)) / 3, EPS);
    CU_ASSERT_DOUBLE_EQUAL(res.ndcg, (0.613147 + 0.234639) / 3, 1e-6);      /* the same in numbers */
    CU_ASSERT_DOUBLE_EQUAL(res.mrr, (1.0 + 1.0 / 3) / 3, EPS);              /* 4/9 */
    CU_ASSERT_DOUBLE_EQUAL(res.hit_rate, 2.0 / 3, EPS);
    CU_ASSERT_EQUAL(res.lists, 4);
    CU_ASSERT_EQUAL(res.rows, 1 + 3 + 3 + 3);
    /* counts: item 0:1, 1:2 (users 0, 4), 2:1, 5:3 (users 1, 2, 4), 6:1, 7:1, 9:1;
     * items 3, 4, 8 never: 7 distinct of 10 */
    const int64_t want[10] = {1, 2, 1, 0, 0, 3, 1, 1, 0, 1};
    const int64_t *cnt = rk_rank_item_counts(r);
    for (int i = 0; i < 10; i++) CU_ASSERT_EQUAL(cnt[i], want[i]);
    CU_ASSERT_EQUAL(res.items_recommended, 7);
    CU_ASSERT_DOUBLE_EQUAL(res.coverage, 0.7, EPS);
    /* Gini: counts ascending 0 0 0 1 1 1 1 1 2 3, n = 10, Σc = 10; the weights
     * 2i − 11 for i = 1..10 are −9 −7 −5 −3 −1 1 3 5 7 9:
     *   Σ = −3·1 − 1·1 + 1·1 + 3·1 + 5·1 + 7·2 + 9·3 = 46, G = 46 / (10 · 10) = 0.46 */
    CU_ASSERT_DOUBLE_EQUAL(res.gini, 0.46, EPS);

    /* a second list of user 0 (a perfect one) changes no user metric, but
     * counts in lists, rows and the counts */
    const int32_t again[] = {2, 1};
    rk_rank_add(r, 0, again, 2);
    rk_rank_result res2;
    rk_rank_finish(r, &res2);
    CU_ASSERT_DOUBLE_EQUAL(res2.precision, res.precision, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(res2.ndcg, res.ndcg, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(res2.mrr, res.mrr, 0.0);
    CU_ASSERT_EQUAL(res2.users_without_list, 1);
    CU_ASSERT_EQUAL(res2.lists, 5);
    CU_ASSERT_EQUAL(res2.rows, 12);
    CU_ASSERT_EQUAL(rk_rank_item_counts(r)[1], 3);
    CU_ASSERT_EQUAL(rk_rank_item_counts(r)[2], 2);
    rk_rank_free(r);
    rk_triples_free(&t);
}

/* Perfect lists, more relevant items than N, ties of the engine's scores do
 * not matter (only the order of the items does). */
static void test_ideal(void)
{
    rk_triples t;
    rk_rank *r;
    rk_error err;
    rk_rank_result res;
    set_triples(&t, H_U, H_I, H_R, 9);
    CU_ASSERT_FATAL(rk_rank_new(&r, &t, 5, 10, 3, 4.0, &err) == RK_OK);
    /* user 2 (#rel 4 > N = 3): [8, 7, 6] is perfect: DCG = ideal over 3 ranks, NDCG 1,
     * precision 3/3 = 1, recall 3/4, RR 1 */
    const int32_t l2[] = {8, 7, 6};
    rk_rank_add(r, 2, l2, 3);
    /* user 0 (#rel 2): [2, 1, 0] perfect: NDCG 1 (ideal over 2 ranks), precision 2/3, recall 1 */
    const int32_t l0[] = {2, 1, 0};
    rk_rank_add(r, 0, l0, 3);
    /* user 3 (#rel 1): [0, 9]: hit at rank 2, DCG = 1/log2(3), ideal = 1, RR 1/2,
     * precision 1/3, recall 1 */
    const int32_t l3[] = {0, 9};
    rk_rank_add(r, 3, l3, 2);
    rk_rank_finish(r, &res);
    CU_ASSERT_EQUAL(res.users, 3);
    CU_ASSERT_EQUAL(res.users_without_list, 0);
    CU_ASSERT_DOUBLE_EQUAL(res.ndcg, (1.0 + 1.0 + 1.0 / log2(3.0)) / 3, EPS);
    CU_ASSERT_DOUBLE_EQUAL(res.precision, (1.0 + 2.0 / 3 + 1.0 / 3) / 3, EPS);
    CU_ASSERT_DOUBLE_EQUAL(res.recall, (0.75 + 1.0 + 1.0) / 3, EPS);
    CU_ASSERT_DOUBLE_EQUAL(res.mrr, (1.0 + 1.0 + 0.5) / 3, EPS);
    CU_ASSERT_DOUBLE_EQUAL(res.hit_rate, 1.0, EPS);
    rk_rank_free(r);

    /* the relevance threshold moves what counts: at 5.0 only user 0's item 1 is
     * relevant; [2, 1] hits at rank 2: NDCG = (1/log2 3) / 1, RR 1/2 */
    CU_ASSERT_FATAL(rk_rank_new(&r, &t, 5, 10, 3, 5.0, &err) == RK_OK);
    const int32_t l0b[] = {2, 1};
    rk_rank_add(r, 0, l0b, 2);
    rk_rank_finish(r, &res);
    CU_ASSERT_EQUAL(res.users, 1);
    CU_ASSERT_DOUBLE_EQUAL(res.relevance, 5.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(res.ndcg, 1.0 / log2(3.0), EPS);
    CU_ASSERT_DOUBLE_EQUAL(res.mrr, 0.5, EPS);
    CU_ASSERT_DOUBLE_EQUAL(res.recall, 1.0, EPS);
    CU_ASSERT_DOUBLE_EQUAL(res.precision, 1.0 / 3, EPS);
    rk_rank_free(r);
    rk_triples_free(&t);
}

/* Gini: equal counts, one item taking everything, nothing at all. */
static void test_gini(void)
{
    rk_triples t;
    rk_rank *r;
    rk_error err;
    rk_rank_result res;
    const int32_t u[] = {0}, i[] = {0};
    const float v[] = {5.0f};
    set_triples(&t, u, i, v, 1);

    /* 4 items, each recommended once (two users, two items each): all equal, G = 0 */
    CU_ASSERT_FATAL(rk_rank_new(&r, &t, 3, 4, 2, 4.0, &err) == RK_OK);
    const int32_t a[] = {0, 1}, b[] = {3, 2};
    rk_rank_add(r, 1, a, 2);
    rk_rank_add(r, 2, b, 2);
    rk_rank_finish(r, &res);
    CU_ASSERT_DOUBLE_EQUAL(res.gini, 0.0, EPS);
    CU_ASSERT_DOUBLE_EQUAL(res.coverage, 1.0, EPS);
    /* user 0 (the one relevant user) got no list: everything zero, one without */
    CU_ASSERT_EQUAL(res.users, 1);
    CU_ASSERT_EQUAL(res.users_without_list, 1);
    CU_ASSERT_DOUBLE_EQUAL(res.precision + res.recall + res.ndcg + res.mrr + res.hit_rate, 0.0, 0.0);
    rk_rank_free(r);

    /* 5 items, every list is [2]: counts 0 0 0 0 3, G = (2·5 − 5 − 1)·3 / (5·3) = 4/5 = (n − 1)/n */
    CU_ASSERT_FATAL(rk_rank_new(&r, &t, 3, 5, 2, 4.0, &err) == RK_OK);
    const int32_t c[] = {2};
    for (int x = 0; x < 3; x++) rk_rank_add(r, x, c, 1);
    rk_rank_finish(r, &res);
    CU_ASSERT_DOUBLE_EQUAL(res.gini, 0.8, EPS);
    CU_ASSERT_EQUAL(res.items_recommended, 1);
    CU_ASSERT_DOUBLE_EQUAL(res.coverage, 0.2, EPS);
    rk_rank_free(r);

    /* nothing recommended (empty lists only): G = 0, coverage 0 */
    CU_ASSERT_FATAL(rk_rank_new(&r, &t, 3, 5, 2, 4.0, &err) == RK_OK);
    rk_rank_add(r, 0, c, 0);
    rk_rank_finish(r, &res);
    CU_ASSERT_EQUAL(res.lists, 1);
    CU_ASSERT_EQUAL(res.rows, 0);
    CU_ASSERT_EQUAL(res.users_without_list, 0); /* it got a list, an empty one */
    CU_ASSERT_DOUBLE_EQUAL(res.gini, 0.0, 0.0);
    CU_ASSERT_DOUBLE_EQUAL(res.coverage, 0.0, 0.0);
    rk_rank_free(r);

    /* no test rating at all, no item: every mean is 0, nothing divides by 0 */
    rk_triples none = {0};
    CU_ASSERT_FATAL(rk_rank_new(&r, &none, 0, 0, 1, 4.0, &err) == RK_OK);
    rk_rank_finish(r, &res);
    CU_ASSERT_EQUAL(res.users, 0);
    CU_ASSERT_DOUBLE_EQUAL(res.precision + res.ndcg + res.gini + res.coverage, 0.0, 0.0);
    rk_rank_free(r);
    rk_triples_free(&t);
}

/* ---- random lists against a naive evaluator ---------------------------------------------- */

typedef struct naive {
    double p, rc, ndcg, rr, hit, gini, coverage;
    int64_t users, without;
} naive;

/* Relevance by a scan of the triples, the ideal DCG summed afresh per user,
 * the Gini index in its pairwise form. */
static void naive_eval(const rk_triples *t, int32_t nu, int32_t ni, int32_t n, double rel, const int32_t *lists,
                       const int32_t *lens, const int *fed, naive *out)
{
    memset(out, 0, sizeof *out);
    int64_t *cnt = calloc((size_t)ni, sizeof *cnt);
    for (int32_t u = 0; u < nu; u++) {
        if (fed[u])
            for (int32_t x = 0; x < lens[u]; x++) cnt[lists[(int64_t)u * n + x]]++;
        int64_t nrel = 0;
        for (int64_t k = 0; k < t->n; k++) nrel += t->user[k] == u && t->rating[k] >= rel;
        if (nrel == 0) continue;
        out->users++;
        if (!fed[u]) {
            out->without++;
            continue;
        }
        double dcg = 0, idcg = 0;
        int64_t hits = 0, first = 0;
        for (int32_t x = 0; x < lens[u]; x++) {
            int is = 0;
            for (int64_t k = 0; k < t->n; k++)
                is |= t->user[k] == u && t->item[k] == lists[(int64_t)u * n + x] && t->rating[k] >= rel;
            if (!is) continue;
            hits++;
            dcg += 1.0 / log2(x + 2.0);
            if (!first) first = x + 1;
        }
        for (int64_t x = 0; x < (nrel < n ? nrel : n); x++) idcg += 1.0 / log2(x + 2.0);
        out->p += (double)hits / n;
        out->rc += (double)hits / (double)nrel;
        out->ndcg += dcg / idcg;
        out->rr += first ? 1.0 / (double)first : 0.0;
        out->hit += hits > 0;
    }
    if (out->users > 0) {
        out->p /= (double)out->users;
        out->rc /= (double)out->users;
        out->ndcg /= (double)out->users;
        out->rr /= (double)out->users;
        out->hit /= (double)out->users;
    }
    double diff = 0, sum = 0;
    int distinct = 0;
    for (int32_t i = 0; i < ni; i++) {
        sum += (double)cnt[i];
        distinct += cnt[i] > 0;
        for (int32_t j = 0; j < ni; j++) diff += fabs((double)cnt[i] - (double)cnt[j]);
    }
    out->gini = sum > 0 ? diff / (2.0 * ni * sum) : 0.0;
    out->coverage = (double)distinct / ni;
    free(cnt);
}

/* Batches of `batch` users in user order, as an engine would send them. */
static void feed_sink(rk_rank *r, int32_t nu, int32_t n, const int32_t *lists, const int32_t *lens, const int *fed,
                      int64_t batch)
{
    int32_t *bu = malloc((size_t)nu * sizeof *bu), *bl = malloc((size_t)nu * sizeof *bl);
    int32_t *bi = malloc((size_t)nu * (size_t)n * sizeof *bi);
    uint64_t *bs = calloc((size_t)nu * (size_t)n, sizeof *bs);
    int64_t cnt = 0, first = 0;
    rk_error err;
    for (int32_t u = 0; u <= nu; u++) {
        if (u == nu || cnt == batch) {
            rk_topn_batch b = {first, cnt, bu, n, bl, bi, bs};
            if (cnt > 0) CU_ASSERT_EQUAL(rk_rank_sink(r, &b, &err), RK_OK);
            first += cnt;
            cnt = 0;
        }
        if (u == nu || !fed[u]) continue;
        bu[cnt] = u;
        bl[cnt] = lens[u];
        memcpy(bi + cnt * n, lists + (int64_t)u * n, (size_t)lens[u] * sizeof *bi);
        cnt++;
    }
    free(bu);
    free(bl);
    free(bi);
    free(bs);
}

static void test_random(void)
{
    unsigned long long s = 77;
    for (int round = 0; round < 30; round++) {
        int32_t nu = 1 + (int32_t)(rk_test_rand(&s) % 40), ni = 1 + (int32_t)(rk_test_rand(&s) % 30);
        int32_t n = 1 + (int32_t)(rk_test_rand(&s) % 8);
        double dens = 0.1 + 0.5 * rk_test_uniform(&s);
        rk_triples t;
        rk_error err;
        CU_ASSERT_FATAL(rk_triples_alloc(&t, (int64_t)nu * ni, 0, &err) == RK_OK);
        t.n = 0;
        for (int32_t u = 0; u < nu; u++)
            for (int32_t i = 0; i < ni; i++)
                if (rk_test_uniform(&s) < dens) {
                    t.user[t.n] = u;
                    t.item[t.n] = i;
                    t.rating[t.n] = (float)(1 + rk_test_rand(&s) % 5);
                    t.n++;
                }
        /* lists: distinct items, any relevance, some users unfed, some short */
        int32_t *lists = malloc((size_t)nu * (size_t)n * sizeof *lists), *lens = calloc((size_t)nu, sizeof *lens);
        int *fed = calloc((size_t)nu, sizeof *fed), *used = malloc((size_t)ni * sizeof *used);
        for (int32_t u = 0; u < nu; u++) {
            fed[u] = rk_test_uniform(&s) < 0.8;
            memset(used, 0, (size_t)ni * sizeof *used);
            int32_t want = (int32_t)(rk_test_rand(&s) % (uint64_t)(n + 1));
            for (int32_t x = 0; x < want && lens[u] < ni; x++) {
                int32_t i = (int32_t)(rk_test_rand(&s) % (uint64_t)ni);
                while (used[i]) i = (i + 1) % ni;
                used[i] = 1;
                lists[(int64_t)u * n + lens[u]++] = i;
            }
        }
        naive want;
        naive_eval(&t, nu, ni, n, 4.0, lists, lens, fed, &want);
        rk_rank *ra, *rb;
        CU_ASSERT_FATAL(rk_rank_new(&ra, &t, nu, ni, n, 4.0, &err) == RK_OK);
        CU_ASSERT_FATAL(rk_rank_new(&rb, &t, nu, ni, n, 4.0, &err) == RK_OK);
        for (int32_t u = nu - 1; u >= 0; u--) /* any order */
            if (fed[u]) rk_rank_add(ra, u, lists + (int64_t)u * n, lens[u]);
        feed_sink(rb, nu, n, lists, lens, fed, 1 + (int64_t)(rk_test_rand(&s) % 5));
        rk_rank_result a, b;
        rk_rank_finish(ra, &a);
        rk_rank_finish(rb, &b);
        CU_ASSERT_EQUAL(a.users, want.users);
        CU_ASSERT_EQUAL(a.users_without_list, want.without);
        CU_ASSERT_DOUBLE_EQUAL(a.precision, want.p, 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(a.recall, want.rc, 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(a.ndcg, want.ndcg, 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(a.mrr, want.rr, 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(a.hit_rate, want.hit, 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(a.gini, want.gini, 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(a.coverage, want.coverage, 1e-12);
        CU_ASSERT(a.ndcg <= 1.0 + 1e-12 && a.recall <= 1.0 + 1e-12);
        /* the sink gives the same numbers (summed in another user order: to rounding) */
        CU_ASSERT_EQUAL(b.users, a.users);
        CU_ASSERT_EQUAL(b.users_without_list, a.users_without_list);
        CU_ASSERT_EQUAL(b.lists, a.lists);
        CU_ASSERT_EQUAL(b.rows, a.rows);
        CU_ASSERT_EQUAL(b.items_recommended, a.items_recommended);
        CU_ASSERT_DOUBLE_EQUAL(b.precision, a.precision, 1e-14);
        CU_ASSERT_DOUBLE_EQUAL(b.recall, a.recall, 1e-14);
        CU_ASSERT_DOUBLE_EQUAL(b.ndcg, a.ndcg, 1e-14);
        CU_ASSERT_DOUBLE_EQUAL(b.mrr, a.mrr, 1e-14);
        CU_ASSERT_DOUBLE_EQUAL(b.gini, a.gini, 0.0);
        CU_ASSERT(memcmp(rk_rank_item_counts(ra), rk_rank_item_counts(rb), (size_t)ni * sizeof(int64_t)) == 0);
        rk_rank_free(ra);
        rk_rank_free(rb);
        free(lists);
        free(lens);
        free(fed);
        free(used);
        rk_triples_free(&t);
    }
}

/* Batches big enough to be read on every core (rk_rank_sink): the same
 * doubles, counts and per-user rows as the lists added one by one in the
 * same order, with cutoffs, repeated and out-of-range items, short and
 * empty lists, users listed twice and users out of range. */
static void test_big_batches(void)
{
    unsigned long long s = 4242;
    const int32_t nu = 30000, ni = 700, n = 10;
    rk_triples t;
    rk_error err;
    CU_ASSERT_FATAL(rk_triples_alloc(&t, (int64_t)nu * 6, 0, &err) == RK_OK);
    t.n = 0;
    for (int32_t u = 0; u < nu; u++)
        for (int k = (int)(rk_test_rand(&s) % 7); k > 0; k--) {
            t.user[t.n] = u;
            t.item[t.n] = (int32_t)(rk_test_rand(&s) % (uint64_t)(u % 3 == 0 ? 20 : ni)); /* some users hit often */
            t.rating[t.n] = (float)(1 + rk_test_rand(&s) % 5);
            t.n++;
        }
    const int64_t m = nu + 3000; /* every user once, 2997 of them twice, three out of range */
    int32_t *bu = malloc((size_t)m * sizeof *bu), *bl = malloc((size_t)m * sizeof *bl);
    int32_t *bi = malloc((size_t)m * (size_t)n * sizeof *bi);
    uint64_t *bs = calloc((size_t)m * (size_t)n, sizeof *bs);
    for (int64_t x = 0; x < m; x++) {
        bu[x] = x < nu ? (int32_t)x : x < m - 3 ? (int32_t)(rk_test_rand(&s) % (uint64_t)nu) : x == m - 1 ? -1 : nu;
        bl[x] = (int32_t)(rk_test_rand(&s) % (uint64_t)(n + 1));
        if (x % 97 == 0) bl[x] = n + 5; /* longer than N: cut to N */
        for (int32_t y = 0; y < n; y++) {
            const uint64_t w = rk_test_rand(&s) % 100;
            bi[x * n + y] = w == 0 ? ni + 3 : w == 1 && y > 0 ? bi[x * n + y - 1] : (int32_t)(rk_test_rand(&s) % 25);
        }
    }
    static const int32_t cut[] = {1, 5, 10};
    const int64_t batches[] = {m, 5000, 4096, 4095};
    rk_rank *ra;
    CU_ASSERT_FATAL(rk_rank_new(&ra, &t, nu, ni, n, 4.0, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_rank_set_cutoffs(ra, cut, 3, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_rank_keep_users(ra, &err) == RK_OK);
    for (int64_t x = 0; x < m; x++) rk_rank_add(ra, bu[x], bi + x * n, bl[x] > n ? n : bl[x]);
    rk_rank_result a;
    rk_rank_finish(ra, &a);
    CU_ASSERT(a.users > 10000 && a.precision > 0.0);
    for (size_t q = 0; q < sizeof batches / sizeof batches[0]; q++) {
        rk_rank *rb;
        CU_ASSERT_FATAL(rk_rank_new(&rb, &t, nu, ni, n, 4.0, &err) == RK_OK);
        CU_ASSERT_FATAL(rk_rank_set_cutoffs(rb, cut, 3, &err) == RK_OK);
        CU_ASSERT_FATAL(rk_rank_keep_users(rb, &err) == RK_OK);
        for (int64_t first = 0; first < m; first += batches[q]) {
            const int64_t cnt = m - first < batches[q] ? m - first : batches[q];
            rk_topn_batch b = {first, cnt, bu + first, n, bl + first, bi + first * n, bs + first * n};
            CU_ASSERT_EQUAL(rk_rank_sink(rb, &b, &err), RK_OK);
        }
        rk_rank_result b;
        rk_rank_finish(rb, &b);
        CU_ASSERT_EQUAL(b.users, a.users);
        CU_ASSERT_EQUAL(b.users_without_list, a.users_without_list);
        CU_ASSERT_EQUAL(b.lists, a.lists);
        CU_ASSERT_EQUAL(b.rows, a.rows);
        CU_ASSERT_EQUAL(b.items_recommended, a.items_recommended);
        CU_ASSERT_EQUAL(b.n_cutoffs, a.n_cutoffs);
        for (int c = 0; c < a.n_cutoffs; c++) /* bit for bit */
            CU_ASSERT(memcmp(&b.at[c], &a.at[c], sizeof a.at[c]) == 0);
        CU_ASSERT(b.gini == a.gini && b.coverage == a.coverage);
        int rows_same = 1;
        for (int32_t u = 0; u < nu; u++) {
            rk_rank_user_row x, y;
            rk_rank_user(ra, u, &x);
            rk_rank_user(rb, u, &y);
            rows_same &= x.listed == y.listed && x.hits == y.hits && x.precision == y.precision &&
                         x.recall == y.recall && x.ndcg == y.ndcg && x.ap == y.ap && x.rr == y.rr;
        }
        CU_ASSERT_TRUE(rows_same);
        rk_rank_free(rb);
    }
    rk_rank_free(ra);
    free(bu);
    free(bl);
    free(bi);
    free(bs);
    rk_triples_free(&t);
}

/* ---- odd input: nothing read out of bounds, bad test data refused ------------------------- */

static void test_odd_lists(void)
{
    rk_triples t;
    rk_rank *r;
    rk_error err;
    rk_rank_result res;
    set_triples(&t, H_U, H_I, H_R, 9);
    CU_ASSERT_FATAL(rk_rank_new(&r, &t, 5, 10, 3, 4.0, &err) == RK_OK);
    const int32_t bad[] = {-1, 10, 1, 1, 2};
    rk_rank_add(r, -1, bad, 3); /* users out of range: ignored */
    rk_rank_add(r, 5, bad, 3);
    rk_rank_finish(r, &res);
    CU_ASSERT_EQUAL(res.lists, 0);
    /* items -1 and 10 hold ranks 1 and 2 and count nowhere; 1 hits at rank 3;
     * the list is cut at N = 3 (the second 1 and the 2 are beyond it) */
    rk_rank_add(r, 0, bad, 5);
    rk_rank_finish(r, &res);
    CU_ASSERT_EQUAL(res.lists, 1);
    CU_ASSERT_EQUAL(res.rows, 3);
    CU_ASSERT_EQUAL(res.items_recommended, 1);
    CU_ASSERT_DOUBLE_EQUAL(res.mrr, (1.0 / 3) / 3, EPS);
    CU_ASSERT_DOUBLE_EQUAL(res.recall, 0.5 / 3, EPS);
    CU_ASSERT_EQUAL(rk_rank_item_counts(r)[1], 1);
    CU_ASSERT_EQUAL(rk_rank_item_counts(r)[2], 0);
    /* an item listed twice is one hit: user 3 (#rel 1), [9, 9]: precision 1/3 not 2/3,
     * recall 1 not 2, NDCG 1; counted twice for Gini */
    const int32_t twice[] = {9, 9};
    rk_rank_add(r, 3, twice, 2);
    rk_rank_add(r, 2, NULL, 2); /* no items: an empty list */
    rk_rank_finish(r, &res);
    CU_ASSERT_DOUBLE_EQUAL(res.precision, (1.0 / 3 + 1.0 / 3 + 0.0) / 3, EPS);
    CU_ASSERT_DOUBLE_EQUAL(res.recall, (0.5 + 1.0 + 0.0) / 3, EPS);
    CU_ASSERT_DOUBLE_EQUAL(res.ndcg, ((1.0 / log2(4.0)) / (1.0 + 1.0 / log2(3.0)) + 1.0) / 3, EPS);
    CU_ASSERT_EQUAL(rk_rank_item_counts(r)[9], 2);
    CU_ASSERT_EQUAL(res.users_without_list, 0);
    rk_rank_free(r);
    rk_triples_free(&t);

    /* a repeated relevant test pair counts once: user 0 with item 1 twice is #rel 1 */
    const int32_t du[] = {0, 0}, di[] = {1, 1};
    const float dr[] = {5.0f, 4.0f};
    set_triples(&t, du, di, dr, 2);
    CU_ASSERT_FATAL(rk_rank_new(&r, &t, 1, 2, 2, 4.0, &err) == RK_OK);
    const int32_t l[] = {1};
    rk_rank_add(r, 0, l, 1);
    rk_rank_finish(r, &res);
    CU_ASSERT_DOUBLE_EQUAL(res.recall, 1.0, EPS);
    CU_ASSERT_DOUBLE_EQUAL(res.ndcg, 1.0, EPS);
    rk_rank_free(r);
    rk_triples_free(&t);
}

/* Cutoffs, MAP and the per-user rows on the hand case's data, with N = 4
 * and cutoffs {1, 3} (N is added):
 *   user 0 (#rel 2): [1, 3, 2] hits at ranks 1 and 3
 *     @1: P 1, R 1/2, NDCG 1/1 = 1, AP 1/min(1,2) · 1 = 1, RR 1
 *     @3: P 2/3, R 1, DCG 1 + 1/2 over ideal 1 + 1/log2 3; AP (1/1 + 2/3) / 2; RR 1
 *     @4: P 2/4, the rest as @3 (the list is shorter than 4)
 *   user 2 (#rel 4): [0, 5, 9, 6] hits at ranks 2 and 4
 *     @1: nothing;  @3: P 1/3, R 1/4, DCG 1/log2 3 over ideal(3), AP (1/2) / 3, RR 1/2
 *     @4: P 2/4, R 2/4, DCG 1/log2 3 + 1/log2 5 over ideal(4), AP (1/2 + 2/4) / 4, RR 1/2
 *   user 3 (#rel 1): no list, zeros; users = 3. */
static void test_cutoffs_map_users(void)
{
    rk_triples t;
    rk_rank *r;
    rk_error err;
    rk_rank_result res;
    set_triples(&t, H_U, H_I, H_R, 9);
    CU_ASSERT_FATAL(rk_rank_new(&r, &t, 5, 10, 4, RK_RANK_RELEVANCE_DEFAULT, &err) == RK_OK);
    const int32_t cut[] = {3, 1, 3};
    CU_ASSERT_EQUAL(rk_rank_set_cutoffs(r, cut, 3, &err), RK_OK);
    CU_ASSERT_EQUAL(rk_rank_keep_users(r, &err), RK_OK);
    const int32_t l0[] = {1, 3, 2}, l2[] = {0, 5, 9, 6};
    rk_rank_add(r, 0, l0, 3);
    rk_rank_add(r, 2, l2, 4);
    rk_rank_finish(r, &res);
    const double i2 = 1 + 1 / log2(3), i3 = i2 + 0.5, i4 = i3 + 1 / log2(5);
    CU_ASSERT_EQUAL(res.n_cutoffs, 3);
    CU_ASSERT_EQUAL(res.at[0].n, 1);
    CU_ASSERT_EQUAL(res.at[1].n, 3);
    CU_ASSERT_EQUAL(res.at[2].n, 4);
    CU_ASSERT(fabs(res.at[0].precision - (1.0 + 0 + 0) / 3) < EPS);
    CU_ASSERT(fabs(res.at[0].ndcg - 1.0 / 3) < EPS);
    CU_ASSERT(fabs(res.at[0].map - 1.0 / 3) < EPS);
    CU_ASSERT(fabs(res.at[1].precision - (2.0 / 3 + 1.0 / 3) / 3) < EPS);
    CU_ASSERT(fabs(res.at[1].recall - (1.0 + 0.25) / 3) < EPS);
    CU_ASSERT(fabs(res.at[1].ndcg - ((1 + 0.5) / i2 + (1 / log2(3)) / i3) / 3) < EPS);
    CU_ASSERT(fabs(res.at[1].map - ((1 + 2.0 / 3) / 2 + 0.5 / 3) / 3) < EPS);
    CU_ASSERT(fabs(res.at[1].mrr - (1 + 0.5) / 3) < EPS);
    CU_ASSERT(fabs(res.at[2].precision - (0.5 + 0.5) / 3) < EPS);
    CU_ASSERT(fabs(res.at[2].ndcg - ((1 + 0.5) / i2 + (1 / log2(3) + 1 / log2(5)) / i4) / 3) < EPS);
    CU_ASSERT(fabs(res.at[2].map - ((1 + 2.0 / 3) / 2 + (0.5 + 0.5) / 4) / 3) < EPS);
    CU_ASSERT(fabs(res.at[2].hit_rate - 2.0 / 3) < EPS);
    /* the main values are those at N */
    CU_ASSERT_EQUAL(res.map, res.at[2].map);
    CU_ASSERT_EQUAL(res.ndcg, res.at[2].ndcg);
    rk_rank_user_row u;
    rk_rank_user(r, 0, &u);
    CU_ASSERT(u.listed && u.hits == 2 && u.relevant == 2);
    CU_ASSERT(fabs(u.ap - (1 + 2.0 / 3) / 2) < EPS);
    rk_rank_user(r, 3, &u);
    CU_ASSERT(!u.listed && u.relevant == 1 && u.ndcg == 0.0);
    rk_rank_user(r, 1, &u);
    CU_ASSERT_EQUAL(u.relevant, 0);
    CU_ASSERT_EQUAL(rk_rank_users(r), 5);
    /* bad cutoffs, and cutoffs after a list */
    const int32_t big[] = {5}, zero[] = {0};
    CU_ASSERT_EQUAL(rk_rank_set_cutoffs(r, big, 1, &err), RK_E_ARG);
    CU_ASSERT_EQUAL(rk_rank_set_cutoffs(r, zero, 1, &err), RK_E_ARG);
    rk_rank_free(r);
    rk_triples_free(&t);
}

static void test_errors(void)
{
    rk_triples t;
    rk_rank *r = (rk_rank *)&t; /* must come back NULL */
    rk_error err;
    set_triples(&t, H_U, H_I, H_R, 9);
    CU_ASSERT_EQUAL(rk_rank_new(&r, &t, 5, 10, 0, 4.0, &err), RK_E_ARG);
    CU_ASSERT(r == NULL);
    CU_ASSERT(strstr(err.msg, "N >= 1") != NULL);
    CU_ASSERT_EQUAL(rk_rank_new(&r, &t, 3, 10, 3, 4.0, &err), RK_E_ARG); /* user 3 is rating 8 */
    CU_ASSERT(strstr(err.msg, "rating 8") != NULL && strstr(err.msg, "user index 3") != NULL);
    CU_ASSERT_EQUAL(rk_rank_new(&r, &t, 4, 10, 3, 4.0, &err), RK_OK); /* users 0..3: fine */
    rk_rank_free(r);
    CU_ASSERT_EQUAL(rk_rank_new(&r, &t, 5, 9, 3, 4.0, &err), RK_E_ARG); /* item 9 is rating 8 */
    CU_ASSERT(strstr(err.msg, "rating 8") != NULL && strstr(err.msg, "item index 9") != NULL);
    t.user[2] = -1;
    CU_ASSERT_EQUAL(rk_rank_new(&r, &t, 5, 10, 3, 4.0, &err), RK_E_ARG);
    CU_ASSERT(strstr(err.msg, "rating 2") != NULL && strstr(err.msg, "-1") != NULL);
    t.user[2] = 0;
    t.item[0] = -3;
    CU_ASSERT_EQUAL(rk_rank_new(&r, &t, 5, 10, 3, 4.0, &err), RK_E_ARG);
    CU_ASSERT(strstr(err.msg, "rating 0") != NULL && strstr(err.msg, "-3") != NULL);
    CU_ASSERT_EQUAL(rk_rank_new(&r, NULL, 5, 10, 3, 4.0, &err), RK_E_ARG);
    CU_ASSERT(r == NULL);
    rk_rank_free(NULL);
    rk_rank_finish(NULL, &(rk_rank_result){0});
    rk_triples_free(&t);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"hand case: short lists, hits at ranks 1 and 3, no list, a second list", test_hand},
        {"perfect lists, #relevant above N, the threshold", test_ideal},
        {"Gini and coverage on hand cases", test_gini},
        {"random lists against a naive evaluator; the sink path", test_random},
        {"big batches read in parallel: the same doubles", test_big_batches},
        {"odd lists: users and items out of range, long lists, repeats", test_odd_lists},
        {"cutoffs, MAP and per-user rows on a hand case", test_cutoffs_map_users},
        {"errors", test_errors},
        {NULL, NULL},
    };
    return rk_test_main("rank", cases);
}
