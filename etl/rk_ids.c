/* rk_ids.c — raw id <-> dense index maps.
 *
 * Integer ids (the common case) never become strings: when their range is
 * small next to their count a bitmap of the values present, with popcount
 * ranks, maps value - min to the index; else each share of the rows hashes
 * its own distinct values and the shares' sorted lists are merged to give
 * the numeric order.  Both run in a few parallel passes over the rows.  As soon as one id of a map is not a
 * canonical integer, every id of the map is handled as bytes: interned in a
 * hash table, the distinct ones sorted with memcmp.
 */
#define _POSIX_C_SOURCE 200809L
#include "rk_load_internal.h"
#include "rk_mem.h"
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

const int64_t *rk_ids_values(const rk_idmap *m)
{
    return m != NULL && m->numeric ? m->vals : NULL;
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

/* The most distinct ids a map holds: dense indices are int32.  Tests lower
 * it (rk_ids_test_limit) to reach the limit without 2^31 ids. */
static int32_t id_limit = INT32_MAX;

void rk_ids_test_limit(int32_t max)
{
    id_limit = max > 0 ? max : INT32_MAX;
}

static rk_status too_many(rk_error *err)
{
    return rk_error_set(err, RK_E_RANGE, "more than %ld distinct ids (indices are 32-bit)", (long)id_limit);
}

/* Set bits of x; without -mpopcnt the builtin is a library call, too slow
 * for a pass over every row. */
static inline int popcount64(uint64_t x)
{
#if defined(__POPCNT__)
    return __builtin_popcountll(x);
#else
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (int)((x * 0x0101010101010101ULL) >> 56);
#endif
}

/* Marks offset p present: the word is read before it is written, so it stays
 * shared between cores instead of bouncing, and an atomic runs once per
 * distinct id at most. */
static inline void mark(uint64_t *bits, uint64_t p)
{
    const uint64_t bit = (uint64_t)1 << (p & 63);
    uint64_t w;
#pragma omp atomic read
    w = bits[p >> 6];
    if (!(w & bit)) {
#pragma omp atomic update
        bits[p >> 6] |= bit;
    }
}

/* Row j of an over column: its id read, its bit marked, its offset written. */
static inline void offset_at(char *b, int64_t j, int64_t lo, uint64_t *bits)
{
    int64_t x;
    memcpy(&x, b + 8 * j, sizeof x);
    const uint64_t p = (uint64_t)x - (uint64_t)lo;
    const int32_t o = (int32_t)p;
    mark(bits, p);
    memcpy(b + 4 * j, &o, sizeof o);
}

/* An over column's offsets (id - lo) written over its ids (rk_idcol), their
 * bits marked: offset j's 4 bytes lie in id j / 2's 8, so a wave of rows
 * [a, 2a) writes only ids that earlier waves read and reads none that it
 * writes.  The first rows go one by one in order, then the waves one after
 * the other, each on every thread.  The block is read as int64 and written
 * as int32: memcpy, since C's aliasing rules let only character access mix
 * the two. */
static void offsets_over(int64_t *v, int64_t n, int64_t lo, uint64_t *bits, int nt)
{
    char *b = (char *)v;
    const int64_t first = n < 1024 ? n : 1024;
    for (int64_t j = 0; j < first; j++) offset_at(b, j, lo, bits);
#pragma omp parallel num_threads(nt) if (n > RK_PAR_MIN)
    for (int64_t a = first; a < n; a *= 2) {
        const int64_t e = a < n - a ? 2 * a : n; /* min(2a, n) */
#pragma omp for schedule(static)
        for (int64_t j = a; j < e; j++) offset_at(b, j, lo, bits);
    }
}

/* Ids within RK_DIRECT_MAX of each other: a bitmap of the offsets present,
 * set while each id's offset from the minimum is written as its index; an
 * offset's rank among the set bits (a popcount prefix) is the dense index,
 * so only ids with gaps between them need their indices rewritten.  The
 * bitmap is read before it is written: the words stay shared between cores
 * instead of bouncing, and an atomic runs once per distinct id at most. */
static rk_status build_direct(rk_idcol *cols, int ncols, int nt, int64_t lo, uint64_t range,
                              rk_idmap *m, rk_error *err)
{
    const int64_t nw = (int64_t)((range + 63) / 64);
    uint64_t *bits = calloc((size_t)nw, sizeof *bits);
    int32_t *before = malloc((size_t)nw * sizeof *before);
    int64_t *part = calloc((size_t)nt + 1, sizeof *part);
    if (bits == NULL || before == NULL || part == NULL) {
        free(bits);
        free(before);
        free(part);
        return rk_error_set(err, RK_E_NOMEM, "out of memory for an id table");
    }
    for (int c = 0; c < ncols; c++) {
        const int64_t *v = cols[c].v;
        int32_t *dense = cols[c].dense;
        if (cols[c].over && dense == NULL && cols[c].n > 0) { /* ids lost from here on, even on failure */
            offsets_over((int64_t *)(uintptr_t)v, cols[c].n, lo, bits, nt);
            cols[c].dense = (int32_t *)(uintptr_t)v;
            continue;
        }
#pragma omp parallel for schedule(static) num_threads(nt) if (cols[c].n > RK_PAR_MIN)
        for (int64_t j = 0; j < cols[c].n; j++) {
            const uint64_t p = (uint64_t)v[j] - (uint64_t)lo;
            mark(bits, p);
            if (dense != NULL) dense[j] = (int32_t)p; /* the offset for now */
        }
    }
    int64_t d = 0;
#pragma omp parallel num_threads(nw > 4096 ? nt : 1)
    {
        const int th = rk_omp_thread_num(), T = rk_omp_num_threads();
        const int64_t w0 = nw * th / T, w1 = nw * (th + 1) / T;
        int64_t run = 0;
        for (int64_t w = w0; w < w1; w++) run += popcount64(bits[w]);
        part[th + 1] = run;
#pragma omp barrier
#pragma omp single
        {
            for (int q = 0; q < T; q++) part[q + 1] += part[q];
            d = part[T];
            m->vals = malloc((size_t)(d > 0 ? d : 1) * sizeof *m->vals);
        }
        if (m->vals != NULL) {
            run = part[th];
            for (int64_t w = w0; w < w1; w++) {
                before[w] = (int32_t)run;
                for (uint64_t x = bits[w]; x != 0; x &= x - 1)
                    m->vals[run++] = (int64_t)((uint64_t)lo + (uint64_t)w * 64 + (uint64_t)__builtin_ctzll(x));
            }
        }
    }
    free(part);
    if (m->vals == NULL || d > id_limit) { /* d <= RK_DIRECT_MAX: only a test limit is reached */
        free(bits);
        free(before);
        return m->vals == NULL ? rk_error_set(err, RK_E_NOMEM, "out of memory for %lld ids", (long long)d)
                               : too_many(err);
    }
    m->n = (int32_t)d;
    if ((uint64_t)d != range) /* gaps: offsets become ranks */
        for (int c = 0; c < ncols; c++) {
            int32_t *dense = cols[c].dense;
            if (dense == NULL) continue;
#pragma omp parallel for schedule(static) num_threads(nt) if (cols[c].n > RK_PAR_MIN)
            for (int64_t j = 0; j < cols[c].n; j++) {
                const uint32_t p = (uint32_t)dense[j];
                dense[j] = before[p >> 6] + popcount64(bits[p >> 6] & (((uint64_t)1 << (p & 63)) - 1));
            }
        }
    free(bits);
    free(before);
    return RK_OK;
}

/* One share of the rows for the hashed path: its distinct ids in a table of
 * its own, their local indices written as the rows' indices for now. */
typedef struct share {
    itab t;
    int64_t *keys;   /* local index -> id */
    int64_t d, dcap;
    int32_t *grank;  /* local index -> dense index */
} share;

/* @return the local index of k, -1 out of memory, -2 too many ids. */
static int64_t share_add(share *S, int64_t k)
{
    uint64_t h = itab_slot(&S->t, k);
    if (S->t.val[h] >= 0) return S->t.val[h];
    if (S->d == id_limit) return -2;
    if (S->d == S->dcap) {
        int64_t cap = S->dcap ? S->dcap * 2 : 1024;
        int64_t *nk = realloc(S->keys, (size_t)cap * sizeof *nk);
        if (nk == NULL) return -1;
        S->keys = nk;
        S->dcap = cap;
    }
    S->keys[S->d] = k;
    S->t.key[h] = k;
    S->t.val[h] = (int32_t)S->d;
    if ((uint64_t)++S->d * 2 > S->t.mask + 1) { /* grow and re-insert */
        itab n2;
        if (itab_init(&n2, (S->t.mask + 1) * 2) != 0) {
            free(n2.key);
            free(n2.val);
            return -1;
        }
        for (int64_t q = 0; q < S->d; q++) {
            uint64_t x = itab_slot(&n2, S->keys[q]);
            n2.key[x] = S->keys[q];
            n2.val[x] = (int32_t)q;
        }
        free(S->t.key);
        free(S->t.val);
        S->t = n2;
    }
    return S->d - 1;
}

typedef struct keyidx {
    int64_t key;
    int32_t idx;
} keyidx;

static int cmp_keyidx(const void *a, const void *b)
{
    int64_t x = ((const keyidx *)a)->key, y = ((const keyidx *)b)->key;
    return (x > y) - (x < y);
}

/* Sparse integer ids: each share of the rows collects its distinct ids
 * (hash table) and sorts them; a merge of the shares' sorted lists gives the
 * numeric order and each share's local -> dense table; a last pass rewrites
 * the rows' indices.  The rows are read twice, in parallel; only the merge,
 * over the shares' distinct ids, is serial. */
static rk_status build_hashed(rk_idcol *cols, int ncols, int nt, rk_idmap *m, rk_error *err)
{
    share *sh = calloc((size_t)nt, sizeof *sh);
    keyidx **sorted = calloc((size_t)nt, sizeof *sorted);
    int64_t *at = calloc((size_t)nt, sizeof *at);
    int64_t total = 0;
    int fail = 0; /* 1 out of memory, 2 too many ids */
    rk_status st = RK_OK;
    if (sh == NULL || sorted == NULL || at == NULL) {
        fail = 1;
        goto out;
    }
#pragma omp parallel for schedule(static, 1) num_threads(nt) reduction(max : fail)
    for (int s = 0; s < nt; s++) {
        share *S = &sh[s];
        int f = 0;
        if (itab_init(&S->t, 1 << 10) != 0) f = 1;
        for (int c = 0; c < ncols && !f; c++) {
            const int64_t lo = cols[c].n * s / nt, hi = cols[c].n * (s + 1) / nt;
            for (int64_t j = lo; j < hi; j++) {
                int64_t q = share_add(S, cols[c].v[j]);
                if (q < 0) {
                    f = q == -2 ? 2 : 1;
                    break;
                }
                if (cols[c].dense != NULL) cols[c].dense[j] = (int32_t)q;
            }
        }
        if (!f) {
            sorted[s] = malloc((size_t)(S->d > 0 ? S->d : 1) * sizeof *sorted[s]);
            S->grank = malloc((size_t)(S->d > 0 ? S->d : 1) * sizeof *S->grank);
            if (sorted[s] == NULL || S->grank == NULL) f = 1;
        }
        if (!f) {
            for (int64_t q = 0; q < S->d; q++) sorted[s][q] = (keyidx){S->keys[q], (int32_t)q};
            qsort(sorted[s], (size_t)S->d, sizeof *sorted[s], cmp_keyidx);
        }
        if (f > fail) fail = f;
    }
    if (fail) goto out;
    for (int s = 0; s < nt; s++) total += sh[s].d;
    m->vals = malloc((size_t)(total > 0 ? total : 1) * sizeof *m->vals);
    if (m->vals == NULL) {
        fail = 1;
        goto out;
    }
    /* merge: the smallest head is the next id; every share holding it gets its rank */
    int64_t d = 0;
    for (;;) {
        int64_t k = INT64_MAX;
        int any = 0;
        for (int s = 0; s < nt; s++)
            if (at[s] < sh[s].d && (!any || sorted[s][at[s]].key < k)) {
                k = sorted[s][at[s]].key;
                any = 1;
            }
        if (!any) break;
        if (d == id_limit) {
            fail = 2;
            goto out;
        }
        for (int s = 0; s < nt; s++)
            if (at[s] < sh[s].d && sorted[s][at[s]].key == k) sh[s].grank[sorted[s][at[s]++].idx] = (int32_t)d;
        m->vals[d++] = k;
    }
    m->n = (int32_t)d;
#pragma omp parallel for schedule(static, 1) num_threads(nt)
    for (int s = 0; s < nt; s++)
        for (int c = 0; c < ncols; c++) {
            int32_t *dense = cols[c].dense;
            if (dense == NULL) continue;
            const int64_t lo = cols[c].n * s / nt, hi = cols[c].n * (s + 1) / nt;
            for (int64_t j = lo; j < hi; j++) dense[j] = sh[s].grank[dense[j]];
        }
out:
    if (fail == 1) st = rk_error_set(err, RK_E_NOMEM, "out of memory for an id table");
    if (fail == 2) st = too_many(err);
    if (sh != NULL)
        for (int s = 0; s < nt; s++) {
            free(sh[s].t.key);
            free(sh[s].t.val);
            free(sh[s].keys);
            free(sh[s].grank);
            free(sorted[s]);
        }
    free(sh);
    free(sorted);
    free(at);
    return st;
}

/* New blocks for the over columns' indices, where they cannot go over the ids. */
static rk_status new_dense(rk_idcol *cols, int ncols, rk_error *err)
{
    for (int c = 0; c < ncols; c++)
        if (cols[c].over && cols[c].dense == NULL && cols[c].n > 0) {
            cols[c].dense = rk_mem_alloc((size_t)cols[c].n * sizeof *cols[c].dense);
            if (cols[c].dense == NULL)
                return rk_error_set(err, RK_E_NOMEM, "out of memory for %lld indices", (long long)cols[c].n);
        }
    return RK_OK;
}

/* The least and greatest id of a column: one pass, on every thread. */
static void scan_range(const rk_idcol *col, int nt, int64_t *lo, int64_t *hi)
{
    const int64_t *v = col->v;
    int64_t l = INT64_MAX, h = INT64_MIN;
#pragma omp parallel for schedule(static) num_threads(nt) reduction(min : l) reduction(max : h) \
    if (col->n > RK_PAR_MIN)
    for (int64_t j = 0; j < col->n; j++) {
        if (v[j] < l) l = v[j];
        if (v[j] > h) h = v[j];
    }
    *lo = l;
    *hi = h;
}

static int check_ranges;
static int64_t ranges_checked, ranges_wrong;

void rk_ids_test_check_ranges(int on, int64_t *checked, int64_t *wrong)
{
    if (checked != NULL) *checked = ranges_checked;
    if (wrong != NULL) *wrong = ranges_wrong;
    if (on != check_ranges) ranges_checked = ranges_wrong = 0;
    check_ranges = on;
}

/* The columns' range: the loader's where it gathered one (ranged), else a
 * pass over the ids. */
static void columns_range(const rk_idcol *cols, int ncols, int nt, int64_t *lo, int64_t *hi)
{
    *lo = INT64_MAX, *hi = INT64_MIN;
    for (int c = 0; c < ncols; c++) {
        if (cols[c].n == 0) continue;
        int64_t l, h;
        if (cols[c].ranged) {
            l = cols[c].lo, h = cols[c].hi;
            if (check_ranges) {
                int64_t sl, sh;
                scan_range(&cols[c], nt, &sl, &sh);
                ranges_checked++;
                ranges_wrong += sl != l || sh != h;
            }
        } else {
            scan_range(&cols[c], nt, &l, &h);
        }
        if (l < *lo) *lo = l;
        if (h > *hi) *hi = h;
    }
}

static rk_status build_numeric(rk_idcol *cols, int ncols, int nt, int64_t total, rk_idmap *m,
                               rk_error *err)
{
    int64_t lo, hi;
    m->numeric = 1;
    if (total == 0) return RK_OK;
    columns_range(cols, ncols, nt, &lo, &hi);
    uint64_t span = (uint64_t)hi - (uint64_t)lo; /* range - 1, no overflow */
    if (span < RK_DIRECT_MAX && span < 4 * (uint64_t)total + 65536)
        return build_direct(cols, ncols, nt, lo, span + 1, m, err);
    RK_FORWARD(new_dense(cols, ncols, err));
    return build_hashed(cols, ncols, total < RK_PAR_MIN ? 1 : nt, m, err);
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
    if (t->d == id_limit) return -2;
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
            prov[c] = rk_mem_alloc((size_t)cols[c].n * sizeof *prov[c]);
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
    rk_status st = numeric ? build_numeric(cols, ncols, nt, total, m, err) : new_dense(cols, ncols, err);
    if (st == RK_OK && !numeric) st = build_strings(cols, ncols, nt, total, m, err);
    for (int c = 0; c < ncols && st == RK_OK; c++)
        if (cols[c].over && cols[c].dense != NULL && (const void *)cols[c].dense == (const void *)cols[c].v)
            cols[c].took = 1;
    if (st != RK_OK) {
        for (int c = 0; c < ncols; c++)
            if (cols[c].over && cols[c].dense != NULL) {
                if (cols[c].dense != (const void *)cols[c].v) free(cols[c].dense);
                cols[c].dense = NULL;
            }
        rk_ids_free(m);
        return st;
    }
    *out = m;
    return RK_OK;
}

void rk_ids_cut(rk_idcol *cols, int ncols)
{
    for (int c = 0; c < ncols; c++)
        if (cols[c].took) {
            int32_t *cut = realloc(cols[c].dense, (size_t)cols[c].n * sizeof *cut);
            if (cut != NULL) cols[c].dense = cut;
        }
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
    rk_idcol col = {r.u, r.utag, r.arena, n, NULL, 0, 0, 0, 0, 0};
    st = rk_ids_build(&col, 1, 0, out, err);
    rk_rows_free(&r);
    return st;
nomem:
    rk_rows_free(&r);
    return rk_error_set(err, RK_E_NOMEM, "out of memory for %lld ids", (long long)n);
}
