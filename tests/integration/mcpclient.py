"""A small MCP client for the tests: JSON-RPC over mcpd --stdio, with TAP.

Only the standard library: the tests run it with /usr/bin/python3.
"""
import json
import os
import select
import subprocess
import sys
import time

_n = 0
_failed = 0


def ok(cond, desc, detail=None):
    global _n, _failed
    _n += 1
    if cond:
        print(f"ok {_n} - {desc}", flush=True)
    else:
        _failed += 1
        print(f"not ok {_n} - {desc}", flush=True)
        if detail is not None:
            for line in str(detail)[:2000].splitlines():
                print(f"#   {line}", flush=True)
    return cond


def diag(msg):
    for line in str(msg).splitlines():
        print(f"# {line}", flush=True)


def done():
    print(f"1..{_n}", flush=True)
    sys.exit(1 if _failed else 0)


class Stdio:
    """mcpd --stdio as a subprocess; every message it writes is kept."""

    def __init__(self, argv, stderr_path, user=None, group=None):
        self.err = open(stderr_path, "ab")
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.err,
                                  user=user, group=group)
        self.buf = b""
        self.notes = []          # notifications and requests, in order
        self.answers = {}        # id -> response
        self.next_id = 1
        self.bad_lines = []

    def send(self, msg):
        self.p.stdin.write(json.dumps(msg).encode() + b"\n")
        self.p.stdin.flush()

    def _pump(self, timeout):
        r, _, _ = select.select([self.p.stdout], [], [], timeout)
        if not r:
            return False
        chunk = os.read(self.p.stdout.fileno(), 65536)
        if not chunk:
            raise EOFError("mcpd closed stdout")
        self.buf += chunk
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            try:
                m = json.loads(line)
            except ValueError:
                self.bad_lines.append(line)
                continue
            if isinstance(m, dict) and "id" in m and "method" not in m:
                self.answers[json.dumps(m["id"])] = m
            else:
                self.notes.append(m)
        return True

    def wait(self, rid, timeout=30):
        key = json.dumps(rid)
        end = time.time() + timeout
        while key not in self.answers:
            left = end - time.time()
            if left <= 0:
                raise TimeoutError(f"no answer to {rid}")
            self._pump(left)
        return self.answers.pop(key)

    def wait_note(self, pred, timeout=10):
        end = time.time() + timeout
        while True:
            for i, m in enumerate(self.notes):
                if pred(m):
                    return self.notes.pop(i)
            left = end - time.time()
            if left <= 0:
                return None
            self._pump(min(left, 0.2))

    def call(self, method, params=None, timeout=30, rid=None):
        rid = self.start(method, params, rid)
        return self.wait(rid, timeout)

    def start(self, method, params=None, rid=None):
        if rid is None:
            rid = self.next_id
            self.next_id += 1
        m = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            m["params"] = params
        self.send(m)
        return rid

    def notify(self, method, params=None):
        m = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            m["params"] = params
        self.send(m)

    def initialize(self, version="2025-11-25", caps=None):
        r = self.call("initialize", {"protocolVersion": version,
                                     "capabilities": caps or {},
                                     "clientInfo": {"name": "tests",
                                                    "version": "1"}})
        self.notify("notifications/initialized")
        return r

    def tool(self, name, args, timeout=60, meta=None):
        params = {"name": name, "arguments": args}
        if meta:
            params["_meta"] = meta
        return self.call("tools/call", params, timeout)

    def close(self, timeout=10):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            rc = self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = self.p.wait()
        self.err.close()
        return rc


def result(r):
    """The result of a response, or {} for an error."""
    return r.get("result", {}) if isinstance(r, dict) else {}


def text(r):
    return "".join(c.get("text", "") for c in result(r).get("content", [])
                   if c.get("type") == "text")


def sc(r):
    return result(r).get("structuredContent", {})


def is_error(r):
    return bool(result(r).get("isError"))
