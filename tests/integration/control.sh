#!/bin/bash
# mcpctl status, sandbox list, inspect and kill against the running suite
# (auditd, sandboxd and an mcpd, with real runc containers); config check
# and token new.  Only root may ask sandboxd; a tenant never sees a host
# pid; a kill is audited and leaves nothing behind.
. "$TOP/tests/lib.sh"
require_root

MU=64101	# mcpd's uid
AU=64102	# auditd's
UIDBASE=$((268435456 + 64 * 65536 * 9))
SANDBOX_UIDS=$UIDBASE
T=$(mktemp -d /tmp/mcpd-control.XXXXXX)
chmod 0755 "$T"
CONF=$T/mcpd.conf
RUN=$T/run
MCPCTL=$B/mcpctl
PY=/usr/bin/python3
PORT=$(free_port)
TOKEN=ctl-$RANDOM$RANDOM

cat > "$CONF" <<CONF
user "$MU"
run directory "$RUN"
state directory "$T/state"
sandbox-init "$B/sandbox-init"
sandbox uids $UIDBASE 16
listen on 127.0.0.1 port $PORT
image host host pool 1

limits default {
	memory 128M
	pids 64
	timeout 60s
	disk 16M
}
tenant alice {
	token "sha256:$(printf %s "$TOKEN" | sha256sum | cut -d' ' -f1)"
}
tenant bob {
	token "sha256:2222222222222222222222222222222222222222222222222222222222222222"
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

ctl() {	# ctl ARGS...: mcpctl on $CONF; OUT, ERR, RC after
	"$MCPCTL" -f "$CONF" "$@" > "$T/out" 2> "$T/err"
	RC=$?
	OUT=$(cat "$T/out")
	ERR=$(cat "$T/err")
}

# --- nothing running -------------------------------------------------------

ctl status
check "status with no daemon: exit 1" test "$RC" -eq 1
check "... says sandboxd is not running, and why" \
    grep -q "^mcp-sandboxd: NOT RUNNING: cannot connect to $RUN/sandboxd.sock" "$T/out"
check "... and auditd" grep -q "^mcp-auditd: NOT RUNNING" "$T/out"
ctl sandbox list
check "sandbox list with no sandboxd: exit 1, with the reason" \
    eval '[ $RC -eq 1 ] && grep -q "mcp-sandboxd: cannot connect" "$T/err"'

# --- the suite -------------------------------------------------------------

start auditd
start sandboxd
wait_sandboxd
start mcpd
check "mcpd is up" wait_log "$T/mcpd.log" "connected to sandboxd"
check "the warm pool has its container" \
    wait_for 20 eval '"$MCPCTL" -j -f "$CONF" status > "$T/s.json" 2>/dev/null;
    [ "$(json "$T/s.json" "d[\"sandboxd\"][\"pool\"][\"ready\"]")" = 1 ]'

ctl status
check "status: exit 0" test "$RC" -eq 0
diag "$OUT"
check "... names sandboxd, its version, pid and protocol" \
    grep -q "^mcp-sandboxd: mcp-sandboxd 0.1.0, pid ${PID[sandboxd]}, protocol [0-9]*, up .*, runc [0-9]" "$T/out"
check "... says the configuration it runs is the file's" \
    grep -qx "configuration: sha256:$(sha256sum < "$CONF" | cut -d' ' -f1)" "$T/out"
check "... names auditd and its version" \
    grep -q "^mcp-auditd: auditd 0.1.0, answering" "$T/out"
check "... audit: required, connected, records committed" \
    grep -q "^audit: required, sandboxd connected to auditd; [1-9][0-9]* records sent, [1-9][0-9]* committed, 0 failed" "$T/out"
check "... the pool: 1 ready of 1 wanted" \
    grep -q "^pool: 1 warm containers ready, 0 starting, 1 wanted" "$T/out"
check "... the connected daemons: auditd and mcpd, with their pids" \
    eval 'grep -Eq "^  auditd +${PID[auditd]} +$AU +auditd 0.1.0" "$T/out" &&
    grep -Eq "^  mcpd +${PID[mcpd]} +$MU +mcpd 0.1.0" "$T/out"'
check "... and mcpctl itself" grep -Eq "^  mcpctl +[0-9]+ +0 +mcpctl" "$T/out"

ctl -j status
check "status -j: exit 0, JSON that says the same" \
    test "$RC $(json "$T/out" '(d["sandboxd"]["pid"], d["auditd"]["running"],
d["sandboxd"]["config_is_the_file"], d["sandboxd"]["audit"]["connected"],
" ".join(sorted(p["role"] for p in d["sandboxd"]["peers"])))')" = \
    "0 (${PID[sandboxd]}, True, True, True, 'auditd mcpctl mcpd')"

# Sandboxes: two of alice's, one of bob's, and a run in progress.
SBX() { "$B/tests/sbx" -u $MU -g $MU -s "$RUN/sandboxd.sock" "$@"; }
SBX -t alice create -N work > "$T/c1" 2>&1
A1=$(grep -Ex '[0-9a-f]{32}' "$T/c1")
SBX -t alice create -N other > "$T/c2" 2>&1
A2=$(grep -Ex '[0-9a-f]{32}' "$T/c2")
SBX -t bob create -N bobs > "$T/c3" 2>&1
B1=$(grep -Ex '[0-9a-f]{32}' "$T/c3")
check "three persistent sandboxes made ($A1 $A2 $B1)" \
    eval '[ ${#A1} -eq 32 ] && [ ${#A2} -eq 32 ] && [ ${#B1} -eq 32 ]'
SBX -t alice exec -S "$A1" -c 'sleep 300' > /dev/null 2>&1 &
EXECPID=$!
SBX -t bob run -- /bin/sh -c 'echo started; exec sleep 300' > "$T/run.out" 2> "$T/run.err" &
RUNPID=$!
check "bob's one-shot run is under way" \
    wait_for 20 grep -q started "$T/run.out"
check "alice's exec is under way" \
    wait_for 20 eval '[ "$("$MCPCTL" -j -f "$CONF" sandbox inspect "$A1" 2>/dev/null |
    "$PY" -c "import json,sys; print(json.load(sys.stdin)[\"processes\"])")" = 1 ]'

