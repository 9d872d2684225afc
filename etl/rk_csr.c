/* rk_csr.c — duplicate resolution, CSR build and transpose.
 *
 * Both the build and the transpose are stable counting sorts done in
 * parallel: each thread counts the keys of its contiguous share of the input,
 * the per-thread counts give every thread its own write position per key, and
 * the scatter keeps input order within a key.  The per-thread count tables
 * cost threads x keys; the thread count is cut when that would be large.
 * Input already sorted by (row, column), as MovieLens files are, is detected
 * first and copied straight through.  The transpose scatters by groups of
 * columns first when there are many (see there).  rk_triples_dedupe and
 * rk_csr_build are the reference for rk_sort.c, which the data stage uses.
 */
#define _POSIX_C_SOURCE 200809L
#include "rk_csr.h"
#include "rk_mem.h"
#include "rk_omp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RK_HIST_BYTES ((size_t)256 << 20) /* cap on the per-thread count tables */
#define RK_PAR_MIN 65536                  /* below this many entries, one thread */

static const char *const dup_names[] = {"last", "first", "mean", "error"};

rk_status rk_dup_policy_parse(const char *name, rk_dup_policy *out)
{
    for (int k = 0; k < 4; k++)
        if (name != NULL && strcmp(name, dup_names[k]) == 0) {
            *out = (rk_dup_policy)k;
            return RK_OK;
        }
    return RK_E_ARG;
}

const char *rk_dup_policy_name(rk_dup_policy p)
{
    return (unsigned)p < 4 ? dup_names[p] : "unknown";
}

rk_status rk_triples_alloc(rk_triples *t, int64_t n, int with_time, rk_error *err)
{
    size_t m = (size_t)(n > 0 ? n : 1);
    memset(t, 0, sizeof *t);
    if (n < 0) return rk_error_set(err, RK_E_ARG, "a negative number of triples");
    t->user = rk_mem_alloc(m * sizeof *t->user);
    t->item = rk_mem_alloc(m * sizeof *t->item);
    t->rating = rk_mem_alloc(m * sizeof *t->rating);
    if (with_time) t->time = rk_mem_alloc(m * sizeof *t->time);
    if (t->user == NULL || t->item == NULL || t->rating == NULL || (with_time && t->time == NULL)) {
        rk_triples_free(t);
        return rk_error_set(err, RK_E_NOMEM, "out of memory for %lld ratings", (long long)n);
    }
    t->n = n;
    return RK_OK;
}

void rk_triples_free(rk_triples *t)
{
    if (t == NULL) return;
    free(t->user);
    free(t->item);
    free(t->rating);
    free(t->time);
    memset(t, 0, sizeof *t);
}

void rk_csr_free(rk_csr *a)
{
    if (a == NULL) return;
    free(a->ptr);
    free(a->idx);
    free(a->val);
    memset(a, 0, sizeof *a);
}

/* Threads for a counting sort of n entries over nkeys keys. */
static int sort_threads(int64_t n, int64_t nkeys)
{
    int nt = rk_omp_max_threads();
    if (n < RK_PAR_MIN) return 1;
    while (nt > 1 && (size_t)nt * (size_t)(nkeys + 1) * sizeof(int64_t) > RK_HIST_BYTES) nt--;
    return nt < 1 ? 1 : nt;
}

static rk_status check_range(const rk_triples *t, int32_t n_users, int32_t n_items, rk_error *err)
{
    int64_t bad = t->n;
#pragma omp parallel for schedule(static) reduction(min : bad) if (t->n > RK_PAR_MIN)
    for (int64_t k = 0; k < t->n; k++)
        if ((t->user[k] < 0 || t->user[k] >= n_users || t->item[k] < 0 || t->item[k] >= n_items) && k < bad)
            bad = k;
    if (bad < t->n)
        return rk_error_set(err, RK_E_ARG, "rating %lld: (user %d, item %d) is outside %d x %d",
                            (long long)bad, t->user[bad], t->item[bad], n_users, n_items);
    return RK_OK;
}

