#!/bin/sh
# cli_approx.sh — --approx rbc: every ball visited gives the exact run's
# neighbors.csv; the default run writes its counts and, with --approx-check,
# its recall into metrics.json; threads change nothing; --by user works; the
# usage errors exit 2; on a GPU the files and counts equal the CPU's
# (skipped without one).
. "$top_srcdir/tests/setup.sh"
[ -x "$RECKNN" ] || fail "$RECKNN is not built"
data="$tmp/ratings.csv"
if [ -x "$SYNTH" ]; then
    "$SYNTH" --users 300 --items 2000 --ratings 20000 --communities 10 --seed 5 --output "$data" --quiet ||
        fail "recknn-synth --communities failed"
else
    data="$top_srcdir/sample_data/ratings.csv"
fi

# recknn-synth --communities: the same bytes whatever the threads; its usage errors
if [ -x "$SYNTH" ]; then
    "$SYNTH" --users 300 --items 2000 --ratings 20000 --communities 10 --seed 5 --threads 1 --output "$tmp/c1.csv" --quiet
    cmp -s "$data" "$tmp/c1.csv" || fail "recknn-synth --communities depends on --threads"
    "$SYNTH" --users 300 --items 2000 --ratings 20000 --seed 5 --output "$tmp/plain.csv" --quiet
    "$SYNTH" --users 300 --items 2000 --ratings 20000 --communities 10 --affinity 0.3 --seed 5 --output "$tmp/c2.csv" --quiet
    cmp -s "$data" "$tmp/plain.csv" && fail "recknn-synth --communities changed nothing"
    cmp -s "$data" "$tmp/c2.csv" && fail "recknn-synth --affinity changed nothing"
    expect_status 2 "$SYNTH" --users 10 --items 10 --ratings 20 --seed 1 --affinity 0.5
    expect_status 2 "$SYNTH" --users 10 --items 10 --ratings 20 --seed 1 --communities 2 --affinity 1.5
    expect_status 2 "$SYNTH" --users 10 --items 10 --ratings 20 --seed 1 --communities x
fi

# json_get FILE KEY: the first number after "KEY": in FILE
json_get() { grep -o "\"$2\": [-0-9.e+]*" "$1" | head -1 | sed 's/.*: //'; }

for metric in cosine-full euclidean-full jaccard; do
    expect_status 0 "$RECKNN" "$data" --implicit --metric "$metric" --top-n 5 --rank lists --out "$tmp/e-$metric" --device cpu --quiet
    expect_status 0 "$RECKNN" "$data" --implicit --metric "$metric" --top-n 5 --approx rbc --reps 40 --probes 40 \
        --out "$tmp/a-$metric" --device cpu --quiet
    cmp -s "$tmp/e-$metric/neighbors.csv" "$tmp/a-$metric/neighbors.csv" ||
        fail "$metric: --approx with every ball visited differs from the exact lists"
    cmp -s "$tmp/e-$metric/recommendations.csv" "$tmp/a-$metric/recommendations.csv" ||
        fail "$metric: --approx with every ball visited gives other recommendations"
done

# the default: counts, the recall check, less work than brute force
expect_status 0 "$RECKNN" "$data" --implicit --metric cosine-full --approx rbc --approx-check 300 --seed 4 \
    --out "$tmp/d" --device cpu
grep -q "approx rbc R=[0-9]* P=8" "$tmp/stderr" || fail "the summary line does not name the approximation"
m="$tmp/d/metrics.json"
grep -q '"approx": {"method": "rbc"' "$m" || fail "metrics.json has no approx object"
grep -q '"approx": "rbc", "reps": 0, "probes": 0, "approx_check": 300' "$m" || fail "metrics.json options lack --approx"
pe=$(json_get "$m" pair_evaluations)
bf=$(json_get "$m" brute_force_pairs)
wr=$(json_get "$m" work_ratio)
rc=$(json_get "$m" recall_at_k)
sa=$(json_get "$m" sampled)
[ -n "$pe" ] && [ -n "$bf" ] && [ -n "$wr" ] && [ -n "$rc" ] || fail "metrics.json lacks approx counts"
[ "$sa" = 300 ] || fail "sampled is $sa, not 300"
[ "$bf" = 3998000 ] || fail "brute_force_pairs is $bf, not 2000 x 1999"
awk -v pe="$pe" -v bf="$bf" -v wr="$wr" -v rc="$rc" 'BEGIN {
    if (!(pe > 0 && pe < bf)) exit 1
    if (wr < bf / pe * 0.999999 || wr > bf / pe * 1.000001) exit 1
    if (!(rc >= 0 && rc <= 1)) exit 1 }' || fail "approx counts out of range: $pe of $bf, ratio $wr, recall $rc"
