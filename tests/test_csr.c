/* Unit tests of etl/rk_csr.c: duplicate policies on hand-made cases, CSR and
 * CSC invariants on random triples (fixed seeds) against a dense reference,
 * transpose twice = identity, errors, and rk_csr_check on broken matrices. */
#define _POSIX_C_SOURCE 200809L
#include "rk_csr.h"
#include "rk_omp.h"
#include "test_util.h"

#include <math.h>
#include <string.h>

static rk_triples make(int64_t n, const int32_t *u, const int32_t *i, const float *r, const int64_t *t)
{
    rk_triples x;
    rk_error e;
    CU_ASSERT_EQUAL_FATAL(rk_triples_alloc(&x, n, t != NULL, &e), RK_OK);
    memcpy(x.user, u, (size_t)n * sizeof *u);
    memcpy(x.item, i, (size_t)n * sizeof *i);
    memcpy(x.rating, r, (size_t)n * sizeof *r);
    if (t != NULL) memcpy(x.time, t, (size_t)n * sizeof *t);
    return x;
}

static void expect_triples(const rk_triples *x, int64_t n, const int32_t *u, const int32_t *i,
                           const float *r, const int64_t *t)
{
    CU_ASSERT_EQUAL_FATAL(x->n, n);
    for (int64_t k = 0; k < n; k++) {
        CU_ASSERT_EQUAL(x->user[k], u[k]);
        CU_ASSERT_EQUAL(x->item[k], i[k]);
        CU_ASSERT_DOUBLE_EQUAL(x->rating[k], r[k], 1e-6);
        if (t != NULL) CU_ASSERT_EQUAL(x->time[k], t[k]);
    }
}

/* (0,1) three times, (1,0) twice, (0,0) once; file order matters. */
static const int32_t DU[] = {0, 1, 0, 0, 1, 0};
static const int32_t DI[] = {1, 0, 1, 0, 0, 1};
static const float DR[] = {1, 2, 3, 4, 5, 5};
static const int64_t DT[] = {10, 11, 12, 13, 14, 15};

static void test_dedupe_policies(void)
{
    rk_dup_report rep;
    rk_error e;

    rk_triples x = make(6, DU, DI, DR, DT);
    CU_ASSERT_EQUAL(rk_triples_dedupe(&x, 2, 2, RK_DUP_LAST, &rep, &e), RK_OK);
    {   /* each pair where its last occurrence was */
        const int32_t u[] = {0, 1, 0}, i[] = {0, 0, 1};
        const float r[] = {4, 5, 5};
        const int64_t t[] = {13, 14, 15};
        expect_triples(&x, 3, u, i, r, t);
    }
    CU_ASSERT_EQUAL(rep.n_removed, 3);
    CU_ASSERT_EQUAL(rep.first_user, 0); /* the first repeat is at position 2: (0,1) */
    CU_ASSERT_EQUAL(rep.first_item, 1);
    rk_triples_free(&x);

    x = make(6, DU, DI, DR, DT);
    CU_ASSERT_EQUAL(rk_triples_dedupe(&x, 2, 2, RK_DUP_FIRST, &rep, &e), RK_OK);
    {
        const int32_t u[] = {0, 1, 0}, i[] = {1, 0, 0};
        const float r[] = {1, 2, 4};
        const int64_t t[] = {10, 11, 13};
        expect_triples(&x, 3, u, i, r, t);
    }
    CU_ASSERT_EQUAL(rep.n_removed, 3);
    rk_triples_free(&x);

    x = make(6, DU, DI, DR, DT);
    CU_ASSERT_EQUAL(rk_triples_dedupe(&x, 2, 2, RK_DUP_MEAN, &rep, &e), RK_OK);
    {   /* the mean of all, at the first position, with the first time */
        const int32_t u[] = {0, 1, 0}, i[] = {1, 0, 0};
        const float r[] = {3, 3.5f, 4};
        const int64_t t[] = {10, 11, 13};
        expect_triples(&x, 3, u, i, r, t);
    }
    rk_triples_free(&x);

    x = make(6, DU, DI, DR, DT);
    CU_ASSERT_EQUAL(rk_triples_dedupe(&x, 2, 2, RK_DUP_ERROR, &rep, &e), RK_E_DUPLICATE);
    CU_ASSERT_EQUAL(rep.first_user, 0);
    CU_ASSERT_EQUAL(rep.first_item, 1);
    expect_triples(&x, 6, DU, DI, DR, DT); /* unchanged */
    rk_triples_free(&x);

    /* the first repeat in file order, not the first user */
    const int32_t u2[] = {1, 0, 1, 0}, i2[] = {0, 1, 0, 1};
    const float r2[] = {1, 1, 1, 1};
    x = make(4, u2, i2, r2, NULL);
    CU_ASSERT_EQUAL(rk_triples_dedupe(&x, 2, 2, RK_DUP_ERROR, &rep, &e), RK_E_DUPLICATE);
    CU_ASSERT_EQUAL(rep.first_user, 1);
    CU_ASSERT_EQUAL(rep.first_item, 0);
    rk_triples_free(&x);

    /* no duplicates: nothing changes, under every policy */
    const int32_t u3[] = {1, 0, 0}, i3[] = {0, 1, 0};
    for (int p = RK_DUP_LAST; p <= RK_DUP_ERROR; p++) {
        x = make(3, u3, i3, r2, NULL);
        CU_ASSERT_EQUAL(rk_triples_dedupe(&x, 2, 2, (rk_dup_policy)p, &rep, &e), RK_OK);
        expect_triples(&x, 3, u3, i3, r2, NULL);
        CU_ASSERT_EQUAL(rep.n_removed, 0);
        CU_ASSERT_EQUAL(rep.first_user, -1);
        rk_triples_free(&x);
    }
    /* out of range */
    x = make(3, u3, i3, r2, NULL);
    CU_ASSERT_EQUAL(rk_triples_dedupe(&x, 1, 2, RK_DUP_LAST, &rep, &e), RK_E_ARG);
    CU_ASSERT_EQUAL(rk_triples_dedupe(&x, 2, 2, RK_DUP_LAST, NULL, &e), RK_OK);
    rk_triples_free(&x);
}

