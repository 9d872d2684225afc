/* Unit tests of etl/rk_sort.c: rk_triples_dedupe_csr against its reference,
 * rk_triples_dedupe then rk_csr_build (same triples in the same order, same
 * matrix bit for bit, same report, statuses and messages), on random triples
 * with many duplicates under all four policies, in random, sorted, reverse,
 * grouped-by-user and grouped-by-item orders, with empty users and items, one
 * user, one item, with and without positions carried (duplicates resolved
 * in the walk, or found again by the fix-up pass), the generic route, tiny
 * buckets and digits and several threads; the positions it hands out; edge
 * cases (n = 0, 1, every rating the same pair); errors. */
#define _POSIX_C_SOURCE 200809L
#include "rk_csr.h"
#include "rk_omp.h"
#include "test_util.h"

#include <string.h>

typedef enum { ORD_RANDOM, ORD_SORTED, ORD_REVERSE, ORD_BY_USER, ORD_BY_ITEM, ORD_COUNT } order;

static rk_triples copy_triples(const rk_triples *a)
{
    rk_triples b;
    CU_ASSERT_EQUAL_FATAL(rk_triples_alloc(&b, a->n, a->time != NULL, NULL), RK_OK);
    if (a->n > 0) {
        memcpy(b.user, a->user, (size_t)a->n * sizeof *a->user);
        memcpy(b.item, a->item, (size_t)a->n * sizeof *a->item);
        memcpy(b.rating, a->rating, (size_t)a->n * sizeof *a->rating);
        if (a->time != NULL) memcpy(b.time, a->time, (size_t)a->n * sizeof *a->time);
    }
    return b;
}

static int triples_equal(const rk_triples *a, const rk_triples *b)
{
    if (a->n != b->n || (a->time == NULL) != (b->time == NULL)) return 0;
    if (a->n == 0) return 1;
    return memcmp(a->user, b->user, (size_t)a->n * sizeof *a->user) == 0 &&
           memcmp(a->item, b->item, (size_t)a->n * sizeof *a->item) == 0 &&
           memcmp(a->rating, b->rating, (size_t)a->n * sizeof *a->rating) == 0 &&
           (a->time == NULL || memcmp(a->time, b->time, (size_t)a->n * sizeof *a->time) == 0);
}

static int csr_equal(const rk_csr *a, const rk_csr *b)
{
    if (a->n_rows != b->n_rows || a->n_cols != b->n_cols || a->nnz != b->nnz) return 0;
    return memcmp(a->ptr, b->ptr, ((size_t)a->n_rows + 1) * sizeof *a->ptr) == 0 &&
           (a->nnz == 0 || (memcmp(a->idx, b->idx, (size_t)a->nnz * sizeof *a->idx) == 0 &&
                            memcmp(a->val, b->val, (size_t)a->nnz * sizeof *a->val) == 0));
}

/* Sort positions by a key with a stable merge sort (the test's own, slow and plain). */
static void stable_sort(int64_t *perm, int64_t n, const uint64_t *key)
{
    int64_t *tmp = malloc((size_t)(n > 0 ? n : 1) * sizeof *tmp);
    for (int64_t w = 1; w < n; w *= 2)
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, a = lo, b = mid, o = lo;
            while (a < mid || b < hi) tmp[o++] = b >= hi || (a < mid && key[perm[a]] <= key[perm[b]]) ? perm[a++] : perm[b++];
            memcpy(perm + lo, tmp + lo, (size_t)(hi - lo) * sizeof *perm);
        }
    free(tmp);
}

/* n ratings over nu x ni drawn from `pairs` distinct pairs (few pairs: many
 * duplicates; pairs >= n: rare ones), users and items from every `stride`-th index (empty ones
 * between), ratings arbitrary floats (so that means must be summed in the
 * same order to agree bit for bit), times = 1000 + position; then put in
 * `ord` order. */
