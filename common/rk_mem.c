/* rk_mem.c — large arrays in transparent huge pages where the system allows
 * (rk_mem.h). */
#define _GNU_SOURCE /* madvise, MADV_HUGEPAGE */
#include "config.h"
#include "rk_mem.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* RECKNN_HUGE_PAGES=0 turns the advice off (rk_mem.h) */
static int advice_on(void)
{
    static int on = -1; /* every thread that reads it first computes the same value */
    int v = __atomic_load_n(&on, __ATOMIC_RELAXED);
    if (v < 0) {
        const char *e = getenv("RECKNN_HUGE_PAGES");
        v = !(e != NULL && e[0] == '0' && e[1] == '\0');
        __atomic_store_n(&on, v, __ATOMIC_RELAXED);
    }
    return v;
}

/* The advice on the whole pages of [p, p + bytes). */
static void advise(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    if (p == NULL || bytes < RK_MEM_HUGE_MIN || !advice_on()) return;
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    if (page == 0 || (page & (page - 1)) != 0) return;
    const uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1), b = ((uintptr_t)p + bytes) & ~(page - 1);
    /* advice only: EINVAL (no THP in this kernel) or ENOMEM change nothing */
    if (b > a) (void)madvise((void *)a, b - a, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

void *rk_mem_alloc(size_t bytes)
{
    void *p = malloc(bytes);
    advise(p, bytes);
    return p;
}
