"""Installing packages into a sandbox with egress: pip --user and npm.

Run by packages.sh; environment: B, CONF, T, INDEX (the package index).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from mcpclient import Stdio, ok, diag, done, result, text, sc, is_error

B, CONF, T, INDEX = (os.environ[k] for k in ("B", "CONF", "T", "INDEX"))
# A plain-HTTP index is one pip must be told to trust.
HOST = INDEX.split("//")[1].split(":")[0]
PIP = f"--no-cache-dir --index-url {INDEX}/simple/ --trusted-host {HOST}"

c = Stdio([f"{B}/mcpd", "--stdio", "-v", "-f", CONF], f"{T}/stdio.log")
c.initialize("2025-11-25")


def sh(sandbox, command):
    return c.tool("sandbox_exec", {"sandbox": sandbox, "command": command},
                  timeout=120)


r = c.tool("sandbox_create", {"name": "net", "network": "egress"})
ok(not is_error(r), "a sandbox with egress", r)
r = sh("net", f"pip install --user {PIP} mcpdpkg")
ok(not is_error(r) and sc(r).get("exit_code") == 0,
   "pip install --user installs from the index", r)
r = c.tool("run_code", {"language": "python", "sandbox": "net",
                        "code": "import mcpdpkg, sys\nprint(mcpdpkg.ANSWER, "
                                "mcpdpkg.__file__.startswith("
                                "'/workspace/.local/'))"})
ok(sc(r).get("stdout") == "42 True\n",
   "the package imports, from the workspace", r)
r = sh("net", f"npm install --registry {INDEX}/ --no-audit --no-fund "
       "--no-update-notifier mcpd-test-pkg")
ok(not is_error(r) and sc(r).get("exit_code") == 0,
   "npm install puts a package into the workspace", r)
r = c.tool("run_code", {"language": "javascript", "sandbox": "net",
                        "code": "console.log(require('mcpd-test-pkg')"
                                ".answer)"})
ok(sc(r).get("stdout") == "42\n", "and node requires it", r)
r = sh("net", "ls node_modules/mcpd-test-pkg && test -f package.json")
ok(not is_error(r), "npm wrote node_modules and package.json in /workspace",
   r)
c.tool("sandbox_stop", {"sandbox": "net"})

r = c.tool("sandbox_create", {"name": "offline", "network": "none"})
ok(not is_error(r), "a sandbox without egress", r)
r = sh("offline", f"pip install --user {PIP} --retries 0 --timeout 3 "
       "mcpdpkg")
ok(is_error(r) and sc(r).get("exit_code") != 0 and
   "mcpdpkg" not in sh("offline", "ls .local/lib/python3*/site-packages "
                       "2>/dev/null; true").get("result", {}).get(
                           "structuredContent", {}).get("results", [{}])[0]
   .get("stdout", ""),
   "without egress pip cannot reach the index, and installs nothing", r)
c.tool("sandbox_stop", {"sandbox": "offline"})
c.close()
done()
