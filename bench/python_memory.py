"""python_memory.py RATINGS.csv -- issue 23's copies of the ratings: the peak resident memory of a
process that fits recknn.ItemKNN (lists only: rank="lists", CPU) from three NumPy arrays
(int32, int32, float32) in a random order (the library copies them, into its data set and the
sorted training set), from the same arrays in CSR order (sorted by user, then item: read in
place), and from a SciPy CSR matrix of int32 indices and float32 ratings (read in place), each in a fresh process that loads the ratings from .npy files (so that the high-water
mark is the fit's, not a CSV parser's), beside the size of the ratings' arrays.  The CSV's first
three columns are user, item, rating.  Needs the module on PYTHONPATH, pandas and scipy."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import pandas as pd
import scipy.sparse as sp

CHILD = r'''
import sys
import numpy as np, scipy.sparse as sp
import recknn
d, how = sys.argv[1], sys.argv[2]
if how in ("arrays", "sorted"):
    pre = "" if how == "arrays" else "s"
    u, i, r = (np.load(d + "/" + pre + n + ".npy") for n in ("u", "i", "r"))
    size = u.nbytes + i.nbytes + r.nbytes
else:
    p, x, v = (np.load(d + "/" + n + ".npy") for n in ("p", "x", "v"))
    m = sp.csr_matrix((v, x, p), shape=(len(p) - 1, int(x.max()) + 1))
    size = p.nbytes + x.nbytes + v.nbytes
def hwm():  # the process's peak resident memory in kB (VmHWM: unlike ru_maxrss, not inherited across exec)
    with open("/proc/self/status") as fp:
        return int(next(ln for ln in fp if ln.startswith("VmHWM:")).split()[1])
base = hwm()
model = recknn.ItemKNN(device="cpu", rank="lists").fit(u, i, r) if how != "csr" else \
    recknn.ItemKNN(device="cpu", rank="lists").fit(m)
peak = hwm()
print("%-6s: the ratings' arrays %.1f MB; peak resident %.1f MB before fit, %.1f MB after: fit added %.1f MB"
      % (how, size / 1e6, base / 1e3, peak / 1e3, (peak - base) / 1e3))
'''

f = pd.read_csv(sys.argv[1])
u = np.unique(f.iloc[:, 0], return_inverse=True)[1].astype(np.int32)
i = np.unique(f.iloc[:, 1], return_inverse=True)[1].astype(np.int32)
r = f.iloc[:, 2].to_numpy(np.float32)
m = sp.csr_matrix((r, (u, i)), shape=(int(u.max()) + 1, int(i.max()) + 1), dtype=np.float32)
m.sum_duplicates()
d = tempfile.mkdtemp()
o = np.lexsort((i, u))  # CSR order (the file has no pair twice)
x = np.random.default_rng(1).permutation(len(r))  # a random order
for n, a in (("u", u[x]), ("i", i[x]), ("r", r[x]), ("p", m.indptr.astype(np.int64)), ("x", m.indices), ("v", m.data),
             ("su", u[o]), ("si", i[o]), ("sr", r[o])):
    np.save(os.path.join(d, n + ".npy"), a)
print("%d ratings, %d users, %d items" % (len(r), m.shape[0], m.shape[1]))
for how in ("arrays", "sorted", "csr"):
    subprocess.run([sys.executable, "-c", CHILD, d, how], check=True)
