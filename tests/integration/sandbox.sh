#!/bin/bash
# Sandboxed execution with real runc containers, driven through sandboxd's
# imsg protocol by tests/tools/sbx (playing mcpd): every operation, every
# limit, hostile code, persistence across a restart, reaping, audit
# hooks, and nothing left behind.  RUNTIME names the OCI runtime of
# mcpd.conf (runc, or crun: tests/integration/crun.sh); with RUNTIME_PATH
# and RUNTIME_KIND, a runtime block of that name (runsc:
# tests/integration/gvisor.sh).
. "$TOP/tests/lib.sh"
require_root
RUNTIME=${RUNTIME:-runc}
RUNTIME_KIND=${RUNTIME_KIND:-$RUNTIME}
RUNTIME_PATH=${RUNTIME_PATH:-$(command -v "$RUNTIME" || echo "$RUNTIME")}
# runsc: a kernel of its own, whose processes the host does not see.
GUEST=
[ "$RUNTIME_KIND" = runsc ] && GUEST=1
# A tenant with network egress (under runsc, gVisor's kernel makes the
# sandbox's sockets on the host's stack in a namespace slirp4netns alone
# connects).
NET_LIMITS="limits net {
	network egress
}"
NET_TENANT="tenant netter {
	token \"sha256:3333333333333333333333333333333333333333333333333333333333333333\"
	limits net
}"
if [ "$RUNTIME_KIND" != "$RUNTIME" ]; then
	RUNTIME_BLOCK="runtime $RUNTIME {
	path \"$RUNTIME_PATH\"
	kind $RUNTIME_KIND
}"
fi
# Under runsc, a second runtime block giving egress through gVisor's own
# network stack, for a tenant of its own.
if [ -n "$GUEST" ]; then
	RUNTIME_BLOCK="$RUNTIME_BLOCK
runtime netstack {
	path \"$RUNTIME_PATH\"
	kind runsc
	network sandbox
}"
	NET_TENANT="$NET_TENANT
tenant netstack {
	token \"sha256:6666666666666666666666666666666666666666666666666666666666666666\"
	limits net
	runtime netstack
}"
fi

MU=64101	# mcpd's uid
AU=64102	# auditd's
UIDBASE=268435456
T=$(mktemp -d /tmp/mcpd-sandbox.XXXXXX)
chmod 0755 "$T"
CONF=$T/mcpd.conf
RUN=$T/run
CGP=$(cg_parent "$RUN")

# A rootfs image: a static program and nothing else.
mkdir -p "$T/mini/bin"
printf '#include <stdio.h>\nint main(void) { FILE *f = fopen("/etc/passwd", "r"); char l[256];\nwhile (f && fgets(l, sizeof(l), f)) fputs(l, stdout); puts("from the mini image"); return 0; }\n' > "$T/hello.c"
cc -static -O2 -o "$T/mini/bin/hello" "$T/hello.c"

cat > "$CONF" <<EOF
user "$MU"
run directory "$RUN"
state directory "$T/state"
sandbox-init "$B/sandbox-init"
sandbox uids $UIDBASE 64
${RUNTIME_BLOCK:-}
runtime $RUNTIME
image mini rootfs "$T/mini" pool 0

limits default {
	memory 256M
	pids 64
	timeout 10s
	output 64K
	disk 32M
	idle 1h
}
$NET_LIMITS
limits brief {
	idle 2s
	lifetime 1h
}
limits mortal {
	lifetime 3s
}

tenant alice {
	token "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	max sandboxes 3
}
tenant bob {
	token "sha256:2222222222222222222222222222222222222222222222222222222222222222"
}
$NET_TENANT
tenant brief {
	token "sha256:4444444444444444444444444444444444444444444444444444444444444444"
	limits brief
}
tenant mortal {
	token "sha256:5555555555555555555555555555555555555555555555555555555555555555"
	limits mortal
}

language python {
	alias py
	file main.py
	run "python3 main.py"
}
language c {
	file main.c
	build "cc -O0 -o main main.c"
	run "./main"
}
language sh {
	file main.sh
	run "sh main.sh"
}

audit {
	user "$AU"
	required yes
}
EOF

NETNS=mcpdtest$$
HOSTIP=10.231.$(( $$ % 250 )).2

cleanup() {
	kill_daemons 1
	test_host_del "$NETNS" mcpdh$$
	remove_tmp
}
trap cleanup EXIT


# The containers of the runtime in use, sorted.
containers() {
	"$RUNTIME_PATH" --root "$RUN/runc" list --quiet 2>/dev/null | sort
}

# What sandboxes may have left: containers, processes, cgroups, other
# than those of the persistent sandboxes named and the warm pool's idle
# containers.
leftovers() {
	local keep=" $* $(echo $(pool_ids "$T/sandboxd.log")) " id pid
	for id in $(containers); do
		case "$keep" in *" $id "*) ;; *) echo "container $id" ;; esac
	done
	for pid in $(sandbox_pids); do
		id=$(cg_container "$CGP" "$pid")
		case "$keep" in *" $id "*) ;; *) echo "process $pid ($id)" ;; esac
	done
	local d
	for d in $(cg_ls "$CGP/*/"); do
		[ -d "$d" ] || continue
		case "$keep" in *" $(basename "$d") "*) continue ;; esac
		echo "cgroup $d"
	done
}

