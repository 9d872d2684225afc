/* cuSPARSE loaded at run time (rk_cusparse_dl.h).
 *
 * A CUDA build links the CUDA runtime statically and not cuSPARSE: this file
 * defines every cuSPARSE function that gpu/ calls, with cusparse.h's own
 * prototypes (the compiler checks them against the header), and each
 * forwards to the function of the same name in libcusparse.so.<major>,
 * opened with dlopen on the first call.  Where the library is missing every
 * wrapper returns CUSPARSE_STATUS_NOT_INITIALIZED; rk_gpu_available() asks
 * rk_cusparse_load() first, so the engine never gets that far.  A function
 * added to gpu/ must be added to RK_CUSPARSE_FUNCS and given a wrapper here
 * (the link fails otherwise: nothing else defines it).
 */
#define _POSIX_C_SOURCE 200809L
#define DISABLE_CUSPARSE_DEPRECATED /* the header's deprecated types are no business of this file */
#include "config.h"
#include "rk_cusparse_dl.h"

#include <cusparse.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RK_STR_(x) #x
#define RK_STR(x) RK_STR_(x)
/* the major version of the header we compiled against: its ABI */
#define RK_CUSPARSE_SONAME "libcusparse.so." RK_STR(CUSPARSE_VER_MAJOR)

/* Every cuSPARSE function of gpu/ (grep -ohE "cusparse[A-Z][A-Za-z0-9_]*"). */
#define RK_CUSPARSE_FUNCS(X)                                                                        \
    X(cusparseCreate) X(cusparseDestroy) X(cusparseSetStream) X(cusparseSetPointerMode)             \
    X(cusparseGetErrorString) X(cusparseCreateCsr) X(cusparseDestroySpMat) X(cusparseCsrSetPointers) \
    X(cusparseSpMatGetSize) X(cusparseCsr2cscEx2_bufferSize) X(cusparseCsr2cscEx2)                  \
    X(cusparseSpGEMM_createDescr) X(cusparseSpGEMM_destroyDescr) X(cusparseSpGEMM_workEstimation)   \
    X(cusparseSpGEMM_getNumProducts) X(cusparseSpGEMM_compute) X(cusparseSpGEMM_copy)               \
    X(cusparseSpGEMMreuse_workEstimation) X(cusparseSpGEMMreuse_nnz) X(cusparseSpGEMMreuse_copy)    \
    X(cusparseSpGEMMreuse_compute)

/* The library's functions: each pointer has the type of the header's function. */
#define RK_FN_PTR(f) __typeof__(&f) f;
static struct rk_cusparse_fns {
    RK_CUSPARSE_FUNCS(RK_FN_PTR)
} fn;

#define RK_FN_ENTRY(f) {#f, offsetof(struct rk_cusparse_fns, f)},
static const struct {
    const char *name;
    size_t off;
} fn_table[] = {RK_CUSPARSE_FUNCS(RK_FN_ENTRY)};

_Static_assert(sizeof fn.cusparseCreate == sizeof(void *), "dlsym's pointers hold functions (POSIX)");

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded;           /* set once by load(), read after pthread_once */
static char load_why[240];   /* why not, when not */

/* ---- loading ----------------------------------------------------------------- */

/* dlerror's text says that the file asked for is missing (rather than a
 * library it needs, or a symbol). */
static int file_missing(const char *err, const char *path)
{
    size_t n = strlen(path);
    return strncmp(err, path, n) == 0 && strstr(err + n, "No such file") != NULL;
}

/* Open the library: the test hook's path alone when set; else the soname
 * (the loader's search: LD_LIBRARY_PATH, ld.so.cache, /lib...), then the
 * toolkit folder configure found.  NULL with the reason in load_why. */
