/* rk_mfile: the checksum against libxxhash's XXH64, the layout of
 * MODEL_FORMAT.md read back by hand, round trips of random models (every
 * field bitwise), and refusal of every truncation, every flipped bit,
 * foreign, other-version and semantically broken files (checksums fixed so
 * that the invariant checks are what fires); saving through a temporary
 * file. */
#define _POSIX_C_SOURCE 200809L
#include "rk_mfile.h"
#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- fixtures ---------------------------------------------------------------- */

typedef struct fixture {
    rk_model m;
    rk_lists l;
    rk_idmap *users, *items;
    rk_knn_opts o;
} fixture;

typedef struct shape {
    int nu, ni;
    double density;
    int baselines, have_scale, real_values;
    rk_metric metric;
    rk_predict_mode mode;
    int k, min_support, min_k;
    double shrinkage;
    int id_kind; /* 0 numeric, 1 bytes, 2 bytes of equal length "x000".. */
    int full_lists; /* 1: every list as long as it can be */
    unsigned long long seed;
} shape;

/* n distinct ids of the kind, handed to rk_ids_from_strings shuffled. */
static rk_idmap *make_ids(int n, int kind, unsigned long long *s)
{
    char **ids = malloc((size_t)n * sizeof *ids);
    CU_ASSERT_FATAL(ids != NULL);
    long long v = -(long long)(rk_test_rand(s) % 5000);
    for (int i = 0; i < n; i++) {
        char buf[RK_ID_MAX + 1];
        if (kind == 0) {
            v += 1 + (long long)(rk_test_rand(s) % 1000);
            snprintf(buf, sizeof buf, "%lld", v);
        } else if (kind == 2) {
            snprintf(buf, sizeof buf, "x%03d", i);
        } else if (i == 0) {
            strcpy(buf, "Z"); /* the shortest id */
        } else if (i == 1) {
            memset(buf, 'L', 250); /* the longest: 255 bytes */
            snprintf(buf + 250, 6, "_%04d", i);
        } else if (i % 3 == 0) {
            snprintf(buf, sizeof buf, "%d", 7 * i); /* digits among byte ids */
        } else {
            int len = 1 + (int)(rk_test_rand(s) % 12), at = 0;
            for (int c = 0; c < len; c++) buf[at++] = (char)(1 + rk_test_rand(s) % 255); /* any byte but NUL */
            snprintf(buf + at, sizeof buf - (size_t)at, "_%d", i); /* unique: the text after the last '_' */
        }
        ids[i] = strdup(buf);
    }
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(rk_test_rand(s) % (unsigned long long)(i + 1));
        char *t = ids[i];
        ids[i] = ids[j];
        ids[j] = t;
    }
    rk_idmap *m = NULL;
    rk_error err;
    CU_ASSERT_FATAL(rk_ids_from_strings((const char *const *)ids, n, &m, &err) == RK_OK);
    CU_ASSERT_FATAL(rk_ids_count(m) == n);
    for (int i = 0; i < n; i++) free(ids[i]);
    free(ids);
    return m;
}

static void make_fixture(fixture *x, const shape *sh)
{
    unsigned long long s = sh->seed;
    rk_triples t;
    rk_error err;
    memset(x, 0, sizeof *x);
    CU_ASSERT_FATAL(rk_triples_alloc(&t, (int64_t)sh->nu * sh->ni + 1, 0, &err) == RK_OK);
    int64_t n = 0;
    for (int u = 0; u < sh->nu; u++)
        for (int i = 0; i < sh->ni; i++) {
            if (rk_test_uniform(&s) >= sh->density) continue;
            t.user[n] = u;
            t.item[n] = i;
            t.rating[n] = sh->real_values ? (float)(1.0 + 4.0 * rk_test_uniform(&s))
                                          : (float)(0.5 * (double)(1 + rk_test_rand(&s) % 10));
            n++;
        }
    if (n == 0) {
        t.user[0] = sh->nu - 1, t.item[0] = 0, t.rating[0] = 4.0f;
        n = 1;
    }
    t.n = n;
    CU_ASSERT_FATAL(rk_model_build(&x->m, &t, sh->nu, sh->ni, sh->have_scale, 0.5, 5.0, sh->baselines, &err) == RK_OK);
    rk_triples_free(&t);

    rk_knn_opts_default(&x->o);
    x->o.sim.metric = sh->metric;
    x->o.sim.min_support = sh->min_support;
    x->o.sim.shrinkage = sh->shrinkage;
    x->o.k = sh->k;
    x->o.mode = sh->mode;
    x->o.min_k = sh->min_k;
    CU_ASSERT_FATAL(rk_lists_alloc(&x->l, sh->ni, sh->k, &err) == RK_OK);
    int32_t *perm = malloc((size_t)sh->ni * sizeof *perm);
    const int cap = sh->k < sh->ni - 1 ? sh->k : sh->ni - 1;
    for (int i = 0; i < sh->ni; i++) {
        int len = sh->full_lists ? cap : (int)(rk_test_rand(&s) % (unsigned long long)(cap + 1));
        int m = 0;
        for (int j = 0; j < sh->ni; j++)
            if (j != i) perm[m++] = j;
        x->l.len[i] = len;
        for (int r = 0; r < len; r++) { /* a partial shuffle: distinct neighbours */
            int q = r + (int)(rk_test_rand(&s) % (unsigned long long)(m - r));
            int32_t tmp = perm[r];
            perm[r] = perm[q];
            perm[q] = tmp;
            size_t at = (size_t)i * (size_t)sh->k + (size_t)r;
            x->l.nbr[at] = perm[r];
            x->l.sim[at] = (float)(2.0 * rk_test_uniform(&s) - 1.0);
            x->l.support[at] = 1 + (int32_t)(rk_test_rand(&s) % 1000);
        }
    }
    free(perm);
    x->users = make_ids(sh->nu, sh->id_kind, &s);
    x->items = make_ids(sh->ni, sh->id_kind == 2 ? 2 : (sh->id_kind + 1) % 2, &s);
}

