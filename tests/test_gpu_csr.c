/* The user-major matrix sorted on the GPU (rk_gpu_csr_build) against its
 * CPU twin rk_triples_dedupe_csr, bit for bit, on shuffled ratings of
 * random shapes (one user, one item, users and items without ratings at the
 * start, in the middle and at the end) and on one large enough for many
 * pinned pieces each way; pairs rated more than once under every policy the
 * GPU resolves; and what it leaves to the host (a pair rated twice without
 * a place for what it found, under "error" or beside a holdout, ratings
 * grouped by user, an index out of range, a budget too small) or fails on
 * (a device that is not there).  Exits 77 (skipped)
 * when no GPU is usable. */
#include "rk_gpu.h"
#include "rk_csr.h"
#include "rk_knn.h"
#include "rk_model.h"
#include "test_util.h"
#include "test_gpu_main.h"

#include <stdlib.h>
#include <string.h>

/* Shuffled ratings: pair (u, i) with probability p, none for users and
 * items whose index is a multiple of 7 (rows and columns left empty). */
static void make(rk_triples *t, int32_t nu, int32_t ni, double p, unsigned long long seed)
{
    unsigned long long s = seed;
    int64_t cap = (int64_t)((double)nu * ni * p * 1.2) + 64;
    CU_ASSERT_FATAL(rk_triples_alloc(t, cap, 0, NULL) == RK_OK);
    int64_t n = 0;
    for (int32_t u = 0; u < nu && n < cap; u++) {
        if (nu > 1 && u % 7 == 0) continue;
        for (int32_t i = 0; i < ni && n < cap; i++) {
            if (ni > 1 && i % 7 == 0) continue;
            if (rk_test_uniform(&s) >= p) continue;
            t->user[n] = u;
            t->item[n] = i;
            t->rating[n] = 0.5f * (float)(1 + rk_test_rand(&s) % 10);
            n++;
        }
    }
    t->n = n;
    for (int64_t a = n - 1; a > 0; a--) {
        const int64_t b = (int64_t)(rk_test_rand(&s) % (unsigned long long)(a + 1));
        int32_t x = t->user[a]; t->user[a] = t->user[b]; t->user[b] = x;
        x = t->item[a]; t->item[a] = t->item[b]; t->item[b] = x;
        float r = t->rating[a]; t->rating[a] = t->rating[b]; t->rating[b] = r;
    }
}

/* A copy of t's ratings (no time). */
static rk_triples copy_of(const rk_triples *t)
{
    rk_triples c;
    CU_ASSERT_FATAL(rk_triples_alloc(&c, t->n > 0 ? t->n : 1, 0, NULL) == RK_OK);
    c.n = t->n;
    memcpy(c.user, t->user, (size_t)t->n * sizeof *c.user);
    memcpy(c.item, t->item, (size_t)t->n * sizeof *c.item);
    memcpy(c.rating, t->rating, (size_t)t->n * sizeof *c.rating);
    return c;
}

/* The host's matrix of a copy of t (the sort leaves t alone when no pair repeats). */
static void host_csr(const rk_triples *t, int32_t nu, int32_t ni, rk_csr *out)
{
    rk_triples c = copy_of(t);
    rk_dup_report rep;
    CU_ASSERT_FATAL(rk_triples_dedupe_csr(&c, nu, ni, RK_DUP_LAST, NULL, out, NULL, &rep, NULL) == RK_OK);
    rk_triples_free(&c);
}

/* The GPU's matrix d is the host's h, bit for bit. */
static void same_csr(const rk_csr *d, const rk_csr *h)
{
    CU_ASSERT_EQUAL(d->n_rows, h->n_rows);
    CU_ASSERT_EQUAL(d->n_cols, h->n_cols);
    CU_ASSERT_EQUAL_FATAL(d->nnz, h->nnz);
    CU_ASSERT_EQUAL(memcmp(d->ptr, h->ptr, ((size_t)h->n_rows + 1) * sizeof *d->ptr), 0);
    CU_ASSERT_EQUAL(memcmp(d->idx, h->idx, (size_t)h->nnz * sizeof *d->idx), 0);
    CU_ASSERT_EQUAL(memcmp(d->val, h->val, (size_t)h->nnz * sizeof *d->val), 0);
}

