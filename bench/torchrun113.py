#!/usr/bin/python3
"""torchrun from Debian's python3-torch 1.13, for bench/launch.sh's
side-by-side runs: `/usr/bin/python3 bench/torchrun113.py TORCHRUN-ARGS...`.

Under Python 3.11, torch 1.13's Std.from_str("0") returns None (iterating an
IntFlag skips its zero member), so the default --redirects/--tee of 0 crash
the launcher; map None to Std.NONE before torchrun uses it."""
import sys

from torch.distributed.elastic.multiprocessing import api

_to_map = api.to_map


def to_map(val, local_world_size):
    """api.to_map with None read as Std.NONE."""
    return _to_map(api.Std.NONE if val is None else val, local_world_size)


api.to_map = to_map
import torch.distributed.elastic.multiprocessing as mp  # noqa: E402

mp.to_map = to_map
from torch.distributed.run import main  # noqa: E402

sys.exit(main())
