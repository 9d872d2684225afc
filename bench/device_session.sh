#!/bin/sh
# device_session.sh OUTDIR [STEP...] -- one call on the GPU machine: build, tests and
# benchmarks, full logs packed into OUTDIR/logs.tgz (the device tool returns few files),
# a short table printed last.  Steps (default: check bench):
#   check        bench/gpu_check.sh: build, make check, compute-sanitizer (time-limited)
#   build        only the build (when check is skipped)
#   test         make check after build (no sanitizers)
#   bench        bench/bench_recknn.sh with $RUNS (default ml20m-gpu ml20m-job netflix-gpu netflix-16g)
#   peers        bench/run_peers.sh on the same data ($PEERS, default "torch cupy"; $SETS)
#   paths        bench/gpu_paths on the bench data: symmetric against full-row tiles, per metric,
#                or with PATHS_ARGS=transpose the device transpose against the host's
#   e2e          bench/gpu_vs_cpu.sh: whole jobs on both engines, every metric and mode
#   gen          bench/gen.sh for $GEN_SETS (default ml20m-random ml20m netflix-random netflix),
#                each set timed (the other steps generate what they miss, untimed here)
#   topn         bench/bench_recknn.sh with $TOPN_RUNS (default: the nightly job on
#                ml20m-random ml20m netflix-random netflix, both GPU top-N routes, the CPU
#                engine at ML-20M size, a one-core parse run), after one untimed GPU warm-up run
#   peertopn     bench/peer_topn_torch.py (run_peers.sh PEERS=topn) on $PEER_SETS (default
#                ml20m-random netflix-random) with the lists and recommendations of the topn step
#   floors       bench/floors.py --measure: the machine's rates, each stage's floor, the issue's table
#   model        bench/model_bench.sh: save a model at ML-20M size, reload it 3 times, answers compared
#   scale        bench/scale_gpu.sh: sparse catalogues up to 2M items on both engines, Netflix
#                size under --gpu-memory 2 and 1
#   evalgpu      tests/cli_gpu_eval.sh and a 5-fold ml-100k-size run on both engines (fold metrics compared)
#   queries      bench/gpu_queries on ml20m: subsets of 1..1024 items by one query per block and
#                per kernel beside the all-items run; k = 20, 200, 2000 (and 2000, 2100 selected on
#                the host); every metric on the GPU and the CPU ($QUERY_MODES, default subset k metrics)
# DATA (default /tmp/rkdata) holds the generated data sets.  Every step has a timeout
# (STEP_TIMEOUT, e.g. TOPN_TIMEOUT=240), and none runs past SESSION_S (default 570) seconds
# from the start, so that the logs are packed before the device tool's 10 minutes end.
# OUTDIR gets logs.tgz, summary.txt and, when their steps ran, floors.txt, floors.json,
# topn-table.txt and peertopn.jsonl.
set -u
out=${1:?usage: device_session.sh OUTDIR [STEP...]}
shift
[ $# -ge 1 ] || set -- check bench
start=$(date +%s)
budget=${SESSION_S:-570}
logs=/tmp/rklogs
data=${DATA:-/tmp/rkdata}
mkdir -p "$out" "$logs" "$data"
# shellcheck source=/dev/null
[ -f .devdeps/env.sh ] && . ./.devdeps/env.sh
summary="$logs/summary.txt"
: >"$summary"
nvidia-smi --query-gpu=name,memory.total,memory.used,clocks.sm,clocks.max.sm,temperature.gpu --format=csv \
    >"$logs/nvidia-smi.txt" 2>&1
sed 's/^/gpu: /' "$logs/nvidia-smi.txt" >>"$summary"

# tmo SECONDS: SECONDS, or less when the session budget (20 s kept for packing) is nearer
tmo() {
    left=$((budget - ($(date +%s) - start) - 20))
    if [ "$1" -lt "$left" ]; then echo "$1"; else echo "$left"; fi
}

for step in "$@"; do
    t0=$(date +%s)
    lim=
    case $step in
    check) lim=$(tmo "${CHECK_TIMEOUT:-360}") ;;
    build) lim=$(tmo "${BUILD_TIMEOUT:-300}") ;;
    test) lim=$(tmo "${TEST_TIMEOUT:-300}") ;;
    bench) lim=$(tmo "${BENCH_TIMEOUT:-300}") ;;
    peers) lim=$(tmo "${PEERS_TIMEOUT:-300}") ;;
    paths) lim=$(tmo 240) ;;
    e2e) lim=$(tmo "${E2E_TIMEOUT:-200}") ;;
    gen) lim=$(tmo "${GEN_TIMEOUT:-240}") ;;
    topn) lim=$(tmo "${TOPN_TIMEOUT:-240}") ;;
    peertopn) lim=$(tmo "${PEERTOPN_TIMEOUT:-240}") ;;
    floors) lim=$(tmo "${FLOORS_TIMEOUT:-120}") ;;
    model) lim=$(tmo "${MODEL_TIMEOUT:-240}") ;;
    evalgpu) lim=$(tmo "${EVALGPU_TIMEOUT:-120}") ;;
    scale) lim=$(tmo "${SCALE_TIMEOUT:-400}") ;;
    queries) lim=$(tmo "${QUERIES_TIMEOUT:-300}") ;;
    esac
    if [ -n "$lim" ] && [ "$lim" -lt 5 ]; then
        echo "$step: skipped, the session's $budget s are spent" >>"$summary"
        continue
    fi
    case $step in
    check) timeout "$lim" sh bench/gpu_check.sh "$logs/check" >"$logs/check.txt" 2>&1
           echo "check: exit $? ($(($(date +%s) - t0)) s)" >>"$summary"; cat "$logs/check.txt" >>"$summary" ;;
    build) # shellcheck disable=SC2016
           timeout "$lim" sh -c 'autoreconf -fi && ./configure --with-cuda && make -j"$(nproc)"' \
               >"$logs/build.log" 2>&1
           rc=$?
           echo "build: exit $rc ($(($(date +%s) - t0)) s)" >>"$summary"
           [ $rc -eq 0 ] || tail -20 "$logs/build.log" >>"$summary" ;;
    test)  timeout "$lim" make -j"$(nproc)" check >"$logs/test.log" 2>&1
           echo "make check: exit $? ($(($(date +%s) - t0)) s)" >>"$summary"
           grep -E '^(FAIL|ERROR|SKIP|XPASS):|^# (TOTAL|PASS|SKIP|FAIL|ERROR)' "$logs/test.log" >>"$summary" ;;
    bench) timeout "$lim" sh bench/bench_recknn.sh "$data" "$logs/bench" ${RUNS:-} \
               >"$logs/bench.txt" 2>&1
           echo "bench: exit $? ($(($(date +%s) - t0)) s)" >>"$summary"; cat "$logs/bench.txt" >>"$summary" ;;
    peers) PEERS=${PEERS:-torch cupy} timeout "$lim" sh bench/run_peers.sh "$data" \
               "$logs/peers.jsonl" >"$logs/peers.txt" 2>&1
           echo "peers: exit $? ($(($(date +%s) - t0)) s)" >>"$summary"; cat "$logs/peers.txt" >>"$summary" ;;
    paths) for f in ml20m netflix; do
               # PATHS_ARGS: metrics, or "transpose" (the device transpose against the host's)
               [ -f "$data/$f.csv" ] && { echo "== $f"; timeout 120 ./bench/gpu_paths "$data/$f.csv" ${PATHS_ARGS:-}; }
           done >"$logs/paths.txt" 2>&1
           echo "paths: ($(($(date +%s) - t0)) s)" >>"$summary"; cat "$logs/paths.txt" >>"$summary" ;;
    e2e) timeout "$lim" sh bench/gpu_vs_cpu.sh /tmp/rke2e >"$logs/e2e.txt" 2>&1
           echo "e2e: exit $? ($(($(date +%s) - t0)) s)" >>"$summary"; cat "$logs/e2e.txt" >>"$summary" ;;
    gen)
        # one set after the other, each timed; the whole step under one timeout
        # shellcheck disable=SC2016
        RECKNN_SYNTH=${RECKNN_SYNTH:-./recknn-synth} GEN_SETS=${GEN_SETS:-ml20m-random ml20m netflix-random netflix} \
        DATA=$data LOGS=$logs timeout "$lim" sh -c '
            for s in $GEN_SETS; do
                [ -f "$DATA/$s.csv" ] && { echo "gen $s: present ($(du -h "$DATA/$s.csv" | cut -f1))"; continue; }
                a=$(date +%s.%N)
                if sh bench/gen.sh "$DATA" "$s" >"$LOGS/gen-$s.log" 2>&1 && [ -f "$DATA/$s.csv" ]; then
                    echo "gen $s: $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $a}") s ($(du -h "$DATA/$s.csv" | cut -f1))"
                else
                    echo "gen $s: FAILED: $(tail -1 "$LOGS/gen-$s.log")"; rm -f "$DATA/$s.csv"
                fi
            done' >"$logs/gen.txt" 2>&1
        echo "gen: exit $? ($(($(date +%s) - t0)) s)" >>"$summary"; cat "$logs/gen.txt" >>"$summary" ;;
    topn)
        # one untimed GPU run first: driver, module loading and clocks do not land on the first row
        timeout 60 ${RECKNN:-./recknn} sample_data/ratings.csv --device gpu -k 20 --out /tmp/rkwarm --quiet \
            >"$logs/warmup.log" 2>&1
        echo "warm-up run: exit $?" >"$logs/topn.txt"
        timeout "$lim" sh bench/bench_recknn.sh "$data" "$logs/topn" \
            ${TOPN_RUNS:-job-ml20m-random job-ml20m job-netflix-random job-netflix cpujob-ml20m parse1-ml20m} \
            >>"$logs/topn.txt" 2>&1
        echo "topn: exit $? ($(($(date +%s) - t0)) s)" >>"$summary"
        cp "$logs/topn/table.txt" "$out/topn-table.txt" 2>/dev/null
        # the main rows and the checks here (also after a timeout); the detail lines (load
        # parts, set-up, top-N counts) in topn-table.txt
        cat "$logs/topn/gen.log" >>"$summary" 2>/dev/null
        grep -v '^  ' "$logs/topn/table.txt" >>"$summary" 2>/dev/null ;;
    peertopn)
        PEERS=topn SETS=${PEER_SETS:-ml20m-random netflix-random} TOPN_FROM="$logs/topn" \
        PEER_TIMEOUT=${PEER_TIMEOUT:-200} timeout "$lim" sh bench/run_peers.sh "$data" "$logs/peertopn.jsonl" \
            >"$logs/peertopn.txt" 2>"$logs/peertopn.err"
        echo "peertopn: exit $? ($(($(date +%s) - t0)) s)" >>"$summary"
        cp "$logs/peertopn.jsonl" "$out/" 2>/dev/null
        python3 - "$logs/peertopn.jsonl" >>"$summary" 2>&1 <<'PY'
