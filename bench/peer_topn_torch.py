#!/usr/bin/env python3
"""PyTorch peer for top-N: scores = R @ L for batches of users, rated items masked, torch.topk.

What a data scientist would write for item-based top-N (CONTRACT.md §5) with recknn's neighbour lists:
  R  users x items, torch sparse CSR, the rating pattern as 1s (the ratings file);
  L  items x items, L[j, c] = similarity of c in j's list (recknn's neighbors.csv);
  scores(u, c) = (R @ L)[u, c] = sum over the items j that u rated of sim(j, c), c in j's list.
For each batch of users: the batch's rows of R (a CSR slice, no copy of the column indices)
times L, a dense float32 block (batch x items); the items the user rated are set to -inf
(index_put on the batch's nonzeros); torch.topk(N) per row; entries with a score <= 0 are
dropped afterwards (CONTRACT.md §5: only positive scores are recommended).

Two routes, both run by default on the same loaded data (--L dense,sparse), one JSON row each:
  dense   L as a dense float32 matrix (items^2 x 4 bytes: 2.9 GB at ML-20M size, 1.3 GB at
          Netflix size): R_b @ L is cuSPARSE SpMM (sparse x dense);
  sparse  L as sparse CSR: R_b @ L is cuSPARSE SpGEMM (sparse x sparse -> sparse CSR), made
          dense with .to_dense() for the mask and topk. PyTorch 1.13 on the CPU has no CSR x CSR
          product without MKL: there the route falls back to COO x COO (torch.sparse.mm) and the
          row says so ("route").
Indices are int32 (cuSPARSE's SpGEMM takes 32-bit indices; every count here fits); int64 is
used when a product refuses int32.

Batches: users in ascending index order, at most --batch users (auto: as many as fit a fraction
--mem-fraction of the free GPU memory at about 3 x items x 4 bytes a user for the dense block and
topk's work space, capped at 32,768), and at most 2^30 intermediate products (sum over the
batch's users of the lengths of their items' lists): cuSPARSE SpGEMM's default algorithm cannot
count more than 2^31 - 1 (--product-cap). Out of memory in the warm-up batch halves the batch (at most 4 times,
noted in the row); out of memory later is a failed row ("error_kind": "out_of_memory"), as the
other peers report it.

Timing, as the other peers: the first batch is run once as a warm-up (not timed; cuSPARSE
handles, the caching allocator), then CUDA events around the loop over all batches; the loop
includes the product, the mask, topk and the copy of each batch's N scores and items to the
host (the data scientist's .cpu()). "matmul_s" and "select_s" split it (events per batch).
Not timed: reading the files (pyarrow, pandas or numpy), the dense ids (torch.unique on the
device), building R and L on the device ("build_s"), writing and comparing the results.
On the CPU (no CUDA, e.g. PyTorch 1.13 for a test) the wall clock replaces the events.

Comparison (--compare recknn's recommendations.csv): per user, the item sets of the two top-N
lists. "agree_sets": fraction of users with the same set; "agree_modulo_ties": the same set, or
lists whose sorted scores agree within --rtol (relative; --atol absolute) rank by rank, i.e.
they differ only in which of equally scored items made the cut (float32 sums here, 64-bit fixed
point in recknn, and topk's order among equal values is unspecified); "max_score_diff": largest
score difference rank by rank among the agreeing users. Users absent from a file have an empty
list there.

Output: one JSON line per route on stdout (peer_common.emit), e.g.
  {"peer": "torch-topn", "L": "dense", "route": "csr @ dense (SpMM)", "topn_s": ..., "device": ...}
--recommendations-out CSV writes user,rank,item,score (raw ids, ties by ascending item index
after topk) for the first route (a suffix -ROUTE for the others).
"""
import argparse
import os
import sys
import traceback
import warnings

import numpy as np

from peer_common import classify_error, emit, now, read_columns, read_csv_columns, sniff_format

PRODUCT_CAP = 1 << 30


def read_pattern(path):
    """(users int64, items int64) raw ids in file order; only the first two columns are parsed."""
    fmt, header = sniff_format(path)
    if fmt == 'dat':
        u, i, _ = read_columns(path)
        return u, i
    return read_csv_columns(path, (0, 1), ('int64', 'int64'), sep='\t' if fmt == 'tsv' else ',',
                            header=header)


