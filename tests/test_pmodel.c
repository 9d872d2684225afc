/* The models of --predict interpolate and global (engine/rk_pmodel.h) on the
 * CPU: the least-squares weights against a float64 dense solve with partial
 * pivoting written here (random systems, tiny, ill-conditioned and singular
 * ones, with and without the regularisation); a covariance row against its
 * definition summed from a dense residual matrix; one epoch of the global
 * model on a hand-sized example against the update computed by hand here;
 * the whole stage (through the engine seam) the same bits for 1, 2 and 3
 * threads, its neighbours ascending, and with a fallback where a system has
 * no positive pivot; a saved model's answers from copies of the training rows
 * the stage's, and global's folded-in bias by its definition. */
#include "rk_pmodel.h"
#include "rk_backend.h"
#include "test_util.h"
#include "test_pmodel_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


/* x solving M x = b (n x n, row-major) by Gaussian elimination with
 * partial pivoting; 0 when singular. */
static int dense_solve(int n, double *M, double *b, double *x)
{
    for (int c = 0; c < n; c++) {
        int p = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(M[r * n + c]) > fabs(M[p * n + c])) p = r;
        if (fabs(M[p * n + c]) < 1e-300) return 0;
        for (int t = 0; t < n; t++) {
            double v = M[c * n + t];
            M[c * n + t] = M[p * n + t];
            M[p * n + t] = v;
        }
        double v = b[c];
        b[c] = b[p];
        b[p] = v;
        for (int r = c + 1; r < n; r++) {
            const double f = M[r * n + c] / M[c * n + c];
            for (int t = c; t < n; t++) M[r * n + t] -= f * M[c * n + t];
            b[r] -= f * b[c];
        }
    }
    for (int r = n - 1; r >= 0; r--) {
        double s = b[r];
        for (int t = r + 1; t < n; t++) s -= M[r * n + t] * x[t];
        x[r] = s / M[r * n + r];
    }
    return 1;
}

/* A random symmetric "covariance" matrix of N items: B Bᵀ / d + jitter
 * (positive definite), or of rank r < N (B with r columns). */
static void make_cov(int N, int rank, unsigned long long seed, float *cov)
{
    double *B = malloc((size_t)N * rank * sizeof *B);
    unsigned long long s = seed;
    for (int x = 0; x < N * rank; x++) B[x] = rk_test_uniform(&s) * 2.0 - 1.0;
    for (int a = 0; a < N; a++)
        for (int b = 0; b < N; b++) {
            double v = 0.0;
            for (int t = 0; t < rank; t++) v += B[a * rank + t] * B[b * rank + t];
            cov[a * N + b] = (float)(v / rank);
        }
    free(B);
}

