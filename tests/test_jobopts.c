/* rk_job_opts_check: every refused combination of options is RK_E_ARG with
 * a message naming the options, the defaults pass, the derived settings
 * (--items: no top-N; --implicit: relevance 1) are applied, and a second
 * check of checked options changes nothing. */
#include "rk_job.h"
#include "test_util.h"

#include <math.h>
#include <string.h>

typedef void (*setter)(rk_job_opts *o);

static void s_test_holdout(rk_job_opts *o) { o->test_path = "t.csv"; o->holdout = 0.1; }
static void s_users_no_topn(rk_job_opts *o) { o->users_path = "u.txt"; o->top_n = 0; }
static void s_folds_test(rk_job_opts *o) { o->folds = 3; o->test_path = "t.csv"; }
static void s_split_no_holdout(rk_job_opts *o) { o->split = RK_SPLIT_USER; }
static void s_write_folds(rk_job_opts *o) { o->write_folds = 1; }
static void s_items_byuser(rk_job_opts *o) { o->items_path = "i.txt"; o->by_user = 1; }
static void s_items_topn(rk_job_opts *o) { o->items_path = "i.txt"; o->top_n_given = 1; }
static void s_items_test(rk_job_opts *o) { o->items_path = "i.txt"; o->holdout = 0.2; }
static void s_items_model(rk_job_opts *o) { o->items_path = "i.txt"; o->save_model = "m"; }
static void s_items_approx(rk_job_opts *o) { o->items_path = "i.txt"; o->approx = RK_APPROX_RBC; }
static void s_spgemm(rk_job_opts *o) { o->gpu_sims = RK_GPU_SIMS_SPGEMM; }
static void s_implicit_rel(rk_job_opts *o) { o->implicit = 1; o->relevance_given = 1; }
static void s_queries(rk_job_opts *o) { o->queries_path = "q.csv"; }
static void s_byuser_model(rk_job_opts *o) { o->by_user = 1; o->save_model = "m"; }
static void s_model_folds(rk_job_opts *o) { o->model_path = "m"; o->folds = 2; }
static void s_reps(rk_job_opts *o) { o->approx_reps = 4; }
static void s_approx_metric(rk_job_opts *o) { o->approx = RK_APPROX_RBC; }
static void s_approx_test(rk_job_opts *o) { o->approx = RK_APPROX_RBC; o->knn.sim.metric = RK_METRIC_JACCARD; o->test_path = "t"; }
static void s_approx_model(rk_job_opts *o) { o->approx = RK_APPROX_RBC; o->knn.sim.metric = RK_METRIC_JACCARD; o->model_path = "m"; }
static void s_approx_neg(rk_job_opts *o) { o->approx = RK_APPROX_RBC; o->knn.sim.metric = RK_METRIC_JACCARD; o->approx_probes = -1; }
static void s_gpus_cpu(rk_job_opts *o) { o->gpus.all = 1; o->device = RK_DEVICE_CPU; }
static void s_k0(rk_job_opts *o) { o->knn.k = 0; }
static void s_folds1(rk_job_opts *o) { o->folds = 1; }
static void s_folds_many(rk_job_opts *o) { o->folds = RK_JOB_MAX_FOLDS + 1; }
static void s_relevance_nan(rk_job_opts *o) { o->relevance = NAN; }

static void test_refusals(void)
{
    static const struct { setter set; const char *says; } cases[] = {
        {s_test_holdout, "--test and --holdout"}, {s_users_no_topn, "--users needs"},
        {s_folds_test, "--folds cannot"},         {s_split_no_holdout, "--split user needs --holdout"},
        {s_write_folds, "--write-folds needs"},   {s_items_byuser, "--items is for item lists"},
        {s_items_topn, "--top-n"},                {s_items_test, "--items computes lists only"},
        {s_items_model, "--items cannot"},        {s_items_approx, "--approx"},
        {s_spgemm, "cosine-full, euclidean-full, jaccard"}, {s_implicit_rel, "--relevance cannot"},
        {s_queries, "--queries needs --model"},   {s_byuser_model, "--by user cannot"},
        {s_model_folds, "--model answers"},       {s_reps, "need --approx rbc"},
        {s_approx_metric, "needs a full-vector metric (--metric cosine-full, euclidean-full, jaccard), not pearson"},
        {s_approx_test, "neighbour lists only"},  {s_approx_model, "--approx cannot"},
        {s_approx_neg, "must be positive"},       {s_gpus_cpu, "--gpus needs the GPU engine"},
        {s_k0, "-k must be"},                     {s_folds1, "between 2 and"},
        {s_folds_many, "between 2 and"},          {s_relevance_nan, "--relevance must"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        rk_job_opts o;
        rk_job_opts_default(&o);
        cases[c].set(&o);
        rk_error err;
        rk_error_clear(&err);
        CU_ASSERT_EQUAL(rk_job_opts_check(&o, &err), RK_E_ARG);
        if (strstr(err.msg, cases[c].says) == NULL) {
            fprintf(stderr, "case %zu: '%s' does not say '%s'\n", c, err.msg, cases[c].says);
            CU_FAIL("the message does not name the options");
        }
    }
}

static void test_accepted_and_derived(void)
{
    rk_error err;
    rk_job_opts o, again;
    rk_job_opts_default(&o);
    CU_ASSERT_EQUAL(rk_job_opts_check(&o, &err), RK_OK);
    CU_ASSERT_EQUAL(o.top_n, 10);
    CU_ASSERT_EQUAL(o.relevance, RK_RANK_RELEVANCE_DEFAULT);

    rk_job_opts_default(&o);
    o.items_path = "i.txt"; /* the default top-N, not given: dropped */
    CU_ASSERT_EQUAL(rk_job_opts_check(&o, &err), RK_OK);
    CU_ASSERT_EQUAL(o.top_n, 0);
    again = o;
    CU_ASSERT_EQUAL(rk_job_opts_check(&again, &err), RK_OK);
    CU_ASSERT_EQUAL(memcmp(&o, &again, sizeof o), 0);

    rk_job_opts_default(&o);
    o.implicit = 1;
    o.holdout = 0.1;
    o.split = RK_SPLIT_TEMPORAL;
    CU_ASSERT_EQUAL(rk_job_opts_check(&o, &err), RK_OK);
    CU_ASSERT_EQUAL(o.relevance, 1.0);
    again = o;
    CU_ASSERT_EQUAL(rk_job_opts_check(&again, &err), RK_OK);
    CU_ASSERT_EQUAL(memcmp(&o, &again, sizeof o), 0);

    rk_job_opts_default(&o);
    o.approx = RK_APPROX_RBC;
    o.knn.sim.metric = RK_METRIC_COSINE_FULL;
    o.approx_check = 10;
    CU_ASSERT_EQUAL(rk_job_opts_check(&o, &err), RK_OK);
    rk_job_opts_default(&o);
    o.folds = 5;
    o.write_folds = 1;
    o.gpus.all = 1;
    CU_ASSERT_EQUAL(rk_job_opts_check(&o, &err), RK_OK);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"every refused combination", test_refusals},
        {"accepted options and derived settings", test_accepted_and_derived},
        {NULL, NULL},
    };
    return rk_test_main("rk_job_opts_check", cases);
}
