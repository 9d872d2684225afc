/* librecknn's public interface (api/recknn.h) against the recknn job on the
 * same ratings and options: its recommendations, neighbour lists and
 * predictions are the files' (items and ranks exactly, numbers to the digits
 * printed), for several metrics, ranking models, implicit ratings and k
 * clamped to the items, pairs rated twice; two models fitted on two threads at once are those
 * fitted one after the other; every refusal (options the fit does not take,
 * bad values, bad data, bad indices) is its status with a message, and a
 * refused value leaves the options as they were. */
#define _POSIX_C_SOURCE 200809L
#include "recknn.h"
#include "rk_job.h"
#include "rk_jobopt.h"
#include "rk_gpu.h"
#include "test_util.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NU 90
#define NI 70

static char g_dir[64];
static int32_t g_u[NU * NI + 32], g_i[NU * NI + 32];
static float g_r[NU * NI + 32];
static int64_t g_n;

/* Ratings where every user and item id (1-based in the file) appears, so
 * that the job's dense indices are id - 1; written to dir/r.csv, and test
 * pairs of known ids to dir/t.csv. */
static int make_files(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/rk_test_api.XXXXXX");
    if (mkdtemp(g_dir) == NULL) return 0;
    char path[128];
    snprintf(path, sizeof path, "%s/r.csv", g_dir);
    FILE *fp = fopen(path, "w");
    if (fp == NULL) return 0;
    fprintf(fp, "user,item,rating\n");
    unsigned long long s = 4242;
    g_n = 0;
    for (int u = 0; u < NU; u++)
        for (int i = 0; i < NI; i++) {
            if (i != u % NI && rk_test_uniform(&s) >= 0.15 + 0.5 * (i < 6)) continue;
            g_u[g_n] = u;
            g_i[g_n] = i;
            g_r[g_n] = (float)(0.5 * (double)(1 + rk_test_rand(&s) % 10));
            fprintf(fp, "%d,%d,%g\n", u + 1, i + 1, (double)g_r[g_n]);
            g_n++;
        }
    for (int t = 0, n = (int)g_n; t < 25; t++) { /* pairs rated again: the duplicates option resolves them */
        const int64_t j = (int64_t)(rk_test_rand(&s) % (unsigned)n);
        g_u[g_n] = g_u[j];
        g_i[g_n] = g_i[j];
        g_r[g_n] = (float)(0.5 * (double)(1 + rk_test_rand(&s) % 10));
        fprintf(fp, "%d,%d,%g\n", g_u[g_n] + 1, g_i[g_n] + 1, (double)g_r[g_n]);
        g_n++;
    }
    fclose(fp);
    snprintf(path, sizeof path, "%s/t.csv", g_dir);
    fp = fopen(path, "w");
    if (fp == NULL) return 0;
    fprintf(fp, "user,item,rating\n");
    for (int t = 0; t < 300; t++)
        fprintf(fp, "%d,%d,%g\n", 1 + (int)(rk_test_rand(&s) % NU), 1 + (int)(rk_test_rand(&s) % NI),
                0.5 * (double)(1 + rk_test_rand(&s) % 10));
    return fclose(fp) == 0;
}

/* "name=value" (or "name": a switch): the name into name[cap]; @return the value or NULL. */
static const char *split_opt(const char *opt, char *name, size_t cap)
{
    const char *eq = strchr(opt, '=');
    snprintf(name, cap, "%.*s", eq != NULL ? (int)(eq - opt) : (int)strlen(opt), opt);
    return eq != NULL ? eq + 1 : NULL;
}

#define expect rk_test_expect

/* run_job's --test (0: none, for the ball cover, which makes no predictions) */
static int g_with_test = 1;

static void count_note(void *ud, const char *msg)
{
    (void)msg;
    ++*(int *)ud;
}

/* The job on the files with the options name=value ("name" alone: a switch),
 * through the public interface as the command runs it (recknn_job_run); its
 * report's text as the command prints it. */
