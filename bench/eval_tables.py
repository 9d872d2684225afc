#!/usr/bin/env python3
"""eval_tables.py — the tables of EVALUATION.md, measured by running recknn.

Usage: python3 bench/eval_tables.py RECKNN DATA_DIR OUT_DIR [--quick] [--full-only]

DATA_DIR holds ml-100k/ (u1..u5.base/.test) and ml-latest-small/ratings.csv.
Every row names the recknn options that produced it; each value is the mean
± sample standard deviation over the five folds (ml-100k: the official
u1..u5 splits through --test; ml-latest-small: --folds 5 --seed 42).  The
markdown goes to standard output, every run's metrics.json stays in OUT_DIR.
--full-only prints only the last section: the full-vector metrics and --implicit.
"""
import json
import math
import os
import subprocess
import sys
import time

recknn, data, out = sys.argv[1], sys.argv[2], sys.argv[3]
quick = "--quick" in sys.argv
full_only = "--full-only" in sys.argv
os.makedirs(out, exist_ok=True)
runs = 0


def run(args, tag):
    """Run recknn with args into OUT/tag; return metrics.json as a dict."""
    global runs
    d = os.path.join(out, tag)
    # --rank lists: these tables measure the --metric lists' top-N (CONTRACT.md §5), the only top-N
    # before the ranking model (§5b) became the default; EVALUATION.md's ranking-model section has
    # its own command (bench/rank_tables.sh)
    cmd = [recknn] + args + ["--out", d, "--device", "cpu", "--quiet", "--no-neighbors", "--rank", "lists"]
    subprocess.run(cmd, check=True)
    runs += 1
    with open(os.path.join(d, "metrics.json")) as f:
        return json.load(f)


def stats(xs):
    m = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
    return m, sd


def ml100k(opts, tag, top_n=0):
    """The five official folds through --test: a list of per-fold metrics.json."""
    res = []
    for f in range(1, 6):
        base = os.path.join(data, "ml-100k", "u%d.base" % f)
        test = os.path.join(data, "ml-100k", "u%d.test" % f)
        res.append(run([base, "--test", test, "--top-n", str(top_n)] + opts, "%s-u%d" % (tag, f)))
    return res


def mlsmall(opts, tag, top_n=0):
    """ml-latest-small, --folds 5 --seed 42: one run, its folds array."""
    d = run([os.path.join(data, "ml-latest-small", "ratings.csv"), "--folds", "5", "--seed", "42",
             "--top-n", str(top_n)] + opts, tag)
    return d["folds"]


metrics = ["pearson", "pearson-baseline", "cosine", "msd", "euclidean"]
modes = ["basic", "means", "baseline"]
ks = [20, 40]
if quick:
    metrics, modes, ks = ["pearson", "msd"], ["means"], [40]



def full_section():
    """The full-vector metrics (CONTRACT.md §6b) beside the best co-rater metric, and --implicit."""
    keys = ("precision", "recall", "ndcg", "mrr", "hit_rate", "coverage", "gini")
    fm = ["cosine-full", "euclidean-full", "jaccard"]
    print("### Full-vector metrics and `--implicit`\n")
    print("Rating prediction, item-based, `--metric M --predict means -k 40` (mean ± sd over 5 folds):\n")
    print("| metric | ml-100k RMSE | ml-100k MAE | ml-latest-small RMSE | ml-latest-small MAE |")
    print("|---|---|---|---|---|")
    for m in fm + ["msd"]:
        opts = ["--metric", m, "--predict", "means", "-k", "40"]
        a = ml100k(opts, "full-%s" % m)
        b = mlsmall(opts, "full-%s-small" % m)
        print("| %s | %s | %s | %s | %s |" % (
            m, "%.4f ± %.4f" % stats([x["metrics"]["rmse"] for x in a]),
            "%.4f ± %.4f" % stats([x["metrics"]["mae"] for x in a]),
            "%.4f ± %.4f" % stats([f["rmse"] for f in b]), "%.4f ± %.4f" % stats([f["mae"] for f in b])))
        sys.stdout.flush()
    for implicit in (False, True):
        extra = ["--implicit"] if implicit else []
        if implicit:
            print("\nTop-10 with `--implicit` (every rating counts as 1; every held-out item is relevant), "
                  "`--top-n 10 --baseline popular -k 40`:\n")
        else:
            print("\nTop-10 (relevance >= 4.0), `--top-n 10 --baseline popular -k 40`, no shrinkage unless named:\n")
        for name, fn in (("ml-100k", ml100k), ("ml-latest-small", mlsmall)):
            print("#### %s%s\n" % (name, ", implicit" if implicit else ""))
            print("| recommender | precision@10 | recall@10 | NDCG@10 | MRR | hit rate | coverage | Gini |")
            print("|---|---|---|---|---|---|---|---|")
            rows = [("item", m, None) for m in fm] + [("user", "cosine-full", None), ("user", "jaccard", None)]
            rows.append(("item", "msd", "100"))  # with --implicit only shrunk: 1 for every pair otherwise
            base = None
            for by, m, shrink in rows:
                opts = ["--by", by, "--metric", m, "-k", "40", "--baseline", "popular"] + extra + \
                    (["--shrinkage", shrink] if shrink else [])
                folds = fn(opts, "fulltop-%s-%s-%s-%s-%d" % (name, by, m, shrink, implicit), top_n=10)
                if name == "ml-100k":
                    folds = [x["folds"][0] for x in folds]
                print("| %s-kNN %s%s | %s |" % (by, m, ", shrinkage " + shrink if shrink else "", " | ".join(
                    "%.4f ± %.4f" % stats([f["ranking"][k] for f in folds]) for k in keys)))
                base = " | ".join("%.4f ± %.4f" % stats([f["baseline_popular"][k] for f in folds]) for k in keys)
                sys.stdout.flush()
            print("| most popular | %s |\n" % base)


