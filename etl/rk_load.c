/* rk_load.c — rating files -> dense triples: blocks, chunks, merging.
 *
 * A file is read in blocks (rk_src.c: pread(2) by several threads; memory for
 * rk_load_buffer).  A block ends at its last newline; the partial line is
 * carried to the next one.  Each block is cut into chunks at line boundaries,
 * a few per thread; their newlines are counted (in parallel), which bounds
 * each chunk's rows and so gives it its own range of the merged arrays; the
 * chunks are parsed in parallel (rk_parse.c) straight into those ranges and
 * then put in file order: line numbers are the chunk's own plus the lines
 * before it, bad lines are reported in file order, and netflix rows before a
 * chunk's first "MOVIEID:" line get the movie of the chunk before.  Rows are
 * copied only when an earlier chunk of the block left a gap.  Raw ids become
 * dense indices at the end (rk_ids.c), over the training and test files
 * together.  Under a memory budget (rk_load_opts.mem_limit) blocks and a
 * decoder's queue are sized to it and what is held is checked as it grows.
 */
#define _POSIX_C_SOURCE 200809L
#include "rk_load_internal.h"
#include "rk_mem.h"
#include "rk_omp.h"
#include "rk_src.h"
#include "rk_dirlist.h"
#include "rk_zsrc.h"
#include "rk_note.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define RK_CHUNK_DEFAULT ((size_t)8 << 20)
#define RK_CHUNK_MIN ((size_t)256 << 10)
#define RK_DETECT_BYTES ((size_t)64 << 10)

/* ---- defaults (the format names are rk_detect.c's) -------------------------------- */

void rk_load_opts_default(rk_load_opts *o)
{
    memset(o, 0, sizeof *o);
    o->format = RK_FMT_AUTO;
    o->header = -1;
}

/* ---- the loader ---------------------------------------------------------------- */

typedef struct loader {
    const rk_load_opts *o;
    int nt;
    rk_rows *out;
    rk_load_report *rep;
    int first_file;
    rk_chunk *ch;
    int nch_cap;
    /* the current file */
    const char *name;
    int file_index;
    int64_t line_base;            /* lines of the file before the chunk */
    size_t line_max;              /* bytes of a line at most (rk_load_opts.line_max) */
    int mv, mv_tag;               /* netflix: the movie rows continue under */
    int64_t mv_v;
    size_t mv_len;
    char mv_s[RK_ID_MAX + 1];
    rk_load_progress *pg;         /* bytes parsed before the current region */
    /* --memory-limit (rk_load_opts.mem_limit; 0: none): what is held besides
     * out's rows, the source's buffer and the chunks' own rows */
    double held_before;           /* the rows of the files loaded before (the training files' for --test) */
    double held_decoder;          /* the current file's decoder, at most */
    const rk_src *src;            /* the current source */
    int presize;                  /* one regular file, no budget: its rows sized at once (rk_rows_presize) */
    const rk_rows_feed *feed;     /* the training rows' reader until it is told to hold; NULL: none */
    const rk_fmt *given;          /* a shard of a file (rk_load_range): its format, found at the file's start */
    int64_t given_line;           /* and the lines before the shard */
} loader;

/* Newlines in p[0..n).  The one pass the loader makes over the bytes besides
 * the parse: it tells each chunk where its rows go before any is parsed. */
static int64_t count_nl(const char *p, size_t n)
{
    int64_t c = 0;
    size_t k = 0;
#ifdef __SSE2__
    const __m128i nl = _mm_set1_epi8('\n');
    while (n - k >= 16 * 255) { /* byte counters, summed before they wrap */
        __m128i acc = _mm_setzero_si128();
        for (int j = 0; j < 255; j++, k += 16)
            acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + k)), nl));
        __m128i s = _mm_sad_epu8(acc, _mm_setzero_si128());
        c += _mm_cvtsi128_si64(s) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(s, s));
    }
#endif
    for (; k < n; k++) c += p[k] == '\n';
    return c;
}

