# tests/hostile/lib.sh: what the t_hostile_*.sh tests share (sourced).
# now_ms: milliseconds since the epoch.
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# wait_for SECONDS COMMAND...: poll until COMMAND succeeds or time runs out.
wait_for() {
	limit=$(( $(now_ms) + $1 * 1000 )); shift
	until "$@"; do
		[ "$(now_ms)" -lt $limit ] || return 1
		sleep 0.02
	done
}
# alive PID: running, not a zombie (a subreaper reaps on its own schedule).
alive() { [ -r "/proc/$1/status" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
# pids_dead: no pid listed in ./pids is alive.
pids_dead() {
	for p in $(cat pids 2>/dev/null); do alive "$p" && return 1; done
	return 0
}
# fail MESSAGE: print it and the agent's last lines (./err), fail the test.
fail() { echo "FAIL: $*"; [ -f err ] && sed 's/^/  agent: /' err | tail -20; exit 1; }
