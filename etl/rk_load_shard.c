/* rk_load_shard.c — one file's parse shared among processes (rk_load.h,
 * rk_load_group; rk_load_internal.h, rk_load_shard).
 *
 * Process r of R reads the bytes from the first line start at or after r/R
 * of the file up to the next process's start; process 0 starts after the
 * header it found on the file's first block, exactly as a whole load finds
 * it, and hands that format to the others.  Each parses its bytes as a
 * whole load parses a file's blocks (rk_load_range).  The parts then tell
 * each other their counts in one allgather, and the rows are gathered on
 * every process in process order, which is the file's: each column of each
 * part in one broadcast from its process, straight into its place.  A
 * string id's raw value is an offset into its part's arena; the gathered
 * arena holds the parts' arenas one after the other, so each process moves
 * its own offsets by the bytes before its arena before it sends them.
 *
 * Line numbers: process 0 counts from the file's first line; the others
 * from their own first, and their bad lines move by the lines of the parts
 * before them when the reports are joined.  A part that cannot give one
 * process's result (a bad line without --skip-bad-lines, whose message
 * would name a line of the part; a quoted row across its end; a line too
 * long to find the next line start) makes every process read the file
 * whole, which says what one process says.
 */
#define _POSIX_C_SOURCE 200809L
#include "rk_load_internal.h"
#include "rk_mem.h"
#include "rk_zsrc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What each part tells the others: int64 values, in this order. */
enum {
    S_OK,
    S_N,
    S_ALEN,
    S_TAGS,
    S_RANGED,
    S_LO0,
    S_HI0,
    S_LO1,
    S_HI1,
    S_LINES,
    S_RATINGS,
    S_SKIPPED,
    S_BYTES,
    S_NBAD,
    S_BAD,
    S_COUNT = S_BAD + RK_LOAD_BAD_KEPT
};

/* Whether this process can read path in part: a regular, uncompressed,
 * non-empty file of min_bytes or more; *size gets its bytes. */
static int file_fits(const rk_load_opts *o, const char *path, int64_t *size)
{
    struct stat sb;
    if (strcmp(path, "-") == 0 || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size == 0 ||
        (int64_t)sb.st_size < o->group.min_bytes)
        return 0;
    const int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    const int kind = rk_load_compressed_kind(fd);
    close(fd);
    if (kind != RK_ZSRC_NONE) return 0;
    *size = (int64_t)sb.st_size;
    return 1;
}

/* Every process's flag: *ok 1 when all of them gave 1. */
static rk_status all_ok(const rk_load_group *g, int mine, int *ok, rk_error *err)
{
    int64_t v = mine, all[RK_LOAD_GROUP_MAX];
    RK_FORWARD(g->allgather(g->ud, &v, 1, all, err));
    *ok = 1;
    for (int r = 0; r < g->size; r++) *ok &= all[r] != 0;
    return RK_OK;
}

/* The first line start at or after x (x itself when byte x - 1 ends a
 * line), or size; -1 when no newline comes within max bytes (a line too
 * long: the whole load names it) or the file cannot be read. */
static int64_t line_start(int fd, int64_t x, int64_t size, size_t max)
{
    char buf[65536];
    if (x <= 0) return 0;
    if (x >= size) return size;
    int64_t at = x - 1;
    while (at < size) {
        const size_t want = size - at < (int64_t)sizeof buf ? (size_t)(size - at) : sizeof buf;
        const ssize_t got = pread(fd, buf, want, (off_t)at);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return -1;
        const char *q = memchr(buf, '\n', (size_t)got);
        if (q != NULL) return at + (q - buf) + 1;
        at += got;
        if (at - x > (int64_t)max + 1) return -1;
    }
    return size;
}

/* Byte r/R of a file of size bytes (exact in int64 for any size). */
static int64_t cut_at(int64_t size, int r, int R)
{
    return size / R * r + size % R * r / R;
}

