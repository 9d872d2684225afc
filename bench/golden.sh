#!/bin/sh
# golden.sh: the checksums of every output of a fixed set of runs, to show that
# a change which should not change behaviour did not.
#
#   sh bench/golden.sh RECKNN SRCDIR OUTFILE [cpu|gpu]
#
# RECKNN is the binary, SRCDIR the source tree whose sample_data/ and
# tests/data/ are read.  Every configuration runs in its own folder; each
# output file is reduced to a checksum after masking what varies between two
# identical runs:
#   metrics.json   parsed and written back with sorted keys, without the
#                  wall-clock members (names ending in _s, the balance of
#                  seconds, rates per second), "threads", "inputs" and "out";
#                  seconds inside texts ("0.0123 s" in engine.detail) as "N s"
#   report.html    without the "Time per stage" section and the command line
#   stderr         the exit status, and stderr with numbers followed by " s"
#                  masked (the summary line's seconds)
# and SRCDIR's path is written as SRC, the scratch folder's as W, wherever
# they appear (set TMPDIR to run two at once).
# Run it on the commit before a change and after, and diff the two OUTFILEs:
#   sh bench/golden.sh /tmp/before/recknn /tmp/before before.txt
#   sh bench/golden.sh ./recknn . after.txt && diff before.txt after.txt
# With "gpu", every configuration also runs with --device gpu (on a machine
# with a GPU) and its checksums are recorded under a "gpu:" prefix.
set -eu
[ $# -ge 3 ] || { echo "usage: golden.sh RECKNN SRCDIR OUTFILE [cpu|gpu]" >&2; exit 2; }
RK=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
OUTFILE=$3
DEV=${4:-cpu}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
# a fixed scratch folder: its name appears in metrics.json and stderr
W=${TMPDIR:-/tmp}/recknn-golden
rm -rf "$W" && mkdir -p "$W"
trap 'rm -rf "$W"' EXIT
export GOLDEN_SRC="$SRC" GOLDEN_W="$W"
R=$SRC/sample_data/ratings.csv
T=$SRC/sample_data/test.csv
F=$SRC/tests/data/fmt
B=$SRC/tests/data/bad
: > "$OUTFILE"

# inputs made here: a --users file (50 users, one repeated, one unknown), an
# --items file, and --queries pairs from the test file
awk -F, 'NR>1 && !s[$1]++ && n++ < 50 {print $1}' "$R" > "$W/users.txt"
head -3 "$W/users.txt" >> "$W/users.txt"
echo nobody >> "$W/users.txt"
awk -F, 'NR>1 && !s[$2]++ && n++ < 40 {print $2}' "$R" > "$W/items.txt"
awk -F, 'NR>1 && NR < 400 {print $1 "," $2}' "$T" > "$W/queries.csv"
printf 'userId,movieId,rating,timestamp\n1,2,4.0,5\n1,3,x,6\n' > "$W/bad.csv"

mask() { # FILE: what is stable of one output file
    case "$1" in
    *.json) "$PY" - "$1" <<'EOF'
import json, os, re, sys
def clean(v):
    if isinstance(v, dict):
        return {k: clean(x) for k, x in v.items()
                if not (k.endswith('_s') or k in ('balance', 'threads', 'inputs', 'out')
                        or k.endswith('_per_s') or k == 'load_mb_per_s')}
    if isinstance(v, list):
        return [clean(x) for x in v]
    if isinstance(v, str):
        v = v.replace(os.environ['GOLDEN_W'], 'W').replace(os.environ['GOLDEN_SRC'], 'SRC')
        return re.sub(r'[0-9][0-9.e+-]* s\b', 'N s', v)  # seconds inside texts (engine.detail)
    return v
print(json.dumps(clean(json.load(open(sys.argv[1]))), sort_keys=True))
EOF
    ;;
    *.html) sed -e '/<h2 id="time">/,/<h2/d' -e 's/<p>Command: .*//' "$1" ;;
    *) cat "$1" ;;
    esac
}

# run NAME ARGS...: one configuration; its outputs' checksums into OUTFILE
run() {
    name=$1; shift
    for dev in cpu $( [ "$DEV" = gpu ] && echo gpu ); do
        d=$W/$dev-$name
        mkdir -p "$d"
        rc=0
        (cd "$d" && "$RK" "$@" --device "$dev" --threads 2 --out out --no-progress \
            > stdout.txt 2> stderr.txt) || rc=$?
        sed -e 's/[0-9.][0-9.]* s\b/N s/g' -e "s#$W/[a-z]*-$name/##g" -e "s#$W/#W/#g" -e "s#$SRC/##g" \
            "$d/stderr.txt" | grep -v '^recknn: note: no usable GPU' > "$d/stderr.masked" || true
        echo "$dev:$name exit $rc stderr $(sha256sum < "$d/stderr.masked" | cut -c1-16)" >> "$OUTFILE"
        if [ -d "$d/out" ]; then
            for f in $(cd "$d/out" && ls | sort); do
                echo "$dev:$name $f $(mask "$d/out/$f" | sha256sum | cut -c1-16)" >> "$OUTFILE"
            done
        fi
        for f in $(cd "$d" && ls | grep -v -e '^out$' -e '^std' | sort); do
            echo "$dev:$name $f $(mask "$d/$f" | sha256sum | cut -c1-16)" >> "$OUTFILE"
        done
    done
}

for m in pearson pearson-baseline cosine msd euclidean cosine-full euclidean-full jaccard; do
    for p in basic means baseline; do
        run "$m-$p" "$R" --test "$T" --metric "$m" --predict "$p"
    done
    run "$m-user" "$R" --test "$T" --metric "$m" --by user -k 10
done
run shrink "$R" --holdout 0.1 --seed 4 --metric pearson-baseline --predict baseline \
    --shrinkage 50 --min-support 2 -k 5 --min-k 2
run users "$R" --top-n 7 --users "$W/users.txt"
run byuser-users "$R" --by user --users "$W/users.txt" --top-n 5
run folds "$R" --folds 3 --write-folds --seed 7 --baseline popular
run split-user "$R" --holdout 0.2 --split user --seed 3 --baseline popular --metric cosine-full -k 40
run split-temporal "$R" --holdout 0.2 --split temporal --relevance 3.5
run implicit "$R" --holdout 0.2 --implicit --metric cosine-full --seed 2
run items "$R" --items "$W/items.txt" --metric cosine
run approx "$R" --approx rbc --metric cosine-full --approx-check 20 --seed 5
run report "$R" --test "$T" --report --baseline popular
run noneighbors "$R" --test "$T" --no-neighbors --top-n 0 -k 30
run save "$R" --test "$T" --save-model model.rkm
run model "$R" --model "$W/cpu-save/model.rkm" --queries "$W/queries.csv"
run fmt-dat "$F/ratings.dat"
run fmt-tsv "$F/u.tsv" --metric msd
run fmt-netflix "$F/netflix.txt"
run fmt-quoted "$F/quoted.csv" --format csv --header
run bad-line "$W/bad.csv"
run bad-skip "$W/bad.csv" --skip-bad-lines
run bad-corpus-nan "$B/nan.csv"
run missing "$W/no-such-file.csv"
run bad-option "$R" --metric nosuch
run bad-k "$R" -k 0
# GOLDEN_KEEP=DIR: keep every run's folder there, to see what differs
[ -z "${GOLDEN_KEEP:-}" ] || { mkdir -p "$GOLDEN_KEEP" && cp -r "$W"/. "$GOLDEN_KEEP"/; }
echo "golden: $(wc -l < "$OUTFILE") checksums in $OUTFILE" >&2
