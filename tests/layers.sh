#!/bin/sh
# The layering rule (docs/ARCHITECTURE.md): the folders, lowest first, are
#   common etl engine gpu io eval job api cli
# and a file includes only headers of its own folder or of a folder before
# it; a header named *_internal.h is included only from its own folder.
# tools/ (recknn-synth) includes only its own headers; cli/ (the command)
# only its own and the public interface, api/recknn.h (with its
# common/rk_status.h): a client of the library.  Every quoted include
# of every source must resolve to exactly one header of the tree.
set -eu
. "${top_srcdir:-.}/tests/setup.sh"
cd "$top_srcdir"
LAYERS="common etl engine gpu io eval job api cli"
bad=0
rank() { # FOLDER: its position in LAYERS (tools: 99), or nothing
    i=0
    for l in $LAYERS; do
        [ "$l" = "$1" ] && { echo $i; return; }
        i=$((i + 1))
    done
    [ "$1" = tools ] && echo 99
}
for dir in $LAYERS tools; do
    [ -d "$dir" ] || fail "missing layer folder $dir/"
    r=$(rank "$dir")
    for f in "$dir"/*.c "$dir"/*.h "$dir"/*.cu "$dir"/*.cuh; do
        [ -f "$f" ] || continue
        for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
            [ "$inc" = config.h ] && continue
            where=$(ls $LAYERS tools 2>/dev/null | awk -v h="$inc" '/:$/ {d = substr($0, 1, length($0) - 1)} $0 == h {print d}')
            n=$(echo "$where" | grep -c . || true)
            if [ "$n" -ne 1 ]; then
                echo "layers: $f includes \"$inc\", found in $n folders" >&2; bad=$((bad + 1)); continue
            fi
            t=$(rank "$where")
            if [ "$dir" = tools ] && [ "$where" != tools ]; then
                echo "layers: $f (tools/) includes $where/$inc" >&2; bad=$((bad + 1))
            elif [ "$dir" = cli ] && [ "$where" != cli ] && [ "$inc" != recknn.h ] && [ "$inc" != rk_status.h ]; then
                echo "layers: $f (cli/) includes $where/$inc, not the public interface" >&2; bad=$((bad + 1))
            elif [ "$t" -gt "$r" ]; then
                echo "layers: $f includes $where/$inc, a layer above its own" >&2; bad=$((bad + 1))
            fi
            case "$inc" in
            *_internal.h|*.cuh)
                if [ "$where" != "$dir" ]; then
                    echo "layers: $f includes $where/$inc, internal to $where/" >&2; bad=$((bad + 1))
                fi ;;
            esac
        done
    done
done
[ "$bad" -eq 0 ] || fail "$bad includes break the layering"
echo "layers: every include of $LAYERS tools is at or below its folder; cli/ includes recknn.h alone"
