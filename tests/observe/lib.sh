# Helpers of the operator-facing scripts (tests/observe/t_metrics_*.sh):
# Debian's real prometheus, prometheus-node-exporter and promtool on
# loopback ports of their own, stopped at exit (tracked).  Sourced after
# tests/lib.sh and tests/interop/lib.sh (T, track, fail, skip, PY113).  Every wait has a deadline and says what it waited for.

CGRUN=${CGRUN_BIN:-$BUILD_DIR/cgrun}
TOOL="$PY113 $TOP/tests/daemon/service_tool.py"


# need PROGRAM PACKAGE: skip unless PROGRAM is installed.
need() {
	command -v "$1" >/dev/null 2>&1 || skip "$1 not installed (apt-get install $2)"
}

# wait_http URL SECS WHAT PID: until URL answers 200; fail if PID died.
wait_http() {
	i=0
	until [ "$($TOOL http "$1" 2>/dev/null | head -n 1)" = 200 ]; do
		kill -0 "$4" 2>/dev/null || fail "$3 exited before answering $1"
		[ "$i" -ge $(($2 * 10)) ] && fail "$3 did not answer $1 within $2 s"
		sleep 0.1
		i=$((i + 1))
	done
}

# scrape URL OUT: the body of GET URL (200 required) in OUT.
scrape() {
	$TOOL http "$1" >"$2.raw" || fail "GET $1 failed"
	[ "$(head -n 1 "$2.raw")" = 200 ] || fail "GET $1: $(head -n 1 "$2.raw")"
	sed '1,2d' "$2.raw" >"$2"
}

# promtool_clean FILE WHAT: promtool check metrics finds nothing in FILE.
promtool_clean() {
	out=$(promtool check metrics <"$1" 2>&1) || { echo "$out"; fail "promtool: $2"; }
	[ -z "$out" ] || { echo "$out"; fail "promtool has remarks on $2"; }
	echo "ok: promtool check metrics: $2 clean ($(grep -c '^# TYPE' "$1") families)"
}

# has FILE LINE...: each LINE (a whole sample line) is in FILE.
has() {
	has_f=$1
	shift
	for has_l in "$@"; do
		grep -qxF "$has_l" "$has_f" ||
			{ grep '^cgrun' "$has_f" | head -n 60; fail "$has_f lacks: $has_l"; }
	done
}

# start_node_exporter DIR: its textfile collector on DIR, nothing else;
# sets NE_PID and NE_URL.
start_node_exporter() {
	port=$(free_port)
	prometheus-node-exporter --web.listen-address="127.0.0.1:$port" \
		--collector.disable-defaults --collector.textfile \
		--collector.textfile.directory="$1" >"$T/node_exporter.log" 2>&1 &
	NE_PID=$!
	track $NE_PID
	NE_URL=http://127.0.0.1:$port/metrics
	wait_http "$NE_URL" 20 prometheus-node-exporter "$NE_PID"
}

# start_prometheus CONFIG: a Prometheus with its own data directory; sets
# PROM_PID and PROM_URL.
start_prometheus() {
	port=$(free_port)
	prometheus --config.file="$1" --storage.tsdb.path="$T/prom-data" \
		--web.listen-address="127.0.0.1:$port" >"$T/prometheus.log" 2>&1 &
	PROM_PID=$!
	track $PROM_PID
	PROM_URL=http://127.0.0.1:$port
	wait_http "$PROM_URL/-/ready" 30 prometheus "$PROM_PID"
}

# prom_until QUERY EXPR SECS: poll Prometheus' HTTP API with the instant
# QUERY until the Python EXPR over its result list r (each {"metric":
# {...}, "value": [t, "v"]}) holds; prints the last result.
prom_until() {
	"$PY113" - "$PROM_URL" "$1" "$2" "$3" <<'PY' || exit 1
import json, sys, time, urllib.parse, urllib.request
url, query, expr, secs = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
end = time.monotonic() + secs
while True:
    q = urllib.parse.urlencode({"query": query})
    body = json.load(urllib.request.urlopen("%s/api/v1/query?%s" % (url, q), timeout=10))
    assert body["status"] == "success", body
    r = body["data"]["result"]
    if eval(expr, {"r": r, "v": lambda i=0: float(r[i]["value"][1])}):
        print("ok: prometheus: %s -> %s" % (query, [(x["metric"], x["value"][1]) for x in r]))
        break
    if time.monotonic() > end:
        print("FAIL: prometheus: %s: %s never held in %g s; last: %r" % (query, expr, secs, r))
        sys.exit(1)
    time.sleep(0.2)
PY
}

# crash_worker FILE: a worker script.  Attempt 0: rank 1 exits 3 once
# $T/go exists, the others wait until stopped; attempt 1: every rank waits
# for $T/end, then exits 0.
crash_worker() {
	cat >"$1" <<EOS
#!/bin/sh
if [ "\$TORCHELASTIC_RESTART_COUNT" = 0 ]; then
	while [ ! -f "$T/go" ]; do sleep 0.05; done
	[ "\$RANK" = 1 ] && exit 3
	exec sleep 60
fi
while [ ! -f "$T/end" ]; do sleep 0.05; done
exit 0
EOS
	chmod +x "$1"
}
