/* recknn.c — librecknn's public interface (recknn.h): options by name, ratings
 * in memory, and the model: the command's data stage, lists and ranking lists
 * (job/), then top-N, neighbour lists and predictions from them. */
#include "config.h"

#define _POSIX_C_SOURCE 200809L
#include "rk_api_internal.h"
#include "rk_ptune.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *recknn_version(void)
{
    return PACKAGE_VERSION;
}

int recknn_api_version(void)
{
    return RECKNN_API_VERSION;
}

/* ---- options ---------------------------------------------------------------- */

rk_status recknn_options_new(recknn_options **out, rk_error *err)
{
    *out = calloc(1, sizeof **out);
    RK_CHECK_ALLOC(*out, err);
    rk_job_opts_default(&(*out)->job);
    return RK_OK;
}

rk_status recknn_options_set(recknn_options *o, const char *name, const char *value, rk_error *err)
{
    if (o->n_set >= MAX_SET) return rk_error_set(err, RK_E_ARG, "more than %d option values on one handle", MAX_SET);
    const rk_jobopt *r = rk_jobopt_find(name);
    char *copy = NULL;
    if (value != NULL) {
        copy = strdup(value);
        RK_CHECK_ALLOC(copy, err);
    }
    rk_job_opts trial = o->job; /* a refused value leaves the options as they were */
    const rk_status s = rk_jobopt_set(&trial, name, copy, err);
    if (s != RK_OK) {
        free(copy);
        return s;
    }
    o->job = trial;
    o->val[o->n_set] = copy;
    o->name[o->n_set++] = r->name;
    return RK_OK;
}

const char *recknn_option_name(size_t i)
{
    const rk_jobopt *r = rk_jobopt_at(i);
    return r != NULL ? r->name : NULL;
}

int recknn_option_takes_value(const char *name)
{
    const rk_jobopt *r = rk_jobopt_find(name);
    return r != NULL ? r->has_value : -1;
}

/* What recknn_fit takes: the model's options (data set, lists, ranking
 * model and its search, the ball cover, devices); the rest belongs to the
 * command's file job. */
static const char *const fit_names[] = {
    "duplicates", "rating-scale", "metric", "k", "min-support", "shrinkage", "negative", "predict", "min-k",
    "interp-shrink", "interp-reg", "global-lr", "global-reg", "global-epochs", "global-decay",
    "implicit", "rank", "rank-k", "alpha", "beta", "weighting", "bm25", "rank-values", "rank-shrink",
    "locality", "normalize", "device", "gpu-memory", "threads", "gpu-topn", "gpu-query", "gpu-sims", "seed",
    "relevance", /* recknn_evaluate's */
    "by", "approx", "reps", "probes", "approx-check",
    "tune", "tune-predict", "tune-metric", "tune-fraction", "tune-grid", "tune-rounds", "tune-users", "gpus",
    "top-n", /* the list length the search measures */
};


static int in_list(const char *const *list, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], name) == 0) return 1;
    return 0;
}

int recknn_option_fits(const char *name)
{
    if (rk_jobopt_find(name) == NULL) return -1;
    return in_list(fit_names, sizeof fit_names / sizeof *fit_names, name);
}

void recknn_options_free(recknn_options *o)
{
    if (o == NULL) return;
    for (int i = 0; i < o->n_set; i++) free(o->val[i]);
    free(o);
}

/* ---- ratings ---------------------------------------------------------------- */

