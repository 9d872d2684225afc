/* rk_api_internal.h — what api/'s files share: the handles' contents. */
#ifndef RK_API_INTERNAL_H
#define RK_API_INTERNAL_H

#include "recknn.h"
#include "rk_jobopt.h"

#define MAX_SET 256 /* option values kept by one options handle */

struct recknn_options {
    rk_job_opts job;
    char *val[MAX_SET]; /* copies of the values given: job's strings point into them */
    const char *name[MAX_SET];
    int n_set;
};

struct recknn_data {
    int32_t n_users, n_items;
    rk_triples t;
};

struct recknn_model {
    rk_knn_opts ko;        /* the engine's options: the metric's lists and predictions */
    rk_model m;
    rk_lists lists;        /* the metric's */
    rk_lists rl;           /* the ranking model's (rk_rankw_on), top-N's lists */
    int ranked;
    rk_backend_seam seam;
    int seam_started;
    int64_t served;        /* users with a rating */
    /* what the evaluation reads of the options */
    int implicit;
    rk_dup_policy duplicates;
    double relevance;
};

#endif /* RK_API_INTERNAL_H */