static rk_triples make_case(int32_t nu, int32_t ni, int64_t n, int64_t pairs, int stride, order ord,
                            unsigned long long seed)
{
    rk_triples t;
    CU_ASSERT_EQUAL_FATAL(rk_triples_alloc(&t, n, 1, NULL), RK_OK);
    const int fresh = pairs > n; /* each rating its own random pair: repeats only by chance */
    if (fresh) pairs = 1;
    int32_t *pu = malloc((size_t)(pairs > 0 ? pairs : 1) * sizeof *pu);
    int32_t *pi = malloc((size_t)(pairs > 0 ? pairs : 1) * sizeof *pi);
    int32_t su = (nu + stride - 1) / stride, si = (ni + stride - 1) / stride;
    for (int64_t q = 0; q < pairs; q++) {
        pu[q] = (int32_t)(rk_test_rand(&seed) % (unsigned)su) * stride;
        pi[q] = (int32_t)(rk_test_rand(&seed) % (unsigned)si) * stride;
    }
    for (int64_t k = 0; k < n; k++) {
        if (fresh) {
            t.user[k] = (int32_t)(rk_test_rand(&seed) % (unsigned)su) * stride;
            t.item[k] = (int32_t)(rk_test_rand(&seed) % (unsigned)si) * stride;
        } else {
            int64_t q = (int64_t)(rk_test_rand(&seed) % (unsigned long long)pairs);
            t.user[k] = pu[q];
            t.item[k] = pi[q];
        }
        t.rating[k] = (float)(rk_test_uniform(&seed) * 4.5 + 0.5);
    }
    free(pu);
    free(pi);
    if (ord != ORD_RANDOM) {
        int64_t *perm = malloc((size_t)(n > 0 ? n : 1) * sizeof *perm);
        uint64_t *key = malloc((size_t)(n > 0 ? n : 1) * sizeof *key);
        for (int64_t k = 0; k < n; k++) {
            uint64_t u = (uint64_t)t.user[k], i = (uint64_t)t.item[k];
            perm[k] = k;
            key[k] = ord == ORD_SORTED    ? u << 32 | i
                     : ord == ORD_REVERSE ? ~(u << 32 | i)
                     : ord == ORD_BY_USER ? u
                                          : i;
        }
        stable_sort(perm, n, key);
        rk_triples s = copy_triples(&t);
        for (int64_t k = 0; k < n; k++) {
            t.user[k] = s.user[perm[k]];
            t.item[k] = s.item[perm[k]];
            t.rating[k] = s.rating[perm[k]];
        }
        rk_triples_free(&s);
        free(perm);
        free(key);
    }
    for (int64_t k = 0; k < n; k++) t.time[k] = 1000 + k;
    return t;
}

