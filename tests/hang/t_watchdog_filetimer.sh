#!/bin/sh
# torch's own FileTimerClient under cgrun (TORCHELASTIC_ENABLE_FILE_TIMER=1):
# every step of a 2-rank job runs inside expires(after=2); rank 1 blocks
# at step 3 of the first attempt.  cgrun catches the expiry (a hang of
# rank 1, source=filetimer), sends the request's signal (SIGKILL) to the
# requesting pid (after the stacks were taken: see HANG DIAGNOSIS), stops
# the rest, restarts once, and the job completes.
# With torch 1.13 (Debian) at a FIFO path the user gave (which must be
# gone after the job), and with torch 2.6 (tests/torch26.sh, whose python
# is a grandchild of cgrun: accepted through the worker's process group) at
# cgrun's private path (without torch 2.6, that part is left out and the
# test ends as a skip).
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
top=$TOP
PY=/usr/bin/python3
$PY -c 'import torch.distributed.elastic.timer' 2>/dev/null ||
	skip "no torch in $PY (Debian python3-torch)"
cd "$T" || exit 1
on_fail() { tail -n 40 "$T"/*.out; }

cat >ft.py <<'EOF'
import os, time
from torch.distributed.elastic.timer import FileTimerClient, configure, expires
path = os.environ["TORCHELASTIC_TIMER_FILE"]
configure(FileTimerClient(path))
rank = int(os.environ["RANK"])
attempt = int(os.environ["TORCHELASTIC_RESTART_COUNT"])
print(f"rank {rank} attempt {attempt} timer file {path}", flush=True)
for step in range(6):
    with expires(after=2):
        if attempt == 0 and rank == 1 and step == 3:
            print("rank 1 blocks", flush=True)
            time.sleep(1000)
        time.sleep(0.1)
print(f"rank {rank} attempt {attempt} done", flush=True)
EOF

# check NAME: the expiry was caught in rank 1 and the job completed.
check() {
	grep -q "rank hung rank=1 local_rank=1 idle=2s timeout=2s source=filetimer" "$1.out" ||
		fail "$1: no FileTimer hang line"
	grep -q "stopping worker rank=1 local_rank=1 pid=[0-9]* sig=KILL reason=filetimer" "$1.out" ||
		fail "$1: no kill"
	# SIGKILL, the request's signal, unless the diagnosis' SIGABRT (the
	# fault handler's stack dump, without py-spy) ended it first
	grep -Eq "worker exited rank=1 local_rank=1 pid=.* killed by signal (9|6) " "$1.out" ||
		fail "$1: rank 1 not killed by the request's (or the stack dump's) signal"
	for r in 0 1; do
		grep -q "rank $r attempt 1 done" "$1.out" || fail "$1: rank $r did not complete"
	done
}

TORCHELASTIC_ENABLE_FILE_TIMER=1 TORCHELASTIC_TIMER_FILE=$T/timer.fifo \
    timeout 120 "$CGRUN_BIN" -v --nproc-per-node=2 --max-restarts=1 \
    --no-python "$PY" ft.py >t113.out 2>&1 || fail "torch 1.13: exit $?"
check t113
grep -q "timer file $T/timer.fifo" t113.out || fail "workers did not get the user's path"
[ -e "$T/timer.fifo" ] && fail "the FIFO was left behind"
echo "ok: torch 1.13 FileTimerClient: an expired block is a hang; restarted, completed"

if why=$(sh "$top/tests/torch26.sh" --ensure 2>&1); then
	TORCHELASTIC_ENABLE_FILE_TIMER=1 timeout 180 "$CGRUN_BIN" -v --nproc-per-node=2 \
	    --max-restarts=1 --log-dir="$T/logs" --no-python sh "$top/tests/torch26.sh" ft.py \
	    >t26.out 2>&1 || fail "torch 2.6: exit $?"
	check t26
	grep -q "timer file $T/logs/timer.fifo" t26.out || fail "workers did not get cgrun's private path"
	[ -e "$T/logs/timer.fifo" ] && fail "the private FIFO was left behind"
	echo "ok: torch 2.6 FileTimerClient (python a grandchild of cgrun): the same"
else
	skip_later "torch 2.6 part left out: $(echo "$why" | tail -n 1)"
fi
exit 0
