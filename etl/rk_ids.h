/* rk_ids.h — raw id <-> dense index maps (prefix rk_ids_).
 *
 * IDs are opaque byte strings.  Dense indices are assigned in ascending raw-id
 * order: numeric order when every id of the map is a canonical integer
 * (optional '-', no leading zeros, fits int64), byte order otherwise (CONTRACT.md §1).
 * Users and items have separate maps.  A map is built by the loader over all
 * files of a run (training and test together), so one index means one id.
 */
#ifndef RK_IDS_H
#define RK_IDS_H

#include <stdint.h>
#include <stddef.h>
#include "rk_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The longest id accepted, in bytes; a longer field is a bad line. */
#define RK_ID_MAX 255

typedef struct rk_idmap rk_idmap; /* opaque */

/*! rk_ids_count() : @return the number of distinct ids (0 for NULL). */
int32_t rk_ids_count(const rk_idmap *m);

/*! rk_ids_numeric() : @return 1 when the ids are ordered as integers, else 0. */
int rk_ids_numeric(const rk_idmap *m);

/*! rk_ids_values() : @return the ids of a numeric map, ascending (index i's
 *  id is [i]; rk_ids_count of them), or NULL for a map of byte strings. */
const int64_t *rk_ids_values(const rk_idmap *m);

/*! rk_ids_format() : write the raw id of dense index i into buf (cap bytes,
 *  always NUL-terminated when cap > 0; RK_ID_MAX + 1 always suffices).
 *  @return the id's length in bytes, or -1 when i is out of range. */
int rk_ids_format(const rk_idmap *m, int32_t i, char *buf, size_t cap);

/*! rk_ids_find() : @return the dense index of the raw id s[0..len), or -1. */
int32_t rk_ids_find(const rk_idmap *m, const char *s, size_t len);

/*! rk_ids_from_strings() : a map of the given ids (duplicates allowed; each
 *  distinct id gets one index).  Used by tests and by callers that have ids
 *  in hand.  @return RK_OK, RK_E_ARG (empty or overlong id), RK_E_NOMEM. */
rk_status rk_ids_from_strings(const char *const *ids, int64_t n, rk_idmap **out,
                              rk_error *err);

void rk_ids_free(rk_idmap *m);

#ifdef __cplusplus
}
#endif
#endif /* RK_IDS_H */
