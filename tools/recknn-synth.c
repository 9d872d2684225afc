/* recknn-synth.c — synthetic MovieLens-like rating files for tests and benchmarks.
 *
 * Model (all constants below):
 *  - user activity: every user gets a floor of ratings (20, less when R/N is small), the rest is
 *    shared out in proportion to lognormal weights, capped per user; the total is exactly R;
 *  - item popularity: lognormal weights with a soft cap (at ML-20M size: item counts have
 *    quartiles 3/19/156 and a top item rated by 38% of users; ML-20M: 3/18/205, 49%); items are
 *    drawn per user by weight without replacement (alias table plus rejection, an exponential
 *    race over the rest when rejection gets slow);
 *    when R >= M every item is given to one random user first, so every item id occurs;
 *  - with --communities C (taste structure, e.g. for approximate neighbour search): users and
 *    items fall into C communities by a hash of (seed, id); a user's draw comes from their
 *    community's alias table with probability --affinity, else from the whole catalogue's;
 *    without it no community is drawn or hashed, so the output is that of earlier versions;
 *  - rating: mu + b_u + b_i + s_u * <p_u, q_i> + noise, skewed (MovieLens is left-skewed),
 *    rounded to half stars, or to whole stars before 2003-02-18 (when MovieLens introduced
 *    half stars) and by a per-user habit after; clipped to 0.5..5;
 *  - timestamps: each user rates over one span placed in 1995-01-09..2015-03-31, increasing in
 *    draw order; lines are written per user in ascending item id, like ML-20M, or with --shuffle
 *    in a random order drawn from the seed (synth_shuffle.c), as nightly exports often come.
 * Every user has its own RNG streams seeded from (seed, user), so the output does not depend on
 * the number of threads; the test split uses a separate stream, so train + test is the same data
 * as a run without --test-output. */
#define _POSIX_C_SOURCE 200809L
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "synth_shuffle.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#include "synth_model.h"

/* ---- per-thread workspace and output buffers ---- */
typedef struct { char *p; size_t len, cap; } sy_buf;

typedef struct { double key; uint32_t item; } sy_keyed;

typedef struct {
    uint32_t *mark, stamp;
    uint32_t *items, *perm, *ts;
    uint64_t *keys, *tmp;
    uint8_t *halves, *in_test;
    sy_keyed *race;         /* fallback sampler, allocated on first use */
    sy_buf out, test;
    uint64_t n_test;
} sy_ws;

static int sy_buf_reserve(sy_buf *b, size_t more)
{
    if (b->len + more <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : (size_t)1 << 20;
    while (cap < b->len + more) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) return -1;
    b->p = p; b->cap = cap;
    return 0;
}

static void sy_ws_free(sy_ws *w)
{
    free(w->mark); free(w->tmp); free(w->items); free(w->perm); free(w->ts); free(w->keys);
    free(w->halves); free(w->in_test); free(w->race); free(w->out.p); free(w->test.p);
}

static int sy_ws_init(sy_ws *w, const sy_model *m)
{
    memset(w, 0, sizeof *w);
    size_t n = m->max_count;
    w->mark = calloc(m->n_items, sizeof *w->mark);
    w->tmp = sy_alloc(n, sizeof *w->tmp);
    w->items = sy_alloc(n, sizeof *w->items);
    w->perm = sy_alloc(n + 1, sizeof *w->perm);  /* also the bucket counts of sy_sort_keys */
    w->ts = sy_alloc(n, sizeof *w->ts);
    w->keys = sy_alloc(n, sizeof *w->keys);
    w->halves = sy_alloc(n, 1);
    w->in_test = sy_alloc(n, 1);
    if (!w->mark || !w->tmp || !w->items || !w->perm || !w->ts || !w->keys || !w->halves || !w->in_test) {
        sy_ws_free(w);
        memset(w, 0, sizeof *w);
        return -1;
    }
    return 0;
}

