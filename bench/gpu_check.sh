#!/bin/sh
# gpu_check.sh LOGDIR -- on the GPU machine: build with CUDA, run make check
# (GPU tests included), then compute-sanitizer memcheck and racecheck over
# the GPU tests ($GPU_CHECK_TESTS, default all six).  Full logs go to LOGDIR;
# a short table is printed last.
# Expects the build dependencies that machine lacks in .devdeps/ (see README).
set -u
log=${1:?usage: gpu_check.sh LOGDIR}
mkdir -p "$log"
[ -f .devdeps/env.sh ] && . ./.devdeps/env.sh
j=$(nproc)
t0=$(date +%s)
{ autoreconf -fi && ./configure --with-cuda && make -j"$j"; } >"$log/build.log" 2>&1 || { tail -40 "$log/build.log"; exit 1; }
t1=$(date +%s)
make -j"$j" check >"$log/check.log" 2>&1
check_rc=$?
cp test-suite.log "$log/" 2>/dev/null
for f in tests/*.log; do cp "$f" "$log/" 2>/dev/null; done
t2=$(date +%s)
mc=0
rc=0
for t in ${GPU_CHECK_TESTS:-test_gpu test_gpu_topn test_gpu_sparse test_gpu_subset test_gpu_full test_gpu_rbc}; do
    [ -x "./tests/$t" ] || continue
    RK_GPU_TEST_QUICK=1 compute-sanitizer --tool memcheck --leak-check full "./tests/$t" >>"$log/memcheck.log" 2>&1 || mc=$?
    RK_GPU_TEST_QUICK=1 compute-sanitizer --tool racecheck "./tests/$t" >>"$log/racecheck.log" 2>&1 || rc=$?
done
t3=$(date +%s)
echo "== gpu_check =="
grep -E '^(PASS|FAIL|SKIP|ERROR|XFAIL|XPASS):' "$log/check.log"
grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR)' "$log/check.log"
echo "make check: exit $check_rc ($((t2 - t1)) s; build $((t1 - t0)) s)"
echo "memcheck: exit $mc; $(grep -E 'ERROR SUMMARY' "$log/memcheck.log" | tr '\n' ' ')"
echo "racecheck: exit $rc; $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$log/racecheck.log" | tr '\n' ' ') ($((t3 - t2)) s)"
