#!/bin/bash
# The suite on a real systemd, in a Debian guest under QEMU: installed by
# make install as README.md says, its units enabled and started by
# systemd, on the distribution's default cgroup v2 layout.  The guest
# (tests/vm/guest/) checks socket activation, the official SDK over each
# transport, every limit, hostile code, reloads, a SIGKILL of
# mcp-sandboxd, the watchdog, the journal and the audit chain, then
# reboots and checks what survived.  Its TAP lines are relayed here, and
# its console, journal and logs kept in $B/test-logs/vm/.
#
# The image is built once (tests/vm/lib/image.sh) and cached outside the
# tree; the suite is built for the guest natively, in a chroot of the
# image, into build-vm-DIST, so that the guest's make install only
# installs.  The run takes minutes under TCG; it is skipped, saying why,
# in the SANITIZE=1 pass (its build is the guest's own, not the
# sanitized one: VM_CHECK=1 forces it, VM_CHECK=0 skips it) and on a host
# that cannot boot the guest.  tests/vm/lib/machine.sh lists the VM_*
# variables; --shell boots the guest for a person instead (make vm-shell).
. "$TOP/tests/lib.sh"
. "$TOP/tests/vm/lib/machine.sh"
case $B in /*) ;; *) B=$TOP/$B ;; esac
trap vm_cleanup EXIT

MODE=test
[ "${1:-}" = --shell ] && MODE=shell
CASES=("the $VM_DIST guest image" "the suite built for the guest"
    "the guest boots with the tree shared" "phase 1 in the guest"
    "phase 2 in the guest, after its reboot")
SKIP_FROM=0
skip_all() {	# skip_all REASON: every case not run yet skipped, saying why
	local c
	if [ "$MODE" = shell ]; then
		echo "vm-shell: $1" >&2
		exit 1
	fi
	for c in "${CASES[@]:$SKIP_FROM}"; do
		ok "$c # SKIP $1"
	done
	done_testing
	exit 0
}

if [ "$MODE" = shell ]; then
	why=$(vm_unable)
	[ -z "$why" ] || skip_all "$why"
	OUT=$B/vm-shell
else
	OUT=$B/test-logs/vm
	if [ "$(basename "$B")" = build-san ] && [ -z "${VM_CHECK:-}" ]; then
		skip_all "the VM test builds its own tree for the guest and runs in the release pass of make check (VM_CHECK=1 forces it)"
	fi
	[ "${VM_CHECK:-}" = 0 ] && skip_all "VM_CHECK=0"
	why=$(vm_unable)
	[ -z "$why" ] || skip_all "$why"
fi
rm -rf "$OUT"
mkdir -p "$OUT"
T0=$SECONDS

# --- the image, the build, the clients ----------------------------------

if ! vm_image_cached; then
	reach=$(curl -s -m 20 -o /dev/null -w '%{http_code}' \
	    "$VM_MIRROR/dists/$VM_DIST/InRelease")
	[ "$reach" = 200 ] ||
	    skip_all "no image cached, and the Debian mirror $VM_MIRROR is unreachable"
fi
t=$SECONDS
if vm_image > "$OUT/image.log" 2>&1; then
	ok "${CASES[0]}: $IMG ($IMG_BUILT)"
else
	not_ok "${CASES[0]}"
	diag_file "$OUT/image.log" 40
	done_testing
	exit 1
fi
TIMES="image $((SECONDS - t)) s ($IMG_BUILT)"
while read -r p v; do
	case $p in
	runc|systemd|nodejs|gcc-1[0-9]|linux-image-cloud-amd64)
		diag "  $p $v" ;;
	esac
done < "$IMG/versions"

t=$SECONDS
if vm_build > "$OUT/build.log" 2>&1 &&
    vm_chroot make -s -q -C /mnt/src B="$VMB" all; then
	ok "${CASES[1]}: make B=$VMB in a chroot of the image, up to date after ($((SECONDS - t)) s)"
else
	not_ok "${CASES[1]}"
	grep -B2 -A8 -E 'error|Error' "$OUT/build.log" | head -n 40 |
	    sed 's/^/#   /'
	done_testing
	exit 1
fi
TIMES="$TIMES; build $((SECONDS - t)) s"
# The SDK the guest's clients import, through the share.
if ! npm_setup "$OUT/npm.log"; then
	not_ok "the interop clients install from npm (tests/node_modules)"
	diag_file "$OUT/npm.log"
fi

{
	echo "VM_DIST=$VM_DIST"
	echo "VM_CGROUP=$VM_CGROUP"
	echo "VMB=$VMB"
	# Emulation is about ten times slower than the host: the tries of a
	# wait take longer, and twice as many are allowed.
	echo "TIME_SCALE=${TIME_SCALE:-2}"
} > "$OUT/vm.env"

if [ "$MODE" = shell ]; then
	echo "vm-shell: root has no password; the tree is at /mnt/src" \
	    "(read-only), $OUT at /mnt/out; poweroff ends it, or Ctrl-A X" >&2
	vm_boot shell "$OUT"
	exit
fi

# --- the boot, its reboot, and what the guest says ------------------------

SKIP_FROM=2
# One guest at a time on a machine: they take all of its processors.
exec 7> "$VM_CACHE/.lock-boot"
flock -w 1800 7
t=$SECONDS
vm_boot test "$OUT"
rc=$?
if [ ! -e "$OUT/phase1.start" ] && [ "$ACCEL" = kvm ] && [ -z "${VM_ACCEL:-}" ]; then
	diag "no boot with KVM (exit $rc): again with TCG"
	mv "$OUT/console.log" "$OUT/console-kvm.log"
	ACCEL=tcg
	t=$SECONDS
	vm_boot test "$OUT"
	rc=$?
fi
# Under TCG the guest's kernel now and then oopses in its own code
# patching (int3 in the scheduler: guest/run.sh makes that rarer), reboots, and runs
# phase 1 again on a machine that ran half of it.  That is the emulator's
# fault, not the suite's: said, with the oops, and the whole boot tried
# once more on a fresh overlay.  A second oops counts.
if grep -qE 'Oops:|Kernel panic' "$OUT/console.log" 2>/dev/null; then
	diag "the guest's kernel crashed; its first lines, then one more boot:"
	grep -m 1 -A 4 -E 'Oops:|Kernel panic' "$OUT/console.log" |
	    sed 's/^/#   /'
	mkdir -p "$OUT/crash1"
	mv "$OUT"/console.log "$OUT"/phase[12]* "$OUT"/journal-phase* \
	    "$OUT"/qemu.err "$OUT/crash1/" 2>/dev/null
	t=$SECONDS
	vm_boot test "$OUT"
	rc=$?
fi
exec 7>&-
total=$((SECONDS - t))
if [ ! -e "$OUT/phase1.start" ] && [ ! -s "$OUT/console.log" ] &&
    [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]; then
	skip_all "QEMU cannot run here (exit $rc: $(head -n 1 "$OUT/qemu.err"))"
fi
boot=$(( $(stat -c %Y "$OUT/phase1.start" 2>/dev/null || echo 0) - VM_BOOT_AT ))
check "${CASES[2]} ($ACCEL, ${VM_CPUS} CPUs, ${VM_MEM} MiB): the test unit started ${boot} s after QEMU" \
    test -e "$OUT/phase1.start" || diag_file "$OUT/console.log" 30
TIMES="$TIMES; boot $boot s"

relay() {	# relay PHASE: the guest's TAP, renumbered, named by its phase
	local line
	while IFS= read -r line; do
		case $line in
		"ok "*) ok "(guest $1) ${line#ok [0-9]* - }" ;;
		"not ok "*) not_ok "(guest $1) ${line#not ok [0-9]* - }" ;;
		"1.."*) ;;
		*) echo "$line" ;;
		esac
	done < "$OUT/$1.tap"
}
for p in phase1 phase2; do
	if [ -f "$OUT/$p.tap" ]; then
		relay "$p"
		check "$p ran to its end in the guest" grep -q '^1\.\.' "$OUT/$p.tap"
	else
		not_ok "$p ran in the guest (no $p.tap)"
	fi
	diag "$(cat "$OUT/$p.start" "$OUT/$p.end" 2>/dev/null | tr '\n' ';')"
done
check "the guest powered off by itself after phase 2 (QEMU exit $rc, after $total s)" \
    eval '[ "$rc" -eq 0 ] && [ -f "$OUT/phase2.end" ]' ||
    diag_file "$OUT/console.log" 20
diag "times: $TIMES; the guest $total s; in all $((SECONDS - T0)) s"
done_testing
