#!/bin/bash
# Download links: sandbox_share_file over HTTP makes them, curl follows
# them.  A 200 MiB file comes back byte for byte, with the hash the tool
# gave; HEAD, Range (206, 416, If-Range) and the headers that keep a
# file from running as mcpd's origin.  Refused, each with its audit
# record: an altered token, another name, an expired link, a file
# changed (its mtime set back too), replaced by a symlink or deleted, a
# stopped sandbox, another tenant's sandbox, symlinks, FIFOs and
# directories at share time.  A reader that takes nothing holds no other
# request; a tenant's downloads at once and bytes a minute are limited;
# SIGHUP rotates the key and old links still open; the audit verifies.
SANDBOX_UIDS=1980760064		# this test's own range
. "$TOP/tests/lib.sh"
require_root
command -v curl > /dev/null || {
	ok "download links # SKIP no curl (sh scripts/deps.sh check installs it)"
	done_testing
	exit 0
}

MU=64131	# mcpd's uid
AU=64132	# auditd's
T=$(mktemp -d /tmp/mcpd-share.XXXXXX)
chmod 0755 "$T"
CONF=$T/mcpd.conf
RUN=$T/run
PORT=$(free_port)
URL=http://127.0.0.1:$PORT
TA=share-alice-$$
TB=share-bob-$$
TC=share-carol-$$
trap cleanup_bg EXIT

hash_of() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
# Under gVisor a file lives in its own kernel: no descriptor can leave.
# A tenant of runsc's, where scripts/runsc.sh finds one, is told so.
TD=share-dave-$$
GV=
if RUNSC=$(sh "$TOP/scripts/runsc.sh" 2> "$T/runsc.err"); then
	GV="runtime gvisor {
	path \"$RUNSC\"
	kind runsc
}
tenant dave {
	token \"sha256:$(hash_of "$TD")\"
	runtime gvisor
}"
fi
cat > "$CONF" <<EOF
user "$MU"
run directory "$RUN"
state directory "$T/state"
sandbox-init "$B/sandbox-init"
sandbox uids $SANDBOX_UIDS 16
listen on 127.0.0.1 port $PORT
host name s-1

limits big {
	memory 1G
	disk 1G
	timeout 120s
}
metrics tenant alice
tenant alice {
	token "sha256:$(hash_of "$TA")"
	limits big
	share downloads 2
}
tenant bob {
	token "sha256:$(hash_of "$TB")"
	limits big
}
tenant carol {
	token "sha256:$(hash_of "$TC")"
	limits big
	share rate 6M
	share max expiry 2m
}
$GV
audit {
	user "$AU"
}
EOF
start_suite

# tool TOKEN NAME ARGS: the result's structured content in $T/r.json.
tool() {
	python3 "$TOP/tests/integration/mcphttp.py" "$URL/mcp" "$1" "$2" \
	    "$3" "$T/r.json" 2> "$T/r.err"
	RC=$?
}
J() { json "$T/r.json" "$1"; }
# get URL [curl options]: the status in ST, the body in $T/body.
get() {
	local u=$1
	shift
	ST=$(curl -s -m 120 -o "$T/body" -D "$T/head" -w '%{http_code}' \
	    "$@" "$u")
}
hdr() { sed -n "s/^$1: *//Ip" "$T/head" | tr -d '\r' | head -n 1; }
sx() {	# sx SANDBOX SCRIPT: a shell command in alice's sandbox
	tool "$TA" sandbox_exec "$(python3 -c 'import json,sys; print(json.dumps({"sandbox": sys.argv[1], "command": sys.argv[2]}))' "$1" "$2")"
}

tool "$TA" sandbox_create '{"name": "docs"}'
SB=$(J 'd["id"]')
check "alice made a sandbox ($SB)" test "$RC" = 0 -a -n "$SB" ||
    diag_file "$T/r.err"
