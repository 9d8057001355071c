#!/bin/bash
# mcpctl audit: verify on databases written to the format's letter by
# tests/tools/auditgen, and on copies tampered with by the sqlite3 shell
# in every way the format is meant to catch; list, show, tail and export
# with their filters, text and JSON; tail -f; keygen; and reading as a
# member of the audit group, who may not write anything beside the
# database, while a writer has it open, after a crash, and after a clean
# stop.
. "$TOP/tests/lib.sh"

MCPCTL=$B/mcpctl
GEN=$B/tests/auditgen
T=$(mktemp -d /tmp/mcpd-mcpctl.XXXXXX)
chmod 0755 "$T"
# The system's python3 when there is one: a version manager's shim can
# cost a tenth of a second a call.
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
XUSER=mcpctlu$$
XGROUP=mcpctlg$$
TAILPID=

cleanup() {
	[ -n "$TAILPID" ] && kill "$TAILPID" 2>/dev/null
	wait 2>/dev/null
	if [ "$(id -u)" -eq 0 ]; then
		id "$XUSER" > /dev/null 2>&1 && userdel "$XUSER"
		getent group "$XUSER" > /dev/null && groupdel "$XUSER"
		getent group "$XGROUP" > /dev/null && groupdel "$XGROUP"
	fi
	[ -n "${KEEP:-}" ] && echo "# kept $T" || rm -rf "$T"
}
trap cleanup EXIT


# verify_ok NAME DB [ARGS...]: exit 0 and "ok": true (anchored: give -c).
verify_ok() {
	local name=$1 db=$2 rc
	shift 2
	"$MCPCTL" -j -d "$db" audit verify "$@" > "$T/v.json" 2> "$T/v.err"
	rc=$?
	if [ "$rc" -eq 0 ] && [ "$(json "$T/v.json" 'd["ok"]')" = True ]; then
		ok "$name"
	else
		not_ok "$name (exit $rc)"
		diag_file "$T/v.json"
		diag_file "$T/v.err"
	fi
}

# verify_bad NAME DB KIND SEQ [ARGS...]: exit 1, the kind and first seq.
verify_bad() {
	local name=$1 db=$2 kind=$3 seq=$4 rc got
	shift 4
	"$MCPCTL" -j -d "$db" audit verify "$@" > "$T/v.json" 2> "$T/v.err"
	rc=$?
	got=$(json "$T/v.json" '"%s %s %s" % (d["ok"], d["kind"], d["first_bad_seq"])' 2>&1)
	if [ "$rc" -eq 1 ] && [ "$got" = "False $kind $seq" ]; then
		ok "$name: exit 1, $kind at seq $seq: $(json "$T/v.json" 'd["error"]')"
	else
		not_ok "$name: exit $rc, got \"$got\", want \"False $kind $seq\""
		diag_file "$T/v.json"
		diag_file "$T/v.err"
	fi
}

# fresh NAME [FROM]: a copy of a fixture's directory, to tamper with.
fresh() {
	rm -rf "$T/$1"
	cp -a "$T/${2:-base}" "$T/$1"
	echo "$T/$1/audit.db"
}

sql() {
	sqlite3 "$1" "$2"
}

# --- fixtures ----------------------------------------------------------

mkdir "$T/base" "$T/rot" "$T/k3"
"$GEN" create -c 20 -n 50 "$T/base/audit.db" > "$T/base/checkpoints.log"
check "auditgen writes a database of 50 records, 3 checkpoints" \
    test "$(grep -c '^audit checkpoint size=' "$T/base/checkpoints.log")" -eq 3
"$GEN" create -c 20 -n 50 -r 25 "$T/rot/audit.db" > /dev/null
"$GEN" keygen "$T/k3/other.key" "$T/k3/other.pub"
BASE=$T/base/audit.db
KEYID=$(awk '{print $2}' "$T/base/audit.pub")
ROOT40=$(sed -n 's/.*size=40 root=\([0-9a-f]*\) .*/\1/p' "$T/base/checkpoints.log")
# The last checkpoint line, as mcp-auditd logs it: what an admin keeps.
CP50=$(tail -1 "$T/base/checkpoints.log")
# Record 50's time and checkpoint 50's, as verify shows them.
T50=2026-11-21T15:49:00.049Z

