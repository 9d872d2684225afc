/* A file of raw ids -> dense indices (rk_idlist.h). */
#define _POSIX_C_SOURCE 200809L
#include "rk_idlist.h"

#include "rk_load_internal.h"
#include "rk_records.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct idl_st {
    const char *path;
    const rk_idmap *m;
    uint8_t *seen;
    int32_t *v;
    int64_t n, cap;
    rk_idlist_report *rep;
} idl_st;

/* One record: one id, or the header (a first record naming a user or item
 * column that is not an id of the map). */
static rk_status idl_record(void *ud, const rk_record *r, rk_error *err)
{
    idl_st *st = ud;
    rk_idlist_report *rep = st->rep;
    if (r->n != 1)
        return rk_error_set(err, RK_E_PARSE, "%s:%lld: expected one id a line, found %d fields (quote an id that "
                            "holds a comma)", st->path, (long long)r->line, r->n);
    const int32_t ix = rk_ids_find(st->m, r->f[0], r->len[0]);
    const int kind = rk_detect_column_kind(r->f[0], r->len[0]);
    if (rep->ids == 0 && !rep->header && ix < 0 && (kind == RK_COL_KIND_USER || kind == RK_COL_KIND_ITEM)) {
        rep->header = 1;
        return RK_OK;
    }
    rep->ids++;
    if (ix < 0) {
        if (rep->unknown++ == 0) {
            rep->first_unknown_line = r->line;
            memcpy(rep->first_unknown, r->f[0], r->len[0]);
            rep->first_unknown[r->len[0]] = '\0';
        }
        return RK_OK;
    }
    if (st->seen[ix]) {
        rep->repeated++;
        return RK_OK;
    }
    st->seen[ix] = 1;
    if (st->n == st->cap) {
        int32_t *nv = realloc(st->v, (size_t)st->cap * 2 * sizeof *nv);
        if (nv == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory reading %s", st->path);
        st->v = nv;
        st->cap *= 2;
    }
    st->v[st->n++] = ix;
    return RK_OK;
}

rk_status rk_idlist_read(const char *path, const rk_idmap *m, int32_t **out, int64_t *n_out, rk_idlist_report *rep,
                         rk_error *err)
{
    *out = NULL;
    *n_out = 0;
    memset(rep, 0, sizeof *rep);
    const int32_t n_ids = rk_ids_count(m);
    idl_st st = {path, m, calloc((size_t)(n_ids > 0 ? n_ids : 1), 1), malloc(1024 * sizeof(int32_t)), 0, 1024, rep};
    rk_status s = st.seen == NULL || st.v == NULL ? rk_error_set(err, RK_E_NOMEM, "out of memory reading %s", path)
                                                  : rk_records_read(path, idl_record, &st, &rep->lines, err);
    free(st.seen);
    if (s != RK_OK) {
        free(st.v);
        return s;
    }
    *out = st.v;
    *n_out = st.n;
    return RK_OK;
}
