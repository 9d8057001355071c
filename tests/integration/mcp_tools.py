"""The tools, resources, tasks and limits of mcpd, driven over stdio.

Run by mcp_tools.sh, which starts the suite; environment: B (build
directory), CONF, T (temporary directory), LOCAL and RO (the tenant's
local paths, read-write and read-only).
"""
import base64
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from mcpclient import (Stdio, ok, diag, done, result, text, sc,
                       is_error)

B, CONF, T = os.environ["B"], os.environ["CONF"], os.environ["T"]
LOCAL, RO = os.environ["LOCAL"], os.environ["RO"]
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAF"
    "BQIAX8jx0gAAAABJRU5ErkJggg==")
MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {}}
MODERN_TASKS = dict(MODERN)
MODERN_TASKS["io.modelcontextprotocol/clientCapabilities"] = {
    "extensions": {"io.modelcontextprotocol/tasks": {}}}

c = Stdio([f"{B}/mcpd", "--stdio", "-v", "-f", CONF],
          f"{T}/stdio.log")
r = c.initialize("2025-11-25", {"elicitation": {}})
ok(result(r).get("protocolVersion") == "2025-11-25",
   "initialize over stdio negotiates 2025-11-25", r)
caps = result(r).get("capabilities", {})
ok("tasks" in caps and "logging" in caps and "resources" in caps,
   "2025-11-25 capabilities include tasks, logging and resources", caps)

# --- run_code: what a model gets back ---------------------------------
r = c.tool("run_code", {
    "language": "python",
    "code": "import os, sys\nprint(sys.argv[1:], os.environ['GREETING'])\n"
            "print(open('data.txt').read().strip())\n"
            "print(sys.stdin.read().upper(), end='')",
    "args": ["a", "b c"], "env": {"GREETING": "hello"},
    "files": [{"path": "data.txt", "content": "from a file\n"}],
    "stdin": "from stdin\n"})
ok(sc(r).get("stdout") == "['a', 'b c'] hello\nfrom a file\nFROM STDIN\n"
   and not is_error(r), "run_code passes args, env, files and stdin", r)
r = c.tool("run_code", {"language": "python",
                        "code": "import time\ntime.sleep(10)",
                        "timeout": 0.5})
ok(is_error(r) and sc(r).get("timed_out") is True and
   "timed out" in text(r), "a timeout is an error result that says so", r)
r = c.tool("run_code", {"language": "python",
                        "code": "x = bytearray(1 << 30)\nprint(len(x))"})
ok(is_error(r) and (sc(r).get("oom_killed") or "memory" in text(r).lower()),
   "running out of memory is an error result that says so", r)
r = c.tool("run_code", {"language": "c", "code": "int main(void) { oops }"})
ok(is_error(r) and sc(r).get("build_failed") is True and
   "error" in sc(r).get("build_output", ""),
   "a compile error comes back with the compiler's output", r)
r = c.tool("run_code", {"language": "cobol", "code": "x"})
ok(is_error(r) and "list_languages" in text(r),
   "an unknown language is an error result pointing at list_languages", r)
r = c.tool("run_code", {"language": "python", "code": "1", "tiemout": 3})
ok(is_error(r) and "tiemout" in text(r),
   "an unknown argument is named in the error", r)
r = c.tool("run_code", {"language": "python"})
ok(is_error(r) and "'code'" in text(r), "a missing argument is named", r)
r = c.tool("run_code", {"language": "python", "code": "1", "timeout": -1})
ok(is_error(r) and "timeout" in text(r), "a bad timeout is explained", r)
r = c.call("tools/call", {"name": "no_such_tool", "arguments": {}})
ok(r.get("error", {}).get("code") == -32602,
   "an unknown tool is a protocol error -32602", r)

# --- a sandbox, by name, with files --------------------------------
r = c.tool("sandbox_create", {"name": "box", "memory": "128M",
                              "env": {"COLOR": "blue"}})
ok(not is_error(r) and len(sc(r).get("id", "")) == 32 and
   sc(r).get("name") == "box", "sandbox_create returns its id and name", r)
ok(sc(r).get("runtime") == "runc",
   "and the OCI runtime it runs under, runc unless configured", r)
