/* rk_jobopt: the job's options by name.  Every row has a unique name that
 * rk_jobopt_find gives back; a switch refuses a value and an option with a
 * value refuses none; good values land in rk_job_opts; every bad value is
 * RK_E_ARG with a message that names the option as the command line does;
 * an unknown name is refused; the options a saved model fixes are recorded
 * for rk_job_opts_check's refusal. */
#include "rk_jobopt.h"
#include "test_util.h"

#include <math.h>
#include <string.h>

static void test_table(void)
{
    size_t n = 0;
    for (const rk_jobopt *r; (r = rk_jobopt_at(n)) != NULL; n++) {
        CU_ASSERT(r->name[0] != '\0' && r->name[0] != '-');
        CU_ASSERT_PTR_EQUAL(rk_jobopt_find(r->name), r);
        for (size_t m = 0; m < n; m++) CU_ASSERT(strcmp(rk_jobopt_at(m)->name, r->name) != 0);
    }
    CU_ASSERT(n >= 60);
    CU_ASSERT_PTR_NULL(rk_jobopt_find("no-such-option"));
    CU_ASSERT_PTR_NULL(rk_jobopt_find(NULL));
    CU_ASSERT_TRUE(rk_jobopt_find("metric")->model_fixed);
    CU_ASSERT_FALSE(rk_jobopt_find("out")->model_fixed);
    CU_ASSERT_FALSE(rk_jobopt_find("header")->has_value);
}

static void test_values(void)
{
    rk_job_opts o;
    rk_job_opts_default(&o);
    rk_error err;
    CU_ASSERT_EQUAL(rk_jobopt_set(&o, "metric", "cosine", &err), RK_OK);
    CU_ASSERT_EQUAL(o.knn.sim.metric, RK_METRIC_COSINE);
    CU_ASSERT_TRUE(o.metric_given);
    CU_ASSERT_STRING_EQUAL(o.model_fixed_opt, "--metric"); /* the first the model fixes */
    CU_ASSERT_EQUAL(rk_jobopt_set(&o, "k", "37", &err), RK_OK);
    CU_ASSERT_EQUAL(o.knn.k, 37);
    CU_ASSERT_STRING_EQUAL(o.model_fixed_opt, "--metric");
    CU_ASSERT_EQUAL(rk_jobopt_set(&o, "top-n", "5", &err), RK_OK);
    CU_ASSERT_EQUAL(o.top_n, 5);
    CU_ASSERT_TRUE(o.top_n_given);
    CU_ASSERT_EQUAL(rk_jobopt_set(&o, "gpu-memory", "2.5", &err), RK_OK);
    CU_ASSERT_DOUBLE_EQUAL(o.gpu_memory_gb, 2.5, 0.0);
    CU_ASSERT_EQUAL(rk_jobopt_set(&o, "rating-scale", "1:5", &err), RK_OK);
    CU_ASSERT_TRUE(o.load.have_scale);
    CU_ASSERT_DOUBLE_EQUAL(o.load.scale_max, 5.0, 0.0);
    CU_ASSERT_EQUAL(rk_jobopt_set(&o, "bm25", "1.2:0.75", &err), RK_OK);
    CU_ASSERT_DOUBLE_EQUAL(o.rank.bm25_b, 0.75, 0.0);
    CU_ASSERT_EQUAL(rk_jobopt_set(&o, "seed", "18446744073709551615", &err), RK_OK);
    CU_ASSERT_EQUAL(o.seed, UINT64_MAX);
    CU_ASSERT_EQUAL(rk_jobopt_set(&o, "delimiter", "tab", &err), RK_OK);
    CU_ASSERT_EQUAL(o.load.delimiter, '\t');
    CU_ASSERT_EQUAL(rk_jobopt_set(&o, "cutoffs", "5,10,20", &err), RK_OK);
    CU_ASSERT_EQUAL(o.n_cutoffs, 3);
    CU_ASSERT_EQUAL(rk_jobopt_set(&o, "by", "user", &err), RK_OK);
    CU_ASSERT_TRUE(o.by_user);
    CU_ASSERT_EQUAL(rk_jobopt_set(&o, "header", NULL, &err), RK_OK);
    CU_ASSERT_EQUAL(o.load.header, 1);
    CU_ASSERT_EQUAL(rk_jobopt_set(&o, "out", "somewhere", &err), RK_OK);
    CU_ASSERT_STRING_EQUAL(o.out_dir, "somewhere");
    /* a switch the model fixes, first: recorded */
    rk_job_opts_default(&o);
    CU_ASSERT_EQUAL(rk_jobopt_set(&o, "implicit", NULL, &err), RK_OK);
    CU_ASSERT_STRING_EQUAL(o.model_fixed_opt, "--implicit");
    rk_job_opts_default(&o);
    CU_ASSERT_EQUAL(rk_jobopt_set(&o, "k", "3", &err), RK_OK);
    CU_ASSERT_STRING_EQUAL(o.model_fixed_opt, "-k");
}