/* The new path and the reference on one case; @return 1 when all agree. */
static int compare(const rk_triples *in, int32_t nu, int32_t ni, rk_dup_policy pol, const rk_sort_opts *o,
                   int want_pos)
{
    rk_triples ref = copy_triples(in), got = copy_triples(in);
    rk_dup_report rr, rg;
    rk_error er, eg;
    rk_csr a, b;
    int64_t *pos = NULL;
    int ok = 1;
    memset(&a, 0, sizeof a);
    rk_error_clear(&er);
    rk_error_clear(&eg);
    rk_status sr = rk_triples_dedupe(&ref, nu, ni, pol, &rr, &er);
    if (sr == RK_OK) sr = rk_csr_build(&ref, nu, ni, &a, &er);
    rk_status sg = rk_triples_dedupe_csr(&got, nu, ni, pol, o, &b, want_pos ? &pos : NULL, &rg, &eg);
    ok &= sr == sg;
    ok &= strcmp(er.msg, eg.msg) == 0;
    ok &= rr.first_user == rg.first_user && rr.first_item == rg.first_item;
    ok &= triples_equal(&ref, &got); /* also on failure: t must be as it was */
    if (sr == RK_OK && sg == RK_OK) {
        ok &= rr.n_removed == rg.n_removed;
        ok &= csr_equal(&a, &b);
        ok &= rk_csr_check(&b, NULL, 0) == 0;
        if (want_pos) { /* each entry's rating is where pos says, in the triples after the call */
            for (int32_t r = 0; r < b.n_rows && ok; r++)
                for (int64_t p = b.ptr[r]; p < b.ptr[r + 1]; p++) {
                    int64_t k = pos[p];
                    if (k < 0 || k >= got.n || got.user[k] != r || got.item[k] != b.idx[p] ||
                        memcmp(&got.rating[k], &b.val[p], sizeof(float)) != 0)
                        ok = 0;
                }
        } else {
            ok &= pos == NULL;
        }
    } else {
        ok &= b.ptr == NULL && pos == NULL;
    }
    if (!ok)
        fprintf(stderr, "\n  mismatch: %d x %d, n %lld, policy %s, threads %d, bucket %lld, digit %d, generic %d, "
                        "pos %d: status %d/%d '%s' / '%s'\n",
                nu, ni, (long long)in->n, rk_dup_policy_name(pol), o->threads, (long long)o->bucket, o->digit_bits,
                o->generic, want_pos, (int)sr, (int)sg, er.msg, eg.msg);
    rk_csr_free(&a);
    rk_csr_free(&b);
    free(pos);
    rk_triples_free(&ref);
    rk_triples_free(&got);
    return ok;
}

/* Every policy, route and knob on one input. */
static void compare_all(const rk_triples *in, int32_t nu, int32_t ni)
{
    static const rk_sort_opts opts[] = {
        {0, 0, 0, 0},  /* defaults */
        {1, 64, 3, 0}, /* many small buckets, several radix passes, one thread */
        {3, 16, 0, 0}, /* several threads */
        {2, 0, 0, 1},  /* the generic route (reference calls) */
    };
    for (int pol = RK_DUP_LAST; pol <= RK_DUP_ERROR; pol++)
        for (size_t q = 0; q < sizeof opts / sizeof opts[0]; q++)
            for (int want_pos = 0; want_pos < 2; want_pos++)
                CU_ASSERT_TRUE(compare(in, nu, ni, (rk_dup_policy)pol, &opts[q], want_pos));
}

static void run_cases(int32_t nu, int32_t ni, int64_t n, int64_t pairs, int stride, unsigned long long seed)
{
    for (int ord = 0; ord < ORD_COUNT; ord++) {
        rk_triples t = make_case(nu, ni, n, pairs, stride, (order)ord, seed + (unsigned long long)ord);
        compare_all(&t, nu, ni);
        /* the same without duplicates: the narrow route goes all the way */
        CU_ASSERT_EQUAL_FATAL(rk_triples_dedupe(&t, nu, ni, RK_DUP_FIRST, NULL, NULL), RK_OK);
        compare_all(&t, nu, ni);
        rk_triples_free(&t);
    }
}

/* many duplicates: n ratings over about n / 3 pairs */
static void test_many_duplicates(void)
{
    run_cases(40, 30, 600, 200, 1, 100);
    run_cases(300, 500, 3000, 1000, 1, 200);
    run_cases(1000, 7000, 4000, 1500, 1, 300); /* wide keys: 10 + 13 bits */
}

/* no duplicates (the narrow route all the way), and a few */
static void test_few_duplicates(void)
{
    run_cases(200, 150, 2000, 1000000, 1, 400); /* pairs drawn from a large pool: rare repeats */
    run_cases(120, 90, 4000, 4000, 1, 500);
}

/* every other user and item empty; one user; one item */
static void test_shapes(void)
{
    run_cases(101, 77, 1500, 600, 2, 600);
    run_cases(64, 64, 1000, 300, 3, 650);
    run_cases(1, 300, 800, 250, 1, 700);
    run_cases(300, 1, 800, 250, 1, 800);
    run_cases(1, 1, 50, 1, 1, 900);
}

