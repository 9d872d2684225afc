/* Random ball cover on the CPU (rk_rbc.h).
 *
 * Sparse dot products.  The rep pass walks an inverted index of the
 * representatives (user -> the representatives they rated): item i's raters
 * and, for each, the representatives that rater rated, so a pass costs
 * Σ_{u in U_i} (1 + |reps of u|) reads instead of R scans of a representative's
 * vector; the representatives sharing no rater with i are decided (nearness 0)
 * without a read.  The ball pass scatters the query's vector into a dense
 * per-thread array indexed by user (a stamp tells its raters) and walks each
 * candidate's raters: |U_j| reads per candidate, against |U_i| + |U_j| for a
 * merge of the two sorted lists, and one query meets hundreds or thousands
 * of candidates, so the scatter is paid once.  Both walks add a pair's
 * products in ascending user order, as the exact engine does, so that sums of
 * off-grid values round alike (grid sums are exact integers either way).
 *
 * Choices, measured with bench/rbc_sweep on recknn-synth --users 20000
 * --items 100000 --ratings 2000000 --communities 300 --seed 1, cosine-full,
 * implicit, recall@20 on 2,000 sampled queries:
 *  - Balls alone (no tail; P 8..40): recall 0.74-0.80 at 10k items, whatever
 *    R and P: 71% of the exact lists' entries share one rater with the query,
 *    mostly items with one or two raters.  Keeping items with at most 2
 *    raters out of the balls (found through their raters): 0.961 at R 633,
 *    P 8, and 0.989 at R 1897 (6 sqrt n), 78x fewer pair evaluations than
 *    brute force; tail 1: 0.929, tail 3: 0.998 (R 1897).
 *  - R: recall at P 8 peaks where a ball holds 20-30 items, at every scale
 *    measured (10,000 items: 0.987 at 32 items a ball, 0.972 at 12, 0.980 at
 *    48; 100,000: 0.989 at 18-24, 0.961 at 72; 1,000,000 (--users 200000
 *    --ratings 20000000 --communities 3000): 0.991 at 23, 0.962 at 76, 0.985
 *    at 11), hence one representative per 24 items above the tail.
 *  - Draw by rater count against uniform: 0.984 and 0.975 at R 1000 (and 12
 *    orphans against 0): popular representatives share raters with more items.
 *  - Standard RBC (disjoint balls, P probes) against Cayton's one-shot
 *    variant (each representative owns its s nearest items, a query scans
 *    its nearest representative's): at R 1897, one-shot s 200 gave 0.990 at
 *    79x, s 400 0.992 at 74x; standard P 8 0.989 at 78x.  The same recall
 *    for the work; the standard variant keeps disjoint balls (no item left in
 *    none, no per-representative selection over the catalogue) and tunes by
 *    P alone, so it is the one here. */
#include "rk_rbc.h"
#include "rk_rbc_internal.h"
#include "rk_select.h"
#include "rk_omp.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rk_rbc_opts_default(rk_rbc_opts *r)
{
    memset(r, 0, sizeof *r);
    r->tail = -1;
    r->draw = RK_RBC_DRAW_RATERS;
}

int32_t rk_rbc_default_reps(int64_t n_placed)
{
    if (n_placed <= 0) return 0;
    const int64_t r = (n_placed + RK_RBC_BALL_ITEMS - 1) / RK_RBC_BALL_ITEMS;
    return r > INT32_MAX ? INT32_MAX : (int32_t)r;
}

rk_status rk_rbc_check(const rk_model *m, const rk_knn_opts *o, const rk_rbc_opts *r, const rk_lists *lists,
                       rk_error *err)
{
    if (!rk_metric_is_full(o->sim.metric))
        return rk_error_set(err, RK_E_ARG, "the random ball cover needs a full-vector metric (cosine-full, "
                            "euclidean-full, jaccard), not %s", rk_metric_name(o->sim.metric));
    if (r->reps < 0 || r->probes < 0 || r->tail < -1)
        return rk_error_set(err, RK_E_ARG, "representatives, probes and tail must not be negative (%d, %d, %d)",
                            r->reps, r->probes, r->tail);
    if (r->draw != RK_RBC_DRAW_RATERS && r->draw != RK_RBC_DRAW_UNIFORM)
        return rk_error_set(err, RK_E_ARG, "unknown draw of the representatives (%d)", (int)r->draw);
    return rk_knn_check_args(m, o, lists, NULL, err);
}

