#!/bin/sh
# cli_bad_input.sh — malformed data exits 3 naming FILE:LINE:, a missing file
# exits 4, bad options exit 2, --skip-bad-lines skips and counts.
. "$top_srcdir/tests/setup.sh"
CLI="$TESTDATA/cli"

[ -x "$RECKNN" ] || fail "$RECKNN is not built"

# bad_data WANT_LINE FILE [OPTIONS...]: exit 3 with "recknn: error: ...FILE:LINE: ..."
bad_data() {
    line=$1; file=$2; shift 2
    expect_status 3 "$RECKNN" "$file" --out "$tmp/o" "$@"
    grep -q "^recknn: error: .*$(basename "$file"):$line: " "$tmp/stderr" ||
        fail "$(basename "$file"): the message does not name line $line: $(cat "$tmp/stderr")"
    [ -e "$tmp/o" ] && [ -n "$(ls -A "$tmp/o")" ] && fail "$(basename "$file"): files left in --out"
    [ -s "$tmp/stdout" ] && fail "$(basename "$file"): output on stdout"
    return 0
}

bad_data 6 "$CLI/bad_fields.csv"
bad_data 2 "$CLI/bad_fields.tsv"
bad_data 8 "$CLI/bad_rating.csv"
bad_data 4 "$CLI/nan_rating.csv"
bad_data 10 "$CLI/empty_id.csv"
bad_data 11 "$CLI/out_of_scale.csv" --rating-scale 0.5:5
# the same file is fine without a scale (7.0 just widens it)
expect_status 0 "$RECKNN" "$CLI/out_of_scale.csv" --out "$tmp/noscale" --quiet
# the test file is checked the same way
expect_status 3 "$RECKNN" "$CLI/good.csv" --test "$CLI/bad_rating.csv" --out "$tmp/o"
grep -q "bad_rating.csv:8: " "$tmp/stderr" || fail "--test: the message does not name the line: $(cat "$tmp/stderr")"

# an empty data set (header only) is bad data too
expect_status 3 "$RECKNN" "$CLI/header_only.csv" --out "$tmp/o"
grep -q '^recknn: error: ' "$tmp/stderr" || fail "header-only: no error message"
# a duplicate under --duplicates error
expect_status 3 "$RECKNN" "$CLI/duplicate.csv" --duplicates error --out "$tmp/o"
grep -q '^recknn: error: .*--duplicates' "$tmp/stderr" || fail "duplicate: $(cat "$tmp/stderr")"
expect_status 0 "$RECKNN" "$CLI/duplicate.csv" --out "$tmp/dup" --quiet

# ---- missing files: exit 4 naming the file ------------------------------------------------
expect_status 4 "$RECKNN" "$tmp/does-not-exist.csv" --out "$tmp/o"
grep -q "^recknn: error: .*does-not-exist.csv" "$tmp/stderr" || fail "missing file: $(cat "$tmp/stderr")"
expect_status 4 "$RECKNN" "$CLI/good.csv" --test "$tmp/no-test.csv" --out "$tmp/o"
grep -q "no-test.csv" "$tmp/stderr" || fail "missing test file: $(cat "$tmp/stderr")"
expect_status 4 "$RECKNN" "$CLI/good.csv" "$tmp/second-missing.csv" --out "$tmp/o"
[ -e "$tmp/o" ] && [ -n "$(ls -A "$tmp/o")" ] && fail "files left in --out after a missing file"
if [ "$(id -u)" -ne 0 ]; then # root reads anything
    cp "$CLI/good.csv" "$tmp/unreadable.csv"
    chmod 000 "$tmp/unreadable.csv"
    expect_status 4 "$RECKNN" "$tmp/unreadable.csv" --out "$tmp/o"
    grep -q "unreadable.csv" "$tmp/stderr" || fail "unreadable file: $(cat "$tmp/stderr")"
fi

