"""A tenant's secret in a persistent sandbox's environment, over MCP.

Run by secrets.sh, once for each step: "create" makes the sandbox with
the secret in its environment, "exec" checks that an exec sees it (after
a restart of mcp-sandboxd too), "stop" stops the sandbox (and not
the other one, which has no secret).  Environment:
B, CONF, T, SECRET.
"""
import hashlib
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..",
                                "integration"))
from mcpclient import Stdio, ok, done, sc, is_error

E = os.environ
SECRET = E["SECRET"]
step = sys.argv[1]
c = Stdio([f"{E['B']}/mcpd", "--stdio", "-v", "-f", E["CONF"]],
          f"{E['T']}/stdio.log")
c.initialize()


def exec_sees_secret(what):
    # Its digest, not the secret: the audit log keeps an exec's output.
    r = c.tool("sandbox_exec", {"sandbox": "vault", "command":
                                'printf %s "$OPENAI_API_KEY" | sha256sum'})
    s = sc(r)
    s = (s.get("results") or [s])[0]
    ok((s.get("stdout") or "").split(" ")[0] ==
       hashlib.sha256(SECRET.encode()).hexdigest() and not is_error(r),
       f"an exec in the sandbox sees the secret in its environment {what}",
       r)


if step == "create":
    r = c.tool("sandbox_create", {"name": "vault",
                                  "env": {"OPENAI_API_KEY": SECRET}})
    ok(not is_error(r) and sc(r).get("id"),
       "a persistent sandbox is made with a secret in its environment", r)
    exec_sees_secret("")
    # Another sandbox, kept to the end, so that the secret's row is not
    # the last in its page of the state database.
    r = c.tool("sandbox_create", {"name": "keeper"})
    ok(not is_error(r), "another sandbox is made, with no secret", r)
elif step == "exec":
    exec_sees_secret("after sandboxd was killed and started again")
elif step == "stop":
    r = c.tool("sandbox_stop", {"sandbox": "vault"})
    ok(not is_error(r), "the sandbox stops", r)
c.close()
done()
