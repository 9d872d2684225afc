/* rk_pairs.h — a file of (user, item) pairs to predict (prefix rk_pairs_).
 * Used by --queries.
 *
 * The file is read as CSV records (rk_records.h: RFC 4180 quoting, a BOM
 * skipped, blank lines skipped, a comma or a tab between the fields), each
 * holding exactly USER,ITEM.  A first record that names a user and an item
 * column (user,item; userId,movieId,rating,timestamp; ...) and whose first
 * two fields are not a pair of known ids is a header: the pairs are then
 * read from the columns it names, every record holding as many fields as
 * it does (a rating file with its header works).  Ids are mapped through the given maps; an
 * unknown id maps to -1 and is counted, not an error (the prediction then
 * falls back as CONTRACT.md §4 says).  A record of another field count, an
 * empty id, an id longer than RK_ID_MAX bytes or a NUL byte is an
 * error "FILE:LINE: reason" (RK_E_PARSE).  The raw ids are kept for the
 * output.
 */
#ifndef RK_PAIRS_H
#define RK_PAIRS_H

#include <stdint.h>
#include "rk_status.h"
#include "rk_ids.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rk_pairs {
    int64_t n;              /* pairs read */
    int32_t *user, *item;   /* n dense indices, -1 for an unknown id */
    int64_t *raw_off;       /* 2n + 1 offsets into raw: pair t's user id is
                               raw[raw_off[2t] .. raw_off[2t+1]), its item id next */
    char *raw;
    int64_t unknown_users, unknown_items; /* pairs with an unknown user / item */
    int64_t first_unknown_line;           /* 0 when every id is known */
    int64_t lines;                        /* lines read, header and blanks included */
} rk_pairs;

/*! rk_pairs_read() : read path ("-" is standard input).  *out is owned by
 *  the caller (rk_pairs_free).  @return RK_OK, RK_E_IO, RK_E_PARSE,
 *  RK_E_NOMEM; on failure *out holds nothing. */
rk_status rk_pairs_read(const char *path, const rk_idmap *users, const rk_idmap *items, rk_pairs *out,
                        rk_error *err);

void rk_pairs_free(rk_pairs *p);

#ifdef __cplusplus
}
#endif
#endif /* RK_PAIRS_H */
