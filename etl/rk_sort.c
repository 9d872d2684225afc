/* rk_sort.c — duplicates and the user-major CSR from one sort (rk_csr.h).
 *
 * The ratings are sorted by (user, item, file position); duplicates are then
 * neighbours and the survivors, in order, are the CSR.  The sort is one MSD
 * step on the user's high bits (the bucket) followed by work in cache:
 *   1. each thread counts the buckets of a contiguous share of the ratings,
 *      checking the indices on the way;
 *   2. each thread scatters its share, stably, into the buckets.  Input
 *      grouped by user (MovieLens files) skips this: its buckets already are
 *      contiguous ranges of the file;
 *   3. each bucket (a few hundred users, sized for L2) is put in (user,
 *      item) order by an LSD radix sort, stable, so equal pairs stay in file
 *      order.  A bucket already in order skips it; one whose items already
 *      ascend (files grouped by movie, as Netflix's are) sorts on the user
 *      bits only;
 *   4. a walk over the bucket finds duplicates and writes its rows.
 * Two routes share these steps.  The narrow one, taken first, moves 32-bit
 * keys (user's low bits, item) with the ratings and scatters them straight
 * into the output arrays (file positions too, into pos, when asked for),
 * each bucket sorted where its rows end up: no scratch arrays, whose page
 * faults would cost as much as the sort.  Its keys cannot tell duplicates
 * apart, so it gives up when it meets one; the wide route then moves 64-bit
 * keys (user's low bits, item, file position), resolves duplicates by policy,
 * marks the removed ratings in a bitmap in file order (rare, atomic) and
 * compacts the rows and the ratings, in parallel, out of place.
 */
#define _POSIX_C_SOURCE 200809L
#include "rk_csr.h"
#include "rk_omp.h"

#include <stdlib.h>
#include <string.h>

#define RK_SORT_BUCKET 16384 /* keys, ratings and the radix copies stay in L2 */
#define RK_SORT_HBITS 12     /* at most 4096 buckets: write streams of the scatter */
#define RK_SORT_DIGIT 12     /* bits per radix pass inside a bucket */
#define RK_PAR_MIN 65536     /* below this many ratings, one thread */

static int bitlen(uint64_t x)
{
    int b = 0;
    while (x != 0) {
        b++;
        x >>= 1;
    }
    return b;
}

static inline uint64_t low_mask(int bits)
{
    return bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1;
}

typedef struct sorter {
    rk_triples *t;
    int64_t n;
    int32_t nu, ni;
    rk_dup_policy policy;
    int nt, digit;
    int sbits, ibits, kbits; /* key = ((user low bits << ibits | item) << kbits) | position */
    int64_t nb;              /* buckets: users >> sbits */
    int user_sorted;         /* the input is grouped by user: no scatter */
    int64_t *bstart;         /* nb + 1: where each bucket starts, duplicates included */
    int64_t *bsurv;          /* nb: survivors per bucket */
    uint64_t *rec;           /* n keys, bucketed (NULL when user_sorted) */
    float *rat;              /* n ratings alongside */
    int want_csr;
    int32_t *idx;            /* n: rows at their bucket's start */
    float *val;
    int64_t *pos;            /* n: file positions, or NULL */
    int64_t *ptr;            /* nu + 1: survivors per user, then offsets */
    uint64_t *drop;          /* file order: 1 = removed (wide route) */
    int stop;                /* the narrow route met a duplicate */
} sorter;

/* Per-thread scratch for one bucket: two copies of keys (of either width),
 * ratings and, when wanted, file positions for the radix passes, and, for the
 * wide route on grouped input, the keys built from the file. */
typedef struct wksp {
    int64_t cap;
    uint64_t *k[2];
    float *r[2];
    int64_t *p[2];
    uint64_t *kin;
    int64_t *cnt;
} wksp;

typedef struct tally {
    int64_t removed, first_dup;
    int oom;
} tally; /* what one thread found */

static void wksp_free(wksp *w)
{
    for (int c = 0; c < 2; c++) {
        free(w->k[c]);
        free(w->r[c]);
        free(w->p[c]);
    }
    free(w->kin);
    free(w->cnt);
}

