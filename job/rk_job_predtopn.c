/* rk_job_predtopn.c — top-N by predicted rating (--topn-score prediction,
 * CONTRACT.md §5): the candidates of §5 from the --metric lists, each
 * scored by the --predict estimate of the run's engine, so that the
 * evaluation can set the rating models of §4 and §4b against the
 * similarity sums. */
#include "rk_job_internal.h"
#include "rk_omp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Queries a run may make (24 bytes each with its answer). */
#define MAX_QUERIES ((int64_t)1 << 28)

static int by_item(const void *a, const void *b)
{
    const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The candidates of the users' requests: every item in the list of an item
 * the user rated, not rated by the user, once, ascending (per user:
 * cptr[x] .. cptr[x + 1]), into the caller's arrays: cptr[n_users + 1],
 * and cand[cptr[n_users]] (NULL: counted only). */
static rk_status candidates(const rk_model *m, const rk_lists *l, const int32_t *users, int64_t n_users,
                            int64_t *cptr, int32_t *cand, rk_error *err)
{
    const int32_t ni = m->by_item.n_rows;
    int32_t *stamp = malloc((size_t)(ni > 0 ? ni : 1) * sizeof *stamp);
    RK_CHECK_ALLOC(stamp, err);
    for (int32_t i = 0; i < ni; i++) stamp[i] = -1;
    int64_t at = 0;
    for (int64_t x = 0; x < n_users; x++) {
        const int32_t u = users[x];
        const int64_t a = m->by_user.ptr[u], b = m->by_user.ptr[u + 1];
        for (int64_t p = a; p < b; p++) stamp[m->by_user.idx[p]] = (int32_t)x; /* rated: never a candidate */
        cptr[x] = at;
        for (int64_t p = a; p < b; p++) {
            const int32_t j = m->by_user.idx[p];
            for (int32_t s = 0; s < l->len[j]; s++) {
                const int32_t c = l->nbr[(int64_t)j * l->k + s];
                if (stamp[c] == (int32_t)x || l->sim[(int64_t)j * l->k + s] <= 0.0f) continue;
                stamp[c] = (int32_t)x;
                if (cand != NULL) cand[at] = c;
                at++;
            }
        }
        if (cand != NULL) /* ascending items: the ties' order */
            qsort(cand + cptr[x], (size_t)(at - cptr[x]), sizeof *cand, by_item);
    }
    cptr[n_users] = at;
    free(stamp);
    return RK_OK;
}

/* A user's best n of its candidates cand[a..b) (ascending items) by
 * prediction in top-N's fixed point, higher first, equal ones by ascending
 * item, into item/score; their count returned. */
static int32_t best_of(const int32_t *cand, const double *pred, int64_t a, int64_t b, int32_t n, int32_t *item,
                       uint64_t *score)
{
    int32_t len = 0;
    for (int64_t p = a; p < b; p++) {
        const uint64_t v = (uint64_t)llrint(pred[p] * RK_TOPN_ONE);
        if (len == n && v <= score[n - 1]) continue;
        int32_t q = len < n ? len++ : n - 1;
        for (; q > 0 && v > score[q - 1]; q--) {
            item[q] = item[q - 1];
            score[q] = score[q - 1];
        }
        item[q] = cand[p];
        score[q] = v;
    }
    return len;
}

rk_status rk_job_topn_predicted(rk_backend_seam *seam, const rk_model *m, const rk_knn_opts *ko, const rk_lists *l,
                                const rk_topn_opts *to, rk_topn_stats *ts, rk_error *err)
{
    const double t0 = rk_omp_wtime();
    RK_FORWARD(rk_topn_check(m, l, to, err));
    if (m->rmin < 0.0)
        return rk_error_set(err, RK_E_ARG, "--topn-score prediction ranks by predicted rating, which must not be "
                            "negative (the rating scale starts at %g)", m->rmin);
    int32_t *all = NULL;
    const int32_t *users;
    int64_t nu;
    RK_FORWARD(rk_topn_request(m, to, &all, &users, &nu, err));
    int64_t *cptr = malloc((size_t)(nu + 1) * sizeof *cptr);
    int32_t *cand = NULL, *qu = NULL, *used = NULL, *item = NULL, *len = NULL;
    double *pred = NULL;
    uint64_t *score = NULL;
    rk_status s = cptr != NULL ? candidates(m, l, users, nu, cptr, NULL, err)
                               : rk_error_set(err, RK_E_NOMEM, "out of memory for top-N's candidates");
    const int64_t nq = s == RK_OK ? cptr[nu] : 0;
    if (s == RK_OK && nq > MAX_QUERIES)
        s = rk_error_set(err, RK_E_RANGE, "--topn-score prediction: %lld candidate pairs to predict, above the "
                         "%lld it takes; use --topn-score sums", (long long)nq, (long long)MAX_QUERIES);
    const size_t q1 = (size_t)(nq > 0 ? nq : 1);
    const int32_t n = to->n < m->by_item.n_rows ? to->n : (m->by_item.n_rows > 0 ? m->by_item.n_rows : 1);
    if (s == RK_OK) {
        cand = malloc(q1 * sizeof *cand), qu = malloc(q1 * sizeof *qu), used = malloc(q1 * sizeof *used);
        pred = malloc(q1 * sizeof *pred), item = malloc((size_t)(nu > 0 ? nu : 1) * (size_t)n * sizeof *item);
        len = malloc((size_t)(nu > 0 ? nu : 1) * sizeof *len);
        score = malloc((size_t)(nu > 0 ? nu : 1) * (size_t)n * sizeof *score);
        if (!cand || !qu || !used || !pred || !item || !len || !score)
            s = rk_error_set(err, RK_E_NOMEM, "out of memory for %lld candidate pairs", (long long)nq);
    }
    if (s == RK_OK) s = candidates(m, l, users, nu, cptr, cand, err);
    for (int64_t x = 0; s == RK_OK && x < nu; x++)
        for (int64_t p = cptr[x]; p < cptr[x + 1]; p++) qu[p] = users[x];
    if (s == RK_OK && nq > 0) { /* the estimates on the run's engine, the CPU after a GPU failure */
        rk_queries q = {nq, qu, cand, pred, used, NULL, NULL};
        rk_knn_opts eko = *ko;
        eko.progress = NULL;
        const rk_gpu_opts g = rk_backend_call_opts(seam);
        s = rk_backend_current(seam)->knn(m, &eko, &g, NULL, &q, NULL, NULL, NULL, err);
        if (rk_backend_current(seam)->gpu && rk_backend_fall_back(seam, s, "the GPU engine (top-N by prediction)", err))
            s = rk_backend_current(seam)->knn(m, &eko, &g, NULL, &q, NULL, NULL, NULL, err);
    }
    const double t1 = rk_omp_wtime();
#pragma omp parallel for schedule(dynamic, 64) if (s == RK_OK && nu > 256)
    for (int64_t x = 0; x < (s == RK_OK ? nu : 0); x++)
        len[x] = best_of(cand, pred, cptr[x], cptr[x + 1], n, item + x * n, score + x * n);
    int64_t rows = 0;
    const int64_t per = to->batch > 0 ? to->batch : 4096;
    for (int64_t f = 0; s == RK_OK && f < nu; f += per) {
        const rk_topn_batch b = {f, f + per < nu ? per : nu - f, users + f, n, len + f, item + f * n, score + f * n};
        s = to->sink(to->sink_ud, &b, err);
    }
    for (int64_t x = 0; s == RK_OK && x < nu; x++) rows += len[x];
    if (ts != NULL && s == RK_OK) {
        memset(ts, 0, sizeof *ts);
        ts->wall_s = rk_omp_wtime() - t0;
        ts->compute_s = t1 - t0;
        ts->users = nu;
        ts->rows = rows;
        ts->updates = nq;
        snprintf(ts->path, sizeof ts->path, "by prediction (%s)", rk_predict_mode_name(ko->mode));
        snprintf(ts->detail, sizeof ts->detail, "%lld pairs predicted in %.4f s", (long long)nq, t1 - t0);
    }
    free(all), free(cptr), free(cand), free(qu), free(used), free(pred), free(item), free(len), free(score);
    return s;
}
