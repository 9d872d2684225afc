/* recknn — the command line: parse options into rk_job_opts (recknn_opts.c),
 * run the job, print messages.  Everything else (files included) is the
 * library's. */
#include "config.h"

#define _POSIX_C_SOURCE 200809L
#include "recknn_opts.h"
#include "rk_job.h"
#include "rk_output.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- messages ---------------------------------------------------------------- */

typedef struct cli {
    int quiet;
    int progress;     /* draw progress */
    int tty;          /* stderr is a terminal: one updating line */
    int drawn;        /* a progress line is on screen */
    char stage[64];
    double t_stage;   /* when the stage started (monotonic seconds) */
    double t_last;    /* when the line was last drawn */
    int pct;
    int rank;         /* this process's rank under MPI (0 alone): notes from rank 0;
                         set from rk_dist_rank once rk_dist_init runs in main */
} cli;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void progress_clear(cli *c)
{
    if (c->drawn && c->tty) fputs("\r\033[K", stderr);
    c->drawn = 0;
}

static void on_note(void *ud, const char *msg)
{
    cli *c = ud;
    if (c->quiet) return;
    /* under MPI every rank runs the job: its notes once, from rank 0, but
     * each rank's own ("rank R on HOST: ...") from that rank */
    if (c->rank != 0 && strncmp(msg, "rank ", 5) != 0) return;
    progress_clear(c);
    fprintf(stderr, "recknn: note: %s\n", msg);
}

/* An amount with a decimal prefix: "2.5 G", "180 k". */
static void human(char *buf, size_t cap, double x)
{
    static const char *const pre[] = {"", " k", " M", " G", " T"};
    int p = 0;
    while (x >= 999.5 && p < 4) {
        x /= 1000.0;
        p++;
    }
    snprintf(buf, cap, x < 9.95 && p > 0 ? "%.1f%s" : "%.0f%s", x, pre[p]);
}

/* One line per stage, redrawn at most ten times a second on a terminal:
 * "recknn: parse  43%  1.2 G/2.7 G bytes  2.1 G bytes/s  0.7 s left". */
static int on_progress(void *ud, const char *stage, double done, double total, const char *unit)
{
    cli *c = ud;
    if (!c->progress) return 0;
    if (stage == NULL) stage = "";
    if (unit == NULL) unit = "";
    double t = now_s();
    if (strncmp(c->stage, stage, sizeof c->stage - 1) != 0) {
        snprintf(c->stage, sizeof c->stage, "%s", stage);
        c->t_stage = t;
        c->t_last = 0.0;
        c->pct = -1;
    }
    double frac = total > 0.0 ? done / total : 0.0;
    if (!(frac >= 0.0)) frac = 0.0;
    if (frac > 1.0) frac = 1.0;
    int pct = (int)(frac * 100.0);
    if (c->tty) {
        if (t - c->t_last < 0.1 && pct < 100) return 0;
    } else if (pct / 10 == c->pct / 10) {
        return 0; /* not a terminal (forced with --progress): a line per 10% */
    }
    double el = t - c->t_stage;
    char d[32], tot[32], rate[64], left[48] = "";
    human(d, sizeof d, done);
    human(tot, sizeof tot, total);
    if (el > 1e-3) {
        char r[32];
        human(r, sizeof r, done / el);
        snprintf(rate, sizeof rate, ", %s %s/s", r, unit);
    } else {
        rate[0] = '\0';
    }
    if (frac > 0.0 && frac < 1.0 && el > 0.2) snprintf(left, sizeof left, ", %.1f s left", el * (1.0 - frac) / frac);
    if (c->tty) fputs("\r", stderr);
    if (total > 0.0)
        fprintf(stderr, "recknn: %s %3d%% (%s of %s %s%s%s)", stage, pct, d, tot, unit, rate, left);
    else
        fprintf(stderr, "recknn: %s %s %s%s", stage, d, unit, rate);
    fputs(c->tty ? "\033[K" : "\n", stderr);
    fflush(stderr);
    c->drawn = 1;
    c->t_last = t;
    c->pct = pct;
    return 0;
}

