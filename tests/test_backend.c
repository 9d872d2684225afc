/* The engine seam (job/rk_backend): the backends' table, the device choice
 * under every --device with and without a usable GPU (the branch this
 * machine does not take is asserted where it can be reached), the shape
 * estimate's veto, the notes, and the one fallback rule: RK_E_GPU under
 * --device auto hands the run to the CPU, anything else is kept. */
#include "rk_backend.h"
#include "test_util.h"

#include <string.h>

typedef struct notes {
    int n;
    char last[1024];
} notes;

static void on_note(void *ud, const char *msg)
{
    notes *t = ud;
    t->n++;
    snprintf(t->last, sizeof t->last, "%s", msg);
}

static int pays_never(void *ud, char *why, size_t cap)
{
    (void)ud;
    snprintf(why, cap, "a shape the GPU loses on");
    return 0;
}

static rk_backend_opts opts(rk_device d, notes *t)
{
    rk_backend_opts o;
    memset(&o, 0, sizeof o);
    o.device = d;
    o.exact = 1;
    o.note = on_note;
    o.ud = t;
    return o;
}

static void test_table(void)
{
    const char *names[RK_BACKENDS];
    for (int b = 0; b < RK_BACKENDS; b++) {
        const rk_backend *be = rk_backend_get((rk_backend_id)b);
        CU_ASSERT_PTR_NOT_NULL_FATAL(be);
        CU_ASSERT_EQUAL(be->id, (rk_backend_id)b);
        CU_ASSERT_PTR_NOT_NULL(be->name);
        names[b] = be->name;
        for (int c = 0; c < b; c++) CU_ASSERT(strcmp(names[c], be->name) != 0);
        CU_ASSERT_PTR_NOT_NULL(be->supports);
        CU_ASSERT_PTR_NOT_NULL(be->knn);
        CU_ASSERT_PTR_NOT_NULL(be->topn);
        CU_ASSERT_PTR_NOT_NULL(be->rbc);
        CU_ASSERT(be->max_topn > 0);
        CU_ASSERT(!be->fused_topn || be->gpu); /* the CPU's knn ranks nothing */
    }
    const rk_backend *cpu = rk_backend_get(RK_BACKEND_CPU);
    CU_ASSERT_FALSE(cpu->gpu);
    CU_ASSERT_PTR_NOT_NULL(cpu->user_topn); /* the fallback of every route */
    CU_ASSERT(rk_backend_get(RK_BACKEND_CUDA)->gpu);
    CU_ASSERT_PTR_NULL(rk_backend_get(RK_BACKENDS));
    rk_knn_opts ko;
    rk_knn_opts_default(&ko);
    char why[64];
    CU_ASSERT(cpu->supports(&ko, why, sizeof why));
}

static void test_device_cpu(void)
{
    notes t = {0};
    rk_backend_seam s;
    memset(&s, 0, sizeof s);
    rk_knn_opts ko;
    rk_knn_opts_default(&ko);
    rk_error err;
    rk_error_clear(&err);
    rk_backend_opts o = opts(RK_DEVICE_CPU, &t);
    CU_ASSERT_EQUAL(rk_backend_start(&s, &o, &ko, &err), RK_OK);
    CU_ASSERT_EQUAL(rk_backend_choose(&s, &ko, &err), RK_OK);
    CU_ASSERT_EQUAL(rk_backend_current(&s)->id, RK_BACKEND_CPU);
    CU_ASSERT_EQUAL(t.n, 0);
    rk_backend_free(&s);
}

