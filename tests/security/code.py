"""Hostile code against the real suite, over MCP, with TAP.

Run by code.sh, which starts auditd and sandboxd and sets up what the
attacks aim at on the host.  Environment: B, CONF, T, BOB and GID (the
other tenant's uid, and the group that may reach the daemons), SECRET and
VICTIM (host files), SENTINEL (a host pid), ABSTRACT (a host abstract
socket), PORT (a host loopback listener), TAG (the name escapees carry).

Most attacks are subcommands of attack.c, built inside a persistent
sandbox with the image's compiler and run there; the resource attacks run
as one-shot run_code calls, each in a fresh container from the pool.
Each check names the outcome it saw.
"""
import os
import re
import shlex
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..",
                                "integration"))
from mcpclient import Stdio, ok, diag, done, result, text, sc, is_error

E = os.environ
B, CONF, T = E["B"], E["CONF"], E["T"]
# Under runsc (gVisor) the code runs on a kernel of gVisor's own.
GUEST = E.get("RUNTIME_KIND") == "runsc"
SRC = open(os.path.join(os.path.dirname(__file__), "attack.c")).read()
MCPD = [f"{B}/mcpd", "--stdio", "-v", "-f", CONF]

c = Stdio(MCPD, f"{T}/stdio.log")
c.initialize()
bob = Stdio([f"{T}/mcpd"] + MCPD[1:], f"{T}/bob.log", user=int(E["BOB"]),
            group=int(E["GID"]))
bob.initialize()


def bob_runs(what):
    r = bob.tool("run_code", {"language": "python",
                              "code": "print(sum(range(10)))"})
    ok(sc(r).get("stdout") == "45\n" and not is_error(r),
       f"the other tenant runs code normally {what}", r)


def out_of(r):
    """The RESULT line's words, from a run_code or sandbox_exec answer."""
    s = sc(r)
    if "results" in s:
        s = (s["results"] or [{}])[0]
    lines = [x for x in (s.get("stdout") or "").splitlines()
             if x.startswith("RESULT ")]
    return lines[-1][7:] if lines else f"(none: {text(r)[:300]})"


def lab(cmd, timeout=10):
    return c.tool("sandbox_exec", {"sandbox": "lab", "command": cmd,
                                   "timeout": timeout}, timeout + 30)


def attack(*args):
    return out_of(lab("./attack " + " ".join(shlex.quote(a) for a in args)))


def refused(desc, args, safe):
    """An attack whose safe outcome is one of the errno names in safe."""
    got = attack(*args)
    ok(got in safe, f"{desc}: {got}", got)


def oneshot(args, timeout=None, language="c", code=None):
    a = {"language": language, "code": code or SRC, "args": args}
    if timeout is not None:
        a["timeout"] = timeout
    return c.tool("run_code", a, 120)


bob_runs("before the attacks")

# --- a persistent sandbox with the attack program built in it --------------
def make_lab():
    r = c.tool("sandbox_create", {"name": "lab"})
    ok(not is_error(r), "a persistent sandbox for the attacks", r)
    sid = sc(r).get("id", "")
    c.tool("sandbox_write_file", {"sandbox": "lab", "path": "attack.c",
                                  "content": SRC})
    r = lab("cc -O2 -o attack attack.c && echo built")
    ok("built" in (sc(r).get("results") or [{}])[0].get("stdout", ""),
       "the attack program builds with the image's compiler", r)
    return sid


LAB = make_lab()

# --- who the code is ------------------------------------------------------
got = attack("id")
caps = re.findall(r"Cap\w+:\s*([0-9a-f]+)", got)
ok(got.startswith("ID uid=1000 euid=1000") and len(caps) == 3 and
   all(int(x, 16) == 0 for x in caps),
   f"code runs as an unprivileged user with no capabilities in any set: "
   f"{got}", got)
