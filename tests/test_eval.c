/* rk_eval: the seeded hold-out split (count, partition, order, determinism),
 * the same split in parts (plan, held, apply, and the held-out ratings dropped
 * from a matrix: the data stage's chain against the reference chain) and the
 * rating metrics of CONTRACT.md §6 on hand values. */
#include "rk_eval.h"
#include "rk_split.h"
#include "rk_csr.h"
#include "test_util.h"
#include "rk_omp.h"

#include <math.h>
#include <string.h>

/* n distinct rows: user t, item 7t mod 1009 + 3, rating on the half-star
 * grid, time 1000 + 3t (when with_time). */
static rk_triples make_rows(int64_t n, int with_time)
{
    rk_triples t;
    t.n = n;
    t.user = malloc((size_t)(n > 0 ? n : 1) * sizeof *t.user);
    t.item = malloc((size_t)(n > 0 ? n : 1) * sizeof *t.item);
    t.rating = malloc((size_t)(n > 0 ? n : 1) * sizeof *t.rating);
    t.time = with_time ? malloc((size_t)(n > 0 ? n : 1) * sizeof *t.time) : NULL;
    for (int64_t k = 0; k < n; k++) {
        t.user[k] = (int32_t)k;
        t.item[k] = (int32_t)((7 * k) % 1009 + 3);
        t.rating[k] = 0.5f * (float)(1 + k % 10);
        if (with_time) t.time[k] = 1000 + 3 * k;
    }
    return t;
}

static void free_rows(rk_triples *t)
{
    free(t->user);
    free(t->item);
    free(t->rating);
    free(t->time);
    memset(t, 0, sizeof *t);
}

static int same_row(const rk_triples *a, int64_t p, const rk_triples *b, int64_t q)
{
    if (a->user[p] != b->user[q] || a->item[p] != b->item[q] || a->rating[p] != b->rating[q]) return 0;
    if ((a->time == NULL) != (b->time == NULL)) return 0;
    return a->time == NULL || a->time[p] == b->time[q];
}

/* 1 when train and test, merged in order, are exactly `all`. */
static int is_ordered_partition(const rk_triples *all, const rk_triples *train, const rk_triples *test)
{
    if (train->n + test->n != all->n) return 0;
    int64_t a = 0, b = 0;
    for (int64_t t = 0; t < all->n; t++) {
        if (b < test->n && same_row(test, b, all, t)) b++;
        else if (a < train->n && same_row(train, a, all, t)) a++;
        else return 0;
    }
    return a == train->n && b == test->n;
}

/* round(frac · n) for values clear of .5 (and of n itself) */
static void test_holdout_counts(void)
{
    static const struct { int64_t n; double frac; int64_t want; } tab[] = {
        {1000, 0.2, 200}, {1000, 0.1, 100}, {10, 0.34, 3}, {10, 0.36, 4},  {7, 0.3, 2},
        {7, 0.6, 4},      {3, 0.1, 0},      {3, 0.2, 1},   {100, 0.999e-2, 1}, {100, 0.004, 0},
        {12345, 0.25, 3086}, {2, 0.3, 1},   {50, 0.76, 38}, {9, 0.05, 0},
    };
    /* by hand: 0.34·10 = 3.4 → 3; 0.36·10 = 3.6 → 4; 2.1 → 2; 4.2 → 4; 0.3 → 0;
     * 0.6 → 1; 0.999 → 1; 0.4 → 0; 3086.25 → 3086; 0.6 → 1; 38 → 38; 0.45 → 0
     * (no exact halves: the tie convention is not part of the contract) */
    for (size_t k = 0; k < sizeof tab / sizeof tab[0]; k++) {
        rk_triples all = make_rows(tab[k].n, 0), train, test;
        rk_error err;
        rk_error_clear(&err);
        rk_status s = rk_split_holdout(&all, tab[k].frac, 42, &train, &test, &err);
        CU_ASSERT_EQUAL(s, RK_OK);
        if (s == RK_OK) {
            CU_ASSERT_EQUAL(test.n, tab[k].want);
            CU_ASSERT_EQUAL(train.n, tab[k].n - tab[k].want);
            CU_ASSERT_TRUE(is_ordered_partition(&all, &train, &test));
        }
        rk_triples_free(&train);
        rk_triples_free(&test);
        free_rows(&all);
    }
}

