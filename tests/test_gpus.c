/* rk_gpus_parse / rk_gpus_resolve (--gpus all|N|LIST) and rk_dist_load_parse
 * (--mpi-load): every accepted form, the refused ones (with a message naming
 * the text, the spec left as it was), and resolution against 0, 1, 2, 4 and
 * more than RK_GPUS_MAX visible devices, errors included. */
#include "rk_dist.h"
#include "rk_gpus.h"
#include "test_util.h"

#include <string.h>

/* A spec whose every field is set: a failed parse must leave it so. */
static rk_gpus_spec marked(void)
{
    rk_gpus_spec s;
    memset(&s, 0, sizeof s);
    s.all = 7;
    s.count = 7;
    s.n_ids = 7;
    for (int i = 0; i < RK_GPUS_MAX; i++) s.ids[i] = -7;
    return s;
}

static int is_zeroed(const rk_gpus_spec *s)
{
    static const rk_gpus_spec zero;
    return memcmp(s, &zero, sizeof zero) == 0;
}

/* parse s, expecting RK_OK */
static rk_gpus_spec ok(const char *s)
{
    rk_gpus_spec sp = marked();
    rk_error err;
    rk_error_clear(&err);
    rk_status st = rk_gpus_parse(s, &sp, &err);
    CU_ASSERT_EQUAL(st, RK_OK);
    if (st != RK_OK) fprintf(stderr, "'%s' refused: %s\n", s, err.msg);
    return sp;
}

/* parse s, expecting RK_E_ARG, a message naming s, the spec untouched */
static void bad(const char *s)
{
    rk_gpus_spec sp = marked(), want = marked();
    rk_error err;
    rk_error_clear(&err);
    CU_ASSERT_EQUAL(rk_gpus_parse(s, &sp, &err), RK_E_ARG);
    CU_ASSERT_EQUAL(err.status, RK_E_ARG);
    char quoted[128];
    snprintf(quoted, sizeof quoted, "'%s'", s);
    if (strstr(err.msg, quoted) == NULL) {
        fprintf(stderr, "message for %s does not name it: %s\n", quoted, err.msg);
        CU_FAIL("the message does not name the text");
    }
    CU_ASSERT(memcmp(&sp, &want, sizeof sp) == 0);
}

static void test_parse_default(void)
{
    rk_gpus_spec sp = ok(NULL);
    CU_ASSERT(is_zeroed(&sp));
    CU_ASSERT_EQUAL(rk_gpus_given(&sp), 0);
    CU_ASSERT_EQUAL(rk_gpus_given(NULL), 0);
    sp = ok("");
    CU_ASSERT(is_zeroed(&sp));
    const char *named[] = {"all", "2", "0,"};
    for (int x = 0; x < 3; x++) {
        sp = ok(named[x]);
        CU_ASSERT_EQUAL(rk_gpus_given(&sp), 1);
    }
}

static void test_parse_all_and_count(void)
{
    rk_gpus_spec sp = ok("all");
    CU_ASSERT_EQUAL(sp.all, 1);
    CU_ASSERT_EQUAL(sp.count, 0);
    CU_ASSERT_EQUAL(sp.n_ids, 0);

    sp = ok("1");
    CU_ASSERT_EQUAL(sp.all, 0);
    CU_ASSERT_EQUAL(sp.count, 1);
    CU_ASSERT_EQUAL(sp.n_ids, 0);
    sp = ok("3");
    CU_ASSERT_EQUAL(sp.count, 3);
    sp = ok("02");
    CU_ASSERT_EQUAL(sp.count, 2);
    char max[16];
    snprintf(max, sizeof max, "%d", RK_GPUS_MAX);
    sp = ok(max);
    CU_ASSERT_EQUAL(sp.count, RK_GPUS_MAX);
}