/* ---- hand-written formatting ---- */
static const char sy_digits2[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static inline char *sy_put_u64(char *p, uint64_t v)
{
    int n = 1;
    for (uint64_t t = 10; n < 20 && v >= t; t *= 10) n++;
    char *e = p + n, *q = e;
    while (v >= 100) {
        unsigned d = (unsigned)(v % 100) * 2;
        v /= 100;
        q -= 2; q[0] = sy_digits2[d]; q[1] = sy_digits2[d + 1];
    }
    if (v >= 10) { q -= 2; q[0] = sy_digits2[2 * v]; q[1] = sy_digits2[2 * v + 1]; }
    else *--q = (char)('0' + v);
    return e;
}

/* Ratings in half stars 1..10, as 4-byte cells (copied whole, advanced by the length). */
static const char sy_rating_long[11][4] = {
    "0.0", "0.5", "1.0", "1.5", "2.0", "2.5", "3.0", "3.5", "4.0", "4.5", "5.0" };
static const char sy_rating_short[11][4] = {
    "0", "0.5", "1", "1.5", "2", "2.5", "3", "3.5", "4", "4.5", "5" };

static inline char *sy_put_sep(char *p, enum sy_format f)
{
    if (f == SY_FMT_DAT) { p[0] = ':'; p[1] = ':'; return p + 2; }
    *p = f == SY_FMT_TSV ? '\t' : ',';
    return p + 1;
}

/* Writes one line; the buffer needs SY_MAX_LINE bytes of room. */
static inline char *sy_put_line(char *p, enum sy_format f, uint32_t user, uint64_t item, unsigned h, uint32_t ts)
{
    p = sy_put_sep(sy_put_u64(p, user), f);
    p = sy_put_sep(sy_put_u64(p, item), f);
    if (f == SY_FMT_MOVIELENS) { memcpy(p, sy_rating_long[h], 4); p += 3; }
    else { memcpy(p, sy_rating_short[h], 4); p += h & 1 ? 3 : 1; }
    p = sy_put_sep(p, f);
    p = sy_put_u64(p, ts);
    *p++ = '\n';
    return p;
}

/* ---- sampling items without replacement ---- */
/* Rearranges a[0..n) so that a[0..k) hold the k smallest keys (quickselect, three-way partition). */
static void sy_select_smallest(sy_keyed *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n;
    while (hi - lo > 1 && k > lo && k < hi) {
        double a0 = a[lo].key, a1 = a[lo + (hi - lo) / 2].key, a2 = a[hi - 1].key;
        double piv = a0 < a1 ? (a1 < a2 ? a1 : (a0 < a2 ? a2 : a0)) : (a0 < a2 ? a0 : (a1 < a2 ? a2 : a1));
        size_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            sy_keyed t = a[i];
            if (t.key < piv) { a[i++] = a[lt]; a[lt++] = t; }
            else if (t.key > piv) { a[i] = a[--gt]; a[gt] = t; }
            else i++;
        }
        if (k < lt) hi = lt;
        else if (k > gt) lo = gt;
        else break;
    }
}

static int sy_cmp_keyed(const void *x, const void *y)
{
    const sy_keyed *a = x, *b = y;
    return a->key < b->key ? -1 : a->key > b->key ? 1 : (a->item > b->item) - (a->item < b->item);
}

/* Sorts in[0..n) (item << 32 | k, distinct) into out by item: a counting pass into n buckets of
 * the item range, then insertion sort. Drawn items are spread evenly over the index range
 * (popularity does not depend on the index), so buckets hold about one key: O(n) expected. */
static void sy_sort_keys(const uint64_t *in, uint64_t *out, uint32_t *cnt, uint32_t n, uint32_t n_items)
{
    uint64_t scale = ((uint64_t)n << 32) / n_items;  /* bucket = item * n / n_items, < n */
    memset(cnt, 0, ((size_t)n + 1) * sizeof *cnt);
    for (uint32_t k = 0; k < n; k++) cnt[(((in[k] >> 32) * scale) >> 32) + 1]++;
    for (uint32_t b = 0; b < n; b++) cnt[b + 1] += cnt[b];
    for (uint32_t k = 0; k < n; k++) out[cnt[((in[k] >> 32) * scale) >> 32]++] = in[k];
    for (uint32_t i = 1; i < n; i++) {
        uint64_t v = out[i];
        uint32_t j = i;
        while (j > 0 && out[j - 1] > v) { out[j] = out[j - 1]; j--; }
        out[j] = v;
    }
}

