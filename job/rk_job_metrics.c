/* metrics.json and report.html of a run, the table of the files a run
 * writes, and their commit (rk_job_internal.h). */
#include "config.h"
#include "rk_job_internal.h"
#include "rk_output.h"
#include "rk_omp.h"
#include "rk_gpu.h"
#include "rk_report.h"
#include "rk_split.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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


void rk_job_report_counts(rk_job_report *rep, const rk_job_opts *o, const rk_data *d)
{
    const rk_dataset *ds = &d->ds;
    rep->t_read_parse = d->t_read_parse;
    rep->t_ids = d->t_ids;
    rep->t_dedupe = d->t_dedupe;
    rep->t_split = d->t_split;
    rep->t_model = d->t_model;
    rep->duplicates_removed = d->duplicates_removed;
    rep->users = rk_ids_count(ds->users);
    rep->items = rk_ids_count(ds->items);
    rep->train_ratings = d->train.n;
    rep->test_ratings = d->test.n;
    rep->ratings = d->train.n + d->test.n;
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
}

/* ---- metrics of the folds ---------------------------------------------------- */

/* The numbers of a fold, by name, for the per-fold objects and the summary. */
enum { M_RMSE, M_MAE, M_FALLBACK_RATE, M_PRECISION, M_RECALL, M_NDCG, M_MRR, M_HIT, M_COVERAGE, M_GINI,
       M_COUNT };
static const char *const m_names[M_COUNT] = {"rmse", "mae", "fallback_rate", "precision", "recall",
                                             "ndcg", "mrr", "hit_rate", "coverage", "gini"};

/* @return 1 when the fold has value v (of the model's, or the baseline's when base). */
static int fold_value(const rk_job_fold *f, int v, int base, double *x)
{
    const rk_rank_result *r = base ? &f->base : &f->rank;
    if (v <= M_FALLBACK_RATE) {
        if (base || !f->have_eval) return 0;
        *x = v == M_RMSE ? f->eval.rmse : v == M_MAE ? f->eval.mae
             : f->eval.n > 0 ? (double)f->eval.fallbacks / (double)f->eval.n : 0.0;
        return 1;
    }
    if (base ? !f->have_base : !f->have_rank) return 0;
    switch (v) {
    case M_PRECISION: *x = r->precision; break;
    case M_RECALL: *x = r->recall; break;
    case M_NDCG: *x = r->ndcg; break;
    case M_MRR: *x = r->mrr; break;
    case M_HIT: *x = r->hit_rate; break;
    case M_COVERAGE: *x = r->coverage; break;
    default: *x = r->gini; break;
    }
    return 1;
}

/*! mean and sample standard deviation of value v over the folds that have it. */
static int fold_stats(const rk_job_report *r, int v, int base, double *mean, double *sd)
{
    double sum = 0.0, sq = 0.0, x;
    int n = 0;
    for (int f = 0; f < r->n_folds; f++)
        if (fold_value(&r->fold[f], v, base, &x)) {
            sum += x;
            n++;
        }
    if (n == 0) return 0;
    *mean = sum / n;
    for (int f = 0; f < r->n_folds; f++)
        if (fold_value(&r->fold[f], v, base, &x)) sq += (x - *mean) * (x - *mean);
    *sd = n > 1 ? sqrt(sq / (n - 1)) : 0.0;
    return 1;
}

static void json_rank(FILE *fp, const rk_rank_result *k)
{
    fprintf(fp, "{\"n\": %d, \"relevance\": ", k->n);
    json_num(fp, k->relevance);
    fprintf(fp, ", \"users\": %lld, \"users_without_list\": %lld, \"precision\": ", (long long)k->users,
            (long long)k->users_without_list);
    json_num(fp, k->precision);
    fputs(", \"recall\": ", fp);
    json_num(fp, k->recall);
    fputs(", \"ndcg\": ", fp);
    json_num(fp, k->ndcg);
    fputs(", \"mrr\": ", fp);
    json_num(fp, k->mrr);
    fputs(", \"hit_rate\": ", fp);
    json_num(fp, k->hit_rate);
    fprintf(fp, ", \"lists\": %lld, \"rows\": %lld, \"items_recommended\": %d, \"coverage\": ", (long long)k->lists,
            (long long)k->rows, k->items_recommended);
    json_num(fp, k->coverage);
    fputs(", \"gini\": ", fp);
    json_num(fp, k->gini);
    fputs("}", fp);
}

