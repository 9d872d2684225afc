/* recknn-synth --shuffle (synth_shuffle.h).
 *
 * A uniform random permutation without a serial pass: every line draws one of
 * B buckets from a counter-based hash of (seed, line), a stable counting sort
 * groups the lines by bucket, and each bucket is shuffled by Fisher-Yates with
 * a generator seeded from (seed, bucket).  Independent uniform buckets and a
 * uniform order within each give a uniform order overall, and nothing depends
 * on the number of threads.  The output is cut into pieces of whole lines
 * that the threads fill and write at their own offsets. */
#define _POSIX_C_SOURCE 200809L
#include "synth_shuffle.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define SY_SHUF_BUCKET_LINES 65536 /* lines a bucket on average: its shuffle stays in cache */
#define SY_SHUF_PIECE_LINES ((uint64_t)1 << 18)
#define SY_SHUF_SALT UINT64_C(0x5F3759DF2718281B)

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static int nthreads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

static int thread_id(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

static int write_all(int fd, const char *p, size_t n, int positioned, uint64_t off)
{
    while (n > 0) {
        ssize_t k = positioned ? pwrite(fd, p, n, (off_t)off) : write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            if (k == 0) errno = EIO;
            return -1;
        }
        p += k;
        n -= (size_t)k;
        off += (uint64_t)k;
    }
    return 0;
}

/* Line counts: base[b + 1] = the lines of block b, then summed so that base[b] is the index of
 * block b's first line and base[nb] the total. */
static void count_lines(char *const *blocks, const size_t *lens, uint32_t nb, uint64_t *base)
{
#pragma omp parallel for schedule(dynamic, 1)
    for (uint32_t b = 0; b < nb; b++) {
        uint64_t c = 0;
        for (const char *p = blocks[b], *e = blocks[b] + lens[b]; (p = memchr(p, '\n', (size_t)(e - p))) != NULL; p++)
            c++;
        base[b + 1] = c;
    }
    for (uint32_t b = 0; b < nb; b++) base[b + 1] += base[b];
}

/* Every line's start lp[i] and length ll[i] (with its '\n'), block b's from base[b] on. */
static void index_lines(char *const *blocks, const size_t *lens, uint32_t nb, const uint64_t *base,
                        const char **lp, uint32_t *ll)
{
#pragma omp parallel for schedule(dynamic, 1)
    for (uint32_t b = 0; b < nb; b++) {
        uint64_t i = base[b];
        const char *p = blocks[b], *e = blocks[b] + lens[b];
        while (p < e) {
            const char *q = memchr(p, '\n', (size_t)(e - p));
            lp[i] = p;
            ll[i] = (uint32_t)(q - p + 1);
            i++;
            p = q + 1;
        }
    }
}

/* The bucket of line i, of B, drawn from the hash of (sk, i). */
static inline uint64_t bucket_of(uint64_t sk, uint64_t B, uint64_t i)
{
    return (uint64_t)(((mix(sk + UINT64_C(0x9E3779B97F4A7C15) * (i + 1)) >> 32) * B) >> 32);
}

/* perm[0..L): the lines grouped by bucket, in line order within one (a stable counting sort,
 * each of T threads counting and placing its own range of lines); bstart[k] is where bucket
 * k starts, bstart[B] = L.  @return 0, or -1 out of memory. */
static int bucket_lines(uint64_t L, uint64_t B, uint64_t sk, int T, uint64_t *perm, uint64_t *bstart)
{
    uint64_t *hist = calloc((size_t)T * B, sizeof *hist);
    if (hist == NULL) return -1;
#pragma omp parallel num_threads(T)
    {
        const int t = thread_id(), nt = T;
        const uint64_t lo = L * (uint64_t)t / (uint64_t)nt, hi = L * (uint64_t)(t + 1) / (uint64_t)nt;
        uint64_t *h = hist + (size_t)t * B;
        for (uint64_t i = lo; i < hi; i++) h[bucket_of(sk, B, i)]++;
#pragma omp barrier
#pragma omp single
        {
            uint64_t run = 0;
            for (uint64_t k = 0; k < B; k++) {
                bstart[k] = run;
                for (int q = 0; q < nt; q++) {
                    uint64_t c = hist[(size_t)q * B + k];
                    hist[(size_t)q * B + k] = run;
                    run += c;
                }
            }
            bstart[B] = run;
        }
        for (uint64_t i = lo; i < hi; i++) perm[h[bucket_of(sk, B, i)]++] = i;
    }
    free(hist);
    return 0;
}

/* Fisher-Yates within each bucket, a generator seeded from (sk, bucket). */
static void shuffle_buckets(uint64_t *perm, const uint64_t *bstart, uint64_t B, uint64_t sk)
{
#pragma omp parallel for schedule(dynamic, 16)
    for (uint64_t k = 0; k < B; k++) {
        uint64_t s = mix(sk ^ (UINT64_C(0xD1B54A32D192ED03) * (k + 1)));
        uint64_t *a = perm + bstart[k];
        for (uint64_t n = bstart[k + 1] - bstart[k]; n > 1; n--) {
            s += UINT64_C(0x9E3779B97F4A7C15);
            const uint64_t j = (uint64_t)(((unsigned __int128)mix(s) * n) >> 64);
            const uint64_t x = a[n - 1];
            a[n - 1] = a[j];
            a[j] = x;
        }
    }
}

