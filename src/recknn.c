/* recknn — the command line: parse options into rk_job_opts, run the job,
 * print messages.  Everything else (files included) is the library's. */
#include "config.h"

#define _POSIX_C_SOURCE 200809L
#include "rk_job.h"
#include "rk_output.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Exit codes of SPEC §1 (rk_status_exit_code maps library failures). */
enum {
    EXIT_OK = 0,
    EXIT_USAGE = 2,
    EXIT_DATA = 3,
    EXIT_IO = 4,
    EXIT_RUNTIME = 5
};

static const char usage_text[] =
    "Usage: recknn RATINGS... [options]\n"
    "Item-based k-nearest-neighbour recommender: item-item similarities, neighbour\n"
    "lists, top-N recommendations for every user and rating predictions for\n"
    "held-out data.  RATINGS are rating files\n"
    "(\"-\" reads standard input; for netflix also a directory of per-movie files).\n"
    "\n"
    "Input:\n"
    "      --format FMT        auto (default), movielens, dat, tsv, netflix or csv\n"
    "      --delimiter C       csv field delimiter: one character, or tab, space,\n"
    "                          comma, semicolon, pipe, '\\t' (default: guess)\n"
    "      --header            csv: the first line is a header\n"
    "      --no-header         csv: there is no header line (default: guess)\n"
    "      --columns LIST      csv: user,item,rating[,time] as 1-based positions or\n"
    "                          header names (default 1,2,3[,4])\n"
    "      --rating-scale MIN:MAX\n"
    "                          rating scale; ratings outside it are bad lines\n"
    "                          (default: the training data's minimum and maximum)\n"
    "      --duplicates P      repeated (user, item): last (default), first, mean,\n"
    "                          error\n"
    "      --skip-bad-lines    skip and count malformed lines instead of failing\n"
    "\n"
    "Similarity:\n"
    "      --by MODE           item (default): item-item similarities and lists;\n"
    "                          user: user-user similarities over co-rated items,\n"
    "                          per-user lists, predictions from similar users\n"
    "      --metric M          over co-raters: pearson (default),\n"
    "                          pearson-baseline, cosine, msd, euclidean;\n"
    "                          over whole vectors (unrated = 0): cosine-full,\n"
    "                          euclidean-full, jaccard (of the rating patterns)\n"
    "      --implicit          every rating counts as 1 (clicks, plays, purchases);\n"
    "                          every held-out item is then relevant\n"
    "  -k, --k N               neighbours per list and per prediction (default 20)\n"
    "      --min-support N     co-raters needed for a nonzero similarity (default 1)\n"
    "      --shrinkage X       shrink by (n-1)/(n-1+X), X >= 0 (default 0;\n"
    "                          100 for pearson-baseline)\n"
    "      --items FILE        lists only for the items of FILE (one id a line),\n"
    "                          each against the whole catalogue; no top-N and\n"
    "                          no test set (with --by user, --users does this)\n"
    "      --approx rbc        approximate neighbour lists by a random ball cover\n"
    "                          (full-vector metrics only; lists and top-N, no\n"
    "                          test set): each list is exact among the items of\n"
    "                          the balls its query visits, far less work than\n"
    "                          comparing every pair at a small loss of recall\n"
    "      --reps R            --approx: R representatives (default: one per 24\n"
    "                          items with more than 2 raters)\n"
    "      --probes P          --approx: balls visited per query (default 8; P >= R\n"
    "                          visits every ball: the exact lists)\n"
    "      --approx-check N    --approx: recall@k against the exact lists of N\n"
    "                          sampled queries, into metrics.json\n"
    "\n"
    "Prediction:\n"
    "      --predict MODE      basic, means (default), baseline\n"
    "      --min-k N           fallback estimate with fewer than N candidates\n"
    "                          (default 1)\n"
    "\n"
    "Recommendation:\n"
    "      --top-n N           recommend the N best unrated items of every user\n"
    "                          into recommendations.csv (default 10; 0: none)\n"
    "      --users FILE        recommend only for the users of FILE (one id a\n"
    "                          line; unknown ids are counted, not fatal)\n"
    "\n"
    "Evaluation:\n"
    "      --test FILE         held-out ratings to predict (same formats)\n"
    "      --holdout F         hold out a fraction 0 < F < 1 of the ratings\n"
    "      --split S           how --holdout draws: ratings (default: at random\n"
    "                          over all ratings), user (about F of each user's,\n"
    "                          at least one kept), temporal (each user's latest F)\n"
    "      --folds K           K-fold cross-validation, 2 <= K <= 50: every rating\n"
    "                          tested once; metrics per fold, mean and sd\n"
    "      --write-folds       write every fold's files (NAME.foldF.csv), not only\n"
    "                          the last fold's\n"
    "      --seed S            seed of the split and of --approx's draws (unsigned\n"
    "                          64-bit, default 0)\n"
    "      --relevance R       a test rating >= R is relevant to the ranking\n"
    "                          metrics of top-N (default 4.0)\n"
    "      --baseline popular  also rank the most popular unseen items and report\n"
    "                          their ranking metrics beside the model's\n"
    "\n"
    "Saved models:\n"
    "      --save-model FILE   save the lists, statistics, ids and training ratings\n"
    "                          (the last fold's) for later runs\n"
    "      --model FILE        use a saved model instead of computing similarities:\n"
    "                          top-N for the users of RATINGS from their ratings\n"
    "      --queries FILE      with --model: predict these user,item pairs into\n"
    "                          predictions.csv\n"
    "\n"
    "Output:\n"
    "      --out DIR           output directory (default recknn-out): neighbors.csv,\n"
    "                          recommendations.csv, predictions.csv (with a test\n"
    "                          set), metrics.json\n"
    "      --no-neighbors      do not write neighbors.csv\n"
    "      --report            also write report.html: one self-contained page\n"
    "                          with the run's figures\n"
    "\n"
    "Device and performance:\n"
    "      --device D          auto (default: the GPU when usable, else the CPU),\n"
    "                          cpu, gpu (exit 5 without a usable GPU)\n"
    "      --gpu-memory GB     cap on the GPU memory used, GB > 0 (default: free)\n"
    "      --memory-limit GB   host memory budget: fewer CPU threads when that fits,\n"
    "                          else stop before any work and say what is needed\n"
    "      --gpu-topn R        GPU top-N route: auto (default: kernel), kernel,\n"
    "                          spgemm (cuSPARSE)\n"
    "      --gpu-query R       GPU rows: auto (default: one query per kernel for\n"
    "                          fewer than 640 lists, else block), block (one\n"
    "                          block per list), kernel (the whole GPU per list)\n"
    "      --gpu-sims R        GPU rows of the full-vector metrics: auto (default:\n"
    "                          kernel), kernel, spgemm (cuSPARSE, 76x slower)\n"
    "      --threads N         CPU threads, N >= 1 (default: OpenMP's)\n"
    "\n"
    "Miscellaneous:\n"
    "      --progress          show progress on stderr (default: only when stderr\n"
    "                          is a terminal and not --quiet)\n"
    "      --no-progress       never show progress\n"
    "  -q, --quiet             print errors only\n"
    "  -h, --help              print this help and exit\n"
    "  -V, --version           print the version and exit\n"
    "\n"
    "Exit status: 0 success, 2 bad option, 3 bad input data or model file, 4 file\n"
    "missing, "
    "unreadable or unwritable, 5 GPU or runtime failure; interrupted by SIGINT,\n"
    "SIGTERM or SIGHUP: 128 + the signal (130, 143, 129), temporary files removed.\n";