def has_rows(path):
    """Whether the file has a non-empty line after its header."""
    with open(path, 'rb') as f:
        f.readline()
        return f.readline().strip() != b''


def read_neighbors(path):
    """(item raw, neighbor raw, rank, similarity) columns of neighbors.csv."""
    with open(path) as f:
        head = f.readline().strip().split(',')
    want = ('item', 'neighbor', 'rank', 'similarity')
    try:
        pos = [head.index(w) for w in want]
    except ValueError:
        raise SystemExit(f'{path}: expected a header with {",".join(want)}, got {",".join(head)}')
    if not has_rows(path):  # header only: no lists at all
        return (np.zeros(0, np.int64),) * 3 + (np.zeros(0, np.float64),)
    return read_csv_columns(path, pos, ('int64', 'int64', 'int64', 'float64'), header=True)


def read_recommendations(path):
    """(user raw, rank, item raw, score) columns of a recommendations.csv."""
    with open(path) as f:
        head = f.readline().strip().split(',')
    want = ('user', 'rank', 'item', 'score')
    try:
        pos = [head.index(w) for w in want]
    except ValueError:
        raise SystemExit(f'{path}: expected a header with {",".join(want)}, got {",".join(head)}')
    if not has_rows(path):
        return (np.zeros(0, np.int64),) * 3 + (np.zeros(0, np.float64),)
    return read_csv_columns(path, pos, ('int64', 'int64', 'int64', 'float64'), header=True)


def dense_index(ids, raw, what, path):
    """Positions of raw ids in the sorted array ids; an unknown id stops the run."""
    if len(raw) == 0:
        return np.zeros(0, dtype=np.int64)
    if len(ids) == 0:
        raise SystemExit(f'{path}: {what} {raw[0]} is not in the ratings file')
    pos = np.minimum(np.searchsorted(ids, raw), len(ids) - 1)
    bad = ids[pos] != raw
    if np.any(bad):
        raise SystemExit(f'{path}: {what} {raw[np.argmax(bad)]} is not in the ratings file')
    return pos


def lookup(ids, raw):
    """(positions, found) of raw ids in the sorted array ids."""
    if len(ids) == 0 or len(raw) == 0:
        return np.zeros(len(raw), dtype=np.int64), np.zeros(len(raw), dtype=bool)
    pos = np.minimum(np.searchsorted(ids, raw), len(ids) - 1)
    return pos, ids[pos] == raw


def batches(cum_products, max_users, cap):
    """[(first, end)] over users 0..n-1: at most max_users users and (unless one user alone
    exceeds it) at most cap products each."""
    n = len(cum_products) - 1
    out, s = [], 0
    while s < n:
        e = min(s + max_users, n)
        lim = int(np.searchsorted(cum_products, cum_products[s] + cap, side='right')) - 1
        e = max(s + 1, min(e, lim))
        out.append((s, e))
        s = e
    return out


