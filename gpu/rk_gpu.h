/* rk_gpu.h — the only door to the CUDA engine (prefix rk_gpu_).  Plain C.
 *
 * The engine has the contract of rk_knn_cpu (src/rk_knn.h): same lists, same
 * predictions (similarities within 1e-4, lists identical except among ties).
 * Every CUDA/cuSPARSE failure becomes RK_E_GPU with the failing call, file and
 * line in the message; nothing here aborts or prints.  Built without CUDA,
 * rk_gpu_available() answers 0 and rk_gpu_knn() returns RK_E_GPU.
 */
#ifndef RK_GPU_H
#define RK_GPU_H

#include <stddef.h>
#include <stdint.h>
#include "rk_status.h"
#include "rk_knn.h"

#ifdef __cplusplus
extern "C" {
#endif

/*! rk_gpu_available() : @return 1 when a CUDA device can be used, else 0; the
 *  device name (or the reason none is usable) goes to buf (cap bytes). */
int rk_gpu_available(char *buf, size_t cap);

/*! rk_gpu_warmup() : start the CUDA context of the device the engine uses,
 *  so that rk_gpu_knn does not wait for it; meant for a thread of its own
 *  while the data load.  @return 1 when the device answered, else 0. */
int rk_gpu_warmup(void);

/*! rk_gpu_supports() : @return 1 when the GPU engine takes these options
 *  (k at most its selection limit), else 0 with the reason in why. */
int rk_gpu_supports(const rk_knn_opts *o, char *why, size_t cap);

typedef struct rk_gpu_opts {
    size_t memory_cap;   /* bytes of device memory the engine may use (0 = free memory) */
    int32_t tile_items;  /* force the tile height in items (0 = sized from memory); tests */
    int full_rows;       /* sum every row in full even when one tile holds all the items
                            (by default each pair is then summed once, for the metrics
                            with four or six sums); tests */
} rk_gpu_opts;

/*! rk_gpu_knn() : the engine of rk_knn_cpu on the GPU. */
rk_status rk_gpu_knn(const rk_model *m, const rk_knn_opts *o, const rk_gpu_opts *g,
                     rk_lists *lists, rk_queries *q, rk_knn_stats *st, rk_error *err);

/*! rk_gpu_select_rows() : the GPU's list selection alone, for tests: the
 *  top out->k positive entries of each of the n_rows rows of rows[n_rows *
 *  n_cols] (row-major), in SPEC §3 order, into out (shape n_rows x k;
 *  supports are 0).  @return RK_OK, RK_E_ARG, RK_E_GPU. */
rk_status rk_gpu_select_rows(const double *rows, int32_t n_rows, int32_t n_cols, rk_lists *out, rk_error *err);

#ifdef __cplusplus
}
#endif
#endif /* RK_GPU_H */