/* One fold's object of the "folds" array. */
static void json_fold(FILE *fp, const rk_job_fold *f, int index)
{
    fprintf(fp, "    {\"fold\": %d, \"train_ratings\": %lld, \"test_ratings\": %lld, \"rmse\": ", index + 1,
            (long long)f->train_ratings, (long long)f->test_ratings);
    json_num(fp, f->have_eval ? f->eval.rmse : NAN);
    fputs(", \"mae\": ", fp);
    json_num(fp, f->have_eval ? f->eval.mae : NAN);
    fprintf(fp, ", \"fallbacks\": %lld, \"fallback_rate\": ", (long long)f->eval.fallbacks);
    json_num(fp, f->eval.n > 0 ? (double)f->eval.fallbacks / (double)f->eval.n : NAN);
    fprintf(fp, ", \"test_pairs\": %lld, \"unknown_users\": %lld, \"unknown_items\": %lld, \"ranking\": ",
            (long long)f->eval.n, (long long)f->eval.unknown_users, (long long)f->eval.unknown_items);
    if (f->have_rank) json_rank(fp, &f->rank); else fputs("null", fp);
    fputs(", \"baseline_popular\": ", fp);
    if (f->have_base) json_rank(fp, &f->base); else fputs("null", fp);
    fputs(", \"timings_s\": {\"similarity\": ", fp);
    json_num(fp, f->t_similarity);
    fputs(", \"select\": ", fp);
    json_num(fp, f->t_select);
    fputs(", \"predict\": ", fp);
    json_num(fp, f->t_predict);
    fputs(", \"recommend\": ", fp);
    json_num(fp, f->t_recommend);
    fputs(", \"baseline\": ", fp);
    json_num(fp, f->t_baseline);
    fputs("}}", fp);
}

/* "summary": mean and sd over the folds of every value some fold has. */
static void json_summary(FILE *fp, const rk_job_report *r, int base)
{
    double mean, sd;
    int first = 1;
    fputs("{", fp);
    for (int v = 0; v < M_COUNT; v++) {
        if (!fold_stats(r, v, base, &mean, &sd)) continue;
        fputs(first ? "" : ", ", fp);
        first = 0;
        rk_out_json_string(fp, m_names[v]);
        fputs(": {\"mean\": ", fp);
        json_num(fp, mean);
        fputs(", \"sd\": ", fp);
        json_num(fp, sd);
        fputs("}", fp);
    }
    fputs("}", fp);
}

/* ---- several ranks and GPUs ------------------------------------------------- */

double rk_job_balance(const rk_job_report *r, rk_job_balance_of what)
{
    double mx = 0.0, sum = 0.0;
    for (int x = 0; x < r->n_parts; x++) {
        const rk_job_part *p = &r->part[x];
        const double v = what == RK_JOB_BALANCE_ENGINE_S ? p->engine_s
                         : what == RK_JOB_BALANCE_WORK   ? (double)p->work
                         : what == RK_JOB_BALANCE_TOPN_S ? p->topn_s
                                                         : (double)p->topn_work;
        sum += v;
        if (v > mx) mx = v;
    }
    return sum > 0.0 ? mx * r->n_parts / sum : 0.0;
}

/* The "scale" member of metrics.json: ranks, load mode, exchange time, and
 * every part's rows, work and times with their balance. */
