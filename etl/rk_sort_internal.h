/* rk_sort_internal.h — what rk_sort.c and rk_sort_drop.c share (not installed). */
#ifndef RK_SORT_INTERNAL_H
#define RK_SORT_INTERNAL_H

#include "rk_csr.h"

/* Survivors before each 64-rating word of the drop bitmap: before[w] for
 * the nw words, summed on nt threads. */
rk_status rk_sort_drop_prefix(const uint64_t *drop, int64_t nw, int64_t *before, int nt, rk_error *err);

/* The ratings of t whose bit is set in drop removed, file order kept (out
 * of place, in parallel: each word knows where its survivors go from
 * before); kept = the survivors. */
rk_status rk_sort_compact(rk_triples *t, const uint64_t *drop, const int64_t *before, int64_t kept, int nt,
                          rk_error *err);

#endif
