/* Tests of rk_outset, the registry of a run's files: tables checked, every
 * file of a content written and all committed together, a failing writer
 * leaving nothing and the earlier files intact, fold names, streams started
 * over, the CSV rows and the job's own table, and slices of a stream
 * formatted apart and written in at their offsets. */
#define _POSIX_C_SOURCE 200809L
#include "test_output_util.h"
#include "rk_outset.h"
#include "rk_job_internal.h"

#include <pthread.h>

/* ---- writers for the tables of the tests ------------------------------------------ */

/* A whole content: in is the text to write. */
static rk_status put_text(FILE *fp, const void *in, rk_error *err)
{
    (void)err;
    fputs(in, fp);
    return RK_OK;
}

/* The same text behind a prefix: a second format of the same content. */
static rk_status put_text_b(FILE *fp, const void *in, rk_error *err)
{
    (void)err;
    fprintf(fp, "B:%s", (const char *)in);
    return RK_OK;
}

/* Writes half its text, then fails (as a writer whose data turn out bad). */
static rk_status put_fail(FILE *fp, const void *in, rk_error *err)
{
    const char *t = in;
    fwrite(t, 1, strlen(t) / 2, fp);
    return rk_error_set(err, RK_E_INTERNAL, "the writer failed");
}

/* A streamed content: a header at open, one line per batch with its count. */
typedef struct rec_writer {
    FILE *fp;
    char tag;
} rec_writer;

static int g_open_writers; /* writers opened and not yet closed */

static rk_status rec_open_tag(void **w, FILE *fp, const rk_outset_ids *ids, char tag, rk_error *err)
{
    rec_writer *r = malloc(sizeof *r);
    RK_CHECK_ALLOC(r, err);
    r->fp = fp;
    r->tag = tag;
    fprintf(fp, "%c users %d\n", tag, ids->users != NULL ? rk_ids_count(ids->users) : -1);
    g_open_writers++;
    *w = r;
    return RK_OK;
}
static rk_status rec_open_a(void **w, FILE *fp, const rk_outset_ids *ids, rk_error *err)
{
    return rec_open_tag(w, fp, ids, 'a', err);
}
static rk_status rec_open_b(void **w, FILE *fp, const rk_outset_ids *ids, rk_error *err)
{
    return rec_open_tag(w, fp, ids, 'b', err);
}

static rk_status rec_put(void *w, const rk_topn_batch *b, rk_error *err)
{
    (void)err;
    rec_writer *r = w;
    fprintf(r->fp, "%c batch %lld\n", r->tag, (long long)b->count);
    return RK_OK;
}

static void rec_close(void *w)
{
    g_open_writers--;
    free(w);
}

static void expect_file(const char *dir, const char *name, const char *want)
{
    char *p = path_in(dir, name);
    char *t = slurp(p, NULL);
    CU_ASSERT_PTR_NOT_NULL(t);
    if (t != NULL && strcmp(t, want) != 0) {
        fprintf(stderr, "%s: \"%s\", want \"%s\"\n", name, t, want);
        CU_FAIL("file content");
    }
    free(t);
    free(p);
}

/* ---- tables ------------------------------------------------------------------------ */

