#!/bin/sh
# bench/rank_device.sh RECKNN OUT FILE... : the default nightly job (ranking
# model on) and two other ranking models on each FILE, --device cpu and
# --device gpu, with a 20% per-user holdout; the written files must be the
# same bytes.  Prints one line per run: file, ranking model, device, the
# ranking lists' seconds and path, NDCG@10; "DIFFER" when the files differ.
set -u
RECKNN=$1; OUT=$2; shift 2
mkdir -p "$OUT"
status=0
for f in "$@"; do
    b=$(basename "$f")
    for cfg in "" "--rank weighted-cosine --weighting bm25 --rank-values ratings --alpha 0.7 --rank-shrink 5" \
               "--rank rp3beta --alpha 1 --beta 0.6 --locality 2 --normalize no"; do
        tag=$(printf '%s' "$cfg" | tr -c 'a-z0-9' '_' | cut -c1-40)
        for dev in cpu gpu; do
            o="$OUT/$b.$tag.$dev"
            # shellcheck disable=SC2086
            "$RECKNN" "$f" --holdout 0.2 --split user --seed 1 $cfg --device $dev --out "$o" --quiet 2>"$o.err" ||
                { echo "$b [$cfg] $dev: exit $? $(tail -1 "$o.err")"; status=1; continue; }
            /usr/bin/python3 - "$o/metrics.json" "$b" "$dev" "[$cfg]" <<'PY' || true
import json, sys
d = json.load(open(sys.argv[1])); r = d['topn']['rank']
print("%-10s %-4s %-70s lists %.4fs %-28s ndcg %.4f" % (sys.argv[2], sys.argv[3], sys.argv[4], r.get('lists_s', 0),
      r.get('path', ''), d['summary']['ndcg']['mean']))
PY
        done
        for file in recommendations.csv neighbors.csv predictions.csv; do
            cmp -s "$OUT/$b.$tag.cpu/$file" "$OUT/$b.$tag.gpu/$file" || { echo "DIFFER: $b [$cfg] $file"; status=1; }
        done
    done
done
exit $status
