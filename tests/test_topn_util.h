/* test_topn_util.h — a top-N sink that collects every batch, shared by the
 * CPU and GPU top-N tests. */
#ifndef RK_TEST_TOPN_UTIL_H
#define RK_TEST_TOPN_UTIL_H

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "rk_topn.h"
#include "rk_model.h"
#include "test_util.h"

/* Random ratings for the top-N tests; the last user rates every item (when
 * there are at most 5000), the one before only item 0, the last item has
 * none; at least one rating. */
typedef enum { VAL_HALF, VAL_TIES, VAL_REAL } value_kind;

static inline void make_model(rk_model *m, int nu, int ni, double density, value_kind vk, unsigned long long seed)
{
    rk_triples t;
    rk_error err;
    unsigned long long s = seed;
    int64_t cap = (int64_t)((double)nu * ni * density * 1.2) + 2 * (int64_t)ni + 16;
    CU_ASSERT_FATAL(rk_triples_alloc(&t, cap, 0, &err) == RK_OK);
    int64_t n = 0;
    for (int u = 0; u < nu && n < cap - ni; u++) {
        int all = nu > 2 && u == nu - 1 && ni <= 5000, one = nu > 3 && u == nu - 2;
        for (int i = 0; i < ni && n < cap; i++) {
            if (!all && ni > 3 && i == ni - 1) continue;
            if (!all && (one ? i != 0 : rk_test_uniform(&s) >= density)) continue;
            double v = vk == VAL_HALF ? 0.5 * (double)(1 + rk_test_rand(&s) % 10)
                     : vk == VAL_TIES ? (double)(1 + rk_test_rand(&s) % 2)
                                      : 1.0 + 4.0 * rk_test_uniform(&s);
            t.user[n] = u;
            t.item[n] = i;
            t.rating[n] = (float)v;
            n++;
        }
    }
    if (n == 0) { /* at least one rating */
        t.user[0] = 0;
        t.item[0] = 0;
        t.rating[0] = 3.0f;
        n = 1;
    }
    t.n = n;
    CU_ASSERT_FATAL(rk_model_build(m, &t, nu, ni, 0, 0, 0, 1, &err) == RK_OK);
    rk_triples_free(&t);
}

typedef struct collected {
    int64_t n_users;
    int32_t n;
    int32_t *user, *len, *item;
    uint64_t *score;
    int64_t next;      /* the position the next batch must start at */
    int bad_order;     /* a batch came out of order */
    int fail_at;       /* return RK_E_IO from this call (0: never) */
    int calls;
} collected;

static inline void coll_init(collected *c, int64_t n_users, int32_t n)
{
    memset(c, 0, sizeof *c);
    c->n_users = n_users;
    c->n = n;
    size_t nu = (size_t)(n_users > 0 ? n_users : 1);
    c->user = calloc(nu, sizeof *c->user);
    c->len = calloc(nu, sizeof *c->len);
    c->item = calloc(nu * (size_t)n, sizeof *c->item);
    c->score = calloc(nu * (size_t)n, sizeof *c->score);
}

static inline void coll_free(collected *c)
{
    free(c->user);
    free(c->len);
    free(c->item);
    free(c->score);
}

static inline rk_status sink(void *ud, const rk_topn_batch *b, rk_error *err)
{
    collected *c = ud;
    if (++c->calls == c->fail_at) return rk_error_set(err, RK_E_IO, "sink failure %d", c->calls);
    if (b->first != c->next || b->first + b->count > c->n_users || b->n > c->n) {
        c->bad_order = 1;
        return RK_OK;
    }
    for (int64_t x = 0; x < b->count; x++) {
        int64_t at = b->first + x;
        c->user[at] = b->user[x];
        c->len[at] = b->len[x];
        for (int32_t r = 0; r < b->len[x]; r++) {
            c->item[at * c->n + r] = b->item[x * b->n + r];
            c->score[at * c->n + r] = b->score[x * b->n + r];
        }
    }
    c->next = b->first + b->count;
    return RK_OK;
}

/* 1 when two collections hold the same lists, byte for byte. */
static inline int coll_equal(const collected *a, const collected *b)
{
    if (a->next != b->next || a->n != b->n) return 0;
    for (int64_t u = 0; u < a->next; u++) {
        if (a->user[u] != b->user[u] || a->len[u] != b->len[u]) return 0;
        for (int32_t r = 0; r < a->len[u]; r++)
            if (a->item[u * a->n + r] != b->item[u * b->n + r] || a->score[u * a->n + r] != b->score[u * b->n + r])
                return 0;
    }
    return 1;
}

/* Hand-made signed lists for n_items items and capacity k (allocated
 * here): random distinct neighbours, each weight ±1/2 or ±1/4, so that many
 * scores cross 0 on their way (an item met again must not be counted twice)
 * and many end at exactly 0 or below (never recommended). */
/* Lists of n_items x k entries to random other items (no repeats), their
 * weights drawn from the np values of pal (the lists are not sorted: top-N
 * sums every entry). */
static inline void make_palette_lists(rk_lists *l, int32_t n_items, int32_t k, const float *pal, int np,
                                      unsigned long long *s)
{
    rk_error err;
    CU_ASSERT_FATAL(rk_lists_alloc(l, n_items, k, &err) == RK_OK);
    for (int32_t j = 0; j < n_items; j++) {
        int32_t len = 0;
        for (int32_t t = 0; t < 4 * k && len < k; t++) {
            const int32_t c = (int32_t)(rk_test_rand(s) % (unsigned)n_items);
            int dup = c == j;
            for (int32_t r = 0; r < len && !dup; r++) dup = l->nbr[(int64_t)j * k + r] == c;
            if (dup) continue;
            l->nbr[(int64_t)j * k + len] = c;
            l->sim[(int64_t)j * k + len] = pal[rk_test_rand(s) % (unsigned)np];
            l->support[(int64_t)j * k + len] = 1;
            len++;
        }
        l->len[j] = len;
    }
}

/* Signed lists (--negative yes): weights of ±1/2 and ±1/4. */
static inline void make_signed_lists(rk_lists *l, int32_t n_items, int32_t k, unsigned long long *s)
{
    static const float pal[] = {0.5f, -0.5f, 0.25f, -0.25f};
    make_palette_lists(l, n_items, k, pal, 4, s);
}

#endif /* RK_TEST_TOPN_UTIL_H */
