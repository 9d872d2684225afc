/* The lists and predictions of the parts of a shared-out engine stage,
 * exchanged among the MPI ranks (rk_job_internal.h, rk_job_spread.c). */
#include "config.h"
#include "rk_job_internal.h"

#include <stdlib.h>
#include <string.h>

/* This rank's lists, row after row of its items in index order: the
 * length, then the neighbours, similarities and supports. */
static rk_status pack_lists(const rk_lists *l, const int32_t *owner, int me, unsigned char **buf, size_t *bytes,
                            rk_error *err)
{
    size_t n = 0;
    for (int32_t i = 0; i < l->n_items; i++)
        if (owner[i] == me) n += sizeof(int32_t) + (size_t)l->len[i] * (2 * sizeof(int32_t) + sizeof(float));
    unsigned char *b = malloc(n > 0 ? n : 1), *at = b;
    RK_CHECK_ALLOC(b, err);
    for (int32_t i = 0; i < l->n_items; i++) {
        if (owner[i] != me) continue;
        const size_t c = (size_t)l->len[i], o = (size_t)i * (size_t)l->k;
        memcpy(at, &l->len[i], sizeof(int32_t));
        at += sizeof(int32_t);
        memcpy(at, l->nbr + o, c * sizeof(int32_t));
        at += c * sizeof(int32_t);
        memcpy(at, l->sim + o, c * sizeof(float));
        at += c * sizeof(float);
        memcpy(at, l->support + o, c * sizeof(int32_t));
        at += c * sizeof(int32_t);
    }
    *buf = b;
    *bytes = n;
    return RK_OK;
}

static rk_status unpack_lists(rk_lists *l, const int32_t *owner, int r, const unsigned char *at,
                              const unsigned char *end, rk_error *err)
{
    for (int32_t i = 0; i < l->n_items; i++) {
        if (owner[i] != r) continue;
        int32_t c;
        if ((size_t)(end - at) < sizeof c) goto short_;
        memcpy(&c, at, sizeof c);
        at += sizeof c;
        if (c < 0 || c > l->k || (size_t)(end - at) < (size_t)c * (2 * sizeof(int32_t) + sizeof(float))) goto short_;
        const size_t o = (size_t)i * (size_t)l->k;
        l->len[i] = c;
        memcpy(l->nbr + o, at, (size_t)c * sizeof(int32_t));
        at += (size_t)c * sizeof(int32_t);
        memcpy(l->sim + o, at, (size_t)c * sizeof(float));
        at += (size_t)c * sizeof(float);
        memcpy(l->support + o, at, (size_t)c * sizeof(int32_t));
        at += (size_t)c * sizeof(int32_t);
    }
    return RK_OK;
short_:
    return rk_error_set(err, RK_E_INTERNAL, "the lists received from rank %d are cut short", r);
}

/* Every rank's lists to every rank (to rank 0 alone when no one else reads them). */
rk_status rk_job_exchange_lists(const rk_job_spread_in *in, const int32_t *owner, int everyone, rk_error *err)
{
    const int R = rk_dist_size(in->dist), me = rk_dist_rank(in->dist);
    unsigned char *mine = NULL, *all = NULL;
    size_t bytes = 0;
    size_t *offs = malloc((size_t)(R + 1) * sizeof *offs);
    rk_status s = offs != NULL ? pack_lists(in->lists, owner, me, &mine, &bytes, err)
                               : rk_error_set(err, RK_E_NOMEM, "out of memory for %d offsets", R);
    s = rk_dist_agree(in->dist, s, err);
    if (s == RK_OK)
        s = everyone ? rk_dist_allgatherv(in->dist, mine, bytes, &all, offs, err)
                     : rk_dist_gatherv(in->dist, mine, bytes, 0, &all, offs, err);
    free(mine);
    if (s == RK_OK && all != NULL)
        for (int r = 0; r < R && s == RK_OK; r++)
            if (r != me) s = unpack_lists(in->lists, owner, r, all + offs[r], all + offs[r + 1], err);
    free(all);
    free(offs);
    return s;
}

/* Predictions of every rank to rank 0, in the order of the queries. */
rk_status rk_job_exchange_predictions(const rk_job_spread_in *in, const int32_t *owner, rk_error *err)
{
    const rk_queries *q = in->q;
    const int R = rk_dist_size(in->dist), me = rk_dist_rank(in->dist);
    typedef struct { double pred; int32_t used, pad; } answer;
    int64_t n = 0;
    for (int64_t t = 0; t < q->n; t++) n += owner[q->item[t]] == me;
    answer *mine = calloc((size_t)(n > 0 ? n : 1), sizeof *mine);
    size_t *offs = malloc((size_t)(R + 1) * sizeof *offs);
    unsigned char *all = NULL;
    rk_status s = mine != NULL && offs != NULL ? RK_OK : rk_error_set(err, RK_E_NOMEM, "out of memory for answers");
    if (s == RK_OK) {
        n = 0;
        for (int64_t t = 0; t < q->n; t++)
            if (owner[q->item[t]] == me) {
                mine[n].pred = q->pred[t];
                mine[n++].used = q->used[t];
            }
    }
    s = rk_dist_agree(in->dist, s, err);
    if (s == RK_OK) s = rk_dist_gatherv(in->dist, mine, (size_t)n * sizeof *mine, 0, &all, offs, err);
    if (s == RK_OK && me == 0) {
        for (int r = 1; r < R; r++) {
            const answer *a = (const answer *)(all + offs[r]);
            for (int64_t t = 0; t < q->n; t++)
                if (owner[q->item[t]] == r) {
                    q->pred[t] = a->pred;
                    q->used[t] = a->used;
                    a++;
                }
        }
    }
    free(all);
    free(mine);
    free(offs);
    return s;
}

