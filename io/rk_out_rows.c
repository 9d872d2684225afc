/* The CSV row writers of rk_output.h: numbers, ids as RFC 4180 fields, and
 * rows formatted in parallel chunks (neighbors.csv, predictions.csv,
 * recommendations.csv). */
#define _POSIX_C_SOURCE 200809L
#include "rk_output.h"
#include "rk_omp.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- number formatting -------------------------------------------------------- */

static const double pow10_tab[23] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

static inline char *put_u64(char *p, uint64_t v)
{
    char t[24];
    int n = 0;
    do {
        t[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    while (n > 0) *p++ = t[--n];
    return p;
}

static inline char *put_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return put_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return put_u64(p, (uint64_t)v);
}

/* The fast path of "%.9g" for 1e-4 <= |x| < 1e9 (fixed notation).  Returns the
 * length, or 0 when the value lies too close to a rounding boundary to decide
 * in double arithmetic: then the caller uses snprintf. */
static int fmt_g9_fast(char *buf, double x)
{
    char *p = buf;
    double a = x;
    if (a < 0) {
        a = -a;
        *p++ = '-';
    }
    if (!(a >= 1e-4 && a < 1e9)) return 0;
    int e = 0; /* decimal exponent: 10^e <= a < 10^(e+1) */
    if (a >= 1.0) {
        while (e < 8 && a >= pow10_tab[e + 1]) e++;
    } else {
        e = -1;
        while (a < 1.0 / pow10_tab[-e]) e--;
    }
    int sh = 8 - e; /* in [0, 12] */
    double y = a * pow10_tab[sh]; /* [1e8, 1e9) unless e is off by one */
    double fl = floor(y);
    double fr = y - fl;
    /* y carries at most half an ulp of error (about 6e-8 near 1e9). */
    if (fl < 1e8 || fabs(fr - 0.5) < 1e-6) return 0;
    uint64_t m = (uint64_t)fl + (fr > 0.5 ? 1u : 0u);
    if (m >= 1000000000u) return 0;
    char d[9];
    for (int i = 8; i >= 0; i--) {
        d[i] = (char)('0' + m % 10);
        m /= 10;
    }
    int last = 8; /* last significant nonzero digit */
    while (last > 0 && d[last] == '0') last--;
    if (e >= 0) {
        int ip = e + 1; /* integer digits */
        for (int i = 0; i < ip; i++) *p++ = d[i];
        if (last >= ip) {
            *p++ = '.';
            for (int i = ip; i <= last; i++) *p++ = d[i];
        }
    } else {
        *p++ = '0';
        *p++ = '.';
        for (int i = 0; i < -e - 1; i++) *p++ = '0';
        for (int i = 0; i <= last; i++) *p++ = d[i];
    }
    *p = '\0';
    return (int)(p - buf);
}

int rk_out_double(char *buf, size_t cap, double x)
{
    char t[40];
    int n;
    if (x == 0.0) {
        n = 1;
        t[0] = '0';
        t[1] = '\0';
    } else {
        n = fmt_g9_fast(t, x);
        if (n == 0) n = snprintf(t, sizeof t, "%.9g", x);
    }
    if (cap == 0) return n;
    size_t c = (size_t)n < cap ? (size_t)n : cap - 1;
    memcpy(buf, t, c);
    buf[c] = '\0';
    return n;
}

/* Append rk_out_double's text at p; returns the new end. */
static inline char *put_double(char *p, double x)
{
    char t[40];
    int n;
    if (x == 0.0) {
        *p++ = '0';
        return p;
    }
    n = fmt_g9_fast(p, x);
    if (n > 0) return p + n;
    n = snprintf(t, sizeof t, "%.9g", x);
    memcpy(p, t, (size_t)n);
    return p + n;
}

/* ---- raw ids ------------------------------------------------------------------- */

size_t rk_out_csv_field(char *dst, const char *s, size_t len)
{
    int quote = len > 0 && (s[0] == ' ' || s[0] == '\t' || s[len - 1] == ' ' || s[len - 1] == '\t');
    for (size_t i = 0; i < len && !quote; i++)
        quote = s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n';
    if (!quote) {
        memcpy(dst, s, len);
        return len;
    }
    char *p = dst;
    *p++ = '"';
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '"') *p++ = '"';
        *p++ = s[i];
    }
    *p++ = '"';
    return (size_t)(p - dst);
}

/* The raw ids of a map as one pool of strings (offsets), so that rows copy
 * bytes instead of asking the map again per row. */
/* Bytes past the end that id copies may touch, in the pool and in row buffers. */
#define ID_SLACK 16

typedef struct id_tab {
    const rk_idmap *m;
    int32_t n;
    char *pool;   /* NULL: format from the map for every row */
    int64_t *off; /* n + 1 */
    int max_len;
} id_tab;

