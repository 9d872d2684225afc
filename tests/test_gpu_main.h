/* test_gpu_main.h — the main of the GPU test programs: SKIP (exit 77)
 * without a usable GPU, else the device named, then the cases; with
 * RK_GPU_TEST_QUICK set, the short list instead (for the slow sanitizer
 * tools; quick NULL: every case). */
#ifndef RK_TEST_GPU_MAIN_H
#define RK_TEST_GPU_MAIN_H

#include "rk_gpu.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>

static inline int rk_test_gpu_main(const char *name, const rk_test_case *cases, const rk_test_case *quick)
{
    char why[256], qname[64];
    if (!rk_gpu_available(why, sizeof why)) {
        printf("SKIP: %s\n", why);
        return 77;
    }
    printf("GPU: %s\n", why);
    if (quick != NULL && getenv("RK_GPU_TEST_QUICK") != NULL) {
        snprintf(qname, sizeof qname, "%s-quick", name);
        return rk_test_main(qname, quick);
    }
    return rk_test_main(name, cases);
}

#endif /* RK_TEST_GPU_MAIN_H */
