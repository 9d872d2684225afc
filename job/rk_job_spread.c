/* The engine stage shared out among MPI ranks and several GPUs (rk_job_internal.h).
 *
 * rows:  the item rows (user rows with --by user) are shared out among the
 *        ranks by work (rk_part_lpt over rk_knn_item_order's costs), and a
 *        rank's among its GPUs the same way; each part runs the ordinary
 *        engine on its rows (rk_knn_opts.rows) with the prediction queries
 *        whose item it owns.  Every rank computes the same parts: nothing is
 *        sent to decide them.
 * lists: one allgather, so that every rank holds every list (top-N reads
 *        the lists of every item a user rated); predictions go to rank 0.
 * top-N: the users served are cut into consecutive ranges of about equal
 *        work (rk_part_ranges), one per rank and, within it, into chunks
 *        dealt out to its parts in turn (4 a part with several parts,
 *        rk_recset); each part appends its batches to its chunks' streams
 *        and rank 0 hands them to the sink in request order: its own, then
 *        each rank's as it arrives, one at a time (rk_job_join_recs); with
 *        slices (in->recs) each rank formats its own rows of the file and
 *        rank 0's sink measures the others' batches only.  The files are
 *        thus those of one process, byte for byte: every list, prediction
 *        and score is computed by the same code from the same data whoever
 *        computes it.
 * fused: when every part of the rank is a GPU (item top-N), each part's
 *        engine call goes on to its top-N (rk_gpu_opts.between): the parts
 *        meet once their lists are made, this thread joins the lists,
 *        exchanges them with the other ranks and shares out the users, and
 *        each GPU ranks its users with the ratings it already holds (no
 *        second upload), while this thread writes the chunks' batches as
 *        they come, in request order.  The exchanges are those of the
 *        other path, in the same order, so ranks may take different paths.
 *        A part whose GPU fails under --device auto makes its lists, or the
 *        rest of its users, on the CPU (the same results).
 */
#include "config.h"
#include "rk_job_internal.h"
#include "rk_gpu.h"
#include "rk_omp.h"
#include "rk_part.h"
#include "rk_recbuf.h"
#include "rk_recstream.h"
#include "rk_utopn.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct meet meet;

/* Top-N chunks a part (RK_SPREAD_CHUNKS with several parts; one without):
 * the parts' chunks alternate in the request, so that the writer formats
 * every part's batches while they all still compute (rk_recset).
 * Measured on two H200s (BENCHMARKS.md, issue 22, 2026-11-28): top-N with
 * 1 / 4 / 16 chunks a GPU 1.54-1.62 / 1.23-1.30 / 1.21-1.23 s at 200,000
 * items, 0.18-0.22 / 0.18-0.19 / 0.24-0.25 s at Netflix size, where the
 * writer formatting beside busy GPU threads slowed down more with more
 * chunks.  RECKNN_TOPN_CHUNKS=N sets another count, for comparisons (1:
 * each part one range, written after the one before). */
#define RK_SPREAD_CHUNKS 4

static int spread_chunks(int n_parts)
{
    const char *e = getenv("RECKNN_TOPN_CHUNKS");
    int c = e != NULL && *e != '\0' ? atoi(e) : RK_SPREAD_CHUNKS;
    if (c < 1) c = 1;
    if (c > 256) c = 256;
    return n_parts > 1 ? n_parts * c : 1;
}

/* One part of this rank: a GPU worker, or the rank's CPU engine. */
typedef struct part {
    const rk_job_spread_in *in;
    meet *mt;                       /* fused: the meeting between lists and top-N (else NULL) */
    rk_gpu_sym *sym;                /* the parts' shared symmetric tile (NULL: none) */
    int w, device;                  /* device -1: the CPU */
    int32_t *rows, n_rows;          /* item rows (ascending) */
    int64_t work;
    const int64_t *item_cost;       /* every item's cost (rk_knn_item_order), for its engine's order */
    rk_lists own;                   /* a worker's own lists (workers after the first) */
    rk_lists *lists;
    int64_t nq, *qat;               /* its queries, and their index in the job's */
    int32_t *qu, *qi, *used;
    double *pred;
    int32_t *users;                 /* top-N: its users, its chunks' one after the other */
    int64_t n_users, topn_work;
    rk_topn_opts to;                /* its top-N request (part_request) */
    rk_recroute route;              /* to's sink: its batches to its chunks' streams */
    rk_status s;
    rk_error err;
    rk_knn_stats st;
    rk_topn_stats ts;
    double t0, engine_s, topn_s;
    int fell_back;
    int met;                        /* fused: 1 at the meeting with its lists, -1 without */
} part;

/* The GPU parts' engine: CUDA's, or a test's. */
static const rk_backend *gpu_backend(const rk_job_spread_in *in)
{
    return in->gpu_be != NULL ? in->gpu_be : rk_backend_get(RK_BACKEND_CUDA);
}

