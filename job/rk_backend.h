/* rk_backend.h — the engine seam (prefix rk_backend_).
 *
 * One table of engine backends — the CPU engines of engine/ and the CUDA
 * engine of gpu/ — each with what it supports and its entry points (lists
 * and predictions, top-N, user-mode top-N, the random ball cover), and the
 * one place where the run's device is chosen, warmed up while the data load,
 * and given up for the CPU when the GPU fails under --device auto.  The
 * exact, shared-out, approximate and saved-model paths of the job all run
 * their engines through it; a new engine route is a row here.
 *
 * The seam takes its own small options (rk_backend_opts), not the job's.
 */
#ifndef RK_BACKEND_H
#define RK_BACKEND_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "rk_status.h"
#include "rk_note.h"
#include "rk_knn.h"
#include "rk_rankw.h"
#include "rk_topn.h"
#include "rk_rbc.h"
#include "rk_gpu.h"
#include "rk_gpus.h"
#include "rk_data.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rk_device { RK_DEVICE_AUTO = 0, RK_DEVICE_CPU, RK_DEVICE_GPU } rk_device;

/*! rk_device_parse() : "auto", "cpu", "gpu". @return RK_OK or RK_E_ARG. */
rk_status rk_device_parse(const char *name, rk_device *out);
const char *rk_device_name(rk_device d);

typedef enum rk_backend_id { RK_BACKEND_CPU = 0, RK_BACKEND_CUDA, RK_BACKENDS } rk_backend_id;

/* One engine backend.  g carries the device options of a call (ordinal,
 * memory cap, routes); the CPU's entries ignore it.  An entry a backend
 * does not have is NULL. */
typedef struct rk_backend {
    rk_backend_id id;
    const char *name;
    int gpu;                 /* 1: needs a usable GPU, and may fail over to the CPU */
    int32_t max_topn;        /* the largest N of its top-N */
    int fused_topn;          /* 1: knn also ranks top-N while the lists are in its memory */
    /* 1 when it takes these options, else 0 with the reason in why */
    int (*supports)(const rk_knn_opts *ko, char *why, size_t cap);
    rk_status (*knn)(const rk_model *m, const rk_knn_opts *ko, const rk_gpu_opts *g, rk_lists *lists,
                     rk_queries *q, const rk_topn_opts *topn, rk_topn_stats *ts, rk_knn_stats *st, rk_error *err);
    rk_status (*topn)(const rk_model *m, const rk_lists *l, const rk_topn_opts *to, const rk_gpu_opts *g,
                      rk_topn_stats *ts, rk_error *err);
    rk_status (*user_topn)(const rk_model *m, const rk_lists *ul, const rk_topn_opts *to, const rk_gpu_opts *g,
                           rk_topn_stats *ts, rk_error *err);
    rk_status (*rbc)(const rk_model *m, const rk_knn_opts *ko, const rk_rbc_opts *r, const rk_gpu_opts *g,
                     rk_lists *lists, rk_rbc_stats *as, rk_error *err);
} rk_backend;

/*! rk_backend_get() : the row of backend id; NULL outside the table. */
const rk_backend *rk_backend_get(rk_backend_id id);

/* The seam's options. */
typedef struct rk_backend_opts {
    rk_device device;        /* --device */
    int gpus_given;          /* --gpus names devices: none usable is an error, not a fallback */
    rk_gpu_opts gpu;         /* memory cap and routes of every GPU call (device: set by the seam) */
    int exact;               /* 1: the exact engines, whose cost the shape estimate judges */
    /* the CUDA ordinals of this process's parts (ids[RK_GPUS_MAX]); asked in
     * the warm-up thread, since it starts the driver; NULL: device 0 */
    rk_status (*resolve)(void *ud, int32_t *ids, int *n, rk_error *err);
    /* --device auto, exact engines: 0 when the GPU would be much slower for
     * this data's shape, with the estimates in why; NULL: it always pays */
    int (*shape_pays)(void *ud, char *why, size_t cap);
    rk_note_fn note;         /* one-line notes (NULL: none) */
    void *ud;
} rk_backend_opts;

