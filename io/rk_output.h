/* rk_output.h — atomic output files (prefix rk_out_).
 *
 * CONTRACT.md §7.  A run's files are written under temporary names in the output
 * directory and renamed to their final names together by rk_out_commit, only
 * when every file was written completely; rk_out_abort (or a failed commit)
 * removes every temporary file.  A failed run therefore leaves no partial
 * file, and leaves earlier complete results alone.
 *
 * A file outside the folder (a saved model) can join the set (rk_out_file_at):
 * it is renamed in by the same commit, so a run's files, the model among them,
 * are all old or all new.
 *
 * An interrupted run (SIGINT, SIGTERM) never reaches rk_out_abort: for it the
 * module keeps a process-wide registry of every temporary file it (and
 * rk_mfile_save) created and every directory rk_out_open made, and
 * rk_out_unlink_pending removes them from a signal handler or a signal
 * thread.  See "Interrupted runs" below.
 */
#ifndef RK_OUTPUT_H
#define RK_OUTPUT_H

#include <stdio.h>
#include <stdint.h>
#include "rk_status.h"
#include "rk_ids.h"
#include "rk_knn.h"
#include "rk_topn.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rk_out rk_out; /* opaque: a directory and its pending files */

/* Files per run at most. */
#define RK_OUT_MAX_FILES 160

/*! rk_out_open() : start writing into `dir` (created, with parents, when
 *  missing) and lock it against other runs (an exclusive flock(2) on the
 *  folder until rk_out_free).  @return RK_OK, RK_E_IO (cannot
 *  create, not a directory, or locked by another process: the message says
 *  so), RK_E_NOMEM. */
rk_status rk_out_open(rk_out **out, const char *dir, rk_error *err);

/*! rk_out_file() : open the temporary file that will become dir/name.
 *  The stream belongs to `o`: write to it, then call rk_out_commit.
 *  @return RK_OK, RK_E_IO, RK_E_RANGE (too many files). */
rk_status rk_out_file(rk_out *o, const char *name, FILE **fp, rk_error *err);

/*! rk_out_file_at() : a pending file whose final name is `path`, anywhere
 *  (written as `path`.tmp.XXXXXX beside it), put in place by the commit with
 *  the folder's files, as one set (a saved model: a run's files are all old or
 *  all new).  Not listed by rk_out_names or rk_out_files.  @return RK_OK,
 *  RK_E_ARG (an empty path, one ending in '/', or opened twice), RK_E_IO,
 *  RK_E_RANGE, RK_E_NOMEM. */
rk_status rk_out_file_at(rk_out *o, const char *path, FILE **fp, rk_error *err);
/*! rk_out_commit() : rk_out_commit_set with no stale files. */
rk_status rk_out_commit(rk_out *o, rk_error *err);

/*! rk_out_commit_set() : flush, fsync and close every file, then put the
 *  run's files in place as one set: every final name that exists is first
 *  kept under a backup name (a hard link), the files named in stale[]
 *  (earlier runs' outputs this run does not write) are moved aside, then
 *  each temporary file is renamed to its final name.  When any step fails,
 *  everything is undone: the earlier files are back under their names, the
 *  run's are gone, so the folder holds the previous complete set.  On
 *  success the backups and the stale files are removed.  The whole is one
 *  critical section of the pending registry (an interruption waits for it).
 *  Test hook: RECKNN_COMMIT_FAULT=K makes the K-th step of the commit
 *  fail (EIO).  @return RK_OK or RK_E_IO naming the file. */
rk_status rk_out_commit_set(rk_out *o, const char *const *stale, int n_stale, rk_error *err);

/* A pending file's name, size and checksum (rk_out_files). */
typedef struct rk_out_info {
    char name[256];
    int64_t bytes;
    uint64_t xxh64;           /* XXH64 (seed 0) of the file's bytes */
} rk_out_info;

/*! rk_out_names() : the names of the pending files into info[].name (bytes
 *  and xxh64 0), in the order they were opened.  @return RK_OK or
 *  RK_E_RANGE (cap). */
rk_status rk_out_names(rk_out *o, rk_out_info *info, int cap, int *n, rk_error *err);

/*! rk_out_files() : flush every pending file and describe it into
 *  info[0 .. *n) (cap entries at most), in the order they were opened;
 *  files still open for writing are read back through their descriptors.
 *  @return RK_OK, RK_E_IO (a flush or read failed), RK_E_RANGE (cap). */
