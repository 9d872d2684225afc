/* rk_job.h — the whole batch job behind the CLI (prefix rk_job_).
 *
 * data (load → resolve duplicates → split → model, rk_data.h) → for each
 * fold: engine (lists and predictions, GPU or CPU) → top-N recommendations
 * (streamed into recommendations.csv and into the ranking metrics) → the
 * popularity baseline → evaluate → write → save the model, metrics.json and
 * report.html, with wall times per stage.  A run with one test set (or none)
 * is a run of one fold.  With --model the engine is replaced by a saved model
 * (rk_job_model.c): recommendations and answers to --queries, no similarity.
 * The CLI only parses options into rk_job_opts, calls rk_job_run and prints:
 * this module never prints; notes and progress go through callbacks.
 */
#ifndef RK_JOB_H
#define RK_JOB_H

#include <stdint.h>
#include "rk_status.h"
#include "rk_load.h"
#include "rk_knn.h"
#include "rk_eval.h"
#include "rk_topn.h"
#include "rk_rank.h"
#include "rk_split.h"
#include "rk_gpu.h"
#include "rk_rbc.h"
#include "rk_dist.h"
#include "rk_gpus.h"
#include "rk_backend.h"
#include "rk_note.h"
#include "rk_rankw.h"
#include "rk_tune.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --approx: how the neighbour lists are made. */
typedef enum rk_approx {
    RK_APPROX_NONE = 0, /* exact (the engines of rk_knn.h) */
    RK_APPROX_RBC       /* random ball cover (rk_rbc.h): full-vector metrics, lists only */
} rk_approx;

/*! rk_approx_parse() : "rbc" (the only method).  @return RK_OK or RK_E_ARG. */
rk_status rk_approx_parse(const char *name, rk_approx *out);
const char *rk_approx_name(rk_approx a);

typedef struct rk_job_opts {
    const char *const *inputs;  /* RATINGS paths (netflix: files or a directory) */
    int n_inputs;
    const char *test_path;      /* --test FILE or NULL */
    double holdout;             /* --holdout F in (0,1), 0 = none */
    uint64_t seed;              /* --seed */
    rk_load_opts load;          /* format, delimiter, header, columns, scale, bad lines */
    rk_dup_policy duplicates;   /* --duplicates */
    rk_knn_opts knn;            /* metric, k, support, shrinkage, predict, min-k, threads */
    int shrinkage_given;        /* 0: the metric's default shrinkage */
    int metric_given;           /* --metric was given (--implicit refuses a co-rater metric then) */
    rk_device device;           /* --device */
    double gpu_memory_gb;       /* --gpu-memory cap (0 = whatever is free) */
    double memory_limit_gb;     /* --memory-limit: host memory budget (0 = none) */
    const char *out_dir;        /* --out, default "recknn-out" */
    int write_neighbors;        /* write neighbors.csv (default 1) */
    int32_t top_n;              /* --top-n: recommendations per user (default 10; 0: none) */
    rk_rankw_opts rank;         /* --rank and its options: the ranking model top-N is summed
                                   from (CONTRACT.md §5b); sim RK_METRIC_COUNT: --metric's lists */
    int rank_given;             /* --rank was given (user mode and --approx refuse it then) */
    const char *model_fixed_opt; /* the first option given that a saved model fixes (-k, --metric,
                                    --rank, ...): --model refuses it; NULL: none */
    int topn_by_prediction;     /* --topn-score prediction: top-N by the --predict estimate (rk_job_predtopn.c) */
    int tune;                   /* --tune: the ranking model chosen on a validation split (rk_tune.h) */
    int tune_predict;           /* --tune-predict: the --predict model's options chosen on a validation split
                                   (rk_ptune.h) */
    rk_tune_metric tune_metric; /* --tune-metric (NDCG) */
    double tune_fraction;       /* --tune-fraction: of each user's training ratings (0.2) */
    rk_tune_grid_kind tune_grid; /* --tune-grid: full, small (tests), or one family's rows */
    int tune_rounds;            /* --tune-rounds: validation draws averaged (1) */
    int64_t tune_users;         /* --tune-users: validation users measured at most (20000; 0: all) */
    int top_n_given;            /* --top-n was given (--items refuses it then) */
    int by_user;                /* --by user: user-based k-NN (CONTRACT.md §6b) */
    int implicit;               /* --implicit: every rating counts as 1 (click or play data);
                                   every held-out item is then relevant */
    const char *users_path;     /* --users FILE: recommend only for these raw ids (NULL: every user);
                                   in user mode without a test set also the only lists computed */
    const char *items_path;     /* --items FILE: lists only for these items (no top-N, no test set) */
    rk_gpu_query_route gpu_query; /* --gpu-query: one row per block or per kernel */
    rk_gpu_sims_route gpu_sims; /* --gpu-sims: the full-vector metrics' rows by kernel or SpGEMM */
    rk_approx approx;           /* --approx: approximate lists (no test set, folds or model files) */
    int32_t approx_reps;        /* --reps R (0: rk_rbc's default) */
    int32_t approx_probes;      /* --probes P (0: rk_rbc's default) */
    int64_t approx_check;       /* --approx-check N: recall@k on N sampled queries (0: none) */
    rk_gpu_topn_route gpu_topn; /* --gpu-topn */
    rk_gpus_spec gpus;          /* --gpus: the devices the GPU engine shares its work among
                                   (zeroed: device 0; under MPI: one per rank of a host) */
    rk_dist *dist;              /* the processes of an MPI run (NULL: this process alone) */
    rk_dist_load dist_load;     /* --mpi-load: every rank loads, or rank 0 broadcasts */
    rk_dist_output dist_output; /* --mpi-output: each rank writes its slice, or rank 0 every row */
    /* evaluation (CONTRACT.md §6) */
    int32_t folds;              /* --folds K (0: none): K runs, every rating tested once */
    rk_split_kind split;        /* --split: how --holdout draws (ratings, user, temporal) */
    int write_folds;            /* --write-folds: the files of every fold, not only the last */
    double relevance;           /* --relevance: a test rating this high is relevant (4.0) */
    int relevance_given;        /* --relevance was given (--implicit refuses it then) */
    int baseline_popular;       /* --baseline popular: its ranking metrics beside the model's */
    int32_t cutoffs[RK_RANK_MAX_CUTOFFS]; /* --cutoffs: the ranking metrics also at these list lengths */
    int n_cutoffs;
    int report;                 /* --report: report.html in the output folder */
    int user_metrics;           /* --user-metrics: user_metrics.csv, each test user's ranking metrics */
    const char *command_line;   /* shown in the report (may be NULL) */
    /* saved models */
    const char *save_model;     /* --save-model FILE (NULL: none) */
    const char *model_path;     /* --model FILE: lists from it, no similarity computed */
    const char *queries_path;   /* --queries FILE: user,item pairs to predict (with --model) */
    /* callbacks (may be NULL) */
    rk_note_fn note;            /* one-line notes, e.g. device fallback (rk_note.h) */
    rk_progress_fn progress;
    void *ud;
} rk_job_opts;

