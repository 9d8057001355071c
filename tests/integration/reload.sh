#!/bin/bash
# SIGHUP reloads the configuration of the three daemons, confined as they
# run: tokens, tenants and limits change without dropping a session, a
# sandbox or a run in progress; a file that does not load, or names what
# does not exist, is refused whole and the old configuration stays; what
# only a restart can change is warned about and left as it was.
SANDBOX_UIDS=1969225728		# this test's own range (see mcp_stdio.sh)
. "$TOP/tests/lib.sh"
require_root

MU=64101	# mcpd's uid
AU=64102	# auditd's
T=$(mktemp -d /tmp/mcpd-reload.XXXXXX)
chmod 0755 "$T"
CONF=$T/mcpd.conf
RUN=$T/run
J="/usr/bin/python3 $TOP/tests/tools/mcpwire.py"
PORT=$(free_port)
P2=$(free_port)		# a listen statement added by a reload: never bound
URL=http://127.0.0.1:$PORT
V=2025-06-18
TA1=alice-one-$RANDOM$RANDOM	# kept throughout
TA2=alice-two-$RANDOM$RANDOM	# removed by the reload
TA3=alice-three-$RANDOM$RANDOM	# added by it
TB=bob-$RANDOM$RANDOM		# bob is removed, then put back
TC=carol-$RANDOM$RANDOM		# carol is added
h() { printf %s "$1" | sha256sum | cut -d' ' -f1; }

# The configuration from these; "mv" so that no daemon reads half a file.
LISTEN= TENANTS= DISK=256M SMALL_TIMEOUT=20s EXTRA=
write_conf() {
	cat > "$CONF.new" <<EOF
user "$MU"
run directory "$RUN"
state directory "$T/state"
sandbox-init "$B/sandbox-init"
sandbox uids $SANDBOX_UIDS 16
$LISTEN

limits default {
	memory 256M
	disk $DISK
	timeout 60s
}
limits small {
	memory 192M
	timeout $SMALL_TIMEOUT
}
$TENANTS
audit {
	user "$AU"
}
$EXTRA
EOF
	mv "$CONF.new" "$CONF"
}
ALICE="tenant alice {
	token \"sha256:$(h "$TA1")\"
	token \"sha256:$(h "$TA2")\"
	uid root
	limits small
}"
ALICE2="tenant alice {
	token \"sha256:$(h "$TA1")\"
	token \"sha256:$(h "$TA3")\"
	uid root
	limits small
}"
BOB="tenant bob {
	token \"sha256:$(h "$TB")\"
}"
CAROL="tenant carol {
	token \"sha256:$(h "$TC")\"
	uid daemon
}"
LISTEN="listen on 127.0.0.1 port $PORT
listen on unix \"$RUN/bob.sock\" mode 0666 tenant bob
listen on unix \"$RUN/mcpd.sock\" mode 0666"
LISTEN2="listen on 127.0.0.1 port $PORT
listen on 127.0.0.1 port $P2
listen on unix \"$RUN/mcpd.sock\" mode 0666"
TENANTS="$ALICE
$BOB"
write_conf

BGPIDS=""
trap cleanup_bg EXIT

# --- helpers -----------------------------------------------------------------

