/* rk_mfile.h — the saved model: a versioned binary file that serves the
 * next day's queries without recomputing the similarities (prefix rk_mfile_).
 *
 * A model file holds what the run that saved it used to answer: the options
 * (metric, k, min-support, shrinkage, prediction mode, min-k), the id maps
 * of users and items, the training ratings (user-major), μ, the rating
 * scale, the item means, the ALS baselines, and the neighbour lists with
 * their similarities and supports.  Little-endian, a magic, a format
 * version, the sizes, and checksums over the header and every section, so
 * that a truncated, corrupted or foreign file is refused with RK_E_MODEL
 * (exit 3) before anything is trusted; MODEL_FORMAT.md documents the layout.
 * The reader checks every invariant the engines rely on (CSR offsets and
 * indices, list lengths and neighbours in range, ids unique), so a file that
 * passes cannot make an engine read out of bounds.
 */
#ifndef RK_MFILE_H
#define RK_MFILE_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include "rk_status.h"
#include "rk_ids.h"
#include "rk_knn.h"
#include "rk_model.h"
#include "rk_rankw.h"
#include "rk_pmodel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The newest format version: 3, version 2 with the records of a prediction
 * model (--predict interpolate, global).  A model without one is written as
 * version 2, which older readers take; both are read. */
#define RK_MFILE_VERSION 3

/* What a run saves (all borrowed). */
typedef struct rk_mfile_view {
    const rk_model *model;       /* by_user, mu, rmin, rmax, item_mean, bu, bi, have_baselines */
    const rk_lists *lists;       /* n_items = model's items */
    const rk_idmap *users;       /* model's users */
    const rk_idmap *items;       /* model's items */
    const rk_knn_opts *knn;      /* metric, min_support, shrinkage, k, mode, min_k */
    const rk_lists *rank_lists;  /* the ranking model's lists top-N is summed from (CONTRACT.md §5b),
                                    shaped; NULL: none (top-N from lists) */
    const rk_rankw_opts *rank;   /* their configuration (with rank_lists) */
    const rk_pmodel_global *global; /* --predict global's trained model (then required; NULL otherwise);
                                       the options of both models are knn->pm */
} rk_mfile_view;

/* A model read back (owned; rk_mfile_free). */
typedef struct rk_mfile {
    uint32_t version;
    rk_model model;              /* by_user and by_item (rebuilt), statistics as saved */
    rk_lists lists;
    rk_idmap *users, *items;
    rk_knn_opts knn;             /* the saved options; threads, progress zero */
    int have_rank;               /* the file holds ranking lists */
    rk_rankw_opts rank;          /* their configuration */
    rk_lists rank_lists;         /* padded to n_items x rank.k */
    rk_pmodel_global global;     /* --predict global's trained model (w, c padded to n_items x k); else zero */
} rk_mfile;

/*! rk_mfile_save() : write the model to `path` through a temporary file in
 *  the same folder (`path`.tmp.XXXXXX), flushed, fsync'ed, closed and renamed
 *  over `path` when complete (then the folder is synced, best effort): on
 *  failure the temporary file is removed and nothing is left at `path` (an
 *  older file there stays untouched).  Two threads of one process must not
 *  save to the same path at once (one temporary name per process).
 *  @return RK_OK, RK_E_ARG (a part missing; shapes disagree: id counts,
 *  lists not n_items x knn->k, a list longer than min(k, n_items - 1);
 *  invalid options; μ or the scale not finite or rmin > rmax; nonzero
 *  baselines without have_baselines; an id that cannot be stored; k beyond
 *  what a reader accepts, about 128 x the ratings per item), RK_E_IO (the
 *  message names the path and gives errno's text), RK_E_NOMEM. */
rk_status rk_mfile_save(const char *path, const rk_mfile_view *v, rk_error *err);

/*! rk_mfile_write() : the same bytes to an open stream (tests), flushed
 *  (every fwrite and the fflush checked).  @return as rk_mfile_save. */
rk_status rk_mfile_write(FILE *fp, const rk_mfile_view *v, rk_error *err);
/*! rk_mfile_write_named() : the same, with messages naming `name` (the
 *  final path of a stream that rk_out_file_at opened: the job's model,
 *  put in place with the run's other files).  @return as rk_mfile_write. */
rk_status rk_mfile_write_named(FILE *fp, const char *name, const rk_mfile_view *v, rk_error *err);

/*! rk_mfile_read() : read and check a model file (mapped whole, or read
 *  whole when it cannot be mapped, then rk_mfile_read_mem).  @return RK_OK,
 *  RK_E_IO (cannot open or read, a folder: "PATH: ..." with errno's text),
 *  RK_E_MODEL (not a model file, another version, truncated, a checksum or
 *  an invariant fails: the message, "PATH: what", says which), RK_E_NOMEM.
 *  On failure *out is zeroed and nothing is leaked.  On success *out holds
 *  the model (by_item rebuilt by rk_csr_transpose), the lists padded to
 *  n_items x k (cells past each length zero), the id maps, and the options
 *  in knn (the other fields of knn as rk_knn_opts_default gives them). */
rk_status rk_mfile_read(const char *path, rk_mfile *out, rk_error *err);

/*! rk_mfile_read_mem() : the same from len bytes in memory (`name`, or
 *  "model file" when NULL, starts the messages): for tests and fuzzing.
 *  Reads nothing outside buf[0..len) and allocates, beyond what the file
 *  holds, only the padded lists (bounded: see MODEL_FORMAT.md). */
rk_status rk_mfile_read_mem(const void *buf, size_t len, const char *name, rk_mfile *out, rk_error *err);

/*! rk_mfile_hash() : the checksum of model files: XXH64 (xxHash's 64-bit
 *  hash, as MODEL_FORMAT.md describes it) of p[0..len) with `seed`.  Exposed
 *  for tests and tools that patch or inspect a file. */
uint64_t rk_mfile_hash(const void *p, size_t len, uint64_t seed);

/*! rk_mfile_free() : NULL and zeroed are fine. */
void rk_mfile_free(rk_mfile *f);

#ifdef __cplusplus
}
#endif
#endif /* RK_MFILE_H */
