/* rk_output_internal.h — what rk_output.c and rk_out_commit.c share (io/
 * only): an output folder's pending files. */
#ifndef RK_OUTPUT_INTERNAL_H
#define RK_OUTPUT_INTERNAL_H

#include <stdio.h>
#include "rk_output.h"

/* stdio buffer of every output stream. */
#define RK_OUT_BUFSZ ((size_t)1 << 20)

typedef struct out_file {
    char *final_path; /* dir/name */
    char *tmp_path;   /* dir/.name.tmp.XXXXXX */
    FILE *fp;
    char *buf;        /* setvbuf buffer, freed after fclose */
    int slot;         /* in the registry of pending files (rk_out_pending.c) */
    int foreign;      /* rk_out_file_at: any path, not listed by rk_out_names */
} out_file;

struct rk_out {
    char *dir;
    int n;
    out_file f[RK_OUT_MAX_FILES];
    int n_made, cap_made;           /* directories created by rk_out_open */
    char **made;                    /* deepest last, removed on abort when empty */
    int *made_slot;                 /* their registry slots */
    int lock_fd;                    /* DIR/.recknn.lock, held (flock) until freed */
    int committed;
};

/* Close, unlink and forget a pending file's temporary file. */
void rk_out_file_discard_(out_file *f);
/* rmdir the folders rk_out_open made (when empty), deepest first. */
void rk_out_remove_made_dirs_(rk_out *o);

#endif /* RK_OUTPUT_INTERNAL_H */
