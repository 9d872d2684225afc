#!/usr/bin/env python3
"""Shape of a rating file (MovieLens CSV, or tsv/dat as written by recknn-synth).

Prints one JSON object: rating histogram, mean and sd, users/items and their rating counts
(min, median, mean, max, top-1%/10% shares), duplicate pairs, id and timestamp ranges, whether
lines are sorted by (user, item). With --test FILE also the RMSE of the global mean, the item
means and the biased baseline (mu + b_u + b_i, 10 rounds of ALS as CONTRACT.md §4) on that file, for
comparison with recknn's k-NN RMSE.
Example: python3 bench/synth_stats.py sample_data/ratings.csv --test sample_data/test.csv
"""
import argparse
import json
import sys
import warnings

import numpy as np


def load(path):
    with open(path, 'rb') as f:
        first = f.readline()
    if b'::' in first:
        # numpy cannot split on '::' directly; read as text once.
        with open(path) as f:
            rows = [line.rstrip('\n').split('::') for line in f if line.strip()]
        return np.array(rows, dtype=np.float64)
    delim = '\t' if b'\t' in first else ','
    skip = 1 if first[:1].isalpha() else 0
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # an empty file (header only) is fine
        d = np.loadtxt(path, delimiter=delim, skiprows=skip, dtype=np.float64, ndmin=2)
    return d if d.size else np.zeros((0, 4))


def counts_summary(ids):
    _, c = np.unique(ids, return_counts=True)
    s = np.sort(c)[::-1]
    n = len(s)
    return {'n': int(n), 'min': int(s[-1]), 'median': float(np.median(s)), 'mean': float(s.mean()),
            'max': int(s[0]), 'top1pct_share': float(s[:max(1, n // 100)].sum() / s.sum()),
            'top10pct_share': float(s[:max(1, n // 10)].sum() / s.sum())}


def baselines(train, test):
    u_ids, ui = np.unique(np.concatenate([train[:, 0], test[:, 0]]), return_inverse=True)
    i_ids, ii = np.unique(np.concatenate([train[:, 1], test[:, 1]]), return_inverse=True)
    ntr = len(train)
    tu, ti, tr = ui[:ntr], ii[:ntr], train[:, 2]
    eu, ei, er = ui[ntr:], ii[ntr:], test[:, 2]
    mu = tr.mean()
    nu, ni = len(u_ids), len(i_ids)
    cnt_i = np.bincount(ti, minlength=ni)
    sum_i = np.bincount(ti, weights=tr, minlength=ni)
    item_mean = np.where(cnt_i > 0, sum_i / np.maximum(cnt_i, 1), mu)
    bu, bi = np.zeros(nu), np.zeros(ni)
    cnt_u = np.bincount(tu, minlength=nu)
    for _ in range(10):
        bi = np.bincount(ti, weights=tr - mu - bu[tu], minlength=ni) / (10 + cnt_i)
        bu = np.bincount(tu, weights=tr - mu - bi[ti], minlength=nu) / (15 + cnt_u)
    lo, hi = tr.min(), tr.max()

    def rmse(p):
        return float(np.sqrt(np.mean((np.clip(p, lo, hi) - er) ** 2)))
    return {'rmse_global_mean': rmse(np.full(len(er), mu)), 'rmse_item_mean': rmse(item_mean[ei]),
            'rmse_baseline': rmse(mu + bu[eu] + bi[ei])}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('ratings')
    ap.add_argument('--test', help='held-out file: also print baseline RMSEs on it')
    a = ap.parse_args()
    d = load(a.ratings)
    r = d[:, 2]
    vals, c = np.unique(r, return_counts=True)
    key = d[:, 0] * (d[:, 1].max() + 1) + d[:, 1]
    order_ok = bool(np.all(np.diff(key) > 0))
    out = {
        'ratings': int(len(d)),
        'rating_mean': float(r.mean()), 'rating_sd': float(r.std()),
        'histogram': {f'{v:g}': round(float(x) / len(r), 4) for v, x in zip(vals, c)},
        'users': counts_summary(d[:, 0]), 'items': counts_summary(d[:, 1]),
        'duplicate_pairs': int(len(key) - len(np.unique(key))),
        'user_id_range': [int(d[:, 0].min()), int(d[:, 0].max())],
        'item_id_range': [int(d[:, 1].min()), int(d[:, 1].max())],
        'sorted_by_user_item': order_ok,
    }
    if d.shape[1] > 3:
        out['timestamp_range'] = [int(d[:, 3].min()), int(d[:, 3].max())]
    if a.test:
        t = load(a.test)
        span = max(d[:, 1].max(), t[:, 1].max(initial=0)) + 1
        tk, dk = t[:, 0] * span + t[:, 1], d[:, 0] * span + d[:, 1]
        out['test'] = {'ratings': int(len(t)), 'overlap_with_train': int(len(np.intersect1d(tk, dk))),
                       'users_only_in_test': int(len(np.setdiff1d(np.unique(t[:, 0]), np.unique(d[:, 0]))))}
        if len(t):
            out['test'].update(baselines(d, t))
    json.dump(out, sys.stdout)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main()
