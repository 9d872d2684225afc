/* rk_job_check.c — the one check of the job's option combinations
 * (rk_job_opts_check, rk_job.h).  Each refusal names the options; the CLI
 * prints it as a usage error (exit 2).  The order is the order of the
 * checks a user meets first.  Then the settings derived from the options
 * and the data (rk_job_internal.h). */
#include "rk_job.h"
#include "rk_job_internal.h"
#include "rk_note.h"
#include "rk_omp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A message with the full-vector metrics of the metric table. */
static rk_status needs_full(rk_error *err, const char *fmt, const char *other)
{
    char names[128];
    rk_metric_names(names, sizeof names, 1);
    return rk_error_set(err, RK_E_ARG, fmt, names, other);
}

/* The held-out data: a test file, a holdout or folds, one at a time. */
static rk_status check_evaluation(const rk_job_opts *o, rk_error *err)
{
    if (o->test_path != NULL && o->holdout > 0.0)
        return rk_error_set(err, RK_E_ARG, "--test and --holdout cannot be used together");
    if (o->users_path != NULL && o->top_n == 0)
        return rk_error_set(err, RK_E_ARG, "--users needs recommendations (--top-n N with N >= 1)");
    if (o->folds > 0 && (o->test_path != NULL || o->holdout > 0.0))
        return rk_error_set(err, RK_E_ARG, "--folds cannot be used with --test or --holdout");
    if (o->split != RK_SPLIT_RATINGS && o->holdout <= 0.0)
        return rk_error_set(err, RK_E_ARG, "--split %s needs --holdout F", rk_split_kind_name(o->split));
    if (o->write_folds && o->folds == 0) return rk_error_set(err, RK_E_ARG, "--write-folds needs --folds K");
    if (o->user_metrics && o->test_path == NULL && o->holdout <= 0.0 && o->folds == 0)
        return rk_error_set(err, RK_E_ARG, "--user-metrics needs a test set (--test, --holdout or --folds)");
    if (o->user_metrics && o->top_n == 0)
        return rk_error_set(err, RK_E_ARG, "--user-metrics needs recommendations (--top-n N)");
    return RK_OK;
}

/* --items: exact item lists only. */
static rk_status check_items(const rk_job_opts *o, rk_error *err)
{
    if (o->items_path == NULL) return RK_OK;
    if (o->by_user)
        return rk_error_set(err, RK_E_ARG, "--items is for item lists; with --by user, --users FILE picks the users");
    if (o->top_n_given && o->top_n > 0)
        return rk_error_set(err, RK_E_ARG, "--items computes lists only: it cannot be used with --top-n");
    if (o->folds > 0 || o->test_path != NULL || o->holdout > 0.0)
        return rk_error_set(err, RK_E_ARG, "--items computes lists only: it cannot be used with --test, --holdout "
                            "or --folds");
    if (o->model_path != NULL || o->save_model != NULL)
        return rk_error_set(err, RK_E_ARG, "--items cannot be used with --model or --save-model");
    if (o->approx != RK_APPROX_NONE)
        return rk_error_set(err, RK_E_ARG, "--items computes exact lists: it cannot be used with --approx");
    return RK_OK;
}

/* 1 when the folders a and b are the same (both exist), or name the same
 * path; a missing folder is compared by its name. */
static int same_dir(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    size_t la = strlen(a), lb = strlen(b);
    while (la > 1 && a[la - 1] == '/') la--;
    while (lb > 1 && b[lb - 1] == '/') lb--;
    return la == lb && strncmp(a, b, la) == 0;
}

/* --save-model may not name a file the run writes into --out: the output
 * would overwrite the model, or the model the output. */
static rk_status check_save_path(const rk_job_opts *o, rk_error *err)
{
    if (o->save_model == NULL) return RK_OK;
    const char *slash = strrchr(o->save_model, '/');
    const char *base = slash != NULL ? slash + 1 : o->save_model;
    char dir[4096];
    if (slash == NULL) snprintf(dir, sizeof dir, ".");
    else if (slash == o->save_model) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - o->save_model), o->save_model);
    if (rk_job_files_is_output(base) && same_dir(dir, o->out_dir))
        return rk_error_set(err, RK_E_ARG, "--save-model %s names a file this run writes into --out %s: choose "
                            "another name", o->save_model, o->out_dir);
    return RK_OK;
}

