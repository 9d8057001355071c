#!/bin/bash
# Speed (issue 6): how long it takes to run python3 -c 'print(1)' bare on
# the host, with runc and sandboxd's hardened bundle, with docker run, and
# through the suite (run_code over HTTP and stdio, sandbox_exec in a
# persistent sandbox); runs per second at 1, 4 and 16 at once; the memory
# of each daemon idle and under load, and of an idle pool container.  One
# table from one run, then the issue's targets, met or not.
#
#	bash tests/bench/speed.sh	(as root; B=build by default)
#
# Environment: N latency samples per row (100), NT runs per throughput row
# (150), ND docker samples (20), GAP ms between paced requests (150), W
# warm-up runs per row and round (3), R rounds (5).  The measuring is
# tests/tools/mcpbench.c, in C, so that no client interpreter is in the
# path; the runc baseline's bundles come from tests/tools/mkbundle.c,
# sandboxd's own bundle code.
#
# The machines this runs on are shared, and how fast they are drifts over
# seconds.  So the rows are not measured one after the other: each round
# takes N/R samples of every latency row in turn, and each throughput
# round runs (b) and (d) in turn, and the table pools the rounds.  A slow
# spell then falls on every row alike, and the ratios hold.
#
# Prints; asserts nothing: these machines are shared and noisy.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
B=${B:-$TOP/build}
case "$B" in /*) ;; *) B=$TOP/$B ;; esac
N=${N:-100}
NT=${NT:-150}
ND=${ND:-20}
GAP=${GAP:-150}
W=${W:-3}
R=${R:-5}
POOL=4
# A uid range of the benchmark's own: the tests use 2^28 and ranges near
# 1966080000; the runc baseline takes a slot past the daemons' 64.
SANDBOX_UIDS=1968177152
BASE_UID=$((SANDBOX_UIDS + 64 * 65536))
PY=/usr/bin/python3
BENCH=${BENCH:-$B/tests/mcpbench}
. "$TOP/tests/lib.sh"
. "$TOP/tests/bench/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "speed.sh: run as root (runc, and daemons under their uids)" >&2
	exit 1
fi
for f in "$B/mcpd" "$B/mcp-sandboxd" "$B/mcp-auditd" "$B/sandbox-init" \
    "$BENCH" "$B/tests/mkbundle" "$PY"; do
	if [ ! -x "$f" ]; then
		echo "speed.sh: $f missing: run make first" >&2
		exit 1
	fi
done
RUNC=$(command -v runc) || { echo "speed.sh: no runc" >&2; exit 1; }

# On the disk, not in memory: the audit commit is part of each run.
T=$(mktemp -d /var/tmp/mcpd-bench-speed.XXXXXX)
chmod 0755 "$T"
mkdir "$T/res"
# Runtime state, the run directory and runc's, on a tmpfs as /run is on
# a standard system (on this one it may not be), for the suite and the
# baseline alike.
MEM=$T/mem
RUN=$MEM/run
CONF=$T/mcpd.conf
BCG=mcpd-bench-$$		# the baseline's cgroup parent
DIMG=
SAMPLER=

progress() {
	echo "speed.sh: $*" >&2
}

# SIGTERM, then SIGKILL after 30 s (lib.sh's stop, which shows the state
# of one that will not go); the names of those killed in KILLED.
KILLED=
stop_daemons() {
	local n
	for n in mcpd sandboxd auditd; do
		[ -n "${PID[$n]:-}" ] || continue
		STOP_WAIT=30 stop "$n"
		[ $? -eq 137 ] && KILLED="$KILLED $n"
	done
	return 0
}

# Whatever a failed or killed run left: containers, cgroups, mounts.
cleanup() {
	local id r m
	[ -n "$SAMPLER" ] && kill "$SAMPLER" 2>/dev/null
	stop_daemons
	for r in "$MEM/runc-root" "$RUN/runc"; do
		for id in $("$RUNC" --root "$r" list -q 2>/dev/null); do
			"$RUNC" --root "$r" delete -f "$id" 2>/dev/null
		done
	done
	rmdir /sys/fs/cgroup/*/"$BCG" /sys/fs/cgroup/*/"$(cg_parent "$RUN")" \
	    2>/dev/null
	findmnt -rn -o TARGET | grep "^$T/" | sort -r | while read -r m; do
		umount -l "$m"
	done
	[ -n "$DIMG" ] && docker rmi -f "$DIMG" > /dev/null 2>&1
	if [ -n "${KEEP:-}" ]; then
		echo "speed.sh: kept $T" >&2
	else
		rm -rf --one-file-system "$T"
	fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM
mkdir "$MEM"
if ! mount -t tmpfs -o size=512m,mode=0755 tmpfs "$MEM"; then
	echo "speed.sh: cannot mount a tmpfs on $MEM" >&2
	exit 1
fi

# --- the host ---------------------------------------------------------------

PYV=$("$PY" --version 2>&1 | awk '{ print $2 }')
RUNCV=$("$RUNC" --version | awk 'NR == 1 { print $3 }')
FS=$(df -T "$T" | awk 'NR == 2 { print $2 }')

# --- (b) runc with sandboxd's bundle -----------------------------------------

if ! "$B/tests/mkbundle" -n 16 -g "$BCG" -i "$B/sandbox-init" \
    -u "$BASE_UID" "$T/image" "$MEM/bundles" "$PY" -c 'print(1)'; then
	echo "speed.sh: mkbundle failed" >&2
	exit 1
fi
# %s: a bundle, and so a cgroup, per slot; %i: a container id per run,
# unique across rounds.
RUNCRUN=("$RUNC" --root "$MEM/runc-root" run -b "$MEM/bundles/%s" "bench-%i")
runcrun() {	# runcrun ROUND: the command, its ids that round's own
	local a
	RUNCARGS=()
	for a in "${RUNCRUN[@]}"; do
		RUNCARGS+=("${a/bench-%i/bench-$1-%i}")
	done
}
# Bare python3 gets the environment sandbox-init gives a command.
BARE=(env -i PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 HOME=/tmp
    TMPDIR=/tmp)

# --- (c) docker run ----------------------------------------------------------

# A root holding what python3 needs: the binary, its libraries, its
# standard library and a little of /etc.  Imported, never pulled.
docker_root() {
	local r=$1 exe f
	exe=$(readlink -f "$PY")
	mkdir -p "$r/usr/bin" "$r/usr/lib" "$r/usr/lib64" "$r/etc" "$r/tmp"
	chmod 1777 "$r/tmp"
	ln -s usr/lib "$r/lib"
	ln -s usr/lib64 "$r/lib64"
	ln -s usr/bin "$r/bin"
	cp "$exe" "$r/usr/bin/" || return 1
	ln -sf "$(basename "$exe")" "$r/usr/bin/python3"
	for f in $(ldd "$exe" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }
	    $1 ~ /^\// { print $1 }'); do
		cp -L --parents "$f" "$r" || return 1
	done
	cp -a "/usr/lib/$(basename "$exe")" "$r/usr/lib/" || return 1
	rm -rf "$r/usr/lib/$(basename "$exe")/test"
	[ -d "/etc/$(basename "$exe")" ] &&
	    cp -a "/etc/$(basename "$exe")" "$r/etc/"
	printf '%s\n' "root:x:0:0:root:/root:/bin/sh" \
	    "nobody:x:65534:65534:nobody:/nonexistent:/bin/sh" > "$r/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' > "$r/etc/group"
	return 0
}

DOCKER_SKIP=
if ! command -v docker > /dev/null; then
	DOCKER_SKIP="no docker command"
elif ! docker info > "$T/docker-info" 2>&1; then
	DOCKER_SKIP="no Docker engine: $(grep -m 1 -iE 'cannot|error' \
	    "$T/docker-info" | sed 's/\. Is the docker daemon running?//')"
else
	progress "(c) docker run"
	DIMG=mcpd-bench-python:$$
	if ! docker_root "$T/docker-root"; then
		DOCKER_SKIP="could not build the image's root"
	elif ! tar -C "$T/docker-root" -c . |
	    docker import - "$DIMG" > /dev/null 2> "$T/docker-import"; then
		DOCKER_SKIP="docker import: $(head -n 1 "$T/docker-import")"
	else
		measure docker exec -n "$ND" -w 1 -- docker run --rm \
		    --network none "$DIMG" /usr/bin/python3 -c 'print(1)'
		pooled docker
	fi
fi

# --- the suite ---------------------------------------------------------------

PORT=$(free_port)
TOKEN=bench-$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
# (g): a tenant whose one-shot containers are wiped and reused.
RTOKEN=bench-$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
cat > "$CONF" <<EOF
user "64101"
run directory "$RUN"
state directory "$T/state"
sandbox-init "$B/sandbox-init"
sandbox uids $SANDBOX_UIDS 64
listen on 127.0.0.1 port $PORT
image host host pool $POOL

tenant bench {
	token "sha256:$(printf %s "$TOKEN" | sha256sum | cut -d' ' -f1)"
	uid root
}
tenant reuse {
	token "sha256:$(printf %s "$RTOKEN" | sha256sum | cut -d' ' -f1)"
	reuse yes
}

audit {
	user "64102"
	required yes
}
EOF

progress "starting the suite"
# Not verbose: a debug line per request is not part of the cost.
daemon() {	# daemon NAME
	local bin=$1
	[ "$1" != mcpd ] && bin=mcp-$1
	"$B/$bin" -d -f "$CONF" >> "$T/$1.log" 2>&1 &
	PID[$1]=$!
}
logged() {	# logged NAME TEXT: in its log (which may not exist yet)
	grep -qsF -- "$2" "$T/$1.log"
}
daemon auditd
wait_for 10 logged auditd "ready: listening" &&
    daemon sandboxd && wait_for 30 logged sandboxd "ready: listening" &&
    daemon mcpd && wait_for 10 logged mcpd "connected to sandboxd"
for n in auditd sandboxd mcpd; do
	if ! kill -0 "${PID[$n]:-0}" 2>/dev/null ||
	    ! grep -q "ready" "$T/$n.log"; then
		echo "speed.sh: $n did not start:" >&2
		tail -n 5 "$T/$n.log" >&2
		exit 1
	fi
done
URL=http://127.0.0.1:$PORT/mcp
HTTP=(http -u "$URL" -t "$TOKEN")
REUSE=(http -u "$URL" -t "$RTOKEN")
SBXEXE=$(readlink -f "$B/mcp-sandboxd")
HELPER=
for p in $(ps -o pid= --ppid "${PID[sandboxd]}"); do
	[ "$(readlink "/proc/$p/exe")" = "$SBXEXE" ] && HELPER=$p
done
DAEMONS="mcpd:${PID[mcpd]} sandboxd:${PID[sandboxd]} helper:${HELPER:-0}"
DAEMONS="$DAEMONS auditd:${PID[auditd]}"

# Idle: after a few requests, once the pool has had time to fill.
measure warm "${HTTP[@]}" -n 5 -w 1 run
for _ in $(seq 50); do
	[ "$("$RUNC" --root "$RUN/runc" list -q 2>/dev/null | wc -l)" -ge \
	    "$POOL" ] && break
	sleep 0.1
done
sleep 1
declare -A IDLE LOAD
for d in $DAEMONS; do
	rss "${d#*:}"
	IDLE[${d%%:*}]=$RSS
done
POOLIDS=$("$RUNC" --root "$RUN/runc" list -q 2>/dev/null)
POOLID=$(echo "$POOLIDS" | head -n 1)
POOLN=$(echo "$POOLIDS" | grep -c .)
if [ -n "$POOLID" ]; then
	CG=/sys/fs/cgroup/memory/$(cg_parent "$RUN")/$POOLID
	POOLCG=$(cat "$CG/memory.usage_in_bytes" 2>/dev/null || echo 0)
	POOLPID=$("$RUNC" --root "$RUN/runc" state "$POOLID" 2>/dev/null |
	    sed -n 's/^ *"pid": *\([0-9]*\).*/\1/p')
	POOLPSS=$(awk '$1 == "Pss:" { print $2 }' \
	    "/proc/$POOLPID/smaps_rollup" 2>/dev/null)
