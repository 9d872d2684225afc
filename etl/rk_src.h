/* rk_src.h — where the loader's bytes come from: a file descriptor or memory.
 *
 * A regular file is read with pread(2) by several threads and checked for a
 * change of size while it is read; a pipe or terminal with read(2); memory
 * (rk_load_buffer) is handed out in place.  rk_src_next gives the next block
 * of whole lines.  Internal to etl/ (rk_load.c).
 */
#ifndef RK_SRC_H
#define RK_SRC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "rk_load_internal.h"

/* A source: set name, and fd (-1 with mem, mem_len for memory); for a file,
 * nt, and seekable with fsize for a regular one; the rest zero.  The caller
 * frees buf and closes fd. */
typedef struct rk_src {
    const char *name;
    int fd;                       /* -1: memory */
    const char *mem;
    size_t mem_len, mem_pos;
    char *buf;
    size_t cap, len, start;       /* fd: buf[start, len) not yet handed out */
    int eof;
    int nt;                       /* threads for pread */
    int seekable;                 /* a regular file: parallel pread */
    int changed;                  /* a read came up short of the size at open */
    int mem_counted;              /* memory: its bytes were added to *bytes */
    size_t line_max;              /* a block with no newline past want + line_max
                                     bytes is an error (0: no limit) */
    int64_t line_base;            /* lines before the block, for that message */
    /* a decoded source (rk_zsrc): bytes come from pull instead of read(fd);
     * it returns the bytes copied, 0 at the end, -1 with errno */
    long (*pull)(void *ud, void *dst, size_t cap);
    void *pull_ud;
    int pull_whole;               /* pull gives whole units and stops short of one that
                                     does not fit (rk_zsrc's direct mode): a block ends
                                     there instead of asking for a piece of the next */
    off_t fpos, fsize;
    off_t fstop;                  /* a regular file read in part: its bytes end here
                                     (a line start; 0: at the file's end).  The
                                     change-of-size check still compares fsize */
} rk_src;

/* The next block: about `want` bytes of whole lines (the last line may lack
 * its newline only when *last).  Adds the bytes read to *bytes. */
rk_status rk_src_next(rk_src *s, size_t want, const char **p, size_t *n, int *last,
                      int64_t *bytes, rk_error *err);

/* Give back the last n bytes of the block rk_src_next just returned: they
 * start the next block (a row whose quoted field goes on past the block). */
void rk_src_unread(rk_src *s, size_t n);

#endif /* RK_SRC_H */
