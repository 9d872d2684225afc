/* metrics.json of a run (rk_job_internal.h). */
#include "config.h"
#include "rk_job_internal.h"
#include "rk_output.h"
#include "rk_omp.h"
#include "rk_gpu.h"

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
    fprintf(fp, ", \"write_neighbors\": %s, \"top_n\": %d, \"users\": ", o->write_neighbors ? "true" : "false",
            o->top_n);
    if (o->users_path != NULL) rk_out_json_string(fp, o->users_path); else fputs("null", fp);
    fputs(", \"gpu_topn\": ", fp);
    rk_out_json_string(fp, rk_gpu_topn_route_name(o->gpu_topn));
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
    fputs("},\n", fp);

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

