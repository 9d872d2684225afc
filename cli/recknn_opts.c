/* recknn_opts — the command line of recknn: usage text, getopt's table (the
 * job's options from the library's table, recknn_option_name, then the
 * command line's own), each value set by the library (recknn_options_set),
 * and the checks of combinations (recknn_options_check). */
#include "config.h"

#define _POSIX_C_SOURCE 200809L
#include "recknn_opts.h"

#include <getopt.h>
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
    "      --predict MODE      basic, means (default), baseline, interpolate (weights solved\n"
    "                          per query), global (a neighbourhood model trained first)\n"
    "      --min-k N           fallback estimate with fewer than N candidates\n"
    "      --interp-shrink B   interpolate: covariances shrunk by n / (n + B) (100)\n"
    "      --interp-reg L      interpolate: L added to the system's diagonal (0.05)\n"
    "      --global-lr G       global: the first epoch's step (0.005)\n"
    "      --global-reg L      global: the regularisation of every parameter (0.002)\n"
    "      --global-epochs N   global: epochs (15)\n"
    "      --global-decay D    global: the step times D after each epoch (1)\n"
    "      --tune-predict      interpolate, global: their options chosen on a validation\n"
    "                          split of the training ratings (the lowest RMSE of a grid)\n"
    "      --topn-score S      sums (default) or prediction: top-N by the --predict\n"
    "                          estimate of the --metric lists' candidates (--rank lists)\n"
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

/* The command line's own options (the job's are the library's table, val 256 + row). */
enum { OPT_TABLE = 256, OPT_PROGRESS = 1000, OPT_NO_PROGRESS, OPT_QUIET, OPT_HELP, OPT_VERSION };

static const struct option cli_opts[] = {
    {"progress", no_argument, NULL, OPT_PROGRESS},
    {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"help", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
};
#define N_CLI (sizeof cli_opts / sizeof cli_opts[0])
#define MAX_OPTS 128

/* getopt's table: the job's options (the library's rows), then the command line's, then the end. */
static void build_long_opts(struct option *l)
{
    size_t n = 0;
    for (const char *name; n + N_CLI + 1 < MAX_OPTS && (name = recknn_option_name(n)) != NULL; n++)
        l[n] = (struct option){name, recknn_option_takes_value(name) == 1 ? required_argument : no_argument, NULL,
                               OPT_TABLE + (int)n};
    for (size_t c = 0; c < N_CLI; c++) l[n++] = cli_opts[c];
    l[n] = (struct option){NULL, 0, NULL, 0};
}

static const char *long_name(const struct option *l, int val)
{
    for (; l->name != NULL; l++)
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

/* After --help or --version: the options freed, stdout's status as the exit status. */
static int done_early(recknn_opts *out)
{
    recknn_options_free(out->o);
    out->o = NULL;
    return fflush(stdout) == 0 && !ferror(stdout) ? EXIT_OK : EXIT_IO;
}

int recknn_opts_parse(int argc, char **argv, recknn_opts *out)
{
    rk_error e;
    rk_error_clear(&e);
    out->quiet = 0;
    out->progress = -1;
    if (recknn_options_new(&out->o, &e) != RK_OK) {
        fprintf(stderr, "recknn: error: %s\n", e.msg);
        return EXIT_RUNTIME;
    }
    recknn_options *o = out->o;

    struct option long_opts[MAX_OPTS];
    build_long_opts(long_opts);
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, ":k:qhV", long_opts, NULL)) != -1) {
        const char *a = optarg;
        if (ch == 'k' || (ch >= OPT_TABLE && ch < OPT_PROGRESS)) { /* the job's: the library sets it */
            const char *name = ch == 'k' ? "k" : long_opts[ch - OPT_TABLE].name;
            if (recknn_options_set(o, name, a, &e) != RK_OK) usage_error("%s", e.msg);
            continue;
        }
        switch (ch) {
        case OPT_PROGRESS: out->progress = 1; break;
        case OPT_NO_PROGRESS: out->progress = 0; break;
        case 'q':
        case OPT_QUIET: out->quiet = 1; break;
        case 'h':
        case OPT_HELP:
            fputs(usage_text, stdout);
            return done_early(out);
        case 'V':
        case OPT_VERSION:
            print_version();
            return done_early(out);
        case ':':
            if (optopt > 0 && optopt < 256) usage_error("option '-%c' needs a value", optopt);
            usage_error("option '--%s' needs a value", long_name(long_opts, optopt));
        case '?':
        default:
            if (optopt > 0 && optopt < 256) usage_error("unknown option '-%c'", optopt);
            if (optopt >= 256) usage_error("option '--%s' takes no value", long_name(long_opts, optopt));
            usage_error("unknown or ambiguous option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc) usage_error("no RATINGS file given");
    for (int i = optind; i < argc; i++)
        if (argv[i][0] == '\0') usage_error("empty RATINGS file name");
    if (recknn_options_check(o, &e) != RK_OK) usage_error("%s", e.msg); /* the combinations: the library's one check */

    char *command = out->command;
    size_t cl = 0;
    command[0] = '\0';
    for (int i = 0; i < argc && cl + 1 < sizeof out->command; i++)
        cl += (size_t)snprintf(command + cl, sizeof out->command - cl, "%s%s", i ? " " : "", argv[i]);
    out->inputs = (const char *const *)(argv + optind);
    out->n_inputs = argc - optind;
    return RECKNN_OPTS_RUN;
}
