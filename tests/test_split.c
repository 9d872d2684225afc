/* rk_split: K-fold (partition, sizes, the seeded order dealt in blocks, the
 * same draw as rk_eval's holdout, determinism, thread count), the per-user
 * and temporal splits (counts per user against t_u computed here, which
 * ratings go to test, ties, edge cases, errors) and rk_split_apply (ordered,
 * complementary parts). */
#include "rk_split.h"
#include "rk_eval.h"
#include "rk_omp.h"
#include "test_util.h"

#include <math.h>
#include <string.h>

/* The key the header documents: splitmix64 of the seed and the position,
 * written out here from the construction (finaliser of the seed, then of
 * seed_key + golden · (t + 1)). */
static uint64_t fin(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static uint64_t key(uint64_t seed, int64_t t)
{
    return fin(fin(seed ^ 0x243F6A8885A308D3ULL) + 0x9E3779B97F4A7C15ULL * (uint64_t)(t + 1));
}

/* (a, ta) < (b, tb) */
static int before(uint64_t a, int64_t ta, uint64_t b, int64_t tb)
{
    return a < b || (a == b && ta < tb);
}

/* n ratings with random users in [0, n_users) (times in [0, n_times) when
 * n_times > 0: many ties), items and ratings from the same generator. */
static rk_triples make_random(int64_t n, int32_t n_users, int64_t n_times, unsigned long long seed)
{
    rk_triples r;
    CU_ASSERT_FATAL(rk_triples_alloc(&r, n, n_times > 0, NULL) == RK_OK);
    for (int64_t t = 0; t < n; t++) {
        r.user[t] = (int32_t)(rk_test_rand(&seed) % (unsigned long long)n_users);
        r.item[t] = (int32_t)(rk_test_rand(&seed) % 1000);
        r.rating[t] = 0.5f * (float)(1 + rk_test_rand(&seed) % 10);
        if (n_times > 0) r.time[t] = (int64_t)(rk_test_rand(&seed) % (unsigned long long)n_times) - n_times / 2;
    }
    return r;
}

/* The test shape: 500 users, 20000 ratings over users 0..479, then users
 * 490..499 with one rating each and user 489 with two (480..488 none). */
static rk_triples make_users(int with_time, unsigned long long seed)
{
    rk_triples r = make_random(20012, 480, with_time ? 40 : 0, seed);
    for (int64_t t = 20000; t < 20012; t++) r.user[t] = t < 20010 ? (int32_t)(490 + (t - 20000)) : 489;
    return r;
}

static int32_t *new_parts(int64_t n)
{
    int32_t *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
    CU_ASSERT_FATAL(p != NULL);
    for (int64_t t = 0; t < n; t++) p[t] = -7; /* every entry must be written */
    return p;
}

/* 1 when test holds the ratings with part == which and train the others, both
 * in the order of all (positions compared field by field). */
static int apply_ok(const rk_triples *all, const int32_t *part, int32_t which, const rk_triples *train,
                    const rk_triples *test)
{
    int64_t a = 0, b = 0;
    if ((train->time == NULL) != (all->time == NULL) || (test->time == NULL) != (all->time == NULL)) return 0;
    for (int64_t t = 0; t < all->n; t++) {
        const rk_triples *d = part[t] == which ? test : train;
        int64_t i = part[t] == which ? b++ : a++;
        if (i >= d->n) return 0;
        if (d->user[i] != all->user[t] || d->item[i] != all->item[t] || d->rating[i] != all->rating[t]) return 0;
        if (all->time != NULL && d->time[i] != all->time[t]) return 0;
    }
    return a == train->n && b == test->n;
}

static void test_kind_names(void)
{
    rk_split_kind k = RK_SPLIT_USER;
    CU_ASSERT_EQUAL(rk_split_kind_parse("ratings", &k), RK_OK);
    CU_ASSERT_EQUAL(k, RK_SPLIT_RATINGS);
    CU_ASSERT_EQUAL(rk_split_kind_parse("user", &k), RK_OK);
    CU_ASSERT_EQUAL(k, RK_SPLIT_USER);
    CU_ASSERT_EQUAL(rk_split_kind_parse("temporal", &k), RK_OK);
    CU_ASSERT_EQUAL(k, RK_SPLIT_TEMPORAL);
    CU_ASSERT_EQUAL(rk_split_kind_parse("users", &k), RK_OK);
    CU_ASSERT_EQUAL(k, RK_SPLIT_USERS_OUT);
    CU_ASSERT_EQUAL(rk_split_kind_parse("items", &k), RK_E_ARG);
    k = RK_SPLIT_TEMPORAL;
    CU_ASSERT_EQUAL(rk_split_kind_parse("", &k), RK_E_ARG);
    CU_ASSERT_EQUAL(rk_split_kind_parse(NULL, &k), RK_E_ARG);
    CU_ASSERT_EQUAL(k, RK_SPLIT_TEMPORAL); /* untouched on failure */
    CU_ASSERT_STRING_EQUAL(rk_split_kind_name(RK_SPLIT_RATINGS), "ratings");
    CU_ASSERT_STRING_EQUAL(rk_split_kind_name(RK_SPLIT_USER), "user");
    CU_ASSERT_STRING_EQUAL(rk_split_kind_name(RK_SPLIT_TEMPORAL), "temporal");
    CU_ASSERT_STRING_EQUAL(rk_split_kind_name((rk_split_kind)9), "unknown");
}

/* Sizes n/k or n/k + 1, larger first; each fold a block of the (key, t)
 * order: every rating of fold f comes before every rating of fold f + 1. */
static void check_folds(int64_t n, int32_t k, uint64_t seed)
{
    int32_t *fold = new_parts(n);
    rk_error err;
    CU_ASSERT_EQUAL_FATAL(rk_split_folds(n, k, seed, fold, &err), RK_OK);
    int64_t *size = calloc((size_t)k, sizeof *size);
    uint64_t *lo = malloc((size_t)k * sizeof *lo), *hi = malloc((size_t)k * sizeof *hi);
    int64_t *lot = malloc((size_t)k * sizeof *lot), *hit = malloc((size_t)k * sizeof *hit);
    int ranged = 1;
    for (int64_t t = 0; t < n; t++) {
        int32_t f = fold[t];
        if (f < 0 || f >= k) { ranged = 0; continue; }
        uint64_t c = key(seed, t);
        if (size[f] == 0 || before(c, t, lo[f], lot[f])) lo[f] = c, lot[f] = t;
        if (size[f] == 0 || before(hi[f], hit[f], c, t)) hi[f] = c, hit[f] = t;
        size[f]++;
    }
    CU_ASSERT(ranged);
    for (int32_t f = 0; f < k; f++) CU_ASSERT_EQUAL(size[f], n / k + (f < n % k));
    for (int32_t f = 0; f + 1 < k; f++) CU_ASSERT(before(hi[f], hit[f], lo[f + 1], lot[f + 1]));
    free(size), free(lo), free(hi), free(lot), free(hit), free(fold);
}

static void test_folds_partition(void)
{
    check_folds(20003, 7, 42);
    check_folds(20000, 5, 1);
    check_folds(10, 10, 3);  /* k = n: one rating a fold */
    check_folds(2, 2, 0);
    check_folds(11, 2, 99);  /* 6 then 5 */
    check_folds(100000, 3, 7); /* the parallel path */
}

/* Fold 0 is the |fold 0| smallest keys: rk_eval's holdout of that many with
 * the same seed takes the same ratings (the seed means the same in both). */
static void test_folds_match_holdout(void)
{
    const int64_t n = 20003;
    const int32_t k = 4; /* fold 0: 5001 = round(0.25 · 20003 = 5000.75) */
    int32_t *fold = new_parts(n);
    CU_ASSERT_EQUAL_FATAL(rk_split_folds(n, k, 1234, fold, NULL), RK_OK);
    rk_split_draw h;
    CU_ASSERT_EQUAL_FATAL(rk_split_holdout_plan(n, 0.25, 1234, &h, NULL), RK_OK);
    int64_t diff = 0, in0 = 0;
    for (int64_t t = 0; t < n; t++) {
        diff += (fold[t] == 0) != (rk_split_holdout_held(&h, t) != 0);
        in0 += fold[t] == 0;
    }
    CU_ASSERT_EQUAL(in0, 5001);
    CU_ASSERT_EQUAL(diff, 0);
    free(fold);
}

static void test_folds_determinism(void)
{
    const int64_t n = 100003;
    int32_t *a = new_parts(n), *b = new_parts(n), *c = new_parts(n);
    int keep = rk_omp_max_threads();
    rk_omp_set_threads(1);
    CU_ASSERT_EQUAL(rk_split_folds(n, 5, 77, a, NULL), RK_OK);
    rk_omp_set_threads(2);
    CU_ASSERT_EQUAL(rk_split_folds(n, 5, 77, b, NULL), RK_OK);
    CU_ASSERT_EQUAL(rk_split_folds(n, 5, 78, c, NULL), RK_OK);
    rk_omp_set_threads(keep);
    CU_ASSERT_EQUAL(memcmp(a, b, (size_t)n * sizeof *a), 0);
    int64_t moved = 0;
    for (int64_t t = 0; t < n; t++) moved += a[t] != c[t];
    CU_ASSERT(moved > n / 2); /* independent draws agree on about 1/5 */
    free(a), free(b), free(c);
}

static void test_folds_errors(void)
{
    int32_t fold[10];
    rk_error err;
    rk_error_clear(&err);
    CU_ASSERT_EQUAL(rk_split_folds(10, 1, 0, fold, &err), RK_E_ARG);
    CU_ASSERT(strstr(err.msg, "--folds 1 must be between 2 and the number of ratings (10)") != NULL);
    CU_ASSERT_EQUAL(rk_split_folds(10, 11, 0, fold, &err), RK_E_ARG);
    CU_ASSERT(strstr(err.msg, "--folds 11") != NULL);
    CU_ASSERT_EQUAL(rk_split_folds(10, 0, 0, fold, NULL), RK_E_ARG);
    CU_ASSERT_EQUAL(rk_split_folds(10, -3, 0, fold, NULL), RK_E_ARG);
    CU_ASSERT_EQUAL(rk_split_folds(0, 2, 0, fold, NULL), RK_E_ARG);
    CU_ASSERT_EQUAL(rk_split_folds(1, 2, 0, fold, NULL), RK_E_ARG);
    CU_ASSERT_EQUAL(rk_split_folds(-5, 2, 0, fold, NULL), RK_E_ARG);
    CU_ASSERT_EQUAL(rk_split_folds(10, 10, 0, fold, NULL), RK_OK);
}

/* Over f = 0..k-1 the test sets are disjoint, cover everything, and each
 * (train, test) pair is the ordered complement; with and without times. */
static void test_folds_apply(void)
{
    for (int wt = 0; wt < 2; wt++) {
        rk_triples all = make_random(20000, 500, wt ? 1000 : 0, 5 + wt);
        const int32_t k = 6;
        int32_t *fold = new_parts(all.n);
        CU_ASSERT_EQUAL_FATAL(rk_split_folds(all.n, k, 9, fold, NULL), RK_OK);
        int64_t covered = 0;
        for (int32_t f = 0; f < k; f++) {
            rk_triples train, test;
            CU_ASSERT_EQUAL_FATAL(rk_split_apply(&all, fold, f, &train, &test, NULL), RK_OK);
            CU_ASSERT_EQUAL(test.n, all.n / k + (f < all.n % k));
            CU_ASSERT_EQUAL(train.n + test.n, all.n);
            CU_ASSERT(apply_ok(&all, fold, f, &train, &test));
            covered += test.n;
            rk_triples_free(&train);
            rk_triples_free(&test);
        }
        CU_ASSERT_EQUAL(covered, all.n);
        /* a part no rating has: everything in training */
        rk_triples train, test;
        CU_ASSERT_EQUAL(rk_split_apply(&all, fold, k, &train, &test, NULL), RK_OK);
        CU_ASSERT_EQUAL(test.n, 0);
        CU_ASSERT(apply_ok(&all, fold, k, &train, &test));
        rk_triples_free(&train);
        rk_triples_free(&test);
        free(fold);
        rk_triples_free(&all);
    }
}

/* t_u by the definition: half up, at most n_u - 1, none below 2 ratings */
static int64_t expect_take(int64_t n_u, double frac)
{
    if (n_u < 2) return 0;
    double x = frac * (double)n_u;
    int64_t r = (int64_t)x;
    if (x - (double)r >= 0.5) r++;
    return r > n_u - 1 ? n_u - 1 : r;
}

/* Per user: test count == t_u, n_test == Σ t_u, and the test ratings are the
 * user's smallest (order key, t) — the seeded key, or the timestamp when
 * temporal — with respect to its training ratings (latest for temporal). */
static void check_per_user(const rk_triples *all, int32_t n_users, double frac, uint64_t seed, int temporal,
                           const int32_t *part, int64_t n_test)
{
    int64_t *n_u = calloc((size_t)n_users + 1, sizeof *n_u), *in_test = calloc((size_t)n_users + 1, sizeof *in_test);
    /* per user: the largest test and smallest training (seeded), or the
     * smallest test and largest training (temporal), as (key, t) */
    uint64_t *te_k = calloc((size_t)n_users + 1, sizeof *te_k), *tr_k = calloc((size_t)n_users + 1, sizeof *tr_k);
    int64_t *te_t = malloc(((size_t)n_users + 1) * sizeof *te_t), *tr_t = malloc(((size_t)n_users + 1) * sizeof *tr_t);
    for (int32_t u = 0; u < n_users; u++) te_t[u] = tr_t[u] = -1;
    int parts_ok = 1;
    for (int64_t t = 0; t < all->n; t++) {
        int32_t u = all->user[t];
        uint64_t c = temporal ? (uint64_t)all->time[t] ^ 0x8000000000000000ULL : key(seed, t);
        n_u[u]++;
        if (part[t] != 0 && part[t] != 1) parts_ok = 0;
        if (part[t] == 1) {
            in_test[u]++;
            int worse = temporal ? before(c, t, te_k[u], te_t[u]) : before(te_k[u], te_t[u], c, t);
            if (te_t[u] < 0 || worse) te_k[u] = c, te_t[u] = t;
        } else {
            int worse = temporal ? before(tr_k[u], tr_t[u], c, t) : before(c, t, tr_k[u], tr_t[u]);
            if (tr_t[u] < 0 || worse) tr_k[u] = c, tr_t[u] = t;
        }
    }
    CU_ASSERT(parts_ok);
    int64_t total = 0, bad_count = 0, bad_order = 0, bad_train = 0;
    for (int32_t u = 0; u < n_users; u++) {
        int64_t want = expect_take(n_u[u], frac);
        total += want;
        bad_count += in_test[u] != want;
        bad_train += n_u[u] >= 1 && in_test[u] >= n_u[u]; /* a training rating left */
        if (te_t[u] >= 0 && tr_t[u] >= 0)
            bad_order += temporal ? !before(tr_k[u], tr_t[u], te_k[u], te_t[u])
                                  : !before(te_k[u], te_t[u], tr_k[u], tr_t[u]);
    }
    CU_ASSERT_EQUAL(bad_count, 0);
    CU_ASSERT_EQUAL(bad_train, 0);
    CU_ASSERT_EQUAL(bad_order, 0);
    CU_ASSERT_EQUAL(n_test, total);
    free(n_u), free(in_test), free(te_k), free(tr_k), free(te_t), free(tr_t);
}

static void test_user_random(void)
{
    static const double fracs[] = {0.2, 0.5, 0.1, 0.9};
    rk_triples all = make_users(0, 11);
    int32_t *part = new_parts(all.n);
    for (size_t q = 0; q < sizeof fracs / sizeof fracs[0]; q++) {
        int64_t n_test = -1;
        CU_ASSERT_EQUAL_FATAL(rk_split_user(&all, 500, fracs[q], 3 + q, part, &n_test, NULL), RK_OK);
        check_per_user(&all, 500, fracs[q], 3 + q, 0, part, n_test);
        for (int64_t t = 20000; t < 20010; t++) CU_ASSERT_EQUAL(part[t], 0); /* one rating: training */
        CU_ASSERT_EQUAL(part[20010] + part[20011], fracs[q] >= 0.25 ? 1 : 0); /* 2 · frac rounded, at most 1 */
        rk_triples train, test;
        CU_ASSERT_EQUAL_FATAL(rk_split_apply(&all, part, 1, &train, &test, NULL), RK_OK);
        CU_ASSERT_EQUAL(test.n, n_test);
        CU_ASSERT(apply_ok(&all, part, 1, &train, &test));
        rk_triples_free(&train);
        rk_triples_free(&test);
    }
    free(part);
    rk_triples_free(&all);
}

/* Held-out users: round(F × eligible) users, each with its per-user test
 * part (part 1, as rk_split_user gives it) and every other rating of it
 * folded in (part 2); the rest part 0; users with one rating never out. */
static void test_users_out(void)
{
    rk_triples all = make_users(0, 21);
    int32_t *part = new_parts(all.n), *pu = new_parts(all.n);
    static const double fracs[] = {0.1, 0.5, 0.9};
    for (size_t q = 0; q < 3; q++) {
        int64_t n_test = -1, n_ref = 0;
        CU_ASSERT_EQUAL_FATAL(rk_split_users_out(&all, 500, fracs[q], 0.2, 7 + q, part, &n_test, NULL), RK_OK);
        CU_ASSERT_EQUAL_FATAL(rk_split_user(&all, 500, 0.2, 7 + q, pu, NULL, NULL), RK_OK);
        int out[500] = {0}, in[500] = {0}, eligible = 0, held = 0;
        for (int64_t t = 0; t < all.n; t++) {
            CU_ASSERT(part[t] >= 0 && part[t] <= 2);
            if (part[t] == 0) in[all.user[t]] = 1;
            else out[all.user[t]] = 1;
            if (part[t] != 0) CU_ASSERT_EQUAL(part[t] == 1, pu[t] == 1); /* the per-user draw of the seed */
            n_ref += part[t] == 1;
        }
        CU_ASSERT_EQUAL(n_test, n_ref);
        int64_t cnt[500] = {0};
        for (int64_t t = 0; t < all.n; t++) cnt[all.user[t]]++;
        for (int u = 0; u < 500; u++) {
            CU_ASSERT(!(out[u] && in[u])); /* a user is out whole or not at all */
            eligible += cnt[u] >= 2;
            held += out[u];
            if (cnt[u] < 2) CU_ASSERT(!out[u]);
        }
        CU_ASSERT_EQUAL(held, (int)floor(fracs[q] * eligible + 0.5));
        /* the same draw again */
        int32_t *again = new_parts(all.n);
        CU_ASSERT_EQUAL(rk_split_users_out(&all, 500, fracs[q], 0.2, 7 + q, again, NULL, NULL), RK_OK);
        CU_ASSERT(memcmp(part, again, sizeof *part * (size_t)all.n) == 0);
        free(again);
    }
    CU_ASSERT_EQUAL(rk_split_users_out(&all, 500, 1.0, 0.2, 1, part, NULL, NULL), RK_E_ARG);
    CU_ASSERT_EQUAL(rk_split_users_out(&all, 500, 0.5, 0.0, 1, part, NULL, NULL), RK_E_ARG);
    free(part);
    free(pu);
    rk_triples_free(&all);
}

/* 3 users with 1, 2 and 5 ratings, frac 0.5: t_u = 0, 1 (1.0), 3 (2.5 half up) */
static void test_user_hand(void)
{
    rk_triples all;
    CU_ASSERT_FATAL(rk_triples_alloc(&all, 8, 0, NULL) == RK_OK);
    static const int32_t users[8] = {2, 1, 2, 0, 2, 2, 1, 2};
    for (int t = 0; t < 8; t++) all.user[t] = users[t], all.item[t] = t, all.rating[t] = 1.0f;
    int32_t part[8];
    int64_t n_test = 0;
    CU_ASSERT_EQUAL(rk_split_user(&all, 3, 0.5, 8, part, &n_test, NULL), RK_OK);
    CU_ASSERT_EQUAL(n_test, 4);
    CU_ASSERT_EQUAL(part[3], 0);
    CU_ASSERT_EQUAL(part[1] + part[6], 1);
    CU_ASSERT_EQUAL(part[0] + part[2] + part[4] + part[5] + part[7], 3);
    check_per_user(&all, 3, 0.5, 8, 0, part, n_test);
    CU_ASSERT_EQUAL(rk_split_user(&all, 3, 0.5, 8, part, NULL, NULL), RK_OK); /* n_test may be NULL */
    rk_triples_free(&all);
}

static void test_user_determinism(void)
{
    rk_triples all = make_random(100000, 3000, 0, 21); /* past the parallel threshold */
    int32_t *a = new_parts(all.n), *b = new_parts(all.n), *c = new_parts(all.n);
    int64_t na, nb, nc;
    int keep = rk_omp_max_threads();
    rk_omp_set_threads(1);
    CU_ASSERT_EQUAL(rk_split_user(&all, 3000, 0.2, 5, a, &na, NULL), RK_OK);
    rk_omp_set_threads(2);
    CU_ASSERT_EQUAL(rk_split_user(&all, 3000, 0.2, 5, b, &nb, NULL), RK_OK);
    CU_ASSERT_EQUAL(rk_split_user(&all, 3000, 0.2, 6, c, &nc, NULL), RK_OK);
    rk_omp_set_threads(keep);
    CU_ASSERT_EQUAL(memcmp(a, b, (size_t)all.n * sizeof *a), 0);
    CU_ASSERT_EQUAL(na, nb);
    CU_ASSERT_EQUAL(na, nc); /* the counts depend on the users only */
    int64_t moved = 0;
    for (int64_t t = 0; t < all.n; t++) moved += a[t] != c[t];
    CU_ASSERT(moved > na / 2);
    check_per_user(&all, 3000, 0.2, 6, 0, c, nc);
    free(a), free(b), free(c);
    rk_triples_free(&all);
}

static void test_user_errors(void)
{
    rk_triples all = make_random(100, 10, 0, 2);
    int32_t part[100];
    int64_t n_test = 5;
    rk_error err;
    static const double bad[] = {0.0, 1.0, -0.2, 1.5};
    for (size_t q = 0; q < sizeof bad / sizeof bad[0]; q++) {
        CU_ASSERT_EQUAL(rk_split_user(&all, 10, bad[q], 1, part, &n_test, NULL), RK_E_ARG);
        CU_ASSERT_EQUAL(rk_split_temporal(&all, 10, bad[q], part, &n_test, NULL), RK_E_ARG);
    }
    CU_ASSERT_EQUAL(rk_split_user(&all, 10, NAN, 1, part, &n_test, NULL), RK_E_ARG);
    all.user[17] = 10; /* outside [0, n_users) */
    rk_error_clear(&err);
    CU_ASSERT_EQUAL(rk_split_user(&all, 10, 0.2, 1, part, &n_test, &err), RK_E_ARG);
    CU_ASSERT(strstr(err.msg, "user index") != NULL);
    all.user[17] = -1;
    CU_ASSERT_EQUAL(rk_split_user(&all, 10, 0.2, 1, part, &n_test, NULL), RK_E_ARG);
    all.user[17] = 3;
    CU_ASSERT_EQUAL(rk_split_user(&all, 10, 0.2, 1, part, &n_test, NULL), RK_OK);
    rk_triples_free(&all);
}

/* n = 0; one user holding every rating (10 ratings: 0.25 → 2.5 → 3; 0.99 →
 * 9.9 → 10, capped at 9; 0.04 → 0.4 → 0); one user with a single rating. */
static void test_user_edges(void)
{
    rk_triples none = {0, NULL, NULL, NULL, NULL};
    int64_t n_test = -1;
    int32_t part[10];
    CU_ASSERT_EQUAL(rk_split_user(&none, 0, 0.2, 1, part, &n_test, NULL), RK_OK);
    CU_ASSERT_EQUAL(n_test, 0);
    n_test = -1;
    CU_ASSERT_EQUAL(rk_split_user(&none, 4, 0.2, 1, part, &n_test, NULL), RK_OK);
    CU_ASSERT_EQUAL(n_test, 0);
    int64_t no_times = 0;
    none.time = &no_times; /* timestamps, none of them used */
    n_test = -1;
    CU_ASSERT_EQUAL(rk_split_temporal(&none, 0, 0.2, part, &n_test, NULL), RK_OK);
    CU_ASSERT_EQUAL(n_test, 0);

    rk_triples one = make_random(10, 1, 5, 4);
    static const struct { double frac; int64_t want; } tab[] = {{0.25, 3}, {0.99, 9}, {0.04, 0}, {0.5, 5}};
    for (size_t q = 0; q < sizeof tab / sizeof tab[0]; q++) {
        CU_ASSERT_EQUAL(rk_split_user(&one, 1, tab[q].frac, 2, part, &n_test, NULL), RK_OK);
        CU_ASSERT_EQUAL(n_test, tab[q].want);
        check_per_user(&one, 1, tab[q].frac, 2, 0, part, n_test);
        CU_ASSERT_EQUAL(rk_split_temporal(&one, 1, tab[q].frac, part, &n_test, NULL), RK_OK);
        CU_ASSERT_EQUAL(n_test, tab[q].want);
        check_per_user(&one, 1, tab[q].frac, 0, 1, part, n_test);
    }
    one.n = 1;
    part[0] = 5;
    CU_ASSERT_EQUAL(rk_split_user(&one, 1, 0.9, 2, part, &n_test, NULL), RK_OK);
    CU_ASSERT_EQUAL(n_test, 0);
    CU_ASSERT_EQUAL(part[0], 0);
    part[0] = 5;
    CU_ASSERT_EQUAL(rk_split_temporal(&one, 1, 0.9, part, &n_test, NULL), RK_OK);
    CU_ASSERT_EQUAL(part[0], 0);
    one.n = 10;
    rk_triples_free(&one);
}

/* One user, times 5 3 5 1 at positions 0..3: by (time, position) the order
 * is 3, 1, 0, 2; frac 0.5 takes 0 and 2, frac 0.3 (1.2 → 1) only 2. */
static void test_temporal_hand(void)
{
    rk_triples all;
    CU_ASSERT_FATAL(rk_triples_alloc(&all, 4, 1, NULL) == RK_OK);
    static const int64_t times[4] = {5, 3, 5, 1};
    for (int t = 0; t < 4; t++) all.user[t] = 0, all.item[t] = t, all.rating[t] = 2.0f, all.time[t] = times[t];
    int32_t part[4];
    int64_t n_test = 0;
    CU_ASSERT_EQUAL(rk_split_temporal(&all, 1, 0.5, part, &n_test, NULL), RK_OK);
    CU_ASSERT_EQUAL(n_test, 2);
    CU_ASSERT(part[0] == 1 && part[1] == 0 && part[2] == 1 && part[3] == 0);
    CU_ASSERT_EQUAL(rk_split_temporal(&all, 1, 0.3, part, &n_test, NULL), RK_OK);
    CU_ASSERT_EQUAL(n_test, 1);
    CU_ASSERT(part[0] == 0 && part[1] == 0 && part[2] == 1 && part[3] == 0);
    /* negative timestamps order below positive ones */
    all.time[1] = -100;
    all.time[3] = 7;
    CU_ASSERT_EQUAL(rk_split_temporal(&all, 1, 0.3, part, &n_test, NULL), RK_OK);
    CU_ASSERT(part[0] == 0 && part[1] == 0 && part[2] == 0 && part[3] == 1);
    rk_triples_free(&all);
}

static void test_temporal_random(void)
{
    rk_triples all = make_users(1, 31); /* 40 distinct times, centred on 0: many ties */
    int32_t *part = new_parts(all.n), *again = new_parts(all.n);
    int64_t n_test = -1, n2 = -1;
    CU_ASSERT_EQUAL_FATAL(rk_split_temporal(&all, 500, 0.2, part, &n_test, NULL), RK_OK);
    check_per_user(&all, 500, 0.2, 0, 1, part, n_test);
    for (int64_t t = 20000; t < 20010; t++) CU_ASSERT_EQUAL(part[t], 0);
    CU_ASSERT_EQUAL(part[20010] + part[20011], 0); /* 2 · 0.2 = 0.4 → 0 */
    /* the other form of the tie rule: every test (time) >= every training time */
    int64_t *lo = malloc(500 * sizeof *lo), *hi = malloc(500 * sizeof *hi);
    for (int u = 0; u < 500; u++) lo[u] = INT64_MAX, hi[u] = INT64_MIN;
    for (int64_t t = 0; t < all.n; t++) {
        int32_t u = all.user[t];
        if (part[t] == 1 && all.time[t] < lo[u]) lo[u] = all.time[t];
        if (part[t] == 0 && all.time[t] > hi[u]) hi[u] = all.time[t];
    }
    int64_t bad = 0;
    for (int u = 0; u < 500; u++) bad += lo[u] < hi[u];
    CU_ASSERT_EQUAL(bad, 0);
    /* ties: a training rating with the same time as a test one comes earlier */
    for (int64_t t = 0; t < all.n; t++)
        if (part[t] == 0 && all.time[t] == lo[all.user[t]])
            for (int64_t s = 0; s < t; s++)
                if (all.user[s] == all.user[t] && all.time[s] == all.time[t]) bad += part[s] == 1;
    CU_ASSERT_EQUAL(bad, 0);
    int keep = rk_omp_max_threads();
    rk_omp_set_threads(1);
    CU_ASSERT_EQUAL(rk_split_temporal(&all, 500, 0.2, again, &n2, NULL), RK_OK);
    rk_omp_set_threads(keep);
    CU_ASSERT_EQUAL(n2, n_test);
    CU_ASSERT_EQUAL(memcmp(part, again, (size_t)all.n * sizeof *part), 0);
    rk_triples train, test;
    CU_ASSERT_EQUAL_FATAL(rk_split_apply(&all, part, 1, &train, &test, NULL), RK_OK);
    CU_ASSERT(apply_ok(&all, part, 1, &train, &test));
    CU_ASSERT_EQUAL(test.n, n_test);
    rk_triples_free(&train);
    rk_triples_free(&test);
    free(lo), free(hi), free(part), free(again);
    rk_triples_free(&all);
}

static void test_temporal_no_times(void)
{
    rk_triples all = make_random(50, 5, 0, 8);
    int32_t part[50];
    int64_t n_test = 3;
    rk_error err;
    rk_error_clear(&err);
    CU_ASSERT_EQUAL(rk_split_temporal(&all, 5, 0.2, part, &n_test, &err), RK_E_ARG);
    CU_ASSERT_EQUAL(err.status, RK_E_ARG);
    CU_ASSERT_STRING_EQUAL(err.msg, "--split temporal needs timestamps, and the input has none");
    rk_triples_free(&all);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"kind names", test_kind_names},
        {"held-out users: whole users out, fold-in and test parts", test_users_out},
        {"folds: partition, sizes, blocks of the seeded order", test_folds_partition},
        {"folds: fold 0 is rk_eval's holdout of the same seed", test_folds_match_holdout},
        {"folds: determinism and thread count", test_folds_determinism},
        {"folds: k out of range", test_folds_errors},
        {"folds: apply over every fold", test_folds_apply},
        {"user: random shape", test_user_random},
        {"user: by hand", test_user_hand},
        {"user: determinism and thread count", test_user_determinism},
        {"user: errors", test_user_errors},
        {"user and temporal: edge cases", test_user_edges},
        {"temporal: by hand", test_temporal_hand},
        {"temporal: random shape with ties", test_temporal_random},
        {"temporal: no timestamps", test_temporal_no_times},
        {NULL, NULL},
    };
    return rk_test_main("rk_split", cases);
}