static void test_holdout_partition_with_time(void)
{
    rk_triples all = make_rows(1000, 1), train, test;
    CU_ASSERT_EQUAL_FATAL(rk_split_holdout(&all, 0.25, 7, &train, &test, NULL), RK_OK);
    CU_ASSERT_EQUAL(test.n, 250);
    CU_ASSERT_EQUAL(train.n, 750);
    CU_ASSERT_PTR_NOT_NULL(test.time);
    CU_ASSERT_PTR_NOT_NULL(train.time);
    CU_ASSERT_TRUE(is_ordered_partition(&all, &train, &test));
    /* order preserved: user indices strictly increase in both */
    int inc = 1;
    for (int64_t k = 1; k < test.n; k++) inc &= test.user[k - 1] < test.user[k];
    for (int64_t k = 1; k < train.n; k++) inc &= train.user[k - 1] < train.user[k];
    CU_ASSERT_TRUE(inc);
    /* the input is untouched */
    rk_triples ref = make_rows(1000, 1);
    int same = 1;
    for (int64_t k = 0; k < 1000; k++) same &= same_row(&all, k, &ref, k);
    CU_ASSERT_TRUE(same);
    free_rows(&ref);
    rk_triples_free(&train);
    rk_triples_free(&test);
    free_rows(&all);

    /* without timestamps, none come out */
    all = make_rows(100, 0);
    CU_ASSERT_EQUAL_FATAL(rk_split_holdout(&all, 0.5, 7, &train, &test, NULL), RK_OK);
    CU_ASSERT_PTR_NULL(test.time);
    CU_ASSERT_PTR_NULL(train.time);
    CU_ASSERT_TRUE(is_ordered_partition(&all, &train, &test));
    rk_triples_free(&train);
    rk_triples_free(&test);
    free_rows(&all);
}

/* the set of held-out rows, as a 0/1 mask over `all` (user = row number) */
static void test_mask(const rk_triples *test, int64_t n, unsigned char *mask)
{
    memset(mask, 0, (size_t)n);
    for (int64_t k = 0; k < test->n; k++) mask[test->user[k]] = 1;
}

static void test_holdout_seeds(void)
{
    enum { N = 1000 };
    rk_triples all = make_rows(N, 1);
    unsigned char m1[N], m2[N], m3[N];
    rk_triples tr, te;
    CU_ASSERT_EQUAL_FATAL(rk_split_holdout(&all, 0.2, 1, &tr, &te, NULL), RK_OK);
    test_mask(&te, N, m1);
    rk_triples_free(&tr);
    rk_triples_free(&te);
    CU_ASSERT_EQUAL_FATAL(rk_split_holdout(&all, 0.2, 1, &tr, &te, NULL), RK_OK);
    test_mask(&te, N, m2);
    rk_triples_free(&tr);
    rk_triples_free(&te);
    CU_ASSERT_EQUAL(memcmp(m1, m2, N), 0); /* same seed, same split */
    static const uint64_t seeds[] = {2, 0, 42, 0xFFFFFFFFFFFFFFFFULL, 1ULL << 32};
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        CU_ASSERT_EQUAL_FATAL(rk_split_holdout(&all, 0.2, seeds[s], &tr, &te, NULL), RK_OK);
        CU_ASSERT_EQUAL(te.n, 200);
        test_mask(&te, N, m3);
        CU_ASSERT_NOT_EQUAL(memcmp(m1, m3, N), 0); /* a different seed, a different split */
        rk_triples_free(&tr);
        rk_triples_free(&te);
    }
    free_rows(&all);
}

/* The split does not depend on the number of threads (the rows are many
 * enough for the parallel paths). */
