/* rk_recbuf: random batches (0 users, n = 1, short and empty lists, scores
 * over the whole uint64 range) held and replayed give the sink every field
 * and every list's len cells back (the rest zero), first shifted; the bytes follow
 * the documented layout; the buffer grows geometrically and owns its copy;
 * a sink's failure stops the replay and comes back; every truncation and a
 * set of corruptions of the header and lengths are refused with
 * RK_E_INTERNAL without reading past the bytes (run it under valgrind); an
 * empty buffer replays nothing; rk_topn_cpu through the buffer gives the
 * batches it gives directly. */
#include "rk_recbuf.h"
#include "rk_knn.h"
#include "rk_model.h"
#include "rk_topn.h"
#include "test_util.h"
#include "test_topn_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- a sink that keeps a deep copy of every batch ------------------------------------ */

typedef struct rec_batch {
    int64_t first, count;
    int32_t n;
    int32_t *user, *len, *item;
    uint64_t *score;
} rec_batch;

typedef struct recorder {
    rec_batch *b;
    int64_t nb, cap;
    int calls;
    int fail_at;       /* return RK_E_IO from this call (0: never) */
    int misaligned;    /* a batch's arrays were not aligned for their type */
    int all_cells;     /* copy all count*n cells (else only len[x] of each, the rest 0) */
} recorder;

static void rec_init(recorder *r, int all_cells)
{
    memset(r, 0, sizeof *r);
    r->all_cells = all_cells;
}

static void rec_free(recorder *r)
{
    for (int64_t i = 0; i < r->nb; i++) {
        free(r->b[i].user);
        free(r->b[i].len);
        free(r->b[i].item);
        free(r->b[i].score);
    }
    free(r->b);
    memset(r, 0, sizeof *r);
}

static rk_status rec_sink(void *ud, const rk_topn_batch *b, rk_error *err)
{
    recorder *r = ud;
    if (++r->calls == r->fail_at) return rk_error_set(err, RK_E_IO, "recorder failure at call %d", r->calls);
    if ((uintptr_t)b->user % _Alignof(int32_t) || (uintptr_t)b->len % _Alignof(int32_t) ||
        (uintptr_t)b->item % _Alignof(int32_t) || (uintptr_t)b->score % _Alignof(uint64_t))
        r->misaligned = 1;
    if (r->nb == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        r->b = realloc(r->b, (size_t)r->cap * sizeof *r->b);
        CU_ASSERT_FATAL(r->b != NULL);
    }
    rec_batch *c = &r->b[r->nb++];
    const size_t users = (size_t)b->count, cells = users * (size_t)b->n;
    c->first = b->first;
    c->count = b->count;
    c->n = b->n;
    c->user = calloc(users + 1, sizeof *c->user);
    c->len = calloc(users + 1, sizeof *c->len);
    c->item = calloc(cells + 1, sizeof *c->item);
    c->score = calloc(cells + 1, sizeof *c->score);
    CU_ASSERT_FATAL(c->user && c->len && c->item && c->score);
    if (users > 0) {
        memcpy(c->user, b->user, users * sizeof *c->user);
        memcpy(c->len, b->len, users * sizeof *c->len);
    }
    for (size_t x = 0; x < users; x++) {
        const size_t keep = r->all_cells ? (size_t)b->n : (size_t)b->len[x];
        for (size_t k = 0; k < keep; k++) {
            c->item[x * (size_t)b->n + k] = b->item[x * (size_t)b->n + k];
            c->score[x * (size_t)b->n + k] = b->score[x * (size_t)b->n + k];
        }
    }
    return RK_OK;
}

/* The number of batches of a and b that differ (all count*n cells compared;
 * b's positions are a's + shift); 0 when equal. */
static int64_t rec_diff(const recorder *a, const recorder *b, int64_t shift)
{
    if (a->nb != b->nb) return a->nb > b->nb ? a->nb - b->nb : b->nb - a->nb;
    int64_t bad = 0;
    for (int64_t i = 0; i < a->nb; i++) {
        const rec_batch *x = &a->b[i], *y = &b->b[i];
        if (x->first + shift != y->first || x->count != y->count || x->n != y->n) {
            bad++;
            continue;
        }
        const size_t users = (size_t)x->count, cells = users * (size_t)x->n;
        if (memcmp(x->user, y->user, users * sizeof *x->user) || memcmp(x->len, y->len, users * sizeof *x->len) ||
            memcmp(x->item, y->item, cells * sizeof *x->item) || memcmp(x->score, y->score, cells * sizeof *x->score))
            bad++;
    }
    return bad;
}

