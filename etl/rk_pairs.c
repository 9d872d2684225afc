/* (user, item) pairs to predict (rk_pairs.h). */
#define _POSIX_C_SOURCE 200809L
#include "rk_pairs.h"

#include <ctype.h>
#include "rk_load_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rk_pairs_free(rk_pairs *p)
{
    if (p == NULL) return;
    free(p->user);
    free(p->item);
    free(p->raw_off);
    free(p->raw);
    memset(p, 0, sizeof *p);
}

static int has_alpha(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (isalpha((unsigned char)s[i])) return 1;
    return 0;
}

/* Room for one more pair and `bytes` more raw bytes. */
static int grow(rk_pairs *p, int64_t *cap, int64_t *raw_cap, size_t bytes)
{
    if (p->n + 1 > *cap) {
        int64_t c = *cap * 2;
        int32_t *u = realloc(p->user, (size_t)c * sizeof *u);
        if (u == NULL) return 0;
        p->user = u;
        int32_t *i = realloc(p->item, (size_t)c * sizeof *i);
        if (i == NULL) return 0;
        p->item = i;
        int64_t *o = realloc(p->raw_off, (size_t)(2 * c + 1) * sizeof *o);
        if (o == NULL) return 0;
        p->raw_off = o;
        *cap = c;
    }
    int64_t used = p->raw_off[2 * p->n];
    if (used + (int64_t)bytes > *raw_cap) {
        int64_t c = *raw_cap * 2 + (int64_t)bytes;
        char *r = realloc(p->raw, (size_t)c);
        if (r == NULL) return 0;
        p->raw = r;
        *raw_cap = c;
    }
    return 1;
}

rk_status rk_pairs_read(const char *path, const rk_idmap *users, const rk_idmap *items, rk_pairs *out,
                        rk_error *err)
{
    memset(out, 0, sizeof *out);
    FILE *fp = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (fp == NULL) return rk_error_set(err, RK_E_IO, "cannot open %s: %s", path, strerror(errno));
    int64_t cap = 1024, raw_cap = 16384;
    out->user = malloc((size_t)cap * sizeof *out->user);
    out->item = malloc((size_t)cap * sizeof *out->item);
    out->raw_off = malloc((size_t)(2 * cap + 1) * sizeof *out->raw_off);
    out->raw = malloc((size_t)raw_cap);
    char *line = NULL;
    size_t lcap = 0;
    rk_status s = RK_OK;
    if (out->user == NULL || out->item == NULL || out->raw_off == NULL || out->raw == NULL) {
        s = rk_error_set(err, RK_E_NOMEM, "out of memory reading %s", path);
        goto done;
    }
    out->raw_off[0] = 0;
    for (;;) {
        size_t len;
        const int got = rk_line_get(fp, &line, &lcap, &len);
        if (got <= 0) {
            if (got < 0) s = rk_error_set(err, RK_E_IO, "cannot read %s: %s", path, strerror(errno ? errno : EIO));
            break;
        }
        out->lines++;
        if (memchr(line, '\0', len) != NULL) {
            s = rk_error_set(err, RK_E_PARSE, "%s:%lld: a NUL byte in the line", path, (long long)out->lines);
            break;
        }
        if (len == 0) continue;
        /* USER, then a comma, a tab or "::", then ITEM up to the next separator */
        size_t a = 0;
        while (a < len && line[a] != ',' && line[a] != '\t' && line[a] != ':') a++;
        size_t sep = a < len && line[a] == ':' ? 2 : 1;
        if (a >= len || (line[a] == ':' && (a + 1 >= len || line[a + 1] != ':'))) {
            s = rk_error_set(err, RK_E_PARSE, "%s:%lld: expected USER,ITEM", path, (long long)out->lines);
            break;
        }
        const char *ib = line + a + sep;
        size_t il = 0;
        while (a + sep + il < len && ib[il] != ',' && ib[il] != '\t' && ib[il] != ':') il++;
        if (a == 0 || il == 0) {
            s = rk_error_set(err, RK_E_PARSE, "%s:%lld: empty %s id", path, (long long)out->lines,
                             a == 0 ? "user" : "item");
            break;
        }
        if (a > RK_ID_MAX || il > RK_ID_MAX) {
            s = rk_error_set(err, RK_E_PARSE, "%s:%lld: an id longer than %d bytes", path, (long long)out->lines,
                             RK_ID_MAX);
            break;
        }
        int32_t u = rk_ids_find(users, line, a), i = rk_ids_find(items, ib, il);
        if (out->n == 0 && out->lines == 1 && u < 0 && i < 0 && (has_alpha(line, a) || has_alpha(ib, il)))
            continue; /* a header */
        if (!grow(out, &cap, &raw_cap, a + il)) {
            s = rk_error_set(err, RK_E_NOMEM, "out of memory reading %s", path);
            break;
        }
        int64_t o = out->raw_off[2 * out->n];
        memcpy(out->raw + o, line, a);
        memcpy(out->raw + o + (int64_t)a, ib, il);
        out->raw_off[2 * out->n + 1] = o + (int64_t)a;
        out->raw_off[2 * out->n + 2] = o + (int64_t)(a + il);
        out->user[out->n] = u;
        out->item[out->n] = i;
        out->unknown_users += u < 0;
        out->unknown_items += i < 0;
        if ((u < 0 || i < 0) && out->first_unknown_line == 0) out->first_unknown_line = out->lines;
        out->n++;
    }
done:
    free(line);
    if (fp != stdin) fclose(fp);
    if (s != RK_OK) rk_pairs_free(out);
    return s;
}
