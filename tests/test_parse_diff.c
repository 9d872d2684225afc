/* Differential test of the loader's fast path (etl/rk_parse_fast.c).
 *
 * The fast path may only ever produce what libcsv would have produced for a
 * line.  Random well-formed inputs (checked against the rows the generator
 * wrote, too) and randomly mutated ones (quotes, spaces, CR, NUL, delimiters,
 * digits, signs, dots, long fields, blank lines, a BOM, a missing last
 * newline...) in the movielens, csv (comma, semicolon, tab), tsv, dat and
 * netflix layouts,
 * with and without time, --skip-bad-lines and --rating-scale, are loaded with
 * the fast path off (the reference) and on, with several chunk sizes and
 * thread counts: the status, the message (file:line: reason), the triples
 * (ids as rk_ids_format prints them) and the report must be the same.
 * Every fixture of tests/data (fmt, bad, cli) too, as it is and with its
 * lines shuffled.  Fixed seeds: the same cases every run. */
#define _POSIX_C_SOURCE 200809L
#include "rk_load.h"
#include "rk_load_internal.h"
#include "test_ranges.h"
#include "test_util.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- text buffers ---------------------------------------------------------------- */

typedef struct sbuf {
    char *s;
    size_t n, cap;
} sbuf;

static void sb_put(sbuf *b, const char *p, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2 + 64;
        b->s = realloc(b->s, b->cap);
        if (b->s == NULL) abort();
    }
    memcpy(b->s + b->n, p, n);
    b->n += n;
    b->s[b->n] = '\0';
}

static void sb_printf(sbuf *b, const char *fmt, ...)
{
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= sizeof tmp) abort();
    sb_put(b, tmp, (size_t)w);
}

static unsigned long long seed;

static unsigned rnd(unsigned n)
{
    return (unsigned)(rk_test_rand(&seed) % n);
}

/* ---- what a load gave ------------------------------------------------------------ */

typedef struct snap {
    rk_status st;
    char msg[RK_ERROR_MSG_CAP];
    sbuf text; /* "user,item,rating[,time]" lines with raw ids */
    rk_load_report rep;
} snap;

/* Load buf[0..len) (or the file `path` when not NULL) into *s. */
static void take_from(const char *path, const char *buf, size_t len, const rk_load_opts *o, snap *s)
{
    rk_dataset d;
    rk_error e;
    memset(s, 0, sizeof *s);
    memset(&e, 0, sizeof e);
    s->st = path != NULL ? rk_load_dataset(&path, 1, NULL, o, &d, &e) : rk_load_buffer("in", buf, len, o, &d, &e);
    sb_put(&s->text, "", 0);
    if (s->st != RK_OK) {
        snprintf(s->msg, sizeof s->msg, "%s", e.msg);
        return;
    }
    char u[RK_ID_MAX + 1], i[RK_ID_MAX + 1];
    for (int64_t k = 0; k < d.train.n; k++) {
        rk_ids_format(d.users, d.train.user[k], u, sizeof u);
        rk_ids_format(d.items, d.train.item[k], i, sizeof i);
        sb_printf(&s->text, "%s,%s,%g", u, i, (double)d.train.rating[k]);
        if (d.train.time != NULL) sb_printf(&s->text, ",%lld", (long long)d.train.time[k]);
        sb_put(&s->text, "\n", 1);
    }
    s->rep = d.train_report;
    s->rep.read_parse_s = 0.0;
    rk_dataset_free(&d);
}

static void take(const char *buf, size_t len, const rk_load_opts *o, snap *s)
{
    take_from(NULL, buf, len, o, s);
}

/* @return NULL when a and b agree, else what differs. */
static const char *differ(const snap *a, const snap *b)
{
    const rk_load_report *x = &a->rep, *y = &b->rep;
    if (a->st != b->st) return "status";
    if (strcmp(a->msg, b->msg) != 0) return "message";
    if (strcmp(a->text.s, b->text.s) != 0) return "triples";
    if (x->format != y->format || x->delimiter != y->delimiter) return "format";
    if (x->bytes != y->bytes || x->lines != y->lines) return "bytes or lines";
    if (x->ratings != y->ratings || x->skipped_lines != y->skipped_lines) return "counts";
    if (x->n_bad_kept != y->n_bad_kept) return "bad lines kept";
    for (int k = 0; k < x->n_bad_kept; k++)
        if (x->bad[k].file != y->bad[k].file || x->bad[k].line != y->bad[k].line) return "bad line numbers";
    if (strcmp(x->first_bad_reason, y->first_bad_reason) != 0) return "first reason";
    return NULL;
}

