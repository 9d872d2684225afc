/* The job under mpirun and on several GPUs (rk_job_internal.h): what the
 * options allow, how the ranks get the data, and the devices of each rank. */
#include "config.h"
#include "rk_job_internal.h"
#include "rk_gpu.h"
#include "rk_omp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rk_status rk_job_dist_check_opts(const rk_job_opts *o, rk_error *err)
{
    if (rk_dist_size(o->dist) <= 1) return RK_OK;
    if (o->model_path != NULL)
        return rk_error_set(err, RK_E_ARG, "--model answers from a saved model in one process: run it without mpirun "
                            "(or with -np 1)");
    if (o->approx != RK_APPROX_NONE)
        return rk_error_set(err, RK_E_ARG, "--approx runs in one process: run it without mpirun (or with -np 1)");
    return RK_OK;
}

rk_status rk_job_dist_devices(const rk_job_opts *o, int32_t *ids, int *n, rk_error *err)
{
    int32_t all[RK_GPUS_MAX];
    int na = 0;
    *n = 0;
    RK_FORWARD(rk_gpus_resolve(&o->gpus, rk_gpu_device_count(), all, &na, err));
    const int L = rk_dist_local_size(o->dist), l = rk_dist_local_rank(o->dist);
    if (rk_dist_size(o->dist) <= 1 || L <= 1) { /* one process on its host: every device named */
        memcpy(ids, all, (size_t)na * sizeof *ids);
        *n = na;
        return RK_OK;
    }
    if (!rk_gpus_given(&o->gpus)) { /* the default: one device per rank of the host, round robin */
        const int visible = rk_gpu_device_count();
        ids[0] = visible > 0 ? l % visible : 0;
        *n = 1;
        return RK_OK;
    }
    if (L >= na) { /* more ranks than devices named: they share them, round robin */
        ids[0] = all[l % na];
        *n = 1;
        return RK_OK;
    }
    for (int x = 0; x < na; x++) /* fewer: each rank takes every L-th */
        if (x % L == l) ids[(*n)++] = all[x];
    return RK_OK;
}

/* --mpi-load auto: every rank reads the input.  Measured on one host of two
 * H200s (BENCHMARKS.md, issue 22): with shard, each rank parses half of the
 * file, but gathering the other half's rows (20 bytes a rating, one
 * broadcast per part and column through Open MPI's shared memory) took
 * longer than the parse it saved (Netflix size: read and parse 1.4-1.8 s
 * against 0.8-0.9 s for each; 200,000 items: 4.0 s against 1.9 s), and the
 * GPU sort lost the rows it uploads while the parse goes on.  Shard is
 * there to be asked for where parsing is slow beside the network (string
 * ids, quoted fields).  rank 0's broadcast (bcast) adds the packing, the
 * transfer and the rebuilding to its load: slower again. */
static rk_status group_allgather(void *ud, const int64_t *mine, int n, int64_t *all, rk_error *err)
{
    return rk_dist_allgather_i64(ud, mine, n, all, err);
}

static rk_status group_bcast(void *ud, void *buf, size_t bytes, int root, rk_error *err)
{
    return rk_dist_bcast(ud, buf, bytes, root, err);
}

rk_status rk_job_dist_load(const rk_job_opts *o, const rk_data_opts *dop, rk_data *d, rk_job_report *rep,
                           rk_error *err)
{
    rk_dist *dist = o->dist;
    const int R = rk_dist_size(dist), root = rk_dist_rank(dist) == 0;
    if (R <= 1) return rk_data_load(dop, d, err);
    const rk_dist_load mode = o->dist_load == RK_DIST_LOAD_AUTO ? RK_DIST_LOAD_EACH : o->dist_load;
    snprintf(rep->dist_load, sizeof rep->dist_load, "%s", rk_dist_load_name(mode));
    if (mode == RK_DIST_LOAD_SHARD) { /* each parses a part (rk_load_group); a file it does not fit, whole */
        rk_data_opts sop = *dop;
        sop.load.group = (rk_load_group){rk_dist_rank(dist), R, 0, group_allgather, group_bcast, dist};
        const rk_status s = rk_dist_agree(dist, rk_data_load(&sop, d, err), err);
        if (s == RK_OK && d->ds.train_report.parts <= 1)
            snprintf(rep->dist_load, sizeof rep->dist_load, "%s", rk_dist_load_name(RK_DIST_LOAD_EACH));
        return s;
    }
    if (mode == RK_DIST_LOAD_EACH) return rk_dist_agree(dist, rk_data_load(dop, d, err), err);

    /* rank 0 loads; the others rebuild its data from one broadcast */
    rk_status s = RK_OK;
    unsigned char *buf = NULL;
    size_t bytes = 0;
    if (root) {
        s = rk_data_load(dop, d, err);
        if (s == RK_OK) {
            const double t0 = rk_omp_wtime();
            s = rk_data_pack(d, &buf, &bytes, err);
            rep->t_dist_load = rk_omp_wtime() - t0;
        }
    }
    const double t1 = rk_omp_wtime();
    s = rk_dist_agree(dist, s, err);
    if (s == RK_OK) s = rk_dist_bcast_alloc(dist, &buf, &bytes, 0, err);
    if (s == RK_OK && !root) s = rk_data_unpack(buf, bytes, d, err);
    if (s == RK_OK && !root) s = rk_data_split(dop, d, err); /* the pack holds no split */
    free(buf);
    s = rk_dist_agree(dist, s, err);
    if (root) rep->t_dist_load += rk_omp_wtime() - t1;
    return s;
}

