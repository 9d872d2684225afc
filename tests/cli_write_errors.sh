#!/bin/sh
# cli_write_errors.sh — a write that fails (here: a file size limit, as a full
# disk would) is exit 4 with a message that names the file, leaves no
# temporary file and no directory the run made, and leaves earlier complete
# results alone.  `ulimit -f 1` (512 or 1024 bytes, by shell) with SIGXFSZ
# ignored makes every write past the limit fail with EFBIG; no root needed.
. "$top_srcdir/tests/setup.sh"
CLI="$TESTDATA/cli"

[ -x "$RECKNN" ] || fail "$RECKNN is not built"
[ -x "$SYNTH" ] || fail "$SYNTH is not built"

# outputs of several kilobytes
"$SYNTH" --users 300 --items 200 --ratings 6000 --seed 5 --output "$tmp/w.csv" --quiet
W="$tmp/w.csv"

# earlier complete results, each file under 512 bytes except metrics.json
O="$tmp/out"
expect_status 0 "$RECKNN" "$CLI/good.csv" --test "$CLI/good_test.csv" --device cpu --out "$O" --quiet
mkdir "$tmp/before"
cp -p "$O"/* "$tmp/before/"
unchanged() {
    for f in "$tmp/before"/*; do
        cmp -s "$f" "$O/${f##*/}" || fail "$1: ${f##*/} changed"
    done
    [ "$(ls -A "$O" | wc -l)" -eq "$(ls -A "$tmp/before" | wc -l)" ] ||
        fail "$1: files added to $O: $(ls -A "$O" | tr '\n' ' ')"
}

# limited ARGS...: run recknn under the size limit; status in $got, stderr in $tmp/stderr
limited() {
    set +e
    (ulimit -f 1 && trap '' XFSZ && exec "$RECKNN" "$@") >"$tmp/stdout" 2>"$tmp/stderr"
    got=$?
    set -e
}
# expect_io WHAT PATH: exit 4 and "recknn: error: ..." naming PATH
expect_io() {
    [ "$got" -eq 4 ] || { cat "$tmp/stderr" >&2; fail "$1: exit status $got, wanted 4"; }
    grep -q "^recknn: error: .*$2" "$tmp/stderr" || fail "$1: the message does not name $2: $(cat "$tmp/stderr")"
}

# ---- the CSV writers: the first file over the limit is named ------------------------------
limited "$W" --device cpu --out "$O" --holdout 0.1
expect_io "csv" "cannot write $O/[a-z]*\.csv: "
grep -q '\.tmp\.' "$tmp/stderr" && fail "csv: the message names the temporary file: $(cat "$tmp/stderr")"
unchanged "csv"

# ---- metrics.json (written with stdio, checked at the commit) -------------------------------
limited "$CLI/good.csv" --device cpu --out "$O" --top-n 0 --no-neighbors
expect_io "metrics.json" "cannot write $O/metrics.json: "
unchanged "metrics.json"

# ---- report.html ----------------------------------------------------------------------------------
limited "$CLI/good.csv" --test "$CLI/good_test.csv" --device cpu --out "$O" --report
[ "$got" -eq 4 ] || { cat "$tmp/stderr" >&2; fail "report: exit status $got, wanted 4"; }
unchanged "report"

# ---- a new --out folder: nothing stays ------------------------------------------------------------
limited "$W" --device cpu --out "$tmp/new/deeper"
expect_io "new folder" "$tmp/new/deeper/"
[ ! -e "$tmp/new" ] || fail "new folder: $(ls -AR "$tmp/new" | tr '\n' ' ')"

# ---- --save-model: the model file is named, no temporary model stays ------------------------------
M="$tmp/models"
mkdir "$M"
limited "$W" --device cpu --out "$O" --save-model "$M/m.rkm"
expect_io "model" "$M/m.rkm"
[ -z "$(ls -A "$M")" ] || fail "model: left $(ls -A "$M" | tr '\n' ' ')"
unchanged "model"

# ---- the same runs without the limit succeed (the failures were the limit's) ---------------------
expect_status 0 "$RECKNN" "$W" --device cpu --out "$tmp/free" --save-model "$M/m.rkm" --report --quiet
[ -s "$M/m.rkm" ] && [ -s "$tmp/free/metrics.json" ] || fail "an unlimited run wrote nothing"
exit 0
