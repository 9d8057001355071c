#!/bin/bash
# The audit log end to end, with the real daemons: what each of them
# records and under whose identity, mcpctl's listings and filters, key
# rotation, kill -9 of auditd under a stream of records, a full disk, and
# every kind of tampering, done with the sqlite3 CLI on the database the
# real auditd wrote, caught by mcpctl audit verify.
. "$TOP/tests/lib.sh"
require_root

MU=64101	# mcpd's uid
AU=64102	# auditd's
RU=64150	# a reader in the audit group
XU=64199	# a stranger
T=$(mktemp -d /tmp/mcpd-audit.XXXXXX)
chmod 0755 "$T"
CONF=$T/mcpd.conf
RUN=$T/run
AFS=$T/afs		# a small tmpfs for the audit database
ADIR=$AFS/audit
DB=$ADIR/audit.db
CTL=$B/mcpctl
TA=alice-token-$$
PORT=$(free_port)
URL=http://127.0.0.1:$PORT

mkdir -p "$AFS"
mount -t tmpfs -o size=16m,mode=0755 mcpd-audit-test "$AFS" || {
	not_ok "mount a tmpfs for the audit database"
	done_testing
	exit 1
}

cat > "$CONF" <<EOF
user "$MU"
run directory "$RUN"
state directory "$T/state"
sandbox-init "$B/sandbox-init"
sandbox uids 268435456 64
listen on 127.0.0.1 port $PORT
limits default {
	memory 256M
	pids 64
	timeout 10s
	output 64K
	disk 32M
}
tenant alice {
	token "sha256:$(printf %s "$TA" | sha256sum | cut -d' ' -f1)"
}
tenant bob {
	token "sha256:$(printf %s "bob-$TA" | sha256sum | cut -d' ' -f1)"
}
audit {
	user "$AU"
	required yes
	database "$DB"
	excerpt 64
}
EOF
CONFSUM=$(sha256sum "$CONF" | cut -d' ' -f1)

cleanup() {
	[ -n "${TAILPID:-}" ] && kill "$TAILPID" 2>/dev/null
	kill_daemons 0.5
	[ -n "${KEEP:-}" ] && cp -a "$AFS" "$T/afs-kept" 2>/dev/null
	wait_for 5 umount "$AFS" 2>/dev/null || umount -l "$AFS" 2>/dev/null
	# A container's mount namespace may hold the tmpfs a moment longer.
	[ -n "${KEEP:-}" ] && echo "# kept $T" ||
	    wait_for 10 rm -rf "$T" 2>/dev/null
}
trap cleanup EXIT

# export FILTER...: every record as JSON lines, in $T/x.jsonl
export_() {
	"$CTL" -f "$CONF" audit export "$@" > "$T/x.jsonl"
}
# jq_ PYTHON-EXPRESSION: evaluated with R, the list of exported records;
# prints the result, exits 1 when it is false or fails.
jq_() {
	/usr/bin/python3 - "$T/x.jsonl" "$1" <<'PY'
import json, sys
R = [json.loads(l) for l in open(sys.argv[1])]
def body(ev, **kw):
    return [r for r in R if r["event"] == ev and
            all(r["body"].get(k) == v for k, v in kw.items())]
try:
    v = eval(sys.argv[2])
except Exception as e:
    print("error:", e)
    sys.exit(1)
print(v)
sys.exit(0 if v else 1)
PY
}
# mcp NAME TOKEN TOOL ARGS-JSON: a tools/call over HTTP (2026-07-28, no
# session); status in ST, the body in $T/NAME.b
mcp() {
	ST=$(curl -s -m 30 -o "$T/$1.b" -w '%{http_code}' \
	    -H "Authorization: Bearer $2" \
	    -H "Content-Type: application/json" \
	    -H "Accept: application/json, text/event-stream" \
	    -H "MCP-Protocol-Version: 2026-07-28" \
	    -H "Mcp-Method: tools/call" -H "Mcp-Name: $3" \
	    --data-binary "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}},\"name\":\"$3\",\"arguments\":$4}}" \
	    "$URL/mcp")
}
SBX() {
	"$B/tests/sbx" -u $MU -g $MU -s "$RUN/sandboxd.sock" "$@"
}
sql() {
	sqlite3 -bail "$@"
}
verify() {	# verify [mcpctl options]: VOUT and VRC
	VOUT=$("$CTL" "$@" 2>&1)
	VRC=$?
}
last_checkpoint() {	# the last checkpoint auditd logged, as -c takes it
	sed -n 's/.*audit checkpoint size=\([0-9]*\) root=\([0-9a-f]*\) .*/\1:\2/p' \
	    "$T/auditd.log" | tail -1
}

if ! command -v curl > /dev/null || ! command -v sqlite3 > /dev/null; then
	not_ok "curl and sqlite3 are needed"
	done_testing
	exit 1
fi

# --- the suite starts; the files are the audit user's ----------------------

start auditd
start sandboxd
start mcpd
check "auditd is ready" wait_log "$T/auditd.log" "ready: listening"
check "mcpd is ready and connected to auditd" \
    wait_log "$T/mcpd.log" "connected to auditd"
check "sandboxd is connected to auditd" \
    wait_log "$T/sandboxd.log" "connected to auditd"
check "auditd made a signing key on its first start" \
    log_has "$T/auditd.log" "created the audit signing key $ADIR/audit.key"
check "the audit directory is $AU:$AU 0750" \
    test "$(stat -c '%u:%g %a' "$ADIR")" = "$AU:$AU 750"
check "the database is $AU:$AU 0640" \
    test "$(stat -c '%u:%g %a' "$DB")" = "$AU:$AU 640"
