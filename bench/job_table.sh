#!/bin/sh
# job_table.sh RECKNN DATADIR LOGDIR [CASE...] -- issue 21's table: the default nightly
# job (--device gpu -k 20, top-10 for every user, every file written) on the benchmark
# sets of bench/gen.sh (generated when missing), REPEAT times each (default 3), one row
# per run from bench/job_stages.sh.  Cases (default: all but the netflix ones with -sorted
# when NETFLIX=0):
#   SET          the job on SET (ml20m-random, ml20m, netflix-random, netflix)
#   SET-hold     the same with --holdout 0.02
#   SET-cpu      the same on the CPU engine (--device cpu)
# EXTRA adds options to every run.  One warm-up run (not shown) comes first, so that the
# first row does not pay for loading the CUDA libraries from disk.
set -u
recknn=${1:?usage: job_table.sh RECKNN DATADIR LOGDIR [CASE...]}
data=${2:?}
log=${3:?}
shift 3
[ $# -ge 1 ] || set -- ml20m-random ml20m ml20m-random-hold ml20m-random-cpu netflix-random netflix \
    netflix-random-hold
here=$(dirname "$0")
repeat=${REPEAT:-3}
mkdir -p "$log"
export RECKNN_SYNTH="${RECKNN_SYNTH:-./recknn-synth}"
warm=
for c in "$@"; do
    set_=$c opts="--device gpu"
    case $c in
    *-hold) set_=${c%-hold}; opts="--device gpu --holdout 0.02" ;;
    *-cpu) set_=${c%-cpu}; opts="--device cpu" ;;
    esac
    if [ ! -f "$data/$set_.csv" ]; then
        t0=$(date +%s.%N)
        sh "$here/gen.sh" "$data" "$set_" >>"$log/gen.log" 2>&1 || { echo "$c: generating $set_ failed"; continue; }
        echo "generated $set_ in $(awk "BEGIN{print $(date +%s.%N) - $t0}") s" >>"$log/gen.log"
    fi
    if [ -z "$warm" ]; then
        "$recknn" "$data/$set_.csv" --device gpu -k 20 --out "$log/warm" -q >/dev/null 2>&1
        warm=1
    fi
    # shellcheck disable=SC2086
    LABEL=$c sh "$here/job_stages.sh" "$recknn" "$data/$set_.csv" "$log" "$repeat" -k 20 $opts ${EXTRA:-} \
        >"$log/$c.txt"
    if [ -z "${header:-}" ]; then head -1 "$log/$c.txt"; header=1; fi
    tail -n +2 "$log/$c.txt"
done