static void run_job(const char *const *opts, int n_opts, const char *out)
{
    recknn_options *o;
    rk_error err;
    CU_ASSERT_FATAL(recknn_options_new(&o, &err) == RK_OK);
    char in[128], test[128];
    snprintf(in, sizeof in, "%s/r.csv", g_dir);
    snprintf(test, sizeof test, "%s/t.csv", g_dir);
    const char *inputs[1] = {in};
    for (int x = 0; x < n_opts; x++) {
        char name[64];
        const char *value = split_opt(opts[x], name, sizeof name);
        CU_ASSERT_FATAL(recknn_options_set(o, name, value, &err) == RK_OK);
    }
    if (g_with_test) CU_ASSERT_FATAL(recknn_options_set(o, "test", test, &err) == RK_OK);
    CU_ASSERT_FATAL(recknn_options_set(o, "out", out, &err) == RK_OK);
    CU_ASSERT_FATAL(recknn_options_set(o, "top-n", "6", &err) == RK_OK);
    CU_ASSERT_FATAL(recknn_options_set(o, "device", "cpu", &err) == RK_OK);
    int notes = 0;
    recknn_options_set_note(o, count_note, &notes);
    CU_ASSERT_FATAL(recknn_options_check(o, &err) == RK_OK);
    recknn_report *rep = NULL;
    const rk_status s = recknn_job_run(o, NULL, "test_api", inputs, 1, &rep, &err);
    if (s != RK_OK) fprintf(stderr, "recknn_job_run: %s\n", err.msg);
    CU_ASSERT_FATAL(s == RK_OK);
    /* the command's lines: the summary, ending with where the files went */
    const size_t len = recknn_report_text(rep, NULL, 0);
    char *text = malloc(len + 1), small[12];
    CU_ASSERT_FATAL(text != NULL);
    CU_ASSERT_EQUAL(recknn_report_text(rep, text, len + 1), len);
    CU_ASSERT_EQUAL(strlen(text), len);
    CU_ASSERT(strncmp(text, "recknn: ", 8) == 0 && len > 0 && text[len - 1] == '\n');
    CU_ASSERT_EQUAL(strstr(text, "RMSE ") != NULL, g_with_test);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, out));
    CU_ASSERT_EQUAL(recknn_report_text(rep, small, sizeof small), len); /* cut short, terminated */
    CU_ASSERT_EQUAL(strlen(small), sizeof small - 1);
    free(text);
    recknn_report_free(rep);
    CU_ASSERT(notes >= 0);
    /* a combination the command refuses, and a run of no file */
    CU_ASSERT_FATAL(recknn_options_set(o, "holdout", "0.2", &err) == RK_OK);
    expect(recknn_options_check(o, &err), RK_E_ARG, &err, g_with_test ? "--test and --holdout" : "--approx");
    recknn_options_free(o);
    CU_ASSERT_FATAL(recknn_options_new(&o, &err) == RK_OK);
    const char *none[1] = {"/nonexistent/ratings.csv"};
    rep = (recknn_report *)&notes; /* set to NULL by a failing run */
    expect(recknn_job_run(o, NULL, NULL, none, 1, &rep, &err), RK_E_IO, &err, "/nonexistent/ratings.csv");
    CU_ASSERT_PTR_NULL(rep);
    CU_ASSERT_EQUAL(recknn_run_rank(NULL), 0);
    recknn_run_finalize(NULL);
    recknn_options_free(o);
}

static const char *g_device = "cpu"; /* fit's device */

static recknn_model *fit(const char *const *opts, int n_opts)
{
    recknn_options *o;
    recknn_data *d;
    recknn_model *m;
    rk_error err;
    CU_ASSERT_FATAL(recknn_options_new(&o, &err) == RK_OK);
    for (int x = 0; x < n_opts; x++) {
        char name[64];
        const char *value = split_opt(opts[x], name, sizeof name);
        CU_ASSERT_FATAL(recknn_options_set(o, name, value, &err) == RK_OK);
    }
    CU_ASSERT_FATAL(recknn_options_set(o, "device", g_device, &err) == RK_OK);
    CU_ASSERT_FATAL(recknn_data_new(NU, NI, g_n, g_u, g_i, g_r, &d, &err) == RK_OK);
    const rk_status s = recknn_fit(o, d, &m, &err);
    if (s != RK_OK) fprintf(stderr, "recknn_fit: %s\n", err.msg);
    CU_ASSERT_FATAL(s == RK_OK);
    recknn_options_free(o);
    recknn_data_free(d);
    return m;
}

static int close_to(double a, double b)
{
    return fabs(a - b) <= 1e-7 * (fabs(b) > 1.0 ? fabs(b) : 1.0);
}

/* recommendations.csv (user,rank,item,score) against recknn_recommend for every user. */
static void same_recommendations(recknn_model *m, const char *out)
{
    rk_error err;
    const int64_t served = recknn_model_served(m);
    CU_ASSERT_EQUAL(served, NU);
    int32_t *items = malloc(sizeof(int32_t) * NU * 6), *counts = malloc(sizeof(int32_t) * NU);
    double *scores = malloc(sizeof(double) * NU * 6);
    CU_ASSERT_FATAL(recknn_recommend(m, NULL, 0, 6, items, scores, counts, &err) == RK_OK);
    char path[160], line[256];
    snprintf(path, sizeof path, "%s/recommendations.csv", out);
    FILE *fp = fopen(path, "r");
    CU_ASSERT_FATAL(fp != NULL);
    int rows = 0, bad = 0, seen[NU] = {0};
    CU_ASSERT(fgets(line, sizeof line, fp) != NULL); /* the header */
    while (fgets(line, sizeof line, fp) != NULL) {
        int u, r, i;
        double sc;
        CU_ASSERT_FATAL(sscanf(line, "%d,%d,%d,%lf", &u, &r, &i, &sc) == 4);
        const int at = (u - 1) * 6 + r - 1;
        bad += items[at] != i - 1 || !close_to(scores[at], sc);
        seen[u - 1]++;
        rows++;
    }
    fclose(fp);
    for (int u = 0; u < NU; u++) bad += seen[u] != counts[u];
    CU_ASSERT(rows > NU);
    CU_ASSERT_EQUAL(bad, 0);
    /* a few users, in another order: their rows of the whole */
    const int32_t some[3] = {17, 2, 17};
    int32_t it3[3 * 4], c3[3];
    CU_ASSERT_FATAL(recknn_recommend(m, some, 3, 4, it3, NULL, c3, &err) == RK_OK);
    for (int x = 0; x < 3; x++)
        for (int r = 0; r < 4; r++) CU_ASSERT_EQUAL(it3[x * 4 + r], r < counts[some[x]] ? items[some[x] * 6 + r] : -1);
    free(items);
    free(scores);
    free(counts);
}