void rk_rbc_resolve(const rk_model *m, const rk_rbc_opts *r, int32_t *R, int32_t *P, int32_t *T,
                    int64_t *n_placed)
{
    const rk_csr *I = &m->by_item;
    const int32_t tail = r->tail >= 0 ? r->tail : RK_RBC_DEFAULT_TAIL;
    int64_t placed = 0;
    for (int32_t i = 0; i < I->n_rows; i++) placed += I->ptr[i + 1] - I->ptr[i] > tail;
    int64_t reps = r->reps > 0 ? r->reps : rk_rbc_default_reps(placed);
    if (reps > placed) reps = placed;
    int64_t probes = r->probes > 0 ? r->probes : RK_RBC_DEFAULT_PROBES;
    if (probes > reps) probes = reps;
    *R = (int32_t)reps;
    *P = (int32_t)probes;
    *T = tail;
    if (n_placed != NULL) *n_placed = placed;
}

typedef struct keyed {
    double key;
    int32_t item;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->item > y->item) - (x->item < y->item);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

rk_status rk_rbc_draw_reps(const rk_model *m, int32_t R, int32_t T, uint64_t seed, rk_rbc_draw draw,
                           int32_t *reps, rk_error *err)
{
    const rk_csr *I = &m->by_item;
    if (R <= 0) return RK_OK;
    keyed *k = malloc((size_t)(I->n_rows > 0 ? I->n_rows : 1) * sizeof *k);
    RK_CHECK_ALLOC(k, err);
    int32_t n = 0;
    for (int32_t i = 0; i < I->n_rows; i++) {
        const int64_t deg = I->ptr[i + 1] - I->ptr[i];
        if (deg <= T) continue;
        const double u = rk_rbc_hash_unit(seed, RK_RBC_SALT_REPS, (uint64_t)i);
        k[n].key = -log(u) / (draw == RK_RBC_DRAW_RATERS ? (double)deg : 1.0);
        k[n++].item = i;
    }
    if (R > n) {
        free(k);
        return rk_error_set(err, RK_E_ARG, "%d representatives from %d items with more than %d raters", R, n, T);
    }
    qsort(k, (size_t)n, sizeof *k, cmp_keyed);
    for (int32_t r = 0; r < R; r++) reps[r] = k[r].item;
    free(k);
    qsort(reps, (size_t)R, sizeof *reps, cmp_i32);
    return RK_OK;
}

void rk_rbc_values(const rk_model *m, double scale, double *vals)
{
    const rk_csr *I = &m->by_item;
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < I->nnz; p++)
        vals[p] = scale > 0.0 ? nearbyint((double)I->val[p] * scale) : (double)I->val[p];
}

rk_sim_params rk_rbc_near_params(const rk_knn_opts *o, double scale)
{
    rk_sim_params p = o->sim;
    p.min_support = 1;
    p.shrinkage = 0.0;
    p.unit = scale > 0.0 ? 1.0 / scale : 1.0;
    return p;
}

rk_sim_params rk_rbc_sim_params(const rk_knn_opts *o, double scale)
{
    rk_sim_params p = o->sim;
    p.unit = scale > 0.0 ? 1.0 / scale : 1.0;
    return p;
}

/* ---- shared set-up ---------------------------------------------------------- */

