/* rk_output: interrupted runs and write errors — the final path of a stream,
 * errors naming it, the registry of pending files unlinked from a call, from a
 * signal handler and while other threads create files (split from
 * test_output.c). */
#define _POSIX_C_SOURCE 200809L
#include "test_output_util.h"

/* ---- interrupted runs and write errors -------------------------------------------- */

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
    fputs(text, fp);
    fclose(fp);
}

static void test_path_of(void)
{
    char *root = make_tmpdir();
    rk_out *o;
    rk_error err;
    FILE *a;
    CU_ASSERT_EQUAL_FATAL(rk_out_open(&o, root, &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_out_file(o, "x.csv", &a, &err), RK_OK);
    char *want = path_in(root, "x.csv");
    const char *got = rk_out_path_of(a);
    CU_ASSERT(got != NULL && strcmp(got, want) == 0);
    CU_ASSERT_PTR_NULL(rk_out_path_of(stdout));
    CU_ASSERT_PTR_NULL(rk_out_path_of(NULL));
    rk_out_free(o);
    free(want);
    rm_rf(root);
    free(root);
}

/* Writes past RLIMIT_FSIZE fail with EFBIG (SIGXFSZ ignored), as on a full disk:
 * the writers and the commit name the final path and say why. */
static void test_write_error_names_path(void)
{
    char *root = make_tmpdir();
    char *dir = path_in(root, "out");
    struct rlimit old, lim;
    CU_ASSERT_EQUAL_FATAL(getrlimit(RLIMIT_FSIZE, &old), 0);
    struct sigaction ign, prev;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGXFSZ, &ign, &prev);

    /* 300 000 rows, megabytes: past the limit and past the stdio buffer */
    const int32_t ni = 300, k = 1000;
    rk_idmap *items = ids_of(ni, 1, 5);
    rk_error err;
    rk_lists l;
    CU_ASSERT_EQUAL_FATAL(rk_lists_alloc(&l, ni, k, &err), RK_OK);
    for (int i = 0; i < ni; i++) {
        l.len[i] = k;
        for (int r = 0; r < k; r++) {
            l.nbr[i * k + r] = (i + 1 + r) % ni;
            l.sim[i * k + r] = 0.25f;
            l.support[i * k + r] = 3;
        }
    }
    rk_out *o;
    FILE *a, *b;
    CU_ASSERT_EQUAL_FATAL(rk_out_open(&o, dir, &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_out_file(o, "neighbors.csv", &a, &err), RK_OK);
    lim = old;
    lim.rlim_cur = 4096;
    CU_ASSERT_EQUAL_FATAL(setrlimit(RLIMIT_FSIZE, &lim), 0);
    rk_error_clear(&err);
    CU_ASSERT_EQUAL(rk_out_neighbors(a, &l, items, &err), RK_E_IO);
    char *want = path_in(dir, "neighbors.csv");
    CU_ASSERT(strstr(err.msg, want) != NULL);
    CU_ASSERT(strstr(err.msg, strerror(EFBIG)) != NULL);
    CU_ASSERT(strstr(err.msg, ".tmp.") == NULL);
    rk_out_free(o);
    CU_ASSERT_EQUAL(count_entries(root), 0); /* no temporary, no folder made */

    /* stdio writes (metrics.json): the commit tells the cause, not just "write error" */
    CU_ASSERT_EQUAL_FATAL(rk_out_open(&o, dir, &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_out_file(o, "metrics.json", &b, &err), RK_OK);
    for (int i = 0; i < 2000; i++) fprintf(b, "{\"row\": %d}\n", i);
    rk_error_clear(&err);
    CU_ASSERT_EQUAL(rk_out_commit(o, &err), RK_E_IO);
    char *want2 = path_in(dir, "metrics.json");
    CU_ASSERT(strstr(err.msg, want2) != NULL);
    CU_ASSERT(strstr(err.msg, strerror(EFBIG)) != NULL);
    rk_out_free(o);
    CU_ASSERT_EQUAL(count_entries(root), 0);

    CU_ASSERT_EQUAL(setrlimit(RLIMIT_FSIZE, &old), 0);
    sigaction(SIGXFSZ, &prev, NULL);
    free(want2);
    free(want);
    rk_lists_free(&l);
    rk_ids_free(items);
    free(dir);
    rm_rf(root);
    free(root);
}

/* rk_out_unlink_pending: every pending temporary file and every empty folder
 * made goes, complete files stay, and nothing new can be created after. */
static void test_unlink_pending(void)
{
    char *root = make_tmpdir();
    char *keep = path_in(root, "keep");
    char *one = path_in(keep, "one.csv");
    char *deep = path_in(root, "a/b/c");
    char *a = path_in(root, "a");
    rk_error err;
    rk_out *o1, *o2;
    FILE *f1, *f2, *f3;
    mkdir(keep, 0777);
    write_file(one, "old\n");
    CU_ASSERT_EQUAL_FATAL(rk_out_open(&o1, keep, &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_out_file(o1, "one.csv", &f1, &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_out_file(o1, "two.csv", &f2, &err), RK_OK);
    fputs("new\n", f1);
    fflush(f1);
    CU_ASSERT_EQUAL_FATAL(rk_out_open(&o2, deep, &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_out_file(o2, "three.csv", &f3, &err), RK_OK);
    /* a model's temporary file, as rk_mfile_save makes it */
    char *model = path_in(root, "m.rkm.tmp.XXXXXX");
    int fd, slot;
    CU_ASSERT_EQUAL_FATAL(rk_out_temp_create(model, "m.rkm", &fd, &slot, &err), RK_OK);
    CU_ASSERT_EQUAL(access(model, F_OK), 0);
    CU_ASSERT_EQUAL(count_entries(keep), 3);

    CU_ASSERT_EQUAL(rk_out_cancelled(), 0);
    rk_out_unlink_pending();
    CU_ASSERT_NOT_EQUAL(rk_out_cancelled(), 0);
    CU_ASSERT_EQUAL(count_entries(keep), 1);
    char *t = slurp(one, NULL);
    CU_ASSERT(t != NULL && strcmp(t, "old\n") == 0);
    free(t);
    CU_ASSERT_EQUAL(access(a, F_OK), -1); /* a/b/c made by o2, all gone */
    CU_ASSERT_EQUAL(access(model, F_OK), -1);
    CU_ASSERT_EQUAL(count_entries(root), 1); /* keep */
    rk_out_unlink_pending(); /* idempotent */

    /* after it: no new file, folder or rename */
    rk_out *o3 = NULL;
    FILE *f4 = NULL;
    char *fresh = path_in(root, "fresh");
    CU_ASSERT_EQUAL(rk_out_open(&o3, fresh, &err), RK_E_IO);
    CU_ASSERT_EQUAL(access(fresh, F_OK), -1);
    CU_ASSERT_EQUAL(rk_out_file(o1, "four.csv", &f4, &err), RK_E_IO);
    CU_ASSERT_EQUAL(rk_out_commit(o1, &err), RK_E_IO);
    t = slurp(one, NULL);
    CU_ASSERT(t != NULL && strcmp(t, "old\n") == 0);
    free(t);
    CU_ASSERT_EQUAL(count_entries(keep), 1);
    rk_out_free(o1);
    rk_out_free(o2);
    close(fd);
    rk_out_temp_forget(slot);

    rk_out_pending_rearm();
    CU_ASSERT_EQUAL(rk_out_cancelled(), 0);
    CU_ASSERT_EQUAL_FATAL(rk_out_open(&o3, fresh, &err), RK_OK);
    CU_ASSERT_EQUAL(rk_out_file(o3, "five.csv", &f4, &err), RK_OK);
    CU_ASSERT_EQUAL(rk_out_commit(o3, &err), RK_OK);
    rk_out_free(o3);
    char *five = path_in(fresh, "five.csv");
    CU_ASSERT_EQUAL(access(five, F_OK), 0);
    free(five);
    free(fresh);
    free(model);
    free(a);
    free(deep);
    free(one);
    free(keep);
    rm_rf(root);
    free(root);
}

/* From a signal handler, as the async-signal-safe contract allows: a child
 * with pending files takes SIGTERM, its handler removes them and _exits. */
static void on_term(int sig)
{
    (void)sig;
    rk_out_unlink_pending();
    _exit(99);
}

static void test_unlink_from_handler(void)
{
    char *root = make_tmpdir();
    char *dir = path_in(root, "x/y");
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_term;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGTERM, &sa, NULL);
        rk_out *o;
        FILE *fp;
        if (rk_out_open(&o, dir, NULL) != RK_OK || rk_out_file(o, "a.csv", &fp, NULL) != RK_OK ||
            rk_out_file(o, "b.csv", &fp, NULL) != RK_OK)
            _exit(1);
        if (count_entries(dir) != 2) _exit(2);
        raise(SIGTERM);
        _exit(3);
    }
    int st = 0;
    CU_ASSERT_EQUAL(waitpid(pid, &st, 0), pid);
    CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 99);
    CU_ASSERT_EQUAL(count_entries(root), 0); /* files, y and x: all gone */
    free(dir);
    rm_rf(root);
    free(root);
}

/* Threads creating and removing temporary files while another cancels: the
 * moment rk_out_unlink_pending returns, no temporary file exists and no
 * thread can make one (one being made is waited for, then removed). */
typedef struct churn {
    const char *dir;
    int made;
} churn;

static void *churn_thread(void *arg)
{
    churn *c = arg;
    for (;;) {
        char p[4096];
        snprintf(p, sizeof p, "%s/.t.tmp.XXXXXX", c->dir);
        int fd, slot;
        if (rk_out_temp_create(p, "t", &fd, &slot, NULL) != RK_OK) break;
        c->made++;
        close(fd);
        unlink(p);
        rk_out_temp_forget(slot);
    }
    return NULL;
}

static void test_unlink_races_creation(void)
{
    char *root = make_tmpdir();
    churn c[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        c[i].dir = root;
        c[i].made = 0;
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, churn_thread, &c[i]), 0);
    }
    struct timespec ts = {0, 50 * 1000000L};
    nanosleep(&ts, NULL);
    rk_out_unlink_pending();
    CU_ASSERT_EQUAL(count_entries(root), 0);
    int made = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        made += c[i].made;
    }
    CU_ASSERT(made > 0); /* the race was run */
    CU_ASSERT_EQUAL(count_entries(root), 0);
    rk_out_pending_rearm();
    rm_rf(root);
    free(root);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"path_of: the final path of a stream", test_path_of},
        {"write errors name the path and the cause", test_write_error_names_path},
        {"unlink_pending: temporaries and new folders go, old files stay", test_unlink_pending},
        {"unlink_pending from a signal handler", test_unlink_from_handler},
        {"unlink_pending races file creation", test_unlink_races_creation},
        {NULL, NULL},
    };
    return rk_test_main("rk_output: pending files", cases);
}
