/* rk_sort_drop.c — ratings removed from the triples by a bitmap: the
 * duplicates the sort of rk_sort.c found, or those a sort elsewhere (the
 * GPU) found (rk_triples_resolve in rk_csr.h). */
#define _POSIX_C_SOURCE 200809L
#include "rk_csr.h"
#include "rk_omp.h"
#include "rk_sort_internal.h"

#include <stdlib.h>
#include <string.h>

#define RK_PAR_MIN 65536 /* below this many ratings, one thread */

/* Survivors before each 64-rating word of the drop bitmap. */
rk_status rk_sort_drop_prefix(const uint64_t *drop, int64_t nw, int64_t *before, int nt, rk_error *err)
{
    int64_t *part = calloc((size_t)nt + 1, sizeof *part);
    if (part == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory counting duplicates");
#pragma omp parallel num_threads(nt)
    {
        int c = rk_omp_thread_num(), T = rk_omp_num_threads();
        int64_t lo = nw * c / T, hi = nw * (c + 1) / T, run = 0;
        for (int64_t w = lo; w < hi; w++) run += 64 - __builtin_popcountll(drop[w]);
        part[c + 1] = run;
#pragma omp barrier
#pragma omp single
        for (int q = 0; q < T; q++) part[q + 1] += part[q];
        run = part[c];
        for (int64_t w = lo; w < hi; w++) {
            before[w] = run;
            run += 64 - __builtin_popcountll(drop[w]);
        }
    }
    free(part);
    return RK_OK;
}

/* Remove the dropped ratings from t, keeping file order (out of place, in
 * parallel: each word of the bitmap knows where its survivors go). */
rk_status rk_sort_compact(rk_triples *t, const uint64_t *drop, const int64_t *before, int64_t kept, int nt,
                                 rk_error *err)
{
    rk_triples o;
    RK_FORWARD(rk_triples_alloc(&o, kept, t->time != NULL, err));
    const int64_t n = t->n, nw = (n + 63) / 64;
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int64_t w = 0; w < nw; w++) {
        int64_t d = before[w], k1 = (w + 1) * 64 < n ? (w + 1) * 64 : n;
        for (int64_t k = w * 64; k < k1; k++) {
            if (drop[w] >> (k & 63) & 1) continue;
            o.user[d] = t->user[k];
            o.item[d] = t->item[k];
            o.rating[d] = t->rating[k];
            if (o.time != NULL) o.time[d] = t->time[k];
            d++;
        }
    }
    rk_triples_free(t);
    *t = o;
    return RK_OK;
}

rk_status rk_triples_resolve(rk_triples *t, const rk_dup_found *f, rk_error *err)
{
    const int64_t n = t->n, nw = (n + 63) / 64;
    for (int64_t k = 0; k < f->n_means; k++)
        if (f->mean_pos[k] < 0 || f->mean_pos[k] >= n)
            return rk_error_set(err, RK_E_ARG, "a mean for rating %lld of %lld", (long long)f->mean_pos[k],
                                (long long)n);
    for (int64_t k = 0; k < f->n_means; k++) t->rating[f->mean_pos[k]] = f->mean_val[k];
    if (f->removed == 0 || f->drop == NULL) return RK_OK;
    if (f->removed > n) return rk_error_set(err, RK_E_ARG, "%lld ratings removed of %lld", (long long)f->removed,
                                            (long long)n);
    const int nt = n < RK_PAR_MIN ? 1 : rk_omp_max_threads();
    int64_t *before = malloc((size_t)(nw + 1) * sizeof *before);
    if (before == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory removing duplicates");
    rk_status st = rk_sort_drop_prefix(f->drop, nw, before, nt, err);
    if (st == RK_OK) st = rk_sort_compact(t, f->drop, before, n - f->removed, nt, err);
    free(before);
    return st;
}

void rk_dup_found_free(rk_dup_found *f)
{
    if (f == NULL) return;
    free(f->drop);
    free(f->mean_pos);
    free(f->mean_val);
    memset(f, 0, sizeof *f);
}