fi

# A stdio user is in mcpd's group (README.md), and so reaches auditd's
# socket: root without it is refused once mcpd has shed its capabilities,
# and then mcpd's own records of the calls are not made.
STDIO=(setpriv --groups 64101 -- "$B/mcpd" --stdio -f "$CONF")
# Each round: every latency row in turn, N/R samples of each.
NR=$(( (N + R - 1) / R ))
for r in $(seq "$R"); do
	progress "latency, round $r of $R: (a) (b) (d) (e) (f) (g)"
	runcrun "$r"
	measure bare exec -n "$NR" -w "$W" -- "${BARE[@]}" "$PY" -c 'print(1)'
	measure bare.paced exec -n "$NR" -w "$W" -g "$GAP" -- "${BARE[@]}" \
	    "$PY" -c 'print(1)'
	measure runc exec -n "$NR" -w "$W" -- "${RUNCARGS[@]}"
	measure http "${HTTP[@]}" -n "$NR" -w "$W" run
	measure http.paced "${HTTP[@]}" -n "$NR" -w "$W" -g "$GAP" run
	measure stdio stdio -n "$NR" -w "$W" -- "${STDIO[@]}"
	measure stdio.paced stdio -n "$NR" -w "$W" -g "$GAP" -- \
	    "${STDIO[@]}"
	measure exec "${HTTP[@]}" -n "$NR" -w "$W" exec
	measure reuse "${REUSE[@]}" -n "$NR" -w "$W" run
	measure reuse.paced "${REUSE[@]}" -n "$NR" -w "$W" -g "$GAP" run