rk_status recknn_data_new(int32_t n_users, int32_t n_items, int64_t n, const int32_t *users, const int32_t *items,
                          const float *ratings, recknn_data **out, rk_error *err)
{
    *out = NULL;
    if (n_users < 0 || n_items < 0 || n < 0)
        return rk_error_set(err, RK_E_ARG, "recknn_data_new: negative size (%d users, %d items, %lld ratings)",
                            n_users, n_items, (long long)n);
    if (n == 0) return rk_error_set(err, RK_E_EMPTY, "recknn_data_new: no rating");
    if (users == NULL || items == NULL) return rk_error_set(err, RK_E_ARG, "recknn_data_new: no user or item array");
    for (int64_t t = 0; t < n; t++) {
        if (users[t] < 0 || users[t] >= n_users || items[t] < 0 || items[t] >= n_items)
            return rk_error_set(err, RK_E_ARG, "recknn_data_new: rating %lld is of user %d and item %d, outside "
                                "%d users and %d items", (long long)t, users[t], items[t], n_users, n_items);
        if (ratings != NULL && !isfinite(ratings[t]))
            return rk_error_set(err, RK_E_ARG, "recknn_data_new: rating %lld is not a finite number", (long long)t);
    }
    recknn_data *d = calloc(1, sizeof *d);
    RK_CHECK_ALLOC(d, err);
    d->n_users = n_users;
    d->n_items = n_items;
    const rk_status s = rk_triples_alloc(&d->t, n, 0, err);
    if (s != RK_OK) {
        free(d);
        return s;
    }
    memcpy(d->t.user, users, (size_t)n * sizeof *users);
    memcpy(d->t.item, items, (size_t)n * sizeof *items);
    for (int64_t t = 0; t < n; t++) d->t.rating[t] = ratings != NULL ? ratings[t] : 1.0f;
    *out = d;
    return RK_OK;
}

/* A CSR's shape and order: every row's items ascending, in range, once. */
static rk_status check_csr(int32_t n_users, int32_t n_items, const int64_t *indptr, const int32_t *indices,
                           const float *data, rk_error *err)
{
    if (n_users < 0 || n_items < 0 || indptr == NULL || indices == NULL)
        return rk_error_set(err, RK_E_ARG, "recknn_data_from_csr: negative sizes or no arrays");
    if (indptr[0] != 0) return rk_error_set(err, RK_E_ARG, "recknn_data_from_csr: indptr[0] is %lld, not 0",
                                           (long long)indptr[0]);
    for (int32_t u = 0; u < n_users; u++) {
        if (indptr[u + 1] < indptr[u])
            return rk_error_set(err, RK_E_ARG, "recknn_data_from_csr: indptr decreases at row %d", u);
        for (int64_t p = indptr[u]; p < indptr[u + 1]; p++) {
            if (indices[p] < 0 || indices[p] >= n_items || (p > indptr[u] && indices[p] <= indices[p - 1]))
                return rk_error_set(err, RK_E_ARG, "recknn_data_from_csr: row %d: item %d at %lld is out of range, "
                                    "repeated or out of ascending order", u, indices[p], (long long)p);
            if (data != NULL && !isfinite(data[p]))
                return rk_error_set(err, RK_E_ARG, "recknn_data_from_csr: rating %lld is not a finite number",
                                    (long long)p);
        }
    }
    if (indptr[n_users] == 0) return rk_error_set(err, RK_E_EMPTY, "recknn_data_from_csr: no rating");
    return RK_OK;
}

rk_status recknn_data_from_csr(int32_t n_users, int32_t n_items, const int64_t *indptr, const int32_t *indices,
                               const float *data, int borrow, recknn_data **out, rk_error *err)
{
    *out = NULL;
    RK_FORWARD(check_csr(n_users, n_items, indptr, indices, data, err));
    const int64_t nnz = indptr[n_users];
    recknn_data *d = calloc(1, sizeof *d);
    RK_CHECK_ALLOC(d, err);
    d->n_users = n_users;
    d->n_items = n_items;
    d->is_csr = 1;
    d->csr.n_rows = n_users;
    d->csr.n_cols = n_items;
    d->csr.nnz = nnz;
    /* borrowed: read in place (the ratings of 1 without data are ours) */
    d->borrowed = borrow ? RK_MODEL_BORROW_PTR | RK_MODEL_BORROW_IDX | (data != NULL ? RK_MODEL_BORROW_VAL : 0) : 0;
    d->csr.ptr = borrow ? (int64_t *)indptr : malloc(((size_t)n_users + 1) * sizeof *d->csr.ptr);
    d->csr.idx = borrow ? (int32_t *)indices : malloc((size_t)nnz * sizeof *d->csr.idx);
    d->csr.val = borrow && data != NULL ? (float *)data : malloc((size_t)nnz * sizeof *d->csr.val);
    if (d->csr.ptr == NULL || d->csr.idx == NULL || d->csr.val == NULL) {
        recknn_data_free(d);
        return rk_error_set(err, RK_E_NOMEM, "out of memory for %lld ratings", (long long)nnz);
    }
    if (!borrow) memcpy(d->csr.ptr, indptr, ((size_t)n_users + 1) * sizeof *indptr);
    if (!borrow) memcpy(d->csr.idx, indices, (size_t)nnz * sizeof *indices);
    if (!(d->borrowed & RK_MODEL_BORROW_VAL))
        for (int64_t p = 0; p < nnz; p++) d->csr.val[p] = data != NULL ? data[p] : 1.0f;
    *out = d;
    return RK_OK;
}

