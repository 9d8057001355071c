#!/bin/bash
# Every language of the default table through the real suite over stdio:
# list_languages shows, per image, what the image's tools run, with their
# versions; each language says hello, reads stdin and exits non-zero; each
# compiled one reports a build error as a build error.  languages.py
# drives it and prints TAP.
. "$TOP/tests/lib.sh"
require_root

MU=64101	# mcpd's uid
AU=64102	# auditd's
T=$(mktemp -d /tmp/mcpd-langs.XXXXXX)
chmod 0755 "$T"
CONF=$T/mcpd.conf
RUN=$T/run

# A rootfs image with a static program and no shell: no language runs.
mkdir -p "$T/mini/bin"
cc -static -O2 -o "$T/mini/bin/hello" -x c - <<'C'
#include <stdio.h>
int main(void) { puts("hello from mini"); return 0; }
C
chown -R 0:0 "$T/mini"
chmod -R go-w "$T/mini"

cat > "$CONF" <<CONF
user "$MU"
run directory "$RUN"
state directory "$T/state"
sandbox-init "$B/sandbox-init"
sandbox uids 268435456 64
limits default {
	memory 1G
	pids 256
	timeout 60s
	output 256K
	disk 128M
}
image host host pool 1
image mini rootfs "$T/mini" pool 0
tenant local {
	uid root
}
audit {
	user "$AU"
	required yes
}
CONF

cleanup() {
	kill_daemons
	remove_tmp
}
trap cleanup EXIT

start auditd
start sandboxd
wait_sandboxd

B=$B CONF=$CONF T=$T \
    /usr/bin/python3 "$TOP/tests/integration/languages.py" > "$T/tap" 2>&1
rc=$?
relay_tap "$T/tap" "$rc"
[ "$rc" -eq 0 ] || diag_file "$T/stdio.log" 30

"$B/mcpctl" -f "$CONF" audit export > "$T/audit.jsonl" 2>&1
check "the probes are runs in the audit log, one per image" \
    test "$(grep -c '"own": *"probe"' "$T/audit.jsonl")" -ge 2
suite_end
done_testing