box_id = sc(r).get("id", "")
note = c.wait_note(lambda m: m.get("method") ==
                   "notifications/resources/list_changed", 5)
ok(note is not None, "creating a sandbox tells the session the resource "
   "list changed")
r = c.tool("sandbox_create", {"name": "box"})
ok(is_error(r), "a second sandbox with the same name is refused", r)
r = c.tool("sandbox_exec", {"sandbox": "box", "command": "echo $COLOR"})
ok(sc(r).get("results", [{}])[0].get("stdout") == "blue\n",
   "the sandbox's environment reaches its commands", r)
r = c.tool("sandbox_write_file", {"sandbox": box_id, "path": "img/p.png",
                                  "content": base64.b64encode(PNG).decode(),
                                  "encoding": "base64"})
ok(sc(r).get("bytes") == len(PNG), "a base64 file is written", r)
r = c.tool("sandbox_read_file", {"sandbox": "box", "path": "img/p.png"})
img = [x for x in result(r).get("content", []) if x.get("type") == "image"]
ok(len(img) == 1 and img[0].get("mimeType") == "image/png" and
   base64.b64decode(img[0].get("data", "")) == PNG,
   "a PNG comes back as an image content block", r)
svg = '<svg xmlns="http://www.w3.org/2000/svg"/>'
c.tool("sandbox_write_file", {"sandbox": "box", "path": "plot.svg",
                              "content": svg})
r = c.tool("sandbox_read_file", {"sandbox": "box", "path": "plot.svg"})
img = [x for x in result(r).get("content", []) if x.get("type") == "image"]
ok(len(img) == 1 and img[0].get("mimeType") == "image/svg+xml",
   "an SVG comes back as an image too", r)
c.tool("sandbox_write_file", {"sandbox": "box", "path": "bin.dat",
                              "content": base64.b64encode(b"\0\1\2\xff")
                              .decode(), "encoding": "base64"})
r = c.tool("sandbox_read_file", {"sandbox": "box", "path": "bin.dat"})
ok(sc(r).get("encoding") == "base64" and
   base64.b64decode(sc(r).get("content", "")) == b"\0\1\2\xff",
   "binary content comes back as base64", r)
r = c.tool("sandbox_read_file", {"sandbox": "box", "path": "nope.txt"})
ok(is_error(r) and "No such file" in text(r),
   "reading a missing file is an error result naming the cause", r)
r = c.tool("sandbox_exec", {"sandbox": "box", "commands":
                            ["mkdir -p d/e", "echo x > d/e/f", "false",
                             "echo never"], "keep_going": False})
res = sc(r).get("results", [])
ok(len(res) == 3 and is_error(r) and "not run" in text(r),
   "the first failing command stops the rest, and the result says so", r)
r = c.tool("sandbox_exec", {"sandbox": "box", "command": "pwd",
                            "cwd": "d/e"})
ok(sc(r).get("results", [{}])[0].get("stdout") == "/workspace/d/e\n",
   "cwd is beneath /workspace", r)
r = c.tool("sandbox_exec", {"sandbox": "box", "command": "pwd",
                            "cwd": "../.."})
ok(is_error(r), "a cwd that leaves the workspace is refused", r)
r = c.tool("run_code", {"language": "sh", "sandbox": "box",
                        "code": "cat d/e/f"})
ok(sc(r).get("stdout") == "x\n" and sc(r).get("sandbox") == "box",
   "run_code inside a sandbox sees its files", r)
# The first command is sent with the files and held until they are
# written: a file that cannot be written means it never runs.
r = c.tool("run_code", {"language": "sh", "sandbox": "box",
                        "code": "echo ran > ran.txt",
                        "files": [{"path": "f", "content": "x"},
                                  {"path": "f/g", "content": "y"}]})
ok(is_error(r) and "writing a file" in text(r) and
   "Not a directory" in text(r),
   "a file run_code cannot write is an error naming the cause", r)
r = c.tool("sandbox_read_file", {"sandbox": "box", "path": "ran.txt"})
ok(is_error(r) and "No such file" in text(r),
   "and the program it came with never ran", r)
r = c.tool("run_code", {"language": "c", "code":
                        "#include <stdio.h>\n#include \"v.h\"\n"
                        "int main(void) { printf(\"%d\\n\", V); }",
                        "files": [{"path": f"inc{i}/x", "content": "x"}
                                  for i in range(20)] +
                        [{"path": "v.h", "content": "#define V 42\n"}]})