void recknn_data_free(recknn_data *d)
{
    if (d == NULL) return;
    rk_triples_free(&d->t);
    if (!(d->borrowed & RK_MODEL_BORROW_PTR)) free(d->csr.ptr);
    if (!(d->borrowed & RK_MODEL_BORROW_IDX)) free(d->csr.idx);
    if (!(d->borrowed & RK_MODEL_BORROW_VAL)) free(d->csr.val);
    free(d);
}

/* ---- fit ------------------------------------------------------------------------ */

/* The options a model fitted in memory takes; the others refused by name. */
static rk_status check_fit_names(const recknn_options *o, rk_error *err)
{
    for (int i = 0; i < o->n_set; i++) {
        const char *n = o->name[i];
        if (recknn_option_fits(n) == 1) continue;
        return rk_error_set(err, RK_E_ARG, "recknn_fit: --%s is an option of the recknn command's file job, not "
                            "of a model fitted in memory", n);
    }
    return RK_OK;
}

rk_status rk_api_ratings(const recknn_data *d, int implicit, rk_dup_policy policy, const char *what, rk_triples *t,
                         rk_csr *by_user, rk_error *err)
{
    const int64_t n = d->is_csr ? d->csr.nnz : d->t.n;
    RK_FORWARD(rk_triples_alloc(t, n, 0, err));
    if (d->is_csr) { /* its rows are the pairs */
        for (int32_t u = 0; u < d->csr.n_rows; u++)
            for (int64_t p = d->csr.ptr[u]; p < d->csr.ptr[u + 1]; p++) {
                t->user[p] = u;
                t->item[p] = d->csr.idx[p];
                t->rating[p] = d->csr.val[p];
            }
    } else {
        memcpy(t->user, d->t.user, (size_t)n * sizeof *t->user);
        memcpy(t->item, d->t.item, (size_t)n * sizeof *t->item);
        memcpy(t->rating, d->t.rating, (size_t)n * sizeof *t->rating);
    }
    if (implicit)
        for (int64_t p = 0; p < n; p++) t->rating[p] = 1.0f;
    rk_dup_report rep;
    const rk_status s = rk_triples_dedupe_csr(t, d->n_users, d->n_items, policy, NULL, by_user, NULL, &rep, err);
    if (s == RK_E_DUPLICATE)
        return rk_error_set(err, RK_E_DUPLICATE, "%suser %d rated item %d more than once (duplicates error)", what,
                            rep.first_user, rep.first_item);
    return s;
}

/* The training set as the command's data stage makes it: the pattern
 * alone with "implicit", repeated pairs resolved, the model with baselines
 * where the options read them. */
