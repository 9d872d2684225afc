/* rk_dist.h — the processes of an MPI run (prefix rk_dist_).
 *
 * The only door to MPI: everything else of the library sees a rank, a size
 * and a few collective operations on bytes.  Built without MPI (configure
 * without --with-mpi), or run without mpirun, there is one process: rank 0
 * of 1, every collective a copy or a no-op, so that the job has one code path.
 *
 * Failure model: every rank calls the same collectives in the same order,
 * and every exchange starts with rk_dist_agree (the functions below that
 * exchange data call it first themselves).  A rank that fails (an error
 * status: bad data, no memory, a GPU error, a file it cannot write) goes
 * straight to its next agreement, whichever it is: as all agreements are
 * the same collective, it meets the others' next one, and the whole job
 * stops there with the lowest failing rank's message ("rank R on HOST:
 * ..."); from then on every agreement returns that failure at once, on
 * every rank.  A rank that dies (a signal, an exit without
 * rk_dist_finalize) is noticed by mpirun, which ends the others.
 *
 * Sizes are bytes (size_t); MPI's int counts are never exceeded: transfers
 * go in blocks of RK_DIST_BLOCK bytes and large messages in pieces.
 */
#ifndef RK_DIST_H
#define RK_DIST_H

#include <stddef.h>
#include <stdint.h>
#include "rk_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rk_dist rk_dist; /* opaque */

/* Unit of the variable-size exchanges: every rank's part is padded to it. */
#define RK_DIST_BLOCK 64

/* How the ranks get the data (--mpi-load). */
typedef enum rk_dist_load {
    RK_DIST_LOAD_AUTO = 0, /* the faster one measured (BENCHMARKS.md) */
    RK_DIST_LOAD_EACH,     /* every rank reads and parses the input itself */
    RK_DIST_LOAD_BCAST,    /* rank 0 loads, the others receive its ratings and model */
    RK_DIST_LOAD_SHARD     /* each rank parses a part of the input; the rows are gathered */
} rk_dist_load;

/*! rk_dist_load_parse() : "auto", "each", "bcast", "shard".  @return RK_OK or RK_E_ARG. */
rk_status rk_dist_load_parse(const char *name, rk_dist_load *out);
const char *rk_dist_load_name(rk_dist_load l);

/* Who formats the recommendations' rows (--mpi-output). */
typedef enum rk_dist_output {
    RK_DIST_OUTPUT_AUTO = 0, /* slices when the ranks span several hosts, else root (BENCHMARKS.md) */
    RK_DIST_OUTPUT_SLICES,   /* each rank its users' rows, written at their byte offsets */
    RK_DIST_OUTPUT_ROOT      /* rank 0 every row, from the others' batches */
} rk_dist_output;

/*! rk_dist_output_parse() : "auto", "slices", "root".  @return RK_OK or RK_E_ARG. */
rk_status rk_dist_output_parse(const char *name, rk_dist_output *out);
const char *rk_dist_output_name(rk_dist_output o);

/*! rk_dist_built() : @return 1 when built with MPI, else 0. */
int rk_dist_built(void);

/*! rk_dist_init() : join the run (MPI_Init when built with MPI).  *out gets
 *  the handle (never NULL on RK_OK).  @return RK_OK, RK_E_NOMEM, RK_E_DIST
 *  (MPI failed to start). */
rk_status rk_dist_init(int *argc, char ***argv, rk_dist **out, rk_error *err);

/*! rk_dist_finalize() : leave the run and free d (NULL is fine). */
void rk_dist_finalize(rk_dist *d);

/*! rk_dist_rank(), rk_dist_size() : this process's rank and the number of
 *  processes (0 and 1 for NULL).  rk_dist_local_rank(), rk_dist_local_size()
 *  : the same among the processes of this host (for the GPU each binds to). */
int rk_dist_rank(const rk_dist *d);
int rk_dist_size(const rk_dist *d);
int rk_dist_local_rank(const rk_dist *d);
int rk_dist_local_size(const rk_dist *d);

