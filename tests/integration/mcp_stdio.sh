#!/bin/bash
# MCP over stdio, from a hostile client: mcpd --stdio must answer every
# line it can with exactly the JSON-RPC the protocol asks for, never write
# anything but JSON-RPC to stdout, survive anything on stdin, stop what
# it started when told to (cancellation) or when its client stops reading,
# and at EOF answer what is in flight before it exits, as a command in a
# pipeline does.  The real suite runs behind it (auditd, sandboxd), so the
# tool calls here start real containers.
#
# Each check feeds mcpd --stdio whole lines through a pipe (as a desktop
# client does) and reads its stdout through a pipe; a few feed a regular
# file or /dev/null instead.  Every stdout of every run is checked at the
# end: one JSON-RPC message per line, nothing else.
SANDBOX_UIDS=1966080000		# this test's own range (see below)
. "$TOP/tests/lib.sh"
require_root

MU=64101	# mcpd's uid (the HTTP daemon; stdio runs as us)
AU=64102	# auditd's
XU=64150	# a uid that is no tenant's
T=$(mktemp -d /tmp/mcpd-stdio.XXXXXX)
chmod 0755 "$T"
CONF=$T/mcpd.conf
RUN=$T/run
J="python3 $TOP/tests/tools/mcpwire.py"

# Sandbox uids below 2^31 (ps prints larger ones as negative numbers) and
# apart from the default range other tests use.
cat > "$CONF" <<EOF
user "$MU"
run directory "$RUN"
state directory "$T/state"
sandbox-init "$B/sandbox-init"
sandbox uids $SANDBOX_UIDS 16

limits default {
	memory 256M
	timeout 60s
}

tenant alice {
	uid root
	token "sha256:$(printf %s alice-token | sha256sum | cut -d' ' -f1)"
}

language python {
	alias py
	file main.py
	run "python3 main.py"
}

audit {
	user "$AU"
}
EOF

cleanup() {
	exec 7>&- 2>/dev/null
	kill_daemons 0.5
	remove_tmp
}
trap cleanup EXIT

V=2025-06-18
INIT='{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"VERSION","capabilities":{},"clientInfo":{"name":"hostile","version":"1"}}}'
INITED='{"jsonrpc":"2.0","method":"notifications/initialized"}'
META='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
nrun=0

init_line() {	# init_line VERSION
	echo "${INIT/VERSION/$1}"
}

# stdio NAME [mcpd args]: run mcpd --stdio on $T/NAME.in through pipes
# (IN=file: stdin is the file itself; OUT=file: so is stdout); stdout in
# $T/NAME.out, stderr $T/NAME.err, exit status RC, seconds SECS.
stdio() {
	local name=$1 s
	shift
	s=$(date +%s%N)
	if [ "${IN:-pipe}" = pipe ]; then
		cat "$T/$name.in" | stdio_mcpd "$name" "$@"
		RC=${PIPESTATUS[1]}
	else
		stdio_mcpd "$name" "$@" < "$T/$name.in"
		RC=$?
	fi
	SECS=$(( ($(date +%s%N) - s) / 1000000 ))
	SECS=$(printf '%d.%03d' $((SECS / 1000)) $((SECS % 1000)))
}
stdio_mcpd() {	# stdio_mcpd NAME [mcpd args]: its status, stdout as OUT says
	local name=$1
	shift
	if [ "${OUT:-pipe}" = pipe ]; then
		timeout -k 2 "${LIMIT:-20}" "${MCPD:-$B/mcpd}" --stdio -v \
		    -f "$CONF" "$@" 2> "$T/$name.err" | cat > "$T/$name.out"
		return "${PIPESTATUS[0]}"
	fi
	timeout -k 2 "${LIMIT:-20}" "${MCPD:-$B/mcpd}" --stdio -v -f "$CONF" \
	    "$@" 2> "$T/$name.err" > "$T/$name.out"
}

# one [-n] [-V VERSION] LINE...: the lines after initialize (none with -n)
# in a fresh mcpd; what answers them is in $T/one.ans, N lines of it.
one() {
	local init=1 ver=$V
	while :; do
		case $1 in
		-n) init=0; shift ;;
		-V) ver=$2; shift 2 ;;
		*) break ;;
		esac
	done
	nrun=$((nrun + 1))
	{
		[ $init = 1 ] && { init_line "$ver"; echo "$INITED"; }
		printf '%s\n' "$@"
	} > "$T/one$nrun.in"
	stdio one$nrun
	if [ $init = 1 ]; then
		tail -n +2 "$T/one$nrun.out" > "$T/one.ans"
	else
		cp "$T/one$nrun.out" "$T/one.ans"
	fi
	N=$(wc -l < "$T/one.ans")
}