/*! rk_job_opts_default() : the defaults of CONTRACT.md §8 (no inputs). */
void rk_job_opts_default(rk_job_opts *o);

/*! rk_job_opts_check() : the one check of the options' combinations, which
 *  needs no data (the CLI calls it after parsing, rk_job_run again with the
 *  ranks known): --test with --holdout, --folds with a test set, --split
 *  without --holdout, --items, --model, --approx and --gpus with what they
 *  exclude, the ranges a caller other than the CLI may break, and what a run
 *  of several ranks refuses.  Then the derived settings: --items makes no
 *  top-N; --implicit makes every held-out rating relevant (relevance 1).
 *  Idempotent.  @return RK_OK, or RK_E_ARG with the message (exit 2). */
rk_status rk_job_opts_check(rk_job_opts *o, rk_error *err);

/* Folds a run may have (--folds at most this). */
#define RK_JOB_MAX_FOLDS 50

/* Parts of a run shared out among MPI ranks and GPUs (the report keeps this many). */
#define RK_JOB_MAX_PARTS 256

/* What one part (a rank's GPU, or a rank on the CPU) did in the last fold. */
typedef struct rk_job_part {
    int32_t rank, worker;   /* MPI rank, and the worker (GPU) within it */
    int32_t device;         /* CUDA ordinal, -1 for the CPU engine */
    int32_t rows;           /* lists computed */
    int64_t work;           /* their co-rating pair updates (rk_knn_item_order's cost) */
    double engine_s;        /* the engine call (lists and predictions) */
    int64_t topn_users;     /* users recommended for */
    int64_t topn_work;      /* their list entries to sum (the sharing's estimate) */
    int64_t topn_rows;      /* recommendations made */
    double topn_s;          /* the top-N call */
    int32_t fell_back;      /* the GPU failed under --device auto: the CPU ran */
    int32_t stage;          /* RK_JOB_STAGE_LISTS or RK_JOB_STAGE_RANKING */
    char engine_detail[256]; /* the engine call's path and where its set-up time went */
    char topn_detail[96];   /* the top-N call's batches and times */
} rk_job_part;

/* The stages shared out among parts: the lists of --metric (with the
 * predictions, and top-N from them under --rank lists), and the ranking
 * model's lists with top-N from them. */
