/* test_rbc_util.h — data and list comparisons shared by test_rbc and test_gpu_rbc. */
#ifndef RK_TEST_RBC_UTIL_H
#define RK_TEST_RBC_UTIL_H

#include "rk_knn.h"
#include "rk_model.h"
#include "test_util.h"

#include <string.h>

typedef enum { RBC_VAL_IMPLICIT, RBC_VAL_HALF, RBC_VAL_REAL, RBC_VAL_TIES } rbc_val_kind;

/* nu users x ni items.  Users and items fall into `groups` blocks (taste): a
 * user rates an item of their block with probability `density`, another one
 * with density / 8.  The last item has no rater, the one before has exactly
 * one (when ni > 4), so that every model has an empty item and a tail. */
static inline void rbc_make_data(rk_triples *t, int nu, int ni, int groups, double density, rbc_val_kind vk,
                                 unsigned long long seed)
{
    unsigned long long s = seed;
    rk_triples_alloc(t, (int64_t)nu * ni + 1, 0, NULL);
    int64_t n = 0;
    for (int u = 0; u < nu; u++) {
        for (int i = 0; i < ni; i++) {
            if (ni > 4 && i == ni - 1) continue;
            const int same = groups <= 1 || u % groups == i % groups;
            if (ni > 4 && i == ni - 2) {
                if (u != nu / 2) continue;
            } else if (rk_test_uniform(&s) >= (same ? density : density / 8.0)) {
                continue;
            }
            double v;
            switch (vk) {
            case RBC_VAL_IMPLICIT: v = 1.0; break;
            case RBC_VAL_HALF: v = 0.5 * (double)(1 + rk_test_rand(&s) % 10); break;
            case RBC_VAL_TIES: v = (double)(1 + rk_test_rand(&s) % 2); break;
            default: v = 1.0 + 4.0 * rk_test_uniform(&s); break;
            }
            t->user[n] = u;
            t->item[n] = i;
            t->rating[n] = (float)v;
            n++;
        }
    }
    t->n = n;
}

/* 1 when the two lists are the same entry for entry (similarities as
 * floats, supports), else 0 with the first difference on stderr. */
static inline int rbc_lists_equal(const rk_lists *a, const rk_lists *b, const char *what)
{
    if (a->n_items != b->n_items || a->k != b->k) return 0;
    for (int32_t i = 0; i < a->n_items; i++) {
        if (a->len[i] != b->len[i]) {
            fprintf(stderr, "%s: item %d has %d and %d neighbours\n", what, i, a->len[i], b->len[i]);
            return 0;
        }
        for (int32_t r = 0; r < a->len[i]; r++) {
            const size_t at = (size_t)i * (size_t)a->k + (size_t)r;
            if (a->nbr[at] != b->nbr[at] || a->sim[at] != b->sim[at] || a->support[at] != b->support[at]) {
                fprintf(stderr, "%s: item %d rank %d: (%d, %.9g, %d) and (%d, %.9g, %d)\n", what, i, r, a->nbr[at],
                        a->sim[at], a->support[at], b->nbr[at], b->sim[at], b->support[at]);
                return 0;
            }
        }
    }
    return 1;
}

#endif /* RK_TEST_RBC_UTIL_H */
