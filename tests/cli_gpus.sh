#!/bin/sh
# cli_gpus.sh — several GPUs in one process, and ranks sharing a GPU: the
# files of --gpus 1, --gpus all, --gpus 0,0 (two workers on device 0) and,
# in a build with MPI, mpirun -np 2 on one GPU are those of one plain GPU
# run, byte for byte, with a test file (predictions), top-N (from the
# ranking model and from the lists), user mode and a tiled run, with top-N
# ranked on the GPUs that made the lists and by the earlier path, Pearson's
# workers sharing one symmetric tile (and a worker of it failing after its
# sums: the CPU redoes the rows under --device auto, exit 5 under --device
# gpu); a device beyond the visible ones is exit 5.  Skipped (77)
# where no GPU is usable.
. "$top_srcdir/tests/setup.sh"
[ -x "$RECKNN" ] || fail "$RECKNN is not built"
D="$top_srcdir/sample_data"
gpu_usable "$D/ratings.csv" || { echo "SKIP: no usable GPU: $(cat "$tmp/probe.err")"; exit 77; }
mpi=
if "$RECKNN" --version | grep -q 'MPI: yes' && command -v mpirun >/dev/null 2>&1; then
    mpi="mpirun --oversubscribe"
    [ "$(id -u)" = 0 ] && mpi="$mpi --allow-run-as-root"
fi
"$SYNTH" --users 2000 --items 3000 --ratings 150000 --seed 11 --shuffle --output "$tmp/r.csv" \
    --test-output "$tmp/t.csv" --quiet

same() {
    for f in "$1"/*.csv; do
        cmp -s "$f" "$2/$(basename "$f")" || fail "$2/$(basename "$f") differs from one GPU's"
    done
}
n=0
for opts in "--metric pearson -k 20" "--metric cosine -k 30 --gpu-memory 0.05" "--by user --metric msd -k 10" \
    "--metric pearson -k 20 --rank lists"; do
    n=$((n + 1))
    # shellcheck disable=SC2086 # opts are words
    expect_status 0 "$RECKNN" "$tmp/r.csv" --test "$tmp/t.csv" $opts --device gpu --quiet --out "$tmp/$n.ref"
    [ "$(wc -l < "$tmp/$n.ref/predictions.csv")" -gt 1000 ] || fail "case $n: few predictions"
    for g in 1 all 0,0; do
        # shellcheck disable=SC2086
        expect_status 0 "$RECKNN" "$tmp/r.csv" --test "$tmp/t.csv" $opts --device gpu --gpus "$g" --quiet \
            --out "$tmp/$n.g$g"
        same "$tmp/$n.ref" "$tmp/$n.g$g"
    done
    grep -q '"worker": 1' "$tmp/$n.g0,0/metrics.json" || fail "case $n: --gpus 0,0 ran one worker"
    # Pearson on every item: the two workers share one symmetric tile (each pair summed once between them)
    case $opts in "--metric pearson"*)
        [ "$(grep -c '"engine_detail": "[^"]*shared symmetric' "$tmp/$n.g0,0/metrics.json")" -ge 2 ] ||
            fail "case $n: the workers did not share a symmetric tile" ;;
    esac
    # item top-N ranked on the GPUs that made the lists (the ranking model's, or --rank lists'), and the
    # earlier path (top-N uploading the ratings again, the ranking stage on one GPU) gives the same files
    case $opts in
    *"--by user"*) ;;
    *)
        grep -q '"path": "[^"]*, fused"' "$tmp/$n.g0,0/metrics.json" || fail "case $n: top-N was not fused"
        case $opts in *"--rank lists"*) ;; *)
            grep -q '"stage": "ranking"' "$tmp/$n.g0,0/metrics.json" ||
                fail "case $n: the ranking stage was not shared" ;;
        esac
        # shellcheck disable=SC2086
        expect_status 0 env RECKNN_GPU_FUSED=0 RECKNN_GPU_RANK_SPREAD=0 RECKNN_GPU_PEER=0 RECKNN_GPU_SYMSHARE=0 \
            "$RECKNN" "$tmp/r.csv" --test "$tmp/t.csv" $opts --device gpu --gpus 0,0 --quiet --out "$tmp/$n.old"
        same "$tmp/$n.ref" "$tmp/$n.old"
        ! grep -q 'shared symmetric' "$tmp/$n.old/metrics.json" || fail "case $n: RECKNN_GPU_SYMSHARE=0 shared"
        
        ;;
    esac
    if [ -n "$mpi" ]; then
        # shellcheck disable=SC2086
        expect_status 0 timeout 300 $mpi -np 2 "$RECKNN" "$tmp/r.csv" --test "$tmp/t.csv" $opts --device gpu \
            --quiet --out "$tmp/$n.mpi"
        same "$tmp/$n.ref" "$tmp/$n.mpi"
        grep -q '"ranks": 2' "$tmp/$n.mpi/metrics.json" || fail "case $n: metrics.json lacks the ranks"
    fi
done
# a worker of the shared tile that fails after its sums: under --device auto both workers' rows are
# redone on the CPU (the same files, a note each, in each stage that shared); under --device gpu the job
# fails (exit 5) and writes nothing
expect_status 0 env RECKNN_GPU_SYM_FAULT=1:sums "$RECKNN" "$tmp/r.csv" --test "$tmp/t.csv" --metric pearson -k 20 \
    --device auto --gpus 0,0 --out "$tmp/1.fault"
same "$tmp/1.ref" "$tmp/1.fault"
[ "$(grep -c 'its part ran on the CPU' "$tmp/stderr")" -ge 2 ] || fail "a failed shared tile did not fall back"
expect_status 5 env RECKNN_GPU_SYM_FAULT=1:sums "$RECKNN" "$tmp/r.csv" --test "$tmp/t.csv" --metric pearson -k 20 \
    --device gpu --gpus 0,0 --quiet --out "$tmp/1.faultgpu"
grep -q "RECKNN_GPU_SYM_FAULT\|another GPU's part" "$tmp/stderr" || fail "the shared tile's failure is not named"
[ ! -e "$tmp/1.faultgpu/recommendations.csv" ] || fail "a failed job wrote its files"
expect_status 5 "$RECKNN" "$tmp/r.csv" --device gpu --gpus 0,63 --quiet --out "$tmp/bad"
grep -q "63" "$tmp/stderr" || fail "a missing device is not named"
echo "cli_gpus: $n cases identical under --gpus 1, all, 0,0${mpi:+ and mpirun -np 2}"
