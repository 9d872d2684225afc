/* rk_outset.h — the registry of a run's output files (prefix rk_outset_).
 *
 * The run hands its results over by content (a fold's neighbour lists, its
 * predictions, its recommendations batch by batch, the metrics, the report)
 * and never names a file: a table of rows, one per file, says which files a
 * content becomes, under which name and by which writer.  A new format is a
 * writer and a row; a content with no row is written nowhere.
 *
 * Every file goes through rk_out_file (rk_output.h): written under a
 * temporary name in the output folder, and all the run's files renamed into
 * place together by rk_outset_commit, or none (rk_outset_free before the
 * commit, or a failed commit, removes them; an interrupted run's are removed
 * by rk_out_unlink_pending).  Files are created in the order the contents
 * come, and each content's rows in table order.
 *
 * Contents written by fold (--write-folds) name their files NAME.foldF.EXT
 * (F from 1): "neighbors.csv" becomes "neighbors.fold3.csv".
 */
#ifndef RK_OUTSET_H
#define RK_OUTSET_H

#include <stdio.h>
#include <stdint.h>
#include "rk_status.h"
#include "rk_ids.h"
#include "rk_knn.h"
#include "rk_topn.h"
#include "rk_output.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a file holds; the payload each writer is handed. */
typedef enum rk_outset_content {
    RK_OUTSET_NEIGHBORS = 0,   /* rk_outset_lists */
    RK_OUTSET_PREDICTIONS,     /* rk_outset_preds */
    RK_OUTSET_RECOMMENDATIONS, /* streamed: rk_outset_ids, then rk_topn_batch after batch */
    RK_OUTSET_METRICS,         /* the caller's (the job's summary of the run) */
    RK_OUTSET_REPORT,          /* the caller's */
    RK_OUTSET_USER_METRICS,    /* rk_outset_users */
    RK_OUTSET_CONTENTS
} rk_outset_content;

/* RK_OUTSET_NEIGHBORS: every list, rows named by ids. */
typedef struct rk_outset_lists {
    const rk_lists *lists;
    const rk_idmap *ids;
} rk_outset_lists;

/* RK_OUTSET_PREDICTIONS: n answers, named by dense indices into users and
 * items with their test ratings, or, when raw is set, by the raw ids of
 * --queries pairs (pair t: user raw[raw_off[2t] .. raw_off[2t+1]), item
 * next; no rating). */
typedef struct rk_outset_preds {
    int64_t n;
    const int32_t *user, *item;
    const float *rating;
    const double *pred;
    const int32_t *used;         /* neighbours each used (NULL: 0) */
    const rk_idmap *users, *items;
    const char *raw;
    const int64_t *raw_off;
} rk_outset_preds;

/* RK_OUTSET_RECOMMENDATIONS: the id maps of the batches' users and items
 * (they must outlive the stream). */
typedef struct rk_outset_ids {
    const rk_idmap *users, *items;
} rk_outset_ids;

/* RK_OUTSET_USER_METRICS: one row per measured user (its ranking metrics at
 * the run's N), named by its id. */
typedef struct rk_outset_user_row {
    int32_t user;                /* dense index */
    int32_t listed;              /* 1 when the user got a list */
    int32_t hits;
    int64_t relevant;            /* relevant test items */
    double precision, recall, ndcg, ap, rr;
} rk_outset_user_row;

typedef struct rk_outset_users {
    int64_t n;
    const rk_outset_user_row *rows;
    const rk_idmap *users;
} rk_outset_users;

/* One file of the run. */
typedef struct rk_outset_row {
    rk_outset_content content;
    const char *name;            /* its name in the output folder: unique, no '/' */
    /* a whole content: write it all to fp */
    rk_status (*write)(FILE *fp, const void *in, rk_error *err);
    /* a streamed content: a writer on fp, its batches, freed (fp stays open) */
    rk_status (*open)(void **w, FILE *fp, const rk_outset_ids *ids, rk_error *err);
    rk_status (*put)(void *w, const rk_topn_batch *b, rk_error *err);
    void (*close)(void *w);
} rk_outset_row;

