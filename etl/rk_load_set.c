/* rk_load_set.c — the data set: the training and test files read (whole,
 * or shared among processes: rk_load_shard.c), then their raw ids made
 * dense indices over both (rk_ids.c).  rk_load.c reads the files. */
#define _POSIX_C_SOURCE 200809L
#include "rk_load_internal.h"
#include "rk_dirlist.h"
#include "rk_omp.h"
#include "rk_zsrc.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the data set ---------------------------------------------------------------- */

/* The bytes a path holds (a directory: its rating files), -1: not known. */
static double path_bytes(const char *path, const char *glob)
{
    struct stat sb;
    if (path == NULL || strcmp(path, "-") == 0 || stat(path, &sb) != 0) return -1.0;
    if (S_ISREG(sb.st_mode)) {
        const int fd = open(path, O_RDONLY);
        const int kind = fd >= 0 ? rk_load_compressed_kind(fd) : RK_ZSRC_NONE;
        if (fd >= 0) close(fd);
        return kind == RK_ZSRC_NONE ? (double)sb.st_size : -1.0; /* compressed: the decoded size is unknown */
    }
    if (!S_ISDIR(sb.st_mode)) return -1.0;
    rk_dirlist dl;
    rk_error e;
    if (rk_dirlist_read(path, glob, &dl, &e) != RK_OK) return -1.0;
    double sum = 0.0;
    for (size_t k = 0; k < dl.n && sum >= 0.0; k++) { /* a compressed file makes the total unknown too */
        const double b = path_bytes(dl.path[k], glob);
        sum = b < 0.0 ? -1.0 : sum + b;
    }
    rk_dirlist_free(&dl);
    return sum;
}

/* The progress total: the sizes of all files, or 0 when one is not known. */
static double total_bytes(const char *const *paths, int n_paths, const char *test_path, const char *glob)
{
    double sum = 0.0;
    for (int k = 0; k <= n_paths; k++) {
        const char *p = k < n_paths ? paths[k] : test_path;
        if (k == n_paths && p == NULL) break;
        double b = path_bytes(p, glob);
        if (b < 0) return 0.0;
        sum += b;
    }
    return sum;
}

static rk_status finish(rk_rows *train, rk_rows *test, const rk_load_opts *o, rk_dataset *out,
                        rk_error *err)
{
    int nt = o->threads > 0 ? o->threads : rk_omp_max_threads();
    rk_triples *tr[2] = {&out->train, &out->test};
    rk_rows *rw[2] = {train, test};
    /* the indices go over the raw ids where the map allows: the rows' id blocks become the triples' */
    rk_idcol uc[2], ic[2];
    for (int w = 0; w < 2; w++) {
        const int ranged = rw[w]->ranged == rw[w]->n;
        uc[w] = (rk_idcol){rw[w]->u, rw[w]->utag, rw[w]->arena, rw[w]->n, NULL, 1, 0, ranged, rw[w]->lo[0],
                           rw[w]->hi[0]};
        ic[w] = (rk_idcol){rw[w]->i, rw[w]->itag, rw[w]->arena, rw[w]->n, NULL, 1, 0, ranged, rw[w]->lo[1],
                           rw[w]->hi[1]};
    }
    rk_status st = rk_ids_build(uc, 2, nt, &out->users, err);
    if (st == RK_OK) st = rk_ids_build(ic, 2, nt, &out->items, err);
    if (o->feed.release != NULL) o->feed.release(o->feed.ud); /* before the rows' blocks are cut or freed */
    rk_ids_cut(uc, 2);
    rk_ids_cut(ic, 2);
    for (int w = 0; w < 2; w++) { /* the indices made (NULL after a failure), the blocks taken */
        tr[w]->user = uc[w].dense, tr[w]->item = ic[w].dense;
        if (uc[w].took) rw[w]->u = NULL;
        if (ic[w].took) rw[w]->i = NULL;
    }
    if (st == RK_E_RANGE && err != NULL) { /* say which map: never wrapped into negative indices */
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        return rk_error_set(err, st, "too many %s ids: %s", out->users == NULL ? "user" : "item", why);
    }
    RK_FORWARD(st);
    for (int w = 0; w < 2; w++) {
        const int64_t n = tr[w]->n = rw[w]->n;
        if (n == 0) continue;
        float *r = realloc(rw[w]->r, (size_t)n * sizeof *r);
        tr[w]->rating = r != NULL ? r : rw[w]->r;
        rw[w]->r = NULL;
        if (o->want_time && rw[w]->t != NULL) {
            int64_t *t = realloc(rw[w]->t, (size_t)n * sizeof *t);
            tr[w]->time = t != NULL ? t : rw[w]->t;
            rw[w]->t = NULL;
        }
    }
    return RK_OK;
}

