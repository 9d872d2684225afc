/* The ranks' recommendations joined after top-N (rk_job_internal.h).
 *
 * batches: every rank's top-N batches go to rank 0 (rk_dist_send, in rank
 *          order), where they feed the ranking metrics, and, under
 *          --mpi-output root, the file too: rank 0 then formats every row.
 * slices:  under --mpi-output slices each rank formats its own users' rows
 *          (rk_outset_slice) while its GPUs rank them; once top-N is done
 *          the ranks swap their slices' sizes, so that each knows its byte
 *          offset in rank 0's pending file (rank 0's rows, header first,
 *          come first), and write their slices there themselves.  A rank
 *          that cannot open the file (another host, no shared folder) sends
 *          its slice to rank 0 instead, which writes it.  Rank 0 then reads
 *          each slice's first and last 8 bytes back through a descriptor
 *          opened for it (on a shared file system an open shows what other
 *          hosts wrote and closed): a slice that differs (written into
 *          another host's folder of the same name) is sent again and written
 *          by rank 0.  The file stays rank 0's pending file: committed or
 *          removed with the run's other files, never seen half-written.
 *
 * Test hook: RECKNN_SLICE_FAULT="R:unreachable" makes rank R behave as if it
 * could not open the file, "R:lost" as if its write had gone elsewhere (it
 * reports the slice written without writing it).
 */
#define _POSIX_C_SOURCE 200809L
#include "config.h"
#include "rk_job_internal.h"
#include "rk_omp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- batches to rank 0 ------------------------------------------------------ */

/* Rank 0: its batches (unless drained already), then every other rank's as
 * they arrive.  A failing sink stops the replays but not the receiving, so
 * that no rank is left waiting on its send. */
static rk_status join_batches(const rk_job_spread_in *in, const rk_recbuf *const *bufs, int n_bufs, int drained,
                              const int32_t *rb, const rk_recbuf *mine, rk_error *err)
{
    const int R = rk_dist_size(in->dist), me = rk_dist_rank(in->dist);
    if (me != 0) return rk_dist_send(in->dist, 0, mine->data, mine->bytes, err);
    /* the other ranks' batches: the file and the metrics (to's sink), or with slices the metrics alone */
    const rk_topn_sink others = in->recs != NULL ? in->recs->measure : in->to->sink;
    void *others_ud = in->recs != NULL ? in->recs->measure_ud : in->to->sink_ud;
    rk_status s = RK_OK;
    for (int w = 0; w < n_bufs && s == RK_OK && !drained; w++)
        s = rk_recbuf_replay(bufs[w]->data, bufs[w]->bytes, rb[0], in->to->sink, in->to->sink_ud, err);
    for (int r = 1; r < R; r++) {
        unsigned char *buf = NULL;
        size_t bytes = 0;
        rk_error e2;
        rk_status rs = rk_dist_recv_alloc(in->dist, r, &buf, &bytes, s == RK_OK ? err : &e2);
        if (rs != RK_OK) {
            free(buf);
            if (s == RK_OK) s = rs;
            if (rs == RK_E_DIST) break; /* the link is gone: nothing more will come */
            continue;
        }
        if (s == RK_OK) s = rk_recbuf_replay(buf, bytes, rb[r], others, others_ud, err);
        free(buf);
    }
    return s;
}

/* ---- slices ------------------------------------------------------------------- */

#define EDGE 8 /* bytes of each end of a slice that rank 0 reads back */

/* The first and last EDGE bytes of d[0..n), zero-padded, as int64 bits. */
static void edges(const unsigned char *d, size_t n, int64_t *head, int64_t *tail)
{
    unsigned char h[EDGE] = {0}, t[EDGE] = {0};
    const size_t k = n < EDGE ? n : EDGE;
    if (k > 0) {
        memcpy(h, d, k);
        memcpy(t, d + n - k, k);
    }
    memcpy(head, h, EDGE);
    memcpy(tail, t, EDGE);
}

/* RECKNN_SLICE_FAULT names this rank and what. */
static int slice_fault(const rk_dist *d, const char *what)
{
    const char *f = getenv("RECKNN_SLICE_FAULT");
    char want[48];
    snprintf(want, sizeof want, "%d:%s", rk_dist_rank(d), what);
    return f != NULL && strcmp(f, want) == 0;
}