static void free_fixture(fixture *x)
{
    rk_model_free(&x->m);
    rk_lists_free(&x->l);
    rk_ids_free(x->users);
    rk_ids_free(x->items);
}

static rk_mfile_view view_of(const fixture *x)
{
    rk_mfile_view v = {.model = &x->m, .lists = &x->l, .users = x->users, .items = x->items, .knn = &x->o};
    return v;
}

/* The bytes rk_mfile_write gives (malloc'ed). */
static unsigned char *to_bytes(const fixture *x, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    rk_error err;
    FILE *fp = open_memstream(&buf, &n);
    CU_ASSERT_FATAL(fp != NULL);
    rk_mfile_view v = view_of(x);
    rk_status s = rk_mfile_write(fp, &v, &err);
    CU_ASSERT_FATAL(fclose(fp) == 0);
    if (s != RK_OK) printf("write: %s\n", err.msg);
    CU_ASSERT_FATAL(s == RK_OK);
    *len = n;
    return (unsigned char *)buf;
}

/* ---- comparisons ------------------------------------------------------------- */

static int same_bits(const void *a, const void *b, size_t n) { return n == 0 || memcmp(a, b, n) == 0; }

static int same_csr(const rk_csr *a, const rk_csr *b)
{
    return a->n_rows == b->n_rows && a->n_cols == b->n_cols && a->nnz == b->nnz &&
           same_bits(a->ptr, b->ptr, ((size_t)a->n_rows + 1) * sizeof *a->ptr) &&
           same_bits(a->idx, b->idx, (size_t)a->nnz * sizeof *a->idx) &&
           same_bits(a->val, b->val, (size_t)a->nnz * sizeof *a->val);
}

static int same_ids(const rk_idmap *a, const rk_idmap *b)
{
    char x[RK_ID_MAX + 1], y[RK_ID_MAX + 1];
    if (rk_ids_count(a) != rk_ids_count(b) || rk_ids_numeric(a) != rk_ids_numeric(b)) return 0;
    for (int32_t i = 0; i < rk_ids_count(a); i++) {
        int la = rk_ids_format(a, i, x, sizeof x), lb = rk_ids_format(b, i, y, sizeof y);
        if (la < 1 || la != lb || memcmp(x, y, (size_t)la) != 0) return 0;
    }
    return 1;
}

static void check_equal(const fixture *x, const rk_mfile *f)
{
    const rk_model *a = &x->m, *b = &f->model;
    const int32_t nu = a->by_user.n_rows, ni = a->by_user.n_cols;
    CU_ASSERT(f->version == 2);
    CU_ASSERT(same_csr(&a->by_user, &b->by_user));
    CU_ASSERT(same_csr(&a->by_item, &b->by_item));
    CU_ASSERT(same_bits(&a->mu, &b->mu, 8) && same_bits(&a->rmin, &b->rmin, 8) && same_bits(&a->rmax, &b->rmax, 8));
    CU_ASSERT(same_bits(a->item_mean, b->item_mean, (size_t)ni * 8));
    CU_ASSERT(same_bits(a->bu, b->bu, (size_t)nu * 8));
    CU_ASSERT(same_bits(a->bi, b->bi, (size_t)ni * 8));
    CU_ASSERT(a->have_baselines == b->have_baselines);
    CU_ASSERT(f->lists.n_items == ni && f->lists.k == x->l.k);
    CU_ASSERT(same_bits(f->lists.len, x->l.len, (size_t)ni * 4));
    int lists_ok = 1;
    for (int32_t i = 0; i < ni; i++)
        for (int32_t r = 0; r < x->l.len[i]; r++) {
            size_t at = (size_t)i * (size_t)x->l.k + (size_t)r;
            lists_ok &= f->lists.nbr[at] == x->l.nbr[at] && f->lists.support[at] == x->l.support[at] &&
                        same_bits(&f->lists.sim[at], &x->l.sim[at], 4);
        }
    CU_ASSERT(lists_ok);
    CU_ASSERT(f->knn.sim.metric == x->o.sim.metric && f->knn.sim.min_support == x->o.sim.min_support);
    CU_ASSERT(same_bits(&f->knn.sim.shrinkage, &x->o.sim.shrinkage, 8));
    CU_ASSERT(f->knn.k == x->o.k && f->knn.mode == x->o.mode && f->knn.min_k == x->o.min_k);
    CU_ASSERT(f->knn.threads == 0 && f->knn.progress == NULL);
    CU_ASSERT(same_ids(x->users, f->users));
    CU_ASSERT(same_ids(x->items, f->items));
    rk_error err;
    CU_ASSERT(rk_knn_check_args(&f->model, &f->knn, &f->lists, NULL, &err) == RK_OK);
}

