# tests/hostile/lib.sh: what the t_hostile_*.sh tests share (sourced
# after tests/lib.sh, whose alive and poll_for they use).
# pids_dead: no pid listed in ./pids is alive.
pids_dead() {
	for p in $(cat pids 2>/dev/null); do alive "$p" && return 1; done
	return 0
}
# on_fail: the agent's last lines (./err) after a failure.
on_fail() { [ -f err ] && sed 's/^/  agent: /' err | tail -20; }
# kill_listed: SIGKILL the workers and helpers whose pids the test wrote
# to ./pids and ./helpers: after a kill -9 of cgrun nothing else finds
# them (each worker leads a process group of its own).
kill_listed() { cat "$T/pids" "$T/helpers" 2>/dev/null | xargs -r kill -9 2>/dev/null; }
at_exit kill_listed
