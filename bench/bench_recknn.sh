#!/bin/sh
# bench_recknn.sh DATADIR LOGDIR [RUN...] -- time recknn on the benchmark data
# sets of bench/gen.sh (generated into DATADIR when missing) and print a table
# of stage times from each run's metrics.json.  Runs (default: the first eight):
#   ml20m-gpu      similarity + top-20 lists, pearson, GPU, ML-20M size
#   ml20m-job      whole job with a 2% holdout (load, lists, predictions, write), GPU
#   ml20m-cpu      similarity + top-20 lists on the CPU engine (all cores)
#   ml20m-metrics  cosine, msd, pearson-baseline lists on the GPU
#   netflix-gpu    similarity + top-20 lists, pearson, GPU, Netflix size
#   netflix-16g    the same under --gpu-memory 16
#   netflix-4g     the same under --gpu-memory 4 (several tiles), lists compared with netflix-gpu
#   netflix-job    whole job with a 2% holdout at Netflix size
# The nightly job with top-N (SET: any set of gen.sh, e.g. ml20m, ml20m-random,
# ml20m-flat, ml20m-flat-random, netflix, netflix-random):
#   job-SET        the whole job with the defaults (--device gpu -k 20, top-10 for every
#                  user, every file written), once with --gpu-topn kernel (run job-SET-kernel)
#                  and once with --gpu-topn spgemm (job-SET-spgemm); the two
#                  recommendations.csv must be byte-identical.  job-SET-random is also
#                  compared with job-SET when both ran (same ratings, other row order).
#   job-SET-kernel, job-SET-spgemm, job-SET-auto   one route only (auto: no --gpu-topn)
#   cpujob-SET     the same job on the CPU engine (--device cpu, all cores); its
#                  recommendations.csv and neighbors.csv must equal job-SET-kernel's
#   parse1-SET     --threads 1 --top-n 0 --no-neighbors on the GPU: one core's parse rate
#                  (load_detail_s.read_parse) for bench/floors.py
# ml20m-cpu also checks that CPU and GPU lists are byte-identical.  REPEAT=N runs every
# recknn command N times (rows NAME, NAME.2, ...; the outputs of the last are kept).  The
# data files are read from the page cache when they were just generated (the load times are
# then parse times, not disk times).  Every row reads metrics.json defensively: a key the
# binary does not write prints as '-'.  LOGDIR/NAME.json keeps each run's metrics.json,
# LOGDIR/out-NAME its output folder.
set -u
data=${1:?usage: bench_recknn.sh DATADIR LOGDIR [RUN...]}
log=${2:?usage: bench_recknn.sh DATADIR LOGDIR [RUN...]}
shift 2
[ $# -ge 1 ] || set -- ml20m-gpu ml20m-job ml20m-cpu ml20m-metrics netflix-gpu netflix-16g netflix-4g netflix-job
here=$(dirname "$0")
recknn=${RECKNN:-./recknn}
export RECKNN_SYNTH="${RECKNN_SYNTH:-./recknn-synth}"
repeat=${REPEAT:-1}
mkdir -p "$log" "$data"
table="$log/table.txt"
: >"$log/gen.log"
: >"$table"
# similarity-only runs keep measuring what they measured before top-N existed
notopn=
"$recknn" --help 2>/dev/null | grep -q -- '--top-n' && notopn="--top-n 0"

need() {
    [ -f "$data/$1.csv" ] && return 0
    t0=$(date +%s.%N)
    sh "$here/gen.sh" "$data" "$1" >>"$log/gen.log" 2>&1
    t1=$(date +%s.%N)
    if [ -f "$data/$1.csv" ]; then
        echo "generated $1.csv in $(awk "BEGIN{print $t1 - $t0}") s ($(du -h "$data/$1.csv" | cut -f1))" >>"$log/gen.log"
    else
        echo "generating $1.csv FAILED (gen.sh exit status in gen.log)" >>"$log/gen.log"
        return 1
    fi
}

header_done=
ran=" "   # the runs of this invocation (outputs left by earlier invocations are not compared)
# row NAME FILE RC WALL: the table row(s) of one run from LOGDIR/NAME.json
row() {
    python3 - "$1" "$log/$1.json" "$2" "$3" "$4" "$header_done" >>"$table" <<'PY'
import json, os, sys
name, path, data, rc, wall, header_done = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), sys.argv[6]

def g(d, *keys):
    for k in keys:
        if not isinstance(d, dict) or k not in d or d[k] is None:
            return None
        d = d[k]
    return d

def f(v, w=6, p=3):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return f"{'-':>{w}}"
    return f"{v:{w}.{p}f}"

if not header_done:
    print(f"{'run':<26} {'device':<9} {'load':>6} {'GB/s':>5} {'sim':>6} {'select':>6} {'tN-comp':>7} "
          f"{'tN-wall':>7} {'write':>6} {'total':>6} {'wall':>6}  top-N path / notes")
try:
    m = json.load(open(path))
except Exception:
    try:
        log = open(path[:-5] + '.log', errors='replace').read().strip().splitlines()
    except OSError:
        log = []
    print(f"{name:<26} FAILED (exit {rc}, wall {wall:.2f} s): {log[-1] if log else ''}")
    sys.exit()
t = g(m, 'timings_s') or {}
e = g(m, 'engine') or {}
tn = g(m, 'topn') or {}
ld = g(m, 'load_detail_s') or {}
load = g(t, 'load')
size = os.path.getsize(data) if os.path.exists(data) else None
gbs = size / load / 1e9 if size and load else None
dev = str(g(m, 'device') or '-').replace('NVIDIA ', '')[:9]
notes = [str(g(tn, 'path'))] if g(tn, 'path') else []
if rc != 0:
    notes.append(f'EXIT {rc}')
rmse = g(m, 'metrics', 'rmse')
if rmse is not None:
    notes.append(f'rmse {rmse:.4f}')
print(f"{name:<26} {dev:<9} {f(load)} {f(gbs, 5, 2)} {f(g(t, 'similarity'))} {f(g(t, 'select'))} "
      f"{f(g(tn, 'compute_s'), 7, 4)} {f(g(tn, 'wall_s'), 7, 3)} {f(g(t, 'write'))} {f(g(t, 'total'))} "
      f"{wall:6.2f}  {'; '.join(notes)}")
parts = ' '.join(f"{k} {v:.3f}" for k, v in ld.items() if isinstance(v, (int, float)))
eng = ' '.join(f"{k[:-2] if k.endswith('_s') else k} {f(g(e, k), 1, 3).strip()}"
               for k in ('wall_s', 'init_s', 'upload_s', 'download_s') if g(e, k) is not None)
pu, sim = g(e, 'pair_updates'), g(t, 'similarity')
if pu and sim:
    eng += f" {pu / sim:.3g} pairs/s"
if g(e, 'path'):
    eng += f" [{g(e, 'path')}]"
top = ' '.join(f"{k[:-2] if k.endswith('_s') else k} {v:.4g}" for k, v in tn.items()
               if k in ('upload_s', 'sink_s', 'users', 'rows', 'updates') and isinstance(v, (int, float)))
rec, pred = g(t, 'recommend'), g(t, 'predict')
line = f"{'':2}load: {parts or '-'} | engine: {eng or '-'}"
if top or rec:
    line += f" | top-N: recommend {f(rec, 1, 3).strip()} {top}"
if pred:
    line += f" | predict {pred:.3f}"
if g(e, 'detail'):
    line += f" | set-up: {g(e, 'detail')}"
print(line)
PY
    header_done=1
}