class Clock:
    """CUDA events on the GPU, perf_counter on the CPU."""

    def __init__(self, torch, cuda):
        self.torch, self.cuda = torch, cuda

    def mark(self):
        if self.cuda:
            ev = self.torch.cuda.Event(enable_timing=True)
            ev.record()
            return ev
        return now()

    def seconds(self, a, b):
        if self.cuda:
            b.synchronize()
            return a.elapsed_time(b) / 1000.0
        return b - a


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('ratings', help='MovieLens CSV (or tsv / dat): the training ratings recknn read')
    ap.add_argument('neighbors', help="recknn's neighbors.csv (item,neighbor,rank,similarity,support)")
    ap.add_argument('-n', '--top-n', type=int, default=10, help='recommendations per user (default 10)')
    ap.add_argument('--L', dest='routes', default='dense,sparse',
                    help='comma-separated routes: dense (SpMM), sparse (SpGEMM); default both')
    ap.add_argument('--batch', default='auto', help='users per batch, or auto (default)')
    ap.add_argument('--mem-fraction', type=float, default=0.5,
                    help='share of the free GPU memory for a batch (auto batch; default 0.5)')
    ap.add_argument('--device', default='auto', help='auto (cuda when available), cuda, cpu')
    ap.add_argument('--compare', metavar='CSV', help="recknn's recommendations.csv to compare with")
    ap.add_argument('--rtol', type=float, default=1e-5, help='relative score tolerance of ties (1e-5)')
    ap.add_argument('--atol', type=float, default=1e-6, help='absolute score tolerance of ties (1e-6)')
    ap.add_argument('--recommendations-out', metavar='CSV', help='write user,rank,item,score')
    ap.add_argument('--threads', type=int, default=0, help='CPU threads for torch (default: all)')
    ap.add_argument('--product-cap', type=int, default=PRODUCT_CAP,
                    help='intermediate products a batch at most (default 2^30)')
    args = ap.parse_args()
    warnings.filterwarnings('ignore', message='.*Sparse CSR tensor support is in beta.*')
    warnings.filterwarnings('ignore', message='.*[Ss]parse.*beta.*')

    row = {'peer': 'torch-topn', 'file': os.path.basename(args.ratings),
           'neighbors': os.path.basename(os.path.dirname(os.path.abspath(args.neighbors))) + '/'
           + os.path.basename(args.neighbors), 'n': args.top_n}
    stage = 'read'
    try:
        t0 = now()
        u_raw, i_raw = read_pattern(args.ratings)
        nb_item, nb_nbr, nb_rank, nb_sim = read_neighbors(args.neighbors)
        row['read_s'] = round(now() - t0, 3)

        stage = 'import'
        import torch
        row['torch'] = torch.__version__
        if args.threads > 0:
            torch.set_num_threads(args.threads)
        if args.device == 'auto':
            dev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
        else:
            dev = torch.device(args.device)
        cuda = dev.type == 'cuda'
        row['device'] = torch.cuda.get_device_name(dev) if cuda else 'cpu'
        clock = Clock(torch, cuda)
        sync = torch.cuda.synchronize if cuda else (lambda: None)

        # ---- dense ids, R and L on the device (not timed as the stage) ----
        stage = 'build'
        sync()
        t0 = now()
        u_t = torch.from_numpy(np.ascontiguousarray(u_raw, dtype=np.int64)).to(dev)
        i_t = torch.from_numpy(np.ascontiguousarray(i_raw, dtype=np.int64)).to(dev)
        del u_raw, i_raw
        user_ids_t, u_t = torch.unique(u_t, sorted=True, return_inverse=True)
        item_ids_t, i_t = torch.unique(i_t, sorted=True, return_inverse=True)
        n_users, n_items = len(user_ids_t), len(item_ids_t)
        lines = len(u_t)
        if lines == 0:
            raise SystemExit(f'{args.ratings}: no ratings')
        key = u_t * n_items + i_t
        if lines > 1 and not bool((key[1:] > key[:-1]).all()):
            ks, order = torch.sort(key, stable=True)
            last = torch.ones(lines, dtype=torch.bool, device=dev)
            last[:-1] = ks[1:] != ks[:-1]
            keep = order[last]  # the last of each (user, item) in file order; in key order
            u_t, i_t = u_t[keep], i_t[keep]
            del ks, order, last, keep
        del key
        nnz = len(u_t)
        user_ids, item_ids = user_ids_t.cpu().numpy(), item_ids_t.cpu().numpy()
        del user_ids_t, item_ids_t
        row.update({'users': int(n_users), 'items': int(n_items), 'ratings': int(nnz),
                    'duplicates': int(lines - nnz)})

        # L: rows = list owner j, columns = neighbour c, values = similarity
        lr = torch.from_numpy(dense_index(item_ids, nb_item, 'item', args.neighbors)).to(dev)
        lc = torch.from_numpy(dense_index(item_ids, nb_nbr, 'neighbor', args.neighbors)).to(dev)
        lv = torch.from_numpy(nb_sim.astype(np.float32)).to(dev)
        row['k'] = int(nb_rank.max()) if len(nb_rank) else 0
        del nb_item, nb_nbr, nb_rank, nb_sim
        lkey = lr * n_items + lc
        lkey, lo = torch.sort(lkey)
        lr, lc, lv = lr[lo], lc[lo], lv[lo]
        if len(lkey) > 1 and bool((lkey[1:] == lkey[:-1]).any()):
            raise SystemExit(f'{args.neighbors}: a (item, neighbor) pair occurs twice')
        del lkey, lo
        list_len = torch.bincount(lr, minlength=n_items)
        item_deg = torch.bincount(i_t, minlength=n_items)
        # list entries summed into scores: sum over users of sum over their items of len[j]
        row['list_entries'] = int(len(lv))
        row['updates'] = int((item_deg * list_len).sum())
        counts = torch.bincount(u_t, minlength=n_users)
        crow64 = torch.zeros(n_users + 1, dtype=torch.int64, device=dev)
        crow64[1:] = torch.cumsum(counts, 0)
        crow_host = crow64.cpu().numpy()
        # products of each user (the ratings are in user order): prefix sums at the row starts
        cum = torch.zeros(nnz + 1, dtype=torch.int64, device=dev)
        cum[1:] = torch.cumsum(list_len[i_t], 0)
        cum_products = cum[crow64].cpu().numpy()
        del cum, item_deg
        lcrow64 = torch.zeros(n_items + 1, dtype=torch.int64, device=dev)
        lcrow64[1:] = torch.cumsum(list_len, 0)
        del counts, list_len

        def csr_parts(idx_dtype):
            return (crow64.to(idx_dtype), i_t.to(idx_dtype), lcrow64.to(idx_dtype), lc.to(idx_dtype))

        ones = torch.ones(nnz, dtype=torch.float32, device=dev)
        sync()
        row['build_s'] = round(now() - t0, 3)

        n_eff = min(args.top_n, n_items)
        if n_eff < 1:
            raise SystemExit('--top-n must be >= 1')
        routes = [r.strip() for r in args.routes.split(',') if r.strip()]
        for r in routes:
            if r not in ('dense', 'sparse'):
                raise SystemExit(f'unknown route {r} (dense, sparse)')
        base = dict(row)
        first_written = False
        recknn = read_recommendations(args.compare) if args.compare else None
        for route in routes:
            row = dict(base)
            row['L'] = route
            stage = f'{route}: set-up'
            try:
                res = run_route(torch, dev, cuda, clock, sync, route, args, row, n_users, n_items, n_eff,
                                csr_parts, ones, u_t, lr, lv, crow_host, cum_products)
            except Exception as e:  # a failure is a result for a peer: report it, go on
                kind, msg = classify_error(e)
                row.update({'status': 'failed', 'stage': row.get('stage', stage), 'error_kind': kind,
                            'error': msg[:500]})
                emit(row)
                traceback.print_exc(file=sys.stderr)
                if cuda:
                    torch.cuda.empty_cache()
                continue
            top_items, top_scores = res
            if recknn is not None:
                compare(row, top_items, top_scores, recknn, user_ids, item_ids, args)
            if args.recommendations_out:
                path = args.recommendations_out
                if first_written:
                    stem, ext = os.path.splitext(path)
                    path = f'{stem}-{route}{ext}'
                write_recommendations(path, top_items, top_scores, user_ids, item_ids)
                first_written = True
                row['recommendations_out'] = path
            row['status'] = 'ok' if row.get('agree_modulo_ties', 1.0) >= 0.999 else 'wrong'
            emit(row)
    except SystemExit as e:
        row.update({'status': 'failed', 'stage': stage, 'error_kind': 'input', 'error': str(e)[:500]})
        emit(row)
        sys.exit(1)
    except Exception as e:
        kind, msg = classify_error(e)
        row.update({'status': 'failed', 'stage': stage, 'error_kind': kind, 'error': msg[:500]})
        emit(row)
        traceback.print_exc(file=sys.stderr)


