/* synth_model.h — recknn-synth's model: the constants, the random streams and
 * the users' counts, the items' popularity, biases and factors, shared by all
 * threads (read-only while generating).  Split from recknn-synth.c. */
#ifndef SYNTH_MODEL_H
#define SYNTH_MODEL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

enum { SY_EXIT_OK = 0, SY_EXIT_USAGE = 2, SY_EXIT_IO = 4, SY_EXIT_RUNTIME = 5 };
enum sy_format { SY_FMT_MOVIELENS, SY_FMT_TSV, SY_FMT_DAT };

#define SY_DIM 8                    /* latent factors */
#define SY_MU 3.53                  /* centre before the skew */
#define SY_SKEW 0.10                /* v = mu + z - SKEW z^2 */
#define SY_USER_BIAS_SD 0.38
#define SY_ITEM_BIAS_SD 0.40
#define SY_ITEM_BIAS_POP 0.08       /* popular items are rated a little higher */
#define SY_USER_SCALE_SD 0.25
#define SY_INTER_SD 0.55            /* sd of the factor term */
#define SY_NOISE_SD 0.62
#define SY_WHOLE_MAX 0.30           /* per-user share of whole stars after 2003 ~ U(0, 0.3) */
#define SY_ACTIVITY_SD 1.05         /* lognormal sd of user activity */
#define SY_POP_SD 3.20              /* default lognormal sd of item popularity (--popularity-sd), */
#define SY_POP_CAP 5653.0           /* softly capped at this weight (e^(3.2*2.7)): w / (1 + w / CAP) */
#define SY_POP_SD_MAX 8.0           /* beyond this exp() of a normal deviate nears overflow */
#define SY_MIN_PER_USER 20
#define SY_T_BEGIN 789652009.0      /* 1995-01-09, first rating of ML-20M */
#define SY_T_END 1427760000.0       /* 2015-03-31 */
#define SY_HALF_STAR_EPOCH 1045526400u /* 2003-02-18 */
#define SY_SPAN_MEDIAN 172800.0     /* median rating span of a user: 2 days */
#define SY_SPAN_LOG_SD 2.5
#define SY_BLOCK_RATINGS (1u << 17) /* ratings per parallel block (output order unit) */
#define SY_MAX_USERS 2000000000u
#define SY_MAX_ITEMS 100000000u
#define SY_MAX_LINE 64
#define SY_STREAM_ITEMS UINT64_C(0xA5A5000000000001)
#define SY_STREAM_USERS UINT64_C(0xA5A5000000000002)
#define SY_STREAM_COVER UINT64_C(0xA5A5000000000003)
#define SY_SALT_SPLIT UINT64_C(0x5EED5F11757A1700)
#define SY_SALT_ITEM_COMM UINT64_C(0xC0AA11C0AA11C001) /* --communities: item i's community */
#define SY_SALT_USER_COMM UINT64_C(0xC0AA11C0AA11C002) /* --communities: user u's community */
#define SY_AFFINITY 0.8             /* default --affinity */
#define SY_MAX_COMMUNITIES 100000000u

/* ---- random numbers: splitmix64 seeding, xoshiro256** streams ---- */
typedef struct { uint64_t s[4]; } sy_rng;

static inline uint64_t sy_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static inline void sy_rng_seed(sy_rng *r, uint64_t seed, uint64_t stream)
{
    uint64_t x = sy_mix64(seed + UINT64_C(0x9E3779B97F4A7C15)) ^ sy_mix64(stream * UINT64_C(0xD1B54A32D192ED03) + 1);
    for (int i = 0; i < 4; i++) {
        x += UINT64_C(0x9E3779B97F4A7C15);
        r->s[i] = sy_mix64(x);
    }
}

static inline uint64_t sy_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t sy_next(sy_rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = sy_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
    s[2] ^= t; s[3] = sy_rotl(s[3], 45);
    return out;
}

/* Uniform in [0, 1). */
static inline double sy_unif(sy_rng *r) { return (double)(sy_next(r) >> 11) * 0x1.0p-53; }
/* Uniform in (0, 1]. */
static inline double sy_unif_pos(sy_rng *r) { return (double)((sy_next(r) >> 11) + 1) * 0x1.0p-53; }
/* Uniform integer in [0, n), n < 2^32 (multiply-shift; the bias is below 2^-32). */
static inline uint32_t sy_below(sy_rng *r, uint32_t n) { return (uint32_t)(((sy_next(r) >> 32) * n) >> 32); }

