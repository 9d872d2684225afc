/* rk_plan.h — how much host memory a run needs, and a plan that fits a
 * budget (prefix rk_plan_).
 *
 * --memory-limit GB: before the data load the job checks the load's need
 * against the budget from the input's size (rk_plan_load_bytes); after it,
 * with the counts known, rk_plan_fit estimates every stage that follows and
 * shrinks what can shrink — the CPU threads, each of which holds rows over
 * the whole catalogue — until the run fits, or says what it would need.
 * The figures are estimates of the allocations the stages make (the
 * arrays' sizes, not the allocator's overhead), checked against measured
 * peak RSS in BENCHMARKS.md; the GPU's memory is planned by the GPU engine
 * itself from --gpu-memory.
 */
#ifndef RK_PLAN_H
#define RK_PLAN_H

#include <stdint.h>
#include "rk_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes the data stage holds at its peak per byte of input (measured: 1.84
 * at 3M ratings of 26 bytes a line, random order; a margin on top). */
#define RK_PLAN_LOAD_PER_INPUT_BYTE 2.0

typedef struct rk_plan_in {
    int64_t users, items;     /* catalogue after the load */
    int64_t ratings;          /* every rating loaded (training + test) */
    int64_t test;             /* test ratings of one fold (or of --test / --holdout) */
    int32_t k;                /* list length */
    int32_t top_n;            /* 0: none */
    int32_t folds;            /* 0 or K */
    int with_time;            /* timestamps kept */
    int threads;              /* CPU threads wanted, >= 1 */
} rk_plan_in;

typedef struct rk_plan_host {
    double data;              /* the loaded ratings kept for the run (and a fold's copies) */
    double model;             /* both orientations, means, baselines */
    double engine;            /* the engine's per-rating working arrays */
    double lists;             /* neighbour lists */
    double per_thread;        /* one CPU thread's rows over the catalogue */
    double topn;              /* top-N shared arrays and batches */
    double predictions;       /* answers to the test pairs */
    double total;             /* with `threads` threads */
    int threads;              /* threads of the plan */
} rk_plan_host;

/*! rk_plan_bytes_str() : b bytes as "12.3 MB" or "4.56 GB" in buf[32]; @return buf. */
const char *rk_plan_bytes_str(double b, char buf[32]);

/*! rk_plan_load_bytes() : the data stage's peak for input_bytes of rating files. */
double rk_plan_load_bytes(int64_t input_bytes);

/*! rk_plan_host_estimate() : the stages' needs with in->threads threads. */
void rk_plan_host_estimate(const rk_plan_in *in, rk_plan_host *out);

/*! rk_plan_fit() : the plan with the most threads (at most in->threads) whose
 *  total is within limit_bytes.  @return RK_OK (*out is that plan), or
 *  RK_E_NOMEM when even one thread does not fit (*out is the one-thread plan;
 *  err says how much the run needs, part by part, and which options help). */
rk_status rk_plan_fit(const rk_plan_in *in, double limit_bytes, rk_plan_host *out, rk_error *err);

#ifdef __cplusplus
}
#endif
#endif /* RK_PLAN_H */
