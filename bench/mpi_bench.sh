#!/bin/sh
# mpi_bench.sh DATA OUT -- issue 11's measurements on one GPU machine: the
# nightly job at Netflix size (bench/gen.sh netflix-random: 480,189 users,
# 17,770 items, 100,480,507 ratings in random order; pearson, k 20, top-10 for
# every user, 2% held out for predictions) as one process, --gpus 1, --gpus
# all, --gpus 0,0 (two workers on one GPU) and mpirun -np 2 sharing the GPU
# with each load mode (shard: each rank parses half of the file; np2root:
# rank 0 formats every recommendation, --mpi-output root); every file
# compared byte for byte with the first run.  SET names another file of DATA
# (default netflix-random).
# Prints one table line per run: wall time, load, engine, top-N, rank 0's
# packing and broadcast (--mpi-load bcast), the exchange of lists and
# the balance of the parts (largest over the mean) from metrics.json; full
# logs in OUT.  RUNS picks the runs (default: all of them).
set -u
data=${1:?usage: mpi_bench.sh DATA OUT}
out=${2:?usage: mpi_bench.sh DATA OUT}
mkdir -p "$out"
R=./recknn
set_=${SET:-netflix-random}
f="$data/$set_.csv"
[ -f "$f" ] || sh bench/gen.sh "$data" "$set_" >"$out/gen.log" 2>&1
mpi="mpirun --oversubscribe --bind-to none"
[ "$(id -u)" = 0 ] && mpi="$mpi --allow-run-as-root"
job="$f --metric pearson -k 20 --top-n 10 --holdout 0.02 --seed 1 --quiet"
runs=${RUNS:-"gpu1 gpus1 gpusall gpus00 np2each np2bcast np2each8 np2bcast8"}
# one untimed run first: the page cache holds the file for every timed one
# shellcheck disable=SC2086
$R $job --device gpu --top-n 0 --no-neighbors --out "$out/warm" >"$out/warm.log" 2>&1
rm -rf "$out/warm"
printf '%-10s %7s %6s %6s %6s %6s %6s %7s %7s %s\n' run wall load engine topn distld exch bal_eng bal_work same
for r in $runs; do
    case $r in
    gpu1) cmd="$R $job --device gpu" ;;
    gpus1) cmd="$R $job --device gpu --gpus 1" ;;
    gpusall) cmd="$R $job --device gpu --gpus all" ;;
    gpus00) cmd="$R $job --device gpu --gpus 0,0" ;;
    np2each) cmd="$mpi -np 2 $R $job --device gpu --mpi-load each" ;;
    np2bcast) cmd="$mpi -np 2 $R $job --device gpu --mpi-load bcast" ;;
    np2shard) cmd="$mpi -np 2 $R $job --device gpu --mpi-load shard" ;;
    np2auto) cmd="$mpi -np 2 $R $job --device gpu" ;;
    np2root) cmd="$mpi -np 2 $R $job --device gpu --mpi-output root" ;;
    np2each8) cmd="$mpi -np 2 $R $job --device gpu --mpi-load each --threads 8" ;;
    np2bcast8) cmd="$mpi -np 2 $R $job --device gpu --mpi-load bcast --threads 8" ;;
    np1) cmd="$mpi -np 1 $R $job --device gpu" ;;
    cpu1) cmd="$R $job --device cpu" ;;
    cpunp2) cmd="$mpi -np 2 $R $job --device cpu --threads 8" ;;
    *) echo "unknown run $r"; continue ;;
    esac
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    timeout 300 $cmd --out "$out/$r" >"$out/$r.log" 2>&1
    st=$?
    t1=$(date +%s.%N)
    same=-
    if [ "$r" != gpu1 ] && [ -d "$out/gpu1" ]; then
        same=yes
        for x in neighbors predictions recommendations; do
            cmp -s "$out/gpu1/$x.csv" "$out/$r/$x.csv" || same="no($x)"
        done
    fi
    python3 - "$out/$r/metrics.json" "$r" "$st" "$t0" "$t1" "$same" <<'PY'
import json, sys
p, r, st, t0, t1, same = sys.argv[1:]
try:
    m = json.load(open(p))
except Exception as e:
    print(f"{r:<10} exit {st}: {e}")
    sys.exit(0)
t = m["timings_s"]
sc = m.get("scale", {})
b = sc.get("balance", {})
eng = t["similarity"] + t["select"] + t["predict"]
print(f"{r:<10} {float(t1)-float(t0):7.2f} {t['load']:6.2f} {m['engine']['wall_s']:6.3f} {t['recommend']:6.3f} "
      f"{sc.get('load_s') or 0:6.2f} {sc.get('exchange_s') or 0:6.3f} {b.get('engine_s') or 0:7.3f} {b.get('work') or 0:7.3f} {same}"
      f" {sc.get('load') or '-'}")
for x in sc.get("parts", []):
    print(f"    rank {x['rank']} worker {x['worker']} device {x['device']}: rows {x['rows']} work {x['work']:.3e} "
          f"engine {x['engine_s']:.3f} s, top-N users {x['topn_users']} work {x['topn_work']:.3e} {x['topn_s']:.3f} s")
PY
done
