// The GPU engine's host side: upload, tiles, kernels, results (rk_gpu.h).
//
// Items are taken in descending order of work and cut into tiles of rows
// sized from the device memory left (or the cap given).  For each tile:
// k_sims writes the tile's similarity rows, k_select their neighbour lists,
// k_predict the answers of the queries whose item is in the tile.  Only the
// lists and the predictions come back.
#include "rk_gpu_internal.h"
#include "rk_omp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <thread>
#include <vector>

namespace {

// The co-rating sums of metric m, from the metric table (RK_SUMS_NONE for a
// row without them, which the engine refuses before any work).
static int sums_kind(rk_metric m)
{
    const rk_metric_row *r = rk_metric_row_of(m);
    return r != NULL ? (int)r->sums : (int)RK_SUMS_NONE;
}

struct sparse_handle {
    cusparseHandle_t h = NULL;
    ~sparse_handle()
    {
        if (h != NULL) cusparseDestroy(h);
    }
};

// The SpGEMM route's state; declared after the run's dev_mem, so it goes first.
struct spsims_holder {
    rk_spsims *p = NULL;
    ~spsims_holder() { rk_spsims_free(p, NULL); }
};

// One call of the engine: its state, and a method per stage.  The members
// that free device memory, handles, streams and pinned buffers are declared
// in the order of their release (the last first), so that an error in any
// stage returns and the destructor cleans up.
struct knn_call {
    // the caller's
    const rk_model *m;
    const rk_knn_opts *o;
    const rk_gpu_opts *g;
    rk_lists *lists;
    rk_queries *q;
    const rk_topn_opts *topn;
    const rk_lists *shared = NULL; // every item's lists, from g->between: uploaded for the top-N
    double t_topn = 0.0, free_wait = 0.0; // top-N's start (the meeting's release), the wait for the tile's free
    rk_topn_stats *tst;
    rk_knn_stats *st;
    // resources: released in reverse order
    dev_mem mem;
    sparse_handle sph;
    stream_events se;
    stager sg; // after mem and se: destroyed first, once its copies are done
    spsims_holder sps; // after mem, so it goes first
    rk_host_select hsel;
    host_queries hq;
    std::vector<int32_t> order, pos_of, row_of;
    std::vector<int64_t> cost;
    // the device and the data
    cudaDeviceProp prop;
    cudaStream_t s = NULL;
    int32_t n_items = 0, n_users = 0, k = 0;
    rk_sim_params sp;
    int kind = 0, pb = 0, grid = 0, spgemm = 0;
    double scale = 0.0;
    bool dev_transpose = false;
    double *d_mean = NULL, *d_bu = NULL, *d_bi = NULL, *d_ncnt = NULL, *d_nsq = NULL;
    float *d_rowval = NULL; // the model's values a row (rk_model.row_val), when it has them so
    rk_dev_csr by_user, by_item;
    const float *ratings_by_user = NULL; // real ratings for the predictions
    // the rows and the tiles
    size_t col_bytes = 0;
    int32_t chunk = 0, n_chunks = 0, n_run = 0;
    int64_t work = 0;
    int32_t *d_order = NULL, *d_len = NULL, *d_nbr = NULL, *d_sup = NULL;
    float *d_sim = NULL;
    int64_t *seg = NULL;
    int one_per_kernel = 0, host_select = 0, sym = 0;
    int shared_sym = 0; // the tile of every item is shared with other parts (g->sym): its rows' upper triangles
    double sym_wait = 0.0, sym_mirror = 0.0;
    int kept = 0; // what of the user-major matrix was on a device already (1 ptr, 2 idx, 4 values, 8 another's)
    void *d_one = NULL;
    int32_t one_batch = 1, T = 0, n_tiles = 0;
    size_t sp_budget = 0;
    double *d_S = NULL;
    int32_t *d_N = NULL;
    // the queries
    size_t nq = 0;
    int32_t *d_qu = NULL, *d_qi = NULL, *d_qr = NULL, *d_used = NULL, *d_qnb = NULL;
    double *d_pred = NULL;
    // times
    double t_call = 0, t_init = 0, t_pinned = 0, t_up = 0, t_tr = 0, t_h2d = 0, t_rows = 0;
    float t_sims = 0, t_sel = 0, t_pred = 0;

