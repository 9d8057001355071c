#!/bin/bash
# MCP over HTTP, from hostile clients: Streamable HTTP at /mcp (both eras),
# the 2024-11-05 HTTP+SSE transport at /sse and /messages, on TCP with
# bearer tokens and on unix sockets by uid.  The order of checks (Host and
# Origin, credentials, method, media types, body, session, version), event
# streams and their resumption, and the HTTP/1.1 parser against request
# smuggling shapes, oversized and slow requests, clients that never read,
# crowds of connections and pipelining.  mcpd must still be up at the end,
# with nothing fatal in its log, and stop cleanly.
SANDBOX_UIDS=1967128576		# this test's own range (see mcp_stdio.sh)
. "$TOP/tests/lib.sh"
require_root

MU=64101	# mcpd's uid
AU=64102	# auditd's
XU=64150	# a uid that is no tenant's
T=$(mktemp -d /tmp/mcpd-http.XXXXXX)
chmod 0755 "$T"
CONF=$T/mcpd.conf
RUN=$T/run
J="python3 $TOP/tests/tools/mcpwire.py"
PORT=$(free_port)
TA=alice-token-$$
TB=bob-token-$$
A_AUTH="Authorization: Bearer $TA"
B_AUTH="Authorization: Bearer $TB"
URL=http://127.0.0.1:$PORT
ADDR=127.0.0.1:$PORT

cat > "$CONF" <<EOF
user "$MU"
run directory "$RUN"
state directory "$T/state"
sandbox-init "$B/sandbox-init"
sandbox uids $SANDBOX_UIDS 16
host name web-1
allow proxy 127.0.0.2
listen on 127.0.0.1 port $PORT
listen on unix "$RUN/mcpd.sock"
listen on unix "$RUN/open.sock" mode 0666

limits default {
	memory 256M
	timeout 60s
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
}
EOF

BGPIDS=""
trap cleanup_bg EXIT

if ! command -v curl > /dev/null; then
	not_ok "curl is needed"
	done_testing
	exit 1
fi

# --- helpers -----------------------------------------------------------------

# req NAME CURL-ARGS...: status in ST, headers in $T/NAME.h, body $T/NAME.b
req() {
	local name=$1
	shift
	LASTB=$name
	ST=$(curl -s -m 15 -o "$T/$name.b" -D "$T/$name.h" -w '%{http_code}' "$@")
}
# post NAME BODY [CURL-ARGS...]: a JSON POST to /mcp, as alice, with
# Content-Type and Accept as a client should send them, unless AUTH, CT
# or ACCEPT say otherwise ("-" for none).
post() {
	local name=$1 body=$2 auth=${AUTH:-$A_AUTH}
	local ct=${CT:-application/json}
	local accept=${ACCEPT:-application/json, text/event-stream}
	shift 2
	[ "$auth" = - ] && auth="X-No-Auth: 1"
	ct="Content-Type: $ct"
	[ "$ct" = "Content-Type: -" ] && ct="Content-Type:"
	accept="Accept: $accept"
	[ "$accept" = "Accept: -" ] && accept="Accept:"
	req "$name" -H "$ct" -H "$accept" -H "$auth" \
	    --data-binary "$body" "$@" "$URL/mcp"
}
# hdr NAME HEADER: a header of the response (the last, if several)
hdr() {
	tr -d '\r' < "$T/$1.h" | sed -n "s/^$2: *//Ip" | tail -1
}
# jb NAME PATH: part of the JSON body (the first message in it)
jb() {
	$J get "$T/$1.b" - "$2"
}
# raw NAME [send options]: bytes on stdin to the TCP port, the reply in
# $T/NAME.raw, its status in RST.
raw() {
	local name=$1
	shift
	$J send "$ADDR" --wait "${WAIT:-3}" ${ONE---one} "$@" > "$T/$name.raw"
	RST=$(head -1 "$T/$name.raw" | cut -d' ' -f2)
}
rawreq() {	# rawreq NAME TEXT: printf TEXT (with its escapes) as a request
	local name=$1
	shift
	raw "$name" < <(printf "$@")
}
# is STATUS CODE: ST is STATUS and the body a JSON-RPC error with CODE.
is() {
	[ "$ST" = "$1" ] && [ "$(jb "$LASTB" error.code)" = "$2" ]
}

INIT_T='{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"VERSION","capabilities":{},"clientInfo":{"name":"hostile","version":"1"}}}'
INITED='{"jsonrpc":"2.0","method":"notifications/initialized"}'
PING='{"jsonrpc":"2.0","id":"p","method":"ping"}'
init_body() { echo "${INIT_T/VERSION/$1}"; }

# session VERSION: a new initialized session, its id in SID
session() {
	post init "$(init_body "$1")"
	SID=$(hdr init Mcp-Session-Id)
	post inited "$INITED" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $1"
}

META='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
MV="MCP-Protocol-Version: 2026-07-28"
modern() {	# modern NAME METHOD PARAMS-JSON-TAIL [CURL-ARGS...]
	local name=$1 m=$2 p=$3
	shift 3
	post "$name" "{\"jsonrpc\":\"2.0\",\"id\":\"m\",\"method\":\"$m\",\"params\":{$META$p}}" -H "$MV" "$@"
}

# --- the suite ------------------------------------------------------------------

start auditd
start sandboxd
check "sandboxd is ready" wait_log "$T/sandboxd.log" "ready: listening"
start mcpd
check "mcpd serves MCP on the TCP port" \
    wait_log "$T/mcpd.log" "serving MCP on 127.0.0.1:$PORT"
check "mcpd connects to sandboxd" \
    wait_log "$T/mcpd.log" "connected to sandboxd ("
check "mcpd is ready" wait_log "$T/mcpd.log" "ready: serving MCP on 3 sockets"

# A slowloris, in the background while the rest goes on: the head, one
# byte a second.
printf 'GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: %s\r\n\r\n' \
    "$(head -c 60 /dev/zero | tr '\0' a)" |
    $J send "$ADDR" --trickle 1 --wait 2 --stat "$T/slow.stat" \
    > "$T/slow.raw" &
SLOWPID=$!
BGPIDS="$BGPIDS $SLOWPID"
SLOWSTART=$(date +%s)

# --- the pages: /, unknown paths ----------------------------------------------

req root "$URL/"
check "GET / is 200 text ($ST, $(hdr root Content-Type))" \
    eval '[ "$ST" = 200 ] && hdr root Content-Type | grep -q "^text/plain"'
req nope -H "$A_AUTH" "$URL/nope"
check "another path is 404 ($ST)" test "$ST" = 404
req wk "$URL/.well-known/oauth-protected-resource"
check "no OAuth metadata is claimed ($ST)" test "$ST" = 404

# --- Host and Origin, before anything else ---------------------------------------

for h in evil.example localhost.evil.example 127.0.0.1.nip.io "localhost:abc" \
    "localhost:80:80" "[::2]" "localhost@evil.example" "localhost:" \
    "localhost:123456"; do
	AUTH=- post host "$(init_body 2025-11-25)" -H "Host: $h"
	check "Host \"$h\" is 403, before credentials are asked for ($ST)" \
	    test "$ST" = 403
done
post host "$(init_body 2025-11-25)" -H "Host: evil.example"
check "with a valid token too ($ST)" test "$ST" = 403
for h in "localhost:$PORT" "127.0.0.1:$PORT" "[::1]:$PORT" LOCALHOST localhost; do
	post host "$(init_body 2025-11-25)" -H "Host: $h"
	check "Host \"$h\" is served ($ST)" test "$ST" = 200