/* 1 when (user, item) strictly increases through t. */
static int sorted_strict(const rk_triples *t)
{
    int ok = 1;
#pragma omp parallel for schedule(static) reduction(&& : ok) if (t->n > RK_PAR_MIN)
    for (int64_t k = 1; k < t->n; k++)
        ok = ok && (t->user[k - 1] < t->user[k] || (t->user[k - 1] == t->user[k] && t->item[k - 1] < t->item[k]));
    return ok;
}

/* Stable counting sort of 0..n-1 by key[]: ptr (nkeys + 1) and perm (n). */
static rk_status group_by(const int32_t *key, int64_t n, int32_t nkeys, int64_t **ptr_out,
                          int64_t **perm_out, rk_error *err)
{
    int nt = sort_threads(n, nkeys);
    int64_t *ptr = calloc((size_t)nkeys + 1, sizeof *ptr);
    int64_t *perm = rk_mem_alloc((size_t)(n > 0 ? n : 1) * sizeof *perm);
    int64_t *hist = calloc((size_t)nt * ((size_t)nkeys + 1), sizeof *hist);
    if (ptr == NULL || perm == NULL || hist == NULL) {
        free(ptr);
        free(perm);
        free(hist);
        return rk_error_set(err, RK_E_NOMEM, "out of memory sorting %lld ratings", (long long)n);
    }
#pragma omp parallel num_threads(nt)
    {
        int t = rk_omp_thread_num(), T = rk_omp_num_threads();
        int64_t lo = n * t / T, hi = n * (t + 1) / T;
        int64_t *h = hist + (size_t)t * ((size_t)nkeys + 1);
        for (int64_t k = lo; k < hi; k++) h[key[k]]++;
#pragma omp barrier
#pragma omp single
        {
            int64_t run = 0;
            for (int32_t k = 0; k < nkeys; k++) {
                ptr[k] = run;
                for (int q = 0; q < T; q++) {
                    int64_t c = hist[(size_t)q * ((size_t)nkeys + 1) + (size_t)k];
                    hist[(size_t)q * ((size_t)nkeys + 1) + (size_t)k] = run;
                    run += c;
                }
            }
            ptr[nkeys] = run;
        }
        for (int64_t k = lo; k < hi; k++) perm[h[key[k]]++] = k;
    }
    free(hist);
    *ptr_out = ptr;
    *perm_out = perm;
    return RK_OK;
}

/* ---- duplicates ---------------------------------------------------------------- */

