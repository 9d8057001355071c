#!/bin/bash
# max sandboxes under concurrency (issue 19, finding 2): many creates of
# one tenant at once, over HTTP (many sessions, two tokens) and over stdio
# (several mcpd --stdio of one uid), against limits of 4 and 1, and races
# for one name; quotas.py drives them, holding auditd stopped so that
# every create is validated before any is made.  Exactly the limit is
# made, the rest are refused naming the limit, none hangs, and a place
# held by a create that fails later (audit refused, client gone) is given
# back.  Afterwards the daemons are the ones started and the log verifies.
SANDBOX_UIDS=1976565760		# this test's own range, apart from the others'
. "$TOP/tests/lib.sh"
require_root

MU=64101	# mcpd's uid, and the sockets' group
AU=64102	# auditd's
UF=64171	# tenant four's stdio uid
UO=64172	# tenant one's
T=$(mktemp -d /tmp/mcpd-quotas.XXXXXX)
chmod 0755 "$T"
CONF=$T/mcpd.conf
RUN=$T/run
PORT=$(free_port)
tok() { head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
hash() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
TF1=$(tok) TF2=$(tok) TO1=$(tok) TO2=$(tok)

# Twelve uid ranges: more than the limits, so that a bypass shows, and few
# enough to bound what a broken build starts.
cat > "$CONF" <<EOF
user "$MU"
run directory "$RUN"
state directory "$T/state"
sandbox-init "$B/sandbox-init"
sandbox uids $SANDBOX_UIDS 12
listen on 127.0.0.1 port $PORT
image host host pool 0

limits default {
	memory 128M
	disk 16M
	timeout 30s
}

tenant four {
	token "sha256:$(hash "$TF1")"
	token "sha256:$(hash "$TF2")"
	uid $UF
	max sandboxes 4
	max requests 64
}
tenant one {
	token "sha256:$(hash "$TO1")"
	token "sha256:$(hash "$TO2")"
	uid $UO
	max sandboxes 1
	max requests 64
}

audit {
	user "$AU"
	required yes
}
EOF

# The tenants' mcpd --stdio run as their uids, which may not reach a build
# directory under a private one.
install -m 0755 "$B/mcpd" "$T/mcpd"

cleanup() {
	[ -n "${PID[auditd]:-}" ] && kill -CONT "${PID[auditd]}" 2>/dev/null
	kill_daemons 0.5
	remove_tmp
}
trap cleanup EXIT

start_suite
declare -A BEFORE
for d in auditd sandboxd mcpd; do BEFORE[$d]=${PID[$d]}; done

s=$(date +%s)
B=$B CONF=$CONF T=$T PORT=$PORT AUDITD_PID=${PID[auditd]} GID=$MU \
    TF1=$TF1 TF2=$TF2 TO1=$TO1 TO2=$TO2 UF=$UF UO=$UO \
    /usr/bin/python3 "$TOP/tests/security/quotas.py" > "$T/tap" \
    2> "$T/quotas.err"
rc=$?
relay_tap "$T/tap" "$rc"
diag "the rounds took $(( $(date +%s) - s )) s"
[ "$rc" -eq 0 ] || diag_file "$T/quotas.err" 20

for d in auditd sandboxd mcpd; do
	check "$d is still the process it was (pid ${BEFORE[$d]})" \
	    eval 'alive $d && [ "${PID[$d]}" = "${BEFORE[$d]}" ]'
done
n=$(grep -c "sandbox [0-9a-f]* created for tenant" "$T/sandboxd.log")
diag "sandboxd made $n sandboxes in all"
out=$("$B/mcpctl" -f "$CONF" audit verify -c "$(audit_anchor)" 2>&1)
check "mcpctl audit verify passes, anchored by auditd's log ($out)" \
    test $? = 0
check "mcpd stops cleanly" stop mcpd
suite_end
check "this test's state directory holds no sandbox" \
    eval '[ -z "$(ls -A "$T/state/sandboxes" 2>/dev/null)" ]'

if [ "$tap_failed" -ne 0 ]; then
	diag "--- sandboxd.log"
	diag_file "$T/sandboxd.log" 15
fi
done_testing
