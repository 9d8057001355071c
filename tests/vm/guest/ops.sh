# Sourced by tests/vm/guest/phase1.sh, with the suite running: what an
# administrator does: reloads, a SIGKILL of mcp-sandboxd, mcpctl, the
# journal, the watchdog.

# --- operations -----------------------------------------------------------------

section reload
mpid=$(prop mcpd.service MainPID)
cp "$CONF" "$T/good.conf"
echo "tenant broken {" >> "$CONF"
check "systemctl reload mcpd refuses a file with an error" \
    eval '! systemctl reload mcpd.service 2> "$L/reload-bad.log"'
systemctl kill -s HUP mcpd.service
check "and mcpd itself, sent SIGHUP, keeps its configuration" \
    within 30 eval 'journalctl -b -u mcpd.service -o cat |
    grep -q "configuration reload failed: keeping the old one"'
mcp list_languages '{}'
check "the old configuration serves on (status $CODE)" \
    eval '[ "$CODE" = 200 ] && [ "$(sc "len(s.get(\"languages\", []))")" -gt 0 ]'
TOKEN2=$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')
tenant_conf "$TOKEN2" > "$CONF"
check "systemctl reload mcpd takes a good file with a second token" \
    systemctl reload mcpd.service
code=$(curl -s -m 60 -o /dev/null -w '%{http_code}' "$URL" \
    -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' \
    -H "Authorization: Bearer $TOKEN2" -d "$INIT")
check "the new token is served, by the same mcpd (status $code)" \
    test "$code" = 200 -a "$(prop mcpd.service MainPID)" = "$mpid"
check "mcp-sandboxd and mcp-auditd reload it too" \
    systemctl reload mcp-sandboxd.service mcp-auditd.service

section kill-sandboxd
mcp sandbox_create '{"name":"keep"}'
KEEP=$(sc 's.get("id", "")')
check "a persistent sandbox \"keep\" ($KEEP)" grep -qE '^[0-9a-f]{32}$' <<< "$KEEP"
echo "$KEEP" > "$STATE/keep"
mcp sandbox_write_file '{"sandbox":"keep","path":"notes/kept.txt","content":"kept across a kill and a reboot"}'
check "with a file in its workspace" eval '[ "$(sc "s.get(\"bytes\")")" = 31 ]'
# A download link, from the socket-activated mcpd under its unit's
# sandboxing: the file comes from sandbox-init as a descriptor.
mcp sandbox_share_file '{"sandbox":"keep","path":"notes/kept.txt"}'
LINK=$(sc 's["files"][0].get("url", "")')
code=$(curl -s -m 60 -o "$T/link.body" -w '%{http_code}' "$LINK")
check "a download link of the installed mcpd serves the file (status $code)" \
    eval '[ "$code" = 200 ] &&
    [ "$(cat "$T/link.body")" = "kept across a kill and a reboot" ]' ||
    diag "$(brief)"
echo "$LINK" > "$STATE/link"
# Runs in flight: two one-shot runs and an exec in the sandbox, each
# answer kept in a directory of its own.
inflight() {	# inflight NAME TOOL ARGS
	(T=$T/$1 && mkdir -p "$T" && MCP_TIMEOUT=300 mcp "$2" "$3" &&
	    echo "$CODE" > "$T/code")
}
inflight run1 run_code '{"language":"sh","code":"echo started; sleep 60"}' &
calls=$!
inflight run2 run_code '{"language":"python","code":"import os; os.system(\"sleep 60\")"}' &
calls="$calls $!"
inflight exec sandbox_exec '{"sandbox":"keep","command":"sleep 60"}' &
calls="$calls $!"
nsleep() {
	ps -eo uid=,comm= | awk -v b=$SANDBOX_UIDS \
	    '$1 >= b && $1 < b + 64 * 65536 && $2 == "sleep"' | wc -l
}
check "three calls are running (sleeping in their sandboxes)" \
    within 120 eval '[ "$(nsleep)" -ge 3 ]'
spid=$(prop mcp-sandboxd.service MainPID)
restarts=$(prop mcp-sandboxd.service NRestarts)
t0=$SECONDS
systemctl kill -s KILL mcp-sandboxd.service
wait $calls
for c in run1 run2 exec; do
	check "the in-flight call $c gets an answer (status $(cat "$T/$c/code" 2>/dev/null), $((SECONDS - t0)) s: $(tr -s ' \n' ' ' < "$T/$c/r.json" 2>/dev/null | cut -c1-160))" \
	    eval '[ "$(cat "$T/$c/code" 2>/dev/null)" = 200 ] &&
	    grep -q "\"id\":1" "$T/$c/r.json"'
done
check "systemd restarts mcp-sandboxd (NRestarts $restarts, then $(prop mcp-sandboxd.service NRestarts))" \
    within 60 eval 'systemctl is-active -q mcp-sandboxd.service &&
    [ "$(prop mcp-sandboxd.service MainPID)" != "$spid" ] &&
    [ "$(prop mcp-sandboxd.service NRestarts)" -gt "$restarts" ]'
check "no sleeping process of the killed runs is left" \
    within 30 eval '[ "$(nsleep)" -eq 0 ]'
check_clean "a SIGKILL of mcp-sandboxd"
mcp sandbox_read_file '{"sandbox":"keep","path":"notes/kept.txt"}'
check "the persistent sandbox and its file survive it ($(brief 120))" \
    grep -q "kept across a kill and a reboot" "$T/r.json"
mcp run_code '{"language":"python","code":"print(6*7)"}'
check "and new runs are served ($(sc 's.get("stdout")' | tr -d '\n'))" \
    test "$(sc 's.get("stdout")')" = 42

section admin
check "mcpctl status: exit 0" eval 'mcpctl status > "$L/status.txt" 2>&1' ||
    diag_file "$L/status.txt"
# Anchored to the last checkpoint the journal holds, as mcpctl(8) says.
cp=$(journalctl -b -u mcp-auditd.service -o cat |
    sed -n 's/.*audit checkpoint size=\([0-9]*\) root=\([0-9a-f]*\).*/\1:\2/p' |
    tail -n 1)
check "mcpctl audit verify -c, the journal's last checkpoint ($cp): exit 0" \
    eval 'mcpctl audit verify -c "$cp" > "$L/verify.txt" 2>&1' ||
    diag_file "$L/verify.txt"
# Kept, as an administrator keeps an anchor, for phase 2 after the reboot.
echo "$cp" > "$STATE/checkpoint"
for u in mcpd.service mcp-sandboxd.service mcp-auditd.service; do
	check "$u has a 30 s watchdog" test "$(prop "$u" WatchdogUSec)" = 30s
	check "the journal holds $u's lines" \
	    eval '[ "$(journalctl -b -u "$u" -o cat | grep -c "ready: ")" -ge 1 ]'
done
check "the journal holds auditd's checkpoints" \
    within 90 eval 'journalctl -b -u mcp-auditd.service -o cat |
    grep -q "audit checkpoint size="'

# The watchdog: a stopped mcpd is killed by systemd and started again.
section watchdog
mpid=$(prop mcpd.service MainPID)
kill -STOP "$mpid"
check "a frozen mcpd is ended by systemd's watchdog" \
    within 90 eval 'journalctl -b -u mcpd.service -o cat |
    grep -q "Watchdog timeout"'
mcp list_languages '{}'
check "and mcpd serves again (status $CODE, pid $(prop mcpd.service MainPID), was $mpid)" \
    test "$CODE" = 200 -a "$(prop mcpd.service MainPID)" != "$mpid"


# Checkpoints shipped off the host through journald, as README "Several
# hosts" shows: systemd-journal-upload sends the journal to a collector's
# systemd-journal-remote, here on the loopback over http (a collector
# elsewhere takes https with certificates).  The audit log, gathered with
# the checkpoints the collector holds, verifies; cut, it is caught.
section collector
mkdir -p /etc/systemd/system/systemd-journal-remote.service.d \
    /etc/systemd/journal-upload.conf.d
cat > /etc/systemd/system/systemd-journal-remote.service.d/loopback.conf <<'EOC'
[Service]
ExecStart=
ExecStart=/usr/lib/systemd/systemd-journal-remote --listen-http=-3 --output=/var/log/journal/remote/
EOC
printf '[Upload]\nURL=http://127.0.0.1:19532\n' \
    > /etc/systemd/journal-upload.conf.d/collector.conf
systemctl daemon-reload
check "systemd-journal-remote on 19532 and systemd-journal-upload start" \
    eval 'systemctl enable --now systemd-journal-remote.socket \
    systemd-journal-upload.service > "$L/collector.txt" 2>&1' ||
    diag_file "$L/collector.txt"
collected() {	# the checkpoint lines the collector holds
	journalctl -D /var/log/journal/remote -o cat \
	    _SYSTEMD_UNIT=mcp-auditd.service 2> /dev/null |
	    grep 'audit checkpoint size='
}
n0=$(collected | wc -l)
mcp run_code '{"language":"python","code":"print(6*7)"}'
# A checkpoint a minute while records come: the run's must arrive.
check "the collector receives mcp-auditd's checkpoints (had $n0)" \
    within 150 eval '[ "$(collected | wc -l)" -gt "$n0" ]' ||
    diag_file "$L/collector.txt"
G=$T/gathered/guest
mkdir -p "$G"
sqlite3 /var/lib/mcpd/audit/audit.db ".backup '$G/audit.db'"
cp /var/lib/mcpd/audit/audit.pub* "$G/"
collected > "$G/checkpoints"
mcpctl audit verify "$G" > "$L/gathered.txt" 2>&1
check "the log gathered with the collected checkpoints: whole and anchored ($(tail -n 1 "$L/gathered.txt"))" \
    grep -q "^host guest (.*): whole and anchored$" "$L/gathered.txt" ||
    diag_file "$L/gathered.txt"
last=$(sed -n 's/.*audit checkpoint size=\([0-9]*\) .*/\1/p' "$G/checkpoints" |
    sort -n | tail -n 1)
sqlite3 "$G/audit.db" "DELETE FROM records WHERE seq > $((last - 2));
    DELETE FROM checkpoints WHERE size > $((last - 2))"
mcpctl audit verify "$G" > "$L/gathered-cut.txt" 2>&1
rc=$?
check "cut back with its own checkpoints, it is caught against the collected ones (exit $rc)" \
    eval '[ "$rc" = 1 ] && grep -q "^host guest (.*): TAMPERED" "$L/gathered-cut.txt" &&
    grep -q "truncated" "$L/gathered-cut.txt"' ||
    diag_file "$L/gathered-cut.txt"
