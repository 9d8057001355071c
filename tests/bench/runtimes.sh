#!/bin/bash
# Isolation tiers (issue 21): the same suite under each OCI runtime this
# machine has, runc, crun and gVisor's runsc, side by side in one run.
# For each: run_code cold (a container started for the run) and warm
# (from the pool), sandbox_exec in a persistent sandbox (no container
# started or ended), runs per second and the machine's CPU ms per run at
# 1, 4 and 16 at once, and the memory an idle warm container is charged;
# then the issue's targets, met or not, and where the milliseconds go.
#
#	bash tests/bench/runtimes.sh	(as root; B=build by default)
#
# One suite per runtime, all up at once, each with its own run directory,
# uid range, port and warm pool; rows are interleaved in rounds so that a
# slow spell of this shared machine falls on every runtime alike.
# Environment: N latency samples per row (60), NC cold samples (30), NT
# runs per throughput cell (90), W warm-up runs (3), R rounds (3),
# RUNTIMES (default: runc crun runsc, those present).
#
# Prints; asserts nothing: these machines are shared and noisy.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
B=${B:-$TOP/build}
case "$B" in /*) ;; *) B=$TOP/$B ;; esac
N=${N:-60}
NC=${NC:-30}
NT=${NT:-90}
W=${W:-3}
R=${R:-3}
POOL=4
# Uid ranges of the benchmark's own, one per suite, clear of the tests'.
UIDS0=1968177152
BENCH=${BENCH:-$B/tests/mcpbench}
PY=/usr/bin/python3
. "$TOP/tests/lib.sh"
. "$TOP/tests/bench/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "runtimes.sh: run as root" >&2
	exit 1
fi
for f in "$B/mcpd" "$B/mcp-sandboxd" "$B/mcp-auditd" "$B/sandbox-init" \
    "$BENCH"; do
	if [ ! -x "$f" ]; then
		echo "runtimes.sh: $f missing: run make first" >&2
		exit 1
	fi
done

progress() {
	echo "runtimes.sh: $*" >&2
}

# The runtimes to compare, with their binaries: runsc from 2024 or later
# (scripts/runsc.sh fetches Debian 13's where this host's is older).
declare -A BIN
RTS=
for rt in ${RUNTIMES:-runc crun runsc}; do
	case $rt in
	runsc)	b=$(sh "$TOP/scripts/runsc.sh" 2>/dev/null) ;;
	*)	b=$(command -v "$rt") ;;
	esac
	if [ -z "$b" ]; then
		progress "no $rt here: left out"
		continue
	fi
	BIN[$rt]=$b
	RTS="$RTS $rt"
done
[ -n "$RTS" ] || { echo "runtimes.sh: no runtime" >&2; exit 1; }

T=$(mktemp -d /var/tmp/mcpd-bench-runtimes.XXXXXX)
chmod 0755 "$T"
mkdir "$T/res"
MEM=$T/mem
declare -A PORT DPID
TOKEN=bench-$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
COLD=cold-$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')

cleanup() {
	local k r id m
	for k in "${!DPID[@]}"; do
		kill "${DPID[$k]}" 2>/dev/null
	done
	for k in "${!DPID[@]}"; do
		wait "${DPID[$k]}" 2>/dev/null
	done
	for r in $RTS; do
		for id in $("${BIN[$r]}" --root "$MEM/$r/runc" list --quiet \
		    2>/dev/null); do
			"${BIN[$r]}" --root "$MEM/$r/runc" delete --force "$id" \
			    > /dev/null 2>&1
		done
	done
	findmnt -rn -o TARGET | grep "^$T/" | sort -r | while read -r m; do
		umount -l "$m"
	done
	if [ -n "${KEEP:-}" ]; then
		echo "runtimes.sh: kept $T" >&2
	else
		rm -rf --one-file-system "$T"
	fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM
mkdir "$MEM"
mount -t tmpfs -o size=512m,mode=0755 tmpfs "$MEM" || exit 1

# --- one suite per runtime ----------------------------------------------------

i=0
for rt in $RTS; do
	PORT[$rt]=$(free_port)
	mkdir -p "$T/$rt"
	cat > "$T/$rt/mcpd.conf" <<EOF
user "64101"
run directory "$MEM/$rt"
state directory "$T/$rt/state"
sandbox-init "$B/sandbox-init"
sandbox uids $((UIDS0 + i * 64 * 65536)) 64
runtime $rt {
	path "${BIN[$rt]}"
}
runtime $rt
listen on 127.0.0.1 port ${PORT[$rt]}
image host host pool $POOL

# A run whose limits the pool's containers do not fit starts its own.
limits cold {
	disk 31M
}
tenant bench {
	token "sha256:$(printf %s "$TOKEN" | sha256sum | cut -d' ' -f1)"
	uid root
}
tenant cold {
	token "sha256:$(printf %s "$COLD" | sha256sum | cut -d' ' -f1)"
	limits cold
}

audit {
	user "64102"
	required yes
}
EOF
	for d in auditd sandboxd mcpd; do
		bin=$d
		[ $d != mcpd ] && bin=mcp-$d
		"$B/$bin" -d -f "$T/$rt/mcpd.conf" >> "$T/$rt/$d.log" 2>&1 &
		DPID[$rt.$d]=$!
		wait_for 30 grep -qs "ready" "$T/$rt/$d.log"
	done
	if ! wait_for 30 grep -qs "connected to sandboxd" "$T/$rt/mcpd.log"
	then
		echo "runtimes.sh: the $rt suite did not start:" >&2
		tail -n 5 "$T/$rt/"*.log >&2
		exit 1
	fi
	i=$((i + 1))
done

http() {	# http RUNTIME [TOKEN]: mcpbench's words for that suite
	HTTP=(http -u "http://127.0.0.1:${PORT[$1]}/mcp" -t "${2:-$TOKEN}")
}

# Warm pools full, then the memory an idle warm container is charged
# (its memory cgroup: gVisor's kernel and gofer included under runsc).
declare -A IDLEMEM
for rt in $RTS; do
	http "$rt"
	measure "warmup.$rt" "${HTTP[@]}" -n 3 -w 1 run
done
for rt in $RTS; do
	for _ in $(seq 100); do
		[ "$("${BIN[$rt]}" --root "$MEM/$rt/runc" list --quiet \
		    2>/dev/null | grep -c .)" -ge "$POOL" ] && break
		sleep 0.1
	done
done
sleep 2
for rt in $RTS; do
	id=$("${BIN[$rt]}" --root "$MEM/$rt/runc" list --quiet 2>/dev/null |
	    head -n 1)
	IDLEMEM[$rt]=$(cat "/sys/fs/cgroup/memory/$(cg_parent \
	    "$MEM/$rt")/$id/memory.usage_in_bytes" 2>/dev/null ||
	    cat "/sys/fs/cgroup/$(cg_parent "$MEM/$rt")/$id/memory.current" \
	    2>/dev/null || echo 0)
done

# --- latency, rounds interleaved across the runtimes ----------------------------

NR=$(( (N + R - 1) / R ))
NCR=$(( (NC + R - 1) / R ))
for r in $(seq "$R"); do
	for rt in $RTS; do
		progress "latency, round $r of $R: $rt"
		http "$rt"
		measure "warm.$rt" "${HTTP[@]}" -n "$NR" -w "$W" -g 100 run
		measure "exec.$rt" "${HTTP[@]}" -n "$NR" -w "$W" exec
		http "$rt" "$COLD"
		measure "cold.$rt" "${HTTP[@]}" -n "$NCR" -w 1 -g 100 run
	done
done

# --- throughput and CPU per run ----------------------------------------------------

RT=${RT:-3}
NTR=$(( (NT + RT - 1) / RT ))
for c in 1 4 16; do
	for r in $(seq "$RT"); do
		for rt in $RTS; do
			progress "throughput at $c, round $r of $RT: $rt"
			http "$rt"
			cpu "thr.$rt.c$c" "${HTTP[@]}" -n "$NTR" -c "$c" -w 1 run
		done
	done
done

# --- the table -------------------------------------------------------------------------

for rt in $RTS; do
	for k in warm exec cold thr.$rt.c1 thr.$rt.c4 thr.$rt.c16; do
		case $k in thr.*) pooled "$k" ;; *) pooled "$k.$rt" ;; esac
	done
done
cols() {	# cols LABEL VALUE-COMMAND: a row, a column per runtime
	local label=$1 rt
	shift
	printf '%-44s' "$label"
	for rt in $RTS; do
		printf ' %10s' "$("$@" "$rt")"
	done
	printf '\n'
}
warm_p50() { field "warm.$1" p50; }
warm_p99() { field "warm.$1" p99; }
exec_p50() { field "exec.$1" p50; }
exec_p99() { field "exec.$1" p99; }
cold_p50() { field "cold.$1" p50; }
cold_p99() { field "cold.$1" p99; }
rate1() { field "thr.$1.c1" rate; }
rate4() { field "thr.$1.c4" rate; }
rate16() { field "thr.$1.c16" rate; }
cpu1() { cpums "thr.$1.c1"; }
cpu4() { cpums "thr.$1.c4"; }
cpu16() { cpums "thr.$1.c16"; }
idle() { mib $(( ${IDLEMEM[$1]:-0} / 1024 )); }
errs() {
	cat "$T/res/warm.$1" "$T/res/exec.$1" "$T/res/cold.$1" \
	    "$T/res/thr.$1.c1" "$T/res/thr.$1.c4" "$T/res/thr.$1.c16" \
	    2>/dev/null | awk '{ e += $4 } END { print e + 0 }'
}
version() {
	case $1 in
	runc|crun) "${BIN[$1]}" --version | awk 'NR == 1 { print $3 }' ;;
	runsc) runsc_date "${BIN[$1]}" ;;
	esac
}

echo "# mcpd isolation tiers: $(nproc) cores, kernel $(uname -r)," \
    "/sys/fs/cgroup is $(stat -fc %T /sys/fs/cgroup), python3 print(1);" \
    "all suites up at once, rows interleaved in $R rounds"
cols "" echo
cols "version" version
echo "# latency, ms (HTTP, one request at a time)"
cols "run_code cold (a container per run) p50" cold_p50
cols "run_code cold p99" cold_p99
cols "run_code warm (from the pool) p50" warm_p50
cols "run_code warm p99" warm_p99
cols "sandbox_exec, persistent sandbox p50" exec_p50
cols "sandbox_exec p99" exec_p99
echo "# throughput, runs/s of run_code, about $NT runs per cell"
cols "c=1" rate1
cols "c=4" rate4
cols "c=16" rate16
echo "# CPU ms per run, the whole machine's (/proc/stat)"
cols "c=1" cpu1
cols "c=4" cpu4
cols "c=16" cpu16
echo "# memory"
cols "idle warm container, cgroup charge, MiB" idle
cols "failed runs" errs

# --- the targets -------------------------------------------------------------------------

echo "# targets (issue 21)"
RW=$(field warm.runc p50)
SW=$(field warm.runsc p50)
RC4=$(cpums thr.runc.c4)
CC4=$(cpums thr.crun.c4)
if [ -n "$SW" ]; then
	target "runsc warm p50 $SW ms <= 1.3 x runc's $RW ms = $(calc "1.3 * ${RW:-0}") ms" \
	    "$SW" "<=" "$(calc "1.3 * ${RW:-0}")"
else
	target "runsc warm p50 <= 1.3 x runc's: no runsc" "" "<=" ""
fi
if [ -n "$CC4" ]; then
	target "crun CPU ms per run at c=4 $CC4 <= 0.6 x runc's $RC4 = $(calc "0.6 * ${RC4:-0}")" \
	    "$CC4" "<=" "$(calc "0.6 * ${RC4:-0}")"
else
	target "crun CPU per run at c=4 <= 0.6 x runc's: no crun" "" "<=" ""
fi
exit 0