/* Fills w->items[0..n) in draw order; returns -1 only when the fallback cannot allocate. */
static int sy_sample(const sy_model *m, sy_ws *w, sy_rng *r, uint32_t u, uint32_t n)
{
    if (++w->stamp == 0) { memset(w->mark, 0, (size_t)m->n_items * sizeof *w->mark); w->stamp = 1; }
    uint32_t got = 0, st = w->stamp;
    for (uint64_t f = m->forced_off[u]; f < m->forced_off[u + 1]; f++) {
        w->mark[m->forced[f]] = st;
        w->items[got++] = m->forced[f];
    }
    uint32_t nforced = got;
    uint64_t tries = 0, limit = 4 * (uint64_t)n + 256;
    /* --communities: the user's community, when it has items (else every draw is global) */
    uint32_t cu = m->n_comm ? sy_community(m->seed, SY_SALT_USER_COMM, u, m->n_comm) : 0;
    int comm = m->n_comm && m->comm_off[cu + 1] > m->comm_off[cu];
    while (got < n && tries++ < limit) {
        uint32_t i = comm && sy_unif(r) < m->affinity ? sy_comm_draw(m, r, cu) : sy_alias_draw(m, r);
        if (w->mark[i] != st) { w->mark[i] = st; w->items[got++] = i; }
    }
    if (got < n) {  /* exponential race over the items left: same law as drawing on */
        if (!w->race && !(w->race = sy_alloc(m->n_items, sizeof *w->race))) return -1;
        size_t nr = 0, need = n - got;
        for (uint32_t i = 0; i < m->n_items; i++)
            if (w->mark[i] != st) { w->race[nr].key = -log(sy_unif_pos(r)) / m->weight[i]; w->race[nr++].item = i; }
        sy_select_smallest(w->race, nr, need);
        qsort(w->race, need, sizeof *w->race, sy_cmp_keyed);
        for (size_t k = 0; k < need; k++) { w->mark[w->race[k].item] = st; w->items[got++] = w->race[k].item; }
    }
    for (uint32_t k = 0; k < nforced; k++) {  /* forced items at random places in time */
        uint32_t j = sy_below(r, n), t = w->items[k];
        w->items[k] = w->items[j]; w->items[j] = t;
    }
    return 0;
}

/* Generates user u (0-based) into w->out / w->test. */
static int sy_gen_user(const sy_model *m, sy_ws *w, uint32_t u)
{
    uint32_t n = m->count[u];
    sy_rng r;
    sy_rng_seed(&r, m->seed, (uint64_t)u);
    float p[SY_DIM];
    double bu = SY_USER_BIAS_SD * sy_normal(&r);
    double su = exp(SY_USER_SCALE_SD * sy_normal(&r)) * SY_INTER_SD / sqrt((double)SY_DIM);
    for (int d = 0; d < SY_DIM; d++) p[d] = (float)(su * sy_normal(&r));
    double whole = SY_WHOLE_MAX * sy_unif(&r);
    double span = SY_SPAN_MEDIAN * exp(SY_SPAN_LOG_SD * sy_normal(&r)), range = SY_T_END - SY_T_BEGIN;
    if (span < 15.0 * n) span = 15.0 * n;
    if (span > range) span = range;
    double t0 = SY_T_BEGIN + sy_unif(&r) * (range - span);
    if (sy_sample(m, w, &r, u, n) != 0) return -1;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = w->items[k];
        const float *q = m->item_fac + (size_t)i * SY_DIM;
        float dot = 0;
        for (int d = 0; d < SY_DIM; d++) dot += p[d] * q[d];
        double z = bu + m->item_bias[i] + dot + SY_NOISE_SD * sy_normal_fast(&r);
        double v = SY_MU + z - SY_SKEW * z * z;
        uint32_t ts = (uint32_t)(t0 + span * ((double)k + sy_unif(&r)) / n);
        int h;
        if (ts < SY_HALF_STAR_EPOCH || sy_unif(&r) < whole) {
            h = 2 * (int)floor(v + 0.5);
            h = h < 2 ? 2 : h > 10 ? 10 : h;
        } else {
            h = (int)floor(2.0 * v + 0.5);
            h = h < 1 ? 1 : h > 10 ? 10 : h;
        }
        w->halves[k] = (uint8_t)h;
        w->ts[k] = ts;
        w->tmp[k] = (uint64_t)i << 32 | k;
        w->in_test[k] = 0;
    }
    if (m->test_fraction > 0 && n > 1) {
        sy_rng rs;
        sy_rng_seed(&rs, m->seed ^ SY_SALT_SPLIT, (uint64_t)u);
        double want = floor(m->test_fraction * n + sy_unif(&rs));
        uint32_t t = want > n - 1 ? n - 1 : (uint32_t)want;
        for (uint32_t k = 0; k < n; k++) w->perm[k] = k;
        for (uint32_t k = 0; k < t; k++) {
            uint32_t j = k + sy_below(&rs, n - k), x = w->perm[j];
            w->perm[j] = w->perm[k]; w->perm[k] = x;
            w->in_test[x] = 1;
        }
    }
    sy_sort_keys(w->tmp, w->keys, w->perm, n, m->n_items);
    if (sy_buf_reserve(&w->out, (size_t)n * SY_MAX_LINE) || sy_buf_reserve(&w->test, (size_t)n * SY_MAX_LINE))
        return -1;
    char *po = w->out.p + w->out.len, *pt = w->test.p + w->test.len;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t j = (uint32_t)w->keys[k], i = (uint32_t)(w->keys[k] >> 32);
        if (w->in_test[j]) w->n_test++, pt = sy_put_line(pt, m->format, u + 1, m->item_id[i], w->halves[j], w->ts[j]);
        else po = sy_put_line(po, m->format, u + 1, m->item_id[i], w->halves[j], w->ts[j]);
    }
    w->out.len = (size_t)(po - w->out.p);
    w->test.len = (size_t)(pt - w->test.p);
    return 0;
}

