/* rk_ptune.c — --tune-predict (rk_ptune.h, CONTRACT.md §6e): a grid of the
 * prediction model's options, each fitted on the validation-training part
 * and scored by the RMSE of its predictions of the held ratings. */
#include "rk_ptune.h"
#include "rk_tune.h"
#include "rk_omp.h"
#include "rk_eval.h"

#include <stdlib.h>
#include <string.h>

/* The grids (CONTRACT.md §6e). */
static const int32_t global_k[] = {40, 60};
static const double global_shrink[] = {200, 1000};
static const double global_lr[] = {0.003, 0.005, 0.01};
static const int32_t global_epochs[] = {10, 15, 25, 40, 60};
static const int32_t interp_k[] = {20, 40, 60};
static const double interp_beta[] = {50, 100, 200};
static const double interp_lambda[] = {0.01, 0.05, 0.2};
#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int put(rk_ptune_row *out, int cap, int n, const rk_knn_opts *base, int32_t k, int32_t max_k)
{
    if (n < cap) {
        memset(&out[n], 0, sizeof out[n]);
        out[n].k = k < max_k ? k : max_k;
        out[n].shrinkage = base->sim.shrinkage;
        out[n].pm = base->pm;
    }
    return n < cap;
}

int rk_ptune_grid(const rk_knn_opts *base, int32_t max_k, rk_ptune_row *out, int cap)
{
    int n = 0;
    if (max_k < 1) max_k = 1;
    if (base->mode == RK_PREDICT_GLOBAL) {
        for (int a = 0; a < N_OF(global_k); a++)
            for (int b = 0; b < N_OF(global_shrink); b++)
                for (int c = 0; c < N_OF(global_lr); c++)
                    for (int d = 0; d < N_OF(global_epochs); d++, n++)
                        if (put(out, cap, n, base, global_k[a], max_k)) {
                            out[n].shrinkage = global_shrink[b];
                            out[n].pm.global_lr = global_lr[c];
                            out[n].pm.global_epochs = global_epochs[d];
                        }
    } else if (base->mode == RK_PREDICT_INTERPOLATE) {
        for (int a = 0; a < N_OF(interp_k); a++)
            for (int b = 0; b < N_OF(interp_beta); b++)
                for (int c = 0; c < N_OF(interp_lambda); c++, n++)
                    if (put(out, cap, n, base, interp_k[a], max_k)) {
                        out[n].pm.interp_shrink = interp_beta[b];
                        out[n].pm.interp_reg = interp_lambda[c];
                    }
    }
    return n;
}

void rk_ptune_apply(const rk_ptune_row *row, rk_knn_opts *ko)
{
    ko->k = row->k;
    ko->sim.shrinkage = row->shrinkage;
    ko->pm = row->pm;
}

/* RMSE and MAE of pred against the held ratings, as an evaluation measures them (CONTRACT.md §6). */
static void score(const rk_model *vm, const rk_triples *va, const double *pred, const int32_t *used,
                  rk_ptune_row *row)
{
    rk_eval_result r;
    rk_eval_ratings(vm, va->n, va->user, va->item, va->rating, pred, used, &r);
    row->rmse = r.rmse;
    row->mae = r.mae;
}

/* Rows r .. of a group: global configurations that differ only in their
 * epochs, ascending (one training, checkpoints at each).  @return its size. */
static int group_of(const rk_ptune_row *rows, int n, int r, const rk_knn_opts *base)
{
    int e = r + 1;
    while (base->mode == RK_PREDICT_GLOBAL && e < n && rows[e].k == rows[r].k &&
           rows[e].shrinkage == rows[r].shrinkage && rows[e].pm.global_lr == rows[r].pm.global_lr &&
           rows[e].pm.global_reg == rows[r].pm.global_reg && rows[e].pm.global_decay == rows[r].pm.global_decay &&
           rows[e].pm.global_epochs > rows[e - 1].pm.global_epochs && e - r < 64)
        e++;
    return e - r;
}

/* The configurations rows[0 .. ng) of one group on the validation model: one
 * engine call (for global, one training to the group's last epochs, the
 * predictions at each row's epochs), each row's RMSE and MAE; ng rows. */
