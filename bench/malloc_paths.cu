// bench/malloc_paths.cu — what a fresh device allocation costs beside the
// copy into it (issue 21: the engine's user-major upload took 22-34 ms while
// bench/h2d_paths showed the staged copy of the same 161 MB at 5 ms).
// Each round: cudaMalloc of 1 + 80 + 80 MB, a copy of 161 MB from pinned
// memory into the fresh buffers, the same copy again (buffers reused), and
// cudaFree.  nvcc -O2 bench/malloc_paths.cu -o mp && ./mp
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <chrono>

static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

int main(void)
{
    const size_t mb = (size_t)1 << 20, sz[3] = {1 * mb, 80 * mb, 80 * mb};
    char *h;
    if (cudaFree(0) != cudaSuccess || cudaHostAlloc((void **)&h, 161 * mb, cudaHostAllocDefault) != cudaSuccess) return 1;
    for (int r = 0; r < 4; r++) {
        char *d[3];
        double t0 = now();
        for (int k = 0; k < 3; k++)
            if (cudaMalloc((void **)&d[k], sz[k]) != cudaSuccess) return 1;
        double t1 = now();
        for (int k = 0, off = 0; k < 3; off += (int)(sz[k] / mb), k++) cudaMemcpyAsync(d[k], h + off * mb, sz[k], cudaMemcpyHostToDevice, 0);
        cudaDeviceSynchronize();
        double t2 = now();
        for (int k = 0, off = 0; k < 3; off += (int)(sz[k] / mb), k++) cudaMemcpyAsync(d[k], h + off * mb, sz[k], cudaMemcpyHostToDevice, 0);
        cudaDeviceSynchronize();
        double t3 = now();
        for (int k = 0; k < 3; k++) cudaFree(d[k]);
        double t4 = now();
        printf("cudaMalloc 1+80+80 MB %.2f ms | copy into fresh %.2f ms | copy again %.2f ms | cudaFree %.2f ms\n",
               1e3 * (t1 - t0), 1e3 * (t2 - t1), 1e3 * (t3 - t2), 1e3 * (t4 - t3));
    }
    return 0;
}
