#!/usr/bin/python3
"""Call one MCP tool over Streamable HTTP, as a client would: initialize
a session (2025-11-25), then tools/call.  Standard library only.

  mcphttp.py URL TOKEN TOOL ARGS_JSON [OUT]

Prints the tool result's structuredContent (or the whole result when it
has none) as JSON, to OUT or stdout; exit 0 for a result, 2 for a tool
error (isError), 1 when the exchange itself failed.
"""
import json
import sys
import urllib.request


def post(url, token, msg, sid=None):
    h = {"Authorization": "Bearer " + token,
         "Content-Type": "application/json",
         "Accept": "application/json, text/event-stream",
         "MCP-Protocol-Version": "2025-11-25"}
    if sid:
        h["Mcp-Session-Id"] = sid
    req = urllib.request.Request(url, json.dumps(msg).encode(), h)
    with urllib.request.urlopen(req, timeout=300) as r:
        body = r.read().decode()
        sid = r.headers.get("Mcp-Session-Id", sid)
        ctype = r.headers.get("Content-Type", "")
    if not body:
        return None, sid
    if ctype.startswith("text/event-stream"):
        for line in body.splitlines():
            if line.startswith("data:"):
                m = json.loads(line[5:])
                if m.get("id") == msg.get("id"):
                    return m, sid
        return None, sid
    return json.loads(body), sid


def main():
    url, token, tool, args = sys.argv[1:5]
    out = open(sys.argv[5], "w") if len(sys.argv) > 5 else sys.stdout
    r, sid = post(url, token, {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "mcphttp", "version": "1"}}})
    post(url, token, {"jsonrpc": "2.0",
                      "method": "notifications/initialized"}, sid)
    r, _ = post(url, token, {
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": tool, "arguments": json.loads(args)}}, sid)
    if r is None or "result" not in r:
        print(json.dumps(r), file=sys.stderr)
        return 1
    res = r["result"]
    doc = res.get("structuredContent", res)
    if res.get("isError"):
        doc = dict(res.get("structuredContent") or {})
        doc["error"] = " ".join(c.get("text", "") for c in
                                res.get("content", []))
    json.dump(doc, out)
    out.write("\n")
    return 2 if res.get("isError") else 0


if __name__ == "__main__":
    sys.exit(main())
