/* Unit tests of the loader in pieces: a bad line found by a later chunk,
 * every chunk size of csv and netflix input, files read in small blocks and
 * in parallel pread pieces (split from test_load.c). */
#define _POSIX_C_SOURCE 200809L
#include "test_load_util.h"

/* A bad line deep in the input, found by a later chunk, in strict mode. */
static void test_bad_later_chunk(void)
{
    sbuf b = {calloc(1, 64), 0, 64};
    sb_printf(&b, "userId,movieId,rating,timestamp\n");
    for (int k = 2; k <= 3000; k++) {
        if (k == 2777) sb_printf(&b, "%d,%d,x4.0,1\n", k, k);
        else if (k == 2900) sb_printf(&b, "%d,%d,4.0\n", k, k);
        else if (k % 100 == 0) sb_printf(&b, "\r\n");
        else sb_printf(&b, "%d,%d,%d.5,1\n", k, k, k % 5);
    }
    rk_load_opts o;
    rk_dataset d;
    rk_error e;
    rk_load_opts_default(&o);
    size_t sizes[] = {0, 1, 50, 999, 4096, 60000};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        o.chunk_bytes = sizes[k];
        o.threads = 2;
        CU_ASSERT_EQUAL(rk_load_buffer("big.csv", b.s, b.n, &o, &d, &e), RK_E_PARSE);
        CU_ASSERT_STRING_EQUAL(e.msg, "big.csv:2777: rating is not a number: \"x4.0\"");
    }
    free(b.s);
}

/* ---- every chunk size ------------------------------------------------------------- */

typedef struct snapshot {
    char *text;
    int64_t lines, ratings, skipped;
    int n_bad;
    int64_t bad[RK_LOAD_BAD_KEPT];
} snapshot;

static void snap(const char *buf, size_t len, const rk_load_opts *o, snapshot *s)
{
    rk_dataset d;
    rk_error e;
    rk_status st = rk_load_buffer("sweep", buf, len, o, &d, &e);
    if (st != RK_OK) fprintf(stderr, "\nsweep (chunk %zu): %s\n", o->chunk_bytes, e.msg);
    CU_ASSERT_EQUAL_FATAL(st, RK_OK);
    s->text = render(&d, &d.train);
    s->lines = d.train_report.lines;
    s->ratings = d.train_report.ratings;
    s->skipped = d.train_report.skipped_lines;
    s->n_bad = d.train_report.n_bad_kept;
    for (int k = 0; k < s->n_bad; k++) s->bad[k] = d.train_report.bad[k].line;
    rk_dataset_free(&d);
}

static void sweep(const char *buf, const rk_load_opts *base, int64_t want_skipped)
{
    size_t len = strlen(buf);
    rk_load_opts o = *base;
    snapshot ref, s;
    o.chunk_bytes = 0;
    snap(buf, len, &o, &ref);
    CU_ASSERT_EQUAL(ref.skipped, want_skipped);
    for (size_t cb = 1; cb <= len + 1; cb++) {
        o.chunk_bytes = cb;
        o.threads = 1 + (int)(cb % 2);
        snap(buf, len, &o, &s);
        if (strcmp(s.text, ref.text) != 0) fprintf(stderr, "\nchunk %zu differs\n", cb);
        CU_ASSERT_STRING_EQUAL(s.text, ref.text);
        CU_ASSERT_EQUAL(s.lines, ref.lines);
        CU_ASSERT_EQUAL(s.ratings, ref.ratings);
        CU_ASSERT_EQUAL(s.skipped, ref.skipped);
        CU_ASSERT_EQUAL_FATAL(s.n_bad, ref.n_bad);
        for (int k = 0; k < s.n_bad; k++) CU_ASSERT_EQUAL(s.bad[k], ref.bad[k]);
        free(s.text);
    }
    free(ref.text);
}

