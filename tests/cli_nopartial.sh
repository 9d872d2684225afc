#!/bin/sh
# cli_nopartial.sh — a failed run leaves no output file behind: no final file,
# no temporary file, and earlier complete results untouched.
. "$top_srcdir/tests/setup.sh"
CLI="$TESTDATA/cli"
G="$CLI/good.csv"
T="$CLI/good_test.csv"

[ -x "$RECKNN" ] || fail "$RECKNN is not built"

# empty_or_absent DIR: DIR does not exist or holds nothing
empty_or_absent() {
    [ ! -e "$1" ] && return 0
    [ -d "$1" ] || fail "$1 is not a directory"
    [ -z "$(ls -A "$1")" ] || fail "$1 holds files after a failed run: $(ls -A "$1" | tr '\n' ' ')"
}
# no_temps DIR: no temporary file of ours in DIR
no_temps() {
    ls -A "$1" | grep -q '\.tmp\.' && fail "temporary files left in $1: $(ls -A "$1" | tr '\n' ' ')"
    return 0
}

# ---- bad input: nothing written ------------------------------------------------------------
expect_status 3 "$RECKNN" "$CLI/bad_rating.csv" --test "$T" --out "$tmp/o1"
empty_or_absent "$tmp/o1"
expect_status 3 "$RECKNN" "$G" --test "$CLI/nan_rating.csv" --out "$tmp/o1"
empty_or_absent "$tmp/o1"
expect_status 4 "$RECKNN" "$tmp/missing.csv" --out "$tmp/o1/deeper/still"
empty_or_absent "$tmp/o1"

# ---- earlier results survive a failed run into the same directory ---------------------------
expect_status 0 "$RECKNN" "$G" --test "$T" --out "$tmp/o2" --quiet
cp -p "$tmp/o2/neighbors.csv" "$tmp/o2/predictions.csv" "$tmp/o2/recommendations.csv" "$tmp/o2/metrics.json" "$tmp/"
expect_status 3 "$RECKNN" "$CLI/bad_fields.csv" --test "$T" --out "$tmp/o2" -k 3
for f in neighbors.csv predictions.csv recommendations.csv metrics.json; do
    cmp -s "$tmp/$f" "$tmp/o2/$f" || fail "a failed run changed $f"
done
[ "$(ls -A "$tmp/o2" | wc -l)" -eq 4 ] || fail "a failed run added files: $(ls -A "$tmp/o2" | tr '\n' ' ')"
# a --users file with a bad line fails after the data loaded: still nothing changes
printf '1\n%0300d\n' 7 > "$tmp/users_bad"
expect_status 3 "$RECKNN" "$G" --test "$T" --out "$tmp/o2" --users "$tmp/users_bad"
for f in neighbors.csv predictions.csv recommendations.csv metrics.json; do
    cmp -s "$tmp/$f" "$tmp/o2/$f" || fail "a failed --users run changed $f"
done
no_temps "$tmp/o2"
no_temps "$tmp/o2"

# ---- an unwritable --out: exit 4, nothing created ---------------------------------------------
printf 'not a directory\n' > "$tmp/plain"
expect_status 4 "$RECKNN" "$G" --test "$T" --out "$tmp/plain/sub"
grep -q "^recknn: error: .*plain" "$tmp/stderr" || fail "unwritable --out: $(cat "$tmp/stderr")"
[ "$(cat "$tmp/plain")" = "not a directory" ] || fail "the regular file was changed"
expect_status 4 "$RECKNN" "$G" --test "$T" --out "$tmp/plain"
[ "$(cat "$tmp/plain")" = "not a directory" ] || fail "the regular file was changed"
no_temps "$tmp"

# ---- a file that cannot be put in place: all files or none ------------------------------------
# predictions.csv is a non-empty directory, so renaming onto it fails after the
# other files are complete: none of them may stay.
mkdir -p "$tmp/o3/predictions.csv/keep"
expect_status 4 "$RECKNN" "$G" --test "$T" --out "$tmp/o3"
grep -q "^recknn: error: .*predictions.csv" "$tmp/stderr" || fail "rename failure: $(cat "$tmp/stderr")"
[ "$(ls -A "$tmp/o3")" = "predictions.csv" ] || fail "files left after a failed commit: $(ls -A "$tmp/o3" | tr '\n' ' ')"
[ -d "$tmp/o3/predictions.csv/keep" ] || fail "the existing directory was touched"

# ---- a directory without write permission (not meaningful as root) ---------------------------
if [ "$(id -u)" -ne 0 ]; then
    mkdir "$tmp/ro"
    chmod a-w "$tmp/ro"
    expect_status 4 "$RECKNN" "$G" --test "$T" --out "$tmp/ro"
    chmod u+w "$tmp/ro"
    empty_or_absent "$tmp/ro"
fi