done
for o in http://evil.example https://localhost.evil.example null \
    "http://localhost:$PORT/path" ftp://localhost "http://127.0.0.2"; do
	AUTH=- post origin "$(init_body 2025-11-25)" -H "Origin: $o"
	check "Origin \"$o\" is 403 ($ST)" test "$ST" = 403
done
for o in "http://localhost:$PORT" https://127.0.0.1 "http://[::1]:3000" \
    HTTP://LOCALHOST; do
	post origin "$(init_body 2025-11-25)" -H "Origin: $o"
	check "Origin \"$o\" is allowed ($ST)" test "$ST" = 200
done
rawreq twohost 'GET / HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\n\r\n'
check "two Host headers are 400 ($RST)" test "$RST" = 400
rawreq twoorigin "POST /mcp HTTP/1.1\r\nHost: localhost\r\n$A_AUTH\r\nOrigin: http://localhost\r\nOrigin: http://evil.example\r\nContent-Type: application/json\r\nContent-Length: ${#PING}\r\n\r\n$PING"
check "two Origin headers are 403 ($RST)" test "$RST" = 403

# --- credentials ---------------------------------------------------------------

AUTH=- post noauth "$(init_body 2025-11-25)"
check "no Authorization is 401 ($ST)" test "$ST" = 401
check "with WWW-Authenticate: Bearer realm=\"mcp\" ($(hdr noauth WWW-Authenticate))" \
    test "$(hdr noauth WWW-Authenticate)" = 'Bearer realm="mcp"'
AUTH="Authorization: Bearer wrong-$TA" post badauth "$(init_body 2025-11-25)"
check "a wrong token is 401 with error=\"invalid_token\" ($ST, $(hdr badauth WWW-Authenticate))" \
    eval '[ "$ST" = 401 ] && hdr badauth WWW-Authenticate | grep -qF "error=\"invalid_token\""'
for a in "Basic $(printf 'alice:%s' "$TA" | base64)" "Bearer" "Bearer " \
    "Bearer $TA extra" "Bearer${TA}" "Token $TA" \
    "Bearer $(head -c 5000 /dev/zero | tr '\0' a)"; do
	AUTH="Authorization: $a" post badauth "$(init_body 2025-11-25)"
	check "Authorization \"$(head -c 40 <<< "$a")\" is 401 ($ST)" test "$ST" = 401
done
AUTH=- req query -H "Content-Type: application/json" \
    --data-binary "$(init_body 2025-11-25)" "$URL/mcp?access_token=$TA"
check "a token in the query string is not accepted ($ST)" test "$ST" = 401
rawreq twoauth "POST /mcp HTTP/1.1\r\nHost: localhost\r\n$A_AUTH\r\n$B_AUTH\r\nContent-Type: application/json\r\nContent-Length: ${#PING}\r\n\r\n$PING"
check "two Authorization headers are 401 ($RST)" test "$RST" = 401
AUTH="authorization: bearer $TA" post lcauth "$(init_body 2025-11-25)"
check "the scheme is case-insensitive: \"bearer\" works ($ST)" test "$ST" = 200

# --- method, media types, body: in that order ---------------------------------------

AUTH=- req put -X PUT -H "Content-Type: text/plain" --data-binary "x" "$URL/mcp"
check "PUT without credentials is 401: credentials come before the method ($ST)" \
    test "$ST" = 401
for m in PUT PATCH OPTIONS; do
	req meth -X $m -H "$A_AUTH" -H "Content-Type: text/plain" \
	    --data-binary "not json" "$URL/mcp"
	check "$m is 405 with Allow: GET, POST, DELETE ($ST, $(hdr meth Allow))" \
	    test "$ST" = 405 -a "$(hdr meth Allow)" = "GET, POST, DELETE"
done
for ct in text/plain - application/jsonx "application/x-www-form-urlencoded" \
    "text/json"; do
	CT=$ct post media "{not json"
	check "POST with Content-Type \"$ct\" is 415, before the body is read ($ST)" \
	    test "$ST" = 415
done
CT="application/json; charset=utf-8" post ctcs "$(init_body 2025-11-25)"
check "application/json; charset=utf-8 is fine ($ST)" test "$ST" = 200
for acc in text/html "image/*" "application/xml, text/plain"; do
	ACCEPT=$acc post accept "{not json"
	check "Accept: $acc is 406, before the body is read ($ST)" test "$ST" = 406
done
for acc in "*/*" "application/*" "text/event-stream" "application/json;q=0.5"; do
	ACCEPT=$acc post accept "$(init_body 2025-11-25)"
	check "Accept: $acc is fine ($ST)" test "$ST" = 200
done
ACCEPT=- post noaccept "$(init_body 2025-11-25)"
check "no Accept at all is fine ($ST)" test "$ST" = 200

badjson() {	# badjson DESC BODY
	post badjson "$2"
	check "a body of $1 is 400 with -32700, id null ($ST)" \
	    eval 'is 400 -32700 && [ "$(jb badjson id)" = null ]'
}
badjson "broken JSON" '{not json'
badjson "nothing" ''
badjson "a message cut short" '{"jsonrpc":"2.0","id":1,"method":"ping"'
badjson "JSON nested 65 deep" "$(python3 -c 'print("[" * 65 + "]" * 65)')"
badjson "invalid UTF-8" "$(printf '{"jsonrpc":"2.0","id":1,"method":"p\xffing"}')"
badjson "a \\u0000 in a string" '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"s":"\u0000"}}'
for b in 42 '{"jsonrpc":"1.0","id":1,"method":"ping"}' \
    '{"jsonrpc":"2.0","id":{},"method":"ping"}' '{"jsonrpc":"2.0","id":1}'; do
	post invalid "$b"
	check "a body of $b is 400 with -32600 ($ST, $(jb invalid error.code))" \
	    is 400 -32600
done

# --- sessions (legacy era) ---------------------------------------------------------

post nosess '{"jsonrpc":"2.0","id":"t","method":"tools/list"}'
check "a legacy request other than initialize without Mcp-Session-Id is 400 ($ST)" \
    test "$ST" = 400
post unknown '{"jsonrpc":"2.0","id":"t","method":"tools/list"}' \
    -H "Mcp-Session-Id: 0123456789abcdef0123456789abcdef"
check "an unknown session is 404 with -32001 ($ST, $(jb unknown error.code))" \
    is 404 -32001
post init "$(init_body 2025-11-25)"
SID=$(hdr init Mcp-Session-Id)
check "initialize answers with an Mcp-Session-Id of the host name and 32 hex digits ($SID)" \
    eval '[ "$ST" = 200 ] && grep -qE "^web-1~[0-9a-f]{32}$" <<< "$SID"'
check "as application/json, the negotiated version in it" \
    eval 'hdr init Content-Type | grep -q "^application/json" &&
    [ "$(jb init result.protocolVersion)" = 2025-11-25 ]'
post inited "$INITED" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25"
check "notifications/initialized is 202 with an empty body ($ST)" \
    test "$ST" = 202 -a ! -s "$T/inited.b"
post list '{"jsonrpc":"2.0","id":"t","method":"tools/list"}' \
    -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25"
check "tools/list in the session lists run_code ($ST)" \
    eval '[ "$ST" = 200 ] && grep -q "\"name\":\"run_code\"" "$T/list.b"'
post ids '{"jsonrpc":"2.0","id":"1","method":"nosuch"}' -H "Mcp-Session-Id: $SID"
check "an unknown method is -32601 and the string id \"1\" stays a string" \
    test "$(jb ids error.code)" = -32601 -a "$($J count "$T/ids.b" '"1"')" = 1
