# Loaded (through PYTHONPATH) by torchrun's agent in
# tests/libcgrun/t_libcgrun_torchrun26.sh: Debian's torch 2.6 is built without
# libuv, but torchrun 2.6 creates its c10d rendezvous TCPStore with
# use_libuv=True unless told otherwise.  Make False the default.
import sys

import torch.distributed as dist
import torch.distributed.elastic.rendezvous.c10d_rendezvous_backend  # noqa: F401

_TCPStore = dist.TCPStore


def TCPStore(*args, **kwargs):
    kwargs.setdefault("use_libuv", False)
    return _TCPStore(*args, **kwargs)


dist.TCPStore = TCPStore
sys.modules["torch.distributed.elastic.rendezvous.c10d_rendezvous_backend"].TCPStore = TCPStore
