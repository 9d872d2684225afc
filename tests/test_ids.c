/* Unit tests of the id maps (etl/rk_ids.c): numeric and byte order, what is a
 * canonical integer, find/format round trips, the direct-table, hashed and
 * string paths against a sort done here. */
#define _POSIX_C_SOURCE 200809L
#include "rk_ids.h"
#include "rk_load.h"
#include "rk_load_internal.h"
#include "test_util.h"

#include <inttypes.h>
#include <string.h>

static rk_idmap *make(const char *const *ids, int64_t n)
{
    rk_idmap *m = NULL;
    rk_error e = {0};
    rk_status s = rk_ids_from_strings(ids, n, &m, &e);
    if (s != RK_OK) fprintf(stderr, "\nrk_ids_from_strings: %s\n", e.msg);
    CU_ASSERT_EQUAL_FATAL(s, RK_OK);
    return m;
}

/* The map holds exactly `want` (distinct, in order). */
static void expect_order(const rk_idmap *m, const char *const *want, int n)
{
    char buf[RK_ID_MAX + 1];
    CU_ASSERT_EQUAL_FATAL(rk_ids_count(m), n);
    for (int k = 0; k < n; k++) {
        int len = rk_ids_format(m, k, buf, sizeof buf);
        if (strcmp(buf, want[k]) != 0) fprintf(stderr, "\nindex %d: %s, want %s\n", k, buf, want[k]);
        CU_ASSERT_STRING_EQUAL(buf, want[k]);
        CU_ASSERT_EQUAL(len, (int)strlen(want[k]));
        CU_ASSERT_EQUAL(rk_ids_find(m, want[k], strlen(want[k])), k);
    }
}

static void test_numeric_order(void)
{
    const char *ids[] = {"10", "2", "10", "-3", "0", "2", "100"};
    const char *want[] = {"-3", "0", "2", "10", "100"};
    rk_idmap *m = make(ids, 7);
    CU_ASSERT_TRUE(rk_ids_numeric(m));
    expect_order(m, want, 5);
    CU_ASSERT_EQUAL(rk_ids_find(m, "3", 1), -1);
    CU_ASSERT_EQUAL(rk_ids_find(m, "02", 2), -1); /* not canonical: not this id */
    CU_ASSERT_EQUAL(rk_ids_find(m, "-0", 2), -1);
    CU_ASSERT_EQUAL(rk_ids_find(m, "x", 1), -1);
    CU_ASSERT_EQUAL(rk_ids_find(m, "100", 2), 3); /* "10": a length, not a C string */
    rk_ids_free(m);
}

static void test_byte_order(void)
{
    const char *ids[] = {"10", "2", "b", "10", "a", "B", "-1"};
    const char *want[] = {"-1", "10", "2", "B", "a", "b"};
    rk_idmap *m = make(ids, 7);
    CU_ASSERT_FALSE(rk_ids_numeric(m));
    expect_order(m, want, 6);
    CU_ASSERT_EQUAL(rk_ids_find(m, "1", 1), -1);
    CU_ASSERT_EQUAL(rk_ids_find(m, "100", 3), -1);
    rk_ids_free(m);

    /* "007", "-0", "+5", " 5" and "1.0" are not canonical integers */
    const char *odd[][2] = {{"7", "007"}, {"0", "-0"}, {"5", "+5"}, {"5", " 5"}, {"1", "1.0"}};
    for (int k = 0; k < 5; k++) {
        m = make(odd[k], 2);
        CU_ASSERT_FALSE(rk_ids_numeric(m));
        CU_ASSERT_EQUAL(rk_ids_count(m), 2);
        rk_ids_free(m);
    }
    /* prefixes sort first; bytes are unsigned */
    const char *pre[] = {"ab", "a", "\xc3\xa9", "abc", "z"};
    const char *pre_want[] = {"a", "ab", "abc", "z", "\xc3\xa9"};
    m = make(pre, 5);
    expect_order(m, pre_want, 5);
    rk_ids_free(m);
}