/* neighbors.csv (item or user,neighbor,rank,similarity,support) against the lists (of `rows` rows). */
static void same_neighbours(const recknn_model *m, const char *out, int rows_n)
{
    int32_t ni, k;
    int64_t entries;
    recknn_model_shape(m, NULL, &ni, &k, &entries);
    CU_ASSERT_EQUAL(ni, NI);
    const int NR = rows_n;
    CU_ASSERT_EQUAL(recknn_model_list_rows(m), NR);
    int64_t *ptr = malloc(sizeof(int64_t) * (size_t)(NR + 1));
    int32_t *idx = malloc(sizeof(int32_t) * (size_t)(entries + 1));
    float *sim = malloc(sizeof(float) * (size_t)(entries + 1));
    recknn_neighbors_csr(m, ptr, idx, sim);
    CU_ASSERT_EQUAL(ptr[NR], entries);
    char path[160], line[256];
    snprintf(path, sizeof path, "%s/neighbors.csv", out);
    FILE *fp = fopen(path, "r");
    CU_ASSERT_FATAL(fp != NULL);
    int64_t rows = 0;
    int bad = 0;
    CU_ASSERT(fgets(line, sizeof line, fp) != NULL);
    while (fgets(line, sizeof line, fp) != NULL) {
        int i, j, r, sup;
        double s;
        CU_ASSERT_FATAL(sscanf(line, "%d,%d,%d,%lf,%d", &i, &j, &r, &s, &sup) == 5);
        const int64_t at = ptr[i - 1] + r - 1;
        bad += at >= ptr[i] || idx[at] != j - 1 || !close_to(sim[at], s);
        rows++;
    }
    fclose(fp);
    CU_ASSERT_EQUAL(rows, entries);
    CU_ASSERT_EQUAL(bad, 0);
    /* the same lists one item at a time, cut at 3 */
    const int32_t one[2] = {5, 0};
    int32_t nb[2 * 3], cnt[2];
    float sm[2 * 3];
    rk_error err;
    CU_ASSERT_FATAL(recknn_similar_items(m, one, 2, 3, nb, sm, cnt, &err) == RK_OK);
    for (int x = 0; x < 2; x++) {
        CU_ASSERT_EQUAL(cnt[x], ptr[one[x] + 1] - ptr[one[x]] < 3 ? ptr[one[x] + 1] - ptr[one[x]] : 3);
        for (int r = 0; r < cnt[x]; r++) CU_ASSERT_EQUAL(nb[x * 3 + r], idx[ptr[one[x]] + r]);
    }
    free(ptr);
    free(idx);
    free(sim);
}

/* predictions.csv (user,item,rating,prediction,neighbors_used) against recknn_predict. */
static void same_predictions(recknn_model *m, const char *out)
{
    char path[160], line[256];
    snprintf(path, sizeof path, "%s/predictions.csv", out);
    FILE *fp = fopen(path, "r");
    CU_ASSERT_FATAL(fp != NULL);
    int32_t us[400], is[400], want_used[400];
    double want[400], got[400];
    int n = 0;
    CU_ASSERT(fgets(line, sizeof line, fp) != NULL);
    while (n < 400 && fgets(line, sizeof line, fp) != NULL) {
        int u, i;
        double r;
        CU_ASSERT_FATAL(sscanf(line, "%d,%d,%lf,%lf,%d", &u, &i, &r, &want[n], &want_used[n]) == 5);
        us[n] = u - 1;
        is[n++] = i - 1;
    }
    fclose(fp);
    CU_ASSERT(n > 200);
    int32_t used[400];
    rk_error err;
    CU_ASSERT_FATAL(recknn_predict(m, us, is, n, got, used, &err) == RK_OK);
    int bad = 0;
    for (int t = 0; t < n; t++) bad += !close_to(got[t], want[t]) || used[t] != want_used[t];
    CU_ASSERT_EQUAL(bad, 0);
}

static void against_job(const char *const *opts, int n_opts, const char *tag, int by_user)
{
    char out[128];
    snprintf(out, sizeof out, "%s/%s", g_dir, tag);
    run_job(opts, n_opts, out);
    recknn_model *m = fit(opts, n_opts);
    same_recommendations(m, out);
    same_neighbours(m, out, by_user ? NU : NI);
    same_predictions(m, out);
    recknn_model_free(m);
}

