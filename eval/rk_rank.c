/* Ranking metrics of top-N lists (rk_rank.h): the relevant test items of
 * every user as sorted rows, looked up by binary search as lists come in;
 * sums in double, the means at the end. */
#include "rk_rank.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct rk_rank {
    int32_t n_users, n_items, n;
    double relevance;
    int64_t *ptr;     /* n_users + 1: row offsets of rel */
    int32_t *rel;     /* relevant test items, ascending within a row, no duplicates */
    uint8_t *seen;    /* n_users: 1 once the user's first list came */
    int64_t *count;   /* n_items: times recommended */
    int64_t *sorted;  /* n_items scratch for the Gini sort, allocated up front so
                         that rk_rank_finish cannot fail */
    double *ideal;    /* ideal[k] = DCG of k hits at ranks 1..k, k <= max_ideal */
    int32_t max_ideal;
    int64_t users, fed_users, lists, rows;
    int32_t items_recommended;
    int n_cut;                               /* cutoffs, ascending, cut[n_cut - 1] == n */
    int32_t cut[RK_RANK_MAX_CUTOFFS];
    double sum[RK_RANK_MAX_CUTOFFS][6];      /* per cutoff: precision, recall, NDCG, AP, RR, hit */
    rk_rank_user_row *per_user;              /* n_users rows, or NULL (rk_rank_keep_users) */
};

enum { S_P, S_R, S_NDCG, S_AP, S_RR, S_HIT };

/* The one expression of the discount, so that a perfect list's DCG and the
 * ideal DCG are the same double and NDCG is exactly 1. */
static inline double discount(int64_t rank)
{
    return 1.0 / log2((double)rank + 1.0);
}

void rk_rank_free(rk_rank *r)
{
    if (r == NULL) return;
    free(r->ptr);
    free(r->rel);
    free(r->seen);
    free(r->count);
    free(r->sorted);
    free(r->ideal);
    free(r->per_user);
    free(r);
}

/* The relevant test ratings as user rows with items ascending: a counting
 * sort by item, then a stable one by user (a transpose), then adjacent
 * duplicates dropped. */
static rk_status build_rows(rk_rank *r, const rk_triples *test, rk_error *err)
{
    const int32_t nu = r->n_users, ni = r->n_items;
    int64_t n_rel = 0;
    for (int64_t t = 0; t < test->n; t++)
        if (test->rating[t] >= r->relevance) n_rel++;

    int64_t *iptr = calloc((size_t)ni + 1, sizeof *iptr);
    int32_t *iuser = malloc((size_t)(n_rel > 0 ? n_rel : 1) * sizeof *iuser);
    r->rel = malloc((size_t)(n_rel > 0 ? n_rel : 1) * sizeof *r->rel);
    if (iptr == NULL || iuser == NULL || r->rel == NULL) {
        free(iptr);
        free(iuser);
        return rk_error_set(err, RK_E_NOMEM, "out of memory for %lld relevant test ratings", (long long)n_rel);
    }
    for (int64_t t = 0; t < test->n; t++)
        if (test->rating[t] >= r->relevance) iptr[test->item[t] + 1]++;
    for (int32_t i = 0; i < ni; i++) iptr[i + 1] += iptr[i];
    for (int64_t t = 0; t < test->n; t++)
        if (test->rating[t] >= r->relevance) {
            r->ptr[test->user[t] + 1]++;
            iuser[iptr[test->item[t]]++] = test->user[t];
        }
    /* iptr[i] is now the end of item i's run, i.e. the start of i + 1's */
    for (int32_t u = 0; u < nu; u++) r->ptr[u + 1] += r->ptr[u];
    int64_t *fill = r->ptr; /* fill[u] walks row u; shifted back below */
    int64_t p = 0;
    for (int32_t i = 0; i < ni; i++)
        for (; p < iptr[i]; p++) r->rel[fill[iuser[p]]++] = i;
    for (int32_t u = nu; u > 0; u--) r->ptr[u] = r->ptr[u - 1];
    r->ptr[0] = 0;
    free(iptr);
    free(iuser);

    /* drop repeated (user, item) pairs, count the users and the longest row */
    int64_t out = 0, longest = 0;
    for (int32_t u = 0; u < nu; u++) {
        const int64_t b = r->ptr[u], e = r->ptr[u + 1], start = out;
        for (int64_t q = b; q < e; q++)
            if (out == start || r->rel[q] != r->rel[out - 1]) r->rel[out++] = r->rel[q];
        r->ptr[u] = start;
        if (out > start) r->users++;
        if (out - start > longest) longest = out - start;
    }
    r->ptr[nu] = out;

    /* the ideal DCG is needed for at most min(N, longest row) hits */
    r->max_ideal = (int32_t)(longest < r->n ? longest : r->n);
    r->ideal = malloc(((size_t)r->max_ideal + 1) * sizeof *r->ideal);
    RK_CHECK_ALLOC(r->ideal, err);
    r->ideal[0] = 0.0;
    for (int32_t k = 1; k <= r->max_ideal; k++) r->ideal[k] = r->ideal[k - 1] + discount(k);
    return RK_OK;
}

