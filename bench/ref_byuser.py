#!/usr/bin/python3
"""Helper of bench/check_ref_byuser.sh: the float64 reference (shared/tools/ref_knn.py, item mode
only, not part of this repository) applied to CONTRACT.md §6b's user mode.  It imports ref_knn from
TOOLS_DIR and uses its reader and its Model; none of its code is copied here.

  ref_byuser.py TOOLS transpose IN OUT
      IN as ref_knn reads it, written as `item<TAB>user<TAB>rating` (roles swapped, file order kept
      so that the last of duplicate pairs still wins).
  ref_byuser.py TOOLS mapback TRAIN MODE REF_PRED OUT_PRED
      ref_knn's predictions of the transposed files (`item,user,...`) written back as
      `user,item,...`.  MODE means: a pair whose item has no training rating is set to μ with 0
      neighbours used (docs/USAGE.md "User-based k-NN": recknn follows Surprise's KNNWithMeans there, the
      transpose would give the user's mean).  Prints {"rmse", "n", "unknown_item_pairs"} of OUT_PRED.
  ref_byuser.py TOOLS baseline TRAIN TEST METRIC MODE K MIN_SUPPORT SHRINKAGE MIN_K NB_OUT PRED_OUT
      The configurations that need the ALS baselines (pearson-baseline, --predict baseline): a pure
      transpose would run the ALS with the roles swapped (b_u with 10 first, then b_i with 15), but
      CONTRACT.md §6b keeps b_i with 10, then b_u with 15.  So ref_knn's Model is built on TRAIN (item
      mode) for its baselines and on the transposed ratings for everything else, the first model's
      b_i / b_u become the second's b_u / b_i, and its pearson-baseline similarities are recomputed
      from them (its own _similarity).  SHRINKAGE '-' is ref_knn's default.  Writes the lists per
      user and the predictions as `user,item,...` (MODE means: the unknown-item rule of mapback),
      prints {"rmse", "n", "unknown_item_pairs"}.
  ref_byuser.py TOOLS utopn TRAIN NEIGHBORS N OUT
      CONTRACT.md §6b user top-N, which ref_knn cannot produce (its top-N of the transposed files ranks
      users for an item): score(u, c) = Σ over u's listed neighbours v who rated c of sim(u, v),
      unrated c only, score > 0, by score descending then ascending item index, first N; computed
      in float64 from the per-user lists NEIGHBORS (the reference's) and TRAIN as ref_knn reads it.
      A derived check, not the reference's own computation.
  ref_byuser.py TOOLS simdiff OURS REF
      The largest |similarity difference| at the same (list, rank) of two neighbors.csv files.
"""
import csv, json, math, sys

import numpy as np


def load_ref(tools):
    sys.path.insert(0, tools)
    import ref_knn  # noqa: E402 (the reference lives outside the repository)
    return ref_knn


def transpose(ref, src, dst):
    with open(dst, 'w', encoding='latin-1') as f:
        for u, i, r in ref.read_ratings(src):
            f.write(f'{i}\t{u}\t{r!r}\n')


def train_facts(ref, train):
    """(μ, rating min, rating max, set of items) of TRAIN, duplicates resolved as ref_knn does."""
    last = {}
    for u, i, r in ref.read_ratings(train):
        last[(u, i)] = r
    vals = np.array(list(last.values()))
    return vals.mean(), vals.min(), vals.max(), {i for _, i in last}


def unknown_item_rule(ref, train, mode, rows):
    """rows: [user, item, rating, prediction, used] (user-mode orientation, strings).  Under means a
    pair whose item is not in TRAIN gets μ (clipped), 0 used.  Returns the count of such pairs."""
    mu, lo, hi, items = train_facts(ref, train)
    n = 0
    for row in rows:
        if row[1] not in items:
            n += 1
            if mode == 'means':
                row[3] = f'{min(max(mu, lo), hi):.9g}'
                row[4] = '0'
    return n


def write_predictions(path, rows):
    with open(path, 'w') as f:
        f.write('user,item,rating,prediction,neighbors_used\n')
        for row in rows:
            f.write(','.join(row) + '\n')
    se = sum((float(r[3]) - float(r[2])) ** 2 for r in rows)
    return math.sqrt(se / len(rows)) if rows else float('nan')