enum {
    OPT_FORMAT = 256, OPT_DELIMITER, OPT_HEADER, OPT_NO_HEADER, OPT_COLUMNS,
    OPT_RATING_SCALE, OPT_DUPLICATES, OPT_SKIP_BAD, OPT_METRIC, OPT_MIN_SUPPORT,
    OPT_SHRINKAGE, OPT_PREDICT, OPT_MIN_K, OPT_TEST, OPT_HOLDOUT, OPT_SEED,
    OPT_OUT, OPT_NO_NEIGHBORS, OPT_DEVICE, OPT_GPU_MEMORY, OPT_THREADS,
    OPT_PROGRESS, OPT_NO_PROGRESS, OPT_TOP_N, OPT_USERS, OPT_GPU_TOPN, OPT_ITEMS, OPT_GPU_QUERY, OPT_GPU_SIMS,
    OPT_SPLIT, OPT_FOLDS, OPT_WRITE_FOLDS, OPT_RELEVANCE, OPT_BASELINE, OPT_REPORT,
    OPT_SAVE_MODEL, OPT_MODEL, OPT_QUERIES, OPT_MEMORY_LIMIT, OPT_BY, OPT_IMPLICIT,
    OPT_APPROX, OPT_REPS, OPT_PROBES, OPT_APPROX_CHECK,
    /* long forms of the short options: optopt then tells long from short */
    OPT_K, OPT_QUIET, OPT_HELP, OPT_VERSION
};