# ans [ID] PATH: a part of the answer (to ID; default the first message).
ans() {
	if [ $# -eq 1 ]; then $J get "$T/one.ans" - "$1"; else
	$J get "$T/one.ans" "$1" "$2"; fi
}

# first [N]: the first line of the answer, cut to N characters (for
# descriptions).
first() {
	head -1 "$T/one.ans" | cut -c1-"${1:-100}"
}

# is_error CODE [ID]: one line came, an error with CODE (and that id).
is_error() {
	[ "$N" = 1 ] && [ "$(ans error.code)" = "$1" ] &&
	    { [ $# -eq 1 ] || [ "$(ans id)" = "$2" ]; }
}

# --- the suite ------------------------------------------------------------

start auditd
start sandboxd
wait_sandboxd

# --- lifecycle (legacy era) --------------------------------------------------

cat > "$T/life.in" <<EOF
{"jsonrpc":"2.0","id":1,"method":"ping"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"debug"}}
[{"jsonrpc":"2.0","id":4,"method":"ping"}]
$(init_line $V)
$(init_line 2025-03-26 | sed 's/"init"/6/')
$INITED
{"jsonrpc":"2.0","id":7,"method":"tools/list"}
{"jsonrpc":"2.0","id":8,"method":"nosuch/method"}
{"jsonrpc":"2.0","id":9,"method":"logging/setLevel","params":{"level":"debug"}}
EOF
stdio life
cp "$T/life.out" "$T/one.ans"
check "ping is answered before initialize ($(ans 1 result))" \
    test "$(ans 1 result)" = "{}"
check "a request before initialize is -32600, naming initialize ($(ans 2 error.message))" \
    eval '[ "$(ans 2 error.code)" = -32600 ] &&
    ans 2 error.message | grep -qi "initialize"'
check "so is logging/setLevel before initialize" \
    test "$(ans 3 error.code)" = -32600
check "a batch before initialize is one -32600 error, not an array" \
    test "$(sed -n 4p "$T/life.out" | $J get /dev/stdin - error.code 2>/dev/null)" = -32600 \
    -a "$(sed -n 4p "$T/life.out" | cut -c1)" = "{"
check "initialize answers with the version asked for ($(ans '"init"' result.protocolVersion))" \
    test "$(ans '"init"' result.protocolVersion)" = $V -a \
    "$(ans '"init"' result.serverInfo.name)" = mcpd
check "a second initialize is -32600 ($(ans 6 error.message))" \
    test "$(ans 6 error.code)" = -32600
check "after it, tools/list lists run_code" \
    grep -q '"name":"run_code"' <<< "$(ans 7 result.tools)"
check "an unknown method is -32601 with the same id" \
    test "$(ans 8 error.code)" = -32601
check "logging/setLevel works once initialized" \
    test "$(ans 9 result)" = "{}"
check "one answer per request, no more ($(wc -l < "$T/life.out") lines)" \
    test "$(wc -l < "$T/life.out")" = 9
check "mcpd exits 0 at EOF (status $RC, ${SECS}s)" test "$RC" = 0

one -n "$(init_line 2099-12-31)"
check "initialize with an unknown version gets the latest legacy one ($(ans result.protocolVersion))" \
    test "$(ans result.protocolVersion)" = 2025-11-25
one -n '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{},"clientInfo":{"name":"x","version":"1"}}}'
check "initialize without a protocolVersion is -32602 ($(ans error.code))" \
    is_error -32602 1

# --- ids are echoed exactly ------------------------------------------------

one '{"jsonrpc":"2.0","id":"1","method":"nosuch"}' \
    '{"jsonrpc":"2.0","id":1,"method":"nosuch"}' \
    '{"jsonrpc":"2.0","id":9007199254740993,"method":"nosuch"}' \
    '{"jsonrpc":"2.0","id":9223372036854775807,"method":"nosuch"}' \
    '{"jsonrpc":"2.0","id":-9223372036854775808,"method":"nosuch"}' \
    '{"jsonrpc":"2.0","id":"a\"b\\c\u00e9\ud83d\ude00 \n","method":"ping"}' \
    '{"jsonrpc":"2.0","id":"","method":"ping"}' \
    '{"jsonrpc":"2.0","id":0,"method":"ping"}'
check "the string id \"1\" is answered as a string, once" \
    test "$($J count "$T/one.ans" '"1"')" = 1 -a "$(ans '"1"' error.code)" = -32601
check "the number id 1 is answered as a number, once" \
    test "$($J count "$T/one.ans" 1)" = 1 -a "$(ans 1 error.code)" = -32601
for id in 9007199254740993 9223372036854775807 -9223372036854775808; do
	check "the id $id comes back digit for digit" \
	    grep -qF "\"id\":$id," "$T/one.ans"
done
check "a string id with escapes and non-ASCII comes back equal" \
    test "$(ans '"a\"b\\c\u00e9\ud83d\ude00 \n"' result)" = "{}"
check "the empty string and 0 are ids like any other" \
    test "$(ans '""' result)" = "{}" -a "$(ans 0 result)" = "{}"
check "eight requests, eight answers ($N)" test "$N" = 8
# Ids are strings or integers, and mcpd's integers are 64-bit (as are
# every SDK's: JavaScript's are not even that): a larger one is refused
# as an invalid request, not misread as a parse error or a smaller id.
one '{"jsonrpc":"2.0","id":18446744073709551616,"method":"nosuch"}'
check "an integer id beyond 64 bits is -32600 with id null ($(first 120))" \
    eval 'grep -qF "\"code\":-32600" "$T/one.ans" &&
    grep -qF "\"id\":null" "$T/one.ans" && grep -q "64 bits" "$T/one.ans"'

# --- invalid messages ----------------------------------------------------------

one '{"jsonrpc":"2.0",'
check "a parse error is -32700 with id null ($(first 100))" \
    is_error -32700 null
one '{"jsonrpc":"2.0","id":1,"method":"ping"} trailing'
check "trailing bytes after a message are a parse error" is_error -32700 null
one '{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}'
check "a duplicate key is refused, not read one way or the other ($(first 100))" \
    test "$N" = 1 -a -z "$(ans result)" -a -n "$(ans error.code)"
one '{"jsonrpc":"1.0","id":11,"method":"ping"}'
check "jsonrpc \"1.0\" is -32600" \
    eval 'is_error -32600 11 || is_error -32600 null'
one '{"id":12,"method":"ping"}'
check "a missing jsonrpc member is -32600" \
    eval 'is_error -32600 12 || is_error -32600 null'
for id in '{"a":1}' '[13]' 1.5 1e3 null true; do
	one "{\"jsonrpc\":\"2.0\",\"id\":$id,\"method\":\"ping\"}"
	check "an id of $id is -32600 with id null ($(first 100))" \
	    is_error -32600 null
done
one '{"jsonrpc":"2.0","id":14,"method":5}'
check "a method that is not a string is -32600" \
    eval 'is_error -32600 14 || is_error -32600 null'
one '{"jsonrpc":"2.0","id":15}'
check "an id with neither method nor result is -32600" \
    eval 'is_error -32600 15 || is_error -32600 null'
for v in 42 '"text"' null; do
	one "$v"
	check "$v (JSON, but no message) is -32600, not a parse error ($(first 100))" \
	    is_error -32600 null
done
for p in '[1]' '"x"' 5 null; do
	one "{\"jsonrpc\":\"2.0\",\"id\":16,\"method\":\"ping\",\"params\":$p}"
	check "params $p is -32602 with the same id ($(first 100))" \
	    is_error -32602 16
done

# --- notifications are never answered --------------------------------------------

for n in '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    '{"jsonrpc":"2.0","method":"notifications/no/such/thing"}' \
    '{"jsonrpc":"2.0","method":"notifications/cancelled"}' \
    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nosuch"}}' \
    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"a":[1]}}}' \
    '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}' \
    '{"jsonrpc":"2.0","method":"notifications/message","params":[1,2]}' \
    '{"jsonrpc":"2.0","method":"notifications/message","params":"x"}' \
    '{"jsonrpc":"2.0","id":99,"result":{}}' \
    '{"jsonrpc":"2.0","id":98,"error":{"code":-1,"message":"no"}}'; do
	one "$n" '{"jsonrpc":"2.0","id":"after","method":"ping"}'
	check "no answer to $(head -c 90 <<< "$n")" \
	    test "$N" = 1 -a "$(ans '"after"' result)" = "{}"
