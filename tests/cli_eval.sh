#!/bin/sh
# cli_eval.sh — offline evaluation and saved models from the command line:
# --folds with --top-n, --baseline popular and --report (every file it
# writes), --write-folds (every rating tested once), the per-user and
# temporal splits, seeds, and --save-model / --model / --queries (answers
# identical to the saving run's; truncated, foreign and missing model files).
. "$top_srcdir/tests/setup.sh"
CLI="$TESTDATA/cli"
[ -x "$RECKNN" ] || fail "$RECKNN is not built"
if [ -f "$top_srcdir/sample_data/ratings.csv" ] && [ -f "$top_srcdir/sample_data/test.csv" ]; then
    train="$top_srcdir/sample_data/ratings.csv"
    test="$top_srcdir/sample_data/test.csv"
else
    train="$CLI/good.csv"
    test="$CLI/good_test.csv"
fi
rows() { awk 'END { print NR - 1 }' "$1"; }
n_ratings=$(rows "$train")

# ---- --folds 3 --top-n 10 --report --baseline popular: every file -------------------------------
expect_status 0 "$RECKNN" "$train" --folds 3 --seed 7 --top-n 10 --report --baseline popular \
    --out "$tmp/f" --device cpu
for f in neighbors.csv predictions.csv recommendations.csv metrics.json report.html; do
    [ -s "$tmp/f/$f" ] || fail "--folds 3 did not write $f"
done
grep -q '3 folds: mean RMSE' "$tmp/stderr" || fail "the summary does not give the folds' mean: $(cat "$tmp/stderr")"
[ "$(sed -n 1p "$tmp/f/predictions.csv")" = "user,item,rating,prediction,neighbors_used" ] ||
    fail "predictions.csv header"
# the last fold's test set is a third of the ratings
p=$(rows "$tmp/f/predictions.csv")
[ $((p * 3)) -ge $((n_ratings - 3)) ] && [ $((p * 3)) -le $((n_ratings + 3)) ] ||
    fail "the last fold tests $p of $n_ratings ratings"
if command -v python3 >/dev/null 2>&1; then
    python3 - "$tmp/f/metrics.json" "$n_ratings" "$p" <<'PY' || fail "metrics.json of --folds 3 is wrong"
import json, math, sys
d = json.load(open(sys.argv[1]))
n, last = int(sys.argv[2]), int(sys.argv[3])
folds = d["folds"]
assert len(folds) == 3, len(folds)
assert sum(f["test_ratings"] for f in folds) == n, [f["test_ratings"] for f in folds]
assert all(f["train_ratings"] + f["test_ratings"] == n for f in folds)
assert folds[-1]["test_ratings"] == last
rmse = [f["rmse"] for f in folds]
assert all(0 < x < 5 for x in rmse), rmse
mean = sum(rmse) / 3
sd = math.sqrt(sum((x - mean) ** 2 for x in rmse) / 2)
s = d["summary"]["rmse"]
assert abs(s["mean"] - mean) < 1e-6 and abs(s["sd"] - sd) < 1e-6, (s, mean, sd)
assert abs(d["metrics"]["rmse"] - mean) < 1e-6
for f in folds:
    r, b = f["ranking"], f["baseline_popular"]
    assert r is not None and b is not None
    for k in ("precision", "recall", "ndcg", "mrr", "hit_rate", "coverage", "gini"):
        assert 0 <= r[k] <= 1 and 0 <= b[k] <= 1, (k, r[k], b[k])
    assert r["n"] == 10 and r["users"] > 0 and r["relevance"] == 4
    assert b["items_recommended"] <= r["items_recommended"] or True
for k in ("precision", "recall", "ndcg", "hit_rate", "coverage", "gini"):
    assert k in d["summary"] and k in d["summary_baseline_popular"], k
assert d["options"]["folds"] == 3 and d["options"]["baseline"] == "popular"
PY
    # the report is well-formed XML and holds its figures
    python3 - "$tmp/f/report.html" <<'PY' || fail "report.html is not well-formed or lacks its figures"
