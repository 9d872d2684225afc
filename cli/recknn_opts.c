/* recknn_opts — the command line of recknn: usage text, option table, strict
 * parsing of the values into rk_job_opts, and the checks of combinations. */
#include "config.h"

#define _POSIX_C_SOURCE 200809L
#include "recknn_opts.h"
#include "rk_job.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Exit codes of CONTRACT.md §1 (rk_status_exit_code maps library failures). */
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
    "                          header names (default: the header's known names,\n"
    "                          else 1,2,3[,4] in a file without a header)\n"
    "      --max-line-bytes N  a longer line is an error: not a rating file (default\n"
    "                          1048576)\n"
    "      --dir-glob PATTERN  a directory input: read its files whose names match\n"
    "                          (default: mv_*.txt and combined_data_*.txt when\n"
    "                          there are such, else *.csv *.tsv *.dat *.data *.txt\n"
    "                          but README*, movie_titles*, probe*, qualifying*)\n"
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
    "      --negative yes|no   yes: lists keep negative similarities too (the k\n"
    "                          largest |sim|) and top-N sums them with their sign\n"
    "                          (with --rank lists); default no: sim > 0 only\n"
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
    "      --rank SIM          the similarity top-N is summed from: rp3beta\n"
    "                          (default: a random walk with a popularity\n"
    "                          penalty), weighted-cosine, or lists (the --metric\n"
    "                          lists of neighbors.csv, as before 2026-11)\n"
    "      --rank-k N          length of the ranking lists (default 100)\n"
    "      --alpha A           rp3beta: walk exponent (default 0.75);\n"
    "                          weighted-cosine: asymmetry, 0.5 = cosine\n"
    "      --beta B            rp3beta: popularity penalty (default 0.3)\n"
    "      --weighting W       weighted-cosine: none (default), tfidf, bm25\n"
    "      --bm25 K1:B         BM25's K1 and B (default 1.2:0.75)\n"
    "      --rank-values V     weighted-cosine: interactions (default) or ratings\n"
    "      --rank-shrink L     weighted-cosine: L added to the denominator\n"
    "      --locality Q        raise every list similarity to Q (default 1)\n"
    "      --normalize yes|no  each ranking list sums to 1 (default yes)\n"
    "      --tune              choose the ranking model on a validation split of\n"
    "                          the training data (never the test set): 352\n"
    "                          configurations of rp3beta and weighted-cosine,\n"
    "                          the best trained on all training data\n"
    "      --tune-metric M     ndcg (default), precision, recall, map, mrr,\n"
    "                          hit_rate, at the --top-n N\n"
    "      --tune-fraction F   of each user's training ratings validated (0.2)\n"
    "      --tune-grid G       full (default), small (32 configurations), or the\n"
    "                          full grid's rp3beta, cosine (plain) or bm25 rows\n"
    "      --tune-rounds R     validation draws whose scores are averaged (1)\n"
    "      --tune-users N      validation users measured at most: a seeded sample\n"
    "                          (default 20000; 0: every one)\n"
    "\n"
    "Evaluation:\n"
    "      --test FILE         held-out ratings to predict (same formats)\n"
    "      --holdout F         hold out a fraction 0 < F < 1 of the ratings\n"
    "      --split S           how --holdout draws: ratings (default: at random\n"
    "                          over all ratings), user (about F of each user's,\n"
    "                          at least one kept), temporal (each user's latest F),\n"
    "                          users (F of the users held out, each user's 20%\n"
    "                          tested and 80% folded in; the ranking model learns\n"
    "                          from the other users only)\n"
    "      --folds K           K-fold cross-validation, 2 <= K <= 50: every rating\n"
    "                          tested once; metrics per fold, mean and sd\n"
    "      --write-folds       write every fold's files (NAME.foldF.csv), not only\n"
    "                          the last fold's\n"
    "      --seed S            seed of the split and of --approx's draws (unsigned\n"
    "                          64-bit, default 0)\n"
    "      --relevance R       a test rating >= R is relevant to the ranking\n"
    "                          metrics of top-N (default 4.0)\n"
    "      --user-metrics      user_metrics.csv: every test user's precision,\n"
    "                          recall, NDCG, AP and RR at N (for significance\n"
    "                          tests between two runs of the same split)\n"
    "      --cutoffs LIST      ranking metrics (precision, recall, NDCG, MAP, MRR,\n"
    "                          hit rate) also at these list lengths, e.g.\n"
    "                          10,20,50,100 (the lists grow to the largest\n"
    "                          unless --top-n is given)\n"
    "      --baseline B        popular (default): with a test set, also rank the\n"
    "                          most popular unseen items and report their ranking\n"
    "                          metrics beside the model's, with a warning when\n"
    "                          the model is below them; none: do not\n"
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
    "      --threads N         CPU threads, N >= 1 (default: OpenMP's; under mpirun,\n"
    "                          each rank its share of the host's cores)\n"
    "\n"
    "Scale:\n"
    "      --gpus all|N|LIST   share the GPU engine's work among these CUDA devices:\n"
    "                          all, the first N, or a comma-separated list of\n"
    "                          ordinals (a device may be named twice: 0,0);\n"
    "                          default: device 0 (under mpirun: each rank of a\n"
    "                          host its own device, round robin)\n"
    "      --mpi-load MODE     under mpirun, how the ranks get the data: auto\n"
    "                          (default: each, measured faster), each (every rank\n"
    "                          reads the input), shard (each rank parses a part of\n"
    "                          the file, the ratings are gathered), bcast (rank 0\n"
    "                          reads it and sends the ratings and model)\n"
    "      --mpi-output MODE   under mpirun, who formats recommendations.csv: auto\n"
    "                          (default: slices when the ranks span several\n"
    "                          hosts, else root, measured faster on one host),\n"
    "                          slices (each rank its users' rows, written into\n"
    "                          rank 0's file at their offsets), root (rank 0\n"
    "                          every row)\n"
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
    OPT_APPROX, OPT_REPS, OPT_PROBES, OPT_APPROX_CHECK, OPT_GPUS, OPT_MPI_LOAD, OPT_MPI_OUTPUT,
    OPT_RANK, OPT_RANK_K, OPT_ALPHA, OPT_BETA, OPT_WEIGHTING, OPT_BM25, OPT_RANK_VALUES, OPT_RANK_SHRINK,
    OPT_LOCALITY, OPT_NORMALIZE, OPT_CUTOFFS, OPT_TUNE, OPT_TUNE_METRIC, OPT_TUNE_FRACTION, OPT_TUNE_GRID, OPT_TUNE_ROUNDS, OPT_USER_METRICS, OPT_TUNE_USERS,
    OPT_NEGATIVE, OPT_DIR_GLOB, OPT_MAX_LINE,
    /* long forms of the short options: optopt then tells long from short */
    OPT_K, OPT_QUIET, OPT_HELP, OPT_VERSION
};