    rk_status start(rk_error *err);
    rk_status upload_user_major(rk_error *err);
    rk_status upload_model(rk_error *err);
    rk_status plan_rows(rk_error *err);
    rk_status plan_tiles(rk_error *err);
    rk_status plan_shared(size_t budget, size_t row_bytes, rk_error *err);
    rk_status tile_memory_error(size_t budget, size_t row_bytes, size_t query_bytes, int64_t queries_known,
                                rk_error *err);
    rk_status upload_queries(rk_error *err);
    rk_status run_tile(int32_t tile, rk_error *err);
    rk_status download(rk_error *err);
    rk_status topn_stage(rk_error *err);
    void drop_tile() // the similarity tile and its counts, once they are no longer read
    {
        mem.release(d_S);
        mem.release(d_N);
        d_S = NULL;
        d_N = NULL;
    }
};

// The device, its stream and events, cuSPARSE and the pinned buffers; the
// context's start-up is timed apart.
rk_status knn_call::start(rk_error *err)
{
    t_call = rk_omp_wtime();
    const int dev = g != NULL ? g->device : 0;
    RK_CUDA_CHECK(err, cudaSetDevice(dev));
    RK_CUDA_CHECK(err, cudaFree(0)); // the context: its start-up is timed apart
    RK_CUDA_CHECK(err, cudaGetDeviceProperties(&prop, dev));
    snprintf(st->device, sizeof st->device, "%.120s", prop.name);
    RK_CUDA_CHECK(err, cudaStreamCreate(&se.st));
    for (cudaEvent_t &e : se.ev) RK_CUDA_CHECK(err, cudaEventCreate(&e));
    s = se.st;
    RK_CUSPARSE_CHECK(err, cusparseCreate(&sph.h));
    RK_CUSPARSE_CHECK(err, cusparseSetStream(sph.h, s));
    t_init = rk_omp_wtime();
    st->init_s = t_init - t_call;
    RK_FORWARD(sg.init(err));
    t_pinned = rk_omp_wtime();
    n_items = m->by_item.n_rows;
    n_users = m->by_user.n_rows;
    k = o->k;
    sp = o->sim;
    kind = sums_kind(sp.metric);
    if (kind == RK_SUMS_NONE)
        return rk_error_set(err, RK_E_INTERNAL, "metric %s has no co-rating sums in the metric table",
                            rk_metric_name(sp.metric));
    return RK_OK;
}

// The user-major ratings: copied on the device from the matrix the data
// stage's sort kept there when they are its host arrays (the values too
// when they are the same), else uploaded.
rk_status knn_call::upload_user_major(rk_error *err)
{
    const rk_csr *h = &m->by_user;
    memset(&by_user, 0, sizeof by_user);
    by_user.n_rows = h->n_rows;
    by_user.n_cols = h->n_cols;
    by_user.nnz = h->nnz;
    RK_FORWARD(mem.alloc(&by_user.ptr, (size_t)h->n_rows + 1, err));
    RK_FORWARD(mem.alloc(&by_user.idx, (size_t)h->nnz, err));
    RK_FORWARD(mem.alloc(&by_user.v, (size_t)h->nnz, err));
    int copied = 0;
    RK_FORWARD(rk_gpu_resident_copy(g != NULL ? g->device : 0, h, by_user.ptr, by_user.idx, by_user.v, s, &copied, err));
    kept = copied;
    if (!(copied & 1)) RK_FORWARD(sg.copy(by_user.ptr, h->ptr, ((size_t)h->n_rows + 1) * sizeof *h->ptr, s, err));
    if (!(copied & 2)) RK_FORWARD(sg.copy(by_user.idx, h->idx, (size_t)h->nnz * sizeof *h->idx, s, err));
    if (!(copied & 4) && h->val == NULL && m->row_val != NULL) { // a value a row: expanded here
        RK_FORWARD(upload(&d_rowval, m->row_val, (size_t)h->n_rows, mem, sg, s, err));
        RK_FORWARD(rk_gpu_row_values(&by_user, d_rowval, 0, s, err));
    } else if (!(copied & 4)) {
        RK_FORWARD(sg.copy(by_user.v, h->val, (size_t)h->nnz * sizeof *h->val, s, err));
    }
    return RK_OK;
}

// The model on the device: the statistics, both orientations of the
// ratings, the values the sums are made of, the full-vector norms.
rk_status knn_call::upload_model(rk_error *err)
{
    // values: exact grid units, float values, or baseline residuals
    pb = rk_metric_on_residuals(sp.metric);
    int wide = 0;
    scale = pb ? 0.0 : rk_knn_grid(m, NULL, &wide);
    grid = scale > 0.0 ? RK_GPU_VALUES_INT32 : RK_GPU_VALUES_DOUBLE;
    if (!pb && grid == RK_GPU_VALUES_DOUBLE && kind == RK_SUMS_DOT && wide) {
        scale = 1.0; // integers: 64-bit sums, as exact as the CPU's double ones
        grid = RK_GPU_VALUES_INT64;
    }
    sp.unit = grid ? 1.0 / scale : 1.0;
    if (pb) snprintf(st->path, sizeof st->path, "gpu double residuals");
    else if (grid == RK_GPU_VALUES_INT64) snprintf(st->path, sizeof st->path, "gpu int64 dot");
    else if (grid) snprintf(st->path, sizeof st->path, "gpu int32 grid 1/%g", scale);
    else snprintf(st->path, sizeof st->path, "gpu double");

    RK_FORWARD(upload(&d_mean, m->item_mean, (size_t)n_items, mem, sg, s, err));
    RK_FORWARD(upload(&d_bu, m->bu, (size_t)n_users, mem, sg, s, err));
    RK_FORWARD(upload(&d_bi, m->bi, (size_t)n_items, mem, sg, s, err));
    RK_FORWARD(upload_user_major(err));
    RK_CUDA_CHECK(err, cudaStreamSynchronize(s));
    t_up = rk_omp_wtime();
    // the item-major matrix: transposed on the device (one orientation crosses
    // PCIe) unless cusparseCsr2cscEx2 cannot count its entries
    dev_transpose = !(g != NULL && g->host_transpose) && rk_gpu_transpose_fits(m->by_user.nnz);
    if (dev_transpose) {
        RK_FORWARD(rk_gpu_transpose(sph.h, &by_user, &by_item, mem, s, err));
    } else {
        RK_FORWARD(rk_gpu_upload_csr(&m->by_item, &by_item, mem, sg, s, err));
        if (m->by_item.val == NULL && d_rowval != NULL) RK_FORWARD(rk_gpu_row_values(&by_item, d_rowval, 1, s, err));
    }
    RK_CUDA_CHECK(err, cudaStreamSynchronize(s));
    t_tr = rk_omp_wtime();
    const rk_residual_args res_u = {m->mu, d_bu, d_bi, 1}, res_i = {m->mu, d_bu, d_bi, 0};
    RK_FORWARD(rk_gpu_acc_values(&by_user, by_user.v, scale, pb ? &res_u : NULL, mem, s, err));
    RK_FORWARD(rk_gpu_acc_values(&by_item, by_item.v, scale, pb ? &res_i : NULL, mem, s, err));
    RK_CUDA_CHECK(err, cudaStreamSynchronize(s));
    t_h2d = rk_omp_wtime();
    // The float ratings were only the source of the sums' values, except
    // by_user's where predictions read them: at Netflix size each is 400 MB,
    // a fifth of a 2 GB --gpu-memory that would otherwise be gone before the
    // first tile.
    mem.release(by_item.v);
    by_item.v = NULL;
    if (q == NULL) {
        mem.release(by_user.v);
        by_user.v = NULL;
    }
    ratings_by_user = by_user.v;

    // the full-vector metrics' whole-vector counts and norms, in the sums' units
    if (kind == RK_SUMS_DOT) {
        std::vector<double> ncnt((size_t)(n_items > 0 ? n_items : 1)), nsq(ncnt.size());
        rk_knn_item_norms(m, &sp, grid ? scale : 0.0, ncnt.data(), nsq.data());
        RK_FORWARD(upload(&d_ncnt, ncnt.data(), (size_t)n_items, mem, sg, s, err));
        RK_FORWARD(upload(&d_nsq, nsq.data(), (size_t)n_items, mem, sg, s, err));
        RK_CUDA_CHECK(err, cudaStreamSynchronize(s)); // the vectors go out of scope
    }
    return RK_OK;
}

// The rows: column chunks that fit in shared memory, the items' order
// (heaviest first; a subset: its items only), the lists on the device, and
// the SpGEMM route's state.
rk_status knn_call::plan_rows(rk_error *err)
{
    // The similarity rows of the full-vector metrics come from k_sims or from
    // cuSPARSE SpGEMM (rk_gpu_spsims.cu).  AUTO takes the kernel until both
    // are measured on the H100 (bench/gpu_paths RATINGS sims); the faster
    // becomes the default.
    spgemm = kind == RK_SUMS_DOT && g != NULL && g->sims_route == RK_GPU_SIMS_SPGEMM;

    // column chunks that fit in shared memory
    col_bytes = rk_gpu_sims_col_bytes(kind, grid);
    size_t smem_cap = prop.sharedMemPerBlockOptin > 2048 ? prop.sharedMemPerBlockOptin - 1024 : 16384;
    chunk = (int32_t)(smem_cap / col_bytes);
    if (chunk > n_items) chunk = n_items > 0 ? n_items : 1;
    n_chunks = n_items > 0 ? (n_items + chunk - 1) / chunk : 1;
    chunk = n_items > 0 ? (n_items + n_chunks - 1) / n_chunks : 1;

    // item order (heaviest first) and model statistics
    // (a subset: its items only, heaviest first)
    order.resize((size_t)(n_items > 0 ? n_items : 1));
    pos_of.resize((size_t)(n_items > 0 ? n_items : 1));
    cost.resize(spgemm ? order.size() : 0); // the SpGEMM rows' intermediate products
    work = rk_knn_subset_order(m, o, order.data(), spgemm ? cost.data() : NULL, &n_run);
    if (work < 0) return rk_error_set(err, RK_E_NOMEM, "out of memory for the item order");
    st->pair_updates = work;
    for (int32_t t = 0; t < n_run; t++) pos_of[(size_t)order[(size_t)t]] = t;
    RK_FORWARD(upload(&d_order, order.data(), (size_t)n_items, mem, sg, s, err));
    RK_FORWARD(mem.alloc(&d_len, (size_t)n_items, err));
    RK_FORWARD(mem.alloc(&d_nbr, (size_t)n_items * k, err));
    RK_FORWARD(mem.alloc(&d_sup, (size_t)n_items * k, err));
    RK_FORWARD(mem.alloc(&d_sim, (size_t)n_items * k, err));
    if (n_items > 0) {
        /* the cells past each list's length come back zero, as from the CPU */
        RK_CUDA_CHECK(err, cudaMemsetAsync(d_len, 0, (size_t)n_items * sizeof(int32_t), s));
        RK_CUDA_CHECK(err, cudaMemsetAsync(d_nbr, 0, (size_t)n_items * k * sizeof(int32_t), s));
        RK_CUDA_CHECK(err, cudaMemsetAsync(d_sup, 0, (size_t)n_items * k * sizeof(int32_t), s));
        RK_CUDA_CHECK(err, cudaMemsetAsync(d_sim, 0, (size_t)n_items * k * sizeof(float), s));
    }
    if (spgemm) {
        RK_FORWARD(rk_spsims_create(sph.h, &by_user, &by_item, m->by_item.ptr, cost.data(), mem, s, &sps.p, err));
        snprintf(st->path + strlen(st->path), sizeof st->path - strlen(st->path), ", spgemm");
    }
    t_rows = rk_omp_wtime();
    return RK_OK;
}

// No tile of one row fits: say what the run holds and what would do.
rk_status knn_call::tile_memory_error(size_t budget, size_t row_bytes, size_t query_bytes, int64_t queries_known,
                                      rk_error *err)
{
    // what the run holds (ratings in both orientations and their sums'
    // values, lists, order, statistics, the chunk table), one row, the queries
    const double MB = 1048576.0;
    const size_t need = mem.bytes + (spgemm ? 2 : 1) * row_bytes + query_bytes;
    char gives[160];
    if (g != NULL && g->memory_cap > 0)
        snprintf(gives, sizeof gives, "--gpu-memory gives %.0f MB", (double)g->memory_cap / MB);
    else
        snprintf(gives, sizeof gives, "the device has %.0f MB free beyond what the run holds, less 512 MB kept for "
                 "the CUDA libraries", (double)(budget + query_bytes) / MB);
    return rk_error_set(err, RK_E_GPU,
                        "the GPU engine needs %.0f MB of device memory for one tile of 1 similarity row of %d items "
                        "(%.0f MB for the ratings, lists and indexes, %.2f MB a row, %.0f MB for %lld queries); "
                        "%s%s: raise --gpu-memory (a tile of 256 rows needs %.0f MB) or use --device cpu",
                        need / MB, n_items, (double)mem.bytes / MB, (double)row_bytes / MB,
                        (double)query_bytes / MB, (long long)queries_known, gives,
                        spgemm ? ", half of it kept for the SpGEMM products" : "",
                        (double)(mem.bytes + (spgemm ? 2 : 1) * (256 * row_bytes) + query_bytes) / MB);
}

// The tiles: the memory left decides their height, after the chunk table,
// one query per kernel's sums, host selection and the SpGEMM products take
// theirs; one tile of every row is summed symmetrically.
rk_status knn_call::plan_tiles(rk_error *err)
{
    // tile height from the memory left
    // keep 512 MiB free for the libraries; what this run holds counts against a cap
    size_t budget;
    RK_FORWARD(rk_gpu_budget_left(g, mem, &budget, err));
    size_t row_bytes = (size_t)(n_items > 0 ? n_items : 1) * (sizeof(double) + sizeof(int32_t));
    int64_t queries_known = 0;
    if (q != NULL) { // 2M queries at Netflix size
#pragma omp parallel for schedule(static) reduction(+ : queries_known) if (q->n > 65536)
        for (int64_t t = 0; t < q->n; t++)
            queries_known += rk_model_user_known(m, q->user[t]) && rk_model_item_known(m, q->item[t]);
    }
    size_t query_bytes = (size_t)queries_known * (3 * sizeof(int32_t) + sizeof(double) + sizeof(int32_t));
    budget = budget > query_bytes ? budget - query_bytes : 0;
    // The chunk table grows as users x chunks (334 MB for 200k users and 2M
    // items): kept when it takes at most a quarter of what is left, else the
    // kernel searches each rater's row (a few steps of 32 probes a chunk).
    // With one chunk a segment is the whole row: no table, no search.
    const size_t seg_bytes = (size_t)n_users * (size_t)(n_chunks + 1) * sizeof(int64_t);
    if (!spgemm && !(g != NULL && g->no_segments) && n_chunks > 1 && seg_bytes <= budget / 4) {
        RK_FORWARD(mem.alloc(&seg, (size_t)n_users * (size_t)(n_chunks + 1), err));
        RK_FORWARD(rk_gpu_segments_launch(&by_user, n_chunks, chunk, seg, s, err));
        budget -= seg_bytes;
    } // one chunk: its segment is the whole row, no table and no search
    if (g != NULL && g->sym != NULL) { // parts sharing one tile decide, whatever they do
        RK_FORWARD(plan_shared(budget, row_bytes, err));
        if (shared_sym) return RK_OK;
    }
    // one query per kernel: the sums of one row in global memory; auto takes
    // it for a subset of fewer rows than the crossover (a whole run of a tiny
    // catalogue keeps its symmetric tile)
    one_per_kernel = !spgemm && (g != NULL && g->query_route == RK_GPU_QUERY_KERNEL
                                 ? 1
                                 : (g == NULL || g->query_route == RK_GPU_QUERY_AUTO) && o->rows != NULL &&
                                       n_run < RK_GPU_QUERY_CROSSOVER);
    if (one_per_kernel && n_run > 0) {
        // the global sums of up to 256 MiB of rows (at least one) a launch
        const size_t ob1 = rk_gpu_sims_one_bytes(kind, grid, n_items);
        one_batch = (int32_t)std::max<size_t>(1, std::min<size_t>({(size_t)n_run, ((size_t)256 << 20) / ob1, 65535}));
        const size_t ob = ob1 * (size_t)one_batch;
        unsigned char *p1;
        RK_FORWARD(mem.alloc(&p1, ob, err));
        RK_CUDA_CHECK(err, cudaMemsetAsync(p1, 0, ob, s));
        d_one = p1;
        budget = budget > ob ? budget - ob : 0;
    }
    // k above the GPU's selection limit: the rows come to the host, which
    // selects them (rk_topk, the CPU engine's order); at most 1 GiB a tile
    host_select = (lists != NULL || topn != NULL) && (k > RK_GPU_MAX_K || (g != NULL && g->host_select));
    if (host_select) {
        hsel.out = lists;
        if (lists == NULL) {
            RK_FORWARD(rk_lists_alloc(&hsel.own, n_items, k, err));
            hsel.out = &hsel.own;
        }
    }
    // The SpGEMM products (Q, C and cuSPARSE's buffers, freed after each) take
    // half of what is left and the tile's dense rows the other half: a
    // product's memory grows with its intermediate products (Σ over its rows'
    // raters of their rating counts), which no row height bounds, so the
    // products adapt to their half (rk_spsims_tile) rather than the tile to them.
    if (spgemm) {
        sp_budget = budget / 2;
        budget -= sp_budget;
        if (g->spgemm_budget > 0 && g->spgemm_budget < sp_budget) sp_budget = g->spgemm_budget;
    }
    int64_t tile_rows = (int64_t)(budget / row_bytes);
    if (host_select && tile_rows > (int64_t)((size_t)1 << 30) / (int64_t)row_bytes)
        tile_rows = (int64_t)((size_t)1 << 30) / (int64_t)row_bytes;
    if (tile_rows > n_run) tile_rows = n_run;
    if (g != NULL && g->tile_items > 0 && tile_rows > g->tile_items) tile_rows = g->tile_items;
    if (n_run > 0 && tile_rows < 1) return tile_memory_error(budget, row_bytes, query_bytes, queries_known, err);
    if (tile_rows < 1) tile_rows = 1;
    T = (int32_t)tile_rows;
    n_tiles = n_run > 0 ? (n_run + T - 1) / T : 0;
    // one tile holds every row: the matrix is symmetric, each pair can be
    // summed once and the rows indexed by item.  Measured (bench/gpu_paths,
    // H100): it pays where a pair costs four or six atomics (Pearson -25% at
    // ML-20M size, -30% at Netflix size; cosine -14%/-16%; pearson-baseline
    // -44%/-47%), not for the two of msd and euclidean (+12%/+23%), whose
    // rows stay full.
    sym = n_tiles == 1 && n_run == n_items && n_items > 1 && rk_gpu_sym_applies(o, g) && !one_per_kernel &&
          !host_select && !spgemm;
    if (sym) {
        // its rows' work differs from the full rows': heaviest first again
        unsigned char *scratch;
        const size_t sb = rk_gpu_sym_order_bytes(n_items);
        RK_FORWARD(mem.alloc(&scratch, sb, err));
        RK_FORWARD(rk_gpu_sym_order_launch(&by_user, n_items, scratch, sb, d_order, s, err));
        row_of.resize((size_t)n_items);
        for (int32_t i = 0; i < n_items; i++) row_of[(size_t)i] = i;
        st->pair_updates = (work - m->by_user.nnz) / 2;
        snprintf(st->path + strlen(st->path), sizeof st->path - strlen(st->path), ", symmetric");
    }
    return RK_OK;
}

// Parts sharing one tile of every item (g->sym): this part's say, and with
// the tile shared, its rows in the order of their upper triangles' work.
rk_status knn_call::plan_shared(size_t budget, size_t row_bytes, rk_error *err)
{
    const bool can = rk_gpu_sym_applies(o, g) && !spgemm && n_items > 1 && budget / row_bytes >= (size_t)n_items &&
                     !(g->tile_items > 0 && g->tile_items < n_items);
    std::vector<int32_t> own;
    int64_t own_work = 0;
    bool yes = false;
    RK_FORWARD(rk_gpu_sym_decide(g->sym, g->sym_part, can, order.data(), n_run, &yes, own, &own_work, err));
    if (!yes) return RK_OK; // full rows
    shared_sym = sym = 1;
    T = n_items;
    n_tiles = 1;
    std::copy(own.begin(), own.end(), order.begin());
    if (n_run > 0)
        RK_CUDA_CHECK(err, cudaMemcpyAsync(d_order, order.data(), (size_t)n_run * sizeof(int32_t),
                                           cudaMemcpyHostToDevice, s));
    row_of.resize((size_t)n_items);
    for (int32_t i = 0; i < n_items; i++) row_of[(size_t)i] = i;
    st->pair_updates = own_work;
    snprintf(st->path + strlen(st->path), sizeof st->path - strlen(st->path), ", shared symmetric");
    return RK_OK;
}

// The tile's rows and the queries, grouped by tile, on the device.
rk_status knn_call::upload_queries(rk_error *err)
{
    RK_CUDA_CHECK(err, cudaStreamSynchronize(s)); // the order's and the tiles' device work, timed with them
    const double t_tile0 = rk_omp_wtime();
    RK_FORWARD(mem.alloc(&d_S, (size_t)T * (size_t)(n_items > 0 ? n_items : 1), err));
    RK_FORWARD(mem.alloc(&d_N, (size_t)T * (size_t)(n_items > 0 ? n_items : 1), err));
    const double t_tile1 = rk_omp_wtime();

    rk_gpu_plan_queries(m, o, q, sym ? row_of : pos_of, T, n_tiles, &hq);
    nq = hq.user.size();
    RK_FORWARD(upload(&d_qu, hq.user.data(), nq, mem, sg, s, err));
    RK_FORWARD(upload(&d_qi, hq.item.data(), nq, mem, sg, s, err));
    RK_FORWARD(upload(&d_qr, hq.row.data(), nq, mem, sg, s, err));
    RK_FORWARD(mem.alloc(&d_pred, nq, err));
    RK_FORWARD(mem.alloc(&d_used, nq, err));
    if (q != NULL && q->nb != NULL) RK_FORWARD(mem.alloc(&d_qnb, nq * (size_t)k, err));

    RK_CUDA_CHECK(err, cudaStreamSynchronize(s));
    const double t_upload = rk_omp_wtime();
    st->upload_s = t_upload - t_init;
    snprintf(st->detail, sizeof st->detail, "pinned buffers %.4f s, user-major %s %.4f s, item-major %s %.4f s, "
             "values %.4f s, order %.4f s, tiles %.4f s, tile alloc %.4f s, queries %.4f s", t_pinned - t_init,
             (kept & 7) == 7   ? (kept & 8 ? "peer" : "kept")
             : kept            ? (kept & 8 ? "peer, values up" : "kept, values up")
                               : "up",
             t_up - t_pinned,
             dev_transpose ? "transposed" : "up", t_tr - t_up, t_h2d - t_tr, t_rows - t_h2d, t_tile0 - t_rows,
             t_tile1 - t_tile0, t_upload - t_tile1);
    return RK_OK;
}

// One tile: its similarity rows, their selection into lists, the
// predictions of its queries, each stage timed by events.
rk_status knn_call::run_tile(int32_t tile, rk_error *err)
{
    const int32_t first = tile * T, rows = std::min(T, n_run - first);
    rk_sims_args sa;
    sa.by_item = by_item;
    sa.by_user = by_user;
    sa.seg = seg;
    sa.n_chunks = n_chunks;
    sa.chunk = chunk;
    sa.tile_items = d_order + first;
    sa.h_tile_items = order.data() + first;
    sa.h_iptr = m->by_item.ptr;
    sa.tile_rows = rows;
    sa.sym = shared_sym ? 2 : sym;
    sa.sp = sp;
    sa.ncnt = d_ncnt;
    sa.nsq = d_nsq;
    sa.S = d_S;
    sa.N = d_N;
    RK_CUDA_CHECK(err, cudaEventRecord(se.ev[0], s));
    if (spgemm) {
        const rk_spsims_tile_args ta = {d_order + first, order.data() + first, rows, sp, d_ncnt, d_nsq,
                                        d_S, d_N, sp_budget, g->spgemm_rows};
        RK_FORWARD(rk_spsims_tile(sps.p, &ta, err));
    } else if (one_per_kernel) {
        RK_FORWARD(rk_gpu_sims_one_launch(&sa, kind, grid, d_one, one_batch, (size_t)chunk * col_bytes,
                                          prop.multiProcessorCount, s, err));
    } else {
        RK_FORWARD(rk_gpu_sims_launch(&sa, kind, grid, (size_t)chunk * col_bytes, s, err));
    }
    if (shared_sym) RK_FORWARD(rk_gpu_sym_exchange(g->sym, g->sym_part, d_S, d_N, mem, s, &sym_wait, &sym_mirror, err));
    RK_CUDA_CHECK(err, cudaEventRecord(se.ev[1], s));
    if (host_select) {
        RK_FORWARD(rk_gpu_select_host(d_S, d_N, n_items, order.data() + first, rows, o->negative, hsel, s, err));
    } else if (lists != NULL || topn != NULL) {
        rk_select_args sel;
        sel.S = d_S;
        sel.N = d_N;
        sel.ld = n_items;
        sel.n_cols = n_items;
        sel.tile_items = sym && !shared_sym ? NULL : d_order + first;
        sel.row_is_item = shared_sym;
        sel.rows = rows;
        sel.k = k;
        sel.len = d_len;
        sel.nbr = d_nbr;
        sel.sup = d_sup;
        sel.sim = d_sim;
        sel.negative = o->negative;
        RK_FORWARD(rk_gpu_select_launch(&sel, s, err));
    }
    RK_CUDA_CHECK(err, cudaEventRecord(se.ev[2], s));
    int64_t q0 = hq.tile_ptr[(size_t)tile], q1 = hq.tile_ptr[(size_t)tile + 1];
    if (q1 > q0) {
        rk_predict_args pa;
        pa.S = d_S;
        pa.ld = n_items;
        pa.nq = (int32_t)(q1 - q0);
        pa.q_user = d_qu + q0;
        pa.q_item = d_qi + q0;
        pa.q_row = d_qr + q0;
        pa.uptr = by_user.ptr;
        pa.uidx = by_user.idx;
        pa.uval = ratings_by_user;
        pa.item_mean = d_mean;
        pa.bu = d_bu;
        pa.bi = d_bi;
        pa.mu = m->mu;
        pa.rmin = m->rmin;
        pa.rmax = m->rmax;
        pa.mode = (int)o->mode;
        pa.k = k;
        pa.min_k = o->min_k;
        pa.pred = d_pred + q0;
        pa.used = d_used + q0;
        pa.nb = d_qnb != NULL ? d_qnb + q0 * k : NULL;
        RK_FORWARD(rk_gpu_predict_launch(&pa, s, err));
    }
    RK_CUDA_CHECK(err, cudaEventRecord(se.ev[3], s));
    RK_CUDA_CHECK(err, cudaEventSynchronize(se.ev[3]));
    float a = 0, b = 0, c = 0;
    RK_CUDA_CHECK(err, cudaEventElapsedTime(&a, se.ev[0], se.ev[1]));
    RK_CUDA_CHECK(err, cudaEventElapsedTime(&b, se.ev[1], se.ev[2]));
    RK_CUDA_CHECK(err, cudaEventElapsedTime(&c, se.ev[2], se.ev[3]));
    t_sims += a;
    t_sel += b;
    t_pred += c;
    return RK_OK;
}

// The lists and predictions back to the host, and the call's statistics.
rk_status knn_call::download(rk_error *err)
{
    if (spgemm) { // its memory goes back before the top-N stage
        rk_spsims_report rep;
        rk_spsims_counts(sps.p, &rep);
        const size_t len = strlen(st->detail);
        snprintf(st->detail + len, sizeof st->detail - len, "; spgemm: %lld products, %lld halved, buffers %.1f "
                 "B/product, %s", (long long)rep.products, (long long)rep.splits, rep.bytes_per_product, rep.algorithm);
        rk_spsims_free(sps.p, &mem);
        sps.p = NULL;
    }
    const double t_tiles = rk_omp_wtime();
    // through the call's pinned buffers: into pageable memory the copies ran at 1.6-1.7 GB/s on the
    // H200 machine (48 MB of lists at 200,000 items and k 20 in 0.030 s, 240 MB at k 100 in 0.141 s)
    if (lists != NULL && n_items > 0 && !host_select) {
        RK_FORWARD(sg.copy_back(lists->len, d_len, (size_t)n_items * sizeof(int32_t), s, err));
        RK_FORWARD(sg.copy_back(lists->nbr, d_nbr, (size_t)n_items * k * sizeof(int32_t), s, err));
        RK_FORWARD(sg.copy_back(lists->sim, d_sim, (size_t)n_items * k * sizeof(float), s, err));
        RK_FORWARD(sg.copy_back(lists->support, d_sup, (size_t)n_items * k * sizeof(int32_t), s, err));
    }
    double t_back = rk_omp_wtime();
    RK_FORWARD(rk_gpu_predict_collect(hq, d_pred, d_used, d_qnb, k, sg, s, q, &t_back, err));
    st->download_s = rk_omp_wtime() - t_tiles;
    const size_t dl = strlen(st->detail);
    snprintf(st->detail + dl, sizeof st->detail - dl, "; copies back %.4f s, answers placed %.4f s", t_back - t_tiles,
             st->download_s - (t_back - t_tiles));
    st->wall_s = rk_omp_wtime() - t_call;
    st->select_s = t_sel / 1000.0;
    st->predict_s = t_pred / 1000.0;
    st->sim_s = t_sims / 1000.0;
    if (shared_sym) {
        const size_t len = strlen(st->detail);
        snprintf(st->detail + len, sizeof st->detail - len, "; shared tile: waited %.4f s for the other parts' "
                 "sums, lower triangle filled in %.4f s", sym_wait, sym_mirror);
    }
    snprintf(st->path + strlen(st->path), sizeof st->path - strlen(st->path), ", %d tile%s of %d%s%s%s%s", n_tiles,
             n_tiles == 1 ? "" : "s", T, dev_transpose ? ", device transpose" : "",
             seg == NULL && n_chunks > 1 && !one_per_kernel ? ", searched" : "",
             one_per_kernel ? ", one query per kernel" : "", host_select ? ", host selection" : "");
    return RK_OK;
}

// Top-N from the lists still on the device; the similarity tile goes first.
// Lists made on the host (host selection, or every part's from g->between)
// go up into the device's lists first.
rk_status knn_call::topn_stage(rk_error *err)
{
    if (t_topn == 0.0) t_topn = rk_omp_wtime();
    drop_tile();
    const rk_lists *hl = shared != NULL ? shared : host_select ? hsel.out : NULL;
    if (hl != NULL && n_items > 0) {
        const size_t cells = (size_t)n_items * k;
        // through the call's pinned buffers: from pageable memory the driver copies at about 3 GB/s on
        // one thread (160 MB of ranking lists at 200,000 items and k 100)
        RK_FORWARD(sg.copy(d_len, hl->len, (size_t)n_items * sizeof(int32_t), s, err));
        RK_FORWARD(sg.copy(d_nbr, hl->nbr, cells * sizeof(int32_t), s, err));
        RK_FORWARD(sg.copy(d_sim, hl->sim, cells * sizeof(float), s, err));
        RK_CUDA_CHECK(err, cudaStreamSynchronize(s)); // top-N reads no support counts: they stay on the host
    }
    uint64_t *d_q;
    RK_FORWARD(mem.alloc(&d_q, (size_t)n_items * k, err));
    RK_FORWARD(rk_gpu_fixed_launch(d_len, d_sim, n_items, k, d_q, s, err));
    rk_topn_dev_in in;
    in.R = by_user;
    in.L = rk_dev_lists{n_items, k, d_len, d_nbr, d_q, o->negative};
    in.sparse = sph.h;
    in.sm_count = prop.multiProcessorCount;
    in.smem_optin = prop.sharedMemPerBlockOptin;
    RK_FORWARD(rk_gpu_budget_left(g, mem, &in.budget, err));
    const double t_run = rk_omp_wtime();
    RK_FORWARD(rk_gpu_topn_run(m, &in, topn, g, s, tst, err));
    // the set-up before the first batch: this stage's (the tile's free, the lists up) and the call's
    const size_t at = strlen(tst->detail);
    snprintf(tst->detail + at, sizeof tst->detail - at, ", set-up %.3f (free wait %.3f) s",
             t_run - t_topn + tst->upload_s, free_wait);
    return RK_OK;
}

// A part of a shared tile (g->sym) leaves it when its call returns, so that
// no other part waits for it; its tile is freed only after the others' reads.
struct sym_leaver {
    const rk_gpu_opts *g;
    ~sym_leaver()
    {
        if (g != NULL && g->sym != NULL) rk_gpu_sym_leave_part(g->sym, g->sym_part);
    }
};

// The engine's stages in order; the call's destructor frees what it held.
rk_status run(const rk_model *m, const rk_knn_opts *o, const rk_gpu_opts *g, rk_lists *lists, rk_queries *q,
              const rk_topn_opts *topn, rk_topn_stats *tst, rk_knn_stats *st, rk_error *err)
{
    knn_call c{}; // zeroed: the device CSRs fields an upload leaves are NULL
    sym_leaver leave{g}; // before c's memory goes, whatever the return
    c.m = m;
    c.o = o;
    c.g = g;
    c.lists = lists;
    c.q = q;
    c.topn = topn;
    c.tst = tst;
    c.st = st;
    RK_FORWARD(c.start(err));
    RK_FORWARD(c.upload_model(err));
    RK_FORWARD(c.plan_rows(err));
    RK_FORWARD(c.plan_tiles(err));
    RK_FORWARD(c.upload_queries(err));
    for (int32_t tile = 0; tile < c.n_tiles; tile++) {
        RK_FORWARD(c.run_tile(tile, err));
        if (RK_PROGRESS_STOPS(o->progress, o->progress_ud, "similarity", tile + 1, c.n_tiles, "tiles"))
            return rk_error_set(err, RK_E_CANCELLED, RK_STOPPED_MSG, "similarity");
    }
    RK_FORWARD(c.download(err));
    if (topn == NULL) return RK_OK;
    if (g != NULL && g->between != NULL) { // the other parts' lists, and this part's users
        // the tile is freed beside the meeting: its free (141 GB at 200,000 items) took 0.33-0.38 s
        // of each part's top-N after it, both parts at once (BENCHMARKS.md, issue 22)
        const rk_topn_opts *mine = NULL;
        std::thread freer;
        try {
            freer = std::thread([&c, g] {
                if (cudaSetDevice(g->device) == cudaSuccess) c.drop_tile(); // else topn_stage frees it
            });
        } catch (...) { // no thread: topn_stage frees the tile after the meeting
        }
        const rk_status bs = g->between(g->between_ud, &c.shared, &mine, err);
        c.t_topn = rk_omp_wtime();
        if (freer.joinable()) freer.join();
        c.free_wait = rk_omp_wtime() - c.t_topn;
        RK_FORWARD(bs);
        if (mine == NULL) return RK_OK;
        if (c.shared == NULL || c.shared->k != c.k) // rk_topn_check: the item count
            return rk_error_set(err, RK_E_INTERNAL, "the lists for the top-N are not of this call's shape");
        RK_FORWARD(rk_topn_check(m, c.shared, mine, err));
        c.topn = mine;
    }
    return c.topn_stage(err);
}

} // namespace

