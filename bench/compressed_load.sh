#!/bin/sh
# bench/compressed_load.sh RECKNN FILE OUT [RUNS] : how fast recknn reads FILE
# plain, gzip'ed (gzip -6), as one zstd frame and as zstd frames of 8 MB
# (bench/zframes.c, level 3), with every core.  One line per run: the form,
# the file's bytes, the load stage's seconds (metrics.json timings_s.load:
# read, decode, parse, ids, matrices) and the whole job's, and whether the
# outputs equal the plain file's.  The job is a light one (-k 5, no top-N)
# so that the load dominates; the speed target is the plain file's load.
set -u
RECKNN=$1; FILE=$2; OUT=$3; RUNS=${4:-3}
mkdir -p "$OUT"
cc -O2 -fopenmp ${CPPFLAGS:-} "$(dirname "$0")/zframes.c" ${LDFLAGS:-} -lzstd -o "$OUT/zframes" || exit 1
gzip -6 -c "$FILE" > "$OUT/f.gz"
"$OUT/zframes" "$FILE" "$OUT/f.zst" 0 3
"$OUT/zframes" "$FILE" "$OUT/f.8m.zst" 8 3
for form in plain gz zst 8m.zst; do
    case $form in plain) in=$FILE ;; *) in="$OUT/f.$form" ;; esac
    for r in $(seq 1 "$RUNS"); do
        o="$OUT/run-$form-$r"
        "$RECKNN" "$in" -k 5 --top-n 0 --device cpu --out "$o" --quiet || { echo "$form: exit $?"; continue; }
        same=yes
        [ "$form" = plain ] || cmp -s "$o/neighbors.csv" "$OUT/run-plain-1/neighbors.csv" || same=NO
        /usr/bin/python3 - "$o/metrics.json" "$form" "$(wc -c < "$in")" "$same" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))['timings_s']
print("%-7s %11s bytes  load %.3f s  total %.3f s  same as plain: %s" % (sys.argv[2], sys.argv[3], t['load'], t['total'], sys.argv[4]))
PY
    done
done
