/* rk_data_pack.c — an rk_data as one flat buffer and back (rk_data.h), so
 * that one MPI rank loads the ratings and the others rebuild the same data.
 *
 * Layout (every part starts at a multiple of 8 bytes, gaps are zeros; host
 * byte order, both ends being one build):
 *   head                    pack_head below
 *   users' ids              n_users raw ids in index order, each ended by NUL
 *   items' ids              likewise
 *   train, test             user[n], item[n], rating[n], time[n] (when kept)
 *   model (when built)      by_user ptr/idx/val, by_item ptr/idx/val,
 *                           item_mean[n_cols], bu[n_rows], bi[n_cols]
 *   train_report, test_report   rk_load_report (it holds no pointers)
 *
 * Unpacking reads through a cursor that checks every count against the bytes
 * left before it multiplies, so a short, long or garbled buffer is
 * RK_E_INTERNAL, never a read out of bounds.  The id maps are rebuilt with
 * rk_ids_from_strings: the loader orders a map numerically exactly when
 * every id in it is a canonical integer, else by bytes, and
 * rk_ids_from_strings decides on the same set of ids with the same test,
 * so it gives the same order; unpacking checks that it did, id by id.
 */
#include "rk_data.h"

#include <stdlib.h>
#include <string.h>

#define PACK_MAGIC "RKDPACK\0"
#define PACK_VERSION 1

enum {
    PF_MODEL = 1 << 0,       /* the model was built (not a resampled run) */
    PF_TRAIN_ARRAYS = 1 << 1, /* train's arrays exist (they may for n == 0) */
    PF_TRAIN_TIME = 1 << 2,
    PF_TEST_ARRAYS = 1 << 3,
    PF_TEST_TIME = 1 << 4,
    PF_USERS = 1 << 5,       /* the users' map exists */
    PF_USERS_NUMERIC = 1 << 6,
    PF_ITEMS = 1 << 7,
    PF_ITEMS_NUMERIC = 1 << 8,
    PF_ALL_ = (1 << 9) - 1
};

/* 8-byte fields only: no padding. */
typedef struct pack_head {
    char magic[8];
    uint64_t version;
    uint64_t total;          /* bytes of the whole pack */
    uint64_t flags;          /* PF_* */
    uint64_t report_size;    /* sizeof(rk_load_report) of the build */
    int64_t n_users, n_items;           /* ids in the maps */
    int64_t users_bytes, items_bytes;   /* their strings, NULs included */
    int64_t train_n, test_n;
    int64_t bu_rows, bu_cols, bu_nnz;   /* model.by_user */
    int64_t bi_rows, bi_cols, bi_nnz;   /* model.by_item */
    int64_t have_baselines, duplicates_removed;
    double mu, rmin, rmax;
} pack_head;

static size_t round8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

/* ---- packing ------------------------------------------------------------------- */

/* A writer: with base NULL it only counts (the first pass). */
typedef struct wr {
    unsigned char *base;
    size_t pos;
    int overflow;
} wr;

static void w_raw(wr *w, const void *p, size_t n)
{
    if (n == 0) return;
    if (n > SIZE_MAX - 8 || w->pos > SIZE_MAX - 8 - n) {
        w->overflow = 1;
        return;
    }
    if (w->base != NULL) memcpy(w->base + w->pos, p, n);
    w->pos += n;
}

static void w_align(wr *w)
{
    w->pos = round8(w->pos); /* the buffer is zeroed: the gap is zeros */
}

/* count elements of el bytes at p, then alignment. */
static void w_array(wr *w, const void *p, int64_t count, size_t el)
{
    if (count > 0) {
        if ((uint64_t)count > SIZE_MAX / el) {
            w->overflow = 1;
            return;
        }
        w_raw(w, p, (size_t)count * el);
    }
    w_align(w);
}

/* The raw ids of m in index order, each ended by NUL. */
static void w_ids(wr *w, const rk_idmap *m)
{
    char buf[RK_ID_MAX + 1];
    const int32_t n = rk_ids_count(m);
    for (int32_t i = 0; i < n; i++) {
        int len = rk_ids_format(m, i, buf, sizeof buf);
        w_raw(w, buf, (size_t)len + 1);
    }
    w_align(w);
}

