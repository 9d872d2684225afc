/* rk_dirlist.h — the rating files of a directory given as input (prefix
 * rk_dirlist_).  CONTRACT.md §1.
 *
 * A directory's regular files (not dot files) are taken in name order, but
 * only the rating files among them: with a pattern (--dir-glob, fnmatch(3)
 * on the file name) those that match it; else, when any file is named like
 * the Netflix Prize's data (mv_*.txt, combined_data_*.txt), those only;
 * else the files named *.csv, *.tsv, *.dat, *.data or *.txt, except
 * README*, movie_titles*, probe* and qualifying* (the Netflix download's
 * other files).  Every name may also end in .gz or .zst.  The others are
 * counted as skipped.
 */
#ifndef RK_DIRLIST_H
#define RK_DIRLIST_H

#include <stddef.h>
#include "rk_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rk_dirlist {
    char **path;       /* n full paths (DIR/NAME), name order */
    size_t n;
    size_t skipped;    /* regular files left out */
    char skipped_names[200]; /* the first of them, ", "-separated, cut */
} rk_dirlist;

/*! rk_dirlist_read() : the rating files of dir into *out (free with
 *  rk_dirlist_free); glob may be NULL.  @return RK_OK, RK_E_IO (cannot
 *  open), RK_E_EMPTY (no rating file: the message names what was skipped),
 *  RK_E_NOMEM. */
rk_status rk_dirlist_read(const char *dir, const char *glob, rk_dirlist *out, rk_error *err);

void rk_dirlist_free(rk_dirlist *l);

#ifdef __cplusplus
}
#endif
#endif /* RK_DIRLIST_H */