static const struct option long_opts[] = {
    {"format", required_argument, NULL, OPT_FORMAT},
    {"delimiter", required_argument, NULL, OPT_DELIMITER},
    {"header", no_argument, NULL, OPT_HEADER},
    {"no-header", no_argument, NULL, OPT_NO_HEADER},
    {"columns", required_argument, NULL, OPT_COLUMNS},
    {"dir-glob", required_argument, NULL, OPT_DIR_GLOB},
    {"max-line-bytes", required_argument, NULL, OPT_MAX_LINE},
    {"rating-scale", required_argument, NULL, OPT_RATING_SCALE},
    {"duplicates", required_argument, NULL, OPT_DUPLICATES},
    {"skip-bad-lines", no_argument, NULL, OPT_SKIP_BAD},
    {"metric", required_argument, NULL, OPT_METRIC},
    {"k", required_argument, NULL, OPT_K},
    {"min-support", required_argument, NULL, OPT_MIN_SUPPORT},
    {"shrinkage", required_argument, NULL, OPT_SHRINKAGE},
    {"negative", required_argument, NULL, OPT_NEGATIVE},
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
    {"rank", required_argument, NULL, OPT_RANK},
    {"rank-k", required_argument, NULL, OPT_RANK_K},
    {"alpha", required_argument, NULL, OPT_ALPHA},
    {"beta", required_argument, NULL, OPT_BETA},
    {"weighting", required_argument, NULL, OPT_WEIGHTING},
    {"bm25", required_argument, NULL, OPT_BM25},
    {"rank-values", required_argument, NULL, OPT_RANK_VALUES},
    {"rank-shrink", required_argument, NULL, OPT_RANK_SHRINK},
    {"locality", required_argument, NULL, OPT_LOCALITY},
    {"normalize", required_argument, NULL, OPT_NORMALIZE},
    {"tune", no_argument, NULL, OPT_TUNE},
    {"tune-metric", required_argument, NULL, OPT_TUNE_METRIC},
    {"tune-fraction", required_argument, NULL, OPT_TUNE_FRACTION},
    {"tune-grid", required_argument, NULL, OPT_TUNE_GRID},
    {"tune-rounds", required_argument, NULL, OPT_TUNE_ROUNDS},
    {"tune-users", required_argument, NULL, OPT_TUNE_USERS},
    {"gpu-topn", required_argument, NULL, OPT_GPU_TOPN},
    {"items", required_argument, NULL, OPT_ITEMS},
    {"gpu-query", required_argument, NULL, OPT_GPU_QUERY},
    {"gpu-sims", required_argument, NULL, OPT_GPU_SIMS},
    {"split", required_argument, NULL, OPT_SPLIT},
    {"folds", required_argument, NULL, OPT_FOLDS},
    {"write-folds", no_argument, NULL, OPT_WRITE_FOLDS},
    {"relevance", required_argument, NULL, OPT_RELEVANCE},
    {"baseline", required_argument, NULL, OPT_BASELINE},
    {"cutoffs", required_argument, NULL, OPT_CUTOFFS},
    {"report", no_argument, NULL, OPT_REPORT},
    {"user-metrics", no_argument, NULL, OPT_USER_METRICS},
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
    {"gpus", required_argument, NULL, OPT_GPUS},
    {"mpi-load", required_argument, NULL, OPT_MPI_LOAD},
    {"mpi-output", required_argument, NULL, OPT_MPI_OUTPUT},
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

/* ---- usage errors -------------------------------------------------------------- */

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

/* ---- --version ------------------------------------------------------------------------- */

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
#ifdef HAVE_MPI
    const char *mpi = "yes";
#else
    const char *mpi = "no";
#endif
    printf("built with CUDA: %s; OpenMP: %s; MPI: %s\n", cuda, omp, mpi);
}

