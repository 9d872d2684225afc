/* The CPU top-N engine (rk_topn.h): OpenMP over the users of a batch, one
 * dense accumulator of fixed-point sums per thread, a bounded heap. */
#include "rk_topn.h"
#include "rk_topn_internal.h"
#include "rk_omp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rk_status rk_topn_check(const rk_model *m, const rk_lists *l, const rk_topn_opts *o, rk_error *err)
{
    if (o == NULL || o->n < 1) return rk_error_set(err, RK_E_ARG, "top-N needs N >= 1 (got %d)", o ? o->n : 0);
    if (o->sink == NULL) return rk_error_set(err, RK_E_ARG, "top-N needs a sink for its results");
    if (l != NULL && (l->n_items != m->by_item.n_rows || l->k < 1))
        return rk_error_set(err, RK_E_ARG, "top-N: neighbour lists of the wrong shape (%d lists, %d items)",
                            l ? l->n_items : -1, m->by_item.n_rows);
    if (o->users != NULL) {
        if (o->n_users < 0) return rk_error_set(err, RK_E_ARG, "top-N: a negative number of users");
        for (int64_t t = 0; t < o->n_users; t++)
            if (o->users[t] < 0 || o->users[t] >= m->by_user.n_rows)
                return rk_error_set(err, RK_E_ARG, "top-N: user index %d is outside [0, %d)", o->users[t],
                                    m->by_user.n_rows);
    }
    return RK_OK;
}

void rk_topn_dense(const rk_model *m, const rk_lists *l, int32_t user, double *scores)
{
    const rk_csr *U = &m->by_user;
    memset(scores, 0, (size_t)l->n_items * sizeof *scores);
    for (int64_t p = U->ptr[user]; p < U->ptr[user + 1]; p++) {
        int32_t j = U->idx[p];
        for (int32_t r = 0; r < l->len[j]; r++) {
            int64_t at = (int64_t)j * l->k + r;
            scores[l->nbr[at]] += (double)l->sim[at];
        }
    }
    for (int64_t p = U->ptr[user]; p < U->ptr[user + 1]; p++) scores[U->idx[p]] = 0.0;
}

int rk_topn_lists_signed(const rk_lists *l)
{
    for (int32_t i = 0; i < l->n_items; i++)
        for (int32_t r = 0; r < l->len[i]; r++)
            if (l->sim[(int64_t)i * l->k + r] < 0.0f) return 1;
    return 0;
}

rk_status rk_topn_request(const rk_model *m, const rk_topn_opts *o, int32_t **all, const int32_t **users,
                          int64_t *n_users, rk_error *err)
{
    const rk_csr *U = &m->by_user;
    *all = NULL;
    *users = o->users;
    *n_users = o->n_users;
    if (o->users != NULL) return RK_OK;
    int32_t *v = malloc((size_t)(U->n_rows > 0 ? U->n_rows : 1) * sizeof *v);
    RK_CHECK_ALLOC(v, err);
    int64_t n = 0;
    for (int32_t u = 0; u < U->n_rows; u++)
        if (U->ptr[u + 1] > U->ptr[u]) v[n++] = u;
    *all = v;
    *users = v;
    *n_users = n;
    return RK_OK;
}

/* Users per sink call when the caller does not say: large enough to keep
 * every thread busy, small enough that the batch's lists stay in cache. */
int64_t rk_topn_batch_users(const rk_topn_opts *o, int32_t n, int64_t n_users)
{
    int64_t batch = o->batch;
    if (batch <= 0) {
        batch = (int64_t)(((size_t)32 << 20) / ((size_t)n * (sizeof(uint64_t) + sizeof(int32_t)) + 4));
        if (batch < 1024) batch = 1024;
    }
    if (batch > n_users) batch = n_users > 0 ? n_users : 1;
    return batch;
}

/* ---- per-thread state ----------------------------------------------------------- */

static void ws_free(rk_topn_ws *w)
{
    free(w->acc);
    free(w->touched);
    free(w->rated);
    free(w->hs);
    free(w->hi);
    memset(w, 0, sizeof *w);
}

