// The values the co-rating sums are made of, on the device (rk_gpu_internal.h,
// rk_gpu_acc_values): exact grid units, the ratings as doubles, or the
// baseline residuals.
#include "rk_gpu_internal.h"

namespace {

__global__ void k_to_grid(const float *__restrict__ v, int64_t n, double scale, int32_t *__restrict__ q)
{
    for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < n; p += (int64_t)gridDim.x * blockDim.x)
        q[p] = (int32_t)rint((double)v[p] * scale);
}

__global__ void k_to_double(const float *__restrict__ v, int64_t n, double *__restrict__ d)
{
    for (int64_t p = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; p < n; p += (int64_t)gridDim.x * blockDim.x)
        d[p] = (double)v[p];
}

// Baseline residuals e = r − (μ + b_u + b_i) of a CSR whose rows are users
// (rows_are_users) or items, with the host's expression and order of
// operations (rk_model_residuals), so that both engines get the same doubles.
__global__ void k_residuals(const int64_t *__restrict__ ptr, const int32_t *__restrict__ idx,
                            const float *__restrict__ v, int32_t n_rows, int rows_are_users, double mu,
                            const double *__restrict__ bu, const double *__restrict__ bi, double *__restrict__ e)
{
    const int lane = threadIdx.x % 32;
    const int32_t warps = (int32_t)(gridDim.x * blockDim.x / 32);
    for (int32_t r = (int32_t)((blockIdx.x * blockDim.x + threadIdx.x) / 32); r < n_rows; r += warps)
        for (int64_t p = ptr[r] + lane; p < ptr[r + 1]; p += 32) {
            const int32_t c = idx[p];
            const double b_u = rows_are_users ? bu[r] : bu[c], b_i = rows_are_users ? bi[c] : bi[r];
            e[p] = (double)v[p] - (mu + b_u + b_i);
        }
}

} // namespace

// The values the sums are made of: grid units, the ratings as doubles, or
// the baseline residuals (res: the model's μ and baselines on the device).
rk_status rk_gpu_acc_values(rk_dev_csr *c, const float *d_ratings, double scale, const rk_residual_args *res,
                           dev_mem &mem, cudaStream_t st, rk_error *err)
{
    if (res != NULL) {
        RK_FORWARD(mem.alloc(&c->d, (size_t)c->nnz, err));
        if (c->nnz > 0) {
            k_residuals<<<1024, 256, 0, st>>>(c->ptr, c->idx, d_ratings, c->n_rows, res->rows_are_users, res->mu,
                                             res->bu, res->bi, c->d);
            RK_LAUNCH_CHECK(err, "k_residuals");
        }
        return RK_OK;
    }
    if (scale > 0.0) {
        RK_FORWARD(mem.alloc(&c->q, (size_t)c->nnz, err));
        if (c->nnz > 0) {
            k_to_grid<<<1024, 256, 0, st>>>(d_ratings, c->nnz, scale, c->q);
            RK_LAUNCH_CHECK(err, "k_to_grid");
        }
        return RK_OK;
    }
    RK_FORWARD(mem.alloc(&c->d, (size_t)c->nnz, err));
    if (c->nnz > 0) {
        k_to_double<<<1024, 256, 0, st>>>(d_ratings, c->nnz, c->d);
        RK_LAUNCH_CHECK(err, "k_to_double");
    }
    return RK_OK;
}
