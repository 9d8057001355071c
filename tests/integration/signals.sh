#!/bin/bash
# A SIGTERM sent at any moment of a daemon's start stops it, as
# `systemctl stop` right after a start does: each daemon started and sent
# SIGTERM over and over (ROUNDS, default 100; sandboxd, whose helper
# takes a second to set up, a tenth of that), half of the times within a
# millisecond of its exec, half 1-50 ms after it.  Each must end within a
# few seconds: with status 0 once its handler is in place, 143 before.
. "$TOP/tests/lib.sh"
require_root

ROUNDS=${ROUNDS:-100}
T=$(mktemp -d /tmp/mcpd-signals.XXXXXX)
chmod 0755 "$T"
CONF=$T/mcpd.conf
RUN=$T/run

cat > "$CONF" <<CONF
user "64101"
run directory "$RUN"
state directory "$T/state"
sandbox-init "$B/sandbox-init"
image host host pool 0
listen on unix "$RUN/mcpd.sock"
audit {
	user "64102"
}
CONF

cleanup() {
	kill_daemons
	# A debootstrap of mcpctl's that outlived it (it failed).
	pkill -f " $T/ctl/images/store/" 2>/dev/null
	remove_tmp
}
trap cleanup EXIT

# sandboxd's helper outlives it for a moment when it goes first.
no_helper() {
	! pgrep -f "mcp-sandboxd -d -v -f $CONF" > /dev/null
}

stop5() {
	STOP_WAIT=5 stop "$@"
}

# rounds NAME N: start and stop it N times; a third lost SIGTERM ends the
# rounds (each costs STOP_WAIT).
rounds() {
	local d=$1 n=$2 i k rc clean=0 early=0 bad=0 lost=0
	for ((i = 0; i < n && lost < 3; i++)); do
		start "$d"
		if ((i % 2 == 0)); then
			for ((k = RANDOM % 100; k > 0; k--)); do :; done
		else
			sleep "0.0$(printf %02d $((RANDOM % 50 + 1)))"
		fi
		stop5 "$d"
		rc=$?
		case $rc in
		0) clean=$((clean + 1)) ;;
		143) early=$((early + 1)) ;;
		137) lost=$((lost + 1)) ;;
		*) bad=$((bad + 1)); diag "$d: round $i: exit $rc" ;;
		esac
		[ "$d" = sandboxd ] && wait_for 10 no_helper
	done
	check "$d ends on each SIGTERM ($i rounds: $clean exited 0, $early died of it before its handler, $lost ignored it, $bad other)" \
	    test $((lost + bad)) -eq 0
	[ $((lost + bad)) -eq 0 ] || diag_file "$T/$d.log"
}

rounds auditd "$ROUNDS"
rounds mcpd "$ROUNDS"
rounds sandboxd $((ROUNDS / 10))
check "sandboxd's helper is gone with it" wait_for 10 no_helper

# --- a start with the signals blocked -----------------------------------

# What a parent's mask leaves its child (a mask survives exec): here, one
# that blocks every signal the suite waits for.  Run in the background.
blocked() {	# blocked PROGRAM ARGS... &
	exec /usr/bin/python3 -c 'import os, signal, sys
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT,
    signal.SIGHUP, signal.SIGCHLD})
os.execv(sys.argv[1], sys.argv[1:])' "$@"
}
for d in auditd mcpd sandboxd; do
	touch "$T/$d.log"
	n=$(count_in "$T/$d.log" "ready: ")
	bin=mcp-$d
	[ $d = mcpd ] && bin=mcpd
	blocked "$B/$bin" -d -v -f "$CONF" >> "$T/$d.log" 2>&1 &
	started $d
	wait_for 20 count_gt "$T/$d.log" "ready: " "$n"
	check "$d started with SIGTERM blocked still stops on it" stop5 "$d"
done
check "sandboxd's helper is gone with it" wait_for 10 no_helper

# --- mcpctl's long commands ---------------------------------------------

# A mirror that never answers: debootstrap would wait on it for ever.
/usr/bin/python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
print(s.getsockname()[1], flush=True)
held = []
while True:
	held.append(s.accept())' > "$T/mirror.port" &
started mirror
wait_for 5 test -s "$T/mirror.port"
echo "state directory \"$T/ctl\"" > "$T/ctl.conf"
blocked "$B/mcpctl" -f "$T/ctl.conf" image build \
    -m "http://127.0.0.1:$(cat "$T/mirror.port")/debian" held \
    > "$T/mcpctl.log" 2>&1 &
started mcpctl
# Sent once the tool runs: before, it would die of it, status 143.
wait_for 10 pgrep -f " $T/ctl/images/store/" > /dev/null
STOP_WAIT=10 stop mcpctl
rc=$?
check "mcpctl image build, started with SIGTERM blocked, fails on it (status $rc)" \
    test $rc -eq 1
[ $rc -eq 1 ] || diag_file "$T/mcpctl.log"
check "... leaving nothing half made" \
    test -z "$(ls -A "$T/ctl/images/store" 2>/dev/null | grep '^\.new-')"
check "... nor a debootstrap running" \
    test -z "$(pgrep -f "127.0.0.1:$(cat "$T/mirror.port")/debian")"

done_testing
