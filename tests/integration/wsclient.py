#!/usr/bin/env python3
"""A raw WebSocket client (RFC 6455, written for this test from the RFC),
for tests/integration/websocket.sh: the handshakes and frames mcpd must
refuse, byte by byte, which no well-behaved library would send.

    wsclient.py HOST PORT CAFILE TOKEN

Prints lines "ok ...", "not ok ...", "# ..." and "done" last.
"""
import base64
import hashlib
import json
import os
import socket
import ssl
import struct
import sys

HOST, PORT, CAFILE, TOKEN = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
failures = 0


def check(desc, cond, why=""):
    global failures
    if cond:
        print("ok " + desc)
    else:
        failures += 1
        print("not ok " + desc)
        if why:
            for line in str(why).splitlines():
                print("#   " + line)
    sys.stdout.flush()
    return cond


def connect():
    ctx = ssl.create_default_context(cafile=CAFILE)
    ctx.set_alpn_protocols(["http/1.1"])
    raw = socket.create_connection((HOST, PORT), timeout=20)
    return ctx.wrap_socket(raw, server_hostname=HOST)


def read_head(s):
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(1)
        if not chunk:
            break
        buf += chunk
    head = buf.decode("latin-1").split("\r\n")
    status = int(head[0].split()[1]) if head and len(head[0].split()) > 1 else 0
    hdrs = {}
    for line in head[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            hdrs[k.strip().lower()] = v.strip()
    return status, hdrs


def handshake(path="/ws", key=None, version="13", protocols="mcp",
              auth=True, origin=None, extra=""):
    s = connect()
    key = key if key is not None else base64.b64encode(os.urandom(16)).decode()
    lines = ["GET %s HTTP/1.1" % path, "Host: %s:%d" % (HOST, PORT),
             "Upgrade: websocket", "Connection: Upgrade"]
    if key:
        lines.append("Sec-WebSocket-Key: " + key)
    if version:
        lines.append("Sec-WebSocket-Version: " + version)
    if protocols:
        lines.append("Sec-WebSocket-Protocol: " + protocols)
    if auth:
        lines.append("Authorization: Bearer " + TOKEN)
    if origin:
        lines.append("Origin: " + origin)
    s.sendall(("\r\n".join(lines) + "\r\n" + extra + "\r\n").encode())
    status, hdrs = read_head(s)
    return s, status, hdrs, key


def frame(opcode, payload=b"", fin=True, mask=True, rsv=0, length=None):
    b0 = (0x80 if fin else 0) | (rsv << 4) | opcode
    n = len(payload) if length is None else length
    m = 0x80 if mask else 0
    if n < 126:
        head = struct.pack("!BB", b0, m | n)
    elif n < 65536:
        head = struct.pack("!BBH", b0, m | 126, n)
    else:
        head = struct.pack("!BBQ", b0, m | 127, n)
    if not mask:
        return head + payload
    k = os.urandom(4)
    return head + k + bytes(c ^ k[i % 4] for i, c in enumerate(payload))


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise EOFError("closed after %d of %d bytes" % (len(buf), n))
        buf += chunk
    return buf


def recv_frame(s):
    b0, b1 = recv_exact(s, 2)
    n = b1 & 0x7F
    if n == 126:
        n = struct.unpack("!H", recv_exact(s, 2))[0]
    elif n == 127:
        n = struct.unpack("!Q", recv_exact(s, 8))[0]
    if b1 & 0x80:
        raise ValueError("the server masked a frame")
    return b0 & 0x0F, bool(b0 & 0x80), recv_exact(s, n)


def recv_until(s, want):
    """Frames until one of opcode want (pings answered); its payload."""
    while True:
        op, fin, data = recv_frame(s)
        if op == 0x9:
            s.sendall(frame(0xA, data))
            continue
        if op == want:
            return data
        if op == 0x8:
            raise EOFError("closed: %r" % data)


def close_code(s):
    """The close frame the server sends next: (code, reason)."""
    try:
        while True:
            op, fin, data = recv_frame(s)
            if op == 0x8:
                break
    except (EOFError, OSError, ValueError) as e:
        return None, str(e)
    if len(data) < 2:
        return 1005, ""
    return struct.unpack("!H", data[:2])[0], data[2:].decode("utf-8", "replace")


def rpc(s, msg):
    s.sendall(frame(0x1, json.dumps(msg).encode()))
    while True:
        data = recv_until(s, 0x1)
        m = json.loads(data)
        if m.get("id") == msg.get("id"):
            return m


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "wsclient", "version": "1"}}}