nothing_left() {
	[ -z "$(leftovers "$@")" ]
}

check_clean() {	# check_clean WHAT [persistent ids to keep]
	local what=$1
	shift
	if wait_for 10 nothing_left "$@"; then
		ok "nothing left behind by $what"
	else
		not_ok "nothing left behind by $what"
		leftovers "$@" | sed 's/^/#   /'
	fi
}

start auditd
start sandboxd
wait_sandboxd
# runc older than 1.2.8 is warned about, naming the 2025 fixes it lacks:
# Debian's package may carry some, as its changelog says.
runc_warning_checks() {
	local rv cve have= lack=
	rv=$(runc --version | sed -n 's/^runc version \([0-9.]*\).*/\1/p')
	for cve in CVE-2025-31133 CVE-2025-52565 CVE-2025-52881; do
		if [ "$(realpath "$(command -v runc)")" = /usr/sbin/runc ] &&
		    zcat /usr/share/doc/runc/changelog.Debian.gz 2>/dev/null |
		    grep -q "$cve"; then
			have="$have${have:+, }$cve"
		else
			lack="$lack${lack:+, }$cve"
		fi
	done
	if [ "$(printf '%s\n1.2.8\n' "$rv" | sort -V | head -1)" = 1.2.8 ]; then
		check "runc $rv is not warned about" \
		    eval '! log_has "$T/sandboxd.log" "older than 1.2.8"'
	elif [ -z "$lack" ]; then
		check "runc $rv is older than 1.2.8 but its package has every fix" \
		    log_has "$T/sandboxd.log" "but its package carries the fixes for $have"
	else
		check "sandboxd warns that runc $rv is older than 1.2.8, naming the fixes" \
		    log_has "$T/sandboxd.log" "lacks the 2025 fixes for mount races"
		check "the warning names the CVEs it lacks ($lack)" \
		    log_has "$T/sandboxd.log" "/proc ($lack${have:+; its package carries those for $have}); sandboxes"
	fi
}
if [ -n "$GUEST" ]; then
	rd=$(runsc_date "$RUNTIME_PATH")
	check "sandboxd runs runsc $rd" \
	    log_has "$T/sandboxd.log" "runtime $RUNTIME: runsc $rd"
	check "and warns of no runc" \
	    eval '! log_has "$T/sandboxd.log" "older than 1.2.8"'
elif [ "$RUNTIME" = crun ]; then
	cv=$(crun --version | sed -n 's/^crun version \([0-9.]*\).*/\1/p')
	check "sandboxd runs crun $cv" \
	    log_has "$T/sandboxd.log" "runtime crun: crun $cv"
	check "and warns of no runc" \
	    eval '! log_has "$T/sandboxd.log" "older than 1.2.8"'
else
	runc_warning_checks
fi

# --- RUN: one-shot sandboxes -------------------------------------------

as alice run -l python -c 'import os; print("hello", os.getuid(), os.getcwd())'
check "python runs in a one-shot sandbox ($OUT)" \
    test "$RC" = 0 -a "$OUT" = "hello 1000 /workspace"
check "the result has exit 0, wall and cpu time, peak memory ($RES)" \
    test "$(field exit)" = 0 -a "$(field wall_ms)" -gt 0 -a \
    "$(field peak)" -gt 0 -a "$(field flags)" = none
check_clean "a one-shot run"

as alice run -l py -I 'from stdin' -e GREETING=hi -f data/in.txt=filedata \
    -c 'import sys, os; print(sys.stdin.read(), os.environ["GREETING"], open("data/in.txt").read(), sys.argv[1:])' \
    -- one 'two words'
check "stdin, env, files and args reach the program ($OUT)" \
    test "$OUT" = "from stdin hi filedata ['one', 'two words']"

as alice run -l sh -c 'echo out; echo err >&2; exit 7'
check "exit codes and both streams ($OUT/$ERR/$(field exit))" \
    test "$OUT" = out -a "$ERR" = err -a "$(field exit)" = 7
as alice run -l sh -c 'kill -TERM $$'
check "a death by signal is reported ($RES)" \
    test "$(field exit)" = -1 -a "$(field signal)" = 15
as alice run -- echo from argv
check "a command line without a language ($OUT)" test "$OUT" = "from argv"
as alice run -- /nonexistent/prog
check "a missing program is an exec failure ($RES)" \
    test "$(field flags)" = exec_failed -a "$(field errno)" = 2

as alice run -l c -c '#include <stdio.h>
int main(void) { printf("compiled %d\n", 6 * 7); return 0; }'
check "C is built, then run ($OUT)" test "$OUT" = "compiled 42"
as alice run -l c -c 'int main(void) { return undeclared; }'
check "a build error is flagged as one ($RES)" \
    test "$(field flags)" = build_failed -a "$(field exit)" = 1
check "with the compiler's message" grep -q "undeclared" <<< "$ERR"

SBX -C -t alice run -l python -c 'import time
print("first", flush=True); time.sleep(1); print("second", flush=True)' \
    > "$T/o" 2> "$T/e"
