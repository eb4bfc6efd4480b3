#!/bin/sh
# A real Prometheus (Debian's, on loopback, its own data directory)
# scrapes cgrun-rdzvd's /metrics and both agents' --metrics-port during a
# real 2-node job, and its HTTP API answers: the job and its rounds, the
# crash's restart (the daemon's count and each agent's), the root cause's
# exit code, workers up, and the store operations a TCPStore client made
# on the daemon.  promtool check metrics is clean on the daemon's page.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$CGRUN_TOP/tests/interop/lib.sh"
. "$CGRUN_TOP/tests/multinode/lib.sh"
. "$CGRUN_TOP/tests/observe/lib.sh"
need prometheus prometheus
need promtool prometheus

start_rdzvd --http-port=0
i=0
until hline=$(grep '^http listening on ' "$T/rdzvd.out"); do
	[ $i -ge 100 ] && fail "no http line from cgrun-rdzvd"
	sleep 0.05; i=$((i + 1))
done
daemon=127.0.0.1:${hline##*:}

crash_worker "$T/w.sh"
common="--nnodes=2 --nproc-per-node=1 --rdzv-id=prom --max-restarts=1 --rdzv-conf=$FAST_CONF --metrics-port=0 -v --no-python $T/w.sh"
agent a 127.0.0.2 $common
agent b 127.0.0.3 $common
ports=
for n in a b; do
	i=0
	until p=$(sed -n 's/^cgrun: metrics listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$T/$n.log") && [ -n "$p" ]; do
		[ $i -ge 200 ] && { stuck_report; fail "agent $n: no metrics port"; }
		sleep 0.05; i=$((i + 1))
	done
	ports="$ports '127.0.0.1:$p',"
done

cat >"$T/prometheus.yml" <<EOF
global:
  scrape_interval: 500ms
  scrape_timeout: 400ms
scrape_configs:
  - job_name: cgrun-rdzvd
    static_configs:
      - targets: ['$daemon']
  - job_name: cgrun
    static_configs:
      - targets: [${ports%,}]
EOF
promtool check config "$T/prometheus.yml" >/dev/null || fail "promtool check config"
start_prometheus "$T/prometheus.yml"

# Store operations on the daemon: a torch 1.13-dialect client's SET, GET, ADD.
$TOOL store 127.0.0.1 "$RDZVD_PORT" 5 || fail "TCPStore client on cgrun-rdzvd"

prom_until 'cgrun_rdzvd_jobs_created_total' 'r and v() >= 1' 30
prom_until 'cgrun_rdzvd_jobs{state="RUNNING"}' 'r and v() == 1' 30
prom_until 'cgrun_rdzvd_rounds_total' 'r and v() == 1' 30
prom_until 'sum(cgrun_workers_up{job="cgrun"})' 'r and v() == 2' 30
prom_until 'cgrun_rdzvd_requests_total{op="set"}' 'r and v() >= 1' 30
prom_until 'cgrun_rdzvd_requests_total{op="add"}' 'r and v() >= 1' 30
prom_until 'sum(cgrun_rdzvd_connections_accepted_total)' 'r and v() >= 1' 30

# The crash: a restart of the job, on the daemon and on both agents.
touch "$T/go"
prom_until 'cgrun_rdzvd_restarts_total' 'r and v() == 1' 30
prom_until 'cgrun_rdzvd_rounds_total' 'r and v() == 2' 30
prom_until 'cgrun_restarts_total{job="cgrun"}' 'len(r) == 2 and v(0) == 1 and v(1) == 1' 30
prom_until 'cgrun_restarts_left{job="cgrun"}' 'len(r) == 2 and v(0) == 0 and v(1) == 0' 30
prom_until 'max(cgrun_last_failure_exit_code{job="cgrun"})' 'r and v() == 3' 30
prom_until 'sum(cgrun_workers_up{job="cgrun"})' 'r and v() == 2' 30
scrape "http://$daemon/metrics" "$T/daemon.metrics"
promtool_clean "$T/daemon.metrics" "cgrun-rdzvd's /metrics during a job"

touch "$T/end"
expect_exit a 60 0
expect_exit b 60 0
prom_until 'cgrun_rdzvd_jobs{state="RUNNING"}' 'r and v() == 0' 30
echo "ok: prometheus scraped the daemon and both agents through a crash and a restart"