static void write_scale(FILE *fp, const rk_job_report *r)
{
    fprintf(fp, "  \"scale\": {\"ranks\": %d, \"load\": ", r->ranks > 0 ? r->ranks : 1);
    if (r->dist_load[0] != '\0') rk_out_json_string(fp, r->dist_load);
    else fputs("null", fp);
    fputs(", \"load_s\": ", fp);
    json_num(fp, r->t_dist_load);
    fputs(", \"exchange_s\": ", fp);
    json_num(fp, r->t_exchange);
    fputs(", \"balance\": {\"engine_s\": ", fp);
    json_num(fp, rk_job_balance(r, RK_JOB_BALANCE_ENGINE_S));
    fputs(", \"work\": ", fp);
    json_num(fp, rk_job_balance(r, RK_JOB_BALANCE_WORK));
    fputs(", \"topn_s\": ", fp);
    json_num(fp, rk_job_balance(r, RK_JOB_BALANCE_TOPN_S));
    fputs(", \"topn_work\": ", fp);
    json_num(fp, rk_job_balance(r, RK_JOB_BALANCE_TOPN_WORK));
    fputs("}, \"parts\": [", fp);
    for (int x = 0; x < r->n_parts; x++) {
        const rk_job_part *p = &r->part[x];
        fprintf(fp, "%s\n    {\"rank\": %d, \"worker\": %d, \"device\": %d, \"rows\": %d, \"work\": %lld, \"engine_s\": ",
                x ? "," : "", p->rank, p->worker, p->device, p->rows, (long long)p->work);
        json_num(fp, p->engine_s);
        fprintf(fp, ", \"topn_users\": %lld, \"topn_work\": %lld, \"topn_rows\": %lld, \"topn_s\": ",
                (long long)p->topn_users, (long long)p->topn_work, (long long)p->topn_rows);
        json_num(fp, p->topn_s);
        fprintf(fp, ", \"gpu_failed\": %s}", p->fell_back ? "true" : "false");
    }
    fputs(r->n_parts > 0 ? "\n  ]},\n" : "]},\n", fp);
}