ok(sc(r).get("stdout") == "42\n" and not is_error(r),
   "a build sees every file of its run, more than init takes at once", r)
c.tool("sandbox_delete_file", {"sandbox": "box", "path": "f"})
r = c.tool("sandbox_delete_file", {"sandbox": "box", "path": "d"})
ok(is_error(r), "deleting a directory without recursive is refused", r)
r = c.tool("sandbox_delete_file", {"sandbox": "box", "path": "d",
                                   "recursive": True})
ok(not is_error(r), "deleting it with recursive works", r)
r = c.tool("sandbox_list_files", {"sandbox": "box"})
names = [e["name"] for e in sc(r).get("entries", [])]
ok("img" in names and "d" not in names, "sandbox_list_files shows the "
   "workspace as it is", r)

# --- resources ---------------------------------------------------------
r = c.call("resources/list")
uris = [x["uri"] for x in result(r).get("resources", [])]
ok(f"sandbox://{box_id}/logs" in uris and
   f"sandbox://{box_id}/state" in uris,
   "resources/list has the sandbox's logs and state", r)
r = c.call("resources/read", {"uri": "sandbox://box/state"})
st = json.loads(result(r).get("contents", [{}])[0].get("text", "{}"))
ok(st.get("id") == box_id, "the state resource is the sandbox as JSON", r)
r = c.call("resources/read", {"uri": "sandbox://box/files/plot.svg"})
ok(result(r).get("contents", [{}])[0].get("text") == svg,
   "a file resource is its content", r)
r = c.call("resources/read", {"uri": "sandbox://box/files/../../x"})
ok(r.get("error", {}).get("code") == -32002,
   "a file resource outside the workspace is not found", r)
r = c.call("resources/read", {"uri": "sandbox://nobody/logs"})
ok(r.get("error", {}).get("code") == -32002 and
   r["error"].get("data", {}).get("uri") == "sandbox://nobody/logs",
   "an unknown sandbox's resource is -32002 with the uri", r)
r = c.call("resources/subscribe", {"uri": "sandbox://box/logs"})
ok(result(r) == {}, "resources/subscribe to a sandbox's logs", r)
c.tool("sandbox_exec", {"sandbox": "box", "command": "echo subscribed"})
note = c.wait_note(lambda m: m.get("method") ==
                   "notifications/resources/updated", 5)
ok(note is not None and note["params"]["uri"] == "sandbox://box/logs",
   "output in the sandbox sends notifications/resources/updated", note)
r = c.call("resources/read", {"uri": "sandbox://box/logs"})
log = result(r).get("contents", [{}])[0].get("text", "")
ok("$ echo subscribed\nsubscribed\n[exit 0]" in log,
   "the logs resource has the command, its output and its end", log)
c.call("resources/unsubscribe", {"uri": "sandbox://box/logs"})
c.tool("sandbox_exec", {"sandbox": "box", "command": "echo quiet"})
note = c.wait_note(lambda m: m.get("method") ==
                   "notifications/resources/updated", 1)
ok(note is None, "no notification after unsubscribing", note)
r = c.call("completion/complete", {
    "ref": {"type": "ref/resource", "uri": "sandbox://{id}/logs"},
    "argument": {"name": "id", "value": "bo"}})
ok("box" in result(r).get("completion", {}).get("values", []),
   "completion offers sandbox names", r)

# --- progress: output that is not UTF-8 --------------------------------
# Each byte of it becomes U+FFFD, three bytes: a chunk of it outgrew the
# message buffer, was cut mid-character, and the notification was lost.
c.notes.clear()
r = c.tool("run_code", {"language": "python", "code":
                        "import sys\nsys.stdout.buffer.write(b'\\xff' * 6000)"
                        "\nsys.stdout.flush()"},
           meta={"progressToken": "ff"})
note = c.wait_note(lambda m: m.get("method") == "notifications/progress" and
                   m["params"].get("progressToken") == "ff", 5)
ok(note is not None and "\ufffd" in note["params"].get("message", ""),
   "progress for output that is not UTF-8 arrives, as U+FFFD", note or r)

