/* recknn-synth's model (synth_model.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "synth_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

void *sy_alloc(size_t n, size_t size)
{
    if (n == 0) n = 1;
    if (n > SIZE_MAX / size) return NULL;
    return malloc(n * size);
}

/* Vose alias table over w[0..n): prob[j] and idx[j] (positions in w).  -1 when out of memory. */
static int sy_alias_fill(const double *w, uint32_t n, uint32_t *prob, uint32_t *idx)
{
    uint32_t *small = sy_alloc(n, sizeof *small), *large = sy_alloc(n, sizeof *large);
    double *p = sy_alloc(n, sizeof *p), total = 0;
    if (!small || !large || !p) {
        free(small); free(large); free(p);
        return -1;
    }
    for (uint32_t i = 0; i < n; i++) total += w[i];
    uint32_t ns = 0, nl = 0;
    for (uint32_t i = 0; i < n; i++) {
        p[i] = w[i] * n / total;
        if (p[i] < 1.0) small[ns++] = i; else large[nl++] = i;
    }
    while (ns > 0 && nl > 0) {
        uint32_t s = small[--ns], l = large[nl - 1];
        prob[s] = p[s] > 0 ? (uint32_t)(p[s] * 4294967296.0) : 0;  /* rounding can make p < 0 */
        idx[s] = l;
        p[l] -= 1.0 - p[s];
        if (p[l] < 1.0) { nl--; small[ns++] = l; }
    }
    while (nl > 0) { uint32_t l = large[--nl]; prob[l] = UINT32_MAX; idx[l] = l; }
    while (ns > 0) { uint32_t s = small[--ns]; prob[s] = UINT32_MAX; idx[s] = s; }
    free(small); free(large); free(p);
    return 0;
}

/* The alias table of the popularity weights over the whole catalogue. */
int sy_build_alias(sy_model *m)
{
    m->alias_prob = sy_alloc(m->n_items, sizeof *m->alias_prob);
    m->alias_idx = sy_alloc(m->n_items, sizeof *m->alias_idx);
    if (!m->alias_prob || !m->alias_idx) return -1;
    return sy_alias_fill(m->weight, m->n_items, m->alias_prob, m->alias_idx);
}

/* --communities: items grouped by community (a counting sort, ascending index within one), and
 * an alias table per community over the same popularity weights. */
int sy_make_communities(sy_model *m)
{
    uint32_t n = m->n_items, C = m->n_comm;
    if (C == 0) return 0;
    m->comm_off = calloc((size_t)C + 1, sizeof *m->comm_off);
    m->comm_items = sy_alloc(n, sizeof *m->comm_items);
    m->comm_prob = sy_alloc(n, sizeof *m->comm_prob);
    m->comm_alias = sy_alloc(n, sizeof *m->comm_alias);
    uint32_t *of = sy_alloc(n, sizeof *of), *fill = calloc((size_t)C + 1, sizeof *fill);
    double *w = sy_alloc(n, sizeof *w);
    int rc = 0;
    if (!m->comm_off || !m->comm_items || !m->comm_prob || !m->comm_alias || !of || !fill || !w) rc = -1;
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        of[i] = sy_community(m->seed, SY_SALT_ITEM_COMM, i, C);
        m->comm_off[of[i] + 1]++;
    }
    for (uint32_t c = 0; rc == 0 && c < C; c++) m->comm_off[c + 1] += m->comm_off[c];
    for (uint32_t i = 0; rc == 0 && i < n; i++) m->comm_items[m->comm_off[of[i]] + fill[of[i]]++] = i;
    for (uint32_t c = 0; rc == 0 && c < C; c++) {
        uint32_t lo = m->comm_off[c], cn = m->comm_off[c + 1] - lo;
        if (cn == 0) continue;
        for (uint32_t t = 0; t < cn; t++) w[t] = m->weight[m->comm_items[lo + t]];
        rc = sy_alias_fill(w, cn, m->comm_prob + lo, m->comm_alias + lo);
    }
    free(of); free(fill); free(w);
    return rc;
}

/* Items: sparse increasing ids, popularity, biases, factors. */
int sy_make_items(sy_model *m)
{
    uint32_t n = m->n_items;
    sy_rng r;
    sy_rng_seed(&r, m->seed, SY_STREAM_ITEMS);
    m->item_id = sy_alloc(n, sizeof *m->item_id);
    m->item_bias = sy_alloc(n, sizeof *m->item_bias);
    m->item_fac = sy_alloc((size_t)n * SY_DIM, sizeof *m->item_fac);
    m->weight = sy_alloc(n, sizeof *m->weight);
    if (!m->item_id || !m->item_bias || !m->item_fac || !m->weight) return -1;
    uint64_t id = 0;
    for (uint32_t i = 0; i < n; i++) {
        /* 60% consecutive ids, else a gap with mean 9: about 4.6 ids per item, like ML-20M's movieId. */
        id += 1;
        if (sy_unif(&r) >= 0.6) id += (uint64_t)(-9.0 * log(sy_unif_pos(&r)));
        m->item_id[i] = id;
        double zp = sy_normal(&r);
        double wt = exp(m->pop_sd * zp);
        m->weight[i] = wt / (1.0 + wt / m->pop_cap);
        m->item_bias[i] = (float)(SY_ITEM_BIAS_SD * sy_normal(&r) + SY_ITEM_BIAS_POP * zp);
        for (int d = 0; d < SY_DIM; d++) m->item_fac[(size_t)i * SY_DIM + d] = (float)sy_normal(&r);
    }
    return sy_build_alias(m);
}

/* Ratings per user: a floor, the rest in proportion to lognormal weights (water-filled under a
 * cap), remainders handed out one by one; the sum is exactly n_ratings. */