static rk_status build_model(const rk_job_opts *jo, const recknn_data *d, recknn_model *M, rk_error *err)
{
    if (d->is_csr) { /* sorted rows, each pair once: the data set's matrix, read in place by the model */
        const int with_b = rk_knn_needs_baselines(&M->ko);
        const unsigned all = RK_MODEL_BORROW_PTR | RK_MODEL_BORROW_IDX | RK_MODEL_BORROW_VAL;
        if (!jo->implicit)
            return rk_model_from_borrowed_csr(&M->m, &d->csr, all, jo->load.have_scale, jo->load.scale_min,
                                              jo->load.scale_max, with_b, err);
        rk_csr ones = d->csr; /* implicit: the pattern, with values of its own */
        ones.val = malloc((size_t)(ones.nnz > 0 ? ones.nnz : 1) * sizeof *ones.val);
        RK_CHECK_ALLOC(ones.val, err);
        for (int64_t p = 0; p < ones.nnz; p++) ones.val[p] = 1.0f;
        return rk_model_from_borrowed_csr(&M->m, &ones, RK_MODEL_BORROW_PTR | RK_MODEL_BORROW_IDX,
                                          jo->load.have_scale, jo->load.scale_min, jo->load.scale_max, with_b, err);
    }
    rk_triples t;
    rk_csr by_user;
    memset(&by_user, 0, sizeof by_user);
    rk_status s = rk_api_ratings(d, jo->implicit, jo->duplicates, "", &t, &by_user, err);
    rk_triples_free(&t);
    if (s != RK_OK) return s;
    return rk_model_from_csr(&M->m, &by_user, jo->load.have_scale, jo->load.scale_min, jo->load.scale_max,
                             rk_knn_needs_baselines(&M->ko), err);
}

/* The ranking model's lists, shaped, as the command's ranking stage makes
 * them before its top-N (job/rk_job_rank.c). */
/* The lists by the random ball cover (the command's --approx rbc, job/rk_job_approx.c). */
static rk_status approx_lists(const rk_job_opts *jo, recknn_model *M, rk_error *err)
{
    rk_rbc_opts r;
    rk_rbc_opts_default(&r);
    r.reps = jo->approx_reps;
    r.probes = jo->approx_probes;
    r.seed = jo->seed;
    r.threads = M->ko.threads;
    rk_rbc_stats as;
    int on_gpu = 0;
    RK_FORWARD(rk_backend_rbc(&M->seam, rk_api_engine_model(M), &M->ko, &r, &M->lists, &as, &on_gpu, err));
    if (jo->approx_check <= 0) return RK_OK;
    RK_FORWARD(rk_rbc_recall(rk_api_engine_model(M), &M->ko, &M->lists, jo->approx_check, jo->seed, M->ko.threads,
                             &M->check, err));
    M->have_check = 1;
    return RK_OK;
}

rk_status recknn_model_approx_check(const recknn_model *m, recknn_approx_check *out, rk_error *err)
{
    if (!m->have_check)
        return rk_error_set(err, RK_E_ARG, "recknn_model_approx_check: the model was fitted without approx-check");
    const rk_rbc_recall_result *c = &m->check;
    out->sampled = c->sampled;
    out->evaluated = c->evaluated;
    out->hits = c->hits;
    out->exact_entries = c->exact_entries;
    out->recall_at_k = c->evaluated > 0 ? c->recall : NAN;
    out->recall_at_k_ties = c->evaluated > 0 ? c->recall_ties : NAN;
    out->check_s = c->wall_s;
    return RK_OK;
}

/* "tune": the command's search over the ranking model on a validation split
 * of the data (job/rk_job.c: tune_fold); the best configuration becomes
 * jo's and the model's. */
static rk_status tune_rank(rk_job_opts *jo, recknn_model *M, rk_error *err)
{
    rk_tune_opts to;
    rk_job_tune_opts(jo, jo->top_n < M->m.by_item.n_rows ? jo->top_n : M->m.by_item.n_rows, &to);
    rk_tune_result r;
    memset(&r, 0, sizeof r);
    const rk_status s = rk_tune_run(&M->m, &to, &jo->knn, &M->seam, &r, err);
    if (s == RK_OK) jo->rank = M->rank = r.rows[r.best].cfg;
    rk_tune_free(&r);
    return s;
}

