#!/bin/sh
# Compare recknn with the float64 reference of the behaviour contract
# (shared/tools/ref_knn.py, not part of this repository) on a train/test
# pair, for every metric and prediction mode at the given k values.
#   bench/check_ref.sh RECKNN TOOLS_DIR TRAIN TEST OUTDIR [K...]
# Prints one line per run and exits 1 when any comparison is out of
# tolerance (similarities 1e-4, predictions 1e-3, RMSE 1e-4, top-N scores
# 50 x 1e-4 a rank; items may differ only where scores tie).
# Top-N (CONTRACT.md §5): with the default prediction mode (means) of every metric
# and k, recknn's recommendations.csv (--top-n $TOPN, default 10) is compared
# with the reference's (ref_knn.py --top-n --recommendations-out); TOPN=0
# leaves top-N out.
set -eu
recknn=$1 tools=$2 train=$3 test=$4 out=$5
shift 5
ks=${*:-"20 40"}
topn=${TOPN:-10}
mkdir -p "$out"
status=0
for k in $ks; do
  for metric in pearson pearson-baseline cosine msd euclidean; do
    for mode in basic means baseline; do
      d="$out/$metric-$mode-k$k"
      mkdir -p "$d"
      # top-N does not depend on the prediction mode: compared once per metric and k
      ours_topn='' ref_topn='' cmp_topn=''
      if [ "$topn" -gt 0 ] && [ "$mode" = means ]; then
        ours_topn="--top-n $topn"
        ref_topn="--top-n $topn --recommendations-out $d/ref-recommendations.csv"
        cmp_topn="--recommendations $d/ours/recommendations.csv $d/ref-recommendations.csv"
      fi
      # shellcheck disable=SC2086 # the *_topn lists are split on purpose
      "$recknn" "$train" --test "$test" --metric "$metric" --predict "$mode" -k "$k" $ours_topn \
          --out "$d/ours" --device "${DEVICE:-cpu}" --quiet
      # shellcheck disable=SC2086
      /usr/bin/python3 "$tools/ref_knn.py" "$train" --test "$test" --metric "$metric" --predict "$mode" -k "$k" \
          --neighbours-out "$d/ref-neighbors.csv" --predictions-out "$d/ref-predictions.csv" $ref_topn > "$d/ref.json"
      # shellcheck disable=SC2086
      cmp=$(/usr/bin/python3 "$tools/compare_outputs.py" --neighbors "$d/ours/neighbors.csv" "$d/ref-neighbors.csv" \
            --predictions "$d/ours/predictions.csv" "$d/ref-predictions.csv" $cmp_topn) || status=1
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