static void test_solve(void)
{
    enum { N = 40 };
    static float cov[N * N];
    int32_t nb[N];
    double a[N * N], w[N], M[N * N], rhs[N], ref[N];
    int checked = 0;
    for (int trial = 0; trial < 60; trial++) {
        const int n = 1 + trial % 24, rank = trial % 5 == 4 ? 1 + n / 3 : N;
        const double lambda = trial % 3 == 0 ? 0.0 : trial % 3 == 1 ? 0.01 : 1.5;
        make_cov(N, rank, 1000 + (unsigned long long)trial, cov);
        const int32_t i = trial % N;
        for (int x = 0, j = 0; x < n; j++) /* n items other than i, ascending */
            if (j != i) nb[x++] = j;
        const int ok = rk_pmodel_solve(cov, N, i, nb, n, lambda, a, w);
        for (int x = 0; x < n; x++) {
            for (int y = 0; y < n; y++) M[x * n + y] = (double)cov[nb[x] * N + nb[y]] + (x == y ? lambda : 0.0);
            rhs[x] = (double)cov[i * N + nb[x]];
        }
        if (rank < n && lambda == 0.0) { /* singular: no positive pivot, w left alone */
            CU_ASSERT_EQUAL(ok, 0);
            continue;
        }
        if (!ok) continue; /* an ill-conditioned system the float matrix made indefinite */
        CU_ASSERT_FATAL(dense_solve(n, M, rhs, ref));
        double scale = 1.0;
        for (int x = 0; x < n; x++) scale = fmax(scale, fabs(ref[x]));
        for (int x = 0; x < n; x++) CU_ASSERT(fabs(w[x] - ref[x]) <= 1e-7 * scale);
        checked++;
    }
    CU_ASSERT(checked >= 30);
    /* a 1 x 1 system: w = b / (a + λ) */
    cov[0] = 2.0f, cov[1] = 0.5f, cov[N] = 0.5f, cov[N + 1] = 4.0f;
    nb[0] = 1;
    CU_ASSERT_FATAL(rk_pmodel_solve(cov, N, 0, nb, 1, 1.0, a, w));
    CU_ASSERT(fabs(w[0] - 0.5 / 5.0) < 1e-15);
    /* a zero matrix: singular without λ, w = 0 with it */
    memset(cov, 0, sizeof cov);
    nb[0] = 1, nb[1] = 2;
    CU_ASSERT_EQUAL(rk_pmodel_solve(cov, N, 0, nb, 2, 0.0, a, w), 0);
    CU_ASSERT_FATAL(rk_pmodel_solve(cov, N, 0, nb, 2, 0.1, a, w));
    CU_ASSERT(w[0] == 0.0 && w[1] == 0.0);
}

/* Row j: s_jl = Σ e_vj e_vl and n_jl over the common raters, from a dense
 * residual matrix, shrunk as CONTRACT.md §4b says. */
static void test_cov_rows(void)
{
    rk_model m;
    pmodel_make_model(&m, 30, 12, 0.4, 1, 7);
    const int nu = 30, ni = 12;
    double *E = calloc((size_t)nu * ni, sizeof *E);
    int *R = calloc((size_t)nu * ni, sizeof *R);
    for (int u = 0; u < nu; u++)
        for (int64_t p = m.by_user.ptr[u]; p < m.by_user.ptr[u + 1]; p++) {
            const int i = m.by_user.idx[p];
            E[u * ni + i] = (double)m.by_user.val[p] - m.mu - m.bu[u] - m.bi[i];
            R[u * ni + i] = 1;
        }
    double diag = 0.0;
    for (int i = 0; i < ni; i++) {
        double s = 0.0;
        int c = 0;
        for (int u = 0; u < nu; u++) s += R[u * ni + i] ? E[u * ni + i] * E[u * ni + i] : 0.0, c += R[u * ni + i];
        diag += s / c;
    }
    diag /= ni;
    CU_ASSERT(fabs(rk_pmodel_cov_diag(&m) - diag) < 1e-12);
    float *cov = NULL;
    rk_error err;
    const double beta = 7.0;
    CU_ASSERT_FATAL(rk_pmodel_cov_cpu(&m, beta, 2, &cov, &err) == RK_OK);
    for (int j = 0; j < ni; j++)
        for (int l = 0; l < ni; l++) {
            double s = 0.0;
            int c = 0;
            for (int u = 0; u < nu; u++)
                if (R[u * ni + j] && R[u * ni + l]) s += E[u * ni + j] * E[u * ni + l], c++;
            const double want = (s + (j == l ? beta * diag : 0.0)) / (c + beta);
            CU_ASSERT(fabs((double)cov[j * ni + l] - want) <= 1e-6 * fmax(1.0, fabs(want)));
            CU_ASSERT(cov[j * ni + l] == cov[l * ni + j]);
        }
    free(cov);
    free(E);
    free(R);
    rk_model_free(&m);
}

/* Three users, three items; item 0's list is {2, 1}, item 1's {0}, item
 * 2's empty.  One epoch at step γ, regularisation λ, by hand. */