/* ---- argv ---------------------------------------------------------------------------- */

/* The "Input" options: 1 when ch is one of them (its value checked and set), else 0. */
static int input_option(int ch, const char *a, rk_job_opts *o)
{
    switch (ch) {
    case OPT_FORMAT:
        if (rk_format_parse(a, &o->load.format) != RK_OK)
            usage_error("--format: unknown format '%s' (auto, movielens, dat, tsv, netflix, csv)", a);
        break;
    case OPT_DELIMITER: o->load.delimiter = parse_delimiter(a); break;
    case OPT_HEADER: o->load.header = 1; break;
    case OPT_NO_HEADER: o->load.header = 0; break;
    case OPT_COLUMNS:
        check_columns(a);
        o->load.columns = a;
        break;
    case OPT_MAX_LINE: o->load.line_max = (size_t)parse_ll("--max-line-bytes", a, 64, (long long)1 << 40); break;
    case OPT_DIR_GLOB:
        if (a[0] == '\0') usage_error("--dir-glob: empty pattern");
        o->load.dir_glob = a;
        break;
    case OPT_RATING_SCALE:
        parse_scale(a, &o->load.scale_min, &o->load.scale_max);
        o->load.have_scale = 1;
        break;
    case OPT_DUPLICATES:
        if (rk_dup_policy_parse(a, &o->duplicates) != RK_OK)
            usage_error("--duplicates: unknown policy '%s' (last, first, mean, error)", a);
        break;
    case OPT_SKIP_BAD: o->load.skip_bad_lines = 1; break;
    default: return 0;
    }
    return 1;
}