/* "approx-check" of every item: its recall is that of the ball cover's lists
 * against the exact ones, counted here from both models' lists; a model
 * without the check has none to give. */
static void approx_check(void)
{
    static const char *const ap[] = {"metric=cosine-full", "k=10", "approx=rbc", "reps=9", "probes=2",
                                     "approx-check=1000"};
    static const char *const ex[] = {"metric=cosine-full", "k=10", "rank=lists"};
    recknn_model *a = fit(ap, 6), *e = fit(ex, 3);
    recknn_approx_check c;
    rk_error err;
    CU_ASSERT_FATAL(recknn_model_approx_check(a, &c, &err) == RK_OK);
    int32_t items[NI], na[NI * 10], ne[NI * 10], ca[NI], ce[NI];
    for (int32_t i = 0; i < NI; i++) items[i] = i;
    CU_ASSERT_FATAL(recknn_similar_items(a, items, NI, 10, na, NULL, ca, &err) == RK_OK);
    CU_ASSERT_FATAL(recknn_similar_items(e, items, NI, 10, ne, NULL, ce, &err) == RK_OK);
    int64_t evaluated = 0, hits = 0, entries = 0;
    double sum = 0.0;
    for (int32_t i = 0; i < NI; i++) {
        if (ce[i] == 0) continue;
        int64_t h = 0;
        for (int x = 0; x < ca[i]; x++)
            for (int y = 0; y < ce[i]; y++) h += na[i * 10 + x] == ne[i * 10 + y];
        evaluated++;
        hits += h;
        entries += ce[i];
        sum += (double)h / ce[i];
    }
    CU_ASSERT_EQUAL(c.sampled, NI);
    CU_ASSERT_EQUAL(c.evaluated, evaluated);
    CU_ASSERT_EQUAL(c.hits, hits);
    CU_ASSERT_EQUAL(c.exact_entries, entries);
    CU_ASSERT(fabs(c.recall_at_k - sum / (double)evaluated) < 1e-12 && c.recall_at_k < 1.0);
    CU_ASSERT(c.recall_at_k_ties >= c.recall_at_k);
    expect(recknn_model_approx_check(e, &c, &err), RK_E_ARG, &err, "without approx-check");
    recknn_model_free(a);
    recknn_model_free(e);
}

/* The ball cover's lists (approx rbc): the job's neighbours and
 * recommendations (top-N from the metric's lists, as the command's), no
 * predictions, no evaluation, no saved model. */
static void test_approx(void)
{
    static const char *const a[] = {"metric=cosine-full", "k=10", "approx=rbc", "reps=9", "probes=3", "seed=5"};
    static const char *const b[] = {"metric=jaccard", "k=12", "approx=rbc", "rank=lists"};
    const char *const *sets[] = {a, b};
    const int counts[] = {6, 4};
    g_with_test = 0;
    for (int x = 0; x < 2; x++) {
        char out[128];
        snprintf(out, sizeof out, "%s/approx%d", g_dir, x);
        run_job(sets[x], counts[x], out);
        recknn_model *m = fit(sets[x], counts[x]);
        same_recommendations(m, out);
        same_neighbours(m, out, NI);
        int32_t u = 0, i = 1, used;
        double p;
        rk_error err;
        expect(recknn_predict(m, &u, &i, 1, &p, &used, &err), RK_E_ARG, &err, "no predictions");
        recknn_data *test;
        const float r = 4.0f;
        CU_ASSERT_FATAL(recknn_data_new(NU, NI, 1, &u, &i, &r, &test, &err) == RK_OK);
        recknn_metrics mt;
        expect(recknn_evaluate(m, test, 5, 0, &mt, &err), RK_E_ARG, &err, "approx rbc");
        char path[160];
        snprintf(path, sizeof path, "%s/approx.rkm", g_dir);
        expect(recknn_model_save(m, path, NULL, NULL, &err), RK_E_ARG, &err, "--approx");
        recknn_data_free(test);
        recknn_model_free(m);
    }
    g_with_test = 1;
    approx_check();
    /* the checks of the command: the ball cover wants a full-vector metric's neighbours */
    recknn_options *o;
    rk_error err;
    CU_ASSERT_FATAL(recknn_options_new(&o, &err) == RK_OK);
    CU_ASSERT_FATAL(recknn_options_set(o, "reps", "4", &err) == RK_OK);
    recknn_data *d;
    CU_ASSERT_FATAL(recknn_data_new(NU, NI, g_n, g_u, g_i, g_r, &d, &err) == RK_OK);
    recknn_model *m;
    expect(recknn_fit(o, d, &m, &err), RK_E_ARG, &err, "--reps, --probes and --approx-check need --approx rbc");
    CU_ASSERT_FATAL(recknn_options_set(o, "approx", "rbc", &err) == RK_OK);
    expect(recknn_fit(o, d, &m, &err), RK_E_ARG, &err, "--approx rbc needs a full-vector metric");
    recknn_data_free(d);
    recknn_options_free(o);
}

