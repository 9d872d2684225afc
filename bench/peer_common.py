"""Shared parts of the benchmark peers (peer_scipy.py, peer_cupy.py, peer_torch.py,
peer_topn_torch.py).

Semantics follow CONTRACT.md §1-3: ids are mapped to dense indices in ascending numeric order, the last
of duplicate (user, item) pairs wins, Pearson is taken over co-raters (means over co-raters),
neighbour lists hold the k items with the highest positive similarity, ties by ascending index.
Every array function takes `xp` (numpy or cupy) so the GPU peers can reuse it.
"""
import json
import os
import sys
import time

import numpy as np


def now():
    return time.perf_counter()


def sniff_format(path):
    """('csv'|'tsv'|'dat', has_header) from the first line."""
    with open(path, 'rb') as f:
        first = f.readline()
    if b'::' in first:
        return 'dat', False
    delim = 'tsv' if b'\t' in first else 'csv'
    head = first.split(b'\t' if delim == 'tsv' else b',')[0].strip()
    try:
        float(head)
        return delim, False
    except ValueError:
        return delim, True


def read_csv_columns(path, usecols, types, sep=',', header=True):
    """Columns usecols (0-based positions) of a delimited text file as numpy arrays in file
    order, each of types[j] ('int64', 'float64' or 'float32'). Readers, fastest first:
    pyarrow's multi-threaded CSV reader, pandas' C reader (one core), numpy.loadtxt; a reader
    that is missing or fails hands over to the next (the failure noted on stderr)."""
    try:
        import pyarrow as pa
        import pyarrow.csv as pcsv
        names = [f'f{j}' for j in usecols]
        t = pcsv.read_csv(
            path,
            read_options=pcsv.ReadOptions(skip_rows=1 if header else 0, autogenerate_column_names=True,
                                          block_size=1 << 26),
            parse_options=pcsv.ParseOptions(delimiter=sep),
            convert_options=pcsv.ConvertOptions(include_columns=names,
                                                column_types={n: getattr(pa, ty)() for n, ty in zip(names, types)}))
        return [t.column(n).to_numpy() for n in names]
    except ImportError:
        pass
    except Exception as e:  # a reader problem is not a result: try the next reader
        print(f'peer: pyarrow could not read {path} ({type(e).__name__}: {e}); trying pandas', file=sys.stderr)
    try:
        import pandas as pd
        df = pd.read_csv(path, sep=sep, header=0 if header else None, usecols=list(usecols), engine='c',
                         dtype=None if header else dict(zip(usecols, types)))
        # usecols keeps file order of the columns: pick them by position in the order asked
        order = sorted(usecols)
        return [df.iloc[:, order.index(j)].to_numpy().astype(ty) for j, ty in zip(usecols, types)]
    except ImportError:
        pass
    a = np.loadtxt(path, delimiter=sep, skiprows=1 if header else 0, usecols=tuple(usecols),
                   dtype=np.float64, ndmin=2)
    return [a[:, n].astype(ty) for n, ty in enumerate(types)]


def read_columns(path):
    """(users int64, items int64, ratings float64) in file order (read_csv_columns)."""
    fmt, header = sniff_format(path)
    if fmt == 'dat':
        with open(path) as f:
            rows = [line.split('::')[:3] for line in f if line.strip()]
        a = np.array(rows, dtype=np.float64).reshape(-1, 3)
        return a[:, 0].astype(np.int64), a[:, 1].astype(np.int64), a[:, 2]
    u, i, r = read_csv_columns(path, (0, 1, 2), ('int64', 'int64', 'float64'),
                               sep='\t' if fmt == 'tsv' else ',', header=header)
    return u, i, r


def read_columns_cached(path):
    """read_columns, kept in PATH.npz beside the file when PEER_CACHE=1 (text parsing of the
    Netflix size takes about a minute with numpy; the cache is used while newer than PATH)."""
    cache = path + '.npz'
    use = os.environ.get('PEER_CACHE') == '1'
    if use and os.path.exists(cache) and os.path.getmtime(cache) >= os.path.getmtime(path):
        z = np.load(cache)
        return z['u'], z['i'], z['r']
    u, i, r = read_columns(path)
    if use:
        try:
            with open(cache + '.tmp', 'wb') as f:
                np.savez(f, u=u, i=i, r=r)
            os.replace(cache + '.tmp', cache)
        except OSError as e:
            print(f'peer: cannot write {cache}: {e}', file=sys.stderr)
    return u, i, r


def load_ratings(path):
    """Dense indices in ascending raw-id order; last duplicate wins. Returns a dict."""
    u_raw, i_raw, r = read_columns_cached(path)
    if len(r) == 0:
        raise SystemExit(f'{path}: no ratings')
    user_ids, u = np.unique(u_raw, return_inverse=True)
    item_ids, i = np.unique(i_raw, return_inverse=True)
    n_items = len(item_ids)
    key = u.astype(np.int64) * n_items + i
    if np.all(key[1:] > key[:-1]):  # already sorted by (user, item), no duplicates
        keep = np.arange(len(key))
    else:
        order = np.argsort(key, kind='stable')
        ks = key[order]
        last = np.ones(len(ks), dtype=bool)
        last[:-1] = ks[1:] != ks[:-1]
        keep = order[last]  # the last of each pair; sorted by (user, item): CSR order
    return {'u': u[keep].astype(np.int32), 'i': i[keep].astype(np.int32), 'r': r[keep],
            'user_ids': user_ids, 'item_ids': item_ids, 'lines': int(len(r)),
            'duplicates': int(len(r) - len(keep))}