# --- verify: the good ------------------------------------------------

verify_ok "verify accepts a database written to the format, anchored by -c" \
    "$BASE" -c "$CP50"
check "its JSON counts 50 records, 4 checkpoints (-c too), the last of size 50, one key" \
    test "$(json "$T/v.json" '(d["records"], d["checkpoints"], d["last_checkpoint"], d["keys"], d["first_bad_seq"], d["error"])')" = \
    "(50, 4, 50, ['$KEYID'], None, None)"
check "... anchored at 50, with the times of the last record and checkpoint" \
    test "$(json "$T/v.json" '(d["anchored"], d["anchor"], d["last_record_time"], d["last_checkpoint_time"])')" = \
    "(True, 50, '${T50%Z}000000Z', '${T50%Z}000000Z')"
"$MCPCTL" -j -d "$BASE" audit verify > "$T/v.json" 2> "$T/v.err"
check "without -c: exit 3, \"ok\" but not anchored" \
    test "$?:$(json "$T/v.json" '(d["ok"], d["anchored"], d["anchor"], d["checkpoints"])')" = \
    "3:(True, False, None, 3)"
"$MCPCTL" -d "$BASE" audit verify > "$T/v.out" 2> "$T/v.err"
check "... and in text, exit 3 too" test "$?" -eq 3
check "the summary names the records, checkpoints and key" \
    test "$(sed -n 1p "$T/v.out")" = \
    "verified 50 records, 3 checkpoints, key $KEYID; last checkpoint size 50"
check "... when the log and its last checkpoint end" \
    test "$(sed -n 2p "$T/v.out")" = \
    "last record 50 at $T50; last checkpoint 50 at $T50"
check "... and that nothing anchors it" \
    test "$(sed -n 3p "$T/v.out")" = \
    "NOT ANCHORED: no checkpoint kept elsewhere was given with -c"
check "the warning on standard error says what goes unnoticed, with the times" \
    eval 'grep -q "^mcpctl: WARNING: not anchored: .* records cut from the end of the log, with the checkpoints past them, would go unnoticed" "$T/v.err" &&
    grep -qx "mcpctl: last record: 50, at $T50" "$T/v.err" &&
    grep -qx "mcpctl: last checkpoint: records 1..50, made $T50" "$T/v.err" &&
    grep -q "mcpctl audit anchor" "$T/v.err"'
out=$("$MCPCTL" -d "$BASE" audit verify -q -c "$CP50")
check "-q prints nothing on success" test "$?" -eq 0 -a -z "$out"
out=$("$MCPCTL" -d "$BASE" audit verify -q 2> "$T/v.err")
check "-q without -c: exit 3, nothing on standard output, the warning still" \
    test "$?" -eq 3 -a -z "$out" -a -n "$(grep WARNING "$T/v.err")"
check "reading a database with no -wal leaves none behind" \
    test ! -e "$BASE-wal" -a ! -e "$BASE-shm"
verify_ok "verify -c SIZE:ROOT with the root a checkpoint line logged" \
    "$BASE" -c "40:$ROOT40"
verify_ok "verify -k with the public key file" "$BASE" -k "$T/base/audit.pub" \
    -c "$CP50"
verify_ok "verify -c with an older checkpoint line" "$BASE" \
    -c "$(head -1 "$T/base/checkpoints.log")"
"$MCPCTL" -d "$BASE" audit verify -c "$(head -1 "$T/base/checkpoints.log")" \
    > "$T/v.out"
check "... anchored at 20, records after it newer than it" \
    grep -qx "anchored by the checkpoint given with -c for records 1..20, made 2026-11-21T15:19:00.019Z; records 21..50 are newer than it" "$T/v.out"

# --- anchor ------------------------------------------------------------

out=$("$MCPCTL" -d "$BASE" audit anchor)
check "anchor prints SIZE:ROOT of every record, the last record's time: $out" \
    test "$?:$out" = "0:50:$(sed -n 's/.*size=50 root=\([0-9a-f]*\) .*/\1/p' "$T/base/checkpoints.log") $T50"