static rk_status rank_lists(const rk_job_opts *jo, recknn_model *M, rk_error *err)
{
    rk_rankw_model tm;
    RK_FORWARD(rk_rankw_build_rows(&M->m, &jo->rank, &tm, err));
    rk_knn_opts rko;
    rk_rankw_knn_opts(&jo->rank, &tm, &jo->knn, &rko);
    rk_knn_stats st;
    rk_status s = rk_lists_alloc(&M->rl, M->m.by_item.n_rows, rko.k, err);
    if (s == RK_OK) s = rk_backend_rank_lists(&M->seam, &tm, &rko, &M->rl, &st, "the GPU engine (ranking lists)", err);
    rk_rankw_free(&tm);
    RK_FORWARD(s);
    rk_rankw_shape(&jo->rank, &M->rl);
    M->ranked = 1;
    return RK_OK;
}

rk_status rk_api_start(const rk_job_opts *jo, recknn_model *M, rk_error *err)
{
    rk_backend_opts bo;
    memset(&bo, 0, sizeof bo);
    bo.device = jo->device;
    bo.gpu.memory_cap = (size_t)(jo->gpu_memory_gb * 1073741824.0);
    bo.gpu.topn_route = jo->gpu_topn;
    bo.gpu.query_route = jo->gpu_query;
    bo.gpu.sims_route = jo->gpu_sims;
    bo.exact = jo->approx == RK_APPROX_NONE;
    rk_api_gpus_seam(M, jo, &bo);
    for (int32_t u = 0; u < M->m.by_user.n_rows; u++) M->served += M->m.by_user.ptr[u + 1] > M->m.by_user.ptr[u];
    RK_FORWARD(rk_backend_start(&M->seam, &bo, &M->ko, err));
    M->seam_started = 1;
    return rk_backend_choose(&M->seam, &M->ko, err);
}

/* "tune-predict": the --predict model's options chosen on a validation split of
 * the ratings given, as the command chooses them for a fold (rk_ptune.h). */
static rk_status tune_predict(const rk_job_opts *jo, recknn_model *M, rk_error *err)
{
    rk_ptune_result t;
    const rk_status s = rk_job_ptune(jo, &M->m, &M->seam, &M->ko, &t, err);
    rk_ptune_free(&t);
    return s;
}

rk_status recknn_fit(const recknn_options *o, const recknn_data *d, recknn_model **out, rk_error *err)
{
    *out = NULL;
    RK_FORWARD(check_fit_names(o, err));
    rk_job_opts jo = o->job;
    RK_FORWARD(rk_job_opts_check(&jo, err));
    jo.knn.progress = jo.progress; /* recknn_options_set_progress's: the lists' stages, and the model's later */
    jo.knn.progress_ud = jo.ud;
    recknn_model *M = calloc(1, sizeof *M);
    RK_CHECK_ALLOC(M, err);
    M->ko = jo.knn;
    M->rank = jo.rank;
    M->implicit = jo.implicit;
    M->duplicates = jo.duplicates;
    M->relevance = jo.relevance;
    if (!jo.shrinkage_given) M->ko.sim.shrinkage = rk_sim_default_shrinkage(M->ko.sim.metric);
    M->by_user = jo.by_user;
    const int32_t rows = M->by_user ? d->n_users : d->n_items;
    const int32_t most = rows > 1 ? rows - 1 : 1; /* the command's clamp (rk_job_clamp_to_data) */
    if (M->ko.k > most) M->ko.k = most;
    rk_status s = build_model(&jo, d, M, err);
    if (s == RK_OK) s = rk_api_start(&jo, M, err);
    if (s == RK_OK && jo.tune_predict) s = tune_predict(&jo, M, err);
    if (s == RK_OK && M->by_user) s = rk_byuser_view(&M->m, &M->uview, err);
    if (s == RK_OK) s = rk_lists_alloc(&M->lists, rows, M->ko.k, err);
    rk_knn_stats st;
    M->approx = jo.approx != RK_APPROX_NONE;
    if (s == RK_OK && M->approx) s = approx_lists(&jo, M, err);
    else if (s == RK_OK && rk_api_gpus_shared(M)) s = rk_api_gpus_lists(&jo, M, &st, err);
    else if (s == RK_OK) /* with predict "global", its model trained once on the lists */
        s = rk_backend_lists_global(&M->seam, rk_api_engine_model(M), &M->ko, &M->lists, &M->global, &st,
                                    "the GPU engine", err);
    /* the ranking model is item mode's with exact lists (job/rk_job.c: rank_model_on), its
     * configuration searched first under "tune" */
    if (s == RK_OK && jo.tune) s = tune_rank(&jo, M, err);
    if (s == RK_OK && rk_rankw_on(&jo.rank) && !M->by_user && !M->approx)
        s = rk_api_gpus_shared(M) ? rk_api_gpus_rank(&jo, M, err) : rank_lists(&jo, M, err);
    if (s != RK_OK) {
        recknn_model_free(M);
        return s;
    }
    *out = M;
    return RK_OK;
}

