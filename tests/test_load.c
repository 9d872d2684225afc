/* Unit tests of the loader (etl/rk_load.c, rk_detect.c, rk_parse.c): every
 * format from buffers and fixture files, bad lines in strict and skip mode,
 * directories and file lists, stdin, the number parsers (chunk sizes and
 * pieces: test_load_chunks.c). */
#define _POSIX_C_SOURCE 200809L
#include "test_load_util.h"

static void test_movielens_buffer(void)
{
    rk_load_opts o;
    rk_load_opts_default(&o);
    check_buf("userId,movieId,rating,timestamp\r\n1,10,4.0,964982703\r\n1,2,3.5,964981247\r\n",
              &o, "1,10,4\n1,2,3.5\n", 3);
    o.want_time = 1;
    check_buf("userId,movieId,rating,timestamp\n1,10,4.0,964982703\n2,2,3.5,964981247",
              &o, "1,10,4,964982703\n2,2,3.5,964981247\n", 3);
    /* blank lines, CRLF and a missing last newline */
    o.want_time = 0;
    /* a byte order mark, with and without a header */
    check_buf("\xEF\xBB\xBFuserId,movieId,rating,timestamp\n1,10,4.0,1\n", &o, "1,10,4\n", 2);
    check_buf("\xEF\xBB\xBF" "1,10,4.0,1\n", &o, "1,10,4\n", 1);
    check_buf("\r\nuserId,movieId,rating,timestamp\r\n\r\n1,1,1.5,1\r\n\n   \r\n2,1,2,2", &o,
              "1,1,1.5\n2,1,2\n", 7);
}

static void test_formats_buffer(void)
{
    rk_load_opts o;
    rk_load_opts_default(&o);
    check_buf("1::1193::5::978300760\n1::661::3::978302109\n", &o, "1,1193,5\n1,661,3\n", 2);
    check_buf("196\t242\t3\t881250949\n186\t302\t3\t881250949\n", &o, "196,242,3\n186,302,3\n", 2);
    check_buf("1:\n10,3,2005-09-06\n11,4,2005-09-07\n2:\r\n10,1,2005-09-08\r\n", &o,
              "10,1,3\n11,1,4\n10,2,1\n", 5);
    check_buf("1,2,3\n2,3,4.5\n", &o, "1,2,3\n2,3,4.5\n", 2);
    check_buf("1;2;3\n2;3;4.5\n", &o, "1,2,3\n2,3,4.5\n", 2);
    check_buf("1 2 3\n2  3 4.5 \n", &o, "1,2,3\n2,3,4.5\n", 2);
    /* quoted fields, a header of quoted names */
    check_buf("\"u\",\"i\",\"r\"\n\"1\",\"2\",\"3.5\"\n\"a,b\",\"x \"\"y\"\"\",\"4\"\n", &o,
              "1,2,3.5\na,b,x \"y\",4\n", 3);
    /* netflix dates become Unix seconds */
    o.want_time = 1;
    check_buf("7:\n1,3,1970-01-02\n2,4,2000-02-29\n", &o, "1,7,3,86400\n2,7,4,951782400\n", 3);
    o.want_time = 0;
    /* forced formats; tsv and dat have no header line */
    o.format = RK_FMT_TSV;
    check_buf("1\t2\t3\t4\n", &o, "1,2,3\n", 1);
    {
        rk_dataset d;
        rk_error e;
        CU_ASSERT_EQUAL(rk_load_buffer("t", "u\ti\tr\tt\n1\t2\t3\t4\n", 16, &o, &d, &e), RK_E_PARSE);
        CU_ASSERT_STRING_EQUAL(e.msg, "t:1: rating is not a number: \"r\"");
        o.header = 1;
        check_buf("u\ti\tr\tt\n1\t2\t3\t4\n", &o, "1,2,3\n", 2);
        o.header = -1;
    }
    o.format = RK_FMT_MOVIELENS;
    check_buf("1,2,3,4\n", &o, "1,2,3\n", 1);
}

