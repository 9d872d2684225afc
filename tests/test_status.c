/* rk_status: the message table, the exit codes of CONTRACT.md §1 and rk_error_set. */
#define _POSIX_C_SOURCE 200809L
#include "rk_status.h"
#include "test_util.h"

#include <stdint.h>
#include <string.h>

static const rk_status all_status[] = {
    RK_OK,      RK_E_ARG,   RK_E_IO,        RK_E_PARSE, RK_E_NOMEM,
    RK_E_GPU,   RK_E_EMPTY, RK_E_DUPLICATE, RK_E_RANGE, RK_E_INTERNAL, RK_E_MODEL, RK_E_DIST, RK_E_CANCELLED,
};
#define N_STATUS ((int)(sizeof all_status / sizeof all_status[0]))

/* The enum values are fixed and never reused (rk_status.h). */
static void test_enum_values_fixed(void)
{
    CU_ASSERT_EQUAL(RK_OK, 0);
    CU_ASSERT_EQUAL(RK_E_ARG, 1);
    CU_ASSERT_EQUAL(RK_E_IO, 2);
    CU_ASSERT_EQUAL(RK_E_PARSE, 3);
    CU_ASSERT_EQUAL(RK_E_NOMEM, 4);
    CU_ASSERT_EQUAL(RK_E_GPU, 5);
    CU_ASSERT_EQUAL(RK_E_EMPTY, 6);
    CU_ASSERT_EQUAL(RK_E_DUPLICATE, 7);
    CU_ASSERT_EQUAL(RK_E_RANGE, 8);
    CU_ASSERT_EQUAL(RK_E_INTERNAL, 9);
    CU_ASSERT_EQUAL(RK_E_MODEL, 10);
    CU_ASSERT_EQUAL(RK_E_DIST, 11);
    CU_ASSERT_EQUAL(RK_E_CANCELLED, 12);
    CU_ASSERT_EQUAL(RK_STATUS_MAX_, 13);
}

static void test_messages_distinct_nonempty(void)
{
    for (int a = 0; a < N_STATUS; a++) {
        const char *ma = rk_strerror(all_status[a]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ma);
        CU_ASSERT(strlen(ma) > 0);
        CU_ASSERT(strchr(ma, '\n') == NULL);
        /* a real status never reads as the out-of-range text */
        CU_ASSERT_STRING_NOT_EQUAL(ma, "unknown status");
        for (int b = a + 1; b < N_STATUS; b++)
            CU_ASSERT_STRING_NOT_EQUAL(ma, rk_strerror(all_status[b]));
    }
}

static void test_messages_out_of_range(void)
{
    CU_ASSERT_STRING_EQUAL(rk_strerror(RK_STATUS_MAX_), "unknown status");
    CU_ASSERT_STRING_EQUAL(rk_strerror((rk_status)42), "unknown status");
    CU_ASSERT_STRING_EQUAL(rk_strerror((rk_status)-1), "unknown status");
    /* the message is static and constant: the same pointer each time */
    CU_ASSERT_PTR_EQUAL(rk_strerror(RK_E_PARSE), rk_strerror(RK_E_PARSE));
}

/* CONTRACT.md §1: 0 ok, 2 bad option, 3 bad data, 4 I/O, 5 GPU/runtime. */
static void test_exit_codes(void)
{
    CU_ASSERT_EQUAL(rk_status_exit_code(RK_OK), 0);
    CU_ASSERT_EQUAL(rk_status_exit_code(RK_E_ARG), 2);
    CU_ASSERT_EQUAL(rk_status_exit_code(RK_E_PARSE), 3);
    CU_ASSERT_EQUAL(rk_status_exit_code(RK_E_EMPTY), 3);
    CU_ASSERT_EQUAL(rk_status_exit_code(RK_E_DUPLICATE), 3);
    CU_ASSERT_EQUAL(rk_status_exit_code(RK_E_IO), 4);
    CU_ASSERT_EQUAL(rk_status_exit_code(RK_E_GPU), 5);
    CU_ASSERT_EQUAL(rk_status_exit_code(RK_E_NOMEM), 5);
    CU_ASSERT_EQUAL(rk_status_exit_code(RK_E_RANGE), 5);
    CU_ASSERT_EQUAL(rk_status_exit_code(RK_E_INTERNAL), 5);
    CU_ASSERT_EQUAL(rk_status_exit_code(RK_E_MODEL), 3);
    CU_ASSERT_EQUAL(rk_status_exit_code(RK_E_DIST), 5);
    CU_ASSERT_EQUAL(rk_status_exit_code(RK_E_CANCELLED), 130);
    /* no failure ever exits 0 */
    CU_ASSERT_NOT_EQUAL(rk_status_exit_code(RK_STATUS_MAX_), 0);
    CU_ASSERT_NOT_EQUAL(rk_status_exit_code((rk_status)42), 0);
}

static void test_error_set_formats(void)
{
    rk_error e;
    memset(&e, 'x', sizeof e);
    rk_status r = rk_error_set(&e, RK_E_PARSE, "%s:%lld: bad rating '%s' (%d fields)", "a.csv",
                               (long long)12, "x5", 3);
    CU_ASSERT_EQUAL(r, RK_E_PARSE);
    CU_ASSERT_EQUAL(e.status, RK_E_PARSE);
    CU_ASSERT_STRING_EQUAL(e.msg, "a.csv:12: bad rating 'x5' (3 fields)");

    /* a second call replaces the first */
    r = rk_error_set(&e, RK_E_IO, "cannot open %s", "b");
    CU_ASSERT_EQUAL(r, RK_E_IO);
    CU_ASSERT_EQUAL(e.status, RK_E_IO);
    CU_ASSERT_STRING_EQUAL(e.msg, "cannot open b");

    /* a '%' in an argument is not re-interpreted */
    rk_error_set(&e, RK_E_ARG, "%s", "100%s%n");
    CU_ASSERT_STRING_EQUAL(e.msg, "100%s%n");
}