static int wksp_reserve(wksp *w, int64_t m, int digit, int with_pos)
{
    if (w->cnt == NULL && (w->cnt = malloc(((size_t)1 << digit) * sizeof *w->cnt)) == NULL) return -1;
    if (m <= w->cap && (!with_pos || w->p[0] != NULL)) return 0;
    int64_t cap = m > w->cap ? m + m / 4 : w->cap;
    for (int c = 0; c < 2; c++) {
        free(w->k[c]);
        free(w->r[c]);
        free(w->p[c]);
        w->p[c] = NULL;
    }
    free(w->kin);
    w->cap = 0;
    int ok = 1;
    for (int c = 0; c < 2; c++) {
        ok &= (w->k[c] = malloc((size_t)cap * sizeof *w->k[c])) != NULL;
        ok &= (w->r[c] = malloc((size_t)cap * sizeof *w->r[c])) != NULL;
        if (with_pos) ok &= (w->p[c] = malloc((size_t)cap * sizeof *w->p[c])) != NULL;
    }
    ok &= (w->kin = malloc((size_t)cap * sizeof *w->kin)) != NULL;
    if (ok) w->cap = cap;
    return ok ? 0 : -1;
}

/* Exclusive prefix sums of cnt[0..nbins); @return the total. */
static int64_t prefix(int64_t *cnt, uint64_t nbins)
{
    int64_t run = 0;
    for (uint64_t d = 0; d < nbins; d++) {
        int64_t c = cnt[d];
        cnt[d] = run;
        run += c;
    }
    return run;
}

/* ---- the narrow route ---------------------------------------------------------------- */

/* Stable LSD radix sort of m records (32-bit keys rk, ratings rv, file
 * positions rp when not NULL) on key bits [lo, hi); the result ends in
 * rk/rv/rp again. */
static void radix32(uint32_t *rk, float *rv, int64_t *rp, int64_t m, int lo, int hi, int digit, wksp *w)
{
    const int passes = (hi - lo + digit - 1) / digit;
    if (passes == 0) return;
    const int width = (hi - lo + passes - 1) / passes;
    const uint32_t *ks = rk;
    const float *rs = rv;
    const int64_t *ps = rp;
    if (passes == 1) { /* in and out are the same arrays */
        memcpy(w->k[1], rk, (size_t)m * sizeof *rk);
        memcpy(w->r[1], rv, (size_t)m * sizeof *rv);
        if (rp != NULL) memcpy(w->p[1], rp, (size_t)m * sizeof *rp);
        ks = (const uint32_t *)w->k[1];
        rs = w->r[1];
        ps = w->p[1];
    }
    for (int p = 0, shift = lo; p < passes; p++, shift += width) {
        const int wd = hi - shift < width ? hi - shift : width;
        const uint32_t mask = (uint32_t)low_mask(wd);
        const int last = p == passes - 1;
        uint32_t *kd = last ? rk : (uint32_t *)w->k[p & 1];
        float *rd = last ? rv : w->r[p & 1];
        int64_t *pd = last ? rp : w->p[p & 1];
        int64_t *cnt = w->cnt;
        memset(cnt, 0, ((size_t)mask + 1) * sizeof *cnt);
        for (int64_t q = 0; q < m; q++) cnt[(ks[q] >> shift) & mask]++;
        prefix(cnt, (uint64_t)mask + 1);
        if (rp == NULL)
            for (int64_t q = 0; q < m; q++) {
                int64_t d = cnt[(ks[q] >> shift) & mask]++;
                kd[d] = ks[q];
                rd[d] = rs[q];
            }
        else
            for (int64_t q = 0; q < m; q++) {
                int64_t d = cnt[(ks[q] >> shift) & mask]++;
                kd[d] = ks[q];
                rd[d] = rs[q];
                pd[d] = ps[q];
            }
        ks = kd;
        rs = rd;
        ps = pd;
    }
}

/* Bucket b on the narrow route: its records (key = user's low bits << ibits
 * | item, rating, and file position when wanted) sit at the bucket's place in
 * idx/val/pos, scattered there or built here from grouped input.  Sort them
 * there, turn keys into items and count the rows.  @return 1 when a pair
 * repeats (then nothing is resolved). */
