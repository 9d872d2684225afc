#!/bin/sh
# gen.sh DIR [SET...] -- write the synthetic benchmark data sets into DIR with recknn-synth.
#   ml20m              DIR/ml20m.csv: ML-20M size, 138,493 users x 26,744 items, 20,000,000 ratings,
#                      sorted by user then item (the generator's default popularity: the top 1% of
#                      items hold about 39% of the ratings, the top item about 53k)
#   ml20m-split        DIR/ml20m-train.csv + DIR/ml20m-test.csv: the same ratings, 10% of each
#                      user's ratings held out (their union is ml20m.csv, reordered)
#   ml20m-random       DIR/ml20m-random.csv: ml20m.csv's ratings in a random order (--shuffle)
#   ml20m-flat         DIR/ml20m-flat.csv: ML-20M size with a flatter popularity head
#                      (--popularity-sd 2.0 --popularity-cap 3500: the top 1% hold about 27%, the top
#                      item about 88k ratings), sorted by user like ml20m
#   ml20m-flat-random  DIR/ml20m-flat-random.csv: ml20m-flat.csv's ratings in a random order
#   netflix            DIR/netflix.csv: Netflix size, 480,189 users x 17,770 items, 100,480,507 ratings
#   netflix-random     DIR/netflix-random.csv: netflix.csv's ratings in a random order
# Default: ml20m, ml20m-split and netflix. The seed is fixed (SEED, default 1), so the files are the
# same on every run on the same platform, whatever THREADS is; a random-order file holds exactly
# the lines of its sorted twin. RECKNN_SYNTH names the generator (default: ./recknn-synth, then
# recknn-synth on PATH). Sizes: about 0.54 GB for each ml20m set, 2.7 GB for each netflix set;
# --shuffle needs memory of about twice the file. The data are synthetic: no MovieLens or Netflix
# ratings.
set -eu
sets="ml20m ml20m-split ml20m-random ml20m-flat ml20m-flat-random netflix netflix-random"
[ $# -ge 1 ] || { echo "usage: $0 DIR [$(echo $sets | sed 's/ /|/g')]..." >&2; exit 2; }
dir=$1; shift
[ $# -ge 1 ] || set -- ml20m ml20m-split netflix
seed=${SEED:-1}
synth=${RECKNN_SYNTH:-}
if [ -z "$synth" ]; then
    if [ -x ./recknn-synth ]; then synth=./recknn-synth; else synth=recknn-synth; fi
fi
threads=${THREADS:+--threads $THREADS}
ml20m="--users 138493 --items 26744 --ratings 20000000"
flat="--popularity-sd 2.0 --popularity-cap 3500"
netflix="--users 480189 --items 17770 --ratings 100480507"
mkdir -p "$dir"
for set in "$@"; do
    case $set in
    ml20m)
        "$synth" $ml20m --seed "$seed" $threads --output "$dir/ml20m.csv" ;;
    ml20m-split)
        "$synth" $ml20m --seed "$seed" $threads \
            --output "$dir/ml20m-train.csv" --test-output "$dir/ml20m-test.csv" --test-fraction 0.1 ;;
    ml20m-random)
        "$synth" $ml20m --seed "$seed" $threads --shuffle --output "$dir/ml20m-random.csv" ;;
    ml20m-flat)
        "$synth" $ml20m $flat --seed "$seed" $threads --output "$dir/ml20m-flat.csv" ;;
    ml20m-flat-random)
        "$synth" $ml20m $flat --seed "$seed" $threads --shuffle --output "$dir/ml20m-flat-random.csv" ;;
    netflix)
        "$synth" $netflix --seed "$seed" $threads --output "$dir/netflix.csv" ;;
    netflix-random)
        "$synth" $netflix --seed "$seed" $threads --shuffle --output "$dir/netflix-random.csv" ;;
    *)
        echo "$0: unknown set '$set' ($sets)" >&2; exit 2 ;;
    esac
done
