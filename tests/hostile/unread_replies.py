#!/usr/bin/python3
"""Clients that ask for large values and never read the replies
(tests/hostile/t_hostile_unread.sh).

Usage: unread_replies.py PORT PID LOGFILE

The daemon runs with --max-value-size=1M --output-high-water=2M
--max-output-total=16M.  A healthy client stores a 1 MiB value.

  paused   one client pipelines 5000 GETs of it (5 GB of replies) and
           reads nothing: the daemon stops reading it (log line naming
           it), keeps it connected, its RSS grows by less than 32 MiB, and
           the healthy client gets the right value throughout.
  total    12 more such clients: past max-output-total the one with the
           most unsent bytes is dropped (log line naming it and its bytes),
           the RSS stays within 48 MiB of the start, the healthy client is
           served right throughout.

Standard library only; all traffic on loopback.
"""
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import storewire  # noqa: E402
from storewire import B, connect, fail, recv_exact, u64  # noqa: E402,F401

PORT, PID, LOG = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
MIB = 1024 * 1024
V1_SET, V1_GET = 0, 2
VALUE = bytes(range(256)) * 4096	# 1 MiB


def conn():
    return connect(PORT, 10)


def rss_mib():
    return storewire.rss_mib(PID)


def log_text():
    with open(LOG, errors="replace") as f:
        return f.read()


def wait_log(pred, secs, healthy):
    """Poll the log until pred(text) holds, checking the healthy client
    and the RSS meanwhile; the peak RSS seen."""
    end, peak = time.time() + secs, rss_mib()
    while time.time() < end:
        check_healthy(healthy)
        peak = max(peak, rss_mib())
        if pred(log_text()):
            return peak
        time.sleep(0.05)
    return None


def check_healthy(s):
    s.sendall(bytes([V1_GET]) + B(b"/big"))
    n = struct.unpack("<Q", recv_exact(s, 8))[0]
    if n != len(VALUE) or recv_exact(s, n) != VALUE:
        fail("the healthy client got a wrong value")


def hostile():
    """A client that pipelines 5000 GETs of the value and never reads."""
    s = conn()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall((bytes([V1_GET]) + B(b"/big")) * 5000)
    return s, "peer=127.0.0.1:%d " % s.getsockname()[1]


healthy = conn()
healthy.sendall(bytes([V1_SET]) + B(b"/big") + B(VALUE))
check_healthy(healthy)
base = rss_mib()
print("baseline RSS %.1f MiB" % base)

first, name = hostile()
peak = wait_log(lambda t: "not reading " + name in t, 10, healthy)
if peak is None:
    fail("no 'output over output-high-water: not reading %s' line" % name)
for _ in range(20):		# it stays paused, and bounded
    check_healthy(healthy)
    peak = max(peak, rss_mib())
    time.sleep(0.05)
if peak - base >= 32:
    fail("paused: RSS grew %.1f MiB (limit 32)" % (peak - base))
if "closed " + name in log_text():
    fail("the paused client was dropped: it should only be paused")
print("ok paused: %s RSS +%.1f MiB" % (name.strip(), peak - base))

others = [hostile() for _ in range(12)]
names = [name] + [n for _, n in others]


def dropped(text):
    return any("closed " + n + 'reason="output over max-output-total: unsent='
               in text for n in names)


peak2 = wait_log(dropped, 20, healthy)
if peak2 is None:
    fail("no 'output over max-output-total' drop of a hostile client")
for _ in range(20):
    check_healthy(healthy)
    peak2 = max(peak2, rss_mib())
    time.sleep(0.05)
if peak2 - base >= 48:
    fail("total: RSS grew %.1f MiB (limit 48)" % (peak2 - base))
line = [l for l in log_text().splitlines() if "max-output-total: unsent" in l][0]
print("ok total: RSS +%.1f MiB; %s" % (peak2 - base, line.strip()))
