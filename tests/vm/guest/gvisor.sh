# Sourced by tests/vm/guest/phase2.sh, with the suite running: an image
# under gVisor's runsc (Debian 13's), on cgroup v2 under systemd, as an
# administrator adds it.  The unit's check starts a container under it;
# its runs and sandboxes run on gVisor's kernel; a container's group
# stays flat, gVisor's processes in it, with memory.high a margin below
# memory.max for sandboxd's OOM guard (sandboxd/guard.c), which must end
# a greedy program, not the sandbox.  The hostile attacks under runsc are
# code-gvisor.sh's, on the host: what gVisor's kernel refuses does not
# depend on the host's cgroups, and each run under emulation costs
# minutes (and, once in a CI run, a guest kernel crash in runsc's clone).

section gvisor
sbx_as() {	# sbx_as ARGS...: as tests/lib.sh's as, for tenant vm
	SBX -t vm "$@" > "$T/o" 2> "$T/e"
	RC=$?
	OUT=$(cat "$T/o")
	RES=$(grep '^sbx: ' "$T/e" | tail -1)
}
journal() { journalctl -b -u mcp-sandboxd.service -o cat; }
scg=$(prop mcp-sandboxd.service ControlGroup)

printf '\nimage gv host pool 1 runtime runsc\n' >> "$CONF"
check "an image under runsc ($(runsc --version 2>&1 | head -n 1)): sandboxd restarts with it" \
    eval 'systemctl stop mcpd.service &&
    systemctl restart mcp-sandboxd.service &&
    within 60 systemctl is-active -q mcp-sandboxd.service' ||
    journal | tail -n 15 | sed 's/^/#   /'
check "mcp-sandboxd -n, before the start, had a container start under runsc" \
    eval 'journal | grep -qE "^runtime runsc \(runsc /[^)]*\): a container started in [0-9]+ ms$"' ||
    journal | grep '^runtime ' | sed 's/^/#   /'

guest_rel=$(uname -r)
mcp run_code '{"language":"sh","image":"gv","code":"uname -r"}'
got=$(sc 's["stdout"]')
check "run_code in that image runs on gVisor's kernel: uname -r says $got, the guest's is $guest_rel" \
    eval '[[ "$got" =~ ^[0-9]+\.[0-9]+ ]] && [ "$got" != "$guest_rel" ]' ||
    diag "$(brief 300)"

# A warm container, claimed with limits of its own: 64 MiB, half a CPU.
sbx_as create -i gv -m 64M -P 0.5 -N gv
ID=$OUT
check "a sandbox of it, of 64 MiB ($RES)" grep -qE '^[0-9a-f]{32}$' <<< "$ID"
cg=$(find /sys/fs/cgroup -type d -name "$ID" 2>/dev/null | head -n 1)
check "its group is below mcp-sandboxd.service (${cg#/sys/fs/cgroup})" \
    eval '[ -n "$cg" ] && [ "${cg#"/sys/fs/cgroup$scg"/}" != "$cg" ]'
# Each process by its argv[0]: gVisor's kernel, its gofer, and the stub
# processes (no arguments) that hold its programs' memory.
procs=$(for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do
	a=$(tr '\0' '\n' < "/proc/$p/cmdline" 2>/dev/null | head -n 1)
	echo "${a:-stub}"; done | sort | uniq -c | tr -s ' \n' ' ')
check "and holds gVisor's processes itself, with no group beneath ($procs)" \
    eval '[[ "$procs" == *runsc-sandbox* && "$procs" == *runsc-gofer* ]] &&
    [ -z "$(find "$cg" -mindepth 1 -type d)" ]'
max=$(cat "$cg/memory.max" 2>/dev/null)
high=$(cat "$cg/memory.high" 2>/dev/null)
check "memory.max is its limit, memory.high 4 MiB below for the OOM guard ($max, $high)" \
    test "$max" = 67108864 -a "$high" = $((64 - 4 << 20))
check "cpu.max is its half CPU ($(cat "$cg/cpu.max" 2>/dev/null))" \
    test "$(cat "$cg/cpu.max" 2>/dev/null)" = "50000 100000"
sbx_as exec -S "$ID" -c 'echo hi > f; cat f'
check "it runs commands ($RES)" test "$OUT" = hi

sbx_as exec -S "$ID" -c 'python3 -c "a = []
while True: a.append(bytearray(8 << 20))"'
check "a program past the memory limit is ended, flagged oom ($RES)" \
    test "$(field flags)" = oom
sbx_as exec -S "$ID" -c 'for n in 1 2; do python3 -c "a = []
while True: a.append(bytearray(4 << 20))" & done; wait'
check "two at once: flagged oom ($RES)" test "$(field flags)" = oom
sbx_as exec -S "$ID" -c 'echo alive'
check "and the sandbox lives on ($OUT)" test "$OUT" = alive
# What the guard did, shown in every run: under TCG its timing varies.
journal | grep -E "sandbox $ID(: exec [0-9]+)?: (out of memory|the memory of)" |
    sed 's/^/#   /'
kills=$(journal | grep -c "sandbox $ID: out of memory: killing the program")
check "sandboxd's guard chose the programs ($kills kills)" test "$kills" -ge 2
# Once the programs are gone, gVisor's kernel may still hold their
# memory and look the biggest (under TCG, one CI run in several): then
# the guard has sandboxd end what runs through gVisor's kernel, and only
# if that frees nothing either gives the choice back, as guard.c says.
# Never before it has chosen the programs, and the sandbox must live on
# (above).
first_release=$(journal | grep "sandbox $ID: out of memory:" |
    grep -n "the kernel chooses" | head -n 1 | cut -d: -f1)
check "and gave the choice back to the kernel only after choosing them (${first_release:-never})" \
    test -z "$first_release" -o "${first_release:-0}" -gt 2 ||
    journal | grep "out of memory" | sed 's/^/#   /'
sbx_as exec -S "$ID" -T 3000 -c 'sleep 100 & sleep 100'
check "a timeout ends the command and its children ($RES)" \
    test "$(field flags)" = timed_out
sbx_as exec -S "$ID" -c 'ps -eo comm= | grep -c "^sleep$"'
check "gVisor's kernel sees no sleep left ($OUT)" test "$OUT" = 0
sbx_as stop -S "$ID"
check "the sandbox stops ($RES)" test "$RC" = 0
check "its group goes" within 30 eval '[ ! -d "$cg" ]'

sbx_as run -i gv -T 3000 -l python -c "$PY_DETACHED_TREE"
check "a one-shot run's timeout ends a tree of setsid and double-forked children ($RES)" \
    test "$(field flags)" = timed_out -a "$(field signal)" = 9
check_clean "the runs under runsc"
