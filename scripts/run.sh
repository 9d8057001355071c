#!/bin/bash
# make run: start mcp-auditd, mcp-sandboxd and mcpd in the foreground with
# their state, sockets and a generated configuration under ./run/.
# Ctrl-C stops all three.
#
# Environment: B (build directory, default build), PORT (default 8080),
# RUN_DIR (default ./run), RUNTIME (runc, crun or runsc), TLS=1 (HTTPS,
# with a certificate of a CA made under RUN_DIR/tls), OAUTH_ISSUER (an
# OAuth resource server of that issuer too, with OAUTH_AUDIENCE, default
# the server's own URL, OAUTH_TENANT_CLAIM, default sub: any token with
# that claim is the tenant "local", and OAUTH_SCOPE, OAUTH_JWKS).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
B=${B:-build}
case "$B" in /*) ;; *) B="$top/$B" ;; esac
PORT=${PORT:-8080}
RUN=${RUN_DIR:-$top/run}

case "$PORT" in
''|*[!0-9]*) echo "run: PORT must be a number, not '$PORT'" >&2; exit 1 ;;
esac

umask 022
mkdir -p "$RUN" "$RUN/state"
# As /run/mcpd and /var/lib/mcpd: _mcpd, _mcpaudit, stdio clients and
# the sandboxes' uids pass through, to the sockets, the audit log and
# the images; only root lists them.
chmod 0711 "$RUN" "$RUN/state"

if [ "$(id -u)" -eq 0 ]; then
	# The users the packaged suite runs as (systemd/sysusers.conf).
	if ! getent passwd _mcpd >/dev/null ||
	    ! getent passwd _mcpaudit >/dev/null; then
		echo "run: creating the users _mcpd and _mcpaudit" >&2
		if command -v systemd-sysusers >/dev/null 2>&1; then
			systemd-sysusers "$top/systemd/sysusers.conf"
		else
			for u in _mcpd _mcpaudit; do
				getent passwd $u >/dev/null ||
				    useradd --system --user-group \
				    --home-dir /nonexistent --no-create-home \
				    --shell /usr/sbin/nologin $u
			done
		fi
	fi
	# mcpd must be able to reach its sockets once it is _mcpd.
	if ! setpriv --reuid=_mcpd --regid=_mcpd --clear-groups \
	    test -x "$RUN" 2>/dev/null; then
		echo "run: user _mcpd cannot reach $RUN; run from a" \
		    "checkout whose parent directories are searchable" \
		    "(mode o+x)" >&2
		exit 1
	fi
	users='user "_mcpd"'
	audit_user='user "_mcpaudit"'
	# stdio clients are the tenant of their uid: root, and whoever
	# ran make run with sudo.
	uids='uid "root"'
	if [ -n "${SUDO_UID:-}" ] && [ "$SUDO_UID" != 0 ]; then
		uids="$uids
	uid \"$SUDO_UID\""
	fi
else
	echo "run: not root: all three daemons run as $(id -un)," \
	    "without privilege separation by user" >&2
	users="user \"$(id -u)\""
	audit_user="user \"$(id -u)\""
	uids="uid \"$(id -u)\""
fi

# A bearer token for MCP clients, kept across runs; only its hash goes into
# the configuration.
if [ ! -s "$RUN/token" ]; then
	( umask 077
	  printf 'mcpd-%s\n' "$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" \
	      > "$RUN/token" )
fi
hash=$(tr -d '\n' < "$RUN/token" | sha256sum | cut -d' ' -f1)

# The OCI runtime: RUNTIME=crun make run tries crun, RUNTIME=runsc gVisor.
RUNTIME=${RUNTIME:-runc}
runtime="runtime $RUNTIME"
case $RUNTIME in
runc|crun)
	if ! command -v "$RUNTIME" > /dev/null; then
		echo "run: RUNTIME=$RUNTIME, which is not installed:" \
		    "apt-get install $RUNTIME" >&2
		exit 1
	fi ;;
runsc)
	# One from 2024 or later: Debian 13's where this host's is older.
	runsc=$(sh "$top/scripts/runsc.sh") || exit 1
	runtime="runtime runsc {
	path \"$runsc\"
}
runtime runsc" ;;
*)	echo "run: RUNTIME=$RUNTIME: runc, crun or runsc" >&2
	exit 1 ;;
esac

# TLS=1: HTTPS, with a certificate for 127.0.0.1 and localhost signed by
# a CA of this run directory's, both made once and kept (the server's
# again when it has less than a day left): clients trust the CA's file.
scheme=http
listen_tls=
tls_conf=
case ${TLS:-} in
''|0) ;;
1)
	command -v openssl > /dev/null ||
	    { echo "run: TLS=1 needs openssl: apt-get install openssl" >&2
	      exit 1; }
	tls=$RUN/tls
	mkdir -p "$tls"
	chmod 0755 "$tls"
	ossl() { openssl "$@" > /dev/null 2>> "$tls/openssl.log"; }
	ec="-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
	if ! openssl x509 -in "$tls/ca.pem" -noout -checkend 86400 \
	    > /dev/null 2>&1; then
		( umask 077
		  ossl req -x509 $ec -keyout "$tls/ca.key" -out "$tls/ca.pem" \
		      -days 365 -subj "/CN=mcpd make run CA" ) ||
		    { echo "run: cannot make a CA: see $tls/openssl.log" >&2
		      exit 1; }
		chmod 0644 "$tls/ca.pem"
		rm -f "$tls/cert.pem"
	fi
	if ! openssl x509 -in "$tls/cert.pem" -noout -checkend 86400 \
	    > /dev/null 2>&1; then
		( umask 077
		  ossl req $ec -keyout "$tls/key.pem" -out "$tls/cert.csr" \
		      -subj /CN=localhost &&
		  ossl x509 -req -in "$tls/cert.csr" -CA "$tls/ca.pem" \
		      -CAkey "$tls/ca.key" -CAcreateserial -out "$tls/cert.pem" \
		      -days 30 -extfile <(printf '%s\n' \
		      'subjectAltName=IP:127.0.0.1,DNS:localhost' \
		      'extendedKeyUsage=serverAuth') ) ||
		    { echo "run: cannot make a certificate: see" \
		      "$tls/openssl.log" >&2; exit 1; }
	fi
	# Read again on SIGHUP by mcpd as its own user.
	if [ "$(id -u)" -eq 0 ]; then
		chgrp _mcpd "$tls/cert.pem" "$tls/key.pem"
		chmod 0640 "$tls/cert.pem" "$tls/key.pem"
	fi
	scheme=https
	listen_tls=" tls"
	tls_conf="tls certificate \"$tls/cert.pem\"
tls key \"$tls/key.pem\"" ;;
*)	echo "run: TLS=$TLS: 1 or nothing" >&2
	exit 1 ;;
esac

# OAUTH_ISSUER=URL: tokens of that issuer, for this server, are the
# tenant "local" too; the static token stays.
oauth_conf=
claim=
if [ -n "${OAUTH_ISSUER:-}" ]; then
	audience=${OAUTH_AUDIENCE:-$scheme://127.0.0.1:$PORT/mcp}
	oauth_conf="oauth {
	issuer \"$OAUTH_ISSUER\"
	audience \"$audience\"${OAUTH_JWKS:+
	jwks \"$OAUTH_JWKS\"}${OAUTH_SCOPE:+
	scope \"$OAUTH_SCOPE\"}
}"
	claim="claim \"${OAUTH_TENANT_CLAIM:-sub}\" any"
	rest=${audience#*://}
	case $rest in */*) prm_path=/${rest#*/} ;; *) prm_path= ;; esac
	[ "$prm_path" = / ] && prm_path=
fi

cat > "$RUN/mcpd.conf" <<CONF
# Generated by 'make run'; edits are lost on the next run.
$users
$runtime
run directory "$RUN"
state directory "$RUN/state"
sandbox-init "$B/sandbox-init"
listen on 127.0.0.1 port $PORT$listen_tls
$tls_conf

$oauth_conf
tenant "local" {
	token "sha256:$hash"
	$uids
	$claim
}
# One user's machine: the tenant may read /metrics too.
metrics tenant "local"

audit {
	$audit_user
	required yes
}
CONF

for p in mcp-auditd mcp-sandboxd mcpd; do
	"$B/$p" -n -f "$RUN/mcpd.conf" 2>/dev/null ||
	    { "$B/$p" -n -f "$RUN/mcpd.conf"; exit 1; }
done

pids=
stop() {
	trap - INT TERM EXIT
	[ -n "$pids" ] && kill -TERM $pids 2>/dev/null
	wait 2>/dev/null
	echo "run: stopped" >&2
}
trap 'stop; exit 0' INT TERM
trap stop EXIT

"$B/mcp-auditd" -d -f "$RUN/mcpd.conf" & pids="$pids $!"
"$B/mcp-sandboxd" -d -f "$RUN/mcpd.conf" & pids="$pids $!"
"$B/mcpd" -d -f "$RUN/mcpd.conf" & pids="$pids $!"

cat >&2 <<MSG
run: mcp-auditd, mcp-sandboxd and mcpd are running; state in $RUN.
run: containers run under $RUNTIME (RUNTIME=runc|crun|runsc make run chooses).
run: MCP endpoint $scheme://127.0.0.1:$PORT/mcp (legacy SSE: /sse), with
run:   Authorization: Bearer \$(cat $RUN/token)
run: health $scheme://127.0.0.1:$PORT/healthz; /metrics with the same token
run: stdio clients: $B/mcpd --stdio -f $RUN/mcpd.conf
run: the audit log: $B/mcpctl -f $RUN/mcpd.conf audit tail -f
run:   (and audit verify, list, show, export)
run: Ctrl-C stops them.
MSG
[ -n "${OAUTH_ISSUER:-}" ] && cat >&2 <<MSG
run: OAuth: tokens of $OAUTH_ISSUER for $audience are the tenant
run:   "local" (claim ${OAUTH_TENANT_CLAIM:-sub}); clients find the issuer at
run:   $scheme://127.0.0.1:$PORT/.well-known/oauth-protected-resource$prm_path
MSG
[ "$scheme" = https ] && cat >&2 <<MSG
run: TLS: the certificate's CA is $RUN/tls/ca.pem: trust it with
run:   curl --cacert $RUN/tls/ca.pem, or NODE_EXTRA_CA_CERTS=$RUN/tls/ca.pem
MSG

# Which languages of the table the host image runs, asked the way a client
# asks (list_languages, through a pipe into mcpd --stdio) once the suite
# is up (/healthz), and the one command that adds the rest.
suite_healthy() {
	python3 - "$scheme" "$RUN/tls/ca.pem" "$PORT" $pids <<'PY'
import os, ssl, sys, time, urllib.request
handlers = [urllib.request.ProxyHandler({})]
if sys.argv[1] == "https":
    handlers.append(urllib.request.HTTPSHandler(
        context=ssl.create_default_context(cafile=sys.argv[2])))
get = urllib.request.build_opener(*handlers).open
url = "%s://127.0.0.1:%s/healthz" % (sys.argv[1], sys.argv[3])
del sys.argv[1:3]
for _ in range(60):
    try:
        if get(url, timeout=2).status == 200:
            sys.exit(0)
    except OSError:
        pass
    try:
        for pid in sys.argv[2:]:
            os.kill(int(pid), 0)
    except OSError:
        sys.exit(1)     # a daemon ended: wait -n below says so
    time.sleep(0.5)
sys.exit("run: the suite is not healthy after 30 s (see /healthz)")
PY
}
list_languages() {
	echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{' \
	    '"protocolVersion":"2025-06-18","capabilities":{},' \
	    '"clientInfo":{"name":"make-run","version":"1"}}}'
	echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
	echo '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{' \
	    '"name":"list_languages","arguments":{}}}'
}
say_languages() {	# say_languages "COMMAND THAT ADDS THE REST" < answers
	python3 -c '
import json, sys
res = {}
for line in sys.stdin:
    try:
        m = json.loads(line)
        if m.get("id") == 2:
            res = m["result"]["structuredContent"]
    except (ValueError, KeyError, TypeError, AttributeError):
        pass
langs = res.get("languages")
host = [i for i in res.get("images", []) if i.get("name") == "host"]
if not isinstance(langs, list) or not host:
    sys.exit("run: mcpd --stdio did not list its languages")
if host[0].get("probe_error"):
    sys.exit("run: the languages of the host image are not known: "
             + host[0]["probe_error"])
have = [l["name"] for l in langs
        if any(i["image"] == "host" for i in l["images"])]
lack = [l["name"] for l in langs if l["name"] not in have]
count = "%d of" % len(have) if lack else "all"
print("run: languages on the host image, %s %d: %s"
      % (count, len(langs), ", ".join(have) or "none"))
if lack:
    print("run: not installed: %s; add them with: %s, then make run again"
          % (", ".join(lack), sys.argv[1]))
' "$1"
}
if [ "$(id -u)" -eq 0 ]; then add="make languages"
else add="sudo make languages"; fi
if suite_healthy; then
	list_languages | timeout --foreground 120 "$B/mcpd" --stdio \
	    -f "$RUN/mcpd.conf" 2>/dev/null | say_languages "$add" >&2 || :
fi

# If any daemon ends, stop the others rather than limp on.  Ctrl-C
# reaches the daemons too, and they exit 0.
set +e
wait -n
rc=$?
[ "$rc" -eq 0 ] && exit 0
echo "run: a daemon failed (status $rc); stopping the others" >&2
exit 1