static void test_detect_report(void)
{
    static const struct {
        const char *buf;
        rk_format fmt;
        char delim;
    } cases[] = {
        {"userId,movieId,rating,timestamp\n1,1,1,1\n", RK_FMT_MOVIELENS, ','},
        {"1::2::3::4\n", RK_FMT_DAT, ':'},
        {"1\t2\t3\t4\n", RK_FMT_TSV, '\t'},
        {"1\t2\t3\n", RK_FMT_CSV, '\t'},
        {"user\titem\trating\tt\n1\t2\t3\t4\n", RK_FMT_CSV, '\t'},
        {"12:\n1,2,2005-01-01\n", RK_FMT_NETFLIX, ','},
        {"1,2,3\n", RK_FMT_CSV, ','},
        {"1|2|3\n", RK_FMT_CSV, '|'},
        {"1 2 3\n", RK_FMT_CSV, ' '},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        rk_load_opts o;
        rk_dataset d;
        rk_error e;
        rk_load_opts_default(&o);
        CU_ASSERT_EQUAL_FATAL(rk_load_buffer("b", cases[k].buf, strlen(cases[k].buf), &o, &d, &e), RK_OK);
        CU_ASSERT_EQUAL(d.train_report.format, cases[k].fmt);
        CU_ASSERT_EQUAL(d.train_report.delimiter, cases[k].delim);
        CU_ASSERT_EQUAL(d.train.n, 1);
        rk_dataset_free(&d);
    }
}

static void test_header_and_columns(void)
{
    rk_load_opts o;
    rk_load_opts_default(&o);
    /* a header is guessed from a rating field that is not a number; one
     * of names recknn does not know is refused, not read by position */
    check_buf("u,i,r\n1,2,3\n", &o, "1,2,3\n", 2);
    {
        rk_dataset d;
        rk_error e;
        CU_ASSERT_EQUAL(rk_load_buffer("h", "a,b,c\n1,2,3\n", 12, &o, &d, &e), RK_E_ARG);
        CU_ASSERT_STRING_EQUAL(e.msg, "h: the header \"a,b,c\" names no user column recknn knows; give --columns "
                                      "USER,ITEM,RATING[,TIME] with its names or 1-based positions");
    }
    o.header = 0; /* no header: the first line is a (bad) data line */
    {
        rk_dataset d;
        rk_error e;
        CU_ASSERT_EQUAL(rk_load_buffer("h", "a,b,c\n1,2,3\n", 12, &o, &d, &e), RK_E_PARSE);
        CU_ASSERT_STRING_EQUAL(e.msg, "h:1: rating is not a number: \"c\"");
    }
    o.header = 1; /* a numeric first line taken as the header: by position with --columns */
    o.columns = "1,2,3";
    check_buf("1,2,3\n4,5,6\n", &o, "4,5,6\n", 2);
    o.columns = NULL;
    o.header = -1;
    /* columns by position, and a header line with them */
    o.columns = "2,1,4";
    check_buf("1,2,x,3.5\n5,6,y,1\n", &o, "2,1,3.5\n6,5,1\n", 2);
    check_buf("a,b,c,d\n1,2,x,3.5\n", &o, "2,1,3.5\n", 2);
    /* by header name, in any order; names fold case and '_' */
    o.columns = "User_ID,item,rating,time";
    o.want_time = 1;
    check_buf("time;rating;item;userid;x\n5;4.5;i1;u1;q\n6;2;i2;u1;q\n", &o, "u1,i1,4.5,5\nu1,i2,2,6\n", 3);
    o.want_time = 0;
    /* no --columns: known header names are used even with 5 fields */
    o.columns = NULL;
    check_buf("x,rating,movieId,userId,timestamp\n0,4,10,1,5\n", &o, "1,10,4\n", 2);
    /* 4 fields: the 4th is the time */
    o.want_time = 1;
    check_buf("1,2,3,77\n", &o, "1,2,3,77\n", 1);
    check_buf("1,2,3\n", &o, "1,2,3,0\n", 1);
}

static void test_option_errors(void)
{
    rk_load_opts o;
    rk_dataset d;
    rk_error e;
    const char *six = "1,10,3,100,4,2010-01-02\n2,11,3,101,5,2011-02-03\n";
    rk_load_opts_default(&o);
    CU_ASSERT_EQUAL(rk_load_buffer("six", six, strlen(six), &o, &d, &e), RK_E_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "--columns"));
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "6 fields"));
    o.columns = "1,2";
    CU_ASSERT_EQUAL(rk_load_buffer("six", six, strlen(six), &o, &d, &e), RK_E_ARG);
    o.columns = "1,1,5";
    CU_ASSERT_EQUAL(rk_load_buffer("six", six, strlen(six), &o, &d, &e), RK_E_ARG);
    o.columns = "user,item,rating";
    CU_ASSERT_EQUAL(rk_load_buffer("six", "user,item,score\n1,2,3\n", 22, &o, &d, &e), RK_E_ARG);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "rating"));
    o.header = 0;
    CU_ASSERT_EQUAL(rk_load_buffer("six", six, strlen(six), &o, &d, &e), RK_E_ARG);
    rk_load_opts_default(&o);
    o.format = RK_FMT_TSV;
    o.delimiter = ',';
    CU_ASSERT_EQUAL(rk_load_buffer("six", six, strlen(six), &o, &d, &e), RK_E_ARG);
    rk_load_opts_default(&o);
    o.have_scale = 1;
    o.scale_min = 5;
    o.scale_max = 1;
    CU_ASSERT_EQUAL(rk_load_buffer("six", six, strlen(six), &o, &d, &e), RK_E_ARG);
    rk_format f;
    CU_ASSERT_EQUAL(rk_format_parse("netflix", &f), RK_OK);
    CU_ASSERT_EQUAL(f, RK_FMT_NETFLIX);
    CU_ASSERT_EQUAL(rk_format_parse("xml", &f), RK_E_ARG);
    for (int k = RK_FMT_AUTO; k <= RK_FMT_CSV; k++) {
        CU_ASSERT_EQUAL(rk_format_parse(rk_format_name((rk_format)k), &f), RK_OK);
        CU_ASSERT_EQUAL(f, (rk_format)k);
    }
}