static void show(const char *what, const char *buf, size_t len, const rk_load_opts *o, const snap *a,
                 const snap *b)
{
    fprintf(stderr, "\n%s differs (chunk %zu, threads %d, fast off %d, time %d, skip %d, scale %d %g:%g)\ninput: \"",
            what, o->chunk_bytes, o->threads, o->no_fast_path, o->want_time, o->skip_bad_lines, o->have_scale,
            o->scale_min, o->scale_max);
    for (size_t k = 0; k < len && k < 2000; k++) {
        unsigned char ch = (unsigned char)buf[k];
        if (ch == '\n') fputs("\\n\"\n\"", stderr);
        else if (ch < 32 || ch >= 127 || ch == '"' || ch == '\\') fprintf(stderr, "\\x%02x", ch);
        else fputc(ch, stderr);
    }
    fprintf(stderr, "\"\nwant: %d %s | %lld lines %lld ratings %lld skipped (%s)\n%s", a->st, a->msg,
            (long long)a->rep.lines, (long long)a->rep.ratings, (long long)a->rep.skipped_lines,
            a->rep.first_bad_reason, a->text.s);
    fprintf(stderr, "got:  %d %s | %lld lines %lld ratings %lld skipped (%s)\n%s", b->st, b->msg,
            (long long)b->rep.lines, (long long)b->rep.ratings, (long long)b->rep.skipped_lines,
            b->rep.first_bad_reason, b->text.s);
}

static int n_cases, n_loads, n_failed;

/* The reference (libcsv for every line, default chunks, one thread) against
 * the fast path and libcsv at other chunk sizes and thread counts.  `want`,
 * when not NULL, is what the generator wrote: the reference must give it. */
static void check_case(const char *buf, size_t len, const rk_load_opts *base, const snap *want)
{
    static const size_t sizes[] = {0, 1, 2, 5, 16, 61, 200, 4096};
    rk_load_opts o = *base;
    snap ref, s;
    o.no_fast_path = 1;
    o.chunk_bytes = 0;
    o.threads = 1;
    take(buf, len, &o, &ref);
    n_cases++;
    n_loads++;
    const char *w = want != NULL ? differ(want, &ref) : NULL;
    if (w != NULL && n_failed++ < 5) show(w, buf, len, &o, want, &ref);
    CU_ASSERT_PTR_NULL(w);
    for (int v = 0; v < 4; v++) {
        o.no_fast_path = v == 3;
        o.chunk_bytes = v == 0 ? 0 : sizes[1 + rnd(sizeof sizes / sizeof sizes[0] - 1)];
        /* two threads in one case of 128: an idle OpenMP thread spins for
         * milliseconds after each parallel region, which would make these
         * many tiny loads slow (test_gaps_and_spills runs big ones on two) */
        o.threads = v == 1 && n_cases % 128 == 0 ? 2 : 1;
        take(buf, len, &o, &s);
        n_loads++;
        w = differ(&ref, &s);
        if (w != NULL && n_failed++ < 5) show(w, buf, len, &o, &ref, &s);
        CU_ASSERT_PTR_NULL(w);
        free(s.text.s);
    }
    free(ref.text.s);
}

/* ---- well-formed inputs ---------------------------------------------------------- */

typedef struct layout {
    rk_format fmt;
    char delim;
    const char *sep;    /* between fields */
    int four;           /* a time column after the rating */
    const char *header; /* NULL: none */
} layout;

static const layout layouts[] = {
    {RK_FMT_MOVIELENS, ',', ",", 1, "userId,movieId,rating,timestamp"},
    {RK_FMT_CSV, ',', ",", 0, NULL},
    {RK_FMT_CSV, ',', ",", 1, "user,item,rating,timestamp"},
    {RK_FMT_CSV, ';', ";", 0, "user;item;rating"},
    {RK_FMT_CSV, ';', ";", 1, NULL},
    {RK_FMT_CSV, '\t', "\t", 0, NULL},
    {RK_FMT_CSV, '\t', "\t", 1, "user\titem\trating\ttime"},
    {RK_FMT_TSV, '\t', "\t", 1, NULL},
    {RK_FMT_DAT, ':', "::", 1, NULL},
    {RK_FMT_NETFLIX, ',', ",", 1, NULL}, /* user,rating,date under "MOVIEID:" lines */
};