/* The start of the first line of p[0..n) longer than max bytes (its
 * newline not counted), or -1.  Windows of max + 1 bytes: the last newline
 * of each (found by a short backward scan) starts the next, so a window
 * without one is a line too long. */
static int64_t long_line(const char *p, size_t n, size_t max)
{
    size_t a = 0;
    while (n - a > max) {
        size_t e = a + max + 1; /* a line from a fits when a newline is in [a, a + max] */
        while (e > a && p[e - 1] != '\n') e--;
        if (e == a) return (int64_t)a;
        a = e;
    }
    return -1;
}

static const char *orphan_reason(int mv)
{
    return mv == RK_MV_BAD ? "rating line after a malformed MOVIEID: line"
                           : "rating line before any MOVIEID: line";
}

/* ---- --memory-limit ------------------------------------------------------------ */

/* Bytes of one row of r: raw ids, rating, time when kept, both tags (a
 * string id may add them at any time); and what r holds. */
static double row_bytes(const rk_rows *r, int want_time)
{
    return 2.0 * sizeof(int64_t) + sizeof(float) + (want_time || r->t != NULL ? sizeof(int64_t) : 0.0) + 2.0;
}
static double rows_held(const rk_rows *r) { return (double)r->cap * row_bytes(r, 0) + (double)r->acap; }

/* What the loader holds now besides out's rows: the rows of the files read
 * before, the decoder, the source's buffer, the chunks' own rows. */
static double held_beside_rows(const loader *L)
{
    double b = L->held_before + L->held_decoder + (L->src != NULL ? (double)L->src->cap : 0.0);
    for (int k = 0; k < L->nch_cap; k++) {
        const rk_chunk *c = &L->ch[k];
        b += rows_held(&c->own) + (double)c->lead_cap * sizeof *c->lead_line + (c->utag != NULL ? 2.0 * (double)c->cap : 0.0);
    }
    return b;
}

/* RK_E_NOMEM: holding `bytes` breaks the budget; `line`: the file's first
 * line not yet kept. */
static rk_status over_budget(const loader *L, double bytes, int64_t line, rk_error *err)
{
    const double mb = 1048576.0;
    return rk_error_set(err, RK_E_NOMEM, "%s:%lld: reading on needs about %.2f MB of host memory (%lld ratings "
                        "kept), and --memory-limit gives %.2f MB: raise --memory-limit", L->name, (long long)line,
                        bytes / mb, (long long)L->out->n, (double)L->o->mem_limit / mb);
}

/* Before out grows to `need` rows and `alen` string bytes: within the
 * budget, or RK_E_NOMEM.  Sets out's growth bound (cap_max) and *acap_max,
 * so that doubling stops at the budget. */
static rk_status budget_rows(loader *L, int64_t need, size_t alen, int want_time, int64_t line, size_t *acap_max,
                             rk_error *err)
{
    rk_rows *out = L->out;
    *acap_max = 0;
    if (L->o->mem_limit == 0) return RK_OK;
    const double rb = row_bytes(out, want_time), beside = held_beside_rows(L);
    const double rows = (double)(need > out->cap ? need : out->cap) * rb;
    const double arena = (double)(alen > out->acap ? alen : out->acap);
    const double free_b = (double)L->o->mem_limit - beside;
    if (rows + arena > free_b) return over_budget(L, beside + rows + arena, line, err);
    out->cap_max = (int64_t)((free_b - arena) / rb);
    *acap_max = (size_t)(free_b - rows);
    return RK_OK;
}

/* After the source's buffer or the chunks grew (their growth is bounded by
 * the block asked for): within the budget, or RK_E_NOMEM. */
static rk_status budget_now(const loader *L, int64_t line, rk_error *err)
{
    if (L->o->mem_limit == 0) return RK_OK;
    const double held = held_beside_rows(L) + rows_held(L->out);
    return held > (double)L->o->mem_limit ? over_budget(L, held, line, err) : RK_OK;
}

/* In file order: errors, bad lines, where the chunk's rows go, the netflix
 * movie they continue under, where its strings go.  *total: rows planned so
 * far; *alen: arena bytes planned so far. */
