#!/usr/bin/python3
"""Hostile requests to mcpd: the cases of tests/security/requests.sh.

Raw sockets and pipes, the standard library only, TAP on stdout.  The
environment names the suite requests.sh started: B (build directory),
CONF, T (its temporary directory), PORT (mcpd's TCP port on 127.0.0.1),
TA and TB (alice's and bob's tokens), MCPD_PID.

Every case asserts the outcome the protocol, RFC 9112 and mcpd(8)
promise: the exact status and JSON-RPC error, the connection closed where
it must be, and nothing of a refused request executed.  "Executed" is
read in the audit log, which records every tool call, even a failed one:
requests that must never run carry a unique mark, and at the end no
record may hold one (a control request, sent plainly, proves the marks
would show).
"""
import json
import os
import random
import re
import resource
import select
import socket
import subprocess
import sys
import threading
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..",
                                "integration"))
import mcpclient  # noqa: E402
from mcpclient import ok, diag, done  # noqa: E402

B, CONF, T = os.environ["B"], os.environ["CONF"], os.environ["T"]
PORT = int(os.environ["PORT"])
TA, TB = os.environ["TA"], os.environ["TB"]
MCPD = int(os.environ["MCPD_PID"])
ADDR = ("127.0.0.1", PORT)
MAX = 32 << 20			# mcpd(8): messages of at most 32 MiB
RUNID = "%08x" % random.getrandbits(32)
MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {}}


def status_kb(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


# --- the wire ------------------------------------------------------------


def connect(timeout=10):
    s = socket.create_connection(ADDR, timeout=timeout)
    s.setblocking(False)
    return s


def send_all(s, data):
    """Send what the peer takes; False once it closed on us, or stopped
    taking anything for a minute."""
    view = memoryview(data)
    end = time.monotonic() + 60
    while view:
        if time.monotonic() > end:
            return False
        try:
            n = s.send(view[:1 << 20])
            view = view[n:]
        except BlockingIOError:
            select.select([], [s], [], 0.5)
        except OSError:
            return False
    return True


def read_from(s, wait=3.0, until=None):
    """What comes until the peer closes (closed True), wait seconds of
    silence, until(bytes) says enough, or a minute is over."""
    got = bytearray()
    closed = False
    last = time.monotonic()
    end = time.monotonic() + 60
    while True:
        left = min(wait - (time.monotonic() - last), end - time.monotonic())
        if left <= 0:
            break
        r, _, _ = select.select([s], [], [], left)
        if not r:
            continue
        try:
            b = s.recv(1 << 20)
        except BlockingIOError:
            continue
        except OSError:
            closed = True
            break
        if not b:
            closed = True
            break
        got += b
        last = time.monotonic()
        if until is not None and until(bytes(got)):
            break
    return bytes(got), closed


def exchange(data, wait=3.0, shut=False, until=None):
    """One connection: data sent, the answer and whether it closed."""
    s = connect()
    try:
        send_all(s, data)
        if shut:
            try:
                s.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        return read_from(s, wait, until)
    finally:
        s.close()


class Resp:
    def __init__(self, status, reason, headers, body):
        self.status, self.reason = status, reason
        self.headers, self.body = headers, body

    def header(self, name):
        v = self.headers.get(name.lower())
        return v[-1] if v else None

    def json(self):
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    def err(self):
        j = self.json()
        return j.get("error", {}).get("code") if isinstance(j, dict) \
            else None

    def __repr__(self):
        return "%s %s %r %r" % (self.status, self.reason, self.headers,
                                self.body[:300])


def responses(data):
    """The whole HTTP/1.1 responses in data, in order."""
    out = []
    i = 0
    while i < len(data):
        j = data.find(b"\r\n\r\n", i)
        if j < 0:
            break
        lines = data[i:j].decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/"):
            break
        hdrs = {}
        for l in lines[1:]:
            k, _, v = l.partition(":")
            hdrs.setdefault(k.strip().lower(), []).append(v.strip())
        i = j + 4
        if "content-length" in hdrs:
            n = int(hdrs["content-length"][-1])
            if i + n > len(data):
                break
            body = data[i:i + n]
            i += n
        elif hdrs.get("transfer-encoding", [""])[-1].lower() == "chunked":
            body = bytearray()
            while True:
                k = data.find(b"\r\n", i)
                if k < 0:
                    return out
                n = int(data[i:k].split(b";")[0], 16)
                body += data[k + 2:k + 2 + n]
                i = k + 2 + n + 2
                if n == 0:
                    break
            body = bytes(body)
        else:
            body = data[i:]
            i = len(data)
        out.append(Resp(int(parts[1]), parts[2] if len(parts) > 2 else "",
                        hdrs, body))
    return out


def one_response(data):
    return len(responses(data)) >= 1


def first(data):
    rs = responses(data)
    return rs[0] if rs else Resp(0, "none", {}, data[:300])


def head(method, path="/mcp", headers=(), host="localhost", version="1.1"):
    h = "%s %s HTTP/%s\r\n" % (method, path, version)
    if host is not None:
        h += "Host: %s\r\n" % host
    for x in headers:
        h += x + "\r\n"
    return h.encode("latin-1")


def post_bytes(body, token=TA, sid=None, extra=(), ctype="application/json",
               accept="application/json, text/event-stream", close=True,
               host="localhost"):
    hs = []
    if token is not None:
        hs.append("Authorization: Bearer " + token)
    if ctype is not None:
        hs.append("Content-Type: " + ctype)
    if accept is not None:
        hs.append("Accept: " + accept)
    if sid is not None:
        hs.append("Mcp-Session-Id: " + sid)
    hs += list(extra)
    hs.append("Content-Length: %d" % len(body))
    if close:
        hs.append("Connection: close")
    return head("POST", headers=hs, host=host) + b"\r\n" + body


def post(body, wait=20.0, **kw):
    if not isinstance(body, bytes):
        body = json.dumps(body).encode()
    data, closed = exchange(post_bytes(body, **kw), wait=wait)
    return first(data)


def jbody(x):
    return json.dumps(x, separators=(",", ":")).encode()


def init_msg(version, rid="init"):
    return {"jsonrpc": "2.0", "id": rid, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {},
                       "clientInfo": {"name": "hostile", "version": "1"}}}


