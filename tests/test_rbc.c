/* The random ball cover (rk_rbc) against the exact engine rk_knn_cpu and
 * against counts made here from the data: every ball visited gives the exact
 * lists; approximate entries carry the exact similarities; the pair counts
 * follow their formula; recall against hand-made lists; threads change
 * nothing; edge cases. */
#include "rk_rbc.h"
#include "rk_knn.h"
#include "rk_model.h"
#include "test_rbc_util.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static const rk_metric full_metrics[] = {RK_METRIC_COSINE_FULL, RK_METRIC_EUCLIDEAN_FULL, RK_METRIC_JACCARD};

static void build(rk_model *m, int nu, int ni, int groups, double density, rbc_val_kind vk, unsigned long long seed)
{
    rk_triples t;
    rbc_make_data(&t, nu, ni, groups, density, vk, seed);
    CU_ASSERT_FATAL(rk_model_build(m, &t, nu, ni, 0, 0, 0, 0, NULL) == RK_OK);
    rk_triples_free(&t);
}

static void opts(rk_knn_opts *o, rk_metric metric, int k, int min_support, double shrink)
{
    rk_knn_opts_default(o);
    o->sim.metric = metric;
    o->k = k;
    o->sim.min_support = min_support;
    o->sim.shrinkage = shrink;
}

static int32_t deg(const rk_model *m, int32_t i) { return (int32_t)(m->by_item.ptr[i + 1] - m->by_item.ptr[i]); }

/* 1 when items a and b share a rater (a merge of the sorted rows). */
static int share(const rk_model *m, int32_t a, int32_t b)
{
    const rk_csr *I = &m->by_item;
    int64_t p = I->ptr[a], q = I->ptr[b];
    while (p < I->ptr[a + 1] && q < I->ptr[b + 1]) {
        if (I->idx[p] == I->idx[q]) return 1;
        if (I->idx[p] < I->idx[q]) p++; else q++;
    }
    return 0;
}

/* P >= R visits every ball: rk_knn_cpu's lists, entry for entry. */
static void test_every_ball_is_exact(void)
{
    static const rbc_val_kind kinds[] = {RBC_VAL_IMPLICIT, RBC_VAL_HALF, RBC_VAL_REAL, RBC_VAL_TIES};
    int runs = 0;
    for (int mi = 0; mi < 3; mi++)
        for (int vi = 0; vi < 4; vi++)
            for (int variant = 0; variant < 4; variant++) {
                const unsigned long long seed = 1000 + 97 * (unsigned long long)(mi * 16 + vi * 4 + variant);
                const int nu = 30 + 7 * variant, ni = 40 + 11 * vi;
                rk_model m;
                build(&m, nu, ni, 1 + variant, 0.25, kinds[vi], seed);
                rk_knn_opts o;
                opts(&o, full_metrics[mi], variant == 3 ? 60 : 5, variant == 1 ? 2 : 1, variant == 2 ? 3.0 : 0.0);
                rk_lists le, la;
                CU_ASSERT_FATAL(rk_lists_alloc(&le, ni, o.k, NULL) == RK_OK);
                CU_ASSERT_FATAL(rk_lists_alloc(&la, ni, o.k, NULL) == RK_OK);
                CU_ASSERT_FATAL(rk_knn_cpu(&m, &o, &le, NULL, NULL, NULL) == RK_OK);
                rk_rbc_opts r;
                rk_rbc_opts_default(&r);
                r.seed = seed;
                r.tail = variant % 3;                     /* 0, 1 and 2 */
                r.reps = variant == 3 ? ni : 3 + variant; /* every item a representative, or a few */
                r.probes = INT32_MAX;
                rk_rbc_stats st;
                CU_ASSERT_FATAL(rk_rbc_cpu(&m, &o, &r, &la, &st, NULL) == RK_OK);
                CU_ASSERT(rbc_lists_equal(&la, &le, rk_metric_name(o.sim.metric)));
                CU_ASSERT_EQUAL(st.probes, st.reps);
                runs++;
                rk_lists_free(&le);
                rk_lists_free(&la);
                rk_model_free(&m);
            }
    CU_ASSERT_EQUAL(runs, 48);
}

/* Every entry of an approximate list is the exact pair's (similarity and
 * support, from rk_knn_cpu's lists of every neighbour), the order is that of
 * CONTRACT.md §3, and nothing repeats. */
