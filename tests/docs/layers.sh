#!/bin/bash
# The layers of the tree point one way (STYLE.md, "Lessons from this
# tree"): common/ at the bottom, policy/ above it, each program above
# both, and a program's folder its own.  Checked in the sources, by the
# file each quoted #include resolves to, and in the binaries, by the
# source files their debugging information names: what the linker put
# in, whatever the Makefile says.  The product mcpd holds none of the
# conformance suite's fixtures, which mcpd-conformance does hold.
. "$TOP/tests/lib.sh"

cd "$TOP" || exit 1

diag_lines() {	# TEXT: each line of it as a diagnostic
	sed 's/^/#   /' <<< "$1"
}

# The folders a folder's sources may include from, itself first.
declare -A may_include=(
	[common]="common"
	[policy]="policy common"
	[mcpd]="mcpd policy common"
	[sandboxd]="sandboxd policy common"
	[sandboxd/init]="sandboxd/init common"
	[auditd]="auditd policy common"
	[auditd/mcpctl]="auditd/mcpctl auditd policy common"
)

# The folder the file an #include names is in, found as the compiler
# finds it: beside the including file, then -Icommon, then -Ipolicy.
# Nothing for a header none of them has (a generated one).
include_dir() {	# FILE HEADER
	local p
	for p in "$(dirname "$1")/$2" "common/$2" "policy/$2"; do
		if [ -f "$p" ]; then
			dirname "$(realpath --relative-to=. "$p")"
			return
		fi
	done
}

for dir in common policy mcpd sandboxd sandboxd/init auditd \
    auditd/mcpctl; do
	bad=""
	for f in "$dir"/*.[chy]; do
		[ -f "$f" ] || continue
		while read -r h; do
			d=$(include_dir "$f" "$h")
			[ -n "$d" ] || continue
			case " ${may_include[$dir]} " in
			*" $d "*) ;;
			*) bad+="$f: #include \"$h\" ($d/)"$'\n' ;;
			esac
		done < <(sed -n 's/^#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
	done
	if [ -z "$bad" ]; then
		ok "$dir/ includes only from ${may_include[$dir]// //, }/"
	else
		not_ok "$dir/ includes only from ${may_include[$dir]// //, }/"
		diag_lines "${bad%$'\n'}"
	fi
done

# The source files of the tree a binary was linked from, one a line; the
# grammar bison writes into the build directory is policy/parse.y's, and
# what the toolchain links (the sanitizers' start-up code) is left out.
linked_srcs() {	# BINARY
	local src
	readelf --debug-dump=info --dwarf-depth=1 "$1" 2>/dev/null |
	    awk '/DW_TAG_compile_unit/ { cu = 1; next }
		cu && /DW_AT_name/ { print $NF; cu = 0 }' |
	    sed 's|^.*/parse\.c$|policy/parse.y|' | sort -u |
	    while read -r src; do
		[ -f "$src" ] && realpath --relative-to=. "$src"
	    done | grep -v '^\.\./'
}

declare -A may_link=(
	[mcpd]="mcpd policy common"
	[mcp-sandboxd]="sandboxd policy common"
	[mcp-auditd]="auditd policy common"
	[mcpctl]="auditd/mcpctl auditd policy common"
	[sandbox-init]="sandboxd/init common"
	[mcpd-conformance]="mcpd tests/interop policy common"
)

for prog in mcpd mcp-sandboxd mcp-auditd mcpctl sandbox-init \
    mcpd-conformance; do
	desc="$prog is linked from ${may_link[$prog]// //, }/ only"
	if [ ! -x "$B/$prog" ]; then
		not_ok "$desc (no $B/$prog: build it first)"
		continue
	fi
	srcs=$(linked_srcs "$B/$prog")
	if [ -z "$srcs" ]; then
		ok "$desc # SKIP $B/$prog has no debugging information"
		continue
	fi
	bad=$(while read -r src; do
		case " ${may_link[$prog]} " in
		*" $(dirname "$src") "*) ;;
		*) echo "$src" ;;
		esac
	done <<< "$srcs")
	if [ -z "$bad" ]; then
		ok "$desc"
	else
		not_ok "$desc"
		diag_lines "$bad"
	fi
done

# The fixtures: their functions are fx_*, their registration fixture_*,
# and one of their tools is test_simple_text.
fixture_syms() {	# BINARY
	nm "$1" 2>/dev/null | awk '$3 ~ /^(fx|fixture)_/ { print $3 }'
}
conf_syms=$(fixture_syms "$B/mcpd-conformance" | wc -l)
check "mcpd-conformance holds the fixtures ($conf_syms fx_/fixture_ \
symbols), so the next checks can fail" eval '[ "$conf_syms" -gt 10 ] &&
    grep -qa test_simple_text "$B/mcpd-conformance"'
prod_syms=$(fixture_syms "$B/mcpd")
check "the product mcpd holds no fixture symbol" test -z "$prod_syms"
[ -z "$prod_syms" ] || diag "in $B/mcpd:" $prod_syms
check "the product mcpd holds no fixture tool's name" \
    eval '! grep -qa test_simple_text "$B/mcpd"'
conf_ifdefs=$(grep -rln MCPD_CONFORMANCE common policy mcpd sandboxd \
    auditd Makefile)
check "no product source or build rule knows MCPD_CONFORMANCE" \
    test -z "$conf_ifdefs"
[ -z "$conf_ifdefs" ] || diag "in:" $conf_ifdefs

done_testing