static int g_compared;

static void compare(int32_t nu, int32_t ni, double p, unsigned long long seed)
{
    rk_triples t;
    make(&t, nu, ni, p, seed);
    if (t.n < 2) {
        rk_triples_free(&t);
        return;
    }
    rk_csr h, d;
    rk_error err;
    int taken = -1;
    host_csr(&t, nu, ni, &h);
    rk_status s = rk_gpu_csr_build(&t, nu, ni, NULL, RK_DUP_LAST, NULL, NULL, &d, &taken, &err);
    if (s != RK_OK) fprintf(stderr, "rk_gpu_csr_build: %s\n", err.msg);
    CU_ASSERT_FATAL(s == RK_OK);
    /* a shuffle of two or more ratings of one user may still come out grouped */
    if (taken) {
        same_csr(&d, &h);
        g_compared++;
    }
    rk_csr_free(&d);
    rk_csr_free(&h);
    rk_triples_free(&t);
}

static void test_random_shapes(void)
{
    unsigned long long s = 99;
    g_compared = 0;
    compare(1, 40, 0.9, 1);     /* one user: grouped, the host's */
    compare(300, 1, 0.9, 2);    /* one item */
    compare(2, 2, 1.0, 3);
    for (int rep = 0; rep < 25; rep++) {
        const int32_t nu = 1 + (int32_t)(rk_test_rand(&s) % 3000), ni = 1 + (int32_t)(rk_test_rand(&s) % 2000);
        compare(nu, ni, 0.01 + 0.2 * rk_test_uniform(&s), 100 + (unsigned long long)rep);
    }
    CU_ASSERT(g_compared >= 20);
}

/* 6M ratings: every array comes back in several pinned pieces. */
static void test_large(void)
{
    g_compared = 0;
    compare(60000, 2000, 0.05, 7);
    CU_ASSERT_EQUAL(g_compared, 1);
}

/* What stays with the host, and a failing call. */
static void test_left_to_host(void)
{
    rk_triples t;
    rk_csr d;
    rk_error err;
    int taken;
    make(&t, 500, 300, 0.1, 11);
    CU_ASSERT_FATAL(t.n > 100);
    /* a pair rated twice: the duplicate policy is the host's */
    const int32_t keep_u = t.user[5], keep_i = t.item[5];
    t.user[5] = t.user[50];
    t.item[5] = t.item[50];
    taken = -1;
    CU_ASSERT_EQUAL(rk_gpu_csr_build(&t, 500, 300, NULL, RK_DUP_LAST, NULL, NULL, &d, &taken, &err), RK_OK);
    CU_ASSERT_EQUAL(taken, 0);
    CU_ASSERT_PTR_NULL(d.ptr);
    t.user[5] = keep_u;
    t.item[5] = keep_i;
    /* an index out of range: the host's sort reports it */
    t.item[7] = 300;
    CU_ASSERT_EQUAL(rk_gpu_csr_build(&t, 500, 300, NULL, RK_DUP_LAST, NULL, NULL, &d, &taken, &err), RK_OK);
    CU_ASSERT_EQUAL(taken, 0);
    t.item[7] = 3;
    /* a budget below what the sort needs */
    rk_gpu_opts g = {0};
    g.memory_cap = 4096;
    CU_ASSERT_EQUAL(rk_gpu_csr_build(&t, 500, 300, NULL, RK_DUP_LAST, NULL, &g, &d, &taken, &err), RK_OK);
    CU_ASSERT_EQUAL(taken, 0);
    /* a device that is not there: RK_E_GPU naming the call, nothing kept */
    g.memory_cap = 0;
    g.device = 4096;
    taken = -1;
    CU_ASSERT_EQUAL(rk_gpu_csr_build(&t, 500, 300, NULL, RK_DUP_LAST, NULL, &g, &d, &taken, &err), RK_E_GPU);
    CU_ASSERT_EQUAL(taken, 0);
    CU_ASSERT_PTR_NULL(d.ptr);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cudaSetDevice"));
    /* grouped by user (sorted): the host's copies are faster */
    rk_csr h;
    host_csr(&t, 500, 300, &h);
    rk_triples sorted = {h.nnz, NULL, NULL, NULL, NULL};
    CU_ASSERT_FATAL(rk_triples_alloc(&sorted, h.nnz, 0, NULL) == RK_OK);
    sorted.n = h.nnz;
    for (int32_t u = 0; u < 500; u++)
        for (int64_t p = h.ptr[u]; p < h.ptr[u + 1]; p++) {
            sorted.user[p] = u;
            sorted.item[p] = h.idx[p];
            sorted.rating[p] = h.val[p];
        }
    CU_ASSERT_EQUAL(rk_gpu_csr_build(&sorted, 500, 300, NULL, RK_DUP_LAST, NULL, NULL, &d, &taken, &err), RK_OK);
    CU_ASSERT_EQUAL(taken, 0);
    rk_triples_free(&sorted);
    rk_csr_free(&h);
    rk_triples_free(&t);
}