post ids '{"jsonrpc":"2.0","id":9223372036854775807,"method":"ping"}' -H "Mcp-Session-Id: $SID"
check "a 64-bit id comes back digit for digit" \
    grep -qF '"id":9223372036854775807,' "$T/ids.b"
post ver "$PING" -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25"
check "the negotiated MCP-Protocol-Version is accepted ($ST)" test "$ST" = 200
for v in garbage 2099-01-01 "" "2025-11-25, 2025-06-18" 2026-07-28; do
	if [ -z "$v" ]; then h="MCP-Protocol-Version;"; else h="MCP-Protocol-Version: $v"; fi
	post ver "$PING" -H "Mcp-Session-Id: $SID" -H "$h"
	check "MCP-Protocol-Version \"$v\" on a session request is 400 ($ST)" \
	    test "$ST" = 400
done
AUTH=$B_AUTH post other "$PING" -H "Mcp-Session-Id: $SID"
check "another tenant's token on the session is 404, as if there were none ($ST)" \
    test "$ST" = 404
req unixother --unix-socket "$RUN/mcpd.sock" -H "Content-Type: application/json" \
    -H "Mcp-Session-Id: $SID" --data-binary "$PING" http://localhost/mcp
check "the same tenant by uid on the unix socket is another principal: 404 ($ST)" \
    test "$ST" = 404
post batch "[$PING]" -H "Mcp-Session-Id: $SID"
check "a batch in a 2025-11-25 session is 400 with one -32600 error ($ST)" \
    eval 'is 400 -32600 && [ "$(head -c 1 "$T/batch.b")" = "{" ]'
post batch "[$PING]"
check "a batch without a session is 400 with -32600 ($ST)" is 400 -32600
session 2025-03-26
post batch "[$PING,$INITED,{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}]" -H "Mcp-Session-Id: $SID"
check "a batch in a 2025-03-26 session is answered with both answers ($ST)" \
    eval '[ "$ST" = 200 ] && [ "$(jb batch result)" = "{}" ] &&
    [ "$($J get "$T/batch.b" 2 result)" = "{}" ]'
post batch "[]" -H "Mcp-Session-Id: $SID"
check "[] in a 2025-03-26 session is 400 with -32600 ($ST)" is 400 -32600
D=$SID
req del -X DELETE -H "$A_AUTH" -H "Mcp-Session-Id: $D" "$URL/mcp"
check "DELETE ends a session ($ST)" test "$ST" = 200 -o "$ST" = 204
post afterdel "$PING" -H "Mcp-Session-Id: $D"
check "a request on it then is 404 ($ST)" test "$ST" = 404
req del -X DELETE -H "$A_AUTH" -H "Mcp-Session-Id: $D" "$URL/mcp"
check "and so is a second DELETE ($ST)" test "$ST" = 404
req del -X DELETE -H "$A_AUTH" "$URL/mcp"
check "DELETE without a session id is 400 ($ST)" test "$ST" = 400

# --- host names in ids (several hosts behind one balancer) -------------------------
# A balancer sends a tenant to the next host while its own is down: the
# ids that host handed out must be refused here with its name.
OTHER=web-2~0123456789abcdef0123456789abcdef
post elsewhere "$PING" -H "Mcp-Session-Id: $OTHER"
check "another host's session is 404 -32001, naming that host ($(jb elsewhere error.message))" \
    eval 'is 404 -32001 && jb elsewhere error.message | grep -qF "made on host web-2, not on this host (web-1)"'
post ownhost "$PING" -H "Mcp-Session-Id: web-1~0123456789abcdef0123456789abcdef"
check "an unknown id of this host is the plain 404 ($(jb ownhost error.message))" \
    eval 'is 404 -32001 && [ "$(jb ownhost error.message)" = "Session not found" ]'
post junkhost "$PING" -H "Mcp-Session-Id: w%b~0123456789abcdef0123456789abcdef"
check "a session id with no host name's letters is the plain 404 too" \
    eval 'is 404 -32001 && [ "$(jb junkhost error.message)" = "Session not found" ]'
session 2025-11-25
tcall() {	# tcall NAME TOOL ARGUMENTS-JSON: tools/call in session SID
	post "$1" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$2\",\"arguments\":$3}}" \
	    -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25"
}
tcall mk sandbox_create '{"name":"hosted"}'
HID=$(jb mk result.structuredContent.id)
check "sandbox_create hands out an id with the host name ($HID)" \
    eval 'grep -qE "^web-1~[0-9a-f]{32}$" <<< "$HID" &&
    jb mk result.content.0.text | grep -qF "Created sandbox $HID"'
tcall ex1 sandbox_exec "{\"sandbox\":\"$HID\",\"command\":\"echo hosted-ok\"}"
check "sandbox_exec takes it (exit $(jb ex1 result.structuredContent.exit_code))" \
    eval '[ "$(jb ex1 result.structuredContent.exit_code)" = 0 ] && grep -q hosted-ok "$T/ex1.b"'
tcall ex2 sandbox_exec "{\"sandbox\":\"${HID#web-1~}\",\"command\":\"echo bare-ok\"}"
check "and the id without the host name, as one host has always taken it" \
    eval '[ "$(jb ex2 result.structuredContent.exit_code)" = 0 ] && grep -q bare-ok "$T/ex2.b"'
tcall ls sandbox_list '{}'
check "sandbox_list shows the id with the host name" \
    eval '[ "$(jb ls result.structuredContent.sandboxes.0.id)" = "$HID" ] &&
    jb ls result.content.0.text | grep -qF "$HID (hosted)"'
tcall ex3 sandbox_exec "{\"sandbox\":\"web-2~${HID#web-1~}\",\"command\":\"echo leaked\"}"
check "the same id under another host's name is refused, naming it ($(jb ex3 result.content.0.text | head -c 90))" \
    eval '[ "$(jb ex3 result.isError)" = true ] && ! grep -q leaked "$T/ex3.b" &&
    jb ex3 result.content.0.text | grep -qF "Sandbox web-2~${HID#web-1~} is on host web-2, not on this host (web-1): the balancer sends you here while host web-2 is down"'
tcall ex4 sandbox_exec '{"sandbox":"web-2~hosted","command":"true"}'
check "so is a name under another host's name" \
    eval 'jb ex4 result.content.0.text | grep -qF "is on host web-2"'
tcall ex5 sandbox_exec '{"sandbox":"~hosted","command":"true"}'
check "an empty host name is no sandbox reference ($(jb ex5 result.content.0.text))" \
    eval 'jb ex5 result.content.0.text | grep -qF "Invalid arguments: '"'"'sandbox'"'"' must be"'
post rd "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/read\",\"params\":{\"uri\":\"sandbox://$HID/logs\"}}" \
    -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25"
check "resources/read takes the id with the host name" \
    eval '[ "$(jb rd result.contents.0.uri)" = "sandbox://$HID/logs" ] && grep -q hosted-ok "$T/rd.b"'
post rd2 "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/read\",\"params\":{\"uri\":\"sandbox://web-2~${HID#web-1~}/logs\"}}" \
    -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25"
check "and refuses another host's, naming it ($(jb rd2 error.data.host))" \
    eval '[ "$(jb rd2 error.data.host)" = web-2 ] && jb rd2 error.message | grep -qF "on host web-2, not on this host (web-1)"'
post rl '{"jsonrpc":"2.0","id":3,"method":"resources/list"}' \
    -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-11-25"
check "resources/list names the sandbox by the id with the host name" \
    grep -qF "sandbox://$HID/logs" "$T/rl.b"
