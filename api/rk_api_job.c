/* The command's file job through the public interface (api/recknn.h, "the
 * file job"): the recknn command is a client of these and of the options'
 * functions alone.  A thin layer over the job layer: MPI's run (rk_dist),
 * the job (rk_job_run), its report in the lines the command prints, and the
 * outputs' stop on a signal (rk_output). */
#include "config.h"
#include "rk_api_internal.h"
#include "rk_job.h"
#include "rk_output.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct recknn_run {
    rk_dist *dist;
};

struct recknn_report {
    rk_job_report rep;
    rk_job_opts job; /* the options the job ran with (the verdict reads them) */
};

void recknn_options_set_note(recknn_options *o, recknn_note_fn fn, void *ud)
{
    o->job.note = fn;
    o->job.ud = ud; /* shared with the progress callback's (rk_job_opts has one ud) */
}

rk_status recknn_options_check(recknn_options *o, rk_error *err)
{
    return rk_job_opts_check(&o->job, err);
}

rk_status recknn_run_init(int *argc, char ***argv, recknn_run **out, rk_error *err)
{
    *out = NULL;
    recknn_run *r = calloc(1, sizeof *r);
    RK_CHECK_ALLOC(r, err);
    const rk_status s = rk_dist_init(argc, argv, &r->dist, err);
    if (s != RK_OK) {
        free(r);
        return s;
    }
    *out = r;
    return RK_OK;
}

int recknn_run_rank(const recknn_run *r)
{
    return r != NULL ? rk_dist_rank(r->dist) : 0;
}

void recknn_run_finalize(recknn_run *r)
{
    if (r == NULL) return;
    rk_dist_finalize(r->dist);
    free(r);
}

rk_status recknn_job_run(const recknn_options *o, recknn_run *run, const char *command_line,
                         const char *const *inputs, int n_inputs, recknn_report **out, rk_error *err)
{
    *out = NULL;
    recknn_report *r = calloc(1, sizeof *r);
    RK_CHECK_ALLOC(r, err);
    r->job = o->job;
    r->job.dist = run != NULL ? run->dist : NULL;
    r->job.command_line = command_line;
    r->job.inputs = inputs;
    r->job.n_inputs = n_inputs;
    const rk_status s = rk_job_run(&r->job, &r->rep, err);
    if (s != RK_OK) {
        free(r);
        return s;
    }
    *out = r;
    return RK_OK;
}

void recknn_report_free(recknn_report *r)
{
    free(r);
}

/* printf at *at of buf[cap], never past it; *at counts what would have been written. */
static void put(char *buf, size_t cap, size_t *at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static void put(char *buf, size_t cap, size_t *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(*at < cap ? buf + *at : NULL, *at < cap ? cap - *at : 0, fmt, ap);
    va_end(ap);
    if (n > 0) *at += (size_t)n;
}

/* The summary line's middle: evaluation, approximation, parts, precision. */
static void summary_measures(const recknn_report *R, char *buf, size_t cap, size_t *at)
{
    const rk_job_report *r = &R->rep;
    if (r->have_eval && r->n_folds > 1) {
        double rm = 0, ma = 0;
        for (int f = 0; f < r->n_folds; f++) {
            rm += r->fold[f].eval.rmse / r->n_folds;
            ma += r->fold[f].eval.mae / r->n_folds;
        }
        put(buf, cap, at, "%d folds: mean RMSE %.4f MAE %.4f; ", r->n_folds, rm, ma);
    } else if (r->have_eval) {
        put(buf, cap, at, "RMSE %.4f MAE %.4f; ", r->eval.rmse, r->eval.mae);
    }
    if (r->have_approx) {
        put(buf, cap, at, "approx rbc R=%d P=%d, %.0fx less work", r->approx.reps, r->approx.probes,
            (double)r->approx.brute_pairs / (double)(r->approx.pair_evals > 0 ? r->approx.pair_evals : 1));
        if (r->have_approx_check) put(buf, cap, at, ", recall@%d %.4f", r->k, r->approx_check.recall);
        put(buf, cap, at, "; ");
    }
    const int n_parts = rk_job_stage_parts(r, RK_JOB_STAGE_LISTS);
    if (r->ranks > 1 || n_parts > 1) {
        const double b = rk_job_balance(r, RK_JOB_STAGE_LISTS, RK_JOB_BALANCE_ENGINE_S);
        put(buf, cap, at, "%d rank%s, %d part%s (slowest engine over mean %.2f); ", r->ranks, r->ranks == 1 ? "" : "s",
            n_parts, n_parts == 1 ? "" : "s", b > 0 ? b : 1.0);
    }
    if (r->fold[r->n_folds > 0 ? r->n_folds - 1 : 0].have_rank) { /* over the folds, as the RMSE */
        double p = 0;
        for (int f = 0; f < r->n_folds; f++) p += r->fold[f].rank.precision / r->n_folds;
        put(buf, cap, at, "%sprecision@%d %.4f; ", r->n_folds > 1 ? "mean " : "", r->top_n, p);
    }
}

size_t recknn_report_text(const recknn_report *R, char *buf, size_t cap)
{
    const rk_job_report *r = &R->rep;
    const rk_job_opts *o = &R->job;
    size_t at = 0;
    if (cap > 0) buf[0] = '\0';
    if (r->skipped_lines > 0) {
        put(buf, cap, &at, "recknn: warning: skipped %lld bad line%s (%s), first:", (long long)r->skipped_lines,
            r->skipped_lines == 1 ? "" : "s", r->first_bad_reason);
        for (int b = 0; b < r->n_bad; b++)
            put(buf, cap, &at, "%s %s:%lld", b ? "," : "", r->bad[b].file, (long long)r->bad[b].line);
        put(buf, cap, &at, "%s\n", r->skipped_lines > r->n_bad ? ", ..." : "");
    }
    put(buf, cap, &at, "recknn: %lld users, %lld items, %lld ratings (%lld train, %lld test); %s k=%d on %s; ",
        (long long)r->users, (long long)r->items, (long long)r->ratings, (long long)r->train_ratings,
        (long long)r->test_ratings, rk_metric_name((rk_metric)r->metric), r->k, r->device[0] ? r->device : "cpu");
    if (r->top_n > 0) put(buf, cap, &at, "top-%d for %lld users; ", r->top_n, (long long)r->topn.users);
    summary_measures(R, buf, cap, &at);
    char verdict[320];
    const int below = rk_job_verdict(o, r, verdict, sizeof verdict);
    if (below == 0) put(buf, cap, &at, "%s; ", verdict);
    const size_t ol = strlen(o->out_dir);
    put(buf, cap, &at, "%.2f s; wrote %s%s\n", r->t_total, o->out_dir, ol > 0 && o->out_dir[ol - 1] == '/' ? "" : "/");
    if (below == 1) put(buf, cap, &at, "recknn: warning: %s\n", verdict);
    return at;
}

void recknn_job_stop_outputs(void)
{
    rk_out_unlink_pending();
}

int recknn_job_stopping(void)
{
    return rk_out_cancelled();
}
