# Loaded (PYTHONPATH) by the torchrun 2.6 agents of bench/rdzv.sh: Debian's
# torch 2.6 has no libuv, yet its c10d rendezvous asks TCPStore for libuv.
# Default use_libuv to False wherever the rendezvous code makes a store.
import sys

import torch.distributed as dist
import torch.distributed.elastic.rendezvous.c10d_rendezvous_backend  # noqa: F401
import torch.distributed.rendezvous  # noqa: F401

_orig = dist.TCPStore


def _store(*args, **kwargs):
    kwargs.setdefault("use_libuv", False)
    return _orig(*args, **kwargs)


dist.TCPStore = _store
for _m in ("torch.distributed.rendezvous",
           "torch.distributed.elastic.rendezvous.c10d_rendezvous_backend"):
    sys.modules[_m].TCPStore = _store