/* A GPU part's thread runs OpenMP teams of its share of the cores (its
 * host work: batches, orders, copies), so that the parts' teams and the
 * writer's (drain_parts) do not crowd each other out of them.  @return the
 * team size before, for part_threads_end (part 0 may run on the caller's
 * thread). */
static int part_threads(const part *p)
{
    const int was = rk_omp_max_threads(), n_parts = p->in->n_devices;
    if (p->device < 0 || n_parts < 2) return was; /* a CPU engine takes every core */
    const int nt = rk_omp_num_procs() / (n_parts + 1);
    if (nt < was) rk_omp_set_threads(nt > 0 ? nt : 1);
    return was;
}

static void part_threads_end(int was)
{
    rk_omp_set_threads(was);
}

/* The GPU options of the part's calls: its device. */
static rk_gpu_opts part_gpu(const part *p)
{
    rk_gpu_opts g = *p->in->gpu;
    g.device = p->device;
    g.sym = p->sym;
    g.sym_part = p->w;
    return g;
}

/* The part's engine call: its rows, its queries (@return NULL: none), its
 * device; progress from rank 0's first part alone. */
static rk_queries *part_call(const part *p, rk_knn_opts *eko, rk_queries *q, rk_gpu_opts *g)
{
    const rk_job_spread_in *in = p->in;
    *eko = *in->eko;
    eko->rows = p->rows;
    eko->n_rows = p->n_rows;
    eko->item_cost = p->item_cost; /* of in->em: made once, not by every part */
    if (p->w > 0 || rk_dist_rank(in->dist) > 0) eko->progress = NULL;
    *q = (rk_queries){p->nq, p->qu, p->qi, p->pred, p->used, NULL, NULL};
    *g = part_gpu(p);
    return p->nq > 0 ? q : NULL;
}

/* The model of a part's CPU engine call: in->em, or in->host_model's
 * (asked under a lock shared by the parts).  NULL: failed, with p->err. */
static pthread_mutex_t host_model_lock = PTHREAD_MUTEX_INITIALIZER;

static const rk_model *part_host_model(part *p)
{
    const rk_job_spread_in *in = p->in;
    if (in->host_model == NULL) return in->em;
    pthread_mutex_lock(&host_model_lock);
    const rk_model *m = in->host_model(in->hook_ud, &p->err);
    pthread_mutex_unlock(&host_model_lock);
    return m;
}

/* The part's lists on the CPU (its first call, or after its GPU's failure). */
static rk_status part_cpu_knn(part *p, const rk_knn_opts *eko, const rk_gpu_opts *g, rk_queries *qp)
{
    const rk_model *hm = part_host_model(p);
    if (hm == NULL) return RK_E_NOMEM; /* p->err says why */
    rk_knn_opts ko = *eko;
    if (hm != p->in->em) ko.item_cost = NULL; /* the costs are in->em's */
    return rk_backend_get(RK_BACKEND_CPU)->knn(hm, &ko, g, p->lists, qp, NULL, NULL, &p->st, &p->err);
}

/* The parts of a fused stage, between their lists and their top-N. */
struct meet {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int arrived, released, go;      /* go: top-N in the parts */
    double t_go;
    pthread_t th[RK_GPUS_MAX];
    int started[RK_GPUS_MAX];
};

static void part_free(part *p)
{
    free(p->rows);
    rk_lists_free(&p->own);
    free(p->qat);
    free(p->qu);
    free(p->qi);
    free(p->used);
    free(p->pred);
    free(p->users);
}

/* The part's top-N request from its done-th user on (0: all of them). */
static void part_request(part *p, int64_t done)
{
    const rk_job_spread_in *in = p->in;
    rk_recroute_resume(&p->route, done);
    p->to = *in->to;
    p->to.users = p->users + done;
    p->to.n_users = p->n_users - done;
    p->to.sink = rk_recroute_sink;
    p->to.sink_ud = &p->route;
    if (p->w > 0 || rk_dist_rank(in->dist) > 0 || done > 0) p->to.progress = NULL;
}

/* ---- the lists and predictions of a part ------------------------------- */

static void *engine_part(void *arg)
{
    part *p = arg;
    const rk_job_spread_in *in = p->in;
    const int was = part_threads(p);
    const double t0 = rk_omp_wtime();
    rk_knn_opts eko;
    rk_queries q;
    rk_gpu_opts g;
    rk_queries *qp = part_call(p, &eko, &q, &g);
    if (p->device < 0) {
        p->s = part_cpu_knn(p, &eko, &g, qp);
    } else {
        p->s = gpu_backend(in)->knn(in->em, &eko, &g, p->lists, qp, NULL, NULL, &p->st, &p->err);
        if (rk_backend_can_fall_back(in->seam, p->s)) { /* the part is redone on the CPU */
            p->fell_back = 1;
            rk_error why = p->err;
            p->s = part_cpu_knn(p, &eko, &g, qp);
            if (p->s == RK_OK) p->err = why; /* kept for the note */
        }
    }
    p->engine_s = rk_omp_wtime() - t0;
    part_threads_end(was);
    return NULL;
}

