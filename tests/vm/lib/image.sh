#!/bin/bash
# The VM test's guest image: a Debian system made with debootstrap, with
# its kernel, systemd as PID 1, and every package the suite and the guest
# checks need (the guest has no network).  Built once per distribution,
# package list and version of this file, into a directory of the cache:
#
#	bash tests/vm/lib/image.sh DIST PACKAGES DIR
#
# DIR gets base.img (a raw ext4 file system, the guest's root: never
# written once built; each boot writes to an overlay of its own),
# vmlinuz and initrd.img (booted directly), and versions (the packages
# and their versions).  Its log goes to stderr.  Environment: VM_MIRROR,
# VM_SECURITY (Debian archive and security mirrors; default
# deb.debian.org).
set -euo pipefail

DIST=$1
PKGS=$2
DIR=$3
WORK=$DIR.tmp.$$
R=$WORK/root

log() { printf '[image %(%T)T] %s\n' -1 "$*" >&2; }

MIRROR=${VM_MIRROR:-http://deb.debian.org/debian}
SECURITY=${VM_SECURITY:-http://deb.debian.org/debian-security}

cleanup() {
	# The chroot's mounts first, if debootstrap left any.
	for m in proc sys dev/pts dev; do
		mountpoint -q "$R/$m" 2>/dev/null && umount -l "$R/$m"
	done
	rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$WORK" "${DIR%/*}/debs-$DIST"

# In two stages, so that dpkg runs without an fsync per file (an image is
# rebuilt, not recovered).
log "debootstrap $DIST from $MIRROR"
failed() {	# failed LOG: its tail, and debootstrap's own
	tail -n 30 "$1" >&2
	[ -f "$R/debootstrap/debootstrap.log" ] &&
	    tail -n 30 "$R/debootstrap/debootstrap.log" >&2
	exit 1
}
debootstrap --foreign --variant=minbase --components=main \
    --cache-dir="$(realpath "${DIR%/*}/debs-$DIST")" \
    --include="$(echo $PKGS | tr ' ' ,)" "$DIST" "$R" "$MIRROR" \
    > "$WORK/debootstrap.log" 2>&1 || failed "$WORK/debootstrap.log"
mkdir -p "$R/etc/dpkg/dpkg.cfg.d"
echo force-unsafe-io > "$R/etc/dpkg/dpkg.cfg.d/mcpd-vm-unsafe-io"
log "debootstrap: the second stage"
chroot "$R" /debootstrap/debootstrap --second-stage \
    >> "$WORK/debootstrap.log" 2>&1 || failed "$WORK/debootstrap.log"

# The point release's updates and the security fixes a Debian user has.
in_root() {
	chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
	    DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 "$@"
}
cat > "$R/etc/apt/sources.list" <<EOF
deb $MIRROR $DIST main
deb $MIRROR $DIST-updates main
deb $SECURITY $DIST-security main
EOF
mount -t proc proc "$R/proc"
mount -t sysfs sysfs "$R/sys"
mount --bind /dev "$R/dev"
log "apt-get upgrade: $DIST-updates and $DIST-security"
if ! { in_root apt-get -q update && in_root apt-get -q -y \
    -o Dpkg::Options::=--force-confold dist-upgrade; } \
    > "$WORK/upgrade.log" 2>&1; then
	tail -n 30 "$WORK/upgrade.log" >&2
	exit 1
fi
in_root dpkg-query -W -f '${Package} ${Version}\n' > "$WORK/versions"
in_root apt-get clean
rm -rf "$R"/var/lib/apt/lists/* "$R/etc/dpkg/dpkg.cfg.d/mcpd-vm-unsafe-io"

# The machine: its disk, the two virtiofs shares (the source tree,
# read-only, and the directory the results go to), root without a
# password on the serial console, and a journal kept across the reboot.
echo mcpd-vm > "$R/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tmcpd-vm\n' > "$R/etc/hosts"
cat > "$R/etc/fstab" <<EOF
/dev/vda	/		ext4		rw,errors=remount-ro	0 1
src		/mnt/src	virtiofs	ro,nofail		0 0
out		/mnt/out	virtiofs	rw,nofail		0 0
EOF
mkdir -p "$R/mnt/src" "$R/mnt/out" "$R/var/log/journal"
echo virtiofs > "$R/etc/modules-load.d/virtiofs.conf"
in_root passwd -dq root
: > "$R/etc/machine-id"

# The test: run at boot when the kernel's command line asks for it, as
# root, after the system is up; run.sh reboots and powers off itself.
# Type=simple, so that the boot it waits for can finish.
cat > "$R/etc/systemd/system/mcpd-vmtest.service" <<'EOF'
[Unit]
Description=mcpd VM test (tests/vm/guest/run.sh)
ConditionKernelCommandLine=mcpd.vmtest
RequiresMountsFor=/mnt/src /mnt/out

[Service]
Type=simple
ExecStart=/bin/bash /mnt/src/tests/vm/guest/run.sh
StandardOutput=journal+console
StandardError=inherit
TimeoutStopSec=10

[Install]
WantedBy=multi-user.target
EOF
in_root systemctl enable -q mcpd-vmtest.service
# Nothing that would wake up during the test to do a machine's chores.
for u in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer \
    e2scrub_reap.service fstrim.timer man-db.timer dpkg-db-backup.timer \
    systemd-timesyncd.service systemd-networkd-wait-online.service; do
	in_root systemctl mask -q "$u" 2>/dev/null || true
done

# systemctl above wants /proc; the image is made without the mounts.
umount "$R/dev" "$R/sys" "$R/proc"

# The newest kernel, if the upgrade brought one.
kver=$(ls "$R/boot" | sed -n 's/^vmlinuz-//p' | sort -V | tail -n 1)
cp "$R/boot/vmlinuz-$kver" "$WORK/vmlinuz"
cp "$R/boot/initrd.img-$kver" "$WORK/initrd.img"
log "making base.img ($(du -sh "$R" | cut -f1) of files)"
mkfs.ext4 -q -F -L mcpd-vm -d "$R" "$WORK/base.img" 8G
rm -rf "$R"
rm -rf "$DIR"
mv "$WORK" "$DIR"
trap - EXIT
