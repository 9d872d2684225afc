/* rk_zsrc.h — compressed rating files (prefix rk_zsrc_), CONTRACT.md §1.
 *
 * A file whose first bytes are gzip's (1f 8b) or zstd's (28 b5 2f fd) magic
 * is decompressed by zlib or libzstd while the loader parses: a thread of
 * its own decodes into a pipe, whose read end the loader takes as it takes
 * standard input.  gzip files of several members (pigz, cat a.gz b.gz) and
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
 *  *out_fd gets the read end of the decoded bytes.  @return RK_OK,
 *  RK_E_IO, RK_E_NOMEM. */
rk_status rk_zsrc_open(int fd, int kind, const char *name, int threads, rk_zsrc **z, int *out_fd, rk_error *err);

/*! rk_zsrc_close() : close the read end, wait for the decoder and free z
 *  (NULL is fine).  @return RK_OK, or the decoder's failure (RK_E_PARSE:
 *  corrupt or truncated data, RK_E_IO, RK_E_NOMEM) when the reader got to
 *  the end (read_all); a reader that stopped early gets RK_OK. */
rk_status rk_zsrc_close(rk_zsrc *z, int read_all, rk_error *err);

#endif /* RK_ZSRC_H */