/* The rows and queries of each part of this rank; the lists of the first
 * part are the job's, the others' their own. */
static rk_status plan_parts(const rk_job_spread_in *in, const int32_t *owner, const int64_t *cost, part *parts,
                            int n_parts, rk_error *err)
{
    const int me = rk_dist_rank(in->dist);
    const int32_t n_items = in->lists->n_items;
    int32_t n_mine = 0;
    for (int32_t i = 0; i < n_items; i++) n_mine += owner[i] == me;
    int32_t *mine = malloc((size_t)(n_mine > 0 ? n_mine : 1) * sizeof *mine);
    int64_t *mcost = malloc((size_t)(n_mine > 0 ? n_mine : 1) * sizeof *mcost);
    int32_t *wown = malloc((size_t)(n_mine > 0 ? n_mine : 1) * sizeof *wown);
    rk_status s = RK_OK;
    if (mine == NULL || mcost == NULL || wown == NULL) {
        s = rk_error_set(err, RK_E_NOMEM, "out of memory for the rows of %d parts", n_parts);
        goto done;
    }
    n_mine = 0;
    for (int32_t i = 0; i < n_items; i++)
        if (owner[i] == me) {
            mcost[n_mine] = cost[i];
            mine[n_mine++] = i;
        }
    s = rk_part_lpt(mcost, n_mine, n_parts, wown, NULL, err);
    if (s != RK_OK) goto done;
    /* the part of each item, for the queries: -1 for the other ranks' */
    int32_t *wof = malloc((size_t)(n_items > 0 ? n_items : 1) * sizeof *wof);
    if (wof == NULL) {
        s = rk_error_set(err, RK_E_NOMEM, "out of memory for the owners of %d items", n_items);
        goto done;
    }
    for (int32_t i = 0; i < n_items; i++) wof[i] = -1;
    for (int32_t t = 0; t < n_mine; t++) wof[mine[t]] = wown[t];
    const rk_queries *q = in->q;
    for (int w = 0; w < n_parts && s == RK_OK; w++) {
        part *p = &parts[w];
        int32_t n = 0;
        for (int32_t t = 0; t < n_mine; t++) n += wown[t] == w;
        p->rows = malloc((size_t)(n > 0 ? n : 1) * sizeof *p->rows);
        if (p->rows == NULL) {
            s = rk_error_set(err, RK_E_NOMEM, "out of memory for a part's rows");
            break;
        }
        for (int32_t t = 0; t < n_mine; t++)
            if (wown[t] == w) {
                p->rows[p->n_rows++] = mine[t];
                p->work += mcost[t];
            }
        if (w == 0) p->lists = in->lists;
        else if ((s = rk_lists_alloc(&p->own, n_items, in->lists->k, err)) == RK_OK) p->lists = &p->own;
        int64_t nq = 0;
        for (int64_t t = 0; q != NULL && t < q->n; t++) nq += wof[q->item[t]] == w;
        if (s != RK_OK || nq == 0) continue;
        p->qat = malloc((size_t)nq * sizeof *p->qat);
        p->qu = malloc((size_t)nq * sizeof *p->qu);
        p->qi = malloc((size_t)nq * sizeof *p->qi);
        p->used = malloc((size_t)nq * sizeof *p->used);
        p->pred = malloc((size_t)nq * sizeof *p->pred);
        if (p->qat == NULL || p->qu == NULL || p->qi == NULL || p->used == NULL || p->pred == NULL) {
            s = rk_error_set(err, RK_E_NOMEM, "out of memory for %lld queries", (long long)nq);
            break;
        }
        for (int64_t t = 0; t < q->n; t++)
            if (wof[q->item[t]] == w) {
                p->qat[p->nq] = t;
                p->qu[p->nq] = q->user[t];
                p->qi[p->nq++] = q->item[t];
            }
    }
    free(wof);
done:
    free(mine);
    free(mcost);
    free(wown);
    return s;
}

/* Run fn on every part: a thread each when there are several. */
static void run_parts(part *parts, int n_parts, void *(*fn)(void *))
{
    pthread_t th[RK_GPUS_MAX];
    int started[RK_GPUS_MAX] = {0};
    for (int w = 1; w < n_parts; w++)
        if (!(started[w] = pthread_create(&th[w], NULL, fn, &parts[w]) == 0)) rk_gpu_sym_leave(parts[w].sym, w);
    fn(&parts[0]); /* a part without a thread runs later: the others do not wait for it */
    for (int w = 1; w < n_parts; w++) {
        if (started[w]) pthread_join(th[w], NULL);
        else fn(&parts[w]); /* no thread: in turn */
    }
}

/* The first failing part's status and message; with notes, a note for each
 * part that fell back to the CPU. */
