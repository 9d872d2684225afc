#!/bin/sh
# gen.sh DIR [SET...] -- write the synthetic benchmark data sets into DIR with recknn-synth.
#   ml20m        DIR/ml20m.csv: ML-20M size, 138,493 users x 26,744 items, 20,000,000 ratings
#   ml20m-split  DIR/ml20m-train.csv + DIR/ml20m-test.csv: the same ratings, 10% of each
#                user's ratings held out (their union is ml20m.csv, reordered)
#   netflix      DIR/netflix.csv: Netflix size, 480,189 users x 17,770 items, 100,480,507 ratings
#   ml20m-random, netflix-random   the same ratings as ml20m / netflix, lines in a random order
#                (recknn-synth --shuffle): nightly exports come in any order
#   ml20m-flat   ML-20M size with a flatter popularity head (--popularity-sd 2.0
#                --popularity-cap 3500: the top 1% of items hold 27% of the ratings and the
#                top item has 88k, against 39% and 53k for ml20m; real ML-20M lies between)
#   ml20m-flat-random  the same, shuffled
#   wide-random  issue 22's large catalogue: 2,000,000 users x 200,000 items, 300,000,000 ratings,
#                shuffled (about 8 GB)
# Default: ml20m, ml20m-split, netflix. The seed is fixed (SEED, default 1), so the files are the same on every
# run on the same platform, whatever THREADS is. RECKNN_SYNTH names the generator (default:
# ./recknn-synth, then recknn-synth on PATH). Sizes: about 0.54 GB (ml20m), 0.54 GB
# (ml20m-split), 2.7 GB (netflix). The data are synthetic: no MovieLens or Netflix ratings.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 DIR [ml20m|ml20m-split|netflix]..." >&2; exit 2; }
dir=$1; shift
[ $# -ge 1 ] || set -- ml20m ml20m-split netflix
seed=${SEED:-1}
synth=${RECKNN_SYNTH:-}
if [ -z "$synth" ]; then
    if [ -x ./recknn-synth ]; then synth=./recknn-synth; else synth=recknn-synth; fi
fi
threads=${THREADS:+--threads $THREADS}
mkdir -p "$dir"
for set in "$@"; do
    shuffle=
    case $set in *-random) shuffle=--shuffle ;; esac
    case $set in
    ml20m)
        "$synth" --users 138493 --items 26744 --ratings 20000000 --seed "$seed" $threads \
            --output "$dir/ml20m.csv" ;;
    ml20m-split)
        "$synth" --users 138493 --items 26744 --ratings 20000000 --seed "$seed" $threads \
            --output "$dir/ml20m-train.csv" --test-output "$dir/ml20m-test.csv" --test-fraction 0.1 ;;
    netflix|netflix-random)
        "$synth" --users 480189 --items 17770 --ratings 100480507 --seed "$seed" $threads \
            $shuffle --output "$dir/$set.csv" ;;
    ml20m-random)
        "$synth" --users 138493 --items 26744 --ratings 20000000 --seed "$seed" $threads \
            --shuffle --output "$dir/ml20m-random.csv" ;;
    wide-random)
        "$synth" --users 2000000 --items 200000 --ratings 300000000 --seed "$seed" $threads \
            --shuffle --output "$dir/wide-random.csv" ;;
    ml20m-flat|ml20m-flat-random)
        "$synth" --users 138493 --items 26744 --ratings 20000000 --seed "$seed" $threads \
            --popularity-sd 2.0 --popularity-cap 3500 $shuffle --output "$dir/$set.csv" ;;
    *)
        echo "$0: unknown set '$set' (ml20m, ml20m-random, ml20m-split, ml20m-flat, ml20m-flat-random," \
            "netflix, netflix-random, wide-random)" >&2; exit 2 ;;
    esac
done