void rk_rbc_ctx_free(rk_rbc_ctx *c)
{
    free(c->vals); free(c->uvals); free(c->ncnt); free(c->nsq); free(c->reps);
    free(c->rptr); free(c->rrep); free(c->rval);
    free(c->probe); free(c->nprobe); free(c->owner);
    rk_rbc_balls_free(&c->b);
    memset(c, 0, sizeof *c);
}

rk_status rk_rbc_ctx_init(rk_rbc_ctx *c, const rk_model *m, const rk_knn_opts *o, const rk_rbc_opts *r,
                          rk_error *err)
{
    const rk_csr *I = &m->by_item, *U = &m->by_user;
    memset(c, 0, sizeof *c);
    c->m = m;
    rk_rbc_resolve(m, r, &c->R, &c->P, &c->T, &c->n_placed);
    c->all_balls = c->P >= c->R;
    c->scale = rk_knn_grid_scale(m, NULL);
    c->near = rk_rbc_near_params(o, c->scale);
    c->sp = rk_rbc_sim_params(o, c->scale);
    const size_t n = (size_t)(I->n_rows > 0 ? I->n_rows : 1);
    c->vals = malloc((size_t)(I->nnz > 0 ? I->nnz : 1) * sizeof *c->vals);
    c->uvals = malloc((size_t)(U->nnz > 0 ? U->nnz : 1) * sizeof *c->uvals);
    c->ncnt = malloc(n * sizeof *c->ncnt);
    c->nsq = malloc(n * sizeof *c->nsq);
    c->reps = malloc((size_t)(c->R > 0 ? c->R : 1) * sizeof *c->reps);
    if (c->vals == NULL || c->uvals == NULL || c->ncnt == NULL || c->nsq == NULL || c->reps == NULL) {
        rk_rbc_ctx_free(c);
        return rk_error_set(err, RK_E_NOMEM, "out of memory for the values of %d items", I->n_rows);
    }
    rk_rbc_values(m, c->scale, c->vals);
    const double s = c->scale;
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < U->nnz; p++) c->uvals[p] = s > 0.0 ? nearbyint((double)U->val[p] * s) : (double)U->val[p];
    rk_knn_item_norms(m, NULL, c->scale, c->ncnt, c->nsq);
    rk_status st = rk_rbc_draw_reps(m, c->R, c->T, r->seed, r->draw, c->reps, err);
    if (st != RK_OK) rk_rbc_ctx_free(c);
    return st;
}

rk_status rk_rbc_index(const rk_model *m, const double *vals, const int32_t *items, int64_t n, int as_items,
                       int64_t **ptr_out, int32_t **ent_out, double **val_out, rk_error *err)
{
    const rk_csr *I = &m->by_item;
    const int32_t n_users = m->by_user.n_rows;
    int64_t *ptr = calloc((size_t)n_users + 1, sizeof *ptr);
    RK_CHECK_ALLOC(ptr, err);
    for (int64_t t = 0; t < n; t++)
        for (int64_t q = I->ptr[items[t]]; q < I->ptr[items[t] + 1]; q++) ptr[I->idx[q] + 1]++;
    for (int32_t u = 0; u < n_users; u++) ptr[u + 1] += ptr[u];
    const size_t ne = (size_t)(ptr[n_users] > 0 ? ptr[n_users] : 1);
    int32_t *ent = malloc(ne * sizeof *ent);
    double *val = malloc(ne * sizeof *val);
    int64_t *fill = malloc(((size_t)n_users + 1) * sizeof *fill);
    if (ent == NULL || val == NULL || fill == NULL) {
        free(ptr); free(ent); free(val); free(fill);
        return rk_error_set(err, RK_E_NOMEM, "out of memory for an index of %lld items", (long long)n);
    }
    memcpy(fill, ptr, ((size_t)n_users + 1) * sizeof *fill);
    for (int64_t t = 0; t < n; t++)
        for (int64_t q = I->ptr[items[t]]; q < I->ptr[items[t] + 1]; q++) {
            const int64_t e = fill[I->idx[q]]++;
            ent[e] = as_items ? items[t] : (int32_t)t;
            val[e] = vals[q];
        }
    free(fill);
    *ptr_out = ptr;
    *ent_out = ent;
    *val_out = val;
    return RK_OK;
}