rk_status rk_rank_new(rk_rank **out, const rk_triples *test, int32_t n_users, int32_t n_items, int32_t n,
                      double relevance, rk_error *err)
{
    if (out == NULL) return rk_error_set(err, RK_E_ARG, "ranking: no place for the accumulator");
    *out = NULL;
    if (n < 1) return rk_error_set(err, RK_E_ARG, "ranking needs N >= 1 (got %d)", n);
    if (test == NULL || test->n < 0 || (test->n > 0 && (test->user == NULL || test->item == NULL ||
                                                         test->rating == NULL)))
        return rk_error_set(err, RK_E_ARG, "ranking needs the test ratings");
    if (n_users < 0 || n_items < 0)
        return rk_error_set(err, RK_E_ARG, "ranking: negative sizes (%d users, %d items)", n_users, n_items);
    for (int64_t t = 0; t < test->n; t++) {
        if (test->user[t] < 0 || test->user[t] >= n_users)
            return rk_error_set(err, RK_E_ARG, "ranking: test rating %lld has user index %d outside [0, %d)",
                                (long long)t, test->user[t], n_users);
        if (test->item[t] < 0 || test->item[t] >= n_items)
            return rk_error_set(err, RK_E_ARG, "ranking: test rating %lld has item index %d outside [0, %d)",
                                (long long)t, test->item[t], n_items);
    }

    rk_rank *r = calloc(1, sizeof *r);
    RK_CHECK_ALLOC(r, err);
    r->n_users = n_users;
    r->n_items = n_items;
    r->n = n;
    r->relevance = relevance;
    r->n_cut = 1;
    r->cut[0] = n;
    r->ptr = calloc((size_t)n_users + 1, sizeof *r->ptr);
    r->seen = calloc((size_t)(n_users > 0 ? n_users : 1), 1);
    r->count = calloc((size_t)(n_items > 0 ? n_items : 1), sizeof *r->count);
    r->sorted = malloc((size_t)(n_items > 0 ? n_items : 1) * sizeof *r->sorted);
    if (r->ptr == NULL || r->seen == NULL || r->count == NULL || r->sorted == NULL) {
        rk_rank_free(r);
        return rk_error_set(err, RK_E_NOMEM, "out of memory for ranking over %d users and %d items", n_users,
                            n_items);
    }
    rk_status s = build_rows(r, test, err);
    if (s != RK_OK) {
        rk_rank_free(r);
        return s;
    }
    *out = r;
    return RK_OK;
}

/* 1 when item is in the ascending run a[0..len). */
static int contains(const int32_t *a, int64_t len, int32_t item)
{
    int64_t lo = 0, hi = len;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (a[mid] < item) lo = mid + 1;
        else hi = mid;
    }
    return lo < len && a[lo] == item;
}

/* A list's hits as each cutoff closes: what rk_rank_add sums, computed
 * apart so that many lists can be read in parallel and summed in order. */
typedef struct list_eval {
    int64_t n_rel;  /* the user's relevant items (0: nothing to sum) */
    int64_t hits[RK_RANK_MAX_CUTOFFS], first[RK_RANK_MAX_CUTOFFS];
    double dcg[RK_RANK_MAX_CUTOFFS], ap[RK_RANK_MAX_CUTOFFS];
} list_eval;

/* The list of `user` against the user's relevant items (r is only read). */
static void list_hits(const rk_rank *r, int32_t user, const int32_t *items, int32_t len, list_eval *v)
{
    v->n_rel = user >= 0 && user < r->n_users ? r->ptr[user + 1] - r->ptr[user] : 0;
    if (v->n_rel == 0) return;
    const int32_t *rel = r->rel + r->ptr[user];
    int64_t hits = 0, first = 0;
    double dcg = 0.0, ap = 0.0;
    int c = 0; /* the next cutoff to close */
    for (int32_t x = 0; x <= len && c < r->n_cut; x++) {
        /* close every cutoff that ends before place x + 1 (a short list closes the rest at its end) */
        while (c < r->n_cut && (x == len || r->cut[c] <= x)) {
            v->hits[c] = hits;
            v->first[c] = first;
            v->dcg[c] = dcg;
            v->ap[c] = ap;
            c++;
        }
        if (x == len || c == r->n_cut) break;
        if (!contains(rel, v->n_rel, items[x])) continue;
        int repeat = 0; /* an item listed twice is one hit (hits are few: a short scan) */
        for (int32_t y = 0; y < x && !repeat; y++) repeat = items[y] == items[x];
        if (repeat) continue;
        hits++;
        dcg += discount(x + 1);
        ap += (double)hits / (double)(x + 1);
        if (first == 0) first = x + 1;
    }
}

