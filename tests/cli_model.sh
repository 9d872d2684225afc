#!/bin/sh
# cli_model.sh — a saved model's --queries score a user from the history top-N
# serves them from (CONTRACT.md §10): their ratings in RATINGS when one is of
# an item the model knows, else the model's training ratings, else the
# fallback.  A user only in RATINGS gets a real prediction (checked by hand,
# and against the saving run's answer for a training user with the same
# history); a user whose ratings changed is predicted from today's; with
# RATINGS equal to the training ratings every answer is the saving run's, in
# every prediction mode.
. "$top_srcdir/tests/setup.sh"
[ -x "$RECKNN" ] || fail "$RECKNN is not built"
sample="$top_srcdir/sample_data/ratings.csv"
sample_test="$top_srcdir/sample_data/test.csv"
if [ ! -f "$sample" ] || [ ! -f "$sample_test" ]; then
    sample="$TESTDATA/cli/good.csv"
    sample_test="$TESTDATA/cli/good_test.csv"
fi
# field F of the row of predictions.csv P for the pair U,I
field() { awk -F, -v u="$2" -v i="$3" -v f="$4" '$1 == u && $2 == i { print $f }' "$1"; }
json_int() { tr -d ' \n' < "$1" | grep -o "\"$2\":[0-9]*" | head -1 | sed 's/.*://'; }

# ---- RATINGS equal to the training ratings: the saving run's answers, every mode -------------------
for opts in "--predict basic" "--predict baseline" "--metric pearson-baseline" "--metric cosine --min-k 2"; do
    # shellcheck disable=SC2086
    expect_status 0 "$RECKNN" "$sample" --test "$sample_test" $opts --top-n 0 --save-model "$tmp/s.rkm" \
        --out "$tmp/sa" --device cpu --quiet
    expect_status 0 "$RECKNN" "$sample" --model "$tmp/s.rkm" --queries "$sample_test" --top-n 0 --out "$tmp/sb" \
        --device cpu --quiet
    cut -d, -f1,2,4,5 "$tmp/sa/predictions.csv" > "$tmp/pa"
    cut -d, -f1,2,4,5 "$tmp/sb/predictions.csv" > "$tmp/pb"
    cmp -s "$tmp/pa" "$tmp/pb" || fail "$opts: the saved model's predictions differ from the saving run's"
    awk -F, 'NR > 1 && $4 > 0 { n++ } END { exit n < 10 }' "$tmp/pb" || fail "$opts: hardly a real prediction"
done

# ---- a hand-made model --------------------------------------------------------------------------
# items 1..4; x rated 1 (5) and 3 (1).  μ_1 = (4 + 2 + 3 + 5) / 4 = 3.5, μ_2 = (5 + 3 + 4) / 3 = 4, and
# sim(2, 1) = 1 (co-raters a and b: (4, 2) against (5, 3)).
cat > "$tmp/train.csv" <<'EOF'
user,item,rating
a,1,4
a,2,5
a,3,3
b,1,2
b,2,3
b,4,4
c,1,3
c,3,4
c,4,2
d,2,4
d,3,2
d,4,5
x,1,5
x,3,1
EOF
printf 'user,item,rating\nx,2,3\nx,4,3\nb,2,3\nb,4,3\n' > "$tmp/test.csv"
# today: b now has x's history; twin is new with x's history; newbie is new with one rating (item 1, 4);
# an item the model does not know is dropped; ghost rated only such an item
{
    grep -v '^b,' "$tmp/train.csv"
    printf 'b,1,5\nb,3,1\nb,99,3\ntwin,1,5\ntwin,3,1\nnewbie,1,4\nghost,99,2\n'
} > "$tmp/today.csv"
printf 'user,item\nx,2\nx,4\nb,2\nb,4\ntwin,2\ntwin,4\nnewbie,2\nghost,2\nnobody,2\na,99\n' > "$tmp/q.csv"