/* ---- interruption -------------------------------------------------------------
 *
 * SIGINT, SIGTERM and SIGHUP are blocked in every thread (OpenMP's and CUDA's
 * inherit the mask) and taken by one thread that waits for them: it removes
 * the run's temporary files and the directories it made (rk_out_unlink_pending,
 * which also stops new ones), says so, and ends the process by the signal's
 * default action, so that the parent sees 128 + the signal.  Waiting in a
 * thread, rather than in a handler, lets the cleanup wait for a commit's
 * renames under way on the thread it would otherwise have interrupted. */

static sigset_t stop_sigs;
static int stop_tty; /* stderr is a terminal: clear a progress line first */

static void *signal_thread(void *arg)
{
    (void)arg;
    int sig = 0;
    while (sigwait(&stop_sigs, &sig) != 0) {
    }
    rk_out_unlink_pending();
    static const char clear[] = "\r\033[K", msg[] = "recknn: interrupted\n";
    if (stop_tty) (void)!write(STDERR_FILENO, clear, sizeof clear - 1);
    (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    pthread_sigmask(SIG_UNBLOCK, &one, NULL);
    raise(sig);
    _exit(128 + sig); /* not reached: the default action ends the process */
}

/* Before any other thread exists.  @return 0, or -1 (then signals keep their
 * default action: an interrupted run may leave temporary files, nothing worse). */
static int catch_stop_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    int n = 0;
    sigemptyset(&stop_sigs);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        /* a signal ignored on entry stays ignored (nohup; a shell's background job) */
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        sigaddset(&stop_sigs, sigs[i]);
        n++;
    }
    if (n == 0) return 0;
    if (pthread_sigmask(SIG_BLOCK, &stop_sigs, NULL) != 0) return -1;
    pthread_attr_t at;
    pthread_t th;
    int ok = pthread_attr_init(&at) == 0;
    if (ok) {
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&at, (size_t)1 << 16);
        ok = pthread_create(&th, &at, signal_thread, NULL) == 0;
        pthread_attr_destroy(&at);
    }
    if (!ok) {
        pthread_sigmask(SIG_UNBLOCK, &stop_sigs, NULL);
        return -1;
    }
    return 0;
}