/* ---- random batches ------------------------------------------------------------------- */

typedef struct owned_batch {
    rk_topn_batch b;
    int32_t *user, *len, *item;
    uint64_t *score;
} owned_batch;

/* A batch at first: 0..12 users (0 one time in 8), n = 1 one time in 4 or
 * else 2..9, lengths 0 (one in 5), n, or anything between; every cell set. */
static void random_batch(owned_batch *o, int64_t first, unsigned long long *s)
{
    const int64_t count = rk_test_rand(s) % 8 == 0 ? 0 : (int64_t)(1 + rk_test_rand(s) % 12);
    const int32_t n = rk_test_rand(s) % 4 == 0 ? 1 : (int32_t)(2 + rk_test_rand(s) % 8);
    const size_t users = (size_t)count, cells = users * (size_t)n;
    o->user = malloc((users + 1) * sizeof *o->user);
    o->len = malloc((users + 1) * sizeof *o->len);
    o->item = malloc((cells + 1) * sizeof *o->item);
    o->score = malloc((cells + 1) * sizeof *o->score);
    CU_ASSERT_FATAL(o->user && o->len && o->item && o->score);
    for (size_t x = 0; x < users; x++) {
        o->user[x] = (int32_t)(rk_test_rand(s) & 0x7fffffff);
        const unsigned long long k = rk_test_rand(s) % 5;
        o->len[x] = k == 0 ? 0 : k == 1 ? n : (int32_t)(rk_test_rand(s) % (unsigned long long)(n + 1));
    }
    for (size_t c = 0; c < cells; c++) {
        o->item[c] = (int32_t)(uint32_t)rk_test_rand(s); /* negative ones too: the buffer does not look */
        o->score[c] = rk_test_rand(s);                  /* high bit set half the time */
    }
    rk_topn_batch b = {first, count, o->user, n, o->len, o->item, o->score};
    o->b = b;
}

static void owned_free(owned_batch *o)
{
    free(o->user);
    free(o->len);
    free(o->item);
    free(o->score);
}

/* The record sizes, written from the header's description of the layout. */
static size_t up8(size_t x)
{
    return (x + 7) / 8 * 8;
}
static size_t documented_size(int64_t count, int32_t n)
{
    const size_t c = (size_t)count, cells = c * (size_t)n;
    return 8 + 8 + 4 + 4 + up8(4 * c) + up8(4 * c) + up8(4 * cells) + 8 * cells;
}

#define NB 300

/* NB random batches into a recbuf and into a recorder; returns the buffer,
 * the recorder and each record's end offset (ends[NB]). */
static void fill(rk_recbuf *rb, recorder *direct, size_t *ends, unsigned long long seed)
{
    unsigned long long s = seed;
    rk_error err;
    rk_recbuf_init(rb);
    rec_init(direct, 0) /* cells past len: 0, as the buffer holds them */;
    int64_t first = 0;
    for (int i = 0; i < NB; i++) {
        owned_batch o;
        random_batch(&o, first, &s);
        CU_ASSERT_FATAL(rec_sink(direct, &o.b, &err) == RK_OK);
        CU_ASSERT_FATAL(rk_recbuf_sink(rb, &o.b, &err) == RK_OK);
        ends[i] = rb->bytes;
        first += o.b.count;
        owned_free(&o); /* the buffer holds its own copy */
    }
}

/* Read the records where the header's layout puts them, each part checked
 * against the batch it came from, the padding bytes 0 (under valgrind, also
 * defined: the bytes may be sent as they are).  @return the mismatches. */