/* Saved models and the --approx ball cover. */
static rk_status check_model_approx(const rk_job_opts *o, rk_error *err)
{
    const rk_metric metric = o->knn.sim.metric;
    if (o->queries_path != NULL && o->model_path == NULL)
        return rk_error_set(err, RK_E_ARG, "--queries needs --model FILE");
    if (o->by_user && (o->save_model != NULL || o->model_path != NULL))
        return rk_error_set(err, RK_E_ARG, "--by user cannot save or use a model file yet (its lists are per user)");
    if (o->model_path != NULL && o->model_fixed_opt != NULL)
        return rk_error_set(err, RK_E_ARG, "--model answers with the options the model was saved with: %s cannot "
                            "change them (metrics.json's options show the model's)", o->model_fixed_opt);
    if (o->model_path != NULL && (o->folds > 0 || o->test_path != NULL || o->holdout > 0.0 || o->save_model != NULL))
        return rk_error_set(err, RK_E_ARG, "--model answers queries: it cannot be used with --folds, --test, "
                            "--holdout or --save-model");
    if (o->approx == RK_APPROX_NONE && (o->approx_reps != 0 || o->approx_probes != 0 || o->approx_check != 0))
        return rk_error_set(err, RK_E_ARG, "--reps, --probes and --approx-check need --approx rbc");
    if (o->approx == RK_APPROX_NONE) return RK_OK;
    if (!rk_metric_is_full(metric))
        return needs_full(err, "--approx rbc needs a full-vector metric (--metric %s), not %s", rk_metric_name(metric));
    if (o->test_path != NULL || o->holdout > 0.0 || o->folds > 0)
        return rk_error_set(err, RK_E_ARG, "--approx makes neighbour lists only: predictions for --test, --holdout "
                            "or --folds need whole similarity rows");
    if (o->model_path != NULL || o->save_model != NULL)
        return rk_error_set(err, RK_E_ARG, "--approx cannot be used with --model or --save-model");
    if (o->approx_reps < 0 || o->approx_probes < 0 || o->approx_check < 0)
        return rk_error_set(err, RK_E_ARG, "--reps, --probes and --approx-check must be positive");
    return RK_OK;
}

/* --predict interpolate and global: item mode, one process and one device
 * (CONTRACT.md §4b). */
static rk_status check_pmodel(const rk_job_opts *o, rk_error *err)
{
    if (o->topn_by_prediction && (o->by_user || o->approx != RK_APPROX_NONE || rk_rankw_on(&o->rank) ||
                                  o->model_path != NULL || rk_gpus_given(&o->gpus) || rk_dist_size(o->dist) > 1 ||
                                  o->tune))
        return rk_error_set(err, RK_E_ARG, "--topn-score prediction ranks the --metric lists' candidates by the "
                            "--predict estimate: it needs --rank lists and item mode, and cannot be used with "
                            "--approx, --model, --tune, --gpus or several MPI ranks");
    if (o->tune_predict && (!rk_predict_is_model(o->knn.mode) || o->model_path != NULL))
        return rk_error_set(err, RK_E_ARG, "--tune-predict chooses the options of --predict interpolate or global on "
                            "the training data: it needs one of them, and cannot be used with --model");
    if (!rk_predict_is_model(o->knn.mode)) return RK_OK;
    const char *mode = rk_predict_mode_name(o->knn.mode);
    if (o->by_user) return rk_error_set(err, RK_E_ARG, "--predict %s is item-based: it cannot be used with --by user",
                                        mode);
    if (rk_gpus_given(&o->gpus) || rk_dist_size(o->dist) > 1)
        return rk_error_set(err, RK_E_ARG, "--predict %s runs in one process on one device: it cannot be used with "
                            "--gpus or several MPI ranks", mode);
    return RK_OK;
}

/* --implicit: every rating is 1, so a metric over co-raters has nothing to
 * compare (Pearson is undefined, cosine, msd and euclidean are 1 for every
 * pair): such a metric given is refused, and the default becomes
 * cosine-full.  The ranking model (--rank) needs item mode and exact
 * lists. */
