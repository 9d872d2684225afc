/* Unit tests of compressed input (etl/rk_zsrc.c) through the loader: files
 * of many zstd frames and BGZF blocks, decoded in parallel straight into the
 * loader's blocks, give the same data as the plain file for every block
 * size and thread count: frames and members cut anywhere (inside a line,
 * inside a quoted field), empty ones, a skippable frame first (pzstd), a
 * frame larger than a block; single-stream files through the decoder
 * thread; a corrupt frame or member named by its compressed offset. */
#define _POSIX_C_SOURCE 200809L
#include "test_load_util.h"
#include "rk_zsrc.h"

#include <stdint.h>
#include <zlib.h>
#include <zstd.h>

static char g_dir[] = "/tmp/rk_test_zsrc_XXXXXX";

/* The test's rating text: quoted ids with commas and line breaks, so that a
 * cut falls inside a quoted field somewhere. */
static sbuf ratings_text(unsigned seed, int lines)
{
    sbuf b = {calloc(1, 64), 0, 64};
    sb_printf(&b, "user,item,rating\n");
    for (int k = 0; k < lines; k++) {
        seed = seed * 1103515245u + 12345u;
        const unsigned u = (seed >> 8) % 97, i = (seed >> 16) % 61, r = 1 + (seed >> 24) % 5;
        if (k % 13 == 0) sb_printf(&b, "\"u,%u\n\",\"i\"\"%u\",%u\n", u, i, r);
        else sb_printf(&b, "%u,%u,%u.5\n", u, i, r);
    }
    return b;
}

/* Cut points of n bytes: pieces of 1..max bytes, some empty. */
static size_t cuts(size_t n, size_t max, unsigned seed, size_t *at, size_t cap)
{
    size_t k = 0, pos = 0;
    at[k++] = 0;
    while (pos < n && k + 2 < cap) {
        seed = seed * 1664525u + 1013904223u;
        size_t len = (seed >> 4) % 7 == 0 ? 0 : 1 + (seed >> 8) % max;
        pos = pos + len > n ? n : pos + len;
        at[k++] = pos;
    }
    at[k++] = n;
    return k;
}

static void put(FILE *f, const void *p, size_t n)
{
    CU_ASSERT_EQUAL_FATAL(fwrite(p, 1, n, f), n);
}

/* text as zstd frames cut at `at` (with their sizes), after a skippable frame. */
static void write_zstd(const char *path, const sbuf *t, const size_t *at, size_t na)
{
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    const unsigned char skip[12] = {0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 1, 2, 3, 4};
    put(f, skip, sizeof skip);
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    CU_ASSERT_FATAL(cc != NULL && !ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1)));
    for (size_t k = 0; k + 1 < na; k++) {
        const size_t len = at[k + 1] - at[k], bound = ZSTD_compressBound(len);
        void *o = malloc(bound);
        const size_t c = ZSTD_compress2(cc, o, bound, t->s + at[k], len);
        CU_ASSERT_FATAL(!ZSTD_isError(c));
        put(f, o, c);
        free(o);
    }
    ZSTD_freeCCtx(cc);
    CU_ASSERT_EQUAL(fclose(f), 0);
}

/* One BGZF block of p[0..n) (n <= 65280). */
static void bgzf_block(FILE *f, const char *p, size_t n)
{
    unsigned char out[70000];
    z_stream z;
    memset(&z, 0, sizeof z);
    CU_ASSERT_EQUAL_FATAL(deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
    z.next_in = (unsigned char *)(uintptr_t)p;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = sizeof out;
    CU_ASSERT_EQUAL_FATAL(deflate(&z, Z_FINISH), Z_STREAM_END);
    const size_t c = sizeof out - z.avail_out, bsize = 18 + c + 8 - 1;
    deflateEnd(&z);
    const unsigned char h[18] = {0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 255, 6, 0, 'B', 'C', 2, 0,
                                 (unsigned char)(bsize & 255), (unsigned char)(bsize >> 8)};
    const unsigned long crc = crc32(0, (const unsigned char *)p, (uInt)n);
    const unsigned char tr[8] = {crc & 255, (crc >> 8) & 255, (crc >> 16) & 255, (crc >> 24) & 255,
                                 n & 255, (n >> 8) & 255, (n >> 16) & 255, 0};
    put(f, h, sizeof h);
    put(f, out, c);
    put(f, tr, sizeof tr);
}

static void write_bgzf(const char *path, const sbuf *t, const size_t *at, size_t na)
{
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    for (size_t k = 0; k + 1 < na; k++) bgzf_block(f, t->s + at[k], at[k + 1] - at[k]);
    bgzf_block(f, "", 0); /* bgzip's end-of-file block */
    CU_ASSERT_EQUAL(fclose(f), 0);
}

static char *load_text(const char *path, size_t chunk, int threads)
{
    rk_load_opts o;
    rk_dataset d;
    rk_error e = {0};
    rk_load_opts_default(&o);
    o.chunk_bytes = chunk;
    o.threads = threads;
    const rk_status s = rk_load_dataset(&path, 1, NULL, &o, &d, &e);
    if (s != RK_OK) fprintf(stderr, "\n%s (chunk %zu, %d threads): %s\n", path, chunk, threads, e.msg);
    CU_ASSERT_EQUAL_FATAL(s, RK_OK);
    char *got = render(&d, &d.train);
    rk_dataset_free(&d);
    return got;
}

/* Every block size and thread count gives the plain file's data. */
static void check_same(const char *packed, const char *want)
{
    const size_t chunks[] = {0, 300, 4096, 20000};
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++)
        for (int th = 1; th <= 3; th += 2) {
            char *got = load_text(packed, chunks[c], th);
            if (strcmp(got, want) != 0) fprintf(stderr, "\n%s: chunk %zu, %d threads differ\n", packed, chunks[c], th);
            CU_ASSERT_STRING_EQUAL(got, want);
            free(got);
        }
}

