/* The batch job: load → duplicates → split → model → engine → evaluate → write. */
#include "config.h"
#include "rk_job.h"
#include "rk_data.h"
#include "rk_idlist.h"
#include "rk_job_internal.h"
#include "rk_model.h"
#include "rk_output.h"
#include "rk_omp.h"
#include "rk_gpu.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const device_names[] = {"auto", "cpu", "gpu"};

rk_status rk_device_parse(const char *name, rk_device *out)
{
    for (int d = 0; d < 3; d++) {
        if (name != NULL && strcmp(name, device_names[d]) == 0) {
            *out = (rk_device)d;
            return RK_OK;
        }
    }
    return RK_E_ARG;
}

const char *rk_device_name(rk_device d)
{
    return (unsigned)d < 3 ? device_names[d] : "unknown";
}

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
    o->gpu_topn = RK_GPU_TOPN_AUTO;
}

static void note(const rk_job_opts *o, const char *fmt, const char *a)
{
    char buf[512];
    if (o->note == NULL) return;
    snprintf(buf, sizeof buf, fmt, a);
    o->note(o->ud, buf);
}

/* ---- the job ---------------------------------------------------------------- */

typedef struct job_state {
    rk_data data;           /* ids, training and test ratings, model */
    rk_lists lists;
    double *pred;
    int32_t *used;
    rk_out *out;
    int32_t *topn_users;    /* --users: the users to serve (NULL: every user) */
    int64_t n_topn_users;
    rk_out_recs *recs;      /* recommendations.csv, written batch by batch */
    pthread_t warm;         /* asks for the GPU and starts its context while the data load */
    int warming;
    int probe_gpu;          /* the thread asks whether a GPU is usable (--device auto) */
    int gpu_ok;             /* its answer */
    char gpu_why[256];
} job_state;

/* The CUDA driver and context take a few tenths of a second to start: a
 * thread does it while the ratings load. */
static void *warm_gpu(void *arg)
{
    job_state *j = arg;
    if (j->probe_gpu) j->gpu_ok = rk_gpu_available(j->gpu_why, sizeof j->gpu_why);
    if (j->gpu_ok) rk_gpu_warmup();
    return NULL;
}

static void warm_start(job_state *j)
{
    j->warming = pthread_create(&j->warm, NULL, warm_gpu, j) == 0;
    if (!j->warming) warm_gpu(j);
}

static void warm_join(job_state *j)
{
    if (j->warming) pthread_join(j->warm, NULL);
    j->warming = 0;
}

static void job_free(job_state *j)
{
    warm_join(j);
    rk_data_free(&j->data);
    rk_lists_free(&j->lists);
    free(j->pred);
    free(j->used);
    free(j->topn_users);
    rk_out_recs_free(j->recs);
    rk_out_free(j->out);
}

/* Asking the driver whether a GPU is usable starts it (about 0.1 s), so a
 * thread asks, and starts the context, while the data load; decide_device
 * reads the answer.  --device gpu fails at once only for what needs no
 * driver (options the GPU engine does not take, a build without CUDA). */
static rk_status start_device(const rk_job_opts *o, const rk_knn_opts *ko, job_state *j, rk_error *err)
{
    if (o->device == RK_DEVICE_CPU) return RK_OK;
    if (o->device == RK_DEVICE_GPU) {
        char why[256];
        if (!rk_gpu_supports(ko, why, sizeof why)) return rk_error_set(err, RK_E_GPU, "--device gpu: %s", why);
    }
    j->probe_gpu = 1;
    warm_start(j);
    return RK_OK;
}

/* @return 1 for the GPU, 0 for the CPU, -1 when --device gpu finds none (err set). */
static int decide_device(const rk_job_opts *o, const rk_knn_opts *ko, job_state *j, rk_error *err)
{
    char why[256];
    warm_join(j);
    if (o->device == RK_DEVICE_CPU) return 0;
    if (o->device == RK_DEVICE_GPU) {
        if (j->gpu_ok) return 1;
        rk_error_set(err, RK_E_GPU, "--device gpu: %s", j->gpu_why);
        return -1;
    }
    if (!j->gpu_ok) {
        note(o, "no usable GPU (%s): running on the CPU", j->gpu_why);
        return 0;
    }
    if (!rk_gpu_supports(ko, why, sizeof why)) {
        note(o, "the GPU engine does not take these options (%s): running on the CPU", why);
        return 0;
    }
    return 1;
}

/* --users FILE: the users of the training data among its ids, in file order.
 * Unknown ids (and users with no training rating) are counted and noted. */
