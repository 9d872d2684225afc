#!/bin/sh
# cli_rank.sh — the ranking model (CONTRACT.md §5b) from the command line:
# the model beside most-popular on the summary line, in metrics.json and in
# the report, with a warning exactly when it ranks below; the refused
# combinations (--implicit with a co-rater metric, a ranking similarity as
# --metric, --rank with --by user or --approx); --implicit's default metric;
# --negative yes (signed lists, top-N from them, predictions unchanged).
. "$top_srcdir/tests/setup.sh"
[ -x "$RECKNN" ] || fail "$RECKNN is not built"
[ -x "$SYNTH" ] || fail "$SYNTH is not built"

# taste communities: co-occurrence carries signal, so the default ranks above most-popular
"$SYNTH" --users 400 --items 300 --ratings 20000 --seed 5 --communities 8 --affinity 0.9 \
    --output "$tmp/c.csv" --test-output "$tmp/ct.csv" --quiet

# the default: above most-popular, said on the summary line, no warning anywhere
expect_status 0 "$RECKNN" "$tmp/c.csv" --test "$tmp/ct.csv" --report --device cpu --out "$tmp/good"
grep -q "most-popular's" "$tmp/stderr" || fail "the summary line does not put the model beside most-popular"
grep -q "warning" "$tmp/stderr" && fail "a warning although the model ranks above most-popular"
grep -q '"below": false' "$tmp/good/metrics.json" || fail "metrics.json: vs_popular.below is not false"
grep -q '"sim": "rp3beta"' "$tmp/good/metrics.json" || fail "metrics.json does not name the ranking model"
grep -q 'class="warn"' "$tmp/good/report.html" && fail "the report warns although the model is above"

# Pearson's lists over a few co-raters: below most-popular, warned on stderr, in metrics.json, in the report
expect_status 0 "$RECKNN" "$tmp/c.csv" --test "$tmp/ct.csv" --rank lists --report --device cpu --out "$tmp/bad"
grep -q "recknn: warning: the recommendations rank below most-popular" "$tmp/stderr" ||
    { cat "$tmp/stderr" >&2; fail "no warning for a model below most-popular"; }
grep -q '"below": true' "$tmp/bad/metrics.json" || fail "metrics.json: vs_popular.below is not true"
grep -q 'class="warn"' "$tmp/bad/report.html" || fail "the report does not warn"
grep -q '"sim": "lists"' "$tmp/bad/metrics.json" || fail "metrics.json: --rank lists not recorded"
# the model's lists are the same either way: only top-N changed
cmp -s "$tmp/good/neighbors.csv" "$tmp/bad/neighbors.csv" || fail "--rank changed neighbors.csv"
cmp -s "$tmp/good/predictions.csv" "$tmp/bad/predictions.csv" || fail "--rank changed predictions.csv"
cmp -s "$tmp/good/recommendations.csv" "$tmp/bad/recommendations.csv" && fail "--rank lists changed nothing"

# --baseline none: nothing to compare, no verdict
expect_status 0 "$RECKNN" "$tmp/c.csv" --test "$tmp/ct.csv" --rank lists --baseline none --device cpu --out "$tmp/nb"
grep -q "warning" "$tmp/stderr" && fail "a verdict without the baseline"
grep -q '"vs_popular": null' "$tmp/nb/metrics.json" || fail "metrics.json: vs_popular is not null"

# --implicit: a co-rater metric is refused, the default becomes cosine-full and recommends
expect_status 2 "$RECKNN" "$tmp/c.csv" --implicit --metric pearson --device cpu --out "$tmp/e"
grep -q "full-vector metric" "$tmp/stderr" || fail "--implicit --metric pearson: no reason given"
expect_status 2 "$RECKNN" "$tmp/c.csv" --implicit --metric msd --device cpu --out "$tmp/e"
expect_status 0 "$RECKNN" "$tmp/c.csv" --implicit --metric msd --shrinkage 100 --device cpu --out "$tmp/imsd"
expect_status 0 "$RECKNN" "$tmp/c.csv" --implicit --device cpu --out "$tmp/imp"
grep -q '"metric": "cosine-full"' "$tmp/imp/metrics.json" || fail "--implicit: the default metric is not cosine-full"
[ "$(wc -l < "$tmp/imp/recommendations.csv")" -gt 400 ] || fail "--implicit: few recommendations"

