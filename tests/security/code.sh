#!/bin/bash
# Hostile code: programs that try every known way out of a sandbox, sent
# through the real suite over MCP (mcpd --stdio) as any client could send
# them, each checked for the safe outcome.  code.py drives the attacks;
# this script sets up the suite and what the attacks aim at on the host
# (a process to signal, an abstract socket, a loopback listener, a secret
# file), then checks the host, the daemons and the other tenant after.
# RUNTIME names the OCI runtime (runc by default); with RUNTIME_KIND and
# RUNTIME_PATH, a runtime block of that name: code-crun.sh and
# code-gvisor.sh run the attacks again under crun and gVisor's runsc.
. "$TOP/tests/lib.sh"
require_root
RUNTIME=${RUNTIME:-runc}
RUNTIME_KIND=${RUNTIME_KIND:-$RUNTIME}
RUNTIME_PATH=${RUNTIME_PATH:-$(command -v "$RUNTIME" || echo "$RUNTIME")}
RUNTIME_CONF="runtime $RUNTIME"
if [ "$RUNTIME_KIND" != "$RUNTIME" ]; then
	RUNTIME_CONF="runtime $RUNTIME {
	path \"$RUNTIME_PATH\"
	kind $RUNTIME_KIND
}
runtime $RUNTIME"
fi

MU=64101	# mcpd's uid
AU=64102	# auditd's
BOB=64150	# the other tenant's uid
T=$(mktemp -d /tmp/mcpd-sec-code.XXXXXX)
chmod 0755 "$T"
CONF=$T/mcpd.conf
RUN=$T/run

# Room for the inode attack under runsc (code.py), where every file of
# /workspace is a round trip to the gofer; the checks that expect a
# timeout give their own.
tmo=10s
[ "$RUNTIME_KIND" = runsc ] && tmo=30s
cat > "$CONF" <<CONF
user "$MU"
run directory "$RUN"
state directory "$T/state"
sandbox-init "$B/sandbox-init"
sandbox uids 268435456 64
$RUNTIME_CONF
limits default {
	memory 256M
	pids 64
	timeout $tmo
	output 64K
	disk 32M
}
image host host pool 2
tenant alice {
	uid root
	max sandboxes 4
}
tenant bob {
	uid $BOB
}
audit {
	user "$AU"
	required yes
}
CONF

# What the attacks aim at: a host process, a host abstract unix socket, a
# listener on the host's loopback, and files only the host has.
SECRET=$T/secret
VICTIM=$T/victim
echo "host secret $$" > "$SECRET"
echo "host victim $$" > "$VICTIM"
chmod 0644 "$SECRET" "$VICTIM"
sleep 3600 &
SENTINEL=$!
ABSTRACT=mcpd-sec-$$
PORT=$(free_port)
/usr/bin/python3 - "$ABSTRACT" "$PORT" "$T/listeners" <<'PY' &
import socket, sys, select
name, port, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]
a = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
a.bind("\0" + name)
a.listen(8)
t = socket.socket()
t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind(("127.0.0.1", port))
t.listen(8)
with open(log, "w") as f:
    f.write("listening\n")
    f.flush()
    while True:
        r, _, _ = select.select([a, t], [], [])
        for s in r:
            c, _ = s.accept()
            f.write("connection\n")
            f.flush()
            c.close()
PY
LISTENERS=$!

# The other tenant's mcpd runs as its uid, which may not reach a build
# directory under a private one (a CI clone in a mktemp -d, say).
install -m 0755 "$B/mcpd" "$T/mcpd"

cleanup() {
	kill "$SENTINEL" "$LISTENERS" 2>/dev/null
	pkill -f "sleep mcpd-sec-$$" 2>/dev/null
	kill_daemons
	remove_tmp
}
trap cleanup EXIT

hashes() {
	sha256sum "$B/sandbox-init" "$RUNTIME_PATH" /usr/bin/python3 \
	    /usr/bin/sh /bin/bash "$SECRET" "$VICTIM"
}
hashes > "$T/hashes.before"
HOSTNAME_BEFORE=$(cat /proc/sys/kernel/hostname)
NPROC_BEFORE=$(ps -e --no-headers | wc -l)

start auditd
start sandboxd
wait_sandboxd
check "the host listeners are up" wait_log "$T/listeners" listening
PIDS_BEFORE="${PID[auditd]} ${PID[sandboxd]}"

B=$B CONF=$CONF T=$T BOB=$BOB GID=$MU SECRET=$SECRET VICTIM=$VICTIM \
    RUNTIME_KIND=$RUNTIME_KIND \
    SENTINEL=$SENTINEL ABSTRACT=$ABSTRACT PORT=$PORT TAG=mcpd-sec-$$ \
    /usr/bin/python3 "$TOP/tests/security/code.py" > "$T/tap" 2>&1
rc=$?
relay_tap "$T/tap" "$rc"
[ "$rc" -eq 0 ] || diag_file "$T/stdio.log" 30

# --- afterwards: the host and the daemons ---------------------------------
hashes > "$T/hashes.after"
check "host binaries, sandbox-init, $RUNTIME and host files are unchanged" \
    cmp -s "$T/hashes.before" "$T/hashes.after"
check "the host process the sandboxes tried to kill is alive" \
    kill -0 "$SENTINEL"
check "nothing ever connected to the host's abstract or loopback listeners" \
    test "$(grep -c connection "$T/listeners")" = 0
check "the host's hostname is unchanged" \
    test "$(cat /proc/sys/kernel/hostname)" = "$HOSTNAME_BEFORE"
no_escapee() { ! pgrep -f "sleep mcpd-sec-$$" > /dev/null; }
check "no process escaped a timeout onto the host" wait_for 10 no_escapee
# The warm pool's containers remain: one process each under runc, a
# dozen under runsc (gVisor's kernel, its gofer and stub processes).
slack=20
[ "$RUNTIME_KIND" = runsc ] && slack=60
nproc_back() {
	[ "$(ps -e --no-headers | wc -l)" -le $((NPROC_BEFORE + slack)) ]
}
check "the host's process count is back where it was" wait_for 10 nproc_back
check "auditd and sandboxd are the processes they were" \
    test "${PID[auditd]} ${PID[sandboxd]}" = "$PIDS_BEFORE" -a \
    -n "$(alive auditd && alive sandboxd && echo y)"
check "the audit log verifies after the attacks, anchored by auditd's log" \
    "$B/mcpctl" -f "$CONF" audit verify -c "$(audit_anchor)"
suite_end
done_testing