def session(token, version="2025-11-25"):
    r = post(init_msg(version), token=token)
    sid = r.header("mcp-session-id")
    if sid is None:
        raise RuntimeError("no session: %r" % r)
    post({"jsonrpc": "2.0", "method": "notifications/initialized"},
         token=token, sid=sid, extra=("MCP-Protocol-Version: " + version,))
    return sid


def call(token, sid, name, args, rid=1, wait=60.0):
    """A tools/call in a legacy session: the JSON-RPC answer."""
    r = post({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
              "params": {"name": name, "arguments": args}},
             token=token, sid=sid, wait=wait,
             accept="application/json")
    return r.json() or {}


def rpc(token, sid, method, params, rid=1):
    r = post({"jsonrpc": "2.0", "id": rid, "method": method,
              "params": params}, token=token, sid=sid,
             accept="application/json")
    return r.json() or {}


def result(m):
    return m.get("result", {}) if isinstance(m, dict) else {}


def text(m):
    return "".join(c.get("text", "") for c in result(m).get("content", [])
                   if isinstance(c, dict))


# A request that, were it ever executed, leaves its mark in the audit
# log: a modern tools/call of sandbox_exec on a sandbox that does not
# exist (recorded as a failed call; nothing starts).
MARKS = []


def acting(tag, refused=True):
    mark = "smug-%s-%s" % (re.sub(r"[^a-z0-9]+", "-", tag.lower()), RUNID)
    if refused:
        MARKS.append(mark)
    body = jbody({"jsonrpc": "2.0", "id": mark, "method": "tools/call",
                  "params": {"_meta": META, "name": "sandbox_exec",
                             "arguments": {"sandbox": mark,
                                           "command": "true"}}})
    hdrs = ("MCP-Protocol-Version: " + MODERN, "Mcp-Method: tools/call",
            "Mcp-Name: sandbox_exec")
    return body, hdrs


def acting_request(tag, refused=True):
    body, hdrs = acting(tag, refused)
    return post_bytes(body, extra=hdrs, close=False)


def audit_records():
    out = subprocess.run([B + "/mcpctl", "-f", CONF, "audit", "export"],
                         capture_output=True, timeout=30)
    return out.stdout.decode("utf-8", "replace")


def audit_control(tag):
    """A plain tool call marked with tag, and the records once it is in.

    mcpd's records reach auditd after the answer, in the order mcpd
    makes them: once the control is there, so is all before it."""
    control = "smug-control-%s-%s" % (tag, RUNID)
    m = call(TA, ALICE["sid"], "sandbox_exec", {"sandbox": control,
                                                "command": "true"})
    end = time.monotonic() + 10
    while True:
        recs = audit_records()
        if control in recs or time.monotonic() > end:
            return control in recs, recs, m
        time.sleep(0.1)


# --- the cases ---------------------------------------------------------------

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def run(fn):
    try:
        fn()
    except Exception:
        ok(False, "%s ran to its end" % fn.__name__, traceback.format_exc())


# Slow clients, in the background while the rest goes on: heads dribbled
# a byte a second, and strangers' bodies.  mcpd gives a head 10 seconds,
# and the body of a request it refused from its head no longer.
SLOW = []
SLOW_HEAD = b"GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: " + b"a" * 64 + \
    b"\r\n\r\n"
SLOW_BODY = (b"POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: "
             b"application/json\r\nContent-Length: 100000\r\n\r\n")


def slowloris(heads=16, bodies=4):
    socks = []
    for i in range(heads + bodies):
        s = connect()
        c = {"s": s, "sent": 0, "start": time.monotonic(), "got": b"",
             "closed": None, "text": SLOW_HEAD}
        if i >= heads:
            send_all(s, SLOW_BODY)
            c["text"] = b"x" * 1000
        socks.append(c)
    end = time.monotonic() + 20
    while time.monotonic() < end and any(c["closed"] is None for c in socks):
        for c in socks:
            if c["closed"] is None and c["sent"] < len(c["text"]):
                try:
                    c["s"].send(c["text"][c["sent"]:c["sent"] + 1])
                    c["sent"] += 1
                except OSError:
                    pass
        tick = time.monotonic() + 1
        while time.monotonic() < tick:
            live = [c["s"] for c in socks if c["closed"] is None]
            if not live:
                break
            r, _, _ = select.select(live, [], [], max(0, tick -
                                                      time.monotonic()))
            for c in socks:
                if c["s"] in r:
                    try:
                        b = c["s"].recv(4096)
                    except OSError:
                        b = b""
                    if b:
                        c.setdefault("first", time.monotonic() - c["start"])
                        c["got"] += b
                    else:
                        c["closed"] = time.monotonic() - c["start"]
    for c in socks:
        c["s"].close()
        SLOW.append(c)


@case
def http_stranger_bodies():
    # A body is read and kept only for a client that would be served: a
    # stranger announcing 32 MiB is answered from the head.
    s = connect()
    hs = ["Content-Type: application/json", "Content-Length: %d" % MAX]
    t0 = time.monotonic()
    send_all(s, head("POST", headers=hs) + b"\r\n")
    data, closed = read_from(s, wait=2, until=one_response)
    secs = time.monotonic() - t0
    r = first(data)
    ok(r.status == 401 and r.header("connection") == "close" and
       secs < 1.5 and not closed,
       "a stranger's POST announcing 32 MiB is 401 from its head, before "
       "a byte of body, Connection: close (%s in %.2fs)" % (r.status, secs),
       r)
    t0 = time.monotonic()
    send_all(s, b"x" * MAX)
    data, closed = read_from(s, wait=5)
    ok(closed and data == b"",
       "its body is read to its end and dropped, then the connection "
       "closes (%.2fs)" % (time.monotonic() - t0), data[:200])
    s.close()

    hs = ["Content-Type: application/json", "Transfer-Encoding: chunked"]
    data, closed = exchange(head("POST", headers=hs) + b"\r\n",
                            until=one_response, wait=2)
    r = first(data)
    ok(r.status == 401 and r.header("connection") == "close",
       "a stranger's chunked POST (no length at all) is 401 from its head "
       "(%s)" % r.status, r)

    # Sixteen strangers sending 16 MiB each: before, mcpd kept it all.
    base = status_kb(MCPD, "VmRSS")
    conns = []
    hs = ["Authorization: Bearer not-" + TA, "Content-Type: application/json",
          "Content-Length: %d" % MAX]
    for i in range(16):
        c = connect()
        send_all(c, head("POST", headers=hs) + b"\r\n")
        conns.append(c)
    chunk = b"y" * (1 << 20)
    for c in conns:
        for k in range(16):
            send_all(c, chunk)
    time.sleep(0.3)
    grown = status_kb(MCPD, "VmRSS") - base
    got = [read_from(c, wait=0.5, until=one_response)[0] for c in conns]
    for c in conns:
        c.close()
    ok(grown < 16 * 1024 and all(first(g).status == 401 for g in got),
       "16 strangers, 16 MiB of body each, all 401: mcpd grew by %d KiB, "
       "not 256 MiB" % grown, [first(g) for g in got][:3])


