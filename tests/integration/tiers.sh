#!/bin/bash
# Isolation tiers side by side in one sandboxd: runc by default, crun for
# an image, gVisor's runsc for a tenant, whose choice stands over the
# image's.  Each sandbox and run must land under its runtime (gVisor's
# kernel answers uname with its own release), each runtime keep its
# containers apart, each (image, runtime) its own warm pool, and a reload
# move a tenant to another runtime sandboxd already uses but refuse one
# it never checked.  Driven through sandboxd's protocol by tests/tools/sbx.
. "$TOP/tests/lib.sh"
require_root
release_pass_only "runc, crun and runsc side by side"
skip_all() {
	ok "runc, crun and runsc side by side # SKIP $1"
	done_testing
	exit 0
}
err=$(mktemp)
if ! RUNSC=$(sh "$TOP/scripts/runsc.sh" 2> "$err"); then
	why=$(tail -n 1 "$err")
	rm -f "$err"
	skip_all "${why:-no runsc}"
fi
rm -f "$err"
command -v crun > /dev/null ||
    skip_all "no crun (sh scripts/deps.sh check installs it)"

MU=64101
AU=64102
T=$(mktemp -d /tmp/mcpd-tiers.XXXXXX)
chmod 0755 "$T"
CONF=$T/mcpd.conf
MCPCTL=$B/mcpctl
RUN=$T/run
CGP=$(cg_parent "$RUN")

conf() {	# conf ALICE_RUNTIME_LINE
	cat > "$CONF" <<EOF
user "$MU"
run directory "$RUN"
state directory "$T/state"
sandbox-init "$B/sandbox-init"
sandbox uids 268435456 32
runtime gvisor {
	path "$RUNSC"
	kind runsc
}
$2
image host host pool 1
image fast host pool 1 runtime crun

limits default {
	memory 256M
	pids 64
	timeout 20s
	disk 32M
}

tenant alice {
	token "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	$1
}
tenant bob {
	token "sha256:2222222222222222222222222222222222222222222222222222222222222222"
	runtime gvisor
}

audit {
	user "$AU"
	required yes
}
EOF
}
conf "" ""

cleanup() {
	kill_daemons 1
	remove_tmp
}
trap cleanup EXIT

# -n: a container under each runtime the file uses, as the daemon starts one.
"$B/mcp-sandboxd" -n -f "$CONF" > "$T/out" 2> "$T/err"
rc=$?
check "mcp-sandboxd -n starts a container under runc, crun and runsc (exit $rc)" \
    eval '[ $rc -eq 0 ] && [ "$(wc -l < "$T/out")" -eq 3 ] &&
    grep -qE "^runtime runc \(runc /[^)]*\): a container started in [0-9]+ ms$" "$T/out" &&
    grep -qE "^runtime crun \(crun /[^)]*\): a container started in [0-9]+ ms$" "$T/out" &&
    grep -qE "^runtime gvisor \(runsc $RUNSC\): a container started in [0-9]+ ms$" "$T/out"'
diag_file "$T/out"
diag_file "$T/err"

start auditd
start sandboxd
wait_sandboxd
HOSTREL=$(uname -r)
LOG=$T/sandboxd.log

# The privileged helper logs its checks as it makes them, which may be
# after sandboxd says it is ready (one CI run in several).
check "sandboxd checks each runtime named: runc, crun for an image, runsc for a tenant" \
    wait_for 20 eval 'grep -q "runc [0-9]" "$LOG" && grep -q "runtime crun: crun [0-9]" "$LOG" &&
    grep -q "runtime gvisor: runsc [0-9]" "$LOG"'

# --- warm pools: one per image and runtime ------------------------------------
pool_up() {	# pool_up LABEL: a warm container of that pool came up
	grep -q "pool $1: warm container [0-9a-f]* starting" "$LOG"
}
for p in host host@gvisor fast@crun fast@gvisor; do
	check "a warm pool for $p" wait_for 60 pool_up "$p"
done
check "and none for an image under a runtime no tenant gives it" \
    eval '! grep -q "pool fast: \|pool host@crun" "$LOG"'
# All of them up before the runs below claim from them.
settle() {
	[ "$(grep -c "warm container [0-9a-f]* starting" "$LOG")" -ge 4 ] &&
	[ "$(find "$RUN"/runc* -maxdepth 1 -mindepth 1 -type d 2>/dev/null |
	    wc -l)" -ge 4 ]
}
wait_for 60 settle