/* An id: mostly plain integers, sometimes what only libcsv takes. */
static void gen_id(char *out, size_t cap)
{
    static const char *const odd[] = {"0", "-0", "007", "u12", "x", "9223372036854775807",
                                      "-9223372036854775808", "9223372036854775808", "1234567890123456789",
                                      "100000000000000000", "a.b", "--1", "1-2", "1.5"};
    switch (rnd(13)) {
    case 0: snprintf(out, cap, "%s", odd[rnd(sizeof odd / sizeof odd[0])]); break;
    case 1: snprintf(out, cap, "-%u", 1 + rnd(100000)); break;
    case 2: snprintf(out, cap, "%llu", (rk_test_rand(&seed) % 900000000000000000ULL) + 100000000000000000ULL); break;
    case 3: snprintf(out, cap, "%u", rnd(10)); break;
    case 4: snprintf(out, cap, "%u", rnd(40)); break;
    case 5: { /* 1 to 18 digits: the fast path's 8-byte steps and their ends */
        unsigned long long m = 1;
        for (unsigned k = 1 + rnd(18); k > 0; k--) m *= 10;
        snprintf(out, cap, "%s%llu", rnd(4) == 0 ? "-" : "", rk_test_rand(&seed) % m);
        break;
    }
    default: snprintf(out, cap, "%u", rnd(1000000)); break;
    }
}

static void gen_rating(char *out, size_t cap)
{
    static const char *const odd[] = {".5", "5.", "-1", "-0", "0", "0001.50", "+2", "1e1", "2E0", "9007199254740993",
                                      "4.5000000000000000000001", "0.1234567890123456789012", "-.5", "3.000"};
    switch (rnd(8)) {
    case 0: snprintf(out, cap, "%s", odd[rnd(sizeof odd / sizeof odd[0])]); break;
    case 1: snprintf(out, cap, "%u", rnd(6)); break;
    case 2: snprintf(out, cap, "%u.%02u", rnd(5), rnd(100)); break;
    case 3: snprintf(out, cap, "%.17g", rk_test_uniform(&seed) * 5.0); break;
    default: snprintf(out, cap, "%u.%u", rnd(5), 5 * rnd(2)); break;
    }
}

/* A time and its value when kept (*ok 0: kept, it makes the line bad). */
static void gen_time(char *out, size_t cap, int64_t *v, int *ok)
{
    static const struct {
        const char *s;
        int64_t v;
    } dates[] = {{"2005-09-06", 1125964800}, {"1970-01-02", 86400}, {"2000-02-29", 951782400}};
    *ok = 1;
    switch (rnd(10)) {
    case 0: {
        int k = (int)rnd(3);
        snprintf(out, cap, "%s", dates[k].s);
        *v = dates[k].v;
        break;
    }
    case 1: *v = -(int64_t)rnd(1000); snprintf(out, cap, "%lld", (long long)*v); break;
    case 2: *v = 123456789012345678LL; snprintf(out, cap, "%lld", (long long)*v); break;
    case 3: snprintf(out, cap, "%s", rnd(2) ? "1234567890123456789" : "12a"); *ok = 0; break;
    default: *v = 900000000 + (int64_t)rnd(200000000); snprintf(out, cap, "%lld", (long long)*v); break;
    }
}

/* A field as written: plain, or with spaces around it, or quoted (libcsv's
 * path takes those; the value is the same). */
static void put_field(sbuf *b, const char *f, int plain)
{
    unsigned how = plain ? 0 : rnd(10);
    if (how == 1) sb_printf(b, " %s ", f);
    else if (how == 2) sb_printf(b, "\"%s\"", f);
    else sb_printf(b, "%s", f);
}

static int in_scale(const rk_load_opts *o, double r)
{
    return !o->have_scale || (r >= o->scale_min && r <= o->scale_max);
}

/* A well-formed input for layout L and options o, and in `want` the rows the
 * loader must give (text, lines, ratings).  plain: no spaces or quotes. */
