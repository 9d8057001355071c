#!/bin/bash
# The three daemons started as root under different uids: configuration
# checks, HELLO and PING, version and identity checks, privilege drop and
# mcpd's seccomp, reconnection, clean shutdown.
. "$TOP/tests/lib.sh"
require_root

MU=64101	# mcpd's uid and gid (no passwd entry needed)
AU=64102	# auditd's
XU=64199	# a stranger
T=$(mktemp -d /tmp/mcpd-daemons.XXXXXX)
chmod 0755 "$T"
CONF=$T/mcpd.conf
RUN=$T/run
PEER=$B/tests/peer

cat > "$CONF" <<EOF
user "$MU"
run directory "$RUN"
state directory "$T/state"
sandbox-init "$B/sandbox-init"
listen on unix "$RUN/mcpd.sock"
audit {
	user "$AU"
}
EOF

cleanup() {
	kill_daemons
	remove_tmp
}
trap cleanup EXIT

# --- configuration checks (-n) ---------------------------------------

for d in mcpd mcp-auditd; do
	out=$("$B/$d" -n -f "$CONF" 2>&1)
	check "$d -n accepts a valid file" \
	    test "$?" -eq 0 -a "$out" = "configuration OK"
done
# mcp-sandboxd -n starts a container under each runtime the file uses,
# apart from anything a running daemon has, and leaves nothing behind.
cgroups_of_checks() {	# every mcpd-* parent group there is, sorted
	find /sys/fs/cgroup -maxdepth 3 -type d -name 'mcpd-*' 2> /dev/null |
	    sort
}
cgroups_of_checks > "$T/cg.before"
"$B/mcp-sandboxd" -n -f "$CONF" > "$T/out" 2> "$T/err"
rc=$?
check "mcp-sandboxd -n accepts a valid file, starting a container under runc" \
    eval '[ $rc -eq 0 ] && [ "$(tail -n 1 "$T/err")" = "configuration OK" ] &&
    grep -qE "^runtime runc \(runc /[^)]*\): a container started in [0-9]+ ms$" "$T/out" &&
    [ "$(wc -l < "$T/out")" -eq 1 ]'
diag_file "$T/out"
diag_file "$T/err"
check "... and leaves no directory in the run directory" \
    test -z "$(ls -A "$RUN" 2> /dev/null)"
cgroups_of_checks > "$T/cg.after"
check "... no cgroup" cmp -s "$T/cg.before" "$T/cg.after"
check "... and no process of its uid range" \
    test -z "$(ps -e -o uid= | awk '$1 >= 268435456 + 4095 * 65536 && $1 < 268435456 + 4096 * 65536')"
