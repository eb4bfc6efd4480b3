"""What the hostile store clients share (tests/daemon/abuse_pressure.py,
tests/hostile/unread_replies.py): TCPStore framing, a connection to the
daemon on loopback, exact reads, and the daemon's resident memory."""
import socket
import struct
import sys


def u64(v):
    return struct.pack("<Q", v)


def B(b):
    """A length-prefixed field."""
    return u64(len(b)) + b


def fail(msg):
    print("FAIL", msg)
    sys.exit(1)


def connect(port, timeout):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def recv_exact(s, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise EOFError("closed after %d of %d bytes" % (len(buf), n))
        buf += chunk
    return bytes(buf)


def rss_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    fail("no VmRSS for pid %d" % pid)