static rk_status plan_chunk(loader *L, const rk_fmt *f, rk_chunk *c, int64_t *total, size_t *alen,
                            rk_error *err)
{
    rk_load_report *rep = L->rep;
    if (c->status == RK_E_NOMEM)
        return rk_error_set(err, RK_E_NOMEM, "out of memory parsing %s", L->name);
    if (c->status != RK_OK)
        return rk_error_set(err, c->status, "%s: the CSV parser failed", L->name);
    int64_t norph = f->netflix && L->mv != RK_MV_OK ? c->nlead : 0;

    if (c->nbad > 0 || norph > 0) {
        int64_t fb = c->nbad > 0 ? c->bad[0] : INT64_MAX;
        int64_t fo = norph > 0 ? c->lead_line[0] : INT64_MAX;
        const char *why = fb < fo ? c->reason : orphan_reason(L->mv);
        if (!f->skip_bad)
            return rk_error_set(err, RK_E_PARSE, "%s:%lld: %s", L->name,
                                (long long)(L->line_base + (fb < fo ? fb : fo) + 1), why);
        if (rep->skipped_lines == 0)
            snprintf(rep->first_bad_reason, sizeof rep->first_bad_reason, "%s", why);
        /* both lists are in line order: walk them together; past the bad
         * lines the chunk kept, the order is unknown, so stop there */
        int64_t kb = 0, ko = 0;
        while (rep->n_bad_kept < RK_LOAD_BAD_KEPT && (kb < c->nbad_kept || ko < norph)) {
            if (kb == c->nbad_kept && c->nbad > c->nbad_kept) break;
            int take_bad = ko >= norph || (kb < c->nbad_kept && c->bad[kb] < c->lead_line[ko]);
            int64_t line = take_bad ? c->bad[kb++] : c->lead_line[ko++];
            rep->bad[rep->n_bad_kept].file = L->file_index;
            rep->bad[rep->n_bad_kept].line = L->line_base + line + 1;
            rep->n_bad_kept++;
        }
        rep->skipped_lines += c->nbad + norph;
    }
    c->norph = norph;
    c->dst = *total;
    *total += c->n - norph;
    rep->ratings += c->n - norph;
    L->line_base += c->lines;
    c->fill_tag = L->mv_tag;
    c->fill_v = L->mv_v;
    c->fill_len = L->mv_len;
    if (c->nlead > norph && L->mv_tag) { /* the movie's string goes to the arena once per chunk */
        memcpy(c->fill_s, L->mv_s, L->mv_len);
        c->fill_v = (int64_t)*alen;
        *alen += L->mv_len + 1;
    }
    c->abase = *alen;
    *alen += c->own.alen;
    if (c->mv_state != RK_MV_NONE) {
        L->mv = c->mv_state;
        L->mv_tag = c->mv_tag;
        L->mv_v = c->mv_v;
        if (c->mv_state == RK_MV_OK && c->mv_tag) {
            const char *ms = c->own.arena + c->mv_v;
            L->mv_len = (unsigned char)ms[0];
            memcpy(L->mv_s, ms + 1, L->mv_len);
        }
    }
    return RK_OK;
}

/* The rows' reader (rk_rows_feed) told to hold: the rows are about to move
 * or change (done 0), or all of them were handed (done 1). */
static void feed_hold(loader *L, int done)
{
    const rk_rows_feed *f = L->feed;
    if (f == NULL) return;
    L->feed = NULL;
    f->hold(f->ud, done);
    if (!done && f->release != NULL) f->release(f->ud); /* the rows are about to move */
}

/* Rows [from, to) are final: handed to the reader (told to hold at the
 * first string id, so every id handed is an integer). */
static void feed_ready(loader *L, int64_t from, int64_t to)
{
    const rk_rows *out = L->out;
    if (L->feed != NULL && to > from) L->feed->ready(L->feed->ud, out->u, out->i, out->r, out->cap, from, to);
}