/* The "Similarity" and "Prediction" options: 1 when ch is one of them (its value checked and set), else 0. */
static int similarity_option(int ch, const char *a, rk_job_opts *o)
{
    switch (ch) {
    case OPT_METRIC:
        if (rk_metric_parse(a, &o->knn.sim.metric) != RK_OK) {
            char names[256];
            rk_metric_names(names, sizeof names, -1); /* the metric table's rows */
            usage_error("--metric: unknown metric '%s' (%s)", a, names);
        }
        if (rk_metric_is_ranking(o->knn.sim.metric))
            usage_error("--metric: %s is a ranking similarity of top-N: use --rank %s", a, a);
        o->metric_given = 1;
        break;
    case 'k':
    case OPT_K: o->knn.k = (int32_t)parse_ll("-k", a, 1, INT32_MAX); break;
    case OPT_MIN_SUPPORT: o->knn.sim.min_support = (int32_t)parse_ll("--min-support", a, 1, INT32_MAX); break;
    case OPT_SHRINKAGE:
        o->knn.sim.shrinkage = parse_double("--shrinkage", a);
        if (!(o->knn.sim.shrinkage >= 0.0)) usage_error("--shrinkage: must be at least 0, got '%s'", a);
        o->shrinkage_given = 1;
        break;
    case OPT_PREDICT:
        if (rk_predict_mode_parse(a, &o->knn.mode) != RK_OK)
            usage_error("--predict: unknown mode '%s' (basic, means, baseline)", a);
        break;
    case OPT_MIN_K: o->knn.min_k = (int32_t)parse_ll("--min-k", a, 1, INT32_MAX); break;
    case OPT_NEGATIVE:
        if (strcmp(a, "yes") == 0) o->knn.negative = 1;
        else if (strcmp(a, "no") == 0) o->knn.negative = 0;
        else usage_error("--negative: expected yes or no, got '%s'", a);
        break;
    case OPT_IMPLICIT: o->implicit = 1; break;
    case OPT_APPROX:
        if (rk_approx_parse(a, &o->approx) != RK_OK) usage_error("--approx: unknown method '%s' (rbc)", a);
        break;
    case OPT_REPS: o->approx_reps = (int32_t)parse_ll("--reps", a, 1, INT32_MAX); break;
    case OPT_PROBES: o->approx_probes = (int32_t)parse_ll("--probes", a, 1, INT32_MAX); break;
    case OPT_APPROX_CHECK: o->approx_check = (int64_t)parse_ll("--approx-check", a, 1, INT32_MAX); break;
    case OPT_BY:
        if (strcmp(a, "user") == 0) o->by_user = 1;
        else if (strcmp(a, "item") == 0) o->by_user = 0;
        else usage_error("--by: unknown mode '%s' (item, user)", a);
        break;
    case OPT_ITEMS:
        if (a[0] == '\0') usage_error("--items: empty file name");
        o->items_path = a;
        break;
    default: return 0;
    }
    return 1;
}

