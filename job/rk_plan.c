/* Host memory of a run (rk_plan.h).  The per-item and per-rating sizes
 * follow the arrays the stages allocate: rk_model (two CSR orientations of
 * 4-byte index + 4-byte value), the CPU engine's per-thread rows (a 32-byte
 * accumulator at most, a similarity and a touched index per item), the
 * lists (index, similarity, support per entry), top-N (fixed-point list
 * weights, a sum and a touched index per item per thread). */
#include "rk_plan.h"

#include <stdio.h>

#define GB (1024.0 * 1024.0 * 1024.0)

const char *rk_plan_bytes_str(double b, char buf[32])
{
    if (b >= GB) snprintf(buf, 32, "%.2f GB", b / GB);
    else snprintf(buf, 32, "%.1f MB", b / (1024.0 * 1024.0));
    return buf;
}

double rk_plan_load_bytes(int64_t input_bytes)
{
    return RK_PLAN_LOAD_PER_INPUT_BYTE * (double)(input_bytes > 0 ? input_bytes : 0);
}

void rk_plan_host_estimate(const rk_plan_in *in, rk_plan_host *o)
{
    const double r = (double)in->ratings, u = (double)in->users, i = (double)in->items;
    const double triple = 12.0 + (in->with_time ? 8.0 : 0.0);
    o->data = r * triple + (in->folds > 0 ? r * (triple + 4.0) : 0.0); /* a fold's copies and the parts */
    o->model = 2.0 * r * 8.0 + (u + i + 2.0) * 8.0 + i * 16.0 + u * 8.0;
    o->engine = r * 8.0 * 2.0;                       /* values of both orientations, as the engine packs them */
    o->lists = i * (double)in->k * 12.0 + i * 4.0;
    o->per_thread = i * (32.0 + 8.0 + 4.0) + (in->top_n > 0 ? i * (8.0 + 4.0) : 0.0);
    o->topn = in->top_n > 0 ? i * (double)in->k * 8.0 + u * 4.0 + 8.0 * 1048576.0 : 0.0;
    o->predictions = (double)in->test * (8.0 + 4.0);
    o->threads = in->threads > 0 ? in->threads : 1;
    o->total = o->data + o->model + o->engine + o->lists + o->topn + o->predictions + o->per_thread * o->threads;
}

rk_status rk_plan_fit(const rk_plan_in *in, double limit_bytes, rk_plan_host *out, rk_error *err)
{
    rk_plan_in t = *in;
    for (t.threads = in->threads > 0 ? in->threads : 1; t.threads >= 1; t.threads--) {
        rk_plan_host_estimate(&t, out);
        if (out->total <= limit_bytes) return RK_OK;
    }
    t.threads = 1;
    rk_plan_host_estimate(&t, out);
    char a[32], b[32], c[32], d[32], e[32], f[32], g[32], h[32];
    return rk_error_set(err, RK_E_NOMEM,
                        "this run needs about %s of host memory even on one thread (ratings %s, model %s, engine %s, "
                        "lists %s, top-N %s, one thread's rows %s), and --memory-limit gives %s: raise "
                        "--memory-limit, or lower -k, --top-n or the data",
                        rk_plan_bytes_str(out->total, a), rk_plan_bytes_str(out->data, b),
                        rk_plan_bytes_str(out->model, c), rk_plan_bytes_str(out->engine, d),
                        rk_plan_bytes_str(out->lists, e), rk_plan_bytes_str(out->topn, f),
                        rk_plan_bytes_str(out->per_thread, g), rk_plan_bytes_str(limit_bytes, h));
}