# --- behind a balancer: "allow proxy 127.0.0.2" -----------------------------------
# Its X-Forwarded-For (the last address of the last header, which it
# added) names the client in the log and the audit; from anyone else the
# headers are nothing.
P2="--interface 127.0.0.2"
BAD="Authorization: Bearer not-a-token"
AUTH="$BAD" post xff1 "$PING" $P2 -H "X-Forwarded-For: 203.0.113.7"
check "from the proxy, a client's failure is logged as its address via the proxy ($ST)" \
    eval '[ "$ST" = 401 ] && wait_log "$T/mcpd.log" "auth_failure peer=\"203.0.113.7 via 127.0.0.2:" 5'
AUTH="$BAD" post xff2 "$PING" $P2 -H "X-Forwarded-For: 198.51.100.1, 203.0.113.9"
check "of a list, the last address, the one the proxy added" \
    eval 'wait_log "$T/mcpd.log" "auth_failure peer=\"203.0.113.9 via 127.0.0.2:" 5 &&
    ! grep -q "peer=\"198.51.100.1" "$T/mcpd.log"'
AUTH="$BAD" post xff3 "$PING" $P2 -H "X-Forwarded-For: 198.51.100.2" \
    -H "X-Forwarded-For: 203.0.113.10"
check "of several headers, the last" \
    eval 'wait_log "$T/mcpd.log" "auth_failure peer=\"203.0.113.10 via 127.0.0.2:" 5 &&
    ! grep -q "peer=\"198.51.100.2" "$T/mcpd.log"'
AUTH="$BAD" post xff4 "$PING" $P2 -H "X-Forwarded-For: 203.0.113.11 junk"
AUTH="$BAD" post xff5 "$PING" $P2 -H "X-Forwarded-For: not-an-address"
AUTH="$BAD" post xff6 "$PING" -H "X-Forwarded-For: 203.0.113.66"
check "not an address, or from a peer that is no proxy: the socket's peer, the header ignored" \
    eval 'wait_for 5 eval "[ \"\$(grep -c \"auth_failure peer=127.0.0.2:\" \"$T/mcpd.log\")\" -ge 2 ]" &&
    wait_log "$T/mcpd.log" "auth_failure peer=127.0.0.1:" 5 &&
    ! grep -qE "203.0.113.(11|66)|not-an-address" "$T/mcpd.log"'
tcall wf sandbox_write_file "{\"sandbox\":\"$HID\",\"path\":\"f.txt\",\"content\":\"x\"}"
SHARE=',"name":"sandbox_share_file","arguments":{"sandbox":"'"$HID"'","path":"f.txt"}'
modern sh1 tools/call "$SHARE" -H "Mcp-Method: tools/call" \
    -H "Mcp-Name: sandbox_share_file" $P2 -H "X-Forwarded-Proto: https"
check "X-Forwarded-Proto https from the proxy: links are made with https ($(jb sh1 result.structuredContent.files.0.url | cut -c1-30)...)" \
    eval 'jb sh1 result.structuredContent.files.0.url | grep -q "^https://127.0.0.1:$PORT/files/web-1~"'
modern sh2 tools/call "$SHARE" -H "Mcp-Method: tools/call" \
    -H "Mcp-Name: sandbox_share_file" -H "X-Forwarded-Proto: https"
check "and from anyone else, with the scheme of the connection ($(jb sh2 result.structuredContent.files.0.url | cut -c1-30)...)" \
    eval 'jb sh2 result.structuredContent.files.0.url | grep -q "^http://127.0.0.1:$PORT/files/web-1~"'
tcall st sandbox_stop "{\"sandbox\":\"$HID\"}"
check "sandbox_stop takes it and says it back ($(jb st result.content.0.text))" \
    eval '[ "$(jb st result.structuredContent.sandbox)" = "$HID" ] && [ "$(jb st result.structuredContent.stopped)" = true ]'

# --- the modern era over HTTP ---------------------------------------------------------

modern disc server/discover "" -H "Mcp-Method: server/discover"
check "a modern server/discover with its headers works ($ST)" \
    eval '[ "$ST" = 200 ] && jb disc result.supportedVersions | grep -q "\"2026-07-28\""'
modern nomethod server/discover ""
check "without Mcp-Method it is 400 with -32020 ($ST)" is 400 -32020
modern badmethod server/discover "" -H "Mcp-Method: tools/list"
check "with a mismatched Mcp-Method it is 400 with -32020 ($ST)" is 400 -32020
modern casemethod server/discover "" -H "Mcp-Method: SERVER/DISCOVER"
check "header values are case-sensitive: SERVER/DISCOVER is -32020 ($ST)" \
    is 400 -32020
post nover "{\"jsonrpc\":\"2.0\",\"id\":\"m\",\"method\":\"server/discover\",\"params\":{$META}}" \
    -H "Mcp-Method: server/discover"
check "a modern body without the MCP-Protocol-Version header is 400 with -32020 ($ST)" \
    is 400 -32020
post vmis "{\"jsonrpc\":\"2.0\",\"id\":\"m\",\"method\":\"server/discover\",\"params\":{$META}}" \
    -H "MCP-Protocol-Version: 2025-11-25" -H "Mcp-Method: server/discover"
check "a header version unlike the body's is 400 with -32020 ($ST)" is 400 -32020
post unsup '{"jsonrpc":"2.0","id":"m","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}' \
    -H "MCP-Protocol-Version: 2099-01-01" -H "Mcp-Method: server/discover"
check "an unsupported version is 400 with -32022, naming both ($ST)" \
    eval 'is 400 -32022 && [ "$(jb unsup error.data.requested)" = 2099-01-01 ] &&
    jb unsup error.data.supported | grep -q 2026-07-28'
post nocaps '{"jsonrpc":"2.0","id":"m","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}' \
    -H "$MV" -H "Mcp-Method: server/discover"
check "no clientCapabilities is 400 with -32602 ($ST)" is 400 -32602
modern unk nosuch/method "" -H "Mcp-Method: nosuch/method"
check "an unknown method is 404 with -32601 ($ST)" is 404 -32601
modern rm ping "" -H "Mcp-Method: ping"
check "a removed method (ping) is 404 with -32601 ($ST)" is 404 -32601
modern tc tools/call ',"name":"list_languages","arguments":{}' -H "Mcp-Method: tools/call"
check "tools/call without Mcp-Name is 400 with -32020 ($ST)" is 400 -32020
modern tc tools/call ',"name":"list_languages","arguments":{}' -H "Mcp-Method: tools/call" \
    -H "Mcp-Name: run_code"
check "tools/call with a mismatched Mcp-Name is 400 with -32020 ($ST)" is 400 -32020
modern tc tools/call ',"name":"list_languages","arguments":{}' -H "Mcp-Method: tools/call" \
    -H "Mcp-Name: list_languages"
check "with the right Mcp-Name it runs ($ST, $(jb tc result.resultType))" \
    eval '[ "$ST" = 200 ] && grep -q python "$T/tc.b"'
modern tc tools/call ',"name":"list_languages","arguments":{}' -H "Mcp-Method: tools/call" \
    -H "Mcp-Name: =?base64?$(printf list_languages | base64)?="
check "a base64 Mcp-Name is decoded ($ST)" test "$ST" = 200
modern tc tools/call ',"name":"list_languages","arguments":{}' -H "Mcp-Method: tools/call" \
    -H "Mcp-Name: =?base64?!!!?="
check "an undecodable base64 Mcp-Name is 400 with -32020 ($ST)" is 400 -32020
modern rr resources/read ',"uri":"sandbox://nosuch"' -H "Mcp-Method: resources/read"
check "resources/read without Mcp-Name is 400 with -32020 ($ST)" is 400 -32020
modern rr resources/read ',"uri":"sandbox://nosuch"' -H "Mcp-Method: resources/read" \
    -H "Mcp-Name: sandbox://other"
