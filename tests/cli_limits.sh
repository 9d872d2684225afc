#!/bin/sh
# cli_limits.sh — memory budgets and the GPU's fallback: --memory-limit below
# the load's or the run's need stops before any work (exit 5, the need and the
# option named, no output folder); a budget that fits fewer threads runs on
# fewer with a note and gives the files of a one-thread run; under --device
# auto a GPU engine that fails (a device budget too small for one tile) hands
# the run to the CPU with a note and the CPU's files, and a catalogue whose
# dense GPU rows would cost far more than the CPU's sparse ones runs on the
# CPU (both skipped without a GPU).
. "$top_srcdir/tests/setup.sh"
[ -x "$RECKNN" ] || fail "$RECKNN is not built"
train="$top_srcdir/sample_data/ratings.csv"
[ -f "$train" ] || train="$TESTDATA/cli/good.csv"

# ---- below the load's need, and below the run's -------------------------------------------------
expect_status 5 "$RECKNN" "$train" --memory-limit 0.00001 --out "$tmp/a" --device cpu
grep -q 'needs about .* --memory-limit gives' "$tmp/stderr" || fail "load budget: $(cat "$tmp/stderr")"
[ -e "$tmp/a" ] && fail "a refused budget created the output folder"
expect_status 5 "$RECKNN" "$train" --memory-limit 0.003 --out "$tmp/a" --device cpu
grep -q 'even on one thread' "$tmp/stderr" || fail "run budget: $(cat "$tmp/stderr")"
grep -q 'lower -k, --top-n' "$tmp/stderr" || fail "the message names no option: $(cat "$tmp/stderr")"
[ -e "$tmp/a" ] && fail "a refused budget created the output folder"

# ---- a budget for fewer threads: the note, and the one-thread files -------------------------------
expect_status 0 "$RECKNN" "$train" --threads 1 --holdout 0.1 --seed 2 --out "$tmp/one" --device cpu --quiet
expect_status 0 "$RECKNN" "$train" --threads 64 --memory-limit 0.0115 --holdout 0.1 --seed 2 --out "$tmp/few" \
    --device cpu
# fewer threads: the machine's processors (a note), then the budget's (a note when it cuts more)
grep -Eq 'threads instead of|so [0-9]+ threads are used' "$tmp/stderr" || fail "no note of fewer threads: $(cat "$tmp/stderr")"
grep -q '"threads_planned": ' "$tmp/few/metrics.json" || fail "metrics.json lacks the plan"
for f in neighbors.csv predictions.csv recommendations.csv; do
    cmp -s "$tmp/one/$f" "$tmp/few/$f" || fail "$f differs between one thread and the budget's threads"
done
expect_status 0 "$RECKNN" "$train" --memory-limit 8 --out "$tmp/big" --device cpu --quiet
expect_status 2 "$RECKNN" "$train" --memory-limit 0 --out "$tmp/z" --device cpu

# ---- --device auto: a failing GPU engine hands the run to the CPU ---------------------------------
set +e
"$RECKNN" "$train" --device gpu --top-n 0 --no-neighbors --out "$tmp/probe" --quiet 2>/dev/null
st=$?
set -e
if [ "$st" -eq 5 ]; then
    echo "no usable GPU: the fallback part is skipped"
    exit 0
fi
expect_status 0 "$RECKNN" "$train" --holdout 0.1 --seed 2 --out "$tmp/cpu" --device cpu --quiet
expect_status 0 "$RECKNN" "$train" --holdout 0.1 --seed 2 --gpu-memory 0.000001 --out "$tmp/auto" --device auto
grep -q 'the GPU engine failed (.*): running on the CPU' "$tmp/stderr" || fail "no fallback note: $(cat "$tmp/stderr")"
grep -q '"gpu_fallback": true' "$tmp/auto/metrics.json" || fail "metrics.json does not record the fallback"
for f in neighbors.csv predictions.csv recommendations.csv; do
    cmp -s "$tmp/cpu/$f" "$tmp/auto/$f" || fail "$f of the fallback differs from the CPU run's"
done
# a catalogue of many items with two ratings each: auto takes the CPU, whose rows are sparse
"$SYNTH" --users 30000 --items 300000 --ratings 600000 --seed 4 --output "$tmp/sparse.csv" --quiet
expect_status 0 "$RECKNN" "$tmp/sparse.csv" --top-n 5 --out "$tmp/sp" --device auto
grep -q "the GPU's dense rows take about" "$tmp/stderr" || fail "auto kept the GPU for 300,000 sparse items: $(cat "$tmp/stderr")"
grep -q '"device": "cpu"' "$tmp/sp/metrics.json" || fail "auto on sparse items did not run on the CPU"
# --device gpu does not fall back: exit 5 with the GPU's message
expect_status 5 "$RECKNN" "$train" --holdout 0.1 --seed 2 --gpu-memory 0.000001 --out "$tmp/g" --device gpu
exit 0
