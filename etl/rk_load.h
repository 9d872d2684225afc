/* rk_load.h — reading rating files into dense triples (prefix rk_load_).
 *
 * Formats (CONTRACT.md §1), detected from the first bytes unless given:
 *   movielens  CSV with header userId,movieId,rating,timestamp (LF or CRLF)
 *   dat        user::item::rating::timestamp
 *   tsv        user<TAB>item<TAB>rating<TAB>timestamp, no header
 *   netflix    "MOVIEID:" lines, then "CustomerID,Rating,YYYY-MM-DD" lines; a
 *              file, several files, or a directory of per-movie files
 *   csv        generic delimited text: delimiter, header, column selection
 * All delimited text is parsed with libcsv, except plain numeric lines
 * ("1,10,4.5,964982703"), which a fast path takes when the layout is
 * user,item,rating[,time] with a one-byte delimiter (movielens, tsv, csv):
 * it yields exactly what libcsv would, and hands any other line to libcsv.
 * Files are read in blocks, split at line boundaries and parsed in parallel
 * (OpenMP), one parser per chunk, straight into the merged arrays, so memory
 * beyond the ratings themselves is bounded by the block size.  A lone regular
 * file's arrays are reserved at once from its size (in huge pages; the tenth
 * reserved beyond the estimate is address space that is never touched);
 * several files', a directory's, a pipe's or a compressed file's, and any
 * under mem_limit, grow as they fill.
 *
 * A malformed line (wrong field count, non-numeric or non-finite rating, a
 * rating beyond a float's range (|r| >= 2^128 - 2^103, which a float would
 * store as infinity), rating outside the scale given, empty or overlong id, a
 * NUL byte in any field) is an error "FILE:LINE: reason" (RK_E_PARSE) unless
 * skip_bad_lines is set: then it is skipped and counted in the report.  A
 * line break inside a quoted field is not supported (it is reported as a bad
 * line), nor is a quote left open at the end of the file.  Ids are bytes:
 * invalid UTF-8 is accepted as it is; a UTF-8 byte order mark at the start of
 * a file is skipped.  LF, CRLF and a lone CR all end a row (line numbers count
 * LFs).  A regular file whose size changes while it is read (truncated, or
 * still being written) is RK_E_IO "FILE changed size while it was read".
 */
#ifndef RK_LOAD_H
#define RK_LOAD_H

#include <stdint.h>
#include <stddef.h>
#include "rk_status.h"
#include "rk_csr.h"
#include "rk_ids.h"
#include "rk_progress.h"
#include "rk_note.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rk_format {
    RK_FMT_AUTO = 0,
    RK_FMT_MOVIELENS,
    RK_FMT_DAT,
    RK_FMT_TSV,
    RK_FMT_NETFLIX,
    RK_FMT_CSV
} rk_format;

/*! rk_format_parse() : "auto", "movielens", "dat", "tsv", "netflix", "csv".
 *  @return RK_OK or RK_E_ARG. */
rk_status rk_format_parse(const char *name, rk_format *out);
const char *rk_format_name(rk_format f);

/* A reader of the training rows beside the parse (the GPU's upload while
 * later blocks are parsed).  The loader calls it from the thread that
 * called the loader:
 *   ready(ud, u, i, r, cap, from, to): the training files' rows [from, to)
 *     are final, in file order: each id's integer value and the rating.
 *     Every call hands the same arrays (of cap rows), and rows that follow
 *     the last call's;
 *   hold(ud, done): before the rows move or change.  done 1: the training
 *     files are read, and the rows handed are all of them; done 0: what was
 *     handed is no longer valid.  ready is not called again.  hold returns
 *     when nothing reads the rows any more;
 *   release(ud): before the rows' memory is freed or moved (after hold);
 *     returns when the reader has let go of it (a GPU's registration of
 *     the pages undone).  NULL: nothing to let go.
 * Only while every id is an integer: a string id, or rows that must grow
 * (several files, a memory limit, a short estimate), end it with hold(ud, 0).
 * ready NULL: no reader. */
typedef struct rk_rows_feed {
    void (*ready)(void *ud, const int64_t *u, const int64_t *i, const float *r, int64_t cap, int64_t from,
                  int64_t to);
    void (*hold)(void *ud, int done);
    void (*release)(void *ud);
    void *ud;
} rk_rows_feed;

/* Processes that share the parse of a large file (an MPI run's ranks;
 * rk_load_shard.c).  When size > 1 every process calls the loader with the
 * same options and files; a lone, regular, uncompressed training or test
 * file of min_bytes or more, in any format but netflix, without a memory
 * limit, is then parsed in parts: process r reads the r-th line-aligned
 * byte range (the header found by process 0 on the file's first block, as
 * a whole load finds it), and the rows are gathered on every process in
 * file order, the report's counts and bad lines as one process would give
 * them.  Anything else, and any failure of a part (a bad line without
 * skip_bad_lines, a quoted row across a range's end), makes every process
 * read the file whole, which gives one process's result and message.  The
 * loader calls the collectives in the same order on every process:
 *   allgather: every process's n values of mine into all (size * n, in
 *     process order);
 *   bcast: root's buf[0..bytes) into every process's buf;
 * both return RK_OK or a failure (err set) that ends the load. */
#define RK_LOAD_GROUP_MAX 256 /* a larger group reads its files whole */

typedef struct rk_load_group {
    int rank, size;         /* size <= 1: every file is read whole */
    int64_t min_bytes;      /* smaller files are read whole by every process */
    rk_status (*allgather)(void *ud, const int64_t *mine, int n, int64_t *all, rk_error *err);
    rk_status (*bcast)(void *ud, void *buf, size_t bytes, int root, rk_error *err);
    void *ud;
} rk_load_group;

