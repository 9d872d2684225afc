/* Tests of rk_output: number formatting, atomic files, row writers
 * (pending files and write errors: test_out_pending.c). */
#define _POSIX_C_SOURCE 200809L
#include "test_output_util.h"


/* ---- rk_out_double ------------------------------------------------------------- */

static void check_g9(double x)
{
    char got[64], want[64];
    int n = rk_out_double(got, sizeof got, x);
    if (x == 0.0) snprintf(want, sizeof want, "0");
    else snprintf(want, sizeof want, "%.9g", x);
    if (strcmp(got, want) != 0 || n != (int)strlen(want)) {
        fprintf(stderr, "rk_out_double(%.17g) = \"%s\", want \"%s\"\n", x, got, want);
        CU_FAIL("rk_out_double differs from %.9g");
    }
}

static void test_double_examples(void)
{
    char b[64];
    rk_out_double(b, sizeof b, 4.0);
    CU_ASSERT_STRING_EQUAL(b, "4");
    rk_out_double(b, sizeof b, 0.5);
    CU_ASSERT_STRING_EQUAL(b, "0.5");
    rk_out_double(b, sizeof b, 0.123456789);
    CU_ASSERT_STRING_EQUAL(b, "0.123456789");
    rk_out_double(b, sizeof b, 0.0);
    CU_ASSERT_STRING_EQUAL(b, "0");
    rk_out_double(b, sizeof b, -0.0);
    CU_ASSERT_STRING_EQUAL(b, "0");
    rk_out_double(b, sizeof b, -1.0);
    CU_ASSERT_STRING_EQUAL(b, "-1");
    rk_out_double(b, sizeof b, 3.5);
    CU_ASSERT_STRING_EQUAL(b, "3.5");
    rk_out_double(b, sizeof b, 100836.0);
    CU_ASSERT_STRING_EQUAL(b, "100836");
    rk_out_double(b, sizeof b, 0.0001);
    CU_ASSERT_STRING_EQUAL(b, "0.0001");
    rk_out_double(b, sizeof b, 1e-5);
    CU_ASSERT_STRING_EQUAL(b, "1e-05");
    rk_out_double(b, sizeof b, 1e9);
    CU_ASSERT_STRING_EQUAL(b, "1e+09");
    rk_out_double(b, sizeof b, 999999999.6);
    CU_ASSERT_STRING_EQUAL(b, "1e+09");
    rk_out_double(b, sizeof b, 0.99999999996);
    CU_ASSERT_STRING_EQUAL(b, "1");
    rk_out_double(b, sizeof b, 2.0 / 3.0);
    CU_ASSERT_STRING_EQUAL(b, "0.666666667");
    /* truncation to cap keeps the NUL and returns the full length */
    CU_ASSERT_EQUAL(rk_out_double(b, 3, 0.123456789), 11);
    CU_ASSERT_STRING_EQUAL(b, "0.");
}

static void test_double_matches_printf(void)
{
    unsigned long long st = 12345;
    static const double specials[] = {
        1, 10, 100, 1e8, 1e9, 1e-4, 1e-3, 0.1, 0.2, 0.3, 0.7, 0.9, 1.5, 2.5, 0.05, 0.15, 0.25,
        0.35, 0.45, 123456789.5, 12345678.95, 0.0001234567895, 99999999.95, 9.9999999995,
        0.99999999949999, 0.9999999995, 5e-5, 1e15, 1e300, 1e-300, 4.9e-324, 1.7976931348623157e308,
    };
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) {
        check_g9(specials[i]);
        check_g9(-specials[i]);
        check_g9(nextafter(specials[i], 0));
        check_g9(nextafter(specials[i], INFINITY));
    }
    /* every float similarity-like value on a fine grid, and random ones */
    for (int i = -100000; i <= 100000; i++) {
        check_g9((double)(float)(i / 100000.0));
        check_g9(i / 7.0);
    }
    for (int i = 0; i < 1000000; i++) {
        double u = rk_test_uniform(&st);
        check_g9((double)(float)(2.0 * u - 1.0));
        check_g9(2.0 * u - 1.0);
        check_g9(ldexp(u + 0.5, (int)(rk_test_rand(&st) % 80) - 40));
        /* decimal values with few digits, printed near their rounding half */
        double d = (double)(rk_test_rand(&st) % 2000000000ULL) / pow(10.0, (double)(rk_test_rand(&st) % 14));
        check_g9(d);
        check_g9(d + 5e-10 * d);
    }
    /* ratings and predictions: scale values */
    for (int i = 0; i <= 100; i++) check_g9(i * 0.05);
    check_g9(NAN);
    check_g9(INFINITY);
}