static void test_entries_are_exact(void)
{
    for (int mi = 0; mi < 3; mi++) {
        const int nu = 80, ni = 120;
        rk_model m;
        build(&m, nu, ni, 4, 0.3, RBC_VAL_HALF, 77 + (unsigned long long)mi);
        rk_knn_opts o, oall;
        opts(&o, full_metrics[mi], 6, 1, 0.0);
        opts(&oall, full_metrics[mi], ni, 1, 0.0);
        rk_lists all, la;
        CU_ASSERT_FATAL(rk_lists_alloc(&all, ni, ni, NULL) == RK_OK);
        CU_ASSERT_FATAL(rk_lists_alloc(&la, ni, o.k, NULL) == RK_OK);
        CU_ASSERT_FATAL(rk_knn_cpu(&m, &oall, &all, NULL, NULL, NULL) == RK_OK);
        rk_rbc_opts r;
        rk_rbc_opts_default(&r);
        r.reps = 6;
        r.probes = 1;
        rk_rbc_stats st;
        CU_ASSERT_FATAL(rk_rbc_cpu(&m, &o, &r, &la, &st, NULL) == RK_OK);
        CU_ASSERT(st.pair_evals < st.brute_pairs);
        int64_t differ = 0;
        for (int32_t i = 0; i < ni; i++) {
            for (int32_t t = 0; t < la.len[i]; t++) {
                const size_t at = (size_t)i * (size_t)o.k + (size_t)t;
                const int32_t j = la.nbr[at];
                CU_ASSERT(j != i && la.sim[at] > 0.0f);
                if (t > 0) {
                    const float prev = la.sim[at - 1];
                    CU_ASSERT(prev > la.sim[at] || (prev == la.sim[at] && la.nbr[at - 1] < j));
                }
                int found = 0;
                for (int32_t e = 0; e < all.len[i]; e++) {
                    const size_t ae = (size_t)i * (size_t)ni + (size_t)e;
                    if (all.nbr[ae] != j) continue;
                    found = 1;
                    CU_ASSERT(all.sim[ae] == la.sim[at]);
                    CU_ASSERT_EQUAL(all.support[ae], la.support[at]);
                }
                CU_ASSERT(found);
            }
            /* the lists may differ from the exact top 6 (that is the approximation) */
            const int32_t n_ex = all.len[i] < o.k ? all.len[i] : o.k;
            for (int32_t t = 0; t < n_ex && t < la.len[i]; t++)
                differ += la.nbr[(size_t)i * (size_t)o.k + (size_t)t] != all.nbr[(size_t)i * (size_t)ni + (size_t)t];
        }
        (void)differ;
        rk_lists_free(&all);
        rk_lists_free(&la);
        rk_model_free(&m);
    }
}

/* Every item above the tail a representative: each is its own ball's only
 * member (nearness 1 to itself, below 1 to any other with real values).
 * With every ball visited the ball pass meets every other placed item; with
 * P = 1 none.  The pairs through raters are counted here from the data. */