static int is_zeroed(const rk_mfile *f)
{
    static const rk_mfile z;
    return memcmp(f, &z, sizeof z) == 0;
}

/* ---- the checksum ------------------------------------------------------------ */

/* XXH64 of b[i] = (7i + 3) mod 256, from libxxhash 0.8.1 (ctypes), seeds 0
 * and 0x9E3779B97F4A7C15. */
static const struct { size_t n; uint64_t h0, h1; } VEC[] = {
    {0, 0xef46db3751d8e999ULL, 0xc4349fc93c010000ULL},     {1, 0x1f25c8d0bc1f4bb6ULL, 0x79826bcd749d267aULL},
    {3, 0x31d2363f52e564c9ULL, 0x78efd77575e26575ULL},     {4, 0x9bb64b7d66ee9fdaULL, 0x6f0a6c97d68bf353ULL},
    {7, 0x9a7b149959ce60d8ULL, 0xd97ede93c9d66a0dULL},     {8, 0xdab99d95c6f90092ULL, 0xa2f1e28437a78a1bULL},
    {9, 0x170bb6bf975b4c02ULL, 0x9c9a3cd83532d84fULL},     {15, 0x1b47cb8243cc8e32ULL, 0xe2ec50a544faec61ULL},
    {16, 0x434850232b787be2ULL, 0x93351859a7286376ULL},    {31, 0xa2aa5f33cc4a6119ULL, 0x755437271d1d0a84ULL},
    {32, 0x23c3c17ef790fd97ULL, 0xbf624b932c090428ULL},    {33, 0x50a7cfc7ba588784ULL, 0x7aceaf1e9d34ea35ULL},
    {63, 0x5e3e54b431c7493cULL, 0x2c8ddce5c85d0d9dULL},    {64, 0x0eb64b3ef6eeb01fULL, 0x4af341f14e3a6fc9ULL},
    {65, 0xa383b724b2bd12f1ULL, 0x8e9e580645400102ULL},    {100, 0xa61f8d4c170fe531ULL, 0xf6d8f65c625abb4fULL},
    {1000, 0x5f235fa033f1a3fbULL, 0x442acd0a822e86f6ULL},  {100000, 0x953e8a6a68df79c4ULL, 0x63945d338013ab8fULL},
};

static void test_hash_vectors(void)
{
    unsigned char *b = malloc(100000);
    for (size_t i = 0; i < 100000; i++) b[i] = (unsigned char)((i * 7 + 3) & 255);
    for (size_t t = 0; t < sizeof VEC / sizeof VEC[0]; t++) {
        CU_ASSERT(rk_mfile_hash(b, VEC[t].n, 0) == VEC[t].h0);
        CU_ASSERT(rk_mfile_hash(b, VEC[t].n, 0x9E3779B97F4A7C15ULL) == VEC[t].h1);
    }
    /* unaligned input gives the same value */
    unsigned char *c = malloc(1001);
    memcpy(c + 1, b, 1000);
    CU_ASSERT(rk_mfile_hash(c + 1, 1000, 0) == 0x5f235fa033f1a3fbULL);
    free(c);
    free(b);
}

/* ---- layout ------------------------------------------------------------------ */

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t le64(const unsigned char *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }
static void set32(unsigned char *p, uint32_t v)
{
    for (int b = 0; b < 4; b++) p[b] = (unsigned char)(v >> (8 * b));
}
static void set64(unsigned char *p, uint64_t v)
{
    for (int b = 0; b < 8; b++) p[b] = (unsigned char)(v >> (8 * b));
}

static const char *const TAG[] = {"UIDS", "IIDS", "RPTR", "RIDX", "RVAL", "IMEA", "UBAS",
                                  "IBAS", "LLEN", "LNBR", "LSIM", "LSUP", "END "};
#define NTAG 13

/* Offsets of the records of a file, as MODEL_FORMAT.md lays them out. */
static void find_records(const unsigned char *b, size_t len, size_t at[NTAG], uint64_t plen[NTAG])
{
    size_t pos = 128;
    for (int t = 0; t < NTAG; t++) {
        CU_ASSERT_FATAL(pos + 24 <= len);
        CU_ASSERT_FATAL(memcmp(b + pos, TAG[t], 4) == 0);
        at[t] = pos;
        plen[t] = le64(b + pos + 8);
        pos += 16 + (size_t)plen[t] + (size_t)((8 - plen[t] % 8) % 8) + 8;
    }
    CU_ASSERT_FATAL(pos == len);
}

/* Recompute a record's checksum after a patch. */
static void rehash(unsigned char *b, size_t at)
{
    uint64_t l = le64(b + at + 8), span = 16 + l + (8 - l % 8) % 8;
    set64(b + at + span, rk_mfile_hash(b + at, (size_t)span, 0));
}
static void rehash_header(unsigned char *b) { set64(b + 120, rk_mfile_hash(b, 120, 0)); }

static const shape SMALL = {7, 5, 0.5, 1, 0, 0, RK_METRIC_COSINE, RK_PREDICT_BASELINE, 3, 2, 1, 12.5, 1, 0, 77};