static const struct option long_opts[] = {
    {"format", required_argument, NULL, OPT_FORMAT},
    {"delimiter", required_argument, NULL, OPT_DELIMITER},
    {"header", no_argument, NULL, OPT_HEADER},
    {"no-header", no_argument, NULL, OPT_NO_HEADER},
    {"columns", required_argument, NULL, OPT_COLUMNS},
    {"rating-scale", required_argument, NULL, OPT_RATING_SCALE},
    {"duplicates", required_argument, NULL, OPT_DUPLICATES},
    {"skip-bad-lines", no_argument, NULL, OPT_SKIP_BAD},
    {"metric", required_argument, NULL, OPT_METRIC},
    {"k", required_argument, NULL, OPT_K},
    {"min-support", required_argument, NULL, OPT_MIN_SUPPORT},
    {"shrinkage", required_argument, NULL, OPT_SHRINKAGE},
    {"predict", required_argument, NULL, OPT_PREDICT},
    {"min-k", required_argument, NULL, OPT_MIN_K},
    {"test", required_argument, NULL, OPT_TEST},
    {"holdout", required_argument, NULL, OPT_HOLDOUT},
    {"seed", required_argument, NULL, OPT_SEED},
    {"out", required_argument, NULL, OPT_OUT},
    {"no-neighbors", no_argument, NULL, OPT_NO_NEIGHBORS},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"gpu-memory", required_argument, NULL, OPT_GPU_MEMORY},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"top-n", required_argument, NULL, OPT_TOP_N},
    {"users", required_argument, NULL, OPT_USERS},
    {"gpu-topn", required_argument, NULL, OPT_GPU_TOPN},
    {"items", required_argument, NULL, OPT_ITEMS},
    {"gpu-query", required_argument, NULL, OPT_GPU_QUERY},
    {"gpu-sims", required_argument, NULL, OPT_GPU_SIMS},
    {"split", required_argument, NULL, OPT_SPLIT},
    {"folds", required_argument, NULL, OPT_FOLDS},
    {"write-folds", no_argument, NULL, OPT_WRITE_FOLDS},
    {"relevance", required_argument, NULL, OPT_RELEVANCE},
    {"baseline", required_argument, NULL, OPT_BASELINE},
    {"report", no_argument, NULL, OPT_REPORT},
    {"save-model", required_argument, NULL, OPT_SAVE_MODEL},
    {"model", required_argument, NULL, OPT_MODEL},
    {"queries", required_argument, NULL, OPT_QUERIES},
    {"memory-limit", required_argument, NULL, OPT_MEMORY_LIMIT},
    {"by", required_argument, NULL, OPT_BY},
    {"implicit", no_argument, NULL, OPT_IMPLICIT},
    {"approx", required_argument, NULL, OPT_APPROX},
    {"reps", required_argument, NULL, OPT_REPS},
    {"probes", required_argument, NULL, OPT_PROBES},
    {"approx-check", required_argument, NULL, OPT_APPROX_CHECK},
    {"progress", no_argument, NULL, OPT_PROGRESS},
    {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"help", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0}
};