static void test_chunks_csv(void)
{
    rk_load_opts o;
    rk_load_opts_default(&o);
    o.want_time = 1;
    sweep("userId,movieId,rating,timestamp\r\n1,10,4.0,964982703\r\n1,2,3.5,964981247\r\n\r\n"
          "2,10,0.5,964982224\r\n\"10\",\"7\",\"5.0\",964983815\r\n\n3,x,1,5\r\n4,y,2,6",
          &o, 0);
    o.skip_bad_lines = 1;
    sweep("u,i,r,t\n1,2,3,4\n\n1,\"a\nb\",3,4\n5,6,7,8\n9,10,zz,1\n1,2\n\"q\",\"r\",1,2\n7,8,9,10",
          &o, 2);
    /* ids with line breaks, quotes and delimiters (RFC 4180), rows over
     * several lines that cross chunk boundaries; a quote never closed */
    sweep("u,i,r,t\n\"a\nb\",\"c\r\nd\",1,2\n\"x\"\"\n\n\ny\",z,3,4\n\"p,q\",\"\n\",5,6\n7,8,9,10\n", &o, 0);
    sweep("u,i,r,t\n1,2,3,4\n\"a\nb\",\"c\n,9,9\n5,6,7,8\n", &o, 1);
    o.want_time = 0;
    o.delimiter = ' ';
    sweep("1 1 2\n1 2 4\n\n2  1 3.5 \n3 3 0.5\n a 3 1", &o, 0);
}

static void test_chunks_netflix(void)
{
    rk_load_opts o;
    rk_load_opts_default(&o);
    o.want_time = 1;
    sweep("1:\n1488844,3,2005-09-06\n822109,5,2005-05-13\n\n2:\n2059652,4,2005-09-05\n"
          "1488844,4,2005-04-19\nmv3:\r\n822109,1,2005-06-16\r\n7,2,2005-06-17\r\n4:\n1,1,2001-01-01",
          &o, 0);
    o.skip_bad_lines = 1;
    o.format = RK_FMT_NETFLIX;
    sweep("5,5,2005-01-01\n1:\n1,3,2005-09-06\nbad line\n2,x,2005-09-06\n:\n3,3,2005-09-06\n"
          "4,4,2005-09-06\n2:\n5,5,2005-01-01\n",
          &o, 6);
}

