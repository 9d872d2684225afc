/* rk_api_eval.c — recknn_evaluate (recknn.h): the command's measures of a
 * fold (job/rk_job.c's fold_measure and its top-N tee) from a model in
 * memory: the test ratings as its data stage makes them, every test pair
 * predicted, every served user's list measured. */
#include "config.h"

#include "rk_api_internal.h"
#include "rk_eval.h"
#include "rk_popular.h"
#include "rk_rank.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Every test pair's prediction: the engine's for the model's users and
 * items, the mode's fallback for those of the test alone. */
static rk_status predict_all(recknn_model *m, const rk_triples *t, double *pred, int32_t *used, rk_error *err)
{
    const int32_t nu = m->m.by_user.n_rows, ni = m->m.by_item.n_rows;
    int64_t k = 0;
    for (int64_t p = 0; p < t->n; p++) k += t->user[p] < nu && t->item[p] < ni;
    int32_t *qu = malloc((size_t)(k > 0 ? k : 1) * sizeof *qu), *qi = malloc((size_t)(k > 0 ? k : 1) * sizeof *qi);
    double *qp = malloc((size_t)(k > 0 ? k : 1) * sizeof *qp);
    int32_t *qn = malloc((size_t)(k > 0 ? k : 1) * sizeof *qn);
    rk_status s = RK_OK;
    if (qu == NULL || qi == NULL || qp == NULL || qn == NULL)
        s = rk_error_set(err, RK_E_NOMEM, "out of memory for %lld test pairs", (long long)t->n);
    for (int64_t p = 0, x = 0; s == RK_OK && p < t->n; p++)
        if (t->user[p] < nu && t->item[p] < ni) {
            qu[x] = t->user[p];
            qi[x++] = t->item[p];
        }
    if (s == RK_OK) s = recknn_predict(m, qu, qi, k, qp, qn, err);
    for (int64_t p = 0, x = 0; s == RK_OK && p < t->n; p++) {
        if (t->user[p] < nu && t->item[p] < ni) {
            pred[p] = qp[x];
            used[p] = qn[x++];
        } else { /* outside the model: unknown to it, the fallback (user mode's means: μ, as recknn_predict) */
            pred[p] = m->by_user && m->ko.mode == RK_PREDICT_MEANS
                          ? rk_predict_clip(&m->m, m->m.mu)
                          : m->by_user ? rk_predict_fallback(rk_api_engine_model(m), m->ko.mode, t->item[p], t->user[p])
                                       : rk_predict_fallback(&m->m, m->ko.mode, t->user[p], t->item[p]);
            used[p] = 0;
        }
    }
    free(qu);
    free(qi);
    free(qp);
    free(qn);
    return s;
}

/* Every served user's list, from the model or the most-popular baseline, into the ranking measures. */
static rk_status rank_lists(recknn_model *m, const rk_triples *t, const recknn_data *test, int32_t n,
                            int most_popular, rk_rank_result *out, rk_error *err)
{
    const int32_t n_rank = n < test->n_items ? n : test->n_items;
    const int32_t ni = m->m.by_item.n_rows;
    rk_rank *r = NULL;
    RK_FORWARD(rk_rank_new(&r, t, test->n_users, test->n_items, n_rank > 0 ? n_rank : 1, m->relevance, err));
    rk_topn_opts to;
    memset(&to, 0, sizeof to);
    to.n = n_rank < ni ? n_rank : ni;
    to.sink = rk_rank_sink;
    to.sink_ud = r;
    to.threads = m->ko.threads;
    rk_api_progress(m, &to);
    rk_status s = RK_OK;
    if (to.n > 0 && m->served > 0) s = most_popular ? rk_popular_topn(&m->m, &to, NULL, err) : rk_api_topn(m, &to, err);
    if (s == RK_OK) rk_rank_finish(r, out);
    rk_rank_free(r);
    return s;
}

rk_status recknn_evaluate(recknn_model *m, const recknn_data *test, int32_t n, int most_popular, recknn_metrics *out,
                          rk_error *err)
{
    memset(out, 0, sizeof *out);
    if (n < 1) return rk_error_set(err, RK_E_ARG, "recknn_evaluate: n must be at least 1, got %d", n);
    if (m->approx)
        return rk_error_set(err, RK_E_ARG, "recknn_evaluate: a model of the ball cover's lists (approx rbc) makes no "
                            "predictions to measure (the command's --approx refuses --test and --holdout too)");
    const int32_t nu = m->m.by_user.n_rows, ni = m->m.by_item.n_rows;
    if (test->n_users < nu || test->n_items < ni)
        return rk_error_set(err, RK_E_ARG, "recknn_evaluate: the test set counts %d users and %d items, the model "
                            "%d and %d: its indices are the model's, then its own", test->n_users, test->n_items,
                            nu, ni);
    rk_triples t; /* the test ratings as the command keeps them */
    rk_status s = rk_api_ratings(test, m->implicit, m->duplicates, "test: ", &t, NULL, err);
    if (s != RK_OK) {
        rk_triples_free(&t);
        return s;
    }
    double *pred = malloc((size_t)(t.n > 0 ? t.n : 1) * sizeof *pred);
    int32_t *used = malloc((size_t)(t.n > 0 ? t.n : 1) * sizeof *used);
    if (pred == NULL || used == NULL)
        s = rk_error_set(err, RK_E_NOMEM, "out of memory for %lld predictions", (long long)t.n);
    if (s == RK_OK) s = predict_all(m, &t, pred, used, err);
    if (s == RK_OK) {
        rk_eval_result e;
        rk_eval_ratings(&m->m, t.n, t.user, t.item, t.rating, pred, used, &e);
        out->test_pairs = e.n;
        out->rmse = e.rmse;
        out->mae = e.mae;
        out->fallbacks = e.fallbacks;
        out->unknown_users = e.unknown_users;
        out->unknown_items = e.unknown_items;
    }
    rk_rank_result rr;
    if (s == RK_OK) s = rank_lists(m, &t, test, n, most_popular, &rr, err);
    if (s == RK_OK) {
        out->n = rr.n;
        out->relevance = rr.relevance;
        out->users = rr.users;
        out->precision = rr.precision;
        out->recall = rr.recall;
        out->ndcg = rr.ndcg;
        out->map = rr.map;
        out->mrr = rr.mrr;
        out->hit_rate = rr.hit_rate;
        out->coverage = rr.coverage;
        out->gini = rr.gini;
    }
    free(pred);
    free(used);
    rk_triples_free(&t);
    return s;
}