refused("setuid(0) is refused", ["setuid"], {"EPERM"})
# prctl(2) asks the kernel that runs the code: gVisor's status file has
# no NoNewPrivs line.
r = lab("python3 -c 'import ctypes; "
        "print(ctypes.CDLL(None).prctl(39, 0, 0, 0, 0))'")
ok(sc(r)["results"][0]["stdout"] == "1\n",
   "no_new_privs is set, so no exec can raise privilege", r)

# --- system calls the profile refuses ---------------------------------------
SYSCALLS = [
    ("a raw IPv4 socket", ["raw"]),
    ("a raw IPv6 socket", ["raw6"]),
    ("an AF_PACKET socket", ["packet"]),
    ("an AF_ALG socket", ["alg"]),
    ("an AF_VSOCK socket", ["vsock"]),
    ("ptrace attach to a sibling", ["ptrace"]),
    ("PTRACE_TRACEME", ["traceme"]),
    ("process_vm_readv", ["vm_readv"]),
    ("process_vm_writev", ["vm_writev"]),
    ("add_key", ["add_key"]),
    ("keyctl", ["keyctl"]),
    ("mount", ["mount"]),
    ("umount of /proc", ["umount"]),
    ("unshare of a user namespace", ["unshare_user"]),
    ("unshare of a network namespace", ["unshare_net"]),
    ("setns into PID 1's mount namespace", ["setns"]),
    ("clone with new namespaces", ["clone_ns"]),
    ("init_module", ["init_module"]),
    ("finit_module", ["finit_module"]),
    ("kexec_load", ["kexec"]),
    ("bpf", ["bpf"]),
    ("perf_event_open", ["perf"]),
    ("userfaultfd", ["userfaultfd"]),
    ("io_uring_setup", ["io_uring"]),
    ("clock_settime", ["clock_settime"]),
    ("settimeofday", ["settimeofday"]),
    ("adjtimex that changes the clock", ["adjtimex"]),
    ("syslog (dmesg)", ["syslog"]),
    ("mknod of a character device", ["mknod", "null2"]),
    ("mknod of a block device", ["mknod_block", "sda"]),
]
for desc, args in SYSCALLS:
    got = attack(*args)
    ok(got in ("EPERM", "EACCES", "ENOSYS", "EAFNOSUPPORT", "EINVAL"),
       f"{desc} is refused: {got}", got)

# Another ABI's call is not looked at: the filter kills the process.
for abi in ("int80", "x32"):
    r = lab(f"./attack {abi}; echo status=$?")
    out = sc(r)["results"][0].get("stdout", "")
    ok("SUCCEEDED" not in out and "status=159" in out,
       f"a system call through the {abi} ABI is killed by SIGSYS: "
       f"{out.strip()}", r)

# --- the network: loopback only ---------------------------------------------
# gVisor's network stack answers "no route" where Linux's answers
# "unreachable": no packet leaves either way.
refused("IPv4 egress to a public address", ["connect4", "1.1.1.1"],
        {"ENETUNREACH", "EHOSTUNREACH"})
refused("IPv4 to the host's loopback listener",
        ["connect4", "127.0.0.1", E["PORT"]], {"ECONNREFUSED"})
refused("UDP to a public resolver", ["udp4", "8.8.8.8"],
        {"ENETUNREACH", "EHOSTUNREACH"})
refused("IPv6 egress", ["connect6", "2001:4860:4860::8888"],
        {"ENETUNREACH", "EHOSTUNREACH", "EADDRNOTAVAIL", "EAFNOSUPPORT"})
refused("DNS resolution", ["dns", "deb.debian.org"], {"FAILED"})
refused("the host's abstract unix socket", ["abstract", E["ABSTRACT"]],
        {"ECONNREFUSED"})
r = lab("ls /run /var/run 2>&1; ls -a / | tr '\\n' ' '")
ok("sandboxd.sock" not in str(r) and "auditd.sock" not in str(r),
   "the daemons' sockets are not in the sandbox's filesystem", r)