static void test_policy_names(void)
{
    rk_dup_policy p;
    for (int k = RK_DUP_LAST; k <= RK_DUP_ERROR; k++) {
        CU_ASSERT_EQUAL(rk_dup_policy_parse(rk_dup_policy_name((rk_dup_policy)k), &p), RK_OK);
        CU_ASSERT_EQUAL(p, (rk_dup_policy)k);
    }
    CU_ASSERT_STRING_EQUAL(rk_dup_policy_name(RK_DUP_LAST), "last");
    CU_ASSERT_EQUAL(rk_dup_policy_parse("max", &p), RK_E_ARG);
    CU_ASSERT_EQUAL(rk_dup_policy_parse(NULL, &p), RK_E_ARG);
    rk_triples t;
    rk_csr a;
    memset(&t, 0, sizeof t);
    memset(&a, 0, sizeof a);
    rk_triples_free(&t);
    rk_triples_free(NULL);
    rk_csr_free(&a);
    rk_csr_free(NULL);
}

/* ---- random matrices ------------------------------------------------------------ */

typedef struct dense {
    int32_t nr, nc;
    float *v; /* NAN: absent */
} dense;

static void check_against(const rk_csr *a, const dense *d, int transposed)
{
    char why[200];
    int ok = rk_csr_check(a, why, sizeof why) == 0;
    if (!ok) fprintf(stderr, "\n%s\n", why);
    CU_ASSERT_TRUE_FATAL(ok);
    int64_t nnz = 0, bad = 0;
    for (int32_t r = 0; r < a->n_rows; r++)
        for (int64_t p = a->ptr[r]; p < a->ptr[r + 1]; p++) {
            int32_t c = a->idx[p];
            float want = transposed ? d->v[(size_t)c * (size_t)d->nc + (size_t)r]
                                    : d->v[(size_t)r * (size_t)d->nc + (size_t)c];
            bad += !(want == a->val[p]);
            nnz++;
        }
    int64_t present = 0;
    for (size_t k = 0; k < (size_t)d->nr * (size_t)d->nc; k++) present += d->v[k] == d->v[k];
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(nnz, present);
}

