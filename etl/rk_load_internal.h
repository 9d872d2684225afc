/* rk_load_internal.h — what the loader's files share (etl/ only, not installed).
 *
 * The loader works in three stages:
 *   rk_detect.c  the first bytes of a file -> an rk_fmt (format, delimiter,
 *                columns, field count) and the header to skip;
 *   rk_parse.c   one chunk of whole lines -> rows of raw ids and ratings
 *                (one libcsv parser per chunk, run in parallel), with
 *   rk_parse_fast.c  the fast path for plain numeric lines;
 *   rk_load.c    blocks, chunks, merging in file order, bad-line reports,
 *                reading the blocks through rk_src.c (a file or memory).
 * rk_ids.c then turns the raw ids of all files into dense indices.
 *
 * A raw id is an int64: the value itself when the id is a canonical integer,
 * else an offset into the rows' arena, where a length byte precedes the id's
 * bytes, with the id's tag byte set.  Tag arrays stay NULL until the first
 * non-integer id, so the common all-integer case costs nothing.
 */
#ifndef RK_LOAD_INTERNAL_H
#define RK_LOAD_INTERNAL_H

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include "rk_load.h"

/* Ratings as parsed, in file order, before ids become dense indices. */
typedef struct rk_rows {
    int64_t n, cap;
    int64_t *u, *i;       /* raw ids (see above) */
    uint8_t *utag, *itag; /* 1: the id is a string in arena; NULL: none is */
    float *r;
    int64_t *t;           /* NULL unless timestamps are kept */
    char *arena;          /* string ids: a length byte, then the bytes */
    size_t alen, acap;
    int64_t cap_max;      /* rk_rows_reserve grows to at most this many rows
                             unless asked for more (a memory budget); 0: none */
    /* The range of the integer ids of rows [0, ranged): lo[0..1] and
     * hi[0..1] for users and items (lo > hi: none), gathered by the loader
     * as each chunk's rows are placed, so that the ids stage need not pass
     * over the columns for it.  Used only where ranged == n. */
    int64_t lo[2], hi[2];
    int64_t ranged;
} rk_rows;

/* How one file is parsed (rk_detect.c fills it). */
typedef struct rk_fmt {
    rk_format format;
    unsigned char delim;
    int nfields;          /* fields a data line has (libcsv fields) */
    int cu, ci, cr, ct;   /* 0-based columns; ci < 0 for netflix, ct < 0: none */
    int collapse;         /* delimiter ' ': empty unquoted fields do not count */
    int dat;              /* user::item::rating::time: odd fields must be empty */
    int netflix;
    int want_time;
    int have_scale;
    double smin, smax;
    int skip_bad;
    int fast;             /* plain lines may take the fast path (rk_parse_fast.c) */
} rk_fmt;

#define RK_REASON_CAP 160

/* Netflix movie state at the end of a chunk / of what was merged so far. */
enum { RK_MV_NONE = 0, RK_MV_OK = 1, RK_MV_BAD = 2 };

/* One chunk of whole lines and what parsing it produced.
 *
 * Rows are written straight into the merged arrays: rk_load.c gives the chunk
 * `room` rows of `home` from row `base` (its line count, which bounds its rows
 * unless a line holds a lone CR).  A chunk that needs more moves its rows to
 * `own` and goes on there (it has "spilled"); the merge copies such rows, and
 * rows that must move because an earlier chunk left a gap (blank or bad
 * lines, netflix MOVIEID: lines).  In the common case nothing is copied. */
