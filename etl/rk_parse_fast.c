/* rk_parse_fast.c — the fast path: plain numeric lines without libcsv.
 *
 * Most rating files are lines like "138493,68954,4.5,1258126944\n", and
 * libcsv spends most of the load on them (a callback per field and per row).
 * For the layouts where it is safe (rk_fast_layout) this file takes such lines
 * itself and stops at the first line it does not fully accept, which
 * rk_parse.c hands whole to libcsv.  A line is taken only when
 *   - its fields hold nothing but the bytes 0-9 . - (no quote, space, tab,
 *     CR or NUL: libcsv's quoting and trimming cannot apply, so its split is
 *     the plain split at the delimiter; libcsv trims a tab only when the tab
 *     is not the delimiter);
 *   - it has the file's field count, and the layout is user,item,rating[,x],
 *     or dat's user::item::rating::time, or a netflix rating line
 *     (user,rating,date) under a movie with an integer id (the movie lines,
 *     and the rating lines before the chunk's first one, are libcsv's);
 *   - the ids are canonical integers of at most 18 digits (rk_parse_canon_int
 *     reads them the same way), the rating is a plain decimal
 *     (rk_parse_rating_plain, the exact case of rk_parse_rating: a mantissa
 *     below 2^53, so always within a float's range; "1e39" and 40-digit
 *     ratings are libcsv's, which refuses them) inside the scale, and a kept
 *     time is one rk_parse_time accepts;
 *   - it ends in LF or CRLF.
 * The values then come from the functions the libcsv path uses, so the row is
 * the one libcsv would give; anything else, bad lines included, is libcsv's,
 * with its reasons and line numbers.  tests/test_parse_diff.c checks this.
 */
#include "rk_load_internal.h"

#include <string.h>

/* The line's functions are inlined where they are called: the two chunks'
 * chains overlap only inside one loop body. */
#if defined(__GNUC__)
#define RK_FAST_INLINE static inline __attribute__((always_inline))
#else
#define RK_FAST_INLINE static inline
#endif

int rk_fast_layout(const rk_fmt *f)
{
    unsigned char d = f->delim;
    if (f->collapse) return 0;
    /* a delimiter that can be part of a plain field, or that libcsv treats
     * specially, would make the plain split differ from libcsv's */
    if ((d >= '0' && d <= '9') || d == '.' || d == '-' || d == ' ' || d == '"' || d == '\r' ||
        d == '\n' || d == '\0')
        return 0;
    if (f->netflix) return f->nfields == 3 && f->cu == 0 && f->cr == 1 && f->ct == 2;
    if (f->dat) return f->nfields == 7 && f->cu == 0 && f->ci == 2 && f->cr == 4 && f->ct == 6;
    if (f->cu != 0 || f->ci != 1 || f->cr != 2) return 0;
    if (f->nfields == 3) return f->ct < 0;
    if (f->nfields == 4) return f->ct < 0 || f->ct == 3;
    return 0;
}

/* Eight bytes at a time (SWAR) where eight bytes can be read: a little-endian
 * load puts the first byte lowest.  t = x - '0' in every byte: the bytes up
 * to the first non-digit are its digits' values and borrow nothing, so
 * whatever the subtraction does above the first non-digit cannot matter. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define RK_SWAR 1
#define ONES ((uint64_t)0x0101010101010101ULL)

static const uint64_t pow10_u[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

/* The digits' values of p[0..8) (t) and how many of them lead (8: all). */
static inline unsigned lead_digits(const char *p, uint64_t *t)
{
    uint64_t x;
    memcpy(&x, p, sizeof x);
    x -= ONES * '0';
    /* a byte's top bit ends up set where it is above 9 (or was below '0') */
    const uint64_t big = (x | (x + ONES * (0x80 - 10))) & (ONES * 0x80);
    *t = x;
    return big == 0 ? 8u : (unsigned)__builtin_ctzll(big) / 8u;
}

