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
 *        work (rk_part_ranges), one per rank and, within it, one per GPU;
 *        each part keeps its batches (rk_recbuf) and rank 0 hands them to
 *        the sink in request order: its own, then each rank's as it arrives,
 *        one at a time.  The files are thus those of one process, byte for
 *        byte: every list, prediction and score is computed by the same
 *        code from the same data whoever computes it.
 */
#include "config.h"
#include "rk_job_internal.h"
#include "rk_gpu.h"
#include "rk_omp.h"
#include "rk_part.h"
#include "rk_recbuf.h"
#include "rk_utopn.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One part of this rank: a GPU worker, or the rank's CPU engine. */
typedef struct part {
    const rk_job_spread_in *in;
    int w, device;                  /* device -1: the CPU */
    int32_t *rows, n_rows;          /* item rows (ascending) */
    int64_t work;
    rk_lists own;                   /* a worker's own lists (workers after the first) */
    rk_lists *lists;
    int64_t nq, *qat;               /* its queries, and their index in the job's */
    int32_t *qu, *qi, *used;
    double *pred;
    const int32_t *users;           /* top-N: its users, consecutive in the request */
    int64_t n_users, base, topn_work; /* base: position of users[0] in the rank's range */
    rk_recbuf recs;
    rk_status s;
    rk_error err;
    rk_knn_stats st;
    rk_topn_stats ts;
    double engine_s, topn_s;
    int fell_back;
} part;

static void part_free(part *p)
{
    free(p->rows);
    rk_lists_free(&p->own);
    free(p->qat);
    free(p->qu);
    free(p->qi);
    free(p->used);
    free(p->pred);
    rk_recbuf_free(&p->recs);
}

/* ---- the lists and predictions of a part ------------------------------- */

static void *engine_part(void *arg)
{
    part *p = arg;
    const rk_job_spread_in *in = p->in;
    const double t0 = rk_omp_wtime();
    rk_knn_opts eko = *in->eko;
    eko.rows = p->rows;
    eko.n_rows = p->n_rows;
    if (p->w > 0 || rk_dist_rank(in->dist) > 0) eko.progress = NULL; /* rank 0's first part reports */
    rk_queries q = {p->nq, p->qu, p->qi, p->pred, p->used};
    rk_queries *qp = p->nq > 0 ? &q : NULL;
    const rk_backend *be = rk_backend_get(p->device >= 0 ? RK_BACKEND_CUDA : RK_BACKEND_CPU);
    rk_gpu_opts g = *in->gpu;
    g.device = p->device;
    p->s = be->knn(in->em, &eko, &g, p->lists, qp, NULL, NULL, &p->st, &p->err);
    if (be->gpu && rk_backend_can_fall_back(in->seam, p->s)) { /* the part is redone on the CPU */
        p->fell_back = 1;
        rk_error why = p->err;
        p->s = rk_backend_get(RK_BACKEND_CPU)->knn(in->em, &eko, &g, p->lists, qp, NULL, NULL, &p->st, &p->err);
        if (p->s == RK_OK) p->err = why; /* kept for the note */
    }
    p->engine_s = rk_omp_wtime() - t0;
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
    for (int w = 1; w < n_parts; w++) started[w] = pthread_create(&th[w], NULL, fn, &parts[w]) == 0;
    fn(&parts[0]);
    for (int w = 1; w < n_parts; w++) {
        if (started[w]) pthread_join(th[w], NULL);
        else fn(&parts[w]); /* no thread: in turn */
    }
}

/* The first failing part's status and message; notes for the fallbacks. */
static rk_status parts_status(const rk_job_spread_in *in, part *parts, int n_parts, rk_error *err)
{
    for (int w = 0; w < n_parts; w++)
        if (parts[w].s != RK_OK) {
            *err = parts[w].err;
            return parts[w].s;
        }
    for (int w = 0; w < n_parts; w++)
        if (parts[w].fell_back)
            rk_note(in->o->note, in->o->ud, "rank %d: the GPU engine failed on device %d (%.400s): its part ran on "
                    "the CPU", rk_dist_rank(in->dist), parts[w].device, parts[w].err.msg);
    return RK_OK;
}