@case
def http_oversize():
    s = connect()
    hs = ["Authorization: Bearer " + TA, "Content-Type: application/json",
          "Content-Length: 18446744073709551615"]
    send_all(s, head("POST", headers=hs) + b"\r\n")
    data, closed = read_from(s, wait=3)
    s.close()
    r = first(data)
    ok(r.status == 413 and closed,
       "an honest Content-Length of 2^64-1 is 413 at once, and the "
       "connection closes (%s)" % r.status, r)

    # A lying length: chunks that are each small, and add up to more.
    s = connect()
    hs = ["Authorization: Bearer " + TA, "Content-Type: application/json",
          "Transfer-Encoding: chunked"]
    send_all(s, head("POST", headers=hs) + b"\r\n")
    chunk = b"100000\r\n" + b"z" * (1 << 20) + b"\r\n"
    for i in range(32):
        send_all(s, chunk)
    send_all(s, b"100000\r\n")
    data, closed = read_from(s, wait=5)
    s.close()
    r = first(data)
    ok(r.status == 413 and closed,
       "chunks of 1 MiB past 32 MiB in all: 413 at the chunk that "
       "crosses, and the connection closes (%s)" % r.status, r)

    for size in ("ffffffffffffffff", "-1", "1" * 17):
        data, closed = exchange(head("POST", headers=hs) + b"\r\n" +
                                size.encode() + b"\r\n")
        r = first(data)
        want = 413 if size.startswith("f") else 400
        ok(r.status == want and closed,
           "a chunk size of %s is %d and the connection closes (%s)" %
           (size, want, r.status), r)


@case
def http_smuggling():
    ib = jbody(init_msg("2025-11-25"))
    base = ["Authorization: Bearer " + TA, "Content-Type: application/json"]
    shapes = {
        "CL.TE": (["Content-Length: %d", "Transfer-Encoding: chunked"],
                  b"0\r\n\r\n"),
        "TE.CL": (["Transfer-Encoding: chunked", "Content-Length: %d"],
                  b"0\r\n\r\n"),
        "CL.CL (conflicting)": (["Content-Length: 5", "Content-Length: %d"],
                                b"{}   "),
        "CL with a list": (["Content-Length: 5, %d"], b"{}   "),
        "TE of identity, then chunked": (["Transfer-Encoding: identity",
                                          "Transfer-Encoding: chunked"],
                                         b"0\r\n\r\n"),
        "TE behind a space-folded line": (["X-A: 1", " Transfer-Encoding: "
                                           "chunked", "Content-Length: %d"],
                                          b"0\r\n\r\n"),
        "TE: chunked with a NUL": (["Transfer-Encoding: chunked\0",
                                    "Content-Length: %d"], b"0\r\n\r\n"),
        "TE behind a bare CR": (["X-A: 1\rTransfer-Encoding: chunked",
                                 "Content-Length: %d"], b"0\r\n\r\n"),
    }
    for name, (hs, prefix) in shapes.items():
        smug = acting_request("smuggle-" + name.split()[0])
        body = prefix + smug
        hs = [h.replace("%d", str(len(body))) for h in hs]
        data, closed = exchange(head("POST", headers=base + hs) + b"\r\n" +
                                body, wait=3)
        rs = responses(data)
        ok(len(rs) == 1 and rs[0].status in (400, 501) and closed,
           "%s with a request hidden in the body: one 4xx/501 (%s), the "
           "connection closed, nothing after it answered" %
           (name, [r.status for r in rs]), rs)

    # RFC 9112, 6.1: Transfer-Encoding in an HTTP/1.0 request is faulty
    # framing: answered, then closed, whatever Connection says.
    smug = acting_request("smuggle-http10")
    body = b"%x\r\n%s\r\n0\r\n\r\n" % (len(ib), ib)
    hs = base + ["Connection: keep-alive", "Transfer-Encoding: chunked"]
    data, closed = exchange(head("POST", version="1.0", host=None,
                                 headers=hs) + b"\r\n" + body + smug, wait=3)
    rs = responses(data)
    ok(len(rs) == 1 and rs[0].status == 200 and
       rs[0].header("connection") == "close" and closed,
       "HTTP/1.0 with keep-alive and chunked: the request is answered with "
       "Connection: close and the one pipelined after it never read (%s)" %
       [r.status for r in rs], rs)

    # Content-Length: 0 and a second request in the same packet: that one
    # is answered as a request of its own, never as this one's body.
    smug = acting_request("pipelined-ok", refused=False)
    data, closed = exchange(head("GET", "/", ["Content-Length: 0"]) +
                            b"\r\n" + smug, wait=5,
                            until=lambda d: len(responses(d)) >= 2)
    rs = responses(data)
    ok(len(rs) == 2 and rs[0].status == 200 and rs[1].status == 200 and
       b"no sandbox smug-pipelined-ok" in rs[1].body,
       "a pipelined request after an empty body is read as the next "
       "request, in order (%s)" % [r.status for r in rs], rs)


