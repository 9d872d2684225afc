# tests/setup.sh — sourced by every shell driver: strict mode, C locale, a
# scratch directory removed on exit, and helpers to run the built programs.
set -eu
LC_ALL=C
export LC_ALL
: "${top_srcdir:=.}"
: "${top_builddir:=.}"
RECKNN="$top_builddir/recknn"
SYNTH="$top_builddir/recknn-synth"
TESTDATA="$top_srcdir/tests/data"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/recknn-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# RK_VALGRIND=1: every "$RECKNN" runs under valgrind's memcheck.  RECKNN is then
# a wrapper script; an error (invalid access, uninitialised value, a definite
# leak) makes it exit 99, a status recknn itself never uses, so that
# expect_status and set -e tell it from recknn's own.  The reports are kept in
# $tmp/valgrind.log and shown when the test exits.
RK_VALGRIND_STATUS=99
if [ "${RK_VALGRIND:-0}" = 1 ] && [ -x "$RECKNN" ]; then
    command -v valgrind >/dev/null 2>&1 || fail "RK_VALGRIND=1 but valgrind is not installed"
    RK_VG_REAL=$RECKNN RK_VG_LOG="$tmp/valgrind.log" RK_VG_TMP=$tmp
    export RK_VG_REAL RK_VG_LOG RK_VG_TMP RK_VALGRIND_STATUS
    cat > "$tmp/recknn-valgrind" <<'WRAP'
#!/bin/sh
log=$(mktemp "$RK_VG_TMP/vg.XXXXXX")
valgrind --quiet --tool=memcheck --error-exitcode="$RK_VALGRIND_STATUS" --leak-check=full \
    --show-leak-kinds=definite --errors-for-leak-kinds=definite --track-origins=yes \
    --log-file="$log" "$RK_VG_REAL" "$@"
st=$?
[ -s "$log" ] && { echo "== valgrind (status $st): recknn $*"; cat "$log"; } >> "$RK_VG_LOG"
rm -f "$log"
exit $st
WRAP
    chmod +x "$tmp/recknn-valgrind"
    RECKNN="$tmp/recknn-valgrind"
    trap '[ -s "$tmp/valgrind.log" ] && cat "$tmp/valgrind.log" >&2; rm -rf "$tmp"' EXIT
fi

# expect_status WANT CMD...: run CMD, capture stderr in $tmp/stderr, check the exit status.
expect_status() {
    want=$1; shift
    set +e
    "$@" >"$tmp/stdout" 2>"$tmp/stderr"
    got=$?
    set -e
    if [ "${RK_VALGRIND:-0}" = 1 ] && [ "$got" -eq "$RK_VALGRIND_STATUS" ]; then
        cat "$tmp/stderr" >&2
        fail "valgrind found errors (its report follows): $*"
    fi
    [ "$got" -eq "$want" ] || { cat "$tmp/stderr" >&2; fail "exit status $got, wanted $want: $*"; }
}

# gpu_usable DATA: 0 when recknn runs DATA on a GPU; 1 when no GPU is usable
# (exit 5; the reason is in $tmp/probe.err); any other status fails the test.
gpu_usable() {
    set +e
    "$RECKNN" "$1" --device gpu --top-n 0 --no-neighbors --out "$tmp/probe" --quiet 2>"$tmp/probe.err"
    probe_st=$?
    set -e
    [ "$probe_st" -eq 5 ] && return 1
    [ "$probe_st" -eq 0 ] || fail "the GPU probe run failed with $probe_st: $(cat "$tmp/probe.err")"
    return 0
}
