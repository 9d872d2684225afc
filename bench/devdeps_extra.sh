#!/bin/sh
# devdeps_extra.sh: after ../shared/tools/device-deps.sh, add the libraries
# that the GPU machine lacks and recknn needs since the house-plan issue
# (libxxhash, libjansson; zlib and libzstd since issue 20) to .devdeps/, as static libraries with pkg-config
# files, so that `. ./.devdeps/env.sh && ./configure` finds them there.
# Run from the project root on this machine (installs the -dev packages).
set -eu
[ -d .devdeps ] || { echo "devdeps_extra.sh: run ../shared/tools/device-deps.sh first" >&2; exit 1; }
need=
for p in libxxhash-dev libjansson-dev zlib1g-dev libzstd-dev; do dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"; done
[ -z "$need" ] || { apt-get update -qq >/dev/null && apt-get install -y -qq $need >/dev/null; }
lib=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
cp /usr/include/xxhash.h /usr/include/jansson.h /usr/include/jansson_config.h /usr/include/zlib.h \
    /usr/include/zstd.h /usr/include/zstd_errors.h .devdeps/include/
cp "$(dirname "$(readlink -f /usr/include/zlib.h)")/zconf.h" .devdeps/include/ 2>/dev/null ||
    cp /usr/include/"$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)"/zconf.h .devdeps/include/
cp "$lib/libxxhash.a" "$lib/libjansson.a" "$lib/libz.a" "$lib/libzstd.a" .devdeps/lib/
for pc in libxxhash jansson; do
    sed -e 's#^prefix=.*#prefix=${pcfiledir}/../..#' -e 's#^libdir=.*#libdir=${prefix}/lib#' \
        -e 's#^includedir=.*#includedir=${prefix}/include#' "$lib/pkgconfig/$pc.pc" > ".devdeps/lib/pkgconfig/$pc.pc"
done
echo "devdeps_extra.sh: libxxhash, libjansson, zlib and libzstd staged in .devdeps/"