extern "C" rk_status rk_gpu_knn(const rk_model *m, const rk_knn_opts *o, const rk_gpu_opts *g, rk_lists *lists,
                                rk_queries *q, const rk_topn_opts *topn, rk_topn_stats *tst, rk_knn_stats *st,
                                rk_error *err)
{
    rk_knn_stats local;
    rk_topn_stats tlocal;
    sym_leaver leave{g}; // a call that returns before run()
    if (st == NULL) st = &local;
    if (tst == NULL) tst = &tlocal;
    memset(st, 0, sizeof *st);
    memset(tst, 0, sizeof *tst);
    RK_FORWARD(rk_knn_check_args(m, o, lists, q, err));
    if (topn != NULL) RK_FORWARD(rk_topn_check(m, lists, topn, err));
    if (g != NULL && (unsigned)g->sims_route > (unsigned)RK_GPU_SIMS_SPGEMM)
        return rk_error_set(err, RK_E_ARG, "unknown GPU similarity route %d", (int)g->sims_route);
    if (g != NULL && g->sims_route == RK_GPU_SIMS_SPGEMM && !rk_metric_is_full(o->sim.metric))
        return rk_error_set(err, RK_E_ARG, "the spgemm similarity route computes the full-vector metrics "
                                           "(cosine-full, euclidean-full, jaccard), not %s: use the kernel route",
                            rk_metric_name(o->sim.metric));
    char why[256];
    if (!rk_gpu_available(why, sizeof why)) return rk_error_set(err, RK_E_GPU, "no usable GPU: %s", why);
    if (q != NULL && q->n == 0) q = NULL;
    // a deferred item-major matrix (rk_model_from_csr_deferred) is built
    // on the device; only the routes that upload the host's need it here
    const bool host_items = (g != NULL && g->host_transpose) || !rk_gpu_transpose_fits(m->by_user.nnz);
    if (rk_model_item_major_ready(m) || !host_items) return run(m, o, g, lists, q, topn, tst, st, err);
    rk_model full;
    RK_FORWARD(rk_model_complete_copy(m, &full, err));
    rk_status s = run(&full, o, g, lists, q, topn, tst, st, err);
    rk_model_complete_free(&full, m);
    return s;
}