@case
def http_request_shapes():
    data, closed = exchange(b"GET /\r\n\r\n")
    r = first(data)
    ok(r.status == 400 and closed, "an HTTP/0.9 request is 400 and closed "
       "(%s)" % r.status, r)
    data, closed = exchange(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\4\0\0\0"
                            b"\0\0")
    r = first(data)
    ok(r.status == 505 and closed and data.startswith(b"HTTP/1.1 "),
       "the HTTP/2 connection preface is 505 in HTTP/1.1, and closed (%s)" %
       r.status, r)
    hs = ["Connection: Upgrade, HTTP2-Settings", "Upgrade: h2c",
          "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA", "Connection: close"]
    data, closed = exchange(head("GET", "/", hs) + b"\r\n")
    r = first(data)
    ok(r.status == 200 and data.startswith(b"HTTP/1.1 200"),
       "an h2c upgrade is ignored: a plain HTTP/1.1 200, no 101 (%s)" %
       r.status, r)
    line = b"GET /" + b"a" * (8192 - 14) + b" HTTP/1.1"
    data, _ = exchange(line + b"\r\nHost: localhost\r\nConnection: close"
                       b"\r\n\r\n")
    r1 = first(data)
    data, closed = exchange(line.replace(b"GET /", b"GET /a") +
                            b"\r\nHost: localhost\r\n\r\n")
    r2 = first(data)
    ok(len(line) == 8192 and r1.status == 404 and r2.status == 414 and
       closed, "a request line of 8192 bytes is read (%s), of 8193 is 414 "
       "and closed (%s)" % (r1.status, r2.status), (r1, r2))
    hl = "X-Big: " + "b" * (8192 - 7)
    data, _ = exchange(head("GET", "/", [hl, "Connection: close"]) + b"\r\n")
    r1 = first(data)
    data, closed = exchange(head("GET", "/", [hl + "b"]) + b"\r\n")
    r2 = first(data)
    ok(r1.status == 200 and r2.status == 431 and closed,
       "a header line of 8192 bytes is read (%s), of 8193 is 431 and "
       "closed (%s)" % (r1.status, r2.status), (r1, r2))
    data, closed = exchange(b"GET / HTTP/1.1\r\nHost: localhost\r\nX-\0A: 1"
                            b"\r\n\r\n")
    r = first(data)
    ok(r.status == 400 and closed, "a NUL in a header name is 400 and "
       "closed (%s)" % r.status, r)
    data, closed = exchange(b"G\0T / HTTP/1.1\r\nHost: localhost\r\n\r\n")
    r = first(data)
    ok(r.status == 400 and closed, "a NUL in the method is 400 and closed "
       "(%s)" % r.status, r)


@case
def http_content_types():
    for ct in ("multipart/form-data; boundary=x", "text/plain; "
               "charset=application/json", "application/json-seq",
               "application/json,text/plain"):
        body, hdrs = acting("ctype")
        r = post(body, ctype=ct, extra=hdrs)
        ok(r.status == 415 and r.err() == -32000,
           "Content-Type \"%s\" with a tool call in the body is 415, and "
           "the call never runs (%s)" % (ct, r.status), r)
    body, hdrs = acting("noctype")
    r = post(body, ctype=None, extra=hdrs)
    ok(r.status == 415, "no Content-Type at all is 415 (%s)" % r.status, r)
    body, hdrs = acting("accept")
    r = post(body, accept="text/html, image/*;q=0.9, */x", extra=hdrs)
    ok(r.status == 406, "an Accept listing neither JSON nor event streams "
       "is 406, and the call never runs (%s)" % r.status, r)


@case
def http_rebinding():
    for host in ("attacker.example:%d" % PORT, "localhost.:%d" % PORT,
                 "127.0.0.1:%d@attacker.example" % PORT, "0x7f.1:%d" % PORT,
                 "2130706433:%d" % PORT):
        body, hdrs = acting("host")
        s = connect()
        send_all(s, post_bytes(body, extra=hdrs, host=host, close=False))
        data, closed = read_from(s, wait=3)
        s.close()
        r = first(data)
        ok(r.status == 403 and closed and r.err() == -32000,
           "Host \"%s\" with a valid token and a tool call: 403, closed, "
           "never run (%s)" % (host, r.status), r)
    for origin in ("http://attacker.example",
                   "http://localhost:80@attacker.example",
                   "http://[::1]attacker", "http://localhost.attacker.example",
                   "file://", "http://127.0.0.1:%d/ x" % PORT):
        body, hdrs = acting("origin")
        r = post(body, extra=hdrs + ("Origin: " + origin,))
        ok(r.status == 403 and r.err() == -32000,
           "Origin \"%s\" with a valid token and a tool call: 403, never "
           "run (%s)" % (origin, r.status), r)


@case
def http_credentials():
    ib = jbody(init_msg("2025-11-25"))
    bad = {
        "wrong token, right length": "Bearer " + TA[:-1] +
        ("0" if TA[-1] != "0" else "1"),
        "bob's prefix, alice's length": "Bearer " + (TB + TA)[:len(TA)],
        "alice's token and junk": "Bearer " + TA + " junk",
        "alice's token, comma, bob's": "Bearer %s,Bearer %s" % (TA, TB),
        "Basic with alice's token": "Basic " + TA,
        "alice's token, no scheme": TA,
        "BEARER with a wrong token": "BEARER x" + TA,
        "an empty Bearer": "Bearer",
        "a token of 8000 bytes": "Bearer " + "t" * 8000,
    }
    bodies = set()
    leaks = []
    for name, auth in bad.items():
        r = post(ib, token=None, extra=("Authorization: " + auth,))
        bodies.add((r.status, r.body, r.header("www-authenticate")))
        if re.search(rb"alice|bob|tenant", r.body, re.I):
            leaks.append(name)
        ok(r.status == 401 and r.err() == -32000 and
           'error="invalid_token"' in (r.header("www-authenticate") or ""),
           "Authorization: %s is 401 invalid_token (%s)" % (name, r.status),
           r)
    ok(len(bodies) == 1 and not leaks,
       "every bad credential gets the same bytes back, naming no tenant "
       "(%d different answers%s)" % (len(bodies),
                                     ", leaks: %s" % leaks if leaks else ""),
       bodies)
    r = post(ib, token=None, extra=("Authorization: Bearer " + TA + "\x01",))
    ok(r.status == 400, "a control byte after the token is 400 at the "
       "parser (%s)" % r.status, r)