static void test_error_set_null(void)
{
    /* err may be NULL: the status still comes back */
    CU_ASSERT_EQUAL(rk_error_set(NULL, RK_E_GPU, "cuda %d", 7), RK_E_GPU);
    CU_ASSERT_EQUAL(rk_error_set(NULL, RK_OK, "nothing"), RK_OK);
    rk_error_clear(NULL); /* must not crash */
    CU_PASS("NULL err accepted");
}

static void test_error_set_truncates(void)
{
    /* the rk_error is followed by a guard zone that must stay untouched */
    struct {
        rk_error e;
        unsigned char guard[64];
    } box;
    memset(&box, 0xA5, sizeof box);
    char longarg[3 * RK_ERROR_MSG_CAP];
    for (size_t k = 0; k < sizeof longarg - 1; k++) longarg[k] = (char)('a' + (int)(k % 26));
    longarg[sizeof longarg - 1] = '\0';

    rk_status r = rk_error_set(&box.e, RK_E_PARSE, "file.csv:%d: %s", 9, longarg);
    CU_ASSERT_EQUAL(r, RK_E_PARSE);
    CU_ASSERT_EQUAL(box.e.status, RK_E_PARSE);
    /* NUL-terminated within the buffer, filled to capacity - 1 */
    CU_ASSERT_EQUAL(strnlen(box.e.msg, RK_ERROR_MSG_CAP), (size_t)RK_ERROR_MSG_CAP - 1);
    CU_ASSERT_EQUAL(box.e.msg[RK_ERROR_MSG_CAP - 1], '\0');
    /* the beginning is what was formatted */
    CU_ASSERT_EQUAL(strncmp(box.e.msg, "file.csv:9: abcdefghijklmnopqrstuvwxyzabc", 41), 0);
    /* the last kept character is the one at that position of the full text */
    size_t prefix = strlen("file.csv:9: ");
    size_t last = RK_ERROR_MSG_CAP - 2;
    CU_ASSERT_EQUAL(box.e.msg[last], (char)('a' + (int)((last - prefix) % 26)));
    int guard_ok = 1;
    for (size_t k = 0; k < sizeof box.guard; k++) guard_ok &= box.guard[k] == 0xA5;
    CU_ASSERT(guard_ok);

    /* exactly cap - 1 characters fit whole */
    char fit[RK_ERROR_MSG_CAP];
    memset(fit, 'z', sizeof fit - 1);
    fit[sizeof fit - 1] = '\0';
    rk_error_set(&box.e, RK_E_ARG, "%s", fit);
    CU_ASSERT_STRING_EQUAL(box.e.msg, fit);
}

static void test_error_clear(void)
{
    rk_error e;
    rk_error_set(&e, RK_E_NOMEM, "out of memory for %d bytes", 5);
    rk_error_clear(&e);
    CU_ASSERT_EQUAL(e.status, RK_OK);
    CU_ASSERT_STRING_EQUAL(e.msg, "");
}

/* The forwarding helpers of rk_status.h. */
static rk_status fwd_inner(rk_status s, int *reached)
{
    RK_FORWARD(s);
    *reached = 1;
    return RK_OK;
}

static rk_status alloc_check(void *p, rk_error *err)
{
    RK_CHECK_ALLOC(p, err);
    return RK_OK;
}

static void test_forward_macros(void)
{
    int reached = 0;
    CU_ASSERT_EQUAL(fwd_inner(RK_E_IO, &reached), RK_E_IO);
    CU_ASSERT_EQUAL(reached, 0);
    CU_ASSERT_EQUAL(fwd_inner(RK_OK, &reached), RK_OK);
    CU_ASSERT_EQUAL(reached, 1);

    rk_error e;
    rk_error_clear(&e);
    int x = 0;
    CU_ASSERT_EQUAL(alloc_check(&x, &e), RK_OK);
    CU_ASSERT_EQUAL(e.status, RK_OK);
    CU_ASSERT_EQUAL(alloc_check(NULL, &e), RK_E_NOMEM);
    CU_ASSERT_EQUAL(e.status, RK_E_NOMEM);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "out of memory"));
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "test_status.c"));
    CU_ASSERT_EQUAL(alloc_check(NULL, NULL), RK_E_NOMEM);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"enum values are fixed", test_enum_values_fixed},
        {"messages are distinct and non-empty", test_messages_distinct_nonempty},
        {"out-of-range status message", test_messages_out_of_range},
        {"exit codes of CONTRACT.md §9", test_exit_codes},
        {"rk_error_set formats", test_error_set_formats},
        {"rk_error_set with NULL err", test_error_set_null},
        {"rk_error_set truncates safely", test_error_set_truncates},
        {"rk_error_clear", test_error_clear},
        {"RK_FORWARD and RK_CHECK_ALLOC", test_forward_macros},
        {NULL, NULL},
    };
    return rk_test_main("rk_status", cases);
}