done
one -n '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    '{"jsonrpc":"2.0","method":"tools/list"}'
check "notifications before initialize are not answered either" test "$N" = 0

# --- bytes: nesting, UTF-8, NUL, blank lines, CRLF ---------------------------------

deep() {	# deep N: a request whose params nest N levels in all
	python3 -c "import sys; n = int(sys.argv[1]) - 2
print('{\"jsonrpc\":\"2.0\",\"id\":\"deep\",\"method\":\"ping\",\"params\":{\"x\":' + '[' * n + ']' * n + '}}')" "$1"
}
one "$(deep 64)"
check "JSON nested 64 deep is read ($(first 60))" \
    test "$(ans '"deep"' result)" = "{}"
one "$(deep 65)"
check "JSON nested 65 deep is -32700 ($(first 90))" \
    is_error -32700 null
one "$(python3 -c 'print("[" * 100000 + "]" * 100000)')"
check "100000 brackets deep is -32700, no stack overflow" is_error -32700 null
one "$(python3 -c 'print("{\"a\":" * 50000)')"
check "an unclosed nest of 50000 objects is -32700" is_error -32700 null

for bad in '\xff' '\xc0\x80' '\xed\xa0\x80' '\xf8\x88\x80\x80\x80' '\xe2\x82'; do
	printf "$(init_line $V)\n{\"jsonrpc\":\"2.0\",\"id\":\"u\",\"method\":\"ping\",\"params\":{\"s\":\"a${bad}b\"}}\n" \
	    > "$T/utf8.in"
	stdio utf8
	tail -n +2 "$T/utf8.out" > "$T/one.ans"
	N=$(wc -l < "$T/one.ans")
	check "invalid UTF-8 ($bad) is -32700" is_error -32700 null
done
one '{"jsonrpc":"2.0","id":"nul","method":"ping","params":{"s":"a\u0000b"}}'
check "a NUL in a string (\\u0000) is refused ($(first 100))" \
    test "$N" = 1 -a -z "$(ans result)" -a -n "$(ans error.code)"
