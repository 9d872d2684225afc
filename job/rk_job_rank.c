/* rk_job_rank.c — the ranking stage of a fold (CONTRACT.md §5b): the
 * transformed matrix, its lists on the run's backend, their shaping, and
 * top-N summed from them. */
#include "rk_job_internal.h"
#include "rk_omp.h"

#include <string.h>

rk_status rk_job_rank_topn(const rk_job_opts *o, const rk_rankw_opts *cfg, rk_backend_seam *seam, const rk_model *lm,
                           const rk_model *m, const rk_topn_opts *to,
                           rk_status (*restart)(void *ud, rk_error *err), void *ud, rk_lists *rl,
                           rk_topn_stats *ts, rk_job_report *rep, rk_error *err)
{
    const double t0 = rk_omp_wtime();
    rk_rankw_model tm;
    /* rp3beta's values stay one a user until an engine expands them */
    RK_FORWARD(rk_rankw_build_rows(lm, cfg, &tm, err));
    rk_knn_opts ko;
    rk_rankw_knn_opts(cfg, &tm, &o->knn, &ko);
    ko.progress = o->progress;
    ko.progress_ud = o->ud;
    rk_status s = rk_lists_alloc(rl, lm->by_item.n_rows, ko.k, err);
    if (s == RK_OK)
        s = rk_backend_rank_lists(seam, &tm, &ko, rl, &rep->rank_lists, "the GPU engine (ranking lists)", err);
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
    return rk_backend_topn(seam, m, rl, to, restart, ud, ts, "the GPU top-N (ranking lists)", err);
}
