/* rk_tune.c — the search of --tune (rk_tune.h). */
#include "rk_tune.h"
#include "rk_omp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const metric_names[] = {"ndcg", "precision", "recall", "map", "mrr", "hit_rate"};

rk_status rk_tune_metric_parse(const char *name, rk_tune_metric *out)
{
    for (int m = 0; m < (int)(sizeof metric_names / sizeof metric_names[0]) && name != NULL; m++)
        if (strcmp(name, metric_names[m]) == 0) {
            *out = (rk_tune_metric)m;
            return RK_OK;
        }
    return RK_E_ARG;
}

const char *rk_tune_metric_name(rk_tune_metric m)
{
    return (unsigned)m < sizeof metric_names / sizeof metric_names[0] ? metric_names[m] : "unknown";
}

double rk_tune_value(const rk_rank_result *r, rk_tune_metric m)
{
    switch (m) {
    case RK_TUNE_NDCG: return r->ndcg;
    case RK_TUNE_PRECISION: return r->precision;
    case RK_TUNE_RECALL: return r->recall;
    case RK_TUNE_MAP: return r->map;
    case RK_TUNE_MRR: return r->mrr;
    case RK_TUNE_HIT_RATE: return r->hit_rate;
    }
    return 0.0;
}

/* ---- the grid ------------------------------------------------------------------ */

/* Appends a base's shapes: k in ks, (q, normalize) in qn. */
static int add_shapes(const rk_rankw_opts *b, const int32_t *ks, int nk, const double (*qn)[2], int nq,
                      rk_rankw_opts *out, int cap, int n)
{
    for (int x = 0; x < nk; x++)
        for (int y = 0; y < nq; y++, n++)
            if (n < cap) {
                out[n] = *b;
                out[n].k = ks[x];
                out[n].q = qn[y][0];
                out[n].normalize = qn[y][1] != 0.0;
            }
    return n;
}

rk_status rk_tune_grid_parse(const char *name, rk_tune_grid_kind *out)
{
    static const char *const names[] = {"full", "small", "rp3beta", "cosine", "bm25"};
    for (int g = 0; g < 5 && name != NULL; g++)
        if (strcmp(name, names[g]) == 0) {
            *out = (rk_tune_grid_kind)g;
            return RK_OK;
        }
    return RK_E_ARG;
}

const char *rk_tune_grid_name(rk_tune_grid_kind g)
{
    static const char *const names[] = {"full", "small", "rp3beta", "cosine", "bm25"};
    return (unsigned)g < 5 ? names[g] : "unknown";
}

