/* rk_zsrc.h — compressed rating files (prefix rk_zsrc_), CONTRACT.md §1.
 *
 * A file whose first bytes are gzip's (1f 8b) or zstd's (28 b5 2f fd, or a
 * skippable frame's, as pzstd writes first) magic is decoded by zlib or
 * libzstd while the loader reads it, in one of two ways:
 *  - direct: a regular file of at least two units whose decoded sizes are
 *    known before decoding (zstd frames that record their content size, as
 *    pzstd and zstd --long multithreaded writers make; BGZF blocks, as bgzip
 *    makes) is mapped, and each rk_zsrc_pull decodes the units that fit in
 *    the loader's buffer in parallel, straight into it (no thread, no
 *    queue, no copy); a unit larger than the buffer goes through a spill
 *    buffer;
 *  - streamed: anything else (one zstd frame, a gzip stream of any members)
 *    is decoded by a thread of its own into a queue of pieces (up to 512 MB
 *    ahead of the parse), pulled as from a pipe: one core decodes.
 * A corrupt or truncated stream is an error naming the file and the
 * compressed byte offset.  Internal to etl/ (rk_load.c).
 */
#ifndef RK_ZSRC_H
#define RK_ZSRC_H

#include <stddef.h>
#include "rk_status.h"

typedef struct rk_zsrc rk_zsrc;

/* Compression formats. */
enum { RK_ZSRC_NONE = 0, RK_ZSRC_GZIP, RK_ZSRC_ZSTD };

/*! rk_zsrc_kind() : the format that the n bytes at p (a file's first bytes)
 *  announce: RK_ZSRC_GZIP, RK_ZSRC_ZSTD or RK_ZSRC_NONE. */
int rk_zsrc_kind(const unsigned char *p, size_t n);

/*! rk_zsrc_open() : start decoding fd (a compressed file of kind, read from
 *  offset 0; it stays the caller's) with `threads` threads for direct mode.
 *  The decoded bytes come from rk_zsrc_pull.  Streamed, at most `ahead`
 *  decoded bytes wait for the loader (0: 512 MiB); direct mode is taken only
 *  when no unit decodes to more than half of that (the spill buffer), so
 *  that the decoder holds at most rk_zsrc_held_max(ahead) bytes beside the
 *  loader's own buffer.  @return RK_OK, RK_E_IO, RK_E_NOMEM. */
rk_status rk_zsrc_open(int fd, int kind, const char *name, int threads, size_t ahead, rk_zsrc **z, rk_error *err);

/*! rk_zsrc_held_max() : the bytes a decoder opened with `ahead` holds at
 *  most: its queue, its input and the pieces it decodes (streamed), or a
 *  spilled unit (direct). */
size_t rk_zsrc_held_max(size_t ahead);

/*! rk_zsrc_whole() : @return 1 when z decodes whole units in rk_zsrc_pull
 *  and returns short of one that does not fit (direct mode): the caller
 *  then takes a short pull as a whole block (rk_src's pull_whole). */
int rk_zsrc_whole(const rk_zsrc *z);

/*! rk_zsrc_pull() : up to cap decoded bytes into dst, waiting until some
 *  are there (rk_src's pull; ud is the rk_zsrc).  @return the bytes, 0 at
 *  the end of the stream or when the decoder failed (rk_zsrc_close says). */
long rk_zsrc_pull(void *ud, void *dst, size_t cap);

/*! rk_zsrc_close() : stop and wait for the decoder, free z (NULL is fine).
 *  @return RK_OK, or the decoder's failure (RK_E_PARSE: corrupt or
 *  truncated data, RK_E_IO, RK_E_NOMEM) with err set. */
rk_status rk_zsrc_close(rk_zsrc *z, rk_error *err);

#endif /* RK_ZSRC_H */
