/* Compressed rating files through zlib and libzstd (rk_zsrc.h). */
#define _POSIX_C_SOURCE 200809L
#include "rk_zsrc.h"
#include "rk_omp.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
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
#define UNIT_MAX ((size_t)256 << 20)  /* decoded bytes of a frame at most for direct mode */

/* A decoded piece waiting for the loader. */
typedef struct piece {
    unsigned char *p;
    size_t len, pos;  /* p[pos, len) not yet read */
} piece;

/* A unit of a file decoded in place: its compressed bytes, its decoded
 * size, and where its bytes go in the buffer of one rk_zsrc_pull. */
typedef struct unit {
    size_t off, clen, at;
    unsigned long long dlen;
} unit;

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

    /* direct mode (no decoder thread): the file is units whose decoded sizes
     * are known (zstd frames, BGZF blocks); rk_zsrc_pull decodes the units
     * that fit in the loader's buffer in parallel, straight into it */
    int direct;
    const unsigned char *map;
    size_t map_len;
    unit *u;
    size_t nu, next;       /* units; the next one to decode */
    unsigned char *spill;  /* a unit larger than the buffer pull was given */
    size_t spill_len, spill_pos;
};

int rk_zsrc_kind(const unsigned char *p, size_t n)
{
    if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b) return RK_ZSRC_GZIP;
    if (n >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd) return RK_ZSRC_ZSTD;
    /* a skippable frame (pzstd starts with one): 0x184D2A50..5F */
    if (n >= 4 && (p[0] & 0xf0) == 0x50 && p[1] == 0x2a && p[2] == 0x4d && p[3] == 0x18) return RK_ZSRC_ZSTD;
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

/* Append a unit to *u (capacity *cap).  @return 0, or 1 without memory. */
static int add_unit(unit **u, size_t *nu, size_t *cap, unit x)
{
    if (*nu == *cap) {
        size_t c = *cap ? *cap * 2 : 1024;
        unit *g = realloc(*u, c * sizeof *g);
        if (g == NULL) return 1;
        *u = g;
        *cap = c;
    }
    (*u)[(*nu)++] = x;
    return 0;
}

/* The frames of a mapped zstd file b[0..n) into *out (malloc'ed).  @return
 * their number, or 0 when a frame does not record its decoded size, the
 * bytes are not frames, or memory ran out (then the file is streamed: the
 * streaming decoder says what is wrong, or copes). */
static size_t find_frames(const unsigned char *b, size_t n, unit **out)
{
    size_t cap = 0, nf = 0;
    unit *f = NULL;
    for (size_t at = 0; at < n;) {
        const size_t c = ZSTD_findFrameCompressedSize(b + at, n - at);
        const unsigned long long d = ZSTD_isError(c) ? ZSTD_CONTENTSIZE_ERROR : ZSTD_getFrameContentSize(b + at, c);
        if (d == ZSTD_CONTENTSIZE_UNKNOWN || d == ZSTD_CONTENTSIZE_ERROR || add_unit(&f, &nf, &cap, (unit){at, c, 0, d}))
            break;
        at += c;
        if (at == n) {
            *out = f;
            return nf;
        }
    }
    free(f);
    return 0;
}

/* The blocks of a mapped BGZF file b[0..n) (bgzip, samtools: gzip members
 * of at most 64 KB whose header records the member's size, RFC 1952's
 * extra field "BC") into *out.  @return their number, or 0 when a member
 * is not such a block (then the file is streamed). */
static size_t find_bgzf(const unsigned char *b, size_t n, unit **out)
{
    size_t cap = 0, nb = 0;
    unit *f = NULL;
    for (size_t at = 0; at + 26 <= n;) {
        const unsigned char *h = b + at;
        /* 1f 8b, deflate, FEXTRA; XLEN 6; subfield 'B' 'C' of 2 bytes: BSIZE */
        if (h[0] != 0x1f || h[1] != 0x8b || h[2] != 8 || (h[3] & 4) == 0 || h[10] != 6 || h[11] != 0 ||
            h[12] != 'B' || h[13] != 'C' || h[14] != 2 || h[15] != 0)
            break;
        const size_t c = (size_t)h[16] + ((size_t)h[17] << 8) + 1;
        if (c < 26 || c > n - at) break;
        const unsigned char *t = h + c - 4; /* ISIZE: the member's decoded bytes */
        const unsigned long long d = (unsigned long long)t[0] | (unsigned long long)t[1] << 8 |
                                     (unsigned long long)t[2] << 16 | (unsigned long long)t[3] << 24;
        if (d > 65536 || add_unit(&f, &nb, &cap, (unit){at, c, 0, d})) break;
        at += c;
        if (at == n) {
            *out = f;
            return nb;
        }
    }
    free(f);
    return 0;
}