static void test_holdout_threads(void)
{
    enum { N = 300000 };
    rk_triples all = make_rows(N, 0), a_tr, a_te, b_tr, b_te;
    int before = rk_omp_max_threads();
    rk_omp_set_threads(1);
    CU_ASSERT_EQUAL_FATAL(rk_split_holdout(&all, 0.37, 5, &a_tr, &a_te, NULL), RK_OK);
    rk_omp_set_threads(3);
    CU_ASSERT_EQUAL_FATAL(rk_split_holdout(&all, 0.37, 5, &b_tr, &b_te, NULL), RK_OK);
    rk_omp_set_threads(before);
    CU_ASSERT_EQUAL(a_te.n, 111000);
    CU_ASSERT_EQUAL(b_te.n, a_te.n);
    CU_ASSERT_EQUAL(b_tr.n, a_tr.n);
    if (a_te.n == b_te.n) CU_ASSERT_EQUAL(memcmp(a_te.user, b_te.user, sizeof(int32_t) * (size_t)a_te.n), 0);
    CU_ASSERT_TRUE(is_ordered_partition(&all, &a_tr, &a_te));
    rk_triples_free(&a_tr);
    rk_triples_free(&a_te);
    rk_triples_free(&b_tr);
    rk_triples_free(&b_te);
    free_rows(&all);
}

/* Over many seeds, every row is held out about frac of the time (the draw is
 * uniform, not biased to the start or the end). 400 seeds, n = 50, frac 0.3:
 * 120 expected per row, sd ≈ 9.2; the bounds are about 5.4 sd. */
static void test_holdout_uniform(void)
{
    enum { N = 50, SEEDS = 400 };
    rk_triples all = make_rows(N, 0), tr, te;
    int count[N] = {0};
    int first_half = 0, second_half = 0;
    for (uint64_t s = 0; s < SEEDS; s++) {
        CU_ASSERT_EQUAL_FATAL(rk_split_holdout(&all, 0.3, 1000 + s, &tr, &te, NULL), RK_OK);
        for (int64_t k = 0; k < te.n; k++) {
            count[te.user[k]]++;
            if (te.user[k] < N / 2) first_half++;
            else second_half++;
        }
        rk_triples_free(&tr);
        rk_triples_free(&te);
    }
    int lo = 1 << 30, hi = 0;
    for (int k = 0; k < N; k++) {
        if (count[k] < lo) lo = count[k];
        if (count[k] > hi) hi = count[k];
    }
    CU_ASSERT(lo >= 70);
    CU_ASSERT(hi <= 170);
    /* 15 per seed → 6000 in all; halves expected 3000 each; the difference has
     * sd ≈ 65 (hypergeometric per seed), the bound is about 6 sd */
    CU_ASSERT_EQUAL(first_half + second_half, SEEDS * 15);
    CU_ASSERT(abs(first_half - second_half) < 400);
    free_rows(&all);
}

static void test_holdout_bad_frac(void)
{
    rk_triples all = make_rows(10, 0);
    const double bad[] = {0.0, 1.0, -0.5, 1.5, -0.0, NAN, INFINITY, -INFINITY};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        rk_triples tr, te;
        memset(&tr, 0x5A, sizeof tr);
        memset(&te, 0x5A, sizeof te);
        rk_error err;
        rk_error_clear(&err);
        CU_ASSERT_EQUAL(rk_split_holdout(&all, bad[k], 1, &tr, &te, &err), RK_E_ARG);
        CU_ASSERT_EQUAL(err.status, RK_E_ARG);
        CU_ASSERT(strlen(err.msg) > 0);
        /* nothing is held on failure: freeing must be safe */
        CU_ASSERT_EQUAL(tr.n, 0);
        CU_ASSERT_EQUAL(te.n, 0);
        CU_ASSERT_PTR_NULL(tr.user);
        CU_ASSERT_PTR_NULL(te.user);
        rk_triples_free(&tr);
        rk_triples_free(&te);
        CU_ASSERT_EQUAL(rk_split_holdout(&all, bad[k], 1, &tr, &te, NULL), RK_E_ARG);
    }
    free_rows(&all);
}

/* A hand model for the unknown counts: users 0, 1 rated; user 2 in range but
 * without a rating; items 0, 1, 2 rated, item 3 not. */