printf '%s\n{"jsonrpc":"2.0","id":"nul","method":"ping","params":{"s":"a\0b"}}\n{"jsonrpc":"2.0","id":"after","method":"ping"}\n' \
    "$(init_line $V)" > "$T/nul.in"
stdio nul
tail -n +2 "$T/nul.out" > "$T/one.ans"
N=$(wc -l < "$T/one.ans")
check "a raw NUL byte in a line is -32700, and the next line is read" \
    test "$N" = 2 -a "$(ans error.code)" = -32700 -a \
    "$(ans '"after"' result)" = "{}"
printf '%s\r\n\n\n   \n\t\r\n\r\n{"jsonrpc":"2.0","id":"crlf","method":"ping"}\r\n  {"jsonrpc":"2.0","id":"sp","method":"ping"}  \n{"jsonrpc":"2.0","id":"last","method":"ping"}' \
    "$(init_line $V)" > "$T/blank.in"
stdio blank
tail -n +2 "$T/blank.out" > "$T/one.ans"
check "blank lines are skipped, CRLF and spaces tolerated, a last line without newline read" \
    test "$(wc -l < "$T/one.ans")" = 3 -a "$(ans '"crlf"' result)" = "{}" -a \
    "$(ans '"sp"' result)" = "{}" -a "$(ans '"last"' result)" = "{}"

# --- batches ----------------------------------------------------------------------

P1='{"jsonrpc":"2.0","id":20,"method":"ping"}'
P2='{"jsonrpc":"2.0","id":"21","method":"ping"}'
one -V 2025-03-26 "[$P1,$INITED,$P2]"
alen() {	# the length of the array on the first line of the answer
	python3 -c 'import json, sys
v = json.loads(open(sys.argv[1]).readline())
print(len(v) if isinstance(v, list) else "not an array")' "$T/one.ans"
}
check "2025-03-26: a batch is answered with one array line of both answers ($(first 100))" \
    test "$N" = 1 -a "$(alen)" = 2 -a \
    "$(ans 20 result)" = "{}" -a "$(ans '"21"' result)" = "{}"
one -V 2025-03-26 '[]'
check "2025-03-26: [] is a single -32600 error, not an array ($(first 100))" \
    test "$N" = 1 -a "$(cut -c1 "$T/one.ans")" = "{" -a "$(ans error.code)" = -32600
one -V 2025-03-26 '[1,"x"]'
check "2025-03-26: [1,\"x\"] is an array of two -32600 errors, id null ($(first 100))" \
    test "$N" = 1 -a "$(alen)" = 2 -a "$(ans error.code)" = -32600 -a \
    "$($J count "$T/one.ans" null)" = 2
one -V 2025-03-26 "[$INITED,$INITED]" '{"jsonrpc":"2.0","id":"after","method":"ping"}'
check "2025-03-26: a batch of notifications gets no answer" \
    test "$N" = 1 -a "$(ans '"after"' result)" = "{}"
one -V 2025-03-26 "[$(init_line 2025-03-26 | sed 's/"init"/22/')]"
check "2025-03-26: initialize inside a batch is -32600" \
    eval '[ "$N" = 1 ] && grep -q -- "-32600" "$T/one.ans" && [ -z "$(ans 22 result)" ]'
for v in 2025-06-18 2025-11-25; do
	one -V $v "[$P1,$P2]"
	check "$v: a batch is one -32600 error, id null, and nothing in it runs ($(first 100))" \
	    test "$N" = 1 -a "$(ans error.code)" = -32600 -a "$(ans id)" = null
done

# --- the modern era: no initialize, everything in _meta ----------------------------

one -n "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{$META}}"
check "server/discover works without initialize ($(ans result.supportedVersions))" \
    eval 'ans result.supportedVersions | grep -q "\"2026-07-28\"" &&
    ans result.supportedVersions | grep -q "\"2025-11-25\"" &&
    [ -n "$(ans result.capabilities.tools)" ]'
one -n "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{$META}}"
check "a modern tools/list lists run_code, resultType complete" \
    eval 'grep -q "\"name\":\"run_code\"" <<< "$(ans result.tools)" &&
    [ "$(ans result.resultType)" = complete ]'
one -n '{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}'
check "an unsupported version in _meta is -32022 ($(first 90))" \
    is_error -32022 3
check "its data says what is supported and what was asked" \
    eval 'ans error.data.supported | grep -q "\"2026-07-28\"" &&
    [ "$(ans error.data.requested)" = 2099-01-01 ]'
one -n '{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}'
check "a modern request without clientCapabilities is -32602" is_error -32602 4
one -n '{"jsonrpc":"2.0","id":5,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}}}'
check "clientCapabilities that is not an object is -32602" is_error -32602 5
for m in ping initialize logging/setLevel resources/subscribe; do
	one -n "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"$m\",\"params\":{$META,\"level\":\"debug\",\"protocolVersion\":\"2026-07-28\",\"capabilities\":{},\"clientInfo\":{\"name\":\"x\",\"version\":\"1\"},\"uri\":\"x\"}}"
	check "the removed method $m is -32601 in the modern era" \
	    is_error -32601 6
