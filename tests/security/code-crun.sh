#!/bin/bash
# tests/security/code.sh again under crun ("runtime crun"): every attack
# must fail there as under runc.
. "$TOP/tests/lib.sh"
require_root
release_pass_only "the attacks under crun"
if ! command -v crun > /dev/null; then
	ok "the attacks under crun # SKIP no crun (sh scripts/deps.sh check installs it)"
	done_testing
	exit 0
fi
RUNTIME=crun exec bash "$TOP/tests/security/code.sh"