static int ws_init(rk_topn_ws *w, int32_t n_items, int32_t n, int want_rated)
{
    size_t ni = (size_t)(n_items > 0 ? n_items : 1);
    memset(w, 0, sizeof *w);
    w->acc = calloc(ni, sizeof *w->acc);
    w->touched = malloc(ni * sizeof *w->touched);
    if (want_rated) w->rated = calloc((ni + 63) / 64, sizeof *w->rated);
    w->hs = malloc((size_t)n * sizeof *w->hs);
    w->hi = malloc((size_t)n * sizeof *w->hi);
    if (w->acc == NULL || w->touched == NULL || (want_rated && w->rated == NULL) || w->hs == NULL || w->hi == NULL) {
        ws_free(w);
        return -1;
    }
    return 0;
}

/* The top-N of one user into out_s/out_i; @return its length.  *updates
 * counts the list entries summed.  SIGNED (lists with negative weights, a
 * constant at each call so that each loop is compiled for it): a sum can
 * come back to 0 and go on, so the items met are marked in the rated bits
 * (w->rated, clear between users) rather than told by a zero sum, and only
 * positive sums are ranked. */
static inline __attribute__((always_inline)) int32_t score_user(const rk_model *m, const rk_lists *l,
                                                                 const uint64_t *qw, int32_t n, int32_t u,
                                                                 rk_topn_ws *w, uint64_t *out_s, int32_t *out_i,
                                                                 int64_t *updates, const int SIGNED)
{
    const rk_csr *U = &m->by_user;
    const int32_t k = l->k;
    uint64_t *acc = w->acc, *seen = w->rated;
    int32_t nt = 0;
    int64_t upd = 0;
    for (int64_t p = U->ptr[u]; p < U->ptr[u + 1]; p++) {
        const int32_t j = U->idx[p], len = l->len[j];
        const int32_t *nb = l->nbr + (int64_t)j * k;
        const uint64_t *q = qw + (int64_t)j * k;
        upd += len;
        for (int32_t r = 0; r < len; r++) {
            const int32_t c = nb[r];
            /* a weight that rounds to 0 (s < 2^-33) adds nothing; were it
             * summed, c could enter touched[] once per such weight and
             * overflow its n_items entries */
            if (q[r] == 0) continue;
            if (SIGNED) {
                const uint64_t bit = (uint64_t)1 << (c & 63);
                if (!(seen[c >> 6] & bit)) {
                    seen[c >> 6] |= bit;
                    w->touched[nt++] = c;
                }
            } else if (acc[c] == 0) {
                w->touched[nt++] = c;
            }
            acc[c] += q[r];
        }
    }
    /* items the user rated are never recommended */
    for (int64_t p = U->ptr[u]; p < U->ptr[u + 1]; p++) acc[U->idx[p]] = 0;
    rk_topn_heap h = {n, 0, w->hs, w->hi};
    for (int32_t t = 0; t < nt; t++) {
        const int32_t c = w->touched[t];
        if (SIGNED ? (int64_t)acc[c] > 0 : acc[c] != 0) rk_topn_heap_push(&h, acc[c], c);
        acc[c] = 0;
        if (SIGNED) seen[c >> 6] = 0;
    }
    *updates += upd;
    return rk_topn_heap_drain(&h, out_s, out_i);
}

static int32_t user_topn(const rk_model *m, const rk_lists *l, const uint64_t *qw, int32_t n, int32_t u,
                         rk_topn_ws *w, uint64_t *out_s, int32_t *out_i, int64_t *updates)
{
    return score_user(m, l, qw, n, u, w, out_s, out_i, updates, 0);
}

static int32_t user_topn_signed(const rk_model *m, const rk_lists *l, const uint64_t *qw, int32_t n, int32_t u,
                                rk_topn_ws *w, uint64_t *out_s, int32_t *out_i, int64_t *updates)
{
    return score_user(m, l, qw, n, u, w, out_s, out_i, updates, 1);
}

rk_status rk_topn_cpu(const rk_model *m, const rk_lists *l, const rk_topn_opts *o, rk_topn_stats *st,
                      rk_error *err)
{
    rk_topn_stats local;
    const double t_call = rk_omp_wtime();
    if (st == NULL) st = &local;
    memset(st, 0, sizeof *st);
    snprintf(st->path, sizeof st->path, "cpu");
    RK_FORWARD(rk_topn_check(m, l, o, err));
    if (l == NULL) return rk_error_set(err, RK_E_ARG, "top-N needs the neighbour lists");
    if (rk_topn_lists_signed(l)) return rk_topn_run_cpu(m, l, o, 1, "", user_topn_signed, st, t_call, err);
    return rk_topn_run_cpu(m, l, o, 0, "", user_topn, st, t_call, err);
}