/* This process's bytes [*from, *to): -1 in *from when they cannot be found. */
static void my_range(const rk_load_opts *o, const char *path, int64_t size, int64_t skip_b, int64_t *from,
                     int64_t *to)
{
    const rk_load_group *g = &o->group;
    const size_t max = o->line_max > 0 ? o->line_max : RK_LOAD_LINE_MAX;
    const int fd = open(path, O_RDONLY);
    *from = *to = -1;
    if (fd < 0) return;
    const int64_t a = line_start(fd, cut_at(size, g->rank, g->size), size, max);
    const int64_t b = g->rank + 1 == g->size ? size : line_start(fd, cut_at(size, g->rank + 1, g->size), size, max);
    close(fd);
    if (a < 0 || b < 0) return;
    *from = g->rank == 0 || a < skip_b ? skip_b : a; /* a header of several lines may reach past r/R */
    *to = b < skip_b ? skip_b : b;
}

/* The gathered rows' arrays: n rows, alen arena bytes.  0 or -1. */
static int rows_alloc(rk_rows *r, int64_t n, size_t alen, int tags, int want_time)
{
    memset(r, 0, sizeof *r);
    const size_t m = (size_t)(n > 0 ? n : 1);
    r->u = rk_mem_alloc(m * sizeof *r->u);
    r->i = rk_mem_alloc(m * sizeof *r->i);
    r->r = rk_mem_alloc(m * sizeof *r->r);
    r->t = want_time ? rk_mem_alloc(m * sizeof *r->t) : NULL;
    r->utag = tags ? calloc(m, 1) : NULL;
    r->itag = tags ? calloc(m, 1) : NULL;
    r->arena = alen > 0 ? malloc(alen) : NULL;
    r->cap = r->n = n;
    r->acap = r->alen = alen;
    return r->u == NULL || r->i == NULL || r->r == NULL || (want_time && r->t == NULL) ||
                   (tags && (r->utag == NULL || r->itag == NULL)) || (alen > 0 && r->arena == NULL)
               ? -1
               : 0;
}

/* This part's rows into their place in full (its string ids' offsets moved
 * by the arena bytes before its own), then every part's from its process. */
static rk_status gather_rows(const rk_load_group *g, const int64_t *all, const rk_rows *part, rk_rows *full,
                             int want_time, rk_error *err)
{
    int64_t off = 0, aoff = 0, mo = 0, mao = 0;
    for (int r = 0; r < g->size; r++) {
        if (r == g->rank) mo = off, mao = aoff;
        off += all[r * S_COUNT + S_N];
        aoff += all[r * S_COUNT + S_ALEN];
    }
    const int64_t n = part->n;
    if (n > 0) {
        memcpy(full->u + mo, part->u, (size_t)n * sizeof *full->u);
        memcpy(full->i + mo, part->i, (size_t)n * sizeof *full->i);
        memcpy(full->r + mo, part->r, (size_t)n * sizeof *full->r);
        if (want_time) memcpy(full->t + mo, part->t, (size_t)n * sizeof *full->t);
    }
    if (part->alen > 0) memcpy(full->arena + mao, part->arena, part->alen);
    if (part->utag != NULL && full->utag != NULL) {
        memcpy(full->utag + mo, part->utag, (size_t)n);
        memcpy(full->itag + mo, part->itag, (size_t)n);
#pragma omp parallel for schedule(static)
        for (int64_t k = 0; k < n; k++) {
            if (part->utag[k]) full->u[mo + k] += mao;
            if (part->itag[k]) full->i[mo + k] += mao;
        }
    }
    off = aoff = 0;
    for (int r = 0; r < g->size; r++) {
        const int64_t m = all[r * S_COUNT + S_N], al = all[r * S_COUNT + S_ALEN];
        if (m > 0) {
            RK_FORWARD(g->bcast(g->ud, full->u + off, (size_t)m * sizeof *full->u, r, err));
            RK_FORWARD(g->bcast(g->ud, full->i + off, (size_t)m * sizeof *full->i, r, err));
            RK_FORWARD(g->bcast(g->ud, full->r + off, (size_t)m * sizeof *full->r, r, err));
            if (want_time) RK_FORWARD(g->bcast(g->ud, full->t + off, (size_t)m * sizeof *full->t, r, err));
            if (full->utag != NULL) {
                RK_FORWARD(g->bcast(g->ud, full->utag + off, (size_t)m, r, err));
                RK_FORWARD(g->bcast(g->ud, full->itag + off, (size_t)m, r, err));
            }
        }
        if (al > 0) RK_FORWARD(g->bcast(g->ud, full->arena + aoff, (size_t)al, r, err));
        off += m;
        aoff += al;
    }
    return RK_OK;
}

