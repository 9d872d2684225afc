/* rk_job_base.c — the most-popular baseline of a fold (rk_job_internal.h):
 * its top-N ranked against the fold's test ratings, the floor every ranking
 * number is read against.  Beside a GPU engine it runs in a thread of its
 * own on two cores while the engine stage runs (the GPU's calls leave
 * the host's cores mostly idle), so that the job waits only for what is
 * left of it; beside the CPU engine it runs after it, on every core. */
#include "rk_job_internal.h"
#include "rk_omp.h"
#include "rk_popular.h"

#include <string.h>

#define RK_BASE_BESIDE_THREADS 2 /* cores the baseline takes beside the engine */

static rk_status base_run(rk_job_base *b)
{
    rk_status s = rk_rank_new(&b->rank, b->test, b->n_users, b->n_items, b->top_n, b->relevance, &b->err);
    if (s == RK_OK) s = rk_rank_set_cutoffs(b->rank, b->cutoffs, b->n_cutoffs, &b->err);
    if (s == RK_OK) {
        rk_topn_opts to = b->to;
        to.sink = rk_rank_sink;
        to.sink_ud = b->rank;
        to.progress = NULL;
        s = rk_popular_topn(b->m, &to, NULL, &b->err);
    }
    return s;
}

static void *base_thread(void *arg)
{
    rk_job_base *b = arg;
    rk_omp_set_threads(b->threads); /* this thread's parallel regions only */
    b->to.threads = b->threads;
    b->status = base_run(b);
    return NULL;
}

void rk_job_base_start(rk_job_base *b, int beside)
{
    b->status = RK_OK;
    b->rank = NULL;
    rk_error_clear(&b->err);
    const int all = b->to.threads > 0 ? b->to.threads : rk_omp_max_threads();
    b->threads = all < RK_BASE_BESIDE_THREADS ? all : RK_BASE_BESIDE_THREADS;
    b->started = beside && all > RK_BASE_BESIDE_THREADS && pthread_create(&b->th, NULL, base_thread, b) == 0;
}

rk_status rk_job_base_finish(rk_job_base *b, rk_error *err)
{
    if (b->started) {
        pthread_join(b->th, NULL);
        b->started = 0;
    } else {
        b->status = base_run(b);
    }
    if (b->status != RK_OK && err != NULL) *err = b->err;
    return b->status;
}