# --- signals: only the sandbox's own processes ------------------------------
# Every pid up to Linux's largest pid_max: four million kill(2) calls,
# seconds under runc but a minute through gVisor's kernel, where the scan
# stops at 2^18, past any pid its namespace of a few processes gives.
got = attack("signal_scan", str(1 << 18)) if GUEST else attack("signal_scan")
ok(got.startswith("VISIBLE ") and int(got.split()[1]) < 10,
   f"only the sandbox's own processes can be signalled: {got}", got)
refused("SIGKILL to a host pid", ["kill_pid", E["SENTINEL"]], {"ESRCH"})
r = lab("./attack kill_init")
if not GUEST:
    ok(sc(r)["results"][0].get("stdout", "").count("RESULT") == 2,
       "SIGKILL to PID 1 from inside does nothing", r)
else:
    # gVisor delivers it, where Linux drops a signal its namespace's init
    # has no handler for: code may end its own sandbox's processes, and
    # only those; the sandbox comes back on its next use, which waits
    # while the ended one is cleaned up.
    r = lab("echo back; ls attack")
    ok((sc(r).get("results") or [{}])[0].get("stdout") == "back\nattack\n",
       "under runsc, SIGKILL to PID 1 from inside ends that sandbox's "
       "processes alone; it comes back with its workspace on its next "
       "use", r)
    bob_runs("after an attacker ended its own sandbox's processes")
r = lab("./attack kill_all; echo after")
r = lab("echo still here")
ok(sc(r)["results"][0].get("stdout") == "still here\n",
   "kill(-1, SIGKILL) takes down only the sandbox's own processes", r)

# --- the kernel that answers: the tier that holds ---------------------------
# Under runc and crun the sandbox's system calls reach the host's kernel:
# a bug in code they can reach is an escape, held off only by the host's
# patches and the filter.  Under runsc they reach gVisor's kernel, in user
# space, and the host's only through gVisor's own narrow filter: that
# tier holds even where the host's kernel is wrong.  Each case says which
# tier it expects.
host_release = os.uname().release
r = lab("uname -r")
rel = (sc(r).get("results") or [{}])[0].get("stdout", "").strip()
if GUEST:
    ok(rel and rel != host_release,
       f"tier runsc: the code's kernel is gVisor's ({rel}), not the "
       f"host's ({host_release})", r)
else:
    ok(rel == host_release,
       f"tier runc: the code's kernel is the host's ({rel}): only its "
       f"patches and the filter stand in a kernel bug's way", r)
got = attack("kernel_calls")
calls = dict(w.split("=", 1) for w in got.split() if "=" in w)
if GUEST:
    # gVisor implements neither: the host's code for them never runs.
    ok(len(calls) == 6 and calls.get("openat2") == "ENOSYS" and
       calls.get("pidfd_open") == "ENOSYS" and
       "SUCCEEDED" not in calls.values(),
       f"tier runsc: calls the filter allows but gVisor lacks never reach "
       f"a kernel's code (ENOSYS): {got}", got)
else:
    ok(len(calls) == 6 and "ENOSYS" not in calls.values() and
       "SUCCEEDED" not in calls.values(),
       f"tier runc: the host's kernel answers each allowed call itself: "
       f"{got}", got)
lab("printf 'original' > ro.txt && chmod 0444 ro.txt")
got = attack("dirtypipe", "ro.txt")
ok(got == "HELD",
   f"Dirty Pipe (CVE-2022-0847), splice into a read-only file's page "
   f"cache, fails: {got} (tier "
   f"{'runsc: gVisor never shares the host page cache' if GUEST else 'runc: holds by the host kernel fix (5.16.11)'})",
   got)

# --- the kernel's files -------------------------------------------------------
WRITES = [
    ("/proc/sys/kernel/hostname", "pwned"),
    ("/proc/sys/kernel/core_pattern", "|/tmp/x"),
    ("/proc/sysrq-trigger", "h"),
    ("/sys/kernel/mm/transparent_hugepage/enabled", "never"),
    ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "9999999999"),
    ("/sys/fs/cgroup/pids/pids.max", "max"),
]
for path, what in WRITES:
    got = attack("write", path, what)
    ok(got in ("EROFS", "EACCES", "EPERM", "ENOENT"),
       f"a write to {path} fails: {got}", got)
