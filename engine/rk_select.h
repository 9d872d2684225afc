/* rk_select.h — bounded top-k selection with recknn's tie rule (prefix rk_topk_).
 *
 * Order (CONTRACT.md §3/§4): higher score first; equal scores by ascending index.
 * rk_topk keeps the best k of a stream in a binary min-heap whose root is the
 * worst kept entry, so a push costs O(1) when it loses to the root and
 * O(log k) otherwise.  Storage is the caller's: two arrays of k entries.
 * Every GPU selection kernel is checked against this one.
 */
#ifndef RK_SELECT_H
#define RK_SELECT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rk_topk {
    int32_t k;      /* capacity */
    int32_t n;      /* entries held (<= k) */
    double *score;  /* k entries, caller-owned */
    int32_t *idx;   /* k entries, caller-owned */
} rk_topk;

/* 1 when (sa, ia) ranks before (sb, ib). */
static inline int rk_topk_better(double sa, int32_t ia, double sb, int32_t ib)
{
    return sa > sb || (sa == sb && ia < ib);
}

/*! rk_topk_init() : an empty selection of capacity k (k >= 0) over the
 *  caller's arrays score[k] and idx[k]. */
static inline void rk_topk_init(rk_topk *h, int32_t k, double *score, int32_t *idx)
{
    h->k = k;
    h->n = 0;
    h->score = score;
    h->idx = idx;
}

static inline void rk_topk_sift_down_(rk_topk *h, int32_t pos)
{
    double s = h->score[pos];
    int32_t id = h->idx[pos];
    for (;;) {
        int32_t c = 2 * pos + 1;
        if (c >= h->n) break;
        /* the worse child goes up: the root is the worst entry */
        if (c + 1 < h->n && rk_topk_better(h->score[c], h->idx[c], h->score[c + 1], h->idx[c + 1]))
            c++;
        if (!rk_topk_better(s, id, h->score[c], h->idx[c])) break;
        h->score[pos] = h->score[c];
        h->idx[pos] = h->idx[c];
        pos = c;
    }
    h->score[pos] = s;
    h->idx[pos] = id;
}

/*! rk_topk_push() : offer (score, idx); kept if among the best k so far. */
static inline void rk_topk_push(rk_topk *h, double score, int32_t idx)
{
    if (h->n < h->k) {
        int32_t pos = h->n++;
        while (pos > 0) {
            int32_t parent = (pos - 1) / 2;
            if (!rk_topk_better(h->score[parent], h->idx[parent], score, idx)) break;
            h->score[pos] = h->score[parent];
            h->idx[pos] = h->idx[parent];
            pos = parent;
        }
        h->score[pos] = score;
        h->idx[pos] = idx;
    } else if (h->k > 0 && rk_topk_better(score, idx, h->score[0], h->idx[0])) {
        h->score[0] = score;
        h->idx[0] = idx;
        rk_topk_sift_down_(h, 0);
    }
}

/*! rk_topk_sort() : put the held entries in rank order (best first) in place.
 *  The selection is then no longer a heap: re-init before pushing again. */
void rk_topk_sort(rk_topk *h);

#ifdef __cplusplus
}
#endif
#endif /* RK_SELECT_H */