done
one -n "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"nosuch\",\"params\":{$META}}"
check "an unknown modern method is -32601" is_error -32601 7
one "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"server/discover\",\"params\":{$META}}"
check "a modern request in an initialized stdio session is still served" \
    test "$N" = 1 -a -n "$(ans 8 result.supportedVersions)"

# --- lines too long, floods, garbage ---------------------------------------------

python3 - "$T/long.in" <<'EOF'
import sys
with open(sys.argv[1], "wb") as f:
    f.write(b'{"jsonrpc":"2.0","id":"big","method":"ping","params":{"x":"'
            + b"a" * (33 << 20) + b'"}}\n')
    f.write(b'{"jsonrpc":"2.0","id":"after","method":"ping"}\n')
EOF
LIMIT=20 stdio long
cp "$T/long.out" "$T/one.ans"
check "a 33 MiB line is one -32700 \"message too long\" (${SECS}s, status $RC)" \
    eval '[ "$($J get "$T/one.ans" null error.code)" = -32700 ] &&
    [ "$($J get "$T/one.ans" null error.message)" = "message too long" ] &&
    [ "$($J count "$T/one.ans" null)" = 1 ] && [ -z "$(ans "\"big\"" id)" ]'
check "and the line after it is answered" \
    test "$(ans '"after"' result)" = "{}"
check "in reasonable time: under 5 s, not quadratic in the line (${SECS}s)" \
    test "$RC" = 0 -a "${SECS%.*}" -lt 5

python3 -c 'import sys
sys.stdout.write("{\"jsonrpc\":\"2.0\",\"id\":\"big\",\"method\":\"ping\",\"params\":{\"x\":\"" + "a" * (4 << 20) + "\"}}\n")' > "$T/long2.in"
echo '{"jsonrpc":"2.0","id":"after","method":"ping"}' >> "$T/long2.in"
stdio long2
cp "$T/long2.out" "$T/one.ans"
check "a 4 MiB line is read and answered (${SECS}s, status $RC)" \
    test "$(ans '"big"' result)" = "{}" -a "$(ans '"after"' result)" = "{}"

python3 -c 'import sys
for i in range(20000): sys.stdout.write("{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"ping\"}\n" % i)' \
    > "$T/flood.in"
stdio flood
check "20000 pings in one write: 20000 answers, in order (${SECS}s)" \
    eval '[ "$(wc -l < "$T/flood.out")" = 20000 ] &&
    [ "$(head -1 "$T/flood.out")" = "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}" ] &&
    [ "$(tail -1 "$T/flood.out")" = "{\"jsonrpc\":\"2.0\",\"id\":19999,\"result\":{}}" ]'

head -c $((1 << 20)) /dev/urandom > "$T/garbage"
for g in lines nolines; do
	if [ $g = lines ]; then cp "$T/garbage" "$T/g.bin"
	else tr -d '\n' < "$T/garbage" > "$T/g.bin"; fi
	{ cat "$T/g.bin"; printf '\n%s\n' '{"jsonrpc":"2.0","id":"after","method":"ping"}'; } \
	    > "$T/garbage-$g.in"
	stdio garbage-$g
	cp "$T/garbage-$g.out" "$T/one.ans"
	check "1 MiB of random bytes ($g): the valid line after it is answered (${SECS}s)" \
	    test "$(ans '"after"' result)" = "{}"
	check "and mcpd exits 0 at EOF (status $RC)" test "$RC" = 0
done

# --- stdin and stdout that are not pipes --------------------------------------------

s=$(date +%s%N)
timeout 10 "$B/mcpd" --stdio -f "$CONF" < /dev/null > "$T/null.out" 2> "$T/null.err"
rc=$?
ms=$(( ($(date +%s%N) - s) / 1000000 ))
check "stdin /dev/null: exit 0 at once, nothing on stdout (status $rc, ${ms} ms)" \
    test $rc = 0 -a ! -s "$T/null.out" -a $ms -lt 2000
printf '%s\n%s\n%s\n' "$(init_line $V)" '{"jsonrpc":"2.0","id":"f1","method":"tools/list"}' \
    '{"jsonrpc":"2.0","id":"f2","method":"nosuch"}' > "$T/file.in"
timeout 10 "$B/mcpd" --stdio -f "$CONF" < "$T/file.in" > "$T/file.out" 2> "$T/file.err"
rc=$?
cp "$T/file.out" "$T/one.ans"
check "stdin and stdout regular files: every request answered (status $rc)" \
    test $rc = 0 -a "$(wc -l < "$T/file.out")" = 3 -a \
    -n "$(ans '"f1"' result.tools)" -a "$(ans '"f2"' error.code)" = -32601

# The client stops reading: mcpd must notice, not spin or die by SIGPIPE.
python3 -c 'import sys
for i in range(200000): sys.stdout.write("{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/list\"}\n" % i)' \
    > "$T/many.in"
s=$(date +%s%N)
{ init_line $V; cat "$T/many.in"; } | timeout 20 "$B/mcpd" --stdio -f "$CONF" \
    2> "$T/stdout-closed.err" | head -c 100000 > /dev/null
