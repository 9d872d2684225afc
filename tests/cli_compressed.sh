#!/bin/sh
# cli_compressed.sh — .gz and .zst rating files are read directly: every
# format, one member/frame or several (pigz-, pzstd-style), a Netflix folder
# of compressed files, give the same bytes in every output as the plain file;
# a truncated or corrupt stream is exit 3 naming the file.  The zstd part
# needs the zstd command (skipped without it).
. "$top_srcdir/tests/setup.sh"
[ -x "$RECKNN" ] || fail "$RECKNN is not built"
F="$TESTDATA/fmt"
have_zstd=0
command -v zstd >/dev/null 2>&1 && have_zstd=1

# same PLAIN COMPRESSED ARGS...: every output of the two runs is the same bytes
same() {
    plain=$1 packed=$2
    shift 2
    expect_status 0 "$RECKNN" "$plain" "$@" --out "$tmp/p" --quiet
    expect_status 0 "$RECKNN" "$packed" "$@" --out "$tmp/c" --quiet
    for out in neighbors.csv recommendations.csv predictions.csv; do
        [ -e "$tmp/p/$out" ] || continue
        cmp -s "$tmp/p/$out" "$tmp/c/$out" || fail "$(basename "$packed"): $out differs from the plain file's"
    done
    rm -rf "$tmp/p" "$tmp/c"
}

# several members / frames: the file cut in pieces, each compressed, concatenated
pieces() { # pieces FILE TOOL OUT
    rm -rf "$tmp/pc" && mkdir "$tmp/pc"
    split -l 7 "$1" "$tmp/pc/x"
    for x in "$tmp/pc"/x*; do $2 -c "$x"; done > "$3"
}

for f in ml_crlf.csv ratings.dat u.tsv netflix.txt quoted.csv; do
    gzip -c "$F/$f" > "$tmp/$f.gz"
    same "$F/$f" "$tmp/$f.gz" --device cpu
    pieces "$F/$f" gzip "$tmp/m-$f.gz"
    same "$F/$f" "$tmp/m-$f.gz" --device cpu
    if [ $have_zstd -eq 1 ]; then
        zstd -q -c "$F/$f" > "$tmp/$f.zst"
        same "$F/$f" "$tmp/$f.zst" --device cpu
        pieces "$F/$f" "zstd -q" "$tmp/m-$f.zst"
        same "$F/$f" "$tmp/m-$f.zst" --device cpu
    fi
done

# a larger file, with a test set: predictions too; frames decoded in parallel
"$SYNTH" --users 300 --items 200 --ratings 30000 --seed 9 --output "$tmp/big.csv" --test-output "$tmp/bigt.csv" --quiet
gzip -c "$tmp/big.csv" > "$tmp/big.csv.gz"
same "$tmp/big.csv" "$tmp/big.csv.gz" --test "$tmp/bigt.csv" --device cpu --threads 2
if [ $have_zstd -eq 1 ]; then
    pieces "$tmp/big.csv" "zstd -q" "$tmp/big.csv.zst"
    same "$tmp/big.csv" "$tmp/big.csv.zst" --test "$tmp/bigt.csv" --device cpu --threads 2
fi

# a Netflix folder of compressed files
mkdir "$tmp/nf" "$tmp/nfz"
printf '1:\n10,3,2005-09-06\n11,4,2005-09-07\n12,2,2005-09-08\n' > "$tmp/nf/mv_0000001.txt"
printf '2:\n10,5,2005-09-06\n12,1,2005-09-07\n13,4,2005-09-09\n' > "$tmp/nf/mv_0000002.txt"
gzip -c "$tmp/nf/mv_0000001.txt" > "$tmp/nfz/mv_0000001.txt.gz"
gzip -c "$tmp/nf/mv_0000002.txt" > "$tmp/nfz/mv_0000002.txt.gz"
same "$tmp/nf" "$tmp/nfz" --device cpu

# truncated and corrupt streams: exit 3, the file named, nothing written
head -c 200 "$tmp/big.csv.gz" > "$tmp/cut.csv.gz"
expect_status 3 "$RECKNN" "$tmp/cut.csv.gz" --out "$tmp/e" --device cpu
grep -q "cut.csv.gz: the gzip data end early" "$tmp/stderr" || fail "a truncated gzip file: $(cat "$tmp/stderr")"
cp "$tmp/big.csv.gz" "$tmp/bad.csv.gz"
printf 'XXXXXXXXXXXXXXXX' | dd of="$tmp/bad.csv.gz" bs=1 seek=300 conv=notrunc 2>/dev/null
expect_status 3 "$RECKNN" "$tmp/bad.csv.gz" --out "$tmp/e" --device cpu
grep -q "bad.csv.gz: corrupt gzip data" "$tmp/stderr" || fail "a corrupt gzip file: $(cat "$tmp/stderr")"
if [ $have_zstd -eq 1 ]; then
    zstd -q -c "$tmp/big.csv" | head -c 300 > "$tmp/cut.csv.zst"
    expect_status 3 "$RECKNN" "$tmp/cut.csv.zst" --out "$tmp/e" --device cpu
    grep -q "cut.csv.zst: " "$tmp/stderr" || fail "a truncated zstd file: $(cat "$tmp/stderr")"
fi
[ -e "$tmp/e" ] && fail "a failed run left $tmp/e"
exit 0
