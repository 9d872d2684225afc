/* Unit tests of a file's parse shared among processes (rk_load_group,
 * etl/rk_load_shard.c), with the processes played by threads: every
 * member's data set equals one process's load of the same file (the
 * triples, the dense indices, the report's counts, bad lines and reason,
 * the failure and its message), over random files with headers, CRLF,
 * blank lines, string and quoted ids, bad lines, quoted line breaks across
 * a part's end, more members than lines; and the files read whole (netflix
 * format, smaller than min_bytes) say so. */
#define _POSIX_C_SOURCE 200809L
#include "test_load_util.h"
#include "test_load_report.h"
#include <pthread.h>

/* ---- a group of threads --------------------------------------------------------- */

typedef struct group_sim {
    int size;
    pthread_barrier_t bar;
    int64_t slots[RK_LOAD_GROUP_MAX * 64];
    void *root_buf;
    int calls; /* collectives, counted by member 0 */
} group_sim;

typedef struct member {
    group_sim *g;
    int rank;
    const char *path, *test_path;
    rk_load_opts o;
    rk_dataset d;
    rk_error e;
    rk_status st;
} member;

static rk_status sim_allgather(void *ud, const int64_t *mine, int n, int64_t *all, rk_error *err)
{
    member *m = ud;
    group_sim *g = m->g;
    (void)err;
    memcpy(g->slots + (size_t)m->rank * (size_t)n, mine, (size_t)n * sizeof *mine);
    pthread_barrier_wait(&g->bar);
    memcpy(all, g->slots, (size_t)g->size * (size_t)n * sizeof *all);
    if (m->rank == 0) g->calls++;
    pthread_barrier_wait(&g->bar);
    return RK_OK;
}

static rk_status sim_bcast(void *ud, void *buf, size_t bytes, int root, rk_error *err)
{
    member *m = ud;
    group_sim *g = m->g;
    (void)err;
    if (m->rank == root) g->root_buf = buf;
    pthread_barrier_wait(&g->bar);
    if (m->rank != root) memcpy(buf, g->root_buf, bytes);
    if (m->rank == 0) g->calls++;
    pthread_barrier_wait(&g->bar);
    return RK_OK;
}

static void *member_run(void *arg)
{
    member *m = arg;
    const char *p = m->path;
    m->st = rk_load_dataset(&p, 1, m->test_path, &m->o, &m->d, &m->e);
    return NULL;
}

/* ---- the comparison ------------------------------------------------------------ */

static void same_triples(const rk_triples *a, const rk_triples *b)
{
    CU_ASSERT_EQUAL_FATAL(a->n, b->n);
    if (a->n == 0) return;
    CU_ASSERT(memcmp(a->user, b->user, (size_t)a->n * sizeof *a->user) == 0);
    CU_ASSERT(memcmp(a->item, b->item, (size_t)a->n * sizeof *a->item) == 0);
    CU_ASSERT(memcmp(a->rating, b->rating, (size_t)a->n * sizeof *a->rating) == 0);
    CU_ASSERT_EQUAL(a->time == NULL, b->time == NULL);
    if (a->time != NULL && b->time != NULL) CU_ASSERT(memcmp(a->time, b->time, (size_t)a->n * sizeof *a->time) == 0);
}

/* path (and test_path) loaded by one process and by `size` members; every
 * member's result is the one process's.  want_parts: the report's parts
 * expected (size: shared; 0: read whole; -1: either).  @return member 0's
 * parts (-1: the load failed). */
