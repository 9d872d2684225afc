/* The batch job: load → duplicates → split → model → engine → evaluate → write. */
#include "config.h"
#include "rk_job.h"
#include "rk_data.h"
#include "rk_mfile.h"
#include "rk_job_internal.h"
#include "rk_model.h"
#include "rk_output.h"
#include "rk_omp.h"
#include "rk_gpu.h"
#include "rk_byuser.h"
#include "rk_plan.h"
#include "rk_popular.h"
#include "rk_rank.h"
#include "rk_split.h"
#include "rk_utopn.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void rk_job_opts_default(rk_job_opts *o)
{
    memset(o, 0, sizeof *o);
    rk_load_opts_default(&o->load);
    rk_knn_opts_default(&o->knn);
    o->duplicates = RK_DUP_LAST;
    o->seed = 0;
    o->device = RK_DEVICE_AUTO;
    o->out_dir = "recknn-out";
    o->write_neighbors = 1;
    o->top_n = 10;
    rk_rankw_opts_default(&o->rank);
    o->gpu_topn = RK_GPU_TOPN_AUTO;
    o->split = RK_SPLIT_RATINGS;
    o->relevance = RK_RANK_RELEVANCE_DEFAULT;
    o->baseline_popular = 1;
    o->tune_metric = RK_TUNE_NDCG;
    o->tune_fraction = 0.2;
    o->tune_users = 20000;
}

/* ---- the job ---------------------------------------------------------------- */

typedef struct job_state {
    rk_data data;           /* ids, training and test ratings, model */
    int by_user;            /* --by user (for the device choice) */
    /* resampled runs (--folds, --split user|temporal; data.part marks every
     * rating): the fold's own training and test ratings and model */
    rk_triples train, test;
    rk_model model;
    const rk_model *m;      /* the fold's model */
    rk_byuser uview;        /* --by user: its transposed view, which the engines read */
    const rk_triples *tr, *te;
    rk_lists lists;
    rk_lists rlists;        /* the ranking model's lists (--rank, CONTRACT.md §5b) */
    rk_tune_result tune;    /* --tune: the last fold's search */
    rk_ptune_result ptune;  /* --tune-predict: the last fold's search */
    rk_model lmodel;        /* --split users: the fold's training users alone, for the ranking lists */
    double *pred;
    int32_t *used;
    rk_pmodel_global global; /* --predict global with --save-model: the fold's trained model */
    rk_outset *out;         /* the run's files */
    int32_t *users_asked;   /* --users: every id of the file that names a user, file order */
    int64_t n_users_asked;
    int32_t *topn_users;    /* of them, the fold's users with a training rating */
    int32_t *items_asked;   /* --items: the known items of the file, file order */
    int64_t n_items_asked;
    int64_t n_topn_users;
    rk_outset_stream *recs; /* the recommendations of a written fold, batch by batch (started
                               over when the GPU fails and the CPU runs) */
    rk_outset_slice *slice; /* under mpirun, a rank's slice of them (--mpi-output slices) */
    rk_rank *rank;          /* the fold's ranking metrics and recommendation counts */
    rk_rank *base;          /* the popularity baseline's */
    const rk_job_opts *o;   /* for the seam's callbacks: --gpus, the ranks, --items */
    const rk_knn_opts *ko;
    rk_backend_seam seam;   /* the engines' device: chosen, warmed, given up for the CPU */
} job_state;

/* What one fold made (the last fold's stays for the files written at the end). */
static void fold_free(job_state *j)
{
    rk_model_free(&j->lmodel);
    rk_lists_free(&j->rlists);
    rk_byuser_free(&j->uview);
    rk_lists_free(&j->lists);
    rk_pmodel_global_free(&j->global);
    free(j->pred);
    free(j->used);
    j->pred = NULL;
    j->used = NULL;
    free(j->topn_users);
    j->topn_users = NULL;
    rk_outset_stream_free(j->recs);
    rk_outset_slice_free(j->slice);
    j->recs = NULL;
    j->slice = NULL;
    rk_rank_free(j->rank);
    rk_rank_free(j->base);
    j->rank = j->base = NULL;
    if (j->data.resampled) {
        rk_triples_free(&j->train);
        rk_triples_free(&j->test);
        rk_model_free(&j->model);
    }
}

static void job_free(job_state *j)
{
    rk_gpu_forget_csr(); /* a matrix the load kept on the device: before its host arrays go */
    rk_tune_free(&j->tune);
    rk_ptune_free(&j->ptune);
    rk_backend_free(&j->seam);
    fold_free(j);
    free(j->users_asked);
    free(j->items_asked);
    rk_data_free(&j->data);
    rk_outset_free(j->out);
}

/* The seam's callbacks: the devices of this process's parts (asked in its
 * warm-up thread), and whether the GPU pays for this data's shape. */
static rk_status resolve_devices(void *ud, int32_t *ids, int *n, rk_error *err)
{
    const job_state *j = ud;
    return rk_job_dist_devices(j->o, ids, n, err);
}

static int shape_pays(void *ud, char *why, size_t cap);

/* The seam's notes go to the job's callback (its ud is the job state). */
static void seam_note(void *ud, const char *msg)
{
    const job_state *j = ud;
    j->o->note(j->o->ud, msg);
}

