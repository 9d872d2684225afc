/* rk_ids.c — raw id <-> dense index maps.
 *
 * Integer ids (the common case) never become strings: when their range is
 * small next to their count a direct table maps value - min to the index,
 * else a hash table of the distinct values does; the distinct values are
 * sorted to give the numeric order.  As soon as one id of a map is not a
 * canonical integer, every id of the map is handled as bytes: interned in a
 * hash table, the distinct ones sorted with memcmp.
 */
#define _POSIX_C_SOURCE 200809L
#include "rk_load_internal.h"
#include "rk_omp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rk_idmap {
    int32_t n;
    int numeric;
    int64_t *vals;   /* numeric: the ids, ascending */
    char *arena;     /* bytes: the ids back to back, ascending */
    int64_t *off;    /* bytes: n + 1 offsets into arena */
};

#define RK_DIRECT_MAX ((uint64_t)1 << 27)
#define RK_PAR_MIN 65536 /* below this many ids, one thread */

/* ---- queries ------------------------------------------------------------------ */

int32_t rk_ids_count(const rk_idmap *m)
{
    return m != NULL ? m->n : 0;
}

int rk_ids_numeric(const rk_idmap *m)
{
    return m != NULL ? m->numeric : 0;
}

static int fmt_i64(int64_t v, char *buf)
{
    char tmp[24];
    int n = 0, neg = v < 0;
    uint64_t u = neg ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    int len = 0;
    if (neg) buf[len++] = '-';
    while (n > 0) buf[len++] = tmp[--n];
    buf[len] = '\0';
    return len;
}

int rk_ids_format(const rk_idmap *m, int32_t i, char *buf, size_t cap)
{
    char tmp[24];
    const char *s;
    size_t len;
    if (m == NULL || i < 0 || i >= m->n) {
        if (cap > 0) buf[0] = '\0';
        return -1;
    }
    if (m->numeric) {
        len = (size_t)fmt_i64(m->vals[i], tmp);
        s = tmp;
    } else {
        s = m->arena + m->off[i];
        len = (size_t)(m->off[i + 1] - m->off[i]);
    }
    if (cap > 0) {
        size_t c = len < cap - 1 ? len : cap - 1;
        memcpy(buf, s, c);
        buf[c] = '\0';
    }
    return (int)len;
}

static int cmp_bytes(const char *a, size_t al, const char *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    if (c != 0) return c;
    return al < bl ? -1 : al > bl;
}

