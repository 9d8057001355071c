#!/bin/bash
# Observability on mcpd's HTTP front, against the real suite: /healthz
# (no credentials, Host and Origin still checked; 503 while sandboxd is
# away, or cannot reach auditd; never waits on sandboxd), /metrics (the
# Prometheus text format read by a strict parser; who may read it; its
# counters moved by real runs over HTTP; its pool and sandbox gauges the
# same as mcpctl's; an answer within its deadline from a stopped sandboxd;
# no label a client chose), hostile requests to both, and the greppable
# log lines of tool calls, failed authentications and sessions.
SANDBOX_UIDS=1970274304		# this test's own range (see mcp_stdio.sh)
. "$TOP/tests/lib.sh"
require_root

MU=64101	# mcpd's uid
AU=64102	# auditd's
CU=64150	# carol's, a tenant by uid who may not read metrics
T=$(mktemp -d /tmp/mcpd-metrics.XXXXXX)
chmod 0755 "$T"
CONF=$T/mcpd.conf
RUN=$T/run
PY=/usr/bin/python3
PROM="$PY $TOP/tests/tools/promtext.py"
PORT=$(free_port)
URL=http://127.0.0.1:$PORT
TA=alice-$RANDOM$RANDOM		# a tenant's token
TO=ops-$RANDOM$RANDOM		# a metrics tenant's
TM=scrape-$RANDOM$RANDOM	# a metrics token
h() { printf %s "$1" | sha256sum | cut -d' ' -f1; }

conf() {	# conf METRICS-TENANT
	cat > "$CONF" <<EOF
user "$MU"
run directory "$RUN"
state directory "$T/state"
sandbox-init "$B/sandbox-init"
sandbox uids $SANDBOX_UIDS 16
listen on 127.0.0.1 port $PORT
listen on unix "$RUN/mcpd.sock" mode 0666
image host host pool 1

limits default {
	memory 128M
	pids 64
	timeout 60s
	disk 16M
}
tenant alice {
	token "sha256:$(h "$TA")"
}
tenant ops {
	token "sha256:$(h "$TO")"
}
tenant carol {
	uid $CU
}
metrics token "sha256:$(h "$TM")"
metrics tenant $1

language python {
	alias py
	file main.py
	run "python3 main.py"
}
audit {
	user "$AU"
	required yes
}
EOF
}
conf ops

cleanup() {
	kill_daemons 0.5
	remove_tmp
}
trap cleanup EXIT

# get NAME [CURL-ARGS...] URL: status in ST, headers $T/NAME.h, body $T/NAME.b
get() {
	local name=$1
	shift
	ST=$(curl -s -m 15 -o "$T/$name.b" -D "$T/$name.h" -w '%{http_code}' "$@")
}
hdr() {	# hdr NAME HEADER
	tr -d '\r' < "$T/$1.h" | sed -n "s/^$2: *//Ip" | tail -1
}
scrape() {	# scrape NAME: /metrics with the metrics token, checked
	get "$1" -H "Authorization: Bearer $TM" "$URL/metrics"
	[ "$ST" = 200 ] && $PROM check "$T/$1.b" mcpd_ > "$T/$1.check"
}
val() {	# val NAME SERIES...: the values in the scrape NAME
	$PROM get "$T/$1.b" "${@:2}"
}
healthy() {
	get hz "$URL/healthz"
	[ "$ST" = "$1" ]
}

# A legacy session of alice's over HTTP, plain JSON answers.
ACC="Accept: application/json"
CT="Content-Type: application/json"
session() {	# session: SID set
	get init -H "Authorization: Bearer $TA" -H "$CT" -H "$ACC" \
	    --data-binary '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"metrics test\nmcpd: tool_call tenant=forged","version":"1"}}}' \
	    "$URL/mcp"
	SID=$(hdr init Mcp-Session-Id)
	get inited -H "Authorization: Bearer $TA" -H "$CT" -H "$ACC" \
	    -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-06-18" \
	    --data-binary '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	    "$URL/mcp"
}
call() {	# call NAME TOOL ARGS-JSON: a tools/call in the session
	get "$1" -H "Authorization: Bearer $TA" -H "$CT" -H "$ACC" \
	    -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-06-18" \
	    --data-binary "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":$2,\"arguments\":$3}}" \
	    "$URL/mcp"
}
jget() {	# jget NAME EXPR: a Python expression of d, the JSON body
	"$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$T/$1.b" "$2" 2>/dev/null
}