typedef struct rk_outset rk_outset;               /* opaque: a table on an output folder */
typedef struct rk_outset_stream rk_outset_stream; /* opaque: a streamed content's files */

/*! rk_outset_check() : a table is usable: names non-empty, without '/',
 *  unique; every content known; whole contents with write alone, streamed
 *  ones with open, put and close alone.  @return RK_OK or RK_E_ARG naming
 *  the row. */
rk_status rk_outset_check(const rk_outset_row *rows, int n_rows, rk_error *err);

/*! rk_outset_open() : check the table (kept by the caller while the set
 *  lives), then start writing into `dir` (rk_out_open: created with its
 *  parents when missing), and remove the table's temporary files that a run
 *  killed outright left there (".NAME.tmp.XXXXXX"; the folder's lock says
 *  no run is writing them).  @return RK_OK, RK_E_ARG, RK_E_IO, RK_E_NOMEM. */
rk_status rk_outset_open(rk_outset **set, const char *dir, const rk_outset_row *rows, int n_rows, rk_error *err);

/*! rk_outset_write() : the whole content c into the file of every row of c
 *  (fold 0: NAME; fold F >= 1: NAME.foldF.EXT).  @return RK_OK, RK_E_ARG
 *  (c is streamed, or a file opened twice), or the writer's status. */
rk_status rk_outset_write(rk_outset *set, rk_outset_content c, int fold, const void *in, rk_error *err);

/*! rk_outset_stream_open() : start the streamed content c in the files of
 *  its rows (fold as for rk_outset_write).  @return RK_OK, RK_E_ARG (c is
 *  whole), RK_E_IO, RK_E_NOMEM, or a writer's status. */
rk_status rk_outset_stream_open(rk_outset *set, rk_outset_content c, int fold, const rk_outset_ids *ids,
                                rk_outset_stream **st, rk_error *err);

/*! rk_outset_put() : one batch to every file of the stream st.  Fits
 *  rk_topn_sink (ud = the stream).  @return RK_OK or a writer's status. */
rk_status rk_outset_put(void *st, const rk_topn_batch *b, rk_error *err);

/*! rk_outset_restart() : empty the stream's files and start their writers
 *  again (an engine that failed midway and starts over).  @return RK_OK,
 *  RK_E_IO ("cannot start NAME over in DIR"), or a writer's status. */
rk_status rk_outset_restart(rk_outset_stream *st, rk_error *err);

/*! rk_outset_later_open() : the files of the whole content c (fold as for
 *  rk_outset_write) created now, in the set's order, and written later by
 *  rk_outset_later_write, which touches only those files: it may run in
 *  another thread while the set opens others.  Free with
 *  rk_outset_later_free (the files stay with the set).  @return RK_OK,
 *  RK_E_ARG (c is streamed), RK_E_IO, RK_E_NOMEM. */
typedef struct rk_outset_later rk_outset_later;
rk_status rk_outset_later_open(rk_outset *set, rk_outset_content c, int fold, rk_outset_later **lp, rk_error *err);
rk_status rk_outset_later_write(rk_outset_later *l, const void *in, rk_error *err);
void rk_outset_later_free(rk_outset_later *l);

/*! rk_outset_stream_target() : the one pending file of the stream st: its
 *  temporary path (rk_out_temp_of) and its stream (the caller may flush it
 *  and read its position; the set still closes it).  @return RK_OK,
 *  RK_E_ARG (the content has not exactly one file), RK_E_INTERNAL. */
rk_status rk_outset_stream_target(rk_outset_stream *st, const char **tmp_path, FILE **fp, rk_error *err);

/* A slice of a streamed content, formatted in memory by a process that does
 * not hold the file (an MPI rank other than 0): the content's row writer on
 * a memory stream, whose head (what the writer writes when it opens: the
 * CSV header) is left out, as the holder of the file writes it once. */
typedef struct rk_outset_slice rk_outset_slice;

/*! rk_outset_slice_open() : a slice of content c (streamed; exactly one row
 *  of rows[] holds it; the table is kept by the caller).  @return RK_OK,
 *  RK_E_ARG, RK_E_NOMEM, or the writer's status. */
