#!/bin/bash
# The daemons locked down to what each needs, checked on the running
# processes: identities, capability sets (bounding included), one seccomp
# filter each, Landlock, and what each filter does to the system calls an
# intruder would want, asked of the kernel by tests/tools/scprobe (which
# loads the daemon's own filter into a child and makes the call).  Also:
# sandboxd's helper, which starts runc, carries no filter of sandboxd's;
# and the systemd units' exposure as systemd-analyze scores it.
. "$TOP/tests/lib.sh"
require_root

MU=64101	# mcpd's uid
AU=64102	# auditd's
T=$(mktemp -d /tmp/mcpd-lockdown.XXXXXX)
chmod 0755 "$T"
CONF=$T/mcpd.conf
RUN=$T/run
PROBE=$B/tests/scprobe
PORT=$(free_port)

cat > "$CONF" <<EOF
user "$MU"
run directory "$RUN"
state directory "$T/state"
sandbox-init "$B/sandbox-init"
listen on 127.0.0.1 port $PORT
image host host pool 0
tenant local {
	uid root
}
audit {
	user "$AU"
}
EOF

cleanup() {
	[ -n "${STDIO:-}" ] && kill "$STDIO" 2>/dev/null
	exec 9>&- 2>/dev/null
	kill_daemons
	remove_tmp
}
trap cleanup EXIT

# --- the units, as systemd-analyze scores them ------------------------------
# Rendered as installed, but naming the binaries built here, which verify
# wants to find.
mkdir -p "$T/units"
for u in mcpd mcp-auditd mcp-sandboxd; do
	sed "s|@SBINDIR@|$B|g" "$TOP/systemd/$u.service" > "$T/units/$u.service"
done
cp "$TOP/systemd/mcpd.socket" "$T/units/"
# systemd-analyze verify only warns on a bad line: any output is a fault.
out=$(cd "$T/units" && systemd-analyze verify --man=no ./mcpd.service \
    ./mcp-auditd.service ./mcp-sandboxd.service ./mcpd.socket 2>&1)
check "systemd-analyze verify accepts the units, every line of them" \
    test -z "$out"
[ -n "$out" ] && diag "$out"
exposure() {	# exposure UNIT: the overall score, e.g. 1.4
	(cd "$T/units" && systemd-analyze security --offline=true "$1.service" 2>&1) |
	    sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p'
}
for u in mcpd mcp-auditd; do
	e=$(exposure $u)
	check "systemd-analyze security scores $u.service at most 2.0 ($e)" \
	    awk -v e="$e" 'BEGIN { exit !(e != "" && e <= 2.0) }'
done
diag "mcp-sandboxd.service (root, runs runc): $(exposure mcp-sandboxd)"

# Two faults of the units that only a real systemd showed (tests/vm):
# hardening that breaks what the daemon must do.  The kernel's rule
# first: a user namespace may mount a proc of its own (runc does, for
# every container) only where a proc is fully visible, nothing mounted
# over a file of it, which ProtectKernelLogs= and its kin do (systemd
# 257's ProtectHostname= covers /proc/sys/kernel/hostname).
unshare -m --propagation private sh -c \
    'unshare -Urmpf --mount-proc true || exit 2
    mount --bind /dev/null /proc/kmsg || exit 3
    unshare -Urmpf --mount-proc true && exit 4
    exit 0' 2> /dev/null
rc=$?
what="this kernel refuses a container its proc once a file of /proc is covered"
case $rc in
0)	ok "$what" ;;
2)	ok "$what # SKIP no user namespace with a proc of its own here" ;;
3)	ok "$what # SKIP /proc/kmsg cannot be covered here" ;;
4)	ok "$what # SKIP this kernel mounts one even so" ;;
*)	not_ok "$what (exit $rc)" ;;
esac
d=$(grep -E '^(ProtectKernelLogs|ProtectKernelTunables|ProtectHostname|ProtectProc|ProcSubset)=' \
    "$TOP/systemd/mcp-sandboxd.service")
check "mcp-sandboxd.service covers nothing in /proc, or runc could start no container${d:+: $d}" \
    test -z "$d"
# The daemons that become their own user keep no CAP_KILL: systemd must
# send the reload's signal with full privileges.
for u in mcpd mcp-auditd; do
	check "$u.service sends ExecReload's SIGHUP with full privileges (+), as root without CAP_KILL cannot" \
	    grep -qx 'ExecReload=+/bin/kill -HUP $MAINPID' "$TOP/systemd/$u.service"
done

