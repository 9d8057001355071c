#!/bin/bash
# make install and make uninstall into a staging DESTDIR: the FHS layout
# (programs in sbin, sandbox-init in libexec, configuration in /etc/mcpd,
# state in /var/lib/mcpd, units, sysusers.d and tmpfiles.d), the paths
# compiled into the programs matching where things landed, an edited
# configuration surviving a second install, the installed sysusers.d and
# tmpfiles.d files making their users and directories in the staging tree,
# and uninstall taking all but the configuration and the state.
. "$TOP/tests/lib.sh"

T=$(mktemp -d /tmp/mcpd-install.XXXXXX)
trap 'rm -rf "$T"' EXIT
D=$T/dest
san=
[ "$(basename "$B")" = build-san ] && san=SANITIZE=1

mk() {	# mk TARGET: make it into $D, output in $T/make.log
	make -s -C "$TOP" $san "$1" DESTDIR="$D" > "$T/make.log" 2>&1
}
listing() {	# every file, link and directory under $D, with its mode
	(cd "$D" && find . -mindepth 1 \( -type f -o -type d -o -type l \) \
	    -printf '%m %y %p\n' | sed 's| \./| /|' | sort -k3)
}

mk install
check "make install DESTDIR=... exits 0" test $? -eq 0 ||
    diag_file "$T/make.log"
listing > "$T/list"
diag "what landed:"
while read -r line; do diag "  $line"; done < "$T/list"

want_file() {	# want_file MODE PATH
	check "$2, mode $1" grep -qx "$1 f $2" "$T/list"
}
for p in mcpd mcp-sandboxd mcp-auditd mcpctl; do
	want_file 755 /usr/local/sbin/$p
done
want_file 755 /usr/local/libexec/mcpd/sandbox-init
want_file 640 /etc/mcpd/mcpd.conf
want_file 644 /usr/local/share/man/man5/mcpd.conf.5
for p in mcpd mcp-sandboxd mcp-auditd mcpctl; do
	want_file 644 /usr/local/share/man/man8/$p.8
done
for u in mcpd.service mcpd.socket mcp-sandboxd.service mcp-auditd.service; do
	want_file 644 /lib/systemd/system/$u
done
want_file 644 /usr/lib/sysusers.d/mcpd.conf
want_file 644 /usr/lib/tmpfiles.d/mcpd.conf
check "the state directory /var/lib/mcpd, mode 0711" \
    grep -qx "711 d /var/lib/mcpd" "$T/list"
check "nothing else: 17 files in all" test "$(grep -c ' f ' "$T/list")" -eq 17

# Every unit makes its files for no one else, and the directories it has
# systemd make are given the modes tmpfiles.d gives them: systemd sets a
# StateDirectory= or RuntimeDirectory= to its mode (0755 unless told) at
# every start.
for u in mcpd.service mcpd.socket mcp-sandboxd.service mcp-auditd.service; do
	f=$D/lib/systemd/system/$u
	check "$u has UMask=0077" grep -qx 'UMask=0077' "$f"
	if grep -q '^StateDirectory=' "$f"; then
		check "$u: StateDirectoryMode=0711" \
		    grep -qx 'StateDirectoryMode=0711' "$f"
	fi
	if grep -q '^RuntimeDirectory=' "$f"; then
		check "$u: RuntimeDirectoryMode=0711" \
		    grep -qx 'RuntimeDirectoryMode=0711' "$f"
	fi
	if grep -q '^ListenStream=/' "$f"; then
		check "$u: DirectoryMode=0711" grep -qx 'DirectoryMode=0711' "$f"
	fi
done

# The units name the installed programs; the programs look where things
# were installed.
check "no @...@ is left in the units" \
    eval '! grep -Eq "@[A-Z]+@" "$D"/lib/systemd/system/*'