int rk_tune_grid(rk_tune_grid_kind grid, rk_rankw_opts *out, int cap)
{
    static const int32_t ks[] = {20, 50, 100, 200}, ks_small[] = {3, 8};
    static const double rp_qn[][2] = {{1, 1}, {1, 0}}, cos_qn[][2] = {{1, 0}, {2, 0}};
    static const double alphas[] = {0.5, 0.75, 0.9, 1.0}, betas[] = {0.0, 0.2, 0.4, 0.5, 0.6, 0.7, 0.8};
    static const struct { rk_rankw_weighting w; int ratings; } weights[] = {
        {RK_RANKW_NONE, 0}, {RK_RANKW_TFIDF, 0}, {RK_RANKW_BM25, 0}, {RK_RANKW_BM25, 1}};
    static const double cos_alpha[] = {0.5, 0.8}, shrinks[] = {0.0, 20.0};
    const int small = grid == RK_TUNE_GRID_SMALL;
    const int32_t *k = small ? ks_small : ks;
    const int nk = small ? 2 : 4;
    int n = 0;
    rk_rankw_opts b;
    if (grid == RK_TUNE_GRID_FULL || grid == RK_TUNE_GRID_SMALL || grid == RK_TUNE_GRID_RP3BETA)
        for (int a = 0; a < (small ? 2 : 4); a++)
            for (int c = 0; c < (small ? 2 : 7); c++) {
                rk_rankw_opts_default(&b);
                b.sim = RK_METRIC_RP3BETA;
                b.alpha = alphas[a];
                b.beta = betas[c];
                n = add_shapes(&b, k, nk, rp_qn, 2, out, cap, n);
            }
    if (grid == RK_TUNE_GRID_COSINE) { /* the plain cosine of interactions, its shrink and shapes */
        static const double cos_shrinks[] = {0.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0};
        for (int x = 0; x < 7; x++) {
            rk_rankw_opts_default(&b);
            b.sim = RK_METRIC_WEIGHTED_COSINE;
            b.alpha = 0.5;
            b.shrink = cos_shrinks[x];
            n = add_shapes(&b, k, nk, cos_qn, 2, out, cap, n);
        }
        return n;
    }
    for (int w = 0; w < (small ? 2 : 4); w++)
        for (int a = 0; a < 2; a++)
            for (int s = 0; s < (small ? 1 : 2); s++) {
                /* bm25: the full grid's BM25 rows */
                if (grid == RK_TUNE_GRID_RP3BETA) continue;
                if (grid == RK_TUNE_GRID_BM25 && weights[w].w != RK_RANKW_BM25) continue;
                rk_rankw_opts_default(&b);
                b.sim = RK_METRIC_WEIGHTED_COSINE;
                b.weighting = weights[w].w;
                b.ratings = weights[w].ratings;
                b.alpha = cos_alpha[a];
                b.shrink = shrinks[s];
                n = add_shapes(&b, k, nk, cos_qn, 2, out, cap, n);
            }
    return n;
}

/* 1 when a and b need the same engine call (all but k, q, normalize). */
static int same_base(const rk_rankw_opts *a, const rk_rankw_opts *b)
{
    return a->sim == b->sim && a->weighting == b->weighting && a->ratings == b->ratings && a->alpha == b->alpha &&
           a->beta == b->beta && a->shrink == b->shrink && a->bm25_k1 == b->bm25_k1 && a->bm25_b == b->bm25_b;
}

/* ---- the validation split ------------------------------------------------------- */

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

typedef struct keyed {
    uint64_t key;
    int64_t p;
} keyed;

static int keyed_cmp(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->p > y->p) - (x->p < y->p);
}

/* held[p] = 1 for the validation ratings of m's user rows: per user with
 * n_u >= 2, the floor(f n_u + 1/2) (at most n_u − 1) ratings with the
 * smallest keys mix64(seed ^ mix64(r, q)), r the user's rank among the users
 * with ratings and q the rating's place in its row.  Neither depends on ids
 * that only a test set brings (they shift dense indices, not these ranks),
 * so the test set cannot change the draw. */