static rk_chunk *chunk_slot(loader *L, int k, rk_error *err)
{
    if (k == L->nch_cap) {
        int cap = L->nch_cap ? L->nch_cap * 2 : 16;
        rk_chunk *c = realloc(L->ch, (size_t)cap * sizeof *c);
        if (c == NULL) {
            rk_error_set(err, RK_E_NOMEM, "out of memory parsing %s", L->name);
            return NULL;
        }
        memset(c + L->nch_cap, 0, (size_t)(cap - L->nch_cap) * sizeof *c);
        L->ch = c;
        L->nch_cap = cap;
    }
    return &L->ch[k];
}

/* Cut p[0..n) into chunks of whole lines, count their lines (which bound
 * their rows), parse them in parallel into their places in L->out, then put
 * the rows in file order.  Nothing here passes over the bytes or the rows
 * serially; the loops over chunks are cheap. */
/* Rows whose quoted fields hold line breaks may run past a chunk's end: such
 * a chunk is parsed again with the chunks after it until its rows close
 * (the later ones become empty), so every row is libcsv's reading of the
 * whole file.  The last chunk of a block that is not the file's last is cut
 * before its open row instead, whose bytes (*carry) go back to the source
 * to start the next block. */
static void join_open_rows(const rk_fmt *f, rk_chunk *ch, int nch, int last_block, size_t *carry)
{
    *carry = 0;
    for (int k = 0; k < nch; k++) {
        for (int j = k + 1; ch[k].open_at >= 0 && j < nch; j++) {
            ch[k].len += ch[j].len;
            ch[k].lines += ch[j].lines;
            ch[j].len = 0;
            ch[j].lines = 0;
            rk_parse_chunk(f, &ch[j]);
            rk_parse_chunk(f, &ch[k]);
        }
    }
    rk_chunk *c = NULL;
    for (int k = 0; k < nch; k++)
        if (ch[k].len > 0) c = &ch[k];
    if (last_block || c == NULL || c->open_at < 0) return;
    *carry = c->len - (size_t)c->open_at;
    c->len = (size_t)c->open_at;
    c->lines = c->open_lines;
    rk_parse_chunk(f, c);
}

