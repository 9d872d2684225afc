/* rk_api_model.c — saved models (recknn.h): a model into the command's model
 * file (io/rk_mfile.h, MODEL_FORMAT.md) with the ids of its indices, and back. */
#include "config.h"

#define _POSIX_C_SOURCE 200809L
#include "rk_api_internal.h"
#include "rk_mfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The id map of n indices named ids[] (NULL: the decimal indices), which
 * must come in the map's own order (the command's). */
static rk_status id_map(const char *const *ids, int32_t n, const char *what, rk_idmap **out, rk_error *err)
{
    *out = NULL;
    char **own = NULL;
    if (ids == NULL) {
        own = calloc((size_t)(n > 0 ? n : 1), sizeof *own);
        RK_CHECK_ALLOC(own, err);
        for (int32_t i = 0; i < n; i++) {
            char b[16];
            snprintf(b, sizeof b, "%d", i);
            if ((own[i] = strdup(b)) == NULL) break;
        }
    }
    const char *const *use = ids != NULL ? ids : (const char *const *)own;
    rk_status s = RK_OK;
    for (int32_t i = 0; i < n && s == RK_OK; i++)
        if (use[i] == NULL) s = rk_error_set(err, RK_E_NOMEM, "out of memory for the %s ids", what);
    if (s == RK_OK) s = rk_ids_from_strings(use, n, out, err);
    for (int32_t i = 0; s == RK_OK && i < n; i++)
        if (rk_ids_find(*out, use[i], strlen(use[i])) != i || rk_ids_count(*out) != n)
            s = rk_error_set(err, RK_E_ARG, "recknn_model_save: %s id '%s' (index %d) is repeated or out of the "
                             "command's order (integers ascending, else ascending bytes)", what, use[i], i);
    for (int32_t i = 0; own != NULL && i < n; i++) free(own[i]);
    free(own);
    if (s != RK_OK) {
        rk_ids_free(*out);
        *out = NULL;
    }
    return s;
}

rk_status recknn_model_save(const recknn_model *m, const char *path, const char *const *user_ids,
                            const char *const *item_ids, rk_error *err)
{
    if (m->by_user)
        return rk_error_set(err, RK_E_ARG, "recknn_model_save: a user-based model is not saved (the command's "
                            "--save-model refuses --by user too)");
    if (m->approx)
        return rk_error_set(err, RK_E_ARG, "recknn_model_save: a model of the ball cover's lists (approx rbc) is not "
                            "saved (the command's --save-model refuses --approx too)");
    rk_idmap *users = NULL, *items = NULL;
    rk_status s = RK_OK;
    /* a loaded model keeps its file's ids unless others are given */
    if (user_ids != NULL || m->ids[0] == NULL) s = id_map(user_ids, m->m.by_user.n_rows, "user", &users, err);
    if (s == RK_OK && (item_ids != NULL || m->ids[1] == NULL))
        s = id_map(item_ids, m->m.by_item.n_rows, "item", &items, err);
    if (s == RK_OK) {
        const rk_mfile_view v = {&m->m, &m->lists, users != NULL ? users : m->ids[0],
                                 items != NULL ? items : m->ids[1], &m->ko, m->ranked ? &m->rl : NULL, &m->rank,
                                 m->ko.mode == RK_PREDICT_GLOBAL ? &m->global : NULL};
        s = rk_mfile_save(path, &v, err);
    }
    rk_ids_free(users);
    rk_ids_free(items);
    return s;
}

rk_status recknn_model_load(const char *path, const recknn_options *o, recknn_model **out, rk_error *err)
{
    *out = NULL;
    rk_job_opts jo;
    if (o != NULL) jo = o->job;
    else rk_job_opts_default(&jo);
    recknn_model *M = calloc(1, sizeof *M);
    RK_CHECK_ALLOC(M, err);
    rk_mfile f;
    rk_status s = rk_mfile_read(path, &f, err);
    if (s != RK_OK) {
        free(M);
        return s;
    }
    /* the file's parts become the model's */
    M->m = f.model;
    M->lists = f.lists;
    M->ids[0] = f.users;
    M->ids[1] = f.items;
    M->ko = f.knn;
    M->ko.threads = jo.knn.threads;
    M->global = f.global; /* predict global's trained model, or zero */
    if (f.have_rank) {
        M->rl = f.rank_lists;
        M->rank = f.rank;
        M->ranked = 1;
    } else {
        rk_lists_free(&f.rank_lists);
    }
    M->implicit = jo.implicit;
    M->duplicates = jo.duplicates;
    M->relevance = jo.implicit ? 1.0 : jo.relevance;
    s = rk_api_start(&jo, M, err);
    if (s != RK_OK) {
        recknn_model_free(M);
        return s;
    }
    *out = M;
    return RK_OK;
}

int recknn_model_id(const recknn_model *m, int which, int32_t i, char *buf, size_t cap)
{
    if (which < 0 || which > 1 || m->ids[which] == NULL) {
        if (cap > 0) buf[0] = '\0';
        return -1;
    }
    return rk_ids_format(m->ids[which], i, buf, cap);
}