c1=$(grep -m1 'sbx: chunk' "$T/e" | sed 's/.*at_ms=//')
c2=$(grep 'sbx: chunk' "$T/e" | tail -1 | sed 's/.*at_ms=//')
check "output streams as it is produced, not at the end ($c1 ms, $c2 ms)" \
    test "$(grep -c 'sbx: chunk' "$T/e")" -ge 2 -a $((c2 - c1)) -ge 800

as alice run -l python -c 'import sys
for i in range(100000): print("x" * 99)'
check "output past the cap is cut and flagged ($RES)" \
    test "$(field flags)" = truncated -a "${#OUT}" -le 65536 -a \
    "${#OUT}" -ge 60000
as alice run -i mini -- /bin/hello
check "a rootfs image registered in the config runs ($(tail -1 <<< "$OUT"))" \
    test "$(tail -1 <<< "$OUT")" = "from the mini image"
check "with the sandbox user in its /etc/passwd" \
    grep -q "^sandbox:x:1000:1000:" <<< "$OUT"
as alice run -i mini -- /bin/sh -c true
check "and nothing from the host in it ($RES)" \
    grep -q "flags=exec_failed errno=2" <<< "$RES"
as alice run -i nosuch -- /bin/true
check "an unknown image is refused ($RES)" \
    grep -q 'code=1 .*unknown image "nosuch"' <<< "$RES"
as alice run -l python -c 'print("no")' -d 1G
check "a limit above the tenant's is denied ($RES)" \
    grep -q "code=3 .*disk 1G exceeds the tenant's limit of 32M" <<< "$RES"
as alice run -l cobol -c 'x'
check "an unknown language is refused ($RES)" \
    grep -q 'code=1 .*unknown language "cobol"' <<< "$RES"
check_clean "the runs above"

# --- limits the kernel enforces ------------------------------------------

as alice run -T 1000 -l python -c "$PY_DETACHED_TREE"
check "a wall timeout ends the run ($RES)" \
    test "$(field flags)" = timed_out -a "$(field signal)" = 9 -a \
    "$(field wall_ms)" -lt 3000
check_clean "a timed-out tree with setsid and double-forked children"

as alice run -T 1000 -l python -c 'while True: pass'
check "an infinite loop is stopped at the timeout, having burnt CPU ($RES)" \
    test "$(field flags)" = timed_out -a "$(field cpu_ms)" -gt 500
check_clean "that run"

as alice run -m 64M -l python -c 'a = []
while True: a.append(bytearray(8 << 20))'
# gVisor ends the program whose stub process the OOM killer took with
# status 1, not SIGKILL.
check "the memory limit ends in a flagged OOM ($RES)" \
    test "$(field flags)" = oom -a \
    \( "$(field signal)" = 9 -o -n "$GUEST" -a "$(field exit)" != 0 \)
check "peak memory is near the limit ($(field peak))" \
    test "$(field peak)" -gt $((40 << 20))
check_clean "that run"

before=$(ps -e --no-headers | wc -l)
as alice run -T 4000 -p 32 -l sh -c 'b() { b | b & }; b'
check "a fork bomb is stopped by the pids limit and the timeout ($RES)" \
    test -n "$(field exit)"
check_clean "a fork bomb"
check "the host's process count is back where it was" \
    test "$(ps -e --no-headers | wc -l)" -lt $((before + 10))

as alice run -d 16M -l sh -c 'dd if=/dev/zero of=/workspace/big bs=1M count=64 2>&1'
check "the workspace quota gives ENOSPC inside ($(head -1 <<< "$OUT"))" \
    grep -q "No space left on device" <<< "$OUT"
check_clean "that run"
as alice run -d 16M -l sh -c 'dd if=/dev/zero of=/tmp/big bs=1M count=64 2>&1'
check "/tmp's quota gives ENOSPC inside ($(head -1 <<< "$OUT"))" \
    grep -q "No space left on device" <<< "$OUT"
check_clean "that run"
check "the host's disk is untouched" test ! -e /workspace/big

# --- network: loopback only, unless policy allows egress ----------------

test_host "$NETNS" "$HOSTIP" mcpdh$$ mcpdn$$
ip netns exec "$NETNS" /usr/bin/python3 -m http.server --bind "$HOSTIP" 8088 \
    > "$T/http.log" 2>&1 &
started http
wait_for 5 sh -c "exec 3<>/dev/tcp/$HOSTIP/8088" 2>/dev/null

FETCH="import urllib.request
print(urllib.request.urlopen('http://$HOSTIP:8088/', timeout=5).status)"
as alice run -l python -c 'import socket; print(sorted(n for i, n in socket.if_nameindex()))'
check "a sandbox has the loopback interface only ($OUT)" test "$OUT" = "['lo']"
as alice run -l python -c "$FETCH"
# gVisor's network stack says "no route" where Linux's says "unreachable".
check "no egress without policy ($(tail -1 <<< "$ERR"))" \
    grep -Eq "Network is unreachable${GUEST:+|No route to host}" <<< "$ERR"
as alice run -l python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); c = socket.create_connection(s.getsockname()); print("loopback works")'
check "loopback works inside ($OUT)" test "$OUT" = "loopback works"
as alice run -n egress -l python -c "$FETCH"
check "asking for egress beyond the tenant's policy is denied ($RES)" \
    grep -q "code=3 .*network egress is not allowed" <<< "$RES"
