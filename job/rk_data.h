/* rk_data.h — the job's data stage: files → ratings without duplicates →
 * training and test parts → model (prefix rk_data_).
 *
 * load (rk_load) → duplicates resolved (CONTRACT.md §1) in the training and the
 * test ratings, the training ratings' user-major matrix from the same sort
 * (rk_triples_dedupe_csr) → the split (a --test file, or a --holdout
 * fraction of the ratings, whose entries then leave the matrix) → the model
 * (the item-major matrix, means, baselines when asked for).  Wall times per
 * part are kept for metrics.json.
 */
#ifndef RK_DATA_H
#define RK_DATA_H

#include <stdint.h>
#include "rk_status.h"
#include "rk_progress.h"
#include "rk_load.h"
#include "rk_model.h"
#include "rk_split.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rk_data_opts {
    const char *const *inputs;  /* RATINGS paths (netflix: files or a directory) */
    int n_inputs;
    const char *test_path;      /* --test FILE or NULL */
    double holdout;             /* --holdout F in (0,1), 0 = none */
    uint64_t seed;              /* --seed of the holdout */
    rk_load_opts load;          /* format, delimiter, header, columns, scale, bad lines, threads */
    rk_dup_policy duplicates;
    int implicit;               /* --implicit: every rating (training and test) becomes 1 */
    int with_baselines;         /* compute the ALS baselines (pearson-baseline, --predict baseline) */
    int no_model;               /* resampling (--folds, --split user|temporal): train = every
                                   rating without duplicates, no model here (one per fold) */
    /* the split stage of a resampled run (rk_data_split) */
    int32_t folds;              /* --folds K: every rating gets its fold */
    rk_split_kind split;        /* --split user|temporal: every rating gets its part... */
    double split_frac;          /* ...of about this fraction held out (--holdout F) */
    int defer_item_major;       /* the model's item-major entries left for later
                                   (rk_model_from_csr_deferred; ignored with baselines) */
    /* The training ratings' user-major matrix sorted elsewhere (the GPU,
     * rk_gpu_csr_build): *taken = 1 with the matrix rk_triples_dedupe_csr
     * would make under `policy`, without the ratings whose bit is set in
     * leave_out (a holdout's; NULL: none), and in *found (zeroed by the
     * data stage) what that sort would have done to t (the data stage
     * applies it: rk_triples_resolve), or 0 to leave the sort to the host.  A failure
     * leaves it to the host too, with a note (load.note).  NULL: the host
     * sorts. */
    rk_status (*sort_csr)(void *ud, const rk_triples *t, const rk_idmap *users, const rk_idmap *items,
                          const uint64_t *leave_out, rk_dup_policy policy, rk_dup_found *found, rk_csr *out,
                          int *taken, rk_error *err);
    void *sort_ud;
    rk_progress_fn progress;    /* may be NULL */
    void *progress_ud;
} rk_data_opts;

typedef struct rk_data {
    rk_dataset ds;              /* id maps, load reports (its triples may be moved out) */
    rk_triples train, test;     /* without duplicates, after the split; test.n == 0 when none */
    rk_model model;             /* from train */
    int64_t duplicates_removed;
    /* wall seconds: reading and parsing, id maps, duplicates (with the
     * user-major matrix: one sort gives both), split, model (the item-major
     * matrix, means, baselines) */
    double t_read_parse, t_ids, t_dedupe, t_split, t_model, t_total;
    int sorted_elsewhere;       /* the training matrix came from sort_csr (the GPU) */
    int resampled;              /* the split stage marked every training rating: */
    int32_t *part;              /* its fold (0..K-1), or 1 for a held-out rating (rk_split.h) */
    int own_split_;             /* internal: train/test were allocated by the split */
} rk_data;

/*! rk_data_load() : run the data stage.  On success *d holds everything
 *  (free with rk_data_free).  @return RK_OK, or the status of the failing
 *  part (RK_E_IO, RK_E_PARSE, RK_E_EMPTY, RK_E_DUPLICATE, RK_E_ARG,
 *  RK_E_NOMEM) with err naming the file and line where there is one; *d then
 *  holds nothing. */
rk_status rk_data_load(const rk_data_opts *o, rk_data *d, rk_error *err);

/*! rk_data_split() : the split stage of a resampled run (o->no_model with
 *  o->folds, or o->split user or temporal): d->part marks every training
 *  rating with its fold or its held-out part, once for the run (each fold
 *  then takes its ratings with rk_split_apply).  rk_data_load runs it; a
 *  process that rebuilt d from a pack runs it itself.  Nothing for other
 *  runs (their split is the --test file or the random holdout of the load).
 *  @return RK_OK, RK_E_ARG (temporal without timestamps), RK_E_NOMEM. */
rk_status rk_data_split(const rk_data_opts *o, rk_data *d, rk_error *err);

/*! rk_data_pack() : everything of *d that the engines and the later stages
 *  read, in one flat buffer (*buf, *bytes; malloc'ed, the caller frees), so
 *  that one process can load the data and send them to others (MPI's
 *  "rank 0 loads and broadcasts"): the id maps (as their raw ids in index
 *  order), the training and test ratings (times included when kept), the
 *  model's two matrices, means and baselines (when built), the duplicates
 *  removed and the load reports.  Host byte order: both ends are one build.
 *  @return RK_OK, RK_E_NOMEM. */
rk_status rk_data_pack(const rk_data *d, unsigned char **buf, size_t *bytes, rk_error *err);

/*! rk_data_unpack() : rebuild *d from rk_data_pack's bytes: the same ids
 *  at the same indices, the same ratings and model, bit for bit (free with
 *  rk_data_free).  Timings are zero.  d->ds.train and d->ds.test are
 *  d->train and d->test themselves, as after a load without --holdout (the
 *  ratings before a holdout are not sent).  @return RK_OK, RK_E_NOMEM,
 *  RK_E_INTERNAL (bytes that are not a whole pack). */
rk_status rk_data_unpack(const unsigned char *buf, size_t bytes, rk_data *d, rk_error *err);

/*! rk_data_free() : free what rk_data_load made (NULL and zeroed are fine). */
void rk_data_free(rk_data *d);

#ifdef __cplusplus
}
#endif
#endif /* RK_DATA_H */
