#!/bin/bash
# Packages: a tenant whose policy allows egress installs them into its
# sandbox with pip --user and npm, from a package index on a test host in
# a network namespace of its own (pkgserver.py); a tenant without egress
# cannot reach it.  Driven over stdio by packages.py.
. "$TOP/tests/lib.sh"
require_root

MU=64101	# mcpd's uid
AU=64102	# auditd's
T=$(mktemp -d /tmp/mcpd-pkgs.XXXXXX)
chmod 0755 "$T"
CONF=$T/mcpd.conf
NETNS=mcpdpkg$$
HOSTIP=10.232.$(( $$ % 250 )).2

cat > "$CONF" <<CONF
user "$MU"
run directory "$T/run"
state directory "$T/state"
sandbox-init "$B/sandbox-init"
sandbox uids 268435456 64
limits default {
	memory 1G
	pids 256
	timeout 60s
	disk 128M
}
limits net {
	network egress
}
image host host pool 0
tenant local {
	uid root
	limits net
}
audit {
	user "$AU"
	required yes
}
CONF

cleanup() {
	kill_daemons
	test_host_del "$NETNS" mcpph$$
	remove_tmp
}
trap cleanup EXIT

test_host "$NETNS" "$HOSTIP" mcpph$$ mcppn$$
ip netns exec "$NETNS" /usr/bin/python3 "$TOP/tests/integration/pkgserver.py" \
    "$HOSTIP" 8090 > "$T/pkgserver.log" 2>&1 &
started pkgserver
check "the package index is up" \
    wait_for 10 bash -c "exec 3<>/dev/tcp/$HOSTIP/8090" 2>/dev/null

start auditd
start sandboxd
wait_sandboxd

B=$B CONF=$CONF T=$T INDEX="http://$HOSTIP:8090" \
    /usr/bin/python3 "$TOP/tests/integration/packages.py" > "$T/tap" 2>&1
rc=$?
relay_tap "$T/tap" "$rc"
[ "$rc" -eq 0 ] || diag_file "$T/stdio.log" 30

suite_end
done_testing