static const char *long_name(int val)
{
    for (const struct option *l = long_opts; l->name != NULL; l++)
        if (l->val == val) return l->name;
    return "?";
}

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
} cli;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void usage_error(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;

static void usage_error(const char *fmt, ...)
{
    va_list ap;
    fputs("recknn: error: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry 'recknn --help'.\n", stderr);
    exit(EXIT_USAGE);
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
static void on_progress(void *ud, const char *stage, double done, double total, const char *unit)
{
    cli *c = ud;
    if (!c->progress) return;
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
        if (t - c->t_last < 0.1 && pct < 100) return;
    } else if (pct / 10 == c->pct / 10) {
        return; /* not a terminal (forced with --progress): a line per 10% */
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

/* ---- strict number parsing ------------------------------------------------------ */

static long long parse_ll(const char *opt, const char *s, long long lo, long long hi)
{
    char *end;
    if (s[0] == '\0' || s[0] == ' ' || s[0] == '\t' || s[0] == '\n')
        usage_error("%s: expected an integer, got '%s'", opt, s);
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end != '\0') usage_error("%s: expected an integer, got '%s'", opt, s);
    if (errno == ERANGE || v < lo || v > hi) {
        if (hi == LLONG_MAX || hi == INT_MAX)
            usage_error("%s: '%s' out of range (at least %lld)", opt, s, lo);
        usage_error("%s: '%s' out of range (%lld to %lld)", opt, s, lo, hi);
    }
    return v;
}

static uint64_t parse_u64(const char *opt, const char *s)
{
    char *end;
    if (s[0] < '0' || s[0] > '9') usage_error("%s: expected an unsigned integer, got '%s'", opt, s);
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end != '\0') usage_error("%s: expected an unsigned integer, got '%s'", opt, s);
    if (errno == ERANGE || v > UINT64_MAX) usage_error("%s: '%s' out of range (0 to %llu)", opt, s,
                                                       (unsigned long long)UINT64_MAX);
    return (uint64_t)v;
}

/* A finite decimal number (no nan/inf, no hex). */
static int read_double(const char *s, double *out)
{
    char *end;
    if (s[0] == '\0' || s[0] == ' ' || s[0] == '\t' || s[0] == '\n') return 0;
    for (const char *p = s; *p; p++)
        if (!strchr("0123456789+-.eE", *p)) return 0;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v)) return 0;
    *out = v;
    return 1;
}

static double parse_double(const char *opt, const char *s)
{
    double v;
    if (!read_double(s, &v)) usage_error("%s: expected a finite number, got '%s'", opt, s);
    return v;
}

/* ---- option values ---------------------------------------------------------------- */

static char parse_delimiter(const char *s)
{
    static const struct { const char *name; char c; } names[] = {
        {"tab", '\t'}, {"\\t", '\t'}, {"TAB", '\t'}, {"space", ' '}, {"comma", ','},
        {"semicolon", ';'}, {"pipe", '|'},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].name) == 0) return names[i].c;
    if (strlen(s) == 1 && s[0] != '\n' && s[0] != '\r' && s[0] != '"') return s[0];
    usage_error("--delimiter: expected one character or tab, space, comma, semicolon, pipe; got '%s'", s);
}

