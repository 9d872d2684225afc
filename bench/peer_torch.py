#!/usr/bin/env python3
"""PyTorch GPU peer: item-item Pearson over co-raters + top-k with dense fp16 item tiles.

The ratings live on the GPU as three dense item-major matrices (items x users): Bt (0/1),
Rt and Rt2 = Rt o Rt, in fp16 (exact for half-star ratings). For a tile T of target items,
six GEMMs with fp32 output give the co-rating sums against all items,
    N = Bt_T Bt^T, Sx = Rt_T Bt^T, Sy = Bt_T Rt^T, Sxx = Rt2_T Bt^T, Syy = Bt_T Rt2^T, Sxy = Rt_T Rt^T,
which are combined in float64 (CONTRACT.md §2) and cut to the top-k positive neighbours (torch.topk
for the threshold, then exact ties by index). fp16 x fp16 -> fp32 needs torch.mm(...,
out_dtype=torch.float32) (PyTorch 2.8+); without it the matrices are kept in fp32 (TF32 off).

Timing: one warm-up tile (not timed; it also checks the first tile against SciPy on the CPU),
then CUDA events around the tile loop. Both dimensions are padded to multiples of 128 (odd
leading dimensions made the GEMMs 5x slower). Out of memory is reported as a JSON row with
"status": "failed", "error_kind": "out_of_memory", not as a traceback. The three dense matrices
of the Netflix size take 3 x 17,792 x 480,256 x 2 bytes = 51 GB; on an 80 GB H100 the run
peaked at 54.6 GB and fit.
"""
import argparse
import sys
import traceback

import numpy as np

from peer_common import (NeighborWriter, add_common_args, base_row, emit, finish_row,
                         load_ratings, now, pearson, target_items)


def torch_pearson(torch, N, Sx, Sy, Sxx, Syy, Sxy, min_support):
    num = N * Sxy - Sx * Sy
    den = torch.sqrt(torch.clamp(N * Sxx - Sx * Sx, min=0) * torch.clamp(N * Syy - Sy * Sy, min=0))
    ok = (N >= max(min_support, 1)) & (den > 0)
    sim = torch.where(ok, num / torch.where(ok, den, torch.ones_like(den)), torch.zeros_like(den))
    return torch.clamp(sim, -1.0, 1.0)


def torch_select_topk(torch, S, N, k):
    """As peer_common.select_topk: top-k positive per row, exact ties by ascending column."""
    n_rows, m = S.shape
    S[~(S > 0)] = float('-inf')
    k_eff = min(k, m)
    thr = torch.topk(S, k_eff, dim=1, sorted=True).values[:, -1]
    gt = S > thr[:, None]
    eq = (S == thr[:, None]) & torch.isfinite(S)
    need = k_eff - gt.sum(dim=1)
    sel = gt | (eq & (torch.cumsum(eq.to(torch.int32), dim=1) <= need[:, None]))
    rows, cols = torch.nonzero(sel, as_tuple=True)
    vals, sup = S[rows, cols], N[rows, cols]
    rows, cols, vals, sup = (t.cpu().numpy() for t in (rows, cols, vals, sup))
    order = np.lexsort((cols, -vals, rows))
    return rows[order], cols[order], vals[order], sup[order]


