/* fuzz_mfile.c — libFuzzer target over the model reader (rk_mfile_read_mem).
 *
 * Input: a model file.  It is read twice: as it is (the checksums must turn
 * away a mutated file), and with its checksums and file-size field rewritten
 * to match the bytes (MODEL_FORMAT.md's layout), so that mutations get past
 * the checksums to the reader's size and invariant checks.
 * After RK_OK, checks what rk_mfile.h promises the engines: the user-major
 * matrix a valid CSR of n_users x n_items, the item-major one its exact
 * transpose, the id maps of those sizes, the statistics finite, the lists
 * n_items x k with lengths <= min(k, n_items - 1), neighbours in range, not
 * the item itself, not repeated, similarities finite, supports >= 0, and the
 * cells past a list's length zero.  A violation abort()s.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "rk_mfile.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HDR 128
#define REC_HEAD 16

static uint64_t get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}
static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* Rewrite the file-size field and every checksum that the bytes reach. */
static void fix_checksums(unsigned char *b, size_t len)
{
    if (len < HDR) return;
    put64(b + 104, len);
    put64(b + 120, rk_mfile_hash(b, 120, 0));
    size_t at = HDR;
    while (len - at >= REC_HEAD + 8) {
        uint64_t L = get64(b + at + 8);
        uint64_t body = REC_HEAD + L + ((8 - L % 8) % 8);
        if (L > len || body > len - at - 8) break;
        put64(b + at + body, rk_mfile_hash(b + at, (size_t)body, 0));
        at += (size_t)body + 8;
    }
}

static void check_model(const rk_mfile *f)
{
    const rk_model *m = &f->model;
    const int32_t nu = m->by_user.n_rows, ni = m->by_user.n_cols;
    FZ_REQUIRE(f->version == 2 || f->version == RK_MFILE_VERSION, "version %u", f->version);
    FZ_REQUIRE(nu >= 1 && ni >= 1 && m->by_user.nnz >= 1, "%d x %d, %lld ratings", nu, ni,
               (long long)m->by_user.nnz);
    FZ_REQUIRE(rk_ids_count(f->users) == nu && rk_ids_count(f->items) == ni, "id maps %d, %d for %d x %d",
               rk_ids_count(f->users), rk_ids_count(f->items), nu, ni);
    fz_check_csr("by_user", &m->by_user, nu, ni);
    fz_check_csr("by_item", &m->by_item, ni, nu);
    fz_check_transpose("by_item", &m->by_user, &m->by_item);
    FZ_REQUIRE(isfinite(m->mu) && isfinite(m->rmin) && isfinite(m->rmax) && m->rmin <= m->rmax,
               "mu %g, scale %g..%g", m->mu, m->rmin, m->rmax);
    FZ_REQUIRE(m->item_mean && m->bu && m->bi, "statistics missing");
    for (int32_t i = 0; i < ni; i++)
        FZ_REQUIRE(isfinite(m->item_mean[i]) && isfinite(m->bi[i]) && (m->have_baselines || m->bi[i] == 0),
                   "item %d: mean %g, b_i %g", i, m->item_mean[i], m->bi[i]);
    for (int32_t u = 0; u < nu; u++)
        FZ_REQUIRE(isfinite(m->bu[u]) && (m->have_baselines || m->bu[u] == 0), "user %d: b_u %g", u, m->bu[u]);

    const rk_lists *l = &f->lists;
    const int32_t k = l->k;
    FZ_REQUIRE(l->n_items == ni && k >= 1 && k == f->knn.k, "lists %d x %d, %d items, knn.k %d", l->n_items, k,
               ni, f->knn.k);
    FZ_REQUIRE(f->knn.sim.min_support >= 0 && f->knn.min_k >= 0 && isfinite(f->knn.sim.shrinkage) &&
                   f->knn.sim.shrinkage >= 0,
               "options: min_support %d, min_k %d, shrinkage %g", f->knn.sim.min_support, f->knn.min_k,
               f->knn.sim.shrinkage);
    const int32_t cap = k < ni - 1 ? k : ni - 1;
    int32_t *seen = malloc((size_t)ni * sizeof *seen);
    if (seen == NULL) return;
    memset(seen, 0xff, (size_t)ni * sizeof *seen);
    for (int32_t i = 0; i < ni; i++) {
        const size_t base = (size_t)i * (size_t)k;
        FZ_REQUIRE(l->len[i] >= 0 && l->len[i] <= cap, "item %d: list length %d, cap %d", i, l->len[i], cap);
        for (int32_t t = 0; t < k; t++) {
            int32_t j = l->nbr[base + (size_t)t];
            if (t >= l->len[i]) {
                FZ_REQUIRE(j == 0 && l->sim[base + (size_t)t] == 0 && l->support[base + (size_t)t] == 0,
                           "item %d: cell %d past the list's length is not zero", i, t);
                continue;
            }
            FZ_REQUIRE(j >= 0 && j < ni && j != i && seen[j] != i, "item %d: neighbour %d", i, j);
            FZ_REQUIRE(isfinite(l->sim[base + (size_t)t]) && l->support[base + (size_t)t] >= 0,
                       "item %d: entry %d", i, t);
            seen[j] = i;
        }
    }
    free(seen);
}

static void one(const void *buf, size_t len)
{
    rk_mfile f;
    rk_error err;
    rk_status s = rk_mfile_read_mem(buf, len, "fuzz", &f, &err);
    static int verbose = -1; /* FUZZ_VERBOSE=1: say what each input gave (checking seeds) */
    if (verbose < 0) verbose = getenv("FUZZ_VERBOSE") != NULL;
    if (verbose) fprintf(stderr, "fuzz_mfile: %s\n", s == RK_OK ? "read" : err.msg);
    if (s == RK_OK) {
        check_model(&f);
        rk_mfile_free(&f);
        return;
    }
    FZ_REQUIRE(s == RK_E_MODEL || s == RK_E_NOMEM, "status %d: %s", (int)s, err.msg);
    /* "On failure *out is zeroed" */
    FZ_REQUIRE(f.users == NULL && f.items == NULL && f.model.by_user.ptr == NULL && f.model.by_item.ptr == NULL &&
                   f.model.item_mean == NULL && f.lists.len == NULL && f.lists.nbr == NULL,
               "a failed read left *out holding something");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    one(data, size);
    if (size < HDR) return 0;
    unsigned char *b = malloc(size);
    if (b == NULL) return 0;
    memcpy(b, data, size);
    fix_checksums(b, size);
    if (memcmp(b, data, size) != 0) one(b, size);
    free(b);
    return 0;
}