import sys, xml.etree.ElementTree as ET
t = open(sys.argv[1], encoding="utf-8").read()
assert t.startswith("<!DOCTYPE html>"), t[:40]
assert "<script" not in t.lower()
body = t[len("<!DOCTYPE html>"):]
ET.fromstring(body)
assert t.count("<svg") >= 5, t.count("<svg")
for word in ("RMSE", "fold", "popular", "Gini"):
    assert word in t, word
PY
fi
grep -q '<svg' "$tmp/f/report.html" || fail "report.html has no figure"
grep -qi '<script' "$tmp/f/report.html" && fail "report.html has a script"

# ---- --write-folds: every rating tested exactly once ----------------------------------------------
expect_status 0 "$RECKNN" "$train" --folds 3 --seed 7 --top-n 0 --write-folds --no-neighbors \
    --out "$tmp/w" --device cpu --quiet
for k in 1 2 3; do [ -s "$tmp/w/predictions.fold$k.csv" ] || fail "--write-folds: no predictions.fold$k.csv"; done
[ -e "$tmp/w/predictions.csv" ] && fail "--write-folds also wrote predictions.csv"
cmp -s "$tmp/w/predictions.fold3.csv" "$tmp/f/predictions.csv" || fail "fold 3 differs from the last fold of the same seed"
awk -F, 'FNR > 1 { print $1 "," $2 }' "$tmp/w"/predictions.fold*.csv | sort > "$tmp/tested"
awk -F, 'NR > 1 { print $1 "," $2 }' "$train" | sort > "$tmp/all"
cmp -s "$tmp/tested" "$tmp/all" || fail "the folds' test sets are not the ratings, each once"

# ---- seeds: the same split again, another split for another seed -------------------------------
expect_status 0 "$RECKNN" "$train" --folds 3 --seed 7 --top-n 0 --out "$tmp/s7" --device cpu --quiet
cmp -s "$tmp/s7/predictions.csv" "$tmp/f/predictions.csv" || fail "--seed 7 twice gave different folds"
expect_status 0 "$RECKNN" "$train" --folds 3 --seed 8 --top-n 0 --out "$tmp/s8" --device cpu --quiet
cmp -s "$tmp/s8/predictions.csv" "$tmp/f/predictions.csv" && fail "--seed 8 gave the folds of --seed 7"

# ---- --split user: every test user keeps a training rating ------------------------------------------
expect_status 0 "$RECKNN" "$train" --split user --holdout 0.2 --seed 3 --top-n 5 --out "$tmp/u" --device cpu --quiet
awk -F, 'NR > 1 { print $1 "," $2 }' "$tmp/u/predictions.csv" | sort > "$tmp/utest"
comm -23 "$tmp/all" "$tmp/utest" | cut -d, -f1 | sort -u > "$tmp/utrain_users"
cut -d, -f1 "$tmp/utest" | sort -u > "$tmp/utest_users"
[ -z "$(comm -13 "$tmp/utrain_users" "$tmp/utest_users")" ] || fail "--split user: a test user has no training rating"
awk -F, 'NR > 1 && $5 == 0 { f++ } END { exit f > NR / 2 }' "$tmp/u/predictions.csv" || fail "--split user: mostly fallbacks"

# ---- --split temporal: each user's test ratings are its latest -----------------------------------
expect_status 0 "$RECKNN" "$train" --split temporal --holdout 0.25 --top-n 0 --out "$tmp/t" --device cpu --quiet
awk -F, 'NR == FNR { if (FNR > 1) held[$1 "," $2] = 1; next }
    FNR > 1 { k = $1 "," $2; if (k in held) { if (!($1 in tmin) || $4 < tmin[$1]) tmin[$1] = $4 }
              else if ($4 > tmax[$1]) tmax[$1] = $4 }
    END { for (u in tmin) if ((u in tmax) && tmin[u] < tmax[u]) { print "user " u; bad = 1 }; exit bad }' \
    "$tmp/t/predictions.csv" "$train" || fail "--split temporal: a test rating is older than a training one"
