/* rk_gpus.h — several GPUs in one process (prefix rk_gpus_).
 *
 * --gpus all|N|LIST names the CUDA devices the engine shares its work among:
 * the item rows are shared out by work (rk_part), one host thread per
 * device runs the GPU engine on its rows (the ratings replicated on each
 * device), and the lists and predictions are merged by item; the users of
 * the top-N stage are shared out in consecutive ranges and their batches
 * reach the sink in request order (rk_recbuf).  A device may be named more
 * than once (e.g. 0,0): its workers then share it, which is how the several-
 * device path is tested on a machine with one GPU.  The results are those of
 * one device, byte for byte.
 */
#ifndef RK_GPUS_H
#define RK_GPUS_H

#include <stdint.h>
#include "rk_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Devices a list may name. */
#define RK_GPUS_MAX 64

typedef struct rk_gpus_spec {
    int all;                    /* "all": every visible device */
    int count;                  /* "N": the first N devices (0: not given) */
    int n_ids;                  /* "LIST": ordinals given (0: not given) */
    int32_t ids[RK_GPUS_MAX];
} rk_gpus_spec;

/*! rk_gpus_parse() : "all", a count N >= 1 ("2"), or a comma-separated list
 *  of ordinals ("0,1", "0,0"; a single ordinal is written "0," or as a
 *  count: "1" means one device, device 0).  NULL or "" leaves the default (a
 *  zeroed spec: device 0).  @return RK_OK or RK_E_ARG (err says why). */
rk_status rk_gpus_parse(const char *s, rk_gpus_spec *out, rk_error *err);

/*! rk_gpus_given() : 1 when spec names devices (all, a count or a list),
 *  0 for the default (a zeroed spec). */
int rk_gpus_given(const rk_gpus_spec *spec);

/*! rk_gpus_resolve() : the ordinals of spec for n_visible devices into
 *  ids[RK_GPUS_MAX], their number in *n (the default: device 0).
 *  @return RK_OK, RK_E_GPU (no device, a count or an ordinal beyond the
 *  visible ones), RK_E_ARG (a spec rk_gpus_parse does not make: a negative
 *  ordinal, more than RK_GPUS_MAX). */
rk_status rk_gpus_resolve(const rk_gpus_spec *spec, int n_visible, int32_t *ids, int *n, rk_error *err);

#ifdef __cplusplus
}
#endif
#endif /* RK_GPUS_H */
