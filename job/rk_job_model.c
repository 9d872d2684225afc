/* The job with --model (rk_job_internal.h): a saved model answers without
 * computing similarities.
 *
 * The model brings the lists, the statistics, its id maps and its training
 * ratings.  RATINGS brings today's ratings: top-N serves its users from their
 * ratings (items the model does not know are dropped and counted), so a new
 * user with a few ratings gets recommendations too.  --queries score a
 * user from the same ratings when RATINGS has one of an item the model knows
 * (else from the model's training ratings, else the fallback: CONTRACT.md
 * §10), with the item side of the saving run (CONTRACT.md §4 needs whole
 * similarity rows: the rows of the queried items are computed over the
 * saved training ratings, no other).  So with RATINGS equal to the training
 * ratings every answer is the saving run's. */
#include "config.h"
#include "rk_job_internal.h"
#include "rk_idlist.h"
#include "rk_mfile.h"
#include "rk_omp.h"
#include "rk_pairs.h"
#include "rk_gpu.h"
#include "rk_pmodel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct model_job {
    rk_mfile mf;
    rk_data data;           /* today's ratings, their own ids */
    rk_model today;         /* today's ratings in the model's item indices */
    rk_pairs pairs;
    int32_t *qu;            /* per pair: its user's row of hist, -1 for none */
    rk_csr hist;            /* the queried users' histories, in the model's item indices */
    int32_t *hmu;           /* per row of hist: the model's user of that id, -1 for none */
    double *pred;
    int32_t *used;
    int32_t *nb;            /* --predict interpolate: each pair's neighbours */
    int32_t *users;         /* --users: today's users to serve */
    int64_t n_users;
    rk_outset *out;         /* the run's files */
    rk_outset_stream *recs;
} model_job;

static void model_job_free(model_job *j)
{
    rk_mfile_free(&j->mf);
    rk_data_free(&j->data);
    rk_model_free(&j->today);
    rk_pairs_free(&j->pairs);
    free(j->qu);
    free(j->hmu);
    rk_csr_free(&j->hist);
    free(j->pred);
    free(j->used);
    free(j->nb);
    free(j->users);
    rk_outset_stream_free(j->recs);
    rk_outset_free(j->out);
}

/* Today's ratings with the items renumbered as the model numbers them. */
static rk_status today_model(const rk_job_opts *o, model_job *j, rk_job_report *rep, rk_error *err)
{
    const rk_triples *t = &j->data.train;
    const rk_dataset *ds = &j->data.ds;
    int32_t n_items = rk_ids_count(ds->items);
    int32_t *map = malloc((size_t)(n_items > 0 ? n_items : 1) * sizeof *map);
    RK_CHECK_ALLOC(map, err);
    char id[RK_ID_MAX + 1];
    for (int32_t i = 0; i < n_items; i++) {
        int len = rk_ids_format(ds->items, i, id, sizeof id);
        map[i] = len > 0 ? rk_ids_find(j->mf.items, id, (size_t)len) : -1;
    }
    rk_triples r;
    rk_status s = rk_triples_alloc(&r, t->n, 0, err);
    if (s != RK_OK) {
        free(map);
        return s;
    }
    int64_t n = 0;
    for (int64_t x = 0; x < t->n; x++) {
        int32_t i = map[t->item[x]];
        if (i < 0) continue;
        r.user[n] = t->user[x];
        r.item[n] = i;
        r.rating[n] = t->rating[x];
        n++;
    }
    free(map);
    rep->ratings_unknown_items = t->n - n;
    r.n = n;
    if (n == 0) {
        rk_triples_free(&r);
        return rk_error_set(err, RK_E_EMPTY, "%s: none of its items is in the model %s",
                            o->n_inputs == 1 ? o->inputs[0] : "RATINGS", o->model_path);
    }
    s = rk_model_build(&j->today, &r, rk_ids_count(ds->users), j->mf.lists.n_items, 1, j->mf.model.rmin,
                       j->mf.model.rmax, 0, err);
    rk_triples_free(&r);
    return s;
}

/* The row of hist that holds user u's history (from: T or M), added on first use. */
static int32_t hist_row(int32_t *row_of, int32_t u, int64_t *src, int32_t *rows, int64_t code, int64_t *nnz,
                        const rk_csr *from)
{
    if (row_of[u] < 0) {
        row_of[u] = *rows;
        src[(*rows)++] = code;
        *nnz += from->ptr[u + 1] - from->ptr[u];
    }
    return row_of[u];
}