/* ---- the exchange of lists and predictions ----------------------------- */

/* This rank's lists, row after row of its items in index order: the
 * length, then the neighbours, similarities and supports. */
static rk_status pack_lists(const rk_lists *l, const int32_t *owner, int me, unsigned char **buf, size_t *bytes,
                            rk_error *err)
{
    size_t n = 0;
    for (int32_t i = 0; i < l->n_items; i++)
        if (owner[i] == me) n += sizeof(int32_t) + (size_t)l->len[i] * (2 * sizeof(int32_t) + sizeof(float));
    unsigned char *b = malloc(n > 0 ? n : 1), *at = b;
    RK_CHECK_ALLOC(b, err);
    for (int32_t i = 0; i < l->n_items; i++) {
        if (owner[i] != me) continue;
        const size_t c = (size_t)l->len[i], o = (size_t)i * (size_t)l->k;
        memcpy(at, &l->len[i], sizeof(int32_t));
        at += sizeof(int32_t);
        memcpy(at, l->nbr + o, c * sizeof(int32_t));
        at += c * sizeof(int32_t);
        memcpy(at, l->sim + o, c * sizeof(float));
        at += c * sizeof(float);
        memcpy(at, l->support + o, c * sizeof(int32_t));
        at += c * sizeof(int32_t);
    }
    *buf = b;
    *bytes = n;
    return RK_OK;
}

static rk_status unpack_lists(rk_lists *l, const int32_t *owner, int r, const unsigned char *at,
                              const unsigned char *end, rk_error *err)
{
    for (int32_t i = 0; i < l->n_items; i++) {
        if (owner[i] != r) continue;
        int32_t c;
        if ((size_t)(end - at) < sizeof c) goto short_;
        memcpy(&c, at, sizeof c);
        at += sizeof c;
        if (c < 0 || c > l->k || (size_t)(end - at) < (size_t)c * (2 * sizeof(int32_t) + sizeof(float))) goto short_;
        const size_t o = (size_t)i * (size_t)l->k;
        l->len[i] = c;
        memcpy(l->nbr + o, at, (size_t)c * sizeof(int32_t));
        at += (size_t)c * sizeof(int32_t);
        memcpy(l->sim + o, at, (size_t)c * sizeof(float));
        at += (size_t)c * sizeof(float);
        memcpy(l->support + o, at, (size_t)c * sizeof(int32_t));
        at += (size_t)c * sizeof(int32_t);
    }
    return RK_OK;
short_:
    return rk_error_set(err, RK_E_INTERNAL, "the lists received from rank %d are cut short", r);
}

/* Every rank's lists to every rank (to rank 0 alone when no one else reads them). */
static rk_status exchange_lists(const rk_job_spread_in *in, const int32_t *owner, int everyone, rk_error *err)
{
    const int R = rk_dist_size(in->dist), me = rk_dist_rank(in->dist);
    unsigned char *mine = NULL, *all = NULL;
    size_t bytes = 0;
    size_t *offs = malloc((size_t)(R + 1) * sizeof *offs);
    rk_status s = offs != NULL ? pack_lists(in->lists, owner, me, &mine, &bytes, err)
                               : rk_error_set(err, RK_E_NOMEM, "out of memory for %d offsets", R);
    s = rk_dist_agree(in->dist, s, err);
    if (s == RK_OK)
        s = everyone ? rk_dist_allgatherv(in->dist, mine, bytes, &all, offs, err)
                     : rk_dist_gatherv(in->dist, mine, bytes, 0, &all, offs, err);
    free(mine);
    if (s == RK_OK && all != NULL)
        for (int r = 0; r < R && s == RK_OK; r++)
            if (r != me) s = unpack_lists(in->lists, owner, r, all + offs[r], all + offs[r + 1], err);
    free(all);
    free(offs);
    return s;
}

