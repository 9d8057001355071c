#!/bin/bash
# make images: build the data and polyglot presets with mcpctl into the
# state directory that make run serves (./run/state, or RUN_DIR/state),
# then check each tool in them (tests/images/presets.sh).  As root:
# debootstrap must be.  Several minutes, a few gigabytes.
#
# Environment: B (build directory, default build), RUN_DIR (default
# ./run).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
B=${B:-build}
case "$B" in /*) ;; *) B="$top/$B" ;; esac
RUN=${RUN_DIR:-$top/run}

if [ "$(id -u)" -ne 0 ]; then
	echo "images: debootstrap needs root: run make images as root" >&2
	exit 1
fi
umask 022
mkdir -p "$RUN/state"

# mcpctl needs only the state directory, which make run's generated
# configuration names too.
conf=$(mktemp /tmp/mcpd-images.conf.XXXXXX)
trap 'rm -f "$conf"' EXIT
printf 'state directory "%s"\n' "$RUN/state" > "$conf"

for preset in data polyglot; do
	start=$(date +%s)
	"$B/mcpctl" -f "$conf" image build -p "$preset" "$preset"
	echo "images: $preset built in $(( $(date +%s) - start )) s" >&2
done
"$B/mcpctl" -f "$conf" image list
B=$B TOP=$top bash "$top/tests/images/presets.sh" "$conf"