static void test_against_job(void)
{
    static const char *const a[] = {"metric=pearson", "k=10"};
    static const char *const b[] = {"metric=cosine", "k=20", "rank=lists", "min-support=2"};
    static const char *const c[] = {"implicit", "rank=weighted-cosine", "k=8"};
    static const char *const d[] = {"metric=pearson-baseline", "predict=baseline", "shrinkage=50", "rank=lists",
                                    "k=500"}; /* k clamped to the other 69 items */
    static const char *const e[] = {"metric=msd", "k=15", "rank-k=30", "alpha=0.5", "beta=0.2", "duplicates=mean"};
    static const char *const f[] = {"metric=pearson-baseline", "k=12"}; /* the metric's own shrinkage (100) */
    static const char *const gu[] = {"by=user", "metric=msd", "k=10"}; /* user-based: lists over users */
    static const char *const hu[] = {"by=user", "metric=pearson", "predict=baseline", "k=15"};
    against_job(a, 2, "a", 0);
    against_job(b, 4, "b", 0);
    against_job(c, 3, "c", 0);
    against_job(d, 5, "d", 0);
    against_job(e, 6, "e", 0);
    against_job(f, 2, "f", 0);
    against_job(gu, 3, "g", 1);
    against_job(hu, 4, "h", 1);
    /* the models of CONTRACT.md §4b: the library predicts what the job's files hold */
    static const char *const ip[] = {"metric=pearson-baseline", "predict=interpolate", "k=10", "interp-shrink=20"};
    static const char *const gl[] = {"metric=pearson-baseline", "predict=global", "k=10", "global-epochs=5"};
    against_job(ip, 4, "ip", 0);
    against_job(gl, 4, "gl", 0);
    /* their options chosen on a validation split, as the command chooses them (CONTRACT.md §6e) */
    static const char *const tp[] = {"metric=pearson-baseline", "predict=interpolate", "tune-predict"};
    against_job(tp, 3, "tp", 0);
    /* the ranking model searched first (the command's --tune, measuring its top-6) */
    static const char *const t[] = {"tune", "tune-grid=small", "top-n=6", "tune-rounds=2"};
    against_job(t, 4, "t", 0);
}


/* A model saved with its raw ids (index + 1): the command's --model run on the
 * training file recommends what the model does, and the model loaded back
 * recommends and predicts the same numbers. */
static void test_saved(void)
{
    static const char *const a[] = {"metric=pearson", "k=10"};
    recknn_model *m = fit(a, 2);
    rk_error err;
    char path[128], out[128], in[128];
    snprintf(path, sizeof path, "%s/m.rkm", g_dir);
    snprintf(out, sizeof out, "%s/saved", g_dir);
    snprintf(in, sizeof in, "%s/r.csv", g_dir);
    char *uid[NU], *iid[NI];
    for (int x = 0; x < NU; x++) {
        uid[x] = malloc(8);
        snprintf(uid[x], 8, "%d", x + 1);
    }
    for (int x = 0; x < NI; x++) {
        iid[x] = malloc(8);
        snprintf(iid[x], 8, "%d", x + 1);
    }
    CU_ASSERT_FATAL(recknn_model_save(m, path, (const char *const *)uid, (const char *const *)iid, &err) == RK_OK);
    rk_job_opts o;
    rk_job_opts_default(&o);
    const char *inputs[1] = {in};
    o.inputs = inputs;
    o.n_inputs = 1;
    o.model_path = path;
    o.out_dir = out;
    o.top_n = 6;
    o.device = RK_DEVICE_CPU;
    rk_job_report rep;
    const rk_status s = rk_job_run(&o, &rep, &err);
    if (s != RK_OK) fprintf(stderr, "rk_job_run --model: %s\n", err.msg);
    CU_ASSERT_FATAL(s == RK_OK);
    same_recommendations(m, out);
    recknn_model *back;
    CU_ASSERT_FATAL(recknn_model_load(path, NULL, &back, &err) == RK_OK);
    int32_t i1[NU * 6], i2[NU * 6], q[3] = {0, 5, 9}, qi[3] = {1, 2, 60};
    double s1[NU * 6], s2[NU * 6], p1[3], p2[3];
    CU_ASSERT_FATAL(recknn_recommend(m, NULL, 0, 6, i1, s1, NULL, &err) == RK_OK);
    CU_ASSERT_FATAL(recknn_recommend(back, NULL, 0, 6, i2, s2, NULL, &err) == RK_OK);
    CU_ASSERT(memcmp(i1, i2, sizeof i1) == 0 && memcmp(s1, s2, sizeof s1) == 0);
    CU_ASSERT_FATAL(recknn_predict(m, q, qi, 3, p1, NULL, &err) == RK_OK);
    CU_ASSERT_FATAL(recknn_predict(back, q, qi, 3, p2, NULL, &err) == RK_OK);
    CU_ASSERT(memcmp(p1, p2, sizeof p1) == 0);
    char id[32];
    CU_ASSERT_EQUAL(recknn_model_id(back, 1, 9, id, sizeof id), 2);
    CU_ASSERT_STRING_EQUAL(id, "10");
    CU_ASSERT_EQUAL(recknn_model_id(m, 0, 0, id, sizeof id), -1); /* fitted, never given ids */
    /* refusals: ids out of order, a user-based model, a file that is not a model */
    char *tmp = iid[0];
    iid[0] = iid[1];
    iid[1] = tmp;
    expect(recknn_model_save(m, path, NULL, (const char *const *)iid, &err), RK_E_ARG, &err,
           "out of the command's order");
    recknn_model *none = m;
    expect(recknn_model_load(in, NULL, &none, &err), RK_E_MODEL, &err, "");
    CU_ASSERT_PTR_NULL(none);
    snprintf(path, sizeof path, "%s/none.rkm", g_dir);
    expect(recknn_model_load(path, NULL, &none, &err), RK_E_IO, &err, "none.rkm");
    for (int x = 0; x < NU; x++) free(uid[x]);
    for (int x = 0; x < NI; x++) free(iid[x]);
    recknn_model_free(back);
    recknn_model_free(m);
    static const char *const u[] = {"by=user", "k=5"};
    m = fit(u, 2);
    expect(recknn_model_save(m, path, NULL, NULL, &err), RK_E_ARG, &err, "user-based");
    recknn_model_free(m);
}