as netter run -l python -c "$FETCH"
check "egress works where policy allows it ($OUT$(tail -n 1 <<< "$ERR"))" \
    test "$OUT" = 200
as netter run -l python -c 'import socket
s = socket.socket(); s.settimeout(3)
print(s.connect_ex(("10.0.2.2", 22)))'
check "even with egress, the host's loopback is out of reach ($OUT)" \
    test -n "$OUT" -a "$OUT" != 0
as netter run -l python -c 'import socket; print(sorted(n for i, n in socket.if_nameindex()))'
check "with egress, a sandbox has the loopback and slirp4netns's tap0 ($OUT)" \
    test "$OUT" = "['lo', 'tap0']"
if [ -n "$GUEST" ]; then
	# runsc before August 2024 takes any network namespace for the root
	# one on Linux 6.x, where /proc/sys/net/core/rmem_default is in each.
	rdate=$("$RUNTIME_PATH" --version | grep -o '[0-9]\{8\}' | head -n 1)
	as netstack run -l python -c "$FETCH"
	if [ "${rdate:-0}" -lt 20240801 ] && [ "$(uname -r | cut -d. -f1)" -ge 6 ]; then
		check "\"network sandbox\": runsc $rdate's own network stack refuses this kernel, and runsc says so ($RES)" \
		    grep -q "runsc failed: .*cannot run with network enabled in root network namespace" <<< "$RES"
	else
		check "\"network sandbox\": egress through gVisor's own network stack ($OUT$(tail -n 1 <<< "$ERR"))" \
		    test "$OUT" = 200
	fi
fi
check_clean "networked runs"

# --- persistent sandboxes --------------------------------------------------

as alice create -N work
ID=$OUT
check "CREATE answers a 128-bit random id ($ID)" \
    grep -qE '^[0-9a-f]{32}$' <<< "$ID"
as alice create
ID2=$OUT
check "ids differ" test -n "$ID2" -a "$ID" != "$ID2"
as alice create -N work
check "names are unique within a tenant ($RES)" \
    grep -q 'a sandbox named "work" exists' <<< "$RES"
as alice create
ID3=$OUT
as alice create
check "max sandboxes is enforced ($RES)" \
    grep -q "code=3 .*at its limit of 3 sandboxes (3 made" <<< "$RES"
as alice stop -S "$ID3"
as alice list
check "LIST shows the tenant's sandboxes" \
    test "$(grep -c '^id=' <<< "$OUT")" = 2
as alice status -S "$ID"
check "STATUS shows the sandbox, running, under its runtime, with its limits ($OUT)" \
    grep -q "name=work .*runtime=$RUNTIME state=running memory_limit=268435456" <<< "$OUT"

as alice exec -S "$ID" -c 'echo $HOME; pwd; id -u; mkdir -p d/e; cd d && pwd'
check "EXEC runs a shell command line ($OUT)" \
    test "$OUT" = "/workspace
/workspace
1000
/workspace/d"
as alice exec -S "$ID" -w d -e X=42 -I input -- sh -c 'pwd; echo $X; cat'
check "EXEC with argv, cwd, env and stdin ($OUT)" \
    test "$OUT" = "/workspace/d
42
input"
as alice exec -S "$ID" -w ../etc -- pwd
check "a cwd outside the workspace is refused ($RES)" \
    grep -q "code=1 .*not a directory beneath /workspace" <<< "$RES"
as alice exec -S "$ID" -T 1000 -c 'sleep 60 & sleep 60'
check "an exec's timeout kills its whole tree ($RES)" \
    test "$(field flags)" = timed_out
no_sleep() {
	local pid
	for pid in $(sandbox_pids); do
		grep -qx sleep "/proc/$pid/comm" 2>/dev/null && return 1
	done
	return 0
}
check "the sandbox's other processes are gone with it" wait_for 5 no_sleep
if [ -n "$GUEST" ]; then
	# The host does not see them: ask the sandbox's kernel.
	as alice exec -S "$ID" -c 'ps -eo comm= | grep -c "^sleep$"'
	check "its kernel sees no sleep left either ($OUT)" test "$OUT" = 0
fi
as alice exec -S "$ID" -c 'python3 -c "a = []
while True: a.append(bytearray(8 << 20))"'
check "an OOM inside a persistent sandbox is flagged ($RES)" \
    test "$(field flags)" = oom
# Under runsc the choice must be the program's stub process, not gVisor's
# kernel, which would end the whole sandbox: sandboxd's helper chooses
# (sandboxd/guard.c), once, and lets gVisor give the memory back.  Left to
# the kernel, a second program asking for memory before that is done has
# it take gVisor's kernel next: two greedy programs at once, five times.
as alice exec -S "$ID" -c 'echo alive'
check "the sandbox lives on ($OUT)" test "$OUT" = alive
if [ -n "$GUEST" ]; then
	lived=0
	for i in 1 2 3 4 5; do
		as alice exec -S "$ID" -c 'for n in 1 2; do python3 -c "a = []
