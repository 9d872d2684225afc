/* rk_split_holdout.c — the random holdout (--holdout F, --split ratings)
 * of rk_split.h: whole, or in parts for the data stage, which drops the
 * held-out ratings from a matrix it sorted already. */
#include "rk_split_internal.h"
#include "rk_omp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Each rating t gets the key hash(seed, t) (splitmix64 finalisers: a
 * counter-based generator, so any thread computes any key); the `want`
 * ratings with the smallest (key, t) are held out: a uniform draw of exactly
 * `want`, the same for every thread count.  The threshold comes from a
 * histogram of the keys' top bits and a sort of the one bin it falls in. */
#define RK_HOLD_BITS 16
#define RK_HOLD_BINS (1 << RK_HOLD_BITS)
#define RK_HOLD_BLOCK ((int64_t)1 << 16) /* rows per block of the ordered copy */



/* Rows of one block: [b * RK_HOLD_BLOCK, min((b + 1) * RK_HOLD_BLOCK, n)). */
static int64_t block_end(int64_t b, int64_t n)
{
    return (b + 1) * RK_HOLD_BLOCK < n ? (b + 1) * RK_HOLD_BLOCK : n;
}

/* Both copies in order, block by block: mark[t] sends rating t to test;
 * before[b] ratings of the blocks before b are held out. */