# ---- bad options: exit 2, a message and the hint ------------------------------------------
bad_opt() {
    expect_status 2 "$RECKNN" "$@"
    grep -q "^recknn: error: " "$tmp/stderr" || fail "no error message for: $*"
    grep -q "^Try 'recknn --help'\.$" "$tmp/stderr" || fail "no hint for: $*"
    [ -s "$tmp/stdout" ] && fail "output on stdout for: $*"
    [ -e "$tmp/o" ] && fail "--out created for a bad option: $*"
    return 0
}
G="$CLI/good.csv"
bad_opt "$G" --out "$tmp/o" --no-such-option
bad_opt "$G" --out "$tmp/o" -z
bad_opt --out "$tmp/o"
bad_opt
bad_opt "$G" --out "$tmp/o" -k 0
bad_opt "$G" --out "$tmp/o" -k 12x
bad_opt "$G" --out "$tmp/o" -k ''
bad_opt "$G" --out "$tmp/o" -k -3
bad_opt "$G" --out "$tmp/o" -k 99999999999999999999
bad_opt "$G" --out "$tmp/o" --k 2147483648
bad_opt "$G" --out "$tmp/o" -k
bad_opt "$G" --out "$tmp/o" --holdout 1.5
bad_opt "$G" --out "$tmp/o" --holdout 0
bad_opt "$G" --out "$tmp/o" --holdout 1
bad_opt "$G" --out "$tmp/o" --holdout nan
bad_opt "$G" --out "$tmp/o" --holdout 0.2x
bad_opt "$G" --out "$tmp/o" --metric nope
bad_opt "$G" --out "$tmp/o" --test "$CLI/good_test.csv" --holdout 0.2
bad_opt "$G" --out "$tmp/o" --min-support 0
bad_opt "$G" --out "$tmp/o" --min-k 0
bad_opt "$G" --out "$tmp/o" --shrinkage -1
bad_opt "$G" --out "$tmp/o" --shrinkage inf
bad_opt "$G" --out "$tmp/o" --predict nope
bad_opt "$G" --out "$tmp/o" --seed -1
bad_opt "$G" --out "$tmp/o" --seed 18446744073709551616
bad_opt "$G" --out "$tmp/o" --seed 1.5
bad_opt "$G" --out "$tmp/o" --device tpu
bad_opt "$G" --out "$tmp/o" --gpu-memory 0
bad_opt "$G" --out "$tmp/o" --threads 0
bad_opt "$G" --out "$tmp/o" --threads 1e3
bad_opt "$G" --out "$tmp/o" --format xml
bad_opt "$G" --out "$tmp/o" --duplicates sometimes
bad_opt "$G" --out "$tmp/o" --delimiter ab
bad_opt "$G" --out "$tmp/o" --columns 1,2
bad_opt "$G" --out "$tmp/o" --columns 1,,3
bad_opt "$G" --out "$tmp/o" --rating-scale 5:1
bad_opt "$G" --out "$tmp/o" --rating-scale 1-5
bad_opt "$G" --out "$tmp/o" --rating-scale 1:nan
bad_opt "$G" --out ''
# --gpus, --mpi-load and --mpi-output: a message naming the option and the value
bad_opt "$G" --out "$tmp/o" --gpus bogus
grep -q "^recknn: error: --gpus: .*'bogus'" "$tmp/stderr" || fail "--gpus bogus: $(cat "$tmp/stderr")"
bad_opt "$G" --out "$tmp/o" --mpi-load bogus
grep -q "^recknn: error: --mpi-load: .*'bogus'" "$tmp/stderr" || fail "--mpi-load bogus: $(cat "$tmp/stderr")"
bad_opt "$G" --out "$tmp/o" --mpi-output bogus
grep -q "^recknn: error: --mpi-output: .*'bogus'" "$tmp/stderr" || fail "--mpi-output bogus: $(cat "$tmp/stderr")"
for v in 0 '' -1 65 , ,0 0,,1 '0, 1' all,; do
    bad_opt "$G" --out "$tmp/o" --gpus "$v"
    grep -q "^recknn: error: --gpus: " "$tmp/stderr" || fail "--gpus '$v': $(cat "$tmp/stderr")"
done
bad_opt "$G" --out "$tmp/o" --gpus 1 --device cpu
grep -q "^recknn: error: --gpus needs the GPU engine" "$tmp/stderr" || fail "--gpus with --device cpu: $(cat "$tmp/stderr")"
bad_opt "$G" --out "$tmp/o" --device cpu --gpus 0,0
# the largest seed and accepted spellings are fine
expect_status 0 "$RECKNN" "$G" --out "$tmp/ok" --seed 18446744073709551615 --holdout 0.25 --quiet
expect_status 0 "$RECKNN" "$G" --out "$tmp/ok" --format movielens --rating-scale 0.5:5 --gpu-memory 0.5 \
    --device cpu --shrinkage 0 --quiet
expect_status 0 "$RECKNN" "$CLI/good.tsv" --out "$tmp/ok" --format tsv --quiet
expect_status 0 "$RECKNN" "$CLI/good.tsv" --out "$tmp/ok" --format csv --delimiter tab --no-header \
    --columns 1,2,3 --quiet