static rk_status run_region(loader *L, const rk_fmt *f, const char *p, size_t n, int last_block, size_t *carry,
                            rk_error *err)
{
    rk_rows *out = L->out;
    size_t cs = L->o->chunk_bytes;
    const int64_t line0 = L->line_base + 1; /* the region's first line */
    *carry = 0;
    if (n == 0) return RK_OK;
    if (cs == 0) { /* a few chunks per thread: a slow thread holds up less */
        cs = n / ((size_t)L->nt * 8) + 1; /* parsed in pairs: four pairs a thread */
        if (cs < RK_CHUNK_MIN) cs = RK_CHUNK_MIN;
        if (cs > RK_CHUNK_DEFAULT) cs = RK_CHUNK_DEFAULT;
    }
    int nch = 0;
    size_t pos = 0;
    while (pos < n) {
        size_t end = n - pos > cs ? pos + cs : n;
        if (end < n) {
            const char *q = memchr(p + end - 1, '\n', n - (end - 1));
            end = q != NULL ? (size_t)(q - p) + 1 : n;
        }
        rk_chunk *c = chunk_slot(L, nch, err);
        if (c == NULL) return RK_E_NOMEM;
        c->p = p + pos;
        c->len = end - pos;
        nch++;
        pos = end;
    }
    rk_chunk *ch = L->ch;
#pragma omp parallel for schedule(dynamic, 1) num_threads(L->nt) if (nch > 1)
    for (int k = 0; k < nch; k++) { /* a line without its newline ends the file only */
        ch[k].lines = count_nl(ch[k].p, ch[k].len) + (ch[k].p[ch[k].len - 1] != '\n');
        ch[k].long_at = long_line(ch[k].p, ch[k].len, L->line_max);
    }
    /* a line past the limit: not a rating file (the first one, in file order) */
    int64_t before = 0;
    for (int k = 0; k < nch; k++) {
        if (ch[k].long_at >= 0)
            return rk_error_set(err, RK_E_PARSE, "%s:%lld: a line longer than %zu bytes (not a rating file? "
                                "--max-line-bytes raises the limit)", L->name,
                                (long long)(L->line_base + before + count_nl(ch[k].p, (size_t)ch[k].long_at) + 1),
                                L->line_max);
        before += ch[k].lines;
    }
    int64_t slots = out->n;
    for (int k = 0; k < nch; k++) {
        ch[k].home = out;
        ch[k].base = slots;
        ch[k].room = ch[k].lines;
        slots += ch[k].lines;
    }
    size_t acap_max;
    RK_FORWARD(budget_rows(L, slots, out->alen, f->want_time, line0, &acap_max, err));
    if (slots > out->cap) feed_hold(L, 0); /* the rows handed are about to move */
    if (rk_rows_reserve(out, slots, f->want_time) != 0)
        return rk_error_set(err, RK_E_NOMEM, "out of memory for %lld ratings", (long long)slots);

    /* thread 0 reports progress as chunks finish, a few times per block */
    double done = 0.0;
    rk_progress_fn prog = L->o->progress;
#pragma omp parallel for schedule(dynamic, 1) num_threads(L->nt) if (nch > 2)
    for (int k = 0; k < nch; k += 2) { /* two by two: their lines interleaved keep a core busier */
        rk_chunk *c1 = k + 1 < nch ? &ch[k + 1] : NULL;
        rk_parse_chunk_pair(f, &ch[k], c1);
        if (prog != NULL) {
            double now;
#pragma omp atomic capture
            now = done += (double)(ch[k].len + (c1 != NULL ? c1->len : 0));
            if (rk_omp_thread_num() == 0 && now < (double)n)
                prog(L->o->progress_ud, "parse", L->pg->done + now, L->pg->total, "bytes");
        }
    }
    join_open_rows(f, ch, nch, last_block, carry);
    RK_FORWARD(budget_now(L, line0, err)); /* chunks whose rows spilled */

    int64_t total = out->n;
    size_t alen = out->alen;
    int tags = out->utag != NULL, moves = 0;
    for (int k = 0; k < nch; k++) {
        RK_FORWARD(plan_chunk(L, f, &ch[k], &total, &alen, err));
        tags |= ch[k].utag != NULL || (ch[k].nlead > ch[k].norph && ch[k].fill_tag);
        moves |= !ch[k].spilled && ch[k].dst != ch[k].base + ch[k].norph && ch[k].n > ch[k].norph;
    }
    /* chunks that spilled may hold more rows than their lines */
    RK_FORWARD(budget_rows(L, total, alen, f->want_time, line0, &acap_max, err));
    if (total > out->cap || tags) feed_hold(L, 0); /* rows that move, or ids that are no integers */
    if (total > slots && rk_rows_reserve(out, total, f->want_time) != 0) goto nomem;
    if (tags && rk_rows_want_tags(out) != 0) goto nomem;
    if (alen > out->acap) {
        size_t cap = out->acap * 2 > alen ? out->acap * 2 : alen;
        if (acap_max > 0 && cap > acap_max) cap = acap_max > alen ? acap_max : alen;
        char *a = realloc(out->arena, cap);
        if (a == NULL) goto nomem;
        out->arena = a;
        out->acap = cap;
    }
    if (moves) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(L->nt) if (nch > 1)
        for (int k = 0; k < nch; k++) rk_rows_set_aside(out, &ch[k]);
        for (int k = 0; k < nch; k++)
            if (ch[k].status != RK_OK) goto nomem;
        RK_FORWARD(budget_now(L, line0, err)); /* the rows set aside */
    }
#pragma omp parallel for schedule(dynamic, 1) num_threads(L->nt) if (nch > 1)
    for (int k = 0; k < nch; k++) rk_rows_place(out, &ch[k]);
    rk_rows_add_ranges(out, ch, nch, total);
    const int64_t from = out->n;
    out->n = total;
    feed_ready(L, from, total);
    out->alen = alen;
    L->pg->done += (double)(n - *carry);
    RK_PROGRESS(prog, L->o->progress_ud, "parse", L->pg->done, L->pg->total, "bytes");
    return RK_OK;