static rk_status parts_status(const rk_job_spread_in *in, part *parts, int n_parts, int notes, rk_error *err)
{
    for (int w = 0; w < n_parts; w++)
        if (parts[w].s != RK_OK) {
            *err = parts[w].err;
            return parts[w].s;
        }
    for (int w = 0; notes && w < n_parts; w++)
        if (parts[w].fell_back)
            rk_note(in->o->note, in->o->ud, "rank %d: the GPU engine failed on device %d (%.400s): its part ran on "
                    "the CPU", rk_dist_rank(in->dist), parts[w].device, parts[w].err.msg);
    return RK_OK;
}

/* ---- the fused stage: lists, a meeting, top-N on the same GPUs ------------ */

/* Every part is a GPU ranking item top-N within the GPU's limit from the
 * ratings the engine reads, or their pattern (the ranking model's values are
 * its own; its users and items are the fold's): RECKNN_GPU_FUSED=0: never,
 * for comparisons. */
static int can_fuse(const rk_job_spread_in *in)
{
    const rk_backend *cuda = gpu_backend(in);
    int gpus = in->n_devices > 0;
    for (int w = 0; w < in->n_devices; w++) gpus &= in->devices[w] >= 0;
    const rk_csr *a = &in->em->by_user, *b = &in->m->by_user; /* top-N reads the engine's ratings' pattern */
    const int same = a->ptr == b->ptr && a->idx == b->idx && a->n_rows == b->n_rows && a->nnz == b->nnz;
    return gpus && same && in->to != NULL && !in->by_user && cuda->fused_topn && in->to->n <= cuda->max_topn &&
           !rk_backend_switched_off("RECKNN_GPU_FUSED");
}

/* A part at the meeting (ok: with its lists); waits for the release.
 * @return 1 when the parts go on to their top-N. */
static int meet_arrive(part *p, int ok)
{
    meet *mt = p->mt;
    pthread_mutex_lock(&mt->mu);
    p->met = ok ? 1 : -1;
    mt->arrived++;
    pthread_cond_broadcast(&mt->cv);
    while (!mt->released) pthread_cond_wait(&mt->cv, &mt->mu);
    const int go = mt->go;
    pthread_mutex_unlock(&mt->mu);
    return go;
}

/* rk_gpu_opts.between: the part's lists are made. */
static rk_status between(void *ud, const rk_lists **lists, const rk_topn_opts **topn, rk_error *err)
{
    (void)err;
    part *p = ud;
    p->engine_s = rk_omp_wtime() - p->t0;
    const int go = meet_arrive(p, 1);
    *lists = p->in->lists;
    *topn = go && p->n_users > 0 ? &p->to : NULL;
    return RK_OK;
}

/* The CPU's top-N of the part's users from the done-th on. */
static rk_status cpu_topn_from(part *p, int64_t done)
{
    part_request(p, done);
    const rk_gpu_opts g = part_gpu(p);
    return rk_backend_get(RK_BACKEND_CPU)->topn(p->in->m, p->in->lists, &p->to, &g, &p->ts, &p->err);
}

static void *fused_part(void *arg)
{
    part *p = arg;
    const rk_job_spread_in *in = p->in;
    part_threads(p); /* a thread of its own */
    p->t0 = rk_omp_wtime();
    rk_knn_opts eko;
    rk_queries q;
    rk_gpu_opts g;
    rk_queries *qp = part_call(p, &eko, &q, &g);
    g.between = between;
    g.between_ud = p;
    p->s = gpu_backend(in)->knn(in->em, &eko, &g, p->lists, qp, in->to, &p->ts, &p->st, &p->err);
    const int can = rk_backend_can_fall_back(in->seam, p->s);
    const rk_error why = p->err;
    if (p->met == 0) { /* no lists from the GPU: the CPU's, then its top-N */
        if (can) {
            p->fell_back = 1;
            p->s = part_cpu_knn(p, &eko, &g, qp);
        }
        p->engine_s = rk_omp_wtime() - p->t0;
        if (meet_arrive(p, p->s == RK_OK) && p->s == RK_OK && p->n_users > 0) p->s = cpu_topn_from(p, 0);
    } else if (can && p->mt->go) { /* its top-N failed: the CPU takes up its users where the GPU stopped */
        p->fell_back = 1;
        p->s = cpu_topn_from(p, p->route.done);
    }
    if (p->fell_back && p->s == RK_OK) p->err = why; /* kept for the note */
    if (p->met != 0) p->topn_s = rk_omp_wtime() - p->mt->t_go;
    rk_recroute_close(&p->route, p->s == RK_OK);
    return NULL;
}

/* The parts' threads, up to the meeting: every part has its lists (or has
 * failed) when this returns; the caller releases them (meet_release). */