# run NAME ARGS...: one recknn run (REPEAT times), its metrics.json kept as LOGDIR/NAME.json
run() {
    name=$1; shift
    file=$1
    out="$log/out-$name"
    rm -rf "$out"
    ran="$ran $name "
    i=1
    while [ "$i" -le "$repeat" ]; do
        tag=$name; [ "$i" -gt 1 ] && tag="$name.$i"
        rm -f "$out/metrics.json"
        t0=$(date +%s.%N)
        "$recknn" "$@" --out "$out" --no-progress >"$log/$tag.log" 2>&1
        rc=$?
        t1=$(date +%s.%N)
        rm -f "$log/$tag.json"
        cp "$out/metrics.json" "$log/$tag.json" 2>/dev/null
        row "$tag" "$file" "$rc" "$(awk "BEGIN{print $t1 - $t0}")"
        i=$((i + 1))
    done
}

# same WHAT A B: one table line saying whether files A and B are byte-identical
same() {
    if [ ! -f "$2" ] || [ ! -f "$3" ]; then
        echo "$1: cannot compare, missing $( [ -f "$2" ] || echo "$2") $( [ -f "$3" ] || echo "$3")" >>"$table"
    elif cmp -s "$2" "$3"; then
        echo "$1: byte-identical ($(($(wc -l <"$2") - 1)) rows)" >>"$table"
    else
        echo "$1: DIFFER ($(cmp "$2" "$3" 2>&1 | head -1))" >>"$table"
    fi
}

