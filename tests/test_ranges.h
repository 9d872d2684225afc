/* test_ranges.h — the loader's id ranges checked in the loader's tests. */
#ifndef RK_TEST_RANGES_H
#define RK_TEST_RANGES_H

#include "rk_load_internal.h"
#include "test_util.h"

/* The loader's id ranges (rk_rows.lo/hi, rk_idcol.ranged) checked against a
 * pass over the ids by every load between these two: a program's first and
 * last cases. */
static inline void ranges_check_from_here(void)
{
    rk_ids_test_check_ranges(1, NULL, NULL);
    CU_PASS("the id ranges are checked from here");
}

static inline void ranges_were_right(void)
{
    int64_t checked = 0, wrong = 0;
    rk_ids_test_check_ranges(0, &checked, &wrong);
    CU_ASSERT_TRUE(checked > 0);
    CU_ASSERT_EQUAL(wrong, 0);
}

#endif /* RK_TEST_RANGES_H */