done

# Throughput: (b) and (d) in turn, RT rounds of each cell.
RT=${RT:-3}
NTR=$(( (NT + RT - 1) / RT ))
throughput() {	# throughput C ROUND
	runcrun "t$1-$2"
	cpu "runc.c$1" exec -n "$NTR" -c "$1" -w 0 -- "${RUNCARGS[@]}"
	cpu "http.c$1" "${HTTP[@]}" -n "$NTR" -c "$1" -w 1 run
	cpu "reuse.c$1" "${REUSE[@]}" -n "$NTR" -c "$1" -w 1 run
}
for c in 1 4; do
	for r in $(seq "$RT"); do
		progress "throughput at $c, round $r of $RT"
		throughput "$c" "$r"
	done
done
# Under load: the largest RSS sampled while 16 connections run.
(
	declare -A max
	while [ ! -e "$T/sampler.stop" ]; do
		for d in $DAEMONS; do
			rss "${d#*:}"
			[ "$RSS" -gt "${max[${d%%:*}]:-0}" ] &&
			    max[${d%%:*}]=$RSS
		done
		sleep 0.1
	done
	for d in $DAEMONS; do
		echo "${d%%:*} ${max[${d%%:*}]:-0}"
	done > "$T/sampler.out"
) &
SAMPLER=$!
for r in $(seq "$RT"); do
	progress "throughput at 16, round $r of $RT"
	throughput 16 "$r"
