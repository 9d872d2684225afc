/* Top-N batches held for later (rk_recbuf.h).
 *
 * A record is a 24-byte header {int64 first, int64 count, int32 n, int32 pad}
 * and four parts, each starting 8-byte aligned: count user, count len,
 * count*n item (int32) and count*n score (uint64).  The sink and the replay
 * accept the same records: count >= 0, n >= 1, first >= 0, every len in
 * 0..n, pad 0, so that what one writes the other gives back.
 */
#include "rk_recbuf.h"

#include <stdlib.h>
#include <string.h>

#define HEADER_BYTES 24
#define ALIGN 8

/* A record's parts: byte offsets from the record's start, and its size. */
typedef struct layout {
    size_t user, len, item, score, end;
} layout;

static size_t pad8(size_t x)
{
    return (x + (ALIGN - 1)) & ~(size_t)(ALIGN - 1);
}

/* The layout of a record of count users with lists of capacity n (count >= 0,
 * n >= 1).  With count and count*n at most SIZE_MAX / 64 the sizes cannot
 * overflow: the record is at most 24 + 2 (4 count + 7) + 12 count n + 7
 * bytes.  @return 0, or -1 when the record is too large for size_t. */
static int record_layout(int64_t count, int32_t n, layout *o)
{
    const uint64_t lim = (uint64_t)(SIZE_MAX / 64);
    const uint64_t c = (uint64_t)count, w = (uint64_t)n;
    if (c > lim || (c > 0 && w > lim / c)) return -1;
    const size_t users = (size_t)c, cells = (size_t)(c * w);
    o->user = HEADER_BYTES;
    o->len = o->user + pad8(users * sizeof(int32_t));
    o->item = o->len + pad8(users * sizeof(int32_t));
    o->score = o->item + pad8(cells * sizeof(int32_t));
    o->end = o->score + cells * sizeof(uint64_t);
    return 0;
}

/* The checks shared by the sink and the replay, on a batch's scalars. */
static rk_status check_shape(int64_t first, int64_t count, int32_t n, const char *what, size_t at, rk_error *err)
{
    if (count < 0)
        return rk_error_set(err, RK_E_INTERNAL, "%s at byte %zu: a batch of %lld users", what, at, (long long)count);
    if (n < 1) return rk_error_set(err, RK_E_INTERNAL, "%s at byte %zu: lists of capacity %d", what, at, (int)n);
    if (first < 0)
        return rk_error_set(err, RK_E_INTERNAL, "%s at byte %zu: a batch at position %lld", what, at,
                            (long long)first);
    return RK_OK;
}

static rk_status check_lens(const int32_t *len, int64_t count, int32_t n, const char *what, size_t at,
                            rk_error *err)
{
    for (int64_t x = 0; x < count; x++)
        if (len[x] < 0 || len[x] > n)
            return rk_error_set(err, RK_E_INTERNAL, "%s at byte %zu: user %lld of the batch has a list of %d of %d",
                                what, at, (long long)x, (int)len[x], (int)n);
    return RK_OK;
}

void rk_recbuf_init(rk_recbuf *b)
{
    b->data = NULL;
    b->bytes = 0;
    b->cap = 0;
    b->users = 0;
}

/* Room for extra more bytes: the capacity at least doubles, so n appends
 * cost O(log) reallocations. */
static rk_status reserve(rk_recbuf *b, size_t extra, rk_error *err)
{
    if (extra > SIZE_MAX - b->bytes)
        return rk_error_set(err, RK_E_NOMEM, "top-N buffer of %zu + %zu bytes", b->bytes, extra);
    const size_t need = b->bytes + extra;
    if (need <= b->cap) return RK_OK;
    size_t cap = b->cap > SIZE_MAX / 2 ? SIZE_MAX : 2 * b->cap;
    if (cap < 4096) cap = 4096;
    if (cap < need) cap = need;
    unsigned char *p = realloc(b->data, cap);
    if (p == NULL)
        return rk_error_set(err, RK_E_NOMEM, "out of memory growing the top-N buffer to %zu bytes (%s:%d)", cap,
                            __FILE__, __LINE__);
    b->data = p;
    b->cap = cap;
    return RK_OK;
}

rk_status rk_recbuf_append(rk_recbuf *dst, const rk_recbuf *src, rk_error *err)
{
    if (src->bytes == 0) return RK_OK;
    RK_FORWARD(reserve(dst, src->bytes, err));
    memcpy(dst->data + dst->bytes, src->data, src->bytes);
    dst->bytes += src->bytes;
    dst->users += src->users;
    return RK_OK;
}

