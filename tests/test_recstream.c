/* rk_recset / rk_recroute: a request cut into chunks (empty ones too), dealt
 * out among producer threads that hand on batches of random sizes (pieces
 * of one batch land in several chunks), is written in request order: every
 * position once, consecutive, each user's list the one its producer made;
 * a producer that stops and resumes from where it was hands on each user
 * once; a producer that fails stops the reader without a hang; a batch
 * before its chunk or past its producer's last is refused. */
#include "rk_recstream.h"
#include "test_util.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { N = 3 }; /* list capacity */

/* The list of the user at a position: its length and cells from the user id. */
static int32_t len_of(int32_t user)
{
    return user % (N + 1);
}

static int32_t item_of(int32_t user, int32_t e)
{
    return user * 7 + e;
}

typedef struct producer {
    rk_recroute route;
    const int32_t *request;
    int32_t *users;      /* its own request */
    int64_t n_users;
    int stop_at;         /* > 0: hand on this many users, then resume from there */
    int fail_at;         /* > 0: close as failed after this many users */
    unsigned long long seed;
    rk_status s;
} producer;

/* Its users [from, to) of its own request as random batches (0 users too). */
static rk_status hand_on(producer *p, int64_t from, int64_t to)
{
    rk_recroute_resume(&p->route, from);
    int32_t len[64], item[64 * N];
    uint64_t score[64 * N];
    for (int64_t at = from; at < to;) {
        int64_t c = (int64_t)(rk_test_rand(&p->seed) % 9); /* 0 to 8 users */
        if (c > to - at) c = to - at;
        for (int64_t x = 0; x < c; x++) {
            const int32_t u = p->users[at + x];
            len[x] = len_of(u);
            for (int32_t e = 0; e < N; e++) {
                item[x * N + e] = item_of(u, e);
                score[x * N + e] = (uint64_t)u * 1000u + (uint64_t)e;
            }
        }
        const rk_topn_batch b = {at - from, c, p->users + at, N, len, item, score};
        RK_FORWARD(rk_recroute_sink(&p->route, &b, NULL));
        at += c;
    }
    return RK_OK;
}

static void *produce(void *arg)
{
    producer *p = arg;
    const int64_t n = p->n_users;
    int64_t cut = n;
    if (p->fail_at > 0 && p->fail_at < n) cut = p->fail_at;
    else if (p->stop_at > 0 && p->stop_at < n) cut = p->stop_at;
    p->s = hand_on(p, 0, cut);
    if (p->s == RK_OK && p->fail_at > 0 && cut < n) p->s = RK_E_GPU;
    if (p->s == RK_OK && cut < n) p->s = hand_on(p, p->route.done, n); /* taken up where it stopped */
    rk_recroute_close(&p->route, p->s == RK_OK);
    return NULL;
}

/* The reader's checks: positions consecutive, users those of the request, lists intact. */
typedef struct reader {
    const int32_t *request;
    int64_t users, misplaced, wrong;
} reader;

static rk_status read_sink(void *ud, const rk_topn_batch *b, rk_error *err)
{
    (void)err;
    reader *r = ud;
    r->misplaced += b->first != r->users;
    for (int64_t x = 0; x < b->count; x++) {
        const int32_t u = b->user[x];
        int bad = u != r->request[b->first + x] || b->len[x] != len_of(u);
        for (int32_t e = 0; !bad && e < b->len[x]; e++)
            bad = b->item[x * b->n + e] != item_of(u, e) || b->score[x * b->n + e] != (uint64_t)u * 1000u + (uint64_t)e;
        r->wrong += bad;
    }
    r->users += b->count;
    return RK_OK;
}

