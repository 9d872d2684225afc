#!/bin/sh
# cli_mpi.sh — recknn under mpirun (a build --with-mpi; skipped otherwise),
# on the CPU engine:
#   -np 1, 2 and 3 write the files of one plain process, byte for byte:
#     lists, predictions and recommendations, for a test file, a holdout
#     with the baseline predictor, folds, user mode, --items and --users
#     subsets, and a saved model; with every --mpi-load mode (shard: each
#     rank parses a part of the file); bad lines skipped are reported with
#     one process's lines and reason;
#   a rank that fails (RECKNN_FAULT=R:fail:STAGE) stops every rank with
#     exit status 5, a message naming the rank, and no file in --out;
#   a rank that is killed (RECKNN_FAULT=R:kill:STAGE, SIGKILL) ends the job
#     (mpirun names the rank and the signal), non-zero, no file in --out;
#   bad input under mpirun is exit 3 with the file and line named once;
#   --model and --approx are refused across ranks (exit 2);
#   the ranking model's stage (the default) is shared among the ranks too;
#   with top-N shared among the ranks recommendations.csv is
#     written in slices (each rank its users' rows, at their byte offsets;
#     folds and user mode too)
#     or by rank 0 alone (--mpi-output root): the same bytes; a rank that
#     cannot open the file, or whose write went elsewhere, has rank 0 write
#     its slice (RECKNN_SLICE_FAULT).
# MPIEXEC: the launcher (default mpirun); as root Open MPI needs
# --allow-run-as-root, and on 2 cores --oversubscribe for 3 ranks.
. "$top_srcdir/tests/setup.sh"
[ -x "$RECKNN" ] || fail "$RECKNN is not built"
"$RECKNN" --version | grep -q 'MPI: yes' || { echo "SKIP: recknn was built without MPI"; exit 77; }
MPIEXEC=${MPIEXEC:-mpirun}
command -v "$MPIEXEC" >/dev/null 2>&1 || fail "$MPIEXEC not found, though recknn was built with MPI"
mpi_flags="--oversubscribe"
[ "$(id -u)" = 0 ] && mpi_flags="$mpi_flags --allow-run-as-root"
# one process per rank, whatever cores there are; each rank two threads
export OMP_NUM_THREADS=2
# mpirun NP ARGS...: recknn under NP ranks, bounded so that a hang fails the test
mpi() {
    np=$1
    shift
    # shellcheck disable=SC2086 # mpi_flags are words
    timeout 300 "$MPIEXEC" $mpi_flags -np "$np" "$RECKNN" "$@"
}

D="$top_srcdir/sample_data"
"$SYNTH" --users 300 --items 500 --ratings 12000 --seed 7 --shuffle --output "$tmp/r.csv" \
    --test-output "$tmp/t.csv" --quiet
printf '%s\n' 33 2 999999 17 5 33 > "$tmp/ids.txt" # a repeat and an unknown id

