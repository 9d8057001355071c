#!/bin/bash
# The daemons' connection slots under a flood (issue 19, finding 3): a
# stdio tenant's uid opens connections to mcp-auditd's and mcp-sandboxd's
# sockets and says nothing, half a hello, or a whole one, and holds them.
# A connection silent for 5 s is closed; no uid holds more than 16 at
# either daemon; the daemons' own peers (mcpd's uid, sandboxd's, root's)
# have slots of their own, so that even with every other slot taken they
# reconnect after a restart of auditd or of sandboxd; and mcpd --stdio of
# a uid whose own slots are full refuses tool calls, never running them
# unrecorded.  Meanwhile another stdio tenant and the HTTP mcpd still work
# and are audited.  Flood sizes and durations are fixed: the whole runs in
# about two minutes.
SANDBOX_UIDS=1977614336		# this test's own range, apart from the others'
. "$TOP/tests/lib.sh"
require_root

MU=64101	# mcpd's uid, and the sockets' group
AU=64102	# auditd's
EU=64181	# eve: a stdio tenant who floods
LU=64182	# lea: a stdio tenant who just works
CU=64190	# crowd: 17 uids from here, one tenant's
T=$(mktemp -d /tmp/mcpd-slots.XXXXXX)
chmod 0755 "$T"
CONF=$T/mcpd.conf
RUN=$T/run
PORT=$(free_port)
URL=http://127.0.0.1:$PORT/mcp
TW=web-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
PEER=$B/tests/peer
CTL=$B/mcpctl
DEADLINE=5000	# ms: proc.h, PROC_HELLO_MS
PERUID=16	# auditd.c and sandboxd.c: MAXPERUID
AMAX=128	# auditd.c: AUDITD_MAXCONNS
SMAX=256	# sandboxd.c: SANDBOXD_MAXCONNS

crowd_uids=""
for i in $(seq 0 16); do crowd_uids="$crowd_uids	uid $((CU + i))
"; done
cat > "$CONF" <<EOF
user "$MU"
run directory "$RUN"
state directory "$T/state"
sandbox-init "$B/sandbox-init"
sandbox uids $SANDBOX_UIDS 16
listen on 127.0.0.1 port $PORT
image host host pool 0

limits default {
	memory 128M
	timeout 30s
}

tenant web {
	token "sha256:$(printf %s "$TW" | sha256sum | cut -d' ' -f1)"
}
tenant eve {
	uid $EU
}
tenant lea {
	uid $LU
}
tenant crowd {
$crowd_uids}

audit {
	user "$AU"
	required yes
}
EOF

export T CONF MU

# The tenants' mcpd --stdio run as their uids, which may not reach a build
# directory under a private one.
install -m 0755 "$B/mcpd" "$T/mcpd"

FLOODS=""
cleanup() {
	[ -n "$FLOODS" ] && kill $FLOODS 2>/dev/null
	kill_daemons 0.5
	remove_tmp
}
trap cleanup EXIT

# flood NAME UID SOCKET N MODE SECONDS [keep]: peer's flood, in the
# background, as UID in the sockets' group; its output in $T/NAME.
flood() {
	local name=$1 uid=$2 sock=$3 n=$4 mode=$5 secs=$6
	shift 6
	"$PEER" -u "$uid" -g "$uid" -G $MU -r mcpd-stdio -w "$secs" \
	    flood "$RUN/$sock.sock" "$n" "$mode" "$@" > "$T/$name" 2>&1 &
	FLOODS="$FLOODS $!"
}

# fl NAME FIELD: a field of a flood's summary line.
fl() {
	sed -n "s/^flood .*$2=\([0-9-]*\).*/\1/p" "$T/$1"
}

# stdio_call UID OUT TOOL ARGS: one tool call through mcpd --stdio as UID;
# the JSON-RPC answer in OUT ({} when none came), mcpd's stderr in OUT.err.
stdio_call() {
	/usr/bin/python3 - "$@" <<'PY'
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["TOP"], "tests", "integration"))
from mcpclient import Stdio
uid, out, tool, args = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
E = os.environ
c = Stdio([E["T"] + "/mcpd", "--stdio", "-v", "-f", E["CONF"]],
          out + ".err", user=uid, group=int(E["MU"]))
r = {}
try:
    c.initialize()
    r = c.tool(tool, json.loads(args), timeout=40)
except Exception as e:
    r = {"exception": repr(e)}
json.dump(r, open(out, "w"))
c.close()
PY
}

