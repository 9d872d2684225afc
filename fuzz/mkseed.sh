#!/bin/sh
# fuzz/mkseed.sh BUILDDIR — regenerate the seed corpus in fuzz/corpus/ (the
# committed bytes came from it): a few lines of every loader format, each
# after the target's 4 option bytes (fuzz/fuzz_load.c says what they mean),
# and small model files saved by BUILDDIR's recknn.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: $0 BUILDDIR}
L="$src/fuzz/corpus/load"
M="$src/fuzz/corpus/mfile"
mkdir -p "$L" "$M"
ml='userId,movieId,rating,timestamp
1,10,4.0,964982703
1,20,3.5,964982224
2,10,5.0,964983815
2,30,2.0,964982931
3,20,1.0,964982400
3,30,4.5,964982401
'
# option bytes: format digit, flags, csv settings, dup policy/chunks/sort
printf '0@@@%s' "$ml" > "$L/auto_movielens"
printf '1B@@%s' "$ml" | sed 's/$/\r/' > "$L/movielens_crlf_time"
printf '1@@F%s1,10,2.0,964990000\n' "$ml" > "$L/movielens_dup_mean_chunks"
printf '1I@B%sx,20,3.0,1\n1,30,9.0,2\n1,40\n' "$ml" > "$L/movielens_skip_scale"
printf '2B@@1::1193::5::978300760\n1::661::3::978302109\n2::1193::4::978298413\n3::3408::4::978298124\n' > "$L/dat"
printf '3@@@196\t242\t3\t881250949\n186\t302\t3\t891717742\n22\t377\t1\t878887116\n196\t377\t4\t881251949\n' > "$L/tsv"
printf '4B@@1:\n1488844,3,2005-09-06\n822109,5,2005-05-13\n2:\n1488844,4,2005-09-07\n30878,4,2005-12-26\n' > "$L/netflix"
printf '5@2@user;item;score\nalice;matrix;4.5\nbob;matrix;3\nbob;alien;2.5\ncarol;alien;5\n' > "$L/csv_semicolon_header"
printf '5@q@userId,movieId,rating,timestamp\nu1,i1,1,10\nu2,i1,2,11\nu2,i2,3,12\n' > "$L/csv_named_columns"
printf '5R @10 7 2.5 99\n10 8 3.5 98\n-3 7 1 97\n11 8 4 96\n' > "$L/csv_guess_space_twothreads"
# models: pearson without baselines (numeric ids), pearson-baseline with them
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%s' "$ml" > "$tmp/r.csv"
"$build/recknn" "$tmp/r.csv" --out "$tmp/o1" -k 2 --save-model "$M/pearson_k2.rkm" --quiet
printf 'user,item,rating\nann,dune,4\nann,heat,2\nbo,dune,5\nbo,heat,1\nbo,up,3\ncy,up,4\ncy,heat,2\n' > "$tmp/s.csv"
"$build/recknn" "$tmp/s.csv" --out "$tmp/o2" -k 3 --metric pearson-baseline --save-model "$M/pbaseline_strings.rkm" --quiet
