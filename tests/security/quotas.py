#!/usr/bin/python3
"""Concurrent sandbox_create against max sandboxes: the cases of
tests/security/quotas.sh, with TAP.

Each round holds auditd stopped (SIGSTOP) while every create of the
round reaches sandboxd, so that all of them are validated before any is
made: the widest window there is between a create's validation and its
sandbox.  Then auditd goes on and every answer is collected.  Exactly the
limit must be made, every other create refused with an error naming the
limit (or the name), and none may hang.

Environment: B, CONF, T, PORT (mcpd's on 127.0.0.1), AUDITD_PID, the
tokens of the two tenants (TF1, TF2 of "four", limit 4; TO1, TO2 of
"one", limit 1), their uids (UF, UO) and GID (the sockets' group).
"""
import http.client
import json
import os
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..",
                                "integration"))
from mcpclient import Stdio, ok, diag, done, text, sc, is_error  # noqa

E = os.environ
B, CONF, T = E["B"], E["CONF"], E["T"]
PORT = int(E["PORT"])
AUDITD = int(E["AUDITD_PID"])
TOKENS = {"four": [E["TF1"], E["TF2"]], "one": [E["TO1"], E["TO2"]]}
UIDS = {"four": int(E["UF"]), "one": int(E["UO"])}
LIMIT = {"four": 4, "one": 1}
GID = int(E["GID"])
MCPD = [f"{T}/mcpd", "--stdio", "-v", "-f", CONF]
V = "2025-06-18"
N = 32			# creates per round
STOPPED = 1.5		# s auditd is held: sandboxd waits 5 s for an ack
WAIT = 90		# s for any one answer: more is a hang


# --- HTTP: one session per client, tokens taken in turn -------------------

def post(token, body, sid=None, timeout=WAIT):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=timeout)
    h = {"Authorization": "Bearer " + token,
         "Content-Type": "application/json",
         "Accept": "application/json, text/event-stream"}
    if sid is not None:
        h["Mcp-Session-Id"] = sid
        h["MCP-Protocol-Version"] = V
    try:
        c.request("POST", "/mcp", json.dumps(body), h)
        r = c.getresponse()
        data = r.read()
        sid = r.getheader("Mcp-Session-Id", sid)
    finally:
        c.close()
    if not data:
        return sid, None
    if data.lstrip().startswith(b"{"):
        return sid, json.loads(data)
    for line in data.decode().splitlines():	# an event stream
        if line.startswith("data:"):
            m = json.loads(line[5:])
            if "id" in m and "method" not in m:
                return sid, m
    return sid, None


class HttpClient:
    def __init__(self, token):
        self.token = token
        self.sid, r = post(token, {
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": V, "capabilities": {},
                       "clientInfo": {"name": "quotas", "version": "1"}}})
        if self.sid is None or r is None or "result" not in r:
            raise RuntimeError("no session: %r" % (r,))
        post(token, {"jsonrpc": "2.0",
                     "method": "notifications/initialized"}, self.sid)

    def tool(self, name, args, rid=1):
        return post(self.token, {"jsonrpc": "2.0", "id": rid,
                                 "method": "tools/call",
                                 "params": {"name": name,
                                            "arguments": args}},
                    self.sid)[1]


# --- stdio: several mcpd --stdio of one uid --------------------------------

def stdio(tenant, i):
    c = Stdio(MCPD, f"{T}/stdio-{tenant}-{i}.err", user=UIDS[tenant],
              group=GID)
    c.initialize(V)
    return c


# --- a round ---------------------------------------------------------------

def held(fire, collect):
    """fire() with auditd stopped, then collect() once it goes on."""
    os.kill(AUDITD, signal.SIGSTOP)
    try:
        fire()
        time.sleep(STOPPED)
    finally:
        os.kill(AUDITD, signal.SIGCONT)
    return collect()


def http_round(tenant, n, args_for):
    """n concurrent sandbox_create over HTTP: the answers (None: none)."""
    clients = [HttpClient(TOKENS[tenant][i % 2]) for i in range(n)]
    answers = [None] * n
    go = threading.Barrier(n + 1)

    def one(i):
        go.wait()
        try:
            answers[i] = clients[i].tool("sandbox_create", args_for(i))
        except Exception as e:		# noqa: BLE001: a hang, say
            answers[i] = {"exception": repr(e)}

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()

    def collect():
        for t in threads:
            t.join(WAIT + 10)
        return answers

    return held(go.wait, collect)


def stdio_round(tenant, procs, per, args_for):
    """procs mcpd --stdio of the tenant's uid, per creates from each."""
    cs = [stdio(tenant, i) for i in range(procs)]
    sent = []

    def fire():
        for i, c in enumerate(cs):
            for j in range(per):
                k = i * per + j
                sent.append((c, c.start("tools/call", {
                    "name": "sandbox_create", "arguments": args_for(k)})))

    def collect():
        out = []
        for c, rid in sent:
            try:
                out.append(c.wait(rid, WAIT))
            except Exception as e:	# noqa: BLE001
                out.append({"exception": repr(e)})
        return out

    answers = held(fire, collect)
    for c in cs:
        c.close()
    return answers


