#!/bin/bash
# mcpctl image: import of an OCI image layout that umoci makes here and
# of a docker-archive that tests/integration/mkarchive.py writes with
# python's tarfile alone; list, verify and rm; hostile layers, names and
# trees that try to reach the host; the digest against a second
# implementation (treedigest.py); sweeping what crashed commands left;
# refusals for non-root users and bad arguments; and a real debootstrap
# build of the minimal preset, and one interrupted, both running beside
# the rest, each in a state directory of its own; the suite then serves
# the built image.
. "$TOP/tests/lib.sh"
require_root

MCPCTL=$B/mcpctl
T=$(mktemp -d /tmp/mcpd-images.XXXXXX)
chmod 0755 "$T"
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
STATE=$T/state
STORE=$STATE/images/store
NAMES=$STATE/images/names
CONF=$T/mcpd.conf
CANARY=$T/canary	# hostile images aim here: it must stay empty
VICTIM=$T/victim	# and at this file
SLEEPER=
BUILDER=	# the debootstrap build, running beside the rest
STATE_DEB=$T/state-deb	# its state directory
CONF_DEB=$T/mcpd-deb.conf
STOPPED=	# a build stopped by SIGTERM midway, beside them too
STOPPER=
STATE_STOP=$T/state-stop
CONF_STOP=$T/mcpd-stop.conf

cat > "$CONF" <<EOF
state directory "$STATE"
EOF
chmod 0644 "$CONF"
echo "state directory \"$STATE_DEB\"" > "$CONF_DEB"
echo "state directory \"$STATE_STOP\"" > "$CONF_STOP"
chmod 0644 "$CONF_DEB" "$CONF_STOP"
mkdir -m 0755 "$CANARY" "$VICTIM"
echo keep > "$VICTIM/keep"

cleanup() {
	[ -n "$SLEEPER" ] && kill "$SLEEPER" 2>/dev/null
	[ -n "$BUILDER" ] && kill "$BUILDER" 2>/dev/null
	[ -n "$STOPPER" ] && kill "$STOPPER" 2>/dev/null
	[ -n "$STOPPED" ] && kill "$STOPPED" 2>/dev/null
	kill_daemons
	wait 2>/dev/null
	remove_tmp
}

# The suite serves the store's images: listed to clients with their digest
# and languages, runs and sandboxes in them, gone once removed; all with no
# restart.  The tenant's client is mcpd --stdio, driven by Python.
served_by_the_suite() {
	local conf=$T/suite.conf d
	d=$(json "$T/l.json" '[i["digest"] for i in d if i["name"] == "mini"][0]')
	cat > "$conf" <<CONF
user "64101"
run directory "$T/run"
state directory "$STATE"
sandbox-init "$B/sandbox-init"
sandbox uids 268435456 64
image host host pool 0
tenant local {
	uid root
}
audit {
	user "64102"
	required yes
}
CONF
	CONF=$conf start auditd
	CONF=$conf start sandboxd
	wait_sandboxd
	check "sandboxd found the stored image" \
	    grep -q "image mini: $d, from the store" "$T/sandboxd.log"
	B=$B CONF=$conf T=$T DIGEST=$d MCPCTL=$MCPCTL $PY - > "$T/tap" \
	    2>&1 <<'PY'
import os, subprocess, sys
sys.path.insert(0, os.path.join(os.environ["TOP"], "tests/integration"))
from mcpclient import Stdio, ok, done, text, sc, is_error
B, CONF, T, D = (os.environ[k] for k in ("B", "CONF", "T", "DIGEST"))
c = Stdio([f"{B}/mcpd", "--stdio", "-f", CONF], f"{T}/stdio.log")
c.initialize("2025-11-25")
r = c.tool("list_images", {})
imgs = {i["name"]: i for i in sc(r).get("images", [])}
ok(imgs.get("mini", {}).get("type") == "stored" and
   imgs["mini"].get("digest") == D and
   imgs["mini"].get("source", "").startswith("debootstrap "),
   "list_images shows the stored image with its digest and source", imgs)
ok(imgs["mini"].get("runtime") == "runc" if "mini" in imgs else False,
   "and the OCI runtime its sandboxes run under", imgs)
r = c.tool("list_languages", {}, timeout=120)
mini = {i["name"]: i for i in sc(r).get("images", [])}.get("mini", {})
langs = {l["name"]: l["version"] for l in mini.get("languages", [])}
ok({"sh", "bash", "perl"} <= set(langs) and "python" not in langs and
   "c" not in langs,
   f"list_languages probes it: minbase has sh, bash, perl ({langs})", mini)
r = c.tool("run_code", {"language": "perl", "image": "mini",
                        "code": 'open(F, "/etc/debian_version"); '
                                'print "perl on debian ", scalar <F>;'})
ok(not is_error(r) and sc(r).get("stdout", "").startswith(
   "perl on debian 12"), "run_code runs in it, per run", r)
r = c.tool("run_code", {"language": "python", "image": "mini",
                        "code": "print(1)"})
ok(is_error(r) and "has no python" in text(r),
   "a language it lacks is refused", r)
r = c.tool("sandbox_create", {"image": "mini", "name": "m"})
ok(not is_error(r) and sc(r).get("image") == "mini",
   "a sandbox starts from it", r)
r = c.tool("sandbox_exec", {"sandbox": "m", "command":
                            "touch /etc/x 2>/dev/null && echo writable; "
                            "echo hi > f && cat f"})
ok(sc(r).get("results", [{}])[0].get("stdout") == "hi\n",
   "its root is read-only, its workspace writable", r)
c.tool("sandbox_stop", {"sandbox": "m"})
v = subprocess.run([os.environ["MCPCTL"], "-f", CONF, "image", "verify",
                    "mini"], capture_output=True)
ok(v.returncode == 0, "it still verifies after the suite ran code in it",
   v)
rm = subprocess.run([os.environ["MCPCTL"], "-f", CONF, "image", "rm",
                     "mini"], capture_output=True)
r = c.tool("run_code", {"language": "sh", "image": "mini",
                        "code": "echo 1"})
ok(rm.returncode == 0 and is_error(r) and "unknown image" in text(r),
   "once mcpctl removes it, runs in it are refused", (rm, r))
r = c.tool("list_images", {})
ok("mini" not in [i["name"] for i in sc(r)["images"]],
   "and it is listed no more", r)
c.close()
done()
PY
	relay_tap "$T/tap"
	check "sandboxd stops cleanly" stop sandboxd
	check "auditd stops cleanly" stop auditd
}
trap cleanup EXIT

