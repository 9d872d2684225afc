/* rk_src.c — the loader's sources: a file descriptor or memory (rk_src.h).
 *
 * A block ends at its last newline; the partial line stays in the buffer and
 * starts the next block.  A regular file is read with parallel pread(2), and
 * a change of its size while it is read is an error.
 */
#define _POSIX_C_SOURCE 200809L
#include "rk_src.h"
#include "rk_omp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RK_PREAD_PIECE ((size_t)4 << 20)

/* Read n bytes at the file position with several threads (the copy out of
 * the page cache is a serial step otherwise).  @return bytes read, -1. */
static ssize_t pread_par(rk_src *s, char *dst, size_t n)
{
    size_t np = (n + RK_PREAD_PIECE - 1) / RK_PREAD_PIECE;
    size_t got_total = 0;
    int fail = 0, short_read = 0;
    if (np == 0) return 0;
    size_t *got = calloc(np, sizeof *got);
    if (got == NULL) return -1;
#pragma omp parallel for schedule(dynamic, 1) num_threads(s->nt) reduction(max : fail) if (np > 1)
    for (size_t k = 0; k < np; k++) {
        size_t off = k * RK_PREAD_PIECE, want = n - off < RK_PREAD_PIECE ? n - off : RK_PREAD_PIECE;
        while (got[k] < want) {
            ssize_t r = pread(s->fd, dst + off + got[k], want - got[k], s->fpos + (off_t)(off + got[k]));
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) fail = errno;
            if (r <= 0) break;
            got[k] += (size_t)r;
        }
    }
    for (size_t k = 0; k < np && !short_read; k++) { /* the bytes before the first short piece */
        got_total += got[k];
        short_read = got[k] < (n - k * RK_PREAD_PIECE < RK_PREAD_PIECE ? n - k * RK_PREAD_PIECE : RK_PREAD_PIECE);
    }
    free(got);
    if (fail) {
        errno = fail;
        return -1;
    }
    if (short_read) s->changed = 1; /* the file shrank under us */
    s->fpos += (off_t)got_total;
    return (ssize_t)got_total;
}

/* Fill the buffer up to `upto` bytes, or to the end of the source. */
static rk_status src_fill(rk_src *s, size_t upto, int64_t *bytes, rk_error *err)
{
    while (!s->eof && s->len < upto) {
        if (s->len == s->cap) {
            size_t cap = s->cap ? s->cap * 2 : upto;
            if (cap < upto) cap = upto;
            char *b = realloc(s->buf, cap);
            if (b == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory reading %s", s->name);
            s->buf = b;
            s->cap = cap;
        }
        size_t want = (upto < s->cap ? upto : s->cap) - s->len;
        ssize_t got;
        if (s->seekable) {
            const off_t stop = s->fstop > 0 ? s->fstop : s->fsize;
            if (s->fpos >= stop) {
                s->eof = 1;
                break;
            }
            if ((off_t)want > stop - s->fpos) want = (size_t)(stop - s->fpos);
            got = pread_par(s, s->buf + s->len, want);
            if (got >= 0 && !s->changed && s->fpos >= stop) { /* the end: same size as at open? */
                struct stat sb;
                s->eof = 1;
                if (fstat(s->fd, &sb) == 0 && sb.st_size != s->fsize) s->changed = 1;
            }
            /* a file truncated or appended to while it is read (a copy or
             * a download still running) would silently lose or miss lines */
            if (s->changed)
                return rk_error_set(err, RK_E_IO, "%s changed size while it was read (%lld bytes at open)",
                                    s->name, (long long)s->fsize);
        } else if (s->pull != NULL) {
            got = (ssize_t)s->pull(s->pull_ud, s->buf + s->len, want);
        } else {
            got = read(s->fd, s->buf + s->len, want);
        }
        if (got < 0) {
            if (errno == EINTR) continue;
            return rk_error_set(err, RK_E_IO, "cannot read %s: %s", s->name, strerror(errno));
        }
        if (got == 0) s->eof = 1;
        s->len += (size_t)got;
        *bytes += got;
        if (s->pull_whole && got > 0) break; /* the next unit would only fit in part */
    }
    return RK_OK;
}

/* The last newline in p[0..n), or NULL. */
static const char *last_nl(const char *p, size_t n)
{
    while (n > 0)
        if (p[--n] == '\n') return p + n;
    return NULL;
}

/* The next block: about `want` bytes of whole lines (the last line may lack
 * its newline only when *last). */
rk_status rk_src_next(rk_src *s, size_t want, const char **p, size_t *n, int *last,
                      int64_t *bytes, rk_error *err)
{
    if (s->fd < 0) {
        size_t rest = s->mem_len - s->mem_pos;
        const char *b = s->mem + s->mem_pos;
        size_t take = rest;
        if (rest > want) {
            const char *q = memchr(b + want - 1, '\n', rest - (want - 1));
            if (q != NULL) take = (size_t)(q - b) + 1;
        }
        *p = b;
        *n = take;
        s->mem_pos += take;
        *last = s->mem_pos == s->mem_len;
        if (!s->mem_counted) *bytes += (int64_t)s->mem_len;
        s->mem_counted = 1;
        return RK_OK;
    }
    if (s->start > 0) {
        memmove(s->buf, s->buf + s->start, s->len - s->start);
        s->len -= s->start;
        s->start = 0;
    }
    size_t upto = want;
    for (;;) {
        RK_FORWARD(src_fill(s, upto, bytes, err));
        if (s->eof) break;
        const char *q = last_nl(s->buf, s->len);
        if (q != NULL) {
            *p = s->buf;
            *n = (size_t)(q - s->buf) + 1;
            s->start = *n;
            *last = 0;
            return RK_OK;
        }
        if (s->line_max > 0 && s->len > want + s->line_max) /* endless input: bounded memory */
            return rk_error_set(err, RK_E_PARSE, "%s:%lld: a line longer than %zu bytes (not a rating file? "
                                "--max-line-bytes raises the limit)", s->name, (long long)s->line_base + 1,
                                s->line_max);
        upto = s->len * 2; /* a line longer than the block */
        if (s->line_max > 0 && upto > want + s->line_max + 1) upto = want + s->line_max + 1;
    }
    *p = s->buf;
    *n = s->len;
    s->start = s->len;
    *last = 1;
    return RK_OK;
}

void rk_src_unread(rk_src *s, size_t n)
{
    if (s->fd < 0) s->mem_pos -= n;
    else s->start -= n;
}
