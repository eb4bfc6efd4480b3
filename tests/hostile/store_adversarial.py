#!/usr/bin/python3
"""Adversarial clients against a running cgrun-rdzvd (tests/hostile/t_store_adversarial.sh).

Usage: store_adversarial.py PORT LOGFILE

Each case sends something hostile, checks its outcome (connection closed
with a logged reason, or served), and then checks that a well-behaved
client is still served and earlier data survived.  Standard library only.
"""
import os
import resource
import socket
import struct
import sys
import time

PORT = int(sys.argv[1])
LOG = sys.argv[2]
DEADLINE = 5.0          # seconds to wait for anything expected
HOST = "127.0.0.1"


def u64(v):
    return struct.pack("<Q", v & 0xFFFFFFFFFFFFFFFF)


def B(b):
    if isinstance(b, str):
        b = b.encode()
    return u64(len(b)) + b


def conn():
    s = socket.create_connection((HOST, PORT), timeout=DEADLINE)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise EOFError("closed after %d of %d bytes" % (len(buf), n))
        buf += chunk
    return buf


def expect_closed(s, what):
    """The server must close s within the deadline."""
    s.settimeout(DEADLINE)
    try:
        while True:
            if not s.recv(65536):
                return
    except ConnectionResetError:
        return
    except socket.timeout:
        fail("%s: connection not closed within %.0fs" % (what, DEADLINE))


def expect_log(text):
    """The daemon's log must mention text (it logs before closing)."""
    end = time.time() + DEADLINE
    while time.time() < end:
        with open(LOG, errors="replace") as f:
            if text in f.read():
                return
        time.sleep(0.02)
    fail("log never said %r" % text)


def fail(msg):
    print("FAIL", msg)
    sys.exit(1)


class Healthy:
    """A well-behaved 2.x client used between the attacks."""

    def __init__(self):
        self.s = conn()
        self.s.sendall(bytes.fromhex("00cef7853c") + b"\x0d" + struct.pack("<I", 4242))
        if recv_exact(self.s, 4) != struct.pack("<I", 4242):
            fail("healthy client: bad PING reply")
        self.n = 0

    def check(self, what):
        """SET + GET + ADD round trips, timed."""
        t0 = time.monotonic()
        self.n += 1
        self.s.sendall(b"\x01" + B("/healthy") + B(str(self.n)))
        self.s.sendall(b"\x03" + B("/healthy"))
        if recv_exact(self.s, 8 + len(str(self.n)))[8:] != str(self.n).encode():
            fail("healthy client after %s: wrong GET" % what)
        self.s.sendall(b"\x04" + B("/survivor") + u64(0))
        if struct.unpack("<q", recv_exact(self.s, 8))[0] != 7:
            fail("healthy client after %s: stored data lost" % what)
        return time.monotonic() - t0


def case_lengths(h):
    cases = [
        ("negative key length", b"\x02" + u64(-1), "key length over max-key-size"),
        ("huge key length", b"\x00" + u64(1 << 60), "value=1152921504606846976"),
        ("huge value length", b"\x00" + B("/k") + u64(1 << 62), "value length over max-value-size"),
        ("negative key count", b"\x05" + u64(-3), "key count over max-keys-per-request"),
        ("huge MULTI_SET count", bytes.fromhex("00cef7853c") + b"\x0b" + u64(1 << 40),
         "key count over max-keys-per-request"),
    ]
    for what, data, logtext in cases:
        s = conn()
        s.sendall(data)
        expect_closed(s, what)
        s.close()
        expect_log(logtext)
        h.check(what)
        print("ok", what)


def case_truncated(h):
    # Half a request, then the client goes away: nothing stored, no stall.
    s = conn()
    s.sendall(b"\x00" + B("/trunc")[:-2])
    h.check("truncated (open)")
    s.close()
    h.check("truncated (closed)")
    s = conn()
    s.sendall(b"\x00" + B("/trunc2") + u64(1000) + b"x" * 10)
    s.close()
    h.check("truncated value")
    c = conn()
    c.sendall(b"\x04" + u64(2) + B("/trunc") + B("/trunc2"))
    if recv_exact(c, 1) != b"\x01":
        fail("truncated requests must not store anything")
    c.close()
    print("ok truncated requests")