rk_status rk_outset_slice_open(const rk_outset_row *rows, int n_rows, rk_outset_content c, const rk_outset_ids *ids,
                               rk_outset_slice **sp, rk_error *err);

/*! rk_outset_slice_put() : one batch into the slice (fits rk_topn_sink,
 *  ud = the slice).  @return RK_OK or the writer's status. */
rk_status rk_outset_slice_put(void *sp, const rk_topn_batch *b, rk_error *err);

/*! rk_outset_slice_bytes() : the slice's bytes so far, head left out
 *  (valid until the next put or the free).  @return RK_OK, RK_E_NOMEM. */
rk_status rk_outset_slice_bytes(rk_outset_slice *s, const unsigned char **data, size_t *bytes, rk_error *err);

/*! rk_outset_slice_free() : NULL is fine. */
void rk_outset_slice_free(rk_outset_slice *s);

/*! rk_outset_stream_free() : free the writers (NULL is fine); the files stay,
 *  for the commit.  Before rk_outset_free of its set. */
void rk_outset_stream_free(rk_outset_stream *st);

/*! rk_outset_file_at() : a file of the set outside its folder and table (a
 *  saved model), put in place by rk_outset_commit with the others
 *  (rk_out_file_at).  @return as rk_out_file_at. */
rk_status rk_outset_file_at(rk_outset *set, const char *path, FILE **fp, rk_error *err);

/*! rk_outset_commit() : every file written so far into place as one set
 *  (rk_out_commit_set), the table's files of earlier runs that this run did
 *  not write removed with it (a row's name or its fold variant: a folder
 *  never mixes two runs' outputs); on failure the folder keeps the previous
 *  set.  @return RK_OK or RK_E_IO naming the file. */
rk_status rk_outset_commit(rk_outset *set, rk_error *err);

/*! rk_outset_files() : the files written so far, with sizes and checksums
 *  (rk_out_files), for metrics.json.  @return as rk_out_files. */
rk_status rk_outset_files(rk_outset *set, rk_out_info *info, int cap, int *n, rk_error *err);

/*! rk_outset_free() : remove what was not committed, free set (NULL is fine). */
void rk_outset_free(rk_outset *set);

/*! rk_outset_is_file() : 1 when name is a file the table writes: a row's
 *  name, or its fold variant NAME.foldF.EXT (F a positive number). */
int rk_outset_is_file(const rk_outset_row *rows, int n_rows, const char *name);

/*! rk_outset_name() : the file name of row name for fold (see
 *  rk_outset_write) into buf.  @return its length (as snprintf). */
int rk_outset_name(char *buf, size_t cap, const char *name, int fold);

/* ---- the CSV rows' writers (rk_outset_csv.c) --------------------------------- */

/*! rk_outset_neighbors_csv() : neighbors.csv (rk_out_neighbors); in: rk_outset_lists. */
rk_status rk_outset_neighbors_csv(FILE *fp, const void *in, rk_error *err);

/*! rk_outset_user_metrics_csv() : user_metrics.csv, a header
 *  user,relevant,listed,hits,precision,recall,ndcg,ap,rr then a row per
 *  user; in: rk_outset_users. */
rk_status rk_outset_user_metrics_csv(FILE *fp, const void *in, rk_error *err);

/*! rk_outset_predictions_csv() : predictions.csv (rk_out_predictions, or
 *  raw ids with an empty rating column); in: rk_outset_preds. */
rk_status rk_outset_predictions_csv(FILE *fp, const void *in, rk_error *err);

/*! rk_outset_recs_csv_open(), _put(), _close() : recommendations.csv
 *  (rk_out_recs_open, rk_out_recs_write, rk_out_recs_free). */
rk_status rk_outset_recs_csv_open(void **w, FILE *fp, const rk_outset_ids *ids, rk_error *err);
rk_status rk_outset_recs_csv_put(void *w, const rk_topn_batch *b, rk_error *err);
void rk_outset_recs_csv_close(void *w);

#ifdef __cplusplus
}
#endif
#endif /* RK_OUTSET_H */