printf 'u,i,r\n1,1,4\n1,2,3\n2,1,5\n2,2,2\n3,1,1\n' > "$tmp/notime.csv"
expect_status 2 "$RECKNN" "$tmp/notime.csv" --split temporal --holdout 0.3 --out "$tmp/nt" --device cpu
grep -q 'timestamps' "$tmp/stderr" || fail "--split temporal without timestamps: $(cat "$tmp/stderr")"

# ---- option errors ------------------------------------------------------------------------------
expect_status 2 "$RECKNN" "$train" --folds 1 --out "$tmp/e" --device cpu
expect_status 2 "$RECKNN" "$train" --folds 3 --holdout 0.2 --out "$tmp/e" --device cpu
expect_status 2 "$RECKNN" "$train" --split user --out "$tmp/e" --device cpu
expect_status 2 "$RECKNN" "$train" --write-folds --out "$tmp/e" --device cpu
expect_status 2 "$RECKNN" "$train" --queries "$test" --out "$tmp/e" --device cpu
expect_status 2 "$RECKNN" "$train" --baseline best --out "$tmp/e" --device cpu
[ -e "$tmp/e" ] && fail "a rejected option left $tmp/e behind"

# ---- a saved model answers as the run that saved it -------------------------------------------------
# (the file keeps the ranking model's lists too: the same recommendations; and with --rank lists)
for rank in rp3beta lists; do
expect_status 0 "$RECKNN" "$train" --test "$test" --top-n 10 --rank $rank --save-model "$tmp/m.rkm" --out "$tmp/a" --device cpu --quiet
[ -s "$tmp/m.rkm" ] || fail "--save-model wrote nothing"
ls "$tmp" | grep -q 'm.rkm.tmp' && fail "--save-model left a temporary file"
expect_status 0 "$RECKNN" "$train" --model "$tmp/m.rkm" --queries "$test" --top-n 10 --out "$tmp/b" --device cpu
cut -d, -f1,2,4,5 "$tmp/a/predictions.csv" > "$tmp/pa"
cut -d, -f1,2,4,5 "$tmp/b/predictions.csv" > "$tmp/pb"
cmp -s "$tmp/pa" "$tmp/pb" || fail "the saved model's predictions differ from the saving run's"
cmp -s "$tmp/a/recommendations.csv" "$tmp/b/recommendations.csv" ||
    fail "--rank $rank: the saved model's recommendations differ from the saving run's"
done
[ -e "$tmp/b/neighbors.csv" ] && fail "--model recomputed neighbors.csv"
# the models of CONTRACT.md §4b too: interpolate from the saved ratings' covariances, global from its
# trained weights; a user of new ids with the same ratings gets the same interpolation, and global's
# bias folded in from the history instead of the trained one
awk -F, 'NR > 1 {print "n" $1 "," $2 "," $3}' "$train" > "$tmp/new.csv"
awk -F, 'NR > 1 {print "n" $1 "," $2}' "$test" > "$tmp/qn.csv"
for mode in interpolate global; do
    expect_status 0 "$RECKNN" "$train" --test "$test" --metric pearson-baseline --predict $mode -k 15 \
        --global-epochs 4 --save-model "$tmp/p.rkm" --out "$tmp/pa_$mode" --device cpu --quiet
    expect_status 0 "$RECKNN" "$train" --model "$tmp/p.rkm" --queries "$test" --top-n 10 --out "$tmp/pb_$mode" \
        --device cpu
    cut -d, -f1,2,4,5 "$tmp/pa_$mode/predictions.csv" > "$tmp/pa"
    cut -d, -f1,2,4,5 "$tmp/pb_$mode/predictions.csv" > "$tmp/pb"
    cmp -s "$tmp/pa" "$tmp/pb" || fail "--predict $mode: the saved model's predictions differ from the saving run's"
    cmp -s "$tmp/pa_$mode/recommendations.csv" "$tmp/pb_$mode/recommendations.csv" ||
        fail "--predict $mode: the saved model's recommendations differ from the saving run's"
    grep -q "\"predict\": \"$mode\"" "$tmp/pb_$mode/metrics.json" || fail "--model does not show predict $mode"
    expect_status 0 "$RECKNN" "$tmp/new.csv" --model "$tmp/p.rkm" --queries "$tmp/qn.csv" --top-n 0 \
        --out "$tmp/pn_$mode" --device cpu
    cut -d, -f4,5 "$tmp/pn_$mode/predictions.csv" | tail -n +2 > "$tmp/pn"
    cut -d, -f3,4 "$tmp/pb" | tail -n +2 > "$tmp/pb2"
    if [ $mode = interpolate ]; then
        cmp -s "$tmp/pn" "$tmp/pb2" ||
            fail "interpolate: a new user with a training user's ratings is answered otherwise"
    else
        cmp -s "$tmp/pn" "$tmp/pb2" && fail "global: the folded-in biases are the trained ones (nothing folded in?)"
        awk -F, 'NR > 1 && ($4 < 1 || $4 > 5) {bad = 1} END {exit bad}' "$tmp/pn_$mode/predictions.csv" ||
            fail "global: a folded-in prediction outside the scale"
    fi
