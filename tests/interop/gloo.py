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
    mine = torch.tensor([float(rank), rank * rank + 0.5])
    dist.all_gather(parts, mine)
    if [p.tolist() for p in parts] != [[float(r), r * r + 0.5] for r in range(world)]:
        print("FAIL rank %d: all_gather %r" % (rank, parts))
        sys.exit(1)
    b = torch.tensor([float(rank)])
    dist.broadcast(b, src=world - 1)
    if b.item() != world - 1:
        print("FAIL rank %d: broadcast %r" % (rank, b))
        sys.exit(1)
    dist.barrier()
    # Every tensor a collective used stays alive until the group is
    # destroyed (keep).  Were one a temporary (all_gather's input was),
    # its Python object would end up owned by the C++ tensor that gloo's
    # worker thread still holds for a moment after the collective
    # completes; that thread then needs the GIL to drop it, while
    # destroy_process_group() joins the thread in ~ProcessGroupGloo
    # holding the GIL: a deadlock whenever the load keeps the worker
    # thread from running before destroy starts.  Seen with torch 2.6 at
    # load 10-40 (2 hangs in 32 runs): gdb showed the main thread in
    # std::thread::join from c10d::ProcessGroupGloo::~ProcessGroupGloo,
    # the thread it joins in pthread_cond_timedwait called from the
    # interpreter (faulthandler: a C++ thread with a Python thread state
    # and "no Python frame": waiting for the GIL), the gloo loop thread
    # idle in epoll_wait, nothing waiting on the store.  torch's bug
    # (pytorch/pytorch#56297; the destructor releases the GIL since
    # pytorch/pytorch#154976, after 2.6); a program on 2.6 must keep them.
    keep = (t, parts, mine, b)
    dist.destroy_process_group()
    del keep
    print("rank %d ok: all_reduce %s torch %s" % (rank, got, torch.__version__))


if __name__ == "__main__":
    main()