/* The counts and sums of one list, in the order the lists come. */
static void list_sum(rk_rank *r, int32_t user, const int32_t *items, int32_t len, const list_eval *v)
{
    r->lists++;
    r->rows += len;
    for (int32_t x = 0; x < len; x++) {
        const int32_t i = items[x];
        if (i < 0 || i >= r->n_items) continue;
        if (r->count[i]++ == 0) r->items_recommended++;
    }
    const int64_t n_rel = v->n_rel;
    if (n_rel == 0 || r->seen[user]) return;
    r->seen[user] = 1;
    r->fed_users++;
    for (int c = 0; c < r->n_cut; c++) {
        const int32_t cn = r->cut[c];
        const int64_t hits = v->hits[c];
        if (hits == 0) continue;
        const int32_t k = (int32_t)(n_rel < cn ? n_rel : cn);
        r->sum[c][S_P] += (double)hits / (double)cn;
        r->sum[c][S_R] += (double)hits / (double)n_rel;
        r->sum[c][S_NDCG] += v->dcg[c] / r->ideal[k];
        r->sum[c][S_AP] += v->ap[c] / (double)k;
        r->sum[c][S_RR] += 1.0 / (double)v->first[c];
        r->sum[c][S_HIT] += 1.0;
    }
    if (r->per_user != NULL) { /* the whole list: N is the last cutoff */
        const int c = r->n_cut - 1;
        const int64_t hits = v->hits[c];
        rk_rank_user_row *u = &r->per_user[user];
        const int32_t k = (int32_t)(n_rel < r->n ? n_rel : r->n);
        u->listed = 1;
        u->hits = (int32_t)hits;
        u->precision = (double)hits / (double)r->n;
        u->recall = (double)hits / (double)n_rel;
        u->ndcg = hits > 0 ? v->dcg[c] / r->ideal[k] : 0.0;
        u->ap = hits > 0 ? v->ap[c] / (double)k : 0.0;
        u->rr = v->first[c] > 0 ? 1.0 / (double)v->first[c] : 0.0;
    }
}

/* A list's length as summed: never more than N places. */
static inline int32_t list_len(const rk_rank *r, const int32_t *items, int32_t len)
{
    return len < 0 || items == NULL ? 0 : len > r->n ? r->n : len;
}

void rk_rank_add(rk_rank *r, int32_t user, const int32_t *items, int32_t len)
{
    if (r == NULL || user < 0 || user >= r->n_users) return;
    len = list_len(r, items, len);
    list_eval v;
    list_hits(r, user, items, len, &v);
    list_sum(r, user, items, len, &v);
}

rk_status rk_rank_set_cutoffs(rk_rank *r, const int32_t *cut, int n_cut, rk_error *err)
{
    if (r == NULL) return rk_error_set(err, RK_E_ARG, "ranking: no accumulator");
    if (r->lists > 0) return rk_error_set(err, RK_E_ARG, "ranking: cutoffs set after the first list");
    int32_t c[RK_RANK_MAX_CUTOFFS + 1];
    int n = 0;
    for (int t = 0; t < n_cut; t++) {
        if (cut[t] < 1 || cut[t] > r->n)
            return rk_error_set(err, RK_E_ARG, "ranking: cutoff %d outside [1, %d]", cut[t], r->n);
        int dup = 0;
        for (int q = 0; q < n; q++) dup |= c[q] == cut[t];
        if (dup) continue;
        if (n >= RK_RANK_MAX_CUTOFFS) return rk_error_set(err, RK_E_ARG, "ranking: more than %d cutoffs",
                                                         RK_RANK_MAX_CUTOFFS);
        c[n++] = cut[t];
    }
    int has_n = 0;
    for (int q = 0; q < n; q++) has_n |= c[q] == r->n;
    if (!has_n) {
        if (n >= RK_RANK_MAX_CUTOFFS) return rk_error_set(err, RK_E_ARG, "ranking: more than %d cutoffs",
                                                         RK_RANK_MAX_CUTOFFS);
        c[n++] = r->n;
    }
    for (int a = 1; a < n; a++) /* insertion sort: at most 16 */
        for (int b = a; b > 0 && c[b - 1] > c[b]; b--) {
            const int32_t t = c[b];
            c[b] = c[b - 1];
            c[b - 1] = t;
        }
    memcpy(r->cut, c, (size_t)n * sizeof *c);
    r->n_cut = n;
    return RK_OK;
}