static void test_empty(void)
{
    rk_load_opts o;
    rk_dataset d;
    rk_error e;
    rk_load_opts_default(&o);
    CU_ASSERT_EQUAL(rk_load_buffer("e", "", 0, &o, &d, &e), RK_E_EMPTY);
    CU_ASSERT_EQUAL(rk_load_buffer("e", "\n\n", 2, &o, &d, &e), RK_E_EMPTY);
    CU_ASSERT_EQUAL(rk_load_buffer("e", "userId,movieId,rating,timestamp\n", 32, &o, &d, &e), RK_E_EMPTY);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "e:"));
    o.skip_bad_lines = 1;
    CU_ASSERT_EQUAL(rk_load_buffer("e", "a,b\n", 4, &o, &d, &e), RK_E_EMPTY);
}

/* ---- fixture files ------------------------------------------------------------- */

static void test_fixture_files(void)
{
    rk_load_opts o;
    rk_load_opts_default(&o);
    check_file(fixture("fmt/ml_crlf.csv"), &o, "1,10,4\n1,2,3.5\n2,10,0.5\n10,7,5\n", RK_FMT_MOVIELENS);
    check_file(fixture("fmt/quoted.csv"), &o, "1,2,3.5\na b,x,y,4\n1,x,y,2.5\n", RK_FMT_CSV);
    check_file(fixture("fmt/ratings.dat"), &o, "1,1193,5\n1,661,3\n2,1193,4\n", RK_FMT_DAT);
    check_file(fixture("fmt/u.tsv"), &o, "196,242,3\n186,302,3\n22,377,1\n", RK_FMT_TSV);
    check_file(fixture("fmt/space.txt"), &o, "1,1,2\n1,2,4\n2,1,3.5\n3,3,0.5\n", RK_FMT_CSV);
    check_file(fixture("fmt/named.csv"), &o, "u1,i1,4.5\nu1,i2,2\nu2,i1,3\n", RK_FMT_CSV);
    o.delimiter = ' ';
    check_file(fixture("fmt/space.txt"), &o, "1,1,2\n1,2,4\n2,1,3.5\n3,3,0.5\n", RK_FMT_CSV);
    o.delimiter = 0;
    o.want_time = 1;
    check_file(fixture("fmt/netflix.txt"), &o,
               "1488844,1,3,1125964800\n822109,1,5,1115942400\n2059652,2,4,1125878400\n"
               "1488844,2,4,1113868800\n822109,3,1,1118880000\n",
               RK_FMT_NETFLIX);
    o.columns = "1,2,5,6";
    check_file(fixture("fmt/ciao6.csv"), &o, "1,10,4,1262390400\n2,11,5,1296691200\n1,11,2,1330819200\n",
               RK_FMT_CSV);
    o.want_time = 0;
    o.columns = "1,2,5";
    check_file(fixture("fmt/ciao6.csv"), &o, "1,10,4\n2,11,5\n1,11,2\n", RK_FMT_CSV);

    /* the report */
    const char *p = fixture("fmt/ml_crlf.csv");
    rk_dataset d;
    rk_error e;
    rk_load_opts_default(&o);
    CU_ASSERT_EQUAL_FATAL(rk_load_dataset(&p, 1, NULL, &o, &d, &e), RK_OK);
    CU_ASSERT_EQUAL(d.train_report.lines, 6);
    CU_ASSERT_EQUAL(d.train_report.ratings, 4);
    CU_ASSERT_EQUAL(d.train_report.bytes, 114);
    CU_ASSERT_EQUAL(d.train_report.skipped_lines, 0);
    CU_ASSERT_EQUAL(d.test.n, 0);
    CU_ASSERT_PTR_NULL(d.train.time);
    rk_dataset_free(&d);
}

