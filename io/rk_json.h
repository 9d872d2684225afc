/* rk_json.h — JSON values of the run's files, built with jansson (prefix rk_json_).
 *
 * jansson holds the tree, escapes the strings and prints the numbers; this
 * module adds what the run's files need on top of it:
 *   - numbers printed as the CSV files print them (rk_out_double: 9
 *     significant digits): an integral value as an integer ("4", not
 *     jansson's "4.0"), a non-finite one as null (JSON has no nan or inf);
 *   - strings from any bytes: jansson takes UTF-8 only, so every byte that
 *     starts no valid UTF-8 sequence becomes U+FFFD;
 *   - unsigned 64-bit integers: jansson's json_int_t (int64) cannot hold
 *     those past 2^63, so they are kept as their digits and written bare;
 *   - a layout: one member of the top object per line, chosen arrays one
 *     element per line, and everything else on one line as jansson prints it
 *     ("key": value, ", " between items), so that line-based tools (grep,
 *     sed) keep working on the file.
 */
#ifndef RK_JSON_H
#define RK_JSON_H

#include <stdio.h>
#include <stdint.h>
#include <jansson.h>
#include "rk_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Nodes a layout marks, of each kind, at most. */
#define RK_JSON_MARKS 8

/* How rk_json_write lays a tree out beyond jansson's one-line form. */
typedef struct rk_json_layout {
    const json_t *lined[RK_JSON_MARKS]; /* arrays written one element per line */
    int n_lined;
    const json_t *bare[RK_JSON_MARKS];  /* strings of digits written without quotes */
    int n_bare;
} rk_json_layout;

/*! rk_json_num() : x as a JSON number with rk_out_double's digits (an
 *  integer when they are integral), or null when x is not finite.
 *  @return a new reference, NULL when out of memory. */
json_t *rk_json_num(double x);

/*! rk_json_str() : s as a JSON string, every byte of s that starts no valid
 *  UTF-8 sequence replaced by U+FFFD; null for NULL.
 *  @return a new reference, NULL when out of memory. */
json_t *rk_json_str(const char *s);

/*! rk_json_u64() : v as a JSON integer: jansson's own when v fits int64,
 *  else its digits, marked in ly to be written bare.
 *  @return a new reference, NULL when out of memory or ly is full. */
json_t *rk_json_u64(rk_json_layout *ly, uint64_t v);

/*! rk_json_lined() : mark the array a to be written one element per line
 *  (four spaces in, the closing bracket two).  @return a (its reference is
 *  the caller's still), NULL when a is NULL or ly is full (a is then released). */
json_t *rk_json_lined(rk_json_layout *ly, json_t *a);

/*! rk_json_write() : the object top on fp, "{", a member per line indented
 *  by two spaces, "}" and a line end; every value as jansson prints it
 *  without indentation, but for the nodes ly marks (ly may be NULL).  A
 *  failed write to fp is left in the stream's error indicator (rk_out_commit
 *  reports it with the file's name).  @return RK_OK, RK_E_ARG (top is no
 *  object), RK_E_NOMEM. */
rk_status rk_json_write(FILE *fp, const json_t *top, const rk_json_layout *ly, rk_error *err);

#ifdef __cplusplus
}
#endif
#endif /* RK_JSON_H */