verify_ok "verify -c takes what anchor prints" "$BASE" -c "$out"
"$MCPCTL" -j -d "$BASE" audit anchor > "$T/a.json"
check "anchor -j: anchor, size, root and the last record's time" \
    test "$(json "$T/a.json" '(d["anchor"] == "%d:%s" % (d["size"], d["root"]), d["size"], d["last_record_time"])')" = \
    "(True, 50, '${T50%Z}000000Z')"

mkdir "$T/nocp"
"$GEN" create -n 5 "$T/nocp/audit.db" > /dev/null
out=$("$MCPCTL" -d "$T/nocp/audit.db" audit verify 2> /dev/null | head -1)
check "a database with no checkpoint verifies: $out" \
    test "$out" = "verified 5 records, 0 checkpoints, key $(awk '{print $2}' "$T/nocp/audit.pub"); no checkpoint"
verify_ok "... and is anchored by what anchor prints" "$T/nocp/audit.db" \
    -c "$("$MCPCTL" -d "$T/nocp/audit.db" audit anchor)"
rm -f "$T/nocp/audit.db"
"$GEN" create -n 0 "$T/nocp/audit.db" > /dev/null
out=$("$MCPCTL" -d "$T/nocp/audit.db" audit verify 2> /dev/null | head -2)
check "so does an empty one: $out" \
    test "$out" = "verified 0 records, 0 checkpoints, keys (none); no checkpoint
no record; no checkpoint"
"$MCPCTL" -d "$T/nocp/audit.db" audit anchor > "$T/a.out" 2> "$T/a.err"
check "an empty log has nothing to anchor: exit 2, saying so" \
    test "$?" -eq 2 -a -s "$T/a.err" -a ! -s "$T/a.out"

verify_ok "a key rotation, as auditd makes it, verifies" "$T/rot/audit.db" \
    -c "$("$MCPCTL" -d "$T/rot/audit.db" audit anchor)"
OLDID=$(ls "$T/rot" | sed -n 's/^audit\.pub\.\([0-9a-f]\{16\}\)$/\1/p')
NEWID=$(awk '{print $2}' "$T/rot/audit.pub")
check "both keys are named, the old first" \
    test "$(json "$T/v.json" '" ".join(d["keys"])')" = "$OLDID $NEWID"
"$MCPCTL" -d "$T/rot/audit.db" audit show 26 > "$T/show26"
check "record 26 is the rotation, signed by the old key" \
    eval 'grep -q "^event *key-rotation" "$T/show26" &&
    grep -q "^keyid *$OLDID" "$T/show26" &&
    grep -q "new_keyid *$NEWID" "$T/show26"'

# --- verify: the tampered --------------------------------------------

db=$(fresh modified)
sql "$db" "UPDATE records SET body = 'tool=evil' || char(10) WHERE seq = 5"
verify_bad "a modified body" "$db" modified 5

db=$(fresh deleted)
sql "$db" "DELETE FROM records WHERE seq = 7"
verify_bad "a deleted record (a gap)" "$db" deleted 7

db=$(fresh renumbered)
sql "$db" "DELETE FROM records WHERE seq = 7;
    UPDATE records SET seq = -(seq - 1) WHERE seq > 7;
    UPDATE records SET seq = -seq WHERE seq < 0"
verify_bad "a deleted record, the later ones renumbered" "$db" deleted 7

db=$(fresh duplicate)
sql "$db" "UPDATE records SET seq = -seq WHERE seq >= 5;
    UPDATE records SET seq = -seq + 1 WHERE seq < 0;
    INSERT INTO records SELECT 5, time, role, pid, uid, tenant, sandbox,
    event, outcome, body, prev, hash, keyid, sig FROM records WHERE seq = 4"
verify_bad "an inserted duplicate" "$db" inserted 5

db=$(fresh forged)
sql "$db" "UPDATE records SET seq = -seq WHERE seq >= 12;
    UPDATE records SET seq = -seq + 1 WHERE seq < 0;
    INSERT INTO records SELECT 12, time + 1, role, pid, uid, tenant, sandbox,
    event, outcome, 'tool=forged' || char(10), hash, randomblob(32), keyid,
    randomblob(64) FROM records WHERE seq = 11"
