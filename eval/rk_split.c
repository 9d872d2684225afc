#include "rk_split_internal.h"
#include "rk_omp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One ordering machine for the three splits: the ratings are counting-sorted
 * into groups (users, or the top bits of the key for K-fold), then each group
 * is sorted by (key, t).  (key, t) is a total order, so the result is the same
 * for every thread count whatever order the scatter left a group in. */

static const char *const kind_names[] = {"ratings", "user", "temporal", "users"};
#define N_KINDS ((int)(sizeof kind_names / sizeof kind_names[0]))

rk_status rk_split_kind_parse(const char *name, rk_split_kind *out)
{
    for (int k = 0; k < N_KINDS; k++)
        if (name != NULL && strcmp(name, kind_names[k]) == 0) {
            *out = (rk_split_kind)k;
            return RK_OK;
        }
    return RK_E_ARG;
}

const char *rk_split_kind_name(rk_split_kind k)
{
    return (unsigned)k < (unsigned)N_KINDS ? kind_names[k] : "unknown";
}




/* What to order by: group = user[t] when user != NULL, else the key's top
 * `bits` bits (monotone in the key, so the groups in turn are one sorted
 * run); key = the seeded hash, or the timestamp when time != NULL (the sign
 * bit flipped so that unsigned order is signed order). */
typedef struct order_src {
    const int32_t *user;
    int64_t n_groups;
    int bits;
    uint64_t sk;
    const int64_t *time;
} order_src;

static inline uint64_t key_of(const order_src *s, int64_t t)
{
    return s->time != NULL ? (uint64_t)s->time[t] ^ 0x8000000000000000ULL : rk_split_row_key(s->sk, t);
}

static inline int64_t group_of(const order_src *s, uint64_t key, int64_t t)
{
    if (s->user != NULL) return s->user[t];
    return s->bits > 0 ? (int64_t)(key >> (64 - s->bits)) : 0;
}

/* *ord (n entries) = the ratings grouped, each group in (key, t) order;
 * *ptr (n_groups + 1) = the groups' offsets.  Both malloc'ed, NULL on failure.
 * Memory: 16 bytes per rating plus 8 per group. */
static rk_status order_ratings(const order_src *s, int64_t n, rk_split_keyed **ord, int64_t **ptr, rk_error *err)
{
    *ord = NULL;
    *ptr = NULL;
    rk_split_keyed *o = malloc((size_t)(n > 0 ? n : 1) * sizeof *o);
    int64_t *p = calloc((size_t)s->n_groups + 1, sizeof *p);
    if (o == NULL || p == NULL) {
        free(o);
        free(p);
        return rk_error_set(err, RK_E_NOMEM, "out of memory ordering %lld ratings for a split", (long long)n);
    }
    for (int64_t t = 0; t < n; t++) {
        int64_t g = group_of(s, key_of(s, t), t);
        if (g < 0 || g >= s->n_groups) {
            free(o);
            free(p);
            return rk_error_set(err, RK_E_ARG, "rating %lld has user index %lld outside [0, %lld)", (long long)t,
                                (long long)g, (long long)s->n_groups);
        }
        p[g + 1]++;
    }
    for (int64_t g = 0; g < s->n_groups; g++) p[g + 1] += p[g];
    /* scatter with a moving cursor per group (p[g] ends at the group's end,
     * then is shifted back) */
    for (int64_t t = 0; t < n; t++) {
        uint64_t k = key_of(s, t);
        o[p[group_of(s, k, t)]++] = (rk_split_keyed){k, t};
    }
    for (int64_t g = s->n_groups; g > 0; g--) p[g] = p[g - 1];
    p[0] = 0;
#pragma omp parallel for schedule(dynamic, 256) if (n > 65536)
    for (int64_t g = 0; g < s->n_groups; g++)
        if (p[g + 1] - p[g] > 1) qsort(o + p[g], (size_t)(p[g + 1] - p[g]), sizeof *o, rk_split_keyed_cmp);
    *ord = o;
    *ptr = p;
    return RK_OK;
}

