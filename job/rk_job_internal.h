/* rk_job_internal.h — what the job's files share (job/ only). */
#ifndef RK_JOB_INTERNAL_H
#define RK_JOB_INTERNAL_H

#include <pthread.h>
#include <stdio.h>
#include "rk_job.h"
#include "rk_data.h"
#include "rk_model.h"
#include "rk_output.h"
#include "rk_outset.h"
#include "rk_rank.h"
#include "rk_recbuf.h"
#include "rk_gpu.h"
#include "rk_ptune.h"

/* What the report shows of the last fold (each may be NULL or empty). */
typedef struct rk_job_shown {
    const rk_triples *test;     /* held-out ratings */
    const double *pred;         /* their predictions */
    const rk_lists *lists;      /* neighbour lists */
    const rk_rank *rank;        /* recommendation counts (NULL without top-N) */
    const rk_tune_result *tune; /* --tune's table of the last fold (NULL without) */
    const rk_ptune_result *ptune; /* --tune-predict's table of the last fold (NULL without) */
} rk_job_shown;

/*! rk_job_report_counts() : the data counts, bad lines and load details of
 *  the data stage into rep (train and test ratings: the data stage's). */
void rk_job_report_counts(rk_job_report *rep, const rk_job_opts *o, const rk_data *d);

/* What metrics.json and report.html are written from (their rows' payload). */
typedef struct rk_job_result {
    const rk_job_opts *o;
    const rk_job_report *rep;
    const rk_dataset *ds;
    const rk_model *m;
    const rk_knn_stats *st;
    const rk_job_shown *shown;
    const rk_out_info *files;    /* the run's other files, written before metrics.json */
    int n_files;
} rk_job_result;

/*! rk_job_files_is_output() : 1 when name is a file a run may write into
 *  --out (a row of the job's table, or its fold variant). */
int rk_job_files_is_output(const char *name);

/*! rk_job_files_open() : the registry of the files a run writes (its table
 *  of names and writers) on the output folder dir.  @return as rk_outset_open. */
rk_status rk_job_files_open(rk_outset **set, const char *dir, rk_error *err);

/*! rk_job_finish() : metrics.json and, with --report, report.html into out,
 *  then commit every file; sets rep->t_write and t_total.
 *  @return RK_OK, RK_E_IO, RK_E_NOMEM. */
rk_status rk_job_finish(const rk_job_opts *o, rk_job_report *rep, const rk_data *d, const rk_model *m,
                        const rk_knn_stats *st, rk_outset *out, double t0, double t_engine_end,
                        const rk_job_shown *shown, rk_error *err);

/*! rk_job_metrics_json() : metrics.json of a finished run (CONTRACT.md §7); in:
 *  rk_job_result.  @return RK_OK, RK_E_NOMEM. */
rk_status rk_job_metrics_json(FILE *fp, const void *in, rk_error *err);

/*! rk_job_run_model() : the job with --model: recommendations and answers to
 *  --queries from a saved model (rk_job_model.c). */
rk_status rk_job_run_model(const rk_job_opts *o, rk_job_report *rep, rk_error *err);

/*! rk_job_approx_lists() : the lists of the model em by the random ball
 *  cover on the seam's current backend (the first of --gpus; the CPU after
 *  a GPU failure under --device auto), then the recall check of
 *  --approx-check; rep->approx and approx_check, and st's device, path and
 *  times, are filled. */
rk_status rk_job_approx_lists(const rk_job_opts *o, const rk_knn_opts *ko, const rk_model *em, rk_backend_seam *seam,
                              rk_lists *lists, rk_job_report *rep, rk_knn_stats *st, rk_error *err);

/*! rk_job_approx_json() : the "approx" member of metrics.json: null
 *  without --approx.  @return a new jansson reference, NULL when out of memory. */
struct json_t *rk_job_approx_json(const rk_job_opts *o, const rk_job_report *r);

/* The most-popular baseline of a fold (rk_job_base.c): set the inputs,
 * start it (beside: in a thread of its own, on a few cores, when the
 * engine stage that follows runs on the GPU), then finish it after the
 * engine stage (where it ran nowhere yet, it runs then).  The model, the
 * test ratings and to's users are only read, and must stay while it runs. */
typedef struct rk_job_base {
    const rk_model *m;
    const rk_triples *test;
    int32_t n_users, n_items, top_n;
    double relevance;
    const int32_t *cutoffs;
    int n_cutoffs;
    rk_topn_opts to;     /* top-N's request (its sink and progress are replaced) */
    rk_rank *rank;       /* out: the baseline's ranking metrics (the caller frees it) */
    rk_status status;
    rk_error err;
    int threads, started;
    pthread_t th;
} rk_job_base;