verify_bad "an inserted forged record" "$db" inserted 12

db=$(fresh reordered)
sql "$db" "UPDATE records SET seq = -1 WHERE seq = 5;
    UPDATE records SET seq = 5 WHERE seq = 6;
    UPDATE records SET seq = 6 WHERE seq = -1"
verify_bad "two records swapped" "$db" reordered 5

db=$(fresh truncated)
sql "$db" "DELETE FROM records WHERE seq > 45"
verify_bad "the tail truncated under the last checkpoint" "$db" truncated 46

# The tail cut with the checkpoints past it: the database holds together.
ANCHOR=$("$MCPCTL" -d "$BASE" audit anchor)
db=$(fresh cutall)
sql "$db" "DELETE FROM records WHERE seq > 33;
    DELETE FROM checkpoints WHERE size > 33"
"$MCPCTL" -j -d "$db" audit verify > "$T/v.json" 2> "$T/v.err"
check "records and checkpoints cut together, no -c: exit 3, unanchored" \
    test "$?:$(json "$T/v.json" '(d["ok"], d["anchored"], d["records"], d["last_checkpoint"])')" = \
    "3:(True, False, 33, 20)"
check "... with a warning naming the last record and checkpoint, and their times" \
    eval 'grep -q "WARNING: not anchored" "$T/v.err" &&
    grep -qx "mcpctl: last record: 33, at 2026-11-21T15:32:00.032Z" "$T/v.err" &&
    grep -qx "mcpctl: last checkpoint: records 1..20, made 2026-11-21T15:19:00.019Z" "$T/v.err"'
verify_bad "... caught by the anchor taken before the cut" "$db" truncated 34 \
    -c "$ANCHOR"
check "... naming the records missing" \
    grep -q "records 34\.\.50 are missing (truncated)" <<< "$(json "$T/v.json" 'd["error"]')"
verify_bad "... and by the checkpoint line mcp-auditd logged" "$db" truncated 34 \
    -c "$CP50"
verify_ok "... while an anchor taken after the cut verifies" "$db" \
    -c "$("$MCPCTL" -d "$db" audit anchor)"
check "... anchored at 33" test "$(json "$T/v.json" 'd["anchor"]')" = 33
"$MCPCTL" -d "$db" audit anchor -c "$ANCHOR" > "$T/a.out" 2>&1
check "anchor, given the older anchor, refuses the cut log: exit 1" \
    test "$?" -eq 1 -a -n "$(grep '^FAILED at seq 34 (truncated)' "$T/a.out")"

db=$(fresh badsig)
sql "$db" "UPDATE records SET sig = randomblob(64) WHERE seq = 9"
verify_bad "a replaced signature" "$db" bad-signature 9

db=$(fresh untrusted)
"$GEN" resign "$db" 9 "$T/k3/other.key"
verify_bad "a record re-signed (keyid and sig) by another key" "$db" \
    untrusted-key 9

db=$(fresh keychange)
"$GEN" resign -C "$db" 30 "$T/k3/other.key"
verify_bad "a key change with no rotation record, both keys trusted" \
    "$db" key-change 30 -k "$T/keychange/audit.pub" -k "$T/k3/other.pub"

db=$(fresh cproot)
sql "$db" "UPDATE checkpoints SET root = randomblob(32) WHERE size = 20"
verify_bad "a changed checkpoint root" "$db" checkpoint 20

verify_bad "-c with another root" "$BASE" checkpoint-mismatch 40 \
    -c "40:$(printf '%064d' 0)"
verify_bad "-c beyond the last record" "$BASE" truncated 51 \
    -c "60:$ROOT40"

db=$(fresh rotbody rot)
sql "$db" "UPDATE records SET body = replace(body, 'old_keyid', 'old_keyix')
    WHERE seq = 26"
verify_bad "a modified rotation record" "$db" modified 26

db=$(fresh rotold rot)
rm "$T/rotold/audit.pub.$OLDID"
verify_bad "without the rotated-out public key, the old records' key is untrusted" \
    "$db" untrusted-key 1

