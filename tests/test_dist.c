/* rk_dist in one process: what a build without MPI, or one with MPI run
 * without mpirun, does.  rk_dist_init gives rank 0 of 1 (as does a NULL
 * handle); an agreement returns the given status and message unchanged; the
 * gathers copy this rank's bytes to offset 0 of a buffer padded to
 * RK_DIST_BLOCK; the broadcasts keep the buffer; a send or receive within one
 * process is refused; --mpi-load's names go both ways; RECKNN_FAULT fails
 * only the named rank at the named stage ("kill" is never tried here: it
 * raises SIGKILL); rk_dist_built follows config.h's HAVE_MPI. */
#define _POSIX_C_SOURCE 200809L
#include "config.h"
#include "rk_dist.h"
#include "test_util.h"

#include <string.h>

/* Run as one process, whatever the environment: with MPI built in,
 * rk_dist_init calls MPI_Init only when a launcher's variable is set. */
static void no_launcher(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"};
    for (size_t v = 0; v < sizeof vars / sizeof vars[0]; v++) CU_ASSERT_EQUAL(unsetenv(vars[v]), 0);
}

static rk_dist *start(void)
{
    rk_dist *d = NULL;
    rk_error err;
    rk_error_clear(&err);
    no_launcher();
    CU_ASSERT_EQUAL_FATAL(rk_dist_init(NULL, NULL, &d, &err), RK_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    return d;
}

static void test_init(void)
{
    rk_dist *d = start();
    CU_ASSERT_EQUAL(rk_dist_rank(d), 0);
    CU_ASSERT_EQUAL(rk_dist_size(d), 1);
    CU_ASSERT_EQUAL(rk_dist_local_rank(d), 0);
    CU_ASSERT_EQUAL(rk_dist_local_size(d), 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rk_dist_host(d));
    CU_ASSERT(strlen(rk_dist_host(d)) > 0);
    CU_ASSERT(strlen(rk_dist_host(d)) < 64);
    rk_dist_finalize(d);

    /* with argc and argv, as the CLI calls it */
    char prog[] = "test_dist", *args[] = {prog, NULL}, **argv = args;
    int argc = 1;
    rk_error err;
    d = NULL;
    CU_ASSERT_EQUAL_FATAL(rk_dist_init(&argc, &argv, &d, &err), RK_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_EQUAL(argc, 1);
    CU_ASSERT_STRING_EQUAL(argv[0], "test_dist");
    CU_ASSERT_EQUAL(rk_dist_size(d), 1);
    rk_dist_finalize(d);

    /* no handle: one process */
    CU_ASSERT_EQUAL(rk_dist_rank(NULL), 0);
    CU_ASSERT_EQUAL(rk_dist_size(NULL), 1);
    CU_ASSERT_EQUAL(rk_dist_local_rank(NULL), 0);
    CU_ASSERT_EQUAL(rk_dist_local_size(NULL), 1);
    CU_ASSERT_PTR_NOT_NULL(rk_dist_host(NULL));
    rk_dist_finalize(NULL);
}

static void test_agree(void)
{
    rk_dist *d = start();
    for (int with_handle = 0; with_handle < 2; with_handle++) {
        rk_dist *h = with_handle ? d : NULL;
        rk_error err;
        rk_error_set(&err, RK_E_PARSE, "left as it was");
        CU_ASSERT_EQUAL(rk_dist_agree(h, RK_OK, &err), RK_OK);
        CU_ASSERT_STRING_EQUAL(err.msg, "left as it was");
        CU_ASSERT_EQUAL(err.status, RK_E_PARSE);
        CU_ASSERT_EQUAL(rk_dist_agree(h, RK_OK, NULL), RK_OK);

        rk_error_set(&err, RK_E_IO, "cannot write x.csv");
        CU_ASSERT_EQUAL(rk_dist_agree(h, RK_E_IO, &err), RK_E_IO);
        CU_ASSERT_STRING_EQUAL(err.msg, "cannot write x.csv"); /* no "rank 0 on ..." in one process */
        CU_ASSERT_EQUAL(err.status, RK_E_IO);
        CU_ASSERT_EQUAL(rk_dist_agree(h, RK_E_NOMEM, NULL), RK_E_NOMEM);
        /* a failure is not remembered: the next agreement is the caller's status again */
        rk_error_clear(&err);
        CU_ASSERT_EQUAL(rk_dist_agree(h, RK_OK, &err), RK_OK);
        CU_ASSERT_STRING_EQUAL(err.msg, "");
    }
    rk_dist_finalize(d);
}

static size_t padded(size_t n)
{
    return (n + RK_DIST_BLOCK - 1) / RK_DIST_BLOCK * RK_DIST_BLOCK;
}

static void check_gathers(rk_dist *d)
{
    static const size_t counts[] = {0, 1, 63, 64, 65, 1000};
    unsigned long long seed = 7;
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        const size_t n = counts[c];
        unsigned char *mine = malloc(n > 0 ? n : 1), *copy = malloc(n > 0 ? n : 1);
        CU_ASSERT_PTR_NOT_NULL_FATAL(mine);
        CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
        for (size_t i = 0; i < n; i++) mine[i] = (unsigned char)rk_test_rand(&seed);
        if (n > 0) memcpy(copy, mine, n);
        for (int root = -1; root <= 0; root++) { /* -1: allgatherv, 0: gatherv to rank 0 */
            unsigned char *all = (unsigned char *)&seed; /* must be replaced */
            size_t offs[2] = {99, 99};
            rk_error err;
            rk_error_clear(&err);
            const rk_status s = root < 0 ? rk_dist_allgatherv(d, mine, n, &all, offs, &err)
                                         : rk_dist_gatherv(d, mine, n, root, &all, offs, &err);
            CU_ASSERT_EQUAL_FATAL(s, RK_OK);
            CU_ASSERT_PTR_NOT_NULL_FATAL(all);
            CU_ASSERT(all != mine);
            CU_ASSERT(all != (unsigned char *)&seed);
            CU_ASSERT_EQUAL(offs[0], 0);
            CU_ASSERT_EQUAL(offs[1], padded(n));
            CU_ASSERT_EQUAL(offs[1] % RK_DIST_BLOCK, 0);
            CU_ASSERT(offs[1] >= n && offs[1] < n + RK_DIST_BLOCK);
            if (n > 0) CU_ASSERT(memcmp(all, copy, n) == 0);
            if (n > 0) CU_ASSERT(memcmp(mine, copy, n) == 0); /* the source is left alone */
            if (offs[1] > 0) all[offs[1] - 1] = 1; /* the whole padded part is writable (valgrind checks) */
            free(all); /* the caller's to free */
        }
        free(mine);
        free(copy);
    }
}

static void test_gathers(void)
{
    rk_dist *d = start();
    check_gathers(d);
    rk_dist_finalize(d);
    check_gathers(NULL);
}

static void test_bcast(void)
{
    rk_dist *d = start();
    for (int with_handle = 0; with_handle < 2; with_handle++) {
        rk_dist *h = with_handle ? d : NULL;
        rk_error err;
        unsigned char b[100];
        for (int i = 0; i < 100; i++) b[i] = (unsigned char)(3 * i + 1);
        CU_ASSERT_EQUAL(rk_dist_bcast(h, b, sizeof b, 0, &err), RK_OK);
        for (int i = 0; i < 100; i++) CU_ASSERT_EQUAL(b[i], (unsigned char)(3 * i + 1));
        CU_ASSERT_EQUAL(rk_dist_bcast(h, b, 0, 0, &err), RK_OK);

        unsigned char *buf = malloc(10), *was = buf;
        CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
        memcpy(buf, "0123456789", 10);
        size_t bytes = 10;
        CU_ASSERT_EQUAL(rk_dist_bcast_alloc(h, &buf, &bytes, 0, &err), RK_OK);
        CU_ASSERT_PTR_EQUAL(buf, was); /* kept, not reallocated */
        CU_ASSERT_EQUAL(bytes, 10);
        CU_ASSERT(memcmp(buf, "0123456789", 10) == 0);
        free(buf);

        const int64_t mine[3] = {-5, 7, INT64_MAX}; /* one process: its own values, in place */
        int64_t all[4] = {1, 1, 1, 42};
        CU_ASSERT_EQUAL(rk_dist_allgather_i64(h, mine, 3, all, &err), RK_OK);
        CU_ASSERT(all[0] == -5 && all[1] == 7 && all[2] == INT64_MAX && all[3] == 42);
    }
    rk_dist_finalize(d);
}

static void test_point_to_point(void)
{
    rk_dist *d = start();
    for (int with_handle = 0; with_handle < 2; with_handle++) {
        rk_dist *h = with_handle ? d : NULL;
        rk_error err;
        rk_error_clear(&err);
        const unsigned char b[4] = {1, 2, 3, 4};
        CU_ASSERT_EQUAL(rk_dist_send(h, 0, b, sizeof b, &err), RK_E_INTERNAL);
        CU_ASSERT_EQUAL(err.status, RK_E_INTERNAL);
        CU_ASSERT(strlen(err.msg) > 0);
        CU_ASSERT_EQUAL(rk_dist_send(h, 0, b, sizeof b, NULL), RK_E_INTERNAL);

        unsigned char *buf = (unsigned char *)&err;
        size_t bytes = 99;
        rk_error_clear(&err);
        CU_ASSERT_EQUAL(rk_dist_recv_alloc(h, 0, &buf, &bytes, &err), RK_E_INTERNAL);
        CU_ASSERT_EQUAL(err.status, RK_E_INTERNAL);
        CU_ASSERT(strlen(err.msg) > 0);
        CU_ASSERT_PTR_NULL(buf); /* nothing to free */
        CU_ASSERT_EQUAL(bytes, 0);
    }
    rk_dist_finalize(d);
}

static void test_load_names(void)
{
    static const struct {
        const char *name;
        rk_dist_load l;
    } good[] = {{"auto", RK_DIST_LOAD_AUTO}, {"each", RK_DIST_LOAD_EACH}, {"bcast", RK_DIST_LOAD_BCAST},
                {"shard", RK_DIST_LOAD_SHARD}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        rk_dist_load l = (rk_dist_load)-1;
        CU_ASSERT_EQUAL(rk_dist_load_parse(good[i].name, &l), RK_OK);
        CU_ASSERT_EQUAL(l, good[i].l);
        CU_ASSERT_STRING_EQUAL(rk_dist_load_name(l), good[i].name);
        /* and back */
        rk_dist_load again = (rk_dist_load)-1;
        CU_ASSERT_EQUAL(rk_dist_load_parse(rk_dist_load_name(good[i].l), &again), RK_OK);
        CU_ASSERT_EQUAL(again, good[i].l);
    }
    static const char *const bad[] = {"", "Auto", "EACH", "bcast ", " each", "broadcast", "eac", "auto2", "1", "Shard", "shards"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rk_dist_load l = RK_DIST_LOAD_EACH;
        CU_ASSERT_EQUAL(rk_dist_load_parse(bad[i], &l), RK_E_ARG);
        CU_ASSERT_EQUAL(l, RK_DIST_LOAD_EACH); /* left as it was */
    }
    rk_dist_load l = RK_DIST_LOAD_BCAST;
    CU_ASSERT_EQUAL(rk_dist_load_parse(NULL, &l), RK_E_ARG);
    CU_ASSERT_EQUAL(l, RK_DIST_LOAD_BCAST);
    CU_ASSERT_STRING_EQUAL(rk_dist_load_name((rk_dist_load)4), "unknown");
    CU_ASSERT_STRING_EQUAL(rk_dist_load_name((rk_dist_load)-1), "unknown");
}

/* --mpi-output's names go both ways; others are refused and leave the value. */
static void test_output_names(void)
{
    static const char *const good[] = {"auto", "slices", "root"};
    for (int i = 0; i < 3; i++) {
        rk_dist_output m = (rk_dist_output)-1;
        CU_ASSERT_EQUAL(rk_dist_output_parse(good[i], &m), RK_OK);
        CU_ASSERT_EQUAL((int)m, i);
        CU_ASSERT_STRING_EQUAL(rk_dist_output_name(m), good[i]);
    }
    CU_ASSERT_EQUAL(RK_DIST_OUTPUT_AUTO, 0); /* a zeroed rk_job_opts asks for auto */
    CU_ASSERT_STRING_EQUAL(rk_dist_output_name((rk_dist_output)7), "unknown");
    static const char *const bad[] = {"", "Auto", "slice", "ROOT", " root", "parallel", "each"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rk_dist_output m = RK_DIST_OUTPUT_ROOT;
        CU_ASSERT_EQUAL(rk_dist_output_parse(bad[i], &m), RK_E_ARG);
        CU_ASSERT_EQUAL(m, RK_DIST_OUTPUT_ROOT);
    }
}

/* rk_dist_fault under RECKNN_FAULT=value at `stage`: the status, and err
 * (marked beforehand) left alone when no fault is injected. */
static rk_status fault(const rk_dist *d, const char *value, const char *stage, rk_error *err)
{
    if (value == NULL) {
        CU_ASSERT_EQUAL(unsetenv("RECKNN_FAULT"), 0);
    } else {
        CU_ASSERT_EQUAL(setenv("RECKNN_FAULT", value, 1), 0);
    }
    rk_error_set(err, RK_E_PARSE, "marker");
    const rk_status s = rk_dist_fault(d, stage, err);
    if (s == RK_OK) {
        CU_ASSERT_EQUAL(err->status, RK_E_PARSE);
        CU_ASSERT_STRING_EQUAL(err->msg, "marker");
    }
    return s;
}

static void test_fault(void)
{
    rk_dist *d = start();
    for (int with_handle = 0; with_handle < 2; with_handle++) {
        const rk_dist *h = with_handle ? d : NULL;
        rk_error err;
        CU_ASSERT_EQUAL(fault(h, NULL, "lists", &err), RK_OK);
        CU_ASSERT_EQUAL(fault(h, "0:fail:lists", "lists", &err), RK_E_INTERNAL);
        CU_ASSERT_EQUAL(err.status, RK_E_INTERNAL);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "RECKNN_FAULT"));
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "lists"));
        CU_ASSERT_EQUAL(fault(h, "0:fail:topn", "topn", &err), RK_E_INTERNAL);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "topn"));
        CU_ASSERT_PTR_NULL(strstr(err.msg, "lists"));
        CU_ASSERT_EQUAL(rk_dist_fault(h, "topn", NULL), RK_E_INTERNAL); /* no err: the status alone */
        /* another stage, another rank */
        CU_ASSERT_EQUAL(fault(h, "0:fail:lists", "topn", &err), RK_OK);
        CU_ASSERT_EQUAL(fault(h, "0:fail:lists", "list", &err), RK_OK);
        CU_ASSERT_EQUAL(fault(h, "0:fail:lists", "lists2", &err), RK_OK);
        CU_ASSERT_EQUAL(fault(h, "1:fail:lists", "lists", &err), RK_OK);
        CU_ASSERT_EQUAL(fault(h, "-1:fail:lists", "lists", &err), RK_OK);
        CU_ASSERT_EQUAL(fault(h, "2:kill:lists", "lists", &err), RK_OK); /* another rank's kill: nothing here */
        CU_ASSERT_EQUAL(fault(h, "0:kill:lists", "topn", &err), RK_OK);  /* a kill at another stage: nothing */
        /* malformed: no fault */
        static const char *const bad[] = {"x", "0:fail", "", "0", "0:", "0::lists", ":fail:lists", "x:fail:lists",
                                          "0:FAIL:lists", "0:fail:"};
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) CU_ASSERT_EQUAL(fault(h, bad[i], "lists", &err), RK_OK);
    }
    CU_ASSERT_EQUAL(unsetenv("RECKNN_FAULT"), 0);
    rk_dist_finalize(d);
}

static void test_built(void)
{
#ifdef HAVE_MPI
    CU_ASSERT_EQUAL(rk_dist_built(), 1);
#else
    CU_ASSERT_EQUAL(rk_dist_built(), 0);
#endif
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"init: rank 0 of 1", test_init},
        {"agree: the status and message unchanged", test_agree},
        {"allgatherv and gatherv: the bytes, padded", test_gathers},
        {"bcast, bcast_alloc, allgather_i64: within one process", test_bcast},
        {"send and receive within one process refused", test_point_to_point},
        {"--mpi-load names", test_load_names},
        {"--mpi-output names", test_output_names},
        {"RECKNN_FAULT", test_fault},
        {"built with MPI as config.h says", test_built},
        {NULL, NULL},
    };
    return rk_test_main("dist", cases);
}
