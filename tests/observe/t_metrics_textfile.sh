#!/bin/sh
# The agent's metrics as sites collect them: Debian's real
# prometheus-node-exporter (textfile collector only) reads the file cgrun
# keeps with --metrics-file (a $run_id template) while a standalone job
# runs and after it ended, and the same job serves them on --metrics-port;
# promtool check metrics is clean on the file, the port and the
# exporter's page.  During the job: state running, 2 workers up, each
# rank's progress (--hang-timeout); after a crash and a restart: 2
# attempts, 1 restart spent, 0 left, the crash's exit code, exit status 0.
# The file is rewritten atomically (no temporary left, mode 0644); an
# unwritable file, a FIFO or a link in its place, a port in use or a
# host that does not resolve is refused at once (exit 73).
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$CGRUN_TOP/tests/interop/lib.sh"
. "$CGRUN_TOP/tests/observe/lib.sh"
need prometheus-node-exporter prometheus-node-exporter
need promtool prometheus

mkdir -p "$T/textfile"
start_node_exporter "$T/textfile"

crash_worker "$T/w.sh"
mport=$(free_port)
"$CGRUN" --standalone --nproc-per-node=2 --max-restarts=1 --hang-timeout=60 \
	--metrics-file="$T/textfile/cgrun-\$run_id.prom" --metrics-port="$mport" \
	--event-log="$T/ev.jsonl" --no-python "$T/w.sh" >"$T/job.log" 2>&1 </dev/null &
job=$!
track $job
i=0
until grep -q '"event":"attempt_start"' "$T/ev.jsonl" 2>/dev/null; do
	[ $i -ge 300 ] && { cat "$T/job.log"; fail "no attempt started within 30 s"; }
	sleep 0.1; i=$((i + 1))
done
run=$("$PY113" -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())["run_id"])' "$T/ev.jsonl")
file=$T/textfile/cgrun-$run.prom
[ -f "$file" ] || { ls -la "$T/textfile"; fail "no $file"; }
l="run_id=\"$run\""
# the file follows the record on the agent's next loop turn
i=0
until grep -qxF "cgrun_workers_up{$l} 2" "$file"; do
	[ $i -ge 100 ] && { cat "$file"; fail "the file never said 2 workers up"; }
	sleep 0.05; i=$((i + 1))
done

# While the first attempt runs: node_exporter serves what the file says.
scrape "$NE_URL" "$T/ne1"
has "$T/ne1" "cgrun_workers_up{$l} 2" "cgrun_state{$l,state=\"running\"} 1" \
	"cgrun_attempts_total{$l} 1" "cgrun_restarts_left{$l} 1" \
	"node_textfile_scrape_error 0"
# (node_exporter sorts the labels and writes values its own way)
grep -q "^cgrun_rank_idle_seconds{local_rank=\"1\",rank=\"1\",$l} [0-9.e+-]*$" "$T/ne1" ||
	{ grep rank "$T/ne1"; fail "node_exporter: no progress of rank 1"; }
promtool_clean "$file" "the metrics file"
promtool_clean "$T/ne1" "node_exporter's page with the file"
scrape "http://127.0.0.1:$mport/metrics" "$T/port1"
has "$T/port1" "cgrun_workers_up{$l} 2" "cgrun_state{$l,state=\"running\"} 1"
promtool_clean "$T/port1" "--metrics-port's /metrics"
echo "ok: while it runs: 2 workers up, state running, progress per rank"

# The crash, the restart, the end.
touch "$T/go"
i=0
until [ "$(grep -c '"event":"attempt_start"' "$T/ev.jsonl")" -ge 2 ]; do
	[ $i -ge 300 ] && { cat "$T/job.log"; fail "no second attempt within 30 s"; }
	sleep 0.1; i=$((i + 1))