/* Predictions of every rank to rank 0, in the order of the queries. */
static rk_status exchange_predictions(const rk_job_spread_in *in, const int32_t *owner, rk_error *err)
{
    const rk_queries *q = in->q;
    const int R = rk_dist_size(in->dist), me = rk_dist_rank(in->dist);
    typedef struct { double pred; int32_t used, pad; } answer;
    int64_t n = 0;
    for (int64_t t = 0; t < q->n; t++) n += owner[q->item[t]] == me;
    answer *mine = calloc((size_t)(n > 0 ? n : 1), sizeof *mine);
    size_t *offs = malloc((size_t)(R + 1) * sizeof *offs);
    unsigned char *all = NULL;
    rk_status s = mine != NULL && offs != NULL ? RK_OK : rk_error_set(err, RK_E_NOMEM, "out of memory for answers");
    if (s == RK_OK) {
        n = 0;
        for (int64_t t = 0; t < q->n; t++)
            if (owner[q->item[t]] == me) {
                mine[n].pred = q->pred[t];
                mine[n++].used = q->used[t];
            }
    }
    s = rk_dist_agree(in->dist, s, err);
    if (s == RK_OK) s = rk_dist_gatherv(in->dist, mine, (size_t)n * sizeof *mine, 0, &all, offs, err);
    if (s == RK_OK && me == 0) {
        for (int r = 1; r < R; r++) {
            const answer *a = (const answer *)(all + offs[r]);
            for (int64_t t = 0; t < q->n; t++)
                if (owner[q->item[t]] == r) {
                    q->pred[t] = a->pred;
                    q->used[t] = a->used;
                    a++;
                }
        }
    }
    free(all);
    free(mine);
    free(offs);
    return s;
}

/* ---- top-N ---------------------------------------------------------------- */

/* A part's batches, positioned within its rank's range. */
typedef struct shifted {
    rk_recbuf *buf;
    int64_t base;
} shifted;

static rk_status shifted_sink(void *ud, const rk_topn_batch *b, rk_error *err)
{
    shifted *s = ud;
    rk_topn_batch c = *b;
    c.first += s->base;
    return rk_recbuf_sink(s->buf, &c, err);
}

static void *topn_part(void *arg)
{
    part *p = arg;
    const rk_job_spread_in *in = p->in;
    const double t0 = rk_omp_wtime();
    p->s = RK_OK;
    if (p->n_users == 0) return NULL;
    shifted sh = {&p->recs, p->base};
    rk_topn_opts to = *in->to;
    to.users = p->users;
    to.n_users = p->n_users;
    to.sink = shifted_sink;
    to.sink_ud = &sh;
    if (p->w > 0 || rk_dist_rank(in->dist) > 0) to.progress = NULL;
    const rk_backend *cpu = rk_backend_get(RK_BACKEND_CPU);
    rk_gpu_opts g = *in->gpu;
    g.device = p->device;
    if (in->by_user) { /* user-mode top-N: the CPU's */
        p->s = cpu->user_topn(in->m, in->lists, &to, &g, &p->ts, &p->err);
    } else {
        const rk_backend *be = p->device >= 0 ? rk_backend_get(RK_BACKEND_CUDA) : cpu;
        p->s = be->topn(in->m, in->lists, &to, &g, &p->ts, &p->err);
        if (be->gpu && rk_backend_can_fall_back(in->seam, p->s)) {
            p->fell_back = 1;
            rk_recbuf_free(&p->recs); /* what the GPU sent is dropped */
            rk_recbuf_init(&p->recs);
            p->s = cpu->topn(in->m, in->lists, &to, &g, &p->ts, &p->err);
        }
    }
    p->topn_s = rk_omp_wtime() - t0;
    return NULL;
}