static int csr_equal(const rk_csr *a, const rk_csr *b)
{
    if (a->n_rows != b->n_rows || a->n_cols != b->n_cols || a->nnz != b->nnz) return 0;
    return memcmp(a->ptr, b->ptr, ((size_t)a->n_rows + 1) * sizeof *a->ptr) == 0
           && memcmp(a->idx, b->idx, (size_t)a->nnz * sizeof *a->idx) == 0
           && memcmp(a->val, b->val, (size_t)a->nnz * sizeof *a->val) == 0;
}

static void random_case(int32_t nu, int32_t ni, int64_t n, int sorted, unsigned long long seed)
{
    rk_triples t;
    rk_error e;
    rk_dup_report rep;
    CU_ASSERT_EQUAL_FATAL(rk_triples_alloc(&t, n, 0, &e), RK_OK);
    for (int64_t k = 0; k < n; k++) {
        t.user[k] = (int32_t)(rk_test_rand(&seed) % (unsigned)nu);
        t.item[k] = (int32_t)(rk_test_rand(&seed) % (unsigned)ni);
        t.rating[k] = (float)(rk_test_rand(&seed) % 10 + 1) * 0.5f;
    }
    if (sorted) { /* row-major order, like MovieLens files: a counting pass */
        int64_t *cnt = calloc((size_t)nu * (size_t)ni, sizeof *cnt);
        float *last = calloc((size_t)nu * (size_t)ni, sizeof *last);
        for (int64_t k = 0; k < n; k++) {
            cnt[(size_t)t.user[k] * (size_t)ni + (size_t)t.item[k]] = 1;
            last[(size_t)t.user[k] * (size_t)ni + (size_t)t.item[k]] = t.rating[k];
        }
        int64_t w = 0;
        for (size_t q = 0; q < (size_t)nu * (size_t)ni; q++)
            if (cnt[q]) {
                t.user[w] = (int32_t)(q / (size_t)ni);
                t.item[w] = (int32_t)(q % (size_t)ni);
                t.rating[w] = last[q];
                w++;
            }
        t.n = w;
        free(cnt);
        free(last);
    }
    /* the dense reference: the last rating of each pair */
    dense d = {nu, ni, malloc((size_t)nu * (size_t)ni * sizeof(float))};
    for (size_t q = 0; q < (size_t)nu * (size_t)ni; q++) d.v[q] = NAN;
    for (int64_t k = 0; k < t.n; k++) d.v[(size_t)t.user[k] * (size_t)ni + (size_t)t.item[k]] = t.rating[k];

    rk_csr a, b, c;
    int64_t n_before = t.n;
    CU_ASSERT_EQUAL_FATAL(rk_triples_dedupe(&t, nu, ni, RK_DUP_LAST, &rep, &e), RK_OK);
    CU_ASSERT_EQUAL(t.n + rep.n_removed, n_before);
    CU_ASSERT_EQUAL_FATAL(rk_csr_build(&t, nu, ni, &a, &e), RK_OK);
    CU_ASSERT_EQUAL(a.n_rows, nu);
    CU_ASSERT_EQUAL(a.n_cols, ni);
    CU_ASSERT_EQUAL(a.nnz, t.n);
    check_against(&a, &d, 0);
    CU_ASSERT_EQUAL_FATAL(rk_csr_transpose(&a, &b, &e), RK_OK);
    CU_ASSERT_EQUAL(b.n_rows, ni);
    check_against(&b, &d, 1);
    CU_ASSERT_EQUAL_FATAL(rk_csr_transpose(&b, &c, &e), RK_OK);
    CU_ASSERT_TRUE(csr_equal(&a, &c));
    /* the same triples reversed build the same matrix */
    for (int64_t k = 0; k < t.n / 2; k++) {
        int64_t j = t.n - 1 - k;
        int32_t x = t.user[k]; t.user[k] = t.user[j]; t.user[j] = x;
        x = t.item[k]; t.item[k] = t.item[j]; t.item[j] = x;
        float f = t.rating[k]; t.rating[k] = t.rating[j]; t.rating[j] = f;
    }
    rk_csr_free(&c);
    CU_ASSERT_EQUAL_FATAL(rk_csr_build(&t, nu, ni, &c, &e), RK_OK);
    CU_ASSERT_TRUE(csr_equal(&a, &c));
    rk_csr_free(&a);
    rk_csr_free(&b);
    rk_csr_free(&c);
    rk_triples_free(&t);
    free(d.v);
}

