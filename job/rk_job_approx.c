/* --approx: the job's neighbour lists by the random ball cover (rk_rbc.h) on
 * the GPU or the CPU, the recall check of --approx-check, and the "approx"
 * member of metrics.json. */
#include "config.h"
#include "rk_job.h"
#include "rk_job_internal.h"
#include "rk_rbc.h"
#include "rk_gpu.h"
#include "rk_output.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

rk_status rk_approx_parse(const char *name, rk_approx *out)
{
    if (name != NULL && strcmp(name, "rbc") == 0) {
        *out = RK_APPROX_RBC;
        return RK_OK;
    }
    return RK_E_ARG;
}

const char *rk_approx_name(rk_approx a)
{
    return a == RK_APPROX_RBC ? "rbc" : a == RK_APPROX_NONE ? "none" : "unknown";
}

rk_status rk_job_approx_check_opts(const rk_job_opts *o, const rk_knn_opts *ko, rk_error *err)
{
    if (o->approx == RK_APPROX_NONE) {
        if (o->approx_reps != 0 || o->approx_probes != 0 || o->approx_check != 0)
            return rk_error_set(err, RK_E_ARG, "--reps, --probes and --approx-check need --approx rbc");
        return RK_OK;
    }
    if (!rk_metric_is_full(ko->sim.metric))
        return rk_error_set(err, RK_E_ARG, "--approx rbc needs a full-vector metric (--metric cosine-full, "
                            "euclidean-full or jaccard), not %s", rk_metric_name(ko->sim.metric));
    if (o->test_path != NULL || o->holdout > 0.0 || o->folds > 0)
        return rk_error_set(err, RK_E_ARG, "--approx makes neighbour lists only: predictions for --test, "
                            "--holdout or --folds need whole similarity rows, which it does not compute");
    if (o->model_path != NULL || o->save_model != NULL)
        return rk_error_set(err, RK_E_ARG, "--approx cannot be used with --model or --save-model (a saved "
                            "model's lists are taken as exact)");
    if (o->approx_reps < 0 || o->approx_probes < 0 || o->approx_check < 0)
        return rk_error_set(err, RK_E_ARG, "--reps, --probes and --approx-check must be positive");
    return RK_OK;
}

static void note(const rk_job_opts *o, const char *fmt, const char *a)
{
    char buf[1024];
    if (o->note == NULL) return;
    snprintf(buf, sizeof buf, fmt, a);
    o->note(o->ud, buf);
}

rk_status rk_job_approx_lists(const rk_job_opts *o, const rk_knn_opts *ko, const rk_model *em, int use_gpu, int device,
                              rk_lists *lists, rk_job_report *rep, rk_knn_stats *st, rk_error *err)
{
    rk_rbc_opts r;
    rk_rbc_opts_default(&r);
    r.reps = o->approx_reps;
    r.probes = o->approx_probes;
    r.seed = o->seed;
    r.threads = ko->threads;
    rk_rbc_stats *as = &rep->approx;
    rk_status s = RK_OK;
    int on_gpu = 0;
    if (use_gpu && !rep->gpu_fallback) {
        rk_gpu_opts g;
        memset(&g, 0, sizeof g);
        g.device = device; /* the first of --gpus: the ball cover runs on one */
        g.memory_cap = (size_t)(o->gpu_memory_gb * 1073741824.0);
        s = rk_gpu_rbc(em, ko, &r, &g, lists, as, err);
        on_gpu = s == RK_OK;
        if (s == RK_E_GPU && o->device == RK_DEVICE_AUTO) { /* the CPU gives the same lists */
            rep->gpu_fallback = 1;
            snprintf(rep->gpu_fallback_why, sizeof rep->gpu_fallback_why, "%s", err->msg);
            note(o, "the GPU's random ball cover failed (%s): running on the CPU", rep->gpu_fallback_why);
            rk_error_clear(err);
            s = RK_OK;
        }
    }
    if (s == RK_OK && !on_gpu) s = rk_rbc_cpu(em, ko, &r, lists, as, err);
    if (s != RK_OK) return s;
    rep->have_approx = 1;
    memset(st, 0, sizeof *st);
    snprintf(st->device, sizeof st->device, "%s", as->device);
    snprintf(st->path, sizeof st->path, "%srandom ball cover R %d P %d tail %d", on_gpu ? "gpu " : "", as->reps,
             as->probes, as->tail);
    st->init_s = as->init_s;
    st->upload_s = as->upload_s;
    st->download_s = as->download_s;
    st->wall_s = as->wall_s;
    st->sim_s = as->reps_s + as->assign_s + as->query_s;
    if (o->approx_check > 0) {
        RK_FORWARD(rk_rbc_recall(em, ko, lists, o->approx_check, o->seed, ko->threads, &rep->approx_check, err));
        rep->have_approx_check = 1;
    }
    return RK_OK;
}

static void num(FILE *fp, const char *key, double x)
{
    char b[40];
    fprintf(fp, ", \"%s\": ", key);
    if (!isfinite(x)) {
        fputs("null", fp);
        return;
    }
    rk_out_double(b, sizeof b, x);
    fputs(b, fp);
}

void rk_job_write_approx(FILE *fp, const rk_job_opts *o, const rk_job_report *r)
{
    fputs("  \"approx\": ", fp);
    if (!r->have_approx) {
        fputs("null,\n", fp);
        return;
    }
    const rk_rbc_stats *a = &r->approx;
    fprintf(fp, "{\"method\": \"%s\", \"reps\": %d, \"probes\": %d, \"tail\": %d, \"device\": ",
            rk_approx_name(o->approx), a->reps, a->probes, a->tail);
    rk_out_json_string(fp, a->device);
    fprintf(fp, ", \"queries\": %lld, \"tail_items\": %lld, \"orphans\": %lld, \"largest_ball\": %lld, "
                "\"pair_evaluations\": %lld, \"rep_pairs\": %lld, \"ball_pairs\": %lld, \"rater_pairs\": %lld, "
                "\"brute_force_pairs\": %lld",
            (long long)a->queries, (long long)a->tail_items, (long long)a->orphans, (long long)a->largest_ball,
            (long long)a->pair_evals, (long long)a->rep_pairs, (long long)a->ball_pairs, (long long)a->rater_pairs,
            (long long)a->brute_pairs);
    num(fp, "work_ratio", a->pair_evals > 0 ? (double)a->brute_pairs / (double)a->pair_evals : NAN);
    fprintf(fp, ", \"entry_reads\": %lld", (long long)a->entry_reads);
    num(fp, "reps_s", a->reps_s);
    num(fp, "assign_s", a->assign_s);
    num(fp, "query_s", a->query_s);
    num(fp, "wall_s", a->wall_s);
    if (r->have_approx_check) {
        const rk_rbc_recall_result *c = &r->approx_check;
        fprintf(fp, ", \"k\": %d, \"sampled\": %lld, \"evaluated\": %lld, \"hits\": %lld, \"exact_entries\": %lld",
                o->knn.k, (long long)c->sampled, (long long)c->evaluated, (long long)c->hits,
                (long long)c->exact_entries);
        num(fp, "recall_at_k", c->evaluated > 0 ? c->recall : NAN);
        num(fp, "recall_at_k_ties", c->evaluated > 0 ? c->recall_ties : NAN);
        num(fp, "check_s", c->wall_s);
    } else {
        fputs(", \"sampled\": 0, \"recall_at_k\": null", fp);
    }
    fputs("},\n", fp);
}