static void test_pair_counts(void)
{
    const int nu = 40, ni = 60;
    rk_model m;
    build(&m, nu, ni, 3, 0.2, RBC_VAL_REAL, 4242);
    rk_knn_opts o;
    opts(&o, RK_METRIC_COSINE_FULL, 8, 1, 0.0);
    const int32_t T = 2;
    int64_t placed = 0, tail = 0, live = 0, through = 0;
    for (int32_t i = 0; i < ni; i++) {
        live += deg(&m, i) > 0;
        placed += deg(&m, i) > T;
        tail += deg(&m, i) > 0 && deg(&m, i) <= T;
    }
    for (int32_t i = 0; i < ni; i++) {
        if (deg(&m, i) == 0) continue;
        for (int32_t j = 0; j < ni; j++)
            if (j != i && share(&m, i, j) && (deg(&m, i) <= T || deg(&m, j) <= T)) through++;
    }
    CU_ASSERT_FATAL(tail > 0 && placed > 3);
    rk_lists la;
    CU_ASSERT_FATAL(rk_lists_alloc(&la, ni, o.k, NULL) == RK_OK);
    for (int every = 0; every < 2; every++) {
        rk_rbc_opts r;
        rk_rbc_opts_default(&r);
        r.tail = T;
        r.reps = ni;
        r.probes = every ? ni : 1;
        rk_rbc_stats st;
        CU_ASSERT_FATAL(rk_rbc_cpu(&m, &o, &r, &la, &st, NULL) == RK_OK);
        CU_ASSERT_EQUAL(st.reps, placed);
        CU_ASSERT_EQUAL(st.tail, T);
        CU_ASSERT_EQUAL(st.queries, live);
        CU_ASSERT_EQUAL(st.tail_items, tail);
        CU_ASSERT_EQUAL(st.orphans, 0);
        CU_ASSERT_EQUAL(st.largest_ball, 1);
        CU_ASSERT_EQUAL(st.rep_pairs, placed * placed);
        CU_ASSERT_EQUAL(st.ball_pairs, every ? placed * (placed - 1) : 0);
        CU_ASSERT_EQUAL(st.rater_pairs, through);
        CU_ASSERT_EQUAL(st.pair_evals, st.rep_pairs + st.ball_pairs + st.rater_pairs);
        CU_ASSERT_EQUAL(st.brute_pairs, (int64_t)ni * (ni - 1));
        CU_ASSERT(st.entry_reads > 0);
        if (!every) /* only the tail is met beside the own ball */
            for (int32_t i = 0; i < ni; i++)
                if (deg(&m, i) > T)
                    for (int32_t t = 0; t < la.len[i]; t++) CU_ASSERT(deg(&m, la.nbr[(size_t)i * (size_t)o.k + (size_t)t]) <= T);
    }
    rk_lists_free(&la);
    rk_model_free(&m);
}

/* Hand-made lists: item 0 finds 1 of its 2, item 1 none of its 1, item 2
 * has no exact neighbour (not evaluated), item 3 finds both. */
static void test_recall_by_hand(void)
{
    rk_lists ex, ap;
    CU_ASSERT_FATAL(rk_lists_alloc(&ex, 4, 3, NULL) == RK_OK);
    CU_ASSERT_FATAL(rk_lists_alloc(&ap, 4, 3, NULL) == RK_OK);
    const int32_t exn[4][2] = {{1, 2}, {0, -1}, {-1, -1}, {0, 1}}, exl[4] = {2, 1, 0, 2};
    const int32_t apn[4][3] = {{2, 3, -1}, {2, -1, -1}, {0, -1, -1}, {1, 0, 2}}, apl[4] = {2, 1, 1, 3};
    for (int i = 0; i < 4; i++) {
        ex.len[i] = exl[i];
        ap.len[i] = apl[i];
        for (int t = 0; t < exl[i]; t++) ex.nbr[i * 3 + t] = exn[i][t];
        for (int t = 0; t < apl[i]; t++) ap.nbr[i * 3 + t] = apn[i][t];
    }
    rk_rbc_recall_result rr;
    rk_rbc_recall_of(&ap, &ex, NULL, 0, &rr);
    CU_ASSERT_EQUAL(rr.sampled, 4);
    CU_ASSERT_EQUAL(rr.evaluated, 3);
    CU_ASSERT_EQUAL(rr.hits, 3);
    CU_ASSERT_EQUAL(rr.exact_entries, 5);
    CU_ASSERT(fabs(rr.recall - (0.5 + 0.0 + 1.0) / 3.0) < 1e-15);
    const int32_t some[2] = {1, 3};
    rk_rbc_recall_of(&ap, &ex, some, 2, &rr);
    CU_ASSERT_EQUAL(rr.sampled, 2);
    CU_ASSERT_EQUAL(rr.evaluated, 2);
    CU_ASSERT_EQUAL(rr.hits, 2);
    CU_ASSERT(fabs(rr.recall - 0.5) < 1e-15);
    rk_rbc_recall_of(&ex, &ex, NULL, 0, &rr);
    CU_ASSERT(rr.recall == 1.0 && rr.hits == rr.exact_entries);
    rk_lists_free(&ex);
    rk_lists_free(&ap);
}

/* rk_rbc_recall's own exact lists are rk_knn_cpu's: over every item it
 * agrees with rk_rbc_recall_of against them; a sample is as asked and the
 * same for the same seed. */
