#!/bin/sh
# Install the Debian packages that building, running or testing mcpd needs.
# As root the missing ones are installed with apt-get; anyone else is told
# exactly what to install.  With -l, the list is printed and nothing done
# (tests/vm/lib/machine.sh puts the run set into the VM test's guest).
#
#	sh scripts/deps.sh [-l] build|run|check|fuzz|languages
set -eu
list=
if [ "${1:-}" = -l ]; then
	list=1
	shift
fi

build="gcc make pkg-config bison libevent-dev libjansson-dev libsqlite3-dev
libseccomp-dev libcap-ng-dev libsodium-dev libssl-dev"
# Containers (runc), persistent workspaces (mkfs.ext4), egress networking
# (slirp4netns), the host image's interpreters for the default languages
# (python3, node), and what mcpctl builds and imports images with
# (debootstrap, skopeo, umoci).
run="$build runc e2fsprogs slirp4netns python3 nodejs debootstrap skopeo
umoci"
# What the host image needs for every language of the built-in table
# (policy/policy.c), in its order: python3 and nodejs, node-typescript
# (tsc), dash and bash, gcc and g++, golang-go, rustc, a JDK (javac),
# ruby, perl, php-cli.  make run offers those installed and names the
# rest; make languages installs them.  A server needs only those it
# offers.
languages="python3 nodejs node-typescript dash bash gcc g++ golang-go rustc
default-jdk-headless ruby perl php-cli"
# The tests also drive gdb, sqlite3, mandoc, ps, losetup, ip, curl, openssl
# (tests/integration/tls.sh makes its certificates with it) and haproxy
# (tests/integration/cluster.sh runs contrib/haproxy.cfg), and npm
# installs the interop tests' clients (tests/package.json) into
# tests/node_modules.  tests/integration/languages.sh runs every language
# of the built-in table on the host image, so all of them are here, with
# matplotlib for a plot that comes back as a picture.
# tests/security/lockdown.sh scores and checks the units with
# systemd-analyze (systemd), whether or not systemd runs the machine.
# tests/integration/crun.sh runs the sandbox tests again under crun;
# tests/integration/gvisor.sh under runsc, which scripts/runsc.sh fetches
# from Debian 13 (with apt, not installed) where this host's is too old.
# tests/vm/vm.sh boots a Debian guest in QEMU (virtiofsd comes with
# qemu-system-x86 on Debian 12, in a package of its own from Debian 13).
vm="qemu-system-x86 qemu-utils"
if apt-cache show virtiofsd > /dev/null 2>&1; then
	vm="$vm virtiofsd"
fi
check="$run crun gdb sqlite3 mandoc procps util-linux iproute2 curl openssl npm systemd haproxy
$languages python3-matplotlib python3-pip $vm"
# make fuzz alone: clang, and libFuzzer from compiler-rt.
fuzz="$build clang libclang-rt-dev"

case "${1:-build}" in
build)	want=$build ;;
run)	want=$run ;;
check)	want=$check ;;
fuzz)	want=$fuzz ;;
languages) want=$languages ;;
*)	echo "usage: $0 [-l] build|run|check|fuzz|languages" >&2; exit 2 ;;
esac
if [ -n "$list" ]; then
	echo $want
	exit 0
fi

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "deps: not a Debian system; make sure these are installed:" \
	    $want >&2
	exit 0
fi

# Packages whose job another package does here: NodeSource's nodejs,
# for one, carries its own npm and conflicts with Debian's.
provided() {
	case $1 in
	nodejs)	[ -x /usr/bin/node ] ;;
	npm)	command -v npm >/dev/null 2>&1 ;;
	*)	return 1 ;;
	esac
}

missing=
for p in $want; do
	case " $missing " in *" $p "*) continue ;; esac
	provided "$p" && continue
	s=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$s" in
	*" installed") ;;
	*) missing="$missing $p" ;;
	esac
done
if [ -z "$missing" ]; then
	[ "${1:-}" = languages ] &&
	    echo "deps: nothing is missing: the packages of every language" \
	    "are installed" >&2
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages:$missing" >&2
	echo "deps: install them with: sudo apt-get install$missing" >&2
	exit 1
fi
echo "deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# Package lists may be absent or stale on a fresh machine: update once and
# retry before giving up.
if ! apt-get install -y -q --no-install-recommends $missing >&2; then
	apt-get update -q >&2
	apt-get install -y -q --no-install-recommends $missing >&2
fi
[ "${1:-}" = languages ] &&
    echo "deps: installed; a make run already started offers them once" \
    "started again" >&2
exit 0
