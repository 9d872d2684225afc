#!/bin/sh
# run_peers.sh DATADIR [OUT] -- run the peers on DATADIR/SET.csv (made by bench/gen.sh) and
# append one JSON row per run to OUT (default bench/out/peers.jsonl).
# Environment: SETS (default "ml20m netflix"), PEERS (default "torch cupy scipy"), PYTHON
# (default python3), SCIPY_ITEMS (target items for the SciPy peer, which extrapolates; default
# 2000), CUPY_ITEMS (the same for the CuPy peer; default: all items), PEER_TIMEOUT (seconds per run, default 900), PEER_CACHE=1 (keep parsed columns in
# .npz files beside the data; default on here). A peer that dies without a row gets a
# "status": "crashed" row. Nothing here runs under make check.
# The peer "topn" is peer_topn_torch.py (top-N from recknn's lists, both routes, one row
# each): it takes neighbors.csv, and compares with recommendations.csv, from the output
# folder of a recknn job on the same set: TOPN_FROM/out-job-SET-kernel (or -auto, -spgemm,
# out-cpujob-SET; TOPN_FROM is bench_recknn.sh's LOGDIR, default bench/out/bench); without one
# it runs RECKNN (default ./recknn) with -k 20 first. TOPN_N (default 10) and TOPN_ROUTES
# (default dense,sparse) go to the peer.
set -u
[ $# -ge 1 ] || { echo "usage: $0 DATADIR [OUT]" >&2; exit 2; }
data=$1
out=${2:-bench/out/peers.jsonl}
here=$(dirname "$0")
py=${PYTHON:-python3}
export PEER_CACHE=${PEER_CACHE:-1}
mkdir -p "$(dirname "$out")"

# topn_dir SET FILE: an output folder of a recknn job on SET that holds neighbors.csv
topn_dir() {
    from=${TOPN_FROM:-bench/out/bench}
    for d in "$from/out-job-$1-kernel" "$from/out-job-$1-auto" "$from/out-job-$1-spgemm" "$from/out-cpujob-$1"; do
        [ -f "$d/neighbors.csv" ] && { echo "$d"; return 0; }
    done
    d="$from/out-peer-$1"
    mkdir -p "$from"
    "${RECKNN:-./recknn}" "$2" -k 20 --top-n "${TOPN_N:-10}" --out "$d" --no-progress >"$from/peer-$1-recknn.log" 2>&1 &&
        [ -f "$d/neighbors.csv" ] && { echo "$d"; return 0; }
    echo "run_peers: no recknn lists for $1 (see $from/peer-$1-recknn.log)" >&2
    return 1
}

for set in ${SETS:-ml20m netflix}; do
    f=$data/$set.csv
    [ -f "$f" ] || { echo "run_peers: no $f, skipped" >&2; continue; }
    for peer in ${PEERS:-torch cupy scipy}; do
        script="$here/peer_$peer.py"
        extra=
        [ "$peer" = scipy ] && extra="--max-items ${SCIPY_ITEMS:-2000}"
        [ "$peer" = cupy ] && [ -n "${CUPY_ITEMS:-}" ] && extra="--max-items $CUPY_ITEMS"
        if [ "$peer" = topn ]; then
            script="$here/peer_topn_torch.py"
            d=$(topn_dir "$set" "$f") || continue
            extra="$d/neighbors.csv -n ${TOPN_N:-10} --L ${TOPN_ROUTES:-dense,sparse}"
            [ -f "$d/recommendations.csv" ] && extra="$extra --compare $d/recommendations.csv"
        fi
        tmp=$(mktemp)
        timeout "${PEER_TIMEOUT:-900}" "$py" "$script" "$f" $extra >"$tmp"
        rc=$?
        if [ -s "$tmp" ]; then
            cat "$tmp" >>"$out"; cat "$tmp"
        else
            row="{\"peer\": \"$peer\", \"file\": \"$set.csv\", \"status\": \"crashed\", \"rc\": $rc}"
            echo "$row" >>"$out"; echo "$row"
        fi
        rm -f "$tmp"
    done
done