# same DIR_A DIR_B: every result file of A is in B with the same bytes, and B has no other
same() {
    for f in "$1"/*.csv "$1"/*.rkm; do
        [ -e "$f" ] || continue
        b=$(basename "$f")
        cmp -s "$f" "$2/$b" || fail "$2/$b differs from one process's"
    done
    for f in "$2"/*.csv "$2"/*.rkm; do
        [ -e "$f" ] || continue
        [ -e "$1/$(basename "$f")" ] || fail "$2 has $(basename "$f"), one process has not"
    done
}
# case NAME ARGS...: one process, then -np 1, 2, 3 (every load mode at 2 and 3)
n_cases=0
case_() {
    name=$1
    shift
    expect_status 0 "$RECKNN" "$@" --device cpu --quiet --out "$tmp/$name.1p"
    ls "$tmp/$name.1p"/*.csv >/dev/null 2>&1 || fail "$name: one process wrote no file"
    for np in 1 2 3; do
        for load in each bcast shard; do
            [ "$np" = 1 ] && [ "$load" != each ] && continue
            expect_status 0 mpi "$np" "$@" --device cpu --quiet --mpi-load "$load" --out "$tmp/$name.$np.$load"
            same "$tmp/$name.1p" "$tmp/$name.$np.$load"
        done
    done
    n_cases=$((n_cases + 1))
}

case_ test "$D/ratings.csv" --test "$D/test.csv" --metric pearson -k 20 --save-model "$tmp/m.rkm"
cp "$tmp/m.rkm" "$tmp/test.1p/model.rkm"
for np in 2 3; do
    expect_status 0 mpi "$np" "$D/ratings.csv" --test "$D/test.csv" --device cpu --quiet \
        --save-model "$tmp/test.$np.each/model.rkm" --out "$tmp/test.$np.each"
    same "$tmp/test.1p" "$tmp/test.$np.each"
done
case_ holdout "$tmp/r.csv" --holdout 0.2 --seed 3 --metric pearson-baseline --predict baseline -k 10 --top-n 5
case_ folds "$tmp/r.csv" --folds 3 --seed 1 --write-folds --metric cosine -k 15
case_ byuser "$tmp/r.csv" --test "$tmp/t.csv" --by user --metric msd -k 12
case_ items "$tmp/r.csv" --items "$tmp/ids.txt" --top-n 0 --metric jaccard -k 30
case_ users "$tmp/r.csv" --test "$tmp/t.csv" --users "$tmp/ids.txt" --top-n 7
case_ uusers "$tmp/r.csv" --by user --users "$tmp/ids.txt" -k 8
case_ kbig "$tmp/r.csv" --test "$tmp/t.csv" -k 600 --top-n 600 # k and N above the item count
# top-N from the lists, shared among the ranks: recommendations.csv written in slices
case_ lists "$tmp/r.csv" --test "$tmp/t.csv" --rank lists --metric cosine -k 25 --top-n 8 --mpi-output slices
# bad lines skipped, only in the second half (the parts of ranks 1 and 2 count their lines from the
# lines before them): the same lines and reason in metrics.json
awk 'NR > 7000 && NR % 97 == 5 { print $0 ",x"; next } NR > 7000 && NR % 89 == 7 { print "1,2,many"; next }
     { print }' "$tmp/r.csv" \
    > "$tmp/rbad.csv"
case_ skipbad "$tmp/rbad.csv" --skip-bad-lines --test "$tmp/t.csv" -k 10
for np in 2 3; do
    for m in skipbad.1p "skipbad.$np.shard"; do
        { grep -E '^ *"(bad_lines|first_bad_reason)"' "$tmp/$m/metrics.json"
          grep -o '"skipped_lines": [0-9]*' "$tmp/$m/metrics.json"; } > "$tmp/$m.bad"
    done
    grep -q '"line": ' "$tmp/skipbad.1p.bad" || fail "metrics.json reports no bad lines"
    cmp -s "$tmp/skipbad.1p.bad" "$tmp/skipbad.$np.shard.bad" ||
        { diff "$tmp/skipbad.1p.bad" "$tmp/skipbad.$np.shard.bad" >&2; fail "-np $np shard: other bad lines"; }
done
[ "$n_cases" = 10 ] || fail "ran $n_cases cases"
# the files are not all empty: the runs above compared something
[ "$(wc -l < "$tmp/test.2.each/recommendations.csv")" -gt 1000 ] || fail "few recommendations"
[ "$(wc -l < "$tmp/holdout.3.bcast/predictions.csv")" -gt 1000 ] || fail "few predictions"
# metrics.json has every part, and says how the ranks loaded
grep -q '"ranks": 3' "$tmp/test.3.bcast/metrics.json" || fail "metrics.json lacks the rank count"
grep -q '"load": "bcast"' "$tmp/test.3.bcast/metrics.json" || fail "metrics.json lacks the load mode"
grep -q '"load": "shard"' "$tmp/test.3.shard/metrics.json" || fail "metrics.json: the file was not read in parts"
# the ranking model's lists and top-N (the default) are shared among the ranks too, and its
# recommendations written in slices
grep -q '"stage": "ranking", "rank": 2,' "$tmp/test.3.each/metrics.json" || fail "the ranking stage is not shared"
# on one host --mpi-output auto lets rank 0 format every row; slices give the same bytes
grep -q '"output": null' "$tmp/test.3.bcast/metrics.json" || fail "auto on one host: slices"
expect_status 0 mpi 3 "$D/ratings.csv" --test "$D/test.csv" --metric pearson -k 20 --device cpu --quiet \
    --mpi-output slices --save-model "$tmp/test.3.slices/model.rkm" --out "$tmp/test.3.slices"
same "$tmp/test.1p" "$tmp/test.3.slices"
grep -q '"slices": 3, "written_by_their_rank": 3,' "$tmp/test.3.slices/metrics.json" || fail "no slices (ranking)"
# the ranks of one host share its cores: each takes half of them (two ranks, not bound, no
# OMP_NUM_THREADS), or what its binding leaves it
online=$(getconf _NPROCESSORS_ONLN)
avail=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc) # nproc itself honours OMP_NUM_THREADS
want=$((online / 2))
[ "$want" -ge 1 ] || want=1
[ "$want" -le "$avail" ] || want=$avail
# shellcheck disable=SC2086 # mpi_flags are words
env -u OMP_NUM_THREADS timeout 300 "$MPIEXEC" $mpi_flags --bind-to none -np 2 "$RECKNN" "$tmp/r.csv" \
    --device cpu --quiet --out "$tmp/shares" >"$tmp/stdout" 2>"$tmp/stderr" || { cat "$tmp/stderr" >&2; fail "shares"; }
grep -q "\"threads\": $want," "$tmp/shares/metrics.json" ||
    fail "two ranks of $online cores: not $want threads each ($(grep -o '"threads": [0-9]*' "$tmp/shares/metrics.json"))"
# auto: every rank reads the file whole
expect_status 0 mpi 2 "$tmp/r.csv" --device cpu --quiet --out "$tmp/auto2"
grep -q '"load": "each"' "$tmp/auto2/metrics.json" || fail "auto: the file was not read whole by every rank"

# ---- recommendations.csv in slices: each rank writes its users' rows at their byte offsets ----------
lists_args="$tmp/r.csv --test $tmp/t.csv --rank lists --metric cosine -k 25 --top-n 8 --device cpu --quiet"
slices_args="$lists_args --mpi-output slices"
for np in 2 3; do
    grep -q "\"output\": {\"mode\": \"slices\", \"slices\": $np, \"written_by_their_rank\": $np," \
        "$tmp/lists.$np.each/metrics.json" || fail "-np $np: metrics.json reports no $np slices by their rank"
    # shellcheck disable=SC2086 # lists_args are words
    expect_status 0 mpi "$np" $lists_args --mpi-output root --out "$tmp/lists.$np.root"
    same "$tmp/lists.1p" "$tmp/lists.$np.root"
    grep -q '"output": null' "$tmp/lists.$np.root/metrics.json" || fail "--mpi-output root: slices reported"
done
# every fold's file in slices, and user mode's
expect_status 0 mpi 3 "$tmp/r.csv" --folds 3 --seed 1 --write-folds --metric cosine -k 15 --device cpu --quiet \
    --mpi-output slices --out "$tmp/folds.slices"
same "$tmp/folds.1p" "$tmp/folds.slices"
expect_status 0 mpi 2 "$tmp/r.csv" --test "$tmp/t.csv" --by user --metric msd -k 12 --device cpu --quiet \
    --mpi-output slices --out "$tmp/byuser.slices"
same "$tmp/byuser.1p" "$tmp/byuser.slices"
grep -q '"slices": 2, "written_by_their_rank": 2,' "$tmp/byuser.slices/metrics.json" || fail "user mode: no slices"
# a rank that cannot open the file sends its slice to rank 0; a slice written elsewhere (another
# host's folder of the same name) is found by rank 0's read-back and sent again
for fault in 1:unreachable 1:lost 2:lost; do
    # shellcheck disable=SC2086 # slices_args are words
    RECKNN_SLICE_FAULT=$fault expect_status 0 mpi 3 $slices_args --out "$tmp/lists.$fault"
    same "$tmp/lists.1p" "$tmp/lists.$fault"
    grep -q '"written_by_their_rank": 2,' "$tmp/lists.$fault/metrics.json" ||
        fail "$fault: metrics.json does not count the slice rank 0 wrote"
done
# a rank that fails after its top-N: no file, no temporary file
for who in 0 2; do
    # shellcheck disable=SC2086 # slices_args are words
    RECKNN_FAULT="$who:fail:topn" expect_status 5 mpi 3 $slices_args --out "$tmp/lists.fail.$who"
    [ ! -e "$tmp/lists.fail.$who" ] || [ -z "$(ls -A "$tmp/lists.fail.$who")" ] ||
        fail "files left after rank $who failed: $(ls -A "$tmp/lists.fail.$who")"
done

# ---- a rank that fails, a rank that dies -------------------------------------------------
for stage in lists topn; do
    for who in 0 1; do
        RECKNN_FAULT="$who:fail:$stage" expect_status 5 mpi 3 "$tmp/r.csv" --test "$tmp/t.csv" --device cpu \
            --quiet --out "$tmp/fail.$stage.$who"
        grep -q "rank $who on .*fault injected by RECKNN_FAULT at $stage" "$tmp/stderr" ||
            { cat "$tmp/stderr" >&2; fail "the failure of rank $who at $stage is not named"; }
        [ ! -e "$tmp/fail.$stage.$who" ] || [ -z "$(ls -A "$tmp/fail.$stage.$who")" ] ||
            fail "files left after rank $who failed: $(ls -A "$tmp/fail.$stage.$who")"
    done
done
# killed: mpirun ends the others (SIGTERM, then SIGKILL a second later: given three here (Open MPI 4), so that
# a loaded machine still tests the SIGTERM path) and names the rank; rank 0 removes its
# temporary files
set +e
OMPI_MCA_odls_base_sigkill_timeout=3 RECKNN_FAULT="1:kill:lists" mpi 3 "$tmp/r.csv" --test "$tmp/t.csv" \
    --device cpu --quiet --out "$tmp/kill" >"$tmp/stdout" 2>"$tmp/stderr"
st=$?
set -e
[ "$st" -ne 0 ] && [ "$st" -ne 124 ] || { cat "$tmp/stderr" >&2; fail "a killed rank: exit status $st"; }
grep -qi "rank 1" "$tmp/stderr" && grep -qi "signal 9\|killed" "$tmp/stderr" ||
    { cat "$tmp/stderr" >&2; fail "mpirun does not name the killed rank and its signal"; }
[ ! -e "$tmp/kill" ] || [ -z "$(ls -A "$tmp/kill")" ] || fail "files left after a killed rank: $(ls -A "$tmp/kill")"
# a run killed outright (SIGKILL) cannot clean up: the next run in the folder removes its hidden
# temporary files
mkdir -p "$tmp/kill"
: > "$tmp/kill/.recommendations.csv.tmp.Zz9Yy8"
expect_status 0 mpi 2 "$tmp/r.csv" --device cpu --quiet --out "$tmp/kill"
[ ! -e "$tmp/kill/.recommendations.csv.tmp.Zz9Yy8" ] || fail "a killed run's temporary file outlived the next run"
[ -s "$tmp/kill/recommendations.csv" ] || fail "the run after a killed one wrote no recommendations"

# ---- bad input under mpirun: the one-process status, the file and line named once ---------------
printf 'userId,movieId,rating\n1,1,4\n2,1,x\n' > "$tmp/bad.csv"
for load in each bcast shard; do
    expect_status 3 mpi 2 "$tmp/bad.csv" --device cpu --mpi-load "$load" --out "$tmp/bad.$load"
    [ "$(grep -c "bad.csv:3" "$tmp/stderr")" = 1 ] || { cat "$tmp/stderr" >&2; fail "$load: the bad line is not named once"; }
    [ ! -e "$tmp/bad.$load" ] || [ -z "$(ls -A "$tmp/bad.$load")" ] || fail "$load: files left after bad input"
done

# ---- refused across ranks --------------------------------------------------------------------
expect_status 2 mpi 2 "$tmp/r.csv" --model "$tmp/m.rkm" --device cpu --out "$tmp/refused"
grep -q "without mpirun" "$tmp/stderr" || fail "--model under 2 ranks: no reason given"
expect_status 2 mpi 2 "$tmp/r.csv" --approx rbc --metric cosine-full --device cpu --out "$tmp/refused"
grep -q "without mpirun" "$tmp/stderr" || fail "--approx under 2 ranks: no reason given"
echo "cli_mpi: $n_cases cases x 7 launches byte-identical; failures and a killed rank stop the run"