done
touch "$T/sampler.stop"
wait "$SAMPLER"
SAMPLER=
while read -r n v; do
	LOAD[$n]=$v
done < "$T/sampler.out"

# Where the CPU goes (issue 25): one cell more of (b) and of (d) at 1 and
# at 4 at once, the whole machine sampled by perf meanwhile; the samples
# are added up by the name of the process they fell in (its "comm", which
# exec changes: runc's stages name themselves, and sandboxd's helper is
# "sandboxd-priv"), and kernel from user by where they fell.
NP=${NP:-60}	# runs per profiled cell
PF=${PF:-997}	# samples per second per CPU
PERF=$(command -v perf)
PROFILE_SKIP=
if [ -z "$PERF" ]; then
	PROFILE_SKIP="no perf here (apt-get install linux-perf)"
elif ! "$PERF" record -q -a -F "$PF" -e cpu-clock -o "$T/res/probe.perf" \
    -- true > /dev/null 2> "$T/res/probe.err"; then
	PROFILE_SKIP="perf record -a fails: $(head -n 1 "$T/res/probe.err")"
fi
# profile KEY C MODE mcpbench-args...: C at once, one warm-up run each,
# which perf sees too: the runs are counted with them.
profile() {
	local key=$1 c=$2 mode=$3
	shift 3
	echo "$c" > "$T/res/$key.pwarm"
	"$PERF" record -q -a -F "$PF" -e cpu-clock -o "$T/res/$key.perf" -- \
	    "$BENCH" "$mode" -o "$T/res/$key.praw" -c "$c" -w 1 "$@" \
	    > /dev/null 2> "$T/res/$key.perr"
	"$PERF" report -i "$T/res/$key.perf" --stdio -q --sort comm,dso \
	    -F sample,comm,dso -t '|' > "$T/res/$key.prof" 2> /dev/null
}
if [ -z "$PROFILE_SKIP" ]; then
	for c in 1 4; do
		progress "where the CPU goes, at $c"
		runcrun "p$c"
		profile "runc.p$c" "$c" exec -n "$NP" -- "${RUNCARGS[@]}"
		profile "http.p$c" "$c" "${HTTP[@]}" -n "$NP" run
		profile "reuse.p$c" "$c" "${REUSE[@]}" -n "$NP" run
	done