/* The ranking model's options (CONTRACT.md §5b): 1 when ch is one of them (its value checked and set), else 0. */
static int ranking_option(int ch, const char *a, rk_job_opts *o)
{
    rk_rankw_opts *r = &o->rank;
    switch (ch) {
    case OPT_RANK:
        if (rk_rankw_parse_sim(a, &r->sim) != RK_OK)
            usage_error("--rank: unknown similarity '%s' (rp3beta, weighted-cosine, lists)", a);
        o->rank_given = 1;
        break;
    case OPT_RANK_K: r->k = (int32_t)parse_ll("--rank-k", a, 1, INT32_MAX); break;
    case OPT_ALPHA: r->alpha = parse_double("--alpha", a); break;
    case OPT_BETA: r->beta = parse_double("--beta", a); break;
    case OPT_WEIGHTING:
        if (rk_rankw_parse_weighting(a, &r->weighting) != RK_OK)
            usage_error("--weighting: unknown weighting '%s' (none, tfidf, bm25)", a);
        break;
    case OPT_BM25: {
        char buf[128];
        snprintf(buf, sizeof buf, "%s", a);
        char *colon = strchr(buf, ':');
        if (colon == NULL) usage_error("--bm25: expected K1:B, got '%s'", a);
        *colon = '\0';
        r->bm25_k1 = parse_double("--bm25", buf);
        r->bm25_b = parse_double("--bm25", colon + 1);
        break;
    }
    case OPT_RANK_VALUES:
        if (strcmp(a, "ratings") == 0) r->ratings = 1;
        else if (strcmp(a, "interactions") == 0) r->ratings = 0;
        else usage_error("--rank-values: unknown values '%s' (interactions, ratings)", a);
        break;
    case OPT_RANK_SHRINK: r->shrink = parse_double("--rank-shrink", a); break;
    case OPT_LOCALITY: r->q = parse_double("--locality", a); break;
    case OPT_NORMALIZE:
        if (strcmp(a, "yes") == 0) r->normalize = 1;
        else if (strcmp(a, "no") == 0) r->normalize = 0;
        else usage_error("--normalize: expected yes or no, got '%s'", a);
        break;
    case OPT_TUNE: o->tune = 1; break;
    case OPT_TUNE_METRIC:
        if (rk_tune_metric_parse(a, &o->tune_metric) != RK_OK)
            usage_error("--tune-metric: unknown metric '%s' (ndcg, precision, recall, map, mrr, hit_rate)", a);
        break;
    case OPT_TUNE_FRACTION:
        o->tune_fraction = parse_double("--tune-fraction", a);
        if (!(o->tune_fraction > 0.0 && o->tune_fraction < 1.0))
            usage_error("--tune-fraction: must be a fraction strictly between 0 and 1, got '%s'", a);
        break;
    case OPT_TUNE_USERS: o->tune_users = (int64_t)parse_ll("--tune-users", a, 0, INT32_MAX); break;
    case OPT_TUNE_ROUNDS: o->tune_rounds = (int)parse_ll("--tune-rounds", a, 1, 20); break;
    case OPT_TUNE_GRID:
        if (rk_tune_grid_parse(a, &o->tune_grid) != RK_OK)
            usage_error("--tune-grid: unknown grid '%s' (full, small, rp3beta, cosine, bm25)", a);
        break;
    default: return 0;
    }
    return 1;
}

