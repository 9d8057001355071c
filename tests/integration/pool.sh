#!/bin/bash
# The warm pool with real runc containers: it fills to its size, a run
# claims a warm container and destroys it after, the pool refills; a burst
# larger than the pool falls back to cold starts with no error; limits
# other than the pool's are in force in the claimed container, or the run
# starts cold; a pool left unclaimed empties; a warm container that dies or
# cannot start is replaced without a storm; nothing is left at the end.
. "$TOP/tests/lib.sh"
require_root

MU=64101	# mcpd's uid
AU=64102	# auditd's
T=$(mktemp -d /tmp/mcpd-pool.XXXXXX)
chmod 0755 "$T"
CONF=$T/mcpd.conf
RUN=$T/run
CGP=$(cg_parent "$RUN")
LOG=$T/sandboxd.log

mkdir -p "$T/mini/bin"
printf 'int main(void) { return 0; }\n' > "$T/true.c"
cc -static -O2 -o "$T/mini/bin/true" "$T/true.c"
# An image that breaks once sandboxd has checked it.
cp -a "$T/mini" "$T/broken"

cat > "$CONF" <<EOF
user "$MU"
run directory "$RUN"
state directory "$T/state"
sandbox-init "$B/sandbox-init"
sandbox uids 268435456 64
image host host pool 2
image mini rootfs "$T/mini" pool 1 idle 5s
image broken rootfs "$T/broken" pool 1

limits default {
	memory 256M
	pids 64
	cpus 1
	timeout 10s
	disk 32M
}
limits many {
	pids 128
}
limits net {
	network egress
}
tenant alice {
	token "sha256:1111111111111111111111111111111111111111111111111111111111111111"
}
tenant bob {
	token "sha256:2222222222222222222222222222222222222222222222222222222222222222"
}
tenant many {
	token "sha256:3333333333333333333333333333333333333333333333333333333333333333"
	limits many
}
tenant netter {
	token "sha256:4444444444444444444444444444444444444444444444444444444444444444"
	limits net
}
audit {
	user "$AU"
	required yes
}
EOF

cleanup() {
	kill_daemons
	remove_tmp
}
trap cleanup EXIT


# Warm containers of an image that are up and unclaimed.
warm() {	# warm IMAGE
	local id running pool
	running=" $(echo $(runc --root "$RUN/runc" list 2>/dev/null |
	    awk '$3 == "running" { print $1 }')) "
	pool=" $(echo $(pool_ids "$LOG")) "
	for id in $(sed -n "s/.*pool $1: warm container \([0-9a-f]*\) starting$/\1/p" "$LOG"); do
		case "$pool" in *" $id "*) ;; *) continue ;; esac
		case "$running" in *" $id "*) echo "$id" ;; esac
	done
}

ready() {	# ready IMAGE: how many
	warm "$1" | wc -l
}

init_pid() {	# init_pid ID: its sandbox-init's host pid
	runc --root "$RUN/runc" state "$1" 2>/dev/null |
	    sed -n 's/.*"pid": \([0-9]*\).*/\1/p'
}

claims() {	# claims TENANT: warm containers given to its runs so far
	grep -c "warm, for a run of tenant $1 (runtime [^)]*)\$" "$LOG"
}

last_claim() {	# the container the newest claim of TENANT got
	sed -n "s/.*sandbox \([0-9a-f]*\): warm, for a run of tenant $1 (runtime [^)]*)\$/\1/p" \
	    "$LOG" | tail -1
}

gone() {	# gone ID: no container, runc state or cgroup of it is left
	! runc --root "$RUN/runc" list -q 2>/dev/null | grep -qx "$1" &&
	    [ ! -e "$RUN/runc/$1" ] &&
	    [ -z "$(cg_ls "$CGP/$1")" ]
}

start auditd
start sandboxd
check "sandboxd is ready" wait_log "$LOG" "ready: listening"
check "the host image's pool fills to its size" \
    wait_for 20 eval '[ "$(ready host)" -eq 2 ]'
check "the mini image's pool fills to its size" \
    wait_for 20 eval '[ "$(ready mini)" -eq 1 ]'
check "the warm containers belong to no tenant: none is listed" \
    eval 'as alice list; [ -z "$OUT" ]'
id=$(pool_ids "$LOG" | head -1)
as alice exec -S "$id" -- /bin/true
check "a warm container cannot be used by id ($RES)" \
    eval 'grep -q "no sandbox $id" "$T/e"'

# A run claims one, and the pool refills.
as alice run -l python -c 'print(6 * 7)'
check "a run is served by a warm container ($OUT)" \
    test "$OUT" = 42 -a "$(claims alice)" -eq 1
c1=$(last_claim alice)
check "the run's container is destroyed after it" wait_for 10 gone "$c1"
check "the pool refills to its size" \
    wait_for 20 eval '[ "$(ready host)" -eq 2 ]'