static void test_check_tables(void)
{
    rk_error err;
    const rk_outset_row good[] = {
        {RK_OUTSET_NEIGHBORS, "n.csv", put_text, NULL, NULL, NULL},
        {RK_OUTSET_NEIGHBORS, "n.txt", put_text_b, NULL, NULL, NULL},
        {RK_OUTSET_RECOMMENDATIONS, "r.csv", NULL, rec_open_a, rec_put, rec_close},
    };
    CU_ASSERT_EQUAL(rk_outset_check(good, 3, &err), RK_OK);
    CU_ASSERT_EQUAL(rk_outset_check(good, 0, &err), RK_OK);

    const rk_outset_row twice[] = {
        {RK_OUTSET_NEIGHBORS, "x.csv", put_text, NULL, NULL, NULL},
        {RK_OUTSET_METRICS, "x.csv", put_text_b, NULL, NULL, NULL},
    };
    rk_error_clear(&err);
    CU_ASSERT_EQUAL(rk_outset_check(twice, 2, &err), RK_E_ARG);
    CU_ASSERT(strstr(err.msg, "x.csv") != NULL && strstr(err.msg, "twice") != NULL);

    const rk_outset_row slash[] = {{RK_OUTSET_METRICS, "a/b.json", put_text, NULL, NULL, NULL}};
    CU_ASSERT_EQUAL(rk_outset_check(slash, 1, &err), RK_E_ARG);
    const rk_outset_row empty[] = {{RK_OUTSET_METRICS, "", put_text, NULL, NULL, NULL}};
    CU_ASSERT_EQUAL(rk_outset_check(empty, 1, &err), RK_E_ARG);
    const rk_outset_row unnamed[] = {{RK_OUTSET_METRICS, NULL, put_text, NULL, NULL, NULL}};
    CU_ASSERT_EQUAL(rk_outset_check(unnamed, 1, &err), RK_E_ARG);
    /* a whole content needs write alone; a streamed one open, put and close */
    const rk_outset_row nowrite[] = {{RK_OUTSET_METRICS, "m.json", NULL, NULL, NULL, NULL}};
    CU_ASSERT_EQUAL(rk_outset_check(nowrite, 1, &err), RK_E_ARG);
    const rk_outset_row streamwrite[] = {{RK_OUTSET_RECOMMENDATIONS, "r.csv", put_text, NULL, NULL, NULL}};
    CU_ASSERT_EQUAL(rk_outset_check(streamwrite, 1, &err), RK_E_ARG);
    const rk_outset_row noclose[] = {{RK_OUTSET_RECOMMENDATIONS, "r.csv", NULL, rec_open_a, rec_put, NULL}};
    CU_ASSERT_EQUAL(rk_outset_check(noclose, 1, &err), RK_E_ARG);
    const rk_outset_row unknown[] = {{RK_OUTSET_CONTENTS, "u.csv", put_text, NULL, NULL, NULL}};
    CU_ASSERT_EQUAL(rk_outset_check(unknown, 1, &err), RK_E_ARG);

    /* a bad table creates no folder */
    char *root = make_tmpdir();
    char *dir = path_in(root, "out");
    rk_outset *set = (rk_outset *)1;
    CU_ASSERT_EQUAL(rk_outset_open(&set, dir, twice, 2, &err), RK_E_ARG);
    CU_ASSERT_PTR_NULL(set);
    CU_ASSERT_EQUAL(count_entries(dir), -1);
    free(dir);
    rm_rf(root);
    free(root);
}

/* The job's own table: well formed and its names unique (else
 * rk_job_files_open refuses it), and its CSV files under the names a run has
 * always written, a fold's with .foldF. */
