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

/* The top-N of user u into out_s/out_i; @return its length.  *updates
 * counts the (neighbour, item) pairs read. */
static int32_t user_topn(const rk_model *m, const rk_lists *ul, const uint64_t *qw, int32_t n, int32_t u,
                         rk_topn_ws *w, uint64_t *out_s, int32_t *out_i, int64_t *updates)
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

    /* N capped at the item count, batches and sink as rk_topn_cpu's */
    return rk_topn_run_cpu(m, ul, o, 1, "user ", user_topn, st, t_call, err);
}
