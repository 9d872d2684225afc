/* The batch job: load → duplicates → split → model → engine → evaluate → write. */
#include "config.h"
#include "rk_job.h"
#include "rk_data.h"
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
}

static void note(const rk_job_opts *o, const char *fmt, const char *a)
{
    char buf[512];
    if (o->note == NULL) return;
    snprintf(buf, sizeof buf, fmt, a);
    o->note(o->ud, buf);
}

/* ---- metrics.json --------------------------------------------------------- */

static void json_num(FILE *fp, double x)
{
    char b[40];
    if (!isfinite(x)) {
        fputs("null", fp); /* JSON has no nan or inf */
        return;
    }
    rk_out_double(b, sizeof b, x);
    fputs(b, fp);
}

static void json_key(FILE *fp, const char *indent, const char *key)
{
    fputs(indent, fp);
    rk_out_json_string(fp, key);
    fputs(": ", fp);
}

static void write_metrics(FILE *fp, const rk_job_opts *o, const rk_job_report *r,
                          const rk_dataset *ds, const rk_model *m, const rk_knn_stats *st)
{
    const rk_knn_opts *k = &o->knn;
    fputs("{\n", fp);
    json_key(fp, "  ", "recknn_version");
    rk_out_json_string(fp, PACKAGE_VERSION);
    fputs(",\n", fp);
    json_key(fp, "  ", "inputs");
    fputs("[", fp);
    for (int i = 0; i < o->n_inputs; i++) {
        if (i) fputs(", ", fp);
        rk_out_json_string(fp, o->inputs[i]);
    }
    fputs("],\n", fp);

    json_key(fp, "  ", "counts");
    fprintf(fp, "{\"users\": %lld, \"items\": %lld, \"ratings\": %lld, \"train_ratings\": %lld, "
                "\"test_ratings\": %lld, \"skipped_lines\": %lld, \"duplicates_removed\": %lld, "
                "\"neighbor_rows\": %lld},\n",
            (long long)r->users, (long long)r->items, (long long)r->ratings,
            (long long)r->train_ratings, (long long)r->test_ratings, (long long)r->skipped_lines,
            (long long)r->duplicates_removed, (long long)r->list_entries);

    json_key(fp, "  ", "bad_lines");
    fputs("[", fp);
    for (int b = 0; b < r->n_bad; b++) {
        fputs(b ? ", {\"file\": " : "{\"file\": ", fp);
        rk_out_json_string(fp, r->bad[b].file);
        fprintf(fp, ", \"line\": %lld}", (long long)r->bad[b].line);
    }
    fputs("],\n", fp);
    if (r->skipped_lines > 0) {
        json_key(fp, "  ", "first_bad_reason");
        rk_out_json_string(fp, r->first_bad_reason);
        fputs(",\n", fp);
    }

    json_key(fp, "  ", "options");
    fputs("{", fp);
    fputs("\"format\": ", fp);
    rk_out_json_string(fp, rk_format_name(ds->train_report.format));
    if (ds->train_report.format == RK_FMT_CSV) {
        char d[2] = {ds->train_report.delimiter, 0};
        fputs(", \"delimiter\": ", fp);
        rk_out_json_string(fp, d);
        fputs(", \"columns\": ", fp);
        if (o->load.columns != NULL) rk_out_json_string(fp, o->load.columns); else fputs("null", fp);
    }
    fputs(", \"duplicates\": ", fp);
    rk_out_json_string(fp, rk_dup_policy_name(o->duplicates));
    fprintf(fp, ", \"skip_bad_lines\": %s", o->load.skip_bad_lines ? "true" : "false");
    fputs(", \"rating_scale\": [", fp);
    json_num(fp, m->rmin);
    fputs(", ", fp);
    json_num(fp, m->rmax);
    fprintf(fp, "], \"rating_scale_given\": %s", o->load.have_scale ? "true" : "false");
    fputs(", \"metric\": ", fp);
    rk_out_json_string(fp, rk_metric_name(k->sim.metric));
    fprintf(fp, ", \"k\": %d, \"min_support\": %d, \"shrinkage\": ", k->k, k->sim.min_support);
    json_num(fp, k->sim.shrinkage);
    fputs(", \"predict\": ", fp);
    rk_out_json_string(fp, rk_predict_mode_name(k->mode));
    fprintf(fp, ", \"min_k\": %d, \"test\": ", k->min_k);
    if (o->test_path != NULL) rk_out_json_string(fp, o->test_path); else fputs("null", fp);
    fputs(", \"holdout\": ", fp);
    json_num(fp, o->holdout);
    fprintf(fp, ", \"seed\": %llu, \"device\": ", (unsigned long long)o->seed);
    rk_out_json_string(fp, rk_device_name(o->device));
    fputs(", \"gpu_memory_gb\": ", fp);
    json_num(fp, o->gpu_memory_gb);
    fprintf(fp, ", \"threads\": %d, \"out\": ", rk_omp_max_threads());
    rk_out_json_string(fp, o->out_dir);
    fprintf(fp, ", \"write_neighbors\": %s},\n", o->write_neighbors ? "true" : "false");

    json_key(fp, "  ", "device");
    rk_out_json_string(fp, r->device);
    fputs(",\n", fp);
    json_key(fp, "  ", "engine");
    fputs("{\"path\": ", fp);
    rk_out_json_string(fp, st->path);
    fprintf(fp, ", \"pair_updates\": %lld, \"pair_updates_per_s\": ", (long long)st->pair_updates);
    json_num(fp, st->sim_s > 0 ? (double)st->pair_updates / st->sim_s : 0.0);
    fputs(", \"wall_s\": ", fp);
    json_num(fp, st->wall_s);
    fputs(", \"init_s\": ", fp);
    json_num(fp, st->init_s);
    fputs(", \"upload_s\": ", fp);
    json_num(fp, st->upload_s);
    fputs(", \"download_s\": ", fp);
    json_num(fp, st->download_s);
    fputs(", \"detail\": ", fp);
    rk_out_json_string(fp, st->detail);
    fputs("},\n", fp);

    json_key(fp, "  ", "metrics");
    if (r->have_eval) {
        fputs("{\"rmse\": ", fp);
        json_num(fp, r->eval.rmse);
        fputs(", \"mae\": ", fp);
        json_num(fp, r->eval.mae);
        fprintf(fp, ", \"fallbacks\": %lld, \"test_pairs\": %lld, \"unknown_users\": %lld, "
                    "\"unknown_items\": %lld},\n",
                (long long)r->eval.fallbacks, (long long)r->eval.n,
                (long long)r->eval.unknown_users, (long long)r->eval.unknown_items);
    } else {
        fputs("{\"rmse\": null, \"mae\": null, \"fallbacks\": null, \"test_pairs\": 0},\n", fp);
    }

    json_key(fp, "  ", "timings_s");
    fputs("{\"load\": ", fp);
    json_num(fp, r->t_load);
    fputs(", \"similarity\": ", fp);
    json_num(fp, r->t_similarity);
    fputs(", \"select\": ", fp);
    json_num(fp, r->t_select);
    fputs(", \"predict\": ", fp);
    json_num(fp, r->t_predict);
    fputs(", \"recommend\": ", fp);
    json_num(fp, r->t_recommend);
    fputs(", \"write\": ", fp);
    json_num(fp, r->t_write);
    fputs(", \"total\": ", fp);
    json_num(fp, r->t_total);
    fputs("},\n", fp);
    json_key(fp, "  ", "load_detail_s");
    fputs("{\"read_parse\": ", fp);
    json_num(fp, r->t_read_parse);
    fputs(", \"ids\": ", fp);
    json_num(fp, r->t_ids);
    fputs(", \"duplicates\": ", fp);
    json_num(fp, r->t_dedupe);
    fputs(", \"split\": ", fp);
    json_num(fp, r->t_split);
    fputs(", \"model\": ", fp);
    json_num(fp, r->t_model);
    fputs("},\n", fp);
    json_key(fp, "  ", "load_mb_per_s");
    json_num(fp, r->load_mb_s);
    fputs("\n}\n", fp);
}