/* The same ratings as a CSR matrix read in place (the last of a pair rated
 * twice, as the duplicates option's default keeps it): the model fitted from
 * them recommends what the one fitted from the arrays does, and reads them in
 * place (a rating changed afterwards changes its predictions: no copy).  Rows
 * out of order are refused. */
static void test_csr(void)
{
    static float dense[NU][NI];
    static int64_t ptr[NU + 1];
    static int32_t idx[NU * NI];
    static float val[NU * NI];
    memset(dense, 0, sizeof dense);
    for (int64_t t = 0; t < g_n; t++) dense[g_u[t]][g_i[t]] = g_r[t]; /* the last wins */
    int64_t nnz = 0;
    for (int u = 0; u < NU; u++) {
        ptr[u] = nnz;
        for (int i = 0; i < NI; i++)
            if (dense[u][i] != 0.0f) {
                idx[nnz] = i;
                val[nnz++] = dense[u][i];
            }
    }
    ptr[NU] = nnz;
    recknn_options *o;
    recknn_data *d;
    recknn_model *m;
    rk_error err;
    CU_ASSERT_FATAL(recknn_options_new(&o, &err) == RK_OK);
    CU_ASSERT_FATAL(recknn_options_set(o, "device", "cpu", &err) == RK_OK);
    CU_ASSERT_FATAL(recknn_data_from_csr(NU, NI, ptr, idx, val, 1, &d, &err) == RK_OK);
    CU_ASSERT_FATAL(recknn_fit(o, d, &m, &err) == RK_OK);
    recknn_data_free(d); /* the model still reads the arrays */
    static const char *const none[] = {"k=20"};
    recknn_model *ref = fit(none, 1);
    int32_t i1[NU * 5], i2[NU * 5];
    double s1[NU * 5], s2[NU * 5];
    CU_ASSERT_FATAL(recknn_recommend(m, NULL, 0, 5, i1, s1, NULL, &err) == RK_OK);
    CU_ASSERT_FATAL(recknn_recommend(ref, NULL, 0, 5, i2, s2, NULL, &err) == RK_OK);
    CU_ASSERT(memcmp(i1, i2, sizeof i1) == 0 && memcmp(s1, s2, sizeof s1) == 0);
    const int32_t pu = 0, pi = idx[ptr[1]]; /* user 0 and an item user 1 rated */
    double before, after;
    CU_ASSERT_FATAL(recknn_predict(m, &pu, &pi, 1, &before, NULL, &err) == RK_OK);
    for (int64_t p = 0; p < nnz; p++) val[p] = val[p] >= 3.0f ? 1.0f : 5.0f; /* in place: the model sees it */
    CU_ASSERT_FATAL(recknn_predict(m, &pu, &pi, 1, &after, NULL, &err) == RK_OK);
    CU_ASSERT(before != after);
    recknn_model_free(m);
    recknn_model_free(ref);
    /* a copied matrix is the data set's own: freed with it */
    CU_ASSERT_FATAL(recknn_data_from_csr(NU, NI, ptr, idx, val, 0, &d, &err) == RK_OK);
    recknn_data_free(d);
    int32_t swap = idx[0];
    idx[0] = idx[1];
    idx[1] = swap;
    expect(recknn_data_from_csr(NU, NI, ptr, idx, val, 1, &d, &err), RK_E_ARG, &err, "row 0: item");
    const int64_t bad0[2] = {1, 1};
    expect(recknn_data_from_csr(1, NI, bad0, idx, val, 1, &d, &err), RK_E_ARG, &err, "indptr[0] is 1");
    recknn_options_free(o);
}

/* Two models fitted at once on two threads: those fitted one after the other. */
typedef struct fit_job {
    const char *const *opts;
    int n;
    recknn_model *m;
} fit_job;

