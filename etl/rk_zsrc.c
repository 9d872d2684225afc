/* Compressed rating files through zlib and libzstd (rk_zsrc.h). */
#define _POSIX_C_SOURCE 200809L
#include "rk_zsrc.h"
#include "rk_omp.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#define IN_CHUNK ((size_t)4 << 20)   /* compressed bytes read at a time */
#define OUT_CHUNK ((size_t)4 << 20)  /* decoded bytes written at a time */
#define BATCH_BYTES ((size_t)256 << 20) /* decoded bytes of one parallel batch of zstd frames, about */

/* A decoded piece waiting for the loader. */
typedef struct piece {
    unsigned char *p;
    size_t len, pos;  /* p[pos, len) not yet read */
} piece;

#define QUEUE_MAX 64                   /* pieces waiting at most */
#define QUEUE_BYTES ((size_t)512 << 20) /* decoded bytes waiting at most: decoding runs ahead of parsing */

struct rk_zsrc {
    int in_fd, kind, threads;
    const char *name;
    pthread_t th;
    int started;
    rk_status status;      /* the decoder's */
    rk_error err;
    pthread_mutex_t mu;
    pthread_cond_t cv;     /* a piece came, one went, or the end */
    piece q[QUEUE_MAX];
    int head, count;
    size_t queued;         /* bytes in the queue */
    size_t ahead;          /* decoded bytes waiting at most (rk_zsrc_open) */
    int done;              /* the decoder has finished (or failed) */
    int stopped;           /* the loader went away: the decoder stops */
};

int rk_zsrc_kind(const unsigned char *p, size_t n)
{
    if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b) return RK_ZSRC_GZIP;
    if (n >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd) return RK_ZSRC_ZSTD;
    return RK_ZSRC_NONE;
}

/* Hand the decoded bytes p[0..n) (malloc'ed; the queue owns them now) to
 * the loader, waiting while the queue is full.  @return 0, or 1 when the
 * loader went away. */
static int give(rk_zsrc *z, unsigned char *p, size_t n)
{
    pthread_mutex_lock(&z->mu);
    while (!z->stopped && (z->count == QUEUE_MAX || (z->count > 0 && z->queued + n > z->ahead)))
        pthread_cond_wait(&z->cv, &z->mu);
    const int stop = z->stopped;
    if (!stop) {
        z->q[(z->head + z->count) % QUEUE_MAX] = (piece){p, n, 0};
        z->count++;
        z->queued += n;
        pthread_cond_broadcast(&z->cv);
    }
    pthread_mutex_unlock(&z->mu);
    if (stop) free(p);
    return stop;
}

/* Up to cap bytes of the compressed file.  @return bytes, 0 at its end, -1. */
static ssize_t take(rk_zsrc *z, void *dst, size_t cap)
{
    for (;;) {
        ssize_t r = read(z->in_fd, dst, cap);
        if (r >= 0) return r;
        if (errno == EINTR) continue;
        z->status = rk_error_set(&z->err, RK_E_IO, "cannot read %s: %s", z->name, strerror(errno));
        return -1;
    }
}

/* gzip (and zlib) streams, member after member. */
static void run_gzip(rk_zsrc *z, unsigned char *in)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, 15 + 32) != Z_OK) {
        z->status = rk_error_set(&z->err, RK_E_NOMEM, "%s: cannot start zlib", z->name);
        return;
    }
    long long consumed = 0;
    int ended = 1; /* at a member boundary: the file may end here */
    for (;;) {
        if (zs.avail_in == 0) {
            ssize_t r = take(z, in, IN_CHUNK);
            if (r < 0) break;
            if (r == 0) {
                if (!ended)
                    z->status = rk_error_set(&z->err, RK_E_PARSE, "%s: the gzip data end early (a truncated "
                                             "file?)", z->name);
                break;
            }
            zs.next_in = in;
            zs.avail_in = (uInt)r;
        }
        unsigned char *out = malloc(OUT_CHUNK); /* decoded in place: the queue takes the piece */
        if (out == NULL) {
            z->status = rk_error_set(&z->err, RK_E_NOMEM, "%s: out of memory decoding", z->name);
            break;
        }
        zs.next_out = out;
        zs.avail_out = (uInt)OUT_CHUNK;
        const uInt before = zs.avail_in;
        const int rc = inflate(&zs, Z_NO_FLUSH);
        consumed += before - zs.avail_in;
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
            free(out);
            z->status = rk_error_set(&z->err, RK_E_PARSE, "%s: corrupt gzip data near compressed byte %lld (%s)",
                                     z->name, consumed, zs.msg != NULL ? zs.msg : "zlib error");
            break;
        }
        ended = 0;
        const size_t made = OUT_CHUNK - zs.avail_out;
        if (made == 0) free(out);
        else if (give(z, out, made) != 0) break;
        if (rc == Z_STREAM_END) { /* another member may follow */
            ended = 1;
            inflateReset(&zs);
        }
    }
    inflateEnd(&zs);
}

