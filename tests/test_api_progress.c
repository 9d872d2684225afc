/* librecknn's progress callback (api/recknn.h): it sees the long stages
 * of a fit, a recommendation and an evaluation, and stops each at a report
 * of its choice (RK_E_CANCELLED, no model, the model unchanged); a callback
 * that never stops changes nothing, and a stopped call leaves the model's
 * later answers as they were. */
#define _POSIX_C_SOURCE 200809L
#include "recknn.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define expect rk_test_expect

/* A progress callback: counts the reports of stage `want`, asks to stop at the stop-th (0: never). */
typedef struct stopper {
    const char *want;
    int calls, other, stop, bad;
} stopper;

static int on_progress(void *ud, const char *stage, double done, double total, const char *unit)
{
    stopper *p = ud;
    p->bad += unit == NULL || done < 0 || (total > 0 && done > total);
    if (strcmp(stage, p->want) != 0) {
        p->other++;
        return 0;
    }
    return ++p->calls == p->stop;
}

/* Random ratings of nu users and ni items, about per ratings a user. */
static recknn_data *random_data(int32_t nu, int32_t ni, int per, unsigned long long seed)
{
    const int64_t n = (int64_t)nu * per;
    int32_t *u = malloc((size_t)n * sizeof *u), *i = malloc((size_t)n * sizeof *i);
    float *r = malloc((size_t)n * sizeof *r);
    CU_ASSERT_FATAL(u != NULL && i != NULL && r != NULL);
    for (int64_t t = 0; t < n; t++) {
        u[t] = (int32_t)(t / per);
        i[t] = (int32_t)(rk_test_rand(&seed) % (unsigned long long)ni);
        r[t] = (float)(1 + rk_test_rand(&seed) % 5);
    }
    recknn_data *d;
    rk_error err;
    CU_ASSERT_FATAL(recknn_data_new(nu, ni, n, u, i, r, &d, &err) == RK_OK);
    free(u);
    free(i);
    free(r);
    return d;
}

/* Every member of a and b the same bits (not memcmp of the structs: their
 * padding is indeterminate). */
static int same_metrics(const recknn_metrics *a, const recknn_metrics *b)
{
#define SAME(f) (memcmp(&a->f, &b->f, sizeof a->f) == 0 || (fprintf(stderr, "metrics differ: " #f "\n"), 0))
    return SAME(test_pairs) && SAME(rmse) && SAME(mae) && SAME(fallbacks) && SAME(unknown_users) &&
           SAME(unknown_items) && SAME(n) && SAME(relevance) && SAME(users) && SAME(precision) && SAME(recall) &&
           SAME(ndcg) && SAME(map) && SAME(mrr) && SAME(hit_rate) && SAME(coverage) && SAME(gini);
#undef SAME
}

/* The caller's progress callback sees the long stages and stops a fit, a
 * recommendation and an evaluation at a report of its choice: RK_E_CANCELLED,
 * no model, the model unchanged; a callback that never stops changes nothing. */
static void test_progress(void)
{
    recknn_data *d = random_data(3000, 3000, 12, 99); /* top-N in batches of 1024 users (3000 items) */
    recknn_options *o;
    rk_error err;
    CU_ASSERT_FATAL(recknn_options_new(&o, &err) == RK_OK);
    CU_ASSERT_FATAL(recknn_options_set(o, "threads", "1", &err) == RK_OK); /* thread 0 reports every 0.5% */
    CU_ASSERT_FATAL(recknn_options_set(o, "device", "cpu", &err) == RK_OK);
    stopper p = {"similarity", 0, 0, 3, 0};
    recknn_options_set_progress(o, on_progress, &p);
    recknn_model *m = (recknn_model *)&p; /* set to NULL by a failing fit */
    expect(recknn_fit(o, d, &m, &err), RK_E_CANCELLED, &err, "similarity: stopped by the caller");
    CU_ASSERT_PTR_NULL(m);
    CU_ASSERT_EQUAL(p.calls, 3);
    /* never stopping: the same model as without a callback */
    p = (stopper){"similarity", 0, 0, 0, 0};
    CU_ASSERT_FATAL(recknn_fit(o, d, &m, &err) == RK_OK);
    CU_ASSERT(p.calls > 3);
    CU_ASSERT_EQUAL(p.bad, 0);
    recknn_options_set_progress(o, NULL, NULL);
    recknn_model *m0;
    CU_ASSERT_FATAL(recknn_fit(o, d, &m0, &err) == RK_OK);
    const int64_t served = recknn_model_served(m);
    CU_ASSERT_EQUAL(served, 3000);
    int32_t *it = malloc((size_t)served * 5 * sizeof *it), *it0 = malloc((size_t)served * 5 * sizeof *it0);
    double *sc = malloc((size_t)served * 5 * sizeof *sc), *sc0 = malloc((size_t)served * 5 * sizeof *sc0);
    CU_ASSERT_FATAL(it != NULL && it0 != NULL && sc != NULL && sc0 != NULL);
    CU_ASSERT_FATAL(recknn_recommend(m0, NULL, 0, 5, it0, sc0, NULL, &err) == RK_OK);
    /* top-N stopped at its first report (after the first batch), then run in full */
    p = (stopper){"top-N", 0, 0, 2, 0}; /* the first report is at 0 users */
    recknn_model_set_progress(m, on_progress, &p);
    expect(recknn_recommend(m, NULL, 0, 5, it, sc, NULL, &err), RK_E_CANCELLED, &err, "top-N: stopped");
    p = (stopper){"top-N", 0, 0, 0, 0};
    CU_ASSERT_FATAL(recknn_recommend(m, NULL, 0, 5, it, sc, NULL, &err) == RK_OK);
    CU_ASSERT(p.calls >= 4); /* 0, 1024, 2048, 3000 */
    CU_ASSERT_EQUAL(memcmp(it, it0, (size_t)served * 5 * sizeof *it), 0);
    CU_ASSERT_EQUAL(memcmp(sc, sc0, (size_t)served * 5 * sizeof *sc), 0);
    /* the evaluation's top-N and the most-popular baseline's */
    recknn_data *test = random_data(3000, 3000, 2, 7);
    recknn_metrics mt, mt0;
    CU_ASSERT_FATAL(recknn_evaluate(m0, test, 5, 1, &mt0, &err) == RK_OK);
    p = (stopper){"baseline", 0, 0, 2, 0};
    expect(recknn_evaluate(m, test, 5, 1, &mt, &err), RK_E_CANCELLED, &err, "baseline: stopped");
    p = (stopper){"top-N", 0, 0, 2, 0};
    expect(recknn_evaluate(m, test, 5, 0, &mt, &err), RK_E_CANCELLED, &err, "top-N: stopped");
    recknn_model_set_progress(m, NULL, NULL);
    CU_ASSERT_FATAL(recknn_evaluate(m, test, 5, 1, &mt, &err) == RK_OK);
    CU_ASSERT(same_metrics(&mt, &mt0));
    free(it);
    free(it0);
    free(sc);
    free(sc0);
    recknn_data_free(test);
    recknn_model_free(m);
    recknn_model_free(m0);
    recknn_options_free(o);
    recknn_data_free(d);
}


int main(void)
{
    static const rk_test_case cases[] = {
        {"a progress callback that stops a fit, a recommendation, an evaluation", test_progress},
        {NULL, NULL},
    };
    return rk_test_main("api_progress", cases);
}