fi

progress "stopping the suite"
stop_daemons
LEFT=$( ("$RUNC" --root "$RUN/runc" list -q; "$RUNC" --root "$MEM/runc-root" \
    list -q) 2>/dev/null | grep -c .)
# Any process still under the benchmark's uids, the baseline's included.
STRAYS=$(ps -eo uid= | awk -v b="$SANDBOX_UIDS" \
    -v e=$((BASE_UID + 65536)) '$1 >= b && $1 < e' | grep -c .)

# --- the table ---------------------------------------------------------------

for k in bare bare.paced runc http http.paced stdio stdio.paced exec reuse reuse.paced \
    runc.c1 runc.c4 runc.c16 http.c1 http.c4 http.c16 reuse.c1 reuse.c4 \
    reuse.c16; do
	pooled "$k"
done

# A row is compared with (a) measured the same way: an idle gap before
# each run slows bare python3 too (the CPU and its caches go cold), so
# the paced rows' ratios are to the paced (a).
A50=$(field bare p50)
AP50=$(field bare.paced p50)
lat() {	# lat KEY LABEL: paced if KEY ends in .paced
	local base=$A50
	case $1 in *.paced) base=$AP50 ;; esac
	if [ ! -s "$T/res/$1" ]; then
		printf '%-50s %s\n' "$2" "no result (see above)"
		return
	fi
	printf '%-50s %5s %4s %8s %8s %8s %7s\n' "$2" "$(field "$1" n)" \
	    "$(field "$1" errors)" "$(field "$1" p50)" "$(field "$1" p99)" \
	    "$(field "$1" mean)" "$(ratio "$(field "$1" p50)" "$base")"
}
thr() {	# thr KEY LABEL
	printf '%-50s %8s %8s %8s\n' "$2" "$(field "$1.c1" rate)" \
	    "$(field "$1.c4" rate)" "$(field "$1.c16" rate)"
}
thrcpu() {	# thrcpu KEY LABEL
	printf '%-50s %8s %8s %8s\n' "$2" "$(cpums "$1.c1")" \
	    "$(cpums "$1.c4")" "$(cpums "$1.c16")"
}

echo "# mcpd speed: $(nproc) cores, kernel $(uname -r), runc $RUNCV," \
    "Python $PYV, state and audit on $FS, run directory on tmpfs"
echo "# latency of print(1) in ms, one request at a time;" \
    "paced: $GAP ms between an answer and the next request;" \
    "rows interleaved in $R rounds; p50/(a): to (a) measured alike"
printf '%-50s %5s %4s %8s %8s %8s %7s\n' "" n err p50 p99 mean "p50/(a)"
lat bare "(a) python3 -c 'print(1)', bare, back to back"
lat bare.paced "(a) python3 -c 'print(1)', bare, paced"
lat runc "(b) runc run, sandboxd's bundle (runc $RUNCV)"
if [ -n "$DOCKER_SKIP" ]; then
	printf '%-50s %s\n' "(c) docker run --rm --network none" \
	    "skipped: $DOCKER_SKIP"
else
	lat docker "(c) docker run --rm --network none"
