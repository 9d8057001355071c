#!/bin/bash
# tests/integration/sandbox.sh again with crun as the OCI runtime
# ("runtime crun" in mcpd.conf): every operation, limit and hostile case
# must hold under it as under runc.  On a hybrid host, crun sees the v1
# hierarchies alone (sandboxd hides the empty unified one from it).
. "$TOP/tests/lib.sh"
require_root
release_pass_only "sandbox.sh under crun"
if ! command -v crun > /dev/null; then
	ok "sandbox.sh under crun # SKIP no crun (sh scripts/deps.sh check installs it)"
	done_testing
	exit 0
fi
RUNTIME=crun exec bash "$TOP/tests/integration/sandbox.sh"