static void test_recall_against_engine(void)
{
    for (int mi = 0; mi < 3; mi++) {
        const int nu = 60, ni = 90;
        rk_model m;
        build(&m, nu, ni, 3, 0.25, mi == 1 ? RBC_VAL_REAL : RBC_VAL_IMPLICIT, 5150 + (unsigned long long)mi);
        rk_knn_opts o;
        opts(&o, full_metrics[mi], 7, 1, mi == 2 ? 2.0 : 0.0);
        rk_lists le, la;
        CU_ASSERT_FATAL(rk_lists_alloc(&le, ni, o.k, NULL) == RK_OK);
        CU_ASSERT_FATAL(rk_lists_alloc(&la, ni, o.k, NULL) == RK_OK);
        CU_ASSERT_FATAL(rk_knn_cpu(&m, &o, &le, NULL, NULL, NULL) == RK_OK);
        rk_rbc_opts r;
        rk_rbc_opts_default(&r);
        r.reps = 4;
        r.probes = 1;
        r.tail = 0;
        CU_ASSERT_FATAL(rk_rbc_cpu(&m, &o, &r, &la, NULL, NULL) == RK_OK);
        rk_rbc_recall_result a, b, c, d;
        CU_ASSERT_FATAL(rk_rbc_recall(&m, &o, &la, ni + 5, 1, 0, &a, NULL) == RK_OK);
        rk_rbc_recall_of(&la, &le, NULL, 0, &b);
        CU_ASSERT_EQUAL(a.sampled, ni);
        CU_ASSERT_EQUAL(a.evaluated, b.evaluated);
        CU_ASSERT_EQUAL(a.hits, b.hits);
        CU_ASSERT_EQUAL(a.exact_entries, b.exact_entries);
        CU_ASSERT(a.recall == b.recall);
        CU_ASSERT(a.recall_ties >= a.recall && a.recall_ties <= 1.0);
        CU_ASSERT_FATAL(rk_rbc_recall(&m, &o, &le, ni, 1, 0, &a, NULL) == RK_OK);
        CU_ASSERT(a.recall == 1.0 && a.hits == a.exact_entries && a.evaluated > 0);
        CU_ASSERT_FATAL(rk_rbc_recall(&m, &o, &la, 11, 9, 1, &c, NULL) == RK_OK);
        CU_ASSERT_FATAL(rk_rbc_recall(&m, &o, &la, 11, 9, 3, &d, NULL) == RK_OK);
        CU_ASSERT_EQUAL(c.sampled, 11);
        CU_ASSERT(c.evaluated <= 11 && c.evaluated == d.evaluated && c.hits == d.hits && c.recall == d.recall);
        rk_lists_free(&le);
        rk_lists_free(&la);
        rk_model_free(&m);
    }
}

/* The thread count changes neither the lists nor the counts. */
static void test_threads(void)
{
    const int nu = 150, ni = 400;
    rk_model m;
    build(&m, nu, ni, 5, 0.1, RBC_VAL_TIES, 31337);
    rk_knn_opts o;
    opts(&o, RK_METRIC_JACCARD, 10, 1, 0.0);
    rk_lists l1, l3;
    CU_ASSERT_FATAL(rk_lists_alloc(&l1, ni, o.k, NULL) == RK_OK);
    CU_ASSERT_FATAL(rk_lists_alloc(&l3, ni, o.k, NULL) == RK_OK);
    rk_rbc_opts r;
    rk_rbc_opts_default(&r);
    r.seed = 7;
    r.probes = 2;
    rk_rbc_stats s1, s3;
    r.threads = 1;
    CU_ASSERT_FATAL(rk_rbc_cpu(&m, &o, &r, &l1, &s1, NULL) == RK_OK);
    r.threads = 3;
    CU_ASSERT_FATAL(rk_rbc_cpu(&m, &o, &r, &l3, &s3, NULL) == RK_OK);
    CU_ASSERT(rbc_lists_equal(&l1, &l3, "threads"));
    CU_ASSERT_EQUAL(s1.pair_evals, s3.pair_evals);
    CU_ASSERT_EQUAL(s1.entry_reads, s3.entry_reads);
    CU_ASSERT_EQUAL(s1.orphans, s3.orphans);
    CU_ASSERT_EQUAL(s1.largest_ball, s3.largest_ball);
    rk_lists_free(&l1);
    rk_lists_free(&l3);
    rk_model_free(&m);
}

