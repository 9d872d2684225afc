#!/bin/sh
# model_bench.sh DATA OUT [RUNS] -- a saved model at ML-20M size: the run that saves it
# (ml20m-train.csv --test ml20m-test.csv, top-10, --save-model), then RUNS (default 3)
# runs that load it and answer the same test pairs as --queries with top-10 for every
# user; the answers and the recommendations must equal the saving run's byte for byte.
# Prints one line per run (save or load seconds, queries seconds, file size) and a check.
set -u
data=${1:?usage: model_bench.sh DATA OUT [RUNS]}
out=${2:?usage: model_bench.sh DATA OUT [RUNS]}
runs=${3:-3}
recknn=${RECKNN:-./recknn}
mkdir -p "$out"
[ -f "$data/ml20m-train.csv" ] || sh bench/gen.sh "$data" ml20m-split >"$out/gen.log" 2>&1
train=$data/ml20m-train.csv
test=$data/ml20m-test.csv
m=$out/ml20m.rkm
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
"$recknn" "$train" --test "$test" -k 20 --top-n 10 --save-model "$m" --out "$out/save" --quiet ${MODEL_ARGS:-} \
    || { echo "model: the saving run failed"; exit 1; }
echo "model save: $(json "$out/save/metrics.json" 'round(d["timings_s"]["model_io"], 3)') s to write" \
     "$(du -m "$m" | cut -f1) MB; whole run $(json "$out/save/metrics.json" 'round(d["timings_s"]["total"], 3)') s" \
     "on $(json "$out/save/metrics.json" 'd["device"]')"
cut -d, -f1,2,4,5 "$out/save/predictions.csv" >"$out/want.csv"
ok=1
r=1
while [ "$r" -le "$runs" ]; do
    /usr/bin/time -f "%e s wall, %M KB max RSS" -o "$out/time-$r.txt" \
        "$recknn" "$train" --model "$m" --queries "$test" --top-n 10 --out "$out/load-$r" --quiet ${MODEL_ARGS:-} \
        || { echo "model: load run $r failed"; exit 1; }
    cut -d, -f1,2,4,5 "$out/load-$r/predictions.csv" >"$out/got.csv"
    same_p=no; cmp -s "$out/want.csv" "$out/got.csv" && same_p=yes
    same_r=no; cmp -s "$out/save/recommendations.csv" "$out/load-$r/recommendations.csv" && same_r=yes
    [ "$same_p$same_r" = yesyes ] || ok=0
    echo "model load $r: read $(json "$out/load-$r/metrics.json" 'round(d["saved_model"]["read_s"], 3)') s;" \
         "ratings $(json "$out/load-$r/metrics.json" 'round(d["timings_s"]["load"], 3)') s;" \
         "$(json "$out/load-$r/metrics.json" 'd["saved_model"]["queries"]') queries in" \
         "$(json "$out/load-$r/metrics.json" 'round(d["timings_s"]["similarity"] + d["timings_s"]["predict"], 3)') s;" \
         "top-10 $(json "$out/load-$r/metrics.json" 'round(d["timings_s"]["recommend"], 3)') s;" \
         "total $(json "$out/load-$r/metrics.json" 'round(d["timings_s"]["total"], 3)') s ($(cat "$out/time-$r.txt"));" \
         "predictions identical: $same_p, recommendations identical: $same_r"
    r=$((r + 1))
done
[ "$ok" = 1 ] && echo "model: every reload answered as the saving run" || { echo "model: MISMATCH"; exit 1; }