while True: a.append(bytearray(4 << 20))" & done; wait'
		flags=$(field flags)
		as alice exec -S "$ID" -c 'echo alive'
		[ "$flags" = oom ] && [ "$OUT" = alive ] && lived=$((lived + 1))
	done
	check "five more OOMs of two programs each, flagged, and the sandbox lives on ($lived)" \
	    test "$lived" = 5
	check "sandboxd's guard chose the program each time" \
	    test "$(grep -c "out of memory: killing the program" \
	    "$T/sandboxd.log")" -ge 6
	check "and never gave the choice back to the kernel" \
	    eval '! log_has "$T/sandboxd.log" "the kernel chooses"' ||
	    grep "out of memory" "$T/sandboxd.log" | sed 's/^/#   /'
fi
as alice exec -S "$ID" -c 'dd if=/dev/zero of=big bs=1M count=64 2>&1; rm -f big'
check "the persistent workspace has a real quota: ENOSPC ($(head -1 <<< "$OUT"))" \
    grep -q "No space left on device" <<< "$OUT"

# --- file operations -------------------------------------------------------

as alice write -S "$ID" -D 'hello file' -M 640 -F 1 notes/a.txt
check "WRITE with parents and a mode ($RES)" test "$RC" = 0
as alice read -S "$ID" notes/a.txt
check "READ gives it back ($OUT)" test "$OUT" = "hello file"
check "with its mode ($RES)" grep -q "mode=100640" <<< "$RES"
as alice read -S "$ID" -X 5 /workspace/notes/a.txt
check "READ with a limit is cut and flagged ($OUT/$RES)" \
    test "$OUT" = hello -a -n "$(grep truncated=1 <<< "$RES")"
as alice exec -S "$ID" -c 'cat notes/a.txt; stat -c %a notes/a.txt'
check "the file is there for the sandbox's programs too ($OUT)" \
    test "$OUT" = "hello file640"
as alice ls -S "$ID" -R ""
check "LIST_FILES, recursive ($OUT)" \
    grep -q "notes/a.txt" <<< "$OUT"
as alice rm -S "$ID" notes
check "DELETE of a non-empty directory needs recursion ($RES)" \
    grep -q "errno=39" <<< "$RES"
as alice rm -S "$ID" -R notes
as alice read -S "$ID" notes/a.txt
check "DELETE, recursive ($RES)" grep -q "errno=2 " <<< "$RES"

as alice read -S "$ID" ../etc/passwd
check "a path with .. is refused ($RES)" \
    grep -q 'code=1 .*not a path beneath /workspace' <<< "$RES"
as alice read -S "$ID" /etc/passwd
check "an absolute path outside the workspace is refused ($RES)" \
    grep -q 'code=1 .*not a path beneath /workspace' <<< "$RES"
as alice exec -S "$ID" -c 'ln -s /etc/passwd abs; ln -s .. up; ln -s ../../../../etc rel; mkfifo fifo'
as alice read -S "$ID" abs
check "an absolute symlink planted by earlier code is not followed ($RES)" \
    grep -q 'code=7 .*leads outside the workspace\|code=7 .*symbolic link' <<< "$RES"
as alice read -S "$ID" up/etc/passwd
check "a symlink to .. is not followed out ($RES)" \
    grep -q 'code=7' <<< "$RES"
as alice write -S "$ID" -D owned rel/passwd
check "a write through a symlink out of the workspace fails ($RES)" \
    grep -q 'code=7' <<< "$RES"
as alice read -S "$ID" fifo
check "a FIFO is refused at once, without hanging ($RES)" \
    grep -q 'code=7 .*errno=22' <<< "$RES"
check "host files are untouched" \
    test "$(grep -c owned /etc/passwd)" = 0

# --- a persistent sandbox whose container ends under it ----------------------
# Its next request waits while the container is cleaned up, then starts it
# again with the same workspace: neither an error nor a lost file.
as alice write -S "$ID" -D kept survivor.txt
cpid=$("$RUNTIME_PATH" --root "$RUN/runc" state "$ID" 2>/dev/null |
    sed -n 's/^ *"pid": *\([0-9]*\),*$/\1/p')
check "the container's process on the host ($cpid)" test -n "$cpid"
[ -n "$cpid" ] && kill -KILL "$cpid"
check "sandboxd sees the container end" \
    wait_log "$T/sandboxd.log" "sandbox $ID: container ended"
as alice exec -S "$ID" -c 'cat survivor.txt'
check "the next request waits and finds it back, with its workspace ($OUT$RES)" \
    test "$OUT" = kept
as alice status -S "$ID"
check "running again ($OUT)" grep -q "state=running" <<< "$OUT"

# --- hostile code -------------------------------------------------------------

as alice run -l sh -c 'cat /etc/shadow; ls /root; cat /proc/1/root/etc/shadow; ls /home'
check "host secrets are not there ($(tr '\n' ' ' <<< "$ERR"))" \
    test -z "$OUT" -a \
    "$(grep -c 'No such file\|Permission denied' <<< "$ERR")" = 4
check_clean "that run" "$ID" "$ID2"
as alice run -l sh -c 'ls /proc | grep -c "^[0-9]"'
check "only the sandbox's own processes are visible ($OUT)" \
    test "$OUT" -le 6