/* The seam of a run: its options, the devices, the warm-up thread and the
 * choice.  Zero it, then rk_backend_start. */
typedef struct rk_backend_seam {
    rk_backend_opts o;
    int32_t devices[RK_GPUS_MAX]; /* the CUDA ordinals of this process's parts */
    int n_devices;
    const rk_backend *chosen;     /* after rk_backend_choose */
    int fell_back;                /* the GPU failed under --device auto: the CPU runs from now on */
    char fell_back_why[RK_ERROR_MSG_CAP];
    pthread_t warm;
    int warming, gpu_ok;
    int warm_done;                /* the warm-up thread has answered (atomic) */
    char gpu_why[256];
    rk_status dev_status;
    rk_error dev_err;
    rk_gpu_rows *rows;            /* the training rows uploaded beside the parse (rk_backend_data_hooks) */
} rk_backend_seam;

/*! rk_backend_start() : keep the options; unless --device cpu, a thread asks
 *  the driver whether a GPU is usable, resolves the devices and starts their
 *  contexts while the data load.  --device gpu fails at once only for what
 *  needs no driver (options the GPU engine does not take).
 *  @return RK_OK or RK_E_GPU. */
rk_status rk_backend_start(rk_backend_seam *s, const rk_backend_opts *o, const rk_knn_opts *ko, rk_error *err);

/*! rk_backend_choose() : wait for the warm-up and choose the backend: the
 *  CPU for --device cpu; the GPU for --device gpu (RK_E_GPU without one);
 *  under auto the GPU when one is usable, takes the options and (exact
 *  engines) the shape pays, else the CPU with a note saying why.
 *  @return RK_OK or RK_E_GPU (--device gpu or --gpus without a GPU, or a
 *  --gpus ordinal that is not there). */
/*! rk_backend_no_gpu_here() : 1 when why (rk_gpu_available's reason) says
 *  the machine has no GPU at all, or the build has no CUDA: --device auto
 *  then runs on the CPU without a note. */
int rk_backend_no_gpu_here(const char *why);

rk_status rk_backend_choose(rk_backend_seam *s, const rk_knn_opts *ko, rk_error *err);

/*! rk_backend_gpu_ready() : @return 1 when the warm-up has answered and a
 *  GPU is usable for this run (not --device cpu, the devices resolved, no
 *  fallback yet), whatever the engine's choice will be; 0 without waiting
 *  while the warm-up still runs.  For work beside the engines that a GPU
 *  speeds up only when it is ready (the data stage's sort: at ML-20M size
 *  the parse ends before the context has started, and waiting for it cost
 *  more than the host's sort, BENCHMARKS.md). */
int rk_backend_gpu_ready(rk_backend_seam *s);

/*! rk_backend_sort_csr() : the data stage's sort of the training ratings
 *  (rk_data_opts.sort_csr; ud: the seam) on the run's first GPU when the
 *  file holds 2^20 ratings or more and the GPU is ready
 *  (rk_backend_gpu_ready): rk_gpu_csr_build, the matrix kept on the device
 *  for the engine calls (the caller forgets it: rk_gpu_forget_csr); else
 *  *taken = 0 and the host sorts. */
rk_status rk_backend_sort_csr(void *ud, const rk_triples *t, const rk_idmap *users, const rk_idmap *items,
                              const uint64_t *leave_out, rk_dup_policy policy, rk_dup_found *found, rk_csr *out,
                              int *taken, rk_error *err);

/*! rk_backend_data_hooks() : the data stage's work on the GPU, unless
 *  --device cpu: its sort (dop->sort_csr: rk_backend_sort_csr) and, for a
 *  run with one model and real ratings, the training rows uploaded while
 *  the loader parses later blocks (dop->load.feed: rk_gpu_rows, on the
 *  run's first GPU once the warm-up has answered; the sort then maps their
 *  raw ids on the device instead of uploading the host's indices).  For
 *  measurements, RECKNN_GPU_SORT=0 leaves the sort to the host and
 *  RECKNN_GPU_ROWS=0 the upload to the sort. */