# job SET ROUTE: the nightly job on SET with one GPU top-N route (auto: recknn's choice)
job() {
    need "$1" || return
    if [ "$2" = auto ]; then
        run "job-$1-auto" "$data/$1.csv" --device gpu -k 20
    else
        run "job-$1-$2" "$data/$1.csv" --device gpu -k 20 --gpu-topn "$2"
    fi
}

for r in "$@"; do
    case $r in
    ml20m-gpu) need ml20m && run ml20m-gpu "$data/ml20m.csv" --device gpu -k 20 $notopn ;;
    ml20m-job) need ml20m && run ml20m-job "$data/ml20m.csv" --device gpu -k 20 --holdout 0.02 --seed 1 ;;
    ml20m-cpu)
        need ml20m && run ml20m-cpu "$data/ml20m.csv" --device cpu -k 20 $notopn
        same "ml20m: CPU and GPU neighbors.csv" "$log/out-ml20m-cpu/neighbors.csv" "$log/out-ml20m-gpu/neighbors.csv" ;;
    ml20m-metrics)
        need ml20m || continue
        for m in cosine msd pearson-baseline; do run "ml20m-$m" "$data/ml20m.csv" --device gpu -k 20 --metric $m $notopn; done ;;
    netflix-gpu) need netflix && run netflix-gpu "$data/netflix.csv" --device gpu -k 20 $notopn ;;
    netflix-16g) need netflix && run netflix-16g "$data/netflix.csv" --device gpu -k 20 --gpu-memory 16 $notopn ;;
    netflix-4g)
        need netflix && run netflix-4g "$data/netflix.csv" --device gpu -k 20 --gpu-memory 4 $notopn
        same "netflix: lists from small tiles (4 GB cap) and one tile" \
            "$log/out-netflix-4g/neighbors.csv" "$log/out-netflix-gpu/neighbors.csv" ;;
    netflix-job) need netflix && run netflix-job "$data/netflix.csv" --device gpu -k 20 --holdout 0.02 --seed 1 ;;
    job-*-kernel|job-*-spgemm|job-*-auto)
        s=${r#job-}; route=${s##*-}; job "${s%-*}" "$route" ;;
    job-*)
        s=${r#job-}
        need "$s" || continue
        job "$s" kernel
        job "$s" spgemm
        same "$s: recommendations.csv of the kernel and spgemm routes" \
            "$log/out-job-$s-kernel/recommendations.csv" "$log/out-job-$s-spgemm/recommendations.csv"
        # the same ratings in the other row order, when that ran too (in this invocation)
        case $s in *-random) other=${s%-random} ;; *) other=$s-random ;; esac
        case $ran in
        *" job-$other-kernel "*)
            same "$other and $s (same ratings, other row order): recommendations.csv" \
                "$log/out-job-$other-kernel/recommendations.csv" "$log/out-job-$s-kernel/recommendations.csv" ;;
        esac ;;
    cpujob-*)
        s=${r#cpujob-}
        need "$s" || continue
        run "cpujob-$s" "$data/$s.csv" --device cpu -k 20
        ref="$log/out-job-$s-kernel"
        case $ran in *" job-$s-kernel "*) ;; *) ref="$log/out-job-$s-auto" ;; esac
        same "$s: recommendations.csv of the CPU engine and the GPU ($(basename "$ref"))" \
            "$log/out-cpujob-$s/recommendations.csv" "$ref/recommendations.csv"
        same "$s: neighbors.csv of the CPU engine and the GPU ($(basename "$ref"))" \
            "$log/out-cpujob-$s/neighbors.csv" "$ref/neighbors.csv" ;;
    parse1-*)
        s=${r#parse1-}
        need "$s" && run "parse1-$s" "$data/$s.csv" --device gpu -k 20 --threads 1 --top-n 0 --no-neighbors ;;
    *) echo "unknown run $r" >&2 ;;
    esac
done
cat "$log/gen.log" 2>/dev/null
cat "$table"