def run_route(torch, dev, cuda, clock, sync, route, args, row, n_users, n_items, n_eff,
              csr_parts, ones, u_t, lr, lv, crow_host, cum_products):
    """Warm-up and timed loop of one route. Returns host arrays (items, scores), n_users x N:
    items -1 and scores 0 where a list is shorter than N."""
    neg_inf = torch.tensor(float('-inf'), device=dev)
    idx_dtypes = [torch.int32, torch.int64]
    state = {}

    def prepare(idx_dtype):
        crow, col, lcrow, lcol = csr_parts(idx_dtype)
        if route == 'dense':
            L = torch.zeros((n_items, n_items), dtype=torch.float32, device=dev)
            L[lr, lcol.long()] = lv
            state.update(L=L, how='csr @ dense (SpMM)')
        else:
            L = torch.sparse_csr_tensor(lcrow, lcol, lv, size=(n_items, n_items))
            state.update(L=L, how='csr @ csr (SpGEMM)')
        state.update(crow=crow, col=col, idx=idx_dtype, coo=False)

    def product(s, e):
        a, b = int(crow_host[s]), int(crow_host[e])
        crow, col = state['crow'], state['col']
        Rb = torch.sparse_csr_tensor(crow[s:e + 1] - crow[s], col[a:b], ones[a:b], size=(e - s, n_items))
        if route == 'dense':
            return Rb @ state['L'], a, b
        if state['coo']:
            return torch.sparse.mm(Rb.to_sparse_coo(), state['Lcoo']).to_dense(), a, b
        return (Rb @ state['L']).to_dense(), a, b

    def one_batch(s, e, ev=None):
        if ev is not None:
            ev.append(clock.mark())
        S, a, b = product(s, e)
        if ev is not None:
            ev.append(clock.mark())
        S.index_put_((u_t[a:b] - s, state['col'][a:b].long()), neg_inf)
        vals, idx = torch.topk(S, n_eff, dim=1)
        out = (vals.cpu(), idx.cpu())
        if ev is not None:
            ev.append(clock.mark())
        del S
        return out

    if args.batch == 'auto':
        if cuda:
            free, _ = torch.cuda.mem_get_info(dev)
            fit = int(free * args.mem_fraction // (3 * 4 * n_items))
        else:
            fit = 1 << 14
        max_users = max(1, min(fit, 32768))
    else:
        max_users = max(1, int(args.batch))

    # ---- warm-up: the first batch, with the fallbacks decided here ----
    row['stage'] = 'warm-up'
    prepare(idx_dtypes[0])
    retries, notes = 0, []
    while True:
        plan = batches(cum_products, max_users, args.product_cap)
        s, e = plan[0]
        try:
            one_batch(s, e)
            break
        except RuntimeError as ex:
            msg = str(ex)
            kind, _ = classify_error(ex)
            if kind == 'out_of_memory' and retries < 4 and max_users > 1:
                retries += 1
                max_users = max(1, max_users // 2)
                notes.append(f'out of memory at a batch of {e - s} users: halved')
                if cuda:
                    torch.cuda.empty_cache()
                continue
            if route == 'sparse' and not state['coo'] and 'not implemented' in msg:
                notes.append('CSR @ CSR not implemented here (' + msg.split('.')[0][:120] + '): COO @ COO')
                state['coo'] = True
                state['Lcoo'] = state['L'].to_sparse_coo()
                state['how'] = 'coo @ coo (torch.sparse.mm)'
                continue
            if state['idx'] == torch.int32 and ('int32' in msg or 'Int' in msg or 'index' in msg.lower()):
                notes.append('int32 indices refused (' + msg[:120] + '): int64')
                prepare(torch.int64)
                continue
            raise
    sync()
    row.update({'route': state['how'], 'index_dtype': str(state['idx']).replace('torch.', ''),
                'batch': int(max_users), 'batches': len(plan)})
    if notes:
        row['notes'] = notes
    if cuda:
        torch.cuda.reset_peak_memory_stats(dev)

    # ---- timed: every batch ----
    row['stage'] = 'timed loop'
    items = np.full((n_users, n_eff), -1, dtype=np.int64)
    scores = np.zeros((n_users, n_eff), dtype=np.float64)
    evs = []
    sync()
    t0 = now()
    start = clock.mark()
    for s, e in plan:
        evs.append([])
        vals, idx = one_batch(s, e, evs[-1])
        v = vals.numpy().astype(np.float64)
        ok = v > 0
        items[s:e] = np.where(ok, idx.numpy(), -1)
        scores[s:e] = np.where(ok, v, 0.0)
    end = clock.mark()
    topn_s = clock.seconds(start, end)
    wall = now() - t0
    row.pop('stage', None)
    row.update({'topn_s': round(topn_s, 4), 'wall_s': round(wall, 4),
                'matmul_s': round(sum(clock.seconds(a, b) for a, b, _ in evs), 4),
                'select_s': round(sum(clock.seconds(b, c) for _, b, c in evs), 4),
                'users_per_s': round(n_users / topn_s, 1) if topn_s > 0 else None,
                'updates_per_s': round(row['updates'] / topn_s, 1) if topn_s > 0 else None,
                'rows': int((items >= 0).sum())})
    if cuda:
        row['peak_gpu_gb'] = round(torch.cuda.max_memory_allocated(dev) / 1e9, 2)
    state.clear()
    if cuda:
        torch.cuda.empty_cache()
    return items, scores


def order_lists(items, scores):
    """Each row by score descending, ties by ascending item index; empty slots (-1) last."""
    key_item = np.where(items >= 0, items, np.iinfo(np.int64).max)
    key_score = np.where(items >= 0, -scores, np.inf)
    o = np.lexsort((key_item, key_score), axis=1) if items.size else np.zeros_like(items)
    return np.take_along_axis(items, o, 1), np.take_along_axis(scores, o, 1)


def compare(row, items, scores, rec, user_ids, item_ids, args):
    ru, rrank, ri, rs = rec
    n_users, n = items.shape
    uq, ku = lookup(user_ids, ru)
    iq, ki = lookup(item_ids, ri)
    if not (ku.all() and ki.all()):  # ids the ratings file does not have: those users differ
        row['compare_unknown_ids'] = int((~ku).sum() + (~ki).sum())
        iq = np.where(ki, iq, -2)
        uq, iq, rrank, rs = uq[ku], iq[ku], rrank[ku], rs[ku]
    if len(rrank) and (rrank.min() < 1 or rrank.max() > n):
        row['compare_note'] = f'recknn ranks {int(rrank.min())}..{int(rrank.max())}, N here {n}'
        keep = (rrank >= 1) & (rrank <= n)
        uq, iq, rrank, rs = uq[keep], iq[keep], rrank[keep], rs[keep]
    q_items = np.full((n_users, n), -1, dtype=np.int64)
    q_scores = np.zeros((n_users, n), dtype=np.float64)
    q_items[uq, rrank - 1] = iq
    q_scores[uq, rrank - 1] = rs
    oa, ob = np.argsort(items, axis=1), np.argsort(q_items, axis=1)
    a, b = np.take_along_axis(items, oa, 1), np.take_along_axis(q_items, ob, 1)
    same_set = np.all(a == b, axis=1)
    # the same items: their scores, item by item
    da = np.abs(np.take_along_axis(scores, oa, 1) - np.take_along_axis(q_scores, ob, 1))
    da[~same_set] = 0.0
    da[a < 0] = 0.0
    tol_b = args.atol + args.rtol * np.abs(np.take_along_axis(q_scores, ob, 1))
    score_off = same_set & np.any(da > tol_b, axis=1)
    # rank by rank: lists that differ only in which equally scored items made the cut
    sa = -np.sort(-np.where(items >= 0, scores, -1.0), axis=1)
    sb = -np.sort(-np.where(q_items >= 0, q_scores, -1.0), axis=1)
    same_scores = np.all(np.abs(sa - sb) <= args.atol + args.rtol * np.abs(sb), axis=1)
    ties = ~same_set & same_scores
    differ = ~same_set & ~same_scores
    ok = (same_set & ~score_off) | ties
    row.update({'compared_users': int(n_users), 'recknn_rows': int(len(rs)),
                'agree_sets': round(float(same_set.mean()), 6) if n_users else None,
                'agree_modulo_ties': round(float(ok.mean()), 6) if n_users else None,
                'tie_users': int(ties.sum()), 'differ_users': int(differ.sum()),
                'score_off_users': int(score_off.sum()),
                'max_score_diff': float(da.max(initial=0.0))})
    for x in np.flatnonzero(differ)[:3]:
        print(f'peer_topn: user {user_ids[x]}: torch {item_ids[items[x][items[x] >= 0]].tolist()} '
              f'{np.round(sa[x][sa[x] > 0], 6).tolist()} | recknn {item_ids[q_items[x][q_items[x] >= 0]].tolist()} '
              f'{np.round(sb[x][sb[x] > 0], 6).tolist()}', file=sys.stderr)


def write_recommendations(path, items, scores, user_ids, item_ids):
    items, scores = order_lists(items, scores)
    u, r = np.nonzero(items >= 0)
    with open(path, 'w') as f:
        f.write('user,rank,item,score\n')
        step = 1 << 20
        for s in range(0, len(u), step):
            uu, rr = u[s:s + step], r[s:s + step]
            f.write(''.join(f'{a},{b},{c},{d:.9g}\n' for a, b, c, d in
                            zip(user_ids[uu], rr + 1, item_ids[items[uu, rr]], scores[uu, rr])))


if __name__ == '__main__':
    main()