static void gen_input(const layout *L, const rk_load_opts *o, int plain, sbuf *b, snap *want)
{
    char u[64], it[64], r[64], t[64];
    int nlines = 1 + (int)rnd(rnd(4) == 0 ? 300 : 40);
    int64_t lines = 0, rows = 0;
    int netflix = L->fmt == RK_FMT_NETFLIX;
    size_t sl = strlen(L->sep);
    sb_put(&want->text, "", 0);
    if (L->header != NULL) {
        sb_printf(b, "%s%s", L->header, rnd(4) ? "\n" : "\r\n");
        lines++;
    }
    for (int k = 0; k < nlines; k++) {
        if (netflix && (k == 0 || rnd(8) == 0)) { /* a movie: the item of the lines after it */
            gen_id(it, sizeof it);
            sb_printf(b, "%s:%s", it, rnd(4) ? "\n" : "\r\n");
            lines++;
            if (k == nlines - 1) nlines++; /* a rating line ends the input */
            continue;
        }
        if (!plain && k < nlines - 1 && rnd(30) == 0) { /* a blank line */
            const char *bl = rnd(2) ? "\n" : "  \r\n";
            sb_put(b, bl, strlen(bl));
            lines++;
            continue;
        }
        int64_t tv = 0;
        int tok = 1;
        double rv;
        gen_id(u, sizeof u);
        if (!netflix) gen_id(it, sizeof it);
        do gen_rating(r, sizeof r);
        while (!in_scale(o, rv = strtod(r, NULL)));
        if (L->four) {
            gen_time(t, sizeof t, &tv, &tok);
            if (o->want_time && !tok) snprintf(t, sizeof t, "%lld", (long long)(tv = 7));
        }
        put_field(b, u, plain);
        sb_put(b, L->sep, sl);
        if (!netflix) {
            put_field(b, it, plain);
            sb_put(b, L->sep, sl);
        }
        put_field(b, r, plain);
        if (L->four) {
            sb_put(b, L->sep, sl);
            put_field(b, t, plain);
        }
        int last = k == nlines - 1;
        if (!(last && rnd(3) == 0)) {
            const char *nl = rnd(3) ? "\n" : "\r\n";
            sb_put(b, nl, strlen(nl));
        }
        lines++;
        sb_printf(&want->text, "%s,%s,%g", u, it, (double)(float)rv);
        if (o->want_time) sb_printf(&want->text, ",%lld", (long long)tv);
        sb_put(&want->text, "\n", 1);
        rows++;
    }
    want->rep.lines = lines;
    want->rep.ratings = rows;
}

/* Options for a case: the layout forced (delimiter and header too) or
 * detected, time, skip, scale at random. */
static void gen_opts(const layout *L, int forced, rk_load_opts *o)
{
    static const double scales[][2] = {{0.5, 5}, {1, 5}, {-10, 10}, {0, 1e6}};
    rk_load_opts_default(o);
    if (forced) {
        o->format = L->fmt;
        if (L->fmt == RK_FMT_CSV) {
            o->delimiter = L->delim;
            o->header = L->header != NULL;
        }
    }
    o->want_time = (int)rnd(2);
    o->skip_bad_lines = (int)rnd(2);
    if (rnd(3) == 0) {
        int k = (int)rnd(4);
        o->have_scale = 1;
        o->scale_min = scales[k][0];
        o->scale_max = scales[k][1];
    }
}

/* Well-formed inputs: the reference gives the generator's rows, and the fast
 * path and every chunking give the reference's. */
static void test_well_formed(void)
{
    seed = 20240601;
    n_cases = n_loads = n_failed = 0;
    for (int c = 0; c < 1500; c++) {
        const layout *L = &layouts[rnd(sizeof layouts / sizeof layouts[0])];
        rk_load_opts o;
        sbuf b = {NULL, 0, 0};
        snap want;
        memset(&want, 0, sizeof want);
        gen_opts(L, 1, &o);
        gen_input(L, &o, (int)rnd(2), &b, &want);
        want.st = RK_OK;
        want.rep.format = L->fmt;
        want.rep.delimiter = L->delim;
        want.rep.bytes = (int64_t)b.n;
        check_case(b.s, b.n, &o, &want);
        free(b.s);
        free(want.text.s);
    }
    fprintf(stderr, "[%d cases, %d loads] ", n_cases, n_loads);
}

/* ---- mutated inputs -------------------------------------------------------------- */

static void mutate(sbuf *b, char delim)
{
    static const char pal[] = "\",; \t\r\n\0-.0123456789e+x:";
    char ch = rnd(3) == 0 ? delim : pal[rnd(sizeof pal - 1)];
    size_t at = b->n > 0 ? rnd((unsigned)b->n + 1) : 0;
    switch (rnd(9)) {
    case 0:
    case 1: /* a byte changed */
        if (at < b->n) b->s[at] = ch;
        break;
    case 2:
    case 3: { /* a byte inserted */
        sbuf t = {NULL, 0, 0};
        sb_put(&t, b->s, at);
        sb_put(&t, &ch, 1);
        sb_put(&t, b->s + at, b->n - at);
        free(b->s);
        *b = t;
        break;
    }
    case 4: /* a byte deleted */
        if (at < b->n) {
            memmove(b->s + at, b->s + at + 1, b->n - at - 1);
            b->n--;
        }
        break;
    case 5: { /* a long field, a BOM, a blank line or a repeated line */
        static const char *const ins[] = {"\xEF\xBB\xBF", "\n", "\r\n", "\n\n", "1,2,3\r4,5,6\n"};
        char longf[600];
        unsigned k = rnd(7);
        const char *p;
        if (k < 5) {
            p = ins[k];
        } else {
            size_t n = 250 + rnd(300);
            memset(longf, k == 5 ? '7' : 'a', n);
            longf[n] = '\0';
            p = longf;
        }
        sbuf t = {NULL, 0, 0};
        sb_put(&t, b->s, at);
        sb_put(&t, p, strlen(p));
        sb_put(&t, b->s + at, b->n - at);
        free(b->s);
        *b = t;
        break;
    }
    case 6: /* the last newline (or more) gone */
        while (b->n > 0 && (b->s[b->n - 1] == '\n' || b->s[b->n - 1] == '\r' || rnd(4) == 0)) b->n--;
        break;
    case 7: /* a digit or sign swapped in a field */
        if (at < b->n && b->s[at] >= '0' && b->s[at] <= '9') b->s[at] = rnd(2) ? '-' : '.';
        else if (at < b->n) b->s[at] = (char)('0' + rnd(10));
        break;
    default: /* a whole line doubled (duplicates are the loader's to keep) */
        if (at < b->n) {
            size_t s = at, e = at;
            while (s > 0 && b->s[s - 1] != '\n') s--;
            while (e < b->n && b->s[e] != '\n') e++;
            if (e < b->n) e++;
            sbuf t = {NULL, 0, 0};
            sb_put(&t, b->s, e);
            sb_put(&t, b->s + s, e - s);
            sb_put(&t, b->s + e, b->n - e);
            free(b->s);
            *b = t;
        }
        break;
    }
}