static rk_status draw(const rk_csr *U, double f, uint64_t seed, uint8_t *held, int64_t *n_held, rk_error *err)
{
    int64_t longest = 0, total = 0;
    for (int32_t u = 0; u < U->n_rows; u++)
        if (U->ptr[u + 1] - U->ptr[u] > longest) longest = U->ptr[u + 1] - U->ptr[u];
    int32_t *rank = malloc((size_t)(U->n_rows > 0 ? U->n_rows : 1) * sizeof *rank);
    if (rank == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory for the validation split");
    int32_t known = 0;
    for (int32_t u = 0; u < U->n_rows; u++) rank[u] = U->ptr[u + 1] > U->ptr[u] ? known++ : -1;
    int bad = 0;
#pragma omp parallel reduction(+ : total) reduction(| : bad)
    {
        keyed *k = malloc((size_t)(longest > 0 ? longest : 1) * sizeof *k);
        bad |= k == NULL;
#pragma omp for schedule(dynamic, 256)
        for (int32_t u = 0; u < U->n_rows; u++) {
            const int64_t b = U->ptr[u], n = U->ptr[u + 1] - b;
            memset(held + b, 0, (size_t)n);
            if (n < 2 || k == NULL) continue;
            int64_t t = (int64_t)floor(f * (double)n + 0.5);
            if (t > n - 1) t = n - 1;
            for (int64_t q = 0; q < n; q++) {
                k[q].key = mix64(seed ^ mix64(((uint64_t)(uint32_t)rank[u] << 32) | (uint64_t)q));
                k[q].p = q;
            }
            qsort(k, (size_t)n, sizeof *k, keyed_cmp);
            for (int64_t q = 0; q < t; q++) held[b + k[q].p] = 1;
            total += t;
        }
        free(k);
    }
    free(rank);
    if (bad) return rk_error_set(err, RK_E_NOMEM, "out of memory for the validation split");
    *n_held = total;
    return RK_OK;
}

/* The validation-training matrix (the user rows without the held ratings)
 * and the validation ratings as triples. */
static rk_status split(const rk_model *m, const rk_tune_opts *o, rk_csr *tr, rk_triples *va, rk_error *err)
{
    const rk_csr *U = &m->by_user;
    uint8_t *held = malloc((size_t)(U->nnz > 0 ? U->nnz : 1));
    RK_CHECK_ALLOC(held, err);
    int64_t nh = 0;
    rk_status s = draw(U, o->fraction, o->seed, held, &nh, err);
    if (s == RK_OK) s = rk_triples_alloc(va, nh, 0, err);
    memset(tr, 0, sizeof *tr);
    tr->n_rows = U->n_rows;
    tr->n_cols = U->n_cols;
    tr->nnz = U->nnz - nh;
    tr->ptr = malloc(((size_t)U->n_rows + 1) * sizeof *tr->ptr);
    tr->idx = malloc((size_t)(tr->nnz > 0 ? tr->nnz : 1) * sizeof *tr->idx);
    tr->val = malloc((size_t)(tr->nnz > 0 ? tr->nnz : 1) * sizeof *tr->val);
    if (s == RK_OK && (tr->ptr == NULL || tr->idx == NULL || tr->val == NULL))
        s = rk_error_set(err, RK_E_NOMEM, "out of memory for the validation split");
    if (s == RK_OK) {
        int64_t a = 0, v = 0;
        tr->ptr[0] = 0;
        for (int32_t u = 0; u < U->n_rows; u++) {
            for (int64_t p = U->ptr[u]; p < U->ptr[u + 1]; p++)
                if (held[p]) {
                    va->user[v] = u;
                    va->item[v] = U->idx[p];
                    va->rating[v++] = U->val[p];
                } else {
                    tr->idx[a] = U->idx[p];
                    tr->val[a++] = U->val[p];
                }
            tr->ptr[u + 1] = a;
        }
    }
    free(held);
    if (s != RK_OK) rk_csr_free(tr);
    return s;
}

rk_status rk_tune_split(const rk_model *m, double fraction, uint64_t seed, rk_csr *tr, rk_triples *va,
                        rk_error *err)
{
    rk_tune_opts o;
    memset(&o, 0, sizeof o);
    o.fraction = fraction;
    o.seed = seed;
    memset(va, 0, sizeof *va);
    return split(m, &o, tr, va, err);
}

/* ---- the search ------------------------------------------------------------------ */

/* The lists of one base at its longest k on the current backend. */
static rk_status base_lists(const rk_model *vm, const rk_rankw_opts *b, int32_t kmax, const rk_knn_opts *base,
                            rk_backend_seam *seam, rk_lists *l, rk_tune_result *out, rk_error *err)
{
    rk_rankw_opts c = *b;
    c.k = kmax;
    rk_rankw_model tm;
    RK_FORWARD(rk_rankw_build(vm, &c, &tm, err));
    rk_knn_opts ko;
    rk_rankw_knn_opts(&c, &tm, base, &ko);
    ko.progress = NULL;
    rk_knn_stats st;
    rk_status s = rk_lists_alloc(l, vm->by_item.n_rows, kmax, err);
    if (s == RK_OK) s = rk_backend_lists(seam, &tm.model, &ko, l, &st, "the GPU engine (--tune)", err);
    if (s == RK_OK) snprintf(out->device, sizeof out->device, "%s", st.device);
    rk_rankw_free(&tm);
    return s;
}

/* The first k entries of every list of full, shaped by c, into l. */
static rk_status prefix(const rk_lists *full, const rk_rankw_opts *c, rk_lists *l, rk_error *err)
{
    RK_FORWARD(rk_lists_alloc(l, full->n_items, c->k, err));
    for (int32_t i = 0; i < full->n_items; i++) {
        const int32_t n = full->len[i] < c->k ? full->len[i] : c->k;
        const size_t from = (size_t)i * (size_t)full->k, to = (size_t)i * (size_t)c->k;
        l->len[i] = n;
        memcpy(l->nbr + to, full->nbr + from, (size_t)n * sizeof *l->nbr);
        memcpy(l->sim + to, full->sim + from, (size_t)n * sizeof *l->sim);
        memcpy(l->support + to, full->support + from, (size_t)n * sizeof *l->support);
    }
    rk_rankw_shape(c, l);
    return RK_OK;
}

/* One configuration: its lists from the base's, top-N for the validation
 * users, measured. */
/* The measure of one configuration: its accumulator is made again when the
 * GPU failed part way and the CPU starts over (rk_backend_topn's restart). */
typedef struct measure {
    rk_rank *rank;
    const rk_triples *va;
    int32_t n_users, n_items;
    const rk_tune_opts *o;
} measure;

static rk_status measure_restart(void *ud, rk_error *err)
{
    measure *m = ud;
    rk_rank_free(m->rank);
    m->rank = NULL;
    return rk_rank_new(&m->rank, m->va, m->n_users, m->n_items, m->o->n, m->o->relevance, err);
}

static rk_status measure_sink(void *ud, const rk_topn_batch *b, rk_error *err)
{
    return rk_rank_sink(((measure *)ud)->rank, b, err);
}

static rk_status one(const rk_model *vm, const rk_triples *va, const rk_lists *full, const rk_tune_opts *o,
                     const rk_topn_opts *to0, rk_backend_seam *seam, rk_tune_row *row, rk_error *err)
{
    const double t0 = rk_omp_wtime();
    rk_lists l;
    memset(&l, 0, sizeof l);
    measure me = {NULL, va, vm->by_user.n_rows, vm->by_item.n_rows, o};
    rk_status s = prefix(full, &row->cfg, &l, err);
    if (s == RK_OK) s = measure_restart(&me, err);
    if (s == RK_OK) {
        rk_topn_opts to = *to0;
        to.sink = measure_sink;
        to.sink_ud = &me;
        s = rk_backend_topn(seam, vm, &l, &to, measure_restart, &me, NULL, "the GPU top-N (--tune)", err);
    }
    if (s == RK_OK) {
        rk_rank_finish(me.rank, &row->res);
        row->score = rk_tune_value(&row->res, o->metric);
    }
    rk_rank_free(me.rank);
    rk_lists_free(&l);
    row->seconds = rk_omp_wtime() - t0;
    return s;
}

/* The validation users with a relevant rating, ascending (top-N serves them
 * only); above o->max_users, the max_users of them with the smallest keys
 * mix64(seed ^ mix64(r)), r the user's rank among the users with ratings
 * (as the draw's, so that test-only ids change nothing).  Then va keeps only
 * their ratings, so that the metrics are means over the users measured. */
static rk_status val_users(const rk_model *vm, rk_triples *va, const rk_tune_opts *o, int32_t **out, int64_t *n,
                           rk_error *err)
{
    const int32_t n_users = vm->by_user.n_rows;
    uint8_t *has = calloc((size_t)(n_users > 0 ? n_users : 1), 1);
    keyed *k = malloc((size_t)(n_users > 0 ? n_users : 1) * sizeof *k);
    *out = malloc((size_t)(n_users > 0 ? n_users : 1) * sizeof **out);
    if (has == NULL || k == NULL || *out == NULL) {
        free(has);
        free(k);
        return rk_error_set(err, RK_E_NOMEM, "out of memory for the validation users");
    }
    for (int64_t t = 0; t < va->n; t++)
        if (va->rating[t] >= o->relevance) has[va->user[t]] = 1;
    int64_t m = 0;
    int32_t rank = 0;
    for (int32_t u = 0; u < n_users; u++) {
        const int rated = vm->by_user.ptr[u + 1] > vm->by_user.ptr[u];
        if (has[u]) k[m++] = (keyed){mix64(o->seed ^ mix64(0x75736572ULL + (uint64_t)rank)), u};
        rank += rated;
    }
    if (o->max_users > 0 && m > o->max_users) {
        qsort(k, (size_t)m, sizeof *k, keyed_cmp);
        memset(has, 0, (size_t)n_users);
        for (int64_t x = 0; x < o->max_users; x++) has[k[x].p] = 1;
        int64_t w = 0; /* the validation ratings of the sample only */
        for (int64_t t = 0; t < va->n; t++)
            if (has[va->user[t]]) {
                va->user[w] = va->user[t];
                va->item[w] = va->item[t];
                va->rating[w++] = va->rating[t];
            }
        va->n = w;
    }
    *n = 0;
    for (int32_t u = 0; u < n_users; u++)
        if (has[u]) (*out)[(*n)++] = u;
    free(has);
    free(k);
    return RK_OK;
}

/* Every base of the grid: its lists, then each of its shapes. */
static rk_status search(const rk_model *vm, const rk_triples *va, const rk_tune_opts *o, const rk_knn_opts *base,
                        rk_backend_seam *seam, const rk_topn_opts *to, rk_tune_result *out, rk_error *err)
{
    rk_status s = RK_OK;
    for (int a = 0; a < out->n_rows && s == RK_OK;) {
        int b = a;
        int32_t kmax = 0;
        while (b < out->n_rows && same_base(&out->rows[a].cfg, &out->rows[b].cfg)) {
            if (out->rows[b].cfg.k > kmax) kmax = out->rows[b].cfg.k;
            b++;
        }
        rk_lists full;
        memset(&full, 0, sizeof full);
        const double tl = rk_omp_wtime();
        s = base_lists(vm, &out->rows[a].cfg, kmax, base, seam, &full, out, err);
        out->t_lists += rk_omp_wtime() - tl;
        for (int c = a; c < b && s == RK_OK; c++) {
            s = one(vm, va, &full, o, to, seam, &out->rows[c], err);
            out->t_topn += out->rows[c].seconds;
            RK_PROGRESS(o->progress, o->progress_ud, "tune", o->done_before + c + 1, o->total, "configs");
        }
        rk_lists_free(&full);
        a = b;
    }
    return s;
}

/* One validation draw: the split of m by seed, then every configuration of
 * t's rows measured on it (into t's rows). */
static rk_status round_of(const rk_model *m, const rk_tune_opts *o, int round, int rounds, const rk_knn_opts *base,
                          rk_backend_seam *seam, rk_tune_result *t, rk_error *err)
{
    const double t0 = rk_omp_wtime();
    rk_tune_opts ro = *o;
    ro.seed = o->seed + 0x9e3779b97f4a7c15ULL * (uint64_t)round;
    ro.done_before = (int64_t)round * t->n_rows;
    ro.total = (int64_t)rounds * t->n_rows;
    rk_csr tr;
    rk_triples va;
    memset(&va, 0, sizeof va);
    rk_model vm;
    memset(&vm, 0, sizeof vm);
    int32_t *users = NULL;
    int64_t n_users = 0;
    rk_status s = split(m, &ro, &tr, &va, err);
    if (s == RK_OK && va.n == 0)
        s = rk_error_set(err, RK_E_ARG, "--tune: no user has two training ratings, so nothing can be validated");
    t->train_ratings = tr.nnz;
    t->val_ratings = va.n;
    if (s == RK_OK) s = rk_model_from_csr(&vm, &tr, 1, m->rmin, m->rmax, 0, err);
    else rk_csr_free(&tr);
    if (s == RK_OK) s = val_users(&vm, &va, &ro, &users, &n_users, err);
    t->val_users = n_users;
    t->val_ratings = va.n;
    t->t_split += rk_omp_wtime() - t0;
    if (s == RK_OK) {
        rk_topn_opts to;
        memset(&to, 0, sizeof to);
        to.n = o->n;
        to.users = users;
        to.n_users = n_users;
        to.threads = o->threads;
        s = search(&vm, &va, &ro, base, seam, &to, t, err);
    }
    free(users);
    rk_model_free(&vm);
    rk_triples_free(&va);
    return s;
}

/* a += b / rounds for the user metrics and the score. */
static void add_row(rk_tune_row *a, const rk_tune_row *b, int rounds)
{
    const double w = 1.0 / rounds;
    a->res.n = b->res.n;
    a->res.relevance = b->res.relevance;
    a->res.users += b->res.users;
    a->res.precision += w * b->res.precision;
    a->res.recall += w * b->res.recall;
    a->res.ndcg += w * b->res.ndcg;
    a->res.map += w * b->res.map;
    a->res.mrr += w * b->res.mrr;
    a->res.hit_rate += w * b->res.hit_rate;
    a->score += w * b->score;
    a->seconds += b->seconds;
}

rk_status rk_tune_run(const rk_model *m, const rk_tune_opts *o, const rk_knn_opts *base, rk_backend_seam *seam,
                      rk_tune_result *out, rk_error *err)
{
    memset(out, 0, sizeof *out);
    const double t0 = rk_omp_wtime();
    if (!(o->fraction > 0.0 && o->fraction < 1.0)) return rk_error_set(err, RK_E_ARG, "--tune-fraction must lie in (0, 1)");
    const int rounds = o->rounds > 0 ? o->rounds : 1;
    const int n = rk_tune_grid(o->grid, NULL, 0);
    rk_tune_result t;
    memset(&t, 0, sizeof t);
    out->rows = calloc((size_t)n, sizeof *out->rows);
    t.rows = calloc((size_t)n, sizeof *t.rows);
    rk_rankw_opts *g = malloc((size_t)n * sizeof *g);
    rk_status s = RK_OK;
    if (out->rows == NULL || t.rows == NULL || g == NULL) s = rk_error_set(err, RK_E_NOMEM, "out of memory for the grid");
    if (s == RK_OK) {
        rk_tune_grid(o->grid, g, n);
        for (int r = 0; r < n; r++) out->rows[r].cfg = t.rows[r].cfg = g[r];
        out->n_rows = t.n_rows = n;
    }
    /* each round its own draw; the scores are the means over the rounds */
    for (int round = 0; round < rounds && s == RK_OK; round++) {
        s = round_of(m, o, round, rounds, base, seam, &t, err);
        for (int r = 0; r < n && s == RK_OK; r++) add_row(&out->rows[r], &t.rows[r], rounds);
        t.bases = 0;
    }
    out->bases = 0;
    for (int r = 0; r < n; r++) out->bases += r == 0 || !same_base(&out->rows[r - 1].cfg, &out->rows[r].cfg);
    out->bases *= rounds;
    out->train_ratings = t.train_ratings;
    out->val_ratings = t.val_ratings;
    out->val_users = t.val_users;
    out->t_split = t.t_split;
    out->t_lists = t.t_lists;
    out->t_topn = t.t_topn;
    snprintf(out->device, sizeof out->device, "%s", t.device);
    for (int r = 1; r < out->n_rows && s == RK_OK; r++)
        if (out->rows[r].score > out->rows[out->best].score) out->best = r;
    free(g);
    free(t.rows);
    out->t_total = rk_omp_wtime() - t0;
    if (s != RK_OK) rk_tune_free(out);
    return s;
}

void rk_tune_free(rk_tune_result *r)
{
    if (r == NULL) return;
    free(r->rows);
    memset(r, 0, sizeof *r);
}