static rk_status check_implicit_rank(rk_job_opts *o, rk_error *err)
{
    if (o->implicit && !rk_metric_is_full(o->knn.sim.metric)) {
        const rk_metric m = o->knn.sim.metric;
        const int correlation = m == RK_METRIC_PEARSON || m == RK_METRIC_PEARSON_BASELINE;
        if (o->metric_given && correlation)
            return needs_full(err, "--implicit makes every rating 1, so every correlation is undefined: use a "
                              "full-vector metric (--metric %s), not %s", rk_metric_name(m));
        if (o->metric_given && !(o->knn.sim.shrinkage > 0.0)) {
            char names[128];
            rk_metric_names(names, sizeof names, 1);
            return rk_error_set(err, RK_E_ARG, "--implicit makes every rating 1, so %s over co-raters is 1 for every "
                                "pair: use a full-vector metric (--metric %s), or --shrinkage to rank pairs by their "
                                "co-raters", rk_metric_name(m), names);
        }
        if (!o->metric_given) o->knn.sim.metric = RK_METRIC_COSINE_FULL;
    }
    if (rk_metric_is_ranking(o->knn.sim.metric))
        return rk_error_set(err, RK_E_ARG, "--metric %s is a ranking similarity: use --rank %s",
                            rk_metric_name(o->knn.sim.metric), rk_metric_name(o->knn.sim.metric));
    if (rk_rankw_on(&o->rank) && o->rank_given && o->by_user)
        return rk_error_set(err, RK_E_ARG, "--rank %s ranks items by item lists: with --by user top-N comes from the "
                            "user lists (--rank lists)", rk_rankw_sim_name(o->rank.sim));
    if (rk_rankw_on(&o->rank) && o->rank_given && o->approx != RK_APPROX_NONE)
        return rk_error_set(err, RK_E_ARG, "--approx makes the --metric lists approximately; top-N then comes from "
                            "them (--rank lists), not from --rank %s", rk_rankw_sim_name(o->rank.sim));
    if (o->knn.negative && (o->by_user || o->approx != RK_APPROX_NONE || o->model_path != NULL))
        return rk_error_set(err, RK_E_ARG, "--negative yes signs the exact item lists a run computes: it cannot be "
                            "used with --by user, --approx or --model (a saved model's lists are as they were saved)");
    if (o->knn.negative && rk_rankw_on(&o->rank) && o->top_n > 0)
        return rk_error_set(err, RK_E_ARG, "--negative yes lets negative similarities into the --metric lists, and "
                            "top-N sums them only with --rank lists: --rank %s's similarities are never negative",
                            rk_rankw_sim_name(o->rank.sim));
    if (o->tune && (!rk_rankw_on(&o->rank) || o->by_user || o->approx != RK_APPROX_NONE))
        return rk_error_set(err, RK_E_ARG, "--tune searches the ranking model: it needs item mode, exact lists and "
                            "a ranking similarity (not --by user, --approx or --rank lists)");
    if (o->tune && o->top_n == 0) return rk_error_set(err, RK_E_ARG, "--tune needs recommendations (--top-n N)");
    if (o->tune && o->model_path != NULL) return rk_error_set(err, RK_E_ARG, "--tune cannot be used with --model");
    return rk_rankw_check(&o->rank, err);
}

/* --cutoffs: each in [1, N]; without --top-n the lists grow to the largest. */
static rk_status check_cutoffs(rk_job_opts *o, rk_error *err)
{
    if (o->n_cutoffs == 0) return RK_OK;
    if (o->n_cutoffs > RK_RANK_MAX_CUTOFFS)
        return rk_error_set(err, RK_E_ARG, "--cutoffs takes at most %d values", RK_RANK_MAX_CUTOFFS);
    int32_t most = 0;
    for (int c = 0; c < o->n_cutoffs; c++) {
        if (o->cutoffs[c] < 1) return rk_error_set(err, RK_E_ARG, "--cutoffs: every value must be at least 1");
        if (o->cutoffs[c] > most) most = o->cutoffs[c];
    }
    if (o->top_n_given && most > o->top_n)
        return rk_error_set(err, RK_E_ARG, "--cutoffs: %d is above --top-n %d (the lists measured are the "
                            "recommendations)", most, o->top_n);
    if (!o->top_n_given && most > o->top_n) o->top_n = most;
    if (o->top_n == 0) return rk_error_set(err, RK_E_ARG, "--cutoffs needs recommendations (--top-n N)");
    return RK_OK;
}

/* What the command line's ranges already keep out, for other callers. */
static rk_status check_ranges(const rk_job_opts *o, rk_error *err)
{
    if (o->knn.k < 1) return rk_error_set(err, RK_E_ARG, "-k must be at least 1");
    if (o->folds != 0 && (o->folds < 2 || o->folds > RK_JOB_MAX_FOLDS))
        return rk_error_set(err, RK_E_ARG, "--folds must be between 2 and %d", RK_JOB_MAX_FOLDS);
    if (isnan(o->relevance)) return rk_error_set(err, RK_E_ARG, "--relevance must be a number");
    return RK_OK;
}

