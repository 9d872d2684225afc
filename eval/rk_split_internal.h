/* rk_split_internal.h — what the split module's files share (eval/ only):
 * the counter-based keys of every split, so that a seed means the same draw
 * order for the holdout, the folds and the per-user split. */
#ifndef RK_SPLIT_INTERNAL_H
#define RK_SPLIT_INTERNAL_H

#include <stdint.h>
#include "rk_split.h"

/* splitmix64's finaliser */
static inline uint64_t rk_split_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* The key of rating t under a seed's key. */
static inline uint64_t rk_split_row_key(uint64_t seed_key, int64_t t)
{
    return rk_split_mix64(seed_key + 0x9E3779B97F4A7C15ULL * (uint64_t)(t + 1));
}

/* The key of a seed: every split of one seed starts from it. */
static inline uint64_t rk_split_seed_key(uint64_t seed) { return rk_split_mix64(seed ^ 0x243F6A8885A308D3ULL); }

/* A rating's key and position: (key, t) orders the ratings totally, so a
 * draw is the same for every thread count. */
typedef struct rk_split_keyed {
    uint64_t key;
    int64_t t;
} rk_split_keyed;

static inline int rk_split_keyed_cmp(const void *a, const void *b)
{
    const rk_split_keyed *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->t > y->t) - (x->t < y->t);
}

#endif /* RK_SPLIT_INTERNAL_H */
