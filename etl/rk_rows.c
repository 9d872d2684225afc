/* rk_rows.c — the parsed rows (rk_load_internal.h): their arrays grown or
 * sized at once, string ids in their arena, and each chunk's rows merged
 * into place in file order with the range of their integer ids.
 */
#define _POSIX_C_SOURCE 200809L
#include "rk_load_internal.h"
#include "rk_mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- rows -------------------------------------------------------------------- */

void rk_rows_free(rk_rows *r)
{
    if (r == NULL) return;
    free(r->u);
    free(r->i);
    free(r->utag);
    free(r->itag);
    free(r->r);
    free(r->t);
    free(r->arena);
    memset(r, 0, sizeof *r);
}

/* Grown by doubling with realloc, which moves a large block with mremap.
 * Not in huge pages (rk_mem.h): moving huge pages made the parse four times
 * slower at Netflix size on the GPU machine (3.2 s against 0.8 s, measured).
 * A file's rows sized at once (rk_rows_presize) are in huge pages: they move
 * only when the estimate falls short. */
#define GROW(ptr, cnt)                                                         \
    do {                                                                       \
        void *np_ = realloc((ptr), (size_t)(cnt) * sizeof *(ptr));             \
        if (np_ == NULL) return -1;                                            \
        (ptr) = np_;                                                           \
    } while (0)

int rk_rows_presize(rk_rows *r, const char *sample, size_t len, double bytes, int want_time)
{
    if (r->cap != 0 || len == 0) return 0;
    if (len > RK_PRESIZE_SAMPLE) len = RK_PRESIZE_SAMPLE;
    int64_t lines = 0;
    for (const char *q = sample, *e = sample + len; (q = memchr(q, '\n', (size_t)(e - q))) != NULL; q++) lines++;
    if (lines < 16) return 0;
    /* a tenth more than the sample's line length predicts: untouched pages cost nothing */
    const double est = bytes / ((double)len / (double)lines) * 1.1 + 1024.0;
    if (!(est < (double)INT32_MAX * 4.0)) return 0;
    const int64_t cap = (int64_t)est;
    r->u = rk_mem_alloc((size_t)cap * sizeof *r->u);
    r->i = rk_mem_alloc((size_t)cap * sizeof *r->i);
    r->r = rk_mem_alloc((size_t)cap * sizeof *r->r);
    r->t = want_time ? rk_mem_alloc((size_t)cap * sizeof *r->t) : NULL;
    if (r->u == NULL || r->i == NULL || r->r == NULL || (want_time && r->t == NULL)) {
        free(r->u), free(r->i), free(r->r), free(r->t);
        r->u = r->i = r->t = NULL;
        r->r = NULL;
        return 0;
    }
    r->cap = cap;
    return 1;
}

int rk_rows_reserve(rk_rows *r, int64_t need, int want_time)
{
    if (want_time && r->t == NULL && r->cap > 0) GROW(r->t, r->cap);
    if (need <= r->cap) return 0;
    int64_t cap = r->cap * 2;
    if (cap < need) cap = need;
    if (cap < 16) cap = 16;
    if (r->cap_max > 0 && cap > r->cap_max) cap = need > r->cap_max ? need : r->cap_max;
    GROW(r->u, cap);
    GROW(r->i, cap);
    GROW(r->r, cap);
    if (want_time || r->t != NULL) GROW(r->t, cap);
    if (r->utag != NULL) {
        GROW(r->utag, cap);
        GROW(r->itag, cap);
    }
    r->cap = cap;
    return 0;
}

int rk_rows_want_tags(rk_rows *r)
{
    if (r->utag != NULL) return 0;
    size_t cap = r->cap > 0 ? (size_t)r->cap : 1;
    r->utag = calloc(cap, 1);
    r->itag = calloc(cap, 1);
    if (r->utag == NULL || r->itag == NULL) {
        free(r->utag);
        free(r->itag);
        r->utag = r->itag = NULL;
        return -1;
    }
    return 0;
}

int64_t rk_rows_put_string(rk_rows *r, const char *s, size_t len)
{
    if (r->alen + len + 1 > r->acap) {
        size_t cap = r->acap * 2;
        if (cap < r->alen + len + 1) cap = r->alen + len + 1;
        if (cap < 4096) cap = 4096;
        char *a = realloc(r->arena, cap);
        if (a == NULL) return -1;
        r->arena = a;
        r->acap = cap;
    }
    int64_t off = (int64_t)r->alen;
    r->arena[r->alen] = (char)(unsigned char)len;
    memcpy(r->arena + r->alen + 1, s, len);
    r->alen += len + 1;
    return off;
}

/* Rows go to home's arrays from c->base; no string id yet. */
/* ---- merging chunks ------------------------------------------------------------ */

/* Rows that must move (an earlier chunk left a gap, or netflix orphans are
 * dropped) are first set aside in the chunk's own arrays: a destination may
 * overlap another chunk's rows not yet moved.  Parallel over chunks. */