fi
lat http "(d) run_code, HTTP, back to back"
lat http.paced "(d) run_code, HTTP, paced"
lat stdio "(e) run_code, stdio, back to back"
lat stdio.paced "(e) run_code, stdio, paced"
lat exec "(f) sandbox_exec, persistent sandbox, HTTP"
lat reuse "(g) run_code, HTTP, reuse yes, back to back"
lat reuse.paced "(g) run_code, HTTP, reuse yes, paced"
echo "# throughput in runs/s, about $NT runs per cell, (b) and (d) in turn in $RT rounds"
printf '%-50s %8s %8s %8s\n' "" c=1 c=4 c=16
thr runc "(b) runc run"
thr http "(d) run_code, HTTP"
thr reuse "(g) run_code, HTTP, reuse yes"
echo "# CPU ms per run, the whole machine's (/proc/stat), in those cells"
thrcpu runc "(b) runc run"
thrcpu http "(d) run_code, HTTP"
thrcpu reuse "(g) run_code, HTTP, reuse yes"
ERRS=$(cat "$T"/res/runc.c? "$T"/res/runc.c16 "$T"/res/http.c? \
    "$T"/res/http.c16 "$T"/res/reuse.c? "$T"/res/reuse.c16 2>/dev/null |
    awk '{ e += $4 } END { print e + 0 }')
[ "$ERRS" -ne 0 ] && echo "# $ERRS runs failed in the throughput rows"
echo "# resident memory (VmRSS), MiB: idle, and the most sampled" \
    "during (d) at c=16"
printf '%-50s %8s %8s\n' "" idle load
TOTAL=0
for d in $DAEMONS; do
	n=${d%%:*}
	case $n in
	mcpd) label="mcpd (HTTP)" ;;
	sandboxd) label="mcp-sandboxd" ;;
	helper) label="mcp-sandboxd privileged helper" ;;
	auditd) label="mcp-auditd" ;;
	esac
	printf '%-50s %8s %8s\n' "$label" "$(mib "${IDLE[$n]}")" \
	    "$(mib "${LOAD[$n]:-0}")"
	TOTAL=$((TOTAL + IDLE[$n]))
done
printf '%-50s %8s\n' "the suite's daemons, idle" "$(mib "$TOTAL")"
if [ -n "${POOLID:-}" ]; then
	printf '%-50s %8s\n' "idle pool container: memory cgroup charge" \
	    "$(mib $((POOLCG / 1024)))"
	printf '%-50s %8s\n' "idle pool container: sandbox-init Pss" \
	    "$(mib "${POOLPSS:-0}")"
	echo "# $POOLN containers while idle; measured ${POOLID:0:12}"
else
	echo "# no idle pool container found (runc list shows none while idle)"
fi
if [ "$LEFT" -eq 0 ] && [ "$STRAYS" -eq 0 ]; then
	echo "# after stopping: no container and no sandbox process left"
else
	echo "# after stopping: $LEFT containers and $STRAYS sandbox" \
	    "processes LEFT (removed now)"
fi
[ -n "$KILLED" ] && echo "# did not stop within 30 s, killed:$KILLED"

