#!/bin/bash
# Container reuse ("reuse yes", sandboxd/reuse.c), attacked.  A run of a
# tenant that reuses containers leaves everything it can behind: a
# double-forked daemon holding an abstract unix socket, an inotify watch
# and a timer that would write a file, a stopped process, a process that
# keeps forking, a file in every directory it can write, SysV shared
# memory, a message queue and a semaphore set, and tries for a POSIX
# message queue and a kernel key (which its limits and filter refuse).  The same tenant's next run, in the same
# container (its pid namespace goes on), finds none of it.  Another
# tenant never gets that container; a tenant without "reuse" gets a new
# container every run; a run that times out is not reused; a reload that
# takes "reuse" away ends the kept containers; one left unclaimed goes
# at its image's idle time.  The audit log says which runs were reused,
# and verifies.
. "$TOP/tests/lib.sh"
require_root

MU=64101	# mcpd's uid
AU=64102	# auditd's
T=$(mktemp -d /tmp/mcpd-reuse.XXXXXX)
chmod 0755 "$T"
CONF=$T/mcpd.conf
RUN=$T/run
CGP=$(cg_parent "$RUN")
LOG=$T/sandboxd.log

conf() {	# conf REUSE [SLOTS]: alice's reuse, the uid slots (64)
	cat <<EOF
user "$MU"
run directory "$RUN"
state directory "$T/state"
sandbox-init "$B/sandbox-init"
sandbox uids 268435456 ${2:-64}
image host host pool 1 idle 8s

limits default {
	memory 256M
	pids 64
	cpus 1
	timeout 10s
	disk 32M
}
tenant alice {
	token "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	reuse $1
}
tenant bob {
	token "sha256:2222222222222222222222222222222222222222222222222222222222222222"
	reuse yes
}
tenant carol {
	token "sha256:3333333333333333333333333333333333333333333333333333333333333333"
}
audit {
	user "$AU"
	required yes
}
EOF
}
conf yes > "$CONF"

cleanup() {
	kill_daemons
	remove_tmp
}
trap cleanup EXIT

# The containers kept for a tenant, and the one a tenant's last run had.
kept() {	# kept TENANT: ids wiped and kept for it so far
	sed -n "s/.*sandbox \([0-9a-f]*\): wiped in [0-9]* us, kept for tenant $1\$/\1/p" \
	    "$LOG" | sort -u
}
kept_last() {	# kept_last TENANT: the newest wiped for it
	sed -n "s/.*sandbox \([0-9a-f]*\): wiped in [0-9]* us, kept for tenant $1\$/\1/p" \
	    "$LOG" | tail -n 1
}
reuses() {	# reuses TENANT: runs of it served by a kept container
	grep -c "reused (run [0-9]*), for a run of tenant $1 " "$LOG"
}
last_reuse() {	# the container of TENANT's newest reused run
	sed -n "s/.*sandbox \([0-9a-f]*\): reused (run [0-9]*), for a run of tenant $1 .*/\1/p" \
	    "$LOG" | tail -1
}
alive() {	# alive ID: its container is running
	runc --root "$RUN/runc" list 2>/dev/null |
	    awk -v id="$1" '$1 == id && $3 == "running" { f = 1 } END { exit !f }'
}

# Everything a run can leave, in Python with ctypes.
cat > "$T/leave.py" <<'EOF'
import ctypes, os, platform, signal, socket, sys, time
libc = ctypes.CDLL(None, use_errno=True)
print("pid", os.getpid())

# A file in every directory this user can write.
marked = []
for root, dirs, files in os.walk("/"):
    dirs[:] = [d for d in dirs if os.path.join(root, d) not in ("/proc", "/sys")]
    if os.access(root, os.W_OK):
        try:
            with open(os.path.join(root, ".mcpd-left"), "w") as f:
                f.write("left")
            marked.append(root)
        except OSError:
            pass
print("marked", " ".join(sorted(marked)))
with open("/tmp/big", "wb") as f:
    f.write(b"x" * (8 << 20))

IPC_CREAT = 0o1000
print("shm", libc.shmget(0x6D637064, 4096, IPC_CREAT | 0o600))
print("msg", libc.msgget(0x6D637065, IPC_CREAT | 0o600))
print("sem", libc.semget(0x6D637066, 1, IPC_CREAT | 0o600))
mq = libc.mq_open(b"/mcpd-left", os.O_CREAT | os.O_RDWR, 0o600, None)
print("mq", mq, "" if mq >= 0 else os.strerror(ctypes.get_errno()))
nr = {"x86_64": 248, "aarch64": 217}.get(platform.machine())
if nr is not None:
    r = libc.syscall(nr, b"user", b"mcpd-left", b"x", 1, -4)
    print("key", r, ctypes.get_errno())

