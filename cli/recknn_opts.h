/* recknn_opts.h — the command line of recknn (prefix recknn_opts_): the usage
 * text, the command line's own options (--quiet, --progress, --help,
 * --version), and argv parsed into a recknn_options handle through the
 * library's table of the job's options (recknn.h: each value's checks and
 * messages), then the combinations checked (recknn_options_check).
 *
 * Part of the CLI, not of the library: a bad option prints the usage error
 * ("recknn: error: ...", then "Try 'recknn --help'.") and exits with 2, and
 * --help and --version print on stdout.  cli/recknn.c runs the job and prints
 * its messages. */
#ifndef RECKNN_OPTS_H
#define RECKNN_OPTS_H

#include "recknn.h"

/* recknn_opts_parse's answer: run the job (else an exit status). */
#define RECKNN_OPTS_RUN (-1)

typedef struct recknn_opts {
    recknn_options *o;  /* the job's options (recknn_options_free by the caller) */
    const char *const *inputs; /* the RATINGS files (into argv) */
    int n_inputs;
    int quiet;          /* -q, --quiet */
    int progress;       /* --progress 1, --no-progress 0, neither -1 */
    char command[1024]; /* the command line, for metrics.json */
} recknn_opts;

/*! recknn_opts_parse() : argv into *out, from the library's defaults.
 *  inputs points into argv.  A bad
 *  option or combination prints a usage error and exits with 2; --help and
 *  --version print on stdout.  @return RECKNN_OPTS_RUN, or the exit status
 *  to end with now (after --help or --version: 0, or 4 when stdout could not
 *  be written). */
int recknn_opts_parse(int argc, char **argv, recknn_opts *out);

#endif /* RECKNN_OPTS_H */
