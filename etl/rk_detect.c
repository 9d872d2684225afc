/* rk_detect.c — how a file is parsed, from its first bytes and the options.
 *
 * Looks at up to RK_SAMPLE non-blank lines: the format (when auto), the
 * delimiter (csv, when not given), whether the first line is a header, the
 * field count of a data line (the most common one in the sample), and the
 * user/item/rating/time columns.  Every field split here goes through libcsv
 * with the options the parser uses, so detection and parsing agree.
 */
#define _POSIX_C_SOURCE 200809L
#include "rk_load_internal.h"

#include <csv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define RK_SAMPLE 64
#define RK_MAXF 64

static const char *const fmt_names[] = {"auto", "movielens", "dat", "tsv", "netflix", "csv"};

rk_status rk_format_parse(const char *name, rk_format *out)
{
    for (int k = 0; k < (int)(sizeof fmt_names / sizeof fmt_names[0]); k++)
        if (name != NULL && strcmp(name, fmt_names[k]) == 0) {
            *out = (rk_format)k;
            return RK_OK;
        }
    return RK_E_ARG;
}

const char *rk_format_name(rk_format f)
{
    return (unsigned)f < sizeof fmt_names / sizeof fmt_names[0] ? fmt_names[f] : "unknown";
}

typedef struct fields {
    int n, collapse;
    size_t len[RK_MAXF];
    char s[RK_MAXF][RK_ID_MAX + 1];
} fields;

static void field_cb(void *p, size_t n, void *data)
{
    fields *fl = data;
    if (p == NULL && fl->collapse) return;
    if (fl->n < RK_MAXF) {
        if (n > RK_ID_MAX) n = RK_ID_MAX;
        if (n > 0) memcpy(fl->s[fl->n], p, n);
        fl->s[fl->n][n] = '\0';
        fl->len[fl->n] = n;
    }
    fl->n++;
}

/* Split one line (no newline) the way the parser will. */
static void split(const char *line, size_t len, unsigned char delim, int collapse, fields *fl)
{
    struct csv_parser p;
    fl->n = 0;
    fl->collapse = collapse;
    if (csv_init(&p, CSV_REPALL_NL | CSV_APPEND_NULL | (collapse ? CSV_EMPTY_IS_NULL : 0)) != 0) return;
    csv_set_delim(&p, delim);
    csv_set_realloc_func(&p, rk_csv_realloc);
    if (csv_parse(&p, line, len, field_cb, NULL, fl) == len) csv_fini(&p, field_cb, NULL, fl);
    csv_free(&p);
}

typedef struct sample {
    int n;
    const char *s[RK_SAMPLE];
    size_t len[RK_SAMPLE];      /* without the line end */
    size_t end[RK_SAMPLE];      /* offset just past the line's newline */
    int64_t lineno[RK_SAMPLE];  /* 0-based line */
} sample;

static int blank(const char *s, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (s[k] != ' ' && s[k] != '\t' && s[k] != '\r') return 0;
    return 1;
}

static void take_sample(const char *p, size_t len, int at_eof, sample *sm)
{
    size_t pos = 0;
    int64_t line = 0;
    sm->n = 0;
    while (pos < len && sm->n < RK_SAMPLE) {
        const char *e = memchr(p + pos, '\n', len - pos);
        /* a line break inside a quoted field (an odd count of quotes so far)
         * does not end the sample's line */
        size_t quotes = 0;
        int64_t more = 0; /* line breaks inside quotes */
        for (const char *a = p + pos; e != NULL; more++) {
            for (; a < e; a++) quotes += *a == '"';
            if (quotes % 2 == 0) break;
            a = e + 1;
            e = memchr(a, '\n', len - (size_t)(a - p));
        }
        if (e == NULL && !at_eof) break;
        size_t end = e != NULL ? (size_t)(e - p) + 1 : len;
        size_t n = (e != NULL ? (size_t)(e - p) : len) - pos;
        while (n > 0 && p[pos + n - 1] == '\r') n--;
        if (!blank(p + pos, n)) {
            sm->s[sm->n] = p + pos;
            sm->len[sm->n] = n;
            sm->end[sm->n] = end;
            sm->lineno[sm->n] = line;
            sm->n++;
        }
        pos = end;
        line += 1 + more;
    }
}