/* ---- output files ---- */
/* A file we opened that is a regular file is written with pwrite at offsets reserved in block
 * order, so threads copy into the page cache in parallel; anything else is written in order. */
typedef struct { const char *path; int fd, opened, regular; uint64_t off; } sy_file;

static int sy_file_open(sy_file *f, const char *path)
{
    f->off = 0;
    f->regular = f->opened = 0;
    if (!path || strcmp(path, "-") == 0) { f->path = "<stdout>"; f->fd = STDOUT_FILENO; return 0; }
    f->path = path;
    f->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (f->fd < 0) return -1;
    struct stat sb;
    f->opened = 1;
    f->regular = fstat(f->fd, &sb) == 0 && S_ISREG(sb.st_mode);
    return 0;
}

static int sy_write_at(int fd, const char *p, size_t n, int positioned, uint64_t off)
{
    while (n > 0) {
        ssize_t k = positioned ? pwrite(fd, p, n, (off_t)off) : write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) { if (k == 0) errno = EIO; return -1; }
        p += k; n -= (size_t)k; off += (uint64_t)k;
    }
    return 0;
}

static int sy_file_close(sy_file *f)
{
    int rc = f->opened ? close(f->fd) : 0;
    f->opened = 0;
    return rc;
}

/* ---- command line ---- */
static void sy_usage(FILE *fp)
{
    fputs("Usage: recknn-synth --users N --items M --ratings R --seed S [options]\n"
          "Writes a synthetic MovieLens-like rating file (userId,movieId,rating,timestamp).\n"
          "\n"
          "  --users N            users, ids 1..N (each gets at least one rating)\n"
          "  --items M            items; ids are sparse and increasing (every item occurs when R >= M)\n"
          "  --ratings R          ratings in all (training plus test), N <= R <= N*M\n"
          "  --seed S             random seed, 0..2^64-1\n"
          "  --output FILE        output file (default or '-': standard output)\n"
          "  --test-output FILE   also write a held-out split: a random fraction of each user's\n"
          "                       ratings (at least one kept in the main output) goes to FILE\n"
          "  --test-fraction F    fraction held out, 0 <= F < 1 (default 0.1)\n"
          "  --format FMT         movielens (CSV with header, default), tsv (no header), dat (::)\n"
          "  --popularity-sd X    lognormal sd of the item popularity weights, 0..8 (default 3.2);\n"
          "                       smaller: a flatter head (more items with many ratings)\n"
          "  --popularity-cap W   soft cap of a weight w: w / (1 + w / W), W > 0 or inf (default 5653);\n"
          "                       larger: more ratings on the very top items\n"
          "  --communities C      taste structure: every user and every item belongs to one of C\n"
          "                       communities (uniformly at random); each of a user's draws comes from\n"
          "                       their community's items with probability --affinity, else from the\n"
          "                       whole catalogue, by popularity either way (default 0: popularity\n"
          "                       only; the output is then that of earlier versions). Users with more\n"
          "                       ratings than their community can give, and the one user every item is\n"
          "                       first given to, draw from the whole catalogue\n"
          "  --affinity A         with --communities: share of draws from the user's community,\n"
          "                       0 <= A <= 1 (default 0.8)\n"
          "  --shuffle            write the lines (and the --test-output file's) in a random order\n"
          "                       drawn from --seed instead of by user and item; the header stays first\n"
          "  --threads T          OpenMP threads (the output does not depend on T)\n"
          "  --quiet              no summary line on standard error\n"
          "  --help, --version\n"
          "\n"
          "Same arguments and seed give byte-identical output. The data are synthetic.\n"
          "Exit status: 0 success, 2 bad option, 4 output not writable, 5 out of memory.\n", fp);
}