# ---- one complete set a folder ------------------------------------------------------------------
# snapshot DIR: every file with its checksum, dot files included
snapshot() { (cd "$1" && ls -A | sort | while read -r f; do printf '%s %s\n' "$f" "$(cksum < "$f")"; done); }
expect_status 0 "$RECKNN" "$G" --test "$T" --report --out "$tmp/set" --quiet
snapshot "$tmp/set" > "$tmp/set.0"
# metrics.json lists every other file of the run with its size
for f in neighbors.csv recommendations.csv predictions.csv report.html; do
    size=$(wc -c < "$tmp/set/$f")
    tr -d '\n ' < "$tmp/set/metrics.json" | grep -q "\"name\":\"$f\",\"bytes\":$size,\"xxh64\":\"[0-9a-f]\{16\}\"" ||
        fail "metrics.json does not list $f with its $size bytes"
done
# a commit that fails at any of its steps leaves the previous set, byte for byte
for k in 1 2 3 4 5 6 7 8 9; do
    RECKNN_COMMIT_FAULT=$k expect_status 4 "$RECKNN" "$G" --test "$T" -k 3 --out "$tmp/set" --quiet
    snapshot "$tmp/set" > "$tmp/set.$k"
    cmp -s "$tmp/set.0" "$tmp/set.$k" || fail "a commit failing at step $k changed the set: $(diff "$tmp/set.0" "$tmp/set.$k")"
done
# a directory in the place of an output: refused, the old set stays
mkdir "$tmp/set2" && cp "$tmp/set/"* "$tmp/set2/" && rm "$tmp/set2/report.html" && mkdir "$tmp/set2/report.html"
snapshot "$tmp/set2" > "$tmp/set2.0" 2>/dev/null || true
expect_status 4 "$RECKNN" "$G" --test "$T" --report --out "$tmp/set2"
grep -q "report.html.*previous run's files" "$tmp/stderr" || fail "a directory in the way: $(cat "$tmp/stderr")"
# a run without neighbors, top-N or report removes yesterday's: no mixed set
expect_status 0 "$RECKNN" "$G" --test "$T" --no-neighbors --top-n 0 --out "$tmp/set" --quiet
[ "$(ls -A "$tmp/set" | tr '\n' ' ')" = "metrics.json predictions.csv " ] ||
    fail "stale files of an earlier run stayed: $(ls -A "$tmp/set" | tr '\n' ' ')"
# folds: NAME.foldF.EXT of an earlier run go too
expect_status 0 "$RECKNN" "$G" --folds 3 --write-folds --out "$tmp/set" --quiet
expect_status 0 "$RECKNN" "$G" --out "$tmp/set" --quiet
ls "$tmp/set" | grep -q fold && fail "fold files of an earlier run stayed"
# a second run on a folder in use fails at once, the first's files untouched
if command -v flock >/dev/null 2>&1; then
    snapshot "$tmp/set" > "$tmp/lock.0"
    # the holder keeps the lock until the run below is over, however slow (valgrind)
    flock "$tmp/set" sh -c "touch '$tmp/held'; while [ ! -e '$tmp/release' ] && [ -d '$tmp' ]; do sleep 0.1; done" \
        >/dev/null 2>&1 &
    until [ -e "$tmp/held" ]; do sleep 0.1; done
    expect_status 4 "$RECKNN" "$G" --out "$tmp/set"
    touch "$tmp/release"
    wait
    grep -q "being written by another recknn run" "$tmp/stderr" || fail "no lock: $(cat "$tmp/stderr")"
    snapshot "$tmp/set" > "$tmp/lock.1"
    cmp -s "$tmp/lock.0" "$tmp/lock.1" || fail "the locked-out run changed the folder"
fi
# --save-model may not name one of the run's outputs
expect_status 2 "$RECKNN" "$G" --out "$tmp/set" --save-model "$tmp/set/neighbors.csv"
expect_status 0 "$RECKNN" "$G" --out "$tmp/set" --save-model "$tmp/set/model.rkm" --quiet
expect_status 0 "$RECKNN" "$G" --out "$tmp/set" --top-n 0 --quiet
[ -s "$tmp/set/model.rkm" ] || fail "a file that is not an output of recknn was removed"
# --save-model goes in with the run's files: a commit that fails at any step
# leaves the earlier model as it was (and no temporary model), a success
# replaces both
mkdir "$tmp/models"
expect_status 0 "$RECKNN" "$G" -k 3 --out "$tmp/set" --save-model "$tmp/models/m.rkm" --quiet
cp "$tmp/models/m.rkm" "$tmp/m.before"
snapshot "$tmp/set" > "$tmp/model.0"
for k in 1 2 3 4; do
    RECKNN_COMMIT_FAULT=$k expect_status 4 "$RECKNN" "$G" -k 5 --out "$tmp/set" --save-model "$tmp/models/m.rkm" \
        --quiet
    cmp -s "$tmp/m.before" "$tmp/models/m.rkm" || fail "commit fault $k: the model changed"
    [ "$(ls -A "$tmp/models")" = m.rkm ] || fail "commit fault $k: $(ls -A "$tmp/models" | tr '\n' ' ')"
    snapshot "$tmp/set" > "$tmp/model.1"
    cmp -s "$tmp/model.0" "$tmp/model.1" || fail "commit fault $k: the folder changed"
done
expect_status 0 "$RECKNN" "$G" -k 5 --out "$tmp/set" --save-model "$tmp/models/m.rkm" --quiet
cmp -s "$tmp/m.before" "$tmp/models/m.rkm" && fail "a run that succeeded kept the earlier model"
exit 0
