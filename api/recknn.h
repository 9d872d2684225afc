/* recknn.h — librecknn's public interface (prefix recknn_).  Plain C11.
 *
 * The library behind the recknn command, for programs that hold their
 * ratings in memory: build a data set from arrays, fit a model (the
 * neighbour lists of the similarity metric and, by default, those of the
 * ranking model top-N is summed from) on the CPU or a GPU, then recommend
 * for users, give items' nearest neighbours and predict ratings, into
 * buffers the caller owns.  The options are the command line's, by their
 * long names without dashes ("metric", "k", "shrinkage", "rank", "device"):
 * the same checks, the same messages, the same results as the recknn
 * command given the same ratings and options.
 *
 * Conventions:
 * - Users and items are dense indices: 0 .. n_users-1 and 0 .. n_items-1.
 *   A caller with raw ids maps them first; for results equal to the
 *   command's on a file of integer ids, number them in ascending order of
 *   their ids (the command's order).
 * - Every function that can fail returns an rk_status (rk_status.h: RK_OK
 *   is 0) and, given an rk_error, a one-line message.  Nothing prints,
 *   nothing exits, nothing aborts: a GPU failure is RK_E_GPU (under device
 *   "auto" the CPU takes over, with the same results).
 * - Handles are opaque; each is freed by its own _free function (NULL is
 *   accepted).  Distinct handles may be used from distinct threads at once;
 *   one handle is used by one thread at a time.
 * - Arrays given are read during the call only (the data set copies what it
 *   keeps); arrays filled are the caller's, of the sizes stated.
 * - A long call reports its progress to a callback of the caller's, which
 *   may stop it (recknn_options_set_progress, recknn_model_set_progress).
 *
 * The guarantees in full: CONTRACT.md §13.
 *
 * Versioning: RECKNN_API_VERSION changes when a declaration here changes
 * incompatibly; recknn_version() is the package version.
 */
#ifndef RECKNN_H
#define RECKNN_H

#include <stddef.h>
#include <stdint.h>
#include "rk_status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RECKNN_API_VERSION 1

/*! recknn_version() : the package version ("1.0.0"). */
const char *recknn_version(void);
/*! recknn_api_version() : RECKNN_API_VERSION of the library linked. */
int recknn_api_version(void);

/* ---- options ---------------------------------------------------------------- */

typedef struct recknn_options recknn_options;

/*! recknn_options_new() : the command's defaults.  @return RK_OK, RK_E_NOMEM. */
rk_status recknn_options_new(recknn_options **out, rk_error *err);
/*! recknn_options_set() : option name (the command's long name without its
 *  dashes: "metric", "k", "min-support", "rank", "alpha", "device", ...) to
 *  value (NULL for a switch such as "implicit"); the value is copied.
 *  @return RK_OK, RK_E_ARG (an unknown name, a missing or extra value, a bad
 *  value: the command's message, e.g. "--metric: unknown metric 'x' (...)"). */
rk_status recknn_options_set(recknn_options *o, const char *name, const char *value, rk_error *err);
/*! recknn_option_name() : the i-th option name (i from 0; NULL past the last). */
const char *recknn_option_name(size_t i);
/*! recknn_option_takes_value() : 1 when option name takes a value, 0 for a
 *  switch, -1 for an unknown name. */
int recknn_option_takes_value(const char *name);
/*! recknn_option_fits() : 1 when recknn_fit takes option name; 0 when it is
 *  an option of the command's file job only (input formats, test sets,
 *  splits, output files, MPI), -1 for an unknown name. */
int recknn_option_fits(const char *name);
void recknn_options_free(recknn_options *o);

/*! recknn_progress_fn : the progress of a long call's stages ("similarity"
 *  in pairs or tiles, "top-N" and "baseline" in users): done of total
 *  units, from the thread that made the call, a few hundred times a stage
 *  at most.  Return 0 to go on; any other value stops the call at that
 *  report: it returns RK_E_CANCELLED ("STAGE: stopped by the caller's
 *  progress callback") with what it allocated freed: recknn_fit gives no
 *  model; recknn_recommend and recknn_evaluate leave the model as it was and
 *  their outputs partly written.  A stage's last report does not stop it. */
typedef int (*recknn_progress_fn)(void *ud, const char *stage, double done, double total, const char *unit);
/*! recknn_options_set_progress() : fn (NULL: none) and its ud for recknn_fit
 *  under o; the model fitted keeps them (recknn_model_set_progress). */
void recknn_options_set_progress(recknn_options *o, recknn_progress_fn fn, void *ud);

/* ---- ratings ---------------------------------------------------------------- */

