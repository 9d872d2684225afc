/* test_output_util.h — what the output tests share: scratch folders, reading
 * files and streams back. */
#ifndef RK_TEST_OUTPUT_UTIL_H
#define RK_TEST_OUTPUT_UTIL_H

#include "rk_output.h"
#include "test_util.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers ----------------------------------------------------------------- */

static inline char *make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char *p = malloc(4096);
    snprintf(p, 4096, "%s/rk-test-output.XXXXXX", base && *base ? base : "/tmp");
    if (mkdtemp(p) == NULL) {
        free(p);
        return NULL;
    }
    return p;
}

static inline void rm_rf(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0) return;
    if (S_ISDIR(sb.st_mode)) {
        DIR *d = opendir(path);
        if (d != NULL) {
            struct dirent *e;
            while ((e = readdir(d)) != NULL) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
                char sub[4096];
                if (snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) < (int)sizeof sub) rm_rf(sub);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* Number of entries of a directory (. and .. excluded), -1 when absent. */
static inline int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
    closedir(d);
    return n;
}

static inline char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap + 1);
    size_t r;
    while ((r = fread(b + n, 1, cap - n, fp)) > 0) {
        n += r;
        if (n == cap) {
            cap *= 2;
            b = realloc(b, cap + 1);
        }
    }
    fclose(fp);
    b[n] = '\0';
    if (len) *len = n;
    return b;
}

static inline char *stream_text(FILE *fp)
{
    fflush(fp);
    long n = ftell(fp);
    rewind(fp);
    char *b = malloc((size_t)n + 1);
    size_t r = fread(b, 1, (size_t)n, fp);
    b[r] = '\0';
    return b;
}

static inline char *path_in(const char *dir, const char *name)
{
    char *p = malloc(4096);
    snprintf(p, 4096, "%s/%s", dir, name);
    return p;
}

static inline rk_idmap *ids_of(int n, int numeric, unsigned long long seed)
{
    char **s = malloc((size_t)n * sizeof *s);
    unsigned long long st = seed;
    for (int i = 0; i < n; i++) {
        s[i] = malloc(40);
        if (numeric) snprintf(s[i], 40, "%d", i * 7 + 3);
        else snprintf(s[i], 40, "id-%llx-%d", rk_test_rand(&st) % 100000, i);
    }
    rk_idmap *m = NULL;
    rk_error err;
    CU_ASSERT_EQUAL(rk_ids_from_strings((const char *const *)s, n, &m, &err), RK_OK);
    for (int i = 0; i < n; i++) free(s[i]);
    free(s);
    return m;
}

#endif /* RK_TEST_OUTPUT_UTIL_H */
