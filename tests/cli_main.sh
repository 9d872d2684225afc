#!/bin/sh
# cli_main.sh — the main job end to end: files, headers, metrics.json keys,
# predictions inside the rating scale, reproducible holdout, device choice,
# --help and --version.
. "$top_srcdir/tests/setup.sh"
CLI="$TESTDATA/cli"

[ -x "$RECKNN" ] || fail "$RECKNN is not built"

# The data: sample_data/ when it is there, else the small fixture.
if [ -f "$top_srcdir/sample_data/ratings.csv" ] && [ -f "$top_srcdir/sample_data/test.csv" ]; then
    train="$top_srcdir/sample_data/ratings.csv"
    test="$top_srcdir/sample_data/test.csv"
else
    train="$CLI/good.csv"
    test="$CLI/good_test.csv"
fi

# the first line of a file
first_line() { sed -n '1p' "$1" | tr -d '\r'; }
# number of data rows (lines after the header)
rows() { awk 'END { print NR - 1 }' "$1"; }

# ---- the main job ---------------------------------------------------------------
expect_status 0 "$RECKNN" "$train" --test "$test" --out "$tmp/out"
[ -s "$tmp/stdout" ] && fail "a run printed on stdout: $(cat "$tmp/stdout")"
for f in neighbors.csv predictions.csv recommendations.csv metrics.json; do
    [ -f "$tmp/out/$f" ] || fail "$f was not written"
done
ls -A "$tmp/out" | grep -q '\.tmp\.' && fail "temporary files left in the output directory"
[ "$(first_line "$tmp/out/neighbors.csv")" = "item,neighbor,rank,similarity,support" ] ||
    fail "neighbors.csv header: $(first_line "$tmp/out/neighbors.csv")"
[ "$(first_line "$tmp/out/predictions.csv")" = "user,item,rating,prediction,neighbors_used" ] ||
    fail "predictions.csv header: $(first_line "$tmp/out/predictions.csv")"
grep -q 'users, .* items, .* ratings' "$tmp/stderr" || fail "no summary line: $(cat "$tmp/stderr")"
grep -q "wrote $tmp/out/" "$tmp/stderr" || fail "the summary does not name the output directory"
grep -q 'RMSE [0-9]' "$tmp/stderr" || fail "the summary has no RMSE"

# metrics.json: one object with the documented keys
m="$tmp/out/metrics.json"
for k in counts options device metrics timings_s users items ratings train_ratings test_ratings \
         skipped_lines rmse mae fallbacks load similarity select predict write total; do
    grep -q "\"$k\"" "$m" || fail "metrics.json has no \"$k\""
done
if command -v python3 >/dev/null 2>&1; then
    python3 - "$m" <<'EOF' || fail "metrics.json is not the documented JSON object"
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("counts", "options", "device", "metrics", "timings_s"):
    assert k in d, k
for k in ("users", "items", "ratings", "train_ratings", "test_ratings", "skipped_lines"):
    assert isinstance(d["counts"][k], int), k
for k in ("rmse", "mae", "fallbacks"):
    assert d["metrics"][k] is not None, k
t = d["timings_s"]
for k in ("load", "engine", "similarity", "select", "predict", "rank", "recommend", "write", "other", "total"):
    assert t[k] >= 0, k
# the engine stage holds its parts, and the named stages add up to the total
assert t["similarity"] + t["select"] + t["predict"] + t["rank"] + t["recommend"] <= t["engine"] + 1e-3, t
named = t["load"] + t["engine"] + t["baseline"] + t["write"] + t["model_io"] + t["other"]
assert abs(named - t["total"]) <= 1e-3 + 1e-6 * t["total"], t
assert d["counts"]["train_ratings"] + d["counts"]["test_ratings"] == d["counts"]["ratings"]
EOF
fi

# one prediction per test rating, every prediction inside the training scale
[ "$(rows "$tmp/out/predictions.csv")" -eq "$(rows "$test")" ] ||
    fail "predictions.csv has $(rows "$tmp/out/predictions.csv") rows for $(rows "$test") test ratings"
scale=$(awk -F, 'NR > 1 { if (min == "" || $3 < min) min = $3; if (max == "" || $3 > max) max = $3 }
                 END { print min, max }' "$train")
awk -F, -v s="$scale" 'BEGIN { split(s, m, " ") }
    NR > 1 && !($4 + 0 >= m[1] + 0 && $4 + 0 <= m[2] + 0 && $5 ~ /^[0-9]+$/) { print "row " NR ": " $0; bad = 1 }
    END { exit bad }' "$tmp/out/predictions.csv" || fail "a prediction lies outside the rating scale $scale"
# neighbour rows: rank from 1 in order, similarity in (0, 1], support >= 1
awk -F, 'NR > 1 {
        if ($1 != item) { item = $1; want = 1 }
        if ($3 != want || !($4 > 0 && $4 <= 1) || !($5 >= 1) || $1 == $2) { print "row " NR ": " $0; bad = 1 }
        want++ }
    END { exit bad }' "$tmp/out/neighbors.csv" || fail "neighbors.csv rows break the contract"

