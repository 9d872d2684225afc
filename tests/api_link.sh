#!/bin/sh
# api_link.sh — librecknn as a program outside the tree sees it: the
# example (examples/recknn_example.c) builds with only the public headers
# (api/recknn.h, common/rk_status.h, through an include folder of their own)
# and the one archive librecknn.a with the libraries recknn.pc names, runs,
# recommends for every user and answers its prediction; linked against the
# shared library librecknn.so.1 alone, it prints the same, and the library
# exports recknn_* and the rk_status functions only.
. "$top_srcdir/tests/setup.sh"
lib="$top_builddir/librecknn.a"
pc="$top_builddir/recknn.pc"
[ -f "$lib" ] || fail "$lib is not built"
[ -f "$pc" ] || fail "$pc is not built"
mkdir -p "$tmp/include/recknn"
cp "$top_srcdir/api/recknn.h" "$top_srcdir/common/rk_status.h" "$tmp/include/recknn/"
libs=$(sed -n 's/^Libs: -L[^ ]* -lrecknn //p' "$pc")
cc=${CC:-cc}
# shellcheck disable=SC2086 # the libraries are words
$cc -std=c11 -Wall -Wextra -Werror -I"$tmp/include/recknn" "$top_srcdir/examples/recknn_example.c" "$lib" $libs \
    -o "$tmp/example" 2>"$tmp/cc.err" ||
    { cat "$tmp/cc.err" >&2; fail "the example does not build against librecknn.a"; }
expect_status 0 "$tmp/example"
grep -q "^recknn [0-9]" "$tmp/stdout" || fail "no version line"
[ "$(grep -c '^user [0-4]: item' "$tmp/stdout")" -eq 5 ] || fail "not every user got recommendations"
grep -Eq '^user 2, item 0: [0-9.]+$' "$tmp/stdout" || fail "no prediction"
cp "$tmp/stdout" "$tmp/static.out"
so="$top_builddir/librecknn.so.1"
[ -f "$so" ] || fail "$so is not built"
mkdir -p "$tmp/lib"
cp "$so" "$tmp/lib/" && ln -s librecknn.so.1 "$tmp/lib/librecknn.so"
# a sanitizer build's library needs its runtime first in the program (the flags recknn.pc names)
sanitize=$(for f in $libs; do case $f in -fsanitize*|-fno-sanitize*) printf '%s ' "$f" ;; esac; done)
# shellcheck disable=SC2086 # the flags are words
$cc -std=c11 -Wall -Wextra -Werror -I"$tmp/include/recknn" "$top_srcdir/examples/recknn_example.c" -L"$tmp/lib" \
    -lrecknn $sanitize -o "$tmp/example_so" 2>"$tmp/cc.err" ||
    { cat "$tmp/cc.err" >&2; fail "the example does not build against librecknn.so"; }
expect_status 0 env LD_LIBRARY_PATH="$tmp/lib" "$tmp/example_so"
cmp -s "$tmp/stdout" "$tmp/static.out" || fail "the shared library's example printed something else"
if command -v nm >/dev/null 2>&1; then
    other=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TDBR]$/ {print $3}' | sed 's/@.*//' |
        grep -v -e '^recknn_' -e '^rk_strerror$' -e '^rk_status_exit_code$' -e '^rk_error_set$' -e '^rk_error_clear$' |
        head -3)
    [ -z "$other" ] || fail "librecknn.so exports internals: $other"
fi
echo "api_link: the example built against librecknn.a and librecknn.so.1 and ran"
