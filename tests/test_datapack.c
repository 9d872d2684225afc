/* test_datapack.c — rk_data_pack / rk_data_unpack: real files loaded by
 * rk_data_load (no split, --holdout, a --test file with baselines, the
 * resampled path without a model, timestamps, string ids) come back from a
 * pack field by field and bit for bit; broken packs are refused
 * (RK_E_INTERNAL) without reading past their end. */
#include "rk_data.h"
#include "rk_model.h"
#include "test_util.h"
#include "test_load_report.h"

#include <stdint.h>
#include <string.h>

static const char *path_of(const char *rel)
{
    static char path[4][1024];
    static int k;
    const char *top = getenv("top_srcdir") != NULL ? getenv("top_srcdir") : ".";
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", top, rel);
    return path[k];
}

static const char *inputs[1];

static void opts_for(rk_data_opts *o, const char *rel)
{
    memset(o, 0, sizeof *o);
    inputs[0] = path_of(rel);
    o->inputs = inputs;
    o->n_inputs = 1;
    rk_load_opts_default(&o->load);
    o->duplicates = RK_DUP_LAST;
}

static void load(const rk_data_opts *o, rk_data *d)
{
    rk_error e = {0};
    rk_status s = rk_data_load(o, d, &e);
    if (s != RK_OK) fprintf(stderr, "\nrk_data_load: %s\n", e.msg);
    CU_ASSERT_EQUAL_FATAL(s, RK_OK);
}

static int model_built(const rk_model *m)
{
    return m->by_user.n_rows > 0 || m->by_user.ptr != NULL;
}

/* ---- field-by-field comparison ------------------------------------------------- */

static void same_bytes(const void *a, const void *b, int64_t n, size_t el)
{
    if (n <= 0) return;
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_PTR_NOT_EQUAL(a, b); /* a copy, not the same array */
    CU_ASSERT_EQUAL(memcmp(a, b, (size_t)n * el), 0);
}

static void same_double(double a, double b)
{
    CU_ASSERT_EQUAL(memcmp(&a, &b, sizeof a), 0);
}

static void same_ids(const rk_idmap *a, const rk_idmap *b)
{
    char sa[RK_ID_MAX + 1], sb[RK_ID_MAX + 1];
    CU_ASSERT_EQUAL((a == NULL), (b == NULL));
    CU_ASSERT_EQUAL_FATAL(rk_ids_count(a), rk_ids_count(b));
    CU_ASSERT_EQUAL(rk_ids_numeric(a), rk_ids_numeric(b));
    int bad = 0;
    for (int32_t i = 0; i < rk_ids_count(a); i++) {
        int la = rk_ids_format(a, i, sa, sizeof sa), lb = rk_ids_format(b, i, sb, sizeof sb);
        if (la != lb || la < 1 || strcmp(sa, sb) != 0 || rk_ids_find(b, sa, (size_t)la) != i) {
            if (bad++ < 5) fprintf(stderr, "\nindex %d: %s, unpacked %s\n", (int)i, sa, sb);
        }
    }
    CU_ASSERT_EQUAL(bad, 0);
}

static void same_triples(const rk_triples *a, const rk_triples *b)
{
    CU_ASSERT_EQUAL_FATAL(a->n, b->n);
    CU_ASSERT_EQUAL(a->user == NULL, b->user == NULL);
    CU_ASSERT_EQUAL(a->time == NULL, b->time == NULL);
    same_bytes(a->user, b->user, a->n, sizeof *a->user);
    same_bytes(a->item, b->item, a->n, sizeof *a->item);
    same_bytes(a->rating, b->rating, a->n, sizeof *a->rating);
    if (a->time != NULL && b->time != NULL) same_bytes(a->time, b->time, a->n, sizeof *a->time);
}

