/* rk_sort.c — duplicates and the user-major CSR from one sort (rk_csr.h).
 *
 * The ratings are sorted by (user, item, file position); duplicates are then
 * neighbours and the survivors, in order, are the CSR.  The sort is one MSD
 * step on the user's high bits (the bucket) followed by work in cache:
 *   1. each thread counts the buckets of a contiguous share of the ratings,
 *      checking the indices on the way;
 *   2. each thread scatters its share, stably, into the buckets: 32-bit keys
 *      (user's low bits, item) with the ratings, and the file positions when
 *      asked for, straight into the output arrays: no scratch arrays, whose
 *      page faults would cost as much as the sort.  Input grouped by user
 *      (MovieLens files) skips this: its buckets are ranges of the file;
 *   3. each bucket (a few hundred users, sized for L2) is put in (user, item)
 *      order where it lies by an LSD radix sort, stable, so equal pairs stay
 *      in file order.  A bucket already in order skips it (sorted rows of
 *      distinct pairs are copied); one whose items already ascend (files
 *      grouped by movie, as Netflix's are) sorts on the user bits only;
 *   4. a walk over the bucket resolves duplicates (equal neighbours; the
 *      policy needs only their order) and packs its rows from its start.
 * What duplicates change in file order (the ratings removed, marked in a
 * bitmap, atomically but rarely; the first pair repeated; the means written
 * back) needs their positions: the walk has them when they were carried,
 * else one pass over the ratings finds the repeated pairs again.  Only then
 * are the rows and the ratings compacted, in parallel, out of place.
 */
#define _POSIX_C_SOURCE 200809L
#include "rk_csr.h"
#include "rk_mem.h"
#include "rk_omp.h"
#include "rk_sort_internal.h"

#include <stdlib.h>
#include <string.h>

#define RK_SORT_BUCKET 16384 /* ratings per bucket: keys, ratings, radix copies stay in L2 */
#define RK_SORT_HBITS 13     /* at most 8192 buckets (Netflix size): write streams of the scatter */
#define RK_SORT_DIGIT 11     /* bits per radix pass inside a bucket */
#define RK_PAR_MIN 65536     /* below this many ratings, one thread */

static int bitlen(uint64_t x)
{
    int b = 0;
    for (; x != 0; x >>= 1) b++;
    return b;
}

static inline uint64_t low_mask(int bits)
{
    return bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1;
}

static inline uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

typedef struct sorter {
    rk_triples *t;
    int64_t n;
    int32_t nu, ni;
    rk_dup_policy policy;
    int nt, digit;
    int sbits, ibits;  /* key = user's low sbits bits << ibits | item */
    int64_t nb;        /* buckets: users >> sbits */
    int user_sorted;   /* the input is grouped by user: no scatter */
    int strict;        /* ... and sorted by (user, item) with no pair repeated */
    int64_t *bstart;   /* nb + 1: where each bucket starts, duplicates included */
    int64_t *bsurv;    /* nb: survivors per bucket */
    int32_t *idx;      /* n: keys, then items, bucket by bucket */
    float *val;        /* n: ratings alongside */
    int64_t *pos;      /* n: file positions, or NULL */
    int64_t *ptr;      /* nu + 1: survivors per user, then offsets */
    uint64_t *drop;    /* file order: 1 = removed */
} sorter;

/* Per-thread scratch for one bucket: two copies of keys, ratings and, when
 * carried, positions for the radix passes. */
typedef struct wksp {
    int64_t cap;
    uint32_t *k[2];
    float *r[2];
    int64_t *p[2];
    int64_t *cnt;
} wksp;

typedef struct pair {
    int32_t u, i;
} pair;

/* What one thread found. */
typedef struct tally {
    int64_t removed, first_dup;
    pair *rep;         /* the pairs repeated, when positions are not carried */
    int64_t nrep, cap;
    int oom;
} tally;

static void wksp_free(wksp *w)
{
    for (int c = 0; c < 2; c++) {
        free(w->k[c]);
        free(w->r[c]);
        free(w->p[c]);
        w->k[c] = NULL;
        w->r[c] = NULL;
        w->p[c] = NULL;
    }
    w->cap = 0;
}