# The program of each Exec line, past systemd's prefixes (+ runs it with
# full privileges, - ignores its failure, ...).
exec_ok() {
	local x
	for x in $(sed -n 's/^Exec[A-Za-z]*=[-+!@:]*\([^ ]*\).*/\1/p' \
	    "$D"/lib/systemd/system/*.service); do
		[ -x "$D$x" ] || [ "$x" = /bin/kill -a -x "$x" ] ||
		    { diag "not installed: $x"; return 1; }
	done
}
check "each unit's Exec lines name an installed program, or the system's kill" \
    exec_ok
dump=$("$D/usr/local/sbin/mcpd" -nv -f "$D/etc/mcpd/mcpd.conf" 2>&1)
check "the installed mcpd -n accepts the installed configuration" \
    grep -q 'configuration OK' <<< "$dump"
check "the sandbox-init it would run is the installed one" \
    grep -q '^sandbox-init "/usr/local/libexec/mcpd/sandbox-init"$' <<< "$dump"
check "its state directory is /var/lib/mcpd" \
    eval '! grep -q "^state directory" <<< "$dump" ||
    grep -q "^state directory \"/var/lib/mcpd\"$" <<< "$dump"'
# Without -f it reads /etc/mcpd/mcpd.conf: where there is none, it says so.
if [ ! -e /etc/mcpd/mcpd.conf ]; then
	check "without -f it reads /etc/mcpd/mcpd.conf" \
	    eval '"$D/usr/local/sbin/mcpd" -n 2>&1 | grep -q "^mcpd: /etc/mcpd/mcpd.conf: No such file"'
fi
check "the installed page renders" \
    eval 'mandoc -Tascii "$D/usr/local/share/man/man8/mcpctl.8" | grep -q "audit verify"'

# The users and directories the installed sysusers.d and tmpfiles.d files
# make, in the staging tree (with this machine's users to start from).
cp /etc/passwd /etc/group "$D/etc/"
check "systemd-sysusers --root takes the installed file" \
    systemd-sysusers --root="$D" "$D/usr/lib/sysusers.d/mcpd.conf"
check "... and makes _mcpd and _mcpaudit, with groups, no login" \
    eval 'grep -q "^_mcpd:x:[0-9]*:[0-9]*:.*:/nonexistent:/usr/sbin/nologin$" "$D/etc/passwd" &&
    grep -q "^_mcpaudit:x:[0-9]*:[0-9]*:.*:/nonexistent:/usr/sbin/nologin$" "$D/etc/passwd" &&
    grep -q "^_mcpd:" "$D/etc/group" && grep -q "^_mcpaudit:" "$D/etc/group"'
check "systemd-tmpfiles --root --create takes the installed file" \
    systemd-tmpfiles --root="$D" --create "$D/usr/lib/tmpfiles.d/mcpd.conf"
check "... and makes /run/mcpd and /var/lib/mcpd, 0711 root" \
    eval '[ "$(stat -c "%a %U" "$D/run/mcpd")" = "711 root" ] &&
    [ "$(stat -c "%a %U" "$D/var/lib/mcpd")" = "711 root" ]'
chmod 0755 "$D/var/lib/mcpd"
systemd-tmpfiles --root="$D" --create "$D/usr/lib/tmpfiles.d/mcpd.conf"
check "... and tightens a /var/lib/mcpd an older version made 0755" \
    test "$(stat -c "%a" "$D/var/lib/mcpd")" = 711
gid=$(sed -n 's/^_mcpd:x:\([0-9]*\):.*/\1/p' "$D/etc/group")
check "... and gives the configuration to group _mcpd (gid $gid), mode 0640" \
    test "$(stat -c "%a %u %g" "$D/etc/mcpd/mcpd.conf")" = "640 0 $gid"
rm -rf "$D/run" "$D/etc/passwd" "$D/etc/group" "$D"/etc/*- "$D"/etc/.pwd.lock \
    "$D/etc/gshadow" "$D/etc/shadow"

# An admin's edit survives a second install.
echo "# edited" >> "$D/etc/mcpd/mcpd.conf"
mk install
check "a second install exits 0" test $? -eq 0
check "... and keeps the edited configuration" \
    grep -qx '# edited' "$D/etc/mcpd/mcpd.conf"

mk uninstall
check "make uninstall exits 0" test $? -eq 0
check "it says what it left" grep -q 'left in place' "$T/make.log"
left=$(cd "$D" && find . -type f | sed 's|^\.||' | sort)
diag "left: $left"
check "only the configuration is left of the files" \
    test "$left" = /etc/mcpd/mcpd.conf
check "the state directory is left" test -d "$D/var/lib/mcpd"
done_testing
