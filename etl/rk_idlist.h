/* rk_idlist.h — a file of raw ids, one a line, mapped to dense indices
 * (prefix rk_idlist_).  Used by --users and --items.
 *
 * The file is read as CSV records (rk_records.h: RFC 4180 quoting, a BOM
 * skipped, blank lines skipped, spaces and tabs around an unquoted id
 * dropped), each holding one id.  A first record that names a user or item
 * column (user, userId, movieId, ...) and is not an id of the map is a
 * header and skipped.  An id the map does not hold is counted (and the
 * first one remembered with its line), not an error; an id that repeats is
 * served once, at its first line.  A record of several fields (an unquoted
 * comma), an id longer than RK_ID_MAX bytes or a NUL byte is an error
 * "FILE:LINE: reason" (RK_E_PARSE).
 */
#ifndef RK_IDLIST_H
#define RK_IDLIST_H

#include <stdint.h>
#include "rk_status.h"
#include "rk_ids.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rk_idlist_report {
    int64_t lines;          /* lines read, blank ones included */
    int header;             /* 1: the first record was a header */
    int64_t ids;            /* ids read (not blank) */
    int64_t unknown;        /* ids the map does not hold */
    int64_t repeated;       /* ids seen on an earlier line */
    int64_t first_unknown_line;            /* 0 when none */
    char first_unknown[RK_ID_MAX + 1];
} rk_idlist_report;

/*! rk_idlist_read() : read path ("-" is standard input) and map its ids
 *  through m.  *out (malloc'ed, free() it) gets the dense indices of the
 *  known ids in file order without repeats, *n_out their number.
 *  @return RK_OK, RK_E_IO (cannot open or read), RK_E_PARSE (a bad line),
 *  RK_E_NOMEM.  On failure *out is NULL. */
rk_status rk_idlist_read(const char *path, const rk_idmap *m, int32_t **out, int64_t *n_out, rk_idlist_report *rep,
                         rk_error *err);

#ifdef __cplusplus
}
#endif
#endif /* RK_IDLIST_H */
