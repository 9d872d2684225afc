/* The most-popular baseline (rk_popular.h): one order of the items by
 * training rating count, then per user a walk down it that skips the user's
 * rated items (marked in a per-thread bitmap).  Batches and threads as in
 * the CPU top-N engine. */
#include "rk_popular.h"
#include "rk_topn_internal.h"
#include "rk_omp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pop_item {
    int64_t count;
    int32_t item;
} pop_item;

static int pop_cmp(const void *a, const void *b)
{
    const pop_item *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return (x->item > y->item) - (x->item < y->item);
}

/* The list of user u into out_i/out_s; @return its length.  bits (n_items
 * bits) is all zero on entry and on return. */
static int32_t user_popular(const rk_csr *U, const int32_t *order, const uint64_t *score, int32_t n_pop, int32_t n,
                            int32_t u, uint64_t *bits, int32_t *out_i, uint64_t *out_s)
{
    const int64_t b = U->ptr[u], e = U->ptr[u + 1];
    for (int64_t p = b; p < e; p++) bits[U->idx[p] >> 6] |= (uint64_t)1 << (U->idx[p] & 63);
    int32_t len = 0;
    for (int32_t r = 0; r < n_pop && len < n; r++) {
        const int32_t i = order[r];
        if (bits[i >> 6] >> (i & 63) & 1) continue;
        out_i[len] = i;
        out_s[len] = score[r];
        len++;
    }
    for (int64_t p = b; p < e; p++) bits[U->idx[p] >> 6] = 0;
    return len;
}

rk_status rk_popular_topn(const rk_model *m, const rk_topn_opts *o, rk_topn_stats *st, rk_error *err)
{
    rk_topn_stats local;
    const double t_call = rk_omp_wtime();
    if (st == NULL) st = &local;
    memset(st, 0, sizeof *st);
    snprintf(st->path, sizeof st->path, "popular");
    if (m == NULL) return rk_error_set(err, RK_E_ARG, "the popularity baseline needs a model");
    RK_FORWARD(rk_topn_check(m, NULL, o, err));

    const rk_csr *U = &m->by_user, *I = &m->by_item;
    const int32_t n_items = I->n_rows, n = o->n;
    const size_t words = ((size_t)(n_items > 0 ? n_items : 1) + 63) / 64;
    const int nthr = o->threads > 0 ? o->threads : rk_omp_max_threads();
    int32_t *all = NULL, *order = NULL, *b_len = NULL, *b_item = NULL;
    uint64_t *score = NULL, *bits = NULL, *b_score = NULL;
    pop_item *pop = NULL;
    const int32_t *users;
    int64_t n_users;
    int32_t n_pop = 0;
    int64_t rows = 0;
    double compute = 0.0, sink = 0.0;
    rk_status s = RK_OK;

    RK_FORWARD(rk_topn_request(m, o, &all, &users, &n_users, err));
    const int64_t batch = rk_topn_batch_users(o, n, n_users);

    pop = malloc((size_t)(n_items > 0 ? n_items : 1) * sizeof *pop);
    order = malloc((size_t)(n_items > 0 ? n_items : 1) * sizeof *order);
    score = malloc((size_t)(n_items > 0 ? n_items : 1) * sizeof *score);
    bits = calloc((size_t)nthr * words, sizeof *bits);
    b_len = malloc((size_t)batch * sizeof *b_len);
    b_item = malloc((size_t)batch * (size_t)n * sizeof *b_item);
    b_score = malloc((size_t)batch * (size_t)n * sizeof *b_score);
    if (pop == NULL || order == NULL || score == NULL || bits == NULL || b_len == NULL || b_item == NULL ||
        b_score == NULL) {
        s = rk_error_set(err, RK_E_NOMEM, "out of memory for the popularity baseline (%d items, %lld users a batch)",
                         n_items, (long long)batch);
        goto done;
    }
    /* the popular order: items with a training rating, count desc, index asc */
    const double t_order = rk_omp_wtime();
    for (int32_t i = 0; i < n_items; i++) {
        const int64_t c = I->ptr[i + 1] - I->ptr[i];
        if (c > 0) pop[n_pop++] = (pop_item){c, i};
    }
    qsort(pop, (size_t)n_pop, sizeof *pop, pop_cmp);
    for (int32_t r = 0; r < n_pop; r++) {
        order[r] = pop[r].item;
        score[r] = (uint64_t)pop[r].count << RK_TOPN_FRAC_BITS; /* count < 2^31: no overflow */
    }
    compute = rk_omp_wtime() - t_order;

    RK_PROGRESS(o->progress, o->progress_ud, "baseline", 0, n_users, "users");
    for (int64_t first = 0; first < n_users && s == RK_OK; first += batch) {
        const int64_t count = n_users - first < batch ? n_users - first : batch;
        const double t0 = rk_omp_wtime();
#pragma omp parallel num_threads(nthr) reduction(+ : rows)
        {
            uint64_t *mine = bits + (size_t)rk_omp_thread_num() * words;
#pragma omp for schedule(dynamic, 64)
            for (int64_t b = 0; b < count; b++) {
                const int32_t len = user_popular(U, order, score, n_pop, n, users[first + b], mine,
                                                 b_item + b * n, b_score + b * n);
                b_len[b] = len;
                rows += len;
            }
        }
        const double t1 = rk_omp_wtime();
        compute += t1 - t0;
        rk_topn_batch bt = {first, count, users + first, n, b_len, b_item, b_score};
        s = o->sink(o->sink_ud, &bt, err);
        sink += rk_omp_wtime() - t1;
        if (s == RK_OK && RK_PROGRESS_STOPS(o->progress, o->progress_ud, "baseline", first + count, n_users, "users"))
            s = rk_error_set(err, RK_E_CANCELLED, RK_STOPPED_MSG, "baseline");
    }
    st->compute_s = compute;
    st->sink_s = sink;
    st->users = n_users;
    st->rows = rows;
    snprintf(st->detail, sizeof st->detail, "%d of %d items have training ratings", n_pop, n_items);
done:
    free(all);
    free(pop);
    free(order);
    free(score);
    free(bits);
    free(b_len);
    free(b_item);
    free(b_score);
    st->wall_s = rk_omp_wtime() - t_call;
    return s;
}