rk_status rk_recbuf_sink(void *ud, const rk_topn_batch *bt, rk_error *err)
{
    rk_recbuf *b = ud;
    const char *what = "batch to hold";
    RK_FORWARD(check_shape(bt->first, bt->count, bt->n, what, b->bytes, err));
    layout o;
    if (record_layout(bt->count, bt->n, &o) != 0)
        return rk_error_set(err, RK_E_NOMEM, "a top-N batch of %lld users of %d too large to hold",
                            (long long)bt->count, (int)bt->n);
    const size_t users = (size_t)bt->count, cells = users * (size_t)bt->n;
    if (users > 0 && (bt->user == NULL || bt->len == NULL || bt->item == NULL || bt->score == NULL))
        return rk_error_set(err, RK_E_INTERNAL, "%s at byte %zu: %lld users without arrays", what, b->bytes,
                            (long long)bt->count);
    if (users > 0) RK_FORWARD(check_lens(bt->len, bt->count, bt->n, what, b->bytes, err));
    RK_FORWARD(reserve(b, o.end, err));

    unsigned char *r = b->data + b->bytes;
    memset(r, 0, o.end); /* the padding too: the bytes may be sent as they are */
    const int32_t n = bt->n, pad = 0;
    memcpy(r, &bt->first, sizeof bt->first);
    memcpy(r + 8, &bt->count, sizeof bt->count);
    memcpy(r + 16, &n, sizeof n);
    memcpy(r + 20, &pad, sizeof pad);
    if (users > 0) {
        memcpy(r + o.user, bt->user, users * sizeof *bt->user);
        memcpy(r + o.len, bt->len, users * sizeof *bt->len);
        /* only each list's len cells: the engines leave the rest of a
         * list's n cells unwritten, and the buffer (zeroed above) may be
         * sent to another process as it is */
        (void)cells;
        for (size_t x = 0; x < users; x++) {
            const size_t at = x * (size_t)bt->n, c = (size_t)bt->len[x];
            memcpy(r + o.item + at * sizeof *bt->item, bt->item + at, c * sizeof *bt->item);
            memcpy(r + o.score + at * sizeof *bt->score, bt->score + at, c * sizeof *bt->score);
        }
    }
    b->bytes += o.end;
    b->users += bt->count;
    return RK_OK;
}

rk_status rk_recbuf_replay(const unsigned char *data, size_t bytes, int64_t shift, rk_topn_sink sink, void *ud,
                           rk_error *err)
{
    const char *what = "held top-N record";
    if (bytes == 0) return RK_OK;
    if (data == NULL) return rk_error_set(err, RK_E_INTERNAL, "%zu bytes of held top-N records at NULL", bytes);
    if (sink == NULL) return rk_error_set(err, RK_E_INTERNAL, "held top-N records replayed into no sink");
    if ((uintptr_t)data % ALIGN != 0)
        return rk_error_set(err, RK_E_INTERNAL, "held top-N records at an address not %d-byte aligned", ALIGN);
    size_t at = 0;
    while (at < bytes) {
        const size_t left = bytes - at;
        if (left < HEADER_BYTES)
            return rk_error_set(err, RK_E_INTERNAL, "%s at byte %zu: %zu bytes left, a header needs %d", what, at,
                                left, HEADER_BYTES);
        const unsigned char *r = data + at;
        int64_t first, count;
        int32_t n, pad;
        memcpy(&first, r, sizeof first);
        memcpy(&count, r + 8, sizeof count);
        memcpy(&n, r + 16, sizeof n);
        memcpy(&pad, r + 20, sizeof pad);
        RK_FORWARD(check_shape(first, count, n, what, at, err));
        if (pad != 0) return rk_error_set(err, RK_E_INTERNAL, "%s at byte %zu: padding %d, not 0", what, at, pad);
        if ((shift > 0 && first > INT64_MAX - shift) || (shift < 0 && first < INT64_MIN - shift))
            return rk_error_set(err, RK_E_INTERNAL, "%s at byte %zu: position %lld shifted by %lld overflows", what,
                                at, (long long)first, (long long)shift);
        layout o;
        if (record_layout(count, n, &o) != 0 || o.end > left)
            return rk_error_set(err, RK_E_INTERNAL, "%s at byte %zu: %lld users of %d do not fit in %zu bytes",
                                what, at, (long long)count, (int)n, left);
        /* the parts are 8-byte aligned from an 8-byte aligned start */
        const int32_t *len = (const int32_t *)(const void *)(r + o.len);
        RK_FORWARD(check_lens(len, count, n, what, at, err));
        const rk_topn_batch bt = {first + shift,
                                  count,
                                  (const int32_t *)(const void *)(r + o.user),
                                  n,
                                  len,
                                  (const int32_t *)(const void *)(r + o.item),
                                  (const uint64_t *)(const void *)(r + o.score)};
        RK_FORWARD(sink(ud, &bt, err));
        at += o.end;
    }
    return RK_OK;
}

void rk_recbuf_free(rk_recbuf *b)
{
    if (b == NULL) return;
    free(b->data);
    rk_recbuf_init(b);
}