static int bucket32(sorter *S, int64_t b, wksp *w, int *oom)
{
    const int64_t bs = S->bstart[b], m = S->bstart[b + 1] - bs;
    const int ib = S->ibits, sb = S->sbits;
    const int32_t u0 = (int32_t)(b << sb);
    const uint32_t imask = (uint32_t)low_mask(ib);
    uint32_t *rk = (uint32_t *)S->idx + bs; /* int32 memory, read as unsigned */
    float *rv = S->val + bs;
    int64_t *rp = S->pos != NULL ? S->pos + bs : NULL;
    S->bsurv[b] = m;
    if (m == 0) return 0;
    if (S->user_sorted) {
        const int32_t *us = S->t->user + bs, *is = S->t->item + bs;
        const float *rs = S->t->rating + bs;
        int64_t q = 1;
        while (q < m && (us[q - 1] < us[q] || (us[q - 1] == us[q] && is[q - 1] < is[q]))) q++;
        if (rp != NULL)
            for (int64_t j = 0; j < m; j++) rp[j] = bs + j;
        if (q >= m) { /* sorted rows of distinct pairs: a copy */
            memcpy(rk, is, (size_t)m * sizeof *rk);
            memcpy(rv, rs, (size_t)m * sizeof *rv);
            for (q = 0; q < m; q++) S->ptr[us[q]]++;
            return 0;
        }
        const uint32_t smask = (uint32_t)low_mask(sb);
        for (q = 0; q < m; q++) rk[q] = ((uint32_t)us[q] & smask) << ib | (uint32_t)is[q];
        memcpy(rv, rs, (size_t)m * sizeof *rv);
    }
    int sorted = 1, isorted = 1;
    for (int64_t q = 1; q < m && (sorted || isorted); q++) {
        sorted &= rk[q - 1] <= rk[q];
        isorted &= (rk[q - 1] & imask) <= (rk[q] & imask);
    }
    if (!sorted) {
        if (wksp_reserve(w, m, S->digit, rp != NULL) != 0) {
            *oom = 1;
            return 0;
        }
        radix32(rk, rv, rp, m, isorted ? ib : 0, ib + sb, S->digit, w);
    }
    uint32_t prev = ~rk[0];
    for (int64_t q = 0; q < m; q++) {
        const uint32_t key = rk[q];
        if (key == prev) return 1;
        S->ptr[u0 + (int32_t)(key >> ib)]++;
        rk[q] = key & imask;
        prev = key;
    }
    return 0;
}

/* ---- the wide route ------------------------------------------------------------------ */

/* Stable LSD radix sort of m records (64-bit keys ks, ratings rs) on key bits
 * [lo, hi) into w's copies.  @return the copy holding them, -1 if lo == hi. */
static int radix64(const uint64_t *ks, const float *rs, int64_t m, int lo, int hi, int digit, wksp *w)
{
    const int passes = (hi - lo + digit - 1) / digit;
    if (passes == 0) return -1;
    const int width = (hi - lo + passes - 1) / passes;
    for (int p = 0, shift = lo; p < passes; p++, shift += width) {
        const int wd = hi - shift < width ? hi - shift : width;
        const uint64_t mask = low_mask(wd);
        uint64_t *kd = w->k[p & 1];
        float *rd = w->r[p & 1];
        int64_t *cnt = w->cnt;
        memset(cnt, 0, ((size_t)mask + 1) * sizeof *cnt);
        for (int64_t q = 0; q < m; q++) cnt[(ks[q] >> shift) & mask]++;
        prefix(cnt, mask + 1);
        for (int64_t q = 0; q < m; q++) {
            int64_t d = cnt[(ks[q] >> shift) & mask]++;
            kd[d] = ks[q];
            rd[d] = rs[q];
        }
        ks = kd;
        rs = rd;
    }
    return (passes - 1) & 1;
}

/* Walk bucket b in (user, item, position) order: resolve duplicates, write
 * the survivors from the bucket's start, count them per user. */
static void emit(sorter *S, int64_t b, const uint64_t *X, const float *Y, int64_t m, tally *ty)
{
    const int kb = S->kbits, ib = S->ibits;
    const uint64_t kmask = low_mask(kb), imask = low_mask(ib);
    const int32_t u0 = (int32_t)(b << S->sbits);
    const rk_dup_policy pol = S->policy;
    int64_t o = S->bstart[b];
    for (int64_t q = 0; q < m;) {
        const uint64_t pair = X[q] >> kb;
        int64_t r = q + 1, s = q;
        while (r < m && X[r] >> kb == pair) r++;
        float v = Y[q];
        if (r - q > 1) {
            ty->removed += r - q - 1;
            if ((int64_t)(X[q + 1] & kmask) < ty->first_dup) ty->first_dup = (int64_t)(X[q + 1] & kmask);
            if (pol == RK_DUP_LAST) {
                s = r - 1;
                v = Y[s];
            } else if (pol == RK_DUP_MEAN) { /* summed in file order, as rk_triples_dedupe does */
                double sum = Y[q];
                for (int64_t j = q + 1; j < r; j++) sum += Y[j];
                v = (float)(sum / (double)(r - q));
                S->t->rating[X[q] & kmask] = v;
            }
            if (pol != RK_DUP_ERROR)
                for (int64_t j = q; j < r; j++) {
                    if (j == s) continue;
                    uint64_t k = X[j] & kmask;
#pragma omp atomic update
                    S->drop[k >> 6] |= (uint64_t)1 << (k & 63);
                }
        }
        if (S->want_csr) {
            S->idx[o] = (int32_t)(pair & imask);
            S->val[o] = v;
            if (S->pos != NULL) S->pos[o] = (int64_t)(X[s] & kmask);
        }
        o++;
        S->ptr[u0 + (int32_t)(pair >> ib)]++;
        q = r;
    }
    S->bsurv[b] = o - S->bstart[b];
}

