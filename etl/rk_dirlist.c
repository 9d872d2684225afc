/* The rating files of a directory (rk_dirlist.h). */
#define _POSIX_C_SOURCE 200809L
#include "rk_dirlist.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* name without a .gz or .zst ending into buf */
static const char *base_of(const char *name, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", name);
    size_t n = strlen(buf);
    if (n > 3 && strcmp(buf + n - 3, ".gz") == 0) buf[n - 3] = '\0';
    else if (n > 4 && strcmp(buf + n - 4, ".zst") == 0) buf[n - 4] = '\0';
    return buf;
}

static int netflix_name(const char *name)
{
    char b[512];
    base_of(name, b, sizeof b);
    return fnmatch("mv_*.txt", b, 0) == 0 || fnmatch("combined_data_*.txt", b, 0) == 0;
}

static int data_name(const char *name)
{
    static const char *const ext[] = {"*.csv", "*.tsv", "*.dat", "*.data", "*.txt", NULL};
    static const char *const other[] = {"README*", "readme*", "movie_titles*", "probe*", "qualifying*", NULL};
    char b[512];
    base_of(name, b, sizeof b);
    for (const char *const *o = other; *o != NULL; o++)
        if (fnmatch(*o, b, 0) == 0) return 0;
    for (const char *const *e = ext; *e != NULL; e++)
        if (fnmatch(*e, b, 0) == 0) return 1;
    return 0;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void rk_dirlist_free(rk_dirlist *l)
{
    for (size_t k = 0; k < l->n; k++) free(l->path[k]);
    free(l->path);
    memset(l, 0, sizeof *l);
}

/* The regular files' names of dir, sorted, into *names / *n. */
static rk_status list_files(const char *dir, char ***names, size_t *n, rk_error *err)
{
    DIR *d = opendir(dir);
    if (d == NULL) return rk_error_set(err, RK_E_IO, "cannot open %s: %s", dir, strerror(errno));
    size_t cap = 0;
    struct dirent *e;
    struct stat sb;
    *names = NULL;
    *n = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || fstatat(dirfd(d), e->d_name, &sb, 0) != 0 || !S_ISREG(sb.st_mode)) continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nn = realloc(*names, cap * sizeof *nn);
            if (nn == NULL) break;
            *names = nn;
        }
        if (((*names)[*n] = strdup(e->d_name)) == NULL) break;
        (*n)++;
    }
    const int failed = e != NULL;
    closedir(d);
    if (failed) return rk_error_set(err, RK_E_NOMEM, "out of memory listing %s", dir);
    if (*n > 0) qsort(*names, *n, sizeof **names, name_cmp);
    return RK_OK;
}

rk_status rk_dirlist_read(const char *dir, const char *glob, rk_dirlist *out, rk_error *err)
{
    char **names = NULL;
    size_t n = 0;
    memset(out, 0, sizeof *out);
    RK_FORWARD(list_files(dir, &names, &n, err));
    int netflix = 0;
    for (size_t k = 0; k < n && glob == NULL; k++) netflix |= netflix_name(names[k]);
    rk_status st = RK_OK;
    out->path = malloc((n > 0 ? n : 1) * sizeof *out->path);
    if (out->path == NULL) st = rk_error_set(err, RK_E_NOMEM, "out of memory listing %s", dir);
    const size_t dl = strlen(dir);
    for (size_t k = 0; k < n && st == RK_OK; k++) {
        const int take = glob != NULL ? fnmatch(glob, names[k], 0) == 0 : netflix ? netflix_name(names[k])
                                                                                    : data_name(names[k]);
        if (!take) {
            size_t used = strlen(out->skipped_names);
            if (used + 8 < sizeof out->skipped_names)
                snprintf(out->skipped_names + used, sizeof out->skipped_names - used, "%s%s", used ? ", " : "",
                         names[k]);
            out->skipped++;
            continue;
        }
        char *full = malloc(dl + strlen(names[k]) + 2);
        if (full == NULL) {
            st = rk_error_set(err, RK_E_NOMEM, "out of memory listing %s", dir);
            break;
        }
        sprintf(full, "%s%s%s", dir, dl > 0 && dir[dl - 1] == '/' ? "" : "/", names[k]);
        out->path[out->n++] = full;
    }
    for (size_t k = 0; k < n; k++) free(names[k]);
    free(names);
    if (st == RK_OK && out->n == 0)
        st = rk_error_set(err, RK_E_EMPTY, "%s: the directory holds no rating file%s%s%s (--dir-glob PATTERN picks "
                          "files by name)", dir, out->skipped ? " (skipped: " : "", out->skipped_names,
                          out->skipped ? ")" : "");
    if (st != RK_OK) rk_dirlist_free(out);
    return st;
}