static void *open_library(void)
{
    const int flags = RTLD_NOW | RTLD_LOCAL;
    const char *hook = getenv(RK_CUSPARSE_LIB_ENV);
    const char *paths[2] = {RK_CUSPARSE_SONAME, NULL};
    if (hook != NULL && hook[0] != '\0') {
        paths[0] = hook;
    } else {
#ifdef RK_CUDA_LIBDIR
        paths[1] = RK_CUDA_LIBDIR "/" RK_CUSPARSE_SONAME;
#endif
    }
    char errs[2][160] = {"", ""};
    int chosen = 0; /* the error to report: the first that is not a plain "no such file" */
    for (int t = 0; t < 2 && paths[t] != NULL; t++) {
        void *h = dlopen(paths[t], flags);
        if (h != NULL) return h;
        const char *e = dlerror();
        snprintf(errs[t], sizeof errs[t], "%s", e != NULL ? e : "dlopen failed");
        if (t > 0 && file_missing(errs[chosen], paths[chosen]) && !file_missing(errs[t], paths[t])) chosen = t;
    }
    snprintf(load_why, sizeof load_why, "the CUDA library %s %s (%.159s)", RK_CUSPARSE_SONAME,
             file_missing(errs[chosen], paths[chosen]) ? "is not installed" : "cannot be loaded", errs[chosen]);
    return NULL;
}

static void load(void)
{
    void *h = open_library();
    if (h == NULL) return;
    for (size_t i = 0; i < sizeof fn_table / sizeof fn_table[0]; i++) {
        dlerror();
        void *p = dlsym(h, fn_table[i].name);
        if (p == NULL) {
            const char *e = dlerror();
            snprintf(load_why, sizeof load_why, "the CUDA library %s lacks %s (%s)", RK_CUSPARSE_SONAME,
                     fn_table[i].name, e != NULL ? e : "no such symbol");
            memset(&fn, 0, sizeof fn);
            if (dlclose(h) != 0) dlerror(); /* nothing more to tell */
            return;
        }
        memcpy((char *)&fn + fn_table[i].off, &p, sizeof p);
    }
    loaded = 1;
}

static int ready(void)
{
    if (pthread_once(&load_once, load) != 0) return 0;
    return loaded;
}

int rk_cusparse_load(char *why, size_t cap)
{
    if (pthread_once(&load_once, load) != 0) {
        if (why != NULL && cap > 0) snprintf(why, cap, "the CUDA library %s: pthread_once failed", RK_CUSPARSE_SONAME);
        return 0;
    }
    if (why != NULL && cap > 0) snprintf(why, cap, "%s", loaded ? RK_CUSPARSE_SONAME : load_why);
    return loaded;
}

/* ---- the wrappers: cusparse.h's prototypes ---------------------------------- */

#define RK_FORWARD(f, ...) return ready() ? fn.f(__VA_ARGS__) : CUSPARSE_STATUS_NOT_INITIALIZED

cusparseStatus_t CUSPARSEAPI cusparseCreate(cusparseHandle_t *handle)
{
    RK_FORWARD(cusparseCreate, handle);
}

cusparseStatus_t CUSPARSEAPI cusparseDestroy(cusparseHandle_t handle)
{
    RK_FORWARD(cusparseDestroy, handle);
}

cusparseStatus_t CUSPARSEAPI cusparseSetStream(cusparseHandle_t handle, cudaStream_t streamId)
{
    RK_FORWARD(cusparseSetStream, handle, streamId);
}

cusparseStatus_t CUSPARSEAPI cusparseSetPointerMode(cusparseHandle_t handle, cusparsePointerMode_t mode)
{
    RK_FORWARD(cusparseSetPointerMode, handle, mode);
}

const char *CUSPARSEAPI cusparseGetErrorString(cusparseStatus_t status)
{
    return ready() ? fn.cusparseGetErrorString(status) : "cuSPARSE is not loaded (" RK_CUSPARSE_SONAME ")";
}

cusparseStatus_t CUSPARSEAPI cusparseCreateCsr(cusparseSpMatDescr_t *spMatDescr, int64_t rows, int64_t cols,
                                               int64_t nnz, void *csrRowOffsets, void *csrColInd, void *csrValues,
                                               cusparseIndexType_t csrRowOffsetsType,
                                               cusparseIndexType_t csrColIndType, cusparseIndexBase_t idxBase,
                                               cudaDataType valueType)
{
    RK_FORWARD(cusparseCreateCsr, spMatDescr, rows, cols, nnz, csrRowOffsets, csrColInd, csrValues,
               csrRowOffsetsType, csrColIndType, idxBase, valueType);
}

cusparseStatus_t CUSPARSEAPI cusparseDestroySpMat(cusparseConstSpMatDescr_t spMatDescr)
{
    RK_FORWARD(cusparseDestroySpMat, spMatDescr);
}

