#!/bin/sh
# run_peers.sh DATADIR [OUT] -- run the peers on DATADIR/ml20m.csv and DATADIR/netflix.csv
# (made by bench/gen.sh) and append one JSON row per run to OUT (default bench/out/peers.jsonl).
# Environment: SETS (default "ml20m netflix"), PEERS (default "torch cupy scipy"), PYTHON
# (default python3), SCIPY_ITEMS (target items for the SciPy peer, which extrapolates; default
# 2000), CUPY_ITEMS (the same for the CuPy peer; default: all items), PEER_TIMEOUT (seconds per run, default 900), PEER_CACHE=1 (keep parsed columns in
# .npz files beside the data; default on here). A peer that dies without a row gets a
# "status": "crashed" row. Nothing here runs under make check.
set -u
[ $# -ge 1 ] || { echo "usage: $0 DATADIR [OUT]" >&2; exit 2; }
data=$1
out=${2:-bench/out/peers.jsonl}
here=$(dirname "$0")
py=${PYTHON:-python3}
export PEER_CACHE=${PEER_CACHE:-1}
mkdir -p "$(dirname "$out")"
for set in ${SETS:-ml20m netflix}; do
    f=$data/$set.csv
    [ -f "$f" ] || { echo "run_peers: no $f, skipped" >&2; continue; }
    for peer in ${PEERS:-torch cupy scipy}; do
        extra=
        [ "$peer" = scipy ] && extra="--max-items ${SCIPY_ITEMS:-2000}"
        [ "$peer" = cupy ] && [ -n "${CUPY_ITEMS:-}" ] && extra="--max-items $CUPY_ITEMS"
        tmp=$(mktemp)
        timeout "${PEER_TIMEOUT:-900}" "$py" "$here/peer_$peer.py" "$f" $extra >"$tmp"
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