static void test_global_epoch(void)
{
    rk_triples t;
    CU_ASSERT_FATAL(rk_triples_alloc(&t, 6, 0, NULL) == RK_OK);
    const int32_t U[6] = {0, 0, 0, 1, 1, 2}, I[6] = {0, 1, 2, 0, 1, 0};
    const float V[6] = {4.0f, 3.0f, 5.0f, 2.0f, 1.0f, 5.0f};
    memcpy(t.user, U, sizeof U), memcpy(t.item, I, sizeof I), memcpy(t.rating, V, sizeof V);
    rk_model m;
    rk_error err;
    CU_ASSERT_FATAL(rk_model_build(&m, &t, 3, 3, 0, 0, 0, 1, &err) == RK_OK);
    rk_triples_free(&t);
    rk_lists l;
    CU_ASSERT_FATAL(rk_lists_alloc(&l, 3, 2, &err) == RK_OK);
    l.len[0] = 2, l.nbr[0] = 2, l.nbr[1] = 1;
    l.len[1] = 1, l.nbr[2] = 0;
    l.len[2] = 0;
    rk_pmodel_links x;
    rk_pmodel_global g;
    CU_ASSERT_FATAL(rk_pmodel_links_cpu(&m, &l, 1, &x, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_pmodel_global_init(&m, &l, &g, &err) == RK_OK);
    /* by hand: residuals against the ALS baselines */
    double e[3][3];
    for (int u = 0; u < 3; u++)
        for (int i = 0; i < 3; i++) e[u][i] = (double)(float)(0.0); /* unused cells */
    for (int p = 0; p < 6; p++) e[U[p]][I[p]] = (double)(float)((double)V[p] - ((m.mu + m.bu[U[p]]) + m.bi[I[p]]));
    double bu[3] = {m.bu[0], m.bu[1], m.bu[2]}, bi[3] = {m.bi[0], m.bi[1], m.bi[2]};
    double w0[2] = {0, 0}, c0[2] = {0, 0}, w1 = 0, c1 = 0;
    const double lr = 0.01, reg = 0.1;
    /* item 0, users 0 (links to slots 0 = item 2 and 1 = item 1), 1 (slot 1 = item 1), 2 (none) */
    {
        double err0 = V[0] - (m.mu + bu[0] + bi[0]);
        const double n0 = 1.0 / sqrt(2.0);
        bi[0] += lr * (err0 - reg * bi[0]);
        w0[0] += lr * (n0 * err0 * e[0][2] - reg * w0[0]), c0[0] += lr * (n0 * err0 - reg * c0[0]);
        w0[1] += lr * (n0 * err0 * e[0][1] - reg * w0[1]), c0[1] += lr * (n0 * err0 - reg * c0[1]);
        double err1 = V[3] - ((m.mu + bu[1] + bi[0]) + 1.0 * (w0[1] * e[1][1] + c0[1]));
        bi[0] += lr * (err1 - reg * bi[0]);
        w0[1] += lr * (err1 * e[1][1] - reg * w0[1]), c0[1] += lr * (err1 - reg * c0[1]);
        double err2 = V[5] - (m.mu + bu[2] + bi[0]);
        bi[0] += lr * (err2 - reg * bi[0]);
    }
    /* item 1, users 0 and 1 (both rated item 0, slot 0) */
    for (int u = 0; u < 2; u++) {
        const double r = u == 0 ? V[1] : V[4];
        const double er = r - ((m.mu + bu[u] + bi[1]) + (w1 * e[u][0] + c1));
        bi[1] += lr * (er - reg * bi[1]);
        w1 += lr * (er * e[u][0] - reg * w1), c1 += lr * (er - reg * c1);
    }
    /* item 2, user 0, no links */
    bi[2] += lr * ((V[2] - (m.mu + bu[0] + bi[2])) - reg * bi[2]);
    for (int i = 0; i < 3; i++) rk_pmodel_global_item_step(&m, &x, lr, reg, i, &g);
    for (int i = 0; i < 3; i++) CU_ASSERT(fabs(g.bi[i] - bi[i]) < 1e-12);
    CU_ASSERT(fabs(g.w[0] - w0[0]) < 1e-12 && fabs(g.w[1] - w0[1]) < 1e-12 && fabs(g.w[2] - w1) < 1e-12);
    CU_ASSERT(fabs(g.c[0] - c0[0]) < 1e-12 && fabs(g.c[1] - c0[1]) < 1e-12 && fabs(g.c[2] - c1) < 1e-12);
    CU_ASSERT(g.w[0] != 0.0 && g.c[2] != 0.0);
    /* the user half: user 0's ratings in item order, the new item side read */
    double b0 = bu[0];
    const double r0[3] = {V[0], V[1], V[2]};
    for (int i = 0; i < 3; i++) {
        double sum = 0.0, n = 0.0;
        if (i == 0) sum = w0[0] * e[0][2] + c0[0] + w0[1] * e[0][1] + c0[1], n = 2.0;
        if (i == 1) sum = w1 * e[0][0] + c1, n = 1.0;
        const double er = r0[i] - ((m.mu + b0 + bi[i]) + (n > 0 ? sum / sqrt(n) : 0.0));
        b0 += lr * (er - reg * b0);
    }
    rk_pmodel_global_user_step(&m, &x, lr, reg, 0, &g);
    CU_ASSERT(fabs(g.bu[0] - b0) < 1e-12);
    rk_pmodel_global_free(&g);
    rk_pmodel_links_free(&x);
    rk_lists_free(&l);
    rk_model_free(&m);
}

/* The stage through the CPU backend with threads t: the predictions. */
static void run_stage(const rk_model *m, rk_predict_mode mode, int threads, int32_t nq, const int32_t *qu,
                      const int32_t *qi, double *pred, int32_t *used, int32_t *nb)
{
    rk_knn_opts o;
    rk_knn_opts_default(&o);
    o.sim.metric = RK_METRIC_PEARSON_BASELINE;
    o.sim.shrinkage = 10.0;
    o.k = 8;
    o.mode = mode;
    o.threads = threads;
    rk_lists l;
    rk_error err;
    CU_ASSERT_FATAL(rk_lists_alloc(&l, m->by_item.n_rows, o.k, &err) == RK_OK);
    rk_queries q = {nq, qu, qi, pred, used, nb, NULL};
    rk_gpu_opts g;
    memset(&g, 0, sizeof g);
    const rk_backend *cpu = rk_backend_get(RK_BACKEND_CPU);
    CU_ASSERT_FATAL(cpu->knn(m, &o, &g, &l, &q, NULL, NULL, NULL, &err) == RK_OK);
    rk_lists_free(&l);
}

static void test_stage_threads(void)
{
    rk_model m;
    pmodel_make_model(&m, 120, 60, 0.2, 1, 99);
    enum { NQ = 400 };
    int32_t qu[NQ], qi[NQ], used[3][NQ];
    double pred[3][NQ], base[NQ];
    unsigned long long s = 5;
    for (int t = 0; t < NQ; t++) {
        qu[t] = (int32_t)(rk_test_rand(&s) % 122) - 1; /* a few unknown users: -1, 120 */
        qi[t] = (int32_t)(rk_test_rand(&s) % 60);
    }
    for (int mode = RK_PREDICT_INTERPOLATE; mode <= RK_PREDICT_GLOBAL; mode++) {
        for (int th = 1; th <= 3; th++) run_stage(&m, (rk_predict_mode)mode, th, NQ, qu, qi, pred[th - 1],
                                                  used[th - 1], NULL);
        CU_ASSERT(memcmp(pred[0], pred[1], sizeof pred[0]) == 0 && memcmp(pred[0], pred[2], sizeof pred[0]) == 0);
        CU_ASSERT(memcmp(used[0], used[1], sizeof used[0]) == 0 && memcmp(used[0], used[2], sizeof used[0]) == 0);
        /* the model moved the estimates off the baseline predictor's */
        run_stage(&m, RK_PREDICT_BASELINE, 2, NQ, qu, qi, base, used[1], NULL);
        int moved = 0, known = 0;
        for (int t = 0; t < NQ; t++) {
            CU_ASSERT(pred[0][t] >= m.rmin && pred[0][t] <= m.rmax);
            known += used[0][t] > 0;
            moved += pred[0][t] != base[t];
        }
        CU_ASSERT(known > NQ / 2 && moved > NQ / 2);
    }
    rk_model_free(&m);
}

/* The engine's chosen neighbours (rk_queries.nb) are the baseline
 * predictor's, in ascending order, -1 after them. */
static void test_chosen_neighbours(void)
{
    rk_model m;
    pmodel_make_model(&m, 80, 40, 0.3, 1, 3);
    enum { NQ = 200, K = 8 };
    int32_t qu[NQ], qi[NQ], used[NQ], nb[NQ * K];
    double pred[NQ];
    unsigned long long s = 11;
    for (int t = 0; t < NQ; t++) {
        qu[t] = (int32_t)(rk_test_rand(&s) % 80);
        qi[t] = (int32_t)(rk_test_rand(&s) % 40);
    }
    rk_knn_opts o;
    rk_knn_opts_default(&o);
    o.k = K;
    o.mode = RK_PREDICT_INTERPOLATE;
    rk_queries q = {NQ, qu, qi, pred, used, nb, NULL};
    rk_error err;
    memset(nb, 0x55, sizeof nb);
    CU_ASSERT_FATAL(rk_knn_cpu(&m, &o, NULL, &q, NULL, &err) == RK_OK);
    for (int t = 0; t < NQ; t++) {
        for (int a = 0; a < K; a++) {
            const int32_t v = nb[t * K + a];
            if (a >= used[t]) {
                CU_ASSERT_EQUAL(v, -1);
            } else {
                CU_ASSERT(v >= 0 && v != qi[t] && (a == 0 || v > nb[t * K + a - 1]));
            }
        }
    }
    rk_model_free(&m);
}

/* A copy of m's training rows as histories (rk_knn_cpu_hist's form). */
static void copy_rows(const rk_model *m, rk_csr *h)
{
    const rk_csr *U = &m->by_user;
    *h = *U;
    h->ptr = malloc(((size_t)U->n_rows + 1) * sizeof *h->ptr);
    h->idx = malloc((size_t)U->nnz * sizeof *h->idx);
    h->val = malloc((size_t)U->nnz * sizeof *h->val);
    CU_ASSERT_FATAL(h->ptr != NULL && h->idx != NULL && h->val != NULL);
    memcpy(h->ptr, U->ptr, ((size_t)U->n_rows + 1) * sizeof *h->ptr);
    memcpy(h->idx, U->idx, (size_t)U->nnz * sizeof *h->idx);
    memcpy(h->val, U->val, (size_t)U->nnz * sizeof *h->val);
}

/* A saved model's answers (rk_pmodel_hist_cpu): histories that are copies
 * of the training rows give the stage's predictions bit for bit, with the
 * trained b_u for the rows that are their user's; without that user the
 * bias is folded in, which this test replays from CONTRACT.md §10's words. */
static void test_histories(void)
{
    rk_model m;
    pmodel_make_model(&m, 90, 45, 0.25, 1, 21);
    enum { NQ = 300, K = 8 };
    int32_t qu[NQ], qi[NQ], used[NQ], used2[NQ], nb[NQ * K];
    double pred[NQ], pred2[NQ];
    unsigned long long s = 17;
    for (int t = 0; t < NQ; t++) {
        qu[t] = (int32_t)(rk_test_rand(&s) % 90);
        qi[t] = (int32_t)(rk_test_rand(&s) % 45);
    }
    rk_knn_opts o;
    rk_knn_opts_default(&o);
    o.sim.metric = RK_METRIC_PEARSON_BASELINE;
    o.k = K;
    o.threads = 2;
    o.pm.global_epochs = 6;
    rk_error err;
    rk_gpu_opts g;
    memset(&g, 0, sizeof g);
    rk_csr h;
    copy_rows(&m, &h);
    int32_t mu[90];
    for (int u = 0; u < 90; u++) mu[u] = u;
    const rk_backend *cpu = rk_backend_get(RK_BACKEND_CPU);
    for (int mode = RK_PREDICT_INTERPOLATE; mode <= RK_PREDICT_GLOBAL; mode++) {
        o.mode = (rk_predict_mode)mode;
        rk_lists l;
        rk_pmodel_global gm;
        memset(&gm, 0, sizeof gm);
        CU_ASSERT_FATAL(rk_lists_alloc(&l, 45, K, &err) == RK_OK);
        rk_queries q = {NQ, qu, qi, pred, used, NULL, mode == RK_PREDICT_GLOBAL ? &gm : NULL};
        CU_ASSERT_FATAL(cpu->knn(&m, &o, &g, &l, &q, NULL, NULL, NULL, &err) == RK_OK);
        rk_queries q2 = {NQ, qu, qi, pred2, used2, mode == RK_PREDICT_INTERPOLATE ? nb : NULL, NULL};
        memset(nb, 0xff, sizeof nb);
        if (mode == RK_PREDICT_INTERPOLATE) CU_ASSERT_FATAL(rk_knn_cpu_hist(&m, &o, &h, &q2, NULL, &err) == RK_OK);
        CU_ASSERT_FATAL(rk_pmodel_hist_cpu(&m, &o, &l, &gm, &h, mu, &q2, NULL, &err) == RK_OK);
        CU_ASSERT(memcmp(pred, pred2, sizeof pred) == 0);
        CU_ASSERT(memcmp(used, used2, sizeof used) == 0);
        if (mode == RK_PREDICT_GLOBAL) {
            CU_ASSERT_FATAL(gm.n_items == 45 && gm.k == K);
            double bt[90];
            CU_ASSERT_FATAL(rk_pmodel_global_user_biases(&m, &l, &gm, &o.pm, &h, mu, 2, bt, &err) == RK_OK);
            CU_ASSERT(memcmp(bt, gm.bu, sizeof bt) == 0);
            CU_ASSERT_FATAL(rk_pmodel_global_user_biases(&m, &l, &gm, &o.pm, &h, NULL, 2, bt, &err) == RK_OK);
            int differ = 0;
            for (int u = 0; u < 90; u++) {
                /* the replay: ALS b_u of the history, then each epoch's user half at the decayed step */
                const int64_t a = h.ptr[u], n = h.ptr[u + 1] - a;
                double b = rk_model_user_baseline(&m, h.idx + a, h.val + a, n), lr = o.pm.global_lr;
                const double b_als = b;
                for (int ep = 0; ep < o.pm.global_epochs; ep++, lr *= o.pm.global_decay)
                    for (int64_t x = 0; x < n; x++) {
                        const int32_t j = h.idx[a + x];
                        double sum = 0.0;
                        int cnt = 0;
                        for (int sl = 0; sl < l.len[j]; sl++) {
                            const int64_t r = rk_csr_entry(&h, u, l.nbr[j * K + sl]);
                            if (r < 0) continue;
                            const float e = (float)((double)h.val[r] - ((m.mu + b_als) + m.bi[l.nbr[j * K + sl]]));
                            sum += gm.w[j * K + sl] * (double)e + gm.c[j * K + sl];
                            cnt++;
                        }
                        const double er = (double)h.val[a + x] -
                                          (((m.mu + b) + gm.bi[j]) + (cnt > 0 ? 1.0 / sqrt((double)cnt) : 0.0) * sum);
                        b += lr * (er - o.pm.global_reg * b);
                    }
                CU_ASSERT(b == bt[u]);
                differ += bt[u] != gm.bu[u];
                CU_ASSERT(fabs(bt[u] - gm.bu[u]) < 0.5); /* near the trained bias */
            }
            CU_ASSERT(differ > 45);
            /* an altered row is folded in, even with its user named */
            h.val[h.ptr[3]] = h.val[h.ptr[3]] == 5.0f ? 4.5f : h.val[h.ptr[3]] + 0.5f;
            CU_ASSERT_FATAL(rk_pmodel_global_user_biases(&m, &l, &gm, &o.pm, &h, mu, 1, bt, &err) == RK_OK);
            double term[45];
            CU_ASSERT(bt[3] == rk_pmodel_global_fold_user(&m, &l, &gm, &o.pm, &h, 3, term) && bt[4] == gm.bu[4]);
        }
        rk_pmodel_global_free(&gm);
        rk_lists_free(&l);
    }
    rk_csr_free(&h);
    rk_model_free(&m);
}

/* A search's checkpoints (rk_pmodel_opts.epochs_at): the predictions after
 * epochs 2 and 5 of one training are those of runs of 2 and 5 epochs. */
static void test_checkpoints(void)
{
    rk_model m;
    pmodel_make_model(&m, 70, 35, 0.3, 0, 41);
    enum { NQ = 200 };
    int32_t qu[NQ], qi[NQ], used[NQ];
    double pred[NQ], at[2 * NQ], alone[NQ];
    unsigned long long s = 23;
    for (int t = 0; t < NQ; t++) {
        qu[t] = (int32_t)(rk_test_rand(&s) % 71) - 1;
        qi[t] = (int32_t)(rk_test_rand(&s) % 35);
    }
    rk_knn_opts o;
    rk_knn_opts_default(&o);
    o.sim.metric = RK_METRIC_PEARSON_BASELINE;
    o.k = 7;
    o.mode = RK_PREDICT_GLOBAL;
    o.threads = 2;
    o.pm.global_decay = 0.9;
    const int32_t epochs[2] = {2, 5};
    rk_error err;
    rk_gpu_opts g;
    memset(&g, 0, sizeof g);
    const rk_backend *cpu = rk_backend_get(RK_BACKEND_CPU);
    rk_knn_opts oc = o;
    oc.pm.global_epochs = 7;
    oc.pm.epochs_at = epochs;
    oc.pm.n_at = 2;
    oc.pm.pred_at = at;
    rk_queries q = {NQ, qu, qi, pred, used, NULL, NULL};
    CU_ASSERT_FATAL(cpu->knn(&m, &oc, &g, NULL, &q, NULL, NULL, NULL, &err) == RK_OK);
    for (int c = 0; c < 2; c++) {
        rk_knn_opts oa = o;
        oa.pm.global_epochs = epochs[c];
        rk_queries qa = {NQ, qu, qi, alone, used, NULL, NULL};
        CU_ASSERT_FATAL(cpu->knn(&m, &oa, &g, NULL, &qa, NULL, NULL, NULL, &err) == RK_OK);
        CU_ASSERT(memcmp(alone, at + c * NQ, sizeof alone) == 0);
        CU_ASSERT(memcmp(alone, pred, sizeof alone) != 0); /* not the 7 epochs' */
    }
    rk_model_free(&m);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"the weights against a dense solve", test_solve},
        {"covariance rows by their definition", test_cov_rows},
        {"one epoch of the global model by hand", test_global_epoch},
        {"the same bits on 1, 2 and 3 threads", test_stage_threads},
        {"the engine's chosen neighbours", test_chosen_neighbours},
        {"a saved model's answers from histories", test_histories},
        {"a search's checkpoints are shorter runs", test_checkpoints},
        {NULL, NULL},
    };
    return rk_test_main("pmodel", cases);
}