static void test_int64_edges(void)
{
    const char *ids[] = {"9223372036854775807", "-9223372036854775808", "0", "1"};
    const char *want[] = {"-9223372036854775808", "0", "1", "9223372036854775807"};
    rk_idmap *m = make(ids, 4);
    CU_ASSERT_TRUE(rk_ids_numeric(m));
    expect_order(m, want, 4);
    rk_ids_free(m);
    /* beyond int64: a string */
    const char *big[] = {"9223372036854775808", "1"};
    m = make(big, 2);
    CU_ASSERT_FALSE(rk_ids_numeric(m));
    rk_ids_free(m);
    int64_t v;
    CU_ASSERT_TRUE(rk_parse_canon_int("-1", 2, &v));
    CU_ASSERT_EQUAL(v, -1);
    CU_ASSERT_FALSE(rk_parse_canon_int("-", 1, &v));
    CU_ASSERT_FALSE(rk_parse_canon_int("", 0, &v));
    CU_ASSERT_FALSE(rk_parse_canon_int("12345678901234567890", 20, &v));
    CU_ASSERT_FALSE(rk_parse_canon_int("-9223372036854775809", 20, &v));
}

static void test_format_edges(void)
{
    const char *ids[] = {"12345", "abcdef"};
    rk_idmap *m = make(ids, 2);
    char buf[4];
    CU_ASSERT_EQUAL(rk_ids_format(m, 0, buf, sizeof buf), 5);
    CU_ASSERT_STRING_EQUAL(buf, "123"); /* truncated, terminated */
    CU_ASSERT_EQUAL(rk_ids_format(m, 1, buf, sizeof buf), 6);
    CU_ASSERT_STRING_EQUAL(buf, "abc");
    CU_ASSERT_EQUAL(rk_ids_format(m, 2, buf, sizeof buf), -1);
    CU_ASSERT_STRING_EQUAL(buf, "");
    CU_ASSERT_EQUAL(rk_ids_format(m, -1, buf, sizeof buf), -1);
    CU_ASSERT_EQUAL(rk_ids_format(m, 0, buf, 0), 5);
    rk_ids_free(m);
    CU_ASSERT_EQUAL(rk_ids_count(NULL), 0);
    CU_ASSERT_EQUAL(rk_ids_find(NULL, "1", 1), -1);
    CU_ASSERT_EQUAL(rk_ids_format(NULL, 0, buf, sizeof buf), -1);
    rk_ids_free(NULL);

    /* empty and overlong ids are refused */
    rk_error e;
    char longid[RK_ID_MAX + 2];
    memset(longid, 'x', sizeof longid - 1);
    longid[sizeof longid - 1] = '\0';
    const char *bad1[] = {"1", ""}, *bad2[] = {longid};
    CU_ASSERT_EQUAL(rk_ids_from_strings(bad1, 2, &m, &e), RK_E_ARG);
    CU_ASSERT_PTR_NULL(m);
    CU_ASSERT_EQUAL(rk_ids_from_strings(bad2, 1, &m, &e), RK_E_ARG);
    longid[RK_ID_MAX] = '\0'; /* exactly RK_ID_MAX bytes is fine */
    CU_ASSERT_EQUAL(rk_ids_from_strings(bad2, 1, &m, &e), RK_OK);
    CU_ASSERT_EQUAL(rk_ids_find(m, longid, RK_ID_MAX), 0);
    rk_ids_free(m);
    /* no ids at all */
    CU_ASSERT_EQUAL(rk_ids_from_strings(NULL, 0, &m, &e), RK_OK);
    CU_ASSERT_EQUAL(rk_ids_count(m), 0);
    CU_ASSERT_EQUAL(rk_ids_find(m, "1", 1), -1);
    rk_ids_free(m);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Random integer ids, dense (direct table) and sparse (hash), through the
 * loader's column interface: indices follow the sorted distinct values. */
static void check_numeric_threads(int64_t n, uint64_t spread, int negative, int nthreads, unsigned long long seed)
{
    int64_t *v = malloc((size_t)n * sizeof *v), *s = malloc((size_t)n * sizeof *s);
    int32_t *d1 = malloc((size_t)n / 2 * sizeof *d1), *d2 = malloc((size_t)(n - n / 2) * sizeof *d2);
    for (int64_t k = 0; k < n; k++) {
        int64_t x = (int64_t)(rk_test_rand(&seed) % spread);
        if (negative == 2) x = 1000 + (int64_t)(rk_test_rand(&seed) % 7000); /* every value present: no gaps */
        v[k] = negative == 1 && (k & 1) ? -x : x;
        s[k] = v[k];
    }
    if (negative == 2)
        for (int64_t k = 0; k < 7000; k++) v[(k * 7919) % n] = s[(k * 7919) % n] = 1000 + k;
    qsort(s, (size_t)n, sizeof *s, cmp_i64);
    int64_t nd = 0;
    for (int64_t k = 0; k < n; k++)
        if (k == 0 || s[k] != s[k - 1]) s[nd++] = s[k];
    rk_idcol cols[2] = {{v, NULL, NULL, n / 2, d1, 0, 0, 0, 0, 0},
                        {v + n / 2, NULL, NULL, n - n / 2, d2, 0, 0, 0, 0, 0}};
    if (seed & 1) /* odd seeds: each column's range given, as the loader gathers it (no pass for it) */
        for (int c = 0; c < 2; c++) {
            cols[c].ranged = 1, cols[c].lo = INT64_MAX, cols[c].hi = INT64_MIN;
            for (int64_t k = 0; k < cols[c].n; k++) {
                if (cols[c].v[k] < cols[c].lo) cols[c].lo = cols[c].v[k];
                if (cols[c].v[k] > cols[c].hi) cols[c].hi = cols[c].v[k];
            }
        }
    rk_idmap *m = NULL;
    rk_error e;
    CU_ASSERT_EQUAL_FATAL(rk_ids_build(cols, 2, nthreads, &m, &e), RK_OK);
    CU_ASSERT_TRUE(rk_ids_numeric(m));
    CU_ASSERT_EQUAL_FATAL(rk_ids_count(m), nd);
    int ok = 1;
    for (int64_t k = 0; k < n; k++) {
        int32_t idx = k < n / 2 ? d1[k] : d2[k - n / 2];
        ok &= idx >= 0 && idx < nd && s[idx] == v[k];
    }
    CU_ASSERT_TRUE(ok);
    char buf[32], want[32];
    for (int64_t q = 0; q < nd; q += 1 + nd / 50) {
        snprintf(want, sizeof want, "%" PRId64, s[q]);
        CU_ASSERT_EQUAL(rk_ids_format(m, (int32_t)q, buf, sizeof buf), (int)strlen(want));
        CU_ASSERT_STRING_EQUAL(buf, want);
        CU_ASSERT_EQUAL(rk_ids_find(m, want, strlen(want)), q);
    }
    rk_ids_free(m);
    free(v);
    free(s);
    free(d1);
    free(d2);
}

static void check_numeric_random(int64_t n, uint64_t spread, int negative, unsigned long long seed)
{
    check_numeric_threads(n, spread, negative, 2, seed);
}

/* Any thread count: direct with and without gaps, hashed (the shares' merge). */
static void test_numeric_threads(void)
{
    for (int t = 1; t <= 8; t += 3) {
        check_numeric_threads(150000, 1, 2, t, 10 + (unsigned long long)t);             /* contiguous */
        check_numeric_threads(150000, 400000, 0, t, 20 + (unsigned long long)t);        /* gaps */
        check_numeric_threads(150000, 1ULL << 50, 1, t, 30 + (unsigned long long)t);   /* hashed */
        check_numeric_threads(150000, 5000, 1, t, 40 + (unsigned long long)t);
        check_numeric_threads(9, 1ULL << 60, 0, t, 50 + (unsigned long long)t);         /* fewer rows than shares */
    }
}

/* A column that only contributes ids (no indices wanted) still gets them mapped. */
static void test_column_without_output(void)
{
    int64_t a[] = {30, 10, 20}, b[] = {40, 10, 5, 5};
    int32_t da[3];
    for (int k = 0; k < 2; k++) {
        if (k == 1) { /* hashed: ids far apart */
            b[0] = (int64_t)1 << 50;
        }
        rk_idcol cols[2] = {{a, NULL, NULL, 3, da, 0, 0, 0, 0, 0}, {b, NULL, NULL, 4, NULL, 0, 0, 0, 0, 0}};
        rk_idmap *m = NULL;
        CU_ASSERT_EQUAL_FATAL(rk_ids_build(cols, 2, 3, &m, NULL), RK_OK);
        CU_ASSERT_EQUAL(rk_ids_count(m), 5); /* 5 10 20 30 40 (or 2^50) */
        CU_ASSERT_EQUAL(da[0], 3);
        CU_ASSERT_EQUAL(da[1], 1);
        CU_ASSERT_EQUAL(da[2], 2);
        CU_ASSERT_EQUAL(rk_ids_find(m, "5", 1), 0);
        rk_ids_free(m);
    }
}

static void test_numeric_random(void)
{
    check_numeric_random(200000, 5000, 0, 1);             /* direct table */
    check_numeric_random(200000, 300000, 1, 2);           /* direct, negative */
    check_numeric_random(100000, 1ULL << 40, 1, 3);       /* hashed */
    check_numeric_random(50000, 9000000000000000000ULL, 1, 4);
    check_numeric_random(1, 10, 0, 5);
}

/* Over columns (rk_idcol.over): the indices written over the ids where the
 * map is a direct table (the waves of rk_ids.c at sizes around their
 * bounds), in new blocks otherwise, next to a column with its own output;
 * every index against the sorted distinct values. */
static void check_over(int64_t n, uint64_t spread, int nthreads, unsigned long long seed)
{
    const int64_t n1 = n / 3, n2 = n - n1;
    int64_t *a = malloc((size_t)(n1 > 0 ? n1 : 1) * sizeof *a), *b = malloc((size_t)n2 * sizeof *b);
    int64_t *orig = malloc((size_t)n * sizeof *orig), *s = malloc((size_t)n * sizeof *s);
    int32_t *da = malloc((size_t)(n1 > 0 ? n1 : 1) * sizeof *da);
    for (int64_t k = 0; k < n; k++) {
        orig[k] = s[k] = 77 + (int64_t)(rk_test_rand(&seed) % spread);
        if (k < n1) a[k] = orig[k];
        else b[k - n1] = orig[k];
    }
    qsort(s, (size_t)n, sizeof *s, cmp_i64);
    int64_t nd = 0;
    for (int64_t k = 0; k < n; k++)
        if (k == 0 || s[k] != s[k - 1]) s[nd++] = s[k];
    rk_idcol cols[2] = {{a, NULL, NULL, n1, da, 0, 0, 0, 0, 0}, {b, NULL, NULL, n2, NULL, 1, 0, 0, 0, 0}};
    rk_idmap *m = NULL;
    rk_error e;
    CU_ASSERT_EQUAL_FATAL(rk_ids_build(cols, 2, nthreads, &m, &e), RK_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cols[1].dense);
    /* a direct table (ids close to each other, rk_ids.c) writes over b and
     * takes its block; the hashed path cannot */
    const uint64_t span = (uint64_t)(s[nd - 1] - s[0]);
    CU_ASSERT_EQUAL(cols[1].took, span < (uint64_t)(4 * n + 65536));
    CU_ASSERT_FALSE(cols[0].took);
    CU_ASSERT_EQUAL_FATAL(rk_ids_count(m), nd);
    int ok = 1;
    for (int64_t k = 0; k < n; k++) {
        const int32_t idx = k < n1 ? da[k] : cols[1].dense[k - n1];
        ok &= idx >= 0 && idx < nd && s[idx] == orig[k];
    }
    CU_ASSERT_TRUE(ok);
    if (!cols[1].took) free(b);
    free(cols[1].dense);
    rk_ids_free(m);
    free(a);
    free(orig);
    free(s);
    free(da);
}

static void test_over(void)
{
    static const int64_t sizes[] = {1, 2, 3, 5, 1537, 1538, 3074, 3075, 6147, 100000, 300001};
    for (int t = 1; t <= 8; t += 7)
        for (size_t q = 0; q < sizeof sizes / sizeof *sizes; q++) {
            const unsigned long long seed = 100 + (unsigned long long)(q * 8 + (size_t)t);
            check_over(sizes[q], 3, t, seed);                 /* direct, most likely no gaps */
            check_over(sizes[q], 5000, t, seed + 1);          /* direct with gaps */
            check_over(sizes[q], (uint64_t)1 << 45, t, seed); /* hashed */
        }
    /* string ids: a new block, the ids' arena untouched */
    rk_rows r;
    memset(&r, 0, sizeof r);
    CU_ASSERT_EQUAL_FATAL(rk_rows_reserve(&r, 3, 0), 0);
    CU_ASSERT_EQUAL_FATAL(rk_rows_want_tags(&r), 0);
    const char *ids[] = {"b", "a", "b"};
    for (int k = 0; k < 3; k++) {
        r.u[k] = rk_rows_put_string(&r, ids[k], 1);
        r.utag[k] = 1;
    }
    r.n = 3;
    rk_idcol col = {r.u, r.utag, r.arena, 3, NULL, 1, 0, 0, 0, 0};
    rk_idmap *m = NULL;
    CU_ASSERT_EQUAL_FATAL(rk_ids_build(&col, 1, 2, &m, NULL), RK_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(col.dense);
    CU_ASSERT_FALSE(col.took);
    CU_ASSERT_PTR_NOT_EQUAL(col.dense, (int32_t *)(void *)r.u);
    CU_ASSERT_EQUAL(col.dense[0], 1);
    CU_ASSERT_EQUAL(col.dense[1], 0);
    CU_ASSERT_EQUAL(col.dense[2], 1);
    free(col.dense);
    rk_ids_free(m);
    rk_rows_free(&r);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_string_random(void)
{
    unsigned long long seed = 9;
    const int n = 50000;
    char **ids = malloc((size_t)n * sizeof *ids), **s = malloc((size_t)n * sizeof *s);
    for (int k = 0; k < n; k++) {
        ids[k] = malloc(16);
        if (k % 3 == 0) snprintf(ids[k], 16, "%llu", rk_test_rand(&seed) % 3000);
        else snprintf(ids[k], 16, "u%llx", rk_test_rand(&seed) % 20000);
        s[k] = ids[k];
    }
    rk_idmap *m = make((const char *const *)ids, n);
    CU_ASSERT_FALSE(rk_ids_numeric(m));
    qsort(s, (size_t)n, sizeof *s, cmp_str);
    int nd = 0;
    for (int k = 0; k < n; k++)
        if (k == 0 || strcmp(s[k], s[k - 1]) != 0) s[nd++] = s[k];
    CU_ASSERT_EQUAL_FATAL(rk_ids_count(m), nd);
    int ok = 1;
    char buf[RK_ID_MAX + 1];
    for (int k = 0; k < nd; k++) {
        rk_ids_format(m, k, buf, sizeof buf);
        ok &= strcmp(buf, s[k]) == 0 && rk_ids_find(m, s[k], strlen(s[k])) == k;
    }
    CU_ASSERT_TRUE(ok);
    rk_ids_free(m);
    for (int k = 0; k < n; k++) free(ids[k]);
    free(ids);
    free(s);
}

/* Through the loader: users and items are separate maps, test-only ids are in. */
static void test_loader_maps(void)
{
    rk_load_opts o;
    rk_dataset d;
    rk_error e;
    rk_load_opts_default(&o);
    const char *b = "10,007,1\n2,7,2\n-5,x,3\n";
    CU_ASSERT_EQUAL_FATAL(rk_load_buffer("b", b, strlen(b), &o, &d, &e), RK_OK);
    CU_ASSERT_TRUE(rk_ids_numeric(d.users));
    CU_ASSERT_FALSE(rk_ids_numeric(d.items));
    const char *uw[] = {"-5", "2", "10"}, *iw[] = {"007", "7", "x"};
    expect_order(d.users, uw, 3);
    expect_order(d.items, iw, 3);
    CU_ASSERT_EQUAL(d.train.user[0], 2);
    CU_ASSERT_EQUAL(d.train.item[0], 0);
    CU_ASSERT_EQUAL(d.train.user[2], 0);
    CU_ASSERT_EQUAL(d.train.item[2], 2);
    rk_dataset_free(&d);
}

/* More distinct ids than the limit: RK_E_RANGE on every path (direct table,
 * hashed with one and several shares, strings), never indices that wrap.
 * The limit is lowered to 5 (rk_ids_test_limit): 2^31 ids are out of reach. */
static void test_id_limit(void)
{
    static const int64_t step[3] = {1, (int64_t)1 << 40, 0}; /* direct, hashed, strings */
    rk_ids_test_limit(5);
    for (int path = 0; path < 3; path++)
        for (int nt = 1; nt <= 4; nt += 3)
            for (int64_t nd = 4; nd <= 7; nd++) {
                int64_t v[40];
                uint8_t tag[40];
                char arena[40 * 3];
                int32_t dense[40];
                for (int k = 0; k < 40; k++) { /* each id about 40/nd times, in the order k * 11 mod nd */
                    int64_t id = (k * 11) % nd;
                    if (path == 2) {
                        arena[3 * k] = 2;
                        arena[3 * k + 1] = 's';
                        arena[3 * k + 2] = (char)('a' + id);
                        v[k] = 3 * k;
                        tag[k] = 1;
                    } else {
                        v[k] = id * step[path] - 2;
                        tag[k] = 0;
                    }
                }
                rk_idcol col = {v, path == 2 ? tag : NULL, arena, 40, dense, 0, 0, 0, 0, 0};
                rk_idmap *m = NULL;
                rk_error e = {0};
                rk_status st = rk_ids_build(&col, 1, nt, &m, &e);
                if (nd <= 5) {
                    CU_ASSERT_EQUAL(st, RK_OK);
                    CU_ASSERT_EQUAL(rk_ids_count(m), (int32_t)nd);
                    for (int k = 0; k < 40; k++) CU_ASSERT_EQUAL(dense[k], (int32_t)((k * 11) % nd));
                } else {
                    if (st != RK_E_RANGE) fprintf(stderr, "\npath %d, %d threads, %d ids: %d\n", path, nt, (int)nd, st);
                    CU_ASSERT_EQUAL(st, RK_E_RANGE);
                    CU_ASSERT_STRING_EQUAL(e.msg, "more than 5 distinct ids (indices are 32-bit)");
                    CU_ASSERT_PTR_NULL(m);
                }
                rk_ids_free(m);
                /* the same ids in an over column (a block of their own):
                 * nothing given back or taken on failure */
                int64_t *ov = malloc(sizeof v);
                CU_ASSERT_PTR_NOT_NULL_FATAL(ov);
                memcpy(ov, v, sizeof v);
                rk_idcol oc = {ov, path == 2 ? tag : NULL, arena, 40, NULL, 1, 0, 0, 0, 0};
                m = NULL;
                st = rk_ids_build(&oc, 1, nt, &m, &e);
                CU_ASSERT_EQUAL(st, nd <= 5 ? RK_OK : RK_E_RANGE);
                CU_ASSERT_EQUAL(oc.took, st == RK_OK && path == 0);
                if (st == RK_OK) {
                    for (int k = 0; k < 40; k++) CU_ASSERT_EQUAL(oc.dense[k], (int32_t)((k * 11) % nd));
                } else {
                    CU_ASSERT_PTR_NULL(oc.dense);
                }
                free(oc.dense);
                if (!oc.took) free(ov);
                rk_ids_free(m);
            }
    /* through the loader: the message says which map */
    rk_load_opts o;
    rk_dataset d;
    rk_error e = {0};
    rk_load_opts_default(&o);
    const char *b = "1,1,1\n2,1,1\n3,1,1\n4,1,1\n5,1,1\n6,1,1\n";
    CU_ASSERT_EQUAL(rk_load_buffer("b", b, strlen(b), &o, &d, &e), RK_E_RANGE);
    CU_ASSERT_STRING_EQUAL(e.msg, "too many user ids: more than 5 distinct ids (indices are 32-bit)");
    CU_ASSERT_PTR_NULL(d.users);
    b = "1,1,1\n1,2,1\n1,3,1\n1,4,1\n1,5,1\n1,x,1\n";
    CU_ASSERT_EQUAL(rk_load_buffer("b", b, strlen(b), &o, &d, &e), RK_E_RANGE);
    CU_ASSERT_STRING_EQUAL(e.msg, "too many item ids: more than 5 distinct ids (indices are 32-bit)");
    b = "1,1,1\n1,2,1\n2,3,1\n2,4,1\n3,5,1\n";
    CU_ASSERT_EQUAL(rk_load_buffer("b", b, strlen(b), &o, &d, &e), RK_OK);
    rk_dataset_free(&d);
    rk_ids_test_limit(0);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"numeric order", test_numeric_order},
        {"byte order and canonical integers", test_byte_order},
        {"int64 limits", test_int64_edges},
        {"format, find and errors", test_format_edges},
        {"random integer ids", test_numeric_random},
        {"integer ids on any thread count", test_numeric_threads},
        {"a column without indices", test_column_without_output},
        {"indices over the ids", test_over},
        {"random string ids", test_string_random},
        {"maps built by the loader", test_loader_maps},
        {"the distinct-id limit", test_id_limit},
        {NULL, NULL},
    };
    return rk_test_main("ids", cases);
}
