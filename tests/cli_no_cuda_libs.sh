#!/bin/sh
# cli_no_cuda_libs.sh — a CUDA build starts and runs on the CPU on a machine
# without the CUDA libraries: recknn (and a GPU test program) name no CUDA
# library among their NEEDED entries (the runtime is linked statically,
# cuSPARSE is opened at run time); with libcusparse, libcudart, libnvJitLink
# and the driver (libcuda) hidden, --device auto runs on the CPU in silence,
# its files byte for byte those of --device cpu, and --device gpu is exit 5
# naming the missing library.  The libraries are hidden by bind mounts in an
# unprivileged user and mount namespace (unshare -rm): an empty folder over a
# folder of CUDA libraries, an empty file over one that lies among the
# system's libraries.  Where unshare is not permitted, the test hook
# RECKNN_CUSPARSE_LIB points at a missing file instead (said in the output).
# Skipped (77) in a build without CUDA.
. "$top_srcdir/tests/setup.sh"
BIN="$top_builddir/recknn"
[ -x "$BIN" ] || fail "$BIN is not built"
"$BIN" --version | grep -q 'CUDA: yes' || { echo "SKIP: recknn was built without CUDA"; exit 77; }
D="$top_srcdir/sample_data"
CUDA_LIBS_RE='lib(cudart|cusparse|nvJitLink|cuda)\.so'

# (a) no CUDA library among the NEEDED entries
if command -v readelf >/dev/null 2>&1; then
    for b in "$BIN" "$top_builddir/tests/test_gpu"; do
        [ -f "$b" ] || { echo "note: $b is not built: not checked"; continue; }
        readelf -d "$b" >"$tmp/dyn" || fail "readelf -d $b failed"
        grep -q NEEDED "$tmp/dyn" || fail "readelf -d $b lists no NEEDED entry (not a dynamic executable?)"
        if grep NEEDED "$tmp/dyn" | grep -Eq "$CUDA_LIBS_RE"; then
            grep NEEDED "$tmp/dyn" >&2
            fail "$b needs a CUDA library at start-up"
        fi
        echo "$(basename "$b"): NEEDED $(sed -n 's/.*NEEDED.*\[\(.*\)\]/\1/p' "$tmp/dyn" | tr '\n' ' ')"
    done
else
    echo "note: readelf is not installed: the NEEDED entries are not checked"
fi

# The folders of the system's own libraries (those recknn needs), where a
# driver's libcuda usually lies.
{ ldd "$BIN" 2>/dev/null || true; } | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p' |
    while IFS= read -r f; do dirname "$(readlink -f "$f")"; done | sort -u >"$tmp/sysdirs"
# The CUDA libraries recknn could find: those of the loader's cache, of the
# toolkit folder configure found, of LD_LIBRARY_PATH and of the system's
# folders; each named by its real path.
cands() {
    { ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null || true; } |
        sed -n 's/.*=> \(.*\)$/\1/p' | grep -E "/$CUDA_LIBS_RE" || true
    libdir=$(sed -n 's/^#define RK_CUDA_LIBDIR "\(.*\)"$/\1/p' "$top_builddir/config.h" 2>/dev/null || true)
    dirs=$(echo "${LD_LIBRARY_PATH:-}" | tr ':' ' ')
    for d in $libdir $dirs $(cat "$tmp/sysdirs"); do
        for f in "$d"/lib*.so*; do
            if [ -e "$f" ]; then echo "$f" | grep -E "/$CUDA_LIBS_RE" || true; fi
        done
    done
}
cands | while IFS= read -r f; do readlink -f "$f" || true; done | sort -u >"$tmp/libs"
# A folder of CUDA's own (its path says cuda, and recknn needs nothing from
# it) is hidden whole; elsewhere only the CUDA files are.
while IFS= read -r f; do
    d=$(dirname "$f")
    if case $d in *cuda*) true ;; *) false ;; esac && ! grep -qx "$d" "$tmp/sysdirs"; then
        echo "$d"
    else
        echo "$f"
    fi
done <"$tmp/libs" | sort -u >"$tmp/hide"
mkdir "$tmp/empty"
: >"$tmp/empty.so"

