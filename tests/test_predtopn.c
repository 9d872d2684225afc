/* Top-N by predicted rating (--topn-score prediction, job/rk_job_predtopn.c)
 * against its definition computed naively here: the candidates of CONTRACT.md
 * §5 (items of the lists of the user's items with a positive similarity, not
 * rated), each predicted by the CPU engine alone, ranked by round(estimate ·
 * 2^32) then ascending item, cut to N; for the baseline, interpolate and
 * global modes, every user and a request of some users in another order. */
#include "rk_job_internal.h"
#include "test_util.h"
#include "test_pmodel_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { NU = 70, NI = 45, N = 6, K = 7 };

typedef struct got {
    int32_t user[NU], len[NU], item[NU][N];
    uint64_t score[NU][N];
    int64_t count;
} got;

static rk_status sink(void *ud, const rk_topn_batch *b, rk_error *err)
{
    (void)err;
    got *g = ud;
    for (int64_t x = 0; x < b->count; x++, g->count++) {
        g->user[g->count] = b->user[x];
        g->len[g->count] = b->len[x];
        for (int32_t r = 0; r < b->len[x]; r++) {
            g->item[g->count][r] = b->item[x * b->n + r];
            g->score[g->count][r] = b->score[x * b->n + r];
        }
    }
    return RK_OK;
}

/* User u's expected list: len returned. */
static int32_t expected(const rk_model *m, const rk_lists *l, const rk_knn_opts *ko, int32_t u, int32_t *item,
                        uint64_t *score)
{
    int32_t cand[NI], n = 0;
    for (int32_t c = 0; c < NI; c++) {
        int rated = 0, listed = 0;
        for (int64_t p = m->by_user.ptr[u]; p < m->by_user.ptr[u + 1]; p++) {
            const int32_t j = m->by_user.idx[p];
            rated |= j == c;
            for (int32_t s = 0; s < l->len[j]; s++)
                listed |= l->nbr[j * l->k + s] == c && l->sim[j * l->k + s] > 0.0f;
        }
        if (listed && !rated) cand[n++] = c;
    }
    int32_t qu[NI], used[NI];
    double pred[NI];
    for (int32_t x = 0; x < n; x++) qu[x] = u;
    rk_queries q = {n, qu, cand, pred, used, NULL, NULL};
    rk_error err;
    const rk_backend *cpu = rk_backend_get(RK_BACKEND_CPU);
    rk_gpu_opts g;
    memset(&g, 0, sizeof g);
    CU_ASSERT_FATAL(n == 0 || cpu->knn(m, ko, &g, NULL, &q, NULL, NULL, NULL, &err) == RK_OK);
    uint64_t v[NI];
    int taken[NI] = {0};
    for (int32_t x = 0; x < n; x++) v[x] = (uint64_t)llrint(pred[x] * RK_TOPN_ONE);
    int32_t len = 0;
    for (; len < N && len < n; len++) { /* the highest left, the lowest item among equals */
        int32_t best = -1;
        for (int32_t x = 0; x < n; x++)
            if (!taken[x] && (best < 0 || v[x] > v[best])) best = x;
        taken[best] = 1;
        item[len] = cand[best];
        score[len] = v[best];
    }
    return len;
}

static void check_mode(rk_predict_mode mode)
{
    rk_model m;
    pmodel_make_model(&m, NU, NI, 0.15, 1, 21 + (unsigned long long)mode);
    rk_knn_opts ko;
    rk_knn_opts_default(&ko);
    ko.sim.metric = RK_METRIC_PEARSON_BASELINE;
    ko.sim.shrinkage = 5.0;
    ko.k = K;
    ko.mode = mode;
    ko.pm.global_epochs = 3;
    rk_lists l;
    rk_error err;
    CU_ASSERT_FATAL(rk_lists_alloc(&l, NI, K, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_knn_cpu(&m, &ko, &l, NULL, NULL, &err) == RK_OK);
    rk_backend_seam seam;
    memset(&seam, 0, sizeof seam);
    rk_backend_opts bo;
    memset(&bo, 0, sizeof bo);
    bo.device = RK_DEVICE_CPU;
    CU_ASSERT_FATAL(rk_backend_start(&seam, &bo, &ko, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_backend_choose(&seam, &ko, &err) == RK_OK);
    const int32_t some[4] = {9, 2, 40, 2};
    for (int req = 0; req < 2; req++) {
        got *g = calloc(1, sizeof *g);
        rk_topn_opts to;
        memset(&to, 0, sizeof to);
        to.n = N;
        to.users = req ? some : NULL;
        to.n_users = req ? 4 : 0;
        to.batch = 5;
        to.sink = sink;
        to.sink_ud = g;
        rk_topn_stats ts;
        CU_ASSERT_FATAL(rk_job_topn_predicted(&seam, &m, &ko, &l, &to, &ts, &err) == RK_OK);
        CU_ASSERT_EQUAL(g->count, req ? 4 : NU);
        int64_t rows = 0;
        for (int64_t x = 0; x < g->count; x++) {
            const int32_t u = req ? some[x] : (int32_t)x;
            int32_t item[N];
            uint64_t score[N];
            const int32_t len = expected(&m, &l, &ko, u, item, score);
            CU_ASSERT_EQUAL(g->user[x], u);
            CU_ASSERT_EQUAL_FATAL(g->len[x], len);
            CU_ASSERT(memcmp(g->item[x], item, (size_t)len * sizeof *item) == 0);
            CU_ASSERT(memcmp(g->score[x], score, (size_t)len * sizeof *score) == 0);
            rows += len;
        }
        CU_ASSERT(rows > (req ? 4 : NU));
        CU_ASSERT_EQUAL(ts.rows, rows);
        free(g);
    }
    rk_backend_free(&seam);
    rk_lists_free(&l);
    rk_model_free(&m);
}

static void test_baseline(void) { check_mode(RK_PREDICT_BASELINE); }
static void test_interpolate(void) { check_mode(RK_PREDICT_INTERPOLATE); }
static void test_global(void) { check_mode(RK_PREDICT_GLOBAL); }

int main(void)
{
    static const rk_test_case cases[] = {
        {"by the baseline predictor", test_baseline},
        {"by the interpolation", test_interpolate},
        {"by the global model", test_global},
        {NULL, NULL},
    };
    return rk_test_main("predtopn", cases);
}