static void w_triples(wr *w, const rk_triples *t)
{
    w_array(w, t->user, t->n, sizeof *t->user);
    w_array(w, t->item, t->n, sizeof *t->item);
    w_array(w, t->rating, t->n, sizeof *t->rating);
    if (t->time != NULL) w_array(w, t->time, t->n, sizeof *t->time);
}

static void w_csr(wr *w, const rk_csr *a)
{
    w_array(w, a->ptr, (int64_t)a->n_rows + 1, sizeof *a->ptr);
    w_array(w, a->idx, a->nnz, sizeof *a->idx);
    w_array(w, a->val, a->nnz, sizeof *a->val);
}

/* The plain fields of a report, in a zeroed struct: no stray padding bytes
 * travel (the struct holds no pointers). */
static void w_report(wr *w, const rk_load_report *r)
{
    rk_load_report c;
    memset(&c, 0, sizeof c);
    c.format = r->format;
    c.delimiter = r->delimiter;
    c.has_time = r->has_time;
    c.bytes = r->bytes;
    c.lines = r->lines;
    c.ratings = r->ratings;
    c.skipped_lines = r->skipped_lines;
    c.n_bad_kept = r->n_bad_kept;
    for (int k = 0; k < RK_LOAD_BAD_KEPT; k++) {
        c.bad[k].file = r->bad[k].file;
        c.bad[k].line = r->bad[k].line;
    }
    memcpy(c.first_bad_reason, r->first_bad_reason, sizeof c.first_bad_reason);
    c.first_bad_reason[sizeof c.first_bad_reason - 1] = '\0';
    c.read_parse_s = r->read_parse_s;
    w_array(w, &c, 1, sizeof c);
}

static int model_built(const rk_model *m)
{
    return m->by_user.n_rows > 0 || m->by_user.ptr != NULL;
}

/* Bytes of the ids' strings, NULs included. */
static int64_t ids_bytes(const rk_idmap *m)
{
    char buf[RK_ID_MAX + 1];
    int64_t b = 0;
    for (int32_t i = 0; i < rk_ids_count(m); i++) b += rk_ids_format(m, i, buf, sizeof buf) + 1;
    return b;
}

/* The arrays a pack reads must be there for the counts it writes. */
static int triples_sane(const rk_triples *t)
{
    return t->n >= 0 && (t->n == 0 || (t->user != NULL && t->item != NULL && t->rating != NULL));
}

static int model_sane(const rk_model *m)
{
    const rk_csr *a = &m->by_user, *b = &m->by_item;
    return a->n_rows >= 0 && a->n_cols >= 0 && a->nnz >= 0 && b->n_rows >= 0 && b->n_cols >= 0 &&
           b->nnz >= 0 && a->ptr != NULL && b->ptr != NULL && (a->nnz == 0 || (a->idx != NULL && a->val != NULL)) &&
           (b->nnz == 0 || (b->idx != NULL && b->val != NULL)) && (a->n_cols == 0 || (m->item_mean != NULL && m->bi != NULL)) &&
           (a->n_rows == 0 || m->bu != NULL);
}

static void w_all(wr *w, const pack_head *h, const rk_data *d)
{
    w_array(w, h, 1, sizeof *h);
    w_ids(w, d->ds.users);
    w_ids(w, d->ds.items);
    w_triples(w, &d->train);
    w_triples(w, &d->test);
    if (h->flags & PF_MODEL) {
        const rk_model *m = &d->model;
        w_csr(w, &m->by_user);
        w_csr(w, &m->by_item);
        w_array(w, m->item_mean, m->by_user.n_cols, sizeof *m->item_mean);
        w_array(w, m->bu, m->by_user.n_rows, sizeof *m->bu);
        w_array(w, m->bi, m->by_user.n_cols, sizeof *m->bi);
    }
    w_report(w, &d->ds.train_report);
    w_report(w, &d->ds.test_report);
}