/* auto, gpu and --gpus, on whatever this machine has */
static void test_device_auto_and_gpu(void)
{
    char name[256];
    const int have = rk_gpu_available(name, sizeof name);
    rk_knn_opts ko;
    rk_knn_opts_default(&ko);
    for (int d = 0; d < 3; d++) {
        notes t = {0};
        rk_backend_seam s;
        memset(&s, 0, sizeof s);
        rk_error err;
        rk_error_clear(&err);
        rk_backend_opts o = opts(d == 1 ? RK_DEVICE_GPU : RK_DEVICE_AUTO, &t);
        o.gpus_given = d == 2;
        /* --device gpu in a build without CUDA fails at the start, before any driver */
        rk_status st = rk_backend_start(&s, &o, &ko, &err);
        CU_ASSERT(st == RK_OK || (d == 1 && !have && st == RK_E_GPU));
        if (st == RK_OK) st = rk_backend_choose(&s, &ko, &err);
        if (have) {
            CU_ASSERT_EQUAL(st, RK_OK);
            CU_ASSERT_EQUAL(rk_backend_current(&s)->id, RK_BACKEND_CUDA);
            CU_ASSERT_EQUAL(t.n, 0);
        } else if (d == 0) { /* auto without a GPU: the CPU, in silence (no GPU here at all) */
            CU_ASSERT_EQUAL(st, RK_OK);
            CU_ASSERT_EQUAL(rk_backend_current(&s)->id, RK_BACKEND_CPU);
            CU_ASSERT_EQUAL(t.n, rk_backend_no_gpu_here(s.gpu_why) ? 0 : 1);
        } else { /* --device gpu or --gpus without one: an error, no note */
            CU_ASSERT_EQUAL(st, RK_E_GPU);
            CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, d == 1 ? "--device gpu: " : "--gpus: "));
            CU_ASSERT_EQUAL(t.n, 0);
        }
        rk_backend_free(&s);
    }
}

/* The map of the ids "0" .. "n - 1". */
static rk_status id_map(int n, rk_idmap **out)
{
    char **ids = malloc((size_t)n * sizeof *ids);
    for (int k = 0; k < n; k++) {
        ids[k] = malloc(12);
        snprintf(ids[k], 12, "%d", k);
    }
    rk_error e;
    rk_status s = rk_ids_from_strings((const char *const *)ids, n, out, &e);
    for (int k = 0; k < n; k++) free(ids[k]);
    free(ids);
    return s;
}

/* The data stage's sort on the GPU (rk_backend_sort_csr): never under
 * --device cpu, never for a small file; under auto it sorts exactly when a
 * GPU is ready (the same matrix as the host's, test_gpu_csr) and keeps it,
 * else it leaves the sort to the host. */
static void test_sort_hook(void)
{
    rk_knn_opts ko;
    rk_knn_opts_default(&ko);
    const int64_t n = (int64_t)1 << 20;
    rk_triples t;
    CU_ASSERT_FATAL(rk_triples_alloc(&t, n, 0, NULL) == RK_OK);
    unsigned long long st = 3;
    for (int64_t p = 0; p < n; p++) { /* (u, i) distinct, not grouped by user */
        t.user[p] = (int32_t)((p * 7919) % 4096);
        t.item[p] = (int32_t)(p / 4096);
        t.rating[p] = (float)(1 + rk_test_rand(&st) % 5);
    }
    t.n = n;
    rk_idmap *users = NULL, *items = NULL; /* ids 0..4095 and 0..255 */
    CU_ASSERT_FATAL(id_map(4096, &users) == RK_OK && id_map(256, &items) == RK_OK);
    for (int d = 0; d < 2; d++) {
        notes nt = {0};
        rk_backend_seam s;
        memset(&s, 0, sizeof s);
        rk_error err;
        rk_error_clear(&err);
        rk_backend_opts o = opts(d == 0 ? RK_DEVICE_CPU : RK_DEVICE_AUTO, &nt);
        CU_ASSERT_FATAL(rk_backend_start(&s, &o, &ko, &err) == RK_OK);
        rk_backend_free(&s); /* joins the warm-up: whether a GPU is ready is known */
        rk_csr out;
        int taken = -1;
        CU_ASSERT_EQUAL(rk_backend_sort_csr(&s, &t, users, items, NULL, RK_DUP_LAST, NULL, &out, &taken, &err), RK_OK);
        CU_ASSERT_EQUAL(taken, d == 1 && rk_backend_gpu_ready(&s));
        if (taken) {
            CU_ASSERT_EQUAL(out.nnz, n);
            rk_csr_free(&out);
        }
        /* a small file: the host's */
        rk_triples small = t;
        small.n = n - 1;
        taken = -1;
        CU_ASSERT_EQUAL(rk_backend_sort_csr(&s, &small, users, items, NULL, RK_DUP_LAST, NULL, &out, &taken, &err),
                        RK_OK);
        CU_ASSERT_EQUAL(taken, 0);
        rk_gpu_forget_csr();
        rk_backend_free(&s);
    }
    rk_ids_free(users);
    rk_ids_free(items);
    rk_triples_free(&t);
}

