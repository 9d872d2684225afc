/* bench_model.h — the benchmark tools' way in: a rating file loaded with the
 * default options, duplicates resolved (last wins) and the model built with
 * item means (no baselines), as the job does for a plain run. */
#ifndef RK_BENCH_MODEL_H
#define RK_BENCH_MODEL_H

#include "rk_load.h"
#include "rk_model.h"

#include <stdio.h>

/* @return 0, or 3 with the reason on stderr after "tool: ". */
static inline int bench_load_model(const char *tool, const char *path, rk_dataset *ds, rk_model *m)
{
    rk_error err;
    rk_load_opts lo;
    rk_load_opts_default(&lo);
    const char *in[1] = {path};
    if (rk_load_dataset(in, 1, NULL, &lo, ds, &err) != RK_OK ||
        rk_triples_dedupe(&ds->train, rk_ids_count(ds->users), rk_ids_count(ds->items), RK_DUP_LAST, NULL, &err) !=
            RK_OK ||
        rk_model_build(m, &ds->train, rk_ids_count(ds->users), rk_ids_count(ds->items), 0, 0, 0, 1, &err) != RK_OK) {
        fprintf(stderr, "%s: %s\n", tool, err.msg);
        return 3;
    }
    return 0;
}

#endif /* RK_BENCH_MODEL_H */
