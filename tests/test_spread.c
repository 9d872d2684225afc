/* rk_job_spread on the CPU: the engine stage shared out among several parts
 * of one process (how --gpus shares it among GPUs, here with CPU parts, so
 * that the sharing is tested where no GPU is) gives the results of one
 * engine call: the same lists, predictions and top-N batches, user by user,
 * in request order; each part's rows, users and work are reported and add up
 * to the whole.  The same with GPU parts under --device auto (the fused
 * path, rk_gpu_opts.between): on a GPU they run there, two parts on device 0;
 * without one each part's GPU call fails and the part makes its lists and
 * its top-N on the CPU, through the same meeting and streams. */
#include "rk_job_internal.h"
#include "rk_byuser.h"
#include "rk_utopn.h"
#include "test_subset_util.h"

#include <stdlib.h>
#include <string.h>

/* Every recommendation in the order the sink gets it: user, length, then
 * (item, score) pairs; each batch's position checked against the users
 * before it (the request's positions, consecutive). */
typedef struct flat {
    int64_t *v;
    size_t n, cap;
    int calls;
    int64_t users, misplaced;
} flat;

static void flat_put(flat *f, int64_t x)
{
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 1024;
        f->v = realloc(f->v, f->cap * sizeof *f->v);
        CU_ASSERT_FATAL(f->v != NULL);
    }
    f->v[f->n++] = x;
}

static rk_status flat_sink(void *ud, const rk_topn_batch *b, rk_error *err)
{
    (void)err;
    flat *f = ud;
    f->calls++;
    f->misplaced += b->first != f->users;
    f->users += b->count;
    for (int64_t x = 0; x < b->count; x++) {
        flat_put(f, b->user[x]);
        flat_put(f, b->len[x]);
        for (int32_t e = 0; e < b->len[x]; e++) {
            flat_put(f, b->item[x * b->n + e]);
            flat_put(f, (int64_t)b->score[x * b->n + e]);
        }
    }
    return RK_OK;
}

static int lists_equal(const rk_lists *a, const rk_lists *b)
{
    if (a->n_items != b->n_items || a->k != b->k) return 0;
    for (int32_t i = 0; i < a->n_items; i++) {
        if (a->len[i] != b->len[i]) return 0;
        const size_t o = (size_t)i * (size_t)a->k, c = (size_t)a->len[i];
        if (memcmp(a->nbr + o, b->nbr + o, c * sizeof *a->nbr) || memcmp(a->sim + o, b->sim + o, c * sizeof *a->sim) ||
            memcmp(a->support + o, b->support + o, c * sizeof *a->support))
            return 0;
    }
    return 1;
}

/* GPU parts (device 0) under --device auto instead of CPU parts. */
static int gpu_parts;

/* A GPU engine that fails half-way through each part's top-N, for the
 * parts' fallback: its lists are the CPU's, then it meets the other parts,
 * ranks the first half of its users and fails as a GPU would. */
static int fake_gpu;

static rk_status fake_knn(const rk_model *m, const rk_knn_opts *ko, const rk_gpu_opts *g, rk_lists *lists,
                          rk_queries *q, const rk_topn_opts *topn, rk_topn_stats *ts, rk_knn_stats *st, rk_error *err)
{
    RK_FORWARD(rk_knn_cpu(m, ko, lists, q, st, err));
    if (topn == NULL || g == NULL || g->between == NULL) return RK_OK;
    const rk_lists *all = NULL;
    const rk_topn_opts *mine = NULL;
    RK_FORWARD(g->between(g->between_ud, &all, &mine, err));
    if (mine == NULL) return RK_OK;
    rk_topn_opts half = *mine;
    half.n_users = mine->n_users / 2;
    RK_FORWARD(rk_topn_cpu(m, all, &half, ts, err));
    return rk_error_set(err, RK_E_GPU, "injected: the GPU failed after %lld users", (long long)half.n_users);
}

/* Its top-N from lists made elsewhere (the path without the meeting): the
 * same failure half-way. */
static rk_status fake_topn(const rk_model *m, const rk_lists *l, const rk_topn_opts *to, const rk_gpu_opts *g,
                           rk_topn_stats *ts, rk_error *err)
{
    (void)g;
    rk_topn_opts half = *to;
    half.n_users = to->n_users / 2;
    RK_FORWARD(rk_topn_cpu(m, l, &half, ts, err));
    return rk_error_set(err, RK_E_GPU, "injected: the GPU failed after %lld users", (long long)half.n_users);
}

static const rk_backend fake_be = {RK_BACKEND_CUDA, "fake", 1, 1 << 20, 1, NULL, fake_knn, fake_topn, NULL, NULL};

