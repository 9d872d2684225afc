/* fuzz_load.c — libFuzzer target over the rating loader (rk_load_buffer),
 * every format, then the duplicate resolution and the CSR build.
 *
 * Input: 4 option bytes, then the file's bytes.
 *   [0] format: value % 6 (0 auto, 1 movielens, 2 dat, 3 tsv, 4 netflix, 5 csv;
 *       the digits '0'..'5' read as themselves)
 *   [1] bit 0 skip_bad_lines, 1 want_time, 2 no_fast_path, 3 rating scale
 *       0.5..5, 4 two threads (else one)
 *   [2] csv only: bits 0-2 delimiter (guess , ; TAB space | : guess), bits 3-4
 *       header (guess, no, yes, guess), bits 5-6 columns (default, "1,2,3",
 *       "2,1,3,4", "userId,movieId,rating,timestamp")
 *   [3] bits 0-1 duplicate policy (last first mean error), bits 2-5 chunk
 *       size (0 default, else 3 x value bytes: parser chunk boundaries), bit 6
 *       tiny sort buckets (every path of the radix sort)
 * After RK_OK, checks: indices in range and every index of the id maps used
 * (the maps cover exactly the ids of the triples), ids ordered as rk_ids.h
 * says and found again by rk_ids_find, ratings finite (and in the scale);
 * then rk_triples_dedupe_csr against the reference route (rk_triples_dedupe +
 * rk_csr_build): both CSR-valid and equal, pos[] pointing at the survivors,
 * and the transpose valid.  A violation abort()s.
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "rk_csr.h"
#include "rk_ids.h"
#include "rk_load.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int copy_triples(const rk_triples *t, rk_triples *out)
{
    rk_error err;
    if (rk_triples_alloc(out, t->n, t->time != NULL, &err) != RK_OK) return -1;
    memcpy(out->user, t->user, (size_t)t->n * sizeof *t->user);
    memcpy(out->item, t->item, (size_t)t->n * sizeof *t->item);
    memcpy(out->rating, t->rating, (size_t)t->n * sizeof *t->rating);
    if (t->time) memcpy(out->time, t->time, (size_t)t->n * sizeof *t->time);
    return 0;
}

/* ids of map m: each formats, is found again at its index, and they ascend
 * numerically (when the map says numeric) or by bytes. */
static void check_ids(const char *what, const rk_idmap *m, int32_t n)
{
    char prev[RK_ID_MAX + 1], cur[RK_ID_MAX + 1];
    int prev_len = -1;
    const int numeric = rk_ids_numeric(m);
    for (int32_t i = 0; i < n; i++) {
        int len = rk_ids_format(m, i, cur, sizeof cur);
        FZ_REQUIRE(len >= 1 && len <= RK_ID_MAX, "%s %d: length %d", what, i, len);
        FZ_REQUIRE(rk_ids_find(m, cur, (size_t)len) == i, "%s %d (\"%s\") is not found at its index", what, i, cur);
        if (prev_len >= 0) {
            if (numeric) {
                long long a = strtoll(prev, NULL, 10), b = strtoll(cur, NULL, 10);
                FZ_REQUIRE(a < b, "%s: numeric ids out of order: %s, %s", what, prev, cur);
            } else {
                size_t k = (size_t)(prev_len < len ? prev_len : len);
                int c = memcmp(prev, cur, k);
                FZ_REQUIRE(c < 0 || (c == 0 && prev_len < len), "%s: ids out of byte order: %s, %s", what, prev, cur);
            }
        }
        memcpy(prev, cur, (size_t)len + 1);
        prev_len = len;
    }
    FZ_REQUIRE(rk_ids_format(m, n, cur, sizeof cur) == -1, "%s: index %d formats past the count", what, n);
}