static int64_t U_ptr[] = {0, 2, 4, 4};
static int64_t I_ptr[] = {0, 1, 3, 4, 4};
static rk_model hand_model(void)
{
    rk_model m;
    memset(&m, 0, sizeof m);
    m.by_user.n_rows = 3;
    m.by_user.n_cols = 4;
    m.by_user.nnz = 4;
    m.by_user.ptr = U_ptr;
    m.by_item.n_rows = 4;
    m.by_item.n_cols = 3;
    m.by_item.nnz = 4;
    m.by_item.ptr = I_ptr;
    m.mu = 3;
    m.rmin = 1;
    m.rmax = 5;
    return m;
}

/* truth (4, 3, 5, 2, 1), pred (3.5, 3, 4, 4, 1.25): errors −0.5, 0, −1, 2, 0.25
 *   SE = 0.25 + 0 + 1 + 4 + 0.0625 = 5.3125 → RMSE = sqrt(5.3125/5) = sqrt(1.0625)
 *   AE = 0.5 + 0 + 1 + 2 + 0.25 = 3.75 → MAE = 0.75
 *   used (2, 0, 1, 0, 0) → 3 fallbacks
 *   users (0, 2, −1, 1, 7): unknown 2, −1, 7 → 3
 *   items (3, 0, 1, 9, 2): unknown 3, 9 → 2 */
