#!/bin/bash
# Secrets at rest: a tenant puts an API key in a persistent sandbox's
# environment over MCP (mcpd --stdio, against the real mcp-auditd and
# mcp-sandboxd), and a local user who is not a tenant (nobody) tries to
# read every file under the state and run directories, their names given
# by root, and to list every directory: while the daemons run, after
# sandboxd is killed (its -wal and -shm left behind), after the daemons
# start again over files with an older version's modes, and after they
# stop.  Each time the modes are checked too.  The key must reach the
# sandbox's execs across the restart, and be in no file nobody can read,
# in no record of the audit log, in no daemon's log, and, once the sandbox
# is stopped, in no file at all.
. "$TOP/tests/lib.sh"
require_root

MU=64101	# mcpd's uid
AU=64102	# auditd's
NOBODY=65534
T=$(mktemp -d /tmp/mcpd-sec-secrets.XXXXXX)
chmod 0755 "$T"
# The daemons start as the units start them: UMask=0077.
umask 077
CONF=$T/mcpd.conf
RUN=$T/run
STATE=$T/state
ADIR=$STATE/audit
SECRET=sk-mcpd-$$-$(od -An -tx1 -N12 /dev/urandom | tr -d ' \n')

cat > "$CONF" <<CONF
user "$MU"
run directory "$RUN"
state directory "$STATE"
sandbox-init "$B/sandbox-init"
sandbox uids 268435456 64
image host host pool 1
limits default {
	memory 256M
	pids 64
	timeout 10s
	output 64K
	disk 32M
}
tenant alice {
	uid root
}
audit {
	user "$AU"
	required yes
}
CONF

cleanup() {
	kill_daemons
	remove_tmp
}
trap cleanup EXIT

client() {	# client STEP: tests/security/secrets.py, its TAP relayed
	B=$B CONF=$CONF T=$T SECRET=$SECRET \
	    /usr/bin/python3 "$TOP/tests/security/secrets.py" "$1" \
	    > "$T/tap" 2>&1
	relay_tap "$T/tap" "$?"
}

# scan WHEN: nobody tries to read every file and list every directory
# under the state and run directories, by the names root finds there.
scan() {
	local when=$1
	find "$STATE" "$RUN" -xdev \( -type f -o -type d \) -printf '%y %p\0' \
	    > "$T/paths"
	chmod 0644 "$T/paths"
	setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups \
	    /usr/bin/python3 - "$T/paths" "$SECRET" > "$T/scan" 2>&1 <<'PY'
import os, sys
secret = sys.argv[2].encode()
for entry in open(sys.argv[1], "rb").read().split(b"\0"):
    if not entry:
        continue
    kind, path = entry[:1], entry[2:]
    try:
        if kind == b"d":
            os.listdir(path)
            print("listed", path.decode())
        else:
            with open(path, "rb") as f:
                data = f.read()
            print("read", path.decode())
            if secret in data:
                print("LEAK", path.decode())
    except OSError:
        pass
PY
	check "$when: nobody tried $(tr -cd '\0' < "$T/paths" | wc -c) paths" \
	    test -s "$T/paths"
	check "$when: nobody reads the secret in no file" \
	    test -z "$(grep '^LEAK' "$T/scan")"
	grep '^LEAK' "$T/scan" | sed 's/^/#   /'
	check "$when: nobody may not list the state directory" \
	    test -z "$(grep -x "listed $STATE" "$T/scan")"
	check "$when: nobody may not list the run directory" \
	    test -z "$(grep -x "listed $RUN" "$T/scan")"
	check "$when: nobody reads nothing of the databases" \
	    test -z "$(grep -E '^read .*(state|audit)\.db' "$T/scan")"
	grep -E '^read .*\.db' "$T/scan" | sed 's/^/#   /'
	diag "$when: nobody read $(grep -c '^read' "$T/scan") files, e.g." \
	    "$(grep '^read' "$T/scan" | head -3 | cut -d' ' -f2- | tr '\n' ' ')"
}

mode_is() {	# mode_is PATH "UID MODE"
	test "$(stat -c '%u %a' "$1")" = "$2"
}