/* The users served, in request order (rk_topn_request: every user with a
 * training rating, ascending, when the request names none; *all is what it
 * allocated), and the work of each. */
static rk_status served_users(const rk_job_spread_in *in, int32_t **all, const int32_t **users, int64_t *n_users,
                              int64_t **cost, rk_error *err)
{
    const rk_model *m = in->m;
    const rk_lists *l = in->lists;
    const int32_t nu = m->by_user.n_rows;
    RK_FORWARD(rk_topn_request(m, in->to, all, users, n_users, err));
    const int64_t n = *n_users;
    *cost = malloc((size_t)(n > 0 ? n : 1) * sizeof **cost);
    RK_CHECK_ALLOC(*cost, err);
    for (int64_t t = 0; t < n; t++) {
        const int32_t u = (*users)[t];
        int64_t c = 1;
        if (in->by_user) { /* the neighbours' ratings */
            for (int32_t e = 0; u < l->n_items && e < l->len[u]; e++) {
                const int32_t v = l->nbr[(size_t)u * (size_t)l->k + (size_t)e];
                c += m->by_user.ptr[v + 1] - m->by_user.ptr[v];
            }
        } else { /* the lists of the user's items */
            for (int64_t x = m->by_user.ptr[u]; u < nu && x < m->by_user.ptr[u + 1]; x++) c += l->len[m->by_user.idx[x]];
        }
        (*cost)[t] = c;
    }
    return RK_OK;
}

/* Rank 0: its batches, then every other rank's as they arrive, into the
 * sink.  A failing sink stops the replays but not the receiving, so that
 * no rank is left waiting on its send. */
static rk_status join_recommendations(const rk_job_spread_in *in, part *parts, int n_parts, const int32_t *rb,
                                      const rk_recbuf *mine, rk_error *err)
{
    const int R = rk_dist_size(in->dist), me = rk_dist_rank(in->dist);
    rk_status s = RK_OK;
    if (me != 0) return rk_dist_send(in->dist, 0, mine->data, mine->bytes, err);
    for (int w = 0; w < n_parts && s == RK_OK; w++)
        s = rk_recbuf_replay(parts[w].recs.data, parts[w].recs.bytes, rb[0], in->to->sink, in->to->sink_ud, err);
    for (int r = 1; r < R; r++) {
        unsigned char *buf = NULL;
        size_t bytes = 0;
        rk_error e2;
        rk_status rs = rk_dist_recv_alloc(in->dist, r, &buf, &bytes, s == RK_OK ? err : &e2);
        if (rs != RK_OK) {
            free(buf);
            if (s == RK_OK) s = rs;
            if (rs == RK_E_DIST) break; /* the link is gone: nothing more will come */
            continue;
        }
        if (s == RK_OK) s = rk_recbuf_replay(buf, bytes, rb[r], in->to->sink, in->to->sink_ud, err);
        free(buf);
    }
    return s;
}