typedef struct rk_chunk {
    const char *p;        /* input: the bytes (whole lines; the last one may */
    size_t len;           /* lack its newline only at the end of a file) */
    rk_rows *home;        /* set by rk_load.c before parsing */
    int64_t base, room;
    /* where the parser puts row k: u[k], i[k], r[k], t[k] (t NULL when no
     * time is kept), k < cap: home's arrays from base, or own's */
    int64_t *u, *i;
    float *r;
    int64_t *t;
    int64_t n, cap;       /* rows parsed, room in u/i/r/t */
    uint8_t *utag, *itag; /* row k's id is a string (in own.arena); NULL
                             until the chunk's first string id; cap entries */
    int spilled;          /* the rows are in own */
    rk_rows own;          /* spilled rows; the string ids' arena (always) */
    int64_t lines;        /* lines in the chunk (rk_load.c counts them) */
    int64_t nbad;         /* bad lines */
    int nbad_kept;
    int64_t bad[RK_LOAD_BAD_KEPT]; /* 0-based lines in the chunk */
    char reason[RK_REASON_CAP];    /* why the first bad line was bad */
    /* netflix: rating rows before the chunk's first MOVIEID: line are the
     * first nlead rows; their item comes from an earlier chunk. */
    int64_t nlead, lead_cap;
    int64_t *lead_line;   /* their 0-based lines */
    int mv_state;         /* RK_MV_*: the chunk's last MOVIEID: line */
    int mv_tag;
    int64_t mv_v;         /* its id (an offset into own.arena when mv_tag) */
    /* a quoted field still open at the chunk's end (its last newlines were
     * inside quotes): the open row begins at p[open_at], after open_lines
     * lines; -1 when the chunk ends on a row boundary.  rk_load.c then
     * parses it again together with the next chunk, or carries the open row
     * into the next block. */
    int64_t open_at, open_lines;
    int64_t long_at;      /* the first line over the limit begins at p[long_at]; -1: none */
    rk_status status;     /* RK_OK, or RK_E_NOMEM / RK_E_INTERNAL */
    /* the merge's plan (rk_load.c): rows [norph, n) go to home[dst...]; the
     * first nlead - norph of them get the movie fill_*; own.arena goes to
     * home->arena + abase, the fill movie's string (fill_tag) to fill_off */
    int64_t dst, norph;
    int fill_tag;
    int64_t fill_v;
    size_t fill_len, abase;
    char fill_s[RK_ID_MAX + 1];
    int64_t lo[2], hi[2]; /* the placed rows' integer ids, user and item (lo > hi: none) */
} rk_chunk;

/* rk_parse.c */
/*! rk_parse_chunk() : parse c->p[0..len) into c (c->home, base and room set).
 *  The fast path (rk_parse_fast.c) takes the plain lines when f->fast. */
void rk_parse_chunk(const rk_fmt *f, rk_chunk *c);

/*! rk_parse_chunk_pair() : rk_parse_chunk of c0 and of c1 (NULL: c0
 *  alone), the same rows, with the two chunks' first plain lines taken in
 *  one loop (rk_fast_lines2). */
void rk_parse_chunk_pair(const rk_fmt *f, rk_chunk *c0, rk_chunk *c1);
void rk_chunk_free(rk_chunk *c);
/* Room for row c->n: spill to c->own when home's room is used up.  0 or -1. */
int rk_chunk_grow(rk_chunk *c);
void rk_rows_free(rk_rows *r);
/* Grow r to hold at least `need` rows (time arrays when want_time), doubling
 * up to r->cap_max when that is set. 0 or -1. */
int rk_rows_reserve(rk_rows *r, int64_t need, int want_time);
/* Rows for a whole file at once, in huge pages (rk_mem_alloc), before the
 * first block is parsed: `bytes` (the file's size) over the line length of
 * the first RK_PRESIZE_SAMPLE bytes of sample[0..len), a tenth more.  Only
 * while r has no rows; nothing happens when memory or lines are short.  The
 * doubling of rk_rows_reserve would fault in small pages, give back a block at
 * each step and leave a quarter of the last one unused on average; at Netflix
 * size this cut the load by 0.06-0.15 s (BENCHMARKS.md).  @return 1 when
 * reserved, else 0. */
#define RK_PRESIZE_SAMPLE ((size_t)4 << 20)
int rk_rows_presize(rk_rows *r, const char *sample, size_t len, double bytes, int want_time);
/* Make sure r has tag arrays (zero-filled). 0 or -1. */
int rk_rows_want_tags(rk_rows *r);
/* The merge of a block's chunks into out (rk_rows.c), parallel over chunks:
 * rk_rows_set_aside copies a chunk's rows that must move (an earlier chunk
 * left a gap) into its own arrays first (c->status RK_E_NOMEM on failure);
 * rk_rows_place puts them at c->dst (string ids offset into out's arena,
 * netflix rows given their movie) and sets c->lo, c->hi. */