static int is_netflix_head(const char *s, size_t n)
{
    size_t k = 0, tok = 0;
    while (k < n && (s[k] == ' ' || s[k] == '\t')) k++;
    while (k < n && s[k] != ':' && s[k] != ',' && s[k] != ' ' && s[k] != '\t') k++, tok++;
    if (tok == 0 || k >= n || s[k] != ':') return 0;
    for (k++; k < n; k++)
        if (s[k] != ' ' && s[k] != '\t') return 0;
    return 1;
}

static int has(const char *s, size_t n, const char *needle)
{
    size_t m = strlen(needle);
    for (size_t k = 0; k + m <= n; k++)
        if (memcmp(s + k, needle, m) == 0) return 1;
    return 0;
}

static rk_format guess_format(const sample *sm, fields *fl)
{
    const char *s = sm->s[0];
    size_t n = sm->len[0];
    if (is_netflix_head(s, n)) return RK_FMT_NETFLIX;
    if (has(s, n, "::")) return RK_FMT_DAT;
    if (memchr(s, '\t', n) != NULL) { /* tsv has no header: a header line makes it csv */
        split(s, n, '\t', 0, fl);
        double d;
        return fl->n == 4 && rk_parse_rating(fl->s[2], fl->len[2], &d) == 0 ? RK_FMT_TSV : RK_FMT_CSV;
    }
    if (n >= 21 && strncasecmp(s, "userid,movieid,rating", 21) == 0) { /* the line is not NUL-ended */
        split(s, n, ',', 0, fl);
        if (fl->n == 4) return RK_FMT_MOVIELENS;
    }
    return RK_FMT_CSV;
}

static unsigned char guess_delim(const sample *sm, fields *fl)
{
    static const char cand[] = ",\t;| ";
    int lines = sm->n < 20 ? sm->n : 20;
    unsigned char best = ',';
    int best_n = 1;
    for (int c = 0; cand[c] != '\0'; c++) {
        int n0 = -1, same = 1;
        for (int l = 0; l < lines && same; l++) {
            split(sm->s[l], sm->len[l], (unsigned char)cand[c], cand[c] == ' ', fl);
            if (l == 0) n0 = fl->n;
            else if (fl->n != n0) same = 0;
        }
        if (same && n0 >= 2) return (unsigned char)cand[c];
        split(sm->s[0], sm->len[0], (unsigned char)cand[c], cand[c] == ' ', fl);
        if (fl->n > best_n) {
            best_n = fl->n;
            best = (unsigned char)cand[c];
        }
    }
    return best;
}

/* A header name folded: lower case, without '_', '-', ' ' and quotes. */
static void fold(const char *s, char *out, size_t cap)
{
    size_t o = 0;
    for (; *s != '\0' && o + 1 < cap; s++) {
        char ch = *s;
        if (ch == '_' || ch == '-' || ch == ' ' || ch == '"') continue;
        if (ch >= 'A' && ch <= 'Z') ch = (char)(ch - 'A' + 'a');
        out[o++] = ch;
    }
    out[o] = '\0';
}

static int known_name(const fields *hdr, const char *const *names)
{
    char f[RK_ID_MAX + 1];
    int nf = hdr->n < RK_MAXF ? hdr->n : RK_MAXF;
    for (int k = 0; k < nf; k++) {
        fold(hdr->s[k], f, sizeof f);
        for (const char *const *nm = names; *nm != NULL; nm++)
            if (strcmp(f, *nm) == 0) return k;
    }
    return -1;
}

static const char *const user_names[] = {"user", "userid", "customerid", "customer", "uid", "username", "u", NULL};
static const char *const item_names[] = {"item", "itemid", "movieid", "movie", "productid", "product",
                                         "iid", "bookid", "isbn", "asin", "i", NULL};
static const char *const rating_names[] = {"rating", "score", "stars", "movierating", "bookrating", "r", NULL};
static const char *const time_names[] = {"timestamp", "time", "date", "datetime", "ts", "t", NULL};

