#!/bin/bash
# The VM test inside the guest, started as root at each boot by
# mcpd-vmtest.service (tests/vm/lib/image.sh).  The first boot runs
# phase1.sh and reboots; the second runs phase2.sh and powers off.  Each
# phase's TAP goes to /mnt/out/phaseN.tap, its logs to /mnt/out/phaseN/,
# the journal of the suite's units to /mnt/out/journal-phaseN.txt.
# /mnt/out/vm.env, written by the host, says what to expect.
set -u
OUT=/mnt/out
STATE=/var/lib/mcpd-vmtest
. "$OUT/vm.env"
export VM_DIST VM_CGROUP VMB TIME_SCALE
export TOP=/mnt/src B=/mnt/src/$VMB
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mkdir -p "$STATE"
# Under TCG the guest's kernel oopses now and then when it patches its own
# code (int3 in update_curr, twice in one CI run, each in runc): that
# happens each time the first cgroup gets a CPU quota (a static key of
# the scheduler's) and each time the last one loses it, as containers
# come and go, more often since mcp-sandboxd -n starts one before the
# daemon does.  One group with a quota made now, while the machine is
# quiet, and kept, makes it happen once a boot.
echo +cpu > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
mkdir -p /sys/fs/cgroup/vmtest-quota &&
    echo "100000000 100000" > /sys/fs/cgroup/vmtest-quota/cpu.max
phase=$(cat "$STATE/phase" 2>/dev/null || echo 1)
export L=$OUT/phase$phase
mkdir -p "$L"
# The host times the boot by this file's creation.
echo "phase $phase started at uptime $(cut -d' ' -f1 /proc/uptime)" \
    > "$OUT/phase$phase.start"

finish() {	# finish: whatever happened, the next boot or the end
	journalctl -b -o short-precise -u mcpd.socket -u mcpd.service \
	    -u mcp-sandboxd.service -u mcp-auditd.service \
	    > "$OUT/journal-phase$phase.txt" 2>&1
	journalctl -b -o short-precise > "$L/journal-all.txt" 2>&1
	systemd-analyze > "$L/boot.txt" 2>&1
	systemd-analyze blame 2>&1 | head -n 15 >> "$L/boot.txt"
	echo "phase $phase ended at uptime $(cut -d' ' -f1 /proc/uptime)" \
	    > "$OUT/phase$phase.end"
	sync
	if [ "$phase" = 1 ]; then
		echo 2 > "$STATE/phase"
		sync
		systemctl reboot
	else
		systemctl poweroff
	fi
}
trap finish EXIT

systemctl is-system-running --wait > /dev/null
timeout 1200 bash "$TOP/tests/vm/guest/phase$phase.sh" \
    > "$OUT/phase$phase.tap" 2>&1
echo "# phase$phase.sh exited with status $?" >> "$OUT/phase$phase.tap"