static void same_csr(const rk_csr *a, const rk_csr *b)
{
    CU_ASSERT_EQUAL_FATAL(a->n_rows, b->n_rows);
    CU_ASSERT_EQUAL_FATAL(a->n_cols, b->n_cols);
    CU_ASSERT_EQUAL_FATAL(a->nnz, b->nnz);
    same_bytes(a->ptr, b->ptr, (int64_t)a->n_rows + 1, sizeof *a->ptr);
    same_bytes(a->idx, b->idx, a->nnz, sizeof *a->idx);
    same_bytes(a->val, b->val, a->nnz, sizeof *a->val);
}

static void same_model(const rk_model *a, const rk_model *b)
{
    CU_ASSERT_EQUAL_FATAL(model_built(a), model_built(b));
    same_double(a->mu, b->mu);
    same_double(a->rmin, b->rmin);
    same_double(a->rmax, b->rmax);
    CU_ASSERT_EQUAL(a->have_baselines, b->have_baselines);
    if (!model_built(a)) {
        CU_ASSERT_PTR_NULL(b->by_item.ptr);
        CU_ASSERT_PTR_NULL(b->item_mean);
        CU_ASSERT_PTR_NULL(b->bu);
        CU_ASSERT_PTR_NULL(b->bi);
        return;
    }
    same_csr(&a->by_user, &b->by_user);
    same_csr(&a->by_item, &b->by_item);
    same_bytes(a->item_mean, b->item_mean, a->by_user.n_cols, sizeof *a->item_mean);
    same_bytes(a->bu, b->bu, a->by_user.n_rows, sizeof *a->bu);
    same_bytes(a->bi, b->bi, a->by_user.n_cols, sizeof *a->bi);
}

static void same_report(const rk_load_report *a, const rk_load_report *b)
{
    rk_test_same_load_report(a, b);
    for (int k = a->n_bad_kept; k < RK_LOAD_BAD_KEPT; k++) { /* the entries not used travel too */
        CU_ASSERT_EQUAL(a->bad[k].file, b->bad[k].file);
        CU_ASSERT_EQUAL(a->bad[k].line, b->bad[k].line);
    }
    same_double(a->read_parse_s, b->read_parse_s);
}

static void same_data(const rk_data *a, const rk_data *b)
{
    same_ids(a->ds.users, b->ds.users);
    same_ids(a->ds.items, b->ds.items);
    same_triples(&a->train, &b->train);
    same_triples(&a->test, &b->test);
    same_model(&a->model, &b->model);
    same_report(&a->ds.train_report, &b->ds.train_report);
    same_report(&a->ds.test_report, &b->ds.test_report);
    CU_ASSERT_EQUAL(a->duplicates_removed, b->duplicates_removed);
    /* the copy owns its triples through ds, once: rk_data_free frees them there */
    CU_ASSERT_EQUAL(b->own_split_, 0);
    CU_ASSERT_PTR_EQUAL(b->ds.train.user, b->train.user);
    CU_ASSERT_PTR_EQUAL(b->ds.train.time, b->train.time);
    CU_ASSERT_PTR_EQUAL(b->ds.test.rating, b->test.rating);
    CU_ASSERT_EQUAL(b->ds.train.n, b->train.n);
    CU_ASSERT_EQUAL(b->ds.test.n, b->test.n);
    double t = b->t_read_parse + b->t_ids + b->t_dedupe + b->t_split + b->t_model + b->t_total + b->ds.ids_s;
    CU_ASSERT_EQUAL(t, 0.0);
}

/* pack, unpack, compare, pack the copy again (the same bytes), free the
 * copy; the pack stays with the caller (*buf, *bytes) when asked for. */
