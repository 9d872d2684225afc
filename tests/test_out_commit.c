/* The commit of a run's files as one set (rk_out_commit_set): an earlier
 * set survives a failure at any of the commit's steps (the RECKNN_COMMIT_FAULT
 * hook), stale files go with a success, a file in another folder goes with
 * the set, a second writer is locked out, new nested folders of a failed run
 * go, and rk_out_files' checksums. */
#define _POSIX_C_SOURCE 200809L
#include "test_output_util.h"

#include <xxhash.h>

static void put(const char *dir, const char *name, const char *text)
{
    char *p = path_in(dir, name);
    FILE *fp = fopen(p, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
    fputs(text, fp);
    fclose(fp);
    free(p);
}

/* "name=text;" for every entry of dir in name order (dot files too). */
static char *listing(const char *dir)
{
    struct dirent **e;
    int n = scandir(dir, &e, NULL, alphasort);
    char *out = calloc(1, 8192);
    for (int i = 0; i < n; i++) {
        if (strcmp(e[i]->d_name, ".") != 0 && strcmp(e[i]->d_name, "..") != 0) {
            char *p = path_in(dir, e[i]->d_name);
            char *t = slurp(p, NULL);
            size_t at = strlen(out);
            snprintf(out + at, 8192 - at, "%s=%s;", e[i]->d_name, t != NULL ? t : "?");
            free(t);
            free(p);
        }
        free(e[i]);
    }
    free(e);
    return out;
}

/* The old set: a.csv and b.csv (b not written again), s.csv (stale). The new
 * run writes a.csv and c.csv and names s.csv stale.  Steps: the backup link
 * of a.csv, s.csv aside, a.csv in, c.csv in. */
static int commit_new(const char *dir, int fault)
{
    rk_out *o;
    rk_error err;
    FILE *a, *c;
    char f[16];
    snprintf(f, sizeof f, "%d", fault);
    setenv("RECKNN_COMMIT_FAULT", f, 1);
    CU_ASSERT_EQUAL_FATAL(rk_out_open(&o, dir, &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_out_file(o, "a.csv", &a, &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_out_file(o, "c.csv", &c, &err), RK_OK);
    fputs("new a", a);
    fputs("new c", c);
    const char *stale[] = {"s.csv"};
    const rk_status s = rk_out_commit_set(o, stale, 1, &err);
    if (s != RK_OK) CU_ASSERT(strstr(err.msg, "keeps the previous run's files") != NULL);
    rk_out_free(o);
    unsetenv("RECKNN_COMMIT_FAULT");
    return s == RK_OK;
}

static void test_fault_at_every_step(void)
{
    char *dir = make_tmpdir();
    put(dir, "a.csv", "old a");
    put(dir, "b.csv", "old b");
    put(dir, "s.csv", "old s");
    char *before = listing(dir);
    for (int k = 1; k <= 4; k++) {
        CU_ASSERT_EQUAL(commit_new(dir, k), 0);
        char *now = listing(dir);
        CU_ASSERT_STRING_EQUAL(now, before); /* the old set, nothing added */
        if (strcmp(now, before) != 0) fprintf(stderr, "\nfault %d: %s\n", k, now);
        free(now);
    }
    CU_ASSERT_EQUAL(commit_new(dir, 5), 1); /* past the last step: no fault */
    char *after = listing(dir);
    CU_ASSERT_STRING_EQUAL(after, "a.csv=new a;b.csv=old b;c.csv=new c;");
    free(after);
    free(before);
    rm_rf(dir);
    free(dir);
}

/* A file elsewhere (rk_out_file_at: a saved model in another folder) joins
 * the set: a failure at any step of the commit, an abort, or none; the old
 * model survives every failure, the new one comes in with the set, its
 * temporary file never stays, and it is not listed among the folder's files.
 * Steps: the backup links of a.csv and of the model, a.csv in, the model in. */
static void test_file_elsewhere(void)
{
    char *dir = make_tmpdir(), *other = make_tmpdir();
    put(dir, "a.csv", "old a");
    put(other, "m.rkm", "old model");
    char *model = path_in(other, "m.rkm");
    char *before = listing(dir), *before_o = listing(other);
    for (int k = 0; k <= 5; k++) { /* k = 0: aborted, never committed */
        rk_out *o;
        rk_error err;
        FILE *a, *m, *again;
        char f[16];
        snprintf(f, sizeof f, "%d", k);
        setenv("RECKNN_COMMIT_FAULT", f, 1);
        CU_ASSERT_EQUAL_FATAL(rk_out_open(&o, dir, &err), RK_OK);
        CU_ASSERT_EQUAL_FATAL(rk_out_file(o, "a.csv", &a, &err), RK_OK);
        CU_ASSERT_EQUAL_FATAL(rk_out_file_at(o, model, &m, &err), RK_OK);
        CU_ASSERT_EQUAL(rk_out_file_at(o, model, &again, &err), RK_E_ARG); /* opened twice */
        fputs("new a", a);
        fputs("new model", m);
        rk_out_info info[4];
        int n = 0;
        CU_ASSERT_EQUAL(rk_out_files(o, info, 4, &n, &err), RK_OK);
        CU_ASSERT_EQUAL(n, 1);
        CU_ASSERT_STRING_EQUAL(info[0].name, "a.csv");
        CU_ASSERT_EQUAL(info[0].bytes, 5);
        const rk_status s = k == 0 ? RK_E_IO : rk_out_commit(o, &err);
        rk_out_free(o);
        unsetenv("RECKNN_COMMIT_FAULT");
        char *now = listing(dir), *now_o = listing(other);
        if (k >= 1 && k <= 4) CU_ASSERT_EQUAL(s, RK_E_IO);
        if (s != RK_OK) {
            CU_ASSERT_STRING_EQUAL(now, before);
            CU_ASSERT_STRING_EQUAL(now_o, before_o); /* the old model, no temporary file */
            if (strcmp(now_o, before_o) != 0) fprintf(stderr, "\nfault %d: %s\n", k, now_o);
        } else {
            CU_ASSERT_EQUAL(k, 5);
            CU_ASSERT_STRING_EQUAL(now, "a.csv=new a;");
            CU_ASSERT_STRING_EQUAL(now_o, "m.rkm=new model;");
        }
        free(now);
        free(now_o);
    }
    free(before);
    free(before_o);
    free(model);
    rm_rf(dir);
    rm_rf(other);
    free(dir);
    free(other);
}

/* A final name that is a directory: refused before anything moves. */
static void test_directory_in_the_way(void)
{
    char *dir = make_tmpdir();
    put(dir, "a.csv", "old a");
    char *c = path_in(dir, "c.csv");
    mkdir(c, 0777);
    char *before = listing(dir);
    CU_ASSERT_EQUAL(commit_new(dir, 0), 0);
    char *now = listing(dir);
    CU_ASSERT_STRING_EQUAL(now, before);
    free(now);
    free(before);
    free(c);
    rm_rf(dir);
    free(dir);
}

static void test_lock(void)
{
    char *dir = make_tmpdir();
    rk_out *a, *b;
    rk_error err;
    CU_ASSERT_EQUAL_FATAL(rk_out_open(&a, dir, &err), RK_OK);
    CU_ASSERT_EQUAL(rk_out_open(&b, dir, &err), RK_E_IO);
    CU_ASSERT(strstr(err.msg, "being written by another recknn run") != NULL);
    rk_out_free(a);
    CU_ASSERT_EQUAL_FATAL(rk_out_open(&b, dir, &err), RK_OK); /* free released it */
    rk_out_free(b);
    CU_ASSERT_EQUAL(count_entries(dir), 0); /* no lock file left */
    rm_rf(dir);
    free(dir);
}

/* 80 new nested levels: a run that fails removes every one. */
static void test_deep_new_folders(void)
{
    char *root = make_tmpdir();
    char *deep = malloc(4096);
    int at = snprintf(deep, 4096, "%s", root);
    for (int k = 0; k < 80; k++) at += snprintf(deep + at, (size_t)(4096 - at), "/d%d", k);
    rk_out *o;
    rk_error err;
    FILE *fp;
    CU_ASSERT_EQUAL_FATAL(rk_out_open(&o, deep, &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_out_file(o, "x.csv", &fp, &err), RK_OK);
    rk_out_free(o); /* not committed */
    CU_ASSERT_EQUAL(count_entries(root), 0);
    free(deep);
    rm_rf(root);
    free(root);
}

static void test_files_checksums(void)
{
    char *dir = make_tmpdir();
    rk_out *o;
    rk_error err;
    FILE *a, *b;
    CU_ASSERT_EQUAL_FATAL(rk_out_open(&o, dir, &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_out_file(o, "a.csv", &a, &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_out_file(o, "b.csv", &b, &err), RK_OK);
    char *big = malloc(3 << 20);
    for (int i = 0; i < (3 << 20); i++) big[i] = (char)('a' + i % 26);
    fwrite(big, 1, 3 << 20, a); /* more than one read buffer */
    fputs("b", b);
    rk_out_info info[4];
    int n;
    CU_ASSERT_EQUAL_FATAL(rk_out_files(o, info, 4, &n, &err), RK_OK);
    CU_ASSERT_EQUAL(n, 2);
    CU_ASSERT_STRING_EQUAL(info[0].name, "a.csv");
    CU_ASSERT_EQUAL(info[0].bytes, 3 << 20);
    CU_ASSERT_EQUAL(info[0].xxh64, XXH64(big, 3 << 20, 0));
    CU_ASSERT_EQUAL(info[1].xxh64, XXH64("b", 1, 0));
    CU_ASSERT_EQUAL(rk_out_files(o, info, 1, &n, &err), RK_E_RANGE);
    CU_ASSERT_EQUAL(rk_out_commit(o, &err), RK_OK);
    rk_out_free(o);
    free(big);
    rm_rf(dir);
    free(dir);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"a failure at every step of the commit keeps the old set", test_fault_at_every_step},
        {"a directory in the way: nothing moves", test_directory_in_the_way},
        {"a file in another folder commits with the set", test_file_elsewhere},
        {"one writer a folder", test_lock},
        {"80 new nested folders of a failed run are removed", test_deep_new_folders},
        {"sizes and XXH64 checksums of the pending files", test_files_checksums},
        {NULL, NULL},
    };
    return rk_test_main("out-commit", cases);
}