/* ---- the job ---------------------------------------------------------------- */

typedef struct job_state {
    rk_data data;           /* ids, training and test ratings, model */
    rk_lists lists;
    double *pred;
    int32_t *used;
    rk_out *out;
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
    rk_out_free(j->out);
}

/* --device gpu: fail before loading when no usable GPU takes these options,
 * then start its context in the background.  --device auto: ask in the
 * background (decide_device answers after the load). */
static rk_status start_device(const rk_job_opts *o, const rk_knn_opts *ko, job_state *j, rk_error *err)
{
    if (o->device == RK_DEVICE_CPU) return RK_OK;
    if (o->device == RK_DEVICE_GPU) {
        char why[256];
        if (!rk_gpu_available(why, sizeof why) || !rk_gpu_supports(ko, why, sizeof why))
            return rk_error_set(err, RK_E_GPU, "--device gpu: %s", why);
        j->gpu_ok = 1;
    } else {
        j->probe_gpu = 1;
    }
    warm_start(j);
    return RK_OK;
}

static int decide_device(const rk_job_opts *o, const rk_knn_opts *ko, job_state *j)
{
    char why[256];
    warm_join(j);
    if (o->device == RK_DEVICE_CPU) return 0;
    if (o->device == RK_DEVICE_GPU) return 1;
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
    if (o->n_inputs < 1) return rk_error_set(err, RK_E_ARG, "no rating file given");
    if (o->test_path != NULL && o->holdout > 0.0)
        return rk_error_set(err, RK_E_ARG, "--test and --holdout cannot be used together");
    if (o->holdout != 0.0 && !(o->holdout > 0.0 && o->holdout < 1.0))
        return rk_error_set(err, RK_E_ARG, "--holdout must be in (0, 1)");
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

    /* engine */
    int use_gpu = decide_device(o, &ko, &j);
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
    if (use_gpu) {
        rk_gpu_opts g = {0};
        g.memory_cap = (size_t)(o->gpu_memory_gb * 1073741824.0);
        s = rk_gpu_knn(&j.data.model, &ko, &g, &j.lists, q.n > 0 ? &q : NULL, NULL, NULL, &st, err);
    } else {
        s = rk_knn_cpu(&j.data.model, &ko, &j.lists, q.n > 0 ? &q : NULL, &st, err);
    }
    if (s != RK_OK) goto fail;
    rep->t_similarity = st.sim_s;
    rep->t_select = st.select_s;
    rep->t_predict = st.predict_s;
    snprintf(rep->device, sizeof rep->device, "%s", st.device);
    snprintf(rep->path, sizeof rep->path, "%s", st.path);
    for (int32_t i = 0; i < j.lists.n_items; i++) rep->list_entries += j.lists.len[i];
    if (test->n > 0) {
        rk_eval_ratings(&j.data.model, test->n, test->user, test->item, test->rating, j.pred, j.used, &rep->eval);
        rep->have_eval = 1;
    }
    double t_engine_end = rk_omp_wtime();

    /* write */
    FILE *fp;
    s = rk_out_open(&j.out, o->out_dir, err);
    if (s == RK_OK && o->write_neighbors) {
        s = rk_out_file(j.out, "neighbors.csv", &fp, err);
        if (s == RK_OK) s = rk_out_neighbors(fp, &j.lists, ds->items, err);
    }
    if (s == RK_OK && test->n > 0) {
        s = rk_out_file(j.out, "predictions.csv", &fp, err);
        if (s == RK_OK)
            s = rk_out_predictions(fp, test->n, test->user, test->item, test->rating, j.pred, j.used,
                                   ds->users, ds->items, err);
    }
    if (s == RK_OK) s = rk_out_file(j.out, "metrics.json", &fp, err);
    if (s != RK_OK) goto fail;
    t = rk_omp_wtime();
    rep->t_write = t - t_engine_end;
    rep->t_total = t - t0;
    write_metrics(fp, o, rep, ds, &j.data.model, &st);
    s = rk_out_commit(j.out, err);
    if (s != RK_OK) goto fail;
    job_free(&j);
    return RK_OK;
fail:
    job_free(&j);
    return s;
}
