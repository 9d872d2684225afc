#!/bin/sh
# render_report.sh — a report.html as a PNG, to look at it without a desktop:
#   sh bench/render_report.sh report.html out.png [width]
# Headless Chromium (Debian: apt-get install chromium) takes one screenshot
# of the whole page: the height is a guess from the page's figures and table
# rows (the screenshot is cut there), 1800 px at least; set RENDER_HEIGHT to
# force it.  Width 800 by default (the page is 760 px wide).
set -eu

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    echo "usage: sh $0 report.html out.png [width]" >&2
    exit 2
fi
in=$1
out=$2
width=${3:-800}
case $width in
    ''|*[!0-9]*) echo "render_report.sh: width must be a number of pixels: $width" >&2; exit 2 ;;
esac
if [ ! -r "$in" ]; then
    echo "render_report.sh: cannot read $in" >&2
    exit 2
fi

browser=
for b in chromium chromium-browser google-chrome google-chrome-stable; do
    if command -v "$b" >/dev/null 2>&1; then
        browser=$b
        break
    fi
done
if [ -z "$browser" ]; then
    echo "render_report.sh: no chromium, chromium-browser or google-chrome in PATH" >&2
    echo "  (Debian/Ubuntu: apt-get install chromium)" >&2
    exit 3
fi

# absolute paths: the browser gets a file:// URL and may run from elsewhere
case $in in /*) abs_in=$in ;; *) abs_in=$(pwd)/$in ;; esac
case $out in /*) abs_out=$out ;; *) abs_out=$(pwd)/$out ;; esac
url_path=$(printf '%s' "$abs_in" | sed 's/%/%25/g; s/ /%20/g; s/#/%23/g; s/?/%3F/g')

# about 240 px a figure, 24 a table row or paragraph, plus the headings
if [ -n "${RENDER_HEIGHT:-}" ]; then
    height=$RENDER_HEIGHT
else
    svgs=$(grep -o '<svg' "$abs_in" | wc -l)
    rows=$(grep -o '<tr\|<p' "$abs_in" | wc -l)
    height=$((svgs * 240 + rows * 24 + 7 * 60 + 200))
    [ "$height" -ge 1800 ] || height=1800
fi

# a profile of its own: no first-run state left in the caller's home
profile=$(mktemp -d "${TMPDIR:-/tmp}/render_report.XXXXXX")
trap 'rm -rf "$profile"' EXIT INT TERM

rm -f "$abs_out"
"$browser" --headless --disable-gpu --no-sandbox --hide-scrollbars \
    --user-data-dir="$profile" --screenshot="$abs_out" \
    --window-size="$width,$height" "file://$url_path" >/dev/null 2>&1 || true
if [ ! -s "$abs_out" ]; then
    echo "render_report.sh: $browser wrote no $out" >&2
    exit 1
fi
echo "$out: ${width}x$height"
