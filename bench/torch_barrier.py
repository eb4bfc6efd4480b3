"""bench/torch_barrier.py: real torch TCPStore clients doing torch's own
store-based barrier, for bench/store_barrier.sh (the second arrival pattern
beside bench/loadgen.c's one-process burst).

usage: python torch_barrier.py PORT CLIENTS WORLD OUTFILE
       python torch_barrier.py coord PORT WORLD SERVER_PID OUTFILE

Connects CLIENTS TCPStore clients (is_master=False, one connection each,
one thread each; the GIL is released while a client waits on the socket),
reports them with ADD("bench/ready", CLIENTS) on one more client, waits for
the key "bench/go", then every thread runs what
torch.distributed.distributed_c10d._store_based_barrier does in torch 2.x:
ADD(key, 1); ADD(key, 0); the client that sees WORLD SETs key:last_worker;
WAIT([key:last_worker]).  Writes "go_ns last_release_ns" (CLOCK_MONOTONIC,
system-wide) to OUTFILE.

coord: waits until WORLD clients are ready, notes the server's CPU time
(utime + stime of SERVER_PID, in clock ticks) and the time, sets
"bench/go", waits for the barrier's last_worker key, and writes
"go_ns cpu_ticks_at_go" to OUTFILE.
"""
import os
import datetime
import sys
import threading
import time

import torch.distributed as dist


def client(port):
    """A TCPStore client of the server at 127.0.0.1:PORT."""
    kw = {}
    if "use_libuv" in (dist.TCPStore.__init__.__doc__ or ""):
        kw["use_libuv"] = False
    return dist.TCPStore("127.0.0.1", port, None, False,
                         datetime.timedelta(seconds=600),
                         wait_for_workers=False, **kw)


def server_ticks(pid):
    """utime + stime of process PID, in clock ticks."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def coord(port, world, pid, out):
    """Release the clients once all are ready; note the time and CPU."""
    st = client(port)
    deadline = time.monotonic() + 600
    while st.add("bench/ready", 0) < world:
        if time.monotonic() > deadline:
            sys.exit("torch_barrier: clients not ready after 600 s")
        time.sleep(0.005)
    cpu = server_ticks(pid)
    go = time.monotonic_ns()
    st.set("bench/go", "1")
    st.wait(["bench/barrier:last_worker"])
    with open(out, "w") as f:
        f.write("%d %d\n" % (go, cpu))


def main():
    if sys.argv[1] == "coord":
        coord(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]),
              sys.argv[5])
        return
    port, n, world, out = (int(sys.argv[1]), int(sys.argv[2]),
                           int(sys.argv[3]), sys.argv[4])
    stores = [client(port) for _ in range(n)]
    ctl = client(port)
    start = threading.Event()
    released = [0] * n
    key = "bench/barrier"

    def barrier(i):
        st = stores[i]
        start.wait()
        st.add(key, 1)
        if st.add(key, 0) == world:
            st.set(key + ":last_worker", "1")
        st.wait([key + ":last_worker"])
        released[i] = time.monotonic_ns()

    threads = [threading.Thread(target=barrier, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    ctl.add("bench/ready", n)
    ctl.wait(["bench/go"])
    go = time.monotonic_ns()
    start.set()
    for t in threads:
        t.join()
    with open(out, "w") as f:
        f.write("%d %d\n" % (go, max(released)))


main()