static int sy_usage_error(const char *what, const char *arg, const char *why)
{
    fprintf(stderr, "recknn-synth: error: %s%s%s%s%s\nTry 'recknn-synth --help'.\n", what, arg ? " '" : "",
            arg ? arg : "", arg ? "'" : "", why ? why : "");
    return SY_EXIT_USAGE;
}

static int sy_bad(const char *opt, const char *arg, const char *why)
{
    char w[64];
    snprintf(w, sizeof w, ": %s", why);
    return sy_usage_error(opt, arg, w);
}

/* Strict unsigned parse: decimal digits only, no sign, space or trailing characters, <= max. */
static int sy_parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    if (*s < '0' || *s > '9') return sy_bad(opt, s, "not a non-negative integer");
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end) return sy_bad(opt, s, "trailing characters");
    if (errno == ERANGE || v > max) return sy_bad(opt, s, "too large");
    if (v < min) return sy_bad(opt, s, "too small");
    *out = v;
    return 0;
}

static int sy_parse_fraction(const char *opt, const char *s, double *out)
{
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (end == s || *s == ' ' || *s == '\t') return sy_bad(opt, s, "not a number");
    if (*end) return sy_bad(opt, s, "trailing characters");
    if (errno == ERANGE || !isfinite(v) || v < 0 || v >= 1) return sy_bad(opt, s, "must be in [0, 1)");
    *out = v;
    return 0;
}

/* A number in [min, max] (max may be INFINITY), or above min when min is excluded. */
static int sy_parse_double(const char *opt, const char *s, double min, int min_excluded, double max, double *out)
{
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (end == s || *s == ' ' || *s == '\t') return sy_bad(opt, s, "not a number");
    if (*end) return sy_bad(opt, s, "trailing characters");
    if (errno == ERANGE || isnan(v) || v < min || (min_excluded && v == min) || v > max)
        return sy_bad(opt, s, "out of range");
    *out = v;
    return 0;
}

static double sy_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The command line's settings. */
typedef struct sy_args {
    uint64_t users, communities, items, ratings, threads;
    int have_seed, have_fraction, have_affinity, quiet, shuffle;
    double fraction;
    const char *out_path, *test_path;
} sy_args;

/* Parse the options into m and a.  @return -1 to go on, else the exit status
 * (--help, --version, a bad option). */