/* Files read in small blocks against the same bytes from memory. */
static void test_blocks_from_files(void)
{
    char dir[] = "/tmp/rk_test_load_XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    char csv[600], nf[600];
    snprintf(csv, sizeof csv, "%s/big.csv", dir);
    snprintf(nf, sizeof nf, "%s/big.txt", dir);
    sbuf a = {calloc(1, 64), 0, 64}, b = {calloc(1, 64), 0, 64};
    unsigned long long seed = 7;
    sb_printf(&a, "userId,movieId,rating,timestamp\r\n");
    for (int k = 0; k < 4000; k++)
        sb_printf(&a, "%d,%d,%.1f,%d\r\n", k / 20 + 1, (int)(rk_test_rand(&seed) % 500) + 1,
                  0.5 * (double)(rk_test_rand(&seed) % 10 + 1), k);
    for (int m = 1; m <= 40; m++) {
        sb_printf(&b, "%d:\n", m * 3);
        for (int k = 0; k < 100; k++)
            sb_printf(&b, "%d,%d,2005-01-%02d\n", (int)(rk_test_rand(&seed) % 900) + 1,
                      (int)(rk_test_rand(&seed) % 5) + 1, k % 28 + 1);
    }
    b.n--; /* no newline at the end */
    b.s[b.n] = '\0';
    /* ids with line breaks inside quotes: rows over several lines, cut by
     * blocks and chunks anywhere */
    char ql[600];
    snprintf(ql, sizeof ql, "%s/quoted.csv", dir);
    sbuf c = {calloc(1, 64), 0, 64};
    sb_printf(&c, "user,item,rating\n");
    for (int k = 0; k < 600; k++)
        sb_printf(&c, "\"u%d\n%s\",\"i%d,\r\n\"\"x\",%d\n", k / 7, k % 3 ? "" : "\n\n",
                  (int)(rk_test_rand(&seed) % 90), k % 5 + 1);
    write_file(csv, a.s);
    write_file(nf, b.s);
    write_file(ql, c.s);
    const char *files[3] = {csv, nf, ql};
    sbuf *bufs[3] = {&a, &b, &c};
    size_t sizes[] = {0, 1, 3, 64, 1000, 65535, 1 << 20};
    for (int f = 0; f < 3; f++) {
        rk_load_opts o;
        rk_dataset dm, df;
        rk_error e;
        rk_load_opts_default(&o);
        o.want_time = 1;
        CU_ASSERT_EQUAL_FATAL(rk_load_buffer("m", bufs[f]->s, bufs[f]->n, &o, &dm, &e), RK_OK);
        char *want = render(&dm, &dm.train);
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            o.chunk_bytes = sizes[k];
            o.threads = 2;
            CU_ASSERT_EQUAL_FATAL(rk_load_dataset(&files[f], 1, NULL, &o, &df, &e), RK_OK);
            char *got = render(&df, &df.train);
            CU_ASSERT_STRING_EQUAL(got, want);
            CU_ASSERT_EQUAL(df.train_report.lines, dm.train_report.lines);
            CU_ASSERT_EQUAL(df.train_report.bytes, (int64_t)bufs[f]->n);
            free(got);
            rk_dataset_free(&df);
        }
        CU_ASSERT_EQUAL(dm.train.n, f == 2 ? 600 : 4000);
        free(want);
        rk_dataset_free(&dm);
    }
    unlink(csv);
    unlink(nf);
    unlink(ql);
    free(c.s);
    rmdir(dir);
    free(a.s);
    free(b.s);
}

/* A file read in several pread pieces per block. */
static void test_big_file(void)
{
    char dir[] = "/tmp/rk_test_big_XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    char path[600];
    snprintf(path, sizeof path, "%s/big.csv", dir);
    sbuf a = {calloc(1, 64), 0, 64};
    unsigned long long seed = 3;
    for (int k = 0; k < 400000; k++)
        sb_printf(&a, "%d,%d,%d.5\n", k / 50, (int)(rk_test_rand(&seed) % 90000), k % 5);
    write_file(path, a.s);
    rk_load_opts o;
    rk_dataset dm, df;
    rk_error e;
    rk_load_opts_default(&o);
    o.threads = 2;
    CU_ASSERT_EQUAL_FATAL(rk_load_buffer("m", a.s, a.n, &o, &dm, &e), RK_OK);
    const char *p = path;
    size_t sizes[] = {0, (size_t)3 << 20, 12345};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        o.chunk_bytes = sizes[k];
        CU_ASSERT_EQUAL_FATAL(rk_load_dataset(&p, 1, NULL, &o, &df, &e), RK_OK);
        CU_ASSERT_EQUAL(df.train_report.bytes, (int64_t)a.n);
        CU_ASSERT_EQUAL(df.train_report.lines, 400000);
        CU_ASSERT_EQUAL_FATAL(df.train.n, dm.train.n);
        CU_ASSERT_EQUAL(memcmp(df.train.user, dm.train.user, (size_t)dm.train.n * sizeof(int32_t)), 0);
        CU_ASSERT_EQUAL(memcmp(df.train.item, dm.train.item, (size_t)dm.train.n * sizeof(int32_t)), 0);
        CU_ASSERT_EQUAL(memcmp(df.train.rating, dm.train.rating, (size_t)dm.train.n * sizeof(float)), 0);
        rk_dataset_free(&df);
    }
    rk_dataset_free(&dm);
    unlink(path);
    rmdir(dir);
    free(a.s);
}