void rk_rows_set_aside(const rk_rows *out, rk_chunk *c);
void rk_rows_place(rk_rows *out, rk_chunk *c);
/* The placed chunks' ranges into out's (rk_rows.lo/hi), out's rows [n, total) now theirs. */
void rk_rows_add_ranges(rk_rows *out, const rk_chunk *ch, int nch, int64_t total);
/* Append a string to r's arena; @return its offset or -1 (no memory). */
int64_t rk_rows_put_string(rk_rows *r, const char *s, size_t len);

/* Progress over the training and test files together. */
typedef struct rk_load_progress {
    double done, total;
} rk_load_progress;

/* rk_load.c: the files (rk_load_set.c reads them as a data set). */
/*! rk_load_paths() : the n_paths files (a directory: its rating files)
 *  into *out, whose rows hold what *rep reports; `before` (may be NULL):
 *  the rows of the files read before (the training files' for --test), for
 *  the memory budget; they also end the training rows' feed.  @return
 *  RK_OK, RK_E_IO, RK_E_PARSE, RK_E_NOMEM, RK_E_ARG. */
rk_status rk_load_paths(const char *const *paths, int n_paths, const rk_load_opts *o, rk_rows *out,
                        const rk_rows *before, rk_load_report *rep, rk_load_progress *pg, rk_error *err);
/*! rk_load_memory() : as rk_load_paths for bytes in memory, named `name`. */
rk_status rk_load_memory(const rk_load_opts *o, const char *name, const char *buf, size_t len, rk_rows *out,
                         rk_load_report *rep, rk_load_progress *pg, rk_error *err);
/*! rk_load_compressed_kind() : the compression a regular file's first
 *  bytes announce (rk_zsrc_kind; RK_ZSRC_NONE when it has fewer than 4). */
int rk_load_compressed_kind(int fd);

/* rk_load.c: a shard of a file, for rk_load_shard.c. */
/*! rk_load_detect_file() : the format of the regular file path, detected on
 *  the first block a whole load of it would read (so the same), and the
 *  header's bytes and lines to skip.  @return as rk_detect, RK_E_IO. */
rk_status rk_load_detect_file(const rk_load_opts *o, const char *path, rk_fmt *f, size_t *skip_bytes,
                              int64_t *skip_lines, rk_error *err);
/*! rk_load_range() : the rows of bytes [from, to) of the regular file path
 *  (from and to line starts, or to the file's end), parsed with *f, into
 *  *out and *rep; line numbers are line0 plus the range's own.  A quoted
 *  row open at `to` is RK_E_PARSE (the range cannot end there).  *rep holds
 *  the counts and bad lines; the format is *f's.  @return as a whole
 *  file's load. */
rk_status rk_load_range(const rk_load_opts *o, const char *path, const rk_fmt *f, int64_t from, int64_t to,
                        int64_t line0, rk_rows *out, rk_load_report *rep, rk_load_progress *pg, rk_error *err);

/* rk_load_shard.c */
/*! rk_load_shard() : path's rows read by o->group's processes, each a
 *  line-aligned byte range, then gathered in file order on every one
 *  (*sharded 1), exactly as a whole load gives them; *sharded 0 (and
 *  nothing in *out) where the file or the options do not allow it
 *  (rk_load.h, rk_load_group) or where a process failed: the caller then
 *  loads the file whole, and so reports the failure as one process would.
 *  Collective over the group whenever o->group.size > 1, whatever path and
 *  able: a process that cannot take part (able 0: its earlier files
 *  failed) says no, and every process reads whole.  @return RK_OK, or
 *  RK_E_DIST (a collective failed). */
rk_status rk_load_shard(const rk_load_opts *o, const char *path, int able, rk_rows *out, rk_load_report *rep,
                        rk_load_progress *pg, int *sharded, rk_error *err);


/*! rk_csv_realloc() : libcsv's realloc, growing a buffer geometrically
 *  (csv_set_realloc_func): a huge field costs a few reallocs, not one per
 *  128 bytes. */
void *rk_csv_realloc(void *ptr, size_t n);

