#include "rk_eval.h"
#include "rk_omp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void rk_eval_ratings(const rk_model *m, int64_t n, const int32_t *user,
                     const int32_t *item, const float *truth,
                     const double *pred, const int32_t *used,
                     rk_eval_result *out)
{
    double se = 0.0, ae = 0.0;
    int64_t fb = 0, uu = 0, ui = 0;
#pragma omp parallel for reduction(+ : se, ae, fb, uu, ui)
    for (int64_t t = 0; t < n; t++) {
        double d = pred[t] - (double)truth[t];
        se += d * d;
        ae += fabs(d);
        fb += used[t] == 0;
        uu += !rk_model_user_known(m, user[t]);
        ui += !rk_model_item_known(m, item[t]);
    }
    memset(out, 0, sizeof *out);
    out->n = n;
    out->rmse = n > 0 ? sqrt(se / (double)n) : 0.0;
    out->mae = n > 0 ? ae / (double)n : 0.0;
    out->fallbacks = fb;
    out->unknown_users = uu;
    out->unknown_items = ui;
}
