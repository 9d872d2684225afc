#!/bin/sh
# bench/negative_cost.sh RECKNN OUT FILE... : what signed lists cost (--negative yes against
# no, CONTRACT.md §3) with top-N from the --metric lists (--rank lists --metric
# pearson-baseline -k 40), 2% held out, on --device cpu and gpu.  One line per run: file,
# device, --negative, the stages' seconds (similarity, select, recommend, total) and NDCG@10;
# "DIFFER" when the CPU's and the GPU's files are not the same bytes.
set -u
RECKNN=$1; OUT=$2; shift 2
mkdir -p "$OUT"
status=0
for f in "$@"; do
    b=$(basename "$f")
    for neg in no yes; do
        for dev in cpu gpu; do
            o="$OUT/$b.$neg.$dev"
            "$RECKNN" "$f" --holdout 0.02 --seed 1 --rank lists --metric pearson-baseline -k 40 --negative $neg \
                --device $dev --out "$o" --quiet 2>"$o.err" ||
                { echo "$b $dev --negative $neg: exit $? $(tail -1 "$o.err")"; status=1; continue; }
            /usr/bin/python3 - "$o/metrics.json" "$b" "$dev" "$neg" <<'PY' || true
import json, sys
d = json.load(open(sys.argv[1])); t = d['timings_s']
print("%-12s %-4s --negative %-3s similarity %.3f select %.3f recommend %.3f total %.3f ndcg@10 %.4f" % (
    sys.argv[2], sys.argv[3], sys.argv[4], t.get('similarity', 0), t.get('select', 0), t.get('recommend', 0),
    t.get('total', 0), d['summary']['ndcg']['mean']))
PY
        done
        for file in recommendations.csv neighbors.csv predictions.csv; do
            cmp -s "$OUT/$b.$neg.cpu/$file" "$OUT/$b.$neg.gpu/$file" || { echo "DIFFER: $b --negative $neg $file"; status=1; }
        done
    done
done
exit $status