static int parse_args(int argc, char **argv, sy_model *m, sy_args *a)
{
    enum { O_USERS = 256, O_ITEMS, O_RATINGS, O_SEED, O_OUTPUT, O_TEST_OUTPUT, O_TEST_FRACTION,
           O_FORMAT, O_THREADS, O_QUIET, O_HELP, O_VERSION, O_POP_SD, O_POP_CAP, O_SHUFFLE,
           O_COMMUNITIES, O_AFFINITY };
    static const struct option opts[] = {
        {"users", required_argument, 0, O_USERS}, {"items", required_argument, 0, O_ITEMS},
        {"ratings", required_argument, 0, O_RATINGS}, {"seed", required_argument, 0, O_SEED},
        {"output", required_argument, 0, O_OUTPUT}, {"test-output", required_argument, 0, O_TEST_OUTPUT},
        {"test-fraction", required_argument, 0, O_TEST_FRACTION}, {"format", required_argument, 0, O_FORMAT},
        {"threads", required_argument, 0, O_THREADS}, {"quiet", no_argument, 0, O_QUIET},
        {"help", no_argument, 0, O_HELP}, {"version", no_argument, 0, O_VERSION},
        {"popularity-sd", required_argument, 0, O_POP_SD}, {"popularity-cap", required_argument, 0, O_POP_CAP},
        {"shuffle", no_argument, 0, O_SHUFFLE}, {"communities", required_argument, 0, O_COMMUNITIES},
        {"affinity", required_argument, 0, O_AFFINITY}, {0, 0, 0, 0}};
    int rc, c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (c) {
        case O_USERS: if ((rc = sy_parse_u64("--users", optarg, 1, SY_MAX_USERS, &a->users))) return rc; break;
        case O_ITEMS: if ((rc = sy_parse_u64("--items", optarg, 1, SY_MAX_ITEMS, &a->items))) return rc; break;
        case O_RATINGS: if ((rc = sy_parse_u64("--ratings", optarg, 1, UINT64_MAX, &a->ratings))) return rc; break;
        case O_SEED: if ((rc = sy_parse_u64("--seed", optarg, 0, UINT64_MAX, &m->seed))) return rc; a->have_seed = 1; break;
        case O_OUTPUT: a->out_path = optarg; break;
        case O_TEST_OUTPUT: a->test_path = optarg; break;
        case O_TEST_FRACTION:
            if ((rc = sy_parse_fraction("--test-fraction", optarg, &a->fraction))) return rc;
            a->have_fraction = 1;
            break;
        case O_FORMAT:
            if (strcmp(optarg, "movielens") == 0) m->format = SY_FMT_MOVIELENS;
            else if (strcmp(optarg, "tsv") == 0) m->format = SY_FMT_TSV;
            else if (strcmp(optarg, "dat") == 0) m->format = SY_FMT_DAT;
            else return sy_bad("--format", optarg, "expected movielens, tsv or dat");
            break;
        case O_THREADS: if ((rc = sy_parse_u64("--threads", optarg, 1, 4096, &a->threads))) return rc; break;
        case O_QUIET: a->quiet = 1; break;
        case O_SHUFFLE: a->shuffle = 1; break;
        case O_POP_SD:
            if ((rc = sy_parse_double("--popularity-sd", optarg, 0.0, 0, SY_POP_SD_MAX, &m->pop_sd))) return rc;
            break;
        case O_POP_CAP:
            if ((rc = sy_parse_double("--popularity-cap", optarg, 0.0, 1, INFINITY, &m->pop_cap))) return rc;
            break;
        case O_COMMUNITIES:
            if ((rc = sy_parse_u64("--communities", optarg, 0, SY_MAX_COMMUNITIES, &a->communities))) return rc;
            break;
        case O_AFFINITY:
            if ((rc = sy_parse_double("--affinity", optarg, 0.0, 0, 1.0, &m->affinity))) return rc;
            a->have_affinity = 1;
            break;
        case O_HELP: sy_usage(stdout); return fflush(stdout) == 0 && !ferror(stdout) ? SY_EXIT_OK : SY_EXIT_IO;
        case O_VERSION: printf("recknn-synth (recknn) %s\n", PACKAGE_VERSION); return SY_EXIT_OK;
        case ':': return sy_usage_error("option", argv[optind - 1], " needs a value");
        default: return sy_usage_error("unknown or malformed option", argv[optind - 1], NULL);
        }
    }
    return -1;
}

/* The combinations the options must make.  @return -1 to go on, else the
 * exit status. */
static int check_args(int argc, char **argv, const sy_args *a)
{
    const int out_stdout = !a->out_path || strcmp(a->out_path, "-") == 0;
    if (optind < argc) return sy_usage_error("unexpected argument", argv[optind], NULL);
    if (!a->users || !a->items || !a->ratings || !a->have_seed)
        return sy_usage_error("--users, --items, --ratings and --seed are required", NULL, NULL);
    if (a->ratings < a->users || a->ratings > a->users * a->items)
        return sy_usage_error("--ratings must be at least --users and at most --users x --items", NULL, NULL);
    if (a->have_affinity && !a->communities) return sy_usage_error("--affinity needs --communities C", NULL, NULL);
    if (a->have_fraction && !a->test_path) return sy_usage_error("--test-fraction needs --test-output", NULL, NULL);
    if (a->test_path && strcmp(a->test_path, out_stdout ? "-" : a->out_path) == 0)
        return sy_usage_error("--output and --test-output name the same file", NULL, NULL);
    return -1;
}

/* The writing of one run: the files, what --shuffle keeps, the first error. */
typedef struct sy_run {
    sy_file fo, ft;
    const char *test_path;
    int shuffle;
    char **keep;         /* --shuffle: every block's lines (2 b: ratings, 2 b + 1: test) */
    size_t *keep_len;
    int io_err, io_errno, nomem, stop;
    uint64_t n_test;
} sy_run;

/* Blocks are generated in parallel and placed in order; 'stop' ends the work
 * after a failure.  --shuffle keeps every block's lines for sy_write_shuffled. */