/* --memory-limit (rk_load_opts.mem_limit): budgets doubling from 64 KiB; each
 * either loads what an unbounded load does or stops with RK_E_NOMEM naming
 * the file, a line and the option, and once one loads every larger one does.
 * A --test file counts the training rows held already. */
static void test_memory_budget(void)
{
    char dir[] = "/tmp/rk_test_budget_XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    char path[600], tpath[600];
    snprintf(path, sizeof path, "%s/big.csv", dir);
    snprintf(tpath, sizeof tpath, "%s/test.csv", dir);
    sbuf a = {calloc(1, 64), 0, 64};
    unsigned long long seed = 11;
    sb_printf(&a, "user,item,rating,time\n");
    for (int k = 0; k < 60000; k++) /* string users: the id arena grows too */
        sb_printf(&a, "u%d,%d,%d,%d\n", k / 30, (int)(rk_test_rand(&seed) % 3000), k % 5 + 1, k);
    write_file(path, a.s);
    write_file(tpath, "user,item,rating,time\nu1,2,3,4\n");
    rk_load_opts o;
    rk_dataset dm, df;
    rk_error e;
    rk_load_opts_default(&o);
    o.threads = 2;
    o.want_time = 1;
    o.chunk_bytes = 65536;
    const char *p = path;
    CU_ASSERT_EQUAL_FATAL(rk_load_dataset(&p, 1, NULL, &o, &dm, &e), RK_OK);
    char *want = render(&dm, &dm.train);
    int fails = 0, loads = 0;
    size_t first_ok = 0;
    for (size_t lim = (size_t)64 << 10; lim <= ((size_t)64 << 20); lim *= 2) {
        o.mem_limit = lim;
        const rk_status st = rk_load_dataset(&p, 1, NULL, &o, &df, &e);
        if (st == RK_OK) {
            char *got = render(&df, &df.train);
            CU_ASSERT_STRING_EQUAL(got, want);
            free(got);
            rk_dataset_free(&df);
            loads++;
            if (first_ok == 0) first_ok = lim;
        } else {
            CU_ASSERT_EQUAL(st, RK_E_NOMEM);
            CU_ASSERT(starts_with(e.msg, path) && e.msg[strlen(path)] == ':');
            CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "raise --memory-limit"));
            CU_ASSERT_EQUAL(first_ok, 0); /* a larger budget never fails where a smaller one loaded */
            CU_ASSERT_PTR_NULL(df.users);
            fails++;
        }
    }
    CU_ASSERT(fails >= 3);
    CU_ASSERT(loads >= 2);
    /* the training rows fill the budget: the test file is the one that stops */
    o.mem_limit = first_ok;
    const rk_status st = rk_load_dataset(&p, 1, tpath, &o, &df, &e);
    if (st != RK_OK) {
        CU_ASSERT_EQUAL(st, RK_E_NOMEM);
        CU_ASSERT(starts_with(e.msg, tpath));
    } else {
        rk_dataset_free(&df);
    }
    o.mem_limit = 4 * first_ok;
    CU_ASSERT_EQUAL(rk_load_dataset(&p, 1, tpath, &o, &df, &e), RK_OK);
    CU_ASSERT_EQUAL(df.test.n, 1);
    rk_dataset_free(&df);
    free(want);
    rk_dataset_free(&dm);
    unlink(path);
    unlink(tpath);
    rmdir(dir);
    free(a.s);
}

/* Rows sized from a file's first bytes (rk_rows_presize): an estimate that
 * falls short (long lines first, then short ones) and one far too large
 * (short, then long) load what the same bytes load from memory, where
 * nothing is presized; a --test file is sized too. */