static void test_mutated(void)
{
    seed = 777;
    n_cases = n_loads = n_failed = 0;
    for (int c = 0; c < 3000; c++) {
        const layout *L = &layouts[rnd(sizeof layouts / sizeof layouts[0])];
        rk_load_opts o;
        sbuf b = {NULL, 0, 0};
        snap want;
        memset(&want, 0, sizeof want);
        gen_opts(L, (int)rnd(4) != 0, &o);
        gen_input(L, &o, (int)rnd(3) != 0, &b, &want);
        free(want.text.s);
        int m = 1 + (int)rnd(rnd(5) == 0 ? 30 : 4);
        for (int k = 0; k < m; k++) mutate(&b, L->delim);
        check_case(b.s != NULL ? b.s : "", b.n, &o, NULL);
        free(b.s);
    }
    fprintf(stderr, "[%d cases, %d loads] ", n_cases, n_loads);
}

/* ---- the fast path itself -------------------------------------------------------- */

/* rk_fast_lines on one line with the layout of f: 1 when it took the line. */
static int fast_takes(const rk_fmt *f, const char *line, int64_t *u, int64_t *i, float *r, int64_t *t)
{
    rk_rows home;
    rk_chunk c;
    memset(&home, 0, sizeof home);
    memset(&c, 0, sizeof c);
    CU_ASSERT_FATAL(rk_rows_reserve(&home, 4, 1) == 0);
    c.home = &home;
    c.u = home.u, c.i = home.i, c.r = home.r, c.t = home.t;
    c.cap = 4;
    int64_t line_no = 0;
    size_t len = strlen(line);
    const char *end = rk_fast_lines(f, &c, line, line + len, &line_no, 77);
    int took = end == line + len;
    CU_ASSERT_EQUAL(c.n, took);
    CU_ASSERT_EQUAL(line_no, took);
    CU_ASSERT(end == line || took);
    if (took) *u = home.u[0], *i = home.i[0], *r = home.r[0], *t = home.t[0];
    if (len > 0 && line[len - 1] == '\n') {
        /* the same line with 40 more bytes after it (a line the fast path
         * refuses, so that it stops there): now its fields are read 8 bytes
         * at a time, with the same result */
        char buf[512];
        CU_ASSERT_FATAL(len + 41 < sizeof buf);
        memcpy(buf, line, len);
        memset(buf + len, 'x', 39);
        buf[len + 39] = '\n';
        buf[len + 40] = '\0';
        c.n = 0;
        line_no = 0;
        const char *e2 = rk_fast_lines(f, &c, buf, buf + len + 40, &line_no, 77);
        CU_ASSERT_EQUAL(e2 == buf + len, took);
        CU_ASSERT(e2 == buf || e2 == buf + len);
        CU_ASSERT_EQUAL(c.n, took);
        if (took && c.n == 1) {
            CU_ASSERT_EQUAL(home.u[0], *u);
            CU_ASSERT_EQUAL(home.i[0], *i);
            CU_ASSERT_EQUAL(home.r[0], *r);
            CU_ASSERT_EQUAL(home.t[0], *t);
        }
    }
    rk_chunk_free(&c);
    rk_rows_free(&home);
    return took;
}

/* The fast path must take the plain lines (else the differential test above
 * would pass with it doing nothing) and leave everything else to libcsv. */
