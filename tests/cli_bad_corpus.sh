#!/bin/sh
# cli_bad_corpus.sh — every case of tests/data/bad/CASES: recknn exits with the
# status given, says on stderr what the case expects (the file, and FILE:LINE:
# for a bad line), writes nothing into --out when it fails, and, when it
# accepts the input, counts what metrics.json should count.
. "$top_srcdir/tests/setup.sh"
BAD="$TESTDATA/bad"
GOOD="$BAD/movielens.csv"
[ -x "$RECKNN" ] || fail "$RECKNN is not built"
set -f # ARGS are split on blanks, never globbed

# The cases made here: too big to ship, or not expressible in a tarball.
gen() {
    case $1 in
    big_id.csv) # a 10 MB item id on line 3
        { printf 'u,i,r\n1,1,4\n1,'; head -c 10485760 /dev/zero | tr '\0' x; printf ',3\n'; } >"$2" ;;
    big_rating.csv) # a 10 MB rating of digits on line 3 (strtod overflows)
        { printf 'u,i,r\n1,1,4\n2,1,'; head -c 10485760 /dev/zero | tr '\0' 7; printf '\n2,2,3\n'; } >"$2" ;;
    big_line.csv) # a 10 MB quoted field left open by the file's end
        { printf 'u,i,r\n1,1,4\n2,"'; head -c 10485760 /dev/zero | tr '\0' q; } >"$2" ;;
    emptydir) mkdir "$2" ;;
    zeros) # endless input without a line break: stops at the line limit, not at the memory's end
        ln -s /dev/zero "$2" ;;
    missing.csv) ;;
    unreadable.csv)
        cp "$GOOD" "$2"
        chmod 000 "$2"
        if [ -r "$2" ]; then # root reads anything
            echo "SKIP: unreadable.csv: this user can read a file of mode 000" >&2
            return 1
        fi ;;
    *) fail "CASES: no generator for @$1" ;;
    esac
}

# metrics.json's "counts" object holds KEY: N.
check_counts() {
    counts=$(grep '"counts":' "$1/metrics.json") || fail "$2: no counts in metrics.json"
    for kv in $3; do
        k=${kv%%=*}
        v=${kv#*=}
        echo "$counts" | grep -q "\"$k\": $v[,}]" || fail "$2: counts.$k is not $v: $counts"
    done
}

[ -f "$BAD/CASES" ] || fail "no $BAD/CASES"
expect_status 0 "$RECKNN" "$GOOD" --out "$tmp/model-run" --save-model "$tmp/model.rkm" --device cpu --quiet
MODEL="$tmp/model.rkm"

n=0 ran=0
while IFS='|' read -r name status pattern args counts; do
    n=$((n + 1))
    case $name in '#'* | '') continue ;; esac
    name=$(echo "$name" | sed 's/^ *//;s/ *$//')
    status=$(echo "$status" | tr -d ' ')
    pattern=$(echo "$pattern" | sed 's/^ *//;s/ *$//')
    # under valgrind (RK_VALGRIND=1, .ci/run) the 10 MB inputs would take minutes
    # each; the ASan build runs them
    case "${RK_VALGRIND:-0}$name" in 1@big_*) continue ;; esac
    case $name in
    @*)
        name=${name#@}
        file="$tmp/$name"
        [ -e "$file" ] || gen "$name" "$file" || continue ;;
    *)
        file="$BAD/$name"
        [ -e "$file" ] || fail "CASES:$n: no file $file" ;;
    esac
    [ -n "$(echo "$args" | tr -d ' ')" ] || args='@FILE@'
    # @FILE@ and the rest hold no blanks: substitute, then split on blanks
    args=$(echo "$args" | sed "s|@FILE@|$file|g;s|@GOOD@|$GOOD|g;s|@MODEL@|$MODEL|g")
    out="$tmp/out$n"
    # shellcheck disable=SC2086
    expect_status "$status" "$RECKNN" $args --out "$out" --device cpu --quiet
    if [ "$status" -eq 0 ]; then
        [ -f "$out/metrics.json" ] || fail "CASES:$n $name: no metrics.json"
        check_counts "$out" "CASES:$n $name" "$counts"
    else
        [ -n "$pattern" ] || fail "CASES:$n $name: no message pattern"
        grep -q '^recknn: error: ' "$tmp/stderr" || fail "CASES:$n $name: no 'recknn: error:' line: $(cat "$tmp/stderr")"
        grep -Eq -- "$pattern" "$tmp/stderr" ||
            fail "CASES:$n $name: stderr does not match /$pattern/: $(head -c 400 "$tmp/stderr")"
        if [ -e "$out" ] && [ -n "$(ls -A "$out")" ]; then fail "CASES:$n $name: files left in --out: $(ls -A "$out")"; fi
    fi
    [ -s "$tmp/stdout" ] && fail "CASES:$n $name: output on stdout"
    ran=$((ran + 1))
done <"$BAD/CASES"
[ "$ran" -ge 30 ] || fail "only $ran cases ran"
echo "$ran cases of $BAD/CASES passed"
exit 0