static void check_columns(const char *s)
{
    int fields = 1;
    size_t len = 0;
    for (const char *p = s;; p++) {
        if (*p == ',' || *p == '\0') {
            if (len == 0) usage_error("--columns: empty field in '%s' (want user,item,rating[,time])", s);
            if (*p == '\0') break;
            fields++;
            len = 0;
        } else {
            len++;
        }
    }
    if (fields < 3 || fields > 4)
        usage_error("--columns: want 3 or 4 fields (user,item,rating[,time]), got %d in '%s'", fields, s);
}

static void parse_scale(const char *s, double *lo, double *hi)
{
    const char *colon = strchr(s, ':');
    char a[64], b[64];
    if (colon == NULL) usage_error("--rating-scale: expected MIN:MAX, got '%s'", s);
    size_t la = (size_t)(colon - s), lb = strlen(colon + 1);
    if (la >= sizeof a || lb >= sizeof b) usage_error("--rating-scale: expected MIN:MAX, got '%s'", s);
    memcpy(a, s, la);
    a[la] = '\0';
    memcpy(b, colon + 1, lb + 1);
    if (!read_double(a, lo) || !read_double(b, hi))
        usage_error("--rating-scale: expected MIN:MAX with finite numbers, got '%s'", s);
    if (!(*lo < *hi)) usage_error("--rating-scale: MIN must be below MAX, got '%s'", s);
}

/* ---- main ---------------------------------------------------------------------------- */

static void print_version(void)
{
    printf("recknn %s\n", PACKAGE_VERSION);
#ifdef HAVE_CUDA
    const char *cuda = "yes";
#else
    const char *cuda = "no";
#endif
#ifdef _OPENMP
    const char *omp = "yes";
#else
    const char *omp = "no";
#endif
    printf("built with CUDA: %s; OpenMP: %s\n", cuda, omp);
}

