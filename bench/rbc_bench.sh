#!/bin/sh
# rbc_bench.sh LOGDIR [ITEMS] -- the random ball cover (--approx rbc) against the exact engines
# on a synthetic implicit catalogue with taste structure, on the GPU and the CPU.
#
#   data: recknn-synth --items ITEMS (default 1000000) --users ITEMS/5 --ratings ITEMS*20
#         --communities ITEMS/333 --seed 1 (20 ratings an item, 100 a user, communities of
#         about 333 items and 67 users), read with --implicit
#   runs: exact on the GPU and the CPU; --approx rbc with --approx-check on the GPU and the CPU
#         (defaults: R one per 24 items above the tail, P 8); then P 2, 4 and 16 on the GPU
#   each: -k 20 --top-n 0 --metric $METRIC (default cosine-full), neighbors.csv written
#
# Prints a table (wall seconds of the run and of its list stage, recall@20 on the sample, pair
# evaluations, their ratio to brute force's n(n-1), rater entries read) and whether the
# approximate lists of the GPU and the CPU are identical (they must be).  Logs, metrics.json
# of every run and the data (unless DATA names another folder) go under LOGDIR.
# Environment: RECKNN, RECKNN_SYNTH (the binaries, default ./recknn, ./recknn-synth), DATA,
# METRIC, CHECK (queries sampled for recall, default 1000), LIMIT (seconds a run may take,
# default 1800), SKIP_CPU_EXACT=1 (skip the exact CPU run), SKIP_SWEEP=1 (skip the CPU sweep of
# R, P and the tail bound with bench/rbc_sweep, RBC_SWEEP names it).
set -u
log=${1:?usage: rbc_bench.sh LOGDIR [ITEMS]}
items=${2:-1000000}
recknn=${RECKNN:-./recknn}
synth=${RECKNN_SYNTH:-./recknn-synth}
data=${DATA:-$log/data}
metric=${METRIC:-cosine-full}
check=${CHECK:-1000}
limit=${LIMIT:-1800}
mkdir -p "$log" "$data"
users=$((items / 5))
ratings=$((items * 20))
comm=$((items / 333))
[ "$comm" -ge 1 ] || comm=1
f=$data/rbc_${items}.csv
{
    echo "rbc_bench: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(nproc) cores, $("$recknn" --version | head -1)"
    command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
} | tee "$log/env.txt"
if [ ! -s "$f" ]; then
    echo "generating $f: $items items, $users users, $ratings ratings, $comm communities"
    "$synth" --users "$users" --items "$items" --ratings "$ratings" --communities "$comm" --seed 1 \
        --output "$f" 2>"$log/synth.log" || { cat "$log/synth.log"; exit 1; }
    cat "$log/synth.log"
fi

# json_get FILE KEY: the first number after "KEY": in FILE ("-" when none);
# approx_get FILE KEY: the same within its "approx" object
json_get() {
    v=$(grep -o "\"$2\": [-0-9.e+]*" "$1" 2>/dev/null | head -1 | sed 's/.*: //')
    echo "${v:--}"
}
approx_get() {
    v=$(grep -o '"approx": {[^}]*}' "$1" 2>/dev/null | grep -o "\"$2\": [-0-9.e+]*" | head -1 | sed 's/.*: //')
    echo "${v:--}"
}

# run NAME ARGS...: one recknn run, timed, its files in $log/NAME
run() {
    name=$1
    shift
    rm -rf "${log:?}/$name"
    echo "== $name: recknn $f --implicit --metric $metric -k 20 --top-n 0 $*" | tee -a "$log/runs.log"
    /usr/bin/time -f "%e %M" -o "$log/$name.time" timeout "$limit" "$recknn" "$f" --implicit --metric "$metric" \
        -k 20 --top-n 0 --out "$log/$name" "$@" >"$log/$name.out" 2>&1
    echo "rc $?: $(tail -2 "$log/$name.out" | tr '\n' ' ')" | tee -a "$log/runs.log"
}

run exact-gpu --device gpu
[ "${SKIP_CPU_EXACT:-0}" = 1 ] || run exact-cpu --device cpu
run rbc-gpu --device gpu --approx rbc --approx-check "$check"
run rbc-cpu --device cpu --approx rbc --approx-check "$check"
for p in 2 4 16; do
    run "rbc-gpu-p$p" --device gpu --approx rbc --probes "$p" --approx-check "$check"
done

echo
printf '%-12s %9s %9s %9s %8s %8s %14s %9s %15s  %s\n' run "wall s" "lists s" "RSS MB" R P "pair evals" \
    "brute/" "entries read" "recall@20 (ties)"
for name in exact-gpu exact-cpu rbc-gpu rbc-cpu rbc-gpu-p2 rbc-gpu-p4 rbc-gpu-p16; do
    m=$log/$name/metrics.json
    [ -f "$log/$name.time" ] || continue
    set -- $(tail -1 "$log/$name.time")
    wall=${1:--}
    rss=$(( ${2:-0} / 1024 ))
    if [ ! -f "$m" ]; then
        printf '%-12s %9s %9s %9s  (failed or timed out: see %s.out)\n' "$name" "$wall" - "$rss" "$name"
        continue
    fi
    printf '%-12s %9s %9s %9s %8s %8s %14s %9s %15s  %s (%s)\n' "$name" "$wall" "$(json_get "$m" similarity)" "$rss" \
        "$(approx_get "$m" reps)" "$(approx_get "$m" probes)" "$(approx_get "$m" pair_evaluations)" \
        "$(approx_get "$m" work_ratio)" "$(approx_get "$m" entry_reads)" "$(approx_get "$m" recall_at_k)" \
        "$(approx_get "$m" recall_at_k_ties)"
done
echo "(exact runs: R, P and the pair counts are '-'; their co-rating pair updates are in engine.pair_updates)"
for name in exact-gpu exact-cpu; do
    [ -f "$log/$name/metrics.json" ] && echo "$name: pair_updates $(json_get "$log/$name/metrics.json" pair_updates)"
done
# the tail bound and R on the CPU (the library's knobs the CLI leaves at their defaults)
sweep=${RBC_SWEEP:-./bench/rbc_sweep}
if [ -x "$sweep" ] && [ "${SKIP_SWEEP:-0}" != 1 ]; then
    echo
    echo "CPU sweep (bench/rbc_sweep, R:P:T, 0 = default):"
    timeout "$limit" "$sweep" "$f" "$metric" "$check" raters 0:8:2 0:8:3 0:8:5 0:4:2 0:16:2 2>&1 | tee "$log/sweep.txt"
fi
if [ -f "$log/rbc-gpu/neighbors.csv" ] && [ -f "$log/rbc-cpu/neighbors.csv" ]; then
    cmp -s "$log/rbc-gpu/neighbors.csv" "$log/rbc-cpu/neighbors.csv" && echo "approximate lists: GPU = CPU" ||
        echo "approximate lists: GPU and CPU DIFFER (a bug: the CPU defines the result)"
fi
if [ -f "$log/exact-gpu/neighbors.csv" ] && [ -f "$log/exact-cpu/neighbors.csv" ]; then
    cmp -s "$log/exact-gpu/neighbors.csv" "$log/exact-cpu/neighbors.csv" && echo "exact lists: GPU = CPU" ||
        echo "exact lists: GPU and CPU differ (ties may order differently: CONTRACT.md §2 allows 1e-4)"
fi