@case
def http_half_close():
    ping = jbody({"jsonrpc": "2.0", "id": "hc", "method": "ping"})
    sid = ALICE["sid"]
    data, closed = exchange(post_bytes(ping, sid=sid, close=False), shut=True,
                            wait=3)
    r = first(data)
    ok(r.status == 200 and r.json() == {"jsonrpc": "2.0", "id": "hc",
                                         "result": {}} and closed,
       "a request, then the client's half-close: answered in full, then "
       "closed (%s)" % r.status, r)
    t0 = time.monotonic()
    data, closed = exchange(b"POST /mcp HTTP/1.1\r\nHost: loc", shut=True,
                            wait=5)
    secs = time.monotonic() - t0
    ok(closed and data == b"" and secs < 2,
       "half a head, then a half-close: closed at once without an answer "
       "(%.2fs)" % secs, data)


@case
def rpc_shapes():
    sid = ALICE["sid"]
    deep = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":' + \
        b"[" * 100000 + b"]" * 100000 + b"}}"
    t0 = time.monotonic()
    r = post(deep, sid=sid)
    ok(r.status == 400 and r.err() == -32700 and r.json()["id"] is None and
       time.monotonic() - t0 < 2,
       "100000 nested arrays over HTTP: 400, -32700, id null (%s, %s)" %
       (r.status, r.err()), r)
    r = post(b'{"jsonrpc":"2.0","id":"str","method":"ping","params":{"s":"' +
             b"[{" * 100000 + b'"}}', sid=sid)
    ok(r.status == 200 and r.json() == {"jsonrpc": "2.0", "id": "str",
                                         "result": {}},
       "200000 brackets inside a string are text, not nesting: answered "
       "(%s)" % r.status, r)
    for name, body in (
            ("invalid UTF-8 in a key", b'{"jsonrpc":"2.0","id":1,"method":'
             b'"ping","params":{"k\xff":1}}'),
            ("an overlong '/' (C0 AF) in a key", b'{"jsonrpc":"2.0","id":1,'
             b'"method":"ping","params":{"\xc0\xaf":1}}'),
            ("a UTF-8 encoded surrogate in a value", b'{"jsonrpc":"2.0","id"'
             b':1,"method":"ping","params":{"k":"\xed\xb0\x80"}}'),
            ("a lone surrogate escape", b'{"jsonrpc":"2.0","id":1,"method":'
             b'"ping","params":{"k":"\\ud800"}}'),
            ("a reversed surrogate pair", b'{"jsonrpc":"2.0","id":1,"method":'
             b'"ping","params":{"k":"\\udc00\\ud800"}}'),
            ("a \\u0000 in a key", b'{"jsonrpc":"2.0","id":1,"method":"ping",'
             b'"params":{"a\\u0000b":1}}'),
            ("UTF-16", '{"jsonrpc":"2.0","id":1,"method":"ping"}'
             .encode("utf-16")),
            ("a byte-order mark", b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,'
             b'"method":"ping"}')):
        r = post(body, sid=sid)
        ok(r.status == 400 and r.err() == -32700 and r.json()["id"] is None,
           "%s: 400, -32700, id null (%s, %s)" % (name, r.status, r.err()),
           r)
    for idv in ('{"a":1}', "[1]", "true", "1.5", "-0.0",
                "18446744073709551616", "1e400"):
        r = post(b'{"jsonrpc":"2.0","id":%s,"method":"ping"}' % idv.encode(),
                 sid=sid)
        j = r.json() or {}
        ok(r.status == 400 and j.get("id", 0) is None and
           r.err() in ((-32600,) if idv != "1e400" else (-32600, -32700)),
           "an id of %s is refused, id null (%s, %s)" % (idv, r.status,
                                                         r.err()), r)
    long_method = "m" * 100000
    r = post({"jsonrpc": "2.0", "id": 1, "method": long_method}, sid=sid)
    ok(r.status == 400 and r.err() == -32600 and len(r.body) < 1024,
       "a method name of 100 KB is -32600, not echoed (%d bytes back)" %
       len(r.body), r)
    m = rpc(TA, sid, "rpc.discover", {})
    ok(m.get("error", {}).get("code") == -32601 and m.get("id") == 1,
       "an unknown method (rpc.discover) is -32601 with its id", m)
    for name, params in (("tools/call with params a string", "x"),
                         ("tools/call with arguments a string",
                          {"name": "sandbox_list", "arguments": "x"}),
                         ("tools/call with a numeric name", {"name": 5}),
                         ("tools/call of run_code<LF>", {"name": "run_code\n",
                                                         "arguments": {}}),
                         ("tools/call of ../run_code", {"name": "../run_code",
                                                        "arguments": {}})):
        m = rpc(TA, sid, "tools/call", params)
        ok(m.get("error", {}).get("code") == -32602 and m.get("id") == 1,
           "%s is -32602 (%s)" % (name, m.get("error")), m)
    for name, args, word in (
            ("code a number", {"language": "python", "code": 5}, "'code'"),
            ("timeout a string", {"language": "python", "code": "1",
                                  "timeout": "1e9"}, "timeout"),
            ("code of 4 MiB + 1", {"language": "python",
                                   "code": "#" * ((4 << 20) + 1)}, "code"),
            ("an env name with '='", {"language": "python",
                                                  "code": "1",
                                                  "env": {"A=B": "x"}},
             "env"),
            ("a file whose path is a number",
             {"language": "python", "code": "1",
              "files": [{"path": 5, "content": "x"}]}, "'files'[0]")):
        t0 = time.monotonic()
        m = call(TA, sid, "run_code", args)
        secs = time.monotonic() - t0
        ok(result(m).get("isError") is True and word in text(m) and secs < 3,
           "run_code with %s: an error result naming %s, at once (%.2fs)" %
           (name, word, secs), m)


