#!/bin/sh
# api_link.sh — librecknn as a program outside the tree sees it: the
# example (examples/recknn_example.c) builds with only the public headers
# (api/recknn.h, common/rk_status.h, through an include folder of their own)
# and the one archive librecknn.a with the libraries recknn.pc names, runs,
# recommends for every user and answers its prediction.
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
    -o "$tmp/example" 2>"$tmp/cc.err" || { cat "$tmp/cc.err" >&2; fail "the example does not build against librecknn.a"; }
expect_status 0 "$tmp/example"
grep -q "^recknn [0-9]" "$tmp/stdout" || fail "no version line"
[ "$(grep -c '^user [0-4]: item' "$tmp/stdout")" -eq 5 ] || fail "not every user got recommendations"
grep -Eq '^user 2, item 0: [0-9.]+$' "$tmp/stdout" || fail "no prediction"
echo "api_link: the example built against librecknn.a and ran"