# http_call OUT TOOL ARGS: one stateless tool call to the HTTP mcpd as web.
http_call() {
	curl -s -m 40 "$URL" -H "Authorization: Bearer $TW" \
	    -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' \
	    -H 'MCP-Protocol-Version: 2026-07-28' \
	    -H 'Mcp-Method: tools/call' -H "Mcp-Name: $2" \
	    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"'"$2"'","arguments":'"$3"',"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' \
	    > "$1" 2>&1
}

# audited TENANT MARK: a tool-call record of the tenant's holds MARK.
audited() {
	"$CTL" -f "$CONF" audit export --tenant "$1" --event tool-call \
	    2>/dev/null | grep -q -- "$2"
}

# works WHAT MARK: lea over stdio and web over HTTP each run code that
# prints MARK, and each call is in the audit log.
works() {
	stdio_call $LU "$T/lea-$2" run_code \
	    '{"language":"sh","code":"echo $((40+2))-'"$2"'"}'
	check "$1: lea's mcpd --stdio runs code ($(head -c 300 "$T/lea-$2"))" \
	    grep -q "42-$2" "$T/lea-$2"
	check "$1: ... and its call is audited" \
	    wait_for 10 audited lea "$2"
	http_call "$T/web-$2" run_code \
	    '{"language":"sh","code":"echo $((40+2))-'"$2"'H"}'
	check "$1: the HTTP mcpd runs code ($(head -c 300 "$T/web-$2"))" \
	    grep -q "42-$2H" "$T/web-$2"
	check "$1: ... and its call is audited" \
	    wait_for 10 audited web "$2H"
}

# closed_by_deadline NAME WANT: WANT connections the daemon accepted were
# closed at its hello deadline, not before and not long after.
closed_by_deadline() {
	local n lo hi
	n=$(fl "$1" closed) lo=$(fl "$1" close_ms | cut -d- -f1)
	hi=$(fl "$1" close_ms | cut -d- -f2)
	check "$1: the $2 it let in are closed after $DEADLINE ms of silence ($(grep ^flood "$T/$1"))" \
	    test "${n:-0}" -eq "$2" -a "${lo:-0}" -ge $((DEADLINE - 500)) \
	    -a "${hi:-0}" -le $((DEADLINE + 4000))
}

# refused_per_uid NAME WANT: WANT were refused for the uid's cap, saying so.
refused_per_uid() {
	local n
	n=$(fl "$1" refused)
	check "$1: $2 refused, the uid at its $PERUID ($(grep -E '^(flood|reason)' "$T/$1" | tr '\n' ' '))" \
	    test "${n:-0}" -eq "$2" -a -n "$(grep "^reason $2 uid $EU has $PERUID connections here, its most" "$T/$1")"
}

start_suite
works "before any flood" m0

# silent MODE NA NS MARK: eve opens NA connections to auditd and NS to
# sandboxd that never say a whole hello, while lea and web work; each
# daemon takes 16 of them and closes those at the deadline.
silent() {
	local mode=$1 na=$2 ns=$3
	flood $mode-a $EU auditd "$na" "$mode" 10
	flood $mode-s $EU sandboxd "$ns" "$mode" 10
	check "eve opened $na connections ($mode) to auditd and $ns to sandboxd" \
	    wait_for 10 eval 'grep -qx "connected $na" "$T/$mode-a" &&
	    grep -qx "connected $ns" "$T/$mode-s"'
	works "eve's $mode connections held" "$4"
	wait $FLOODS
	FLOODS=""
	refused_per_uid $mode-a $((na - PERUID))
	refused_per_uid $mode-s $((ns - PERUID))
	closed_by_deadline $mode-a $PERUID
	closed_by_deadline $mode-s $PERUID
}

# --- idle connections: 70 to auditd, 300 to sandboxd -------------------------

silent idle 70 300 m1
check "auditd logs the deadline" \
    log_has "$T/auditd.log" "no hello within $DEADLINE ms: closing"
n=$(grep -c "refused uid $EU" "$T/auditd.log")
check "auditd logs the refusals of a flood in a line or two, not 54 ($n)" \
    test "$n" -ge 1 -a "$n" -le 3

# --- half a hello: 40 to each ------------------------------------------------

silent half 40 40 m2

# --- whole hellos: eve fills her own slots at auditd ------------------------

flood hello-a $EU auditd 70 hello 25
check "eve opened 70 connections to auditd, each saying hello" \
    wait_for 10 grep -qx "connected 70" "$T/hello-a"