static void test_layout(void)
{
    fixture x;
    shape sh = SMALL;
    make_fixture(&x, &sh);
    size_t len;
    unsigned char *b = to_bytes(&x, &len);
    const int32_t nu = 7, ni = 5, k = 3;
    const int64_t nnz = x.m.by_user.nnz;
    int64_t ne = 0;
    for (int i = 0; i < ni; i++) ne += x.l.len[i];
    CU_ASSERT(memcmp(b, "RECKNNMF", 8) == 0);
    CU_ASSERT(le32(b + 8) == 2 && le32(b + 12) == 128);
    CU_ASSERT(le32(b + 76) == 0); /* no ranking lists */
    CU_ASSERT(b[16] == 4 && b[17] == 3 && b[18] == 2 && b[19] == 1);
    CU_ASSERT(le32(b + 20) == 1);
    CU_ASSERT(le32(b + 24) == (uint32_t)nu && le32(b + 28) == (uint32_t)ni);
    CU_ASSERT(le64(b + 32) == (uint64_t)nnz && le64(b + 40) == (uint64_t)ne);
    CU_ASSERT(le32(b + 48) == (uint32_t)k && le32(b + 52) == 2);
    double d;
    uint64_t u = le64(b + 56);
    memcpy(&d, &u, 8);
    CU_ASSERT(d == 12.5);
    CU_ASSERT(le32(b + 64) == 3 /* cosine */ && le32(b + 68) == 3 /* baseline */ && le32(b + 72) == 1);
    CU_ASSERT(le32(b + 76) == 0 && le64(b + 112) == 0);
    u = le64(b + 80);
    memcpy(&d, &u, 8);
    CU_ASSERT(d == x.m.mu);
    u = le64(b + 88);
    memcpy(&d, &u, 8);
    CU_ASSERT(d == x.m.rmin);
    CU_ASSERT(le64(b + 104) == len);
    CU_ASSERT(le64(b + 120) == rk_mfile_hash(b, 120, 0));

    size_t at[NTAG];
    uint64_t pl[NTAG];
    find_records(b, len, at, pl);
    const uint64_t want[NTAG] = {0, 0, 8 * (uint64_t)(nu + 1), 4 * (uint64_t)nnz, 4 * (uint64_t)nnz, 8 * (uint64_t)ni,
                                 8 * (uint64_t)nu, 8 * (uint64_t)ni, 4 * (uint64_t)ni, 4 * (uint64_t)ne,
                                 4 * (uint64_t)ne, 4 * (uint64_t)ne, 0};
    for (int t = 0; t < NTAG; t++) {
        if (t >= 2) CU_ASSERT(pl[t] == want[t]);
        CU_ASSERT(le32(b + at[t] + 4) == 0);
        uint64_t span = 16 + pl[t] + (8 - pl[t] % 8) % 8;
        CU_ASSERT(le64(b + at[t] + span) == rk_mfile_hash(b + at[t], (size_t)span, 0));
        for (uint64_t z = 16 + pl[t]; z < span; z++) CU_ASSERT(b[at[t] + z] == 0);
    }
    /* user ids: a length byte and the bytes, in index order */
    const unsigned char *p = b + at[0] + 16;
    char id[RK_ID_MAX + 1];
    for (int32_t i = 0; i < nu; i++) {
        int l = rk_ids_format(x.users, i, id, sizeof id);
        CU_ASSERT(p[0] == l && memcmp(p + 1, id, (size_t)l) == 0);
        p += 1 + l;
    }
    CU_ASSERT(p == b + at[0] + 16 + pl[0]);
    /* ratings and the packed lists */
    for (int64_t q = 0; q < nnz; q++) {
        float v;
        uint32_t w = le32(b + at[4] + 16 + 4 * q);
        memcpy(&v, &w, 4);
        CU_ASSERT(le32(b + at[3] + 16 + 4 * q) == (uint32_t)x.m.by_user.idx[q] && v == x.m.by_user.val[q]);
    }
    int64_t e = 0;
    for (int32_t i = 0; i < ni; i++) {
        CU_ASSERT(le32(b + at[8] + 16 + 4 * i) == (uint32_t)x.l.len[i]);
        for (int32_t r = 0; r < x.l.len[i]; r++, e++) {
            CU_ASSERT(le32(b + at[9] + 16 + 4 * e) == (uint32_t)x.l.nbr[i * k + r]);
            CU_ASSERT(le32(b + at[11] + 16 + 4 * e) == (uint32_t)x.l.support[i * k + r]);
        }
    }
    free(b);
    free_fixture(&x);
}

/* ---- round trips ------------------------------------------------------------- */

static char tmpdir[64];