# part KEY: "component ms kernel-ms" lines, per run of the profiled cell.
part() {
	local runs
	runs=$(( $(grep -c . "$T/res/$1.praw" 2> /dev/null) +
	    $(cat "$T/res/$1.pwarm" 2> /dev/null || echo 0) ))
	[ "${runs:-0}" -gt 0 ] && [ -s "$T/res/$1.prof" ] || return
	awk -F'|' -v runs="$runs" -v hz="$PF" '
	function part(c) {
		if (c == "python3") return "python3, the run itself"
		if (c == "sh") return "sh, the language command line"
		if (c == "sandbox-init") return "sandbox-init"
		if (c ~ /^runc:\[2:INIT\]/) return "runc init: namespaces, mounts, exec"
		if (c ~ /^runc:\[[01]:/ || c == "exe")
			return "runc init: first stages (nsexec)"
		if (c == "runc") return "runc: create, start, kill, delete"
		if (c == "sandboxd-priv") return "sandboxd privileged helper"
		if (c == "mcp-sandboxd") return "sandboxd"
		if (c == "mcpd") return "mcpd"
		if (c == "mcp-auditd") return "auditd"
		if (c ~ /^(kworker|ksoftirqd|rcu|migration|kcompactd|khugepaged|kswapd)/)
			return "kernel threads: teardown, RCU"
		if (c == "mcpbench") return "(the benchmark client)"
		if (c == "perf" || c ~ /^swapper/ || c == "" || c == ":-1")
			return ""
		return "other: " c
	}
	{
		gsub(/^ +| +$/, "", $1); gsub(/^ +| +$/, "", $2)
		gsub(/^ +| +$/, "", $3)
		p = part($2)
		if (p == "") next
		ms = $1 * 1000 / hz / runs
		t[p] += ms
		if ($3 == "[kernel.kallsyms]") k[p] += ms
	}
	END { for (p in t) printf "%s|%.2f|%.2f\n", p, t[p], k[p] }' \
	    "$T/res/$1.prof"
}
PKEYS="runc.p1 runc.p4 http.p1 http.p4 reuse.p1 reuse.p4"
if [ -n "$PROFILE_SKIP" ]; then
	echo "# where the CPU goes: skipped: $PROFILE_SKIP"
else
	for k in $PKEYS; do part "$k" > "$T/res/$k.part"; done
	echo "# where the CPU goes: CPU ms per run by process, kernel part in" \
	    "brackets; perf record -a at $PF Hz over $NP more runs per cell"
	printf '%-36s %12s %12s %12s %12s %12s %12s\n' "" "(b) c=1" \
	    "(b) c=4" "(d) c=1" "(d) c=4" "(g) c=1" "(g) c=4"
	cat "$T"/res/*.p[14].part | cut -d'|' -f1 | sort -u |
	    while read -r comp; do
		line=$(printf '%-36s' "$comp")
		for k in $PKEYS; do
			v=$(awk -F'|' -v c="$comp" '$1 == c {
			    printf "%.1f (%.1f)", $2, $3 }' "$T/res/$k.part")
			line="$line $(printf '%12s' "${v:--}")"
		done
		echo "$line"
	done
	line=$(printf '%-36s' "all but the client")
	for k in $PKEYS; do
		v=$(awk -F'|' '$1 !~ /^\(/ { t += $2; k += $3 }
		    END { printf "%.1f (%.1f)", t, k }' "$T/res/$k.part")
		line="$line $(printf '%12s' "$v")"
	done
	echo "$line"
fi

# --- the targets -------------------------------------------------------------

D50=$(field http.paced p50)
DB50=$(field http p50)
R50=$(field runc p50)
F50=$(field exec p50)
D4=$(field http.c4 rate)
R4=$(field runc.c4 rate)
A15=$(calc "1.5 * $AP50")
A13=$(calc "1.3 * $A50")
RD=$( [ -n "$D50" ] && [ -n "$R50" ] && calc "$R50 / $D50")
echo "# targets (issue 6), on the paced rows; back to back (b2b) beside;" \
    "(a) measured alike"
target "(d) paced p50 $D50 ms (b2b $DB50) <= 1.5 x (a) paced p50 = $A15 ms" \
    "$D50" "<=" "$A15"
target "(b) p50 $R50 ms / (d) p50 $D50 ms (b2b $DB50) = ${RD}x >= 3x" \
    "$RD" ">=" 3
target "(f) p50 $F50 ms <= 1.3 x (a) b2b p50 = $A13 ms" "$F50" "<=" "$A13"
target "(d) c=4 $D4 runs/s >= (b) c=4 $R4 runs/s" "$D4" ">=" "$R4"
target "idle suite RSS $(mib "$TOTAL") MiB <= 20 MiB" "$TOTAL" "<=" \
    $((20 * 1024))
if [ -n "${POOLID:-}" ]; then
	target "an idle pool container $(mib $((POOLCG / 1024))) MiB (cgroup\
 charge) <= 4 MiB" "$POOLCG" "<=" $((4 << 20))
else
	target "an idle pool container <= 4 MiB: none found" "" "<=" ""
fi
G4=$(field reuse.c4 rate)
G4CPU=$(cpums reuse.c4)
G50=$(field reuse.paced p50)
GB50=$(field reuse p50)
R42=$( [ -n "$R4" ] && calc "2 * $R4")
A12=$(calc "1.2 * $AP50")
A14=$(calc "1.4 * $A50")
echo "# targets (issue 25): (g), a tenant with reuse yes"
target "(g) c=4 $G4 runs/s >= 2 x (b) c=4 = $R42 runs/s" "$G4" ">=" "$R42"
target "(g) c=4 $G4CPU CPU ms per run <= 20" "$G4CPU" "<=" 20
target "(g) paced p50 $G50 ms <= 1.2 x (a) paced p50 = $A12 ms" "$G50" "<=" \
    "$A12"
target "(g) back to back p50 $GB50 ms <= 1.4 x (a) b2b p50 = $A14 ms" \
    "$GB50" "<=" "$A14"
exit 0