[ "$(awk 'END { print NR }' "$tmp/d/neighbors.csv")" -gt 1 ] || fail "--approx wrote no neighbours"
[ "$(awk 'END { print NR }' "$tmp/d/recommendations.csv")" -gt 1 ] || fail "--approx wrote no recommendations"
expect_status 0 "$RECKNN" "$data" --implicit --metric cosine-full --out "$tmp/plain" --device cpu --quiet
grep -q '"approx": null' "$tmp/plain/metrics.json" || fail "an exact run's metrics.json has an approx object"

# threads and seeds: the same seed, the same files
expect_status 0 "$RECKNN" "$data" --implicit --metric jaccard --approx rbc --probes 2 --seed 9 --threads 1 \
    --out "$tmp/t1" --device cpu --quiet
expect_status 0 "$RECKNN" "$data" --implicit --metric jaccard --approx rbc --probes 2 --seed 9 --threads 3 \
    --out "$tmp/t3" --device cpu --quiet
cmp -s "$tmp/t1/neighbors.csv" "$tmp/t3/neighbors.csv" || fail "--approx depends on --threads"
[ "$(json_get "$tmp/t1/metrics.json" pair_evaluations)" = "$(json_get "$tmp/t3/metrics.json" pair_evaluations)" ] ||
    fail "--approx's pair count depends on --threads"

# user vectors
expect_status 0 "$RECKNN" "$data" --implicit --by user --metric cosine-full --approx rbc --approx-check 50 --top-n 3 \
    --out "$tmp/u" --device cpu --quiet
grep -q '"by": "user"' "$tmp/u/metrics.json" || fail "--by user --approx: metrics.json does not say user"
[ "$(json_get "$tmp/u/metrics.json" brute_force_pairs)" = 89700 ] || fail "--by user --approx: not 300 x 299 pairs"

# usage errors
expect_status 2 "$RECKNN" "$data" --approx rbc --out "$tmp/x" --device cpu
grep -q "full-vector metric" "$tmp/stderr" || fail "--approx with pearson: no reason given"
expect_status 2 "$RECKNN" "$data" --metric cosine --approx rbc --out "$tmp/x" --device cpu
expect_status 2 "$RECKNN" "$data" --metric jaccard --approx rbc --holdout 0.1 --out "$tmp/x" --device cpu
grep -q "lists only" "$tmp/stderr" || fail "--approx with --holdout: no reason given"
expect_status 2 "$RECKNN" "$data" --metric jaccard --approx rbc --folds 3 --out "$tmp/x" --device cpu
expect_status 2 "$RECKNN" "$data" --metric jaccard --approx rbc --test "$data" --out "$tmp/x" --device cpu
expect_status 2 "$RECKNN" "$data" --metric jaccard --approx rbc --save-model "$tmp/m.rkm" --out "$tmp/x" --device cpu
expect_status 2 "$RECKNN" "$data" --metric jaccard --approx lsh --out "$tmp/x" --device cpu
expect_status 2 "$RECKNN" "$data" --metric jaccard --reps 10 --out "$tmp/x" --device cpu
expect_status 2 "$RECKNN" "$data" --metric jaccard --approx-check 10 --out "$tmp/x" --device cpu
expect_status 2 "$RECKNN" "$data" --metric jaccard --approx rbc --reps 0 --out "$tmp/x" --device cpu
expect_status 2 "$RECKNN" "$data" --metric jaccard --approx rbc --probes x --out "$tmp/x" --device cpu
expect_status 2 "$RECKNN" "$data" --metric jaccard --approx rbc --approx-check -1 --out "$tmp/x" --device cpu
[ ! -e "$tmp/x" ] || fail "a usage error left an output folder"

# on a GPU: the CPU's files and counts
gpu_usable "$data" || { echo "no usable GPU: the GPU part is skipped"; exit 0; }
for metric in cosine-full euclidean-full jaccard; do
    for dev in cpu gpu; do
        expect_status 0 "$RECKNN" "$data" --implicit --metric "$metric" --approx rbc --probes 3 --top-n 5 \
            --out "$tmp/g-$metric-$dev" --device "$dev" --quiet
    done
    for f in neighbors.csv recommendations.csv; do
        cmp -s "$tmp/g-$metric-cpu/$f" "$tmp/g-$metric-gpu/$f" || fail "--approx $metric: $f differs on the GPU"
    done
    for key in pair_evaluations entry_reads orphans largest_ball; do
        [ "$(json_get "$tmp/g-$metric-cpu/metrics.json" $key)" = "$(json_get "$tmp/g-$metric-gpu/metrics.json" $key)" ] ||
            fail "--approx $metric: $key differs on the GPU"
    done
done
exit 0
