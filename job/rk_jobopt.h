/* rk_jobopt.h — every option of the nightly job by its name (prefix rk_jobopt_).
 *
 * One table holds the job's options, as the CLI spells them without their
 * dashes ("metric", "k", "top-n", "gpu-memory"...), whether each takes a
 * value, and whether a saved model fixes it.  rk_jobopt_set parses a value
 * strictly (integers and numbers in their ranges, names from their tables)
 * into an rk_job_opts, with one message for each bad value that names the
 * option as the command line does ("--metric: unknown metric 'x' (...)").
 * The CLI builds its command line from this table (cli/recknn_opts.c), and
 * the library's callers set the same options by name: a new option is a row
 * here.  The combinations are checked apart, once every option is set
 * (rk_job_opts_check).  Nothing here prints or exits.
 */
#ifndef RK_JOBOPT_H
#define RK_JOBOPT_H

#include <stddef.h>
#include "rk_job.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rk_jobopt {
    const char *name;   /* the long name without dashes ("metric") */
    int has_value;      /* 1: takes a value; 0: a switch */
    int model_fixed;    /* 1: a saved model fixes it (--model refuses it) */
} rk_jobopt;

/*! rk_jobopt_at() : the i-th row of the table (i from 0; NULL past the last). */
const rk_jobopt *rk_jobopt_at(size_t i);

/*! rk_jobopt_find() : the row named name (NULL: none). */
const rk_jobopt *rk_jobopt_find(const char *name);

/*! rk_jobopt_set() : option name set in *o from value (NULL for a switch).
 *  The strings are borrowed: file names and column lists point into value,
 *  which must outlive o's use.  @return RK_OK, RK_E_ARG (an unknown name, a
 *  value missing or given to a switch, a bad value: err says which, as the
 *  command line would). */
rk_status rk_jobopt_set(rk_job_opts *o, const char *name, const char *value, rk_error *err);

#ifdef __cplusplus
}
#endif
#endif /* RK_JOBOPT_H */
