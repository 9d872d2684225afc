/* rk_dist: the processes of an MPI run (rk_dist.h).  The only file that
 * includes mpi.h; without HAVE_MPI every operation is that of one process. */
#include "config.h"
#define _POSIX_C_SOURCE 200809L
#include "rk_dist.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_MPI
#include <mpi.h>
#endif

struct rk_dist {
    int rank, size, local_rank, local_size;
    int mpi;            /* MPI_Init ran here: finalize it */
    rk_error failed;    /* the failure every rank agreed on (status RK_OK: none yet) */
    char host[64];
#ifdef HAVE_MPI
    MPI_Comm comm;
    MPI_Datatype block; /* RK_DIST_BLOCK bytes */
#endif
};

int rk_dist_built(void)
{
#ifdef HAVE_MPI
    return 1;
#else
    return 0;
#endif
}

int rk_dist_rank(const rk_dist *d) { return d != NULL ? d->rank : 0; }
int rk_dist_size(const rk_dist *d) { return d != NULL ? d->size : 1; }
int rk_dist_local_rank(const rk_dist *d) { return d != NULL ? d->local_rank : 0; }
int rk_dist_local_size(const rk_dist *d) { return d != NULL ? d->local_size : 1; }
const char *rk_dist_host(const rk_dist *d) { return d != NULL ? d->host : "localhost"; }

/* Largest piece of one MPI call, in bytes or blocks: well inside int. */
#define PIECE ((size_t)1 << 30)

static size_t pad(size_t bytes)
{
    return (bytes + RK_DIST_BLOCK - 1) / RK_DIST_BLOCK * RK_DIST_BLOCK;
}

#ifdef HAVE_MPI
/* A launcher (mpirun, srun, hydra) started this process: its environment
 * says so.  Without one the program is one process and MPI stays off, so
 * that a plain run needs no MPI daemon. */
static int launched(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"};
    for (size_t v = 0; v < sizeof vars / sizeof vars[0]; v++)
        if (getenv(vars[v]) != NULL) return 1;
    return 0;
}

static rk_status mpi_fail(rk_error *err, int code, const char *call)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "error %d", code);
    return rk_error_set(err, RK_E_DIST, "%s: %s", call, msg);
}
#define MPI_CHECK(err, call)                                                   \
    do {                                                                       \
        int rc_ = (call);                                                      \
        if (rc_ != MPI_SUCCESS) return mpi_fail((err), rc_, #call);            \
    } while (0)
#endif

rk_status rk_dist_init(int *argc, char ***argv, rk_dist **out, rk_error *err)
{
    rk_dist *d = calloc(1, sizeof *d);
    *out = NULL;
    RK_CHECK_ALLOC(d, err);
    d->size = d->local_size = 1;
    if (gethostname(d->host, sizeof d->host - 1) != 0) snprintf(d->host, sizeof d->host, "localhost");
    d->host[sizeof d->host - 1] = '\0';
#ifdef HAVE_MPI
    if (launched()) {
        int provided = 0, rc;
        /* MPI is called from the main thread only (the engines' threads never) */
        rc = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
        if (rc != MPI_SUCCESS) {
            free(d);
            return rk_error_set(err, RK_E_DIST, "MPI_Init_thread failed (error %d)", rc);
        }
        d->mpi = 1;
        d->comm = MPI_COMM_WORLD;
        /* errors come back as statuses: the job reports them and stops */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm_rank(d->comm, &d->rank);
        MPI_Comm_size(d->comm, &d->size);
        MPI_Comm local;
        if (MPI_Comm_split_type(d->comm, MPI_COMM_TYPE_SHARED, d->rank, MPI_INFO_NULL, &local) == MPI_SUCCESS) {
            MPI_Comm_rank(local, &d->local_rank);
            MPI_Comm_size(local, &d->local_size);
            MPI_Comm_free(&local);
        }
        MPI_Type_contiguous(RK_DIST_BLOCK, MPI_BYTE, &d->block);
        MPI_Type_commit(&d->block);
    }
#else
    (void)argc;
    (void)argv;
#endif
    *out = d;
    return RK_OK;
}

void rk_dist_finalize(rk_dist *d)
{
    if (d == NULL) return;
#ifdef HAVE_MPI
    if (d->mpi) {
        MPI_Type_free(&d->block);
        MPI_Finalize();
    }
#endif
    free(d);
}

static int multi(const rk_dist *d)
{
    return d != NULL && d->size > 1;
}

rk_status rk_dist_agree(rk_dist *d, rk_status s, rk_error *err)
{
    if (!multi(d)) return s;
    /* once the ranks agreed on a failure they all stop at the same call:
     * later agreements (on the way out) need no messages */
    if (d->failed.status != RK_OK) {
        if (err != NULL) *err = d->failed;
        return d->failed.status;
    }
#ifdef HAVE_MPI
    int mine = s != RK_OK ? d->rank : d->size, first = d->size;
    MPI_CHECK(err, MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, d->comm));
    if (first == d->size) return RK_OK;
    struct {
        int status;
        char msg[RK_ERROR_MSG_CAP];
    } w;
    memset(&w, 0, sizeof w);
    if (d->rank == first) {
        w.status = (int)s;
        /* the failing rank names itself, once */
        if (err != NULL && strncmp(err->msg, "rank ", 5) == 0)
            snprintf(w.msg, sizeof w.msg, "%s", err->msg);
        else
            snprintf(w.msg, sizeof w.msg, "rank %d on %.63s: %.420s", d->rank, d->host, err != NULL ? err->msg : "failed");
    }
    MPI_CHECK(err, MPI_Bcast(&w, (int)sizeof w, MPI_BYTE, first, d->comm));
    if (w.status <= RK_OK || w.status >= RK_STATUS_MAX_) w.status = RK_E_DIST;
    rk_error_set(&d->failed, (rk_status)w.status, "%s", w.msg);
    if (err != NULL) *err = d->failed;
    return d->failed.status;
#else
    (void)err;
    return s;
#endif
}

