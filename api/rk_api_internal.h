/* rk_api_internal.h — what api/'s files share: the handles' contents. */
#ifndef RK_API_INTERNAL_H
#define RK_API_INTERNAL_H

#include "recknn.h"
#include "rk_jobopt.h"
#include "rk_byuser.h"
#include "rk_pmodel.h"

#define MAX_SET 256 /* option values kept by one options handle */

struct recknn_options {
    rk_job_opts job;
    char *val[MAX_SET]; /* copies of the values given: job's strings point into them */
    const char *name[MAX_SET];
    int n_set;
};

struct recknn_data {
    int32_t n_users, n_items;
    rk_triples t;          /* the ratings as given (recknn_data_new), or empty */
    int is_csr;            /* recknn_data_from_csr: the ratings are csr */
    rk_csr csr;            /* sorted rows, no pair twice */
    unsigned borrowed;     /* csr's arrays that are the caller's (RK_MODEL_BORROW_*) */
};

struct recknn_model {
    rk_knn_opts ko;        /* the engine's options: the metric's lists and predictions */
    rk_model m;
    int by_user;           /* user-based k-NN ("by" user): lists over users, on the transposed view */
    rk_byuser uview;       /* that view */
    rk_lists lists;        /* the metric's: one a row (item, or user in user mode) */
    rk_lists rl;           /* the ranking model's (rk_rankw_on), top-N's lists */
    int ranked;
    int approx;            /* the lists by the ball cover ("approx" rbc): lists and recommendations only */
    rk_backend_seam seam;
    int seam_started;
    int64_t served;        /* users with a rating */
    rk_rankw_opts rank;    /* the ranking model's configuration (with rl) */
    rk_idmap *ids[2];      /* users' and items' ids: a loaded or saved model's (else NULL) */
    int have_check;        /* "approx-check": check holds the recall of the lists */
    rk_rbc_recall_result check;
    rk_gpus_spec gpus;     /* "gpus": the devices its lists are shared among (rk_api_gpus.c) */
    rk_pmodel_global global; /* predict "global": the model trained on the lists (n_items 0: none) */
    /* what the evaluation reads of the options */
    int implicit;
    rk_dup_policy duplicates;
    double relevance;
};

/* The model the lists' engine reads: the transposed view in user mode. */
static inline const rk_model *rk_api_engine_model(const recknn_model *m)
{
    return m->by_user ? &m->uview.model : &m->m;
}

/* The ratings of d as the command's data stage keeps them, into t (allocated
 * here; the caller frees it, whatever the status): the pattern alone with
 * implicit, pairs rated twice resolved by policy, and with by_user (may be
 * NULL) their user-major matrix.  what prefixes the duplicate's message. */
rk_status rk_api_ratings(const recknn_data *d, int implicit, rk_dup_policy policy, const char *what, rk_triples *t,
                         rk_csr *by_user, rk_error *err);

/* The model's backend seam from the options' device ones (the served users counted). */
rk_status rk_api_start(const rk_job_opts *jo, recknn_model *m, rk_error *err);

/* "gpus" (rk_api_gpus.c): the seam's devices resolved from jo's "gpus" (the
 * model keeps the spec for the seam's warm-up thread); 1 when the lists are
 * shared among several GPUs; the metric's lists (allocated) and the ranking
 * model's lists (M->rl, allocated here) made so, byte for byte one device's. */
void rk_api_gpus_seam(recknn_model *M, const rk_job_opts *jo, rk_backend_opts *bo);
int rk_api_gpus_shared(const recknn_model *M);
rk_status rk_api_gpus_lists(const rk_job_opts *jo, recknn_model *M, rk_knn_stats *st, rk_error *err);
rk_status rk_api_gpus_rank(const rk_job_opts *jo, recknn_model *M, rk_error *err);

/* Top-N of the users to (item mode: the lists' or the ranking model's; user mode: from the
 * neighbours' items, on the CPU as the command does). */
rk_status rk_api_topn(recknn_model *m, const rk_topn_opts *to, rk_error *err);

/* Users a top-N batch when the caller follows the progress: a report, and a
 * chance to stop, every RK_API_PROGRESS_BATCH users on the CPU (the engine's
 * own batches hold up to 500,000 users; the lists are the same either way). */
#define RK_API_PROGRESS_BATCH 1024

/* The model's progress callback (recknn_model_set_progress) into a top-N request. */
static inline void rk_api_progress(const recknn_model *m, rk_topn_opts *to)
{
    to->progress = m->ko.progress;
    to->progress_ud = m->ko.progress_ud;
    if (to->progress != NULL) to->batch = RK_API_PROGRESS_BATCH;
}

#endif /* RK_API_INTERNAL_H */
