/* rk_plan: the host-memory estimate grows as the arrays do, the fit takes the
 * most threads that stay within the budget, and a budget below one thread's
 * plan is refused with a message that names the need and the options. */
#include "rk_plan.h"
#include "test_util.h"

#include <string.h>

static rk_plan_in shape(void)
{
    rk_plan_in in;
    memset(&in, 0, sizeof in);
    in.users = 1000;
    in.items = 100000;
    in.ratings = 50000;
    in.test = 5000;
    in.k = 20;
    in.top_n = 10;
    in.threads = 8;
    return in;
}

/* The parts are the arrays' sizes, computed here independently. */
static void test_parts(void)
{
    rk_plan_in in = shape();
    rk_plan_host p;
    rk_plan_host_estimate(&in, &p);
    CU_ASSERT_DOUBLE_EQUAL(p.lists, 100000.0 * 20 * 12 + 100000.0 * 4, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(p.per_thread, 100000.0 * (44 + 12), 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(p.predictions, 5000.0 * 12, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(p.total, p.data + p.model + p.engine + p.lists + p.topn + p.predictions + 8 * p.per_thread,
                           1e-6);
    CU_ASSERT_EQUAL(p.threads, 8);
    /* timestamps, folds, a longer list and no top-N move the parts they should */
    rk_plan_host q;
    in.with_time = 1;
    rk_plan_host_estimate(&in, &q);
    CU_ASSERT(q.data > p.data);
    in.folds = 5;
    rk_plan_host r;
    rk_plan_host_estimate(&in, &r);
    CU_ASSERT(r.data > q.data);
    in.k = 40;
    in.top_n = 0;
    rk_plan_host_estimate(&in, &r);
    CU_ASSERT(r.lists > p.lists);
    CU_ASSERT_DOUBLE_EQUAL(r.topn, 0.0, 1e-9);
    CU_ASSERT(r.per_thread < p.per_thread);
    CU_ASSERT_DOUBLE_EQUAL(rk_plan_load_bytes(1000), 1000 * RK_PLAN_LOAD_PER_INPUT_BYTE, 1e-9);
}

static void test_fit(void)
{
    rk_plan_in in = shape();
    rk_plan_host all, one, got;
    rk_plan_host_estimate(&in, &all);
    rk_plan_in in1 = in;
    in1.threads = 1;
    rk_plan_host_estimate(&in1, &one);
    rk_error err;
    /* enough for everything: 8 threads */
    CU_ASSERT_EQUAL(rk_plan_fit(&in, all.total, &got, &err), RK_OK);
    CU_ASSERT_EQUAL(got.threads, 8);
    /* room for exactly three threads' rows */
    double limit = one.total + 2 * one.per_thread + 1.0;
    CU_ASSERT_EQUAL(rk_plan_fit(&in, limit, &got, &err), RK_OK);
    CU_ASSERT_EQUAL(got.threads, 3);
    CU_ASSERT(got.total <= limit);
    /* one thread only */
    CU_ASSERT_EQUAL(rk_plan_fit(&in, one.total, &got, &err), RK_OK);
    CU_ASSERT_EQUAL(got.threads, 1);
    /* below one thread: refused, the message says the need and the way out */
    rk_error_clear(&err);
    CU_ASSERT_EQUAL(rk_plan_fit(&in, one.total - 1.0, &got, &err), RK_E_NOMEM);
    CU_ASSERT_EQUAL(got.threads, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--memory-limit"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "needs about"));
    char b[32];
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, rk_plan_bytes_str(one.total, b)));
}

static void test_bytes_str(void)
{
    char b[32];
    CU_ASSERT_STRING_EQUAL(rk_plan_bytes_str(1048576.0 * 1.5, b), "1.5 MB");
    CU_ASSERT_STRING_EQUAL(rk_plan_bytes_str(1073741824.0 * 2.25, b), "2.25 GB");
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"estimate parts", test_parts},
        {"fit: threads within the budget", test_fit},
        {"byte strings", test_bytes_str},
        {NULL, NULL},
    };
    return rk_test_main("rk_plan", cases);
}
