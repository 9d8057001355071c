#!/bin/bash
# tests/integration/sandbox.sh again with gVisor's runsc as the OCI runtime
# (a runtime block of kind runsc): every operation, limit and hostile case
# must hold under a kernel of its own as under runc, or differ only where
# docs/mcpd.conf.5 says it does.  scripts/runsc.sh finds a runsc from 2024
# or later, fetching Debian 13's where this host has none.
. "$TOP/tests/lib.sh"
require_root
if ! RUNSC=$(sh "$TOP/scripts/runsc.sh" 2> "${TMPDIR:-/tmp}/runsc.$$"); then
	why=$(tail -n 1 "${TMPDIR:-/tmp}/runsc.$$")
	rm -f "${TMPDIR:-/tmp}/runsc.$$"
	ok "sandbox.sh under runsc # SKIP ${why:-no runsc}"
	done_testing
	exit 0
fi
rm -f "${TMPDIR:-/tmp}/runsc.$$"
RUNTIME=gvisor RUNTIME_KIND=runsc RUNTIME_PATH=$RUNSC \
    exec bash "$TOP/tests/integration/sandbox.sh"
