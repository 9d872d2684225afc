/* recknn-synth --shuffle: a seeded, thread-independent random order of the lines (sy_shuffle.h). */
#define _POSIX_C_SOURCE 200809L
#include "sy_shuffle.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Buckets of about 2 MB: a bucket and its line index stay in cache while it
 * is shuffled, and there are enough of them to keep every thread busy. */
#define SY_SHUFFLE_BUCKET_BYTES ((uint64_t)2 << 20)
#define SY_SHUFFLE_MAX_BUCKETS 65536u

static uint64_t sy_shuffle_mix(uint64_t z)
{
    z += UINT64_C(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* The bucket of line l of block b: a hash, so that it does not depend on which
 * thread looks at the block, or when. */
static inline uint32_t sy_shuffle_bucket(uint64_t base, size_t b, uint64_t l, uint32_t nb)
{
    return (uint32_t)(((sy_shuffle_mix(base ^ ((uint64_t)b << 32 | l)) >> 32) * nb) >> 32);
}

static int sy_shuffle_put(int fd, const char *p, size_t n, int positioned, uint64_t off)
{
    while (n > 0) {
        ssize_t k = positioned ? pwrite(fd, p, n, (off_t)off) : write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) { if (k == 0) errno = EIO; return -1; }
        p += k; n -= (size_t)k; off += (uint64_t)k;
    }
    return 0;
}

/* Shuffles the lines of one bucket into tmp (Fisher–Yates over line numbers,
 * its generator seeded from the bucket).  *st and *perm grow as needed.
 * @return 0, or -2 when out of memory. */
static int sy_shuffle_bucket_lines(const char *p, size_t len, char *tmp, uint64_t seed, uint32_t **st,
                                   uint32_t **perm, size_t *cap)
{
    size_t nl = 0;
    for (size_t o = 0; o < len; nl++) {
        if (nl + 2 > *cap) {
            size_t c = *cap ? 2 * *cap : 4096;
            uint32_t *a = realloc(*st, c * sizeof *a), *b;
            if (a == NULL) return -2;
            *st = a;
            if ((b = realloc(*perm, c * sizeof *b)) == NULL) return -2;
            *perm = b;
            *cap = c;
        }
        (*st)[nl] = (uint32_t)o;
        o = (size_t)((const char *)memchr(p + o, '\n', len - o) - p) + 1;
    }
    (*st)[nl] = (uint32_t)len;
    uint32_t *s = *st, *q = *perm;
    for (size_t k = 0; k < nl; k++) q[k] = (uint32_t)k;
    uint64_t x = seed;
    for (size_t k = nl; k > 1; k--) { /* j uniform in [0, k): multiply-shift, k < 2^32 */
        uint32_t j = (uint32_t)(((sy_shuffle_mix(x++) >> 32) * (uint64_t)k) >> 32), t = q[k - 1];
        q[k - 1] = q[j];
        q[j] = t;
    }
    for (size_t k = 0; k < nl; k++) {
        uint32_t a = s[q[k]], n = s[q[k] + 1] - a;
        memcpy(tmp, p + a, n);
        tmp += n;
    }
    return 0;
}

int sy_shuffle_write(sy_shuffle_block *blk, size_t n, uint64_t seed, uint64_t salt, int fd, int positioned,
                     uint64_t off)
{
    uint64_t total = 0, base = sy_shuffle_mix(seed ^ sy_shuffle_mix(salt));
    for (size_t b = 0; b < n; b++) total += blk[b].len;
    uint64_t want = total / SY_SHUFFLE_BUCKET_BYTES + 1;
    uint32_t nb = want > SY_SHUFFLE_MAX_BUCKETS ? SY_SHUFFLE_MAX_BUCKETS : (uint32_t)want;
    uint64_t *cnt = calloc(n * nb + 1, sizeof *cnt), *start = malloc(((size_t)nb + 1) * sizeof *start);
    char *out = malloc(total > 0 ? (size_t)total : 1);
    int rc = 0, err = 0, err_no = 0;
    if (cnt == NULL || start == NULL || out == NULL) {
        rc = -2;
        goto done;
    }
    /* bytes of each (block, bucket), then their places: bucket by bucket, and
     * inside a bucket block by block */
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t b = 0; b < n; b++) {
        const char *p = blk[b].p, *e = p + blk[b].len;
        for (uint64_t l = 0; p < e; l++) {
            const char *q = (const char *)memchr(p, '\n', (size_t)(e - p)) + 1;
            cnt[b * nb + sy_shuffle_bucket(base, b, l, nb)] += (uint64_t)(q - p);
            p = q;
        }
    }
    uint64_t run = 0;
    for (uint32_t k = 0; k < nb; k++) {
        start[k] = run;
        for (size_t b = 0; b < n; b++) {
            uint64_t c = cnt[b * nb + k];
            cnt[b * nb + k] = run;
            run += c;
        }
    }
    start[nb] = run;
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t b = 0; b < n; b++) {
        const char *p = blk[b].p, *e = p + blk[b].len;
        for (uint64_t l = 0; p < e; l++) {
            const char *q = (const char *)memchr(p, '\n', (size_t)(e - p)) + 1;
            uint64_t *at = &cnt[b * nb + sy_shuffle_bucket(base, b, l, nb)];
            memcpy(out + *at, p, (size_t)(q - p));
            *at += (uint64_t)(q - p);
            p = q;
        }
        free(blk[b].p);
        blk[b].p = NULL;
    }
#pragma omp parallel
    {
        uint32_t *st = NULL, *perm = NULL;
        size_t cap = 0, tcap = 0;
        char *tmp = NULL;
#pragma omp for schedule(dynamic, 1)
        for (uint32_t k = 0; k < nb; k++) {
            size_t len = (size_t)(start[k + 1] - start[k]);
            int r, bad;
#pragma omp atomic read
            bad = err;
            if (bad || len == 0) continue;
            if (len > tcap) {
                free(tmp);
                tcap = len;
                if ((tmp = malloc(tcap)) == NULL) tcap = 0;
            }
            r = tmp == NULL ? -2
                            : sy_shuffle_bucket_lines(out + start[k], len, tmp,
                                                      sy_shuffle_mix(sy_shuffle_mix(base ^ UINT64_C(0xB0C4E7)) + k),
                                                      &st, &perm, &cap);
            if (r == 0 && positioned) r = sy_shuffle_put(fd, tmp, len, 1, off + start[k]);
            else if (r == 0) memcpy(out + start[k], tmp, len);
            if (r != 0) {
                int e = r == -2 ? ENOMEM : errno;
#pragma omp critical(sy_shuffle_err)
                if (!err) { err = r; err_no = e; }
            }
        }
        free(tmp);
        free(st);
        free(perm);
    }
    if (err != 0) errno = err_no; /* errno is per thread */
    else if (!positioned && sy_shuffle_put(fd, out, (size_t)total, 0, 0) != 0) err = -1;
    rc = err;
done:
    for (size_t b = 0; b < n; b++) {
        free(blk[b].p);
        blk[b].p = NULL;
    }
    free(cnt);
    free(start);
    free(out);
    return rc;
}
