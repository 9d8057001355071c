#!/bin/bash
# make run: the suite comes up from scripts/run.sh with its generated
# configuration, users and token, says which languages it offers, runs
# code, and Ctrl-C leaves nothing.  make languages, with nothing missing,
# says so without the network.
. "$TOP/tests/lib.sh"
require_root

T=$(mktemp -d /tmp/mcpd-makerun.XXXXXX)
chmod 0755 "$T"
RUN=$T/run
J="python3 $TOP/tests/tools/mcpwire.py"
cleanup() {
	[ -n "${pg:-}" ] && kill -KILL -- -"$pg" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

# The languages run.sh names, sorted: those it says the host image has,
# or (-l) those it says are not installed.
said() {
	local what='languages on the host image, [^:]*'
	[ "$1" = -l ] && what='not installed'
	sed -n "s/^run: $what: \([^;]*\).*/\1/p" "$T/out" | tr -d ' ' |
	    tr ',' '\n' | sort | tr '\n' ' '
}
# The languages list_languages finds on the host image, asked over HTTP
# with the token, sorted.
offered() {
	curl -s --noproxy '*' -m 60 "http://127.0.0.1:18080/mcp" \
	    -H "Authorization: Bearer $(cat "$RUN/token")" \
	    -H 'Content-Type: application/json' \
	    -H 'Accept: application/json, text/event-stream' \
	    -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' \
	    -H 'Mcp-Name: list_languages' \
	    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_languages","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}' \
	    > "$T/langs.out"
	$J get "$T/langs.out" 1 result.structuredContent.languages |
	    python3 -c 'import json, sys
print(" ".join(sorted(l["name"] for l in json.load(sys.stdin)
    if any(i["image"] == "host" for i in l["images"]))) + " ")'
}

RUN_DIR=$RUN PORT=18080 setsid bash "$TOP/scripts/run.sh" > "$T/out" 2>&1 &
pg=$!
check "the three daemons come up" \
    wait_log "$T/out" "ping mcpd -> sandboxd -> auditd -> mcpd:" 30
check "it says which languages the host image has" \
    wait_log "$T/out" "run: languages on the host image" 60
have=$(said)
check "the very languages list_languages offers ($have)" \
    test -n "$have" -a "$have" = "$(offered)"
if grep -q "^run: not installed" "$T/out"; then
	check "and the rest, with the command that adds them ($(said -l))" \
	    grep -q "^run: not installed: .*make languages" "$T/out"
else
	check "none missing: all 13 of the built-in table" \
	    eval 'grep -q "^run: languages on the host image, all 13:" "$T/out" &&
	    [ "$(echo $have | wc -w)" = 13 ]'
fi
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
    test -z "$(cg_ls "$(cg_parent "$RUN")")"
check "no mount is left" test -z "$(grep "$T" /proc/self/mountinfo)"
check "no loop device is left" test -z "$(losetup -a | grep "$T")"
check "the persistent sandbox is kept on disk for next time" \
    test -f "$RUN/state/sandboxes/$id/disk.img"
diag_file "$T/out" 5

# A language the host lacks (ruby, hidden from the suite in a mount
# namespace of its own) is named as lacking, with the command that adds
# it, and no longer offered.
stop_run() {	# Ctrl-C to a make run started in the background as $pg
	local rc
	kill -INT -- -"$pg"
	wait "$pg"
	rc=$?
	pg=
	check "that run stops cleanly too (status $rc), no daemon left" \
	    test "$rc" -eq 0 -a -z "$(pgrep -f "$RUN/mcpd.conf")"
}
rb=$(readlink -f "$(command -v ruby)" 2>/dev/null)
if [ -z "$rb" ]; then
	ok "a lacking language is named # SKIP ruby is not installed here"
else
	# Emptied here, not by the background job's redirection: until that
	# job runs, wait_log would find the first run's line in it.
	: > "$T/out"
	RUN_DIR=$RUN PORT=18080 setsid unshare -m --propagation private \
	    sh -c 'mount --bind /dev/null "$1" && exec bash "$2"' _ "$rb" \
	    "$TOP/scripts/run.sh" > "$T/out" 2>&1 &
	pg=$!
	wait_log "$T/out" "run: languages on the host image" 60
	have=$(said)
	check "ruby hidden: named lacking, with make languages ($(said -l))" \
	    eval '[ "$(said -l)" = "ruby " ] &&
	    grep -q "^run: not installed: ruby; .*make languages" "$T/out"'
	check "and the 12 others as present, as list_languages does ($have)" \
	    test "$(echo $have | wc -w)" = 12 -a "$have" = "$(offered)"
	stop_run
fi

# The other runtimes, one command each: RUNTIME=crun and RUNTIME=runsc.
for rt in crun runsc; do
	case $rt in
	crun)	bin=$(command -v crun) ;;
	runsc)	bin=$(sh "$TOP/scripts/runsc.sh" 2> "$T/runsc.err") ;;
	esac
	if [ -z "$bin" ]; then
		ok "RUNTIME=$rt make run runs code # SKIP no $rt:$(tail -n 1 "$T/runsc.err" 2>/dev/null)"
		continue
	fi
	rrun=$T/run-$rt
	: > "$T/out"
	RUNTIME=$rt RUN_DIR=$rrun PORT=18080 setsid bash "$TOP/scripts/run.sh" \
	    > "$T/out" 2>&1 &
	pg=$!
	wait_log "$T/out" "ping mcpd -> sandboxd -> auditd -> mcpd:" 60
	out=$("$B/tests/sbx" -u "$mu" -g "$(id -g _mcpd)" \
	    -s "$rrun/sandboxd.sock" run -l python -c 'print(6 * 7)' 2>&1)
	check "RUNTIME=$rt make run runs code under $rt ($out)" \
	    eval '[ "$(head -n 1 <<< "$out")" = 42 ] &&
	    grep -q "^run: containers run under $rt " "$T/out"'
	stop_run
	check "and leaves no $rt container" \
	    test -z "$("$bin" --root "$rrun/runc" list --quiet 2>/dev/null)"
	rm -rf "$rrun"
