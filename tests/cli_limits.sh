#!/bin/sh
# cli_limits.sh — memory budgets and the GPU's fallback: --memory-limit below
# the load's or the run's need stops before any work (exit 5, the need and the
# option named, no output folder); the reader itself holds to the budget on a
# pipe and a .gz file, which have no size to plan from (exit 5 naming the file
# and line, nothing in --out, a peak within the budget where /usr/bin/time can
# tell; enough budget gives the unbounded files); a budget that fits fewer threads runs on
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

# ---- the reader holds to the budget: a pipe and a compressed file have no size to plan from ---------
# 1,000,000 ratings (11 MB of text): the rows alone outgrow 10 MB
awk 'BEGIN { print "user,item,rating"; for (u = 1; u <= 20000; u++) for (k = 0; k < 50; k++)
    print u "," (u * 7 + k * 13) % 400 + 1 "," (u + k) % 5 + 1 }' > "$tmp/big.csv"
gzip -c "$tmp/big.csv" > "$tmp/big.csv.gz"
# peak_kb IN ARGS...: the peak KB of recknn ARGS reading IN (/usr/bin/time -f %M), empty where it
# cannot be measured (valgrind, ASan, no GNU time)
peak_kb() {
    [ "${RK_VALGRIND:-0}" = 1 ] && return 0
    grep -q __asan_init "$RECKNN" 2>/dev/null && return 0
    /usr/bin/time -f %M true >/dev/null 2>&1 || return 0
    in=$1
    shift
    /usr/bin/time -o "$tmp/peak" -f %M "$RECKNN" "$@" < "$in" >/dev/null 2>&1 || true
    tail -1 "$tmp/peak"
}
expect_status 0 "$RECKNN" "$tmp/big.csv" --top-n 5 --out "$tmp/plain" --device cpu --quiet
for src in pipe gz; do
    case $src in
        pipe) limit=0.01; where='<stdin>' ;;
        gz) limit=0.02; where="$tmp/big.csv.gz" ;; # the decoder's 12 MB and bytes ahead count too
    esac
    run() { # run LIMIT OUT [ARGS...]
        l=$1 o=$2
        shift 2
        if [ $src = pipe ]; then cat "$tmp/big.csv" | "$RECKNN" - --memory-limit "$l" --out "$o" "$@"
        else "$RECKNN" "$tmp/big.csv.gz" --memory-limit "$l" --out "$o" "$@"; fi
    }
    expect_status 5 run $limit "$tmp/small_$src" --top-n 5 --device cpu
    grep -q "^recknn: error: $where:[0-9]*: reading on needs about .* MB .*--memory-limit gives .* MB: raise --memory-limit" \
        "$tmp/stderr" || fail "$src under $limit GB: $(cat "$tmp/stderr")"
    [ -e "$tmp/small_$src" ] && fail "$src under $limit GB: --out was created"
    if [ $src = pipe ]; then kb=$(peak_kb "$tmp/big.csv" - --memory-limit $limit --out "$tmp/peak" --device cpu)
    else kb=$(peak_kb /dev/null "$tmp/big.csv.gz" --memory-limit $limit --out "$tmp/peak" --device cpu); fi
    echo "$src under $limit GB: peak ${kb:-unmeasured} KB"
    # the limit and about 8 MB of program (an unbounded read peaks near 40 MB)
    if [ -n "$kb" ]; then
        max=$(awk -v l=$limit 'BEGIN { printf "%d", l * 1048576 + 8192 }')
        [ "$kb" -le "$max" ] || fail "$src under $limit GB peaked at $kb KB (more than $max)"
    fi
    expect_status 0 run 1 "$tmp/ok_$src" --top-n 5 --device cpu --quiet
    for f in neighbors.csv recommendations.csv; do
        cmp -s "$tmp/plain/$f" "$tmp/ok_$src/$f" || fail "$src with --memory-limit 1: $f differs"
    done
done

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