int sy_make_counts(sy_model *m)
{
    uint32_t n = m->n_users;
    uint64_t per = m->n_ratings / n;
    uint32_t base = per / 3 < SY_MIN_PER_USER ? (uint32_t)(per / 3) : SY_MIN_PER_USER;
    if (base < 1) base = 1;
    if (base > m->n_items) base = m->n_items;
    uint32_t cap = m->n_items - m->n_items / 10;
    if (cap < base || (uint64_t)cap * n < m->n_ratings) cap = m->n_items;
    double *w = sy_alloc(n, sizeof *w);
    m->count = sy_alloc(n, sizeof *m->count);
    if (!w || !m->count) { free(w); return -1; }
    sy_rng r;
    sy_rng_seed(&r, m->seed, SY_STREAM_USERS);
    for (uint32_t u = 0; u < n; u++) w[u] = exp(SY_ACTIVITY_SD * sy_normal(&r));
    double extra = (double)(m->n_ratings - (uint64_t)base * n), room = cap - base, lo = 0, hi = 1;
    for (;;) {  /* find hi with sum(min(room, hi w)) >= extra */
        double s = 0;
        for (uint32_t u = 0; u < n; u++) s += fmin(room, hi * w[u]);
        if (s >= extra || hi > 1e300) break;
        lo = hi; hi *= 2;
    }
    for (int it = 0; it < 64; it++) {
        double mid = 0.5 * (lo + hi), s = 0;
        for (uint32_t u = 0; u < n; u++) s += fmin(room, mid * w[u]);
        if (s > extra) hi = mid; else lo = mid;
    }
    uint64_t sum = 0;
    for (uint32_t u = 0; u < n; u++) {
        double e = floor(fmin(room, lo * w[u]));
        m->count[u] = base + (uint32_t)e;
        sum += m->count[u];
    }
    free(w);
    uint32_t u = sy_below(&r, n);
    while (sum < m->n_ratings) {  /* one pass or a few: sum >= target minus n */
        if (m->count[u] < cap) { m->count[u]++; sum++; }
        if (++u == n) u = 0;
    }
    while (sum > m->n_ratings) {  /* not expected (lo undershoots), kept for safety */
        if (m->count[u] > base) { m->count[u]--; sum--; }
        if (++u == n) u = 0;
    }
    m->max_count = 0;
    for (u = 0; u < n; u++) if (m->count[u] > m->max_count) m->max_count = m->count[u];
    return 0;
}

/* Coverage: when R >= M, item i is forced on one user drawn by activity, so every id occurs. */
int sy_make_cover(sy_model *m)
{
    uint32_t n = m->n_users;
    m->forced_off = calloc((size_t)n + 1, sizeof *m->forced_off);
    if (!m->forced_off) return -1;
    if (m->n_ratings < m->n_items) return 0;
    uint64_t *cum = sy_alloc(n, sizeof *cum);
    uint32_t *owner = sy_alloc(m->n_items, sizeof *owner), *fill = calloc(n, sizeof *fill);
    m->forced = sy_alloc(m->n_items, sizeof *m->forced);
    if (!cum || !owner || !fill || !m->forced) { free(cum); free(owner); free(fill); return -1; }
    uint64_t c = 0;
    for (uint32_t u = 0; u < n; u++) { c += m->count[u]; cum[u] = c; }
    sy_rng r;
    sy_rng_seed(&r, m->seed, SY_STREAM_COVER);
    for (uint32_t i = 0; i < m->n_items; i++) {
        uint32_t u = 0;
        for (int tries = 0; tries < 16; tries++) {
            uint64_t x = (uint64_t)(sy_unif(&r) * (double)c);
            uint32_t lo = 0, hi = n - 1;
            while (lo < hi) { uint32_t mid = lo + (hi - lo) / 2; if (cum[mid] > x) hi = mid; else lo = mid + 1; }
            u = lo;
            if (fill[u] < m->count[u] / 2) break;
        }
        while (fill[u] >= m->count[u]) if (++u == n) u = 0;  /* exists: sum(count) >= n_items */
        fill[u]++;
        owner[i] = u;
    }
    for (uint32_t u = 0; u < n; u++) m->forced_off[u + 1] = m->forced_off[u] + fill[u];
    memset(fill, 0, (size_t)n * sizeof *fill);
    for (uint32_t i = 0; i < m->n_items; i++) {
        uint32_t u = owner[i];
        m->forced[m->forced_off[u] + fill[u]++] = i;
    }
    free(cum); free(owner); free(fill);
    return 0;
}

/* Blocks of consecutive users with about SY_BLOCK_RATINGS ratings each. */
int sy_make_blocks(sy_model *m)
{
    uint64_t nb = m->n_ratings / SY_BLOCK_RATINGS + 2;
    if (nb > (uint64_t)m->n_users + 1) nb = (uint64_t)m->n_users + 1;
    m->block_start = sy_alloc((size_t)nb + 1, sizeof *m->block_start);
    if (!m->block_start) return -1;
    uint32_t b = 0, u = 0;
    m->block_start[0] = 0;
    while (u < m->n_users) {
        uint64_t acc = 0;
        while (u < m->n_users && acc < SY_BLOCK_RATINGS) {
            m->sum_sq += (double)m->count[u] * m->count[u];
            acc += m->count[u++];
        }
        m->block_start[++b] = u;
    }
    m->n_blocks = b;
    return 0;
}

void sy_model_free(sy_model *m)
{
    free(m->count); free(m->forced_off); free(m->forced); free(m->item_id); free(m->item_bias);
    free(m->item_fac); free(m->weight); free(m->alias_prob); free(m->alias_idx); free(m->block_start);
    free(m->comm_off); free(m->comm_items); free(m->comm_prob); free(m->comm_alias);
}
