/* Model files of the prediction models (io/rk_mfile.h, MODEL_FORMAT.md
 * version 3): --predict interpolate keeps its options, global its options
 * and trained biases and weights; they read back bit for bit, the same
 * model gives the same bytes, a model without one stays version 2, and a
 * reader refuses truncations, corrupted records, a version that does not
 * match the mode and weights that are not finite.  The writer refuses a
 * global model without its trained part. */
#define _POSIX_C_SOURCE 200809L
#include "rk_mfile.h"
#include "rk_backend.h"
#include "test_util.h"
#include "test_pmodel_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NU = 50, NI = 30, K = 6 };

typedef struct fix {
    rk_model m;
    rk_lists l;
    rk_pmodel_global g;
    rk_knn_opts o;
    rk_idmap *users, *items;
} fix;

static rk_idmap *numbered(int32_t n)
{
    char **s = malloc((size_t)n * sizeof *s);
    for (int32_t i = 0; i < n; i++) {
        s[i] = malloc(12);
        snprintf(s[i], 12, "%d", i);
    }
    rk_idmap *m = NULL;
    rk_error err;
    CU_ASSERT_FATAL(rk_ids_from_strings((const char *const *)s, n, &m, &err) == RK_OK);
    for (int32_t i = 0; i < n; i++) free(s[i]);
    free(s);
    return m;
}

/* The lists of a small model and, for global, the model trained on them. */
static void make_fix(fix *x, rk_predict_mode mode)
{
    memset(x, 0, sizeof *x);
    pmodel_make_model(&x->m, NU, NI, 0.3, 1, 77);
    rk_knn_opts_default(&x->o);
    x->o.sim.metric = RK_METRIC_PEARSON_BASELINE;
    x->o.k = K;
    x->o.mode = mode;
    x->o.threads = 2;
    x->o.pm.interp_shrink = 37.5;
    x->o.pm.interp_reg = 0.125;
    x->o.pm.global_lr = 0.004;
    x->o.pm.global_epochs = 3;
    x->o.pm.global_decay = 0.9;
    rk_error err;
    CU_ASSERT_FATAL(rk_lists_alloc(&x->l, NI, K, &err) == RK_OK);
    rk_queries q;
    memset(&q, 0, sizeof q);
    q.global = &x->g;
    rk_gpu_opts g;
    memset(&g, 0, sizeof g);
    CU_ASSERT_FATAL(rk_backend_get(RK_BACKEND_CPU)->knn(&x->m, &x->o, &g, &x->l, &q, NULL, NULL, NULL, &err) ==
                    RK_OK);
    CU_ASSERT_FATAL((mode == RK_PREDICT_GLOBAL) == (x->g.n_items == NI));
    x->users = numbered(NU);
    x->items = numbered(NI);
}

static void free_fix(fix *x)
{
    rk_model_free(&x->m);
    rk_lists_free(&x->l);
    rk_pmodel_global_free(&x->g);
    rk_ids_free(x->users);
    rk_ids_free(x->items);
}

