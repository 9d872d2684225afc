/* rk_parse.c — one chunk of whole lines -> rows, through libcsv.
 *
 * Each chunk gets its own libcsv parser, so chunks parse in parallel.  When
 * the file's layout allows the fast path (rk_parse_fast.c), it takes the plain
 * numeric lines and hands every other line, whole, to libcsv, which decides
 * it exactly as it would without the fast path.  Otherwise a chunk without a
 * quote character is fed to libcsv in one call: every newline then ends a row
 * (CSV_REPALL_NL reports blank lines too), so line numbers are exact.  A chunk
 * with a quote is fed line by line, and a line whose newline libcsv swallowed
 * (a quoted field left open) is a bad line.  Either way the result of a line
 * depends only on its bytes, whatever the chunking and whichever path.
 */
#define _POSIX_C_SOURCE 200809L
#include "rk_load_internal.h"
#include "rk_mem.h"

#include <csv.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

/* ---- numbers ----------------------------------------------------------------- */

static int rating_slow(const char *s, size_t n, double *out)
{
    char small[128], *buf = small;
    int odd = 0;
    if (n >= sizeof small) {
        buf = malloc(n + 1);
        if (buf == NULL) return 1;
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    for (size_t k = 0; k < n; k++)
        if (strchr("0123456789.eE+-", buf[k]) == NULL) odd = 1;
    char *end;
    double d = n > 0 ? strtod(buf, &end) : 0.0;
    int rc = 0;
    if (n == 0 || end != buf + n) rc = 1;
    else if (!isfinite(d)) rc = 2;  /* nan, inf, 1e999 */
    else if (odd) rc = 1;           /* hexadecimal and the like */
    if (buf != small) free(buf);
    if (rc == 0) *out = d;
    return rc;
}

/* The smallest magnitude that rounds to infinity as a float: FLT_MAX plus
 * half its ulp (2^128 - 2^103; the tie rounds to even, i.e. up). */
#define RK_FLOAT_OVERFLOW 0x1.ffffffp+127

/* The plain decimals exactly (rk_parse_rating_plain: below 2^53, so always
 * within a float's range); everything else goes to strtod.  Ratings are
 * stored as floats: a finite double that the float conversion would turn
 * into infinity (1e39) is refused here, for both parse paths. */
/* libcsv grows a field's buffer by a fixed block (128 bytes) per call: a
 * 10 MB field is 80,000 reallocs, each a copy where realloc cannot grow in
 * place (always under ASan: minutes).  Growing the capacity geometrically
 * makes it a few dozen. */
void *rk_csv_realloc(void *ptr, size_t n)
{
    if (ptr != NULL && malloc_usable_size(ptr) >= n) return ptr;
    size_t want = ptr != NULL ? 2 * malloc_usable_size(ptr) : 0;
    return realloc(ptr, want > n ? want : n);
}

int rk_parse_rating(const char *s, size_t n, double *out)
{
    if (rk_parse_rating_plain(s, n, out) == 0) return 0;
    double d;
    int rc = rating_slow(s, n, &d);
    if (rc != 0) return rc;
    if (fabs(d) >= RK_FLOAT_OVERFLOW) return 3;
    *out = d;
    return 0;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; H. Hinnant's method). */
static int64_t days_from_civil(int64_t y, unsigned mo, unsigned d)
{
    y -= mo <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (mo > 2 ? mo - 3 : mo + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static int digits(const char *s, size_t n, unsigned *v)
{
    unsigned x = 0;
    for (size_t k = 0; k < n; k++) {
        unsigned d = (unsigned)(unsigned char)s[k] - '0';
        if (d > 9) return 0;
        x = x * 10 + d;
    }
    *v = x;
    return 1;
}

int rk_parse_time(const char *s, size_t n, int64_t *out)
{
    if (n == 10 && s[4] == '-' && s[7] == '-') {
        unsigned y, mo, d;
        static const unsigned char mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        if (!digits(s, 4, &y) || !digits(s + 5, 2, &mo) || !digits(s + 8, 2, &d)) return 1;
        if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1]) return 1;
        if (mo == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) return 1;
        *out = days_from_civil((int64_t)y, mo, d) * 86400;
        return 0;
    }
    return rk_parse_time_int(s, n, out);
}

static void chunk_reset(rk_chunk *c)
{
    rk_rows *h = c->home;
    c->u = h->u + c->base;
    c->i = h->i + c->base;
    c->r = h->r + c->base;
    c->t = h->t != NULL ? h->t + c->base : NULL;
    c->n = 0;
    c->cap = c->room;
    c->spilled = 0;
    c->own.alen = 0;
    free(c->utag); /* keep the all-integer case free of tags per chunk */
    free(c->itag);
    c->utag = c->itag = NULL;
    c->nbad = 0;
    c->nbad_kept = 0;
    c->reason[0] = '\0';
    c->nlead = 0;
    c->mv_state = RK_MV_NONE;
    c->mv_tag = 0;
    c->mv_v = 0;
    c->open_at = -1;
    c->open_lines = 0;
    c->status = RK_OK;
}

void rk_chunk_free(rk_chunk *c)
{
    if (c == NULL) return;
    rk_rows_free(&c->own);
    free(c->utag);
    free(c->itag);
    free(c->lead_line);
    memset(c, 0, sizeof *c);
}

/* Tag arrays for the chunk's rows, zero-filled.  0 or -1. */
static int chunk_want_tags(rk_chunk *c)
{
    if (c->utag != NULL) return 0;
    size_t cap = c->cap > 0 ? (size_t)c->cap : 1;
    c->utag = calloc(cap, 1);
    c->itag = calloc(cap, 1);
    if (c->utag == NULL || c->itag == NULL) {
        free(c->utag);
        free(c->itag);
        c->utag = c->itag = NULL;
        return -1;
    }
    return 0;
}

int rk_chunk_grow(rk_chunk *c)
{
    rk_rows *o = &c->own;
    int want_time = c->t != NULL;
    if (c->n < c->cap) return 0;
    if (rk_rows_reserve(o, c->n + 1, want_time) != 0) return -1;
    if (!c->spilled) { /* a lone CR made more rows than lines: rare */
        memcpy(o->u, c->u, (size_t)c->n * sizeof *o->u);
        memcpy(o->i, c->i, (size_t)c->n * sizeof *o->i);
        memcpy(o->r, c->r, (size_t)c->n * sizeof *o->r);
        if (want_time) memcpy(o->t, c->t, (size_t)c->n * sizeof *o->t);
        c->spilled = 1;
    }
    c->u = o->u;
    c->i = o->i;
    c->r = o->r;
    c->t = want_time ? o->t : NULL;
    if (c->utag != NULL) {
        uint8_t *a = realloc(c->utag, (size_t)o->cap), *b = a != NULL ? realloc(c->itag, (size_t)o->cap) : NULL;
        if (a != NULL) c->utag = a;
        if (b == NULL) return -1;
        c->itag = b;
        memset(c->utag + c->cap, 0, (size_t)(o->cap - c->cap));
        memset(c->itag + c->cap, 0, (size_t)(o->cap - c->cap));
    }
    c->cap = o->cap;
    return 0;
}

/* ---- the libcsv callbacks ---------------------------------------------------- */

typedef struct rk_id_slot {
    int str;
    size_t len;
    int64_t v;
    char s[RK_ID_MAX + 1];
} rk_id_slot;

typedef struct pst {
    const rk_fmt *f;
    rk_chunk *c;
    int64_t line;     /* 0-based line in the chunk */
    int nf;           /* fields of the row so far */
    int bad;          /* the row has a reason in why */
    int colon;        /* netflix: field 0 ended with ':' */
    int nul;          /* a field holds a NUL byte (1-based field, 0: none) */
    int saw_nl, discard, stop;
    rk_id_slot u, i;
    double r;
    int64_t t;
    char why[RK_REASON_CAP];
    int mv, mv_tag;   /* netflix: the current movie */
    int64_t mv_v;
} pst;

static void row_bad(pst *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void row_bad(pst *s, const char *fmt, ...)
{
    if (s->bad) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->why, sizeof s->why, fmt, ap);
    va_end(ap);
    s->bad = 1;
}

/* Record the current line as bad (reason in s->why when why is NULL). */
static void line_bad(pst *s, const char *why)
{
    rk_chunk *c = s->c;
    c->nbad++;
    if (c->nbad_kept < RK_LOAD_BAD_KEPT) c->bad[c->nbad_kept++] = s->line;
    if (c->nbad == 1) snprintf(c->reason, sizeof c->reason, "%s", why != NULL ? why : s->why);
    if (!s->f->skip_bad) s->stop = 1;
}

static void fail(pst *s, rk_status st)
{
    if (s->c->status == RK_OK) s->c->status = st;
    s->stop = 1;
}

#define SHOW 40 /* bytes of a field quoted in a message */
#define RK_CSV_FIELD_BEGUN 2 /* libcsv's csv_parser.pstate inside a field (libcsv.c) */

static void take_id(pst *s, rk_id_slot *d, const char *p, size_t n, const char *what)
{
    if (n == 0) {
        row_bad(s, "empty %s", what);
        return;
    }
    if (n > RK_ID_MAX) {
        row_bad(s, "%s longer than %d bytes: \"%.*s...\"", what, RK_ID_MAX, SHOW, p);
        return;
    }
    if (rk_parse_canon_int(p, n, &d->v)) {
        d->str = 0;
    } else {
        d->str = 1;
        d->len = n;
        memcpy(d->s, p, n);
    }
}

static void take_rating(pst *s, const char *p, size_t n)
{
    int rc = rk_parse_rating(p, n, &s->r);
    int w = n > SHOW ? SHOW : (int)n;
    if (rc == 1)
        row_bad(s, "rating is not a number: \"%.*s\"", w, p);
    else if (rc == 2)
        row_bad(s, "rating is not finite: \"%.*s\"", w, p);
    else if (rc == 3)
        row_bad(s, "rating is not a finite number a float holds (|r| < 3.4e38): \"%.*s\"", w, p);
    else if (s->f->have_scale && !(s->r >= s->f->smin && s->r <= s->f->smax))
        row_bad(s, "rating %.*s is outside the rating scale %g:%g", w, p, s->f->smin, s->f->smax);
}

static void cb_field(void *field, size_t n, void *data)
{
    pst *s = data;
    const rk_fmt *f = s->f;
    static char empty[1];
    if (field == NULL) {
        if (f->collapse) return; /* runs of blanks separate one field */
        field = empty;
    }
    int k = s->nf++;
    if (s->stop || s->discard) return;
    const char *p = field;
    /* a NUL byte is never data (binary or compressed input, a corrupt
     * copy): the line is bad whatever the field, read or not */
    if (n > 0 && memchr(p, '\0', n) != NULL) {
        if (s->nul == 0) s->nul = k + 1;
        if (k == f->cu && f->netflix && p[n - 1] == ':') s->colon = 1; /* a movie line */
        return;
    }
    if (k == f->cu) {
        if (f->netflix && n > 0 && p[n - 1] == ':') {
            s->colon = 1;
            take_id(s, &s->i, p, n - 1, "movie id");
        } else {
            take_id(s, &s->u, p, n, "user id");
        }
    } else if (k == f->ci) {
        take_id(s, &s->i, p, n, "item id");
    } else if (k == f->cr) {
        take_rating(s, p, n);
    } else if (k == f->ct) {
        if (f->want_time && rk_parse_time(p, n, &s->t) != 0)
            row_bad(s, "time is not an integer or a YYYY-MM-DD date: \"%.*s\"",
                    n > SHOW ? SHOW : (int)n, p);
    } else if (f->dat && (k & 1) && n != 0) {
        row_bad(s, "expected user::item::rating::timestamp");
    }
}

/* Row c->n's id (room for the row is made). */
static int put_id(pst *s, const rk_id_slot *d, int64_t *v, uint8_t **tag)
{
    rk_chunk *c = s->c;
    if (d->str) {
        if (chunk_want_tags(c) != 0) return -1;
        int64_t off = rk_rows_put_string(&c->own, d->s, d->len);
        if (off < 0) return -1;
        v[c->n] = off;
        (*tag)[c->n] = 1;
    } else {
        v[c->n] = d->v;
        if (*tag != NULL) (*tag)[c->n] = 0;
    }
    return 0;
}

static void push_row(pst *s, int netflix_item)
{
    rk_chunk *c = s->c;
    if (c->n == c->cap && rk_chunk_grow(c) != 0) {
        fail(s, RK_E_NOMEM);
        return;
    }
    if (put_id(s, &s->u, c->u, &c->utag) != 0) {
        fail(s, RK_E_NOMEM);
        return;
    }
    if (netflix_item) {
        if (s->mv_tag) {
            if (chunk_want_tags(c) != 0) {
                fail(s, RK_E_NOMEM);
                return;
            }
            c->itag[c->n] = 1;
        } else if (c->itag != NULL) {
            c->itag[c->n] = 0;
        }
        c->i[c->n] = s->mv_v;
    } else if (put_id(s, &s->i, c->i, &c->itag) != 0) {
        fail(s, RK_E_NOMEM);
        return;
    }
    c->r[c->n] = (float)s->r;
    if (c->t != NULL) c->t[c->n] = s->t;
    c->n++;
}

static void nul_bad(pst *s)
{
    char why[RK_REASON_CAP];
    snprintf(why, sizeof why, "a NUL byte in field %d (binary or compressed data?)", s->nul);
    line_bad(s, why);
}

static void commit_netflix(pst *s)
{
    rk_chunk *c = s->c;
    if (s->colon) {
        if (s->nul) { /* the rating lines after it have no movie */
            s->mv = RK_MV_BAD;
            nul_bad(s);
        } else if (s->nf != 1) {
            s->mv = RK_MV_BAD;
            line_bad(s, "expected \"MOVIEID:\" alone on its line");
        } else if (s->bad) {
            s->mv = RK_MV_BAD;
            line_bad(s, NULL);
        } else if (s->i.str) {
            int64_t off = rk_rows_put_string(&c->own, s->i.s, s->i.len);
            if (off < 0) {
                fail(s, RK_E_NOMEM);
                return;
            }
            s->mv = RK_MV_OK;
            s->mv_tag = 1;
            s->mv_v = off;
        } else {
            s->mv = RK_MV_OK;
            s->mv_tag = 0;
            s->mv_v = s->i.v;
        }
        c->mv_state = s->mv;
        c->mv_tag = s->mv_tag;
        c->mv_v = s->mv_v;
        return;
    }
    if (s->nf != 3) {
        char why[RK_REASON_CAP];
        snprintf(why, sizeof why, "expected \"MOVIEID:\" or CustomerID,Rating,Date (3 fields), found %d field%s",
                 s->nf, s->nf == 1 ? "" : "s");
        line_bad(s, why);
    } else if (s->nul) {
        nul_bad(s);
    } else if (s->bad) {
        line_bad(s, NULL);
    } else if (s->mv == RK_MV_NONE) {
        if (c->nlead == c->lead_cap) {
            int64_t cap = c->lead_cap ? c->lead_cap * 2 : 256;
            int64_t *nl = realloc(c->lead_line, (size_t)cap * sizeof *nl);
            if (nl == NULL) {
                fail(s, RK_E_NOMEM);
                return;
            }
            c->lead_line = nl;
            c->lead_cap = cap;
        }
        c->lead_line[c->nlead++] = s->line;
        s->mv_tag = 0;
        s->mv_v = 0; /* the merge fills in the item */
        push_row(s, 1);
    } else if (s->mv == RK_MV_BAD) {
        line_bad(s, "rating line after a malformed MOVIEID: line");
    } else {
        push_row(s, 1);
    }
}

static void commit_row(pst *s)
{
    if (s->nul && !s->f->netflix) {
        nul_bad(s);
    } else if (s->f->netflix) {
        commit_netflix(s);
    } else if (s->nf != s->f->nfields) {
        char why[RK_REASON_CAP];
        snprintf(why, sizeof why, "expected %d fields, found %d", s->f->nfields, s->nf);
        line_bad(s, why);
    } else if (s->bad) {
        line_bad(s, NULL);
    } else {
        push_row(s, 0);
    }
}

static inline void reset_row(pst *s)
{
    s->nf = 0;
    s->bad = 0;
    s->colon = 0;
    s->nul = 0;
    s->u.str = 0;
    s->i.str = 0;
    s->t = 0;
}

static void cb_row(int ch, void *data)
{
    pst *s = data;
    if (s->discard) {
        reset_row(s);
        return;
    }
    if (ch == '\n') s->saw_nl = 1;
    if (s->nf > 0 && !s->stop) commit_row(s);
    reset_row(s);
    if (ch == '\n') s->line++;
}

/* ---- a chunk ----------------------------------------------------------------- */

/* 1 when libcsv is inside a quoted field (a line break there is data). */
static int quote_open(const struct csv_parser *p)
{
    return p->quoted && p->pstate == RK_CSV_FIELD_BEGUN;
}

/* One line (n bytes at q, its newline included when it has one) through
 * libcsv.  A newline that libcsv swallowed belongs to a quoted field: the
 * row goes on with the next line (RFC 4180).  @return 0, or -1 when the
 * parser failed. */
static int csv_line(struct csv_parser *p, pst *s, const char *q, size_t n)
{
    s->saw_nl = 0;
    if (csv_parse(p, q, n, cb_field, cb_row, s) != n) {
        fail(s, RK_E_NOMEM);
        return -1;
    }
    return 0;
}

/* The end of a chunk's last newline: its lines before are whole. */
static const char *whole_end(const rk_chunk *c)
{
    const char *w = c->p + c->len;
    while (w > c->p && w[-1] != '\n') w--;
    return w;
}

/* c's bytes from q on, the `line` lines before q taken by the fast path
 * (q = c->p, line = 0: the whole chunk). */
static void parse_rest(const rk_fmt *f, rk_chunk *c, const char *q, int64_t line)
{
    struct csv_parser p;
    pst s;
    unsigned char opts = CSV_REPALL_NL | CSV_APPEND_NULL | (f->collapse ? CSV_EMPTY_IS_NULL : 0);

    if (csv_init(&p, opts) != 0) {
        c->status = RK_E_NOMEM;
        return;
    }
    csv_set_delim(&p, f->delim);
    csv_set_realloc_func(&p, rk_csv_realloc);
    memset(&s, 0, sizeof s);
    s.f = f;
    s.c = c;
    s.mv = RK_MV_NONE;

    const char *end = c->p + c->len;
    if (!f->fast && memchr(c->p, '"', c->len) == NULL) {
        /* every newline ends a row: libcsv in one call */
        if (csv_parse(&p, c->p, c->len, cb_field, cb_row, &s) != c->len) fail(&s, RK_E_NOMEM);
    } else {
        /* line by line: the fast path takes what it can up to `whole`, the
         * end of the last newline; libcsv the rest */
        const char *whole = whole_end(c), *row_q = q; /* q is a line's start: at most whole */
        int64_t row_line = 0;
        while (q < end && c->status == RK_OK && !s.stop) {
            const int open = quote_open(&p);
            /* netflix: only under a movie with an integer id; libcsv takes the
             * movie lines, and the rating lines before the chunk's first one;
             * never inside a quoted field */
            if (f->fast && !open && q < whole && (!f->netflix || (s.mv == RK_MV_OK && !s.mv_tag))) {
                q = rk_fast_lines(f, c, q, whole, &line, s.mv_v);
                if (q == end || c->status != RK_OK) break;
            }
            if (!open) { /* a row begins: its first line names it in messages */
                row_q = q;
                row_line = line;
                s.line = line;
            }
            const char *e = memchr(q, '\n', (size_t)(end - q));
            size_t n = e != NULL ? (size_t)(e - q) + 1 : (size_t)(end - q);
            if (csv_line(&p, &s, q, n) != 0) break;
            line += e != NULL;
            q += n;
        }
        /* a quoted field still open: the row goes on in the next chunk or
         * block, if there is one (rk_load.c decides) */
        if (quote_open(&p)) {
            c->open_at = (int64_t)(row_q - c->p);
            c->open_lines = row_line;
            s.line = row_line;
        } else {
            s.line = line;
        }
    }
    /* a quote left open at the end: csv_fini would close it and report a
     * misleading field count */
    if (quote_open(&p) && !s.stop && c->status == RK_OK) {
        line_bad(&s, "a quoted field is not closed at the end of the file");
        s.discard = 1;
    }
    if (csv_fini(&p, cb_field, cb_row, &s) != 0) fail(&s, RK_E_INTERNAL);
    csv_free(&p);
}

void rk_parse_chunk(const rk_fmt *f, rk_chunk *c)
{
    chunk_reset(c);
    if (c->len > 0) parse_rest(f, c, c->p, 0);
}

void rk_parse_chunk_pair(const rk_fmt *f, rk_chunk *c0, rk_chunk *c1)
{
    if (c1 == NULL || !f->fast || f->netflix || c0->len == 0 || c1->len == 0) {
        rk_parse_chunk(f, c0);
        if (c1 != NULL) rk_parse_chunk(f, c1);
        return;
    }
    chunk_reset(c0);
    chunk_reset(c1);
    rk_chunk *const c[2] = {c0, c1};
    const char *p[2] = {c0->p, c1->p};
    const char *const end[2] = {whole_end(c0), whole_end(c1)};
    int64_t line[2] = {0, 0};
    rk_fast_lines2(f, c, p, end, line);
    parse_rest(f, c0, p[0], line[0]);
    parse_rest(f, c1, p[1], line[1]);
}