static rk_status topn_users(const rk_job_opts *o, job_state *j, rk_job_report *rep, rk_error *err)
{
    rk_idlist_report ir;
    int32_t *v;
    int64_t n;
    RK_FORWARD(rk_idlist_read(o->users_path, j->data.ds.users, &v, &n, &ir, err));
    int64_t kept = 0, untrained = 0;
    for (int64_t t = 0; t < n; t++) {
        if (rk_model_user_known(&j->data.model, v[t])) {
            v[kept++] = v[t];
        } else if (untrained++ == 0 && ir.unknown == 0) {
            rk_ids_format(j->data.ds.users, v[t], ir.first_unknown, sizeof ir.first_unknown);
            ir.first_unknown_line = 0; /* its line is not kept: name the id alone */
        }
    }
    j->topn_users = v;
    j->n_topn_users = kept;
    rep->users_file_ids = ir.ids;
    rep->users_unknown = ir.unknown + untrained;
    rep->users_repeated = ir.repeated;
    rep->users_first_unknown_line = ir.first_unknown_line;
    snprintf(rep->users_first_unknown, sizeof rep->users_first_unknown, "%s", ir.first_unknown);
    if (rep->users_unknown > 0 && o->note != NULL) {
        char buf[512], where[64] = "";
        if (ir.first_unknown_line > 0) snprintf(where, sizeof where, " at line %lld", (long long)ir.first_unknown_line);
        snprintf(buf, sizeof buf, "%s: %lld of %lld ids are not users of the training data (first: %s%s); "
                 "they get no recommendations", o->users_path, (long long)rep->users_unknown, (long long)ir.ids,
                 rep->users_first_unknown, where);
        o->note(o->ud, buf);
    }
    return RK_OK;
}

