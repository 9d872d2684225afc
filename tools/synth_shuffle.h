/* synth_shuffle.h — recknn-synth --shuffle: the generated lines written in a
 * seeded random order (prefix sy_shuffle_).  Real exports come in any order;
 * benchmarks need the same ratings sorted and shuffled. */
#ifndef SY_SHUFFLE_H
#define SY_SHUFFLE_H

#include <stddef.h>
#include <stdint.h>

/*! sy_shuffle_write() : write every line of blocks[0..nb) (each block a run of
 *  whole lines ending in '\n', lens[b] bytes) to fd in a random order drawn
 *  from seed alone: the same bytes for any thread count.  positioned: fd is a
 *  regular file written with pwrite from byte `off` by all threads; else the
 *  lines are written in order with write.  Memory: 20 bytes a line besides
 *  the blocks.  @return 0, or -1 with errno set (ENOMEM, or the write's). */
int sy_shuffle_write(int fd, int positioned, uint64_t off, char *const *blocks, const size_t *lens, uint32_t nb,
                     uint64_t seed);

#endif /* SY_SHUFFLE_H */