static void test_parse_list(void)
{
    rk_gpus_spec sp = ok("0,1");
    CU_ASSERT_EQUAL(sp.all, 0);
    CU_ASSERT_EQUAL(sp.count, 0);
    CU_ASSERT_EQUAL(sp.n_ids, 2);
    CU_ASSERT_EQUAL(sp.ids[0], 0);
    CU_ASSERT_EQUAL(sp.ids[1], 1);

    sp = ok("0,"); /* one ordinal: a trailing comma makes it a list */
    CU_ASSERT_EQUAL(sp.count, 0);
    CU_ASSERT_EQUAL(sp.n_ids, 1);
    CU_ASSERT_EQUAL(sp.ids[0], 0);

    sp = ok("0,0"); /* repeats: workers sharing one device */
    CU_ASSERT_EQUAL(sp.n_ids, 2);
    CU_ASSERT_EQUAL(sp.ids[0], 0);
    CU_ASSERT_EQUAL(sp.ids[1], 0);

    sp = ok("3,1,2,");
    CU_ASSERT_EQUAL(sp.n_ids, 3);
    CU_ASSERT_EQUAL(sp.ids[0], 3);
    CU_ASSERT_EQUAL(sp.ids[1], 1);
    CU_ASSERT_EQUAL(sp.ids[2], 2);

    sp = ok("7,"); /* an ordinal beyond the devices parses; resolve refuses it */
    CU_ASSERT_EQUAL(sp.n_ids, 1);
    CU_ASSERT_EQUAL(sp.ids[0], 7);

    /* RK_GPUS_MAX entries, the last ones different */
    char list[RK_GPUS_MAX * 3 + 1] = "";
    size_t len = 0;
    for (int i = 0; i < RK_GPUS_MAX; i++) len += (size_t)snprintf(list + len, sizeof list - len, "%d,", i % 10);
    sp = ok(list);
    CU_ASSERT_EQUAL(sp.n_ids, RK_GPUS_MAX);
    for (int i = 0; i < RK_GPUS_MAX; i++) CU_ASSERT_EQUAL(sp.ids[i], i % 10);
}

static void test_parse_bad(void)
{
    static const char *const cases[] = {
        "bogus", "ALL", "all,", "al", "0", "00", "-1", "+1", "1.5", "1e2", " 1", "1 ", "0x1",
        "65", "99999999999999999999", ",", ",0", "0,,1", "0,-1", "0,x", "0, 1", "0;1", "1,2,a",
        "0,99999999999999999999",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) bad(cases[i]);

    /* RK_GPUS_MAX + 1 entries */
    char list[(RK_GPUS_MAX + 1) * 2 + 1] = "";
    size_t len = 0;
    for (int i = 0; i <= RK_GPUS_MAX; i++) len += (size_t)snprintf(list + len, sizeof list - len, "0,");
    bad(list);
}

/* resolve spec for n_visible: the ordinals, or -1 and the status when it fails */
static rk_status resolve(const rk_gpus_spec *sp, int n_visible, int32_t *ids, int *n, rk_error *err)
{
    for (int i = 0; i < RK_GPUS_MAX; i++) ids[i] = -9;
    *n = -9;
    rk_error_clear(err);
    return rk_gpus_resolve(sp, n_visible, ids, n, err);
}

static void test_resolve_ok(void)
{
    int32_t ids[RK_GPUS_MAX];
    int n;
    rk_error err;
    rk_gpus_spec zero;
    memset(&zero, 0, sizeof zero);

    /* the default: device 0, however many are visible */
    for (int v = 1; v <= 4; v++) {
        CU_ASSERT_EQUAL(resolve(&zero, v, ids, &n, &err), RK_OK);
        CU_ASSERT_EQUAL(n, 1);
        CU_ASSERT_EQUAL(ids[0], 0);
        CU_ASSERT_EQUAL(ids[1], -9);
    }
    CU_ASSERT_EQUAL(resolve(NULL, 2, ids, &n, &err), RK_OK);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_EQUAL(ids[0], 0);

    /* all: 0..n_visible-1, at most RK_GPUS_MAX */
    rk_gpus_spec sp = ok("all");
    for (int v = 1; v <= 4; v++) {
        CU_ASSERT_EQUAL(resolve(&sp, v, ids, &n, &err), RK_OK);
        CU_ASSERT_EQUAL(n, v);
        for (int d = 0; d < v; d++) CU_ASSERT_EQUAL(ids[d], d);
        if (v < RK_GPUS_MAX) CU_ASSERT_EQUAL(ids[v], -9);
    }
    CU_ASSERT_EQUAL(resolve(&sp, RK_GPUS_MAX + 5, ids, &n, &err), RK_OK);
    CU_ASSERT_EQUAL(n, RK_GPUS_MAX);
    CU_ASSERT_EQUAL(ids[RK_GPUS_MAX - 1], RK_GPUS_MAX - 1);

    /* N: the first N */
    sp = ok("2");
    CU_ASSERT_EQUAL(resolve(&sp, 2, ids, &n, &err), RK_OK);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_EQUAL(ids[0], 0);
    CU_ASSERT_EQUAL(ids[1], 1);
    CU_ASSERT_EQUAL(resolve(&sp, 4, ids, &n, &err), RK_OK);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_EQUAL(ids[2], -9);
    sp = ok("1");
    CU_ASSERT_EQUAL(resolve(&sp, 1, ids, &n, &err), RK_OK);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_EQUAL(ids[0], 0);

    /* a list: as given, in order, repeats kept */
    sp = ok("3,1,3");
    CU_ASSERT_EQUAL(resolve(&sp, 4, ids, &n, &err), RK_OK);
    CU_ASSERT_EQUAL(n, 3);
    CU_ASSERT_EQUAL(ids[0], 3);
    CU_ASSERT_EQUAL(ids[1], 1);
    CU_ASSERT_EQUAL(ids[2], 3);
    CU_ASSERT_EQUAL(ids[3], -9);
    sp = ok("0,0");
    CU_ASSERT_EQUAL(resolve(&sp, 1, ids, &n, &err), RK_OK);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_EQUAL(ids[0], 0);
    CU_ASSERT_EQUAL(ids[1], 0);
}

