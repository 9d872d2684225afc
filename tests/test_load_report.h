/* test_load_report.h — two load reports alike in every count, bad line and
 * reason (not in their timings): a pack's round trip, a load shared among
 * processes against one process's. */
#ifndef RK_TEST_LOAD_REPORT_H
#define RK_TEST_LOAD_REPORT_H

#include "rk_load.h"
#include <CUnit/CUnit.h>

static inline void rk_test_same_load_report(const rk_load_report *a, const rk_load_report *b)
{
    CU_ASSERT_EQUAL(a->format, b->format);
    CU_ASSERT_EQUAL(a->delimiter, b->delimiter);
    CU_ASSERT_EQUAL(a->has_time, b->has_time);
    CU_ASSERT_EQUAL(a->bytes, b->bytes);
    CU_ASSERT_EQUAL(a->lines, b->lines);
    CU_ASSERT_EQUAL(a->ratings, b->ratings);
    CU_ASSERT_EQUAL(a->skipped_lines, b->skipped_lines);
    CU_ASSERT_EQUAL_FATAL(a->n_bad_kept, b->n_bad_kept);
    for (int k = 0; k < a->n_bad_kept; k++) {
        CU_ASSERT_EQUAL(a->bad[k].file, b->bad[k].file);
        CU_ASSERT_EQUAL(a->bad[k].line, b->bad[k].line);
    }
    CU_ASSERT_STRING_EQUAL(a->first_bad_reason, b->first_bad_reason);
}

#endif /* RK_TEST_LOAD_REPORT_H */
