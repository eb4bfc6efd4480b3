#!/bin/sh
# An unmodified PyTorch DDP script (gloo, env:// rendezvous through the
# agent's store, TORCHELASTIC_USE_AGENT_STORE=True) under cgrun with
# Debian's torch 1.13: a collective works, a crash restarts every worker
# with TORCHELASTIC_RESTART_COUNT + 1, they resume from their checkpoint
# and the job succeeds.
. "${CGRUN_TOP:-$(dirname "$0")/../..}/tests/lib.sh"
PY=/usr/bin/python3
$PY -c 'import torch.distributed' 2>/dev/null || skip "no torch in $PY (Debian python3-torch)"
cd "$T" || exit 1

cat > ddp.py <<'P'
import os, sys, torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
attempt = int(os.environ["TORCHELASTIC_RESTART_COUNT"])
ckpt = os.path.join(os.environ["CKPT_DIR"], "ckpt.pt")
torch.manual_seed(0)
model = DDP(torch.nn.Linear(4, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
step = 0
if os.path.exists(ckpt):
    state = torch.load(ckpt)
    model.module.load_state_dict(state["model"])
    step = state["step"]
print(f"start attempt={attempt} step={step}", flush=True)
while step < 6:
    x = torch.full((8, 4), float(rank + 1))
    loss = model(x).pow(2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
    step += 1
    if rank == 0:
        torch.save({"model": model.module.state_dict(), "step": step}, ckpt + ".tmp")
        os.replace(ckpt + ".tmp", ckpt)
    dist.barrier()
    if attempt == 0 and step == 3 and rank == 1:
        print("crash at step 3", flush=True)
        os._exit(5)
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t)
print(f"done attempt={attempt} rank={rank}/{world} step={step} sum={t.item()}", flush=True)
dist.destroy_process_group()
P
CKPT_DIR=$T PYTHON_EXEC=$PY timeout 120 "$CGRUN_BIN" --log-prefix=rank --nproc-per-node=2 --max-restarts=1 \
    ddp.py > out 2> err || fail "DDP job failed: $(tail -20 err)"
cat out
grep -qx '\[rank1\]:crash at step 3' out || fail "no crash on attempt 0"
for r in 0 1; do
	grep -qx "\[rank$r\]:start attempt=1 step=3" out || fail "rank $r did not resume from step 3"
	grep -qx "\[rank$r\]:done attempt=1 rank=$r/2 step=6 sum=3.0" out ||
		fail "rank $r did not finish on attempt 1"
done
echo ok