sx docs 'head -c 209715200 /dev/urandom > big.bin && sha256sum big.bin &&
printf "<script>alert(1)</script>" > page.html &&
printf "hello\n" > small.txt && printf "keep\n" > keep.txt &&
printf "same\n" > same.txt && mkdir -p d/e && printf x > d/e/f.txt &&
ln -s /etc/passwd link.txt && mkfifo fifo && printf "0123456789" > ten.txt &&
printf "victim\n" > victim.txt && printf "gone\n" > gone.txt &&
printf "mv\n" > mv.txt && printf "abc\n" > touched.txt'
SUM=$(json "$T/r.json" 'd["results"][0]["stdout"].split()[0]')
check "the sandbox made a 200 MiB file and hashed it" \
    test "$RC" = 0 -a ${#SUM} = 64 || diag_file "$T/r.json"

# --- Sharing -----------------------------------------------------------
tool "$TA" sandbox_share_file '{"sandbox": "docs", "paths": ["big.bin",
    "/workspace/page.html", "small.txt", "d/e/f.txt", "ten.txt"]}'
check "sandbox_share_file shares five files at once" \
    eval '[ $RC = 0 ] && [ "$(J "len([f for f in d[\"files\"] if \"url\" in f])")" = 5 ]' ||
    diag_file "$T/r.json"
BIG=$(J 'd["files"][0]["url"]')
PAGE=$(J 'd["files"][1]["url"]')
SMALL=$(J 'd["files"][2]["url"]')
DEEP=$(J 'd["files"][3]["url"]')
TEN=$(J 'd["files"][4]["url"]')
check "each link is on mcpd's own listener, under /files/, named as the file" \
    eval 'case "$BIG" in "$URL/files/"*/big.bin) true;; *) false;; esac &&
    case "$DEEP" in "$URL/files/"*/f.txt) true;; *) false;; esac'
check "the tool gives the size, type and SHA-256 the sandbox computed" \
    eval '[ "$(J "d[\"files\"][0][\"size\"]")" = 209715200 ] &&
    [ "$(J "d[\"files\"][0][\"sha256\"]")" = "$SUM" ] &&
    [ "$(J "d[\"files\"][1][\"mime_type\"]")" = text/html ] &&
    [ "$(J "d[\"files\"][1][\"path\"]")" = page.html ]'
check "no host path and no workspace path is in the URL" \
    eval '! grep -q -e workspace -e "$RUN" -e d/e <<< "$BIG$DEEP"'

tool "$TA" sandbox_share_file '{"sandbox": "docs", "paths": ["link.txt",
    "fifo", "d", "nope.txt"]}'
check "a symlink, a FIFO, a directory and a missing file are not shared" \
    eval '[ $RC = 2 ] && [ "$(J "len([f for f in d[\"files\"] if \"error\" in f])")" = 4 ]' ||
    diag_file "$T/r.json"
tool "$TA" sandbox_share_file '{"sandbox": "docs", "path": "../etc/passwd"}'
check "a path with .. is refused before anything is asked" \
    eval '[ $RC = 2 ] && grep -q "Invalid arguments" "$T/r.json"'
tool "$TB" sandbox_share_file "{\"sandbox\": \"$SB\", \"path\": \"small.txt\"}"
check "bob cannot share a file of alice's sandbox" \
    eval '[ $RC = 2 ] && ! grep -q /files/ "$T/r.json"' || diag_file "$T/r.json"
tool "$TC" sandbox_share_file '{"sandbox": "x", "path": "a", "expires_in": 600}'
check "a link longer than the tenant's share max expiry is refused" \
    eval '[ $RC = 2 ] && grep -q "at most 120 seconds" "$T/r.json"' ||
    diag_file "$T/r.json"

tool "$TA" run_code '{"language": "python", "sandbox": "docs", "share": true,
    "code": "open(\"out.csv\", \"w\").write(\"a,b\\n1,2\\n\"); print(42)"}'