/* t with about a third more ratings, each a pair already there with a
 * rating of its own (any float: means must be summed in the same order),
 * some pairs several times over, then shuffled. */
static void add_repeats(rk_triples *t, unsigned long long seed)
{
    unsigned long long s = seed;
    const int64_t n = t->n, m = n / 3 + 1;
    rk_triples r;
    CU_ASSERT_FATAL(rk_triples_alloc(&r, n + m, 0, NULL) == RK_OK);
    memcpy(r.user, t->user, (size_t)n * sizeof *r.user);
    memcpy(r.item, t->item, (size_t)n * sizeof *r.item);
    for (int64_t k = 0; k < n; k++) r.rating[k] = (float)(rk_test_uniform(&s) * 4.5 + 0.5);
    for (int64_t k = n; k < n + m; k++) {
        const int64_t j = (int64_t)(rk_test_rand(&s) % (unsigned long long)(k % 5 == 0 ? 3 : n)); /* a few pairs often */
        r.user[k] = r.user[j];
        r.item[k] = r.item[j];
        r.rating[k] = (float)(rk_test_uniform(&s) * 4.5 + 0.5);
    }
    for (int64_t a = n + m - 1; a > 0; a--) {
        const int64_t b = (int64_t)(rk_test_rand(&s) % (unsigned long long)(a + 1));
        int32_t x = r.user[a]; r.user[a] = r.user[b]; r.user[b] = x;
        x = r.item[a]; r.item[a] = r.item[b]; r.item[b] = x;
        float v = r.rating[a]; r.rating[a] = r.rating[b]; r.rating[b] = v;
    }
    rk_triples_free(t);
    *t = r;
}

/* Pairs rated more than once, resolved on the GPU under last, first and
 * mean: the host's matrix bit for bit, and the host's triples once
 * rk_triples_resolve has applied what the GPU found; "error", a holdout
 * beside them, or no place for what it found leave them to the host. */
