#!/bin/sh
# cli_topn.sh — top-N recommendations from the command line: the default
# top-10, --top-n, --users (unknown ids, repeats, bad lines), never an item
# the user rated in training, ranks and scores in order, a test set, N above
# the item count, threads, and the options' errors.
. "$top_srcdir/tests/setup.sh"
CLI="$TESTDATA/cli"
[ -x "$RECKNN" ] || fail "$RECKNN is not built"
if [ -f "$top_srcdir/sample_data/ratings.csv" ] && [ -f "$top_srcdir/sample_data/test.csv" ]; then
    train="$top_srcdir/sample_data/ratings.csv"
    test="$top_srcdir/sample_data/test.csv"
else
    train="$CLI/good.csv"
    test="$CLI/good_test.csv"
fi
rows() { awk 'END { print NR - 1 }' "$1"; }

# check_recs FILE N TRAIN: header, ranks 1.. per user, scores positive and not
# increasing, at most N a user, no item the user rated in TRAIN, no repeats
check_recs() {
    [ "$(sed -n 1p "$1" | tr -d '\r')" = "user,rank,item,score" ] || fail "$1: header $(sed -n 1p "$1")"
    awk -F, -v n="$2" 'FNR == 1 { next }
        NR == FNR { rated[$1 "," $2] = 1; next }
        { if ($1 != u) { u = $1; want = 1; prev = ""; delete seen }
          if ($2 != want || $2 > n || !($4 > 0) || (prev != "" && $4 + 0 > prev + 0) || (($1 "," $3) in rated) ||
              ($3 in seen)) { print "row " FNR ": " $0; bad = 1 }
          seen[$3] = 1; prev = $4; want++ }
        END { exit bad }' "$3" "$1" || fail "$1 breaks the contract"
}

# ---- the plain run writes top-10 for every user ------------------------------------------------
expect_status 0 "$RECKNN" "$train" --out "$tmp/d" --device cpu
[ -f "$tmp/d/recommendations.csv" ] || fail "the default run wrote no recommendations.csv"
check_recs "$tmp/d/recommendations.csv" 10 "$train"
grep -q 'top-10 for [0-9]* users' "$tmp/stderr" || fail "the summary does not mention top-10: $(cat "$tmp/stderr")"
users=$(awk -F, 'NR > 1 { u[$1] = 1 } END { print length(u) }' "$train")
got=$(awk -F, 'NR > 1 { u[$1] = 1 } END { print length(u) }' "$tmp/d/recommendations.csv")
[ "$got" -le "$users" ] && [ "$got" -gt 0 ] || fail "recommendations for $got of $users users"
if command -v python3 >/dev/null 2>&1; then
    python3 - "$tmp/d/metrics.json" "$users" <<'PY' || fail "metrics.json: no valid topn object"
import json, sys
d = json.load(open(sys.argv[1]))
t = d["topn"]
assert t["n"] == 10 and t["users"] == int(sys.argv[2]), t
assert t["rows"] > 0 and t["path"] == "cpu" and t["wall_s"] >= 0, t
assert d["options"]["top_n"] == 10 and d["timings_s"]["recommend"] >= 0
PY
fi

# ---- --top-n 0 turns them off; --top-n 3 -------------------------------------------------------
expect_status 0 "$RECKNN" "$train" --out "$tmp/z" --top-n 0 --device cpu --quiet
[ -e "$tmp/z/recommendations.csv" ] && fail "--top-n 0 wrote recommendations.csv"
grep -q '"topn": null' "$tmp/z/metrics.json" || fail "--top-n 0: metrics.json topn is not null"
expect_status 0 "$RECKNN" "$train" --out "$tmp/t3" --top-n 3 --device cpu --quiet
check_recs "$tmp/t3/recommendations.csv" 3 "$train"
# the first 3 of each top-10 are the top-3
awk -F, 'NR > 1 && $2 <= 3' "$tmp/d/recommendations.csv" > "$tmp/first3"
sed 1d "$tmp/t3/recommendations.csv" > "$tmp/t3rows"
cmp -s "$tmp/first3" "$tmp/t3rows" || fail "top-3 is not the head of top-10"

# ---- with a test set: from the training part; predictions too --------------------------------
expect_status 0 "$RECKNN" "$train" --test "$test" --out "$tmp/tt" --top-n 5 --device cpu --quiet
check_recs "$tmp/tt/recommendations.csv" 5 "$train"
[ -f "$tmp/tt/predictions.csv" ] || fail "--top-n with --test lost predictions.csv"
expect_status 0 "$RECKNN" "$train" --holdout 0.2 --seed 4 --out "$tmp/ho" --top-n 5 --device cpu --quiet
[ "$(rows "$tmp/ho/recommendations.csv")" -gt 0 ] || fail "--holdout: no recommendations"

# ---- N above the item count ---------------------------------------------------------------------
expect_status 0 "$RECKNN" "$CLI/good.csv" --out "$tmp/big" --top-n 100000 --device cpu --quiet
check_recs "$tmp/big/recommendations.csv" 100000 "$CLI/good.csv"
grep -q '"n": [0-9]*' "$tmp/big/metrics.json" || fail "metrics.json has no topn.n"

