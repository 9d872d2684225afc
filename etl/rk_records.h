/* rk_records.h — the small files of ids a run is given (--users, --items,
 * --queries), read as CSV records through libcsv (prefix rk_records_).
 *
 * The same quoting rules as a rating file and as recknn's own outputs
 * (RFC 4180): a field may be enclosed in double quotes, and then holds
 * commas, doubled quotes and line breaks; spaces and tabs around an
 * unquoted field are dropped.  A UTF-8 byte-order mark at the start is
 * skipped; lines end with LF or CRLF; blank lines are skipped.  The
 * delimiter is a comma, or a tab when the first record's line holds a tab
 * and no comma.  A line longer than RK_RECORDS_LINE_MAX bytes, a record of
 * more than RK_RECORDS_MAXF fields, a field longer than RK_ID_MAX bytes and
 * a NUL byte are errors "FILE:LINE: reason" (RK_E_PARSE), so that reading
 * an endless or binary file stops early with bounded memory.
 */
#ifndef RK_RECORDS_H
#define RK_RECORDS_H

#include <stddef.h>
#include <stdint.h>
#include "rk_status.h"
#include "rk_ids.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of one line at most (a record over several lines: each of them). */
#define RK_RECORDS_LINE_MAX ((size_t)1 << 20)
/* Fields of one record at most. */
#define RK_RECORDS_MAXF 8

/* One record: n fields (f[k], len[k] bytes, not NUL-terminated), starting
 * on 1-based line `line`. */
typedef struct rk_record {
    int n;
    const char *f[RK_RECORDS_MAXF];
    size_t len[RK_RECORDS_MAXF];
    int64_t line;
} rk_record;

/* Called for each record in file order; a status other than RK_OK stops
 * the reading and is returned. */
typedef rk_status (*rk_records_fn)(void *ud, const rk_record *r, rk_error *err);

/*! rk_records_read() : read path ("-": standard input) record by record.
 *  *lines (may be NULL) gets the lines read.  @return RK_OK, RK_E_IO,
 *  RK_E_PARSE, RK_E_NOMEM, or fn's status. */
rk_status rk_records_read(const char *path, rk_records_fn fn, void *ud, int64_t *lines, rk_error *err);


#ifdef __cplusplus
}
#endif
#endif /* RK_RECORDS_H */