static void test_job_table(void)
{
    const char *raw[] = {"7", "8"};
    rk_idmap *ids = NULL;
    rk_error err;
    CU_ASSERT_EQUAL_FATAL(rk_ids_from_strings(raw, 2, &ids, &err), RK_OK);
    rk_lists l;
    CU_ASSERT_EQUAL_FATAL(rk_lists_alloc(&l, 2, 1, &err), RK_OK);
    char *root = make_tmpdir();
    rk_outset *set = NULL;
    CU_ASSERT_EQUAL_FATAL(rk_job_files_open(&set, root, &err), RK_OK);
    const rk_outset_lists nl = {&l, ids};
    CU_ASSERT_EQUAL(rk_outset_write(set, RK_OUTSET_NEIGHBORS, 0, &nl, &err), RK_OK);
    CU_ASSERT_EQUAL(rk_outset_write(set, RK_OUTSET_NEIGHBORS, 2, &nl, &err), RK_OK);
    const char pair[] = "78";
    const int64_t off[] = {0, 1, 2};
    const double pred[] = {1.0};
    const rk_outset_preds pr = {1, NULL, NULL, NULL, pred, NULL, NULL, NULL, pair, off};
    CU_ASSERT_EQUAL(rk_outset_write(set, RK_OUTSET_PREDICTIONS, 0, &pr, &err), RK_OK);
    rk_outset_stream *st = NULL;
    const rk_outset_ids both = {ids, ids};
    CU_ASSERT_EQUAL(rk_outset_stream_open(set, RK_OUTSET_RECOMMENDATIONS, 0, &both, &st, &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_outset_commit(set, &err), RK_OK);
    rk_outset_stream_free(st);
    rk_outset_free(set);
    CU_ASSERT_EQUAL(count_entries(root), 4);
    expect_file(root, "neighbors.csv", "item,neighbor,rank,similarity,support\n");
    expect_file(root, "neighbors.fold2.csv", "item,neighbor,rank,similarity,support\n");
    expect_file(root, "predictions.csv", "user,item,rating,prediction,neighbors_used\n7,8,,1,0\n");
    expect_file(root, "recommendations.csv", "user,rank,item,score\n");
    rm_rf(root);
    free(root);
    rk_lists_free(&l);
    rk_ids_free(ids);
}

/* ---- writing and committing --------------------------------------------------------- */

static const rk_outset_row two_formats[] = {
    {RK_OUTSET_NEIGHBORS, "lists.csv", put_text, NULL, NULL, NULL},
    {RK_OUTSET_METRICS, "metrics.json", put_text, NULL, NULL, NULL},
    {RK_OUTSET_NEIGHBORS, "lists.jsonl", put_text_b, NULL, NULL, NULL},
};

static void test_written_and_committed_together(void)
{
    char *root = make_tmpdir();
    char *dir = path_in(root, "out");
    rk_outset *set;
    rk_error err;
    CU_ASSERT_EQUAL_FATAL(rk_outset_open(&set, dir, two_formats, 3, &err), RK_OK);
    /* one content, every row of it: both formats */
    CU_ASSERT_EQUAL(rk_outset_write(set, RK_OUTSET_NEIGHBORS, 0, "lists\n", &err), RK_OK);
    CU_ASSERT_EQUAL(rk_outset_write(set, RK_OUTSET_METRICS, 0, "{}\n", &err), RK_OK);
    /* a content without a row is written nowhere */
    CU_ASSERT_EQUAL(rk_outset_write(set, RK_OUTSET_REPORT, 0, "<html>", &err), RK_OK);
    /* before the commit only hidden temporary files, one per row written */
    CU_ASSERT_EQUAL(count_entries(dir), 3);
    char *fin = path_in(dir, "lists.csv");
    CU_ASSERT_EQUAL(access(fin, F_OK), -1);
    CU_ASSERT_EQUAL_FATAL(rk_outset_commit(set, &err), RK_OK);
    rk_outset_free(set);
    CU_ASSERT_EQUAL(count_entries(dir), 3);
    expect_file(dir, "lists.csv", "lists\n");
    expect_file(dir, "lists.jsonl", "B:lists\n");
    expect_file(dir, "metrics.json", "{}\n");
    /* the same content twice in one run is the same file twice: refused */
    CU_ASSERT_EQUAL_FATAL(rk_outset_open(&set, dir, two_formats, 3, &err), RK_OK);
    CU_ASSERT_EQUAL(rk_outset_write(set, RK_OUTSET_METRICS, 0, "1", &err), RK_OK);
    CU_ASSERT_NOT_EQUAL(rk_outset_write(set, RK_OUTSET_METRICS, 0, "2", &err), RK_OK);
    rk_outset_free(set);
    expect_file(dir, "metrics.json", "{}\n");
    free(fin);
    free(dir);
    rm_rf(root);
    free(root);
}

/* A content's files created now and written later, in another thread,
 * while the set creates and writes others; committed with them; a later
 * write that fails aborts the whole set like any other. */
typedef struct later_job {
    rk_outset_later *l;
    const char *text;
    rk_status st;
    rk_error err;
} later_job;

static void *later_thread(void *arg)
{
    later_job *w = arg;
    w->st = rk_outset_later_write(w->l, w->text, &w->err);
    return NULL;
}

static void test_written_later(void)
{
    char *root = make_tmpdir();
    char *dir = path_in(root, "out");
    rk_outset *set;
    rk_error err;
    CU_ASSERT_EQUAL_FATAL(rk_outset_open(&set, dir, two_formats, 3, &err), RK_OK);
    later_job w = {NULL, "lists later\n", RK_E_INTERNAL, {0}};
    CU_ASSERT_EQUAL_FATAL(rk_outset_later_open(set, RK_OUTSET_NEIGHBORS, 2, &w.l, &err), RK_OK);
    CU_ASSERT_EQUAL(count_entries(dir), 2); /* both rows' files, created at once */
    rk_outset_later *none = NULL;
    CU_ASSERT_NOT_EQUAL(rk_outset_later_open(set, RK_OUTSET_RECOMMENDATIONS, 0, &none, &err), RK_OK); /* streamed */
    CU_ASSERT_PTR_NULL(none);
    pthread_t th;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, later_thread, &w), 0);
    CU_ASSERT_EQUAL(rk_outset_write(set, RK_OUTSET_METRICS, 0, "{}\n", &err), RK_OK);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(w.st, RK_OK);
    rk_outset_later_free(w.l);
    CU_ASSERT_EQUAL_FATAL(rk_outset_commit(set, &err), RK_OK);
    rk_outset_free(set);
    expect_file(dir, "lists.fold2.csv", "lists later\n");
    expect_file(dir, "lists.fold2.jsonl", "B:lists later\n");
    expect_file(dir, "metrics.json", "{}\n");
    free(dir);
    rm_rf(root);
    free(root);
}

