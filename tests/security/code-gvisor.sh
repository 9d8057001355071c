#!/bin/bash
# tests/security/code.sh again under gVisor's runsc (a runtime block of
# kind runsc): every attack must fail there too, and the cases only a
# second kernel stops must be stopped.  scripts/runsc.sh finds a runsc
# from 2024 or later, fetching Debian 13's where this host has none.
. "$TOP/tests/lib.sh"
require_root
release_pass_only "the attacks under runsc"
rerun_under runsc "the attacks under runsc" tests/security/code.sh