static void test_round_trip(void)
{
    const shape shapes[] = {
        {7, 5, 0.5, 1, 0, 0, RK_METRIC_PEARSON, RK_PREDICT_MEANS, 20, 1, 1, 0.0, 0, 0, 1},
        {30, 20, 0.3, 0, 1, 1, RK_METRIC_MSD, RK_PREDICT_BASIC, 4, 3, 2, 0.0, 1, 0, 2},
        {1, 1, 1.0, 1, 0, 0, RK_METRIC_EUCLIDEAN, RK_PREDICT_MEANS, 1, 0, 0, 0.0, 0, 0, 3},
        {2, 9, 0.6, 1, 1, 0, RK_METRIC_PEARSON_BASELINE, RK_PREDICT_BASELINE, 8, 1, 5, 100.0, 2, 1, 4},
        {400, 300, 0.2, 1, 0, 1, RK_METRIC_COSINE, RK_PREDICT_BASELINE, 40, 2, 1, 3.25, 1, 0, 5},
        {50, 120, 0.05, 0, 0, 0, RK_METRIC_PEARSON, RK_PREDICT_MEANS, 300, 1, 1, 0.0, 0, 1, 6},
    };
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
        fixture x;
        make_fixture(&x, &shapes[t]);
        size_t len, len2;
        unsigned char *b = to_bytes(&x, &len), *b2 = to_bytes(&x, &len2);
        CU_ASSERT(len == len2 && memcmp(b, b2, len) == 0); /* deterministic */
        rk_mfile f;
        rk_error err;
        rk_status s = rk_mfile_read_mem(b, len, "mem", &f, &err);
        if (s != RK_OK) printf("shape %zu: %s\n", t, err.msg);
        CU_ASSERT_FATAL(s == RK_OK);
        check_equal(&x, &f);
        rk_mfile_free(&f);
        CU_ASSERT(is_zeroed(&f));

        /* through a file: the same bytes, read back through the mapping */
        char path[128];
        snprintf(path, sizeof path, "%s/m%zu.rkm", tmpdir, t);
        rk_mfile_view v = view_of(&x);
        CU_ASSERT_FATAL(rk_mfile_save(path, &v, &err) == RK_OK);
        FILE *fp = fopen(path, "rb");
        unsigned char *c = malloc(len + 1);
        CU_ASSERT(fp != NULL && fread(c, 1, len + 1, fp) == len && memcmp(c, b, len) == 0);
        if (fp != NULL) fclose(fp);
        free(c);
        CU_ASSERT_FATAL(rk_mfile_read(path, &f, &err) == RK_OK);
        check_equal(&x, &f);
        rk_mfile_free(&f);
        unlink(path);
        free(b);
        free(b2);
        free_fixture(&x);
    }
}

/* ---- refusals ---------------------------------------------------------------- */

/* Read len bytes from an exact-size heap copy (so that a read past the end
 * is a sanitizer error): must be RK_E_MODEL with *out zeroed. */
static int refused(const unsigned char *b, size_t len, const char *expect)
{
    unsigned char *c = malloc(len > 0 ? len : 1);
    memcpy(c, b, len);
    rk_mfile f;
    rk_error err;
    rk_error_clear(&err);
    rk_status s = rk_mfile_read_mem(c, len, "bad.rkm", &f, &err);
    free(c);
    int ok = s == RK_E_MODEL && err.status == RK_E_MODEL && is_zeroed(&f) && strstr(err.msg, "bad.rkm") == err.msg;
    if (ok && expect != NULL && strstr(err.msg, expect) == NULL) ok = 0;
    if (!ok) printf("\n  status %d, message '%s' (wanted '%s')\n", (int)s, err.msg, expect ? expect : "");
    if (s == RK_OK) rk_mfile_free(&f);
    return ok;
}

static void test_truncations(void)
{
    fixture x;
    shape sh = SMALL;
    make_fixture(&x, &sh);
    size_t len;
    unsigned char *b = to_bytes(&x, &len);
    int all = 1;
    for (size_t n = 0; n < len; n++) all &= refused(b, n, NULL);
    CU_ASSERT(all);
    CU_ASSERT(refused(b, 5, "truncated (5 bytes, the header says at least 16)")); /* a prefix of the magic */
    CU_ASSERT(refused(b, 100, "truncated (100 bytes, the header says at least 128)"));
    CU_ASSERT(refused(b, len - 1, "truncated"));
    /* one byte too many */
    unsigned char *c = malloc(len + 1);
    memcpy(c, b, len);
    c[len] = 0;
    CU_ASSERT(refused(c, len + 1, "trailing"));
    free(c);
    free(b);
    free_fixture(&x);
}

static void test_bit_flips(void)
{
    fixture x;
    shape sh = SMALL;
    make_fixture(&x, &sh);
    size_t len;
    unsigned char *b = to_bytes(&x, &len);
    int all = 1;
    for (size_t at = 0; at < len; at++)
        for (int bit = 0; bit < 8; bit++) {
            b[at] ^= (unsigned char)(1u << bit);
            all &= refused(b, len, NULL);
            b[at] ^= (unsigned char)(1u << bit);
        }
    CU_ASSERT(all);
    for (size_t at = 0; at < len; at++) { /* whole bytes */
        b[at] ^= 0xff;
        all &= refused(b, len, NULL);
        b[at] ^= 0xff;
    }
    CU_ASSERT(all);
    rk_mfile f;
    rk_error err;
    CU_ASSERT(rk_mfile_read_mem(b, len, "ok", &f, &err) == RK_OK); /* restored */
    rk_mfile_free(&f);
    free(b);
    free_fixture(&x);
}

