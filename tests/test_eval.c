/* rk_eval: the seeded hold-out split (count, partition, order, determinism)
 * and the rating metrics of SPEC §6 on hand values. */
#include "rk_eval.h"
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
        rk_status s = rk_eval_holdout(&all, tab[k].frac, 42, &train, &test, &err);
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
    CU_ASSERT_EQUAL_FATAL(rk_eval_holdout(&all, 0.25, 7, &train, &test, NULL), RK_OK);
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
    CU_ASSERT_EQUAL_FATAL(rk_eval_holdout(&all, 0.5, 7, &train, &test, NULL), RK_OK);
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
    CU_ASSERT_EQUAL_FATAL(rk_eval_holdout(&all, 0.2, 1, &tr, &te, NULL), RK_OK);
    test_mask(&te, N, m1);
    rk_triples_free(&tr);
    rk_triples_free(&te);
    CU_ASSERT_EQUAL_FATAL(rk_eval_holdout(&all, 0.2, 1, &tr, &te, NULL), RK_OK);
    test_mask(&te, N, m2);
    rk_triples_free(&tr);
    rk_triples_free(&te);
    CU_ASSERT_EQUAL(memcmp(m1, m2, N), 0); /* same seed, same split */
    static const uint64_t seeds[] = {2, 0, 42, 0xFFFFFFFFFFFFFFFFULL, 1ULL << 32};
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        CU_ASSERT_EQUAL_FATAL(rk_eval_holdout(&all, 0.2, seeds[s], &tr, &te, NULL), RK_OK);
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
    CU_ASSERT_EQUAL_FATAL(rk_eval_holdout(&all, 0.37, 5, &a_tr, &a_te, NULL), RK_OK);
    rk_omp_set_threads(3);
    CU_ASSERT_EQUAL_FATAL(rk_eval_holdout(&all, 0.37, 5, &b_tr, &b_te, NULL), RK_OK);
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
        CU_ASSERT_EQUAL_FATAL(rk_eval_holdout(&all, 0.3, 1000 + s, &tr, &te, NULL), RK_OK);
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
        CU_ASSERT_EQUAL(rk_eval_holdout(&all, bad[k], 1, &tr, &te, &err), RK_E_ARG);
        CU_ASSERT_EQUAL(err.status, RK_E_ARG);
        CU_ASSERT(strlen(err.msg) > 0);
        /* nothing is held on failure: freeing must be safe */
        CU_ASSERT_EQUAL(tr.n, 0);
        CU_ASSERT_EQUAL(te.n, 0);
        CU_ASSERT_PTR_NULL(tr.user);
        CU_ASSERT_PTR_NULL(te.user);
        rk_triples_free(&tr);
        rk_triples_free(&te);
        CU_ASSERT_EQUAL(rk_eval_holdout(&all, bad[k], 1, &tr, &te, NULL), RK_E_ARG);
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

int main(void)
{
    static const rk_test_case cases[] = {
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