/* the shape estimate: consulted for the exact engines under auto only */
static void test_shape_veto(void)
{
    char name[256];
    const int have = rk_gpu_available(name, sizeof name);
    rk_knn_opts ko;
    rk_knn_opts_default(&ko);
    for (int exact = 0; exact < 2; exact++) {
        notes t = {0};
        rk_backend_seam s;
        memset(&s, 0, sizeof s);
        rk_error err;
        rk_error_clear(&err);
        rk_backend_opts o = opts(RK_DEVICE_AUTO, &t);
        o.exact = exact;
        o.shape_pays = pays_never;
        CU_ASSERT_EQUAL(rk_backend_start(&s, &o, &ko, &err), RK_OK);
        CU_ASSERT_EQUAL(rk_backend_choose(&s, &ko, &err), RK_OK);
        if (have) {
            CU_ASSERT_EQUAL(rk_backend_current(&s)->id, exact ? RK_BACKEND_CPU : RK_BACKEND_CUDA);
            CU_ASSERT_EQUAL(t.n, exact);
            if (exact) CU_ASSERT_STRING_EQUAL(t.last, "a shape the GPU loses on: running on the CPU");
        } else {
            CU_ASSERT_EQUAL(rk_backend_current(&s)->id, RK_BACKEND_CPU);
        }
        rk_backend_free(&s);
    }
}

/* the one fallback rule, on a seam that chose the GPU */
static void test_fall_back(void)
{
    const rk_status statuses[] = {RK_OK, RK_E_ARG, RK_E_NOMEM, RK_E_GPU, RK_E_IO};
    for (int d = 0; d < 2; d++)
        for (size_t x = 0; x < sizeof statuses / sizeof statuses[0]; x++) {
            notes t = {0};
            rk_backend_seam s;
            memset(&s, 0, sizeof s);
            s.o = opts(d == 0 ? RK_DEVICE_AUTO : RK_DEVICE_GPU, &t);
            s.chosen = rk_backend_get(RK_BACKEND_CUDA);
            rk_error err;
            rk_error_set(&err, statuses[x], "device lost");
            const int want = d == 0 && statuses[x] == RK_E_GPU;
            CU_ASSERT_EQUAL(rk_backend_can_fall_back(&s, statuses[x]), want);
            CU_ASSERT_EQUAL(rk_backend_fall_back(&s, statuses[x], "the GPU engine", &err), want);
            CU_ASSERT_EQUAL(rk_backend_current(&s)->id, want ? RK_BACKEND_CPU : RK_BACKEND_CUDA);
            CU_ASSERT_EQUAL(t.n, want);
            if (want) {
                CU_ASSERT_STRING_EQUAL(t.last, "the GPU engine failed (device lost): running on the CPU");
                CU_ASSERT_STRING_EQUAL(s.fell_back_why, "device lost");
                CU_ASSERT_EQUAL(err.msg[0], '\0');
            } else {
                CU_ASSERT_STRING_EQUAL(err.msg, "device lost"); /* kept for the caller */
            }
        }
    CU_ASSERT_FALSE(rk_backend_can_fall_back(NULL, RK_E_GPU));
}

static void test_device_names(void)
{
    static const char *const names[] = {"auto", "cpu", "gpu"};
    for (int d = 0; d < 3; d++) {
        rk_device out = (rk_device)7;
        CU_ASSERT_EQUAL(rk_device_parse(names[d], &out), RK_OK);
        CU_ASSERT_EQUAL(out, (rk_device)d);
        CU_ASSERT_STRING_EQUAL(rk_device_name(out), names[d]);
    }
    rk_device out = (rk_device)7;
    CU_ASSERT_EQUAL(rk_device_parse("GPU", &out), RK_E_ARG);
    CU_ASSERT_EQUAL(rk_device_parse(NULL, &out), RK_E_ARG);
    CU_ASSERT_EQUAL((int)out, 7);
    CU_ASSERT_STRING_EQUAL(rk_device_name((rk_device)9), "unknown");
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"the backends' table", test_table},
        {"--device cpu", test_device_cpu},
        {"--device auto and gpu, --gpus", test_device_auto_and_gpu},
        {"the shape estimate's veto", test_shape_veto},
        {"GPU failures: the fallback rule", test_fall_back},
        {"device names", test_device_names},
        {"the load's sort on the GPU, or not", test_sort_hook},
        {NULL, NULL},
    };
    return rk_test_main("rk_backend", cases);
}
