# The benchmarks' shared pieces (tests/bench/speed.sh, runtimes.sh):
# measuring with mcpbench in rounds and pooling them, the CPU the machine
# spent, resident memory, and the targets.  The caller sets T (with a
# res directory) and BENCH (mcpbench).

# measure KEY MODE mcpbench-args...: one round of a row.  Its samples go
# to $T/res/KEY.raw, its summary line to $T/res/KEY.rounds; its first
# complaints to our stderr.
measure() {
	local key=$1 mode=$2
	shift 2
	"$BENCH" "$mode" -o "$T/res/$key.raw" "$@" 2> "$T/res/$key.err" |
	    tail -n 1 >> "$T/res/$key.rounds"
	if [ -s "$T/res/$key.err" ]; then
		grep "^mcpbench:" "$T/res/$key.err" | head -n 3 |
		    sed "s/^/speed.sh: $key: /" >&2
	fi
}

# pooled KEY: the rounds of a row as one mcpbench line in $T/res/KEY:
# percentiles (nearest rank) and mean over every sample, errors and
# seconds summed, the rate over the summed seconds.
pooled() {
	local key=$1 sums
	[ -s "$T/res/$key.rounds" ] || return
	sums=$(awk '{ for (i = 1; i < NF; i += 2) t[$i] += $(i + 1) }
	    END { print t["n"] + 0, t["errors"] + 0, t["seconds"] + 0 }' \
	    "$T/res/$key.rounds")
	sort -g "$T/res/$key.raw" 2>/dev/null | awk -v s="$sums" '
	    function at(p,	r) { r = int(p / 100 * NR + 0.999999)
		return a[r < 1 ? 1 : r] }
	    { a[NR] = $1; sum += $1 }
	    END { split(s, t, " ")
		if (NR == 0) exit
		printf "n %d errors %d p50 %.2f p99 %.2f mean %.2f " \
		    "seconds %.3f rate %.2f\n", t[1], t[2], at(50), at(99),
		    sum / NR, t[3], (t[3] > 0 ? NR / t[3] : 0) }' > "$T/res/$key"
}

# field KEY NAME: a value of the "n N errors E p50 X ..." line.
field() {
	awk -v k="$2" '{ for (i = 1; i < NF; i += 2)
	    if ($i == k) print $(i + 1) }' "$T/res/$1" 2>/dev/null
}

# rss PID: its VmRSS in KiB in RSS, 0 if it is gone.  Read by the shell
# itself: the sampler runs beside the load and should not fork.
rss() {
	local k v _
	RSS=0
	while read -r k v _; do
		[ "$k" = VmRSS: ] && { RSS=$v; return; }
	done 2>/dev/null < "/proc/$1/status"
}

mib() {
	awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'
}

# busy: the machine's busy time so far, all CPUs, in USER_HZ ticks (10 ms):
# user, nice, system, irq and softirq from /proc/stat.
busy() {
	local c u n s i q _
	read -r c u n s _ _ i q _ < /proc/stat
	BUSY=$((u + n + s + i + q))
}
# cpu KEY MODE mcpbench-args...: measure, and add the CPU the whole
# machine spent meanwhile to $T/res/KEY.cpu: at concurrency the rate is
# CPU per run, and this says where it went.
cpu() {
	local b0
	busy; b0=$BUSY
	measure "$@"
	busy; echo $((BUSY - b0)) >> "$T/res/$1.cpu"
}
ratio() {	# ratio A B: A / B, as 1.23x
	awk -v a="$1" -v b="$2" 'BEGIN {
	    if (b > 0 && a != "") printf "%.2fx", a / b; else print "-" }'
}
cpums() {	# cpums KEY: the machine's CPU ms per run of that cell
	[ -s "$T/res/$1.cpu" ] && [ -s "$T/res/$1.raw" ] || return
	awk -v n="$(grep -c . "$T/res/$1.raw")" '{ t += $1 }
	    END { if (n > 0) printf "%.1f", t * 10 / n }' "$T/res/$1.cpu"
}
calc() {	# calc AWK-EXPRESSION: to two decimals, or nothing
	awk "BEGIN { printf \"%.2f\", $1 }" 2>/dev/null
}
# target DESCRIPTION MEASURED OP LIMIT: OP is <= or >=.
target() {
	local v=no-data
	if [ -n "$2" ] && [ -n "$4" ]; then
		v=$(awk -v m="$2" -v op="$3" -v l="$4" 'BEGIN {
		    ok = op == "<=" ? m + 0 <= l + 0 : m + 0 >= l + 0
		    print ok ? "met" : "NOT met" }')
	fi
	printf '%-66s %s\n' "$1" "$v"
}