void rk_rbc_balls_free(rk_rbc_balls *b)
{
    if (b == NULL) return;
    free(b->ball_ptr); free(b->ball_items); free(b->optr); free(b->oitem); free(b->oval);
    memset(b, 0, sizeof *b);
}

rk_status rk_rbc_balls_build(const rk_model *m, const double *vals, const int32_t *owner, int32_t R,
                             rk_rbc_balls *b, rk_error *err)
{
    const int32_t n_items = m->by_item.n_rows;
    memset(b, 0, sizeof *b);
    b->R = R;
    b->ball_ptr = calloc((size_t)R + 1, sizeof *b->ball_ptr);
    RK_CHECK_ALLOC(b->ball_ptr, err);
    for (int32_t i = 0; i < n_items; i++) {
        if (owner[i] >= 0) b->ball_ptr[owner[i] + 1]++;
        b->n_orphans += owner[i] == RK_RBC_ORPHAN;
        b->n_tail += owner[i] == RK_RBC_TAIL;
    }
    for (int32_t r = 0; r < R; r++) b->ball_ptr[r + 1] += b->ball_ptr[r];
    const int64_t n_out = b->n_orphans + b->n_tail;
    b->ball_items = malloc((size_t)(b->ball_ptr[R] > 0 ? b->ball_ptr[R] : 1) * sizeof *b->ball_items);
    int32_t *out = malloc((size_t)(n_out > 0 ? n_out : 1) * sizeof *out);
    int64_t *fill = malloc(((size_t)R + 1) * sizeof *fill);
    rk_status s = RK_OK;
    if (b->ball_items == NULL || out == NULL || fill == NULL) {
        s = rk_error_set(err, RK_E_NOMEM, "out of memory for the balls of %d items", n_items);
    } else {
        memcpy(fill, b->ball_ptr, ((size_t)R + 1) * sizeof *fill);
        int64_t o = 0;
        for (int32_t i = 0; i < n_items; i++) { /* ascending items in every ball and in out */
            if (owner[i] >= 0) b->ball_items[fill[owner[i]]++] = i;
            else if (owner[i] != RK_RBC_EMPTY) out[o++] = i;
        }
        for (int32_t r = 0; r < R; r++)
            if (b->ball_ptr[r + 1] - b->ball_ptr[r] > b->largest_ball) b->largest_ball = b->ball_ptr[r + 1] - b->ball_ptr[r];
        s = rk_rbc_index(m, vals, out, n_out, 1, &b->optr, &b->oitem, &b->oval, err);
    }
    free(out);
    free(fill);
    if (s != RK_OK) rk_rbc_balls_free(b);
    return s;
}

/* ---- the rep pass ------------------------------------------------------------ */

typedef struct rep_ws {
    int32_t *cnt;   /* R: co-raters with each representative */
    double *dot;    /* R */
    int32_t *touched;
    double *hs;     /* P: the heap of the nearest */
    int32_t *hi;
} rep_ws;

static void rep_ws_free(rep_ws *w)
{
    free(w->cnt); free(w->dot); free(w->touched); free(w->hs); free(w->hi);
}

static int rep_ws_init(rep_ws *w, int32_t R, int32_t P)
{
    const size_t r = (size_t)(R > 0 ? R : 1), p = (size_t)(P > 0 ? P : 1);
    w->cnt = calloc(r, sizeof *w->cnt);
    w->dot = calloc(r, sizeof *w->dot);
    w->touched = malloc(r * sizeof *w->touched);
    w->hs = malloc(p * sizeof *w->hs);
    w->hi = malloc(p * sizeof *w->hi);
    if (w->cnt == NULL || w->dot == NULL || w->touched == NULL || w->hs == NULL || w->hi == NULL) {
        rep_ws_free(w);
        return -1;
    }
    return 0;
}

