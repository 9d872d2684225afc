#!/bin/sh
# pmodel_saved.sh RECKNN RATINGS OUT [DEVICE] — the prediction models of
# CONTRACT.md §4b through a model file (§10), timed: every 50th rating of
# RATINGS (a header line first) is held out as the test set; for
# --predict interpolate and global the saving run (--test, --save-model, on
# DEVICE, default gpu), then `--model --queries` of the test pairs over the
# training part (on the CPU, as --model runs), its predictions compared with
# the saving run's (user, item, prediction, neighbours: cmp).  Prints one
# table row a mode: file size, saving run wall, the model's write, the
# answering run's wall, its model read and its predictions, and whether the
# files match.
set -eu
recknn=$1
ratings=$2
out=$3
dev=${4:-gpu}
mkdir -p "$out"
awk -v t="$out/test.csv" -v r="$out/train.csv" 'NR == 1 {print > t; print > r; next}
    NR % 50 == 0 {print > t; next} {print > r}' "$ratings"
now() { date +%s.%N; }
field() { # field FILE KEY: a number after "KEY": in metrics.json
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    d = d[k]
print(d)' "$1" "$2"
}
echo "| --predict | model file | saving run wall | model write | --model run wall | model read | predictions | files |"
echo "|---|---|---|---|---|---|---|---|"
for mode in interpolate global; do
    t0=$(now)
    "$recknn" "$out/train.csv" --test "$out/test.csv" --metric pearson-baseline -k 20 --predict $mode --top-n 0 \
        --no-neighbors --device "$dev" --quiet --save-model "$out/$mode.rkm" --out "$out/save_$mode"
    t1=$(now)
    "$recknn" "$out/train.csv" --model "$out/$mode.rkm" --queries "$out/test.csv" --top-n 0 --quiet \
        --out "$out/model_$mode"
    t2=$(now)
    cut -d, -f1,2,4,5 "$out/save_$mode/predictions.csv" > "$out/a.csv"
    cut -d, -f1,2,4,5 "$out/model_$mode/predictions.csv" > "$out/b.csv"
    same=differ
    cmp -s "$out/a.csv" "$out/b.csv" && same=identical
    size=$(stat -c %s "$out/$mode.rkm")
    printf '| %s | %.1f MB | %.2f s | %.3f s | %.2f s | %.3f s | %.3f s | %s |\n' $mode \
        "$(awk "BEGIN {print $size / 1e6}")" "$(awk "BEGIN {print $t1 - $t0}")" \
        "$(field "$out/save_$mode/metrics.json" timings_s.model_io)" "$(awk "BEGIN {print $t2 - $t1}")" \
        "$(field "$out/model_$mode/metrics.json" saved_model.read_s)" \
        "$(field "$out/model_$mode/metrics.json" timings_s.predict)" $same
done