/* The parts' reports joined as one whole load's, and the rows' id ranges. */
static rk_status join_reports(const rk_load_group *g, const int64_t *all, const rk_fmt *f, const rk_load_report *mine,
                              rk_rows *full, rk_load_report *rep, rk_error *err)
{
    int64_t lines_before = 0;
    int ranged = 1, why_from = -1;
    memset(rep, 0, sizeof *rep);
    rep->format = f->format;
    rep->delimiter = (char)f->delim;
    rep->has_time = f->ct >= 0;
    full->lo[0] = full->lo[1] = INT64_MAX;
    full->hi[0] = full->hi[1] = INT64_MIN;
    for (int r = 0; r < g->size; r++) {
        const int64_t *a = all + (size_t)r * S_COUNT;
        rep->bytes += a[S_BYTES];
        rep->lines += a[S_LINES];
        rep->ratings += a[S_RATINGS];
        rep->skipped_lines += a[S_SKIPPED];
        for (int64_t b = 0; b < a[S_NBAD] && rep->n_bad_kept < RK_LOAD_BAD_KEPT; b++) {
            rep->bad[rep->n_bad_kept].file = 0;
            rep->bad[rep->n_bad_kept++].line = a[S_BAD + b] + (r > 0 ? lines_before : 0);
        }
        if (why_from < 0 && a[S_SKIPPED] > 0) why_from = r;
        lines_before += a[S_LINES];
        ranged &= a[S_RANGED] == a[S_N];
        if (a[S_N] == 0) continue; /* an empty part's range is no range */
        for (int w = 0; w < 2; w++) {
            full->lo[w] = a[S_LO0 + 2 * w] < full->lo[w] ? a[S_LO0 + 2 * w] : full->lo[w];
            full->hi[w] = a[S_HI0 + 2 * w] > full->hi[w] ? a[S_HI0 + 2 * w] : full->hi[w];
        }
    }
    full->ranged = ranged ? full->n : 0;
    rep->parts = g->size;
    if (why_from < 0) return RK_OK;
    char why[sizeof rep->first_bad_reason];
    memcpy(why, mine->first_bad_reason, sizeof why);
    RK_FORWARD(g->bcast(g->ud, why, sizeof why, why_from, err));
    why[sizeof why - 1] = '\0';
    memcpy(rep->first_bad_reason, why, sizeof why);
    return RK_OK;
}

/* What this part tells the others. */
static void summary(const rk_rows *part, const rk_load_report *prep, int ok, int64_t *v)
{
    memset(v, 0, S_COUNT * sizeof *v);
    v[S_OK] = ok;
    v[S_N] = part->n;
    v[S_ALEN] = (int64_t)part->alen;
    v[S_TAGS] = part->utag != NULL;
    v[S_RANGED] = part->ranged;
    v[S_LO0] = part->lo[0], v[S_HI0] = part->hi[0];
    v[S_LO1] = part->lo[1], v[S_HI1] = part->hi[1];
    v[S_LINES] = prep->lines;
    v[S_RATINGS] = prep->ratings;
    v[S_SKIPPED] = prep->skipped_lines;
    v[S_BYTES] = prep->bytes;
    v[S_NBAD] = prep->n_bad_kept;
    for (int b = 0; b < prep->n_bad_kept; b++) v[S_BAD + b] = prep->bad[b].line;
}