done
# --tune-predict: the options chosen on a validation split of the training part, never the test set:
# garbage test ratings make the same choice; the row chosen is the lowest RMSE; the run's predictions
# are those of the chosen options given by hand; a saved model keeps them
awk -F, 'NR == 1 {print; next} {$3 = ($3 == 5) ? 1 : 5; print}' OFS=, "$test" > "$tmp/garbage.csv"
for t in "$test" "$tmp/garbage.csv"; do
    expect_status 0 "$RECKNN" "$train" --test "$t" --metric pearson-baseline --predict global --tune-predict \
        --top-n 0 --seed 3 --save-model "$tmp/tp.rkm" --out "$tmp/tp_$(basename "$t")" --device cpu --quiet
done
python3 - "$tmp/tp_$(basename "$test")/metrics.json" "$tmp/tp_garbage.csv/metrics.json" > "$tmp/chosen" <<'PY' ||
import json, sys
a, b = (json.load(open(p))["tune_predict"] for p in sys.argv[1:3])
assert a["configs"] == len(a["rows"]) == 60, a["configs"]
assert a["best"] == b["best"], (a["best"], b["best"])
assert [r["rmse"] for r in a["rows"]] == [r["rmse"] for r in b["rows"]], "the test set changed the search"
best = min(range(60), key=lambda i: (a["rows"][i]["rmse"], i))
assert a["best"] == best and a["best_config"]["k"] == a["rows"][best]["k"], (a["best"], best)
c = a["best_config"]
print("-k %d --shrinkage %s --global-lr %s --global-epochs %d" % (c["k"], c["shrinkage"], c["global_lr"],
                                                                c["global_epochs"]))
PY
    fail "--tune-predict's choice is not the lowest validation RMSE, or the test set changed it"
expect_status 0 "$RECKNN" "$train" --test "$test" --metric pearson-baseline --predict global $(cat "$tmp/chosen") \
    --top-n 0 --out "$tmp/tp_hand" --device cpu --quiet
cmp -s "$tmp/tp_$(basename "$test")/predictions.csv" "$tmp/tp_hand/predictions.csv" ||
    fail "--tune-predict's predictions are not those of its chosen options ($(cat "$tmp/chosen"))"
expect_status 0 "$RECKNN" "$train" --model "$tmp/tp.rkm" --queries "$test" --top-n 0 --out "$tmp/tp_model" \
    --device cpu --quiet