check "resources/read with Mcp-Name unlike params.uri is 400 with -32020 ($ST)" \
    is 400 -32020
modern pg prompts/get ',"name":"a"' -H "Mcp-Method: prompts/get" -H "Mcp-Name: b"
check "prompts/get with Mcp-Name unlike params.name is 400 with -32020 ($ST)" \
    is 400 -32020
req mget -H "$A_AUTH" -H "Accept: text/event-stream" -H "$MV" "$URL/mcp"
check "GET with a modern version header and no session is 405 ($ST)" \
    test "$ST" = 405
req mdel -X DELETE -H "$A_AUTH" -H "$MV" "$URL/mcp"
check "DELETE likewise is 405 ($ST)" test "$ST" = 405
post mnote '{"jsonrpc":"2.0","method":"notifications/initialized"}' -H "$MV"
check "a modern notification is 202 ($ST)" test "$ST" = 202
post mresp '{"jsonrpc":"2.0","id":"x","result":{}}' -H "$MV"
check "a modern client sending a response is 400 ($ST)" test "$ST" = 400

# --- event streams: progress, priming, resumption, conflicts ---------------------------

CODE_SLOW='import time\nfor i in range(8):\n    print(\"line\", i, flush=True)\n    time.sleep(0.25)'
call_body() {	# call_body ID CODE [TOKEN]
	local meta=""
	[ -n "${3:-}" ] && meta="\"_meta\":{\"progressToken\":$3},"
	echo "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{$meta\"name\":\"run_code\",\"arguments\":{\"language\":\"python\",\"code\":\"$2\"}}}"
}
# A raw POST of a JSON body to /mcp in session SID, as alice.
raw_post() {	# raw_post BODY [extra header lines]
	printf 'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\n%sContent-Length: %d\r\n\r\n%s' \
	    "$A_AUTH" "$SID" "${2:-}" "${#1}" "$1"
}

session 2025-11-25
ONE= raw first --until 'id: [0-9a-f]{16}:2\n.*?\n\n' --wait 20 < <(raw_post "$(call_body '"call-1"' "$CODE_SLOW" 7)" $'MCP-Protocol-Version: 2025-11-25\r\n')
$J events "$T/first.raw" > "$T/first.ev"
check "a call with a progressToken is answered as text/event-stream ($RST)" \
    eval '[ "$RST" = 200 ] && grep -qi "^Content-Type: text/event-stream" "$T/first.raw"'
check "2025-11-25: the stream begins with a priming event: id <stream>:0, retry, empty data ($(head -1 "$T/first.ev"))" \
    grep -qE '^[0-9a-f]{16}:0\|\|$' <<< "$(head -1 "$T/first.ev")"
check "and a retry field" grep -q "^retry: [0-9]" "$T/first.raw"
check "events have ids <16 hex>:<n> and carry notifications/progress" \
    eval '[ "$(sed -n 2p "$T/first.ev" | cut -d"|" -f1 | grep -cE "^[0-9a-f]{16}:1$")" = 1 ] &&
    sed -n 2p "$T/first.ev" | grep -q "notifications/progress"'
LASTID=$(grep -v '^|' "$T/first.ev" | tail -1 | cut -d'|' -f1)
STREAM=${LASTID%:*}
# The connection is closed: the call goes on; GET resumes after LASTID.
req resume -N -H "$A_AUTH" -H "Accept: text/event-stream" \
    -H "Mcp-Session-Id: $SID" -H "Last-Event-ID: $LASTID" "$URL/mcp"
$J events "$T/resume.b" > "$T/resume.ev"
check "GET with Last-Event-ID $LASTID resumes the stream ($ST, $(wc -l < "$T/resume.ev") events)" \
    eval '[ "$ST" = 200 ] && [ "$(head -1 "$T/resume.ev" | cut -d"|" -f1)" = "$STREAM:3" ]'
check "with the rest of the progress and then the final result" \
    eval 'grep -q "notifications/progress" "$T/resume.ev" &&
    [ "$($J get "$T/resume.b" "\"call-1\"" result.structuredContent.exit_code)" = 0 ] &&
    tail -1 "$T/resume.ev" | grep -q "\"id\":\"call-1\""'
check "nothing twice, nothing lost: ids run on from $LASTID without a gap" \
    eval 'cut -d"|" -f1 "$T/resume.ev" | awk -F: -v n=${LASTID##*:} "{ if (\$2 != ++n) exit 1 }"'
check "all of the program's output is in the result" \
    eval '[ "$($J get "$T/resume.b" "\"call-1\"" result.structuredContent.stdout | grep -c "^line [0-7]$")" = 8 ]'
req resume2 -N -H "$A_AUTH" -H "Accept: text/event-stream" \
    -H "Mcp-Session-Id: $SID" -H "Last-Event-ID: $STREAM:0" "$URL/mcp"
check "the finished stream can be replayed from its start ($($J events "$T/resume2.b" | wc -l) events)" \
    eval '[ "$ST" = 200 ] && $J get "$T/resume2.b" "\"call-1\"" id > /dev/null'
for bad in "nonsense" "$STREAM" "$STREAM:x" "0123456789abcdef:1" "$STREAM:99999" ":"; do
	req badlast -H "$A_AUTH" -H "Accept: text/event-stream" \
	    -H "Mcp-Session-Id: $SID" -H "Last-Event-ID: $bad" "$URL/mcp"
	check "Last-Event-ID \"$bad\" is 400 ($ST)" test "$ST" = 400
done
AUTH=$B_AUTH req otherlast -H "$B_AUTH" -H "Accept: text/event-stream" \
    -H "Mcp-Session-Id: $SID" -H "Last-Event-ID: $LASTID" "$URL/mcp"
check "another tenant cannot resume it: 404 ($ST)" test "$ST" = 404

# The standalone GET stream: one at a time.
printf 'GET /mcp HTTP/1.1\r\nHost: localhost\r\n%s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\n\r\n' \
    "$A_AUTH" "$SID" | $J send "$ADDR" --wait 2 > "$T/get1.raw" &
G1=$!
BGPIDS="$BGPIDS $G1"
wait_for 5 grep -q "^HTTP/1.1 200" "$T/get1.raw"
req get2 -H "$A_AUTH" -H "Accept: text/event-stream" -H "Mcp-Session-Id: $SID" "$URL/mcp"
check "a second GET stream while one is open is 409 ($ST)" test "$ST" = 409
check "the first one is an event stream that began with a priming event" \
    eval 'grep -qi "^Content-Type: text/event-stream" "$T/get1.raw" &&
    $J events "$T/get1.raw" | head -1 | grep -qE "^[0-9a-f]{16}:0\|\|$"'
req getjson -H "$A_AUTH" -H "Accept: application/json" -H "Mcp-Session-Id: $SID" "$URL/mcp"
check "GET accepting only JSON is 406 ($ST)" test "$ST" = 406
wait $G1

# 2025-06-18: progress by SSE too, but no priming event (older clients
# choke on empty data).
session 2025-06-18
post sse0618 "$(call_body '"c0618"' 'print(\"hello\")' '"tok"')" \
    -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: 2025-06-18"
check "2025-06-18: a call with progress is an event stream ($ST, $(hdr sse0618 Content-Type))" \
    eval '[ "$ST" = 200 ] && hdr sse0618 Content-Type | grep -q "^text/event-stream"'
check "without a priming event: the first event is the progress notification" \
    eval '$J events "$T/sse0618.b" | head -1 | grep -q "notifications/progress"'
check "and the result at the end ($($J get "$T/sse0618.b" '"c0618"' result.structuredContent.stdout))" \
    test "$($J get "$T/sse0618.b" '"c0618"' result.structuredContent.stdout)" = hello