@case
def rpc_batches():
    sid = ALICE["sid0326"]
    n = 10000
    batch = [{"jsonrpc": "2.0", "id": i, "method": "ping" if i % 2 else
              "nosuch/method"} for i in range(n)]
    t0 = time.monotonic()
    r = post(jbody(batch), sid=sid, wait=30)
    secs = time.monotonic() - t0
    j = r.json()
    good = isinstance(j, list) and len(j) == n and all(
        (m.get("result") == {} if m["id"] % 2 else
         m.get("error", {}).get("code") == -32601) for m in j) and \
        sorted(m["id"] for m in j) == list(range(n))
    ok(r.status == 200 and good and secs < 10,
       "a batch of 10000 in a 2025-03-26 session: 10000 answers, each to its "
       "own id (%s, %.2fs)" % (r.status, secs), r)
    r = post(b'[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0",'
             b'"id":7,"method":"ping"},{"jsonrpc":"2.0","id":7,"method":"x"}]',
             sid=sid)
    j = r.json()
    ok(isinstance(j, list) and len(j) == 3 and all(m["id"] == 7 for m in j),
       "a batch with one id thrice: three answers, none lost or merged", r)
    r = post(b'[[{"jsonrpc":"2.0","id":1,"method":"ping"}]]', sid=sid)
    j = r.json()
    ok(isinstance(j, list) and len(j) == 1 and j[0]["id"] is None and
       j[0]["error"]["code"] == -32600,
       "a batch inside a batch is one -32600, id null, nothing run", r)
    body, hdrs = acting("batch")
    inner = json.loads(body)
    inner["params"].pop("_meta")
    r = post(jbody([inner, {"jsonrpc": "2.0", "id": 2, "method": "ping"}]),
             sid=ALICE["sid"])
    ok(r.status == 400 and r.err() == -32600 and r.body.startswith(b"{"),
       "a batch in a 2025-11-25 session is one -32600 and the tool call in "
       "it never runs (%s)" % r.status, r)
    body, hdrs = acting("notification")
    note = json.loads(body)
    note.pop("id")
    note["params"].pop("_meta")
    r = post(jbody(note), sid=ALICE["sid"])
    ok(r.status == 202 and r.body == b"",
       "a tools/call without an id is a notification: 202, never run (%s)" %
       r.status, r)


@case
def tenants_sessions():
    asid = ALICE["sid"]
    unknown = "%032x" % random.getrandbits(128)
    ping = {"jsonrpc": "2.0", "id": "p", "method": "ping"}
    ref = post(ping, token=TB, sid=unknown)
    ok(ref.status == 404 and ref.err() == -32001,
       "an unknown session is 404, -32001 (%s)" % ref.status, ref)
    for name, req in (
            ("POST", post_bytes(jbody(ping), token=TB, sid=asid)),
            ("GET", head("GET", headers=["Authorization: Bearer " + TB,
                                         "Accept: text/event-stream",
                                         "Mcp-Session-Id: " + asid,
                                         "Connection: close"]) + b"\r\n"),
            ("DELETE", head("DELETE", headers=["Authorization: Bearer " + TB,
                                               "Mcp-Session-Id: " + asid,
                                               "Connection: close"]) +
             b"\r\n")):
        data, _ = exchange(req)
        r = first(data)
        ok(r.status == 404 and r.body == ref.body,
           "bob's %s on alice's session is 404 with the very bytes of an "
           "unknown session's (%s)" % (name, r.status), r)
    r = post(ping, token=TA, sid=asid.upper())
    ok(r.status == 404 and r.body == ref.body,
       "alice's session id in upper case is no session (%s)" % r.status, r)
    r = post(ping, token=TA, sid=asid)
    ok(r.status == 200 and r.json().get("result") == {},
       "alice's session still answers after bob's DELETE (%s)" % r.status,
       r)


@case
def tenants_sandboxes():
    bsid = BOB["sid"]
    asb = ALICE["sandbox"]
    fake = "%032x" % random.getrandbits(128)

    def same(tool, args_for):
        """Bob's answers on alice's sandbox, by id and by name, equal his
        on an id and a name that do not exist."""
        got = {}
        for ref in (asb, fake, "vault", "nosuchbox"):
            m = call(TB, bsid, tool, args_for(ref), rid="x")
            got[ref] = json.dumps(m, sort_keys=True).replace(ref, "REF")
        return got[asb] == got[fake] and got["vault"] == got["nosuchbox"], \
            got
    ops = (
        ("sandbox_exec", lambda r: {"sandbox": r,
                                    "command": "cat secret.txt"}),
        ("sandbox_read_file", lambda r: {"sandbox": r, "path": "secret.txt"}),
        ("sandbox_write_file", lambda r: {"sandbox": r, "path": "secret.txt",
                                          "content": "owned by bob"}),
        ("sandbox_list_files", lambda r: {"sandbox": r}),
        ("sandbox_delete_file", lambda r: {"sandbox": r,
                                           "path": "secret.txt"}),
        ("run_code", lambda r: {"sandbox": r, "language": "python",
                                "code": "print(open('secret.txt').read())"}),
        ("sandbox_stop", lambda r: {"sandbox": r}),
    )
    for tool, fn in ops:
        good, got = same(tool, fn)
        ok(good and RUNID not in json.dumps(got) and
           '"isError":true' in got[asb].replace(" ", ""),
           "bob's %s on alice's sandbox (by id and by name) answers exactly "
           "as on one that does not exist" % tool, got)
    for kind in ("state", "logs", "files/secret.txt"):
        got = {}
        for ref in (asb, fake):
            m = rpc(TB, bsid, "resources/read",
                    {"uri": "sandbox://%s/%s" % (ref, kind)}, rid="r")
            got[ref] = json.dumps(m, sort_keys=True).replace(ref, "REF")
        ok(got[asb] == got[fake] and '"error"' in got[asb],
           "bob's resources/read of sandbox://<alice's>/%s is the error of "
           "an unknown one" % kind, got)
    m = call(TB, bsid, "sandbox_list", {})
    ok(asb not in json.dumps(m) and "vault" not in json.dumps(m),
       "alice's sandbox is not in bob's sandbox_list", m)
    m = call(TA, ALICE["sid"], "sandbox_exec", {"sandbox": "vault",
                                                "command": "cat secret.txt"})
    out = (result(m).get("structuredContent", {}).get("results") or
           [{}])[0].get("stdout")
    ok(out == ALICE["secret"],
       "alice's sandbox still runs her commands, its file intact (%r)" % out,
       m)