/* The seam's options from the job's; a thread asks the driver for the GPU,
 * and starts its context, while the data load (rk_backend_start). */
static rk_status start_device(const rk_job_opts *o, const rk_knn_opts *ko, job_state *j, rk_error *err)
{
    rk_backend_opts bo;
    memset(&bo, 0, sizeof bo);
    bo.device = o->device;
    bo.gpus_given = rk_gpus_given(&o->gpus);
    bo.gpu.memory_cap = (size_t)(o->gpu_memory_gb * 1073741824.0);
    bo.gpu.topn_route = o->gpu_topn;
    bo.gpu.query_route = o->gpu_query;
    bo.gpu.sims_route = o->gpu_sims;
    bo.exact = o->approx == RK_APPROX_NONE;
    bo.resolve = resolve_devices;
    bo.shape_pays = shape_pays;
    bo.note = o->note != NULL ? seam_note : NULL;
    bo.ud = j;
    j->o = o;
    j->ko = ko;
    return rk_backend_start(&j->seam, &bo, ko, err);
}

/* Rates of the engines on the H100 machine (BENCHMARKS.md, sparse catalogues
 * and ML-20M): the GPU writes and scans a dense row of n_items cells for every
 * item (about 1e11 cells/s) besides its pair updates (about 2e11/s); a CPU
 * thread makes about 1e8 pair updates/s and touches only co-rated cells. */
#define GPU_CELLS_PER_S 1e11
#define GPU_PAIRS_PER_S 2e11
#define CPU_PAIRS_PER_S_THREAD 1e8

/* --device auto: 0 when the GPU's dense rows would make it much slower than
 * the CPU (millions of items with a few ratings each), with the estimates in
 * why. */
static int shape_pays(void *ud, char *why, size_t cap)
{
    const job_state *j = ud;
    const rk_job_opts *o = j->o;
    const rk_knn_opts *ko = j->ko;
    const int by_user = j->by_user;
    /* the engine's rows are items (users with --by user); its pairs come from the other side */
    const double items = (double)rk_ids_count(by_user ? j->data.ds.users : j->data.ds.items);
    double pairs = 0.0;
    if (!j->data.resampled) { /* the model's rows hold the counts: no pass over the ratings */
        const rk_csr *side = by_user ? &j->data.model.by_item : &j->data.model.by_user;
        for (int32_t r = 0; r < side->n_rows; r++) {
            const double c = (double)(side->ptr[r + 1] - side->ptr[r]);
            pairs += c * c;
        }
    } else {
        const rk_triples *t = &j->data.train;
        const int32_t n_side = rk_ids_count(by_user ? j->data.ds.items : j->data.ds.users);
        const int32_t *side = by_user ? t->item : t->user;
        int64_t *cnt = calloc((size_t)(n_side > 0 ? n_side : 1), sizeof *cnt);
        if (cnt == NULL) return 1;
        for (int64_t x = 0; x < t->n; x++) cnt[side[x]]++;
        for (int32_t u = 0; u < n_side; u++) pairs += (double)cnt[u] * (double)cnt[u];
        free(cnt);
    }
    /* a subset's rows take their share (as if of average weight) */
    double rows = items;
    if (o->items_path != NULL && !by_user) rows = (double)j->n_items_asked;
    else if (by_user && o->users_path != NULL && !j->data.resampled && j->data.test.n == 0) rows = (double)j->n_users_asked;
    if (items > 0.0) pairs *= rows / items;
    const int threads = ko->threads > 0 ? ko->threads : rk_omp_max_threads();
    const double gpu = rows * items / GPU_CELLS_PER_S + pairs / GPU_PAIRS_PER_S;
    const double cpu = pairs / (CPU_PAIRS_PER_S_THREAD * (threads > 0 ? threads : 1));
    if (gpu > 0.5 && gpu > 4.0 * cpu) {
        snprintf(why, cap, "%.0f rows of %.0f items with %.2g co-rating pairs: the GPU's dense rows take about %.0f s, "
                 "the CPU's sparse ones about %.1f s", rows, items, pairs, gpu, cpu);
        return 0;
    }
    return 1;
}

/* The fold's users among --users: those with a training rating. */
static rk_status fold_users(const rk_job_opts *o, job_state *j, rk_job_report *rep, int last, rk_error *err)
{
    int64_t kept = 0, untrained = 0;
    j->topn_users = malloc((size_t)(j->n_users_asked > 0 ? j->n_users_asked : 1) * sizeof *j->topn_users);
    RK_CHECK_ALLOC(j->topn_users, err);
    for (int64_t t = 0; t < j->n_users_asked; t++) {
        int32_t u = j->users_asked[t];
        if (rk_model_user_known(j->m, u)) {
            j->topn_users[kept++] = u;
        } else if (untrained++ == 0 && rep->users_unknown == 0) {
            rk_ids_format(j->data.ds.users, u, rep->users_first_unknown, sizeof rep->users_first_unknown);
            rep->users_first_unknown_line = 0; /* its line is not kept: name the id alone */
        }
    }
    j->n_topn_users = kept;
    if (!last) return RK_OK;
    rep->users_unknown += untrained;
    if (rep->users_unknown > 0) {
        char where[64] = "";
        if (rep->users_first_unknown_line > 0)
            snprintf(where, sizeof where, " at line %lld", (long long)rep->users_first_unknown_line);
        rk_note(o->note, o->ud, "%.*s: %lld of %lld ids are not users of the training data (first: %s%s); "
                "they get no recommendations", 300, o->users_path, (long long)rep->users_unknown,
                (long long)rep->users_file_ids, rep->users_first_unknown, where);
    }
    return RK_OK;
}

