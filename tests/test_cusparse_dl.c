/* Unit tests of cuSPARSE loaded at run time (gpu/rk_cusparse_dl.c, CUDA
 * builds): the library is opened once per process, so each case runs in a
 * child of its own.  A missing library and one without cuSPARSE's symbols
 * are reasons that name the library, and every wrapper then fails with
 * CUSPARSE_STATUS_NOT_INITIALIZED instead of crashing; where the toolkit's
 * library is installed it loads.  No GPU is needed: loading touches none. */
#define _POSIX_C_SOURCE 200809L
#include "config.h"
#include "rk_cusparse_dl.h"
#include "test_util.h"

#include <cusparse.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* In a child: set the hook to lib (NULL: unset), load, and write the result
 * and the reason to the pipe; then try a wrapper.  The parent reads them. */
static void child_load(const char *lib, int *loaded, char *why, size_t cap, int *create_status)
{
    int fd[2];
    CU_ASSERT_FATAL(pipe(fd) == 0);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        if (lib != NULL) setenv(RK_CUSPARSE_LIB_ENV, lib, 1);
        else unsetenv(RK_CUSPARSE_LIB_ENV);
        char w[512];
        int ok = rk_cusparse_load(w, sizeof w);
        cusparseHandle_t h = NULL;
        int cs = ok ? -1 : (int)cusparseCreate(&h); /* with the library: needs a GPU, not tried */
        char out[600];
        int n = snprintf(out, sizeof out, "%d %d %s", ok, cs, w);
        _exit(write(fd[1], out, (size_t)n) == n ? 0 : 1);
    }
    close(fd[1]);
    char buf[600] = "";
    ssize_t got = 0, r;
    while ((r = read(fd[0], buf + got, sizeof buf - 1 - (size_t)got)) > 0) got += r;
    close(fd[0]);
    buf[got > 0 ? got : 0] = '\0';
    int status = 0;
    waitpid(pid, &status, 0);
    CU_ASSERT_FATAL(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    int off = 0;
    CU_ASSERT_FATAL(sscanf(buf, "%d %d %n", loaded, create_status, &off) == 2);
    snprintf(why, cap, "%s", buf + off);
}

static void test_missing(void)
{
    int loaded = -1, cs = 0;
    char why[600];
    child_load("/nonexistent/libcusparse.so.99", &loaded, why, sizeof why, &cs);
    CU_ASSERT_EQUAL(loaded, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "is not installed"));
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "/nonexistent/libcusparse.so.99"));
    CU_ASSERT_EQUAL(cs, (int)CUSPARSE_STATUS_NOT_INITIALIZED);
}

static void test_wrong_library(void)
{
    /* a library that is there (recknn links zlib) but is not cuSPARSE */
    int loaded = -1, cs = 0;
    char why[600];
    child_load("libz.so.1", &loaded, why, sizeof why, &cs);
    CU_ASSERT_EQUAL(loaded, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "lacks cusparse"));
    CU_ASSERT_EQUAL(cs, (int)CUSPARSE_STATUS_NOT_INITIALIZED);
}

static void test_toolkit(void)
{
#ifdef RK_CUDA_LIBDIR
    char path[512];
    snprintf(path, sizeof path, "%s/libcusparse.so.%d", RK_CUDA_LIBDIR, CUSPARSE_VER_MAJOR);
    if (access(path, R_OK) != 0) {
        fprintf(stderr, "\n(no %s: the loading case is not run)\n", path);
        return;
    }
    int loaded = -1, cs = 0;
    char why[600];
    child_load(NULL, &loaded, why, sizeof why, &cs);
    if (loaded != 1) fprintf(stderr, "\n%s\n", why);
    CU_ASSERT_EQUAL(loaded, 1);
#endif
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"a missing library: its name, and wrappers that fail", test_missing},
        {"a library that is not cuSPARSE", test_wrong_library},
        {"the toolkit's library loads", test_toolkit},
        {NULL, NULL},
    };
    return rk_test_main("cusparse_dl", cases);
}
