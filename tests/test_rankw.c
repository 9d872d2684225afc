/* The ranking model (engine/rk_rankw.c, CONTRACT.md §5b) through the CPU
 * engine, against a float64 brute force written from the contract: the
 * transformed values unrounded, dense columns, the similarity of every
 * pair, §3's order, then the locality exponent and the normalisation. */
#include "test_rankw.h"
#include "rk_knn.h"
#include "rk_model.h"

#define AT(M, a, b, cols) ((M)[(size_t)(a) * (size_t)(cols) + (size_t)(b)])

static int g_lists; /* lists compared */

/* The dense transformed matrix X (nu × ni) of CONTRACT.md §5b. */
static void ref_values(const rk_triples *t, int nu, int ni, const rk_rankw_opts *o, double *X, double *P)
{
    double *R = calloc((size_t)nu * ni, sizeof *R), *B = calloc((size_t)nu * ni, sizeof *B);
    for (int64_t p = 0; p < t->n; p++) {
        AT(R, t->user[p], t->item[p], ni) = t->rating[p];
        AT(B, t->user[p], t->item[p], ni) = 1.0;
    }
    double *nI = calloc((size_t)nu, sizeof *nI), *len = calloc((size_t)ni, sizeof *len);
    for (int u = 0; u < nu; u++)
        for (int i = 0; i < ni; i++) {
            const double v = o->ratings ? AT(R, u, i, ni) : 1.0;
            nI[u] += AT(B, u, i, ni);
            if (AT(B, u, i, ni) > 0) len[i] += v;
        }
    double mean = 0; /* over the items with ratings: the catalogue of the weights */
    int nk = 0;
    for (int i = 0; i < ni; i++) {
        int rated = 0;
        for (int u = 0; u < nu; u++) rated |= AT(B, u, i, ni) > 0;
        nk += rated;
        mean += len[i];
    }
    mean = nk > 0 ? mean / nk : 1.0;
    for (int u = 0; u < nu; u++)
        for (int i = 0; i < ni; i++) {
            double x = 0.0;
            if (AT(B, u, i, ni) > 0) {
                const double v = o->ratings ? AT(R, u, i, ni) : 1.0;
                const double idf = fmax(0.0, log((double)nk / (1.0 + nI[u])));
                const double L = (1 - o->bm25_b) + o->bm25_b * len[i] / mean;
                if (o->sim == RK_METRIC_RP3BETA) x = pow(nI[u], -o->alpha / 2);
                else if (o->weighting == RK_RANKW_NONE) x = v;
                else if (o->weighting == RK_RANKW_TFIDF) x = sqrt(v) * idf;
                else x = v * (o->bm25_k1 + 1) / (o->bm25_k1 * L + v) * idf;
            }
            AT(X, u, i, ni) = x;
            AT(P, u, i, ni) = AT(B, u, i, ni);
        }
    free(R); free(B); free(nI); free(len);
}

/* sim(a, b) of CONTRACT.md §5b over the dense columns; *n the co-raters. */
static double ref_sim(const double *X, const double *P, int nu, int ni, const rk_rankw_opts *o, int a, int b,
                      int *n)
{
    double dot = 0, na = 0, nb = 0, ca = 0, cb = 0;
    *n = 0;
    for (int u = 0; u < nu; u++) {
        const double xa = AT(X, u, a, ni), xb = AT(X, u, b, ni);
        dot += xa * xb;
        na += xa * xa;
        nb += xb * xb;
        ca += AT(P, u, a, ni);
        cb += AT(P, u, b, ni);
        *n += AT(P, u, a, ni) > 0 && AT(P, u, b, ni) > 0; /* co-raters, whatever their values */
    }
    if (*n == 0) return 0.0;
    if (o->sim == RK_METRIC_RP3BETA) return dot * pow(ca, -o->alpha) * pow(cb, -o->beta);
    const double den = pow(na, o->alpha) * pow(nb, 1 - o->alpha) + o->shrink;
    return den > 0 ? dot / den : 0.0;
}

