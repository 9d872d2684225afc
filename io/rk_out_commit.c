/* Putting a run's files in place as one set (rk_output.h: rk_out_commit_set),
 * and describing them (rk_out_files). */
#define _POSIX_C_SOURCE 200809L
#include "rk_output_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

/* One move of the commit, undone in reverse order when a later one fails. */
typedef struct step {
    char *from, *to;   /* rename(from, to) was done */
    int link;          /* link(from, to) was done instead */
    int backup;        /* to is a backup name: removed when the commit succeeds */
} step;

typedef struct txn {
    step *s;
    int n, cap;
    int steps, fault_at;   /* the test hook: the fault_at-th step fails */
} txn;

static int txn_push(txn *t, const char *from, const char *to, int link, int backup)
{
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 16;
        step *s = realloc(t->s, (size_t)cap * sizeof *s);
        if (s == NULL) return -1;
        t->s = s;
        t->cap = cap;
    }
    t->s[t->n].from = strdup(from);
    t->s[t->n].to = strdup(to);
    t->s[t->n].link = link;
    t->s[t->n].backup = backup;
    if (t->s[t->n].from == NULL || t->s[t->n].to == NULL) {
        free(t->s[t->n].from);
        free(t->s[t->n].to);
        return -1;
    }
    t->n++;
    return 0;
}

/* The test hook: the fault_at-th step of the commit (a backup, a stale
 * file put aside, a file renamed in) fails. */
static int fault(txn *t)
{
    if (++t->steps != t->fault_at) return 0;
    errno = EIO;
    return 1;
}

/* Undo every step, newest first: the folder is as before the commit.  A
 * backup link goes back under the old name (a no-op while that name is
 * still the same file), then the extra name goes. */
static void txn_undo(txn *t)
{
    for (int i = t->n - 1; i >= 0; i--) {
        (void)rename(t->s[i].to, t->s[i].from);
        if (t->s[i].link) unlink(t->s[i].to);
    }
}

static void txn_free(txn *t)
{
    for (int i = 0; i < t->n; i++) {
        free(t->s[i].from);
        free(t->s[i].to);
    }
    free(t->s);
}

/* FOLDER/.NAME.old.SUFFIX beside final (FOLDER/NAME, or NAME in the
 * working folder), a name no other file has. */
static char *backup_name(const char *final, const char *suffix)
{
    const char *slash = strrchr(final, '/');
    const int dl = slash != NULL ? (int)(slash - final) + 1 : 0; /* the folder with its '/' */
    size_t n = strlen(final) + strlen(suffix) + 8;
    char *b = malloc(n);
    if (b != NULL) snprintf(b, n, "%.*s.%s.old.%s", dl, final, final + dl, suffix);
    return b;
}

/* Keep final (when it exists) under a backup name beside it; put stale
 * files aside.  @return 0, or -1 with errno. */
static int set_aside(txn *t, const char *final, int keep, const char *suffix)
{
    struct stat sb;
    if (lstat(final, &sb) != 0) return errno == ENOENT ? 0 : -1;
    if (S_ISDIR(sb.st_mode)) {
        errno = EISDIR;
        return -1;
    }
    if (fault(t)) return -1;
    char *bak = backup_name(final, suffix);
    if (bak == NULL) return -1;
    int r;
    if (keep && link(final, bak) == 0) { /* the old file stays in place until replaced */
        r = txn_push(t, final, bak, 1, 1);
    } else if ((r = rename(final, bak)) == 0) { /* stale, or no hard links here: moved aside */
        r = txn_push(t, final, bak, 0, 1);
    }
    free(bak);
    return r;
}

/* A folder's entries on disk (best effort: not every file system lets a
 * folder be opened and synced). */
static void sync_folder(const char *dir)
{
    int dfd = open(dir, O_RDONLY);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
}

static rk_status flush_all(rk_out *o, rk_error *err)
{
    rk_status s = RK_OK;
    for (int i = 0; i < o->n; i++) {
        out_file *f = &o->f[i];
        const char *why = NULL;
        /* fflush first: after an earlier failed write it fails again and
         * tells why (EFBIG, ENOSPC), where ferror alone cannot */
        if (fflush(f->fp) != 0) why = strerror(errno);
        else if (ferror(f->fp)) why = "write error";
        else if (fsync(fileno(f->fp)) != 0 && errno != EINVAL && errno != EROFS) why = strerror(errno);
        if (fclose(f->fp) != 0 && why == NULL) why = strerror(errno);
        f->fp = NULL;
        rk_out_temp_closed(f->slot);
        if (why != NULL && s == RK_OK) s = rk_error_set(err, RK_E_IO, "cannot write %s: %s", f->final_path, why);
    }
    return s;
}

/* The moves, in order: backups of the names the run replaces, stale files
 * aside, then the run's files in.  @return 0, or -1 with errno and *what. */