static void test_io_errors(void)
{
    rk_load_opts o;
    rk_load_opts_default(&o);
    const char *m = load_fail("/nonexistent-dir/ratings.csv", &o, RK_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(m, "/nonexistent-dir/ratings.csv"));
    CU_ASSERT_PTR_NOT_NULL(strstr(m, strerror(ENOENT)));
    /* a good training file with a missing test file */
    const char *p = fixture("fmt/u.tsv");
    rk_dataset d;
    rk_error e;
    CU_ASSERT_EQUAL(rk_load_dataset(&p, 1, "/nonexistent-test.csv", &o, &d, &e), RK_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.msg, "/nonexistent-test.csv"));
    CU_ASSERT_PTR_NULL(d.users);
}

/* ---- bad lines ------------------------------------------------------------------ */

static void test_bad_strict(void)
{
    static const struct {
        const char *file;
        int line;
        const char *reason;
    } cases[] = {
        {"bad/fields.csv", 3, "expected 4 fields, found 3"},
        {"bad/notnum.csv", 4, "rating is not a number: \"abc\""},
        {"bad/nan.csv", 3, "rating is not finite: \"nan\""},
        {"bad/inf.csv", 3, "rating is not finite: \"-inf\""},
        {"bad/huge.csv", 4, "rating is not finite: \"1e999\""},
        {"bad/emptyid.csv", 3, "empty user id"},
        {"bad/longid.csv", 3, "item id longer than 255 bytes"},
        {"bad/quote_open.csv", 3, "a quoted field is not closed at the end of the file"},
        {"bad/dat_odd.dat", 2, "expected user::item::rating::timestamp"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        rk_load_opts o;
        char want[1200];
        rk_load_opts_default(&o);
        const char *path = fixture(cases[k].file);
        const char *m = load_fail(path, &o, RK_E_PARSE);
        snprintf(want, sizeof want, "%s:%d: %s", path, cases[k].line, cases[k].reason);
        if (!starts_with(m, want)) fprintf(stderr, "\ngot  %s\nwant %s\n", m, want);
        CU_ASSERT_TRUE(starts_with(m, want));
    }
    /* the rating scale */
    rk_load_opts o;
    rk_dataset d;
    rk_error e;
    rk_load_opts_default(&o);
    o.have_scale = 1;
    o.scale_min = 1;
    o.scale_max = 5;
    const char *b = "1,1,1\n1,2,5\n1,3,5.5\n";
    CU_ASSERT_EQUAL(rk_load_buffer("scale.csv", b, strlen(b), &o, &d, &e), RK_E_PARSE);
    CU_ASSERT_STRING_EQUAL(e.msg, "scale.csv:3: rating 5.5 is outside the rating scale 1:5");
    /* netflix: a rating before any movie, a malformed movie line */
    rk_load_opts_default(&o);
    o.format = RK_FMT_NETFLIX;
    const char *path = fixture("bad/netflix_orphan.txt");
    char want[1200];
    snprintf(want, sizeof want, "%s:1: rating line before any MOVIEID: line", path);
    CU_ASSERT_STRING_EQUAL(load_fail(path, &o, RK_E_PARSE), want);
    b = "1:\n5,3,2005-01-01\n:\n6,3,2005-01-01\n";
    CU_ASSERT_EQUAL(rk_load_buffer("nf", b, strlen(b), &o, &d, &e), RK_E_PARSE);
    CU_ASSERT_STRING_EQUAL(e.msg, "nf:3: empty movie id");
    b = "1:\n5,3,2005-01-01\n5,3\n";
    CU_ASSERT_EQUAL(rk_load_buffer("nf", b, strlen(b), &o, &d, &e), RK_E_PARSE);
    CU_ASSERT_TRUE(starts_with(e.msg, "nf:3: expected \"MOVIEID:\" or CustomerID,Rating,Date"));
    /* a bad time only matters when times are kept */
    rk_load_opts_default(&o);
    b = "1,1,1,x\n";
    CU_ASSERT_EQUAL(rk_load_buffer("t", b, strlen(b), &o, &d, &e), RK_OK);
    rk_dataset_free(&d);
    o.want_time = 1;
    CU_ASSERT_EQUAL(rk_load_buffer("t", b, strlen(b), &o, &d, &e), RK_E_PARSE);
    CU_ASSERT_STRING_EQUAL(e.msg, "t:1: time is not an integer or a YYYY-MM-DD date: \"x\"");
}

static void test_bad_skip(void)
{
    rk_load_opts o;
    rk_dataset d;
    rk_error e;
    rk_load_opts_default(&o);
    o.skip_bad_lines = 1;
    /* a quote never closed: the rest of the file is that one bad row */
    const char *path = fixture("bad/quote_open.csv");
    CU_ASSERT_EQUAL_FATAL(rk_load_dataset(&path, 1, NULL, &o, &d, &e), RK_OK);
    char *got = render(&d, &d.train);
    expect_text(got, "1,1,4\n", path);
    free(got);
    CU_ASSERT_EQUAL(d.train_report.skipped_lines, 1);
    CU_ASSERT_EQUAL(d.train_report.n_bad_kept, 1);
    CU_ASSERT_EQUAL(d.train_report.bad[0].line, 3);
    CU_ASSERT_EQUAL(d.train_report.bad[0].file, 0);
    CU_ASSERT_TRUE(starts_with(d.train_report.first_bad_reason, "a quoted field is not closed"));
    CU_ASSERT_EQUAL(d.train_report.lines, 3);
    rk_dataset_free(&d);
    /* a line break inside a quoted id is part of the id (RFC 4180) */
    path = fixture("bad/quote_nl.csv");
    CU_ASSERT_EQUAL_FATAL(rk_load_dataset(&path, 1, NULL, &o, &d, &e), RK_OK);
    got = render(&d, &d.train);
    expect_text(got, "1,1,4\n1,2\n3,3\n2,2,2\n", path);
    free(got);
    CU_ASSERT_EQUAL(d.train_report.skipped_lines, 0);
    CU_ASSERT_EQUAL(d.train_report.lines, 5);
    rk_dataset_free(&d);

    /* many bad lines: all counted, the first RK_LOAD_BAD_KEPT kept */
    sbuf b = {calloc(1, 64), 0, 64};
    sb_printf(&b, "u,i,r\n");
    for (int k = 2; k <= 100; k++) {
        if (k % 7 == 0) sb_printf(&b, "%d,%d,bad\n", k, k);
        else if (k % 11 == 0) sb_printf(&b, "%d,%d\n", k, k);
        else sb_printf(&b, "%d,%d,%d\n", k, k, k % 5 + 1);
    }
    for (size_t cb = 0; cb < 200; cb += 13) {
        o.chunk_bytes = cb;
        o.threads = 2;
        CU_ASSERT_EQUAL_FATAL(rk_load_buffer("m", b.s, b.n, &o, &d, &e), RK_OK);
        int64_t want_bad = 0, kept = 0;
        for (int k = 2; k <= 100; k++)
            if (k % 7 == 0 || k % 11 == 0) {
                if (kept < RK_LOAD_BAD_KEPT) CU_ASSERT_EQUAL(d.train_report.bad[kept].line, k);
                kept++;
                want_bad++;
            }
        CU_ASSERT_EQUAL(d.train_report.skipped_lines, want_bad);
        CU_ASSERT_EQUAL(d.train_report.n_bad_kept, RK_LOAD_BAD_KEPT);
        CU_ASSERT_EQUAL(d.train.n, 99 - want_bad);
        CU_ASSERT_STRING_EQUAL(d.train_report.first_bad_reason, "rating is not a number: \"bad\"");
        rk_dataset_free(&d);
    }
    free(b.s);

    /* netflix orphans are skipped and counted in line order */
    rk_load_opts_default(&o);
    o.format = RK_FMT_NETFLIX;
    o.skip_bad_lines = 1;
    const char *nf = "1,2,3\nx\n2,3,2005-01-01\n4:\n5,3,2005-01-01\n";
    for (size_t cb = 0; cb <= strlen(nf); cb++) {
        o.chunk_bytes = cb;
        CU_ASSERT_EQUAL_FATAL(rk_load_buffer("nf", nf, strlen(nf), &o, &d, &e), RK_OK);
        CU_ASSERT_EQUAL(d.train.n, 1);
        CU_ASSERT_EQUAL(d.train_report.skipped_lines, 3);
        CU_ASSERT_EQUAL(d.train_report.n_bad_kept, 3);
        CU_ASSERT_EQUAL(d.train_report.bad[0].line, 1);
        CU_ASSERT_EQUAL(d.train_report.bad[1].line, 2);
        CU_ASSERT_EQUAL(d.train_report.bad[2].line, 3);
        CU_ASSERT_STRING_EQUAL(d.train_report.first_bad_reason, "rating line before any MOVIEID: line");
        rk_dataset_free(&d);
    }
}


static void test_netflix_dir(void)
{
    char dir[] = "/tmp/rk_test_nf_XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    char p[4][700], sub[700], hidden[700];
    const char *names[4] = {"mv_0000010.txt", "mv_0000002.txt", "mv_0000001.txt", "mv_0000003.txt"};
    const char *text[4] = {"10:\n1,1,2005-01-01\n2,2,2005-01-02\n", "2:\r\n3,3,2005-01-03\r\n",
                           "1:\n1,5,2005-01-04\n3,4,2005-01-05", "3:\n"};
    for (int k = 0; k < 4; k++) {
        snprintf(p[k], sizeof p[k], "%s/%s", dir, names[k]);
        write_file(p[k], text[k]);
    }
    snprintf(hidden, sizeof hidden, "%s/.hidden", dir);
    write_file(hidden, "garbage\n");
    snprintf(sub, sizeof sub, "%s/sub", dir);
    mkdir(sub, 0700);

    rk_load_opts o;
    rk_load_opts_default(&o);
    const char *want = "1,1,5\n3,1,4\n3,2,3\n1,10,1\n2,10,2\n";
    check_file(dir, &o, want, RK_FMT_NETFLIX);
    o.format = RK_FMT_NETFLIX;
    check_file(dir, &o, want, RK_FMT_NETFLIX);

    /* the same files given one by one, in the order given */
    const char *list[3] = {p[1], p[0], p[2]};
    rk_dataset d;
    rk_error e;
    CU_ASSERT_EQUAL_FATAL(rk_load_dataset(list, 3, NULL, &o, &d, &e), RK_OK);
    char *got = render(&d, &d.train);
    expect_text(got, "3,2,3\n1,10,1\n2,10,2\n1,1,5\n3,1,4\n", "file list");
    free(got);
    CU_ASSERT_EQUAL(d.train_report.lines, 3 + 2 + 3);
    rk_dataset_free(&d);

    /* a bad line names the file inside the directory */
    write_file(p[3], "3:\n4,x,2005-01-01\n");
    CU_ASSERT_EQUAL(rk_load_dataset((const char *const *)&(const char *){dir}, 1, NULL, &o, &d, &e), RK_E_PARSE);
    char w[800];
    snprintf(w, sizeof w, "%s/mv_0000003.txt:2: rating is not a number", dir);
    CU_ASSERT_TRUE(starts_with(e.msg, w));

    for (int k = 0; k < 4; k++) unlink(p[k]);
    unlink(hidden);
    rmdir(sub);
    /* an empty directory has no ratings */
    CU_ASSERT_EQUAL(rk_load_dataset((const char *const *)&(const char *){dir}, 1, NULL, &o, &d, &e), RK_E_EMPTY);
    rmdir(dir);
}

static void test_test_file(void)
{
    char dir[] = "/tmp/rk_test_tt_XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    char tr[700], te[700];
    snprintf(tr, sizeof tr, "%s/train.csv", dir);
    snprintf(te, sizeof te, "%s/test.tsv", dir);
    write_file(tr, "10,100,4\n2,20,3\n");
    write_file(te, "5\t100\t1\t0\n2\t7\t2\t0\n");
    rk_load_opts o;
    rk_dataset d;
    rk_error e;
    rk_load_opts_default(&o);
    const char *p = tr;
    CU_ASSERT_EQUAL_FATAL(rk_load_dataset(&p, 1, te, &o, &d, &e), RK_OK);
    CU_ASSERT_EQUAL(rk_ids_count(d.users), 3); /* 2 5 10 */
    CU_ASSERT_EQUAL(rk_ids_count(d.items), 3); /* 7 20 100 */
    CU_ASSERT_EQUAL(rk_ids_find(d.users, "5", 1), 1);
    CU_ASSERT_EQUAL(rk_ids_find(d.items, "7", 1), 0);
    CU_ASSERT_EQUAL(d.test.n, 2);
    CU_ASSERT_EQUAL(d.test.user[0], 1);
    CU_ASSERT_EQUAL(d.test.item[0], 2);
    CU_ASSERT_EQUAL(d.train.user[0], 2);
    CU_ASSERT_EQUAL(d.test_report.format, RK_FMT_TSV);
    CU_ASSERT_EQUAL(d.train_report.format, RK_FMT_CSV);
    char *got = render(&d, &d.test);
    expect_text(got, "5,100,1\n2,7,2\n", "test set");
    free(got);
    rk_dataset_free(&d);
    /* a string id in the test file makes the user map byte-ordered */
    write_file(te, "u9,100,1\n");
    CU_ASSERT_EQUAL_FATAL(rk_load_dataset(&p, 1, te, &o, &d, &e), RK_OK);
    CU_ASSERT_FALSE(rk_ids_numeric(d.users));
    CU_ASSERT_TRUE(rk_ids_numeric(d.items));
    CU_ASSERT_EQUAL(rk_ids_find(d.users, "10", 2), 0); /* "10" < "2" < "u9" */
    CU_ASSERT_EQUAL(rk_ids_find(d.users, "u9", 2), 2);
    rk_dataset_free(&d);
    write_file(te, "\n");
    CU_ASSERT_EQUAL(rk_load_dataset(&p, 1, te, &o, &d, &e), RK_E_EMPTY);
    unlink(tr);
    unlink(te);
    rmdir(dir);
}

static void test_stdin(void)
{
    const char *path = fixture("fmt/ratings.dat");
    int fd = open(path, O_RDONLY);
    CU_ASSERT_FATAL(fd >= 0);
    int saved = dup(STDIN_FILENO);
    dup2(fd, STDIN_FILENO);
    close(fd);
    rk_load_opts o;
    rk_dataset d;
    rk_error e;
    rk_load_opts_default(&o);
    o.chunk_bytes = 5;
    const char *dash = "-";
    rk_status s = rk_load_dataset(&dash, 1, NULL, &o, &d, &e);
    dup2(saved, STDIN_FILENO);
    close(saved);
    CU_ASSERT_EQUAL_FATAL(s, RK_OK);
    char *got = render(&d, &d.train);
    expect_text(got, "1,1193,5\n1,661,3\n2,1193,4\n", "stdin");
    free(got);
    CU_ASSERT_EQUAL(d.train_report.bytes, 65);
    rk_dataset_free(&d);
}

/* ---- progress ----------------------------------------------------------------------- */

typedef struct prog_log {
    int calls, bad;
    double last, total;
} prog_log;

static int on_progress(void *ud, const char *stage, double done, double total, const char *unit)
{
    prog_log *p = ud;
    if (strcmp(stage, "parse") != 0 || strcmp(unit, "bytes") != 0 || done < p->last || (total > 0 && done > total))
        p->bad = 1;
    p->calls++;
    p->last = done;
    p->total = total;
    return 0;
}

/* "parse" in bytes, never backwards, ending at the total: the buffer's
 * length, the files' sizes (training and test), or 0 for stdin. */
static void test_progress(void)
{
    sbuf a = {calloc(1, 64), 0, 64};
    unsigned long long seed = 11;
    for (int k = 0; k < 100000; k++)
        sb_printf(&a, "%d,%d,%d\n", k / 30, (int)(rk_test_rand(&seed) % 5000), k % 5 + 1);
    rk_load_opts o;
    rk_dataset d;
    rk_error e;
    prog_log pl = {0, 0, 0.0, 0.0};
    rk_load_opts_default(&o);
    o.progress = on_progress;
    o.progress_ud = &pl;
    o.threads = 2;
    o.chunk_bytes = 64 << 10;
    CU_ASSERT_EQUAL_FATAL(rk_load_buffer("p", a.s, a.n, &o, &d, &e), RK_OK);
    rk_dataset_free(&d);
    CU_ASSERT_FALSE(pl.bad);
    CU_ASSERT_EQUAL(pl.last, (double)a.n);
    CU_ASSERT_EQUAL(pl.total, (double)a.n);
    CU_ASSERT(pl.calls >= 2);
    CU_ASSERT(pl.calls <= 2 * (int)(a.n / (64 << 10) + 2)); /* per chunk at most, not per line */

    char dir[] = "/tmp/rk_test_prog_XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    char tr[600], te[600];
    snprintf(tr, sizeof tr, "%s/train.csv", dir);
    snprintf(te, sizeof te, "%s/test.csv", dir);
    write_file(tr, a.s);
    write_file(te, "userId,movieId,rating,timestamp\n1,2,3,4\n");
    const char *p = tr;
    memset(&pl, 0, sizeof pl);
    CU_ASSERT_EQUAL_FATAL(rk_load_dataset(&p, 1, te, &o, &d, &e), RK_OK);
    rk_dataset_free(&d);
    CU_ASSERT_FALSE(pl.bad);
    CU_ASSERT_EQUAL(pl.total, (double)a.n + 40.0);
    CU_ASSERT_EQUAL(pl.last, pl.total);

    /* standard input: the size is not known */
    int fd = open(te, O_RDONLY);
    CU_ASSERT_FATAL(fd >= 0);
    int saved = dup(STDIN_FILENO);
    dup2(fd, STDIN_FILENO);
    close(fd);
    const char *dash = "-";
    memset(&pl, 0, sizeof pl);
    rk_status s = rk_load_dataset(&dash, 1, NULL, &o, &d, &e);
    dup2(saved, STDIN_FILENO);
    close(saved);
    CU_ASSERT_EQUAL_FATAL(s, RK_OK);
    rk_dataset_free(&d);
    CU_ASSERT_FALSE(pl.bad);
    CU_ASSERT_EQUAL(pl.total, 0.0);
    CU_ASSERT_EQUAL(pl.last, 40.0);
    unlink(tr);
    unlink(te);
    rmdir(dir);
    free(a.s);
}

/* ---- numbers ------------------------------------------------------------------------ */

static void test_parse_rating(void)
{
    unsigned long long seed = 42;
    char s[64];
    for (int k = 0; k < 200000; k++) {
        int kind = (int)(rk_test_rand(&seed) % 6);
        unsigned long long a = rk_test_rand(&seed), b = rk_test_rand(&seed);
        switch (kind) {
        case 0: snprintf(s, sizeof s, "%llu.%llu", a % 10, b % 10); break;
        case 1: snprintf(s, sizeof s, "%llu.%0*llu", a % 100000, (int)(b % 12) + 1, b % 1000000000000ULL); break;
        case 2: snprintf(s, sizeof s, "-%llu.%llu", a % 9007199254740992ULL, b % 1000); break;
        case 3: snprintf(s, sizeof s, "0.%018llu", a % 1000000000000000000ULL); break;
        case 4: snprintf(s, sizeof s, "%llu", a); break; /* beyond 2^53: strtod */
        default: snprintf(s, sizeof s, "%.17g", rk_test_uniform(&seed) * 10.0); break;
        }
        double got = -1.0, want = strtod(s, NULL);
        CU_ASSERT_EQUAL_FATAL(rk_parse_rating(s, strlen(s), &got), 0);
        if (memcmp(&got, &want, sizeof got) != 0) fprintf(stderr, "\n%s: %.17g vs %.17g\n", s, got, want);
        CU_ASSERT_FATAL(memcmp(&got, &want, sizeof got) == 0);
    }
    static const struct {
        const char *s;
        int rc;
        double v;
    } cases[] = {
        {"4.0", 0, 4.0}, {"5.", 0, 5.0},     {".5", 0, 0.5},     {"-0.25", 0, -0.25}, {"1e1", 0, 10.0},
        {"+2", 0, 2.0},  {"0001.50", 0, 1.5}, {"", 1, 0},         {"-", 1, 0},         {".", 1, 0},
        {"1.2.3", 1, 0}, {"0x10", 1, 0},      {"abc", 1, 0},      {"1,5", 1, 0},       {"4 ", 1, 0},
        {"nan", 2, 0},   {"NaN", 2, 0},       {"inf", 2, 0},      {"-Infinity", 2, 0}, {"1e400", 2, 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        double v = 0;
        int rc = rk_parse_rating(cases[k].s, strlen(cases[k].s), &v);
        if (rc != cases[k].rc) fprintf(stderr, "\n\"%s\": rc %d\n", cases[k].s, rc);
        CU_ASSERT_EQUAL(rc, cases[k].rc);
        if (rc == 0) CU_ASSERT_EQUAL(v, cases[k].v);
    }
    int64_t t = 0;
    CU_ASSERT_EQUAL(rk_parse_time("2005-09-06", 10, &t), 0);
    CU_ASSERT_EQUAL(t, 1125964800);
    CU_ASSERT_EQUAL(rk_parse_time("1969-12-31", 10, &t), 0);
    CU_ASSERT_EQUAL(t, -86400);
    CU_ASSERT_EQUAL(rk_parse_time("2000-02-29", 10, &t), 0);
    CU_ASSERT_EQUAL(t, 951782400);
    CU_ASSERT_EQUAL(rk_parse_time("2001-02-29", 10, &t), 1);
    CU_ASSERT_EQUAL(rk_parse_time("2001-13-01", 10, &t), 1);
    CU_ASSERT_EQUAL(rk_parse_time("964982703", 9, &t), 0);
    CU_ASSERT_EQUAL(t, 964982703);
    CU_ASSERT_EQUAL(rk_parse_time("-5", 2, &t), 0);
    CU_ASSERT_EQUAL(t, -5);
    CU_ASSERT_EQUAL(rk_parse_time("12a", 3, &t), 1);
    CU_ASSERT_EQUAL(rk_parse_time("", 0, &t), 1);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"id ranges checked from here", ranges_check_from_here},
        {"movielens from buffers", test_movielens_buffer},
        {"every format from buffers", test_formats_buffer},
        {"format detection and report", test_detect_report},
        {"header and columns", test_header_and_columns},
        {"option errors", test_option_errors},
        {"empty inputs", test_empty},
        {"fixture files", test_fixture_files},
        {"missing files", test_io_errors},
        {"bad lines, strict", test_bad_strict},
        {"bad lines, skipped", test_bad_skip},
        {"netflix directory and file lists", test_netflix_dir},
        {"test file shares the id maps", test_test_file},
        {"standard input", test_stdin},
        {"progress in bytes", test_progress},
        {"rating and time parsers", test_parse_rating},
        {"the loader's id ranges were right", ranges_were_right},
        {NULL, NULL},
    };
    return rk_test_main("load", cases);
}
