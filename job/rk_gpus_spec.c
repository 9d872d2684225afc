/* rk_gpus_spec — --gpus all|N|LIST: the text into an rk_gpus_spec, and a
 * spec into the device ordinals of this machine (rk_gpus.h). */
#include "rk_gpus.h"

#include <stdint.h>
#include <string.h>

/* Ordinals above this are refused by the parser (no machine has as many). */
#define GPUS_ORDINAL_MAX 1000000

static const char gpus_forms[] = "expected all, a count N >= 1 or a comma-separated list of device ordinals "
                                 "(e.g. 0,1)";

/* The decimal digits of s[0..len) as a number at most max into *v.
 * @return 1, or 0 when empty, not all digits, or above max. */
static int read_uint(const char *s, size_t len, int32_t max, int32_t *v)
{
    int64_t x = 0;
    if (len == 0) return 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        x = 10 * x + (s[i] - '0');
        if (x > max) return 0;
    }
    *v = (int32_t)x;
    return 1;
}

rk_status rk_gpus_parse(const char *s, rk_gpus_spec *out, rk_error *err)
{
    rk_gpus_spec sp;
    memset(&sp, 0, sizeof sp);
    if (s == NULL || s[0] == '\0') {
        *out = sp;
        return RK_OK;
    }
    if (strcmp(s, "all") == 0) {
        sp.all = 1;
        *out = sp;
        return RK_OK;
    }
    if (strchr(s, ',') == NULL) {
        size_t len = strlen(s);
        int32_t n;
        if (strspn(s, "0123456789") != len) return rk_error_set(err, RK_E_ARG, "%s, got '%s'", gpus_forms, s);
        if (!read_uint(s, len, RK_GPUS_MAX, &n))
            return rk_error_set(err, RK_E_ARG, "at most %d devices, got '%s'", RK_GPUS_MAX, s);
        if (n < 1)
            return rk_error_set(err, RK_E_ARG, "a count of devices is at least 1, got '%s' (device 0 alone: 1 or 0,)",
                                s);
        sp.count = n;
        *out = sp;
        return RK_OK;
    }
    /* a list: entries between commas, a trailing comma allowed ("0,") */
    const char *p = s;
    while (*p != '\0') {
        size_t len = strcspn(p, ",");
        int32_t id;
        if (!read_uint(p, len, GPUS_ORDINAL_MAX, &id)) {
            if (len == 0) return rk_error_set(err, RK_E_ARG, "empty entry in the device list '%s'", s);
            return rk_error_set(err, RK_E_ARG, "'%.*s' is not a device ordinal (0, 1, ...) in '%s'", (int)len, p, s);
        }
        if (sp.n_ids == RK_GPUS_MAX)
            return rk_error_set(err, RK_E_ARG, "at most %d devices in a list, got more in '%s'", RK_GPUS_MAX, s);
        sp.ids[sp.n_ids++] = id;
        p += len;
        if (*p == ',') p++;
    }
    *out = sp;
    return RK_OK;
}

int rk_gpus_given(const rk_gpus_spec *spec)
{
    return spec != NULL && (spec->all || spec->count > 0 || spec->n_ids > 0);
}

rk_status rk_gpus_resolve(const rk_gpus_spec *spec, int n_visible, int32_t *ids, int *n, rk_error *err)
{
    static const rk_gpus_spec none; /* zeroed: device 0 */
    if (spec == NULL) spec = &none;
    *n = 0;
    if (spec->all < 0 || spec->count < 0 || spec->count > RK_GPUS_MAX || spec->n_ids < 0 ||
        spec->n_ids > RK_GPUS_MAX)
        return rk_error_set(err, RK_E_ARG, "bad device spec (all %d, count %d, %d ordinals)", spec->all,
                            spec->count, spec->n_ids);
    if (n_visible < 1) return rk_error_set(err, RK_E_GPU, "no CUDA device is visible");
    if (spec->all) {
        int m = n_visible < RK_GPUS_MAX ? n_visible : RK_GPUS_MAX;
        for (int d = 0; d < m; d++) ids[d] = d;
        *n = m;
        return RK_OK;
    }
    if (spec->count > 0) {
        if (spec->count > n_visible)
            return rk_error_set(err, RK_E_GPU, "%d CUDA devices asked for, but %d %s visible", spec->count,
                                n_visible, n_visible == 1 ? "is" : "are");
        for (int d = 0; d < spec->count; d++) ids[d] = d;
        *n = spec->count;
        return RK_OK;
    }
    if (spec->n_ids > 0) {
        for (int i = 0; i < spec->n_ids; i++) {
            int32_t d = spec->ids[i];
            if (d < 0) return rk_error_set(err, RK_E_ARG, "bad device ordinal %d", (int)d);
            if (d >= n_visible)
                return rk_error_set(err, RK_E_GPU, "CUDA device %d is not visible (%d device%s: 0 to %d)", (int)d,
                                    n_visible, n_visible == 1 ? "" : "s", n_visible - 1);
        }
        for (int i = 0; i < spec->n_ids; i++) ids[i] = spec->ids[i];
        *n = spec->n_ids;
        return RK_OK;
    }
    ids[0] = 0;
    *n = 1;
    return RK_OK;
}