/* ---- atomic files --------------------------------------------------------------- */

static void test_open_creates_parents(void)
{
    char *root = make_tmpdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    char *dir = path_in(root, "a/b//c/");
    rk_out *o = NULL;
    rk_error err;
    CU_ASSERT_EQUAL_FATAL(rk_out_open(&o, dir, &err), RK_OK);
    struct stat sb;
    char *c = path_in(root, "a/b/c");
    CU_ASSERT(stat(c, &sb) == 0 && S_ISDIR(sb.st_mode));
    /* nothing written: abort removes the directories it made */
    rk_out_free(o);
    char *a = path_in(root, "a");
    CU_ASSERT_EQUAL(count_entries(a), -1);
    CU_ASSERT_EQUAL(count_entries(root), 0);
    /* an existing directory is fine and survives an abort */
    mkdir(a, 0777);
    CU_ASSERT_EQUAL_FATAL(rk_out_open(&o, a, &err), RK_OK);
    rk_out_free(o);
    CU_ASSERT_EQUAL(count_entries(a), 0);
    free(a);
    free(c);
    free(dir);
    rm_rf(root);
    free(root);
}

static void test_open_not_a_directory(void)
{
    char *root = make_tmpdir();
    char *f = path_in(root, "file");
    FILE *fp = fopen(f, "w");
    fputs("x\n", fp);
    fclose(fp);
    rk_out *o = (rk_out *)1;
    rk_error err;
    rk_error_clear(&err);
    CU_ASSERT_EQUAL(rk_out_open(&o, f, &err), RK_E_IO);
    CU_ASSERT_PTR_NULL(o);
    CU_ASSERT(strstr(err.msg, "not a directory") != NULL);
    char *under = path_in(root, "file/sub/dir");
    rk_error_clear(&err);
    CU_ASSERT_EQUAL(rk_out_open(&o, under, &err), RK_E_IO);
    CU_ASSERT(strstr(err.msg, "file/sub/dir") != NULL);
    CU_ASSERT_EQUAL(rk_out_open(&o, "", &err), RK_E_IO);
    CU_ASSERT_EQUAL(count_entries(root), 1);
    free(under);
    free(f);
    rm_rf(root);
    free(root);
}