# --- logging -----------------------------------------------------------
c.call("logging/setLevel", {"level": "debug"})
c.tool("run_code", {"language": "sh", "code": "exit 0"})
note = c.wait_note(lambda m: m.get("method") == "notifications/message", 3)
ok(note is not None and note["params"]["level"] in ("debug", "info"),
   "with logging/setLevel debug, a run is logged to the client", note)
c.call("logging/setLevel", {"level": "error"})
c.notes.clear()
c.tool("run_code", {"language": "sh", "code": "exit 0"})
note = c.wait_note(lambda m: m.get("method") == "notifications/message", 1)
ok(note is None, "at level error, nothing is logged for a good run", note)

# --- copies to and from this machine (stdio only) -------------------
r = c.call("tools/list")
names = [t["name"] for t in result(r).get("tools", [])]
ok("sandbox_upload" in names and "sandbox_download" in names,
   "stdio mode offers sandbox_upload and sandbox_download", names)
os.makedirs(f"{LOCAL}/proj/sub", exist_ok=True)
open(f"{LOCAL}/proj/a.txt", "w").write("alpha\n")
open(f"{LOCAL}/proj/sub/b.txt", "w").write("beta\n")
os.symlink("/etc/shadow", f"{LOCAL}/proj/sneaky")
r = c.tool("sandbox_upload", {"sandbox": "box",
                              "local_path": f"{LOCAL}/proj"})
ok(not is_error(r) and sc(r).get("files") == 2,
   "a directory is uploaded (two files, the symbolic link left behind)", r)
r = c.tool("sandbox_exec", {"sandbox": "box",
                            "command": "cat proj/a.txt proj/sub/b.txt; "
                            "ls proj"})
out = sc(r).get("results", [{}])[0].get("stdout", "")
ok(out.startswith("alpha\nbeta\n") and "sneaky" not in out,
   "the uploaded files are in the sandbox, the link is not", r)
r = c.tool("sandbox_upload", {"sandbox": "box", "local_path": "/etc/passwd"})
ok(is_error(r) and "allowed" in text(r),
   "uploading from outside the allowed directories is refused", r)
r = c.tool("sandbox_upload", {"sandbox": "box",
                              "local_path": f"{LOCAL}/proj/sneaky"})
ok(is_error(r), "a symbolic link out of the allowed directories is "
   "refused", r)
c.tool("sandbox_exec", {"sandbox": "box", "command":
                        "mkdir -p out/x && echo one > out/1.txt && "
                        "echo two > out/x/2.txt"})
r = c.tool("sandbox_download", {"sandbox": "box", "path": "out",
                                "local_path": f"{LOCAL}/got"})
ok(not is_error(r) and
   open(f"{LOCAL}/got/1.txt").read() == "one\n" and
   open(f"{LOCAL}/got/x/2.txt").read() == "two\n",
   "a directory is downloaded", r)
r = c.tool("sandbox_download", {"sandbox": "box", "path": "out/1.txt",
                                "local_path": f"{LOCAL}/got/1.txt"})
ok(is_error(r) and "overwrite" in text(r),
   "an existing local file is kept unless overwrite is given", r)
r = c.tool("sandbox_download", {"sandbox": "box", "path": "out/x/2.txt",
                                "local_path": f"{LOCAL}/got/1.txt",
                                "overwrite": True})
ok(not is_error(r) and open(f"{LOCAL}/got/1.txt").read() == "two\n",
   "with overwrite it is replaced", r)
r = c.tool("sandbox_download", {"sandbox": "box", "path": "out/1.txt",
                                "local_path": f"{RO}/1.txt"})
ok(is_error(r) and not os.path.exists(f"{RO}/1.txt"),
   "a read-only local path takes no download", r)
r = c.tool("sandbox_upload", {"sandbox": "box",
                              "local_path": f"{RO}/ro.txt"})
ok(not is_error(r), "a read-only local path can be uploaded from", r)
r = c.tool("sandbox_download", {"sandbox": "box", "path": "out/1.txt",
                                "local_path": "/tmp/escape.txt"})
ok(is_error(r) and not os.path.exists("/tmp/escape.txt"),
   "a download outside the allowed directories is refused", r)