check "the secret key is $AU's alone (0600)" \
    test "$(stat -c '%u:%g %a' "$ADIR/audit.key")" = "$AU:$AU 600"
check "the public key is for everyone (0644)" \
    test "$(stat -c '%a' "$ADIR/audit.pub")" = 644
KEY1=$(cut -d' ' -f2 "$ADIR/audit.pub")
check "audit.pub names its key id ($KEY1)" \
    grep -Eq '^[0-9a-f]{16}$' <<< "$KEY1"
check "the first checkpoint is in the log" \
    wait_log "$T/auditd.log" "audit checkpoint size="

# --- what is recorded, and as whom ------------------------------------------

CODE='echo hello from alice; echo this line makes the code longer than the excerpt of sixty-four bytes'
mcp run "$TA" run_code "{\"language\":\"sh\",\"code\":\"$CODE\"}"
check "alice runs code over HTTP ($ST)" \
    grep -q 'hello from alice' "$T/run.b"
mcp bad "wrong-token" run_code '{"language":"sh","code":"echo no"}'
check "a wrong token is refused ($ST)" test "$ST" = 401
SBX -t bob run -l sh -m 64G -c 'echo too big' > /dev/null 2> "$T/deny.e"
check "bob asking beyond his limits is denied" \
    grep -q 'exceeds the tenant' "$T/deny.e"
mcp create "$TA" sandbox_create '{"name":"box"}'
SBID=$(grep -o '"id":"[0-9a-f]\{32\}"' "$T/create.b" | head -1 | cut -d'"' -f4)
check "alice creates a sandbox ($SBID)" test -n "$SBID"
mcp exec "$TA" sandbox_exec "{\"sandbox\":\"$SBID\",\"command\":\"echo in the box\"}"
check "runs a command in it" grep -q 'in the box' "$T/exec.b"
mcp stop "$TA" sandbox_stop "{\"sandbox\":\"$SBID\"}"
check "and stops it ($ST)" test "$ST" = 200
# The records are acknowledged before the answers go out, but mcpd's
# tool-call record follows its answer: wait for it.
wait_for 10 bash -c "'$CTL' -f '$CONF' audit list --event tool-call | grep -q sandbox_stop"
export_
for d in mcp-auditd:auditd:$AU mcp-sandboxd:sandboxd:0 mcpd:mcpd:$MU; do
	IFS=: read -r bin role uid <<< "$d"
	name=${role}
	pid=${PID[$name]}
	check "$bin's start is recorded with the configuration's path and SHA-256, as $role pid $pid uid $uid" \
	    jq_ "[r for r in R if r['event'] == 'daemon-start' and
	        r['role'] == '$role' and r['pid'] == $pid and
	        r['uid'] == $uid and r['body']['config'] == '$CONF' and
	        r['body']['config.sha256'] == '$CONFSUM']"
done
check "the tool call: mcpd's record, with the tenant, tool, result and a digest of the arguments" \
    jq_ "[r for r in body('tool-call', tool='run_code', result='ok')
        if r['role'] == 'mcpd' and r['uid'] == $MU and
        r['pid'] == ${PID[mcpd]} and r['tenant'] == 'alice' and
        r['outcome'] == 'ok' and len(r['body']['args.sha256']) == 64 and
        int(r['body']['args.bytes']) > 64 and
        len(r['body']['args.excerpt']) <= 64 and
        r['body']['transport'] == 'http']"
CODESUM=$(printf %s "$CODE" | sha256sum | cut -d' ' -f1)
OUTSUM=$(printf 'hello from alice\nthis line makes the code longer than the excerpt of sixty-four bytes\n' | sha256sum | cut -d' ' -f1)
check "the run: sandboxd's intent, with the code's digest and a 64-byte excerpt" \
    jq_ "[r for r in body('run', **{'code.sha256': '$CODESUM'})
        if r['role'] == 'sandboxd' and r['uid'] == 0 and
        r['pid'] == ${PID[sandboxd]} and r['outcome'] == 'intent' and
        r['tenant'] == 'alice' and len(r['body']['code.excerpt']) == 64]"
check "the run's result: exit status, durations, and the output as digest and excerpt" \
    jq_ "[r for r in body('run', **{'stdout.sha256': '$OUTSUM'})
        if r['outcome'] == 'ok' and r['body']['exit'] == '0' and
        len(r['body']['stdout.excerpt']) == 64 and
        r['sandbox'] != '' and 'wall_ms' in r['body']]"
# The code runs while its intent commits, but not before: the intent names
# the container claimed for it, and comes first.
check "the run's intent names its container, and precedes its result" \
    jq_ "([(i['sandbox'], i['seq'] < o['seq'])
        for i in body('run', **{'code.sha256': '$CODESUM'})
        for o in body('run', **{'stdout.sha256': '$OUTSUM'})
        if i['outcome'] == 'intent' and o['outcome'] == 'ok'] ==
        [(o['sandbox'], True)
        for o in body('run', **{'stdout.sha256': '$OUTSUM'})
        if o['outcome'] == 'ok' and o['sandbox'] != ''])"
check "the wrong token: an auth-failure record, denied" \
    jq_ "[r for r in R if r['event'] == 'auth-failure' and
        r['outcome'] == 'denied' and r['role'] == 'mcpd' and
        r['body']['transport'] == 'http' and
        r['body']['peer'].startswith('127.0.0.1')]"
check "bob's request: a policy-denial record naming him and why" \
    jq_ "[r for r in R if r['event'] == 'policy-denial' and
        r['tenant'] == 'bob' and r['outcome'] == 'denied' and
        'memory' in r['body']['reason']]"
