/* rk_api_gpus.c — option "gpus" of a model fitted in memory: its neighbour
 * lists and its ranking model's lists shared among several GPUs of this
 * process as the command's --gpus shares them (job/rk_job_gpus.c), with the
 * same bytes as one device.  Top-N, predictions and evaluations run on the
 * first device named. */
#include "config.h"

#include "rk_api_internal.h"

/* The seam's callback (rk_backend_opts.resolve, from its warm-up thread):
 * the CUDA ordinals of the model's "gpus". */
static rk_status resolve(void *ud, int32_t *ids, int *n, rk_error *err)
{
    const recknn_model *M = ud;
    return rk_gpus_resolve(&M->gpus, rk_gpu_device_count(), ids, n, err);
}

void rk_api_gpus_seam(recknn_model *M, const rk_job_opts *jo, rk_backend_opts *bo)
{
    M->gpus = jo->gpus;
    bo->gpus_given = rk_gpus_given(&jo->gpus);
    bo->resolve = resolve;
    bo->ud = M;
}

int rk_api_gpus_shared(const recknn_model *M)
{
    return rk_backend_current(&M->seam)->gpu && M->seam.n_devices > 1;
}

rk_status rk_api_gpus_lists(const rk_job_opts *jo, recknn_model *M, rk_knn_stats *st, rk_error *err)
{
    return rk_job_gpus_lists(jo, &M->seam, &M->ko, rk_api_engine_model(M), &M->m, M->by_user, &M->lists, st, err);
}

rk_status rk_api_gpus_rank(const rk_job_opts *jo, recknn_model *M, rk_error *err)
{
    RK_FORWARD(rk_job_gpus_rank_lists(jo, &jo->rank, &M->seam, &M->m, &M->rl, err));
    M->ranked = 1;
    return RK_OK;
}