static void test_random(void)
{
    random_case(7, 5, 20, 0, 1);
    random_case(50, 40, 800, 0, 2);
    random_case(50, 40, 800, 1, 3);
    random_case(1, 1, 5, 0, 4);
    random_case(300, 200, 150000, 0, 5); /* parallel counting sorts */
    random_case(300, 200, 150000, 1, 6);
    random_case(2000, 30, 100000, 0, 7); /* long rows: the qsort path */
    random_case(3, 2000, 200000, 0, 8);
}

/* The transpose groups columns by thread count (more groups for more
 * threads): the same matrix whatever the count, and the right one. */
static void test_transpose_threads(void)
{
    unsigned long long seed = 77;
    const int32_t nu = 5000, ni = 3000;
    rk_triples t;
    rk_csr a, ref, b;
    CU_ASSERT_EQUAL_FATAL(rk_triples_alloc(&t, 150000, 0, NULL), RK_OK);
    for (int64_t k = 0; k < t.n; k++) {
        t.user[k] = (int32_t)(rk_test_rand(&seed) % (unsigned)nu);
        t.item[k] = (int32_t)(rk_test_rand(&seed) % 97 * 31 % (unsigned)ni); /* a few popular columns */
        t.rating[k] = (float)k;
    }
    CU_ASSERT_EQUAL_FATAL(rk_triples_dedupe(&t, nu, ni, RK_DUP_LAST, NULL, NULL), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_csr_build(&t, nu, ni, &a, NULL), RK_OK);
    int before = rk_omp_max_threads();
    rk_omp_set_threads(1);
    CU_ASSERT_EQUAL_FATAL(rk_csr_transpose(&a, &ref, NULL), RK_OK);
    int64_t bad = 0; /* each entry of the transpose is an entry of a */
    for (int32_t i = 0; i < ref.n_rows; i++)
        for (int64_t p = ref.ptr[i]; p < ref.ptr[i + 1]; p++) {
            int32_t u = ref.idx[p];
            int64_t q = a.ptr[u];
            while (q < a.ptr[u + 1] && a.idx[q] != i) q++;
            bad += q == a.ptr[u + 1] || a.val[q] != ref.val[p];
        }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(ref.nnz, a.nnz);
    CU_ASSERT_EQUAL(rk_csr_check(&ref, NULL, 0), 0);
    for (int nt = 2; nt <= 20; nt += 9) {
        rk_omp_set_threads(nt);
        CU_ASSERT_EQUAL_FATAL(rk_csr_transpose(&a, &b, NULL), RK_OK);
        CU_ASSERT_TRUE(csr_equal(&ref, &b));
        rk_csr_free(&b);
    }
    rk_omp_set_threads(before);
    rk_csr_free(&a);
    rk_csr_free(&ref);
    rk_triples_free(&t);
}

static void test_mean_random(void)
{
    unsigned long long seed = 11;
    const int32_t nu = 20, ni = 10;
    const int64_t n = 5000;
    rk_triples t;
    rk_error e;
    CU_ASSERT_EQUAL_FATAL(rk_triples_alloc(&t, n, 1, &e), RK_OK);
    double sum[20][10] = {{0}};
    int cnt[20][10] = {{0}};
    int64_t first[20][10];
    for (int64_t k = 0; k < n; k++) {
        t.user[k] = (int32_t)(rk_test_rand(&seed) % nu);
        t.item[k] = (int32_t)(rk_test_rand(&seed) % ni);
        t.rating[k] = (float)(rk_test_rand(&seed) % 9 + 1) * 0.5f;
        t.time[k] = k;
        if (cnt[t.user[k]][t.item[k]]++ == 0) first[t.user[k]][t.item[k]] = k;
        sum[t.user[k]][t.item[k]] += t.rating[k];
    }
    CU_ASSERT_EQUAL_FATAL(rk_triples_dedupe(&t, nu, ni, RK_DUP_MEAN, NULL, &e), RK_OK);
    int64_t prev = -1;
    for (int64_t k = 0; k < t.n; k++) {
        int32_t u = t.user[k], i = t.item[k];
        CU_ASSERT_EQUAL(t.time[k], first[u][i]);
        CU_ASSERT_DOUBLE_EQUAL(t.rating[k], (float)(sum[u][i] / cnt[u][i]), 1e-6);
        CU_ASSERT_TRUE(t.time[k] > prev); /* file order kept */
        prev = t.time[k];
    }
    rk_triples_free(&t);
}