# Never two runs in one container: the second sees nothing of the first.
as alice run -l sh -c 'echo secret > /tmp/left; echo $$ > /workspace/pid'
as bob run -l sh -c 'cat /tmp/left /workspace/pid 2>&1'
c2=$(last_claim bob)
check "the next run gets a fresh container ($OUT)" \
    eval '! grep -q secret <<< "$OUT" && [ "$c2" != "$c1" ] &&
    [ "$(claims bob)" -eq 1 ]'

# A burst larger than the pool: cold starts fill in, and none fails.
wait_for 20 eval '[ "$(ready host)" -eq 2 ]'
before=$(claims alice)
for i in 1 2 3 4 5 6; do
	SBX -t alice run -l python -c "print($i * 10)" > "$T/burst$i" \
	    2> "$T/burst$i.err" &
	bp[$i]=$!
done
fails=0
for i in 1 2 3 4 5 6; do
	wait "${bp[$i]}" || fails=$((fails + 1))
	[ "$(cat "$T/burst$i")" = "$((i * 10))" ] || fails=$((fails + 1))
done
warm=$(($(claims alice) - before))
check "a burst of 6 over a pool of 2 all succeed ($fails failed)" \
    test "$fails" -eq 0
check "part of the burst ran warm, the rest cold ($warm warm)" \
    test "$warm" -ge 1 -a "$warm" -lt 6
check "the pool refills after the burst" \
    wait_for 20 eval '[ "$(ready host)" -eq 2 ]'

# Limits of its own, written to the claimed container before it runs.
before=$(claims alice)
SBX -t alice run -m 64M -P 0.5 -p 16 -l sh -c 'sleep 3' > /dev/null 2>&1 &
lp=$!
wait_for 10 eval '[ "$(claims alice)" -gt "$before" ]'
c3=$(last_claim alice)
cg=$CGP/$c3
check "a run asking for less memory is served warm" \
    test "$(claims alice)" -gt "$before"
check "its memory limit is in force in the container" \
    test "$(cg_limit $cg memory)" = 67108864
if cg_unified && [ -e /sys/fs/cgroup/$cg/memory.swap.max ]; then
	check "and it may not swap" \
	    test "$(cat /sys/fs/cgroup/$cg/memory.swap.max)" = 0
elif [ -e /sys/fs/cgroup/memory/$cg/memory.memsw.limit_in_bytes ]; then
	check "and its swap limit, equal to it" test \
	    "$(cat /sys/fs/cgroup/memory/$cg/memory.memsw.limit_in_bytes)" = 67108864
fi
check "its CPU quota is in force" test "$(cg_limit $cg cpu)" = 50000
check "its pids limit is in force" test "$(cg_limit $cg pids)" = 16
wait "$lp"

wait_for 20 eval '[ "$(ready host)" -eq 2 ]'
as alice run -m 64M -l python -c 'a = []
while True: a.append(bytearray(8 << 20))'
check "a warm container's lowered memory limit ends in an OOM ($RES)" \
    test "$(field flags)" = oom -a "$(field signal)" = 9
pool_limits_kept() {	# every warm container still has the pool's limit
	local id l
	for id in $(pool_ids "$LOG"); do
		l=$(cg_limit "$CGP/$id" memory)
		[ -z "$l" ] || [ "$l" = 268435456 ] || return 1
	done
}
check "the pool's own limit is untouched ($(ready host) ready)" \
    pool_limits_kept

wait_for 20 eval '[ "$(ready host)" -eq 2 ]'
as alice run -T 1000 -l python -c 'while True: pass'
check "a warm run is stopped at its timeout ($RES)" \
    test "$(field flags)" = timed_out -a "$(field signal)" = 9
check "and its container is destroyed" wait_for 10 gone "$(last_claim alice)"

# What a warm container cannot take: the run starts its own.
as many run -l python -c 'print(1)'
check "more pids than the pool's: a cold start ($RES)" \
    test "$OUT" = 1 -a "$(claims many)" -eq 0
n=$(claims alice)
as alice run -d 8M -l sh -c 'df -k /tmp | tail -1'
check "another disk size: a cold start with its own ($OUT)" \
    test "$(claims alice)" -eq "$n" -a "$(awk '{print $2}' <<< "$OUT")" -le 8192
n=$(claims netter)
as netter run -l sh -c 'echo net'
check "network egress: a cold start ($OUT)" \
    test "$OUT" = net -a "$(claims netter)" -eq "$n"

# A warm container killed from outside is noticed and replaced.
wait_for 20 eval '[ "$(ready host)" -eq 2 ]'
victim=$(warm host | head -1)
kill -KILL "$(init_pid "$victim")"
check "a killed warm container is let go" wait_for 10 gone "$victim"
check "and replaced" wait_for 20 eval '[ "$(ready host)" -eq 2 ]'
as alice run -l sh -c 'echo after'
check "runs go on after it ($OUT)" test "$OUT" = after

