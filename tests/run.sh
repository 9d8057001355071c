#!/bin/sh
# Run every test of the suite: the unit test programs in $B/tests and the
# test scripts under tests/.  Each prints TAP ("ok N - ..." and
# "not ok N - ..."); this counts them all and ends with the line
# "N passed, N failed".  Full output of each test is kept in
# $B/test-logs/NAME.log.
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

run_one() {	# name command...
	name=$1
	shift
	case " ${TESTS:-$name} " in *" $name "*) ;; *) return ;; esac
	log="$logs/$name.log"
	start=$(date +%s)
	timeout --kill-after=10 900 "$@" > "$log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	p=$(grep -c '^ok ' "$log")
	f=$(grep -c '^not ok ' "$log")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		# A crash or a failed setup counts, even with no TAP line.
		echo "not ok - $name exited with status $rc" >> "$log"
		f=1
	fi
	pass=$((pass + p))
	fail=$((fail + f))
	printf '%-28s %4d passed, %d failed  (%ds)\n' "$name" "$p" "$f" "$secs"
	if [ "$f" -ne 0 ]; then
		grep -A6 '^not ok' "$log" | sed 's/^/    /'
		echo "    (full output: $log)"
	fi
}

for t in "$B"/tests/test_*; do
	[ -x "$t" ] || continue
	run_one "$(basename "$t")" "$t"
done
for t in tests/docs/*.sh tests/fuzz/*.sh tests/integration/*.sh \
    tests/security/*.sh; do
	[ -f "$t" ] || continue
	run_one "$(basename "$t" .sh)" bash "$t"
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