rk_status rk_out_files(rk_out *o, rk_out_info *info, int cap, int *n, rk_error *err);

/*! rk_out_abort() : close and remove every temporary file. */
void rk_out_abort(rk_out *o);

/*! rk_out_free() : abort what is pending and free o (NULL is fine). */
void rk_out_free(rk_out *o);

/*! rk_out_path_of() : @return the final path (dir/name) of a stream that
 *  rk_out_file opened and that is still open, for messages; NULL for any other
 *  stream.  The string lives until the stream's rk_out is committed or aborted. */
const char *rk_out_path_of(FILE *fp);

/* ---- Slices written by other processes ---------------------------------------
 *
 * Under mpirun every rank may format a slice of a streamed file (its users'
 * recommendations); the slices are written into rank 0's pending file at
 * their byte offsets, by the ranks that reach the file (a folder shared by
 * their hosts), by rank 0 for the others.  The file stays rank 0's: its
 * commit (or abort) puts it in place (or removes it) with the run's others. */

/*! rk_out_temp_of() : the temporary path of o's pending file whose stream is
 *  fp (what other processes open to write their slices), or NULL. */
const char *rk_out_temp_of(const rk_out *o, FILE *fp);

/*! rk_out_write_at() : buf[0..n) into the existing file path from byte off
 *  (opened without O_CREAT, written with pwrite, closed: on a shared file
 *  system the close sends the bytes to the server).  label names the file
 *  in messages.  @return RK_OK, RK_E_IO (cannot open, write or close). */
rk_status rk_out_write_at(const char *path, const char *label, int64_t off, const void *buf, size_t n,
                          rk_error *err);

/*! rk_out_read_at() : up to n bytes of path from byte off into buf, through a
 *  descriptor opened now (so that a shared file system shows what other
 *  hosts wrote and closed); *got: the bytes read (fewer past the end).
 *  @return RK_OK, RK_E_IO. */
rk_status rk_out_read_at(const char *path, const char *label, int64_t off, void *buf, size_t n, size_t *got,
                         rk_error *err);

/* ---- Interrupted runs --------------------------------------------------------
 *
 * The registry is a fixed table of RK_OUT_PENDING_MAX slots in static storage;
 * a slot's path is copied in when its file or directory is created, so that
 * removing them needs no allocation.  Creating a file and a commit's renames
 * are short critical sections (rk_out_pending_enter/leave); once
 * rk_out_unlink_pending ran, none starts again: every later rk_out_file,
 * rk_out_open, rk_out_commit and rk_mfile_save fails (RK_E_IO), so that a run
 * still going on another thread creates nothing new while the process exits. */

/* Temporary files and new directories registered at once, at most. */
#define RK_OUT_PENDING_MAX 256
/* Bytes of a registered path, NUL included. */
#define RK_OUT_PATH_MAX 4096

/*! rk_out_unlink_pending() : stop every output: refuse new temporary files
 *  and renames from now on, wait (at most half a second) for those under way
 *  on other threads, then unlink every registered temporary file and rmdir
 *  every registered directory that is empty, deepest first.  A commit whose
 *  renames had begun finishes them first, so a run's files are all old or all
 *  new.  Complete files already in place are never touched.
 *
 *  Async-signal-safe: it uses only C11 lock-free atomics, nanosleep, unlink
 *  and rmdir on paths stored in advance; it never allocates, locks or prints.
 *  Call it from a signal handler or a thread that waits for signals, then end
 *  the process (re-raise the signal with its default action, or _exit).  From
 *  a handler that interrupted a thread inside a critical section, that
 *  section's file may be left behind: a dedicated signal thread (sigwait) is
 *  the safer caller.  Idempotent. */
void rk_out_unlink_pending(void);

/*! rk_out_cancelled() : @return nonzero once rk_out_unlink_pending ran. */
int rk_out_cancelled(void);

/*! rk_out_pending_rearm() : undo the refusal of rk_out_unlink_pending (for
 *  tests that go on in the same process).  Not async-signal-safe. */
void rk_out_pending_rearm(void);