int main(int argc, char **argv)
{
    rk_job_opts o;
    cli c;
    int progress_opt = -1; /* -1 auto, 0 off, 1 forced */
    int relevance_given = 0, top_n_given = 0;
    rk_job_opts_default(&o);
    memset(&c, 0, sizeof c);
    c.pct = -1;

    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, ":k:qhV", long_opts, NULL)) != -1) {
        const char *a = optarg;
        switch (ch) {
        case OPT_FORMAT:
            if (rk_format_parse(a, &o.load.format) != RK_OK)
                usage_error("--format: unknown format '%s' (auto, movielens, dat, tsv, netflix, csv)", a);
            break;
        case OPT_DELIMITER: o.load.delimiter = parse_delimiter(a); break;
        case OPT_HEADER: o.load.header = 1; break;
        case OPT_NO_HEADER: o.load.header = 0; break;
        case OPT_COLUMNS:
            check_columns(a);
            o.load.columns = a;
            break;
        case OPT_RATING_SCALE:
            parse_scale(a, &o.load.scale_min, &o.load.scale_max);
            o.load.have_scale = 1;
            break;
        case OPT_DUPLICATES:
            if (rk_dup_policy_parse(a, &o.duplicates) != RK_OK)
                usage_error("--duplicates: unknown policy '%s' (last, first, mean, error)", a);
            break;
        case OPT_SKIP_BAD: o.load.skip_bad_lines = 1; break;
        case OPT_METRIC:
            if (rk_metric_parse(a, &o.knn.sim.metric) != RK_OK)
                usage_error("--metric: unknown metric '%s' (pearson, pearson-baseline, cosine, msd, euclidean, "
                            "cosine-full, euclidean-full, jaccard)", a);
            break;
        case 'k':
        case OPT_K: o.knn.k = (int32_t)parse_ll("-k", a, 1, INT32_MAX); break;
        case OPT_MIN_SUPPORT: o.knn.sim.min_support = (int32_t)parse_ll("--min-support", a, 1, INT32_MAX); break;
        case OPT_SHRINKAGE:
            o.knn.sim.shrinkage = parse_double("--shrinkage", a);
            if (!(o.knn.sim.shrinkage >= 0.0)) usage_error("--shrinkage: must be at least 0, got '%s'", a);
            o.shrinkage_given = 1;
            break;
        case OPT_PREDICT:
            if (rk_predict_mode_parse(a, &o.knn.mode) != RK_OK)
                usage_error("--predict: unknown mode '%s' (basic, means, baseline)", a);
            break;
        case OPT_MIN_K: o.knn.min_k = (int32_t)parse_ll("--min-k", a, 1, INT32_MAX); break;
        case OPT_TEST:
            if (a[0] == '\0') usage_error("--test: empty file name");
            o.test_path = a;
            break;
        case OPT_HOLDOUT:
            o.holdout = parse_double("--holdout", a);
            if (!(o.holdout > 0.0 && o.holdout < 1.0))
                usage_error("--holdout: must be a fraction strictly between 0 and 1, got '%s'", a);
            break;
        case OPT_SEED: o.seed = parse_u64("--seed", a); break;
        case OPT_OUT:
            if (a[0] == '\0') usage_error("--out: empty directory name");
            o.out_dir = a;
            break;
        case OPT_NO_NEIGHBORS: o.write_neighbors = 0; break;
        case OPT_DEVICE:
            if (rk_device_parse(a, &o.device) != RK_OK)
                usage_error("--device: unknown device '%s' (auto, cpu, gpu)", a);
            break;
        case OPT_GPU_MEMORY:
            o.gpu_memory_gb = parse_double("--gpu-memory", a);
            if (!(o.gpu_memory_gb > 0.0)) usage_error("--gpu-memory: must be above 0, got '%s'", a);
            break;
        case OPT_IMPLICIT: o.implicit = 1; break;
        case OPT_APPROX:
            if (rk_approx_parse(a, &o.approx) != RK_OK) usage_error("--approx: unknown method '%s' (rbc)", a);
            break;
        case OPT_REPS: o.approx_reps = (int32_t)parse_ll("--reps", a, 1, INT32_MAX); break;
        case OPT_PROBES: o.approx_probes = (int32_t)parse_ll("--probes", a, 1, INT32_MAX); break;
        case OPT_APPROX_CHECK: o.approx_check = (int64_t)parse_ll("--approx-check", a, 1, INT32_MAX); break;
        case OPT_BY:
            if (strcmp(a, "user") == 0) o.by_user = 1;
            else if (strcmp(a, "item") == 0) o.by_user = 0;
            else usage_error("--by: unknown mode '%s' (item, user)", a);
            break;
        case OPT_MEMORY_LIMIT:
            o.memory_limit_gb = parse_double("--memory-limit", a);
            if (!(o.memory_limit_gb > 0.0)) usage_error("--memory-limit: must be above 0, got '%s'", a);
            break;
        case OPT_THREADS: o.knn.threads = (int)parse_ll("--threads", a, 1, INT_MAX); break;
        case OPT_TOP_N:
            o.top_n = (int32_t)parse_ll("--top-n", a, 0, INT32_MAX);
            top_n_given = 1;
            break;
        case OPT_ITEMS:
            if (a[0] == '\0') usage_error("--items: empty file name");
            o.items_path = a;
            break;
        case OPT_GPU_SIMS:
            if (rk_gpu_sims_route_parse(a, &o.gpu_sims) != RK_OK)
                usage_error("--gpu-sims: unknown route '%s' (auto, kernel, spgemm)", a);
            break;
        case OPT_GPU_QUERY:
            if (rk_gpu_query_route_parse(a, &o.gpu_query) != RK_OK)
                usage_error("--gpu-query: unknown route '%s' (auto, block, kernel)", a);
            break;
        case OPT_USERS:
            if (a[0] == '\0') usage_error("--users: empty file name");
            o.users_path = a;
            break;
        case OPT_GPU_TOPN:
            if (rk_gpu_topn_route_parse(a, &o.gpu_topn) != RK_OK)
                usage_error("--gpu-topn: unknown route '%s' (auto, kernel, spgemm)", a);
            break;
        case OPT_SPLIT:
            if (rk_split_kind_parse(a, &o.split) != RK_OK)
                usage_error("--split: unknown split '%s' (ratings, user, temporal)", a);
            break;
        case OPT_FOLDS: o.folds = (int32_t)parse_ll("--folds", a, 2, RK_JOB_MAX_FOLDS); break;
        case OPT_WRITE_FOLDS: o.write_folds = 1; break;
        case OPT_RELEVANCE:
            o.relevance = parse_double("--relevance", a);
            relevance_given = 1;
            break;
        case OPT_BASELINE:
            if (strcmp(a, "popular") != 0) usage_error("--baseline: unknown baseline '%s' (popular)", a);
            o.baseline_popular = 1;
            break;
        case OPT_REPORT: o.report = 1; break;
        case OPT_SAVE_MODEL:
            if (a[0] == '\0') usage_error("--save-model: empty file name");
            o.save_model = a;
            break;
        case OPT_MODEL:
            if (a[0] == '\0') usage_error("--model: empty file name");
            o.model_path = a;
            break;
        case OPT_QUERIES:
            if (a[0] == '\0') usage_error("--queries: empty file name");
            o.queries_path = a;
            break;
        case OPT_PROGRESS: progress_opt = 1; break;
        case OPT_NO_PROGRESS: progress_opt = 0; break;
        case 'q':
        case OPT_QUIET: c.quiet = 1; break;
        case 'h':
        case OPT_HELP:
            fputs(usage_text, stdout);
            return fflush(stdout) == 0 && !ferror(stdout) ? EXIT_OK : EXIT_IO;
        case 'V':
        case OPT_VERSION:
            print_version();
            return fflush(stdout) == 0 && !ferror(stdout) ? EXIT_OK : EXIT_IO;
        case ':':
            if (optopt > 0 && optopt < 256) usage_error("option '-%c' needs a value", optopt);
            usage_error("option '--%s' needs a value", long_name(optopt));
        case '?':
        default:
            if (optopt > 0 && optopt < 256) usage_error("unknown option '-%c'", optopt);
            if (optopt >= 256) usage_error("option '--%s' takes no value", long_name(optopt));
            usage_error("unknown or ambiguous option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc) usage_error("no RATINGS file given");
    for (int i = optind; i < argc; i++)
        if (argv[i][0] == '\0') usage_error("empty RATINGS file name");
    if (o.test_path != NULL && o.holdout > 0.0)
        usage_error("--test and --holdout cannot be used together");
    if (o.users_path != NULL && o.top_n == 0) usage_error("--users needs recommendations (--top-n N with N >= 1)");
    if (o.folds > 0 && (o.test_path != NULL || o.holdout > 0.0))
        usage_error("--folds cannot be used with --test or --holdout");
    if (o.split != RK_SPLIT_RATINGS && o.holdout <= 0.0)
        usage_error("--split %s needs --holdout F", rk_split_kind_name(o.split));
    if (o.write_folds && o.folds == 0) usage_error("--write-folds needs --folds K");
    if (o.items_path != NULL) {
        if (o.by_user) usage_error("--items is for item lists; with --by user, --users FILE picks the users");
        if (top_n_given && o.top_n > 0) usage_error("--items computes lists only: it cannot be used with --top-n");
        if (o.folds > 0 || o.test_path != NULL || o.holdout > 0.0)
            usage_error("--items computes lists only: it cannot be used with --test, --holdout or --folds");
        if (o.model_path != NULL || o.save_model != NULL)
            usage_error("--items cannot be used with --model or --save-model");
        if (o.approx != RK_APPROX_NONE) usage_error("--items computes exact lists: it cannot be used with --approx");
        o.top_n = 0;
    }
    if (o.gpu_sims == RK_GPU_SIMS_SPGEMM && !rk_metric_is_full(o.knn.sim.metric))
        usage_error("--gpu-sims spgemm computes the full-vector metrics (cosine-full, euclidean-full, jaccard) only");
    if (o.implicit && relevance_given)
        usage_error("--relevance cannot be used with --implicit: every held-out item is relevant there");
    if (o.implicit) o.relevance = 1.0; /* every held-out rating is 1 */
    if (o.queries_path != NULL && o.model_path == NULL) usage_error("--queries needs --model FILE");
    if (o.by_user && (o.save_model != NULL || o.model_path != NULL))
        usage_error("--by user cannot save or use a model file yet (its lists are per user)");
    if (o.model_path != NULL && (o.folds > 0 || o.test_path != NULL || o.holdout > 0.0 || o.save_model != NULL))
        usage_error("--model answers queries: it cannot be used with --folds, --test, --holdout or --save-model");
    if (o.approx == RK_APPROX_NONE && (o.approx_reps > 0 || o.approx_probes > 0 || o.approx_check > 0))
        usage_error("--reps, --probes and --approx-check need --approx rbc");
    if (o.approx != RK_APPROX_NONE && !rk_metric_is_full(o.knn.sim.metric))
        usage_error("--approx rbc needs a full-vector metric (--metric cosine-full, euclidean-full or jaccard), "
                    "not %s", rk_metric_name(o.knn.sim.metric));
    if (o.approx != RK_APPROX_NONE && (o.test_path != NULL || o.holdout > 0.0 || o.folds > 0))
        usage_error("--approx makes neighbour lists only: predictions for --test, --holdout or --folds need "
                    "whole similarity rows");
    if (o.approx != RK_APPROX_NONE && (o.model_path != NULL || o.save_model != NULL))
        usage_error("--approx cannot be used with --model or --save-model");

    char command[1024];
    size_t cl = 0;
    command[0] = '\0';
    for (int i = 0; i < argc && cl + 1 < sizeof command; i++)
        cl += (size_t)snprintf(command + cl, sizeof command - cl, "%s%s", i ? " " : "", argv[i]);
    o.command_line = command;
    o.inputs = (const char *const *)(argv + optind);
    o.n_inputs = argc - optind;
    c.tty = isatty(STDERR_FILENO);
    c.progress = progress_opt == 1 || (progress_opt == -1 && c.tty && !c.quiet);
    o.note = on_note;
    o.progress = c.progress ? on_progress : NULL;
    o.ud = &c;

    stop_tty = c.tty;
    if (catch_stop_signals() != 0 && !c.quiet)
        fputs("recknn: warning: cannot catch signals: an interrupted run may leave temporary files\n", stderr);

    rk_job_report rep;
    rk_error err;
    rk_error_clear(&err);
    rk_status s = rk_job_run(&o, &rep, &err);
    /* interrupted: the signal thread is ending the process; its failures
     * (files refused after the cancel) are not errors to report */
    while (rk_out_cancelled()) pause();
    progress_clear(&c);
    if (s != RK_OK) {
        fprintf(stderr, "recknn: error: %s\n", err.msg[0] != '\0' ? err.msg : rk_strerror(s));
        return rk_status_exit_code(s);
    }
    if (!c.quiet) {
        size_t ol = strlen(o.out_dir);
        const char *slash = ol > 0 && o.out_dir[ol - 1] == '/' ? "" : "/";
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
                rk_metric_name(o.knn.sim.metric), o.knn.k, rep.device[0] ? rep.device : "cpu");
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
                fprintf(stderr, ", recall@%d %.4f", o.knn.k, rep.approx_check.recall);
            fputs("; ", stderr);
        }
        if (rep.fold[rep.n_folds > 0 ? rep.n_folds - 1 : 0].have_rank)
            fprintf(stderr, "precision@%d %.4f; ", rep.top_n, rep.fold[rep.n_folds - 1].rank.precision);
        fprintf(stderr, "%.2f s; wrote %s%s\n", rep.t_total, o.out_dir, slash);
    }
    return EXIT_OK;
}
