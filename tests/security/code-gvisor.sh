#!/bin/bash
# tests/security/code.sh again under gVisor's runsc (a runtime block of
# kind runsc): every attack must fail there too, and the cases only a
# second kernel stops must be stopped.  scripts/runsc.sh finds a runsc
# from 2024 or later, fetching Debian 13's where this host has none.
. "$TOP/tests/lib.sh"
require_root
release_pass_only "the attacks under runsc"
err=$(mktemp)
if ! RUNSC=$(sh "$TOP/scripts/runsc.sh" 2> "$err"); then
	why=$(tail -n 1 "$err")
	rm -f "$err"
	ok "the attacks under runsc # SKIP ${why:-no runsc}"
	done_testing
	exit 0
fi
rm -f "$err"
RUNTIME=gvisor RUNTIME_KIND=runsc RUNTIME_PATH=$RUNSC \
    exec bash "$TOP/tests/security/code.sh"
