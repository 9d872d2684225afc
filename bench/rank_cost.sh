#!/bin/sh
# bench/rank_cost.sh RECKNN DATA OUT DEVICE [RUNS] : what the ranking model costs the nightly
# job: `recknn DATA --device DEVICE -k 20` (top-10 for every user, every file written) with the
# default ranking model and with --rank lists, alternating, RUNS times (default 3).  One line a
# run: whole job, engine (lists + predictions), ranking lists, top-N, write (seconds).
set -u
RECKNN=$1; DATA=$2; OUT=$3; DEV=$4; RUNS=${5:-3}
mkdir -p "$OUT"
for r in $(seq 1 "$RUNS"); do
    for cfg in default lists; do
        extra=; [ "$cfg" = lists ] && extra="--rank lists"
        o="$OUT/$cfg.$r"
        # shellcheck disable=SC2086
        "$RECKNN" "$DATA" --device "$DEV" -k 20 --out "$o" --quiet $extra 2>"$o.err" || { echo "$cfg: failed"; continue; }
        /usr/bin/python3 - "$o/metrics.json" "$cfg" "$r" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); t = d['timings_s']; tn = d['topn']; rk = tn['rank']
print("%-8s run %s  total %.3f  engine %.3f  rank lists %.3f  top-N %.3f (%s)  write %.3f  [%s]" % (
    sys.argv[2], sys.argv[3], t['total'], d['engine']['wall_s'], rk.get('wall_s', 0.0), tn['wall_s'], tn['path'],
    t['write'], d['device']))
PY
    done
done