def mapback(ref, train, mode, ref_pred, out_pred):
    with open(ref_pred, newline='') as f:
        rd = csv.reader(f)
        next(rd)
        rows = [[p[1], p[0], p[2], p[3], p[4]] for p in rd]
    unknown = unknown_item_rule(ref, train, mode, rows)
    rmse = write_predictions(out_pred, rows)
    print(json.dumps({'rmse': rmse, 'n': len(rows), 'unknown_item_pairs': unknown}))


def baseline(ref, train, test, metric, mode, k, ms, lam, min_k, nb_out, pred_out):
    tr = ref.read_ratings(train)
    lam = None if lam == '-' else float(lam)
    item_model = ref.Model(tr, 'cosine', ms, 0.0)  # only its ALS baselines are used
    # the transposed model: its "users" are the items, its "items" the users
    m = ref.Model([(i, u, r) for u, i, r in tr], metric, ms, lam)
    m.bu = np.array([item_model.bi[item_model.iix[i]] for i in m.users])
    m.bi = np.array([item_model.bu[item_model.uix[u]] for u in m.items])
    if metric == 'pearson-baseline':
        m.sim, m.N = m._similarity(metric, ms, 100.0 if lam is None else lam)
    with open(nb_out, 'w') as f:
        f.write('item,neighbor,rank,similarity,support\n')
        for u, lst in m.neighbours(k).items():
            for rnk, (v, s, n) in enumerate(lst, 1):
                f.write(f'{u},{v},{rnk},{s:.9g},{n}\n')
    rows = []
    for u, i, r in ref.read_ratings(test):
        p, used = m.predict(i, u, k, mode, min_k)  # the query (u, i) asked as (i, u)
        rows.append([u, i, f'{r:g}', f'{p:.9g}', str(used)])
    unknown = unknown_item_rule(ref, train, mode, rows)
    rmse = write_predictions(pred_out, rows)
    print(json.dumps({'rmse': rmse, 'n': len(rows), 'unknown_item_pairs': unknown}))


def utopn(ref, train, neighbors, n, out):
    rated = {}
    for u, i, _ in ref.read_ratings(train):
        rated.setdefault(u, set()).add(i)
    key = ref.id_key
    lists = {}
    with open(neighbors, newline='') as f:
        for row in csv.DictReader(f):
            lists.setdefault(row['item'], []).append((row['neighbor'], float(row['similarity'])))
    with open(out, 'w') as f:
        f.write('user,rank,item,score\n')
        for u in sorted(rated, key=key):
            score = {}
            for v, s in lists.get(u, []):
                for c in rated.get(v, ()):
                    if c not in rated[u]:
                        score[c] = score.get(c, 0.0) + s
            best = sorted((c for c in score if score[c] > 0), key=lambda c: (-score[c], key(c)))[:n]
            for rnk, c in enumerate(best, 1):
                f.write(f'{u},{rnk},{c},{score[c]:.9g}\n')


def simdiff(ours, ref):
    def ld(path):
        with open(path, newline='') as f:
            return {(r['item'], r['rank']): float(r['similarity']) for r in csv.DictReader(f)}
    a, b = ld(ours), ld(ref)
    print(f'{max((abs(a[x] - b[x]) for x in a.keys() & b.keys()), default=0.0):.2g}')


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    ref, cmd, a = load_ref(argv[1]), argv[2], argv[3:]
    if cmd == 'transpose' and len(a) == 2:
        transpose(ref, *a)
    elif cmd == 'mapback' and len(a) == 4:
        mapback(ref, *a)
    elif cmd == 'baseline' and len(a) == 10:
        baseline(ref, a[0], a[1], a[2], a[3], int(a[4]), int(a[5]), a[6], int(a[7]), a[8], a[9])
    elif cmd == 'utopn' and len(a) == 4:
        utopn(ref, a[0], a[1], int(a[2]), a[3])
    elif cmd == 'simdiff' and len(a) == 2:
        simdiff(*a)
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main(sys.argv)
