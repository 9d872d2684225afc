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
static inline const char *fast_id(const char *p, const char *end, unsigned char delim, int64_t *out)
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

const char *rk_fast_lines(const rk_fmt *f, rk_chunk *c, const char *p, const char *end,
                          int64_t *line, int64_t movie)
{
    const unsigned char delim = f->delim;
    const int dat = f->dat, netflix = f->netflix;
    /* a last field after the rating: the time, or one not read */
    const int four = f->nfields == 4 || dat || netflix, keep_time = f->want_time && f->ct >= 0;
    const int scale = f->have_scale;
    const double smin = f->smin, smax = f->smax;
    int64_t n = c->n, cap = c->cap, ln = *line;
    int64_t *U = c->u, *I = c->i, *T = c->t;
    float *R = c->r;

    while (p < end) {
        int64_t u, i, t = 0;
        double r;
        const char *q = fast_id(p, end, delim, &u);
        if (q == NULL || (dat && *q++ != (char)delim)) break; /* dat: "::" */
        if (netflix) {
            i = movie;
        } else if ((q = fast_id(q, end, delim, &i)) == NULL || (dat && *q++ != (char)delim)) {
            break;
        }
        const char *s = q;
        while (plain_byte((unsigned char)*q)) q++;
        if (rk_parse_rating_plain(s, (size_t)(q - s), &r) != 0) break;
        if (scale && !(r >= smin && r <= smax)) break;
        if (four) {
            if ((unsigned char)*q != delim || (dat && (unsigned char)*++q != delim)) break;
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
            if (keep_time && rk_parse_time_int(s, (size_t)(q - s), &t) != 0 &&
                rk_parse_time(s, (size_t)(q - s), &t) != 0)
                break;
        }
        q += *q == '\r'; /* CRLF: the newline must follow at once */
        if (*q != '\n') break;
        if (n == cap) {
            c->n = n;
            if (rk_chunk_grow(c) != 0) {
                c->status = RK_E_NOMEM;
                break;
            }
            cap = c->cap;
            U = c->u, I = c->i, R = c->r, T = c->t;
        }
        U[n] = u;
        I[n] = i;
        R[n] = (float)r;
        if (T != NULL) T[n] = t;
        n++;
        ln++;
        p = q + 1;
    }
    c->n = n;
    *line = ln;
    return p;
}