done

# TLS=1: HTTPS with a certificate of a CA of the run directory's, which
# it names for clients to trust.  With OAUTH_ISSUER, an OAuth resource
# server too (its issuer need not answer for the metadata to be served:
# tests/integration/oauth.sh has tokens).
trun=$T/run-tls
: > "$T/out"
TLS=1 OAUTH_ISSUER=http://127.0.0.1:9/ RUN_DIR=$trun PORT=18080 \
    setsid bash "$TOP/scripts/run.sh" > "$T/out" 2>&1 &
pg=$!
wait_log "$T/out" "ping mcpd -> sandboxd -> auditd -> mcpd:" 60
check "TLS=1 make run says where its CA is, and an https URL" \
    eval 'grep -q "^run: TLS: the certificate.s CA is $trun/tls/ca.pem" "$T/out" &&
    grep -q "^run: MCP endpoint https://127.0.0.1:18080/mcp" "$T/out"'
st=$(curl -s --noproxy '*' -m 30 -o /dev/null -w '%{http_code}' \
    --cacert "$trun/tls/ca.pem" https://127.0.0.1:18080/healthz)
check "and serves HTTPS that its CA verifies ($st)" test "$st" = 200
st=$(curl -s --noproxy '*' -m 30 -o /dev/null -w '%{http_code}' \
    https://127.0.0.1:18080/healthz)
check "which a client that does not trust it refuses ($st)" test "$st" = 000
prm=https://127.0.0.1:18080/.well-known/oauth-protected-resource/mcp
check "OAUTH_ISSUER: make run prints the protected resource metadata URL" \
    grep -q "^run:   $prm\$" "$T/out" || diag_file "$T/out"
got=$(curl -s --noproxy '*' -m 30 --cacert "$trun/tls/ca.pem" "$prm")
check "which names the issuer, and the server's own URL as the resource" \
    eval '[ "$(python3 -c "import json, sys; d = json.loads(sys.argv[1]);
print(d[\"resource\"], d[\"authorization_servers\"][0])" "$got")" = \
    "https://127.0.0.1:18080/mcp http://127.0.0.1:9/" ]' || diag "$got"
hdr=$(curl -s --noproxy '*' -m 30 -o /dev/null -D - --cacert "$trun/tls/ca.pem" \
    -X POST https://127.0.0.1:18080/mcp | tr -d '\r' |
    sed -n 's/^[Ww][Ww][Ww]-[Aa]uthenticate: //p')
check "a request without a token is pointed there ($hdr)" \
    test "$hdr" = "Bearer resource_metadata=\"$prm\""
check "the static token is still the tenant's, and any token of the issuer with sub" \
    eval 'grep -q "^	token \"sha256:" "$trun/mcpd.conf" &&
    grep -q "^	claim \"sub\" any" "$trun/mcpd.conf"' || diag_file "$trun/mcpd.conf"
check "the key is not readable by others" \
    test "$(stat -c %a "$trun/tls/key.pem")" = 640 -a \
    "$(stat -c %a "$trun/tls/ca.key")" = 600
stop_run
rm -rf "$trun"
out=$(TLS=yes RUN_DIR=$T/bad bash "$TOP/scripts/run.sh" 2>&1)
check "TLS=yes is refused ($out)" \
    eval '[[ "$out" == *"TLS=yes: 1 or nothing"* ]]'

out=$(RUNTIME=docker RUN_DIR=$T/bad bash "$TOP/scripts/run.sh" 2>&1)
rc=$?
check "RUNTIME=docker is refused, naming the choices ($rc: $out)" \
    eval '[ "$rc" -ne 0 ] && [[ "$out" == *"RUNTIME=docker: runc, crun or runsc"* ]]'

# make languages with everything installed: it says nothing is missing
# and exits 0, with no network at all (a namespace without one), as root
# and as anyone else.
out=$(unshare -n make -s -C "$TOP" languages 2>&1)
rc=$?
check "make languages, no network: nothing is missing, exit 0 ($rc: $out)" \
    eval '[ $rc = 0 ] && grep -q "nothing is missing" <<< "$out"'
cp "$TOP/scripts/deps.sh" "$T/deps.sh"
NOBODY="setpriv --reuid 65534 --regid 65534 --clear-groups"
out=$($NOBODY sh "$T/deps.sh" languages 2>&1)
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
out=$(unshare -m --propagation private sh -c \
    'mount --bind "$1" /var/lib/dpkg/status && exec $2 sh "$3" languages' \
    _ "$T/status" "$NOBODY" "$T/deps.sh" 2>&1)
rc=$?
check "a missing one, not root: the apt-get line, exit 1 ($rc: $out)" \
    eval '[ $rc = 1 ] && grep -q "sudo apt-get install ruby$" <<< "$out"'
done_testing