"$MCPCTL" -d "$T/cproot/audit.db" audit verify > "$T/v.txt"
check "text output names the first bad seq and what is wrong" \
    grep -q '^FAILED at seq 20 (checkpoint): checkpoint 20 has a bad signature' \
    "$T/v.txt"

# --- verify: cannot verify -------------------------------------------

"$MCPCTL" -d "$T/none/audit.db" audit verify > /dev/null 2> "$T/err"
check "a missing database exits 2" test "$?" -eq 2
check "... naming it" grep -qF "$T/none/audit.db" "$T/err"
mkdir "$T/nokey"
cp "$BASE" "$T/nokey/"
"$MCPCTL" -d "$T/nokey/audit.db" audit verify > /dev/null 2> "$T/err"
check "no trusted key exits 2" test "$?" -eq 2
"$MCPCTL" -d "$BASE" audit verify -c 40:zz > /dev/null 2>&1
check "a malformed -c exits 2" test "$?" -eq 2
"$MCPCTL" -d "$BASE" audit verify -c "audit checkpoint size=40 time=1" > /dev/null 2>&1
check "a checkpoint line without its root exits 2" test "$?" -eq 2
"$MCPCTL" -d "$BASE" audit anchor -q > /dev/null 2>&1
check "anchor takes no -q: exit 2" test "$?" -eq 2
"$MCPCTL" -d "$BASE" audit verify -k "$T/none.pub" > /dev/null 2>&1
check "an unreadable -k exits 2" test "$?" -eq 2
sqlite3 "$T/schema1.db" "CREATE TABLE meta (key TEXT PRIMARY KEY,
    value INTEGER NOT NULL); INSERT INTO meta VALUES ('schema', 1)"
"$MCPCTL" -d "$T/schema1.db" audit verify > /dev/null 2> "$T/err"
check "a database of another schema exits 2" test "$?" -eq 2
"$MCPCTL" audit verify -x > /dev/null 2> "$T/err"
rc=$?
check "bad usage exits 2 with a usage line" \
    eval 'test $rc -eq 2 && grep -q "^usage: mcpctl .*audit verify" "$T/err"'

# --- the configuration -----------------------------------------------

printf 'audit {\n\tdatabase "%s"\n}\n' "$BASE" > "$T/mcpd.conf"
"$MCPCTL" -f "$T/mcpd.conf" audit verify -q -c "$CP50"
check "-f: the database named by the configuration" test "$?" -eq 0
"$MCPCTL" -f "$T/none.conf" audit verify > /dev/null 2>&1
check "verify without a configuration exits 2" test "$?" -eq 2
"$MCPCTL" -f "$T/none.conf" audit list > /dev/null 2>&1
check "list without a configuration exits 1" test "$?" -eq 1

# --- list, show, tail, export ----------------------------------------

lines() { "$MCPCTL" -d "$BASE" audit "$@" | wc -l; }

check "list shows every record" test "$(lines list)" -eq 50
check "list -n 5 shows the first five" \
    test "$("$MCPCTL" -d "$BASE" audit list -n 5 | awk '{print $1}' | tr '\n' ' ')" = "1 2 3 4 5 "
line=$("$MCPCTL" -d "$BASE" audit list -n 4 | tail -n 1 | sed 's/^ *//' |
    tr -s ' ')
check "a list line: seq, time in ms, role[pid]/uid, event, outcome, tenant, sandbox, summary" \
    test "$line" = '4 2026-11-21T15:03:00.003Z sandboxd[4003]/0 exec ok alice 5bd10000 command="ls -l /workspace/3" exit=0'
check "--since and --until, ISO 8601 both ways" \
    test "$(lines list --since '2026-11-21 15:10:00' --until 2026-11-21T15:19:59Z)" -eq 10
check "--since in seconds since the epoch" \
    test "$(lines list --since 1795275540)" -eq 11
check "--tenant" test "$(lines list --tenant alice)" -eq 17
check "--sandbox takes a prefix of the id" \
    test "$(lines list --sandbox 5bd10005)" -eq 6
check "--event, repeated" \
    test "$(lines list --event exec --event file-write)" -eq 12