rk_status rk_dist_bcast(rk_dist *d, void *buf, size_t bytes, int root, rk_error *err)
{
    if (!multi(d)) return RK_OK;
#ifdef HAVE_MPI
    unsigned char *p = buf;
    for (size_t at = 0; at < bytes; at += PIECE) {
        size_t n = bytes - at < PIECE ? bytes - at : PIECE;
        MPI_CHECK(err, MPI_Bcast(p + at, (int)n, MPI_BYTE, root, d->comm));
    }
#else
    (void)buf;
    (void)bytes;
    (void)root;
    (void)err;
#endif
    return RK_OK;
}

rk_status rk_dist_allgather_i64(rk_dist *d, const int64_t *mine, int n, int64_t *all, rk_error *err)
{
    memcpy(all + (size_t)rk_dist_rank(d) * (size_t)n, mine, (size_t)n * sizeof *all);
    if (!multi(d)) return RK_OK;
#ifdef HAVE_MPI
    MPI_CHECK(err, MPI_Allgather(mine, n, MPI_INT64_T, all, n, MPI_INT64_T, d->comm));
#else
    (void)err;
#endif
    return RK_OK;
}

rk_status rk_dist_bcast_alloc(rk_dist *d, unsigned char **buf, size_t *bytes, int root, rk_error *err)
{
    if (!multi(d)) return RK_OK;
    RK_FORWARD(rk_dist_agree(d, RK_OK, err)); /* every collective starts with an agreement */
    uint64_t n = d->rank == root ? (uint64_t)*bytes : 0;
    RK_FORWARD(rk_dist_bcast(d, &n, sizeof n, root, err));
    rk_status s = RK_OK;
    if (d->rank != root) {
        *bytes = (size_t)n;
        *buf = malloc(n > 0 ? (size_t)n : 1);
        if (*buf == NULL) s = rk_error_set(err, RK_E_NOMEM, "out of memory for %llu bytes from rank %d",
                                           (unsigned long long)n, root);
    }
    RK_FORWARD(rk_dist_agree(d, s, err));
    return rk_dist_bcast(d, *buf, (size_t)n, root, err);
}