done
touch "$T/end"
wait $job
rc=$?
[ $rc -eq 0 ] || { cat "$T/job.log"; fail "cgrun exited $rc"; }
scrape "$NE_URL" "$T/ne2"
has "$T/ne2" "cgrun_attempts_total{$l} 2" "cgrun_restarts_total{$l} 1" \
	"cgrun_restarts_left{$l} 0" "cgrun_last_failure_exit_code{$l} 3" \
	"cgrun_last_failure_rank{$l} 1" "cgrun_worker_failures_total{$l} 1" \
	"cgrun_worker_exits_total{$l} 4" "cgrun_workers_up{$l} 0" \
	"cgrun_exit_status{$l} 0" "cgrun_state{$l,state=\"exit\"} 1" \
	"cgrun_rendezvous_duration_seconds_count{$l} 2" \
	"cgrun_launch_duration_seconds_count{$l} 2" "node_textfile_scrape_error 0"
promtool_clean "$T/ne2" "node_exporter's page after the job"
n=$(find "$T/textfile" -name '.*' ! -name . | wc -l)
[ "$n" -eq 0 ] || { ls -la "$T/textfile"; fail "$n temporary files left"; }
[ "$(stat -c %a "$file")" = 644 ] || fail "$file mode $(stat -c %a "$file")"
echo "ok: after the job: 2 attempts, 1 restart, exit code 3 then status 0; no temporary left"

# Refused at once: a file that cannot be written, a port in use.
"$CGRUN" --standalone --metrics-file="$T/none/x.prom" --no-python /bin/true >"$T/e1" 2>&1
rc=$?
[ $rc -eq 73 ] && grep -q "metrics-file $T/none/x.prom: cannot create a file beside it: No such file" "$T/e1" ||
	{ cat "$T/e1"; fail "unwritable --metrics-file: exit $rc"; }
# a FIFO and a symbolic link are refused, and left as they were (a rename
# over them would replace them with a file; over /dev/null too)
mkfifo "$T/fifo.prom"
ln -s "$T/textfile/target.prom" "$T/link.prom"
for p in fifo link; do
	"$CGRUN" --standalone --metrics-file="$T/$p.prom" --no-python /bin/true >"$T/e0" 2>&1
	rc=$?
	[ $rc -eq 73 ] && grep -q "metrics-file $T/$p.prom: is a .*, not a regular file" "$T/e0" ||
		{ cat "$T/e0"; fail "--metrics-file on a $p: exit $rc"; }
done
[ -p "$T/fifo.prom" ] && [ -L "$T/link.prom" ] || { ls -la "$T"; fail "the FIFO or the link was replaced"; }
nport=${NE_URL#http://127.0.0.1:}
"$CGRUN" --standalone --metrics-port="${nport%/metrics}" --no-python /bin/true >"$T/e2" 2>&1
rc=$?
[ $rc -eq 73 ] && grep -q "metrics-port: http 127.0.0.1:${nport%/metrics}: cannot listen" "$T/e2" ||
	{ cat "$T/e2"; fail "--metrics-port in use: exit $rc"; }
"$CGRUN" --standalone --metrics-port=host: --no-python /bin/true >"$T/e3" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q 'metrics-port: expected PORT or HOST:PORT' "$T/e3" ||
	{ cat "$T/e3"; fail "--metrics-port=host: exit $rc"; }
# a host that does not resolve (RFC 6761's .invalid): said so, nothing else
"$CGRUN" --standalone --metrics-port=nosuch.invalid:0 --no-python /bin/true >"$T/e4" 2>&1
rc=$?
[ $rc -eq 73 ] && [ "$(wc -l <"$T/e4")" -eq 1 ] &&
	grep -q 'metrics-port: http nosuch.invalid:0: cannot resolve nosuch.invalid: ' "$T/e4" ||
	{ cat "$T/e4"; fail "--metrics-port=nosuch.invalid:0: exit $rc"; }
echo "ok: unwritable file (73), a FIFO or a link (73, left alone), port in use (73), malformed port (2), a host that does not resolve (73)"
