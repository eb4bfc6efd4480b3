#!/bin/sh
# Job control on a terminal (issue 17, item 1), in an interactive bash in
# tmux: the workers run in sessions of their own, so the terminal's
# signals reach cgrun only, and cgrun passes them on.  A window resize
# reaches every worker's pseudo-terminal (SIGWINCH, the new width less the
# "[rankN]:" prefix); Ctrl-Z stops cgrun and every worker (the shell
# reports the job stopped), fg continues them all, Ctrl-C ends the job
# with status 130.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
command -v tmux >/dev/null || skip "tmux is not installed"
command -v bash >/dev/null || skip "bash is not installed"
# The server's socket in $T (tmux leaves it behind in /tmp/tmux-UID).
export TMUX_TMPDIR=$T
S="tmux -L cgrun-jobctl-$$ -f /dev/null"
at_exit '$S kill-server 2>/dev/null'
cd "$T" || exit 1
on_fail() { $S capture-pane -p 2>/dev/null | grep -v '^$' | tail -n 8; }
cat > loop.sh <<'W'
#!/bin/sh
trap 'echo "$(stty size < /dev/tty)" > winch.$LOCAL_RANK' WINCH
echo $$ > pid.$LOCAL_RANK
i=0
while [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
W
chmod +x loop.sh
# state PID: the first letter of its ps state (T: stopped).
state() { ps -o stat= -p "$1" | cut -c1; }
stopped() { [ "$(state "$1")" = T ]; }

$S new-session -d -x 100 -y 30 "env PS1='$ ' bash --norc --noprofile -i" || fail "tmux did not start"
$S send-keys "cd '$T' && '$CGRUN_BIN' --log-prefix=rank --nproc-per-node=2 ./loop.sh" Enter
wait_for 10 "workers started" eval '[ -s pid.0 ] && [ -s pid.1 ]'
w0=$(cat pid.0) w1=$(cat pid.1)
agent=$(ps -o ppid= -p "$w0" | tr -d ' ')
[ "$(ps -o comm= -p "$agent")" = cgrun ] || fail "parent of worker 0 is not cgrun"

$S resize-window -x 80 -y 25
wait_for 10 "workers see 25x72" eval '[ "$(cat winch.0 2>/dev/null)" = "25 72" ] && [ "$(cat winch.1 2>/dev/null)" = "25 72" ]'
echo "window resize: every worker's pty resized (25 rows, 80 - 8 columns)"

$S send-keys C-z
wait_for 10 "cgrun and workers stopped" eval 'stopped "$agent" && stopped "$w0" && stopped "$w1"'
wait_for 10 "the shell reports the job stopped" eval '$S capture-pane -p | grep -q Stopped'
$S send-keys "fg" Enter
wait_for 10 "workers continued" eval '! stopped "$agent" && ! stopped "$w0" && ! stopped "$w1"'
echo "Ctrl-Z stops cgrun and its workers, fg continues them"

$S send-keys C-c
wait_for 10 "cgrun ended" eval '! kill -0 "$agent" 2>/dev/null'
$S send-keys "echo rc=\$? > rc" Enter
wait_for 10 "the shell got the status" eval '[ -s rc ]'
[ "$(cat rc)" = rc=130 ] || fail "Ctrl-C: $(cat rc)"
kill -0 "$w0" 2>/dev/null && fail "worker 0 survived Ctrl-C"
echo "Ctrl-C ends the job: 130"