/* A thread's decoders for direct mode, made when first needed. */
typedef struct coder {
    ZSTD_DCtx *zd;
    z_stream gz;
    int gz_ready;
} coder;

/* Decode unit x of z into dst (x->dlen bytes).  @return 0, or 1 when the
 * data are corrupt or memory ran out. */
static int decode_unit(rk_zsrc *z, coder *c, const unit *x, unsigned char *dst)
{
    const unsigned char *src = z->map + x->off;
    if (z->kind == RK_ZSRC_ZSTD) {
        if (c->zd == NULL && (c->zd = ZSTD_createDCtx()) == NULL) return 1;
        const size_t got = ZSTD_decompressDCtx(c->zd, dst, (size_t)x->dlen, src, x->clen);
        return ZSTD_isError(got) || got != x->dlen;
    }
    if (!c->gz_ready) {
        memset(&c->gz, 0, sizeof c->gz);
        if (inflateInit2(&c->gz, 15 + 16) != Z_OK) return 1; /* gzip: header, CRC and size checked */
        c->gz_ready = 1;
    } else if (inflateReset(&c->gz) != Z_OK) {
        return 1;
    }
    c->gz.next_in = (unsigned char *)(uintptr_t)src; /* zlib does not write it */
    c->gz.avail_in = (uInt)x->clen;
    c->gz.next_out = dst;
    c->gz.avail_out = (uInt)x->dlen;
    unsigned char spare; /* a member that decodes to 0 bytes still needs room to say so */
    if (x->dlen == 0) {
        c->gz.next_out = &spare;
        c->gz.avail_out = 1;
    }
    const int rc = inflate(&c->gz, Z_FINISH);
    return rc != Z_STREAM_END || c->gz.total_out != x->dlen || c->gz.avail_in != 0;
}

static void coder_free(coder *c)
{
    ZSTD_freeDCtx(c->zd);
    if (c->gz_ready) inflateEnd(&c->gz);
}

/* z->status for a corrupt unit x.  @return 1. */
static int corrupt(rk_zsrc *z, const unit *x)
{
    z->status = rk_error_set(&z->err, RK_E_PARSE, "%s: corrupt %s data in the %s at compressed byte %zu", z->name,
                             z->kind == RK_ZSRC_ZSTD ? "zstd" : "gzip", z->kind == RK_ZSRC_ZSTD ? "frame" : "member",
                             x->off);
    return 1;
}

/* Decode units [u0, u1) of z in parallel into dst (each at its ->at).
 * @return 0, or 1 with z->status set (the first corrupt unit named). */
static int decode_units(rk_zsrc *z, size_t u0, size_t u1, unsigned char *dst)
{
    size_t first_bad = u1;
#pragma omp parallel num_threads(z->threads) if (u1 - u0 > 1)
    {
        coder c;
        memset(&c, 0, sizeof c);
#pragma omp for schedule(dynamic, 1)
        for (size_t x = u0; x < u1; x++) {
            if (decode_unit(z, &c, &z->u[x], dst + z->u[x].at)) {
#pragma omp critical(rk_zsrc_bad)
                if (x < first_bad) first_bad = x;
            }
        }
        coder_free(&c);
    }
    return first_bad < u1 ? corrupt(z, &z->u[first_bad]) : 0;
}

/* Direct mode's pull: the units that fit in cap decoded in parallel into
 * dst; a unit larger than cap is decoded into the spill buffer and handed
 * out in pieces.  @return the bytes, 0 at the end or on failure
 * (z->status). */