/* Raw id i of m as a CSV field (rk_out_csv_field) into dst
 * (RK_OUT_FIELD_MAX bytes); @return its length. */
static int id_field(const rk_idmap *m, int32_t i, char *dst)
{
    char b[RK_ID_MAX + 1];
    int l = rk_ids_format(m, i, b, sizeof b);
    if (l < 0) l = 0;
    if (l > RK_ID_MAX) l = RK_ID_MAX;
    return (int)rk_out_csv_field(dst, b, (size_t)l);
}

/* The pool holds every id already as its CSV field. */
static void id_tab_init(id_tab *t, const rk_idmap *m, int64_t uses)
{
    char b[RK_OUT_FIELD_MAX];
    memset(t, 0, sizeof *t);
    t->m = m;
    t->n = rk_ids_count(m);
    t->max_len = RK_OUT_FIELD_MAX;
    if (t->n <= 0 || uses < (int64_t)t->n / 4) return;
    t->off = malloc(((size_t)t->n + 1) * sizeof *t->off);
    if (t->off == NULL) return;
    int64_t total = 0;
    int max_len = 0;
    for (int32_t i = 0; i < t->n; i++) {
        int l = id_field(m, i, b);
        t->off[i] = total;
        total += l;
        if (l > max_len) max_len = l;
    }
    t->off[t->n] = total;
    t->pool = malloc((size_t)total + ID_SLACK);
    if (t->pool == NULL) {
        free(t->off);
        t->off = NULL;
        t->max_len = RK_OUT_FIELD_MAX;
        return;
    }
    for (int32_t i = 0; i < t->n; i++) {
        int64_t l = t->off[i + 1] - t->off[i];
        if (l > 0) {
            id_field(m, i, b);
            memcpy(t->pool + t->off[i], b, (size_t)l);
        }
    }
    t->max_len = max_len;
}

static void id_tab_free(id_tab *t)
{
    free(t->pool);
    free(t->off);
}

static inline char *put_id(char *p, const id_tab *t, int32_t i)
{
    if (t->pool != NULL) {
        size_t l = (size_t)(t->off[i + 1] - t->off[i]);
        /* short ids: one fixed 16-byte move (pool and row buffers have slack) */
        if (l <= ID_SLACK) memcpy(p, t->pool + t->off[i], ID_SLACK);
        else memcpy(p, t->pool + t->off[i], l);
        return p + l;
    }
    return p + id_field(t->m, i, p);
}

/* ---- parallel chunked writing ---------------------------------------------------- */

/* RK_E_IO for a failed write to fp, named by its path when rk_out_file
 * opened it (else by what). */
static rk_status write_failed(FILE *fp, const char *what, int e, rk_error *err)
{
    const char *path = rk_out_path_of(fp);
    return rk_error_set(err, RK_E_IO, "cannot write %s: %s", path != NULL ? path : what, strerror(e ? e : EIO));
}

/* Format units [b, e) into dst (at most (e - b) * unit_max bytes); return the length. */
typedef size_t (*fmt_fn)(const void *ctx, int64_t b, int64_t e, char *dst);

/* Rows are formatted by all threads into one buffer per thread, a round at a
 * time, and written in order. */
static rk_status write_units(FILE *fp, int64_t n, size_t unit_max, fmt_fn fn, const void *ctx,
                             const char *what, rk_error *err)
{
    const size_t target = (size_t)1 << 20;
    int64_t per = (int64_t)(target / unit_max);
    if (per < 1) per = 1;
    int nt = rk_omp_max_threads();
    if (nt < 1) nt = 1;
    if (n <= per) nt = 1;
    if ((int64_t)nt > (n + per - 1) / per) nt = (int)((n + per - 1) / per);
    if (nt < 1) nt = 1;
    size_t cap = (size_t)per * unit_max;
    char *buf = malloc((size_t)nt * cap + ID_SLACK);
    size_t *len = malloc((size_t)nt * sizeof *len);
    if (buf == NULL || len == NULL) {
        free(buf);
        free(len);
        return rk_error_set(err, RK_E_NOMEM, "out of memory writing %s", what);
    }
    int bad = 0, bad_errno = 0;
    for (int64_t start = 0; start < n && !bad; start += per * nt) {
        if (nt > 1) {
#pragma omp parallel for num_threads(nt) schedule(static, 1)
            for (int t = 0; t < nt; t++) {
                int64_t b = start + per * t, e = b + per;
                if (e > n) e = n;
                len[t] = b < e ? fn(ctx, b, e, buf + (size_t)t * cap) : 0;
            }
        } else {
            int64_t e = start + per < n ? start + per : n;
            len[0] = fn(ctx, start, e, buf);
        }
        for (int t = 0; t < nt && !bad; t++) {
            errno = 0;
            if (len[t] > 0 && fwrite(buf + (size_t)t * cap, 1, len[t], fp) != len[t]) {
                bad = 1;
                bad_errno = errno;
            }
        }
    }
    free(buf);
    free(len);
    if (bad || ferror(fp)) return write_failed(fp, what, bad_errno, err);
    return RK_OK;
}