nomem:
    return rk_error_set(err, RK_E_NOMEM, "out of memory parsing %s", L->name);
}

/* The bytes of a block (a thread's chunks), within a memory budget. */
static size_t block_bytes(const loader *L)
{
    size_t cs = L->o->chunk_bytes ? L->o->chunk_bytes : RK_CHUNK_DEFAULT;
    if (cs > ((size_t)1 << 30)) cs = (size_t)1 << 30;
    size_t block = cs * (size_t)L->nt;
    if (L->o->mem_limit > 0 && block > L->o->mem_limit / 16) /* the budget is not spent on one block */
        block = L->o->mem_limit / 16 > RK_DETECT_BYTES ? L->o->mem_limit / 16 : RK_DETECT_BYTES;
    return block;
}

static rk_status load_src(loader *L, rk_src *s, rk_error *err)
{
    const size_t block = block_bytes(L);
    const char *p;
    size_t n, skip_b = 0;
    int last;
    int64_t skip_l = L->given_line;
    rk_fmt f;
    /* a shard ends at a line start inside the file: it is no file's end */
    const int file_end = s->fstop == 0 || s->fstop == s->fsize;
    const off_t span = (s->fstop > 0 ? s->fstop : s->fsize) - s->fpos;

    L->name = s->name;
    L->src = s;
    s->line_max = L->line_max;
    L->mv = RK_MV_NONE;
    L->mv_tag = 0;
    RK_FORWARD(rk_src_next(s, block > RK_DETECT_BYTES ? block : RK_DETECT_BYTES, &p, &n, &last,
                           &L->rep->bytes, err));
    RK_FORWARD(budget_now(L, 1, err));
    if (L->given != NULL) f = *L->given;
    else RK_FORWARD(rk_detect(L->o, s->name, p, n, last, &f, &skip_b, &skip_l, err));
    if (L->first_file) {
        L->rep->format = f.format;
        L->rep->delimiter = (char)f.delim;
        L->rep->has_time = f.ct >= 0;
        L->first_file = 0;
    }
    L->line_base = skip_l;
    L->pg->done += (double)skip_b;
    p += skip_b;
    n -= skip_b;
    if (L->presize && s->seekable) rk_rows_presize(L->out, p, n, (double)span, f.want_time);
    for (;;) {
        size_t carry;
        RK_FORWARD(run_region(L, &f, p, n, last && file_end, &carry, err));
        if (last && carry > 0) /* a quoted row runs on into the next shard: the shards cannot part there */
            return rk_error_set(err, RK_E_PARSE, "%s:%lld: a quoted row runs past the shard's end", L->name,
                                (long long)L->line_base + 1);
        if (last) break;
        /* an open row goes back to start the next block; a block that is all
         * one open row asks for more bytes */
        rk_src_unread(s, carry);
        if (carry > L->line_max)
            return rk_error_set(err, RK_E_PARSE, "%s:%lld: a quoted field runs over more than %zu bytes (a quote "
                                "never closed?)", L->name, (long long)L->line_base + 1, L->line_max);
        s->line_base = L->line_base;
        const size_t want = carry == n ? 2 * (n > block ? n : block) : block;
        RK_FORWARD(rk_src_next(s, want, &p, &n, &last, &L->rep->bytes, err));
        RK_FORWARD(budget_now(L, L->line_base + 1, err)); /* the source's buffer */
    }
    L->rep->lines += L->line_base;
    return RK_OK;
}

int rk_load_compressed_kind(int fd)
{
    unsigned char magic[4];
    return pread(fd, magic, 4, 0) == 4 ? rk_zsrc_kind(magic, 4) : RK_ZSRC_NONE;
}

