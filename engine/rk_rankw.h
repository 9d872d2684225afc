/* rk_rankw.h — the ranking model of top-N (prefix rk_rankw_; CONTRACT.md §5b).
 *
 * Rating prediction and top-N ranking want different similarities: a
 * correlation over co-raters (--metric pearson) predicts ratings well and
 * ranks poorly, because it ignores how many users two items share.  The
 * ranking model is a second set of neighbour lists, made by the same
 * engines over a transformed copy of the training matrix, from which top-N
 * is summed as in §5:
 *
 *   weighted-cosine  x_ui = w(r_ui) (none, TF-IDF or BM25 weighting, over
 *                    ratings or over interactions), sim(i, j) =
 *                    x_i·x_j / (‖x_i‖^{2α} ‖x_j‖^{2(1−α)} + λ)
 *   rp3beta          the three-step random walk user→item→user→item over
 *                    interactions with each transition probability raised to
 *                    α, and the arrival item's popularity to the power −β:
 *                    sim(i, j) = |U_i|^−α |U_j|^−β Σ_{u ∈ U_ij} |I_u|^−α
 *
 * then the list of each item (its k best, §3's order) may have its
 * similarities raised to the locality exponent q and be normalised to sum 1.
 *
 * Exactness: the transformed values are rounded once, on the host, to
 * integers x_q = round(x · 2^e) with the largest power of two that keeps
 * every dot product below 2^52 and every value below 2^24.  The engines
 * then sum exact integers (in double, any order gives the same sum), so the
 * CPU and the GPU compute the same lists bit for bit.
 */
#ifndef RK_RANKW_H
#define RK_RANKW_H

#include <stddef.h>
#include <stdint.h>
#include "rk_status.h"
#include "rk_model.h"
#include "rk_knn.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rk_rankw_weighting { RK_RANKW_NONE = 0, RK_RANKW_TFIDF, RK_RANKW_BM25 } rk_rankw_weighting;

typedef struct rk_rankw_opts {
    rk_metric sim;        /* RK_METRIC_WEIGHTED_COSINE, RK_METRIC_RP3BETA; RK_METRIC_COUNT: no
                             ranking model (top-N from the --metric lists, §5) */
    rk_rankw_weighting weighting; /* weighted-cosine only */
    int ratings;          /* weighted-cosine: 1 weights the ratings, 0 the interactions (r = 1) */
    double bm25_k1, bm25_b;
    double alpha;         /* weighted-cosine asymmetry (0.5: cosine); rp3beta walk exponent */
    double beta;          /* rp3beta popularity penalty */
    double shrink;        /* weighted-cosine denominator term λ, in the units of x·x */
    int32_t k;            /* list length, >= 1 */
    double q;             /* locality exponent > 0 on the list similarities (1: none) */
    int normalize;        /* 1: each list sums to 1 (after q) */
} rk_rankw_opts;

/*! rk_rankw_opts_default() : the defaults of the nightly job (CONTRACT.md
 *  §5b, measured in EVALUATION.md). */
void rk_rankw_opts_default(rk_rankw_opts *o);

/*! rk_rankw_on() : 1 when o asks for a ranking model (o->sim is a ranking
 *  row), 0 for top-N from the --metric lists. */
int rk_rankw_on(const rk_rankw_opts *o);

/*! rk_rankw_parse_sim() : "lists", "weighted-cosine" (or "cosine"),
 *  "rp3beta" into *out.  @return RK_OK or RK_E_ARG. */
rk_status rk_rankw_parse_sim(const char *name, rk_metric *out);
/*! rk_rankw_sim_name() : the name of a ranking similarity ("lists" for none). */
const char *rk_rankw_sim_name(rk_metric m);
/*! rk_rankw_parse_weighting() : "none", "tfidf" (or "idf"), "bm25". */
rk_status rk_rankw_parse_weighting(const char *name, rk_rankw_weighting *out);
const char *rk_rankw_weighting_name(rk_rankw_weighting w);

