/* rk_backend.c — the engine seam (rk_backend.h): the backends' table, the
 * device choice and warm-up, the GPU-to-CPU fallback. */
#include "rk_backend.h"
#include "rk_utopn.h"
#include "rk_pmodel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const device_names[] = {"auto", "cpu", "gpu"};

rk_status rk_device_parse(const char *name, rk_device *out)
{
    for (int d = 0; d < 3; d++) {
        if (name != NULL && strcmp(name, device_names[d]) == 0) {
            *out = (rk_device)d;
            return RK_OK;
        }
    }
    return RK_E_ARG;
}

const char *rk_device_name(rk_device d)
{
    return (unsigned)d < 3 ? device_names[d] : "unknown";
}

/* ---- the table -------------------------------------------------------------- */

static int cpu_supports(const rk_knn_opts *ko, char *why, size_t cap)
{
    (void)ko, (void)why, (void)cap;
    return 1;
}

static rk_status cpu_engine(const rk_model *m, const rk_knn_opts *ko, const rk_gpu_opts *g, rk_lists *lists,
                            rk_queries *q, const rk_topn_opts *topn, rk_topn_stats *ts, rk_knn_stats *st,
                            rk_error *err)
{
    (void)g, (void)topn, (void)ts; /* no fused top-N: fused_topn is 0 */
    return rk_knn_cpu(m, ko, lists, q, st, err);
}

static rk_status cpu_pmodel(const rk_model *m, const rk_knn_opts *ko, const rk_gpu_opts *g, const rk_lists *lists,
                            rk_queries *q, rk_knn_stats *st, rk_error *err)
{
    (void)g;
    return rk_pmodel_cpu(m, ko, lists, q, st, err);
}

static rk_status cuda_pmodel(const rk_model *m, const rk_knn_opts *ko, const rk_gpu_opts *g, const rk_lists *lists,
                             rk_queries *q, rk_knn_stats *st, rk_error *err)
{
    return rk_gpu_pmodel(m, ko, g, lists, q, st, err);
}

typedef rk_status (*engine_fn)(const rk_model *, const rk_knn_opts *, const rk_gpu_opts *, rk_lists *, rk_queries *,
                               const rk_topn_opts *, rk_topn_stats *, rk_knn_stats *, rk_error *);
typedef rk_status (*pmodel_fn)(const rk_model *, const rk_knn_opts *, const rk_gpu_opts *, const rk_lists *,
                               rk_queries *, rk_knn_stats *, rk_error *);

/* The engine, then for --predict interpolate or global the model stage on
 * the same device (rk_pmodel.h): the engine gives interpolate each query's
 * neighbours, and global every item's list (made here when the caller
 * wants none). */
static rk_status with_pmodel(engine_fn engine, pmodel_fn stage, const rk_model *m, const rk_knn_opts *ko,
                             const rk_gpu_opts *g, rk_lists *lists, rk_queries *q, const rk_topn_opts *topn,
                             rk_topn_stats *ts, rk_knn_stats *st, rk_error *err)
{
    /* no query and no model to keep: the engine alone */
    if (q != NULL && q->n == 0 && (ko->mode != RK_PREDICT_GLOBAL || q->global == NULL)) q = NULL;
    if (q == NULL || !rk_predict_is_model(ko->mode)) return engine(m, ko, g, lists, q, topn, ts, st, err);
    if (q->global != NULL) rk_pmodel_global_free(q->global); /* an earlier call's, or a failed device's */
    rk_lists own;
    memset(&own, 0, sizeof own);
    rk_lists *l = lists;
    rk_status s = RK_OK;
    if (ko->mode == RK_PREDICT_GLOBAL && l == NULL) {
        s = rk_lists_alloc(&own, m->by_item.n_rows, ko->k, err);
        l = &own;
    }
    int32_t *nb = NULL;
    if (s == RK_OK && ko->mode == RK_PREDICT_INTERPOLATE) {
        if (ko->k > RK_PMODEL_MAX_K)
            s = rk_error_set(err, RK_E_ARG, "--predict interpolate: -k %d is above its %d", ko->k, RK_PMODEL_MAX_K);
        else if ((nb = malloc((size_t)(q->n > 0 ? q->n : 1) * (size_t)ko->k * sizeof *nb)) == NULL)
            s = rk_error_set(err, RK_E_NOMEM, "out of memory for the queries' neighbours");
        else memset(nb, 0xff, (size_t)q->n * (size_t)ko->k * sizeof *nb); /* -1: none */
        q->nb = nb;
    }
    /* global trains on every item's list and answers every query itself: the engine makes the lists alone */
    rk_knn_opts eko = *ko;
    const int global = ko->mode == RK_PREDICT_GLOBAL;
    if (global) eko.rows = NULL, eko.n_rows = 0;
    if (s == RK_OK) s = engine(m, &eko, g, l, global ? NULL : q, topn, ts, st, err);
    if (s == RK_OK) s = stage(m, &eko, g, l, q, st, err);
    q->nb = NULL;
    free(nb);
    rk_lists_free(&own);
    return s;
}