# ---- --users: known ids in file order, repeats once, unknown ids noted ------------------------
u1=$(sed -n 2p "$train" | cut -d, -f1)
u2=$(awk -F, 'NR > 1 { last = $1 } END { print last }' "$train")
printf '%s\r\n\n  %s \nno-such-user\n%s\n' "$u2" "$u1" "$u2" > "$tmp/users"
expect_status 0 "$RECKNN" "$train" --out "$tmp/u" --users "$tmp/users" --device cpu
grep -q "users: 1 of 4 ids are not users of the training data (first: no-such-user at line 4)" "$tmp/stderr" ||
    fail "--users: no note on the unknown id: $(cat "$tmp/stderr")"
awk -F, 'NR > 1 { if ($1 != last) { order = order " " $1; last = $1 } } END { print order }' \
    "$tmp/u/recommendations.csv" > "$tmp/order"
[ "$(cat "$tmp/order")" = " $u2 $u1" ] || fail "--users order: $(cat "$tmp/order"), want $u2 $u1"
check_recs "$tmp/u/recommendations.csv" 10 "$train"
# the same lists as in the run for everyone
grep "^$u1," "$tmp/d/recommendations.csv" > "$tmp/a"
grep "^$u1," "$tmp/u/recommendations.csv" > "$tmp/b"
cmp -s "$tmp/a" "$tmp/b" || fail "--users changes a user's list"
grep -q '"users_unknown": 1' "$tmp/u/metrics.json" || fail "metrics.json: users_unknown"
grep -q '"users_repeated": 1' "$tmp/u/metrics.json" || fail "metrics.json: users_repeated"
# a user of the test file only is no user of the training data
printf 'user\n' > /dev/null
expect_status 0 "$RECKNN" "$CLI/good.csv" --test "$CLI/good_test.csv" --out "$tmp/u99" --users /dev/stdin \
    --device cpu <<EOF2
99
1
EOF2
grep -q "1 of 2 ids are not users of the training data (first: 99)" "$tmp/stderr" ||
    fail "a test-only user: $(cat "$tmp/stderr")"

# ---- errors ---------------------------------------------------------------------------------------
expect_status 4 "$RECKNN" "$train" --out "$tmp/e1" --users "$tmp/missing"
grep -q "^recknn: error: cannot open .*missing" "$tmp/stderr" || fail "missing --users file: $(cat "$tmp/stderr")"
printf '1\n2,3\n' > "$tmp/users2"
expect_status 3 "$RECKNN" "$train" --out "$tmp/e2" --users "$tmp/users2"
grep -q "^recknn: error: .*users2:2: expected one id a line" "$tmp/stderr" || fail "bad --users line: $(cat "$tmp/stderr")"
[ -e "$tmp/e2" ] && [ -n "$(ls -A "$tmp/e2")" ] && fail "a failed --users run left files"
expect_status 2 "$RECKNN" "$train" --users "$tmp/users" --top-n 0
expect_status 2 "$RECKNN" "$train" --top-n -1
expect_status 2 "$RECKNN" "$train" --top-n ten
expect_status 2 "$RECKNN" "$train" --gpu-topn fast
grep -q "gpu-topn: unknown route 'fast'" "$tmp/stderr" || fail "--gpu-topn fast: $(cat "$tmp/stderr")"

# ---- row order: a shuffled export gives the same files -----------------------------------------
if [ -x "$SYNTH" ]; then
    "$SYNTH" --users 300 --items 400 --ratings 9000 --seed 5 --output "$tmp/sorted.csv" --quiet
    "$SYNTH" --users 300 --items 400 --ratings 9000 --seed 5 --shuffle --threads 1 --output "$tmp/shuf1.csv" --quiet
    "$SYNTH" --users 300 --items 400 --ratings 9000 --seed 5 --shuffle --threads 2 --output "$tmp/shuf2.csv" --quiet
    cmp -s "$tmp/shuf1.csv" "$tmp/shuf2.csv" || fail "recknn-synth --shuffle depends on --threads"
    cmp -s "$tmp/sorted.csv" "$tmp/shuf1.csv" && fail "recknn-synth --shuffle did not reorder"
    sort "$tmp/sorted.csv" > "$tmp/a"
    sort "$tmp/shuf1.csv" > "$tmp/b"
    cmp -s "$tmp/a" "$tmp/b" || fail "recknn-synth --shuffle changed the lines"
    expect_status 0 "$RECKNN" "$tmp/sorted.csv" --out "$tmp/os" --device cpu --quiet --holdout 0.1 --seed 2
    expect_status 0 "$RECKNN" "$tmp/shuf1.csv" --out "$tmp/oh" --device cpu --quiet --holdout 0.1 --seed 2
    expect_status 0 "$RECKNN" "$tmp/sorted.csv" --out "$tmp/os2" --device cpu --quiet
    expect_status 0 "$RECKNN" "$tmp/shuf1.csv" --out "$tmp/oh2" --device cpu --quiet
    for f in neighbors.csv recommendations.csv; do
        cmp -s "$tmp/os2/$f" "$tmp/oh2/$f" || fail "a shuffled file gives another $f"
    done
    [ "$(rows "$tmp/oh/predictions.csv")" -eq 900 ] || fail "--holdout 0.1 of 9000 shuffled ratings"
fi

# ---- threads do not change the bytes ---------------------------------------------------------------
expect_status 0 "$RECKNN" "$train" --out "$tmp/th1" --threads 1 --device cpu --quiet
expect_status 0 "$RECKNN" "$train" --out "$tmp/th2" --threads 2 --device cpu --quiet
cmp -s "$tmp/th1/recommendations.csv" "$tmp/th2/recommendations.csv" || fail "--threads changes recommendations"
cmp -s "$tmp/th1/recommendations.csv" "$tmp/d/recommendations.csv" || fail "two runs differ"
exit 0
