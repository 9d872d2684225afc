#!/bin/sh
# cli_subset.sh — issue 10's options on the CPU (and, when a GPU is usable,
# the GPU against the CPU):
#   the full-vector metrics and --implicit on a hand-computed file;
#   --items FILE: the lists of those items are the whole run's, the rest are
#     absent, unknown ids are noted, and the options it excludes are exit 2;
#   --by user --users FILE: the users' lists and recommendations are the
#     whole run's;
#   k above the GPU selection's limit (host selection) and both --gpu-query
#     routes give the CPU's files.
. "$top_srcdir/tests/setup.sh"
[ -x "$RECKNN" ] || fail "$RECKNN is not built"

# item vectors over users 1..4: A(10) = (4,2,0,1), B(20) = (2,4,3,0), C(30) = (0,5,0,2)
printf 'userId,movieId,rating,timestamp\n1,10,4,1\n1,20,2,1\n2,10,2,1\n2,20,4,1\n2,30,5,1\n3,20,3,1\n4,10,1,1\n4,30,2,1\n' \
    > "$tmp/tiny.csv"
# sim ITEM NEIGHBOR DIR: the similarity in DIR/neighbors.csv
sim() { awk -F, -v a="$1" -v b="$2" '$1 == a && $2 == b { print $4; f = 1 } END { if (!f) print "none" }' "$3/neighbors.csv"; }
check() { # METRIC IMPLICIT(0|1) then triples ITEM NEIGHBOR EXPECTED
    m=$1 imp=$2
    shift 2
    flag=
    [ "$imp" = 1 ] && flag=--implicit
    # shellcheck disable=SC2086 # flag is empty or one word
    expect_status 0 "$RECKNN" "$tmp/tiny.csv" --metric "$m" $flag --top-n 0 --out "$tmp/t-$m-$imp" --device cpu --quiet
    while [ $# -ge 3 ]; do
        got=$(sim "$1" "$2" "$tmp/t-$m-$imp")
        awk -v g="$got" -v e="$3" 'BEGIN { exit !(g != "none" && g - e < 1e-6 && e - g < 1e-6) }' ||
            fail "$m (implicit $imp): sim($1, $2) = $got, expected $3"
        shift 3
    done
}
check cosine-full 0 10 20 0.648353 10 30 0.486265 20 30 0.689655 30 20 0.689655
check euclidean-full 0 10 20 0.190744 10 30 0.163961 20 30 0.190744
check jaccard 0 10 20 0.5 10 30 0.666667 20 30 0.25
check cosine-full 1 10 20 0.666667 10 30 0.816497 20 30 0.408248
check euclidean-full 1 10 20 0.414214 10 30 0.5 20 30 0.366025
check jaccard 1 10 20 0.5 10 30 0.666667 20 30 0.25
# --implicit: every rating is 1, every held-out item relevant
grep -q '"implicit": true' "$tmp/t-jaccard-1/metrics.json" || fail "metrics.json does not say --implicit"
grep -q '"rating_scale": \[1, 1\]' "$tmp/t-jaccard-1/metrics.json" || fail "--implicit ratings are not all 1"
expect_status 2 "$RECKNN" "$tmp/tiny.csv" --implicit --relevance 3 --out "$tmp/x" --device cpu
expect_status 2 "$RECKNN" "$tmp/tiny.csv" --metric cosine-ful --out "$tmp/x" --device cpu

train="$top_srcdir/sample_data/ratings.csv"
[ -f "$train" ] || fail "sample_data/ratings.csv is missing"
expect_status 0 "$RECKNN" "$train" --top-n 0 --out "$tmp/all" --device cpu --quiet
# five items of the lists, an unknown id and a repeat
awk -F, 'NR > 1 && !($1 in s) { s[$1] = 1; n++; if (n % 97 == 1) print $1 }' "$tmp/all/neighbors.csv" | head -5 \
    > "$tmp/items.txt"
[ "$(wc -l < "$tmp/items.txt")" -eq 5 ] || fail "could not pick five items"
{ cat "$tmp/items.txt"; echo 99999999; head -1 "$tmp/items.txt"; } > "$tmp/items_asked.txt"
expect_status 0 "$RECKNN" "$train" --items "$tmp/items_asked.txt" --out "$tmp/sub" --device cpu 2> "$tmp/stderr"
grep -q "99999999" "$tmp/stderr" || fail "the unknown id of --items is not noted"
awk -F, 'NR == FNR { want[$1] = 1; next } FNR > 1 && ($1 in want)' "$tmp/items.txt" "$tmp/all/neighbors.csv" \
    > "$tmp/expect.csv"
tail -n +2 "$tmp/sub/neighbors.csv" > "$tmp/got.csv"
[ -s "$tmp/got.csv" ] || fail "--items wrote no list"
cmp -s "$tmp/expect.csv" "$tmp/got.csv" || fail "--items lists differ from the whole run's rows"
[ ! -e "$tmp/sub/recommendations.csv" ] || fail "--items wrote recommendations"
grep -q '"lists_computed": 5, "items_file_ids": 7, "items_unknown": 1, "items_repeated": 1' "$tmp/sub/metrics.json" ||
    fail "metrics.json miscounts --items: $(grep -o '"lists_computed[^}]*' "$tmp/sub/metrics.json")"