static void test_foreign_and_version(void)
{
    fixture x;
    shape sh = SMALL;
    make_fixture(&x, &sh);
    size_t len;
    unsigned char *b = to_bytes(&x, &len);
    b[7] = 'G';
    CU_ASSERT(refused(b, len, "bad.rkm is not a recknn model (bad magic)"));
    b[7] = 'F';
    set32(b + 8, 1);
    CU_ASSERT(refused(b, len, "header checksum")); /* a patched version without its checksum */
    rehash_header(b);
    CU_ASSERT(refused(b, len, "model format version 1, this recknn reads 2 and 3")); /* version 1: no ranking lists */
    set32(b + 8, 4);
    rehash_header(b);
    CU_ASSERT(refused(b, len, "model format version 4, this recknn reads 2 and 3"));
    set32(b + 8, 3); /* version 3 is for a prediction model's files */
    rehash_header(b);
    CU_ASSERT(refused(b, len, "in a file of version 3 (interpolate and global are version 3"));
    set32(b + 8, 2);
    rehash_header(b);
    rk_mfile f;
    rk_error err;
    CU_ASSERT_FATAL(rk_mfile_read_mem(b, len, "ok", &f, &err) == RK_OK);
    rk_mfile_free(&f);
    CU_ASSERT(refused(b, 0, "empty"));
    CU_ASSERT(refused((const unsigned char *)"RECK", 4, "truncated"));
    unsigned long long s = 99;
    unsigned char junk[4096];
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = (unsigned char)rk_test_rand(&s);
    CU_ASSERT(refused(junk, sizeof junk, "bad magic"));
    memcpy(junk, "RECKNNMF", 8); /* the magic, then noise */
    CU_ASSERT(refused(junk, sizeof junk, NULL));
    memcpy(junk, b, 128); /* a valid header, then noise */
    CU_ASSERT(refused(junk, sizeof junk, NULL));
    free(b);
    free_fixture(&x);
}

/* Files whose checksums are right but whose contents break an invariant. */
/* The ranking model's records (ROPT, KLEN..KSUP after LSUP): a round trip
 * of random ranking lists and options, every truncation, and broken
 * options or lists under valid checksums. */
static void test_rank_records(void)
{
    fixture x;
    shape sh = SMALL;
    make_fixture(&x, &sh);
    const int32_t ni = x.l.n_items;
    rk_rankw_opts ro;
    rk_rankw_opts_default(&ro);
    ro.sim = RK_METRIC_WEIGHTED_COSINE;
    ro.weighting = RK_RANKW_BM25;
    ro.ratings = 1;
    ro.alpha = 0.8;
    ro.shrink = 20.0;
    ro.q = 2.0;
    ro.normalize = 0;
    ro.k = 3;
    rk_lists rl;
    CU_ASSERT_FATAL(rk_lists_alloc(&rl, ni, ro.k, NULL) == RK_OK);
    unsigned long long seed = 5;
    for (int32_t i = 0; i < ni; i++) {
        int32_t n = 0;
        for (int32_t j = 0; j < ni && n < ro.k; j++)
            if (j != i && rk_test_rand(&seed) % 2 == 0) {
                rl.nbr[(size_t)i * ro.k + n] = j;
                rl.sim[(size_t)i * ro.k + n] = (float)(1.0 / (n + 1));
                rl.support[(size_t)i * ro.k + n] = n + 1;
                n++;
            }
        rl.len[i] = n;
    }
    char *buf = NULL;
    size_t len = 0;
    rk_error err;
    FILE *fp = open_memstream(&buf, &len);
    rk_mfile_view v = view_of(&x);
    v.rank_lists = &rl;
    v.rank = &ro;
    CU_ASSERT_FATAL(rk_mfile_write(fp, &v, &err) == RK_OK);
    CU_ASSERT_FATAL(fclose(fp) == 0);
    unsigned char *b = (unsigned char *)buf;
    CU_ASSERT(le32(b + 76) == 1);
    rk_mfile f;
    CU_ASSERT_FATAL(rk_mfile_read_mem(b, len, "mem", &f, &err) == RK_OK);
    check_equal(&x, &f);
    CU_ASSERT(f.have_rank);
    CU_ASSERT(f.rank.sim == ro.sim && f.rank.weighting == ro.weighting && f.rank.ratings == 1 && f.rank.k == 3);
    CU_ASSERT(f.rank.alpha == ro.alpha && f.rank.shrink == ro.shrink && f.rank.q == 2.0 && !f.rank.normalize);
    CU_ASSERT(f.rank.bm25_k1 == ro.bm25_k1 && f.rank.bm25_b == ro.bm25_b && f.rank.beta == ro.beta);
    for (int32_t i = 0; i < ni; i++) {
        CU_ASSERT_EQUAL(f.rank_lists.len[i], rl.len[i]);
        const size_t at = (size_t)i * ro.k, n = (size_t)rl.len[i];
        CU_ASSERT(memcmp(f.rank_lists.nbr + at, rl.nbr + at, n * 4) == 0);
        CU_ASSERT(memcmp(f.rank_lists.sim + at, rl.sim + at, n * 4) == 0);
        CU_ASSERT(memcmp(f.rank_lists.support + at, rl.support + at, n * 4) == 0);
    }
    rk_mfile_free(&f);
    for (size_t cut = 0; cut < len; cut += 1 + cut / 7) CU_ASSERT(refused(b, cut, NULL));
    /* the ROPT record follows LSUP: its payload at the end of LSUP's record */
    const size_t P = 16;
    size_t pos = 128;
    for (int t = 0; t < NTAG - 1; t++) { /* past the records up to LSUP, each named as documented */
        CU_ASSERT_FATAL(memcmp(b + pos, TAG[t], 4) == 0);
        const uint64_t pl = le64(b + pos + 8);
        pos += 16 + (size_t)pl + (size_t)((8 - pl % 8) % 8) + 8;
    }
    CU_ASSERT_FATAL(memcmp(b + pos, "ROPT", 4) == 0);
    const size_t ropt = pos;
    unsigned char *c = malloc(len);
    memcpy(c, b, len), set32(c + ropt + P, 3), rehash(c, ropt);         /* cosine: not a ranking similarity */
    CU_ASSERT(refused(c, len, "ranking similarity"));
    memcpy(c, b, len), set32(c + ropt + P + 4, 0), rehash(c, ropt);     /* k = 0 */
    CU_ASSERT(refused(c, len, "ranking options"));
    memcpy(c, b, len), set32(c + ropt + P + 8, 7), rehash(c, ropt);     /* no such weighting */
    CU_ASSERT(refused(c, len, "ranking options"));
    memcpy(c, b, len), set64(c + ropt + P + 48, 0), rehash(c, ropt);    /* q = 0 */
    CU_ASSERT(refused(c, len, "ranking options"));
    memcpy(c, b, len), set32(c + 76, 2), rehash_header(c);              /* a bad flag */
    CU_ASSERT(refused(c, len, "ranking-lists flag"));
    memcpy(c, b, len), set32(c + 76, 0), rehash_header(c);              /* flag off, records there */
    CU_ASSERT(refused(c, len, NULL));
    free(c);
    free(buf);
    rk_lists_free(&rl);
    free_fixture(&x);
}

