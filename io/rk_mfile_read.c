/* rk_mfile_read.c — reading model files (rk_mfile.h, MODEL_FORMAT.md).
 *
 * The whole file is mapped; every size in the header is checked against the
 * file's length before anything is allocated; each record's checksum is
 * checked before its array is copied out (the copy, first touches of fresh
 * pages, is spread over the threads); then the invariants the engines rely
 * on, and the item-major matrix by transposition (most of the time: about
 * half of a load of ML-20M's size).
 */
#define _DEFAULT_SOURCE /* MAP_POPULATE */
#define _POSIX_C_SOURCE 200809L
#include "rk_mfile_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct rd {
    const unsigned char *b;
    uint64_t len, pos;
    const char *name;
    rk_error *err;
} rd;

static rk_status bad(const rd *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static rk_status bad(const rd *r, const char *fmt, ...)
{
    char msg[RK_ERROR_MSG_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return rk_error_set(r->err, RK_E_MODEL, "%s: %s", r->name, msg);
}

static rk_status nomem(const rd *r, const char *what)
{
    return rk_error_set(r->err, RK_E_NOMEM, "%s: out of memory for %s", r->name, what);
}

typedef struct rec {
    uint64_t at, len; /* offset of the record, payload bytes */
    const unsigned char *pay;
    int tag;
} rec;

/* The current record, checked up to its checksum: it must be `tag`, with a
 * payload of exactly `want` bytes (or, when want is UINT64_MAX, of any
 * length that fits), zero padding, inside the file. */
static rk_status rec_open(rd *r, int tag, uint64_t want, rec *c)
{
    const uint64_t left = r->len - r->pos;
    const unsigned char *p = r->b + r->pos;
    if (left < REC_HEAD + 8)
        return bad(r, "section %s at offset %llu runs past the end", TAGS[tag], (unsigned long long)r->pos);
    if (memcmp(p, TAGS[tag], 4) != 0)
        return bad(r, "expected section %s at offset %llu, found another", TAGS[tag], (unsigned long long)r->pos);
    uint64_t len = get64(p + 8);
    if (get32(p + 4) != 0) return bad(r, "section %s: reserved field is not zero", TAGS[tag]);
    if (want != UINT64_MAX && len != want)
        return bad(r, "section %s: %llu bytes, the header's sizes say %llu", TAGS[tag], (unsigned long long)len,
                   (unsigned long long)want);
    if (len > left - REC_HEAD - 8 || pad8(len) > left - REC_HEAD - 8 - len)
        return bad(r, "section %s: %llu bytes run past the end", TAGS[tag], (unsigned long long)len);
    for (uint64_t z = 0; z < pad8(len); z++)
        if (p[REC_HEAD + len + z] != 0) return bad(r, "section %s: padding is not zero", TAGS[tag]);
    c->at = r->pos;
    c->len = len;
    c->pay = p + REC_HEAD;
    c->tag = tag;
    r->pos += rec_size(len);
    return RK_OK;
}

/* Check the record's checksum in place. */
static rk_status rec_check(const rd *r, const rec *c)
{
    const uint64_t span = REC_HEAD + c->len + pad8(c->len);
    if (rk_mfile_hash(r->b + c->at, (size_t)span, 0) != get64(r->b + c->at + span))
        return bad(r, "section %s: checksum mismatch (corrupted file)", TAGS[c->tag]);
    return RK_OK;
}

/* Copy the payload (n elements of elem bytes) into a new array *out once
 * the checksum holds.  The copy is what costs (first touches of fresh
 * pages, 1.3 GB/s on one core): it is spread over the threads. */
static rk_status rec_copy(const rd *r, const rec *c, size_t elem, void **out, const char *what)
{
    RK_FORWARD(rec_check(r, c));
    unsigned char *dst = malloc(c->len > 0 ? (size_t)c->len : 1);
    if (dst == NULL) return nomem(r, what);
    const int64_t nch = (int64_t)((c->len + CHUNK - 1) / CHUNK);
    const unsigned char *src = c->pay;
#pragma omp parallel for schedule(static) if (nch > 16)
    for (int64_t ch = 0; ch < nch; ch++) {
        size_t off = (size_t)ch * CHUNK, n = c->len - off < CHUNK ? (size_t)(c->len - off) : CHUNK;
        memcpy(dst + off, src + off, n);
        if (RK_MF_BIG) swap_elems(dst + off, n / elem, elem);
    }
    *out = dst;
    return RK_OK;
}

/* An id section: n records of a one-byte length (1..RK_ID_MAX) and that many
 * bytes (no NUL), exactly filling the payload, in the order the map gives. */
static rk_status read_ids(const rd *r, const rec *c, int32_t n, const char *what, rk_idmap **out)
{
    RK_FORWARD(rec_check(r, c));
    if (c->len < 2 * (uint64_t)n)
        return bad(r, "%s ids: %llu bytes cannot hold %d ids", what, (unsigned long long)c->len, n);
    char *arena = malloc((size_t)c->len);
    const char **ids = malloc((size_t)n * sizeof *ids);
    if (arena == NULL || ids == NULL) {
        free(arena);
        free(ids);
        return nomem(r, "ids");
    }
    rk_status s = RK_OK;
    uint64_t at = 0;
    for (int32_t i = 0; i < n && s == RK_OK; i++) {
        uint64_t l = at < c->len ? c->pay[at] : 0;
        if (at >= c->len) s = bad(r, "%s ids: the section ends after %d of %d ids", what, i, n);
        else if (l == 0) s = bad(r, "%s id %d is empty", what, i);
        else if (l > c->len - at - 1) s = bad(r, "%s id %d runs past its section", what, i);
        else if (memchr(c->pay + at + 1, '\0', (size_t)l) != NULL) s = bad(r, "%s id %d holds a NUL byte", what, i);
        else {
            memcpy(arena + at, c->pay + at + 1, (size_t)l);
            arena[at + l] = '\0';
            ids[i] = arena + at;
            at += 1 + l;
        }
    }
    if (s == RK_OK && at != c->len)
        s = bad(r, "%s ids: %llu bytes after the last id", what, (unsigned long long)(c->len - at));
    rk_error e;
    if (s == RK_OK && (s = rk_ids_from_strings(ids, n, out, &e)) != RK_OK)
        s = s == RK_E_NOMEM ? nomem(r, "ids") : bad(r, "%s ids: %s", what, e.msg);
    if (s == RK_OK && rk_ids_count(*out) != n)
        s = bad(r, "%s ids are not unique (%d distinct of %d)", what, rk_ids_count(*out), n);
    /* index i must be the id stored i-th: the map orders ids itself */
    char buf[RK_ID_MAX + 1];
    for (int32_t i = 0; i < n && s == RK_OK; i++) {
        size_t l = strlen(ids[i]);
        if (rk_ids_format(*out, i, buf, sizeof buf) != (int)l || memcmp(buf, ids[i], l) != 0)
            s = bad(r, "%s ids are not in the map's order (at id %d)", what, i);
    }
    if (s != RK_OK) {
        rk_ids_free(*out);
        *out = NULL;
    }
    free(arena);
    free(ids);
    return s;
}

/* The header's fields (version 1). */
typedef struct hdr {
    int have_baselines, have_rank;
    int32_t nu, ni, k, min_support, min_k;
    uint64_t nnz, ne, size;
    double shrinkage, mu, rmin, rmax;
    uint32_t metric, mode;
} hdr;

static rk_status read_header(rd *r, hdr *h, rk_mfile *f)
{
    const unsigned char *b = r->b;
    if (r->len == 0) return bad(r, "empty file (not a recknn model)");
    if (memcmp(b, MAGIC, r->len < 8 ? (size_t)r->len : 8) != 0)
        return rk_error_set(r->err, RK_E_MODEL, "%s is not a recknn model (bad magic)", r->name);
    if (r->len < 16) return bad(r, "truncated (%llu bytes, the header says at least 16)", (unsigned long long)r->len);
    /* Every version keeps magic, version and header size at 0..16 and ends
     * its header with the checksum, so another version is told apart from
     * a corrupted header. */
    uint32_t hs = get32(b + 12);
    if (hs < 24 || hs % 8 != 0 || hs > 65536) return bad(r, "bad header size %u (corrupted file)", hs);
    if (r->len < hs)
        return bad(r, "truncated (%llu bytes, the header says at least %u)", (unsigned long long)r->len, hs);
    if (rk_mfile_hash(b, hs - 8, 0) != get64(b + hs - 8)) return bad(r, "header checksum mismatch (corrupted file)");
    uint32_t version = get32(b + 8);
    if (version != RK_MFILE_VERSION_PLAIN && version != RK_MFILE_VERSION)
        return bad(r, "model format version %u, this recknn reads %d and %d", version, RK_MFILE_VERSION_PLAIN,
                   RK_MFILE_VERSION);
    if (hs != HDR_SIZE) return bad(r, "header size %u, version %u has %d", hs, version, HDR_SIZE);
    if (get32(b + 16) != 0x01020304u) return bad(r, "bad byte-order mark");
    if (get32(b + 76) > 1) return bad(r, "the ranking-lists flag is %u", get32(b + 76));
    if (get64(b + 112) != 0) return bad(r, "reserved header fields are not zero");
    h->have_rank = (int)get32(b + 76);
    uint32_t hb = get32(b + 20);
    h->have_baselines = (int)hb;
    h->nu = (int32_t)get32(b + 24);
    h->ni = (int32_t)get32(b + 28);
    h->nnz = get64(b + 32);
    h->ne = get64(b + 40);
    h->k = (int32_t)get32(b + 48);
    h->min_support = (int32_t)get32(b + 52);
    h->shrinkage = bits_f64(get64(b + 56));
    h->metric = get32(b + 64);
    h->mode = get32(b + 68);
    h->min_k = (int32_t)get32(b + 72);
    h->mu = bits_f64(get64(b + 80));
    h->rmin = bits_f64(get64(b + 88));
    h->rmax = bits_f64(get64(b + 96));
    h->size = get64(b + 104);
    if (hb > 1) return bad(r, "have_baselines is %u", hb);
    if (h->nu < 1 || h->ni < 1) return bad(r, "%d users and %d items", h->nu, h->ni);
    if (h->k < 1) return bad(r, "k = %d", h->k);
    if (metric_from_code(h->metric, &f->knn.sim.metric) != 0) return bad(r, "unknown metric code %u", h->metric);
    if (mode_from_code(h->mode, &f->knn.mode) != 0) return bad(r, "unknown prediction mode code %u", h->mode);
    if (version_for(f->knn.mode) != version)
        return bad(r, "prediction mode code %u in a file of version %u (interpolate and global are version %d, "
                   "the others %d)", h->mode, version, RK_MFILE_VERSION, RK_MFILE_VERSION_PLAIN);
    if (h->min_support < 0 || h->min_k < 0 || !isfinite(h->shrinkage) || h->shrinkage < 0)
        return bad(r, "invalid options (min-support %d, min-k %d, shrinkage %g)", h->min_support, h->min_k,
                   h->shrinkage);
    if (!isfinite(h->mu) || !isfinite(h->rmin) || !isfinite(h->rmax) || h->rmin > h->rmax)
        return bad(r, "mu %g or the scale [%g, %g] is not finite or inverted", h->mu, h->rmin, h->rmax);
    /* Sizes against the length before anything is allocated: each array is
     * at least one byte per element, so no product below can overflow. */
    if (h->nnz < 1 || h->nnz > r->len || h->ne > r->len)
        return bad(r, "%llu ratings and %llu list entries cannot fit in %llu bytes", (unsigned long long)h->nnz,
                   (unsigned long long)h->ne, (unsigned long long)r->len);
    if (h->nnz > (uint64_t)h->nu * (uint64_t)h->ni) return bad(r, "more ratings than user-item pairs");
    uint64_t cap = (uint64_t)(h->k < h->ni - 1 ? h->k : h->ni - 1);
    if (h->ne > (uint64_t)h->ni * cap) return bad(r, "%llu list entries for %d lists of at most %llu",
                                                   (unsigned long long)h->ne, h->ni, (unsigned long long)cap);
    if (!cells_ok(h->ni, h->k, r->len)) return bad(r, "k = %d is implausibly large for a file of this size", h->k);
    const uint64_t nu = (uint64_t)h->nu, ni = (uint64_t)h->ni;
    const uint64_t min = HDR_SIZE + rec_size(2 * nu) + rec_size(2 * ni) + rec_size(8 * (nu + 1)) +
                         2 * rec_size(4 * h->nnz) + 2 * rec_size(8 * ni) + rec_size(8 * nu) + rec_size(4 * ni) +
                         3 * rec_size(4 * h->ne) + rec_size(0) +
                         (h->have_rank ? rec_size(ROPT_LEN) + rec_size(4 * ni) + 3 * rec_size(0) : 0) +
                         (rk_predict_is_model(f->knn.mode) ? rec_size(POPT_LEN) : 0) +
                         (f->knn.mode == RK_PREDICT_GLOBAL
                              ? rec_size(8 * nu) + rec_size(8 * ni) + 2 * rec_size(8 * h->ne) : 0);
    if (h->size < min) return bad(r, "file size %llu in the header, its sizes need at least %llu",
                                  (unsigned long long)h->size, (unsigned long long)min);
    if (r->len < h->size)
        return bad(r, "truncated (%llu bytes, the header says at least %llu)", (unsigned long long)r->len,
                   (unsigned long long)h->size);
    if (r->len > h->size)
        return bad(r, "%llu bytes, the header says %llu (trailing data)", (unsigned long long)r->len,
                   (unsigned long long)h->size);
    f->version = version;
    r->pos = HDR_SIZE;
    return RK_OK;
}

/* Rows of a user-major matrix: ptr monotone from 0 to nnz, columns in range
 * and strictly ascending, values finite. */
static rk_status check_ratings(const rd *r, const rk_csr *a)
{
    if (a->ptr[0] != 0) return bad(r, "rating offsets do not start at 0");
    for (int32_t u = 0; u < a->n_rows; u++)
        if (a->ptr[u + 1] < a->ptr[u]) return bad(r, "rating offsets decrease at user %d", u);
    if (a->ptr[a->n_rows] != a->nnz)
        return bad(r, "rating offsets end at %lld, not %lld", (long long)a->ptr[a->n_rows], (long long)a->nnz);
    int32_t first = a->n_rows;
#pragma omp parallel for schedule(dynamic, 1024) reduction(min : first) if (a->nnz > 65536)
    for (int32_t u = 0; u < a->n_rows; u++) {
        int ok = 1;
        for (int64_t p = a->ptr[u]; p < a->ptr[u + 1]; p++) {
            int32_t j = a->idx[p];
            ok &= j >= 0 && j < a->n_cols && (p == a->ptr[u] || j > a->idx[p - 1]) && isfinite(a->val[p]);
        }
        if (!ok && u < first) first = u;
    }
    if (first < a->n_rows)
        return bad(r, "user %d's ratings: an item out of range, out of order or repeated, or a value not finite",
                   first);
    return RK_OK;
}

static rk_status check_doubles(const rd *r, const double *a, int32_t n, const char *what, int must_be_zero)
{
    for (int32_t i = 0; i < n; i++)
        if (!isfinite(a[i]) || (must_be_zero && a[i] != 0.0))
            return bad(r, "%s[%d] = %g (%s)", what, i, a[i],
                       must_be_zero ? "no baselines saved, must be 0" : "not finite");
    return RK_OK;
}

/* The packed list arrays into the padded rk_lists, with the checks. */
/* The four list records from tag on (LLEN.. or KLEN..) into l: ni lists of
 * capacity k holding ne entries in all. */
static rk_status read_lists(rd *r, int tag, int32_t ni, int32_t k, uint64_t ne, rk_lists *l)
{
    rec c[4];
    int32_t *len = NULL;
    const hdr hh = {.ni = ni, .k = k, .ne = ne};
    const hdr *h = &hh;
    rk_status s = rec_open(r, tag, 4 * (uint64_t)h->ni, &c[0]);
    if (s == RK_OK) s = rec_copy(r, &c[0], 4, (void **)&len, "list lengths");
    if (s != RK_OK) return s;
    rk_error e;
    s = rk_lists_alloc(l, h->ni, h->k, &e);
    if (s != RK_OK) {
        free(len);
        return s == RK_E_NOMEM ? nomem(r, "the neighbour lists") : bad(r, "lists: %s", e.msg);
    }
    free(l->len);
    l->len = len;
    const int32_t cap = h->k < h->ni - 1 ? h->k : h->ni - 1;
    uint64_t sum = 0;
    for (int32_t i = 0; i < h->ni; i++) {
        if (len[i] < 0 || len[i] > cap) return bad(r, "item %d's list has %d entries (at most %d)", i, len[i], cap);
        sum += (uint64_t)len[i];
    }
    if (sum != h->ne) return bad(r, "the lists hold %llu entries, the header says %llu", (unsigned long long)sum,
                                 (unsigned long long)h->ne);
    for (int t = 1; t < 4 && s == RK_OK; t++)
        if ((s = rec_open(r, tag + t, 4 * h->ne, &c[t])) == RK_OK) s = rec_check(r, &c[t]);
    if (s != RK_OK) return s;
    int32_t *seen = malloc((size_t)h->ni * sizeof *seen); /* seen[j] == i: j is already in i's list */
    if (seen == NULL) return nomem(r, "a list check");
    memset(seen, 0xff, (size_t)h->ni * sizeof *seen);
    uint64_t at = 0;
    for (int32_t i = 0; i < h->ni && s == RK_OK; i++) {
        const size_t base = (size_t)i * (size_t)h->k;
        for (int32_t t = 0; t < len[i]; t++, at++) {
            int32_t j = (int32_t)get32(c[1].pay + 4 * at), sup = (int32_t)get32(c[3].pay + 4 * at);
            uint32_t sb = get32(c[2].pay + 4 * at);
            float sim;
            memcpy(&sim, &sb, 4);
            if (j < 0 || j >= h->ni || j == i || seen[j] == i || !isfinite(sim) || sup < 0) {
                s = bad(r, "item %d's list, entry %d: neighbour %d (out of range, itself or repeated), "
                        "similarity %g, support %d", i, t, j, (double)sim, sup);
                break;
            }
            seen[j] = i;
            l->nbr[base + (size_t)t] = j;
            l->sim[base + (size_t)t] = sim;
            l->support[base + (size_t)t] = sup;
        }
    }
    free(seen);
    return s;
}

/* The ranking model's options record and its lists (MODEL_FORMAT.md). */
static rk_status read_rank(rd *r, const hdr *h, rk_mfile *f)
{
    rec c;
    RK_FORWARD(rec_open(r, T_ROPT, ROPT_LEN, &c));
    RK_FORWARD(rec_check(r, &c));
    const unsigned char *p = c.pay;
    rk_rankw_opts *o = &f->rank;
    rk_rankw_opts_default(o);
    rk_metric m;
    if (rk_metric_from_code(get32(p), &m) != RK_OK || !rk_metric_is_ranking(m))
        return bad(r, "unknown ranking similarity code %u", get32(p));
    o->sim = m;
    o->k = (int32_t)get32(p + 4);
    const uint32_t w = get32(p + 8), vals = get32(p + 12), norm = get32(p + 16);
    o->alpha = bits_f64(get64(p + 24));
    o->beta = bits_f64(get64(p + 32));
    o->shrink = bits_f64(get64(p + 40));
    o->q = bits_f64(get64(p + 48));
    o->bm25_k1 = bits_f64(get64(p + 56));
    o->bm25_b = bits_f64(get64(p + 64));
    const uint64_t ne = get64(p + 72);
    if (w > RK_RANKW_BM25 || vals > 1 || norm > 1 || get32(p + 20) != 0)
        return bad(r, "ranking options: weighting %u, values %u, normalisation %u", w, vals, norm);
    o->weighting = (rk_rankw_weighting)w;
    o->ratings = (int)vals;
    o->normalize = (int)norm;
    rk_error e;
    if (o->k < 1 || rk_rankw_check(o, &e) != RK_OK) return bad(r, "ranking options: k %d, %s", o->k, e.msg);
    const uint64_t cap = (uint64_t)(o->k < h->ni - 1 ? o->k : h->ni - 1);
    if (ne > r->len || ne > (uint64_t)h->ni * cap || !cells_ok(h->ni, o->k, r->len))
        return bad(r, "%llu ranking-list entries with k = %d cannot fit", (unsigned long long)ne, o->k);
    RK_FORWARD(read_lists(r, T_KLEN, h->ni, o->k, ne, &f->rank_lists));
    f->have_rank = 1;
    return RK_OK;
}

static int pm_ok(double x) { return isfinite(x) && x >= 0.0; }

/* f64 packed per list (item i's len[i] values) into the padded a (ni x k). */
static rk_status read_packed(const rd *r, const rec *c, const rk_lists *l, double *a, const char *what)
{
    RK_FORWARD(rec_check(r, c));
    uint64_t at = 0;
    for (int32_t i = 0; i < l->n_items; i++)
        for (int32_t t = 0; t < l->len[i]; t++, at++) {
            const double x = bits_f64(get64(c->pay + 8 * at));
            if (!isfinite(x)) return bad(r, "%s of item %d's entry %d is not finite", what, i, t);
            a[(size_t)i * (size_t)l->k + (size_t)t] = x;
        }
    return RK_OK;
}

/* Version 3's records: the prediction model's options, and for global its
 * trained biases and weights (MODEL_FORMAT.md). */
static rk_status read_pmodel(rd *r, const hdr *h, rk_mfile *f)
{
    rec c;
    RK_FORWARD(rec_open(r, T_POPT, POPT_LEN, &c));
    RK_FORWARD(rec_check(r, &c));
    rk_pmodel_opts *o = &f->knn.pm;
    o->interp_shrink = bits_f64(get64(c.pay));
    o->interp_reg = bits_f64(get64(c.pay + 8));
    o->global_lr = bits_f64(get64(c.pay + 16));
    o->global_reg = bits_f64(get64(c.pay + 24));
    o->global_decay = bits_f64(get64(c.pay + 32));
    o->global_epochs = (int32_t)get32(c.pay + 40);
    if (!pm_ok(o->interp_shrink) || !pm_ok(o->interp_reg) || !pm_ok(o->global_lr) || !pm_ok(o->global_reg) ||
        !pm_ok(o->global_decay) || o->global_epochs < 0 || get32(c.pay + 44) != 0)
        return bad(r, "invalid prediction model options");
    if (f->knn.mode == RK_PREDICT_INTERPOLATE && (h->k > RK_PMODEL_MAX_K || h->ni > RK_PMODEL_MAX_ITEMS))
        return bad(r, "an interpolation model of k = %d and %d items (at most %d and %d)", h->k, h->ni,
                   RK_PMODEL_MAX_K, RK_PMODEL_MAX_ITEMS);
    if (f->knn.mode == RK_PREDICT_GLOBAL && h->k > 65536)
        return bad(r, "a global model of k = %d (at most 65536)", h->k);
    if (f->knn.mode != RK_PREDICT_GLOBAL) return RK_OK;
    rk_pmodel_global *g = &f->global;
    rk_error e;
    if (rk_pmodel_global_alloc(g, h->nu, h->ni, h->k, &e) != RK_OK) return nomem(r, "the global model");
    RK_FORWARD(rec_open(r, T_GBUS, 8 * (uint64_t)h->nu, &c));
    free(g->bu);
    g->bu = NULL;
    RK_FORWARD(rec_copy(r, &c, 8, (void **)&g->bu, "the global model"));
    RK_FORWARD(check_doubles(r, g->bu, h->nu, "the global model's b_u", 0));
    RK_FORWARD(rec_open(r, T_GBIS, 8 * (uint64_t)h->ni, &c));
    free(g->bi);
    g->bi = NULL;
    RK_FORWARD(rec_copy(r, &c, 8, (void **)&g->bi, "the global model"));
    RK_FORWARD(check_doubles(r, g->bi, h->ni, "the global model's b_i", 0));
    RK_FORWARD(rec_open(r, T_GWTS, 8 * h->ne, &c));
    RK_FORWARD(read_packed(r, &c, &f->lists, g->w, "w"));
    RK_FORWARD(rec_open(r, T_GCTS, 8 * h->ne, &c));
    return read_packed(r, &c, &f->lists, g->c, "c");
}

static rk_status read_body(rd *r, const hdr *h, rk_mfile *f)
{
    rec c;
    rk_model *m = &f->model;
    rk_csr *U = &m->by_user;
    RK_FORWARD(rec_open(r, T_UIDS, UINT64_MAX, &c));
    RK_FORWARD(read_ids(r, &c, h->nu, "user", &f->users));
    RK_FORWARD(rec_open(r, T_IIDS, UINT64_MAX, &c));
    RK_FORWARD(read_ids(r, &c, h->ni, "item", &f->items));
    U->n_rows = h->nu;
    U->n_cols = h->ni;
    U->nnz = (int64_t)h->nnz;
    RK_FORWARD(rec_open(r, T_RPTR, 8 * ((uint64_t)h->nu + 1), &c));
    RK_FORWARD(rec_copy(r, &c, 8, (void **)&U->ptr, "rating offsets"));
    RK_FORWARD(rec_open(r, T_RIDX, 4 * h->nnz, &c));
    RK_FORWARD(rec_copy(r, &c, 4, (void **)&U->idx, "ratings"));
    RK_FORWARD(rec_open(r, T_RVAL, 4 * h->nnz, &c));
    RK_FORWARD(rec_copy(r, &c, 4, (void **)&U->val, "ratings"));
    RK_FORWARD(check_ratings(r, U));
    RK_FORWARD(rec_open(r, T_IMEA, 8 * (uint64_t)h->ni, &c));
    RK_FORWARD(rec_copy(r, &c, 8, (void **)&m->item_mean, "item means"));
    RK_FORWARD(check_doubles(r, m->item_mean, h->ni, "item mean", 0));
    RK_FORWARD(rec_open(r, T_UBAS, 8 * (uint64_t)h->nu, &c));
    RK_FORWARD(rec_copy(r, &c, 8, (void **)&m->bu, "user baselines"));
    RK_FORWARD(check_doubles(r, m->bu, h->nu, "b_u", !h->have_baselines));
    RK_FORWARD(rec_open(r, T_IBAS, 8 * (uint64_t)h->ni, &c));
    RK_FORWARD(rec_copy(r, &c, 8, (void **)&m->bi, "item baselines"));
    RK_FORWARD(check_doubles(r, m->bi, h->ni, "b_i", !h->have_baselines));
    RK_FORWARD(read_lists(r, T_LLEN, h->ni, h->k, h->ne, &f->lists));
    if (h->have_rank) RK_FORWARD(read_rank(r, h, f));
    if (rk_predict_is_model(f->knn.mode)) RK_FORWARD(read_pmodel(r, h, f));
    RK_FORWARD(rec_open(r, T_END, 0, &c));
    RK_FORWARD(rec_check(r, &c));
    if (r->pos != r->len) return bad(r, "%llu bytes after the end marker", (unsigned long long)(r->len - r->pos));
    m->mu = h->mu;
    m->rmin = h->rmin;
    m->rmax = h->rmax;
    m->have_baselines = h->have_baselines;
    rk_status s = rk_csr_transpose(U, &m->by_item, r->err);
    if (s != RK_OK) return s == RK_E_NOMEM ? nomem(r, "the item-major ratings") : s;
    return RK_OK;
}

rk_status rk_mfile_read_mem(const void *buf, size_t len, const char *name, rk_mfile *out, rk_error *err)
{
    hdr h;
    rk_mfile f;
    memset(&h, 0, sizeof h);
    memset(&f, 0, sizeof f);
    memset(out, 0, sizeof *out);
    rd r = {buf, (uint64_t)len, 0, name != NULL ? name : "model file", err};
    if (buf == NULL && len > 0) return rk_error_set(err, RK_E_ARG, "model file: no buffer");
    rk_knn_opts_default(&f.knn);
    rk_status s = read_header(&r, &h, &f);
    if (s == RK_OK) s = read_body(&r, &h, &f);
    if (s != RK_OK) {
        rk_mfile_free(&f);
        return s;
    }
    f.knn.sim.min_support = h.min_support;
    f.knn.sim.shrinkage = h.shrinkage;
    f.knn.k = h.k;
    f.knn.min_k = h.min_k;
    *out = f;
    return RK_OK;
}

/* A file that cannot be mapped (a pipe, a special file): read it whole, or
 * only its first bytes when they do not begin with the magic. */
static rk_status read_all(int fd, const char *path, unsigned char **out, size_t *len, rk_error *err)
{
    size_t cap = 1 << 16, n = 0;
    unsigned char *b = malloc(cap);
    if (b == NULL) return rk_error_set(err, RK_E_NOMEM, "%s: out of memory reading the file", path);
    for (;;) {
        if (n == cap) {
            unsigned char *nb = cap <= SIZE_MAX / 2 ? realloc(b, cap * 2) : NULL;
            if (nb == NULL) {
                free(b);
                return rk_error_set(err, RK_E_NOMEM, "%s: out of memory reading the file", path);
            }
            b = nb, cap *= 2;
        }
        ssize_t got = read(fd, b + n, cap - n);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            int e = errno;
            free(b);
            return rk_error_set(err, RK_E_IO, "%s: cannot read: %s", path, strerror(e));
        }
        if (got == 0) break;
        n += (size_t)got;
        /* not a model (a rating file, /dev/zero): stop before reading it all */
        if (n >= 8 && n - (size_t)got < 8 && memcmp(b, MAGIC, 8) != 0) break;
    }
    *out = b;
    *len = n;
    return RK_OK;
}

rk_status rk_mfile_read(const char *path, rk_mfile *out, rk_error *err)
{
    memset(out, 0, sizeof *out);
    if (path == NULL) return rk_error_set(err, RK_E_ARG, "model file: no path given");
    int fd = open(path, O_RDONLY);
    if (fd < 0) return rk_error_set(err, RK_E_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    int e = fstat(fd, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : 0;
    if (e != 0) {
        close(fd);
        return rk_error_set(err, RK_E_IO, "%s: cannot read: %s", path, strerror(e));
    }
    if (S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size <= SIZE_MAX) {
        size_t len = (size_t)st.st_size;
        int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
        flags |= MAP_POPULATE; /* one pass of read-ahead, not a fault per page */
#endif
        void *p = mmap(NULL, len, PROT_READ, flags, fd, 0);
        if (p != MAP_FAILED) {
            close(fd);
            rk_status s = rk_mfile_read_mem(p, len, path, out, err);
            munmap(p, len);
            return s;
        }
    }
    unsigned char *b = NULL;
    size_t len = 0;
    rk_status s = read_all(fd, path, &b, &len, err);
    close(fd);
    if (s == RK_OK) s = rk_mfile_read_mem(b, len, path, out, err);
    free(b);
    return s;
}
