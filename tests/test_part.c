/* rk_part: sharing items out by work.  Ranges cover every item once, in
 * order, each part within one item's cost of an equal share; the LPT rule's
 * parts are a partition within the mean plus the largest cost (and within
 * 4/3 of a brute-force optimum on tiny cases); both are deterministic; the
 * balance is max / mean; bad arguments are refused. */
#include "rk_part.h"
#include "test_util.h"

#include <string.h>

static int64_t *random_costs(int32_t n, unsigned long long seed, int skewed)
{
    int64_t *c = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
    unsigned long long s = seed;
    for (int32_t i = 0; i < n; i++) {
        const double u = rk_test_uniform(&s);
        /* skewed: a long tail as popularity gives, a few items thousands of times the rest */
        c[i] = skewed ? (int64_t)(1.0 / (1e-4 + u * u * u)) : (int64_t)(rk_test_rand(&s) % 1000);
    }
    return c;
}

static int64_t max_of(const int64_t *c, int32_t n)
{
    int64_t m = 0;
    for (int32_t i = 0; i < n; i++)
        if (c[i] > m) m = c[i];
    return m;
}

static void check_ranges(const int64_t *c, int32_t n, int32_t parts)
{
    int32_t *b = malloc(sizeof(int32_t) * (size_t)(parts + 1));
    int64_t *load = malloc(sizeof(int64_t) * (size_t)parts), total = 0;
    CU_ASSERT_FATAL(rk_part_ranges(c, n, parts, b, load, NULL) == RK_OK);
    CU_ASSERT_EQUAL(b[0], 0);
    CU_ASSERT_EQUAL(b[parts], n);
    int64_t sum = 0;
    for (int32_t p = 0; p < parts; p++) {
        CU_ASSERT(b[p] <= b[p + 1]);
        int64_t l = 0;
        for (int32_t i = b[p]; i < b[p + 1]; i++) l += c[i];
        CU_ASSERT_EQUAL(l, load[p]);
        sum += l;
    }
    for (int32_t i = 0; i < n; i++) total += c[i];
    CU_ASSERT_EQUAL(sum, total);
    const int64_t mx = max_of(c, n);
    for (int32_t p = 0; p < parts; p++) CU_ASSERT((double)load[p] <= (double)total / parts + (double)mx + 1e-9);
    /* the same arguments, the same ranges */
    int32_t *b2 = malloc(sizeof(int32_t) * (size_t)(parts + 1));
    CU_ASSERT_FATAL(rk_part_ranges(c, n, parts, b2, NULL, NULL) == RK_OK);
    CU_ASSERT(memcmp(b, b2, sizeof(int32_t) * (size_t)(parts + 1)) == 0);
    free(b);
    free(b2);
    free(load);
}

static void check_lpt(const int64_t *c, int32_t n, int32_t parts)
{
    int32_t *own = malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
    int64_t *load = malloc(sizeof(int64_t) * (size_t)parts), *l2 = calloc((size_t)parts, sizeof(int64_t)), total = 0;
    CU_ASSERT_FATAL(rk_part_lpt(c, n, parts, own, load, NULL) == RK_OK);
    for (int32_t i = 0; i < n; i++) {
        CU_ASSERT_FATAL(own[i] >= 0 && own[i] < parts);
        l2[own[i]] += c[i];
        total += c[i];
    }
    const int64_t mx = max_of(c, n);
    for (int32_t p = 0; p < parts; p++) {
        CU_ASSERT_EQUAL(l2[p], load[p]);
        CU_ASSERT((double)load[p] <= (double)total / parts + (double)mx + 1e-9);
    }
    free(own);
    free(load);
    free(l2);
}

static void test_random(void)
{
    static const int32_t ns[] = {0, 1, 2, 7, 100, 5000};
    static const int32_t ps[] = {1, 2, 3, 4, 16, 64};
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
        for (size_t b = 0; b < sizeof ps / sizeof ps[0]; b++)
            for (int skewed = 0; skewed < 2; skewed++) {
                int64_t *c = random_costs(ns[a], 100 + a * 10 + b + 1000 * (unsigned)skewed, skewed);
                check_ranges(c, ns[a], ps[b]);
                check_lpt(c, ns[a], ps[b]);
                free(c);
            }
}

/* LPT within 4/3 of the best largest load, by brute force over every
 * assignment of 8 items to 3 parts */
static void test_lpt_near_optimal(void)
{
    for (unsigned long long seed = 1; seed <= 20; seed++) {
        int64_t *c = random_costs(8, seed, 1);
        int32_t own[8];
        int64_t load[3];
        CU_ASSERT_FATAL(rk_part_lpt(c, 8, 3, own, load, NULL) == RK_OK);
        int64_t lpt = load[0] > load[1] ? load[0] : load[1];
        if (load[2] > lpt) lpt = load[2];
        int64_t best = INT64_MAX;
        for (int code = 0; code < 6561; code++) { /* 3^8 */
            int64_t l[3] = {0, 0, 0};
            for (int i = 0, x = code; i < 8; i++, x /= 3) l[x % 3] += c[i];
            int64_t m = l[0] > l[1] ? l[0] : l[1];
            if (l[2] > m) m = l[2];
            if (m < best) best = m;
        }
        CU_ASSERT(lpt >= best);
        CU_ASSERT(3 * lpt <= 4 * best);
        free(c);
    }
}

/* the skewed costs of a popular head: work, not count, decides */
static void test_by_work_not_count(void)
{
    int64_t c[10] = {1000, 1, 1, 1, 1, 1, 1, 1, 1, 1000};
    int32_t b[3];
    int64_t load[2];
    CU_ASSERT_FATAL(rk_part_ranges(c, 10, 2, b, load, NULL) == RK_OK);
    CU_ASSERT_EQUAL(load[0], 1004); /* items 0..4 against 5..9: not the first five by count alone */
    CU_ASSERT_EQUAL(load[1], 1004);
    CU_ASSERT(rk_part_balance(load, 2) == 1.0);
    int64_t z[4] = {0, 0, 0, 0};
    CU_ASSERT_FATAL(rk_part_ranges(z, 4, 2, b, load, NULL) == RK_OK); /* no work: by count */
    CU_ASSERT_EQUAL(b[1], 2);
    CU_ASSERT(rk_part_balance(load, 2) == 0.0);
    int64_t l3[3] = {3, 1, 2};
    CU_ASSERT(rk_part_balance(l3, 3) == 1.5);
}

static void test_refused(void)
{
    int64_t c[2] = {1, -1};
    int32_t b[3], own[2];
    rk_error err;
    CU_ASSERT_EQUAL(rk_part_ranges(c, 2, 2, b, NULL, &err), RK_E_ARG);
    CU_ASSERT_EQUAL(rk_part_lpt(c, 2, 2, own, NULL, &err), RK_E_ARG);
    c[1] = 1;
    CU_ASSERT_EQUAL(rk_part_ranges(c, 2, 0, b, NULL, &err), RK_E_ARG);
    CU_ASSERT_EQUAL(rk_part_lpt(c, -1, 2, own, NULL, &err), RK_E_ARG);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"random and skewed costs", test_random},
        {"LPT within 4/3 of the optimum", test_lpt_near_optimal},
        {"by work, not by count", test_by_work_not_count},
        {"bad arguments", test_refused},
        {NULL, NULL},
    };
    return rk_test_main("part", cases);
}
