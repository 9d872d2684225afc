/* Several parts of one process sharing one symmetric tile (rk_gpu_sym), each
 * on a thread of its own, all on device 0: their lists and predictions put
 * together are one GPU's (bit for bit on a rating grid, within rounding with
 * real values), for every metric the GPU sums symmetrically, two and three
 * parts, several column chunks; a part without room for the whole tile makes
 * every part sum full rows; a part that fails before the decision leaves the
 * others in full rows, one that fails after its sums ends the others' calls
 * (RK_E_GPU), and nobody waits for ever.  The upper-triangle costs
 * (rk_knn_item_sym_cost) against a count.  Exits 77 (skipped) when no GPU
 * is usable. */
#define _POSIX_C_SOURCE 200809L
#include "test_gpu_main.h"
#include "rk_gpu.h"
#include "test_subset_util.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARTS 3

typedef struct call {
    const rk_model *m;
    rk_knn_opts o;
    rk_gpu_opts g;
    rk_lists lists;
    rk_queries q;
    rk_knn_stats st;
    rk_error err;
    rk_status s;
} call;

static void *run_call(void *arg)
{
    call *c = arg;
    c->s = rk_gpu_knn(c->m, &c->o, &c->g, &c->lists, c->q.n > 0 ? &c->q : NULL, NULL, NULL, &c->st, &c->err);
    return NULL;
}

/* The queries of the items of part w (part_of; w < 0: all). */
static void part_queries(rk_queries *q, const int32_t *qu, const int32_t *qi, int64_t nq, const int32_t *part_of,
                         int w)
{
    int64_t n = 0;
    for (int64_t t = 0; t < nq; t++) n += w < 0 || part_of[qi[t]] == w;
    int32_t *user = malloc(sizeof(int32_t) * (size_t)(n + 1)), *item = malloc(sizeof(int32_t) * (size_t)(n + 1));
    q->n = n;
    q->pred = malloc(sizeof(double) * (size_t)(n + 1));
    q->used = malloc(sizeof(int32_t) * (size_t)(n + 1));
    n = 0;
    for (int64_t t = 0; t < nq; t++)
        if (w < 0 || part_of[qi[t]] == w) {
            user[n] = qu[t];
            item[n++] = qi[t];
        }
    q->user = user;
    q->item = item;
}

static void queries_free(rk_queries *q)
{
    free((void *)q->user);
    free((void *)q->item);
    free(q->pred);
    free(q->used);
}

typedef enum { FAULT_NONE, FAULT_DECIDE, FAULT_SUMS, FAULT_ROOM } fault;

/* n_parts parts (rows dealt by upper-triangle work, heaviest first to the
 * lightest part) against one call of every row. */
