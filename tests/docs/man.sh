#!/bin/bash
# The manual pages: mandoc finds no warning or error in them, every page
# of the suite they refer to exists, and each daemon's page documents the
# options the daemon accepts.
. "$TOP/tests/lib.sh"

cd "$TOP/man" || exit 1
for page in *.[1-9]; do
	out=$(mandoc -Tlint -W warning "$page" 2>&1 | grep -v 'mandoc.db')
	check "mandoc -Tlint -W warning $page is clean" test -z "$out"
	[ -z "$out" ] || diag "$out"
	# STYLE: cross-references are checked against the system manpath
	# only, so check the suite's own ones here.
	for xr in $(grep -h '^\.Xr ' "$page" | awk '{print $2 "." $3}' |
	    sort -u); do
		case "$xr" in mcp*) ;; *) continue ;; esac
		check "$page refers to $xr, which exists" test -f "$xr"
	done
	for sh in NAME DESCRIPTION "SEE ALSO"; do
		check "$page has a $sh section" grep -q "^\.Sh $sh\$" "$page"
	done
done
for page in mcpd.8 mcp-sandboxd.8 mcp-auditd.8; do
	for sh in SYNOPSIS FILES "EXIT STATUS" EXAMPLES; do
		check "$page has a $sh section" grep -q "^\.Sh $sh\$" "$page"
	done
	bin=${page%.8}
	usage=$("$B/$bin" -x 2>&1 | grep usage:)
	for opt in d n v f; do
		check "$bin -$opt is in its usage line and its page" \
		    eval "grep -q -- '$opt' <<< \"\$usage\" &&
		    grep -q '^\.It Fl $opt' $page"
	done
done
done_testing