static void test_commit_and_abort(void)
{
    char *root = make_tmpdir();
    char *dir = path_in(root, "out");
    rk_out *o;
    rk_error err;
    FILE *a, *b;
    CU_ASSERT_EQUAL_FATAL(rk_out_open(&o, dir, &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_out_file(o, "one.csv", &a, &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_out_file(o, "two.json", &b, &err), RK_OK);
    FILE *dummy;
    CU_ASSERT_EQUAL(rk_out_file(o, "one.csv", &dummy, &err) != RK_OK, 1); /* twice */
    CU_ASSERT_PTR_NULL(dummy);
    fputs("hello\n", a);
    fputs("{}\n", b);
    /* only hidden temporary files while writing */
    CU_ASSERT_EQUAL(count_entries(dir), 2);
    char *one = path_in(dir, "one.csv");
    CU_ASSERT_EQUAL(access(one, F_OK), -1);
    CU_ASSERT_EQUAL_FATAL(rk_out_commit(o, &err), RK_OK);
    rk_out_free(o);
    CU_ASSERT_EQUAL(count_entries(dir), 2);
    char *t = slurp(one, NULL);
    CU_ASSERT_STRING_EQUAL(t, "hello\n");
    free(t);
    struct stat sb;
    CU_ASSERT(stat(one, &sb) == 0 && (sb.st_mode & 0444) == 0444); /* not mkstemp's 0600 */

    /* an aborted second run leaves the first run's files alone */
    CU_ASSERT_EQUAL_FATAL(rk_out_open(&o, dir, &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_out_file(o, "one.csv", &a, &err), RK_OK);
    fputs("partial", a);
    rk_out_abort(o);
    rk_out_free(o);
    CU_ASSERT_EQUAL(count_entries(dir), 2);
    t = slurp(one, NULL);
    CU_ASSERT_STRING_EQUAL(t, "hello\n");
    free(t);

    /* a committed run replaces them */
    CU_ASSERT_EQUAL_FATAL(rk_out_open(&o, dir, &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_out_file(o, "one.csv", &a, &err), RK_OK);
    fputs("new\n", a);
    CU_ASSERT_EQUAL(rk_out_commit(o, &err), RK_OK);
    rk_out_free(o);
    t = slurp(one, NULL);
    CU_ASSERT_STRING_EQUAL(t, "new\n");
    free(t);
    free(one);
    free(dir);
    rm_rf(root);
    free(root);
}

static void test_too_many_files(void)
{
    char *root = make_tmpdir();
    rk_out *o;
    rk_error err;
    FILE *fp;
    CU_ASSERT_EQUAL_FATAL(rk_out_open(&o, root, &err), RK_OK);
    for (int i = 0; i < RK_OUT_MAX_FILES; i++) {
        char name[32];
        snprintf(name, sizeof name, "f%d", i);
        CU_ASSERT_EQUAL(rk_out_file(o, name, &fp, &err), RK_OK);
    }
    CU_ASSERT_EQUAL(rk_out_file(o, "extra", &fp, &err), RK_E_RANGE);
    CU_ASSERT_EQUAL(count_entries(root), RK_OUT_MAX_FILES);
    rk_out_free(o);
    CU_ASSERT_EQUAL(count_entries(root), 0);
    rm_rf(root);
    free(root);
}

static void test_commit_write_error(void)
{
    char *root = make_tmpdir();
    char *dir = path_in(root, "out");
    rk_out *o;
    rk_error err;
    FILE *a, *b;
    CU_ASSERT_EQUAL_FATAL(rk_out_open(&o, dir, &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_out_file(o, "good.csv", &a, &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_out_file(o, "bad.csv", &b, &err), RK_OK);
    fputs("fine\n", a);
    fputs("x", b);
    (void)fgetc(b); /* reading a write-only stream sets its error indicator */
    CU_ASSERT_FATAL(ferror(b));
    rk_error_clear(&err);
    CU_ASSERT_EQUAL(rk_out_commit(o, &err), RK_E_IO);
    CU_ASSERT(strstr(err.msg, "bad.csv") != NULL);
    rk_out_free(o);
    /* nothing left: no final file, no temporary, no directory it made */
    CU_ASSERT(count_entries(dir) <= 0);
    free(dir);
    rm_rf(root);
    free(root);
}

static void test_commit_rename_error(void)
{
    char *root = make_tmpdir();
    rk_out *o;
    rk_error err;
    FILE *a, *b;
    /* the second final name is a non-empty directory: its rename fails */
    char *blocker = path_in(root, "two.csv");
    mkdir(blocker, 0777);
    char *inner = path_in(blocker, "x");
    fclose(fopen(inner, "w"));
    CU_ASSERT_EQUAL_FATAL(rk_out_open(&o, root, &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_out_file(o, "one.csv", &a, &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_out_file(o, "two.csv", &b, &err), RK_OK);
    fputs("1\n", a);
    fputs("2\n", b);
    rk_error_clear(&err);
    CU_ASSERT_EQUAL(rk_out_commit(o, &err), RK_E_IO);
    CU_ASSERT(strstr(err.msg, "two.csv") != NULL);
    rk_out_free(o);
    CU_ASSERT_EQUAL(count_entries(root), 1); /* only the blocker */
    free(inner);
    free(blocker);
    rm_rf(root);
    free(root);
}

/* ---- row writers ------------------------------------------------------------------- */

static void test_neighbors_small(void)
{
    const char *raw[] = {"10", "2", "33"}; /* numeric order: 2, 10, 33 */
    rk_idmap *items = NULL;
    rk_error err;
    CU_ASSERT_EQUAL_FATAL(rk_ids_from_strings(raw, 3, &items, &err), RK_OK);
    rk_lists l;
    CU_ASSERT_EQUAL_FATAL(rk_lists_alloc(&l, 3, 2, &err), RK_OK);
    l.len[0] = 2;
    l.nbr[0] = 2; l.sim[0] = 0.5f; l.support[0] = 12;
    l.nbr[1] = 1; l.sim[1] = 0.25f; l.support[1] = 3;
    l.len[1] = 0;
    l.len[2] = 1;
    l.nbr[4] = 0; l.sim[4] = 1.0f; l.support[4] = 1;
    FILE *fp = tmpfile();
    CU_ASSERT_EQUAL(rk_out_neighbors(fp, &l, items, &err), RK_OK);
    char *t = stream_text(fp);
    CU_ASSERT_STRING_EQUAL(t, "item,neighbor,rank,similarity,support\n"
                              "2,33,1,0.5,12\n2,10,2,0.25,3\n33,2,1,1,1\n");
    free(t);
    fclose(fp);
    /* a bad neighbour index is a bug, not output */
    l.nbr[4] = 7;
    fp = tmpfile();
    CU_ASSERT_EQUAL(rk_out_neighbors(fp, &l, items, &err), RK_E_INTERNAL);
    fclose(fp);
    rk_lists_free(&l);
    rk_ids_free(items);
}

/* Reference writer: per-field snprintf. */
static char *ref_neighbors(const rk_lists *l, const rk_idmap *items)
{
    size_t cap = 64 + (size_t)l->n_items * (size_t)l->k * 120, n = 0;
    char *b = malloc(cap);
    char x[300], y[300];
    n += (size_t)sprintf(b + n, "item,neighbor,rank,similarity,support\n");
    for (int32_t i = 0; i < l->n_items; i++) {
        rk_ids_format(items, i, x, sizeof x);
        for (int32_t r = 0; r < l->len[i]; r++) {
            int64_t c = (int64_t)i * l->k + r;
            rk_ids_format(items, l->nbr[c], y, sizeof y);
            double s = l->sim[c];
            if (s == 0) n += (size_t)sprintf(b + n, "%s,%s,%d,0,%d\n", x, y, r + 1, l->support[c]);
            else n += (size_t)sprintf(b + n, "%s,%s,%d,%.9g,%d\n", x, y, r + 1, s, l->support[c]);
        }
    }
    return b;
}

static void neighbors_random(int numeric, int32_t n_items, int32_t k)
{
    unsigned long long st = 99 + (unsigned long long)n_items;
    rk_idmap *items = ids_of(n_items, numeric, 5);
    rk_lists l;
    rk_error err;
    CU_ASSERT_EQUAL_FATAL(rk_lists_alloc(&l, n_items, k, &err), RK_OK);
    for (int32_t i = 0; i < n_items; i++) {
        l.len[i] = (int32_t)(rk_test_rand(&st) % (unsigned)(k + 1));
        if (rk_test_rand(&st) % 5 == 0) l.len[i] = 0;
        for (int32_t r = 0; r < l.len[i]; r++) {
            int64_t c = (int64_t)i * k + r;
            l.nbr[c] = (int32_t)(rk_test_rand(&st) % (unsigned)n_items);
            l.sim[c] = (float)rk_test_uniform(&st);
            l.support[c] = (int32_t)(rk_test_rand(&st) % 100000);
        }
    }
    FILE *fp = tmpfile();
    CU_ASSERT_EQUAL(rk_out_neighbors(fp, &l, items, &err), RK_OK);
    char *t = stream_text(fp);
    char *want = ref_neighbors(&l, items);
    CU_ASSERT_EQUAL(strlen(t), strlen(want));
    CU_ASSERT(strcmp(t, want) == 0);
    free(t);
    free(want);
    fclose(fp);
    rk_lists_free(&l);
    rk_ids_free(items);
}

static void test_neighbors_random(void)
{
    neighbors_random(1, 50, 3);
    neighbors_random(0, 777, 20);
    neighbors_random(1, 30000, 20); /* several chunks and threads */
    neighbors_random(0, 2000, 300);
}

static void test_predictions(void)
{
    const int n_users = 500, n_items = 300;
    const int64_t n = 200000;
    rk_idmap *users = ids_of(n_users, 0, 1), *items = ids_of(n_items, 1, 2);
    int32_t *u = malloc((size_t)n * sizeof *u), *it = malloc((size_t)n * sizeof *it);
    int32_t *used = malloc((size_t)n * sizeof *used);
    float *r = malloc((size_t)n * sizeof *r);
    double *p = malloc((size_t)n * sizeof *p);
    unsigned long long st = 3;
    for (int64_t q = 0; q < n; q++) {
        u[q] = (int32_t)(rk_test_rand(&st) % n_users);
        it[q] = (int32_t)(rk_test_rand(&st) % n_items);
        r[q] = (float)(0.5 * (double)(1 + rk_test_rand(&st) % 10));
        p[q] = 0.5 + 4.5 * rk_test_uniform(&st);
        if (q % 11 == 0) p[q] = 5.0;
        used[q] = (int32_t)(rk_test_rand(&st) % 21);
    }
    FILE *fp = tmpfile();
    rk_error err;
    CU_ASSERT_EQUAL(rk_out_predictions(fp, n, u, it, r, p, used, users, items, &err), RK_OK);
    char *t = stream_text(fp);
    fclose(fp);
    size_t cap = 64 + (size_t)n * 120, m = 0;
    char *want = malloc(cap);
    char a[300], b[300];
    m += (size_t)sprintf(want, "user,item,rating,prediction,neighbors_used\n");
    for (int64_t q = 0; q < n; q++) {
        rk_ids_format(users, u[q], a, sizeof a);
        rk_ids_format(items, it[q], b, sizeof b);
        m += (size_t)sprintf(want + m, "%s,%s,%.9g,%.9g,%d\n", a, b, (double)r[q], p[q], used[q]);
    }
    CU_ASSERT(strcmp(t, want) == 0);
    free(t);
    free(want);

    /* few rows against big maps, and an empty set */
    fp = tmpfile();
    CU_ASSERT_EQUAL(rk_out_predictions(fp, 2, u, it, r, p, used, users, items, &err), RK_OK);
    t = stream_text(fp);
    CU_ASSERT(strncmp(t, "user,item,rating,prediction,neighbors_used\n", 43) == 0);
    CU_ASSERT_EQUAL(strchr(t + 43, '\n') != NULL, 1);
    free(t);
    fclose(fp);
    fp = tmpfile();
    CU_ASSERT_EQUAL(rk_out_predictions(fp, 0, u, it, r, p, used, users, items, &err), RK_OK);
    t = stream_text(fp);
    CU_ASSERT_STRING_EQUAL(t, "user,item,rating,prediction,neighbors_used\n");
    free(t);
    fclose(fp);
    /* an index without a raw id */
    u[1] = n_users;
    fp = tmpfile();
    CU_ASSERT_EQUAL(rk_out_predictions(fp, 2, u, it, r, p, used, users, items, &err), RK_E_INTERNAL);
    fclose(fp);

    free(u);
    free(it);
    free(used);
    free(r);
    free(p);
    rk_ids_free(users);
    rk_ids_free(items);
}

static void test_write_error(void)
{
    /* /dev/full fails every write: the writers must say so */
    FILE *fp = fopen("/dev/full", "w");
    if (fp == NULL) return;
    const char *raw[] = {"1", "2"};
    rk_idmap *items = NULL;
    rk_error err;
    CU_ASSERT_EQUAL_FATAL(rk_ids_from_strings(raw, 2, &items, &err), RK_OK);
    rk_lists l;
    CU_ASSERT_EQUAL_FATAL(rk_lists_alloc(&l, 2, 1, &err), RK_OK);
    l.len[0] = 1;
    l.nbr[0] = 1;
    l.sim[0] = 0.5f;
    l.support[0] = 2;
    setvbuf(fp, NULL, _IONBF, 0);
    CU_ASSERT_EQUAL(rk_out_neighbors(fp, &l, items, &err), RK_E_IO);
    fclose(fp);
    rk_lists_free(&l);
    rk_ids_free(items);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"double: examples", test_double_examples},
        {"double: matches %.9g", test_double_matches_printf},
        {"open: creates parents, abort removes them", test_open_creates_parents},
        {"open: not a directory", test_open_not_a_directory},
        {"commit and abort", test_commit_and_abort},
        {"too many files", test_too_many_files},
        {"commit: write error removes everything", test_commit_write_error},
        {"commit: rename error removes everything", test_commit_rename_error},
        {"neighbors: small", test_neighbors_small},
        {"neighbors: random vs reference", test_neighbors_random},
        {"predictions: random vs reference", test_predictions},
        {"writers report write errors", test_write_error},
        {NULL, NULL},
    };
    return rk_test_main("rk_output", cases);
}