# --- the running daemons ---------------------------------------------------
start auditd
start sandboxd
start mcpd
check "auditd is ready" wait_log "$T/auditd.log" "ready: listening"
check "sandboxd is ready" wait_log "$T/sandboxd.log" "ready: listening"
check "mcpd is ready" wait_log "$T/mcpd.log" "ready:"
# mcpd --stdio, run by root, held open on a FIFO.
mkfifo "$T/in"
"$B/mcpd" --stdio -v -f "$CONF" < "$T/in" > /dev/null 2> "$T/stdio.log" &
STDIO=$!
exec 9> "$T/in"
check "mcpd --stdio is up" wait_log "$T/stdio.log" "serving MCP on stdin"
sleep 0.5

m=${PID[mcpd]} a=${PID[auditd]} s=${PID[sandboxd]}
CAP_KILL=0000000000000020

for name in mcpd auditd sandboxd stdio; do
	case $name in
	mcpd) p=$m ;; auditd) p=$a ;; sandboxd) p=$s ;; stdio) p=$STDIO ;;
	esac
	check "$name: no_new_privs, and exactly one seccomp filter" \
	    test "$(status_field "$p" NoNewPrivs)" = 1 -a \
	    "$(status_field "$p" Seccomp)" = 2 -a \
	    "$(status_field "$p" Seccomp_filters)" = 1
	case $name in
	sandboxd) want=$CAP_KILL ;; *) want=0000000000000000 ;;
	esac
	for f in CapPrm CapEff CapBnd; do
		check "$name: $f is $want" test "$(status_field "$p" $f)" = "$want"
	done
	check "$name: no inheritable or ambient capabilities" \
	    test "$(status_field "$p" CapInh)" = 0000000000000000 -a \
	    "$(status_field "$p" CapAmb)" = 0000000000000000
	log=$T/$name.log
	check "$name applied Landlock rules" wait_log "$log" "Landlock ABI "
done
check "sandboxd keeps root's uid, joined to the sockets' group" \
    test "$(status_field "$s" Uid)" = "0 0 0 0" -a \
    -n "$(status_field "$s" Groups | tr ' ' '\n' | grep -x "$MU")"
check "mcpd --stdio keeps its user's uid, joined to the sockets' group" \
    test "$(status_field "$STDIO" Uid)" = "0 0 0 0" -a \
    -n "$(status_field "$STDIO" Groups | tr ' ' '\n' | grep -x "$MU")"
check "mcpd --stdio run by root reaches auditd" \
    wait_log "$T/stdio.log" "connected to auditd"

# --- what each filter does, asked of the kernel -------------------------------
FORBIDDEN="execve fork ptrace process_vm_readv mount umount2 unshare setns
chroot pivot_root bpf perf_event_open kexec_load init_module finit_module
keyctl add_key userfaultfd io_uring_setup setuid setgid capset
clock_settime settimeofday reboot swapon syslog personality mknodat
socket_inet socket_packet socket_netlink int80"
# Sanitizer builds alone admit what LeakSanitizer needs at exit (see
# common/priv.c): a ptrace'd helper thread.
if ldd "$B/mcpd" | grep -q libasan; then
	FORBIDDEN=$(echo $FORBIDDEN | tr ' ' '\n' | grep -vx 'fork\|ptrace')
	diag "a sanitizer build: fork and ptrace are the sanitizer's to use"
fi
for name in mcpd auditd sandboxd stdio; do
	case $name in
	mcpd) p=$m ;; auditd) p=$a ;; sandboxd) p=$s ;; stdio) p=$STDIO ;;
	esac
	"$PROBE" "$p" all > "$T/probe.$name" 2>&1
	check "$name: the probe read its filter and knows allowed from killed" \
	    grep -qx "getpid allowed" "$T/probe.$name"
	for c in $FORBIDDEN; do
		check "$name: $c is killed by its filter" \
		    grep -qx "$c killed" "$T/probe.$name"
	done
	check "$name: a unix socket, to reach the other daemons, is allowed" \
	    grep -q "^socket_unix allowed" "$T/probe.$name"
done

# --- sandboxd's helper: forked before the filter, so runc has none -----------
h=$(pgrep -P "$s" | head -1)
check "sandboxd has a helper process ($h)" test -n "$h"
check "the helper carries no seccomp filter, so runc inherits none" \
    test "$(status_field "$h" Seccomp)" = 0 -a \
    "$(status_field "$h" NoNewPrivs)" = 0
check "the helper keeps the capabilities runc needs" \
    test "$(status_field "$h" CapEff)" != 0000000000000000

exec 9>&-
check "mcpd --stdio ends at EOF" wait_for 5 bash -c "! kill -0 $STDIO 2>/dev/null"
STDIO=
check "mcpd stops cleanly" stop mcpd
suite_end
done_testing