/* Writes lines perm[0..L) in that order: pieces of whole lines, their byte offsets first, then
 * each filled by a thread and written at its offset (positioned) or in order.
 * @return 0, or -1 with *err the failure's errno (ENOMEM, or the write's). */
static int write_pieces(int fd, int positioned, uint64_t off, const char *const *lp, const uint32_t *ll,
                        const uint64_t *perm, uint64_t L, int *err)
{
    const uint64_t np = (L + SY_SHUF_PIECE_LINES - 1) / SY_SHUF_PIECE_LINES;
    uint64_t *poff = calloc(np + 1, sizeof *poff);
    if (poff == NULL) {
        *err = ENOMEM;
        return -1;
    }
#pragma omp parallel for schedule(static)
    for (uint64_t q = 0; q < np; q++) {
        uint64_t s = 0, e = (q + 1) * SY_SHUF_PIECE_LINES < L ? (q + 1) * SY_SHUF_PIECE_LINES : L;
        for (uint64_t i = q * SY_SHUF_PIECE_LINES; i < e; i++) s += ll[perm[i]];
        poff[q + 1] = s;
    }
    for (uint64_t q = 0; q < np; q++) poff[q + 1] += poff[q];
    int failed = 0, ferr = 0;
#pragma omp parallel for schedule(dynamic, 1) ordered
    for (uint64_t q = 0; q < np; q++) {
        int bad;
#pragma omp atomic read
        bad = failed;
        char *buf = bad ? NULL : malloc(poff[q + 1] - poff[q] + 1);
        if (!bad && buf == NULL) {
#pragma omp critical(sy_shuffle_err)
            if (!failed) { failed = 1; ferr = ENOMEM; }
        }
        if (buf != NULL) {
            char *p = buf;
            const uint64_t e = (q + 1) * SY_SHUF_PIECE_LINES < L ? (q + 1) * SY_SHUF_PIECE_LINES : L;
            for (uint64_t i = q * SY_SHUF_PIECE_LINES; i < e; i++) {
                memcpy(p, lp[perm[i]], ll[perm[i]]);
                p += ll[perm[i]];
            }
        }
        if (buf != NULL && positioned && write_all(fd, buf, (size_t)(poff[q + 1] - poff[q]), 1, off + poff[q]) != 0) {
            int en = errno;
#pragma omp critical(sy_shuffle_err)
            if (!failed) { failed = 1; ferr = en; }
        }
#pragma omp ordered
        {
            if (buf != NULL && !positioned && !failed &&
                write_all(fd, buf, (size_t)(poff[q + 1] - poff[q]), 0, 0) != 0) {
                failed = 1;
                ferr = errno;
            }
        }
        free(buf);
    }
    free(poff);
    if (failed) *err = ferr;
    return failed ? -1 : 0;
}

int sy_shuffle_write(int fd, int positioned, uint64_t off, char *const *blocks, const size_t *lens, uint32_t nb,
                     uint64_t seed)
{
    int rc = -1, err = ENOMEM;
    const int T = nthreads();
    uint64_t *base = calloc((size_t)nb + 1, sizeof *base);
    const char **lp = NULL;
    uint32_t *ll = NULL;
    uint64_t *perm = NULL, *bstart = NULL;
    if (base == NULL) goto out;

    /* the lines of each block, their starts and lengths */
    count_lines(blocks, lens, nb, base);
    const uint64_t L = base[nb];
    if (L == 0) {
        rc = 0;
        goto out;
    }
    lp = malloc(L * sizeof *lp);
    ll = malloc(L * sizeof *ll);
    perm = malloc(L * sizeof *perm);
    if (lp == NULL || ll == NULL || perm == NULL) goto out;
    index_lines(blocks, lens, nb, base, lp, ll);

    /* a random order: lines to buckets, then each bucket shuffled */
    uint64_t B = L / SY_SHUF_BUCKET_LINES + 1;
    if (B > ((uint64_t)1 << 20)) B = (uint64_t)1 << 20;
    const uint64_t sk = mix(seed ^ SY_SHUF_SALT);
    bstart = calloc(B + 1, sizeof *bstart);
    if (bstart == NULL || bucket_lines(L, B, sk, T, perm, bstart) != 0) goto out;
    shuffle_buckets(perm, bstart, B, sk);

    /* the lines in that order */
    if (write_pieces(fd, positioned, off, lp, ll, perm, L, &err) != 0) goto out;
    rc = 0;
out:
    free(base);
    free(lp);
    free(ll);
    free(perm);
    free(bstart);
    if (rc != 0) errno = err;
    return rc;
}