static int64_t layout_errors(const unsigned char *data, const recorder *direct, const size_t *ends)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < direct->nb; i++) {
        const rec_batch *b = &direct->b[i];
        const unsigned char *r = data + (i > 0 ? ends[i - 1] : 0);
        const size_t c = (size_t)b->count, cells = c * (size_t)b->n;
        int64_t first, count;
        int32_t n, pad, v32;
        uint64_t v64;
        memcpy(&first, r, 8);
        memcpy(&count, r + 8, 8);
        memcpy(&n, r + 16, 4);
        memcpy(&pad, r + 20, 4);
        bad += first != b->first || count != b->count || n != b->n || pad != 0;
        const size_t user = 24, len = user + up8(4 * c), item = len + up8(4 * c), score = item + up8(4 * cells);
        for (size_t x = 0; x < c; x++) {
            memcpy(&v32, r + user + 4 * x, 4);
            bad += v32 != b->user[x];
            memcpy(&v32, r + len + 4 * x, 4);
            bad += v32 != b->len[x];
        }
        for (size_t x = 0; x < cells; x++) {
            memcpy(&v32, r + item + 4 * x, 4);
            bad += v32 != b->item[x];
            memcpy(&v64, r + score + 8 * x, 8);
            bad += v64 != b->score[x];
        }
        for (size_t x = user + 4 * c; x < len; x++) bad += r[x] != 0;
        for (size_t x = len + 4 * c; x < item; x++) bad += r[x] != 0;
        for (size_t x = item + 4 * cells; x < score; x++) bad += r[x] != 0;
        bad += score + 8 * cells != documented_size(b->count, b->n);
    }
    return bad;
}

static void test_round_trip(void)
{
    rk_recbuf rb;
    recorder direct, back;
    rk_error err;
    size_t ends[NB];
    fill(&rb, &direct, ends, 20261124);

    /* the shapes asked for all occur */
    int zero_users = 0, n_one = 0, short_len = 0, empty_len = 0;
    int64_t users = 0;
    size_t bytes = 0;
    for (int64_t i = 0; i < direct.nb; i++) {
        const rec_batch *b = &direct.b[i];
        zero_users += b->count == 0;
        n_one += b->n == 1;
        for (int64_t x = 0; x < b->count; x++) {
            short_len += b->len[x] > 0 && b->len[x] < b->n;
            empty_len += b->len[x] == 0;
        }
        users += b->count;
        bytes += documented_size(b->count, b->n);
        CU_ASSERT_EQUAL(ends[i], bytes);
    }
    CU_ASSERT(zero_users > 0 && n_one > 0 && short_len > 0 && empty_len > 0);
    CU_ASSERT_EQUAL(rb.users, users);
    CU_ASSERT_EQUAL(rb.bytes, bytes);
    CU_ASSERT(rb.bytes <= rb.cap);

    CU_ASSERT_EQUAL(layout_errors(rb.data, &direct, ends), 0);

    const int64_t shifts[] = {0, 12345, -7, (int64_t)1 << 40};
    for (size_t k = 0; k < sizeof shifts / sizeof *shifts; k++) {
        rec_init(&back, 1);
        CU_ASSERT_EQUAL(rk_recbuf_replay(rb.data, rb.bytes, shifts[k], rec_sink, &back, &err), RK_OK);
        CU_ASSERT_EQUAL(back.calls, NB);
        CU_ASSERT_EQUAL(back.misaligned, 0);
        CU_ASSERT_EQUAL(rec_diff(&direct, &back, shifts[k]), 0);
        /* a wrong shift is seen: the comparison can fail */
        CU_ASSERT_NOT_EQUAL(rec_diff(&direct, &back, shifts[k] + 1), 0);
        rec_free(&back);
    }
    rec_free(&direct);
    rk_recbuf_free(&rb);
    CU_ASSERT(rb.data == NULL && rb.bytes == 0 && rb.cap == 0 && rb.users == 0);
    rk_recbuf_free(&rb); /* twice is fine */
    rk_recbuf_free(NULL);
}

/* Buffers appended to one another replay as their batches in turn: the
 * first NB/3 records of a round trip's buffer, then the rest, then an empty
 * one, give the same batches as the whole. */