static void split_copy(const rk_triples *all, const uint8_t *mark, const int64_t *before, int64_t nblocks, int par,
                       rk_triples *train, rk_triples *test)
{
    const int64_t n = all->n;
#pragma omp parallel for schedule(static) if (par)
    for (int64_t b = 0; b < nblocks; b++) {
        const int64_t t0 = b * RK_HOLD_BLOCK, t1 = block_end(b, n);
        const int64_t te0 = before[b], tr0 = t0 - before[b];
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
}

rk_status rk_split_holdout(const rk_triples *all, double frac, uint64_t seed,
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
    const uint64_t sk = rk_split_seed_key(seed);
    const int64_t nblocks = (n + RK_HOLD_BLOCK - 1) / RK_HOLD_BLOCK;
    const int par = n > 65536;
    int64_t *hist = calloc(RK_HOLD_BINS, sizeof *hist);
    int64_t *held = calloc((size_t)nblocks + 1, sizeof *held); /* per block, then prefix sums */
    int64_t *edge_at = calloc((size_t)nblocks + 1, sizeof *edge_at);
    uint8_t *mark = malloc((size_t)(n > 0 ? n : 1)); /* 1 held out, 2 in the threshold's bin */
    rk_split_keyed *edge = NULL;
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
            if (h != NULL) h[rk_split_row_key(sk, t) >> (64 - RK_HOLD_BITS)]++;
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
            int top = (int)(rk_split_row_key(sk, t) >> (64 - RK_HOLD_BITS));
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
            if (mark[t] == 2) edge[m++] = (rk_split_keyed){rk_split_row_key(sk, t), t};
    }
    qsort(edge, (size_t)edge_at[nblocks], sizeof *edge, rk_split_keyed_cmp);
    for (int64_t q = 0; q < edge_at[nblocks]; q++) {
        int64_t t = edge[q].t;
        mark[t] = q < take_in_bin;
        held[t / RK_HOLD_BLOCK + 1] += q < take_in_bin;
    }

    /* 4: both copies in order, block by block */
    for (int64_t b = 0; b < nblocks; b++) held[b + 1] += held[b];
    split_copy(all, mark, held, nblocks, par, train, test);
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

/* ---- the same draw, in parts ------------------------------------------------------- */

static inline int held(const rk_split_draw *h, int64_t t)
{
    if (h->want == 0) return 0;
    uint64_t k = rk_split_row_key(h->seed_key, t);
    return k < h->key || (k == h->key && t <= h->t);
}

int rk_split_holdout_held(const rk_split_draw *h, int64_t t)
{
    return t >= 0 && t < h->n && held(h, t);
}

void rk_split_holdout_bits(const rk_split_draw *h, uint64_t *bits)
{
    const int64_t nw = (h->n + 63) / 64;
#pragma omp parallel for schedule(static) if (h->n > 65536)
    for (int64_t w = 0; w < nw; w++) {
        uint64_t x = 0;
        const int64_t t0 = w * 64, t1 = t0 + 64 < h->n ? t0 + 64 : h->n;
        for (int64_t t = t0; t < t1; t++) x |= (uint64_t)held(h, t) << (t - t0);
        bits[w] = x;
    }
}

rk_status rk_split_holdout_plan(int64_t n, double frac, uint64_t seed, rk_split_draw *h, rk_error *err)
{
    return rk_split_holdout_plan_bits(n, frac, seed, h, NULL, err);
}

/* The bits of the rows the second pass could not decide: the first `take`
 * rows of the bin, in (key, t) order. */
static void set_edge_bits(uint64_t *bits, const rk_split_keyed *edge, int64_t take)
{
    for (int64_t q = 0; q < take; q++) bits[edge[q].t >> 6] |= (uint64_t)1 << (edge[q].t & 63);
}

rk_status rk_split_holdout_plan_bits(int64_t n, double frac, uint64_t seed, rk_split_draw *h, uint64_t *bits,
                                     rk_error *err)
{
    memset(h, 0, sizeof *h);
    if (!(frac > 0.0 && frac < 1.0))
        return rk_error_set(err, RK_E_ARG, "the holdout fraction must be in (0, 1), got %g", frac);
    if (n < 0) return rk_error_set(err, RK_E_ARG, "a negative number of ratings");
    int64_t want = (int64_t)llround(frac * (double)n);
    if (want >= n) want = n - 1; /* keep at least one training rating */
    if (want < 0) want = 0;
    h->seed_key = rk_split_seed_key(seed);
    h->n = n;
    h->want = want;
    const int64_t nw = (n + 63) / 64;
    if (want == 0) {
        if (bits != NULL && nw > 0) memset(bits, 0, (size_t)nw * sizeof *bits);
        return RK_OK;
    }

    /* as rk_split_holdout: the bin of the want-th key from a histogram of the
     * top bits, then that bin's rows in (key, t) order.  Both passes share
     * the rows out by 64-row words, so that each thread meets its own rows
     * again and writes whole words of bits: a row of a lower bin is held, a
     * row of a higher one is not, the bin's own are decided after the sort. */
    const uint64_t sk = h->seed_key;
    const int nt = n > 65536 ? rk_omp_max_threads() : 1;
    int64_t *hist = calloc(((size_t)nt + 1) * RK_HOLD_BINS, sizeof *hist); /* per thread, then the sums */
    int64_t *at = calloc((size_t)nt + 1, sizeof *at);
    rk_split_keyed *edge = NULL;
    int bin = 0, oom = hist == NULL || at == NULL;
    int64_t take = 0, nedge = 0;
    if (oom) goto done;
#pragma omp parallel num_threads(nt)
    {
        const int th = rk_omp_thread_num(), T = rk_omp_num_threads();
        int64_t *hh = hist + (size_t)th * RK_HOLD_BINS;
#pragma omp for schedule(static)
        for (int64_t w = 0; w < nw; w++)
            for (int64_t t = w * 64; t < w * 64 + 64 && t < n; t++)
                hh[rk_split_row_key(sk, t) >> (64 - RK_HOLD_BITS)]++;
#pragma omp single
        {
            int64_t below = 0, inbin = 0;
            int64_t *tot = hist + (size_t)T * RK_HOLD_BINS; /* the spare row */
            for (int q = 0; q < T; q++)
                for (int b = 0; b < RK_HOLD_BINS; b++) tot[b] += hist[(size_t)q * RK_HOLD_BINS + (size_t)b];
            while (bin < RK_HOLD_BINS - 1 && below + tot[bin] < want) below += tot[bin++];
            take = want - below; /* 1 <= take <= tot[bin] */
            for (int q = 0; q < T; q++) { /* where each thread's rows of the bin go */
                at[q] = inbin;
                inbin += hist[(size_t)q * RK_HOLD_BINS + (size_t)bin];
            }
            nedge = inbin;
            edge = malloc((size_t)(inbin > 0 ? inbin : 1) * sizeof *edge);
            if (edge == NULL) oom = 1;
        }
        if (!oom) {
            int64_t m = at[th];
#pragma omp for schedule(static)
            for (int64_t w = 0; w < nw; w++) {
                uint64_t x = 0;
                for (int64_t t = w * 64; t < w * 64 + 64 && t < n; t++) {
                    const uint64_t k = rk_split_row_key(sk, t);
                    const int b = (int)(k >> (64 - RK_HOLD_BITS));
                    if (b == bin) edge[m++] = (rk_split_keyed){k, t};
                    x |= (uint64_t)(b < bin) << (t & 63);
                }
                if (bits != NULL) bits[w] = x;
            }
        }
    }
    if (oom) goto done;
    qsort(edge, (size_t)nedge, sizeof *edge, rk_split_keyed_cmp);
    h->key = edge[take - 1].key;
    h->t = edge[take - 1].t;
    if (bits != NULL) set_edge_bits(bits, edge, take);
done:
    free(hist);
    free(at);
    free(edge);
    if (oom) {
        memset(h, 0, sizeof *h);
        return rk_error_set(err, RK_E_NOMEM, "out of memory drawing the holdout of %lld ratings", (long long)n);
    }
    return RK_OK;
}

rk_status rk_split_holdout_apply(const rk_split_draw *h, const rk_triples *all, rk_triples *train, rk_triples *test,
                                rk_error *err)
{
    memset(train, 0, sizeof *train);
    memset(test, 0, sizeof *test);
    if (all->n != h->n)
        return rk_error_set(err, RK_E_ARG, "a holdout of %lld ratings applied to %lld", (long long)h->n,
                            (long long)all->n);
    const int64_t n = all->n, nblocks = (n + RK_HOLD_BLOCK - 1) / RK_HOLD_BLOCK;
    const int par = n > 65536;
    int64_t *at = calloc((size_t)nblocks + 1, sizeof *at); /* held out per block, then prefix sums */
    uint8_t *mark = malloc((size_t)(n > 0 ? n : 1));
    rk_status s = RK_OK;
    if (at == NULL || mark == NULL) s = rk_error_set(err, RK_E_NOMEM, "out of memory splitting %lld ratings", (long long)n);
    if (s == RK_OK) s = rk_triples_alloc(test, h->want, all->time != NULL, err);
    if (s == RK_OK) s = rk_triples_alloc(train, n - h->want, all->time != NULL, err);
    if (s != RK_OK) {
        free(at);
        free(mark);
        rk_triples_free(test);
        rk_triples_free(train);
        return s;
    }
#pragma omp parallel for schedule(static) if (par)
    for (int64_t b = 0; b < nblocks; b++) {
        int64_t c = 0;
        for (int64_t t = b * RK_HOLD_BLOCK; t < block_end(b, n); t++) c += mark[t] = (uint8_t)held(h, t);
        at[b + 1] = c;
    }
    for (int64_t b = 0; b < nblocks; b++) at[b + 1] += at[b];
    split_copy(all, mark, at, nblocks, par, train, test);
    free(at);
    free(mark);
    return RK_OK;
}

/* Dropping the held rows of one column in place, in parallel, in one pass:
 * the rows are cut into T blocks (block b: rows [lo[b], lo[b+1]), R[b]
 * held before it).  Block b's kept rows go to lo[b] - R[b] on, over the
 * last R[b] rows of block b - 1, so those are first saved in tmp at TO[b];
 * then each block packs its kept rows down (reading its own last R[b+1]
 * rows from tmp) and sends its held rows to tcol at R[b] (unless tcol is
 * NULL).  A block writes only rows it has read or the saved tail before it,
 * so this needs R[b] <= lo[b] - lo[b-1].  No new array is faulted in.
 * Typed, so that the packing loop moves values, not memcpy calls; the held
 * rows are bits (the holdout's) or bytes (rk_split_holdout_csr's marks). */
#define HELD_BIT(m, t) ((m)[(t) >> 6] >> ((t) & 63) & 1)
#define HELD_BYTE(m, t) ((m)[t])
#define SPLIT_COLUMN_FN(name, type, mtype, HELD)                                                             \
    static void name(type *col, type *tcol, const mtype *held, const int64_t *lo, const int64_t *R,          \
                     const int64_t *TO, type *tmp, int T)                                                    \
    {                                                                                                        \
        _Pragma("omp parallel num_threads(T)")                                                              \
        {                                                                                                    \
            _Pragma("omp for schedule(static, 1)")                                                          \
            for (int b = 1; b < T; b++) memcpy(tmp + TO[b], col + lo[b] - R[b], (size_t)R[b] * sizeof *col); \
            _Pragma("omp for schedule(static, 1)")                                                          \
            for (int b = 0; b < T; b++) {                                                                    \
                const int64_t cut = b + 1 < T ? lo[b + 1] - R[b + 1] : lo[b + 1];                            \
                const type *saved = b + 1 < T ? tmp + TO[b + 1] : NULL;                                      \
                int64_t d = lo[b] - R[b], te = R[b];                                                         \
                for (int64_t t = lo[b]; t < lo[b + 1]; t++) {                                                \
                    const type v = t < cut ? col[t] : saved[t - cut];                                        \
                    if (!HELD(held, t)) col[d++] = v;                                                        \
                    else if (tcol != NULL) tcol[te++] = v;                                                   \
                }                                                                                            \
            }                                                                                                \
        }                                                                                                    \
    }
SPLIT_COLUMN_FN(split_col32, int32_t, uint64_t, HELD_BIT)
SPLIT_COLUMN_FN(split_colf, float, uint64_t, HELD_BIT)
SPLIT_COLUMN_FN(split_col64, int64_t, uint64_t, HELD_BIT)
SPLIT_COLUMN_FN(drop_col32, int32_t, uint8_t, HELD_BYTE)
SPLIT_COLUMN_FN(drop_colf, float, uint8_t, HELD_BYTE)
#undef SPLIT_COLUMN_FN
#undef HELD_BIT
#undef HELD_BYTE

rk_status rk_split_holdout_apply_inplace(const rk_split_draw *h, const uint64_t *bits, rk_triples *all,
                                        rk_triples *test, rk_error *err)
{
    memset(test, 0, sizeof *test);
    if (all->n != h->n)
        return rk_error_set(err, RK_E_ARG, "a holdout of %lld ratings applied to %lld", (long long)h->n,
                            (long long)all->n);
    const int64_t n = all->n, nw = (n + 63) / 64;
    const int T = n > 65536 ? rk_omp_max_threads() : 1;
    int64_t *lo = malloc(((size_t)T + 1) * sizeof *lo), *R = calloc((size_t)T + 1, sizeof *R);
    int64_t *TO = calloc((size_t)T + 1, sizeof *TO);
    uint64_t *own = bits == NULL ? malloc((size_t)(nw > 0 ? nw : 1) * sizeof *own) : NULL; /* drawn here */
    void *tmp = NULL;
    rk_status st = RK_OK;
    if (lo == NULL || R == NULL || TO == NULL || (bits == NULL && own == NULL)) goto nomem;
    for (int b = 0; b < T; b++) lo[b] = nw * b / T * 64; /* whole words: a word's bits are one block's */
    lo[T] = n;
#pragma omp parallel for schedule(static, 1) num_threads(T)
    for (int b = 0; b < T; b++) {
        int64_t c = 0;
        if (bits != NULL) {
            for (int64_t w = lo[b] / 64; w < (lo[b + 1] + 63) / 64; w++) c += __builtin_popcountll(bits[w]);
        } else {
            for (int64_t t = lo[b]; t < lo[b + 1]; t++) {
                if ((t & 63) == 0) own[t >> 6] = 0;
                const uint64_t x = (uint64_t)held(h, t);
                own[t >> 6] |= x << (t & 63);
                c += (int64_t)x;
            }
        }
        R[b + 1] = c; /* summed below */
    }
    const uint64_t *hb = bits != NULL ? bits : own;
    int in_place = 1;
    for (int b = 0; b < T; b++) {
        R[b + 1] += R[b];
        in_place &= b == 0 || R[b] <= lo[b] - lo[b - 1];
        TO[b + 1] = TO[b] + R[b];
    }
    if (!in_place || R[T] != h->want) { /* too much goes for the scheme: the copy of rk_split_holdout_apply */
        rk_triples train;
        st = rk_split_holdout_apply(h, all, &train, test, err);
        if (st == RK_OK) {
            rk_triples_free(all);
            *all = train;
        }
        goto out;
    }
    const size_t es_max = all->time != NULL ? sizeof *all->time : sizeof *all->user;
    tmp = malloc((size_t)(TO[T] > 0 ? TO[T] : 1) * es_max);
    if (tmp == NULL) goto nomem;
    st = rk_triples_alloc(test, h->want, all->time != NULL, err);
    if (st != RK_OK) goto out;
    split_col32(all->user, test->user, hb, lo, R, TO, tmp, T);
    split_col32(all->item, test->item, hb, lo, R, TO, tmp, T);
    split_colf(all->rating, test->rating, hb, lo, R, TO, tmp, T);
    if (all->time != NULL) split_col64(all->time, test->time, hb, lo, R, TO, tmp, T);
    all->n = n - h->want;
    goto out;
nomem:
    st = rk_error_set(err, RK_E_NOMEM, "out of memory splitting %lld ratings", (long long)n);
out:
    free(lo);
    free(R);
    free(TO);
    free(own);
    free(tmp);
    return st;
}

/* The first row of a whose entries start at or after `want`. */
static int32_t row_at(const rk_csr *a, int64_t want)
{
    int32_t lo = 0, hi = a->n_rows;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (a->ptr[mid] < want) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The held-out entries of a, marked in drop[a->nnz] (zeroed): one binary
 * search in its row for each test rating.  @return the test ratings that
 * are not in a (0 when the matrix and the split agree). */
static int64_t mark_test(const rk_csr *a, const rk_triples *test, uint8_t *drop)
{
    int64_t missing = 0;
#pragma omp parallel for schedule(static) reduction(+ : missing) if (test->n > 65536)
    for (int64_t t = 0; t < test->n; t++) {
        const int64_t p = rk_csr_entry(a, test->user[t], test->item[t]);
        if (p < 0) missing++;
        else drop[p] = 1; /* each pair once: no two threads write one entry */
    }
    return missing;
}

/* The held-out entries dropped in place as SPLIT_COLUMN_FN drops rows, in
 * blocks of whole rows (block b: entries S[b] to S[b+1]); where more were
 * dropped before a block than the block before it holds, into new arrays. */
rk_status rk_split_holdout_csr(rk_csr *a, const rk_triples *test, rk_error *err)
{
    if (test->n == 0 || a->nnz == 0) return RK_OK;
    const int32_t nr = a->n_rows;
    const int T = a->nnz > 65536 ? rk_omp_max_threads() : 1;
    int64_t *ptr = malloc(((size_t)nr + 1) * sizeof *ptr), *cnt = malloc(((size_t)nr + 1) * sizeof *cnt);
    int64_t *S = malloc(((size_t)T + 1) * sizeof *S), *F = calloc((size_t)T + 1, sizeof *F);
    int64_t *R = calloc((size_t)T + 1, sizeof *R), *L = calloc((size_t)T + 1, sizeof *L);
    int64_t *TO = calloc((size_t)T + 1, sizeof *TO);
    int32_t *r0 = malloc(((size_t)T + 1) * sizeof *r0), *idx = NULL;
    uint8_t *drop = calloc((size_t)a->nnz, 1);
    float *val = NULL;
    void *tmp = NULL;
    int in_place = 1;
    rk_status st = RK_OK;
    if (ptr == NULL || cnt == NULL || S == NULL || F == NULL || R == NULL || L == NULL || TO == NULL || r0 == NULL ||
        drop == NULL)
        goto nomem;
    const int64_t missing = mark_test(a, test, drop);
    if (missing > 0) {
        st = rk_error_set(err, RK_E_INTERNAL, "%lld held-out ratings are not in the training matrix",
                          (long long)missing);
        goto out;
    }
    /* blocks of whole rows; the entries kept per row and per block */
    for (int b = 0; b < T; b++) r0[b] = b == 0 ? 0 : row_at(a, a->nnz * b / T);
    r0[T] = nr;
#pragma omp parallel for schedule(static, 1) num_threads(T)
    for (int b = 0; b < T; b++) {
        int64_t kept = 0;
        for (int32_t r = r0[b]; r < r0[b + 1]; r++) {
            int64_t c = 0;
            for (int64_t p = a->ptr[r]; p < a->ptr[r + 1]; p++) c += !drop[p];
            cnt[r] = c;
            kept += c;
        }
        L[b] = kept;
    }
    for (int b = 0; b < T; b++) {
        R[b] = (S[b] = a->ptr[r0[b]]) - F[b]; /* dropped before block b */
        F[b + 1] = F[b] + L[b];
        TO[b + 1] = TO[b] + R[b];
        in_place &= b == 0 || R[b] <= S[b] - S[b - 1];
    }
    S[T] = a->nnz;
    /* the new row offsets */
#pragma omp parallel for schedule(static, 1) num_threads(T)
    for (int b = 0; b < T; b++) {
        int64_t run = F[b];
        for (int32_t r = r0[b]; r < r0[b + 1]; r++) {
            ptr[r] = run;
            run += cnt[r];
        }
    }
    ptr[nr] = F[T];
    if (in_place) in_place = (tmp = malloc((size_t)(TO[T] > 0 ? TO[T] : 1) * sizeof *a->idx)) != NULL;
    if (in_place) {
        drop_col32(a->idx, NULL, drop, S, R, TO, tmp, T);
        drop_colf(a->val, NULL, drop, S, R, TO, tmp, T);
    } else { /* too much goes, or no room for the saved tails: new arrays */
        idx = malloc((size_t)(F[T] > 0 ? F[T] : 1) * sizeof *idx);
        val = malloc((size_t)(F[T] > 0 ? F[T] : 1) * sizeof *val);
        if (idx == NULL || val == NULL) goto nomem;
#pragma omp parallel for schedule(static, 1) num_threads(T)
        for (int b = 0; b < T; b++) {
            int64_t d = F[b];
            for (int64_t p = S[b]; p < S[b + 1]; p++) {
                if (drop[p]) continue;
                idx[d] = a->idx[p];
                val[d] = a->val[p];
                d++;
            }
        }
        free(a->idx);
        free(a->val);
        a->idx = idx;
        a->val = val;
        idx = NULL;
        val = NULL;
    }
    free(a->ptr);
    a->ptr = ptr;
    a->nnz = F[T];
    ptr = NULL;
    goto out;
nomem:
    st = rk_error_set(err, RK_E_NOMEM, "out of memory removing the held-out ratings");
out:
    free(idx);
    free(val);
    free(ptr);
    free(cnt);
    free(S);
    free(F);
    free(R);
    free(L);
    free(TO);
    free(r0);
    free(drop);
    free(tmp);
    return st;
}
