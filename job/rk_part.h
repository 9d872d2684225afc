/* rk_part.h — sharing work out among ranks or GPUs (prefix rk_part_).
 *
 * The item rows of the engines cost very different amounts: a row's work is
 * its co-rating pair updates (rk_knn_item_order's cost), and a popular item's
 * is thousands of times a rare one's.  Sharing items out by count leaves the
 * part with the popular items far behind; these functions share them out by
 * work.  Both are deterministic: the same costs and part count give the same
 * parts on every rank, so that ranks agree without talking.
 *
 * - rk_part_ranges(): contiguous ranges of items (in index order), each about
 *   an equal share of the total: a part's output is one slice of the files in
 *   item order.  Its largest load is at most total/parts plus the largest
 *   single cost.
 * - rk_part_lpt(): any items to any part, the heaviest first to the least
 *   loaded part (Graham's LPT rule): within 4/3 of the best possible largest
 *   load, for when the outputs are merged by index anyway.
 * Caller-owned arrays, sizes stated; nothing allocates except rk_part_lpt's
 * order scratch.
 */
#ifndef RK_PART_H
#define RK_PART_H

#include <stdint.h>
#include "rk_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! rk_part_ranges() : bounds[parts + 1] (bounds[0] = 0, bounds[parts] = n,
 *  non-decreasing): part p owns items [bounds[p], bounds[p+1]).  Part p ends
 *  at the first item whose prefix of costs reaches (p+1)/parts of the total
 *  (an item goes to the part that the middle of its cost falls in), so no
 *  part exceeds total/parts by more than one item's cost.  load (may be NULL)
 *  gets each part's total.  @return RK_OK, RK_E_ARG (parts < 1, n < 0, a
 *  negative cost). */
rk_status rk_part_ranges(const int64_t *cost, int32_t n, int32_t parts, int32_t *bounds, int64_t *load,
                         rk_error *err);

/*! rk_part_lpt() : owner[n] = the part of each item: items by descending cost
 *  (ties by ascending index), each to the part with the smallest load so far
 *  (ties by the lowest part).  load (may be NULL) gets each part's total.
 *  @return RK_OK, RK_E_ARG (as rk_part_ranges), RK_E_NOMEM. */
rk_status rk_part_lpt(const int64_t *cost, int32_t n, int32_t parts, int32_t *owner, int64_t *load, rk_error *err);

/*! rk_part_balance() : the largest load over the mean load (1 = perfect; 0
 *  when every load is 0). */
double rk_part_balance(const int64_t *load, int32_t parts);

#ifdef __cplusplus
}
#endif
#endif /* RK_PART_H */