/* The draw: R distinct items above the tail, ascending, the same for a
 * seed; another seed or the uniform draw picks others. */
static void test_draw(void)
{
    const int nu = 60, ni = 200;
    rk_model m;
    build(&m, nu, ni, 2, 0.1, RBC_VAL_IMPLICIT, 99);
    int32_t a[20], b[20], c[20], d[20];
    CU_ASSERT_FATAL(rk_rbc_draw_reps(&m, 20, 2, 5, RK_RBC_DRAW_RATERS, a, NULL) == RK_OK);
    CU_ASSERT_FATAL(rk_rbc_draw_reps(&m, 20, 2, 5, RK_RBC_DRAW_RATERS, b, NULL) == RK_OK);
    CU_ASSERT_FATAL(rk_rbc_draw_reps(&m, 20, 2, 6, RK_RBC_DRAW_RATERS, c, NULL) == RK_OK);
    CU_ASSERT_FATAL(rk_rbc_draw_reps(&m, 20, 2, 5, RK_RBC_DRAW_UNIFORM, d, NULL) == RK_OK);
    CU_ASSERT(memcmp(a, b, sizeof a) == 0);
    CU_ASSERT(memcmp(a, c, sizeof a) != 0);
    CU_ASSERT(memcmp(a, d, sizeof a) != 0);
    for (int t = 0; t < 20; t++) {
        CU_ASSERT(deg(&m, a[t]) > 2 && deg(&m, c[t]) > 2 && deg(&m, d[t]) > 2);
        if (t > 0) CU_ASSERT(a[t - 1] < a[t] && c[t - 1] < c[t] && d[t - 1] < d[t]);
    }
    int32_t R, P, T;
    int64_t placed;
    rk_rbc_opts r;
    rk_rbc_opts_default(&r);
    rk_rbc_resolve(&m, &r, &R, &P, &T, &placed);
    CU_ASSERT_EQUAL(T, RK_RBC_DEFAULT_TAIL);
    CU_ASSERT_EQUAL(P, R < RK_RBC_DEFAULT_PROBES ? R : RK_RBC_DEFAULT_PROBES);
    CU_ASSERT_EQUAL(R, rk_rbc_default_reps(placed));
    CU_ASSERT_EQUAL(rk_rbc_default_reps(48), 2);
    CU_ASSERT_EQUAL(rk_rbc_default_reps(49), 3);
    CU_ASSERT_EQUAL(rk_rbc_default_reps(1), 1);
    CU_ASSERT_EQUAL(rk_rbc_default_reps(0), 0);
    CU_ASSERT(rk_rbc_draw_reps(&m, (int32_t)placed + 1, 2, 5, RK_RBC_DRAW_RATERS, a, NULL) == RK_E_ARG);
    rk_model_free(&m);
}

/* One item; k above the item count; every item in the tail (no ball: the
 * exact lists through raters); empty items; the refusals. */
