/* Subset queries on the CPU engine (--items, --users in user mode): the
 * lists of a subset are those of the whole run for its items, the other
 * lists stay empty, for every metric; the items shared out among parts
 * (as ranks and GPUs do), each part with the queries of its items, give the
 * whole run's predictions; bad subsets and queries of items outside the
 * subset are refused. */
#include "test_subset_util.h"

/* every metric of the metric table */
static rk_metric all_metrics[RK_METRIC_COUNT];

static void subset_vs_full(int nu, int ni, double density, int real, rk_metric metric, int k, int n_rows,
                           unsigned long long seed)
{
    rk_model m;
    rk_error err;
    rk_ts_model(&m, nu, ni, density, real, 1, seed);
    rk_knn_opts o;
    rk_knn_opts_default(&o);
    o.sim.metric = metric;
    o.k = k;
    rk_lists full, sub;
    CU_ASSERT_FATAL(rk_lists_alloc(&full, ni, k, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_lists_alloc(&sub, ni, k, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_knn_cpu(&m, &o, &full, NULL, NULL, &err) == RK_OK);
    int32_t *rows = rk_ts_subset(ni, n_rows, seed ^ 0xabcULL);
    o.rows = rows;
    o.n_rows = n_rows;
    rk_knn_stats st;
    CU_ASSERT_FATAL(rk_knn_cpu(&m, &o, &sub, NULL, &st, &err) == RK_OK);
    CU_ASSERT_EQUAL(rk_ts_compare_subset(&full, &sub, rows, n_rows, 0.0f), 0);
    /* the work counted is the subset's: at most the whole run's */
    rk_knn_opts all = o;
    all.rows = NULL;
    int32_t *order = malloc(sizeof(int32_t) * (size_t)ni), n_all = 0, n_sub = 0;
    const int64_t w_all = rk_knn_subset_order(&m, &all, order, NULL, &n_all);
    const int64_t w_sub = rk_knn_subset_order(&m, &o, order, NULL, &n_sub);
    CU_ASSERT_EQUAL(n_all, ni);
    CU_ASSERT_EQUAL(n_sub, n_rows);
    CU_ASSERT(w_sub <= w_all);
    CU_ASSERT_EQUAL(st.pair_updates, w_sub);
    for (int t = 1; t < n_sub; t++) { /* heaviest first */
        int64_t a = 0, b = 0;
        for (int64_t p = m.by_item.ptr[order[t - 1]]; p < m.by_item.ptr[order[t - 1] + 1]; p++)
            a += m.by_user.ptr[m.by_item.idx[p] + 1] - m.by_user.ptr[m.by_item.idx[p]];
        for (int64_t p = m.by_item.ptr[order[t]]; p < m.by_item.ptr[order[t] + 1]; p++)
            b += m.by_user.ptr[m.by_item.idx[p] + 1] - m.by_user.ptr[m.by_item.idx[p]];
        CU_ASSERT(a >= b);
    }
    /* the same order and work from costs given (rk_knn_opts.item_cost), whole and subset */
    int64_t *cost = malloc(sizeof(int64_t) * (size_t)ni), *cost2 = malloc(sizeof(int64_t) * (size_t)ni);
    int32_t *order2 = malloc(sizeof(int32_t) * (size_t)ni), n2 = -1;
    CU_ASSERT_FATAL(cost != NULL && cost2 != NULL && order2 != NULL);
    CU_ASSERT_EQUAL(rk_knn_item_order(&m, order2, cost), w_all);
    rk_knn_opts given = o;
    given.item_cost = cost;
    CU_ASSERT_EQUAL(rk_knn_subset_order(&m, &given, order2, cost2, &n2), w_sub);
    CU_ASSERT_EQUAL(n2, n_sub);
    CU_ASSERT_EQUAL(memcmp(order, order2, sizeof(int32_t) * (size_t)n_sub), 0);
    CU_ASSERT_EQUAL(memcmp(cost, cost2, sizeof(int64_t) * (size_t)ni), 0);
    rk_knn_stats st2;
    CU_ASSERT_FATAL(rk_knn_cpu(&m, &given, &sub, NULL, &st2, &err) == RK_OK); /* the same lists */
    CU_ASSERT_EQUAL(rk_ts_compare_subset(&full, &sub, rows, n_rows, 0.0f), 0);
    CU_ASSERT_EQUAL(st2.pair_updates, w_sub);
    given.rows = NULL;
    CU_ASSERT_EQUAL(rk_knn_subset_order(&m, &given, order2, NULL, &n2), w_all);
    CU_ASSERT_EQUAL(n2, ni);
    CU_ASSERT_EQUAL(rk_knn_subset_order(&m, &all, order, NULL, &n_all), w_all);
    CU_ASSERT_EQUAL(memcmp(order, order2, sizeof(int32_t) * (size_t)ni), 0);
    free(cost);
    free(cost2);
    free(order2);
    free(order);
    free(rows);
    rk_lists_free(&full);
    rk_lists_free(&sub);
    rk_model_free(&m);
}

static void test_every_metric(void)
{
    for (size_t x = 0; x < (size_t)rk_test_metrics(-1, all_metrics); x++) {
        subset_vs_full(80, 60, 0.15, 0, all_metrics[x], 10, 7, 100 + x);
        subset_vs_full(60, 40, 0.2, 1, all_metrics[x], 5, 1, 200 + x);
        subset_vs_full(50, 30, 0.3, 0, all_metrics[x], 50, 29, 300 + x); /* k above the item count */
    }
}

/* The items shared out among `parts` parts by LPT-like round robin over a
 * random order, each part computing its rows and its items' queries: every
 * list and every prediction equal the whole run's, bit for bit. */
static void parts_vs_full(int nu, int ni, double density, rk_metric metric, rk_predict_mode mode, int k, int parts,
                          unsigned long long seed)
{
    rk_model m;
    rk_error err;
    rk_ts_model(&m, nu, ni, density, 0, 1, seed);
    rk_knn_opts o;
    rk_knn_opts_default(&o);
    o.sim.metric = metric;
    o.mode = mode;
    o.k = k;
    if (rk_knn_needs_baselines(&o)) rk_model_baselines(&m);
    /* queries: every (user, item) pair of a random sample, unknown ids included */
    const int64_t nq = 3 * (int64_t)ni;
    int32_t *qu = malloc(sizeof(int32_t) * (size_t)nq), *qi = malloc(sizeof(int32_t) * (size_t)nq);
    int32_t *used = malloc(sizeof(int32_t) * (size_t)nq), *used_p = malloc(sizeof(int32_t) * (size_t)nq);
    double *pred = malloc(sizeof(double) * (size_t)nq), *pred_p = malloc(sizeof(double) * (size_t)nq);
    unsigned long long x = seed * 2654435761ULL + 1;
    for (int64_t t = 0; t < nq; t++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        qu[t] = (int32_t)((x >> 33) % (unsigned long long)(nu + 2)); /* nu, nu + 1: unknown */
        qi[t] = (int32_t)((x >> 13) % (unsigned long long)ni);
    }
    rk_lists full, part;
    CU_ASSERT_FATAL(rk_lists_alloc(&full, ni, k, &err) == RK_OK);
    rk_queries q = {nq, qu, qi, pred, used, NULL, NULL};
    CU_ASSERT_FATAL(rk_knn_cpu(&m, &o, &full, &q, NULL, &err) == RK_OK);
    int32_t *perm = rk_ts_subset(ni, ni, seed ^ 0x5eedULL), *owner = malloc(sizeof(int32_t) * (size_t)ni);
    for (int32_t t = 0; t < ni; t++) owner[perm[t]] = t % parts;
    for (int p = 0; p < parts; p++) {
        int32_t *rows = malloc(sizeof(int32_t) * (size_t)ni), n_rows = 0;
        for (int32_t i = 0; i < ni; i++)
            if (owner[i] == p) rows[n_rows++] = i;
        int32_t *pu = malloc(sizeof(int32_t) * (size_t)nq), *pi = malloc(sizeof(int32_t) * (size_t)nq);
        int64_t *at = malloc(sizeof(int64_t) * (size_t)nq), n = 0;
        for (int64_t t = 0; t < nq; t++)
            if (owner[qi[t]] == p) {
                pu[n] = qu[t];
                pi[n] = qi[t];
                at[n++] = t;
            }
        double *pp = malloc(sizeof(double) * (size_t)(n + 1));
        int32_t *uu = malloc(sizeof(int32_t) * (size_t)(n + 1));
        rk_queries pq = {n, pu, pi, pp, uu, NULL, NULL};
        o.rows = rows;
        o.n_rows = n_rows;
        CU_ASSERT_FATAL(rk_lists_alloc(&part, ni, k, &err) == RK_OK);
        CU_ASSERT_FATAL(rk_knn_cpu(&m, &o, &part, &pq, NULL, &err) == RK_OK);
        CU_ASSERT_EQUAL(rk_ts_compare_subset(&full, &part, rows, n_rows, 0.0f), 0);
        for (int64_t t = 0; t < n; t++) {
            pred_p[at[t]] = pp[t];
            used_p[at[t]] = uu[t];
        }
        rk_lists_free(&part);
        free(rows);
        free(pu);
        free(pi);
        free(at);
        free(pp);
        free(uu);
    }
    CU_ASSERT_EQUAL(memcmp(pred, pred_p, sizeof(double) * (size_t)nq), 0);
    CU_ASSERT_EQUAL(memcmp(used, used_p, sizeof(int32_t) * (size_t)nq), 0);
    o.rows = NULL;
    free(perm);
    free(owner);
    free(qu);
    free(qi);
    free(used);
    free(used_p);
    free(pred);
    free(pred_p);
    rk_lists_free(&full);
    rk_model_free(&m);
}

static void test_parts(void)
{
    parts_vs_full(70, 50, 0.15, RK_METRIC_PEARSON, RK_PREDICT_MEANS, 10, 3, 11);
    parts_vs_full(60, 45, 0.2, RK_METRIC_PEARSON_BASELINE, RK_PREDICT_BASELINE, 5, 2, 12);
    parts_vs_full(50, 30, 0.25, RK_METRIC_COSINE, RK_PREDICT_BASIC, 40, 4, 13); /* k above the item count */
    parts_vs_full(40, 1, 0.5, RK_METRIC_MSD, RK_PREDICT_MEANS, 3, 2, 14);        /* one item: a part without rows */
}

static void test_edges(void)
{
    subset_vs_full(10, 1, 0.5, 0, RK_METRIC_PEARSON, 3, 1, 1); /* one item */
    subset_vs_full(20, 30, 0.2, 0, RK_METRIC_JACCARD, 4, 0, 2); /* an empty subset */
    subset_vs_full(40, 25, 0.2, 0, RK_METRIC_COSINE, 4, 25, 3); /* every item, in random order */
}

static void test_refused(void)
{
    rk_model m;
    rk_error err;
    rk_ts_model(&m, 30, 20, 0.3, 0, 0, 9);
    rk_knn_opts o;
    rk_knn_opts_default(&o);
    rk_lists l;
    CU_ASSERT_FATAL(rk_lists_alloc(&l, 20, o.k, &err) == RK_OK);
    int32_t rep[] = {3, 5, 3}, out[] = {2, 20}, neg[] = {-1}, ok[] = {4};
    o.rows = rep;
    o.n_rows = 3;
    CU_ASSERT_EQUAL(rk_knn_cpu(&m, &o, &l, NULL, NULL, &err), RK_E_ARG);
    CU_ASSERT(strstr(err.msg, "repeated") != NULL);
    o.rows = out;
    o.n_rows = 2;
    CU_ASSERT_EQUAL(rk_knn_cpu(&m, &o, &l, NULL, NULL, &err), RK_E_ARG);
    o.rows = neg;
    o.n_rows = 1;
    CU_ASSERT_EQUAL(rk_knn_cpu(&m, &o, &l, NULL, NULL, &err), RK_E_ARG);
    o.rows = ok;
    o.n_rows = 1;
    /* a query of a known user and an item outside the subset */
    int32_t qu[] = {-1}, qi[] = {-1}, used[1];
    for (int32_t i = 0; i < 20 && qu[0] < 0; i++)
        if (i != 4 && rk_model_item_known(&m, i) && m.by_item.ptr[i + 1] > m.by_item.ptr[i]) {
            qi[0] = i;
            qu[0] = m.by_item.idx[m.by_item.ptr[i]];
        }
    CU_ASSERT_FATAL(qu[0] >= 0);
    double pred[1];
    rk_queries q = {1, qu, qi, pred, used, NULL, NULL};
    CU_ASSERT_EQUAL(rk_knn_cpu(&m, &o, &l, &q, NULL, &err), RK_E_ARG);
    CU_ASSERT(strstr(err.msg, "not among the subset") != NULL);
    /* an unknown user's query needs no row: answered by the fallback */
    qu[0] = 30 + 5;
    CU_ASSERT_EQUAL(rk_knn_cpu(&m, &o, &l, &q, NULL, &err), RK_OK);
    CU_ASSERT_EQUAL(used[0], 0);
    CU_ASSERT_EQUAL(rk_knn_cpu(&m, &o, &l, NULL, NULL, &err), RK_OK);
    rk_lists_free(&l);
    rk_model_free(&m);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"a subset's lists are the whole run's", test_every_metric},
        {"edge cases", test_edges},
        {"items shared out with their queries give the whole run's results", test_parts},
        {"bad subsets and queries outside the subset are refused", test_refused},
        {NULL, NULL},
    };
    return rk_test_main("subset", cases);
}
