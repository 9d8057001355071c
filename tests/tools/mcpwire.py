#!/usr/bin/python3
"""Raw-socket and JSON helpers for the MCP transport tests
(tests/integration/mcp_stdio.sh, mcp_http.sh).  Standard library only.

  mcpwire.py send ADDR [options]
      Send bytes (from --in FILE, default stdin) to ADDR (host:port or
      unix:PATH) and print what comes back.  Reading stops when the peer
      closes, after --wait seconds of silence (default 5), or once what was
      read matches --until REGEX.  --trickle S sends one byte every S
      seconds (a slowloris); --shut half-closes after sending; --hold S
      reads nothing for S seconds, then closes; --one stops once one whole
      response (head and body) has come; --then-hold S, once --until
      matched, stops reading for S seconds before closing; --stat FILE records
      "elapsed=S closed=0|1 sent=N".
  mcpwire.py conns ADDR N SECS READY
      Open N connections, write the file READY with how many are open,
      hold them SECS seconds (or until READY is removed), close them.
  mcpwire.py responses FILE
      Split HTTP/1.1 responses read from one connection: one line each,
      "STATUS LENGTH" (a HEAD-less parse: Content-Length or chunked).
  mcpwire.py lines FILE...
      Every line of each FILE is a JSON-RPC 2.0 message (or a batch of
      them): exit 1 naming, for each file, the first line that is not.
  mcpwire.py get FILE ID [PATH]
      The message answering ID (JSON text, "-" for the first message,
      "null" for an id of null) among the JSON documents of FILE (JSON
      lines, SSE "data:" lines, or one document); with PATH (dots, array
      indexes as numbers) only that part.  Strings print raw, other values
      as compact JSON; nothing and exit 1 when absent.
  mcpwire.py count FILE ID
      How many messages answer ID.
  mcpwire.py events FILE
      SSE events of FILE, one line each: "ID|EVENT|DATA".
"""
import json
import os
import re
import select
import socket
import sys
import time