static void test_repeats(void)
{
    static const rk_dup_policy pols[] = {RK_DUP_LAST, RK_DUP_FIRST, RK_DUP_MEAN};
    unsigned long long s = 21;
    int compared = 0;
    for (int rep = 0; rep < 12; rep++) {
        const rk_dup_policy pol = pols[rep % 3];
        const int32_t nu = 2 + (int32_t)(rk_test_rand(&s) % (rep == 11 ? 60000 : 3000));
        const int32_t ni = 2 + (int32_t)(rk_test_rand(&s) % 2000);
        rk_triples t;
        make(&t, nu, ni, rep == 11 ? 0.02 : 0.01 + 0.1 * rk_test_uniform(&s), 500 + (unsigned long long)rep);
        if (t.n < 4) {
            rk_triples_free(&t);
            continue;
        }
        add_repeats(&t, 600 + (unsigned long long)rep);
        rk_triples want = copy_of(&t), got = copy_of(&t);
        rk_csr h, d;
        rk_dup_report hr;
        rk_dup_found f;
        rk_error err;
        int taken = -1;
        CU_ASSERT_FATAL(rk_triples_dedupe_csr(&want, nu, ni, pol, NULL, &h, NULL, &hr, NULL) == RK_OK);
        CU_ASSERT(hr.n_removed > 0);
        rk_status st = rk_gpu_csr_build(&t, nu, ni, NULL, pol, &f, NULL, &d, &taken, &err);
        if (st != RK_OK) fprintf(stderr, "rk_gpu_csr_build: %s\n", err.msg);
        CU_ASSERT_FATAL(st == RK_OK);
        CU_ASSERT_EQUAL(taken, 1);
        if (taken) {
            same_csr(&d, &h);
            CU_ASSERT_EQUAL(f.removed, hr.n_removed);
            CU_ASSERT_EQUAL(f.n_means > 0, pol == RK_DUP_MEAN);
            CU_ASSERT_FATAL(rk_triples_resolve(&got, &f, NULL) == RK_OK);
            CU_ASSERT_EQUAL_FATAL(got.n, want.n);
            CU_ASSERT_EQUAL(memcmp(got.user, want.user, (size_t)want.n * sizeof *want.user), 0);
            CU_ASSERT_EQUAL(memcmp(got.item, want.item, (size_t)want.n * sizeof *want.item), 0);
            CU_ASSERT_EQUAL(memcmp(got.rating, want.rating, (size_t)want.n * sizeof *want.rating), 0);
            compared++;
        }
        rk_dup_found_free(&f);
        rk_csr_free(&d);
        /* what stays with the host: nothing found, nothing made */
        uint64_t *bits = calloc((size_t)(t.n + 63) / 64, sizeof *bits);
        bits[0] = 1;
        const struct { rk_dup_policy pol; const uint64_t *out; rk_dup_found *found; } host[] = {
            {RK_DUP_ERROR, NULL, &f}, {pol, bits, &f}, {pol, NULL, NULL}};
        for (int k = 0; k < 3; k++) {
            taken = -1;
            CU_ASSERT(rk_gpu_csr_build(&t, nu, ni, host[k].out, host[k].pol, host[k].found, NULL, &d, &taken, &err) ==
                      RK_OK);
            CU_ASSERT_EQUAL(taken, 0);
            CU_ASSERT_PTR_NULL(d.ptr);
            CU_ASSERT_PTR_NULL(f.drop);
        }
        free(bits);
        rk_csr_free(&h);
        rk_triples_free(&want);
        rk_triples_free(&got);
        rk_triples_free(&t);
    }
    CU_ASSERT(compared >= 10);
}

/* Ratings left out (a holdout's): the host's matrix of the others; a pair
 * rated twice across the parts is still the host's. */
