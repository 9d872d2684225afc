#!/bin/sh
# gpu_vs_cpu.sh DIR -- the whole job on the GPU and on the CPU for every metric and
# prediction mode (k = 20 and 40) on a recknn-synth split of about 200k ratings, written
# into DIR; neighbors.csv must agree byte for byte (ties are resolved the same way) and
# every prediction within 1e-6.  One line per run; exit 1 when anything differs.
set -u
dir=${1:?usage: gpu_vs_cpu.sh DIR}
recknn=${RECKNN:-./recknn}
synth=${RECKNN_SYNTH:-./recknn-synth}
mkdir -p "$dir"
"$synth" --users 2000 --items 3000 --ratings 200000 --seed 7 --quiet \
    --output "$dir/train.csv" --test-output "$dir/test.csv" --test-fraction 0.1 || exit 1
status=0
for k in 20 40; do
  for metric in pearson pearson-baseline cosine msd euclidean; do
    for mode in basic means baseline; do
      d="$dir/$metric-$mode-k$k"
      for dev in cpu gpu; do
        "$recknn" "$dir/train.csv" --test "$dir/test.csv" --metric "$metric" --predict "$mode" -k "$k" \
            --device "$dev" --out "$d/$dev" --quiet || { echo "$metric $mode k=$k: $dev run failed"; status=1; }
      done
      lists=same
      cmp -s "$d/cpu/neighbors.csv" "$d/gpu/neighbors.csv" || { lists=DIFFER; status=1; }
      pred=$(python3 - "$d/cpu/predictions.csv" "$d/gpu/predictions.csv" <<'PY'
import csv, sys
a = list(csv.DictReader(open(sys.argv[1])))
b = list(csv.DictReader(open(sys.argv[2])))
bad = len(a) != len(b)
worst = 0.0
for x, y in zip(a, b):
    d = abs(float(x['prediction']) - float(y['prediction']))
    worst = max(worst, d)
    bad |= d > 1e-6 or x['neighbors_used'] != y['neighbors_used'] or x['user'] != y['user']
print(f"{len(a)} predictions, max |diff| {worst:.3g}{' DIFFER' if bad else ''}")
PY
)
      case $pred in *DIFFER*) status=1 ;; esac
      printf '%-17s %-8s k=%-3s lists %s; %s\n' "$metric" "$mode" "$k" "$lists" "$pred"
    done
  done
done
exit $status
