#!/bin/bash
# mcpd started the way systemd's socket activation starts it: it serves on
# the sockets it is given (LISTEN_FDS), binds none of its own, and takes a
# listener's options from the listen statement with the same address.
. "$TOP/tests/lib.sh"
require_root

MU=64101	# mcpd's uid
AU=64102	# auditd's
T=$(mktemp -d /tmp/mcpd-activation.XXXXXX)
chmod 0755 "$T"
CONF=$T/mcpd.conf
RUN=$T/run
P1=$(free_port)		# passed, configured with a tenant
P2=$(free_port)		# passed, not configured: tokens
P3=$(free_port)		# configured, not passed: never bound
TOKEN=activation-$RANDOM$RANDOM
HASH=$(printf %s "$TOKEN" | sha256sum | cut -d' ' -f1)

cat > "$CONF" <<CONF
user "$MU"
run directory "$RUN"
state directory "$T/state"
sandbox-init "$B/sandbox-init"
listen on 127.0.0.1 port $P1 tenant alice
listen on 127.0.0.1 port $P3
tenant alice {
	token "sha256:$HASH"
	uid root
}
audit {
	user "$AU"
}
CONF

cleanup() {
	kill_daemons
	remove_tmp
}
trap cleanup EXIT

INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
post() {	# post URL [curl options...]: the status, then the body
	local url=$1
	shift
	curl -s -m 5 -o "$T/body" -w '%{http_code}' "$url" "$@" \
	    -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' -d "$INIT"
}

start auditd
start sandboxd
mkdir -p "$RUN"
"$B/tests/activate" -l "127.0.0.1:$P1" -l "127.0.0.1:$P2" \
    -l "$RUN/given.sock" -- "$B/mcpd" -d -v -f "$CONF" \
    >> "$T/mcpd.log" 2>&1 &
started mcpd
check "mcpd is ready on the three sockets it was given" \
    wait_log "$T/mcpd.log" "ready: serving MCP on 3 sockets"
check "the first takes its listen statement's tenant" \
    log_has "$T/mcpd.log" "serving MCP on 127.0.0.1:$P1 as tenant alice"
check "so it serves without a token (status $(post "http://127.0.0.1:$P1/mcp"))" \
    test "$(post "http://127.0.0.1:$P1/mcp")" = 200
check "the second, in no listen statement, wants a token" \
    test "$(post "http://127.0.0.1:$P2/mcp")" = 401
check "and serves with one" \
    test "$(post "http://127.0.0.1:$P2/mcp" \
    -H "Authorization: Bearer $TOKEN")" = 200
check "the unix socket serves its peer's uid as the tenant" \
    test "$(post http://localhost/mcp --unix-socket "$RUN/given.sock")" = 200
check "a listen statement for a socket not given binds nothing" \
    test "$(curl -s -m 2 -o /dev/null -w '%{http_code}' \
    "http://127.0.0.1:$P3/mcp")" = 000
check "mcpd stops cleanly" stop mcpd
suite_end
done_testing
