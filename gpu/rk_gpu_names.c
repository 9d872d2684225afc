/* Names of the GPU engine's options: built with and without CUDA. */
#include "rk_gpu.h"

#include <string.h>

/* the top-N and the similarity routes share their names */
static const char *const route_names[] = {"auto", "kernel", "spgemm"};

rk_status rk_gpu_topn_route_parse(const char *name, rk_gpu_topn_route *out)
{
    for (int r = 0; r < 3; r++)
        if (name != NULL && strcmp(name, route_names[r]) == 0) {
            *out = (rk_gpu_topn_route)r;
            return RK_OK;
        }
    return RK_E_ARG;
}

const char *rk_gpu_topn_route_name(rk_gpu_topn_route r)
{
    return (unsigned)r < 3 ? route_names[r] : "unknown";
}

rk_status rk_gpu_sims_route_parse(const char *name, rk_gpu_sims_route *out)
{
    for (int r = 0; r < 3; r++)
        if (name != NULL && strcmp(name, route_names[r]) == 0) {
            *out = (rk_gpu_sims_route)r;
            return RK_OK;
        }
    return RK_E_ARG;
}

const char *rk_gpu_sims_route_name(rk_gpu_sims_route r)
{
    return (unsigned)r < 3 ? route_names[r] : "unknown";
}

static const char *const query_names[] = {"auto", "block", "kernel"};

rk_status rk_gpu_query_route_parse(const char *name, rk_gpu_query_route *out)
{
    for (int r = 0; r < 3; r++)
        if (name != NULL && strcmp(name, query_names[r]) == 0) {
            *out = (rk_gpu_query_route)r;
            return RK_OK;
        }
    return RK_E_ARG;
}

const char *rk_gpu_query_route_name(rk_gpu_query_route r)
{
    return (unsigned)r < 3 ? query_names[r] : "unknown";
}