/* enough ratings for the default thread count and bucket size */
static void test_large(void)
{
    static const rk_sort_opts dflt = {0, 0, 0, 0}, par = {3, 0, 0, 0};
    for (int ord = 0; ord < ORD_COUNT; ord++) {
        rk_triples t = make_case(3000, 2500, 200000, 150000, 1, (order)ord, 1000 + (unsigned long long)ord);
        for (int pol = RK_DUP_LAST; pol <= RK_DUP_ERROR; pol++) {
            CU_ASSERT_TRUE(compare(&t, 3000, 2500, (rk_dup_policy)pol, &dflt, pol == RK_DUP_MEAN));
            CU_ASSERT_TRUE(compare(&t, 3000, 2500, (rk_dup_policy)pol, &par, pol == RK_DUP_LAST));
        }
        rk_triples_free(&t);
        /* and without any duplicate */
        t = make_case(3000, 2500, 100000, 1000000000, 1, (order)ord, 2000 + (unsigned long long)ord);
        rk_triples d = copy_triples(&t);
        CU_ASSERT_EQUAL_FATAL(rk_triples_dedupe(&d, 3000, 2500, RK_DUP_FIRST, NULL, NULL), RK_OK);
        CU_ASSERT_TRUE(compare(&d, 3000, 2500, RK_DUP_ERROR, &dflt, 0));
        CU_ASSERT_TRUE(compare(&d, 3000, 2500, RK_DUP_LAST, &par, 1));
        rk_triples_free(&d);
        rk_triples_free(&t);
    }
}

static void test_edges(void)
{
    rk_triples t;
    /* n = 0, with and without rows */
    CU_ASSERT_EQUAL_FATAL(rk_triples_alloc(&t, 0, 0, NULL), RK_OK);
    compare_all(&t, 0, 0);
    compare_all(&t, 5, 3);
    rk_triples_free(&t);
    /* n = 1 */
    t = make_case(4, 4, 1, 1, 1, ORD_RANDOM, 7);
    compare_all(&t, 4, 4);
    compare_all(&t, 1000, 1000);
    rk_triples_free(&t);
    /* every rating the same pair */
    t = make_case(10, 10, 500, 1, 1, ORD_RANDOM, 8);
    compare_all(&t, 10, 10);
    rk_triples_free(&t);
    /* two ratings of one pair, far apart, with other pairs between */
    t = make_case(50, 50, 300, 1000000, 1, ORD_RANDOM, 9);
    t.user[299] = t.user[3];
    t.item[299] = t.item[3];
    compare_all(&t, 50, 50);
    rk_triples_free(&t);
}

/* out-of-range indices: the reference's status and words, t unchanged
 * (compare checks the triples on failure too) */
