#!/usr/bin/env python3
"""SciPy CPU peer: item-item Pearson over co-raters + top-k, with sparse products on one core.

With B the 0/1 indicator (users x items) and R the ratings, for a tile T of target items
(rows of the item-major matrices Bt = B^T, Rt = R^T) against all items:
    N = Bt_T B,  Sx = Rt_T B,  Sy = Bt_T R,  Sxx = (Rt_T o Rt_T) B,  Syy = Bt_T (R o R),  Sxy = Rt_T R
(six scipy.sparse CSR x CSR products, made dense per tile), then CONTRACT.md §2 Pearson in float64 and
the top-k positive neighbours per item (argpartition-style selection, exact ties by index).
Prints one JSON line: load seconds, similarity + top-k seconds, items/s.

Examples:
  python3 bench/peer_scipy.py sample_data/ratings.csv --neighbors-out /tmp/nb.csv
  python3 bench/peer_scipy.py ml20m.csv --max-items 2000     # run 2000 items, extrapolate
"""
import argparse
import os

# One core: set before numpy/scipy load their thread pools (sparse products are serial anyway).
for _v in ('OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS'):
    os.environ.setdefault(_v, '1')

import numpy as np  # noqa: E402
import scipy  # noqa: E402
import scipy.sparse as sp  # noqa: E402

from peer_common import (NeighborWriter, add_common_args, base_row, emit, finish_row,  # noqa: E402
                         load_ratings, now, pearson, select_topk, target_items)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    add_common_args(ap, tile_default=256)
    args = ap.parse_args()

    t0 = now()
    d = load_ratings(args.ratings)
    n_users, n_items = len(d['user_ids']), len(d['item_ids'])
    R = sp.csr_matrix((d['r'], (d['u'], d['i'])), shape=(n_users, n_items), dtype=np.float64)
    B = R.copy(); B.data[:] = 1.0
    R2 = R.copy(); R2.data **= 2
    Rt, Bt = R.T.tocsr(), B.T.tocsr()
    Rt2 = Rt.copy(); Rt2.data **= 2
    t_load = now() - t0

    row = base_row('scipy', args, d, t_load)
    row.update({'device': 'cpu (1 core)', 'scipy': scipy.__version__, 'numpy': np.__version__})
    targets, partial = target_items(n_items, args.max_items)
    writer = NeighborWriter(args.neighbors_out, d['item_ids'])
    t_prod = t_pearson = 0.0
    t0 = now()
    for s in range(0, len(targets), args.tile):
        ta = now()
        rows_items = targets[s:s + args.tile]
        bt, rt, rt2 = Bt[rows_items], Rt[rows_items], Rt2[rows_items]
        N = (bt @ B).toarray()
        Sx = (rt @ B).toarray()
        Sy = (bt @ R).toarray()
        Sxx = (rt2 @ B).toarray()
        Syy = (bt @ R2).toarray()
        Sxy = (rt @ R).toarray()
        tb = now()
        S = pearson(N, Sx, Sy, Sxx, Syy, Sxy, args.min_support, np)
        del Sx, Sy, Sxx, Syy, Sxy
        S[np.arange(len(rows_items)), rows_items] = 0.0  # not its own neighbour
        t_prod += tb - ta
        t_pearson += now() - tb
        r, c, v, sup = select_topk(S, args.k, np, N)
        writer.add(rows_items, r, c, v, sup)
    t_sim = now() - t0
    writer.close()
    row.update({'products_s': round(t_prod, 3), 'pearson_s': round(t_pearson, 3),
                'select_s': round(t_sim - t_prod - t_pearson, 3)})  # select includes writing
    emit(finish_row(row, len(targets), n_items, t_sim, partial))


if __name__ == '__main__':
    main()
