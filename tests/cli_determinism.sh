#!/bin/sh
# cli_determinism.sh — the same input and options give byte-identical output
# files: across two runs and across --threads 1, 3 and the default, for
# every metric and prediction mode, with --holdout and with --folds 3
# (every fold's files); metrics.json compared without its timings (and
# without the options that name the thread count and the folder).  Then two
# GPU runs against each other, when a GPU is usable.
. "$top_srcdir/tests/setup.sh"
DATA="$top_srcdir/sample_data/ratings.csv"

[ -x "$RECKNN" ] || fail "$RECKNN is not built"
[ -x "$SYNTH" ] || fail "$SYNTH is not built"
# sample_data is not in the tarball: the same command as its README makes it
if [ ! -r "$DATA" ]; then
    DATA="$tmp/ratings.csv"
    "$SYNTH" --users 600 --items 1500 --ratings 36000 --seed 42 --output "$DATA" \
        --test-output "$tmp/test.csv" --test-fraction 0.1 --quiet
fi

# metrics.json without what may differ between equal runs: times, rates,
# the engines' free-text details (stage times), the thread count and the
# output folder
norm() {
    sed -E -e 's/"(timings_s|load_detail_s)": \{[^}]*\}/"\1": T/g' \
        -e 's/"([a-z_]*_s)": [-+0-9.eE]+/"\1": T/g' \
        -e 's/"([a-z_]*detail)": "[^"]*"/"\1": T/g' \
        -e 's/"threads": [0-9]+/"threads": T/' \
        -e 's/"out": "[^"]*"/"out": T/' "$1"
}

# same A B WHAT: the folders A and B hold the same files with the same bytes
same() {
    [ "$(ls -A "$1")" = "$(ls -A "$2")" ] ||
        fail "$3: different files: $(ls -A "$1" | tr '\n' ' ') / $(ls -A "$2" | tr '\n' ' ')"
    for f in "$1"/*; do
        b=${f##*/}
        case $b in
        metrics.json)
            norm "$f" >"$tmp/m1"
            norm "$2/$b" >"$tmp/m2"
            grep -q '"rmse"' "$tmp/m1" || fail "$3: metrics.json has no rmse after normalising"
            cmp -s "$tmp/m1" "$tmp/m2" || { diff "$tmp/m1" "$tmp/m2" >&2 || :; fail "$3: metrics.json differs"; }
            ;;
        *)
            [ -s "$f" ] || fail "$3: $b is empty"
            cmp -s "$f" "$2/$b" || fail "$3: $b differs"
            ;;
        esac
    done
}

# run DIR ARGS...: one run into DIR (replaced)
run() {
    d=$1
    shift
    rm -rf "$d"
    expect_status 0 "$RECKNN" "$@" --out "$d" --quiet
}

n=0
for metric in pearson pearson-baseline cosine msd euclidean; do
    for mode in basic means baseline; do
        # --holdout: two default runs, then 1, 2 and 3 threads
        set -- "$DATA" --device cpu --metric $metric --predict $mode -k 15 --holdout 0.2 --seed 9
        run "$tmp/h0" "$@"
        [ -s "$tmp/h0/predictions.csv" ] && [ -s "$tmp/h0/neighbors.csv" ] && [ -s "$tmp/h0/recommendations.csv" ] ||
            fail "$metric/$mode: missing outputs"
        run "$tmp/h1" "$@"
        same "$tmp/h0" "$tmp/h1" "$metric/$mode --holdout: two runs"
        # (the default is every core: 2 on the small build machines, so 2 is not repeated)
        for t in 1 3; do
            run "$tmp/h1" "$@" --threads $t
            same "$tmp/h0" "$tmp/h1" "$metric/$mode --holdout: --threads $t"
        done
        # --folds 3 with every fold's files: the default against 1 thread
        set -- "$DATA" --device cpu --metric $metric --predict $mode -k 15 --folds 3 --write-folds --seed 9
        run "$tmp/f0" "$@"
        [ "$(ls "$tmp/f0" | grep -c 'fold[123]\.csv$')" -eq 9 ] || fail "$metric/$mode: fold files: $(ls "$tmp/f0")"
        run "$tmp/f1" "$@" --threads 1
        same "$tmp/f0" "$tmp/f1" "$metric/$mode --folds 3: --threads 1"
        n=$((n + 1))
    done
done
[ $n -eq 15 ] || fail "ran $n of 15 metric/mode pairs"

# A shuffled synthetic file (lines in a random order), per-user and temporal splits.
"$SYNTH" --users 400 --items 900 --ratings 30000 --seed 21 --shuffle --output "$tmp/shuf.csv" --quiet
for split in ratings user temporal; do
    set -- "$tmp/shuf.csv" --device cpu --holdout 0.25 --split $split --seed 4 --baseline popular
    run "$tmp/s0" "$@"
    for t in 1 2; do
        run "$tmp/s1" "$@" --threads $t
        same "$tmp/s0" "$tmp/s1" "shuffled --split $split: --threads $t"
    done
done

# ---- GPU: two runs give the same bytes (skipped without a usable GPU) -----------------------
set +e
"$RECKNN" "$DATA" --device gpu --out "$tmp/g0" --quiet -k 15 --holdout 0.2 --seed 9 >/dev/null 2>"$tmp/stderr"
got=$?
set -e
if [ $got -eq 5 ]; then
    echo "no usable GPU: GPU determinism skipped ($(head -1 "$tmp/stderr"))" >&2
    exit 0
fi
[ $got -eq 0 ] || { cat "$tmp/stderr" >&2; fail "--device gpu: exit status $got"; }
for metric in pearson pearson-baseline cosine msd euclidean; do
    for mode in basic means baseline; do
        set -- "$DATA" --device gpu --metric $metric --predict $mode -k 15 --holdout 0.2 --seed 9
        run "$tmp/g0" "$@"
        run "$tmp/g1" "$@"
        same "$tmp/g0" "$tmp/g1" "GPU $metric/$mode --holdout: two runs"
    done
    set -- "$DATA" --device gpu --metric $metric -k 15 --folds 3 --write-folds --seed 9
    run "$tmp/g0" "$@"
    run "$tmp/g1" "$@"
    same "$tmp/g0" "$tmp/g1" "GPU $metric --folds 3: two runs"
done
for route in kernel spgemm; do
    set -- "$DATA" --device gpu --gpu-topn $route -k 15 --holdout 0.2 --seed 9
    run "$tmp/g0" "$@"
    run "$tmp/g1" "$@"
    same "$tmp/g0" "$tmp/g1" "GPU --gpu-topn $route: two runs"
done
echo "GPU determinism checked" >&2
exit 0
