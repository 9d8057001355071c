#!/bin/bash
# The manual pages: mandoc finds no warning or error in them, every page
# of the suite they refer to exists, each has the sections an admin looks
# for, every keyword of mcpd.conf is in mcpd.conf(5), and every option and
# command a program's usage message names is in its page.
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
for sh in FILES EXAMPLES; do
	check "mcpd.conf.5 has a $sh section" grep -q "^\.Sh $sh\$" mcpd.conf.5
done
for page in mcpctl.8 mcpd.8 mcp-sandboxd.8 mcp-auditd.8; do
	for sh in SYNOPSIS FILES "EXIT STATUS" EXAMPLES; do
		check "$page has a $sh section" grep -q "^\.Sh $sh\$" "$page"
	done
	[ "$page" = mcpctl.8 ] && continue
	bin=${page%.8}
	usage=$("$B/$bin" -x 2>&1 | grep usage:)
	for opt in d n v f; do
		check "$bin -$opt is in its usage line and its page" \
		    eval "grep -q -- '$opt' <<< \"\$usage\" &&
		    grep -q '^\.It Fl $opt' $page"
	done
done

# The words a page sets as keywords (Ic) or literals (Cm): every word
# after such a macro on its line, up to the next macro.
literals() {
	awk '/^\./ {
		lit = 0
		for (i = 1; i <= NF; i++) {
			w = $i
			if (i == 1) sub(/^\./, "", w)
			if (w == "Ic" || w == "Cm") { lit = 1; continue }
			if (w ~ /^[A-Z][a-z][a-z]?$/) { lit = 0; continue }
			gsub(/[,|;.]$/, "", w)
			if (lit && w != "") print w
		}
	}' "$1" | sort -u
}

# Every keyword of the grammar is documented in mcpd.conf(5).
words=$(sed -n '/^} keywords\[\] = {$/,/^};$/p' "$TOP/policy/parse.y" |
    sed -n 's/^[[:space:]]*{ "\([^"]*\)",.*/\1/p')
check "the keyword table of parse.y was found" \
    test "$(wc -w <<< "$words")" -gt 40
conf_words=$(literals mcpd.conf.5)
for w in $words; do
	check "keyword \"$w\" is in mcpd.conf.5" grep -qx -- "$w" <<< "$conf_words"
done

# Every option and command a usage message names is in the program's page:
# options as ".It Fl x" or ".Op Fl x", mcpctl's commands as "Cm group
# command".
for page in mcpd.8 mcp-sandboxd.8 mcp-auditd.8 mcpctl.8; do
	bin=${page%.8}
	usage=$("$B/$bin" -x 2>&1 | sed -n '/usage:/,$p')
	shorts=$(grep -o -- '\[-[a-zA-Z]\+' <<< "$usage" | cut -c3- | fold -w1 |
	    sort -u)
	longs=$(grep -o -- '--[a-z][a-z-]*' <<< "$usage" | sort -u)
	check "$bin: its usage message names options" test -n "$shorts"
	for o in $shorts; do
		check "$bin -$o is in $page" \
		    grep -Eq "^\.(It |Op )Fl $o( |\$)" "$page"
	done
	for o in $longs; do
		check "$bin $o is in $page" \
		    grep -Eq "^\.((It|Op) )?Fl \\\\?-${o#--}( |\$)" "$page"
	done
	[ "$bin" = mcpctl ] || continue
	cmds=$(sed -n 's/^.*mcpctl \(\[[^]]*\] \)*\([a-z]*\) \([a-z]*\).*/\2 \3/p' \
	    <<< "$usage" | grep -v ' command$' | sort -u)
	check "mcpctl: its usage message names commands" test -n "$cmds"
	while read -r cmd; do
		check "mcpctl $cmd is in $page" \
		    grep -Eq "^\.(It )?Cm $cmd( |\$)" "$page"
	done <<< "$cmds"
done
done_testing