# mcpctl config check does the same, beside the running daemon's containers.
warm() { (cd "$RUN" && ls -d runc*/*/ | sort); }
warm > "$T/warm.before"
"$MCPCTL" -j -f "$CONF" config check > "$T/cc.json" 2> "$T/err"
rc=$?
got=$(json "$T/cc.json" "' '.join(sorted(c['runtime'] for c in d['containers'] if c['started']))" 2> /dev/null)
check "mcpctl config check, the daemon running: a container under each runtime (exit $rc: $got)" \
    eval '[ $rc -eq 0 ] && [ "$got" = "crun gvisor runc" ]'
diag_file "$T/cc.json"
diag_file "$T/err"
warm > "$T/warm.after"
check "... which kept its warm containers" \
    eval '[ -s "$T/warm.before" ] && cmp -s "$T/warm.before" "$T/warm.after"'
diag_file "$T/warm.after"
check "... and its run directory holds no check's" \
    test -z "$(find "$RUN" -maxdepth 1 -name 'check.*')"

# --- one-shot runs ------------------------------------------------------------
claimed_under() {	# claimed_under TENANT: the runtime of its newest claim
	sed -n "s/.*: warm, for a run of tenant $1 (runtime \(.*\))$/\1/p" \
	    "$LOG" | tail -1
}
as alice run -l sh -c 'uname -r'
check "alice's run: the host's kernel ($OUT)" test "$OUT" = "$HOSTREL"
check "from the runc pool ($(claimed_under alice))" \
    test "$(claimed_under alice)" = runc
as alice run -i fast -l sh -c 'uname -r'
check "alice's run of the crun image: the host's kernel ($OUT)" \
    test "$OUT" = "$HOSTREL"
check "from the crun pool ($(claimed_under alice))" \
    test "$(claimed_under alice)" = crun
as bob run -l sh -c 'uname -r'
check "bob's run: gVisor's kernel ($OUT)" \
    eval '[ -n "$OUT" ] && [ "$OUT" != "$HOSTREL" ]'
check "from the gVisor pool ($(claimed_under bob))" \
    test "$(claimed_under bob)" = gvisor
as bob run -i fast -l sh -c 'uname -r'
check "bob's run of the crun image: still gVisor's kernel ($OUT)" \
    eval '[ -n "$OUT" ] && [ "$OUT" != "$HOSTREL" ]'
check "the tenant's runtime stands over the image's ($(claimed_under bob))" \
    test "$(claimed_under bob)" = gvisor

# --- persistent sandboxes -----------------------------------------------------
as alice create
A1=$OUT
as alice create -i fast
A2=$OUT
as bob create -i fast
B1=$OUT
for x in "A1 alice runc" "A2 alice crun" "B1 bob gvisor"; do
	set -- $x
	id=${!1}
	as "$2" status -S "$id"
	check "STATUS of $2's sandbox $1: runtime=$3 ($OUT)" \
	    grep -q "runtime=$3 state=" <<< "$OUT"
	as "$2" exec -S "$id" -c 'echo ok > f; cat f; uname -r'
	case $3 in
	gvisor)	want=0 ;;
	*)	want=1 ;;
	esac
	check "and it works there, on the expected kernel ($(tr '\n' ' ' <<< "$OUT"))" \
	    eval '[ "$(head -1 <<< "$OUT")" = ok ] &&
	    [ "$([ "$(tail -1 <<< "$OUT")" = "$HOSTREL" ] && echo 1 || echo 0)" = $want ]'
done
# Each runtime keeps its containers' state apart from the others'.
check "runc's containers under run/runc" \
    eval '"$(command -v runc)" --root "$RUN/runc" list --quiet | grep -qx "$A1"'
check "crun's under run/runc-crun" \
    eval 'crun --root "$RUN/runc-crun" list --quiet | grep -qx "$A2"'
check "runsc's under run/runc-gvisor" \
    eval '"$RUNSC" --root "$RUN/runc-gvisor" list --quiet | grep -qx "$B1"'

# --- a reload moves a tenant ----------------------------------------------------
conf "runtime gvisor" ""
kill -HUP "${PID[sandboxd]}"
check "a reload moves alice to gVisor" \
    wait_log "$LOG" "tenant \"alice\" changed"
as alice run -l sh -c 'uname -r'
check "alice's next run is under gVisor's kernel ($OUT)" \
    eval '[ -n "$OUT" ] && [ "$OUT" != "$HOSTREL" ]'
as alice status -S "$A1"
check "her runc sandbox keeps its runtime ($OUT)" \
    grep -q "runtime=runc state=" <<< "$OUT"
# No tenant runs an image under runc or crun now: those pools go.
check "warm containers under runtimes no tenant uses now are let go" \
    wait_log "$LOG" "ended (no tenant runs its image under its runtime now)"
only_persistent() {
	[ -z "$("$(command -v runc)" --root "$RUN/runc" list --quiet |
	    grep -vx "$A1")" ] &&
	[ -z "$(crun --root "$RUN/runc-crun" list --quiet | grep -vx "$A2")" ]
}
check "runc and crun keep alice's persistent sandboxes alone" \
    wait_for 20 only_persistent
conf "runtime spare" "runtime spare {
	path \"$(command -v crun)\"
	kind crun
}"
kill -HUP "${PID[sandboxd]}"
check "a runtime block added by a reload needs a restart" \
    wait_log "$LOG" "\"runtime block\" changed: restart mcp-sandboxd"
as alice run -l sh -c 'uname -r'
check "so a run under it is refused, saying so ($RES)" \
    grep -q "code=3 .*named by a reload: restart mcp-sandboxd" <<< "$RES"
as bob run -l sh -c 'echo still'
check "others run on ($OUT)" test "$OUT" = still

# --- nothing left ----------------------------------------------------------------
check "sandboxd stops cleanly" stop sandboxd
left() {
	"$(command -v runc)" --root "$RUN/runc" list --quiet 2>/dev/null
	crun --root "$RUN/runc-crun" list --quiet 2>/dev/null
	"$RUNSC" --root "$RUN/runc-gvisor" list --quiet 2>/dev/null
	cg_ls "$CGP/*/"
}
check "no container of any runtime is left, nor a cgroup ($(left | tr '\n' ' '))" \
    test -z "$(left)"
done_testing