static void test_leave_out(void)
{
    unsigned long long s = 5;
    int compared = 0;
    for (int rep = 0; rep < 8; rep++) {
        const int32_t nu = 200 + (int32_t)(rk_test_rand(&s) % 3000), ni = 50 + (int32_t)(rk_test_rand(&s) % 900);
        rk_triples t, k;
        make(&t, nu, ni, 0.05, 300 + (unsigned long long)rep);
        const int64_t words = (t.n + 63) / 64;
        uint64_t *bits = calloc((size_t)(words > 0 ? words : 1), sizeof *bits);
        const double frac = rep == 0 ? 0.0 : rep == 1 ? 0.999 : 0.02 * rep;
        CU_ASSERT_FATAL(rk_triples_alloc(&k, t.n > 0 ? t.n : 1, 0, NULL) == RK_OK);
        k.n = 0;
        for (int64_t p = 0; p < t.n; p++) {
            if (rk_test_uniform(&s) < frac) {
                bits[p >> 6] |= (uint64_t)1 << (p & 63);
                continue;
            }
            k.user[k.n] = t.user[p];
            k.item[k.n] = t.item[p];
            k.rating[k.n] = t.rating[p];
            k.n++;
        }
        rk_csr h, d;
        rk_error err;
        int taken = -1;
        host_csr(&k, nu, ni, &h);
        CU_ASSERT_FATAL(rk_gpu_csr_build(&t, nu, ni, bits, RK_DUP_LAST, NULL, NULL, &d, &taken, &err) == RK_OK);
        if (taken) {
            same_csr(&d, &h);
            compared++;
        }
        rk_csr_free(&d);
        /* a pair of the kept part rated again among the left-out ones */
        int64_t a = -1, b = -1;
        for (int64_t p = 0; p < t.n && (a < 0 || b < 0); p++) {
            const int out = (int)(bits[p >> 6] >> (p & 63) & 1);
            if (out && a < 0) a = p;
            if (!out && b < 0) b = p;
        }
        if (a >= 0 && b >= 0) {
            t.user[a] = t.user[b];
            t.item[a] = t.item[b];
            taken = -1;
            CU_ASSERT(rk_gpu_csr_build(&t, nu, ni, bits, RK_DUP_LAST, NULL, NULL, &d, &taken, &err) == RK_OK);
            CU_ASSERT_EQUAL(taken, 0);
            rk_csr_free(&d);
        }
        rk_csr_free(&h);
        rk_triples_free(&k);
        rk_triples_free(&t);
        free(bits);
    }
    CU_ASSERT(compared >= 7);
}

static int same_lists(const rk_lists *a, const rk_lists *b)
{
    if (memcmp(a->len, b->len, (size_t)a->n_items * sizeof *a->len) != 0) return 0;
    for (int32_t i = 0; i < a->n_items; i++) {
        const size_t o = (size_t)i * (size_t)a->k, n = (size_t)a->len[i];
        if (memcmp(a->nbr + o, b->nbr + o, n * sizeof *a->nbr) || memcmp(a->sim + o, b->sim + o, n * sizeof *a->sim))
            return 0;
    }
    return 1;
}

/* The lists of model m on the GPU, and whether its user-major matrix was
 * kept on the device ("kept" in the call's detail). */
static void lists_of(const rk_model *m, rk_lists *l, const char **how, char *detail, size_t cap)
{
    rk_knn_opts o;
    rk_knn_opts_default(&o);
    o.k = 10;
    rk_knn_stats st;
    rk_error err;
    CU_ASSERT_FATAL(rk_lists_alloc(l, m->by_user.n_cols, o.k, NULL) == RK_OK);
    rk_status s = rk_gpu_knn(m, &o, NULL, l, NULL, NULL, NULL, &st, &err);
    if (s != RK_OK) fprintf(stderr, "rk_gpu_knn: %s\n", err.msg);
    CU_ASSERT_FATAL(s == RK_OK);
    snprintf(detail, cap, "%s", st.detail);
    *how = strstr(detail, "user-major kept, values up") ? "values up" : strstr(detail, "user-major kept") ? "kept"
                                                                                                         : "up";
}

/* keep_csr: the engine's calls on the kept matrix's host arrays copy it on
 * the device (the values too when they are the same array), with the lists
 * of an upload; forgotten, it is uploaded again. */