int rk_detect_column_kind(const char *s, size_t n)
{
    char raw[RK_ID_MAX + 1], f[RK_ID_MAX + 1];
    if (n > RK_ID_MAX) return RK_COL_KIND_NONE;
    memcpy(raw, s, n);
    raw[n] = '\0';
    fold(raw, f, sizeof f);
    const char *const *lists[] = {user_names, item_names, rating_names, time_names};
    const int kinds[] = {RK_COL_KIND_USER, RK_COL_KIND_ITEM, RK_COL_KIND_RATING, RK_COL_KIND_TIME};
    for (int l = 0; l < 4; l++)
        for (const char *const *nm = lists[l]; *nm != NULL; nm++)
            if (strcmp(f, *nm) == 0) return kinds[l];
    return RK_COL_KIND_NONE;
}

/* --columns: "user,item,rating[,time]", each a 1-based position or a name. */
typedef struct colspec {
    int n;
    int pos[4];            /* 0-based, or -1 for a name */
    char name[4][RK_ID_MAX + 1];
} colspec;

static rk_status parse_columns(const char *spec, colspec *cs, rk_error *err)
{
    const char *p = spec;
    cs->n = 0;
    for (;;) {
        const char *e = strchr(p, ',');
        size_t n = e != NULL ? (size_t)(e - p) : strlen(p);
        while (n > 0 && *p == ' ') p++, n--;
        while (n > 0 && p[n - 1] == ' ') n--;
        if (cs->n == 4)
            return rk_error_set(err, RK_E_ARG, "--columns \"%s\": at most 4 columns (user,item,rating,time)", spec);
        if (n == 0 || n > RK_ID_MAX)
            return rk_error_set(err, RK_E_ARG, "--columns \"%s\": an empty or overlong column", spec);
        int num = 1;
        long v = 0;
        for (size_t k = 0; k < n; k++) {
            if (p[k] < '0' || p[k] > '9' || v > 100000) num = 0;
            else v = v * 10 + (p[k] - '0');
        }
        if (num && v < 1) return rk_error_set(err, RK_E_ARG, "--columns \"%s\": positions start at 1", spec);
        cs->pos[cs->n] = num ? (int)(v - 1) : -1;
        memcpy(cs->name[cs->n], p, n);
        cs->name[cs->n][n] = '\0';
        cs->n++;
        if (e == NULL) break;
        p = e + 1;
    }
    if (cs->n < 3)
        return rk_error_set(err, RK_E_ARG, "--columns \"%s\": need user,item,rating[,time]", spec);
    return RK_OK;
}

static int find_header(const fields *hdr, const char *name)
{
    char a[RK_ID_MAX + 1], b[RK_ID_MAX + 1];
    int nf = hdr->n < RK_MAXF ? hdr->n : RK_MAXF;
    for (int k = 0; k < nf; k++)
        if (strcmp(hdr->s[k], name) == 0) return k;
    fold(name, a, sizeof a);
    for (int k = 0; k < nf; k++) {
        fold(hdr->s[k], b, sizeof b);
        if (strcmp(a, b) == 0) return k;
    }
    return -1;
}

static int field_is_number(const fields *fl, int k)
{
    double d;
    return k >= 0 && k < fl->n && k < RK_MAXF && rk_parse_rating(fl->s[k], fl->len[k], &d) == 0;
}

/* A header names its columns: a first line with a field that reads as a
 * number (finite or not) is data, and a bad rating on it is a bad line, not
 * a header skipped in silence. */
static int any_numeric(const fields *fl)
{
    double d;
    for (int k = 0; k < fl->n && k < RK_MAXF; k++)
        if (fl->len[k] > 0 && rk_parse_rating(fl->s[k], fl->len[k], &d) != 1) return 1;
    return 0;
}

/* A csv file's columns: the field count of a data line (the most common
 * one in the sample), then --columns, the header's known names, or the
 * first three (four) positions. */