/*! rk_parse_rating() : a finite decimal in s[0..n) (s[n] must be readable
 *  and is not part of it) that a float holds.  @return 0 ok, 1 not a
 *  number, 2 not finite (nan, inf, 1e999), 3 finite but beyond a float's
 *  range (1e39: it would be stored as infinity). */
int rk_parse_rating(const char *s, size_t n, double *out);

/* rk_parse_rating's exact case: [-]digits[.digits] with a mantissa below
 * 2^53 and at most 22 fraction digits.  m and 10^k are then doubles and one
 * IEEE division rounds correctly, so the result equals strtod's.
 * @return 0 and the value, or -1: not such a number (rk_parse_rating then
 * asks strtod). */
static inline int rk_parse_rating_plain(const char *s, size_t n, double *out)
{
    static const double pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    size_t k = 0;
    int neg = 0, dot = 0, nd = 0, frac = 0;
    uint64_t m = 0;
    if (n > 0 && s[0] == '-') {
        neg = 1;
        k = 1;
    }
    for (; k < n; k++) {
        unsigned d = (unsigned)(unsigned char)s[k] - '0';
        if (d <= 9) {
            if (m >= (UINT64_C(1) << 53) / 10) return -1;
            m = m * 10 + d;
            nd++;
            frac += dot;
        } else if (s[k] == '.' && !dot) {
            dot = 1;
        } else {
            return -1;
        }
    }
    if (nd == 0 || frac > 22) return -1;
    double v = (double)m;
    if (frac > 0) v /= pow10[frac];
    *out = neg ? -v : v;
    return 0;
}

/*! rk_parse_time() : an integer or a YYYY-MM-DD date (as Unix seconds).
 *  @return 0 ok, 1 not a time. */
int rk_parse_time(const char *s, size_t n, int64_t *out);

/* rk_parse_time's integer form: [-]digits, 1 to 18 digits.  @return 0 or 1. */
static inline int rk_parse_time_int(const char *s, size_t n, int64_t *out)
{
    size_t k = 0;
    int neg = 0;
    if (n > 0 && s[0] == '-') {
        neg = 1;
        k = 1;
    }
    if (k == n || n - k > 18) return 1;
    int64_t v = 0;
    for (; k < n; k++) {
        unsigned d = (unsigned)(unsigned char)s[k] - '0';
        if (d > 9) return 1;
        v = v * 10 + (int64_t)d;
    }
    *out = neg ? -v : v;
    return 0;
}

/* rk_parse_fast.c */
/*! rk_fast_layout() : 1 when the fast path may take lines of f's files. */
int rk_fast_layout(const rk_fmt *f);

/*! rk_fast_lines() : take the plain lines from p on into c's rows, up to the
 *  first line the fast path does not take.  `end` is just past a newline:
 *  the lines from p to end are whole.  *line counts the lines taken.  For
 *  netflix, `movie` is the item of the rating lines (an integer id).
 *  @return where it stopped (end, or the start of a line for libcsv); on
 *  running out of memory c->status is set. */
const char *rk_fast_lines(const rk_fmt *f, rk_chunk *c, const char *p, const char *end,
                          int64_t *line, int64_t movie);

/*! rk_fast_lines2() : rk_fast_lines over two chunks at once (not netflix):
 *  from p[k] up to end[k] (each just past a newline), each line's row into
 *  c[k] and line[k] advanced, p[k] moved past the lines taken.  It stops at
 *  the first line either chunk's fast path does not take, at either end, or
 *  where either chunk's rows are full (c->cap; it never grows them): the
 *  rest is rk_fast_lines' and libcsv's. */
void rk_fast_lines2(const rk_fmt *f, rk_chunk *const c[2], const char *p[2], const char *const end[2],
                    int64_t line[2]);

/* A canonical integer: optional '-', digits, no leading zero (except "0"),
 * no "-0", fits int64.  @return 1 and the value, else 0. */
