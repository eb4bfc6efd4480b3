#!/usr/bin/env python3
"""examples/ddp/train.py with a hang injected, for the hang tests
(tests/hang/t_hang_*.sh).  Same options, same weights; in addition:

  HANG_AT_STEP=S HANG_RANK=R   on attempt 0, rank R blocks forever in
                               hang_here() just before step S (a deadlock
                               that never ends: the launcher must notice)
  HANG_FILETIMER=SECONDS       every step runs inside torch's
                               expires(after=SECONDS), through the
                               FileTimerClient at TORCHELASTIC_TIMER_FILE
                               (what a torchrun user writes)
  HANG_PRINT=1                 every rank prints "rank R step S" before
                               each step (progress a watchdog can see)

It replaces train.py's maybe_crash(), called before every step, so
training itself is train.py's own code."""
import os
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "ddp"))
sys.path.insert(0, os.path.join(HERE, "..", "interop"))
import train  # noqa: E402  pylint: disable=wrong-import-position
from gloo import no_libuv  # noqa: E402  pylint: disable=wrong-import-position

_scope = []


def hang_here(rank, step):
    """Block forever (an Event nobody sets), as a deadlocked rank does."""
    print("rank %d: hanging before step %d" % (rank, step), file=sys.stderr, flush=True)
    threading.Event().wait()


def filetimer_step(after):
    """Leave the previous step's expires() scope, enter this step's."""
    from torch.distributed.elastic import timer
    if not _scope:
        timer.configure(timer.FileTimerClient(os.environ["TORCHELASTIC_TIMER_FILE"]))
    else:
        _scope.pop().__exit__(None, None, None)
    ctx = timer.expires(after=after)
    ctx.__enter__()
    _scope.append(ctx)


def before_step(rank, attempt, step):
    """train.py's hook before each step: print, time, maybe hang."""
    if os.environ.get("HANG_PRINT"):
        print("rank %d step %d" % (rank, step), flush=True)
    if os.environ.get("HANG_FILETIMER"):
        filetimer_step(float(os.environ["HANG_FILETIMER"]))
    at = os.environ.get("HANG_AT_STEP")
    if at is not None and attempt == 0 and step == int(at) and \
            rank == int(os.environ.get("HANG_RANK", "0")):
        hang_here(rank, step)


if __name__ == "__main__":
    train.maybe_crash = before_step
    no_libuv()  # Debian's torch 2.6 has no libuv (tests/interop/gloo.py)
    try:
        train.main()
    finally:
        if _scope:
            _scope.pop().__exit__(None, None, None)