static void test_errors(void)
{
    static const rk_sort_opts o = {0, 0, 0, 0}, o3 = {3, 16, 0, 0};
    rk_triples t = make_case(20, 20, 400, 100, 1, ORD_RANDOM, 10);
    t.item[250] = 20;
    t.user[300] = -1;
    for (int pol = RK_DUP_LAST; pol <= RK_DUP_ERROR; pol++) {
        CU_ASSERT_TRUE(compare(&t, 20, 20, (rk_dup_policy)pol, &o, 0));
        CU_ASSERT_TRUE(compare(&t, 20, 20, (rk_dup_policy)pol, &o3, 1));
    }
    t.item[250] = 3;
    CU_ASSERT_TRUE(compare(&t, 20, 20, RK_DUP_MEAN, &o3, 0));
    t.user[300] = 20;
    CU_ASSERT_TRUE(compare(&t, 20, 20, RK_DUP_LAST, &o, 0));
    rk_triples_free(&t);

    rk_error e;
    rk_csr a;
    int64_t *pos = (int64_t *)&e;
    t = make_case(5, 5, 10, 10, 1, ORD_RANDOM, 11);
    CU_ASSERT_EQUAL(rk_triples_dedupe_csr(&t, 5, 5, (rk_dup_policy)9, NULL, &a, NULL, NULL, &e), RK_E_ARG);
    CU_ASSERT_PTR_NULL(a.ptr);
    CU_ASSERT_EQUAL(rk_triples_dedupe_csr(&t, 5, 5, RK_DUP_LAST, NULL, NULL, &pos, NULL, &e), RK_E_ARG);
    CU_ASSERT_PTR_NULL(pos);
    CU_ASSERT_EQUAL(rk_triples_dedupe_csr(&t, -1, 5, RK_DUP_LAST, NULL, &a, NULL, NULL, &e), RK_E_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "negative"));
    rk_triples_free(&t);
    /* under ERROR, the pair whose second rating comes first in file order:
     * (3,4) is seen first, but (1,2) repeats first */
    const int32_t u[] = {3, 1, 0, 1, 3, 2}, i[] = {4, 2, 0, 2, 4, 1};
    CU_ASSERT_EQUAL_FATAL(rk_triples_alloc(&t, 6, 0, NULL), RK_OK);
    for (int k = 0; k < 6; k++) {
        t.user[k] = u[k];
        t.item[k] = i[k];
        t.rating[k] = (float)k;
    }
    rk_dup_report rep;
    CU_ASSERT_EQUAL(rk_triples_dedupe_csr(&t, 5, 5, RK_DUP_ERROR, NULL, &a, NULL, &rep, &e), RK_E_DUPLICATE);
    CU_ASSERT_EQUAL(rep.first_user, 1);
    CU_ASSERT_EQUAL(rep.first_item, 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "user 1, item 2"));
    CU_ASSERT_PTR_NULL(a.ptr);
    CU_ASSERT_EQUAL(t.n, 6);
    CU_ASSERT_EQUAL(rk_triples_dedupe_csr(&t, 5, 5, RK_DUP_FIRST, NULL, &a, NULL, &rep, &e), RK_OK);
    CU_ASSERT_EQUAL(t.n, 4);
    CU_ASSERT_EQUAL(rep.n_removed, 2);
    CU_ASSERT_EQUAL(a.nnz, 4);
    rk_csr_free(&a);
    rk_triples_free(&t);
}

/* dedupe only (no matrix): the triples as the reference leaves them */
static void test_dedupe_only(void)
{
    static const rk_sort_opts o = {2, 32, 0, 0};
    for (int ord = 0; ord < ORD_COUNT; ord++) {
        rk_triples t = make_case(60, 60, 2000, 700, 1, (order)ord, 1200 + (unsigned long long)ord);
        for (int pol = RK_DUP_LAST; pol <= RK_DUP_MEAN; pol++) {
            rk_triples a = copy_triples(&t), b = copy_triples(&t);
            rk_dup_report ra, rb;
            CU_ASSERT_EQUAL(rk_triples_dedupe(&a, 60, 60, (rk_dup_policy)pol, &ra, NULL), RK_OK);
            CU_ASSERT_EQUAL(rk_triples_dedupe_csr(&b, 60, 60, (rk_dup_policy)pol, &o, NULL, NULL, &rb, NULL), RK_OK);
            CU_ASSERT_TRUE(triples_equal(&a, &b));
            CU_ASSERT_EQUAL(ra.n_removed, rb.n_removed);
            CU_ASSERT(rb.n_removed > 0);
            rk_triples_free(&a);
            rk_triples_free(&b);
        }
        rk_triples_free(&t);
    }
}

/* rk_triples_resolve: what a sort elsewhere finds (here the test's own walk
 * over a stable sort: each pair's ratings in file order, the policy's
 * survivor kept, the others' bits set, under MEAN the mean in file order at
 * the first one) applied to t gives rk_triples_dedupe's t; means out of
 * range are refused. */
