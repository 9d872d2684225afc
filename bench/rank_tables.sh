#!/bin/sh
# bench/rank_tables.sh RECKNN DATA_DIR OUT_DIR [default|protocol|families]...
# The ranking-model tables of EVALUATION.md, measured by running recknn on the public sets of
# DATA_DIR (ml-100k/u.data, ml-latest-small/ratings.csv, filmtrust/ratings.txt,
# ciaodvd/movie-ratings.txt).  Markdown on standard output; every run's metrics.json stays in
# OUT_DIR.  Sections (default: all three):
#   default   the nightly command, top-10, --holdout 0.2 --split user --seed 1, against
#             most-popular, beside --rank lists (top-N from the --metric lists) and --tune
#   protocol  the ML-100k protocol of Microsoft's recommenders benchmark: u.data, each user's
#             ratings split 75/25 at random, top-10 of unseen items, every test item relevant
#             (--relevance 1), mean over seeds 1..5
#   families  tuned families under held-out users (--split users --holdout 0.2), NDCG@100,
#             mean over seeds 1..3: the plain cosine, BM25 and rp3beta grids of --tune
#   negative  --negative no against yes (signed lists) for top-N from correlation lists
#             (--rank lists), top-10, --holdout 0.2 --split user --seed 1 (not in the default run)
set -eu
RECKNN=$1; DATA=$2; OUT=$3; shift 3
[ $# -ge 1 ] || set -- default protocol families
mkdir -p "$OUT"
PY=/usr/bin/python3

# input NAME: the file and its options
input() {
    case $1 in
    ml-100k) echo "$DATA/ml-100k/u.data" ;;
    ml-latest-small) echo "$DATA/ml-latest-small/ratings.csv" ;;
    filmtrust) echo "$DATA/filmtrust/ratings.txt" ;;
    ciaodvd) echo "$DATA/ciaodvd/movie-ratings.txt --columns 1,2,5" ;;
    esac
}

# run TAG ARGS...: one run into OUT/TAG; prints its metrics.json path
run() {
    tag=$1; shift
    # shellcheck disable=SC2068
    "$RECKNN" $@ --device cpu --no-neighbors --quiet --out "$OUT/$tag" >/dev/null 2>"$OUT/$tag.err" ||
        { echo "failed: $tag: $(tail -1 "$OUT/$tag.err")" >&2; exit 1; }
    echo "$OUT/$tag/metrics.json"
}

# values FILE KEY...: the summary means of the keys (model), then the baseline's
values() {
    $PY - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
m, b = d["summary"], d["summary_baseline_popular"] or {}
print(" ".join("%.4f" % m[k]["mean"] for k in sys.argv[2:]), " ".join("%.4f" % b[k]["mean"] for k in sys.argv[2:]))
PY
}

section_default() {
    echo "### The default nightly command against most-popular"
    echo
    echo "\`recknn FILE --holdout 0.2 --split user --seed 1\` (top-10, relevance >= 4), on the CPU."
    echo
    echo "| data | default P@10 / NDCG@10 | --rank lists | --tune | most popular | default ÷ popular (NDCG) |"
    echo "|---|---|---|---|---|---|"
    for set in ml-100k ml-latest-small filmtrust ciaodvd; do
        f=$(input $set)
        a=$(values "$(run "def-$set" $f --holdout 0.2 --split user --seed 1)" precision ndcg)
        l=$(values "$(run "lists-$set" $f --holdout 0.2 --split user --seed 1 --rank lists)" precision ndcg)
        t=$(values "$(run "tune-$set" $f --holdout 0.2 --split user --seed 1 --tune)" precision ndcg)
        echo "$set $a | $l | $t" | awk '{ printf "| %s | %s / %s | %s / %s | %s / %s | %s / %s | %.2f× |\n",
            $1, $2, $3, $7, $8, $12, $13, $4, $5, $3 / $5 }'
    done
    echo
}