static void test_build_errors(void)
{
    const int32_t u[] = {0, 1, 0}, i[] = {1, 0, 1};
    const float r[] = {1, 2, 3};
    rk_triples t = make(3, u, i, r, NULL);
    rk_csr a;
    rk_error e;
    CU_ASSERT_EQUAL(rk_csr_build(&t, 2, 2, &a, &e), RK_E_DUPLICATE);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "user 0, item 1"));
    CU_ASSERT_PTR_NULL(a.ptr);
    CU_ASSERT_EQUAL(rk_csr_build(&t, 2, 1, &a, &e), RK_E_ARG);
    t.user[0] = -1;
    CU_ASSERT_EQUAL(rk_csr_build(&t, 2, 2, &a, &e), RK_E_ARG);
    rk_triples_free(&t);
    /* empty rows and an empty matrix */
    CU_ASSERT_EQUAL_FATAL(rk_triples_alloc(&t, 0, 0, &e), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_csr_build(&t, 4, 3, &a, &e), RK_OK);
    CU_ASSERT_EQUAL(rk_csr_check(&a, NULL, 0), 0);
    CU_ASSERT_EQUAL(a.ptr[4], 0);
    rk_csr b;
    CU_ASSERT_EQUAL_FATAL(rk_csr_transpose(&a, &b, &e), RK_OK);
    CU_ASSERT_EQUAL(b.n_rows, 3);
    CU_ASSERT_EQUAL(rk_csr_check(&b, NULL, 0), 0);
    rk_csr_free(&a);
    rk_csr_free(&b);
    rk_triples_free(&t);
    const int32_t u2[] = {3, 0}, i2[] = {0, 2};
    t = make(2, u2, i2, r, NULL);
    CU_ASSERT_EQUAL_FATAL(rk_csr_build(&t, 5, 3, &a, &e), RK_OK);
    const int64_t want_ptr[] = {0, 1, 1, 1, 2, 2};
    CU_ASSERT_EQUAL(memcmp(a.ptr, want_ptr, sizeof want_ptr), 0);
    CU_ASSERT_EQUAL(a.idx[0], 2);
    CU_ASSERT_EQUAL(a.idx[1], 0);
    rk_csr_free(&a);
    rk_triples_free(&t);
}

static void test_check_detects(void)
{
    int64_t ptr[] = {0, 2, 3};
    int32_t idx[] = {0, 2, 1};
    float val[] = {1, 2, 3};
    rk_csr a = {2, 3, 3, ptr, idx, val};
    char why[128];
    CU_ASSERT_EQUAL(rk_csr_check(&a, why, sizeof why), 0);
    idx[1] = 0; /* repeated column */
    CU_ASSERT_EQUAL(rk_csr_check(&a, why, sizeof why), -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "ascending"));
    idx[1] = 3; /* out of range */
    CU_ASSERT_EQUAL(rk_csr_check(&a, why, sizeof why), -1);
    idx[1] = 2;
    ptr[1] = 4; /* decreasing / beyond nnz */
    CU_ASSERT_EQUAL(rk_csr_check(&a, why, sizeof why), -1);
    ptr[1] = 2;
    ptr[0] = 1;
    CU_ASSERT_EQUAL(rk_csr_check(&a, why, sizeof why), -1);
    ptr[0] = 0;
    a.nnz = 2; /* ptr[n_rows] != nnz */
    CU_ASSERT_EQUAL(rk_csr_check(&a, NULL, 0), -1);
    a.nnz = 3;
    a.ptr = NULL;
    CU_ASSERT_EQUAL(rk_csr_check(&a, why, sizeof why), -1);
    CU_ASSERT_EQUAL(rk_csr_check(NULL, why, sizeof why), -1);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"duplicate policies", test_dedupe_policies},
        {"policy names, free of empty structs", test_policy_names},
        {"random CSR/CSC against dense", test_random},
        {"mean of random duplicates", test_mean_random},
        {"transpose on any thread count", test_transpose_threads},
        {"build errors and empty rows", test_build_errors},
        {"rk_csr_check finds broken matrices", test_check_detects},
        {NULL, NULL},
    };
    return rk_test_main("csr", cases);
}