for path in ("/proc/kcore", "/proc/keys", "/proc/timer_list",
             "/proc/sched_debug", "/proc/latency_stats",
             "/proc/interrupts"):
    got = attack("read", path)
    ok(got in ("READ 0 zeros", "ENOENT", "EACCES", "EPERM"),
       f"masked {path} reads as nothing: {got}", got)
r = lab("for d in /proc/acpi /proc/scsi /sys/firmware; do "
        "[ -e $d ] && ls -A $d; done | wc -l")
ok(sc(r)["results"][0].get("stdout", "").strip() == "0",
   "masked directories are empty", r)
got = attack("kallsyms")
ok(got.endswith(" 0 addresses") or got in ("EACCES", "ENOENT"),
   f"no kernel address leaks from kallsyms: {got}", got)
r = lab("ls /dev | tr '\\n' ' '")
devs = set(sc(r)["results"][0].get("stdout", "").split())
# gVisor adds its own emulated fuse and net/tun, which need the mount(2)
# and CAP_NET_ADMIN the sandbox does not have.
ok(devs <= {"null", "zero", "full", "random", "urandom", "tty", "pts",
            "ptmx", "shm", "mqueue", "fd", "stdin", "stdout", "stderr",
            "console", "core"} | ({"fuse", "net"} if GUEST else set()),
   f"/dev holds only the harmless devices: {' '.join(sorted(devs))}", r)
for dev in ("/dev/mem", "/dev/kmsg", "/dev/sda", "/dev/vda"):
    refused(f"opening {dev}", ["open_rw", dev], {"ENOENT", "EACCES"})

# --- binaries of the host, and PID 1 -----------------------------------------
refused("overwriting sandbox-init through /proc/1/exe",
        ["overwrite", "/proc/1/exe"], {"EACCES", "ETXTBSY", "EROFS", "EPERM"})
r = oneshot(None, language="python",
            code="try:\n    open('/proc/self/exe', 'r+b').write(b'x')\n"
                 "    print('RESULT SUCCEEDED')\nexcept OSError as e:\n"
                 "    print('RESULT', e.errno)")
got = out_of(r)
ok(got != "SUCCEEDED" and got.isdigit(),
   f"python cannot overwrite its own host binary via /proc/self/exe: "
   f"errno {got}", r)
refused("writing a host library", ["write", "/usr/lib/x86_64-linux-gnu/"
                                   "libc.so.6", "x"],
        {"EROFS", "EACCES", "ETXTBSY"})
r = lab("cp attack suid && chmod u+s suid && ls -l suid | cut -c1-10; "
        "awk '$2 == \"/\" || $2 == \"/usr\" || $2 == \"/workspace\" "
        "{print $2, $4}' /proc/self/mounts")
out = sc(r)["results"][0].get("stdout", "")
mnt = dict(l.split(" ", 1) for l in out.splitlines()[1:])
# gVisor's mount table shows no nosuid: there no_new_privs (above) and
# the su case below stand for it.
ok((GUEST or "nosuid" in mnt.get("/usr", "") and
    "nosuid" in mnt.get("/workspace", "")) and
   mnt.get("/", "").startswith("ro,"),
   f"set-uid bits mean nothing: /usr and /workspace are nosuid, the root "
   f"read-only ({' / '.join(out.splitlines())})", r)
r = lab("su -c id root </dev/null 2>&1; echo status=$?")
out = sc(r)["results"][0].get("stdout", "")
ok("uid=0" not in out and "status=0" not in out,
   f"the host's set-uid su gives nothing: {out.strip()}", r)

# --- resources: each limit holds, one fresh container each -----------------
r = oneshot(["forkbomb"], timeout=3)
ok(is_error(r) and sc(r).get("timed_out") is True,
   "a fork bomb is contained and stopped at the timeout", r)
