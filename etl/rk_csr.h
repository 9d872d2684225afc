/* rk_csr.h — rating triples and compressed sparse rows (prefix rk_csr_, rk_triples_).
 *
 * Ratings travel as rk_triples (dense user/item indices, file order) from the
 * loader to rk_triples_dedupe (duplicate policy of CONTRACT.md §1) and then to
 * rk_csr_build, which makes the user-major matrix; rk_csr_transpose makes the
 * item-major one (CSC of the same matrix).  Both are counting sorts, O(nnz + n).
 * rk_triples_dedupe_csr (rk_sort.c) does the first two in one sort and is what
 * the job uses; rk_triples_dedupe and rk_csr_build stay as its reference.
 *
 * Ownership: every array in these structs is malloc'ed by the function that
 * fills the struct and freed by rk_csr_free / rk_triples_free, which accept
 * NULL and zeroed structs.
 */
#ifndef RK_CSR_H
#define RK_CSR_H

#include <stdint.h>
#include <stddef.h>
#include "rk_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A sparse matrix in CSR form. Column indices are strictly ascending within
 * a row (no duplicates), ptr[0] == 0, ptr[n_rows] == nnz. */
typedef struct rk_csr {
    int32_t n_rows;
    int32_t n_cols;
    int64_t nnz;
    int64_t *ptr; /* n_rows + 1 row offsets */
    int32_t *idx; /* nnz column indices */
    float *val;   /* nnz values */
} rk_csr;

/* Ratings as parallel arrays.  `time` is NULL when timestamps were not kept. */
typedef struct rk_triples {
    int64_t n;
    int32_t *user;
    int32_t *item;
    float *rating;
    int64_t *time;
} rk_triples;

typedef enum rk_dup_policy {
    RK_DUP_LAST = 0, /* the last rating in file order wins (default) */
    RK_DUP_FIRST,    /* the first one wins */
    RK_DUP_MEAN,     /* the mean of all of them */
    RK_DUP_ERROR     /* a duplicate is an error (RK_E_DUPLICATE) */
} rk_dup_policy;

/* What rk_triples_dedupe found. */
typedef struct rk_dup_report {
    int64_t n_removed;   /* triples removed as duplicates */
    int32_t first_user;  /* the first duplicated pair found (-1 if none) */
    int32_t first_item;
} rk_dup_report;

/*! rk_dup_policy_parse() : "last", "first", "mean" or "error" into *out.
 *  @return RK_OK, or RK_E_ARG for any other name. */
rk_status rk_dup_policy_parse(const char *name, rk_dup_policy *out);
const char *rk_dup_policy_name(rk_dup_policy p);

/*! rk_triples_dedupe() : resolve duplicate (user, item) pairs in place by
 *  `policy`.  The survivors keep file order: under LAST a pair sits where its
 *  last occurrence was, under FIRST and MEAN where its first one was; for MEAN
 *  the rating is the mean and the time that of the first occurrence.
 *  Indices must be in [0, n_users) and [0, n_items).
 *  @return RK_OK; RK_E_DUPLICATE under RK_DUP_ERROR when a pair repeats (t is
 *  unchanged and rep->first_user/first_item name it); RK_E_NOMEM. */
rk_status rk_triples_dedupe(rk_triples *t, int32_t n_users, int32_t n_items,
                            rk_dup_policy policy, rk_dup_report *rep,
                            rk_error *err);

/*! rk_triples_alloc() : arrays for n triples (time too when with_time).
 *  @return RK_OK or RK_E_NOMEM (t then holds nothing). */
rk_status rk_triples_alloc(rk_triples *t, int64_t n, int with_time, rk_error *err);
void rk_triples_free(rk_triples *t);

/*! rk_csr_build() : the n_users x n_items user-major matrix of `t`, which must
 *  hold no duplicate pairs (rk_triples_dedupe first).  Parallel (OpenMP).
 *  @return RK_OK; RK_E_DUPLICATE if a pair repeats; RK_E_ARG for an index out
 *  of range; RK_E_NOMEM. */
rk_status rk_csr_build(const rk_triples *t, int32_t n_users, int32_t n_items,
                       rk_csr *out, rk_error *err);

/* Tuning and test knobs of rk_triples_dedupe_csr; zero means the default.
 * Tests set them to reach every path with small data. */
typedef struct rk_sort_opts {
    int threads;      /* threads; 0: OpenMP's default (one below 65536 ratings) */
    int64_t bucket;   /* ratings per bucket aimed at (default 16384) */
    int digit_bits;   /* bits per radix pass inside a bucket, 1..11 (default 11) */
    int generic;      /* 1: take the slow reference route (rk_triples_dedupe,
                         then rk_csr_build), as when a bucket's (user, item)
                         keys would not fit in 32 bits (beyond about 2^24
                         users x 2^24 items) */
} rk_sort_opts;

