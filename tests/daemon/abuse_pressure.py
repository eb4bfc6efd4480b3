#!/usr/bin/python3
"""Hostile clients against cgrun-rdzvd's input bounds (tests/daemon/t_daemon_pressure.sh).

Usage: abuse_pressure.py CASE PORT PID LOGFILE

  stalled  8 clients each send half of a 60 MiB SET and stall; the daemon
           must stay under 256 MiB RSS (from /proc/PID/status) and serve a
           healthy client meanwhile (its latency is printed and bounded).
  trickle  one client sends a request one byte every 100 ms; it must be
           dropped by request-timeout (the daemon runs with 2000 ms) even
           though every byte comes well within idle-timeout.
  maxvalue the daemon runs with --max-input=4k --max-value-size=8k: a SET
           of exactly 8192 bytes is stored, 8193 bytes closes the
           connection.

Standard library only; all traffic on loopback.
"""
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hostile"))
import storewire  # noqa: E402
from storewire import B, connect, fail, recv_exact, u64  # noqa: E402,F401

CASE, PORT, PID, LOG = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
MIB = 1024 * 1024


def conn(timeout=5.0):
    return connect(PORT, timeout)


def rss_mib():
    return storewire.rss_mib(PID)


def log_has(text, secs=5.0):
    end = time.time() + secs
    while time.time() < end:
        with open(LOG, errors="replace") as f:
            if text in f.read():
                return True
        time.sleep(0.05)
    return False


def closed_within(s, secs):
    """Seconds until the server closed s, or None if it did not in secs."""
    t0 = time.monotonic()
    s.settimeout(secs)
    try:
        while True:
            if not s.recv(65536):
                return time.monotonic() - t0
    except (ConnectionResetError, BrokenPipeError):
        return time.monotonic() - t0
    except socket.timeout:
        return None


def roundtrip(s, n):
    """SET then GET on a 1.13 connection; returns the seconds it took."""
    t0 = time.monotonic()
    v = str(n).encode()
    s.sendall(b"\x00" + B(b"/healthy") + B(v) + b"\x02" + B(b"/healthy"))
    if recv_exact(s, 8 + len(v))[8:] != v:
        fail("healthy client: wrong GET")
    return time.monotonic() - t0


def stalled():
    nclients, total, half = 8, 60 * MIB, 30 * MIB
    base = rss_mib()
    socks = []
    sent = [0] * nclients

    def push(i):
        s = conn(timeout=30)
        socks.append(s)
        chunk = b"v" * MIB
        try:
            s.sendall(b"\x00" + B(b"/big%d" % i) + u64(total))
            while sent[i] < half:
                s.sendall(chunk)
                sent[i] += len(chunk)
        except OSError:
            pass        # paused: the send blocks, then the test ends

    threads = [threading.Thread(target=push, args=(i,), daemon=True)
               for i in range(nclients)]
    for t in threads:
        t.start()
    healthy = conn()
    worst, peak, n = 0.0, 0.0, 0
    end = time.monotonic() + 8
    while time.monotonic() < end:
        n += 1
        worst = max(worst, roundtrip(healthy, n))
        peak = max(peak, rss_mib())
        time.sleep(0.05)
    print("stalled: base_rss=%.0fMiB peak_rss=%.0fMiB sent=%dMiB healthy_rt=%d "
          "worst_latency=%.1fms" % (base, peak, sum(sent) // MIB, n, worst * 1000))
    if sum(sent) < 64 * MIB:
        fail("the hostile clients sent only %d MiB" % (sum(sent) // MIB))
    if peak >= 256:
        fail("daemon RSS %.0f MiB >= 256 MiB" % peak)
    # What the budget allows: max-input-total (64 MiB) plus the one request
    # always read (30 MiB here) plus 32 MiB of slack; without a budget all
    # 8 x 30 MiB would be held.
    if peak - base > 64 + 30 + 32:
        fail("daemon RSS grew by %.0f MiB, more than the input budget allows"
             % (peak - base))
    if worst > 1.0:
        fail("healthy client waited %.0f ms" % (worst * 1000))
    if not log_has("input budget full"):
        fail("no 'input budget full' log line")
    print("ok stalled: RSS %.0f MiB < 256 MiB, healthy client served" % peak)


def trickle():
    s = conn()
    req = b"\x00" + B(b"/trickle") + B(b"x" * 200)
    t0 = time.monotonic()
    s.settimeout(0.1)
    for i, b in enumerate(req):
        try:
            s.sendall(bytes([b]))
        except OSError:
            break
        try:
            if s.recv(1) == b"":
                break
        except socket.timeout:
            pass
        except ConnectionResetError:
            break
        if time.monotonic() - t0 > 10:
            fail("trickled request still open after 10 s (sent %d bytes)" % i)
    took = time.monotonic() - t0
    print("trickle: closed after %.1f s" % took)
    if took < 1.5:
        fail("closed after %.1f s, before request-timeout" % took)
    if not log_has("request timeout"):
        fail("no 'request timeout' log line")
    h = conn()
    roundtrip(h, 1)
    print("ok trickle: cut off by request-timeout, not reset by each byte")


def maxvalue():
    s = conn()
    v = b"x" * 8192
    s.sendall(b"\x00" + B(b"/max") + B(v) + b"\x02" + B(b"/max"))
    try:
        got = recv_exact(s, 8 + len(v))
    except (EOFError, OSError) as e:
        fail("a value of exactly max-value-size was refused: %s" % e)
    if got[8:] != v:
        fail("a value of exactly max-value-size came back wrong")
    print("ok max-value-size: 8192 bytes stored")
    s2 = conn()
    s2.sendall(b"\x00" + B(b"/max2") + u64(8193))
    if closed_within(s2, 5) is None:
        fail("a value of max-value-size + 1 was not refused")
    if not log_has("value length over max-value-size"):
        fail("no log line for max-value-size + 1")
    print("ok max-value-size + 1 refused")


{"stalled": stalled, "trickle": trickle, "maxvalue": maxvalue}[CASE]()