rk_status rk_load_shard(const rk_load_opts *o, const char *path, int able, rk_rows *out, rk_load_report *rep,
                        rk_load_progress *pg, int *sharded, rk_error *err)
{
    const rk_load_group *g = &o->group;
    *sharded = 0;
    /* what every process decides alike, without a word */
    if (g->size <= 1 || g->size > RK_LOAD_GROUP_MAX || path == NULL || o->mem_limit > 0 || g->allgather == NULL ||
        g->bcast == NULL || g->rank < 0 || g->rank >= g->size)
        return RK_OK;
    struct {
        rk_fmt f;
        int64_t skip_b, skip_l, size;
    } head;
    memset(&head, 0, sizeof head);
    int64_t size = 0;
    int ok = able && file_fits(o, path, &size);
    if (g->rank == 0 && ok) { /* the header and format a whole load finds; its failure is the whole load's to say */
        rk_error e;
        size_t sb = 0;
        ok = rk_load_detect_file(o, path, &head.f, &sb, &head.skip_l, &e) == RK_OK && !head.f.netflix;
        head.skip_b = (int64_t)sb;
        head.size = size;
    }
    RK_FORWARD(all_ok(g, ok, &ok, err));
    if (!ok) return RK_OK;
    RK_FORWARD(g->bcast(g->ud, &head, sizeof head, 0, err));

    int64_t from = -1, to = -1;
    if (size == head.size) my_range(o, path, size, head.skip_b, &from, &to);
    rk_rows part;
    rk_load_report prep;
    rk_error perr;
    memset(&part, 0, sizeof part);
    memset(&prep, 0, sizeof prep);
    /* the progress of this part's bytes, as the whole file's */
    rk_load_progress ppg = {pg->done, pg->total > 0.0 ? pg->total - (double)(size - (to - from)) : 0.0};
    rk_status ps = from < 0 ? RK_E_IO
                            : rk_load_range(o, path, &head.f, from, to, g->rank == 0 ? head.skip_l : 0, &part, &prep,
                                            &ppg, &perr);
    if (g->rank == 0) prep.bytes += head.skip_b; /* the header's bytes were read by the detection */
    int64_t all[RK_LOAD_GROUP_MAX * S_COUNT], mine[S_COUNT];
    summary(&part, &prep, ps == RK_OK, mine);
    rk_status st = g->allgather(g->ud, mine, S_COUNT, all, err);
    ok = 1;
    int64_t n = 0, alen = 0;
    int tags = 0;
    for (int r = 0; st == RK_OK && r < g->size; r++) {
        ok &= all[r * S_COUNT + S_OK] != 0;
        n += all[r * S_COUNT + S_N];
        alen += all[r * S_COUNT + S_ALEN];
        tags |= all[r * S_COUNT + S_TAGS] != 0;
    }
    rk_rows full;
    memset(&full, 0, sizeof full);
    if (st == RK_OK && ok) st = all_ok(g, rows_alloc(&full, n, (size_t)alen, tags, head.f.want_time) == 0, &ok, err);
    if (st == RK_OK && ok) st = gather_rows(g, all, &part, &full, head.f.want_time, err);
    if (st == RK_OK && ok) st = join_reports(g, all, &head.f, &prep, &full, rep, err);
    rk_rows_free(&part);
    if (st != RK_OK || !ok) { /* read whole by the caller, or a collective failed */
        rk_rows_free(&full);
        return st;
    }
    *out = full;
    pg->done = ppg.done;
    pg->total = ppg.total;
    *sharded = 1;
    return RK_OK;
}