@case
def tenants_tasks():
    # Alice's call runs as a task; bob asks for it by its id.
    m = post({"jsonrpc": "2.0", "id": "t", "method": "tools/call", "params": {
        "name": "run_code", "task": {"ttl": 60000}, "arguments": {
            "language": "python",
            "code": "import time\ntime.sleep(1.5)\nprint('task done')"}}},
        sid=ALICE["sid"], accept="application/json").json() or {}
    tid = result(m).get("task", {}).get("taskId", "")
    fake = "%032x" % random.getrandbits(128)
    for method in ("tasks/get", "tasks/result", "tasks/cancel"):
        got = {}
        for ref in (tid, fake):
            a = rpc(TB, BOB["sid"], method, {"taskId": ref}, rid="q")
            got[ref] = json.dumps(a, sort_keys=True).replace(ref, "REF")
        ok(len(tid) == 32 and got[tid] == got[fake] and
           '"error"' in got[tid],
           "bob's %s on alice's task answers exactly as on an unknown "
           "one" % method, got)
    a = rpc(TB, BOB["sid"], "tasks/list", {})
    ok("result" in a and tid not in json.dumps(a),
       "alice's task is not in bob's tasks/list", a)
    m = rpc(TA, ALICE["sid"], "tasks/result", {"taskId": tid})
    ok(result(m).get("structuredContent", {}).get("stdout") == "task done\n",
       "alice's task ran to its end all the same", m)


@case
def tenants_cancel():
    # Alice's call in flight; bob cancels its id, in his session and
    # without one: her call runs to its end.
    asid = ALICE["sid"]
    rid = "victim-" + RUNID
    s = connect()
    send_all(s, post_bytes(jbody({"jsonrpc": "2.0", "id": rid,
                                  "method": "tools/call", "params": {
                                      "name": "run_code", "arguments": {
                                          "language": "python",
                                          "code": "import time\ntime.sleep("
                                          "2)\nprint('survived')"}}}),
                           sid=asid, accept="application/json"))
    time.sleep(0.7)
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled",
              "params": {"requestId": rid, "reason": "bob says so"}}
    r1 = post(cancel, token=TB, sid=BOB["sid"])
    mc = dict(cancel)
    mc["params"] = dict(cancel["params"], _meta=META)
    r2 = post(mc, token=TB, extra=("MCP-Protocol-Version: " + MODERN,
                                   "Mcp-Method: notifications/cancelled"))
    r3 = post(cancel, token=TB, sid=asid)
    data, _ = read_from(s, wait=30, until=one_response)
    s.close()
    m = first(data).json() or {}
    ok(r1.status == 202 and r2.status == 202 and r3.status == 404 and
       result(m).get("structuredContent", {}).get("stdout") == "survived\n",
       "bob's notifications/cancelled for alice's request (202, 202, and "
       "404 on her session) leave it running to its end", (r1, r2, r3, m))


@case
def http_crowds():
    # Heads that never end fill every slot; the next client is refused
    # cleanly, and once they are gone everyone is served again.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 2048:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
    socks = []
    for i in range(600):
        s = connect()
        send_all(s, b"G")
        socks.append(s)
    time.sleep(0.5)
    held = refused = 0
    for s in socks:
        try:
            d = s.recv(4096)
            if d.startswith(b"HTTP/1.1 503 ") or d == b"":
                refused += 1
        except BlockingIOError:
            held += 1
        except OSError:
            refused += 1
    data, closed = exchange(head("GET", "/") + b"\r\n", wait=2)
    r = first(data)
    ok(r.status == 503 and closed and 400 <= held <= 512 and
       held + refused == 600,
       "600 heads that never end: %d held (at most 512), %d refused; a "
       "fresh client gets a clean 503 and a close (%s)" % (held, refused,
                                                          r.status), r)
    for s in socks:
        s.close()
    t0 = time.monotonic()
    while True:
        r = post(init_msg("2025-11-25"))
        if r.status == 200 or time.monotonic() - t0 > 5:
            break
        time.sleep(0.1)
    ok(r.status == 200, "once they are gone a client is served again "
       "(%s, after %.2fs)" % (r.status, time.monotonic() - t0), r)
    # Connections that say nothing are let go to make room.
    socks = [connect() for i in range(700)]
    time.sleep(0.3)
    t0 = time.monotonic()
    r = post(init_msg("2025-11-25"))
    secs = time.monotonic() - t0
    for s in socks:
        s.close()
    ok(r.status == 200 and secs < 1,
       "700 idle connections: the oldest make room, a client is served "
       "(%s, %.2fs)" % (r.status, secs), r)


# --- stdio -------------------------------------------------------------


class Stdio(mcpclient.Stdio):
    """mcpd --stdio, written raw bytes and read a line at a time."""

    def __init__(self, name):
        super().__init__([B + "/mcpd", "--stdio", "-f", CONF],
                         "%s/stdio-%s.err" % (T, name))

    def write(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def line(self, timeout=10):
        end = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if r:
                b = os.read(self.p.stdout.fileno(), 1 << 20)
                if not b:
                    return None
                self.buf += b
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def init(self, version="2025-06-18"):
        self.write(jbody(init_msg(version)) + b"\n" + jbody(
            {"jsonrpc": "2.0", "method": "notifications/initialized"}) + b"\n")
        return self.line()


PING_AFTER = b'{"jsonrpc":"2.0","id":"after","method":"ping"}\n'
AFTER = {"jsonrpc": "2.0", "id": "after", "result": {}}


@case
def stdio_garbage():
    c = Stdio("garbage")
    c.init()
    for name, junk in (("1 MiB of NUL bytes", b"\0" * (1 << 20)),
                       ("terminal escapes", b"\x1b[2J\x1b]0;owned\x07\x1b[6n"),
                       ("lone CRs", b"\r\r\r\r"),
                       ("invalid UTF-8", b'{"jsonrpc":"2.0","id":"u","method'
                        b'":"ping","params":{"\xf5\x80":1}}')):
        c.write(junk + b"\n" + PING_AFTER)
        a, b = c.line(), c.line()
        ok(a is not None and a.get("error", {}).get("code") == -32700 and
           a.get("id", 0) is None and b == AFTER,
           "stdio, a line of %s: one -32700, id null, and the next line is "
           "answered" % name, (a, b))
    c.write(jbody({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "run_code", "arguments": {
                       "language": "python", "code": "print(1)"}}})[:-9])
    rc = c.close()
    a = c.line(2)
    ok(a is not None and a.get("error", {}).get("code") == -32700 and
       rc == 0, "stdio, EOF in the middle of a message: one -32700, then "
       "exit 0 (%s)" % rc, a)


