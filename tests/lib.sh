# Shell helpers for the test scripts: TAP output and waiting on logs.
# Sourced by bash scripts run from tests/run.sh (B and TOP are set).

: "${B:=$(pwd)/build}"
: "${TOP:=$(pwd)}"
tap_n=0
tap_failed=0

ok() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $*"
}

not_ok() {
	tap_n=$((tap_n + 1))
	tap_failed=$((tap_failed + 1))
	echo "not ok $tap_n - $*"
}

# check DESCRIPTION COMMAND...: ok when the command succeeds.
check() {
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}

diag() {
	echo "# $*"
}

# Show a file's tail as TAP diagnostics (after a failure).
diag_file() {
	[ -f "$1" ] && tail -n "${2:-15}" "$1" | sed 's/^/#   /'
}

done_testing() {
	echo "1..$tap_n"
	[ "$tap_failed" -eq 0 ]
}

# wait_for SECONDS COMMAND...: retry the command every 0.05 s.
wait_for() {
	local limit=$1 i
	shift
	for ((i = 0; i < limit * 20; i++)); do
		"$@" && return 0
		sleep 0.05
	done
	return 1
}

# log_has FILE PATTERN: a fixed-string match.
log_has() {
	grep -qF -- "$2" "$1"
}

# wait_log FILE PATTERN [SECONDS]
wait_log() {
	wait_for "${3:-10}" log_has "$1" "$2"
}

# count_in FILE PATTERN
count_in() {
	grep -cF -- "$2" "$1" 2>/dev/null || true
}

# count_gt FILE PATTERN N: more than N lines match (for wait_for).
count_gt() {
	[ "$(count_in "$1" "$2")" -gt "$3" ]
}

# status_field PID FIELD: a field of /proc/PID/status, values joined by
# single spaces.
status_field() {
	awk -v k="$2:" '$1 == k { $1 = ""; sub(/^ /, ""); print }' \
	    "/proc/$1/status" 2>/dev/null
}

require_root() {
	if [ "$(id -u)" -ne 0 ]; then
		not_ok "$(basename "$0") needs root (run make check as root)"
		done_testing
		exit 1
	fi
}