ACCEPT=application/json post json0618 "$(call_body '"cjson"' 'print(\"plain\")' '"tok"')" \
    -H "Mcp-Session-Id: $SID"
check "a client accepting only JSON gets the same call as plain JSON ($ST, $(hdr json0618 Content-Type))" \
    eval '[ "$ST" = 200 ] && hdr json0618 Content-Type | grep -q "^application/json" &&
    [ "$(jb json0618 result.structuredContent.stdout)" = plain ]'

# Modern: the stream is the request; closing it cancels the call.
SLEEPB="{\"jsonrpc\":\"2.0\",\"id\":\"msleep\",\"method\":\"tools/call\",\"params\":{\"_meta\":{\"progressToken\":\"mp\",\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}},\"name\":\"run_code\",\"arguments\":{\"language\":\"python\",\"code\":\"import time\\nprint(1, flush=True)\\ntime.sleep(30)\"}}}"
printf 'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n%s\r\nMcp-Method: tools/call\r\nMcp-Name: run_code\r\nContent-Length: %d\r\n\r\n%s' \
    "$A_AUTH" "$MV" "${#SLEEPB}" "$SLEEPB" |
    $J send "$ADDR" --until 'notifications/progress.*?\n\n' --then-hold 2 \
    --wait 20 > "$T/msleep.raw" &
MS=$!
BGPIDS="$BGPIDS $MS"
wait_for 20 grep -q "notifications/progress" "$T/msleep.raw"
check "a modern call streams its progress (no event ids)" \
    eval 'grep -q "notifications/progress" "$T/msleep.raw" && ! grep -q "^id:" "$T/msleep.raw"'
check "while it runs, its processes are there" test -n "$(sandbox_pids)"
wait $MS
check "closing the modern stream cancels the call: its processes are gone" \
    wait_for 10 eval '[ -z "$(sandbox_pids)" ]'

# --- the 2024-11-05 HTTP+SSE transport -------------------------------------------------

sse_get() {	# sse_get NAME [send options]: GET /sse in the background
	local name=$1
	shift
	printf 'GET /sse HTTP/1.1\r\nHost: localhost\r\n%s\r\nAccept: text/event-stream\r\n\r\n' \
	    "$A_AUTH" | $J send "$ADDR" "$@" > "$T/$name.raw" &
	SSEPID=$!
	BGPIDS="$BGPIDS $SSEPID"
	wait_for 5 grep -q "sessionId=" "$T/$name.raw"
	EP=$(grep -o '/messages?sessionId=[0-9a-z~-]*' "$T/$name.raw" | head -1)
}
msg() {	# msg NAME BODY [curl args]: POST to the endpoint
	local name=$1 body=$2
	shift 2
	req "$name" -H "Content-Type: ${CT:-application/json}" -H "${AUTH:-$A_AUTH}" \
	    --data-binary "$body" "$@" "$URL$EP"
}

sse_get sse --wait 4
check "GET /sse opens with an endpoint event: /messages?sessionId=web-1~<32 hex> ($EP)" \
    eval '$J events "$T/sse.raw" | head -1 | grep -qE "^\|endpoint\|/messages\?sessionId=web-1~[0-9a-f]{32}$"'
msg m1 "$(init_body 2024-11-05)"
check "POST /messages is 202 ($ST)" test "$ST" = 202
msg m2 "$INITED"
msg m3 '{"jsonrpc":"2.0","id":"sse-list","method":"tools/list"}'
wait_for 5 grep -q '"id":"sse-list"' "$T/sse.raw"
check "the answers arrive on the SSE stream as event: message" \
    eval '$J events "$T/sse.raw" | grep -q "^|message|.*\"id\":\"init\".*\"protocolVersion\":\"2024-11-05\"" &&
    $J events "$T/sse.raw" | grep -q "^|message|.*\"id\":\"sse-list\""'
AUTH=$B_AUTH msg m4 "$PING"
check "another tenant's token on the SSE session is 404 ($ST)" test "$ST" = 404
msg m5 "{not json"
check "a body that is not JSON is 400 ($ST)" test "$ST" = 400
CT=text/plain msg m6 "$PING"
check "a body that is not application/json is 415 ($ST)" test "$ST" = 415
SAVED=$EP
EP="/messages?sessionId=0123456789abcdef0123456789abcdef"
msg m7 "$PING"
check "an unknown sessionId is 404 ($ST)" test "$ST" = 404
EP="/messages?sessionId=web-2~0123456789abcdef0123456789abcdef"
msg m7b "$PING"
check "another host's sessionId is 404 naming that host ($(cat "$T/m7b.b"))" \
    eval '[ "$ST" = 404 ] && grep -qF "made on host web-2, not on this host (web-1)" "$T/m7b.b"'
EP="/messages"
msg m8 "$PING"
check "no sessionId is 400 ($ST)" test "$ST" = 400
EP="/messages?sessionId=%00"
msg m9 "$PING"
check "a sessionId of %00 is refused ($ST)" test "$ST" = 400 -o "$ST" = 404
EP=$SAVED
wait $SSEPID
msg m10 "$PING"
check "once the SSE connection is closed, the session is gone: 404 ($ST)" \
    test "$ST" = 404
req ssepost -X POST -H "$A_AUTH" "$URL/sse"
check "POST /sse is 405 ($ST)" test "$ST" = 405

# --- HTTP framing: request smuggling shapes and limits -----------------------------------