rk_status rk_job_run(const rk_job_opts *o, rk_job_report *rep, rk_error *err)
{
    job_state j;
    rk_knn_stats st;
    rk_knn_opts ko = o->knn;
    rk_status s;
    double t0 = rk_omp_wtime(), t;

    memset(&j, 0, sizeof j);
    memset(rep, 0, sizeof *rep);
    memset(&st, 0, sizeof st);
    /* the inputs, --test and --holdout are checked by the data stage, first */
    if (ko.k < 1) return rk_error_set(err, RK_E_ARG, "-k must be at least 1");
    if (!o->shrinkage_given) ko.sim.shrinkage = rk_sim_default_shrinkage(ko.sim.metric);
    if (ko.threads > 0) rk_omp_set_threads(ko.threads);
    ko.progress = o->progress;
    ko.progress_ud = o->ud;
    s = start_device(o, &ko, &j, err);
    if (s != RK_OK) return s;

    /* data: files → ratings → split → model */
    rk_data_opts dop;
    memset(&dop, 0, sizeof dop);
    dop.inputs = o->inputs;
    dop.n_inputs = o->n_inputs;
    dop.test_path = o->test_path;
    dop.holdout = o->holdout;
    dop.seed = o->seed;
    dop.load = o->load;
    if (dop.load.threads == 0) dop.load.threads = ko.threads;
    dop.load.progress = o->progress;
    dop.load.progress_ud = o->ud;
    dop.duplicates = o->duplicates;
    dop.with_baselines = rk_knn_needs_baselines(&ko);
    dop.progress = o->progress;
    dop.progress_ud = o->ud;
    s = rk_data_load(&dop, &j.data, err);
    if (s != RK_OK) goto fail;
    const rk_dataset *ds = &j.data.ds;
    const rk_triples *train = &j.data.train, *test = &j.data.test;
    rep->t_read_parse = j.data.t_read_parse;
    rep->t_ids = j.data.t_ids;
    rep->t_dedupe = j.data.t_dedupe;
    rep->t_split = j.data.t_split;
    rep->t_model = j.data.t_model;
    rep->duplicates_removed = j.data.duplicates_removed;
    rep->users = rk_ids_count(ds->users);
    rep->items = rk_ids_count(ds->items);
    rep->train_ratings = train->n;
    rep->test_ratings = test->n;
    rep->ratings = train->n + test->n;
    rep->skipped_lines = ds->train_report.skipped_lines + ds->test_report.skipped_lines;
    for (int which = 0; which < 2; which++) {
        const rk_load_report *lr = which == 0 ? &ds->train_report : &ds->test_report;
        for (int b = 0; b < lr->n_bad_kept && rep->n_bad < RK_LOAD_BAD_KEPT; b++) {
            const rk_bad_line *bl = &lr->bad[b];
            rep->bad[rep->n_bad].file = which == 0 ? (bl->file < o->n_inputs ? o->inputs[bl->file] : "?") : o->test_path;
            rep->bad[rep->n_bad].line = bl->line;
            rep->n_bad++;
        }
        if (rep->first_bad_reason[0] == '\0' && lr->skipped_lines > 0)
            snprintf(rep->first_bad_reason, sizeof rep->first_bad_reason, "%s", lr->first_bad_reason);
    }
    t = rk_omp_wtime();
    rep->t_load = t - t0;
    int64_t bytes = ds->train_report.bytes + ds->test_report.bytes;
    rep->load_mb_s = rep->t_load > 0 ? (double)bytes / 1e6 / rep->t_load : 0.0;

    /* what top-N will serve: every user, or the known users of --users */
    rep->top_n = o->top_n > rep->items ? (int32_t)rep->items : o->top_n;
    if (rep->top_n > 0 && o->users_path != NULL) {
        s = topn_users(o, &j, rep, err);
        if (s != RK_OK) goto fail;
    }

    /* the output folder first: recommendations stream into it during the engine */
    FILE *fp;
    s = rk_out_open(&j.out, o->out_dir, err);
    if (s == RK_OK && rep->top_n > 0) {
        s = rk_out_file(j.out, "recommendations.csv", &fp, err);
        if (s == RK_OK) s = rk_out_recs_open(&j.recs, fp, ds->users, ds->items, err);
    }
    if (s != RK_OK) goto fail;
    rk_topn_opts to;
    memset(&to, 0, sizeof to);
    to.n = rep->top_n;
    to.users = j.topn_users;
    to.n_users = j.n_topn_users;
    to.sink = rk_out_recs_write;
    to.sink_ud = j.recs;
    to.threads = ko.threads;
    to.progress = o->progress;
    to.progress_ud = o->ud;

    /* engine: lists, predictions, and on the GPU the top-N while the lists are there */
    int use_gpu = decide_device(o, &ko, &j, err);
    if (use_gpu < 0) {
        s = RK_E_GPU;
        goto fail;
    }
    s = rk_lists_alloc(&j.lists, (int32_t)rep->items, ko.k, err);
    if (s != RK_OK) goto fail;
    rk_queries q = {0};
    if (test->n > 0) {
        j.pred = malloc((size_t)test->n * sizeof *j.pred);
        j.used = malloc((size_t)test->n * sizeof *j.used);
        if (j.pred == NULL || j.used == NULL) {
            s = rk_error_set(err, RK_E_NOMEM, "out of memory for %lld predictions", (long long)test->n);
            goto fail;
        }
        q.n = test->n;
        q.user = test->user;
        q.item = test->item;
        q.pred = j.pred;
        q.used = j.used;
    }
    int topn_done = rep->top_n == 0;
    if (use_gpu) {
        rk_gpu_opts g = {0};
        g.memory_cap = (size_t)(o->gpu_memory_gb * 1073741824.0);
        g.topn_route = o->gpu_topn;
        int gpu_topn = !topn_done && rep->top_n <= RK_GPU_MAX_TOPN;
        if (!topn_done && !gpu_topn) {
            char n[32];
            snprintf(n, sizeof n, "%d", rep->top_n);
            note(o, "top-%s is above the GPU's limit: the CPU computes the recommendations", n);
        }
        s = rk_gpu_knn(&j.data.model, &ko, &g, &j.lists, q.n > 0 ? &q : NULL, gpu_topn ? &to : NULL,
                       gpu_topn ? &rep->topn : NULL, &st, err);
        topn_done = topn_done || gpu_topn;
    } else {
        s = rk_knn_cpu(&j.data.model, &ko, &j.lists, q.n > 0 ? &q : NULL, &st, err);
    }
    if (s != RK_OK) goto fail;
    if (!topn_done) {
        s = rk_topn_cpu(&j.data.model, &j.lists, &to, &rep->topn, err);
        if (s != RK_OK) goto fail;
    }
    rep->t_similarity = st.sim_s;
    rep->t_select = st.select_s;
    rep->t_predict = st.predict_s;
    rep->t_recommend = rep->topn.wall_s;
    snprintf(rep->device, sizeof rep->device, "%s", st.device);
    snprintf(rep->path, sizeof rep->path, "%s", st.path);
    for (int32_t i = 0; i < j.lists.n_items; i++) rep->list_entries += j.lists.len[i];
    if (test->n > 0) {
        rk_eval_ratings(&j.data.model, test->n, test->user, test->item, test->rating, j.pred, j.used, &rep->eval);
        rep->have_eval = 1;
    }
    double t_engine_end = rk_omp_wtime();

    /* write the rest (progress in rows, a file at a time) */
    const int64_t w_rows = (o->write_neighbors ? rep->list_entries : 0) + test->n;
    RK_PROGRESS(o->progress, o->ud, "write", 0, w_rows, "rows");
    if (s == RK_OK && o->write_neighbors) {
        s = rk_out_file(j.out, "neighbors.csv", &fp, err);
        if (s == RK_OK) s = rk_out_neighbors(fp, &j.lists, ds->items, err);
        RK_PROGRESS(o->progress, o->ud, "write", rep->list_entries, w_rows, "rows");
    }
    if (s == RK_OK && test->n > 0) {
        s = rk_out_file(j.out, "predictions.csv", &fp, err);
        if (s == RK_OK)
            s = rk_out_predictions(fp, test->n, test->user, test->item, test->rating, j.pred, j.used,
                                   ds->users, ds->items, err);
        RK_PROGRESS(o->progress, o->ud, "write", w_rows, w_rows, "rows");
    }
    if (s == RK_OK) s = rk_out_file(j.out, "metrics.json", &fp, err);
    if (s != RK_OK) goto fail;
    t = rk_omp_wtime();
    rep->t_write = t - t_engine_end;
    rep->t_total = t - t0;
    rk_job_write_metrics(fp, o, rep, ds, &j.data.model, &st);
    s = rk_out_commit(j.out, err);
    if (s != RK_OK) goto fail;
    job_free(&j);
    return RK_OK;
fail:
    job_free(&j);
    return s;
}