static rk_status meet_start(meet *mt, part *parts, int n_parts, rk_error *err)
{
    memset(mt, 0, sizeof *mt);
    if (pthread_mutex_init(&mt->mu, NULL) != 0) return rk_error_set(err, RK_E_NOMEM, "no lock for the GPUs' meeting");
    if (pthread_cond_init(&mt->cv, NULL) != 0) {
        pthread_mutex_destroy(&mt->mu);
        return rk_error_set(err, RK_E_NOMEM, "no condition for the GPUs' meeting");
    }
    for (int w = 0; w < n_parts; w++) {
        part *p = &parts[w];
        p->mt = mt;
        mt->started[w] = pthread_create(&mt->th[w], NULL, fused_part, p) == 0;
        if (!mt->started[w]) { /* no thread: the part fails at the meeting */
            rk_gpu_sym_leave(p->sym, w);
            p->s = rk_error_set(&p->err, RK_E_NOMEM, "no thread for the part on device %d", p->device);
            pthread_mutex_lock(&mt->mu);
            p->met = -1;
            mt->arrived++;
            pthread_mutex_unlock(&mt->mu);
            rk_recroute_close(&p->route, 0);
        }
    }
    pthread_mutex_lock(&mt->mu);
    while (mt->arrived < n_parts) pthread_cond_wait(&mt->cv, &mt->mu);
    pthread_mutex_unlock(&mt->mu);
    return RK_OK;
}

/* The parts go on (go: to their top-N, whose requests are set) or end. */
static void meet_release(meet *mt, int go)
{
    pthread_mutex_lock(&mt->mu);
    mt->go = go;
    mt->t_go = rk_omp_wtime();
    mt->released = 1;
    pthread_cond_broadcast(&mt->cv);
    pthread_mutex_unlock(&mt->mu);
}

static void meet_join(meet *mt, int n_parts)
{
    for (int w = 0; w < n_parts; w++)
        if (mt->started[w]) pthread_join(mt->th[w], NULL);
    pthread_mutex_destroy(&mt->mu);
    pthread_cond_destroy(&mt->cv);
}

/* A fused stage: the parts' batches into this rank's sink as they come
 * (rank 0: the file and the ranking metrics; another rank: its slice of the
 * file), chunk after chunk; a part that failed ends the writing (the job
 * fails).  The sink's OpenMP teams (formatting, ranking metrics) leave a
 * core to each part's thread, which feeds its GPU: measured on four GPUs, a
 * team of every core beside them halved the writing's rate and the GPUs'. */
static rk_status drain_parts(rk_recset *set, int n_parts, rk_topn_sink sink, void *ud, rk_error *err)
{
    const int was = rk_omp_max_threads();
    int nt = rk_omp_num_procs() - n_parts;
    if (nt > was) nt = was;
    rk_omp_set_threads(nt > 0 ? nt : 1);
    const rk_status s = rk_recset_drain(set, sink, ud, err);
    rk_omp_set_threads(was);
    return s;
}

/* This rank's sink as its parts' batches come (none: they are kept). */
static int rank_sink(const rk_job_spread_in *in, rk_topn_sink *sink, void **ud)
{
    if (rk_dist_rank(in->dist) == 0) {
        *sink = in->to->sink;
        *ud = in->to->sink_ud;
        return 1;
    }
    if (in->recs == NULL) return 0;
    *sink = rk_outset_slice_put;
    *ud = in->recs->slice;
    return 1;
}

/* ---- top-N ---------------------------------------------------------------- */

static void *topn_part(void *arg)
{
    part *p = arg;
    const rk_job_spread_in *in = p->in;
    const int was = part_threads(p);
    const double t0 = rk_omp_wtime();
    p->s = RK_OK;
    if (p->n_users > 0) {
        part_request(p, 0);
        const rk_backend *cpu = rk_backend_get(RK_BACKEND_CPU);
        const rk_gpu_opts g = part_gpu(p);
        if (in->by_user) { /* user-mode top-N: the CPU's */
            p->s = cpu->user_topn(in->m, in->lists, &p->to, &g, &p->ts, &p->err);
        } else {
            const rk_backend *be = p->device >= 0 ? gpu_backend(in) : cpu;
            p->s = be->topn(in->m, in->lists, &p->to, &g, &p->ts, &p->err);
            if (be->gpu && rk_backend_can_fall_back(in->seam, p->s)) {
                p->fell_back = 1; /* the CPU takes up the users where the GPU stopped */
                p->s = cpu_topn_from(p, p->route.done);
            }
        }
    }
    rk_recroute_close(&p->route, p->s == RK_OK);
    p->topn_s = rk_omp_wtime() - t0;
    part_threads_end(was);
    return NULL;
}


/* The users of every rank (rb[R + 1]) by work, the rank's range cut into
 * the set's chunks by work, each part's users (its chunks') and request.
 * *n_users: every user served. */