/* The top-N stage: ranges of users per rank and per part, then the join. */
static rk_status spread_topn(const rk_job_spread_in *in, part *parts, int n_parts, rk_error *err)
{
    const int R = rk_dist_size(in->dist), me = rk_dist_rank(in->dist);
    int32_t *all = NULL, *rb = malloc((size_t)(R + 1) * sizeof *rb), pb[RK_GPUS_MAX + 1];
    const int32_t *users = NULL;
    int64_t n_users = 0, *cost = NULL;
    rk_status s = rb != NULL ? served_users(in, &all, &users, &n_users, &cost, err)
                             : rk_error_set(err, RK_E_NOMEM, "out of memory for %d ranges", R);
    if (s == RK_OK && n_users > INT32_MAX) s = rk_error_set(err, RK_E_RANGE, "%lld users to share out", (long long)n_users);
    if (s == RK_OK) s = rk_part_ranges(cost, (int32_t)n_users, R, rb, NULL, err);
    if (s == RK_OK) s = rk_part_ranges(cost + rb[me], rb[me + 1] - rb[me], n_parts, pb, NULL, err);
    if (s == RK_OK) {
        for (int w = 0; w < n_parts; w++) {
            part *p = &parts[w];
            p->users = users + rb[me] + pb[w];
            p->n_users = pb[w + 1] - pb[w];
            p->base = pb[w];
            for (int64_t t = rb[me] + pb[w]; t < rb[me] + pb[w + 1]; t++) p->topn_work += cost[t];
        }
        run_parts(parts, n_parts, topn_part);
        s = parts_status(in, parts, n_parts, err);
    }
    /* a rank other than 0 sends its parts' batches as one message, made
     * before the agreement so that a failure to make it is agreed on */
    rk_recbuf mine;
    rk_recbuf_init(&mine);
    for (int w = 0; me != 0 && s == RK_OK && w < n_parts; w++)
        s = rk_recbuf_append(&mine, &parts[w].recs, err);
    if (s == RK_OK) s = rk_dist_fault(in->dist, "topn", err);
    s = rk_dist_agree(in->dist, s, err);
    if (s == RK_OK) s = join_recommendations(in, parts, n_parts, rb, &mine, err);
    rk_recbuf_free(&mine);
    s = rk_dist_agree(in->dist, s, err);
    if (s == RK_OK && in->ts != NULL) {
        memset(in->ts, 0, sizeof *in->ts);
        in->ts->users = n_users; /* rows and updates: summed from every rank's parts below */
        snprintf(in->ts->path, sizeof in->ts->path, "%s", parts[0].ts.path);
    }
    free(all);
    free(cost);
    free(rb);
    return s;
}

/* ---- the stage ------------------------------------------------------------ */