/* Item i's nearest representatives (nearness > 0, best first, at most
 * keep of them) into probe[0..) and their number; @return entries read. */
static int64_t rep_pass_item(const rk_rbc_ctx *c, rep_ws *w, int32_t i, int32_t keep, int32_t *probe,
                             int32_t *nprobe)
{
    const rk_csr *I = &c->m->by_item;
    int32_t nt = 0;
    int64_t reads = 0;
    for (int64_t p = I->ptr[i]; p < I->ptr[i + 1]; p++) {
        const int32_t u = I->idx[p];
        const double x = c->vals[p];
        const int64_t e1 = c->rptr[u + 1];
        reads += 1 + (e1 - c->rptr[u]);
        for (int64_t e = c->rptr[u]; e < e1; e++) {
            const int32_t r = c->rrep[e];
            if (w->cnt[r]++ == 0) w->touched[nt++] = r;
            w->dot[r] += x * c->rval[e];
        }
    }
    rk_topk h;
    rk_topk_init(&h, keep, w->hs, w->hi);
    for (int32_t t = 0; t < nt; t++) {
        const int32_t r = w->touched[t], j = c->reps[r];
        const double s = rk_sim_value(&c->near, (double)w->cnt[r], c->ncnt[i], c->ncnt[j], c->nsq[i], c->nsq[j],
                                      w->dot[r]);
        if (s > 0.0) rk_topk_push(&h, s, r);
        w->cnt[r] = 0;
        w->dot[r] = 0.0;
    }
    rk_topk_sort(&h);
    for (int32_t t = 0; t < h.n; t++) probe[t] = h.idx[t];
    *nprobe = h.n;
    return reads;
}

/* owner[] of every item, and probe and nprobe of the items above the tail
 * (the P nearest; only the nearest when every ball is visited). */
static rk_status rep_pass(rk_rbc_ctx *c, const rk_knn_opts *o, int threads, rk_error *err)
{
    const rk_csr *I = &c->m->by_item;
    const int32_t n_items = I->n_rows;
    const int32_t keep = c->all_balls ? 1 : c->P;
    const size_t n = (size_t)(n_items > 0 ? n_items : 1);
    c->owner = malloc(n * sizeof *c->owner);
    c->nprobe = calloc(n, sizeof *c->nprobe);
    c->probe = malloc(n * (size_t)(keep > 0 ? keep : 1) * sizeof *c->probe);
    if (c->owner == NULL || c->nprobe == NULL || c->probe == NULL)
        return rk_error_set(err, RK_E_NOMEM, "out of memory for the %d nearest representatives of %d items",
                            keep, n_items);
    c->P_stored = keep;
    int failed = 0;
    int64_t reads = 0;
#pragma omp parallel num_threads(threads > 0 ? threads : rk_omp_max_threads()) reduction(+ : reads)
    {
        rep_ws w;
        const int ok = rep_ws_init(&w, c->R, keep) == 0;
#pragma omp atomic
        failed += !ok;
#pragma omp barrier
        if (!failed) {
#pragma omp for schedule(dynamic, 256)
            for (int32_t i = 0; i < n_items; i++) {
                const int64_t deg = I->ptr[i + 1] - I->ptr[i];
                if (deg == 0 || deg <= c->T) {
                    c->owner[i] = deg == 0 ? RK_RBC_EMPTY : RK_RBC_TAIL;
                    continue;
                }
                int32_t *pr = c->probe + (int64_t)i * keep;
                reads += rep_pass_item(c, &w, i, keep, pr, &c->nprobe[i]);
                c->owner[i] = c->nprobe[i] > 0 ? pr[0] : RK_RBC_ORPHAN;
            }
        }
        if (ok) rep_ws_free(&w);
    }
    if (failed) return rk_error_set(err, RK_E_NOMEM, "out of memory for the rep pass's rows");
    c->entry_reads += reads;
    RK_PROGRESS(o->progress, o->progress_ud, "approx: representatives", n_items, n_items, "items");
    return RK_OK;
}