typedef struct recknn_data recknn_data;

/*! recknn_data_new() : n ratings (users[t], items[t], ratings[t]) of an
 *  n_users x n_items matrix, copied; ratings NULL: every rating 1 (clicks,
 *  plays).  A pair rated more than once is resolved at fit time by the
 *  "duplicates" option (the last given wins by default), as in a file.
 *  @return RK_OK, RK_E_ARG (negative sizes, an index out of range, a rating
 *  that is not finite: the message names its position), RK_E_EMPTY (no
 *  rating), RK_E_NOMEM. */
rk_status recknn_data_new(int32_t n_users, int32_t n_items, int64_t n, const int32_t *users, const int32_t *items,
                          const float *ratings, recknn_data **out, rk_error *err);
/*! recknn_data_from_csr() : the ratings as a user-major matrix of n_users
 *  rows and n_items columns (SciPy's CSR): row u's items are
 *  indices[indptr[u] .. indptr[u+1]), strictly ascending, with the ratings
 *  data[...] (NULL: every rating 1).  borrow 1: nothing is copied, and a
 *  model fitted from it reads the arrays in place (not its ratings under
 *  "implicit" or with data NULL): they must stay unchanged until the data
 *  set and every such model are freed; borrow 0: copied.  @return RK_OK,
 *  RK_E_ARG (indptr not from 0 to its nnz, or decreasing; an item out of
 *  range, repeated or out of order in its row, the message naming the row; a
 *  rating not finite), RK_E_EMPTY, RK_E_NOMEM. */
rk_status recknn_data_from_csr(int32_t n_users, int32_t n_items, const int64_t *indptr, const int32_t *indices,
                               const float *data, int borrow, recknn_data **out, rk_error *err);
void recknn_data_free(recknn_data *d);

/* ---- models ------------------------------------------------------------------- */

typedef struct recknn_model recknn_model;

/*! recknn_fit() : the model of data d under options o: the data set as
 *  the command builds its training set (duplicates, "implicit",
 *  "rating-scale"), the neighbour lists of "metric" (k, min-support,
 *  shrinkage, negative...), and unless "rank" is "lists" the ranking
 *  model's lists that recommendations are summed from, on the device of
 *  "device".  o and d may be freed afterwards.  @return RK_OK, RK_E_ARG (an
 *  option recknn_option_fits refuses, a combination the command refuses),
 *  RK_E_GPU (device "gpu" without one, or its failure), RK_E_NOMEM, or an
 *  engine's status. */
rk_status recknn_fit(const recknn_options *o, const recknn_data *d, recknn_model **out, rk_error *err);

/*! recknn_model_shape() : the model's users, items, list length k (after
 *  the command's clamp to the list rows), and neighbour entries in all; any
 *  pointer may be NULL. */
void recknn_model_shape(const recknn_model *m, int32_t *n_users, int32_t *n_items, int32_t *k, int64_t *entries);

/*! recknn_recommend() : the top n items of each of users[n_users] (NULL:
 *  every user with a rating, ascending, n_users then ignored), the items a
 *  user rated left out, best first: items_out[u * n + r], scores_out[u * n +
 *  r] (may be NULL), counts_out[u] (may be NULL) of the u-th user served;
 *  cells past a user's count are -1 and 0.  Buffers hold n_served * n
 *  entries, n_served = n_users, or with users NULL the users with a rating
 *  (recknn_model_served).  Scores are the command's recommendations.csv's,
 *  before formatting.  @return RK_OK, RK_E_ARG (n < 1, a user out of
 *  range), RK_E_GPU, RK_E_NOMEM. */
rk_status recknn_recommend(recknn_model *m, const int32_t *users, int64_t n_users, int32_t n, int32_t *items_out,
                           double *scores_out, int32_t *counts_out, rk_error *err);
/*! recknn_model_served() : the users recknn_recommend serves when given
 *  none (those with a rating); recknn_model_served_users() : their indices,
 *  ascending, into out[recknn_model_served(m)]. */
int64_t recknn_model_served(const recknn_model *m);
void recknn_model_served_users(const recknn_model *m, int32_t *out);

/*! recknn_similar_items() : the neighbour lists of items[n_items] (the
 *  metric's, as neighbors.csv; of users, with users' indices, in user mode): at most n a list (n above k gives k),
 *  neighbours_out[x * n + r], sims_out[x * n + r] (may be NULL),
 *  counts_out[x] (may be NULL); cells past a count are -1 and 0.
 *  @return RK_OK, RK_E_ARG. */
