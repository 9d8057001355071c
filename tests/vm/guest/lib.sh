# Helpers of the guest's checks (tests/vm/guest/phase*.sh), on top of
# tests/lib.sh: the suite as make install put it and systemd runs it,
# reached as its clients reach it.
. "$TOP/tests/lib.sh"

CONF=/etc/mcpd/mcpd.conf
RUNC_ROOT=/run/mcpd/runc
SANDBOX_UIDS=134217728	# the installed suite's: apart from the tests'
UNITS="mcp-auditd.service mcp-sandboxd.service mcpd.socket"
DESK=desk		# a desktop user, tenant vm over stdio
STATE=/var/lib/mcpd-vmtest	# what phase 2 needs from phase 1
URL=http://127.0.0.1:8080/mcp
T=${T:-$(mktemp -d /tmp/mcpd-vm.XXXXXX)}
chmod 0755 "$T"

section() {	# section NAME: a diagnostic with the time since the last
	local now=$SECONDS
	[ -n "${SECTION:-}" ] &&
	    TIMES="${TIMES:-}$SECTION $((now - SECTION_T0)) s; "
	SECTION=$1
	SECTION_T0=$now
	diag "--- $1"
}

# within SECONDS COMMAND...: retry the command until it succeeds, for
# SECONDS of real time at most (wait_for counts tries, and a try takes
# long under emulation).
within() {
	local end=$((SECONDS + $1))
	shift
	while :; do
		"$@" && return 0
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.2
	done
}

# The tenant's bearer token, made in phase 1 and kept for phase 2.
TOKEN=$(cat "$STATE/token" 2>/dev/null)

# mcp TOOL ARGS: a tools/call over Streamable HTTP, stateless
# (2026-07-28), as the tenant; CODE is the HTTP status and the JSON-RPC
# answer is in $T/r.json.
mcp() {
	CODE=$(curl -s -m "${MCP_TIMEOUT:-120}" -o "$T/r.raw" \
	    -w '%{http_code}' "$URL" -H "Authorization: Bearer $TOKEN" \
	    -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' \
	    -H 'MCP-Protocol-Version: 2026-07-28' \
	    -H 'Mcp-Method: tools/call' -H "Mcp-Name: $1" \
	    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
		"name":"'"$1"'","arguments":'"$2"',"_meta":{
		"io.modelcontextprotocol/protocolVersion":"2026-07-28",
		"io.modelcontextprotocol/clientCapabilities":{}}}}')
	# An event stream's last data line, or the body itself.
	if grep -q '^data: ' "$T/r.raw"; then
		sed -n 's/^data: //p' "$T/r.raw" | tail -n 1 > "$T/r.json"
	else
		cp "$T/r.raw" "$T/r.json"
	fi
}

# sc EXPR: a Python expression of s, the last answer's structuredContent
# (r is the whole answer).
sc() {
	/usr/bin/python3 -c 'import json, sys
try:
    r = json.load(open(sys.argv[1]))
except ValueError:
    r = {}
s = (r.get("result") or {}).get("structuredContent") or {}
print(eval(sys.argv[2]))' "$T/r.json" "$1" 2>&1
}

brief() {	# the last answer, cut short, for a check's description
	tr -s ' \n' ' ' < "$T/r.json" | cut -c1-${1:-300}
}

# sbx as the installed mcpd (user _mcpd) on sandboxd's socket, for the
# tenant: OUT, ERR, RES and RC after, as lib.sh's as().
MU=$(id -u _mcpd 2>/dev/null)
SBX() {
	"$B/tests/sbx" -u "$MU" -g "$MU" -s /run/mcpd/sandboxd.sock "$@"
}

# --- what the suite leaves on the machine --------------------------------

# Sandbox ids (32 hex digits) in a path.
ids_in() {
	grep -oE '(^|[/:._-])[0-9a-f]{32}([/._-]|$)' <<< "$1" |
	    grep -oE '[0-9a-f]{32}' | sort -u
}
# Every runtime's containers: runc's, and crun's and runsc's once an image
# of phase 2 is under them.
containers() {
	{
		runc --root "$RUNC_ROOT" list -q
		crun --root "$RUNC_ROOT-crun" list -q
		runsc --root "$RUNC_ROOT-runsc" list --quiet
	} 2>/dev/null | sort
}
# Every cgroup directory on the machine that names a sandbox.
sandbox_cgroups() {
	find /sys/fs/cgroup -mindepth 1 -type d 2>/dev/null |
	    grep -E '[0-9a-f]{32}'
}
# The installed suite's sandbox processes, with the cgroup each is in.
suite_procs() {
	local pid
	for pid in $(ps -eo uid=,pid= | awk -v b=$SANDBOX_UIDS \
	    '$1 >= b && $1 < b + 64 * 65536 { print $2 }'); do
		echo "$pid $(cut -d: -f3 "/proc/$pid/cgroup" 2>/dev/null |
		    tr '\n' ' ')"
	done
}
loops() {
	losetup -n -O NAME,BACK-FILE 2>/dev/null | grep -F /mcpd/
}
mounts_of_suite() {
	grep -E '/var/lib/mcpd/|/run/mcpd/' /proc/self/mountinfo
}

# leftovers: what no live container accounts for: a cgroup or a process
# of a container runc no longer lists, a loop device or a mount of the
# workspaces in the host's mount namespace.
leftovers() {
	local live d pid id rest
	live=" $(echo $(containers)) "
	while read -r d; do
		for id in $(ids_in "$d"); do
			case $live in *" $id "*) ;; *) echo "cgroup $d" ;; esac
		done
	done < <(sandbox_cgroups)
	while read -r pid rest; do
		[ -n "$pid" ] || continue
		id=$(ids_in "$rest" | head -n 1)
		case $live in
		*" $id "*) [ -n "$id" ] || echo "process $pid ($rest)" ;;
		*) echo "process $pid ($rest)" ;;
		esac
	done < <(suite_procs)
	mounts_of_suite | sed 's/^/mount /'
}
nothing_left() {
	[ -z "$(leftovers)" ]
}
check_clean() {	# check_clean WHAT
	if within 30 nothing_left; then
		ok "nothing left behind by $1"
	else
		not_ok "nothing left behind by $1"
		leftovers | sed 's/^/#   /'
	fi
}

# status EXPR: a Python expression of d, mcpctl -j status's "sandboxd".
status() {
	"$(command -v mcpctl || echo /usr/local/sbin/mcpctl)" -j status \
	    2>/dev/null | python3 -c 'import json, sys
d = json.load(sys.stdin)["sandboxd"]
print(eval(sys.argv[1]))' "$1" 2>/dev/null
}

# Every unit of the suite is active (systemctl is-active with several
# units succeeds when one is).
suite_up() {
	local u
	for u in mcp-sandboxd.service mcp-auditd.service mcpd.socket; do
		systemctl is-active -q "$u" || return 1
	done
}

# A unit's property.
prop() {	# prop UNIT NAME
	systemctl show -P "$2" "$1"
}
