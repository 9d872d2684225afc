/* The files a run writes: their table (each an entry with its name and
 * writer: the registry of io/rk_outset.h), report.html's writer, and the
 * commit of the run's files (rk_job_internal.h).  A new output format is a
 * writer and a row here; the job hands over contents and never names a file. */
#include "config.h"
#include "rk_job_internal.h"
#include "rk_omp.h"
#include "rk_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rk_status report_html(FILE *fp, const void *in, rk_error *err)
{
    const rk_job_result *res = in;
    const rk_job_opts *o = res->o;
    const rk_job_report *r = res->rep;
    const rk_job_shown *sh = res->shown;
    char vals[8][64];
    const char *names[8], *values[8];
    char metric[64];
    int n = 0;
    snprintf(metric, sizeof metric, "%s%s", rk_metric_name(o->knn.sim.metric),
             o->knn.negative ? ", negative similarities kept" : "");
    names[n] = "metric"; values[n++] = metric;
    names[n] = "k"; snprintf(vals[n], 64, "%d", o->knn.k); values[n] = vals[n]; n++;
    names[n] = "predict"; values[n++] = rk_predict_mode_name(o->knn.mode);
    names[n] = "min-support"; snprintf(vals[n], 64, "%d", o->knn.sim.min_support); values[n] = vals[n]; n++;
    names[n] = "top-n"; snprintf(vals[n], 64, "%d", r->top_n); values[n] = vals[n]; n++;
    names[n] = "split";
    if (o->folds > 0) snprintf(vals[n], 64, "%d folds, seed %llu", o->folds, (unsigned long long)o->seed);
    else if (o->test_path != NULL) snprintf(vals[n], 64, "--test");
    else if (o->holdout > 0) snprintf(vals[n], 64, "%s holdout %g, seed %llu", rk_split_kind_name(o->split),
                                      o->holdout, (unsigned long long)o->seed);
    else snprintf(vals[n], 64, "none");
    values[n] = vals[n]; n++;
    names[n] = "relevance"; snprintf(vals[n], 64, "%g", o->relevance); values[n] = vals[n]; n++;
    names[n] = "path"; values[n++] = r->path;

    const char *stage_names[] = {"load", "similarity", "select", "predict", "recommend", "baseline", "write"};
    double stage_s[] = {r->t_load, r->t_similarity, r->t_select, r->t_predict, r->t_recommend, r->t_baseline,
                        r->t_write};
    rk_eval_result ev[RK_JOB_MAX_FOLDS];
    rk_rank_result rk[RK_JOB_MAX_FOLDS], bs[RK_JOB_MAX_FOLDS];
    int n_eval = 0, have_rank = 1, have_base = 1;
    for (int f = 0; f < r->n_folds; f++) {
        ev[f] = r->fold[f].eval;
        rk[f] = r->fold[f].rank;
        bs[f] = r->fold[f].base;
        n_eval += r->fold[f].have_eval;
        have_rank = have_rank && r->fold[f].have_rank;
        have_base = have_base && r->fold[f].have_base;
    }
    rk_report_data d;
    memset(&d, 0, sizeof d);
    d.command = o->command_line;
    d.n_options = n;
    d.option_name = names;
    d.option_value = values;
    d.device = r->device;
    d.users = r->users;
    d.items = r->items;
    d.ratings = r->ratings;
    d.train_ratings = r->train_ratings;
    d.test_ratings = r->test_ratings;
    d.n_stages = (int)(sizeof stage_s / sizeof stage_s[0]);
    d.stage_name = stage_names;
    d.stage_s = stage_s;
    if (sh->test != NULL && sh->pred != NULL) {
        d.n_pred = sh->test->n;
        d.truth = sh->test->rating;
        d.pred = sh->pred;
    }
    d.lists = sh->lists;
    d.n_folds = n_eval == r->n_folds ? r->n_folds : 0;
    d.fold_eval = ev;
    d.fold_rank = have_rank && d.n_folds > 0 ? rk : NULL;
    d.fold_base = have_base && d.n_folds > 0 ? bs : NULL;
    char verdict[320];
    d.verdict_below = rk_job_verdict(o, r, verdict, sizeof verdict) == 1;
    d.verdict = verdict;
    if (sh->rank != NULL) {
        d.n_items = (int32_t)r->items;
        d.item_counts = rk_rank_item_counts(sh->rank);
    }
    /* --tune's table: a label per configuration */
    char *text = NULL;
    const char **label = NULL;
    double *score = NULL;
    const rk_tune_result *t = sh->tune;
    if (t != NULL && t->n_rows > 0) {
        text = malloc((size_t)t->n_rows * 160);
        label = malloc((size_t)t->n_rows * sizeof *label);
        score = malloc((size_t)t->n_rows * sizeof *score);
        if (text == NULL || label == NULL || score == NULL) {
            free(text);
            free(label);
            free(score);
            return rk_error_set(err, RK_E_NOMEM, "out of memory for the tuning table");
        }
        for (int i = 0; i < t->n_rows; i++) {
            rk_rankw_label(&t->rows[i].cfg, text + (size_t)i * 160, 160);
            label[i] = text + (size_t)i * 160;
            score[i] = t->rows[i].score;
        }
        d.n_tune = t->n_rows;
        d.tune_label = label;
        d.tune_score = score;
        d.tune_best = t->best;
        d.tune_metric = rk_tune_metric_name(o->tune_metric);
    }
    rk_status s = rk_report_write(fp, &d, err);
    free(text);
    free(label);
    free(score);
    return s;
}

