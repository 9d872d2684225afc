/* The process-wide registry of a run's temporary files and new directories
 * (rk_output.h, "Interrupted runs").
 *
 * A signal can arrive on any thread at any moment, so the registry holds
 * everything the cleanup needs in fixed static slots (paths copied in when a
 * file is created) and is run with lock-free atomics only: the cleanup never
 * allocates, never takes a lock and calls nothing but unlink, rmdir and
 * nanosleep.  Creating a file and renaming files into place are short
 * critical sections counted in g_inflight: the cleanup first raises g_cancel
 * (after which no new section starts), then waits for the sections under way,
 * so that it neither misses a file being created nor tears a commit's renames
 * apart (a commit under way finishes: the run's files are then all new). */
#define _POSIX_C_SOURCE 200809L
#include "rk_output.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { SLOT_FREE = 0, SLOT_BUSY, SLOT_FILE, SLOT_DIR };

typedef struct pend_slot {
    atomic_int state;
    atomic_int fd;               /* the open file (for rk_out_path_of), -1 when none */
    const char *label;           /* the name errors use; owned by the caller */
    char path[RK_OUT_PATH_MAX];  /* what the cleanup removes */
} pend_slot;

static pend_slot g_slot[RK_OUT_PENDING_MAX];
static atomic_int g_cancel;
static atomic_int g_inflight;
static _Thread_local int t_inside; /* this thread's open sections */

int rk_out_pending_enter(void)
{
    atomic_fetch_add(&g_inflight, 1);
    t_inside++;
    if (atomic_load(&g_cancel)) {
        rk_out_pending_leave();
        return 0;
    }
    return 1;
}

void rk_out_pending_leave(void)
{
    t_inside--;
    atomic_fetch_sub(&g_inflight, 1);
}

int rk_out_cancelled(void)
{
    return atomic_load(&g_cancel) != 0;
}

/* A free slot marked busy, or -1. */
static int grab_slot(void)
{
    for (int i = 0; i < RK_OUT_PENDING_MAX; i++) {
        int want = SLOT_FREE;
        if (atomic_load(&g_slot[i].state) == SLOT_FREE &&
            atomic_compare_exchange_strong(&g_slot[i].state, &want, SLOT_BUSY))
            return i;
    }
    return -1;
}

rk_status rk_out_temp_create(char *tmpl, const char *label, int *fd, int *slot, rk_error *err)
{
    *fd = -1;
    *slot = -1;
    size_t l = strlen(tmpl);
    if (l >= RK_OUT_PATH_MAX) return rk_error_set(err, RK_E_RANGE, "%s: the path is too long", label);
    if (!rk_out_pending_enter()) return rk_error_set(err, RK_E_IO, "%s: not created: the run was interrupted", label);
    int s = grab_slot();
    if (s < 0) {
        rk_out_pending_leave();
        return rk_error_set(err, RK_E_RANGE, "%s: too many temporary files at once (%d at most)", label,
                            RK_OUT_PENDING_MAX);
    }
    int f = mkstemp(tmpl);
    if (f < 0) {
        int e = errno;
        atomic_store(&g_slot[s].state, SLOT_FREE);
        rk_out_pending_leave();
        errno = e;
        return rk_error_set(err, RK_E_IO, "cannot create %s: %s", label, strerror(e));
    }
    memcpy(g_slot[s].path, tmpl, l + 1);
    g_slot[s].label = label;
    atomic_store(&g_slot[s].fd, f);
    atomic_store(&g_slot[s].state, SLOT_FILE);
    rk_out_pending_leave();
    *fd = f;
    *slot = s;
    return RK_OK;
}

int rk_out_dir_create(const char *path, int *slot)
{
    *slot = -1;
    size_t l = strlen(path);
    if (l >= RK_OUT_PATH_MAX) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (!rk_out_pending_enter()) {
        errno = EINTR;
        return -1;
    }
    int s = grab_slot();
    if (mkdir(path, 0777) != 0) {
        int e = errno;
        if (s >= 0) atomic_store(&g_slot[s].state, SLOT_FREE);
        rk_out_pending_leave();
        errno = e;
        return -1;
    }
    /* a full table only costs the cleanup of this (empty) directory */
    if (s >= 0) {
        memcpy(g_slot[s].path, path, l + 1);
        g_slot[s].label = NULL;
        atomic_store(&g_slot[s].fd, -1);
        atomic_store(&g_slot[s].state, SLOT_DIR);
    }
    rk_out_pending_leave();
    *slot = s;
    return 0;
}

void rk_out_temp_closed(int slot)
{
    if (slot >= 0 && slot < RK_OUT_PENDING_MAX) atomic_store(&g_slot[slot].fd, -1);
}

void rk_out_temp_forget(int slot)
{
    if (slot < 0 || slot >= RK_OUT_PENDING_MAX) return;
    atomic_store(&g_slot[slot].fd, -1);
    g_slot[slot].label = NULL;
    /* After a cancel the slot stays taken: the cleanup may be reading its path. */
    if (!rk_out_pending_enter()) return;
    atomic_store(&g_slot[slot].state, SLOT_FREE);
    rk_out_pending_leave();
}

const char *rk_out_path_of(FILE *fp)
{
    if (fp == NULL) return NULL;
    int fd = fileno(fp);
    if (fd < 0) return NULL;
    for (int i = 0; i < RK_OUT_PENDING_MAX; i++)
        if (atomic_load(&g_slot[i].state) == SLOT_FILE && atomic_load(&g_slot[i].fd) == fd) return g_slot[i].label;
    return NULL;
}

void rk_out_unlink_pending(void)
{
    atomic_store(&g_cancel, 1);
    /* Sections under way end within microseconds (a mkstemp, a few renames);
     * a section of this very thread (a handler that interrupted it) never
     * will, so it is not waited for.  Bounded anyway: at most half a second. */
    const int own = t_inside;
    const struct timespec ms = {0, 1000000L};
    for (int i = 0; i < 500 && atomic_load(&g_inflight) > own; i++) nanosleep(&ms, NULL);
    for (int i = 0; i < RK_OUT_PENDING_MAX; i++)
        if (atomic_load(&g_slot[i].state) == SLOT_FILE) (void)unlink(g_slot[i].path);
    /* directories deepest first: a child's path is longer than its parent's */
    unsigned char done[RK_OUT_PENDING_MAX] = {0};
    for (;;) {
        int best = -1;
        size_t best_len = 0;
        for (int i = 0; i < RK_OUT_PENDING_MAX; i++) {
            if (done[i] || atomic_load(&g_slot[i].state) != SLOT_DIR) continue;
            size_t l = strlen(g_slot[i].path);
            if (best < 0 || l > best_len) best = i, best_len = l;
        }
        if (best < 0) break;
        done[best] = 1;
        (void)rmdir(g_slot[best].path); /* fails, harmlessly, when not empty */
    }
}

void rk_out_pending_rearm(void)
{
    atomic_store(&g_cancel, 0);
}