static void test_fast_rules(void)
{
    rk_fmt f;
    memset(&f, 0, sizeof f);
    f.format = RK_FMT_MOVIELENS;
    f.delim = ',';
    f.nfields = 4;
    f.cu = 0, f.ci = 1, f.cr = 2, f.ct = 3;
    f.want_time = 1;
    CU_ASSERT_TRUE(rk_fast_layout(&f));
    int64_t u = 0, i = 0, t = 0;
    float r = 0;
    CU_ASSERT_TRUE(fast_takes(&f, "138493,68954,4.5,1258126944\n", &u, &i, &r, &t));
    CU_ASSERT_EQUAL(u, 138493);
    CU_ASSERT_EQUAL(i, 68954);
    CU_ASSERT_EQUAL(r, 4.5f);
    CU_ASSERT_EQUAL(t, 1258126944);
    CU_ASSERT_TRUE(fast_takes(&f, "-7,0,-.5,2005-09-06\r\n", &u, &i, &r, &t));
    CU_ASSERT_EQUAL(u, -7);
    CU_ASSERT_EQUAL(i, 0);
    CU_ASSERT_EQUAL(r, -0.5f);
    CU_ASSERT_EQUAL(t, 1125964800);
    CU_ASSERT_TRUE(fast_takes(&f, "999999999999999999,1,5.,-3\n", &u, &i, &r, &t));
    CU_ASSERT_EQUAL(u, 999999999999999999LL);
    /* ids at the ends of the 8-byte steps: 7, 8, 9, 15, 16, 17 digits */
    CU_ASSERT_TRUE(fast_takes(&f, "1234567,12345678,4.5,1\n", &u, &i, &r, &t));
    CU_ASSERT_EQUAL(u, 1234567);
    CU_ASSERT_EQUAL(i, 12345678);
    CU_ASSERT_TRUE(fast_takes(&f, "-123456789,123456789012345,1,1\n", &u, &i, &r, &t));
    CU_ASSERT_EQUAL(u, -123456789);
    CU_ASSERT_EQUAL(i, 123456789012345LL);
    CU_ASSERT_TRUE(fast_takes(&f, "1234567890123456,12345678901234567,1,1\n", &u, &i, &r, &t));
    CU_ASSERT_EQUAL(u, 1234567890123456LL);
    CU_ASSERT_EQUAL(i, 12345678901234567LL);
    CU_ASSERT_FALSE(fast_takes(&f, "0123456789,1,1,1\n", &u, &i, &r, &t));
    CU_ASSERT_FALSE(fast_takes(&f, "12345678901234567890,1,1,1\n", &u, &i, &r, &t));
    static const char *const refused[] = {
        "\n", "\r\n", "1,2,3\n", "1,2,3,4,5\n", "1,2,3,4", "1,2,3,4\r", "1,2,3,4\r\r\n", "1,2,3\r4\n",
        " 1,2,3,4\n", "1, 2,3,4\n", "1,2,3,4 \n", "\"1\",2,3,4\n", "01,2,3,4\n", "-0,2,3,4\n", "u1,2,3,4\n",
        "1234567890123456789,2,3,4\n", "1,2,1e1,4\n", "1,2,+2,4\n", "1,2,nan,4\n", "1,2,,4\n", "1,2,3,\n",
        "1,2,3,12a\n", "1,2,3,1234567890123456789\n", "1,2,3,2005-02-30\n", "1,,3,4\n", ",1,3,4\n",
        "1;2;3;4\n", "1,2,3\t,4\n", "1,2,3.4.5,4\n", "1,2,0.12345678901234567890123,4\n",
    };
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
        int took = fast_takes(&f, refused[k], &u, &i, &r, &t);
        if (took) fprintf(stderr, "\nthe fast path took \"%s\"\n", refused[k]);
        CU_ASSERT_FALSE(took);
    }
    /* the scale: outside it is libcsv's (a bad line) */
    f.have_scale = 1;
    f.smin = 1;
    f.smax = 5;
    CU_ASSERT_TRUE(fast_takes(&f, "1,2,5,4\n", &u, &i, &r, &t));
    CU_ASSERT_FALSE(fast_takes(&f, "1,2,5.5,4\n", &u, &i, &r, &t));
    /* a time not kept is not read, only its bytes checked */
    f.want_time = 0;
    f.have_scale = 0;
    CU_ASSERT_TRUE(fast_takes(&f, "1,2,3,1234567890123456789\n", &u, &i, &r, &t));
    CU_ASSERT_TRUE(fast_takes(&f, "1,2,3,\n", &u, &i, &r, &t));
    /* layouts it leaves to libcsv */
    f.delim = ' ';
    CU_ASSERT_FALSE(rk_fast_layout(&f));
    f.delim = '.';
    CU_ASSERT_FALSE(rk_fast_layout(&f));
    f.delim = '\t';
    CU_ASSERT_TRUE(rk_fast_layout(&f));
    f.cu = 1, f.ci = 0;
    CU_ASSERT_FALSE(rk_fast_layout(&f));
    f.cu = 0, f.ci = 1, f.nfields = 5;
    CU_ASSERT_FALSE(rk_fast_layout(&f));
    f.nfields = 4, f.dat = 1;
    CU_ASSERT_FALSE(rk_fast_layout(&f));
    f.dat = 0, f.netflix = 1;
    CU_ASSERT_FALSE(rk_fast_layout(&f));

    /* dat: "::" between the fields, nothing else */
    memset(&f, 0, sizeof f);
    f.format = RK_FMT_DAT;
    f.delim = ':';
    f.nfields = 7;
    f.cu = 0, f.ci = 2, f.cr = 4, f.ct = 6;
    f.dat = 1;
    f.want_time = 1;
    CU_ASSERT_TRUE(rk_fast_layout(&f));
    CU_ASSERT_TRUE(fast_takes(&f, "1::1193::5::978300760\n", &u, &i, &r, &t));
    CU_ASSERT_EQUAL(u, 1);
    CU_ASSERT_EQUAL(i, 1193);
    CU_ASSERT_EQUAL(r, 5.0f);
    CU_ASSERT_EQUAL(t, 978300760);
    static const char *const dat_refused[] = {"1:1193::5::9\n", "1::1193::5::9::\n", "1::1193:::5::9\n", "1::1193::5\n",
                                              "1::1193::5:9\n", "1::1193:x:5::9\n", "1,1193,5,9\n"};
    for (size_t k = 0; k < sizeof dat_refused / sizeof dat_refused[0]; k++)
        CU_ASSERT_FALSE(fast_takes(&f, dat_refused[k], &u, &i, &r, &t));

    /* netflix: rating lines get the movie given; movie lines are libcsv's */
    memset(&f, 0, sizeof f);
    f.format = RK_FMT_NETFLIX;
    f.delim = ',';
    f.nfields = 3;
    f.cu = 0, f.ci = -1, f.cr = 1, f.ct = 2;
    f.netflix = 1;
    f.want_time = 1;
    CU_ASSERT_TRUE(rk_fast_layout(&f));
    CU_ASSERT_TRUE(fast_takes(&f, "1488844,3,2005-09-06\n", &u, &i, &r, &t));
    CU_ASSERT_EQUAL(u, 1488844);
    CU_ASSERT_EQUAL(i, 77);
    CU_ASSERT_EQUAL(r, 3.0f);
    CU_ASSERT_EQUAL(t, 1125964800);
    static const char *const nf_refused[] = {"7:\n", "1,2\n", "1,2,2005-01-01,4\n", "1,2,2005-13-01\n", "u1,2,3\n"};
    for (size_t k = 0; k < sizeof nf_refused / sizeof nf_refused[0]; k++)
        CU_ASSERT_FALSE(fast_takes(&f, nf_refused[k], &u, &i, &r, &t));
}

