/* rk_select: bounded top-k against a full sort with the tie rule of CONTRACT.md §3/§4
 * (score descending, then index ascending), on random streams with many ties. */
#include "rk_select.h"
#include "test_util.h"

#include <string.h>

typedef struct entry { double s; int32_t i; } entry;

/* the expected order, written independently of rk_topk_better */
static int cmp_rank(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    if (x->s > y->s) return -1;
    if (x->s < y->s) return 1;
    return (x->i > y->i) - (x->i < y->i);
}

static void test_better(void)
{
    CU_ASSERT_TRUE(rk_topk_better(0.9, 5, 0.5, 1));  /* higher score first */
    CU_ASSERT_FALSE(rk_topk_better(0.5, 1, 0.9, 5));
    CU_ASSERT_TRUE(rk_topk_better(0.5, 1, 0.5, 2));  /* tie: lower index first */
    CU_ASSERT_FALSE(rk_topk_better(0.5, 2, 0.5, 1));
    CU_ASSERT_FALSE(rk_topk_better(0.5, 3, 0.5, 3)); /* not strictly better than itself */
    CU_ASSERT_TRUE(rk_topk_better(-0.1, 9, -0.2, 0));
}

/* Hand example: k = 4 over (0.5,3) (0.9,1) (0.5,2) (0.9,7) (0.1,0) (0.5,4)
 * → (0.9,1) (0.9,7) (0.5,2) (0.5,3); (0.5,4) loses the tie to 2 and 3. */
static void test_hand_sort(void)
{
    double sc[4];
    int32_t ix[4];
    rk_topk h;
    rk_topk_init(&h, 4, sc, ix);
    CU_ASSERT_EQUAL(h.k, 4);
    CU_ASSERT_EQUAL(h.n, 0);
    rk_topk_push(&h, 0.5, 3);
    rk_topk_push(&h, 0.9, 1);
    rk_topk_push(&h, 0.5, 2);
    rk_topk_push(&h, 0.9, 7);
    rk_topk_push(&h, 0.1, 0);
    rk_topk_push(&h, 0.5, 4);
    CU_ASSERT_EQUAL(h.n, 4);
    /* before sorting, the root is the worst kept entry */
    CU_ASSERT_EQUAL(h.score[0], 0.5);
    CU_ASSERT_EQUAL(h.idx[0], 3);
    rk_topk_sort(&h);
    CU_ASSERT_EQUAL(h.n, 4);
    const double es[] = {0.9, 0.9, 0.5, 0.5};
    const int32_t ei[] = {1, 7, 2, 3};
    for (int t = 0; t < 4; t++) {
        CU_ASSERT_EQUAL(sc[t], es[t]);
        CU_ASSERT_EQUAL(ix[t], ei[t]);
    }
    /* re-init and reuse the same storage */
    rk_topk_init(&h, 2, sc, ix);
    rk_topk_push(&h, 0.3, 8);
    rk_topk_push(&h, 0.3, 6);
    rk_topk_push(&h, 0.2, 0);
    rk_topk_sort(&h);
    CU_ASSERT_EQUAL(h.n, 2);
    CU_ASSERT_EQUAL(ix[0], 6);
    CU_ASSERT_EQUAL(ix[1], 8);
}

static void test_k_zero(void)
{
    double sc[2] = {-7.0, -7.0};
    int32_t ix[2] = {-7, -7};
    rk_topk h;
    rk_topk_init(&h, 0, sc, ix);
    for (int t = 0; t < 50; t++) rk_topk_push(&h, (double)t, t);
    CU_ASSERT_EQUAL(h.n, 0);
    rk_topk_sort(&h);
    CU_ASSERT_EQUAL(h.n, 0);
    /* nothing was written to the caller's arrays */
    CU_ASSERT_EQUAL(sc[0], -7.0);
    CU_ASSERT_EQUAL(ix[0], -7);
    CU_ASSERT_EQUAL(sc[1], -7.0);
    CU_ASSERT_EQUAL(ix[1], -7);
}

static void test_small_sorts(void)
{
    double sc[3];
    int32_t ix[3];
    rk_topk h;
    rk_topk_init(&h, 3, sc, ix);
    rk_topk_sort(&h); /* empty */
    CU_ASSERT_EQUAL(h.n, 0);
    rk_topk_push(&h, 0.25, 5);
    rk_topk_sort(&h);
    CU_ASSERT_EQUAL(h.n, 1);
    CU_ASSERT_EQUAL(sc[0], 0.25);
    CU_ASSERT_EQUAL(ix[0], 5);
    /* k = 1 keeps the single best, ties to the lowest index */
    rk_topk_init(&h, 1, sc, ix);
    rk_topk_push(&h, 0.5, 9);
    rk_topk_push(&h, 0.5, 4);
    rk_topk_push(&h, 0.4, 0);
    rk_topk_push(&h, 0.5, 6);
    CU_ASSERT_EQUAL(h.n, 1);
    CU_ASSERT_EQUAL(sc[0], 0.5);
    CU_ASSERT_EQUAL(ix[0], 4);
}

/* Run one random stream of length len through a top-k of capacity k and check
 * it against the first min(k, len) entries of a full sort.  Returns 1 if all
 * checks held (assertions are also recorded). */
