/* (user, item) pairs to predict (rk_pairs.h). */
#define _POSIX_C_SOURCE 200809L
#include "rk_pairs.h"

#include "rk_records.h"
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

typedef struct pr_st {
    const char *path;
    const rk_idmap *users, *items;
    rk_pairs *out;
    int64_t cap, raw_cap;
    int header, nf, cu, ci; /* fields a record holds, the user's and the item's */
} pr_st;

/* A first record that names a user and an item column (its other columns
 * may be anything: a rating file with its header works) and is not a pair
 * of known ids is the header: it fixes the columns and the field count. */
static int pr_header(pr_st *st, const rk_record *r)
{
    int cu = -1, ci = -1;
    for (int k = 0; k < r->n; k++) {
        const int kind = rk_detect_column_kind(r->f[k], r->len[k]);
        if (kind == RK_COL_KIND_USER && cu < 0) cu = k;
        if (kind == RK_COL_KIND_ITEM && ci < 0) ci = k;
    }
    if (cu < 0 || ci < 0) return 0;
    if (r->n >= 2 && rk_ids_find(st->users, r->f[0], r->len[0]) >= 0 && rk_ids_find(st->items, r->f[1], r->len[1]) >= 0)
        return 0;
    st->header = 1;
    st->nf = r->n;
    st->cu = cu;
    st->ci = ci;
    return 1;
}

/* One record: USER,ITEM (or the header's columns), or the header. */
static rk_status pr_record(void *ud, const rk_record *r, rk_error *err)
{
    pr_st *st = ud;
    rk_pairs *out = st->out;
    if (out->n == 0 && !st->header && pr_header(st, r)) return RK_OK;
    if (r->n != st->nf) {
        if (st->header)
            return rk_error_set(err, RK_E_PARSE, "%s:%lld: expected %d fields as in the header, found %d", st->path,
                                (long long)r->line, st->nf, r->n);
        return rk_error_set(err, RK_E_PARSE, "%s:%lld: expected USER,ITEM, found %d field%s (quote an id that holds "
                            "a comma; a file with more columns needs a header naming them)", st->path,
                            (long long)r->line, r->n, r->n == 1 ? "" : "s");
    }
    const char *uf = r->f[st->cu], *itf = r->f[st->ci];
    const size_t ul = r->len[st->cu], il = r->len[st->ci];
    if (ul == 0 || il == 0)
        return rk_error_set(err, RK_E_PARSE, "%s:%lld: empty %s id", st->path, (long long)r->line,
                            ul == 0 ? "user" : "item");
    const int32_t u = rk_ids_find(st->users, uf, ul), i = rk_ids_find(st->items, itf, il);
    if (!grow(out, &st->cap, &st->raw_cap, ul + il))
        return rk_error_set(err, RK_E_NOMEM, "out of memory reading %s", st->path);
    const int64_t o = out->raw_off[2 * out->n];
    memcpy(out->raw + o, uf, ul);
    memcpy(out->raw + o + (int64_t)ul, itf, il);
    out->raw_off[2 * out->n + 1] = o + (int64_t)ul;
    out->raw_off[2 * out->n + 2] = o + (int64_t)(ul + il);
    out->user[out->n] = u;
    out->item[out->n] = i;
    out->unknown_users += u < 0;
    out->unknown_items += i < 0;
    if ((u < 0 || i < 0) && out->first_unknown_line == 0) out->first_unknown_line = r->line;
    out->n++;
    return RK_OK;
}

rk_status rk_pairs_read(const char *path, const rk_idmap *users, const rk_idmap *items, rk_pairs *out,
                        rk_error *err)
{
    memset(out, 0, sizeof *out);
    pr_st st = {path, users, items, out, 1024, 16384, 0, 2, 0, 1};
    out->user = malloc((size_t)st.cap * sizeof *out->user);
    out->item = malloc((size_t)st.cap * sizeof *out->item);
    out->raw_off = malloc((size_t)(2 * st.cap + 1) * sizeof *out->raw_off);
    out->raw = malloc((size_t)st.raw_cap);
    rk_status s;
    if (out->user == NULL || out->item == NULL || out->raw_off == NULL || out->raw == NULL) {
        s = rk_error_set(err, RK_E_NOMEM, "out of memory reading %s", path);
    } else {
        out->raw_off[0] = 0;
        s = rk_records_read(path, pr_record, &st, &out->lines, err);
    }
    if (s != RK_OK) rk_pairs_free(out);
    return s;
}