/* Many rows per chunk, with gaps and lone CRs: rows that must move or
 * spill, in the merged arrays, with both paths. */
static void test_gaps_and_spills(void)
{
    seed = 99;
    n_cases = n_loads = n_failed = 0;
    for (int c = 0; c < 40; c++) {
        sbuf b = {NULL, 0, 0};
        int n = 50 + (int)rnd(3000);
        sb_printf(&b, "userId,movieId,rating,timestamp\n");
        for (int k = 0; k < n; k++) {
            unsigned what = rnd(200);
            if (what == 0) sb_printf(&b, "\n");
            else if (what == 1) sb_printf(&b, "%d,%d,3,1\r%d,%d,4,5\n", k, k, k + 1, k); /* 2 rows */
            else if (what == 2) sb_printf(&b, "%d,s%d,bad,1\n", k, k);
            else if (what == 3) sb_printf(&b, "u%d,%d,2.5,1\n", k, k);
            else sb_printf(&b, "%u,%u,%u.5,%u\n", rnd(5000), rnd(3000), rnd(5), rnd(1000000000));
        }
        rk_load_opts o;
        rk_load_opts_default(&o);
        o.skip_bad_lines = 1;
        o.want_time = (int)rnd(2);
        o.threads = 2;
        o.chunk_bytes = 3000 + rnd(30000);
        snap a, s;
        take(b.s, b.n, &o, &a);
        o.no_fast_path = 1;
        take(b.s, b.n, &o, &s);
        const char *w = differ(&a, &s);
        if (w != NULL && n_failed++ < 5) show(w, b.s, b.n, &o, &s, &a);
        CU_ASSERT_PTR_NULL(w);
        CU_ASSERT_EQUAL(a.st, RK_OK);
        free(a.text.s);
        free(s.text.s);
        check_case(b.s, b.n, &o, NULL);
        free(b.s);
    }
}