static rk_status csv_columns(const rk_load_opts *o, const char *name, const sample *sm, fields *fl,
                             const fields *hdr, const colspec *cs_, int header, rk_fmt *f, rk_error *err)
{
    const colspec cs = *cs_;
    rk_status st = RK_OK;
    /* the field count of a data line: the most common one in the sample */
    int counts[RK_SAMPLE], best = -1, best_c = 0;
    for (int l = header; l < sm->n; l++) {
        split(sm->s[l], sm->len[l], f->delim, f->collapse, fl);
        counts[l] = fl->n;
    }
    for (int l = header; l < sm->n; l++) {
        int c = 0;
        for (int m = header; m < sm->n; m++) c += counts[m] == counts[l];
        if (c > best_c) best_c = c, best = counts[l];
    }
    if (best < 0) best = header ? hdr->n : 3;

    if (cs.n > 0) {
        int col[4];
        for (int k = 0; k < cs.n; k++) {
            col[k] = cs.pos[k];
            if (col[k] < 0 && (col[k] = find_header(hdr, cs.name[k])) < 0) {
                st = rk_error_set(err, RK_E_ARG, "--columns: no column \"%s\" in the header of %s",
                                  cs.name[k], name);
                return st;
            }
            for (int m = 0; m < k; m++)
                if (col[m] == col[k]) {
                    st = rk_error_set(err, RK_E_ARG, "--columns \"%s\": a column is named twice", o->columns);
                    return st;
                }
        }
        f->cu = col[0], f->ci = col[1], f->cr = col[2], f->ct = cs.n > 3 ? col[3] : -1;
    } else {
        int cu = -1, ci = -1, cr = -1;
        if (header) {
            cu = known_name(hdr, user_names);
            ci = known_name(hdr, item_names);
            cr = known_name(hdr, rating_names);
        }
        if (cu >= 0 && ci >= 0 && cr >= 0 && cu != ci && ci != cr && cu != cr) {
            int ct = known_name(hdr, time_names);
            f->cu = cu, f->ci = ci, f->cr = cr;
            f->ct = ct != cu && ct != ci && ct != cr ? ct : -1;
        } else if (header && sm->n > 0) {
            /* a header of other names: taking columns by position could read
             * timestamps as ratings without a word */
            char h[200];
            snprintf(h, sizeof h, "%.*s", sm->len[0] > 160 ? 160 : (int)sm->len[0], sm->s[0]);
            st = rk_error_set(err, RK_E_ARG,
                              "%s: the header \"%s\" names no %s column recknn knows; give --columns "
                              "USER,ITEM,RATING[,TIME] with its names or 1-based positions", name, h,
                              cu < 0 ? "user" : ci < 0 ? "item" : "rating");
            return st;
        } else if (best <= 4) {
            f->cu = 0, f->ci = 1, f->cr = 2, f->ct = best == 4 ? 3 : -1;
        } else {
            st = rk_error_set(err, RK_E_ARG,
                              "%s: lines have %d fields and %s; give --columns user,item,rating[,time] "
                              "(1-based positions or header names)",
                              name, best, header ? "the header names no user, item and rating columns"
                                                 : "there is no header");
            return st;
        }
    }
    int need = 3;
    if (f->cu + 1 > need) need = f->cu + 1;
    if (f->ci + 1 > need) need = f->ci + 1;
    if (f->cr + 1 > need) need = f->cr + 1;
    if (f->ct + 1 > need) need = f->ct + 1;
    f->nfields = best > need ? best : need;

    return RK_OK;
}