static void test_failing_writer_leaves_nothing(void)
{
    char *root = make_tmpdir();
    char *dir = path_in(root, "out");
    rk_outset *set;
    rk_error err;
    /* a first run's complete files */
    CU_ASSERT_EQUAL_FATAL(rk_outset_open(&set, dir, two_formats, 3, &err), RK_OK);
    CU_ASSERT_EQUAL(rk_outset_write(set, RK_OUTSET_NEIGHBORS, 0, "old lists\n", &err), RK_OK);
    CU_ASSERT_EQUAL(rk_outset_write(set, RK_OUTSET_METRICS, 0, "old metrics\n", &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_outset_commit(set, &err), RK_OK);
    rk_outset_free(set);

    /* a second run whose second format fails after the first was written */
    const rk_outset_row failing[] = {
        {RK_OUTSET_NEIGHBORS, "lists.csv", put_text, NULL, NULL, NULL},
        {RK_OUTSET_METRICS, "metrics.json", put_text, NULL, NULL, NULL},
        {RK_OUTSET_NEIGHBORS, "lists.jsonl", put_fail, NULL, NULL, NULL},
        {RK_OUTSET_PREDICTIONS, "new.csv", put_text, NULL, NULL, NULL},
    };
    CU_ASSERT_EQUAL_FATAL(rk_outset_open(&set, dir, failing, 4, &err), RK_OK);
    CU_ASSERT_EQUAL(rk_outset_write(set, RK_OUTSET_PREDICTIONS, 0, "new\n", &err), RK_OK);
    CU_ASSERT_EQUAL(rk_outset_write(set, RK_OUTSET_METRICS, 0, "new metrics\n", &err), RK_OK);
    rk_error_clear(&err);
    CU_ASSERT_EQUAL(rk_outset_write(set, RK_OUTSET_NEIGHBORS, 0, "new lists\n", &err), RK_E_INTERNAL);
    CU_ASSERT(strstr(err.msg, "the writer failed") != NULL);
    rk_outset_free(set); /* the failed run ends without a commit */
    /* the first run's files, unchanged; nothing of the second, no temporary */
    CU_ASSERT_EQUAL(count_entries(dir), 3);
    expect_file(dir, "lists.csv", "old lists\n");
    expect_file(dir, "lists.jsonl", "B:old lists\n");
    expect_file(dir, "metrics.json", "old metrics\n");

    /* a folder the failed run made is removed with its files */
    char *fresh = path_in(root, "fresh/deeper");
    CU_ASSERT_EQUAL_FATAL(rk_outset_open(&set, fresh, failing, 4, &err), RK_OK);
    CU_ASSERT_EQUAL(rk_outset_write(set, RK_OUTSET_METRICS, 0, "m\n", &err), RK_OK);
    CU_ASSERT_EQUAL(rk_outset_write(set, RK_OUTSET_NEIGHBORS, 0, "l\n", &err), RK_E_INTERNAL);
    rk_outset_free(set);
    char *fresh_top = path_in(root, "fresh");
    CU_ASSERT_EQUAL(count_entries(fresh_top), -1);
    free(fresh_top);
    free(fresh);
    free(dir);
    rm_rf(root);
    free(root);
}

static void test_fold_names(void)
{
    char b[64];
    CU_ASSERT_EQUAL(rk_outset_name(b, sizeof b, "neighbors.csv", 0), 13);
    CU_ASSERT_STRING_EQUAL(b, "neighbors.csv");
    rk_outset_name(b, sizeof b, "neighbors.csv", 3);
    CU_ASSERT_STRING_EQUAL(b, "neighbors.fold3.csv");
    rk_outset_name(b, sizeof b, "a.b.jsonl", 12);
    CU_ASSERT_STRING_EQUAL(b, "a.b.fold12.jsonl");
    rk_outset_name(b, sizeof b, "plain", 2);
    CU_ASSERT_STRING_EQUAL(b, "plain.fold2");
    rk_outset_name(b, sizeof b, ".hidden", 1);
    CU_ASSERT_STRING_EQUAL(b, ".hidden.fold1");

    /* the files of folds 1 and 2 and the unsuffixed one are three files */
    char *root = make_tmpdir();
    rk_outset *set;
    rk_error err;
    CU_ASSERT_EQUAL_FATAL(rk_outset_open(&set, root, two_formats, 3, &err), RK_OK);
    for (int f = 0; f <= 2; f++) {
        char t[16];
        snprintf(t, sizeof t, "fold %d\n", f);
        CU_ASSERT_EQUAL(rk_outset_write(set, RK_OUTSET_NEIGHBORS, f, t, &err), RK_OK);
    }
    CU_ASSERT_EQUAL_FATAL(rk_outset_commit(set, &err), RK_OK);
    rk_outset_free(set);
    CU_ASSERT_EQUAL(count_entries(root), 6);
    expect_file(root, "lists.csv", "fold 0\n");
    expect_file(root, "lists.fold1.csv", "fold 1\n");
    expect_file(root, "lists.fold2.jsonl", "B:fold 2\n");
    rm_rf(root);
    free(root);
}

/* ---- streams ------------------------------------------------------------------------- */

static void test_stream(void)
{
    const rk_outset_row rows[] = {
        {RK_OUTSET_RECOMMENDATIONS, "recs.a", NULL, rec_open_a, rec_put, rec_close},
        {RK_OUTSET_METRICS, "m.json", put_text, NULL, NULL, NULL},
        {RK_OUTSET_RECOMMENDATIONS, "recs.b", NULL, rec_open_b, rec_put, rec_close},
    };
    const char *raw[] = {"u1", "u2", "u3"};
    rk_idmap *users = NULL;
    rk_error err;
    CU_ASSERT_EQUAL_FATAL(rk_ids_from_strings(raw, 3, &users, &err), RK_OK);
    const rk_outset_ids ids = {users, NULL};
    char *root = make_tmpdir();
    rk_outset *set;
    rk_outset_stream *st = NULL;
    CU_ASSERT_EQUAL_FATAL(rk_outset_open(&set, root, rows, 3, &err), RK_OK);
    /* a content is streamed or whole, never both */
    CU_ASSERT_EQUAL(rk_outset_write(set, RK_OUTSET_RECOMMENDATIONS, 0, "x", &err), RK_E_ARG);
    CU_ASSERT_EQUAL(rk_outset_stream_open(set, RK_OUTSET_METRICS, 0, &ids, &st, &err), RK_E_ARG);
    CU_ASSERT_PTR_NULL(st);

    CU_ASSERT_EQUAL_FATAL(rk_outset_stream_open(set, RK_OUTSET_RECOMMENDATIONS, 2, &ids, &st, &err), RK_OK);
    CU_ASSERT_EQUAL(g_open_writers, 2);
    rk_topn_batch b;
    memset(&b, 0, sizeof b);
    b.count = 7;
    for (int i = 0; i < 3; i++) CU_ASSERT_EQUAL(rk_outset_put(st, &b, &err), RK_OK);
    /* started over: what came before is gone from both files, also past
     * the end of what comes after */
    CU_ASSERT_EQUAL(rk_outset_restart(st, &err), RK_OK);
    CU_ASSERT_EQUAL(g_open_writers, 2);
    b.count = 4;
    CU_ASSERT_EQUAL(rk_outset_put(st, &b, &err), RK_OK);
    CU_ASSERT_EQUAL(rk_outset_write(set, RK_OUTSET_METRICS, 0, "{}\n", &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_outset_commit(set, &err), RK_OK);
    rk_outset_stream_free(st);
    CU_ASSERT_EQUAL(g_open_writers, 0);
    rk_outset_free(set);
    CU_ASSERT_EQUAL(count_entries(root), 3);
    expect_file(root, "recs.fold2.a", "a users 3\na batch 4\n");
    expect_file(root, "recs.fold2.b", "b users 3\nb batch 4\n");
    expect_file(root, "m.json", "{}\n");

    /* a stream of a run that fails leaves nothing */
    rm_rf(root);
    mkdir(root, 0777);
    CU_ASSERT_EQUAL_FATAL(rk_outset_open(&set, root, rows, 3, &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_outset_stream_open(set, RK_OUTSET_RECOMMENDATIONS, 0, &ids, &st, &err), RK_OK);
    CU_ASSERT_EQUAL(rk_outset_put(st, &b, &err), RK_OK);
    CU_ASSERT_EQUAL(count_entries(root), 2);
    rk_outset_stream_free(st);
    rk_outset_free(set);
    CU_ASSERT_EQUAL(count_entries(root), 0);
    CU_ASSERT_EQUAL(g_open_writers, 0);
    rm_rf(root);
    free(root);
    rk_ids_free(users);
}

/* The CSV rows through the registry give rk_output's bytes; --queries
 * answers keep the raw ids and leave the rating empty. */
static void test_csv_rows(void)
{
    const rk_outset_row rows[] = {
        {RK_OUTSET_NEIGHBORS, "neighbors.csv", rk_outset_neighbors_csv, NULL, NULL, NULL},
        {RK_OUTSET_PREDICTIONS, "predictions.csv", rk_outset_predictions_csv, NULL, NULL, NULL},
    };
    const char *raw_items[] = {"10", "20"};
    rk_idmap *items = NULL;
    rk_error err;
    CU_ASSERT_EQUAL_FATAL(rk_ids_from_strings(raw_items, 2, &items, &err), RK_OK);
    rk_lists l;
    CU_ASSERT_EQUAL_FATAL(rk_lists_alloc(&l, 2, 1, &err), RK_OK);
    l.len[0] = 1;
    l.nbr[0] = 1;
    l.sim[0] = 0.25f;
    l.support[0] = 3;
    /* the reference: rk_out_neighbors on a stream of its own */
    FILE *ref = tmpfile();
    CU_ASSERT_EQUAL_FATAL(rk_out_neighbors(ref, &l, items, &err), RK_OK);
    char *want = stream_text(ref);
    fclose(ref);

    char *root = make_tmpdir();
    rk_outset *set;
    CU_ASSERT_EQUAL_FATAL(rk_outset_open(&set, root, rows, 2, &err), RK_OK);
    const rk_outset_lists nl = {&l, items};
    CU_ASSERT_EQUAL(rk_outset_write(set, RK_OUTSET_NEIGHBORS, 0, &nl, &err), RK_OK);
    const char pairs[] = "u1i9unknownj";
    const int64_t off[] = {0, 2, 4, 11, 12};
    const double pred[] = {3.5, 2.0 / 3.0};
    const int32_t used[] = {4, 0};
    const rk_outset_preds pr = {2, NULL, NULL, NULL, pred, used, NULL, NULL, pairs, off};
    CU_ASSERT_EQUAL(rk_outset_write(set, RK_OUTSET_PREDICTIONS, 0, &pr, &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_outset_commit(set, &err), RK_OK);
    rk_outset_free(set);
    expect_file(root, "neighbors.csv", want);
    char g[40], line[160];
    rk_out_double(g, sizeof g, 2.0 / 3.0);
    snprintf(line, sizeof line, "user,item,rating,prediction,neighbors_used\nu1,i9,,3.5,4\nunknown,j,,%s,0\n", g);
    expect_file(root, "predictions.csv", line);
    free(want);
    rm_rf(root);
    free(root);
    rk_lists_free(&l);
    rk_ids_free(items);
}

/* Slices: a recommendations' file made of the stream's own rows and slices
 * formatted elsewhere (as MPI ranks do) is the file of one stream, byte for
 * byte; the slices go in at their offsets through the pending file's
 * temporary path, and are committed with it. */
static void test_slices(void)
{
    const rk_outset_row rows[] = {
        {RK_OUTSET_RECOMMENDATIONS, "recommendations.csv", NULL, rk_outset_recs_csv_open, rk_outset_recs_csv_put,
         rk_outset_recs_csv_close},
    };
    const char *raw_u[] = {"u1", "u,2", "u3"}, *raw_i[] = {"10", "20", "30", "40"};
    rk_idmap *users = NULL, *items = NULL;
    rk_error err;
    CU_ASSERT_EQUAL_FATAL(rk_ids_from_strings(raw_u, 3, &users, &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_ids_from_strings(raw_i, 4, &items, &err), RK_OK);
    const rk_outset_ids ids = {users, items};
    /* three batches: a user each, lists of 2, 1 and 0 items (N 2) */
    int32_t user[3] = {0, 1, 2}, len[3] = {2, 1, 0}, item[6] = {3, 1, 2, 0, 0, 0};
    uint64_t score[6];
    for (int x = 0; x < 6; x++) score[x] = rk_topn_fixed(0.5f + 0.125f * (float)x);
    rk_topn_batch b[3];
    for (int x = 0; x < 3; x++) b[x] = (rk_topn_batch){x, 1, &user[x], 2, &len[x], &item[2 * x], &score[2 * x]};
    /* the reference: one stream of every batch */
    char *ref_dir = make_tmpdir(), *dir = make_tmpdir();
    rk_outset *set;
    rk_outset_stream *st;
    CU_ASSERT_EQUAL_FATAL(rk_outset_open(&set, ref_dir, rows, 1, &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_outset_stream_open(set, RK_OUTSET_RECOMMENDATIONS, 0, &ids, &st, &err), RK_OK);
    for (int x = 0; x < 3; x++) CU_ASSERT_EQUAL(rk_outset_put(st, &b[x], &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_outset_commit(set, &err), RK_OK);
    rk_outset_stream_free(st);
    rk_outset_free(set);
    char *rp = path_in(ref_dir, "recommendations.csv");
    char *want = slurp(rp, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(want);
    CU_ASSERT_PTR_NOT_NULL(strstr(want, "\"u,2\",1,40,0.5\n"));

    /* the holder writes batch 0; batches 1 and 2 are another process's slice */
    CU_ASSERT_EQUAL_FATAL(rk_outset_open(&set, dir, rows, 1, &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_outset_stream_open(set, RK_OUTSET_RECOMMENDATIONS, 0, &ids, &st, &err), RK_OK);
    CU_ASSERT_EQUAL(rk_outset_put(st, &b[0], &err), RK_OK);
    const char *tmp = NULL;
    FILE *fp = NULL;
    CU_ASSERT_EQUAL_FATAL(rk_outset_stream_target(st, &tmp, &fp, &err), RK_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tmp);
    CU_ASSERT_PTR_NULL(strstr(tmp, "recommendations.csv") == tmp ? tmp : NULL); /* a temporary name */
    rk_outset_slice *sl = NULL;
    CU_ASSERT_EQUAL_FATAL(rk_outset_slice_open(rows, 1, RK_OUTSET_RECOMMENDATIONS, &ids, &sl, &err), RK_OK);
    const unsigned char *data;
    size_t bytes;
    CU_ASSERT_EQUAL(rk_outset_slice_bytes(sl, &data, &bytes, &err), RK_OK);
    CU_ASSERT_EQUAL(bytes, 0); /* the header is the holder's */
    CU_ASSERT_EQUAL(rk_outset_slice_put(sl, &b[1], &err), RK_OK);
    CU_ASSERT_EQUAL(rk_outset_slice_put(sl, &b[2], &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_outset_slice_bytes(sl, &data, &bytes, &err), RK_OK);
    CU_ASSERT_FATAL(fflush(fp) == 0);
    const int64_t at = ftello(fp);
    CU_ASSERT_EQUAL_FATAL((size_t)at + bytes, strlen(want));
    CU_ASSERT_EQUAL(rk_out_write_at(tmp, "recs", at, data, bytes, &err), RK_OK);
    char back[64];
    size_t got = 0;
    CU_ASSERT_EQUAL(rk_out_read_at(tmp, "recs", at, back, sizeof back, &got, &err), RK_OK);
    CU_ASSERT_EQUAL(got, bytes < sizeof back ? bytes : sizeof back);
    CU_ASSERT(memcmp(back, data, got) == 0);
    /* past the end: fewer bytes; a file that is not there: an error */
    CU_ASSERT_EQUAL(rk_out_read_at(tmp, "recs", at + (int64_t)bytes - 3, back, sizeof back, &got, &err), RK_OK);
    CU_ASSERT_EQUAL(got, 3);
    char *gone = path_in(dir, "no-such-file");
    CU_ASSERT_EQUAL(rk_out_write_at(gone, "recs", 0, "x", 1, &err), RK_E_IO);
    CU_ASSERT_EQUAL(rk_out_read_at(gone, "recs", 0, back, 1, &got, &err), RK_E_IO);
    CU_ASSERT_EQUAL(count_entries(dir), 1); /* writing a slice creates nothing */
    CU_ASSERT_EQUAL_FATAL(rk_outset_commit(set, &err), RK_OK);
    rk_outset_slice_free(sl);
    rk_outset_stream_free(st);
    rk_outset_free(set);
    expect_file(dir, "recommendations.csv", want);

    /* a content of two files has no one target, and no slices */
    const rk_outset_row two[] = {
        {RK_OUTSET_RECOMMENDATIONS, "recs.a", NULL, rec_open_a, rec_put, rec_close},
        {RK_OUTSET_RECOMMENDATIONS, "recs.b", NULL, rec_open_b, rec_put, rec_close},
    };
    CU_ASSERT_EQUAL(rk_outset_slice_open(two, 2, RK_OUTSET_RECOMMENDATIONS, &ids, &sl, &err), RK_E_ARG);
    CU_ASSERT_PTR_NULL(sl);
    rm_rf(dir);
    mkdir(dir, 0777);
    CU_ASSERT_EQUAL_FATAL(rk_outset_open(&set, dir, two, 2, &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_outset_stream_open(set, RK_OUTSET_RECOMMENDATIONS, 0, &ids, &st, &err), RK_OK);
    CU_ASSERT_EQUAL(rk_outset_stream_target(st, &tmp, &fp, &err), RK_E_ARG);
    rk_outset_stream_free(st);
    rk_outset_free(set);
    CU_ASSERT_EQUAL(count_entries(dir), 0);
    CU_ASSERT_EQUAL(g_open_writers, 0);
    free(gone);
    free(want);
    free(rp);
    rm_rf(dir);
    rm_rf(ref_dir);
    free(dir);
    free(ref_dir);
    rk_ids_free(users);
    rk_ids_free(items);
}

/* A run killed outright leaves its hidden temporary files: the next run in
 * the folder removes those of its table, and nothing else. */
static void test_leftovers(void)
{
    const rk_outset_row rows[] = {
        {RK_OUTSET_RECOMMENDATIONS, "recommendations.csv", NULL, rec_open_a, rec_put, rec_close},
        {RK_OUTSET_NEIGHBORS, "neighbors.csv", put_text, NULL, NULL, NULL},
    };
    static const char *const gone[] = {".recommendations.csv.tmp.Ab12Cd", ".neighbors.fold2.csv.tmp.x1y2z3"};
    static const char *const kept[] = {".neighbors.csv.tmp.ab", ".other.csv.tmp.abcdef", "recommendations.csv",
                                       ".recommendations.csv.tmp.Ab12C-", "recommendations.csv.tmp.Ab12Cd",
                                       ".neighbors.fold0.csv.tmp.x1y2z3"};
    char *root = make_tmpdir();
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    for (size_t i = 0; i < 2; i++) {
        char *p = path_in(root, gone[i]);
        FILE *f = fopen(p, "w");
        CU_ASSERT_PTR_NOT_NULL(f);
        if (f != NULL) fclose(f);
        free(p);
    }
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
        char *p = path_in(root, kept[i]);
        FILE *f = fopen(p, "w");
        CU_ASSERT_PTR_NOT_NULL(f);
        if (f != NULL) fclose(f);
        free(p);
    }
    rk_outset *set = NULL;
    rk_error err;
    CU_ASSERT_EQUAL_FATAL(rk_outset_open(&set, root, rows, 2, &err), RK_OK);
    for (size_t i = 0; i < 2; i++) {
        char *p = path_in(root, gone[i]);
        CU_ASSERT(access(p, F_OK) != 0);
        free(p);
    }
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
        char *p = path_in(root, kept[i]);
        CU_ASSERT(access(p, F_OK) == 0);
        free(p);
    }
    rk_outset_free(set);
    CU_ASSERT_EQUAL(count_entries(root), (int)(sizeof kept / sizeof kept[0]));
    rm_rf(root);
    free(root);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"tables: checked", test_check_tables},
        {"the job's table", test_job_table},
        {"every row of a content, committed together", test_written_and_committed_together},
        {"a failing writer leaves nothing, earlier files intact", test_failing_writer_leaves_nothing},
        {"a content's files created now, written later in a thread", test_written_later},
        {"fold names", test_fold_names},
        {"streams: every row, started over, freed", test_stream},
        {"CSV rows: rk_output's bytes, --queries answers", test_csv_rows},
        {"slices written elsewhere: one stream's bytes", test_slices},
        {"a killed run's temporary files removed by the next", test_leftovers},
        {NULL, NULL},
    };
    return rk_test_main("rk_outset", cases);
}