for mode in means basic baseline; do
    expect_status 0 "$RECKNN" "$tmp/train.csv" --test "$tmp/test.csv" --predict $mode --top-n 0 \
        --save-model "$tmp/m.rkm" --out "$tmp/a.$mode" --device cpu --quiet
    expect_status 0 "$RECKNN" "$tmp/today.csv" --model "$tmp/m.rkm" --queries "$tmp/q.csv" --top-n 3 \
        --out "$tmp/b.$mode" --device cpu
    p="$tmp/b.$mode/predictions.csv"
    [ "$(awk 'END { print NR - 1 }' "$p")" -eq 10 ] || fail "$mode: not one answer per query"
    grep -q 'first: ghost,2' "$tmp/stderr" || fail "$mode: the note does not name the first unknown pair: $(cat "$tmp/stderr")"
    # the same history, the same answer: x (unchanged), b (changed to x's) and twin (new) are all x of the saving run
    for i in 2 4; do
        want="$(field "$tmp/a.$mode/predictions.csv" x $i 4),$(field "$tmp/a.$mode/predictions.csv" x $i 5)"
        for u in x b twin; do
            got="$(field "$p" $u $i 4),$(field "$p" $u $i 5)"
            [ "$got" = "$want" ] || fail "$mode: ($u, $i) answered $got, the saving run's x got $want"
        done
    done
    [ "$(field "$p" x 2 5)" -gt 0 ] || fail "$mode: (x, 2) fell back"
    # newbie's one rating, by hand: basic r = 4; means μ_2 + (4 − μ_1) = 4.5
    case $mode in
        basic) want=4 ;;
        means) want=4.5 ;;
        *) want= ;;
    esac
    if [ -n "$want" ]; then
        awk -v g="$(field "$p" newbie 2 4)" -v w="$want" 'BEGIN { d = g - w; exit !(d < 1e-9 && d > -1e-9) }' ||
            fail "$mode: (newbie, 2) predicted $(field "$p" newbie 2 4), by hand $want"
    fi
    [ "$(field "$p" newbie 2 5)" = 1 ] || fail "$mode: (newbie, 2) used $(field "$p" newbie 2 5) neighbours, not 1"
    # no history (ghost rated only an unknown item, nobody is nowhere) or an unknown item: the fallback
    for pair in ghost,2 nobody,2 a,99; do
        [ "$(field "$p" "${pair%,*}" "${pair#*,}" 5)" = 0 ] || fail "$mode: ($pair) did not fall back"
    done
    [ "$(json_int "$tmp/b.$mode/metrics.json" queries_unknown)" = 3 ] || fail "$mode: queries_unknown"
    [ "$(json_int "$tmp/b.$mode/metrics.json" queries_from_ratings)" = 8 ] || fail "$mode: queries_from_ratings"
    # top-N serves the same users from the same ratings: twin's list is b's
    [ "$(awk -F, '$1 == "twin" { print $2 "," $3 "," $4 }' "$tmp/b.$mode/recommendations.csv")" = \
      "$(awk -F, '$1 == "b" { print $2 "," $3 "," $4 }' "$tmp/b.$mode/recommendations.csv")" ] ||
        fail "$mode: twin and b, with one history, got different recommendations"
done
# b's old history (RATINGS = the training ratings) answers otherwise: today's ratings were used
expect_status 0 "$RECKNN" "$tmp/train.csv" --model "$tmp/m.rkm" --queries "$tmp/q.csv" --top-n 0 --out "$tmp/c" \
    --device cpu --quiet
[ "$(field "$tmp/c/predictions.csv" b 2 4)" != "$(field "$tmp/b.baseline/predictions.csv" b 2 4)" ] ||
    [ "$(field "$tmp/c/predictions.csv" b 4 4)" != "$(field "$tmp/b.baseline/predictions.csv" b 4 4)" ] ||
    fail "b's changed ratings did not change b's predictions"
# twin and newbie are not in the training ratings: the fallback then
[ "$(field "$tmp/c/predictions.csv" newbie 2 5)" = 0 ] || fail "newbie has no history in the training ratings"
exit 0
