"""One worker of the job-separation test: rank 0 publishes its job's run id
in the workers' store (MASTER_ADDR:MASTER_PORT); every rank reads it back
and must find its own job's id, never the other job's; then all ranks
meet through a counter so nobody leaves before the others have read."""
import datetime
import os
import sys
import time

import torch.distributed as dist

run = os.environ["TORCHELASTIC_RUN_ID"]
rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
s = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]),
                  is_master=False, timeout=datetime.timedelta(seconds=30))
if rank == 0:
    s.set("owner", run)
owner = s.get("owner").decode()
if owner != run:
    print("FAIL rank %d of %s: owner key is %s" % (rank, run, owner))
    sys.exit(1)
n = s.add("arrived", 1)
deadline = time.time() + 30
while s.add("arrived", 0) < world:
    if time.time() > deadline:
        print("FAIL rank %d of %s: only %d arrived" % (rank, run, s.add("arrived", 0)))
        sys.exit(1)
    time.sleep(0.05)
print("keys ok rank %d job %s arrived %d" % (rank, run, s.add("arrived", 0)))