check "--outcome with --event" \
    test "$(lines list --event run --outcome intent)" -eq 7
"$MCPCTL" -d "$BASE" audit list --since 10x > /dev/null 2>&1
check "a bad time is a usage error (exit 2)" test "$?" -eq 2
"$MCPCTL" -d "$BASE" audit list --event nosuch > /dev/null 2>&1
check "an unknown event is a usage error (exit 2)" test "$?" -eq 2

mkdir "$T/recent"
"$GEN" create -n 50 -t $(( $(date +%s) - 3600 )) "$T/recent/audit.db" > /dev/null
check "--since 1770s: the records of the last 29.5 minutes" \
    test "$("$MCPCTL" -d "$T/recent/audit.db" audit list --since 1770s | wc -l)" -eq 19
check "--until 1h: none is that old" \
    test "$("$MCPCTL" -d "$T/recent/audit.db" audit list --until 61m | wc -l)" -eq 0

"$MCPCTL" -j -d "$BASE" audit list > "$T/list.json"
check "list -j is one JSON array of every record" \
    test "$(json "$T/list.json" 'len(d)')" -eq 50
check "a JSON record has every field, the body decoded, binary fields in hex" \
    test "$(json "$T/list.json" '(sorted(d[2]), d[2]["seq"], d[2]["time"], d[2]["time_ns"], d[2]["body"]["code.excerpt"], len(d[2]["hash"]), len(d[2]["sig"]))')" = \
    "(['body', 'event', 'hash', 'keyid', 'outcome', 'pid', 'prev', 'role', 'sandbox', 'seq', 'sig', 'tenant', 'time', 'time_ns', 'uid'], 3, '2026-11-21T15:02:00.002000000Z', 1795273320002000000, \"print('hé 2')\\n\\x1b[31m100%\", 64, 128)"
"$MCPCTL" -j -d "$BASE" audit list --tenant nobody > "$T/empty.json"
check "an empty list -j is []" test "$(json "$T/empty.json" 'd')" = "[]"

"$MCPCTL" -d "$BASE" audit show 3 > "$T/show3"
check "show prints each field, the body decoded and made safe, and the hashes" \
    eval 'grep -q "^seq *3$" "$T/show3" &&
    grep -q "^time *2026-11-21T15:02:00.002000000Z (1795273320002000000)$" "$T/show3" &&
    grep -qF "    code.excerpt  print('"'"'hé 2'"'"')\n\x1b[31m100%" "$T/show3" &&
    grep -q "^hash *[0-9a-f]\{64\}$" "$T/show3" &&
    grep -q "^prev *[0-9a-f]\{64\}$" "$T/show3" &&
    grep -q "^keyid *$KEYID$" "$T/show3" &&
    grep -q "^sig *[0-9a-f]\{128\}$" "$T/show3"'
check "no control character reaches the terminal" \
    test "$(LC_ALL=C tr -d '\n[:print:]\200-\377' < "$T/show3" | wc -c)" -eq 0
"$MCPCTL" -j -d "$BASE" audit show 7 > "$T/show7.json"
check "show -j is the record's object" \
    test "$(json "$T/show7.json" '(d["seq"], d["event"], d["body"])')" = \
    "(7, 'auth-failure', {'reason': 'bad token', 'tool': 'run_code'})"
"$MCPCTL" -d "$BASE" audit show 51 > /dev/null 2>&1
check "show of a record that is not there exits 1" test "$?" -eq 1
"$MCPCTL" -d "$BASE" audit show x > /dev/null 2>&1
check "show of no seq exits 2" test "$?" -eq 2

check "tail shows the last 10" \
    test "$("$MCPCTL" -d "$BASE" audit tail | awk '{print $1}' | tr '\n' ' ')" = "41 42 43 44 45 46 47 48 49 50 "
check "tail -n 2 --tenant bob: the last two of a filter" \
    test "$("$MCPCTL" -d "$BASE" audit tail -n 2 --tenant bob | awk '{print $1}' | tr '\n' ' ')" = "47 50 "
"$MCPCTL" -j -d "$BASE" audit tail -n 3 > "$T/tail.jsonl"
check "tail -j writes one JSON object a line" \
    "$PY" -c 'import json, sys
