#!/usr/bin/env python3
"""A plain Python worker (no torch) for tests/hang/t_hang_python.sh: each rank
sends a heartbeat (a datagram on the fd CGRUN_HEARTBEAT_FD names) every
0.05 s for STEPS steps, then prints "rank R done attempt A".  On attempt 0
rank HANG_RANK blocks forever in hang_here() at step HANG_AT_STEP; the
other ranks go on beating and wait for it at the end, in wait_for_peers().
    hang_py.py [STEPS]"""
import os
import sys
import threading
import time


def hang_here(rank, step):
    """Block forever (an Event nobody sets), as a deadlocked rank does."""
    print("rank %d: hanging at step %d" % (rank, step), file=sys.stderr, flush=True)
    threading.Event().wait()


def wait_for_peers(fd):
    """The healthy ranks wait here for the hung one, beating."""
    while True:
        os.write(fd, b"wait")
        time.sleep(0.05)


def main():
    """Beat STEPS times, maybe hang, then wait or finish."""
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    rank = int(os.environ["RANK"])
    attempt = int(os.environ["TORCHELASTIC_RESTART_COUNT"])
    fd = int(os.environ["CGRUN_HEARTBEAT_FD"])
    hang_at = int(os.environ.get("HANG_AT_STEP", "-1"))
    hung = attempt == 0 and hang_at >= 0
    for step in range(steps):
        if hung and rank == int(os.environ.get("HANG_RANK", "0")) and step == hang_at:
            hang_here(rank, step)
        os.write(fd, b"step")
        time.sleep(0.05)
    if hung:
        wait_for_peers(fd)
    print("rank %d done attempt %d" % (rank, attempt), flush=True)


if __name__ == "__main__":
    main()