# --- handshakes ------------------------------------------------------------
s, st, h, key = handshake()
want = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()
check("handshake: 101 with the right Sec-WebSocket-Accept and protocol mcp (%d)" % st,
      st == 101 and h.get("sec-websocket-accept") == want and
      h.get("sec-websocket-protocol") == "mcp", h)
r = rpc(s, INIT)
check("initialize over the socket (%s)" % r.get("result", {}).get("serverInfo", {}).get("name"),
      r.get("result", {}).get("serverInfo", {}).get("name") == "mcpd", r)
s.sendall(frame(0x1, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()))
r = rpc(s, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
    "name": "run_code", "arguments": {"language": "sh", "code": "echo frames"}}})
check("tools/call over the socket", "frames" in json.dumps(r), r)
# A message in three fragments, a ping between them.
msg = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "ping"}).encode()
s.sendall(frame(0x1, msg[:5], fin=False) + frame(0x0, msg[5:10], fin=False) +
          frame(0x9, b"between") + frame(0x0, msg[10:]))
op, fin, data = recv_frame(s)
check("a ping between fragments is answered with its payload (%r)" % data,
      op == 0xA and data == b"between")
data = recv_until(s, 0x1)
check("the fragmented message is answered", json.loads(data).get("id") == 3, data)
s.sendall(frame(0x9, b"hello"))
op, fin, data = recv_frame(s)
check("ping -> pong with the same payload", op == 0xA and data == b"hello")
s.sendall(frame(0x8, struct.pack("!H", 1000) + b"bye"))
code, why = close_code(s)
check("close 1000 -> the server closes with 1000 (%s)" % code, code == 1000)

for desc, kw, want_st in [
        ("no token: 401", {"auth": False}, 401),
        ("no subprotocol mcp: 400", {"protocols": "chat"}, 400),
        ("version 8: 426", {"version": "8"}, 426),
        ("no key: 400", {"key": ""}, 400),
        ("a key of 15 bytes: 400", {"key": base64.b64encode(os.urandom(15)).decode()}, 400),
        ("an Origin not allowed: 403", {"origin": "https://evil.example"}, 403)]:
    s, st, h, _ = handshake(**kw)
    check("handshake with %s (%d)" % (desc, st), st == want_st, h)
    s.close()
s, st, h, _ = handshake(auth=False, protocols="mcp, mcp.auth." + TOKEN)
check("the token as subprotocol mcp.auth.TOKEN: 101, answered mcp alone (%d, %s)" %
      (st, h.get("sec-websocket-protocol")), st == 101 and h.get("sec-websocket-protocol") == "mcp")
s.close()
s, st, h, _ = handshake(auth=False, protocols="mcp, mcp.auth.wrong-token")
check("a wrong subprotocol token: 401 (%d)" % st, st == 401)
s.close()
s, st, h, _ = handshake(path="/mcp")
check("the MCP path upgrades too (%d)" % st, st == 101)
s.close()
s = connect()
s.sendall(("GET /ws HTTP/1.1\r\nHost: %s:%d\r\nAuthorization: Bearer %s\r\n\r\n" %
           (HOST, PORT, TOKEN)).encode())
st, h = read_head(s)
check("GET /ws without Upgrade: 426 (%d)" % st, st == 426 and h.get("upgrade") == "websocket", h)
s.close()

# --- frames that end the connection -----------------------------------------


def after_handshake(data, desc, want):
    s, st, h, _ = handshake()
    if st != 101:
        check(desc, False, "handshake: %d" % st)
        return
    s.sendall(data)
    code, why = close_code(s)
    check("%s: close %s (%s)" % (desc, code, why), code == want)
    s.close()


after_handshake(frame(0x2, b'{"jsonrpc":"2.0"}'), "a binary frame", 1003)
after_handshake(frame(0x1, b"{}", mask=False), "an unmasked frame", 1002)
after_handshake(frame(0x1, b"{}", rsv=4), "RSV1 set", 1002)
after_handshake(frame(0x3, b""), "opcode 3", 1002)
after_handshake(frame(0x9, b"x" * 126), "a ping of 126 bytes", 1002)
after_handshake(frame(0x9, b"x", fin=False), "a fragmented ping", 1002)
after_handshake(frame(0x0, b"x"), "a continuation with nothing begun", 1002)
after_handshake(frame(0x1, b"\xc0\x80"), "text that is not UTF-8", 1007)
after_handshake(frame(0x1, b"", length=(1 << 40)), "a frame of 1 TiB", 1009)
after_handshake(frame(0x8, b"\x03"), "a close of 1 byte", 1002)
print("done" if failures == 0 else "# %d failed" % failures)
