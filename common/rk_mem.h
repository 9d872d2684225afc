/* rk_mem.h — the large arrays of a run (prefix rk_mem_).
 *
 * A nightly job fills and frees gigabytes of fresh memory: the triples,
 * both orientations of the matrix, the sort's buffers, the ranking model's
 * values.  In 4 KB pages each gigabyte costs a quarter of a million page
 * faults as it is first written and as many pages to give back when it is
 * freed (in a one-shot process: at exit, after the last file is written).
 * rk_mem_alloc is malloc that asks the kernel for transparent huge pages
 * (madvise MADV_HUGEPAGE) on blocks of 4 MB and more, where the system
 * leaves that choice to the program (the default "madvise" setting of
 * /sys/kernel/mm/transparent_hugepage/enabled).  The
 * advice is only advice: without it, or where it fails, the memory is the
 * same.  Blocks are freed with free().  BENCHMARKS.md has the measurements:
 * on the GPU machine huge pages shorten the load and the exit; in a virtual
 * machine whose memory its host supplies on first touch, a huge page can cost
 * more than the 512 small ones, and the environment variable
 * RECKNN_HUGE_PAGES=0 turns the advice off. */
#ifndef RK_MEM_H
#define RK_MEM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*! rk_mem_alloc() : malloc, with the huge-page advice on blocks of
 *  RK_MEM_HUGE_MIN bytes and more.  Not for blocks that grow by realloc:
 *  moving huge pages with mremap made the loader's parse four times slower
 *  (BENCHMARKS.md).  @return the block, or NULL (errno set) as malloc. */
void *rk_mem_alloc(size_t bytes);

#define RK_MEM_HUGE_MIN ((size_t)4 << 20)

#ifdef __cplusplus
}
#endif

#endif
