#!/bin/sh
# golden_device.sh: on the GPU machine, in one call: build the tree of an
# earlier commit (extracted beforehand into golden-base/ of the working tree:
#   mkdir golden-base && git archive COMMIT | tar -x -C golden-base)
# and this tree, run bench/golden.sh on both with the GPU, make check, and
# time the nightly job of both binaries on a 10M-rating shuffled file.
# Run from the project root: sh bench/golden_device.sh (logs in $OUT).
set -u
. ./.devdeps/env.sh
J=16
(cd golden-base && autoreconf -fi >/dev/null 2>&1 && ./configure --with-cuda >/dev/null && make -j$J >$OUT/base_build.log 2>&1) || echo "BASE BUILD FAILED"
autoreconf -fi >/dev/null 2>&1 && ./configure --with-cuda --with-mpi > $OUT/conf.log 2>&1 && make -j$J >$OUT/build.log 2>&1 || { echo "BUILD FAILED"; tail -30 $OUT/build.log; exit 1; }
sh bench/golden.sh golden-base/recknn golden-base $OUT/golden_base_gpu.txt gpu
GOLDEN_KEEP=$OUT/keep sh bench/golden.sh ./recknn . $OUT/golden_new_gpu.txt gpu
if diff $OUT/golden_base_gpu.txt $OUT/golden_new_gpu.txt > $OUT/golden.diff; then echo "GOLDEN: all $(wc -l < $OUT/golden_new_gpu.txt) checksums equal (cpu and gpu)"; else echo "GOLDEN DIFF: $(grep -c '^<' $OUT/golden.diff) lines"; head -20 $OUT/golden.diff; fi
rm -rf $OUT/keep
make check -j8 > $OUT/check.log 2>&1; grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR)' $OUT/check.log; grep -E '^(FAIL|ERROR)' $OUT/check.log; cp test-suite.log $OUT/ 2>/dev/null
# timing: the same nightly job with both binaries, alternating, 3 runs each
./recknn-synth --users 70000 --items 12000 --ratings 10000000 --seed 5 --shuffle --output /tmp/t10m.csv --quiet
for r in 1 2 3; do for b in base new; do
  bin=./recknn; [ $b = base ] && bin=golden-base/recknn
  $bin /tmp/t10m.csv --device gpu -k 20 --holdout 0.02 --seed 1 --out /tmp/o-$b --quiet
  python3 -c "import json;d=json.load(open('/tmp/o-$b/metrics.json'));t=d['timings_s'];print('$b run $r total %.3f load %.3f sim %.3f rec %.3f eng %.3f' % (t['total'],t['load'],t['similarity'],t['recommend'],d['engine']['wall_s']))"
done; done | tee $OUT/timing.txt
cmp /tmp/o-base/neighbors.csv /tmp/o-new/neighbors.csv && cmp /tmp/o-base/recommendations.csv /tmp/o-new/recommendations.csv && cmp /tmp/o-base/predictions.csv /tmp/o-new/predictions.csv && echo "10M: base and new files identical"
nvidia-smi --query-gpu=name --format=csv,noheader
