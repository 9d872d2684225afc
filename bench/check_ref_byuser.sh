#!/bin/sh
# Compare recknn's user mode (--by user, CONTRACT.md §6b) with the float64 reference
# of the behaviour contract (shared/tools/ref_knn.py, item mode only, not part
# of this repository) on a train/test pair, at the given k values.
#   bench/check_ref_byuser.sh RECKNN TOOLS_DIR TRAIN TEST OUTDIR [K...]
# Prints one line per run, a summary, and exits 1 when any comparison is out
# of tolerance (compare_outputs.py's: similarities 1e-4, predictions 1e-3 with
# neighbors_used equal, top-N scores 50 x 1e-4 a rank; RMSE 1e-4).
#
# How: user mode is item mode with the roles of users and items swapped, so
# ref_knn.py runs on copies of TRAIN and TEST with the user and item columns
# swapped (OUTDIR/transposed/, never the repository: the data's licence may
# forbid redistribution); its lists are then per-user lists (compared as they
# are) and its predictions of (item, user) pairs are recknn's (user, item)
# ones (swapped back before the comparison).  bench/ref_byuser.py does the
# swapping; it imports ref_knn and copies none of its code.
#
# Covered (each at every K):
# - transpose: pearson, cosine, msd, euclidean x --predict basic, means:
#   lists, predictions, RMSE; and four runs with --shrinkage, --min-support
#   and --min-k (options both programs take).
# - baselines: pearson-baseline x basic, means, baseline, and --predict
#   baseline of the four other metrics.  A pure transpose would run the ALS
#   with the roles swapped (b_u with 10 first, then b_i with 15) while CONTRACT.md §6b
#   §6b keeps b_i with 10, then b_u with 15, so here ref_knn's own Model is
#   driven through its Python API: its item-mode baselines of TRAIN are put
#   into the transposed model (b_i, b_u exchanged) and its pearson-baseline
#   similarities recomputed from them.  BASELINES=0 leaves these runs out.
# - The unknown-item rule: under --predict means recknn answers a pair whose
#   item has no training rating with mu (docs/USAGE.md "User-based k-NN", as
#   Surprise's KNNWithMeans), where the transpose gives the user's mean.  The
#   reference's prediction of such a pair is replaced by mu (clipped, 0 used)
#   before the comparison and the reference RMSE is taken over the replaced
#   file; the count of such pairs is printed ("unknown-item N set to mu";
#   "kept" for basic and baseline, which need no replacement: mu, and
#   mu + b_u, either way).  An unknown user gets mu under means both ways.
# - top-N (CONTRACT.md §6b: score(u, c) = sum over u's listed neighbours v who rated
#   c of sim(u, v)) is NOT the transposed item top-N (that one ranks users for
#   an item), so ref_knn.py cannot give it.  With the means runs, recknn's
#   recommendations.csv (--top-n $TOPN, default 10; TOPN=0 leaves it out) is
#   compared with that sum computed in float64 from the reference's own lists
#   of the same run (ref_byuser.py utopn): a derived check, marked "derived"
#   (a tie swap at a list's k-th rank would show there as a score difference).
# Not covered: the full-vector metrics (cosine-full, euclidean-full, jaccard)
# and --implicit, which ref_knn.py does not implement; --rating-scale,
# --duplicates other than last, the splits and folds (the reference takes a
# train/test pair only); top-N with --users or non-default list options; the
# GPU (DEVICE=gpu runs it, default cpu).
# Time: ml-100k u1 at k = 20 40 (40 runs) takes about 5 minutes on 2 cores,
# nearly all of it in the dense reference.
set -eu
recknn=$1 tools=$2 train=$3 test=$4 out=$5
shift 5
ks=${*:-"20 40"}
topn=${TOPN:-10}
py=/usr/bin/python3
helper=$(dirname "$0")/ref_byuser.py
mkdir -p "$out/transposed"
"$py" "$helper" "$tools" transpose "$train" "$out/transposed/train.tsv"
"$py" "$helper" "$tools" transpose "$test" "$out/transposed/test.tsv"
status=0
: > "$out/runs.txt"