static void test_append(void)
{
    rk_recbuf rb, a, b, joined, empty;
    recorder direct, back;
    rk_error err;
    size_t ends[NB];
    fill(&rb, &direct, ends, 7);
    const size_t cut = ends[NB / 3 - 1];
    rk_recbuf_init(&a);
    rk_recbuf_init(&b);
    rk_recbuf_init(&joined);
    rk_recbuf_init(&empty);
    /* the two halves as buffers of their own (replayed into sinks of their own) */
    CU_ASSERT_EQUAL(rk_recbuf_replay(rb.data, cut, 0, rk_recbuf_sink, &a, &err), RK_OK);
    CU_ASSERT_EQUAL(rk_recbuf_replay(rb.data + cut, rb.bytes - cut, 0, rk_recbuf_sink, &b, &err), RK_OK);
    CU_ASSERT_EQUAL(a.bytes + b.bytes, rb.bytes);
    CU_ASSERT_EQUAL(rk_recbuf_append(&joined, &a, &err), RK_OK);
    CU_ASSERT_EQUAL(rk_recbuf_append(&joined, &empty, &err), RK_OK);
    CU_ASSERT_EQUAL(rk_recbuf_append(&joined, &b, &err), RK_OK);
    CU_ASSERT_EQUAL(joined.bytes, rb.bytes);
    CU_ASSERT_EQUAL(joined.users, rb.users);
    CU_ASSERT_EQUAL(memcmp(joined.data, rb.data, rb.bytes), 0);
    rec_init(&back, 1);
    CU_ASSERT_EQUAL(rk_recbuf_replay(joined.data, joined.bytes, 5, rec_sink, &back, &err), RK_OK);
    CU_ASSERT_EQUAL(rec_diff(&direct, &back, 5), 0);
    rec_free(&back);
    rec_free(&direct);
    rk_recbuf_free(&rb);
    rk_recbuf_free(&a);
    rk_recbuf_free(&b);
    rk_recbuf_free(&joined);
}

/* Many small appends: the capacity changes O(log) times, never below need. */
static void test_growth(void)
{
    rk_recbuf rb;
    rk_error err;
    rk_recbuf_init(&rb);
    const int32_t user = 3, len = 1, item = 9;
    const uint64_t score = 77;
    int changes = 0;
    size_t cap = rb.cap;
    for (int64_t i = 0; i < 100000; i++) {
        rk_topn_batch b = {i, 1, &user, 1, &len, &item, &score};
        CU_ASSERT_FATAL(rk_recbuf_sink(&rb, &b, &err) == RK_OK);
        CU_ASSERT_FATAL(rb.bytes <= rb.cap);
        if (rb.cap != cap) changes++;
        cap = rb.cap;
    }
    CU_ASSERT_EQUAL(rb.bytes, 100000 * documented_size(1, 1));
    CU_ASSERT_EQUAL(rb.users, 100000);
    /* doubling from any start: at most log2(bytes) + 1 reallocations */
    int log2_bytes = 0;
    while (((size_t)1 << log2_bytes) < rb.bytes) log2_bytes++;
    CU_ASSERT(changes >= 1 && changes <= log2_bytes + 1);
    CU_ASSERT(rb.cap <= 2 * rb.bytes + 4096);
    rk_recbuf_free(&rb);
}

/* The sink's failure stops the replay at that call and comes back. */
static void test_sink_error(void)
{
    rk_recbuf rb;
    recorder direct, back;
    rk_error err;
    size_t ends[NB];
    fill(&rb, &direct, ends, 77);
    rec_init(&back, 1);
    back.fail_at = 5;
    memset(&err, 0, sizeof err);
    CU_ASSERT_EQUAL(rk_recbuf_replay(rb.data, rb.bytes, 0, rec_sink, &back, &err), RK_E_IO);
    CU_ASSERT_EQUAL(err.status, RK_E_IO);
    CU_ASSERT(strstr(err.msg, "recorder failure at call 5") != NULL);
    CU_ASSERT_EQUAL(back.calls, 5);
    CU_ASSERT_EQUAL(back.nb, 4);
    for (int64_t i = 0; i < back.nb; i++) {
        CU_ASSERT_EQUAL(back.b[i].first, direct.b[i].first);
        CU_ASSERT_EQUAL(back.b[i].count, direct.b[i].count);
    }
    /* the first call too, and with err NULL */
    rec_free(&back);
    rec_init(&back, 1);
    back.fail_at = 1;
    CU_ASSERT_EQUAL(rk_recbuf_replay(rb.data, rb.bytes, 0, rec_sink, &back, NULL), RK_E_IO);
    CU_ASSERT_EQUAL(back.nb, 0);
    rec_free(&back);
    rec_free(&direct);
    rk_recbuf_free(&rb);
}