rk_status rk_topn_run_cpu(const rk_model *m, const rk_lists *l, const rk_topn_opts *o, int want_rated, const char *who,
                          rk_topn_user_fn score, rk_topn_stats *st, double t_call, rk_error *err)
{
    /* a list never holds more than n_items: N beyond that would only size the
     * batch buffers (1024 users at least) by N, 12 GB for --top-n 1000000;
     * the GPU engine takes the same N */
    const int32_t n_items = m->by_item.n_rows, n = o->n < n_items ? o->n : (n_items > 0 ? n_items : 1);
    int32_t *all;
    const int32_t *users;
    int64_t n_users;
    rk_status s = RK_OK;

    RK_FORWARD(rk_topn_request(m, o, &all, &users, &n_users, err));
    const int64_t batch = rk_topn_batch_users(o, n, n_users);

    /* the lists' similarities in fixed point, once */
    const int32_t n_lists = l->n_items, k = l->k;
    const size_t cells = (size_t)n_lists * (size_t)k;
    uint64_t *qw = malloc((cells > 0 ? cells : 1) * sizeof *qw);
    int32_t *b_len = malloc((size_t)batch * sizeof *b_len);
    int32_t *b_item = malloc((size_t)batch * (size_t)n * sizeof *b_item);
    uint64_t *b_score = malloc((size_t)batch * (size_t)n * sizeof *b_score);
    if (qw == NULL || b_len == NULL || b_item == NULL || b_score == NULL) {
        s = rk_error_set(err, RK_E_NOMEM, "out of memory for %stop-%d of %lld users", who, n, (long long)batch);
        goto done;
    }
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < n_lists; i++)
        for (int32_t r = 0; r < k; r++) {
            size_t at = (size_t)i * (size_t)k + (size_t)r;
            qw[at] = r < l->len[i] ? rk_topn_fixed(l->sim[at]) : 0;
        }

    const int nthr = o->threads > 0 ? o->threads : rk_omp_max_threads();
    RK_PROGRESS(o->progress, o->progress_ud, "top-N", 0, n_users, "users");
    double compute = 0.0, sink = 0.0;
    int64_t updates = 0, rows = 0;
    for (int64_t first = 0; first < n_users && s == RK_OK; first += batch) {
        const int64_t count = n_users - first < batch ? n_users - first : batch;
        const double t0 = rk_omp_wtime();
        int failed = 0;
#pragma omp parallel num_threads(nthr) reduction(+ : updates, rows) reduction(|| : failed)
        {
            rk_topn_ws w;
            if (ws_init(&w, n_items, n, want_rated) != 0) {
                failed = 1;
            } else {
#pragma omp for schedule(dynamic, 16)
                for (int64_t b = 0; b < count; b++) {
                    int32_t len = score(m, l, qw, n, users[first + b], &w, b_score + b * n, b_item + b * n,
                                        &updates);
                    b_len[b] = len;
                    rows += len;
                }
                ws_free(&w);
            }
        }
        const double t1 = rk_omp_wtime();
        compute += t1 - t0;
        if (failed) {
            s = rk_error_set(err, RK_E_NOMEM, "out of memory for the per-thread %stop-N accumulators (%d items)",
                             who, n_items);
            break;
        }
        rk_topn_batch bt = {first, count, users + first, n, b_len, b_item, b_score};
        s = o->sink(o->sink_ud, &bt, err);
        sink += rk_omp_wtime() - t1;
        if (s == RK_OK && RK_PROGRESS_STOPS(o->progress, o->progress_ud, "top-N", first + count, n_users, "users"))
            s = rk_error_set(err, RK_E_CANCELLED, RK_STOPPED_MSG, "top-N");
    }
    st->compute_s = compute;
    st->sink_s = sink;
    st->users = n_users;
    st->rows = rows;
    st->updates = updates;
done:
    free(all);
    free(qw);
    free(b_len);
    free(b_item);
    free(b_score);
    st->wall_s = rk_omp_wtime() - t_call;
    return s;
}
