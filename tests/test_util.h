/* test_util.h — small helpers shared by the CUnit test programs. */
#ifndef RK_TEST_UTIL_H
#define RK_TEST_UTIL_H

#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rk_metric.h"
#include "rk_status.h"

/* got is want, and err's message holds text (printed when it does not). */
static inline void rk_test_expect(rk_status got, rk_status want, const rk_error *err, const char *text)
{
    CU_ASSERT_EQUAL(got, want);
    if (strstr(err->msg, text) == NULL) fprintf(stderr, "'%s' lacks '%s'\n", err->msg, text);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->msg, text));
}

/* The metrics of the metric table whose full-vector flag is `full` (-1:
 * every row), in table order, into out[RK_METRIC_COUNT]: the tests loop
 * over the table, so that a new row is covered without editing them.
 * @return their number. */
static inline int rk_test_metrics(int full, rk_metric *out)
{
    int n = 0;
    for (int m = 0; m < rk_metric_count(); m++)
        if (full < 0 || rk_metric_row_of((rk_metric)m)->full == full) out[n++] = (rk_metric)m;
    return n;
}

/* Run every registered suite; exit status 0 only when all tests passed.
 * A suite array ends with {NULL, NULL}. */
typedef struct rk_test_case {
    const char *name;
    void (*fn)(void);
} rk_test_case;

static inline int rk_test_main(const char *suite_name, const rk_test_case *cases)
{
    if (CU_initialize_registry() != CUE_SUCCESS) return 99;
    CU_pSuite s = CU_add_suite(suite_name, NULL, NULL);
    if (s == NULL) return 99;
    for (const rk_test_case *c = cases; c->name != NULL; c++)
        if (CU_add_test(s, c->name, c->fn) == NULL) return 99;
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
    unsigned run = CU_get_number_of_tests_run();
    CU_cleanup_registry();
    if (run == 0) return 99;
    return failed == 0 ? 0 : 1;
}

/* A deterministic generator for tests (splitmix64). */
static inline unsigned long long rk_test_rand(unsigned long long *state)
{
    unsigned long long z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static inline double rk_test_uniform(unsigned long long *state)
{
    return (double)(rk_test_rand(state) >> 11) * (1.0 / 9007199254740992.0);
}

#endif /* RK_TEST_UTIL_H */
