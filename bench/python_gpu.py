"""python_gpu.py RATINGS.csv RECKNN OUT [ROUNDS] -- issue 23 at ML-20M size on the GPU: the Python
module's fit + recommend(n=10) for every user from NumPy arrays in memory, beside the recknn command
on the same file with the same options, in the same process tree and on the same GPU.

Two configurations: the default (Pearson k 20 lists, recommendations from the rp3beta ranking
model) and "lists" (top-N summed from the Pearson lists themselves: the work of the PyTorch peer,
bench/peer_torch.py + bench/peer_topn_torch.py, which run_peers.sh times separately).  Two kinds
of arrays: in CSR order (sorted by user, then item: read in place, no copy) and in a random order
(numbered and copied by the module).  The command's time is metrics.json's total less its load
(the parse of the CSV, which the arrays do not need) and its whole wall time; the module's is the
wall time of fit and of recommend.  After the rounds, the module's recommendations and neighbour
lists (formatted as the command formats them) are compared with the command's files, line for
line.  Prints one row a run, then a summary.  Needs the module on PYTHONPATH and NumPy; the CSV's
first three columns are user, item, rating, with a header."""
import json
import os
import subprocess
import sys
import time

import numpy as np

import recknn

path, command, out = sys.argv[1], sys.argv[2], sys.argv[3]
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 2
os.makedirs(out, exist_ok=True)

t0 = time.perf_counter()
try:
    import pyarrow.csv as pv
    tab = pv.read_csv(path)
    cols = [tab.column(x).to_numpy() for x in range(3)]
except ImportError:
    import pandas as pd
    frame = pd.read_csv(path)
    cols = [frame.iloc[:, x].to_numpy() for x in range(3)]
users = cols[0].astype(np.int64)
item_ids, items = np.unique(cols[1], return_inverse=True)
items = items.astype(np.int32)
ratings = cols[2].astype(np.float32)
o = np.lexsort((items, users))
csr_order = (users[o], items[o], ratings[o])
x = np.random.default_rng(1).permutation(len(users))
random_order = (users[x], items[x], ratings[x])
del cols, o, x
print("read %d ratings (%d items) in %.1f s" % (len(users), len(item_ids), time.perf_counter() - t0), flush=True)

CONFIGS = {"default": {}, "lists": {"rank": "lists"}}
BASE = {"metric": "pearson", "k": 20, "device": os.environ.get("DEVICE", "gpu")}


def run_command(cfg, dest):
    args = [command, path, "--quiet", "--top-n", "10", "--out", dest]
    for k, v in dict(BASE, **CONFIGS[cfg]).items():
        args += ["--" + k.replace("_", "-"), str(v)]
    t = time.perf_counter()
    subprocess.run(args, check=True)
    wall = time.perf_counter() - t
    with open(os.path.join(dest, "metrics.json")) as fp:
        ts = json.load(fp)["timings_s"]
    return wall, ts


def run_module(cfg, arrays):
    t = time.perf_counter()
    m = recknn.ItemKNN(**dict(BASE, **CONFIGS[cfg])).fit(*arrays)
    t1 = time.perf_counter()
    recs, scores = m.recommend(n=10)
    t2 = time.perf_counter()
    return m, recs, scores, t1 - t, t2 - t1


def g(v):
    return "%.9g" % v


def same_files(m, recs, scores, dest):
    """The module's recommendations and neighbour lists as the command's files' lines."""
    uid = m.user_ids
    want = open(os.path.join(dest, "recommendations.csv")).read().splitlines()[1:]
    got = ["%d,%d,%d,%s" % (uid[u], r + 1, item_ids[recs[u, r]], g(scores[u, r]))
           for u in range(recs.shape[0]) for r in range(recs.shape[1]) if recs[u, r] >= 0]
    same_recs = got == want
    indptr, idx, sims = m._model.neighbors()
    want = [",".join(ln.split(",")[:4]) for ln in open(os.path.join(dest, "neighbors.csv")).read().splitlines()[1:]]
    got = ["%d,%d,%d,%s" % (item_ids[i], item_ids[idx[p]], p - indptr[i] + 1, g(sims[p]))
           for i in range(len(indptr) - 1) for p in range(indptr[i], indptr[i + 1])]
    return same_recs, got == want, len(want)


rows = []
print("config   run                  fit_s  recommend_s  total_s  | cmd load_s engine_s total-load_s wall_s")
for cfg in CONFIGS:
    for r in range(rounds):
        dest = os.path.join(out, "cmd-%s-%d" % (cfg, r))
        wall, ts = run_command(cfg, dest)
        print("%-8s command %d: load %.3f engine %.3f rank %.3f recommend %.3f write %.3f total %.3f wall %.3f"
              % (cfg, r + 1, ts["load"], ts["engine"], ts["rank"], ts["recommend"], ts["write"], ts["total"], wall),
              flush=True)
        for kind, arrays in (("csr-order", csr_order), ("random-order", random_order)):
            m, recs, scores, fit_s, rec_s = run_module(cfg, arrays)
            row = (cfg, kind, r + 1, fit_s, rec_s, fit_s + rec_s, ts["load"], ts["engine"], ts["total"] - ts["load"],
                   wall)
            rows.append(row)
            print("%-8s %-12s %d  %7.3f  %11.3f  %7.3f  | %10.3f %8.3f %12.3f %6.3f" % row, flush=True)
            if r == rounds - 1 and kind == "csr-order":
                sr, sn, nn = same_files(m, recs, scores, dest)
                print("%-8s the module's recommendations are the command's file: %s; its %d neighbour lines: %s"
                      % (cfg, "identical" if sr else "DIFFERENT", nn, "identical" if sn else "DIFFERENT"),
                      flush=True)
            del m, recs, scores
print("\nsummary (min-max over rounds): module fit+recommend / command total-load")
for cfg in CONFIGS:
    for kind in ("csr-order", "random-order"):
        sel = [x for x in rows if x[0] == cfg and x[1] == kind]
        ratio = [x[5] / x[8] for x in sel]
        print("%-8s %-12s module %.3f-%.3f s, command %.3f-%.3f s (wall %.3f-%.3f s): %.2f-%.2f"
              % (cfg, kind, min(x[5] for x in sel), max(x[5] for x in sel), min(x[8] for x in sel),
                 max(x[8] for x in sel), min(x[9] for x in sel), max(x[9] for x in sel), min(ratio), max(ratio)))