# refused: a ranking similarity as --metric, --rank with user mode or --approx, bad ranges
expect_status 2 "$RECKNN" "$tmp/c.csv" --metric rp3beta --device cpu --out "$tmp/e"
expect_status 2 "$RECKNN" "$tmp/c.csv" --by user --rank rp3beta --device cpu --out "$tmp/e"
expect_status 2 "$RECKNN" "$tmp/c.csv" --approx rbc --metric cosine-full --rank rp3beta --device cpu --out "$tmp/e"
expect_status 2 "$RECKNN" "$tmp/c.csv" --rank weighted-cosine --alpha 2 --device cpu --out "$tmp/e"
expect_status 2 "$RECKNN" "$tmp/c.csv" --locality 0 --device cpu --out "$tmp/e"
expect_status 2 "$RECKNN" "$tmp/c.csv" --weighting okapi --device cpu --out "$tmp/e"
expect_status 2 "$RECKNN" "$tmp/c.csv" --bm25 1.2 --device cpu --out "$tmp/e"
[ -e "$tmp/e" ] && fail "a refused run left $tmp/e behind"
# user mode and --approx without --rank rank from their own lists
expect_status 0 "$RECKNN" "$tmp/c.csv" --by user --device cpu --out "$tmp/u"
grep -q '"sim": "lists"' "$tmp/u/metrics.json" || fail "--by user: top-N not from the user lists"
echo "cli_rank: verdicts, refusals and defaults checked" >&2

# ---- --negative yes: signed lists, summed by top-N with --rank lists; predictions unchanged -------
expect_status 0 "$RECKNN" "$tmp/c.csv" --test "$tmp/ct.csv" --rank lists --negative yes --device cpu --out "$tmp/neg"
grep -q '"negative": true' "$tmp/neg/metrics.json" || fail "metrics.json: --negative yes not recorded"
awk -F, 'NR > 1 && $4 < 0 { n++ } END { exit !(n > 100) }' "$tmp/neg/neighbors.csv" ||
    fail "--negative yes: neighbors.csv holds (almost) no negative similarity"
awk -F, 'NR > 1 && $4 < 0 { n++ } END { exit !(n == 0) }' "$tmp/bad/neighbors.csv" ||
    fail "without --negative, neighbors.csv holds a negative similarity"
cmp -s "$tmp/neg/predictions.csv" "$tmp/bad/predictions.csv" || fail "--negative changed the predictions"
cmp -s "$tmp/neg/recommendations.csv" "$tmp/bad/recommendations.csv" && fail "--negative yes changed no recommendation"
awk -F, 'NR > 1 && $4 <= 0 { n++ } END { exit !(n == 0) }' "$tmp/neg/recommendations.csv" ||
    fail "--negative yes recommended an item whose score is not positive"
expect_status 0 "$RECKNN" "$tmp/c.csv" --negative yes --top-n 0 --device cpu --out "$tmp/negl"
expect_status 2 "$RECKNN" "$tmp/c.csv" --negative yes --device cpu --out "$tmp/e"
grep -q "never negative" "$tmp/stderr" || fail "--negative yes with the ranking model: no reason given"
expect_status 2 "$RECKNN" "$tmp/c.csv" --negative yes --by user --device cpu --out "$tmp/e"
expect_status 2 "$RECKNN" "$tmp/c.csv" --negative maybe --rank lists --device cpu --out "$tmp/e"
[ -e "$tmp/e" ] && fail "a refused run left $tmp/e behind"
echo "cli_rank: --negative checked" >&2

# ---- --tune: never reads the test set ------------------------------------------------------------
# the same training data with the real test set and with garbage in its place (other items, other
# ratings): the search, its choice and the recommendations must be the same
awk -F, 'NR == 1 { print; next } { srand(NR); printf "%s,%d,%.1f,%s\n", $1, 1 + int(rand() * 300), 0.5 + int(rand() * 10) / 2, $4 }' \
    "$tmp/ct.csv" > "$tmp/garbage.csv"
expect_status 0 "$RECKNN" "$tmp/c.csv" --test "$tmp/ct.csv" --tune --tune-grid small --device cpu --out "$tmp/t1" --progress
grep -q "tune" "$tmp/stderr" || fail "--tune shows no progress"
expect_status 0 "$RECKNN" "$tmp/c.csv" --test "$tmp/garbage.csv" --tune --tune-grid small --report --device cpu --out "$tmp/t2"
grep -q 'id="tuning"' "$tmp/t2/report.html" || fail "the report has no tuning section"
[ "$(grep -A40 'id="tuning"' "$tmp/t2/report.html" | grep -c '<td>--rank ')" -eq 32 ] ||
    fail "the report's tuning table does not hold every configuration"