def case_opcodes(h):
    for code in (9, 0x2A, 0xFF):
        s = conn()
        s.sendall(bytes([code]) + b"\x00" * 8)
        expect_closed(s, "1.13 opcode %d" % code)
        s.close()
    for code in (19, 0x80, 0xFF):
        s = conn()
        s.sendall(bytes.fromhex("00cef7853c") + bytes([code]))
        expect_closed(s, "2.x opcode %d" % code)
        s.close()
    expect_log("unknown opcode dialect=2.x opcode=255")
    h.check("unknown opcodes")
    print("ok unknown opcodes")


def case_magic(h):
    # One bit off the 2.x magic: taken as 1.13, a SET with an absurd key.
    s = conn()
    s.sendall(bytes.fromhex("00cef7853d0d05740000"))
    expect_closed(s, "wrong magic")
    s.close()
    # Right magic, then VALIDATE again with a wrong one.
    s = conn()
    s.sendall(bytes.fromhex("00cef7853c") + bytes.fromhex("00cef7853d"))
    expect_closed(s, "second VALIDATE")
    s.close()
    h.check("wrong magic")
    print("ok wrong magic")


def case_byte_per_write(h):
    # A 1.13 SET, GET and a 2.x PING sent one byte per write with pauses;
    # the healthy client is served between every byte.
    s = conn()
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    req = b"\x00" + B("/slowkey") + B("slow value") + b"\x02" + B("/slowkey")
    for i in range(len(req)):
        s.send(req[i:i + 1])
        time.sleep(0.005)
        if i % 8 == 0:
            if h.check("byte %d" % i) > 0.5:
                fail("healthy client stalled by a byte-per-write client")
    if recv_exact(s, 8 + 10)[8:] != b"slow value":
        fail("byte-per-write request served wrongly")
    s.close()
    s = conn()
    for b in bytes.fromhex("00cef7853c0d01020304"):
        s.send(bytes([b]))
        time.sleep(0.005)
    if recv_exact(s, 4) != bytes.fromhex("01020304"):
        fail("byte-per-write 2.x handshake")
    s.close()
    print("ok one byte per write")


def case_idle(h, n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, n + 256)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    n = min(n, want - 256)
    socks = []
    for i in range(n):
        socks.append(socket.create_connection((HOST, PORT), timeout=DEADLINE))
        # Some send half a request and stop: still not a stall.
        if i % 10 == 0:
            socks[-1].send(b"\x00" + u64(5))
    # Every one is accepted: each answers a PING... cheaper: the healthy
    # client counts keys while they sit there.
    worst = 0.0
    for _ in range(50):
        worst = max(worst, h.check("idle"))
    probe = socks[-1]
    probe.sendall(b"\x06")
    if struct.unpack("<q", recv_exact(probe, 8))[0] < 2:
        fail("the last idle connection was not served")
    for s in socks:
        s.close()
    h.check("idle closed")
    print("ok %d idle connections, healthy round trip worst %.2f ms" % (n, worst * 1000))


def case_never_reads(h):
    # Ask for a 64 KiB value over and over and never read: dropped once
    # the unsent output passes --max-output, others keep being served.
    s = conn()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    req = (b"\x02" + B("/bigval")) * 2000      # 1.13 GET
    end = time.time() + DEADLINE * 2
    closed = False
    s.settimeout(0.2)
    while time.time() < end and not closed:
        try:
            s.sendall(req)
        except (BrokenPipeError, ConnectionResetError):
            closed = True
        except socket.timeout:
            pass
        h.check("never reads")
    if not closed:
        expect_closed(s, "client that never reads")
    s.close()
    expect_log("slow reader")
    h.check("never reads")
    print("ok client that never reads replies")


def main():
    h = Healthy()
    h.s.sendall(b"\x04" + B("/survivor") + u64(7))
    recv_exact(h.s, 8)
    h.s.sendall(b"\x01" + B("/bigval") + B(b"v" * 65536))
    case_lengths(h)
    case_truncated(h)
    case_opcodes(h)
    case_magic(h)
    case_byte_per_write(h)
    case_never_reads(h)
    case_idle(h, int(os.environ.get("IDLE_CONNS", "3000")))
    h.check("end")
    print("all adversarial cases passed")


main()