def connect(addr, timeout=10):
    if addr.startswith("unix:"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.connect(addr[5:])
    else:
        host, port = addr.rsplit(":", 1)
        s = socket.create_connection((host, int(port)), timeout=timeout)
    s.setblocking(False)
    return s


def opt(args, name, default=None, flag=False):
    """An option's value; given more than once, the last one counts."""
    found = False if flag else default
    while name in args:
        i = args.index(name)
        if flag:
            del args[i]
            found = True
        else:
            found = args[i + 1]
            del args[i:i + 2]
    return found


def cmd_send(args):
    src = opt(args, "--in", "-")
    wait = float(opt(args, "--wait", "5"))
    trickle = opt(args, "--trickle")
    until = opt(args, "--until")
    hold = opt(args, "--hold")
    then_hold = opt(args, "--then-hold")
    stat = opt(args, "--stat")
    shut = opt(args, "--shut", flag=True)
    one = opt(args, "--one", flag=True)
    addr = args[0]
    data = sys.stdin.buffer.read() if src == "-" else open(src, "rb").read()
    pat = re.compile(until.encode(), re.S) if until else None
    start = time.monotonic()
    s = connect(addr)
    got = bytearray()
    closed = False
    sent = 0
    step = float(trickle) if trickle else 0
    next_send = start
    last_rx = time.monotonic()
    while True:
        now = time.monotonic()
        want_w = sent < len(data) and now >= next_send
        r, w, _ = select.select([s] if not hold else [],
                                [s] if want_w else [], [], 0.05)
        if w:
            try:
                chunk = data[sent:sent + 1] if step else data[sent:sent + 65536]
                n = s.send(chunk)
                sent += n
                if step:
                    next_send = time.monotonic() + step
                if sent == len(data) and shut:
                    s.shutdown(socket.SHUT_WR)
            except BlockingIOError:
                pass
            except OSError:
                # The peer closed on us: read what it said.
                sent = len(data)
        if hold and sent >= len(data):
            time.sleep(float(hold))
            break
        if r:
            try:
                b = s.recv(65536)
            except BlockingIOError:
                b = None
            except OSError:
                b = b""
            if b == b"":
                closed = True
                break
            if b:
                got += b
                sys.stdout.buffer.write(b)
                sys.stdout.buffer.flush()
                last_rx = time.monotonic()
                if one and complete_response(bytes(got)):
                    break
                if pat and pat.search(got):
                    if then_hold:
                        time.sleep(float(then_hold))
                    break
        if sent >= len(data) and time.monotonic() - max(last_rx, next_send if step else 0) > wait:
            break
        if step and sent < len(data) and time.monotonic() - start > 120:
            break
    elapsed = time.monotonic() - start
    s.close()
    if stat:
        with open(stat, "w") as f:
            f.write("elapsed=%.2f closed=%d sent=%d\n" % (elapsed, closed, sent))


def complete_response(data):
    """Is there a whole HTTP response (head and body) in data?"""
    j = data.find(b"\r\n\r\n")
    if j < 0:
        return False
    head = data[:j].decode("latin-1").lower().split("\r\n")
    hdrs = dict((l.partition(":")[0].strip(), l.partition(":")[2].strip())
                for l in head[1:])
    body = data[j + 4:]
    if "content-length" in hdrs:
        try:
            return len(body) >= int(hdrs["content-length"])
        except ValueError:
            return False
    if hdrs.get("transfer-encoding") == "chunked":
        return body.endswith(b"0\r\n\r\n")
    return False


def cmd_conns(args):
    addr, n, secs, ready = args[0], int(args[1]), float(args[2]), args[3]
    socks = []
    for i in range(n):
        try:
            socks.append(connect(addr))
        except OSError as e:
            print("connection %d: %s" % (i, e), file=sys.stderr)
            break
    with open(ready + ".tmp", "w") as f:
        f.write("%d\n" % len(socks))
    os.rename(ready + ".tmp", ready)
    end = time.monotonic() + secs
    while time.monotonic() < end and os.path.exists(ready):
        time.sleep(0.05)
    for s in socks:
        s.close()


def parse_responses(data):
    out = []
    i = 0
    while i < len(data):
        j = data.find(b"\r\n\r\n", i)
        if j < 0:
            out.append(("partial", len(data) - i))
            break
        head = data[i:j].decode("latin-1").split("\r\n")
        status = head[0].split(" ")[1] if len(head[0].split(" ")) > 1 else "?"
        hdrs = {}
        for l in head[1:]:
            k, _, v = l.partition(":")
            hdrs[k.strip().lower()] = v.strip()
        i = j + 4
        if "content-length" in hdrs:
            n = int(hdrs["content-length"])
            out.append((status, n))
            i += n
        elif hdrs.get("transfer-encoding", "").lower() == "chunked":
            total = 0
            while True:
                k = data.find(b"\r\n", i)
                if k < 0:
                    break
                n = int(data[i:k].split(b";")[0], 16)
                i = k + 2 + n + 2
                total += n
                if n == 0:
                    break
            out.append((status, total))
        else:
            out.append((status, len(data) - i))
            i = len(data)
    return out


def cmd_responses(args):
    data = open(args[0], "rb").read()
    for status, n in parse_responses(data):
        print(status, n)


def cmd_lines(args):
    bad = 0
    for path in args:
        msg = lines_of(path)
        if msg:
            print("%s: %s" % (os.path.basename(path), msg))
            bad = 1
    return bad


def lines_of(path):
    with open(path, "rb") as f:
        for no, line in enumerate(f, 1):
            if not line.endswith(b"\n"):
                return "line %d has no newline: %r" % (no, line[:200])
            try:
                m = json.loads(line.decode("utf-8"))
            except (ValueError, UnicodeDecodeError) as e:
                return "line %d is not JSON (%s): %r" % (no, e, line[:200])
            msgs = m if isinstance(m, list) else [m]
            if isinstance(m, list) and not m:
                return "line %d is an empty array" % no
            for x in msgs:
                if not isinstance(x, dict) or x.get("jsonrpc") != "2.0":
                    return "line %d is not JSON-RPC 2.0: %r" % (no, line[:200])
    return None


def documents(path):
    """The JSON documents of a file: lines, SSE data, or one document."""
    text = unframe(open(path, "rb").read()).decode("utf-8", "replace")
    docs = []
    try:
        docs.append(json.loads(text))
        return docs
    except ValueError:
        pass
    for line in text.splitlines():
        if line.startswith("data:"):
            line = line[5:].strip()
        try:
            docs.append(json.loads(line))
        except ValueError:
            pass
    return docs


def messages(path):
    for d in documents(path):
        for m in (d if isinstance(d, list) else [d]):
            if isinstance(m, dict):
                yield m


def same_id(a, b):
    return type(a) is type(b) and a == b


def matching(path, want):
    if want == "-":
        return list(messages(path))[:1]
    wid = json.loads(want)
    return [m for m in messages(path) if "id" in m and
            ("result" in m or "error" in m) and same_id(m["id"], wid)]


def cmd_get(args):
    found = matching(args[0], args[1])
    if not found:
        return 1
    v = found[0]
    if len(args) > 2:
        for p in args[2].split("."):
            if isinstance(v, list) and re.fullmatch(r"-?\d+", p) and \
                    -len(v) <= int(p) < len(v):
                v = v[int(p)]
            elif isinstance(v, dict) and p in v:
                v = v[p]
            else:
                return 1
    print(v if isinstance(v, str) else json.dumps(v, separators=(",", ":")))
    return 0


def cmd_count(args):
    print(len(matching(args[0], args[1])))


def unframe(data):
    """The body of a raw HTTP response (de-chunked, even if cut short);
    anything else as it is."""
    if not data.startswith(b"HTTP/"):
        return data
    j = data.find(b"\r\n\r\n")
    if j < 0:
        return b""
    head, i = data[:j].lower(), j + 4
    if b"transfer-encoding: chunked" not in head:
        return data[i:]
    body = bytearray()
    while True:
        k = data.find(b"\r\n", i)
        if k < 0 or k - i > 18:
            if not body:
                return data[j + 4:]	# de-chunked already (curl -i)
            break
        try:
            n = int(data[i:k].split(b";")[0], 16)
        except ValueError:
            if not body:
                return data[j + 4:]	# de-chunked already (curl -i)
            break
        body += data[k + 2:k + 2 + n]
        i = k + 2 + n + 2
        if n == 0 or i > len(data):
            break
    return bytes(body)


def cmd_events(args):
    text = unframe(open(args[0], "rb").read()).decode("utf-8", "replace")
    for block in re.split(r"\r?\n\r?\n", text):
        eid = ev = ""
        data = []
        seen = False
        for line in block.splitlines():
            if line.startswith("id:"):
                eid, seen = line[3:].strip(), True
            elif line.startswith("event:"):
                ev, seen = line[6:].strip(), True
            elif line.startswith("data:"):
                data.append(line[5:].strip())
                seen = True
            elif line.startswith("retry:"):
                seen = True
        if seen:
            print("%s|%s|%s" % (eid, ev, "\n".join(data)))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    fn = {"send": cmd_send, "conns": cmd_conns, "lines": cmd_lines,
          "get": cmd_get, "count": cmd_count, "events": cmd_events,
          "responses": cmd_responses}[cmd]
    sys.exit(fn(args) or 0)


if __name__ == "__main__":
    main()
