/* The most-popular baseline of a fold (job/rk_job_base.c): run in a thread
 * beside the engine stage or after it, the same ranking metrics bit for
 * bit, the same failure; and the thread is started only where there are
 * cores to spare. */
#include "rk_job_internal.h"
#include "test_util.h"

#include <string.h>

/* A random training model and a test set over nu x ni. */
static void make(int32_t nu, int32_t ni, rk_model *m, rk_triples *test, unsigned long long seed)
{
    rk_triples tr;
    CU_ASSERT_FATAL(rk_triples_alloc(&tr, (int64_t)nu * 40, 0, NULL) == RK_OK);
    CU_ASSERT_FATAL(rk_triples_alloc(test, (int64_t)nu * 10, 0, NULL) == RK_OK);
    tr.n = test->n = 0;
    for (int32_t u = 0; u < nu; u++)
        for (int32_t i = 0; i < ni; i++) {
            const double x = rk_test_uniform(&seed);
            const int popular = i < ni / 10;
            if (x > (popular ? 0.3 : 0.03)) continue;
            rk_triples *t = rk_test_uniform(&seed) < 0.2 ? test : &tr;
            if (t->n == (t == test ? (int64_t)nu * 10 : (int64_t)nu * 40)) continue;
            t->user[t->n] = u;
            t->item[t->n] = i;
            t->rating[t->n] = (float)(1 + rk_test_rand(&seed) % 5);
            t->n++;
        }
    CU_ASSERT_FATAL(rk_model_build(m, &tr, nu, ni, 0, 0.0, 0.0, 0, NULL) == RK_OK);
    rk_triples_free(&tr);
}

static void base_of(rk_job_base *b, const rk_model *m, const rk_triples *test, int32_t top_n)
{
    static const int32_t cut[] = {1, 5, 10};
    memset(b, 0, sizeof *b);
    b->m = m;
    b->test = test;
    b->n_users = m->by_user.n_rows;
    b->n_items = m->by_item.n_rows;
    b->top_n = top_n;
    b->relevance = 4.0;
    b->cutoffs = cut;
    b->n_cutoffs = top_n >= 10 ? 3 : 0;
    b->to.n = top_n;
    b->to.threads = 8; /* more than the thread beside the engine takes: it starts */
}

static void test_beside_or_after(void)
{
    rk_model m;
    rk_triples test;
    make(3000, 400, &m, &test, 9);
    CU_ASSERT_FATAL(test.n > 1000);
    rk_job_base a, b;
    rk_error err;
    base_of(&a, &m, &test, 10);
    base_of(&b, &m, &test, 10);
    rk_job_base_start(&a, 0);
    rk_job_base_start(&b, 1);
    CU_ASSERT_EQUAL(a.started, 0);
    CU_ASSERT_EQUAL(b.started, 1);
    CU_ASSERT_EQUAL_FATAL(rk_job_base_finish(&b, &err), RK_OK);
    CU_ASSERT_EQUAL_FATAL(rk_job_base_finish(&a, &err), RK_OK);
    rk_rank_result ra, rb;
    rk_rank_finish(a.rank, &ra);
    rk_rank_finish(b.rank, &rb);
    CU_ASSERT(ra.users > 1000 && ra.lists == 3000 && ra.precision > 0.0);
    CU_ASSERT_EQUAL(rb.lists, ra.lists);
    CU_ASSERT_EQUAL(rb.rows, ra.rows);
    CU_ASSERT_EQUAL(rb.n_cutoffs, ra.n_cutoffs);
    for (int c = 0; c < ra.n_cutoffs; c++) CU_ASSERT(memcmp(&ra.at[c], &rb.at[c], sizeof ra.at[c]) == 0);
    CU_ASSERT(ra.gini == rb.gini && ra.coverage == rb.coverage);
    rk_rank_free(a.rank);
    rk_rank_free(b.rank);

    /* a failure (no place in a list) is the same in both, with its message */
    rk_error ea, eb;
    base_of(&a, &m, &test, 0);
    base_of(&b, &m, &test, 0);
    rk_job_base_start(&a, 0);
    rk_job_base_start(&b, 1);
    CU_ASSERT_EQUAL(rk_job_base_finish(&a, &ea), RK_E_ARG);
    CU_ASSERT_EQUAL(rk_job_base_finish(&b, &eb), RK_E_ARG);
    CU_ASSERT_STRING_EQUAL(ea.msg, eb.msg);
    rk_rank_free(a.rank);
    rk_rank_free(b.rank);

    /* few cores: it runs after the engine, not beside */
    base_of(&b, &m, &test, 10);
    b.to.threads = 2;
    rk_job_base_start(&b, 1);
    CU_ASSERT_EQUAL(b.started, 0);
    CU_ASSERT_EQUAL(rk_job_base_finish(&b, &err), RK_OK);
    CU_ASSERT_PTR_NOT_NULL(b.rank);
    rk_rank_free(b.rank);
    rk_triples_free(&test);
    rk_model_free(&m);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"most-popular beside the engine or after it: the same metrics", test_beside_or_after},
        {NULL, NULL},
    };
    return rk_test_main("job baseline", cases);
}
