/* recknn_opts.h — the command line of recknn (prefix recknn_opts_): the usage
 * text, the command line's own options (--quiet, --progress, --help,
 * --version), and argv parsed into rk_job_opts through the library's table
 * of the job's options (rk_jobopt.h: each value's checks and messages), then
 * the combinations checked (rk_job_opts_check).
 *
 * Part of the CLI, not of the library: a bad option prints the usage error
 * ("recknn: error: ...", then "Try 'recknn --help'.") and exits with 2, and
 * --help and --version print on stdout.  cli/recknn.c runs the job and prints
 * its messages. */
#ifndef RECKNN_OPTS_H
#define RECKNN_OPTS_H

#include "rk_job.h"

/* recknn_opts_parse's answer: run the job (else an exit status). */
#define RECKNN_OPTS_RUN (-1)

typedef struct recknn_opts {
    rk_job_opts job;    /* the job: inputs and command_line set, callbacks NULL */
    int quiet;          /* -q, --quiet */
    int progress;       /* --progress 1, --no-progress 0, neither -1 */
    char command[1024]; /* the command line (job.command_line points here) */
} recknn_opts;

/*! recknn_opts_parse() : argv into *out, from the defaults of
 *  rk_job_opts_default.  job.inputs points into argv and job.command_line
 *  into out->command: *out must stay where it is while the job runs.  A bad
 *  option or combination prints a usage error and exits with 2; --help and
 *  --version print on stdout.  @return RECKNN_OPTS_RUN, or the exit status
 *  to end with now (after --help or --version: 0, or 4 when stdout could not
 *  be written). */
int recknn_opts_parse(int argc, char **argv, recknn_opts *out);

#endif /* RECKNN_OPTS_H */