bob_runs("during the aftermath of a fork bomb")
r = oneshot(["memory"])
ok(sc(r).get("oom_killed") is True or "MALLOC" in out_of(r),
   f"memory exhaustion ends in the memory limit: "
   f"oom={sc(r).get('oom_killed')} peak={sc(r).get('peak_memory_bytes')}",
   r)
ok((sc(r).get("peak_memory_bytes") or 0) <= 256 * 1024 * 1024 + (1 << 20),
   f"and peak memory stays under it ({sc(r).get('peak_memory_bytes')})", r)
r = oneshot(["fill", "/workspace/big"])
ok(out_of(r) in ("ENOSPC", "EFBIG"),
   f"filling the workspace gives ENOSPC: {out_of(r)}", r)
r = oneshot(["fill", "/tmp/big"])
ok(out_of(r) in ("ENOSPC", "EFBIG"),
   f"filling /tmp gives ENOSPC: {out_of(r)}", r)
r = oneshot(["fill", "/dev/shm/big"])
ok(out_of(r) in ("ENOSPC", "EFBIG") or sc(r).get("signal") == "SIGXFSZ",
   f"filling /dev/shm stops at its size or the file size limit: "
   f"{out_of(r)}{sc(r).get('signal')}", r)
for d in ("/tmp", "/workspace", "/dev/shm"):
    # Under runsc each file of /workspace is a round trip to the gofer:
    # thousands of them take seconds more on a busy machine.
    r = oneshot(["inodes", d], timeout=30 if GUEST else 10)
    got = out_of(r)
    # gVisor's tmpfs keeps its inodes in the sandbox's memory and has no
    # inode count: there the memory limit ends it.
    ok((got.startswith("FILES ") and got.endswith(" ENOSPC") or
        GUEST and sc(r).get("oom_killed") is True) and
       not sc(r).get("timed_out"),
       f"creating files in {d} ends in ENOSPC at an inode limit"
       f"{', or under runsc at the memory limit' if GUEST else ''}: "
       f"{got}", r)
got = attack("inodes", "/workspace")
ok(got.startswith("FILES ") and got.endswith(" ENOSPC"),
   f"and in a persistent sandbox's own disk: {got}", got)
lab("rm -f f[0-9]*")
r = oneshot(["fds"])
ok(out_of(r).startswith("FDS ") and out_of(r).endswith("EMFILE") and
   int(out_of(r).split()[1]) <= 4096,
   f"descriptors run out at the rlimit: {out_of(r)}", r)
r = oneshot(["output"], timeout=5)
ok(sc(r).get("output_truncated") is True and
   len(sc(r).get("stdout", "")) <= 64 * 1024,
   f"an output flood is cut at the cap and flagged "
   f"({len(sc(r).get('stdout', ''))} bytes kept)", r)
r = oneshot(["spin"], timeout=2)
ok(sc(r).get("timed_out") is True and
   (sc(r).get("duration_ms") or 99999) < 10000,
   f"runaway CPU is stopped at the timeout "
   f"({sc(r).get('duration_ms')} ms wall, {sc(r).get('cpu_ms')} ms CPU)", r)
r = oneshot(["outlive", E["TAG"]], timeout=2)
ok(sc(r).get("timed_out") is True and "DETACHED" in sc(r).get("stdout", ""),
   "a detached, signal-ignoring grandchild was made, and the run timed out",
   r)
bob_runs("after the resource attacks")

# --- file tools against a hostile workspace ----------------------------------
SECRET, VICTIM = E["SECRET"], E["VICTIM"]
lab(f"ln -s {SECRET} abs; ln -s ../../../../../../.. up; mkfifo fifo; "
    f"truncate -s 60M sparse; ln -s {VICTIM} wvictim; mkdir -p d")
