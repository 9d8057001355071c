#!/bin/bash
# HTTPS in mcpd: a listener with tls serves MCP with the certificate
# chain and key mcpd.conf names, TLS 1.2 and 1.3 only, ECDHE with AEAD
# ciphers, ALPN http/1.1 alone, checked with openssl s_client and curl.
# SIGHUP reads the files again: a renewed certificate serves the next
# connections while requests keep flowing, and a file that cannot be read
# or is not a certificate keeps the old one.  mcpd -n and the start
# refuse what would be unsafe or broken: a tls listener without files, a
# key that is not the certificate's, and plain HTTP off the loopback
# unless the file says plaintext (a TLS proxy in front).
SANDBOX_UIDS=1967259648		# this test's own range
. "$TOP/tests/lib.sh"
require_root
command -v openssl > /dev/null || {
	ok "HTTPS # SKIP no openssl (sh scripts/deps.sh check installs it)"
	done_testing
	exit 0
}

MU=64101	# mcpd's uid
AU=64102	# auditd's
T=$(mktemp -d /tmp/mcpd-tls.XXXXXX)
chmod 0755 "$T"
CONF=$T/mcpd.conf
RUN=$T/run
PORT=$(free_port)
TOK=tls-token-$$
URL=https://127.0.0.1:$PORT/mcp
C=$T/certs
mkdir -p "$C"

BGPIDS=""
trap cleanup_bg EXIT

# --- certificates: a CA, two server certificates of it, a stray key --------
ossl() { openssl "$@" > /dev/null 2>> "$T/openssl.log"; }
ec="-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
ossl req -x509 $ec -keyout "$C/ca.key" -out "$C/ca.pem" -days 2 \
    -subj /CN=mcpd-test-ca