static void test_resolve(void)
{
    static const rk_dup_policy pols[] = {RK_DUP_LAST, RK_DUP_FIRST, RK_DUP_MEAN};
    unsigned long long seed = 17;
    for (int c = 0; c < 24; c++) {
        const int64_t n = c == 0 ? 0 : 1 + (int64_t)(rk_test_rand(&seed) % 5000);
        const int64_t pairs = 1 + (int64_t)(rk_test_rand(&seed) % (uint64_t)(c % 3 == 0 ? 10 : n + 1));
        const rk_dup_policy pol = pols[c % 3];
        rk_triples t = make_case(300, 200, n, c % 4 == 3 ? n + 1 : pairs, 1, ORD_RANDOM, seed + (unsigned)c);
        int64_t *perm = malloc((size_t)(n > 0 ? n : 1) * sizeof *perm);
        uint64_t *key = malloc((size_t)(n > 0 ? n : 1) * sizeof *key);
        for (int64_t k = 0; k < n; k++) {
            perm[k] = k;
            key[k] = (uint64_t)t.user[k] << 32 | (uint64_t)t.item[k];
        }
        stable_sort(perm, n, key);
        rk_dup_found f;
        memset(&f, 0, sizeof f);
        f.drop = calloc((size_t)(n + 63) / 64 + 1, sizeof *f.drop);
        f.mean_pos = malloc((size_t)(n > 0 ? n : 1) * sizeof *f.mean_pos);
        f.mean_val = malloc((size_t)(n > 0 ? n : 1) * sizeof *f.mean_val);
        for (int64_t q = 0; q < n;) {
            int64_t r = q + 1;
            while (r < n && key[perm[r]] == key[perm[q]]) r++;
            if (r - q > 1) {
                const int64_t keep = pol == RK_DUP_LAST ? r - 1 : q;
                if (pol == RK_DUP_MEAN) {
                    double sum = t.rating[perm[q]];
                    for (int64_t j = q + 1; j < r; j++) sum += t.rating[perm[j]];
                    f.mean_pos[f.n_means] = perm[q];
                    f.mean_val[f.n_means++] = (float)(sum / (double)(r - q));
                }
                for (int64_t j = q; j < r; j++)
                    if (j != keep) {
                        f.drop[perm[j] >> 6] |= (uint64_t)1 << (perm[j] & 63);
                        f.removed++;
                    }
            }
            q = r;
        }
        rk_triples want = copy_triples(&t), got = copy_triples(&t);
        rk_dup_report rep;
        CU_ASSERT_EQUAL_FATAL(rk_triples_dedupe(&want, 300, 200, pol, &rep, NULL), RK_OK);
        CU_ASSERT_EQUAL(rep.n_removed, f.removed);
        CU_ASSERT_EQUAL_FATAL(rk_triples_resolve(&got, &f, NULL), RK_OK);
        CU_ASSERT_TRUE(triples_equal(&want, &got));
        if (c == 5 && n > 0) { /* a mean outside t: refused, t untouched */
            rk_error e;
            f.n_means = 1;
            f.mean_pos[0] = got.n + 3;
            CU_ASSERT_EQUAL(rk_triples_resolve(&got, &f, &e), RK_E_ARG);
        }
        rk_dup_found_free(&f);
        CU_ASSERT_PTR_NULL(f.drop);
        rk_triples_free(&want);
        rk_triples_free(&got);
        rk_triples_free(&t);
        free(perm);
        free(key);
    }
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"many duplicates, all policies, orders and routes", test_many_duplicates},
        {"no or few duplicates", test_few_duplicates},
        {"empty users and items, one user, one item", test_shapes},
        {"large inputs, default knobs and threads", test_large},
        {"n = 0, n = 1, one pair repeated", test_edges},
        {"errors: range, policy, arguments, duplicates", test_errors},
        {"duplicates without a matrix", test_dedupe_only},
        {"what a sort elsewhere found, applied", test_resolve},
        {NULL, NULL},
    };
    return rk_test_main("sort", cases);
}
