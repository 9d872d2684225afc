#include "rk_eval.h"

#include <math.h>
#include <string.h>

/* xoshiro256** seeded through splitmix64: the same stream on every platform. */
typedef struct rng { uint64_t s[4]; } rng;

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t rng_next(rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

static double rng_uniform(rng *r) { return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0); }

static void copy_row(rk_triples *dst, int64_t d, const rk_triples *src, int64_t s)
{
    dst->user[d] = src->user[s];
    dst->item[d] = src->item[s];
    dst->rating[d] = src->rating[s];
    if (dst->time != NULL) dst->time[d] = src->time[s];
}

rk_status rk_eval_holdout(const rk_triples *all, double frac, uint64_t seed,
                          rk_triples *train, rk_triples *test, rk_error *err)
{
    memset(train, 0, sizeof *train);
    memset(test, 0, sizeof *test);
    if (!(frac > 0.0 && frac < 1.0))
        return rk_error_set(err, RK_E_ARG, "the holdout fraction must be in (0, 1), got %g", frac);
    int64_t n = all->n, want = (int64_t)llround(frac * (double)n);
    if (want >= n) want = n - 1; /* keep at least one training rating */
    if (want < 0) want = 0;
    rk_status s = rk_triples_alloc(test, want, all->time != NULL, err);
    if (s == RK_OK) s = rk_triples_alloc(train, n - want, all->time != NULL, err);
    if (s != RK_OK) {
        rk_triples_free(test);
        rk_triples_free(train);
        return s;
    }
    rng r;
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) r.s[i] = splitmix64(&x);
    /* selection sampling (Knuth's algorithm S): exactly `want` of n, in order */
    int64_t picked = 0, kept = 0;
    for (int64_t t = 0; t < n; t++) {
        if ((double)(n - t) * rng_uniform(&r) < (double)(want - picked))
            copy_row(test, picked++, all, t);
        else
            copy_row(train, kept++, all, t);
    }
    test->n = picked;
    train->n = kept;
    return RK_OK;
}

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