/* One zstd stream (a pipe, or one large frame), frame after frame. */
static void run_zstd_stream(rk_zsrc *z, unsigned char *in)
{
    ZSTD_DStream *ds = ZSTD_createDStream();
    if (ds == NULL) {
        z->status = rk_error_set(&z->err, RK_E_NOMEM, "%s: cannot start libzstd", z->name);
        return;
    }
    ZSTD_inBuffer ib = {in, 0, 0};
    long long consumed = 0;
    size_t hint = 0; /* 0: at a frame boundary */
    for (;;) {
        if (ib.pos == ib.size) {
            ssize_t r = take(z, in, IN_CHUNK);
            if (r < 0) break;
            if (r == 0) {
                if (hint != 0)
                    z->status = rk_error_set(&z->err, RK_E_PARSE, "%s: the zstd data end early (a truncated "
                                             "file?)", z->name);
                break;
            }
            consumed += (long long)ib.size;
            ib.size = (size_t)r;
            ib.pos = 0;
        }
        unsigned char *out = malloc(OUT_CHUNK);
        if (out == NULL) {
            z->status = rk_error_set(&z->err, RK_E_NOMEM, "%s: out of memory decoding", z->name);
            break;
        }
        ZSTD_outBuffer ob = {out, OUT_CHUNK, 0};
        hint = ZSTD_decompressStream(ds, &ob, &ib);
        if (ZSTD_isError(hint)) {
            free(out);
            z->status = rk_error_set(&z->err, RK_E_PARSE, "%s: corrupt zstd data near compressed byte %lld (%s)",
                                     z->name, consumed + (long long)ib.pos, ZSTD_getErrorName(hint));
            break;
        }
        if (ob.pos == 0) free(out);
        else if (give(z, out, ob.pos) != 0) break;
    }
    ZSTD_freeDStream(ds);
}

/* A frame of a mapped zstd file: where it is, its decoded size, and where
 * its bytes go in the batch that decodes it. */
typedef struct frame {
    size_t off, clen, at;
    unsigned long long dlen;
} frame;

/* The frames of b[0..n) into *out (malloc'ed).  @return their number, or 0
 * when a frame does not record its decoded size, the bytes are not frames,
 * or memory ran out (then the file is streamed: the streaming decoder says
 * what is wrong, or copes). */
static size_t find_frames(const unsigned char *b, size_t n, frame **out)
{
    size_t cap = 1024, nf = 0;
    frame *f = malloc(cap * sizeof *f);
    for (size_t at = 0; at < n && f != NULL;) {
        const size_t c = ZSTD_findFrameCompressedSize(b + at, n - at);
        const unsigned long long d = ZSTD_isError(c) ? ZSTD_CONTENTSIZE_ERROR : ZSTD_getFrameContentSize(b + at, c);
        if (d == ZSTD_CONTENTSIZE_UNKNOWN || d == ZSTD_CONTENTSIZE_ERROR) break;
        if (nf == cap) {
            frame *g = realloc(f, (cap *= 2) * sizeof *f);
            if (g == NULL) break;
            f = g;
        }
        f[nf++] = (frame){at, c, 0, d};
        at += c;
        if (at == n) {
            *out = f;
            return nf;
        }
    }
    free(f);
    return 0;
}

/* Frames of a mapped zstd file in batches of about BATCH_BYTES decoded,
 * each batch's frames decoded in parallel, handed on in order.  @return 0,
 * or 1 when the file is not such frames (stream it instead). */
static int run_zstd_frames(rk_zsrc *z, const unsigned char *b, size_t n)
{
    frame *fr = NULL;
    size_t nf = find_frames(b, n, &fr), batch = BATCH_BYTES < z->ahead / 2 ? BATCH_BYTES : z->ahead / 2;
    for (size_t f = 0; f < nf; f++)
        if (fr[f].dlen > batch) nf = 0; /* a frame past the batch: streamed, in pieces */
    if (nf < 2) {
        free(fr);
        return 1;
    }
    for (size_t f0 = 0; f0 < nf && z->status == RK_OK && !z->stopped;) {
        size_t f1 = f0, bytes = 0;
        for (; f1 < nf && (f1 == f0 || bytes + fr[f1].dlen <= batch); f1++) {
            fr[f1].at = bytes;
            bytes += fr[f1].dlen;
        }
        unsigned char *dst = malloc(bytes > 0 ? bytes : 1);
        if (dst == NULL) {
            z->status = rk_error_set(&z->err, RK_E_NOMEM, "%s: out of memory decoding %zu bytes", z->name, bytes);
            break;
        }
        int bad = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(z->threads) reduction(| : bad) if (f1 - f0 > 1)
        for (size_t f = f0; f < f1; f++) {
            const size_t got = ZSTD_decompress(dst + fr[f].at, fr[f].dlen, b + fr[f].off, fr[f].clen);
            bad |= ZSTD_isError(got) || got != fr[f].dlen;
        }
        if (bad) {
            free(dst);
            z->status = rk_error_set(&z->err, RK_E_PARSE, "%s: corrupt zstd data in the frames from compressed "
                                     "byte %zu", z->name, fr[f0].off);
            break;
        }
        give(z, dst, bytes); /* the queue owns dst now */
        f0 = f1;
    }
    free(fr);
    return 0;
}