start auditd
start sandboxd
wait_sandboxd
start mcpd
check "mcpd is ready" wait_log "$T/mcpd.log" "ready: serving MCP on 2 sockets"

# --- /healthz ------------------------------------------------------------------

check "/healthz is 200 once sandboxd's ping has come back through auditd" \
    wait_for 10 healthy 200
check "... text/plain, no credentials asked ($(hdr hz Content-Type))" \
    eval '[ "$(hdr hz Content-Type)" = "text/plain; charset=utf-8" ]'
diag "$(cat "$T/hz.b")"
check "... says ok, and sandboxd and auditd up" \
    eval '[ "$(head -1 "$T/hz.b")" = ok ] && grep -qx "sandboxd: up" "$T/hz.b" &&
    grep -qx "auditd via sandboxd: up" "$T/hz.b" && grep -qx "auditd: up" "$T/hz.b"'
check "... and is not to be cached" test "$(hdr hz Cache-Control)" = no-store
head_req() {	# head_req NAME PATH [HEADER]: a raw HEAD, all the reply
	"$PY" - "$PORT" "$2" "${3:-X-None: 1}" > "$T/$1.raw" <<'PYEOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(("HEAD %s HTTP/1.1\r\nHost: localhost\r\n%s\r\n"
           "Connection: close\r\n\r\n" % (sys.argv[2], sys.argv[3])).encode())
s.settimeout(10)
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
head, _, body = data.partition(b"\r\n\r\n")
print(head.decode().replace("\r\n", "\n"))
print("body: %d bytes" % len(body))
PYEOF
	ST=$(head -1 "$T/$1.raw" | cut -d' ' -f2)
}
rawlen() { sed -n 's/^Content-Length: //Ip' "$T/$1.raw"; }
head_req hzhead /healthz
check "HEAD /healthz: 200, the length of the GET's body, no body" \
    eval '[ "$ST" = 200 ] && [ "$(rawlen hzhead)" = "$(stat -c %s "$T/hz.b")" ] &&
    grep -qx "body: 0 bytes" "$T/hzhead.raw"'
get hzq "$URL/healthz?probe=lb"
check "/healthz with a query is the same ($ST)" test "$ST" = 200
get hzpost -X POST "$URL/healthz"
check "POST /healthz is 405, Allow: GET, HEAD ($ST)" \
    eval '[ "$ST" = 405 ] && [ "$(hdr hzpost Allow)" = "GET, HEAD" ]'
head -c 1048576 /dev/zero > "$T/zero"
get hzbody -H "$CT" --data-binary @"$T/zero" "$URL/healthz"
check "POST /healthz with a MiB of body is 405 before it is read ($ST)" \
    test "$ST" = 405
get hzgetbody -X GET -H "$CT" --data-binary '{}' "$URL/healthz"
check "GET /healthz with a body is 400 ($ST)" test "$ST" = 400
get hzhost -H "Host: evil.example" "$URL/healthz"
check "/healthz for another Host is 403: DNS rebinding rules hold ($ST)" \
    test "$ST" = 403
get hzorigin -H "Origin: http://evil.example" "$URL/healthz"
check "... and for another Origin ($ST)" test "$ST" = 403
get hzslash "$URL/healthz/"
check "/healthz/ is 404 ($ST)" test "$ST" = 404

# --- who may read /metrics ------------------------------------------------------

get m_none "$URL/metrics"
check "/metrics without credentials is 401 ($ST)" \
    eval '[ "$ST" = 401 ] && hdr m_none WWW-Authenticate | grep -q "^Bearer"'
get m_bad -H "Authorization: Bearer nope" "$URL/metrics"
check "... with a bad token, 401 ($ST)" test "$ST" = 401
get m_alice -H "Authorization: Bearer $TA" "$URL/metrics"
check "... with alice's token, 403: she is no metrics tenant ($ST)" \
    test "$ST" = 403