/* The "Recommendation", "Evaluation", "Saved models" and "Output" options: 1 when ch is one of them (its value checked and set), else 0. */
static int evaluation_option(int ch, const char *a, rk_job_opts *o)
{
    switch (ch) {
    case OPT_TEST:
        if (a[0] == '\0') usage_error("--test: empty file name");
        o->test_path = a;
        break;
    case OPT_HOLDOUT:
        o->holdout = parse_double("--holdout", a);
        if (!(o->holdout > 0.0 && o->holdout < 1.0))
            usage_error("--holdout: must be a fraction strictly between 0 and 1, got '%s'", a);
        break;
    case OPT_SEED: o->seed = parse_u64("--seed", a); break;
    case OPT_OUT:
        if (a[0] == '\0') usage_error("--out: empty directory name");
        o->out_dir = a;
        break;
    case OPT_NO_NEIGHBORS: o->write_neighbors = 0; break;
    case OPT_TOP_N:
        o->top_n = (int32_t)parse_ll("--top-n", a, 0, INT32_MAX);
        o->top_n_given = 1;
        break;
    case OPT_USERS:
        if (a[0] == '\0') usage_error("--users: empty file name");
        o->users_path = a;
        break;
    case OPT_SPLIT:
        if (rk_split_kind_parse(a, &o->split) != RK_OK)
            usage_error("--split: unknown split '%s' (ratings, user, temporal, users)", a);
        break;
    case OPT_FOLDS: o->folds = (int32_t)parse_ll("--folds", a, 2, RK_JOB_MAX_FOLDS); break;
    case OPT_WRITE_FOLDS: o->write_folds = 1; break;
    case OPT_RELEVANCE:
        o->relevance = parse_double("--relevance", a);
        o->relevance_given = 1;
        break;
    case OPT_BASELINE:
        if (strcmp(a, "popular") == 0) o->baseline_popular = 1;
        else if (strcmp(a, "none") == 0) o->baseline_popular = 0;
        else usage_error("--baseline: unknown baseline '%s' (popular, none)", a);
        break;
    case OPT_CUTOFFS: {
        o->n_cutoffs = 0;
        const char *p = a;
        while (*p != '\0') {
            char *end;
            errno = 0;
            const long v = strtol(p, &end, 10);
            if (end == p || errno != 0 || v < 1 || v > INT32_MAX || (*end != ',' && *end != '\0'))
                usage_error("--cutoffs: expected a list of positive integers like 10,20,50, got '%s'", a);
            if (o->n_cutoffs >= RK_RANK_MAX_CUTOFFS)
                usage_error("--cutoffs: at most %d values", RK_RANK_MAX_CUTOFFS);
            o->cutoffs[o->n_cutoffs++] = (int32_t)v;
            p = *end == ',' ? end + 1 : end;
        }
        if (o->n_cutoffs == 0) usage_error("--cutoffs: empty list");
        break;
    }
    case OPT_REPORT: o->report = 1; break;
    case OPT_USER_METRICS: o->user_metrics = 1; break;
    case OPT_SAVE_MODEL:
        if (a[0] == '\0') usage_error("--save-model: empty file name");
        o->save_model = a;
        break;
    case OPT_MODEL:
        if (a[0] == '\0') usage_error("--model: empty file name");
        o->model_path = a;
        break;
    case OPT_QUERIES:
        if (a[0] == '\0') usage_error("--queries: empty file name");
        o->queries_path = a;
        break;
    default: return 0;
    }
    return 1;
}

/* The "Device and performance" and "Scale" options: 1 when ch is one of them (its value checked and set), else 0. */
static int device_option(int ch, const char *a, rk_job_opts *o)
{
    switch (ch) {
    case OPT_DEVICE:
        if (rk_device_parse(a, &o->device) != RK_OK)
            usage_error("--device: unknown device '%s' (auto, cpu, gpu)", a);
        break;
    case OPT_GPU_MEMORY:
        o->gpu_memory_gb = parse_double("--gpu-memory", a);
        if (!(o->gpu_memory_gb > 0.0)) usage_error("--gpu-memory: must be above 0, got '%s'", a);
        break;
    case OPT_MEMORY_LIMIT:
        o->memory_limit_gb = parse_double("--memory-limit", a);
        if (!(o->memory_limit_gb > 0.0)) usage_error("--memory-limit: must be above 0, got '%s'", a);
        break;
    case OPT_THREADS: o->knn.threads = (int)parse_ll("--threads", a, 1, INT_MAX); break;
    case OPT_GPUS: {
        rk_error e;
        rk_error_clear(&e);
        if (a[0] == '\0') usage_error("--gpus: expected all, a count N >= 1 or a comma-separated list of device ordinals "
                        "(e.g. 0,1), got ''");
        if (rk_gpus_parse(a, &o->gpus, &e) != RK_OK) usage_error("--gpus: %s", e.msg);
        break;
    }
    case OPT_MPI_LOAD:
        if (rk_dist_load_parse(a, &o->dist_load) != RK_OK)
            usage_error("--mpi-load: unknown mode '%s' (auto, shard, each, bcast)", a);
        break;
    case OPT_MPI_OUTPUT:
        if (rk_dist_output_parse(a, &o->dist_output) != RK_OK)
            usage_error("--mpi-output: unknown mode '%s' (auto, slices, root)", a);
        break;
    case OPT_GPU_SIMS:
        if (rk_gpu_sims_route_parse(a, &o->gpu_sims) != RK_OK)
            usage_error("--gpu-sims: unknown route '%s' (auto, kernel, spgemm)", a);
        break;
    case OPT_GPU_QUERY:
        if (rk_gpu_query_route_parse(a, &o->gpu_query) != RK_OK)
            usage_error("--gpu-query: unknown route '%s' (auto, block, kernel)", a);
        break;
    case OPT_GPU_TOPN:
        if (rk_gpu_topn_route_parse(a, &o->gpu_topn) != RK_OK)
            usage_error("--gpu-topn: unknown route '%s' (auto, kernel, spgemm)", a);
        break;
    default: return 0;
    }
    return 1;
}