/* ---- main ---------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    recknn_opts opts;
    cli c;
    int st = recknn_opts_parse(argc, argv, &opts);
    if (st != RECKNN_OPTS_RUN) return st;
    rk_job_opts *o = &opts.job;
    memset(&c, 0, sizeof c);
    c.pct = -1;
    c.rank = 0; /* set from rk_dist_rank below */
    c.quiet = opts.quiet;
    c.tty = isatty(STDERR_FILENO);
    c.progress = opts.progress == 1 || (opts.progress == -1 && c.tty && !c.quiet);
    o->note = on_note;
    o->progress = c.progress ? on_progress : NULL;
    o->ud = &c;

    stop_tty = c.tty;
    if (catch_stop_signals() != 0 && !c.quiet)
        fputs("recknn: warning: cannot catch signals: an interrupted run may leave temporary files\n", stderr);

    rk_job_report rep;
    rk_error err;
    rk_error_clear(&err);
    /* under mpirun: join the run (after the signals are blocked, so that
     * MPI's threads keep them blocked too); alone: one process */
    rk_dist *dist = NULL;
    rk_status s = rk_dist_init(&argc, &argv, &dist, &err);
    if (s != RK_OK) {
        fprintf(stderr, "recknn: error: %s\n", err.msg);
        return rk_status_exit_code(s);
    }
    o->dist = dist;
    c.rank = rk_dist_rank(dist);
    if (c.rank > 0) o->progress = NULL; /* rank 0 speaks for the run */
    s = rk_job_run(o, &rep, &err);
    /* interrupted: the signal thread is ending the process; its failures
     * (files refused after the cancel) are not errors to report */
    while (rk_out_cancelled()) pause();
    progress_clear(&c);
    /* every rank has the failure the ranks agreed on: rank 0 says it */
    if (s != RK_OK && c.rank == 0) fprintf(stderr, "recknn: error: %s\n", err.msg[0] != '\0' ? err.msg : rk_strerror(s));
    rk_dist_finalize(dist);
    if (s != RK_OK) return rk_status_exit_code(s);
    if (!c.quiet && c.rank == 0) {
        size_t ol = strlen(o->out_dir);
        const char *slash = ol > 0 && o->out_dir[ol - 1] == '/' ? "" : "/";
        if (rep.skipped_lines > 0) {
            fprintf(stderr, "recknn: warning: skipped %lld bad line%s (%s), first:",
                    (long long)rep.skipped_lines, rep.skipped_lines == 1 ? "" : "s", rep.first_bad_reason);
            for (int b = 0; b < rep.n_bad; b++)
                fprintf(stderr, "%s %s:%lld", b ? "," : "", rep.bad[b].file, (long long)rep.bad[b].line);
            fprintf(stderr, "%s\n", rep.skipped_lines > rep.n_bad ? ", ..." : "");
        }
        fprintf(stderr, "recknn: %lld users, %lld items, %lld ratings (%lld train, %lld test); %s k=%d on %s; ",
                (long long)rep.users, (long long)rep.items, (long long)rep.ratings,
                (long long)rep.train_ratings, (long long)rep.test_ratings,
                rk_metric_name((rk_metric)rep.metric), rep.k, rep.device[0] ? rep.device : "cpu");
        if (rep.top_n > 0)
            fprintf(stderr, "top-%d for %lld users; ", rep.top_n, (long long)rep.topn.users);
        if (rep.have_eval && rep.n_folds > 1) {
            double rm = 0, ma = 0;
            for (int f = 0; f < rep.n_folds; f++) {
                rm += rep.fold[f].eval.rmse / rep.n_folds;
                ma += rep.fold[f].eval.mae / rep.n_folds;
            }
            fprintf(stderr, "%d folds: mean RMSE %.4f MAE %.4f; ", rep.n_folds, rm, ma);
        } else if (rep.have_eval) {
            fprintf(stderr, "RMSE %.4f MAE %.4f; ", rep.eval.rmse, rep.eval.mae);
        }
        if (rep.have_approx) {
            fprintf(stderr, "approx rbc R=%d P=%d, %.0fx less work", rep.approx.reps, rep.approx.probes,
                    (double)rep.approx.brute_pairs / (double)(rep.approx.pair_evals > 0 ? rep.approx.pair_evals : 1));
            if (rep.have_approx_check)
                fprintf(stderr, ", recall@%d %.4f", rep.k, rep.approx_check.recall);
            fputs("; ", stderr);
        }
        const int n_parts = rk_job_stage_parts(&rep, RK_JOB_STAGE_LISTS);
        if (rep.ranks > 1 || n_parts > 1) {
            const double b = rk_job_balance(&rep, RK_JOB_STAGE_LISTS, RK_JOB_BALANCE_ENGINE_S);
            fprintf(stderr, "%d rank%s, %d part%s (slowest engine over mean %.2f); ", rep.ranks,
                    rep.ranks == 1 ? "" : "s", n_parts, n_parts == 1 ? "" : "s", b > 0 ? b : 1.0);
        }
        char verdict[320];
        const int below = rk_job_verdict(o, &rep, verdict, sizeof verdict);
        if (rep.fold[rep.n_folds > 0 ? rep.n_folds - 1 : 0].have_rank) { /* over the folds, as the RMSE */
            double p = 0;
            for (int f = 0; f < rep.n_folds; f++) p += rep.fold[f].rank.precision / rep.n_folds;
            fprintf(stderr, "%sprecision@%d %.4f; ", rep.n_folds > 1 ? "mean " : "", rep.top_n, p);
        }
        if (below == 0) fprintf(stderr, "%s; ", verdict);
        fprintf(stderr, "%.2f s; wrote %s%s\n", rep.t_total, o->out_dir, slash);
        if (below == 1) fprintf(stderr, "recknn: warning: %s\n", verdict);
    }
    return EXIT_SUCCESS;
}