# post NAME TOKEN BODY [CURL-ARGS...]: a JSON POST to /mcp (URL, or the
# unix socket SOCK); status in ST, headers and body in $T/NAME.h, NAME.b
post() {
	local name=$1 tok=$2 body=$3 auth=() to=("$URL/mcp")
	shift 3
	[ -n "$tok" ] && auth=(-H "Authorization: Bearer $tok")
	[ -n "${SOCK:-}" ] && to=(--unix-socket "$SOCK" http://localhost/mcp)
	ST=$(curl -s -m 60 -o "$T/$name.b" -D "$T/$name.h" -w '%{http_code}' \
	    "${auth[@]}" -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' \
	    --data-binary "$body" "$@" "${to[@]}")
}
# session NAME TOKEN: a new initialized session; its id in SID
session() {
	post "$1" "$2" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"'$V'","capabilities":{},"clientInfo":{"name":"reload","version":"1"}}}'
	SID=$(tr -d '\r' < "$T/$1.h" | sed -n 's/^mcp-session-id: *//Ip' | tail -1)
	[ "$ST" = 200 ] && [ -n "$SID" ] || return 1
	post "$1.i" "$2" '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	    -H "Mcp-Session-Id: $SID" -H "MCP-Protocol-Version: $V"
}
# call NAME TOKEN SID TOOL ARGS-JSON: tools/call in a session
call() {
	post "$1" "$2" '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"'$4'","arguments":'"$5"'}}' \
	    -H "Mcp-Session-Id: $3" -H "MCP-Protocol-Version: $V"
}
# res NAME PATH: part of a tools/call's structured result
res() {
	$J get "$T/$1.b" 7 "result.structuredContent.$2" 2>/dev/null
}
# ran NAME TEXT: the call answered 200 and its stdout has TEXT
ran() {
	[ "$ST" = 200 ] && res "$1" stdout | grep -qF -- "$2"
}
# hup NAME...: SIGHUP each, and wait for the answer in its log
hup() {
	local d n
	for d in "$@"; do
		n=$(grep -cE 'configuration reload(ed| failed)' "$T/$d.log")
		kill -HUP "${PID[$d]}"
		wait_for 10 count_gt_re "$T/$d.log" \
		    'configuration reload(ed| failed)' "$n" || return 1
	done
}
count_gt_re() {
	[ "$(grep -cE -- "$2" "$1")" -gt "$3" ]
}
# last NAME: the last line of NAME's log about a reload
last() {
	grep -E 'configuration reload(ed| failed)' "$T/$1.log" | tail -1
}
# as_uid UID NAME BODY: a POST on mcpd.sock as UID (no token), as post
as_uid() {
	ST=$(setpriv --reuid="$1" --regid="$1" --clear-groups \
	    curl -s -m 10 -o - -w '\n%{http_code}' --unix-socket "$RUN/mcpd.sock" \
	    -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' \
	    --data-binary "$3" http://localhost/mcp | tee "$T/$2.b" | tail -1)
}
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"'$V'","capabilities":{},"clientInfo":{"name":"reload","version":"1"}}}'

# --- before: sessions, sandboxes, a run in progress ---------------------------

"$B/tests/notify-recv" "$T/notify" 300 > "$T/notify.out" &
BGPIDS="$BGPIDS $!"
wait_for 5 test -S "$T/notify" && chmod 0666 "$T/notify"
start auditd
start sandboxd
NOTIFY_SOCKET=$T/notify start mcpd
check "mcpd is ready" wait_log "$T/mcpd.log" "ready: serving MCP on 3 sockets"
wait_sandboxd
check "mcpd is connected to sandboxd" \
    wait_log "$T/mcpd.log" "connected to sandboxd ("

check "alice opens a session with her first token" session a1 "$TA1"
S1=$SID
call run1 "$TA1" "$S1" run_code '{"language":"sh","code":"echo before"}'
check "and runs code in it ($ST)" ran run1 before
check "alice opens another with her second token" session a2 "$TA2"
S2=$SID
check "bob opens one" session b "$TB"
SB=$SID
call mk "$TA1" "$S1" sandbox_create '{"name":"box"}'
check "alice creates a persistent sandbox ($ST)" \
    test "$ST" = 200 -a -n "$(res mk id)"
as bob create -N keep
check "bob has one too (rc $RC)" test "$RC" = 0
SOCK=$RUN/bob.sock post bs "" "$INIT"
check "bob.sock serves bob without a token ($ST)" test "$ST" = 200
as_uid 1 d1 "$INIT"
check "uid 1 (daemon) is no tenant's yet ($ST)" test "$ST" = 403
post c0 "$TC" "$INIT"
check "carol's token is not known yet ($ST)" test "$ST" = 401

# A run that outlasts the reload and the shorter timeout it brings.
n=$(count_in "$T/sandboxd.log" "for a run of tenant alice")
call long "$TA1" "$S1" run_code \
    '{"language":"sh","code":"sleep 4; echo survived the reload"}' &
LONG=$!
wait_for 10 count_gt "$T/sandboxd.log" "for a run of tenant alice" "$n"
sleep 1
# The session of the token the reload removes holds an event stream open.
curl -s -N -m 60 -o "$T/stream2.b" -H "Authorization: Bearer $TA2" \
    -H 'Accept: text/event-stream' -H "Mcp-Session-Id: $S2" \
    -H "MCP-Protocol-Version: $V" "$URL/mcp" &
STREAM2=$!
check "her second session holds a GET stream open" \
    wait_for 5 eval 'log_has "$T/mcpd.log" "GET stream" || kill -0 $STREAM2'