int32_t rk_ids_find(const rk_idmap *m, const char *s, size_t len)
{
    if (m == NULL || m->n == 0 || s == NULL) return -1;
    int32_t lo = 0, hi = m->n - 1;
    if (m->numeric) {
        int64_t v;
        if (!rk_parse_canon_int(s, len, &v)) return -1;
        while (lo <= hi) {
            int32_t mid = lo + (hi - lo) / 2;
            if (m->vals[mid] == v) return mid;
            if (m->vals[mid] < v) lo = mid + 1;
            else hi = mid - 1;
        }
        return -1;
    }
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        int c = cmp_bytes(m->arena + m->off[mid], (size_t)(m->off[mid + 1] - m->off[mid]), s, len);
        if (c == 0) return mid;
        if (c < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

void rk_ids_free(rk_idmap *m)
{
    if (m == NULL) return;
    free(m->vals);
    free(m->arena);
    free(m->off);
    free(m);
}

/* ---- integer ids --------------------------------------------------------------- */

static inline uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

typedef struct itab {
    uint64_t mask;
    int64_t *key;
    int32_t *val; /* -1: empty */
} itab;

static int itab_init(itab *t, uint64_t cap)
{
    t->mask = cap - 1;
    t->key = malloc(cap * sizeof *t->key);
    t->val = malloc(cap * sizeof *t->val);
    if (t->key == NULL || t->val == NULL) return -1;
    memset(t->val, 0xff, cap * sizeof *t->val);
    return 0;
}

static inline uint64_t itab_slot(const itab *t, int64_t k)
{
    uint64_t h = mix64((uint64_t)k) & t->mask;
    while (t->val[h] >= 0 && t->key[h] != k) h = (h + 1) & t->mask;
    return h;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static rk_status too_many(rk_error *err)
{
    return rk_error_set(err, RK_E_RANGE, "more than %d distinct ids", INT32_MAX);
}

static rk_status build_direct(rk_idcol *cols, int ncols, int nt, int64_t lo, uint64_t range,
                              rk_idmap *m, rk_error *err)
{
    int32_t *tab = calloc(range, sizeof *tab);
    if (tab == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory for an id table");
    for (int c = 0; c < ncols; c++) {
        const int64_t *v = cols[c].v;
#pragma omp parallel for schedule(static) num_threads(nt) if (cols[c].n > RK_PAR_MIN)
        for (int64_t j = 0; j < cols[c].n; j++) {
#pragma omp atomic write
            tab[(uint64_t)v[j] - (uint64_t)lo] = 1;
        }
    }
    int64_t d = 0;
    for (uint64_t k = 0; k < range; k++) d += tab[k];
    m->vals = malloc((size_t)(d > 0 ? d : 1) * sizeof *m->vals);
    if (m->vals == NULL) {
        free(tab);
        return rk_error_set(err, RK_E_NOMEM, "out of memory for %lld ids", (long long)d);
    }
    int32_t x = 0;
    for (uint64_t k = 0; k < range; k++)
        if (tab[k]) {
            m->vals[x] = (int64_t)((uint64_t)lo + k);
            tab[k] = x++;
        }
    m->n = x;
    for (int c = 0; c < ncols; c++) {
        const int64_t *v = cols[c].v;
        int32_t *dense = cols[c].dense;
        if (dense == NULL) continue;
#pragma omp parallel for schedule(static) num_threads(nt) if (cols[c].n > RK_PAR_MIN)
        for (int64_t j = 0; j < cols[c].n; j++) dense[j] = tab[(uint64_t)v[j] - (uint64_t)lo];
    }
    free(tab);
    return RK_OK;
}

static rk_status build_hashed(rk_idcol *cols, int ncols, int nt, rk_idmap *m, rk_error *err)
{
    itab t = {0, NULL, NULL};
    uint64_t cap = 1 << 12;
    int64_t d = 0, dcap = 1 << 10;
    int64_t *keys = malloc((size_t)dcap * sizeof *keys);
    rk_status st = RK_OK;
    if (keys == NULL || itab_init(&t, cap) != 0) goto nomem;
    for (int c = 0; c < ncols; c++)
        for (int64_t j = 0; j < cols[c].n; j++) {
            int64_t k = cols[c].v[j];
            uint64_t h = itab_slot(&t, k);
            if (t.val[h] >= 0) continue;
            if (d == INT32_MAX) {
                st = too_many(err);
                goto out;
            }
            if (d == dcap) {
                dcap *= 2;
                int64_t *nk = realloc(keys, (size_t)dcap * sizeof *nk);
                if (nk == NULL) goto nomem;
                keys = nk;
            }
            keys[d] = k;
            t.key[h] = k;
            t.val[h] = (int32_t)d++;
            if ((uint64_t)d * 2 > cap) { /* grow and re-insert */
                itab n2;
                cap *= 2;
                if (itab_init(&n2, cap) != 0) {
                    free(n2.key);
                    free(n2.val);
                    goto nomem;
                }
                for (int64_t q = 0; q < d; q++) {
                    uint64_t s = itab_slot(&n2, keys[q]);
                    n2.key[s] = keys[q];
                    n2.val[s] = (int32_t)q;
                }
                free(t.key);
                free(t.val);
                t = n2;
            }
        }
    qsort(keys, (size_t)d, sizeof *keys, cmp_i64);
    for (int64_t q = 0; q < d; q++) t.val[itab_slot(&t, keys[q])] = (int32_t)q;
    for (int c = 0; c < ncols; c++) {
        const int64_t *v = cols[c].v;
        int32_t *dense = cols[c].dense;
        if (dense == NULL) continue;
#pragma omp parallel for schedule(static) num_threads(nt) if (cols[c].n > RK_PAR_MIN)
        for (int64_t j = 0; j < cols[c].n; j++) dense[j] = t.val[itab_slot(&t, v[j])];
    }
    m->vals = keys;
    m->n = (int32_t)d;
    keys = NULL;
    goto out;
nomem:
    st = rk_error_set(err, RK_E_NOMEM, "out of memory for an id table");
out:
    free(keys);
    free(t.key);
    free(t.val);
    return st;
}

static rk_status build_numeric(rk_idcol *cols, int ncols, int nt, int64_t total, rk_idmap *m,
                               rk_error *err)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    m->numeric = 1;
    if (total == 0) return RK_OK;
    for (int c = 0; c < ncols; c++) {
        const int64_t *v = cols[c].v;
        int64_t l = INT64_MAX, h = INT64_MIN;
#pragma omp parallel for schedule(static) num_threads(nt) reduction(min : l) reduction(max : h) \
    if (cols[c].n > RK_PAR_MIN)
        for (int64_t j = 0; j < cols[c].n; j++) {
            if (v[j] < l) l = v[j];
            if (v[j] > h) h = v[j];
        }
        if (l < lo) lo = l;
        if (h > hi) hi = h;
    }
    uint64_t span = (uint64_t)hi - (uint64_t)lo; /* range - 1, no overflow */
    if (span < RK_DIRECT_MAX && span < 4 * (uint64_t)total + 65536)
        return build_direct(cols, ncols, nt, lo, span + 1, m, err);
    return build_hashed(cols, ncols, nt, m, err);
}

/* ---- string ids ---------------------------------------------------------------- */

typedef struct sref {
    const char *s;
    int32_t len, idx;
} sref;

static int cmp_sref(const void *a, const void *b)
{
    const sref *x = a, *y = b;
    return cmp_bytes(x->s, (size_t)x->len, y->s, (size_t)y->len);
}

static inline uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t k = 0; k < n; k++) h = (h ^ (unsigned char)s[k]) * 1099511628211ULL;
    return mix64(h);
}

typedef struct stab {
    uint64_t mask;
    int32_t *slot;     /* distinct index, -1: empty */
    uint64_t *hash;    /* per distinct id */
    int64_t *off;      /* per distinct id: offset into arena (length byte first) */
    char *arena;
    size_t alen, acap;
    int64_t d, dcap;
} stab;

static int stab_grow(stab *t)
{
    uint64_t cap = (t->mask + 1) * 2;
    int32_t *s = malloc(cap * sizeof *s);
    if (s == NULL) return -1;
    memset(s, 0xff, cap * sizeof *s);
    for (int64_t q = 0; q < t->d; q++) {
        uint64_t h = t->hash[q] & (cap - 1);
        while (s[h] >= 0) h = (h + 1) & (cap - 1);
        s[h] = (int32_t)q;
    }
    free(t->slot);
    t->slot = s;
    t->mask = cap - 1;
    return 0;
}

/* @return the distinct index of s, -1 out of memory, -2 too many ids. */
static int64_t stab_intern(stab *t, const char *s, size_t n)
{
    uint64_t hv = hash_bytes(s, n), h = hv & t->mask;
    while (t->slot[h] >= 0) {
        int32_t q = t->slot[h];
        const char *e = t->arena + t->off[q];
        if (t->hash[q] == hv && (size_t)(unsigned char)e[0] == n && memcmp(e + 1, s, n) == 0) return q;
        h = (h + 1) & t->mask;
    }
    if (t->d == INT32_MAX) return -2;
    if (t->d == t->dcap) {
        int64_t cap = t->dcap ? t->dcap * 2 : 1024;
        uint64_t *nh = realloc(t->hash, (size_t)cap * sizeof *nh);
        if (nh == NULL) return -1;
        t->hash = nh;
        int64_t *no = realloc(t->off, (size_t)cap * sizeof *no);
        if (no == NULL) return -1;
        t->off = no;
        t->dcap = cap;
    }
    if (t->alen + n + 1 > t->acap) {
        size_t cap = t->acap ? t->acap * 2 : 1 << 16;
        while (cap < t->alen + n + 1) cap *= 2;
        char *a = realloc(t->arena, cap);
        if (a == NULL) return -1;
        t->arena = a;
        t->acap = cap;
    }
    int64_t q = t->d++;
    t->off[q] = (int64_t)t->alen;
    t->arena[t->alen] = (char)(unsigned char)n;
    memcpy(t->arena + t->alen + 1, s, n);
    t->alen += n + 1;
    t->hash[q] = hv;
    t->slot[h] = (int32_t)q;
    if ((uint64_t)t->d * 2 > t->mask + 1 && stab_grow(t) != 0) return -1;
    return q;
}

static rk_status build_strings(rk_idcol *cols, int ncols, int nt, int64_t total, rk_idmap *m,
                               rk_error *err)
{
    stab t;
    sref *ord = NULL;
    int32_t *rank = NULL, **prov = NULL;
    rk_status st = RK_OK;

    memset(&t, 0, sizeof t);
    m->numeric = 0;
    t.mask = (1 << 12) - 1;
    t.slot = malloc((t.mask + 1) * sizeof *t.slot);
    prov = calloc((size_t)ncols, sizeof *prov);
    if (t.slot == NULL || prov == NULL) goto nomem;
    memset(t.slot, 0xff, (t.mask + 1) * sizeof *t.slot);
    (void)total;
    for (int c = 0; c < ncols; c++) {
        prov[c] = cols[c].dense;
        if (prov[c] == NULL && cols[c].n > 0) {
            prov[c] = malloc((size_t)cols[c].n * sizeof *prov[c]);
            if (prov[c] == NULL) goto nomem;
        }
        for (int64_t j = 0; j < cols[c].n; j++) {
            char buf[24];
            const char *s;
            size_t n;
            if (cols[c].tag != NULL && cols[c].tag[j]) {
                s = cols[c].arena + cols[c].v[j];
                n = (unsigned char)s[0];
                s++;
            } else {
                n = (size_t)fmt_i64(cols[c].v[j], buf);
                s = buf;
            }
            int64_t q = stab_intern(&t, s, n);
            if (q == -2) {
                st = too_many(err);
                goto out;
            }
            if (q < 0) goto nomem;
            prov[c][j] = (int32_t)q;
        }
    }
    ord = malloc((size_t)(t.d > 0 ? t.d : 1) * sizeof *ord);
    rank = malloc((size_t)(t.d > 0 ? t.d : 1) * sizeof *rank);
    m->off = malloc((size_t)(t.d + 1) * sizeof *m->off);
    m->arena = malloc(t.alen > 0 ? t.alen : 1);
    if (ord == NULL || rank == NULL || m->off == NULL || m->arena == NULL) goto nomem;
    for (int64_t q = 0; q < t.d; q++) {
        const char *e = t.arena + t.off[q];
        ord[q] = (sref){e + 1, (unsigned char)e[0], (int32_t)q};
    }
    qsort(ord, (size_t)t.d, sizeof *ord, cmp_sref);
    int64_t pos = 0;
    for (int64_t q = 0; q < t.d; q++) {
        m->off[q] = pos;
        memcpy(m->arena + pos, ord[q].s, (size_t)ord[q].len);
        pos += ord[q].len;
        rank[ord[q].idx] = (int32_t)q;
    }
    m->off[t.d] = pos;
    m->n = (int32_t)t.d;
    for (int c = 0; c < ncols; c++) {
        int32_t *dense = cols[c].dense;
        if (dense == NULL) continue;
#pragma omp parallel for schedule(static) num_threads(nt) if (cols[c].n > RK_PAR_MIN)
        for (int64_t j = 0; j < cols[c].n; j++) dense[j] = rank[dense[j]];
    }
    goto out;
nomem:
    st = rk_error_set(err, RK_E_NOMEM, "out of memory for the id table");
out:
    if (prov != NULL)
        for (int c = 0; c < ncols; c++)
            if (prov[c] != cols[c].dense) free(prov[c]);
    free(prov);
    free(ord);
    free(rank);
    free(t.slot);
    free(t.hash);
    free(t.off);
    free(t.arena);
    return st;
}

/* ---- building ------------------------------------------------------------------ */

rk_status rk_ids_build(rk_idcol *cols, int ncols, int nthreads, rk_idmap **out, rk_error *err)
{
    int64_t total = 0;
    int numeric = 1;
    int nt = nthreads > 0 ? nthreads : rk_omp_max_threads();
    *out = NULL;
    for (int c = 0; c < ncols; c++) {
        total += cols[c].n;
        if (cols[c].tag != NULL && cols[c].n > 0 && memchr(cols[c].tag, 1, (size_t)cols[c].n) != NULL)
            numeric = 0;
    }
    rk_idmap *m = calloc(1, sizeof *m);
    if (m == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory for an id map");
    rk_status st = numeric ? build_numeric(cols, ncols, nt, total, m, err)
                           : build_strings(cols, ncols, nt, total, m, err);
    if (st != RK_OK) {
        rk_ids_free(m);
        return st;
    }
    *out = m;
    return RK_OK;
}

rk_status rk_ids_from_strings(const char *const *ids, int64_t n, rk_idmap **out, rk_error *err)
{
    rk_rows r;
    rk_status st;
    *out = NULL;
    if (n < 0 || (n > 0 && ids == NULL)) return rk_error_set(err, RK_E_ARG, "no ids given");
    memset(&r, 0, sizeof r);
    if (rk_rows_reserve(&r, n > 0 ? n : 1, 0) != 0) goto nomem;
    for (int64_t k = 0; k < n; k++) {
        size_t len = ids[k] != NULL ? strlen(ids[k]) : 0;
        if (len == 0) {
            rk_rows_free(&r);
            return rk_error_set(err, RK_E_ARG, "id %lld is empty", (long long)k);
        }
        if (len > RK_ID_MAX) {
            rk_rows_free(&r);
            return rk_error_set(err, RK_E_ARG, "id %lld is longer than %d bytes", (long long)k, RK_ID_MAX);
        }
        if (rk_parse_canon_int(ids[k], len, &r.u[k])) {
            if (r.utag != NULL) r.utag[k] = 0;
        } else {
            int64_t off;
            if (rk_rows_want_tags(&r) != 0 || (off = rk_rows_put_string(&r, ids[k], len)) < 0) goto nomem;
            r.u[k] = off;
            r.utag[k] = 1;
        }
    }
    rk_idcol col = {r.u, r.utag, r.arena, n, NULL};
    st = rk_ids_build(&col, 1, 0, out, err);
    rk_rows_free(&r);
    return st;
nomem:
    rk_rows_free(&r);
    return rk_error_set(err, RK_E_NOMEM, "out of memory for %lld ids", (long long)n);
}
