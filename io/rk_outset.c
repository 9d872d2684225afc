/* The registry of a run's output files (rk_outset.h) on rk_output's atomic
 * files. */
#define _POSIX_C_SOURCE 200809L
#include "rk_outset.h"
#include "rk_output.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct rk_outset {
    rk_out *out;
    char *dir;                  /* as given, for messages */
    const rk_outset_row *rows;
    int n_rows;
};

typedef struct stream_file {
    const rk_outset_row *row;
    FILE *fp;                   /* rk_out's: closed by the commit */
    void *w;                    /* the row's writer, NULL when closed */
} stream_file;

struct rk_outset_stream {
    rk_outset *set;
    rk_outset_ids ids;
    int n;
    stream_file f[];
};

static int streamed(rk_outset_content c)
{
    return c == RK_OUTSET_RECOMMENDATIONS;
}

rk_status rk_outset_check(const rk_outset_row *rows, int n_rows, rk_error *err)
{
    if (n_rows < 0 || (n_rows > 0 && rows == NULL)) return rk_error_set(err, RK_E_ARG, "output table: no rows");
    for (int i = 0; i < n_rows; i++) {
        const rk_outset_row *r = &rows[i];
        if (r->name == NULL || r->name[0] == '\0' || strchr(r->name, '/') != NULL)
            return rk_error_set(err, RK_E_ARG, "output table row %d: bad file name \"%s\"", i,
                                r->name != NULL ? r->name : "");
        if ((unsigned)r->content >= RK_OUTSET_CONTENTS)
            return rk_error_set(err, RK_E_ARG, "output table: %s has an unknown content %d", r->name, (int)r->content);
        const int whole_ok = r->write != NULL && r->open == NULL && r->put == NULL && r->close == NULL;
        const int stream_ok = r->write == NULL && r->open != NULL && r->put != NULL && r->close != NULL;
        if (streamed(r->content) ? !stream_ok : !whole_ok)
            return rk_error_set(err, RK_E_ARG, "output table: %s needs %s", r->name,
                                streamed(r->content) ? "open, put and close (a streamed content), not write"
                                                     : "write (a whole content), not open, put or close");
        for (int j = 0; j < i; j++)
            if (strcmp(rows[j].name, r->name) == 0)
                return rk_error_set(err, RK_E_ARG, "output table: %s appears twice", r->name);
    }
    return RK_OK;
}

/* A temporary file of the table's (".NAME.tmp.XXXXXX", NAME a row's name or
 * its fold variant), as rk_out_file names them. */
static int table_temp(const rk_outset_row *rows, int n_rows, const char *name)
{
    const size_t n = strlen(name), tail = strlen(".tmp.XXXXXX");
    if (n < tail + 2 || name[0] != '.' || strncmp(name + n - tail, ".tmp.", 5) != 0) return 0;
    for (size_t i = n - 6; i < n; i++)
        if (!isalnum((unsigned char)name[i])) return 0; /* mkstemp's letters */
    char mid[256];
    if (n - tail - 1 >= sizeof mid) return 0;
    memcpy(mid, name + 1, n - tail - 1);
    mid[n - tail - 1] = '\0';
    return rk_outset_is_file(rows, n_rows, mid);
}

/* The temporary files that a run killed outright (SIGKILL: mpirun sends it
 * a second after SIGTERM to ranks that have not ended) left behind.  The
 * folder's lock is held, so no other run is writing them; hidden names
 * only, never a final one. */
static void drop_leftovers(const rk_outset *set, const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!table_temp(set->rows, set->n_rows, e->d_name)) continue;
        const size_t cap = strlen(dir) + strlen(e->d_name) + 2;
        char *p = malloc(cap);
        if (p == NULL) break;
        snprintf(p, cap, "%s/%s", dir, e->d_name);
        (void)unlink(p);
        free(p);
    }
    closedir(d);
}

rk_status rk_outset_open(rk_outset **setp, const char *dir, const rk_outset_row *rows, int n_rows, rk_error *err)
{
    *setp = NULL;
    RK_FORWARD(rk_outset_check(rows, n_rows, err));
    rk_outset *set = calloc(1, sizeof *set);
    char *d = dir != NULL ? strdup(dir) : NULL;
    if (set == NULL || (dir != NULL && d == NULL)) {
        free(set);
        free(d);
        return rk_error_set(err, RK_E_NOMEM, "out of memory opening %s", dir != NULL ? dir : "");
    }
    rk_status s = rk_out_open(&set->out, dir, err);
    if (s != RK_OK) {
        free(set);
        free(d);
        return s;
    }
    set->dir = d;
    set->rows = rows;
    set->n_rows = n_rows;
    if (dir != NULL) drop_leftovers(set, dir);
    *setp = set;
    return RK_OK;
}