static void test_presized_rows(void)
{
    char dir[] = "/tmp/rk_test_presize_XXXXXX", path[600], tpath[600];
    temp_pair(dir, "r.csv", path, "t.csv", tpath, sizeof path);
    unsigned long long seed = 11;
    for (int order = 0; order < 2; order++) {
        sbuf a = {calloc(1, 64), 0, 64};
        for (int part = 0; part < 2; part++) {
            const int lng = part == order; /* the long lines: 45 bytes, well past the 4 MB sample */
            for (int k = 0; k < (lng ? 120000 : 900000); k++) {
                const int u = (int)(rk_test_rand(&seed) % 5000), i = (int)(rk_test_rand(&seed) % 3000);
                if (lng) sb_printf(&a, "%d,%d,%d.5,1234567890123456\n", 100000000 + u, 100000000 + i, k % 5);
                else sb_printf(&a, "%d,%d,%d,1\n", u, i, 1 + k % 5);
            }
        }
        write_file(path, a.s);
        write_file(tpath, "7,8,3\n9,10,4\n");
        rk_load_opts o;
        rk_dataset dm, df;
        rk_error e;
        rk_load_opts_default(&o);
        rk_status st = rk_load_buffer("m", a.s, a.n, &o, &dm, &e);
        if (st != RK_OK) fprintf(stderr, "\n%s\n", e.msg);
        CU_ASSERT_EQUAL_FATAL(st, RK_OK);
        char *want = render(&dm, &dm.train);
        const char *p = path;
        CU_ASSERT_EQUAL_FATAL(rk_load_dataset(&p, 1, tpath, &o, &df, &e), RK_OK);
        char *got = render(&df, &df.train);
        CU_ASSERT_STRING_EQUAL(got, want);
        CU_ASSERT_EQUAL(df.train.n, 1020000);
        CU_ASSERT_EQUAL(df.test.n, 2);
        free(got);
        free(want);
        rk_dataset_free(&df);
        rk_dataset_free(&dm);
        free(a.s);
    }
    /* the estimate itself: a tenth over the sample's lines; nothing when rows
     * are there already or the sample holds too few lines */
    rk_rows r;
    memset(&r, 0, sizeof r);
    const char *sample = "1,2,3\n1,2,3\n1,2,3\n1,2,3\n1,2,3\n1,2,3\n1,2,3\n1,2,3\n"
                         "1,2,3\n1,2,3\n1,2,3\n1,2,3\n1,2,3\n1,2,3\n1,2,3\n1,2,3\n";
    CU_ASSERT_EQUAL(rk_rows_presize(&r, sample, 6 * 15, 6e6, 0), 0); /* 15 lines */
    CU_ASSERT_EQUAL(rk_rows_presize(&r, sample, strlen(sample), 6e6, 1), 1);
    CU_ASSERT(r.cap >= 1100000 && r.cap <= 1100000 + 1024);
    CU_ASSERT_PTR_NOT_NULL(r.t);
    CU_ASSERT_EQUAL(rk_rows_presize(&r, sample, strlen(sample), 6e9, 0), 0);
    rk_rows_free(&r);
    unlink(path);
    unlink(tpath);
    rmdir(dir);
}

/* ---- two chunks in one loop --------------------------------------------------------- */

/* A random line: mostly plain, else one the fast path leaves to libcsv
 * (quotes, string ids, bad ratings, blank lines, a lone CR making two rows
 * of one line, a row missing a field). */
static void pair_line(sbuf *b, unsigned long long *seed, int plain_only)
{
    const unsigned what = plain_only ? 99 : (unsigned)(rk_test_rand(seed) % 40);
    const unsigned u = (unsigned)(rk_test_rand(seed) % 100000), i = (unsigned)(rk_test_rand(seed) % 30000);
    switch (what) {
    case 0: sb_printf(b, "\"%u\",%u,3.5,1\n", u, i); break;
    case 1: sb_printf(b, "u%u,%u,2,7\n", u, i); break;
    case 2: sb_printf(b, "%u,%u,x,1\n", u, i); break;
    case 3: sb_printf(b, "\n"); break;
    case 4: sb_printf(b, "%u,%u,4,1\r%u,%u,5,2\n", u, i, i, u); break;
    case 5: sb_printf(b, "%u,%u,1\n", u, i); break;
    case 6: sb_printf(b, "%u,%u,4.5,1\r\n", u, i); break;
    default: sb_printf(b, "%u,%u,%u.%u,%u\n", u, i, (unsigned)(rk_test_rand(seed) % 5),
                       (unsigned)(rk_test_rand(seed) % 10), (unsigned)(rk_test_rand(seed) % 2000000000));
    }
}