static void *fit_thread(void *arg)
{
    fit_job *f = arg;
    f->m = fit(f->opts, f->n);
    return NULL;
}

static void test_threads(void)
{
    static const char *const a[] = {"metric=pearson", "k=10"};
    static const char *const b[] = {"metric=cosine", "k=12", "rank=lists"};
    fit_job fj[2] = {{a, 2, NULL}, {b, 3, NULL}};
    pthread_t th[2];
    for (int x = 0; x < 2; x++) CU_ASSERT_FATAL(pthread_create(&th[x], NULL, fit_thread, &fj[x]) == 0);
    for (int x = 0; x < 2; x++) pthread_join(th[x], NULL);
    rk_error err;
    for (int x = 0; x < 2; x++) {
        recknn_model *alone = fit(fj[x].opts, fj[x].n);
        int32_t i1[NU * 5], i2[NU * 5];
        double s1[NU * 5], s2[NU * 5];
        CU_ASSERT_FATAL(recknn_recommend(fj[x].m, NULL, 0, 5, i1, s1, NULL, &err) == RK_OK);
        CU_ASSERT_FATAL(recknn_recommend(alone, NULL, 0, 5, i2, s2, NULL, &err) == RK_OK);
        CU_ASSERT(memcmp(i1, i2, sizeof i1) == 0 && memcmp(s1, s2, sizeof s1) == 0);
        recknn_model_free(alone);
        recknn_model_free(fj[x].m);
    }
}

static void test_refusals(void)
{
    recknn_options *o;
    recknn_data *d = NULL;
    recknn_model *m = NULL;
    rk_error err;
    CU_ASSERT_FATAL(recknn_options_new(&o, &err) == RK_OK);
    expect(recknn_options_set(o, "metric", "nope", &err), RK_E_ARG, &err, "--metric: unknown metric 'nope'");
    expect(recknn_options_set(o, "k", "0", &err), RK_E_ARG, &err, "-k: '0' out of range");
    expect(recknn_options_set(o, "nope", "1", &err), RK_E_ARG, &err, "unknown option 'nope'");
    CU_ASSERT_EQUAL(recknn_option_takes_value("implicit"), 0);
    CU_ASSERT_EQUAL(recknn_option_takes_value("metric"), 1);
    CU_ASSERT_EQUAL(recknn_option_takes_value("nope"), -1);
    CU_ASSERT_EQUAL(recknn_option_fits("metric"), 1);
    CU_ASSERT_EQUAL(recknn_option_fits("holdout"), 0);
    CU_ASSERT_EQUAL(recknn_option_fits("nope"), -1);
    size_t names = 0;
    while (recknn_option_name(names) != NULL) names++;
    CU_ASSERT(names >= 60);
    CU_ASSERT_EQUAL(recknn_api_version(), RECKNN_API_VERSION);
    CU_ASSERT(strlen(recknn_version()) > 0);
    /* data */
    const int32_t u[3] = {0, 1, 2}, i[3] = {0, 1, 3};
    const float r[3] = {1.0f, NAN, 2.0f};
    expect(recknn_data_new(3, 3, 3, u, i, NULL, &d, &err), RK_E_ARG, &err, "rating 2 is of user 2 and item 3");
    expect(recknn_data_new(3, 4, 3, u, i, r, &d, &err), RK_E_ARG, &err, "rating 1 is not a finite number");
    expect(recknn_data_new(3, 4, 0, u, i, r, &d, &err), RK_E_EMPTY, &err, "no rating");
    CU_ASSERT_PTR_NULL(d);
    CU_ASSERT_FATAL(recknn_data_new(NU, NI, g_n, g_u, g_i, g_r, &d, &err) == RK_OK);
    /* options the fit does not take */
    CU_ASSERT_FATAL(recknn_options_set(o, "holdout", "0.2", &err) == RK_OK);
    expect(recknn_fit(o, d, &m, &err), RK_E_ARG, &err, "--holdout is an option of the recknn command's file job");
    recknn_options_free(o);
    CU_ASSERT_FATAL(recknn_options_new(&o, &err) == RK_OK);
    CU_ASSERT_FATAL(recknn_options_set(o, "gpus", "all", &err) == RK_OK);
    CU_ASSERT_FATAL(recknn_options_set(o, "device", "cpu", &err) == RK_OK);
    expect(recknn_fit(o, d, &m, &err), RK_E_ARG, &err, "--gpus");
    recknn_options_free(o);
    CU_ASSERT_FATAL(recknn_options_new(&o, &err) == RK_OK);
    CU_ASSERT_FATAL(recknn_options_set(o, "implicit", NULL, &err) == RK_OK);
    CU_ASSERT_FATAL(recknn_options_set(o, "metric", "pearson", &err) == RK_OK);
    expect(recknn_fit(o, d, &m, &err), RK_E_ARG, &err, "--implicit"); /* the command's combination check */
    CU_ASSERT_PTR_NULL(m);
    recknn_options_free(o);
    /* a good model, bad indices */
    CU_ASSERT_FATAL(recknn_options_new(&o, &err) == RK_OK);
    CU_ASSERT_FATAL(recknn_options_set(o, "device", "cpu", &err) == RK_OK);
    CU_ASSERT_FATAL(recknn_fit(o, d, &m, &err) == RK_OK);
    int32_t items[10], bad_user = NU, bad_item = -1, good = 0;
    double out[10];
    expect(recknn_recommend(m, &bad_user, 1, 5, items, NULL, NULL, &err), RK_E_ARG, &err, "outside the 90 users");
    expect(recknn_recommend(m, NULL, 0, 0, items, NULL, NULL, &err), RK_E_ARG, &err, "n must be at least 1");
    expect(recknn_similar_items(m, &bad_item, 1, 5, items, NULL, NULL, &err), RK_E_ARG, &err, "outside the 70 items");
    expect(recknn_predict(m, &good, &bad_item, 1, out, NULL, &err), RK_E_ARG, &err, "outside the 90 users and 70");
    recknn_metrics mt;
    recknn_data *small;
    CU_ASSERT_FATAL(recknn_data_new(NU, NI - 1, 3, u, i, NULL, &small, &err) == RK_OK);
    expect(recknn_evaluate(m, small, 10, 0, &mt, &err), RK_E_ARG, &err, "the test set counts 90 users and 69 items");
    expect(recknn_evaluate(m, d, 0, 0, &mt, &err), RK_E_ARG, &err, "n must be at least 1");
    recknn_data_free(small);
    /* the training ratings as a test: every pair known, the lists' items all rated (no hit) */
    CU_ASSERT_FATAL(recknn_evaluate(m, d, 10, 0, &mt, &err) == RK_OK);
    CU_ASSERT(mt.test_pairs > 1000 && mt.unknown_users == 0 && mt.unknown_items == 0 && mt.fallbacks < mt.test_pairs);
    CU_ASSERT(mt.rmse > 0.0 && mt.rmse < 2.0 && mt.precision == 0.0 && mt.coverage > 0.0);
    recknn_model_free(m);
    recknn_options_free(o);
    recknn_data_free(d);
    recknn_options_free(NULL);
    recknn_data_free(NULL);
    recknn_model_free(NULL);
}

