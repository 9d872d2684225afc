/* rk_mfile.c — writing model files (rk_mfile.h; the layout is MODEL_FORMAT.md)
 * and their checksum; rk_mfile_read.c reads them.
 *
 * The header, then one record per array, each hashed (XXH64, libxxhash) as
 * it is written in 64 KiB chunks, so that a chunk is hashed while in cache.
 * Header fields are written with shifts (any host); arrays are written as
 * they lie in memory, byte-swapped first on a big-endian host (a path
 * never exercised here: the build machines are little-endian).
 */
#define _POSIX_C_SOURCE 200809L
#include "rk_mfile_internal.h"
#include "rk_output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#define XXH_STATIC_LINKING_ONLY /* XXH64_state_t on the stack of the writer */
#include <xxhash.h>

/* ---- XXH64 ------------------------------------------------------------------- */

/* The checksum is libxxhash's XXH64 (Debian's libxxhash-dev), streamed: any
 * split of the input gives the one-shot value. */
uint64_t rk_mfile_hash(const void *p, size_t len, uint64_t seed)
{
    return (uint64_t)XXH64(p, len, (XXH64_hash_t)seed);
}

/* ---- writing ----------------------------------------------------------------- */

typedef struct wr {
    FILE *fp;
    const char *name;
    rk_error *err;
    rk_status st;
    XXH64_state_t h;
    uint64_t len; /* payload length of the open record */
} wr;

static void w_raw(wr *w, const void *p, size_t n)
{
    if (w->st != RK_OK || n == 0) return;
    errno = 0;
    if (fwrite(p, 1, n, w->fp) != n) {
        int e = errno;
        w->st = rk_error_set(w->err, RK_E_IO, "%s: write failed: %s", w->name,
                             e != 0 ? strerror(e) : "short write");
    }
}

static void w_put(wr *w, const void *p, size_t n)
{
    if (w->st != RK_OK) return;
    (void)XXH64_update(&w->h, p, n); /* fails only on a NULL state */
    w_raw(w, p, n);
}

/* n elements of elem bytes, little-endian, in chunks (hashed while cached). */
static void w_array(wr *w, const void *a, size_t n, size_t elem)
{
    const unsigned char *p = a;
    size_t left = n * elem;
#if RK_MF_BIG
    unsigned char stage[CHUNK];
#endif
    while (left > 0 && w->st == RK_OK) {
        size_t c = left < CHUNK ? left : CHUNK;
#if RK_MF_BIG
        memcpy(stage, p, c);
        swap_elems(stage, c / elem, elem);
        w_put(w, stage, c);
#else
        w_put(w, p, c);
#endif
        p += c, left -= c;
    }
}

static void w_begin(wr *w, int tag, uint64_t len)
{
    unsigned char h[REC_HEAD];
    memcpy(h, TAGS[tag], 4);
    put32(h + 4, 0);
    put64(h + 8, len);
    (void)XXH64_reset(&w->h, 0);
    w->len = len;
    w_put(w, h, sizeof h);
}

static void w_end(wr *w)
{
    static const unsigned char zeros[8];
    unsigned char c[8];
    w_put(w, zeros, (size_t)pad8(w->len));
    put64(c, (uint64_t)XXH64_digest(&w->h));
    w_raw(w, c, 8);
}

/* The ids of map as records of a one-byte length and the bytes; *out
 * malloc'ed, *len its size. */