rk_status rk_rank_keep_users(rk_rank *r, rk_error *err)
{
    if (r == NULL || r->per_user != NULL) return RK_OK;
    r->per_user = calloc((size_t)(r->n_users > 0 ? r->n_users : 1), sizeof *r->per_user);
    RK_CHECK_ALLOC(r->per_user, err);
    for (int32_t u = 0; u < r->n_users; u++) r->per_user[u].relevant = r->ptr[u + 1] - r->ptr[u];
    return RK_OK;
}

void rk_rank_user(const rk_rank *r, int32_t u, rk_rank_user_row *out)
{
    memset(out, 0, sizeof *out);
    if (r != NULL && r->per_user != NULL && u >= 0 && u < r->n_users) *out = r->per_user[u];
}

int32_t rk_rank_users(const rk_rank *r) { return r != NULL ? r->n_users : 0; }

#define RK_RANK_PAR_MIN 4096 /* lists a batch from which they are read in parallel */

/* A batch's lists read on every core, then summed in their order on one:
 * the same doubles as rk_rank_add list by list. */
rk_status rk_rank_sink(void *ud, const rk_topn_batch *b, rk_error *err)
{
    rk_rank *r = ud;
    if (r == NULL || b->count < RK_RANK_PAR_MIN) {
        for (int64_t x = 0; x < b->count; x++) rk_rank_add(r, b->user[x], b->item + x * b->n, b->len[x]);
        return RK_OK;
    }
    list_eval *v = malloc((size_t)b->count * sizeof *v);
    if (v == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory ranking %lld lists", (long long)b->count);
#pragma omp parallel for schedule(dynamic, 256)
    for (int64_t x = 0; x < b->count; x++) {
        const int32_t *items = b->item + x * b->n;
        list_hits(r, b->user[x], items, list_len(r, items, b->len[x]), &v[x]);
    }
    for (int64_t x = 0; x < b->count; x++) {
        const int32_t user = b->user[x], *items = b->item + x * b->n;
        if (user >= 0 && user < r->n_users) list_sum(r, user, items, list_len(r, items, b->len[x]), &v[x]);
    }
    free(v);
    return RK_OK;
}

static int i64_cmp(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

void rk_rank_finish(const rk_rank *r, rk_rank_result *out)
{
    memset(out, 0, sizeof *out);
    if (r == NULL) return;
    out->n = r->n;
    out->relevance = r->relevance;
    out->users = r->users;
    out->users_without_list = r->users - r->fed_users;
    out->n_cutoffs = r->n_cut;
    const double nu = r->users > 0 ? (double)r->users : 1.0;
    for (int c = 0; c < r->n_cut; c++) {
        rk_rank_at *a = &out->at[c];
        a->n = r->cut[c];
        a->precision = r->sum[c][S_P] / nu;
        a->recall = r->sum[c][S_R] / nu;
        a->ndcg = r->sum[c][S_NDCG] / nu;
        a->map = r->sum[c][S_AP] / nu;
        a->mrr = r->sum[c][S_RR] / nu;
        a->hit_rate = r->sum[c][S_HIT] / nu;
    }
    const rk_rank_at *at_n = &out->at[r->n_cut - 1]; /* N is the last cutoff */
    out->precision = at_n->precision;
    out->recall = at_n->recall;
    out->ndcg = at_n->ndcg;
    out->map = at_n->map;
    out->mrr = at_n->mrr;
    out->hit_rate = at_n->hit_rate;
    out->lists = r->lists;
    out->rows = r->rows;
    out->items_recommended = r->items_recommended;
    const int32_t ni = r->n_items;
    if (ni > 0) out->coverage = (double)r->items_recommended / (double)ni;

    /* G = Σ_i (2i − n − 1) c_(i) / (n Σ c), i = 1..n over the counts ascending */
    if (ni <= 0 || r->items_recommended == 0) return;
    memcpy(r->sorted, r->count, (size_t)ni * sizeof *r->sorted);
    qsort(r->sorted, (size_t)ni, sizeof *r->sorted, i64_cmp);
    double num = 0.0, total = 0.0;
    for (int32_t i = 0; i < ni; i++) {
        const double c = (double)r->sorted[i];
        num += (2.0 * (double)(i + 1) - (double)ni - 1.0) * c;
        total += c;
    }
    out->gini = num / ((double)ni * total);
}

const int64_t *rk_rank_item_counts(const rk_rank *r)
{
    return r != NULL ? r->count : NULL;
}