def classify(e):
    msg = f'{type(e).__name__}: {e}'
    if 'OutOfMemory' in msg or 'out of memory' in msg.lower() or 'CUBLAS_STATUS_ALLOC_FAILED' in msg:
        return 'out_of_memory', msg
    return 'error', msg


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    add_common_args(ap, tile_default=2048)
    ap.add_argument('--dtype', choices=('fp16', 'fp32'), default='fp16',
                    help='storage/GEMM input type (default fp16, fp32 output)')
    ap.add_argument('--no-validate', action='store_true', help='skip the CPU check of the first tile')
    args = ap.parse_args()

    t0 = now()
    d = load_ratings(args.ratings)
    n_users, n_items = len(d['user_ids']), len(d['item_ids'])
    row = base_row('torch', args, d, now() - t0)
    stage = 'import'
    try:
        import torch
        row['torch'] = torch.__version__
        dev = torch.device('cuda')
        row['device'] = torch.cuda.get_device_name(dev)
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False

        dtype = torch.float16 if args.dtype == 'fp16' else torch.float32
        if dtype == torch.float16:
            try:
                a = torch.ones((4, 4), dtype=torch.float16, device=dev)
                torch.mm(a, a, out_dtype=torch.float32)
            except (TypeError, RuntimeError) as e:
                row['note_dtype'] = f'no fp16->fp32 torch.mm ({type(e).__name__}); fp32 used'
                dtype = torch.float32
        row['gemm_dtype'] = 'fp16 in, fp32 out' if dtype == torch.float16 else 'fp32 (TF32 off)'

        def mm(a, b):  # (T x U) @ (M x U)^T -> T x M float32
            if dtype == torch.float16:
                return torch.mm(a, b.t(), out_dtype=torch.float32)
            return torch.mm(a, b.t())

        stage = 'dense matrices'
        torch.cuda.synchronize()
        t0 = now()
        ii = torch.from_numpy(d['i'].astype(np.int64)).to(dev)
        uu = torch.from_numpy(d['u'].astype(np.int64)).to(dev)
        rr = torch.from_numpy(d['r']).to(dev, dtype)
        # Both dimensions padded with zeros to multiples of 128: odd leading dimensions (138,493
        # users; 17,770 items) keep cuBLAS off its fast tensor-core kernels. Padded items have
        # N = 0, so similarity 0, and are never selected.
        pad_u, pad_m = -(-n_users // 128) * 128, -(-n_items // 128) * 128
        Rt = torch.zeros((pad_m, pad_u), dtype=dtype, device=dev)
        Rt[ii, uu] = rr
        Bt = torch.zeros_like(Rt)
        Bt[ii, uu] = 1
        del ii, uu, rr
        Rt2 = Rt * Rt
        torch.cuda.synchronize()
        row['dense_build_s'] = round(now() - t0, 3)
        row['dense_gb'] = round(3 * pad_m * pad_u * Rt.element_size() / 1e9, 2)

        tile = int(args.tile)
        targets, partial = target_items(n_items, args.max_items)
        idx_all = torch.from_numpy(targets).to(dev)

        def tile_sims(s, ev):
            rows_items = targets[s:s + tile]
            if partial:
                idx = idx_all[s:s + tile]
                a_b, a_r, a_r2 = Bt.index_select(0, idx), Rt.index_select(0, idx), Rt2.index_select(0, idx)
            else:
                lo, hi = int(rows_items[0]), int(rows_items[-1]) + 1
                a_b, a_r, a_r2 = Bt[lo:hi], Rt[lo:hi], Rt2[lo:hi]
            ev[0].record()
            sums = [mm(a, b) for a, b in ((a_b, Bt), (a_r, Bt), (a_b, Rt), (a_r2, Bt), (a_b, Rt2), (a_r, Rt))]
            ev[1].record()
            sums = [x.double() for x in sums]
            S = torch_pearson(torch, *sums, args.min_support)
            S[torch.arange(len(rows_items), device=dev), idx_all[s:s + tile]] = 0.0
            return rows_items, S, sums[0]

        def events():
            return [torch.cuda.Event(enable_timing=True) for _ in range(2)]

        stage = 'warm-up'
        first, S, N = tile_sims(0, events())
        torch_select_topk(torch, S.clone(), N, args.k)
        torch.cuda.synchronize()
        if not args.no_validate:
            stage = 'validate'
            import scipy.sparse as sp
            R = sp.csr_matrix((d['r'], (d['u'], d['i'])), shape=(n_users, n_items), dtype=np.float64)
            B = R.copy(); B.data[:] = 1.0
            R2 = R.copy(); R2.data **= 2
            Rt_h = R.T.tocsr()
            pick = first[:8]
            bt, rt = Rt_h[pick].copy(), Rt_h[pick]
            bt.data[:] = 1.0
            rt2 = rt.copy(); rt2.data **= 2
            host = [(a @ b).toarray() for a, b in ((bt, B), (rt, B), (bt, R), (rt2, B), (bt, R2), (rt, R))]
            hs = pearson(*host, args.min_support, np)
            hs[np.arange(len(pick)), pick] = 0.0
            diff = float(np.max(np.abs(hs - S[:len(pick), :n_items].cpu().numpy())))
            row.update({'validated': diff < 1e-6, 'max_abs_diff_vs_cpu': diff})
        del S, N

        stage = 'tiles'
        writer = NeighborWriter(args.neighbors_out, d['item_ids'])
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        t0 = now()
        start.record()
        gemm_ev = []
        for s in range(0, len(targets), tile):
            gemm_ev.append(events())
            rows_items, S, N = tile_sims(s, gemm_ev[-1])
            r, c, v, sup = torch_select_topk(torch, S, N, args.k)
            writer.add(rows_items, r, c, v, sup)
            del S, N
        end.record()
        end.synchronize()
        t_sim = now() - t0
        writer.close()
        row['gpu_event_s'] = round(start.elapsed_time(end) / 1000.0, 3)
        row['gemm_s'] = round(sum(a.elapsed_time(b) for a, b in gemm_ev) / 1000.0, 3)
        row['peak_gpu_gb'] = round(torch.cuda.max_memory_allocated() / 1e9, 2)
        row['tile'] = tile
        row['status'] = 'ok' if row.get('validated', True) else 'wrong'
        emit(finish_row(row, len(targets), n_items, t_sim, partial))
    except Exception as e:  # report, don't crash: a failure is a result for a peer
        kind, msg = classify(e)
        row.update({'status': 'failed', 'stage': stage, 'error_kind': kind, 'error': msg[:500]})
        emit(row)
        traceback.print_exc(file=sys.stderr)


if __name__ == '__main__':
    main()