server_cert() {	# server_cert NAME SERIAL
	ossl req $ec -keyout "$C/$1.key" -out "$C/$1.csr" -subj /CN=localhost &&
	ossl x509 -req -in "$C/$1.csr" -CA "$C/ca.pem" -CAkey "$C/ca.key" \
	    -set_serial "$2" -out "$C/$1.pem" -days 2 \
	    -extfile <(printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n')
}
server_cert one 1001
server_cert two 2002
ossl genpkey -algorithm ec -pkeyopt ec_paramgen_curve:P-256 -out "$C/stray.key"
check "openssl made a CA and two server certificates" \
    eval '[ -s "$C/one.pem" ] && [ -s "$C/two.pem" ] && [ -s "$C/stray.key" ]' ||
    diag_file "$T/openssl.log"

# The files mcpd serves, readable by its user, as a renewal hook leaves
# them; one.* to start.
install -m 0640 -g "$MU" "$C/one.pem" "$T/cert.pem"
install -m 0640 -g "$MU" "$C/one.key" "$T/key.pem"

conf() {	# conf LISTEN-LINE [TLS-LINES]
	cat <<EOF
user "$MU"
run directory "$RUN"
state directory "$T/state"
sandbox-init "$B/sandbox-init"
sandbox uids $SANDBOX_UIDS 16
$1
${2-tls certificate "$T/cert.pem"
tls key "$T/key.pem"}

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
}
n_check() {	# n_check FILE: mcpd -n's output in $T/n.out, status in RC
	"$B/mcpd" -n -f "$1" > "$T/n.out" 2>&1
	RC=$?
}

# --- what mcpd -n refuses ------------------------------------------------------
conf "listen on 127.0.0.1 port $PORT tls" "" > "$T/bad.conf"
n_check "$T/bad.conf"
check "mcpd -n: a tls listener without certificate and key is refused (exit $RC)" \
    eval '[ $RC -ne 0 ] && grep -q "needs \"tls certificate\" and \"tls key\"" "$T/n.out"' ||
    diag_file "$T/n.out"
for host in 0.0.0.0 '*' 192.0.2.1 '::'; do
	conf "listen on \"$host\" port $PORT" > "$T/bad.conf"
	n_check "$T/bad.conf"
	check "mcpd -n: plain HTTP on $host is refused (exit $RC)" \
	    eval '[ $RC -ne 0 ] && grep -q "bearer tokens in the clear" "$T/n.out"' ||
	    diag_file "$T/n.out"
done
conf "listen on \"*\" port $PORT plaintext" > "$T/ok.conf"
n_check "$T/ok.conf"
check "... unless it says plaintext, for a TLS proxy in front (exit $RC)" test $RC -eq 0 ||
    diag_file "$T/n.out"
for host in 127.0.0.2 '::1' localhost; do
	conf "listen on \"$host\" port $PORT" > "$T/ok.conf"
	n_check "$T/ok.conf"
	check "mcpd -n: plain HTTP on the loopback ($host) is fine (exit $RC)" test $RC -eq 0 ||
	    diag_file "$T/n.out"
done
conf "listen on \"*\" port $PORT tls" "tls certificate \"$C/one.pem\"
tls key \"$C/stray.key\"" > "$T/bad.conf"
n_check "$T/bad.conf"
check "mcpd -n: a key that is not the certificate's is refused (exit $RC)" \
    eval '[ $RC -ne 0 ] && grep -q "stray.key: it is not the key of tls certificate" "$T/n.out"' ||
    diag_file "$T/n.out"
conf "listen on \"*\" port $PORT tls" "tls certificate \"$C/none.pem\"
tls key \"$C/one.key\"" > "$T/bad.conf"
n_check "$T/bad.conf"
check "mcpd -n: a missing certificate file is named (exit $RC)" \
    eval '[ $RC -ne 0 ] && grep -q "none.pem: No such file" "$T/n.out"' ||
    diag_file "$T/n.out"
# A socket systemd passes is held to the same rule: one on every address,
# in a network namespace of the test's own, with no listen statement.
conf "listen on 127.0.0.1 port $PORT tls" > "$T/act.conf"
unshare -n sh -c 'ip link set lo up &&
    exec timeout 20 "$1/tests/activate" -l "0.0.0.0:$2" -- "$1/mcpd" -d \
    -f "$3"' sh "$B" "$((PORT + 1))" "$T/act.conf" > "$T/act.out" 2>&1
RC=$?
check "a passed socket on every address, with no listen statement: mcpd refuses to start (exit $RC)" \
    eval '[ $RC -ne 0 ] && [ $RC -ne 124 ] &&
    grep -q "plain HTTP off the loopback would carry bearer tokens" "$T/act.out"' ||
    diag_file "$T/act.out"
conf "listen on 127.0.0.1 port $PORT tls" > "$CONF"
n_check "$CONF"
check "mcpd -n: the test's file, with tls (exit $RC)" test $RC -eq 0 ||
    diag_file "$T/n.out"

# --- serving -------------------------------------------------------------------
start_suite
check "mcpd says its listener has TLS" \
    log_has "$T/mcpd.log" "serving MCP on 127.0.0.1:$PORT with TLS"

# call TOOL ARGS [CURL-ARGS...]: a stateless tools/call as alice; the HTTP
# status in ST, the answer in $T/r.json.
call() {
	local tool=$1 args=$2
	shift 2
	ST=$(curl -s -m 60 -o "$T/r.raw" -w '%{http_code}' "$@" \
	    --cacert "$C/ca.pem" "$URL" -H "Authorization: Bearer $TOK" \
	    -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' \
	    -H 'MCP-Protocol-Version: 2026-07-28' \
	    -H 'Mcp-Method: tools/call' -H "Mcp-Name: $tool" \
	    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
		"name":"'"$tool"'","arguments":'"$args"',"_meta":{
		"io.modelcontextprotocol/protocolVersion":"2026-07-28",
		"io.modelcontextprotocol/clientCapabilities":{}}}}')
	if grep -q '^data: ' "$T/r.raw" 2>/dev/null; then
		sed -n 's/^data: //p' "$T/r.raw" | tail -n 1 > "$T/r.json"
	else
		cp "$T/r.raw" "$T/r.json" 2>/dev/null
	fi
}
call run_code '{"language":"python","code":"print(6 * 7)"}'
check "run_code over HTTPS, the CA checked by curl (status $ST)" \
    eval '[ "$ST" = 200 ] && [ "$(json "$T/r.json" "d[\"result\"][\"structuredContent\"][\"stdout\"]")" = 42 ]' ||
    diag_file "$T/r.json"