check "the sandbox's lifecycle: create, exec and stop, each intent and outcome, with its id" \
    jq_ "[(r['event'], r['outcome']) for r in R if r['sandbox'] == '$SBID'
        and r['role'] == 'sandboxd'] == [('sandbox-create', 'ok'),
        ('exec', 'intent'), ('exec', 'ok'), ('sandbox-stop', 'intent'),
        ('sandbox-stop', 'ok')]"
check "and mcpd's tool calls on it carry its id" \
    jq_ "sorted(r['body']['tool'] for r in R if r['sandbox'] == '$SBID'
        and r['event'] == 'tool-call') == ['sandbox_exec', 'sandbox_stop']"
check "seqs run 1..N with no gap" \
    jq_ "[r['seq'] for r in R] == list(range(1, len(R) + 1))"

# --- listings and filters ---------------------------------------------------

N=$(wc -l < "$T/x.jsonl")
out=$("$CTL" -f "$CONF" audit list)
check "list shows every record, one line each ($N)" \
    test "$(wc -l <<< "$out")" -eq "$N"
check "a list line: seq, time, who, event, outcome, tenant, summary" \
    grep -Eq "^ +[0-9]+ 20[0-9-]{8}T[0-9:.]{12}Z mcpd\[${PID[mcpd]}\]/$MU +tool-call +ok +alice +- +tool=run_code" <<< "$out"
export_ --tenant alice
check "--tenant alice: alice's records alone" \
    jq_ "len(R) >= 3 and all(r['tenant'] == 'alice' for r in R)"
export_ --event tool-call --event auth-failure
check "--event twice: either event" \
    jq_ "sorted(set(r['event'] for r in R)) == ['auth-failure', 'tool-call']"
export_ --outcome denied
check "--outcome denied: the auth failure and the policy denial" \
    jq_ "sorted(r['event'] for r in R) == ['auth-failure', 'policy-denial']"
export_ --sandbox "${SBID:0:6}"
check "--sandbox with an id prefix (${SBID:0:6}): the sandbox's records" \
    jq_ "len(R) >= 7 and all(r['sandbox'] == '$SBID' for r in R)"
export_ --since 1h
check "--since 1h: every record" jq_ "len(R) == $N"
export_ --until 2020-01-01
check "--until 2020-01-01: none" jq_ "len(R) == 0"
"$CTL" -f "$CONF" audit export > "$T/all.jsonl"
T3=$(sed -n 3p "$T/all.jsonl" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["time"])')
export_ --since "$T3" --until "$T3"
check "--since and --until an exact time: the record of that time ($T3)" \
    jq_ "[r['seq'] for r in R] == [3]"
out=$("$CTL" -j -f "$CONF" audit list -n 2 --tenant alice)
check "list -j -n 2: a JSON array of two" \
    /usr/bin/python3 -c 'import json,sys; a = json.loads(sys.argv[1]); sys.exit(not (isinstance(a, list) and len(a) == 2))' "$out"
out=$("$CTL" -f "$CONF" audit tail -n 1)
check "tail -n 1: the last record (seq $N)" grep -Eq "^ +$N " <<< "$out"
out=$("$CTL" -f "$CONF" audit show 1)
check "show 1: every field, the body one line per key" \
    grep -q '^event     daemon-start' <<< "$out" &&
    grep -q "^    config.sha256  $CONFSUM" <<< "$out" &&
    grep -Eq '^sig       [0-9a-f]{128}$' <<< "$out"
"$CTL" -f "$CONF" audit show 999999 > /dev/null 2> "$T/e"
check "show of a seq not there: exit 1, saying so" \
    test $? -eq 1 -a -n "$(grep 'no record 999999' "$T/e")"
"$CTL" -f "$CONF" audit list --event nosuch > /dev/null 2> "$T/e"
check "an unknown event: exit 2 naming it" \
    test $? -eq 2 -a -n "$(grep 'nosuch: no such event' "$T/e")"
"$CTL" -f "$CONF" audit list --since yesterday > /dev/null 2> "$T/e"
check "a bad time: exit 2 naming it" \
    test $? -eq 2 -a -n "$(grep 'yesterday: not a time' "$T/e")"

# tail -f follows what is added, through its filter.
"$CTL" -f "$CONF" audit tail -f -n 0 --tenant alice --event run > "$T/tail.out" 2>&1 &
TAILPID=$!
sleep 0.5
mcp run2 "$TA" run_code '{"language":"sh","code":"echo followed"}'
check "tail -f shows a new run as it is committed" \
    wait_for 10 grep -q 'run .*alice' "$T/tail.out"
check "tail -f shows nothing its filter leaves out" \
    test -z "$(grep -v ' run ' "$T/tail.out")"
kill "$TAILPID"
wait "$TAILPID" 2>/dev/null
TAILPID=

# A stranger's flood of bad tokens: ten records a second, the rest counted
# in one record of peer "many", so that every failure is in the log.
pids=
for i in $(seq 40); do
	mcp "flood$i" "flood-token-$i" run_code '{"language":"sh","code":"echo no"}' &
	pids="$pids $!"
done
wait $pids
sleep 1.1
mcp flood41 "flood-token-41" run_code '{"language":"sh","code":"echo no"}'
check "a flood of 40 bad tokens, then one more a second later: all refused" \
    test "$(grep -l Unauthorized "$T"/flood*.b | wc -l)" = 41