CSV=$(J 'd["links"][0]["url"]')
check "run_code with share returns a link to the file it made, beside its output" \
    eval '[ $RC = 0 ] && [ "$(J "d[\"stdout\"]")" = 42 ] &&
    [ "$(J "d[\"links\"][0][\"path\"]")" = out.csv ]' || diag_file "$T/r.json"
get "$CSV"
check "and the link downloads it" \
    eval '[ "$ST" = 200 ] && [ "$(head -n 1 "$T/body")" = a,b ] &&
    [ "$(hdr content-type)" = text/csv ]'
tool "$TA" run_code '{"language": "python", "share": true, "code": "print(1)"}'
check "share on a one-shot run is refused: its files end with it" \
    eval '[ $RC = 2 ] && grep -q "needs a .sandbox." "$T/r.json"'

if [ -n "$GV" ]; then
	tool "$TD" sandbox_create '{"name": "g"}'
	tool "$TD" sandbox_exec '{"sandbox": "g", "command": "echo x > x.txt"}'
	tool "$TD" sandbox_share_file '{"sandbox": "g", "path": "x.txt"}'
	check "a sandbox under runsc cannot share: its files are gVisor's" \
	    eval '[ $RC = 2 ] && grep -q "in its own kernel" "$T/r.json"' ||
	    diag_file "$T/r.json"
	tool "$TD" sandbox_stop '{"sandbox": "g"}'
else
	ok "runsc refuses to share # SKIP $(tail -n 1 "$T/runsc.err")"
fi

# --- Serving -----------------------------------------------------------
START=$(date +%s.%N)
get "$BIG"
END=$(date +%s.%N)
GOT=$(sha256sum < "$T/body" | cut -d' ' -f1)
check "curl downloads the 200 MiB file, byte for byte ($(python3 -c "print(round($END - $START, 2))") s)" \
    eval '[ "$ST" = 200 ] && [ "$GOT" = "$SUM" ] &&
    [ "$(stat -c %s "$T/body")" = 209715200 ]'
check "the download is an attachment, of its own type, that runs nothing" \
    eval '[ "$(hdr content-type)" = application/octet-stream ] &&
    [ "$(hdr content-length)" = 209715200 ] &&
    case "$(hdr content-disposition)" in "attachment; filename=\"big.bin\""*) true;; *) false;; esac &&
    [ "$(hdr x-content-type-options)" = nosniff ] &&
    [ "$(hdr content-security-policy)" = "default-src '"'"'none'"'"'; sandbox" ] &&
    [ "$(hdr accept-ranges)" = bytes ] && [ -n "$(hdr etag)" ]'
get "$PAGE"
check "an HTML file comes as text/html, as an attachment under a sandbox CSP" \
    eval '[ "$ST" = 200 ] && [ "$(hdr content-type)" = text/html ] &&
    case "$(hdr content-disposition)" in attachment*) true;; *) false;; esac &&
    grep -q "^<script>" "$T/body"'
get "$SMALL" -I
# (curl -I writes the head where the body would go.)
check "HEAD gives the length and no body" \
    eval '[ "$ST" = 200 ] && [ "$(hdr content-length)" = 6 ] &&
    ! grep -q hello "$T/body"'
ETAG=$(hdr etag)
get "$TEN" -H 'Range: bytes=2-5'
check "Range bytes=2-5 is 206 with those four bytes" \
    eval '[ "$ST" = 206 ] && [ "$(cat "$T/body")" = 2345 ] &&
    [ "$(hdr content-range)" = "bytes 2-5/10" ]'
get "$TEN" -H 'Range: bytes=-3'
check "Range bytes=-3 is the last three" \
    eval '[ "$ST" = 206 ] && [ "$(cat "$T/body")" = 789 ]'
get "$TEN" -H 'Range: bytes=7-'
check "Range bytes=7- runs to the end" \
    eval '[ "$ST" = 206 ] && [ "$(cat "$T/body")" = 789 ]'
get "$TEN" -H 'Range: bytes=10-20'
check "a range past the end is 416 with the size" \
    eval '[ "$ST" = 416 ] && [ "$(hdr content-range)" = "bytes */10" ]'
get "$TEN" -H 'Range: bytes=0-1,4-5'
check "several ranges get the whole file (200)" \
    eval '[ "$ST" = 200 ] && [ "$(cat "$T/body")" = 0123456789 ]'
get "$TEN" -H 'Range: bytes=2-3' -H 'If-Range: "stale"'
check "If-Range with another ETag gets the whole file" \
    eval '[ "$ST" = 200 ] && [ "$(cat "$T/body")" = 0123456789 ]'
get "$BIG" -H 'Range: bytes=104857600-104857699'
check "a range from the middle of the big file is its bytes" \
    eval '[ "$ST" = 206 ] && [ "$(stat -c %s "$T/body")" = 100 ]'