static void test_kept(void)
{
    const int32_t nu = 3000, ni = 400;
    rk_triples t;
    rk_csr d, h;
    rk_error err;
    int taken = 0;
    make(&t, nu, ni, 0.05, 77);
    rk_gpu_opts g = {0};
    g.keep_csr = 1;
    CU_ASSERT_FATAL(rk_gpu_csr_build(&t, nu, ni, NULL, RK_DUP_LAST, NULL, &g, &d, &taken, &err) == RK_OK);
    CU_ASSERT_FATAL(taken == 1);
    host_csr(&t, nu, ni, &h);
    rk_model a, b;
    CU_ASSERT_FATAL(rk_model_from_csr_deferred(&a, &d, 0, 0, 0, NULL) == RK_OK); /* the kept arrays */
    CU_ASSERT_FATAL(rk_model_from_csr(&b, &h, 0, 0, 0, 0, NULL) == RK_OK);       /* others, the same bits */
    rk_lists la, lb, lc, ld;
    const char *how;
    char detail[256];
    lists_of(&a, &la, &how, detail, sizeof detail);
    CU_ASSERT_STRING_EQUAL(how, "kept");
    lists_of(&b, &lb, &how, detail, sizeof detail);
    CU_ASSERT_STRING_EQUAL(how, "up");
    CU_ASSERT(same_lists(&la, &lb));
    /* the same pattern with other values (the ranking model's) */
    rk_model c = a;
    float *v = malloc((size_t)a.by_user.nnz * sizeof *v);
    for (int64_t p = 0; p < a.by_user.nnz; p++) v[p] = a.by_user.val[p] * a.by_user.val[p]; /* not affine */
    c.by_user.val = v;
    lists_of(&c, &lc, &how, detail, sizeof detail);
    CU_ASSERT_STRING_EQUAL(how, "values up");
    rk_gpu_forget_csr();
    lists_of(&c, &ld, &how, detail, sizeof detail);
    CU_ASSERT_STRING_EQUAL(how, "up");
    CU_ASSERT(same_lists(&lc, &ld));
    CU_ASSERT(!same_lists(&la, &lc)); /* other values, other lists: the copy took them */
    rk_gpu_forget_csr(); /* nothing kept: nothing done */
    free(v);
    rk_lists_free(&la);
    rk_lists_free(&lb);
    rk_lists_free(&lc);
    rk_lists_free(&ld);
    rk_model_free(&a);
    rk_model_free(&b);
    rk_triples_free(&t);
}

/* ---- the rows uploaded beside the parse (rk_gpu_rows) -------------------------------- */

static int dev_now(void *ud) { return *(const int *)ud; }

/* Raw ids of dense indices: gaps, and negative ones for the users. */
static int64_t raw_user(int32_t u) { return 3 * (int64_t)u - 5000; }
static int64_t raw_item(int32_t i) { return 5 * (int64_t)i + 7; }

typedef struct fed {
    int64_t *u, *i, *vu, *vi;
    float *r;
    rk_gpu_rows *p;
} fed;

/* Whole pages of their own, as the loader's rows have: the driver registers
 * whole pages, and two arrays sharing one would be registered twice. */
static void *pages(size_t bytes)
{
    return aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
}

/* t's rows as the loader hands them (raw ids, pieces of random sizes), and
 * the maps' values; dev: what the device callback answers; done: hold(1). */
static fed feed_rows(const rk_triples *t, int32_t nu, int32_t ni, const int *dev, int64_t min_rows, int done,
                     unsigned long long seed)
{
    fed f;
    f.u = pages((size_t)t->n * sizeof *f.u);
    f.i = pages((size_t)t->n * sizeof *f.i);
    f.r = pages((size_t)t->n * sizeof *f.r);
    memcpy(f.r, t->rating, (size_t)t->n * sizeof *f.r);
    f.vu = malloc((size_t)nu * sizeof *f.vu);
    f.vi = malloc((size_t)ni * sizeof *f.vi);
    for (int64_t k = 0; k < t->n; k++) f.u[k] = raw_user(t->user[k]), f.i[k] = raw_item(t->item[k]);
    for (int32_t k = 0; k < nu; k++) f.vu[k] = raw_user(k);
    for (int32_t k = 0; k < ni; k++) f.vi[k] = raw_item(k);
    f.p = rk_gpu_rows_new(min_rows, dev_now, (void *)dev);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f.p);
    unsigned long long s = seed;
    for (int64_t a = 0; a < t->n;) {
        const int64_t b = a + 1 + (int64_t)(rk_test_rand(&s) % (unsigned long long)(t->n / 5 + 1));
        const int64_t e = b < t->n ? b : t->n;
        rk_gpu_rows_ready(f.p, f.u, f.i, f.r, t->n, a, e);
        a = e;
    }
    rk_gpu_rows_hold(f.p, done);
    if (seed % 2) rk_gpu_rows_release(f.p); /* as the loader does before it cuts the rows (or not yet) */
    return f;
}

