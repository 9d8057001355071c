# The VM test's machine, sourced by tests/vm/vm.sh: the cached guest image
# (image.sh), the suite built for the guest in a chroot of it, and QEMU
# booting it with the source tree and an output directory shared over
# virtiofs.  TOP is the source tree.
#
# Environment (each has a default):
#   VM_DIST	trixie (Debian 13), or bookworm (Debian 12)
#   VM_CGROUP	v2 (the distribution's default: the unified hierarchy
#		alone), or hybrid (cgroup v1 with the unified one beside)
#   VM_CACHE	/var/cache/mcpd-vm: images, kept outside the tree
#   VM_MEM	guest memory in MiB (3072); VM_CPUS its processors (2)
#   VM_ACCEL	tcg or kvm; by default KVM only where the CPU shows vmx or
#		svm and a guest boots with it, else TCG
#   VM_TIMEOUT	seconds a test boot may take in all (1500)

VM_DIST=${VM_DIST:-trixie}
VM_CGROUP=${VM_CGROUP:-v2}
VM_CACHE=${VM_CACHE:-/var/cache/mcpd-vm}
VM_MEM=${VM_MEM:-3072}
VM_CPUS=${VM_CPUS:-2}
VM_TIMEOUT=${VM_TIMEOUT:-1500}
# The guest's build of the suite, in the tree: each distribution its own,
# since each has its own compiler and libraries.
VMB=build-vm-$VM_DIST

vm_log() { printf '# [vm %(%T)T] %s\n' -1 "$*"; }

# What the guest needs: the run set of scripts/deps.sh (build tools and
# libraries too, since the guest runs make install), the kernel and
# systemd, and what the guest checks use.
vm_packages() {
	echo $(sh "$TOP/scripts/deps.sh" -l run) \
	    linux-image-cloud-amd64 systemd systemd-sysv udev dbus kmod \
	    procps util-linux iproute2 curl sqlite3 login less \
	    libc6-dev netavark crun runsc systemd-journal-remote
}

# Why this host cannot boot the guest, if it cannot.
vm_unable() {
	local c
	[ "$(id -u)" -eq 0 ] || { echo "not root"; return; }
	for c in qemu-system-x86_64 qemu-img debootstrap mkfs.ext4; do
		command -v "$c" > /dev/null ||
		    { echo "no $c (sh scripts/deps.sh check installs it)"; return; }
	done
	[ -n "$(vm_virtiofsd)" ] ||
	    { echo "no virtiofsd (the virtiofsd package, or qemu-system-common's)"; return; }
	case $VM_DIST in trixie|bookworm) ;; *)
		echo "VM_DIST=$VM_DIST: trixie or bookworm"; return ;; esac
	case $VM_CGROUP in v2|hybrid) ;; *)
		echo "VM_CGROUP=$VM_CGROUP: v2 or hybrid"; return ;; esac
	# Booted hybrid, Debian 13's kernel (6.12, built without
	# CONFIG_MEMCG_V1) binds no memory controller to v1, and
	# mcp-sandboxd rightly refuses to start (found by a run).
	[ "$VM_DIST$VM_CGROUP" = trixiehybrid ] && {
		echo "VM_CGROUP=hybrid with VM_DIST=trixie: Debian 13's kernel has no cgroup v1 memory controller; hybrid is for VM_DIST=bookworm"
		return; }
}

vm_virtiofsd() {
	local v
	for v in "$(command -v virtiofsd)" /usr/libexec/virtiofsd \
	    /usr/lib/qemu/virtiofsd; do
		[ -n "$v" ] && [ -x "$v" ] && { echo "$v"; return; }
	done
}