/* Recommendations go to the file being written and to the ranking metrics. */
typedef struct tee_sink {
    rk_outset_stream *recs;
    rk_rank *rank;
} tee_sink;

static rk_status tee_write(void *ud, const rk_topn_batch *b, rk_error *err)
{
    tee_sink *t = ud;
    if (t->rank != NULL) RK_FORWARD(rk_rank_sink(t->rank, b, err));
    if (t->recs != NULL) RK_FORWARD(rk_outset_put(t->recs, b, err));
    return RK_OK;
}

/* The fold's training and test ratings and model. */
static rk_status fold_data(const rk_job_opts *o, const rk_knn_opts *ko, job_state *j, int f, rk_error *err)
{
    if (!j->data.resampled) {
        j->m = &j->data.model;
        j->tr = &j->data.train;
        j->te = &j->data.test;
        return RK_OK;
    }
    const rk_dataset *ds = &j->data.ds;
    RK_FORWARD(rk_split_apply(&j->data.train, j->data.part, o->folds > 0 ? f : 1, &j->train, &j->test, err));
    RK_FORWARD(rk_model_build(&j->model, &j->train, rk_ids_count(ds->users), rk_ids_count(ds->items),
                              o->load.have_scale, o->load.scale_min, o->load.scale_max,
                              rk_knn_needs_baselines(ko), err));
    j->m = &j->model;
    j->tr = &j->train;
    j->te = &j->test;
    return RK_OK;
}

/* The GPU engine failed under --device auto and the seam gave the run to
 * the CPU: start the fold's recommendations over (the GPU may have sent some
 * batches); later folds run on the CPU too. */
static rk_status restart_topn(const rk_job_opts *o, job_state *j, tee_sink *tee, const rk_topn_opts *to,
                              rk_error *err)
{
    if (tee->rank != NULL) {
        const rk_dataset *ds = &j->data.ds;
        rk_rank_free(j->rank);
        j->rank = NULL;
        tee->rank = NULL;
        RK_FORWARD(rk_rank_new(&j->rank, j->te, rk_ids_count(ds->users), rk_ids_count(ds->items), to->n,
                               o->relevance, err));
        RK_FORWARD(rk_rank_set_cutoffs(j->rank, o->cutoffs, o->n_cutoffs, err));
        if (o->user_metrics) RK_FORWARD(rk_rank_keep_users(j->rank, err));
        tee->rank = j->rank;
    }
    if (tee->recs != NULL) RK_FORWARD(rk_outset_restart(tee->recs, err));
    return RK_OK;
}

/* Top-N comes from the ranking model (CONTRACT.md §5b) rather than from the
 * --metric lists: item mode, exact lists. */
static int rank_model_on(const rk_job_opts *o)
{
    return rk_rankw_on(&o->rank) && !o->by_user && o->approx == RK_APPROX_NONE;
}

/* --tune on the fold's training model: the search's table stays for
 * metrics.json and the report; *cfg gets the chosen configuration. */
static rk_status tune_fold(const rk_job_opts *o, job_state *j, const rk_model *lm, rk_job_report *rep,
                           rk_rankw_opts *cfg, rk_error *err)
{
    rk_tune_free(&j->tune);
    rk_tune_opts to;
    rk_job_tune_opts(o, rep->top_n, &to);
    RK_FORWARD(rk_tune_run(lm, &to, &o->knn, &j->seam, &j->tune, err));
    rep->t_tune += j->tune.t_total;
    *cfg = j->tune.rows[j->tune.best].cfg;
    return RK_OK;
}

/* --split users: the fold's model without the held-out users (those with a
 * test or fold-in rating), whose fold-in ratings serve their own top-N but
 * must not make the ranking model's similarities (CONTRACT.md §6d). */
static rk_status training_users(job_state *j, rk_error *err)
{
    const rk_triples *all = &j->data.train;
    const int32_t nu = j->m->by_user.n_rows;
    uint8_t *drop = calloc((size_t)(nu > 0 ? nu : 1), 1);
    RK_CHECK_ALLOC(drop, err);
    for (int64_t t = 0; t < all->n; t++)
        if (j->data.part[t] != 0 && all->user[t] < nu) drop[all->user[t]] = 1;
    rk_model_free(&j->lmodel);
    rk_status s = rk_rankw_restrict(j->m, drop, &j->lmodel, err);
    free(drop);
    return s;
}

/* restart_topn for the ranking stage (rk_job_rank_topn's callback). */
typedef struct rank_restart {
    const rk_job_opts *o;
    job_state *j;
    tee_sink *tee;
    const rk_topn_opts *to;
} rank_restart;