/* The value of the k (1..8) digits whose values are the low k bytes of t. */
static inline uint64_t digits_value(uint64_t t, unsigned k)
{
    t <<= 8 * (8 - k); /* the digits to the top, zeros (leading zeros) below */
    t = (t * 10 + (t >> 8)) & 0x00ff00ff00ff00ffULL;
    t = (t * 100 + (t >> 16)) & 0x0000ffff0000ffffULL;
    return (t * 10000 + (t >> 32)) & 0xffffffffULL;
}
#else
#define RK_SWAR 0
#endif

/* A canonical integer of 1 to 18 digits (no overflow possible) ending at the
 * delimiter.  @return the byte after the delimiter, or NULL.  The scan stops
 * at the line's newline at the latest, which is not a digit.  With 16 bytes
 * before `end` its first 16 digits are read 8 at a time. */
RK_FAST_INLINE const char *fast_id(const char *p, const char *end, unsigned char delim, int64_t *out)
{
    int neg = *p == '-';
    const char *s = p + neg;
    const char *q = s;
    uint64_t v = 0;
    unsigned d;
#if RK_SWAR
    if (end - s >= 16) {
        uint64_t t;
        const unsigned k = lead_digits(s, &t);
        if (k < 8) {
            v = k > 0 ? digits_value(t, k) : 0;
            q = s + k;
        } else {
            v = digits_value(t, 8);
            const unsigned k2 = lead_digits(s + 8, &t);
            q = s + 8 + k2;
            if (k2 > 0) v = v * pow10_u[k2] + digits_value(t, k2); /* 16 digits at most: no overflow */
        } /* more digits: one by one below, as without SWAR */
    }
#endif
    while ((d = (unsigned)(unsigned char)*q - '0') <= 9) {
        v = v * 10 + d;
        q++;
    }
    size_t nd = (size_t)(q - s);
    if (nd == 0 || nd > 18 || (unsigned char)*q != delim) return NULL;
    if (*s == '0' && (nd > 1 || neg)) return NULL; /* "007" and "-0" are strings */
    *out = neg ? -(int64_t)v : (int64_t)v;
    return q + 1;
}

/* The bytes a plain rating or time may hold. */
static inline int plain_byte(unsigned char b)
{
    return (unsigned)(b - '0') <= 9 || b == '.' || b == '-';
}

/* What every line of a chunk is read by. */
typedef struct fast_rules {
    unsigned char delim;
    int dat, netflix, four, keep_time, scale;
    double smin, smax;
} fast_rules;

static fast_rules rules_of(const rk_fmt *f)
{
    fast_rules x;
    x.delim = f->delim;
    x.dat = f->dat;
    x.netflix = f->netflix;
    x.four = f->nfields == 4 || f->dat || f->netflix; /* a last field after the rating: the time, or one not read */
    x.keep_time = f->want_time && f->ct >= 0;
    x.scale = f->have_scale;
    x.smin = f->smin;
    x.smax = f->smax;
    return x;
}

/* One plain line at p (p < end): its row in *u, *i, *r, *t.  @return the
 * byte after its newline, or NULL where the fast path does not take it. */
RK_FAST_INLINE const char *fast_line(const fast_rules *x, const char *p, const char *end, int64_t movie, int64_t *u,
                                    int64_t *i, float *r, int64_t *t)
{
    const unsigned char delim = x->delim;
    double rv;
    *t = 0;
    const char *q = fast_id(p, end, delim, u);
    if (q == NULL || (x->dat && *q++ != (char)delim)) return NULL; /* dat: "::" */
    if (x->netflix) {
        *i = movie;
    } else if ((q = fast_id(q, end, delim, i)) == NULL || (x->dat && *q++ != (char)delim)) {
        return NULL;
    }
    const char *s = q;
    while (plain_byte((unsigned char)*q)) q++;
    if (rk_parse_rating_plain(s, (size_t)(q - s), &rv) != 0) return NULL;
    if (x->scale && !(rv >= x->smin && rv <= x->smax)) return NULL;
    if (x->four) {
        if ((unsigned char)*q != delim || (x->dat && (unsigned char)*++q != delim)) return NULL;
        s = ++q;
#if RK_SWAR
        while (end - q >= 8) { /* a time's digits 8 at a time */
            uint64_t digits;
            const unsigned k = lead_digits(q, &digits);
            q += k;
            if (k < 8) break;
        }
#endif
        while ((unsigned)((unsigned char)*q - '0') <= 9 || *q == '-') q++;
        /* the integer form first; a date ("2005-09-06") is no integer */
        if (x->keep_time && rk_parse_time_int(s, (size_t)(q - s), t) != 0 && rk_parse_time(s, (size_t)(q - s), t) != 0)
            return NULL;
    }
    q += *q == '\r'; /* CRLF: the newline must follow at once */
    if (*q != '\n') return NULL;
    *r = (float)rv;
    return q + 1;
}