# An image whose containers can no longer start (its root is gone):
# said once, retried slowly.
check "the broken image's pool filled while it could" \
    wait_for 20 eval '[ "$(ready broken)" -eq 1 ]'
mv "$T/broken" "$T/broken.gone"
kill -KILL "$(init_pid "$(warm broken | head -1)")"
check "a pool that cannot start says why, in runc's words" \
    wait_log "$LOG" "pool broken: a warm container did not start: runc failed"
a=$(grep -c 'pool broken: warm container' "$LOG")
sleep 3
b=$(grep -c 'pool broken: warm container' "$LOG")
check "and retries no faster than once a second ($((b - a)) in 3 s)" \
    test $((b - a)) -le 4
check "and says it once ($(grep -c 'pool broken: a warm' "$LOG"))" \
    test "$(grep -c 'pool broken: a warm' "$LOG")" -eq 1

# Unclaimed for its idle time, a pool empties; a run refills it.
check "the mini pool, unclaimed for 5 s, empties" \
    wait_log "$LOG" "pool mini: emptied after 5 s unclaimed" 15
check "and has no container left" eval '[ "$(ready mini)" -eq 0 ]'
as alice run -i mini -- /bin/true
check "a run on it still works, cold ($RES)" test "$(field exit)" = 0
if ! check "and refills it" wait_for 40 eval '[ "$(ready mini)" -eq 1 ]'; then
	diag "pool lines of sandboxd's log:"
	grep -E 'pool |warm' "$LOG" | tail -n 30 | sed 's/^/#   /'
fi

# A persistent sandbox where nothing but init runs takes the same quick
# path; a timeout there kills the exec's tree and spares init, and an exec
# while others' processes run gets groups of its own, whose timeout spares
# those processes.
procs() {	# procs ID: the processes in a container, all its groups
	cg_procs "$CGP/$1"
}
sid=$(SBX -t bob create 2>/dev/null)
as bob exec -S "$sid" -T 500 -c 'sleep 30 & sleep 30'
check "a timeout in a quiet persistent sandbox ends the exec ($RES)" \
    test "$(field flags)" = timed_out
check "and kills its whole tree, init spared ($(procs "$sid") left)" \
    wait_for 5 eval '[ "$(procs "$sid")" -eq 1 ]'
as bob exec -S "$sid" -c 'sleep 300 > /dev/null 2>&1 & echo started'
check "the sandbox works on ($OUT)" test "$OUT" = started
as bob exec -S "$sid" -T 500 -c 'sleep 30'
check "an exec beside a background process times out ($RES)" \
    test "$(field flags)" = timed_out
check "and the background process lives on ($(procs "$sid") processes)" \
    eval '[ "$(procs "$sid")" -eq 2 ]'
as bob stop -S "$sid"

# A container is destroyed by killing its init through a pidfd, which
# takes its whole pid namespace along, then removing its groups and runc's
# state: no runc delete.  What a run leaves behind, daemonised or frozen,
# goes with it.
as alice run -l sh -c 'setsid sh -c "sleep 301" > /dev/null 2>&1 < /dev/null & echo bg'
c=$(last_claim alice)
check "a run leaves a daemon behind ($OUT)" test "$OUT" = bg
check "its container is destroyed all the same" wait_for 10 gone "$c"
check "without runc delete" \
    wait_log "$LOG" "sandbox $c: killed; its groups and runc state removed"
check "and the daemon is dead" \
    wait_for 5 eval '! pgrep -f "sleep 301" > /dev/null'
sid=$(SBX -t bob create 2>/dev/null)
as bob exec -S "$sid" -c 'sleep 302 > /dev/null 2>&1 & echo started'
cg_freeze "$CGP/$sid"
check "a frozen persistent sandbox" wait_for 5 cg_frozen "$CGP/$sid"
timeout 60 "$B/tests/sbx" -u $MU -g $MU -s "$RUN/sandboxd.sock" -t bob \
    stop -S "$sid" > /dev/null 2>&1
rc=$?
check "stops all the same (status $rc)" test $rc -eq 0
check "and is gone, with its processes" \
    wait_for 10 eval 'gone "$sid" && ! pgrep -f "sleep 302" > /dev/null'

# At the end the pool goes with sandboxd.
check "sandboxd stops cleanly" stop sandboxd
check "no container is left" test -z "$(runc --root "$RUN/runc" list -q)"
check "no sandbox process is left" \
    wait_for 5 eval '[ -z "$(sandbox_pids_all)" ]'
check "no cgroup is left" \
    test -z "$(cg_ls "$CGP/*")"
check "auditd stops cleanly" stop auditd
for f in "$T"/*.log; do
	check "no sanitizer report in $(basename "$f")" \
	    test -z "$(grep -E 'ERROR: AddressSanitizer|LeakSanitizer' "$f")"
done
if [ "$tap_failed" -ne 0 ]; then
	diag "--- the end of sandboxd's log"
	diag_file "$LOG" 40
fi
done_testing