def detach():
    if os.fork() != 0:
        return False
    os.setsid()
    if os.fork() != 0:
        os._exit(0)
    fd = os.open("/dev/null", os.O_RDWR)
    for i in (0, 1, 2):
        os.dup2(fd, i)
    return True

if detach():
    # The daemon: a socket, a watch, timers, deaf to SIGTERM.
    s = socket.socket(socket.AF_UNIX)
    s.bind("\0mcpd-left")
    s.listen()
    ifd = libc.inotify_init1(0)
    libc.inotify_add_watch(ifd, b"/workspace", 0xFFF)
    tfd = libc.timerfd_create(1, 0)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    def fire(*a):
        with open("/workspace/timer-fired", "w") as f:
            f.write("fired")
    signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, 3)
    while True:
        time.sleep(0.1)
os.wait()
if detach():
    # One that keeps forking.
    while True:
        try:
            if os.fork() == 0:
                time.sleep(300)
                os._exit(0)
        except OSError:
            pass
        time.sleep(0.05)
os.wait()
pid = os.fork()
if pid == 0:
    os.setsid()
    fd = os.open("/dev/null", os.O_RDWR)
    for i in (0, 1, 2):
        os.dup2(fd, i)
    time.sleep(300)
    os._exit(0)
os.kill(pid, signal.SIGSTOP)
time.sleep(0.5)
print("left")
EOF

# What the next run looks for.
cat > "$T/find.py" <<'EOF'
import ctypes, os, platform, socket, time
libc = ctypes.CDLL(None, use_errno=True)
found = []
me = os.getpid()
print("pid", me)
ours = set()
p = me
while p > 1:
    ours.add(p)
    with open("/proc/%d/stat" % p) as f:
        p = int(f.read().rsplit(")", 1)[1].split()[1])
for d in os.listdir("/proc"):
    if d.isdigit() and int(d) != 1 and int(d) not in ours:
        try:
            cmd = open("/proc/%s/cmdline" % d, "rb").read()
        except OSError:
            continue
        found.append("process:%s:%s" % (d, cmd.replace(b"\0", b" ")[:40]))
for root, dirs, files in os.walk("/"):
    dirs[:] = [d for d in dirs if os.path.join(root, d) not in ("/proc", "/sys")]
    if ".mcpd-left" in files:
        found.append("file:" + root)
for kind in ("shm", "msg", "sem"):
    rows = open("/proc/sysvipc/" + kind).read().splitlines()[1:]
    if rows:
        found.append("sysv-%s:%d" % (kind, len(rows)))
if os.listdir("/dev/mqueue"):
    found.append("mqueue:" + ",".join(os.listdir("/dev/mqueue")))
s = socket.socket(socket.AF_UNIX)
try:
    s.connect("\0mcpd-left")
    found.append("abstract-socket")
except OSError:
    pass
if "@mcpd-left" in open("/proc/net/unix").read():
    found.append("abstract-socket-listed")
nr = {"x86_64": 250, "aarch64": 219}.get(platform.machine())
if nr is not None:
    # keyctl(KEYCTL_SEARCH, user keyring, "user", "mcpd-left", 0)
    r = libc.syscall(nr, 10, -4, b"user", b"mcpd-left", 0)
    if r >= 0:
        found.append("key:%d" % r)
st = os.statvfs("/tmp")
if st.f_blocks != st.f_bfree:
    found.append("tmp-used:%d" % (st.f_blocks - st.f_bfree))
time.sleep(4)
if os.path.exists("/workspace/timer-fired"):
    found.append("timer-fired")
print("found", " ".join(found) if found else "nothing")
EOF

start auditd
start sandboxd
check "sandboxd is ready" wait_log "$LOG" "ready: listening"

# --- one tenant's runs, one after the other ----------------------------------
as alice run -l python -c "$(cat "$T/leave.py")"
LEFT=$OUT
check "alice's first run leaves its things behind ($(field exit))" \
    eval '[ "$RC" = 0 ] && grep -qx left <<< "$LEFT"' || diag "$OUT$ERR"
marked=$(sed -n 's/^marked //p' <<< "$LEFT")
check "it wrote a file in every directory it could: /tmp, /workspace, /dev/shm ($marked)" \
    eval 'for d in /tmp /workspace /dev/shm; do
	grep -qw -- "$d" <<< "$marked" || exit 1; done'