/* What parsing left in chunk c, as text (string ids by their arena offset). */
static char *chunk_text(const rk_chunk *c)
{
    sbuf t = {calloc(1, 64), 0, 64};
    sb_printf(&t, "n %lld spilled %d status %d bad %lld kept %d open %lld %lld reason %s\n", (long long)c->n,
              c->spilled, (int)c->status, (long long)c->nbad, c->nbad_kept, (long long)c->open_at,
              (long long)c->open_lines, c->reason);
    for (int k = 0; k < c->nbad_kept; k++) sb_printf(&t, "bad %lld\n", (long long)c->bad[k]);
    for (int64_t k = 0; k < c->n; k++)
        sb_printf(&t, "%s%lld,%s%lld,%g,%lld\n", c->utag != NULL && c->utag[k] ? "s" : "", (long long)c->u[k],
                  c->itag != NULL && c->itag[k] ? "s" : "", (long long)c->i[k], (double)c->r[k],
                  c->t != NULL ? (long long)c->t[k] : -1LL);
    if (c->own.alen > 0) sb_printf(&t, "arena %zu %.*s\n", c->own.alen, (int)c->own.alen, c->own.arena);
    return t.s;
}

/* Two chunks of buf (split at `at`, a line's start) parsed alone or as a
 * pair, as rk_load.c sets them up: rows in home's arrays from base, room
 * for their lines. */
static void parse_two(const rk_fmt *f, const char *buf, size_t len, size_t at, int pair, char *text[2])
{
    rk_rows home;
    rk_chunk c[2];
    memset(&home, 0, sizeof home);
    memset(c, 0, sizeof c);
    int64_t slots = 0;
    for (int k = 0; k < 2; k++) {
        c[k].p = buf + (k == 0 ? 0 : at);
        c[k].len = k == 0 ? at : len - at;
        c[k].lines = 0;
        for (size_t j = 0; j < c[k].len; j++) c[k].lines += c[k].p[j] == '\n';
        c[k].lines += c[k].len > 0 && c[k].p[c[k].len - 1] != '\n';
        c[k].home = &home;
        c[k].base = slots;
        c[k].room = c[k].lines;
        slots += c[k].lines;
    }
    CU_ASSERT_FATAL(rk_rows_reserve(&home, slots > 0 ? slots : 1, f->want_time) == 0);
    if (pair) {
        rk_parse_chunk_pair(f, &c[0], &c[1]);
    } else {
        rk_parse_chunk(f, &c[0]);
        rk_parse_chunk(f, &c[1]);
    }
    for (int k = 0; k < 2; k++) {
        text[k] = chunk_text(&c[k]);
        rk_chunk_free(&c[k]);
    }
    rk_rows_free(&home);
}

/* rk_parse_chunk_pair gives each chunk what rk_parse_chunk gives it: both
 * chunks plain, one stopping early (a line the fast path refuses, a lone CR
 * filling its room), one empty, with and without the time, plain runs of
 * unequal length so that either stream ends first. */
