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
    /* the errors summed in blocks of a fixed size, then the blocks in order:
     * the same bits for every thread count and run (an OpenMP reduction
     * combines the threads' sums in the order they finish); without memory
     * for the blocks' sums, one block */
    enum { BLOCK = 4096 };
    double one[2];
    double *part = malloc((size_t)((n + BLOCK - 1) / BLOCK + 1) * 2 * sizeof *part);
    const int64_t bs = part != NULL ? BLOCK : (n > 0 ? n : 1), nb = (n + bs - 1) / bs;
    double *pp = part != NULL ? part : one;
    double se = 0.0, ae = 0.0;
    int64_t fb = 0, uu = 0, ui = 0;
#pragma omp parallel for schedule(static) reduction(+ : fb, uu, ui)
    for (int64_t b = 0; b < nb; b++) {
        double bse = 0.0, bae = 0.0;
        const int64_t t1 = (b + 1) * bs < n ? (b + 1) * bs : n;
        for (int64_t t = b * bs; t < t1; t++) {
            double d = pred[t] - (double)truth[t];
            bse += d * d;
            bae += fabs(d);
            fb += used[t] == 0;
            uu += !rk_model_user_known(m, user[t]);
            ui += !rk_model_item_known(m, item[t]);
        }
        pp[2 * b] = bse;
        pp[2 * b + 1] = bae;
    }
    for (int64_t b = 0; b < nb; b++) se += pp[2 * b], ae += pp[2 * b + 1];
    free(part);
    memset(out, 0, sizeof *out);
    out->n = n;
    out->rmse = n > 0 ? sqrt(se / (double)n) : 0.0;
    out->mae = n > 0 ? ae / (double)n : 0.0;
    out->fallbacks = fb;
    out->unknown_users = uu;
    out->unknown_items = ui;
}