mc() {	# mc ARGS...: mcpctl image, output in $T/out and $T/err, RC
	"$MCPCTL" -f "$CONF" image "$@" > "$T/out" 2> "$T/err"
	RC=$?
}
as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}
rootfs() {	# rootfs NAME: its root filesystem, from list -j
	"$MCPCTL" -j -f "$CONF" image list > "$T/l.json" &&
	json "$T/l.json" "[i['rootfs'] for i in d if i['name'] == '$1'][0]"
}
no_stage() {	# nothing half made is left in the store
	[ -z "$(ls -A "$STORE" 2>/dev/null | grep '^\.new-')" ]
}
trees() {	# how many trees the store holds
	ls "$STORE" | grep -c '^[0-9a-f]\{64\}$'
}
host_clean() {	# the canary and the victim as they were, nothing strewn
	[ -z "$(ls -A "$CANARY")" ] && [ "$(cat "$VICTIM/keep")" = keep ] &&
	    [ "$(stat -c %h "$VICTIM/keep")" = 1 ] && [ ! -e /mcpd-pwned-$$ ] &&
	    [ -z "$(find "$T" \( -name "mcpd-pwned-*" -o -name dotdot -o \
	    -name escape -o -name absolute \) | grep -v /rootfs/)" ]
}
diag_err() {
	diag_file "$T/err"
	diag_file "$T/out"
}

for tool in umoci skopeo debootstrap; do
	if ! command -v $tool > /dev/null; then
		not_ok "$tool is not installed (scripts/deps.sh check installs it)"
		done_testing
		exit 1
	fi
done

# The debootstrap build takes most of a minute, waiting on the network and
# dpkg: it runs in a state directory of its own while the rest of the test
# runs, and is checked at the end.
build_start=$(date +%s)
"$MCPCTL" -f "$CONF_DEB" image build mini > "$T/build.out" 2> "$T/build.err" &
BUILDER=$!
# Another, stopped by SIGTERM once its tree has a /var.
"$MCPCTL" -f "$CONF_STOP" image build stopped > "$T/stop.out" \
    2> "$T/stop.err" &
STOPPED=$!
(
	wait_for 60 eval 'r=$(ls -d "$STATE_STOP"/images/store/.new-*/rootfs \
	    2>/dev/null | head -n 1); [ -n "$r" ] && [ -d "$r/var" ]' &&
	    touch "$T/stop.midway"
	kill -TERM "$STOPPED"
) &
STOPPER=$!