static rk_status restart_rank(void *ud, rk_error *err)
{
    rank_restart *r = ud;
    return restart_topn(r->o, r->j, r->tee, r->to, err);
}

/* Subset queries: --items, or --users in user mode without a test set (the
 * users' lists are all their recommendations need). */
static void subset_rows(const rk_job_opts *o, const job_state *j, int64_t n_test, rk_knn_opts *eko)
{
    if (o->items_path != NULL && !o->by_user) {
        eko->rows = j->items_asked;
        eko->n_rows = (int32_t)j->n_items_asked;
    } else if (o->by_user && o->users_path != NULL && n_test == 0 && j->topn_users != NULL) {
        eko->rows = j->topn_users;
        eko->n_rows = (int32_t)j->n_topn_users;
    }
}

/* What the engine stage of a fold reads and fills. */
typedef struct fold_engine {
    const rk_model *em;  /* the engine's model (--by user: the transposed view; lists per user, queries (i, u)) */
    rk_knn_opts eko;     /* the engine's options, with the subset of rows, if any */
    rk_queries q;        /* the test set's (n 0: none) */
    rk_topn_opts to;     /* top-N into tee */
    tee_sink tee;        /* the file being written and the ranking metrics */
    int want_topn;       /* top-N is computed when it is written or measured */
    int write;           /* the fold's files are written */
    rk_topn_stats ts;
    rk_job_early *early;  /* the lists' and predictions' files, written beside the ranking stage (NULL: after) */
} fold_engine;

/* The fold's top-N request, its sinks (the recommendations' file when the
 * fold is written, the ranking metrics when measured) and its queries. */
static rk_status fold_engine_setup(const rk_job_opts *o, const rk_knn_opts *ko, job_state *j, rk_job_report *rep,
                                   int write, int file_fold, fold_engine *e, rk_error *err)
{
    const rk_dataset *ds = &j->data.ds;
    const rk_triples *test = j->te;
    const int root = rk_dist_rank(o->dist) == 0; /* under mpirun only rank 0 writes and measures */
    e->want_topn = rep->top_n > 0 && (write || test->n > 0);
    e->write = write;
    if (e->want_topn && root) {
        RK_FORWARD(rk_rank_new(&j->rank, test, rk_ids_count(ds->users), rk_ids_count(ds->items), rep->top_n,
                               o->relevance, err));
        RK_FORWARD(rk_rank_set_cutoffs(j->rank, o->cutoffs, o->n_cutoffs, err));
        if (o->user_metrics) RK_FORWARD(rk_rank_keep_users(j->rank, err));
        e->tee.rank = j->rank;
    }
    if (e->want_topn && write && root) {
        const rk_outset_ids ids = {ds->users, ds->items};
        RK_FORWARD(rk_outset_stream_open(j->out, RK_OUTSET_RECOMMENDATIONS, file_fold, &ids, &j->recs, err));
        e->tee.recs = j->recs;
    }
    e->to.n = rep->top_n;
    e->to.users = o->users_path != NULL ? j->topn_users : NULL;
    e->to.n_users = j->n_topn_users;
    e->to.sink = tee_write;
    e->to.sink_ud = &e->tee;
    e->to.threads = ko->threads;
    e->to.progress = o->progress;
    e->to.progress_ud = o->ud;

    e->em = j->m;
    if (o->by_user) {
        RK_FORWARD(rk_byuser_view(j->m, &j->uview, err));
        e->em = &j->uview.model;
    }
    RK_FORWARD(rk_lists_alloc(&j->lists, (int32_t)(o->by_user ? rep->users : rep->items), ko->k, err));
    e->eko = *ko;
    subset_rows(o, j, test->n, &e->eko);
    rep->list_rows = e->eko.rows != NULL ? e->eko.n_rows : j->lists.n_items;
    if (test->n > 0) {
        j->pred = malloc((size_t)test->n * sizeof *j->pred);
        j->used = malloc((size_t)test->n * sizeof *j->used);
        if (j->pred == NULL || j->used == NULL)
            return rk_error_set(err, RK_E_NOMEM, "out of memory for %lld predictions", (long long)test->n);
        e->q.n = test->n;
        e->q.user = o->by_user ? test->item : test->user;
        e->q.item = o->by_user ? test->user : test->item;
        e->q.pred = j->pred;
        e->q.used = j->used;
    }
    /* the trained global model stays for the model file (trained without a test set too) */
    if (o->save_model != NULL && ko->mode == RK_PREDICT_GLOBAL) e->q.global = &j->global;
    return RK_OK;
}

/* One process's exact engine on the seam's current backend: lists,
 * predictions, and top-N while the lists are in its memory when it takes
 * this N; a GPU failure under --device auto redoes the call on the CPU. */