rk_status rk_data_pack(const rk_data *d, unsigned char **buf, size_t *bytes, rk_error *err)
{
    pack_head h;
    *buf = NULL;
    *bytes = 0;
    const int built = model_built(&d->model);
    if (!triples_sane(&d->train) || !triples_sane(&d->test) || (built && !model_sane(&d->model)))
        return rk_error_set(err, RK_E_INTERNAL, "internal: packing data whose arrays are missing");
    memset(&h, 0, sizeof h);
    memcpy(h.magic, PACK_MAGIC, sizeof h.magic);
    h.version = PACK_VERSION;
    h.report_size = sizeof(rk_load_report);
    h.flags = (uint64_t)((built ? PF_MODEL : 0) | (d->train.user != NULL ? PF_TRAIN_ARRAYS : 0) |
                         (d->train.time != NULL ? PF_TRAIN_TIME : 0) | (d->test.user != NULL ? PF_TEST_ARRAYS : 0) |
                         (d->test.time != NULL ? PF_TEST_TIME : 0) | (d->ds.users != NULL ? PF_USERS : 0) |
                         (rk_ids_numeric(d->ds.users) ? PF_USERS_NUMERIC : 0) | (d->ds.items != NULL ? PF_ITEMS : 0) |
                         (rk_ids_numeric(d->ds.items) ? PF_ITEMS_NUMERIC : 0));
    h.n_users = rk_ids_count(d->ds.users);
    h.n_items = rk_ids_count(d->ds.items);
    h.users_bytes = ids_bytes(d->ds.users);
    h.items_bytes = ids_bytes(d->ds.items);
    h.train_n = d->train.n;
    h.test_n = d->test.n;
    if (built) {
        h.bu_rows = d->model.by_user.n_rows;
        h.bu_cols = d->model.by_user.n_cols;
        h.bu_nnz = d->model.by_user.nnz;
        h.bi_rows = d->model.by_item.n_rows;
        h.bi_cols = d->model.by_item.n_cols;
        h.bi_nnz = d->model.by_item.nnz;
        h.have_baselines = d->model.have_baselines;
    }
    h.duplicates_removed = d->duplicates_removed;
    h.mu = d->model.mu;
    h.rmin = d->model.rmin;
    h.rmax = d->model.rmax;

    wr w = {NULL, 0, 0};
    w_all(&w, &h, d); /* count */
    if (w.overflow) return rk_error_set(err, RK_E_NOMEM, "the data are too large to pack");
    h.total = w.pos;
    unsigned char *b = calloc(w.pos, 1);
    RK_CHECK_ALLOC(b, err);
    w = (wr){b, 0, 0};
    w_all(&w, &h, d);
    if (w.pos != h.total) { /* the two passes disagree: a bug */
        free(b);
        return rk_error_set(err, RK_E_INTERNAL, "internal: a pack of %zu bytes wrote %zu", (size_t)h.total, w.pos);
    }
    *buf = b;
    *bytes = w.pos;
    return RK_OK;
}

/* ---- unpacking ----------------------------------------------------------------- */

typedef struct rd {
    const unsigned char *p;
    size_t len, pos;
} rd;

static rk_status corrupt(rk_error *err, const char *what)
{
    return rk_error_set(err, RK_E_INTERNAL, "internal: a data pack is not whole (%s)", what);
}

/* The next part: count elements of el bytes, padded to 8; NULL when the
 * bytes left do not hold it (no product is formed before that is known). */
static const unsigned char *r_take(rd *r, int64_t count, size_t el)
{
    if (count < 0) return NULL;
    size_t left = r->len - r->pos;
    if ((uint64_t)count > left / el) return NULL;
    size_t n = round8((size_t)count * el);
    if (n > left) return NULL;
    const unsigned char *at = r->p + r->pos;
    r->pos += n;
    return at;
}

/* A new array of count elements of el bytes from the reader (a 1-byte
 * block when count is 0, as the loader and the model allocate). */
