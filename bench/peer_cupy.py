#!/usr/bin/env python3
"""CuPy GPU peer: item-item Pearson over co-raters + top-k with cuSPARSE SpGEMM per item tile.

The computation of peer_scipy.py on the GPU: for a tile T of target items (rows of the
item-major CSR matrices Bt, Rt, Rt2 -- cuSPARSE has no transpose operand, so the left operands
are item-major and the right ones user-major), six CSR x CSR products (cupyx.scipy.sparse,
i.e. cuSPARSE SpGEMM) give N, Sx, Sy, Sxx, Syy, Sxy; they are made dense, combined in float64
(CONTRACT.md §2), and the top-k positive neighbours are selected on the GPU (partition, exact ties).

Timing: one warm-up tile first (not timed; it also validates the first tile against SciPy on
the CPU, since SpGEMM wrappers have returned all-zero products without an error), then CUDA
events around the tile loop. A failure (CUSPARSE_STATUS_INSUFFICIENT_RESOURCES, out of
memory, ...) is reported as a JSON row with "status": "failed", not as a traceback.
Two limits of SpGEMM are worked around. --tile auto keeps each tile's intermediate products
(estimated) under 2^30: the default algorithm cannot count more than 2^31 - 1. And the user
dimension is split into chunks of at most --chunk-nnz ratings (default 2^25), the products of
the chunks summed: with the whole Netflix-size right operand (480,189 x 17,770, 100.5M
nonzeros) SpGEMM returned wrong sums without an error (8 target rows, 6.2e7 intermediate
products; 75M nonzeros were still right) and later failed with INSUFFICIENT_RESOURCES
(H100, CuPy 14.2, CUDA 13). --chunk-nnz 0 turns the split off, to show that. Every tile's N
diagonal is also checked against the item counts.
"""
import argparse
import sys
import traceback

import numpy as np
import scipy.sparse as sp

from peer_common import (NeighborWriter, add_common_args, base_row, emit, finish_row,
                         load_ratings, now, pearson, select_topk, target_items)


def classify(e):
    msg = f'{type(e).__name__}: {e}'
    if 'INSUFFICIENT_RESOURCES' in msg:
        return 'cusparse_insufficient_resources', msg
    if 'OutOfMemory' in msg or 'out of memory' in msg.lower() or 'ALLOC_FAILED' in msg:
        return 'out_of_memory', msg
    return 'error', msg


