/* rk_output.h — atomic output files (prefix rk_out_).
 *
 * SPEC §7.  A run's files are written under temporary names in the output
 * directory and renamed to their final names together by rk_out_commit, only
 * when every file was written completely; rk_out_abort (or a failed commit)
 * removes every temporary file.  A failed run therefore leaves no partial
 * file, and leaves earlier complete results alone.
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
 *  missing).  @return RK_OK, RK_E_IO (cannot create or not a directory), RK_E_NOMEM. */
rk_status rk_out_open(rk_out **out, const char *dir, rk_error *err);

/*! rk_out_file() : open the temporary file that will become dir/name.
 *  The stream belongs to `o`: write to it, then call rk_out_commit.
 *  @return RK_OK, RK_E_IO, RK_E_RANGE (too many files). */
rk_status rk_out_file(rk_out *o, const char *name, FILE **fp, rk_error *err);

/*! rk_out_commit() : flush, fsync and close every file, then rename each to
 *  its final name.  On failure every temporary file is removed.
 *  @return RK_OK or RK_E_IO naming the file. */
rk_status rk_out_commit(rk_out *o, rk_error *err);

/*! rk_out_abort() : close and remove every temporary file. */
void rk_out_abort(rk_out *o);

/*! rk_out_free() : abort what is pending and free o (NULL is fine). */
void rk_out_free(rk_out *o);

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

/*! rk_out_double() : format x with 9 significant digits ("%.9g"; "0" for
 *  zero, no exponent for ordinary magnitudes) into buf (cap >= 32).
 *  @return the length. */
int rk_out_double(char *buf, size_t cap, double x);

/*! rk_out_json_string() : write s as a JSON string literal (quotes, escapes). */
void rk_out_json_string(FILE *fp, const char *s);

#ifdef __cplusplus
}
#endif
#endif /* RK_OUTPUT_H */
