/* recknn — the command line: parse options (recknn_opts.c), run the job,
 * print messages.  Everything else (files included) is the library's: the
 * command is a client of its public interface (api/recknn.h) alone. */
#include "config.h"

#define _POSIX_C_SOURCE 200809L
#include "recknn_opts.h"

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
                         set from recknn_run_rank once recknn_run_init runs in main */
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
 * the run's temporary files and the directories it made (recknn_job_stop_outputs,
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
    recknn_job_stop_outputs();
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
    recknn_options *o = opts.o;
    memset(&c, 0, sizeof c);
    c.pct = -1;
    c.rank = 0; /* set from recknn_run_rank below */
    c.quiet = opts.quiet;
    c.tty = isatty(STDERR_FILENO);
    c.progress = opts.progress == 1 || (opts.progress == -1 && c.tty && !c.quiet);
    recknn_options_set_note(o, on_note, &c);
    recknn_options_set_progress(o, c.progress ? on_progress : NULL, &c);

    stop_tty = c.tty;
    if (catch_stop_signals() != 0 && !c.quiet)
        fputs("recknn: warning: cannot catch signals: an interrupted run may leave temporary files\n", stderr);

    rk_error err;
    rk_error_clear(&err);
    /* under mpirun: join the run (after the signals are blocked, so that
     * MPI's threads keep them blocked too); alone: one process */
    recknn_run *run = NULL;
    rk_status s = recknn_run_init(&argc, &argv, &run, &err);
    if (s != RK_OK) {
        fprintf(stderr, "recknn: error: %s\n", err.msg);
        recknn_options_free(o);
        return rk_status_exit_code(s);
    }
    c.rank = recknn_run_rank(run);
    if (c.rank > 0) recknn_options_set_progress(o, NULL, &c); /* rank 0 speaks for the run */
    recknn_report *rep = NULL;
    s = recknn_job_run(o, run, opts.command, opts.inputs, opts.n_inputs, &rep, &err);
    /* interrupted: the signal thread is ending the process; its failures
     * (files refused after the cancel) are not errors to report */
    while (recknn_job_stopping()) pause();
    progress_clear(&c);
    /* every rank has the failure the ranks agreed on: rank 0 says it */
    if (s != RK_OK && c.rank == 0)
        fprintf(stderr, "recknn: error: %s\n", err.msg[0] != '\0' ? err.msg : rk_strerror(s));
    recknn_run_finalize(run);
    if (s == RK_OK && !c.quiet && c.rank == 0) {
        const size_t len = recknn_report_text(rep, NULL, 0);
        char *text = malloc(len + 1);
        if (text != NULL) {
            recknn_report_text(rep, text, len + 1);
            fputs(text, stderr);
            free(text);
        }
    }
    recknn_report_free(rep);
    recknn_options_free(o);
    return s != RK_OK ? rk_status_exit_code(s) : EXIT_SUCCESS;
}