static int wksp_reserve(wksp *w, int64_t m, int digit, int with_pos)
{
    if (w->cnt == NULL && (w->cnt = malloc(((size_t)1 << digit) * sizeof *w->cnt)) == NULL) return -1;
    if (m <= w->cap && (!with_pos || w->p[0] != NULL)) return 0;
    int64_t cap = m > w->cap ? m + m / 4 : w->cap;
    int ok = 1;
    wksp_free(w);
    for (int c = 0; c < 2; c++) {
        ok &= (w->k[c] = rk_mem_alloc((size_t)cap * sizeof *w->k[c])) != NULL;
        ok &= (w->r[c] = rk_mem_alloc((size_t)cap * sizeof *w->r[c])) != NULL;
        if (with_pos) ok &= (w->p[c] = rk_mem_alloc((size_t)cap * sizeof *w->p[c])) != NULL;
    }
    if (ok) w->cap = cap;
    return ok ? 0 : -1;
}

/* Exclusive prefix sums of cnt[0..nbins). */
static void prefix(int64_t *cnt, uint64_t nbins)
{
    int64_t run = 0;
    for (uint64_t d = 0; d < nbins; d++) {
        int64_t c = cnt[d];
        cnt[d] = run;
        run += c;
    }
}

/* Stable LSD radix sort of m records (keys rk, ratings rv, positions rp when
 * not NULL) on key bits [lo, hi); the result ends in rk/rv/rp again. */
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
        ks = w->k[1];
        rs = w->r[1];
        ps = w->p[1];
    }
    for (int p = 0, shift = lo; p < passes; p++, shift += width) {
        const int wd = hi - shift < width ? hi - shift : width;
        const uint32_t mask = (uint32_t)low_mask(wd);
        const int last = p == passes - 1;
        uint32_t *kd = last ? rk : w->k[p & 1];
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

static void note_pair(tally *ty, int32_t u, int32_t i)
{
    if (ty->nrep == ty->cap) {
        int64_t cap = ty->cap ? 2 * ty->cap : 64;
        pair *p = realloc(ty->rep, (size_t)cap * sizeof *p);
        if (p == NULL) {
            ty->oom = 1;
            return;
        }
        ty->rep = p;
        ty->cap = cap;
    }
    ty->rep[ty->nrep++] = (pair){u, i};
}

static inline void mark_dropped(uint64_t *drop, int64_t k)
{
#pragma omp atomic update
    drop[k >> 6] |= (uint64_t)1 << (k & 63);
}

/* Walk bucket b, sorted: equal keys are one pair rated more than once, in
 * file order; resolve them by policy, pack the rows from the bucket's start
 * (writing behind the reading: in place), count them per user. */
static void walk(sorter *S, int64_t b, uint32_t *rk, float *rv, int64_t *rp, int64_t m, tally *ty)
{
    const int ib = S->ibits;
    const int32_t u0 = (int32_t)(b << S->sbits);
    const uint32_t imask = (uint32_t)low_mask(ib);
    const rk_dup_policy pol = S->policy;
    int64_t o = 0;
    for (int64_t q = 0; q < m;) {
        const uint32_t key = rk[q];
        int64_t r = q + 1, s = q;
        while (r < m && rk[r] == key) r++;
        float v = rv[q];
        if (r - q > 1) {
            ty->removed += r - q - 1;
            if (pol == RK_DUP_LAST) {
                s = r - 1;
                v = rv[s];
            } else if (pol == RK_DUP_MEAN) { /* summed in file order, as rk_triples_dedupe does */
                double sum = rv[q];
                for (int64_t j = q + 1; j < r; j++) sum += rv[j];
                v = (float)(sum / (double)(r - q));
            }
            if (rp != NULL) {
                if (rp[q + 1] < ty->first_dup) ty->first_dup = rp[q + 1];
                if (pol == RK_DUP_MEAN) S->t->rating[rp[q]] = v;
                if (pol != RK_DUP_ERROR)
                    for (int64_t j = q; j < r; j++)
                        if (j != s) mark_dropped(S->drop, rp[j]);
            } else {
                note_pair(ty, u0 + (int32_t)(key >> ib), (int32_t)(key & imask));
            }
        }
        rk[o] = key & imask;
        rv[o] = v;
        if (rp != NULL) rp[o] = rp[s];
        S->ptr[u0 + (int32_t)(key >> ib)]++;
        o++;
        q = r;
    }
    S->bsurv[b] = o;
}

/* Bucket b: its records (key, rating, position when carried) sit at the
 * bucket's place in idx/val/pos, scattered there or built here from grouped
 * input.  Sort them there, then walk them. */
static void bucket(sorter *S, int64_t b, wksp *w, tally *ty)
{
    const int64_t bs = S->bstart[b], m = S->bstart[b + 1] - bs;
    const int ib = S->ibits, sb = S->sbits;
    const uint32_t imask = (uint32_t)low_mask(ib);
    uint32_t *rk = (uint32_t *)S->idx + bs; /* int32 memory, read as unsigned */
    float *rv = S->val + bs;
    int64_t *rp = S->pos != NULL ? S->pos + bs : NULL;
    S->bsurv[b] = m;
    if (m == 0) return;
    if (S->user_sorted) {
        const int32_t *us = S->t->user + bs, *is = S->t->item + bs;
        int64_t q = S->strict ? m : 1;
        while (q < m && (us[q - 1] < us[q] || (us[q - 1] == us[q] && is[q - 1] < is[q]))) q++;
        if (rp != NULL)
            for (int64_t j = 0; j < m; j++) rp[j] = bs + j;
        memcpy(rv, S->t->rating + bs, (size_t)m * sizeof *rv);
        if (q >= m) { /* sorted rows of distinct pairs: a copy */
            memcpy(rk, is, (size_t)m * sizeof *rk);
            for (q = 0; q < m; q++) S->ptr[us[q]]++;
            return;
        }
        const uint32_t smask = (uint32_t)low_mask(sb);
        for (q = 0; q < m; q++) rk[q] = ((uint32_t)us[q] & smask) << ib | (uint32_t)is[q];
    }
    int sorted = 1, isorted = 1;
    for (int64_t q = 1; q < m && (sorted || isorted); q++) {
        sorted &= rk[q - 1] <= rk[q];
        isorted &= (rk[q - 1] & imask) <= (rk[q] & imask);
    }
    if (!sorted) {
        if (wksp_reserve(w, m, S->digit, rp != NULL) != 0) {
            ty->oom = 1;
            return;
        }
        radix32(rk, rv, rp, m, isorted ? ib : 0, ib + sb, S->digit, w);
    }
    walk(S, b, rk, rv, rp, m, ty);
}

/* ---- the passes over the ratings ---------------------------------------------------- */

/* Count buckets per chunk (nt contiguous chunks of the ratings), check the
 * indices' range (before anything is changed: t stays as it was on errors)
 * and whether the users never decrease, and the pairs strictly increase.
 * @return the first bad rating, or n. */
static int64_t count_buckets(sorter *S, int64_t *hist)
{
    const int32_t *user = S->t->user, *item = S->t->item;
    const int64_t n = S->n, nb = S->nb;
    const int nt = S->nt, sb = S->sbits;
    int64_t bad = n, unsorted = 0, loose = 0;
#pragma omp parallel for schedule(static, 1) num_threads(nt) reduction(min : bad) reduction(+ : unsorted, loose)
    for (int c = 0; c < nt; c++) {
        int64_t lo = n * c / nt, hi = n * (c + 1) / nt;
        int64_t *h = hist + (size_t)c * (size_t)nb;
        int32_t pu = lo > 0 ? user[lo - 1] : INT32_MIN, pi = lo > 0 ? item[lo - 1] : INT32_MIN;
        for (int64_t k = lo; k < hi; k++) {
            const int32_t u = user[k], i = item[k];
            if ((uint32_t)u >= (uint32_t)S->nu || (uint32_t)i >= (uint32_t)S->ni) {
                if (k < bad) bad = k;
                continue;
            }
            unsorted += u < pu;
            loose += u < pu || (u == pu && i <= pi);
            pu = u;
            pi = i;
            h[(uint32_t)u >> sb]++;
        }
    }
    S->user_sorted = unsorted == 0;
    S->strict = loose == 0;
    return bad;
}

/* Scatter each chunk, stably, into the buckets (offsets per chunk in off):
 * keys into idx, ratings into val, file positions into pos if carried. */
static void scatter(sorter *S, int64_t *off)
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

/* All buckets; the threads' findings summed into *all (pairs concatenated). */
static void buckets(sorter *S, tally *all)
{
    tally *ty = calloc((size_t)S->nt, sizeof *ty);
    if (ty == NULL) {
        all->oom = 1;
        return;
    }
#pragma omp parallel num_threads(S->nt)
    {
        tally *my = &ty[rk_omp_thread_num()];
        wksp w;
        memset(&w, 0, sizeof w);
        my->first_dup = S->n;
#pragma omp for schedule(dynamic, 1)
        for (int64_t b = 0; b < S->nb; b++)
            if (!my->oom) bucket(S, b, &w, my);
        wksp_free(&w);
        free(w.cnt);
    }
    for (int c = 0; c < S->nt; c++) {
        all->removed += ty[c].removed;
        if (ty[c].first_dup < all->first_dup) all->first_dup = ty[c].first_dup;
        all->oom |= ty[c].oom;
        for (int64_t q = 0; q < ty[c].nrep && !all->oom; q++) note_pair(all, ty[c].rep[q].u, ty[c].rep[q].i);
        free(ty[c].rep);
    }
    free(ty);
}

/* Positions were not carried: find the repeated pairs' ratings in file order
 * (one pass; a bitmap of hashed pairs, 16 bits per pair, small enough for
 * L2, keeps most other ratings to one load), then mark the removed ones,
 * find the first repeat, write the means back. */
static rk_status fixup(sorter *S, const pair *pairs, int64_t np, int64_t *first_dup, rk_error *err)
{
    const rk_triples *t = S->t;
    const int nt = S->nt;
    uint64_t cap = 64, fbits = 1 << 16;
    while (cap < 2 * (uint64_t)np) cap *= 2;
    while (fbits < 16 * (uint64_t)np) fbits *= 2;
    uint64_t *key = malloc(cap * sizeof *key), *filt = calloc(fbits / 64, sizeof *filt);
    int64_t *id = malloc(cap * sizeof *id), *at = calloc((size_t)np + 1, sizeof *at), nhit = 0, fd = S->n;
    int64_t **hit = calloc((size_t)nt, sizeof *hit), *nh = calloc((size_t)nt, sizeof *nh), *occ = NULL;
    int oom = key == NULL || filt == NULL || id == NULL || at == NULL || hit == NULL || nh == NULL;
    if (!oom) {
        memset(id, 0xff, cap * sizeof *id);
        for (int64_t q = 0; q < np; q++) {
            uint64_t k = (uint64_t)(uint32_t)pairs[q].u << 32 | (uint32_t)pairs[q].i, x = mix64(k);
            uint64_t h = x & (cap - 1), f = (x >> 32) & (fbits - 1);
            while (id[h] >= 0) h = (h + 1) & (cap - 1);
            key[h] = k;
            id[h] = q;
            filt[f >> 6] |= (uint64_t)1 << (f & 63);
        }
    }
    int lost = 0;
#pragma omp parallel for schedule(static, 1) num_threads(nt) reduction(| : lost) if (!oom)
    for (int c = 0; c < nt; c++) { /* (pair, position) of each hit, chunk by chunk */
        int64_t lo = t->n * c / nt, hi = t->n * (c + 1) / nt, hcap = 0;
        for (int64_t k = lo; k < hi && !oom && !lost; k++) {
            const uint64_t kk = (uint64_t)(uint32_t)t->user[k] << 32 | (uint32_t)t->item[k], x = mix64(kk);
            const uint64_t f = (x >> 32) & (fbits - 1);
            if (!(filt[f >> 6] >> (f & 63) & 1)) continue;
            uint64_t h = x & (cap - 1);
            while (id[h] >= 0 && key[h] != kk) h = (h + 1) & (cap - 1);
            if (id[h] < 0) continue;
            if (nh[c] + 2 > hcap) {
                hcap = hcap ? 2 * hcap : 256;
                int64_t *grown = realloc(hit[c], (size_t)hcap * sizeof *grown);
                if (grown == NULL) {
                    lost = 1;
                    break;
                }
                hit[c] = grown;
            }
            hit[c][nh[c]++] = id[h];
            hit[c][nh[c]++] = k;
        }
    }
    oom |= lost;
    for (int c = 0; c < nt && !oom; c++) nhit += nh[c] / 2;
    if (!oom && (occ = malloc((size_t)(nhit > 0 ? nhit : 1) * sizeof *occ)) == NULL) oom = 1;
    if (!oom) { /* each pair's positions, in file order (a stable counting sort by pair) */
        for (int c = 0; c < nt; c++)
            for (int64_t q = 0; q < nh[c]; q += 2) at[hit[c][q] + 1]++;
        for (int64_t q = 0; q < np; q++) at[q + 1] += at[q];
        for (int c = 0; c < nt; c++)
            for (int64_t q = 0; q < nh[c]; q += 2) occ[at[hit[c][q]]++] = hit[c][q + 1];
        for (int64_t q = np; q > 0; q--) at[q] = at[q - 1];
        at[0] = 0;
    }
    const rk_dup_policy pol = S->policy;
#pragma omp parallel for schedule(dynamic, 64) num_threads(nt) reduction(min : fd) if (!oom)
    for (int64_t q = 0; q < (oom ? 0 : np); q++) {
        const int64_t *o = occ + at[q], g = at[q + 1] - at[q], s = pol == RK_DUP_LAST ? g - 1 : 0;
        if (o[1] < fd) fd = o[1];
        if (pol == RK_DUP_MEAN) { /* the same sum, in the same order, as the walk's */
            double sum = S->t->rating[o[0]];
            for (int64_t j = 1; j < g; j++) sum += S->t->rating[o[j]];
            S->t->rating[o[0]] = (float)(sum / (double)g);
        }
        if (pol != RK_DUP_ERROR)
            for (int64_t j = 0; j < g; j++)
                if (j != s) mark_dropped(S->drop, o[j]);
    }
    *first_dup = fd;
    for (int c = 0; hit != NULL && c < nt; c++) free(hit[c]);
    free(hit);
    free(nh);
    free(key);
    free(filt);
    free(id);
    free(at);
    free(occ);
    return oom ? rk_error_set(err, RK_E_NOMEM, "out of memory resolving duplicates") : RK_OK;
}

/* ---- after the buckets ------------------------------------------------------------- */

/* Survivor counts per user -> row offsets; fb: where each bucket's rows go.
 * @return the survivors. */
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

/* Each bucket's rows were packed from its start; move them together. */
static rk_status compact_rows(sorter *S, const int64_t *fb, int64_t nnz, rk_error *err)
{
    int32_t *idx = rk_mem_alloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *idx);
    float *val = rk_mem_alloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *val);
    int64_t *pos = S->pos != NULL ? rk_mem_alloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *pos) : NULL;
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
    int64_t *p = rk_mem_alloc((size_t)(t->n > 0 ? t->n : 1) * sizeof *p);
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
    free(S->idx);
    free(S->val);
    free(S->pos);
    free(S->ptr);
    free(S->drop);
}