check_clean "that run" "$ID" "$ID2"
runc_sum=$(sha256sum /usr/sbin/runc)
sysrq=$(cat /proc/sys/kernel/sysrq 2>/dev/null)
as alice run -l sh -c 'for f in /usr/sbin/runc /proc/sys/kernel/sysrq /proc/sysrq-trigger /sys/kernel/uevent_helper /etc/passwd /usr/x; do (echo x >> $f) 2>/dev/null && echo "wrote $f"; done; echo tried'
check "writes to runc, /proc/sys, sysrq-trigger, /sys, /etc, /usr all fail ($OUT)" \
    test "$OUT" = tried
check "runc and /proc/sys are unchanged on the host" \
    test "$(sha256sum /usr/sbin/runc)" = "$runc_sum" -a \
    "$(cat /proc/sys/kernel/sysrq 2>/dev/null)" = "$sysrq"
check_clean "that run" "$ID" "$ID2"
as alice run -l python -c 'import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
os.mkdir("/tmp/m")
print("mount", libc.mount(b"none", b"/tmp/m", b"tmpfs", 0, None), ctypes.get_errno())
print("unshare", libc.unshare(0x10000000), ctypes.get_errno())
print("unshare-net", libc.unshare(0x40000000), ctypes.get_errno())
print("clone3", libc.syscall(435, 0, 0), ctypes.get_errno())
print("mseal", libc.syscall(462, 0, 0, 0), ctypes.get_errno())'
check "mount and unshare are refused with EPERM ($(tr '\n' ' ' <<< "$OUT"))" \
    test "$(head -n 3 <<< "$OUT")" = "mount -1 1
unshare -1 1
unshare-net -1 1"
# clone3, and a call newer than the profile names (mseal, 6.10), answer
# ENOSYS so that libc falls back: the prologue sandboxd's filter shares with
# runc's.
check "clone3 and newer calls answer ENOSYS ($(tail -n 2 <<< "$OUT" |
    tr '\n' ' '))" test "$(tail -n 2 <<< "$OUT")" = "clone3 -1 38
mseal -1 38"
check_clean "that run" "$ID" "$ID2"
# One filter: sandbox-init's, loaded from sandboxd's compiled program,
# and none from runc on top of it.
if [ -z "$GUEST" ]; then
as alice run -l sh -c 'grep -E "^(Seccomp|Seccomp_filters|NoNewPrivs):" \
    /proc/self/status | tr -s "\t " " "'
check "code runs under exactly one seccomp filter, no_new_privs set" \
    test "$OUT" = "NoNewPrivs: 1
Seccomp: 2
Seccomp_filters: 1"
else
# gVisor's /proc/self/status has neither line of the count nor of
# no_new_privs: prctl(2) asks its kernel.
as alice run -l python -c 'import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print(libc.prctl(39, 0, 0, 0, 0), libc.prctl(21, 0, 0, 0, 0))
print([l for l in open("/proc/self/status") if l.startswith("Seccomp:")][0].split())'
check "code runs under sandbox-init's seccomp filter, no_new_privs set ($(echo $OUT))" \
    test "$OUT" = "1 2
['Seccomp:', '2']"
fi
check_clean "that run" "$ID" "$ID2"
as alice run -l python -c 'import ctypes, socket
libc = ctypes.CDLL(None, use_errno=True)
print("ptrace", libc.ptrace(0, 0, 0, 0), ctypes.get_errno())
try:
    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    print("raw socket opened")
except PermissionError as e:
    print("raw", e.errno)'
check "ptrace and raw sockets are refused ($OUT)" \
    test "$OUT" = "ptrace -1 1
raw 1"
check_clean "hostile one-shot runs" "$ID" "$ID2"

# --- tenants: another's sandbox is an unknown sandbox ------------------------

as bob exec -S "$ID" -- true
theirs=$(sed "s/$ID/ID/" <<< "$RES")
as bob exec -S 0123456789abcdef0123456789abcdef -- true
unknown=$(sed "s/0123456789abcdef0123456789abcdef/ID/" <<< "$RES")
check "another tenant's sandbox answers exactly as an unknown one ($theirs)" \
    test "$theirs" = "$unknown" -a -n "$(grep 'code=2' <<< "$theirs")"
as bob read -S "$ID" notes
check "the same for file operations ($RES)" grep -q 'code=2 ' <<< "$RES"
as bob stop -S "$ID"
check "and for stopping it ($RES)" grep -q 'code=2 ' <<< "$RES"
as alice status -S "$ID"
check "alice's sandbox is unharmed" grep -q "state=running" <<< "$OUT"

# --- names, and the output log ------------------------------------------------

as bob create -N logbox
LB=$OUT
check "a named sandbox is created ($LB)" grep -qE '^[0-9a-f]{32}$' <<< "$LB"
as bob create -N 0123456789abcdef0123456789abcdef
check "a name that looks like an id is refused ($RES)" \
    grep -q 'code=1 .*may not look like a sandbox id' <<< "$RES"
as bob status -S logbox
check "STATUS by name ($OUT)" grep -q "^id=$LB name=logbox " <<< "$OUT"
as bob exec -S logbox -c 'echo out; sleep 0.1; echo err >&2'
check "EXEC by name ($OUT/$ERR)" test "$RC" = 0 -a "$OUT" = out -a "$ERR" = err
as bob exec -S logbox -- sh -c 'printf partial; exit 3'
check "a second EXEC by name ($OUT/$(field exit))" \
    test "$OUT" = partial -a "$(field exit)" = 3