@case
def stdio_before_init():
    c = Stdio("early")
    c.write(jbody({"jsonrpc": "2.0", "id": "early", "method": "tools/call",
                   "params": {"name": "run_code", "arguments": {
                       "language": "python",
                       "code": "print('too early')"}}}) + b"\n")
    a = c.line()
    rc = c.close()
    ok(a is not None and a.get("error", {}).get("code") == -32600 and
       a.get("id") == "early" and rc == 0,
       "stdio, tools/call before initialize: -32600, nothing run", a)


@case
def stdio_batch():
    c = Stdio("batch")
    c.init("2025-03-26")
    n = 10000
    c.write(jbody([{"jsonrpc": "2.0", "id": i, "method": "ping"}
                   for i in range(n)]) + b"\n" + PING_AFTER)
    a, b = c.line(30), c.line()
    rc = c.close()
    ok(isinstance(a, list) and len(a) == n and
       sorted(m["id"] for m in a) == list(range(n)) and b == AFTER and
       rc == 0, "stdio, a batch of 10000 (2025-03-26): one line of 10000 "
       "answers, then the next line", (str(a)[:200], b))


@case
def stdio_gigabyte():
    c = Stdio("gigabyte")
    c.init()
    time.sleep(0.2)
    pid = c.p.pid
    base = status_kb(pid, "VmHWM")
    t0 = time.monotonic()
    c.write(b'{"jsonrpc":"2.0","id":"big","method":"ping","params":{"x":"')
    chunk = b"a" * (1 << 20)
    for i in range(1024):
        c.p.stdin.write(chunk)
    c.write(b'"}}\n' + PING_AFTER)
    a, b = c.line(60), c.line(10)
    secs = time.monotonic() - t0
    hwm = status_kb(pid, "VmHWM")
    rc = c.close()
    ok(a == {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32700, "message": "message too long"}} and b == AFTER,
       "stdio, a line of 1 GiB: one -32700 \"message too long\", and the "
       "next line is answered (%.1fs)" % secs, (a, b))
    ok(hwm - base < 64 * 1024 and rc == 0,
       "meanwhile mcpd --stdio's peak memory grew by %d KiB, under 64 MiB "
       "(exit %s)" % (hwm - base, rc))


def main():
    global ALICE, BOB
    ALICE, BOB = {}, {}
    base_rss = status_kb(MCPD, "VmRSS")
    # Before the attacks: bob's session, alice's sessions and sandbox.
    BOB["sid"] = session(TB)
    ALICE["sid"] = session(TA)
    ALICE["sid0326"] = session(TA, "2025-03-26")
    ALICE["secret"] = "alice's secret %s\n" % RUNID
    m = call(TA, ALICE["sid"], "sandbox_create", {"name": "vault"})
    ALICE["sandbox"] = result(m).get("structuredContent", {}).get("id", "")
    m = call(TA, ALICE["sid"], "sandbox_write_file", {
        "sandbox": "vault", "path": "secret.txt",
        "content": ALICE["secret"]})
    ok(len(ALICE["sandbox"]) == 32 and not result(m).get("isError"),
       "alice has a sandbox with a file in it (%s)" % ALICE["sandbox"], m)
    found, _, m = audit_control("first")
    ok(found, "a tool call leaves its mark in the audit log (the control)", m)

    slow = threading.Thread(target=slowloris)
    slow_start = time.monotonic()
    slow.start()
    time.sleep(3)
    t0 = time.monotonic()
    r = post(init_msg("2025-11-25"))
    ms = (time.monotonic() - t0) * 1000
    ok(r.status == 200 and ms < 1000,
       "while 20 clients dribble their heads or bodies a byte a second, a "
       "client is served at once (%s, %d ms)" % (r.status, ms), r)
    for fn in CASES:
        if fn is http_crowds:
            continue
        run(fn)
    slow.join()
    diag("slowloris ended %.1fs after it began" %
         (time.monotonic() - slow_start))
    heads = [c for c in SLOW if c["text"] == SLOW_HEAD]
    cut = [c for c in heads if c["got"].startswith(b"HTTP/1.1 408 ") and
           c["closed"] is not None and 9.5 <= c["closed"] <= 13]
    ok(len(cut) == len(heads) == 16,
       "each of the 16 slow heads is cut off with 408 after 10 s, closed "
       "(%s)" % sorted(round(c["closed"] or -1, 1) for c in heads),
       [c["got"][:60] for c in heads])
    bodies = [c for c in SLOW if c["text"] != SLOW_HEAD]
    cut = [c for c in bodies if c["got"].startswith(b"HTTP/1.1 401 ") and
           c["got"].count(b"HTTP/1.1") == 1 and c.get("first", 99) < 1 and
           c["closed"] is not None and 9.5 <= c["closed"] <= 13]
    ok(len(cut) == len(bodies) == 4,
       "4 strangers dribbling a body: 401 at once, then closed after 10 s, "
       "not the 60 a tenant's body gets (%s)" %
       sorted(round(c["closed"] or -1, 1) for c in bodies),
       [c["got"][:60] for c in bodies])
    run(http_crowds)

    found, recs, m = audit_control("last")
    ok(found, "a last control call is in the audit log, after the attacks",
       m)
    seen = [m for m in MARKS if m in recs]
    ok(not seen, "none of the %d refused requests ran: no audit record holds "
       "their marks%s" % (len(MARKS), " (%s)" % seen if seen else ""))
    m = call(TB, BOB["sid"], "run_code", {"language": "python",
                                          "code": "print('bob is fine')"})
    ok(result(m).get("structuredContent", {}).get("stdout") ==
       "bob is fine\n", "bob's session, opened before the attacks, still "
       "runs code", m)
    m = call(TA, ALICE["sid"], "sandbox_stop", {"sandbox": "vault"})
    ok(not result(m).get("isError"), "alice stops her sandbox", m)
    rss = status_kb(MCPD, "VmRSS")
    ok(rss - base_rss < 96 * 1024,
       "mcpd's memory after it all: %d KiB, %d KiB more than before" %
       (rss, rss - base_rss))
    done()


if __name__ == "__main__":
    main()
