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

#ifdef __cplusplus
}
#endif
#endif /* RK_RECSTREAM_H */