static void *decoder(void *arg)
{
    rk_zsrc *z = arg;
    unsigned char *in = malloc(IN_CHUNK);
    struct stat sb;
    if (in == NULL) {
        z->status = rk_error_set(&z->err, RK_E_NOMEM, "%s: out of memory decoding", z->name);
    } else if (z->kind == RK_ZSRC_GZIP) {
        run_gzip(z, in);
    } else {
        int streamed = 1;
        if (fstat(z->in_fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0) {
            void *m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, z->in_fd, 0);
            if (m != MAP_FAILED) {
                streamed = run_zstd_frames(z, m, (size_t)sb.st_size);
                munmap(m, (size_t)sb.st_size);
            }
        }
        if (streamed && z->status == RK_OK && !z->stopped) run_zstd_stream(z, in);
    }
    free(in);
    pthread_mutex_lock(&z->mu);
    z->done = 1;
    pthread_cond_broadcast(&z->cv);
    pthread_mutex_unlock(&z->mu);
    return NULL;
}

long rk_zsrc_pull(void *ud, void *dst, size_t cap)
{
    rk_zsrc *z = ud;
    size_t got = 0;
    pthread_mutex_lock(&z->mu);
    while (z->count == 0 && !z->done) pthread_cond_wait(&z->cv, &z->mu);
    while (got < cap && z->count > 0) { /* what is there, without waiting for more */
        piece *pc = &z->q[z->head];
        size_t n = pc->len - pc->pos < cap - got ? pc->len - pc->pos : cap - got;
        memcpy((char *)dst + got, pc->p + pc->pos, n);
        got += n;
        pc->pos += n;
        z->queued -= n;
        if (pc->pos == pc->len) {
            free(pc->p);
            z->head = (z->head + 1) % QUEUE_MAX;
            z->count--;
            pthread_cond_broadcast(&z->cv);
        }
    }
    pthread_mutex_unlock(&z->mu);
    return (long)got; /* 0: the end (the decoder's status tells how it ended) */
}

size_t rk_zsrc_held_max(size_t ahead)
{
    const size_t a = ahead > 0 ? ahead : QUEUE_BYTES;
    return a + a / 2 + IN_CHUNK + 2 * OUT_CHUNK; /* the queue, a batch, the input, a piece decoding and one over */
}

rk_status rk_zsrc_open(int fd, int kind, const char *name, int threads, size_t ahead, rk_zsrc **zp, rk_error *err)
{
    *zp = NULL;
    rk_zsrc *z = calloc(1, sizeof *z);
    if (z == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory opening %s", name);
    z->in_fd = fd;
    z->kind = kind;
    z->threads = threads > 0 ? threads : 1;
    z->ahead = ahead > 0 ? ahead : QUEUE_BYTES;
    z->name = name;
    if (lseek(fd, 0, SEEK_SET) < 0 && errno != ESPIPE) {
        free(z);
        return rk_error_set(err, RK_E_IO, "cannot read %s: %s", name, strerror(errno));
    }
    pthread_mutex_init(&z->mu, NULL);
    pthread_cond_init(&z->cv, NULL);
    if (pthread_create(&z->th, NULL, decoder, z) != 0) {
        pthread_mutex_destroy(&z->mu);
        pthread_cond_destroy(&z->cv);
        free(z);
        return rk_error_set(err, RK_E_NOMEM, "cannot start the decoder of %s", name);
    }
    z->started = 1;
    *zp = z;
    return RK_OK;
}

rk_status rk_zsrc_close(rk_zsrc *z, rk_error *err)
{
    if (z == NULL) return RK_OK;
    pthread_mutex_lock(&z->mu);
    z->stopped = 1; /* a decoder still running ends at its next piece */
    pthread_cond_broadcast(&z->cv);
    pthread_mutex_unlock(&z->mu);
    if (z->started) pthread_join(z->th, NULL);
    for (int i = 0; i < z->count; i++) free(z->q[(z->head + i) % QUEUE_MAX].p);
    rk_status s = z->status;
    if (s != RK_OK && err != NULL) *err = z->err;
    pthread_mutex_destroy(&z->mu);
    pthread_cond_destroy(&z->cv);
    free(z);
    return s;
}
