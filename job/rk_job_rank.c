/* rk_job_rank.c — the ranking stage of a fold (CONTRACT.md §5b): the
 * transformed matrix, its lists on the run's backend, their shaping, and
 * top-N summed from them; with several GPUs, the lists and top-N shared
 * among them (rk_job_spread). */
#include "rk_job_internal.h"
#include "rk_omp.h"

#include <stdlib.h>
#include <string.h>

/* The ranking stage shared among the run's ranks and GPUs (rk_job_spread;
 * dist NULL: this process's devices alone): a part that runs the CPU engine reads a copy of the model
 * whose values are expanded (the GPU parts read tm meanwhile), and the lists
 * are shaped once joined, before top-N. */
typedef struct rank_hooks {
    const rk_rankw_opts *cfg;
    const rk_rankw_model *tm;
    rk_rankw_model host; /* tm, with the values a host engine reads; made at the first ask */
    int made;
} rank_hooks;

static const rk_model *rank_host_model(void *ud, rk_error *err)
{
    rank_hooks *h = ud;
    if (!h->made) {
        h->host = *h->tm;
        if (rk_rankw_expand(&h->host, err) != RK_OK) return NULL;
        h->made = 1;
    }
    return &h->host.model;
}

static void rank_shape(void *ud, rk_lists *l)
{
    const rank_hooks *h = ud;
    rk_rankw_shape(h->cfg, l);
}

static rk_status rank_spread(const rk_job_opts *o, const rk_rankw_opts *cfg, rk_backend_seam *seam, rk_dist *dist,
                             const rk_rankw_model *tm, const rk_knn_opts *ko, const rk_model *m,
                             const rk_topn_opts *to, const rk_job_recs_out *recs, rk_lists *rl, rk_topn_stats *ts,
                             rk_job_report *rep, rk_error *err)
{
    rank_hooks h;
    memset(&h, 0, sizeof h);
    h.cfg = cfg;
    h.tm = tm;
    const rk_gpu_opts g = rk_backend_call_opts(seam);
    const int gpu = rk_backend_current(seam)->gpu;
    rk_job_spread_in in = {o, dist, ko, &tm->model, m, 0, seam->devices, gpu ? seam->n_devices : 0, &g, seam, rl,
                           NULL, to, ts, &rep->rank_lists, rep, RK_JOB_STAGE_RANKING, rank_host_model, rank_shape, &h,
                           NULL, recs};
    const rk_status s = rk_job_spread(&in, err);
    if (h.made) { /* what rk_rankw_expand made of the copy */
        if (h.host.model.by_user.val != tm->model.by_user.val) free(h.host.model.by_user.val);
        if (h.host.model.by_item.val != tm->model.by_item.val) free(h.host.model.by_item.val);
    }
    return s;
}

/* Several GPUs (RECKNN_GPU_RANK_SPREAD=0: the first alone, for comparisons). */
static int rank_spreads(const rk_backend_seam *seam)
{
    return rk_backend_current(seam)->gpu && seam->n_devices > 1 && !rk_backend_switched_off("RECKNN_GPU_RANK_SPREAD");
}

/* The ranking lists' report, from the shaped lists. */
static void rank_report(const rk_rankw_opts *cfg, const rk_lists *rl, rk_job_report *rep)
{
    rep->rank_used = *cfg;
    int64_t entries = 0;
    for (int32_t i = 0; i < rl->n_items; i++) entries += rl->len[i];
    rep->rank_entries = entries;
    rep->have_rank_model = 1;
}

rk_status rk_job_rank_topn(const rk_job_opts *o, const rk_rankw_opts *cfg, rk_backend_seam *seam, rk_dist *dist,
                           const rk_model *lm, const rk_model *m, const rk_topn_opts *to, const rk_job_recs_out *recs,
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
    if (s == RK_OK && (rk_dist_size(dist) > 1 || rank_spreads(seam))) { /* shared among the ranks and GPUs */
        s = rank_spread(o, cfg, seam, dist, &tm, &ko, m, to, recs, rl, ts, rep, err);
        rep->rank_quantum = tm.quantum;
        rk_rankw_free(&tm);
        RK_FORWARD(s);
        rank_report(cfg, rl, rep);
        /* the model, its lists and their shaping, as on one GPU: the stage less its top-N */
        rep->t_rank += rk_omp_wtime() - t0 - (ts != NULL ? ts->wall_s : 0.0);
        return RK_OK;
    }
    if (s == RK_OK)
        s = rk_backend_rank_lists(seam, &tm, &ko, rl, &rep->rank_lists, "the GPU engine (ranking lists)", err);
    rep->rank_quantum = tm.quantum;
    rk_rankw_free(&tm);
    RK_FORWARD(s);
    rk_rankw_shape(cfg, rl);
    rank_report(cfg, rl, rep);
    rep->t_rank += rk_omp_wtime() - t0;
    if (to == NULL) return RK_OK; /* the lists alone (librecknn's fit) */
    return rk_backend_topn(seam, m, rl, to, restart, ud, ts, "the GPU top-N (ranking lists)", err);
}
