#!/bin/sh
# The path of a runsc (gVisor) that mcpd can use: one from 2024 or later.
# Debian 12's (2022-12-19) refuses the statx(2) flags of its own
# coreutils, so "ls" fails in a sandbox; Debian 13's (2024-07-29) does
# not.  Where the installed runsc is too old or absent, Debian 13's
# package is fetched with apt from this host's Debian mirror (apt checks
# its signature against debian-archive-keyring) and unpacked, not
# installed, under /var/cache/mcpd/runsc: it is one static binary.
#
#	sh scripts/runsc.sh	prints the path, or why there is none (exit 1)
#
# Environment: RUNSC_CACHE (default /var/cache/mcpd/runsc), RUNSC_SUITE
# (default trixie), RUNSC_MIRROR (default: this host's Debian mirror).
set -eu
MIN=20240101
CACHE=${RUNSC_CACHE:-/var/cache/mcpd/runsc}
SUITE=${RUNSC_SUITE:-trixie}

# The release date of the runsc at $1, or nothing.
runsc_date() {
	"$1" --version 2>/dev/null | sed -n 's/^runsc version //p' |
	    grep -o '[0-9]\{8\}' | head -n 1
}

new_enough() {
	d=$(runsc_date "$1")
	[ -n "$d" ] && [ "$d" -ge "$MIN" ]
}

for r in "$(command -v runsc 2>/dev/null || true)" "$CACHE/$SUITE/runsc"; do
	if [ -n "$r" ] && [ -x "$r" ] && new_enough "$r"; then
		echo "$r"
		exit 0
	fi
done

if [ "$(id -u)" -ne 0 ]; then
	echo "runsc: none from 2024 or later; as root this script fetches" \
	    "Debian $SUITE's" >&2
	exit 1
fi
if ! command -v apt-get > /dev/null 2>&1; then
	echo "runsc: none from 2024 or later, and no apt-get to fetch one" >&2
	exit 1
fi

# This host's Debian mirror (deb822, else sources.list).
mirror=${RUNSC_MIRROR:-$(sed -n 's/^URIs: *//p' \
    /etc/apt/sources.list.d/*.sources 2>/dev/null | grep '/debian/*$' |
    head -n 1)}
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" { print $2 }' \
    /etc/apt/sources.list 2>/dev/null | grep '/debian/*$' | head -n 1)
mirror=${mirror:-http://deb.debian.org/debian}

mkdir -p "$CACHE"
exec 9> "$CACHE/.lock"
flock -w 600 9
# Another run may have fetched it meanwhile.
if [ -x "$CACHE/$SUITE/runsc" ] && new_enough "$CACHE/$SUITE/runsc"; then
	echo "$CACHE/$SUITE/runsc"
	exit 0
fi

T=$(mktemp -d "$CACHE/.fetch.XXXXXX")
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/lists/partial" "$T/cache/archives/partial"
echo "deb $mirror $SUITE main" > "$T/sources.list"
# apt's own sandbox user must read what it writes here.
chmod 0755 "$T" "$T/lists" "$T/cache"
set -- -q -o Dir::Etc::sourcelist="$T/sources.list" \
    -o Dir::Etc::sourceparts=- -o Dir::State::Lists="$T/lists" \
    -o Dir::Cache="$T/cache" -o APT::Get::List-Cleanup=0 \
    -o APT::Sandbox::User=root
echo "runsc: fetching Debian $SUITE's runsc from $mirror" >&2
if ! apt-get "$@" update > "$T/apt.log" 2>&1 ||
    ! (cd "$T" && apt-get "$@" download runsc >> "$T/apt.log" 2>&1); then
	cat "$T/apt.log" >&2
	echo "runsc: cannot fetch runsc from $mirror $SUITE" >&2
	exit 1
fi
dpkg-deb -x "$T"/runsc_*.deb "$T/root"
if ! new_enough "$T/root/usr/bin/runsc"; then
	echo "runsc: Debian $SUITE's runsc is older than 2024 too" >&2
	exit 1
fi
rm -rf "$CACHE/$SUITE"
mkdir -p "$CACHE/$SUITE"
cp "$T/root/usr/bin/runsc" "$CACHE/$SUITE/runsc.new"
mv "$CACHE/$SUITE/runsc.new" "$CACHE/$SUITE/runsc"
ls "$T"/runsc_*.deb | sed 's,.*/,,' > "$CACHE/$SUITE/package"
echo "$CACHE/$SUITE/runsc"
