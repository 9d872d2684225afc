/* rk_status.h — the one status enum of recknn and its message table.
 *
 * Every library function that can fail returns an rk_status and, when given
 * an rk_error, fills it with a one-line message that names the place (a file
 * and line for bad input, a CUDA call with file:line for GPU failures).  The
 * library never prints and never exits: the CLI turns a status into a message
 * on stderr and an exit code (rk_status_exit_code).
 *
 * Values are fixed and never reused.
 */
#ifndef RK_STATUS_H
#define RK_STATUS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rk_status {
    RK_OK = 0,
    RK_E_ARG = 1,      /* a bad argument or option value (exit 2) */
    RK_E_IO = 2,       /* a file is missing, unreadable or unwritable (exit 4) */
    RK_E_PARSE = 3,    /* malformed input data (exit 3) */
    RK_E_NOMEM = 4,    /* out of host memory (exit 5) */
    RK_E_GPU = 5,      /* a CUDA/cuSPARSE failure or no usable GPU (exit 5) */
    RK_E_EMPTY = 6,    /* no ratings after parsing (exit 3) */
    RK_E_DUPLICATE = 7,/* duplicate (user, item) under --duplicates error (exit 3) */
    RK_E_RANGE = 8,    /* a size beyond what the data structures hold (exit 5) */
    RK_E_INTERNAL = 9, /* a broken invariant: a bug in recknn (exit 5) */
    RK_E_MODEL = 10,   /* a model file is truncated, corrupted, foreign or of another version (exit 3) */
    RK_E_DIST = 11,    /* MPI failed between the processes of a run (exit 5) */
    RK_E_CANCELLED = 12, /* a progress callback asked the call to stop (exit 130; the command's never does) */
    RK_STATUS_MAX_ = 13 /* sentinel, not a status */
} rk_status;

/* Size of the message buffer in rk_error (bytes, NUL included). */
#define RK_ERROR_MSG_CAP 512

/* Detail of a failure.  Functions that take an `rk_error *err` fill it when
 * they fail (err may be NULL).  `msg` is one line without "recknn: error: ". */
typedef struct rk_error {
    rk_status status;
    char msg[RK_ERROR_MSG_CAP];
} rk_error;

/*! rk_strerror() : @return a static, constant description of `s`
 *  ("unknown status" for values outside the enum). */
const char *rk_strerror(rk_status s);

/*! rk_status_exit_code() : @return the process exit status documented for `s`
 *  in CONTRACT.md §1: 0 ok, 2 bad option, 3 bad data, 4 I/O, 5 GPU/runtime,
 *  130 stopped (as an interrupt). */
int rk_status_exit_code(rk_status s);

/*! rk_error_set() : record `s` and a printf-style message in `err` (if not
 *  NULL; the message is truncated to fit).  @return s, so that callers can
 *  write `return rk_error_set(err, RK_E_PARSE, "%s:%lld: ...", ...)`. */
rk_status rk_error_set(rk_error *err, rk_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/*! rk_error_clear() : set `err` (if not NULL) to RK_OK with an empty message. */
void rk_error_clear(rk_error *err);

/* Internal forwarding helpers (library code only). */
#define RK_FORWARD(expr)                                                       \
    do {                                                                       \
        rk_status rk_fwd_s_ = (expr);                                          \
        if (rk_fwd_s_ != RK_OK) return rk_fwd_s_;                              \
    } while (0)

/* Return RK_E_NOMEM with a message naming the allocation when ptr is NULL. */
#define RK_CHECK_ALLOC(ptr, err)                                               \
    do {                                                                       \
        if ((ptr) == NULL)                                                     \
            return rk_error_set((err), RK_E_NOMEM,                             \
                                "out of memory allocating %s (%s:%d)", #ptr,   \
                                __FILE__, __LINE__);                           \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif /* RK_STATUS_H */