seqs = [json.loads(l)["seq"] for l in open(sys.argv[1])]
sys.exit(seqs != [48, 49, 50])' "$T/tail.jsonl"

"$MCPCTL" -d "$BASE" audit export > "$T/export.jsonl"
check "export writes JSON lines, one per record, without -j" \
    "$PY" -c 'import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(len(recs) != 50 or [r["seq"] for r in recs] != list(range(1, 51)))' \
    "$T/export.jsonl"
"$MCPCTL" -j -d "$BASE" audit export --event policy-denial > "$T/export2.jsonl"
check "export --event" \
    "$PY" -c 'import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(len(recs) != 6 or any(r["event"] != "policy-denial" for r in recs))' \
    "$T/export2.jsonl"

# --- tail -f ---------------------------------------------------------

db=$(fresh follow)
"$MCPCTL" -d "$db" audit tail -f -n 1 > "$T/follow.out" 2>&1 &
TAILPID=$!
sleep 0.3
"$GEN" append -n 1 "$db" > /dev/null
check "tail -f shows a record another process appends, within 2 s" \
    wait_log "$T/follow.out" 'command="appended 51"' 2
"$GEN" append -n 2 -w 100 -H 1 "$db" > /dev/null &
WRITER=$!
check "... and those appended while that writer keeps the database open" \
    wait_log "$T/follow.out" 'command="appended 53"' 2
wait "$WRITER"
kill -TERM "$TAILPID"
wait "$TAILPID"
check "tail -f stops on SIGTERM, exit 0" test "$?" -eq 0
TAILPID=
check "... having shown each record once" \
    test "$(grep -c appended "$T/follow.out")" -eq 3
timeout 5 "$MCPCTL" -d "$db" audit tail -f -n 2 | head -n 1 > /dev/null
rc=${PIPESTATUS[0]}
check "tail -f stops when the reader of its pipe is gone, exit 0" \
    test "$rc" -eq 0
verify_ok "the appended records verify, anchored by the checkpoint before them" \
    "$db" -c "$CP50"

# --- keygen ----------------------------------------------------------

mode() { stat -c %a "$1"; }
mkdir "$T/kg"
"$MCPCTL" -d "$T/kg/audit.db" audit keygen > "$T/kg.out"
check "keygen in an empty directory makes audit.key 0600 and audit.pub 0644" \
    test "$(mode "$T/kg/audit.key") $(mode "$T/kg/audit.pub")" = "600 644"
id1=$(awk '{print $2}' "$T/kg/audit.pub")
check "... and says the key id" grep -q "new audit key $id1:" "$T/kg.out"
(umask 077; "$MCPCTL" -j -d "$T/kg/audit.db" audit keygen) > "$T/kg.json"
check "keygen again stages audit.key.next 0600 and audit.pub.next 0644, whatever the umask" \
    test "$(mode "$T/kg/audit.key.next") $(mode "$T/kg/audit.pub.next")" = "600 644"
check "... -j says so, with the new id" \
    test "$(json "$T/kg.json" '(d["staged"], d["keyid"])')" = \
    "(True, '$(awk '{print $2}' "$T/kg/audit.pub.next")')"
check "... and the current key is left alone" \
    test "$(awk '{print $2}' "$T/kg/audit.pub")" = "$id1"
sum=$(cat "$T/kg"/audit.* | sha256sum)
"$MCPCTL" -d "$T/kg/audit.db" audit keygen > /dev/null 2> "$T/kg.err"
check "keygen refuses to replace a staged key (exit 1)" test "$?" -eq 1
check "... and changes nothing" test "$(cat "$T/kg"/audit.* | sha256sum)" = "$sum"
"$MCPCTL" -d "$T/nodir/audit.db" audit keygen > /dev/null 2>&1
check "keygen in a missing directory exits 1" test "$?" -eq 1

# --- as a member of the audit group -----------------------------------

if [ "$(id -u)" -ne 0 ]; then
	ok "# SKIP the audit group's access needs root"
	done_testing
	exit
fi

