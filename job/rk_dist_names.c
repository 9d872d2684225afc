/* rk_dist_names — the names of --mpi-load's and --mpi-output's modes
 * (rk_dist.h), apart from the MPI calls of rk_dist.c. */
#include "rk_dist.h"

#include <string.h>

static const char *const load_names[] = {"auto", "each", "bcast", "shard"};
static const char *const output_names[] = {"auto", "slices", "root"};
#define N_OF(a) ((int)(sizeof a / sizeof a[0]))

/* name's index in names[0 .. n), or -1. */
static int index_of(const char *const *names, int n, const char *name)
{
    for (int l = 0; name != NULL && l < n; l++)
        if (strcmp(name, names[l]) == 0) return l;
    return -1;
}

rk_status rk_dist_load_parse(const char *name, rk_dist_load *out)
{
    const int l = index_of(load_names, N_OF(load_names), name);
    if (l < 0) return RK_E_ARG;
    *out = (rk_dist_load)l;
    return RK_OK;
}

const char *rk_dist_load_name(rk_dist_load l)
{
    return (unsigned)l < (unsigned)N_OF(load_names) ? load_names[l] : "unknown";
}

rk_status rk_dist_output_parse(const char *name, rk_dist_output *out)
{
    const int l = index_of(output_names, N_OF(output_names), name);
    if (l < 0) return RK_E_ARG;
    *out = (rk_dist_output)l;
    return RK_OK;
}

const char *rk_dist_output_name(rk_dist_output o)
{
    return (unsigned)o < (unsigned)N_OF(output_names) ? output_names[o] : "unknown";
}
