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

# What a parent's mask leaves the daemon (a mask survives exec): here,
# one that blocks every signal the suite waits for.
blocked() {	# blocked NAME
	local bin=mcp-$1
	[ "$1" = mcpd ] && bin=mcpd
	/usr/bin/python3 -c 'import os, signal, sys
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT,
    signal.SIGHUP, signal.SIGCHLD})
os.execv(sys.argv[1], sys.argv[1:])' "$B/$bin" -d -v -f "$CONF" \
	    >> "$T/$1.log" 2>&1 &
	started "$1"
}
for d in auditd mcpd sandboxd; do
	touch "$T/$d.log"
	n=$(count_in "$T/$d.log" "ready: ")
	blocked "$d"
	wait_for 20 count_gt "$T/$d.log" "ready: " "$n"
	check "$d started with SIGTERM blocked still stops on it" stop5 "$d"
done
check "sandboxd's helper is gone with it" wait_for 10 no_helper

done_testing