ST=$(curl -s -m 10 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/healthz")
check "plain HTTP on the TLS port gets no HTTP answer ($ST)" test "$ST" = 000

# sclient ARGS...: a handshake, its transcript in $T/s.out.
sclient() {
	openssl s_client -connect "127.0.0.1:$PORT" -servername localhost \
	    -CAfile "$C/ca.pem" "$@" < /dev/null > "$T/s.out" 2>&1
}
sclient -tls1_3
check "TLS 1.3 ($(grep -m1 -o 'TLSv1.3' "$T/s.out"), verified: $(grep -m1 -o 'Verify return code: [0-9]* ([a-z]*)' "$T/s.out"))" \
    eval 'grep -q "Protocol *: TLSv1.3\|New, TLSv1.3" "$T/s.out" &&
    grep -q "Verify return code: 0 (ok)" "$T/s.out"' || diag_file "$T/s.out"
sclient -tls1_2
cipher=$(sed -n 's/^ *Cipher *: *//p' "$T/s.out" | head -n 1)
check "TLS 1.2, with ECDHE and an AEAD cipher ($cipher)" \
    eval '[[ "$cipher" == ECDHE-*-AES*-GCM-* || "$cipher" == ECDHE-*-CHACHA20-POLY1305 ]]' ||
    diag_file "$T/s.out"
sclient -tls1_2 -cipher 'AES128-SHA:@SECLEVEL=0'
check "TLS 1.2 with RSA key exchange and CBC is refused" \
    eval '! grep -q "Cipher *: AES128-SHA" "$T/s.out" &&
    grep -qi "handshake failure\|no shared cipher\|alert" "$T/s.out"' ||
    diag_file "$T/s.out"
for v in tls1_1 tls1; do
	sclient -$v -cipher 'DEFAULT:@SECLEVEL=0'
	check "-$v is refused: $(grep -o 'alert protocol version' "$T/s.out" | head -n 1)" \
	    eval 'grep -q "Cipher *: 0000" "$T/s.out" &&
	    grep -q "alert protocol version" "$T/s.out"' ||
	    diag_file "$T/s.out"
done
sclient -alpn h2,http/1.1
check "ALPN: http/1.1 chosen from h2,http/1.1" \
    grep -q "ALPN protocol: http/1.1" "$T/s.out" || diag_file "$T/s.out"
sclient -alpn h2
check "ALPN: a client offering only h2 is refused (no_application_protocol)" \
    eval '! grep -q "ALPN protocol: h2" "$T/s.out" &&
    grep -qi "no application protocol\|alert" "$T/s.out"' ||
    diag_file "$T/s.out"
hexserial() {	# hexserial N: as openssl x509 -serial prints it
	local h
	h=$(printf %X "$1")
	(( ${#h} % 2 )) && h=0$h
	echo "$h"
}
serial() {	# the serial of the certificate served now
	openssl s_client -connect "127.0.0.1:$PORT" -servername localhost \
	    < /dev/null 2>/dev/null | openssl x509 -noout -serial 2>/dev/null |
	    sed 's/^serial=//'
}
check "the first certificate is served (serial $(serial))" \
    test "$(serial)" = "$(hexserial 1001)"

# --- SIGHUP: a renewal under load ----------------------------------------------
# 150 requests from 3 clients, one certificate swapped by SIGHUP meanwhile.
load() {	# load N OUT: N health checks over HTTPS, their statuses
	local i
	for ((i = 0; i < $1; i++)); do
		curl -s -m 30 -o /dev/null -w '%{http_code}\n' --cacert "$C/ca.pem" \
		    "https://127.0.0.1:$PORT/healthz"
	done > "$2"
}
for k in 1 2 3; do
	load 50 "$T/load$k" &
	BGPIDS="$BGPIDS $!"
done
sleep 0.5
install -m 0640 -g "$MU" "$C/two.pem" "$T/cert.pem"
install -m 0640 -g "$MU" "$C/two.key" "$T/key.pem"
kill -HUP "${PID[mcpd]}"
check "mcpd read the renewed files" \
    wait_log "$T/mcpd.log" "TLS certificate and key read again"
wait $BGPIDS 2>/dev/null
BGPIDS=""
got=$(cat "$T/load1" "$T/load2" "$T/load3" | sort | uniq -c | tr -s ' \n' ' ')
check "150 requests during the swap, every one answered 200 ($got)" \
    eval '[ "$(cat "$T/load1" "$T/load2" "$T/load3" | grep -c "^200$")" = 150 ]'
check "the renewed certificate is served (serial $(serial))" \
    test "$(serial)" = "$(hexserial 2002)"
call run_code '{"language":"python","code":"print(7 * 6)"}'
check "and MCP goes on over it (status $ST)" \
    eval '[ "$ST" = 200 ] && grep -q 42 "$T/r.json"'

# A broken renewal keeps the certificate served.
before=$(serial)
cp "$C/one.pem" "$T/cert.pem"	# with two.key: not its key
kill -HUP "${PID[mcpd]}"
check "a certificate without its key: the old one stays, said in the log" \
    wait_log "$T/mcpd.log" "key.pem: it is not the key of tls certificate $T/cert.pem: the certificate served stays"
check "... and is served ($(serial))" test "$(serial)" = "$before"
echo garbage > "$T/cert.pem"
kill -HUP "${PID[mcpd]}"
check "a file that is no certificate: the same" \
    eval 'wait_for 10 count_gt "$T/mcpd.log" "the certificate served stays" 1 &&
    [ "$(serial)" = "$before" ]'
install -m 0600 -o root "$C/one.pem" "$T/cert.pem"
kill -HUP "${PID[mcpd]}"
check "a file mcpd's user may not read: the same, and the log says why" \
    eval 'wait_log "$T/mcpd.log" "cert.pem: Permission denied: the certificate served stays" &&
    [ "$(serial)" = "$before" ]'

# Bytes that are no TLS, and a handshake left half done, harm nothing.
printf 'GET / HTTP/1.1\r\nHost: x\r\n\r\n' | timeout 5 openssl s_client \
    -connect "127.0.0.1:$PORT" -quiet > /dev/null 2>&1
exec 7<>/dev/tcp/127.0.0.1/$PORT && printf '\x16\x03\x01\x00\xff' >&7 && exec 7>&-
call run_code '{"language":"python","code":"print(1)"}'
check "mcpd still serves after junk and a half handshake (status $ST)" test "$ST" = 200
check "nothing fatal in mcpd's log" eval '! grep -qi "fatal\|sanitizer" "$T/mcpd.log"'
stop_daemon() { kill "${PID[$1]}" && wait "${PID[$1]}"; }
check "mcpd stops cleanly (exit status 0)" stop_daemon mcpd
done_testing
