#!/bin/bash
# The images of the data and polyglot presets, as make images builds
# them: each tool runs inside its root filesystem (chroot, in a mount
# and pid namespace of its own, the tree bound read-only), and the
# images still verify afterwards.  Not part of make check: building the
# presets takes minutes and gigabytes.
#
#	bash tests/images/presets.sh CONF	(mcpd.conf naming the state)
. "$TOP/tests/lib.sh"
require_root

CONF=${1:?usage: presets.sh mcpd.conf}
MCPCTL=$B/mcpctl
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

rootfs() {	# rootfs NAME
	"$MCPCTL" -j -f "$CONF" image list | "$PY" -c 'import json, sys
for i in json.load(sys.stdin):
	if i["name"] == sys.argv[1]:
		print(i["rootfs"])' "$1"
}

# inroot ROOTFS COMMAND...: stdout and stderr of COMMAND run there.  The
# script is fixed; the tree and the command are its arguments.
inroot() {
	unshare --mount --propagation private --pid --fork sh -c '
	    r=$1; shift
	    mount --bind "$r" "$r" && mount -o remount,bind,ro "$r" &&
	    mount -t proc proc "$r/proc" && mount --rbind /dev "$r/dev" &&
	    mount -t tmpfs tmpfs "$r/tmp" && exec chroot "$r" "$@"' \
	    inroot "$@" 2>&1
}

# tool NAME ROOTFS PATTERN COMMAND...: the output matches PATTERN.
tool() {
	local name=$1 r=$2 pat=$3 out
	shift 3
	out=$(inroot "$r" "$@")
	if grep -qE -- "$pat" <<< "$out"; then
		ok "$name: $(grep -E -- "$pat" <<< "$out" | head -n 1)"
	else
		not_ok "$name: $*"
		diag "$out"
	fi
}

R=$(rootfs data)
if [ -z "$R" ]; then
	not_ok "no image named data: make images builds it"
else
	tool "data: numpy, pandas, matplotlib" "$R" '^numpy [0-9]' \
	    python3 -B -c 'import numpy, pandas, matplotlib
print("numpy", numpy.__version__, "pandas", pandas.__version__,
    "matplotlib", matplotlib.__version__)'
	tool "data: matplotlib draws a PNG without a display" "$R" '^png [0-9]+' \
	    python3 -B -c 'import io, matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
plt.plot([1, 2, 3])
b = io.BytesIO()
plt.savefig(b, format="png")
print("png", len(b.getvalue()))'
	tool "data: pip" "$R" '^pip [0-9]' python3 -B -m pip --version
	"$MCPCTL" -f "$CONF" image verify data > /dev/null
	check "data verifies after all that" test "$?" -eq 0
fi

R=$(rootfs polyglot)
if [ -z "$R" ]; then
	not_ok "no image named polyglot: make images builds it"
else
	tool "polyglot: python3" "$R" '^Python 3' python3 --version
	tool "polyglot: node" "$R" '^v[0-9]+' node --version
	tool "polyglot: tsc" "$R" '^Version [0-9]' tsc --version
	tool "polyglot: gcc" "$R" '^gcc ' gcc --version
	tool "polyglot: g++" "$R" '^g\+\+ ' g++ --version
	tool "polyglot: go" "$R" '^go version' go version
	tool "polyglot: rustc" "$R" '^rustc [0-9]' rustc --version
	tool "polyglot: java" "$R" 'openjdk version' java -version
	tool "polyglot: ruby" "$R" '^ruby [0-9]' ruby --version
	tool "polyglot: php" "$R" '^PHP [0-9]' php --version
	tool "polyglot: perl" "$R" 'This is perl' perl --version
	tool "polyglot: bash" "$R" '^GNU bash' bash --version
	tool "polyglot: C compiles and runs" "$R" '^compiled' sh -c \
	    'printf "#include <stdio.h>\nint main(void){puts(\"compiled\");}\n" > /tmp/c.c && gcc -o /tmp/c /tmp/c.c && /tmp/c'
	"$MCPCTL" -f "$CONF" image verify polyglot > /dev/null
	check "polyglot verifies after all that" test "$?" -eq 0
fi
done_testing
