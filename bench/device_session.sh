#!/bin/sh
# device_session.sh OUTDIR [STEP...] -- one call on the GPU machine: build, tests and
# benchmarks, full logs packed into OUTDIR/logs.tgz (the device tool returns few files),
# a short table printed last.  Steps (default: check bench):
#   check        bench/gpu_check.sh: build, make check, compute-sanitizer (time-limited)
#   build        only the build (when check is skipped)
#   test         make check after build (no sanitizers)
#   bench        bench/bench_recknn.sh with $RUNS (default ml20m-gpu ml20m-job netflix-gpu netflix-16g)
#   peers        bench/run_peers.sh on the same data ($PEERS, default "torch cupy"; $SETS)
#   paths        bench/gpu_paths on the bench data: symmetric against full-row tiles, per metric
#   e2e          bench/gpu_vs_cpu.sh: whole jobs on both engines, every metric and mode
# DATA (default /tmp/rkdata) holds the generated data sets.
set -u
out=${1:?usage: device_session.sh OUTDIR [STEP...]}
shift
[ $# -ge 1 ] || set -- check bench
logs=/tmp/rklogs
data=${DATA:-/tmp/rkdata}
mkdir -p "$out" "$logs" "$data"
[ -f .devdeps/env.sh ] && . ./.devdeps/env.sh
summary="$logs/summary.txt"
: >"$summary"
nvidia-smi --query-gpu=name,memory.total,memory.used,clocks.sm,clocks.max.sm,temperature.gpu --format=csv \
    >"$logs/nvidia-smi.txt" 2>&1
for step in "$@"; do
    t0=$(date +%s)
    case $step in
    check) timeout "${CHECK_TIMEOUT:-360}" sh bench/gpu_check.sh "$logs/check" >"$logs/check.txt" 2>&1
           echo "check: exit $? ($(($(date +%s) - t0)) s)" >>"$summary"; cat "$logs/check.txt" >>"$summary" ;;
    build) { autoreconf -fi && ./configure --with-cuda && make -j"$(nproc)"; } >"$logs/build.log" 2>&1
           echo "build: exit $? ($(($(date +%s) - t0)) s)" >>"$summary" ;;
    test)  make -j"$(nproc)" check >"$logs/test.log" 2>&1
           echo "make check: exit $? ($(($(date +%s) - t0)) s)" >>"$summary"
           grep -E '^(PASS|FAIL|SKIP|ERROR):|^# (TOTAL|PASS|SKIP|FAIL)' "$logs/test.log" >>"$summary" ;;
    bench) timeout "${BENCH_TIMEOUT:-300}" sh bench/bench_recknn.sh "$data" "$logs/bench" ${RUNS:-} \
               >"$logs/bench.txt" 2>&1
           echo "bench: exit $? ($(($(date +%s) - t0)) s)" >>"$summary"; cat "$logs/bench.txt" >>"$summary" ;;
    peers) PEERS=${PEERS:-torch cupy} timeout "${PEERS_TIMEOUT:-300}" sh bench/run_peers.sh "$data" \
               "$logs/peers.jsonl" >"$logs/peers.txt" 2>&1
           echo "peers: exit $? ($(($(date +%s) - t0)) s)" >>"$summary"; cat "$logs/peers.txt" >>"$summary" ;;
    paths) for f in ml20m netflix; do
               [ -f "$data/$f.csv" ] && { echo "== $f"; timeout 120 ./bench/gpu_paths "$data/$f.csv"; }
           done >"$logs/paths.txt" 2>&1
           echo "paths: ($(($(date +%s) - t0)) s)" >>"$summary"; cat "$logs/paths.txt" >>"$summary" ;;
    e2e) timeout "${E2E_TIMEOUT:-200}" sh bench/gpu_vs_cpu.sh /tmp/rke2e >"$logs/e2e.txt" 2>&1
           echo "e2e: exit $? ($(($(date +%s) - t0)) s)" >>"$summary"; cat "$logs/e2e.txt" >>"$summary" ;;
    *) echo "unknown step $step" >>"$summary" ;;
    esac
done
# the output folders of the runs hold neighbour lists of hundreds of MB: not sent back
tar czf "$out/logs.tgz" --exclude='out-*' -C "$logs" . 2>/dev/null
cp "$summary" "$out/summary.txt"
cat "$summary"
