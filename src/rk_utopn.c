/* The CPU user-based top-N engine (rk_utopn.h): OpenMP over the users of a
 * batch, one dense accumulator of fixed-point sums per thread, a bounded
 * heap.  The batching, the N cap and the sink protocol are rk_topn_cpu's. */
#include "rk_utopn.h"
#include "rk_topn_internal.h"
#include "rk_omp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rk_status rk_utopn_check(const rk_model *m, const rk_lists *ul, const rk_topn_opts *o, rk_error *err)
{
    RK_FORWARD(rk_topn_check(m, NULL, o, err));
    const int32_t n_users = m->by_user.n_rows;
    if (ul == NULL) return rk_error_set(err, RK_E_ARG, "user top-N needs the users' neighbour lists");
    if (ul->n_items != n_users || ul->k < 1)
        return rk_error_set(err, RK_E_ARG, "user top-N: neighbour lists of the wrong shape (%d lists of %d, %d users)",
                            ul->n_items, ul->k, n_users);
    /* a neighbour indexes m->by_user: one out of range would read outside it */
    for (int32_t u = 0; u < n_users; u++) {
        const int32_t len = ul->len[u];
        if (len < 0 || len > ul->k)
            return rk_error_set(err, RK_E_ARG, "user top-N: list of user %d has length %d (capacity %d)", u, len,
                                ul->k);
        const int32_t *nb = ul->nbr + (int64_t)u * ul->k;
        for (int32_t r = 0; r < len; r++)
            if (nb[r] < 0 || nb[r] >= n_users)
                return rk_error_set(err, RK_E_ARG, "user top-N: user %d has neighbour %d outside [0, %d)", u, nb[r],
                                    n_users);
    }
    return RK_OK;
}

void rk_utopn_dense(const rk_model *m, const rk_lists *ul, int32_t user, double *scores)
{
    const rk_csr *U = &m->by_user;
    memset(scores, 0, (size_t)m->by_item.n_rows * sizeof *scores);
    for (int32_t r = 0; r < ul->len[user]; r++) {
        const int64_t at = (int64_t)user * ul->k + r;
        if (!(ul->sim[at] > 0.0f)) continue;
        const int32_t v = ul->nbr[at];
        for (int64_t p = U->ptr[v]; p < U->ptr[v + 1]; p++) scores[U->idx[p]] += (double)ul->sim[at];
    }
    for (int64_t p = U->ptr[user]; p < U->ptr[user + 1]; p++) scores[U->idx[p]] = 0.0;
}

/* ---- per-thread state ----------------------------------------------------------- */

typedef struct utopn_ws {
    uint64_t *acc;     /* n_items fixed-point sums, zero between users */
    int32_t *touched;  /* items with a nonzero sum */
    uint64_t *rated;   /* n_items bits: the current user's rated items, clear between users */
    uint64_t *hs;      /* heap, N */
    int32_t *hi;
} utopn_ws;

static void ws_free(utopn_ws *w)
{
    free(w->acc);
    free(w->touched);
    free(w->rated);
    free(w->hs);
    free(w->hi);
    memset(w, 0, sizeof *w);
}

static int ws_init(utopn_ws *w, int32_t n_items, int32_t n)
{
    size_t ni = (size_t)(n_items > 0 ? n_items : 1);
    w->acc = calloc(ni, sizeof *w->acc);
    w->touched = malloc(ni * sizeof *w->touched);
    w->rated = calloc((ni + 63) / 64, sizeof *w->rated);
    w->hs = malloc((size_t)n * sizeof *w->hs);
    w->hi = malloc((size_t)n * sizeof *w->hi);
    if (w->acc == NULL || w->touched == NULL || w->rated == NULL || w->hs == NULL || w->hi == NULL) {
        ws_free(w);
        return -1;
    }
    return 0;
}

/* The top-N of user u into out_s/out_i; @return its length.  *updates
 * counts the (neighbour, item) pairs read. */