static void shared_vs_one(int nu, int ni, double density, int real, rk_metric metric, int n_parts, fault f,
                          unsigned long long seed)
{
    rk_model m;
    rk_error err;
    rk_ts_model(&m, nu, ni, density, real, 1, seed);
    rk_knn_opts o;
    rk_knn_opts_default(&o);
    o.sim.metric = metric;
    o.sim.shrinkage = metric == RK_METRIC_PEARSON_BASELINE ? 100.0 : 0.0;
    o.k = 12;
    /* the reference: one call, its own symmetric tile */
    const int64_t nq = 4 * (int64_t)nu;
    int32_t *qu = malloc(sizeof(int32_t) * (size_t)nq), *qi = malloc(sizeof(int32_t) * (size_t)nq);
    unsigned long long s = seed ^ 0x9e37ULL;
    for (int64_t t = 0; t < nq; t++) {
        qu[t] = (int32_t)(rk_test_rand(&s) % (unsigned)nu);
        qi[t] = (int32_t)(rk_test_rand(&s) % (unsigned)ni);
    }
    call ref;
    memset(&ref, 0, sizeof ref);
    ref.m = &m;
    ref.o = o;
    CU_ASSERT_FATAL(rk_lists_alloc(&ref.lists, ni, o.k, &err) == RK_OK);
    part_queries(&ref.q, qu, qi, nq, NULL, -1);
    run_call(&ref);
    CU_ASSERT_FATAL(ref.s == RK_OK);
    /* the parts: LPT over the upper-triangle costs */
    int64_t *cost = malloc(sizeof(int64_t) * (size_t)ni);
    int32_t *part_of = malloc(sizeof(int32_t) * (size_t)ni), *order = malloc(sizeof(int32_t) * (size_t)ni);
    CU_ASSERT_FATAL(rk_knn_item_sym_cost(&m, cost) >= 0);
    CU_ASSERT_FATAL(rk_knn_item_order(&m, order, NULL) >= 0);
    int64_t load[MAX_PARTS] = {0};
    for (int t = 0; t < ni; t++) {
        int w = 0;
        for (int x = 1; x < n_parts; x++)
            if (load[x] < load[w]) w = x;
        part_of[order[t]] = w;
        load[w] += cost[order[t]] + 1;
    }
    int devices[MAX_PARTS] = {0, 0, 0};
    rk_gpu_sym *sh;
    CU_ASSERT_FATAL(rk_gpu_sym_create(n_parts, devices, part_of, cost, ni, &sh, &err) == RK_OK);
    call c[MAX_PARTS];
    int32_t *rows[MAX_PARTS];
    pthread_t th[MAX_PARTS];
    memset(c, 0, sizeof c);
    for (int w = 0; w < n_parts; w++) {
        int32_t n = 0;
        rows[w] = malloc(sizeof(int32_t) * (size_t)(ni + 1));
        for (int i = 0; i < ni; i++)
            if (part_of[i] == w) rows[w][n++] = i;
        c[w].m = &m;
        c[w].o = o;
        c[w].o.rows = rows[w];
        c[w].o.n_rows = n;
        c[w].g.sym = sh;
        c[w].g.sym_part = w;
        if (f == FAULT_ROOM && w == n_parts - 1) c[w].g.tile_items = ni - 1; /* no room for every item */
        CU_ASSERT_FATAL(rk_lists_alloc(&c[w].lists, ni, o.k, &err) == RK_OK);
        part_queries(&c[w].q, qu, qi, nq, part_of, w);
    }
    if (f == FAULT_DECIDE) setenv("RECKNN_GPU_SYM_FAULT", "1:decide", 1);
    if (f == FAULT_SUMS) setenv("RECKNN_GPU_SYM_FAULT", "1:sums", 1);
    for (int w = 0; w < n_parts; w++) CU_ASSERT_FATAL(pthread_create(&th[w], NULL, run_call, &c[w]) == 0);
    for (int w = 0; w < n_parts; w++) pthread_join(th[w], NULL);
    unsetenv("RECKNN_GPU_SYM_FAULT");
    const int shared = f == FAULT_NONE;
    CU_ASSERT_EQUAL(rk_gpu_sym_shared(sh), shared || f == FAULT_SUMS); /* decided before the fault */
    for (int w = 0; w < n_parts; w++) {
        const int failing = w == 1 && (f == FAULT_DECIDE || f == FAULT_SUMS);
        if (failing || f == FAULT_SUMS) { /* after the sums: every part's call ends */
            CU_ASSERT_EQUAL(c[w].s, RK_E_GPU);
            CU_ASSERT(strstr(c[w].err.msg, failing ? "RECKNN_GPU_SYM_FAULT" : "another GPU's part") != NULL);
            continue;
        }
        if (c[w].s != RK_OK) fprintf(stderr, "part %d: %s\n", w, c[w].err.msg);
        CU_ASSERT_FATAL(c[w].s == RK_OK);
        CU_ASSERT_EQUAL(strstr(c[w].st.path, "shared symmetric") != NULL, shared);
        const float tol = real || metric == RK_METRIC_PEARSON_BASELINE ? 1e-6f : 0.0f;
        const int bad = rk_ts_compare_subset(&ref.lists, &c[w].lists, rows[w], c[w].o.n_rows, tol);
        if (bad) fprintf(stderr, "%s, part %d of %d: %d mismatches\n", rk_metric_name(metric), w, n_parts, bad);
        CU_ASSERT_EQUAL(bad, 0);
        for (int64_t t = 0, x = 0; t < nq; t++) { /* its queries, in the same order as the reference's */
            if (part_of[qi[t]] != w) continue;
            const double d = c[w].q.pred[x] - ref.q.pred[t];
            CU_ASSERT(tol == 0.0f ? d == 0.0 : d <= 1e-9 && d >= -1e-9);
            CU_ASSERT_EQUAL(c[w].q.used[x], ref.q.used[t]);
            x++;
        }
    }
    if (shared) { /* each pair once, over the parts */
        int64_t pairs = 0;
        for (int w = 0; w < n_parts; w++) pairs += c[w].st.pair_updates;
        CU_ASSERT_EQUAL(pairs, ref.st.pair_updates);
    }
    rk_gpu_sym_free(sh);
    for (int w = 0; w < n_parts; w++) {
        rk_lists_free(&c[w].lists);
        queries_free(&c[w].q);
        free(rows[w]);
    }
    rk_lists_free(&ref.lists);
    queries_free(&ref.q);
    free(qu);
    free(qi);
    free(cost);
    free(part_of);
    free(order);
    rk_model_free(&m);
}

