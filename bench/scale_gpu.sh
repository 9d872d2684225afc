#!/bin/sh
# scale_gpu.sh DATA OUT -- the GPU engine at the edges (one call on the GPU machine):
#   sparse catalogues of 100,000 and 300,000 items (two ratings an item) on the GPU and
#   the CPU, timed, files compared, to see how the GPU's dense rows scale with the items;
#   2,000,000 items on the CPU (and on the GPU under a time limit);
#   Netflix size under --gpu-memory 2 (must now fit in tiles) and 1 (must stop at once
#   with what one tile needs).
set -u
data=${1:?usage: scale_gpu.sh DATA OUT}
out=${2:?usage: scale_gpu.sh DATA OUT}
recknn=${RECKNN:-./recknn}
synth=${RECKNN_SYNTH:-./recknn-synth}
mkdir -p "$out" "$data"
t() { /usr/bin/time -f "%e s wall, %M KB" -o "$out/time.txt" "$@"; rc=$?; echo "rc $rc, $(cat "$out/time.txt")"; }
for n in 100000 300000 2000000; do
    f=$data/sparse$n.csv
    u=$((n / 10)); r=$((n * 2))
    [ -f "$f" ] || "$synth" --users "$u" --items "$n" --ratings "$r" --seed 1 --output "$f" --quiet
    echo "== sparse $n items, $u users, $r ratings"
    echo "cpu: $(t "$recknn" "$f" --device cpu -k 20 --top-n 10 --out "$out/c$n" --quiet)"
    lim=120; [ "$n" -gt 300000 ] && lim=${BIG_LIMIT:-90}
    echo "gpu (limit $lim s): $(t timeout "$lim" "$recknn" "$f" --device gpu -k 20 --top-n 10 --out "$out/g$n" --quiet)"
    if [ -f "$out/g$n/metrics.json" ]; then
        python3 -c "import json,sys; d=json.load(open(sys.argv[1])); e=d['engine']; print('  gpu engine', round(e['wall_s'],3), 's,', e['path'], '|', e['detail'])" "$out/g$n/metrics.json"
        for x in neighbors.csv recommendations.csv; do
            cmp -s "$out/c$n/$x" "$out/g$n/$x" && echo "  $x: identical" || echo "  $x: DIFFER"
        done
    fi
    rm -rf "$out/c$n" "$out/g$n"
done
[ -f "$data/netflix.csv" ] || sh bench/gen.sh "$data" netflix >"$out/gen-netflix.log" 2>&1
echo "== netflix --gpu-memory 2"
echo "$(t "$recknn" "$data/netflix.csv" --device gpu --gpu-memory 2 -k 20 --top-n 10 --out "$out/n2" --quiet)"
[ -f "$out/n2/metrics.json" ] && python3 -c "import json,sys; d=json.load(open(sys.argv[1])); e=d['engine']; print('  engine', round(e['wall_s'],3), 's,', e['path'], '| total', round(d['timings_s']['total'],3))" "$out/n2/metrics.json"
echo "== netflix --gpu-memory 1"
"$recknn" "$data/netflix.csv" --device gpu --gpu-memory 1 -k 20 --top-n 10 --out "$out/n1" --quiet 2>"$out/n1.err"
echo "rc $?: $(cat "$out/n1.err")"
echo "== netflix --gpu-memory 1 --device auto"
"$recknn" "$data/netflix.csv" --device auto --gpu-memory 1 -k 20 --top-n 10 --no-neighbors --out "$out/na" 2>"$out/na.err"
echo "rc $?: $(head -c 600 "$out/na.err")"
rm -rf "$out/n2" "$out/na"