# hide.sh HIDE LIBS EMPTY CMD...: in the namespace, bind an empty folder or
# file over each path of HIDE, check that none of LIBS (the CUDA libraries
# found) can be read any more, and run CMD (status 98: the hiding failed).
cat >"$tmp/hide.sh" <<'HIDE'
hide=$1 libs=$2 empty=$3
shift 3
while IFS= read -r p; do
    if [ -d "$p" ]; then src=$empty; else src=$empty.so; fi
    mount --bind "$src" "$p" || { echo "hide: cannot bind over $p" >&2; exit 98; }
done <"$hide"
while IFS= read -r f; do
    [ -s "$f" ] && { echo "hide: $f can still be read" >&2; exit 98; }
done <"$libs"
exec "$@"
HIDE
# shellcheck disable=SC2317 # hidden and run_hidden are called through expect_status
hidden() { unshare -rm sh "$tmp/hide.sh" "$tmp/hide" "$tmp/libs" "$tmp/empty" "$@"; }

if unshare -rm sh -c "mount --bind '$tmp/empty' '$tmp/empty'" >/dev/null 2>&1; then
    mode=namespace
    echo "hiding in a user+mount namespace: $(tr '\n' ' ' <"$tmp/hide")"
    [ -s "$tmp/hide" ] || echo "note: no CUDA library found on this machine: nothing to hide"
    # shellcheck disable=SC2317
    run_hidden() { hidden "$@"; }
else
    mode=hook
    echo "note: unshare -rm is not permitted here: hiding cuSPARSE with RECKNN_CUSPARSE_LIB (a missing file) instead"
    # shellcheck disable=SC2317
    run_hidden() { RECKNN_CUSPARSE_LIB="$tmp/missing/libcusparse.so" "$@"; }
fi

# (b) --device auto: the CPU's files, in silence when the driver is hidden too
# (a GPU still visible, its driver missed by the search, gets a note)
expect_status 0 "$RECKNN" "$D/ratings.csv" --test "$D/test.csv" --device cpu --out "$tmp/cpu" --quiet
expect_status 0 run_hidden "$RECKNN" "$D/ratings.csv" --test "$D/test.csv" --device auto --out "$tmp/auto" --quiet
n=0
for f in "$tmp/cpu"/*.csv; do
    cmp -s "$f" "$tmp/auto/$(basename "$f")" || fail "--device auto without the CUDA libraries: $(basename "$f") differs from --device cpu's"
    n=$((n + 1))
done
[ "$n" -ge 3 ] || fail "only $n files compared"
# no device: the library is never opened, and the reason is the device; a
# device: the reason is the library (tests/test_cusparse_dl checks the
# loader's reasons without a GPU)
grep -Eq '"gpu_unused": "(no CUDA device|[^"]*libcusparse\.so)' "$tmp/auto/metrics.json" ||
    fail "metrics.json's engine.gpu_unused names neither the device nor libcusparse: $(grep -o '"gpu_unused": "[^"]*"' "$tmp/auto/metrics.json")"
echo "auto: $(grep -o '"gpu_unused": "[^"]*"' "$tmp/auto/metrics.json")"
if grep -q '"gpu_unused": "no CUDA device' "$tmp/auto/metrics.json"; then
    if grep -Eqi 'gpu|cuda|cusparse' "$tmp/stderr"; then
        cat "$tmp/stderr" >&2
        fail "--device auto spoke of the GPU on a machine without CUDA libraries"
    fi
else
    [ "$mode" = hook ] || echo "note: a CUDA device is still visible (its driver was not hidden)"
    grep -q 'note: the GPU cannot be used (.*libcusparse\.so' "$tmp/stderr" ||
        { cat "$tmp/stderr" >&2; fail "--device auto with a GPU but no libcusparse: no note naming it"; }
fi

# (c) --device gpu: exit 5, the message names the missing device or library
expect_status 5 run_hidden "$RECKNN" "$D/ratings.csv" --device gpu --out "$tmp/gpu" --quiet
grep -Eq 'no CUDA device|libcusparse\.so' "$tmp/stderr" ||
    { cat "$tmp/stderr" >&2; fail "--device gpu: the message names neither the device nor libcusparse"; }
echo "gpu: $(cat "$tmp/stderr")"
[ ! -e "$tmp/gpu" ] || fail "--device gpu without a GPU left $tmp/gpu"
exit 0