void rk_job_write_metrics(FILE *fp, const rk_job_opts *o, const rk_job_report *r, const rk_dataset *ds,
                          const rk_model *m, const rk_knn_stats *st)
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
                "\"neighbor_rows\": %lld, \"lists_computed\": %d, \"items_file_ids\": %lld, "
                "\"items_unknown\": %lld, \"items_repeated\": %lld},\n",
            (long long)r->users, (long long)r->items, (long long)r->ratings,
            (long long)r->train_ratings, (long long)r->test_ratings, (long long)r->skipped_lines,
            (long long)r->duplicates_removed, (long long)r->list_entries, r->list_rows,
            (long long)r->items_file_ids, (long long)r->items_unknown, (long long)r->items_repeated);

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
    fprintf(fp, ", \"by\": \"%s\", \"implicit\": %s", o->by_user ? "user" : "item", o->implicit ? "true" : "false");
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
    fputs(", \"memory_limit_gb\": ", fp);
    json_num(fp, o->memory_limit_gb);
    fprintf(fp, ", \"threads\": %d, \"out\": ", rk_omp_max_threads());
    rk_out_json_string(fp, o->out_dir);
    fprintf(fp, ", \"write_neighbors\": %s, \"top_n\": %d, \"users\": ", o->write_neighbors ? "true" : "false",
            o->top_n);
    if (o->users_path != NULL) rk_out_json_string(fp, o->users_path); else fputs("null", fp);
    fputs(", \"items\": ", fp);
    if (o->items_path != NULL) rk_out_json_string(fp, o->items_path); else fputs("null", fp);
    fputs(", \"gpu_topn\": ", fp);
    rk_out_json_string(fp, rk_gpu_topn_route_name(o->gpu_topn));
    fputs(", \"gpu_query\": ", fp);
    rk_out_json_string(fp, rk_gpu_query_route_name(o->gpu_query));
    fputs(", \"gpu_sims\": ", fp);
    rk_out_json_string(fp, rk_gpu_sims_route_name(o->gpu_sims));
    fprintf(fp, ", \"folds\": %d, \"split\": ", o->folds);
    rk_out_json_string(fp, rk_split_kind_name(o->split));
    fprintf(fp, ", \"write_folds\": %s, \"relevance\": ", o->write_folds ? "true" : "false");
    json_num(fp, o->relevance);
    fputs(", \"baseline\": ", fp);
    if (o->baseline_popular) rk_out_json_string(fp, "popular"); else fputs("null", fp);
    fprintf(fp, ", \"report\": %s, \"save_model\": ", o->report ? "true" : "false");
    if (o->save_model != NULL) rk_out_json_string(fp, o->save_model); else fputs("null", fp);
    fputs(", \"model\": ", fp);
    if (o->model_path != NULL) rk_out_json_string(fp, o->model_path); else fputs("null", fp);
    fputs(", \"queries\": ", fp);
    if (o->queries_path != NULL) rk_out_json_string(fp, o->queries_path); else fputs("null", fp);
    fputs(", \"approx\": ", fp);
    if (o->approx != RK_APPROX_NONE) rk_out_json_string(fp, rk_approx_name(o->approx)); else fputs("null", fp);
    fprintf(fp, ", \"reps\": %d, \"probes\": %d, \"approx_check\": %lld", o->approx_reps, o->approx_probes,
            (long long)o->approx_check);
    fputs("},\n", fp);

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
    fprintf(fp, ", \"gpu_fallback\": %s", r->gpu_fallback ? "true" : "false");
    if (r->gpu_fallback) {
        fputs(", \"gpu_fallback_why\": ", fp);
        rk_out_json_string(fp, r->gpu_fallback_why);
    }
    if (r->threads_planned > 0) {
        fprintf(fp, ", \"threads_planned\": %d, \"host_plan_gb\": ", r->threads_planned);
        json_num(fp, r->host_plan_gb);
    }
    fputs("},\n", fp);

    rk_job_write_approx(fp, o, r);
    write_scale(fp, r);
    json_key(fp, "  ", "topn");
    if (r->top_n > 0) {
        const rk_topn_stats *t = &r->topn;
        fprintf(fp, "{\"n\": %d, \"users\": %lld, \"rows\": %lld, \"updates\": %lld, \"path\": ", r->top_n,
                (long long)t->users, (long long)t->rows, (long long)t->updates);
        rk_out_json_string(fp, t->path);
        fputs(", \"detail\": ", fp);
        rk_out_json_string(fp, t->detail);
        fputs(", \"compute_s\": ", fp);
        json_num(fp, t->compute_s);
        fputs(", \"upload_s\": ", fp);
        json_num(fp, t->upload_s);
        fputs(", \"sink_s\": ", fp);
        json_num(fp, t->sink_s);
        fputs(", \"wall_s\": ", fp);
        json_num(fp, t->wall_s);
        if (o->users_path != NULL) {
            fprintf(fp, ", \"users_file_ids\": %lld, \"users_unknown\": %lld, \"users_repeated\": %lld, "
                        "\"users_first_unknown\": ",
                    (long long)r->users_file_ids, (long long)r->users_unknown, (long long)r->users_repeated);
            if (r->users_unknown > 0) rk_out_json_string(fp, r->users_first_unknown); else fputs("null", fp);
        }
        fputs("},\n", fp);
    } else {
        fputs("null,\n", fp);
    }

    /* "metrics": the one split's values, or the means over the folds */
    if (o->model_path != NULL) {
        json_key(fp, "  ", "saved_model");
        fprintf(fp, "{\"queries\": %lld, \"queries_unknown\": %lld, \"ratings_unknown_items\": %lld, \"read_s\": ",
                (long long)r->queries, (long long)r->queries_unknown, (long long)r->ratings_unknown_items);
        json_num(fp, r->t_model_io);
        fputs("},\n", fp);
    }
    json_key(fp, "  ", "metrics");
    if (r->have_eval || r->fold[r->n_folds > 0 ? r->n_folds - 1 : 0].have_rank) {
        double mean, sd;
        int64_t fallbacks = 0, pairs = 0, uu = 0, ui = 0;
        for (int f = 0; f < r->n_folds; f++) {
            fallbacks += r->fold[f].eval.fallbacks;
            pairs += r->fold[f].eval.n;
            uu += r->fold[f].eval.unknown_users;
            ui += r->fold[f].eval.unknown_items;
        }
        fputs("{\"rmse\": ", fp);
        json_num(fp, fold_stats(r, M_RMSE, 0, &mean, &sd) ? mean : NAN);
        fputs(", \"mae\": ", fp);
        json_num(fp, fold_stats(r, M_MAE, 0, &mean, &sd) ? mean : NAN);
        fprintf(fp, ", \"fallbacks\": %lld, \"fallback_rate\": ", (long long)fallbacks);
        json_num(fp, pairs > 0 ? (double)fallbacks / (double)pairs : NAN);
        fprintf(fp, ", \"test_pairs\": %lld, \"unknown_users\": %lld, \"unknown_items\": %lld",
                (long long)pairs, (long long)uu, (long long)ui);
        for (int v = M_PRECISION; v < M_COUNT; v++) {
            if (!fold_stats(r, v, 0, &mean, &sd)) continue;
            fputs(", ", fp);
            rk_out_json_string(fp, m_names[v]);
            fputs(": ", fp);
            json_num(fp, mean);
        }
        fputs("},\n", fp);
    } else {
        fputs("{\"rmse\": null, \"mae\": null, \"fallbacks\": null, \"test_pairs\": 0},\n", fp);
    }
    json_key(fp, "  ", "folds");
    fputs("[\n", fp);
    for (int f = 0; f < r->n_folds; f++) {
        json_fold(fp, &r->fold[f], f);
        fputs(f + 1 < r->n_folds ? ",\n" : "\n", fp);
    }
    fputs("  ],\n", fp);
    json_key(fp, "  ", "summary");
    json_summary(fp, r, 0);
    fputs(",\n", fp);
    json_key(fp, "  ", "summary_baseline_popular");
    if (o->baseline_popular) json_summary(fp, r, 1); else fputs("null", fp);
    fputs(",\n", fp);

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
    fputs(", \"baseline\": ", fp);
    json_num(fp, r->t_baseline);
    fputs(", \"model_io\": ", fp);
    json_num(fp, r->t_model_io);
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