/* Rank 0: slice r (bytes at off) as its rank reported it?  Its ends read back. */
static int slice_arrived(const char *path, const char *label, int64_t off, int64_t bytes, const int64_t *sent)
{
    unsigned char h[EDGE], t[EDGE];
    const size_t k = bytes < EDGE ? (size_t)bytes : EDGE;
    size_t got = 0, got2 = 0;
    rk_error e;
    if (rk_out_read_at(path, label, off, h, k, &got, &e) != RK_OK || got != k) return 0;
    if (rk_out_read_at(path, label, off + bytes - (int64_t)k, t, k, &got2, &e) != RK_OK || got2 != k) return 0;
    int64_t head, tail, unused; /* the ends as the rank took them from its slice (edges) */
    edges(h, k, &head, &unused);
    edges(t, k, &unused, &tail);
    return head == sent[1] && tail == sent[2];
}

/* This rank's slice: rank 0's rows as written so far (the header first),
 * the others' formatted bytes. */
static rk_status own_slice(const rk_job_recs_out *ro, int me, const unsigned char **data, size_t *bytes,
                           rk_error *err)
{
    *data = NULL;
    *bytes = 0;
    if (me != 0) return rk_outset_slice_bytes(ro->slice, data, bytes, err);
    errno = 0;
    const off_t at = fflush(ro->fp) == 0 ? ftello(ro->fp) : (off_t)-1;
    if (at < 0)
        return rk_error_set(err, RK_E_IO, "cannot write %s: %s", ro->tmp_path, strerror(errno != 0 ? errno : EIO));
    *bytes = (size_t)at;
    return RK_OK;
}

/* Rank 0: the file holds every slice: its size is theirs. */
static rk_status check_size(const rk_job_recs_out *ro, int64_t total, rk_error *err)
{
    struct stat sb;
    if (fstat(fileno(ro->fp), &sb) != 0)
        return rk_error_set(err, RK_E_IO, "cannot stat %s: %s", ro->tmp_path, strerror(errno));
    if ((int64_t)sb.st_size != total)
        return rk_error_set(err, RK_E_IO, "%s: %lld bytes where the ranks' slices make %lld", ro->tmp_path,
                            (long long)sb.st_size, (long long)total);
    return RK_OK;
}

/* The slices sent to rank 0 (need[r]), written there. */
static rk_status send_slices(const rk_job_spread_in *in, const char *path, const int64_t *off, const int64_t *need,
                             const unsigned char *data, size_t bytes, rk_error *err)
{
    const int R = rk_dist_size(in->dist), me = rk_dist_rank(in->dist);
    if (me != 0) return need[me] ? rk_dist_send(in->dist, 0, data, bytes, err) : RK_OK;
    rk_status s = RK_OK;
    for (int r = 1; r < R; r++) {
        if (!need[r]) continue;
        unsigned char *buf = NULL;
        size_t n = 0;
        rk_error e2;
        rk_status rs = rk_dist_recv_alloc(in->dist, r, &buf, &n, s == RK_OK ? err : &e2);
        if (rs == RK_OK && s == RK_OK) rs = rk_out_write_at(path, in->recs->tmp_path, off[r], buf, n, err);
        free(buf);
        if (s == RK_OK) s = rs;
        if (rs == RK_E_DIST) break;
    }
    return s;
}

static rk_status join_slices(const rk_job_spread_in *in, rk_error *err)
{
    const int R = rk_dist_size(in->dist), me = rk_dist_rank(in->dist);
    const rk_job_recs_out *ro = in->recs;
    const double t0 = rk_omp_wtime();
    const unsigned char *data = NULL;
    size_t bytes = 0;
    int64_t *all = malloc((size_t)R * 3 * sizeof *all), *off = malloc((size_t)(R + 1) * sizeof *off);
    int64_t *direct = malloc((size_t)R * sizeof *direct), *need = malloc((size_t)R * sizeof *need);
    rk_status s = all != NULL && off != NULL && direct != NULL && need != NULL
                      ? RK_OK
                      : rk_error_set(err, RK_E_NOMEM, "out of memory for %d slices", R);
    if (s == RK_OK) s = own_slice(ro, me, &data, &bytes, err);
    int64_t mine[3] = {(int64_t)bytes, 0, 0};
    if (data != NULL) edges(data, bytes, &mine[1], &mine[2]);
    s = rk_dist_agree(in->dist, s, err);
    if (s == RK_OK) s = rk_dist_allgather_i64(in->dist, mine, 3, all, err);
    unsigned char *path = NULL;
    size_t plen = me == 0 ? strlen(ro->tmp_path) + 1 : 0;
    if (me == 0) path = (unsigned char *)ro->tmp_path;
    if (s == RK_OK) s = rk_dist_bcast_alloc(in->dist, &path, &plen, 0, err);
    if (s == RK_OK) {
        off[0] = 0;
        for (int r = 0; r < R; r++) off[r + 1] = off[r] + all[3 * r];
        /* each rank its own slice, where it reaches the file */
        int64_t wrote = me == 0 || bytes == 0;
        if (!wrote && !slice_fault(in->dist, "unreachable")) {
            rk_error e2;
            wrote = slice_fault(in->dist, "lost") ||
                    rk_out_write_at((const char *)path, "recommendations.csv", off[me], data, bytes, &e2) == RK_OK;
        }
        s = rk_dist_allgather_i64(in->dist, &wrote, 1, direct, err);
    }
    if (s == RK_OK) {
        for (int r = 0; r < R; r++)
            need[r] = r > 0 && all[3 * r] > 0 &&
                      (!direct[r] || (me == 0 && !slice_arrived(ro->tmp_path, "recommendations.csv", off[r],
                                                                 all[3 * r], &all[3 * r])));
        s = rk_dist_bcast(in->dist, need, (size_t)R * sizeof *need, 0, err);
    }
    if (s == RK_OK) s = send_slices(in, (const char *)path, off, need, data, bytes, err);
    if (s == RK_OK && me == 0) s = check_size(ro, off[R], err);
    if (s == RK_OK && me == 0) {
        in->rep->out_slices = R;
        in->rep->out_direct = R;
        for (int r = 1; r < R; r++) in->rep->out_direct -= need[r] != 0;
        in->rep->out_bytes = off[R];
        in->rep->t_out_join = rk_omp_wtime() - t0;
    }
    if (me != 0) free(path);
    free(all);
    free(off);
    free(direct);
    free(need);
    return s;
}