static rk_status engine_lists(const rk_job_opts *o, job_state *j, rk_job_report *rep, int f, fold_engine *e,
                              int *topn_done, rk_knn_stats *st, rk_error *err)
{
    const rk_backend *be = rk_backend_current(&j->seam);
    const rk_gpu_opts g = rk_backend_call_opts(&j->seam);
    rk_queries *qp = e->q.n > 0 || e->q.global != NULL ? &e->q : NULL;
    const int fused = !*topn_done && be->fused_topn && rep->top_n <= be->max_topn && !o->by_user; /* user top-N: the CPU's */
    if (be->fused_topn && !*topn_done && !fused && f == 0 && !o->by_user)
        rk_note(o->note, o->ud, "top-%d is above the GPU's limit: the CPU computes the recommendations", rep->top_n);
    rk_status s = be->knn(e->em, &e->eko, &g, &j->lists, qp, fused ? &e->to : NULL, fused ? &e->ts : NULL, st, err);
    *topn_done = *topn_done || fused;
    if (be->gpu && rk_backend_fall_back(&j->seam, s, "the GPU engine", err)) {
        /* the CPU gives the same results; what the GPU sent is dropped */
        RK_FORWARD(restart_topn(o, j, &e->tee, &e->to, err));
        *topn_done = !e->want_topn;
        memset(&e->ts, 0, sizeof e->ts);
        s = rk_backend_current(&j->seam)->knn(e->em, &e->eko, &g, &j->lists, qp, NULL, NULL, st, err);
    }
    return s;
}

/* The engine stage: the lists by the ball cover (--approx), shared out among
 * ranks and GPUs, or one engine call; then top-N on the CPU if no engine
 * ranked it. */
static rk_status fold_engine_run(const rk_job_opts *o, const rk_knn_opts *ko, job_state *j, rk_job_report *rep,
                                 int f, fold_engine *e, rk_knn_stats *st, rk_error *err)
{
    memset(st, 0, sizeof *st);
    /* with a ranking model the lists of --metric do not feed top-N */
    const int ranked = e->want_topn && rank_model_on(o);
    int topn_done = !e->want_topn || ranked || o->topn_by_prediction;
    const int gpu = rk_backend_current(&j->seam)->gpu;
    /* the ranking model's stage shared among the ranks too (every rank builds the same model from the
     * same data), unless --tune's search or --split users' training users make it rank 0's */
    const int rank_shared = ranked && rk_dist_size(o->dist) > 1 && !o->tune && o->split != RK_SPLIT_USERS_OUT;
    rk_job_recs_out ro; /* the recommendations in slices when the ranks share top-N (rk_job_recjoin.c) */
    RK_FORWARD(rk_job_recs_setup(o, e->write && e->want_topn && (!ranked || rank_shared), j->recs, j->rank,
                                 &j->data.ds, &ro, &j->slice, err));
    const rk_job_recs_out *rop = ro.tmp_path != NULL || ro.slice != NULL ? &ro : NULL;
    if (o->approx != RK_APPROX_NONE) { /* lists only; top-N from them on the CPU */
        RK_FORWARD(rk_job_approx_lists(o, ko, e->em, &j->seam, &j->lists, rep, st, err));
    } else if (rk_dist_size(o->dist) > 1 || (gpu && j->seam.n_devices > 1)) {
        /* several ranks or GPUs: the stage shared out (rk_job_spread.c) */
        const rk_gpu_opts g = rk_backend_call_opts(&j->seam);
        rk_job_spread_in in = {o, o->dist, &e->eko, e->em, j->m, o->by_user, j->seam.devices,
                               gpu ? j->seam.n_devices : 0, &g, &j->seam, &j->lists, e->q.n > 0 ? &e->q : NULL,
                               e->want_topn && !ranked ? &e->to : NULL, &e->ts, st, rep, RK_JOB_STAGE_LISTS,
                               NULL, NULL, NULL, NULL, ranked ? NULL : rop};
        RK_FORWARD(rk_job_spread(&in, err));
        topn_done = 1;
    } else {
        RK_FORWARD(engine_lists(o, j, rep, f, e, &topn_done, st, err));
    }
    if (ranked) {
        /* the ranks share the ranking lists and top-N out, or rank 0 alone
         * makes them (CONTRACT.md §11) while the others wait for its
         * status; a failure anywhere stops every rank before rank 0 writes */
        rk_status s = rk_dist_fault(o->dist, "topn", err);
        if (s == RK_OK && e->early != NULL) s = rk_job_early_start(e->early, j->out, err);
        if (s == RK_OK && (rank_shared || rk_dist_rank(o->dist) == 0)) {
            rk_rankw_opts cfg = o->rank;
            const rk_model *lm = j->m;
            if (o->split == RK_SPLIT_USERS_OUT && j->data.part != NULL) s = training_users(j, err);
            if (s == RK_OK && j->lmodel.by_user.ptr != NULL) lm = &j->lmodel;
            if (s == RK_OK && o->tune) s = tune_fold(o, j, lm, rep, &cfg, err);
            rank_restart rr = {o, j, &e->tee, &e->to};
            if (s == RK_OK)
                s = rk_job_rank_topn(o, &cfg, &j->seam, rank_shared ? o->dist : NULL, lm, j->m, &e->to, rop,
                                     restart_rank, &rr, &j->rlists, &e->ts, rep, err);
        }
        return rk_dist_agree(o->dist, s, err);
    }
    if (e->want_topn && o->topn_by_prediction) /* the lists' candidates ranked by their predictions */
        return rk_job_topn_predicted(&j->seam, j->m, &e->eko, &j->lists, &e->to, &e->ts, err);
    if (topn_done) return RK_OK;
    const rk_backend *cpu = rk_backend_get(RK_BACKEND_CPU);
    return o->by_user ? cpu->user_topn(j->m, &j->lists, &e->to, NULL, &e->ts, err)
                      : cpu->topn(j->m, &j->lists, &e->to, NULL, &e->ts, err);
}

