/* A slice of a streamed content formatted in memory (rk_outset.h): the
 * content's row writer on an open_memstream(3) stream. */
#define _POSIX_C_SOURCE 200809L
#include "rk_outset.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rk_outset_slice {
    const rk_outset_row *row;
    FILE *fp;       /* the memory stream */
    char *data;     /* its buffer (open_memstream's, valid after a flush) */
    size_t size;    /* its length (likewise) */
    size_t head;    /* the bytes the writer wrote when it opened */
    void *w;        /* the row's writer */
};

rk_status rk_outset_slice_open(const rk_outset_row *rows, int n_rows, rk_outset_content c, const rk_outset_ids *ids,
                               rk_outset_slice **sp, rk_error *err)
{
    *sp = NULL;
    const rk_outset_row *row = NULL;
    int n = 0;
    for (int i = 0; i < n_rows; i++)
        if (rows[i].content == c) {
            row = &rows[i];
            n++;
        }
    if (n != 1 || row->open == NULL)
        return rk_error_set(err, RK_E_ARG, "output content %d is not one streamed file: no slices", (int)c);
    rk_outset_slice *s = calloc(1, sizeof *s);
    RK_CHECK_ALLOC(s, err);
    s->row = row;
    s->fp = open_memstream(&s->data, &s->size);
    if (s->fp == NULL) {
        free(s);
        return rk_error_set(err, RK_E_NOMEM, "no memory stream for a slice of %s", row->name);
    }
    rk_status st = row->open(&s->w, s->fp, ids, err);
    if (st == RK_OK && fflush(s->fp) != 0)
        st = rk_error_set(err, RK_E_NOMEM, "out of memory formatting a slice of %s", row->name);
    if (st != RK_OK) {
        rk_outset_slice_free(s);
        return st;
    }
    s->head = s->size;
    *sp = s;
    return RK_OK;
}

rk_status rk_outset_slice_put(void *sp, const rk_topn_batch *b, rk_error *err)
{
    rk_outset_slice *s = sp;
    return s->row->put(s->w, b, err);
}

rk_status rk_outset_slice_bytes(rk_outset_slice *s, const unsigned char **data, size_t *bytes, rk_error *err)
{
    *data = NULL;
    *bytes = 0;
    if (fflush(s->fp) != 0 || ferror(s->fp))
        return rk_error_set(err, RK_E_NOMEM, "out of memory formatting a slice of %s", s->row->name);
    *data = (const unsigned char *)s->data + s->head;
    *bytes = s->size - s->head;
    return RK_OK;
}

void rk_outset_slice_free(rk_outset_slice *s)
{
    if (s == NULL) return;
    if (s->w != NULL) s->row->close(s->w);
    if (s->fp != NULL) fclose(s->fp);
    free(s->data);
    free(s);
}