# --- the reload ---------------------------------------------------------------

LISTEN=$LISTEN2
TENANTS="$ALICE2
$CAROL"
DISK=128M
SMALL_TIMEOUT=2s
write_conf
SUM=$(sha256sum "$CONF" | cut -d' ' -f1)
check "mcpd reloads on SIGHUP" hup mcpd
check "and logs the new file's digest and what changed: $(last mcpd)" \
    log_has "$T/mcpd.log" "configuration reloaded (sha256 $SUM): 1 tenant added, 1 tenant changed, 1 tenant removed, 2 limits changed, 1 setting needs a restart"
check "the new listen statement is warned about, not applied" \
    log_has "$T/mcpd.log" '"listen on" changed: restart mcpd to apply it'
check "mcpd says bob.sock's tenant is gone" \
    log_has "$T/mcpd.log" "$RUN/bob.sock: tenant bob was removed"
check "mcpd ends at once the sessions of the removed token, and bob's by token and by his socket" \
    eval 'log_has "$T/mcpd.log" "reload: 3 sessions ended, their credentials revoked" &&
    [ "$(grep -c "session_close .*reason=revoked" "$T/mcpd.log")" -eq 3 ] &&
    [ "$(grep "session_close .*reason=revoked" "$T/mcpd.log" | grep -c "tenant=bob")" -eq 2 ]'
check "... closing the event stream it held" \
    wait_for 5 eval '! kill -0 $STREAM2 2>/dev/null'
wait "$STREAM2" 2>/dev/null
check "sandboxd reloads on SIGHUP" hup sandboxd
check "with the same digest: $(last sandboxd)" \
    log_has "$T/sandboxd.log" "configuration reloaded (sha256 $SUM): 1 tenant added, 1 tenant changed, 1 tenant removed, 2 limits changed"
check "sandboxd keeps bob's persistent sandbox, and says so" \
    log_has "$T/sandboxd.log" "tenant bob was removed but has 1 persistent sandbox: kept until it expires"
check "sandboxd does not warn of a listen statement it has no use for" \
    test -z "$(grep '"listen on" changed' "$T/sandboxd.log")"
check "auditd reloads on SIGHUP" hup auditd
check "with the same digest" \
    log_has "$T/auditd.log" "configuration reloaded (sha256 $SUM)"
check "warm containers of the old default disk are replaced" \
    wait_log "$T/sandboxd.log" "ended (the default limits changed)"

wait "$LONG"
check "the run in progress finished untouched by the reload" \
    eval 'res long stdout | grep -q "survived the reload" &&
    [ "$(res long timed_out)" = false ]'

# --- after: what changed, what did not ----------------------------------------

call run2 "$TA1" "$S1" run_code '{"language":"sh","code":"echo after"}'
check "alice's first session goes on with the same id ($ST)" ran run2 after
call ex "$TA1" "$S1" sandbox_exec \
    '{"sandbox":"box","command":"sleep 3; echo box still here"}'
check "her sandbox survives, with the 20 s timeout it was made with ($ST)" \
    eval 'res ex results.0.stdout | grep -q "box still here" &&
    [ "$(res ex results.0.timed_out)" = false ]'
call slow "$TA1" "$S1" run_code '{"language":"sh","code":"sleep 4; echo late"}'
check "a new run has the new 2 s timeout ($ST)" \
    test "$(res slow timed_out)" = true
call run3 "$TA2" "$S2" run_code '{"language":"sh","code":"echo no"}'
check "her removed token's session gets 401 on its next request ($ST)" \
    test "$ST" = 401
check "her new token opens a session" session a3 "$TA3"
call run4 "$TA3" "$SID" run_code '{"language":"sh","code":"echo three"}'
check "that runs code ($ST)" ran run4 three
call run5 "$TB" "$SB" run_code '{"language":"sh","code":"echo no"}'
check "bob's session gets 401 ($ST)" test "$ST" = 401
SOCK=$RUN/bob.sock post bs2 "" "$INIT"
check "bob.sock refuses requests now ($ST)" test "$ST" = 403
as bob exec -S keep -c 'echo no'
check "sandboxd refuses bob as an unknown tenant" \
    grep -q 'unknown tenant' <<< "$RES$ERR"
