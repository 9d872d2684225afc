/* Built when configure found no CUDA: no GPU is ever usable. */
#include "rk_gpu.h"

#include <stdio.h>
#include <string.h>

int rk_gpu_available(char *buf, size_t cap)
{
    if (buf != NULL && cap > 0) snprintf(buf, cap, "recknn was built without CUDA");
    return 0;
}

int rk_gpu_device_count(void)
{
    return 0;
}

int rk_gpu_warmup(int device)
{
    (void)device;
    return 0;
}

rk_status rk_gpu_knn(const rk_model *m, const rk_knn_opts *o, const rk_gpu_opts *g,
                     rk_lists *lists, rk_queries *q, const rk_topn_opts *topn,
                     rk_topn_stats *tst, rk_knn_stats *st, rk_error *err)
{
    (void)m; (void)o; (void)g; (void)lists; (void)q; (void)topn; (void)tst; (void)st;
    return rk_error_set(err, RK_E_GPU, "no usable GPU: recknn was built without CUDA");
}

rk_status rk_gpu_pmodel(const rk_model *m, const rk_knn_opts *o, const rk_gpu_opts *g, const rk_lists *lists,
                        rk_queries *q, rk_knn_stats *st, rk_error *err)
{
    (void)m; (void)o; (void)g; (void)lists; (void)q; (void)st;
    return rk_error_set(err, RK_E_GPU, "no usable GPU: recknn was built without CUDA");
}

rk_status rk_gpu_topn(const rk_model *m, const rk_lists *l, const rk_topn_opts *o, const rk_gpu_opts *g,
                      rk_topn_stats *st, rk_error *err)
{
    (void)m; (void)l; (void)o; (void)g; (void)st;
    return rk_error_set(err, RK_E_GPU, "no usable GPU: recknn was built without CUDA");
}

rk_status rk_gpu_csr_build(const rk_triples *t, int32_t n_users, int32_t n_items, const uint64_t *leave_out,
                           rk_dup_policy policy, rk_dup_found *found, const rk_gpu_opts *g, rk_csr *out, int *taken,
                           rk_error *err)
{
    (void)t; (void)n_users; (void)n_items; (void)leave_out; (void)policy; (void)g;
    *taken = 0;
    if (found != NULL) memset(found, 0, sizeof *found);
    out->ptr = NULL;
    out->idx = NULL;
    out->val = NULL;
    out->nnz = 0;
    return rk_error_set(err, RK_E_GPU, "no usable GPU: recknn was built without CUDA");
}

void rk_gpu_forget_csr(void)
{
}

rk_gpu_rows *rk_gpu_rows_new(int64_t min_rows, int (*device)(void *ud), void *ud)
{
    (void)min_rows;
    (void)device;
    (void)ud;
    return NULL;
}

void rk_gpu_rows_ready(void *ud, const int64_t *u, const int64_t *i, const float *r, int64_t cap, int64_t from,
                       int64_t to)
{
    (void)ud; (void)u; (void)i; (void)r; (void)cap; (void)from; (void)to;
}

void rk_gpu_rows_hold(void *ud, int done)
{
    (void)ud;
    (void)done;
}

void rk_gpu_rows_release(void *ud)
{
    (void)ud;
}

void rk_gpu_rows_stats(const rk_gpu_rows *p, rk_gpu_rows_report *st)
{
    (void)p; /* never made without CUDA */
    memset(st, 0, sizeof *st);
}

void rk_gpu_rows_free(rk_gpu_rows *p)
{
    (void)p;
}

rk_status rk_gpu_transpose_check(const rk_csr *by_user, rk_csr *out, rk_error *err)
{
    (void)by_user;
    (void)out;
    return rk_error_set(err, RK_E_GPU, "no usable GPU: recknn was built without CUDA");
}

int rk_gpu_supports(const rk_knn_opts *o, char *why, size_t cap)
{
    (void)o;
    if (why != NULL && cap > 0) snprintf(why, cap, "recknn was built without CUDA");
    return 0;
}

rk_status rk_gpu_select_rows(const double *rows, int32_t n_rows, int32_t n_cols, int negative, rk_lists *out,
                             rk_error *err)
{
    (void)rows; (void)n_rows; (void)n_cols; (void)negative; (void)out;
    return rk_error_set(err, RK_E_GPU, "no usable GPU: recknn was built without CUDA");
}

rk_status rk_gpu_rbc(const rk_model *m, const rk_knn_opts *o, const rk_rbc_opts *r, const rk_gpu_opts *g,
                     rk_lists *lists, rk_rbc_stats *st, rk_error *err)
{
    (void)m; (void)o; (void)r; (void)g; (void)lists; (void)st;
    return rk_error_set(err, RK_E_GPU, "no usable GPU: recknn was built without CUDA");
}

int rk_gpu_sym_applies(const rk_knn_opts *o, const rk_gpu_opts *g)
{
    (void)o;
    (void)g;
    return 0;
}

rk_status rk_gpu_sym_create(int n_parts, const int *devices, const int32_t *part_of, const int64_t *cost,
                            int32_t n_items, rk_gpu_sym **out, rk_error *err)
{
    (void)n_parts; (void)devices; (void)part_of; (void)cost; (void)n_items;
    *out = NULL;
    return rk_error_set(err, RK_E_GPU, "no usable GPU: recknn was built without CUDA");
}

void rk_gpu_sym_leave(rk_gpu_sym *sh, int part)
{
    (void)sh;
    (void)part;
}

int rk_gpu_sym_shared(const rk_gpu_sym *sh)
{
    (void)sh;
    return 0;
}

void rk_gpu_sym_free(rk_gpu_sym *sh)
{
    (void)sh;
}