/* The ranks' byte counts into counts (size entries, the caller's), and the
 * padded offsets of their parts. */
static rk_status layout(rk_dist *d, size_t bytes, uint64_t *counts, size_t *offs, rk_error *err)
{
    const int R = rk_dist_size(d);
    const int64_t mine = (int64_t)bytes;
    RK_FORWARD(rk_dist_allgather_i64(d, &mine, 1, (int64_t *)counts, err)); /* the same bits, signed */
    offs[0] = 0;
    for (int r = 0; r < R; r++) offs[r + 1] = offs[r] + pad((size_t)counts[r]);
    return RK_OK;
}

/* One collective of every rank's part into all (root < 0: every rank). */
static rk_status gather(rk_dist *d, const void *mine, size_t bytes, int root, unsigned char **all, size_t *offs,
                        rk_error *err)
{
    const int R = rk_dist_size(d), me = rk_dist_rank(d);
    *all = NULL;
    /* every collective starts with an agreement, here on the memory of the
     * counts too: a rank without it must not leave the others waiting in
     * MPI_Allgather while it goes to its next agreement */
    uint64_t *counts = calloc((size_t)R, sizeof *counts);
    rk_status s = counts != NULL ? RK_OK : rk_error_set(err, RK_E_NOMEM, "out of memory for %d byte counts", R);
    s = rk_dist_agree(d, s, err);
    if (s == RK_OK) s = layout(d, bytes, counts, offs, err);
    free(counts);
    if (s != RK_OK) return s;
    const int receives = root < 0 || me == root;
    unsigned char *buf = NULL;
    if (receives) {
        buf = malloc(offs[R] > 0 ? offs[R] : 1);
        if (buf == NULL) s = rk_error_set(err, RK_E_NOMEM, "out of memory for %zu bytes gathered from %d ranks",
                                          offs[R], R);
    }
    s = rk_dist_agree(d, s, err);
    if (s != RK_OK) {
        free(buf);
        return s;
    }
    if (!multi(d)) {
        if (bytes > 0) memcpy(buf, mine, bytes);
        *all = buf;
        return RK_OK;
    }
#ifdef HAVE_MPI
    /* one collective; counts and displacements in blocks are ints up to
     * INT_MAX blocks (137 GB in all), beyond which the lists would have to
     * be streamed (DESIGN.md) */
    if (offs[R] / RK_DIST_BLOCK > (size_t)INT_MAX) {
        free(buf);
        return rk_error_set(err, RK_E_RANGE, "%.1f GB to gather in one exchange: more than MPI's int counts of "
                            "%d-byte blocks hold", (double)offs[R] / 1e9, RK_DIST_BLOCK);
    }
    /* this rank's part, padded to whole blocks */
    unsigned char *send = calloc(pad(bytes) > 0 ? pad(bytes) : 1, 1);
    int *cnt = malloc((size_t)R * sizeof *cnt), *dsp = malloc((size_t)R * sizeof *dsp);
    if (send == NULL || cnt == NULL || dsp == NULL) s = rk_error_set(err, RK_E_NOMEM, "out of memory for a gather");
    s = rk_dist_agree(d, s, err);
    if (s == RK_OK) {
        if (bytes > 0) memcpy(send, mine, bytes);
        for (int r = 0; r < R; r++) {
            cnt[r] = (int)((offs[r + 1] - offs[r]) / RK_DIST_BLOCK);
            dsp[r] = (int)(offs[r] / RK_DIST_BLOCK);
        }
        int rc = root < 0 ? MPI_Allgatherv(send, cnt[me], d->block, buf, cnt, dsp, d->block, d->comm)
                          : MPI_Gatherv(send, cnt[me], d->block, buf, cnt, dsp, d->block, root, d->comm);
        if (rc != MPI_SUCCESS) s = mpi_fail(err, rc, root < 0 ? "MPI_Allgatherv" : "MPI_Gatherv");
    }
    free(send);
    free(cnt);
    free(dsp);
    if (s != RK_OK) {
        free(buf);
        return s;
    }
    *all = buf;
    return RK_OK;
#else
    return rk_error_set(err, RK_E_INTERNAL, "several processes without MPI");
#endif
}