# the "tune" member of metrics.json (it comes just before "metrics"), without its seconds
tune_of() { tr -d '\n ' < "$1" | grep -o '"tune":{.*' | sed -E 's/,"metrics":.*//; s/"[a-z_]*_s":[-+0-9.eE]+//g'; }
[ -n "$(tune_of "$tmp/t1/metrics.json")" ] || fail "metrics.json has no tune table"
[ "$(tune_of "$tmp/t1/metrics.json" | grep -o '"ndcg":' | wc -l)" -eq 32 ] || fail "the small grid is not 32 rows"
[ "$(tune_of "$tmp/t1/metrics.json")" = "$(tune_of "$tmp/t2/metrics.json")" ] ||
    fail "--tune chose differently when the test set changed: it read the test set"
cmp -s "$tmp/t1/recommendations.csv" "$tmp/t2/recommendations.csv" || fail "--tune: the recommendations depend on the test set"
# the chosen configuration is the one top-N then used
best=$(tr -d '\n ' < "$tmp/t1/metrics.json" | grep -o '"best_config":{[^}]*}' | sed 's/"best_config"://')
used=$(tr -d '\n ' < "$tmp/t1/metrics.json" | grep -o '"rank":{"sim":[^}]*}' | sed -E 's/"rank"://; s/,"entries".*//')
case "$used" in "${best%\}}"*) ;; *) fail "top-N did not use the chosen configuration: $used / $best" ;; esac
expect_status 2 "$RECKNN" "$tmp/c.csv" --tune --rank lists --device cpu --out "$tmp/e"
expect_status 2 "$RECKNN" "$tmp/c.csv" --tune --by user --device cpu --out "$tmp/e"
expect_status 2 "$RECKNN" "$tmp/c.csv" --tune-metric nope --device cpu --out "$tmp/e"
echo "cli_rank: --tune checked" >&2

# ---- held-out users: the test users are a fraction of the users, measured at several cutoffs ----
expect_status 0 "$RECKNN" "$tmp/c.csv" --holdout 0.25 --split users --cutoffs 5,10,20 --seed 3 --device cpu \
    --out "$tmp/hu"
users=$(tr -d '\n ' < "$tmp/hu/metrics.json" | grep -o '"ranking":{"n":20,"relevance":[0-9.]*,"users":[0-9]*' |
    sed 's/.*"users"://')
[ -n "$users" ] && [ "$users" -gt 40 ] && [ "$users" -le 100 ] || fail "--split users 0.25: $users test users of 400"
tr -d '\n ' < "$tmp/hu/metrics.json" | grep -q '"cutoffs":\[{"n":5' || fail "--cutoffs: no metrics at 5"
expect_status 0 "$RECKNN" "$tmp/c.csv" --holdout 0.25 --split users --cutoffs 5,10,20 --seed 3 --device cpu \
    --report --out "$tmp/hu2"
grep -q "At each cutoff" "$tmp/hu2/report.html" || fail "the report has no table of the cutoffs"
cmp -s "$tmp/hu/recommendations.csv" "$tmp/hu2/recommendations.csv" || fail "--split users is not deterministic"
expect_status 2 "$RECKNN" "$tmp/c.csv" --cutoffs 5,50 --top-n 10 --device cpu --out "$tmp/e"
echo "cli_rank: held-out users checked" >&2

# ---- user_metrics.csv: one row per measured user, whose mean is metrics.json's ----------------------
expect_status 0 "$RECKNN" "$tmp/c.csv" --test "$tmp/ct.csv" --user-metrics --device cpu --out "$tmp/um"
head -1 "$tmp/um/user_metrics.csv" | grep -qx 'user,relevant,listed,hits,precision,recall,ndcg,ap,rr' ||
    fail "user_metrics.csv: header"
mean=$(awk -F, 'NR > 1 { s += $7; n++ } END { printf "%.6f", s / n }' "$tmp/um/user_metrics.csv")
want=$(tr -d '\n ' < "$tmp/um/metrics.json" | grep -o '"metrics":{[^}]*' | grep -o '"ndcg":[0-9.e-]*' | sed 's/.*://')
awk -v a="$mean" -v b="$want" 'BEGIN { exit !(a - b < 1e-6 && b - a < 1e-6) }' ||
    fail "user_metrics.csv: mean NDCG $mean, metrics.json $want"
expect_status 2 "$RECKNN" "$tmp/c.csv" --user-metrics --device cpu --out "$tmp/e"
echo "cli_rank: user metrics checked" >&2