/*! rk_dist_host() : this process's host name (for messages). */
const char *rk_dist_host(const rk_dist *d);

/*! rk_dist_agree() : collective.  Every rank gives its status s (and err
 *  when s is not RK_OK); every rank gets the status of the lowest failing
 *  rank, with its message prefixed by "rank R on HOST: " in err, or RK_OK
 *  when none failed.  @return that status. */
rk_status rk_dist_agree(rk_dist *d, rk_status s, rk_error *err);

/*! rk_dist_bcast() : collective: root's bytes[0..bytes) to every rank's buf
 *  (the same size on every rank).  @return RK_OK, RK_E_DIST (MPI failed). */
rk_status rk_dist_bcast(rk_dist *d, void *buf, size_t bytes, int root, rk_error *err);

/*! rk_dist_bcast_alloc() : collective: root's *buf and *bytes to every rank;
 *  on the others *buf is allocated here (the caller frees).
 *  @return RK_OK, RK_E_NOMEM (on any rank: every rank then fails), RK_E_DIST. */
rk_status rk_dist_bcast_alloc(rk_dist *d, unsigned char **buf, size_t *bytes, int root, rk_error *err);

/*! rk_dist_allgather_i64() : collective: every rank's n values of mine
 *  into all (size * n values, in rank order; the caller's).  No agreement
 *  first: the loader's votes use it.  @return RK_OK, RK_E_DIST. */
rk_status rk_dist_allgather_i64(rk_dist *d, const int64_t *mine, int n, int64_t *all, rk_error *err);

/*! rk_dist_allgatherv() : collective: every rank's mine[0..bytes) to every
 *  rank.  *all (allocated here; the caller frees) holds rank r's bytes at
 *  offs[r] (offs has size + 1 entries; offs[size] = the total, padding
 *  included).  @return RK_OK, RK_E_NOMEM (on any rank), RK_E_RANGE (more
 *  than INT_MAX blocks in all), RK_E_DIST. */
rk_status rk_dist_allgatherv(rk_dist *d, const void *mine, size_t bytes, unsigned char **all, size_t *offs,
                             rk_error *err);

/*! rk_dist_gatherv() : as rk_dist_allgatherv, but only root gets *all and
 *  offs (*all is NULL elsewhere; offs is needed on every rank).
 *  @return RK_OK, RK_E_NOMEM, RK_E_RANGE, RK_E_DIST. */
rk_status rk_dist_gatherv(rk_dist *d, const void *mine, size_t bytes, int root, unsigned char **all, size_t *offs,
                          rk_error *err);

/*! rk_dist_send(), rk_dist_recv_alloc() : point to point, for streams that
 *  one rank joins in order: the byte count, the receiver's answer whether it
 *  could allocate them, then the bytes in pieces, so that a receiver out of
 *  memory leaves no sender waiting (both then return RK_E_NOMEM).
 *  rk_dist_recv_alloc allocates *buf (the caller frees).
 *  @return RK_OK, RK_E_NOMEM, RK_E_DIST; RK_E_INTERNAL within one process. */
rk_status rk_dist_send(rk_dist *d, int to, const void *buf, size_t bytes, rk_error *err);
rk_status rk_dist_recv_alloc(rk_dist *d, int from, unsigned char **buf, size_t *bytes, rk_error *err);

/*! rk_dist_fault() : the test hook of RECKNN_FAULT="RANK:WHAT:STAGE" (WHAT
 *  kill or fail): at stage `stage` the named rank raises SIGKILL, or
 *  returns RK_E_INTERNAL naming the injected fault.  Used by the tests of a
 *  rank that dies or fails mid-run; unset, it costs one getenv per stage.
 *  @return RK_OK or RK_E_INTERNAL. */
rk_status rk_dist_fault(const rk_dist *d, const char *stage, rk_error *err);

#ifdef __cplusplus
}
#endif
#endif /* RK_DIST_H */
