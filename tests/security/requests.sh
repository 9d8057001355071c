#!/bin/bash
# Hostile requests to mcpd (issue 8): the real suite with two tenants,
# alice and bob, each with a token, attacked over Streamable HTTP and
# stdio by requests.py, which speaks raw sockets and pipes so that every
# byte is the test's.  Each case asserts the safe outcome exactly.
# Afterwards: every daemon is the same process as before, bob's session
# (opened before the attacks) still runs code, alice's sandbox still runs
# commands and holds its files, the audit log verifies, mcpd's memory is
# bounded, and nothing is left behind.
SANDBOX_UIDS=1971322880		# this test's own range, apart from the others'
. "$TOP/tests/lib.sh"
require_root

MU=64101	# mcpd's uid
AU=64102	# auditd's
T=$(mktemp -d /tmp/mcpd-requests.XXXXXX)
chmod 0755 "$T"
CONF=$T/mcpd.conf
RUN=$T/run
PY=/usr/bin/python3
PORT=$(free_port)
TA=alice-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
TB=bob-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')

cat > "$CONF" <<EOF
user "$MU"
run directory "$RUN"
state directory "$T/state"
sandbox-init "$B/sandbox-init"
sandbox uids $SANDBOX_UIDS 16
listen on 127.0.0.1 port $PORT

limits default {
	memory 256M
	timeout 30s
}

tenant alice {
	token "sha256:$(printf %s "$TA" | sha256sum | cut -d' ' -f1)"
	uid root
}
tenant bob {
	token "sha256:$(printf %s "$TB" | sha256sum | cut -d' ' -f1)"
}

language python {
	file main.py
	run "python3 main.py"
}

audit {
	user "$AU"
	required yes
}
EOF

# In the sanitizer build freed memory waits in ASan's quarantine, 256 MiB
# by default, before it is used again: what mcpd let go would look kept.
# A small quarantine still catches a use after free.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=8

cleanup() {
	kill_daemons 0.5
	remove_tmp
}
trap cleanup EXIT

start_suite
declare -A BEFORE
for d in auditd sandboxd mcpd; do BEFORE[$d]=${PID[$d]}; done

# The attacks, with their TAP relayed; they leave a few facts behind.
s=$(date +%s)
B=$B CONF=$CONF T=$T PORT=$PORT TA=$TA TB=$TB MCPD_PID=${PID[mcpd]} \
    $PY "$TOP/tests/security/requests.py" > "$T/tap" 2> "$T/requests.err"
rc=$?
relay_tap "$T/tap" "$rc"
diag "the attacks took $(( $(date +%s) - s )) s"
[ "$rc" -eq 0 ] || diag_file "$T/requests.err" 20

# --- afterwards: the host, the daemons and the other tenants ----------------

for d in auditd sandboxd mcpd; do
	check "$d is still the process it was (pid ${BEFORE[$d]})" \
	    eval 'alive $d && [ "${PID[$d]}" = "${BEFORE[$d]}" ]'
done
check "mcpd's log has nothing fatal" eval '! grep -qiE \
    "fatal|AddressSanitizer|LeakSanitizer|runtime error:" "$T/mcpd.log"'
out=$("$B/mcpctl" -f "$CONF" audit verify -c "$(audit_anchor)" 2>&1)
check "mcpctl audit verify passes, anchored by auditd's last checkpoint line ($out)" \
    test $? = 0
san=$(grep -l -E "ERROR: AddressSanitizer|LeakSanitizer|runtime error:" \
    "$T"/stdio-*.err 2>/dev/null | xargs -r -n1 basename | tr '\n' ' ')
check "no sanitizer report from any mcpd --stdio${san:+ ($san)}" test -z "$san"
check "mcpd stops cleanly" stop mcpd
suite_end
check "this test's state directory holds no sandbox" \
    eval '[ -d "$T/state/sandboxes" ] && [ -z "$(ls -A "$T/state/sandboxes")" ]'

if [ "$tap_failed" -ne 0 ]; then
	diag "--- mcpd.log"
	diag_file "$T/mcpd.log" 15
fi
done_testing