static void test_edges(void)
{
    rk_error err;
    rk_triples t;
    rk_model m;
    CU_ASSERT_FATAL(rk_triples_alloc(&t, 3, 0, NULL) == RK_OK);
    for (int u = 0; u < 3; u++) {
        t.user[u] = u;
        t.item[u] = 0;
        t.rating[u] = 1.0f;
    }
    t.n = 3;
    CU_ASSERT_FATAL(rk_model_build(&m, &t, 3, 1, 0, 0, 0, 0, NULL) == RK_OK);
    rk_triples_free(&t);
    rk_knn_opts o;
    opts(&o, RK_METRIC_COSINE_FULL, 4, 1, 0.0);
    rk_lists l;
    CU_ASSERT_FATAL(rk_lists_alloc(&l, 1, 4, NULL) == RK_OK);
    rk_rbc_opts r;
    rk_rbc_opts_default(&r);
    rk_rbc_stats st;
    CU_ASSERT(rk_rbc_cpu(&m, &o, &r, &l, &st, NULL) == RK_OK);
    CU_ASSERT_EQUAL(l.len[0], 0);
    CU_ASSERT_EQUAL(st.reps, 1);
    CU_ASSERT_EQUAL(st.brute_pairs, 0);
    CU_ASSERT_EQUAL(st.ball_pairs, 0);
    r.tail = 5; /* the only item in the tail: no representative at all */
    CU_ASSERT(rk_rbc_cpu(&m, &o, &r, &l, &st, NULL) == RK_OK);
    CU_ASSERT(st.reps == 0 && st.tail_items == 1 && l.len[0] == 0);
    /* refusals */
    r.tail = -1;
    opts(&o, RK_METRIC_COSINE, 4, 1, 0.0);
    CU_ASSERT(rk_rbc_cpu(&m, &o, &r, &l, NULL, &err) == RK_E_ARG);
    CU_ASSERT(strstr(err.msg, "full-vector") != NULL);
    opts(&o, RK_METRIC_JACCARD, 4, 1, 0.0);
    r.reps = -1;
    CU_ASSERT(rk_rbc_cpu(&m, &o, &r, &l, NULL, &err) == RK_E_ARG);
    r.reps = 0;
    r.tail = -2;
    CU_ASSERT(rk_rbc_cpu(&m, &o, &r, &l, NULL, &err) == RK_E_ARG);
    r.tail = -1;
    CU_ASSERT(rk_rbc_cpu(&m, &o, &r, NULL, NULL, &err) == RK_E_ARG);
    o.k = 3; /* lists of capacity 4 */
    CU_ASSERT(rk_rbc_cpu(&m, &o, &r, &l, NULL, &err) == RK_E_ARG);
    rk_rbc_recall_result rr;
    CU_ASSERT(rk_rbc_recall(&m, &o, &l, 5, 1, 0, &rr, &err) == RK_E_ARG);
    rk_lists_free(&l);
    rk_model_free(&m);

    /* k above the item count, items with one rater, an empty item, the
     * default tail and a tail of 0: the exact lists when every ball is visited,
     * and with few probes nothing that could not be */
    for (int tail = 0; tail <= 2; tail += 2)
        for (int mi = 0; mi < 3; mi++) {
            build(&m, 12, 9, 2, 0.3, RBC_VAL_IMPLICIT, 600 + (unsigned long long)(tail * 3 + mi));
            opts(&o, full_metrics[mi], 20, 1, 0.0);
            rk_lists le, la;
            CU_ASSERT_FATAL(rk_lists_alloc(&le, 9, 20, NULL) == RK_OK);
            CU_ASSERT_FATAL(rk_lists_alloc(&la, 9, 20, NULL) == RK_OK);
            CU_ASSERT_FATAL(rk_knn_cpu(&m, &o, &le, NULL, NULL, NULL) == RK_OK);
            rk_rbc_opts_default(&r);
            r.tail = tail;
            r.probes = 1000;
            CU_ASSERT_FATAL(rk_rbc_cpu(&m, &o, &r, &la, &st, NULL) == RK_OK);
            CU_ASSERT(rbc_lists_equal(&la, &le, "small"));
            CU_ASSERT_EQUAL(la.len[8], 0); /* the empty item */
            int64_t live = 0;
            for (int32_t i = 0; i < 9; i++) live += deg(&m, i) > 0;
            CU_ASSERT_EQUAL(st.queries, live);
            r.probes = 1;
            CU_ASSERT_FATAL(rk_rbc_cpu(&m, &o, &r, &la, &st, NULL) == RK_OK);
            for (int32_t i = 0; i < 9; i++) CU_ASSERT(la.len[i] <= le.len[i]);
            rk_lists_free(&le);
            rk_lists_free(&la);
            rk_model_free(&m);
        }
}

static void test_recall_fixed_seed(void)
{
    rk_rbc_recall_result a, b;
    rbc_recall_fixed(RK_METRIC_COSINE_FULL, 0, &a);
    rbc_recall_fixed(RK_METRIC_JACCARD, 0, &b);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"every ball visited: rk_knn_cpu's lists", test_every_ball_is_exact},
        {"approximate entries carry exact similarities", test_entries_are_exact},
        {"pair evaluations follow their formula", test_pair_counts},
        {"recall of hand-made lists", test_recall_by_hand},
        {"rk_rbc_recall's exact lists are rk_knn_cpu's", test_recall_against_engine},
        {"threads change nothing", test_threads},
        {"the draw of the representatives", test_draw},
        {"edge cases and refusals", test_edges},
        {"recall on a fixed seed", test_recall_fixed_seed},
        {NULL, NULL}};
    return rk_test_main("rbc", cases);
}