rk_status rk_detect(const rk_load_opts *o, const char *name, const char *p,
                    size_t len, int at_eof, rk_fmt *f, size_t *skip_bytes,
                    int64_t *skip_lines, rk_error *err)
{
    sample *sm = malloc(sizeof *sm);
    fields *fl = malloc(sizeof *fl), *hdr = malloc(sizeof *hdr);
    rk_status st = RK_OK;
    colspec cs;
    int header = 0;

    memset(f, 0, sizeof *f);
    *skip_bytes = 0;
    *skip_lines = 0;
    if (sm == NULL || fl == NULL || hdr == NULL) {
        st = rk_error_set(err, RK_E_NOMEM, "out of memory detecting the format of %s", name);
        goto done;
    }
    cs.n = 0;
    hdr->n = 0; /* an empty sample has no first line to split into it */
    /* a UTF-8 byte order mark is not part of the first id */
    size_t bom = len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    p += bom;
    len -= bom;
    *skip_bytes = bom;
    f->want_time = o->want_time;
    f->have_scale = o->have_scale;
    f->smin = o->scale_min;
    f->smax = o->scale_max;
    f->skip_bad = o->skip_bad_lines;
    f->ct = -1;
    take_sample(p, len, at_eof, sm);

    rk_format fmt = o->format;
    if (fmt != RK_FMT_AUTO && fmt != RK_FMT_CSV && (o->delimiter != 0 || o->columns != NULL)) {
        st = rk_error_set(err, RK_E_ARG, "--delimiter and --columns apply to --format csv only (not %s)",
                          rk_format_name(fmt));
        goto done;
    }
    if (o->columns != NULL && (st = parse_columns(o->columns, &cs, err)) != RK_OK) goto done;
    if (fmt == RK_FMT_AUTO) {
        if (o->delimiter != 0 || o->columns != NULL || sm->n == 0) fmt = RK_FMT_CSV;
        else fmt = guess_format(sm, fl);
    }
    f->format = fmt;

    switch (fmt) {
    case RK_FMT_NETFLIX:
        f->delim = ',';
        f->nfields = 3;
        f->netflix = 1;
        f->cu = 0, f->ci = -1, f->cr = 1, f->ct = 2;
        goto done; /* no header */
    case RK_FMT_DAT:
        f->delim = ':';
        f->nfields = 7;
        f->dat = 1;
        f->cu = 0, f->ci = 2, f->cr = 4, f->ct = 6;
        break;
    case RK_FMT_TSV:
        f->delim = '\t';
        f->nfields = 4;
        f->cu = 0, f->ci = 1, f->cr = 2, f->ct = 3;
        break;
    case RK_FMT_MOVIELENS:
        f->delim = ',';
        f->nfields = 4;
        f->cu = 0, f->ci = 1, f->cr = 2, f->ct = 3;
        break;
    default:
        f->format = RK_FMT_CSV;
        f->delim = (unsigned char)o->delimiter;
        if (f->delim == 0) f->delim = sm->n > 0 ? guess_delim(sm, fl) : ',';
        if (f->delim == '"' || f->delim == '\n' || f->delim == '\r') {
            st = rk_error_set(err, RK_E_ARG, "the delimiter cannot be a quote or a line break");
            goto done;
        }
        f->collapse = f->delim == ' ';
        break;
    }

    /* the header: the first non-blank line */
    int named = 0;
    for (int k = 0; k < cs.n; k++) named |= cs.pos[k] < 0;
    if (sm->n > 0) split(sm->s[0], sm->len[0], f->delim, f->collapse, hdr);
    if (named && o->header == 0) {
        st = rk_error_set(err, RK_E_ARG, "--columns \"%s\" names columns but --no-header was given", o->columns);
        goto done;
    }
    /* the rating column decides: a header's is not a number */
    int rcol = cs.n > 0 ? cs.pos[2] : f->format == RK_FMT_CSV ? 2 : f->cr;
    if (o->header >= 0) header = o->header > 0;
    else if (named) header = 1;
    else if (f->format == RK_FMT_TSV || f->format == RK_FMT_DAT) header = 0; /* never have one */
    else header = sm->n > 0 && rcol < hdr->n && !field_is_number(hdr, rcol) && !any_numeric(hdr);
    if (header && sm->n > 0) {
        *skip_bytes = bom + sm->end[0];
        *skip_lines = sm->lineno[0] + 1;
    }
    if (f->format != RK_FMT_CSV) goto done;

    st = csv_columns(o, name, sm, fl, hdr, &cs, header, f, err);

done:
    f->fast = st == RK_OK && !o->no_fast_path && rk_fast_layout(f);
    free(sm);
    free(fl);
    free(hdr);
    return st;
}