static int check_stream(unsigned long long *st, int len, int k, int n_values, int neg)
{
    entry *all = malloc((size_t)(len > 0 ? len : 1) * sizeof *all);
    double *sc = malloc((size_t)(k > 0 ? k : 1) * sizeof *sc);
    int32_t *ix = malloc((size_t)(k > 0 ? k : 1) * sizeof *ix);
    int32_t *perm = malloc((size_t)(len > 0 ? len : 1) * sizeof *perm);
    int ok = 1;
    /* distinct indices in random order (a shuffled 3·t + 1 sequence) */
    for (int t = 0; t < len; t++) perm[t] = 3 * t + 1;
    for (int t = len - 1; t > 0; t--) {
        int j = (int)(rk_test_rand(st) % (unsigned long long)(t + 1));
        int32_t tmp = perm[t];
        perm[t] = perm[j];
        perm[j] = tmp;
    }
    for (int t = 0; t < len; t++) {
        /* few distinct values → many ties */
        double v = (double)(rk_test_rand(st) % (unsigned long long)n_values) / 8.0;
        if (neg) v -= 0.5;
        all[t].s = v;
        all[t].i = perm[t];
    }
    rk_topk h;
    rk_topk_init(&h, k, sc, ix);
    for (int t = 0; t < len; t++) rk_topk_push(&h, all[t].s, all[t].i);
    int want = len < k ? len : k;
    ok &= h.n == want;
    CU_ASSERT_EQUAL(h.n, want);
    qsort(all, (size_t)len, sizeof *all, cmp_rank);
    if (h.n == want && want > 0) {
        /* heap property before sorting: the root is the worst kept */
        for (int t = 1; t < h.n; t++) {
            int parent = (t - 1) / 2;
            int good = cmp_rank(&(entry){sc[parent], ix[parent]}, &(entry){sc[t], ix[t]}) > 0;
            ok &= good;
        }
        CU_ASSERT_TRUE(ok);
        rk_topk_sort(&h);
        CU_ASSERT_EQUAL(h.n, want);
        for (int t = 0; t < want; t++) {
            int same = sc[t] == all[t].s && ix[t] == all[t].i;
            ok &= same;
        }
        CU_ASSERT_TRUE(ok);
    }
    free(all);
    free(sc);
    free(ix);
    free(perm);
    return ok;
}

static void test_random_streams(void)
{
    static const int lens[] = {1, 2, 3, 7, 16, 31, 100, 257, 1000};
    unsigned long long st = 2024;
    int failures = 0;
    for (size_t a = 0; a < sizeof lens / sizeof lens[0]; a++) {
        int len = lens[a];
        const int ks[] = {1, 2, len - 1, len, len + 1, len + 5, 3 * len, len / 2 + 1, 20};
        for (size_t b = 0; b < sizeof ks / sizeof ks[0]; b++) {
            if (ks[b] < 1) continue;
            for (int nv = 1; nv <= 9; nv += 4)   /* 1 value: all tied */
                for (int rep = 0; rep < 4; rep++)
                    failures += !check_stream(&st, len, ks[b], nv, rep & 1);
        }
    }
    CU_ASSERT_EQUAL(failures, 0);
    /* longer streams with more distinct values */
    for (int rep = 0; rep < 50; rep++) {
        int len = 1 + (int)(rk_test_rand(&st) % 3000);
        int k = 1 + (int)(rk_test_rand(&st) % 200);
        failures += !check_stream(&st, len, k, 1 + (int)(rk_test_rand(&st) % 64), rep & 1);
    }
    CU_ASSERT_EQUAL(failures, 0);
}

/* k equal to the stream length keeps everything, in rank order */
static void test_k_equals_length(void)
{
    unsigned long long st = 99;
    int failures = 0;
    for (int len = 1; len <= 64; len++) failures += !check_stream(&st, len, len, 3, 0);
    CU_ASSERT_EQUAL(failures, 0);
}

/* Streams in sorted, reverse-sorted and all-tied orders. */
static void test_adversarial_orders(void)
{
    enum { L = 200, K = 13 };
    double sc[K];
    int32_t ix[K];
    rk_topk h;
    for (int order = 0; order < 4; order++) {
        rk_topk_init(&h, K, sc, ix);
        for (int t = 0; t < L; t++) {
            int u = order == 1 ? L - 1 - t : t;
            double s = order == 2 ? 1.0 : order == 3 ? (double)(u % 5) : (double)u;
            int32_t id = order == 3 ? L - 1 - u : u;
            rk_topk_push(&h, s, id);
        }
        rk_topk_sort(&h);
        CU_ASSERT_EQUAL_FATAL(h.n, K);
        for (int t = 0; t < K; t++) {
            if (order <= 1) { /* scores are u: the K highest, descending */
                CU_ASSERT_EQUAL(ix[t], L - 1 - t);
            } else if (order == 2) { /* all tied: the K lowest indices */
                CU_ASSERT_EQUAL(ix[t], t);
            } else { /* score 4 for u ≡ 4 (mod 5), id = L−1−u: ids 0, 5, 10, ... */
                CU_ASSERT_EQUAL(sc[t], 4.0);
                CU_ASSERT_EQUAL(ix[t], 5 * t);
            }
        }
    }
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"rk_topk_better order", test_better},
        {"hand example and rk_topk_sort order", test_hand_sort},
        {"k = 0 keeps nothing", test_k_zero},
        {"empty, single entry, k = 1", test_small_sorts},
        {"random streams against a full sort", test_random_streams},
        {"k equal to the stream length", test_k_equals_length},
        {"sorted, reversed and tied streams", test_adversarial_orders},
        {NULL, NULL},
    };
    return rk_test_main("rk_select", cases);
}
