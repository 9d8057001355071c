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
wait_sandboxd

B=$B CONF=$CONF T=$T LOCAL=$LOCAL RO=$RO \
    /usr/bin/python3 "$TOP/tests/integration/mcp_tools.py" > "$T/tap" 2>&1
rc=$?
# Renumber the script's TAP into ours.
relay_tap "$T/tap" "$rc"
[ "$rc" -eq 0 ] || diag_file "$T/stdio.log" 30

suite_end
done_testing
