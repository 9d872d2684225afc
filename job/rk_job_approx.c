/* --approx: the job's neighbour lists by the random ball cover (rk_rbc.h) on
 * the GPU or the CPU, the recall check of --approx-check, and the "approx"
 * member of metrics.json. */
#include "config.h"
#include "rk_job.h"
#include "rk_job_internal.h"
#include "rk_rbc.h"
#include "rk_gpu.h"
#include "rk_json.h"

#include <jansson.h>
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

rk_status rk_job_approx_lists(const rk_job_opts *o, const rk_knn_opts *ko, const rk_model *em, rk_backend_seam *seam,
                              rk_lists *lists, rk_job_report *rep, rk_knn_stats *st, rk_error *err)
{
    rk_rbc_opts r;
    rk_rbc_opts_default(&r);
    r.reps = o->approx_reps;
    r.probes = o->approx_probes;
    r.seed = o->seed;
    r.threads = ko->threads;
    rk_rbc_stats *as = &rep->approx;
    int on_gpu = 0;
    const rk_status s = rk_backend_rbc(seam, em, ko, &r, lists, as, &on_gpu, err);
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

struct json_t *rk_job_approx_json(const rk_job_opts *o, const rk_job_report *r)
{
    if (!r->have_approx) return json_null();
    const rk_rbc_stats *a = &r->approx;
    json_t *x = json_pack("{s:s, s:i, s:i, s:i, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:I, s:o, "
                          "s:o, s:o, s:o}", "method", rk_approx_name(o->approx), "reps", a->reps, "probes", a->probes,
                          "tail", a->tail, "device", rk_json_str(a->device), "queries", (json_int_t)a->queries,
                          "tail_items", (json_int_t)a->tail_items, "orphans", (json_int_t)a->orphans,
                          "largest_ball", (json_int_t)a->largest_ball, "pair_evaluations", (json_int_t)a->pair_evals,
                          "rep_pairs", (json_int_t)a->rep_pairs, "ball_pairs", (json_int_t)a->ball_pairs,
                          "rater_pairs", (json_int_t)a->rater_pairs, "brute_force_pairs", (json_int_t)a->brute_pairs,
                          "work_ratio",
                          rk_json_num(a->pair_evals > 0 ? (double)a->brute_pairs / (double)a->pair_evals : NAN),
                          "entry_reads", (json_int_t)a->entry_reads, "reps_s", rk_json_num(a->reps_s),
                          "assign_s", rk_json_num(a->assign_s), "query_s", rk_json_num(a->query_s),
                          "wall_s", rk_json_num(a->wall_s));
    json_t *more;
    if (r->have_approx_check) {
        const rk_rbc_recall_result *c = &r->approx_check;
        more = json_pack("{s:i, s:I, s:I, s:I, s:I, s:o, s:o, s:o}", "k", o->knn.k, "sampled", (json_int_t)c->sampled,
                         "evaluated", (json_int_t)c->evaluated, "hits", (json_int_t)c->hits,
                         "exact_entries", (json_int_t)c->exact_entries,
                         "recall_at_k", rk_json_num(c->evaluated > 0 ? c->recall : NAN),
                         "recall_at_k_ties", rk_json_num(c->evaluated > 0 ? c->recall_ties : NAN),
                         "check_s", rk_json_num(c->wall_s));
    } else {
        more = json_pack("{s:i, s:n}", "sampled", 0, "recall_at_k");
    }
    int bad = x == NULL || more == NULL || json_object_update(x, more) != 0;
    json_decref(more);
    if (bad) {
        json_decref(x);
        return NULL;
    }
    return x;
}