static rk_status cpu_knn(const rk_model *m, const rk_knn_opts *ko, const rk_gpu_opts *g, rk_lists *lists,
                         rk_queries *q, const rk_topn_opts *topn, rk_topn_stats *ts, rk_knn_stats *st, rk_error *err)
{
    return with_pmodel(cpu_engine, cpu_pmodel, m, ko, g, lists, q, topn, ts, st, err);
}

static rk_status cuda_knn(const rk_model *m, const rk_knn_opts *ko, const rk_gpu_opts *g, rk_lists *lists,
                          rk_queries *q, const rk_topn_opts *topn, rk_topn_stats *ts, rk_knn_stats *st, rk_error *err)
{
    return with_pmodel(rk_gpu_knn, cuda_pmodel, m, ko, g, lists, q, topn, ts, st, err);
}

static rk_status cpu_topn(const rk_model *m, const rk_lists *l, const rk_topn_opts *to, const rk_gpu_opts *g,
                          rk_topn_stats *ts, rk_error *err)
{
    (void)g;
    return rk_topn_cpu(m, l, to, ts, err);
}

static rk_status cpu_user_topn(const rk_model *m, const rk_lists *ul, const rk_topn_opts *to, const rk_gpu_opts *g,
                               rk_topn_stats *ts, rk_error *err)
{
    (void)g;
    return rk_utopn_cpu(m, ul, to, ts, err);
}

static rk_status cpu_rbc(const rk_model *m, const rk_knn_opts *ko, const rk_rbc_opts *r, const rk_gpu_opts *g,
                         rk_lists *lists, rk_rbc_stats *as, rk_error *err)
{
    (void)g;
    return rk_rbc_cpu(m, ko, r, lists, as, err);
}

static rk_status cuda_topn(const rk_model *m, const rk_lists *l, const rk_topn_opts *to, const rk_gpu_opts *g,
                           rk_topn_stats *ts, rk_error *err)
{
    return rk_gpu_topn(m, l, to, g, ts, err);
}

static const rk_backend backends[RK_BACKENDS] = {
    [RK_BACKEND_CPU] = {RK_BACKEND_CPU, "cpu", 0, INT32_MAX, 0, cpu_supports, cpu_knn, cpu_topn, cpu_user_topn,
                        cpu_rbc},
    /* user-mode top-N stays on the CPU: its GPU route is not written */
    [RK_BACKEND_CUDA] = {RK_BACKEND_CUDA, "cuda", 1, RK_GPU_MAX_TOPN, 1, rk_gpu_supports, cuda_knn, cuda_topn,
                         NULL, rk_gpu_rbc},
};

const rk_backend *rk_backend_get(rk_backend_id id)
{
    return (unsigned)id < RK_BACKENDS ? &backends[id] : NULL;
}

/* ---- the warm-up and the choice -------------------------------------------- */

/* The CUDA driver and context take a few tenths of a second to start: a
 * thread asks for them, and resolves the devices, while the ratings load. */
