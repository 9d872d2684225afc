/* mfile_bench.c — save and load times of a model file of ML-20M's size
 * (138,493 users, 26,744 items, 20,000,263 ratings, k = 20), synthetic:
 * items drawn with a skewed popularity, half-star ratings, baselines, full
 * lists, MovieLens-like numeric ids.  Not built by make; after a build:
 *
 *   gcc -std=c11 -O2 -fopenmp -Icommon -Ietl -Iengine -Iio bench/mfile_bench.c io/librk_io.a \
 *       engine/librk_engine.a etl/librk_etl.a common/librk_common.a -lcsv -lxxhash -lm -o /tmp/mfile_bench
 *   /tmp/mfile_bench [FILE]      (FILE default /tmp/mfile_bench.rkm; removed)
 *
 * Prints the file size, the save time (write, fsync, rename), the load time
 * of a file in the page cache (best of 5) and, to split it up, the checksum
 * alone over the file, the load from an already mapped file, the mapping
 * alone and the transpose alone. */
#define _DEFAULT_SOURCE /* MAP_POPULATE */
#define _POSIX_C_SOURCE 200809L
#include "rk_mfile.h"
#include "rk_omp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#define NU 138493
#define NI 26744
#define NNZ 20000263LL
#define K 20

static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static void die(const char *what, const rk_error *e)
{
    fprintf(stderr, "mfile_bench: %s: %s\n", what, e->msg);
    exit(1);
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "/tmp/mfile_bench.rkm";
    rk_error err;
    uint64_t s = 42;
    double t0 = rk_omp_wtime();

    /* ratings: each user ~NNZ/NU distinct items, popularity ~ x^3 */
    rk_triples t;
    if (rk_triples_alloc(&t, NNZ, 0, &err) != RK_OK) die("triples", &err);
    int32_t *stamp = malloc(NI * sizeof *stamp);
    memset(stamp, 0xff, NI * sizeof *stamp);
    int64_t n = 0;
    for (int32_t u = 0; u < NU; u++) {
        int64_t want = (NNZ - n) / (NU - u); /* exact total */
        for (int64_t r = 0; r < want; r++) {
            int32_t i;
            do {
                double x = (double)(rnd(&s) >> 11) * (1.0 / 9007199254740992.0);
                i = (int32_t)(x * x * x * NI);
            } while (stamp[i] == u);
            stamp[i] = u;
            t.user[n] = u;
            t.item[n] = i;
            t.rating[n] = 0.5f * (float)(1 + rnd(&s) % 10);
            n++;
        }
    }
    t.n = n;
    free(stamp);
    rk_model m;
    if (rk_model_build(&m, &t, NU, NI, 1, 0.5, 5.0, 1, &err) != RK_OK) die("model", &err);
    rk_triples_free(&t);

    rk_knn_opts o;
    rk_knn_opts_default(&o);
    o.k = K;
    rk_lists l;
    if (rk_lists_alloc(&l, NI, K, &err) != RK_OK) die("lists", &err);
    for (int32_t i = 0; i < NI; i++) {
        l.len[i] = K;
        for (int r = 0; r < K; r++) {
            l.nbr[i * K + r] = (i + 1 + r * 97) % NI;
            l.sim[i * K + r] = (float)(1.0 - 0.01 * r);
            l.support[i * K + r] = 1 + (int32_t)(rnd(&s) % 5000);
        }
    }
    /* numeric ids with gaps, as MovieLens has (items up to ~131262) */
    char buf[32];
    char **ids = malloc(NU * sizeof *ids);
    for (int32_t u = 0; u < NU; u++) snprintf(buf, sizeof buf, "%d", u + 1), ids[u] = strdup(buf);
    rk_idmap *users, *items;
    if (rk_ids_from_strings((const char *const *)ids, NU, &users, &err) != RK_OK) die("ids", &err);
    for (int32_t u = 0; u < NU; u++) free(ids[u]);
    for (int32_t i = 0; i < NI; i++) snprintf(buf, sizeof buf, "%d", 1 + i * 4 + (i % 3)), ids[i] = strdup(buf);
    if (rk_ids_from_strings((const char *const *)ids, NI, &items, &err) != RK_OK) die("ids", &err);
    for (int32_t i = 0; i < NI; i++) free(ids[i]);
    free(ids);
    printf("built the model in %.2f s (%lld ratings)\n", rk_omp_wtime() - t0, (long long)m.by_user.nnz);

    rk_mfile_view v = {.model = &m, .lists = &l, .users = users, .items = items, .knn = &o};
    double best = 1e9;
    for (int rep = 0; rep < 3; rep++) {
        t0 = rk_omp_wtime();
        if (rk_mfile_save(path, &v, &err) != RK_OK) die("save", &err);
        double dt = rk_omp_wtime() - t0;
        if (dt < best) best = dt;
    }
    struct stat st;
    stat(path, &st);
    FILE *dn = fopen("/dev/null", "wb");
    double wbest = 1e9;
    for (int rep = 0; dn != NULL && rep < 3; rep++) {
        t0 = rk_omp_wtime();
        if (rk_mfile_write(dn, &v, &err) != RK_OK) die("write", &err);
        double dt = rk_omp_wtime() - t0;
        if (dt < wbest) wbest = dt;
    }
    if (dn != NULL) fclose(dn);
    printf("write to /dev/null (checks, ids, checksums, no disk) best of 3: %.3f s\n", wbest);
    printf("file %.1f MB; save (write + fsync + rename) best of 3: %.3f s\n", st.st_size / 1e6, best);

    best = 1e9;
    rk_mfile f;
    for (int rep = 0; rep < 5; rep++) {
        t0 = rk_omp_wtime();
        if (rk_mfile_read(path, &f, &err) != RK_OK) die("read", &err);
        double dt = rk_omp_wtime() - t0;
        if (dt < best) best = dt;
        if (rep < 4) rk_mfile_free(&f);
    }
    printf("load (map, verify, copy, check, transpose) best of 5: %.3f s\n", best);
    if (f.model.by_item.nnz != m.by_item.nnz ||
        memcmp(f.model.by_item.idx, m.by_item.idx, (size_t)m.by_item.nnz * 4) != 0)
        die("compare", &err);
    rk_mfile_free(&f);

    /* the parts: the checksum over the mapped file, and the transpose */
    int fd = open(path, O_RDONLY);
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    close(fd);
    best = 1e9;
    uint64_t h = 0;
    for (int rep = 0; rep < 5; rep++) {
        t0 = rk_omp_wtime();
        h ^= rk_mfile_hash(p, (size_t)st.st_size, 0);
        double dt = rk_omp_wtime() - t0;
        if (dt < best) best = dt;
    }
    printf("XXH64 over the file (one core): %.3f s = %.1f GB/s (%016llx)\n", best, st.st_size / best / 1e9,
           (unsigned long long)h);
    best = 1e9;
    for (int rep = 0; rep < 5; rep++) {
        t0 = rk_omp_wtime();
        if (rk_mfile_read_mem(p, (size_t)st.st_size, path, &f, &err) != RK_OK) die("read_mem", &err);
        double dt = rk_omp_wtime() - t0;
        rk_mfile_free(&f);
        if (dt < best) best = dt;
    }
    printf("load from the mapped file (no open or map): %.3f s\n", best);
    t0 = rk_omp_wtime();
    munmap(p, (size_t)st.st_size);
    fd = open(path, O_RDONLY);
    p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    close(fd);
    printf("map with MAP_POPULATE: %.3f s\n", rk_omp_wtime() - t0);
    munmap(p, (size_t)st.st_size);
    best = 1e9;
    for (int rep = 0; rep < 5; rep++) {
        rk_csr tr;
        t0 = rk_omp_wtime();
        if (rk_csr_transpose(&m.by_user, &tr, &err) != RK_OK) die("transpose", &err);
        double dt = rk_omp_wtime() - t0;
        rk_csr_free(&tr);
        if (dt < best) best = dt;
    }
    printf("transpose alone: %.3f s (threads %d)\n", best, rk_omp_max_threads());
    unlink(path);
    rk_model_free(&m);
    rk_lists_free(&l);
    rk_ids_free(users);
    rk_ids_free(items);
    return 0;
}