/* The options a saved model fixes (--model answers with the model's own):
 * the first one given is recorded, for rk_job_opts_check's refusal. */
static void note_model_fixed(int ch, rk_job_opts *o)
{
    static const struct { int ch; const char *name; } fixed[] = {
        {'k', "-k"}, {OPT_K, "-k"}, {OPT_METRIC, "--metric"}, {OPT_SHRINKAGE, "--shrinkage"},
        {OPT_MIN_SUPPORT, "--min-support"}, {OPT_PREDICT, "--predict"}, {OPT_MIN_K, "--min-k"},
        {OPT_NEGATIVE, "--negative"}, {OPT_RANK, "--rank"}, {OPT_RANK_K, "--rank-k"}, {OPT_ALPHA, "--alpha"},
        {OPT_BETA, "--beta"}, {OPT_WEIGHTING, "--weighting"}, {OPT_BM25, "--bm25"},
        {OPT_RANK_VALUES, "--rank-values"}, {OPT_RANK_SHRINK, "--rank-shrink"}, {OPT_LOCALITY, "--locality"},
        {OPT_NORMALIZE, "--normalize"}, {OPT_IMPLICIT, "--implicit"},
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0] && o->model_fixed_opt == NULL; i++)
        if (fixed[i].ch == ch) o->model_fixed_opt = fixed[i].name;
}

int recknn_opts_parse(int argc, char **argv, recknn_opts *out)
{
    rk_job_opts *o = &out->job;
    rk_job_opts_default(o);
    out->quiet = 0;
    out->progress = -1;

    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, ":k:qhV", long_opts, NULL)) != -1) {
        const char *a = optarg;
        note_model_fixed(ch, o);
        if (input_option(ch, a, o) || similarity_option(ch, a, o) || ranking_option(ch, a, o) ||
            evaluation_option(ch, a, o) || device_option(ch, a, o))
            continue;
        switch (ch) {
        case OPT_PROGRESS: out->progress = 1; break;
        case OPT_NO_PROGRESS: out->progress = 0; break;
        case 'q':
        case OPT_QUIET: out->quiet = 1; break;
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
    rk_error e;
    rk_error_clear(&e);
    if (rk_job_opts_check(o, &e) != RK_OK) usage_error("%s", e.msg); /* the combinations: the library's one check */

    char *command = out->command;
    size_t cl = 0;
    command[0] = '\0';
    for (int i = 0; i < argc && cl + 1 < sizeof out->command; i++)
        cl += (size_t)snprintf(command + cl, sizeof out->command - cl, "%s%s", i ? " " : "", argv[i]);
    o->command_line = command;
    o->inputs = (const char *const *)(argv + optind);
    o->n_inputs = argc - optind;
    return RECKNN_OPTS_RUN;
}
