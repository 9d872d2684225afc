/* Unit tests of the loader on hostile input (etl/rk_parse.c, rk_load.c):
 * ratings a float cannot hold, NUL bytes, a quote open at the end of the
 * file, an empty directory, a file that changes size while it is read.
 * Each bad line is tried through the fast path and through libcsv alone. */
#define _POSIX_C_SOURCE 200809L
#include "rk_load.h"
#include "test_load_util.h"

#include <float.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Load buf strictly, with and without the fast path, expecting a parse error
 * whose message is exactly `want`. */
static void expect_bad(const char *buf, size_t len, const char *want)
{
    for (int slow = 0; slow < 2; slow++) {
        rk_load_opts o;
        rk_dataset d;
        rk_error e = {0};
        rk_load_opts_default(&o);
        o.no_fast_path = slow;
        rk_status s = rk_load_buffer("b.csv", buf, len, &o, &d, &e);
        if (s != RK_E_PARSE || strcmp(e.msg, want) != 0)
            fprintf(stderr, "\nslow=%d: status %d \"%s\", want \"%s\"\n", slow, s, e.msg, want);
        CU_ASSERT_EQUAL(s, RK_E_PARSE);
        CU_ASSERT_STRING_EQUAL(e.msg, want);
        CU_ASSERT_PTR_NULL(d.users);
    }
}

/* Load buf with skip_bad_lines: `ratings` rows, `skipped` lines skipped,
 * the first at line `first`. */
static void expect_skip(const char *buf, size_t len, rk_format fmt, int64_t ratings, int64_t skipped, int64_t first)
{
    for (int slow = 0; slow < 2; slow++) {
        rk_load_opts o;
        rk_dataset d;
        rk_error e = {0};
        rk_load_opts_default(&o);
        o.format = fmt;
        o.no_fast_path = slow;
        o.skip_bad_lines = 1;
        CU_ASSERT_EQUAL_FATAL(rk_load_buffer("b", buf, len, &o, &d, &e), RK_OK);
        CU_ASSERT_EQUAL(d.train.n, ratings);
        CU_ASSERT_EQUAL(d.train_report.skipped_lines, skipped);
        CU_ASSERT_EQUAL(d.train_report.bad[0].line, first);
        rk_dataset_free(&d);
    }
}

/* The float's range: FLT_MAX rounds from up to 2^128 - 2^103 (exclusive);
 * from there on a value would be stored as infinity. */
static void test_float_range(void)
{
    static const struct {
        const char *s;
        int rc;
    } cases[] = {
        {"3.4028235e38", 0},  /* rounds to FLT_MAX */
        {"-3.4028235e38", 0},
        {"3.402823567797336e38", 0}, /* below the midpoint by more than a double's ulp */
        {"340282356779733661637539395458142568448", 3}, /* the midpoint: ties to even, inf */
        {"3.4028236e38", 3},
        {"1e39", 3},
        {"-1e39", 3},
        {"1e308", 3},
        {"1e999", 2},
        {"1e-50", 0}, /* underflows to 0 as a float: finite */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        double v = 0.0;
        int rc = rk_parse_rating(cases[k].s, strlen(cases[k].s), &v);
        if (rc != cases[k].rc) fprintf(stderr, "\n%s: rc %d, want %d\n", cases[k].s, rc, cases[k].rc);
        CU_ASSERT_EQUAL(rc, cases[k].rc);
        if (rc == 0) {
            float f = (float)v;
            CU_ASSERT(f == f && f - f == 0.0f); /* finite */
        }
    }
    double v = 0.0;
    CU_ASSERT_EQUAL(rk_parse_rating("3.4028235e38", 12, &v), 0);
    CU_ASSERT_EQUAL((float)v, FLT_MAX);

    const char *b = "u,i,r\n1,1,4\n1,2,1e39\n";
    expect_bad(b, strlen(b), "b.csv:3: rating is not a finite number a float holds (|r| < 3.4e38): \"1e39\"");
    b = "1,1,4\n1,2,4000000000000000000000000000000000000000\n"; /* plain digits: the fast path's layout */
    expect_bad(b, strlen(b), "b.csv:2: rating is not a finite number a float holds (|r| < 3.4e38): "
                             "\"4000000000000000000000000000000000000000\"");
    b = "1,1,4\n1,2,1e39\n2,1,3\n";
    expect_skip(b, strlen(b), RK_FMT_AUTO, 2, 1, 2);
}

/* A NUL byte makes its line bad, in whatever field, read or not. */
static void test_nul_bytes(void)
{
    static const char a[] = "u,i,r,t\n1,1,4,1\n1\0002,2,3,1\n";
    expect_bad(a, sizeof a - 1, "b.csv:3: a NUL byte in field 1 (binary or compressed data?)");
    static const char b[] = "u,i,r,t\n1,1,4,1\n1,2,3\000,1\n";
    expect_bad(b, sizeof b - 1, "b.csv:3: a NUL byte in field 3 (binary or compressed data?)");
    static const char c[] = "u,i,r,t\n1,1,4,1\n1,2,3,1\0\n"; /* the time is not kept */
    expect_bad(c, sizeof c - 1, "b.csv:3: a NUL byte in field 4 (binary or compressed data?)");
    static const char d[] = "u,i,r,t\n1,1,4,1\n\"1\0\",2,3,1\n"; /* quoted */
    expect_bad(d, sizeof d - 1, "b.csv:3: a NUL byte in field 1 (binary or compressed data?)");
    static const char e[] = "1,1,4\n2\0,1,3\n2,2,3\n";
    expect_skip(e, sizeof e - 1, RK_FMT_AUTO, 2, 1, 2);
    /* netflix: a movie line with a NUL leaves its ratings without a movie;
     * they must not go to the movie before */
    static const char f[] = "1:\n1,3,2005-01-01\n2\0:\n2,4,2005-01-02\n3,5,2005-01-03\n3:\n4,1,2005-01-04\n";
    expect_skip(f, sizeof f - 1, RK_FMT_NETFLIX, 2, 3, 3);
}

