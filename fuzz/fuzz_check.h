/* fuzz_check.h — invariant checks shared by the fuzz targets (prefix fz_).
 *
 * A fuzz target calls these after the code under test said RK_OK: any
 * violation is a bug in that code, so the check prints what failed and
 * abort()s, which libFuzzer reports as a crash and keeps the input.
 * Independent of etl/rk_csr_check on purpose: the checker must not share
 * the checked code's mistakes.
 */
#ifndef FUZZ_CHECK_H
#define FUZZ_CHECK_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rk_csr.h"

static void fz_fail(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;
static void fz_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fuzz invariant violated: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

#define FZ_REQUIRE(cond, ...)                                                      \
    do {                                                                           \
        if (!(cond)) fz_fail(__VA_ARGS__);                                         \
    } while (0)

/* a is an n_rows x n_cols CSR: ptr[0] == 0, ptr monotone, ptr[n_rows] == nnz,
 * column indices in range and strictly ascending in a row, values finite. */
static void fz_check_csr(const char *what, const rk_csr *a, int32_t n_rows, int32_t n_cols)
{
    FZ_REQUIRE(a->n_rows == n_rows && a->n_cols == n_cols, "%s: %d x %d, expected %d x %d", what,
               a->n_rows, a->n_cols, n_rows, n_cols);
    FZ_REQUIRE(a->nnz >= 0, "%s: nnz %lld", what, (long long)a->nnz);
    FZ_REQUIRE(a->ptr != NULL, "%s: no ptr", what);
    FZ_REQUIRE(a->nnz == 0 || (a->idx != NULL && a->val != NULL), "%s: no idx/val", what);
    FZ_REQUIRE(a->ptr[0] == 0, "%s: ptr[0] = %lld", what, (long long)a->ptr[0]);
    for (int32_t r = 0; r < n_rows; r++) {
        FZ_REQUIRE(a->ptr[r] <= a->ptr[r + 1], "%s: ptr[%d] = %lld > ptr[%d] = %lld", what, r,
                   (long long)a->ptr[r], r + 1, (long long)a->ptr[r + 1]);
        for (int64_t p = a->ptr[r]; p < a->ptr[r + 1]; p++) {
            FZ_REQUIRE(p < a->nnz, "%s: row %d runs past nnz", what, r);
            FZ_REQUIRE(a->idx[p] >= 0 && a->idx[p] < n_cols, "%s: row %d, column %d out of range", what, r,
                       a->idx[p]);
            FZ_REQUIRE(p == a->ptr[r] || a->idx[p - 1] < a->idx[p], "%s: row %d not strictly ascending at %lld",
                       what, r, (long long)p);
            FZ_REQUIRE(isfinite(a->val[p]), "%s: row %d, value not finite", what, r);
        }
    }
    FZ_REQUIRE(a->ptr[n_rows] == a->nnz, "%s: ptr[n] = %lld, nnz = %lld", what, (long long)a->ptr[n_rows],
               (long long)a->nnz);
}

/* t is the transpose of a (both already checked as CSR): the same entries,
 * counted per column of a and found, with their values, in a's rows. */
static void fz_check_transpose(const char *what, const rk_csr *a, const rk_csr *t)
{
    FZ_REQUIRE(t->n_rows == a->n_cols && t->n_cols == a->n_rows && t->nnz == a->nnz,
               "%s: shape %d x %d (%lld) against %d x %d (%lld)", what, t->n_rows, t->n_cols,
               (long long)t->nnz, a->n_rows, a->n_cols, (long long)a->nnz);
    int64_t *next = malloc(((size_t)t->n_rows + 1) * sizeof *next);
    if (next == NULL) return; /* no memory to check with: not a finding */
    memcpy(next, t->ptr, (size_t)t->n_rows * sizeof *next);
    /* walking a row by row visits each column of t in ascending row order,
     * which is the order t's rows must hold them in */
    for (int32_t r = 0; r < a->n_rows; r++)
        for (int64_t p = a->ptr[r]; p < a->ptr[r + 1]; p++) {
            int32_t c = a->idx[p];
            int64_t q = next[c]++;
            FZ_REQUIRE(q < t->ptr[c + 1], "%s: column %d holds fewer entries than the transpose says", what, c);
            FZ_REQUIRE(t->idx[q] == r && t->val[q] == a->val[p], "%s: entry (%d, %d) differs in the transpose",
                       what, r, c);
        }
    free(next);
}

#endif /* FUZZ_CHECK_H */