static void do_bucket(sorter *S, int64_t b, wksp *w, tally *ty)
{
    const int64_t bs = S->bstart[b], m = S->bstart[b + 1] - bs;
    const int kb = S->kbits, ib = S->ibits;
    if (m == 0) return;
    if (wksp_reserve(w, m, S->digit, 0) != 0) {
        ty->oom = 1;
        return;
    }
    const uint64_t *X;
    const float *Y;
    if (S->user_sorted) {
        const int32_t *us = S->t->user + bs, *is = S->t->item + bs;
        int64_t j = 1;
        while (j < m && (us[j - 1] < us[j] || (us[j - 1] == us[j] && is[j - 1] < is[j]))) j++;
        if (j >= m) { /* sorted rows of distinct pairs: a copy, as on the narrow route */
            if (S->want_csr) {
                memcpy(S->idx + bs, is, (size_t)m * sizeof *S->idx);
                memcpy(S->val + bs, S->t->rating + bs, (size_t)m * sizeof *S->val);
                if (S->pos != NULL)
                    for (j = 0; j < m; j++) S->pos[bs + j] = bs + j;
            }
            for (j = 0; j < m; j++) S->ptr[us[j]]++;
            S->bsurv[b] = m;
            return;
        }
        const uint64_t smask = low_mask(S->sbits);
        for (int64_t q = 0; q < m; q++)
            w->kin[q] = (((uint64_t)((uint32_t)us[q] & smask) << ib | (uint32_t)is[q]) << kb) | (uint64_t)(bs + q);
        X = w->kin;
        Y = S->t->rating + bs;
    } else {
        X = S->rec + bs;
        Y = S->rat + bs;
    }
    /* already in order, or at least by item? */
    const uint64_t imask = low_mask(ib);
    int sorted = 1, isorted = 1;
    for (int64_t q = 1; q < m && (sorted || isorted); q++) {
        sorted &= X[q - 1] <= X[q];
        isorted &= ((X[q - 1] >> kb) & imask) <= ((X[q] >> kb) & imask);
    }
    if (!sorted) {
        int c = radix64(X, Y, m, isorted ? kb + ib : kb, kb + ib + S->sbits, S->digit, w);
        if (c >= 0) {
            X = w->k[c];
            Y = w->r[c];
        }
    }
    emit(S, b, X, Y, m, ty);
}

/* ---- the passes over the ratings ---------------------------------------------------- */

/* Count buckets per chunk (nt contiguous chunks of the ratings), check the
 * indices' range (before anything is changed: t stays as it was on errors)
 * and whether the users never decrease. */
static int64_t count_buckets(sorter *S, int64_t *hist)
{
    const int32_t *user = S->t->user, *item = S->t->item;
    const int64_t n = S->n, nb = S->nb;
    const int nt = S->nt, sb = S->sbits;
    int64_t bad = n, unsorted = 0;
#pragma omp parallel for schedule(static, 1) num_threads(nt) reduction(min : bad) reduction(+ : unsorted)
    for (int c = 0; c < nt; c++) {
        int64_t lo = n * c / nt, hi = n * (c + 1) / nt;
        int64_t *h = hist + (size_t)c * (size_t)nb;
        int32_t prev = lo > 0 ? user[lo - 1] : INT32_MIN;
        for (int64_t k = lo; k < hi; k++) {
            int32_t u = user[k];
            if ((uint32_t)u >= (uint32_t)S->nu || (uint32_t)item[k] >= (uint32_t)S->ni) {
                if (k < bad) bad = k;
                continue;
            }
            unsorted += u < prev;
            prev = u;
            h[(uint32_t)u >> sb]++;
        }
    }
    S->user_sorted = unsorted == 0;
    return bad;
}

/* Scatter each chunk, stably, into the buckets (offsets per chunk in off):
 * 32-bit keys into idx, ratings into val, file positions into pos if wanted. */
static void scatter32(sorter *S, int64_t *off)
{
    const int32_t *user = S->t->user, *item = S->t->item;
    const float *rating = S->t->rating;
    const int64_t n = S->n, nb = S->nb;
    const int nt = S->nt, sb = S->sbits, ib = S->ibits;
    const uint32_t smask = (uint32_t)low_mask(sb);
    uint32_t *rk = (uint32_t *)S->idx;
    float *rv = S->val;
    int64_t *rp = S->pos;
#pragma omp parallel for schedule(static, 1) num_threads(nt)
    for (int c = 0; c < nt; c++) {
        int64_t lo = n * c / nt, hi = n * (c + 1) / nt;
        int64_t *o = off + (size_t)c * (size_t)nb;
        if (rp == NULL)
            for (int64_t k = lo; k < hi; k++) {
                uint32_t u = (uint32_t)user[k];
                int64_t d = o[u >> sb]++;
                rk[d] = (u & smask) << ib | (uint32_t)item[k];
                rv[d] = rating[k];
            }
        else
            for (int64_t k = lo; k < hi; k++) {
                uint32_t u = (uint32_t)user[k];
                int64_t d = o[u >> sb]++;
                rk[d] = (u & smask) << ib | (uint32_t)item[k];
                rv[d] = rating[k];
                rp[d] = k;
            }
    }
}