setpriv --reuid $CU --regid $CU --clear-groups \
    curl -s -m 15 -o "$T/m_carol.b" -w '%{http_code}' \
    --unix-socket "$RUN/mcpd.sock" http://localhost/metrics > "$T/m_carol.st"
check "... as carol, by uid on the unix socket, 403 ($(cat "$T/m_carol.st"))" \
    test "$(cat "$T/m_carol.st")" = 403
get m_root --unix-socket "$RUN/mcpd.sock" http://localhost/metrics
check "... as root on the unix socket, 200 ($ST)" test "$ST" = 200
get m_ops -H "Authorization: Bearer $TO" "$URL/metrics"
check "... with ops's token, a metrics tenant's, 200 ($ST)" test "$ST" = 200
scrape m1
check "... with the metrics token, 200 ($ST)" test "$ST" = 200
check "... Content-Type: text/plain; version=0.0.4; charset=utf-8" \
    test "$(hdr m1 Content-Type)" = "text/plain; version=0.0.4; charset=utf-8"
get mt_mcp -H "Authorization: Bearer $TM" -H "$CT" -H "$ACC" \
    --data-binary '{"jsonrpc":"2.0","id":1,"method":"ping"}' "$URL/mcp"
check "the metrics token on /mcp is 403: it reads metrics, nothing else ($ST)" \
    test "$ST" = 403

# --- the format ------------------------------------------------------------------

check "/metrics parses as Prometheus text: $(tail -1 "$T/m1.check")" \
    $PROM check "$T/m1.b" mcpd_
[ -s "$T/m1.check" ] && grep -v samples "$T/m1.check" | head -5 | sed 's/^/# /'
check "sandboxd answered: mcpd_sandboxd_up 1, mcpd_healthy 1" \
    test "$(val m1 mcpd_sandboxd_up mcpd_healthy)" = "1 1"
check "the refusals are counted: no_credentials 1, bad_token 1, forbidden 2" \
    test "$(val m1 'mcpd_auth_failures_total{reason="no_credentials"}' \
    'mcpd_auth_failures_total{reason="bad_token"}' \
    'mcpd_auth_failures_total{reason="forbidden"}')" = "1 1 2"
check "... and logged, one greppable line each" \
    eval 'grep -q "auth_failure peer=127.0.0.1:[0-9]* reason=bad_token path=/metrics$" "$T/mcpd.log" &&
    grep -q "auth_failure peer=\"unix:uid $CU\" reason=forbidden path=/metrics$" "$T/mcpd.log"'
check "HTTP responses by code: 401 twice, 403 four times" \
    test "$(val m1 'mcpd_http_requests_total{code="401"}' \
    'mcpd_http_requests_total{code="403"}')" = "2 4"
check "host_refused counted, and logged with the Host quoted" \
    eval '[ "$(val m1 "mcpd_errors_total{kind=\"host_refused\"}")" = 2 ] &&
    grep -q "host_refused peer=127.0.0.1:[0-9]* host=evil.example origin=-" "$T/mcpd.log"'

# --- pool and sandboxes: the same as mcpctl says --------------------------------

check "the warm pool is full" wait_for 20 eval 'scrape pool &&
    [ "$(val pool mcpd_pool_ready mcpd_pool_target)" = "1 1" ]'