static void expect_gpu_error(const rk_gpus_spec *sp, int n_visible, const char *a, const char *b)
{
    int32_t ids[RK_GPUS_MAX];
    int n;
    rk_error err;
    CU_ASSERT_EQUAL(resolve(sp, n_visible, ids, &n, &err), RK_E_GPU);
    CU_ASSERT_EQUAL(err.status, RK_E_GPU);
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_EQUAL(ids[0], -9);
    if (strstr(err.msg, a) == NULL || (b != NULL && strstr(err.msg, b) == NULL)) {
        fprintf(stderr, "message lacks '%s'%s%s: %s\n", a, b ? " or " : "", b ? b : "", err.msg);
        CU_FAIL("the message does not name what failed");
    }
}

static void test_resolve_errors(void)
{
    rk_gpus_spec zero;
    memset(&zero, 0, sizeof zero);
    rk_gpus_spec all = ok("all"), two = ok("2"), five = ok("5"), list = ok("0,1,2"), one = ok("1,");

    /* no device visible: every spec fails */
    expect_gpu_error(&zero, 0, "no CUDA device is visible", NULL);
    expect_gpu_error(&all, 0, "no CUDA device is visible", NULL);
    expect_gpu_error(&two, 0, "no CUDA device is visible", NULL);
    expect_gpu_error(&list, -1, "no CUDA device is visible", NULL);

    /* a count beyond the visible devices names both numbers */
    expect_gpu_error(&two, 1, "2 CUDA devices", "1 is visible");
    expect_gpu_error(&five, 4, "5 CUDA devices", "4 are visible");

    /* an ordinal beyond them names it */
    expect_gpu_error(&list, 2, "device 2", NULL);
    expect_gpu_error(&one, 1, "device 1", NULL);

    /* specs rk_gpus_parse never makes */
    int32_t ids[RK_GPUS_MAX];
    int n;
    rk_error err;
    rk_gpus_spec neg = ok("0,1");
    neg.ids[1] = -1;
    CU_ASSERT_EQUAL(resolve(&neg, 4, ids, &n, &err), RK_E_ARG);
    CU_ASSERT_EQUAL(n, 0);
    rk_gpus_spec many = ok("1");
    many.count = RK_GPUS_MAX + 1;
    CU_ASSERT_EQUAL(resolve(&many, RK_GPUS_MAX + 5, ids, &n, &err), RK_E_ARG);
}

static void test_dist_load(void)
{
    static const struct { const char *name; rk_dist_load l; } good[] = {
        {"auto", RK_DIST_LOAD_AUTO}, {"each", RK_DIST_LOAD_EACH}, {"bcast", RK_DIST_LOAD_BCAST},
        {"shard", RK_DIST_LOAD_SHARD},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        rk_dist_load l = (rk_dist_load)-1;
        CU_ASSERT_EQUAL(rk_dist_load_parse(good[i].name, &l), RK_OK);
        CU_ASSERT_EQUAL(l, good[i].l);
        CU_ASSERT_STRING_EQUAL(rk_dist_load_name(good[i].l), good[i].name);
    }
    static const char *const badn[] = {"", "bogus", "Auto", "each ", "broadcast", "bcas"};
    for (size_t i = 0; i < sizeof badn / sizeof badn[0]; i++) {
        rk_dist_load l = RK_DIST_LOAD_BCAST;
        CU_ASSERT_EQUAL(rk_dist_load_parse(badn[i], &l), RK_E_ARG);
        CU_ASSERT_EQUAL(l, RK_DIST_LOAD_BCAST);
    }
    rk_dist_load l = RK_DIST_LOAD_EACH;
    CU_ASSERT_EQUAL(rk_dist_load_parse(NULL, &l), RK_E_ARG);
    CU_ASSERT_EQUAL(l, RK_DIST_LOAD_EACH);
    CU_ASSERT_STRING_EQUAL(rk_dist_load_name((rk_dist_load)17), "unknown");
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"parse: NULL and empty are the default", test_parse_default},
        {"parse: all and counts", test_parse_all_and_count},
        {"parse: lists", test_parse_list},
        {"parse: refused forms", test_parse_bad},
        {"resolve: default, all, counts, lists", test_resolve_ok},
        {"resolve: errors", test_resolve_errors},
        {"--mpi-load names", test_dist_load},
        {NULL, NULL},
    };
    return rk_test_main("rk_gpus", cases);
}