check "is recorded ten a second, the rest counted, every failure accounted for" \
    wait_for 10 eval 'export_ --event auth-failure &&
    jq_ "(sum(1 if r[\"body\"][\"peer\"] != \"many\" else
        int(r[\"body\"][\"reason\"].split()[0]) for r in R) == 42 and
        any(r[\"body\"][\"peer\"] == \"many\" for r in R) and
        sum(r[\"body\"][\"peer\"] != \"many\" for r in R) < 42)" > /dev/null' ||
    jq_ "[(r[\"body\"][\"peer\"], r[\"body\"][\"reason\"]) for r in R if r[\"body\"][\"peer\"] == \"many\"] + [sum(r[\"body\"][\"peer\"] != \"many\" for r in R)]"

# --- verification of the live log, by root and by the audit group ----------

verify -f "$CONF" audit verify
check "verify: the live log is whole, but with no -c not anchored: exit 3 ($VOUT)" \
    test "$VRC" -eq 3 -a -n "$(grep "^verified [0-9]* records, [0-9]* checkpoints\?, key $KEY1" <<< "$VOUT")" \
    -a -n "$(grep "WARNING: not anchored" <<< "$VOUT")"
verify -f "$CONF" audit verify -c "$(last_checkpoint)"
check "verify -c with the last checkpoint from the log ($(last_checkpoint | cut -c1-20)...)" \
    test "$VRC" -eq 0
verify -f "$CONF" audit verify -c "$(audit_anchor)"
check "verify -c with the log's checkpoint line as it is: anchored ($(sed -n 3p <<< "$VOUT"))" \
    test "$VRC" -eq 0 -a -n "$(grep '^anchored by the checkpoint given with -c for records 1\.\.[0-9]*, made 20' <<< "$VOUT")"
out=$(setpriv --reuid=$RU --regid=$RU --groups=$AU "$CTL" -d "$DB" audit verify -c "$(last_checkpoint)" 2>&1)
check "a member of the audit group may verify the live log ($out)" \
    test $? -eq 0
out=$(setpriv --reuid=$RU --regid=$RU --groups=$AU "$CTL" -d "$DB" audit list -n 1 2>&1)
check "and list it" test $? -eq 0 -a -n "$out"
out=$(setpriv --reuid=$XU --regid=$XU --clear-groups "$CTL" -d "$DB" audit verify 2>&1)
rc=$?
check "a stranger may not: exit 2, with the reason ($out)" \
    test $rc -eq 2 -a -n "$(grep -i 'permission denied\|unable to open\|cannot' <<< "$out")"

# --- hostile senders ---------------------------------------------------------

LOAD=$B/tests/auditload
for k in short bodylen event outcome tenant sandbox body ctl; do
	out=$("$LOAD" -X $k "$RUN/auditd.sock" 2>&1)
	check "a malformed record ($k) closes the connection, nothing stored ($out)" \
	    test "$out" = closed
done
check "auditd says why" \
    log_has "$T/auditd.log" "malformed audit record body: keys out of order"
out=$("$LOAD" -r mcpctl -X none "$RUN/auditd.sock" 2>&1)
check "mcpctl's role may not write records ($out)" test "$out" = closed
out=$(setpriv --reuid=$MU --regid=$MU --clear-groups "$LOAD" -r sandboxd -X none "$RUN/auditd.sock" 2>&1)
check "mcpd's uid may not claim to be sandboxd ($out)" \
    test -n "$(grep -i 'refused\|closed' <<< "$out")"
setpriv --reuid=$MU --regid=$MU --clear-groups "$LOAD" -r mcpd -X none "$RUN/auditd.sock" > "$T/o" 2>&1 &
lpid=$!
wait $lpid
SEQ=$(sed -n 's/^acked //p' "$T/o")
export_
check "a record's sender is who the socket says: role mcpd, uid $MU, pid $lpid" \
    jq_ "[(r['role'], r['uid'], r['pid']) for r in R if r['seq'] == int('${SEQ:-0}')] == [('mcpd', $MU, $lpid)]"
check "auditd is still up, the chain whole" \
    bash -c "alive() { kill -0 ${PID[auditd]}; }; alive && '$CTL' -f '$CONF' audit verify -q -c '$(last_checkpoint)'"

# --- key rotation --------------------------------------------------------------

out=$("$CTL" -f "$CONF" audit keygen 2>&1)
check "keygen stages a new key beside the current one ($out)" \
    test $? -eq 0 -a -f "$ADIR/audit.key.next" -a -f "$ADIR/audit.pub.next"
KEY2=$(cut -d' ' -f2 "$ADIR/audit.pub.next")
check "the staged secret key is $AU's, 0600; its public key 0644" \
    test "$(stat -c '%u:%g %a' "$ADIR/audit.key.next")" = "$AU:$AU 600" -a \
    "$(stat -c '%u:%g %a' "$ADIR/audit.pub.next")" = "$AU:$AU 644"
out=$("$CTL" -f "$CONF" audit keygen 2>&1)
check "a second keygen refuses to replace the staged key" \
    test $? -eq 1 -a -n "$(grep 'a key is staged already' <<< "$out")"
stop auditd
rc=$?
check "auditd stops cleanly (exit $rc)" test $rc -eq 0
# The first start fails between recording the rotation and renaming the
# key files (the old public key's new name is taken by a directory): the
# next one must finish the rotation, not record a second one.
mkdir -p "$ADIR/audit.pub.$KEY1/in-the-way"
start auditd
wait "${PID[auditd]}"
rc=$?
unset "PID[auditd]"
check "a start that cannot rename the key files fails, saying so (exit $rc)" \
    test "$rc" -ne 0 -a -n "$(grep 'rotating the key files in .*: Is a directory (the rotation is recorded' "$T/auditd.log")"
rm -rf "$ADIR/audit.pub.$KEY1"
start auditd
check "the next start finishes the rotation it recorded" \
    wait_log "$T/auditd.log" "the rotation to key $KEY2 is recorded already: finishing it"
check "auditd rotates to the staged key" \
    wait_log "$T/auditd.log" "audit key rotated: $KEY1 -> $KEY2"
check "sandboxd reconnects" \
    wait_for 20 bash -c "[ \$(grep -c 'connected to auditd' '$T/sandboxd.log') -ge 2 ]"
check "mcpd reconnects" \
    wait_for 20 bash -c "[ \$(grep -c 'connected to auditd' '$T/mcpd.log') -ge 2 ]"
check "the old public key is kept as audit.pub.$KEY1, the new one is audit.pub" \
    test -f "$ADIR/audit.pub.$KEY1" -a "$(cut -d' ' -f2 "$ADIR/audit.pub")" = "$KEY2" \
    -a ! -e "$ADIR/audit.key.next" -a ! -e "$ADIR/audit.pub.next"
mcp after "$TA" run_code '{"language":"sh","code":"echo after the rotation"}'
check "work goes on after the rotation" grep -q 'after the rotation' "$T/after.b"
wait_for 10 bash -c "'$CTL' -f '$CONF' audit list --tenant alice | tail -1 | grep -q tool-call"
export_
ROT=$(/usr/bin/python3 -c 'import json,sys; print([json.loads(l)["seq"] for l in open(sys.argv[1]) if json.loads(l)["event"] == "key-rotation"][0])' "$T/x.jsonl")
check "there is one rotation record" \
    jq_ "len([r for r in R if r['event'] == 'key-rotation']) == 1"
check "the rotation is a record ($ROT), signed by the old key, naming both" \
    jq_ "[r for r in R if r['event'] == 'key-rotation' and
        r['keyid'] == '$KEY1' and r['body']['old_keyid'] == '$KEY1' and
        r['body']['new_keyid'] == '$KEY2' and len(r['body']['new_sig']) == 128]"
check "every record after it is signed by the new key" \
    jq_ "(all(r['keyid'] == '$KEY2' for r in R if r['seq'] > $ROT) and
        any(r['seq'] > $ROT for r in R))"
verify -f "$CONF" audit verify -c "$(last_checkpoint)"
check "verify: whole across the rotation, both keys named ($VOUT)" \
    test "$VRC" -eq 0 -a -n "$(grep "keys $KEY1 $KEY2" <<< "$VOUT")"
cp "$ADIR/audit.pub.$KEY1" "$T/old.pub"
verify -f "$CONF" audit verify -k "$T/old.pub"
check "verify -k with the old key alone stops at the first thing the new key signed ($VOUT)" \
    test "$VRC" -eq 1 -a -n "$(grep -E "FAILED at seq ($ROT \(checkpoint\)|$((ROT + 1)) \(untrusted-key\)).* signed by key $KEY2, which is not trusted" <<< "$VOUT")"

# --- kill -9 under a stream of records ---------------------------------------

: > "$T/acks"
"$LOAD" -n 1000000 -w 64 -b 100 -o "$T/acks" "$RUN/auditd.sock" > "$T/load.out" 2>&1 &
lpid=$!
check "a stream of records is being acknowledged" \
    wait_for 20 count_gt "$T/acks" " " 2000
kill -KILL "${PID[auditd]}"
wait "${PID[auditd]}" 2>/dev/null
unset "PID[auditd]"
wait $lpid
NACK=$(wc -l < "$T/acks")
check "the stream ends when auditd dies ($(tail -1 "$T/load.out"))" \
    grep -q 'auditd closed the connection' "$T/load.out"
nready=$(count_in "$T/auditd.log" "ready: listening")
start auditd
check "auditd starts again" \
    wait_for 20 count_gt "$T/auditd.log" "ready: listening" "$nready"
LAST=$(tail -1 "$T/acks" | cut -d' ' -f2)
check "it continues the chain after the last record ($LAST or later)" \
    bash -c "grep 'audit chain at seq' '$T/auditd.log' | tail -1 | awk '{ exit !(\$(NF-4) + 0 >= $LAST) }'"
/usr/bin/python3 - "$T/acks" "$DB" > "$T/lost" 2>&1 <<'PY'
import sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[2] + "?mode=ro", uri=True)
bad = 0
for line in open(sys.argv[1]):
    i, seq = line.split()
    row = db.execute("SELECT body FROM records WHERE seq = ?", (int(seq),)).fetchone()
    if row is None or ("n=%s\n" % i) not in row[0]:
        bad += 1
        print("lost: record %s (seq %s)" % (i, seq))
print("checked", bad)
sys.exit(1 if bad else 0)
PY
check "every one of the $NACK acknowledged records is there, as sent ($(tail -1 "$T/lost"))" \
    test $? -eq 0
verify -f "$CONF" audit verify -c "$(last_checkpoint)"
check "verify: whole after the kill ($VOUT)" test "$VRC" -eq 0

# --- a full disk ---------------------------------------------------------------

check "sandboxd runs code before the disk fills" \
    wait_for 20 bash -c "'$B/tests/sbx' -u $MU -g $MU -s '$RUN/sandboxd.sock' -t alice run -l sh -c 'echo ok' 2>/dev/null | grep -q ok"
FULLSB=$(SBX -t alice create 2> /dev/null)
BEFORE=$("$CTL" -f "$CONF" audit tail -n 1 | awk '{ print $1 }')
dd if=/dev/zero of="$AFS/filler" bs=64k > /dev/null 2>&1
# What space the database had left goes to records until none is left:
# big batches first, then one small record at a time, since a batch that
# failed leaves room in the WAL file that a smaller one still fits in.
"$LOAD" -f -n 100000 -w 16 -b 2000 "$RUN/auditd.sock" > "$T/full.out" 2>&1
# Again until a pass commits nothing: a refused write's rollback, or a
# checkpoint of the WAL, can leave room that a record then takes (seen
# once in CI: sandboxd's intent fitted after the single pass).
for _ in 1 2 3 4 5 6 7 8; do
	"$LOAD" -f -n 100000 -w 1 -b 1 "$RUN/auditd.sock" > "$T/full1.out" 2>&1
	grep -q "acked 0 " "$T/full1.out" && break
	sleep 0.2
done
check "auditd refuses records once the disk is full ($(tail -1 "$T/full.out"))" \
    grep -q 'refused: audit database: database or disk is full' "$T/full.out"
check "and says so in its log" \
    log_has "$T/auditd.log" "database or disk is full: refusing records"
SBX -t alice run -l sh -c 'echo must not run' > "$T/o" 2> "$T/e"
rc=$?
check "sandboxd refuses work, with a clear error ($(grep 'sbx: error' "$T/e"))" \
    test $rc -eq 2 -a -n "$(grep 'sbx: error code=4 .*audit is required and the record was not committed: audit database: database or disk is full' "$T/e")"
check "and nothing ran" test -z "$(grep 'must not run' "$T/o")"
SBX -t alice exec -S "$FULLSB" -c 'touch marker' > /dev/null 2> "$T/e"
rc=$?
check "an exec in a persistent sandbox is refused too ($(grep 'sbx: error' "$T/e"))" \
    test $rc -eq 2 -a -n "$(grep 'sbx: error code=4 ' "$T/e")"
mcp full "$TA" run_code '{"language":"sh","code":"echo must not run"}'
check "an MCP client is told why (tool error naming the audit service)" \
    grep -q 'The audit service is unavailable' "$T/full.b"
nagain=$(count_in "$T/auditd.log" "the audit database takes records again")
rm -f "$AFS/filler"
check "with space again, sandboxd runs code" \
    wait_for 10 bash -c "'$B/tests/sbx' -u $MU -g $MU -s '$RUN/sandboxd.sock' -t alice run -l sh -c 'echo back' 2>/dev/null | grep -q back"
check "auditd says it takes records again" \
    count_gt "$T/auditd.log" "the audit database takes records again" "$nagain"
check "the refused exec never ran: no marker in its sandbox" \
    test -n "$FULLSB" -a -z "$(SBX -t alice ls -S "$FULLSB" . 2> /dev/null | grep marker)" \
    -a -n "$(SBX -t alice exec -S "$FULLSB" -c 'touch marker2' 2>&1 > /dev/null | grep 'result exit=0')" \
    -a -n "$(SBX -t alice ls -S "$FULLSB" . 2> /dev/null | grep marker2)"
SBX -t alice stop -S "$FULLSB" > /dev/null 2>&1
verify -f "$CONF" audit verify -c "$(last_checkpoint)"
check "verify: whole after the full disk ($VOUT)" test "$VRC" -eq 0
N2=$("$CTL" -f "$CONF" audit tail -n 1 | awk '{ print $1 }')
check "nothing acknowledged before was lost (seq $BEFORE..$N2)" \
    test "$N2" -gt "$BEFORE"

# --- tampering, with the sqlite3 CLI, on the database auditd wrote ---------

for d in mcpd sandboxd auditd; do
	stop $d
	rc=$?
	check "$d stops cleanly (exit $rc; a leak under SANITIZE=1 is not)" \
	    test $rc -eq 0
done
check "the suite stops; the daemons' stops are recorded" \
    bash -c "'$CTL' -f '$CONF' audit list --event daemon-stop | grep -q auditd"
CP=$(last_checkpoint)
mkdir -p "$T/orig"
cp -a "$ADIR"/audit.db "$ADIR"/audit.pub* "$T/orig/"
N=$(sql "$T/orig/audit.db" 'SELECT max(seq) FROM records')
K=$((N / 2))
check "the copy has $N records, a checkpoint $CP" test "$N" -gt 20 -a -n "$CP"

# tamper NAME SQL...: a fresh copy, changed by the sqlite3 CLI, in $T/NAME
tamper() {
	local name=$1
	shift
	rm -rf "$T/$name"
	cp -a "$T/orig" "$T/$name"
	sql "$T/$name/audit.db" "$@" || echo "sqlite3 failed: $*"
}
# caught NAME SEQ KIND [verify options]: verify exits 1 naming SEQ and KIND
caught() {
	local name=$1 seq=$2 kind=$3
	shift 3
	verify -d "$T/$name/audit.db" audit verify "$@"
	check "$name: caught at seq $seq ($kind): $(head -1 <<< "$VOUT")" \
	    test "$VRC" -eq 1 -a -n "$(grep -F "FAILED at seq $seq ($kind)" <<< "$VOUT")"
}
tamper control 'SELECT 1' > /dev/null
verify -d "$T/control/audit.db" audit verify -c "$CP"
check "an untouched copy verifies, with the logged checkpoint ($VOUT)" \
    test "$VRC" -eq 0

tamper body "UPDATE records SET body = replace(body, 'exit=0', 'exit=1') WHERE seq = (SELECT min(seq) FROM records WHERE event = 'run' AND outcome = 'ok')"
RUNSEQ=$(sql "$T/orig/audit.db" "SELECT min(seq) FROM records WHERE event = 'run' AND outcome = 'ok'")
caught body "$RUNSEQ" modified
tamper tenant "UPDATE records SET tenant = 'bob' WHERE seq = $K"
caught tenant $K modified
tamper time "UPDATE records SET time = time - 3600000000000 WHERE seq = $K"
caught time $K modified
tamper outcome "UPDATE records SET outcome = 'ok' WHERE seq = (SELECT min(seq) FROM records WHERE outcome = 'denied')"
DSEQ=$(sql "$T/orig/audit.db" "SELECT min(seq) FROM records WHERE outcome = 'denied'")
caught outcome "$DSEQ" modified
tamper rehash "UPDATE records SET tenant = 'bob', hash = randomblob(32) WHERE seq = $K"
caught rehash $K modified
tamper deleted "DELETE FROM records WHERE seq = $K"
caught deleted $K deleted
tamper renumbered "DELETE FROM records WHERE seq = $K" \
    "UPDATE records SET seq = -(seq - 1) WHERE seq > $K" \
    "UPDATE records SET seq = -seq WHERE seq < 0"
caught renumbered $K deleted
tamper copied "UPDATE records SET seq = -(seq + 1) WHERE seq > $K" \
    "UPDATE records SET seq = -seq WHERE seq < 0" \
    "INSERT INTO records SELECT $K + 1, time, role, pid, uid, tenant, sandbox, event, outcome, body, prev, hash, keyid, sig FROM records WHERE seq = $K"
caught copied $((K + 1)) inserted
tamper forged "UPDATE records SET seq = -(seq + 1) WHERE seq > $K" \
    "UPDATE records SET seq = -seq WHERE seq < 0" \
    "INSERT INTO records SELECT $K + 1, time + 1, role, pid, uid, 'alice', '', 'tool-call', 'ok', 'tool=run_code' || char(10), hash, randomblob(32), keyid, randomblob(64) FROM records WHERE seq = $K"
caught forged $((K + 1)) inserted
tamper reordered "UPDATE records SET seq = -1 WHERE seq = $K" \
    "UPDATE records SET seq = $K WHERE seq = $((K + 1))" \
    "UPDATE records SET seq = $((K + 1)) WHERE seq = -1"
caught reordered $K reordered
CPN=${CP%%:*}
tamper cut "DELETE FROM records WHERE seq > $((CPN - 3))"
caught cut $((CPN - 2)) truncated
# Records cut from the end with the checkpoints past them: the database
# holds together, and only a checkpoint kept elsewhere tells.
ANCHOR=$("$CTL" -d "$T/orig/audit.db" audit anchor)
check "audit anchor of the whole log, before the cut, is its last checkpoint's ($ANCHOR)" \
    test "${ANCHOR%% *}" = "$CP"
tamper cutall "DELETE FROM records WHERE seq > $((CPN - 3))" \
    "DELETE FROM checkpoints WHERE size > $((CPN - 3))"
LAST=$((CPN - 3))
LASTCP=$(sql "$T/cutall/audit.db" 'SELECT max(size) FROM checkpoints')
RT=$("$CTL" -j -d "$T/cutall/audit.db" audit show $LAST | json /dev/stdin 'd["time"][:23]')Z
CT=$("$CTL" -j -d "$T/cutall/audit.db" audit verify 2> /dev/null |
    json /dev/stdin 'd["last_checkpoint_time"][:23]')Z
verify -d "$T/cutall/audit.db" audit verify
check "cut with no anchor: exit 3, warning that the end is not anchored" \
    test "$VRC" -eq 3 -a -n "$(grep '^mcpctl: WARNING: not anchored' <<< "$VOUT")"
check "... naming the last record and its time ($LAST, $RT)" \
    grep -qx "mcpctl: last record: $LAST, at $RT" <<< "$VOUT"
check "... and the last checkpoint and its time ($LASTCP, $CT)" \
    grep -qx "mcpctl: last checkpoint: records 1..$LASTCP, made $CT" <<< "$VOUT"
caught cutall $((CPN - 2)) truncated -c "$CP"
caught cutall $((CPN - 2)) truncated -c "$ANCHOR"
check "... naming the records missing ($((CPN - 2))..$N)" \
    grep -q "records $((CPN - 2))\.\.$N are missing (truncated)" <<< "$VOUT"
AFTER=$("$CTL" -d "$T/cutall/audit.db" audit anchor)
verify -d "$T/cutall/audit.db" audit verify -c "$AFTER"
check "with an anchor taken after the cut: exit 0, anchored at $LAST ($(sed -n 3p <<< "$VOUT"))" \
    test "$VRC" -eq 0 -a -n "$(grep -x "anchored by the checkpoint given with -c for records 1..$LAST" <<< "$VOUT")"
tamper cproot "UPDATE checkpoints SET root = randomblob(32) WHERE size = (SELECT max(size) FROM checkpoints)"
caught cproot "$CPN" checkpoint
tamper cpsig "UPDATE checkpoints SET time = time + 1 WHERE size = (SELECT max(size) FROM checkpoints)"
caught cpsig "$CPN" checkpoint

# Several hosts' logs at once, as a collector gathers them: each host's
# directory holds its database, its keys and the checkpoint lines its
# journal shipped.  Three copies of this log stand for three hosts.
hosts() {	# hosts NAME...: fresh host directories from the whole copy
	local h
	for h in "$@"; do
		rm -rf "$T/hosts/$h"
		mkdir -p "$T/hosts"
		cp -a "$T/orig" "$T/hosts/$h"
		grep 'audit checkpoint size=' "$T/auditd.log" > "$T/hosts/$h/checkpoints"
	done
}
hosts h1 h2 h3
verify audit verify "$T/hosts/h1" "$T/hosts/h2" "$T/hosts/h3"
check "three hosts' logs verify at once, each anchored by its checkpoints ($(tail -n 1 <<< "$VOUT"))" \
    eval '[ "$VRC" = 0 ] &&
    [ "$(grep -c "^host h[123] (.*): whole and anchored$" <<< "$VOUT")" = 3 ] &&
    grep -qx "3 hosts: 3 whole and anchored, 0 tampered, 0 not verified, 0 not anchored" <<< "$VOUT"'
cp "$T/body/audit.db" "$T/hosts/h2/audit.db"
cp "$T/cutall/audit.db" "$T/hosts/h3/audit.db"
verify audit verify "$T/hosts/h1" "$T/hosts/h2" "$T/hosts/h3"
check "one host rewritten, one cut: exit 1, each named with what was done ($(tail -n 1 <<< "$VOUT"))" \
    eval '[ "$VRC" = 1 ] &&
    grep -q "^host h1 (.*): whole and anchored$" <<< "$VOUT" &&
    grep -A1 "^host h2 (.*): TAMPERED$" <<< "$VOUT" | grep -q "FAILED at seq $RUNSEQ (modified)" &&
    grep -A1 "^host h3 (.*): TAMPERED$" <<< "$VOUT" | grep -q "FAILED at seq $((CPN - 2)) (truncated)" &&
    grep -qx "3 hosts: 1 whole and anchored, 2 tampered, 0 not verified, 0 not anchored" <<< "$VOUT"'
rm "$T/hosts/h3/checkpoints"
verify audit verify "$T/hosts/h3"
check "the cut host without its collected checkpoints: whole, not anchored (exit 3)" \
    eval '[ "$VRC" = 3 ] && grep -q "^host h3 (.*): whole, not anchored$" <<< "$VOUT"'
hosts h4
rm "$T/hosts/h4/audit.pub"*
verify audit verify "$T/hosts/h1" "$T/hosts/h4" "$T/hosts/nowhere"
check "a host without its keys, and one not there: not verified, exit 2" \
    eval '[ "$VRC" = 2 ] &&
    grep -qx "3 hosts: 1 whole and anchored, 0 tampered, 2 not verified, 0 not anchored" <<< "$VOUT"'
"$CTL" -j audit verify "$T/hosts/h1" "$T/hosts/h2" > "$T/hosts.json" 2> /dev/null
check "-j gives one object a host, named, then the counts" \
    eval 'python3 - "$T/hosts.json" <<'"'"'PY'"'"'
import json, sys
text = open(sys.argv[1]).read()
dec, docs, i = json.JSONDecoder(), [], 0
while i < len(text):
    if text[i].isspace():
        i += 1
        continue
    d, i = dec.raw_decode(text, i)
    docs.append(d)
sys.exit(not (len(docs) == 3 and docs[0]["host"] == "h1" and docs[0]["ok"]
              and docs[1]["host"] == "h2" and not docs[1]["ok"]
              and docs[2]["hosts"] == 2 and docs[2]["tampered"] == 1))
PY'
verify audit verify -c "$CP" "$T/hosts/h1"
check "-c with hosts' logs is refused: each keeps its own" test "$VRC" != 0

# Another key: one the verifier does not trust, then one it does but that
# no rotation record introduced.
"$B/tests/auditgen" keygen "$T/evil.key" "$T/evil.pub" > /dev/null
EVIL=$(cut -d' ' -f2 "$T/evil.pub")
tamper otherkey 'SELECT 1' > /dev/null
"$B/tests/auditgen" resign "$T/otherkey/audit.db" $K "$T/evil.key" > /dev/null
caught otherkey $K untrusted-key
tamper keychange 'SELECT 1' > /dev/null
"$B/tests/auditgen" resign -C "$T/keychange/audit.db" $K "$T/evil.key" > /dev/null
cp "$T/evil.pub" "$T/keychange/audit.pub.$EVIL"
caught keychange $K key-change
# An attacker with write access to the directory cuts the log before the
# rotation, re-signs all of it and puts in his own audit.pub: only a
# public key kept elsewhere (-k) tells.
tamper resigned 'DELETE FROM checkpoints' "DELETE FROM records WHERE seq >= $ROT"
"$B/tests/auditgen" resign -C "$T/resigned/audit.db" 1 "$T/evil.key" > /dev/null
rm -f "$T/resigned"/audit.pub*
cp "$T/evil.pub" "$T/resigned/audit.pub"
verify -d "$T/resigned/audit.db" audit verify
check "a log re-signed with the attacker's key and his audit.pub verifies by itself, unanchored ($(head -1 <<< "$VOUT"))" \
    test "$VRC" -eq 3
caught resigned 1 untrusted-key -k "$T/orig/audit.pub.$KEY1" -k "$T/orig/audit.pub"
verify -j -d "$T/deleted/audit.db" audit verify
check "verify -j names the first bad seq" \
    /usr/bin/python3 -c 'import json,sys; v = json.loads(sys.argv[1]); sys.exit(not (v["ok"] is False and v["first_bad_seq"] == int(sys.argv[2]) and v["kind"] == "deleted"))' "$VOUT" "$K"
verify -d "$T/nowhere/audit.db" audit verify
check "verify of a database that is not there: exit 2 ($VOUT)" test "$VRC" -eq 2
check "mcpctl wrote nothing beside the database it read" \
    test "$(ls "$T/control")" = "$(ls "$T/orig")"

done_testing