static void roundtrip(const rk_data *d, unsigned char **keep, size_t *keep_bytes)
{
    unsigned char *buf = NULL, *buf2 = NULL;
    size_t bytes = 0, bytes2 = 0;
    rk_error e = {0};
    rk_data c;
    CU_ASSERT_EQUAL_FATAL(rk_data_pack(d, &buf, &bytes, &e), RK_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    CU_ASSERT_EQUAL(bytes % 8, 0);
    rk_status s = rk_data_unpack(buf, bytes, &c, &e);
    if (s != RK_OK) fprintf(stderr, "\nrk_data_unpack: %s\n", e.msg);
    CU_ASSERT_EQUAL_FATAL(s, RK_OK);
    same_data(d, &c);
    CU_ASSERT_EQUAL(rk_data_pack(&c, &buf2, &bytes2, &e), RK_OK);
    CU_ASSERT_EQUAL(bytes2, bytes);
    if (buf2 != NULL && bytes2 == bytes) CU_ASSERT_EQUAL(memcmp(buf, buf2, bytes), 0);
    free(buf2);
    rk_data_free(&c);
    CU_ASSERT_PTR_NULL(c.ds.users);
    CU_ASSERT_PTR_NULL(c.train.user);
    if (keep != NULL) {
        *keep = buf;
        *keep_bytes = bytes;
    } else {
        free(buf);
    }
}

/* ---- broken packs -------------------------------------------------------------- */

/* Unpack a copy of n bytes in a block of exactly n (so that a read past the
 * end is seen by valgrind or ASan). */
static rk_status unpack_copy(const unsigned char *src, size_t n, rk_data *c)
{
    unsigned char *b = malloc(n > 0 ? n : 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    if (n > 0) memcpy(b, src, n);
    rk_error e = {0};
    rk_status s = rk_data_unpack(b, n, c, &e);
    if (s != RK_OK) CU_ASSERT(e.msg[0] != '\0');
    free(b);
    return s;
}

static int zeroed(const rk_data *c)
{
    static const rk_data z;
    return memcmp(c, &z, sizeof z) == 0;
}

static void expect_refused(const unsigned char *src, size_t n, const char *what, size_t at)
{
    rk_data c;
    rk_status s = unpack_copy(src, n, &c);
    if (s != RK_E_INTERNAL) fprintf(stderr, "\n%s (%zu): status %d\n", what, at, (int)s);
    CU_ASSERT_EQUAL(s, RK_E_INTERNAL);
    CU_ASSERT(zeroed(&c));
    if (s == RK_OK) rk_data_free(&c);
}

/* The offset of the 8-byte word holding the pack's length, in its head. */
static size_t total_word(const unsigned char *buf, size_t bytes)
{
    for (size_t o = 0; o + 8 <= 256 && o + 8 <= bytes; o += 8) {
        uint64_t v;
        memcpy(&v, buf + o, 8);
        if (v == bytes) return o;
    }
    CU_FAIL("no word of the head holds the pack's length");
    return 0;
}

static void set_word(unsigned char *b, size_t o, uint64_t v)
{
    memcpy(b + o, &v, 8);
}

/* Truncations (every length when every_length, else a few), with the head's
 * length as it is and set to the truncated length; extra bytes; a bad magic;
 * every head word set to values that break it. */
static void check_broken(const unsigned char *buf, size_t bytes, int every_length)
{
    const size_t tw = total_word(buf, bytes);
    unsigned char *b = malloc(bytes + 8);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    const size_t few[] = {0, 1, 7, 8, 16, 64, 128, bytes / 4, bytes / 2, bytes - 16, bytes - 8, bytes - 1};
    const size_t n_cut = every_length ? bytes : sizeof few / sizeof few[0];
    for (size_t k = 0; k < n_cut; k++) {
        size_t cut = every_length ? k : few[k];
        if (cut >= bytes) continue;
        expect_refused(buf, cut, "truncated", cut);
        if (cut >= tw + 8) { /* the head says the truncated length: the parts must not fit */
            memcpy(b, buf, cut);
            set_word(b, tw, cut);
            expect_refused(b, cut, "truncated, length patched", cut);
        }
    }
    /* longer than the pack: as it is, and with the length patched */
    memcpy(b, buf, bytes);
    memset(b + bytes, 0, 8);
    expect_refused(b, bytes + 8, "8 bytes more", bytes);
    set_word(b, tw, bytes + 8);
    expect_refused(b, bytes + 8, "8 bytes more, length patched", bytes);
    /* wrong magic */
    memcpy(b, buf, bytes);
    b[0] ^= 0x20;
    expect_refused(b, bytes, "magic", 0);
    b[0] ^= 0x20;
    b[5] ^= 0x01;
    expect_refused(b, bytes, "magic", 5);
    /* every word of the head set to huge, negative and off-by-one values:
     * refused, or (a value no size depends on: a mean, the duplicates count)
     * accepted; never a crash, never another status */
    const uint64_t bad[] = {UINT64_MAX, (uint64_t)INT64_MAX, (uint64_t)INT64_MIN, (uint64_t)1 << 32, 0};
    int refused = 0;
    for (size_t o = 0; o + 8 <= 256 && o + 8 <= bytes; o += 8) {
        for (size_t v = 0; v < sizeof bad / sizeof bad[0] + 1; v++) {
            uint64_t w;
            memcpy(b, buf, bytes);
            memcpy(&w, b + o, 8);
            if (w == (v < sizeof bad / sizeof bad[0] ? bad[v] : w + 1)) continue;
            set_word(b, o, v < sizeof bad / sizeof bad[0] ? bad[v] : w + 1);
            rk_data c;
            rk_status s = unpack_copy(b, bytes, &c);
            CU_ASSERT(s == RK_OK || s == RK_E_INTERNAL);
            if (s == RK_OK) rk_data_free(&c);
            else CU_ASSERT(zeroed(&c));
            refused += s == RK_E_INTERNAL;
        }
    }
    CU_ASSERT(refused > 0);
    free(b);
    /* the intact pack still unpacks (the checks above refuse for a reason) */
    rk_data c;
    CU_ASSERT_EQUAL(unpack_copy(buf, bytes, &c), RK_OK);
    rk_data_free(&c);
}

/* ---- the cases ----------------------------------------------------------------- */

static void test_plain(void)
{
    rk_data_opts o;
    rk_data d;
    opts_for(&o, "sample_data/ratings.csv");
    load(&o, &d);
    CU_ASSERT(model_built(&d.model));
    CU_ASSERT_EQUAL(d.test.n, 0);
    CU_ASSERT_PTR_NULL(d.train.time);
    unsigned char *buf = NULL;
    size_t bytes = 0;
    roundtrip(&d, &buf, &bytes);
    if (buf != NULL) check_broken(buf, bytes, 0);
    free(buf);
    rk_data_free(&d);
}

static void test_holdout(void)
{
    rk_data_opts o;
    rk_data d;
    opts_for(&o, "sample_data/ratings.csv");
    o.holdout = 0.2;
    o.seed = 7;
    load(&o, &d);
    CU_ASSERT_EQUAL(d.own_split_, 1);
    CU_ASSERT(d.test.n > 0);
    CU_ASSERT(d.train.n > d.test.n);
    CU_ASSERT_EQUAL(d.model.by_user.nnz, d.train.n);
    roundtrip(&d, NULL, NULL);
    rk_data_free(&d);
}

static void test_baselines_testfile(void)
{
    rk_data_opts o;
    rk_data d;
    opts_for(&o, "sample_data/ratings.csv");
    o.test_path = path_of("sample_data/test.csv");
    o.with_baselines = 1;
    load(&o, &d);
    CU_ASSERT_EQUAL(d.own_split_, 0);
    CU_ASSERT(d.test.n > 0);
    CU_ASSERT_EQUAL(d.model.have_baselines, 1);
    int nonzero = 0;
    for (int32_t u = 0; u < d.model.by_user.n_rows; u++) nonzero += d.model.bu[u] != 0.0;
    CU_ASSERT(nonzero > 0);
    CU_ASSERT(d.ds.test_report.ratings > 0);
    roundtrip(&d, NULL, NULL);
    rk_data_free(&d);
}

static void test_no_model(void)
{
    rk_data_opts o;
    rk_data d;
    opts_for(&o, "sample_data/ratings.csv");
    o.no_model = 1;
    load(&o, &d);
    CU_ASSERT(!model_built(&d.model));
    CU_ASSERT(d.train.n > 0);
    roundtrip(&d, NULL, NULL);
    rk_data_free(&d);
}

static void test_times(void)
{
    rk_data_opts o;
    rk_data d;
    opts_for(&o, "sample_data/ratings.csv");
    o.load.want_time = 1;
    o.holdout = 0.25;
    o.seed = 11;
    load(&o, &d);
    CU_ASSERT_PTR_NOT_NULL(d.train.time);
    CU_ASSERT_PTR_NOT_NULL(d.test.time);
    CU_ASSERT_EQUAL(d.ds.train_report.has_time, 1);
    roundtrip(&d, NULL, NULL);
    rk_data_free(&d);

    /* netflix dates, resampled */
    opts_for(&o, "tests/data/fmt/netflix.txt");
    o.load.want_time = 1;
    o.no_model = 1;
    load(&o, &d);
    CU_ASSERT_EQUAL(d.ds.train_report.format, RK_FMT_NETFLIX);
    CU_ASSERT_PTR_NOT_NULL(d.train.time);
    roundtrip(&d, NULL, NULL);
    rk_data_free(&d);
}

/* Ids in ascending order by CONTRACT.md §1: numbers when every id is a canonical
 * integer, else bytes (checked from the strings, not from the map). */
static void expect_order(const rk_idmap *m, int numeric)
{
    char a[RK_ID_MAX + 1], b[RK_ID_MAX + 1];
    int bad = 0;
    for (int32_t i = 1; i < rk_ids_count(m); i++) {
        rk_ids_format(m, i - 1, a, sizeof a);
        rk_ids_format(m, i, b, sizeof b);
        if (numeric ? !(strtoll(a, NULL, 10) < strtoll(b, NULL, 10)) : !(strcmp(a, b) < 0)) bad++;
    }
    CU_ASSERT_EQUAL(bad, 0);
}

static void test_string_ids(void)
{
    rk_data_opts o;
    rk_data d;
    char s[RK_ID_MAX + 1];
    opts_for(&o, "tests/data/pack/mixed_ids.csv");
    o.load.want_time = 1;
    o.with_baselines = 1;
    o.holdout = 0.3;
    o.seed = 3;
    load(&o, &d);
    /* users mix integers ("9", "10", "100", "-3") with strings ("007", "-0",
     * "a,b", "ü"): bytes order them, "10" before "9"; items are integers from
     * INT64_MIN to INT64_MAX: numbers order them */
    CU_ASSERT_EQUAL(rk_ids_numeric(d.ds.users), 0);
    CU_ASSERT_EQUAL(rk_ids_numeric(d.ds.items), 1);
    CU_ASSERT(rk_ids_find(d.ds.users, "10", 2) < rk_ids_find(d.ds.users, "9", 1));
    CU_ASSERT(rk_ids_find(d.ds.users, "a,b", 3) >= 0);
    CU_ASSERT(rk_ids_find(d.ds.users, "\xc3\xbc", 2) >= 0);
    CU_ASSERT(rk_ids_find(d.ds.items, "9223372036854775807", 19) >= 0);
    expect_order(d.ds.users, 0);
    expect_order(d.ds.items, 1);
    rk_ids_format(d.ds.items, 0, s, sizeof s);
    CU_ASSERT_STRING_EQUAL(s, "-9223372036854775808");
    CU_ASSERT(d.duplicates_removed > 0);
    CU_ASSERT(d.test.n > 0);
    CU_ASSERT_PTR_NOT_NULL(d.test.time);
    unsigned char *buf = NULL;
    size_t bytes = 0;
    roundtrip(&d, &buf, &bytes);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    check_broken(buf, bytes, 1);

    /* the users' ids in the pack: two merged into one, and two swapped
     * (a map rebuilt from them orders them back: the indices would move) */
    static const char first[] = "-0\0-3\0"; /* the first two users, in byte order */
    unsigned char *at = NULL;
    for (size_t k = 0; k + sizeof first - 1 <= bytes && at == NULL; k++)
        if (memcmp(buf + k, first, sizeof first - 1) == 0) at = buf + k;
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    at[2] = 'x';
    expect_refused(buf, bytes, "two ids merged", 0);
    memcpy(at, "-3\0-0\0", 6);
    expect_refused(buf, bytes, "two ids swapped", 0);
    memcpy(at, first, 6);
    rk_data c;
    CU_ASSERT_EQUAL(unpack_copy(buf, bytes, &c), RK_OK);
    rk_data_free(&c);
    free(buf);
    rk_data_free(&d);

    /* the same ids, resampled */
    opts_for(&o, "tests/data/pack/mixed_ids.csv");
    o.no_model = 1;
    load(&o, &d);
    roundtrip(&d, NULL, NULL);
    rk_data_free(&d);
}

/* ---- the data stage's sort elsewhere and the deferred item-major matrix ---- */

typedef struct hook_state {
    int mode;   /* 0: leave it to the host, 1: sort (on the CPU, standing in for the GPU), 2: fail */
    int calls;
    int notes;
    int64_t left_out; /* ratings the hook was told to leave out */
} hook_state;

static rk_status sort_hook(void *ud, const rk_triples *t, const rk_idmap *users, const rk_idmap *items,
                           const uint64_t *leave_out, rk_dup_policy policy, rk_dup_found *found, rk_csr *out,
                           int *taken, rk_error *err)
{
    hook_state *h = ud;
    h->calls++;
    CU_ASSERT_EQUAL(policy, RK_DUP_LAST);
    /* the data stage zeroes what the hook may find: one that takes nothing
     * leaves it alone */
    CU_ASSERT_PTR_NULL(found->drop);
    CU_ASSERT_EQUAL(found->removed, 0);
    *taken = 0;
    h->left_out = 0;
    if (h->mode == 2) return rk_error_set(err, RK_E_GPU, "a failure of the test's sort");
    if (h->mode == 0) return RK_OK;
    memset(found, 0, sizeof *found); /* the sample file repeats no pair */
    rk_triples c; /* the host's matrix of the ratings not left out, from a copy */
    CU_ASSERT_EQUAL_FATAL(rk_triples_alloc(&c, t->n, 0, err), RK_OK);
    c.n = 0;
    for (int64_t p = 0; p < t->n; p++) {
        if (leave_out != NULL && (leave_out[p >> 6] >> (p & 63) & 1)) {
            h->left_out++;
            continue;
        }
        c.user[c.n] = t->user[p];
        c.item[c.n] = t->item[p];
        c.rating[c.n] = t->rating[p];
        c.n++;
    }
    rk_dup_report rep;
    rk_status s = rk_triples_dedupe_csr(&c, rk_ids_count(users), rk_ids_count(items), RK_DUP_LAST, NULL, out, NULL,
                                        &rep, err);
    rk_triples_free(&c);
    *taken = s == RK_OK;
    return s;
}

static void count_note(void *ud, const char *msg)
{
    hook_state *h = ud;
    h->notes += strstr(msg, "a failure of the test's sort") != NULL && strstr(msg, "sorting on the host") != NULL;
}

/* The training matrix sorted by the hook (taken), left to the host, or
 * after the hook failed (a note, then the host): the same data each time. */
static void test_sort_elsewhere(void)
{
    rk_data_opts o;
    rk_data plain;
    opts_for(&o, "sample_data/ratings.csv");
    load(&o, &plain);
    for (int mode = 0; mode < 3; mode++)
        for (int hold = 0; hold < 2; hold++) {
            hook_state h = {mode, 0, 0, 0};
            rk_data d, ref;
            opts_for(&o, "sample_data/ratings.csv");
            o.holdout = hold ? 0.1 : 0.0;
            o.seed = 3;
            if (hold) load(&o, &ref);
            o.sort_csr = sort_hook;
            o.sort_ud = &h;
            o.load.note = count_note;
            o.load.note_ud = &h;
            load(&o, &d);
            CU_ASSERT_EQUAL(h.calls, 1);
            CU_ASSERT_EQUAL(d.sorted_elsewhere, mode == 1);
            CU_ASSERT_EQUAL(h.notes, mode == 2);
            /* with the holdout the matrix came without the held-out ratings */
            if (mode == 1) CU_ASSERT_EQUAL(h.left_out, hold ? d.test.n : 0);
            if (mode == 1 && hold) CU_ASSERT(d.test.n > 0);
            const rk_data *want = hold ? &ref : &plain;
            same_triples(&want->train, &d.train);
            same_triples(&want->test, &d.test);
            same_model(&want->model, &d.model);
            CU_ASSERT_EQUAL(want->duplicates_removed, d.duplicates_removed);
            rk_data_free(&d);
            if (hold) rk_data_free(&ref);
        }
    rk_data_free(&plain);
}

/* defer_item_major: the model without its item-major entries, then the
 * same model once rk_model_item_major builds them; a pack refuses it. */
static void test_deferred_model(void)
{
    rk_data_opts o;
    rk_data plain, d;
    opts_for(&o, "sample_data/ratings.csv");
    load(&o, &plain);
    o.defer_item_major = 1;
    load(&o, &d);
    CU_ASSERT(!rk_model_item_major_ready(&d.model));
    same_bytes(plain.model.by_item.ptr, d.model.by_item.ptr, (int64_t)plain.model.by_item.n_rows + 1,
               sizeof *d.model.by_item.ptr);
    same_bytes(plain.model.item_mean, d.model.item_mean, plain.model.by_item.n_rows, sizeof *d.model.item_mean);
    unsigned char *buf = NULL;
    size_t bytes = 0;
    rk_error e;
    CU_ASSERT_EQUAL(rk_data_pack(&d, &buf, &bytes, &e), RK_E_INTERNAL);
    CU_ASSERT_PTR_NULL(buf);
    CU_ASSERT_EQUAL_FATAL(rk_model_item_major(&d.model, &e), RK_OK);
    same_model(&plain.model, &d.model);
    rk_data_free(&d);
    /* baselines walk the item-major rows: asked for, the model is whole */
    o.with_baselines = 1;
    load(&o, &d);
    CU_ASSERT(rk_model_item_major_ready(&d.model));
    CU_ASSERT(d.model.have_baselines);
    rk_data_free(&d);
    rk_data_free(&plain);
}

static void test_unpack_args(void)
{
    rk_data c;
    rk_error e = {0};
    memset(&c, 0x5a, sizeof c);
    CU_ASSERT_EQUAL(rk_data_unpack(NULL, 0, &c, &e), RK_E_INTERNAL);
    CU_ASSERT(zeroed(&c));
    CU_ASSERT(strstr(e.msg, "not whole") != NULL);
    static const unsigned char junk[512];
    CU_ASSERT_EQUAL(rk_data_unpack(junk, sizeof junk, &c, &e), RK_E_INTERNAL);
    CU_ASSERT(zeroed(&c));
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"no split", test_plain},
        {"holdout", test_holdout},
        {"baselines and a test file", test_baselines_testfile},
        {"no model (resampled)", test_no_model},
        {"timestamps", test_times},
        {"string ids", test_string_ids},
        {"unpack arguments", test_unpack_args},
        {"the training matrix sorted elsewhere, or not", test_sort_elsewhere},
        {"the item-major matrix deferred", test_deferred_model},
        {NULL, NULL},
    };
    return rk_test_main("datapack", cases);
}
