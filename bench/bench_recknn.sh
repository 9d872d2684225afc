#!/bin/sh
# bench_recknn.sh DATADIR LOGDIR [RUN...] -- time recknn on the benchmark data
# sets of bench/gen.sh (generated into DATADIR when missing) and print a table
# of stage times from each run's metrics.json.  Runs (default: all):
#   ml20m-gpu      similarity + top-20 lists, pearson, GPU, ML-20M size
#   ml20m-job      whole job with a 2% holdout (load, lists, predictions, write), GPU
#   ml20m-cpu      similarity + top-20 lists on the CPU engine (all cores)
#   ml20m-metrics  cosine, msd, pearson-baseline lists on the GPU
#   netflix-gpu    similarity + top-20 lists, pearson, GPU, Netflix size
#   netflix-16g    the same under --gpu-memory 16
#   netflix-4g     the same under --gpu-memory 4 (several tiles), lists compared with netflix-gpu
#   netflix-job    whole job with a 2% holdout at Netflix size
# ml20m-cpu also checks that CPU and GPU lists are byte-identical.
set -u
data=${1:?usage: bench_recknn.sh DATADIR LOGDIR [RUN...]}
log=${2:?usage: bench_recknn.sh DATADIR LOGDIR [RUN...]}
shift 2
[ $# -ge 1 ] || set -- ml20m-gpu ml20m-job ml20m-cpu ml20m-metrics netflix-gpu netflix-16g netflix-4g netflix-job
here=$(dirname "$0")
recknn=${RECKNN:-./recknn}
export RECKNN_SYNTH=${RECKNN_SYNTH:-./recknn-synth}
mkdir -p "$log" "$data"
table="$log/table.txt"
: >"$table"

need() {
    [ -f "$data/$1.csv" ] && return 0
    t0=$(date +%s.%N)
    sh "$here/gen.sh" "$data" "$1" >>"$log/gen.log" 2>&1
    t1=$(date +%s.%N)
    echo "generated $1.csv in $(awk "BEGIN{print $t1 - $t0}") s ($(du -h "$data/$1.csv" | cut -f1))" >>"$log/gen.log"
}

# run NAME ARGS...: one recknn run, its metrics.json kept as LOGDIR/NAME.json
run() {
    name=$1; shift
    out="$log/out-$name"
    t0=$(date +%s.%N)
    "$recknn" "$@" --out "$out" --no-progress >"$log/$name.log" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    cp "$out/metrics.json" "$log/$name.json" 2>/dev/null
    python3 - "$name" "$log/$name.json" "$rc" "$(awk "BEGIN{print $t1 - $t0}")" >>"$table" <<'PY'
import json, sys
name, path, rc, wall = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
try:
    m = json.load(open(path))
except Exception:
    log = open(path[:-5] + '.log', errors='replace').read().strip().splitlines()
    print(f"{name:<15} FAILED (exit {rc}, wall {wall:.2f} s): {log[-1] if log else ''}")
    sys.exit()
t, e = m["timings_s"], m["engine"]
rmse = m["metrics"].get("rmse")
print(f"{name:<15} {m['device'][:12]:<12} load {t['load']:6.3f} engine {e['wall_s']:6.3f} (init {e['init_s']:5.3f} "
      f"up {e['upload_s']:5.3f} sim {t['similarity']:6.3f} sel {t['select']:5.3f} pred {t['predict']:5.3f} "
      f"down {e['download_s']:5.3f}) write {t['write']:5.3f} total {t['total']:6.3f} wall {wall:6.2f} "
      f"{e['pair_updates'] / max(t['similarity'], 1e-9):8.3g} pairs/s {m['load_mb_per_s']:5.0f} MB/s"
      + (f" rmse {rmse:.4f}" if rmse is not None else "") + f" [{e['path']}]")
if e.get('detail'):
    print(f"{'':15} set-up: {e['detail']}; load: " + ", ".join(f"{k} {v:.3f}" for k, v in m['load_detail_s'].items()))
PY
}

for r in "$@"; do
    case $r in
    ml20m-gpu) need ml20m; run ml20m-gpu "$data/ml20m.csv" --device gpu -k 20 ;;
    ml20m-job) need ml20m; run ml20m-job "$data/ml20m.csv" --device gpu -k 20 --holdout 0.02 --seed 1 ;;
    ml20m-cpu)
        need ml20m; run ml20m-cpu "$data/ml20m.csv" --device cpu -k 20
        if cmp -s "$log/out-ml20m-cpu/neighbors.csv" "$log/out-ml20m-gpu/neighbors.csv"; then
            echo "ml20m: CPU and GPU neighbors.csv are byte-identical" >>"$table"
        else
            echo "ml20m: CPU and GPU neighbors.csv DIFFER" >>"$table"
        fi ;;
    ml20m-metrics)
        need ml20m
        for m in cosine msd pearson-baseline; do run "ml20m-$m" "$data/ml20m.csv" --device gpu -k 20 --metric $m; done ;;
    netflix-gpu) need netflix; run netflix-gpu "$data/netflix.csv" --device gpu -k 20 ;;
    netflix-16g) need netflix; run netflix-16g "$data/netflix.csv" --device gpu -k 20 --gpu-memory 16 ;;
    netflix-4g)
        need netflix; run netflix-4g "$data/netflix.csv" --device gpu -k 20 --gpu-memory 4
        if cmp -s "$log/out-netflix-4g/neighbors.csv" "$log/out-netflix-gpu/neighbors.csv"; then
            echo "netflix: lists from small tiles (4 GB cap) and one tile are byte-identical" >>"$table"
        else
            echo "netflix: lists from small tiles (4 GB cap) and one tile DIFFER" >>"$table"
        fi ;;
    netflix-job) need netflix; run netflix-job "$data/netflix.csv" --device gpu -k 20 --holdout 0.02 --seed 1 ;;
    *) echo "unknown run $r" >&2 ;;
    esac
done
cat "$log/gen.log" 2>/dev/null
cat "$table"