void rk_job_base_start(rk_job_base *b, int beside);
rk_status rk_job_base_finish(rk_job_base *b, rk_error *err);

/* A fold's neighbour lists and predictions written early (rk_job_files.c):
 * once the engine's lists and predictions are made, their files are
 * created (in the set's order) and written by a thread on two cores while
 * the ranking stage runs on the GPU (only where there are predictions: the
 * lists alone are too few rows to pay for the cores the thread takes).  The payloads' arrays must stay as
 * they are until rk_job_early_finish. */
typedef struct rk_job_early {
    int neighbors, predictions; /* which of the two are written */
    rk_outset_lists nl;
    rk_outset_preds pr;
    int fold;                   /* the files' fold (rk_outset_write's) */
    rk_outset_later *nb_files, *pr_files;
    rk_status status;
    rk_error err;
    int started;                /* 1: the thread runs; 2: written already */
    pthread_t th;
} rk_job_early;

/*! rk_job_early_payloads() : *w (nothing started) for the lists (when
 *  neighbors) and the test ratings' predictions (when there are any). */
void rk_job_early_payloads(rk_job_early *w, int neighbors, const rk_lists *lists, const rk_idmap *list_ids,
                           const rk_triples *test, const double *pred, const int32_t *used, const rk_idmap *users,
                           const rk_idmap *items);

/*! rk_job_early_start() : create the files, then write them in a thread
 *  (where none starts, at once).  @return RK_OK, or the files' creation's
 *  failure. */
rk_status rk_job_early_start(rk_job_early *w, rk_outset *out, rk_error *err);

/*! rk_job_early_finish() : wait for the thread.  @return its status. */
rk_status rk_job_early_finish(rk_job_early *w, rk_error *err);

/*! rk_job_user_metrics() : user_metrics.csv of fold file_fold: every user
 *  with a relevant test rating, in index order. */
rk_status rk_job_user_metrics(rk_outset *out, int file_fold, const rk_rank *rank, const rk_idmap *users,
                              rk_error *err);

/* The recommendations' file written in slices (--mpi-output slices): on
 * rank 0 its pending file, which to's sink writes rank 0's rows into, and
 * the ranking metrics' sink for the other ranks' batches; on the others the
 * slice their rows are formatted into. */
typedef struct rk_job_recs_out {
    const char *tmp_path;       /* rank 0 */
    FILE *fp;                   /* rank 0: the stream to.sink writes */
    rk_topn_sink measure;       /* rank 0: the ranking metrics' sink of the other ranks' batches */
    void *measure_ud;
    rk_outset_slice *slice;     /* the other ranks */
} rk_job_recs_out;

/*! rk_job_topn_predicted() : top-N of to's users by predicted rating
 *  (--topn-score prediction, CONTRACT.md §5): the candidates of §5 from
 *  lists l, each predicted by the seam's current backend under ko (its
 *  --predict mode), the N highest (in top-N's fixed point; ties by
 *  ascending item) into to's sink.  ts may be NULL.  @return RK_OK, RK_E_ARG
 *  (a negative rating scale), RK_E_RANGE (more than 2^28 pairs),
 *  RK_E_NOMEM, an engine's or the sink's status. */
rk_status rk_job_topn_predicted(rk_backend_seam *seam, const rk_model *m, const rk_knn_opts *ko, const rk_lists *l,
                                const rk_topn_opts *to, rk_topn_stats *ts, rk_error *err);

/*! rk_job_rank_topn() : top-N from the ranking model cfg (o->rank, or --tune's choice)
 *  (rk_job_rank.c): the transformed matrix of lm (m, or m without the
 *  held-out users of --split users), top-N from the ratings of m, its lists on the seam's
 *  current backend (the CPU after a GPU failure under --device auto, which
 *  restart(ud) is told of before the CPU starts over), their shaping, then
 *  top-N into to's sink (to NULL: the lists alone).  rl: the lists' storage (the caller frees it).
 *  dist of several ranks: a collective, the stage shared among them as
 *  rk_job_spread shares it (recs: the file in slices, or NULL); NULL: this
 *  process alone.  Fills rep's rank members and *ts.  @return any engine
 *  status. */
rk_status rk_job_rank_topn(const rk_job_opts *o, const rk_rankw_opts *cfg, rk_backend_seam *seam, rk_dist *dist,
                           const rk_model *lm, const rk_model *m, const rk_topn_opts *to, const rk_job_recs_out *recs,
                           rk_status (*restart)(void *ud, rk_error *err), void *ud, rk_lists *rl,
                           rk_topn_stats *ts, rk_job_report *rep, rk_error *err);

