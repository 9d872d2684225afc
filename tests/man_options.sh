#!/bin/sh
# The manual page (man/recknn.1.in) documents the command line as the code
# has it: every long option (the job's, the table of job/rk_jobopt.c; the
# command line's own, cli_opts[] of cli/recknn_opts.c) and every short option
# of the getopt string in cli/recknn_opts.c is the tag of an entry (.TP) of
# OPTIONS, no entry names an option the code no longer has, and EXIT STATUS
# names every status of the usage text's "Exit status:" paragraph.  Where groff is
# installed, the page also formats without a warning.  Needs neither a GPU
# nor a built recknn: it reads the sources.
set -eu
. "${top_srcdir:-.}/tests/setup.sh"
opts_c="$top_srcdir/cli/recknn_opts.c"
page="$top_srcdir/man/recknn.1.in"
[ -f "$opts_c" ] || fail "$opts_c is missing"
[ -f "$page" ] || fail "$page is missing"

# The code's options: the job's (the table of job/rk_jobopt.c) and the command line's own
# (cli_opts[] of cli/recknn_opts.c).
jobopt_c="$top_srcdir/job/rk_jobopt.c"
[ -f "$jobopt_c" ] || fail "$jobopt_c is missing"
sed -n '/ table\[\] = {/,/^};/p' "$jobopt_c" | sed -n 's/^[[:space:]]*{{"\([^"]*\)",.*/\1/p' >"$tmp/long"
[ -s "$tmp/long" ] || fail "no option found in table[] of $jobopt_c (has the table changed shape?)"
n_job=$(wc -l <"$tmp/long")
sed -n '/cli_opts\[\] = {/,/^};/p' "$opts_c" | sed -n 's/^[[:space:]]*{"\([^"]*\)",.*/\1/p' >>"$tmp/long"
[ "$(wc -l <"$tmp/long")" -gt "$n_job" ] || fail "no option found in cli_opts[] of $opts_c (has the table changed shape?)"
shorts=$(sed -n 's/.*getopt_long([^"]*"\([^"]*\)".*/\1/p' "$opts_c" | tr -d ':')
[ -n "$shorts" ] || fail "no getopt_long short-option string found in $opts_c"

# The tags of the entries of the OPTIONS section (the line after each .TP),
# with roff's escapes undone: \- is -, quotes and font changes go.
awk '/^\.SH /{ in_opts = ($0 ~ /^\.SH "?OPTIONS"?$/) } in_opts && tag { print; tag = 0 } in_opts && /^\.TP/{ tag = 1 }' "$page" |
    sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/"//g' -e 's/^\.[A-Z]* *//' >"$tmp/tags"
[ -s "$tmp/tags" ] || fail "no .TP entry found in the OPTIONS section of $page"

bad=0
while IFS= read -r name; do
    grep -Eq -- "(^|[ ,])--$name([ ,=]|\$)" "$tmp/tags" ||
        { echo "man_options: --$name is an option of the code but has no entry in $page" >&2; bad=1; }
done <"$tmp/long"
for c in $(echo "$shorts" | sed 's/./& /g'); do
    grep -Eq -- "(^|[ ,])-$c([ ,]|\$)" "$tmp/tags" ||
        { echo "man_options: -$c is a short option of recknn but has no entry in $page" >&2; bad=1; }
done
# The other way: an entry for an option the code does not have.
grep -Eo -- '(^|[ ,])--?[A-Za-z][A-Za-z0-9-]*' "$tmp/tags" | sed 's/^[ ,]*//' | sort -u >"$tmp/documented"
while IFS= read -r opt; do
    case $opt in
    --*) grep -qx -- "${opt#--}" "$tmp/long" ;;
    -?) case $shorts in *"${opt#-}"*) true ;; *) false ;; esac ;;
    *) false ;;
    esac || { echo "man_options: $page has an entry for $opt, which recknn does not have" >&2; bad=1; }
done <"$tmp/documented"

# Exit statuses: every number of the usage text's paragraph is in EXIT STATUS.
statuses=$(sed -n '/"Exit status:/,/;$/p' "$opts_c" | grep -Eo '[0-9]+' | sort -un)
[ -n "$statuses" ] || fail "no \"Exit status:\" paragraph found in the usage text of $opts_c"
awk '/^\.SH /{ in_exit = ($0 ~ /^\.SH "?EXIT STATUS"?$/) } in_exit' "$page" >"$tmp/exit"
for s in $statuses; do
    grep -Eq "(^|[^0-9])$s([^0-9]|\$)" "$tmp/exit" ||
        { echo "man_options: exit status $s of the usage text is not in EXIT STATUS of $page" >&2; bad=1; }
done
[ "$bad" -eq 0 ] || fail "the manual page and cli/recknn_opts.c disagree (see above)"

# It formats cleanly (groff's -ww: every warning).
if command -v groff >/dev/null 2>&1; then
    groff -man -ww -z "$page" 2>"$tmp/groff.err" || fail "groff could not format $page: $(cat "$tmp/groff.err")"
    [ ! -s "$tmp/groff.err" ] || { cat "$tmp/groff.err" >&2; fail "groff warns about $page"; }
    if LC_ALL=C grep -n '[^ -~	]' "$page" >&2; then fail "$page has characters outside ASCII (use roff escapes)"; fi
else
    echo "man_options: groff is not installed: formatting not checked"
fi
echo "man_options: $(wc -l <"$tmp/long") long and $(printf %s "$shorts" | wc -c) short options, $(echo $statuses | wc -w) exit statuses, all in the manual page"