enum { RK_JOB_STAGE_LISTS = 0, RK_JOB_STAGE_RANKING = 1 };

/* What one fold (or the one split) measured. */
typedef struct rk_job_fold {
    int64_t train_ratings, test_ratings;
    rk_eval_result eval;               /* valid when have_eval */
    rk_rank_result rank;               /* valid when have_rank (top-N and a test set) */
    rk_rank_result base;               /* the popularity baseline, when have_base */
    int have_eval, have_rank, have_base;
    double t_similarity, t_select, t_predict, t_recommend, t_baseline;
    double t_engine, t_write;          /* the engine stage (its calls, ranking lists, top-N); the fold's files */
} rk_job_fold;

typedef struct rk_job_report {
    int64_t users, items, ratings;     /* whole loaded data, duplicates resolved */
    int64_t train_ratings, test_ratings;
    int64_t skipped_lines;
    int n_bad;                         /* skipped lines listed in bad[] */
    struct {
        const char *file;              /* one of the caller's paths */
        int64_t line;
    } bad[RK_LOAD_BAD_KEPT];
    char first_bad_reason[160];        /* why the first skipped line was bad */
    int64_t duplicates_removed;
    int64_t list_entries;              /* rows of neighbors.csv */
    rk_eval_result eval;               /* the last fold's; valid when have_eval */
    int have_eval;
    int n_folds;                       /* runs made: 1, or K with --folds */
    rk_job_fold fold[RK_JOB_MAX_FOLDS];
    double t_baseline;                 /* the popularity baseline, every fold */
    double t_model_io;                 /* --save-model or --model: writing or reading it */
    int64_t queries, queries_unknown;  /* --queries: pairs read, pairs with an unknown id */
    int64_t queries_from_ratings;      /* --queries: pairs whose user's history came from RATINGS */
    int64_t ratings_unknown_items;     /* --model: ratings of items the model does not know */
    double host_plan_gb;               /* --memory-limit: the estimate of the plan run */
    int threads_planned;               /* --memory-limit: CPU threads of that plan (0: not planned) */
    int gpu_fallback;                  /* --device auto: the GPU engine failed, the CPU ran */
    char gpu_fallback_why[RK_ERROR_MSG_CAP];
    char gpu_unused[256];              /* --device auto on the CPU for want of a GPU: why ("" otherwise) */
    double t_load, t_similarity, t_select, t_predict, t_recommend, t_write, t_total; /* sums over folds */
    double t_engine;                   /* sum over folds: the engine stage, of which similarity .. rank */
    double load_mb_s;                  /* input bytes over load time */
    double t_read_parse, t_ids, t_dedupe, t_split, t_model; /* the parts of t_load */
    rk_gpu_rows_report rows_up;        /* the training rows uploaded beside the parse (zero: none) */
    char device[128];                  /* "cpu" or the GPU name */
    char path[160];                    /* engine accumulation path */
    /* top-N (top_n > 0) */
    int32_t top_n;                     /* N used: --top-n capped at the item count */
    int metric;                        /* the rk_metric and k of the lists used: the run's (k clamped to */
    int32_t k;                         /* the data), or a saved model's own with --model */
    rk_topn_stats topn;                /* users served, rows, times, path */
    /* the ranking model (--rank, CONTRACT.md §5b) of the last fold */
    int have_rank_model;               /* top-N was summed from the ranking lists */
    rk_knn_stats rank_lists;           /* the engine call that made them */
    int64_t rank_entries;              /* their entries */
    double rank_quantum;               /* rk_rankw's 2^e */
    double t_rank;                     /* sum over folds: transform, lists and shaping */
    rk_rankw_opts rank_used;           /* the ranking model of the last fold (--tune: the chosen one) */
    double t_tune;                     /* sum over folds: --tune's search */
    int64_t users_file_ids;            /* --users: ids read */
    int64_t users_unknown;             /* ids that are no user of the training data */
    int64_t users_repeated;            /* ids seen on an earlier line */
    int64_t users_first_unknown_line;  /* 0 when none */
    int64_t items_file_ids;            /* --items: ids read */
    int64_t items_unknown;             /* ids that are no item of the training data */
    int64_t items_repeated;            /* ids seen on an earlier line */
    int32_t list_rows;                 /* lists computed: every item (user), or the subset's */
    char users_first_unknown[RK_ID_MAX + 1];
    /* --approx: the random ball cover's counts, and its recall with --approx-check */
    int have_approx, have_approx_check;
    rk_rbc_stats approx;
    rk_rbc_recall_result approx_check;
    /* MPI ranks and several GPUs (the last fold's parts; n_parts 0: one engine call) */
    int32_t ranks;                     /* processes of the run (1 without mpirun) */
    int32_t n_parts;                   /* entries of part[] */
    rk_job_part part[RK_JOB_MAX_PARTS];
    char dist_load[8];                 /* "each" or "bcast" under mpirun */
    double t_dist_load;                /* bcast: packing, sending and rebuilding the data */
    double t_exchange;                 /* sum over folds: gathering lists, predictions, recommendations */
    /* --mpi-output slices (the last written fold's; slices 0: rank 0 wrote every row) */
    int32_t out_slices;                /* ranks whose slices were joined */
    int32_t out_direct;                /* of them, those that wrote into the file themselves */
    int64_t out_bytes;                 /* the recommendations' file, header included */
    double t_out_join;                 /* the slices' sizes, writes and checks after the last batch */
} rk_job_report;