static void test_chunk_pair(void)
{
    unsigned long long seed = 5;
    int cases = 0, differ = 0;
    for (int round = 0; round < 400; round++) {
        rk_fmt f;
        memset(&f, 0, sizeof f);
        f.format = RK_FMT_MOVIELENS;
        f.delim = ',';
        f.nfields = 4;
        f.cu = 0, f.ci = 1, f.cr = 2, f.ct = 3;
        f.want_time = (int)(rk_test_rand(&seed) % 2);
        f.fast = rk_fast_layout(&f);
        CU_ASSERT_TRUE_FATAL(f.fast);
        sbuf b = {calloc(1, 64), 0, 64};
        const int n0 = (int)(rk_test_rand(&seed) % 60), n1 = (int)(rk_test_rand(&seed) % 60);
        const int plain = round % 4 == 0; /* a quarter of the rounds: every line plain */
        for (int k = 0; k < n0; k++) pair_line(&b, &seed, plain);
        const size_t at = b.n;
        for (int k = 0; k < n1; k++) pair_line(&b, &seed, plain);
        if (round % 7 == 0 && b.n > at && b.s[b.n - 1] == '\n') b.n--; /* the file's last line without its newline */
        char *alone[2], *paired[2];
        parse_two(&f, b.s, b.n, at, 0, alone);
        parse_two(&f, b.s, b.n, at, 1, paired);
        for (int k = 0; k < 2; k++) {
            cases++;
            if (strcmp(alone[k], paired[k]) != 0 && differ++ < 3)
                fprintf(stderr, "\nchunk %d of round %d:\nalone:\n%s\npaired:\n%s\n", k, round, alone[k], paired[k]);
            free(alone[k]);
            free(paired[k]);
        }
        free(b.s);
    }
    CU_ASSERT_EQUAL(differ, 0);
    CU_ASSERT_EQUAL(cases, 800);
}

/* ---- the rows' reader beside the parse (rk_rows_feed) ------------------------------ */

typedef struct feed_log {
    const int64_t *u, *i;
    const float *r;
    int64_t to;           /* rows handed so far */
    int calls, holds, releases, done, bad; /* bad: a call out of order, or after hold */
    int64_t *cu, *ci;     /* the values as handed */
    float *cr;
    int64_t cap;
} feed_log;

static void feed_ready_cb(void *ud, const int64_t *u, const int64_t *i, const float *r, int64_t cap, int64_t from,
                          int64_t to)
{
    feed_log *f = ud;
    if (f->holds > 0 || from != f->to || to <= from || to > cap ||
        (f->calls > 0 && (u != f->u || i != f->i || r != f->r)))
        f->bad++;
    f->u = u, f->i = i, f->r = r;
    f->calls++;
    if (to > f->cap) {
        f->cap = 2 * to;
        f->cu = realloc(f->cu, (size_t)f->cap * sizeof *f->cu);
        f->ci = realloc(f->ci, (size_t)f->cap * sizeof *f->ci);
        f->cr = realloc(f->cr, (size_t)f->cap * sizeof *f->cr);
    }
    for (int64_t k = from; k < to; k++) f->cu[k] = u[k], f->ci[k] = i[k], f->cr[k] = r[k];
    f->to = to;
}

static void feed_hold_cb(void *ud, int done)
{
    feed_log *f = ud;
    f->holds++;
    f->done = done;
}

static void feed_release_cb(void *ud)
{
    feed_log *f = ud;
    f->bad += f->holds == 0; /* let go of only after a hold */
    f->releases++;
}

