/* bench/zframes.c — compress a file with libzstd into independent frames of
 * about FRAME_MB decoded megabytes each (0: one frame), cut at line ends, in
 * parallel, so that a reader can decode the frames in parallel (what pzstd
 * and zstd's --long multithreaded writers give); or, with LEVEL "bgzf", into
 * BGZF blocks of 65280 bytes (what bgzip writes; gzip level 6).  For
 * bench/compressed_load.sh.
 *   cc -O2 -fopenmp bench/zframes.c -lzstd -lz -o zframes && ./zframes IN OUT FRAME_MB LEVEL|bgzf */
#include <zlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

/* b[0..n) as BGZF blocks into path, compressed in parallel.  @return 0, 1. */
static int bgzf(const char *b, size_t n, const char *path)
{
    const size_t piece = 65280, nb = (n + piece - 1) / piece + 1; /* + bgzip's empty last block */
    unsigned char (*out)[65536 + 26] = malloc(nb * sizeof *out);
    size_t *olen = calloc(nb, sizeof *olen);
    if (out == NULL || olen == NULL) return fprintf(stderr, "out of memory\n"), 1;
    int bad = 0;
#pragma omp parallel for schedule(dynamic, 64) reduction(| : bad)
    for (size_t k = 0; k < nb; k++) {
        const size_t at = k * piece, len = at >= n ? 0 : n - at < piece ? n - at : piece;
        unsigned char *o = out[k];
        z_stream z;
        memset(&z, 0, sizeof z);
        if (deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) { bad = 1; continue; }
        z.next_in = (unsigned char *)b + (len ? at : 0);
        z.avail_in = (uInt)len;
        z.next_out = o + 18;
        z.avail_out = 65536;
        bad |= deflate(&z, Z_FINISH) != Z_STREAM_END;
        const size_t c = 65536 - z.avail_out, bsize = 18 + c + 8 - 1;
        deflateEnd(&z);
        const unsigned long crc = crc32(0, (const unsigned char *)b + (len ? at : 0), (uInt)len);
        const unsigned char h[18] = {0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 255, 6, 0, 'B', 'C', 2, 0,
                                     (unsigned char)(bsize & 255), (unsigned char)(bsize >> 8)};
        memcpy(o, h, 18);
        for (int i = 0; i < 4; i++) {
            o[18 + c + i] = (unsigned char)(crc >> (8 * i));
            o[22 + c + i] = (unsigned char)(len >> (8 * i));
        }
        olen[k] = bsize + 1;
    }
    FILE *f = bad ? NULL : fopen(path, "wb");
    if (f == NULL) return fprintf(stderr, "%s: cannot write BGZF\n", path), 1;
    for (size_t k = 0; k < nb; k++) fwrite(out[k], 1, olen[k], f);
    if (fclose(f) != 0) return perror(path), 1;
    fprintf(stderr, "%s: %zu BGZF blocks\n", path, nb);
    return 0;
}

/* -d FILE: decode FILE's zstd frames (with recorded sizes) in parallel into
 * one buffer, twice (first touch, then warm), and print the seconds: the
 * decode floor of the direct mode on this machine, without any parse. */
#include <omp.h>
static int decode_bench(const char *path)
{
    FILE *in = fopen(path, "rb");
    if (in == NULL) return perror(path), 1;
    fseek(in, 0, SEEK_END);
    long n = ftell(in);
    rewind(in);
    unsigned char *b = malloc((size_t)n);
    if (b == NULL || fread(b, 1, (size_t)n, in) != (size_t)n) return perror("read"), 1;
    fclose(in);
    size_t nf = 0, cap = 1024, *off = malloc(cap * sizeof *off), *dst = malloc(cap * sizeof *dst), total = 0;
    for (size_t at = 0; at < (size_t)n; nf++) {
        if (nf + 1 >= cap) {
            off = realloc(off, (cap *= 2) * sizeof *off);
            dst = realloc(dst, cap * sizeof *dst);
        }
        off[nf] = at;
        dst[nf] = total;
        total += ZSTD_getFrameContentSize(b + at, (size_t)n - at);
        at += ZSTD_findFrameCompressedSize(b + at, (size_t)n - at);
    }
    off[nf] = (size_t)n;
    char *out = malloc(total);
    for (int pass = 0; pass < 2; pass++) {
        double t = omp_get_wtime();
#pragma omp parallel
        {
            ZSTD_DCtx *d = ZSTD_createDCtx();
#pragma omp for schedule(dynamic, 1)
            for (size_t f = 0; f < nf; f++)
                ZSTD_decompressDCtx(d, out + dst[f], total - dst[f], b + off[f], off[f + 1] - off[f]);
            ZSTD_freeDCtx(d);
        }
        printf("decode %zu frames, %zu bytes, %d threads, %s: %.3f s\n", nf, total, omp_get_max_threads(),
               pass ? "warm" : "first touch", omp_get_wtime() - t);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "-d") == 0) return decode_bench(argv[2]);
    if (argc != 5) {
        fprintf(stderr, "usage: %s IN OUT FRAME_MB LEVEL\n", argv[0]);
        return 2;
    }
    FILE *in = fopen(argv[1], "rb");
    if (in == NULL) return perror(argv[1]), 1;
    fseek(in, 0, SEEK_END);
    long n = ftell(in);
    rewind(in);
    char *b = malloc((size_t)n + 1);
    if (b == NULL || fread(b, 1, (size_t)n, in) != (size_t)n) return perror("read"), 1;
    fclose(in);
    if (strcmp(argv[4], "bgzf") == 0) return bgzf(b, (size_t)n, argv[2]);
    const size_t frame = (size_t)atol(argv[3]) << 20;
    const int level = atoi(argv[4]);
    size_t cap = 16, nf = 0, *cut = malloc(cap * sizeof *cut);
    cut[nf++] = 0;
    for (size_t at = 0; frame > 0 && at + frame < (size_t)n;) {
        size_t e = at + frame;
        while (e < (size_t)n && b[e - 1] != '\n') e++;
        if (nf == cap) cut = realloc(cut, (cap *= 2) * sizeof *cut);
        cut[nf++] = at = e;
    }
    if (nf == cap) cut = realloc(cut, (cap + 1) * sizeof *cut);
    cut[nf] = (size_t)n;
    void **out = calloc(nf, sizeof *out);
    size_t *olen = calloc(nf, sizeof *olen);
    int bad = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(| : bad)
    for (size_t f = 0; f < nf; f++) {
        const size_t len = cut[f + 1] - cut[f], bound = ZSTD_compressBound(len);
        out[f] = malloc(bound);
        olen[f] = out[f] != NULL ? ZSTD_compress(out[f], bound, b + cut[f], len, level) : 0;
        bad |= out[f] == NULL || ZSTD_isError(olen[f]);
    }
    if (bad) return fprintf(stderr, "compression failed\n"), 1;
    FILE *o = fopen(argv[2], "wb");
    if (o == NULL) return perror(argv[2]), 1;
    size_t total = 0;
    for (size_t f = 0; f < nf; f++) {
        fwrite(out[f], 1, olen[f], o);
        total += olen[f];
    }
    if (fclose(o) != 0) return perror(argv[2]), 1;
    fprintf(stderr, "%s: %zu frame%s, %zu -> %zu bytes\n", argv[2], nf, nf == 1 ? "" : "s", (size_t)n, total);
    return 0;
}