/* ---- the ball pass ----------------------------------------------------------- */

/* The scattered query: a stamp (i + 1 where user u rated query i) and the
 * value side by side, so that testing a rater costs one cache line. */
typedef struct scatter {
    int64_t stamp;
    double x;
} scatter;

typedef struct ball_ws {
    scatter *q;       /* n_users */
    int32_t *cnt;     /* n_items: co-raters met through the raters */
    double *dot;      /* n_items */
    int32_t *touched; /* n_items */
    double *hs;       /* k */
    int32_t *hi;
} ball_ws;

static void ball_ws_free(ball_ws *w)
{
    free(w->q); free(w->cnt); free(w->dot); free(w->touched); free(w->hs); free(w->hi);
}

static int ball_ws_init(ball_ws *w, int32_t n_users, int32_t n_items, int32_t k)
{
    const size_t u = (size_t)(n_users > 0 ? n_users : 1), n = (size_t)(n_items > 0 ? n_items : 1);
    w->q = calloc(u, sizeof *w->q);
    w->cnt = calloc(n, sizeof *w->cnt);
    w->dot = calloc(n, sizeof *w->dot);
    w->touched = malloc(n * sizeof *w->touched);
    w->hs = malloc((size_t)k * sizeof *w->hs);
    w->hi = malloc((size_t)k * sizeof *w->hi);
    if (w->q == NULL || w->cnt == NULL || w->dot == NULL || w->touched == NULL ||
        w->hs == NULL || w->hi == NULL) {
        ball_ws_free(w);
        return -1;
    }
    return 0;
}

/* Co-raters n and Σxy of the scattered query i with item j, in ascending
 * user order: j's raters tested against the scatter (|U_j| reads), or, when
 * j's vector is much longer than i's, i's raters found in j's by binary
 * search (|U_i| log |U_j|: a popular candidate met by a short query); the
 * same co-raters in the same order either way. */
static inline int32_t pair_sums(const rk_rbc_ctx *c, const ball_ws *w, int32_t i, int32_t j, double *dot)
{
    const rk_csr *I = &c->m->by_item;
    const int64_t di = I->ptr[i + 1] - I->ptr[i], j0 = I->ptr[j], j1 = I->ptr[j + 1];
    int32_t n = 0;
    double d = 0.0;
    if (di * (64 - __builtin_clzll((unsigned long long)(j1 - j0) | 1) + 1) < j1 - j0) {
        int64_t lo = j0;
        for (int64_t p = I->ptr[i]; p < I->ptr[i + 1] && lo < j1; p++) {
            const int32_t u = I->idx[p];
            int64_t a = lo, b = j1;
            while (a < b) {
                const int64_t mid = a + (b - a) / 2;
                if (I->idx[mid] < u) a = mid + 1; else b = mid;
            }
            lo = a;
            if (a < j1 && I->idx[a] == u) {
                n++;
                d += c->vals[p] * c->vals[a];
                lo = a + 1;
            }
        }
    } else {
        const int64_t stamp = (int64_t)i + 1;
        for (int64_t p = j0; p < j1; p++) {
            const int32_t u = I->idx[p];
            if (w->q[u].stamp == stamp) {
                n++;
                d += w->q[u].x * c->vals[p];
            }
        }
    }
    *dot = d;
    return n;
}

static inline void push_pair(const rk_rbc_ctx *c, int32_t i, int32_t j, int32_t n, double dot, rk_topk *h)
{
    if (n == 0) return;
    const double s = rk_sim_value(&c->sp, (double)n, c->ncnt[i], c->ncnt[j], c->nsq[i], c->nsq[j], dot);
    if (s > 0.0) rk_topk_push(h, s, j);
}

/* Every item the query's raters rated (whole rows: all = 1) or only the
 * items in no ball (all = 0), its sums accumulated through the raters in
 * ascending user order, offered to h.  @return the items met but i. */