# modes WHEN: the directories and every database file that is there.
modes() {
	local when=$1 f
	check "$when: the state directory is root's, 0711" mode_is "$STATE" "0 711"
	check "$when: the run directory is root's, 0711" mode_is "$RUN" "0 711"
	check "$when: the audit directory is $AU's, 0750" mode_is "$ADIR" "$AU 750"
	for f in "$STATE"/state.db*; do
		check "$when: $(basename "$f") is root's, 0600" mode_is "$f" "0 600"
	done
	for f in "$ADIR"/audit.db*; do
		check "$when: $(basename "$f") is $AU's, 0640" mode_is "$f" "$AU 640"
	done
}

# --- the suite runs; a tenant's secret goes into a sandbox ---------------

start auditd
start sandboxd
wait_sandboxd
client create
check "the state database has its -wal and -shm while sandboxd runs" \
    test -f "$STATE/state.db-wal" -a -f "$STATE/state.db-shm"
scan "while the daemons run"
modes "while the daemons run"
check "the audit log holds the secret in no record" \
    test -z "$(grep -laF -- "$SECRET" "$ADIR"/audit.db*)"
"$B/mcpctl" -f "$CONF" audit export --event tool-call > "$T/export"
check "... though it keeps the variable's name" \
    grep -q '"args.excerpt":"{\\"env\\":{\\"OPENAI_API_KEY\\"' "$T/export"

# --- killed, and started again over an older version's modes ---------------

kill -KILL "${PID[sandboxd]}" "${PID[auditd]}"
wait "${PID[sandboxd]}" "${PID[auditd]}" 2>/dev/null
unset "PID[sandboxd]" "PID[auditd]"
check "sandboxd killed leaves the state database's -wal and -shm" \
    test -f "$STATE/state.db-wal" -a -f "$STATE/state.db-shm"
scan "after sandboxd and auditd are killed"
modes "after sandboxd and auditd are killed"

# What an older version left: its files and directories open to all.
chmod 0644 "$STATE"/state.db* "$ADIR"/audit.db*
chmod 0755 "$STATE" "$RUN"
nready=$(count_in "$T/sandboxd.log" "connected to auditd (")
start auditd
start sandboxd
check "sandboxd starts again, connected to auditd" \
    wait_for 20 count_gt "$T/sandboxd.log" "connected to auditd (" "$nready"
for f in state.db state.db-wal state.db-shm; do
	check "sandboxd makes $f 0600 and says so" \
	    log_has "$T/sandboxd.log" "$STATE/$f: mode 0644 tightened to 0600"
done
for f in audit.db audit.db-wal audit.db-shm; do
	check "auditd makes $f 0640 and says so" \
	    log_has "$T/auditd.log" "$ADIR/$f: mode 0644 tightened to 0640"
done
# By whichever daemon starts first.
cat "$T/auditd.log" "$T/sandboxd.log" > "$T/both.log"
check "the state directory is tightened, and the log says so" \
    log_has "$T/both.log" "$STATE: mode 0755 tightened to 0711"
check "the run directory is tightened, and the log says so" \
    log_has "$T/both.log" "$RUN: mode 0755 tightened to 0711"
client exec
scan "after a start over an older version's modes"
modes "after a start over an older version's modes"

# --- the sandbox stopped, the daemons stopped -------------------------------

client stop
check "sandboxd stops cleanly" stop sandboxd
check "auditd stops cleanly" stop auditd
scan "after the daemons stop"
modes "after the daemons stop"
check "no daemon's log holds the secret" \
    test -z "$(grep -laF -- "$SECRET" "$T"/*.log)"
left=$(grep -rlaF -- "$SECRET" "$STATE" "$RUN")
check "with the sandbox stopped, no file of the suite holds the secret" \
    test -z "$left"
[ -n "$left" ] && diag "the secret is in: $left"
for f in "$T"/*.log; do
	check "no sanitizer report in $(basename "$f")" \
	    test -z "$(grep -E 'ERROR: AddressSanitizer|LeakSanitizer' "$f")"
done
done_testing