static rk_status load_path(loader *L, const char *path, rk_error *err)
{
    rk_src s;
    memset(&s, 0, sizeof s);
    s.name = path;
    if (strcmp(path, "-") == 0) {
        s.name = "<stdin>";
        s.fd = STDIN_FILENO;
        s.nt = 1;
        rk_status st = load_src(L, &s, err);
        L->src = NULL;
        free(s.buf);
        return st;
    }
    const int fd = open(path, O_RDONLY);
    if (fd < 0) return rk_error_set(err, RK_E_IO, "cannot open %s: %s", path, strerror(errno));
    s.fd = fd;
    s.nt = L->nt;
    struct stat sb;
    const int regular = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);
    const int kind = regular ? rk_load_compressed_kind(fd) : RK_ZSRC_NONE;
    rk_zsrc *z = NULL;
    rk_status st = RK_OK;
    if (kind != RK_ZSRC_NONE) { /* decoded as it is pulled (rk_zsrc.h): in place, or from a queue */
        const size_t ahead = L->o->mem_limit == 0 ? 0 : L->o->mem_limit / 8 > 65536 ? L->o->mem_limit / 8 : 65536;
        L->held_decoder = ahead > 0 ? (double)rk_zsrc_held_max(ahead) : 0.0; /* ahead: an eighth of a budget */
        st = rk_zsrc_open(fd, kind, path, L->nt, ahead, &z, err);
        s.pull = rk_zsrc_pull;
        s.pull_ud = z;
        s.pull_whole = rk_zsrc_whole(z);
        s.nt = 1;
    } else if (regular) {
        s.seekable = 1;
        s.fsize = sb.st_size;
    }
    if (st == RK_OK) st = load_src(L, &s, err);
    L->src = NULL;
    L->held_decoder = 0.0;
    rk_error zerr;
    const rk_status zs = rk_zsrc_close(z, &zerr); /* a corrupt stream says more than the parse */
    if (zs != RK_OK) {
        st = zs;
        *err = zerr;
    }
    free(s.buf);
    close(fd);
    return st;
}

/* A directory: its rating files in name order (rk_dirlist.h); the others
 * are named in a note. */
static rk_status load_dir(loader *L, const char *path, rk_error *err)
{
    rk_dirlist dl;
    RK_FORWARD(rk_dirlist_read(path, L->o->dir_glob, &dl, err));
    if (dl.skipped > 0)
        rk_note(L->o->note, L->o->note_ud, "%.300s: read %zu rating file%s, skipped %zu other%s (%s%s)%s", path, dl.n,
                dl.n == 1 ? "" : "s", dl.skipped, dl.skipped == 1 ? "" : "s", dl.skipped_names,
                strlen(dl.skipped_names) + 8 >= sizeof dl.skipped_names ? ", ..." : "",
                L->o->dir_glob == NULL ? "; --dir-glob PATTERN picks files by name" : "");
    rk_status st = RK_OK;
    for (size_t k = 0; k < dl.n && st == RK_OK; k++) st = load_path(L, dl.path[k], err);
    rk_dirlist_free(&dl);
    return st;
}

static void loader_free(loader *L)
{
    for (int k = 0; k < L->nch_cap; k++) rk_chunk_free(&L->ch[k]);
    free(L->ch);
    L->ch = NULL;
    L->nch_cap = 0;
}

static void loader_init(loader *L, const rk_load_opts *o, rk_rows *out, rk_load_report *rep,
                        rk_load_progress *pg)
{
    memset(L, 0, sizeof *L);
    L->pg = pg;
    memset(rep, 0, sizeof *rep);
    L->o = o;
    L->nt = o->threads > 0 ? o->threads : rk_omp_max_threads();
    if (L->nt < 1) L->nt = 1;
    L->line_max = o->line_max > 0 ? o->line_max : RK_LOAD_LINE_MAX;
    L->out = out;
    L->rep = rep;
    L->first_file = 1;
}