/* Every file a run writes, in the order a content's files are made. */
/* ---- a fold's files ----------------------------------------------------------- */

rk_status rk_job_user_metrics(rk_outset *out, int file_fold, const rk_rank *rank, const rk_idmap *users,
                              rk_error *err)
{
    const int32_t nu = rk_rank_users(rank);
    rk_outset_user_row *rows = malloc((size_t)(nu > 0 ? nu : 1) * sizeof *rows);
    RK_CHECK_ALLOC(rows, err);
    int64_t n = 0;
    for (int32_t u = 0; u < nu; u++) {
        rk_rank_user_row r;
        rk_rank_user(rank, u, &r);
        if (r.relevant == 0) continue;
        rows[n++] = (rk_outset_user_row){u, r.listed, r.hits, r.relevant, r.precision, r.recall, r.ndcg, r.ap, r.rr};
    }
    const rk_outset_users pu = {n, rows, users};
    rk_status s = rk_outset_write(out, RK_OUTSET_USER_METRICS, file_fold, &pu, err);
    free(rows);
    return s;
}

void rk_job_early_payloads(rk_job_early *w, int neighbors, const rk_lists *lists, const rk_idmap *list_ids,
                           const rk_triples *test, const double *pred, const int32_t *used, const rk_idmap *users,
                           const rk_idmap *items)
{
    memset(w, 0, sizeof *w);
    w->neighbors = neighbors;
    w->nl = (rk_outset_lists){lists, list_ids};
    w->predictions = test->n > 0;
    w->pr = (rk_outset_preds){test->n, test->user, test->item, test->rating, pred, used, users, items, NULL, NULL};
}

#define RK_EARLY_THREADS 2 /* cores the early files take beside the ranking stage */

static void early_write(rk_job_early *w)
{
    w->status = RK_OK;
    if (w->nb_files != NULL) w->status = rk_outset_later_write(w->nb_files, &w->nl, &w->err);
    if (w->status == RK_OK && w->pr_files != NULL) w->status = rk_outset_later_write(w->pr_files, &w->pr, &w->err);
}

static void *early_thread(void *arg)
{
    rk_job_early *w = arg;
    rk_omp_set_threads(RK_EARLY_THREADS); /* this thread's parallel regions only */
    early_write(w);
    return NULL;
}

