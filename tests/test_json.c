/* Tests of rk_json, the JSON values of the run's files on jansson: numbers
 * as rk_out_double prints them (integers as integers, null for what is not
 * finite), strings from any bytes, unsigned 64-bit integers, the layout of
 * one member per line and its parse back. */
#define _POSIX_C_SOURCE 200809L
#include "test_output_util.h"
#include "rk_json.h"

/* ---- values ------------------------------------------------------------------------- */

/* The text jansson prints for v alone. */
static char *dump(json_t *v)
{
    char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(9));
    json_decref(v);
    return s;
}

static void expect_dump(json_t *v, const char *want)
{
    char *s = dump(v);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    if (strcmp(s, want) != 0) {
        fprintf(stderr, "dumped \"%s\", want \"%s\"\n", s, want);
        CU_FAIL("rk_json dump");
    }
    free(s);
}

static void test_json_numbers(void)
{
    /* integral values as integers (rk_out_double's text, not jansson's "4.0") */
    expect_dump(rk_json_num(4.0), "4");
    expect_dump(rk_json_num(-0.0), "0");
    expect_dump(rk_json_num(100836.0), "100836");
    expect_dump(rk_json_num(0.5), "0.5");
    expect_dump(rk_json_num(2.0 / 3.0), "0.666666667");
    expect_dump(rk_json_num(1e-5), "1e-5");   /* jansson drops the exponent's zero */
    expect_dump(rk_json_num(1e9), "1e9");     /* %.9g: an exponent from 1e9 on */
    expect_dump(rk_json_num(NAN), "null");    /* JSON has no nan or inf */
    expect_dump(rk_json_num(INFINITY), "null");
    expect_dump(rk_json_num(-INFINITY), "null");

    /* random magnitudes: the value read back is rk_out_double's, digit for digit */
    unsigned long long st = 11;
    for (int i = 0; i < 20000; i++) {
        double x = (rk_test_uniform(&st) - 0.3) * pow(10.0, (double)(int)(rk_test_rand(&st) % 30) - 12);
        if (i % 7 == 0) x = floor(x);
        char want[40];
        rk_out_double(want, sizeof want, x);
        char *got = dump(rk_json_num(x));
        CU_ASSERT_PTR_NOT_NULL_FATAL(got);
        if (strtod(got, NULL) != strtod(want, NULL) || (strpbrk(want, ".e") == NULL) != (strpbrk(got, ".e") == NULL)) {
            fprintf(stderr, "rk_json_num(%.17g) = %s, rk_out_double %s\n", x, got, want);
            CU_FAIL("rk_json_num differs from rk_out_double");
            free(got);
            break;
        }
        free(got);
    }
}

static void test_json_strings(void)
{
    expect_dump(rk_json_str("plain"), "\"plain\"");
    expect_dump(rk_json_str("a\"b\\c/d"), "\"a\\\"b\\\\c/d\"");
    expect_dump(rk_json_str("tab\there\nnl\r\x01\x1f"), "\"tab\\there\\nnl\\r\\u0001\\u001F\"");
    expect_dump(rk_json_str("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    /* stray bytes, a truncated sequence, an overlong form, a surrogate: one U+FFFD per byte */
    expect_dump(rk_json_str("bad\xff\xc3"), "\"bad\xef\xbf\xbd\xef\xbf\xbd\"");
    expect_dump(rk_json_str("\xc0\xaf-\xed\xa0\x80"),
                "\"\xef\xbf\xbd\xef\xbf\xbd-\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
    expect_dump(rk_json_str(""), "\"\"");
    expect_dump(rk_json_str(NULL), "null");
}

static void test_json_layout(void)
{
    rk_json_layout ly;
    memset(&ly, 0, sizeof ly);
    json_t *folds = rk_json_lined(&ly, json_array());
    json_array_append_new(folds, json_pack("{s:i, s:o}", "fold", 1, "rmse", rk_json_num(0.75)));
    json_array_append_new(folds, json_pack("{s:i, s:n}", "fold", 2, "rmse"));
    json_t *parts = rk_json_lined(&ly, json_array());
    json_t *top = json_pack("{s:s, s:[i, i], s:{s:o, s:o}, s:o, s:{s:i, s:o}, s:{s:[]}}", "zeta", "first",
                            "list", 1, 2, "options", "seed", rk_json_u64(&ly, UINT64_MAX), "small",
                            rk_json_u64(&ly, 42), "folds", folds, "scale", "ranks", 3, "parts", parts, "empty",
                            "inner");
    CU_ASSERT_PTR_NOT_NULL_FATAL(top);
    json_array_append_new(parts, json_pack("{s:i}", "rank", 0));
    FILE *fp = tmpfile();
    rk_error err;
    CU_ASSERT_EQUAL(rk_json_write(fp, top, &ly, &err), RK_OK);
    char *t = stream_text(fp);
    fclose(fp);
    const char *want = "{\n"
                       "  \"zeta\": \"first\",\n"
                       "  \"list\": [1, 2],\n"
                       "  \"options\": {\"seed\": 18446744073709551615, \"small\": 42},\n"
                       "  \"folds\": [\n"
                       "    {\"fold\": 1, \"rmse\": 0.75},\n"
                       "    {\"fold\": 2, \"rmse\": null}\n"
                       "  ],\n"
                       "  \"scale\": {\"ranks\": 3, \"parts\": [\n"
                       "    {\"rank\": 0}\n"
                       "  ]},\n"
                       "  \"empty\": {\"inner\": []}\n"
                       "}\n";
    if (strcmp(t, want) != 0) {
        fprintf(stderr, "laid out:\n%s\nwant:\n%s\n", t, want);
        CU_FAIL("rk_json_write layout");
    }
    /* the text is JSON: jansson reads it back, members in the same order
     * (integers as reals: its own integers stop at 2^63) */
    json_error_t je;
    json_t *back = json_loads(t, JSON_DECODE_INT_AS_REAL, &je);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    const char *k1 = json_object_iter_key(json_object_iter(back));
    CU_ASSERT(k1 != NULL && strcmp(k1, "zeta") == 0);
    const json_t *opts = json_object_get(back, "options");
    CU_ASSERT_EQUAL(json_number_value(json_object_get(opts, "small")), 42.0);
    CU_ASSERT_EQUAL(json_number_value(json_object_get(opts, "seed")), 18446744073709551615.0);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(back, "folds")), 2);
    json_decref(back);
    free(t);
    json_decref(top);

    /* only an object makes a file; an empty one is "{}" */
    json_t *arr = json_array();
    fp = tmpfile();
    CU_ASSERT_EQUAL(rk_json_write(fp, arr, NULL, &err), RK_E_ARG);
    json_decref(arr);
    json_t *none = json_object();
    CU_ASSERT_EQUAL(rk_json_write(fp, none, NULL, &err), RK_OK);
    t = stream_text(fp);
    CU_ASSERT_STRING_EQUAL(t, "{}\n");
    free(t);
    fclose(fp);
    json_decref(none);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"numbers as rk_out_double", test_json_numbers},
        {"strings from any bytes", test_json_strings},
        {"layout and parse back", test_json_layout},
        {NULL, NULL},
    };
    return rk_test_main("rk_json", cases);
}