/* The replay of bytes copied into a block of exactly their size (so that
 * valgrind sees a read past them); the recorder's batches counted. */
static rk_status replay_copy(const unsigned char *src, size_t bytes, int64_t shift, recorder *r, rk_error *err)
{
    unsigned char *p = malloc(bytes > 0 ? bytes : 1);
    CU_ASSERT_FATAL(p != NULL);
    if (bytes > 0) memcpy(p, src, bytes);
    memset(err, 0, sizeof *err);
    rk_status s = rk_recbuf_replay(p, bytes, shift, rec_sink, r, err);
    free(p);
    return s;
}

/* Every truncation: at a record's end it is the shorter buffer, replayed in
 * full; anywhere else RK_E_INTERNAL after the whole records before it. */
static void test_truncated(void)
{
    rk_recbuf rb;
    recorder direct;
    rk_error err;
    enum { FEW = 40 };
    size_t ends[NB];
    fill(&rb, &direct, ends, 5);
    int wrong = 0;
    int64_t refused = 0;
    for (size_t cut = 0, whole = 0; cut < ends[FEW - 1]; cut++) {
        while (whole < FEW && ends[whole] <= cut) whole++; /* records wholly before cut */
        const int boundary = cut == 0 || (whole > 0 && ends[whole - 1] == cut);
        recorder back;
        rec_init(&back, 1);
        rk_status s = replay_copy(rb.data, cut, 0, &back, &err);
        if (boundary) {
            wrong += s != RK_OK || back.nb != (int64_t)whole;
        } else {
            wrong += s != RK_E_INTERNAL || back.nb != (int64_t)whole || err.status != RK_E_INTERNAL ||
                     err.msg[0] == '\0';
            refused++;
        }
        rec_free(&back);
    }
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT(refused > 0);
    rec_free(&direct);
    rk_recbuf_free(&rb);
}

/* One record of 3 users of n = 4 after one of 2 users, corrupted in place. */
enum { F_FIRST, F_COUNT, F_N, F_PAD, F_LEN };

static void corrupt(int field, int64_t v, int64_t shift, rk_status want, int64_t want_batches)
{
    rk_recbuf rb;
    rk_error err;
    rk_recbuf_init(&rb);
    const int32_t user[3] = {4, 5, 6}, len[3] = {4, 0, 2}, item[12] = {0};
    const uint64_t score[12] = {0};
    rk_topn_batch a = {0, 2, user, 4, len, item, score}, b = {2, 3, user, 4, len, item, score};
    CU_ASSERT_FATAL(rk_recbuf_sink(&rb, &a, &err) == RK_OK);
    const size_t at = rb.bytes;
    CU_ASSERT_FATAL(rk_recbuf_sink(&rb, &b, &err) == RK_OK);
    unsigned char *r = rb.data + at;
    const int32_t v32 = (int32_t)v;
    switch (field) {
    case F_FIRST: memcpy(r, &v, 8); break;
    case F_COUNT: memcpy(r + 8, &v, 8); break;
    case F_N: memcpy(r + 16, &v32, 4); break;
    case F_PAD: memcpy(r + 20, &v32, 4); break;
    default: memcpy(r + documented_size(0, 4) + up8(4 * 3) + 4, &v32, 4); break; /* len[1] */
    }
    recorder back;
    rec_init(&back, 1);
    rk_status s = replay_copy(rb.data, rb.bytes, shift, &back, &err);
    CU_ASSERT_EQUAL(s, want);
    CU_ASSERT_EQUAL(back.nb, want_batches);
    if (want != RK_OK) {
        CU_ASSERT_EQUAL(err.status, want);
        CU_ASSERT(err.msg[0] != '\0');
    }
    rec_free(&back);
    rk_recbuf_free(&rb);
}