rk_status recknn_similar_items(const recknn_model *m, const int32_t *items, int64_t n_items, int32_t n,
                               int32_t *neighbours_out, float *sims_out, int32_t *counts_out, rk_error *err);

/*! recknn_approx_check : option "approx-check" N with "approx": recall@k of
 *  the ball cover's lists against the exact lists of N items sampled from
 *  "seed" (the command's metrics.json "approx" members of the same names). */
typedef struct recknn_approx_check {
    int64_t sampled;          /* items drawn */
    int64_t evaluated;        /* of them, those whose exact list is not empty */
    int64_t hits;             /* entries of their lists found in the exact lists */
    int64_t exact_entries;    /* entries of the exact lists */
    double recall_at_k;       /* mean of hits / exact entries over the evaluated items (NaN: none) */
    double recall_at_k_ties;  /* the same, an entry as similar as the exact list's last a hit */
    double check_s;           /* seconds of the check */
} recknn_approx_check;
/*! recknn_model_approx_check() : the check recknn_fit made.  @return RK_OK,
 *  RK_E_ARG (a model fitted without "approx-check"). */
rk_status recknn_model_approx_check(const recknn_model *m, recknn_approx_check *out, rk_error *err);

/*! recknn_model_list_rows() : the rows of the neighbour lists: the items,
 *  or the users of a user-based model ("by" user). */
int32_t recknn_model_list_rows(const recknn_model *m);

/*! recknn_neighbors_csr() : every row's neighbour list (recknn_model_list_rows
 *  rows: items, or users in user mode) as a CSR matrix: indptr[rows + 1],
 *  indices[entries] and sims[entries] (entries from recknn_model_shape; sims
 *  may be NULL). */
void recknn_neighbors_csr(const recknn_model *m, int64_t *indptr, int32_t *indices, float *sims);

/*! recknn_predict() : the predicted rating of each pair (users[t],
 *  items[t]) as the command's predictions.csv (the "predict" mode, min-k;
 *  a pair of an unknown user or item gets the mode's fallback): out[t], and
 *  used_out[t] (may be NULL) the neighbours that made it.  @return RK_OK,
 *  RK_E_ARG (an index out of range; a model of the ball cover's lists,
 *  option "approx", which recknn_evaluate and recknn_model_save refuse
 *  too), RK_E_GPU, RK_E_NOMEM. */
rk_status recknn_predict(recknn_model *m, const int32_t *users, const int32_t *items, int64_t n, double *out,
                         int32_t *used_out, rk_error *err);

/* ---- saved models ------------------------------------------------------------ */

/*! recknn_model_save() : m into the command's model file (MODEL_FORMAT.md;
 *  `recknn --model PATH` answers from it as from one it saved), written
 *  through a temporary file renamed over path when complete.  user_ids and
 *  item_ids (may be NULL: the indices in decimal) name each index, in
 *  ascending order as the command orders ids (integers by value, other ids
 *  by their bytes).  @return RK_OK, RK_E_ARG (a user-based model, as the
 *  command refuses; ids out of order, repeated, empty or over 255 bytes),
 *  RK_E_IO, RK_E_NOMEM. */
rk_status recknn_model_save(const recknn_model *m, const char *path, const char *const *user_ids,
                            const char *const *item_ids, rk_error *err);

/*! recknn_model_load() : the model of a file the command or recknn_model_save
 *  wrote, ready to recommend, predict, evaluate; o (may be NULL) gives the
 *  device and thread options (the model's own options are the file's).
 *  @return RK_OK, RK_E_IO, RK_E_MODEL (not a model file, another version,
 *  truncated, corrupted), RK_E_GPU, RK_E_NOMEM. */
rk_status recknn_model_load(const char *path, const recknn_options *o, recknn_model **out, rk_error *err);

/*! recknn_model_id() : the id of user (which 0) or item (which 1) index i
 *  of a loaded or saved model into buf (cap bytes, NUL-terminated; 256
 *  always suffice).  @return its length, or -1 (i out of range, a model
 *  with no ids: one fitted and not saved). */
int recknn_model_id(const recknn_model *m, int which, int32_t i, char *buf, size_t cap);

/* ---- evaluation ------------------------------------------------------------- */

/* The measures of metrics.json's "metrics" (CONTRACT.md §6): rating errors of
 * the test pairs, and ranking measures of every user's top n against the test
 * ratings at least "relevance" (the option; 1 with "implicit"). */
