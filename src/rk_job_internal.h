/* rk_job_internal.h — what the job's files share (src/ only). */
#ifndef RK_JOB_INTERNAL_H
#define RK_JOB_INTERNAL_H

#include <stdio.h>
#include "rk_job.h"
#include "rk_data.h"
#include "rk_model.h"
#include "rk_output.h"
#include "rk_rank.h"

/* What the report shows of the last fold (each may be NULL or empty). */
typedef struct rk_job_shown {
    const rk_triples *test;     /* held-out ratings */
    const double *pred;         /* their predictions */
    const rk_lists *lists;      /* neighbour lists */
    const rk_rank *rank;        /* recommendation counts (NULL without top-N) */
} rk_job_shown;

/*! rk_job_report_counts() : the data counts, bad lines and load details of
 *  the data stage into rep (train and test ratings: the data stage's). */
void rk_job_report_counts(rk_job_report *rep, const rk_job_opts *o, const rk_data *d);

/*! rk_job_finish() : metrics.json and, with --report, report.html into out,
 *  then commit every file; sets rep->t_write and t_total.
 *  @return RK_OK, RK_E_IO, RK_E_NOMEM. */
rk_status rk_job_finish(const rk_job_opts *o, rk_job_report *rep, const rk_data *d, const rk_model *m,
                        const rk_knn_stats *st, rk_out *out, double t0, double t_engine_end,
                        const rk_job_shown *shown, rk_error *err);

/*! rk_job_write_metrics() : metrics.json of a finished run (SPEC §7). */
void rk_job_write_metrics(FILE *fp, const rk_job_opts *o, const rk_job_report *r, const rk_dataset *ds,
                          const rk_model *m, const rk_knn_stats *st);

/*! rk_job_run_model() : the job with --model: recommendations and answers to
 *  --queries from a saved model (rk_job_model.c). */
rk_status rk_job_run_model(const rk_job_opts *o, rk_job_report *rep, rk_error *err);

/*! rk_job_approx_check_opts() : --approx's refusals (rk_job_approx.c): a
 *  full-vector metric, no test set, folds or model files.  @return RK_OK or
 *  RK_E_ARG. */
rk_status rk_job_approx_check_opts(const rk_job_opts *o, const rk_knn_opts *ko, rk_error *err);

/*! rk_job_approx_lists() : the lists of the model em by the random ball
 *  cover, on the GPU when use_gpu (the CPU after a GPU failure under
 *  --device auto), then the recall check of --approx-check; rep->approx and
 *  approx_check, and st's device, path and times, are filled. */
rk_status rk_job_approx_lists(const rk_job_opts *o, const rk_knn_opts *ko, const rk_model *em, int use_gpu,
                              rk_lists *lists, rk_job_report *rep, rk_knn_stats *st, rk_error *err);

/*! rk_job_write_approx() : the "approx" member of metrics.json (null without
 *  --approx), with its comma and line end. */
void rk_job_write_approx(FILE *fp, const rk_job_opts *o, const rk_job_report *r);

#endif /* RK_JOB_INTERNAL_H */
