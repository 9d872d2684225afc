#include "rk_status.h"

#include <stdarg.h>
#include <stdio.h>

const char *rk_strerror(rk_status s)
{
    switch (s) {
    case RK_OK: return "success";
    case RK_E_ARG: return "invalid argument";
    case RK_E_IO: return "input/output error";
    case RK_E_PARSE: return "malformed input";
    case RK_E_NOMEM: return "out of memory";
    case RK_E_GPU: return "GPU error";
    case RK_E_EMPTY: return "no ratings in the input";
    case RK_E_DUPLICATE: return "duplicate rating";
    case RK_E_RANGE: return "size out of range";
    case RK_E_INTERNAL: return "internal error";
    case RK_E_MODEL: return "bad model file";
    case RK_E_DIST: return "MPI communication failed";
    case RK_E_CANCELLED: return "stopped by the caller";
    case RK_STATUS_MAX_: break;
    }
    return "unknown status";
}

int rk_status_exit_code(rk_status s)
{
    switch (s) {
    case RK_OK: return 0;
    case RK_E_ARG: return 2;
    case RK_E_PARSE:
    case RK_E_EMPTY:
    case RK_E_DUPLICATE:
    case RK_E_MODEL: return 3;
    case RK_E_IO: return 4;
    case RK_E_CANCELLED: return 130;
    case RK_E_NOMEM:
    case RK_E_GPU:
    case RK_E_RANGE:
    case RK_E_INTERNAL:
    case RK_E_DIST:
    case RK_STATUS_MAX_: break;
    }
    return 5;
}

rk_status rk_error_set(rk_error *err, rk_status s, const char *fmt, ...)
{
    if (err != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->status = s;
    }
    return s;
}

void rk_error_clear(rk_error *err)
{
    if (err != NULL) {
        err->status = RK_OK;
        err->msg[0] = '\0';
    }
}
