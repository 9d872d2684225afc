/* rk_topn_internal.h — what the top-N engines share (engine/ only): the request
 * (every user with a training rating, or the caller's list), the batch size,
 * and a bounded heap of fixed-point scores with CONTRACT.md §5's tie rule.  rk_select.h's
 * rk_topk holds doubles, which would merge fixed-point scores above 2^53. */
#ifndef RK_TOPN_INTERNAL_H
#define RK_TOPN_INTERNAL_H

#include <stdint.h>
#include "rk_topn.h"

/*! rk_topn_batch_users() : users per sink call for lists of n: o->batch, or
 *  about 32 MiB of results and at least 1024 users; at most n_users (>= 1). */
int64_t rk_topn_batch_users(const rk_topn_opts *o, int32_t n, int64_t n_users);

/* Per-thread state of a CPU top-N scorer: acc and touched hold n_items
 * entries (acc zero between users), rated n_items bits (clear between users;
 * NULL unless asked for), hs and hi the heap of N. */
typedef struct rk_topn_ws {
    uint64_t *acc;
    int32_t *touched;
    uint64_t *rated;
    uint64_t *hs;
    int32_t *hi;
} rk_topn_ws;

/* Scores user u from the lists l (their similarities in fixed point: qw,
 * l->n_items x l->k) into out_s/out_i; @return the length, *updates grows
 * by the entries read. */
typedef int32_t (*rk_topn_user_fn)(const rk_model *m, const rk_lists *l, const uint64_t *qw, int32_t n, int32_t u,
                                   rk_topn_ws *w, uint64_t *out_s, int32_t *out_i, int64_t *updates);

/* The CPU engines' shared driver after their checks: N capped at the item
 * count, the request's users, the lists' weights in fixed point once,
 * batches of users scored over OpenMP and handed to the sink, the stats
 * (wall time from t_call).  who prefixes "top-N" in the messages ("" or
 * "user "); want_rated: the workspaces get their rated bits. */
rk_status rk_topn_run_cpu(const rk_model *m, const rk_lists *l, const rk_topn_opts *o, int want_rated, const char *who,
                          rk_topn_user_fn score, rk_topn_stats *st, double t_call, rk_error *err);

/* ---- a bounded heap of (score, item) with the tie rule; the root is the worst kept ---- */

typedef struct rk_topn_heap {
    int32_t cap, n;
    uint64_t *s;
    int32_t *i;
} rk_topn_heap;

static inline int rk_topn_better(uint64_t sa, int32_t ia, uint64_t sb, int32_t ib)
{
    return sa > sb || (sa == sb && ia < ib);
}

static inline void rk_topn_heap_down(rk_topn_heap *h, int32_t pos)
{
    uint64_t s = h->s[pos];
    int32_t id = h->i[pos];
    for (;;) {
        int32_t c = 2 * pos + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && rk_topn_better(h->s[c], h->i[c], h->s[c + 1], h->i[c + 1])) c++;
        if (!rk_topn_better(s, id, h->s[c], h->i[c])) break;
        h->s[pos] = h->s[c];
        h->i[pos] = h->i[c];
        pos = c;
    }
    h->s[pos] = s;
    h->i[pos] = id;
}

static inline void rk_topn_heap_push(rk_topn_heap *h, uint64_t s, int32_t id)
{
    if (h->n < h->cap) {
        int32_t pos = h->n++;
        while (pos > 0) {
            int32_t parent = (pos - 1) / 2;
            if (!rk_topn_better(h->s[parent], h->i[parent], s, id)) break;
            h->s[pos] = h->s[parent];
            h->i[pos] = h->i[parent];
            pos = parent;
        }
        h->s[pos] = s;
        h->i[pos] = id;
    } else if (rk_topn_better(s, id, h->s[0], h->i[0])) {
        h->s[0] = s;
        h->i[0] = id;
        rk_topn_heap_down(h, 0);
    }
}

/* Empty the heap into out_s/out_i best first; @return the count. */
static inline int32_t rk_topn_heap_drain(rk_topn_heap *h, uint64_t *out_s, int32_t *out_i)
{
    int32_t n = h->n;
    for (int32_t t = n - 1; t >= 0; t--) { /* pop the worst into the last free place */
        out_s[t] = h->s[0];
        out_i[t] = h->i[0];
        h->n--;
        if (h->n > 0) {
            h->s[0] = h->s[h->n];
            h->i[0] = h->i[h->n];
            rk_topn_heap_down(h, 0);
        }
    }
    return n;
}

#endif /* RK_TOPN_INTERNAL_H */