static void test_metrics(void)
{
    static const rk_metric sym[] = {RK_METRIC_PEARSON, RK_METRIC_COSINE, RK_METRIC_PEARSON_BASELINE};
    for (int x = 0; x < 3; x++) {
        shared_vs_one(200, 150, 0.1, 0, sym[x], 2, FAULT_NONE, 100 + x);
        shared_vs_one(120, 90, 0.2, 1, sym[x], 3, FAULT_NONE, 110 + x);
    }
    shared_vs_one(300, 12000, 0.006, 0, RK_METRIC_PEARSON, 2, FAULT_NONE, 120); /* several column chunks */
    shared_vs_one(40, 3, 0.8, 0, RK_METRIC_COSINE, 3, FAULT_NONE, 121);          /* a row a part */
}

static void test_failures(void)
{
    shared_vs_one(150, 100, 0.1, 0, RK_METRIC_PEARSON, 2, FAULT_ROOM, 130);
    shared_vs_one(150, 100, 0.1, 0, RK_METRIC_PEARSON, 3, FAULT_DECIDE, 131);
    shared_vs_one(150, 100, 0.1, 0, RK_METRIC_PEARSON, 2, FAULT_SUMS, 132);
    shared_vs_one(150, 100, 0.1, 0, RK_METRIC_COSINE, 3, FAULT_SUMS, 133);
}

/* A metric the GPU sums in full rows (two sums a pair) never shares. */
static void test_not_applied(void)
{
    rk_knn_opts o;
    rk_knn_opts_default(&o);
    o.sim.metric = RK_METRIC_MSD;
    CU_ASSERT_FALSE(rk_gpu_sym_applies(&o, NULL));
    o.sim.metric = RK_METRIC_PEARSON;
    CU_ASSERT_TRUE(rk_gpu_sym_applies(&o, NULL));
    rk_gpu_opts g = {0};
    g.full_rows = 1;
    CU_ASSERT_FALSE(rk_gpu_sym_applies(&o, &g));
    rk_error err;
    rk_gpu_sym *sh = NULL;
    const int dev[2] = {0, 0};
    const int32_t part_of[2] = {0, 2};
    const int64_t cost[2] = {1, 0};
    CU_ASSERT_EQUAL(rk_gpu_sym_create(2, dev, part_of, cost, 2, &sh, &err), RK_E_ARG);
    CU_ASSERT_EQUAL(rk_gpu_sym_create(1, dev, part_of, cost, 2, &sh, &err), RK_E_ARG);
    CU_ASSERT_PTR_NULL(sh);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"shared tile against one GPU, every symmetric metric", test_metrics},
        {"a part without room, failing before and after its sums", test_failures},
        {"metrics and options that never share", test_not_applied},
        {NULL, NULL},
    };
    return rk_test_gpu_main("gpu_symshare", cases, cases);
}