rc=${PIPESTATUS[1]}
ms=$(( ($(date +%s%N) - s) / 1000000 ))
check "a client that closes stdout: mcpd ends promptly, no signal (status $rc, ${ms} ms)" \
    test $rc -lt 124 -a $ms -lt 10000

out=$(setpriv --reuid $XU --regid $XU --clear-groups \
    "$B/mcpd" --stdio -f "$CONF" < "$T/file.in" 2> "$T/stranger.err")
rc=$?
check "a uid that is no tenant's is refused at start (status $rc): $(tail -1 "$T/stranger.err")" \
    test $rc = 1 -a -z "$out" -a -n "$(grep -i "not a tenant" "$T/stranger.err")"

# --- tool calls: progress, cancellation, EOF with work in flight -----------------------

# A live session on a fifo: lines go in through fd 7, out to $T/live.out.
live_start() {	# live_start NAME [VERSION]
	LIVE=$1
	rm -f "$T/fifo"
	mkfifo "$T/fifo"
	"$B/mcpd" --stdio -v -f "$CONF" < "$T/fifo" 2> "$T/$LIVE.err" |
	    cat > "$T/$LIVE.out" &
	LPID=$!		# cat: it ends when mcpd's stdout closes
	exec 7> "$T/fifo"
	send "$(init_line "${2:-$V}")" "$INITED"
	wait_log "$T/$LIVE.err" "connected to sandboxd" 10
}
send() {
	printf '%s\n' "$@" >&7
}
live_has() {	# live_has ID: its answer came
	[ -n "$($J get "$T/$LIVE.out" "$1" id 2>/dev/null)" ]
}

live_start live
RUNHELLO='{"jsonrpc":"2.0","id":"hello","method":"tools/call","params":{"_meta":{"progressToken":"ph"},"name":"run_code","arguments":{"language":"python","code":"print(\"hello from the sandbox\", flush=True)"}}}'
send "$RUNHELLO"
wait_for 20 live_has '"hello"'
check "run_code runs python in a sandbox ($($J get "$T/live.out" '"hello"' result.structuredContent.stdout | head -1))" \
    test "$($J get "$T/live.out" '"hello"' result.structuredContent.stdout)" = "hello from the sandbox"
check "its output came first as notifications/progress with the token" \
    eval 'grep -n "notifications/progress" "$T/live.out" | grep -q "\"progressToken\":\"ph\"" &&
    [ "$(grep -n "notifications/progress" "$T/live.out" | head -1 | cut -d: -f1)" -lt \
      "$(grep -n "\"id\":\"hello\"" "$T/live.out" | cut -d: -f1)" ]'

SLEEPER='{"jsonrpc":"2.0","id":"sleeper","method":"tools/call","params":{"_meta":{"progressToken":"ps"},"name":"run_code","arguments":{"language":"python","code":"import time\nprint(\"sleeping\", flush=True)\ntime.sleep(30)"}}}'
send "$SLEEPER"
wait_for 20 grep -q '"progressToken":"ps"' "$T/live.out"
check "a long run_code is under way, its processes visible ($(sandbox_pids | wc -l))" \
    test -n "$(sandbox_pids)"
send '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"sleeper","reason":"changed my mind"}}'
check "notifications/cancelled: the container's processes are gone" \
    wait_for 10 eval '[ -z "$(sandbox_pids)" ]'
send '{"jsonrpc":"2.0","id":"after-cancel","method":"ping"}'
wait_for 5 live_has '"after-cancel"'
sleep 0.5
check "the cancelled request is never answered" \
    test "$($J count "$T/live.out" '"sleeper"')" = 0 -a \
    -n "$($J get "$T/live.out" '"after-cancel"' result)"
send '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"init"}}' \
    '{"jsonrpc":"2.0","id":"after-init-cancel","method":"ping"}'
wait_for 5 live_has '"after-init-cancel"'
check "cancelling an answered request (initialize) changes nothing" \
    test "$($J count "$T/live.out" '"init"')" = 1

s=$(date +%s%N)
exec 7>&-
wait $LPID
ms=$(( ($(date +%s%N) - s) / 1000000 ))
check "EOF with nothing in flight: mcpd exits at once (${ms} ms)" \
    test $ms -lt 2000
check "mcpd logged its end on stderr" \
    log_has "$T/live.err" "stdin closed"

# --- end of input: what is in flight is answered, then mcpd exits --------------