static void test_invariants(void)
{
    fixture x;
    shape sh = SMALL;
    sh.id_kind = 2; /* ids of one length: they can be swapped or repeated in place */
    sh.full_lists = 1;
    make_fixture(&x, &sh);
    size_t len;
    unsigned char *b = to_bytes(&x, &len);
    unsigned char *c = malloc(len);
    size_t at[NTAG];
    uint64_t pl[NTAG];
    find_records(b, len, at, pl);
    const rk_csr *U = &x.m.by_user;
    int32_t u2 = -1; /* a user with two ratings */
    for (int32_t u = 0; u < U->n_rows && u2 < 0; u++)
        if (U->ptr[u + 1] - U->ptr[u] >= 2) u2 = u;
    CU_ASSERT_FATAL(u2 >= 0);
    const size_t P = 16; /* payload offset in a record */
#define PATCH(stmt, rec, expect)                                                                                \
    do {                                                                                                        \
        memcpy(c, b, len);                                                                                      \
        stmt;                                                                                                   \
        if ((rec) >= 0) rehash(c, at[(rec)]);                                                                   \
        else rehash_header(c);                                                                                  \
        CU_ASSERT(refused(c, len, expect));                                                                     \
    } while (0)
    PATCH(set32(c + at[3] + P + 4 * (size_t)U->ptr[u2], 5), 3, "user");              /* item out of range */
    PATCH(set32(c + at[3] + P + 4 * (size_t)U->ptr[u2], (uint32_t)-1), 3, "user");   /* negative item */
    PATCH(memcpy(c + at[3] + P + 4 * (size_t)U->ptr[u2] + 4, c + at[3] + P + 4 * (size_t)U->ptr[u2], 4), 3,
          "user");                                                                      /* repeated item */
    PATCH(set32(c + at[4] + P, 0x7fc00000u), 4, "not finite");                          /* NaN rating */
    PATCH(set64(c + at[2] + P + 8 * (size_t)(u2 + 1), (uint64_t)U->nnz + 1), 2, "offsets"); /* ptr decreasing */
    PATCH(set64(c + at[2] + P, 1), 2, "offsets");                                       /* ptr[0] != 0 */
    PATCH(set64(c + at[5] + P, 0x7ff0000000000000ULL), 5, "item mean");               /* infinite mean */
    PATCH(set32(c + at[9] + P, 0), 9, "neighbour");                                     /* item 0 its own neighbour */
    PATCH(set32(c + at[9] + P, 5), 9, "neighbour");                                     /* out of range */
    PATCH(memcpy(c + at[9] + P + 4, c + at[9] + P, 4), 9, "neighbour");                 /* repeated */
    PATCH(set32(c + at[10] + P, 0x7f800000u), 10, "similarity");                        /* infinite sim */
    PATCH(set32(c + at[8] + P, 4), 8, "entries");                                       /* len > k */
    PATCH(memcpy(c + at[0] + P + 1, "x001", 4), 0, "not unique");                       /* two users x001 */
    PATCH((memcpy(c + at[0] + P + 1, "x001", 4), memcpy(c + at[0] + P + 6, "x000", 4)), 0, "order"); /* swapped */
    PATCH(c[at[1] + P] = 0, 1, "empty");                                                /* a zero length */
    PATCH(c[at[1] + P + 2] = 0, 1, "NUL");
    PATCH(set32(c + 48, 0), -1, "k = 0");
    PATCH(set32(c + 64, 9), -1, "metric");
    PATCH(set32(c + 68, 0), -1, "mode");
    PATCH(set64(c + 88, 0x4024000000000000ULL), -1, "scale");                          /* rmin 10 > rmax */
    PATCH(set64(c + 56, 0xbff0000000000000ULL), -1, "options");                        /* shrinkage -1 */
    PATCH(set32(c + 20, 0), -1, "must be 0");                                           /* baselines present */
    PATCH(set32(c + 20, 2), -1, "have_baselines");
    PATCH(set64(c + 32, (uint64_t)1 << 40), -1, "cannot fit");                         /* huge nnz */
    PATCH(set64(c + 32, (uint64_t)U->nnz + 1), -1, NULL);                              /* nnz one more */
    PATCH(set32(c + 48, 0x7fffffff), -1, "implausibly large");                         /* huge k */
    PATCH(set32(c + 24, 0x7fffffff), -1, NULL);                                        /* huge user count */
    PATCH(set64(c + 104, len - 8), -1, NULL);                                          /* file size */
    PATCH(set64(c + 40, 0), -1, NULL);                                                 /* list entries */
#undef PATCH
    free(c);
    free(b);
    free_fixture(&x);
}