static int64_t through_raters(const rk_rbc_ctx *c, ball_ws *w, int32_t i, int all, rk_topk *h, int64_t *reads)
{
    const rk_csr *I = &c->m->by_item, *U = &c->m->by_user;
    int32_t nt = 0;
    for (int64_t p = I->ptr[i]; p < I->ptr[i + 1]; p++) {
        const int32_t u = I->idx[p];
        const double x = c->vals[p];
        const int64_t *ptr = all ? U->ptr : c->b.optr;
        const int32_t *item = all ? U->idx : c->b.oitem;
        const double *val = all ? c->uvals : c->b.oval;
        *reads += 1 + ptr[u + 1] - ptr[u];
        for (int64_t q = ptr[u]; q < ptr[u + 1]; q++) {
            const int32_t j = item[q];
            if (w->cnt[j]++ == 0) w->touched[nt++] = j;
            w->dot[j] += x * val[q];
        }
    }
    int64_t met = 0;
    for (int32_t t = 0; t < nt; t++) {
        const int32_t j = w->touched[t];
        if (j != i) {
            push_pair(c, i, j, w->cnt[j], w->dot[j], h);
            met++;
        }
        w->cnt[j] = 0;
        w->dot[j] = 0.0;
    }
    return met;
}

/* Item i's list; *pairs gets its pair evaluations.  @return entries read. */
static int64_t ball_pass_item(const rk_rbc_ctx *c, ball_ws *w, int32_t i, rk_lists *l, int64_t *bpairs,
                              int64_t *rpairs)
{
    const rk_csr *I = &c->m->by_item;
    int64_t reads = I->ptr[i + 1] - I->ptr[i];
    for (int64_t p = I->ptr[i]; p < I->ptr[i + 1]; p++) {
        w->q[I->idx[p]].stamp = i + 1;
        w->q[I->idx[p]].x = c->vals[p];
    }
    rk_topk h;
    rk_topk_init(&h, l->k, w->hs, w->hi);
    if (c->owner[i] < 0) { /* the tail, the orphans: the exact list through the raters */
        *rpairs += through_raters(c, w, i, 1, &h, &reads);
    } else {
        const int32_t nb = c->all_balls ? c->R : c->nprobe[i];
        for (int32_t t = 0; t < nb; t++) {
            const int32_t b = c->all_balls ? t : c->probe[(int64_t)i * c->P_stored + t];
            for (int64_t q = c->b.ball_ptr[b]; q < c->b.ball_ptr[b + 1]; q++) {
                const int32_t j = c->b.ball_items[q];
                double dot;
                if (j == i) continue;
                reads += I->ptr[j + 1] - I->ptr[j];
                *bpairs += 1;
                const int32_t n = pair_sums(c, w, i, j, &dot);
                push_pair(c, i, j, n, dot, &h);
            }
        }
        *rpairs += through_raters(c, w, i, 0, &h, &reads);
    }
    rk_topk_sort(&h);
    const int64_t base = (int64_t)i * l->k;
    l->len[i] = h.n;
    for (int32_t t = 0; t < h.n; t++) {
        double dot;
        l->nbr[base + t] = h.idx[t];
        l->sim[base + t] = (float)h.score[t];
        l->support[base + t] = pair_sums(c, w, i, h.idx[t], &dot);
    }
    return reads;
}