r = lab("stat -c %s sparse; truncate -s 8G giant; echo status=$?")
out = sc(r)["results"][0].get("stdout", "")
ok(out.startswith(f"{60 << 20}\n") and "status=0" not in out,
   f"a sparse file may be larger than the disk, but not past the file "
   f"size limit: {' / '.join(out.splitlines())}", r)


def fileop(tool, args, timeout=30):
    a = {"sandbox": "lab"}
    a.update(args)
    t0 = time.time()
    r = c.tool(tool, a, timeout)
    return r, time.time() - t0


def leaks(r):
    return "host secret" in str(r) or "host victim" in str(r)


r, _ = fileop("sandbox_read_file", {"path": "abs"})
ok(is_error(r) and not leaks(r),
   f"reading through an absolute symlink to a host file fails: {text(r)}",
   r)
r, _ = fileop("sandbox_read_file", {"path": f"up{SECRET}"})
ok(is_error(r) and not leaks(r),
   f"reading through a symlink to .. fails: {text(r)}", r)
r, _ = fileop("sandbox_write_file", {"path": "wvictim", "content": "PWNED"})
ok(is_error(r), f"writing through a symlink to a host file fails: "
   f"{text(r)}", r)
r, secs = fileop("sandbox_read_file", {"path": "fifo"})
ok(is_error(r) and secs < 10,
   f"reading a FIFO fails at once ({secs:.1f} s): {text(r)}", r)
r, secs = fileop("sandbox_read_file", {"path": "sparse"})
ok(secs < 20 and (is_error(r) or sc(r).get("truncated") is True),
   f"a sparse file larger than the disk is refused or cut ({secs:.1f} s): "
   f"{text(r)[:100]}", r)
r, secs = fileop("sandbox_download", {"path": "sparse",
                                      "local_path": f"{T}/dl"})
ok(is_error(r) or sc(r).get("truncated") is True,
   f"and so is downloading it ({secs:.1f} s): {text(r)[:100]}", r)
for p in ("../../etc/passwd", "d/../../x", "/etc/passwd", SECRET,
          "/workspace/../etc/shadow"):
    r, _ = fileop("sandbox_read_file", {"path": p})
    ok(is_error(r) and not leaks(r), f"read_file {p!r} is refused: "
       f"{text(r)[:120]}", r)
    r, _ = fileop("sandbox_write_file", {"path": p, "content": "x"})
    ok(is_error(r), f"write_file {p!r} is refused: {text(r)[:120]}", r)
# jansson reads no NUL in a string: the message is not JSON to mcpd, and
# the answer is a parse error, with no id to give back.
c.send({"jsonrpc": "2.0", "id": "nul", "method": "tools/call",
        "params": {"name": "sandbox_write_file", "arguments": {
            "sandbox": "lab", "path": "nul\u0000name", "content": "x"}}})
r = c.wait(None, 10)
r2 = lab("ls nul* 2>&1")
ok(r.get("error", {}).get("code") == -32700 and
   "No such file" in sc(r2)["results"][0].get("stdout", ""),
   f"a name with NUL is refused, and nothing named: "
   f"{r.get('error', {}).get('message')}", r)
r, _ = fileop("sandbox_write_file", {"path": "line\nbreak", "content": "x"})
r2 = lab("ls -b | tr '\\n' ' '")
names = sc(r2)["results"][0].get("stdout", "")
ok("line " not in names and " break" not in names and
   (is_error(r) or "line\\nbreak" in names),
   f"a name with a newline is one name or refused, never two: {names}", r)
r, _ = fileop("sandbox_list_files", {"path": "up"})
ok(is_error(r) or all(not e.get("name", "").startswith("sandboxd")
                      for e in sc(r).get("entries", [])),
   f"listing through a symlink out does not list the host: "
   f"{text(r)[:120]}", r)

# A file swapped for a symlink to a host file while the tools use it, and
# two requests at once on one workspace: a second session of the same
# tenant races a swapping loop in the sandbox.
c2 = Stdio(MCPD, f"{T}/stdio2.log")
c2.initialize()
swap = ("end=$(($(date +%s) + 6)); while [ $(date +%s) -lt $end ]; do "
        f"ln -sf {SECRET} s.tmp; mv -fT s.tmp target; "
        "echo ordinary > f.tmp; mv -fT f.tmp target; done; echo swapped")
