"""Limits the host shares, against the real suite over MCP, with TAP.

Run by hostlim.sh, which starts auditd and sandboxd and builds exhaust.c
on the host as $T/exhaust.  Environment: B, CONF, T, BOB and GID (the
other tenant's uid, and the group that may reach the daemons).

Alice's sandbox "hog" takes all it can of one counter at a time and
holds it, while bob's sandbox "neighbour", root on the host and an
unprivileged host user each try to take one of the same; then the hog
lets go.  Each check names what the hog got and what the others saw.
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..",
                                "integration"))
from mcpclient import Stdio, ok, diag, done, sc, is_error

E = os.environ
B, CONF, T = E["B"], E["CONF"], E["T"]
SRC = open(os.path.join(os.path.dirname(__file__), "exhaust.c")).read()
MCPD = [f"{B}/mcpd", "--stdio", "-v", "-f", CONF]
MEMORY = 256 << 20          # the configuration's memory limit
PIDS = 64                   # and pids
NOFILE = 4096               # bundle.c's RLIMIT_NOFILE
PTYS = 64                   # devpts max= of each sandbox
SIGPENDING = 1024           # bundle.c's RLIMIT_SIGPENDING

alice = Stdio(MCPD, f"{T}/alice.log")
alice.initialize()
bob = Stdio([f"{T}/mcpd"] + MCPD[1:], f"{T}/bob.log", user=int(E["BOB"]),
            group=int(E["GID"]))
bob.initialize()


def sh(cl, sbx, cmd, timeout=30):
    r = cl.tool("sandbox_exec", {"sandbox": sbx, "command": cmd,
                                 "timeout": timeout}, timeout + 30)
    res = sc(r).get("results") or [{}]
    return res[0].get("stdout") or "", r


def word(out):
    """The words after RESULT on the last RESULT line."""
    lines = [x for x in out.splitlines() if x.startswith("RESULT ")]
    return lines[-1][7:] if lines else f"(none: {out[:200]!r})"


def host_probe(kind, user=None):
    p = subprocess.run([f"{T}/exhaust", "probe", kind], capture_output=True,
                       text=True, timeout=60, user=user, group=user)
    return word(p.stdout)


def sockstat():
    """Pages of TCP and UDP buffers the whole host holds."""
    mem = {}
    with open("/proc/net/sockstat") as f:
        for line in f:
            k, _, rest = line.partition(":")
            v = rest.split()
            if "mem" in v:
                mem[k] = int(v[v.index("mem") + 1])
    return mem


# --- two tenants, a sandbox each, the hostile program built in both ---------
for cl, name in ((alice, "hog"), (bob, "neighbour")):
    r = cl.tool("sandbox_create", {"name": name})
    ok(not is_error(r), f"sandbox {name} is made", r)
    cl.tool("sandbox_write_file", {"sandbox": name, "path": "exhaust.c",
                                   "content": SRC})
    out, r = sh(cl, name, "cc -O2 -o exhaust exhaust.c && echo built")
    ok("built" in out, f"the hostile program builds in {name}", r)


def hold(kind, secs=25, cl=alice, sbx="hog"):
    """Start sbx's hold of kind; its answer's request id, and its RESULT
    words once it holds."""
    sh(cl, sbx, "rm -f /tmp/release /tmp/held")
    rid = cl.start("tools/call", {"name": "sandbox_exec", "arguments": {
        "sandbox": sbx, "timeout": secs + 15,
        "command": f"./exhaust hold {kind} {secs} > /tmp/held; "
                   "cat /tmp/held"}})
    end = time.time() + secs
    got = ""
    while time.time() < end:
        got, _ = sh(cl, sbx, "cat /tmp/held 2>/dev/null")
        if "RESULT" in got:
            break
        time.sleep(0.2)
    return rid, word(got)


def let_go(kind, rid, cl=alice, sbx="hog"):
    sh(cl, sbx, "touch /tmp/release")
    r = cl.wait(rid, 60)
    res = sc(r).get("results") or [{}]
    ok(not is_error(r) and "RESULT HELD" in (res[0].get("stdout") or ""),
       f"{sbx} lets go of its {kind} when told", r)


def held(words):
    """(count, word) of 'HELD n WORD ...', or (None, words)."""
    v = words.split()
    if len(v) >= 3 and v[0] == "HELD":
        return int(v[1]), v[2]
    return None, words


def others(kind, want="SUCCEEDED", neighbour=None):
    """The neighbour, root on the host and nobody on the host each take
    one of kind; want is what each should see (neighbour may differ)."""
    n = word(sh(bob, "neighbour", f"./exhaust probe {kind}")[0])
    root = host_probe(kind)
    nobody = host_probe(kind, user=65534)
    good = (n == (neighbour or want) and root == want and nobody == want)
    return good, f"neighbour {n}, host root {root}, host nobody {nobody}"


# --- each counter: the hog takes it all, the others still get one --------
# (kind, what it is, the hog's limit: a check of (count, word), what the
# neighbour should see when it differs from the host)
BOUNDED = [
    ("pty", "pseudo-terminals (kernel.pty.max)", f"at most {PTYS}",
     lambda n, w: n is not None and n <= PTYS and w == "ENOSPC", None),
    ("aio", "AIO events (fs.aio-max-nr)", "none",
     lambda n, w: n == 0 and w == "EPERM", "EPERM"),
    ("inotify", "inotify instances (user.max_inotify_instances)", "none",
     lambda n, w: n == 0 and w == "EPERM", "EPERM"),
    ("watch", "inotify watches (user.max_inotify_watches)", "none",
     lambda n, w: n == 0 and w == "EPERM", "EPERM"),
    ("fanotify", "fanotify groups", "none",
     lambda n, w: n == 0 and w == "EPERM", "EPERM"),
    ("mq", "POSIX message queues (RLIMIT_MSGQUEUE)", "none",
     lambda n, w: n == 0 and w == "EMFILE", "EMFILE"),
    ("sigq", "queued signals (RLIMIT_SIGPENDING)", f"at most {SIGPENDING}",
     lambda n, w: n is not None and n <= SIGPENDING and w == "EAGAIN",
     None),
    ("timer", "POSIX timers (RLIMIT_SIGPENDING)", f"at most {SIGPENDING}",
     lambda n, w: n is not None and n <= SIGPENDING and w == "EAGAIN",
     None),
    ("shm", "System V shared memory segments (kernel.shmmni)",
     "its IPC namespace's 4096",
     lambda n, w: n is not None and n <= 4096 and w == "ENOSPC", None),
    ("msg", "System V message queues (kernel.msgmni)",
     "its IPC namespace's 32000",
     lambda n, w: n is not None and n <= 32000 and w == "ENOSPC", None),
    ("sem", "System V semaphore sets (kernel.sem)",
     "its IPC namespace's 32000",
     lambda n, w: n is not None and n <= 32000 and w == "ENOSPC", None),
    ("file", "open files (fs.file-max)", "at most pids x RLIMIT_NOFILE",
     lambda n, w: n is not None and n <= PIDS * NOFILE, None),
    ("fork", "processes (kernel.pid_max, kernel.threads-max)",
     "fewer than its pids limit",
     lambda n, w: n is not None and n < PIDS and w == "EAGAIN", None),
    ("inflight", "descriptors in flight over unix sockets",
     "its own uid's RLIMIT_NOFILE",
     lambda n, w: n is not None and n <= NOFILE + 1 and
     w == "ETOOMANYREFS", None),
    # Charged to the sandbox's memory limit (see SECURITY.md): the hog
    # takes what its memory allows, and the others must not notice.
    ("pipe", "pipe buffers (fs.pipe-user-pages-soft)", "what it may",
     lambda n, w: n is not None, None),
    ("epoll", "epoll watches (fs.epoll.max_user_watches)", "what it may",
     lambda n, w: n is not None, None),
    ("random", "the entropy pool", "what it may",
     lambda n, w: n is not None, None),
]
for kind, what, bound, limit, neighbour in BOUNDED:
    rid, got = hold(kind)
    n, w = held(got)
    good, seen = others(kind, neighbour=neighbour)
    let_go(kind, rid)
    ok(limit(n, w), f"{what}: the hog takes {bound}: {got}", got)
    ok(good, f"{what}: the others still get one: {seen}", seen)

# All sandboxes together: each user namespace's ceiling for queued
# signals is the RLIMIT_SIGPENDING of the runtime that made it, which
# sandboxd keeps at half its own (hostlim.sh starts it with RUNTIME_SIGPENDING,
# low enough for two sandboxes to reach).
ceiling = int(E["RUNTIME_SIGPENDING"]) // 2
rid, got = hold("sigq")
rid2, got2 = hold("sigq", cl=bob, sbx="neighbour")
root = host_probe("sigq")
let_go("sigq", rid2, cl=bob, sbx="neighbour")
let_go("sigq", rid)
n1, n2 = held(got)[0], held(got2)[0]
ok(n1 is not None and n2 is not None and n1 + n2 <= ceiling,
   f"two sandboxes together queue at most half of the runtime's "
   f"RLIMIT_SIGPENDING ({ceiling}): {n1} + {n2}", (got, got2))
ok(root == "SUCCEEDED", f"and root on the host still queues one: {root}")

out, r = sh(alice, "hog", "./exhaust probe nofile")
ok(word(out) == "EPERM",
   f"no sandbox raises its descriptor limit towards fs.nr_open: "
   f"{word(out)}", r)

# Socket buffers: memory outside the sandbox's memory limit on cgroup v1,
# counted against the host's tcp_mem and udp_mem.
for kind, proto in (("tcpbuf", "TCP"), ("udpbuf", "UDP")):
    before = sockstat().get(proto, 0)
    rid, got = hold(kind)
    during = sockstat().get(proto, 0)
    good, seen = others(kind)
    let_go(kind, rid)
    rise = (during - before) * 4096
    ok(held(got)[0] is not None and rise < MEMORY,
       f"{proto} buffers the hog fills pin {rise >> 20} MiB of the host's "
       f"{proto} memory, less than its memory limit: {got}", got)
    ok(good, f"{proto} buffers: the others still get one: {seen}", seen)

# --- /proc/self/mountinfo names no host path ---------------------------------
host_paths = sorted({T, os.path.realpath(T), os.path.dirname(
    os.path.realpath(B + "/sandbox-init")), os.path.realpath(B)})
for desc, out in (
        ("a persistent sandbox", sh(alice, "hog",
                                    "cat /proc/self/mountinfo")[0]),
        ("a one-shot run", sc(alice.tool("run_code", {
            "language": "sh", "code": "cat /proc/self/mountinfo"})).get(
                "stdout", ""))):
    seen = [p for p in host_paths if p in out]
    for line in out.splitlines():
        mine, _, fs = line.partition(" - ")
        f, t = mine.split(), fs.split()
        if len(f) > 4 and len(t) > 1 and t[0] != "proc":
            diag(f"{desc}: {f[4]} is {f[3]} of {t[0]} {t[1]}")
    ok(" /workspace " in out and " /dev/pts " in out and not seen,
       f"{desc}: /proc/self/mountinfo is readable and names no host "
       f"path{': ' + ' '.join(seen) if seen else ''}", out)
    ok(f"max={PTYS}" in out,
       f"{desc}: its devpts is mounted with max={PTYS}", out)

# --- afterwards -------------------------------------------------------------
out, r = sh(bob, "neighbour", "echo still here")
ok(out == "still here\n", "the neighbour works after every hold", r)
for cl, name in ((alice, "hog"), (bob, "neighbour")):
    r = cl.tool("sandbox_stop", {"sandbox": name})
    ok(not is_error(r), f"sandbox {name} stops cleanly", r)
ok(alice.close() == 0 and bob.close() == 0, "both sessions end cleanly")
done()