/* The fold's measures: the popularity baseline's (the floor of every ranking
 * number, made beside the engine stage), the ranking metrics and the rating
 * metrics. */
static void fold_measure(const rk_job_opts *o, const rk_knn_opts *ko, job_state *j, rk_job_fold *fr)
{
    const rk_triples *test = j->te;
    /* --by user, means: a pair whose item has no training rating gets μ, as
     * Surprise's KNNWithMeans answers any unknown pair (the swapped roles would
     * give the user's mean); basic and baseline already agree with it */
    if (o->by_user && ko->mode == RK_PREDICT_MEANS)
        for (int64_t t = 0; t < test->n; t++)
            if (!rk_model_item_known(j->m, test->item[t])) j->pred[t] = rk_predict_clip(j->m, j->m->mu);
    if (j->base != NULL) {
        rk_rank_finish(j->base, &fr->base);
        fr->have_base = 1;
    }
    if (j->rank != NULL) {
        rk_rank_finish(j->rank, &fr->rank);
        fr->have_rank = test->n > 0;
    }
    if (test->n > 0) {
        rk_eval_ratings(j->m, test->n, test->user, test->item, test->rating, j->pred, j->used, &fr->eval);
        fr->have_eval = 1;
    }
}

/* What the fold's neighbour lists and predictions files are written from. */
static void fold_payloads(const rk_job_opts *o, const job_state *j, rk_job_early *w)
{
    const rk_dataset *ds = &j->data.ds;
    rk_job_early_payloads(w, o->write_neighbors, &j->lists, o->by_user ? ds->users : ds->items, j->te, j->pred,
                          j->used, ds->users, ds->items);
}

/* The fold's other files (progress in rows, a file at a time; the lists
 * and predictions unless they were written early). */
static rk_status fold_write(const rk_job_opts *o, job_state *j, rk_job_report *rep, int last, int file_fold,
                            int early, rk_error *err)
{
    const rk_triples *test = j->te;
    int64_t entries = 0;
    for (int32_t i = 0; i < j->lists.n_items; i++) entries += j->lists.len[i];
    if (last) rep->list_entries = entries;
    const int64_t w_rows = (o->write_neighbors ? entries : 0) + test->n;
    rk_job_early w;
    fold_payloads(o, j, &w);
    RK_PROGRESS(o->progress, o->ud, "write", 0, w_rows, "rows");
    if (w.neighbors && !early) {
        RK_FORWARD(rk_outset_write(j->out, RK_OUTSET_NEIGHBORS, file_fold, &w.nl, err));
        RK_PROGRESS(o->progress, o->ud, "write", entries, w_rows, "rows");
    }
    if (w.predictions && !early) {
        RK_FORWARD(rk_outset_write(j->out, RK_OUTSET_PREDICTIONS, file_fold, &w.pr, err));
        RK_PROGRESS(o->progress, o->ud, "write", w_rows, w_rows, "rows");
    }
    if (o->user_metrics && test->n > 0 && j->rank != NULL)
        RK_FORWARD(rk_job_user_metrics(j->out, file_fold, j->rank, j->data.ds.users, err));
    return RK_OK;
}

/* One fold: its data, the engine, top-N (into the file when written and into
 * the ranking metrics), the baseline, the metrics, and its files. */