get "$DEEP"
check "a file two directories down downloads" \
    eval '[ "$ST" = 200 ] && [ "$(cat "$T/body")" = x ]'
ST=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$SMALL")
check "POST is 405" test "$ST" = 405

# --- Among several hosts: the link names its host ----------------------
TOKEN=${SMALL#"$URL/files/"}
TOKEN=${TOKEN%/small.txt}
check "a link names the host that made it, for the balancer ($(cut -c1-8 <<< "$TOKEN")...)" \
    eval 'case "$TOKEN" in s-1~?*) true;; *) false;; esac'
get "$URL/files/${TOKEN#s-1~}/small.txt"
check "and works without the host name too" \
    eval '[ "$ST" = 200 ] && [ "$(cat "$T/body")" = hello ]' || diag_file "$T/body"
get "$URL/files/s-2~${TOKEN#s-1~}/small.txt"
check "under another host's name it is 503, naming that host, with Retry-After ($ST)" \
    eval '[ "$ST" = 503 ] && grep -qF "served by host s-2, which did not get this request" "$T/body" &&
    grep -qi "^Retry-After: 30" "$T/head"'
get "$URL/files/~${TOKEN#s-1~}/small.txt"
check "an empty host name is no link ($ST)" test "$ST" = 404
get "$URL/files/a%21b~${TOKEN#s-1~}/small.txt"
check "nor is one with other letters ($ST)" test "$ST" = 404
get "$URL/files/abcdefghijklmnopqrstuvwxyz~${TOKEN#s-1~}/small.txt"
check "nor one longer than a host name may be ($ST)" test "$ST" = 404

# --- Refused -----------------------------------------------------------
TOKEN=${TOKEN#s-1~}
flip() {	# the token with its character at $1 changed
	python3 -c 'import sys; t, i = sys.argv[1], int(sys.argv[2]); c = "A" if t[i] != "A" else "B"; print(t[:i] + c + t[i+1:])' "$TOKEN" "$1"
}
get "$URL/files/$(flip 40)/small.txt"
check "a token with one character changed is 404" test "$ST" = 404
get "$URL/files/$(flip $((${#TOKEN} - 1)))/small.txt"
check "a token with its last character changed is 404" test "$ST" = 404
get "$URL/files/$TOKEN/other.txt"
check "the token under another name is 404" test "$ST" = 404
get "$URL/files/${TOKEN}AAAA/small.txt"
check "a token made longer is 404" test "$ST" = 404
get "$URL/files/$TOKEN/small.txt?x=1"
check "a query string is 404" test "$ST" = 404
get "$URL/files/$TOKEN"
check "no name is 404" test "$ST" = 404
BAD=$URL/files/$(flip 20)/small.txt
BURST=
for i in $(seq 40); do
	curl -s -o /dev/null "$BAD" &
	BURST="$BURST $!"
done
wait $BURST
sleep 1.1
get "$URL/files/$(flip 21)/small.txt"
check "a burst of 40 bad links is recorded ten a second, the rest counted" \
    eval '[ "$ST" = 404 ] && wait_log "$T/mcpd.log" "more refusals not recorded one by one"' 

tool "$TA" sandbox_share_file '{"sandbox": "docs", "paths": ["keep.txt",
    "victim.txt", "gone.txt", "mv.txt", "touched.txt", "same.txt"],
    "expires_in": 2}'
SHORT=$(J 'd["files"][0]["url"]')
tool "$TA" sandbox_share_file '{"sandbox": "docs", "paths": ["victim.txt",
    "gone.txt", "mv.txt", "touched.txt", "same.txt"]}'
VICTIM=$(J 'd["files"][0]["url"]')
GONE=$(J 'd["files"][1]["url"]')
MV=$(J 'd["files"][2]["url"]')
TOUCHED=$(J 'd["files"][3]["url"]')
SAME=$(J 'd["files"][4]["url"]')
get "$SHORT"
check "a link of two seconds works at once" test "$ST" = 200
sx docs 'rm victim.txt && ln -s /etc/passwd victim.txt && rm gone.txt &&
mv mv.txt mv2.txt && printf "xyz\n" > mv.txt &&
printf "ABC\n" > touched.txt && touch -d "2001-01-01" touched.txt &&
touch -r keep.txt same.txt && printf "SAME\n" > same.txt.new &&
cat same.txt.new > same.txt && touch -r keep.txt same.txt'
sleep 3.2	# a link is good through the second it names
get "$SHORT"
check "the link, three seconds on, has expired: 410" test "$ST" = 410
get "$VICTIM"
check "a file replaced by a symlink to /etc/passwd is refused (410)" \
    eval '[ "$ST" = 410 ] && ! grep -q root: "$T/body"'
