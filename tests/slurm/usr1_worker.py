#!/usr/bin/env python3
"""A worker of tests/slurm/t_slurm_cluster_signal.sh, started by cgrun in an srun
step: it waits (60 s at most) for SIGUSR1, then "checkpoints" and exits 0.

Its main process starts one child in the same process group (a process
such as a data loader) and writes $OUT/ready.RANK once both have their
SIGUSR1 handler.  On SIGUSR1 the main process writes
$OUT/ckpt.RANK = "pid=PID usr1=COUNT child_usr1=COUNT" (COUNT: how many
SIGUSR1 it got, the child's as the child reported it), stops the child and
exits 0.  Without a SIGUSR1 in 60 s it exits 3.
"""
import os
import signal
import subprocess
import sys
import time

CHILD = r"""
import os, signal, sys, time
n = 0
def usr1(sig, frm):
    global n
    n += 1
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(str(n))
    os.replace(sys.argv[1] + ".tmp", sys.argv[1])
signal.signal(signal.SIGUSR1, usr1)
signal.signal(signal.SIGTERM, lambda s, f: sys.exit(0))
open(sys.argv[2], "w").close()
while True:
    time.sleep(0.1)
"""


def write(path, text):
    """Write PATH atomically (a reader sees all of it or nothing)."""
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def main():
    """Wait for SIGUSR1, then checkpoint and exit 0."""
    out, rank = os.environ["OUT"], os.environ["RANK"]
    got = [0]
    signal.signal(signal.SIGUSR1, lambda s, f: got.__setitem__(0, got[0] + 1))
    count = os.path.join(out, "child_usr1.%s" % rank)
    cready = os.path.join(out, "child_ready.%s" % rank)
    child = subprocess.Popen([sys.executable, "-c", CHILD, count, cready])
    deadline = time.time() + 30
    while not os.path.exists(cready) and time.time() < deadline:
        time.sleep(0.05)
    write(os.path.join(out, "ready.%s" % rank), "pid=%d\n" % os.getpid())
    deadline = time.time() + 60
    while got[0] == 0 and time.time() < deadline:
        time.sleep(0.1)
    if got[0] == 0:
        child.terminate()
        child.wait()
        return 3
    time.sleep(1)  # late duplicates are counted too
    c = open(count).read() if os.path.exists(count) else "0"
    write(os.path.join(out, "ckpt.%s" % rank),
          "pid=%d usr1=%d child_usr1=%s\n" % (os.getpid(), got[0], c))
    child.terminate()
    child.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
