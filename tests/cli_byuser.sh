#!/bin/sh
# cli_byuser.sh — --by user (CONTRACT.md §6b) checked against item mode on the
# transposed file: user-based k-NN on RATINGS is item-based k-NN on RATINGS
# with the user and item columns swapped, so the lists must be the same rows
# and the basic predictions the same numbers (every metric); user top-N keeps
# its contract; folds work; on a GPU the files equal the CPU's (skipped
# without one).
. "$top_srcdir/tests/setup.sh"
[ -x "$RECKNN" ] || fail "$RECKNN is not built"
train="$top_srcdir/sample_data/ratings.csv"
[ -f "$train" ] || train="$TESTDATA/cli/good.csv"
awk -F, 'BEGIN { OFS = "," } NR == 1 { print "userId,movieId,rating,timestamp"; next } { print $2, $1, $3, $4 }' \
    "$train" > "$tmp/swapped.csv"
for metric in pearson cosine msd euclidean pearson-baseline; do
    expect_status 0 "$RECKNN" "$train" --by user --metric "$metric" --predict basic -k 10 --holdout 0.1 --seed 3 \
        --top-n 0 --out "$tmp/u-$metric" --device cpu --quiet
    expect_status 0 "$RECKNN" "$tmp/swapped.csv" --metric "$metric" --predict basic -k 10 --holdout 0.1 --seed 3 \
        --top-n 0 --out "$tmp/s-$metric" --device cpu --quiet
    [ "$metric" = pearson-baseline ] && continue # its baselines keep their roles: not a transpose
    cmp -s "$tmp/u-$metric/neighbors.csv" "$tmp/s-$metric/neighbors.csv" ||
        fail "$metric: user lists differ from the item lists of the transposed file"
    awk -F, 'BEGIN { OFS = "," } NR == 1 { print; next } { print $2, $1, $3, $4, $5 }' \
        "$tmp/s-$metric/predictions.csv" > "$tmp/s-$metric/back.csv"
    cmp -s "$tmp/u-$metric/predictions.csv" "$tmp/s-$metric/back.csv" ||
        fail "$metric: user-based predictions differ from the transposed item-based ones"
done
# the lists hold users: every id in both columns is a user of the file
awk -F, 'NR == FNR { if (FNR > 1) u[$1] = 1; next } FNR > 1 && (!($1 in u) || !($2 in u)) { bad = 1 } END { exit bad }' \
    "$train" "$tmp/u-pearson/neighbors.csv" || fail "neighbors.csv of --by user names a non-user"
grep -q '"by": "user"' "$tmp/u-pearson/metrics.json" || fail "metrics.json does not say --by user"

# user top-N: ranks in order, positive scores not increasing, never an item the user rated
expect_status 0 "$RECKNN" "$train" --by user --top-n 5 --out "$tmp/t" --device cpu --quiet
awk -F, 'FNR == 1 { next } NR == FNR { next } { if ($1 != u) { u = $1; want = 1; prev = "" }
    if ($2 != want || $2 > 5 || !($4 > 0) || (prev != "" && $4 + 0 > prev + 0)) { print; bad = 1 }
    prev = $4; want++ } END { exit bad }' "$train" "$tmp/t/recommendations.csv" || fail "user top-N breaks the contract"
awk -F, 'NR == FNR { if (FNR > 1) r[$1 "," $2] = 1; next } FNR > 1 && (($1 "," $3) in r) { bad = 1 } END { exit bad }' \
    "$train" "$tmp/t/recommendations.csv" || fail "user top-N recommends a rated item"
[ "$(awk 'END { print NR }' "$tmp/t/recommendations.csv")" -gt 1 ] || fail "user top-N wrote nothing"
# folds with the ranking metrics and the baseline
expect_status 0 "$RECKNN" "$train" --by user --top-n 5 --folds 3 --seed 1 --baseline popular --out "$tmp/f" \
    --device cpu --quiet
grep -q '"path": "cpu user"' "$tmp/f/metrics.json" || fail "--by user top-N did not run the user engine"
grep -q '"baseline_popular": {' "$tmp/f/metrics.json" || fail "--by user folds lack the baseline's metrics"
expect_status 2 "$RECKNN" "$train" --by user --save-model "$tmp/m" --out "$tmp/x" --device cpu
expect_status 2 "$RECKNN" "$train" --by users --out "$tmp/x" --device cpu

# the GPU engine on the transposed view gives the CPU's files
set +e
"$RECKNN" "$train" --device gpu --top-n 0 --no-neighbors --out "$tmp/probe" --quiet 2>/dev/null
st=$?
set -e
[ "$st" -eq 5 ] && { echo "no usable GPU: the GPU part is skipped"; exit 0; }
for mode in basic means baseline; do
    for dev in cpu gpu; do
        expect_status 0 "$RECKNN" "$train" --by user --predict "$mode" --holdout 0.1 --seed 3 --top-n 5 \
            --out "$tmp/$mode-$dev" --device "$dev" --quiet
    done
    for f in neighbors.csv predictions.csv recommendations.csv; do
        cmp -s "$tmp/$mode-cpu/$f" "$tmp/$mode-gpu/$f" || fail "--by user --predict $mode: $f differs on the GPU"
    done
done
exit 0
