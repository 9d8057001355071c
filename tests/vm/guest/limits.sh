# Sourced by tests/vm/guest/phase1.sh, with the suite running: each limit
# as the kernel holds it, in the groups systemd delegated.

section limits
sbx_as() {	# sbx_as ARGS...: as lib.sh's as, for tenant vm
	SBX -t vm "$@" > "$T/o" 2> "$T/e"
	RC=$?
	OUT=$(cat "$T/o")
	RES=$(grep '^sbx: ' "$T/e" | tail -1)
}
check "mcp-sandboxd.service has Delegate=yes" \
    test "$(prop mcp-sandboxd.service Delegate)" = yes
spid=$(prop mcp-sandboxd.service MainPID)
scg=$(prop mcp-sandboxd.service ControlGroup)
if [ "$VM_CGROUP" = v2 ]; then
	own=$(sed -n 's/^0:://p' "/proc/$spid/cgroup")
	check "mcp-sandboxd lives in a leaf of its service's group ($own)" \
	    eval '[ "${own#"$scg"/}" != "$own" ] &&
	    [ -z "$(find "/sys/fs/cgroup$own" -mindepth 1 -type d)" ]'
fi

sbx_as run -T 3000 -l python -c "$PY_DETACHED_TREE"
check "a timeout ends a tree of setsid and double-forked children ($RES)" \
    test "$(field flags)" = timed_out -a "$(field signal)" = 9
check_clean "that tree"

sbx_as run -m 64M -l python -c 'a = []
while True: a.append(bytearray(8 << 20))'
check "the memory limit ends in a flagged OOM ($RES)" \
    test "$(field flags)" = oom -a "$(field signal)" = 9
check_clean "that run"

before=$(ps -e --no-headers | wc -l)
sbx_as run -T 6000 -p 32 -l sh -c 'b() { b | b & }; b'
check "a fork bomb is held by the pids limit and ended ($RES)" \
    test -n "$(field exit)"
check_clean "a fork bomb"
check "the machine's process count is back where it was" \
    within 10 eval '[ "$(ps -e --no-headers | wc -l)" -lt $((before + 10)) ]'

sbx_as run -d 16M -l sh -c 'dd if=/dev/zero of=/workspace/big bs=1M count=64 2>&1'
check "a full workspace gives ENOSPC inside ($(head -n 1 <<< "$OUT"))" \
    grep -q "No space left on device" <<< "$OUT"
check_clean "that run"

# Half a CPU: a busy loop of 4 s of wall time gets about 2 s of it.
sbx_as run -P 0.5 -T 20000 -l python -c 'import time
end = time.time() + 4
while time.time() < end: pass'
cpu=$(field cpu_ms)
wall=$(field wall_ms)
check "the CPU quota holds a busy loop to half a CPU (cpu $cpu ms of wall $wall ms)" \
    test -n "$cpu" -a -n "$wall" -a "$((${cpu:-0} * 100))" -le "$((${wall:-1} * 65))" \
    -a "$((${cpu:-0} * 100))" -ge "$((${wall:-1} * 20))"

# A run's own limits, as the kernel holds them, read from its groups.
SBX -t vm run -m 64M -P 0.5 -p 16 -T 100000 -l sh -c 'sleep 90' \
    > /dev/null 2>&1 &
