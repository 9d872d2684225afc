/* rk_recbuf.h — top-N batches held for later (prefix rk_recbuf_).
 *
 * When several workers (GPUs of one process, or MPI ranks) compute the
 * recommendations of consecutive ranges of the request, only the first can
 * hand its batches to the real sink (the file and the ranking metrics) as
 * they come; the others keep theirs here, in one flat byte buffer that can be
 * sent over MPI as it is, and replay them into the sink afterwards, in
 * order, with each batch's position shifted to the whole request's.  The
 * bytes are those of the batches (user, lengths, items, fixed-point scores):
 * replaying gives the sink exactly what it would have received directly.
 *
 * Layout (host byte order; both ends of an MPI run are one build): a
 * sequence of records, each a header {int64 first, int64 count, int32 n,
 * int32 pad} followed by count user, count len, count*n item (int32 each)
 * and count*n score (uint64), every part 8-byte aligned; the cells past a
 * list's length are zero (the engines leave them unwritten).
 */
#ifndef RK_RECBUF_H
#define RK_RECBUF_H

#include <stddef.h>
#include <stdint.h>
#include "rk_status.h"
#include "rk_topn.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rk_recbuf {
    unsigned char *data; /* the records; owned */
    size_t bytes;        /* bytes used */
    size_t cap;          /* bytes allocated */
    int64_t users;       /* users held (Σ count) */
} rk_recbuf;

/*! rk_recbuf_init() : an empty buffer (no allocation). */
void rk_recbuf_init(rk_recbuf *b);

/*! rk_recbuf_sink() : append a batch (fits rk_topn_sink; ud = the
 *  rk_recbuf); on failure the buffer is unchanged.  A batch that replay
 *  would refuse (count < 0, n < 1, first < 0, a len outside 0..n) is
 *  RK_E_INTERNAL.  @return RK_OK, RK_E_NOMEM, RK_E_INTERNAL. */
rk_status rk_recbuf_sink(void *ud, const rk_topn_batch *b, rk_error *err);

/*! rk_recbuf_append() : src's records after dst's (records concatenate:
 *  replaying dst then gives dst's batches, then src's).
 *  @return RK_OK, RK_E_NOMEM (dst unchanged). */
rk_status rk_recbuf_append(rk_recbuf *dst, const rk_recbuf *src, rk_error *err);

/*! rk_recbuf_replay() : hand every record of data[0..bytes) to sink, in
 *  order, with first + shift as each batch's position.  The bytes may come
 *  from another process (rk_recbuf.data sent as is); a record that does not
 *  fit in them is RK_E_INTERNAL.  @return RK_OK, RK_E_INTERNAL, or the
 *  sink's status. */
rk_status rk_recbuf_replay(const unsigned char *data, size_t bytes, int64_t shift, rk_topn_sink sink, void *ud,
                           rk_error *err);

/*! rk_recbuf_free() : free the records and make b empty again (NULL and
 *  initialised are fine). */
void rk_recbuf_free(rk_recbuf *b);

#ifdef __cplusplus
}
#endif
#endif /* RK_RECBUF_H */