static int check_group(const char *path, const char *test_path, const rk_load_opts *base, int size, int want_parts)
{
    int parts = -1;
    rk_dataset one;
    rk_error e1 = {0};
    const rk_status s1 = rk_load_dataset(&path, 1, test_path, base, &one, &e1);
    group_sim *g = calloc(1, sizeof *g);
    member *m = calloc((size_t)size, sizeof *m);
    pthread_t *th = calloc((size_t)size, sizeof *th);
    CU_ASSERT_FATAL(g != NULL && m != NULL && th != NULL);
    g->size = size;
    pthread_barrier_init(&g->bar, NULL, (unsigned)size);
    for (int r = 0; r < size; r++) {
        m[r].g = g;
        m[r].rank = r;
        m[r].path = path;
        m[r].test_path = test_path;
        m[r].o = *base;
        m[r].o.group = (rk_load_group){r, size, base->group.min_bytes, sim_allgather, sim_bcast, &m[r]};
        pthread_create(&th[r], NULL, member_run, &m[r]);
    }
    for (int r = 0; r < size; r++) pthread_join(th[r], NULL);
    for (int r = 0; r < size; r++) {
        if (m[r].st != s1) fprintf(stderr, "\n%s, %d members: member %d: %s; one process: %s\n", path, size, r,
                                   m[r].e.msg, e1.msg);
        CU_ASSERT_EQUAL_FATAL(m[r].st, s1);
        if (s1 != RK_OK) {
            CU_ASSERT_STRING_EQUAL(m[r].e.msg, e1.msg);
            continue;
        }
        const rk_dataset *d = &m[r].d;
        CU_ASSERT_EQUAL(rk_ids_count(d->users), rk_ids_count(one.users));
        CU_ASSERT_EQUAL(rk_ids_count(d->items), rk_ids_count(one.items));
        char *a = render(d, &d->train), *b = render(&one, &one.train);
        expect_text(a, b, path);
        free(a);
        free(b);
        same_triples(&d->train, &one.train);
        same_triples(&d->test, &one.test);
        rk_test_same_load_report(&d->train_report, &one.train_report);
        rk_test_same_load_report(&d->test_report, &one.test_report);
        if (want_parts >= 0) CU_ASSERT_EQUAL(d->train_report.parts, want_parts);
        if (r == 0) parts = d->train_report.parts;
        CU_ASSERT_EQUAL(one.train_report.parts, 0);
        rk_dataset_free(&m[r].d);
    }
    if (s1 == RK_OK) rk_dataset_free(&one);
    pthread_barrier_destroy(&g->bar);
    free(th);
    free(m);
    free(g);
    return parts;
}

/* ---- files --------------------------------------------------------------------- */

static char *write_tmp(const char *text, size_t len)
{
    char *path = malloc(64);
    snprintf(path, 64, "/tmp/rk_shard_XXXXXX");
    const int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_FATAL(write(fd, text, len) == (ssize_t)len);
    close(fd);
    return path;
}

