#!/bin/bash
# Limits the whole host shares: one sandbox takes all it can of each
# kernel counter that is not its own (ptys, AIO events, inotify, message
# queues, pending signals, socket memory, descriptors, processes ...)
# while a second sandbox, of another tenant, and the host go on using
# them; and /proc/self/mountinfo in a sandbox names no host path.
# hostlim.py drives the sandboxes over MCP; exhaust.c is the hostile
# program, built in each sandbox and on the host.  No host setting is
# changed, and everything taken is given back when each hold ends.
SANDBOX_UIDS=805306368	# this test's own range, for lib.sh's checks
. "$TOP/tests/lib.sh"
require_root

MU=64101	# mcpd's uid
AU=64102	# auditd's
BOB=64150	# the other tenant's uid
T=$(mktemp -d /tmp/mcpd-sec-hostlim.XXXXXX)
chmod 0755 "$T"
CONF=$T/mcpd.conf
RUN=$T/run

cat > "$CONF" <<CONF
user "$MU"
run directory "$RUN"
state directory "$T/state"
sandbox-init "$B/sandbox-init"
sandbox uids $SANDBOX_UIDS 8
limits default {
	memory 256M
	pids 64
	timeout 60s
	output 64K
	disk 32M
}
image host host pool 0
tenant alice {
	uid root
	max sandboxes 2
}
tenant bob {
	uid $BOB
}
audit {
	user "$AU"
	required yes
}
CONF

install -m 0755 "$B/mcpd" "$T/mcpd"
cc -O2 -o "$T/exhaust" "$TOP/tests/security/exhaust.c"
check "the hostile program builds on the host" test -x "$T/exhaust"

cleanup() {
	kill_daemons
	remove_tmp
}
trap cleanup EXIT

# sandboxd with a RLIMIT_SIGPENDING two sandboxes can fill, for the
# check that all of them together keep within half of it.
RUNTIME_SIGPENDING=3000
start auditd
prlimit --sigpending=$RUNTIME_SIGPENDING: "$B/mcp-sandboxd" -d -v -f "$CONF" \
    >> "$T/sandboxd.log" 2>&1 &
PID[sandboxd]=$!
wait_sandboxd

B=$B CONF=$CONF T=$T BOB=$BOB GID=$MU RUNTIME_SIGPENDING=$RUNTIME_SIGPENDING \
    /usr/bin/python3 "$TOP/tests/security/hostlim.py" > "$T/tap" 2>&1
rc=$?
relay_tap "$T/tap" "$rc"
[ "$rc" -eq 0 ] || diag_file "$T/sandboxd.log" 30

suite_end
done_testing