/* As scatter32, 64-bit keys with the file position into rec, ratings into rat. */
static void scatter64(sorter *S, int64_t *off)
{
    const int32_t *user = S->t->user, *item = S->t->item;
    const float *rating = S->t->rating;
    const int64_t n = S->n, nb = S->nb;
    const int nt = S->nt, sb = S->sbits, ib = S->ibits, kb = S->kbits;
    const uint64_t smask = low_mask(sb);
    uint64_t *rec = S->rec;
    float *rat = S->rat;
#pragma omp parallel for schedule(static, 1) num_threads(nt)
    for (int c = 0; c < nt; c++) {
        int64_t lo = n * c / nt, hi = n * (c + 1) / nt;
        int64_t *o = off + (size_t)c * (size_t)nb;
        for (int64_t k = lo; k < hi; k++) {
            uint32_t u = (uint32_t)user[k], it = (uint32_t)item[k];
            int64_t d = o[u >> sb]++;
            rec[d] = (((uint64_t)(u & smask) << ib | it) << kb) | (uint64_t)k;
            rat[d] = rating[k];
        }
    }
}

static rk_status range_error(const rk_triples *t, int32_t nu, int32_t ni, rk_error *err)
{
    int64_t bad = t->n;
#pragma omp parallel for schedule(static) reduction(min : bad)
    for (int64_t k = 0; k < t->n; k++)
        if ((t->user[k] < 0 || t->user[k] >= nu || t->item[k] < 0 || t->item[k] >= ni) && k < bad) bad = k;
    /* the same words as rk_csr.c's check */
    return rk_error_set(err, RK_E_ARG, "rating %lld: (user %d, item %d) is outside %d x %d", (long long)bad,
                        t->user[bad], t->item[bad], nu, ni);
}

/* ---- after the buckets ------------------------------------------------------------- */

/* Survivor counts per user -> row offsets; @return the survivors. */
static int64_t offsets(sorter *S, int64_t *fb)
{
    int64_t run = 0;
    for (int64_t b = 0; b < S->nb; b++) {
        fb[b] = run;
        run += S->bsurv[b];
    }
    fb[S->nb] = run;
#pragma omp parallel for schedule(static) num_threads(S->nt)
    for (int64_t b = 0; b < S->nb; b++) {
        int64_t u0 = b << S->sbits, u1 = (b + 1) << S->sbits, o = fb[b];
        if (u1 > S->nu) u1 = S->nu;
        for (int64_t u = u0; u < u1; u++) {
            int64_t c = S->ptr[u];
            S->ptr[u] = o;
            o += c;
        }
    }
    S->ptr[S->nu] = run;
    return run;
}

/* Survivors before each 64-rating word of the drop bitmap (nw + 1 entries). */
static rk_status drop_prefix(const uint64_t *drop, int64_t nw, int64_t *before, int nt, rk_error *err)
{
    int64_t *part = calloc((size_t)nt + 1, sizeof *part);
    if (part == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory counting duplicates");
#pragma omp parallel num_threads(nt)
    {
        int c = rk_omp_thread_num(), T = rk_omp_num_threads();
        int64_t lo = nw * c / T, hi = nw * (c + 1) / T, run = 0;
        for (int64_t w = lo; w < hi; w++) run += 64 - __builtin_popcountll(drop[w]);
        part[c + 1] = run;
#pragma omp barrier
#pragma omp single
        for (int q = 0; q < T; q++) part[q + 1] += part[q];
        run = part[c];
        for (int64_t w = lo; w < hi; w++) {
            before[w] = run;
            run += 64 - __builtin_popcountll(drop[w]);
        }
    }
    free(part);
    return RK_OK;
}

/* Remove the dropped ratings from t, keeping file order (out of place, in
 * parallel: each word of the bitmap knows where its survivors go). */
static rk_status compact_triples(rk_triples *t, const uint64_t *drop, const int64_t *before, int64_t kept, int nt,
                                 rk_error *err)
{
    rk_triples o;
    RK_FORWARD(rk_triples_alloc(&o, kept, t->time != NULL, err));
    const int64_t n = t->n, nw = (n + 63) / 64;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t w = 0; w < nw; w++) {
        int64_t d = before[w], k1 = (w + 1) * 64 < n ? (w + 1) * 64 : n;
        for (int64_t k = w * 64; k < k1; k++) {
            if (drop[w] >> (k & 63) & 1) continue;
            o.user[d] = t->user[k];
            o.item[d] = t->item[k];
            o.rating[d] = t->rating[k];
            if (o.time != NULL) o.time[d] = t->time[k];
            d++;
        }
    }
    rk_triples_free(t);
    *t = o;
    return RK_OK;
}

