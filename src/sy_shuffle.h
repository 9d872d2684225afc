/* sy_shuffle.h — recknn-synth's --shuffle: lines in a seeded random order (prefix sy_shuffle_).
 *
 * The generator makes its lines in blocks (in parallel, each block the same
 * whatever the thread count).  sy_shuffle_write() takes those blocks and
 * writes their lines in a random order that depends only on the seed and the
 * blocks: every line goes to a bucket drawn from a hash of (seed, salt, block,
 * line in block); the buckets are filled in parallel, each bucket is shuffled
 * with its own seeded Fisher–Yates, and the buckets are written in order.
 * Random buckets, then a uniform order inside each, give a uniform
 * permutation.  Memory: the blocks plus one copy of the data (about twice the
 * output), plus a line index per thread for one bucket of a few MB.
 */
#ifndef SY_SHUFFLE_H
#define SY_SHUFFLE_H

#include <stddef.h>
#include <stdint.h>

typedef struct sy_shuffle_block {
    char *p;    /* whole lines ending in '\n'; freed by sy_shuffle_write */
    size_t len;
} sy_shuffle_block;

/*! sy_shuffle_write() : write the lines of blk[0..n) to fd at offset off in a
 *  random order from (seed, salt), with pwrite when `positioned` (a regular
 *  file: buckets are written in parallel), else in order with write().  Frees
 *  every blk[b].p (also on failure).
 *  @return 0, -1 with errno set (write failure), or -2 (out of memory). */
int sy_shuffle_write(sy_shuffle_block *blk, size_t n, uint64_t seed, uint64_t salt, int fd, int positioned,
                     uint64_t off);

#endif /* SY_SHUFFLE_H */