lp=$!
sleeper() {
	ps -eo uid=,pid=,comm= | awk -v b=$SANDBOX_UIDS \
	    '$1 >= b && $1 < b + 64 * 65536 && $3 == "sleep" { print $2; exit }'
}
within 60 eval '[ -n "$(sleeper)" ]'
sp=$(sleeper)
# limit_of FILE: the limit nearest the sleeper's group ("max" is none),
# and the group that sets it.
limit_of() {
	local cg
	cg=/sys/fs/cgroup$(sed -n 's/^0:://p' "/proc/$sp/cgroup")
	while [ "$cg" != /sys/fs/cgroup ]; do
		if [ -f "$cg/$1" ] && [[ "$(cat "$cg/$1")" != max* ]]; then
			echo "$(cat "$cg/$1") in ${cg#/sys/fs/cgroup}"
			return
		fi
		cg=${cg%/*}
	done
}
if [ "$VM_CGROUP" = v2 ]; then
	cgpath=$(sed -n 's/^0:://p' "/proc/$sp/cgroup" 2>/dev/null)
	check "a run's processes are in a group below mcp-sandboxd.service ($cgpath)" \
	    eval '[ -n "$sp" ] && [ "${cgpath#"$scg"/}" != "$cgpath" ]'
	v=$(limit_of memory.max)
	check "its memory limit: memory.max ($v)" test "${v%% *}" = 67108864
	v=$(limit_of memory.swap.max)
	check "and no swap: memory.swap.max ($v)" \
	    eval '[ "${v%% *}" = 0 ] || [ -z "$v" -a ! -e /sys/fs/cgroup/memory.swap.max ]'
	v=$(limit_of pids.max)
	check "its pids limit: pids.max ($v)" test "${v%% *}" = 16
	v=$(limit_of cpu.max)
	check "its CPU quota: cpu.max ($v)" test "${v% in *}" = "50000 100000"
	stray=$(sandbox_cgroups | grep -v "^/sys/fs/cgroup$scg/")
	check "every sandbox's group is below mcp-sandboxd.service, none elsewhere" \
	    test -z "$stray" || diag "$stray"
else
	v=$(sed -n 's/^[0-9]*:memory:\(.*\)/\1/p' "/proc/$sp/cgroup")
	check "(hybrid) its memory limit: memory.limit_in_bytes" test \
	    "$(cat "/sys/fs/cgroup/memory$v/memory.limit_in_bytes" 2>/dev/null)" = 67108864
fi
kill "$lp" 2> /dev/null
wait "$lp" 2> /dev/null
check_clean "the runs above"

# Reuse (mcpd.conf(5) "reuse yes") under systemd and cgroup v2: the
# tenant's next run, in the container its last one used, finds nothing
# of it; taken away by a reload, the kept containers end.
sed -i '/^tenant vm {/a\	reuse yes' "$CONF"
check "tenant vm with reuse yes: systemctl reload mcp-sandboxd" \
    systemctl reload mcp-sandboxd.service
wiped=$(status 'd["reuse"]["wiped"]')
sbx_as run -l sh -c 'echo left > /tmp/left; echo left > /workspace/left
echo left > /dev/shm/left; (sleep 300 < /dev/null > /dev/null 2>&1 &)
echo $$'
p1=$OUT
check "a run leaves files and a process, and its container is wiped and kept" \
    within 20 eval '[ "$(status "d[\"reuse\"][\"wiped\"]")" -gt "${wiped:-0}" ]'
sbx_as run -l sh -c 'ls -A /tmp /workspace /dev/shm | grep -c left
for p in /proc/[0-9]*; do tr "\0" " " < $p/cmdline; echo; done |
    grep -c "slee[p] 300"; echo $$'
read -r nfiles nprocs p2 <<< "$(echo $OUT)"
check "the next run, in the same container (pid ${p1:-?}, then ${p2:-?}), finds none of it ($nfiles files, $nprocs processes)" \
    eval '[ "${nfiles:-x}" = 0 ] && [ "${nprocs:-x}" = 0 ] && [ "${p2:-0}" -gt "${p1:-0}" ] &&
    [ "$(status "d[\"reuse\"][\"claimed\"] >= 1 and d[\"reuse\"][\"failed\"] == 0")" = True ]' ||
    diag "$OUT; $(status 'd["reuse"]')"
sed -i '/^	reuse yes$/d' "$CONF"
systemctl reload mcp-sandboxd.service
check "reuse taken away by a reload: its kept containers end" \
    within 20 eval '[ "$(status "d[\"reuse\"][\"kept\"]")" = 0 ]'
check_clean "the reused runs"
