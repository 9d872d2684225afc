"""pmodel_eval.py RECKNN ML100K_DIR ML_LATEST_SMALL_RATINGS [ROWS] -- EVALUATION.md's table of the
prediction models (CONTRACT.md §4b): RMSE and MAE, mean ± sd, over ml-100k's official folds
u1..u5 (one run a fold, --test) and ml-latest-small with --folds 5 --seed 42, for the
`baseline` predictor and `--predict interpolate` and `global`.  Prints the table's rows."""
import json
import os
import statistics
import subprocess
import sys
import tempfile

recknn, d100k, small = sys.argv[1:4]
ROWS = ["--metric pearson-baseline --predict baseline -k 40 --shrinkage 200",
        "--metric pearson-baseline --predict interpolate -k 40 --shrinkage 200",
        "--metric pearson-baseline --predict global -k 40 --shrinkage 200",
        "--metric pearson-baseline --predict global -k 40 --shrinkage 1000 --global-lr 0.003 --global-epochs 25",
        # chosen on ml-latest-small alone (EVALUATION.md), applied once to ml-100k
        "--metric pearson-baseline --predict global -k 60 --shrinkage 1000 --global-lr 0.01 --global-epochs 80 "
        "--global-reg 0.002 --global-decay 0.95",
        "--metric pearson-baseline --predict interpolate -k 40 --shrinkage 200 --interp-shrink 100 --interp-reg 0.01",
        # the options chosen inside each fold on a validation split of its training part (CONTRACT.md §6e)
        "--metric pearson-baseline --predict global --tune-predict",
        "--metric pearson-baseline --predict interpolate --tune-predict"]
if len(sys.argv) > 4:  # rows by index, e.g. 6,7
    ROWS = [ROWS[int(x)] for x in sys.argv[4].split(",")]
out = tempfile.mkdtemp()
common = ["--device", "cpu", "--top-n", "0", "--no-neighbors", "--quiet"]
for row in ROWS:
    rmse, mae = [], []
    for f in range(1, 6):
        subprocess.run([recknn, os.path.join(d100k, "u%d.base" % f), "--test", os.path.join(d100k, "u%d.test" % f),
                        "--out", os.path.join(out, "f")] + common + row.split(), check=True)
        with open(os.path.join(out, "f", "metrics.json")) as fp:
            m = json.load(fp)["metrics"]
        rmse.append(m["rmse"])
        mae.append(m["mae"])
    subprocess.run([recknn, small, "--folds", "5", "--seed", "42", "--out", os.path.join(out, "s")] + common + row.split(),
                   check=True)
    with open(os.path.join(out, "s", "metrics.json")) as fp:
        s = json.load(fp)["summary"]
    print("| `%s` | %.4f ± %.4f | %.4f ± %.4f | %.4f ± %.4f | %.4f ± %.4f |"
          % (row, statistics.mean(rmse), statistics.stdev(rmse), statistics.mean(mae), statistics.stdev(mae),
             s["rmse"]["mean"], s["rmse"]["sd"], s["mae"]["mean"], s["mae"]["sd"]))