static rk_status one(const rk_model *vm, const rk_triples *va, const rk_knn_opts *base, rk_backend_seam *seam,
                     rk_ptune_row *rows, int ng, double *pred, double *at, int32_t *used, rk_error *err)
{
    const double t0 = rk_omp_wtime();
    rk_ptune_row *row = &rows[ng - 1];
    rk_knn_opts ko = *base;
    rk_ptune_apply(row, &ko);
    int32_t epochs[64];
    for (int c = 0; c < ng; c++) epochs[c] = rows[c].pm.global_epochs;
    if (ng > 1) {
        ko.pm.epochs_at = epochs;
        ko.pm.n_at = ng - 1;
        ko.pm.pred_at = at;
    }
    ko.rows = NULL;
    ko.n_rows = 0;
    ko.progress = NULL; /* the search reports per configuration */
    rk_queries q;
    memset(&q, 0, sizeof q);
    q.n = va->n;
    q.user = va->user;
    q.item = va->item;
    q.pred = pred;
    q.used = used;
    const rk_gpu_opts g = rk_backend_call_opts(seam);
    const rk_backend *be = rk_backend_current(seam);
    rk_status s = be->knn(vm, &ko, &g, NULL, &q, NULL, NULL, NULL, err);
    if (be->gpu && rk_backend_fall_back(seam, s, "the GPU engine (--tune-predict)", err))
        s = rk_backend_current(seam)->knn(vm, &ko, &g, NULL, &q, NULL, NULL, NULL, err);
    if (s != RK_OK) return s;
    for (int c = 0; c + 1 < ng; c++) score(vm, va, at + (int64_t)c * va->n, used, &rows[c]);
    score(vm, va, pred, used, row);
    for (int c = 0; c < ng; c++) rows[c].seconds = (rk_omp_wtime() - t0) / ng; /* the group's time, shared */
    return RK_OK;
}

rk_status rk_ptune_run(const rk_model *m, const rk_knn_opts *base, double fraction, uint64_t seed,
                       rk_backend_seam *seam, rk_ptune_result *out, rk_error *err)
{
    const double t0 = rk_omp_wtime();
    memset(out, 0, sizeof *out);
    const int32_t ni = m->by_item.n_rows > 0 ? m->by_item.n_rows : m->by_user.n_cols;
    const int n = rk_ptune_grid(base, ni - 1, NULL, 0);
    if (n == 0)
        return rk_error_set(err, RK_E_ARG, "--tune-predict searches the options of --predict interpolate or global");
    out->rows = calloc((size_t)n, sizeof *out->rows);
    RK_CHECK_ALLOC(out->rows, err);
    out->n_rows = rk_ptune_grid(base, ni - 1, out->rows, n);
    rk_csr tr;
    rk_triples va;
    rk_model vm;
    memset(&vm, 0, sizeof vm);
    rk_status s = rk_tune_split(m, fraction, seed, &tr, &va, err);
    if (s == RK_OK && va.n == 0) {
        rk_csr_free(&tr);
        s = rk_error_set(err, RK_E_ARG, "--tune-predict: no user has two training ratings, so nothing can be "
                         "validated");
    } else if (s == RK_OK) {
        out->train_ratings = tr.nnz;
        out->val_ratings = va.n;
        s = rk_model_from_csr(&vm, &tr, 1, m->rmin, m->rmax, 1, err);
    }
    out->t_split = rk_omp_wtime() - t0;
    int gmax = 1; /* the largest group: its checkpoints' predictions */
    for (int r = 0, g; r < out->n_rows; r += g)
        if ((g = group_of(out->rows, out->n_rows, r, base)) > gmax) gmax = g;
    const size_t nv = (size_t)(va.n > 0 ? va.n : 1);
    double *pred = malloc(nv * sizeof *pred), *at = malloc(nv * (size_t)gmax * sizeof *at);
    int32_t *used = malloc(nv * sizeof *used);
    if (s == RK_OK && (pred == NULL || at == NULL || used == NULL))
        s = rk_error_set(err, RK_E_NOMEM, "out of memory for %lld validation predictions", (long long)va.n);
    for (int r = 0; r < out->n_rows && s == RK_OK;) {
        const int g = group_of(out->rows, out->n_rows, r, base);
        if (base->progress != NULL &&
            base->progress(base->progress_ud, "tune-predict", (double)r, (double)out->n_rows, "configurations") != 0)
            s = rk_error_set(err, RK_E_CANCELLED, "--tune-predict: stopped by the caller's progress callback");
        if (s == RK_OK) s = one(&vm, &va, base, seam, &out->rows[r], g, pred, at, used, err);
        for (int c = r; c < r + g && s == RK_OK; c++)
            if (out->rows[c].rmse < out->rows[out->best].rmse) out->best = c;
        r += g;
    }
    free(at);
    free(pred);
    free(used);
    rk_model_free(&vm);
    rk_triples_free(&va);
    out->t_total = rk_omp_wtime() - t0;
    if (s != RK_OK) rk_ptune_free(out);
    return s;
}

void rk_ptune_free(rk_ptune_result *r)
{
    free(r->rows);
    memset(r, 0, sizeof *r);
}