# As a pipeline expects: every request read before EOF gets its answer,
# however long it runs (up to its own timeout), its progress on the way;
# then mcpd exits 0.  The same with stdin, and stdout, regular files.
cat > "$T/drain.in" <<EOF
$(init_line $V)
$INITED
{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"_meta":{"progressToken":"pslow"},"name":"run_code","arguments":{"language":"python","code":"import time\nprint(\"before\", flush=True)\ntime.sleep(2)\nprint(\"after\")"}}}
{"jsonrpc":"2.0","id":"fast","method":"tools/call","params":{"name":"run_code","arguments":{"language":"python","code":"print(\"fast\")"}}}
{"jsonrpc":"2.0","id":"limit","method":"tools/call","params":{"name":"run_code","arguments":{"language":"python","code":"import time\ntime.sleep(30)","timeout":1}}}
{"jsonrpc":"2.0","id":"langs","method":"tools/call","params":{"name":"list_languages","arguments":{}}}
{"jsonrpc":"2.0","id":"p","method":"ping"}
EOF
# line_of ID: the line of the answer to ID in one.ans.
line_of() {
	grep -n "\"id\":\"$1\"" "$T/one.ans" | head -1 | cut -d: -f1
}
for io in pipe:pipe file:pipe file:file; do
	name=drain-${io/:/-}
	cp "$T/drain.in" "$T/$name.in"
	IN=${io%:*} OUT=${io#*:} stdio "$name"
	cp "$T/$name.out" "$T/one.ans"
	n=0
	for id in slow fast limit langs p; do
		[ "$($J count "$T/one.ans" "\"$id\"")" = 1 ] && n=$((n + 1))
	done
	check "stdin ${io%:*}, stdout ${io#*:}: every request in flight at EOF is answered, once ($n of 5)" \
	    test $n = 5
	check "and mcpd exits 0 once the slowest is done (status $RC, ${SECS}s)" \
	    test "$RC" = 0 -a "${SECS%.*}" -ge 2 -a "${SECS%.*}" -lt 15
	check "the 2 s run's output is whole ($(ans '"slow"' result.structuredContent.stdout | tr '\n' ' '))" \
	    test "$(ans '"slow"' result.structuredContent.stdout)" = "$(printf 'before\nafter')"
	pl=$(grep -n '"progressToken":"pslow"' "$T/one.ans" | head -1 | cut -d: -f1)
	check "its progress came first (line ${pl:-none}, the answer $(line_of slow))" \
	    test -n "$pl" -a "${pl:-0}" -lt "$(line_of slow)"
	check "the run past its own timeout (1 s) comes back timed out" \
	    test "$(ans '"limit"' result.structuredContent.timed_out)" = true
	check "the others too ($(ans '"fast"' result.structuredContent.stdout), $(ans '"langs"' result.structuredContent.images.0.languages.0.name))" \
	    test "$(ans '"fast"' result.structuredContent.stdout)" = fast -a \
	    "$(ans '"p"' result)" = "{}" -a -n "$(ans '"langs"' result)"
	check "nothing is left running" wait_for 5 eval '[ -z "$(sandbox_pids)" ]'
done
check "mcpd said on stderr what it was waiting for" \
    log_has "$T/drain-pipe-pipe.err" "stdin closed: finishing"

# A question to the client (the conformance build's elicitation tool) can
# no longer be answered: its tools/call is answered with the reason.
{
	init_line $V | sed 's/"capabilities":{}/"capabilities":{"elicitation":{}}/'
	echo "$INITED"
	echo '{"jsonrpc":"2.0","id":"ask","method":"tools/call","params":{"name":"test_elicitation","arguments":{"message":"Your name?"}}}'
} > "$T/ask.in"
MCPD=$B/mcpd-conformance stdio ask
cp "$T/ask.out" "$T/one.ans"
check "a question in flight at EOF: it was asked ($(grep -o '"method":"elicitation/create"' "$T/ask.out"))" \
    grep -q '"method":"elicitation/create"' "$T/ask.out"
check "and its tools/call is answered, an error that says why ($(ans '"ask"' result.content.0.text))" \
    eval '[ "$(ans "\"ask\"" result.isError)" = true ] &&
    ans "\"ask\"" result.content.0.text | grep -q "input ended"'
check "then mcpd exits 0 (status $RC, ${SECS}s)" \
    test "$RC" = 0 -a "${SECS%.*}" -lt 5

# Tasks at EOF (2025-11-25): the client can no longer poll, so a task
# nobody waits for is cancelled; a tasks/result in flight is a request
# like any other, answered when its task ends.
TASKCALL='{"jsonrpc":"2.0","id":"ID","method":"tools/call","params":{"name":"run_code","task":{"ttl":60000},"arguments":{"language":"python","code":"CODE"}}}'
task_call() {	# task_call ID CODE
	local l=${TASKCALL/ID/$1}
	echo "${l/CODE/$2}"
}
live_start tasks 2025-11-25
send "$(task_call orphan 'import time\ntime.sleep(30)')" \
    "$(task_call awaited 'import time\ntime.sleep(2)\nprint(\"awaited\")')"
wait_for 10 eval 'live_has "\"orphan\"" && live_has "\"awaited\""'
TID=$($J get "$T/tasks.out" '"awaited"' result.task.taskId)
send "{\"jsonrpc\":\"2.0\",\"id\":\"result\",\"method\":\"tasks/result\",\"params\":{\"taskId\":\"$TID\"}}"
wait_for 20 eval '[ "$(sandbox_pids | wc -l)" -ge 2 ]'
check "two tasks are running ($(sandbox_pids | wc -l) processes)" \
    test "$(sandbox_pids | wc -l)" -ge 2
s=$(date +%s%N)
exec 7>&-
wait $LPID
ms=$(( ($(date +%s%N) - s) / 1000000 ))
cp "$T/tasks.out" "$T/one.ans"
check "EOF: the tasks/result in flight gets the task's result ($(ans '"result"' result.structuredContent.stdout))" \
    test "$(ans '"result"' result.structuredContent.stdout)" = awaited
check "the task nobody can poll is cancelled: mcpd exits when the awaited one ends (${ms} ms)" \
    test $ms -lt 10000
OID=$($J get "$T/tasks.out" '"orphan"' result.task.taskId)
check "the client was told it was cancelled (notifications/tasks/status)" \
    eval 'grep "notifications/tasks/status" "$T/tasks.out" | grep -F "$OID" |
    grep -q "\"status\":\"cancelled\""'
check "its run was cancelled, and said so in the log" \
    eval 'grep "tool_call" "$T/tasks.err" | grep "task=yes" | grep -q "outcome=cancelled"'
check "nothing of either task is left running" \
    wait_for 5 eval '[ -z "$(sandbox_pids)" ]'

# The reader goes away while a run is in flight (no progress, so nothing
# is being written): mcpd notices at once, with stdin still open or at
# EOF, and neither waits for the run nor dies of SIGPIPE.
NOPROG='{"jsonrpc":"2.0","id":"quiet","method":"tools/call","params":{"name":"run_code","arguments":{"language":"python","code":"import time\ntime.sleep(30)"}}}'
for at_eof in 0 1; do
	rm -f "$T/in.fifo" "$T/out.fifo" "$T/go"
	mkfifo "$T/in.fifo" "$T/out.fifo"
	# One line read, then the reader stays until told to go.
	sh -c 'head -n 1 > /dev/null; while [ ! -e "$1" ]; do sleep 0.05; done' \
	    _ "$T/go" < "$T/out.fifo" &
	rpid=$!
	timeout -k 2 20 "$B/mcpd" --stdio -v -f "$CONF" < "$T/in.fifo" \
	    > "$T/out.fifo" 2> "$T/reader$at_eof.err" &
	mpid=$!
	exec 7> "$T/in.fifo"
	send "$(init_line $V)" "$INITED" "$NOPROG"
	wait_for 20 eval '[ -n "$(sandbox_pids)" ]'
	[ $at_eof = 1 ] && exec 7>&-
	s=$(date +%s%N)
	touch "$T/go"
	wait $rpid
	wait $mpid
	rc=$?
	ms=$(( ($(date +%s%N) - s) / 1000000 ))
	exec 7>&-
	what=$([ $at_eof = 1 ] && echo "after EOF" || echo "stdin open")
	check "$what, the reader closes stdout: mcpd ends within 3 s (${ms} ms, status $rc)" \
	    test $ms -lt 3000 -a $rc -lt 124
	check "$what: and its run is stopped" \
	    wait_for 5 eval '[ -z "$(sandbox_pids)" ]'
done

# SIGTERM while finishing what is in flight still ends mcpd at once.
rm -f "$T/out.fifo"
mkfifo "$T/out.fifo"
cat "$T/out.fifo" > "$T/term.out" &
cpid=$!
{ init_line $V; echo "$INITED"; echo "${SLEEPER//sleeper/term}"; } |
    "$B/mcpd" --stdio -v -f "$CONF" 2> "$T/term.err" > "$T/out.fifo" &
mpid=$!
wait_for 20 grep -q '"progressToken":"ps"' "$T/term.out"
check "a run is in flight after EOF" \
    eval 'log_has "$T/term.err" "stdin closed" && [ -n "$(sandbox_pids)" ]'
s=$(date +%s%N)
kill -TERM $mpid
wait $mpid
rc=$?
ms=$(( ($(date +%s%N) - s) / 1000000 ))
wait $cpid
check "SIGTERM then: mcpd exits at once (${ms} ms, status $rc)" \
    test $ms -lt 2000 -a $rc = 0
check "and its run is stopped" wait_for 5 eval '[ -z "$(sandbox_pids)" ]'

# --- what came out, all of it ---------------------------------------------------------

bad=$($J lines "$T"/*.out | tr '\n' ' ')
check "every line mcpd wrote to stdout, in every run ($(ls "$T"/*.out | wc -l)), is a JSON-RPC 2.0 message${bad:+ ($bad)}" \
    test -z "$bad"
san=$(grep -l -E "ERROR: AddressSanitizer|LeakSanitizer|runtime error:" \
    "$T"/*.err "$T"/*.log 2>/dev/null | xargs -r -n1 basename | tr '\n' ' ')
check "no sanitizer report in any stderr or log${san:+ ($san)}" test -z "$san"
check "sandboxd stops cleanly" stop sandboxd
check "auditd stops cleanly" stop auditd
check "no sandbox process is left" test -z "$(sandbox_pids)"

if [ "$tap_failed" -ne 0 ]; then
	for l in sandboxd; do
		diag "--- $l.log"
		diag_file "$T/$l.log" 10
	done
fi
done_testing
