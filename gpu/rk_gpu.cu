// Placeholder until the GPU engine lands: reports the device, runs nothing.
#include "rk_gpu.h"
#include <cuda_runtime.h>
#include <stdio.h>

extern "C" int rk_gpu_available(char *buf, size_t cap)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        if (buf && cap) snprintf(buf, cap, "no usable CUDA device (%s)", e != cudaSuccess ? cudaGetErrorString(e) : "none found");
        return 0;
    }
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return 0;
    if (buf && cap) snprintf(buf, cap, "%s", p.name);
    return 1;
}

extern "C" rk_status rk_gpu_knn(const rk_model *, const rk_knn_opts *, const rk_gpu_opts *,
                                rk_lists *, rk_queries *, rk_knn_stats *, rk_error *err)
{
    return rk_error_set(err, RK_E_GPU, "the GPU engine is not built yet");
}