/* Loads path with a reader; @return what it saw, checked against the data set. */
static feed_log load_fed(const char *const *paths, int n, size_t chunk, rk_dataset *d)
{
    feed_log f;
    memset(&f, 0, sizeof f);
    rk_load_opts o;
    rk_error e;
    rk_load_opts_default(&o);
    o.chunk_bytes = chunk;
    o.threads = 2;
    o.skip_bad_lines = 1;
    o.feed = (rk_rows_feed){feed_ready_cb, feed_hold_cb, feed_release_cb, &f};
    rk_status st = rk_load_dataset(paths, n, NULL, &o, d, &e);
    if (st != RK_OK) fprintf(stderr, "\n%s\n", e.msg);
    CU_ASSERT_EQUAL_FATAL(st, RK_OK);
    CU_ASSERT_EQUAL(f.holds, 1);
    CU_ASSERT_TRUE(f.releases >= 1); /* before the rows were cut or freed */
    CU_ASSERT_EQUAL(f.bad, 0);
    if (f.done) CU_ASSERT_EQUAL(f.to, d->train.n);
    int same = 1;
    char b[RK_ID_MAX + 1];
    for (int64_t k = 0; k < f.to && same; k++) { /* what was handed is what the load made of the rows */
        rk_ids_format(d->users, d->train.user[k], b, sizeof b);
        same &= strtoll(b, NULL, 10) == f.cu[k];
        rk_ids_format(d->items, d->train.item[k], b, sizeof b);
        same &= strtoll(b, NULL, 10) == f.ci[k] && d->train.rating[k] == f.cr[k];
    }
    CU_ASSERT_TRUE(same);
    free(f.cu);
    free(f.ci);
    free(f.cr);
    return f;
}

/* The rows handed block by block while later ones are parsed, all of them
 * for one file of integer ids (csv with bad lines, netflix); a string id,
 * or two files (rows that grow), stop the handing with hold(0). */
static void test_rows_feed(void)
{
    char dir[] = "/tmp/rk_test_feed_XXXXXX", path[600], path2[600];
    temp_pair(dir, "r.csv", path, "n.txt", path2, sizeof path);
    unsigned long long seed = 21;
    for (int form = 0; form < 3; form++) {
        sbuf a = {calloc(1, 64), 0, 64};
        for (int k = 0; k < 60000; k++) {
            const int u = (int)(rk_test_rand(&seed) % 900), i = (int)(rk_test_rand(&seed) % 400) - 50;
            if (form == 1 && k % 700 == 0) sb_printf(&a, "%d:\n", i); /* netflix: a movie's line */
            else if (form == 1) sb_printf(&a, "%d,%d.0,2005-09-06\n", u, 1 + k % 5);
            else if (form == 2 && k == 40000) sb_printf(&a, "u%d,%d,3\n", u, i); /* a string id */
            else if (k % 997 == 5) sb_printf(&a, "%d,%d,x\n", u, i);            /* a bad line, skipped */
            else sb_printf(&a, "%d,%d,%d.5\n", u, i, k % 5);
        }
        const char *p = form == 1 ? path2 : path;
        write_file(p, a.s);
        rk_dataset d;
        feed_log f = load_fed(&p, 1, 4000, &d);
        CU_ASSERT_EQUAL(f.done, form != 2);
        CU_ASSERT_TRUE(f.calls > 3); /* block by block */
        if (form == 2) CU_ASSERT_TRUE(f.to > 0 && f.to < d.train.n);
        rk_dataset_free(&d);
        free(a.s);
    }
    const char *two[2] = {path, path};
    rk_dataset d;
    feed_log f = load_fed(two, 2, 4000, &d);
    CU_ASSERT_EQUAL(f.done, 0);
    rk_dataset_free(&d);
    unlink(path);
    unlink(path2);
    rmdir(dir);
}

/* ---- several files, directories, test files, stdin --------------------------------- */
int main(void)
{
    static const rk_test_case cases[] = {
        {"id ranges checked from here", ranges_check_from_here},
        {"bad line in a later chunk", test_bad_later_chunk},
        {"every chunk size, csv", test_chunks_csv},
        {"every chunk size, netflix", test_chunks_netflix},
        {"files in small blocks", test_blocks_from_files},
        {"a file in parallel pread pieces", test_big_file},
        {"a memory budget", test_memory_budget},
        {"rows sized from the first bytes", test_presized_rows},
        {"two chunks in one loop: each as alone", test_chunk_pair},
        {"the rows handed to a reader beside the parse", test_rows_feed},
        {"the loader's id ranges were right", ranges_were_right},
        {NULL, NULL},
    };
    return rk_test_main("load in pieces", cases);
}