IB=$(init_body 2025-11-25)
H1="POST /mcp HTTP/1.1\r\nHost: localhost\r\n$A_AUTH\r\nContent-Type: application/json\r\n"
L=${#IB}
X=$(printf %x "$L")
smuggle() {	# smuggle DESC STATUS TEXT
	rawreq smuggle "$3"
	check "$1 is $2 ($RST)" test "$RST" = "$2"
}
smuggle "Content-Length with Transfer-Encoding" 400 \
    "${H1}Content-Length: $L\r\nTransfer-Encoding: chunked\r\n\r\n$X\r\n$IB\r\n0\r\n\r\n"
smuggle "two Content-Length headers, the same value" 400 \
    "${H1}Content-Length: $L\r\nContent-Length: $L\r\n\r\n$IB"
smuggle "two Content-Length headers, different values" 400 \
    "${H1}Content-Length: $L\r\nContent-Length: 5\r\n\r\n$IB"
smuggle "Content-Length: $L,$L" 400 "${H1}Content-Length: $L,$L\r\n\r\n$IB"
smuggle "Content-Length: +$L" 400 "${H1}Content-Length: +$L\r\n\r\n$IB"
smuggle "Content-Length: -1" 400 "${H1}Content-Length: -1\r\n\r\n$IB"
smuggle "Content-Length: 0x$X" 400 "${H1}Content-Length: 0x$X\r\n\r\n$IB"
smuggle "Content-Length of 2^64" 400 "${H1}Content-Length: 18446744073709551616\r\n\r\n"
smuggle "Transfer-Encoding: gzip" 501 "${H1}Transfer-Encoding: gzip\r\n\r\n"
smuggle "Transfer-Encoding: gzip, chunked" 501 \
    "${H1}Transfer-Encoding: gzip, chunked\r\n\r\n$X\r\n$IB\r\n0\r\n\r\n"
smuggle "Transfer-Encoding: chunked, identity" 501 \
    "${H1}Transfer-Encoding: chunked, identity\r\n\r\n$X\r\n$IB\r\n0\r\n\r\n"
smuggle "Transfer-Encoding twice" 400 \
    "${H1}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n$X\r\n$IB\r\n0\r\n\r\n"
smuggle "an obs-fold header line" 400 \
    "${H1}X-Folded: a\r\n b\r\nContent-Length: $L\r\n\r\n$IB"
smuggle "a tab-folded Content-Length" 400 \
    "${H1}Content-Length:\r\n\t$L\r\n\r\n$IB"
smuggle "a space before the colon" 400 \
    "${H1}Content-Length : $L\r\n\r\n$IB"
smuggle "a space before the colon of Transfer-Encoding" 400 \
    "${H1}Transfer-Encoding : chunked\r\nContent-Length: $L\r\n\r\n$IB"
smuggle "a bare CR in a header" 400 \
    "${H1}X-A: 1\rContent-Length: 5\r\nContent-Length: $L\r\n\r\n$IB"
smuggle "a bare CR in the request line" 400 \
    "POST /mcp\r HTTP/1.1\r\nHost: localhost\r\n\r\n"
smuggle "a header name with a space" 400 "${H1}X Y: 1\r\nContent-Length: $L\r\n\r\n$IB"
smuggle "a header line without a colon" 400 "${H1}garbage\r\nContent-Length: $L\r\n\r\n$IB"
smuggle "a NUL in the Host header (localhost<NUL>.evil.example)" 400 \
    "GET / HTTP/1.1\r\nHost: localhost\x00.evil.example\r\n\r\n"
smuggle "a NUL in Content-Length ($L<NUL>0)" 400 \
    "${H1}Content-Length: $L\x000\r\n\r\n$IB"
smuggle "a chunk size of 0x$X" 400 \
    "${H1}Transfer-Encoding: chunked\r\n\r\n0x$X\r\n$IB\r\n0\r\n\r\n"
smuggle "a chunk size with a sign (+$X)" 400 \
    "${H1}Transfer-Encoding: chunked\r\n\r\n+$X\r\n$IB\r\n0\r\n\r\n"
smuggle "a chunk size with trailing space" 400 \
    "${H1}Transfer-Encoding: chunked\r\n\r\n$X \r\n$IB\r\n0\r\n\r\n"
smuggle "a chunk size beyond 64 bits" 400 \
    "${H1}Transfer-Encoding: chunked\r\n\r\n1$(printf '%016x' 0)\r\n$IB\r\n0\r\n\r\n"
smuggle "a chunk without its CRLF" 400 \
    "${H1}Transfer-Encoding: chunked\r\n\r\n$X\r\n${IB}XX0\r\n\r\n"
smuggle "HTTP/2.0" 505 "GET / HTTP/2.0\r\nHost: localhost\r\n\r\n"
smuggle "HTTP/1.10" 505 "GET / HTTP/1.10\r\nHost: localhost\r\n\r\n"
smuggle "an absolute-form target" 400 "GET http://localhost/ HTTP/1.1\r\nHost: localhost\r\n\r\n"
smuggle "two spaces in the request line" 400 "GET  / HTTP/1.1\r\nHost: localhost\r\n\r\n"
smuggle "HTTP/1.1 without Host" 400 "GET / HTTP/1.1\r\n\r\n"
smuggle "a %00 in the path" 400 "GET /mcp%%00 HTTP/1.1\r\nHost: localhost\r\n\r\n"
rawreq chunked "${H1}Transfer-Encoding: chunked\r\n\r\n10;ext=1\r\n${IB:0:16}\r\n$(printf %x $((L - 16)))\r\n${IB:16}\r\n0\r\nX-Trailer: 1\r\n\r\n"
check "a chunked body (two chunks, an extension, a trailer) is read ($RST)" \
    eval '[ "$RST" = 200 ] && grep -q "\"protocolVersion\":\"2025-11-25\"" "$T/chunked.raw"'
rawreq chunkedtc "${H1}Transfer-Encoding: Chunked\r\n\r\n$X\r\n$IB\r\n0\r\n\r\n"
check "Transfer-Encoding is case-insensitive: Chunked works ($RST)" test "$RST" = 200
rawreq http10 "POST /mcp HTTP/1.0\r\n$A_AUTH\r\nContent-Type: application/json\r\nContent-Length: $L\r\n\r\n$IB"
check "HTTP/1.0 without Host works, and closes ($RST)" \
    eval '[ "$RST" = 200 ] && grep -qi "^Connection: close" "$T/http10.raw"'
rawreq lf "POST /mcp HTTP/1.1\nHost: localhost\n$A_AUTH\nContent-Type: application/json\nContent-Length: $L\n\n$IB"
check "bare LF line ends are read as line ends, consistently ($RST)" \
    test "$RST" = 200 -o "$RST" = 400

# Pipelining: three requests in one write, answered in order.
ONE= raw pipe < <(printf "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n${H1}Content-Length: $L\r\n\r\n${IB}GET /nope HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
check "three pipelined requests are answered in order: 200, 200, 404 ($($J responses "$T/pipe.raw" | cut -d' ' -f1 | tr '\n' ' '))" \
    test "$($J responses "$T/pipe.raw" | cut -d' ' -f1 | tr '\n' ' ')" = "200 200 404 "
ONE= raw head < <(printf "HEAD / HTTP/1.1\r\nHost: localhost\r\n\r\nGET /nope HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
head_no_body() {
	python3 -c 'import sys
d = open(sys.argv[1], "rb").read()
i = d.find(b"\r\n\r\n")
sys.exit(0 if i > 0 and d[i + 4:i + 9] == b"HTTP/" else 1)' "$T/head.raw"
}
check "a HEAD response has no body: the next response follows its head at once ($(head -1 "$T/head.raw" | tr -d '\r'))" \
    head_no_body

# Sizes.
smuggle "a Content-Length of 32 MiB + 1" 413 "${H1}Content-Length: $((32 * 1024 * 1024 + 1))\r\n\r\n"
smuggle "a chunk of 32 MiB + 1" 413 "${H1}Transfer-Encoding: chunked\r\n\r\n$(printf %x $((32 * 1024 * 1024 + 1)))\r\n"
python3 - "$T/big.req" "$A_AUTH" <<'EOF'
import sys
head = b'{"jsonrpc":"2.0","id":"big","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"hostile","version":"1"},"x":"'
body = head + b"a" * ((32 << 20) - len(head) - 3) + b'"}}'
assert len(body) == 32 << 20
with open(sys.argv[1], "wb") as f:
    f.write(b"POST /mcp HTTP/1.1\r\nHost: localhost\r\n" + sys.argv[2].encode()
            + b"\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
EOF
raw big --in "$T/big.req" --wait 20
check "a body of exactly 32 MiB is read and answered ($RST)" test "$RST" = 200
raw bighead < <(python3 -c 'import sys
sys.stdout.write("GET / HTTP/1.1\r\nHost: localhost\r\n" + "".join("X-F%d: %s\r\n" % (i, "a" * 4000) for i in range(10)) + "\r\n")')
check "a head of 40 KiB in 10 headers is 431 ($RST)" test "$RST" = 431
raw manyhead < <(python3 -c 'import sys
sys.stdout.write("GET / HTTP/1.1\r\nHost: localhost\r\n" + "".join("X-F%d: 1\r\n" % i for i in range(64)) + "\r\n")')
check "65 headers are 431 ($RST)" test "$RST" = 431
raw okhead < <(python3 -c 'import sys
sys.stdout.write("GET / HTTP/1.1\r\nHost: localhost\r\n" + "".join("X-F%d: 1\r\n" % i for i in range(63)) + "\r\n")')
check "64 headers are fine ($RST)" test "$RST" = 200
raw longline < <(python3 -c 'import sys; sys.stdout.write("GET /" + "a" * 8200 + " HTTP/1.1\r\nHost: localhost\r\n\r\n")')
check "a request line over 8 KiB is 414 ($RST)" test "$RST" = 414
raw longline2 < <(python3 -c 'import sys; sys.stdout.write("GET /" + "a" * 100000)')
check "100 KB of request line with no end is 414 at once ($RST)" test "$RST" = 414
raw longhdr < <(python3 -c 'import sys; sys.stdout.write("GET / HTTP/1.1\r\nHost: localhost\r\nX-Long: " + "a" * 9000 + "\r\n\r\n")')
check "a header line over 8 KiB is 431 ($RST)" test "$RST" = 431
ONE= WAIT=1 raw blanks < <(python3 -c 'import sys; sys.stdout.write("GET / HTTP/1.1\r\nHost: localhost\r\n" + "\r\n" * 20000)')
check "a request followed by 20000 blank lines: answered, then the rest refused ($RST)" \
    test "$RST" = 200
head -c $((1 << 20)) /dev/urandom > "$T/garbage"
raw garbage --in "$T/garbage"
check "1 MiB of random bytes gets a 4xx and a closed connection ($RST)" \
    eval '[ "${RST:-none}" = none ] || [ "${RST:0:1}" = 4 ] || [ "${RST:0:1}" = 5 ]'

# --- crowds and clients that never read ------------------------------------------------

rm -f "$T/ready"
$J conns "$ADDR" 300 30 "$T/ready" &
CROWD=$!
BGPIDS="$BGPIDS $CROWD"
wait_for 20 test -f "$T/ready"
s=$(date +%s%N)
post crowd "$(init_body 2025-11-25)"
ms=$(( ($(date +%s%N) - s) / 1000000 ))
check "with 300 idle connections open ($(cat "$T/ready" 2>/dev/null)), a fresh client is served ($ST, ${ms} ms)" \
    test "$ST" = 200 -a $ms -lt 2000
rm -f "$T/ready"
wait $CROWD

# An SSE client that reads nothing while a lot is said to it.
sse_get stall --until 'sessionId=web-1~[0-9a-f]{32}' --then-hold 30 --wait 35
STALL=$SSEPID
msg s1 "$(init_body 2025-03-26)"
msg s2 "$INITED"
python3 -c 'import json; print(json.dumps([{"jsonrpc": "2.0", "id": i, "method": "tools/list"} for i in range(800)]))' \
    > "$T/batch.json"
worst=0
for i in $(seq 12); do
	req flood -H "Content-Type: application/json" -H "$A_AUTH" \
	    --data-binary @"$T/batch.json" "$URL$EP"
	[ "$ST" = 202 ] || break
	s=$(date +%s%N)
	req fresh "$URL/"
	ms=$(( ($(date +%s%N) - s) / 1000000 ))
	[ $ms -gt $worst ] && worst=$ms
done
check "a client that never reads its SSE stream does not hold up others (worst ${worst} ms)" \
    test $worst -lt 2000
check "mcpd drops it once too much is queued" \
    wait_log "$T/mcpd.log" "client too slow, dropping the stream" 5
msg s3 "$PING"
check "and its session ends with it ($ST)" test "$ST" = 404
check "mcpd's memory stays bounded ($(status_field "${PID[mcpd]}" VmRSS))" \
    test "$(status_field "${PID[mcpd]}" VmRSS | cut -d' ' -f1)" -lt 800000
kill $STALL 2>/dev/null

# --- the slowloris --------------------------------------------------------------------

wait $SLOWPID
check "a head sent a byte a second is cut off with 408 ($(head -1 "$T/slow.raw" | tr -d '\r'), $(cat "$T/slow.stat"))" \
    eval 'head -1 "$T/slow.raw" | grep -q "^HTTP/1.1 408" &&
    grep -q "closed=1" "$T/slow.stat"'
el=$(sed 's/.*elapsed=\([0-9]*\).*/\1/' "$T/slow.stat")
check "within 8 to 16 s (${el}s)" test "$el" -ge 8 -a "$el" -le 16

# --- unix sockets: tenants by uid ---------------------------------------------------------

req unix --unix-socket "$RUN/mcpd.sock" -H "Content-Type: application/json" \
    --data-binary "$(init_body 2025-11-25)" http://localhost/mcp
check "on the unix socket, root with no token is served as its uid's tenant ($ST)" \
    eval '[ "$ST" = 200 ] && grep -qE "^web-1~[0-9a-f]{32}$" <<< "$(hdr unix Mcp-Session-Id)"'
check "and logged as tenant alice by uid 0" \
    wait_log "$T/mcpd.log" "session_open tenant=alice cred=uid:0 session=$(hdr unix Mcp-Session-Id) transport=http" 5
USID=$(hdr unix Mcp-Session-Id)
req unixs --unix-socket "$RUN/mcpd.sock" -H "Content-Type: application/json" \
    -H "Mcp-Session-Id: $USID" --data-binary '{"jsonrpc":"2.0","id":"t","method":"tools/list"}' \
    http://localhost/mcp
check "its session works on the unix socket ($ST)" test "$ST" = 200
post unixtcp "$PING" -H "Mcp-Session-Id: $USID"
check "but not over TCP with alice's token: another principal, 404 ($ST)" test "$ST" = 404
out=$(setpriv --reuid $XU --regid $XU --clear-groups curl -s -m 5 -o /dev/null \
    -w '%{http_code}' --unix-socket "$RUN/mcpd.sock" -H "Content-Type: application/json" \
    --data-binary "$(init_body 2025-11-25)" http://localhost/mcp)
rc=$?
check "uid $XU cannot even connect to mcpd.sock, mode $(stat -c %a "$RUN/mcpd.sock") (curl exit $rc)" \
    test $rc = 7
out=$(setpriv --reuid $XU --regid $XU --clear-groups curl -s -m 5 -o "$T/xu.b" \
    -w '%{http_code}' --unix-socket "$RUN/open.sock" -H "Content-Type: application/json" \
    --data-binary "$(init_body 2025-11-25)" http://localhost/mcp)
check "on a socket of mode 0666, uid $XU (no tenant's) is 403 ($out)" test "$out" = 403
out=$(setpriv --reuid $XU --regid $XU --clear-groups curl -s -m 5 -o /dev/null \
    -w '%{http_code}' --unix-socket "$RUN/open.sock" -H "Content-Type: application/json" \
    -H "$B_AUTH" --data-binary "$(init_body 2025-11-25)" http://localhost/mcp)
check "but with bob's token it is bob ($out)" test "$out" = 200

# --- the end: mcpd is still there and well -------------------------------------------------

check "mcpd is still running" alive mcpd
post final "$(init_body 2025-11-25)"
check "a final initialize is answered ($ST)" test "$ST" = 200
check "mcpd's log has nothing fatal" \
    eval '! grep -qiE "fatal|AddressSanitizer|LeakSanitizer|runtime error:" "$T/mcpd.log"'
stop mcpd
rc=$?
check "mcpd exits 0 on SIGTERM, with sessions open (status $rc)" test $rc = 0
check "sandboxd stops cleanly" stop sandboxd
check "auditd stops cleanly" stop auditd
san=$(grep -l -E "ERROR: AddressSanitizer|LeakSanitizer|runtime error:" \
    "$T"/*.log 2>/dev/null | xargs -r -n1 basename | tr '\n' ' ')
check "no sanitizer report in any log${san:+ ($san)}" test -z "$san"
check "no sandbox process is left" test -z "$(sandbox_pids)"

if [ "$tap_failed" -ne 0 ]; then
	diag "--- mcpd.log"
	diag_file "$T/mcpd.log" 15
fi
done_testing