void recknn_options_set_progress(recknn_options *o, recknn_progress_fn fn, void *ud)
{
    o->job.progress = fn;
    o->job.ud = ud;
}

void recknn_model_set_progress(recknn_model *m, recknn_progress_fn fn, void *ud)
{
    m->ko.progress = fn;
    m->ko.progress_ud = ud;
}

void recknn_model_shape(const recknn_model *m, int32_t *n_users, int32_t *n_items, int32_t *k, int64_t *entries)
{
    if (n_users != NULL) *n_users = m->m.by_user.n_rows;
    if (n_items != NULL) *n_items = m->m.by_item.n_rows;
    if (k != NULL) *k = m->lists.k;
    if (entries != NULL) {
        int64_t e = 0;
        for (int32_t i = 0; i < m->lists.n_items; i++) e += m->lists.len[i];
        *entries = e;
    }
}

int32_t recknn_model_list_rows(const recknn_model *m)
{
    return m->lists.n_items;
}

int64_t recknn_model_served(const recknn_model *m)
{
    return m->served;
}

void recknn_model_served_users(const recknn_model *m, int32_t *out)
{
    int64_t x = 0;
    for (int32_t u = 0; u < m->m.by_user.n_rows; u++)
        if (m->m.by_user.ptr[u + 1] > m->m.by_user.ptr[u]) out[x++] = u;
}

void recknn_model_free(recknn_model *m)
{
    if (m == NULL) return;
    if (m->seam_started) rk_backend_free(&m->seam);
    rk_lists_free(&m->lists);
    rk_lists_free(&m->rl);
    rk_pmodel_global_free(&m->global);
    rk_byuser_free(&m->uview);
    rk_ids_free(m->ids[0]);
    rk_ids_free(m->ids[1]);
    rk_model_free(&m->m);
    free(m);
}

/* ---- results ------------------------------------------------------------------- */

typedef struct rec_out {
    int32_t n;
    int32_t *items;
    double *scores;
    int32_t *counts;
} rec_out;

static rk_status rec_sink(void *ud, const rk_topn_batch *b, rk_error *err)
{
    (void)err;
    const rec_out *r = ud;
    for (int64_t x = 0; x < b->count; x++) {
        const int64_t at = (b->first + x) * r->n;
        const int32_t len = b->len[x];
        for (int32_t e = 0; e < r->n; e++) {
            const int in = e < len;
            r->items[at + e] = in ? b->item[x * b->n + e] : -1;
            if (r->scores != NULL) r->scores[at + e] = in ? rk_topn_score(b->score[x * b->n + e]) : 0.0;
        }
        if (r->counts != NULL) r->counts[b->first + x] = len;
    }
    return RK_OK;
}

/* After a GPU failure under "auto" the CPU starts over: every cell is written again. */
static rk_status rec_restart(void *ud, rk_error *err)
{
    (void)ud;
    (void)err;
    return RK_OK;
}