static void test_corrupt(void)
{
    /* the untouched pair replays, and len[1] = 4 (= n) is still valid: the
     * corruptions below are what is refused */
    corrupt(F_LEN, 0, 0, RK_OK, 2);
    corrupt(F_LEN, 4, 0, RK_OK, 2);
    corrupt(F_LEN, 5, 0, RK_E_INTERNAL, 1);
    corrupt(F_LEN, -1, 0, RK_E_INTERNAL, 1);
    corrupt(F_COUNT, -1, 0, RK_E_INTERNAL, 1);
    corrupt(F_COUNT, 4, 0, RK_E_INTERNAL, 1);                   /* one user more than the bytes */
    corrupt(F_COUNT, INT64_MAX, 0, RK_E_INTERNAL, 1);
    corrupt(F_COUNT, (int64_t)1 << 40, 0, RK_E_INTERNAL, 1);    /* sizes that need 64 bits */
    corrupt(F_COUNT, (int64_t)1 << 59, 0, RK_E_INTERNAL, 1);    /* 4*count overflows 64 bits */
    /* 2 users fit in the bytes, but the parts move: len[0] is read from
     * user[2] = 6 > n */
    corrupt(F_COUNT, 2, 0, RK_E_INTERNAL, 1);
    corrupt(F_N, 0, 0, RK_E_INTERNAL, 1);
    corrupt(F_N, -3, 0, RK_E_INTERNAL, 1);
    corrupt(F_N, INT32_MAX, 0, RK_E_INTERNAL, 1);
    corrupt(F_N, 5, 0, RK_E_INTERNAL, 1);
    corrupt(F_PAD, 1, 0, RK_E_INTERNAL, 1);
    corrupt(F_FIRST, -1, 0, RK_E_INTERNAL, 1);
    corrupt(F_FIRST, INT64_MAX - 1, 0, RK_OK, 2);               /* a position, not a size */
    corrupt(F_FIRST, INT64_MAX - 1, 2, RK_E_INTERNAL, 1);       /* shifted past INT64_MAX */

    /* misaligned and missing data */
    rk_recbuf rb;
    rk_error err;
    recorder back;
    rk_recbuf_init(&rb);
    const int32_t user = 1, len = 1, item = 2;
    const uint64_t score = 3;
    rk_topn_batch b = {0, 1, &user, 1, &len, &item, &score};
    CU_ASSERT_FATAL(rk_recbuf_sink(&rb, &b, &err) == RK_OK);
    uint64_t *block = malloc(rb.bytes + 8);
    CU_ASSERT_FATAL(block != NULL);
    unsigned char *odd = (unsigned char *)block + 4;
    memcpy(odd, rb.data, rb.bytes);
    rec_init(&back, 1);
    CU_ASSERT_EQUAL(rk_recbuf_replay(odd, rb.bytes, 0, rec_sink, &back, &err), RK_E_INTERNAL);
    CU_ASSERT_EQUAL(rk_recbuf_replay(NULL, rb.bytes, 0, rec_sink, &back, &err), RK_E_INTERNAL);
    CU_ASSERT_EQUAL(rk_recbuf_replay(rb.data, rb.bytes, 0, NULL, &back, &err), RK_E_INTERNAL);
    CU_ASSERT_EQUAL(back.calls, 0);
    memcpy(block, rb.data, rb.bytes); /* aligned again: accepted */
    CU_ASSERT_EQUAL(rk_recbuf_replay((unsigned char *)block, rb.bytes, 0, rec_sink, &back, &err), RK_OK);
    CU_ASSERT_EQUAL(back.calls, 1);
    rec_free(&back);
    free(block);
    rk_recbuf_free(&rb);
}

/* The sink refuses what the replay would refuse, and leaves the buffer as it was. */
static void test_sink_refuses(void)
{
    rk_recbuf rb;
    rk_error err;
    rk_recbuf_init(&rb);
    const int32_t user[2] = {1, 2}, ok_len[2] = {1, 2}, bad_len[2] = {1, 3}, neg_len[2] = {-1, 0};
    const int32_t item[4] = {0};
    const uint64_t score[4] = {0};
    rk_topn_batch good = {0, 2, user, 2, ok_len, item, score};
    CU_ASSERT_FATAL(rk_recbuf_sink(&rb, &good, &err) == RK_OK);
    const size_t bytes = rb.bytes;
    const rk_topn_batch bad[] = {
        {2, 2, user, 2, bad_len, item, score}, {2, 2, user, 2, neg_len, item, score},
        {2, -1, user, 2, ok_len, item, score}, {2, 2, user, 0, ok_len, item, score},
        {-1, 2, user, 2, ok_len, item, score}, {2, 2, NULL, 2, ok_len, item, score},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        CU_ASSERT_EQUAL(rk_recbuf_sink(&rb, &bad[k], &err), RK_E_INTERNAL);
        CU_ASSERT_EQUAL(rb.bytes, bytes);
        CU_ASSERT_EQUAL(rb.users, 2);
    }
    recorder back;
    rec_init(&back, 1);
    CU_ASSERT_EQUAL(rk_recbuf_replay(rb.data, rb.bytes, 0, rec_sink, &back, &err), RK_OK);
    CU_ASSERT_EQUAL(back.nb, 1);
    rec_free(&back);
    rk_recbuf_free(&rb);
}

