/* rk_job_rank.c — the ranking stage of a fold (CONTRACT.md §5b): the
 * transformed matrix, its lists on the run's backend, their shaping, and
 * top-N summed from them. */
#include "rk_job_internal.h"
#include "rk_omp.h"

#include <string.h>

/* The lists of the transformed model on the current backend; a GPU failure
 * under --device auto makes them again on the CPU. */
static rk_status rank_lists(rk_backend_seam *seam, const rk_model *tm, const rk_knn_opts *ko, rk_lists *rl,
                            rk_knn_stats *st, rk_error *err)
{
    const rk_backend *be = rk_backend_current(seam);
    const rk_gpu_opts g = rk_backend_call_opts(seam);
    rk_status s = be->knn(tm, ko, &g, rl, NULL, NULL, NULL, st, err);
    if (be->gpu && rk_backend_fall_back(seam, s, "the GPU engine (ranking lists)", err))
        s = rk_backend_current(seam)->knn(tm, ko, &g, rl, NULL, NULL, NULL, st, err);
    return s;
}

rk_status rk_job_rank_topn(const rk_job_opts *o, const rk_rankw_opts *cfg, rk_backend_seam *seam, const rk_model *lm,
                           const rk_model *m, const rk_topn_opts *to,
                           rk_status (*restart)(void *ud, rk_error *err), void *ud, rk_lists *rl,
                           rk_topn_stats *ts, rk_job_report *rep, rk_error *err)
{
    const double t0 = rk_omp_wtime();
    rk_rankw_model tm;
    RK_FORWARD(rk_rankw_build(lm, cfg, &tm, err));
    rk_knn_opts ko;
    rk_rankw_knn_opts(cfg, &tm, &o->knn, &ko);
    ko.progress = o->progress;
    ko.progress_ud = o->ud;
    rk_status s = rk_lists_alloc(rl, lm->by_item.n_rows, ko.k, err);
    if (s == RK_OK) s = rank_lists(seam, &tm.model, &ko, rl, &rep->rank_lists, err);
    rep->rank_quantum = tm.quantum;
    rk_rankw_free(&tm);
    RK_FORWARD(s);
    rk_rankw_shape(cfg, rl);
    rep->rank_used = *cfg;
    int64_t entries = 0;
    for (int32_t i = 0; i < rl->n_items; i++) entries += rl->len[i];
    rep->rank_entries = entries;
    rep->have_rank_model = 1;
    rep->t_rank += rk_omp_wtime() - t0;

    const rk_backend *be = rk_backend_current(seam);
    const rk_gpu_opts g = rk_backend_call_opts(seam);
    const int on_be = be->topn != NULL && to->n <= be->max_topn;
    s = on_be ? be->topn(m, rl, to, &g, ts, err) : rk_backend_get(RK_BACKEND_CPU)->topn(m, rl, to, NULL, ts, err);
    if (on_be && be->gpu && rk_backend_fall_back(seam, s, "the GPU top-N (ranking lists)", err)) {
        RK_FORWARD(restart(ud, err));
        memset(ts, 0, sizeof *ts);
        s = rk_backend_get(RK_BACKEND_CPU)->topn(m, rl, to, NULL, ts, err);
    }
    return s;
}