import json, sys
try:
    lines = open(sys.argv[1]).read().splitlines()
except OSError:
    lines = []
for line in lines:
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if r.get('status') in ('failed', 'crashed'):
        print(f"  {r.get('file')} {r.get('L', '')}: {r.get('status')} {r.get('error_kind', '')} "
              f"at {r.get('stage', '-')}: {str(r.get('error', r.get('rc', '')))[:160]}")
        continue
    print(f"  {r.get('file')} torch {r.get('L')} [{r.get('route')}] top-{r.get('n')} {r.get('topn_s')} s "
          f"(matmul {r.get('matmul_s')}, mask+topk {r.get('select_s')}; {r.get('batches')} batches of "
          f"{r.get('batch')}, peak {r.get('peak_gpu_gb', '-')} GB) vs recknn: sets agree {r.get('agree_sets', '-')}, "
          f"modulo ties {r.get('agree_modulo_ties', '-')}, max score diff {r.get('max_score_diff', '-')} "
          f"[{r.get('status')}; {r.get('device', '-')}]")
PY
        tail -3 "$logs/peertopn.err" | sed 's/^/  stderr: /' >>"$summary" ;;
    floors)
        timeout "$lim" python3 bench/floors.py --data "$data" --runs "$logs/topn" "$logs/bench" \
            --peers "$logs/peertopn.jsonl" --measure --json "$logs/floors.json" >"$logs/floors.txt" 2>"$logs/floors.err"
        echo "floors: exit $? ($(($(date +%s) - t0)) s); per-set stages in floors.txt" >>"$summary"
        cp "$logs/floors.txt" "$logs/floors.json" "$out/" 2>/dev/null
        sed 's/^/  /' "$logs/floors.err" | tail -5 >>"$summary"
        sed -n '/^== rates/,/^$/p' "$logs/floors.txt" >>"$summary"
        sed -n '/^== the issue/,$p' "$logs/floors.txt" >>"$summary" ;;
    model)
        timeout "$lim" sh bench/model_bench.sh "$data" "$logs/model" 3 >"$logs/model.txt" 2>&1
        echo "model: exit $? ($(($(date +%s) - t0)) s)" >>"$summary"
        rm -f "$logs/model/ml20m.rkm"; rm -rf "$logs/model"/save "$logs/model"/load-*
        cat "$logs/model.txt" >>"$summary" ;;
    evalgpu)
        top_srcdir=. top_builddir=. timeout "$lim" sh tests/cli_gpu_eval.sh >"$logs/evalgpu.txt" 2>&1
        echo "evalgpu: cli_gpu_eval.sh exit $? ($(($(date +%s) - t0)) s)" >>"$summary"
        tail -3 "$logs/evalgpu.txt" >>"$summary" ;;
    scale)
        timeout "$lim" sh bench/scale_gpu.sh "$data" "$logs/scale" >"$logs/scale.txt" 2>&1
        echo "scale: exit $? ($(($(date +%s) - t0)) s)" >>"$summary"
        cat "$logs/scale.txt" >>"$summary" ;;
    queries)
        [ -f "$data/ml20m.csv" ] || sh bench/gen.sh "$data" ml20m >"$logs/gen-ml20m.log" 2>&1
        for mode in ${QUERY_MODES:-subset k metrics}; do
            echo "== gpu_queries $mode"
            a=$(date +%s)
            timeout "$lim" ./bench/gpu_queries "$data/ml20m.csv" "$mode"
            echo "(exit $?, $(($(date +%s) - a)) s)"
        done >"$logs/queries.txt" 2>&1
        echo "queries: ($(($(date +%s) - t0)) s)" >>"$summary"; cat "$logs/queries.txt" >>"$summary" ;;
    *) echo "unknown step $step" >>"$summary" ;;
    esac
done
echo "session: $(($(date +%s) - start)) s" >>"$summary"
# the output folders of the runs hold lists and recommendations of hundreds of MB: not sent back
tar czf "$out/logs.tgz" --exclude='out-*' -C "$logs" . 2>/dev/null
cp "$summary" "$out/summary.txt"
cat "$summary"