rk_status rk_load_paths(const char *const *paths, int n_paths, const rk_load_opts *o, rk_rows *out,
                        const rk_rows *before, rk_load_report *rep, rk_load_progress *pg, rk_error *err)
{
    loader L;
    rk_status st = RK_OK;
    loader_init(&L, o, out, rep, pg);
    L.held_before = before != NULL ? rows_held(before) : 0.0;
    L.feed = before == NULL && o->feed.ready != NULL ? &o->feed : NULL; /* the training files' rows */
    for (int k = 0; k < n_paths && st == RK_OK; k++) {
        struct stat sb;
        L.file_index = k;
        const int dir = paths[k] != NULL && strcmp(paths[k], "-") != 0 && stat(paths[k], &sb) == 0 &&
                        S_ISDIR(sb.st_mode);
        /* several files would grow rows sized for the first by moving huge pages; a budget has its own rules */
        L.presize = n_paths == 1 && !dir && o->mem_limit == 0;
        if (paths[k] == NULL) st = rk_error_set(err, RK_E_ARG, "no file name given");
        else st = dir ? load_dir(&L, paths[k], err) : load_path(&L, paths[k], err);
    }
    feed_hold(&L, st == RK_OK);
    loader_free(&L);
    return st;
}

/* ---- a shard of a file (rk_load_shard.c) ---------------------------------------- */

/* Open a regular file as a source of bytes [from, to) (to 0: its end). */
static rk_status open_part(const char *path, int nt, int64_t from, int64_t to, rk_src *s, rk_error *err)
{
    memset(s, 0, sizeof *s);
    s->name = path;
    s->fd = open(path, O_RDONLY);
    if (s->fd < 0) return rk_error_set(err, RK_E_IO, "cannot open %s: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(s->fd, &sb) != 0 || !S_ISREG(sb.st_mode) || (to > 0 && to > sb.st_size)) {
        close(s->fd);
        s->fd = -1;
        return rk_error_set(err, RK_E_IO, "%s is not the regular file of %lld bytes it was", path, (long long)to);
    }
    s->nt = nt;
    s->seekable = 1;
    s->fsize = sb.st_size;
    s->fpos = (off_t)from;
    s->fstop = (off_t)to;
    return RK_OK;
}

rk_status rk_load_detect_file(const rk_load_opts *o, const char *path, rk_fmt *f, size_t *skip_bytes,
                              int64_t *skip_lines, rk_error *err)
{
    loader L;
    rk_rows none;
    rk_load_report rep;
    rk_load_progress pg = {0.0, 0.0};
    rk_src s;
    memset(&none, 0, sizeof none);
    loader_init(&L, o, &none, &rep, &pg);
    RK_FORWARD(open_part(path, L.nt, 0, 0, &s, err));
    s.line_max = L.line_max;
    const size_t block = block_bytes(&L); /* the first block load_src detects the format on */
    const char *p;
    size_t n;
    int last;
    rk_status st = rk_src_next(&s, block > RK_DETECT_BYTES ? block : RK_DETECT_BYTES, &p, &n, &last, &rep.bytes, err);
    if (st == RK_OK) st = rk_detect(o, path, p, n, last, f, skip_bytes, skip_lines, err);
    free(s.buf);
    close(s.fd);
    return st;
}

rk_status rk_load_range(const rk_load_opts *o, const char *path, const rk_fmt *f, int64_t from, int64_t to,
                        int64_t line0, rk_rows *out, rk_load_report *rep, rk_load_progress *pg, rk_error *err)
{
    loader L;
    rk_src s;
    loader_init(&L, o, out, rep, pg);
    L.given = f;
    L.given_line = line0;
    L.presize = o->mem_limit == 0;
    rk_status st = open_part(path, L.nt, from, to, &s, err);
    if (st == RK_OK && from < to) st = load_src(&L, &s, err);
    free(s.buf);
    if (s.fd >= 0) close(s.fd);
    loader_free(&L);
    return st;
}

rk_status rk_load_memory(const rk_load_opts *o, const char *name, const char *buf, size_t len, rk_rows *out,
                         rk_load_report *rep, rk_load_progress *pg, rk_error *err)
{
    loader L;
    rk_src s;
    memset(&s, 0, sizeof s);
    s.name = name != NULL ? name : "<buffer>";
    s.fd = -1;
    s.mem = buf != NULL ? buf : "";
    s.mem_len = buf != NULL ? len : 0;
    loader_init(&L, o, out, rep, pg);
    const rk_status st = load_src(&L, &s, err);
    loader_free(&L);
    return st;
}