/* The engine stage shared out among MPI ranks and GPUs (rk_job_spread.c). */
typedef struct rk_job_spread_in {
    const rk_job_opts *o;       /* notes */
    rk_dist *dist;              /* the run's processes (NULL: one) */
    const rk_knn_opts *eko;     /* the engine's options (rows: a subset to share out) */
    const rk_model *em;         /* the engine's model (the transposed view with --by user) */
    const rk_model *m;          /* the fold's model, for top-N */
    int by_user;                /* top-N by rk_utopn_cpu */
    const int32_t *devices;     /* CUDA ordinals of this rank's parts */
    int n_devices;              /* 0: one part, the CPU engine */
    const rk_gpu_opts *gpu;     /* the GPU options (device set per part) */
    const rk_backend_seam *seam; /* the engines: a part whose GPU fails may run on the CPU */
    rk_lists *lists;            /* the job's, every item's shape; every rank gets every list
                                   when top-N reads them, else rank 0 */
    rk_queries *q;              /* may be NULL; rank 0 gets every answer */
    const rk_topn_opts *to;     /* NULL: no top-N; its sink is called on rank 0 only */
    rk_topn_stats *ts;          /* rank 0: the stage's (may be NULL) */
    rk_knn_stats *st;           /* the engine's: rank 0's first part, the work summed */
    rk_job_report *rep;         /* rank 0: part[] (this stage's replaced), n_parts, t_exchange */
    int stage;                  /* RK_JOB_STAGE_*: the parts' stage in rep */
    /* may be NULL: host_model(hook_ud) gives the model a part's CPU engine
       call reads instead of em (called under a lock: the ranking model with
       its values expanded for a host engine; NULL: failed, with err);
       shape(hook_ud, lists) on the joined lists before top-N */
    const rk_model *(*host_model)(void *ud, rk_error *err);
    void (*shape)(void *ud, rk_lists *lists);
    void *hook_ud;
    const rk_backend *gpu_be;   /* the GPU parts' engine (NULL: CUDA's); tests */
    const rk_job_recs_out *recs; /* NULL on every rank: rank 0 formats every row */
} rk_job_spread_in;

/*! rk_job_spread() : the lists, predictions and top-N of one fold shared
 *  out among the ranks of in->dist and the devices of each (a collective:
 *  every rank calls it with the same options).  The results are those of
 *  one engine call, byte for byte.  @return RK_OK, or the first failing
 *  rank's status with its message (the same on every rank). */
rk_status rk_job_spread(const rk_job_spread_in *in, rk_error *err);

/*! rk_job_join_recs() : collective, after the parts' top-N (rk_job_recjoin.c):
 *  the ranks' recommendations to rank 0's sinks in request order, and with
 *  in->recs each rank's slice of the file put at its byte offset (by the
 *  rank itself when it reaches rank 0's pending file, else sent to rank 0,
 *  which writes it; rank 0 reads the first and last bytes of every slice
 *  back and has any that differ sent again).  bufs: this rank's parts'
 *  batches; drained: handed to the sink (rank 0) or the slice already;
 *  rb[r]: rank r's first user; s: this rank's status so far.  Fills rep's
 *  out_* members on rank 0.  @return RK_OK or the first failing rank's status. */
rk_status rk_job_join_recs(const rk_job_spread_in *in, const rk_recbuf *const *bufs, int n_bufs, int drained,
                           const int32_t *rb, rk_status s, rk_error *err);

/*! rk_job_read_users() : --users FILE (rk_job_ids.c): the ids of the file
 *  that name users, in file order (*asked, *n: the caller frees); unknown
 *  ids counted in rep.  rk_job_read_items() : --items FILE: the items of
 *  the file that the training data has, file order, the others noted.
 *  @return as rk_idlist_read. */
rk_status rk_job_read_users(const rk_job_opts *o, const rk_idmap *users, int32_t **asked, int64_t *n,
                            rk_job_report *rep, rk_error *err);
rk_status rk_job_read_items(const rk_job_opts *o, const rk_idmap *items, int32_t **asked, int64_t *n,
                            rk_job_report *rep, rk_error *err);

/*! rk_job_recs_setup() : a written fold's recommendations in slices
 *  (rk_job_recjoin.c), when several ranks write them and --mpi-output is
 *  not root: rank 0's pending file of recs and the ranking metrics' sink of
 *  rank (both required there), another rank's new slice (*slice, freed first; the
 *  caller frees it).  ro->tmp_path or ro->slice set: slices; ro zeroed:
 *  rank 0 formats every row.  @return RK_OK, RK_E_NOMEM, RK_E_INTERNAL. */
rk_status rk_job_recs_setup(const rk_job_opts *o, int write, rk_outset_stream *recs, rk_rank *rank,
                            const rk_dataset *ds, rk_job_recs_out *ro, rk_outset_slice **slice, rk_error *err);

/*! rk_job_recs_slice_open() : a slice of recommendations.csv (rk_job_files.c's
 *  table) for a rank other than 0.  @return as rk_outset_slice_open. */