check "it made a SysV segment, message queue and semaphore set" \
    eval '[ "$(grep -cE "^(shm|msg|sem) [0-9]+$" <<< "$LEFT")" = 3 ]' ||
    diag "$LEFT"
check "a POSIX message queue it could not make: RLIMIT_MSGQUEUE is 0 ($(grep '^mq ' <<< "$LEFT"))" \
    grep -qx 'mq -1 Too many open files' <<< "$LEFT"

if grep -q '^key ' <<< "$LEFT"; then
	check "a kernel key it could not make: the filter refuses add_key ($(grep '^key ' <<< "$LEFT"))" \
	    grep -qE '^key -1 (1|38)$' <<< "$LEFT"
fi
check "its container is kept for alice" wait_for 10 eval '[ -n "$(kept alice)" ]'
first=$(kept alice)
pid1=$(sed -n 's/^pid //p' <<< "$LEFT")

as alice run -l python -c "$(cat "$T/find.py")"
FOUND=$(sed -n 's/^found //p' <<< "$OUT")
pid2=$(sed -n 's/^pid //p' <<< "$OUT")
check "her next run is served by that container ($(last_reuse alice))" \
    eval '[ "$(reuses alice)" = 1 ] && [ "$(last_reuse alice)" = "$first" ]'
check "the same pid namespace goes on in it (pid $pid1, then $pid2)" \
    test "${pid2:-0}" -gt "${pid1:-0}"
check "and it finds nothing of the first run: no process, file, IPC object, socket, key, used /tmp or timer ($FOUND)" \
    test "$FOUND" = nothing
check "the kept container's cgroup holds its init alone between runs" \
    wait_for 10 eval 'grep -q "sandbox $first: wiped in [0-9]* us, kept for tenant alice" "$LOG" &&
    [ "$(grep -c "sandbox $first: wiped" "$LOG")" -ge 2 ]'

# --- another tenant -----------------------------------------------------------
as bob run -l python -c "$(cat "$T/find.py")"
FOUND=$(sed -n 's/^found //p' <<< "$OUT")
bobid=$(sed -n "s/.*sandbox \([0-9a-f]*\): \(warm\|reused (run [0-9]*)\), for a run of tenant bob .*/\1/p" \
    "$LOG" | tail -1)
check "bob's run never gets alice's container ($(reuses bob) reused; ${bobid:-cold})" \
    eval '[ "$(reuses bob)" = 0 ] && ! grep -qx "${bobid:-none}" <<< "$(kept alice)"'
check "and finds nothing of hers ($FOUND)" test "$FOUND" = nothing
as bob run -l sh -c 'echo $$'
check "his second run reuses his own ($(last_reuse bob))" \
    eval '[ "$(reuses bob)" = 1 ] && grep -qx "$(last_reuse bob)" <<< "$(kept bob)" &&
    ! grep -qx "$(last_reuse bob)" <<< "$(kept alice)"'

# A kept container is no sandbox of its tenant's: nothing can be put in
# it between the wipe and the next run.
kb=$(kept_last bob)
as bob exec -S "$kb" -- /bin/sh -c 'sleep 300 &'
check "bob cannot exec in his kept container by its id ($RES)" \
    eval '[ "$RC" != 0 ] && grep -q "no sandbox $kb" "$T/e"'
as bob write -S "$kb" -D planted planted
check "nor write a file in it" \
    eval '[ "$RC" != 0 ] && grep -q "no sandbox $kb" "$T/e"'

# --- a tenant without reuse ---------------------------------------------------
as carol run -l sh -c 'echo one'
as carol run -l sh -c 'echo two'
check "carol (no reuse) gets a new container each run: none kept, none reused" \
    eval '[ -z "$(kept carol)" ] && [ "$(reuses carol)" = 0 ]'

# --- a run that times out -----------------------------------------------------
n=$(grep -c "kept for tenant alice" "$LOG")
r=$(reuses alice)
as alice run -T 1000 -l sh -c 'sleep 30'
if [ "$(reuses alice)" -gt "$r" ]; then
	timed=$(last_reuse alice)
else
	timed=$(sed -n "s/.*sandbox \([0-9a-f]*\): warm, for a run of tenant alice .*/\1/p" \
	    "$LOG" | tail -1)
fi
check "a run that times out ($(field flags)) ..." test "$(field flags)" = timed_out
check "... is not kept: its container ${timed:0:8} is destroyed" \
    wait_for 10 eval '! alive "$timed" &&
    [ "$(grep -c "kept for tenant alice" "$LOG")" = "$n" ]'