expect_status 0 "$RECKNN" "$CLI/good.tsv" --out "$tmp/ok" --format csv --delimiter '\t' --quiet
expect_status 0 "$RECKNN" "$G" --out "$tmp/ok" --format csv --header --columns userId,movieId,rating --quiet
expect_status 0 "$RECKNN" "$G" --out "$tmp/ok" --mpi-load each --device cpu --quiet
expect_status 0 "$RECKNN" "$G" --out "$tmp/ok" --mpi-output root --device cpu --quiet

# ---- --skip-bad-lines: the bad line is skipped, counted and reported ---------------------------
expect_status 0 "$RECKNN" "$CLI/bad_rating.csv" --skip-bad-lines --out "$tmp/skip"
grep -qi 'skipped 1 bad line' "$tmp/stderr" || fail "--skip-bad-lines: not reported: $(cat "$tmp/stderr")"
n=$(sed -n 's/.*"skipped_lines": *\([0-9][0-9]*\).*/\1/p' "$tmp/skip/metrics.json" | sed -n '1p')
[ -n "$n" ] && [ "$n" -gt 0 ] || fail "--skip-bad-lines: metrics.json counts.skipped_lines is '${n}'"
grep -q '"line": *8' "$tmp/skip/metrics.json" || fail "--skip-bad-lines: metrics.json does not list line 8"
# several kinds at once
expect_status 0 "$RECKNN" "$CLI/out_of_scale.csv" --rating-scale 0.5:5 --skip-bad-lines --out "$tmp/skip2" --quiet
expect_status 0 "$RECKNN" "$CLI/empty_id.csv" --skip-bad-lines --out "$tmp/skip3" --quiet
# nothing left at all is still an empty data set
expect_status 3 "$RECKNN" "$CLI/header_only.csv" --skip-bad-lines --out "$tmp/o"

# ---- a header of unknown names is refused, not read by position ----------------------------
printf 'who,what,when,stars_given\n1,10,1600000000,4\n2,10,1600000001,3\n' > "$tmp/named.csv"
expect_status 2 "$RECKNN" "$tmp/named.csv" --out "$tmp/hx" --top-n 0
grep -q 'the header "who,what,when,stars_given" names no user column.*--columns' "$tmp/stderr" ||
    fail "a header of unknown names: $(cat "$tmp/stderr")"
expect_status 0 "$RECKNN" "$tmp/named.csv" --columns who,what,stars_given --out "$tmp/hok" --top-n 0
grep -q '"rating_scale": \[3, 4\]' "$tmp/hok/metrics.json" || fail "--columns by name did not take the ratings"
# known short names, the time among them, in any order
printf 'uid,iid,ts,r\n1,10,1600000000,4\n2,10,1600000001,3\n' > "$tmp/short.csv"
expect_status 0 "$RECKNN" "$tmp/short.csv" --out "$tmp/hs" --top-n 0
grep -q '"rating_scale": \[3, 4\]' "$tmp/hs/metrics.json" || fail "uid,iid,ts,r: the ratings are not r"

# ---- a directory: its rating files only, the others named in a note -------------------------
mkdir -p "$tmp/nf/training_set"
printf '1:\n10,3,2005-09-06\n11,4,2005-09-07\n' > "$tmp/nf/training_set/mv_0000001.txt"
printf '2:\n10,5,2005-09-06\n12,1,2005-09-07\n' > "$tmp/nf/training_set/mv_0000002.txt"
printf 'The Netflix Prize data.\n' > "$tmp/nf/training_set/README"
printf '1,2003,Dinosaur Planet\n2,2004,Isle of Man TT 2004 Review\n' > "$tmp/nf/movie_titles.txt"
printf 'The Netflix Prize data.\n' > "$tmp/nf/README"
expect_status 0 "$RECKNN" "$tmp/nf/training_set" --out "$tmp/nfo" --top-n 0
grep -q 'read 2 rating files, skipped 1 other (README)' "$tmp/stderr" || fail "the skipped file is not noted: $(cat "$tmp/stderr")"
grep -q '"ratings": 4' "$tmp/nfo/metrics.json" || fail "the Netflix folder's ratings"
expect_status 3 "$RECKNN" "$tmp/nf" --out "$tmp/nfx" --top-n 0
grep -q 'holds no rating file (skipped: README, movie_titles.txt)' "$tmp/stderr" ||
    fail "the download's top folder: $(cat "$tmp/stderr")"
expect_status 0 "$RECKNN" "$tmp/nf/training_set" --dir-glob 'mv_0000002*' --out "$tmp/nfg" --top-n 0
grep -q '"ratings": 2' "$tmp/nfg/metrics.json" || fail "--dir-glob"
exit 0