/* The ranking stage's hooks: the model of the parts' CPU calls (counted),
 * and a shaping of the joined lists before top-N (halved similarities: the
 * order stays, exactly). */
static int use_hooks, host_asks;
static const rk_model *hook_model;

static const rk_model *host_model(void *ud, rk_error *err)
{
    (void)ud;
    (void)err;
    host_asks++;
    return hook_model;
}

static void halve(void *ud, rk_lists *l)
{
    (void)ud;
    for (size_t c = 0; c < (size_t)l->n_items * (size_t)l->k; c++) l->sim[c] *= 0.5f;
}

/* One case: nu x ni ratings, k, N, parts, with queries and a --users subset
 * when asked, item- or user-based. */
static void spread_vs_one(int nu, int ni, double density, rk_metric metric, int k, int n_top, int parts,
                          int with_queries, int with_users, int by_user, unsigned long long seed)
{
    rk_model m;
    rk_error err;
    rk_ts_model(&m, nu, ni, density, 0, 1, seed);
    rk_byuser uv;
    memset(&uv, 0, sizeof uv);
    const rk_model *em = &m;
    if (by_user) {
        CU_ASSERT_FATAL(rk_byuser_view(&m, &uv, &err) == RK_OK);
        em = &uv.model;
    }
    const int32_t rows = em->by_item.n_rows;
    rk_knn_opts ko;
    rk_knn_opts_default(&ko);
    ko.sim.metric = metric;
    ko.k = k;
    ko.threads = 2;
    /* queries (engine orientation): random pairs, unknown ids included */
    const int64_t nq = with_queries ? 4 * (int64_t)rows : 0;
    int32_t *qu = malloc(sizeof(int32_t) * (size_t)(nq + 1)), *qi = malloc(sizeof(int32_t) * (size_t)(nq + 1));
    int32_t *u1 = malloc(sizeof(int32_t) * (size_t)(nq + 1)), *u2 = malloc(sizeof(int32_t) * (size_t)(nq + 1));
    double *p1 = malloc(sizeof(double) * (size_t)(nq + 1)), *p2 = malloc(sizeof(double) * (size_t)(nq + 1));
    unsigned long long s = seed * 7919 + 3;
    const int32_t cols = em->by_user.n_rows;
    for (int64_t t = 0; t < nq; t++) {
        qu[t] = (int32_t)(rk_test_rand(&s) % (unsigned long long)(cols + 1)); /* cols: unknown */
        qi[t] = (int32_t)(rk_test_rand(&s) % (unsigned long long)rows);
    }
    /* --users: a few users in a random order, as the request */
    int32_t *req = NULL;
    int64_t n_req = 0;
    if (with_users) {
        req = rk_ts_subset(nu, nu / 3 + 1, seed ^ 0x77ULL);
        n_req = nu / 3 + 1;
    }
    rk_topn_opts to;
    memset(&to, 0, sizeof to);
    to.n = n_top;
    to.users = req;
    to.n_users = n_req;
    to.threads = 2;
    to.batch = 5; /* many batches, so that the order across them is tested */

    /* one engine call, then top-N */
    rk_lists one, spread;
    CU_ASSERT_FATAL(rk_lists_alloc(&one, rows, k, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_lists_alloc(&spread, rows, k, &err) == RK_OK);
    rk_queries q1 = {nq, qu, qi, p1, u1, NULL, NULL}, q2 = {nq, qu, qi, p2, u2, NULL, NULL};
    /* the GPU's lists where the parts run on one (its top-N is the CPU's, byte for byte) */
    char why[256];
    const int on_gpu = gpu_parts && !fake_gpu && rk_gpu_available(why, sizeof why);
    if (on_gpu) {
        rk_gpu_opts g1;
        memset(&g1, 0, sizeof g1);
        CU_ASSERT_FATAL(rk_gpu_knn(em, &ko, &g1, &one, nq > 0 ? &q1 : NULL, NULL, NULL, NULL, &err) == RK_OK);
    } else {
        CU_ASSERT_FATAL(rk_knn_cpu(em, &ko, &one, nq > 0 ? &q1 : NULL, NULL, &err) == RK_OK);
    }
    if (use_hooks) halve(NULL, &one);
    flat f1, f2;
    memset(&f1, 0, sizeof f1);
    memset(&f2, 0, sizeof f2);
    to.sink = flat_sink;
    to.sink_ud = &f1;
    const rk_status s1 = by_user ? rk_utopn_cpu(&m, &one, &to, NULL, &err) : rk_topn_cpu(&m, &one, &to, NULL, &err);
    CU_ASSERT_FATAL(s1 == RK_OK);

    /* the same shared out among CPU parts */
    rk_job_opts o;
    rk_job_opts_default(&o);
    int32_t devices[RK_GPUS_MAX];
    for (int w = 0; w < parts; w++) devices[w] = gpu_parts ? 0 : -1;
    rk_backend_seam seam;
    memset(&seam, 0, sizeof seam);
    seam.o.device = RK_DEVICE_AUTO; /* a GPU part that fails runs on the CPU */
    rk_gpu_opts g;
    memset(&g, 0, sizeof g);
    rk_topn_stats ts;
    rk_knn_stats st;
    rk_job_report *rep = calloc(1, sizeof *rep);
    CU_ASSERT_FATAL(rep != NULL);
    to.sink_ud = &f2;
    rk_job_spread_in in = {&o, NULL, &ko, em, &m, by_user, devices, parts, &g, gpu_parts ? &seam : NULL, &spread,
                           nq > 0 ? &q2 : NULL, &to, &ts, &st, rep, RK_JOB_STAGE_LISTS, NULL, NULL, NULL, NULL};
    if (fake_gpu) in.gpu_be = &fake_be;
    if (use_hooks) {
        in.stage = RK_JOB_STAGE_RANKING;
        in.host_model = host_model;
        in.shape = halve;
        hook_model = em;
        host_asks = 0;
    }
    CU_ASSERT_FATAL(rk_job_spread(&in, &err) == RK_OK);
    if (use_hooks) CU_ASSERT_EQUAL(host_asks > 0, !on_gpu); /* asked by every part that ran on the CPU */

    CU_ASSERT(lists_equal(&one, &spread));
    if (nq > 0) {
        CU_ASSERT_EQUAL(memcmp(p1, p2, sizeof(double) * (size_t)nq), 0);
        CU_ASSERT_EQUAL(memcmp(u1, u2, sizeof(int32_t) * (size_t)nq), 0);
    }
    CU_ASSERT_EQUAL(f1.n, f2.n);
    CU_ASSERT(f1.n > 0);
    CU_ASSERT(f1.n == f2.n && memcmp(f1.v, f2.v, f1.n * sizeof *f1.v) == 0);
    CU_ASSERT_EQUAL(f1.misplaced, 0);
    CU_ASSERT_EQUAL(f2.misplaced, 0);
    CU_ASSERT_EQUAL(f2.users, f1.users);
    /* every part is reported; their rows, users and work add up */
    CU_ASSERT_EQUAL(rep->n_parts, parts);
    int64_t r_sum = 0, u_sum = 0, rows_sum = 0, work = 0;
    for (int x = 0; x < rep->n_parts; x++) {
        CU_ASSERT_EQUAL(rep->part[x].worker, x);
        CU_ASSERT_EQUAL(rep->part[x].stage, use_hooks ? RK_JOB_STAGE_RANKING : RK_JOB_STAGE_LISTS);
        CU_ASSERT_EQUAL(rep->part[x].device, on_gpu ? 0 : -1);
        CU_ASSERT_EQUAL(rep->part[x].fell_back, gpu_parts && !on_gpu);
        r_sum += rep->part[x].rows;
        u_sum += rep->part[x].topn_users;
        rows_sum += rep->part[x].topn_rows;
        work += rep->part[x].work;
    }
    /* the work done: every pair once where the GPUs shared one symmetric tile, else the full rows' */
    int32_t *order = malloc(sizeof(int32_t) * (size_t)(rows > 0 ? rows : 1));
    int64_t *sym = malloc(sizeof(int64_t) * (size_t)(rows > 0 ? rows : 1));
    const int shared = rep->n_parts > 1 && strstr(rep->part[0].engine_detail, "shared symmetric") != NULL;
    CU_ASSERT_EQUAL(work, shared ? rk_knn_item_sym_cost(em, sym) : rk_knn_item_order(em, order, NULL));
    for (int x = 0; x < rep->n_parts; x++) /* every part, or none */
        CU_ASSERT_EQUAL(strstr(rep->part[x].engine_detail, "shared symmetric") != NULL, shared);
    free(order);
    free(sym);
    CU_ASSERT_EQUAL(r_sum, rows);
    CU_ASSERT_EQUAL(u_sum, ts.users);
    CU_ASSERT_EQUAL(rows_sum, ts.rows);
    if (with_users) CU_ASSERT_EQUAL(ts.users, n_req);
    const char *fused_env = getenv("RECKNN_GPU_FUSED");
    const int fused = gpu_parts && !by_user && !(fused_env != NULL && strcmp(fused_env, "0") == 0);
    CU_ASSERT_EQUAL(strstr(ts.path, "fused") != NULL, fused); /* the path taken */

    free(f1.v);
    free(f2.v);
    free(rep);
    free(req);
    free(qu);
    free(qi);
    free(u1);
    free(u2);
    free(p1);
    free(p2);
    rk_lists_free(&one);
    rk_lists_free(&spread);
    rk_byuser_free(&uv);
    rk_model_free(&m);
}

static void test_items(void)
{
    spread_vs_one(80, 60, 0.15, RK_METRIC_PEARSON, 10, 5, 3, 1, 0, 0, 1);
    spread_vs_one(70, 50, 0.2, RK_METRIC_COSINE, 8, 10, 2, 1, 1, 0, 2);
    spread_vs_one(60, 40, 0.25, RK_METRIC_JACCARD, 50, 45, 4, 0, 0, 0, 3); /* k and N above the item count */
    spread_vs_one(50, 30, 0.2, RK_METRIC_PEARSON_BASELINE, 5, 3, 7, 1, 0, 0, 4);
}

static void test_users(void)
{
    spread_vs_one(60, 50, 0.2, RK_METRIC_MSD, 6, 5, 3, 1, 0, 1, 5);
    spread_vs_one(50, 40, 0.2, RK_METRIC_PEARSON, 10, 8, 2, 0, 1, 1, 6);
}

static void test_edges(void)
{
    spread_vs_one(20, 3, 0.6, RK_METRIC_PEARSON, 2, 2, 5, 1, 0, 0, 7); /* more parts than items */
    spread_vs_one(10, 1, 0.5, RK_METRIC_COSINE, 3, 1, 2, 1, 0, 0, 8);  /* one item */
    spread_vs_one(30, 20, 0.2, RK_METRIC_EUCLIDEAN, 4, 3, 1, 1, 1, 0, 9); /* one part */
}

/* The fused path: k and N within the GPU's limits. */
static void test_fused(void)
{
    gpu_parts = 1;
    spread_vs_one(80, 60, 0.15, RK_METRIC_PEARSON, 10, 5, 3, 1, 0, 0, 11);
    spread_vs_one(70, 50, 0.2, RK_METRIC_COSINE, 8, 10, 2, 1, 1, 0, 12);
    spread_vs_one(20, 3, 0.6, RK_METRIC_PEARSON, 2, 2, 5, 1, 0, 0, 13); /* more parts than items */
    spread_vs_one(30, 20, 0.2, RK_METRIC_EUCLIDEAN, 4, 3, 1, 1, 1, 0, 14); /* one part */
    gpu_parts = 0;
}

/* A GPU failing in each part's top-N: the CPU takes up the part's users
 * where the GPU stopped, and the writer gets every batch once, in order. */
static void test_resume(void)
{
    gpu_parts = fake_gpu = 1;
    spread_vs_one(80, 60, 0.15, RK_METRIC_PEARSON, 10, 5, 3, 1, 0, 0, 31);
    spread_vs_one(70, 50, 0.2, RK_METRIC_COSINE, 8, 10, 2, 1, 1, 0, 32);
    setenv("RECKNN_GPU_FUSED", "0", 1); /* the lists first, then top-N apart */
    spread_vs_one(80, 60, 0.15, RK_METRIC_PEARSON, 10, 5, 3, 1, 0, 0, 33);
    unsetenv("RECKNN_GPU_FUSED");
    gpu_parts = fake_gpu = 0;
}

/* The ranking stage: the hooks' model for CPU calls, the lists shaped before
 * top-N, the parts reported as the ranking stage's. */
static void test_hooks(void)
{
    use_hooks = 1;
    spread_vs_one(80, 60, 0.15, RK_METRIC_COSINE, 10, 5, 3, 0, 0, 0, 21);
    gpu_parts = 1;
    spread_vs_one(70, 50, 0.2, RK_METRIC_COSINE, 8, 10, 2, 0, 1, 0, 22);
    gpu_parts = 0;
    use_hooks = 0;
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"item rows and users shared among CPU parts: one call's results", test_items},
        {"GPU parts, the lists and top-N in one call each (on the CPU where no GPU is)", test_fused},
        {"the ranking stage's hooks: a host model, lists shaped before top-N", test_hooks},
        {"a GPU failing half-way through top-N: its users taken up on the CPU", test_resume},
        {"user mode shared among parts", test_users},
        {"more parts than items, one item, one part", test_edges},
        {NULL, NULL},
    };
    return rk_test_main("spread", cases);
}