as alice exec -S logbox -- true
theirs=$(sed "s/logbox/X/" <<< "$RES")
as alice exec -S nosuchbox -- true
unknown=$(sed "s/nosuchbox/X/" <<< "$RES")
check "another tenant's name answers exactly as an unknown one ($theirs)" \
    test "$theirs" = "$unknown" -a -n "$(grep 'code=2 .*no sandbox X' <<< "$theirs")"
as alice logs -S logbox
check "and so do its logs ($RES)" \
    test "$RC" = 2 -a -z "$OUT" -a -n "$(grep 'code=2 .*no sandbox logbox' <<< "$RES")"

as bob logs -S logbox
cp "$T/o" "$T/full"
check "LOGS shows each command, its output in order, and how it ended" \
    test "$OUT" = '$ echo out; sleep 0.1; echo err >&2
out
err
[exit 0]
$ sh -c printf partial; exit 3
partial
[exit 3]'
check "with its size, its time, and nothing dropped ($RES)" \
    test "$(field size)" = "$(wc -c < "$T/full")" -a \
    "$(field truncated)" = 0 -a "$(field mtime)" -ge $(($(date +%s) - 60))
as bob logs -S "$LB" -X 10
check "LOGS -X 10, by id, gives exactly the last 10 bytes" \
    cmp -s "$T/o" <(tail -c 10 "$T/full")
check "flagged as cut ($RES)" \
    test "$(field size)" = 10 -a "$(field truncated)" = 1
as bob run -S logbox -l sh -c 'echo via run'
as bob logs -S logbox -X 100
check "a RUN in the sandbox is logged too ($(tail -3 <<< "$OUT" | tr '\n' '|'))" \
    test "$(tail -3 <<< "$OUT")" = '$ run sh
via run
[exit 0]'
as bob exec -S logbox -T 500 -c 'echo before; sleep 5'
as bob logs -S logbox -X 100
check "a timed-out EXEC is logged as one ($(tail -2 <<< "$OUT" | tr '\n' '|'))" \
    test "$(tail -2 <<< "$OUT")" = 'before
[timed out]'
for i in 1 2 3 4 5; do
	as bob exec -S logbox -c "yes line$i | head -c 60000"
done
as bob logs -S logbox
check "a log past 256 KiB keeps only its tail, flagged ($RES)" \
    test "$(field size)" = 262144 -a "$(wc -c < "$T/o")" = 262144 -a \
    "$(field truncated)" = 1
check "the oldest output went first ($(head -c 12 "$T/o" | tr '\n' '|'))" \
    test -z "$(grep -F '$ echo out' "$T/o")" -a \
    -n "$(grep -Fx '$ yes line5 | head -c 60000' "$T/o")" -a \
    "$(tail -1 "$T/o")" = "[exit 0]"
as bob logs -S nosuchbox
check "LOGS of an unknown sandbox fails cleanly ($RES)" \
    test "$RC" = 2 -a -z "$OUT" -a \
    -n "$(grep 'code=2 .*no sandbox nosuchbox' <<< "$RES")"
as bob logs -S 0123456789abcdef0123456789abcdef
check "by id too ($RES)" grep -q 'code=2 ' <<< "$RES"
as bob stop -S logbox
check "STOP by name ($RES)" test "$RC" = 0
as bob logs -S logbox
check "the log is gone with its sandbox ($RES)" grep -q 'code=2 ' <<< "$RES"
check_clean "the named sandbox" "$ID" "$ID2"

# --- audit -------------------------------------------------------------------

DB=$T/state/audit/audit.db
q() { sqlite3 "$DB" "$1"; }
check "intents and results are recorded ($(q 'select count(*) from records'))" \
    test "$(q "select count(*) from records where event = 'run' and outcome = 'intent'")" -ge 20 -a \
    "$(q "select count(*) from records where event = 'run' and outcome = 'ok'")" -ge 20
check "records name the sender from the socket (sandboxd, uid 0; auditd's own)" \
    test "$(q "select count(*) from records where (role != 'sandboxd' or uid != 0) and role != 'auditd'")" = 0
check "a run's record holds the code's digest and an excerpt" \
    test "$(q "select count(*) from records where body like '%code.sha256=%' and body like '%code.excerpt=%'")" -ge 1
check "policy denials are recorded" \
    test "$(q "select count(*) from records where event = 'policy-denial'")" -ge 2
check "sandboxd's start is recorded with the configuration's hash" \
    test "$(q "select count(*) from records where event = 'daemon-start' and role = 'sandboxd' and body like '%config.sha256=%'")" = 1

stop auditd
wait_log "$T/sandboxd.log" "auditd: connection closed"
as alice run -l python -c 'print(1)'
check "with audit required and auditd gone, work is refused ($RES)" \
    grep -q "code=4 .*audit is required" <<< "$RES"
check "and nothing ran" test -z "$OUT"
start auditd
wait_for 15 log_has "$T/sandboxd.log" "auditd connected" 2>/dev/null
wait_for 15 sh -c "[ \$(grep -c 'connected to auditd (' '$T/sandboxd.log') -ge 2 ]"
as alice run -l python -c 'print(1)'
check "once auditd is back, work resumes ($RES)" test "$OUT" = 1