/*! rk_triples_dedupe_csr() : rk_triples_dedupe and rk_csr_build in one sort.
 *  The ratings are sorted by (user, item, file position) once; duplicates are
 *  then neighbours, resolved by `policy` exactly as rk_triples_dedupe does
 *  (t keeps the survivors in file order; under MEAN t's rating is the mean;
 *  rep as there), and the survivors in sorted order are the CSR.
 *  by_user: receives the n_users x n_items matrix of the survivors, equal to
 *  rk_csr_build's; NULL: only resolve duplicates.
 *  pos: NULL, or receives a malloc'ed array of by_user->nnz entries: pos[p]
 *  is the index in t (after the call) of the rating stored at by_user entry
 *  p, so that a caller can drop ratings by their file position from the
 *  matrix without sorting again (the holdout split).  Needs by_user.
 *  opts: NULL for the defaults.
 *  Cost: O(n + n_users) time in a few parallel passes; the sort runs in the
 *  output arrays (12 bytes per rating, 20 with pos, allocated even when
 *  by_user is NULL), plus, only when duplicates are removed, new compacted
 *  copies of the rows and of t.
 *  @return RK_OK; RK_E_ARG (unknown policy, negative size, index out of range:
 *  the same messages as rk_triples_dedupe); RK_E_DUPLICATE under
 *  RK_DUP_ERROR (t unchanged, rep names the first pair repeated in file
 *  order); RK_E_NOMEM (t may then hold means already).  On failure
 *  *by_user is empty and *pos NULL. */
rk_status rk_triples_dedupe_csr(rk_triples *t, int32_t n_users, int32_t n_items,
                                rk_dup_policy policy, const rk_sort_opts *opts,
                                rk_csr *by_user, int64_t **pos,
                                rk_dup_report *rep, rk_error *err);

/* What a sort made elsewhere (the GPU, rk_gpu_csr_build) found of repeated
 * pairs, for rk_triples_resolve to apply to the triples it sorted: the
 * ratings removed, and under RK_DUP_MEAN the means written where each
 * pair's first rating was.  Arrays malloc'ed by that sort; free them with
 * rk_dup_found_free. */
typedef struct rk_dup_found {
    uint64_t *drop;     /* bit k of drop[k / 64]: rating k removed; NULL when none */
    int64_t removed;    /* bits set */
    int64_t n_means;    /* RK_DUP_MEAN: the pairs rated more than once */
    int64_t *mean_pos;  /* their first ratings' positions, any order */
    float *mean_val;    /* and their means */
} rk_dup_found;

/*! rk_triples_resolve() : t as rk_triples_dedupe leaves it, from what a sort
 *  elsewhere found: the means written, then the removed ratings taken out,
 *  the others keeping file order (out of place, in parallel).  f->removed
 *  must be the bits set in f->drop.  @return RK_OK, RK_E_ARG (a position
 *  outside t), RK_E_NOMEM (t then unchanged but for the means). */
rk_status rk_triples_resolve(rk_triples *t, const rk_dup_found *f, rk_error *err);
void rk_dup_found_free(rk_dup_found *f);

/*! rk_csr_transpose() : out = aᵀ (n_cols x n_rows), rows sorted.
 *  @return RK_OK or RK_E_NOMEM. */
rk_status rk_csr_transpose(const rk_csr *a, rk_csr *out, rk_error *err);

/*! rk_csr_column_offsets() : ptr[a->n_cols + 1] = the row offsets of aᵀ
 *  (each column's entries counted, in parallel), without building it.
 *  @return RK_OK or RK_E_NOMEM. */
rk_status rk_csr_column_offsets(const rk_csr *a, int64_t *ptr, rk_error *err);

/*! rk_csr_row_share() : rows [*r0, *r1) of share th of T: contiguous, about
 *  a->nnz / T entries each (the parallel passes over a's entries). */
void rk_csr_row_share(const rk_csr *a, int th, int T, int32_t *r0, int32_t *r1);

/*! rk_csr_entry() : the position of column col in row row of a (rows
 *  sorted, no column twice) by binary search, or -1 (not there, or a row out
 *  of range). */
int64_t rk_csr_entry(const rk_csr *a, int32_t row, int32_t col);

/*! rk_csr_longest_row() : the most entries a row of a has (0 for none). */
int64_t rk_csr_longest_row(const rk_csr *a);

/*! rk_csr_check() : verify the invariants above. @return 0 when they hold,
 *  else -1 with a reason written to why (cap bytes; why may be NULL). */
int rk_csr_check(const rk_csr *a, char *why, size_t cap);

void rk_csr_free(rk_csr *a);

#ifdef __cplusplus
}
#endif
#endif /* RK_CSR_H */