/* Each pair's user history (CONTRACT.md §10): their ratings in RATINGS when
 * one is of an item the model knows (the ratings top-N reads), else the
 * model's training ratings when it knows the user, else none (the fallback).
 * hist gets the rows of the queried users, each once; j->qu each pair's row.
 * A pair whose item, or whose user, neither the model nor RATINGS knows is
 * unknown; *first_unknown gets the first such pair (-1: none). */
static rk_status query_histories(model_job *j, rk_job_report *rep, int64_t *first_unknown, rk_error *err)
{
    const rk_pairs *p = &j->pairs;
    const rk_csr *T = &j->today.by_user, *M = &j->mf.model.by_user;
    int32_t *row_t = malloc((size_t)(T->n_rows > 0 ? T->n_rows : 1) * sizeof *row_t);
    int32_t *row_m = malloc((size_t)(M->n_rows > 0 ? M->n_rows : 1) * sizeof *row_m);
    int64_t *src = malloc((size_t)(p->n > 0 ? p->n : 1) * sizeof *src); /* row r: today's user s, or -2 - model user */
    j->qu = malloc((size_t)(p->n > 0 ? p->n : 1) * sizeof *j->qu);
    j->hmu = malloc((size_t)(p->n > 0 ? p->n : 1) * sizeof *j->hmu);
    rk_status s = RK_OK;
    if (row_t == NULL || row_m == NULL || src == NULL || j->qu == NULL || j->hmu == NULL) {
        s = rk_error_set(err, RK_E_NOMEM, "out of memory for the histories of %lld queries", (long long)p->n);
        goto done;
    }
    for (int32_t u = 0; u < T->n_rows; u++) row_t[u] = -1;
    for (int32_t u = 0; u < M->n_rows; u++) row_m[u] = -1;
    int32_t rows = 0;
    int64_t nnz = 0;
    *first_unknown = -1;
    for (int64_t t = 0; t < p->n; t++) {
        const int32_t tu = rk_ids_find(j->data.ds.users, p->raw + p->raw_off[2 * t],
                                       (size_t)(p->raw_off[2 * t + 1] - p->raw_off[2 * t]));
        const int32_t mu = p->user[t];
        const int today = rk_model_user_known(&j->today, tu);
        if (rows == INT32_MAX) {
            s = rk_error_set(err, RK_E_RANGE, "--queries: more than %d distinct users", INT32_MAX - 1);
            goto done;
        }
        const int32_t before = rows;
        j->qu[t] = today ? hist_row(row_t, tu, src, &rows, tu, &nnz, T)
                 : rk_model_user_known(&j->mf.model, mu) ? hist_row(row_m, mu, src, &rows, -2 - (int64_t)mu, &nnz, M)
                                                         : -1;
        if (rows > before) j->hmu[before] = mu; /* a new row: the model's user of the same id */
        rep->queries_from_ratings += today;
        if (p->item[t] < 0 || (mu < 0 && !today)) {
            rep->queries_unknown++;
            if (*first_unknown < 0) *first_unknown = t;
        }
    }
    rk_csr *h = &j->hist;
    h->n_rows = rows;
    h->n_cols = j->mf.model.by_item.n_rows;
    h->nnz = nnz;
    h->ptr = malloc(((size_t)rows + 1) * sizeof *h->ptr);
    h->idx = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *h->idx);
    h->val = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *h->val);
    if (h->ptr == NULL || h->idx == NULL || h->val == NULL) {
        s = rk_error_set(err, RK_E_NOMEM, "out of memory for the histories of %lld queries", (long long)p->n);
        goto done;
    }
    h->ptr[0] = 0;
    for (int32_t r = 0; r < rows; r++) {
        const rk_csr *from = src[r] >= 0 ? T : M;
        const int32_t u = (int32_t)(src[r] >= 0 ? src[r] : -2 - src[r]);
        const int64_t a = from->ptr[u], n = from->ptr[u + 1] - a;
        memcpy(h->idx + h->ptr[r], from->idx + a, (size_t)n * sizeof *h->idx);
        memcpy(h->val + h->ptr[r], from->val + a, (size_t)n * sizeof *h->val);
        h->ptr[r + 1] = h->ptr[r] + n;
    }
done:
    free(row_t);
    free(row_m);
    free(src);
    return s;
}

/* The note on the pairs that get the fallback because an id is unknown:
 * the first one by its line when rk_pairs_read found it (its first pair
 * with an id outside the model's maps), else by its ids. */