static void fed_free(fed *f)
{
    rk_gpu_rows_free(f->p);
    free(f->u);
    free(f->i);
    free(f->r);
    free(f->vu);
    free(f->vi);
}

/* The matrix sorted from the rows on the device (or, where they cannot be
 * used, from t as before) is the host's; @return whether the rows were taken. */
static int sorted_from_rows(const rk_triples *t, int32_t nu, int32_t ni, fed *f, rk_dup_policy pol, char *why)
{
    rk_triples c = copy_of(t), hc = copy_of(t);
    rk_csr h, d;
    rk_dup_report rep;
    CU_ASSERT_FATAL(rk_triples_dedupe_csr(&hc, nu, ni, pol, NULL, &h, NULL, &rep, NULL) == RK_OK);
    rk_gpu_opts g = {0};
    g.rows = f->p;
    g.user_ids = f->vu;
    g.item_ids = f->vi;
    rk_dup_found found;
    rk_error err;
    int taken = -1;
    rk_status st = rk_gpu_csr_build(&c, nu, ni, NULL, pol, &found, &g, &d, &taken, &err);
    if (st != RK_OK || taken != 1 || d.nnz != h.nnz)
        fprintf(stderr, "\nrk_gpu_csr_build (%lld ratings): status %d, taken %d, %lld entries, the host's %lld: %s\n",
                (long long)t->n, (int)st, taken, (long long)d.nnz, (long long)h.nnz, st != RK_OK ? err.msg : "");
    CU_ASSERT_FATAL(st == RK_OK && taken == 1);
    CU_ASSERT_FATAL(rk_triples_resolve(&c, &found, &err) == RK_OK);
    rk_dup_found_free(&found);
    same_csr(&d, &h);
    CU_ASSERT_EQUAL(c.n, hc.n); /* the triples resolved as the host's sort resolves them */
    CU_ASSERT(c.n == hc.n && memcmp(c.rating, hc.rating, (size_t)c.n * sizeof *c.rating) == 0);
    rk_gpu_rows_report r;
    rk_gpu_rows_stats(f->p, &r);
    snprintf(why, 160, "%s", r.why);
    rk_csr_free(&d);
    rk_csr_free(&h);
    rk_triples_free(&c);
    rk_triples_free(&hc);
    return r.taken;
}

/* Raw ids mapped on the device (a bitmap of the maps' values) give the
 * host's matrix bit for bit, over pieces of every size and more rows than
 * one pinned buffer holds, repeated pairs resolved too; rows dropped
 * (hold(0)), a device that never comes or is not there, too few rows, ids
 * too far apart for a bitmap, or an id the maps lack leave the upload to
 * rk_gpu_csr_build: the same matrix. */
