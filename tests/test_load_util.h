/* test_load_util.h — what the loader tests share: fixtures, a growing string,
 * rendering a data set as text, and checks of a load. */
#ifndef RK_TEST_LOAD_UTIL_H
#define RK_TEST_LOAD_UTIL_H

#include "rk_load.h"
#include "rk_load_internal.h"
#include "test_util.h"
#include "test_ranges.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------------- */

static inline const char *srcdir(void)
{
    const char *s = getenv("top_srcdir");
    return s != NULL ? s : ".";
}

static inline char *fixture(const char *rel)
{
    static char path[4][1024];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/tests/data/%s", srcdir(), rel);
    return path[k];
}

typedef struct sbuf {
    char *s;
    size_t n, cap;
} sbuf;

static inline void sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int w = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (w >= 0 && (size_t)w < b->cap - b->n) {
            b->n += (size_t)w;
            return;
        }
        b->cap = b->cap * 2 + (size_t)w + 64;
        b->s = realloc(b->s, b->cap);
        if (b->s == NULL) abort();
    }
}

/* The triples as "user,item,rating[,time]" lines with raw ids. */
static inline char *render(const rk_dataset *d, const rk_triples *t)
{
    sbuf b = {calloc(1, 64), 0, 64};
    char u[RK_ID_MAX + 1], i[RK_ID_MAX + 1];
    for (int64_t k = 0; k < t->n; k++) {
        rk_ids_format(d->users, t->user[k], u, sizeof u);
        rk_ids_format(d->items, t->item[k], i, sizeof i);
        sb_printf(&b, "%s,%s,%g", u, i, (double)t->rating[k]);
        if (t->time != NULL) sb_printf(&b, ",%lld", (long long)t->time[k]);
        sb_printf(&b, "\n");
    }
    return b.s;
}

static inline void expect_text(const char *got, const char *want, const char *what)
{
    if (strcmp(got, want) != 0) fprintf(stderr, "\n%s: got\n%s-- want\n%s--\n", what, got, want);
    CU_ASSERT_STRING_EQUAL(got, want);
}

static inline void check_buf(const char *buf, const rk_load_opts *o, const char *want, int64_t lines)
{
    rk_dataset d;
    rk_error e = {0};
    rk_status s = rk_load_buffer("buf", buf, strlen(buf), o, &d, &e);
    if (s != RK_OK) fprintf(stderr, "\nload failed: %s\n", e.msg);
    CU_ASSERT_EQUAL_FATAL(s, RK_OK);
    char *got = render(&d, &d.train);
    expect_text(got, want, buf);
    if (lines >= 0) CU_ASSERT_EQUAL(d.train_report.lines, lines);
    CU_ASSERT_EQUAL(d.train_report.ratings, d.train.n);
    free(got);
    rk_dataset_free(&d);
}

static inline void check_file(const char *path, const rk_load_opts *o, const char *want, rk_format fmt)
{
    rk_dataset d;
    rk_error e = {0};
    rk_status s = rk_load_dataset(&path, 1, NULL, o, &d, &e);
    if (s != RK_OK) fprintf(stderr, "\n%s: %s\n", path, e.msg);
    CU_ASSERT_EQUAL_FATAL(s, RK_OK);
    char *got = render(&d, &d.train);
    expect_text(got, want, path);
    CU_ASSERT_EQUAL(d.train_report.format, fmt);
    free(got);
    rk_dataset_free(&d);
}

/* Load expecting failure; @return the message (static). */
static inline const char *load_fail(const char *path, const rk_load_opts *o, rk_status want)
{
    static rk_error e;
    rk_dataset d;
    memset(&e, 0, sizeof e);
    rk_status s = rk_load_dataset(&path, 1, NULL, o, &d, &e);
    if (s != want) fprintf(stderr, "\n%s: status %d (%s), want %d\n", path, s, e.msg, want);
    CU_ASSERT_EQUAL(s, want);
    CU_ASSERT_PTR_NULL(d.users);
    CU_ASSERT_EQUAL(d.train.n, 0);
    return e.msg;
}

static inline int starts_with(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static inline void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
    fputs(text, fp);
    fclose(fp);
}

/* A new directory from the mkdtemp template dir, and the paths of the files
 * a and b in it (cap bytes each). */
static inline void temp_pair(char *dir, const char *a, char *pa, const char *b, char *pb, size_t cap)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    snprintf(pa, cap, "%s/%s", dir, a);
    snprintf(pb, cap, "%s/%s", dir, b);
}

/* ---- formats from buffers ------------------------------------------------------ */

#endif /* RK_TEST_LOAD_UTIL_H */