rk_status rk_dist_allgatherv(rk_dist *d, const void *mine, size_t bytes, unsigned char **all, size_t *offs,
                             rk_error *err)
{
    return gather(d, mine, bytes, -1, all, offs, err);
}

rk_status rk_dist_gatherv(rk_dist *d, const void *mine, size_t bytes, int root, unsigned char **all, size_t *offs,
                          rk_error *err)
{
    return gather(d, mine, bytes, root, all, offs, err);
}

/* Point to point, in three steps so that neither end can be left waiting:
 * the byte count, the receiver's answer (1: it holds a buffer for them, 0:
 * it could not allocate one), then the bytes in pieces only after a 1. */
rk_status rk_dist_send(rk_dist *d, int to, const void *buf, size_t bytes, rk_error *err)
{
    if (!multi(d)) return rk_error_set(err, RK_E_INTERNAL, "a send within one process");
#ifdef HAVE_MPI
    uint64_t n = bytes;
    int ok = 0;
    MPI_CHECK(err, MPI_Send(&n, 1, MPI_UINT64_T, to, 1, d->comm));
    MPI_CHECK(err, MPI_Recv(&ok, 1, MPI_INT, to, 3, d->comm, MPI_STATUS_IGNORE));
    if (!ok) return rk_error_set(err, RK_E_NOMEM, "rank %d had no memory for %zu bytes from rank %d", to, bytes,
                                 d->rank);
    const unsigned char *p = buf;
    for (size_t at = 0; at < bytes; at += PIECE) {
        size_t m = bytes - at < PIECE ? bytes - at : PIECE;
        MPI_CHECK(err, MPI_Send(p + at, (int)m, MPI_BYTE, to, 2, d->comm));
    }
    return RK_OK;
#else
    (void)to;
    (void)buf;
    (void)bytes;
    return RK_OK;
#endif
}

rk_status rk_dist_recv_alloc(rk_dist *d, int from, unsigned char **buf, size_t *bytes, rk_error *err)
{
    *buf = NULL;
    *bytes = 0;
    if (!multi(d)) return rk_error_set(err, RK_E_INTERNAL, "a receive within one process");
#ifdef HAVE_MPI
    uint64_t n = 0;
    MPI_CHECK(err, MPI_Recv(&n, 1, MPI_UINT64_T, from, 1, d->comm, MPI_STATUS_IGNORE));
    unsigned char *p = n <= (uint64_t)SIZE_MAX ? malloc(n > 0 ? (size_t)n : 1) : NULL;
    int ok = p != NULL;
    MPI_CHECK(err, MPI_Send(&ok, 1, MPI_INT, from, 3, d->comm)); /* the sender sends only after a yes */
    if (p == NULL) return rk_error_set(err, RK_E_NOMEM, "out of memory for %llu bytes from rank %d",
                                       (unsigned long long)n, from);
    for (size_t at = 0; at < n; at += PIECE) {
        size_t m = (size_t)n - at < PIECE ? (size_t)n - at : PIECE;
        int rc = MPI_Recv(p + at, (int)m, MPI_BYTE, from, 2, d->comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            free(p);
            return mpi_fail(err, rc, "MPI_Recv");
        }
    }
    *buf = p;
    *bytes = (size_t)n;
    return RK_OK;
#else
    (void)from;
    return RK_OK;
#endif
}

rk_status rk_dist_fault(const rk_dist *d, const char *stage, rk_error *err)
{
    const char *f = getenv("RECKNN_FAULT");
    if (f == NULL || *f == '\0') return RK_OK;
    int rank = -1;
    char what[16] = "", where[64] = "";
    if (sscanf(f, "%d:%15[a-z]:%63s", &rank, what, where) != 3) return RK_OK;
    if (rank != rk_dist_rank(d) || strcmp(where, stage) != 0) return RK_OK;
    if (strcmp(what, "kill") == 0) raise(SIGKILL);
    return rk_error_set(err, RK_E_INTERNAL, "a fault injected by RECKNN_FAULT at %s", stage);
}