cut -d, -f1,2,4,5 "$tmp/tp_hand/predictions.csv" > "$tmp/pa"
cut -d, -f1,2,4,5 "$tmp/tp_model/predictions.csv" > "$tmp/pb"
cmp -s "$tmp/pa" "$tmp/pb" || fail "a model saved under --tune-predict answers otherwise than its chosen options"
expect_status 2 "$RECKNN" "$train" --tune-predict --out "$tmp/x" --device cpu
grep -q "needs one of them" "$tmp/stderr" || fail "--tune-predict without a model: $(cat "$tmp/stderr")"
# unknown ids in the queries fall back, with a note
printf 'user,item\nnobody,%s\n' "$(sed -n 2p "$train" | cut -d, -f2)" > "$tmp/q2.csv"
expect_status 0 "$RECKNN" "$train" --model "$tmp/m.rkm" --queries "$tmp/q2.csv" --top-n 0 --out "$tmp/c" --device cpu
grep -q 'does not know' "$tmp/stderr" || fail "unknown query ids are not noted: $(cat "$tmp/stderr")"
[ "$(rows "$tmp/c/predictions.csv")" -eq 1 ] || fail "one query, $(rows "$tmp/c/predictions.csv") answers"

# ---- bad model files: exit 3 with the file named, 4 when missing; nothing written ---------------------
size=$(wc -c < "$tmp/m.rkm")
for cut in 0 7 100 $((size / 2)) $((size - 1)); do
    head -c "$cut" "$tmp/m.rkm" > "$tmp/cut.rkm"
    expect_status 3 "$RECKNN" "$train" --model "$tmp/cut.rkm" --out "$tmp/x" --device cpu
    grep -q 'cut.rkm' "$tmp/stderr" || fail "a truncated model ($cut bytes): $(cat "$tmp/stderr")"
done
expect_status 3 "$RECKNN" "$train" --model "$train" --out "$tmp/x" --device cpu
grep -q 'not a recknn model' "$tmp/stderr" || fail "a rating file as model: $(cat "$tmp/stderr")"
expect_status 4 "$RECKNN" "$train" --model "$tmp/none.rkm" --out "$tmp/x" --device cpu
[ -e "$tmp/x" ] && fail "a bad model left output behind"

# ---- one truth per run ------------------------------------------------------------------------------
# a saved model's run says the model's metric and k, and refuses the options the model fixes
expect_status 0 "$RECKNN" "$train" --metric cosine-full -k 7 --save-model "$tmp/m7.rkm" --out "$tmp/s7" --device cpu --quiet
expect_status 0 "$RECKNN" "$train" --model "$tmp/m7.rkm" --out "$tmp/s7b" --device cpu
grep -q "cosine-full k=7 on" "$tmp/stderr" || fail "--model: the summary does not show the model's metric and k"
for opt in "-k 5" "--metric msd" "--shrinkage 10" "--rank lists" "--predict basic"; do
    # shellcheck disable=SC2086
    expect_status 2 "$RECKNN" "$train" --model "$tmp/m7.rkm" $opt --out "$tmp/x" --device cpu
    grep -q "cannot change them" "$tmp/stderr" || fail "--model $opt: $(cat "$tmp/stderr")"
done
# folds: the summary's precision is the mean over the folds; the report says which sections are one fold's
expect_status 0 "$RECKNN" "$train" --folds 3 --seed 4 --report --out "$tmp/f3" --device cpu
grep -q "3 folds: mean RMSE .* mean precision@10 " "$tmp/stderr" || fail "folds: the summary mixes means and the last fold"
[ "$(grep -c 'The last of the 3 folds' "$tmp/f3/report.html")" -eq 2 ] || fail "the report does not say which sections are the last fold's"
# -k and --top-n past the data: clamped with a note, the same files
expect_status 0 "$RECKNN" "$train" -k 100000 --top-n 1000000 --out "$tmp/kbig" --device cpu --rank lists
grep -q "so k = " "$tmp/stderr" || fail "-k past the items: no note"
items=$(tr -d '\n ' < "$tmp/kbig/metrics.json" | grep -o '"items":[0-9]*' | head -1 | sed 's/.*://')
expect_status 0 "$RECKNN" "$train" -k $((items - 1)) --top-n "$items" --out "$tmp/kfit" --device cpu --rank lists --quiet
cmp -s "$tmp/kbig/neighbors.csv" "$tmp/kfit/neighbors.csv" || fail "a clamped -k changed neighbors.csv"
cmp -s "$tmp/kbig/recommendations.csv" "$tmp/kfit/recommendations.csv" || fail "a clamped --top-n changed recommendations.csv"
exit 0