# --- persistence across a restart of sandboxd ----------------------------------

as alice write -S "$ID" -D 'kept' keep.txt
as alice exec -S "$ID" -c 'nohup sleep 600 > /dev/null 2>&1 &'

# A second sandboxd on the same run directory is refused before it
# touches anything: the first's containers and processes live on.  The
# last run's container and the pool's next one come and go first.
settled() {
	before=$(containers)
	sleep 0.5
	[ "$(containers)" = "$before" ]
}
wait_for 20 settled
out=$(timeout 60 "$B/mcp-sandboxd" -d -f "$CONF" 2>&1)
rc=$?
check "a second sandboxd refuses to start (exit $rc)" \
    eval '[ $rc -eq 1 ] && grep -q "another instance is already listening" <<< "$out"'
check "and the first's containers are all there" \
    eval '[ -n "$before" ] && [ "$(containers)" = "$before" ]'
as alice exec -S "$ID" -c 'pgrep -x sleep > /dev/null && echo alive'
check "the sandbox's background process lives on ($OUT)" test "$OUT" = alive

check "sandboxd stops cleanly" stop sandboxd
check_clean "sandboxd's shutdown"
check "no loop device is left" \
    test -z "$(losetup -a 2>/dev/null | grep "$T")"
check "the persistent disks stay" test -f "$T/state/sandboxes/$ID/disk.img"
start sandboxd
wait_log "$T/sandboxd.log" "persistent sandboxes restored" 10
as alice list
check "the sandboxes are back after a restart, idle ($OUT)" \
    test "$(grep -c "state=idle" <<< "$OUT")" = 2
as alice read -S "$ID" keep.txt
check "the workspace survived ($OUT)" test "$OUT" = kept
as alice logs -S "$ID"
check "its output log did not: it lives in memory only ($RES)" \
    test "$RC" = 0 -a -z "$OUT" -a "$(field size)" = 0 -a \
    "$(field mtime)" = 0
as alice exec -S "$ID" -c 'pgrep sleep || echo "no sleep"'
check "its processes did not, as documented ($OUT)" test "$OUT" = "no sleep"

# Killed, sandboxd leaves its helper to delete its containers; one started
# at once waits for that helper rather than race it, which would delete
# the new one's containers as well.
for round in 1 2 3; do
	as alice exec -S "$ID" -c 'echo before'
	n=$(count_in "$T/sandboxd.log" "ready: listening")
	m=$(count_in "$T/sandboxd.log" "connected to auditd")
	kill -KILL "${PID[sandboxd]}"
	reap sandboxd > /dev/null
	start sandboxd
	# Ready, and its audit connection made: an exec needs both.
	wait_for 40 count_gt "$T/sandboxd.log" "ready: listening" "$n"
	wait_for 10 count_gt "$T/sandboxd.log" "connected to auditd" "$m"
	as alice exec -S "$ID" -c 'echo after'
	check "killed and started again at once ($round): an exec runs ($RES)" \
	    test "$OUT" = after
done

# --- reaping: idle time and lifetime -------------------------------------------

as brief create
BRIEF=$OUT
check "a sandbox with a 2 s idle time is created" test -n "$BRIEF"
check "it is reaped once idle" \
    wait_for 10 sh -c "[ ! -d '$T/state/sandboxes/$BRIEF' ]"
as brief status -S "$BRIEF"
check "and is gone ($RES)" grep -q "code=2" <<< "$RES"
as mortal create
MORTAL=$OUT
as mortal exec -S "$MORTAL" -T 10000 -c 'sleep 8'
check "a sandbox past its lifetime is reaped even while busy ($RES)" \
    grep -q "code=6" <<< "$RES"
check "its disk is gone" \
    wait_for 10 sh -c "[ ! -d '$T/state/sandboxes/$MORTAL' ]"
check "reaping is recorded" \
    test "$(q "select count(*) from records where event = 'sandbox-reap'")" = 2

# --- STOP, and the end ----------------------------------------------------------

as alice stop -S "$ID2"
check "STOP answers done" test "$RC" = 0
check "the stopped sandbox's disk is gone" \
    test ! -d "$T/state/sandboxes/$ID2"
as alice exec -S "$ID" -c 'sleep 100 & echo started'
as alice stop -S "$ID"
check "STOP with running processes: grace, then kill" test "$RC" = 0
as alice list
check "no sandbox is left" test -z "$OUT"
check_clean "STOP"
check "sandboxd stops cleanly at the end" stop sandboxd
check "auditd stops cleanly" stop auditd
check "nothing at all is left: containers, processes, cgroups" nothing_left
check "no cgroup parent ($CGP) is left" \
    test -z "$(cg_ls "$CGP")"
check "no stray workspace" test -z "$(ls "$T/state/sandboxes" 2>/dev/null)"
check "no mount of ours is visible on the host" \
    test -z "$(grep "$T" /proc/self/mountinfo)"

if [ "$tap_failed" -ne 0 ]; then
	for l in sandboxd auditd; do
		diag "--- $l.log"
		diag_file "$T/$l.log" 30
	done
fi
done_testing