rk_status rk_job_early_start(rk_job_early *w, rk_outset *out, rk_error *err)
{
    rk_error_clear(&w->err);
    w->status = RK_OK;
    w->started = 0;
    w->nb_files = w->pr_files = NULL;
    rk_status s = RK_OK;
    if (w->neighbors) s = rk_outset_later_open(out, RK_OUTSET_NEIGHBORS, w->fold, &w->nb_files, err);
    if (s == RK_OK && w->predictions) s = rk_outset_later_open(out, RK_OUTSET_PREDICTIONS, w->fold, &w->pr_files, err);
    if (s != RK_OK) {
        rk_outset_later_free(w->nb_files);
        w->nb_files = NULL;
        return s;
    }
    w->started = pthread_create(&w->th, NULL, early_thread, w) == 0 ? 1 : 2;
    if (w->started == 2) early_write(w);
    return RK_OK;
}

rk_status rk_job_early_finish(rk_job_early *w, rk_error *err)
{
    if (w->started == 1) pthread_join(w->th, NULL);
    w->started = w->started ? 2 : 0;
    rk_outset_later_free(w->nb_files);
    rk_outset_later_free(w->pr_files);
    w->nb_files = w->pr_files = NULL;
    if (w->status != RK_OK && err != NULL) *err = w->err;
    return w->status;
}

static const rk_outset_row job_files[] = {
    {RK_OUTSET_RECOMMENDATIONS, "recommendations.csv", NULL, rk_outset_recs_csv_open, rk_outset_recs_csv_put,
     rk_outset_recs_csv_close},
    {RK_OUTSET_NEIGHBORS, "neighbors.csv", rk_outset_neighbors_csv, NULL, NULL, NULL},
    {RK_OUTSET_PREDICTIONS, "predictions.csv", rk_outset_predictions_csv, NULL, NULL, NULL},
    {RK_OUTSET_METRICS, "metrics.json", rk_job_metrics_json, NULL, NULL, NULL},
    {RK_OUTSET_REPORT, "report.html", report_html, NULL, NULL, NULL},
    {RK_OUTSET_USER_METRICS, "user_metrics.csv", rk_outset_user_metrics_csv, NULL, NULL, NULL},
};

int rk_job_files_is_output(const char *name)
{
    return rk_outset_is_file(job_files, (int)(sizeof job_files / sizeof job_files[0]), name);
}

rk_status rk_job_files_open(rk_outset **set, const char *dir, rk_error *err)
{
    return rk_outset_open(set, dir, job_files, (int)(sizeof job_files / sizeof job_files[0]), err);
}

rk_status rk_job_recs_slice_open(const rk_outset_ids *ids, rk_outset_slice **sp, rk_error *err)
{
    return rk_outset_slice_open(job_files, (int)(sizeof job_files / sizeof job_files[0]), RK_OUTSET_RECOMMENDATIONS,
                                ids, sp, err);
}

rk_status rk_job_finish(const rk_job_opts *o, rk_job_report *rep, const rk_data *d, const rk_model *m,
                        const rk_knn_stats *st, rk_outset *out, double t0, double t_engine_end,
                        const rk_job_shown *shown, rk_error *err)
{
    double t = rk_omp_wtime();
    rep->t_write += t - t_engine_end; /* after the folds' own files */
    rep->t_total = t - t0;
    rk_job_result res = {o, rep, &d->ds, m, st, shown, NULL, 0};
    /* metrics.json last: it lists every other file of the run */
    if (o->report) RK_FORWARD(rk_outset_write(out, RK_OUTSET_REPORT, 0, &res, err));
    rk_out_info *files = malloc(RK_OUT_MAX_FILES * sizeof *files);
    if (files == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory listing the outputs");
    rk_status s = rk_outset_files(out, files, RK_OUT_MAX_FILES, &res.n_files, err);
    res.files = files;
    if (s == RK_OK) s = rk_outset_write(out, RK_OUTSET_METRICS, 0, &res, err);
    free(files);
    return s != RK_OK ? s : rk_outset_commit(out, err);
}