/* The rows were written at their bucket's start; move them together. */
static rk_status compact_rows(sorter *S, const int64_t *fb, int64_t nnz, rk_error *err)
{
    int32_t *idx = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *idx);
    float *val = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *val);
    int64_t *pos = S->pos != NULL ? malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *pos) : NULL;
    if (idx == NULL || val == NULL || (S->pos != NULL && pos == NULL)) {
        free(idx);
        free(val);
        free(pos);
        return rk_error_set(err, RK_E_NOMEM, "out of memory for %lld ratings", (long long)nnz);
    }
#pragma omp parallel for schedule(dynamic, 16) num_threads(S->nt)
    for (int64_t b = 0; b < S->nb; b++) {
        size_t c = (size_t)S->bsurv[b];
        memcpy(idx + fb[b], S->idx + S->bstart[b], c * sizeof *idx);
        memcpy(val + fb[b], S->val + S->bstart[b], c * sizeof *val);
        if (pos != NULL) memcpy(pos + fb[b], S->pos + S->bstart[b], c * sizeof *pos);
    }
    free(S->idx);
    free(S->val);
    free(S->pos);
    S->idx = idx;
    S->val = val;
    S->pos = pos;
    return RK_OK;
}

/* ---- the reference route ------------------------------------------------------------ */

static rk_status sort_generic(rk_triples *t, int32_t nu, int32_t ni, rk_dup_policy policy, rk_csr *by_user,
                              int64_t **pos, rk_dup_report *rep, rk_error *err)
{
    RK_FORWARD(rk_triples_dedupe(t, nu, ni, policy, rep, err));
    if (by_user == NULL) return RK_OK;
    RK_FORWARD(rk_csr_build(t, nu, ni, by_user, err));
    if (pos == NULL) return RK_OK;
    int64_t *p = malloc((size_t)(t->n > 0 ? t->n : 1) * sizeof *p);
    if (p == NULL) {
        rk_csr_free(by_user);
        return rk_error_set(err, RK_E_NOMEM, "out of memory for %lld positions", (long long)t->n);
    }
    const rk_csr *a = by_user;
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < t->n; k++) { /* the pairs are unique now: find each in its row */
        int64_t lo = a->ptr[t->user[k]], hi = a->ptr[t->user[k] + 1];
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (a->idx[mid] < t->item[k]) lo = mid + 1;
            else hi = mid;
        }
        p[lo] = k;
    }
    *pos = p;
    return RK_OK;
}

/* ---- the entry point -------------------------------------------------------------- */

static void sorter_free(sorter *S)
{
    free(S->bstart);
    free(S->bsurv);
    free(S->rec);
    free(S->rat);
    free(S->idx);
    free(S->val);
    free(S->pos);
    free(S->ptr);
    free(S->drop);
}

/* Bucket bits: about `bucket` ratings each, at most 2^RK_SORT_HBITS buckets,
 * more when the key would not fit in `room` bits; -1 when it cannot. */
static int choose_hbits(int64_t n, int64_t bucket, int ubits, int room)
{
    int h = bitlen((uint64_t)((n > 0 ? n - 1 : 0) / bucket));
    if (h > RK_SORT_HBITS) h = RK_SORT_HBITS;
    if (h > ubits) h = ubits;
    while (ubits - h > room && h < ubits && h < 16) h++;
    return ubits - h <= room ? h : -1;
}

/* The narrow route over all buckets.  @return 1 when a pair repeats, -1 out
 * of memory, 0 done. */
static int narrow(sorter *S, int64_t *off)
{
    int dup = 0, oom = 0;
    if (!S->user_sorted) scatter32(S, off);
#pragma omp parallel num_threads(S->nt) reduction(| : dup, oom)
    {
        wksp w;
        memset(&w, 0, sizeof w);
#pragma omp for schedule(dynamic, 1)
        for (int64_t b = 0; b < S->nb; b++) {
            int seen;
#pragma omp atomic read
            seen = S->stop;
            if (seen || dup || oom) continue;
            if (bucket32(S, b, &w, &oom)) {
                dup = 1;
#pragma omp atomic write
                S->stop = 1;
            }
        }
        wksp_free(&w);
    }
    return oom ? -1 : dup;
}