/* One bad value: RK_E_ARG whose message holds want. */
static void bad(const char *name, const char *value, const char *want)
{
    rk_job_opts o;
    rk_job_opts_default(&o);
    rk_error err;
    rk_error_clear(&err);
    CU_ASSERT_EQUAL(rk_jobopt_set(&o, name, value, &err), RK_E_ARG);
    if (strstr(err.msg, want) == NULL) fprintf(stderr, "%s=%s: '%s' lacks '%s'\n", name, value, err.msg, want);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want));
}

static void test_bad_values(void)
{
    bad("k", "0", "-k: '0' out of range (at least 1)");
    bad("k", "3x", "-k: expected an integer, got '3x'");
    bad("metric", "nope", "--metric: unknown metric 'nope'");
    bad("metric", "rp3beta", "use --rank rp3beta");
    bad("shrinkage", "-1", "--shrinkage: must be at least 0");
    bad("shrinkage", "nan", "--shrinkage: expected a finite number");
    bad("delimiter", "ab", "--delimiter: expected one character");
    bad("columns", "user,,rating", "--columns: empty field");
    bad("rating-scale", "5:1", "--rating-scale: MIN must be below MAX");
    bad("seed", "-1", "--seed: expected an unsigned integer");
    bad("holdout", "1", "--holdout: must be a fraction strictly between 0 and 1");
    bad("tune-rounds", "21", "--tune-rounds: '21' out of range (1 to 20)");
    bad("bm25", "1.2", "--bm25: expected K1:B");
    bad("cutoffs", "5,,10", "--cutoffs: expected a list of positive integers");
    bad("gpus", "", "--gpus: expected all");
    bad("device", "tpu", "--device: unknown device 'tpu'");
    bad("no-such-option", "1", "unknown option 'no-such-option'");
    bad("metric", NULL, "option '--metric' needs a value");
    bad("header", "yes", "option '--header' takes no value");
    /* every option with a value: a value no parser takes is refused naming the option, or is a name
     * (files, patterns, the output folder) taken as it is */
    for (size_t i = 0; rk_jobopt_at(i) != NULL; i++) {
        const rk_jobopt *r = rk_jobopt_at(i);
        if (!r->has_value) continue;
        rk_job_opts o;
        rk_job_opts_default(&o);
        rk_error err;
        rk_error_clear(&err);
        char shown[64];
        snprintf(shown, sizeof shown, strcmp(r->name, "k") == 0 ? "-k" : "--%s", r->name);
        if (rk_jobopt_set(&o, r->name, "?x?", &err) != RK_OK) {
            if (strstr(err.msg, shown) == NULL) fprintf(stderr, "%s: '%s'\n", r->name, err.msg);
            CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, shown));
        }
        /* an empty value is refused by every option, files included */
        rk_job_opts_default(&o);
        CU_ASSERT_EQUAL(rk_jobopt_set(&o, r->name, "", &err), RK_E_ARG);
    }
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"the table", test_table},
        {"good values into the options", test_values},
        {"bad values named as the command line names them", test_bad_values},
        {NULL, NULL},
    };
    return rk_test_main("jobopt", cases);
}