/* Every part's figures to rank 0's report. */
static rk_status gather_parts(const rk_job_spread_in *in, part *parts, int n_parts, rk_error *err)
{
    const int R = rk_dist_size(in->dist), me = rk_dist_rank(in->dist);
    rk_job_part mine[RK_GPUS_MAX];
    memset(mine, 0, sizeof mine);
    for (int w = 0; w < n_parts; w++) {
        const part *p = &parts[w];
        mine[w] = (rk_job_part){me, w, p->fell_back ? -1 : p->device, p->n_rows, p->work, p->engine_s,
                                p->n_users, p->topn_work, p->ts.rows, p->topn_s, p->fell_back, 0};
    }
    unsigned char *all = NULL;
    size_t *offs = malloc((size_t)(R + 1) * sizeof *offs);
    rk_status s = offs != NULL ? RK_OK : rk_error_set(err, RK_E_NOMEM, "out of memory for %d offsets", R);
    s = rk_dist_agree(in->dist, s, err);
    if (s == RK_OK) s = rk_dist_gatherv(in->dist, mine, (size_t)n_parts * sizeof *mine, 0, &all, offs, err);
    if (s == RK_OK && me == 0) {
        rk_job_report *rep = in->rep;
        rep->n_parts = 0;
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

rk_status rk_job_spread(const rk_job_spread_in *in, rk_error *err)
{
    const int R = rk_dist_size(in->dist);
    const int n_parts = in->n_devices > 0 ? in->n_devices : 1;
    const int32_t n_items = in->lists->n_items;
    const rk_knn_opts *eko = in->eko;
    part parts[RK_GPUS_MAX];
    memset(parts, 0, sizeof parts);
    for (int w = 0; w < n_parts; w++) {
        parts[w].in = in;
        parts[w].w = w;
        parts[w].device = in->n_devices > 0 ? in->devices[w] : -1;
        rk_recbuf_init(&parts[w].recs);
    }
    /* the rows of every rank, by work */
    int32_t *order = malloc((size_t)(n_items > 0 ? n_items : 1) * sizeof *order);
    int32_t *owner = malloc((size_t)(n_items > 0 ? n_items : 1) * sizeof *owner);
    int32_t *rown = malloc((size_t)(n_items > 0 ? n_items : 1) * sizeof *rown);
    int64_t *cost = malloc((size_t)(n_items > 0 ? n_items : 1) * sizeof *cost);
    int64_t *rcost = malloc((size_t)(n_items > 0 ? n_items : 1) * sizeof *rcost);
    rk_status s = RK_OK;
    if (order == NULL || owner == NULL || rown == NULL || cost == NULL || rcost == NULL ||
        rk_knn_item_order(in->em, order, cost) < 0)
        s = rk_error_set(err, RK_E_NOMEM, "out of memory for the work of %d rows", n_items);
    int32_t n_rows = 0;
    if (s == RK_OK) {
        n_rows = eko->rows != NULL ? eko->n_rows : n_items;
        for (int32_t t = 0; t < n_rows; t++) rcost[t] = cost[eko->rows != NULL ? eko->rows[t] : t];
        s = rk_part_lpt(rcost, n_rows, R, rown, NULL, err);
    }
    if (s == RK_OK) {
        for (int32_t i = 0; i < n_items; i++) owner[i] = -1;
        for (int32_t t = 0; t < n_rows; t++) owner[eko->rows != NULL ? eko->rows[t] : t] = rown[t];
        s = plan_parts(in, owner, cost, parts, n_parts, err);
    }
    const double t_engine = rk_omp_wtime();
    if (s == RK_OK) {
        run_parts(parts, n_parts, engine_part);
        s = parts_status(in, parts, n_parts, err);
    }
    /* the parts' results into the job's lists and queries */
    for (int w = 0; w < n_parts && s == RK_OK; w++) {
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
    for (int w = 1; w < n_parts; w++) rk_lists_free(&parts[w].own);
    /* the stats of rank 0's first part stand for the stage (summed work) */
    if (s == RK_OK) {
        *in->st = parts[0].st;
        in->st->wall_s = rk_omp_wtime() - t_engine;
        for (int w = 1; w < n_parts; w++) {
            in->st->pair_updates += parts[w].st.pair_updates;
            if (parts[w].st.sim_s > in->st->sim_s) in->st->sim_s = parts[w].st.sim_s;
        }
    }
    if (s == RK_OK) s = rk_dist_fault(in->dist, "lists", err);
    const double t_x = rk_omp_wtime();
    /* every rank's lists where they are read; the predictions to rank 0 */
    /* a failing rank goes straight to the last agreement, where it meets
     * the others' next one (rk_dist.h) */
    if (R > 1 && s == RK_OK) s = exchange_lists(in, owner, in->to != NULL, err);
    if (R > 1 && s == RK_OK && in->q != NULL && in->q->n > 0) s = exchange_predictions(in, owner, err);
    double t_exchange = rk_omp_wtime() - t_x;
    const double t_topn = rk_omp_wtime();
    if (in->to != NULL && s == RK_OK) s = spread_topn(in, parts, n_parts, err);
    if (s == RK_OK) s = gather_parts(in, parts, n_parts, err);
    if (s == RK_OK && rk_dist_rank(in->dist) == 0) {
        int64_t pairs = 0;
        for (int x = 0; x < in->rep->n_parts; x++) pairs += in->rep->part[x].work;
        in->st->pair_updates = pairs;
        in->rep->t_exchange += t_exchange;
        if (in->ts != NULL && in->to != NULL) {
            in->ts->wall_s = rk_omp_wtime() - t_topn;
            for (int x = 0; x < in->rep->n_parts; x++) {
                const rk_job_part *jp = &in->rep->part[x];
                in->ts->rows += jp->topn_rows;
                in->ts->updates += jp->topn_work;
                if (jp->topn_s > in->ts->compute_s) in->ts->compute_s = jp->topn_s;
            }
        }
    }
    s = rk_dist_agree(in->dist, s, err);
    for (int w = 0; w < n_parts; w++) part_free(&parts[w]);
    free(order);
    free(owner);
    free(rown);
    free(cost);
    free(rcost);
    return s;
}