static void test_rows(void)
{
    unsigned long long s = 77;
    char why[160];
    const int dev0 = 0, later = -2, none = -1;
    int took = 0;
    for (int rep = 0; rep < 8; rep++) {
        const int big = rep == 7;
        const int32_t nu = big ? 90000 : 2 + (int32_t)(rk_test_rand(&s) % 3000);
        const int32_t ni = big ? 2000 : 2 + (int32_t)(rk_test_rand(&s) % 2000);
        rk_triples t;
        /* big: about 9M ratings, each column registered in pieces of 32 MB, copies across them */
        make(&t, nu, ni, big ? 0.05 : 0.01 + 0.1 * rk_test_uniform(&s), 900 + (unsigned long long)rep);
        if (rep % 3 == 2) add_repeats(&t, 40 + (unsigned long long)rep);
        fed f = feed_rows(&t, nu, ni, &dev0, 0, 1, 60 + (unsigned long long)rep);
        const int got = sorted_from_rows(&t, nu, ni, &f, rep % 2 ? RK_DUP_MEAN : RK_DUP_LAST, why);
        if (!got) fprintf(stderr, "\nrows not taken (%lld ratings): %s\n", (long long)t.n, why);
        took += got;
        fed_free(&f);
        rk_triples_free(&t);
    }
    CU_ASSERT_EQUAL(took, 8);
    rk_triples t;
    make(&t, 500, 300, 0.1, 5);
    struct { const int *dev; int64_t min_rows; int done; int corrupt; const char *why; } no[] = {
        {&dev0, 0, 0, 0, "the rows had to move or hold string ids"},
        {&later, 0, 1, 0, "the device was not ready when the load ended"},
        {&none, 0, 1, 0, NULL}, /* stopped with "no usable GPU", or not ready yet at the end */
        {&dev0, 1 << 30, 1, 0, "rows at most: the host's upload is as fast"},
        {&dev0, 0, 1, 1, "ids too far apart for a bitmap"},
        {&dev0, 0, 1, 2, "ids on the device were not in the maps"},
    };
    for (size_t k = 0; k < sizeof no / sizeof no[0]; k++) {
        fed f = feed_rows(&t, 500, 300, no[k].dev, no[k].min_rows, no[k].done, k);
        if (no[k].corrupt == 1) f.vi[299] = f.vi[0] + ((int64_t)1 << 40);
        if (no[k].corrupt == 2) f.vu[250] = f.vu[249]; /* user 250's id missing from the map */
        CU_ASSERT_EQUAL(sorted_from_rows(&t, 500, 300, &f, RK_DUP_LAST, why), 0);
        if (no[k].why != NULL && strstr(why, no[k].why) == NULL) fprintf(stderr, "\ncase %zu: %s\n", k, why);
        CU_ASSERT(no[k].why == NULL || strstr(why, no[k].why) != NULL);
        fed_free(&f);
    }
    /* ratings grouped by user: the host's sort keeps them, nothing is copied */
    rk_triples g = copy_of(&t);
    for (int64_t k = 0; k < g.n; k++) g.user[k] = (int32_t)(k * 500 / g.n);
    fed f = feed_rows(&g, 500, 300, &dev0, 0, 1, 3);
    rk_gpu_rows_report r;
    rk_gpu_rows_stats(f.p, &r);
    CU_ASSERT_EQUAL(r.rows, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.why, "grouped by user"));
    fed_free(&f);
    rk_triples_free(&g);
    rk_triples_free(&t);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"random shapes against the host's sort", test_random_shapes},
        {"6M ratings, many pinned pieces", test_large},
        {"ratings left out (a holdout)", test_leave_out},
        {"left to the host, and a failing device", test_left_to_host},
        {"repeated pairs resolved on the GPU", test_repeats},
        {"the matrix kept for the engine", test_kept},
        {"the rows uploaded beside the parse", test_rows},
        {NULL, NULL},
    };
    static const rk_test_case quick[] = {
        {"random shapes against the host's sort", test_random_shapes},
        {"ratings left out (a holdout)", test_leave_out},
        {"left to the host, and a failing device", test_left_to_host},
        {"repeated pairs resolved on the GPU", test_repeats},
        {"the matrix kept for the engine", test_kept},
        {"the rows uploaded beside the parse", test_rows},
        {NULL, NULL},
    };
    return rk_test_gpu_main("gpu_csr", cases, quick);
}