def made(answers):
    return [a for a in answers if a and "result" in a and not is_error(a)]


def refused(answers, words):
    """The answers that are tool errors naming one of words."""
    return [a for a in answers if a and "result" in a and is_error(a) and
            any(w in text(a) for w in words)]


def hung(answers):
    return [a for a in answers if a is None or "exception" in a]


def listing(tenant):
    c = HttpClient(TOKENS[tenant][0])
    r = c.tool("sandbox_list", {})
    return c, [s["id"] for s in sc(r).get("sandboxes", [])]


def clean(tenant):
    c, ids = listing(tenant)
    for i in ids:
        c.tool("sandbox_stop", {"sandbox": i})
    return listing(tenant)[1] == []


def check_round(what, tenant, answers, want, words):
    n = len(answers)
    m = made(answers)
    r = refused(answers, words)
    h = hung(answers)
    ok(not h, f"{what}: all {n} creates answered, none hung ({len(h)} did)",
       h[:3])
    ok(len(m) == want, f"{what}: exactly {want} made ({len(m)})",
       [text(a)[:200] for a in m][:8])
    ok(len(r) == n - want,
       f"{what}: the other {n - want} refused, naming {words[0]!r} "
       f"({len(r)})",
       [text(a)[:200] for a in answers if a not in m and a not in r][:4])
    _, ids = listing(tenant)
    ok(len(ids) == want, f"{what}: sandbox_list shows {want} ({len(ids)})",
       ids)
    ok(clean(tenant), f"{what}: every sandbox of the round stopped")


def limits():
    for tenant in ("four", "one"):
        want = LIMIT[tenant]
        a = http_round(tenant, N, lambda i: {})
        check_round(f"HTTP, {N} sessions of {tenant} (limit {want})",
                    tenant, a, want, ["limit"])
        a = stdio_round(tenant, 4, N // 4, lambda i: {})
        check_round(f"stdio, 4 mcpd --stdio of uid {UIDS[tenant]}, "
                    f"{N // 4} each ({tenant}, limit {want})",
                    tenant, a, want, ["limit"])


def names():
    a = http_round("four", N, lambda i: {"name": "same"})
    check_round(f"HTTP, {N} creates named \"same\"", "four", a, 1,
                ["\"same\""])
    a = stdio_round("four", 4, 4, lambda i: {"name": "twin"})
    check_round("stdio, 16 creates named \"twin\" from 4 mcpd --stdio",
                "four", a, 1, ["\"twin\""])


def released():
    """Places held by creates that fail later are given back."""
    # auditd silent past sandboxd's wait: the four creates are refused.
    c = HttpClient(TOKENS["four"][0])
    answers = [None] * 4

    def one(i):
        answers[i] = HttpClient(TOKENS["four"][i % 2]).tool(
            "sandbox_create", {})

    threads = [threading.Thread(target=one, args=(i,)) for i in range(4)]
    os.kill(AUDITD, signal.SIGSTOP)
    try:
        for t in threads:
            t.start()
        time.sleep(STOPPED)
        fifth = c.tool("sandbox_create", {})
        for t in threads:
            t.join(WAIT)
    finally:
        os.kill(AUDITD, signal.SIGCONT)
    ok(is_error(fifth) and "limit" in text(fifth),
       "while four creates wait for auditd, a fifth is refused at the "
       "limit", text(fifth)[:300])
    ok(len(refused(answers, ["audit"])) == 4,
       "auditd silent past sandboxd's wait: the four are refused (audit)",
       [text(a)[:200] for a in answers if a])
    a = http_round("four", 4, lambda i: {})
    ok(len(made(a)) == 4, "then four creates succeed: the places were "
       "given back (%d)" % len(made(a)), [text(x)[:200] for x in a])
    ok(clean("four"), "and are stopped")

    # Clients gone while their creates wait: nothing is made of them.
    cs = [stdio("four", i) for i in range(4)]
    os.kill(AUDITD, signal.SIGSTOP)
    try:
        for c in cs:
            c.start("tools/call", {"name": "sandbox_create",
                                   "arguments": {}})
        time.sleep(STOPPED)
        for c in cs:
            c.p.kill()
            c.close()
        time.sleep(0.5)
    finally:
        os.kill(AUDITD, signal.SIGCONT)
    # Their intents are acknowledged before the next round's begin.
    time.sleep(1)
    a = http_round("four", 4, lambda i: {})
    ok(len(made(a)) == 4, "after four clients went away mid-create, four "
       "creates succeed (%d)" % len(made(a)), [text(x)[:200] for x in a])
    _, ids = listing("four")
    ok(len(ids) == 4, f"and the tenant has just those four ({len(ids)})",
       ids)
    ok(clean("four"), "and they are stopped")


def main():
    for fn in (limits, names, released):
        try:
            fn()
        except Exception as e:		# noqa: BLE001
            ok(False, f"{fn.__name__} ran to its end", repr(e))
            try:
                os.kill(AUDITD, signal.SIGCONT)
            except OSError:
                pass
    done()


main()
