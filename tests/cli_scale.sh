#!/bin/sh
# cli_scale.sh — a large, sparse catalogue end to end on the CPU: 300,000
# items with two ratings each on average (the shape of the 2M-item set of
# the hardening work, scaled down), top-10 and k = 20.  The run must succeed,
# its outputs must agree with each other and with metrics.json, one and two
# threads must write the same files, and its peak memory must stay far below
# what any users × items or items × items array would take.
. "$top_srcdir/tests/setup.sh"
[ -x "$RECKNN" ] || fail "$RECKNN is not built"
[ -x "$SYNTH" ] || fail "$SYNTH is not built"

users=30000 items=300000 ratings=600000
"$SYNTH" --users $users --items $items --ratings $ratings --seed 7 --output "$tmp/r.csv" --quiet ||
    fail "recknn-synth failed"

# peak RSS in KB when GNU time is there; else the run alone
run() {
    out=$1; shift
    if [ -x /usr/bin/time ] && /usr/bin/time -f %M true >/dev/null 2>&1; then
        expect_status 0 /usr/bin/time -o "$tmp/rss" -f %M "$RECKNN" "$tmp/r.csv" --device cpu -k 20 --top-n 10 \
            --out "$out" "$@"
        rss=$(tail -n 1 "$tmp/rss")
    else
        expect_status 0 "$RECKNN" "$tmp/r.csv" --device cpu -k 20 --top-n 10 --out "$out" "$@"
        rss=
    fi
}

run "$tmp/a" --threads 2
grep -q "$users users, $items items, $ratings ratings" "$tmp/stderr" ||
    fail "summary: $(cat "$tmp/stderr")"
# 1 GB: a byte per user and item would be 9 GB, a byte per item pair 90 GB
if [ -n "$rss" ]; then
    [ "$rss" -lt 1048576 ] || fail "peak RSS $rss KB for $items items"
fi

count() { awk 'END { print NR - 1 }' "$1"; }
json() { sed -n "s/.*\"$2\": \([0-9]*\).*/\1/p" "$1" | head -n 1; }
nb=$(count "$tmp/a/neighbors.csv")
recs=$(count "$tmp/a/recommendations.csv")
[ "$nb" -gt 0 ] || fail "no neighbour rows"
[ "$recs" -gt 0 ] || fail "no recommendations"
[ "$(json "$tmp/a/metrics.json" neighbor_rows)" = "$nb" ] ||
    fail "neighbors.csv has $nb rows, metrics.json $(json "$tmp/a/metrics.json" neighbor_rows)"
[ "$(json "$tmp/a/metrics.json" items)" = "$items" ] || fail "metrics.json: items"
topn_rows=$(sed -n 's/.*"topn": {[^}]*"rows": \([0-9]*\).*/\1/p' "$tmp/a/metrics.json")
[ "$topn_rows" = "$recs" ] || fail "recommendations.csv has $recs rows, metrics.json topn.rows $topn_rows"

# neighbours: ranks 1, 2, ... per item, at most k = 20, never the item itself,
# similarities in (0, 1] and not increasing, supports >= 1
awk -F, 'NR == 1 { next }
    { if ($1 != it) { it = $1; want = 1; prev = 2 }
      if ($3 != want || $3 > 20 || $2 == $1 || !($4 > 0) || $4 > 1 + 1e-6 || $4 + 0 > prev + 0 || $5 < 1) {
          print "row " NR ": " $0; bad = 1 }
      prev = $4; want++ }
    END { exit bad }' "$tmp/a/neighbors.csv" || fail "neighbors.csv breaks the contract"
# recommendations: ranks 1.. per user, at most 10, at most one list per user,
# no user beyond the catalogue's, no item the user rated
awk -F, 'FNR == 1 { next }
    NR == FNR { rated[$1 "," $2] = 1; next }
    { if ($1 != u) { if ($1 in done) { print "user " $1 " twice"; bad = 1 }
                     done[$1] = 1; u = $1; want = 1 }
      if ($2 != want || $2 > 10 || (($1 "," $3) in rated)) { print "row " FNR ": " $0; bad = 1 }
      want++ }
    END { if (length(done) > '$users') bad = 1; exit bad }' "$tmp/r.csv" "$tmp/a/recommendations.csv" ||
    fail "recommendations.csv breaks the contract"

# one thread: the same files
run "$tmp/b" --threads 1
cmp -s "$tmp/a/neighbors.csv" "$tmp/b/neighbors.csv" || fail "neighbors.csv differs between 1 and 2 threads"
cmp -s "$tmp/a/recommendations.csv" "$tmp/b/recommendations.csv" ||
    fail "recommendations.csv differs between 1 and 2 threads"
exit 0
