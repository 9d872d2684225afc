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

# expect_status WANT CMD...: run CMD, capture stderr in $tmp/stderr, check the exit status.
expect_status() {
    want=$1; shift
    set +e
    "$@" >"$tmp/stdout" 2>"$tmp/stderr"
    got=$?
    set -e
    [ "$got" -eq "$want" ] || { cat "$tmp/stderr" >&2; fail "exit status $got, wanted $want: $*"; }
}