# run GROUP METRIC MODE K [OPTIONS...]: one comparison, one line
run() {
  group=$1 metric=$2 mode=$3 k=$4
  shift 4
  opts=$*
  tag=$(printf '%s' "$metric.$mode.k$k $opts" | sed 's/ *$//; s/ --/_/g; s/ /=/g')
  d="$out/$group-$tag"
  mkdir -p "$d"
  ours_topn='' cmp_topn=''
  if [ "$topn" -gt 0 ] && [ "$mode" = means ] && [ -z "$opts" ]; then
    ours_topn="--top-n $topn"
    cmp_topn="--recommendations $d/ours/recommendations.csv $d/ref-recommendations.csv"
  fi
  # shellcheck disable=SC2086 # $opts and the *_topn lists are split on purpose
  "$recknn" "$train" --test "$test" --by user --metric "$metric" --predict "$mode" -k "$k" $opts $ours_topn \
      --out "$d/ours" --device "${DEVICE:-cpu}" --quiet
  if [ "$group" = transpose ]; then
    # shellcheck disable=SC2086
    "$py" "$tools/ref_knn.py" "$out/transposed/train.tsv" --test "$out/transposed/test.tsv" --metric "$metric" \
        --predict "$mode" -k "$k" $opts --neighbours-out "$d/ref-neighbors.csv" \
        --predictions-out "$d/ref-predictions-transposed.csv" > "$d/ref.json"
    "$py" "$helper" "$tools" mapback "$train" "$mode" "$d/ref-predictions-transposed.csv" \
        "$d/ref-predictions.csv" > "$d/ref-mapped.json"
  else
    ms=1 lam=- mk=1
    # shellcheck disable=SC2086 # the options are split on purpose
    set -- $opts
    while [ $# -gt 1 ]; do
      case $1 in --min-support) ms=$2 ;; --shrinkage) lam=$2 ;; --min-k) mk=$2 ;; esac
      shift 2
    done
    "$py" "$helper" "$tools" baseline "$train" "$test" "$metric" "$mode" "$k" "$ms" "$lam" "$mk" \
        "$d/ref-neighbors.csv" "$d/ref-predictions.csv" > "$d/ref-mapped.json"
  fi
  if [ -n "$cmp_topn" ]; then
    "$py" "$helper" "$tools" utopn "$train" "$d/ref-neighbors.csv" "$topn" "$d/ref-recommendations.csv"
  fi
  # shellcheck disable=SC2086
  "$py" "$tools/compare_outputs.py" --neighbors "$d/ours/neighbors.csv" "$d/ref-neighbors.csv" \
      --predictions "$d/ours/predictions.csv" "$d/ref-predictions.csv" $cmp_topn > "$d/cmp.txt" || status=1
  sims=$("$py" "$helper" "$tools" simdiff "$d/ours/neighbors.csv" "$d/ref-neighbors.csv")
  line=$("$py" -c "
import json, sys
ours = json.load(open(sys.argv[1]))['metrics']['rmse']
ref = json.load(open(sys.argv[2]))
ok = 'ok' if abs(ours - ref['rmse']) <= 1e-4 else 'RMSE-MISMATCH'
rule = 'set to mu' if sys.argv[3] == 'means' else 'kept'
print(f'{ours:.6f} ref {ref[\"rmse\"]:.6f} |d| {abs(ours - ref[\"rmse\"]):.1e} {ok}'
      f' | unknown-item {ref[\"unknown_item_pairs\"]} {rule}')
" "$d/ours/metrics.json" "$d/ref-mapped.json" "$mode")
  case $line in *RMSE-MISMATCH*) status=1 ;; esac
  cmp=$(sed 's/^recommendations:/recommendations (derived):/' "$d/cmp.txt" | tr '\n' ' ')
  text=$(printf '%-9s %-16s %-8s k=%-3s %-31s rmse %s | max |dsim| %s | %s' "$group" "$metric" "$mode" "$k" \
      "$opts" "$line" "$sims" "$cmp")
  echo "$text"
  echo "$text" >> "$out/runs.txt"
}

for k in $ks; do
  for metric in pearson cosine msd euclidean; do
    for mode in basic means; do
      run transpose "$metric" "$mode" "$k"
    done
  done
  run transpose pearson basic "$k" --shrinkage 100
  run transpose cosine means "$k" --min-support 5 --min-k 3
  run transpose msd basic "$k" --min-support 3 --shrinkage 50
  run transpose euclidean means "$k" --min-k 5
  if [ "${BASELINES:-1}" -ne 0 ]; then
    for mode in basic means baseline; do
      run baselines pearson-baseline "$mode" "$k"
    done
    for metric in pearson cosine msd euclidean; do
      run baselines "$metric" baseline "$k"
    done
    run baselines pearson-baseline baseline "$k" --shrinkage 25 --min-k 2
  fi
done

# summary: runs whose every comparison held, rows compared, largest differences
awk '
{ n++; bad = ($0 ~ /RMSE-MISMATCH/) }
{ for (f = 1; f <= NF; f++) {
    if ($f == "|d|" && $(f + 1) + 0 > drmse) drmse = $(f + 1) + 0
    if ($f == "|dsim|" && $(f + 1) + 0 > dsim) dsim = $(f + 1) + 0
    if ($f == "neighbors:") { nb += $(f + 1); if ($(f + 4) > 0) bad = 1; ties += $(f + 7) }
    if ($f == "predictions:") { pr += $(f + 1); if ($(f + 3) > 0) bad = 1 }
    if ($f == "|diff|" && $(f + 1) + 0 > dpred) dpred = $(f + 1) + 0
    if ($f == "(derived):") { rc += $(f + 1); if ($(f + 4) > 0) bad = 1; rties += $(f + 7) } } }
{ good += !bad }
END {
  printf "summary: %d of %d runs agree; neighbours %d rows (%d tie swaps), predictions %d rows, ", good, n, nb, ties, pr
  printf "top-N (derived) %d rows (%d tie swaps)\n", rc, rties
  printf "summary: max |d similarity| %.3g, max |d prediction| %.3g, max |d RMSE| %.3g\n", dsim, dpred, drmse
}' "$out/runs.txt"
exit $status
