/* The data stage: load → duplicates and the user-major matrix (one sort) →
 * split → model (rk_data.h). */
#include "rk_data.h"
#include "rk_eval.h"
#include "rk_split.h"
#include "rk_omp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rk_data_free(rk_data *d)
{
    if (d == NULL) return;
    if (d->own_split_) {
        rk_triples_free(&d->train);
        rk_triples_free(&d->test);
    }
    rk_dataset_free(&d->ds);
    rk_model_free(&d->model);
    free(d->part);
    memset(d, 0, sizeof *d);
}

/* The training matrix from o->sort_csr, without the ratings of leave_out
 * (NULL: none), and t's repeated pairs resolved as the host's sort resolves
 * them: *taken = 1 when it took the sort, 0 when the host sorts (a failure
 * noted).  @return RK_OK, or what resolving t failed with. */
static rk_status sort_elsewhere(const rk_data_opts *o, rk_triples *t, const rk_dataset *ds, const uint64_t *leave_out,
                                rk_csr *by_user, int *taken, int64_t *removed, rk_error *err)
{
    *taken = 0;
    rk_error e;
    rk_dup_found found;
    memset(&found, 0, sizeof found); /* a hook that takes nothing may leave it */
    rk_error_clear(&e);
    rk_status s = o->sort_csr(o->sort_ud, t, ds->users, ds->items, leave_out, o->duplicates, &found, by_user, taken,
                              &e);
    if (s != RK_OK) {
        rk_dup_found_free(&found);
        *taken = 0;
        rk_note(o->load.note, o->load.note_ud, "the GPU's sort of the ratings failed (%s): sorting on the host",
                e.msg);
        return RK_OK;
    }
    if (*taken) {
        s = rk_triples_resolve(t, &found, err);
        if (s == RK_OK) *removed += found.removed;
    }
    rk_dup_found_free(&found);
    return s;
}

/* Duplicates resolved (CONTRACT.md §1) and, for the training ratings, the user-major
 * matrix of the survivors from the same sort (by_user NULL: only duplicates). */
static rk_status dedupe(const rk_data_opts *o, rk_triples *t, const rk_dataset *ds, const char *what,
                        rk_csr *by_user, int64_t *removed, rk_error *err)
{
    rk_dup_report rep;
    rk_status s = rk_triples_dedupe_csr(t, rk_ids_count(ds->users), rk_ids_count(ds->items), o->duplicates, NULL,
                                        by_user, NULL, &rep, err);
    if (s == RK_E_DUPLICATE) {
        char ub[RK_ID_MAX + 1], ib[RK_ID_MAX + 1];
        rk_ids_format(ds->users, rep.first_user, ub, sizeof ub);
        rk_ids_format(ds->items, rep.first_item, ib, sizeof ib);
        return rk_error_set(err, RK_E_DUPLICATE, "%s: user %s rated item %s more than once (--duplicates error)",
                            what, ub, ib);
    }
    if (s == RK_OK) *removed += rep.n_removed;
    return s;
}

rk_status rk_data_split(const rk_data_opts *o, rk_data *d, rk_error *err)
{
    const rk_triples *all = &d->train;
    if (!o->no_model || (o->folds <= 0 && o->split == RK_SPLIT_RATINGS)) return RK_OK;
    free(d->part);
    d->resampled = 1;
    d->part = malloc((size_t)(all->n > 0 ? all->n : 1) * sizeof *d->part);
    RK_CHECK_ALLOC(d->part, err);
    const int32_t n_users = rk_ids_count(d->ds.users);
    if (o->folds > 0) return rk_split_folds(all->n, o->folds, o->seed, d->part, err);
    if (o->split == RK_SPLIT_USER) return rk_split_user(all, n_users, o->split_frac, o->seed, d->part, NULL, err);
    if (o->split == RK_SPLIT_USERS_OUT)
        return rk_split_users_out(all, n_users, o->split_frac, RK_SPLIT_USERS_TEST_FRACTION, o->seed, d->part, NULL,
                                  err);
    if (all->time == NULL || !d->ds.train_report.has_time)
        return rk_error_set(err, RK_E_ARG, "--split temporal needs timestamps, and %s has none",
                            o->n_inputs == 1 ? o->inputs[0] : "the input");
    return rk_split_temporal(all, n_users, o->split_frac, d->part, NULL, err);
}