static rk_status ball_pass(rk_rbc_ctx *c, const rk_knn_opts *o, int threads, rk_lists *l, rk_error *err)
{
    const int32_t n_items = c->m->by_item.n_rows;
    int failed = 0;
    int64_t reads = 0, bpairs = 0, rpairs = 0;
#pragma omp parallel num_threads(threads > 0 ? threads : rk_omp_max_threads()) reduction(+ : reads, bpairs, rpairs)
    {
        ball_ws w;
        const int ok = ball_ws_init(&w, c->m->by_user.n_rows, n_items, l->k) == 0;
#pragma omp atomic
        failed += !ok;
#pragma omp barrier
        if (!failed) {
#pragma omp for schedule(dynamic, 64)
            for (int32_t i = 0; i < n_items; i++) {
                l->len[i] = 0;
                if (c->owner[i] != RK_RBC_EMPTY) reads += ball_pass_item(c, &w, i, l, &bpairs, &rpairs);
            }
        }
        if (ok) ball_ws_free(&w);
    }
    if (failed) return rk_error_set(err, RK_E_NOMEM, "out of memory for the ball pass's rows");
    c->entry_reads += reads;
    c->ball_pairs = bpairs;
    c->rater_pairs = rpairs;
    RK_PROGRESS(o->progress, o->progress_ud, "approx: balls", n_items, n_items, "items");
    return RK_OK;
}

void rk_rbc_fill_stats(const rk_rbc_ctx *c, rk_rbc_stats *st)
{
    const int64_t n = c->m->by_item.n_rows;
    st->reps = c->R;
    st->probes = c->P;
    st->tail = c->T;
    st->queries = c->n_placed + c->b.n_tail;
    st->tail_items = c->b.n_tail;
    st->orphans = c->b.n_orphans;
    st->largest_ball = c->b.largest_ball;
    st->rep_pairs = c->n_placed * (int64_t)c->R;
    st->ball_pairs = c->ball_pairs;
    st->rater_pairs = c->rater_pairs;
    st->pair_evals = st->rep_pairs + st->ball_pairs + st->rater_pairs;
    st->brute_pairs = n * (n > 0 ? n - 1 : 0);
    st->entry_reads = c->entry_reads;
}

static rk_status rbc_run(const rk_model *m, const rk_knn_opts *o, const rk_rbc_opts *r, rk_lists *lists,
                         rk_rbc_stats *st, rk_error *err);

rk_status rk_rbc_cpu(const rk_model *m, const rk_knn_opts *o, const rk_rbc_opts *r, rk_lists *lists,
                     rk_rbc_stats *st, rk_error *err)
{
    rk_model full; /* a deferred item-major matrix built for the call; else m itself */
    RK_FORWARD(rk_model_complete_copy(m, &full, err));
    rk_status s = rbc_run(&full, o, r, lists, st, err);
    rk_model_complete_free(&full, m);
    return s;
}

static rk_status rbc_run(const rk_model *m, const rk_knn_opts *o, const rk_rbc_opts *r, rk_lists *lists,
                         rk_rbc_stats *st, rk_error *err)
{
    rk_rbc_stats local;
    rk_rbc_ctx c;
    const double t0 = rk_omp_wtime();
    if (st == NULL) st = &local;
    memset(st, 0, sizeof *st);
    snprintf(st->device, sizeof st->device, "cpu");
    if (lists == NULL) return rk_error_set(err, RK_E_ARG, "the random ball cover needs lists to fill");
    RK_FORWARD(rk_rbc_check(m, o, r, lists, err));
    const int threads = r->threads > 0 ? r->threads : o->threads;
    RK_FORWARD(rk_rbc_ctx_init(&c, m, o, r, err));
    rk_status s = rk_rbc_index(m, c.vals, c.reps, c.R, 0, &c.rptr, &c.rrep, &c.rval, err);
    const double t1 = rk_omp_wtime();
    if (s == RK_OK) s = rep_pass(&c, o, threads, err);
    if (s == RK_OK) s = rk_rbc_balls_build(m, c.vals, c.owner, c.R, &c.b, err);
    const double t2 = rk_omp_wtime();
    if (s == RK_OK) s = ball_pass(&c, o, threads, lists, err);
    const double t3 = rk_omp_wtime();
    if (s == RK_OK) {
        rk_rbc_fill_stats(&c, st);
        st->reps_s = t1 - t0;
        st->assign_s = t2 - t1;
        st->query_s = t3 - t2;
        st->wall_s = t3 - t0;
    }
    rk_rbc_ctx_free(&c);
    return s;
}
