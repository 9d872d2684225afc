/* bench/zframes.c — compress a file with libzstd into independent frames of
 * about FRAME_MB decoded megabytes each (0: one frame), cut at line ends, in
 * parallel, so that a reader can decode the frames in parallel (what pzstd
 * and zstd's --long multithreaded writers give).  For bench/compressed_load.sh.
 *   cc -O2 -fopenmp bench/zframes.c -lzstd -o zframes && ./zframes IN OUT FRAME_MB LEVEL */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

int main(int argc, char **argv)
{
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
