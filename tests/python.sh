#!/bin/sh
# python.sh — the Python module's tests (python/tests/, pytest): the module
# built in this tree (python/recknn/_recknn*.so beside the package's
# __init__.py) against the recknn command built here.  Skipped (77), with the
# reason, where configure built no module (no Python 3 headers or NumPy) or
# pytest is missing.
. "$top_srcdir/tests/setup.sh"
[ -x "$RECKNN" ] || fail "$RECKNN is not built"
so=$(ls "$top_builddir"/python/recknn/_recknn*.so 2>/dev/null | head -1)
[ -n "$so" ] || { echo "SKIP: no Python module was built (configure found no Python 3 headers or NumPy)"; exit 77; }
# the module exports its init function alone (python/_recknn.map): librecknn's names stay inside
if command -v nm >/dev/null 2>&1; then
    other=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRV]$/ {print $3}' | grep -v '^PyInit__recknn$' | head -5)
    [ -z "$other" ] || fail "the Python module exports more than PyInit__recknn: $other"
fi
py=${PYTHON:-python3}
"$py" -c "import pytest" 2>/dev/null || { echo "SKIP: $py has no pytest (Debian: python3-pytest)"; exit 77; }
abs() { (cd "$(dirname "$1")" && echo "$(pwd)/$(basename "$1")"); }
cmd=$(abs "$RECKNN")
src=$(cd "$top_srcdir" && pwd)
mkdir -p "$tmp/pkg/recknn"
cp "$src/python/recknn/__init__.py" "$so" "$tmp/pkg/recknn/"
# the tests' own data in $tmp; the command and the sample ratings from the tree
( cd "$tmp" && PYTHONPATH="$tmp/pkg" RECKNN="$cmd" RECKNN_SAMPLE="$src/sample_data" \
    "$py" -m pytest -q -p no:cacheprovider "$src/python/tests" ) || fail "the Python module's tests failed"