static rk_status write_fix(const fix *x, const rk_pmodel_global *g, unsigned char **b, size_t *len, rk_error *err)
{
    char *buf = NULL;
    FILE *fp = open_memstream(&buf, len);
    CU_ASSERT_FATAL(fp != NULL);
    const rk_mfile_view v = {&x->m, &x->l, x->users, x->items, &x->o, NULL, NULL, g};
    const rk_status s = rk_mfile_write(fp, &v, err);
    CU_ASSERT_FATAL(fclose(fp) == 0);
    *b = (unsigned char *)buf;
    return s;
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t le64(const unsigned char *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}
static void set64(unsigned char *p, uint64_t v)
{
    for (int b = 0; b < 8; b++) p[b] = (unsigned char)(v >> (8 * b));
}

/* The offset of the record tagged tag, walking from the header; 0: none. */
static size_t find_rec(const unsigned char *b, size_t len, const char *tag)
{
    size_t at = 128;
    while (at + 24 <= len) {
        const uint64_t L = le64(b + at + 8);
        if (memcmp(b + at, tag, 4) == 0) return at;
        at += 16 + (size_t)L + (size_t)((8 - L % 8) % 8) + 8;
    }
    return 0;
}

/* The record at `at` hashed again after a patch (so that a check beyond the checksum fires). */
static void rehash(unsigned char *b, size_t at)
{
    const uint64_t L = le64(b + at + 8), body = 16 + L + (8 - L % 8) % 8;
    set64(b + at + body, rk_mfile_hash(b + at, (size_t)body, 0));
}

static int refused(const unsigned char *b, size_t len, const char *expect)
{
    unsigned char *c = malloc(len > 0 ? len : 1);
    memcpy(c, b, len);
    rk_mfile f;
    rk_error err;
    const rk_status s = rk_mfile_read_mem(c, len, "p.rkm", &f, &err);
    free(c);
    int ok = s == RK_E_MODEL && (expect == NULL || strstr(err.msg, expect) != NULL);
    if (!ok) printf("\n  status %d, '%s' (wanted '%s')\n", (int)s, s != RK_OK ? err.msg : "", expect ? expect : "");
    if (s == RK_OK) rk_mfile_free(&f);
    return ok;
}

static void test_round_trip(void)
{
    for (int mode = RK_PREDICT_INTERPOLATE; mode <= RK_PREDICT_GLOBAL; mode++) {
        fix x;
        make_fix(&x, (rk_predict_mode)mode);
        const int global = mode == RK_PREDICT_GLOBAL;
        unsigned char *b, *b2;
        size_t len, len2;
        rk_error err;
        CU_ASSERT_FATAL(write_fix(&x, global ? &x.g : NULL, &b, &len, &err) == RK_OK);
        CU_ASSERT_FATAL(write_fix(&x, global ? &x.g : NULL, &b2, &len2, &err) == RK_OK);
        CU_ASSERT(len == len2 && memcmp(b, b2, len) == 0);
        CU_ASSERT(le32(b + 8) == 3 && le32(b + 68) == (uint32_t)(global ? 5 : 4));
        const size_t popt = find_rec(b, len, "POPT");
        CU_ASSERT_FATAL(popt > 0 && le64(b + popt + 8) == 48);
        CU_ASSERT(find_rec(b, len, "GWTS") == 0 || global);
        rk_mfile f;
        CU_ASSERT_FATAL(rk_mfile_read_mem(b, len, "p.rkm", &f, &err) == RK_OK);
        CU_ASSERT(f.version == 3 && f.knn.mode == (rk_predict_mode)mode);
        CU_ASSERT(memcmp(&f.knn.pm, &x.o.pm, sizeof f.knn.pm) == 0);
        CU_ASSERT(f.lists.k == K && memcmp(f.lists.len, x.l.len, NI * sizeof *x.l.len) == 0);
        if (global) {
            CU_ASSERT_FATAL(f.global.n_users == NU && f.global.n_items == NI && f.global.k == K);
            CU_ASSERT(memcmp(f.global.bu, x.g.bu, NU * sizeof(double)) == 0);
            CU_ASSERT(memcmp(f.global.bi, x.g.bi, NI * sizeof(double)) == 0);
            /* the padded cells of both are zero: the whole arrays match */
            CU_ASSERT(memcmp(f.global.w, x.g.w, (size_t)NI * K * sizeof(double)) == 0);
            CU_ASSERT(memcmp(f.global.c, x.g.c, (size_t)NI * K * sizeof(double)) == 0);
            int moved = 0;
            for (int t = 0; t < NI * K; t++) moved += x.g.w[t] != 0.0;
            CU_ASSERT(moved > NI); /* trained, not the zeros it started from */
        } else {
            CU_ASSERT(f.global.n_items == 0 && f.global.w == NULL);
        }
        rk_mfile_free(&f);
        /* the same model under --predict baseline: version 2, without the records */
        free(b2);
        x.o.mode = RK_PREDICT_BASELINE;
        CU_ASSERT_FATAL(write_fix(&x, NULL, &b2, &len2, &err) == RK_OK);
        CU_ASSERT(le32(b2 + 8) == 2 && find_rec(b2, len2, "POPT") == 0);
        size_t ne = 0;
        for (int i = 0; i < NI; i++) ne += (size_t)x.l.len[i];
        /* records of 24 bytes and their payloads: the options (48), b_u, b_i, w and c (f64) */
        CU_ASSERT(len == len2 + 72 + (global ? 4 * 24 + 8 * (NU + NI + 2 * ne) : 0));
        free(b2);
        free(b);
        free_fix(&x);
    }
}

static void test_refusals(void)
{
    fix x;
    make_fix(&x, RK_PREDICT_GLOBAL);
    unsigned char *b;
    size_t len;
    rk_error err;
    /* the writer: global without its trained model, or with a weight that is not finite */
    CU_ASSERT(write_fix(&x, NULL, &b, &len, &err) == RK_E_ARG && strstr(err.msg, "trained model") != NULL);
    free(b);
    x.g.w[K + 1] = NAN;
    CU_ASSERT(write_fix(&x, &x.g, &b, &len, &err) == RK_E_ARG && strstr(err.msg, "not finite") != NULL);
    free(b);
    x.g.w[K + 1] = 0.25;
    CU_ASSERT_FATAL(write_fix(&x, &x.g, &b, &len, &err) == RK_OK);
    int all = 1;
    for (size_t n = 0; n < len; n += 7) all &= refused(b, n, NULL);
    CU_ASSERT(all);
    /* a flipped bit in each record of version 3 */
    static const char *const tags[] = {"POPT", "GBUS", "GBIS", "GWTS", "GCTS"};
    for (int t = 0; t < 5; t++) {
        const size_t at = find_rec(b, len, tags[t]);
        CU_ASSERT_FATAL(at > 0);
        b[at + 16] ^= 0x10;
        CU_ASSERT(refused(b, len, "checksum mismatch"));
        b[at + 16] ^= 0x10;
    }
    /* a weight that is not finite, under a valid checksum */
    const size_t gw = find_rec(b, len, "GWTS");
    unsigned char keep[8];
    memcpy(keep, b + gw + 16, 8);
    set64(b + gw + 16, 0x7ff8000000000000ULL);
    rehash(b, gw);
    CU_ASSERT(refused(b, len, "is not finite"));
    memcpy(b + gw + 16, keep, 8);
    rehash(b, gw);
    /* a negative step in the options */
    const size_t po = find_rec(b, len, "POPT");
    set64(b + po + 16 + 16, 0xbff0000000000000ULL); /* -1.0 */
    rehash(b, po);
    CU_ASSERT(refused(b, len, "invalid prediction model options"));
    set64(b + po + 16 + 16, 0x3f70624dd2f1a9fcULL); /* 0.004 */
    rehash(b, po);
    /* the mode of version 3 in a file that says version 2 */
    b[8] = 2;
    set64(b + 120, rk_mfile_hash(b, 120, 0));
    CU_ASSERT(refused(b, len, "in a file of version 2"));
    b[8] = 3;
    set64(b + 120, rk_mfile_hash(b, 120, 0));
    rk_mfile f;
    const rk_status s = rk_mfile_read_mem(b, len, "p.rkm", &f, &err);
    CU_ASSERT(s == RK_OK); /* every patch undone */
    if (s == RK_OK) rk_mfile_free(&f);
    free(b);
    free_fix(&x);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"version 3: the models read back bit for bit", test_round_trip},
        {"version 3: refusals", test_refusals},
        {NULL, NULL},
    };
    return rk_test_main("mfile_pmodel", cases);
}