static rk_status run_fold(const rk_job_opts *o, const rk_knn_opts *ko, job_state *j, rk_job_report *rep, int f,
                          rk_knn_stats *st, rk_error *err)
{
    const int last = f == rep->n_folds - 1;
    const int suffixed = o->write_folds && rep->n_folds > 1;
    const int write = last || o->write_folds;
    const int file_fold = suffixed ? f + 1 : 0; /* its files: NAME.foldF.EXT, or NAME */
    rk_job_fold *fr = &rep->fold[f];

    fold_free(j);
    RK_FORWARD(fold_data(o, ko, j, f, err));
    fr->train_ratings = j->tr->n;
    fr->test_ratings = j->te->n;
    if (rep->top_n > 0 && o->users_path != NULL) RK_FORWARD(fold_users(o, j, rep, last, err));
    rk_knn_opts fko = *ko; /* the fold's: --tune-predict's choice */
    if (o->tune_predict) { /* the table stays for metrics.json */
        rk_ptune_free(&j->ptune);
        RK_FORWARD(rk_job_ptune(o, j->m, &j->seam, &fko, &j->ptune, err));
        rep->t_tune += j->ptune.t_total;
        ko = &fko;
        if (last) rep->k = fko.k; /* the summary line's k: the last fold's choice */
    }
    fold_engine e;
    memset(&e, 0, sizeof e);
    RK_FORWARD(fold_engine_setup(o, ko, j, rep, write, file_fold, &e, err));
    /* most-popular's top-N beside the engine stage, and the lists' and
     * predictions' files beside its ranking stage, when the GPU runs them */
    const int root = rk_dist_rank(o->dist) == 0, base = e.want_topn && j->te->n > 0 && o->baseline_popular && root;
    const int gpu = rk_backend_current(&j->seam)->gpu;
    rk_job_early early;
    fold_payloads(o, j, &early);
    early.fold = file_fold;
    if (write && root && gpu && early.predictions && !(o->by_user && ko->mode == RK_PREDICT_MEANS))
        e.early = &early; /* the lists alone are too few rows to pay for the cores taken from the ranking stage */
    rk_job_base bj = {.m = j->m, .test = j->te, .n_users = rk_ids_count(j->data.ds.users),
                      .n_items = rk_ids_count(j->data.ds.items), .top_n = rep->top_n, .relevance = o->relevance,
                      .cutoffs = o->cutoffs, .n_cutoffs = o->n_cutoffs, .to = e.to};
    if (base) rk_job_base_start(&bj, gpu);
    double t0 = rk_omp_wtime();
    rk_status s = fold_engine_run(o, ko, j, rep, f, &e, st, err);
    fr->t_engine = rk_omp_wtime() - t0;
    if (base) { /* the wait after the engine (all of it when the baseline ran nowhere yet) */
        rk_status sb = rk_job_base_finish(&bj, s == RK_OK ? err : NULL);
        j->base = bj.rank;
        fr->t_baseline = rk_omp_wtime() - t0 - fr->t_engine;
        if (s == RK_OK) s = sb;
    }
    if (early.started) {
        const rk_status sw = rk_job_early_finish(&early, s == RK_OK ? err : NULL);
        if (s == RK_OK) s = sw;
    }
    RK_FORWARD(s);
    if (last) rep->topn = e.ts;
    fr->t_similarity = st->sim_s;
    fr->t_select = st->select_s;
    fr->t_predict = st->predict_s;
    fr->t_recommend = e.ts.wall_s;
    if (!root) return RK_OK; /* the rest is rank 0's: metrics and files */
    fold_measure(o, ko, j, fr);
    if (!write) return RK_OK;
    double t1 = rk_omp_wtime();
    s = fold_write(o, j, rep, last, file_fold, early.started != 0, err);
    fr->t_write = rk_omp_wtime() - t1;
    return s;
}

