/* rk_zsrc.h — compressed rating files (prefix rk_zsrc_), CONTRACT.md §1.
 *
 * A file whose first bytes are gzip's (1f 8b) or zstd's (28 b5 2f fd) magic
 * is decompressed by zlib or libzstd while the loader parses: a thread of
 * its own decodes into a queue of pieces (up to 512 MB ahead of the
 * parse), from which the loader's source pulls as it would read a pipe.  gzip files of several members (pigz, cat a.gz b.gz) and
 * zstd files of several frames are read whole.  zstd frames are decoded in
 * parallel, in batches written in order, when the file has many (zstd -T0
 * --long, pzstd, or `zstd --block-size`-style writers make them); one large
 * frame, and every gzip stream, are decoded by the one thread.  A corrupt or
 * truncated stream is an error naming the file and the byte offset.
 * Internal to etl/ (rk_load.c).
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
 *  offset 0; it stays the caller's) with `threads` threads for zstd frames.
 *  The decoded bytes come from rk_zsrc_pull.  At most `ahead` decoded bytes
 *  wait for the loader (0: 512 MiB), and zstd frames are decoded in batches
 *  of at most half that (a larger frame is streamed in pieces), so that the
 *  decoder holds at most rk_zsrc_held_max(ahead) bytes.  @return RK_OK,
 *  RK_E_IO, RK_E_NOMEM. */
rk_status rk_zsrc_open(int fd, int kind, const char *name, int threads, size_t ahead, rk_zsrc **z, rk_error *err);

/*! rk_zsrc_held_max() : the bytes a decoder opened with `ahead` holds at
 *  most: its queue, a batch of frames, its input and the pieces it decodes. */
size_t rk_zsrc_held_max(size_t ahead);

/*! rk_zsrc_pull() : up to cap decoded bytes into dst, waiting until some
 *  are there (rk_src's pull; ud is the rk_zsrc).  @return the bytes, 0 at
 *  the end of the stream or when the decoder failed (rk_zsrc_close says). */
long rk_zsrc_pull(void *ud, void *dst, size_t cap);

/*! rk_zsrc_close() : stop and wait for the decoder, free z (NULL is fine).
 *  @return RK_OK, or the decoder's failure (RK_E_PARSE: corrupt or
 *  truncated data, RK_E_IO, RK_E_NOMEM) with err set. */
rk_status rk_zsrc_close(rk_zsrc *z, rk_error *err);

#endif /* RK_ZSRC_H */