rk_status rk_split_folds(int64_t n, int32_t k, uint64_t seed, int32_t *fold, rk_error *err)
{
    if (n < 0) return rk_error_set(err, RK_E_ARG, "a negative number of ratings");
    if (k < 2 || k > n)
        return rk_error_set(err, RK_E_ARG, "--folds %d must be between 2 and the number of ratings (%lld)", (int)k,
                            (long long)n);
    order_src s = {NULL, 1, 0, rk_split_seed_key(seed), NULL};
    while (s.bits < 16 && ((int64_t)32 << s.bits) < n) s.bits++; /* about 32 ratings a group, at most 2^16 groups */
    s.n_groups = (int64_t)1 << s.bits;
    rk_split_keyed *ord;
    int64_t *ptr;
    RK_FORWARD(order_ratings(&s, n, &ord, &ptr, err));
    /* rank r in (key, t) order: the first n % k folds take q + 1 ranks each */
    const int64_t q = n / k, big = (n % k) * (q + 1);
#pragma omp parallel for schedule(static) if (n > 65536)
    for (int64_t r = 0; r < n; r++)
        fold[ord[r].t] = (int32_t)(r < big ? r / (q + 1) : n % k + (r - big) / q);
    free(ord);
    free(ptr);
    return RK_OK;
}

/* t_u of CONTRACT.md §6: round(frac × n_u) half up, at most n_u − 1; none below 2. */
static int64_t user_take(int64_t n_u, double frac)
{
    if (n_u < 2) return 0;
    int64_t t_u = (int64_t)floor(frac * (double)n_u + 0.5);
    return t_u < n_u - 1 ? t_u : n_u - 1;
}

/* Shared by the per-user splits: order each user's ratings by `s`'s key and
 * send the first (latest == 0) or last (latest == 1) t_u to the test set. */
static rk_status per_user(const rk_triples *all, int32_t n_users, double frac, order_src *s, int latest,
                          int32_t *part, int64_t *n_test, rk_error *err)
{
    if (n_test != NULL) *n_test = 0;
    if (!(frac > 0.0 && frac < 1.0))
        return rk_error_set(err, RK_E_ARG, "the test fraction must be in (0, 1), got %g", frac);
    if (all->n < 0 || n_users < 0)
        return rk_error_set(err, RK_E_ARG, "a negative number of ratings or users");
    s->user = all->user;
    s->n_groups = n_users;
    rk_split_keyed *ord;
    int64_t *ptr;
    RK_FORWARD(order_ratings(s, all->n, &ord, &ptr, err));
    int64_t total = 0;
#pragma omp parallel for schedule(dynamic, 256) reduction(+ : total) if (all->n > 65536)
    for (int64_t u = 0; u < n_users; u++) {
        const int64_t b = ptr[u], e = ptr[u + 1], t_u = user_take(e - b, frac);
        const int64_t lo = latest ? e - t_u : b, hi = latest ? e : b + t_u; /* the test range */
        for (int64_t p = b; p < e; p++) part[ord[p].t] = p >= lo && p < hi;
        total += t_u;
    }
    free(ord);
    free(ptr);
    if (n_test != NULL) *n_test = total;
    return RK_OK;
}

rk_status rk_split_user(const rk_triples *all, int32_t n_users, double frac, uint64_t seed, int32_t *part,
                        int64_t *n_test, rk_error *err)
{
    order_src s = {NULL, 0, 0, rk_split_seed_key(seed), NULL};
    return per_user(all, n_users, frac, &s, 0, part, n_test, err);
}

rk_status rk_split_temporal(const rk_triples *all, int32_t n_users, double frac, int32_t *part,
                            int64_t *n_test, rk_error *err)
{
    if (n_test != NULL) *n_test = 0;
    if (all->time == NULL)
        return rk_error_set(err, RK_E_ARG, "--split temporal needs timestamps, and the input has none");
    order_src s = {NULL, 0, 0, 0, all->time};
    return per_user(all, n_users, frac, &s, 1, part, n_test, err);
}