cusparseStatus_t CUSPARSEAPI cusparseCsrSetPointers(cusparseSpMatDescr_t spMatDescr, void *csrRowOffsets,
                                                    void *csrColInd, void *csrValues)
{
    RK_FORWARD(cusparseCsrSetPointers, spMatDescr, csrRowOffsets, csrColInd, csrValues);
}

cusparseStatus_t CUSPARSEAPI cusparseSpMatGetSize(cusparseConstSpMatDescr_t spMatDescr, int64_t *rows,
                                                  int64_t *cols, int64_t *nnz)
{
    RK_FORWARD(cusparseSpMatGetSize, spMatDescr, rows, cols, nnz);
}

cusparseStatus_t CUSPARSEAPI cusparseCsr2cscEx2_bufferSize(cusparseHandle_t handle, int m, int n, int nnz,
                                                           const void *csrVal, const int *csrRowPtr,
                                                           const int *csrColInd, void *cscVal, int *cscColPtr,
                                                           int *cscRowInd, cudaDataType valType,
                                                           cusparseAction_t copyValues, cusparseIndexBase_t idxBase,
                                                           cusparseCsr2CscAlg_t alg, size_t *bufferSize)
{
    RK_FORWARD(cusparseCsr2cscEx2_bufferSize, handle, m, n, nnz, csrVal, csrRowPtr, csrColInd, cscVal, cscColPtr,
               cscRowInd, valType, copyValues, idxBase, alg, bufferSize);
}

cusparseStatus_t CUSPARSEAPI cusparseCsr2cscEx2(cusparseHandle_t handle, int m, int n, int nnz, const void *csrVal,
                                                const int *csrRowPtr, const int *csrColInd, void *cscVal,
                                                int *cscColPtr, int *cscRowInd, cudaDataType valType,
                                                cusparseAction_t copyValues, cusparseIndexBase_t idxBase,
                                                cusparseCsr2CscAlg_t alg, void *buffer)
{
    RK_FORWARD(cusparseCsr2cscEx2, handle, m, n, nnz, csrVal, csrRowPtr, csrColInd, cscVal, cscColPtr, cscRowInd,
               valType, copyValues, idxBase, alg, buffer);
}

cusparseStatus_t CUSPARSEAPI cusparseSpGEMM_createDescr(cusparseSpGEMMDescr_t *descr)
{
    RK_FORWARD(cusparseSpGEMM_createDescr, descr);
}

cusparseStatus_t CUSPARSEAPI cusparseSpGEMM_destroyDescr(cusparseSpGEMMDescr_t descr)
{
    RK_FORWARD(cusparseSpGEMM_destroyDescr, descr);
}

cusparseStatus_t CUSPARSEAPI cusparseSpGEMM_workEstimation(cusparseHandle_t handle, cusparseOperation_t opA,
                                                           cusparseOperation_t opB, const void *alpha,
                                                           cusparseConstSpMatDescr_t matA,
                                                           cusparseConstSpMatDescr_t matB, const void *beta,
                                                           cusparseSpMatDescr_t matC, cudaDataType computeType,
                                                           cusparseSpGEMMAlg_t alg, cusparseSpGEMMDescr_t spgemmDescr,
                                                           size_t *bufferSize1, void *externalBuffer1)
{
    RK_FORWARD(cusparseSpGEMM_workEstimation, handle, opA, opB, alpha, matA, matB, beta, matC, computeType, alg,
               spgemmDescr, bufferSize1, externalBuffer1);
}

cusparseStatus_t CUSPARSEAPI cusparseSpGEMM_getNumProducts(cusparseSpGEMMDescr_t spgemmDescr, int64_t *num_prods)
{
    RK_FORWARD(cusparseSpGEMM_getNumProducts, spgemmDescr, num_prods);
}