void rk_backend_data_hooks(rk_backend_seam *s, rk_data_opts *dop);

/*! rk_backend_rows_end() : what became of the upload beside the parse (rep
 *  zeroed when there was none), its thread and device buffers freed. */
void rk_backend_rows_end(rk_backend_seam *s, rk_gpu_rows_report *rep);

/*! rk_backend_current() : the backend that runs now: the chosen one, or
 *  the CPU after a fallback. */
const rk_backend *rk_backend_current(const rk_backend_seam *s);

/*! rk_backend_call_opts() : the device options of a call on the first
 *  device of the run. */
rk_gpu_opts rk_backend_call_opts(const rk_backend_seam *s);

/*! rk_backend_switched_off() : 1 when the environment variable `name` (a
 *  RECKNN_GPU_* switch, for measurements) is "0". */
int rk_backend_switched_off(const char *name);

/*! rk_backend_can_fall_back() : 1 when status st of a GPU call is one the
 *  CPU may redo (RK_E_GPU under --device auto).  Thread-safe. */
int rk_backend_can_fall_back(const rk_backend_seam *s, rk_status st);

/*! rk_backend_fall_back() : after a GPU call failed with st: when the CPU
 *  may redo it, note "WHAT failed (reason): running on the CPU" once, keep
 *  the reason, clear err, make the CPU the current backend and @return 1;
 *  else @return 0 and leave err. */
int rk_backend_fall_back(rk_backend_seam *s, rk_status st, const char *what, rk_error *err);

/*! rk_backend_rbc() : the random ball cover on the current backend (the
 *  first device), redone on the CPU after a GPU failure under auto.
 *  *on_gpu tells which ran.  @return the engine's status. */
rk_status rk_backend_rbc(rk_backend_seam *s, const rk_model *m, const rk_knn_opts *ko, const rk_rbc_opts *r,
                         rk_lists *lists, rk_rbc_stats *as, int *on_gpu, rk_error *err);

/*! rk_backend_lists() : lists only (no queries, no top-N) on the current
 *  backend (its first device), redone on the CPU after a GPU failure under
 *  auto (the note names `what`).  @return the engine's status. */
rk_status rk_backend_lists(rk_backend_seam *s, const rk_model *m, const rk_knn_opts *ko, rk_lists *lists,
                           rk_knn_stats *st, const char *what, rk_error *err);

/*! rk_backend_lists_global() : rk_backend_lists, then under --predict
 *  global the model trained on those lists into *g (the caller frees it,
 *  rk_pmodel_global_free); other modes make the lists alone. */
rk_status rk_backend_lists_global(rk_backend_seam *s, const rk_model *m, const rk_knn_opts *ko, rk_lists *lists,
                                  struct rk_pmodel_global *g, rk_knn_stats *st, const char *what, rk_error *err);

/*! rk_backend_rank_lists() : rk_backend_lists of a ranking model, which may
 *  hold its values a row (rk_rankw_build_rows): the GPU expands them on the
 *  device; a host engine (the CPU's, or the CPU after a GPU failure) gets
 *  them expanded first (rk_rankw_expand). */
rk_status rk_backend_rank_lists(rk_backend_seam *s, rk_rankw_model *t, const rk_knn_opts *ko, rk_lists *lists,
                                rk_knn_stats *st, const char *what, rk_error *err);

/*! rk_backend_topn() : item top-N from lists l on the current backend when
 *  it takes this N, else on the CPU; after a GPU failure under auto,
 *  restart(ud) is told (the GPU may have sent batches to the sink) and the
 *  CPU starts over.  ts may be NULL.  @return the engine's or restart's
 *  status. */
rk_status rk_backend_topn(rk_backend_seam *s, const rk_model *m, const rk_lists *l, const rk_topn_opts *to,
                          rk_status (*restart)(void *ud, rk_error *err), void *ud, rk_topn_stats *ts,
                          const char *what, rk_error *err);

/*! rk_backend_free() : join the warm-up thread (the seam holds nothing else). */
void rk_backend_free(rk_backend_seam *s);

#ifdef __cplusplus
}
#endif
#endif /* RK_BACKEND_H */