ctl sandbox list
check "sandbox list: exit 0" test "$RC" -eq 0
diag "$OUT"
check "... every tenant's persistent sandbox, by name" \
    eval 'grep -Eq "^$A1 +alice +work +host +running" "$T/out" &&
    grep -Eq "^$A2 +alice +other " "$T/out" &&
    grep -Eq "^$B1 +bob +bobs " "$T/out"'
check "... and bob's run, as a run" grep -Eq "^[0-9a-f]{32} +bob +\(a run\) +host +running" "$T/out"
check "... and not the idle warm container" test "$(grep -c '^[0-9a-f]\{32\} ' "$T/out")" -eq 4
ctl sandbox list -t alice
check "sandbox list -t alice: hers alone" \
    eval '[ $RC -eq 0 ] && [ "$(grep -c "^[0-9a-f]\{32\} " "$T/out")" -eq 2 ] &&
    ! grep -q " bob " "$T/out"'
ctl -j sandbox list
check "sandbox list -j: 4 objects, one a one-shot" \
    test "$(json "$T/out" "len(d), sum(1 for s in d if s[\"oneshot\"])")" = "(4, 1)"
RUNID=$(json "$T/out" "[s[\"id\"] for s in d if s[\"oneshot\"]][0]")

ctl sandbox inspect "${A1:0:8}"
check "sandbox inspect by an 8-digit prefix: exit 0" test "$RC" -eq 0
diag "$OUT"
IPID=$(sed -n 's/^init pid: //p' "$T/out")
check "... its id, tenant, name, runtime, state and limits" \
    eval 'grep -qx "id: $A1" "$T/out" && grep -qx "tenant: alice" "$T/out" &&
    grep -qx "name: work" "$T/out" && grep -qx "runtime: runc" "$T/out" &&
    grep -qx "state: running" "$T/out" &&
    grep -qx "limit memory: 128.0M" "$T/out" && grep -qx "processes: 1" "$T/out"'
check "... the host pid of its sandbox-init ($IPID), which is that" \
    eval '[ -n "$IPID" ] && [ "$(cat /proc/$IPID/comm)" = sandbox-init ]'
ctl sandbox inspect 0000000000
check "inspect of no sandbox: exit 1, said" \
    eval '[ $RC -eq 1 ] && grep -q "no sandbox 0000000000" "$T/err"'
ctl sandbox inspect "${A1:0:2}"
check "inspect of a 2-digit prefix: refused, exit 1" \
    eval '[ $RC -eq 1 ] && grep -q "not a sandbox id" "$T/err"'
ctl sandbox inspect ../etc
check "inspect of a path: refused, exit 1" test "$RC" -eq 1

# A tenant's own view carries no host pid.
SBX -t alice status -S "$A1" > "$T/st" 2>&1
check "alice's own status of it works, and says nothing of pids" \
    eval 'grep -q "id=$A1" "$T/st" && ! grep -qi "pid" "$T/st"'

# --- non-root ----------------------------------------------------------------

setpriv --reuid="$MU" --regid="$MU" --clear-groups "$MCPCTL" -f "$CONF" \
    sandbox list > "$T/nr.out" 2> "$T/nr.err"
rc=$?
check "sandbox list as uid $MU (mcpd's, in the sockets' group): refused, exit 1" \
    eval '[ $rc -eq 1 ] && grep -q "may not act as mcpctl" "$T/nr.err"'
diag "$(cat "$T/nr.err")"
"$B/tests/sbx" -u $MU -g $MU -r mcpctl -s "$RUN/sandboxd.sock" list \
    > /dev/null 2> "$T/nr2.err"
check "a hello as mcpctl from uid $MU is refused by sandboxd" \
    grep -q "may not act as mcpctl" "$T/nr2.err"
SBX -t alice kill -S "$A2" > /dev/null 2> "$T/k.err"
check "mcpd may not kill: sandboxd says only mcpctl may" \
    grep -q "only mcpctl may kill sandboxes" "$T/k.err"

# --- kill ----------------------------------------------------------------------

ctl sandbox kill "$RUNID"
check "kill bob's run: exit 0, said" \
    eval '[ $RC -eq 0 ] && grep -qx "killed $RUNID" "$T/out"'
wait "$RUNPID"
check "bob's run ends with the error, at once" \
    grep -q "killed by the administrator" "$T/run.err"
ctl sandbox kill "$A1"
check "kill alice's busy sandbox: exit 0" test "$RC" -eq 0
wait "$EXECPID"
check "... its exec ends" true
check "... its sandbox-init is gone" \
    wait_for 10 eval '! kill -0 "$IPID" 2>/dev/null'
SBX -t alice status -S "$A1" > /dev/null 2> "$T/st2"
check "... alice no longer has it" grep -q "no sandbox" "$T/st2"
check "... nor its disk" \
    test -z "$(ls "$T/state/sandboxes" 2>/dev/null | grep "$A1")"
ctl sandbox kill "$A1" "$B1"
check "kill of a gone one and a live one: exit 1, the live one killed" \
    eval '[ $RC -eq 1 ] && grep -q "no sandbox $A1" "$T/err" &&
    grep -qx "killed $B1" "$T/out"'
ctl sandbox list
check "the list has alice's other sandbox alone" \
    eval '[ "$(grep -c "^[0-9a-f]\{32\} " "$T/out")" -eq 1 ] &&
    grep -q "^$A2 " "$T/out"'
"$MCPCTL" -f "$CONF" audit list --event sandbox-stop > "$T/audit" 2>&1
check "each kill is in the audit log, by mcpctl, with the signal" \
    test "$(grep -c 'intent .*signal=KILL by=mcpctl uid=0' "$T/audit")" -eq 3
diag_file "$T/audit"
"$MCPCTL" -f "$CONF" audit verify -c "$(audit_anchor)" > /dev/null 2>&1
check "the audit log verifies, anchored by auditd's last checkpoint line" \
    test $? -eq 0

# --- config check and token new --------------------------------------------------

ctl config check
check "config check of the suite's file: exit 0, OK, the counts" \
    eval '[ $RC -eq 0 ] && grep -q "^$CONF: OK: 2 tenants (2 tokens), 1 limits, 1 images, 13 languages, 1 listen statements; runtime runc (runc, /[^)]*); sha256:" "$T/out"'
diag "$OUT"
check "... having started a container under runc beside the running suite" \
    grep -qE "^runtime runc: a container started in [0-9]+ ms$" "$T/out"
{ cat "$CONF"; printf 'runtime spare {\n\tpath "%s"\n\tkind crun\n}\n' "$T/nocrun"; } > "$T/bad4.conf"
"$MCPCTL" -j -f "$T/bad4.conf" config check > "$T/out" 2> "$T/err"
rc=$?
check "a runtime block whose binary is not there, even unused: exit 1, named" \
    eval '[ $rc -eq 1 ] && grep -q "runtime spare $T/nocrun" "$T/err" &&
    [ "$(json "$T/out" "d[\"runtime\"][\"name\"] + \"/\" + d[\"runtime\"][\"kind\"]")" = runc/runc ]'
check "... and no container tried, saying why" \
    test "$(json "$T/out" "d['containers'], d['containers_untried']")" = "([], 'the file has problems')"
diag "$(cat "$T/err")"
sed "s/^user .*/user \"nosuchuser$$\"/" "$CONF" > "$T/bad1.conf"
"$MCPCTL" -f "$T/bad1.conf" config check > "$T/out" 2> "$T/err"
rc=$?
check "a user that does not exist: exit 1, NOT OK, named" \
    eval '[ $rc -eq 1 ] && grep -q "NOT OK" "$T/out" && grep -q "nosuchuser$$" "$T/err"'
printf 'tenant x {\n\tlimits nosuch\n}\nbogus\n' > "$T/bad2.conf"
"$MCPCTL" -f "$T/bad2.conf" config check > "$T/out" 2> "$T/err"
rc=$?
check "a file that does not parse: exit 1, each error with its line" \
    eval '[ $rc -eq 1 ] && grep -q "does not parse" "$T/out" &&
    grep -q "bad2.conf:4:" "$T/err"'
sed "s|^sandbox-init .*|sandbox-init \"$T/none\"|" "$CONF" > "$T/bad3.conf"
"$MCPCTL" -j -f "$T/bad3.conf" config check > "$T/out" 2> "$T/err"
rc=$?
check "a sandbox-init that is not there: exit 1, -j ok false, named" \
    eval '[ $rc -eq 1 ] && [ "$(json "$T/out" "d[\"ok\"], d[\"problems\"]")" = "(False, 1)" ] &&
    grep -q "sandbox-init $T/none" "$T/err"'

ctl token new alice
TOK=$(head -n 1 "$T/out")
LINE=$(sed -n 's/^\ttoken //p' "$T/out")
check "token new: a token ($TOK) and its line" \
    eval '[ $RC -eq 0 ] && [[ "$TOK" =~ ^mcpd_[A-Za-z0-9_-]{43}$ ]] &&
    [ "$LINE" = "\"sha256:$(printf %s "$TOK" | sha256sum | cut -d" " -f1)\"" ]'
ctl token new alice
check "a second one differs" test "$(head -n 1 "$T/out")" != "$TOK"
ctl -j token new
check "token new -j: token, hash and line agree" \
    eval '"$PY" -c "import json,hashlib,sys; d=json.load(open(sys.argv[1]));
h=\"sha256:\"+hashlib.sha256(d[\"token\"].encode()).hexdigest()
sys.exit(0 if d[\"hash\"]==h and d[\"line\"]==\"token \\\"\"+h+\"\\\"\" else 1)" "$T/out"'
ctl token new "bad name"
check "token new with a bad tenant name: usage, exit 2" test "$RC" -eq 2

# The new token, put in the file, works once mcpd has read it again.
sed -i "s|^\ttoken \"sha256:2222.*|\ttoken $LINE|" "$CONF"
n=$(count_in "$T/mcpd.log" "configuration reloaded")
kill -HUP "${PID[mcpd]}"
check "mcpd reloads the file on SIGHUP" \
    wait_for 10 count_gt "$T/mcpd.log" "configuration reloaded" "${n:-0}"
code=$(curl -s -m 10 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/mcp" \
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H "Authorization: Bearer $TOK" \
    -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}')
check "a client with the new token is served (status $code)" test "$code" = 200

# --- the end -------------------------------------------------------------------

for d in mcpd sandboxd auditd; do
	stop "$d"
	rc=$?
	check "$d stops cleanly (exit $rc)" test "$rc" -eq 0
done
check "no sandbox process is left" wait_for 10 eval '[ -z "$(sandbox_pids_all)" ]'
if [ "$tap_failed" -ne 0 ]; then
	for l in sandboxd mcpd; do diag "--- $l.log"; diag_file "$T/$l.log" 30; done
fi
done_testing
