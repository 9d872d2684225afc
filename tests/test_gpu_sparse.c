/* The device transpose (cusparseCsr2cscEx2) against the host's
 * rk_csr_transpose: every array equal, bit for bit, on random matrices with
 * fixed seeds and the edge shapes (empty rows and columns, one row, one
 * column, a dense block, no entries, no rows or no columns).  The SpGEMM
 * top-N route is tested through rk_gpu_topn against the CPU engine.
 * Exits 77 (skipped) when no GPU is usable. */
#include "rk_gpu.h"
#include "rk_csr.h"
#include "test_util.h"
#include "test_gpu_main.h"

#include <string.h>

/* A random n_rows x n_cols CSR: each cell present with probability density,
 * except the empty rows (every empty_every-th, 0: none) and the last column
 * when drop_last_col; row 0 is full when full_row0.  Ratings on a half-star
 * grid or arbitrary floats. */
typedef struct shape {
    int32_t rows, cols;
    double density;
    int empty_every, drop_last_col, full_row0, real_values;
    unsigned long long seed;
} shape;

static void make_csr(const shape *s, rk_csr *a)
{
    unsigned long long st = s->seed;
    memset(a, 0, sizeof *a);
    a->n_rows = s->rows;
    a->n_cols = s->cols;
    size_t cap = 1024;
    a->ptr = calloc((size_t)s->rows + 1, sizeof *a->ptr);
    a->idx = malloc(cap * sizeof *a->idx);
    a->val = malloc(cap * sizeof *a->val);
    CU_ASSERT_FATAL(a->ptr != NULL && a->idx != NULL && a->val != NULL);
    int64_t n = 0;
    for (int32_t r = 0; r < s->rows; r++) {
        int empty = s->empty_every > 0 && r % s->empty_every == s->empty_every - 1;
        for (int32_t c = 0; c < s->cols && !empty; c++) {
            if (s->drop_last_col && c == s->cols - 1) continue;
            if (!(s->full_row0 && r == 0) && rk_test_uniform(&st) >= s->density) continue;
            if ((size_t)n == cap) {
                cap *= 2;
                a->idx = realloc(a->idx, cap * sizeof *a->idx);
                a->val = realloc(a->val, cap * sizeof *a->val);
                CU_ASSERT_FATAL(a->idx != NULL && a->val != NULL);
            }
            a->idx[n] = c;
            a->val[n] = s->real_values ? (float)(0.5 + 4.5 * rk_test_uniform(&st))
                                       : (float)(0.5 * (double)(1 + rk_test_rand(&st) % 10));
            n++;
        }
        a->ptr[r + 1] = n;
    }
    a->nnz = n;
    char why[128];
    CU_ASSERT_FATAL(rk_csr_check(a, why, sizeof why) == 0);
}

static void compare_shape(const shape *s)
{
    rk_csr a, want, got;
    rk_error err;
    make_csr(s, &a);
    CU_ASSERT_FATAL(rk_csr_transpose(&a, &want, &err) == RK_OK);
    rk_status st = rk_gpu_transpose_check(&a, &got, &err);
    if (st != RK_OK) printf("\n  %d x %d: %s\n", s->rows, s->cols, err.msg);
    CU_ASSERT_FATAL(st == RK_OK);
    CU_ASSERT_EQUAL(got.n_rows, want.n_rows);
    CU_ASSERT_EQUAL(got.n_cols, want.n_cols);
    CU_ASSERT_EQUAL(got.nnz, want.nnz);
    if (got.n_rows == want.n_rows && got.nnz == want.nnz) {
        CU_ASSERT(memcmp(got.ptr, want.ptr, ((size_t)want.n_rows + 1) * sizeof *want.ptr) == 0);
        CU_ASSERT(memcmp(got.idx, want.idx, (size_t)want.nnz * sizeof *want.idx) == 0);
        CU_ASSERT(memcmp(got.val, want.val, (size_t)want.nnz * sizeof *want.val) == 0);
    }
    char why[128];
    CU_ASSERT(rk_csr_check(&got, why, sizeof why) == 0);
    rk_csr_free(&a);
    rk_csr_free(&want);
    rk_csr_free(&got);
}

static void test_random(void)
{
    static const shape shapes[] = {
        {50, 40, 0.2, 7, 1, 0, 0, 1},
        {200, 300, 0.05, 5, 1, 1, 1, 2},
        {3000, 500, 0.02, 11, 0, 1, 0, 3},
        {20000, 1777, 0.01, 13, 1, 1, 1, 4},
        {1000, 3, 0.7, 0, 0, 0, 0, 5},
        {3, 1000, 0.7, 0, 0, 0, 1, 6},
    };
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) compare_shape(&shapes[k]);
}

static void test_one_row_one_column(void)
{
    static const shape shapes[] = {
        {1, 100, 0.5, 0, 0, 0, 0, 11},
        {1, 100, 0.0, 0, 0, 1, 0, 12}, /* one full row */
        {100, 1, 0.5, 0, 0, 0, 1, 13},
        {1, 1, 1.0, 0, 0, 0, 0, 14},
    };
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) compare_shape(&shapes[k]);
}

static void test_dense(void)
{
    static const shape shapes[] = {
        {64, 64, 1.0, 0, 0, 0, 1, 21},
        {257, 129, 1.0, 0, 0, 0, 0, 22},
    };
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) compare_shape(&shapes[k]);
}

static void test_empty(void)
{
    static const shape shapes[] = {
        {10, 7, 0.0, 0, 0, 0, 0, 31}, /* no entries */
        {0, 5, 0.5, 0, 0, 0, 0, 32},  /* no rows */
        {5, 0, 0.5, 0, 0, 0, 0, 33},  /* no columns */
        {0, 0, 0.5, 0, 0, 0, 0, 34},
        {6, 9, 0.4, 1, 0, 0, 0, 35},  /* every row empty */
    };
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) compare_shape(&shapes[k]);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"random matrices", test_random},
        {"one row, one column", test_one_row_one_column},
        {"dense blocks", test_dense},
        {"empty matrices", test_empty},
        {NULL, NULL},
    };
    return rk_test_gpu_main("gpu-sparse", cases, NULL);
}
