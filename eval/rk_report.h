/* rk_report.h — report.html: one self-contained page about a run
 * (prefix rk_report_).
 *
 * Inline SVG and CSS only: no script, font or image from elsewhere, so the
 * page opens offline and in a mail.  Sections: the run (command, options,
 * data counts, device), a time bar per stage, the prediction errors (a
 * histogram of prediction − rating and RMSE per true rating value), the
 * neighbour lists (distributions of similarity and support, list lengths),
 * the folds (rating metrics per fold, mean ± sd), the ranking metrics beside
 * the popularity baseline, and how concentrated the recommendations are
 * (items by times recommended, coverage and Gini).  Sections without data
 * (no test set, no top-N, one fold) say so in one line instead of a figure.
 * The writer reads only what it is given; it never prints.
 */
#ifndef RK_REPORT_H
#define RK_REPORT_H

#include <stdint.h>
#include <stdio.h>
#include "rk_status.h"
#include "rk_eval.h"
#include "rk_knn.h"
#include "rk_rank.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rk_report_data {
    const char *command;          /* the command line, as one string (may be NULL) */
    int n_options;                /* option names and values, shown as a table */
    const char *const *option_name;
    const char *const *option_value;
    const char *device;           /* "cpu" or the GPU's name */
    int64_t users, items, ratings, train_ratings, test_ratings;
    int n_stages;                 /* the time bar: stage names and wall seconds */
    const char *const *stage_name;
    const double *stage_s;
    /* predictions of the test set shown (the last fold's); n_pred may be 0 */
    int64_t n_pred;
    const float *truth;           /* n_pred held-out ratings */
    const double *pred;           /* n_pred predictions */
    const rk_lists *lists;        /* neighbour lists (may be NULL) */
    /* folds: n_folds >= 1 when there was a test set, else 0 */
    int n_folds;
    const rk_eval_result *fold_eval;  /* n_folds */
    const rk_rank_result *fold_rank;  /* n_folds, or NULL without top-N */
    const rk_rank_result *fold_base;  /* n_folds, the popularity baseline, or NULL */
    const char *verdict;          /* the model beside the baseline, one sentence (may be NULL) */
    int verdict_below;            /* 1: the model ranks below the baseline: shown as a warning */
    /* --tune's table (n_tune 0: none): a label and the score of each configuration */
    int n_tune;
    const char *const *tune_label;
    const double *tune_score;
    int tune_best;
    const char *tune_metric;      /* the score's name */
    /* recommendations of the lists shown (the last fold's): times each item was recommended */
    int32_t n_items;              /* entries of item_counts (0: no top-N) */
    const int64_t *item_counts;
} rk_report_data;

/*! rk_report_write() : the page to fp (UTF-8), well-formed XML as well as
 *  HTML5: every string given is escaped (bytes that are not UTF-8 and control
 *  characters become U+FFFD), numbers that are not finite print as "n/a" and
 *  never reach a figure.  The figures (one <svg> each), by section: the time
 *  bar when the stages took some time; two for the errors when n_pred > 0
 *  (prediction − rating in bins of 0.25 over [−4, 4), closed below, outliers
 *  in the end bins; RMSE per true rating value, or per one of 10 equal bins
 *  when there are more than 20 values); for lists with items, the list
 *  lengths, and when some list has an entry the similarity (20 bins over
 *  [0, 1], or over the values' range when some lie outside it) and the
 *  support (bins 1, 2–3, 4–7, …); RMSE per fold when n_folds >= 2; the
 *  ranking means of the model (and the baseline) when fold_rank and
 *  n_folds >= 1; the concentration curve when item_counts sum to more than 0.
 *  Fold tables give mean and sample sd (n − 1; 0 for one fold).  The Gini
 *  index is computed from item_counts with rk_rank.h's formula.
 *  fp is flushed, not closed.  @return RK_OK, RK_E_ARG (fp or d NULL),
 *  RK_E_IO (a write failed: ferror or fflush), RK_E_NOMEM. */
rk_status rk_report_write(FILE *fp, const rk_report_data *d, rk_error *err);

#ifdef __cplusplus
}
#endif
#endif /* RK_REPORT_H */