rk_status recknn_recommend(recknn_model *m, const int32_t *users, int64_t n_users, int32_t n, int32_t *items_out,
                           double *scores_out, int32_t *counts_out, rk_error *err)
{
    if (n < 1) return rk_error_set(err, RK_E_ARG, "recknn_recommend: n must be at least 1, got %d", n);
    const int32_t nu = m->m.by_user.n_rows, ni = m->m.by_item.n_rows;
    for (int64_t t = 0; users != NULL && t < n_users; t++)
        if (users[t] < 0 || users[t] >= nu)
            return rk_error_set(err, RK_E_ARG, "recknn_recommend: user %d is outside the %d users", users[t], nu);
    const int64_t served = users != NULL ? n_users : m->served;
    for (int64_t c = 0; c < served * n; c++) { /* users without a list, and the cells past N = n_items */
        items_out[c] = -1;
        if (scores_out != NULL) scores_out[c] = 0.0;
    }
    for (int64_t u = 0; counts_out != NULL && u < served; u++) counts_out[u] = 0;
    if (served == 0 || ni == 0) return RK_OK;
    rec_out r = {n, items_out, scores_out, counts_out};
    rk_topn_opts to;
    memset(&to, 0, sizeof to);
    to.n = n < ni ? n : ni; /* the command's --top-n above the items: every item */
    to.users = users;
    to.n_users = n_users;
    to.sink = rec_sink;
    to.sink_ud = &r;
    to.threads = m->ko.threads;
    rk_api_progress(m, &to);
    return rk_api_topn(m, &to, err);
}

rk_status rk_api_topn(recknn_model *m, const rk_topn_opts *to, rk_error *err)
{
    if (m->by_user) return rk_backend_get(RK_BACKEND_CPU)->user_topn(&m->m, &m->lists, to, NULL, NULL, err);
    return rk_backend_topn(&m->seam, &m->m, m->ranked ? &m->rl : &m->lists, to, rec_restart, NULL, NULL,
                           "the GPU top-N", err);
}

rk_status recknn_similar_items(const recknn_model *m, const int32_t *items, int64_t n_items, int32_t n,
                               int32_t *neighbours_out, float *sims_out, int32_t *counts_out, rk_error *err)
{
    const rk_lists *l = &m->lists;
    if (n < 1) return rk_error_set(err, RK_E_ARG, "recknn_similar_items: n must be at least 1, got %d", n);
    for (int64_t x = 0; x < n_items; x++)
        if (items[x] < 0 || items[x] >= l->n_items)
            return rk_error_set(err, RK_E_ARG, "recknn_similar_items: %s %d is outside the %d %ss",
                                m->by_user ? "user" : "item", items[x], l->n_items, m->by_user ? "user" : "item");
    for (int64_t x = 0; x < n_items; x++) {
        const size_t at = (size_t)items[x] * (size_t)l->k;
        const int32_t len = l->len[items[x]];
        for (int32_t e = 0; e < n; e++) {
            neighbours_out[x * n + e] = e < len ? l->nbr[at + (size_t)e] : -1;
            if (sims_out != NULL) sims_out[x * n + e] = e < len ? l->sim[at + (size_t)e] : 0.0f;
        }
        if (counts_out != NULL) counts_out[x] = len < n ? len : n;
    }
    return RK_OK;
}

void recknn_neighbors_csr(const recknn_model *m, int64_t *indptr, int32_t *indices, float *sims)
{
    const rk_lists *l = &m->lists;
    indptr[0] = 0;
    for (int32_t i = 0; i < l->n_items; i++) {
        const size_t at = (size_t)i * (size_t)l->k;
        int64_t p = indptr[i];
        for (int32_t e = 0; e < l->len[i]; e++, p++) {
            indices[p] = l->nbr[at + (size_t)e];
            if (sims != NULL) sims[p] = l->sim[at + (size_t)e];
        }
        indptr[i + 1] = p;
    }
}

/* The pairs' items, ascending: the rows the engine computes (the command's
 * subset of a test set, job/rk_job.c). */
