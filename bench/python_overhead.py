"""python_overhead.py RATINGS.csv [RECKNN] -- issue 23's calling overhead: the Python module's
fit + recommend (top-10 of every user, default options, CPU) from a pandas DataFrame against the
recknn command's compute on the same file (metrics.json's total less its load, which parses the
file), five rounds alternating.  The CSV's first three columns are user, item, rating.  Needs
the module on PYTHONPATH and pandas."""
import json
import os
import subprocess
import sys
import tempfile
import time

import pandas as pd

import recknn

path = sys.argv[1]
command = sys.argv[2] if len(sys.argv) > 2 else "./recknn"
out = tempfile.mkdtemp()
print("round  py_fit  py_recommend  py_total  cli_load  cli_engine  cli_total-load  py/cli")
for r in range(5):
    frame = pd.read_csv(path)
    cols = list(frame.columns[:3])
    t0 = time.perf_counter()
    model = recknn.ItemKNN(device="cpu").fit(frame[cols])
    t1 = time.perf_counter()
    model.recommend(n=10)
    t2 = time.perf_counter()
    subprocess.run([command, path, "--device", "cpu", "--quiet", "--no-neighbors", "--out", os.path.join(out, "o")],
                   check=True)
    with open(os.path.join(out, "o", "metrics.json")) as fp:
        t = json.load(fp)["timings_s"]
    cli = t["total"] - t["load"]
    print("%5d  %6.3f  %12.3f  %8.3f  %8.3f  %10.3f  %14.3f  %6.3f" % (r + 1, t1 - t0, t2 - t1, t2 - t0, t["load"],
                                                                     t["engine"], cli, (t2 - t0) / cli))
