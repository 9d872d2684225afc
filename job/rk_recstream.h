/* rk_recstream.h — top-N batches handed from the threads that compute them
 * to the one that writes (prefix rk_recstream_).
 *
 * When several GPUs of one process compute the recommendations of
 * consecutive ranges of the request, each appends its batches to a stream of
 * its own (an rk_recbuf behind a lock) while one thread drains the streams in
 * order into the real sink: the first range's batches are written while the
 * later ranges are still computed, and each later range's as soon as the
 * writer reaches it, without waiting for every GPU to finish.  The writer
 * receives exactly the batches, in exactly the order, of one engine call.
 * The records stay in the buffer after they are drained (a rank other than 0
 * sends the whole buffer to rank 0 as it is).
 */
#ifndef RK_RECSTREAM_H
#define RK_RECSTREAM_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "rk_recbuf.h"
#include "rk_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rk_recstream {
    rk_recbuf buf;       /* every record appended; read buf alone once closed */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int closed;          /* the producer has finished (whatever its status) */
    int ready;           /* mu and cv were made */
} rk_recstream;

/*! rk_recstream_init() : an empty, open stream.  @return RK_OK, RK_E_NOMEM
 *  (no lock could be made). */
rk_status rk_recstream_init(rk_recstream *s, rk_error *err);

/*! rk_recstream_sink() : the producer's rk_topn_sink (ud = the stream):
 *  appends the batch and wakes the reader.  @return as rk_recbuf_sink. */
rk_status rk_recstream_sink(void *ud, const rk_topn_batch *b, rk_error *err);

/*! rk_recstream_users() : the users appended so far (where a producer that
 *  failed mid-way takes up its range again). */
int64_t rk_recstream_users(rk_recstream *s);

/*! rk_recstream_close() : the producer is done; the reader drains the rest
 *  and returns.  Every producer closes its stream, failing or not. */
void rk_recstream_close(rk_recstream *s);

/*! rk_recstream_drain() : the reader: replays the records into sink, with
 *  shift added to each batch's position, as they arrive, until the stream is
 *  closed and empty.  @return RK_OK, RK_E_NOMEM, or the replay's status (the
 *  reader then stops reading; the producer is never made to wait). */
rk_status rk_recstream_drain(rk_recstream *s, int64_t shift, rk_topn_sink sink, void *ud, rk_error *err);

/*! rk_recstream_free() : the buffer and the lock (an initialised or zeroed
 *  stream; no thread may be using it). */
void rk_recstream_free(rk_recstream *s);

/* ---- a request cut into chunks, dealt out among producers ----------------
 * The request's positions are cut into n consecutive chunks, chunk c holding
 * positions at[c] .. at[c+1]; producer w of P computes chunks w, w + P,
 * w + 2P, ... one after the other (its own request: their users in that
 * order), and its route hands each batch, split where a chunk ends, to the
 * chunk's stream with the batch's position in the whole request.  The
 * reader drains the chunks in order, so that the producers' chunks
 * alternate in the writing: every producer's batches are written while they
 * all still compute, and what is left for the writer when the last producer
 * ends is about one chunk, not one producer's whole range. */
typedef struct rk_recset {
    rk_recstream *s;     /* n streams, one a chunk */
    int64_t *at;         /* n + 1 positions; all 0 until set */
    int n;
    int failed;          /* a producer failed: the reader stops (atomic) */
    double busy_s, wall_s; /* rk_recset_drain: in the sink, and in all */
} rk_recset;

/*! rk_recset_init() : n >= 1 empty, open chunks, each of no position.
 *  @return RK_OK, RK_E_NOMEM. */
rk_status rk_recset_init(rk_recset *set, int n, rk_error *err);

/*! rk_recset_drain() : every chunk in turn into sink (rk_recstream_drain,
 *  shift 0), until the last is closed and drained, or a producer has failed
 *  (its status is the caller's to report).  @return as rk_recstream_drain. */
rk_status rk_recset_drain(rk_recset *set, rk_topn_sink sink, void *ud, rk_error *err);

/*! rk_recset_free() : every stream and the positions (a zeroed set too). */
void rk_recset_free(rk_recset *set);

typedef struct rk_recroute {
    rk_recset *set;
    int first, step;     /* its chunks: first, first + step, ... below set->n */
    int cur;             /* the chunk being filled (>= set->n: none left) */
    int64_t cur_lo;      /* the producer's own position where cur starts */
    int64_t skip;        /* its positions before the current call's first */
    int64_t done;        /* its positions handed on so far */
} rk_recroute;

/*! rk_recroute_init() : producer first of step (0 <= first < step) on set,
 *  from its first position; the set's positions must be final before the
 *  first batch. */
void rk_recroute_init(rk_recroute *r, rk_recset *set, int first, int step);

/*! rk_recroute_users() : the producer's own users in its order: chunk after
 *  chunk, request[at[c] .. at[c+1]).  out holds rk_recroute_count() entries. */
int64_t rk_recroute_count(const rk_recroute *r);
void rk_recroute_users(const rk_recroute *r, const int32_t *request, int32_t *out);

/*! rk_recroute_resume() : the producer's next call starts at its position
 *  done (its own request from there): batches' first are counted from it. */
void rk_recroute_resume(rk_recroute *r, int64_t done);

/*! rk_recroute_sink() : an rk_topn_sink (ud = the route): the batch split
 *  across the producer's chunks, each piece to its chunk's stream; a chunk
 *  is closed as soon as it is full.  @return as rk_recstream_sink,
 *  RK_E_INTERNAL (a batch before the current chunk or past the last). */
rk_status rk_recroute_sink(void *ud, const rk_topn_batch *b, rk_error *err);

/*! rk_recroute_close() : the producer is done (ok: it succeeded): each of
 *  its chunks not yet closed is; a failure stops the reader. */
void rk_recroute_close(rk_recroute *r, int ok);

#ifdef __cplusplus
}
#endif
#endif /* RK_RECSTREAM_H */