rk_status rk_job_join_recs(const rk_job_spread_in *in, const rk_recbuf *const *bufs, int n_bufs, int drained,
                           const int32_t *rb, rk_status s, rk_error *err)
{
    const int me = rk_dist_rank(in->dist);
    const rk_job_recs_out *ro = in->recs;
    /* another rank's slice from its batches, when not drained into it as they came */
    for (int w = 0; me != 0 && ro != NULL && !drained && s == RK_OK && w < n_bufs; w++)
        s = rk_recbuf_replay(bufs[w]->data, bufs[w]->bytes, 0, rk_outset_slice_put, ro->slice, err);
    /* its batches as one message (made before the agreement, so that a
     * failure to make it is agreed on) */
    rk_recbuf mine;
    rk_recbuf_init(&mine);
    for (int w = 0; me != 0 && s == RK_OK && w < n_bufs; w++) s = rk_recbuf_append(&mine, bufs[w], err);
    if (s == RK_OK) s = rk_dist_fault(in->dist, "topn", err);
    s = rk_dist_agree(in->dist, s, err);
    if (s == RK_OK) s = join_batches(in, bufs, n_bufs, drained, rb, &mine, err);
    rk_recbuf_free(&mine);
    if (ro == NULL) return s;
    s = rk_dist_agree(in->dist, s, err);
    return s == RK_OK ? join_slices(in, err) : s;
}

rk_status rk_job_recs_setup(const rk_job_opts *o, int write, rk_outset_stream *recs, rk_rank *rank,
                            const rk_dataset *ds, rk_job_recs_out *ro, rk_outset_slice **slice, rk_error *err)
{
    memset(ro, 0, sizeof *ro);
    /* auto: slices when the ranks span several hosts, each with its own
     * cores; on one host rank 0 formats every row, measured faster
     * (BENCHMARKS.md 2026-11-28, third steps: the ranks share the cores,
     * and a slice costs its memory stream and its write on top) */
    const int hosts = rk_dist_local_size(o->dist) < rk_dist_size(o->dist); /* the same answer on every rank */
    const int slices = o->dist_output == RK_DIST_OUTPUT_SLICES || (o->dist_output == RK_DIST_OUTPUT_AUTO && hosts);
    if (!write || rk_dist_size(o->dist) < 2 || !slices) return RK_OK;
    if (rk_dist_rank(o->dist) != 0) {
        const rk_outset_ids ids = {ds->users, ds->items};
        rk_outset_slice_free(*slice);
        *slice = NULL;
        RK_FORWARD(rk_job_recs_slice_open(&ids, slice, err));
        ro->slice = *slice;
        return RK_OK;
    }
    if (recs == NULL || rank == NULL)
        return rk_error_set(err, RK_E_INTERNAL, "no recommendations' file or ranking metrics for the slices");
    RK_FORWARD(rk_outset_stream_target(recs, &ro->tmp_path, &ro->fp, err));
    ro->measure = rk_rank_sink;
    ro->measure_ud = rank;
    return RK_OK;
}