typedef struct recknn_metrics {
    int64_t test_pairs;       /* after repeated pairs are resolved (the "duplicates" option) */
    double rmse, mae;
    int64_t fallbacks;        /* predictions without a neighbour */
    int64_t unknown_users, unknown_items; /* test pairs whose user (item) has no training rating */
    int32_t n;                /* the lists' length */
    double relevance;
    int64_t users;            /* test users with a relevant item */
    double precision, recall, ndcg, map, mrr, hit_rate;
    double coverage, gini;    /* of the lists over every item of the training and test sets */
} recknn_metrics;

/*! recknn_evaluate() : model m against the test ratings test, whose users
 *  and items are the model's indices, then those of the test alone (test's
 *  n_users and n_items count both, at least the model's): every user with a
 *  training rating gets a top-n list (most_popular: the most-popular
 *  baseline's instead, the command's --baseline popular) and every test pair
 *  a prediction.  The numbers are the command's metrics.json's for the same
 *  ratings, options and n.  @return RK_OK, RK_E_ARG (n < 1, test smaller
 *  than the model), RK_E_DUPLICATE, RK_E_GPU, RK_E_NOMEM. */
rk_status recknn_evaluate(recknn_model *m, const recknn_data *test, int32_t n, int most_popular, recknn_metrics *out,
                          rk_error *err);

/*! recknn_model_set_progress() : fn (NULL: none) and its ud for the
 *  model's recknn_recommend, recknn_predict and recknn_evaluate. */
void recknn_model_set_progress(recknn_model *m, recknn_progress_fn fn, void *ud);

void recknn_model_free(recknn_model *m);

/* ---- the command's file job -----------------------------------------------------
 * What the recknn command runs (it is a client of this interface alone): the
 * options of both kinds set by name (recknn_options_set), the rating files
 * read, the job run and its files written as the command documents. */

/*! recknn_note_fn : a one-line note of the job ("the GPU engine failed ...:
 *  running on the CPU"), from any thread of the job. */
typedef void (*recknn_note_fn)(void *ud, const char *msg);
/*! recknn_options_set_note() : the job's notes to fn (NULL: none) with ud.
 *  The note and progress callbacks share one ud: the last one set. */
void recknn_options_set_note(recknn_options *o, recknn_note_fn fn, void *ud);
/*! recknn_options_check() : the combinations of the options set (the
 *  command's checks, after each value's own).  @return RK_OK, RK_E_ARG. */
rk_status recknn_options_check(recknn_options *o, rk_error *err);

/*! recknn_run : this process's place in a run of several (mpirun; alone
 *  without MPI or outside mpirun). */
typedef struct recknn_run recknn_run;
/*! recknn_run_init() : join the run (MPI_Init; it may read and change
 *  *argc, *argv).  Once a process, before any thread is started by the
 *  caller if MPI's threads should inherit its signal mask.  @return RK_OK,
 *  RK_E_DIST, RK_E_NOMEM. */
rk_status recknn_run_init(int *argc, char ***argv, recknn_run **out, rk_error *err);
/*! recknn_run_rank() : this process's rank (0 alone; r NULL: 0). */
int recknn_run_rank(const recknn_run *r);
/*! recknn_run_finalize() : leave the run and free r (NULL is fine). */
void recknn_run_finalize(recknn_run *r);

/*! recknn_report : what a job did (its counts, measures and timings). */
typedef struct recknn_report recknn_report;
/*! recknn_job_run() : the command's job on the rating files inputs[n_inputs]
 *  under o, as one process of run (NULL: alone); command_line (may be NULL)
 *  goes into metrics.json.  Every rank of a run calls it.  *out (on RK_OK)
 *  is freed by recknn_report_free.  @return RK_OK or any status of the
 *  command's exit table (recknn_options_check first). */
rk_status recknn_job_run(const recknn_options *o, recknn_run *run, const char *command_line,
                         const char *const *inputs, int n_inputs, recknn_report **out, rk_error *err);
/*! recknn_report_text() : the lines the command prints after a job (a
 *  warning of skipped lines, the summary, a warning when the
 *  recommendations are below the most-popular baseline), each ending in a
 *  newline, into buf[cap] (truncated, NUL-terminated).  @return the length
 *  of the whole text. */
size_t recknn_report_text(const recknn_report *r, char *buf, size_t cap);
void recknn_report_free(recknn_report *r);

/*! recknn_job_stop_outputs() : stop every job's outputs now: their
 *  temporary files and new folders are removed, new ones refused, a commit
 *  whose renames have begun finishes first (for a signal's thread; the job
 *  then fails).  recknn_job_stopping() : nonzero once it ran. */
void recknn_job_stop_outputs(void);
int recknn_job_stopping(void);

#ifdef __cplusplus
}
#endif
#endif /* RECKNN_H */
