/* Small files of CSV records through libcsv (rk_records.h). */
#define _POSIX_C_SOURCE 200809L
#include "rk_records.h"
#include "rk_load_internal.h"

#include <csv.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A bounded line reader: lines of at most RK_RECORDS_LINE_MAX bytes. */
typedef struct lines {
    FILE *fp;
    char *buf;
    size_t cap, len, pos; /* buf[pos, len) not yet handed out */
    int eof;
} lines;

/* The next line, its LF included when it has one, into *p / *n.
 * @return 1, 0 at the end, -1 on a read error (errno), -2 for a line
 * longer than the limit. */
static int next_line(lines *L, const char **p, size_t *n)
{
    for (;;) {
        const char *nl = L->len > L->pos ? memchr(L->buf + L->pos, '\n', L->len - L->pos) : NULL;
        if (nl != NULL || (L->eof && L->len > L->pos)) {
            size_t end = nl != NULL ? (size_t)(nl - L->buf) + 1 : L->len;
            if (end - L->pos > RK_RECORDS_LINE_MAX) return -2;
            *p = L->buf + L->pos;
            *n = end - L->pos;
            L->pos = end;
            return 1;
        }
        if (L->eof) return 0;
        if (L->len - L->pos > RK_RECORDS_LINE_MAX) return -2;
        if (L->len > L->pos) memmove(L->buf, L->buf + L->pos, L->len - L->pos);
        L->len -= L->pos;
        L->pos = 0;
        if (L->cap - L->len < 65536) {
            size_t cap = L->cap * 2 + 65536;
            char *b = realloc(L->buf, cap);
            if (b == NULL) return -1;
            L->buf = b;
            L->cap = cap;
        }
        size_t got = fread(L->buf + L->len, 1, L->cap - L->len, L->fp);
        if (got == 0) {
            if (ferror(L->fp)) return -1;
            L->eof = 1;
        }
        L->len += got;
    }
}

#define RK_CSV_FIELD_BEGUN 2 /* libcsv's csv_parser.pstate inside a field (libcsv.c) */

/* 1 when libcsv is inside a quoted field: a line break there is data. */
static int quote_open(const struct csv_parser *p)
{
    return p->quoted && p->pstate == RK_CSV_FIELD_BEGUN;
}

typedef struct rst {
    const char *path;
    rk_records_fn fn;
    void *ud;
    rk_error *err;
    rk_status s;
    rk_record r;
    char f[RK_RECORDS_MAXF][RK_ID_MAX + 1];
    int64_t line, row_line;
    int done;
} rst;

static void stop(rst *s, rk_status st)
{
    if (s->s == RK_OK) s->s = st;
    s->done = 1;
}

static void cb_field(void *field, size_t n, void *data)
{
    rst *s = data;
    if (s->done) return;
    if (s->r.n == RK_RECORDS_MAXF) {
        stop(s, rk_error_set(s->err, RK_E_PARSE, "%s:%lld: more than %d fields", s->path, (long long)s->row_line,
                             RK_RECORDS_MAXF));
        return;
    }
    if (memchr(field, '\0', n) != NULL) {
        stop(s, rk_error_set(s->err, RK_E_PARSE, "%s:%lld: a NUL byte in field %d", s->path, (long long)s->row_line,
                             s->r.n + 1));
        return;
    }
    if (n > RK_ID_MAX) {
        stop(s, rk_error_set(s->err, RK_E_PARSE, "%s:%lld: field %d is longer than %d bytes: \"%.40s...\"", s->path,
                             (long long)s->row_line, s->r.n + 1, RK_ID_MAX, (const char *)field));
        return;
    }
    memcpy(s->f[s->r.n], field, n);
    s->r.f[s->r.n] = s->f[s->r.n];
    s->r.len[s->r.n] = n;
    s->r.n++;
}

static void cb_row(int ch, void *data)
{
    rst *s = data;
    (void)ch;
    /* a line of spaces is one empty field: blank */
    if (!s->done && s->r.n > 0 && !(s->r.n == 1 && s->r.len[0] == 0)) {
        s->r.line = s->row_line;
        rk_status st = s->fn(s->ud, &s->r, s->err);
        if (st != RK_OK) stop(s, st);
    }
    s->r.n = 0;
}

/* A comma, or a tab when the line holds a tab and no comma. */
static unsigned char delimiter_of(const char *p, size_t n)
{
    return memchr(p, ',', n) == NULL && memchr(p, '\t', n) != NULL ? '\t' : ',';
}

static int blank(const char *p, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (p[k] != ' ' && p[k] != '\t' && p[k] != '\r' && p[k] != '\n') return 0;
    return 1;
}

static rk_status parse_lines(rst *s, lines *L, struct csv_parser *cp)
{
    int first = 1;
    for (;;) {
        const char *p;
        size_t n;
        const int got = next_line(L, &p, &n);
        if (got == -1) return rk_error_set(s->err, RK_E_IO, "cannot read %s: %s", s->path, strerror(errno ? errno : EIO));
        if (got == -2)
            return rk_error_set(s->err, RK_E_PARSE, "%s:%lld: a line longer than %zu bytes (not a file of ids?)",
                                s->path, (long long)s->line + 1, RK_RECORDS_LINE_MAX);
        if (got == 0) break;
        s->line++;
        if (s->line == 1 && n >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) { /* a UTF-8 byte-order mark */
            p += 3;
            n -= 3;
        }
        if (s->r.n == 0 && !quote_open(cp)) s->row_line = s->line;
        if (first && !blank(p, n)) {
            csv_set_delim(cp, delimiter_of(p, n));
            first = 0;
        }
        if (csv_parse(cp, p, n, cb_field, cb_row, s) != n)
            return rk_error_set(s->err, RK_E_NOMEM, "out of memory reading %s", s->path);
        if (s->done) return s->s;
    }
    if (quote_open(cp))
        return rk_error_set(s->err, RK_E_PARSE, "%s:%lld: a quoted field is not closed at the end of the file",
                            s->path, (long long)s->row_line);
    if (csv_fini(cp, cb_field, cb_row, s) != 0) return rk_error_set(s->err, RK_E_INTERNAL, "%s: libcsv failed", s->path);
    return s->s;
}

rk_status rk_records_read(const char *path, rk_records_fn fn, void *ud, int64_t *n_lines, rk_error *err)
{
    lines L;
    memset(&L, 0, sizeof L);
    L.fp = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (L.fp == NULL) return rk_error_set(err, RK_E_IO, "cannot open %s: %s", path, strerror(errno));
    rst *s = calloc(1, sizeof *s);
    struct csv_parser cp;
    rk_status st;
    if (s == NULL || csv_init(&cp, CSV_APPEND_NULL) != 0) {
        free(s);
        if (L.fp != stdin) fclose(L.fp);
        return rk_error_set(err, RK_E_NOMEM, "out of memory reading %s", path);
    }
    csv_set_realloc_func(&cp, rk_csv_realloc);
    s->path = path;
    s->fn = fn;
    s->ud = ud;
    s->err = err;
    st = parse_lines(s, &L, &cp);
    if (n_lines != NULL) *n_lines = s->line;
    csv_free(&cp);
    free(s);
    free(L.buf);
    if (L.fp != stdin) fclose(L.fp);
    return st;
}
