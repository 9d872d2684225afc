/* rk_job_gpus.c — the lists and the ranking model's lists shared among the
 * GPUs of one process for a caller without a job (librecknn's fit, option
 * "gpus"): rk_job_spread and rk_job_rank_topn with no top-N request. */
#include "rk_job_internal.h"

#include <stdlib.h>

rk_status rk_job_gpus_lists(const rk_job_opts *o, rk_backend_seam *seam, const rk_knn_opts *ko, const rk_model *em,
                            const rk_model *m, int by_user, rk_lists *lists, rk_knn_stats *st, rk_error *err)
{
    rk_job_report *rep = calloc(1, sizeof *rep); /* the parts' report, which no file shows */
    RK_CHECK_ALLOC(rep, err);
    const rk_gpu_opts g = rk_backend_call_opts(seam);
    const int gpu = rk_backend_current(seam)->gpu;
    rk_job_spread_in in = {o, NULL, ko, em, m, by_user, seam->devices, gpu ? seam->n_devices : 0, &g, seam, lists,
                           NULL, NULL, NULL, st, rep, RK_JOB_STAGE_LISTS, NULL, NULL, NULL, NULL, NULL};
    const rk_status s = rk_job_spread(&in, err);
    free(rep);
    return s;
}

rk_status rk_job_gpus_rank_lists(const rk_job_opts *o, const rk_rankw_opts *cfg, rk_backend_seam *seam,
                                 const rk_model *m, rk_lists *rl, rk_error *err)
{
    rk_job_report *rep = calloc(1, sizeof *rep);
    RK_CHECK_ALLOC(rep, err);
    const rk_status s = rk_job_rank_topn(o, cfg, seam, NULL, m, m, NULL, NULL, NULL, NULL, rl, NULL, rep, err);
    free(rep);
    return s;
}