/* metrics.json's row of the table: the printer above, on the run's summary. */
rk_status rk_job_metrics_json(FILE *fp, const void *in, rk_error *err)
{
    const rk_job_result *res = in;
    (void)err;
    rk_job_write_metrics(fp, res->o, res->rep, res->ds, res->m, res->st);
    return RK_OK;
}

/* ---- report.html and the commit --------------------------------------------- */

static rk_status report_html(FILE *fp, const void *in, rk_error *err)
{
    const rk_job_result *res = in;
    const rk_job_opts *o = res->o;
    const rk_job_report *r = res->rep;
    const rk_job_shown *sh = res->shown;
    char vals[8][64];
    const char *names[8], *values[8];
    int n = 0;
    names[n] = "metric"; values[n++] = rk_metric_name(o->knn.sim.metric);
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
    if (sh->rank != NULL) {
        d.n_items = (int32_t)r->items;
        d.item_counts = rk_rank_item_counts(sh->rank);
    }
    return rk_report_write(fp, &d, err);
}

/* Every file a run writes, in the order a content's files are made. */
static const rk_outset_row job_files[] = {
    {RK_OUTSET_RECOMMENDATIONS, "recommendations.csv", NULL, rk_outset_recs_csv_open, rk_outset_recs_csv_put,
     rk_outset_recs_csv_close},
    {RK_OUTSET_NEIGHBORS, "neighbors.csv", rk_outset_neighbors_csv, NULL, NULL, NULL},
    {RK_OUTSET_PREDICTIONS, "predictions.csv", rk_outset_predictions_csv, NULL, NULL, NULL},
    {RK_OUTSET_METRICS, "metrics.json", rk_job_metrics_json, NULL, NULL, NULL},
    {RK_OUTSET_REPORT, "report.html", report_html, NULL, NULL, NULL},
};

rk_status rk_job_files_open(rk_outset **set, const char *dir, rk_error *err)
{
    return rk_outset_open(set, dir, job_files, (int)(sizeof job_files / sizeof job_files[0]), err);
}

rk_status rk_job_finish(const rk_job_opts *o, rk_job_report *rep, const rk_data *d, const rk_model *m,
                        const rk_knn_stats *st, rk_outset *out, double t0, double t_engine_end,
                        const rk_job_shown *shown, rk_error *err)
{
    double t = rk_omp_wtime();
    rep->t_write = t - t_engine_end;
    rep->t_total = t - t0;
    const rk_job_result res = {o, rep, &d->ds, m, st, shown};
    RK_FORWARD(rk_outset_write(out, RK_OUTSET_METRICS, 0, &res, err));
    if (o->report) RK_FORWARD(rk_outset_write(out, RK_OUTSET_REPORT, 0, &res, err));
    return rk_outset_commit(out, err);
}