static void generate(const sy_model *m, sy_run *r)
{
    uint64_t n_test = 0;
    int stop = r->stop, nomem = r->nomem, io_err = r->io_err, io_errno = r->io_errno;
    sy_file *fo = &r->fo, *ft = &r->ft;
    const char *test_path = r->test_path;
#pragma omp parallel reduction(+ : n_test)
    {
        sy_ws w;
        int ok = sy_ws_init(&w, m) == 0, halt;
        if (!ok) {
#pragma omp atomic write
            nomem = 1;
#pragma omp atomic write
            stop = 1;
        }
#pragma omp for ordered schedule(dynamic, 1)
        for (uint32_t b = 0; b < m->n_blocks; b++) {
            uint64_t off_o = 0, off_t_ = 0;
            int e = 0, placed = 0;
#pragma omp atomic read
            halt = stop;
            if (ok && !halt) {
                w.out.len = w.test.len = 0;
                for (uint32_t u = m->block_start[b]; u < m->block_start[b + 1] && ok; u++) ok = sy_gen_user(m, &w, u) == 0;
                if (!ok) {
#pragma omp atomic write
                    nomem = 1;
#pragma omp atomic write
                    stop = 1;
                }
            }
#pragma omp ordered
            {
#pragma omp atomic read
                halt = stop;
                if (ok && !halt && r->shuffle) { /* the block's buffers change hands */
                    r->keep[2 * b] = w.out.p;
                    r->keep_len[2 * b] = w.out.len;
                    r->keep[2 * b + 1] = w.test.p;
                    r->keep_len[2 * b + 1] = w.test.len;
                    memset(&w.out, 0, sizeof w.out);
                    memset(&w.test, 0, sizeof w.test);
                } else if (ok && !halt) {
                    placed = 1;
                    off_o = fo->off; fo->off += w.out.len;
                    off_t_ = ft->off; ft->off += w.test.len;
                    if (!fo->regular && sy_write_at(fo->fd, w.out.p, w.out.len, 0, 0)) e = 1;
                    else if (test_path && !ft->regular && sy_write_at(ft->fd, w.test.p, w.test.len, 0, 0)) e = 2;
                }
            }
            if (placed && !e && fo->regular && sy_write_at(fo->fd, w.out.p, w.out.len, 1, off_o)) e = 1;
            if (placed && !e && test_path && ft->regular && sy_write_at(ft->fd, w.test.p, w.test.len, 1, off_t_)) e = 2;
            if (e) {
                int en = errno;
#pragma omp critical(sy_io_error)
                if (!io_err) { io_err = e; io_errno = en; }
#pragma omp atomic write
                stop = 1;
            }
        }
        n_test += w.n_test;
        sy_ws_free(&w);
    }
    r->n_test = n_test;
    r->stop = stop;
    r->nomem = nomem;
    r->io_err = io_err;
    r->io_errno = io_errno;
}

/* --shuffle: each file's kept blocks written in a seeded random order. */
static void write_shuffled(const sy_model *m, sy_run *r)
{
    char **tb = r->keep != NULL ? malloc(((size_t)m->n_blocks + 1) * sizeof *tb) : NULL;
    size_t *tl = r->keep != NULL ? malloc(((size_t)m->n_blocks + 1) * sizeof *tl) : NULL;
    if (tb == NULL || tl == NULL) {
        r->nomem = 1;
    } else {
        for (int f = 0; f < (r->test_path ? 2 : 1) && !r->io_err && !r->nomem; f++) {
            sy_file *sf = f == 0 ? &r->fo : &r->ft;
            for (uint32_t b = 0; b < m->n_blocks; b++) {
                tb[b] = r->keep[2 * b + f] != NULL ? r->keep[2 * b + f] : (char *)"";
                tl[b] = r->keep_len[2 * b + f];
            }
            if (sy_shuffle_write(sf->fd, sf->regular, sf->off, tb, tl, m->n_blocks, m->seed + (uint64_t)f) != 0) {
                if (errno == ENOMEM) r->nomem = 1;
                else { r->io_err = f + 1; r->io_errno = errno; }
            }
        }
    }
    free(tb);
    free(tl);
}

/* Open the files and write their headers.  @return -1 to go on, else the
 * exit status (the output removed). */
