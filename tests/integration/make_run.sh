#!/bin/bash
# make run: the suite comes up from scripts/run.sh with its generated
# configuration, users and token, runs code, and Ctrl-C leaves nothing.
# make languages, with nothing missing, says so without the network.
. "$TOP/tests/lib.sh"
require_root

T=$(mktemp -d /tmp/mcpd-makerun.XXXXXX)
chmod 0755 "$T"
RUN=$T/run
cleanup() {
	[ -n "${pg:-}" ] && kill -KILL -- -"$pg" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

RUN_DIR=$RUN PORT=18080 setsid bash "$TOP/scripts/run.sh" > "$T/out" 2>&1 &
pg=$!
check "the three daemons come up" \
    wait_log "$T/out" "ping mcpd -> sandboxd -> auditd -> mcpd:" 30
check "the system users exist" \
    eval 'getent passwd _mcpd >/dev/null && getent passwd _mcpaudit >/dev/null'
check "a bearer token, readable by root alone" \
    test "$(stat -c %a "$RUN/token")" = 600 -a -s "$RUN/token"
check "the configuration holds the token's hash, not the token" \
    eval "grep -q \"sha256:\$(tr -d '\\n' < '$RUN/token' | sha256sum | cut -d' ' -f1)\" '$RUN/mcpd.conf' &&
    ! grep -qF \"\$(cat '$RUN/token')\" '$RUN/mcpd.conf'"
check "the configured port comes from PORT" \
    grep -q "listen on 127.0.0.1 port 18080" "$RUN/mcpd.conf"
mu=$(id -u _mcpd)
SBX=("$B/tests/sbx" -u "$mu" -g "$(id -g _mcpd)" -s "$RUN/sandboxd.sock")
out=$("${SBX[@]}" run -l python -c 'print(6 * 7)' 2>/dev/null)
check "code runs through the suite make run started ($out)" test "$out" = 42
id=$("${SBX[@]}" create 2>/dev/null)
"${SBX[@]}" exec -S "$id" -c 'sleep 300 &' > /dev/null 2>&1
check "a persistent sandbox with a background process is up" \
    test "$(runc --root "$RUN/runc" list -q | wc -l)" -ge 1

kill -INT -- -"$pg"
wait "$pg"
rc=$?
pg=
check "Ctrl-C stops make run cleanly (status $rc)" test "$rc" -eq 0
check "no daemon is left" \
    test -z "$(pgrep -f "$RUN/mcpd.conf")"
check "no container is left" test -z "$(runc --root "$RUN/runc" list -q)"
check "no sandbox process is left" test -z "$(sandbox_pids_all)"
check "no cgroup is left" \
    test -z "$(ls -d /sys/fs/cgroup/*/"$(cg_parent "$RUN")" 2>/dev/null)"
check "no mount is left" test -z "$(grep "$T" /proc/self/mountinfo)"
check "no loop device is left" test -z "$(losetup -a | grep "$T")"
check "the persistent sandbox is kept on disk for next time" \
    test -f "$RUN/state/sandboxes/$id/disk.img"
diag_file "$T/out" 5

# make languages with everything installed: it says nothing is missing
# and exits 0, with no network at all (a namespace without one), as root
# and as anyone else.
out=$(unshare -n make -s -C "$TOP" languages 2>&1)
rc=$?
check "make languages, all installed, no network: nothing missing, exit 0 ($rc: $out)" \
    eval '[ $rc = 0 ] && grep -q "nothing is missing" <<< "$out"'
cp "$TOP/scripts/deps.sh" "$T/deps.sh"
out=$(setpriv --reuid 65534 --regid 65534 --clear-groups sh "$T/deps.sh" languages 2>&1)
rc=$?
check "the same as another user ($rc: $out)" \
    eval '[ $rc = 0 ] && grep -q "nothing is missing" <<< "$out"'
# As anyone but root, a missing package (ruby, marked removed in a copy of
# dpkg's database seen only here) gets the apt-get line, and exit 1.
python3 - /var/lib/dpkg/status "$T/status" <<'PY'
import sys
stanzas = open(sys.argv[1]).read().split("\n\n")
for i, st in enumerate(stanzas):
    if st.startswith("Package: ruby\n"):
        stanzas[i] = st.replace("Status: install ok installed",
                                "Status: deinstall ok config-files")
open(sys.argv[2], "w").write("\n\n".join(stanzas))
PY
out=$(unshare -m --propagation private sh -c 'mount --bind "$1" /var/lib/dpkg/status &&
    exec setpriv --reuid 65534 --regid 65534 --clear-groups sh "$2" languages' \
    _ "$T/status" "$T/deps.sh" 2>&1)
rc=$?
check "a missing one, not root: the apt-get line, exit 1 ($rc: $out)" \
    eval '[ $rc = 1 ] && grep -q "sudo apt-get install ruby$" <<< "$out"'
done_testing