# --- concurrency: two at once, each its own container -------------------------
SBX -t alice run -l sh -c 'sleep 1; echo a' > "$T/c1" 2>&1 &
c1=$!
SBX -t alice run -l sh -c 'sleep 1; echo b' > "$T/c2" 2>&1 &
c2=$!
wait "$c1" "$c2"
check "two of her runs at once both succeed" \
    eval 'grep -qx a "$T/c1" && grep -qx b "$T/c2"'

# --- what mcpctl status says --------------------------------------------------
"$B/mcpctl" -j -f "$CONF" status > "$T/status.json" 2> /dev/null
check "mcpctl status counts the kept containers, runs and wipes ($(json "$T/status.json" 'd["sandboxd"]["reuse"]'))" \
    eval '[ "$(json "$T/status.json" "d[\"sandboxd\"][\"reuse\"][\"kept\"] >= 1 and d[\"sandboxd\"][\"reuse\"][\"claimed\"] >= 3 and d[\"sandboxd\"][\"reuse\"][\"wiped\"] >= 4")" = True ]'

# --- the audit log ------------------------------------------------------------
kill_daemons
check "the audit log verifies, whole up to its last checkpoint" \
    "$B/mcpctl" -f "$CONF" audit verify -q \
    -c "$(grep 'audit checkpoint size=' "$T/auditd.log" | tail -n 1)"
check "it records the reused runs as such" \
    eval '[ "$("$B/mcpctl" -f "$CONF" audit export 2>/dev/null |
    grep -c "\"reused\":")" -ge 2 ]'

# --- a reload takes reuse away; the idle time ---------------------------------
k0=$(kept_last alice)
conf yes 8 > "$CONF"
start auditd
start sandboxd
check "sandboxd is ready again" \
    wait_for 20 eval '[ "$(grep -c "ready: listening" "$LOG")" -ge 2 ]'
as alice run -l sh -c 'echo kept'
wait_for 10 eval '[ "$(kept_last alice)" != "$k0" ]'
k=$(kept_last alice)
wait_for 10 alive "$k"
check "a kept container waits for her next run" alive "$k"
conf no 8 > "$CONF"
kill -HUP "${PID[sandboxd]}"
check "a reload that takes reuse from her ends it within seconds" \
    wait_for 10 eval '! alive "$k"'
n=$(grep -c "kept for tenant alice" "$LOG")
as alice run -l sh -c 'echo no'
check "her runs are no longer kept" \
    eval 'sleep 1; [ "$(grep -c "kept for tenant alice" "$LOG")" = "$n" ]'
b0=$(kept_last bob)
as bob run -l sh -c 'echo idle'
wait_for 10 eval '[ "$(kept_last bob)" != "$b0" ]'
b=$(kept_last bob)
check "bob's kept container goes when unclaimed for the image's idle time (8 s)" \
    wait_for 20 eval '! alive "$b"'
# Eight slots: kept containers never keep others out for long.  Bob's
# three runs at once leave three kept, beside the warm one (four slots
# free); carol's six long runs at once need six: one or two find no
# slot, and bob's kept ones are let go, so that her next run finds one.
n=$(grep -c "kept for tenant bob" "$LOG")
for i in 1 2 3; do
	SBX -t bob run -l sh -c 'sleep 1' > /dev/null 2>&1 &
	bp[$i]=$!
done
wait "${bp[@]}"
check "bob's three runs at once leave three kept" \
    wait_for 10 eval '[ "$(grep -c "kept for tenant bob" "$LOG")" -ge $((n + 3)) ]'
for i in 1 2 3 4 5 6; do
	SBX -t carol run -T 10000 -l sh -c 'echo up; sleep 8' > "$T/slot$i" 2>&1 &
	cp[$i]=$!
done
wait_for 15 eval '[ "$(cat "$T"/slot[1-6] | grep -c -e "^up$" -e "slots are in use")" -ge 6 ]'
refused=$(grep -l "slots are in use" "$T"/slot[1-6] | wc -l)
check "carol's runs took every slot but those kept ($refused refused)" \
    test "$refused" -ge 1
check "bob's kept ones are let go for them" \
    wait_for 10 grep -q "no longer kept: other containers need its uid slot" "$LOG"
as carol run -l sh -c 'echo in'
check "and carol's next run finds a slot ($OUT)" test "$OUT" = in
kill "${cp[@]}" 2> /dev/null
wait "${cp[@]}" 2> /dev/null
kill_daemons
check "no sandbox process is left" \
    wait_for 10 eval '[ -z "$(sandbox_pids)" ]'
check "no sanitizer report" \
    test -z "$(grep -E 'ERROR: AddressSanitizer|LeakSanitizer' "$T"/*.log)"
done_testing