static int open_files(const sy_model *m, const char *out_path, sy_run *r)
{
    memset(&r->ft, 0, sizeof r->ft);
    if (sy_file_open(&r->fo, out_path) != 0) {
        fprintf(stderr, "recknn-synth: error: %s: %s\n", out_path, strerror(errno));
        return SY_EXIT_IO;
    }
    if (r->test_path && sy_file_open(&r->ft, r->test_path) != 0) {
        fprintf(stderr, "recknn-synth: error: %s: %s\n", r->test_path, strerror(errno));
        sy_file_close(&r->fo);
        if (r->fo.regular) unlink(r->fo.path);
        return SY_EXIT_IO;
    }
    const char *hdr = m->format == SY_FMT_MOVIELENS ? "userId,movieId,rating,timestamp\n" : "";
    size_t hl = strlen(hdr);
    r->io_err = sy_write_at(r->fo.fd, hdr, hl, 0, 0) ? 1 : r->test_path && sy_write_at(r->ft.fd, hdr, hl, 0, 0) ? 2 : 0;
    r->io_errno = r->io_err ? errno : 0;
    r->stop = r->io_err;
    r->fo.off = r->ft.off = hl;
    return -1;
}

/* Generate into the open files, close them; on a failure remove them.
 * @return the exit status. */
static int write_files(const sy_model *m, sy_run *r)
{
    if (r->shuffle) {
        r->keep = calloc(2 * (size_t)m->n_blocks + 1, sizeof *r->keep);
        r->keep_len = calloc(2 * (size_t)m->n_blocks + 1, sizeof *r->keep_len);
        if (r->keep == NULL || r->keep_len == NULL) r->nomem = r->stop = 1;
    }
    generate(m, r);
    if (r->shuffle && !r->io_err && !r->nomem) write_shuffled(m, r);
    if (r->keep != NULL)
        for (size_t b = 0; b < 2 * (size_t)m->n_blocks; b++) free(r->keep[b]);
    free(r->keep);
    free(r->keep_len);
    if (sy_file_close(&r->fo) != 0 && !r->io_err) { r->io_err = 1; r->io_errno = errno; }
    if (sy_file_close(&r->ft) != 0 && !r->io_err) { r->io_err = 2; r->io_errno = errno; }
    if (r->io_err || r->nomem) {
        if (r->nomem) fprintf(stderr, "recknn-synth: error: out of memory\n");
        else fprintf(stderr, "recknn-synth: error: %s: %s\n", r->io_err == 1 ? r->fo.path : r->ft.path,
                     strerror(r->io_errno ? r->io_errno : EIO));
        if (r->fo.regular) unlink(r->fo.path);  /* no partial files */
        if (r->ft.regular) unlink(r->ft.path);
        return r->nomem ? SY_EXIT_RUNTIME : SY_EXIT_IO;
    }
    return SY_EXIT_OK;
}

int main(int argc, char **argv)
{
    sy_model m;
    memset(&m, 0, sizeof m);
    m.test_fraction = -1;
    m.pop_sd = SY_POP_SD;
    m.pop_cap = SY_POP_CAP;
    m.affinity = SY_AFFINITY;
    sy_args a;
    memset(&a, 0, sizeof a);
    a.fraction = 0.1;
    int rc = parse_args(argc, argv, &m, &a);
    if (rc < 0) rc = check_args(argc, argv, &a);
    if (rc >= 0) return rc;
#ifdef _OPENMP
    if (a.threads) omp_set_num_threads((int)a.threads);
#endif
    m.n_users = (uint32_t)a.users;
    m.n_items = (uint32_t)a.items;
    m.n_ratings = a.ratings;
    m.n_comm = (uint32_t)a.communities;
    if (a.test_path) m.test_fraction = a.fraction;
    double t_start = sy_now();

    if (sy_make_items(&m) || sy_make_counts(&m) || sy_make_cover(&m) || sy_make_blocks(&m) ||
        sy_make_communities(&m)) {
        fprintf(stderr, "recknn-synth: error: out of memory\n");
        sy_model_free(&m);
        return SY_EXIT_RUNTIME;
    }
    sy_run r;
    memset(&r, 0, sizeof r);
    r.test_path = a.test_path;
    r.shuffle = a.shuffle;
    rc = open_files(&m, a.out_path, &r);
    if (rc < 0) rc = write_files(&m, &r);
    if (rc == SY_EXIT_OK && !a.quiet)
        fprintf(stderr, "recknn-synth: %llu ratings (%llu test), %u users, %u items, sum of n_u^2 %.3e, %.2f s\n",
                (unsigned long long)m.n_ratings, (unsigned long long)r.n_test, m.n_users, m.n_items, m.sum_sq,
                sy_now() - t_start);
    sy_model_free(&m);
    return rc;
}