static inline double sy_normal(sy_rng *r)
{
    double u = sy_unif_pos(r), v = sy_unif(r);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* Cheap approximately normal deviate (Irwin-Hall of four 16-bit uniforms), for per-rating noise. */
static inline double sy_normal_fast(sy_rng *r)
{
    uint64_t x = sy_next(r);
    double s = (double)((x & 0xFFFF) + ((x >> 16) & 0xFFFF) + ((x >> 32) & 0xFFFF) + (x >> 48));
    return (s * (1.0 / 65536.0) - 2.0) * 1.7320508075688772;
}

/* ---- the model shared by all threads (read-only while generating) ---- */
typedef struct {
    uint32_t n_users, n_items;
    uint64_t n_ratings, seed;
    double test_fraction;   /* < 0: no test split */
    double pop_sd, pop_cap; /* item popularity: lognormal sd and soft cap */
    enum sy_format format;
    uint32_t *count;        /* ratings of user id u+1 */
    uint32_t max_count;
    uint64_t *forced_off;   /* n_users+1: items forced on each user (coverage) */
    uint32_t *forced;
    uint64_t *item_id;      /* raw ids, increasing with the internal index */
    float *item_bias, *item_fac;
    double *weight;         /* popularity */
    uint32_t *alias_prob, *alias_idx;
    uint32_t n_blocks;
    uint32_t *block_start;  /* n_blocks+1 users (0-based) */
    double sum_sq;          /* sum over users of count^2: the co-rating work of item-item k-NN */
    /* --communities C (0: none, and nothing below is allocated or drawn): user u and item i
     * belong to sy_community(seed, salt, id, C); a user's draw comes from their community's
     * items with probability affinity, through that community's alias table */
    uint32_t n_comm;
    double affinity;
    uint32_t *comm_off;     /* n_comm+1: community c's items are comm_items[comm_off[c]..comm_off[c+1]) */
    uint32_t *comm_items;   /* n_items, by community, ascending index within one */
    uint32_t *comm_prob, *comm_alias; /* n_items: alias tables per community (alias: local position) */
} sy_model;

/* calloc-like with an overflow check; NULL on failure. */
void *sy_alloc(size_t n, size_t size);
/* the alias table of the popularity weights */
int sy_build_alias(sy_model *m);
/* items, user counts, the cover of every item, the parallel blocks: 0 or -1 (no memory) */
int sy_make_items(sy_model *m);
int sy_make_counts(sy_model *m);
int sy_make_cover(sy_model *m);
int sy_make_blocks(sy_model *m);
/* --communities: the items of every community and their alias tables: 0 or -1 (no memory) */
int sy_make_communities(sy_model *m);
void sy_model_free(sy_model *m);

static inline uint32_t sy_alias_draw(const sy_model *m, sy_rng *r)
{
    uint64_t x = sy_next(r);
    uint32_t j = (uint32_t)(((x >> 32) * m->n_items) >> 32);
    return (uint32_t)x < m->alias_prob[j] ? j : m->alias_idx[j];
}

/* The community of a user or an item (salt tells which), uniform over [0, C). */
static inline uint32_t sy_community(uint64_t seed, uint64_t salt, uint64_t id, uint32_t n_comm)
{
    return (uint32_t)(((sy_mix64(sy_mix64(seed ^ salt) + id) >> 32) * n_comm) >> 32);
}

/* A draw from community c's items by popularity (c must have items). */
static inline uint32_t sy_comm_draw(const sy_model *m, sy_rng *r, uint32_t c)
{
    uint32_t lo = m->comm_off[c], n = m->comm_off[c + 1] - lo;
    uint64_t x = sy_next(r);
    uint32_t j = (uint32_t)(((x >> 32) * n) >> 32);
    return m->comm_items[lo + ((uint32_t)x < m->comm_prob[lo + j] ? j : m->comm_alias[lo + j])];
}

#endif /* SYNTH_MODEL_H */
