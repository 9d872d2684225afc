/* Atomic output files (rk_output.h); the CSV row writers are in rk_out_rows.c. */
#define _POSIX_C_SOURCE 200809L
#include "rk_output.h"
#include "rk_omp.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "rk_output_internal.h"

/* ---- directory ------------------------------------------------------------- */

static rk_status make_dir(rk_out *o, const char *path, rk_error *err)
{
    struct stat sb;
    int slot;
    if (rk_out_dir_create(path, &slot) == 0) {
        if (o->n_made == o->cap_made) {
            const int cap = o->cap_made ? 2 * o->cap_made : 16;
            char **m = realloc(o->made, (size_t)cap * sizeof *m);
            if (m != NULL) o->made = m;
            int *ms = m != NULL ? realloc(o->made_slot, (size_t)cap * sizeof *ms) : NULL;
            if (ms != NULL) o->made_slot = ms;
            if (ms != NULL) o->cap_made = cap;
        }
        char *copy = o->n_made < o->cap_made ? strdup(path) : NULL;
        if (copy == NULL) {
            rmdir(path);
            rk_out_temp_forget(slot);
            return rk_error_set(err, RK_E_NOMEM, "out of memory creating %s", path);
        }
        o->made[o->n_made] = copy;
        o->made_slot[o->n_made++] = slot;
        return RK_OK;
    }
    int e = errno;
    if (e == EINTR && rk_out_cancelled())
        return rk_error_set(err, RK_E_IO, "cannot create output directory %s: the run was interrupted", o->dir);
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode)) return RK_OK;
        return rk_error_set(err, RK_E_IO, "cannot create output directory %s: %s exists and is not a directory",
                            o->dir, path);
    }
    return rk_error_set(err, RK_E_IO, "cannot create output directory %s: %s: %s", o->dir, path, strerror(e));
}

/* One run at a time on a folder: an exclusive flock(2) on the folder itself
 * (no lock file to leave behind), held until rk_out_free; the kernel drops
 * it when the process ends, however it ends.  A second run fails at once
 * rather than interleave its renames with the first's. */
