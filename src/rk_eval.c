#include "rk_eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Each rating t gets the key hash(seed, t) (splitmix64 finalisers: a
 * counter-based generator, so any thread computes any key); the `want`
 * ratings with the smallest (key, t) are held out: a uniform draw of exactly
 * `want`, the same for every thread count.  The threshold comes from a
 * histogram of the keys' top bits and a sort of the one bin it falls in. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static uint64_t row_key(uint64_t seed_key, int64_t t)
{
    return mix64(seed_key + 0x9E3779B97F4A7C15ULL * (uint64_t)(t + 1));
}

#define RK_HOLD_BITS 16
#define RK_HOLD_BINS (1 << RK_HOLD_BITS)
#define RK_HOLD_BLOCK ((int64_t)1 << 16) /* rows per block of the ordered copy */

typedef struct keyed { uint64_t key; int64_t t; } keyed;

static int keyed_cmp(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->t > y->t) - (x->t < y->t);
}

/* Rows of one block: [b * RK_HOLD_BLOCK, min((b + 1) * RK_HOLD_BLOCK, n)). */
static int64_t block_end(int64_t b, int64_t n)
{
    return (b + 1) * RK_HOLD_BLOCK < n ? (b + 1) * RK_HOLD_BLOCK : n;
}

rk_status rk_eval_holdout(const rk_triples *all, double frac, uint64_t seed,
                          rk_triples *train, rk_triples *test, rk_error *err)
{
    memset(train, 0, sizeof *train);
    memset(test, 0, sizeof *test);
    if (!(frac > 0.0 && frac < 1.0))
        return rk_error_set(err, RK_E_ARG, "the holdout fraction must be in (0, 1), got %g", frac);
    const int64_t n = all->n;
    int64_t want = (int64_t)llround(frac * (double)n);
    if (want >= n) want = n - 1; /* keep at least one training rating */
    if (want < 0) want = 0;
    const uint64_t sk = mix64(seed ^ 0x243F6A8885A308D3ULL);
    const int64_t nblocks = (n + RK_HOLD_BLOCK - 1) / RK_HOLD_BLOCK;
    const int par = n > 65536;
    int64_t *hist = calloc(RK_HOLD_BINS, sizeof *hist);
    int64_t *held = calloc((size_t)nblocks + 1, sizeof *held); /* per block, then prefix sums */
    int64_t *edge_at = calloc((size_t)nblocks + 1, sizeof *edge_at);
    uint8_t *mark = malloc((size_t)(n > 0 ? n : 1)); /* 1 held out, 2 in the threshold's bin */
    keyed *edge = NULL;
    int oom = hist == NULL || held == NULL || edge_at == NULL || mark == NULL;
    rk_status s = RK_OK;
    if (!oom) s = rk_triples_alloc(test, want, all->time != NULL, err);
    if (!oom && s == RK_OK) s = rk_triples_alloc(train, n - want, all->time != NULL, err);
    if (oom || s != RK_OK) goto fail;

    /* 1: a histogram of the keys' top bits gives the bin of the want-th key */
#pragma omp parallel if (par)
    {
        int64_t *h = calloc(RK_HOLD_BINS, sizeof *h);
#pragma omp for schedule(static) nowait
        for (int64_t t = 0; t < n; t++)
            if (h != NULL) h[row_key(sk, t) >> (64 - RK_HOLD_BITS)]++;
#pragma omp critical
        {
            if (h == NULL) oom = 1;
            else for (int b = 0; b < RK_HOLD_BINS; b++) hist[b] += h[b];
        }
        free(h);
    }
    if (oom) goto fail;
    int64_t below = 0;
    int bin = 0;
    while (bin < RK_HOLD_BINS - 1 && below + hist[bin] < want) below += hist[bin++];
    const int64_t take_in_bin = want - below; /* 0 <= take_in_bin <= hist[bin] */

    /* 2: mark the rows below the bin and those in it, counted per block */
#pragma omp parallel for schedule(static) if (par)
    for (int64_t b = 0; b < nblocks; b++) {
        int64_t h = 0, e = 0;
        for (int64_t t = b * RK_HOLD_BLOCK; t < block_end(b, n); t++) {
            int top = (int)(row_key(sk, t) >> (64 - RK_HOLD_BITS));
            mark[t] = top < bin ? 1 : top == bin ? 2 : 0;
            h += top < bin;
            e += top == bin;
        }
        held[b + 1] = h;
        edge_at[b + 1] = e;
    }
    for (int64_t b = 0; b < nblocks; b++) edge_at[b + 1] += edge_at[b];

    /* 3: the bin's rows in (key, t) order; the first take_in_bin are held out */
    edge = malloc((size_t)(edge_at[nblocks] > 0 ? edge_at[nblocks] : 1) * sizeof *edge);
    if (edge == NULL) goto fail;
#pragma omp parallel for schedule(static) if (par)
    for (int64_t b = 0; b < nblocks; b++) {
        int64_t m = edge_at[b];
        for (int64_t t = b * RK_HOLD_BLOCK; t < block_end(b, n); t++)
            if (mark[t] == 2) edge[m++] = (keyed){row_key(sk, t), t};
    }
    qsort(edge, (size_t)edge_at[nblocks], sizeof *edge, keyed_cmp);
    for (int64_t q = 0; q < edge_at[nblocks]; q++) {
        int64_t t = edge[q].t;
        mark[t] = q < take_in_bin;
        held[t / RK_HOLD_BLOCK + 1] += q < take_in_bin;
    }

    /* 4: both copies in order, block by block */
    for (int64_t b = 0; b < nblocks; b++) held[b + 1] += held[b];
#pragma omp parallel for schedule(static) if (par)
    for (int64_t b = 0; b < nblocks; b++) {
        const int64_t t0 = b * RK_HOLD_BLOCK, t1 = block_end(b, n);
        const int64_t te0 = held[b], tr0 = t0 - held[b];
        /* column by column: short loops the compiler keeps in registers */
#define SPLIT_COLUMN(col)                                                  \
        do {                                                               \
            int64_t te = te0, tr = tr0;                                    \
            for (int64_t t = t0; t < t1; t++) {                            \
                if (mark[t]) test->col[te++] = all->col[t];                \
                else train->col[tr++] = all->col[t];                       \
            }                                                              \
        } while (0)
        SPLIT_COLUMN(user);
        SPLIT_COLUMN(item);
        SPLIT_COLUMN(rating);
        if (all->time != NULL) SPLIT_COLUMN(time);
#undef SPLIT_COLUMN
    }
    test->n = held[nblocks];
    train->n = n - held[nblocks];
    free(edge);
    free(mark);
    free(hist);
    free(held);
    free(edge_at);
    return RK_OK;
fail:
    free(edge);
    free(mark);
    free(hist);
    free(held);
    free(edge_at);
    rk_triples_free(test);
    rk_triples_free(train);
    return s != RK_OK ? s : rk_error_set(err, RK_E_NOMEM, "out of memory splitting %lld ratings", (long long)n);
}

void rk_eval_ratings(const rk_model *m, int64_t n, const int32_t *user,
                     const int32_t *item, const float *truth,
                     const double *pred, const int32_t *used,
                     rk_eval_result *out)
{
    double se = 0.0, ae = 0.0;
    int64_t fb = 0, uu = 0, ui = 0;
#pragma omp parallel for reduction(+ : se, ae, fb, uu, ui)
    for (int64_t t = 0; t < n; t++) {
        double d = pred[t] - (double)truth[t];
        se += d * d;
        ae += fabs(d);
        fb += used[t] == 0;
        uu += !rk_model_user_known(m, user[t]);
        ui += !rk_model_item_known(m, item[t]);
    }
    memset(out, 0, sizeof *out);
    out->n = n;
    out->rmse = n > 0 ? sqrt(se / (double)n) : 0.0;
    out->mae = n > 0 ? ae / (double)n : 0.0;
    out->fallbacks = fb;
    out->unknown_users = uu;
    out->unknown_items = ui;
}