# --- tasks, 2025-11-25 ---------------------------------------------
r = c.call("tools/call", {"name": "run_code", "arguments": {
    "language": "sh", "code": "sleep 1; echo done"},
    "task": {"ttl": 60000}})
task = result(r).get("task", {})
ok(task.get("status") == "working" and len(task.get("taskId", "")) == 32,
   "tools/call with params.task returns a working task", r)
tid = task.get("taskId")
r = c.call("tasks/get", {"taskId": tid})
ok(result(r).get("taskId") == tid, "tasks/get finds it at once", r)
r = c.call("tasks/list")
ok(tid in [x["taskId"] for x in result(r).get("tasks", [])],
   "tasks/list lists it", r)
t0 = time.time()
r = c.call("tasks/result", {"taskId": tid}, timeout=20)
ok("done" in text(r) and time.time() - t0 > 0.3 and
   result(r).get("_meta", {}).get("io.modelcontextprotocol/related-task",
                                   {}).get("taskId") == tid,
   "tasks/result waits for the end and carries related-task", r)
r = c.call("tasks/get", {"taskId": tid})
ok(result(r).get("status") == "completed", "the task is completed", r)
r = c.call("tools/call", {"name": "run_code", "arguments": {
    "language": "sh", "code": "sleep 30"}, "task": {}})
tid2 = result(r).get("task", {}).get("taskId")
r = c.call("tasks/cancel", {"taskId": tid2})
ok(result(r).get("status") == "cancelled", "tasks/cancel cancels it", r)
r = c.call("tasks/cancel", {"taskId": tid2})
ok(r.get("error", {}).get("code") == -32602,
   "cancelling it again is -32602", r)
r = c.call("tasks/get", {"taskId": "0" * 32})
ok(r.get("error", {}).get("code") == -32602, "an unknown task is -32602", r)
r = c.call("tools/call", {"name": "sandbox_list", "arguments": {},
                          "task": {}})
ok(r.get("error", {}).get("code") == -32601,
   "a tool that does not run as a task refuses params.task", r)

# --- the same process also serves 2026-07-28 requests ----------------
r = c.call("tools/call", {"name": "run_code", "arguments": {
    "language": "sh", "code": "echo modern"}, "_meta": MODERN})
ok(result(r).get("resultType") == "complete" and
   sc(r).get("stdout") == "modern\n",
   "a 2026-07-28 tools/call works beside the session", r)
r = c.call("tools/call", {"name": "run_code", "arguments": {
    "language": "sh", "code": "sleep 0.5; echo bg", "background": True},
    "_meta": MODERN_TASKS})
ok(result(r).get("resultType") == "task", "background with the tasks "
   "extension makes a task", r)
tid3 = result(r).get("taskId")
end = time.time() + 20
while time.time() < end:
    r = c.call("tasks/get", {"taskId": tid3, "_meta": MODERN_TASKS})
    if result(r).get("status") != "working":
        break
    time.sleep(0.2)
ok(result(r).get("status") == "completed" and
   "bg" in json.dumps(result(r).get("result")),
   "the modern task completes with its result inline", r)
r = c.call("tools/call", {"name": "run_code", "arguments": {
    "language": "sh", "code": "echo fg", "background": True},
    "_meta": MODERN})
ok(result(r).get("resultType") == "complete",
   "without the extension, background runs it at once", r)
r = c.call("tasks/get", {"taskId": tid3, "_meta": MODERN})
ok(r.get("error", {}).get("code") == -32021,
   "tasks/get without the extension is -32021", r)

# --- a tenant's cap on requests in flight --------------------------
rids = [c.start("tools/call", {"name": "run_code", "arguments": {
    "language": "sh", "code": "sleep 2"}}) for _ in range(5)]
answers = [c.wait(x, 30) for x in rids]
busy = [a for a in answers if "Too many requests" in text(a)]
ok(len(busy) >= 1 and len(busy) < 5,
   "beyond 'max requests' a call is refused with a clear error",
   [text(a) for a in answers])

c.tool("sandbox_stop", {"sandbox": "box"})
rc = c.close()
ok(rc == 0, f"mcpd --stdio exits 0 at the end of its input ({rc})")
ok(not c.bad_lines, "nothing but JSON-RPC on stdout", c.bad_lines)
done()