rk_status rk_triples_dedupe(rk_triples *t, int32_t n_users, int32_t n_items,
                            rk_dup_policy policy, rk_dup_report *rep, rk_error *err)
{
    rk_dup_report local;
    if (rep == NULL) rep = &local;
    rep->n_removed = 0;
    rep->first_user = rep->first_item = -1;
    if ((unsigned)policy > RK_DUP_ERROR) return rk_error_set(err, RK_E_ARG, "unknown duplicate policy");
    RK_FORWARD(check_range(t, n_users, n_items, err));
    if (t->n < 2 || sorted_strict(t)) return RK_OK;

    int64_t *ptr, *perm;
    RK_FORWARD(group_by(t->user, t->n, n_users, &ptr, &perm, err));
    int nt = t->n < RK_PAR_MIN ? 1 : rk_omp_max_threads();
    size_t per = sizeof(int32_t) + sizeof(int64_t) + (policy == RK_DUP_MEAN ? sizeof(double) + sizeof(int64_t) : 0);
    while (nt > 1 && (size_t)nt * (size_t)n_items * per > RK_HIST_BYTES) nt--;
    uint8_t *keep = malloc((size_t)t->n);
    if (keep == NULL) {
        free(ptr);
        free(perm);
        return rk_error_set(err, RK_E_NOMEM, "out of memory resolving duplicates");
    }
    int64_t removed = 0, first_dup = t->n, oom = 0;
#pragma omp parallel num_threads(nt) reduction(+ : removed) reduction(min : first_dup) reduction(+ : oom)
    {
        size_t ni = (size_t)(n_items > 0 ? n_items : 1);
        int32_t *mark = malloc(ni * sizeof *mark);
        int64_t *slot = malloc(ni * sizeof *slot);
        double *sum = policy == RK_DUP_MEAN ? malloc(ni * sizeof *sum) : NULL;
        int64_t *cnt = policy == RK_DUP_MEAN ? malloc(ni * sizeof *cnt) : NULL;
        if (mark == NULL || slot == NULL || (policy == RK_DUP_MEAN && (sum == NULL || cnt == NULL))) {
            oom++;
        } else {
            for (size_t k = 0; k < ni; k++) mark[k] = -1;
#pragma omp for schedule(dynamic, 64)
            for (int32_t u = 0; u < n_users; u++) {
                for (int64_t p = ptr[u]; p < ptr[u + 1]; p++) {
                    int64_t e = perm[p];
                    int32_t it = t->item[e];
                    if (mark[it] != u) {
                        mark[it] = u;
                        slot[it] = e;
                        keep[e] = 1;
                        if (sum != NULL) {
                            sum[it] = t->rating[e];
                            cnt[it] = 1;
                        }
                        continue;
                    }
                    removed++;
                    if (e < first_dup) first_dup = e;
                    if (policy == RK_DUP_LAST) {
                        keep[slot[it]] = 0;
                        keep[e] = 1;
                        slot[it] = e;
                    } else {
                        keep[e] = 0;
                        if (sum != NULL) {
                            sum[it] += t->rating[e];
                            cnt[it]++;
                        }
                    }
                }
                if (sum != NULL)
                    for (int64_t p = ptr[u]; p < ptr[u + 1]; p++) {
                        int64_t e = perm[p];
                        int32_t it = t->item[e];
                        if (slot[it] == e && cnt[it] > 1) t->rating[e] = (float)(sum[it] / (double)cnt[it]);
                    }
            }
        }
        free(mark);
        free(slot);
        free(sum);
        free(cnt);
    }
    free(ptr);
    free(perm);
    if (oom > 0) {
        free(keep);
        return rk_error_set(err, RK_E_NOMEM, "out of memory resolving duplicates");
    }
    if (first_dup < t->n) {
        rep->first_user = t->user[first_dup];
        rep->first_item = t->item[first_dup];
    }
    if (removed > 0 && policy == RK_DUP_ERROR) {
        free(keep);
        return rk_error_set(err, RK_E_DUPLICATE, "duplicate rating: (user %d, item %d) is rated more than once",
                            rep->first_user, rep->first_item);
    }
    if (removed > 0) {
        int64_t w = 0;
        for (int64_t k = 0; k < t->n; k++) {
            if (!keep[k]) continue;
            t->user[w] = t->user[k];
            t->item[w] = t->item[k];
            t->rating[w] = t->rating[k];
            if (t->time != NULL) t->time[w] = t->time[k];
            w++;
        }
        t->n = w;
    }
    rep->n_removed = removed;
    free(keep);
    return RK_OK;
}

/* ---- CSR ------------------------------------------------------------------------ */

static rk_status csr_alloc(rk_csr *a, int32_t rows, int32_t cols, int64_t nnz, rk_error *err)
{
    memset(a, 0, sizeof *a);
    a->n_rows = rows;
    a->n_cols = cols;
    a->nnz = nnz;
    a->ptr = calloc((size_t)rows + 1, sizeof *a->ptr);
    a->idx = rk_mem_alloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *a->idx);
    a->val = rk_mem_alloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *a->val);
    if (a->ptr == NULL || a->idx == NULL || a->val == NULL) {
        rk_csr_free(a);
        return rk_error_set(err, RK_E_NOMEM, "out of memory for a %d x %d matrix with %lld entries",
                            rows, cols, (long long)nnz);
    }
    return RK_OK;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Sort one row by column; @return 1 when a column repeats. */