/*! rk_out_temp_create() : create a new file from tmpl (a path ending in
 *  "XXXXXX", filled in place as by mkstemp, mode 0600) and register it.
 *  label (kept by the caller until rk_out_temp_forget) names the file in
 *  messages.  @return RK_OK with *fd open for writing and *slot; RK_E_IO
 *  (cannot create; or after rk_out_unlink_pending), RK_E_RANGE (path of
 *  RK_OUT_PATH_MAX bytes or more, or a full registry). */
rk_status rk_out_temp_create(char *tmpl, const char *label, int *fd, int *slot, rk_error *err);

/*! rk_out_temp_closed() : the descriptor of slot is closed (slot < 0: no-op). */
void rk_out_temp_closed(int slot);

/*! rk_out_temp_forget() : the file or directory of slot was renamed, removed
 *  or is to stay: drop it from the registry (slot < 0: no-op). */
void rk_out_temp_forget(int slot);

/*! rk_out_dir_create() : mkdir(path, 0777) and register the new directory
 *  (left unregistered, silently, when the registry is full).  @return 0 and
 *  *slot (-1 when unregistered), or -1 with errno as mkdir sets it (EINTR
 *  after rk_out_unlink_pending, ENAMETOOLONG for RK_OUT_PATH_MAX bytes or more). */
int rk_out_dir_create(const char *path, int *slot);

/*! rk_out_pending_enter() : begin a critical section (renames into place
 *  that must not be torn apart).  @return 1, or 0 after rk_out_unlink_pending
 *  (nothing to leave then).  rk_out_pending_leave() : end it. */
int rk_out_pending_enter(void);
void rk_out_pending_leave(void);

/*! rk_out_neighbors() : write neighbors.csv rows
 *  "item,neighbor,rank,similarity,support" for every list in item order.
 *  @return RK_OK or RK_E_IO. */
rk_status rk_out_neighbors(FILE *fp, const rk_lists *l, const rk_idmap *items, rk_error *err);

/*! rk_out_predictions() : write predictions.csv rows
 *  "user,item,rating,prediction,neighbors_used" in query order. */
rk_status rk_out_predictions(FILE *fp, int64_t n, const int32_t *user,
                             const int32_t *item, const float *rating,
                             const double *pred, const int32_t *used,
                             const rk_idmap *users, const rk_idmap *items,
                             rk_error *err);

/* A recommendations.csv being written batch by batch (rk_topn_sink). */
typedef struct rk_out_recs rk_out_recs;

/*! rk_out_recs_open() : start recommendations.csv rows "user,rank,item,score"
 *  on fp (the header is written here); the id maps must outlive the writer.
 *  @return RK_OK, RK_E_IO, RK_E_NOMEM. */
rk_status rk_out_recs_open(rk_out_recs **w, FILE *fp, const rk_idmap *users, const rk_idmap *items, rk_error *err);

/*! rk_out_recs_write() : the rows of one batch, users in batch order, ranks
 *  from 1, scores with 9 significant digits (rk_topn_score).  Formatted by
 *  all threads, written in order.  Fits rk_topn_sink (ud = the writer).
 *  @return RK_OK, RK_E_IO, RK_E_INTERNAL (an index without a raw id). */
rk_status rk_out_recs_write(void *w, const rk_topn_batch *b, rk_error *err);

/*! rk_out_recs_rows() : @return the rows written so far. */
int64_t rk_out_recs_rows(const rk_out_recs *w);

/*! rk_out_recs_free() : free the writer (NULL is fine); fp stays open. */
void rk_out_recs_free(rk_out_recs *w);

/* Bytes of an id written as one CSV field at most (every byte a doubled
 * quote, and the two enclosing quotes). */
#define RK_OUT_FIELD_MAX (2 * RK_ID_MAX + 2)

/*! rk_out_csv_field() : the len bytes of s as one RFC 4180 field into dst
 *  (2 * len + 2 bytes of room): unchanged, or enclosed in double quotes with
 *  every quote doubled when s holds a comma, a double quote, a CR or an LF
 *  (or begins or ends with a space or tab, which some readers trim).
 *  @return the bytes written. */
size_t rk_out_csv_field(char *dst, const char *s, size_t len);

/*! rk_out_double() : format x with 9 significant digits ("%.9g"; "0" for
 *  zero, no exponent for ordinary magnitudes) into buf (cap >= 32).
 *  @return the length. */
int rk_out_double(char *buf, size_t cap, double x);

#ifdef __cplusplus
}
#endif
#endif /* RK_OUTPUT_H */