/*! rk_rankw_check() : the options' ranges (k >= 1, 0 <= α <= 1 for
 *  weighted-cosine, α > 0 and β >= 0 for rp3beta, λ >= 0, q > 0, BM25
 *  k1 >= 0 and 0 <= b <= 1), with a message.  @return RK_OK or RK_E_ARG. */
rk_status rk_rankw_check(const rk_rankw_opts *o, rk_error *err);

/* The transformed training matrix: index arrays shared with the model it
 * was made from (which must outlive it), values its own. */
typedef struct rk_rankw_model {
    rk_model model;       /* the engines' input */
    double quantum;       /* 2^e: x_q = round(x · quantum) */
    double value_max;     /* the largest transformed value before rounding */
    float *row_val;       /* where the values are their user's (rp3beta): each user's value
                             (model.row_val until rk_rankw_expand) */
} rk_rankw_model;

/*! rk_rankw_build() : the transformed copy of m's training matrix for o.
 *  @return RK_OK, RK_E_ARG (o not a ranking model), RK_E_NOMEM. */
rk_status rk_rankw_build(const rk_model *m, const rk_rankw_opts *o, rk_rankw_model *out, rk_error *err);

/*! rk_rankw_build_rows() : rk_rankw_build, but where every value is its
 *  user's (rp3beta) the values stay one a user: out->model.row_val, and its
 *  by_user.val and by_item.val NULL.  The GPU engine expands them on the
 *  device (400 MB neither built nor uploaded at Netflix size); a host
 *  engine needs rk_rankw_expand first.  Other models are rk_rankw_build's.
 *  @return as rk_rankw_build. */
rk_status rk_rankw_build_rows(const rk_model *m, const rk_rankw_opts *o, rk_rankw_model *out, rk_error *err);

/*! rk_rankw_expand() : the values of an rk_rankw_build_rows model filled as
 *  rk_rankw_build fills them (the same floats; row_val then no longer set
 *  in the model).  Nothing to do: RK_OK.  @return RK_OK or RK_E_NOMEM. */
rk_status rk_rankw_expand(rk_rankw_model *t, rk_error *err);

/*! rk_rankw_knn_opts() : the engine options of the ranking lists: metric,
 *  k, α, β, λ and the unit of Σxy in the transformed model's units; every
 *  other field from base (threads, progress). */
void rk_rankw_knn_opts(const rk_rankw_opts *o, const rk_rankw_model *t, const rk_knn_opts *base, rk_knn_opts *out);

/*! rk_rankw_shape() : the locality exponent and the normalisation of every
 *  list, in place (the order of a list never changes: both are monotone).
 *  A no-op for q = 1 without normalisation. */
void rk_rankw_shape(const rk_rankw_opts *o, rk_lists *l);

/*! rk_rankw_shapes() : 1 when rk_rankw_shape changes lists (q != 1 or
 *  normalisation), so that an engine cannot rank top-N from its raw lists. */
int rk_rankw_shapes(const rk_rankw_opts *o);

/*! rk_rankw_restrict() : a model of m's training ratings without the rows
 *  of the users u with drop[u] != 0 (held-out users, whose fold-in ratings
 *  must not make the similarities; the item indices stay), no baselines.
 *  @return RK_OK, RK_E_EMPTY (nothing left), RK_E_NOMEM. */
rk_status rk_rankw_restrict(const rk_model *m, const uint8_t *drop, rk_model *out, rk_error *err);

/*! rk_rankw_label() : the configuration in words, as its options
 *  ("--rank rp3beta --alpha 0.75 --beta 0.3 --rank-k 100 ..."), into buf. */
void rk_rankw_label(const rk_rankw_opts *o, char *buf, size_t cap);

/*! rk_rankw_free() : the values of a transformed model (not the shared
 *  index arrays). */
void rk_rankw_free(rk_rankw_model *t);

#ifdef __cplusplus
}
#endif
#endif /* RK_RANKW_H */