# --- a tiny image: one static program ---------------------------------

cat > "$T/hello.c" <<'EOF'
#include <stdio.h>
#include <unistd.h>

int
main(int argc, char *argv[])
{
	if (argc > 1)
		sleep(60);
	puts("hello from an image");
	return 0;
}
EOF
mkdir -p "$T/root/bin"
cc -static -O2 -o "$T/root/bin/hello" "$T/hello.c"
chmod 0755 "$T/root" "$T/root/bin"
check "a static test program" test -x "$T/root/bin/hello"

(cd "$T" && umoci init --layout lay && umoci new --image lay:latest &&
    umoci insert --image lay:latest root / &&
    umoci config --image lay:latest --config.cmd /bin/hello) > "$T/umoci.log" 2>&1
check "umoci makes an OCI layout of it" test -f "$T/lay/index.json"
MANIFEST=$(json "$T/lay/index.json" 'd["manifests"][0]["digest"]')

mc import hello "$T/lay"
if [ "$RC" -eq 0 ] && grep -q '^hello sha256:[0-9a-f]\{64\}$' "$T/out"; then
	ok "import of the layout: $(cat "$T/out")"
else
	not_ok "import of the layout (exit $RC)"
	diag_err
fi
DIGEST=$(awk '{print $2}' "$T/out")
HEX=${DIGEST#sha256:}
"$MCPCTL" -j -f "$CONF" image list > "$T/l.json"
check "list -j: name, digest, source, the manifest as source digest" \
    test "$(json "$T/l.json" '[(i["name"], i["digest"], i["source"], i["source_digest"]) for i in d]')" = \
    "[('hello', '$DIGEST', 'oci-layout $T/lay:latest', '$MANIFEST')]"
R=$(rootfs hello)
check "its rootfs is store/<hex>/rootfs" test "$R" = "$STORE/$HEX/rootfs"
check "the program is in it, and runs there" \
    test "$(chroot "$R" /bin/hello)" = "hello from an image"
check "the mountpoints and files sandboxd binds over are made" \
    eval 'test -d "$R/proc" -a -d "$R/dev" -a -d "$R/workspace" -a \
    -f "$R/.mcpd/sandbox-init" -a -f "$R/etc/passwd" -a \
    -f "$R/etc/resolv.conf" -a "$(stat -c %a "$R/tmp")" = 1777'
check "the tree is root's, closed to writers, the info and name 0644" \
    test "$(stat -c '%U %a' "$STORE/$HEX" "$R" "$STORE/$HEX/info" "$NAMES/hello" | tr '\n' ' ')" = \
    "root 755 root 755 root 644 root 644 "
check "the name file holds the digest and a newline" \
    test "$(cat "$NAMES/hello")" = "$DIGEST" -a "$(wc -c < "$NAMES/hello")" -eq 72
check "the info holds digest, source, source-digest, created, size, files" \
    test "$(cut -d' ' -f1 "$STORE/$HEX/info" | tr '\n' ' ')" = \
    "digest source source-digest created size files "
ref=$("$PY" "$TOP/tests/integration/treedigest.py" "$R")
check "treedigest.py, from the encoding alone, computes the same digest" \
    test "$ref" = "$DIGEST $(json "$T/l.json" '"%d %d" % (d[0]["size"], d[0]["files"])')"
"$MCPCTL" -f "$CONF" image list > "$T/list"
check "list: a header and a line: name, 12 digits, size, time, source" \
    eval 'test "$(wc -l < "$T/list")" -eq 2 &&
    grep -q "^hello  *${HEX:0:12}  *[0-9.]*K  *20[0-9-]* [0-9:]*  *oci-layout $T/lay:latest\$" "$T/list"'

mc verify hello
check "verify: exit 0, verified" eval '[ $RC -eq 0 ] && grep -q "^hello: verified $DIGEST" "$T/out"'
mc verify "$DIGEST"
rc1=$RC
mc verify "$HEX"
check "verify by digest, and by its hex digits" test "$rc1$RC" = 00
as_nobody "$MCPCTL" -f "$CONF" image verify hello > /dev/null 2>&1
check "verify as nobody, who may read the tree" test "$?" -eq 0
as_nobody "$MCPCTL" -f "$CONF" image list > "$T/out" 2>&1
check "list as nobody" grep -q "^hello " "$T/out"

mc import hello2 "$T/lay:latest"
check "the same image under another name: the same tree" \
    eval '[ $RC -eq 0 ] && [ "$(awk "{print \$2}" "$T/out")" = "$DIGEST" ] &&
    [ "$(trees)" -eq 1 ] && no_stage'
mc rm hello
check "rm of one name keeps the tree the other names" \
    eval '[ $RC -eq 0 ] && [ ! -e "$NAMES/hello" ] && [ -d "$STORE/$HEX" ]'
mc rm hello2
check "rm of the last name deletes the tree (no one uses it)" \
    eval '[ $RC -eq 0 ] && [ "$(ls -A "$STORE")" = "" ] && [ "$(ls -A "$NAMES")" = "" ]'
mc rm hello2
check "rm of a name that is gone: exit 1" \
    eval '[ $RC -eq 1 ] && grep -q "hello2: no such image" "$T/err"'

# --- tags --------------------------------------------------------------

cp -a "$T/lay" "$T/lay2"
(cd "$T" && umoci tag --image lay2:latest a && umoci tag --image lay2:latest b &&
    umoci rm --image lay2:latest) >> "$T/umoci.log" 2>&1
mc import two "$T/lay2"
check "a layout of two tags, neither latest, wants one named: exit 1" \
    eval '[ $RC -eq 1 ] && grep -q "its tags: a b" "$T/err" && no_stage'
mc import two "$T/lay2:b"
check "... and takes SOURCE:TAG" \
    eval '[ $RC -eq 0 ] && [ "$(awk "{print \$2}" "$T/out")" = "$DIGEST" ]'
mc import two "$T/lay2:c"
check "a tag the layout lacks: exit 1" test "$RC" -eq 1
mc rm two

# --- a docker-archive from another producer ---------------------------

"$PY" "$TOP/tests/integration/mkarchive.py" "$T/hello.tar" <<EOF
dir bin 0755
file bin/hello 0755 $T/root/bin/hello
EOF
mc import dock "$T/hello.tar"
check "import of a docker-archive python wrote" \
    eval '[ $RC -eq 0 ] && grep -q "^dock sha256:" "$T/out"' || diag_err
R=$(rootfs dock)
check "... holding the same program, which runs" \
    eval 'cmp -s "$R/bin/hello" "$T/root/bin/hello" &&
    [ "$(chroot "$R" /bin/hello)" = "hello from an image" ]'
check "... the same tree as umoci's layout, so the same digest" \
    test "$(awk '{print $2}' "$T/out")" = "$DIGEST"
"$MCPCTL" -j -f "$CONF" image list > "$T/l.json"
check "... its source the archive, its source digest the OCI manifest skopeo made" \
    test "$(json "$T/l.json" '(d[0]["source"], d[0]["source_digest"][:7])')" = \
    "('docker-archive $T/hello.tar', 'sha256:')"
"$PY" "$TOP/tests/integration/mkarchive.py" "$T/other.tar" <<EOF
text other 0644 another image
EOF
mc import dock "$T/other.tar"
check "the name given to another image: its old tree goes, no other tree named" \
    eval '[ $RC -eq 0 ] && [ "$(trees)" -eq 1 ] && [ ! -e "$STORE/$HEX" ] &&
    [ "$(cat "$NAMES/dock")" = "$(awk "{print \$2}" "$T/out")" ]'
mc rm dock

# --- hostile layers ----------------------------------------------------

hostile() {	# hostile DESC: import $T/h.tar, written from stdin
	"$PY" "$TOP/tests/integration/mkarchive.py" "$T/h.tar"
	mc import hostile "$T/h.tar"
	if [ "$RC" -eq 0 ]; then
		R=$(rootfs hostile)
		ref=$("$PY" "$TOP/tests/integration/treedigest.py" "$R" | cut -d' ' -f1)
		check "$1: contained (imported as $(cut -c1-19 "$T/out" | cut -d' ' -f2)...), nothing outside" \
		    eval 'host_clean && no_stage && [ "$ref" = "$(awk "{print \$2}" "$T/out")" ]'
		mc rm hostile
	else
		check "$1: refused ($(grep -v '^ *$' "$T/err" | tail -n 1)), nothing outside" \
		    eval 'host_clean && no_stage'
	fi
}
hostile "etc -> /, then etc/mcpd-pwned-$$" <<EOF
symlink etc /
text etc/mcpd-pwned-$$ 0644 pwned
EOF
check "... and / holds no mcpd-pwned-$$" test ! -e /mcpd-pwned-$$
hostile ".mcpd -> the canary, then .mcpd/sandbox-init" <<EOF
symlink .mcpd $CANARY
text .mcpd/sandbox-init 0755 pwned
EOF
hostile "an absolute link to the canary, then a file under it" <<EOF
dir bin 0755
symlink abs $CANARY
text abs/file 0644 pwned
EOF
hostile "../ entries and an absolute path" <<EOF
text ../../../../../../../..$CANARY/dotdot 0644 pwned
text ./../escape 0644 pwned
text $CANARY/absolute 0644 pwned
EOF
hostile "a hard link to a host file by its absolute path" <<EOF
hardlink hl $VICTIM/keep
EOF
hostile "a link to the victim, then a whiteout through it" <<EOF
symlink v $VICTIM
text v/.wh.keep 0644
EOF
hostile "a whiteout that climbs out with ../" <<EOF
text ../../../../../../../..$VICTIM/.wh.keep 0644
EOF
hostile "a character device" <<EOF
chardev null 0666 1 3
EOF
check "... refused for its device node" grep -q "device node" "$T/err"
hostile "a link chain to /, then a file through it" <<EOF
symlink a b
symlink b /
text a/mcpd-pwned-$$ 0644 pwned
EOF

# --- hostile names and trees -------------------------------------------

mc import hello "$T/lay"
R=$(rootfs hello)
echo "$DIGEST" > "$T/hostfile"
ln -s "$T/hostfile" "$NAMES/evil"
"$MCPCTL" -f "$CONF" image list > "$T/out" 2> "$T/err"
check "a name that is a link to a host file (holding a good digest) is skipped by list" \
    eval '! grep -q "^evil " "$T/out" && grep -q "evil" "$T/err" && grep -q "^hello " "$T/out"'
mc verify evil
check "... and refused by lookup (verify exits 2)" test "$RC" -eq 2
mc rm evil
check "rm removes the link, not the host file" \
    eval '[ $RC -eq 0 ] && [ ! -L "$NAMES/evil" ] && [ "$(cat "$T/hostfile")" = "$DIGEST" ]'

echo changed >> "$R/bin/hello"
mc verify hello
check "verify finds a changed file: exit 1, ALTERED" \
    eval '[ $RC -eq 1 ] && grep -q "^hello: ALTERED: the tree.s digest is sha256:" "$T/out"'
"$MCPCTL" -j -f "$CONF" image verify hello > "$T/v.json"
check "... -j says ok false, and both digests" \
    test "$(json "$T/v.json" '(d["ok"], d["digest"])')" = "(False, '$DIGEST')"
mc rm hello
mc import hello "$T/lay"
R=$(rootfs hello)
chmod 4755 "$R/bin/hello"
mc verify hello
check "verify finds a mode changed: exit 1" test "$RC" -eq 1

rm -rf "$R/workspace"
ln -s "$VICTIM" "$R/workspace"
ln -s "$VICTIM" "$R/bin/v"
mc rm hello
check "rm of a tree whose subdirectory is a link to a host directory leaves that alone" \
    eval '[ $RC -eq 0 ] && [ "$(trees)" -eq 0 ] && host_clean'
mc import hello "$T/lay"
rm -rf "$STORE/$HEX/rootfs"
ln -s "$VICTIM" "$STORE/$HEX/rootfs"
mc rm hello
check "... and of a tree whose rootfs is such a link" \
    eval '[ $RC -eq 0 ] && [ -z "$(ls -A "$STORE")" ] && host_clean'

# --- leftovers swept -------------------------------------------------------

OLD1=$STORE/.old-$(printf '1%.0s' $(seq 64))
OLD2=$STORE/.old-$(printf '2%.0s' $(seq 64))
mkdir -p "$STORE/.new-deadbeef/rootfs/usr" "$OLD1/rootfs" "$OLD2/rootfs"
cp "$T/root/bin/hello" "$OLD2/rootfs/hello"
chroot "$OLD2/rootfs" /hello sleep > /dev/null &
SLEEPER=$!
sleep 0.2
mc rm nosuch
check "the next command sweeps a half-built tree and an unused old one" \
    eval '[ ! -e "$STORE/.new-deadbeef" ] && [ ! -e "$OLD1" ]'
check "... but keeps an old tree a process has its root in" test -d "$OLD2/rootfs"
kill "$SLEEPER"
wait "$SLEEPER" 2>/dev/null
SLEEPER=
mc rm nosuch
check "... until that process is gone" test ! -e "$OLD2"
mkdir "$STORE/$(printf 'a%.0s' $(seq 64))"
mc rm nosuch
check "a tree no name refers to (a crash between the rename and the name) is removed" \
    test -z "$(ls -A "$STORE")"

# --- refusals --------------------------------------------------------------

for args in "build x" "import x $T/lay" "rm x"; do
	as_nobody "$MCPCTL" -f "$CONF" image $args > "$T/out" 2> "$T/err"
	rc=$?
	check "image $args as nobody: exit 1, only root" \
	    eval '[ $rc -eq 1 ] && grep -q "only root may change the image store" "$T/err"'
done
for name in host ../x .x "a b" "$(printf 'n%.0s' $(seq 64))"; do
	mc import "$name" "$T/lay"
	check "the name \"${name:0:20}\" is refused: exit 2" test "$RC" -eq 2
done
for opt in "-p nosuch" "-s Bad" "-s a/b" "-m ftp://x/debian" \
    "-m 'http://x/a b'" "-m https://" "-i Bad" "-i 'ab;rm'" "-i -x" \
    "-i ab,,b/c"; do
	eval "mc build $opt x"
	check "build $opt: exit 2" test "$RC" -eq 2
done
mc import x "$T/none"
check "import of a missing path: exit 1" test "$RC" -eq 1
mkdir "$T/notlayout"
mc import x "$T/notlayout"
check "import of a directory that is no layout: exit 1" \
    eval '[ $RC -eq 1 ] && grep -q "not an OCI image layout" "$T/err"'
head -c 4096 /dev/urandom > "$T/garbage.tar"
mc import x "$T/garbage.tar"
check "import of a file that is no archive: exit 1, skopeo's refusal" \
    eval '[ $RC -eq 1 ] && grep -q "skopeo failed" "$T/err" && no_stage'
check "no image came of any of it" test -z "$(ls -A "$STORE"; ls -A "$NAMES")"

# --- debootstrap ------------------------------------------------------------

# From here on, the debootstrap build's state directory.
wait "$BUILDER"
RC=$?
BUILDER=
secs=$(( $(date +%s) - build_start ))
cp "$T/build.out" "$T/out"
cp "$T/build.err" "$T/err"
STATE=$STATE_DEB
STORE=$STATE/images/store
NAMES=$STATE/images/names
CONF=$CONF_DEB
if [ "$RC" -eq 0 ]; then
	ok "build of the minimal preset with debootstrap: ${secs}s"
else
	not_ok "build of the minimal preset (exit $RC)"
	diag_err
fi
R=$(rootfs mini)
check "its source says debootstrap, the suite and the preset" \
    test "$(json "$T/l.json" '[i["source"] for i in d]')" = \
    "['debootstrap $(. /etc/os-release; echo "$VERSION_CODENAME") minimal']"
check "a shell runs in it" test "$(chroot "$R" /bin/sh -c 'echo ok')" = ok
check "apt's downloads and lists and debootstrap's device nodes are gone" \
    eval '[ -z "$(find "$R/var/cache/apt" "$R/var/lib/apt/lists" -type f ! -name lock)" ] &&
    [ -z "$(ls -A "$R/dev")" ]'
mc verify mini
check "it verifies, after that chroot" test "$RC" -eq 0
served_by_the_suite

mc build -m http://127.0.0.1:9/debian broken
check "a build from an unreachable mirror: exit 1, with debootstrap's words" \
    eval '[ $RC -eq 1 ] && grep -q "debootstrap failed" "$T/err" && no_stage &&
    [ -z "$(ls -A "$NAMES")" ]'

wait "$STOPPER"
STOPPER=
wait "$STOPPED"
RC=$?
STOPPED=
STATE=$STATE_STOP
STORE=$STATE/images/store
NAMES=$STATE/images/names
check "a build was stopped by SIGTERM midway, its tree started" \
    test -e "$T/stop.midway"
check "a build stopped by SIGTERM exits 1 and leaves no tree" \
    eval '[ $RC -eq 1 ] && no_stage && [ -z "$(ls -A "$NAMES" 2>/dev/null)" ]'
check "... and no process of its tools" \
    test -z "$(ps -eo args= | grep -F "$STORE" | grep -v grep)"
check "no mount is left under $T" test "$(grep -c " $T" /proc/self/mountinfo)" -eq 0
check "the canary stayed empty throughout" host_clean

done_testing