def pearson(N, Sx, Sy, Sxx, Syy, Sxy, min_support, xp):
    """CONTRACT.md §2 Pearson over co-raters from the six sums (float64 arrays, same shape)."""
    num = N * Sxy - Sx * Sy
    den = xp.sqrt(xp.maximum(N * Sxx - Sx * Sx, 0) * xp.maximum(N * Syy - Sy * Sy, 0))
    ok = (N >= max(min_support, 1)) & (den > 0)
    sim = xp.where(ok, num / xp.where(ok, den, 1.0), 0.0)
    return xp.clip(sim, -1.0, 1.0)


def select_topk(S, k, xp, N=None):
    """Top-k positive entries per row of S (modified: its non-positive entries become -inf),
    exact ties by ascending column. Returns host arrays (rows, cols, vals, support) sorted by
    row, then similarity descending, then column ascending; support = N[rows, cols] (or None)."""
    n_rows, m = S.shape
    S[~(S > 0)] = -xp.inf
    k_eff = min(k, m)
    if k_eff <= 0 or n_rows == 0:
        e = np.zeros(0, dtype=np.int64)
        return e, e, np.zeros(0), e
    thr = xp.partition(S, m - k_eff, axis=1)[:, m - k_eff]  # k-th largest per row
    gt = S > thr[:, None]
    eq = (S == thr[:, None]) & xp.isfinite(S)
    need = k_eff - gt.sum(axis=1)
    sel = gt | (eq & (xp.cumsum(eq, axis=1) <= need[:, None]))
    rows, cols = xp.nonzero(sel)
    vals = S[rows, cols]
    sup = N[rows, cols] if N is not None else None
    if xp is not np:
        rows, cols, vals = rows.get(), cols.get(), vals.get()
        sup = sup.get() if sup is not None else None
    order = np.lexsort((cols, -vals, rows))
    return rows[order], cols[order], vals[order], (sup[order] if sup is not None else None)


class NeighborWriter:
    """item,neighbor,rank,similarity,support CSV (CONTRACT.md §7) with raw ids."""

    def __init__(self, path, item_ids):
        self.f = open(path, 'w') if path else None
        self.item_ids = item_ids
        if self.f:
            self.f.write('item,neighbor,rank,similarity,support\n')

    def add(self, row_items, rows, cols, vals, support):
        """rows index into row_items (the tile's global item indices)."""
        if not self.f or len(rows) == 0:
            return
        start = np.r_[0, np.flatnonzero(np.diff(rows)) + 1]
        rank = np.arange(len(rows)) - np.repeat(start, np.diff(np.r_[start, len(rows)])) + 1
        it = self.item_ids[row_items[rows]]
        nb = self.item_ids[cols]
        self.f.write(''.join(f'{a},{b},{c},{v:.9g},{int(s)}\n'
                             for a, b, c, v, s in zip(it, nb, rank, vals, support)))

    def close(self):
        if self.f:
            self.f.close()


def target_items(n_items, max_items):
    """All items, or max_items of them evenly spread over the index range (for extrapolation)."""
    if not max_items or max_items >= n_items:
        return np.arange(n_items), False
    return np.unique(np.linspace(0, n_items - 1, max_items).round().astype(np.int64)), True


def classify_error(e):
    """(error_kind, message) of a peer's failure: out_of_memory, cusparse_insufficient_resources
    or error (as peer_torch.py and peer_cupy.py classify)."""
    msg = f'{type(e).__name__}: {e}'
    if 'INSUFFICIENT_RESOURCES' in msg:
        return 'cusparse_insufficient_resources', msg
    if 'OutOfMemory' in msg or 'out of memory' in msg.lower() or 'ALLOC_FAILED' in msg:
        return 'out_of_memory', msg
    return 'error', msg


def emit(row, out=sys.stdout):
    out.write(json.dumps(row) + '\n')
    out.flush()


def base_row(peer, args, data, t_load):
    return {'peer': peer, 'file': os.path.basename(args.ratings), 'users': int(len(data['user_ids'])),
            'items': int(len(data['item_ids'])), 'ratings': int(len(data['r'])),
            'duplicates': data['duplicates'], 'k': args.k, 'min_support': args.min_support,
            'tile': args.tile, 'load_s': round(t_load, 3)}


def finish_row(row, n_done, n_items, t_sim, extrapolated):
    row.update({'items_done': int(n_done), 'sim_topk_s': round(t_sim, 3),
                'items_per_s': round(n_done / t_sim, 1) if t_sim > 0 else None,
                'extrapolated': bool(extrapolated)})
    if extrapolated:
        row['sim_topk_s_all_items_est'] = round(t_sim * n_items / max(n_done, 1), 1)
        row['note'] = (f'ran {n_done} of {n_items} target items (evenly spaced); '
                       'sim_topk_s_all_items_est scales the time linearly')
    return row


def _tile_arg(s):
    if s == 'auto':
        return s
    v = int(s)
    if v < 1:
        raise ValueError(s)
    return v


def add_common_args(ap, tile_default):
    ap.add_argument('ratings', help='MovieLens CSV (or tsv / dat)')
    ap.add_argument('-k', type=int, default=20, help='neighbours per item (default 20)')
    ap.add_argument('--min-support', type=int, default=1, help='co-raters needed (default 1)')
    ap.add_argument('--tile', type=_tile_arg if tile_default == 'auto' else int, default=tile_default,
                    help=f'target items per tile (default {tile_default})')
    ap.add_argument('--max-items', type=int, default=0,
                    help='run only this many target items (evenly spaced) and extrapolate')
    ap.add_argument('--neighbors-out', metavar='CSV',
                    help='write item,neighbor,rank,similarity,support (raw ids) for spot checks')