rk_status rk_job_opts_check(rk_job_opts *o, rk_error *err)
{
    RK_FORWARD(check_evaluation(o, err));
    RK_FORWARD(check_items(o, err));
    if (o->items_path != NULL) o->top_n = 0;
    if (o->gpu_sims == RK_GPU_SIMS_SPGEMM && !rk_metric_is_full(o->knn.sim.metric))
        return needs_full(err, "--gpu-sims spgemm computes the full-vector metrics (%s) only%s", "");
    if (o->implicit && o->relevance_given)
        return rk_error_set(err, RK_E_ARG, "--relevance cannot be used with --implicit: every held-out item is "
                            "relevant there");
    if (o->implicit) o->relevance = 1.0; /* every held-out rating is 1 */
    /* the loader holds to --memory-limit while it reads: a pipe or a compressed file has no size to plan from */
    const double limit = o->memory_limit_gb * 1073741824.0;
    o->load.mem_limit = limit > 0.0 ? (limit < 4.6e18 ? (size_t)limit : (size_t)1 << 62) : 0;
    RK_FORWARD(check_implicit_rank(o, err));
    RK_FORWARD(check_cutoffs(o, err));
    RK_FORWARD(check_model_approx(o, err));
    RK_FORWARD(check_pmodel(o, err));
    RK_FORWARD(check_save_path(o, err));
    if (rk_gpus_given(&o->gpus) && o->device == RK_DEVICE_CPU)
        return rk_error_set(err, RK_E_ARG, "--gpus needs the GPU engine: it cannot be used with --device cpu");
    RK_FORWARD(check_ranges(o, err));
    return rk_job_dist_check_opts(o, err);
}

/* ---- settings derived from the options and the data ---------------------------------------- */

/* --threads beyond the machine's processors only adds per-thread memory
 * (a workspace of the item count each): clamped, with a note. */
void rk_job_clamp_threads(rk_job_opts *o)
{
    const int procs = rk_omp_num_procs();
    /* ranks of one host share its cores: each takes its share unless told
     * (--threads, OMP_NUM_THREADS) or bound to fewer by mpirun.  Two ranks
     * of 32 threads each on 32 cores made every stage of the load 3-6 times
     * slower than one process's (BENCHMARKS.md, issue 22) */
    const int L = rk_dist_local_size(o->dist);
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (o->knn.threads == 0 && L > 1 && getenv("OMP_NUM_THREADS") == NULL && online > 0) {
        const int share = online / L > 1 ? (int)(online / L) : 1;
        o->knn.threads = share < procs ? share : procs;
    }
    if (o->knn.threads > procs && procs > 0) {
        rk_note(o->note, o->ud, "--threads %d: this machine has %d processor%s, so %d threads are used",
                o->knn.threads, procs, procs == 1 ? "" : "s", procs);
        o->knn.threads = procs;
    }
}

/* -k and --top-n beyond what the data holds only cost memory (lists of k
 * entries an item, N a user): clamped, with a note; the files are the same. */
void rk_job_clamp_to_data(const rk_job_opts *o, rk_knn_opts *ko, const rk_job_report *rep)
{
    const int64_t rows = o->by_user ? rep->users : rep->items;
    const int64_t most = rows > 1 ? rows - 1 : 1;
    if (ko->k > most) {
        rk_note(o->note, o->ud, "-k %d: a list holds at most the other %lld %s, so k = %lld", ko->k, (long long)most,
                o->by_user ? "users" : "items", (long long)most);
        ko->k = (int32_t)most;
    }
    if (rep->top_n < o->top_n)
        rk_note(o->note, o->ud, "--top-n %d: there are %lld items, so at most %d a user", o->top_n,
                (long long)rep->items, rep->top_n);
}

/* The data stage's options from the job's. */
void rk_job_data_opts(const rk_job_opts *o, const rk_knn_opts *ko, rk_data_opts *dop)
{
    memset(dop, 0, sizeof *dop);
    dop->inputs = o->inputs;
    dop->n_inputs = o->n_inputs;
    dop->test_path = o->test_path;
    dop->seed = o->seed;
    dop->load = o->load;
    if (dop->load.threads == 0) dop->load.threads = ko->threads;
    dop->load.progress = o->progress;
    dop->load.progress_ud = o->ud;
    dop->load.note = o->note;
    dop->load.note_ud = o->ud;
    dop->duplicates = o->duplicates;
    dop->implicit = o->implicit;
    dop->with_baselines = rk_knn_needs_baselines(ko);
    dop->progress = o->progress;
    dop->progress_ud = o->ud;
    if (o->folds > 0 || (o->holdout > 0.0 && o->split != RK_SPLIT_RATINGS)) {
        dop->no_model = 1; /* the split stage marks the ratings; one model per fold */
        dop->folds = o->folds;
        dop->split = o->split;
        dop->split_frac = o->holdout;
        dop->load.want_time = dop->load.want_time || o->split == RK_SPLIT_TEMPORAL;
    } else {
        dop->holdout = o->holdout;
    }
    /* the GPU transposes the ratings on the device: a run that may take
     * it leaves the host's item-major matrix for later (rk_model.h), and
     * builds it once the CPU is chosen (rk_job.c).  Not for user mode
     * (its view swaps the orientations), MPI (the data travel whole) or
     * the ball cover (it reads the item-major rows); the baselines walk
     * them too */
    dop->defer_item_major = o->device != RK_DEVICE_CPU && !o->by_user && rk_dist_size(o->dist) <= 1 &&
                            o->approx == RK_APPROX_NONE && !dop->with_baselines;
}
