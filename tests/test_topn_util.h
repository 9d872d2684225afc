/* test_topn_util.h — a top-N sink that collects every batch, shared by the
 * CPU and GPU top-N tests. */
#ifndef RK_TEST_TOPN_UTIL_H
#define RK_TEST_TOPN_UTIL_H

#include <stdlib.h>
#include <string.h>
#include "rk_topn.h"

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

#endif /* RK_TEST_TOPN_UTIL_H */