static rk_status plan_topn(const rk_job_spread_in *in, part *parts, int n_parts, rk_recset *set, int32_t *rb,
                           int64_t *n_users, int32_t **all, rk_error *err)
{
    const int R = rk_dist_size(in->dist), me = rk_dist_rank(in->dist);
    const int32_t *users = NULL;
    int64_t *cost = NULL;
    int32_t *cb = malloc((size_t)(set->n + 1) * sizeof *cb);
    rk_status s = cb != NULL ? RK_OK : rk_error_set(err, RK_E_NOMEM, "out of memory for %d chunks", set->n);
    if (s == RK_OK) s = rk_job_served_users(in, all, &users, n_users, &cost, err);
    if (s == RK_OK && *n_users > INT32_MAX)
        s = rk_error_set(err, RK_E_RANGE, "%lld users to share out", (long long)*n_users);
    if (s == RK_OK) s = rk_part_ranges(cost, (int32_t)*n_users, R, rb, NULL, err);
    if (s == RK_OK) s = rk_part_ranges(cost + rb[me], rb[me + 1] - rb[me], set->n, cb, NULL, err);
    for (int c = 0; s == RK_OK && c <= set->n; c++) set->at[c] = cb[c];
    for (int w = 0; s == RK_OK && w < n_parts; w++) {
        part *p = &parts[w];
        p->n_users = rk_recroute_count(&p->route);
        p->users = malloc((size_t)(p->n_users > 0 ? p->n_users : 1) * sizeof *p->users);
        if (p->users == NULL) {
            s = rk_error_set(err, RK_E_NOMEM, "out of memory for %lld users", (long long)p->n_users);
            break;
        }
        rk_recroute_users(&p->route, users + rb[me], p->users);
        for (int c = w; c < set->n; c += n_parts)
            for (int64_t t = rb[me] + cb[c]; t < rb[me] + cb[c + 1]; t++) p->topn_work += cost[t];
        part_request(p, 0);
    }
    free(cb);
    free(cost);
    return s;
}

/* After the parts' top-N: the ranks' batches and files joined
 * (rk_job_join_recs); the stage's statistics. */
static rk_status finish_topn(const rk_job_spread_in *in, part *parts, int n_parts, const rk_recset *set, int drained,
                             const int32_t *rb, int64_t n_users, rk_status s, rk_error *err)
{
    const rk_recbuf **bufs = malloc((size_t)set->n * sizeof *bufs);
    if (bufs == NULL && s == RK_OK) s = rk_error_set(err, RK_E_NOMEM, "out of memory for %d chunks", set->n);
    for (int c = 0; bufs != NULL && c < set->n; c++) bufs[c] = &set->s[c].buf;
    /* without the chunks (no memory), every rank still meets the others' agreements */
    s = rk_job_join_recs(in, bufs, bufs != NULL ? set->n : 0, drained, rb, s, err);
    free(bufs);
    s = rk_dist_agree(in->dist, s, err);
    if (s == RK_OK && in->ts != NULL) {
        memset(in->ts, 0, sizeof *in->ts);
        in->ts->users = n_users; /* rows and updates: summed from every rank's parts later */
        snprintf(in->ts->path, sizeof in->ts->path, "%.56s%s", parts[0].ts.path, parts[0].mt != NULL ? ", fused" : "");
        char w[48] = ""; /* the writer's time in the sink, of its drain's, where it drained */
        if (drained) snprintf(w, sizeof w, "writer %.3f/%.3f s; ", set->busy_s, set->wall_s);
        snprintf(in->ts->detail, sizeof in->ts->detail, "%d part%s, %d chunk%s; %sthe first: %.40s", n_parts % 100,
                 n_parts == 1 ? "" : "s", set->n % 10000, set->n == 1 ? "" : "s", w, parts[0].ts.detail);
    }
    return s;
}

/* ---- the stage ------------------------------------------------------------ */

/* Every part's figures to rank 0's report, in place of the stage's earlier
 * ones (an earlier fold's). */
static rk_status gather_parts(const rk_job_spread_in *in, part *parts, int n_parts, rk_error *err)
{
    const int R = rk_dist_size(in->dist), me = rk_dist_rank(in->dist);
    rk_job_part mine[RK_GPUS_MAX];
    memset(mine, 0, sizeof mine);
    for (int w = 0; w < n_parts; w++) {
        const part *p = &parts[w];
        mine[w] = (rk_job_part){me, w, p->fell_back ? -1 : p->device, p->n_rows, p->work, p->engine_s,
                                p->n_users, p->topn_work, p->ts.rows, p->topn_s, p->fell_back, in->stage, "", ""};
        snprintf(mine[w].engine_detail, sizeof mine[w].engine_detail, "%.100s%s%.150s", p->st.path,
                 p->st.detail[0] != '\0' ? " | " : "", p->st.detail);
        snprintf(mine[w].topn_detail, sizeof mine[w].topn_detail, "%s", p->ts.detail);
    }
    unsigned char *all = NULL;
    size_t *offs = malloc((size_t)(R + 1) * sizeof *offs);
    rk_status s = offs != NULL ? RK_OK : rk_error_set(err, RK_E_NOMEM, "out of memory for %d offsets", R);
    s = rk_dist_agree(in->dist, s, err);
    if (s == RK_OK) s = rk_dist_gatherv(in->dist, mine, (size_t)n_parts * sizeof *mine, 0, &all, offs, err);
    if (s == RK_OK && me == 0) {
        rk_job_report *rep = in->rep;
        int kept = 0; /* the other stage's parts stay */
        for (int x = 0; x < rep->n_parts; x++)
            if (rep->part[x].stage != in->stage) rep->part[kept++] = rep->part[x];
        rep->n_parts = kept;
        for (int r = 0; r < R; r++) {
            const size_t n = (offs[r + 1] - offs[r]) / sizeof(rk_job_part); /* padding is less than one */
            for (size_t x = 0; x < n && rep->n_parts < RK_JOB_MAX_PARTS; x++) {
                const rk_job_part *jp = (const rk_job_part *)(all + offs[r]) + x;
                if (jp->rank != r) break; /* padding */
                rep->part[rep->n_parts++] = *jp;
            }
        }
    }
    free(all);
    free(offs);
    return s;
}

