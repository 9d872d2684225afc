/* The job's --memory-limit plans (rk_job_internal.h): before the load from
 * the input's size, after it from the counts (rk_plan.h). */
#include "config.h"
#include "rk_job_internal.h"
#include "rk_omp.h"
#include "rk_plan.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* --memory-limit, before the load: the data stage's need from the input's size. */
rk_status rk_job_plan_load(const rk_job_opts *o, rk_error *err)
{
    int64_t bytes = 0;
    for (int i = 0; i < o->n_inputs; i++) {
        struct stat st;
        if (strcmp(o->inputs[i], "-") != 0 && stat(o->inputs[i], &st) == 0 && S_ISREG(st.st_mode)) bytes += st.st_size;
    }
    struct stat st;
    if (o->test_path != NULL && stat(o->test_path, &st) == 0 && S_ISREG(st.st_mode)) bytes += st.st_size;
    const double need = rk_plan_load_bytes(bytes), limit = o->memory_limit_gb * 1073741824.0;
    if (need > limit)
    {
        char a[32], b[32];
        return rk_error_set(err, RK_E_NOMEM, "loading %.1f MB of ratings needs about %s of host memory, and "
                            "--memory-limit gives %s: raise --memory-limit", (double)bytes / 1e6,
                            rk_plan_bytes_str(need, a), rk_plan_bytes_str(limit, b));
    }
    return RK_OK;
}

/* --memory-limit, after the load: the stages' needs with the counts known;
 * fewer CPU threads when that fits, else a stop before any work. */
rk_status rk_job_plan_run(const rk_job_opts *o, rk_knn_opts *ko, int64_t n_test, int with_time, rk_job_report *rep,
                          rk_error *err)
{
    rk_plan_in in;
    rk_plan_host plan;
    memset(&in, 0, sizeof in);
    in.users = o->by_user ? rep->items : rep->users;
    in.items = o->by_user ? rep->users : rep->items;
    in.ratings = rep->ratings;
    in.test = o->folds > 0 ? (rep->ratings + o->folds - 1) / o->folds
              : o->holdout > 0.0 ? (int64_t)(o->holdout * (double)rep->ratings) + 1 : n_test;
    in.k = ko->k;
    in.top_n = rep->top_n;
    in.folds = o->folds;
    in.with_time = with_time;
    in.threads = ko->threads > 0 ? ko->threads : rk_omp_max_threads();
    rk_status s = rk_plan_fit(&in, o->memory_limit_gb * 1073741824.0, &plan, err);
    rep->host_plan_gb = plan.total / 1073741824.0;
    rep->threads_planned = plan.threads;
    if (s != RK_OK) return s;
    if (plan.threads < in.threads) {
        rk_note(o->note, o->ud, "--memory-limit: the CPU stages run on %d threads instead of %d (each holds rows "
                "over the whole catalogue)", plan.threads, in.threads);
        ko->threads = plan.threads;
    }
    return RK_OK;
}