static rk_status write_header(FILE *fp, const char *h, const char *what, rk_error *err)
{
    errno = 0;
    if (fputs(h, fp) == EOF) return write_failed(fp, what, errno, err);
    return RK_OK;
}

/* ---- neighbors.csv ------------------------------------------------------------------ */

typedef struct nb_ctx {
    const rk_lists *l;
    id_tab items;
} nb_ctx;

static size_t fmt_neighbors(const void *vc, int64_t b, int64_t e, char *dst)
{
    const nb_ctx *c = vc;
    const rk_lists *l = c->l;
    char *p = dst;
    for (int64_t i = b; i < e; i++) {
        int32_t len = l->len[i];
        if (len <= 0) continue;
        char head[RK_OUT_FIELD_MAX + 2 + ID_SLACK];
        char *h = put_id(head, &c->items, (int32_t)i);
        *h++ = ',';
        size_t hl = (size_t)(h - head);
        const int64_t base = i * (int64_t)l->k;
        for (int32_t r = 0; r < len; r++) {
            memcpy(p, head, hl);
            p += hl;
            p = put_id(p, &c->items, l->nbr[base + r]);
            *p++ = ',';
            p = put_u64(p, (uint64_t)r + 1);
            *p++ = ',';
            p = put_double(p, (double)l->sim[base + r]);
            *p++ = ',';
            p = put_i64(p, l->support[base + r]);
            *p++ = '\n';
        }
    }
    return (size_t)(p - dst);
}

rk_status rk_out_neighbors(FILE *fp, const rk_lists *l, const rk_idmap *items, rk_error *err)
{
    const char *what = "neighbors.csv";
    int32_t n_ids = rk_ids_count(items);
    if (l->n_items > n_ids)
        return rk_error_set(err, RK_E_INTERNAL, "%s: %d lists but %d item ids", what, l->n_items, n_ids);
    int64_t rows = 0;
    for (int32_t i = 0; i < l->n_items; i++) {
        int32_t len = l->len[i];
        if (len < 0 || len > l->k)
            return rk_error_set(err, RK_E_INTERNAL, "%s: list %d has length %d (k %d)", what, i, len, l->k);
        const int32_t *nb = l->nbr + (int64_t)i * l->k;
        for (int32_t r = 0; r < len; r++)
            if (nb[r] < 0 || nb[r] >= n_ids)
                return rk_error_set(err, RK_E_INTERNAL, "%s: list %d holds item index %d", what, i, nb[r]);
        rows += len;
    }
    RK_FORWARD(write_header(fp, "item,neighbor,rank,similarity,support\n", what, err));
    if (rows == 0) return RK_OK;
    nb_ctx c;
    c.l = l;
    id_tab_init(&c.items, items, rows);
    /* a unit is one item's list */
    size_t row_max = 2 * (size_t)c.items.max_len + 4 * 24 + 8;
    rk_status s = write_units(fp, l->n_items, row_max * (size_t)l->k, fmt_neighbors, &c, what, err);
    id_tab_free(&c.items);
    return s;
}

/* ---- predictions.csv ------------------------------------------------------------------ */

typedef struct pr_ctx {
    const int32_t *user, *item, *used;
    const float *rating;
    const double *pred;
    id_tab users, items;
} pr_ctx;

static size_t fmt_predictions(const void *vc, int64_t b, int64_t e, char *dst)
{
    const pr_ctx *c = vc;
    char *p = dst;
    for (int64_t q = b; q < e; q++) {
        p = put_id(p, &c->users, c->user[q]);
        *p++ = ',';
        p = put_id(p, &c->items, c->item[q]);
        *p++ = ',';
        p = put_double(p, (double)c->rating[q]);
        *p++ = ',';
        p = put_double(p, c->pred[q]);
        *p++ = ',';
        p = put_i64(p, c->used != NULL ? c->used[q] : 0);
        *p++ = '\n';
    }
    return (size_t)(p - dst);
}