rk_status rk_data_load(const rk_data_opts *o, rk_data *d, rk_error *err)
{
    rk_status s;
    rk_csr by_user;
    uint64_t *held = NULL; /* the holdout's bits, kept for the split when the GPU sorts */
    double t0 = rk_omp_wtime();
    memset(d, 0, sizeof *d);
    memset(&by_user, 0, sizeof by_user);
    if (o->n_inputs < 1) return rk_error_set(err, RK_E_ARG, "no rating file given");
    if (o->test_path != NULL && o->holdout > 0.0)
        return rk_error_set(err, RK_E_ARG, "--test and --holdout cannot be used together");
    if (o->holdout != 0.0 && !(o->holdout > 0.0 && o->holdout < 1.0))
        return rk_error_set(err, RK_E_ARG, "--holdout must be in (0, 1)");
    if (o->no_model && (o->holdout > 0.0 || o->test_path != NULL))
        return rk_error_set(err, RK_E_ARG, "internal: a resampled run splits after the data stage");

    s = rk_load_dataset(o->inputs, o->n_inputs, o->test_path, &o->load, &d->ds, err);
    if (s != RK_OK) goto fail;
    d->t_read_parse = d->ds.train_report.read_parse_s + d->ds.test_report.read_parse_s;
    d->t_ids = d->ds.ids_s;
    if (o->implicit) { /* CONTRACT.md §6b: the rating pattern only */
        rk_triples *parts[2] = {&d->ds.train, &d->ds.test};
        for (int t = 0; t < 2; t++)
#pragma omp parallel for
            for (int64_t p = 0; p < parts[t]->n; p++) parts[t]->rating[p] = 1.0f;
    }

    /* one sort of the training ratings gives the survivors and their matrix;
     * progress in ratings, a step at a time: sort, split, item-major matrix */
    const int64_t n_all = d->ds.train.n + d->ds.test.n;
    RK_PROGRESS(o->progress, o->progress_ud, "CSR", 0, 3 * n_all, "ratings");
    double t_dd = rk_omp_wtime(), t_draw = 0.0;
    /* the sort elsewhere (the GPU) resolves repeated pairs as the host's
     * does, but beside a holdout it takes the ratings only when no pair
     * repeats: they stay as they are, so the draw over them is the one the
     * host's path makes after its sort, and its ratings are left out of the
     * matrix there (no pass over the matrix to drop them) */
    rk_split_draw h;
    s = RK_OK;
    if (!o->no_model && o->sort_csr != NULL) {
        if (o->holdout > 0.0) {
            held = malloc((size_t)((d->ds.train.n + 63) / 64 + 1) * sizeof *held); /* + 1: never malloc(0) */
            s = rk_split_holdout_plan_bits(d->ds.train.n, o->holdout, o->seed, &h, held, err);
            if (s != RK_OK) goto fail;
            t_draw = rk_omp_wtime() - t_dd;
        }
        if (o->holdout <= 0.0 || held != NULL)
            s = sort_elsewhere(o, &d->ds.train, &d->ds, held, &by_user, &d->sorted_elsewhere, &d->duplicates_removed,
                               err);
        if (s != RK_OK) goto fail;
    }
    if (!d->sorted_elsewhere)
        s = dedupe(o, &d->ds.train, &d->ds, o->n_inputs == 1 ? o->inputs[0] : "input",
                   o->no_model ? NULL : &by_user, &d->duplicates_removed, err);
    if (s == RK_OK && d->ds.test.n > 0)
        s = dedupe(o, &d->ds.test, &d->ds, o->test_path, NULL, &d->duplicates_removed, err);
    if (s != RK_OK) goto fail;

    /* the holdout: the triples are split, the matrix loses the held-out
     * entries (found by their pairs: the sort carries no positions) */
    RK_PROGRESS(o->progress, o->progress_ud, "CSR", n_all, 3 * n_all, "ratings");
    double t_split = rk_omp_wtime();
    d->t_dedupe = t_split - t_dd - t_draw;
    if (o->holdout > 0.0) {
        /* the host's sort may have removed repeated pairs: the draw is over its survivors */
        if (!d->sorted_elsewhere) s = rk_split_holdout_plan(d->ds.train.n, o->holdout, o->seed, &h, err);
        /* the training ratings stay where the load put them (no copy of
         * 98% of them): they move from ds to d */
        d->train = d->ds.train;
        memset(&d->ds.train, 0, sizeof d->ds.train);
        d->own_split_ = 1;
        if (s == RK_OK) /* the GPU's draw, over the same ratings, is not made again */
            s = rk_split_holdout_apply_inplace(&h, d->sorted_elsewhere ? held : NULL, &d->train, &d->test, err);
        if (s == RK_OK && !d->sorted_elsewhere) s = rk_split_holdout_csr(&by_user, &d->test, err);
        if (s != RK_OK) goto fail;
    } else {
        d->train = d->ds.train;
        d->test = d->ds.test;
    }

    RK_PROGRESS(o->progress, o->progress_ud, "CSR", 2 * n_all, 3 * n_all, "ratings");
    double t_model = rk_omp_wtime();
    d->t_split = t_model - t_split + t_draw;
    free(held);
    held = NULL;
    if (o->no_model) {
        s = rk_data_split(o, d, err);
        if (s != RK_OK) goto fail;
        goto done;
    }
    if (o->defer_item_major && !o->with_baselines)
        s = rk_model_from_csr_deferred(&d->model, &by_user, o->load.have_scale, o->load.scale_min,
                                       o->load.scale_max, err);
    else
        s = rk_model_from_csr(&d->model, &by_user, o->load.have_scale, o->load.scale_min, o->load.scale_max,
                              o->with_baselines, err);
    if (s != RK_OK) goto fail;
done:;
    double t1 = rk_omp_wtime();
    RK_PROGRESS(o->progress, o->progress_ud, "CSR", 3 * n_all, 3 * n_all, "ratings");
    d->t_model = t1 - t_model;
    d->t_total = t1 - t0;
    return RK_OK;
fail:
    free(held);
    rk_csr_free(&by_user);
    rk_data_free(d);
    return s;
}