works "eve's hellos held" m3
s=$(date +%s)
stdio_call $EU "$T/eve" sandbox_create '{"name":"unrecorded"}'
secs=$(( $(date +%s) - s ))
check "eve's own mcpd --stdio refuses the call, naming audit ($(head -c 400 "$T/eve"))" \
    eval 'json "$T/eve" "d[\"result\"][\"isError\"]" | grep -qx True &&
    grep -q "nothing may run unrecorded" "$T/eve"'
check "... within 15 s ($secs s)" test "$secs" -le 15
check "... and says why in its log" \
    grep -q "refused us: uid $EU has $PERUID connections here" "$T/eve.err"
out=$("$CTL" -f "$CONF" sandbox list -t eve 2>&1)
check "nothing was made for eve ($out)" eval '! grep -q unrecorded <<< "$out"'
wait $FLOODS
FLOODS=""
refused_per_uid hello-a $((70 - PERUID))
check "hello-a: the $PERUID that said hello are held" \
    test "$(fl hello-a open)" -eq $PERUID

# --- every slot taken, and the daemons restarted -----------------------------
# 17 uids of the crowd tenant each keep 16 connections that said hello at
# each daemon, opening again at once any that close: more than the slots
# of either.  auditd and then sandboxd restart under it.

for i in $(seq 0 16); do
	flood crowd-a-$i $((CU + i)) auditd $PERUID hello 90 keep
	flood crowd-s-$i $((CU + i)) sandboxd $PERUID hello 90 keep
done
check "the crowd holds every ordinary slot of auditd ($AMAX)" \
    wait_for 20 log_has "$T/auditd.log" "all $AMAX connections are taken"
check "... and of sandboxd ($SMAX)" \
    wait_for 20 log_has "$T/sandboxd.log" "all $SMAX connections are taken"
out=$("$CTL" -f "$CONF" sandbox list 2>&1)
check "mcpctl (root) still reaches sandboxd ($out)" test $? -eq 0
n_sb=$(count_in "$T/sandboxd.log" "connected to auditd (")
n_ma=$(count_in "$T/mcpd.log" "connected to auditd (")
n_ar=$(count_in "$T/auditd.log" "ready: listening")
check "auditd stops" stop auditd
start auditd
check "auditd is back" \
    wait_for 20 count_gt "$T/auditd.log" "ready: listening" "$n_ar"
check "sandboxd reconnects to auditd under the flood" \
    wait_for 20 count_gt "$T/sandboxd.log" "connected to auditd (" "$n_sb"
check "mcpd reconnects to auditd under the flood" \
    wait_for 20 count_gt "$T/mcpd.log" "connected to auditd (" "$n_ma"
n_ms=$(count_in "$T/mcpd.log" "connected to sandboxd (")
n_sb=$(count_in "$T/sandboxd.log" "connected to auditd (")
check "sandboxd stops" stop sandboxd
start sandboxd
check "sandboxd is back, and reconnects to auditd under the flood" \
    wait_for 30 count_gt "$T/sandboxd.log" "connected to auditd (" "$n_sb"
check "mcpd reconnects to sandboxd under the flood" \
    wait_for 20 count_gt "$T/mcpd.log" "connected to sandboxd (" "$n_ms"
check "the restarted sandboxd's slots are all taken again" \
    wait_for 20 eval '[ "$(grep -c "all $SMAX connections are taken" "$T/sandboxd.log")" -ge 2 ]'
http_call "$T/web-m4" run_code '{"language":"sh","code":"echo $((40+2))-m4"}'
check "under the flood, the HTTP mcpd runs code ($(head -c 300 "$T/web-m4"))" \
    grep -q "42-m4" "$T/web-m4"
check "... and its call is audited" wait_for 10 audited web m4
kill $FLOODS 2>/dev/null
wait $FLOODS 2>/dev/null
FLOODS=""
works "after the crowd" m5

check "mcpd is still the process it was" alive mcpd
out=$("$CTL" -f "$CONF" audit verify -c "$(audit_anchor)" 2>&1)
check "mcpctl audit verify passes, anchored by auditd's log ($out)" \
    test $? = 0
check "mcpd stops cleanly" stop mcpd
suite_end

if [ "$tap_failed" -ne 0 ]; then
	for d in auditd sandboxd mcpd; do
		diag "--- $d.log"
		diag_file "$T/$d.log" 10
	done
fi
done_testing