if useradd --system --no-create-home --shell /usr/sbin/nologin \
    --user-group "$XUSER" && groupadd --system "$XGROUP" &&
    usermod -aG "$XGROUP" "$XUSER"; then
	ok "a throwaway user $XUSER in a throwaway audit group $XGROUP"
else
	not_ok "useradd $XUSER, groupadd $XGROUP"
	done_testing
	exit
fi
as_user() {
	setpriv --reuid="$XUSER" --regid="$XUSER" --init-groups "$@"
}

# As mcp-auditd leaves it: directory 0750, database 0640, key 0600.
G=$T/grp
mkdir -m 0750 "$G"
"$GEN" create -c 10 -n 20 "$G/audit.db" > /dev/null
chgrp -R "$XGROUP" "$G"
chmod 0640 "$G/audit.db"
chmod 0600 "$G/audit.key"
as_user "$MCPCTL" -d "$G/audit.db" audit verify > "$T/g.out" 2>&1
check "a member of the audit group verifies a database with no -wal" \
    grep -q "^verified 20 records" "$T/g.out"
as_user test -w "$G"
check "... though the directory is not writable for that user" test "$?" -ne 0

umask 027
"$GEN" append -n 2 -H 2 "$G/audit.db" > /dev/null &
WRITER=$!
wait_for 2 test -e "$G/audit.db-wal"
sleep 0.3
as_user "$MCPCTL" -d "$G/audit.db" audit verify > "$T/g.out" 2>&1
check "... and one a writer holds open, seeing its last commit" \
    grep -q "^verified 22 records" "$T/g.out"
# Not through as_user: $! must be mcpctl's pid.
setpriv --reuid="$XUSER" --regid="$XUSER" --init-groups \
    "$MCPCTL" -d "$G/audit.db" audit tail -f -n 0 > "$T/g-follow.out" 2>&1 &
TAILPID=$!
sleep 0.3
"$GEN" append -n 1 "$G/audit.db" > /dev/null
check "... tail -f as that user sees a new record" \
    wait_log "$T/g-follow.out" 'command="appended 23"' 2
kill -TERM "$TAILPID"
wait "$TAILPID"
TAILPID=
wait "$WRITER"

"$GEN" append -n 2 -X "$G/audit.db" > /dev/null
check "a writer that crashed leaves -wal and -shm" \
    test -e "$G/audit.db-wal" -a -e "$G/audit.db-shm"
as_user "$MCPCTL" -d "$G/audit.db" audit verify > "$T/g.out" 2>&1
check "... and the member reads the records in the -wal, all 25" \
    grep -q "^verified 25 records" "$T/g.out"
check "... as list sees them" \
    test "$(as_user "$MCPCTL" -d "$G/audit.db" audit tail -n 1 | awk '{print $1}')" = 25
rm "$G/audit.db-shm"
as_user "$MCPCTL" -d "$G/audit.db" audit verify > "$T/g.out" 2>&1
rc=$?
check "a -wal without its -shm is not read around: exit 2, not stale records" \
    test "$rc" -eq 2 -a -n "$(grep -- '-shm' "$T/g.out")"
umask 022

# keygen as root gives the key to the audit user: the configuration's,
# or with -d the directory's owner.
mkdir "$T/kg2" "$T/kg3"
printf 'audit {\n\tuser "%s"\n\tdatabase "%s"\n}\n' "$XUSER" \
    "$T/kg2/audit.db" > "$T/kg2.conf"
"$MCPCTL" -f "$T/kg2.conf" audit keygen > /dev/null
check "keygen as root: the files are the configuration's audit user's" \
    test "$(stat -c %U:%G "$T/kg2/audit.key" "$T/kg2/audit.pub" | sort -u)" = \
    "$XUSER:$XUSER"
chown "$XUSER:$XGROUP" "$T/kg3"
"$MCPCTL" -d "$T/kg3/audit.db" audit keygen > /dev/null
"$MCPCTL" -d "$T/kg3/audit.db" audit keygen > /dev/null
check "with -d, the directory's owner's, staged keys too" \
    test "$(stat -c %U:%G "$T/kg3"/audit.* | sort -u)" = "$XUSER:$XGROUP"
done_testing