static void check(int nu, int ni, double dens, int ones, int every, int hole, const rk_rankw_opts *o,
                  unsigned long long seed)
{
    rk_triples t;
    rk_model m;
    rk_rankw_model tm;
    rk_knn_opts ko;
    rk_error err;
    if (!rkt_setup(nu, ni, dens, ones, every, hole, o, seed, &t, &m, &tm, &ko)) return;
    /* the rounded values: integers below 2^24 whose products sum below 2^52 */
    int64_t most = 0;
    for (int i = 0; i < ni; i++)
        if (m.by_item.ptr[i + 1] - m.by_item.ptr[i] > most) most = m.by_item.ptr[i + 1] - m.by_item.ptr[i];
    for (int64_t p = 0; p < m.by_user.nnz; p++) {
        const double v = tm.model.by_user.val[p];
        CU_ASSERT(v == nearbyint(v) && v >= 0 && v < 16777216.0);
        CU_ASSERT(v * v * (double)most < 4503599627370496.0);
    }
    rk_lists l;
    CU_ASSERT_FATAL(rk_lists_alloc(&l, ni, o->k, &err) == RK_OK);
    rk_knn_stats st;
    CU_ASSERT_FATAL(rk_knn_cpu(&tm.model, &ko, &l, NULL, &st, &err) == RK_OK);
    /* rp3beta's values are the user's alone: the engine's walk without them */
    if (o->sim == RK_METRIC_RP3BETA) CU_ASSERT(strstr(st.path, "a value per user") != NULL);
    rk_rankw_shape(o, &l);

    double *X = calloc((size_t)nu * ni, sizeof *X), *P = calloc((size_t)nu * ni, sizeof *P), *row = malloc(sizeof(double) * (size_t)ni);
    int *sup = malloc(sizeof(int) * (size_t)ni);
    ref_values(&t, nu, ni, o, X, P);
    for (int i = 0; i < ni; i++) {
        int cnt = 0;
        for (int j = 0; j < ni; j++) {
            row[j] = j == i ? 0.0 : ref_sim(X, P, nu, ni, o, i, j, &sup[j]);
            cnt += row[j] > 0;
        }
        const int want = cnt < o->k ? cnt : o->k;
        CU_ASSERT_EQUAL(l.len[i], want);
        if (l.len[i] != want) continue;
        /* the reference list: best first, equal values by index; the engine may
         * swap entries whose exact values differ by the rounding of the values */
        double prev = INFINITY, total = 0.0, shaped[1024];
        int taken[1024];
        for (int r = 0; r < want; r++) {
            int best = -1;
            for (int j = 0; j < ni; j++) {
                int used = 0;
                for (int q = 0; q < r; q++) used |= taken[q] == j;
                if (!used && row[j] > 0 && (best < 0 || row[j] > row[best])) best = j;
            }
            taken[r] = best;
            CU_ASSERT(row[best] <= prev);
            prev = row[best];
            shaped[r] = pow(row[best], o->q);
            total += shaped[r];
        }
        for (int r = 0; r < want; r++) {
            const int32_t got = l.nbr[(size_t)i * o->k + r];
            const double ref = o->normalize ? shaped[r] / total : shaped[r];
            const double gs = l.sim[(size_t)i * o->k + r];
            CU_ASSERT(fabs(gs - ref) <= 1e-4 * fabs(ref) + 1e-7);
            if (got != taken[r]) CU_ASSERT(fabs(row[got] - row[taken[r]]) <= 1e-4 * row[taken[r]]);
            CU_ASSERT_EQUAL(l.support[(size_t)i * o->k + r], sup[got]);
            CU_ASSERT(got != i);
        }
        g_lists++;
    }
    free(X); free(P); free(row); free(sup);
    rk_lists_free(&l);
    rk_rankw_free(&tm);
    rk_model_free(&m);
    rk_triples_free(&t);
}

static void test_configs(void)
{
    rk_rankw_opts cf[64];
    const int n = rkt_configs(cf, 64);
    CU_ASSERT(n >= 16);
    unsigned long long s = 4242;
    for (int c = 0; c < n; c++) {
        check(40, 30, 0.25, 0, 0, 0, &cf[c], 100 + c);
        check(30, 25, 0.3, 1, 0, 0, &cf[c], 200 + c);
        check(25, 20, 0.4, 0, 1, 1, &cf[c], 300 + c); /* a user who rated every item, an unrated item */
        const int nu = 2 + (int)(rk_test_rand(&s) % 40), ni = 1 + (int)(rk_test_rand(&s) % 40);
        check(nu, ni, 0.05 + 0.8 * rk_test_uniform(&s), c % 2, 0, 0, &cf[c], 400 + c);
    }
    CU_ASSERT(g_lists > 1000);
}

static void test_edges(void)
{
    rk_rankw_opts o;
    rk_rankw_opts_default(&o);
    check(10, 1, 0.9, 0, 0, 0, &o, 1);   /* one item: empty lists */
    check(3, 40, 1.0, 1, 0, 0, &o, 2);   /* every user rates every item: equal similarities, ties by index */
    o.sim = RK_METRIC_WEIGHTED_COSINE;
    o.weighting = RK_RANKW_TFIDF;
    check(3, 40, 1.0, 1, 0, 0, &o, 3);   /* idf 0 for everybody: no list at all */
    o.k = 500;
    check(20, 15, 0.5, 0, 0, 0, &o, 4);  /* k above the item count */
}