session
check "alice has a session ($SID)" test ${#SID} -eq 32
check "... logged as session_open, the client's name quoted on one line" \
    eval 'grep -q "session_open tenant=alice cred=token:[0-9a-f]\{4\} session=$SID transport=http version=2025-06-18 client=\"metrics test\\\\x0amcpd: tool_call tenant=forged/1\"$" "$T/mcpd.log" &&
    ! grep -q "^\(<[0-9]>\)\?mcpd: tool_call tenant=forged" "$T/mcpd.log"'
call create '"sandbox_create"' '{"name":"keep"}'
check "alice creates a persistent sandbox" \
    test "$(jget create 'd["result"].get("isError", False)')" = False
scrape m2
"$B/mcpctl" -j -f "$CONF" status > "$T/status.json"
ctlv() { "$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))["sandboxd"]
print(" ".join(str(eval(e)) for e in sys.argv[2:]))' "$T/status.json" "$@"; }
check "pool gauges match mcpctl -j status ($(val m2 mcpd_pool_ready mcpd_pool_starting mcpd_pool_target))" \
    test "$(val m2 mcpd_pool_ready mcpd_pool_starting mcpd_pool_target \
    mcpd_pool_claimed_total mcpd_pool_empty_total mcpd_pool_failed_total)" = \
    "$(ctlv 'd["pool"]["ready"]' 'd["pool"]["starting"]' 'd["pool"]["wanted"]' \
    'd["pool"]["claimed"]' 'd["pool"]["empty"]' 'd["pool"]["failed"]')"
check "sandbox gauges match too ($(val m2 mcpd_sandboxes_persistent mcpd_sandboxes_persistent_running mcpd_uid_ranges_used mcpd_uid_ranges))" \
    test "$(val m2 mcpd_sandboxes_persistent mcpd_sandboxes_persistent_running \
    mcpd_sandboxes_oneshot mcpd_sandbox_processes mcpd_uid_ranges_used \
    mcpd_uid_ranges mcpd_sandboxd_start_time_seconds)" = \
    "$(ctlv 'd["sandboxes"]["persistent"]' 'd["sandboxes"]["persistent_running"]' \
    'd["sandboxes"]["oneshot"]' 'd["sandboxes"]["processes"]' \
    'd["sandboxes"]["uid_ranges_used"]' 'd["sandboxes"]["uid_ranges"]' 'd["started"]')"
check "... one persistent sandbox, 16 uid ranges" \
    test "$(val m2 mcpd_sandboxes_persistent mcpd_uid_ranges)" = "1 16"
check "sandboxd's audit records: committed as mcpctl says, none failed" \
    eval '[ "$(val m2 "mcpd_audit_records_committed_total{sender=\"sandboxd\"}" \
    "mcpd_audit_records_failed_total{sender=\"sandboxd\"}" mcpd_sandboxd_auditd_up)" = \
    "$(ctlv "d[\"audit\"][\"committed\"]" "d[\"audit\"][\"failed\"]") 1" ]'
check "mcpd's own records are committed too" \
    eval '[ "$(val m2 "mcpd_audit_records_committed_total{sender=\"mcpd\"}")" -ge 1 ] &&
    [ "$(val m2 "mcpd_audit_records_failed_total{sender=\"mcpd\"}")" = 0 ]'
check "mcpd's gauges: 1 session, no request in flight" \
    test "$(val m2 mcpd_sessions mcpd_requests_in_flight)" = "1 0"

# --- runs move the counters --------------------------------------------------

R='mcpd_runs_total{language="python",result="%s"}'
# shellcheck disable=SC2059
RUNS=("$(printf "$R" ok)" "$(printf "$R" nonzero)" "$(printf "$R" timeout)")
HC='mcpd_run_duration_seconds_count{language="python"}'
TC='mcpd_tool_call_duration_seconds_count{tool="run_code"}'
TOK='mcpd_tool_calls_total{tool="run_code",outcome="ok"}'
TERR='mcpd_tool_calls_total{tool="run_code",outcome="tool-error"}'
before=$(val m2 "${RUNS[@]}" "$HC" "$TC" "$TOK" "$TERR" | sed 's/-/0/g')
call run1 '"run_code"' '{"language":"python","code":"print(6*7)"}'
check "run 1: exit 0" test "$(jget run1 'd["result"]["structuredContent"]["exit_code"]')" = 0
call run2 '"run_code"' '{"language":"py","code":"import sys; sys.exit(1)"}'
check "run 2 (as py): exit 1" test "$(jget run2 'd["result"]["structuredContent"]["exit_code"]')" = 1
call run3 '"run_code"' '{"language":"python","code":"while True: pass","timeout":1}'
check "run 3: timed out" test "$(jget run3 'd["result"]["structuredContent"]["timed_out"]')" = True
scrape m3
check "after them /metrics still parses: $(tail -1 "$T/m3.check")" \
    $PROM check "$T/m3.b" mcpd_
after=$(val m3 "${RUNS[@]}" "$HC" "$TC" "$TOK" "$TERR")
diag "before: $before; after: $after"
read -r b1 b2 b3 bh bt bo be <<< "$before"
read -r a1 a2 a3 ah at ao ae <<< "$after"
check "runs_total{python}: ok, nonzero and timeout each +1 (py counted as python)" \
    test "$((a1 - b1)) $((a2 - b2)) $((a3 - b3))" = "1 1 1"
check "run_duration_seconds{python}: count +3" test $((ah - bh)) -eq 3
check "tool_call_duration_seconds{run_code}: count +3" test $((at - bt)) -eq 3
check "tool_calls_total{run_code}: ok +1, tool-error +2" \
    test "$((ao - bo)) $((ae - be))" = "1 2"
check "the timed-out run is in a bucket of 1 s or more, not below" \
    eval '[ "$(val m3 "mcpd_run_duration_seconds_bucket{language=\"python\",le=\"0.5\"}")" -le 2 ]'
check "the pool served them: claimed_total moved" \
    test "$(val m3 mcpd_pool_claimed_total)" -gt "$(val m2 mcpd_pool_claimed_total)"
check "each call has a greppable log line with its result" \
    eval 'grep -q "tool_call tenant=alice cred=token:[0-9a-f]\{4\} tool=run_code outcome=ok ms=[0-9]* transport=http session=$SID language=python result=ok$" "$T/mcpd.log" &&
    grep -q "tool_call tenant=alice .* tool=run_code outcome=tool-error .* language=python result=nonzero$" "$T/mcpd.log" &&
    grep -q "tool_call tenant=alice .* tool=run_code outcome=tool-error .* language=python result=timeout$" "$T/mcpd.log"'
call ex '"sandbox_exec"' '{"sandbox":"keep","commands":["true","false"]}'
scrape m4
check "sandbox_exec's commands are counted: ok and nonzero" \
    test "$(val m4 'mcpd_execs_total{result="ok"}' 'mcpd_execs_total{result="nonzero"}')" = "1 1"
check "... and its line names them" \
    grep -q "tool_call tenant=alice .* tool=sandbox_exec outcome=tool-error .* commands=2 result=nonzero$" "$T/mcpd.log"

# --- no label a client chose -------------------------------------------------

call odd '"x\"}\\nmcpd_evil{a=\"1\"} 1"' '{}'
call odd2 '"run_code"' '{"language":"py\"}\\nmcpd_evil 1","code":"1"}'
get parse -H "Authorization: Bearer $TA" -H "$CT" -H "$ACC" \
    -H "Mcp-Session-Id: $SID" --data-binary '{"jsonrpc":' "$URL/mcp"
scrape m5
check "after hostile names /metrics still parses: $(tail -1 "$T/m5.check")" \
    $PROM check "$T/m5.b" mcpd_
check "no series or label carries the client's text" \
    eval '! grep -q evil "$T/m5.b"'
check "the unknown tool is counted as tool=\"other\", outcome error" \
    test "$(val m5 'mcpd_tool_calls_total{tool="other",outcome="error"}')" = 1
check "the unknown language ran nothing and made no language label" \
    eval '[ "$($PROM sum "$T/m5.b" mcpd_runs_total)" = "$($PROM sum "$T/m3.b" mcpd_runs_total)" ] &&
    [ "$(grep -o "language=\"[^\"]*\"" "$T/m5.b" | sort -u)" = "language=\"python\"" ]'
check "the tools/call of no such tool is counted as invalid_params" \
    test "$(val m5 'mcpd_errors_total{kind="invalid_params"}')" -ge 1
check "the JSON that did not parse, as parse_error" \
    test "$(val m5 'mcpd_errors_total{kind="parse_error"}')" = 1
check "... and its log line says tool=other" \
    grep -q "tool_call tenant=alice .* tool=other outcome=error .* code=-32602$" "$T/mcpd.log"

# --- hostile requests to /metrics ---------------------------------------------

get mhuge -H "Authorization: Bearer $TM" "$URL/metrics?$(head -c 9000 /dev/zero | tr '\0' a)"
check "/metrics with a 9000-byte query is refused ($ST)" \
    eval '[ "$ST" = 414 ] || [ "$ST" = 400 ] || [ "$ST" = 431 ]'
get mq -H "Authorization: Bearer $TM" "$URL/metrics?name[]=mcpd_sessions&x=%00"
check "/metrics with a query of its own is served whole ($ST)" \
    eval '[ "$ST" = 200 ] && $PROM check "$T/mq.b" mcpd_ > /dev/null'
head_req mhead /metrics "Authorization: Bearer $TM"
check "HEAD /metrics: 200, a length, no body" \
    eval '[ "$ST" = 200 ] && [ "$(rawlen mhead)" -gt 1000 ] &&
    grep -qx "body: 0 bytes" "$T/mhead.raw"'
get mheadnone -I "$URL/metrics"
check "HEAD /metrics without credentials: 401 ($ST)" test "$ST" = 401
get mpost -X POST -H "Authorization: Bearer $TM" "$URL/metrics"
check "POST /metrics: 405 ($ST)" test "$ST" = 405
get mpostbody -H "$CT" --data-binary @"$T/zero" "$URL/metrics"
check "POST /metrics with a MiB, no credentials: 405 before it is read ($ST)" \
    test "$ST" = 405
get mgetbody -X GET -H "Authorization: Bearer $TM" -H "$CT" --data-binary '{}' "$URL/metrics"
check "GET /metrics with a body: 400 ($ST)" test "$ST" = 400
get mhost -H "Authorization: Bearer $TM" -H "Host: evil.example" "$URL/metrics"
check "/metrics for another Host: 403 ($ST)" test "$ST" = 403
get mtwo -H "Authorization: Bearer $TM" -H "Authorization: Bearer $TM" "$URL/metrics"
check "two Authorization headers: 401 ($ST)" test "$ST" = 401
get mcase -H "Authorization: Bearer $TM" "$URL/METRICS"
check "/METRICS is 404 ($ST)" test "$ST" = 404
"$PY" - "$PORT" "$TM" > "$T/pipeline.out" <<'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
req = ("GET /metrics HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer %s\r\n\r\n"
       % sys.argv[2]).encode()
s.sendall(req * 20)
s.close()	# gone before the answers: mcpd must let the scrapes go
print("sent")
EOF
check "20 pipelined scrapes from a client that leaves at once" \
    grep -q sent "$T/pipeline.out"
check "mcpd is still up" eval 'sleep 0.5; alive mcpd && healthy 200'

# --- a stuck sandboxd, a stopped one -------------------------------------------

kill -STOP "${PID[sandboxd]}"
start_ms=$(date +%s%3N)
get hzstop "$URL/healthz"
hz_ms=$(( $(date +%s%3N) - start_ms ))
scrape mstop
stop_ms=$(( $(date +%s%3N) - start_ms - hz_ms ))
kill -CONT "${PID[sandboxd]}"
check "while sandboxd is stopped /healthz answers at once ($hz_ms ms)" \
    test "$hz_ms" -lt 1000
check "/metrics answers after its 2 s deadline, not later ($stop_ms ms)" \
    eval '[ "$ST" = 200 ] && [ "$stop_ms" -ge 1900 ] && [ "$stop_ms" -lt 4000 ]'
check "... with mcpd_sandboxd_up 0 and no pool numbers, and parses" \
    eval '[ "$(val mstop mcpd_sandboxd_up mcpd_pool_ready)" = "0 -" ] &&
    $PROM check "$T/mstop.b" mcpd_ > /dev/null'
check "... and logs why" wait_log "$T/mcpd.log" "metrics: sandboxd did not answer in 2000 ms"
check "sandboxd answers the next scrape" \
    wait_for 10 eval 'scrape mcont && [ "$(val mcont mcpd_sandboxd_up)" = 1 ]'

check "sandboxd stops" stop sandboxd
check "/healthz is 503 while sandboxd is away" wait_for 10 healthy 503
diag "$(cat "$T/hz.b")"
check "... saying why" \
    eval '[ "$(head -1 "$T/hz.b")" = "unavailable: sandboxd is not connected" ] &&
    grep -qx "sandboxd: down" "$T/hz.b"'
head_req hzhead503 /healthz
check "... HEAD too ($ST)" test "$ST" = 503
scrape maway
check "/metrics answers at once: sandboxd_up 0, healthy 0, no pool numbers" \
    test "$(val maway mcpd_sandboxd_up mcpd_healthy mcpd_pool_ready)" = "0 0 -"
check "... and still parses" $PROM check "$T/maway.b" mcpd_
start sandboxd
check "/healthz is 200 again once sandboxd is back" wait_for 20 healthy 200
check "... and /metrics has sandboxd's numbers" \
    wait_for 10 eval 'scrape mback && [ "$(val mback mcpd_sandboxd_up)" = 1 ]'

# Audit lag: auditd stopped (SIGSTOP), a refused client's record waits in
# mcpd, and the lag grows; once auditd goes on, it is answered.
scrape lag0
check "audit lag is 0 for both senders while auditd keeps up" \
    test "$(val lag0 'mcpd_audit_lag_seconds{sender="mcpd"}' \
    'mcpd_audit_lag_seconds{sender="sandboxd"}')" = "0 0"
kill -STOP "${PID[auditd]}"
get lagbad -H "Authorization: Bearer not-a-token" "$URL/mcp"
sleep 1.5
scrape lag1
lag=$(val lag1 'mcpd_audit_lag_seconds{sender="mcpd"}')
check "with auditd stopped, mcpd's record waits and its lag grows ($lag s)" \
    eval '[ "$(val lag1 "mcpd_audit_records_waiting{sender=\"mcpd\"}")" = 1 ] &&
    awk -v l="$lag" "BEGIN { exit !(l >= 1.0 && l < 30) }"'
kill -CONT "${PID[auditd]}"
check "... and is 0 again once auditd goes on" \
    wait_for 10 eval 'scrape lag2 &&
    [ "$(val lag2 "mcpd_audit_lag_seconds{sender=\"mcpd\"}")" = 0 ]'

# Audit is required: sandboxd without auditd runs nothing, and mcpd learns
# of it from its next ping through sandboxd (one every 5 s).
check "auditd stops" stop auditd
check "/healthz is 503 once sandboxd's ping finds auditd gone" \
    wait_for 10 healthy 503
check "... saying why" \
    grep -qx "unavailable: sandboxd does not reach auditd, and audit is required" "$T/hz.b"
start auditd
check "... and 200 when auditd is back" wait_for 10 healthy 200

# --- reload: who may read ----------------------------------------------------

conf alice
kill -HUP "${PID[mcpd]}"
check "mcpd reloads" wait_log "$T/mcpd.log" "metrics readers changed"
get r_alice -H "Authorization: Bearer $TA" "$URL/metrics"
RA=$ST
get r_ops -H "Authorization: Bearer $TO" "$URL/metrics"
check "after the reload alice may read /metrics and ops may not ($RA $ST)" \
    eval '[ "$RA $ST" = "200 403" ] && $PROM check "$T/r_alice.b" mcpd_ > /dev/null'

# --- sessions end with a line ----------------------------------------------------

call stop '"sandbox_stop"' '{"sandbox":"keep"}'
check "alice stops her sandbox" \
    test "$(jget stop 'd["result"].get("isError", False)')" = False
get del -X DELETE -H "Authorization: Bearer $TA" -H "Mcp-Session-Id: $SID" \
    -H "MCP-Protocol-Version: 2025-06-18" "$URL/mcp"
check "alice ends her session ($ST)" test "$ST" = 200
check "... logged as session_close reason=deleted" \
    grep -q "session_close tenant=alice cred=token:[0-9a-f]\{4\} session=$SID transport=http reason=deleted ms=[0-9]*$" "$T/mcpd.log"

check "mcpd is still up, nothing fatal in its log" \
    eval 'alive mcpd && ! grep -q "fatal\|SIGSYS\|seccomp" "$T/mcpd.log"'
check "mcpd stops cleanly" stop mcpd
suite_end
done_testing