void rk_rows_set_aside(const rk_rows *out, rk_chunk *c)
{
    if (c->spilled || c->dst == c->base + c->norph || c->n == c->norph) return;
    rk_rows *o = &c->own;
    int64_t b = c->base; /* out may have moved since the parse: not c->u */
    if (rk_rows_reserve(o, c->n, out->t != NULL) != 0) {
        c->status = RK_E_NOMEM;
        return;
    }
    memcpy(o->u, out->u + b, (size_t)c->n * sizeof *o->u);
    memcpy(o->i, out->i + b, (size_t)c->n * sizeof *o->i);
    memcpy(o->r, out->r + b, (size_t)c->n * sizeof *o->r);
    if (out->t != NULL) memcpy(o->t, out->t + b, (size_t)c->n * sizeof *o->t);
    c->spilled = 1;
}

/* The range of the integer ids of out's rows [d, d + m) into c->lo, c->hi:
 * read while the block's rows are still in the cache, it spares the ids
 * stage a pass over both columns (rk_idcol.ranged).  Rows whose id is a
 * string do not count. */
static void chunk_range(const rk_rows *out, int64_t d, int64_t m, rk_chunk *c)
{
    const int64_t *col[2] = {out->u + d, out->i + d};
    const uint8_t *tag[2] = {out->utag != NULL ? out->utag + d : NULL, out->itag != NULL ? out->itag + d : NULL};
    for (int w = 0; w < 2; w++) {
        const int64_t *v = col[w];
        int64_t l = INT64_MAX, h = INT64_MIN;
        if (tag[w] == NULL) {
            for (int64_t k = 0; k < m; k++) {
                l = v[k] < l ? v[k] : l;
                h = v[k] > h ? v[k] : h;
            }
        } else {
            for (int64_t k = 0; k < m; k++)
                if (!tag[w][k]) {
                    l = v[k] < l ? v[k] : l;
                    h = v[k] > h ? v[k] : h;
                }
        }
        c->lo[w] = l;
        c->hi[w] = h;
    }
}

/* The chunk's rows in their place in out: moved when set aside, string ids
 * offset into out's arena, netflix rows carried over given their movie.
 * Chunks write disjoint ranges: parallel over chunks. */
void rk_rows_place(rk_rows *out, rk_chunk *c)
{
    int64_t m = c->n - c->norph, from = c->norph, d = c->dst;
    c->lo[0] = c->lo[1] = INT64_MAX;
    c->hi[0] = c->hi[1] = INT64_MIN;
    if (m <= 0) return;
    if (c->spilled) {
        const rk_rows *in = &c->own;
        memcpy(out->u + d, in->u + from, (size_t)m * sizeof *out->u);
        memcpy(out->i + d, in->i + from, (size_t)m * sizeof *out->i);
        memcpy(out->r + d, in->r + from, (size_t)m * sizeof *out->r);
        if (out->t != NULL) memcpy(out->t + d, in->t + from, (size_t)m * sizeof *out->t);
    }
    if (c->utag != NULL) {
        int64_t base = (int64_t)c->abase;
        for (int64_t k = 0; k < m; k++) {
            uint8_t ut = c->utag[from + k], it = c->itag[from + k];
            out->utag[d + k] = ut;
            out->itag[d + k] = it;
            if (ut) out->u[d + k] += base;
            if (it) out->i[d + k] += base;
        }
        memcpy(out->arena + c->abase, c->own.arena, c->own.alen);
    } else if (out->utag != NULL) {
        memset(out->utag + d, 0, (size_t)m);
        memset(out->itag + d, 0, (size_t)m);
    }
    int64_t nfill = c->nlead - c->norph;
    if (nfill > 0) {
        if (c->fill_tag) {
            out->arena[c->fill_v] = (char)(unsigned char)c->fill_len;
            memcpy(out->arena + c->fill_v + 1, c->fill_s, c->fill_len);
        }
        for (int64_t k = d; k < d + nfill; k++) {
            out->i[k] = c->fill_v;
            if (out->itag != NULL) out->itag[k] = (uint8_t)c->fill_tag;
        }
    }
    chunk_range(out, d, m, c);
}

void rk_rows_add_ranges(rk_rows *out, const rk_chunk *ch, int nch, int64_t total)
{
    if (out->ranged == 0) /* no rows yet, or rows from elsewhere: none ranged */
        for (int w = 0; w < 2; w++) out->lo[w] = INT64_MAX, out->hi[w] = INT64_MIN;
    for (int k = 0; k < nch; k++)
        for (int w = 0; w < 2; w++) {
            out->lo[w] = ch[k].lo[w] < out->lo[w] ? ch[k].lo[w] : out->lo[w];
            out->hi[w] = ch[k].hi[w] > out->hi[w] ? ch[k].hi[w] : out->hi[w];
        }
    if (out->ranged == out->n) out->ranged = total;
}