# A runtime that cannot start one fails the check, with its own words.
cat > "$T/badrt" <<'EOF2'
#!/bin/sh
case " $* " in *" --version "*) echo "runc version 1.1.5"; exit 0 ;; esac
case " $* " in *" list "*) exit 0 ;; esac
while [ $# -gt 0 ]; do
	[ "$1" = --log ] && echo '{"level":"error","msg":"no containers on this host"}' >> "$2"
	shift
done
exit 1
EOF2
chmod 0755 "$T/badrt"
{ cat "$CONF"; printf 'runtime broken {\n\tpath "%s"\n\tkind runc\n}\nruntime broken\n' \
    "$T/badrt"; } > "$T/broken.conf"
"$B/mcp-sandboxd" -n -f "$T/broken.conf" > "$T/out" 2> "$T/err"
rc=$?
check "mcp-sandboxd -n fails a runtime that starts no container, with its error (exit $rc)" \
    eval '[ $rc -eq 1 ] && ! grep -q "configuration OK" "$T/err" &&
    grep -qF "runtime broken (runc $T/badrt): no container started: " "$T/out" &&
    grep -qF "no containers on this host" "$T/out"'
diag_file "$T/out"
diag_file "$T/err"
check "... and leaves no directory in the run directory either" \
    test -z "$(ls -A "$RUN" 2> /dev/null)"
cgroups_of_checks > "$T/cg.after"
check "... nor cgroup" cmp -s "$T/cg.before" "$T/cg.after"
printf 'user "x"\nbogus line\n' > "$T/bad.conf"
for d in mcpd mcp-sandboxd mcp-auditd; do
	out=$("$B/$d" -n -f "$T/bad.conf" 2>&1)
	rc=$?
	check "$d -n rejects a bad file, naming file:line (exit $rc)" \
	    test "$rc" -eq 1 -a -n "$(echo "$out" | grep -F "$T/bad.conf:2:")"
done
# sandboxd runs the runtimes: each one the file names must be there.
{ cat "$CONF"; printf 'runtime gone {\n\tpath "%s"\n\tkind runsc\n}\n' \
    "$T/no-runsc"; } > "$T/rt.conf"
out=$("$B/mcp-sandboxd" -n -f "$T/rt.conf" 2>&1)
rc=$?
check "mcp-sandboxd -n refuses a runtime whose binary is missing (exit $rc: $out)" \
    eval '[ $rc -eq 1 ] && grep -qF "runtime gone: $T/no-runsc: No such file" <<< "$out"'
out=$("$B/mcpd" -n -f "$T/rt.conf" 2>&1)
check "mcpd -n, which runs none, accepts it ($out)" \
    test "$?" -eq 0 -a "$out" = "configuration OK"
out=$("$B/mcpd" -n -f "$T/missing.conf" 2>&1)
check "a missing configuration file is an error naming it" \
    test "$?" -eq 1 -a -n "$(echo "$out" | grep -F "$T/missing.conf")"
out=$("$B/mcpd" -x 2>&1)
check "an unknown option prints usage and exits 1" \
    test "$?" -eq 1 -a -n "$(echo "$out" | grep -F "usage: mcpd [-dnv] [-f file]")"

# --- start: HELLO and the ping chain ----------------------------------

start auditd
start sandboxd
start mcpd
check "auditd is ready" wait_log "$T/auditd.log" "ready: listening on $RUN/auditd.sock"
check "sandboxd is ready" wait_log "$T/sandboxd.log" "ready: listening on $RUN/sandboxd.sock"
check "sandboxd connects to auditd after the hello exchange" \
    wait_log "$T/sandboxd.log" "connected to auditd (auditd 0.1.0"
check "mcpd connects to sandboxd" \
    wait_log "$T/mcpd.log" "connected to sandboxd (sandboxd 0.1.0"
check "mcpd connects to auditd" \
    wait_log "$T/mcpd.log" "connected to auditd (auditd 0.1.0"
check "auditd sees sandboxd as root and mcpd as uid $MU" \
    wait_log "$T/auditd.log" "mcpd[${PID[mcpd]}] connected (mcpd 0.1.0, uid $MU)"
check "a ping from mcpd travels to sandboxd, auditd and back" \
    wait_log "$T/mcpd.log" "ping mcpd -> sandboxd -> auditd -> mcpd:"
check "a ping from mcpd to auditd comes back" \
    wait_log "$T/mcpd.log" "ping mcpd -> auditd -> mcpd:"
check "journald priority prefixes in the foreground" \
    log_has "$T/mcpd.log" "<6>mcpd: connected to sandboxd"

# --- identities, capabilities, filters -------------------------------

m=${PID[mcpd]} a=${PID[auditd]} s=${PID[sandboxd]}
check "mcpd runs as uid $MU (real, effective, saved, fs)" \
    test "$(status_field "$m" Uid)" = "$MU $MU $MU $MU"
check "mcpd runs as gid $MU, no supplementary groups" \
    test "$(status_field "$m" Gid)" = "$MU $MU $MU $MU" -a \
    -z "$(status_field "$m" Groups)"
for f in CapInh CapPrm CapEff CapBnd CapAmb; do
	check "mcpd has an empty $f" \
	    test "$(status_field "$m" $f)" = 0000000000000000
done
check "mcpd has no_new_privs" test "$(status_field "$m" NoNewPrivs)" = 1
check "mcpd runs under a seccomp filter" \
    test "$(status_field "$m" Seccomp)" = 2
check "auditd runs as uid $AU" \
    test "$(status_field "$a" Uid)" = "$AU $AU $AU $AU"
check "auditd has no capabilities" \
    test "$(status_field "$a" CapEff)" = 0000000000000000 -a \
    "$(status_field "$a" CapBnd)" = 0000000000000000
check "auditd runs under a seccomp filter" \
    test "$(status_field "$a" Seccomp)" = 2
check "sandboxd stays root, under a seccomp filter" \
    test "$(status_field "$s" Uid)" = "0 0 0 0" -a \
    "$(status_field "$s" Seccomp)" = 2

check "sandboxd.sock is root:$MU mode 660" \
    test "$(stat -c '%u:%g %a' "$RUN/sandboxd.sock")" = "0:$MU 660"
check "auditd.sock is $AU:$MU mode 660" \
    test "$(stat -c '%u:%g %a' "$RUN/auditd.sock")" = "$AU:$MU 660"

# --- hostile and stray peers -----------------------------------------

out=$("$PEER" -u $MU -g $MU connect "$RUN/sandboxd.sock" ping-audit)
check "a peer as mcpd's uid pings through sandboxd to auditd ($out)" \
    grep -q "pong path=sandboxd,auditd, status=0" <<< "$out"
out=$("$PEER" -r mcpctl connect "$RUN/sandboxd.sock" ping)
check "root may speak to sandboxd as mcpctl ($out)" \
    grep -q "pong path=sandboxd, status=0" <<< "$out"

# The version the daemons speak, and one they do not.
V=$(sed -n 's/.*version=\([0-9]*\).*/\1/p' <<< "$out" | head -1)
NV=$((V + 1))
out=$("$PEER" -u $MU -g $MU -V $NV connect "$RUN/sandboxd.sock")
rc=$?
check "sandboxd refuses protocol version $NV (exit $rc)" \
    test $rc -eq 3 -a -n "$(grep "reason=protocol version $NV, expected $V" <<< "$out")"
check "sandboxd logs the version mismatch" \
    wait_log "$T/sandboxd.log" "protocol version $NV, expected $V"
out=$("$PEER" -u $MU -g $MU -V 0 connect "$RUN/auditd.sock")
check "auditd refuses protocol version 0 ($out)" \
    grep -q "reason=protocol version 0, expected $V" <<< "$out"
check "auditd logs the version mismatch" \
    wait_log "$T/auditd.log" "protocol version 0, expected $V"
out=$("$PEER" -u $MU -g $MU -M 0x12345678 connect "$RUN/sandboxd.sock")
check "sandboxd refuses a hello with the wrong magic ($out)" \
    grep -q "reason=not an mcpd peer" <<< "$out"

out=$("$PEER" -u $XU -g $XU connect "$RUN/sandboxd.sock")
rc=$?
check "a stranger outside the socket's group cannot connect (exit $rc)" \
    test $rc -eq 3 -a -n "$(grep "Permission denied" <<< "$out")"
out=$("$PEER" -u $XU -g $XU -G $MU connect "$RUN/sandboxd.sock")
rc=$?
check "a stranger in the group is refused at accept by uid (exit $rc)" \
    test $rc -eq 3 -a -n "$(grep "reason=uid $XU may not connect here" <<< "$out")"
check "sandboxd logs the refused uid" \
    wait_log "$T/sandboxd.log" "refused uid $XU pid"
out=$("$PEER" -u $XU -g $XU -G $MU connect "$RUN/auditd.sock")
check "auditd refuses the stranger too ($out)" \
    grep -q "reason=uid $XU may not connect here" <<< "$out"
out=$("$PEER" -r mcpd connect "$RUN/sandboxd.sock")
check "root claiming to be mcpd is refused ($out)" \
    grep -q "reason=uid 0 may not act as mcpd" <<< "$out"
out=$("$PEER" -u $MU -g $MU -r sandboxd connect "$RUN/auditd.sock")
check "mcpd's uid claiming to be sandboxd is refused by auditd ($out)" \
    grep -q "reason=uid $MU may not act as sandboxd" <<< "$out"
out=$("$PEER" -u $MU -g $MU -r auditd connect "$RUN/sandboxd.sock")
check "a role sandboxd does not serve is refused ($out)" \
    grep -q "reason=role auditd is not served here" <<< "$out"
out=$("$PEER" -u $MU -g $MU connect "$RUN/sandboxd.sock" early)
rc=$?
check "a frame before the hello gets the connection closed ($out)" \
    test $rc -eq 4
check "sandboxd logs the frame before hello" \
    wait_log "$T/sandboxd.log" "sent message type 16 before hello"
out=$("$PEER" -u $MU -g $MU connect "$RUN/sandboxd.sock" hello)
check "a well-behaved peer stays connected ($out)" grep -q "^open$" <<< "$out"
check "all three daemons survived the hostile peers" \
    eval 'alive mcpd && alive sandboxd && alive auditd'

# --- reconnection with backoff ---------------------------------------

n_sb=$(count_in "$T/sandboxd.log" "connected to auditd (")
n_mc=$(count_in "$T/mcpd.log" "connected to auditd (")
check "auditd exits 0 on SIGTERM" stop auditd
check "sandboxd notices auditd going away" \
    wait_log "$T/sandboxd.log" "auditd: connection closed"
out=$("$PEER" -u $MU -g $MU connect "$RUN/sandboxd.sock" ping-audit)
check "with auditd down, a relayed ping says unreachable ($out)" \
    grep -q "pong path=sandboxd, status=1" <<< "$out"
sleep 0.5
start auditd
check "sandboxd reconnects to a restarted auditd" \
    wait_for 10 count_gt "$T/sandboxd.log" "connected to auditd (" "$n_sb"
check "mcpd reconnects to a restarted auditd" \
    wait_for 10 count_gt "$T/mcpd.log" "connected to auditd (" "$n_mc"
out=$("$PEER" -u $MU -g $MU connect "$RUN/sandboxd.sock" ping-audit)
check "the relayed ping works again ($out)" \
    grep -q "pong path=sandboxd,auditd, status=0" <<< "$out"

n_mc=$(count_in "$T/mcpd.log" "connected to sandboxd (")
kill -KILL "${PID[sandboxd]}"
wait "${PID[sandboxd]}" 2>/dev/null
unset "PID[sandboxd]"
check "mcpd notices sandboxd dying" \
    wait_log "$T/mcpd.log" "sandboxd: connection closed"
start sandboxd
check "sandboxd restarts over its stale socket" \
    wait_for 10 count_gt "$T/sandboxd.log" "ready: listening" 1
check "mcpd reconnects to the new sandboxd" \
    wait_for 10 count_gt "$T/mcpd.log" "connected to sandboxd (" "$n_mc"

# --- a second instance is refused ------------------------------------

out=$("$B/mcp-auditd" -d -f "$CONF" 2>&1)
rc=$?
check "a second auditd refuses to start (exit $rc)" \
    test $rc -eq 1 -a -n "$(grep "another instance is already listening" <<< "$out")"
check "the first auditd is unaffected" alive auditd

# --- impersonation: mcpd checks who serves a socket ------------------

stop auditd
n=$(count_in "$T/mcpd.log" "may not act as auditd")
setsid "$PEER" -r auditd -w 10 serve "$RUN/auditd.sock" > "$T/fake.log" 2>&1 &
fake=$!
check "mcpd refuses a root process posing as auditd" \
    wait_for 10 count_gt "$T/mcpd.log" "uid 0 may not act as auditd" "$n"
kill -- -"$fake" 2>/dev/null
wait "$fake" 2>/dev/null
rm -f "$RUN/auditd.sock"
n=$(count_in "$T/mcpd.log" "ping mcpd -> auditd -> mcpd:")
start auditd
check "auditd is back after the impostor" \
    wait_for 10 count_gt "$T/mcpd.log" "ping mcpd -> auditd -> mcpd:" "$n"

# --- a sibling of another protocol version ---------------------------

stop auditd
n=$(count_in "$T/mcpd.log" "auditd: protocol version $NV, expected $V: closing")
setsid "$PEER" -u $AU -g $AU -r auditd -V $NV -w 10 serve "$RUN/auditd.sock" \
    > "$T/fake.log" 2>&1 &
fake=$!
check "mcpd drops an auditd of protocol version $NV, and says so" \
    wait_for 10 count_gt "$T/mcpd.log" \
    "auditd: protocol version $NV, expected $V: closing" "$n"
kill -- -"$fake" 2>/dev/null
wait "$fake" 2>/dev/null
rm -f "$RUN/auditd.sock"
n=$(count_in "$T/mcpd.log" "ping mcpd -> auditd -> mcpd:")
start auditd
check "auditd is back after the old version" \
    wait_for 10 count_gt "$T/mcpd.log" "ping mcpd -> auditd -> mcpd:" "$n"

# --- systemd notification and watchdog --------------------------------

stop sandboxd
"$B/tests/notify-recv" "$T/notify" 4 > "$T/notify.log" &
nr=$!
sleep 0.2
NOTIFY_SOCKET=$T/notify WATCHDOG_USEC=400000 start sandboxd
wait "$nr"
check "sandboxd sends READY=1 with a status line" \
    log_has "$T/notify.log" "READY=1|STATUS=listening on $RUN/sandboxd.sock"
check "sandboxd reports auditd in its status" \
    log_has "$T/notify.log" "STATUS=auditd connected"
check "sandboxd sends WATCHDOG=1 at half the interval asked" \
    test "$(count_in "$T/notify.log" "WATCHDOG=1")" -ge 12
check "sandboxd is still up" alive sandboxd

# auditd sends as its own user, so the socket is writable by all, as
# systemd's is.
stop auditd
"$B/tests/notify-recv" "$T/anotify" 4 > "$T/anotify.log" &
nr=$!
wait_for 5 test -S "$T/anotify" && chmod 0666 "$T/anotify"
NOTIFY_SOCKET=$T/anotify WATCHDOG_USEC=400000 start auditd
wait "$nr"
check "auditd sends READY=1 with a status line" \
    log_has "$T/anotify.log" "READY=1|STATUS=listening on $RUN/auditd.sock"
check "auditd sends WATCHDOG=1 at half the interval asked, as its user" \
    test "$(count_in "$T/anotify.log" "WATCHDOG=1")" -ge 12
check "auditd is still up" alive auditd

# --- mcpd cannot execute anything ------------------------------------

gdb -q -batch -p "${PID[mcpd]}" \
    -ex 'handle SIGSYS nostop noprint pass' \
    -ex 'call (int)execve("/bin/sh", (char **)0, (char **)0)' \
    > "$T/gdb.log" 2>&1
# Some gdb and kernel pairs cannot call into a process at all.
why=$(grep -m1 "^Couldn't write extended state status" "$T/gdb.log")
if [ -n "$why" ]; then
	ok "an execve injected into mcpd kills it with SIGSYS # SKIP gdb: $why"
	ok "mcpd names the forbidden call on its way out # SKIP gdb: $why"
	stop mcpd
else
	STOP_WAIT=10 reap mcpd "gdb's execve"
	rc=$?
	check "an execve injected into mcpd kills it with SIGSYS (status $rc)" \
	    test $rc -eq $((128 + 31))
	check "mcpd names the forbidden call on its way out" \
	    log_has "$T/mcpd.log" "seccomp: forbidden system call 59"
	[ $rc -eq $((128 + 31)) ] || diag_file "$T/gdb.log"
fi

# --- clean shutdown ---------------------------------------------------

n=$(count_in "$T/mcpd.log" "ping mcpd -> sandboxd -> auditd -> mcpd:")
start mcpd
check "a new mcpd comes up after that" \
    wait_for 10 count_gt "$T/mcpd.log" "ping mcpd -> sandboxd -> auditd -> mcpd:" "$n"
stop mcpd
rc=$?
check "mcpd exits 0 on SIGTERM (status $rc)" test $rc -eq 0
check "sandboxd exits 0 on SIGTERM" stop sandboxd
check "auditd exits 0 on SIGINT" stop auditd INT
check "each daemon logged its shutdown" \
    eval 'log_has "$T/mcpd.log" "Terminated received, shutting down" &&
    log_has "$T/sandboxd.log" "Terminated received, shutting down" &&
    log_has "$T/auditd.log" "Interrupt received, shutting down"'

if [ "$tap_failed" -ne 0 ]; then
	for l in mcpd sandboxd auditd; do
		diag "--- $l.log"
		diag_file "$T/$l.log" 25
	done
fi
done_testing
