/* rk_dist_names — the names of --mpi-load's modes (rk_dist.h), apart from
 * the MPI calls of rk_dist.c. */
#include "rk_dist.h"

#include <string.h>

static const char *const load_names[] = {"auto", "each", "bcast", "shard"};
#define N_LOAD_NAMES ((int)(sizeof load_names / sizeof load_names[0]))

rk_status rk_dist_load_parse(const char *name, rk_dist_load *out)
{
    for (int l = 0; l < N_LOAD_NAMES; l++) {
        if (name != NULL && strcmp(name, load_names[l]) == 0) {
            *out = (rk_dist_load)l;
            return RK_OK;
        }
    }
    return RK_E_ARG;
}

const char *rk_dist_load_name(rk_dist_load l)
{
    return (unsigned)l < (unsigned)N_LOAD_NAMES ? load_names[l] : "unknown";
}
