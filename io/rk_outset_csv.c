/* The CSV rows' writers of the output registry (rk_outset.h): rk_output's
 * row writers behind the registry's signatures, and the answers to --queries. */
#include "rk_outset.h"
#include "rk_output.h"

#include <errno.h>
#include <string.h>

rk_status rk_outset_neighbors_csv(FILE *fp, const void *in, rk_error *err)
{
    const rk_outset_lists *l = in;
    return rk_out_neighbors(fp, l->lists, l->ids, err);
}

/* --queries: the pairs as the file named them (an unknown id too), no rating. */
static rk_status answers_csv(FILE *fp, const rk_outset_preds *p, rk_error *err)
{
    fputs("user,item,rating,prediction,neighbors_used\n", fp);
    for (int64_t t = 0; t < p->n; t++) {
        char b[40], uf[RK_OUT_FIELD_MAX], itf[RK_OUT_FIELD_MAX];
        const char *r = p->raw + p->raw_off[2 * t];
        size_t ul = (size_t)(p->raw_off[2 * t + 1] - p->raw_off[2 * t]);
        size_t il = (size_t)(p->raw_off[2 * t + 2] - p->raw_off[2 * t + 1]);
        if (ul > RK_ID_MAX) ul = RK_ID_MAX; /* the query reader refuses longer ids */
        if (il > RK_ID_MAX) il = RK_ID_MAX;
        const int uq = (int)rk_out_csv_field(uf, r, ul), iq = (int)rk_out_csv_field(itf, r + ul, il);
        rk_out_double(b, sizeof b, p->pred[t]);
        fprintf(fp, "%.*s,%.*s,,%s,%d\n", uq, uf, iq, itf, b, p->used != NULL ? p->used[t] : 0);
    }
    if (ferror(fp)) {
        const char *path = rk_out_path_of(fp);
        return rk_error_set(err, RK_E_IO, "cannot write %s: %s", path != NULL ? path : "predictions.csv",
                            strerror(errno != 0 ? errno : EIO));
    }
    return RK_OK;
}

rk_status rk_outset_predictions_csv(FILE *fp, const void *in, rk_error *err)
{
    const rk_outset_preds *p = in;
    if (p->raw != NULL) return answers_csv(fp, p, err);
    return rk_out_predictions(fp, p->n, p->user, p->item, p->rating, p->pred, p->used, p->users, p->items, err);
}

rk_status rk_outset_recs_csv_open(void **w, FILE *fp, const rk_outset_ids *ids, rk_error *err)
{
    rk_out_recs *r = NULL;
    rk_status s = rk_out_recs_open(&r, fp, ids->users, ids->items, err);
    *w = r;
    return s;
}

rk_status rk_outset_recs_csv_put(void *w, const rk_topn_batch *b, rk_error *err)
{
    return rk_out_recs_write(w, b, err);
}

void rk_outset_recs_csv_close(void *w)
{
    rk_out_recs_free(w);
}

rk_status rk_outset_user_metrics_csv(FILE *fp, const void *in, rk_error *err)
{
    const rk_outset_users *u = in;
    fputs("user,relevant,listed,hits,precision,recall,ndcg,ap,rr\n", fp);
    for (int64_t t = 0; t < u->n; t++) {
        const rk_outset_user_row *r = &u->rows[t];
        char raw[RK_ID_MAX + 1], id[RK_OUT_FIELD_MAX + 1], v[5][40];
        int rl = rk_ids_format(u->users, r->user, raw, sizeof raw);
        id[rk_out_csv_field(id, raw, rl > 0 ? (size_t)rl : 0)] = '\0';
        rk_out_double(v[0], sizeof v[0], r->precision);
        rk_out_double(v[1], sizeof v[1], r->recall);
        rk_out_double(v[2], sizeof v[2], r->ndcg);
        rk_out_double(v[3], sizeof v[3], r->ap);
        rk_out_double(v[4], sizeof v[4], r->rr);
        fprintf(fp, "%s,%lld,%d,%d,%s,%s,%s,%s,%s\n", id, (long long)r->relevant, r->listed, r->hits, v[0], v[1],
                v[2], v[3], v[4]);
    }
    if (ferror(fp)) {
        const char *path = rk_out_path_of(fp);
        return rk_error_set(err, RK_E_IO, "cannot write %s: %s", path != NULL ? path : "user_metrics.csv",
                            strerror(errno != 0 ? errno : EIO));
    }
    return RK_OK;
}