static int moves(rk_out *o, txn *t, const char *const *stale, int n_stale, const char **what)
{
    for (int i = 0; i < o->n; i++) {
        out_file *f = &o->f[i];
        *what = f->final_path;
        if (set_aside(t, f->final_path, 1, strrchr(f->tmp_path, '.') + 1) != 0) return -1;
    }
    for (int i = 0; i < n_stale; i++) {
        const size_t n = strlen(o->dir) + strlen(stale[i]) + 2;
        char *p = malloc(n), sfx[24];
        if (p == NULL) return -1;
        snprintf(p, n, "%s/%s", o->dir, stale[i]);
        snprintf(sfx, sizeof sfx, "stale%d", i);
        *what = stale[i];
        const int r = set_aside(t, p, 0, sfx);
        free(p);
        if (r != 0) return -1;
    }
    for (int i = 0; i < o->n; i++) {
        out_file *f = &o->f[i];
        *what = f->final_path;
        if (fault(t) || rename(f->tmp_path, f->final_path) != 0 || txn_push(t, f->tmp_path, f->final_path, 0, 0) != 0)
            return -1;
    }
    return 0;
}

rk_status rk_out_commit_set(rk_out *o, const char *const *stale, int n_stale, rk_error *err)
{
    rk_status s = flush_all(o, err);
    if (s != RK_OK) {
        rk_out_abort(o);
        return s;
    }
    if (!rk_out_pending_enter()) {
        rk_out_abort(o);
        return rk_error_set(err, RK_E_IO, "%s: files not put in place: the run was interrupted", o->dir);
    }
    txn t = {NULL, 0, 0, 0, 0};
    const char *fault = getenv("RECKNN_COMMIT_FAULT");
    if (fault != NULL) t.fault_at = atoi(fault);
    const char *what = o->dir;
    if (moves(o, &t, stale, n_stale, &what) != 0) {
        const int e = errno;
        s = rk_error_set(err, RK_E_IO, "cannot put %s in place: %s; the folder keeps the previous run's files",
                         what, strerror(e));
        txn_undo(&t);
        txn_free(&t);
        rk_out_pending_leave();
        rk_out_abort(o);
        return s;
    }
    /* in place: the backups and the stale files go */
    for (int i = 0; i < t.n; i++)
        if (t.s[i].backup) unlink(t.s[i].to);
    txn_free(&t);
    for (int i = 0; i < o->n; i++) {
        out_file *f = &o->f[i];
        free(f->tmp_path);
        f->tmp_path = NULL;
        rk_out_temp_forget(f->slot);
        f->slot = -1;
    }
    rk_out_pending_leave();
    sync_folder(o->dir);
    for (int i = 0; i < o->n; i++) { /* the renames of files elsewhere (rk_out_file_at), on disk */
        const char *fin = o->f[i].final_path, *slash = strrchr(fin, '/');
        if (!o->f[i].foreign) continue;
        char *d = slash != NULL ? strndup(fin, slash == fin ? 1 : (size_t)(slash - fin)) : NULL;
        sync_folder(d != NULL ? d : ".");
        free(d);
    }
    o->committed = 1;
    /* the directories made hold the run's files now: they stay */
    for (int i = 0; i < o->n_made; i++) {
        rk_out_temp_forget(o->made_slot[i]);
        o->made_slot[i] = -1;
    }
    for (int i = 0; i < o->n; i++) rk_out_file_discard_(&o->f[i]);
    o->n = 0;
    return RK_OK;
}

rk_status rk_out_commit(rk_out *o, rk_error *err)
{
    return rk_out_commit_set(o, NULL, 0, err);
}

rk_status rk_out_files(rk_out *o, rk_out_info *info, int cap, int *n, rk_error *err)
{
    RK_FORWARD(rk_out_names(o, info, cap, n, err));
    char *buf = malloc((size_t)1 << 20);
    if (buf == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory describing the outputs");
    rk_status s = RK_OK;
    for (int i = 0, k = 0; i < o->n && s == RK_OK; i++) {
        out_file *f = &o->f[i];
        if (f->foreign) continue;
        rk_out_info *in = &info[k++];
        if (f->fp != NULL && fflush(f->fp) != 0) {
            s = rk_error_set(err, RK_E_IO, "cannot write %s: %s", f->final_path, strerror(errno));
            break;
        }
        const int fd = f->fp != NULL ? fileno(f->fp) : -1;
        XXH64_state_t *h = XXH64_createState();
        if (fd < 0 || h == NULL || XXH64_reset(h, 0) == XXH_ERROR) {
            XXH64_freeState(h);
            s = rk_error_set(err, RK_E_IO, "cannot read %s back", f->final_path);
            break;
        }
        off_t at = 0;
        ssize_t got;
        while ((got = pread(fd, buf, (size_t)1 << 20, at)) > 0) {
            XXH64_update(h, buf, (size_t)got);
            at += got;
        }
        if (got < 0) s = rk_error_set(err, RK_E_IO, "cannot read %s back: %s", f->final_path, strerror(errno));
        in->bytes = (int64_t)at;
        in->xxh64 = XXH64_digest(h);
        XXH64_freeState(h);
    }
    free(buf);
    return s;
}

rk_status rk_out_names(rk_out *o, rk_out_info *info, int cap, int *n, rk_error *err)
{
    *n = 0;
    for (int i = 0; i < o->n; i++) {
        if (o->f[i].foreign) continue;
        if (*n == cap) return rk_error_set(err, RK_E_RANGE, "more than %d output files", cap);
        memset(&info[*n], 0, sizeof info[*n]);
        snprintf(info[*n].name, sizeof info[*n].name, "%s", strrchr(o->f[i].final_path, '/') + 1);
        (*n)++;
    }
    return RK_OK;
}