/* The parts' lists and answers into the job's, and the engine's statistics
 * (rank 0's first part's, the work summed). */
static void merge_parts(const rk_job_spread_in *in, part *parts, int n_parts, double t_engine)
{
    for (int w = 0; w < n_parts; w++) {
        part *p = &parts[w];
        for (int64_t x = 0; x < p->nq; x++) {
            in->q->pred[p->qat[x]] = p->pred[x];
            in->q->used[p->qat[x]] = p->used[x];
        }
        if (p->lists == in->lists) continue;
        const size_t k = (size_t)in->lists->k;
        for (int32_t t = 0; t < p->n_rows; t++) {
            const size_t i = (size_t)p->rows[t];
            in->lists->len[i] = p->lists->len[i];
            memcpy(in->lists->nbr + i * k, p->lists->nbr + i * k, k * sizeof(int32_t));
            memcpy(in->lists->sim + i * k, p->lists->sim + i * k, k * sizeof(float));
            memcpy(in->lists->support + i * k, p->lists->support + i * k, k * sizeof(int32_t));
        }
    }
    *in->st = parts[0].st;
    in->st->wall_s = rk_omp_wtime() - t_engine;
    for (int w = 1; w < n_parts; w++) {
        in->st->pair_updates += parts[w].st.pair_updates;
        if (parts[w].st.sim_s > in->st->sim_s) in->st->sim_s = parts[w].st.sim_s;
    }
}

/* Who owns each row: the ranks by work (owner[], -1 outside a subset). */
static rk_status plan_owners(const rk_job_spread_in *in, int32_t *owner, int64_t *cost, rk_error *err)
{
    const int32_t n_items = in->lists->n_items;
    const rk_knn_opts *eko = in->eko;
    int32_t *order = malloc((size_t)(n_items > 0 ? n_items : 1) * sizeof *order);
    int32_t *rown = malloc((size_t)(n_items > 0 ? n_items : 1) * sizeof *rown);
    int64_t *rcost = malloc((size_t)(n_items > 0 ? n_items : 1) * sizeof *rcost);
    rk_status s = RK_OK;
    if (order == NULL || rown == NULL || rcost == NULL || rk_knn_item_order(in->em, order, cost) < 0)
        s = rk_error_set(err, RK_E_NOMEM, "out of memory for the work of %d rows", n_items);
    const int32_t n_rows = eko->rows != NULL ? eko->n_rows : n_items;
    if (s == RK_OK) {
        for (int32_t t = 0; t < n_rows; t++) rcost[t] = cost[eko->rows != NULL ? eko->rows[t] : t];
        s = rk_part_lpt(rcost, n_rows, rk_dist_size(in->dist), rown, NULL, err);
    }
    if (s == RK_OK) {
        for (int32_t i = 0; i < n_items; i++) owner[i] = -1;
        for (int32_t t = 0; t < n_rows; t++) owner[eko->rows != NULL ? eko->rows[t] : t] = rown[t];
    }
    free(order);
    free(rown);
    free(rcost);
    return s;
}