check "carol opens a session" session c "$TC"
call run6 "$TC" "$SID" run_code '{"language":"sh","code":"echo carol"}'
check "and runs code, in a warm container of the new default ($ST)" \
    ran run6 carol
as_uid 1 d2 "$INIT"
check "uid 1, named daemon in the new file, is carol on mcpd.sock ($ST)" \
    test "$ST" = 200
check "the added listen statement binds nothing" \
    test "$(curl -s -m 2 -o /dev/null -w '%{http_code}' \
    "http://127.0.0.1:$P2/mcp")" = 000

# --- files that are refused ---------------------------------------------------

EXTRA="bogus line"
write_conf
check "mcpd refuses a file with a syntax error" hup mcpd
check "naming its line" log_has "$T/mcpd.log" "$CONF:$(grep -n '^bogus line' "$CONF" | cut -d: -f1):"
check "and keeps the old configuration" \
    log_has "$T/mcpd.log" "configuration reload failed: keeping the old one"
call run7 "$TA1" "$S1" run_code '{"language":"sh","code":"echo kept"}'
check "alice's session still works ($ST)" ran run7 kept
EXTRA=
TENANTS="$ALICE2
${CAROL/uid daemon/limits nosuch}"
write_conf
check "sandboxd refuses a tenant with unknown limits" hup sandboxd
check "saying which: $(last sandboxd)" \
    eval 'log_has "$T/sandboxd.log" "tenant \"carol\": unknown limits \"nosuch\"" &&
    [ "$(last sandboxd | grep -c "reload failed: keeping the old one")" = 1 ]'
call run8 "$TC" "$SID" run_code '{"language":"sh","code":"echo still carol"}'
check "carol still runs code with her old limits ($ST)" ran run8 "still carol"
TENANTS="$ALICE2
${CAROL/uid daemon/uid no-such-user-$$}"
write_conf
check "mcpd refuses a user it cannot find under its confinement" hup mcpd
check "naming it" log_has "$T/mcpd.log" \
    "user \"no-such-user-$$\" is not in /etc/passwd"
as_uid 1 d3 "$INIT"
check "uid 1 is still carol's ($ST)" test "$ST" = 200

# --- bob put back ------------------------------------------------------------

TENANTS="$ALICE2
$CAROL
$BOB"
write_conf
check "all three daemons reload bob back" hup mcpd sandboxd auditd
SOCK=$RUN/bob.sock post bs3 "" "$INIT"
check "bob.sock serves him again ($ST)" test "$ST" = 200
as bob exec -S keep -c 'echo bob is back'
check "he finds his sandbox where he left it" grep -q 'bob is back' <<< "$OUT"
as bob stop -S keep
check "and stops it (rc $RC)" test "$RC" = 0
call stop "$TA1" "$S1" sandbox_stop '{"sandbox":"box"}'
check "alice stops hers ($ST)" test "$ST" = 200

# --- stdio mode, systemd ------------------------------------------------------

mkfifo "$T/in"
"$B/mcpd" --stdio -v -f "$CONF" < "$T/in" > "$T/stdio.out" 2> "$T/stdio.log" &
STDIO=$!
exec 7> "$T/in"
check "mcpd --stdio is up" wait_log "$T/stdio.log" "serving MCP on stdin"
kill -HUP "$STDIO"
check "mcpd --stdio says it does not reload" \
    wait_log "$T/stdio.log" "SIGHUP: mcpd --stdio does not reload"
echo "$INIT" >&7
check "and answers its client after the signal" \
    wait_for 10 grep -q '"protocolVersion"' "$T/stdio.out"
exec 7>&-
wait "$STDIO"
rc=$?
check "and ends when its client goes (status $rc)" test "$rc" -eq 0

n=$(grep -c '^RELOADING=1|MONOTONIC_USEC=[0-9]*$' "$T/notify.out")
check "mcpd told systemd of each of its 4 reloads ($n)" test "$n" = 4
check "and that it was ready again after each" \
    test "$(grep -c '^READY=1$' "$T/notify.out")" = 4

# --- the end ------------------------------------------------------------------

stop mcpd
rc=$?
check "mcpd exits 0 on SIGTERM (status $rc)" test "$rc" -eq 0
suite_end
if [ "$tap_failed" -ne 0 ]; then
	for l in mcpd sandboxd auditd; do
		diag "--- $l.log"
		diag_file "$T/$l.log" 30
	done
fi
done_testing