static void note_unknown(const rk_job_opts *o, const rk_pairs *p, int64_t unknown, int64_t first)
{
    int64_t t0 = 0;
    while (t0 < p->n && p->user[t0] >= 0 && p->item[t0] >= 0) t0++;
    char where[600];
    if (t0 == first)
        snprintf(where, sizeof where, "line %lld", (long long)p->first_unknown_line);
    else
        snprintf(where, sizeof where, "%.*s,%.*s", (int)(p->raw_off[2 * first + 1] - p->raw_off[2 * first]),
                 p->raw + p->raw_off[2 * first], (int)(p->raw_off[2 * first + 2] - p->raw_off[2 * first + 1]),
                 p->raw + p->raw_off[2 * first + 1]);
    rk_note(o->note, o->ud, "%.300s: %lld of %lld pairs name an item the model does not know, or a user that neither "
            "it nor %.200s knows (first: %s); they get the fallback estimate", o->queries_path, (long long)unknown,
            (long long)p->n, o->n_inputs == 1 ? o->inputs[0] : "RATINGS", where);
}

/* --queries: predictions from the saved model's similarity rows (the queried
 * items' only) with each user's history of query_histories. */
static rk_status answer_queries(const rk_job_opts *o, model_job *j, rk_job_report *rep, rk_knn_stats *st,
                                rk_error *err)
{
    RK_FORWARD(rk_pairs_read(o->queries_path, j->mf.users, j->mf.items, &j->pairs, err));
    const rk_pairs *p = &j->pairs;
    int64_t first_unknown = -1;
    rep->queries = p->n;
    rep->queries_unknown = rep->queries_from_ratings = 0;
    RK_FORWARD(query_histories(j, rep, &first_unknown, err));
    if (p->n == 0) return RK_OK;
    j->pred = malloc((size_t)p->n * sizeof *j->pred);
    j->used = malloc((size_t)p->n * sizeof *j->used);
    if (j->pred == NULL || j->used == NULL)
        return rk_error_set(err, RK_E_NOMEM, "out of memory for %lld predictions", (long long)p->n);
    rk_queries q = {p->n, j->qu, p->item, j->pred, j->used, NULL, NULL};
    rk_knn_opts ko = j->mf.knn;
    ko.threads = o->knn.threads;
    ko.progress = o->progress;
    ko.progress_ud = o->ud;
    /* a saved model's predictions and top-N run on the CPU: they read its
     * lists and a few rows, no similarity worth a device.  interpolate
     * solves over the neighbours the engine chooses; global answers every
     * pair from its trained weights */
    if (ko.mode == RK_PREDICT_INTERPOLATE) {
        j->nb = malloc((size_t)p->n * (size_t)ko.k * sizeof *j->nb);
        if (j->nb == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory for the queries' neighbours");
        memset(j->nb, 0xff, (size_t)p->n * (size_t)ko.k * sizeof *j->nb);
        q.nb = j->nb;
    }
    if (ko.mode != RK_PREDICT_GLOBAL) RK_FORWARD(rk_knn_cpu_hist(&j->mf.model, &ko, &j->hist, &q, st, err));
    RK_FORWARD(rk_pmodel_hist_cpu(&j->mf.model, &ko, &j->mf.lists, &j->mf.global, &j->hist, j->hmu, &q, st, err));

    /* the pairs as the file names them, unknown ids too */
    const rk_outset_preds pr = {p->n, NULL, NULL, NULL, j->pred, j->used, NULL, NULL, p->raw, p->raw_off};
    RK_FORWARD(rk_outset_write(j->out, RK_OUTSET_PREDICTIONS, 0, &pr, err));
    if (rep->queries_unknown > 0) note_unknown(o, p, rep->queries_unknown, first_unknown);
    return RK_OK;
}

rk_status rk_job_run_model(const rk_job_opts *o, rk_job_report *rep, rk_error *err)
{
    model_job j;
    rk_knn_stats st;
    rk_status s;
    double t0 = rk_omp_wtime();
    memset(&j, 0, sizeof j);
    memset(&st, 0, sizeof st);
    snprintf(st.device, sizeof st.device, "cpu");
    snprintf(st.path, sizeof st.path, "saved model");
    if (o->knn.threads > 0) rk_omp_set_threads(o->knn.threads);

    s = rk_mfile_read(o->model_path, &j.mf, err);
    if (s != RK_OK) goto fail;
    rep->t_model_io = rk_omp_wtime() - t0;

    /* today's ratings: users to serve and what they rated */
    rk_data_opts dop;
    memset(&dop, 0, sizeof dop);
    dop.inputs = o->inputs;
    dop.n_inputs = o->n_inputs;
    dop.load = o->load;
    dop.load.note = o->note;
    dop.load.note_ud = o->ud;
    if (dop.load.threads == 0) dop.load.threads = o->knn.threads;
    dop.duplicates = o->duplicates;
    dop.progress = o->progress;
    dop.progress_ud = o->ud;
    s = rk_data_load(&dop, &j.data, err);
    if (s == RK_OK) s = today_model(o, &j, rep, err);
    if (s != RK_OK) goto fail;
    rk_job_report_counts(rep, o, &j.data);
    rep->items = j.mf.lists.n_items;
    rep->t_load = rk_omp_wtime() - t0 - rep->t_model_io;
    if (rep->ratings_unknown_items > 0)
        rk_note(o->note, o->ud, "%lld ratings name items the model does not know: they are not used",
                (long long)rep->ratings_unknown_items);

    s = rk_job_files_open(&j.out, o->out_dir, err);
    if (s != RK_OK) goto fail;
    const double t_engine0 = rk_omp_wtime(); /* queries and top-N */
    if (o->queries_path != NULL) {
        s = answer_queries(o, &j, rep, &st, err);
        if (s != RK_OK) goto fail;
        rep->t_predict = st.predict_s + st.model_s;
        rep->t_similarity = st.sim_s;
    }

    /* top-N from the saved lists and today's ratings */
    rep->top_n = o->top_n > rep->items ? (int32_t)rep->items : o->top_n;
    rep->metric = (int)j.mf.knn.sim.metric; /* the model's own, not the defaults of the command line */
    rep->k = j.mf.knn.k;
    if (rep->top_n > 0) {
        rk_idlist_report ir;
        memset(&ir, 0, sizeof ir);
        if (o->users_path != NULL) {
            s = rk_idlist_read(o->users_path, j.data.ds.users, &j.users, &j.n_users, &ir, err);
            if (s != RK_OK) goto fail;
            int64_t kept = 0;
            for (int64_t t = 0; t < j.n_users; t++)
                if (rk_model_user_known(&j.today, j.users[t])) j.users[kept++] = j.users[t];
            rep->users_file_ids = ir.ids;
            rep->users_unknown = ir.unknown + (j.n_users - kept);
            rep->users_repeated = ir.repeated;
            j.n_users = kept;
            if (rep->users_unknown > 0)
                rk_note(o->note, o->ud, "%.200s: %lld of %lld ids are not users of %.200s with a rating of an "
                        "item the model knows; they get no recommendations", o->users_path,
                        (long long)rep->users_unknown, (long long)ir.ids,
                        o->n_inputs == 1 ? o->inputs[0] : "RATINGS");
        }
        const rk_outset_ids ids = {j.data.ds.users, j.mf.items};
        s = rk_outset_stream_open(j.out, RK_OUTSET_RECOMMENDATIONS, 0, &ids, &j.recs, err);
        if (s != RK_OK) goto fail;
        rk_topn_opts to;
        memset(&to, 0, sizeof to);
        to.n = rep->top_n;
        to.users = o->users_path != NULL ? j.users : NULL;
        to.n_users = j.n_users;
        to.sink = rk_outset_put;
        to.sink_ud = j.recs;
        to.threads = o->knn.threads;
        to.progress = o->progress;
        to.progress_ud = o->ud;
        /* the saving run's ranking lists when the file has them (CONTRACT.md §10) */
        const rk_lists *tl = j.mf.have_rank ? &j.mf.rank_lists : &j.mf.lists;
        if (j.mf.have_rank) {
            rep->have_rank_model = 1;
            rep->rank_used = j.mf.rank;
            for (int32_t i = 0; i < tl->n_items; i++) rep->rank_entries += tl->len[i];
        }
        s = rk_backend_get(RK_BACKEND_CPU)->topn(&j.today, tl, &to, NULL, &rep->topn, err);
        if (s != RK_OK) goto fail;
        rep->t_recommend = rep->topn.wall_s;
    }
    snprintf(rep->device, sizeof rep->device, "cpu");
    snprintf(rep->path, sizeof rep->path, "saved model");
    rep->n_folds = 1;
    rep->fold[0].train_ratings = rep->train_ratings;

    /* metrics.json shows the model's options, which are the ones in effect */
    rk_job_opts shown_opts = *o;
    shown_opts.knn = j.mf.knn;
    shown_opts.shrinkage_given = 1;
    rk_job_shown sh = {NULL, NULL, &j.mf.lists, NULL, NULL, NULL};
    rep->t_engine = rk_omp_wtime() - t_engine0;
    s = rk_job_finish(&shown_opts, rep, &j.data, &j.mf.model, &st, j.out, t0, rk_omp_wtime(), &sh, err);
    if (s != RK_OK) goto fail;
    model_job_free(&j);
    return RK_OK;
fail:
    model_job_free(&j);
    return s;
}