typedef struct rk_load_opts {
    rk_format format;     /* RK_FMT_AUTO: detect from the first bytes */
    char delimiter;       /* csv: field delimiter; 0 = guess (, ; TAB space) */
    int header;           /* csv: -1 guess, 0 no header line, 1 header line */
    const char *columns;  /* csv: "user,item,rating[,time]" as 1-based positions
                             or header names; NULL = 1,2,3 (and 4 as time when
                             a line has exactly 4 fields) */
    int have_scale;       /* --rating-scale given: ratings outside are bad lines */
    double scale_min, scale_max;
    int skip_bad_lines;   /* skip and count bad lines instead of failing */
    int want_time;        /* keep timestamps (rk_triples.time); 0 = drop them */
    int threads;          /* parser threads; 0 = OpenMP's default */
    size_t chunk_bytes;   /* bytes per parser chunk; 0 = default (a quarter of
                             a thread's share of a block, at most 8 MiB). Tests
                             use tiny values to exercise chunk boundaries */
    int no_fast_path;     /* tests: libcsv for every line */
    size_t line_max;      /* bytes of one line at most; a longer one (or a
                             quoted row over that many bytes) is an error
                             with its line, so that endless or binary input
                             stops with bounded memory.  0: RK_LOAD_LINE_MAX */
    size_t mem_limit;     /* bytes the loader may hold at most (--memory-limit):
                             its rows, id strings, the block being read and a
                             decoder's bytes ahead; the block asked for and a
                             decoder's queue are sized to it.  Past it the load
                             stops with RK_E_NOMEM naming the file, the line
                             and the limit.  0: no limit */
    const char *dir_glob; /* a directory input: its files whose names match
                             (fnmatch); NULL: the rule of rk_dirlist.h */
    rk_note_fn note;      /* notes (a directory's skipped files); NULL: none */
    void *note_ud;
    rk_progress_fn progress; /* stage "parse" in "bytes" (total: the files'
                                sizes, 0 when one is not known), from one
                                thread, a few times per block; NULL: none */
    void *progress_ud;
    rk_rows_feed feed;    /* the training rows as they are parsed; zero: none
                             (a file read in parts hands none: hold(ud, 1)) */
    rk_load_group group;  /* the processes sharing the parse; zero: none */
} rk_load_opts;

/* The default limit of a line's bytes (rk_load_opts.line_max). */
#define RK_LOAD_LINE_MAX ((size_t)1 << 20)

/*! rk_load_opts_default() : auto format, guesses, no scale, strict, no time. */
void rk_load_opts_default(rk_load_opts *o);

/* How many bad lines are remembered by position. */
#define RK_LOAD_BAD_KEPT 10

typedef struct rk_bad_line {
    int file;       /* index into the paths given (0 for a buffer) */
    int64_t line;   /* 1-based line number in that file */
} rk_bad_line;

typedef struct rk_load_report {
    rk_format format;         /* format used (after detection) */
    char delimiter;           /* delimiter used for csv */
    int has_time;             /* the layout has a time column (else times read as 0) */
    int64_t bytes;            /* bytes read */
    int64_t lines;            /* lines read, blank lines and headers included */
    int64_t ratings;          /* ratings parsed (before duplicates are resolved) */
    int64_t skipped_lines;    /* bad lines skipped (skip_bad_lines) */
    int n_bad_kept;           /* entries used in bad[] */
    rk_bad_line bad[RK_LOAD_BAD_KEPT]; /* the first skipped lines */
    char first_bad_reason[160];        /* why the first one was bad */
    double read_parse_s;      /* reading and parsing (wall seconds) */
    int parts;                /* processes that parsed a part of it (rk_load_group); 0: read whole */
} rk_load_report;

/* A loaded data set: triples in file order (duplicates NOT yet resolved) with
 * dense indices into maps that cover the training and the test files. */
typedef struct rk_dataset {
    rk_idmap *users;
    rk_idmap *items;
    rk_triples train;          /* the RATINGS files */
    rk_triples test;           /* the --test file (n == 0 when none) */
    rk_load_report train_report;
    rk_load_report test_report;
    double ids_s;              /* mapping raw ids to dense indices (wall seconds) */
} rk_dataset;

/*! rk_load_dataset() : read the n_paths training files (for netflix a path may
 *  be a directory: its regular files are read in name order) and, when
 *  test_path is not NULL, the test file, with the same options, into *out.
 *  Paths named "-" read standard input.
 *  @return RK_OK; RK_E_IO (missing/unreadable file, message names it);
 *  RK_E_PARSE ("FILE:LINE: reason"); RK_E_EMPTY (no training ratings, or a
 *  directory without files); RK_E_ARG (contradictory options, e.g. --columns
 *  that name no rating); RK_E_RANGE (more than INT32_MAX distinct users or
 *  items: "too many user ids: ..."); RK_E_NOMEM.  On failure *out holds
 *  nothing. */
rk_status rk_load_dataset(const char *const *paths, int n_paths,
                          const char *test_path, const rk_load_opts *o,
                          rk_dataset *out, rk_error *err);

/*! rk_load_buffer() : as rk_load_dataset for one training "file" held in
 *  memory (`name` is used in messages); no test set.  For tests and callers
 *  that already hold the bytes. */
rk_status rk_load_buffer(const char *name, const char *buf, size_t len,
                         const rk_load_opts *o, rk_dataset *out, rk_error *err);

void rk_dataset_free(rk_dataset *d);

#ifdef __cplusplus
}
#endif
#endif /* RK_LOAD_H */