static int32_t user_topn(const rk_model *m, const rk_lists *ul, const uint64_t *qw, int32_t n, int32_t u,
                         utopn_ws *w, uint64_t *out_s, int32_t *out_i, int64_t *updates)
{
    const rk_csr *U = &m->by_user;
    const int32_t k = ul->k, len = ul->len[u];
    const int32_t *nb = ul->nbr + (int64_t)u * k;
    const uint64_t *q = qw + (int64_t)u * k;
    uint64_t *acc = w->acc, *rated = w->rated;
    int32_t nt = 0;
    int64_t upd = 0;
    /* similar users share many items with u: marking them first keeps them
     * out of the sums and out of touched[] */
    for (int64_t p = U->ptr[u]; p < U->ptr[u + 1]; p++) rated[U->idx[p] >> 6] |= (uint64_t)1 << (U->idx[p] & 63);
    for (int32_t r = 0; r < len; r++) {
        /* a weight that rounds to 0 adds nothing: its row is not read */
        const uint64_t qr = q[r];
        if (qr == 0) continue;
        const int32_t v = nb[r];
        const int32_t *it = U->idx + U->ptr[v];
        const int64_t cnt = U->ptr[v + 1] - U->ptr[v];
        upd += cnt;
        for (int64_t p = 0; p < cnt; p++) {
            const int32_t c = it[p];
            if ((rated[c >> 6] >> (c & 63)) & 1) continue;
            /* sums only grow (qr > 0, no wrap below 2^63): c enters touched[] once */
            if (acc[c] == 0) w->touched[nt++] = c;
            acc[c] += qr;
        }
    }
    for (int64_t p = U->ptr[u]; p < U->ptr[u + 1]; p++) rated[U->idx[p] >> 6] = 0;
    rk_topn_heap h = {n, 0, w->hs, w->hi};
    for (int32_t t = 0; t < nt; t++) {
        const int32_t c = w->touched[t];
        rk_topn_heap_push(&h, acc[c], c);
        acc[c] = 0;
    }
    *updates += upd;
    return rk_topn_heap_drain(&h, out_s, out_i);
}

rk_status rk_utopn_cpu(const rk_model *m, const rk_lists *ul, const rk_topn_opts *o, rk_topn_stats *st,
                       rk_error *err)
{
    rk_topn_stats local;
    const double t_call = rk_omp_wtime();
    if (st == NULL) st = &local;
    memset(st, 0, sizeof *st);
    snprintf(st->path, sizeof st->path, "cpu user");
    RK_FORWARD(rk_utopn_check(m, ul, o, err));

    /* N capped at the item count as rk_topn_cpu does: a list never holds more */
    const int32_t n_items = m->by_item.n_rows, k = ul->k;
    const int32_t n = o->n < n_items ? o->n : (n_items > 0 ? n_items : 1);
    int32_t *all;
    const int32_t *users;
    int64_t n_users;
    rk_status s = RK_OK;

    RK_FORWARD(rk_topn_request(m, o, &all, &users, &n_users, err));
    const int64_t batch = rk_topn_batch_users(o, n, n_users);

    /* the lists' similarities in fixed point, once */
    const int32_t n_lists = ul->n_items;
    const size_t cells = (size_t)n_lists * (size_t)k;
    uint64_t *qw = malloc((cells > 0 ? cells : 1) * sizeof *qw);
    int32_t *b_len = malloc((size_t)batch * sizeof *b_len);
    int32_t *b_item = malloc((size_t)batch * (size_t)n * sizeof *b_item);
    uint64_t *b_score = malloc((size_t)batch * (size_t)n * sizeof *b_score);
    if (qw == NULL || b_len == NULL || b_item == NULL || b_score == NULL) {
        s = rk_error_set(err, RK_E_NOMEM, "out of memory for user top-%d of %lld users", n, (long long)batch);
        goto done;
    }
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < n_lists; i++)
        for (int32_t r = 0; r < k; r++) {
            size_t at = (size_t)i * (size_t)k + (size_t)r;
            qw[at] = r < ul->len[i] ? rk_topn_fixed(ul->sim[at]) : 0;
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
            utopn_ws w;
            if (ws_init(&w, n_items, n) != 0) {
                failed = 1;
            } else {
#pragma omp for schedule(dynamic, 16)
                for (int64_t b = 0; b < count; b++) {
                    int32_t len = user_topn(m, ul, qw, n, users[first + b], &w, b_score + b * n, b_item + b * n,
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
            s = rk_error_set(err, RK_E_NOMEM,
                             "out of memory for the per-thread user top-N accumulators (%d items)", n_items);
            break;
        }
        rk_topn_batch bt = {first, count, users + first, n, b_len, b_item, b_score};
        s = o->sink(o->sink_ud, &bt, err);
        sink += rk_omp_wtime() - t1;
        RK_PROGRESS(o->progress, o->progress_ud, "top-N", first + count, n_users, "users");
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