/* "gpus": two parts sharing device 0 (one GPU suffices) give the lists,
 * ranking lists, recommendations and predictions of the job on the CPU (the
 * ratings lie on a grid: the engines agree byte for byte); without a GPU,
 * RK_E_GPU naming --gpus. */
static void test_gpus(void)
{
    static const char *const a[] = {"metric=pearson", "k=10"};
    static const char *const a2[] = {"metric=pearson", "k=10", "gpus=0,0"};
    static const char *const b[] = {"metric=cosine", "k=12", "rank=lists", "min-support=2"};
    static const char *const b2[] = {"metric=cosine", "k=12", "rank=lists", "min-support=2", "gpus=0,0"};
    static const char *const c[] = {"by=user", "metric=pearson", "k=9"};
    static const char *const c2[] = {"by=user", "metric=pearson", "k=9", "gpus=0,0"};
    if (rk_gpu_device_count() == 0) {
        recknn_options *o;
        recknn_data *d;
        recknn_model *m = NULL;
        rk_error err;
        CU_ASSERT_FATAL(recknn_options_new(&o, &err) == RK_OK);
        CU_ASSERT_FATAL(recknn_options_set(o, "gpus", "0,0", &err) == RK_OK);
        CU_ASSERT_FATAL(recknn_data_new(NU, NI, g_n, g_u, g_i, g_r, &d, &err) == RK_OK);
        expect(recknn_fit(o, d, &m, &err), RK_E_GPU, &err, "");
        CU_ASSERT_PTR_NULL(m);
        recknn_data_free(d);
        recknn_options_free(o);
        return;
    }
    const char *const *job[] = {a, b, c}, *const *two[] = {a2, b2, c2};
    const int n[] = {2, 4, 3};
    g_device = "gpu";
    for (int x = 0; x < 3; x++) {
        char out[128];
        snprintf(out, sizeof out, "%s/gpus%d", g_dir, x);
        run_job(job[x], n[x], out);
        recknn_model *m = fit(two[x], n[x] + 1);
        same_recommendations(m, out);
        same_neighbours(m, out, x == 2 ? NU : NI);
        same_predictions(m, out);
        recknn_model_free(m);
    }
    g_device = "cpu";
}

int main(void)
{
    if (!make_files()) {
        perror("test_api: the rating files");
        return 1;
    }
    static const rk_test_case cases[] = {
        {"the job's files, from the library", test_against_job},
        {"two models on two threads", test_threads},
        {"saved and loaded", test_saved},
        {"a CSR matrix read in place", test_csr},
        {"refusals", test_refusals},
        {"gpus: the lists shared among GPUs", test_gpus},
        {"the ball cover's lists (approx rbc) as the job's", test_approx},
        {NULL, NULL},
    };
    const int rc = rk_test_main("api", cases);
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
    return rc;
}