static int sort_row(int32_t *idx, float *val, int64_t n, uint64_t **tmp, int64_t *tmp_cap)
{
    int64_t k;
    for (k = 1; k < n && idx[k - 1] < idx[k]; k++) {
    }
    if (k >= n) return 0;
    if (n <= 24) {
        for (int64_t a = 1; a < n; a++) {
            int32_t ci = idx[a];
            float cv = val[a];
            int64_t b = a;
            for (; b > 0 && idx[b - 1] > ci; b--) {
                idx[b] = idx[b - 1];
                val[b] = val[b - 1];
            }
            idx[b] = ci;
            val[b] = cv;
        }
    } else {
        if (n > *tmp_cap) {
            uint64_t *nt = realloc(*tmp, (size_t)n * sizeof *nt);
            if (nt == NULL) return -1;
            *tmp = nt;
            *tmp_cap = n;
        }
        uint64_t *w = *tmp;
        for (int64_t a = 0; a < n; a++) {
            uint32_t bits;
            memcpy(&bits, &val[a], sizeof bits);
            w[a] = (uint64_t)(uint32_t)idx[a] << 32 | bits;
        }
        qsort(w, (size_t)n, sizeof *w, cmp_u64);
        for (int64_t a = 0; a < n; a++) {
            uint32_t bits = (uint32_t)w[a];
            idx[a] = (int32_t)(w[a] >> 32);
            memcpy(&val[a], &bits, sizeof bits);
        }
    }
    for (k = 1; k < n; k++)
        if (idx[k - 1] == idx[k]) return 1;
    return 0;
}

rk_status rk_csr_build(const rk_triples *t, int32_t n_users, int32_t n_items, rk_csr *out,
                       rk_error *err)
{
    memset(out, 0, sizeof *out);
    if (n_users < 0 || n_items < 0 || t->n < 0) return rk_error_set(err, RK_E_ARG, "negative matrix size");
    RK_FORWARD(check_range(t, n_users, n_items, err));
    RK_FORWARD(csr_alloc(out, n_users, n_items, t->n, err));
    const int64_t n = t->n;

    if (sorted_strict(t)) {
        int64_t *ptr = out->ptr;
#pragma omp parallel for schedule(static) if (n > RK_PAR_MIN)
        for (int64_t k = 0; k < n; k++) {
            out->idx[k] = t->item[k];
            out->val[k] = t->rating[k];
            if (k == 0 || t->user[k - 1] != t->user[k])
                for (int32_t u = k == 0 ? 0 : t->user[k - 1] + 1; u <= t->user[k]; u++) ptr[u] = k;
        }
        for (int32_t u = n > 0 ? t->user[n - 1] + 1 : 0; u <= n_users; u++) ptr[u] = n;
        return RK_OK;
    }

    int nt = sort_threads(n, n_users);
    int64_t *hist = calloc((size_t)nt * ((size_t)n_users + 1), sizeof *hist);
    if (hist == NULL) {
        rk_csr_free(out);
        return rk_error_set(err, RK_E_NOMEM, "out of memory sorting %lld ratings", (long long)n);
    }
    int64_t dup_row = n_users, oom = 0;
#pragma omp parallel num_threads(nt) reduction(min : dup_row) reduction(+ : oom)
    {
        int th = rk_omp_thread_num(), T = rk_omp_num_threads();
        int64_t lo = n * th / T, hi = n * (th + 1) / T;
        int64_t *h = hist + (size_t)th * ((size_t)n_users + 1);
        for (int64_t k = lo; k < hi; k++) h[t->user[k]]++;
#pragma omp barrier
#pragma omp single
        {
            int64_t run = 0;
            for (int32_t u = 0; u < n_users; u++) {
                out->ptr[u] = run;
                for (int q = 0; q < T; q++) {
                    int64_t *c = &hist[(size_t)q * ((size_t)n_users + 1) + (size_t)u];
                    int64_t v = *c;
                    *c = run;
                    run += v;
                }
            }
            out->ptr[n_users] = run;
        }
        for (int64_t k = lo; k < hi; k++) {
            int64_t d = h[t->user[k]]++;
            out->idx[d] = t->item[k];
            out->val[d] = t->rating[k];
        }
#pragma omp barrier
        uint64_t *tmp = NULL;
        int64_t tmp_cap = 0;
#pragma omp for schedule(dynamic, 256)
        for (int32_t u = 0; u < n_users; u++) {
            int64_t a = out->ptr[u];
            int r = sort_row(out->idx + a, out->val + a, out->ptr[u + 1] - a, &tmp, &tmp_cap);
            if (r < 0) oom++;
            else if (r > 0 && u < dup_row) dup_row = u;
        }
        free(tmp);
    }
    free(hist);
    if (oom > 0) {
        rk_csr_free(out);
        return rk_error_set(err, RK_E_NOMEM, "out of memory sorting rows");
    }
    if (dup_row < n_users) {
        int32_t item = -1;
        for (int64_t p = out->ptr[dup_row] + 1; p < out->ptr[dup_row + 1] && item < 0; p++)
            if (out->idx[p] == out->idx[p - 1]) item = out->idx[p];
        rk_csr_free(out);
        return rk_error_set(err, RK_E_DUPLICATE,
                            "duplicate rating: (user %d, item %d) appears more than once", (int)dup_row, item);
    }
    return RK_OK;
}