expect_status 2 "$RECKNN" "$train" --items "$tmp/items.txt" --top-n 5 --out "$tmp/x" --device cpu
expect_status 2 "$RECKNN" "$train" --items "$tmp/items.txt" --holdout 0.1 --out "$tmp/x" --device cpu
expect_status 2 "$RECKNN" "$train" --items "$tmp/items.txt" --by user --out "$tmp/x" --device cpu
expect_status 2 "$RECKNN" "$train" --items "$tmp/items.txt" --gpu-query fast --out "$tmp/x" --device cpu
expect_status 4 "$RECKNN" "$train" --items "$tmp/no-such-file" --out "$tmp/x" --device cpu

# user mode: --users computes only those users' lists, and their lists and
# recommendations are the whole run's
awk -F, 'NR > 1 && !($1 in s) { s[$1] = 1; n++; if (n % 50 == 7) print $1 }' "$train" | head -4 > "$tmp/users.txt"
expect_status 0 "$RECKNN" "$train" --by user --top-n 5 --out "$tmp/uall" --device cpu --quiet
expect_status 0 "$RECKNN" "$train" --by user --top-n 5 --users "$tmp/users.txt" --out "$tmp/usub" --device cpu --quiet
for f in neighbors recommendations; do
    awk -F, 'NR == FNR { want[$1] = 1; next } FNR > 1 && ($1 in want)' "$tmp/users.txt" "$tmp/uall/$f.csv" \
        | sort > "$tmp/expect-$f.csv"
    tail -n +2 "$tmp/usub/$f.csv" | sort > "$tmp/got-$f.csv"
    [ -s "$tmp/got-$f.csv" ] || fail "--by user --users wrote no $f"
    cmp -s "$tmp/expect-$f.csv" "$tmp/got-$f.csv" || fail "--by user --users: $f differ from the whole run's"
done
grep -q '"lists_computed": 4,' "$tmp/usub/metrics.json" || fail "--by user --users computed more lists than asked"

# the GPU against the CPU (skipped without one)
gpu_usable "$train" || { echo "no usable GPU: the GPU part is skipped"; exit 0; }
for route in auto block kernel; do
    expect_status 0 "$RECKNN" "$train" --items "$tmp/items.txt" --gpu-query "$route" --out "$tmp/g-$route" \
        --device gpu --quiet
    cmp -s "$tmp/sub/neighbors.csv" "$tmp/g-$route/neighbors.csv" || fail "--items --gpu-query $route differs from the CPU"
done
expect_status 0 "$RECKNN" "$train" --by user --top-n 5 --users "$tmp/users.txt" --out "$tmp/gusub" --device gpu --quiet
for f in neighbors.csv recommendations.csv; do
    cmp -s "$tmp/usub/$f" "$tmp/gusub/$f" || fail "--by user --users: $f differs on the GPU"
done
for m in cosine-full euclidean-full jaccard; do
    for dev in cpu gpu; do
        expect_status 0 "$RECKNN" "$train" --metric "$m" --holdout 0.1 --seed 2 --top-n 5 --out "$tmp/$m-$dev" \
            --device "$dev" --quiet
    done
    for f in neighbors.csv predictions.csv recommendations.csv; do
        cmp -s "$tmp/$m-cpu/$f" "$tmp/$m-gpu/$f" || fail "--metric $m: $f differs on the GPU"
    done
done
# k above the GPU selection's limit of 2048: the host selects from the GPU's rows
for dev in cpu gpu; do
    expect_status 0 "$RECKNN" "$train" -k 2100 --holdout 0.1 --seed 2 --top-n 5 --out "$tmp/k-$dev" --device "$dev" \
        2> "$tmp/k-$dev.err"
done
grep -q "on cpu" "$tmp/k-gpu.err" && fail "-k 2100 left the GPU: $(cat "$tmp/k-gpu.err")"
for f in neighbors.csv predictions.csv recommendations.csv; do
    cmp -s "$tmp/k-cpu/$f" "$tmp/k-gpu/$f" || fail "-k 2100: $f differs on the GPU"
done
exit 0