rk_status rk_job_recs_slice_open(const rk_outset_ids *ids, rk_outset_slice **sp, rk_error *err);

/*! rk_job_served_users() : the users in->to serves, in request order
 *  (rk_topn_request: every user with a training rating, ascending, when the
 *  request names none; *all is what it allocated), and the top-N work of
 *  each (*cost[*n_users], allocated here).  @return RK_OK, RK_E_NOMEM. */
rk_status rk_job_served_users(const rk_job_spread_in *in, int32_t **all, const int32_t **users, int64_t *n_users,
                              int64_t **cost, rk_error *err);

/*! rk_job_sym_costs() : 1 when this rank's n_parts GPU parts are to share
 *  one symmetric tile (rk_gpu_sym: the rank holds every row, every part a
 *  GPU of the CUDA engine, options the GPU sums symmetrically, not switched
 *  off by RECKNN_GPU_SYMSHARE=0), with *cost[n_items] (allocated here) then
 *  each row's work over the upper triangle (rk_knn_item_sym_cost), for
 *  sharing the rows out; else 0 (out of memory too: the rows in full) and
 *  *cost NULL. */
int rk_job_sym_costs(const rk_job_spread_in *in, int n_parts, int64_t **cost);

/*! rk_job_sym_start() : the shared tile's meeting for the parts' rows
 *  (rows[w][n_rows[w]]) on in->devices.  @return as rk_gpu_sym_create. */
rk_status rk_job_sym_start(const rk_job_spread_in *in, int n_parts, int32_t *const *rows, const int32_t *n_rows,
                           const int64_t *cost, struct rk_gpu_sym **out, rk_error *err);

/*! rk_job_exchange_lists() : collective: the lists of the items each rank
 *  owns (owner[item] = its rank) to every rank (everyone), or to rank 0
 *  alone, into in->lists.  rk_job_exchange_predictions() : the answers of
 *  every rank's queries (those of the items it owns) to rank 0, into in->q.
 *  @return RK_OK, RK_E_NOMEM, RK_E_INTERNAL (a message cut short), RK_E_DIST. */
rk_status rk_job_exchange_lists(const rk_job_spread_in *in, const int32_t *owner, int everyone, rk_error *err);
rk_status rk_job_exchange_predictions(const rk_job_spread_in *in, const int32_t *owner, rk_error *err);

/*! rk_job_dist_check_opts() : what a run of several ranks refuses (--model,
 *  --approx: one process).  @return RK_OK or RK_E_ARG. */
rk_status rk_job_dist_check_opts(const rk_job_opts *o, rk_error *err);

/*! rk_job_dist_devices() : the CUDA ordinals this process's parts run on
 *  (ids[RK_GPUS_MAX], *n of them): every device of --gpus for one process
 *  on its host; under mpirun by default one device per rank of the host,
 *  round robin, and with --gpus the named devices dealt among the host's
 *  ranks.  Asks the driver.  @return RK_OK, RK_E_GPU (rk_gpus_resolve). */
rk_status rk_job_dist_devices(const rk_job_opts *o, int32_t *ids, int *n, rk_error *err);

/*! rk_job_dist_load() : the data stage of every rank: each loads the input
 *  (--mpi-load each), or rank 0 loads and broadcasts rk_data_pack's bytes
 *  (bcast).  One process: rk_data_load.  A failure on any rank fails every
 *  rank with its message.  @return as rk_data_load, or RK_E_DIST. */
rk_status rk_job_dist_load(const rk_job_opts *o, const rk_data_opts *dop, rk_data *d, rk_job_report *rep,
                           rk_error *err);

/*! rk_job_plan_load() : --memory-limit before the load (rk_job_plan.c): the
 *  data stage's need from the inputs' sizes.  @return RK_OK, RK_E_NOMEM. */
rk_status rk_job_plan_load(const rk_job_opts *o, rk_error *err);

/*! rk_job_plan_run() : --memory-limit after the load: the stages' needs from
 *  the counts in rep; fewer CPU threads (ko->threads) when that fits, else
 *  RK_E_NOMEM before any work. */
rk_status rk_job_plan_run(const rk_job_opts *o, rk_knn_opts *ko, int64_t n_test, int with_time, rk_job_report *rep,
                          rk_error *err);

/* rk_job_check.c: --threads clamped to the processors, -k and --top-n to
 * the data (with notes), the data stage's options from the job's. */
void rk_job_clamp_threads(rk_job_opts *o);
void rk_job_clamp_to_data(const rk_job_opts *o, rk_knn_opts *ko, const rk_job_report *rep);
void rk_job_data_opts(const rk_job_opts *o, const rk_knn_opts *ko, rk_data_opts *dop);

#endif /* RK_JOB_INTERNAL_H */
