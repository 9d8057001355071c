#!/bin/sh
# Run every test of the suite: the unit test programs in $B/tests and the
# test scripts under tests/, the VM test (tests/vm/vm.sh) last.  Each
# prints TAP ("ok N - ...", "not ok N - ...", and "ok N - ... # SKIP why"
# for a case this machine cannot run, which is no pass); this counts them
# all and ends with the line "N passed, N failed", after "N skipped" if
# any were.  Full output of each test is kept in $B/test-logs/NAME.log.
#
# Environment: B (build directory, default build); TESTS, a space-separated
# list of test names, runs only those.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
B=${B:-build}
case "$B" in /*) ;; *) B="$top/$B" ;; esac
export B TOP="$top"
logs="$B/test-logs"
rm -rf "$logs"
mkdir -p "$logs"
cd "$top"

pass=0
fail=0
skip=0

run_one() {	# name command...
	name=$1
	shift
	case " ${TESTS:-$name} " in *" $name "*) ;; *) return ;; esac
	log="$logs/$name.log"
	start=$(date +%s)
	# The VM test builds an image and boots a guest under emulation.
	limit=900
	[ "$name" = vm ] && limit=2700
	timeout --kill-after=10 $limit "$@" > "$log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	# A skipped case ("ok N - ... # SKIP why") is not a pass.
	s=$(grep -c '^ok .*# SKIP' "$log")
	p=$(( $(grep -c '^ok ' "$log") - s ))
	f=$(grep -c '^not ok ' "$log")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		# A crash or a failed setup counts, even with no TAP line.
		echo "not ok - $name exited with status $rc" >> "$log"
		f=1
	fi
	pass=$((pass + p))
	fail=$((fail + f))
	skip=$((skip + s))
	printf '%-28s %4d passed, %d failed%s  (%ds)\n' "$name" "$p" "$f" \
	    "$([ "$s" -eq 0 ] || echo ", $s skipped")" "$secs"
	if [ "$s" -ne 0 ]; then
		sed -n 's/^ok .*# SKIP \(.*\)/    skipped: \1/p' "$log" | sort -u
	fi
	if [ "$f" -ne 0 ]; then
		grep -A6 '^not ok' "$log" | sed 's/^/    /'
		echo "    (full output: $log)"
	fi
}

for t in "$B"/tests/test_*; do
	[ -x "$t" ] || continue
	run_one "$(basename "$t")" "$t"
done
# The VM test last: it takes longest, and runs the suite anew elsewhere.
for t in tests/docs/*.sh tests/fuzz/*.sh tests/integration/*.sh \
    tests/security/*.sh tests/vm/*.sh; do
	[ -f "$t" ] || continue
	run_one "$(basename "$t" .sh)" bash "$t"
done

[ "$skip" -eq 0 ] || echo "$skip skipped"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