static rk_status load_all(const char *const *paths, int n_paths, const char *test_path,
                          const char *buf_name, const char *buf, size_t buf_len,
                          const rk_load_opts *opts, rk_dataset *out, rk_error *err)
{
    rk_load_opts dflt;
    rk_rows train, test;
    rk_status st;

    memset(out, 0, sizeof *out);
    memset(&train, 0, sizeof train);
    memset(&test, 0, sizeof test);
    if (opts == NULL) {
        rk_load_opts_default(&dflt);
        opts = &dflt;
    }
    if (opts->have_scale && !(opts->scale_min <= opts->scale_max))
        return rk_error_set(err, RK_E_ARG, "the rating scale %g:%g is empty", opts->scale_min, opts->scale_max);
    if (paths != NULL && n_paths < 1) return rk_error_set(err, RK_E_ARG, "no rating file given");
    rk_load_progress pg = {0.0, 0.0};
    if (opts->progress != NULL)
        pg.total = paths != NULL ? total_bytes(paths, n_paths, test_path, opts->dir_glob) : (double)buf_len;
    double t0 = rk_omp_wtime();
    if (paths != NULL) {
        int sharded = 0;
        st = rk_load_shard(opts, n_paths == 1 ? paths[0] : NULL, 1, &train, &out->train_report, &pg, &sharded, err);
        if (st == RK_OK && sharded && opts->feed.hold != NULL) opts->feed.hold(opts->feed.ud, 1); /* none handed */
        if (st == RK_OK && !sharded) st = rk_load_paths(paths, n_paths, opts, &train, NULL, &out->train_report, &pg, err);
    } else {
        st = rk_load_memory(opts, buf_name, buf, buf_len, &train, &out->train_report, &pg, err);
    }
    if (st == RK_OK && train.n == 0)
        st = rk_error_set(err, RK_E_EMPTY, "%s: no ratings found",
                          paths != NULL ? (n_paths == 1 ? paths[0] : "the rating files")
                                        : (buf_name != NULL ? buf_name : "<buffer>"));
    double t1 = rk_omp_wtime();
    out->train_report.read_parse_s = t1 - t0;
    if (test_path != NULL && (st == RK_OK || opts->group.size > 1)) {
        /* a process whose training files failed still takes its part in the group's votes, saying no */
        int sharded = 0;
        const rk_status ts = rk_load_shard(opts, test_path, st == RK_OK, &test, &out->test_report, &pg, &sharded,
                                           err);
        if (st == RK_OK) st = ts;
        if (st == RK_OK && !sharded) st = rk_load_paths(&test_path, 1, opts, &test, &train, &out->test_report, &pg, err);
        if (st == RK_OK && test.n == 0)
            st = rk_error_set(err, RK_E_EMPTY, "%s: no ratings found in the test file", test_path);
    }
    double t2 = rk_omp_wtime();
    out->test_report.read_parse_s = t2 - t1;
    if (st == RK_OK) st = finish(&train, &test, opts, out, err);
    if (opts->feed.release != NULL) opts->feed.release(opts->feed.ud); /* finish did, unless it did not run */
    out->ids_s = rk_omp_wtime() - t2;
    rk_rows_free(&train);
    rk_rows_free(&test);
    if (st != RK_OK) rk_dataset_free(out);
    return st;
}

rk_status rk_load_dataset(const char *const *paths, int n_paths, const char *test_path,
                          const rk_load_opts *o, rk_dataset *out, rk_error *err)
{
    if (paths == NULL) {
        memset(out, 0, sizeof *out);
        return rk_error_set(err, RK_E_ARG, "no rating file given");
    }
    return load_all(paths, n_paths, test_path, NULL, NULL, 0, o, out, err);
}

rk_status rk_load_buffer(const char *name, const char *buf, size_t len,
                         const rk_load_opts *o, rk_dataset *out, rk_error *err)
{
    return load_all(NULL, 0, NULL, name, buf, len, o, out, err);
}

void rk_dataset_free(rk_dataset *d)
{
    if (d == NULL) return;
    rk_ids_free(d->users);
    rk_ids_free(d->items);
    rk_triples_free(&d->train);
    rk_triples_free(&d->test);
    memset(d, 0, sizeof *d);
}
