#!/bin/bash
# tests/security/code.sh again under crun ("runtime crun"): every attack
# must fail there as under runc.
. "$TOP/tests/lib.sh"
require_root
release_pass_only "the attacks under crun"
rerun_under crun "the attacks under crun" tests/security/code.sh