# mean over seeds 1..N of precision and NDCG: protocol_row N LABEL ARGS...
protocol_row() {
    n=$1; label=$2; shift 2
    p=0; g=0
    for seed in $(seq 1 "$n"); do
        v=$(values "$(run "ms-$(echo "$label" | tr -c 'a-z0-9' '_')-$seed" "$DATA/ml-100k/u.data" --holdout 0.25 \
            --split user --relevance 1 --seed "$seed" "$@")" precision ndcg)
        p=$(echo "$p $v" | awk '{ print $1 + $2 }')
        g=$(echo "$g $v" | awk '{ print $1 + $3 }')
    done
    echo "| $label | $(echo "$p $n" | awk '{ printf "%.4f", $1 / $2 }') | $(echo "$g $n" | awk '{ printf "%.4f", $1 / $2 }') |"
}

section_protocol() {
    echo "### The ML-100k protocol of Microsoft's recommenders benchmark"
    echo
    echo "\`recknn u.data --holdout 0.25 --split user --relevance 1 --seed S OPTIONS\`, mean over S = 1..5."
    echo
    echo "| recommender | precision@10 | NDCG@10 |"
    echo "|---|---|---|"
    protocol_row 5 "recknn, the default command"
    protocol_row 5 "recknn --tune" --tune
    protocol_row 5 "recknn --tune --tune-rounds 2 --tune-metric precision" --tune --tune-rounds 2 --tune-metric precision
    protocol_row 5 "recknn --rank lists --metric cosine-full -k 20" --rank lists --metric cosine-full -k 20
    protocol_row 5 "recknn --rank lists (top-N from Pearson's lists)" --rank lists
    echo "| SAR (published by the benchmark) | 0.3308 | 0.3825 |"
    echo "| BPR (published by the benchmark) | 0.3882 | 0.4420 |"
    echo
}

section_families() {
    echo "### Tuned item-kNN families under held-out users (NDCG@100)"
    echo
    echo "\`recknn FILE --split users --holdout 0.2 --seed S --top-n 100 --tune --tune-grid G\`, mean over S = 1..3."
    echo
    echo "| data | cosine (plain) | bm25 | rp3beta | full grid | most popular |"
    echo "|---|---|---|---|---|---|"
    for set in ml-100k ml-latest-small; do
        f=$(input $set)
        line="| $set"
        for g in cosine bm25 rp3beta full; do
            s=0; b=0
            for seed in 1 2 3; do
                v=$(values "$(run "fam-$set-$g-$seed" $f --split users --holdout 0.2 --seed $seed --top-n 100 --tune \
                    --tune-grid $g)" ndcg)
                s=$(echo "$s $v" | awk '{ print $1 + $2 }')
                b=$(echo "$b $v" | awk '{ print $1 + $3 }')
            done
            line="$line | $(echo "$s" | awk '{ printf "%.4f", $1 / 3 }')"
        done
        echo "$line | $(echo "$b" | awk '{ printf "%.4f", $1 / 3 }') |"
    done
    echo
}

section_negative() {
    echo "### Negative similarities in top-N (\`--negative\`)"
    echo
    echo "\`recknn FILE --holdout 0.2 --split user --seed 1 --rank lists OPTIONS --negative no|yes\`,"
    echo "top-10, NDCG@10 (precision@10) and its ratio to most-popular's NDCG."
    echo
    echo "| data | OPTIONS | --negative no | --negative yes | change |"
    echo "|---|---|---|---|---|"
    for set in ml-100k ml-latest-small filmtrust ciaodvd; do
        f=$(input $set)
        for opts in "--metric pearson --shrinkage 100 -k 40" "--metric pearson-baseline -k 40" \
                    "--metric pearson-baseline -k 100"; do
            tag="neg-$set-$(echo "$opts" | tr -c 'a-z0-9' '_')"
            n=$(values "$(run "$tag-no" $f --holdout 0.2 --split user --seed 1 --rank lists $opts --negative no)" \
                precision ndcg)
            y=$(values "$(run "$tag-yes" $f --holdout 0.2 --split user --seed 1 --rank lists $opts --negative yes)" \
                precision ndcg)
            echo "$n $y" | awk -v s="$set" -v o="$opts" '{ printf "| %s | %s | %s (%s), %.2f× | %s (%s), %.2f× | %+.1f%% |\n",
                s, o, $2, $1, $2 / $4, $6, $5, $6 / $8, 100 * ($6 / $2 - 1) }'
        done
    done
    echo
}

for s in "$@"; do "section_$s"; done
