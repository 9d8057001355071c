#!/bin/bash
# Audit throughput: records per second that mcp-auditd hashes, chains,
# signs (Ed25519), commits (WAL, synchronous=FULL) and acknowledges, with
# one record in flight and with many (group commit), from one sender and
# from four; beside, in the same run and on the same disk, the two
# baselines: a plain SQLite insert committed per record with no
# cryptography at all, and the signing alone with no database.  Then how
# fast mcpctl audit verify reads it all back.
#
#	bash tests/bench/audit.sh	(as root; B=build by default)
#
# Prints a table; asserts nothing: these machines are shared and noisy.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
B=${B:-$TOP/build}
case "$B" in /*) ;; *) B=$TOP/$B ;; esac
N=${N:-20000}		# records per auditd row
NB=${NB:-2000}		# records for the slow rows
LOAD=$B/tests/auditload

if [ "$(id -u)" -ne 0 ]; then
	echo "audit.sh: run as root (auditd drops to its own uid)" >&2
	exit 1
fi
for f in "$B/mcp-auditd" "$B/mcpctl" "$LOAD"; do
	[ -x "$f" ] || { echo "audit.sh: $f missing: run make first" >&2; exit 1; }
done

# On the disk, not in memory: fsync is what group commit saves.
T=$(mktemp -d /var/tmp/mcpd-bench-audit.XXXXXX)
chmod 0755 "$T"
cleanup() {
	[ -n "${APID:-}" ] && kill "$APID" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
cat > "$T/mcpd.conf" <<EOF
user "64101"
run directory "$T/run"
state directory "$T/state"
audit {
	user "64102"
}
EOF

"$B/mcp-auditd" -d -f "$T/mcpd.conf" > "$T/auditd.log" 2>&1 &
APID=$!
for _ in $(seq 100); do
	grep -q 'ready: listening' "$T/auditd.log" && break
	sleep 0.05
done
SOCK=$T/run/auditd.sock

printf '%s\n' "# mcp-auditd throughput, $(nproc) cores, $(df -T "$T" | awk 'NR == 2 { print $2 }') at $T"
printf '%-52s %8s %9s %10s\n' "path" "records" "seconds" "records/s"
row() {	# row LABEL "sent N acked N refused N seconds S rate R"
	local label=$1 line=$2
	set -- $line
	printf '%-52s %8s %9s %10s\n' "$label" "$4" "${8}" "${10}"
	RATE=${10}
}

row "baseline: Ed25519 signing alone, no database" \
    "$("$LOAD" -S -n "$N" | tail -1)"
row "baseline: SQLite INSERT+COMMIT each, no crypto" \
    "$("$LOAD" -D "$T/plain.db" -n "$NB" | tail -1)"
NAIVE=$RATE
row "mcp-auditd, 1 in flight (commit per record)" \
    "$("$LOAD" -n "$NB" -w 1 "$SOCK" | tail -1)"
row "mcp-auditd, 16 in flight" "$("$LOAD" -n "$N" -w 16 "$SOCK" | tail -1)"
row "mcp-auditd, 64 in flight" "$("$LOAD" -n "$N" -w 64 "$SOCK" | tail -1)"
row "mcp-auditd, 256 in flight" "$("$LOAD" -n "$N" -w 256 "$SOCK" | tail -1)"
GROUP=$RATE

# Four senders at once, 16 in flight each: their records share commits.
start=$(date +%s.%N)
for i in 1 2 3 4; do
	"$LOAD" -n $((N / 4)) -w 16 "$SOCK" > "$T/par$i" &
done
wait $(jobs -p | grep -v "^$APID\$")
end=$(date +%s.%N)
acked=$(awk '/^sent/ { s += $4 } END { print s }' "$T"/par?)
secs=$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')
rate=$(awk -v n="$acked" -v s="$secs" 'BEGIN { printf "%.0f", n / s }')
printf '%-52s %8s %9.3f %10s\n' "mcp-auditd, 4 senders x 16 in flight" "$acked" "$secs" "$rate"

kill "$APID"
wait "$APID" 2>/dev/null
APID=
total=$(sqlite3 "$T/state/audit/audit.db" 'SELECT count(*) FROM records')
start=$(date +%s.%N)
"$B/mcpctl" -d "$T/state/audit/audit.db" audit verify -q \
    -c "$(grep 'audit checkpoint size=' "$T/auditd.log" | tail -1)"
vrc=$?
end=$(date +%s.%N)
secs=$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')
printf '%-52s %8s %9.3f %10s\n' "mcpctl audit verify (hash, chain, signature, tree)" \
    "$total" "$secs" "$(awk -v n="$total" -v s="$secs" 'BEGIN { printf "%.0f", n / s }')"
[ "$vrc" -eq 0 ] || echo "# verify FAILED (exit $vrc)"
echo "# group commit, 256 in flight, against one commit per record: $(awk -v g="$GROUP" -v n="$NAIVE" 'BEGIN { printf "%.1fx", g / n }') the naive insert's rate"