/* The wide route over all buckets (scatter into rec/rat unless grouped). */
static rk_status wide(sorter *S, int64_t *off, int64_t *removed, int64_t *first_dup, rk_error *err)
{
    const int64_t n = S->n;
    int oom = 0;
    int64_t rm = 0, fd = n;
    if (!S->user_sorted) {
        S->rec = malloc((size_t)(n > 0 ? n : 1) * sizeof *S->rec);
        S->rat = malloc((size_t)(n > 0 ? n : 1) * sizeof *S->rat);
        if (S->rec == NULL || S->rat == NULL)
            return rk_error_set(err, RK_E_NOMEM, "out of memory sorting %lld ratings", (long long)n);
        scatter64(S, off);
    }
#pragma omp parallel num_threads(S->nt) reduction(+ : rm, oom) reduction(min : fd)
    {
        wksp w;
        tally my = {0, n, 0};
        memset(&w, 0, sizeof w);
#pragma omp for schedule(dynamic, 1)
        for (int64_t b = 0; b < S->nb; b++)
            if (!my.oom) do_bucket(S, b, &w, &my);
        wksp_free(&w);
        rm += my.removed;
        fd = my.first_dup;
        oom += my.oom;
    }
    free(S->rec);
    free(S->rat);
    S->rec = NULL;
    S->rat = NULL;
    *removed = rm;
    *first_dup = fd;
    return oom ? rk_error_set(err, RK_E_NOMEM, "out of memory sorting %lld ratings", (long long)n) : RK_OK;
}