rk_status rk_out_predictions(FILE *fp, int64_t n, const int32_t *user,
                             const int32_t *item, const float *rating,
                             const double *pred, const int32_t *used,
                             const rk_idmap *users, const rk_idmap *items,
                             rk_error *err)
{
    const char *what = "predictions.csv";
    int32_t nu = rk_ids_count(users), ni = rk_ids_count(items);
    for (int64_t q = 0; q < n; q++) {
        if (user[q] < 0 || user[q] >= nu || item[q] < 0 || item[q] >= ni)
            return rk_error_set(err, RK_E_INTERNAL, "%s: query %lld has no raw id (user %d, item %d)", what,
                                (long long)q, user[q], item[q]);
    }
    RK_FORWARD(write_header(fp, "user,item,rating,prediction,neighbors_used\n", what, err));
    if (n <= 0) return RK_OK;
    pr_ctx c;
    c.user = user;
    c.item = item;
    c.used = used;
    c.rating = rating;
    c.pred = pred;
    id_tab_init(&c.users, users, n);
    id_tab_init(&c.items, items, n);
    size_t row_max = (size_t)c.users.max_len + (size_t)c.items.max_len + 3 * 40 + 8;
    rk_status s = write_units(fp, n, row_max, fmt_predictions, &c, what, err);
    id_tab_free(&c.users);
    id_tab_free(&c.items);
    return s;
}

/* ---- recommendations.csv -------------------------------------------------------------- */

struct rk_out_recs {
    FILE *fp;
    id_tab users, items;
    int64_t rows;
};

rk_status rk_out_recs_open(rk_out_recs **wp, FILE *fp, const rk_idmap *users, const rk_idmap *items, rk_error *err)
{
    *wp = NULL;
    rk_out_recs *w = calloc(1, sizeof *w);
    RK_CHECK_ALLOC(w, err);
    w->fp = fp;
    rk_status s = write_header(fp, "user,rank,item,score\n", "recommendations.csv", err);
    if (s != RK_OK) {
        free(w);
        return s;
    }
    /* every user and item may appear: the id pools pay for themselves */
    id_tab_init(&w->users, users, INT64_MAX);
    id_tab_init(&w->items, items, INT64_MAX);
    *wp = w;
    return RK_OK;
}

typedef struct rc_ctx {
    const rk_out_recs *w;
    const rk_topn_batch *b;
} rc_ctx;

static size_t fmt_recs(const void *vc, int64_t lo, int64_t hi, char *dst)
{
    const rc_ctx *c = vc;
    const rk_topn_batch *b = c->b;
    char *p = dst;
    for (int64_t u = lo; u < hi; u++) {
        const int32_t len = b->len[u];
        if (len <= 0) continue;
        char head[RK_OUT_FIELD_MAX + 2 + ID_SLACK];
        char *h = put_id(head, &c->w->users, b->user[u]);
        *h++ = ',';
        const size_t hl = (size_t)(h - head);
        const int32_t *it = b->item + u * (int64_t)b->n;
        const uint64_t *sc = b->score + u * (int64_t)b->n;
        for (int32_t r = 0; r < len; r++) {
            memcpy(p, head, hl);
            p += hl;
            p = put_u64(p, (uint64_t)r + 1);
            *p++ = ',';
            p = put_id(p, &c->w->items, it[r]);
            *p++ = ',';
            p = put_double(p, rk_topn_score(sc[r]));
            *p++ = '\n';
        }
    }
    return (size_t)(p - dst);
}

rk_status rk_out_recs_write(void *vw, const rk_topn_batch *b, rk_error *err)
{
    rk_out_recs *w = vw;
    const char *what = "recommendations.csv";
    const int32_t nu = w->users.n, ni = w->items.n;
    int64_t rows = 0;
    for (int64_t u = 0; u < b->count; u++) {
        const int32_t len = b->len[u];
        if (len < 0 || len > b->n)
            return rk_error_set(err, RK_E_INTERNAL, "%s: user %d has a list of %d (N %d)", what, b->user[u], len, b->n);
        if (len > 0 && (b->user[u] < 0 || b->user[u] >= nu))
            return rk_error_set(err, RK_E_INTERNAL, "%s: user index %d has no raw id", what, b->user[u]);
        for (int32_t r = 0; r < len; r++) {
            int32_t it = b->item[u * (int64_t)b->n + r];
            if (it < 0 || it >= ni) return rk_error_set(err, RK_E_INTERNAL, "%s: item index %d has no raw id", what, it);
        }
        rows += len;
    }
    if (rows == 0) return RK_OK;
    rc_ctx c = {w, b};
    /* a unit is one user's list */
    size_t row_max = (size_t)w->users.max_len + (size_t)w->items.max_len + 24 + 40 + 4;
    RK_FORWARD(write_units(w->fp, b->count, row_max * (size_t)b->n, fmt_recs, &c, what, err));
    w->rows += rows;
    return RK_OK;
}

int64_t rk_out_recs_rows(const rk_out_recs *w)
{
    return w != NULL ? w->rows : 0;
}

void rk_out_recs_free(rk_out_recs *w)
{
    if (w == NULL) return;
    id_tab_free(&w->users);
    id_tab_free(&w->items);
    free(w);
}
