#!/bin/bash
# The guest's first boot: the suite installed as README.md says and
# started by systemd, then driven as its users drive it: socket
# activation, the official SDK over each transport (clients.sh), every
# limit (limits.sh), hostile code (hostile.sh), and the operations an
# administrator performs (ops.sh).  Leaves in $STATE
# what phase2.sh checks after the reboot.  TAP on stdout; logs in $L.
. "$TOP/tests/vm/guest/lib.sh"
L=${L:-$T}

# --- the machine ------------------------------------------------------------

section machine
diag "$(. /etc/os-release; echo "$PRETTY_NAME"), kernel $(uname -r)," \
    "$(systemctl --version | head -n 1), $(runc --version | head -n 1)," \
    "node $(node --version), $(gcc --version | head -n 1)"
check "systemd is PID 1" test "$(cat /proc/1/comm)" = systemd
state=$(systemctl is-system-running)
check "the system is up: $state" test "$state" = running ||
    systemctl --failed --no-legend | sed 's/^/#   /'
layout=$(stat -fc %T /sys/fs/cgroup)
if [ "$VM_CGROUP" = v2 ]; then
	check "the cgroup layout is the unified v2 hierarchy alone ($layout)" \
	    test "$layout" = cgroup2fs
else
	check "the cgroup layout is hybrid: v1 hierarchies with the memory controller, and v2 beside them ($layout)" \
	    eval '[ "$layout" = tmpfs ] &&
	    grep -q " /sys/fs/cgroup/memory cgroup " /proc/mounts' ||
	    diag "$(grep -w memory /proc/cgroups || echo "no memory controller for v1 in /proc/cgroups")"
fi

# --- the README's install route -------------------------------------------

section install
cd "$TOP" || exit 1
sh scripts/deps.sh run > "$L/deps.log" 2>&1
check "the dependencies are installed: scripts/deps.sh run has nothing to do" \
    test $? -eq 0 -a ! -s "$L/deps.log" || diag_file "$L/deps.log"
make -q B="$VMB" all
check "the tree built on the host is up to date here: make -q B=$VMB" \
    test $? -eq 0
make B="$VMB" install > "$L/install.log" 2>&1
check "make B=$VMB install" test $? -eq 0 || diag_file "$L/install.log"
check "... compiled nothing: the source tree is read-only here" \
    eval '! grep -Eq "^(cc|gcc|bison) " "$L/install.log"'
check "systemd-sysusers makes _mcpd and _mcpaudit" \
    eval 'systemd-sysusers > "$L/sysusers.log" 2>&1 && id _mcpd > /dev/null &&
    id _mcpaudit > /dev/null'
check "systemd-tmpfiles --create makes /run/mcpd and /var/lib/mcpd" \
    eval 'systemd-tmpfiles --create > "$L/tmpfiles.log" 2>&1 &&
    [ -d /run/mcpd ] && [ -d /var/lib/mcpd ]'
MU=$(id -u _mcpd)
# The attacks of tests/security/attack.c, for hostile.sh.
install -D -m 0755 "$B/tests/attack" /usr/local/libexec/mcpd-vmtest/attack

# A desktop user, in the _mcpd group as README.md says, is the tenant
# over mcpd --stdio; HTTP clients are the same tenant by token.
useradd --create-home --shell /bin/bash "$DESK" 2> /dev/null
usermod -aG _mcpd "$DESK"
mkdir -p "$STATE"
TOKEN=$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')
echo "$TOKEN" > "$STATE/token"
hash() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
# The administrator's edits of the installed example: sandbox uids apart
# from those the tests use, and a tenant.
tenant_conf() {	# tenant_conf [EXTRA-TOKEN]
	local extra=
	[ -n "${1:-}" ] && extra="token \"sha256:$(hash "$1")\""
	sed -e 's/^#sandbox uids .*/sandbox uids 134217728 64/' \
	    "$L/mcpd.conf.example"
	cat <<EOF

# Emulation is slow: a longer timeout than the default's.
limits vm {
	timeout 2m
}
tenant vm {
	token "sha256:$(hash "$TOKEN")"
	$extra
	uid $DESK
	limits vm
	max sandboxes 8
	max requests 32
}
EOF
}
cp "$CONF" "$L/mcpd.conf.example"
tenant_conf > "$CONF"
check "/etc/mcpd/mcpd.conf, with a tenant (a token, uid $DESK): mcpd -n" \
    eval '/usr/local/sbin/mcpd -n > "$L/mcpd-n.log" 2>&1' ||
    diag_file "$L/mcpd-n.log"
systemctl daemon-reload
check "systemctl enable --now mcp-auditd.service mcp-sandboxd.service mcpd.socket" \
    eval 'systemctl enable --now $UNITS > "$L/enable.log" 2>&1' ||
    diag_file "$L/enable.log"
for u in mcp-auditd.service mcp-sandboxd.service mcpd.socket; do
	check "$u is active" within 30 systemctl is-active -q "$u" ||
	    journalctl -b -u "$u" -o cat | tail -n 15 | sed 's/^/#   /'
done

# The rest needs the suite running; each part stops there if it is not.
for part in clients limits hostile ops; do
	if ! suite_up; then
		not_ok "the suite runs under systemd, for $part.sh and what follows"
		for u in mcp-sandboxd mcp-auditd; do
			diag "journal of $u:"
			journalctl -b -u $u.service -o cat | tail -n 15 |
			    sed 's/^/#   /'
		done
		break
	fi
	. "$TOP/tests/vm/guest/$part.sh"
done

section end
check_clean "phase 1"
if suite_up; then
	mcp sandbox_list '{}'
	check "the persistent sandbox is still listed before the reboot" \
	    grep -q "${KEEP:-no keep}" "$T/r.json"
fi
sqlite3 /var/lib/mcpd/audit/audit.db 'select count(*) from records' \
    > "$STATE/records" 2> /dev/null
diag "times: $TIMES"
done_testing