rk_status rk_split_apply(const rk_triples *all, const int32_t *part, int32_t which, rk_triples *train,
                         rk_triples *test, rk_error *err)
{
    memset(train, 0, sizeof *train);
    memset(test, 0, sizeof *test);
    const int64_t n = all->n;
    const int with_time = all->time != NULL;
    int64_t n_te = 0;
    for (int64_t t = 0; t < n; t++) n_te += part[t] == which;
    rk_status s = rk_triples_alloc(test, n_te, with_time, err);
    if (s == RK_OK) s = rk_triples_alloc(train, n - n_te, with_time, err);
    if (s != RK_OK) {
        rk_triples_free(test);
        rk_triples_free(train);
        return s;
    }
    int64_t a = 0, b = 0;
    for (int64_t t = 0; t < n; t++) {
        rk_triples *dst = part[t] == which ? test : train;
        int64_t i = part[t] == which ? b++ : a++;
        dst->user[i] = all->user[t];
        dst->item[i] = all->item[t];
        dst->rating[i] = all->rating[t];
        if (with_time) dst->time[i] = all->time[t];
    }
    return RK_OK;
}

typedef struct user_key {
    uint64_t key;
    int32_t u;
} user_key;

static int user_key_cmp(const void *a, const void *b)
{
    const user_key *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->u > y->u) - (x->u < y->u);
}

rk_status rk_split_users_out(const rk_triples *all, int32_t n_users, double frac_users, double frac_test,
                             uint64_t seed, int32_t *part, int64_t *n_test, rk_error *err)
{
    if (!(frac_users > 0.0 && frac_users < 1.0))
        return rk_error_set(err, RK_E_ARG, "--holdout with --split users is the fraction of users held out, in (0, 1)");
    int64_t *cnt = calloc((size_t)(n_users > 0 ? n_users : 1), sizeof *cnt);
    user_key *k = malloc((size_t)(n_users > 0 ? n_users : 1) * sizeof *k);
    uint8_t *out = calloc((size_t)(n_users > 0 ? n_users : 1), 1);
    rk_status s = RK_OK;
    if (cnt == NULL || k == NULL || out == NULL) s = rk_error_set(err, RK_E_NOMEM, "out of memory for the user split");
    for (int64_t t = 0; t < all->n && s == RK_OK; t++) {
        if (all->user[t] < 0 || all->user[t] >= n_users)
            s = rk_error_set(err, RK_E_ARG, "rating %lld has user index %d outside [0, %d)", (long long)t,
                             all->user[t], n_users);
        else cnt[all->user[t]]++;
    }
    int32_t eligible = 0;
    /* the users' keys come from the seed's key with the rows' constant flipped,
     * so that they are not the ratings' keys of the same seed */
    const uint64_t sk = rk_split_seed_key(seed) ^ 0x5555555555555555ULL;
    for (int32_t u = 0; u < n_users && s == RK_OK; u++)
        if (cnt[u] >= 2) k[eligible++] = (user_key){rk_split_row_key(sk, u), u};
    if (s == RK_OK && eligible == 0) s = rk_error_set(err, RK_E_ARG, "--split users: no user has two ratings");
    if (s == RK_OK) {
        qsort(k, (size_t)eligible, sizeof *k, user_key_cmp);
        int64_t want = (int64_t)floor(frac_users * eligible + 0.5);
        if (want < 1) want = 1;
        for (int64_t x = 0; x < want; x++) out[k[x].u] = 1;
        s = rk_split_user(all, n_users, frac_test, seed, part, NULL, err);
    }
    int64_t nt = 0;
    for (int64_t t = 0; t < all->n && s == RK_OK; t++) {
        if (!out[all->user[t]]) part[t] = 0;
        else if (part[t] == 1) nt++;
        else part[t] = 2;
    }
    if (n_test != NULL) *n_test = nt;
    free(cnt);
    free(k);
    free(out);
    return s;
}