static void test_ratings_hand(void)
{
    rk_model m = hand_model();
    const int32_t user[] = {0, 2, -1, 1, 7}, item[] = {3, 0, 1, 9, 2}, used[] = {2, 0, 1, 0, 0};
    const float truth[] = {4, 3, 5, 2, 1};
    const double pred[] = {3.5, 3, 4, 4, 1.25};
    rk_eval_result r;
    memset(&r, 0x77, sizeof r);
    rk_eval_ratings(&m, 5, user, item, truth, pred, used, &r);
    CU_ASSERT_EQUAL(r.n, 5);
    CU_ASSERT_DOUBLE_EQUAL(r.rmse, sqrt(1.0625), 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(r.rmse, 1.0307764064044151, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(r.mae, 0.75, 1e-15);
    CU_ASSERT_EQUAL(r.fallbacks, 3);
    CU_ASSERT_EQUAL(r.unknown_users, 3);
    CU_ASSERT_EQUAL(r.unknown_items, 2);
}

/* Perfect predictions: 0 error; no pairs: zeros, never NaN. */
static void test_ratings_edges(void)
{
    rk_model m = hand_model();
    const int32_t user[] = {0, 1}, item[] = {0, 2}, used[] = {3, 1};
    const float truth[] = {4.5f, 2};
    const double pred[] = {4.5, 2};
    rk_eval_result r;
    rk_eval_ratings(&m, 2, user, item, truth, pred, used, &r);
    CU_ASSERT_EQUAL(r.n, 2);
    CU_ASSERT_EQUAL(r.rmse, 0.0);
    CU_ASSERT_EQUAL(r.mae, 0.0);
    CU_ASSERT_EQUAL(r.fallbacks, 0);
    CU_ASSERT_EQUAL(r.unknown_users, 0);
    CU_ASSERT_EQUAL(r.unknown_items, 0);

    memset(&r, 0x77, sizeof r);
    rk_eval_ratings(&m, 0, user, item, truth, pred, used, &r);
    CU_ASSERT_EQUAL(r.n, 0);
    CU_ASSERT_EQUAL(r.rmse, 0.0);
    CU_ASSERT_EQUAL(r.mae, 0.0);
    CU_ASSERT_EQUAL(r.fallbacks, 0);
    CU_ASSERT_EQUAL(r.unknown_users, 0);
    CU_ASSERT_EQUAL(r.unknown_items, 0);
}

/* Many pairs (the OpenMP reduction), against a plain loop written here. */
static void test_ratings_many(void)
{
    enum { N = 100000 };
    rk_model m = hand_model();
    int32_t *user = malloc(N * sizeof *user), *item = malloc(N * sizeof *item), *used = malloc(N * sizeof *used);
    float *truth = malloc(N * sizeof *truth);
    double *pred = malloc(N * sizeof *pred);
    unsigned long long st = 8;
    double se = 0, ae = 0;
    int64_t fb = 0, uu = 0, ui = 0;
    for (int k = 0; k < N; k++) {
        user[k] = (int32_t)(rk_test_rand(&st) % 5) - 1; /* −1 .. 3: known 0, 1 */
        item[k] = (int32_t)(rk_test_rand(&st) % 6) - 1; /* −1 .. 4: known 0, 1, 2 */
        used[k] = (int32_t)(rk_test_rand(&st) % 3);
        truth[k] = 0.5f * (float)(1 + rk_test_rand(&st) % 10);
        pred[k] = 1 + 4 * rk_test_uniform(&st);
        double d = pred[k] - truth[k];
        se += d * d;
        ae += fabs(d);
        fb += used[k] == 0;
        uu += !(user[k] == 0 || user[k] == 1);
        ui += !(item[k] >= 0 && item[k] <= 2);
    }
    rk_eval_result r;
    rk_eval_ratings(&m, N, user, item, truth, pred, used, &r);
    CU_ASSERT_EQUAL(r.n, N);
    CU_ASSERT_DOUBLE_EQUAL(r.rmse, sqrt(se / N), 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(r.mae, ae / N, 1e-12);
    CU_ASSERT_EQUAL(r.fallbacks, fb);
    CU_ASSERT_EQUAL(r.unknown_users, uu);
    CU_ASSERT_EQUAL(r.unknown_items, ui);
    free(user); free(item); free(used); free(truth); free(pred);
}

/* ---- the holdout in parts, and the data stage's chain against the reference ---- */

static int triples_same(const rk_triples *a, const rk_triples *b)
{
    if (a->n != b->n) return 0;
    for (int64_t k = 0; k < a->n; k++)
        if (!same_row(a, k, b, k)) return 0;
    return 1;
}

/* A copy of a's rows (times too). */
static rk_triples dup_copy(const rk_triples *a)
{
    rk_triples t;
    CU_ASSERT_EQUAL_FATAL(rk_triples_alloc(&t, a->n, a->time != NULL, NULL), RK_OK);
    memcpy(t.user, a->user, (size_t)a->n * sizeof *t.user);
    memcpy(t.item, a->item, (size_t)a->n * sizeof *t.item);
    memcpy(t.rating, a->rating, (size_t)a->n * sizeof *t.rating);
    if (a->time != NULL) memcpy(t.time, a->time, (size_t)a->n * sizeof *t.time);
    return t;
}

/* rk_split_holdout_apply_inplace on a copy of all, with 1, 3 and 8 threads,
 * drawing again and reading the draw's bits: the parts of the copying apply
 * (tr, te).  rk_split_holdout_plan_bits on each thread count writes the bits
 * of rk_split_holdout_bits and makes the same draw. */
static void inplace_same(const rk_split_draw *h, const rk_triples *all, const rk_triples *tr, const rk_triples *te,
                         double frac, uint64_t seed)
{
    const int before = rk_omp_max_threads();
    const size_t nw = (size_t)(all->n + 63) / 64 + 1;
    uint64_t *want = calloc(nw, sizeof *want), *bits = malloc(nw * sizeof *bits);
    rk_split_holdout_bits(h, want);
    for (int nt = 1; nt <= 8; nt += nt < 3 ? 2 : 5) {
        rk_omp_set_threads(nt);
        rk_split_draw h2;
        memset(bits, 0xA5, nw * sizeof *bits);
        bits[nw - 1] = 0;
        CU_ASSERT_EQUAL_FATAL(rk_split_holdout_plan_bits(all->n, frac, seed, &h2, bits, NULL), RK_OK);
        CU_ASSERT_EQUAL(memcmp(bits, want, nw * sizeof *bits), 0);
        CU_ASSERT_EQUAL(h2.key, h->key);
        CU_ASSERT_EQUAL(h2.t, h->t);
        CU_ASSERT_EQUAL(h2.want, h->want);
        for (int with_bits = 0; with_bits < 2; with_bits++) {
            rk_triples c = dup_copy(all), t;
            CU_ASSERT_EQUAL_FATAL(rk_split_holdout_apply_inplace(h, with_bits ? bits : NULL, &c, &t, NULL), RK_OK);
            CU_ASSERT_TRUE(triples_same(&c, tr));
            CU_ASSERT_TRUE(triples_same(&t, te));
            rk_triples_free(&c);
            rk_triples_free(&t);
        }
    }
    rk_omp_set_threads(before);
    free(want);
    free(bits);
}

/* plan + apply make rk_split_holdout's split; held() names exactly its test rows */
static void test_holdout_parts(void)
{
    static const struct { int64_t n; double frac; uint64_t seed; } tab[] = {
        {0, 0.3, 1}, {1, 0.5, 2}, {2, 0.3, 3}, {10, 0.34, 4}, {1000, 0.2, 5}, {1000, 0.999, 6},
        {5000, 0.001, 7}, {300000, 0.02, 1}, {300000, 0.37, 8}, {70000, 0.5, 0xFFFFFFFFFFFFFFFFULL},
    };
    for (size_t q = 0; q < sizeof tab / sizeof tab[0]; q++) {
        rk_triples all = make_rows(tab[q].n, q % 2), tr, te, tr2, te2;
        rk_split_draw h;
        CU_ASSERT_EQUAL_FATAL(rk_split_holdout(&all, tab[q].frac, tab[q].seed, &tr, &te, NULL), RK_OK);
        CU_ASSERT_EQUAL_FATAL(rk_split_holdout_plan(all.n, tab[q].frac, tab[q].seed, &h, NULL), RK_OK);
        CU_ASSERT_EQUAL(h.want, te.n);
        CU_ASSERT_EQUAL_FATAL(rk_split_holdout_apply(&h, &all, &tr2, &te2, NULL), RK_OK);
        CU_ASSERT_TRUE(triples_same(&tr, &tr2));
        CU_ASSERT_TRUE(triples_same(&te, &te2));
        inplace_same(&h, &all, &tr, &te, tab[q].frac, tab[q].seed);
        int64_t held = 0, agree = 1;
        for (int64_t k = 0, j = 0; k < all.n; k++) { /* row k is test row j when held */
            int hk = rk_split_holdout_held(&h, k);
            held += hk;
            if (hk) agree &= j < te.n && same_row(&all, k, &te, j++);
        }
        CU_ASSERT_EQUAL(held, te.n);
        CU_ASSERT_TRUE(agree);
        CU_ASSERT_EQUAL(rk_split_holdout_held(&h, -1), 0);
        CU_ASSERT_EQUAL(rk_split_holdout_held(&h, all.n), 0);
        rk_triples_free(&tr);
        rk_triples_free(&te);
        rk_triples_free(&tr2);
        rk_triples_free(&te2);
        free_rows(&all);
    }
    rk_split_draw h;
    rk_triples all = make_rows(10, 0), tr, te;
    CU_ASSERT_EQUAL(rk_split_holdout_plan(10, 1.0, 1, &h, NULL), RK_E_ARG);
    CU_ASSERT_EQUAL(rk_split_holdout_plan(-1, 0.5, 1, &h, NULL), RK_E_ARG);
    CU_ASSERT_EQUAL_FATAL(rk_split_holdout_plan(11, 0.5, 1, &h, NULL), RK_OK);
    CU_ASSERT_EQUAL(rk_split_holdout_apply(&h, &all, &tr, &te, NULL), RK_E_ARG); /* 10 ratings, not 11 */
    CU_ASSERT_PTR_NULL(tr.user);
    CU_ASSERT_EQUAL(rk_split_holdout_apply_inplace(&h, NULL, &all, &te, NULL), RK_E_ARG);
    CU_ASSERT_EQUAL(all.n, 10);
    free_rows(&all);
}

/* ratings with many duplicates, in random order, over users and items with gaps */
static rk_triples dup_rows(int32_t nu, int32_t ni, int64_t n, int64_t pairs, unsigned long long seed)
{
    rk_triples t;
    CU_ASSERT_EQUAL_FATAL(rk_triples_alloc(&t, n, 1, NULL), RK_OK);
    int32_t *pu = malloc((size_t)pairs * sizeof *pu), *pi = malloc((size_t)pairs * sizeof *pi);
    for (int64_t q = 0; q < pairs; q++) {
        pu[q] = (int32_t)(rk_test_rand(&seed) % (unsigned)(nu / 2)) * 2;
        pi[q] = (int32_t)(rk_test_rand(&seed) % (unsigned)(ni / 3)) * 3;
    }
    for (int64_t k = 0; k < n; k++) {
        int64_t q = (int64_t)(rk_test_rand(&seed) % (unsigned long long)pairs);
        t.user[k] = pu[q];
        t.item[k] = pi[q];
        t.rating[k] = (float)(rk_test_uniform(&seed) * 4 + 1);
        t.time[k] = k;
    }
    free(pu);
    free(pi);
    return t;
}

static int csr_same(const rk_csr *a, const rk_csr *b)
{
    if (a->n_rows != b->n_rows || a->n_cols != b->n_cols || a->nnz != b->nnz) return 0;
    return memcmp(a->ptr, b->ptr, ((size_t)a->n_rows + 1) * sizeof *a->ptr) == 0 &&
           memcmp(a->idx, b->idx, (size_t)a->nnz * sizeof *a->idx) == 0 &&
           memcmp(a->val, b->val, (size_t)a->nnz * sizeof *a->val) == 0;
}

/* The data stage's chain — one sort (duplicates and the matrix), the draw,
 * the split of the triples, the held-out entries dropped from the matrix,
 * the model from it — against the reference chain: rk_triples_dedupe,
 * rk_split_holdout, rk_model_build (rk_csr_build, rk_csr_transpose). */
static void chain_case(int32_t nu, int32_t ni, int64_t n, int64_t pairs, double frac, unsigned long long seed)
{
    for (int pol = RK_DUP_LAST; pol <= RK_DUP_MEAN; pol++) {
        rk_triples a = dup_rows(nu, ni, n, pairs, seed), b = dup_rows(nu, ni, n, pairs, seed);
        rk_triples rtr, rte, ntr, nte;
        rk_model rm, nm;
        rk_csr by_user;
        rk_split_draw h;
        CU_ASSERT_EQUAL_FATAL(rk_triples_dedupe(&a, nu, ni, (rk_dup_policy)pol, NULL, NULL), RK_OK);
        CU_ASSERT_EQUAL_FATAL(rk_triples_dedupe_csr(&b, nu, ni, (rk_dup_policy)pol, NULL, &by_user, NULL, NULL, NULL),
                              RK_OK);
        if (frac > 0) {
            CU_ASSERT_EQUAL_FATAL(rk_split_holdout(&a, frac, seed, &rtr, &rte, NULL), RK_OK);
            CU_ASSERT_EQUAL_FATAL(rk_split_holdout_plan(b.n, frac, seed, &h, NULL), RK_OK);
            CU_ASSERT_EQUAL_FATAL(rk_split_holdout_apply(&h, &b, &ntr, &nte, NULL), RK_OK);
            inplace_same(&h, &b, &ntr, &nte, frac, seed); /* in place: the same two parts */
            CU_ASSERT_EQUAL_FATAL(rk_split_holdout_csr(&by_user, &nte, NULL), RK_OK);
            CU_ASSERT(rte.n > 0 || a.n == 1); /* one rating left: it stays for training */
        } else {
            rtr = a, ntr = b;
            memset(&rte, 0, sizeof rte);
            memset(&nte, 0, sizeof nte);
        }
        CU_ASSERT_TRUE(triples_same(&rtr, &ntr));
        CU_ASSERT_TRUE(triples_same(&rte, &nte));
        CU_ASSERT_EQUAL_FATAL(rk_model_build(&rm, &rtr, nu, ni, 0, 0, 0, 1, NULL), RK_OK);
        CU_ASSERT_EQUAL_FATAL(rk_model_from_csr(&nm, &by_user, 0, 0, 0, 1, NULL), RK_OK);
        CU_ASSERT_PTR_NULL(by_user.ptr); /* the model has it now */
        CU_ASSERT_TRUE(csr_same(&rm.by_user, &nm.by_user));
        CU_ASSERT_TRUE(csr_same(&rm.by_item, &nm.by_item));
        CU_ASSERT_EQUAL(rm.mu, nm.mu);
        CU_ASSERT_EQUAL(rm.rmin, nm.rmin);
        CU_ASSERT_EQUAL(rm.rmax, nm.rmax);
        CU_ASSERT_EQUAL(memcmp(rm.item_mean, nm.item_mean, (size_t)ni * sizeof *rm.item_mean), 0);
        CU_ASSERT_EQUAL(memcmp(rm.bi, nm.bi, (size_t)ni * sizeof *rm.bi), 0);
        CU_ASSERT_EQUAL(memcmp(rm.bu, nm.bu, (size_t)nu * sizeof *rm.bu), 0);
        rk_model_free(&rm);
        rk_model_free(&nm);
        if (frac > 0) {
            rk_triples_free(&rtr);
            rk_triples_free(&rte);
            rk_triples_free(&ntr);
            rk_triples_free(&nte);
        }
        rk_triples_free(&a);
        rk_triples_free(&b);
    }
}

static void test_chain_vs_reference(void)
{
    chain_case(40, 30, 500, 150, 0.2, 1);
    chain_case(40, 30, 500, 150, 0.0, 2);
    chain_case(400, 900, 20000, 9000, 0.02, 3);
    chain_case(3000, 2000, 200000, 120000, 0.1, 4); /* parallel paths */
    chain_case(3000, 2000, 200000, 120000, 0.0, 5);
    chain_case(2, 3, 60, 6, 0.5, 6); /* one user, one item: one rating, none held out */
    /* the held-out entries leave the matrix in place (a few) or by a copy
     * (many), in one block or several */
    int before = rk_omp_max_threads();
    for (int nt = 1; nt <= 7; nt += 3) {
        rk_omp_set_threads(nt);
        chain_case(3000, 2000, 150000, 100000, 0.02, 10 + (unsigned long long)nt);
        chain_case(3000, 2000, 150000, 100000, 0.7, 20 + (unsigned long long)nt);
    }
    rk_omp_set_threads(before);
    /* a held-out rating that is not in the matrix: an internal error, the matrix unchanged */
    rk_triples t = dup_rows(30, 20, 300, 200, 7), test;
    rk_csr a;
    rk_error e;
    CU_ASSERT_EQUAL_FATAL(rk_triples_dedupe_csr(&t, 30, 20, RK_DUP_LAST, NULL, &a, NULL, NULL, NULL), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_triples_alloc(&test, 2, 0, &e), RK_OK);
    test.user[0] = t.user[0]; /* in the matrix */
    test.item[0] = t.item[0];
    int32_t u = 0, i = 0;
    while (u < 30 && a.ptr[u + 1] - a.ptr[u] == 20) u++; /* a user who did not rate every item */
    CU_ASSERT_FATAL(u < 30);
    for (int64_t p = a.ptr[u]; p < a.ptr[u + 1] && a.idx[p] == i; p++) i++;
    test.user[1] = u;
    test.item[1] = i;
    const int64_t nnz = a.nnz;
    CU_ASSERT_EQUAL(rk_split_holdout_csr(&a, &test, &e), RK_E_INTERNAL);
    CU_ASSERT(strstr(e.msg, "1 held-out") != NULL);
    CU_ASSERT_EQUAL(a.nnz, nnz);
    test.n = 1; /* the one that is there goes */
    CU_ASSERT_EQUAL(rk_split_holdout_csr(&a, &test, &e), RK_OK);
    CU_ASSERT_EQUAL(a.nnz, nnz - 1);
    rk_triples_free(&test);
    rk_triples_free(&t);
    rk_csr_free(&a);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"holdout in parts: plan, held, apply as rk_split_holdout", test_holdout_parts},
        {"data chain: one sort, split, filter, model = reference", test_chain_vs_reference},
        {"holdout: count round(frac*n), partition", test_holdout_counts},
        {"holdout: order and timestamps preserved", test_holdout_partition_with_time},
        {"holdout: same seed same split, other seeds differ", test_holdout_seeds},
        {"holdout: uniform over rows", test_holdout_uniform},
        {"holdout: the same split for any thread count", test_holdout_threads},
        {"holdout: frac outside (0, 1) is RK_E_ARG", test_holdout_bad_frac},
        {"ratings: RMSE, MAE, fallbacks, unknowns by hand", test_ratings_hand},
        {"ratings: perfect and empty", test_ratings_edges},
        {"ratings: many pairs against a plain loop", test_ratings_many},
        {NULL, NULL},
    };
    return rk_test_main("rk_eval", cases);
}
