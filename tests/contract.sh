#!/bin/sh
# The contract lives in the repository (docs/CONTRACT.md): every citation
# "CONTRACT.md §N" in the sources, tests, scripts and documents names a
# section heading "## §N ..." of that file, and nothing cites SPEC, the
# outside document the project started from.
set -eu
. "${top_srcdir:-.}/tests/setup.sh"
cd "$top_srcdir"
[ -f docs/CONTRACT.md ] || fail "docs/CONTRACT.md is missing"
sections=$(sed -n 's/^## §\([0-9][0-9a-z]*\) .*/\1/p' docs/CONTRACT.md)
[ "$(echo "$sections" | grep -c .)" -ge 9 ] || fail "docs/CONTRACT.md has fewer than 9 numbered sections"
files=$(ls common/* etl/* engine/* gpu/* io/* eval/* job/* api/* cli/* tools/* python/*.c python/recknn/*.py \
        tests/*.c tests/*.h tests/*.sh \
        bench/* fuzz/*.c fuzz/*.h ./*.md docs/*.md sample_data/README.md 2>/dev/null | grep -v -e '\.o$' -e '\.a$')
cited=$(grep -ho 'CONTRACT\.md §[0-9][0-9a-z]*' $files | sed 's/.*§//' | sort -u)
[ -n "$cited" ] || fail "no citation of CONTRACT.md found"
bad=0
for c in $cited; do
    echo "$sections" | grep -qx "$c" || { echo "contract: CONTRACT.md §$c is cited but has no section" >&2; bad=1; }
done
if grep -n 'SPEC[ ]§\|SPEC[.]md' $files >&2; then
    bad=1
    echo "contract: the lines above cite a document outside the repository" >&2
fi
[ "$bad" -eq 0 ] || fail "citations that do not resolve"
echo "contract: $(echo "$cited" | wc -w) cited sections, all in docs/CONTRACT.md"