int64_t rk_csr_entry(const rk_csr *a, int32_t row, int32_t col)
{
    if (row < 0 || row >= a->n_rows) return -1;
    int64_t lo = a->ptr[row], hi = a->ptr[row + 1];
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (a->idx[mid] < col) lo = mid + 1;
        else hi = mid;
    }
    return lo < a->ptr[row + 1] && a->idx[lo] == col ? lo : -1;
}

void rk_csr_row_share(const rk_csr *a, int th, int T, int32_t *r0, int32_t *r1)
{
    int32_t bound[2];
    for (int e = 0; e < 2; e++) {
        int64_t want = a->nnz * (th + e) / T;
        int32_t lo = 0, hi = a->n_rows;
        while (lo < hi) { /* the first row whose start >= want */
            int32_t mid = lo + (hi - lo) / 2;
            if (a->ptr[mid] < want) lo = mid + 1;
            else hi = mid;
        }
        bound[e] = lo;
    }
    *r0 = th == 0 ? 0 : bound[0];
    *r1 = th == T - 1 ? a->n_rows : bound[1];
}

static int bitlen(uint64_t x)
{
    int b = 0;
    for (; x != 0; x >>= 1) b++;
    return b;
}

/* Each thread counts the columns of its share of the rows; the counts summed in column order are aᵀ's offsets. */
rk_status rk_csr_column_offsets(const rk_csr *a, int64_t *ptr, rk_error *err)
{
    const int32_t nc = a->n_cols;
    const int nt = sort_threads(a->nnz, nc);
    int64_t *cnt = calloc((size_t)nt * ((size_t)nc + 1), sizeof *cnt);
    if (cnt == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory counting a matrix's columns");
#pragma omp parallel num_threads(nt)
    {
        const int th = rk_omp_thread_num(), T = rk_omp_num_threads();
        int32_t r0, r1;
        rk_csr_row_share(a, th, T, &r0, &r1);
        int64_t *c = cnt + (size_t)th * ((size_t)nc + 1);
        for (int64_t p = a->ptr[r0]; p < a->ptr[r1]; p++) c[a->idx[p]]++;
    }
    int64_t run = 0;
    for (int32_t c = 0; c < nc; c++) {
        ptr[c] = run;
        for (int q = 0; q < nt; q++) run += cnt[(size_t)q * ((size_t)nc + 1) + (size_t)c];
    }
    ptr[nc] = run;
    free(cnt);
    return RK_OK;
}

#define RK_TR_GROUPS 7 /* at least 2^7 groups of columns in the first scatter, more for many threads */

/* The transpose is a stable counting sort of the entries by column.  With
 * many columns a direct scatter writes to one stream per column per thread
 * and misses the cache on nearly every entry; so the columns are grouped:
 * a first scatter sends (column's low bits, row) packed in 32 bits, with the
 * value, to its group's place in the output, a second pass sorts each group
 * (a few hundred columns) into place.  The groups' places are the output's
 * own: no scratch beyond one group per thread.  Fewer groups make a cheaper
 * first scatter, more balance the second pass over the threads. */
rk_status rk_csr_transpose(const rk_csr *a, rk_csr *out, rk_error *err)
{
    RK_FORWARD(csr_alloc(out, a->n_cols, a->n_rows, a->nnz, err));
    const int32_t nc = a->n_cols;
    const int rbits = bitlen(a->n_rows > 0 ? (uint64_t)a->n_rows - 1 : 0);
    int nt = sort_threads(a->nnz, nc);
    int64_t want = (int64_t)32 * nt; /* groups: 2^7 to 2^10, about 32 per thread */
    want = want < (1 << RK_TR_GROUPS) ? 1 << RK_TR_GROUPS : want > (8 << RK_TR_GROUPS) ? 8 << RK_TR_GROUPS : want;
    int lbits = nc > want ? bitlen((uint64_t)(nc - 1) / (uint64_t)want) : 0; /* columns per group: 2^lbits */
    if (lbits + rbits > 32) lbits = 0;
    const int64_t ng = lbits > 0 ? (((int64_t)nc - 1) >> lbits) + 1 : nc; /* groups of columns */
    int64_t *hist = calloc((size_t)nt * ((size_t)nc + 1), sizeof *hist);
    int64_t *goff = lbits > 0 ? malloc((size_t)nt * (size_t)ng * sizeof *goff) : NULL;
    int oom = hist == NULL || (lbits > 0 && goff == NULL);
    if (oom) {
        free(hist);
        free(goff);
        rk_csr_free(out);
        return rk_error_set(err, RK_E_NOMEM, "out of memory transposing a matrix");
    }
#pragma omp parallel num_threads(nt) reduction(+ : oom)
    {
        const int th = rk_omp_thread_num(), T = rk_omp_num_threads();
        int32_t r0, r1;
        rk_csr_row_share(a, th, T, &r0, &r1);
        int64_t *h = hist + (size_t)th * ((size_t)nc + 1);
        for (int64_t p = a->ptr[r0]; p < a->ptr[r1]; p++) h[a->idx[p]]++;
#pragma omp barrier
#pragma omp single
        {
            int64_t run = 0;
            if (lbits > 0) { /* in a group, thread 0's entries, then thread 1's...: a stable order */
                for (int64_t g = 0; g < ng; g++) {
                    const int32_t c0 = (int32_t)(g << lbits);
                    const int32_t c1 = c0 + (1 << lbits) < nc ? c0 + (1 << lbits) : nc;
                    for (int q = 0; q < T; q++) {
                        goff[(size_t)q * (size_t)ng + (size_t)g] = run;
                        for (int32_t c = c0; c < c1; c++) run += hist[(size_t)q * ((size_t)nc + 1) + (size_t)c];
                    }
                }
                run = 0;
            }
            for (int32_t c = 0; c < nc; c++) {
                out->ptr[c] = run;
                for (int q = 0; q < T; q++) {
                    int64_t *x = &hist[(size_t)q * ((size_t)nc + 1) + (size_t)c];
                    int64_t v = *x;
                    *x = run;
                    run += v;
                }
            }
            out->ptr[nc] = run;
        }
        if (lbits == 0) {
            for (int32_t r = r0; r < r1; r++)
                for (int64_t p = a->ptr[r]; p < a->ptr[r + 1]; p++) {
                    int64_t d = h[a->idx[p]]++;
                    out->idx[d] = r;
                    out->val[d] = a->val[p];
                }
        } else {
            int64_t *go = goff + (size_t)th * (size_t)ng;
            uint32_t *key = (uint32_t *)out->idx; /* int32 memory, read as unsigned */
            const uint32_t lmask = (1u << lbits) - 1;
            for (int32_t r = r0; r < r1; r++)
                for (int64_t p = a->ptr[r]; p < a->ptr[r + 1]; p++) {
                    uint32_t c = (uint32_t)a->idx[p];
                    int64_t d = go[c >> lbits]++;
                    key[d] = (c & lmask) << rbits | (uint32_t)r;
                    out->val[d] = a->val[p];
                }
        }
    }
    if (lbits > 0) {
        const uint32_t rmask = rbits >= 32 ? ~0u : (1u << rbits) - 1;
#pragma omp parallel num_threads(nt) reduction(+ : oom)
        {
            uint32_t *kb = NULL;
            float *vb = NULL;
            int64_t cap = 0;
            int64_t *cursor = malloc(((size_t)1 << lbits) * sizeof *cursor);
            if (cursor == NULL) oom++;
#pragma omp for schedule(dynamic, 1)
            for (int64_t g = 0; g < ng; g++) {
                if (cursor == NULL) continue;
                const int32_t c0 = (int32_t)(g << lbits);
                const int32_t c1 = c0 + (1 << lbits) < nc ? c0 + (1 << lbits) : nc;
                const int64_t s = out->ptr[c0], m = out->ptr[c1] - s;
                if (m == 0) continue; /* (and kb may still be NULL) */
                if (m > cap) {
                    free(kb);
                    free(vb);
                    cap = m + m / 4;
                    kb = malloc((size_t)cap * sizeof *kb);
                    vb = malloc((size_t)cap * sizeof *vb);
                    if (kb == NULL || vb == NULL) {
                        oom++;
                        cap = 0;
                        continue;
                    }
                }
                memcpy(kb, out->idx + s, (size_t)m * sizeof *kb);
                memcpy(vb, out->val + s, (size_t)m * sizeof *vb);
                for (int32_t c = c0; c < c1; c++) cursor[c - c0] = out->ptr[c];
                for (int64_t q = 0; q < m; q++) {
                    int64_t d = cursor[kb[q] >> rbits]++;
                    out->idx[d] = (int32_t)(kb[q] & rmask);
                    out->val[d] = vb[q];
                }
            }
            free(kb);
            free(vb);
            free(cursor);
        }
    }
    free(hist);
    free(goff);
    if (oom > 0) {
        rk_csr_free(out);
        return rk_error_set(err, RK_E_NOMEM, "out of memory transposing a matrix");
    }
    return RK_OK;
}

int64_t rk_csr_longest_row(const rk_csr *a)
{
    int64_t most = 0;
    for (int32_t r = 0; r < a->n_rows; r++)
        if (a->ptr[r + 1] - a->ptr[r] > most) most = a->ptr[r + 1] - a->ptr[r];
    return most;
}

int rk_csr_check(const rk_csr *a, char *why, size_t cap)
{
#define FAIL(...)                                                              \
    do {                                                                       \
        if (why != NULL && cap > 0) snprintf(why, cap, __VA_ARGS__);           \
        return -1;                                                             \
    } while (0)
    if (a == NULL) FAIL("no matrix");
    if (a->n_rows < 0 || a->n_cols < 0 || a->nnz < 0) FAIL("negative size");
    if (a->ptr == NULL) FAIL("ptr is NULL");
    if (a->nnz > 0 && (a->idx == NULL || a->val == NULL)) FAIL("idx or val is NULL");
    if (a->ptr[0] != 0) FAIL("ptr[0] = %lld, not 0", (long long)a->ptr[0]);
    if (a->ptr[a->n_rows] != a->nnz)
        FAIL("ptr[%d] = %lld, not nnz = %lld", a->n_rows, (long long)a->ptr[a->n_rows], (long long)a->nnz);
    for (int32_t r = 0; r < a->n_rows; r++) {
        if (a->ptr[r + 1] < a->ptr[r]) FAIL("ptr decreases at row %d", r);
        if (a->ptr[r + 1] > a->nnz) FAIL("ptr[%d] is beyond nnz", r + 1);
        for (int64_t p = a->ptr[r]; p < a->ptr[r + 1]; p++) {
            if (a->idx[p] < 0 || a->idx[p] >= a->n_cols)
                FAIL("row %d: column %d is outside [0, %d)", r, a->idx[p], a->n_cols);
            if (p > a->ptr[r] && a->idx[p] <= a->idx[p - 1])
                FAIL("row %d: columns %d, %d are not strictly ascending", r, a->idx[p - 1], a->idx[p]);
        }
    }
    if (why != NULL && cap > 0) why[0] = '\0';
    return 0;
#undef FAIL
}
