#!/bin/bash
# tests/integration/sandbox.sh again with crun as the OCI runtime
# ("runtime crun" in mcpd.conf): every operation, limit and hostile case
# must hold under it as under runc.  On a hybrid host, crun sees the v1
# hierarchies alone (sandboxd hides the empty unified one from it).
. "$TOP/tests/lib.sh"
require_root
release_pass_only "sandbox.sh under crun"
rerun_under crun "sandbox.sh under crun" tests/integration/sandbox.sh
