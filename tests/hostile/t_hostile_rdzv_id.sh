#!/bin/sh
# A rendezvous id in use (issue 18 item 1): two runs that share one
# --rdzv-id on one cgrun-rdzvd.
# 1. The second asks for another shape (--nnodes, --max-restarts): it is
#    refused at once, exit 75, with a line naming the job that holds the
#    id and telling to pick another; the first job is not disturbed.
# 2. The second has the same shape: it waits as a spare (a late node of a
#    full job looks the same), says so, and when the first job finishes it
#    exits 75, not 0: it never ran a worker.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
. "$TOP/tests/interop/lib.sh"
. "$TOP/tests/multinode/lib.sh"
start_rdzvd
cat > "$T/w.sh" <<'W'
#!/bin/sh
# a worker: note that it ran, then wait for $T/go
echo "$RANK" > "$OUT/ran.$JOB"
while [ ! -e "$OUT/go" ]; do sleep 0.05; done
W
chmod +x "$T/w.sh"
export OUT="$T"
run="--nproc-per-node=1 --rdzv-id=shared --rdzv-conf=$FAST_CONF --no-python $T/w.sh"

# 1. Another shape: refused at once.
JOB=first agent first 127.0.0.2 --nnodes=1 --max-restarts=0 $run
wait_count "$T/ran.first" 1 30 "the first job's worker"
JOB=second agent second 127.0.0.3 --nnodes=2 --max-restarts=0 $run
expect_exit second 15 75
[ ! -e "$T/ran.second" ] || fail "the refused job ran a worker"
grep -q "rendezvous id shared is in use by another job (nnodes 1:1" "$T/second.log" &&
	grep -q "own --rdzv-id" "$T/second.log" ||
	{ cat "$T/second.log"; fail "the refusal does not name the job and the fix:"; }
JOB=third agent third 127.0.0.3 --nnodes=1 --max-restarts=3 $run
expect_exit third 15 75
kill -0 "$(agent_pid first)" || { cat "$T/first.log"; fail "the first job was disturbed"; }
echo "another shape: refused with 75, the holder named"

# 2. The same shape: a spare that never runs exits 75 when the job ends.
JOB=spare agent spare 127.0.0.3 --nnodes=1 --max-restarts=0 $run
i=0
until grep -q "waits as a spare" "$T/spare.log"; do
	[ $i -ge 200 ] && { stuck_report; fail "the newcomer did not say it waits as a spare"; }
	sleep 0.05; i=$((i + 1))
done
touch "$T/go"
expect_exit first 30 0
expect_exit spare 30 75
[ ! -e "$T/ran.spare" ] || fail "the spare ran a worker"
grep -q "finished without this node ever running a worker" "$T/spare.log" ||
	{ cat "$T/spare.log"; fail "the spare's exit is not explained:"; }
echo "same shape: the spare exits 75, never 0"
echo ok
