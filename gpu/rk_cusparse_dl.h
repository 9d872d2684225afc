/* rk_cusparse_dl.h — cuSPARSE loaded at run time (CUDA builds only).
 *
 * recknn is not linked with libcusparse: gpu/rk_cusparse_dl.c defines the
 * cuSPARSE functions the engine calls, each forwarding to the library that
 * it opens with dlopen on first use, so that the program starts (and runs on
 * the CPU) on a machine without the CUDA libraries.  Plain C.
 */
#ifndef RK_CUSPARSE_DL_H
#define RK_CUSPARSE_DL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The test hook: when set and not empty, the path (or name) opened instead
 * of libcusparse.so.<major>, without the toolkit fallback. */
#define RK_CUSPARSE_LIB_ENV "RECKNN_CUSPARSE_LIB"

/*! rk_cusparse_load() : open libcusparse.so.<CUSPARSE_VER_MAJOR> (by name,
 *  then from the toolkit folder configure found) and resolve every function
 *  the engine calls; done once per process, thread-safe.  @return 1 when
 *  loaded, else 0 with the reason (naming the library, with dlerror's text)
 *  in why (cap bytes).  Until it succeeds every wrapper returns
 *  CUSPARSE_STATUS_NOT_INITIALIZED. */
int rk_cusparse_load(char *why, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
