#!/bin/sh
# bench/tune_bench.sh RECKNN DATA OUT DEVICE [EXTRA...] : --tune on DATA (the full grid unless
# EXTRA says otherwise) and the default nightly job (ranking model on), on DEVICE (cpu or gpu),
# with a 2% per-user holdout.  Prints one line per run: seconds of the whole job, of the search
# (split, lists, top-N), configurations, bases, the chosen configuration and NDCG@10 of the test.
set -u
RECKNN=$1; DATA=$2; OUT=$3; DEV=$4; shift 4
mkdir -p "$OUT"
for run in nightly tune; do
    extra=
    [ "$run" = tune ] && extra=--tune
    o="$OUT/$run.$DEV"
    # shellcheck disable=SC2086
    /usr/bin/time -f "%e s %M KB" "$RECKNN" "$DATA" --holdout 0.02 --split user --seed 1 --no-neighbors \
        --device "$DEV" --out "$o" --quiet $extra "$@" 2>"$o.err" || { echo "$run $DEV: failed: $(tail -2 "$o.err")"; continue; }
    /usr/bin/python3 - "$o/metrics.json" "$run" "$DEV" "$(tail -1 "$o.err")" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); t = d.get('tune') or {}; r = d['topn']['rank']
print("%-7s %-3s total %.2f s (%s) | rank lists %.3f s [%s] | tune %s s: split %s lists %s topn %s, %s configs, %s bases | chose %s | NDCG@10 %.4f" % (
    sys.argv[2], sys.argv[3], d['timings_s']['total'], sys.argv[4], r.get('lists_s', 0), r.get('path', ''),
    round(t.get('wall_s', 0), 2), round(t.get('split_s', 0), 2), round(t.get('lists_s', 0), 2),
    round(t.get('topn_s', 0), 2), t.get('configs', 0), t.get('bases', 0),
    json.dumps(t.get('best_config', {})), d['summary']['ndcg']['mean']))
PY
done
