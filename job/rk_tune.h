/* rk_tune.h — --tune: a search over the ranking model on a validation split
 * of the training data (prefix rk_tune_; CONTRACT.md §6c).
 *
 * The training matrix of a fold is split again, per user (about `fraction`
 * of each user's ratings, at least one kept, drawn from a hash of the seed,
 * the user and the item), into a validation-training part and a validation
 * part.  Every configuration of the grid is trained on the first and its
 * top-N measured against the second; the test set is never seen.  What
 * configurations share is computed once: one engine call per base (the
 * similarity and its parameters) makes lists at the grid's longest k, whose
 * prefixes are the lists of every shorter k; the shapes (k, locality,
 * normalisation) are then list copies and a top-N each.  The best
 * configuration by the chosen metric (ties: the earlier in the grid) is what
 * the caller then trains on the whole training part.
 */
#ifndef RK_TUNE_H
#define RK_TUNE_H

#include <stdint.h>
#include "rk_status.h"
#include "rk_model.h"
#include "rk_rank.h"
#include "rk_rankw.h"
#include "rk_backend.h"
#include "rk_progress.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rk_tune_metric {
    RK_TUNE_NDCG = 0, RK_TUNE_PRECISION, RK_TUNE_RECALL, RK_TUNE_MAP, RK_TUNE_MRR, RK_TUNE_HIT_RATE
} rk_tune_metric;

/*! rk_tune_metric_parse() : "ndcg", "precision", "recall", "map", "mrr",
 *  "hit_rate".  @return RK_OK or RK_E_ARG. */
rk_status rk_tune_metric_parse(const char *name, rk_tune_metric *out);
const char *rk_tune_metric_name(rk_tune_metric m);

/*! rk_tune_value() : the value of metric m in r. */
double rk_tune_value(const rk_rank_result *r, rk_tune_metric m);

/* The grids (CONTRACT.md §6c): the full one, a small one for tests, and
 * the full one's rows of one family. */
typedef enum rk_tune_grid_kind {
    RK_TUNE_GRID_FULL = 0, RK_TUNE_GRID_SMALL, RK_TUNE_GRID_RP3BETA, RK_TUNE_GRID_COSINE, RK_TUNE_GRID_BM25
} rk_tune_grid_kind;

/*! rk_tune_grid_parse() : "full", "small", "rp3beta", "cosine", "bm25". */
rk_status rk_tune_grid_parse(const char *name, rk_tune_grid_kind *out);
const char *rk_tune_grid_name(rk_tune_grid_kind g);

typedef struct rk_tune_opts {
    rk_tune_metric metric;  /* what is maximised (default NDCG) */
    int32_t n;              /* list length measured (the run's N) */
    double relevance;       /* a validation rating this high is relevant */
    double fraction;        /* of each user's ratings held out for validation, in (0, 1) */
    uint64_t seed;
    rk_tune_grid_kind grid; /* which configurations */
    int rounds;             /* validation draws, each its own seed; the scores are their means (0: 1) */
    int64_t max_users;      /* validation users measured at most (a seeded sample; 0: all) */
    int threads;            /* 0: OpenMP's default */
    rk_progress_fn progress; /* "tune", in configurations (may be NULL) */
    void *progress_ud;
    int64_t done_before, total; /* internal: the progress of the rounds so far */
} rk_tune_opts;

/* One configuration tried. */
typedef struct rk_tune_row {
    rk_rankw_opts cfg;
    rk_rank_result res;     /* its top-N against the validation part */
    double score;           /* rk_tune_value(res, metric) */
    double seconds;         /* its shaping and top-N (its base's lists not counted) */
} rk_tune_row;

typedef struct rk_tune_result {
    int n_rows;
    rk_tune_row *rows;      /* in grid order */
    int best;               /* index of the chosen row */
    int bases;              /* engine calls made (one per base and round) */
    int64_t train_ratings, val_ratings, val_users;
    double t_split, t_lists, t_topn, t_total;
    char device[128];       /* where the lists were computed */
} rk_tune_result;

/*! rk_tune_run() : the search over m (a fold's training model), each base's
 *  lists on the seam's current backend (the CPU after a GPU failure under
 *  --device auto), on o->rounds draws.  base: the engine options to start from (threads).
 *  @return RK_OK, RK_E_ARG (nothing to validate: no user has two ratings),
 *  RK_E_NOMEM, or an engine's status. */
rk_status rk_tune_run(const rk_model *m, const rk_tune_opts *o, const rk_knn_opts *base, rk_backend_seam *seam,
                      rk_tune_result *out, rk_error *err);

/*! rk_tune_grid() : the configurations of a grid in order into out[cap];
 *  @return how many there are (may exceed cap). */
int rk_tune_grid(rk_tune_grid_kind grid, rk_rankw_opts *out, int cap);

void rk_tune_free(rk_tune_result *r);

/*! rk_tune_split() : the validation split of §6c: *tr gets m's user rows
 *  without the held ratings (allocated), *va the held ratings (allocated;
 *  user order, then row order).  --tune-predict (rk_ptune.h) splits the
 *  same way.  @return RK_OK, RK_E_NOMEM. */
rk_status rk_tune_split(const rk_model *m, double fraction, uint64_t seed, rk_csr *tr, rk_triples *va,
                        rk_error *err);

#ifdef __cplusplus
}
#endif
#endif /* RK_TUNE_H */
