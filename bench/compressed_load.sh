#!/bin/sh
# bench/compressed_load.sh RECKNN FILE OUT [RUNS] : how fast recknn reads FILE
# plain and compressed: gzip -6 (one stream), BGZF (bgzip's blocks, gzip
# level 6, bench/zframes.c), one zstd frame (level 3) and zstd frames of
# 8 MB (level 3, what pzstd writes), with every core.  One line per run: the
# form, the file's bytes, the load stage's seconds (metrics.json
# timings_s.load: read, decode, parse, ids, matrices) and the whole job's,
# the load's speed against the plain file's best, and whether the outputs
# equal the plain file's.  The job is a light one (-k 5, no top-N) so that
# the load dominates.  Last, the floors of the one-stream forms: one core
# decoding them to /dev/null (zcat, zstd -dc) with no parse at all.
set -u
RECKNN=$1; FILE=$2; OUT=$3; RUNS=${4:-3}
mkdir -p "$OUT"
cc -O2 -fopenmp ${CPPFLAGS:-} "$(dirname "$0")/zframes.c" ${LDFLAGS:-} -lzstd -lz -o "$OUT/zframes" || exit 1
gzip -6 -c "$FILE" > "$OUT/f.gz"
"$OUT/zframes" "$FILE" "$OUT/f.bgzf.gz" 0 bgzf
"$OUT/zframes" "$FILE" "$OUT/f.zst" 0 3
"$OUT/zframes" "$FILE" "$OUT/f.8m.zst" 8 3
best=""
for form in plain gz bgzf.gz zst 8m.zst; do
    case $form in plain) in=$FILE ;; *) in="$OUT/f.$form" ;; esac
    for r in $(seq 1 "$RUNS"); do
        o="$OUT/run-$form-$r"
        "$RECKNN" "$in" -k 5 --top-n 0 --device cpu --out "$o" --quiet || { echo "$form: exit $?"; continue; }
        same=yes
        [ "$form" = plain ] || cmp -s "$o/neighbors.csv" "$OUT/run-plain-1/neighbors.csv" || same=NO
        line=$(/usr/bin/python3 - "$o/metrics.json" "$form" "$(wc -c < "$in")" "$same" "$best" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))['timings_s']
best = float(sys.argv[5]) if sys.argv[5] else t['load']
print("%-8s %11s bytes  load %.3f s  total %.3f s  speed %3.0f%% of plain  same as plain: %s  %.6f"
      % (sys.argv[2], sys.argv[3], t['load'], t['total'], 100 * best / t['load'], sys.argv[4], t['load']))
PY
)
        echo "${line% *}"
        if [ "$form" = plain ]; then
            l=${line##* }
            best=$(/usr/bin/python3 -c "import sys; a=[float(x) for x in sys.argv[1:] if x]; print(min(a))" "$l" "$best")
        fi
    done
done
for r in 1 2; do
    s=$(date +%s.%N); gzip -dc "$OUT/f.gz" > /dev/null; e=$(date +%s.%N)
    s2=$(date +%s.%N); command -v zstd >/dev/null && zstd -qdc "$OUT/f.zst" > /dev/null; e2=$(date +%s.%N)
    /usr/bin/python3 -c "import sys; print('floor, one core: gzip -dc %.3f s, zstd -dc %.3f s' % (float(sys.argv[2])-float(sys.argv[1]), float(sys.argv[4])-float(sys.argv[3])))" "$s" "$e" "$s2" "$e2"
done
