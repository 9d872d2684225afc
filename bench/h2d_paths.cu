// bench/h2d_paths.cu — ways to move MB megabytes of ordinary (pageable) host
// memory to the GPU, each timed 3 times after one untimed round, to choose
// the engine's upload (issue 21: the user-major matrix, 161 MB at ML-20M
// size, took 22-34 ms through the 2 x 8 MB pinned staging, against a PCIe 5
// floor of about 3 ms).
//   nvcc -O2 -Xcompiler -fopenmp bench/h2d_paths.cu -o h2d && ./h2d [MB] [huge]
// With "huge" the source is in transparent huge pages (madvise), as the
// loader's presized rows are; the registration is then also timed in 64 MB
// pieces (as a thread beside the parse would pin each block's rows) and
// its undoing (cudaHostUnregister) apart.
// Paths: pageable cudaMemcpy; the engine's stager (2 pinned buffers of 8 MB,
// copies in 1 MB parts); the same with 4 buffers of 32 MB; cudaHostRegister
// of the source then one copy (registration included, and apart); the host
// memcpy alone with every thread (the staging's own floor); pinned memory
// allocation of 2 x 8 MB.
#include <cuda_runtime.h>
#include <sys/mman.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>

#define CK(x)                                                                                   \
    do {                                                                                        \
        cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

static double staged(char *d, const char *h, size_t n, int nbuf, size_t piece, size_t part, cudaStream_t st)
{
    char *buf[8];
    cudaEvent_t done[8];
    for (int b = 0; b < nbuf; b++) {
        CK(cudaHostAlloc((void **)&buf[b], piece, cudaHostAllocDefault));
        CK(cudaEventCreateWithFlags(&done[b], cudaEventDisableTiming));
    }
    CK(cudaDeviceSynchronize());
    double t = omp_get_wtime();
    int next = 0;
    for (size_t off = 0; off < n; off += piece) {
        const size_t len = std::min(piece, n - off);
        const int b = next;
        next = (next + 1) % nbuf;
        CK(cudaEventSynchronize(done[b]));
        const long parts = (long)((len + part - 1) / part);
#pragma omp parallel for schedule(static)
        for (long q = 0; q < parts; q++) {
            size_t a = (size_t)q * part, e = std::min(len, a + part);
            memcpy(buf[b] + a, h + off + a, e - a);
        }
        CK(cudaMemcpyAsync(d + off, buf[b], len, cudaMemcpyHostToDevice, st));
        CK(cudaEventRecord(done[b], st));
    }
    CK(cudaStreamSynchronize(st));
    t = omp_get_wtime() - t;
    for (int b = 0; b < nbuf; b++) {
        cudaEventDestroy(done[b]);
        cudaFreeHost(buf[b]);
    }
    return t;
}

int main(int argc, char **argv)
{
    const size_t n = (size_t)(argc > 1 ? atol(argv[1]) : 161) << 20;
    const int huge = argc > 2 && strcmp(argv[2], "huge") == 0;
    char *h = (char *)(huge ? aligned_alloc((size_t)2 << 20, n) : malloc(n)), *h2 = (char *)malloc(n), *d;
    if (huge) madvise(h, n, MADV_HUGEPAGE);
#pragma omp parallel for
    for (size_t i = 0; i < n; i++) h[i] = (char)i;
    memset(h2, 1, n);
    CK(cudaFree(0));
    CK(cudaMalloc((void **)&d, n));
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    printf("%zu MB, %d threads\n", n >> 20, omp_get_max_threads());
    for (int r = 0; r < 4; r++) {
        const char *tag = r == 0 ? "(warm-up) " : "";
        double t = omp_get_wtime();
        CK(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice));
        double t_page = omp_get_wtime() - t;
        double t_s1 = staged(d, h, n, 2, (size_t)8 << 20, (size_t)1 << 20, st);
        double t_s2 = staged(d, h, n, 2, (size_t)8 << 20, (size_t)256 << 10, st);
        double t_s3 = staged(d, h, n, 4, (size_t)32 << 20, (size_t)1 << 20, st);
        t = omp_get_wtime();
        CK(cudaHostRegister(h, n, cudaHostRegisterDefault));
        double t_reg = omp_get_wtime() - t;
        CK(cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, st));
        CK(cudaStreamSynchronize(st));
        double t_regcopy = omp_get_wtime() - t;
        t = omp_get_wtime();
        CK(cudaHostUnregister(h));
        double t_unreg = omp_get_wtime() - t, t_pieces = 0;
        if (huge) { /* 64 MB pieces, each pinned then copied, as blocks of rows would be */
            const size_t piece = (size_t)64 << 20;
            t = omp_get_wtime();
            for (size_t off = 0; off < n; off += piece) {
                const size_t len = std::min(piece, n - off);
                CK(cudaHostRegister(h + off, len, cudaHostRegisterDefault));
                CK(cudaMemcpyAsync(d + off, h + off, len, cudaMemcpyHostToDevice, st));
            }
            CK(cudaStreamSynchronize(st));
            t_pieces = omp_get_wtime() - t;
            for (size_t off = 0; off < n; off += piece) CK(cudaHostUnregister(h + off));
        }
        t = omp_get_wtime();
#pragma omp parallel for schedule(static)
        for (long q = 0; q < (long)(n >> 20); q++) memcpy(h2 + ((size_t)q << 20), h + ((size_t)q << 20), (size_t)1 << 20);
        double t_memcpy = omp_get_wtime() - t;
        char *p1, *p2;
        t = omp_get_wtime();
        CK(cudaHostAlloc((void **)&p1, (size_t)8 << 20, cudaHostAllocDefault));
        CK(cudaHostAlloc((void **)&p2, (size_t)8 << 20, cudaHostAllocDefault));
        double t_pin = omp_get_wtime() - t;
        cudaFreeHost(p1);
        cudaFreeHost(p2);
        printf("%spageable %.1f ms | staged 2x8MB/1MB %.1f ms | 2x8MB/256KB %.1f ms | 4x32MB/1MB %.1f ms | "
               "register+copy %.1f ms (register %.1f, unregister %.1f, in 64 MB pieces %.1f) | host memcpy %.1f ms | "
               "2x8MB pinned alloc %.1f ms\n",
               tag, 1e3 * t_page, 1e3 * t_s1, 1e3 * t_s2, 1e3 * t_s3, 1e3 * t_regcopy, 1e3 * t_reg, 1e3 * t_unreg,
               1e3 * t_pieces, 1e3 * t_memcpy, 1e3 * t_pin);
    }
    return 0;
}