static rk_status r_array(rd *r, int64_t count, size_t el, void **out, const char *what, rk_error *err)
{
    const unsigned char *src = r_take(r, count, el);
    if (src == NULL) return corrupt(err, what);
    size_t n = (size_t)count * el;
    *out = malloc(n > 0 ? n : 1);
    if (*out == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory unpacking %s (%zu bytes)", what, n);
    if (n > 0) memcpy(*out, src, n);
    return RK_OK;
}

/* A map of n ids from their NUL-ended strings, at the same indices. */
static rk_status r_ids(rd *r, int64_t n, int64_t nbytes, int numeric, rk_idmap **out, const char *what,
                       rk_error *err)
{
    *out = NULL;
    if (n < 0 || n > INT32_MAX) return corrupt(err, what);
    const unsigned char *s = r_take(r, nbytes, 1);
    if (s == NULL) return corrupt(err, what);
    if (n > nbytes / 2) return corrupt(err, what); /* each id takes 2 bytes at least */
    const char *p = (const char *)s, *end = p + nbytes;
    /* n strings, each 1..RK_ID_MAX bytes and a NUL, filling nbytes exactly */
    const char **ids = malloc((size_t)(n > 0 ? n : 1) * sizeof *ids);
    if (ids == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory for %lld %s", (long long)n, what);
    rk_status st = RK_OK;
    for (int64_t k = 0; k < n && st == RK_OK; k++) {
        const char *z = memchr(p, '\0', (size_t)(end - p));
        if (z == NULL || z == p || z - p > RK_ID_MAX) st = corrupt(err, what);
        ids[k] = p;
        p = z != NULL ? z + 1 : end;
    }
    if (st == RK_OK && p != end) st = corrupt(err, what);
    if (st == RK_OK) st = rk_ids_from_strings(ids, n, out, err);
    if (st == RK_E_ARG) st = corrupt(err, what);
    /* the same ids at the same indices, and the same kind of map */
    char buf[RK_ID_MAX + 1];
    if (st == RK_OK && (rk_ids_count(*out) != n || rk_ids_numeric(*out) != numeric)) st = corrupt(err, what);
    for (int64_t k = 0; k < n && st == RK_OK; k++)
        if (rk_ids_format(*out, (int32_t)k, buf, sizeof buf) < 0 || strcmp(buf, ids[k]) != 0)
            st = rk_error_set(err, RK_E_INTERNAL, "internal: %s rebuilt in another order (index %lld: %s, not %s)",
                              what, (long long)k, buf, ids[k]);
    free(ids);
    if (st != RK_OK) {
        rk_ids_free(*out);
        *out = NULL;
    }
    return st;
}

static rk_status r_triples(rd *r, int64_t n, int arrays, int with_time, int32_t n_users, int32_t n_items,
                           rk_triples *t, const char *what, rk_error *err)
{
    memset(t, 0, sizeof *t);
    if (n < 0 || (n > 0 && !arrays)) return corrupt(err, what);
    if (!arrays) return with_time ? corrupt(err, what) : RK_OK;
    RK_FORWARD(r_array(r, n, sizeof *t->user, (void **)&t->user, what, err));
    RK_FORWARD(r_array(r, n, sizeof *t->item, (void **)&t->item, what, err));
    RK_FORWARD(r_array(r, n, sizeof *t->rating, (void **)&t->rating, what, err));
    if (with_time) RK_FORWARD(r_array(r, n, sizeof *t->time, (void **)&t->time, what, err));
    t->n = n;
    for (int64_t k = 0; k < n; k++)
        if (t->user[k] < 0 || t->user[k] >= n_users || t->item[k] < 0 || t->item[k] >= n_items)
            return corrupt(err, what);
    return RK_OK;
}

static rk_status r_csr(rd *r, int64_t rows, int64_t cols, int64_t nnz, rk_csr *a, const char *what, rk_error *err)
{
    char why[128];
    if (rows < 0 || rows > INT32_MAX || cols < 0 || cols > INT32_MAX || nnz < 0) return corrupt(err, what);
    a->n_rows = (int32_t)rows;
    a->n_cols = (int32_t)cols;
    RK_FORWARD(r_array(r, rows + 1, sizeof *a->ptr, (void **)&a->ptr, what, err));
    RK_FORWARD(r_array(r, nnz, sizeof *a->idx, (void **)&a->idx, what, err));
    RK_FORWARD(r_array(r, nnz, sizeof *a->val, (void **)&a->val, what, err));
    a->nnz = nnz;
    if (rk_csr_check(a, why, sizeof why) != 0) return corrupt(err, what);
    return RK_OK;
}

static rk_status r_report(rd *r, rk_load_report *out, const char *what, rk_error *err)
{
    const unsigned char *src = r_take(r, 1, sizeof *out);
    if (src == NULL) return corrupt(err, what);
    memcpy(out, src, sizeof *out);
    if (out->n_bad_kept < 0 || out->n_bad_kept > RK_LOAD_BAD_KEPT ||
        memchr(out->first_bad_reason, '\0', sizeof out->first_bad_reason) == NULL)
        return corrupt(err, what);
    return RK_OK;
}

static rk_status unpack(rd *r, const pack_head *h, rk_data *d, rk_error *err)
{
    const uint64_t f = h->flags;
    if ((!(f & PF_USERS) && (h->n_users != 0 || h->users_bytes != 0 || (f & PF_USERS_NUMERIC))) ||
        (!(f & PF_ITEMS) && (h->n_items != 0 || h->items_bytes != 0 || (f & PF_ITEMS_NUMERIC))))
        return corrupt(err, "id maps");
    if (f & PF_USERS)
        RK_FORWARD(r_ids(r, h->n_users, h->users_bytes, (f & PF_USERS_NUMERIC) != 0, &d->ds.users, "user ids", err));
    if (f & PF_ITEMS)
        RK_FORWARD(r_ids(r, h->n_items, h->items_bytes, (f & PF_ITEMS_NUMERIC) != 0, &d->ds.items, "item ids", err));
    const int32_t nu = rk_ids_count(d->ds.users), ni = rk_ids_count(d->ds.items);
    /* train and test are the data set's triples (own_split_ 0): freed once, with it */
    RK_FORWARD(r_triples(r, h->train_n, (f & PF_TRAIN_ARRAYS) != 0, (f & PF_TRAIN_TIME) != 0, nu, ni, &d->ds.train,
                         "training ratings", err));
    RK_FORWARD(r_triples(r, h->test_n, (f & PF_TEST_ARRAYS) != 0, (f & PF_TEST_TIME) != 0, nu, ni, &d->ds.test,
                         "test ratings", err));
    d->train = d->ds.train;
    d->test = d->ds.test;
    rk_model *m = &d->model;
    if (f & PF_MODEL) {
        if (h->bi_rows != h->bu_cols || h->bi_cols != h->bu_rows || h->bi_nnz != h->bu_nnz)
            return corrupt(err, "model: the matrices do not match");
        RK_FORWARD(r_csr(r, h->bu_rows, h->bu_cols, h->bu_nnz, &m->by_user, "model: user-major matrix", err));
        RK_FORWARD(r_csr(r, h->bi_rows, h->bi_cols, h->bi_nnz, &m->by_item, "model: item-major matrix", err));
        RK_FORWARD(r_array(r, h->bu_cols, sizeof *m->item_mean, (void **)&m->item_mean, "model: item means", err));
        RK_FORWARD(r_array(r, h->bu_rows, sizeof *m->bu, (void **)&m->bu, "model: user baselines", err));
        RK_FORWARD(r_array(r, h->bu_cols, sizeof *m->bi, (void **)&m->bi, "model: item baselines", err));
        m->have_baselines = (int)h->have_baselines;
    } else if (h->bu_rows | h->bu_cols | h->bu_nnz | h->bi_rows | h->bi_cols | h->bi_nnz | h->have_baselines) {
        return corrupt(err, "a model without its flag");
    }
    if (h->have_baselines != 0 && h->have_baselines != 1) return corrupt(err, "model: have_baselines");
    m->mu = h->mu;
    m->rmin = h->rmin;
    m->rmax = h->rmax;
    RK_FORWARD(r_report(r, &d->ds.train_report, "training load report", err));
    RK_FORWARD(r_report(r, &d->ds.test_report, "test load report", err));
    if (r->pos != r->len) return corrupt(err, "bytes after the last part");
    d->duplicates_removed = h->duplicates_removed;
    return RK_OK;
}

rk_status rk_data_unpack(const unsigned char *buf, size_t bytes, rk_data *d, rk_error *err)
{
    pack_head h;
    memset(d, 0, sizeof *d);
    if (buf == NULL || bytes < sizeof h) return corrupt(err, "shorter than its head");
    memcpy(&h, buf, sizeof h);
    if (memcmp(h.magic, PACK_MAGIC, sizeof h.magic) != 0) return corrupt(err, "not a data pack");
    if (h.version != PACK_VERSION || h.report_size != sizeof(rk_load_report))
        return corrupt(err, "another version or build");
    if (h.total != bytes) return rk_error_set(err, RK_E_INTERNAL,
                                              "internal: a data pack is not whole (%zu bytes of %llu)", bytes,
                                              (unsigned long long)h.total);
    if (h.flags & ~(uint64_t)PF_ALL_) return corrupt(err, "unknown flags");
    if (h.duplicates_removed < 0) return corrupt(err, "duplicates removed");
    rd r = {buf, bytes, round8(sizeof h)};
    rk_status s = unpack(&r, &h, d, err);
    if (s != RK_OK) rk_data_free(d);
    return s;
}
