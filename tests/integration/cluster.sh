#!/bin/bash
# Several hosts behind HAProxy (contrib/haproxy.cfg as shipped, its bind
# and server lines put to this test's addresses): three whole suites, each
# in a network namespace of its own, HAProxy on the loopback in front.
# Nine tenants' calls each land on one host; a host whose sandboxd stops
# leaves the ring within seconds, its tenants' one-shot runs go to the
# next host and nobody else's move; back, they come back; a fourth host
# takes about a quarter of the tenants and moves no one between the old
# three.  Every host's audit log verifies, and all of them at once.
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
NT=9		# tenants
declare -A HPID	# HOST.daemon -> pid
cluster_cleanup() {
	local p h
	[ -n "${HAP:-}" ] && kill "$HAP" 2>/dev/null
	for p in "${HPID[@]}"; do kill -TERM "$p" 2>/dev/null; done
	sleep 0.5
	for p in "${HPID[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	for h in 1 2 3 4; do test_host_del "mcl$h-$$" "mcl$h-$$"; done
	remove_tmp
}
trap cluster_cleanup EXIT

tok() { echo "cluster-t$1-$$"; }
hash_of() { printf %s "$1" | sha256sum | cut -d' ' -f1; }

# host_conf N: host N's configuration, its mcpd on 10.77.N.2:8080.
host_conf() {
	local n=$1 i
	cat <<EOF
user "$MU"
run directory "$T/h$n/run"
state directory "$T/h$n/state"
sandbox-init "$B/sandbox-init"
sandbox uids $((SANDBOX_UIDS + (n - 1) * 16 * 65536)) 16
listen on 10.77.$n.2 port 8080 plaintext
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
	    -e '/^\tserver /d' "$TOP/contrib/haproxy.cfg"
	for h in "$@"; do
		printf '\tserver h%d 10.77.%d.2:8080 check\n' "$h" "$h"
	done
}
haproxy_conf 1 2 3 > "$T/haproxy.cfg"
check "haproxy accepts contrib/haproxy.cfg" \
    haproxy -c -q -f "$T/haproxy.cfg" || haproxy -c -f "$T/haproxy.cfg" 2>&1 | head -5
haproxy -W -db -f "$T/haproxy.cfg" > "$T/haproxy.log" 2>&1 &
HAP=$!
check "haproxy answers in front of them" \
    wait_for 100 eval '[ "$(curl -s -m 2 -o /dev/null -w "%{http_code}" \
    "http://127.0.0.1:$PORT/healthz")" = 200 ]'
ups() { grep -c "Server mcpd/h$1 is UP" "$T/haproxy.log"; }

# calls_on H K: tenant K's tool calls host H's mcpd has logged.
calls_on() {
	grep -c "tool_call tenant=t$2 " "$T/h$1/mcpd.log" 2> /dev/null || true
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
kill -TERM "${HPID[h$DOWN.sandboxd]}"
wait "${HPID[h$DOWN.sandboxd]}" 2> /dev/null
unset "HPID[h$DOWN.sandboxd]"
check "host h$DOWN, its sandboxd stopped, leaves the ring within seconds" \
    wait_for 100 eval 'grep -q "Server mcpd/h$DOWN is DOWN" "$T/haproxy.log"'
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
host_daemon "$DOWN" sandboxd
check "host h$DOWN back: in the ring again" \
    wait_for 150 eval '[ "$(ups "$DOWN")" -gt "$UPS" ]'
bad=
for ((k = 1; k <= NT; k++)); do
	[ "${HOME_OF[$k]}" = "h$DOWN" ] || continue
	call "$k" sandbox_exec '{"sandbox": "s", "command": "cat f"}'
	[ "$RC" = 0 ] && [ "$SERVED" = "h$DOWN" ] &&
	    grep -q kept "$T/r$k.json" || bad="$bad t$k($RC,$SERVED)"
done
check "its tenants are back on it, their sandboxes and files there" \
    test -z "$bad" || diag "$bad"

# A fourth host: only its share of the ring moves, and only to it.
host_start 4
check "host h4 serves" host_up 4 || diag_file "$T/h4/mcpd.log"
haproxy_conf 1 2 3 4 > "$T/haproxy.cfg"
WORKERS=$(grep -c "New worker" "$T/haproxy.log")
kill -USR2 "$HAP"
check "haproxy reloads with h4 beside the others" \
    wait_for 150 eval '[ "$(grep -c "New worker" "$T/haproxy.log")" -gt "$WORKERS" ]'
sleep 2		# the new worker's first checks
n=0 wrong=
for ((k = 1; k <= NT; k++)); do
	call "$k" run_code "$RUN1"
	if [ "$SERVED" = h4 ]; then
		n=$((n + 1))
	elif [ "$SERVED" != "${HOME_OF[$k]}" ]; then
		wrong="$wrong t$k(${HOME_OF[$k]}->$SERVED)"
	fi
done
check "a fourth host takes some tenants ($n of $NT), about a quarter" \
    test "$n" -ge 1 -a "$n" -le 5
check "and no tenant moves between the other three" test -z "$wrong" ||
    diag "$wrong"

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
kill "$HAP" 2> /dev/null
wait "$HAP" 2> /dev/null
HAP=
check "no sandbox process is left" \
    wait_for 10 eval '[ -z "$(sandbox_pids)" ]'
for f in "$T"/h*/*.log; do
	check "no sanitizer report in ${f#"$T"/}" \
	    test -z "$(grep -E 'ERROR: AddressSanitizer|LeakSanitizer' "$f")"
done
done_testing
