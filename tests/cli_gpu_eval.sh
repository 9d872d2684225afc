#!/bin/sh
# cli_gpu_eval.sh — a fold run on the GPU gives the CPU's results: the same
# per-fold metrics and byte-identical predictions and recommendations of the
# last fold, with the popularity baseline and --write-folds; and signed lists
# (--negative yes) with top-N from them.  Skipped (77)
# where no GPU is usable.
. "$top_srcdir/tests/setup.sh"
CLI="$TESTDATA/cli"
[ -x "$RECKNN" ] || fail "$RECKNN is not built"
train="$top_srcdir/sample_data/ratings.csv"
[ -f "$train" ] || train="$CLI/good.csv"
gpu_usable "$train" || { echo "SKIP: no usable GPU: $(cat "$tmp/probe.err")"; exit 77; }
for metric in pearson cosine pearson-baseline; do
    for dev in cpu gpu; do
        expect_status 0 "$RECKNN" "$train" --folds 3 --seed 5 --top-n 10 --baseline popular --metric "$metric" \
            --predict baseline --write-folds --out "$tmp/$metric-$dev" --device "$dev" --quiet
    done
    for f in 1 2 3; do
        for name in predictions recommendations neighbors; do
            cmp -s "$tmp/$metric-cpu/$name.fold$f.csv" "$tmp/$metric-gpu/$name.fold$f.csv" ||
                fail "$metric fold $f: $name differ between the CPU and the GPU"
        done
    done
    # the folds' metrics are the same numbers (the timings are not)
    for dev in cpu gpu; do
        sed -n '/"folds": \[/,/^  \],/p' "$tmp/$metric-$dev/metrics.json" | sed 's/, "timings_s": {[^}]*}//' \
            > "$tmp/$metric-$dev.folds"
    done
    cmp -s "$tmp/$metric-cpu.folds" "$tmp/$metric-gpu.folds" || fail "$metric: per-fold metrics differ"
    grep -q '"rmse"' "$tmp/$metric-cpu.folds" || fail "$metric: no per-fold metrics found"
done
# signed lists (--negative yes) and top-N from them: the same files on both engines
for dev in cpu gpu; do
    expect_status 0 "$RECKNN" "$train" --holdout 0.2 --seed 5 --rank lists --negative yes --metric pearson \
        --out "$tmp/neg-$dev" --device "$dev" --quiet
done
for name in predictions recommendations neighbors; do
    cmp -s "$tmp/neg-cpu/$name.csv" "$tmp/neg-gpu/$name.csv" || fail "--negative yes: $name differ between the CPU and the GPU"
done
exit 0
