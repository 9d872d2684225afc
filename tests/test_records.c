/* Unit tests of the id files a run is given (etl/rk_records.h, rk_idlist.h,
 * rk_pairs.h): RFC 4180 quoting, a byte-order mark, headers recognised by
 * their column names only, extra fields refused with the line, bounded
 * lines. */
#define _POSIX_C_SOURCE 200809L
#include "rk_records.h"
#include "rk_idlist.h"
#include "rk_pairs.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char g_dir[] = "/tmp/rk_test_records_XXXXXX";
static char g_path[700];

/* Write n bytes of s to the scratch file; @return its path. */
static const char *file_of(const char *s, size_t n)
{
    FILE *fp = fopen(g_path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
    CU_ASSERT_EQUAL(fwrite(s, 1, n, fp), n);
    fclose(fp);
    return g_path;
}

#define FILE_OF(lit) file_of(lit, sizeof(lit) - 1)

typedef struct seen {
    int n;
    char text[4096];
} seen;

/* Records rendered as "line:field|field;" */
static rk_status collect(void *ud, const rk_record *r, rk_error *err)
{
    seen *s = ud;
    (void)err;
    size_t at = strlen(s->text);
    at += (size_t)snprintf(s->text + at, sizeof s->text - at, "%lld:", (long long)r->line);
    for (int k = 0; k < r->n; k++)
        at += (size_t)snprintf(s->text + at, sizeof s->text - at, "%s%.*s", k ? "|" : "", (int)r->len[k], r->f[k]);
    snprintf(s->text + at, sizeof s->text - at, ";");
    s->n++;
    return RK_OK;
}

static const char *records(const char *path, rk_status want, rk_error *err)
{
    static seen s;
    memset(&s, 0, sizeof s);
    CU_ASSERT_EQUAL(rk_records_read(path, collect, &s, NULL, err), want);
    return s.text;
}

static void test_quoting(void)
{
    rk_error e;
    /* a BOM, CRLF, blank lines, quotes with commas, doubled quotes and line breaks */
    CU_ASSERT_STRING_EQUAL(records(FILE_OF("\xEF\xBB\xBF" "a,b\r\n\r\n  \n\"c,d\",\"e\"\"f\"\n\"g\nh\",i\n"), RK_OK, &e),
                           "1:a|b;4:c,d|e\"f;5:g\nh|i;");
    /* a tab-delimited file; spaces around unquoted fields dropped */
    CU_ASSERT_STRING_EQUAL(records(FILE_OF("x\ty\n z \t w\n"), RK_OK, &e), "1:x|y;2:z|w;");
    /* a quote left open */
    records(FILE_OF("a,b\n\"c,d\n"), RK_E_PARSE, &e);
    CU_ASSERT(strstr(e.msg, ":2: a quoted field is not closed") != NULL);
    /* a NUL byte, a long field, too many fields */
    records(file_of("a\n\0b\n", 5), RK_E_PARSE, &e);
    CU_ASSERT(strstr(e.msg, ":2: a NUL byte in field 1") != NULL);
    char big[400];
    memset(big, 'x', sizeof big);
    big[sizeof big - 1] = '\n';
    records(file_of(big, sizeof big), RK_E_PARSE, &e);
    CU_ASSERT(strstr(e.msg, ":1: field 1 is longer than 255 bytes") != NULL);
    records(FILE_OF("1,2,3,4,5,6,7,8,9\n"), RK_E_PARSE, &e);
    CU_ASSERT(strstr(e.msg, ":1: more than 8 fields") != NULL);
}

/* A line longer than the limit stops the reading with its line number,
 * before the whole file is in memory. */
static void test_long_line(void)
{
    rk_error e;
    const size_t n = RK_RECORDS_LINE_MAX + 100;
    char *s = malloc(n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    memcpy(s, "a\nb\n", 4);
    memset(s + 4, '"', n - 4);
    records(file_of(s, n), RK_E_PARSE, &e);
    CU_ASSERT(strstr(e.msg, ":3: a line longer than") != NULL);
    free(s);
}

static void test_idlist(void)
{
    const char *ids[] = {"1", "2", "a,b", "q\"r", "x\ny", "user"};
    rk_idmap *m = NULL;
    rk_error e;
    CU_ASSERT_FATAL(rk_ids_from_strings(ids, 6, &m, &e) == RK_OK);
    int32_t *v;
    int64_t n;
    rk_idlist_report rep;
    /* a header by its name, quoted ids, an unknown one, a repeat */
    CU_ASSERT_EQUAL_FATAL(rk_idlist_read(FILE_OF("\xEF\xBB\xBFuserId\n\"a,b\"\n\"q\"\"r\"\n\"x\ny\"\nzz\n1\n\"a,b\"\n"), m, &v,
                                         &n, &rep, &e), RK_OK);
    CU_ASSERT_EQUAL(rep.header, 1);
    CU_ASSERT_EQUAL(n, 4);
    if (n == 4) {
        CU_ASSERT_EQUAL(v[0], rk_ids_find(m, "a,b", 3));
        CU_ASSERT_EQUAL(v[1], rk_ids_find(m, "q\"r", 3));
        CU_ASSERT_EQUAL(v[2], rk_ids_find(m, "x\ny", 3));
        CU_ASSERT_EQUAL(v[3], rk_ids_find(m, "1", 1));
    }
    CU_ASSERT_EQUAL(rep.unknown, 1);
    CU_ASSERT_EQUAL(rep.first_unknown_line, 6);
    CU_ASSERT_STRING_EQUAL(rep.first_unknown, "zz");
    CU_ASSERT_EQUAL(rep.repeated, 1);
    free(v);
    /* "user" is an id of the map here: not a header */
    CU_ASSERT_EQUAL_FATAL(rk_idlist_read(FILE_OF("user\n2\n"), m, &v, &n, &rep, &e), RK_OK);
    CU_ASSERT_EQUAL(rep.header, 0);
    CU_ASSERT_EQUAL(n, 2);
    free(v);
    /* an unquoted comma: two fields, refused with the line */
    CU_ASSERT_EQUAL(rk_idlist_read(FILE_OF("1\na,b\n"), m, &v, &n, &rep, &e), RK_E_PARSE);
    CU_ASSERT(strstr(e.msg, ":2: expected one id a line, found 2 fields") != NULL);
    rk_ids_free(m);
}

static void test_pairs(void)
{
    const char *us[] = {"carol", "bob", "u,1"}, *is[] = {"10:2", "10", "i\"x"};
    rk_idmap *um = NULL, *im = NULL;
    rk_error e;
    rk_pairs p;
    CU_ASSERT_FATAL(rk_ids_from_strings(us, 3, &um, &e) == RK_OK);
    CU_ASSERT_FATAL(rk_ids_from_strings(is, 3, &im, &e) == RK_OK);
    /* "carol,10:2" is carol and 10:2, not carol and 10; quoted ids; a BOM */
    CU_ASSERT_EQUAL_FATAL(rk_pairs_read(FILE_OF("\xEF\xBB\xBF" "carol,10:2\n\"u,1\",\"i\"\"x\"\nbob\t10\n"), um, im, &p, &e),
                          RK_E_PARSE); /* a tab after comma lines: one field */
    rk_pairs_free(&p);
    CU_ASSERT_EQUAL_FATAL(rk_pairs_read(FILE_OF("\xEF\xBB\xBF" "carol,10:2\n\"u,1\",\"i\"\"x\"\nbob,10\n"), um, im, &p, &e),
                          RK_OK);
    CU_ASSERT_EQUAL(p.n, 3);
    if (p.n == 3) {
        CU_ASSERT_EQUAL(p.user[0], rk_ids_find(um, "carol", 5));
        CU_ASSERT_EQUAL(p.item[0], rk_ids_find(im, "10:2", 4));
        CU_ASSERT_EQUAL(p.user[1], rk_ids_find(um, "u,1", 3));
        CU_ASSERT_EQUAL(p.item[1], rk_ids_find(im, "i\"x", 3));
        CU_ASSERT_EQUAL(p.item[2], rk_ids_find(im, "10", 2));
        CU_ASSERT_EQUAL(memcmp(p.raw + p.raw_off[2], "u,1i\"x", 6), 0);
    }
    CU_ASSERT_EQUAL(p.unknown_users + p.unknown_items, 0);
    rk_pairs_free(&p);
    /* unknown ids with letters are pairs, not a header */
    CU_ASSERT_EQUAL_FATAL(rk_pairs_read(FILE_OF("dave,x9\ncarol,10\n"), um, im, &p, &e), RK_OK);
    CU_ASSERT_EQUAL(p.n, 2);
    CU_ASSERT_EQUAL(p.unknown_users, 1);
    CU_ASSERT_EQUAL(p.first_unknown_line, 1);
    rk_pairs_free(&p);
    /* a rating file with its header: the named columns, every record as wide */
    CU_ASSERT_EQUAL_FATAL(rk_pairs_read(FILE_OF("rating,movieId,userId\n4,10,bob\n3,\"10:2\",carol\n"), um, im, &p, &e),
                          RK_OK);
    CU_ASSERT_EQUAL(p.n, 2);
    if (p.n == 2) {
        CU_ASSERT_EQUAL(p.user[0], rk_ids_find(um, "bob", 3));
        CU_ASSERT_EQUAL(p.item[1], rk_ids_find(im, "10:2", 4));
    }
    rk_pairs_free(&p);
    CU_ASSERT_EQUAL(rk_pairs_read(FILE_OF("user,item,rating\nbob,10\n"), um, im, &p, &e), RK_E_PARSE);
    CU_ASSERT(strstr(e.msg, ":2: expected 3 fields as in the header, found 2") != NULL);
    /* without a header, an extra field is an error with its line */
    CU_ASSERT_EQUAL(rk_pairs_read(FILE_OF("bob,10\ncarol,10,5\n"), um, im, &p, &e), RK_E_PARSE);
    CU_ASSERT(strstr(e.msg, ":2: expected USER,ITEM, found 3 fields") != NULL);
    CU_ASSERT_EQUAL(rk_pairs_read(FILE_OF("bob,\n"), um, im, &p, &e), RK_E_PARSE);
    CU_ASSERT(strstr(e.msg, ":1: empty item id") != NULL);
    rk_ids_free(um);
    rk_ids_free(im);
}

int main(void)
{
    if (mkdtemp(g_dir) == NULL) return 99;
    snprintf(g_path, sizeof g_path, "%s/f.csv", g_dir);
    static const rk_test_case cases[] = {
        {"quoting, BOM, CRLF, blank lines, tabs, bad records", test_quoting},
        {"a line over the limit", test_long_line},
        {"--users / --items files", test_idlist},
        {"--queries files", test_pairs},
        {NULL, NULL},
    };
    int rc = rk_test_main("records", cases);
    unlink(g_path);
    rmdir(g_dir);
    return rc;
}
