/* Top-N batches from the threads that compute them to the one that writes
 * (rk_recstream.h).  The reader copies each run of new records out under the
 * lock (the producer's next append may move the buffer) and replays the copy
 * without it, so that formatting never holds up the GPU's batches. */
#include "rk_recstream.h"

#include <stdlib.h>
#include <string.h>

rk_status rk_recstream_init(rk_recstream *s, rk_error *err)
{
    memset(s, 0, sizeof *s);
    rk_recbuf_init(&s->buf);
    if (pthread_mutex_init(&s->mu, NULL) != 0) return rk_error_set(err, RK_E_NOMEM, "no lock for a top-N stream");
    if (pthread_cond_init(&s->cv, NULL) != 0) {
        pthread_mutex_destroy(&s->mu);
        return rk_error_set(err, RK_E_NOMEM, "no condition for a top-N stream");
    }
    s->ready = 1;
    return RK_OK;
}

rk_status rk_recstream_sink(void *ud, const rk_topn_batch *b, rk_error *err)
{
    rk_recstream *s = ud;
    pthread_mutex_lock(&s->mu);
    const rk_status st = rk_recbuf_sink(&s->buf, b, err);
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return st;
}

int64_t rk_recstream_users(rk_recstream *s)
{
    pthread_mutex_lock(&s->mu);
    const int64_t n = s->buf.users;
    pthread_mutex_unlock(&s->mu);
    return n;
}

void rk_recstream_close(rk_recstream *s)
{
    pthread_mutex_lock(&s->mu);
    s->closed = 1;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

rk_status rk_recstream_drain(rk_recstream *s, int64_t shift, rk_topn_sink sink, void *ud, rk_error *err)
{
    unsigned char *copy = NULL;
    size_t cap = 0, taken = 0;
    rk_status st = RK_OK;
    for (;;) {
        pthread_mutex_lock(&s->mu);
        while (s->buf.bytes == taken && !s->closed) pthread_cond_wait(&s->cv, &s->mu);
        const size_t n = s->buf.bytes - taken;
        if (n == 0) { /* closed, and nothing new */
            pthread_mutex_unlock(&s->mu);
            break;
        }
        if (n > cap) {
            unsigned char *p = realloc(copy, n); /* malloc's alignment: replay's 8 bytes */
            if (p == NULL) {
                pthread_mutex_unlock(&s->mu);
                st = rk_error_set(err, RK_E_NOMEM, "out of memory for %zu bytes of top-N records", n);
                break;
            }
            copy = p;
            cap = n;
        }
        memcpy(copy, s->buf.data + taken, n);
        taken += n;
        pthread_mutex_unlock(&s->mu);
        if ((st = rk_recbuf_replay(copy, n, shift, sink, ud, err)) != RK_OK) break;
    }
    free(copy);
    return st;
}

void rk_recstream_free(rk_recstream *s)
{
    if (s == NULL) return;
    rk_recbuf_free(&s->buf);
    if (s->ready) {
        pthread_mutex_destroy(&s->mu);
        pthread_cond_destroy(&s->cv);
    }
    s->ready = 0;
}
