#!/bin/bash
# mcpd's tools, resources, tasks and limits, as a client sees them over
# stdio against the real suite: mcp_tools.py drives it and prints TAP.
. "$TOP/tests/lib.sh"
require_root

MU=64101	# mcpd's uid
AU=64102	# auditd's
T=$(mktemp -d /tmp/mcpd-tools.XXXXXX)
chmod 0755 "$T"
CONF=$T/mcpd.conf
RUN=$T/run
LOCAL=$T/local
RO=$T/ro
mkdir -p "$LOCAL" "$RO"
echo "read only" > "$RO/ro.txt"

cat > "$CONF" <<CONF
user "$MU"
run directory "$RUN"
state directory "$T/state"
sandbox-init "$B/sandbox-init"
sandbox uids 268435456 64
limits default {
	memory 256M
	pids 64
	timeout 10s
	output 64K
	disk 32M
}
tenant local {
	uid root
	local path "$LOCAL"
	local path "$RO" read-only
	max requests 3
}
audit {
	user "$AU"
	required yes
}
CONF

cleanup() {
	kill_daemons
	rm -f /tmp/escape.txt
	remove_tmp
}
trap cleanup EXIT

start auditd
start sandboxd
check "sandboxd is ready" wait_log "$T/sandboxd.log" "ready: listening"

B=$B CONF=$CONF T=$T LOCAL=$LOCAL RO=$RO \
    /usr/bin/python3 "$TOP/tests/integration/mcp_tools.py" > "$T/tap" 2>&1
rc=$?
# Renumber the script's TAP into ours.
while IFS= read -r line; do
	case "$line" in
	"ok "*) ok "${line#ok [0-9]* - }" ;;
	"not ok "*) not_ok "${line#not ok [0-9]* - }" ;;
	"1.."*) ;;
	*) echo "$line" ;;
	esac
done < "$T/tap"
check "the client script ran to its end (status $rc)" \
    grep -q '^1\.\.' "$T/tap"
[ "$rc" -eq 0 ] || diag_file "$T/stdio.log" 30

check "no sandbox process is left" wait_for 10 test -z "$(sandbox_pids)"
check "sandboxd stops cleanly" stop sandboxd
check "auditd stops cleanly" stop auditd
for f in "$T"/*.log; do
	check "no sanitizer report in $(basename "$f")" \
	    test -z "$(grep -E 'ERROR: AddressSanitizer|LeakSanitizer' "$f")"
done
done_testing