/* Bucket bits: about `bucket` ratings each, at most 2^RK_SORT_HBITS buckets,
 * more (up to 2^16) when the key would not fit in 32 bits; -1 if it cannot. */
static int choose_hbits(int64_t n, int64_t bucket, int ubits, int ibits)
{
    int h = bitlen((uint64_t)((n > 0 ? n - 1 : 0) / bucket));
    if (h > RK_SORT_HBITS) h = RK_SORT_HBITS;
    if (h > ubits) h = ubits;
    while (ubits - h + ibits > 32 && h < ubits && h < 16) h++;
    return ubits - h + ibits <= 32 ? h : -1;
}

rk_status rk_triples_dedupe_csr(rk_triples *t, int32_t n_users, int32_t n_items, rk_dup_policy policy,
                                const rk_sort_opts *opts, rk_csr *by_user, int64_t **pos, rk_dup_report *rep,
                                rk_error *err)
{
    static const rk_sort_opts dflt = {0, 0, 0, 0};
    rk_dup_report local;
    sorter S;
    tally all;
    rk_status st = RK_OK;
    int64_t *hist = NULL, *fb = NULL;

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
    const int hbits = choose_hbits(n, opts->bucket > 0 ? opts->bucket : RK_SORT_BUCKET, ubits, ibits);
    if (opts->generic || hbits < 0) return sort_generic(t, n_users, n_items, policy, by_user, pos, rep, err);

    memset(&S, 0, sizeof S);
    memset(&all, 0, sizeof all);
    all.first_dup = n;
    S.t = t;
    S.n = n;
    S.nu = n_users;
    S.ni = n_items;
    S.policy = policy;
    S.nt = opts->threads > 0 ? opts->threads : n < RK_PAR_MIN ? 1 : rk_omp_max_threads();
    S.digit = opts->digit_bits >= 1 && opts->digit_bits <= RK_SORT_DIGIT ? opts->digit_bits : RK_SORT_DIGIT;
    S.sbits = ubits - hbits;
    S.ibits = ibits;
    S.nb = (int64_t)1 << hbits;
    const int64_t nw = (n + 63) / 64;
    S.bstart = malloc((size_t)(S.nb + 1) * sizeof *S.bstart);
    S.bsurv = calloc((size_t)S.nb, sizeof *S.bsurv);
    S.ptr = calloc((size_t)n_users + 1, sizeof *S.ptr);
    S.drop = calloc((size_t)(nw > 0 ? nw : 1), sizeof *S.drop); /* zero pages: touched where removed */
    fb = malloc((size_t)(S.nb + 1) * sizeof *fb);
    hist = calloc((size_t)S.nt * (size_t)S.nb, sizeof *hist);
    /* the rows are sorted in the output arrays, wanted or not */
    S.idx = rk_mem_alloc((size_t)(n > 0 ? n : 1) * sizeof *S.idx);
    S.val = rk_mem_alloc((size_t)(n > 0 ? n : 1) * sizeof *S.val);
    if (pos != NULL) S.pos = rk_mem_alloc((size_t)(n > 0 ? n : 1) * sizeof *S.pos);
    if (S.bstart == NULL || S.bsurv == NULL || S.ptr == NULL || S.drop == NULL || fb == NULL || hist == NULL ||
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

    /* 2-4: scatter (unless grouped), each bucket sorted and walked */
    if (!S.user_sorted) scatter(&S, hist);
    free(hist);
    hist = NULL;
    buckets(&S, &all);
    if (all.oom) goto nomem;
    if (all.removed > 0 && S.pos == NULL) {
        st = fixup(&S, all.rep, all.nrep, &all.first_dup, err);
        if (st != RK_OK) goto out;
    }
    if (all.first_dup < n) {
        rep->first_user = t->user[all.first_dup];
        rep->first_item = t->item[all.first_dup];
    }
    if (all.removed > 0 && policy == RK_DUP_ERROR) {
        st = rk_error_set(err, RK_E_DUPLICATE, "duplicate rating: (user %d, item %d) is rated more than once",
                          rep->first_user, rep->first_item);
        goto out;
    }

    /* rows together, positions renumbered, ratings compacted */
    const int64_t kept = offsets(&S, fb);
    if (all.removed > 0) {
        int64_t *before = malloc((size_t)(nw + 1) * sizeof *before);
        if (before == NULL) goto nomem;
        st = rk_sort_drop_prefix(S.drop, nw, before, S.nt, err);
        if (st == RK_OK && by_user != NULL) st = compact_rows(&S, fb, kept, err);
        if (st == RK_OK && S.pos != NULL) {
#pragma omp parallel for schedule(static) num_threads(S.nt)
            for (int64_t p = 0; p < kept; p++) {
                int64_t k = S.pos[p];
                uint64_t below = S.drop[k >> 6] & low_mask((int)(k & 63));
                S.pos[p] = before[k >> 6] + (k & 63) - __builtin_popcountll(below);
            }
        }
        if (st == RK_OK) st = rk_sort_compact(t, S.drop, before, kept, S.nt, err);
        free(before);
        if (st != RK_OK) goto out;
    }
    rep->n_removed = all.removed;
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
    free(all.rep);
    free(hist);
    free(fb);
    sorter_free(&S);
    return st;
}