static void *warm_gpu(void *arg)
{
    rk_backend_seam *s = arg;
    s->gpu_ok = rk_gpu_available(s->gpu_why, sizeof s->gpu_why);
    if (s->gpu_ok) {
        if (s->o.resolve != NULL) {
            s->dev_status = s->o.resolve(s->o.ud, s->devices, &s->n_devices, &s->dev_err);
        } else {
            s->devices[0] = 0;
            s->n_devices = 1;
        }
    }
    for (int d = 0; s->gpu_ok && s->dev_status == RK_OK && d < s->n_devices; d++) {
        int seen = 0;
        for (int e = 0; e < d; e++) seen |= s->devices[e] == s->devices[d];
        if (!seen) rk_gpu_warmup(s->devices[d]);
    }
    __atomic_store_n(&s->warm_done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void warm_join(rk_backend_seam *s)
{
    if (s->warming) pthread_join(s->warm, NULL);
    s->warming = 0;
}

rk_status rk_backend_start(rk_backend_seam *s, const rk_backend_opts *o, const rk_knn_opts *ko, rk_error *err)
{
    s->o = *o;
    s->chosen = &backends[RK_BACKEND_CPU];
    if (o->device == RK_DEVICE_CPU) return RK_OK;
    if (o->device == RK_DEVICE_GPU) {
        char why[256];
        if (!rk_gpu_supports(ko, why, sizeof why)) return rk_error_set(err, RK_E_GPU, "--device gpu: %s", why);
    }
    s->warming = pthread_create(&s->warm, NULL, warm_gpu, s) == 0;
    if (!s->warming) warm_gpu(s);
    return RK_OK;
}

/* --device auto with a usable GPU: 1 when it takes the options and, for the
 * exact engines, the data's shape pays; else 0 after a note saying why. */
static int gpu_pays(const rk_backend_seam *s, const rk_knn_opts *ko)
{
    char why[256];
    if (!rk_gpu_supports(ko, why, sizeof why)) {
        rk_note(s->o.note, s->o.ud, "the GPU engine does not take these options (%s): running on the CPU", why);
        return 0;
    }
    if (s->o.exact && s->o.shape_pays != NULL && !s->o.shape_pays(s->o.ud, why, sizeof why)) {
        rk_note(s->o.note, s->o.ud, "%s: running on the CPU", why);
        return 0;
    }
    return 1;
}

int rk_backend_no_gpu_here(const char *why)
{
    return strncmp(why, "no CUDA device", 14) == 0 || strstr(why, "built without CUDA") != NULL;
}

rk_status rk_backend_choose(rk_backend_seam *s, const rk_knn_opts *ko, rk_error *err)
{
    warm_join(s);
    s->chosen = &backends[RK_BACKEND_CPU];
    if (s->o.device == RK_DEVICE_CPU) return RK_OK;
    if (s->gpu_ok && s->dev_status != RK_OK) { /* --gpus names devices that are not there */
        *err = s->dev_err;
        return RK_E_GPU;
    }
    if (s->o.device == RK_DEVICE_GPU) {
        if (!s->gpu_ok) return rk_error_set(err, RK_E_GPU, "--device gpu: %s", s->gpu_why);
        s->chosen = &backends[RK_BACKEND_CUDA];
        return RK_OK;
    }
    if (!s->gpu_ok) {
        if (s->o.gpus_given) return rk_error_set(err, RK_E_GPU, "--gpus: %s", s->gpu_why); /* no fallback */
        /* a machine without a GPU (or a build without CUDA) is the CPU's, in
         * silence (metrics.json's engine.gpu_unused says why); a GPU that is
         * there but cannot serve deserves a word */
        if (!rk_backend_no_gpu_here(s->gpu_why))
            rk_note(s->o.note, s->o.ud, "the GPU cannot be used (%s): running on the CPU", s->gpu_why);
        return RK_OK;
    }
    if (gpu_pays(s, ko)) s->chosen = &backends[RK_BACKEND_CUDA];
    return RK_OK;
}

int rk_backend_gpu_ready(rk_backend_seam *s)
{
    if (s->o.device == RK_DEVICE_CPU) return 0;
    if (s->warming && !__atomic_load_n(&s->warm_done, __ATOMIC_ACQUIRE)) return 0; /* not yet: no wait */
    warm_join(s);
    return s->gpu_ok && s->dev_status == RK_OK && !s->fell_back;
}

/* Ratings below which the host sorts: the GPU's copies and set-up cost
 * more than the host's sort of a small file. */
#define RK_GPU_SORT_MIN ((int64_t)1 << 20)

rk_status rk_backend_sort_csr(void *ud, const rk_triples *t, const rk_idmap *users, const rk_idmap *items,
                              const uint64_t *leave_out, rk_dup_policy policy, rk_dup_found *found, rk_csr *out,
                              int *taken, rk_error *err)
{
    rk_backend_seam *s = ud;
    *taken = 0;
    if (found != NULL) memset(found, 0, sizeof *found);
    if (t->n < RK_GPU_SORT_MIN || !rk_backend_gpu_ready(s)) return RK_OK;
    rk_gpu_opts g = rk_backend_call_opts(s);
    g.keep_csr = 1; /* the engine calls copy it on the device: one copy crosses PCIe */
    g.rows = s->rows;
    g.user_ids = rk_ids_values(users);
    g.item_ids = rk_ids_values(items);
    return rk_gpu_csr_build(t, rk_ids_count(users), rk_ids_count(items), leave_out, policy, found, &g, out, taken,
                            err);
}

/* The device of the rows' upload (rk_gpu_rows_new), from its thread: the
 * run's first GPU once the warm-up has answered. */
static int rows_device(void *ud)
{
    const rk_backend_seam *s = ud;
    if (!__atomic_load_n(&s->warm_done, __ATOMIC_ACQUIRE)) return -2;
    return s->gpu_ok && s->dev_status == RK_OK && s->n_devices > 0 ? s->devices[0] : -1;
}

int rk_backend_switched_off(const char *name)
{
    const char *v = getenv(name);
    return v != NULL && strcmp(v, "0") == 0;
}

void rk_backend_data_hooks(rk_backend_seam *s, rk_data_opts *dop)
{
    if (s->o.device == RK_DEVICE_CPU || rk_backend_switched_off("RECKNN_GPU_SORT")) return;
    dop->sort_csr = rk_backend_sort_csr;
    dop->sort_ud = s;
    /* the sort takes the rows of a run with one model (no folds), of real
     * ratings (--implicit changes them after the load) */
    if (dop->no_model || dop->implicit || !s->warming || rk_backend_switched_off("RECKNN_GPU_ROWS")) return;
    s->rows = rk_gpu_rows_new(RK_GPU_SORT_MIN, rows_device, s);
    if (s->rows != NULL)
        dop->load.feed = (rk_rows_feed){rk_gpu_rows_ready, rk_gpu_rows_hold, rk_gpu_rows_release, s->rows};
}

void rk_backend_rows_end(rk_backend_seam *s, rk_gpu_rows_report *rep)
{
    rk_gpu_rows_stats(s->rows, rep);
    rk_gpu_rows_free(s->rows);
    s->rows = NULL;
}

const rk_backend *rk_backend_current(const rk_backend_seam *s)
{
    return s->fell_back || s->chosen == NULL ? &backends[RK_BACKEND_CPU] : s->chosen;
}

rk_gpu_opts rk_backend_call_opts(const rk_backend_seam *s)
{
    rk_gpu_opts g = s->o.gpu;
    g.device = s->n_devices > 0 ? s->devices[0] : 0;
    return g;
}

/* ---- the fallback ------------------------------------------------------------- */

int rk_backend_can_fall_back(const rk_backend_seam *s, rk_status st)
{
    return s != NULL && st == RK_E_GPU && s->o.device == RK_DEVICE_AUTO;
}

int rk_backend_fall_back(rk_backend_seam *s, rk_status st, const char *what, rk_error *err)
{
    if (!rk_backend_can_fall_back(s, st)) return 0;
    s->fell_back = 1;
    snprintf(s->fell_back_why, sizeof s->fell_back_why, "%s", err->msg);
    rk_note(s->o.note, s->o.ud, "%s failed (%s): running on the CPU", what, s->fell_back_why);
    rk_error_clear(err);
    return 1;
}

rk_status rk_backend_rbc(rk_backend_seam *s, const rk_model *m, const rk_knn_opts *ko, const rk_rbc_opts *r,
                         rk_lists *lists, rk_rbc_stats *as, int *on_gpu, rk_error *err)
{
    const rk_backend *be = rk_backend_current(s);
    const rk_gpu_opts g = rk_backend_call_opts(s); /* the first of --gpus: the ball cover runs on one */
    rk_status st = be->rbc(m, ko, r, &g, lists, as, err);
    *on_gpu = be->gpu && st == RK_OK;
    if (be->gpu && rk_backend_fall_back(s, st, "the GPU's random ball cover", err)) /* the CPU gives the same lists */
        st = backends[RK_BACKEND_CPU].rbc(m, ko, r, &g, lists, as, err);
    return st;
}

/* Lists of m on the current backend, the CPU after a GPU failure; a host
 * engine first has t's values expanded, when t is given (m is t's model). */
static rk_status lists_on(rk_backend_seam *s, const rk_model *m, rk_rankw_model *t, const rk_knn_opts *ko,
                          rk_lists *lists, rk_queries *q, rk_knn_stats *st, const char *what, rk_error *err)
{
    const rk_backend *be = rk_backend_current(s);
    const rk_gpu_opts g = rk_backend_call_opts(s);
    if (!be->gpu && t != NULL) RK_FORWARD(rk_rankw_expand(t, err)); /* a host engine reads every entry's value */
    rk_status r = be->knn(m, ko, &g, lists, q, NULL, NULL, st, err);
    if (be->gpu && rk_backend_fall_back(s, r, what, err)) { /* the CPU gives the same lists */
        if (t != NULL) RK_FORWARD(rk_rankw_expand(t, err));
        r = backends[RK_BACKEND_CPU].knn(m, ko, &g, lists, q, NULL, NULL, st, err);
    }
    return r;
}

rk_status rk_backend_lists(rk_backend_seam *s, const rk_model *m, const rk_knn_opts *ko, rk_lists *lists,
                           rk_knn_stats *st, const char *what, rk_error *err)
{
    return lists_on(s, m, NULL, ko, lists, NULL, st, what, err);
}

rk_status rk_backend_lists_global(rk_backend_seam *s, const rk_model *m, const rk_knn_opts *ko, rk_lists *lists,
                                  rk_pmodel_global *g, rk_knn_stats *st, const char *what, rk_error *err)
{
    rk_queries q;
    memset(&q, 0, sizeof q);
    q.global = g;
    return lists_on(s, m, NULL, ko, lists, ko->mode == RK_PREDICT_GLOBAL ? &q : NULL, st, what, err);
}

rk_status rk_backend_rank_lists(rk_backend_seam *s, rk_rankw_model *t, const rk_knn_opts *ko, rk_lists *lists,
                                rk_knn_stats *st, const char *what, rk_error *err)
{
    return lists_on(s, &t->model, t, ko, lists, NULL, st, what, err);
}

rk_status rk_backend_topn(rk_backend_seam *s, const rk_model *m, const rk_lists *l, const rk_topn_opts *to,
                          rk_status (*restart)(void *ud, rk_error *err), void *ud, rk_topn_stats *ts,
                          const char *what, rk_error *err)
{
    const rk_backend *be = rk_backend_current(s);
    const rk_gpu_opts g = rk_backend_call_opts(s);
    const int on_be = be->topn != NULL && to->n <= be->max_topn;
    rk_status r = on_be ? be->topn(m, l, to, &g, ts, err) : backends[RK_BACKEND_CPU].topn(m, l, to, NULL, ts, err);
    if (on_be && be->gpu && rk_backend_fall_back(s, r, what, err)) {
        RK_FORWARD(restart(ud, err));
        if (ts != NULL) memset(ts, 0, sizeof *ts);
        r = backends[RK_BACKEND_CPU].topn(m, l, to, NULL, ts, err);
    }
    return r;
}

void rk_backend_free(rk_backend_seam *s)
{
    rk_gpu_rows_free(s->rows); /* a job that failed in its data stage */
    s->rows = NULL;
    warm_join(s);
}
