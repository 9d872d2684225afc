/* JSON values and their layout (rk_json.h). */
#include "rk_json.h"
#include "rk_output.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Every scalar and unmarked container as jansson prints it on one line:
 * ", " between items, ": " after keys, 9 significant digits (rk_out_double's
 * precision: the text of an integral value never reaches jansson's reals).
 * PRESERVE_ORDER is a no-op since jansson 2.8 (insertion order is kept),
 * stated for clarity. */
#define DUMP_FLAGS (JSON_ENCODE_ANY | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9))

json_t *rk_json_num(double x)
{
    if (!isfinite(x)) return json_null();
    char b[40];
    rk_out_double(b, sizeof b, x);
    /* "%.9g" prints an integral value below 1e9 without '.' or exponent;
     * jansson would print it with ".0": give it as the integer it reads as */
    if (strpbrk(b, ".e") == NULL) return json_integer((json_int_t)strtoll(b, NULL, 10));
    return json_real(x);
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid: the
 * rules jansson checks (no overlong forms, no surrogates, at most U+10FFFF). */
static int utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) return (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if ((s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80) return 0;
        if (c == 0xE0 && s[1] < 0xA0) return 0;  /* overlong */
        if (c == 0xED && s[1] >= 0xA0) return 0; /* surrogate */
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if ((s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80) return 0;
        if (c == 0xF0 && s[1] < 0x90) return 0;
        if (c == 0xF4 && s[1] >= 0x90) return 0;
        return 4;
    }
    return 0;
}

json_t *rk_json_str(const char *s)
{
    if (s == NULL) return json_null();
    const unsigned char *u = (const unsigned char *)s;
    size_t bad = 0, n = 0;
    while (u[n] != '\0') {
        int l = utf8_len(u + n);
        bad += l == 0;
        n += l > 0 ? (size_t)l : 1;
    }
    if (bad == 0) return json_stringn(s, n);
    /* JSON text is UTF-8: mark each stray byte (3 bytes of U+FFFD for 1) */
    char *t = malloc(n + 2 * bad + 1);
    if (t == NULL) return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        int l = utf8_len(u + i);
        if (l == 0) {
            memcpy(t + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
        } else {
            memcpy(t + o, u + i, (size_t)l);
            o += (size_t)l;
            i += (size_t)l;
        }
    }
    json_t *v = json_stringn(t, o);
    free(t);
    return v;
}

/* Mark v in set (n entries of RK_JSON_MARKS); 0 when full. */
static int mark(const json_t **set, int *n, const json_t *v)
{
    if (*n >= RK_JSON_MARKS) return 0;
    set[(*n)++] = v;
    return 1;
}

json_t *rk_json_u64(rk_json_layout *ly, uint64_t v)
{
    if (v <= (uint64_t)INT64_MAX) return json_integer((json_int_t)v);
    char b[24];
    snprintf(b, sizeof b, "%" PRIu64, v);
    json_t *s = json_string(b);
    if (s != NULL && !mark(ly->bare, &ly->n_bare, s)) {
        json_decref(s);
        return NULL;
    }
    return s;
}

json_t *rk_json_lined(rk_json_layout *ly, json_t *a)
{
    if (a != NULL && !mark(ly->lined, &ly->n_lined, a)) {
        json_decref(a);
        return NULL;
    }
    return a;
}

/* ---- writing ---------------------------------------------------------------- */

static int marked(const json_t *const *set, int n, const json_t *v)
{
    for (int i = 0; i < n; i++)
        if (set[i] == v) return 1;
    return 0;
}

/* 1 when v is, or holds, a node that ly marks: then its containers are
 * written here, and only what lies beside the marks by jansson. */
static int holds_mark(const json_t *v, const rk_json_layout *ly)
{
    if (marked(ly->lined, ly->n_lined, v) || marked(ly->bare, ly->n_bare, v)) return 1;
    const char *key;
    size_t i;
    json_t *x;
    if (json_is_object(v)) {
        json_object_foreach((json_t *)v, key, x) if (holds_mark(x, ly)) return 1;
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, x) if (holds_mark(x, ly)) return 1;
    }
    return 0;
}

static int put_key(FILE *fp, const char *key)
{
    json_t *k = json_string(key);
    int r = k != NULL ? json_dumpf(k, fp, DUMP_FLAGS) : -1;
    json_decref(k);
    fputs(": ", fp);
    return r;
}

/* v as jansson's one-line form would print it, but for the marks. */
static int put_value(FILE *fp, const json_t *v, const rk_json_layout *ly)
{
    if (marked(ly->bare, ly->n_bare, v)) return fputs(json_string_value(v), fp) == EOF ? -1 : 0;
    if (!holds_mark(v, ly)) return json_dumpf(v, fp, DUMP_FLAGS);
    const char *key;
    size_t i;
    json_t *x;
    if (json_is_array(v)) {
        const int lined = marked(ly->lined, ly->n_lined, v);
        fputc('[', fp);
        json_array_foreach(v, i, x) {
            fputs(lined ? (i ? ",\n    " : "\n    ") : (i ? ", " : ""), fp);
            if (put_value(fp, x, ly) != 0) return -1;
        }
        if (lined && json_array_size(v) > 0) fputs("\n  ", fp);
        fputc(']', fp);
        return 0;
    }
    int first = 1;
    fputc('{', fp);
    json_object_foreach((json_t *)v, key, x) {
        if (!first) fputs(", ", fp);
        first = 0;
        if (put_key(fp, key) != 0 || put_value(fp, x, ly) != 0) return -1;
    }
    fputc('}', fp);
    return 0;
}

rk_status rk_json_write(FILE *fp, const json_t *top, const rk_json_layout *ly, rk_error *err)
{
    static const rk_json_layout none;
    if (!json_is_object(top)) return rk_error_set(err, RK_E_ARG, "a JSON file's top value must be an object");
    if (ly == NULL) ly = &none;
    const char *key;
    json_t *x;
    int first = 1, bad = 0;
    fputc('{', fp);
    json_object_foreach((json_t *)top, key, x) {
        fputs(first ? "\n  " : ",\n  ", fp);
        first = 0;
        if (put_key(fp, key) != 0 || put_value(fp, x, ly) != 0) {
            bad = 1;
            break;
        }
    }
    fputs(first ? "}\n" : "\n}\n", fp);
    /* jansson fails on a failed write as on a failed allocation: the first
     * is the stream's to report, at the commit */
    if (bad && !ferror(fp)) return rk_error_set(err, RK_E_NOMEM, "out of memory writing JSON");
    return RK_OK;
}