/* ---- files ------------------------------------------------------------------- */

static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (d == NULL) return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
    closedir(d);
    return n;
}

static void write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "wb");
    CU_ASSERT_FATAL(fp != NULL);
    fputs(text, fp);
    fclose(fp);
}

static int file_is(const char *path, const char *text)
{
    char buf[256];
    FILE *fp = fopen(path, "rb");
    if (fp == NULL) return 0;
    size_t n = fread(buf, 1, sizeof buf, fp);
    fclose(fp);
    return n == strlen(text) && memcmp(buf, text, n) == 0;
}

static void test_files(void)
{
    fixture x;
    shape sh = SMALL;
    make_fixture(&x, &sh);
    rk_mfile_view v = view_of(&x);
    rk_mfile f;
    rk_error err;
    char dir[128], path[160];
    snprintf(dir, sizeof dir, "%s/files", tmpdir);
    CU_ASSERT_FATAL(mkdir(dir, 0700) == 0);

    /* a missing folder: RK_E_IO naming the path, nothing created */
    snprintf(path, sizeof path, "%s/missing/m.rkm", dir);
    CU_ASSERT(rk_mfile_save(path, &v, &err) == RK_E_IO);
    CU_ASSERT(strstr(err.msg, path) != NULL && strstr(err.msg, strerror(ENOENT)) != NULL);
    CU_ASSERT(dir_entries(dir) == 0);

    /* over an existing file: replaced, no temporary left */
    snprintf(path, sizeof path, "%s/m.rkm", dir);
    write_text(path, "old model");
    CU_ASSERT(rk_mfile_save(path, &v, &err) == RK_OK);
    CU_ASSERT(dir_entries(dir) == 1);
    CU_ASSERT_FATAL(rk_mfile_read(path, &f, &err) == RK_OK);
    check_equal(&x, &f);
    rk_mfile_free(&f);

    /* a refused view leaves the old file alone */
    write_text(path, "old model");
    x.o.k = 4; /* lists are of 3 */
    CU_ASSERT(rk_mfile_save(path, &v, &err) == RK_E_ARG);
    x.o.k = 3;
    CU_ASSERT(file_is(path, "old model") && dir_entries(dir) == 1);
    rk_idmap *few = x.users;
    x.users = x.items; /* 5 ids for 7 users */
    v = view_of(&x);
    CU_ASSERT(rk_mfile_save(path, &v, &err) == RK_E_ARG);
    x.users = few;
    v = view_of(&x);

    /* reading: a garbage file, an empty one, a missing one, a folder */
    CU_ASSERT(rk_mfile_read(path, &f, &err) == RK_E_MODEL && is_zeroed(&f));
    CU_ASSERT(strstr(err.msg, "not a recknn model") != NULL);
    write_text(path, "");
    CU_ASSERT(rk_mfile_read(path, &f, &err) == RK_E_MODEL && is_zeroed(&f));
    unlink(path);
    CU_ASSERT(rk_mfile_read(path, &f, &err) == RK_E_IO && is_zeroed(&f));
    CU_ASSERT(strstr(err.msg, path) != NULL);
    CU_ASSERT(rk_mfile_read(dir, &f, &err) == RK_E_IO && is_zeroed(&f));

    /* streams that cannot be written */
    write_text(path, "");
    FILE *ro = fopen(path, "rb");
    CU_ASSERT_FATAL(ro != NULL);
    CU_ASSERT(rk_mfile_write(ro, &v, &err) == RK_E_IO);
    fclose(ro);
    unlink(path);
    FILE *full = fopen("/dev/full", "wb");
    if (full != NULL) {
        CU_ASSERT(rk_mfile_write(full, &v, &err) == RK_E_IO);
        fclose(full);
    }
    CU_ASSERT(rmdir(dir) == 0);
    free_fixture(&x);
}

int main(void)
{
    strcpy(tmpdir, "/tmp/rk_mfile_XXXXXX");
    if (mkdtemp(tmpdir) == NULL) return 99;
    static const rk_test_case cases[] = {
        {"XXH64 against libxxhash", test_hash_vectors},
        {"the documented layout", test_layout},
        {"round trips of random models", test_round_trip},
        {"every truncation", test_truncations},
        {"every flipped bit", test_bit_flips},
        {"foreign files and other versions", test_foreign_and_version},
        {"broken invariants under valid checksums", test_invariants},
        {"the ranking model's records", test_rank_records},
        {"saving and reading files", test_files},
        {NULL, NULL},
    };
    int rc = rk_test_main("mfile", cases);
    rmdir(tmpdir);
    return rc;
}