static void test_units(void)
{
    sbuf t = ratings_text(7, 6000);
    char plain[256], zst[256], gz[256];
    snprintf(plain, sizeof plain, "%s/r.csv", g_dir);
    snprintf(zst, sizeof zst, "%s/r.csv.zst", g_dir);
    snprintf(gz, sizeof gz, "%s/r.csv.gz", g_dir);
    FILE *f = fopen(plain, "wb");
    put(f, t.s, t.n);
    fclose(f);
    char *want = load_text(plain, 0, 1);
    size_t at[4096];
    /* small frames: many per block; large ones: a frame over a block's bytes */
    const size_t max[] = {97, 5000, 60000};
    for (size_t m = 0; m < sizeof max / sizeof max[0]; m++) {
        size_t na = cuts(t.n, max[m], 11u + (unsigned)m, at, sizeof at / sizeof at[0]);
        write_zstd(zst, &t, at, na);
        check_same(zst, want);
        na = cuts(t.n, max[m] < 65280 ? max[m] : 65280, 23u + (unsigned)m, at, sizeof at / sizeof at[0]);
        write_bgzf(gz, &t, at, na);
        check_same(gz, want);
    }
    /* one stream each: the decoder thread */
    at[0] = 0;
    at[1] = t.n;
    write_zstd(zst, &t, at, 2);
    check_same(zst, want);
    free(want);
    free(t.s);
    unlink(plain);
    unlink(zst);
    unlink(gz);
}

/* A corrupt frame or member: RK_E_PARSE naming its compressed offset. */
static void test_corrupt(void)
{
    sbuf t = ratings_text(3, 3000);
    char zst[256], gz[256], want[64];
    snprintf(zst, sizeof zst, "%s/c.csv.zst", g_dir);
    snprintf(gz, sizeof gz, "%s/c.csv.gz", g_dir);
    size_t at[4096];
    size_t na = cuts(t.n, 3000, 5, at, sizeof at / sizeof at[0]);
    const char *paths[2] = {zst, gz};
    write_zstd(zst, &t, at, na);
    write_bgzf(gz, &t, at, na);
    for (int p = 0; p < 2; p++) {
        /* find the third unit's offset from the file itself, then spoil its middle */
        FILE *f = fopen(paths[p], "r+b");
        unsigned char b[1 << 16];
        size_t n = fread(b, 1, sizeof b, f);
        /* the first unit after the second with room for the damage */
        size_t off = p == 0 ? 12 : 0, len = 0;
        for (int unit = 0; unit < 2 || len < 64; unit++) {
            off += len;
            len = p == 0 ? ZSTD_findFrameCompressedSize(b + off, n - off)
                         : (size_t)b[off + 16] + ((size_t)b[off + 17] << 8) + 1;
            CU_ASSERT_FATAL(off + len < n);
        }
        fseek(f, (long)(off + 20), SEEK_SET);
        put(f, "XXXXXXXXXXXX", 12);
        fclose(f);
        rk_load_opts o;
        rk_load_opts_default(&o);
        o.threads = 3;
        o.chunk_bytes = 1000;
        const char *msg = load_fail(paths[p], &o, RK_E_PARSE);
        snprintf(want, sizeof want, "corrupt %s data in the %s at compressed byte %zu", p == 0 ? "zstd" : "gzip",
                 p == 0 ? "frame" : "member", off);
        if (strstr(msg, want) == NULL) fprintf(stderr, "\n%s: %s\n", paths[p], msg);
        CU_ASSERT_PTR_NOT_NULL(strstr(msg, want));
        unlink(paths[p]);
    }
    free(t.s);
}

static void test_magic(void)
{
    const unsigned char gz[] = {0x1f, 0x8b}, zs[] = {0x28, 0xb5, 0x2f, 0xfd}, sk[] = {0x5e, 0x2a, 0x4d, 0x18},
                        no[] = {0x4e, 0x2a, 0x4d, 0x18};
    CU_ASSERT_EQUAL(rk_zsrc_kind(gz, 2), RK_ZSRC_GZIP);
    CU_ASSERT_EQUAL(rk_zsrc_kind(zs, 4), RK_ZSRC_ZSTD);
    CU_ASSERT_EQUAL(rk_zsrc_kind(sk, 4), RK_ZSRC_ZSTD);
    CU_ASSERT_EQUAL(rk_zsrc_kind(no, 4), RK_ZSRC_NONE);
    CU_ASSERT_EQUAL(rk_zsrc_kind(zs, 3), RK_ZSRC_NONE);
}

int main(void)
{
    if (mkdtemp(g_dir) == NULL) return 99;
    static const rk_test_case cases[] = {
        {"magic bytes", test_magic},
        {"zstd frames and BGZF blocks against the plain file", test_units},
        {"a corrupt frame or member", test_corrupt},
        {NULL, NULL},
    };
    int rc = rk_test_main("zsrc", cases);
    rmdir(g_dir);
    return rc;
}
