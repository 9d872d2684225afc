#!/bin/sh
# fuzz/run.sh [SECONDS] — run every libFuzzer target for SECONDS (default 60)
# over a copy of its seed corpus, after replaying its regression inputs.
#
# Builds nothing: run it from a build tree configured with
#   CC=clang ./configure --enable-fuzz && make
# (the targets are looked for in ./fuzz/, or in $FUZZ_BUILDDIR/fuzz/).
# SECONDS = 0 only replays the seed corpus and fuzz/regress/ (make check does).
# Exits non-zero when a target crashes, leaks, times out (10 s an input) or
# runs out of memory (2 GiB); the input that did it is kept under
# $FUZZ_OUT (default ./fuzz-out/), named <target>-crash-..., and should become
# a regression input: fuzz/regress/<target>/<name> (then fix the bug).
set -eu
secs=${1:-60}
case $secs in ''|*[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2 ;; esac
src=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILDDIR:-.}
out=${FUZZ_OUT:-fuzz-out}
targets="load mfile"
# the loader reads with OpenMP: keep the fuzzer on one thread (its inputs set
# the loader's own thread count) and stop at the first sanitizer report
export OMP_NUM_THREADS=1
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

work=$(mktemp -d "${TMPDIR:-/tmp}/recknn-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

status=0
for t in $targets; do
    bin="$build/fuzz/fuzz_$t"
    [ -x "$bin" ] || { echo "$0: $bin is not built (configure with CC=clang --enable-fuzz, then make)" >&2; exit 2; }
    # every kept crash and every seed must run clean
    set --
    for f in "$src/fuzz/regress/$t"/* "$src/fuzz/corpus/$t"/*; do
        [ -f "$f" ] && set -- "$@" "$f"
    done
    if [ $# -gt 0 ]; then
        if "$bin" -timeout=10 -rss_limit_mb=2048 "$@" >"$work/replay-$t.log" 2>&1; then
            echo "fuzz_$t: replayed $# inputs (corpus and regress)"
        else
            cat "$work/replay-$t.log" >&2
            echo "FAIL: fuzz_$t fails on a regression or seed input (log above)" >&2
            status=1
            continue
        fi
    fi
    [ "$secs" -gt 0 ] || continue
    mkdir -p "$work/corpus-$t" "$out"
    cp "$src/fuzz/corpus/$t"/* "$work/corpus-$t/" 2>/dev/null || true
    echo "fuzz_$t: fuzzing for ${secs}s"
    if "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
            -artifact_prefix="$out/fuzz_$t-" "$work/corpus-$t" >"$out/fuzz_$t.log" 2>&1; then
        grep -E '^(stat::number_of_executed_units|stat::new_units_added|#[0-9]+ *DONE)' "$out/fuzz_$t.log" || true
    else
        tail -n 60 "$out/fuzz_$t.log" >&2
        echo "FAIL: fuzz_$t found a problem; the input is kept: $(ls "$out"/fuzz_"$t"-* 2>/dev/null | tr '\n' ' ')" >&2
        status=1
    fi
done
exit $status