t0 = time.time()
if not full_only:
    print("### Surprise 1.1.4's item-based k-NN on the official ml-100k folds\n")
    print("Mean RMSE over u1..u5 (`RATINGS uK.base --test uK.test`), six decimals.\n")
    print("| Surprise configuration | Surprise | recknn options | recknn | difference |")
    print("|---|---|---|---|---|")
    surprise = [
        ("KNNWithMeans, pearson, k = 20", 0.9534, ["--metric", "pearson", "--predict", "means", "-k", "20"]),
        ("KNNWithMeans, pearson, k = 40", 0.9425, ["--metric", "pearson", "--predict", "means", "-k", "40"]),
        ("KNNWithMeans, msd, k = 20", 0.9439, ["--metric", "msd", "--predict", "means", "-k", "20"]),
        ("KNNWithMeans, cosine, k = 20", 0.9558, ["--metric", "cosine", "--predict", "means", "-k", "20"]),
        ("KNNBaseline, pearson_baseline (shrinkage 100), k = 20", 0.9218,
         ["--metric", "pearson-baseline", "--predict", "baseline", "-k", "20"]),
        ("KNNBaseline, pearson_baseline (shrinkage 100), k = 40", 0.9204,
         ["--metric", "pearson-baseline", "--predict", "baseline", "-k", "40"]),
    ]
    for name, want, opts in surprise:
        got = stats([x["metrics"]["rmse"] for x in ml100k(opts, "surprise-" + "-".join(opts[1::2]))])[0]
        print("| %s | %.4f | `%s` | %.6f | %+.6f |" % (name, want, " ".join(opts), got, got - want))
        sys.stdout.flush()
    print()
    print("### Rating prediction: RMSE and MAE (mean ± sd over 5 folds)\n")
    print("Options beyond the table's: `-k K --metric M --predict P` (pearson-baseline: shrinkage 100, its default).\n")
    print("| metric | predict | k | ml-100k RMSE | ml-100k MAE | ml-latest-small RMSE | ml-latest-small MAE |")
    print("|---|---|---|---|---|---|---|")
    best = None
    for m in metrics:
        for p in modes:
            for k in ks:
                opts = ["--metric", m, "--predict", p, "-k", str(k)]
                tag = "%s-%s-%d" % (m, p, k)
                a = ml100k(opts, tag)
                b = mlsmall(opts, tag + "-small")
                ra = stats([x["metrics"]["rmse"] for x in a])[0]
                if best is None or ra < best[0]:
                    best = (ra, " ".join(opts))
                print("| %s | %s | %d | %s | %s | %s | %s |" % (
                    m, p, k, "%.4f ± %.4f" % stats([x["metrics"]["rmse"] for x in a]),
                    "%.4f ± %.4f" % stats([x["metrics"]["mae"] for x in a]),
                    "%.4f ± %.4f" % stats([f["rmse"] for f in b]), "%.4f ± %.4f" % stats([f["mae"] for f in b])))
                sys.stdout.flush()
    print("\nBest on ml-100k: `%s`, RMSE %.4f.\n" % (best[1], best[0]))

    print("### Shrinkage and minimum support (ml-100k, 5 folds, k = 40)\n")
    print("| options | RMSE | MAE |")
    print("|---|---|---|")
    variants = [
        ["--metric", "pearson", "--predict", "means", "--shrinkage", "100"],
        ["--metric", "pearson", "--predict", "means", "--min-support", "5"],
        ["--metric", "pearson", "--predict", "baseline", "--shrinkage", "100"],
        ["--metric", "pearson-baseline", "--predict", "baseline", "--shrinkage", "0"],
        ["--metric", "pearson-baseline", "--predict", "baseline", "--shrinkage", "50"],
        ["--metric", "pearson-baseline", "--predict", "baseline", "--shrinkage", "200"],
        ["--metric", "msd", "--predict", "baseline", "--min-support", "3"],
    ]
    if quick:
        variants = variants[:2]
    for v in variants:
        a = ml100k(v + ["-k", "40"], "var-" + "-".join(x.strip("-") for x in v))
        print("| `%s -k 40` | %s | %s |" % (" ".join(v), "%.4f ± %.4f" % stats([x["metrics"]["rmse"] for x in a]),
                                           "%.4f ± %.4f" % stats([x["metrics"]["mae"] for x in a])))
        sys.stdout.flush()

    print("\n### User-based k-NN (`--by user`)\n")
    print("Surprise 1.1.4 with `user_based=True`, k = 40, min_k = 1, mean RMSE over u1..u5:\n")
    print("| Surprise configuration | Surprise | recknn options | recknn | difference |")
    print("|---|---|---|---|---|")
    surprise_user = [
        ("KNNBasic, msd", 0.980105, ["--by", "user", "--metric", "msd", "--predict", "basic", "-k", "40"]),
        ("KNNBaseline, msd (ALS baselines)", 0.932288, ["--by", "user", "--metric", "msd", "--predict", "baseline", "-k", "40"]),
        ("KNNWithMeans, pearson", 0.952484, ["--by", "user", "--metric", "pearson", "--predict", "means", "-k", "40"]),
    ]
    for name, want, opts in surprise_user:
        got = stats([x["metrics"]["rmse"] for x in ml100k(opts, "surprise-user-" + "-".join(opts[3::2]))])[0]
        print("| %s | %.6f | `%s` | %.6f | %+.6f |" % (name, want, " ".join(opts), got, got - want))
        sys.stdout.flush()
    print("\nRMSE and MAE, user-based, k = 40 (mean ± sd over 5 folds):\n")
    print("| metric | predict | ml-100k RMSE | ml-100k MAE | ml-latest-small RMSE | ml-latest-small MAE |")
    print("|---|---|---|---|---|---|")
    for m in metrics:
        for p in modes:
            opts = ["--by", "user", "--metric", m, "--predict", p, "-k", "40"]
            tag = "user-%s-%s" % (m, p)
            a = ml100k(opts, tag)
            b = mlsmall(opts, tag + "-small")
            print("| %s | %s | %s | %s | %s | %s |" % (
                m, p, "%.4f ± %.4f" % stats([x["metrics"]["rmse"] for x in a]),
                "%.4f ± %.4f" % stats([x["metrics"]["mae"] for x in a]),
                "%.4f ± %.4f" % stats([f["rmse"] for f in b]), "%.4f ± %.4f" % stats([f["mae"] for f in b])))
            sys.stdout.flush()

    print("\n### Top-10 (relevance >= 4.0), mean ± sd over 5 folds, with the most-popular baseline\n")
    print("Options: `--top-n 10 --baseline popular -k 40 --metric M [--shrinkage X]` (the prediction mode does not "
          "change top-N).\n")
    for name, fn in (("ml-100k", ml100k), ("ml-latest-small", mlsmall)):
        print("#### %s\n" % name)
        print("| recommender | precision@10 | recall@10 | NDCG@10 | MRR | hit rate | coverage | Gini |")
        print("|---|---|---|---|---|---|---|---|")
        base = None
        for m in metrics:
            # the metric's own shrinkage (0; 100 for pearson-baseline), then a stronger one
            for shrink in (None, "200" if m == "pearson-baseline" else "100"):
                opts = ["--metric", m, "-k", "40", "--baseline", "popular"] + (["--shrinkage", shrink] if shrink else [])
                folds = fn(opts, "top-%s-%s-%s" % (name, m, shrink), top_n=10)
                if name == "ml-100k":
                    folds = [x["folds"][0] for x in folds]

                def cell(key, which="ranking"):
                    return "%.4f ± %.4f" % stats([f[which][key] for f in folds])
                keys = ("precision", "recall", "ndcg", "mrr", "hit_rate", "coverage", "gini")
                label = "item-kNN %s%s" % (m, ", shrinkage " + shrink if shrink else "")
                print("| %s | %s |" % (label, " | ".join(cell(k) for k in keys)))
                base = " | ".join(cell(k, "baseline_popular") for k in keys)
                sys.stdout.flush()
        for m, shrink in (("msd", "100"), ("cosine", "100"), ("pearson", None)):
            opts = ["--by", "user", "--metric", m, "-k", "40", "--baseline", "popular"] + (["--shrinkage", shrink] if shrink else [])
            folds = fn(opts, "top-user-%s-%s-%s" % (name, m, shrink), top_n=10)
            if name == "ml-100k":
                folds = [x["folds"][0] for x in folds]
            keys = ("precision", "recall", "ndcg", "mrr", "hit_rate", "coverage", "gini")
            print("| user-kNN %s%s | %s |" % (m, ", shrinkage " + shrink if shrink else "",
                                             " | ".join("%.4f ± %.4f" % stats([f["ranking"][k] for f in folds]) for k in keys)))
            sys.stdout.flush()
        print("| most popular | %s |\n" % base)
full_section()
print("_%d recknn runs, %.0f s on this machine._" % (runs, time.time() - t0))
