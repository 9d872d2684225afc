#!/bin/sh
# Compare recknn with the float64 reference of the behaviour contract
# (shared/tools/ref_knn.py, not part of this repository) on a train/test
# pair, for every metric and prediction mode at the given k values.
#   bench/check_ref.sh RECKNN TOOLS_DIR TRAIN TEST OUTDIR [K...]
# Prints one line per run and exits 1 when any comparison is out of
# tolerance (similarities 1e-4, predictions 1e-3, RMSE 1e-4).
set -eu
recknn=$1 tools=$2 train=$3 test=$4 out=$5
shift 5
ks=${*:-"20 40"}
mkdir -p "$out"
status=0
for k in $ks; do
  for metric in pearson pearson-baseline cosine msd euclidean; do
    for mode in basic means baseline; do
      d="$out/$metric-$mode-k$k"
      mkdir -p "$d"
      "$recknn" "$train" --test "$test" --metric "$metric" --predict "$mode" -k "$k" \
          --out "$d/ours" --device "${DEVICE:-cpu}" --quiet
      /usr/bin/python3 "$tools/ref_knn.py" "$train" --test "$test" --metric "$metric" --predict "$mode" -k "$k" \
          --neighbours-out "$d/ref-neighbors.csv" --predictions-out "$d/ref-predictions.csv" > "$d/ref.json"
      cmp=$(/usr/bin/python3 "$tools/compare_outputs.py" --neighbors "$d/ours/neighbors.csv" "$d/ref-neighbors.csv" \
            --predictions "$d/ours/predictions.csv" "$d/ref-predictions.csv") || status=1
      rmse_ours=$(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['metrics']['rmse'])" "$d/ours/metrics.json")
      rmse_ref=$(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['rmse'])" "$d/ref.json")
      ok=$(/usr/bin/python3 -c "import sys; a,b=map(float,sys.argv[1:]); print('ok' if abs(a-b)<=1e-4 else 'RMSE-MISMATCH')" "$rmse_ours" "$rmse_ref")
      [ "$ok" = ok ] || status=1
      printf '%-17s %-8s k=%-3s rmse %.6f ref %.6f %s | %s\n' "$metric" "$mode" "$k" "$rmse_ours" "$rmse_ref" "$ok" \
          "$(echo "$cmp" | tr '\n' ' ')"
    done
  done
done
exit $status