int rk_outset_name(char *buf, size_t cap, const char *name, int fold)
{
    if (fold <= 0) return snprintf(buf, cap, "%s", name);
    /* the fold before the extension, so that tools still know the format */
    const char *dot = strrchr(name, '.');
    if (dot == NULL || dot == name) return snprintf(buf, cap, "%s.fold%d", name, fold);
    return snprintf(buf, cap, "%.*s.fold%d%s", (int)(dot - name), name, fold, dot);
}

/* The temporary file of row r for fold (rk_out_file). */
static rk_status open_file(rk_outset *set, const rk_outset_row *r, int fold, FILE **fp, rk_error *err)
{
    const size_t cap = strlen(r->name) + 24;
    char *name = malloc(cap);
    if (name == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory opening %s", r->name);
    rk_outset_name(name, cap, r->name, fold);
    rk_status s = rk_out_file(set->out, name, fp, err);
    free(name);
    return s;
}


struct rk_outset_later {
    int n;
    stream_file f[];
};

rk_status rk_outset_later_open(rk_outset *set, rk_outset_content c, int fold, rk_outset_later **lp, rk_error *err)
{
    *lp = NULL;
    if (streamed(c)) return rk_error_set(err, RK_E_ARG, "output content %d is streamed, not written whole", (int)c);
    int n = 0;
    for (int i = 0; i < set->n_rows; i++) n += set->rows[i].content == c;
    rk_outset_later *l = calloc(1, sizeof *l + (size_t)n * sizeof l->f[0]);
    RK_CHECK_ALLOC(l, err);
    rk_status s = RK_OK;
    for (int i = 0; i < set->n_rows && s == RK_OK; i++) {
        if (set->rows[i].content != c) continue;
        l->f[l->n].row = &set->rows[i];
        s = open_file(set, &set->rows[i], fold, &l->f[l->n].fp, err);
        if (s == RK_OK) l->n++;
    }
    if (s != RK_OK) { /* the files stay with the set, which the failure aborts */
        free(l);
        return s;
    }
    *lp = l;
    return RK_OK;
}

rk_status rk_outset_later_write(rk_outset_later *l, const void *in, rk_error *err)
{
    for (int i = 0; i < l->n; i++) RK_FORWARD(l->f[i].row->write(l->f[i].fp, in, err));
    return RK_OK;
}

void rk_outset_later_free(rk_outset_later *l)
{
    free(l);
}

rk_status rk_outset_write(rk_outset *set, rk_outset_content c, int fold, const void *in, rk_error *err)
{
    rk_outset_later *l;
    RK_FORWARD(rk_outset_later_open(set, c, fold, &l, err));
    const rk_status s = rk_outset_later_write(l, in, err);
    rk_outset_later_free(l);
    return s;
}

rk_status rk_outset_stream_open(rk_outset *set, rk_outset_content c, int fold, const rk_outset_ids *ids,
                                rk_outset_stream **stp, rk_error *err)
{
    *stp = NULL;
    if (!streamed(c)) return rk_error_set(err, RK_E_ARG, "output content %d is written whole, not streamed", (int)c);
    int n = 0;
    for (int i = 0; i < set->n_rows; i++) n += set->rows[i].content == c;
    rk_outset_stream *st = calloc(1, sizeof *st + (size_t)n * sizeof st->f[0]);
    RK_CHECK_ALLOC(st, err);
    st->set = set;
    st->ids = *ids;
    rk_status s = RK_OK;
    for (int i = 0; i < set->n_rows && s == RK_OK; i++) {
        const rk_outset_row *r = &set->rows[i];
        if (r->content != c) continue;
        stream_file *f = &st->f[st->n];
        f->row = r;
        s = open_file(set, r, fold, &f->fp, err);
        if (s == RK_OK) {
            st->n++;
            s = r->open(&f->w, f->fp, &st->ids, err);
        }
    }
    if (s != RK_OK) { /* the files stay with the set, which the failure aborts */
        rk_outset_stream_free(st);
        return s;
    }
    *stp = st;
    return RK_OK;
}

rk_status rk_outset_put(void *vst, const rk_topn_batch *b, rk_error *err)
{
    rk_outset_stream *st = vst;
    for (int i = 0; i < st->n; i++) RK_FORWARD(st->f[i].row->put(st->f[i].w, b, err));
    return RK_OK;
}

rk_status rk_outset_restart(rk_outset_stream *st, rk_error *err)
{
    for (int i = 0; i < st->n; i++) {
        stream_file *f = &st->f[i];
        f->row->close(f->w);
        f->w = NULL;
        if (fflush(f->fp) != 0 || ftruncate(fileno(f->fp), 0) != 0 || fseek(f->fp, 0, SEEK_SET) != 0)
            return rk_error_set(err, RK_E_IO, "cannot start %s over in %s", f->row->name, st->set->dir);
        RK_FORWARD(f->row->open(&f->w, f->fp, &st->ids, err));
    }
    return RK_OK;
}

rk_status rk_outset_stream_target(rk_outset_stream *st, const char **tmp_path, FILE **fp, rk_error *err)
{
    *tmp_path = NULL;
    *fp = NULL;
    if (st->n != 1) return rk_error_set(err, RK_E_ARG, "a stream of %d files cannot be written in slices", st->n);
    *tmp_path = rk_out_temp_of(st->set->out, st->f[0].fp);
    *fp = st->f[0].fp;
    if (*tmp_path == NULL) return rk_error_set(err, RK_E_INTERNAL, "%s: no pending file", st->f[0].row->name);
    return RK_OK;
}

void rk_outset_stream_free(rk_outset_stream *st)
{
    if (st == NULL) return;
    for (int i = 0; i < st->n; i++)
        if (st->f[i].w != NULL) st->f[i].row->close(st->f[i].w);
    free(st);
}

int rk_outset_is_file(const rk_outset_row *rows, int n_rows, const char *name)
{
    for (int i = 0; i < n_rows; i++) {
        const char *r = rows[i].name, *dot = strrchr(r, '.');
        if (strcmp(name, r) == 0) return 1;
        const size_t stem = dot != NULL && dot != r ? (size_t)(dot - r) : strlen(r);
        const char *ext = dot != NULL && dot != r ? dot : "";
        if (strncmp(name, r, stem) != 0 || strncmp(name + stem, ".fold", 5) != 0) continue;
        const char *d = name + stem + 5, *e = d;
        while (*e >= '0' && *e <= '9') e++;
        if (e > d && *d != '0' && strcmp(e, ext) == 0) return 1;
    }
    return 0;
}

/* The table's files in the folder that this run did not write: an earlier
 * run's, which would otherwise sit beside this run's as if they belonged. */
static rk_status stale_files(rk_outset *set, char ***names, int *n, rk_error *err)
{
    rk_out_info *info = malloc(RK_OUT_MAX_FILES * sizeof *info);
    int n_info = 0;
    *names = NULL;
    *n = 0;
    if (info == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory listing %s", set->dir);
    rk_status s = rk_out_names(set->out, info, RK_OUT_MAX_FILES, &n_info, err);
    DIR *d = s == RK_OK ? opendir(set->dir) : NULL;
    if (s == RK_OK && d == NULL) s = rk_error_set(err, RK_E_IO, "cannot list %s: %s", set->dir, strerror(errno));
    struct dirent *e;
    int cap = 0;
    while (s == RK_OK && (e = readdir(d)) != NULL) {
        if (!rk_outset_is_file(set->rows, set->n_rows, e->d_name)) continue;
        int ours = 0;
        for (int i = 0; i < n_info && !ours; i++) ours = strcmp(info[i].name, e->d_name) == 0;
        if (ours) continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char **nn = realloc(*names, (size_t)cap * sizeof *nn);
            if (nn == NULL) break;
            *names = nn;
        }
        if (((*names)[*n] = strdup(e->d_name)) == NULL) break;
        (*n)++;
    }
    if (s == RK_OK && e != NULL) s = rk_error_set(err, RK_E_NOMEM, "out of memory listing %s", set->dir);
    if (d != NULL) closedir(d);
    free(info);
    return s;
}

rk_status rk_outset_commit(rk_outset *set, rk_error *err)
{
    char **stale;
    int n_stale;
    rk_status s = stale_files(set, &stale, &n_stale, err);
    if (s == RK_OK) s = rk_out_commit_set(set->out, (const char *const *)stale, n_stale, err);
    for (int i = 0; i < n_stale; i++) free(stale[i]);
    free(stale);
    return s;
}

rk_status rk_outset_file_at(rk_outset *set, const char *path, FILE **fp, rk_error *err)
{
    return rk_out_file_at(set->out, path, fp, err);
}

rk_status rk_outset_files(rk_outset *set, rk_out_info *info, int cap, int *n, rk_error *err)
{
    return rk_out_files(set->out, info, cap, n, err);
}

void rk_outset_free(rk_outset *set)
{
    if (set == NULL) return;
    rk_out_free(set->out);
    free(set->dir);
    free(set);
}