static rk_status take_lock(rk_out *o, rk_error *err)
{
    o->lock_fd = open(o->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (o->lock_fd < 0) return rk_error_set(err, RK_E_IO, "cannot open %s: %s", o->dir, strerror(errno));
    while (flock(o->lock_fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EINTR) continue;
        const int e = errno;
        close(o->lock_fd);
        o->lock_fd = -1;
        if (e == EWOULDBLOCK)
            return rk_error_set(err, RK_E_IO, "%s is being written by another recknn run: wait until it ends, or "
                                "give another --out", o->dir);
        return rk_error_set(err, RK_E_IO, "cannot lock %s: %s", o->dir, strerror(e));
    }
    return RK_OK;
}

rk_status rk_out_open(rk_out **out, const char *dir, rk_error *err)
{
    *out = NULL;
    if (dir == NULL || dir[0] == '\0') return rk_error_set(err, RK_E_IO, "empty output directory name");
    rk_out *o = calloc(1, sizeof *o);
    if (o != NULL) o->lock_fd = -1;
    char *p = strdup(dir);
    if (o == NULL || p == NULL) {
        free(o);
        free(p);
        return rk_error_set(err, RK_E_NOMEM, "out of memory opening %s", dir);
    }
    o->dir = strdup(dir);
    if (o->dir == NULL) {
        free(o);
        free(p);
        return rk_error_set(err, RK_E_NOMEM, "out of memory opening %s", dir);
    }
    /* file names are joined to dir with one '/' */
    size_t dl = strlen(o->dir);
    while (dl > 1 && o->dir[dl - 1] == '/') o->dir[--dl] = '\0';
    /* mkdir -p: every prefix ending before a '/', then the whole path. */
    rk_status s = RK_OK;
    for (char *c = p + 1; *c != '\0' && s == RK_OK; c++) {
        if (*c != '/' || c[-1] == '/') continue;
        *c = '\0';
        s = make_dir(o, p, err);
        *c = '/';
    }
    if (s == RK_OK) s = make_dir(o, p, err);
    free(p);
    if (s == RK_OK) s = take_lock(o, err);
    if (s != RK_OK) {
        rk_out_free(o);
        return s;
    }
    *out = o;
    return RK_OK;
}

/* ---- files ------------------------------------------------------------------ */

static char *join(const char *dir, const char *a, const char *b, const char *c)
{
    size_t n = strlen(dir) + strlen(a) + strlen(b) + strlen(c) + 2;
    char *s = malloc(n);
    if (s != NULL) snprintf(s, n, "%s/%s%s%s", dir, a, b, c);
    return s;
}

void rk_out_file_discard_(out_file *f)
{
    if (f->fp != NULL) fclose(f->fp);
    rk_out_temp_closed(f->slot);
    if (f->tmp_path != NULL) unlink(f->tmp_path);
    rk_out_temp_forget(f->slot);
    free(f->buf);
    free(f->tmp_path);
    free(f->final_path);
    memset(f, 0, sizeof *f);
    f->slot = -1;
}

/* A pending file of o: final (owned from here) written as tmp (a mkstemp
 * template, owned from here); foreign: outside the table of o's folder. */
static rk_status open_pending(rk_out *o, char *final, char *tmp, int foreign, FILE **fp, rk_error *err)
{
    if (o->n >= RK_OUT_MAX_FILES) {
        free(final);
        free(tmp);
        return rk_error_set(err, RK_E_RANGE, "too many output files (%d at most)", RK_OUT_MAX_FILES);
    }
    out_file *f = &o->f[o->n];
    memset(f, 0, sizeof *f);
    f->slot = -1;
    f->final_path = final;
    f->tmp_path = tmp;
    f->foreign = foreign;
    f->buf = malloc(RK_OUT_BUFSZ);
    if (f->final_path == NULL || f->tmp_path == NULL || f->buf == NULL) {
        free(f->final_path);
        free(f->tmp_path);
        free(f->buf);
        memset(f, 0, sizeof *f);
        return rk_error_set(err, RK_E_NOMEM, "out of memory opening an output file");
    }
    int fd;
    rk_status s = rk_out_temp_create(f->tmp_path, f->final_path, &fd, &f->slot, err);
    if (s != RK_OK) {
        free(f->final_path);
        free(f->tmp_path);
        free(f->buf);
        memset(f, 0, sizeof *f);
        return s;
    }
    /* mkstemp makes the file 0600: give it the mode a plain fopen would. */
    mode_t um = umask(0);
    umask(um);
    (void)fchmod(fd, 0666 & ~um);
    f->fp = fdopen(fd, "w");
    if (f->fp == NULL) {
        int e = errno;
        close(fd);
        unlink(f->tmp_path);
        rk_out_temp_forget(f->slot);
        s = rk_error_set(err, RK_E_IO, "cannot open %s: %s", f->final_path, strerror(e));
        free(f->final_path);
        free(f->tmp_path);
        free(f->buf);
        memset(f, 0, sizeof *f);
        return s;
    }
    setvbuf(f->fp, f->buf, _IOFBF, RK_OUT_BUFSZ);
    o->n++;
    *fp = f->fp;
    return RK_OK;
}

rk_status rk_out_file(rk_out *o, const char *name, FILE **fp, rk_error *err)
{
    *fp = NULL;
    if (name == NULL || name[0] == '\0' || strchr(name, '/') != NULL)
        return rk_error_set(err, RK_E_ARG, "bad output file name \"%s\"", name ? name : "");
    for (int i = 0; i < o->n; i++) {
        if (o->f[i].foreign) continue;
        const char *fin = o->f[i].final_path + strlen(o->dir) + 1;
        if (strcmp(fin, name) == 0) return rk_error_set(err, RK_E_ARG, "output file %s opened twice", name);
    }
    return open_pending(o, join(o->dir, "", name, ""), join(o->dir, ".", name, ".tmp.XXXXXX"), 0, fp, err);
}

rk_status rk_out_file_at(rk_out *o, const char *path, FILE **fp, rk_error *err)
{
    *fp = NULL;
    if (path == NULL || path[0] == '\0' || path[strlen(path) - 1] == '/')
        return rk_error_set(err, RK_E_ARG, "bad file path \"%s\"", path ? path : "");
    for (int i = 0; i < o->n; i++)
        if (strcmp(o->f[i].final_path, path) == 0) return rk_error_set(err, RK_E_ARG, "%s opened twice", path);
    const size_t n = strlen(path) + 16;
    char *tmp = malloc(n);
    if (tmp != NULL) snprintf(tmp, n, "%s.tmp.XXXXXX", path);
    return open_pending(o, strdup(path), tmp, 1, fp, err);
}

void rk_out_remove_made_dirs_(rk_out *o)
{
    for (int i = o->n_made - 1; i >= 0; i--) {
        rmdir(o->made[i]); /* fails, harmlessly, when not empty */
        rk_out_temp_forget(o->made_slot[i]);
        free(o->made[i]);
    }
    o->n_made = 0;
}

void rk_out_abort(rk_out *o)
{
    if (o == NULL) return;
    for (int i = 0; i < o->n; i++) rk_out_file_discard_(&o->f[i]);
    o->n = 0;
    if (!o->committed) rk_out_remove_made_dirs_(o);
}

void rk_out_free(rk_out *o)
{
    if (o == NULL) return;
    rk_out_abort(o);
    for (int i = 0; i < o->n_made; i++) free(o->made[i]);
    free(o->made);
    free(o->made_slot);
    if (o->lock_fd >= 0) close(o->lock_fd);
    free(o->dir);
    free(o);
}

/* ---- slices written by other processes --------------------------------------- */

const char *rk_out_temp_of(const rk_out *o, FILE *fp)
{
    for (int i = 0; o != NULL && fp != NULL && i < o->n; i++)
        if (o->f[i].fp == fp) return o->f[i].tmp_path;
    return NULL;
}

rk_status rk_out_write_at(const char *path, const char *label, int64_t off, const void *buf, size_t n,
                          rk_error *err)
{
    const int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return rk_error_set(err, RK_E_IO, "cannot open %s to write a slice: %s", label, strerror(errno));
    const unsigned char *p = buf;
    size_t done = 0;
    int e = 0;
    while (done < n) {
        const ssize_t w = pwrite(fd, p + done, n - done, (off_t)(off + (int64_t)done));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            e = w < 0 ? errno : EIO;
            break;
        }
        done += (size_t)w;
    }
    if (close(fd) != 0 && e == 0) e = errno;
    if (e != 0)
        return rk_error_set(err, RK_E_IO, "cannot write %s (%zu bytes at byte %lld): %s", label, n, (long long)off,
                            strerror(e));
    return RK_OK;
}

rk_status rk_out_read_at(const char *path, const char *label, int64_t off, void *buf, size_t n, size_t *got,
                         rk_error *err)
{
    *got = 0;
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return rk_error_set(err, RK_E_IO, "cannot open %s to read it back: %s", label, strerror(errno));
    unsigned char *p = buf;
    int e = 0;
    while (*got < n) {
        const ssize_t r = pread(fd, p + *got, n - *got, (off_t)(off + (int64_t)*got));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) e = errno;
        if (r <= 0) break;
        *got += (size_t)r;
    }
    close(fd);
    if (e != 0) return rk_error_set(err, RK_E_IO, "cannot read %s back: %s", label, strerror(e));
    return RK_OK;
}