rk_status rk_job_run(const rk_job_opts *opts, rk_job_report *rep, rk_error *err)
{
    rk_job_opts checked = *opts; /* with the derived settings of the check */
    const rk_job_opts *o = &checked;
    job_state j;
    rk_knn_stats st;
    rk_knn_opts ko;
    rk_status s;
    double t0 = rk_omp_wtime(), t;

    memset(&j, 0, sizeof j);
    memset(rep, 0, sizeof *rep);
    memset(&st, 0, sizeof st);
    /* the inputs, --test and --holdout are checked by the data stage, first */
    RK_FORWARD(rk_job_opts_check(&checked, err));
    rk_job_clamp_threads(&checked);
    ko = o->knn;
    if (o->model_path != NULL) return rk_job_run_model(o, rep, err);
    const int root = rk_dist_rank(o->dist) == 0;
    rep->ranks = rk_dist_size(o->dist);
    if (!o->shrinkage_given) ko.sim.shrinkage = rk_sim_default_shrinkage(ko.sim.metric);
    if (ko.threads > 0) rk_omp_set_threads(ko.threads);
    ko.progress = o->progress;
    ko.progress_ud = o->ud;
    j.by_user = o->by_user;
    s = start_device(o, &ko, &j, err);
    if (s != RK_OK) return s;

    if (o->memory_limit_gb > 0.0) {
        s = rk_job_plan_load(o, err);
        if (s != RK_OK) goto fail;
    }

    /* data: files → ratings → split → model (one per fold when resampled) */
    rk_data_opts dop;
    rk_job_data_opts(o, &ko, &dop);
    /* the CUDA context starts in a thread beside the parse (0.3 s of a
     * core): the parse leaves it that core (BENCHMARKS.md, issue 21) */
    if (dop.load.threads == 0 && j.seam.warming && rk_omp_max_threads() > 2)
        dop.load.threads = rk_omp_max_threads() - 1;
    rk_backend_data_hooks(&j.seam, &dop); /* the sort, and the rows uploaded while the parse */
    s = rk_job_dist_load(o, &dop, &j.data, rep, err); /* under mpirun: every rank's */
    rk_backend_rows_end(&j.seam, &rep->rows_up);
    if (s != RK_OK) goto fail;
    const rk_dataset *ds = &j.data.ds;
    rk_job_report_counts(rep, o, &j.data);
    t = rk_omp_wtime();
    rep->t_load = t - t0;
    int64_t bytes = ds->train_report.bytes + ds->test_report.bytes;
    rep->load_mb_s = rep->t_load > 0 ? (double)bytes / 1e6 / rep->t_load : 0.0;

    /* what top-N will serve: every user, or the known users of --users */
    rep->top_n = o->top_n > rep->items ? (int32_t)rep->items : o->top_n;
    rk_job_clamp_to_data(o, &ko, rep);
    rep->metric = (int)ko.sim.metric;
    rep->k = ko.k;
    if (rep->top_n > 0 && o->users_path != NULL) {
        s = rk_job_read_users(o, j.data.ds.users, &j.users_asked, &j.n_users_asked, rep, err);
        if (s != RK_OK) goto fail;
    }
    if (o->items_path != NULL) {
        s = rk_job_read_items(o, j.data.ds.items, &j.items_asked, &j.n_items_asked, rep, err);
        if (s != RK_OK) goto fail;
    }
    if (o->memory_limit_gb > 0.0) {
        s = rk_job_plan_run(o, &ko, j.data.test.n, j.data.train.time != NULL, rep, err);
        if (s != RK_OK) goto fail;
    }
    /* the output folder first: recommendations stream into it during the engine */
    if (root) {
        s = rk_job_files_open(&j.out, o->out_dir, err);
        if (s != RK_OK) goto fail;
    }
    s = rk_backend_choose(&j.seam, &ko, err);
    if (s != RK_OK) goto fail;
    /* the host's item-major matrix, left out while the GPU might take the
     * run (it transposes on the device), is the CPU's to build: part of the
     * load's model */
    if (!rk_model_item_major_ready(&j.data.model) && !rk_backend_current(&j.seam)->gpu) {
        const double tm = rk_omp_wtime();
        s = rk_model_item_major(&j.data.model, err);
        if (s != RK_OK) goto fail;
        rep->t_model += rk_omp_wtime() - tm;
        rep->t_load += rk_omp_wtime() - tm;
    }

    /* the folds: K with --folds, else one */
    rep->n_folds = o->folds > 0 ? o->folds : 1;
    for (int f = 0; f < rep->n_folds; f++) {
        if (rep->n_folds > 1 && o->progress != NULL) o->progress(o->ud, "fold", f, rep->n_folds, "folds");
        s = run_fold(o, &ko, &j, rep, f, &st, err);
        if (s != RK_OK) goto fail;
        rep->t_similarity += rep->fold[f].t_similarity;
        rep->t_select += rep->fold[f].t_select;
        rep->t_predict += rep->fold[f].t_predict;
        rep->t_recommend += rep->fold[f].t_recommend;
        rep->t_baseline += rep->fold[f].t_baseline;
        rep->t_engine += rep->fold[f].t_engine;
        rep->t_write += rep->fold[f].t_write;
    }
    const rk_job_fold *lf = &rep->fold[rep->n_folds - 1];
    rep->train_ratings = lf->train_ratings;
    rep->test_ratings = lf->test_ratings;
    rep->eval = lf->eval;
    rep->have_eval = lf->have_eval;
    snprintf(rep->device, sizeof rep->device, "%s", st.device);
    rep->gpu_fallback = j.seam.fell_back; /* the seam's, for every engine path */
    snprintf(rep->gpu_fallback_why, sizeof rep->gpu_fallback_why, "%s", j.seam.fell_back_why);
    if (o->device == RK_DEVICE_AUTO && !j.seam.gpu_ok)
        snprintf(rep->gpu_unused, sizeof rep->gpu_unused, "%s", j.seam.gpu_why);
    snprintf(rep->path, sizeof rep->path, "%s", st.path);
    double t_engine_end = rk_omp_wtime();

    if (!root) goto done; /* rank 0 writes the model and the metrics */
    /* the model of the last fold, for tomorrow's queries */
    if (o->save_model != NULL) {
        /* with the ranking model's lists, so that --model ranks as this run did */
        rk_knn_opts sko = ko; /* with the last fold's --tune-predict choice */
        if (o->tune_predict && j.ptune.n_rows > 0) rk_ptune_apply(&j.ptune.rows[j.ptune.best], &sko);
        rk_mfile_view v = {j.m, &j.lists, ds->users, ds->items, &sko, rep->have_rank_model ? &j.rlists : NULL,
                           &rep->rank_used, sko.mode == RK_PREDICT_GLOBAL ? &j.global : NULL};
        /* put in place with the run's files, as one set: an interrupted or
         * failed run leaves the earlier model beside the earlier files */
        FILE *mf;
        s = rk_outset_file_at(j.out, o->save_model, &mf, err);
        if (s == RK_OK) s = rk_mfile_write_named(mf, o->save_model, &v, err);
        if (s != RK_OK) goto fail;
        rep->t_model_io = rk_omp_wtime() - t_engine_end;
    }
    s = rk_job_finish(o, rep, &j.data, j.m, &st, j.out, t0, t_engine_end + rep->t_model_io,
                      &(rk_job_shown){j.te, j.pred, &j.lists, j.rank, o->tune ? &j.tune : NULL,
                                      o->tune_predict ? &j.ptune : NULL}, err);
    if (s != RK_OK) goto fail;
done:
    /* every rank ends with one agreement: a rank's failure is everyone's */
    s = rk_dist_agree(o->dist, RK_OK, err);
    if (s != RK_OK) goto fail;
    job_free(&j);
    return RK_OK;
fail:
    s = rk_dist_agree(o->dist, s, err);
    job_free(&j);
    return s;
}