static void check_dedupe(const rk_triples *loaded, int32_t nu, int32_t ni, rk_dup_policy pol, int tiny, int threads)
{
    rk_triples a = {0}, b = {0};
    rk_csr fast = {0}, ref = {0}, tr = {0};
    int64_t *pos = NULL;
    rk_dup_report ra, rb;
    rk_error err;
    if (copy_triples(loaded, &a) != 0 || copy_triples(loaded, &b) != 0) goto out;

    rk_sort_opts so = {0};
    so.threads = threads;
    if (tiny) {
        so.bucket = 3;
        so.digit_bits = 1 + (int)(loaded->n % 11);
    }
    rk_status sa = rk_triples_dedupe_csr(&a, nu, ni, pol, &so, &fast, &pos, &ra, &err);
    rk_status sb = rk_triples_dedupe(&b, nu, ni, pol, &rb, &err);
    if (sa == RK_E_NOMEM || sb == RK_E_NOMEM) goto out;
    FZ_REQUIRE(sa == sb, "rk_triples_dedupe_csr says %d, rk_triples_dedupe %d", (int)sa, (int)sb);
    if (sa == RK_E_DUPLICATE) {
        FZ_REQUIRE(pol == RK_DUP_ERROR, "RK_E_DUPLICATE under policy %d", (int)pol);
        FZ_REQUIRE(ra.first_user == rb.first_user && ra.first_item == rb.first_item,
                   "first duplicate (%d, %d) against (%d, %d)", ra.first_user, ra.first_item, rb.first_user,
                   rb.first_item);
        goto out;
    }
    FZ_REQUIRE(sa == RK_OK, "dedupe of valid triples failed: %d", (int)sa);
    FZ_REQUIRE(ra.n_removed == rb.n_removed && a.n == b.n && a.n == loaded->n - ra.n_removed,
               "removed %lld / %lld, left %lld / %lld of %lld", (long long)ra.n_removed, (long long)rb.n_removed,
               (long long)a.n, (long long)b.n, (long long)loaded->n);
    for (int64_t i = 0; i < a.n; i++) {
        FZ_REQUIRE(a.user[i] == b.user[i] && a.item[i] == b.item[i], "survivor %lld differs", (long long)i);
        FZ_REQUIRE(pol == RK_DUP_MEAN ? fabsf(a.rating[i] - b.rating[i]) <= 1e-5f * (1 + fabsf(b.rating[i]))
                                      : a.rating[i] == b.rating[i],
                   "survivor %lld: rating %g against %g", (long long)i, (double)a.rating[i], (double)b.rating[i]);
        FZ_REQUIRE((a.time == NULL) == (b.time == NULL) && (a.time == NULL || a.time[i] == b.time[i]),
                   "survivor %lld: time differs", (long long)i);
    }
    fz_check_csr("dedupe_csr", &fast, nu, ni);
    FZ_REQUIRE(fast.nnz == a.n, "CSR holds %lld, %lld survivors", (long long)fast.nnz, (long long)a.n);
    for (int32_t r = 0; r < nu; r++)
        for (int64_t p = fast.ptr[r]; p < fast.ptr[r + 1]; p++) {
            FZ_REQUIRE(pos[p] >= 0 && pos[p] < a.n, "pos[%lld] = %lld", (long long)p, (long long)pos[p]);
            FZ_REQUIRE(a.user[pos[p]] == r && a.item[pos[p]] == fast.idx[p] && a.rating[pos[p]] == fast.val[p],
                       "pos[%lld] points at another rating", (long long)p);
        }

    if (rk_csr_build(&b, nu, ni, &ref, &err) != RK_OK) goto out; /* only NOMEM is possible here */
    fz_check_csr("csr_build", &ref, nu, ni);
    FZ_REQUIRE(ref.nnz == fast.nnz && memcmp(ref.ptr, fast.ptr, ((size_t)nu + 1) * sizeof *ref.ptr) == 0 &&
                   (ref.nnz == 0 || memcmp(ref.idx, fast.idx, (size_t)ref.nnz * sizeof *ref.idx) == 0),
               "rk_triples_dedupe_csr and rk_csr_build disagree on the pattern");
    for (int64_t p = 0; p < ref.nnz; p++)
        FZ_REQUIRE(pol == RK_DUP_MEAN ? fabsf(ref.val[p] - fast.val[p]) <= 1e-5f * (1 + fabsf(ref.val[p]))
                                      : ref.val[p] == fast.val[p],
                   "value %lld: %g against %g", (long long)p, (double)fast.val[p], (double)ref.val[p]);
    if (rk_csr_transpose(&fast, &tr, &err) == RK_OK) {
        fz_check_csr("transpose", &tr, ni, nu);
        fz_check_transpose("transpose", &fast, &tr);
    }
out:
    free(pos);
    rk_csr_free(&fast);
    rk_csr_free(&ref);
    rk_csr_free(&tr);
    rk_triples_free(&a);
    rk_triples_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char delims[8] = {0, ',', ';', '\t', ' ', '|', ':', 0};
    static const int headers[4] = {-1, 0, 1, -1};
    static const char *const columns[4] = {NULL, "1,2,3", "2,1,3,4", "userId,movieId,rating,timestamp"};
    if (size < 4) return 0;
    rk_load_opts o;
    rk_load_opts_default(&o);
    o.format = (rk_format)(data[0] % 6);
    o.skip_bad_lines = data[1] & 1;
    o.want_time = (data[1] >> 1) & 1;
    o.no_fast_path = (data[1] >> 2) & 1;
    if (data[1] & 8) {
        o.have_scale = 1;
        o.scale_min = 0.5;
        o.scale_max = 5;
    }
    o.threads = data[1] & 16 ? 2 : 1;
    if (o.format == RK_FMT_CSV) { /* the loader refuses them with other formats */
        o.delimiter = delims[data[2] & 7];
        o.header = headers[(data[2] >> 3) & 3];
        o.columns = columns[(data[2] >> 5) & 3];
    }
    const rk_dup_policy pol = (rk_dup_policy)(data[3] & 3);
    o.chunk_bytes = 3u * ((data[3] >> 2) & 15);
    const int tiny = (data[3] >> 6) & 1;

    rk_dataset d;
    rk_error err;
    rk_status s = rk_load_buffer("fuzz", (const char *)data + 4, size - 4, &o, &d, &err);
    static int verbose = -1; /* FUZZ_VERBOSE=1: say what each input gave (checking seeds) */
    if (verbose < 0) verbose = getenv("FUZZ_VERBOSE") != NULL;
    if (verbose)
        fprintf(stderr, "fuzz_load: %s\n", s == RK_OK ? "loaded" : err.msg);
    if (s != RK_OK) return 0;

    const rk_triples *t = &d.train;
    const int32_t nu = rk_ids_count(d.users), ni = rk_ids_count(d.items);
    FZ_REQUIRE(d.train_report.format != RK_FMT_AUTO, "no format reported");
    FZ_REQUIRE(o.format == RK_FMT_AUTO || d.train_report.format == o.format, "format %d asked, %d used",
               (int)o.format, (int)d.train_report.format);
    FZ_REQUIRE(t->n >= 1 && t->n == d.train_report.ratings, "%lld triples, report says %lld ratings",
               (long long)t->n, (long long)d.train_report.ratings);
    FZ_REQUIRE(d.test.n == 0, "a test set from a buffer");
    FZ_REQUIRE(nu >= 1 && ni >= 1, "%d users, %d items", nu, ni);
    FZ_REQUIRE(!o.want_time || t->time != NULL || !d.train_report.has_time, "times asked for and dropped");
    char *used = calloc((size_t)nu + (size_t)ni, 1);
    if (used != NULL) {
        for (int64_t i = 0; i < t->n; i++) {
            FZ_REQUIRE(t->user[i] >= 0 && t->user[i] < nu, "triple %lld: user %d of %d", (long long)i, t->user[i], nu);
            FZ_REQUIRE(t->item[i] >= 0 && t->item[i] < ni, "triple %lld: item %d of %d", (long long)i, t->item[i], ni);
            FZ_REQUIRE(isfinite(t->rating[i]), "triple %lld: rating not finite", (long long)i);
            FZ_REQUIRE(!o.have_scale || (t->rating[i] >= 0.5f && t->rating[i] <= 5.0f),
                       "triple %lld: rating %g outside the scale", (long long)i, (double)t->rating[i]);
            used[t->user[i]] = 1;
            used[(size_t)nu + (size_t)t->item[i]] = 1;
        }
        for (int32_t u = 0; u < nu; u++) FZ_REQUIRE(used[u], "user index %d of %d has no rating", u, nu);
        for (int32_t i = 0; i < ni; i++) FZ_REQUIRE(used[(size_t)nu + (size_t)i], "item index %d of %d has no rating", i, ni);
        free(used);
    }
    check_ids("user", d.users, nu);
    check_ids("item", d.items, ni);
    if (verbose)
        fprintf(stderr, "fuzz_load: format %s, %d users, %d items, %lld ratings, %lld skipped\n",
                rk_format_name(d.train_report.format), nu, ni, (long long)t->n,
                (long long)d.train_report.skipped_lines);
    check_dedupe(t, nu, ni, pol, tiny, o.threads);
    rk_dataset_free(&d);
    return 0;
}
