#!/bin/sh
# fuzz/replay.sh — make check's hook in an --enable-fuzz build: every seed and
# every kept crash (fuzz/regress/) must run clean through its target.
exec "$top_srcdir/fuzz/run.sh" 0
