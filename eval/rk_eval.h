/* rk_eval.h — rating metrics of held-out data (prefix rk_eval_).
 *
 * CONTRACT.md §6.  rk_eval_ratings computes RMSE, MAE and the fallback and unknown
 * counts over all test pairs.  The held-out data come from rk_split.h.
 */
#ifndef RK_EVAL_H
#define RK_EVAL_H

#include <stdint.h>
#include "rk_status.h"
#include "rk_csr.h"
#include "rk_model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rk_eval_result {
    int64_t n;              /* test pairs */
    double rmse;
    double mae;
    int64_t fallbacks;      /* predictions with no neighbour used */
    int64_t unknown_users;  /* test pairs whose user has no training rating */
    int64_t unknown_items;  /* test pairs whose item has no training rating */
} rk_eval_result;

/*! rk_eval_ratings() : metrics of n predictions pred[] against truth[]
 *  (used[] = neighbours aggregated; user/item to count unknowns in m). */
void rk_eval_ratings(const rk_model *m, int64_t n, const int32_t *user,
                     const int32_t *item, const float *truth,
                     const double *pred, const int32_t *used,
                     rk_eval_result *out);

#ifdef __cplusplus
}
#endif
#endif /* RK_EVAL_H */