/* One case: n users, P producers of C chunks each at random cuts; stop/fail: producer 0's. */
static void one_case(int64_t n, int P, int C, int stop, int fail, unsigned long long seed)
{
    rk_recset set;
    CU_ASSERT_FATAL(rk_recset_init(&set, P * C, NULL) == RK_OK);
    int32_t *request = malloc((size_t)(n + 1) * sizeof *request);
    CU_ASSERT_FATAL(request != NULL);
    for (int64_t t = 0; t < n; t++) request[t] = (int32_t)(3 * t + 1);
    /* random non-decreasing cuts: empty chunks where two meet */
    set.at[0] = 0;
    for (int c = 1; c < set.n; c++) set.at[c] = (int64_t)(rk_test_rand(&seed) % (unsigned long long)(n + 1));
    set.at[set.n] = n;
    for (int c = 1; c < set.n; c++) /* insertion sort */
        for (int d = c; d > 1 && set.at[d - 1] > set.at[d]; d--) {
            const int64_t x = set.at[d];
            set.at[d] = set.at[d - 1];
            set.at[d - 1] = x;
        }
    producer p[8];
    pthread_t th[8];
    int64_t total = 0;
    for (int w = 0; w < P; w++) {
        memset(&p[w], 0, sizeof p[w]);
        rk_recroute_init(&p[w].route, &set, w, P);
        p[w].n_users = rk_recroute_count(&p[w].route);
        p[w].users = malloc((size_t)(p[w].n_users + 1) * sizeof *p[w].users);
        CU_ASSERT_FATAL(p[w].users != NULL);
        rk_recroute_users(&p[w].route, request, p[w].users);
        p[w].request = request;
        p[w].seed = seed + (unsigned long long)w * 977;
        if (w == 0) p[w].stop_at = stop, p[w].fail_at = fail;
        total += p[w].n_users;
    }
    CU_ASSERT_EQUAL(total, n);
    for (int w = 0; w < P; w++) CU_ASSERT_FATAL(pthread_create(&th[w], NULL, produce, &p[w]) == 0);
    reader r = {request, 0, 0, 0};
    CU_ASSERT_EQUAL(rk_recset_drain(&set, read_sink, &r, NULL), RK_OK);
    for (int w = 0; w < P; w++) pthread_join(th[w], NULL);
    CU_ASSERT_EQUAL(r.misplaced, 0);
    CU_ASSERT_EQUAL(r.wrong, 0);
    if (fail > 0 && fail < p[0].n_users) {
        CU_ASSERT_EQUAL(p[0].s, RK_E_GPU);
        CU_ASSERT(r.users < n); /* the reader stopped: producer 0's rest is missing */
    } else {
        for (int w = 0; w < P; w++) CU_ASSERT_EQUAL(p[w].s, RK_OK);
        CU_ASSERT_EQUAL(r.users, n);
        /* the streams hold every record once: replayed in chunk order, the whole request */
        reader again = {request, 0, 0, 0};
        for (int c = 0; c < set.n; c++)
            CU_ASSERT_EQUAL(rk_recbuf_replay(set.s[c].buf.data, set.s[c].buf.bytes, 0, read_sink, &again, NULL), RK_OK);
        CU_ASSERT_EQUAL(again.users, n);
        CU_ASSERT_EQUAL(again.misplaced + again.wrong, 0);
    }
    for (int w = 0; w < P; w++) free(p[w].users);
    free(request);
    rk_recset_free(&set);
}

static void test_order(void)
{
    unsigned long long s = 42;
    for (int t = 0; t < 40; t++) {
        const int64_t n = (int64_t)(rk_test_rand(&s) % 400);
        const int P = 1 + (int)(rk_test_rand(&s) % 4), C = 1 + (int)(rk_test_rand(&s) % 16);
        one_case(n, P, C, 0, 0, 1000 + (unsigned long long)t);
    }
    one_case(0, 2, 16, 0, 0, 7);   /* no users: every chunk empty */
    one_case(1, 8, 16, 0, 0, 8);   /* one user, 128 chunks */
    one_case(5000, 2, 16, 0, 0, 9);
}

static void test_resume(void)
{
    for (int t = 0; t < 20; t++) one_case(300, 2 + t % 3, 8, 1 + 7 * t, 0, 2000 + (unsigned long long)t);
}

static void test_failure(void)
{
    for (int t = 0; t < 20; t++) one_case(300, 2 + t % 3, 8, 0, 1 + 5 * t, 3000 + (unsigned long long)t);
}

static void test_refused(void)
{
    rk_recset set;
    CU_ASSERT_FATAL(rk_recset_init(&set, 4, NULL) == RK_OK);
    const int64_t at[5] = {0, 2, 4, 6, 8};
    memcpy(set.at, at, sizeof at);
    rk_recroute r;
    rk_recroute_init(&r, &set, 0, 2); /* chunks 0 and 2: its positions 0-3 */
    int32_t user[8] = {1, 2, 3, 4, 5, 6, 7, 8}, len[8] = {0};
    int32_t item[8 * N] = {0};
    uint64_t score[8 * N] = {0};
    rk_error err;
    rk_topn_batch b = {0, 3, user, N, len, item, score};
    CU_ASSERT_EQUAL(rk_recroute_sink(&r, &b, &err), RK_OK); /* chunk 0 full, a user into chunk 2 */
    CU_ASSERT_EQUAL(set.s[0].closed, 1);
    CU_ASSERT_EQUAL(set.s[2].closed, 0);
    b.first = 0;
    b.count = 1;
    CU_ASSERT_EQUAL(rk_recroute_sink(&r, &b, &err), RK_E_INTERNAL); /* before chunk 2 */
    b.first = 3;
    CU_ASSERT_EQUAL(rk_recroute_sink(&r, &b, &err), RK_OK); /* chunk 2 full: closed at once */
    CU_ASSERT_EQUAL(set.s[2].closed, 1);
    b.first = 4;
    CU_ASSERT_EQUAL(rk_recroute_sink(&r, &b, &err), RK_E_INTERNAL); /* past its last chunk */
    CU_ASSERT(strstr(err.msg, "past") != NULL);
    rk_recroute_close(&r, 1);
    CU_ASSERT_EQUAL(set.s[1].closed, 0); /* the other producer's */
    CU_ASSERT_EQUAL(set.failed, 0);
    rk_recroute_close(&r, 0);
    CU_ASSERT_EQUAL(set.failed, 1);
    rk_recset_free(&set);
    CU_ASSERT_EQUAL(rk_recset_init(&set, 0, &err), RK_E_INTERNAL);
}

int main(void)
{
    static const rk_test_case cases[] = {
        {"random chunks and batches from 1-4 producers: the request in order", test_order},
        {"a producer that stops and resumes: each user once", test_resume},
        {"a producer that fails: the reader stops", test_failure},
        {"batches before or past a producer's chunks refused", test_refused},
        {NULL, NULL},
    };
    return rk_test_main("recstream", cases);
}