# ---- the fixture as tsv, split over two files, or with CRLF gives the same results ---------
G="$CLI/good.csv"
GT="$CLI/good_test.csv"
expect_status 0 "$RECKNN" "$G" --test "$GT" --out "$tmp/fx" --quiet
expect_status 0 "$RECKNN" "$CLI/good.tsv" --test "$GT" --out "$tmp/tsv" --quiet
cmp -s "$tmp/fx/predictions.csv" "$tmp/tsv/predictions.csv" || fail "tsv input predicts differently"
cmp -s "$tmp/fx/neighbors.csv" "$tmp/tsv/neighbors.csv" || fail "tsv input gives other neighbours"
sed -n '1,30p' "$G" > "$tmp/part1.csv"
{ sed -n '1p' "$G"; sed -n '31,$p' "$G"; } > "$tmp/part2.csv"
expect_status 0 "$RECKNN" "$tmp/part1.csv" "$tmp/part2.csv" --test "$GT" --out "$tmp/two" --quiet
cmp -s "$tmp/fx/predictions.csv" "$tmp/two/predictions.csv" || fail "two RATINGS files predict differently"
sed 's/$/\r/' "$G" > "$tmp/crlf.csv"
expect_status 0 "$RECKNN" "$tmp/crlf.csv" --test "$GT" --out "$tmp/crlf" --quiet
cmp -s "$tmp/fx/predictions.csv" "$tmp/crlf/predictions.csv" || fail "CRLF input predicts differently"
expect_status 0 "$RECKNN" - --test "$GT" --out "$tmp/stdin" --quiet < "$G"
cmp -s "$tmp/fx/predictions.csv" "$tmp/stdin/predictions.csv" || fail "'-' (standard input) predicts differently"
# raw ids come back unchanged, unknown users and items included
cut -d, -f1,2 "$GT" | sed 1d > "$tmp/want_ids"
cut -d, -f1,2 "$tmp/fx/predictions.csv" | sed 1d > "$tmp/got_ids"
cmp -s "$tmp/want_ids" "$tmp/got_ids" || fail "predictions.csv does not list the test pairs in order"
grep -q '^99,1,4,[0-9.]*,0$' "$tmp/fx/predictions.csv" || fail "unknown user 99: no fallback row"
grep -q '^1,999,3,[0-9.]*,0$' "$tmp/fx/predictions.csv" || fail "unknown item 999: no fallback row"

# ---- options reach the job -----------------------------------------------------------------
expect_status 0 "$RECKNN" "$train" --test "$test" --out "$tmp/k2" -k 2 --metric cosine --predict basic \
    --min-support 2 --shrinkage 10 --min-k 1 --duplicates mean --device cpu --threads 2 --quiet
[ -s "$tmp/stderr" ] && fail "--quiet printed: $(cat "$tmp/stderr")"
awk -F, 'NR > 1 && $3 > 2 { bad = 1 } END { exit bad }' "$tmp/k2/neighbors.csv" || fail "-k 2 gave longer lists"
grep -q '"cosine"' "$tmp/k2/metrics.json" || fail "metrics.json does not show --metric cosine"
expect_status 0 "$RECKNN" "$train" --test "$test" --out "$tmp/nn" --no-neighbors --quiet
[ -e "$tmp/nn/neighbors.csv" ] && fail "--no-neighbors wrote neighbors.csv"
[ -f "$tmp/nn/predictions.csv" ] || fail "--no-neighbors lost predictions.csv"
# options may come before RATINGS; '=' forms work
expect_status 0 "$RECKNN" --out="$tmp/pre" -k 3 --quiet "$train"
[ -f "$tmp/pre/neighbors.csv" ] || fail "options before RATINGS"
[ -e "$tmp/pre/predictions.csv" ] && fail "predictions.csv written without a test set"

# ---- holdout: the same seed gives the same split and predictions ------------------------------
expect_status 0 "$RECKNN" "$train" --holdout 0.2 --seed 1 --out "$tmp/h1" --quiet --device cpu
expect_status 0 "$RECKNN" "$train" --holdout 0.2 --seed 1 --out "$tmp/h2" --quiet --device cpu
cmp -s "$tmp/h1/predictions.csv" "$tmp/h2/predictions.csv" || fail "--holdout 0.2 --seed 1 is not reproducible"
[ "$(rows "$tmp/h1/predictions.csv")" -gt 0 ] || fail "--holdout 0.2 predicted nothing"