rk_status rk_triples_dedupe_csr(rk_triples *t, int32_t n_users, int32_t n_items, rk_dup_policy policy,
                                const rk_sort_opts *opts, rk_csr *by_user, int64_t **pos, rk_dup_report *rep,
                                rk_error *err)
{
    static const rk_sort_opts dflt = {0, 0, 0, 0};
    rk_dup_report local;
    sorter S;
    rk_status st = RK_OK;
    int64_t *hist = NULL, *hist2 = NULL, *fb = NULL, removed = 0, first_dup = t->n;

    if (opts == NULL) opts = &dflt;
    if (rep == NULL) rep = &local;
    rep->n_removed = 0;
    rep->first_user = rep->first_item = -1;
    if (by_user != NULL) memset(by_user, 0, sizeof *by_user);
    if (pos != NULL) *pos = NULL;
    if ((unsigned)policy > RK_DUP_ERROR) return rk_error_set(err, RK_E_ARG, "unknown duplicate policy");
    if (pos != NULL && by_user == NULL) return rk_error_set(err, RK_E_ARG, "positions asked for without a matrix");
    if (n_users < 0 || n_items < 0 || t->n < 0) return rk_error_set(err, RK_E_ARG, "negative matrix size");

    const int64_t n = t->n;
    const int ubits = bitlen(n_users > 0 ? (uint64_t)n_users - 1 : 0);
    const int ibits = bitlen(n_items > 0 ? (uint64_t)n_items - 1 : 0);
    const int kbits = bitlen(n > 0 ? (uint64_t)n - 1 : 0);
    const int64_t bucket = opts->bucket > 0 ? opts->bucket : RK_SORT_BUCKET;
    /* the narrow route when its keys fit and no positions are wanted; the
     * wide one's buckets must work for both, should the narrow one give up */
    const int hw = ibits + kbits <= 64 ? choose_hbits(n, bucket, ubits, 64 - ibits - kbits) : -1;
    const int hn = ibits <= 32 ? choose_hbits(n, bucket, ubits, 32 - ibits) : -1;
    const int hbits = hn > hw ? hn : hw;
    if (opts->generic || hw < 0) return sort_generic(t, n_users, n_items, policy, by_user, pos, rep, err);

    memset(&S, 0, sizeof S);
    S.t = t;
    S.n = n;
    S.nu = n_users;
    S.ni = n_items;
    S.policy = policy;
    S.nt = opts->threads > 0 ? opts->threads : n < RK_PAR_MIN ? 1 : rk_omp_max_threads();
    S.digit = opts->digit_bits >= 1 && opts->digit_bits <= RK_SORT_DIGIT ? opts->digit_bits : RK_SORT_DIGIT;
    S.sbits = ubits - hbits;
    S.ibits = ibits;
    S.kbits = kbits;
    S.nb = (int64_t)1 << hbits;
    S.want_csr = by_user != NULL;
    S.bstart = malloc((size_t)(S.nb + 1) * sizeof *S.bstart);
    S.bsurv = calloc((size_t)S.nb, sizeof *S.bsurv);
    S.ptr = calloc((size_t)n_users + 1, sizeof *S.ptr);
    fb = malloc((size_t)(S.nb + 1) * sizeof *fb);
    hist = calloc((size_t)S.nt * (size_t)S.nb, sizeof *hist);
    hist2 = malloc((size_t)S.nt * (size_t)S.nb * sizeof *hist2);
    /* the narrow route sorts in the output arrays, wanted or not */
    S.idx = malloc((size_t)(n > 0 ? n : 1) * sizeof *S.idx);
    S.val = malloc((size_t)(n > 0 ? n : 1) * sizeof *S.val);
    if (pos != NULL) S.pos = malloc((size_t)(n > 0 ? n : 1) * sizeof *S.pos);
    if (S.bstart == NULL || S.bsurv == NULL || S.ptr == NULL || fb == NULL || hist == NULL || hist2 == NULL ||
        S.idx == NULL || S.val == NULL || (pos != NULL && S.pos == NULL))
        goto nomem;

    /* 1: buckets per chunk, then where each chunk's share of a bucket goes */
    if (count_buckets(&S, hist) < n) {
        st = range_error(t, n_users, n_items, err);
        goto out;
    }
    int64_t run = 0;
    for (int64_t b = 0; b < S.nb; b++) {
        S.bstart[b] = run;
        for (int c = 0; c < S.nt; c++) {
            int64_t *h = &hist[(size_t)c * (size_t)S.nb + (size_t)b];
            int64_t v = *h;
            *h = run;
            run += v;
        }
    }
    S.bstart[S.nb] = run;
    memcpy(hist2, hist, (size_t)S.nt * (size_t)S.nb * sizeof *hist2);

    /* 2-4: narrow if it can, else (or on a duplicate) wide */
    int r = 1;
    if (hn >= 0 && hn == hbits) {
        r = narrow(&S, hist);
        if (r < 0) goto nomem;
    }
    if (r > 0) {
        if (S.sbits + ibits + kbits > 64) { /* the wide keys do not fit these buckets */
            sorter_free(&S);
            free(hist);
            free(hist2);
            free(fb);
            return sort_generic(t, n_users, n_items, policy, by_user, pos, rep, err);
        }
        memset(S.ptr, 0, ((size_t)n_users + 1) * sizeof *S.ptr);
        S.drop = calloc((size_t)((n + 63) / 64 + 1), sizeof *S.drop); /* zero pages: touched where removed */
        if (S.drop == NULL) goto nomem;
        st = wide(&S, hist2, &removed, &first_dup, err);
        if (st != RK_OK) goto out;
    }
    free(hist);
    free(hist2);
    hist = hist2 = NULL;
    if (first_dup < n) {
        rep->first_user = t->user[first_dup];
        rep->first_item = t->item[first_dup];
    }
    if (removed > 0 && policy == RK_DUP_ERROR) {
        st = rk_error_set(err, RK_E_DUPLICATE, "duplicate rating: (user %d, item %d) is rated more than once",
                          rep->first_user, rep->first_item);
        goto out;
    }

    /* rows together, positions renumbered, ratings compacted */
    const int64_t kept = offsets(&S, fb);
    if (removed > 0) {
        const int64_t nw = (n + 63) / 64;
        int64_t *before = malloc((size_t)(nw + 1) * sizeof *before);
        if (before == NULL) goto nomem;
        st = drop_prefix(S.drop, nw, before, S.nt, err);
        if (st == RK_OK && S.want_csr) st = compact_rows(&S, fb, kept, err);
        if (st == RK_OK && S.pos != NULL) {
#pragma omp parallel for schedule(static) num_threads(S.nt)
            for (int64_t p = 0; p < kept; p++) {
                int64_t k = S.pos[p];
                uint64_t below = S.drop[k >> 6] & low_mask((int)(k & 63));
                S.pos[p] = before[k >> 6] + (k & 63) - __builtin_popcountll(below);
            }
        }
        if (st == RK_OK) st = compact_triples(t, S.drop, before, kept, S.nt, err);
        free(before);
        if (st != RK_OK) goto out;
    }
    rep->n_removed = removed;
    if (by_user != NULL) {
        by_user->n_rows = n_users;
        by_user->n_cols = n_items;
        by_user->nnz = kept;
        by_user->ptr = S.ptr;
        by_user->idx = S.idx;
        by_user->val = S.val;
        S.ptr = NULL;
        S.idx = NULL;
        S.val = NULL;
        if (pos != NULL) *pos = S.pos;
        S.pos = NULL;
    }
    goto out;
nomem:
    st = rk_error_set(err, RK_E_NOMEM, "out of memory sorting %lld ratings", (long long)n);
out:
    free(hist);
    free(hist2);
    free(fb);
    sorter_free(&S);
    return st;
}