def host_products(bt, rt, rt2, B, R, R2):
    """The six sums on the CPU (SciPy), for validation."""
    return [(a @ b).toarray() for a, b in ((bt, B), (rt, B), (bt, R), (rt2, B), (bt, R2), (rt, R))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    add_common_args(ap, tile_default='auto')
    ap.add_argument('--dtype', choices=('auto', 'float32', 'float64'), default='auto',
                    help='SpGEMM value type (auto: float32 when every sum is exact in it, i.e. '
                         'max item count x max rating^2 x 4 < 2^24 for half stars; else float64); '
                         'the Pearson combine is float64')
    ap.add_argument('--no-validate', action='store_true', help='skip the CPU check of the first tile')
    ap.add_argument('--chunk-nnz', type=int, default=1 << 25,
                    help='split the users into chunks of at most this many ratings (0: no split)')
    args = ap.parse_args()

    t0 = now()
    d = load_ratings(args.ratings)
    n_users, n_items = len(d['user_ids']), len(d['item_ids'])
    R = sp.csr_matrix((d['r'], (d['u'], d['i'])), shape=(n_users, n_items), dtype=np.float64)
    B = R.copy(); B.data[:] = 1.0
    R2 = R.copy(); R2.data **= 2
    Rt, Bt = R.T.tocsr(), B.T.tocsr()
    Rt2 = Rt.copy(); Rt2.data **= 2
    t_host = now() - t0
    row = base_row('cupy', args, d, t_host)
    counts = np.diff(Rt.indptr)
    work = float(np.sum(np.diff(R.indptr).astype(np.float64) ** 2))  # sum_u n_u^2
    row['sum_nu2'] = work
    stage = 'import'
    try:
        import cupy as cp
        import cupyx.scipy.sparse as csp
        row['cupy'] = cp.__version__
        row['device'] = cp.cuda.runtime.getDeviceProperties(0)['name'].decode()
        if args.dtype == 'auto':
            exact32 = counts.max() * float(np.max(d['r'] ** 2)) * 4 < 2 ** 24
            dt = np.float32 if exact32 else np.float64
        else:
            dt = np.float32 if args.dtype == 'float32' else np.float64
        row['dtype'] = np.dtype(dt).name

        def to_gpu(m):
            return csp.csr_matrix((cp.asarray(m.data.astype(dt)), cp.asarray(m.indices),
                                   cp.asarray(m.indptr)), shape=m.shape)
        stage = 'upload'
        t0 = now()
        # User chunks [lo, hi) of at most chunk_nnz ratings; per chunk the user-major right
        # operands and the item-major left ones (whose tile rows are sliced).
        bounds = [0]
        if args.chunk_nnz > 0:
            cuts = np.searchsorted(R.indptr, np.arange(args.chunk_nnz, R.nnz, args.chunk_nnz), side='right') - 1
            bounds += [int(c) for c in cuts if c > 0]
        bounds = sorted(set(bounds)) + [n_users]
        chunks = []
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            Bc, Rc, R2c = B[lo:hi], R[lo:hi], R2[lo:hi]
            chunks.append((to_gpu(Bc), to_gpu(Rc), to_gpu(R2c),
                           to_gpu(Bc.T.tocsr()), to_gpu(Rc.T.tocsr()), to_gpu(R2c.T.tocsr())))
        cp.cuda.Device().synchronize()
        row['upload_s'] = round(now() - t0, 3)
        row['user_chunks'] = len(chunks)

        if args.tile == 'auto':
            # Per SpGEMM: at most 2^30 intermediate products, and its buffers (about 28 bytes a
            # product in float32, 40 in float64; 37 GB for 1e9 products in float64 ran out of
            # memory at the Netflix size) within 30% of the free memory; about 16 dense float64
            # tile-sized arrays at the peak within another 30%.
            per_item = work / max(n_items, 1) / len(chunks)  # avg. products per target item and chunk
            cp.get_default_memory_pool().free_all_blocks()
            free = cp.cuda.Device().mem_info[0]
            products = min(1 << 30, 0.3 * free / (28 if dt == np.float32 else 40))
            by_mem = 0.3 * free / (n_items * 8 * 16)
            tile = int(max(16, min(4096, products / max(per_item, 1.0), by_mem)))
            tile -= tile % 16
        else:
            tile = int(args.tile)
        row['tile'] = tile

        targets, partial = target_items(n_items, args.max_items)
        contiguous = not partial

        def rows_of(m, rows_items):
            if contiguous:
                return m[int(rows_items[0]):int(rows_items[-1]) + 1]
            t = len(rows_items)  # selector product: picks rows of m
            P = csp.csr_matrix((cp.ones(t, dtype=dt), cp.asarray(rows_items.astype(np.int32)),
                                cp.arange(t + 1, dtype=np.int32)), shape=(t, n_items))
            return P @ m

        def tile_sims(rows_items):
            sums = None
            for gB, gR, gR2, gBt, gRt, gRt2 in chunks:
                bt, rt, rt2 = rows_of(gBt, rows_items), rows_of(gRt, rows_items), rows_of(gRt2, rows_items)
                part = [(a @ b).toarray().astype(cp.float64)
                        for a, b in ((bt, gB), (rt, gB), (bt, gR), (rt2, gB), (bt, gR2), (rt, gR))]
                sums = part if sums is None else [x + y for x, y in zip(sums, part)]
            S = pearson(*sums, args.min_support, cp)
            S[cp.arange(len(rows_items)), cp.asarray(rows_items)] = 0.0
            return S, sums[0]

        g_counts = cp.asarray(counts.astype(np.float64))

        def diag_wrong(N, rows_items):
            g_rows = cp.asarray(rows_items)
            return cp.any(N[cp.arange(len(rows_items)), g_rows] != g_counts[g_rows])

        stage = 'warm-up'  # also compiles CuPy's kernels outside the timed loop
        first = targets[:tile]
        S, N = tile_sims(first)
        select_topk(S.copy(), args.k, cp, N)
        diag_wrong(N, first).get()
        cp.cuda.Device().synchronize()
        if not args.no_validate:
            stage = 'validate'
            pick = first[:8]
            n_diag = N[cp.arange(len(first)), cp.asarray(first)].get()
            ok_diag = bool(np.array_equal(n_diag, counts[first].astype(np.float64)))
            host = host_products(Bt[pick], Rt[pick], Rt2[pick], B, R, R2)
            hs = pearson(*host, args.min_support, np)
            hs[np.arange(len(pick)), pick] = 0.0
            diff = float(np.max(np.abs(hs - S[:len(pick)].get()))) if len(pick) else 0.0
            row.update({'validated': ok_diag and diff < 1e-6, 'n_diag_matches_counts': ok_diag,
                        'max_abs_diff_vs_cpu': diff})
            if not row['validated']:
                row.update({'status': 'wrong', 'stage': stage, 'error_kind': 'validation_failed',
                            'error': 'the first tile differs from SciPy on the CPU; not timed'})
                emit(row)
                return
        del S, N
        bad_tiles = cp.zeros((), dtype=cp.int64)

        stage = 'tiles'
        writer = NeighborWriter(args.neighbors_out, d['item_ids'])
        start, end = cp.cuda.Event(), cp.cuda.Event()
        cp.cuda.Device().synchronize()
        t0 = now()
        start.record()
        for s in range(0, len(targets), tile):
            rows_items = targets[s:s + tile]
            S, N = tile_sims(rows_items)
            bad_tiles += diag_wrong(N, rows_items)
            r, c, v, sup = select_topk(S, args.k, cp, N)
            writer.add(rows_items, r, c, v, sup)
            del S, N
            row['items_done'] = s + len(rows_items)
        end.record()
        end.synchronize()
        t_sim = now() - t0
        writer.close()
        row['gpu_event_s'] = round(cp.cuda.get_elapsed_time(start, end) / 1000.0, 3)
        row['tiles_with_wrong_n_diagonal'] = int(bad_tiles.get())
        row['status'] = 'ok' if row['tiles_with_wrong_n_diagonal'] == 0 else 'wrong'
        emit(finish_row(row, len(targets), n_items, t_sim, partial))
    except Exception as e:  # report, don't crash: a failure is a result for a peer
        kind, msg = classify(e)
        row.update({'status': 'failed', 'stage': stage, 'error_kind': kind, 'error': msg[:500]})
        emit(row)
        traceback.print_exc(file=sys.stderr)


if __name__ == '__main__':
    main()