cusparseStatus_t CUSPARSEAPI cusparseSpGEMM_compute(cusparseHandle_t handle, cusparseOperation_t opA,
                                                    cusparseOperation_t opB, const void *alpha,
                                                    cusparseConstSpMatDescr_t matA, cusparseConstSpMatDescr_t matB,
                                                    const void *beta, cusparseSpMatDescr_t matC,
                                                    cudaDataType computeType, cusparseSpGEMMAlg_t alg,
                                                    cusparseSpGEMMDescr_t spgemmDescr, size_t *bufferSize2,
                                                    void *externalBuffer2)
{
    RK_FORWARD(cusparseSpGEMM_compute, handle, opA, opB, alpha, matA, matB, beta, matC, computeType, alg,
               spgemmDescr, bufferSize2, externalBuffer2);
}

cusparseStatus_t CUSPARSEAPI cusparseSpGEMM_copy(cusparseHandle_t handle, cusparseOperation_t opA,
                                                 cusparseOperation_t opB, const void *alpha,
                                                 cusparseConstSpMatDescr_t matA, cusparseConstSpMatDescr_t matB,
                                                 const void *beta, cusparseSpMatDescr_t matC, cudaDataType computeType,
                                                 cusparseSpGEMMAlg_t alg, cusparseSpGEMMDescr_t spgemmDescr)
{
    RK_FORWARD(cusparseSpGEMM_copy, handle, opA, opB, alpha, matA, matB, beta, matC, computeType, alg, spgemmDescr);
}

cusparseStatus_t CUSPARSEAPI cusparseSpGEMMreuse_workEstimation(cusparseHandle_t handle, cusparseOperation_t opA,
                                                                cusparseOperation_t opB,
                                                                cusparseConstSpMatDescr_t matA,
                                                                cusparseConstSpMatDescr_t matB,
                                                                cusparseSpMatDescr_t matC, cusparseSpGEMMAlg_t alg,
                                                                cusparseSpGEMMDescr_t spgemmDescr,
                                                                size_t *bufferSize1, void *externalBuffer1)
{
    RK_FORWARD(cusparseSpGEMMreuse_workEstimation, handle, opA, opB, matA, matB, matC, alg, spgemmDescr,
               bufferSize1, externalBuffer1);
}

cusparseStatus_t CUSPARSEAPI cusparseSpGEMMreuse_nnz(cusparseHandle_t handle, cusparseOperation_t opA,
                                                     cusparseOperation_t opB, cusparseConstSpMatDescr_t matA,
                                                     cusparseConstSpMatDescr_t matB, cusparseSpMatDescr_t matC,
                                                     cusparseSpGEMMAlg_t alg, cusparseSpGEMMDescr_t spgemmDescr,
                                                     size_t *bufferSize2, void *externalBuffer2,
                                                     size_t *bufferSize3, void *externalBuffer3,
                                                     size_t *bufferSize4, void *externalBuffer4)
{
    RK_FORWARD(cusparseSpGEMMreuse_nnz, handle, opA, opB, matA, matB, matC, alg, spgemmDescr, bufferSize2,
               externalBuffer2, bufferSize3, externalBuffer3, bufferSize4, externalBuffer4);
}

cusparseStatus_t CUSPARSEAPI cusparseSpGEMMreuse_copy(cusparseHandle_t handle, cusparseOperation_t opA,
                                                      cusparseOperation_t opB, cusparseConstSpMatDescr_t matA,
                                                      cusparseConstSpMatDescr_t matB, cusparseSpMatDescr_t matC,
                                                      cusparseSpGEMMAlg_t alg, cusparseSpGEMMDescr_t spgemmDescr,
                                                      size_t *bufferSize5, void *externalBuffer5)
{
    RK_FORWARD(cusparseSpGEMMreuse_copy, handle, opA, opB, matA, matB, matC, alg, spgemmDescr, bufferSize5,
               externalBuffer5);
}

cusparseStatus_t CUSPARSEAPI cusparseSpGEMMreuse_compute(cusparseHandle_t handle, cusparseOperation_t opA,
                                                         cusparseOperation_t opB, const void *alpha,
                                                         cusparseConstSpMatDescr_t matA,
                                                         cusparseConstSpMatDescr_t matB, const void *beta,
                                                         cusparseSpMatDescr_t matC, cudaDataType computeType,
                                                         cusparseSpGEMMAlg_t alg, cusparseSpGEMMDescr_t spgemmDescr)
{
    RK_FORWARD(cusparseSpGEMMreuse_compute, handle, opA, opB, alpha, matA, matB, beta, matC, computeType, alg,
               spgemmDescr);
}