/* rk_rankw_restrict: the lists of m without some users' rows are those of
 * a model built from the other users' ratings alone. */
static void test_restrict(void)
{
    rk_triples t, kept;
    rkt_data(&t, 40, 30, 0.3, 0, 0, 0, 77);
    CU_ASSERT_FATAL(rk_triples_alloc(&kept, t.n, 0, NULL) == RK_OK);
    uint8_t drop[40] = {0};
    for (int u = 0; u < 40; u += 3) drop[u] = 1;
    kept.n = 0;
    for (int64_t p = 0; p < t.n; p++)
        if (!drop[t.user[p]]) {
            kept.user[kept.n] = t.user[p];
            kept.item[kept.n] = t.item[p];
            kept.rating[kept.n++] = t.rating[p];
        }
    rk_model m, mk, r;
    rk_error err;
    CU_ASSERT_FATAL(rk_model_build(&m, &t, 40, 30, 1, 0.5, 5, 0, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_model_build(&mk, &kept, 40, 30, 1, 0.5, 5, 0, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_rankw_restrict(&m, drop, &r, &err) == RK_OK);
    CU_ASSERT_EQUAL(r.by_user.nnz, kept.n);
    rk_rankw_opts o;
    rk_rankw_opts_default(&o);
    rk_lists a, b;
    const rk_model *two[2] = {&r, &mk};
    rk_lists *out[2] = {&a, &b};
    for (int x = 0; x < 2; x++) {
        rk_rankw_model tm;
        CU_ASSERT_FATAL(rk_rankw_build(two[x], &o, &tm, &err) == RK_OK);
        rk_knn_opts base, ko;
        rk_knn_opts_default(&base);
        rk_rankw_knn_opts(&o, &tm, &base, &ko);
        CU_ASSERT_FATAL(rk_lists_alloc(out[x], 30, o.k, &err) == RK_OK);
        CU_ASSERT_FATAL(rk_knn_cpu(&tm.model, &ko, out[x], NULL, NULL, &err) == RK_OK);
        rk_rankw_free(&tm);
    }
    int64_t entries = 0;
    for (int i = 0; i < 30; i++) {
        CU_ASSERT_EQUAL(a.len[i], b.len[i]);
        entries += a.len[i];
    }
    CU_ASSERT(entries > 100);
    CU_ASSERT(memcmp(a.nbr, b.nbr, sizeof(int32_t) * 30 * (size_t)o.k) == 0);
    CU_ASSERT(memcmp(a.sim, b.sim, sizeof(float) * 30 * (size_t)o.k) == 0);
    rk_lists_free(&a);
    rk_lists_free(&b);
    rk_model_free(&m);
    rk_model_free(&mk);
    rk_model_free(&r);
    rk_triples_free(&t);
    rk_triples_free(&kept);
}

/* Values left a user (rk_rankw_build_rows): rp3beta's stay one a user, with
 * the grid of the full values; expanded (rk_rankw_expand), they are
 * rk_rankw_build's bit for bit, item-major too; other models are built
 * whole.  Users without ratings (whose value would be infinite) take no
 * part. */
static void test_rows(void)
{
    rk_rankw_opts cf[64];
    const int n = rkt_configs(cf, 64);
    int rows = 0;
    for (int c = 0; c < n; c++) {
        rk_triples t;
        rk_model m;
        rk_rankw_model full, lazy;
        rk_knn_opts ko;
        rk_error err;
        const unsigned long long seed = 900 + (unsigned long long)c;
        if (!rkt_setup(150, 80, 0.1, c % 2, 0, 1, &cf[c], seed, &t, &m, &full, &ko)) continue;
        CU_ASSERT_FATAL(rk_rankw_build_rows(&m, &cf[c], &lazy, &err) == RK_OK);
        const int per_user = cf[c].sim == RK_METRIC_RP3BETA;
        CU_ASSERT_EQUAL(lazy.row_val != NULL, per_user);
        CU_ASSERT_EQUAL(lazy.model.row_val == lazy.row_val, 1);
        CU_ASSERT_EQUAL(lazy.quantum, full.quantum);
        if (per_user) {
            rows++;
            CU_ASSERT_PTR_NULL(lazy.model.by_user.val);
            CU_ASSERT_PTR_NULL(lazy.model.by_item.val);
            int wide_full, wide_rows;
            double qf, qr;
            CU_ASSERT_EQUAL(rk_knn_grid_scale(&lazy.model, &qr), rk_knn_grid_scale(&full.model, &qf));
            CU_ASSERT_EQUAL(qr, qf);
            wide_full = rk_knn_wide_grid(&full.model);
            wide_rows = rk_knn_wide_grid(&lazy.model);
            CU_ASSERT_EQUAL(wide_rows, wide_full);
        }
        /* the host's sums over the items read a user's value where there
         * are no entries' values: the same doubles, item-major ready or
         * deferred (from the user-major rows) */
        double *sf = malloc(80 * sizeof *sf), *sl = malloc(80 * sizeof *sl);
        static const rk_item_term terms[] = {RK_ITEM_VALUE, RK_ITEM_SQUARE, RK_ITEM_RATER_ROWS};
        for (int d = 0; d < 2; d++)
            for (int q = 0; q < 3; q++) {
                rk_model fm = full.model, lm = lazy.model;
                if (d) { /* as if the item-major entries were deferred */
                    fm.by_item.idx = lm.by_item.idx = NULL;
                    fm.by_item.val = lm.by_item.val = NULL;
                }
                CU_ASSERT_EQUAL(rk_model_item_sums(&fm, terms[q], 0.5, sf, NULL), RK_OK);
                CU_ASSERT_EQUAL(rk_model_item_sums(&lm, terms[q], 0.5, sl, NULL), RK_OK);
                CU_ASSERT(memcmp(sf, sl, 80 * sizeof *sf) == 0);
            }
        free(sf);
        free(sl);
        CU_ASSERT_EQUAL_FATAL(rk_rankw_expand(&lazy, &err), RK_OK);
        CU_ASSERT_PTR_NULL(lazy.model.row_val);
        const rk_csr *a = &full.model.by_user, *b = &lazy.model.by_user;
        CU_ASSERT(memcmp(a->val, b->val, (size_t)a->nnz * sizeof *a->val) == 0);
        const rk_csr *ai = &full.model.by_item, *bi = &lazy.model.by_item;
        CU_ASSERT((ai->val == NULL) == (bi->val == NULL));
        if (ai->val != NULL) CU_ASSERT(memcmp(ai->val, bi->val, (size_t)ai->nnz * sizeof *ai->val) == 0);
        CU_ASSERT_EQUAL(rk_rankw_expand(&lazy, &err), RK_OK); /* twice: nothing to do */
        rk_rankw_free(&lazy);
        rk_rankw_free(&full);
        rk_model_free(&m);
        rk_triples_free(&t);
    }
    CU_ASSERT(rows >= 4);
}

static void test_options(void)
{
    rk_rankw_opts o;
    rk_error err;
    rk_rankw_opts_default(&o);
    CU_ASSERT(rk_rankw_on(&o));
    CU_ASSERT_EQUAL(rk_rankw_check(&o, &err), RK_OK);
    rk_metric m;
    CU_ASSERT_EQUAL(rk_rankw_parse_sim("lists", &m), RK_OK);
    CU_ASSERT_EQUAL(m, RK_METRIC_COUNT);
    CU_ASSERT_EQUAL(rk_rankw_parse_sim("cosine", &m), RK_OK);
    CU_ASSERT_EQUAL(m, RK_METRIC_WEIGHTED_COSINE);
    CU_ASSERT_EQUAL(rk_rankw_parse_sim("pearson", &m), RK_E_ARG);
    rk_rankw_weighting w;
    CU_ASSERT_EQUAL(rk_rankw_parse_weighting("bm25", &w), RK_OK);
    CU_ASSERT_EQUAL(w, RK_RANKW_BM25);
    CU_ASSERT_EQUAL(rk_rankw_parse_weighting("okapi", &w), RK_E_ARG);
    o.q = 0.0;
    CU_ASSERT_EQUAL(rk_rankw_check(&o, &err), RK_E_ARG);
    o.q = 1.0;
    o.beta = -1.0;
    CU_ASSERT_EQUAL(rk_rankw_check(&o, &err), RK_E_ARG);
    o.sim = RK_METRIC_WEIGHTED_COSINE;
    o.alpha = 1.5;
    CU_ASSERT_EQUAL(rk_rankw_check(&o, &err), RK_E_ARG);
    o.alpha = 0.5;
    o.bm25_b = 2.0;
    CU_ASSERT_EQUAL(rk_rankw_check(&o, &err), RK_E_ARG);
    o.sim = RK_METRIC_COUNT; /* lists: nothing to check */
    CU_ASSERT_EQUAL(rk_rankw_check(&o, &err), RK_OK);
    CU_ASSERT(!rk_rankw_on(&o));
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"every similarity, weighting and shaping against the float64 brute force", test_configs},
        {"one item, all ties, zero idf, k above the items", test_edges},
        {"option names and ranges", test_options},
        {"values a user, then expanded: rk_rankw_build's", test_rows},
        {"a model without some users' rows", test_restrict},
        {NULL, NULL},
    };
    return rk_test_main("rankw", cases);
}