/* A chunk's row arrays, held in locals while lines are taken: stores through
 * int64_t pointers could otherwise alias c->n and reload it every row. */
typedef struct row_out {
    int64_t *u, *i, *t;
    float *r;
    int64_t n, cap;
} row_out;

static inline row_out out_of(const rk_chunk *c)
{
    row_out o = {c->u, c->i, c->t, c->r, c->n, c->cap};
    return o;
}

static inline void put_row(row_out *o, int64_t u, int64_t i, float r, int64_t t)
{
    const int64_t n = o->n;
    o->u[n] = u;
    o->i[n] = i;
    o->r[n] = r;
    if (o->t != NULL) o->t[n] = t;
    o->n = n + 1;
}

const char *rk_fast_lines(const rk_fmt *f, rk_chunk *c, const char *p, const char *end, int64_t *line,
                          int64_t movie)
{
    const fast_rules x = rules_of(f);
    row_out o = out_of(c);
    int64_t ln = *line;
    while (p < end) {
        int64_t u, i, t;
        float r;
        const char *q = fast_line(&x, p, end, movie, &u, &i, &r, &t);
        if (q == NULL) break;
        if (o.n == o.cap) {
            c->n = o.n;
            if (rk_chunk_grow(c) != 0) {
                c->status = RK_E_NOMEM;
                break;
            }
            o = out_of(c);
        }
        put_row(&o, u, i, r, t);
        ln++;
        p = q;
    }
    c->n = o.n;
    *line = ln;
    return p;
}

/* Two chunks' lines in one loop: each line's fields are a chain of loads
 * that depend on the last field's end, so one chunk alone leaves the core
 * waiting; the other chunk's chain fills the gaps.  It stops at the first
 * line either does not take, or where either is full; not for netflix (its
 * movie lines are libcsv's). */
void rk_fast_lines2(const rk_fmt *f, rk_chunk *const c[2], const char *p[2], const char *const end[2],
                    int64_t line[2])
{
    const fast_rules x = rules_of(f);
    const char *p0 = p[0], *p1 = p[1];
    const char *const e0 = end[0], *const e1 = end[1];
    row_out o0 = out_of(c[0]), o1 = out_of(c[1]);
    const int64_t from0 = o0.n, from1 = o1.n;
    while (p0 < e0 && p1 < e1 && o0.n < o0.cap && o1.n < o1.cap) {
        int64_t u0, i0, t0, u1, i1, t1;
        float r0, r1;
        const char *q0 = fast_line(&x, p0, e0, 0, &u0, &i0, &r0, &t0);
        const char *q1 = fast_line(&x, p1, e1, 0, &u1, &i1, &r1, &t1);
        if (q0 != NULL) {
            put_row(&o0, u0, i0, r0, t0);
            p0 = q0;
        }
        if (q1 != NULL) {
            put_row(&o1, u1, i1, r1, t1);
            p1 = q1;
        }
        if (q0 == NULL || q1 == NULL) break;
    }
    line[0] += o0.n - from0;
    line[1] += o1.n - from1;
    c[0]->n = o0.n;
    c[1]->n = o1.n;
    p[0] = p0;
    p[1] = p1;
}
