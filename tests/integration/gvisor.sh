#!/bin/bash
# tests/integration/sandbox.sh again with gVisor's runsc as the OCI runtime
# (a runtime block of kind runsc): every operation, limit and hostile case
# must hold under a kernel of its own as under runc, or differ only where
# man/mcpd.conf.5 says it does.  scripts/runsc.sh finds a runsc from 2024
# or later, fetching Debian 13's where this host has none.
. "$TOP/tests/lib.sh"
require_root
rerun_under runsc "sandbox.sh under runsc" tests/integration/sandbox.sh
