/* rk_rbc_internal.h — what rk_rbc.c and rk_rbc_recall.c share (engine/ only). */
#ifndef RK_RBC_INTERNAL_H
#define RK_RBC_INTERNAL_H

#include <stdint.h>
#include "rk_rbc.h"

/* Hash salts: the representatives' draw and the recall's sample. */
#define RK_RBC_SALT_REPS UINT64_C(0x52424352455053A1)
#define RK_RBC_SALT_SAMPLE UINT64_C(0x52424353414D50B2)


static inline uint64_t rk_rbc_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* A uniform number in (0, 1] from (seed, salt, i). */
static inline double rk_rbc_hash_unit(uint64_t seed, uint64_t salt, uint64_t i)
{
    uint64_t h = rk_rbc_mix64(rk_rbc_mix64(seed ^ salt) + rk_rbc_mix64(i + UINT64_C(0x9E3779B97F4A7C15)));
    return (double)((h >> 11) + 1) * 0x1.0p-53;
}

/* One run's state. */
typedef struct rk_rbc_ctx {
    const rk_model *m;
    int32_t R, P, T;       /* resolved */
    int all_balls;         /* P >= R: every ball is visited */
    int64_t n_placed;      /* items above the tail */
    double scale;          /* grid scale of the units, 0 for raw values */
    rk_sim_params near, sp;
    double *vals;          /* by_item.nnz values in units */
    double *uvals;         /* by_user.nnz values in units */
    double *ncnt, *nsq;    /* whole-vector counts and squared norms */
    int32_t *reps;         /* R items, ascending */
    int64_t *rptr;         /* n_users + 1: user -> representatives they rated */
    int32_t *rrep;         /* representative index (ascending within a user) */
    double *rval;          /* the user's value for it */
    int32_t P_stored;      /* probes kept per item: P, or 1 when every ball is visited */
    int32_t *probe;        /* n_items x P_stored nearest representatives, best first */
    int32_t *nprobe;       /* n_items: how many (those with nearness > 0) */
    int32_t *owner;        /* n_items: the nearest representative, or RK_RBC_ORPHAN/TAIL/EMPTY */
    rk_rbc_balls b;        /* the balls and the index of the items in no ball */
    int64_t entry_reads, ball_pairs, rater_pairs;
} rk_rbc_ctx;

/* R, P, T, values, norms and the representatives.  On failure *c holds nothing. */
rk_status rk_rbc_ctx_init(rk_rbc_ctx *c, const rk_model *m, const rk_knn_opts *o, const rk_rbc_opts *r,
                          rk_error *err);
void rk_rbc_ctx_free(rk_rbc_ctx *c);
void rk_rbc_fill_stats(const rk_rbc_ctx *c, rk_rbc_stats *st);

#endif /* RK_RBC_INTERNAL_H */