/* ---- the fixtures ---------------------------------------------------------------- */

/* A file's bytes, or NULL. */
static char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    sbuf b = {NULL, 0, 0};
    char tmp[4096];
    size_t n;
    if (fp == NULL) return NULL;
    sb_put(&b, "", 0);
    while ((n = fread(tmp, 1, sizeof tmp, fp)) > 0) sb_put(&b, tmp, n);
    fclose(fp);
    *len = b.n;
    return b.s;
}

/* The lines after the first (a header stays a header) in a random order; a
 * last line without its newline gets one when it moves. */
static void shuffle_lines(const char *in, size_t len, sbuf *out)
{
    const char *lines[4096];
    size_t lens[4096];
    int n = 0;
    for (size_t pos = 0; pos < len && n < 4096;) {
        const char *e = memchr(in + pos, '\n', len - pos);
        size_t l = e != NULL ? (size_t)(e - in) + 1 - pos : len - pos;
        lines[n] = in + pos;
        lens[n++] = l;
        pos += l;
    }
    for (int k = n - 1; k > 1; k--) {
        int j = 1 + (int)rnd((unsigned)k);
        const char *tl = lines[k];
        size_t tn = lens[k];
        lines[k] = lines[j], lens[k] = lens[j];
        lines[j] = tl, lens[j] = tn;
    }
    for (int k = 0; k < n; k++) {
        sb_put(out, lines[k], lens[k]);
        if (k < n - 1 && lines[k][lens[k] - 1] != '\n') sb_put(out, "\n", 1);
    }
}

/* Every fixture, with option sets that load it, fail it and skip its bad
 * lines: the same with the fast path on and off, and shuffled. */
static void test_fixtures(void)
{
    static const char *const dirs[] = {"fmt", "bad", "cli"};
    const char *top = getenv("top_srcdir") != NULL ? getenv("top_srcdir") : ".";
    int files = 0;
    seed = 4242;
    n_cases = n_loads = n_failed = 0;
    for (int d = 0; d < 3; d++) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/tests/data/%s", top, dirs[d]);
        DIR *dp = opendir(dir);
        CU_ASSERT_PTR_NOT_NULL_FATAL(dp);
        struct dirent *e;
        while ((e = readdir(dp)) != NULL) {
            char path[2048];
            size_t len = 0;
            if (e->d_name[0] == '.') continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            char *text = slurp(path, &len);
            CU_ASSERT_PTR_NOT_NULL_FATAL(text);
            files++;
            for (int v = 0; v < 6; v++) {
                rk_load_opts o;
                rk_load_opts_default(&o);
                o.skip_bad_lines = v & 1;
                o.want_time = (v >> 1) & 1;
                if (v >= 4) { /* a scale that some ratings of the fixtures miss */
                    o.have_scale = 1;
                    o.scale_min = 1;
                    o.scale_max = 4;
                }
                if (strcmp(e->d_name, "ciao6.csv") == 0) o.columns = "1,2,5,6";
                /* the file itself, both ways */
                snap a, b;
                o.threads = 1;
                o.no_fast_path = 1;
                take_from(path, NULL, 0, &o, &a);
                o.no_fast_path = 0;
                take_from(path, NULL, 0, &o, &b);
                const char *w = differ(&a, &b);
                if (w != NULL && n_failed++ < 5) show(w, text, len, &o, &a, &b);
                CU_ASSERT_PTR_NULL(w);
                free(a.text.s);
                free(b.text.s);
                check_case(text, len, &o, NULL);
                for (int sh = 0; sh < 3; sh++) {
                    sbuf t = {NULL, 0, 0};
                    sb_put(&t, "", 0);
                    shuffle_lines(text, len, &t);
                    check_case(t.s, t.n, &o, NULL);
                    free(t.s);
                }
            }
            free(text);
        }
        closedir(dp);
    }
    CU_ASSERT(files >= 29);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"id ranges checked from here", ranges_check_from_here},
        {"the fast path takes plain lines only", test_fast_rules},
        {"well-formed inputs: fast path = libcsv = generator", test_well_formed},
        {"mutated inputs: fast path = libcsv", test_mutated},
        {"gaps, spills and string ids in big chunks", test_gaps_and_spills},
        {"every fixture, as it is and shuffled", test_fixtures},
        {"the loader's id ranges were right", ranges_were_right},
        {NULL, NULL},
    };
    return rk_test_main("parse_diff", cases);
}