# The Debian mirrors of this host's apt sources (deb822, else
# sources.list), else deb.debian.org; VM_MIRROR and VM_SECURITY override.
vm_mirror() {	# vm_mirror debian|debian-security
	local u
	u=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/*.sources \
	    2>/dev/null | grep "/$1/*\$" | head -n 1)
	[ -n "$u" ] || u=$(awk '$1 == "deb" { print $2 }' \
	    /etc/apt/sources.list 2>/dev/null | grep "/$1/*\$" | head -n 1)
	echo "${u:-http://deb.debian.org/$1}"
}
VM_MIRROR=${VM_MIRROR:-$(vm_mirror debian)}
VM_SECURITY=${VM_SECURITY:-$(vm_mirror debian-security)}

# IMG, the image's directory: named by the distribution and a digest of
# the package list and the recipe, so that a change to either builds anew.
vm_image_key() {
	IMG_PKGS=$(vm_packages)
	IMG=$VM_CACHE/$VM_DIST-$( { echo "$VM_DIST $IMG_PKGS"
	    cat "$TOP/tests/vm/lib/image.sh"; } | sha256sum | cut -c1-16)
}
vm_image_cached() {
	vm_image_key
	[ -s "$IMG/base.img" ]
}

# vm_image: the image for VM_DIST, built if the cache has none for this
# package list and recipe.  One build at a time.
vm_image() {
	local old t0
	vm_image_key
	mkdir -p "$VM_CACHE"
	exec 8> "$VM_CACHE/.lock-$VM_DIST"
	flock -w 1800 8 || return 1
	if [ -s "$IMG/base.img" ]; then
		IMG_BUILT=cached
	else
		t0=$SECONDS
		vm_log "building the $VM_DIST image into $IMG"
		VM_MIRROR=$VM_MIRROR VM_SECURITY=$VM_SECURITY \
		    bash "$TOP/tests/vm/lib/image.sh" "$VM_DIST" "$IMG_PKGS" \
		    "$IMG" || { exec 8>&-; return 1; }
		IMG_BUILT="built in $((SECONDS - t0)) s"
		# The previous recipes' images of this distribution go.
		for old in "$VM_CACHE/$VM_DIST"-*; do
			[ "$old" = "$IMG" ] || rm -rf "$old"
		done
	fi
	exec 8>&-
	[ -s "$IMG/base.img" ]
}

# vm_chroot COMMAND...: run it in the image's root, read-only, with the
# source tree at /mnt/src (writable: the build goes there) and a /tmp of
# its own, the same paths the guest sees.  The mounts live in a mount
# namespace of their own and go with it.
vm_chroot() {
	local mnt
	mnt=$(mktemp -d /tmp/mcpd-vm-root.XXXXXX)
	VM_TMP="${VM_TMP:-} $mnt"
	unshare -m --propagation private bash -c '
	    set -e
	    root=$2
	    mount -o loop,ro,noload "$1/base.img" "$root"
	    mount -t proc proc "$root/proc"
	    mount --bind /dev "$root/dev"
	    mount -t tmpfs tmpfs "$root/tmp"
	    mount --bind "$3" "$root/mnt/src"
	    shift 3
	    exec chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 "$@"' vm-chroot "$IMG" "$mnt" "$TOP" "$@"
	local rc=$?
	rmdir "$mnt"
	return $rc
}

# vm_build: the suite built into $VMB by the guest's own compiler and
# libraries, natively, so that the guest's make install finds it up to
# date (building under TCG would take ten times as long); and the hostile
# program of tests/security, which the guest's checks run in sandboxes.
vm_build() {
	vm_chroot nice -n 10 make -C /mnt/src -j"$(nproc)" B="$VMB" all &&
	    vm_chroot cc -O2 -Wall -o "/mnt/src/$VMB/tests/attack" \
	    /mnt/src/tests/security/attack.c
}

vm_accel() {
	if [ -n "${VM_ACCEL:-}" ]; then
		echo "$VM_ACCEL"
	elif [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then
		echo kvm
	else
		echo tcg
	fi
}

# vm_boot MODE OUT: boot the guest on a fresh overlay of the image, with
# the source tree at /mnt/src (read-only) and OUT at /mnt/out.  MODE test
# runs tests/vm/guest/run.sh at boot, through its reboot, until it powers
# off, with the console in OUT/console.log; MODE shell gives the serial
# console to this terminal.  ACCEL is the accelerator used.
vm_boot() {
	local mode=$1 out=$2 run cmdline cpu rc vfsd serial
	run=$(mktemp -d /tmp/mcpd-vm-run.XXXXXX)
	VM_TMP="${VM_TMP:-} $run"
	ACCEL=${ACCEL:-$(vm_accel)}
	qemu-img create -q -f qcow2 -F raw -b "$IMG/base.img" \
	    "$run/disk.qcow2" || return 1
	vfsd=$(vm_virtiofsd)
	share() {	# share TAG DIR
		if "$vfsd" --help 2>&1 | grep -q -- --shared-dir; then
			"$vfsd" --socket-path="$run/$1.sock" --shared-dir="$2" \
			    --cache=auto --sandbox=namespace
		else
			"$vfsd" --socket-path="$run/$1.sock" -o source="$2" \
			    -o cache=auto
		fi > "$run/virtiofsd-$1.log" 2>&1 &
		VFS_PIDS="${VFS_PIDS:-} $!"
	}
	VFS_PIDS=
	share src "$TOP"
	share out "$out"
	local i
	for ((i = 0; i < 100; i++)); do
		[ -S "$run/src.sock" ] && [ -S "$run/out.sock" ] && break
		sleep 0.1
	done
	cmdline="root=/dev/vda rw console=ttyS0 panic=-1"
	[ "$mode" = test ] && cmdline="$cmdline mcpd.vmtest=1"
	[ "$VM_CGROUP" = hybrid ] && cmdline="$cmdline \
systemd.unified_cgroup_hierarchy=0 SYSTEMD_CGROUP_ENABLE_LEGACY_FORCE=1"
	if [ "$ACCEL" = kvm ]; then
		cpu="-accel kvm -cpu host"
	else
		cpu="-accel tcg,thread=multi,tb-size=256 -cpu max"
	fi
	if [ "$mode" = shell ]; then
		serial="-serial mon:stdio"
	else
		serial="-serial stdio"
	fi
	set -- nice -n 10 qemu-system-x86_64 $cpu -M q35 -m "$VM_MEM" \
	    -smp "$VM_CPUS" -nodefaults -no-user-config -display none \
	    -nic none $serial -device virtio-rng-pci \
	    -kernel "$IMG/vmlinuz" -initrd "$IMG/initrd.img" \
	    -append "$cmdline" \
	    -drive file="$run/disk.qcow2",format=qcow2,if=virtio \
	    -object memory-backend-memfd,id=mem,size="${VM_MEM}M",share=on \
	    -machine memory-backend=mem \
	    -chardev socket,id=src,path="$run/src.sock" \
	    -device vhost-user-fs-pci,chardev=src,tag=src \
	    -chardev socket,id=out,path="$run/out.sock" \
	    -device vhost-user-fs-pci,chardev=out,tag=out
	VM_BOOT_AT=$(date +%s)
	if [ "$mode" = shell ]; then
		"$@"
		rc=$?
	else
		timeout -k 10 "$VM_TIMEOUT" "$@" < /dev/null 2> "$out/qemu.err" |
		    vm_stamp > "$out/console.log"
		rc=${PIPESTATUS[0]}
	fi
	kill $VFS_PIDS 2> /dev/null
	wait $VFS_PIDS 2> /dev/null
	VFS_PIDS=
	cat "$run"/virtiofsd-*.log >> "$out/virtiofsd.log" 2> /dev/null
	rm -rf "$run"
	return "$rc"
}

# vm_cleanup: what a run interrupted (a timeout, Ctrl-C) leaves behind:
# the shares' virtiofsd and the temporary directories.  vm.sh calls it
# at exit; after a whole run there is nothing left for it to do.
vm_cleanup() {
	[ -n "${VFS_PIDS:-}" ] && kill $VFS_PIDS 2> /dev/null
	[ -n "${VM_TMP:-}" ] && rm -rf $VM_TMP
}

# Each console line with the seconds since QEMU started.
vm_stamp() {
	local line t0=${EPOCHREALTIME/./} t
	while IFS= read -r line; do
		t=$(( ${EPOCHREALTIME/./} - t0 ))
		printf '%4d.%02d %s\n' $((t / 1000000)) $((t / 10000 % 100)) \
		    "${line%$'\r'}"
	done
}