/* A quote still open where the file ends: said so, not "expected 3 fields". */
static void test_quote_at_eof(void)
{
    const char *b = "u,i,r\n1,1,4\n2,\"2,3";
    expect_bad(b, strlen(b), "b.csv:3: a quoted field is not closed at the end of the file");
    b = "u,i,r\n1,1,4\n2,\"2\",3"; /* closed: fine */
    for (int slow = 0; slow < 2; slow++) {
        rk_load_opts o;
        rk_dataset d;
        rk_load_opts_default(&o);
        o.no_fast_path = slow;
        CU_ASSERT_EQUAL_FATAL(rk_load_buffer("b", b, strlen(b), &o, &d, NULL), RK_OK);
        CU_ASSERT_EQUAL(d.train.n, 2);
        rk_dataset_free(&d);
    }
}

static void test_empty_dir(void)
{
    char dir[] = "/tmp/rk_test_edir_XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    const char *p = dir;
    rk_load_opts o;
    rk_dataset d;
    rk_error e = {0};
    char want[600];
    rk_load_opts_default(&o);
    o.format = RK_FMT_NETFLIX;
    CU_ASSERT_EQUAL(rk_load_dataset(&p, 1, NULL, &o, &d, &e), RK_E_EMPTY);
    snprintf(want, sizeof want, "%s: the directory holds no rating file (--dir-glob PATTERN picks files by name)", dir);
    CU_ASSERT_STRING_EQUAL(e.msg, want);
    rmdir(dir);
}

/* ---- a file that changes size while it is read ---------------------------------- */

typedef struct resize {
    const char *path;
    int calls;
    int grow;      /* 1: append a line, 0: truncate */
} resize;

/* The progress callback runs between blocks: change the file there. */
static int on_block(void *ud, const char *stage, double done, double total, const char *unit)
{
    resize *r = ud;
    (void)stage, (void)done, (void)total, (void)unit;
    if (r->calls++ != 0) return 0;
    if (r->grow) {
        FILE *fp = fopen(r->path, "ab");
        if (fp != NULL) {
            fputs("9,9,1\n", fp);
            fclose(fp);
        }
    } else if (truncate(r->path, 300000) != 0) {
        perror("truncate");
    }
    return 0;
}

static void test_changed_size(void)
{
    char dir[] = "/tmp/rk_test_resize_XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    char path[600];
    snprintf(path, sizeof path, "%s/r.csv", dir);
    for (int grow = 0; grow < 2; grow++) {
        FILE *fp = fopen(path, "wb");
        CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
        long size = 0;
        for (int k = 0; size < 1000000; k++) size += fprintf(fp, "%d,%d,%d\n", k / 20, k % 977, k % 5 + 1);
        fclose(fp);
        resize r = {path, 0, grow};
        rk_load_opts o;
        rk_dataset d;
        rk_error e = {0};
        char want[700];
        rk_load_opts_default(&o);
        o.threads = 1;
        o.chunk_bytes = 16 << 10; /* blocks of 64 KiB: many of them */
        o.progress = on_block;
        o.progress_ud = &r;
        const char *p = path;
        CU_ASSERT_EQUAL(rk_load_dataset(&p, 1, NULL, &o, &d, &e), RK_E_IO);
        snprintf(want, sizeof want, "%s changed size while it was read (%ld bytes at open)", path, size);
        if (strcmp(e.msg, want) != 0) fprintf(stderr, "\ngot  %s\nwant %s\n", e.msg, want);
        CU_ASSERT_STRING_EQUAL(e.msg, want);
        CU_ASSERT_PTR_NULL(d.users);
        CU_ASSERT(r.calls > 0);
        /* unchanged, the same file loads */
        o.progress = NULL;
        struct stat sb;
        CU_ASSERT_EQUAL_FATAL(stat(path, &sb), 0);
        CU_ASSERT_EQUAL_FATAL(rk_load_dataset(&p, 1, NULL, &o, &d, &e), RK_OK);
        CU_ASSERT_EQUAL(d.train_report.bytes, (int64_t)sb.st_size);
        rk_dataset_free(&d);
    }
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"id ranges checked from here", ranges_check_from_here},
        {"ratings a float cannot hold", test_float_range},
        {"NUL bytes", test_nul_bytes},
        {"a quote open at the end", test_quote_at_eof},
        {"an empty directory", test_empty_dir},
        {"a file that changes size", test_changed_size},
        {"the loader's id ranges were right", ranges_were_right},
        {NULL, NULL},
    };
    return rk_test_main("load_bad", cases);
}