static void test_empty(void)
{
    rk_recbuf rb;
    rk_error err;
    recorder back;
    memset(&rb, 0xab, sizeof rb);
    rk_recbuf_init(&rb);
    CU_ASSERT(rb.data == NULL && rb.bytes == 0 && rb.cap == 0 && rb.users == 0);
    rec_init(&back, 1);
    CU_ASSERT_EQUAL(rk_recbuf_replay(rb.data, rb.bytes, 5, rec_sink, &back, &err), RK_OK);
    const unsigned char one = 0;
    CU_ASSERT_EQUAL(rk_recbuf_replay(&one, 0, 0, rec_sink, &back, &err), RK_OK);
    CU_ASSERT_EQUAL(back.calls, 0);
    rec_free(&back);
    rk_recbuf_free(&rb);
}

/* ---- rk_topn_cpu through the buffer --------------------------------------------------- */

static void make_lists(const rk_model *m, int k, rk_lists *l)
{
    rk_knn_opts o;
    rk_error err;
    rk_knn_opts_default(&o);
    o.k = k;
    CU_ASSERT_FATAL(rk_lists_alloc(l, m->by_item.n_rows, k, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_knn_cpu(m, &o, l, NULL, NULL, &err) == RK_OK);
}

static void test_topn(void)
{
    rk_model m;
    rk_lists l;
    rk_error err;
    make_model(&m, 60, 40, 0.15, VAL_HALF, 31);
    make_lists(&m, 6, &l);
    const int32_t ns[] = {1, 5, 100};
    for (size_t k = 0; k < sizeof ns / sizeof *ns; k++) {
        /* the engine leaves cells past len unset: compare the lists only */
        recorder direct, back;
        rk_recbuf rb;
        rk_topn_opts o;
        rec_init(&direct, 0);
        rec_init(&back, 0);
        rk_recbuf_init(&rb);
        memset(&o, 0, sizeof o);
        o.n = ns[k];
        o.batch = 7;
        o.threads = 2;
        o.sink = rec_sink;
        o.sink_ud = &direct;
        CU_ASSERT_FATAL(rk_topn_cpu(&m, &l, &o, NULL, &err) == RK_OK);
        o.sink = rk_recbuf_sink;
        o.sink_ud = &rb;
        CU_ASSERT_FATAL(rk_topn_cpu(&m, &l, &o, NULL, &err) == RK_OK);
        CU_ASSERT_FATAL(rk_recbuf_replay(rb.data, rb.bytes, 0, rec_sink, &back, &err) == RK_OK);
        CU_ASSERT(direct.nb >= 8); /* several batches of 7 */
        CU_ASSERT_EQUAL(rb.users, direct.nb > 0 ? direct.b[direct.nb - 1].first + direct.b[direct.nb - 1].count : 0);
        int64_t rows = 0;
        for (int64_t i = 0; i < direct.nb; i++)
            for (int64_t x = 0; x < direct.b[i].count; x++) rows += direct.b[i].len[x];
        CU_ASSERT(rows > 0);
        CU_ASSERT_EQUAL(rec_diff(&direct, &back, 0), 0);
        rec_free(&direct);
        rec_free(&back);
        rk_recbuf_free(&rb);
    }
    rk_lists_free(&l);
    rk_model_free(&m);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"random batches round trip, every field and cell, shifted", test_round_trip},
        {"buffers appended replay in turn", test_append},
        {"geometric growth", test_growth},
        {"the sink's status stops the replay", test_sink_error},
        {"every truncation", test_truncated},
        {"corrupt headers and lengths, misaligned data", test_corrupt},
        {"the sink refuses what the replay would", test_sink_refuses},
        {"an empty buffer", test_empty},
        {"rk_topn_cpu through the buffer", test_topn},
        {NULL, NULL},
    };
    return rk_test_main("recbuf", cases);
}