extern "C" rk_status rk_gpu_topn(const rk_model *m, const rk_lists *l, const rk_topn_opts *o, const rk_gpu_opts *g,
                                 rk_topn_stats *st, rk_error *err)
{
    rk_topn_stats local;
    if (st == NULL) st = &local;
    memset(st, 0, sizeof *st);
    RK_FORWARD(rk_topn_check(m, l, o, err));
    if (l == NULL) return rk_error_set(err, RK_E_ARG, "top-N needs the neighbour lists");
    char why[256];
    if (!rk_gpu_available(why, sizeof why)) return rk_error_set(err, RK_E_GPU, "no usable GPU: %s", why);
    dev_mem mem;
    sparse_handle sph;
    stream_events se;
    cudaDeviceProp prop;
    const int dev = g != NULL ? g->device : 0;
    RK_CUDA_CHECK(err, cudaSetDevice(dev));
    RK_CUDA_CHECK(err, cudaGetDeviceProperties(&prop, dev));
    RK_CUDA_CHECK(err, cudaStreamCreate(&se.st));
    RK_CUSPARSE_CHECK(err, cusparseCreate(&sph.h));
    RK_CUSPARSE_CHECK(err, cusparseSetStream(sph.h, se.st));
    stager plain; // not initialised: plain copies
    const int32_t n_items = l->n_items, k = l->k;
    const size_t cells = (size_t)n_items * (size_t)k;
    rk_dev_csr R;
    memset(&R, 0, sizeof R);
    R.n_rows = m->by_user.n_rows;
    R.n_cols = m->by_user.n_cols;
    R.nnz = m->by_user.nnz;
    RK_FORWARD(upload(&R.ptr, m->by_user.ptr, (size_t)R.n_rows + 1, mem, plain, se.st, err));
    RK_FORWARD(upload(&R.idx, m->by_user.idx, (size_t)R.nnz, mem, plain, se.st, err));
    int32_t *d_len, *d_nbr;
    float *d_sim;
    uint64_t *d_q;
    RK_FORWARD(upload(&d_len, l->len, (size_t)n_items, mem, plain, se.st, err));
    RK_FORWARD(upload(&d_nbr, l->nbr, cells, mem, plain, se.st, err));
    RK_FORWARD(upload(&d_sim, l->sim, cells, mem, plain, se.st, err));
    RK_FORWARD(mem.alloc(&d_q, cells, err));
    RK_FORWARD(rk_gpu_fixed_launch(d_len, d_sim, n_items, k, d_q, se.st, err));
    rk_topn_dev_in in;
    in.R = R;
    in.L = rk_dev_lists{n_items, k, d_len, d_nbr, d_q, rk_topn_lists_signed(l)};
    in.sparse = sph.h;
    in.sm_count = prop.multiProcessorCount;
    in.smem_optin = prop.sharedMemPerBlockOptin;
    RK_FORWARD(rk_gpu_budget_left(g, mem, &in.budget, err));
    return rk_gpu_topn_run(m, &in, o, g, se.st, st, err);
}
