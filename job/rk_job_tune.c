/* rk_job_tune.c — the job's options of its two searches (rk_job.h): --tune's
 * (the ranking model, rk_tune.h) and --tune-predict's (the prediction
 * model, rk_ptune.h), which the job's folds and the library's fit share. */
#include "rk_job.h"
#include "rk_ptune.h"

#include <string.h>

void rk_job_tune_opts(const rk_job_opts *o, int32_t n, rk_tune_opts *to)
{
    memset(to, 0, sizeof *to);
    to->metric = o->tune_metric;
    to->n = n;
    to->relevance = o->relevance;
    to->fraction = o->tune_fraction;
    to->seed = o->seed ^ 0x74756e65ULL; /* "tune": a draw of its own */
    to->grid = o->tune_grid;
    to->rounds = o->tune_rounds;
    to->max_users = o->tune_users;
    to->threads = o->knn.threads;
    to->progress = o->progress;
    to->progress_ud = o->ud;
}

rk_status rk_job_ptune(const rk_job_opts *o, const rk_model *m, rk_backend_seam *seam, rk_knn_opts *ko,
                       struct rk_ptune_result *out, rk_error *err)
{
    const uint64_t seed = o->seed ^ 0x7074756e65ULL; /* "ptune": a draw of its own */
    RK_FORWARD(rk_ptune_run(m, ko, o->tune_fraction, seed, seam, out, err));
    rk_ptune_apply(&out->rows[out->best], ko);
    return RK_OK;
}