res = {}


def swapper():
    res["swap"] = c2.tool("sandbox_exec", {"sandbox": LAB, "command": swap,
                                           "timeout": 9}, 60)


th = threading.Thread(target=swapper)
th.start()
time.sleep(0.5)
reads = writes = met = 0
leaked = False
t_end = time.time() + 5
while time.time() < t_end:
    r = c.tool("sandbox_read_file", {"sandbox": "lab", "path": "target"})
    reads += 1
    leaked |= leaks(r)
    met += "leads outside" in text(r)
    r = c.tool("sandbox_write_file", {"sandbox": "lab", "path": "target",
                                      "content": "PWNED\n"})
    writes += 1
th.join()
ok(met > 0, f"the race was live: {met} of {reads} reads met the symlink")
ok(not leaked, f"{reads} reads racing a symlink swap never read the host "
   f"file", reads)
ok(open(SECRET).read().startswith("host secret"),
   f"{writes} writes racing it never wrote the host file")
ok("swapped" in str(res.get("swap")),
   "the racing command ran to its end beside the file operations",
   res.get("swap"))
r = lab("echo after the race")
ok(sc(r)["results"][0].get("stdout") == "after the race\n",
   "the sandbox works after two sessions raced on it", r)
c2.close()

# --- a stalled container does not stall sandboxd ---------------------------
# The host stops the sandbox's PID 1 while a large write is on its way to
# it: sandboxd must go on serving everyone else meanwhile.


def init_pid(sid):
    """The sandbox's PID 1 on the host: under runsc, gVisor's kernel."""
    for d in os.listdir("/proc"):
        try:
            if GUEST:
                mine = open(f"/proc/{d}/cmdline").read().startswith(
                    "runsc-sandbox")
            else:
                mine = open(f"/proc/{d}/comm").read().strip() == \
                    "sandbox-init"
            if sid and mine and f"/{sid}\n" in open(
                    f"/proc/{d}/cgroup").read():
                return int(d)
        except (OSError, ValueError):
            continue
    return None


ipid = init_pid(LAB)
ok(ipid is not None, f"the sandbox's PID 1 is found on the host ({ipid})")
c3 = Stdio(MCPD, f"{T}/stdio3.log")
c3.initialize()
os.kill(ipid, signal.SIGSTOP)
big = {}


def big_write():
    big["r"] = c3.tool("sandbox_write_file", {
        "sandbox": LAB, "path": "big.txt", "content": "x" * (6 << 20)}, 120)


th = threading.Thread(target=big_write)
th.start()
time.sleep(1)
t0 = time.time()
r = bob.tool("run_code", {"language": "sh", "code": "echo unhindered"}, 30)
secs = time.time() - t0
ok(sc(r).get("stdout") == "unhindered\n" and secs < 10,
   f"with a sandbox's PID 1 stopped mid-write, another tenant's run "
   f"goes on ({secs:.1f} s)", r)
os.kill(ipid, signal.SIGCONT)
th.join()
ok(sc(big.get("r", {})).get("bytes") == 6 << 20,
   "and the write completes once PID 1 runs again", big.get("r"))
c3.close()

# --- the other tenant ----------------------------------------------------------
r = bob.tool("sandbox_exec", {"sandbox": LAB, "command": "id"})
ok(is_error(r) and "id" not in sc(r).get("results", [{}])[0].get(
    "stdout", "") if sc(r).get("results") else is_error(r),
   "the other tenant cannot run in the attacker's sandbox", r)
bob_runs("after every attack")
r = c.tool("sandbox_stop", {"sandbox": "lab"})
ok(not is_error(r), "the attacked sandbox stops cleanly", r)
ok(c.close() == 0 and bob.close() == 0, "both sessions end cleanly")
done()
