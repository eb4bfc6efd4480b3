"""One worker of a real gloo job whose store is an agent store at
MASTER_ADDR:MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE=True, as torchrun and
cgrun set it): init_process_group('gloo'), all_reduce, all_gather,
broadcast, barrier, with the right results asserted.

usage: RANK=.. WORLD_SIZE=.. MASTER_ADDR=.. MASTER_PORT=.. python gloo.py
"""
import datetime
import os
import sys

import torch
import torch.distributed as dist


def no_libuv():
    """Debian builds torch 2.x without libuv, but 2.6's agent-store path
    creates its TCPStore client with the default use_libuv=True, which that
    build refuses.  Make the default False (what torch26.sh's USE_LIBUV=0
    does for the other paths)."""
    if "use_libuv" not in (dist.TCPStore.__init__.__doc__ or ""):
        return
    import torch.distributed.rendezvous as rdzv_mod  # noqa: F401
    mod = sys.modules["torch.distributed.rendezvous"]
    orig = mod.TCPStore

    def tcpstore(*args, **kwargs):
        kwargs.setdefault("use_libuv", False)
        return orig(*args, **kwargs)

    mod.TCPStore = tcpstore


def main():
    no_libuv()
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
    assert dist.get_rank() == rank and dist.get_world_size() == world
    t = torch.tensor([rank + 1.0, 10.0 * rank, 1.0])
    dist.all_reduce(t)
    want = [world * (world + 1) / 2, 10.0 * world * (world - 1) / 2, float(world)]
    got = t.tolist()
    if got != want:
        print("FAIL rank %d: all_reduce %r, want %r" % (rank, got, want))
        sys.exit(1)
    parts = [torch.zeros(2) for _ in range(world)]
    dist.all_gather(parts, torch.tensor([float(rank), rank * rank + 0.5]))
    if [p.tolist() for p in parts] != [[float(r), r * r + 0.5] for r in range(world)]:
        print("FAIL rank %d: all_gather %r" % (rank, parts))
        sys.exit(1)
    b = torch.tensor([float(rank)])
    dist.broadcast(b, src=world - 1)
    if b.item() != world - 1:
        print("FAIL rank %d: broadcast %r" % (rank, b))
        sys.exit(1)
    dist.barrier()
    dist.destroy_process_group()
    print("rank %d ok: all_reduce %s torch %s" % (rank, got, torch.__version__))


if __name__ == "__main__":
    main()