# ---- device -----------------------------------------------------------------------------------
expect_status 0 "$RECKNN" "$train" --out "$tmp/auto" --device auto
auto_note=0
grep -q '^recknn: note: ' "$tmp/stderr" && auto_note=1
set +e
"$RECKNN" "$train" --out "$tmp/gpu" --device gpu >"$tmp/stdout" 2>"$tmp/stderr"
st=$?
set -e
case $st in
0)  grep -q '"device": "cpu"' "$tmp/gpu/metrics.json" && fail "--device gpu ran on the CPU"
    echo "note: a GPU is usable here; the exit 5 check is skipped" ;;
5)  grep -q '^recknn: error: ' "$tmp/stderr" || fail "--device gpu failed without a message"
    [ -e "$tmp/gpu" ] && [ -n "$(ls -A "$tmp/gpu")" ] && fail "--device gpu left files behind"
    # without a GPU, auto runs on the CPU in silence and metrics.json says why
    [ "$auto_note" -eq 0 ] || fail "--device auto noted the missing GPU: $(cat "$tmp/stderr")"
    grep -q '"gpu_unused": "' "$tmp/auto/metrics.json" || fail "metrics.json does not say why the GPU was not used" ;;
*)  cat "$tmp/stderr" >&2; fail "--device gpu exited $st (want 0 or 5)" ;;
esac

# ---- synthetic data, when recknn-synth works: threads do not change results -------------------
if [ -x "$SYNTH" ] && "$SYNTH" --users 60 --items 80 --ratings 1500 --seed 7 --output "$tmp/r.csv" >/dev/null 2>&1 &&
   [ -s "$tmp/r.csv" ]; then
    expect_status 0 "$RECKNN" "$tmp/r.csv" --holdout 0.2 --seed 3 --out "$tmp/s1" --threads 1 --device cpu --quiet
    expect_status 0 "$RECKNN" "$tmp/r.csv" --holdout 0.2 --seed 3 --out "$tmp/s2" --threads 2 --device cpu --quiet
    cmp -s "$tmp/s1/predictions.csv" "$tmp/s2/predictions.csv" || fail "--threads changes predictions"
    cmp -s "$tmp/s1/neighbors.csv" "$tmp/s2/neighbors.csv" || fail "--threads changes neighbours"
else
    echo "note: $SYNTH is not usable; synthetic-data checks skipped"
fi

# ---- --help and --version -----------------------------------------------------------------------
expect_status 0 "$RECKNN" --help
[ -s "$tmp/stderr" ] && fail "--help wrote on stderr"
grep -q '^Usage: recknn RATINGS' "$tmp/stdout" || fail "--help has no usage line"
for o in --format --delimiter --header --no-header --columns --rating-scale --duplicates \
         --skip-bad-lines --metric -k, --k --min-support --shrinkage --predict --min-k --test \
         --holdout --seed --out --no-neighbors --device --gpu-memory --threads --progress \
         --top-n --users --gpu-topn --gpus --mpi-load --mpi-output \
         --no-progress --quiet --help --version; do
    grep -q -e "$o" "$tmp/stdout" || fail "--help does not mention $o"
done
# every metric of the metric table (the list --metric's error names) is in
# --help, runs, and is named in metrics.json
cp "$tmp/stdout" "$tmp/help"
expect_status 2 "$RECKNN" "$train" --metric no-such-metric
names=$(sed -n "s/.*unknown metric 'no-such-metric' (\(.*\))$/\1/p" "$tmp/stderr" | tr -d ',')
[ "$(echo "$names" | wc -w)" -ge 8 ] || fail "--metric's error lists no metric table: $(cat "$tmp/stderr")"
for metric in $names; do
    grep -q -e "$metric" "$tmp/help" || fail "--help does not mention the metric $metric"
    expect_status 0 "$RECKNN" "$train" --test "$test" --metric "$metric" --out "$tmp/metric-$metric" --quiet
    grep -q "\"metric\": \"$metric\"" "$tmp/metric-$metric/metrics.json" || fail "--metric $metric: metrics.json names another"
    [ -s "$tmp/metric-$metric/neighbors.csv" ] || fail "--metric $metric: no neighbors.csv"
done
expect_status 0 "$RECKNN" -h
expect_status 0 "$RECKNN" --version
grep -q '^recknn [0-9][0-9.]*' "$tmp/stdout" || fail "--version: $(cat "$tmp/stdout")"
[ -s "$tmp/stderr" ] && fail "--version wrote on stderr"
expect_status 0 "$RECKNN" -V
exit 0