static long pull_direct(rk_zsrc *z, unsigned char *dst, size_t cap)
{
    if (z->spill == NULL && z->next < z->nu && z->u[z->next].dlen > cap) {
        const unit *x = &z->u[z->next];
        z->spill = malloc((size_t)x->dlen);
        if (z->spill == NULL) {
            z->status = rk_error_set(&z->err, RK_E_NOMEM, "%s: out of memory decoding %llu bytes", z->name, x->dlen);
            return 0;
        }
        z->spill_len = (size_t)x->dlen;
        z->spill_pos = 0;
        coder c;
        memset(&c, 0, sizeof c);
        const int bad = decode_unit(z, &c, x, z->spill);
        coder_free(&c);
        if (bad) return corrupt(z, x) - 1;
        z->next++;
    }
    if (z->spill != NULL) {
        size_t n = z->spill_len - z->spill_pos < cap ? z->spill_len - z->spill_pos : cap;
        memcpy(dst, z->spill + z->spill_pos, n);
        z->spill_pos += n;
        if (z->spill_pos == z->spill_len) {
            free(z->spill);
            z->spill = NULL;
        }
        return (long)n;
    }
    size_t u1 = z->next, bytes = 0;
    for (; u1 < z->nu && bytes + z->u[u1].dlen <= cap; u1++) {
        z->u[u1].at = bytes;
        bytes += (size_t)z->u[u1].dlen;
    }
    if (u1 == z->next || decode_units(z, z->next, u1, dst)) return 0;
    z->next = u1;
    return (long)bytes;
}

/* Direct mode when fd is a regular file of known units (zstd frames with
 * their sizes, BGZF blocks), at least two of them.  @return 1 when z is
 * in direct mode now, else 0 (the decoder thread streams the file). */
static int open_direct(rk_zsrc *z)
{
    struct stat sb;
    if (fstat(z->in_fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size <= 0) return 0;
    void *m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, z->in_fd, 0);
    if (m == MAP_FAILED) return 0;
    unit *u = NULL;
    const size_t n = z->kind == RK_ZSRC_ZSTD ? find_frames(m, (size_t)sb.st_size, &u)
                                              : find_bgzf(m, (size_t)sb.st_size, &u);
    int small = n >= 2;
    const size_t unit_max = UNIT_MAX < z->ahead / 2 ? UNIT_MAX : z->ahead / 2;
    for (size_t x = 0; x < n && small; x++) small = u[x].dlen <= unit_max; /* a bounded spill */
    if (!small) {
        free(u);
        munmap(m, (size_t)sb.st_size);
        return 0;
    }
    z->direct = 1;
    z->map = m;
    z->map_len = (size_t)sb.st_size;
    z->u = u;
    z->nu = n;
    return 1;
}

static void *decoder(void *arg)
{
    rk_zsrc *z = arg;
    unsigned char *in = malloc(IN_CHUNK);
    if (in == NULL) z->status = rk_error_set(&z->err, RK_E_NOMEM, "%s: out of memory decoding", z->name);
    else if (z->kind == RK_ZSRC_GZIP) run_gzip(z, in);
    else run_zstd_stream(z, in);
    free(in);
    pthread_mutex_lock(&z->mu);
    z->done = 1;
    pthread_cond_broadcast(&z->cv);
    pthread_mutex_unlock(&z->mu);
    return NULL;
}

int rk_zsrc_whole(const rk_zsrc *z)
{
    return z != NULL && z->direct;
}

long rk_zsrc_pull(void *ud, void *dst, size_t cap)
{
    rk_zsrc *z = ud;
    if (z->direct) return z->status == RK_OK ? pull_direct(z, dst, cap) : 0;
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
    return a + IN_CHUNK + 2 * OUT_CHUNK; /* streamed: the queue, the input, a piece decoding and one over;
                                            direct: a spilled unit, at most a / 2 */
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
    if (open_direct(z)) {
        *zp = z;
        return RK_OK;
    }
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
    if (z->direct) {
        munmap((void *)(uintptr_t)z->map, z->map_len);
        free(z->u);
        free(z->spill);
    } else {
        pthread_mutex_lock(&z->mu);
        z->stopped = 1; /* a decoder still running ends at its next piece */
        pthread_cond_broadcast(&z->cv);
        pthread_mutex_unlock(&z->mu);
        if (z->started) pthread_join(z->th, NULL);
        for (int i = 0; i < z->count; i++) free(z->q[(z->head + i) % QUEUE_MAX].p);
        pthread_mutex_destroy(&z->mu);
        pthread_cond_destroy(&z->cv);
    }
    rk_status s = z->status;
    if (s != RK_OK && err != NULL) *err = z->err;
    free(z);
    return s;
}