rk_status rk_job_spread(const rk_job_spread_in *in, rk_error *err)
{
    const int R = rk_dist_size(in->dist);
    const int n_parts = in->n_devices > 0 ? in->n_devices : 1;
    const int32_t n_items = in->lists->n_items;
    part parts[RK_GPUS_MAX];
    memset(parts, 0, sizeof parts);
    rk_recset set;
    rk_status s = rk_recset_init(&set, spread_chunks(n_parts), err);
    for (int w = 0; w < n_parts; w++) {
        parts[w].in = in;
        parts[w].w = w;
        parts[w].device = in->n_devices > 0 ? in->devices[w] : -1;
        rk_recroute_init(&parts[w].route, &set, w, n_parts);
    }
    int32_t *owner = malloc((size_t)(n_items > 0 ? n_items : 1) * sizeof *owner);
    int64_t *cost = malloc((size_t)(n_items > 0 ? n_items : 1) * sizeof *cost);
    if (s == RK_OK && (owner == NULL || cost == NULL))
        s = rk_error_set(err, RK_E_NOMEM, "out of memory for the owners of %d rows", n_items);
    if (s == RK_OK) s = plan_owners(in, owner, cost, err);
    /* the GPUs sharing one symmetric tile share its rows out by their work there */
    int64_t *scost = NULL;
    const int share = s == RK_OK && rk_job_sym_costs(in, n_parts, &scost);
    if (s == RK_OK) s = plan_parts(in, owner, share ? scost : cost, parts, n_parts, err);
    for (int w = 0; s == RK_OK && w < n_parts; w++) parts[w].item_cost = cost;
    rk_gpu_sym *sym = NULL;
    if (share && s == RK_OK) {
        int32_t *rows[RK_GPUS_MAX], n_rows[RK_GPUS_MAX];
        for (int w = 0; w < n_parts; w++) rows[w] = parts[w].rows, n_rows[w] = parts[w].n_rows;
        s = rk_job_sym_start(in, n_parts, rows, n_rows, scost, &sym, err);
        for (int w = 0; w < n_parts; w++) parts[w].sym = sym;
    }
    /* the lists and answers of every part */
    meet mt;
    int fused = s == RK_OK && can_fuse(in);
    const double t_engine = rk_omp_wtime();
    if (fused) {
        s = meet_start(&mt, parts, n_parts, err);
        fused = s == RK_OK; /* else no thread started */
    } else if (s == RK_OK) {
        run_parts(parts, n_parts, engine_part);
    }
    if (s == RK_OK) s = parts_status(in, parts, n_parts, in->to == NULL, err);
    if (s == RK_OK) merge_parts(in, parts, n_parts, t_engine);
    for (int w = 0; share && !rk_gpu_sym_shared(sym) && w < n_parts; w++) { /* not shared after all: full rows */
        parts[w].work = 0;
        for (int32_t t = 0; t < parts[w].n_rows; t++) parts[w].work += cost[parts[w].rows[t]];
    }
    if (s == RK_OK) s = rk_dist_fault(in->dist, "lists", err);
    /* every rank's lists where they are read; the predictions to rank 0 */
    /* a failing rank goes straight to the last agreement, where it meets
     * the others' next one (rk_dist.h) */
    const double t_x = rk_omp_wtime();
    if (R > 1 && s == RK_OK) s = rk_job_exchange_lists(in, owner, in->to != NULL, err);
    if (R > 1 && s == RK_OK && in->q != NULL && in->q->n > 0) s = rk_job_exchange_predictions(in, owner, err);
    const double t_exchange = rk_omp_wtime() - t_x, t_topn = rk_omp_wtime();
    if (s == RK_OK && in->shape != NULL) in->shape(in->hook_ud, in->lists);
    /* top-N: on the parts' GPUs where they wait (fused), else by the parts in turn */
    const int topn = in->to != NULL && s == RK_OK;
    int32_t *all = NULL, *rb = malloc((size_t)(R + 1) * sizeof *rb);
    int64_t n_users = 0;
    if (topn && rb == NULL) s = rk_error_set(err, RK_E_NOMEM, "out of memory for %d ranges", R);
    if (topn && s == RK_OK) s = plan_topn(in, parts, n_parts, &set, rb, &n_users, &all, err);
    rk_topn_sink sink = NULL;
    void *sink_ud = NULL;
    const int drains = fused && topn && rank_sink(in, &sink, &sink_ud);
    if (fused) {
        meet_release(&mt, topn && s == RK_OK);
        rk_status sd = RK_OK;
        if (drains && s == RK_OK) sd = drain_parts(&set, n_parts, sink, sink_ud, err);
        meet_join(&mt, n_parts);
        if (topn && s == RK_OK) s = parts_status(in, parts, n_parts, 1, err);
        if (s == RK_OK) s = sd;
    } else if (topn && s == RK_OK) {
        run_parts(parts, n_parts, topn_part);
        s = parts_status(in, parts, n_parts, 1, err);
    }
    if (topn) s = finish_topn(in, parts, n_parts, &set, drains, rb, n_users, s, err);
    free(all);
    free(rb);
    if (s == RK_OK) s = gather_parts(in, parts, n_parts, err);
    if (s == RK_OK && rk_dist_rank(in->dist) == 0) {
        int64_t pairs = 0;
        for (int x = 0; x < in->rep->n_parts; x++)
            if (in->rep->part[x].stage == in->stage) pairs += in->rep->part[x].work;
        in->st->pair_updates = pairs;
        in->rep->t_exchange += t_exchange;
        if (in->ts != NULL && in->to != NULL) {
            in->ts->wall_s = rk_omp_wtime() - t_topn;
            for (int x = 0; x < in->rep->n_parts; x++) {
                const rk_job_part *jp = &in->rep->part[x];
                if (jp->stage != in->stage) continue;
                in->ts->rows += jp->topn_rows;
                in->ts->updates += jp->topn_work;
                if (jp->topn_s > in->ts->compute_s) in->ts->compute_s = jp->topn_s;
            }
        }
    }
    s = rk_dist_agree(in->dist, s, err);
    for (int w = 0; w < n_parts; w++) part_free(&parts[w]);
    rk_recset_free(&set);
    rk_gpu_sym_free(sym);
    free(scost);
    free(owner);
    free(cost);
    return s;
}