static rk_status id_blob(const rk_idmap *m, const char *what, unsigned char **out, uint64_t *len, rk_error *err)
{
    char id[RK_ID_MAX + 1];
    int32_t n = rk_ids_count(m);
    uint64_t total = 0;
    *out = NULL;
    for (int32_t i = 0; i < n; i++) {
        int l = rk_ids_format(m, i, id, sizeof id);
        if (l < 1 || l > RK_ID_MAX || memchr(id, '\0', (size_t)l) != NULL)
            return rk_error_set(err, RK_E_ARG, "%s id %d cannot be saved (empty, too long or holding a NUL byte)",
                                what, i);
        total += 1 + (uint64_t)l;
    }
    unsigned char *b = malloc(total > 0 ? (size_t)total : 1);
    if (b == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory for the %s ids of a model file", what);
    uint64_t at = 0;
    for (int32_t i = 0; i < n; i++) {
        int l = rk_ids_format(m, i, id, sizeof id);
        b[at] = (unsigned char)l;
        memcpy(b + at + 1, id, (size_t)l);
        at += 1 + (uint64_t)l;
    }
    *out = b;
    *len = total;
    return RK_OK;
}

static int pm_ok(double x) { return isfinite(x) && x >= 0.0; }

static int all_finite(const double *a, size_t n)
{
    for (size_t x = 0; x < n; x++)
        if (!isfinite(a[x])) return 0;
    return 1;
}

/* What a saved file must satisfy that the writer can check cheaply: the
 * reader refuses the rest (RK_E_MODEL) anyway. */
static rk_status check_view(const rk_mfile_view *v, rk_error *err)
{
    char why[160];
    if (v == NULL || v->model == NULL || v->lists == NULL || v->users == NULL || v->items == NULL || v->knn == NULL)
        return rk_error_set(err, RK_E_ARG, "model file: a part of the model is missing");
    const rk_model *m = v->model;
    const rk_lists *l = v->lists;
    const rk_knn_opts *o = v->knn;
    const int32_t nu = m->by_user.n_rows, ni = m->by_user.n_cols;
    if (nu < 1 || ni < 1 || m->by_user.nnz < 1 || m->item_mean == NULL || m->bu == NULL || m->bi == NULL)
        return rk_error_set(err, RK_E_ARG, "model file: an empty model (%d users, %d items)", nu, ni);
    if (rk_csr_check(&m->by_user, why, sizeof why) != 0)
        return rk_error_set(err, RK_E_ARG, "model file: the training matrix is broken: %s", why);
    if (rk_ids_count(v->users) != nu || rk_ids_count(v->items) != ni)
        return rk_error_set(err, RK_E_ARG, "model file: %d user and %d item ids for a %d x %d model",
                            rk_ids_count(v->users), rk_ids_count(v->items), nu, ni);
    if (o->k < 1 || l->n_items != ni || l->k != o->k || l->len == NULL || l->nbr == NULL || l->sim == NULL ||
        l->support == NULL)
        return rk_error_set(err, RK_E_ARG, "model file: neighbour lists of the wrong shape (%d x %d, k %d, %d items)",
                            l->n_items, l->k, o->k, ni);
    if (!cells_ok(ni, o->k, 8 * (uint64_t)m->by_user.nnz))
        return rk_error_set(err, RK_E_ARG, "model file: k = %d is too large for %d items and %lld ratings", o->k,
                            ni, (long long)m->by_user.nnz);
    if (metric_code(o->sim.metric) == 0 || mode_code(o->mode) == 0 || o->sim.min_support < 0 || o->min_k < 0 ||
        !isfinite(o->sim.shrinkage) || o->sim.shrinkage < 0)
        return rk_error_set(err, RK_E_ARG, "model file: invalid options");
    if (!isfinite(m->mu) || !isfinite(m->rmin) || !isfinite(m->rmax) || m->rmin > m->rmax)
        return rk_error_set(err, RK_E_ARG, "model file: mu or the rating scale is not finite or inverted");
    const int32_t cap = o->k < ni - 1 ? o->k : ni - 1;
    for (int32_t i = 0; i < ni; i++)
        if (l->len[i] < 0 || l->len[i] > cap)
            return rk_error_set(err, RK_E_ARG, "model file: item %d's list has %d entries (at most %d)", i,
                                l->len[i], cap);
    if (v->rank_lists != NULL) {
        const rk_lists *rl = v->rank_lists;
        const rk_rankw_opts *ro = v->rank;
        if (ro == NULL || !rk_rankw_on(ro) || rl->n_items != ni || rl->k != ro->k || ro->k < 1 ||
            rl->len == NULL || !cells_ok(ni, ro->k, 8 * (uint64_t)m->by_user.nnz))
            return rk_error_set(err, RK_E_ARG, "model file: ranking lists of the wrong shape or without options");
        const int32_t rcap = ro->k < ni - 1 ? ro->k : ni - 1;
        for (int32_t i = 0; i < ni; i++)
            if (rl->len[i] < 0 || rl->len[i] > rcap)
                return rk_error_set(err, RK_E_ARG, "model file: item %d's ranking list has %d entries", i, rl->len[i]);
    }
    const rk_pmodel_opts *pm = &o->pm;
    if (rk_predict_is_model(o->mode) &&
        !(pm_ok(pm->interp_shrink) && pm_ok(pm->interp_reg) && pm_ok(pm->global_lr) && pm_ok(pm->global_reg) &&
          pm_ok(pm->global_decay) && pm->global_epochs >= 0))
        return rk_error_set(err, RK_E_ARG, "model file: invalid prediction model options");
    if (o->mode == RK_PREDICT_GLOBAL) {
        const rk_pmodel_global *g = v->global;
        if (g == NULL || g->n_users != nu || g->n_items != ni || g->k != o->k || g->bu == NULL || g->bi == NULL ||
            g->w == NULL || g->c == NULL)
            return rk_error_set(err, RK_E_ARG, "model file: predict global without its trained model");
        if (!all_finite(g->bu, (size_t)nu) || !all_finite(g->bi, (size_t)ni) ||
            !all_finite(g->w, (size_t)ni * (size_t)o->k) || !all_finite(g->c, (size_t)ni * (size_t)o->k))
            return rk_error_set(err, RK_E_ARG, "model file: the global model holds a weight that is not finite");
    }
    if (!m->have_baselines)
        for (int32_t u = 0; u < nu; u++)
            if (m->bu[u] != 0.0) return rk_error_set(err, RK_E_ARG, "model file: baselines without have_baselines");
    if (!m->have_baselines)
        for (int32_t i = 0; i < ni; i++)
            if (m->bi[i] != 0.0) return rk_error_set(err, RK_E_ARG, "model file: baselines without have_baselines");
    return RK_OK;
}

/* Four list records from tag on: lengths, then neighbours, similarities
 * and supports packed (item i's len[i] entries, no padding to k). */
static void w_lists(wr *w, int tag, const rk_lists *l, int32_t ni, uint64_t ne)
{
    const size_t k = (size_t)l->k;
    w_begin(w, tag, 4 * (uint64_t)ni), w_array(w, l->len, (size_t)ni, 4), w_end(w);
    w_begin(w, tag + 1, 4 * ne);
    for (int32_t i = 0; i < ni; i++) w_array(w, l->nbr + (size_t)i * k, (size_t)l->len[i], 4);
    w_end(w);
    w_begin(w, tag + 2, 4 * ne);
    for (int32_t i = 0; i < ni; i++) w_array(w, l->sim + (size_t)i * k, (size_t)l->len[i], 4);
    w_end(w);
    w_begin(w, tag + 3, 4 * ne);
    for (int32_t i = 0; i < ni; i++) w_array(w, l->support + (size_t)i * k, (size_t)l->len[i], 4);
    w_end(w);
}

/* The ranking model's options record: similarity code, k, weighting,
 * values, normalisation, 0; α, β, λ, q, BM25 K1 and B, then the entries. */
static void ropt_bytes(const rk_rankw_opts *o, uint64_t ne, unsigned char *p)
{
    memset(p, 0, ROPT_LEN);
    put32(p, metric_code(o->sim));
    put32(p + 4, (uint32_t)o->k);
    put32(p + 8, (uint32_t)o->weighting);
    put32(p + 12, o->ratings ? 1u : 0u);
    put32(p + 16, o->normalize ? 1u : 0u);
    put64(p + 24, f64_bits(o->alpha));
    put64(p + 32, f64_bits(o->beta));
    put64(p + 40, f64_bits(o->shrink));
    put64(p + 48, f64_bits(o->q));
    put64(p + 56, f64_bits(o->bm25_k1));
    put64(p + 64, f64_bits(o->bm25_b));
    put64(p + 72, ne);
}

/* The prediction model's options record: β, λ of interpolate; γ, λ, the
 * decay and the epochs of global. */
static void popt_bytes(const rk_pmodel_opts *o, unsigned char *p)
{
    memset(p, 0, POPT_LEN);
    put64(p, f64_bits(o->interp_shrink));
    put64(p + 8, f64_bits(o->interp_reg));
    put64(p + 16, f64_bits(o->global_lr));
    put64(p + 24, f64_bits(o->global_reg));
    put64(p + 32, f64_bits(o->global_decay));
    put32(p + 40, (uint32_t)o->global_epochs);
}

/* The records of version 3 (a view whose mode is a prediction model). */
static void w_pmodel(wr *w, const rk_mfile_view *v, int32_t nu, int32_t ni, uint64_t ne)
{
    unsigned char op[POPT_LEN];
    popt_bytes(&v->knn->pm, op);
    w_begin(w, T_POPT, POPT_LEN), w_put(w, op, POPT_LEN), w_end(w);
    if (v->knn->mode != RK_PREDICT_GLOBAL) return;
    const rk_pmodel_global *g = v->global;
    const rk_lists *l = v->lists;
    const size_t k = (size_t)g->k;
    w_begin(w, T_GBUS, 8 * (uint64_t)nu), w_array(w, g->bu, (size_t)nu, 8), w_end(w);
    w_begin(w, T_GBIS, 8 * (uint64_t)ni), w_array(w, g->bi, (size_t)ni, 8), w_end(w);
    w_begin(w, T_GWTS, 8 * ne);
    for (int32_t i = 0; i < ni; i++) w_array(w, g->w + (size_t)i * k, (size_t)l->len[i], 8);
    w_end(w);
    w_begin(w, T_GCTS, 8 * ne);
    for (int32_t i = 0; i < ni; i++) w_array(w, g->c + (size_t)i * k, (size_t)l->len[i], 8);
    w_end(w);
}

/* The bytes of version 3's records (0 for a plain model). */
static uint64_t pmodel_size(rk_predict_mode mode, int32_t nu, int32_t ni, uint64_t ne)
{
    if (!rk_predict_is_model(mode)) return 0;
    uint64_t b = rec_size(POPT_LEN);
    if (mode == RK_PREDICT_GLOBAL)
        b += rec_size(8 * (uint64_t)nu) + rec_size(8 * (uint64_t)ni) + 2 * rec_size(8 * ne);
    return b;
}

/* The file's bytes to fp (a view that passed check_view). */
static rk_status write_stream(FILE *fp, const rk_mfile_view *v, const char *name, rk_error *err)
{
    const rk_model *m = v->model;
    const rk_lists *l = v->lists;
    const rk_knn_opts *o = v->knn;
    const int32_t nu = m->by_user.n_rows, ni = m->by_user.n_cols, k = o->k;
    const uint64_t nnz = (uint64_t)m->by_user.nnz;
    uint64_t ne = 0;
    for (int32_t i = 0; i < ni; i++) ne += (uint64_t)l->len[i];

    unsigned char *ub = NULL, *ib = NULL;
    uint64_t ulen = 0, ilen = 0;
    rk_status s = id_blob(v->users, "user", &ub, &ulen, err);
    if (s == RK_OK) s = id_blob(v->items, "item", &ib, &ilen, err);
    if (s != RK_OK) {
        free(ub);
        return s;
    }
    const rk_lists *rl = v->rank_lists;
    uint64_t ne2 = 0;
    for (int32_t i = 0; rl != NULL && i < ni; i++) ne2 += (uint64_t)rl->len[i];
    const uint64_t size = HDR_SIZE + rec_size(ulen) + rec_size(ilen) + rec_size(8 * ((uint64_t)nu + 1)) +
                          2 * rec_size(4 * nnz) + 2 * rec_size(8 * (uint64_t)ni) + rec_size(8 * (uint64_t)nu) +
                          rec_size(4 * (uint64_t)ni) + 3 * rec_size(4 * ne) + rec_size(0) +
                          (rl != NULL ? rec_size(ROPT_LEN) + rec_size(4 * (uint64_t)ni) + 3 * rec_size(4 * ne2) : 0) +
                          pmodel_size(o->mode, nu, ni, ne);

    unsigned char h[HDR_SIZE];
    memset(h, 0, sizeof h);
    memcpy(h, MAGIC, 8);
    put32(h + 8, version_for(o->mode));
    put32(h + 12, HDR_SIZE);
    put32(h + 16, 0x01020304u);
    put32(h + 20, m->have_baselines ? 1 : 0);
    put32(h + 24, (uint32_t)nu);
    put32(h + 28, (uint32_t)ni);
    put64(h + 32, nnz);
    put64(h + 40, ne);
    put32(h + 48, (uint32_t)k);
    put32(h + 52, (uint32_t)o->sim.min_support);
    put64(h + 56, f64_bits(o->sim.shrinkage));
    put32(h + 64, metric_code(o->sim.metric));
    put32(h + 68, mode_code(o->mode));
    put32(h + 72, (uint32_t)o->min_k);
    put32(h + 76, rl != NULL ? 1u : 0u);
    put64(h + 80, f64_bits(m->mu));
    put64(h + 88, f64_bits(m->rmin));
    put64(h + 96, f64_bits(m->rmax));
    put64(h + 104, size);
    put64(h + 120, rk_mfile_hash(h, 120, 0));

    wr w;
    memset(&w, 0, sizeof w);
    w.fp = fp, w.name = name, w.err = err, w.st = RK_OK;
    w_raw(&w, h, sizeof h);
    w_begin(&w, T_UIDS, ulen), w_put(&w, ub, (size_t)ulen), w_end(&w);
    w_begin(&w, T_IIDS, ilen), w_put(&w, ib, (size_t)ilen), w_end(&w);
    free(ub);
    free(ib);
    w_begin(&w, T_RPTR, 8 * ((uint64_t)nu + 1)), w_array(&w, m->by_user.ptr, (size_t)nu + 1, 8), w_end(&w);
    w_begin(&w, T_RIDX, 4 * nnz), w_array(&w, m->by_user.idx, (size_t)nnz, 4), w_end(&w);
    w_begin(&w, T_RVAL, 4 * nnz), w_array(&w, m->by_user.val, (size_t)nnz, 4), w_end(&w);
    w_begin(&w, T_IMEA, 8 * (uint64_t)ni), w_array(&w, m->item_mean, (size_t)ni, 8), w_end(&w);
    w_begin(&w, T_UBAS, 8 * (uint64_t)nu), w_array(&w, m->bu, (size_t)nu, 8), w_end(&w);
    w_begin(&w, T_IBAS, 8 * (uint64_t)ni), w_array(&w, m->bi, (size_t)ni, 8), w_end(&w);
    w_lists(&w, T_LLEN, l, ni, ne);
    if (rl != NULL) {
        unsigned char op[ROPT_LEN];
        ropt_bytes(v->rank, ne2, op);
        w_begin(&w, T_ROPT, ROPT_LEN), w_put(&w, op, ROPT_LEN), w_end(&w);
        w_lists(&w, T_KLEN, rl, ni, ne2);
    }
    if (rk_predict_is_model(o->mode)) w_pmodel(&w, v, nu, ni, ne);
    w_begin(&w, T_END, 0), w_end(&w);
    if (w.st == RK_OK && fflush(fp) != 0)
        w.st = rk_error_set(err, RK_E_IO, "%s: write failed: %s", name, strerror(errno));
    return w.st;
}

rk_status rk_mfile_write(FILE *fp, const rk_mfile_view *v, rk_error *err)
{
    return rk_mfile_write_named(fp, "model file", v, err);
}

rk_status rk_mfile_write_named(FILE *fp, const char *name, const rk_mfile_view *v, rk_error *err)
{
    if (fp == NULL) return rk_error_set(err, RK_E_ARG, "%s: no stream to write to", name);
    RK_FORWARD(check_view(v, err));
    return write_stream(fp, v, name, err);
}

rk_status rk_mfile_save(const char *path, const rk_mfile_view *v, rk_error *err)
{
    if (path == NULL || path[0] == '\0') return rk_error_set(err, RK_E_ARG, "model file: no path given");
    RK_FORWARD(check_view(v, err));
    size_t pl = strlen(path);
    char *tmp = malloc(pl + 32);
    if (tmp == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory for a file name");
    /* registered with rk_output, so that an interrupted run removes it */
    snprintf(tmp, pl + 32, "%s.tmp.XXXXXX", path);
    int fd, slot;
    rk_status s0 = rk_out_temp_create(tmp, path, &fd, &slot, err);
    if (s0 != RK_OK) {
        free(tmp);
        return s0;
    }
    mode_t um = umask(0); /* mkstemp's 0600 → what fopen would give */
    umask(um);
    (void)fchmod(fd, 0666 & ~um);
    FILE *fp = fdopen(fd, "wb");
    if (fp == NULL) {
        int e = errno;
        close(fd);
        unlink(tmp);
        rk_out_temp_forget(slot);
        free(tmp);
        return rk_error_set(err, RK_E_IO, "%s: cannot create the model file: %s", path, strerror(e));
    }
    rk_status s = write_stream(fp, v, path, err);
    if (s == RK_OK && fsync(fileno(fp)) != 0)
        s = rk_error_set(err, RK_E_IO, "%s: cannot sync the model file: %s", path, strerror(errno));
    if (fclose(fp) != 0 && s == RK_OK)
        s = rk_error_set(err, RK_E_IO, "%s: cannot close the model file: %s", path, strerror(errno));
    rk_out_temp_closed(slot);
    if (s == RK_OK && rename(tmp, path) != 0)
        s = rk_error_set(err, RK_E_IO, "%s: cannot rename %s into place: %s", path, tmp, strerror(errno));
    if (s != RK_OK) unlink(tmp);
    rk_out_temp_forget(slot);
    if (s == RK_OK) {
        /* the rename itself, on disk (best effort: not every file system
         * lets a folder be opened and synced) */
        char *slash = strrchr(tmp, '/');
        if (slash != NULL) slash[slash == tmp ? 1 : 0] = '\0';
        int dfd = open(slash != NULL ? tmp : ".", O_RDONLY);
        if (dfd >= 0) {
            (void)fsync(dfd);
            close(dfd);
        }
    }
    free(tmp);
    return s;
}

void rk_mfile_free(rk_mfile *f)
{
    if (f == NULL) return;
    rk_model_free(&f->model);
    rk_lists_free(&f->lists);
    rk_lists_free(&f->rank_lists);
    rk_pmodel_global_free(&f->global);
    rk_ids_free(f->users);
    rk_ids_free(f->items);
    memset(f, 0, sizeof *f);
}