/* What rk_job_balance compares among the parts of a report. */
typedef enum rk_job_balance_of {
    RK_JOB_BALANCE_ENGINE_S = 0, /* engine seconds */
    RK_JOB_BALANCE_WORK,         /* co-rating pair updates */
    RK_JOB_BALANCE_TOPN_S,       /* top-N seconds */
    RK_JOB_BALANCE_TOPN_WORK     /* list entries summed for top-N */
} rk_job_balance_of;

/*! rk_job_stage_parts() : the parts of r that ran stage (RK_JOB_STAGE_*). */
int rk_job_stage_parts(const rk_job_report *r, int stage);

/*! rk_job_balance() : the largest of the values of the parts of one stage
 *  (RK_JOB_STAGE_*) over their mean (1: even; 0 when all are 0 or the stage
 *  has no parts). */
double rk_job_balance(const rk_job_report *r, int stage, rk_job_balance_of what);

/*! rk_job_verdict() : the model's ranking beside the most-popular
 *  baseline's (NDCG at the run's N, means over the folds), as one sentence
 *  into buf (cap bytes), with what to try when the model is below it.
 *  @return 1 when the model ranks below most-popular, 0 when not, -1 when
 *  there is nothing to compare (no test set, no top-N or no baseline; buf
 *  empty). */
int rk_job_verdict(const rk_job_opts *o, const rk_job_report *r, char *buf, size_t cap);

/*! rk_job_tune_opts() : --tune's search options from o, measuring the top
 *  n (the run's N, at most the items): its metric, grid, fraction, rounds,
 *  users, relevance, threads, progress, and the search's own draw of o's
 *  seed.  The job's folds and the library's fit (api/) search alike. */
void rk_job_tune_opts(const rk_job_opts *o, int32_t n, rk_tune_opts *to);

/*! rk_job_ptune() : --tune-predict's search (rk_ptune.h) over m with o's
 *  fraction and the search's own draw of o's seed, each configuration on
 *  the seam's current backend; *ko (the run's options) gets the chosen
 *  configuration, *out the table (rk_ptune_free).  The job's folds and the
 *  library's fit search alike.  @return as rk_ptune_run. */
struct rk_ptune_result;
rk_status rk_job_ptune(const rk_job_opts *o, const rk_model *m, rk_backend_seam *seam, rk_knn_opts *ko,
                       struct rk_ptune_result *out, rk_error *err);

/*! rk_job_gpus_lists() : the lists alone (no queries, no top-N) of em (m:
 *  the model; by_user: em is its transposed view) under ko, shared among the
 *  seam's devices as --gpus shares them in one process (rk_job_spread.c),
 *  into lists (allocated, every row's shape), byte for byte one device's.
 *  rk_job_gpus_rank_lists() : the ranking model cfg's lists of m so shared,
 *  shaped, into rl (allocated here; the caller frees it).  For a caller
 *  without a job (librecknn's fit): o gives the notes, the threads and the
 *  progress.  @return any engine status. */
rk_status rk_job_gpus_lists(const rk_job_opts *o, rk_backend_seam *seam, const rk_knn_opts *ko, const rk_model *em,
                            const rk_model *m, int by_user, rk_lists *lists, rk_knn_stats *st, rk_error *err);
rk_status rk_job_gpus_rank_lists(const rk_job_opts *o, const rk_rankw_opts *cfg, rk_backend_seam *seam,
                                 const rk_model *m, rk_lists *rl, rk_error *err);

/*! rk_job_run() : run the job.  On success the files are in o->out_dir and
 *  *rep is filled.  @return any rk_status; err names the cause.  A failed run
 *  leaves no output file behind. */
rk_status rk_job_run(const rk_job_opts *o, rk_job_report *rep, rk_error *err);

#ifdef __cplusplus
}
#endif
#endif /* RK_JOB_H */