static rk_status query_rows(const recknn_model *m, const int32_t *items, int64_t n, int32_t **rows, int32_t *n_rows,
                            rk_error *err)
{
    const int32_t ni = m->lists.n_items; /* the engine's rows: items, or users in user mode */
    char *in = calloc((size_t)(ni > 0 ? ni : 1), 1);
    *rows = malloc((size_t)(ni > 0 ? ni : 1) * sizeof **rows);
    if (in == NULL || *rows == NULL) {
        free(in);
        free(*rows);
        *rows = NULL;
        return rk_error_set(err, RK_E_NOMEM, "out of memory for the rows of %lld pairs", (long long)n);
    }
    for (int64_t t = 0; t < n; t++) in[items[t]] = 1;
    *n_rows = 0;
    for (int32_t i = 0; i < ni; i++)
        if (in[i]) (*rows)[(*n_rows)++] = i;
    free(in);
    return RK_OK;
}

rk_status recknn_predict(recknn_model *m, const int32_t *users, const int32_t *items, int64_t n, double *out,
                         int32_t *used_out, rk_error *err)
{
    const int32_t nu = m->m.by_user.n_rows, ni = m->m.by_item.n_rows;
    if (m->approx)
        return rk_error_set(err, RK_E_ARG, "recknn_predict: a model of the ball cover's lists (approx rbc) makes "
                            "no predictions (the command's --approx refuses them too)");
    for (int64_t t = 0; t < n; t++)
        if (users[t] < 0 || users[t] >= nu || items[t] < 0 || items[t] >= ni)
            return rk_error_set(err, RK_E_ARG, "recknn_predict: pair %lld (user %d, item %d) is outside the %d "
                                "users and %d items", (long long)t, users[t], items[t], nu, ni);
    if (n == 0) return RK_OK;
    int32_t *used = used_out != NULL ? used_out : malloc((size_t)n * sizeof *used);
    int32_t *rows = NULL, n_rows = 0;
    rk_status s = used != NULL ? RK_OK : rk_error_set(err, RK_E_NOMEM, "out of memory for %lld pairs", (long long)n);
    /* user mode asks (u, i) as (i, u) of the transposed view (rk_byuser.h) */
    const int32_t *qa = m->by_user ? items : users, *qb = m->by_user ? users : items;
    if (s == RK_OK && m->global.n_items > 0) { /* predict "global": the trained model answers */
        rk_queries q = {n, qa, qb, out, used, NULL, NULL};
        rk_model full;
        s = rk_model_complete_copy(&m->m, &full, err);
        if (s == RK_OK) rk_pmodel_global_predict(&full, &m->lists, &m->global, NULL, NULL, m->ko.threads, &q);
        if (s == RK_OK) rk_model_complete_free(&full, &m->m);
        if (used != used_out) free(used);
        return s;
    }
    if (s == RK_OK) s = query_rows(m, qb, n, &rows, &n_rows, err);
    if (s == RK_OK) {
        const rk_model *em = rk_api_engine_model(m);
        rk_knn_opts eko = m->ko;
        eko.rows = rows;
        eko.n_rows = n_rows;
        rk_queries q = {n, qa, qb, out, used, NULL, NULL};
        rk_knn_stats st;
        const rk_gpu_opts g = rk_backend_call_opts(&m->seam);
        s = rk_backend_current(&m->seam)->knn(em, &eko, &g, NULL, &q, NULL, NULL, &st, err);
        if (rk_backend_current(&m->seam)->gpu && rk_backend_fall_back(&m->seam, s, "the GPU engine", err))
            s = rk_backend_current(&m->seam)->knn(em, &eko, &g, NULL, &q, NULL, NULL, &st, err);
    }
    /* user mode, means: a pair whose item has no training rating gets μ, as the command answers it
     * (job/rk_job.c's fold_measure: Surprise's KNNWithMeans) */
    for (int64_t t = 0; s == RK_OK && m->by_user && m->ko.mode == RK_PREDICT_MEANS && t < n; t++)
        if (!rk_model_item_known(&m->m, items[t])) out[t] = rk_predict_clip(&m->m, m->m.mu);
    free(rows);
    if (used != used_out) free(used);
    return s;
}