static inline int rk_parse_canon_int(const char *s, size_t n, int64_t *out)
{
    size_t k = 0;
    int neg = 0;
    if (n == 0) return 0;
    if (s[0] == '-') {
        neg = 1;
        k = 1;
        if (n == 1) return 0;
    }
    if (s[k] == '0') {
        if (n != k + 1 || neg) return 0;
        *out = 0;
        return 1;
    }
    if (n - k > 19) return 0;
    uint64_t v = 0;
    for (; k < n; k++) {
        unsigned d = (unsigned)(unsigned char)s[k] - '0';
        if (d > 9) return 0;
        v = v * 10 + d;
    }
    /* 19 digits cannot overflow uint64; int64 range checked here */
    if (neg) {
        if (v > (uint64_t)INT64_MAX + 1) return 0;
        *out = (int64_t)(0 - v);
    } else {
        if (v > (uint64_t)INT64_MAX) return 0;
        *out = (int64_t)v;
    }
    return 1;
}

/* rk_detect.c */
enum { RK_COL_KIND_NONE = 0, RK_COL_KIND_USER, RK_COL_KIND_ITEM, RK_COL_KIND_RATING, RK_COL_KIND_TIME };
/*! rk_detect_column_kind() : the column a header name s[0..n) names (the
 *  names rk_detect knows: user, userId, movieId, rating, timestamp, ...;
 *  case, '_', '-', ' ' and quotes ignored), or RK_COL_KIND_NONE. */
int rk_detect_column_kind(const char *s, size_t n);

/*! rk_detect() : resolve how the file `name` is parsed from its first bytes
 *  p[0..len) (whole lines unless at_eof).  *skip_bytes and *skip_lines are the
 *  leading blank lines and header line to pass over.
 *  @return RK_OK, RK_E_ARG (options that cannot apply), RK_E_NOMEM. */
rk_status rk_detect(const rk_load_opts *o, const char *name, const char *p,
                    size_t len, int at_eof, rk_fmt *f, size_t *skip_bytes,
                    int64_t *skip_lines, rk_error *err);

/* rk_ids.c */
/* One column of raw ids to map; dense (may be NULL) receives the indices.
 * With over set and dense NULL the column's indices are wanted too, and its
 * ids may be lost for them: where the map is a direct table rk_ids_build
 * writes the indices over v's block (malloc'd): dense is then that block and
 * took is 1, and v must be neither used nor freed again; rk_ids_cut then
 * cuts it to 4n bytes (realloc).  Otherwise dense is a new block (rk_mem_alloc).  The
 * caller owns dense in both cases (NULL again after a failure, when the ids
 * may be lost too: the offsets go over them as the bitmap is set).  The
 * loader's raw id columns thus become the triples' columns: no 4n-byte block
 * per column is first written, no 8n-byte one freed. */
typedef struct rk_idcol {
    const int64_t *v;
    const uint8_t *tag;   /* NULL: all integers */
    const char *arena;
    int64_t n;
    int32_t *dense;
    int over;
    int took;             /* out: dense is v's block */
    int ranged;           /* lo and hi are the least and greatest integer id
                             (the loader's rk_rows): no pass to find them */
    int64_t lo, hi;
} rk_idcol;

/*! rk_ids_build() : the map of every id in the columns (numeric order when
 *  no column has a string id, else byte order), and the dense index of each
 *  entry.  @return RK_OK, RK_E_RANGE (more than INT32_MAX ids), RK_E_NOMEM. */
rk_status rk_ids_build(rk_idcol *cols, int ncols, int nthreads, rk_idmap **out,
                       rk_error *err);

/*! rk_ids_cut() : the blocks of the columns whose indices went over their
 *  ids (took) cut to 4n bytes; a block that cannot shrink stays as it is. */
void rk_ids_cut(rk_idcol *cols, int ncols);

/*! rk_ids_test_limit() : tests only: rk_ids_build refuses more than max
 *  distinct ids (RK_E_RANGE) instead of INT32_MAX; max <= 0 restores it.
 *  Not thread-safe: set it before loading. */
void rk_ids_test_limit(int32_t max);

/*! rk_ids_test_check_ranges() : tests only: with on set, rk_ids_build also
 *  passes over every ranged column and counts the columns whose range
 *  differs from the ids' (*wrong) and those checked (*checked), since on was
 *  last set.  Not thread-safe. */
void rk_ids_test_check_ranges(int on, int64_t *checked, int64_t *wrong);

#endif /* RK_LOAD_INTERNAL_H */
