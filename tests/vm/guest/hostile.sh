# Sourced by tests/vm/guest/phase1.sh, with the suite running: hostile
# code against the installed suite, in the groups systemd delegated.
# tests/security/attack.c, built for the guest with the tree (the guest
# would take minutes to compile it), is installed as a file of the
# guest's /usr, which the "host" image shows every sandbox; each attack
# runs in one persistent sandbox, all in one sandbox_exec, and prints
# "RESULT <errno name>" (tests/security/code.sh runs the whole set on the
# host).

section hostile
ATTACK=/usr/local/libexec/mcpd-vmtest/attack
REFUSED="EPERM EACCES ENOSYS EAFNOSUPPORT EINVAL"
READONLY="EROFS EACCES EPERM ENOENT"
spid=$(prop mcp-sandboxd.service MainPID)
# DESCRIPTION|attack's arguments|the safe outcomes
cat > "$T/attacks" <<EOF
a raw IPv4 socket|raw|$REFUSED
a raw IPv6 socket|raw6|$REFUSED
an AF_PACKET socket|packet|$REFUSED
an AF_ALG socket|alg|$REFUSED
an AF_VSOCK socket|vsock|$REFUSED
ptrace attach to a sibling|ptrace|$REFUSED
process_vm_writev|vm_writev|$REFUSED
keyctl|keyctl|$REFUSED
mount|mount|$REFUSED
unshare of a user namespace|unshare_user|$REFUSED
setns into PID 1's mount namespace|setns|$REFUSED
clone with new namespaces|clone_ns|$REFUSED
finit_module|finit_module|$REFUSED
bpf|bpf|$REFUSED
perf_event_open|perf|$REFUSED
userfaultfd|userfaultfd|$REFUSED
io_uring_setup|io_uring|$REFUSED
clock_settime|clock_settime|$REFUSED
mknod of a block device|mknod_block vda|$REFUSED
egress to a public address|connect4 1.1.1.1|ENETUNREACH
the guest's MCP endpoint on its loopback|connect4 127.0.0.1 8080|ECONNREFUSED
SIGKILL to mcp-sandboxd (pid $spid)|kill_pid $spid|ESRCH
opening the guest's disk|open_rw /dev/vda|ENOENT EACCES
overwriting sandbox-init through /proc/1/exe|overwrite /proc/1/exe|EACCES ETXTBSY EROFS EPERM
writing the guest's libc|write /usr/lib/x86_64-linux-gnu/libc.so.6 x|EROFS EACCES ETXTBSY
a write to /proc/sys/kernel/core_pattern|write /proc/sys/kernel/core_pattern core|$READONLY
a write to /proc/sysrq-trigger|write /proc/sysrq-trigger h|$READONLY
EOF
# Out of its group: the controls of the group it sees as its root, and a
# group of its own.
for f in cgroup.procs cgroup.subtree_control memory.max pids.max cpu.max \
    cgroup.freeze memory/memory.limit_in_bytes pids/pids.max; do
	echo "a write to /sys/fs/cgroup/$f|write /sys/fs/cgroup/$f max|$READONLY"
done >> "$T/attacks"

mcp sandbox_create '{"name":"lab"}'
check "a persistent sandbox for the attacks ($(sc 's.get("id")'))" \
    grep -qE '^[0-9a-f]{32}$' <<< "$(sc 's.get("id")')"
n=0
script=
while IFS='|' read -r desc args safe; do
	n=$((n + 1))
	script="$script echo '@@ $n'; $ATTACK $args;"
done < "$T/attacks"
script="$script echo '@@ abi'; $ATTACK int80; echo status=\$?;"
script="$script echo '@@ mkdir'; mkdir /sys/fs/cgroup/escape 2>&1; echo status=\$?;"
script="$script echo '@@ cgroup'; cat /proc/self/cgroup;"
MCP_TIMEOUT=600 mcp sandbox_exec "$(python3 -c 'import json, sys
print(json.dumps({"sandbox": "lab", "command": sys.argv[1],
    "timeout": 120}))' "$script")"
cp "$T/r.json" "$L/attacks.json"
sc 's["results"][0]["stdout"]' > "$T/attacked"
# The last RESULT word after each marker.
result_of() {	# result_of N
	awk -v m="@@ $1" '$0 == m { on = 1; next } /^@@ / { on = 0 }
	    on && /^RESULT / { r = substr($0, 8) } END { print r }' \
	    "$T/attacked"
}
section_of() {	# section_of NAME: the lines after the marker
	awk -v m="@@ $1" '$0 == m { on = 1; next } /^@@ / { on = 0 } on' \
	    "$T/attacked"
}
n=0
while IFS='|' read -r desc args safe; do
	n=$((n + 1))
	got=$(result_of "$n")
	check "$desc is refused: ${got:-no result}" \
	    eval 'case " $safe " in *" ${got:-none} "*) true ;; *) false ;; esac'
done < "$T/attacks"
got=$(section_of abi | tr '\n' ' ')
check "a system call through the int80 ABI is killed by SIGSYS: $got" \
    eval '[[ "$got" != *SUCCEEDED* && "$got" == *status=159* ]]'
got=$(section_of mkdir | tr '\n' ' ')
check "a group of its own cannot be made: $got" \
    eval '[[ "$got" != *status=0* ]]'
got=$(section_of cgroup | tr '\n' ' ')
check "its cgroup namespace hides where its group is: $got" \
    eval '[ -n "$got" ] && [[ "$got" != *.slice* && "$got" != *mcp-sandboxd* ]]'
mcp sandbox_stop '{"sandbox":"lab"}'
check_clean "the attacks"