static void drop_tmp(char *path)
{
    unlink(path);
    free(path);
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A MovieLens-style file of n lines: a header, blank and CRLF lines,
 * optional string ids, bad lines every `bad` lines (0: none), no newline
 * at the end when `open_end`. */
static char *ml_file(int n, uint64_t seed, int strings, int bad, int open_end, size_t *len)
{
    sbuf b = {calloc(1, 64), 0, 64};
    uint64_t s = seed * 2654435761u + 1;
    sb_printf(&b, "userId,movieId,rating,timestamp\n");
    for (int k = 0; k < n; k++) {
        const uint64_t v = rnd(&s);
        const int u = (int)(v % 97), i = (int)(v / 97 % 53), half = (int)(v / 5151 % 10) + 1;
        const char *end = v % 13 == 0 ? "\r\n" : "\n";
        if (v % 41 == 0) sb_printf(&b, "%s", end); /* a blank line */
        if (bad > 0 && k % bad == bad / 2) sb_printf(&b, "%d,%d,four,1%s", u, i, end);
        else if (strings && v % 3 == 0) sb_printf(&b, "\"u %d, x\",i%d,%d.%d,%d%s", u, i, half / 2, half % 2 * 5, k, end);
        else sb_printf(&b, "%d,%d,%d.%d,%d%s", u, i, half / 2, half % 2 * 5, k, end);
    }
    if (open_end && b.n > 0 && b.s[b.n - 1] == '\n') b.n--;
    *len = b.n;
    return b.s;
}

static void group_sizes(const char *path, const char *test_path, const rk_load_opts *o, int want_shared)
{
    const int sizes[] = {2, 3, 4, 7};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        check_group(path, test_path, o, sizes[k], want_shared ? sizes[k] : 0);
}

/* Random files, integer ids and strings, with and without times. */
static void test_random_files(void)
{
    for (int strings = 0; strings < 2; strings++) {
        for (int open_end = 0; open_end < 2; open_end++) {
            size_t len;
            char *text = ml_file(3000, 7 + (uint64_t)strings * 2 + (uint64_t)open_end, strings, 0, open_end, &len);
            char *path = write_tmp(text, len);
            rk_load_opts o;
            rk_load_opts_default(&o);
            o.threads = 2;
            o.want_time = open_end;
            group_sizes(path, NULL, &o, 1);
            o.chunk_bytes = 777; /* many blocks and chunks in each part */
            check_group(path, NULL, &o, 3, 3);
            drop_tmp(path);
            free(text);
        }
    }
}

/* Bad lines skipped: their lines and the first reason as one process
 * reports them; not skipped: one process's message (the file is read
 * whole). */
static void test_bad_lines(void)
{
    size_t len;
    char *text = ml_file(2000, 99, 1, 37, 0, &len);
    char *path = write_tmp(text, len);
    rk_load_opts o;
    rk_load_opts_default(&o);
    o.threads = 1;
    o.skip_bad_lines = 1;
    group_sizes(path, NULL, &o, 1);
    o.skip_bad_lines = 0;
    check_group(path, NULL, &o, 3, -1);
    drop_tmp(path);
    free(text);
}

/* A quoted field over several lines wherever the parts' ends fall, and
 * more members than lines: either way one process's result. */
static void test_quoted_and_tiny(void)
{
    sbuf b = {calloc(1, 64), 0, 64};
    sb_printf(&b, "user,item,rating\n");
    for (int k = 0; k < 60; k++)
        if (k % 7 == 3) sb_printf(&b, "\"a\nb%d\",%d,4\n", k, k);
        else sb_printf(&b, "%d,%d,%d\n", k, k % 5, k % 5 + 1);
    char *path = write_tmp(b.s, b.n);
    rk_load_opts o;
    rk_load_opts_default(&o);
    o.threads = 1;
    o.skip_bad_lines = 1;
    int shared = 0, whole = 0;
    for (int size = 2; size <= 9; size++) {
        const int parts = check_group(path, NULL, &o, size, -1);
        shared += parts == size;
        whole += parts == 0;
    }
    CU_ASSERT(shared > 0); /* this file has both: parts that end inside a quoted row, and not */
    CU_ASSERT(whole > 0);
    drop_tmp(path);
    const char *tiny = "1,2,3\n4,5,1\n";
    path = write_tmp(tiny, strlen(tiny));
    group_sizes(path, NULL, &o, 1);
    drop_tmp(path);
    free(b.s);
}

/* A test file is read in parts too; a netflix file and one under
 * min_bytes are read whole. */
static void test_test_file_and_whole(void)
{
    size_t len, tlen;
    char *text = ml_file(1500, 3, 0, 0, 0, &len), *ttext = ml_file(400, 4, 0, 0, 0, &tlen);
    char *path = write_tmp(text, len), *tpath = write_tmp(ttext, tlen);
    rk_load_opts o;
    rk_load_opts_default(&o);
    o.threads = 2;
    check_group(path, tpath, &o, 3, 3);
    o.group.min_bytes = (int64_t)len + 1;
    check_group(path, tpath, &o, 3, 0);
    drop_tmp(path);
    drop_tmp(tpath);
    free(text);
    free(ttext);
    const char *nf = "1:\n10,3,2005-01-02\n11,4,2005-01-03\n2:\n10,5,2005-02-02\n12,1,2005-02-03\n";
    path = write_tmp(nf, strlen(nf));
    o.group.min_bytes = 0;
    check_group(path, NULL, &o, 2, 0);
    drop_tmp(path);
}

int main(void)
{
    rk_test_case cases[] = {
        {"random files, every group size", test_random_files},
        {"bad lines skipped and not", test_bad_lines},
        {"quoted line breaks, more members than lines", test_quoted_and_tiny},
        {"a test file; files read whole", test_test_file_and_whole},
        {NULL, NULL},
    };
    return rk_test_main("load in parts among processes", cases);
}
