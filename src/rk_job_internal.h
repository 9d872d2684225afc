/* rk_job_internal.h — what the job's files share (src/ only). */
#ifndef RK_JOB_INTERNAL_H
#define RK_JOB_INTERNAL_H

#include <stdio.h>
#include "rk_job.h"
#include "rk_model.h"

/*! rk_job_write_metrics() : metrics.json of a finished run (SPEC §7). */
void rk_job_write_metrics(FILE *fp, const rk_job_opts *o, const rk_job_report *r, const rk_dataset *ds,
                          const rk_model *m, const rk_knn_stats *st);

#endif /* RK_JOB_INTERNAL_H */