get "$GONE"
check "a deleted file is refused (410)" test "$ST" = 410
get "$MV"
check "a file replaced by another of the same name is refused (410)" \
    test "$ST" = 410
get "$TOUCHED"
check "a file rewritten is refused (410)" test "$ST" = 410
get "$SAME"
check "a file rewritten to the same size, its mtime set back, is refused (410)" \
    test "$ST" = 410

# --- A reader that takes nothing; limits ---------------------------------
PATH_BIG=${BIG#"$URL"}
python3 "$TOP/tests/tools/mcpwire.py" send "127.0.0.1:$PORT" --hold 20 \
    --in <(printf 'GET %s HTTP/1.1\r\nHost: x\r\n\r\n' "$PATH_BIG") \
    > /dev/null 2>&1 &
HOLD1=$!
python3 "$TOP/tests/tools/mcpwire.py" send "127.0.0.1:$PORT" --hold 20 \
    --in <(printf 'GET %s HTTP/1.1\r\nHost: x\r\n\r\n' "$PATH_BIG") \
    > /dev/null 2>&1 &
HOLD2=$!
sleep 2
START=$(date +%s.%N)
ST=$(curl -s -m 10 -o /dev/null -w '%{http_code}' "$URL/healthz")
END=$(date +%s.%N)
check "two readers that take nothing hold no other request (healthz $ST in $(python3 -c "print(round($END - $START, 3))") s)" \
    test "$ST" = 200
tool "$TA" run_code '{"language": "python", "code": "print(6 * 7)"}'
check "a tool call runs meanwhile" \
    eval '[ $RC = 0 ] && grep -q 42 "$T/r.json"'
get "$SMALL"
check "a third download of alice's at once is 429 (share downloads 2)" \
    eval '[ "$ST" = 429 ] && [ -n "$(hdr retry-after)" ]'
kill $HOLD1 $HOLD2 2>/dev/null
wait $HOLD1 $HOLD2 2>/dev/null
check "the two stalled downloads end with their connections" \
    wait_for 10 eval 'get "$SMALL"; [ "$ST" = 200 ]'

tool "$TC" sandbox_create '{"name": "c"}'
tool "$TC" sandbox_exec '{"sandbox": "c", "command": "head -c 6815744 /dev/zero > z.bin"}'
tool "$TC" sandbox_share_file '{"sandbox": "c", "path": "z.bin"}'
Z=$(J 'd["files"][0]["url"]')
START=$(date +%s.%N)
get "$Z"
END=$(date +%s.%N)
EL=$(python3 -c "print(round($END - $START, 1))")
# 6 MiB a minute: the first 6 MiB at once, the last 0.5 MiB in ~5 s.
check "carol's 6.5 MiB at 6M a minute takes the last 0.5 MiB's time ($EL s)" \
    eval '[ "$ST" = 200 ] && [ "$(stat -c %s "$T/body")" = 6815744 ] &&
    python3 -c "import sys; sys.exit(not 3.5 <= $EL <= 30)"'

tool "$TC" sandbox_stop '{"sandbox": "c"}'

# --- Keys: SIGHUP and stop ----------------------------------------------
kill -HUP "${PID[mcpd]}"
check "mcpd reloaded" wait_log "$T/mcpd.log" "reloaded"
get "$SMALL"
check "a link made before SIGHUP still opens" test "$ST" = 200
tool "$TA" sandbox_share_file '{"sandbox": "docs", "path": "small.txt"}'
NEW=$(J 'd["files"][0]["url"]')
get "$NEW"
check "a link made after SIGHUP opens, with another token" \
    eval '[ "$ST" = 200 ] && [ "$NEW" != "$SMALL" ]'

# The operator takes sharing away from alice: her links stop at once.
sed -i 's/share downloads 2/share downloads 0/' "$CONF"
kill -HUP "${PID[mcpd]}"
check "mcpd reloaded again" \
    wait_for 10 eval '[ "$(grep -c "reloaded" "$T/mcpd.log")" -ge 2 ]'
get "$SMALL"
check "with share downloads 0 her links are refused (410)" \
    eval '[ "$ST" = 410 ] && grep -q "no longer served" "$T/body"'
tool "$TA" sandbox_share_file '{"sandbox": "docs", "path": "small.txt"}'
check "and she can share nothing more" \
    eval '[ $RC = 2 ] && grep -q "not allowed this tenant" "$T/r.json"'
sed -i 's/share downloads 0/share downloads 2/' "$CONF"
kill -HUP "${PID[mcpd]}"
check "given back, the same link works again" \
    wait_for 10 eval 'get "$SMALL"; [ "$ST" = 200 ]'

tool "$TA" sandbox_stop '{"sandbox": "docs"}'
get "$SMALL"
check "once the sandbox stopped its links are refused (410)" \
    eval '[ "$ST" = 410 ] && grep -q stopped "$T/body"'
get "$BIG"
check "the big one too" test "$ST" = 410

curl -s -m 10 -H "Authorization: Bearer $TA" "$URL/metrics" > "$T/metrics"
mval() { sed -n "s/^$1 //p" "$T/metrics"; }
check "/metrics counts links made, downloads by outcome, and bytes sent" \
    eval '[ "$(mval mcpd_links_made_total)" -ge 15 ] &&
    [ "$(mval "mcpd_downloads_total{outcome=\"ok\"}")" -ge 10 ] &&
    [ "$(mval "mcpd_downloads_total{outcome=\"cut\"}")" -ge 2 ] &&
    [ "$(mval "mcpd_downloads_total{outcome=\"refused\"}")" -ge 20 ] &&
    [ "$(mval mcpd_download_bytes_total)" -ge 209715200 ]' ||
    diag "$(grep -e links -e download "$T/metrics")"

# --- The record ----------------------------------------------------------
"$B/mcpctl" -f "$CONF" audit export > "$T/audit.jsonl" 2> "$T/export.err"
check "every share is recorded, with its hash and expiry" \
    eval 'python3 - "$T/audit.jsonl" "$SUM" <<'"'"'PY'"'"'
import json, sys
R = [json.loads(l) for l in open(sys.argv[1])]
s = [r for r in R if r["event"] == "file-share" and r["body"].get("path") == "big.bin"]
sys.exit(not (len(s) == 1 and s[0]["body"]["sha256"] == sys.argv[2]
              and s[0]["tenant"] == "alice" and "expires" in s[0]["body"]))
PY' || diag_file "$T/export.err"
check "the big download is recorded: who, which file, its hash, whence" \
    eval 'python3 - "$T/audit.jsonl" "$SUM" <<'"'"'PY'"'"'
import json, sys
R = [json.loads(l) for l in open(sys.argv[1])]
d = [r for r in R if r["event"] == "file-download" and r["outcome"] == "ok"
     and r["body"].get("path") == "big.bin" and "range" not in r["body"]]
sys.exit(not (d and d[0]["body"]["sent.sha256"] == sys.argv[2]
              and d[0]["body"]["peer"].startswith("127.0.0.1")
              and d[0]["tenant"] == "alice"))
PY'
check "refusals are recorded with their reasons" \
    eval 'python3 - "$T/audit.jsonl" <<'"'"'PY'"'"'
import json, sys
R = [json.loads(l) for l in open(sys.argv[1])]
why = {r["body"].get("reason") for r in R
       if r["event"] == "file-download" and r["outcome"] == "denied"}
need = {"forged", "the link expired", "the sandbox is gone",
        "the file changed since it was shared", "too many downloads at once"}
sys.exit(not need <= why)
PY'
check "the audit trail verifies" \
    "$B/mcpctl" -f "$CONF" audit verify -q -c "$(audit_anchor)"
check "no token is in mcpd's log" eval '! grep -q "$TOKEN" "$T/mcpd.log"'

check "mcpd stops cleanly" stop mcpd
suite_end
done_testing
