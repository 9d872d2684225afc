/* Top-N batches from the threads that compute them to the one that writes
 * (rk_recstream.h).  The reader copies each run of new records out under the
 * lock (the producer's next append may move the buffer) and replays the copy
 * without it, so that formatting never holds up the GPU's batches. */
#include "rk_recstream.h"
#include "rk_omp.h"

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

/* ---- chunks dealt out among producers ------------------------------------ */

rk_status rk_recset_init(rk_recset *set, int n, rk_error *err)
{
    memset(set, 0, sizeof *set);
    if (n < 1) return rk_error_set(err, RK_E_INTERNAL, "%d top-N chunks", n);
    set->s = calloc((size_t)n, sizeof *set->s);
    set->at = calloc((size_t)n + 1, sizeof *set->at);
    if (set->s == NULL || set->at == NULL) {
        rk_recset_free(set);
        return rk_error_set(err, RK_E_NOMEM, "out of memory for %d top-N chunks", n);
    }
    set->n = n;
    for (int c = 0; c < n; c++) {
        const rk_status st = rk_recstream_init(&set->s[c], err);
        if (st != RK_OK) {
            rk_recset_free(set);
            return st;
        }
    }
    return RK_OK;
}

/* The sink timed: how much of the drain the writing takes. */
typedef struct timed {
    rk_topn_sink sink;
    void *ud;
    double busy;
} timed;

static rk_status timed_sink(void *ud, const rk_topn_batch *b, rk_error *err)
{
    timed *t = ud;
    const double t0 = rk_omp_wtime();
    const rk_status s = t->sink(t->ud, b, err);
    t->busy += rk_omp_wtime() - t0;
    return s;
}

rk_status rk_recset_drain(rk_recset *set, rk_topn_sink sink, void *ud, rk_error *err)
{
    timed t = {sink, ud, 0.0};
    const double t0 = rk_omp_wtime();
    rk_status s = RK_OK;
    for (int c = 0; s == RK_OK && c < set->n && !__atomic_load_n(&set->failed, __ATOMIC_ACQUIRE); c++)
        s = rk_recstream_drain(&set->s[c], 0, timed_sink, &t, err);
    set->busy_s = t.busy;
    set->wall_s = rk_omp_wtime() - t0;
    return s;
}

void rk_recset_free(rk_recset *set)
{
    if (set == NULL) return;
    for (int c = 0; set->s != NULL && c < set->n; c++) rk_recstream_free(&set->s[c]);
    free(set->s);
    free(set->at);
    memset(set, 0, sizeof *set);
}

void rk_recroute_init(rk_recroute *r, rk_recset *set, int first, int step)
{
    *r = (rk_recroute){set, first, step > 0 ? step : 1, first, 0, 0, 0};
}

int64_t rk_recroute_count(const rk_recroute *r)
{
    int64_t n = 0;
    for (int c = r->first; c < r->set->n; c += r->step) n += r->set->at[c + 1] - r->set->at[c];
    return n;
}

void rk_recroute_users(const rk_recroute *r, const int32_t *request, int32_t *out)
{
    for (int c = r->first; c < r->set->n; c += r->step) {
        const int64_t n = r->set->at[c + 1] - r->set->at[c];
        if (n > 0) memcpy(out, request + r->set->at[c], (size_t)n * sizeof *out);
        out += n;
    }
}

void rk_recroute_resume(rk_recroute *r, int64_t done)
{
    r->skip = done;
}

/* Past every chunk that ends at or before the producer's position pos: each closed. */
static void pass_full(rk_recroute *r, int64_t pos)
{
    const rk_recset *set = r->set;
    while (r->cur < set->n && pos >= r->cur_lo + (set->at[r->cur + 1] - set->at[r->cur])) {
        rk_recstream_close(&set->s[r->cur]);
        r->cur_lo += set->at[r->cur + 1] - set->at[r->cur];
        r->cur += r->step;
    }
}

rk_status rk_recroute_sink(void *ud, const rk_topn_batch *b, rk_error *err)
{
    rk_recroute *r = ud;
    const rk_recset *set = r->set;
    const int64_t pos = r->skip + b->first;
    if (pos < r->cur_lo)
        return rk_error_set(err, RK_E_INTERNAL, "a top-N batch at position %lld before its chunk's %lld",
                            (long long)pos, (long long)r->cur_lo);
    for (int64_t off = 0; off < b->count;) {
        pass_full(r, pos + off);
        if (r->cur >= set->n)
            return rk_error_set(err, RK_E_INTERNAL, "a top-N batch at position %lld past its producer's chunks",
                                (long long)(pos + off));
        const int64_t end = r->cur_lo + (set->at[r->cur + 1] - set->at[r->cur]);
        const int64_t take = b->count - off < end - (pos + off) ? b->count - off : end - (pos + off);
        const size_t cells = (size_t)off * (size_t)(b->n > 0 ? b->n : 0);
        rk_topn_batch piece = *b;
        piece.first = set->at[r->cur] + (pos + off - r->cur_lo);
        piece.count = take;
        piece.user = b->user != NULL ? b->user + off : NULL;
        piece.len = b->len != NULL ? b->len + off : NULL;
        piece.item = b->item != NULL ? b->item + cells : NULL;
        piece.score = b->score != NULL ? b->score + cells : NULL;
        RK_FORWARD(rk_recstream_sink(&set->s[r->cur], &piece, err));
        off += take;
    }
    r->done = pos + b->count;
    pass_full(r, r->done); /* a full chunk goes to the writer now, not at the next batch */
    return RK_OK;
}

void rk_recroute_close(rk_recroute *r, int ok)
{
    if (r->set == NULL) return;
    if (!ok) __atomic_store_n(&r->set->failed, 1, __ATOMIC_RELEASE); /* before the closes that wake the reader */
    for (int c = r->cur; c < r->set->n; c += r->step) rk_recstream_close(&r->set->s[c]);
    r->cur = r->set->n;
}
