/* A file of raw ids -> dense indices (rk_idlist.h). */
#define _POSIX_C_SOURCE 200809L
#include "rk_idlist.h"

#include "rk_load_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rk_line_get(FILE *fp, char **line, size_t *cap, size_t *len)
{
    errno = 0;
    ssize_t got = getline(line, cap, fp);
    if (got < 0) return ferror(fp) ? -1 : 0;
    size_t n = (size_t)got;
    if (n > 0 && (*line)[n - 1] == '\n') n--;
    if (n > 0 && (*line)[n - 1] == '\r') n--;
    *len = n;
    return 1;
}

rk_status rk_idlist_read(const char *path, const rk_idmap *m, int32_t **out, int64_t *n_out, rk_idlist_report *rep,
                         rk_error *err)
{
    *out = NULL;
    *n_out = 0;
    memset(rep, 0, sizeof *rep);
    FILE *fp = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (fp == NULL) return rk_error_set(err, RK_E_IO, "cannot open %s: %s", path, strerror(errno));
    const int32_t n_ids = rk_ids_count(m);
    uint8_t *seen = calloc((size_t)(n_ids > 0 ? n_ids : 1), 1);
    int64_t cap = 1024, n = 0;
    int32_t *v = malloc((size_t)cap * sizeof *v);
    char *line = NULL;
    size_t lcap = 0;
    rk_status s = RK_OK;
    if (seen == NULL || v == NULL) {
        s = rk_error_set(err, RK_E_NOMEM, "out of memory reading %s", path);
        goto done;
    }
    for (;;) {
        size_t len;
        const int got = rk_line_get(fp, &line, &lcap, &len);
        if (got <= 0) {
            if (got < 0) s = rk_error_set(err, RK_E_IO, "cannot read %s: %s", path, strerror(errno ? errno : EIO));
            break;
        }
        rep->lines++;
        if (memchr(line, '\0', len) != NULL) {
            s = rk_error_set(err, RK_E_PARSE, "%s:%lld: a NUL byte in a user id", path, (long long)rep->lines);
            break;
        }
        const char *b = line, *e = line + len;
        while (b < e && (*b == ' ' || *b == '\t')) b++;
        while (e > b && (e[-1] == ' ' || e[-1] == '\t')) e--;
        if (b == e) continue;
        size_t idlen = (size_t)(e - b);
        if (idlen > RK_ID_MAX) {
            s = rk_error_set(err, RK_E_PARSE, "%s:%lld: user id longer than %d bytes: \"%.40s...\"", path,
                             (long long)rep->lines, RK_ID_MAX, b);
            break;
        }
        if (memchr(b, ',', idlen) != NULL || memchr(b, '\t', idlen) != NULL) {
            s = rk_error_set(err, RK_E_PARSE, "%s:%lld: expected one user id a line, found \"%.*s\"", path,
                             (long long)rep->lines, idlen > 40 ? 40 : (int)idlen, b);
            break;
        }
        rep->ids++;
        int32_t ix = rk_ids_find(m, b, idlen);
        if (ix < 0) {
            if (rep->unknown++ == 0) {
                rep->first_unknown_line = rep->lines;
                memcpy(rep->first_unknown, b, idlen);
                rep->first_unknown[idlen] = '\0';
            }
            continue;
        }
        if (seen[ix]) {
            rep->repeated++;
            continue;
        }
        seen[ix] = 1;
        if (n == cap) {
            cap *= 2;
            int32_t *nv = realloc(v, (size_t)cap * sizeof *nv);
            if (nv == NULL) {
                s = rk_error_set(err, RK_E_NOMEM, "out of memory reading %s", path);
                break;
            }
            v = nv;
        }
        v[n++] = ix;
    }
done:
    free(line);
    free(seen);
    if (fp != stdin) fclose(fp);
    if (s != RK_OK) {
        free(v);
        return s;
    }
    *out = v;
    *n_out = n;
    return RK_OK;
}
