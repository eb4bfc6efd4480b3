"""Holds 10,000 idle connections to cgrun-rdzvd and keeps abusive clients
going (half-sent requests, a client that never reads, huge lengths,
garbage) until the stop file appears; then checks that every abuser was
dealt with as documented and that the idle connections are all still
served.  Used by tests/hostile/t_abuse_10k.sh while a real gloo job runs through
the same daemon.

usage: python3 abuse_10k.py PORT IDLE_TIMEOUT_MS READY_FILE STOP_FILE
"""
import os
import random
import resource
import socket
import struct
import sys
import threading
import time

HOST = "127.0.0.1"
PORT = int(sys.argv[1])
IDLE_MS = int(sys.argv[2])
READY, STOP = sys.argv[3], sys.argv[4]
NIDLE = int(os.environ.get("IDLE_CONNS", "10000"))
SLACK = 10.0            # seconds beyond a documented limit before we fail
failures = []
counts = {"half-sent": 0, "never-reads": 0, "huge-length": 0, "garbage": 0}
lock = threading.Lock()


def u64(v):
    return struct.pack("<Q", v & 0xFFFFFFFFFFFFFFFF)


def B(b):
    return u64(len(b)) + b


def fail(msg):
    with lock:
        failures.append(msg)


def stopped():
    return os.path.exists(STOP)


def closed_within(s, secs):
    """True when the server closes s within secs (reading what it sends)."""
    end = time.monotonic() + secs
    while time.monotonic() < end:
        s.settimeout(max(0.05, end - time.monotonic()))
        try:
            if not s.recv(65536):
                return True
        except ConnectionResetError:
            return True
        except socket.timeout:
            pass
    return False


def abuser(name, fn):
    """Run one kind of abuse over and over until told to stop."""
    while not stopped() and not failures:
        try:
            ok = fn()
        except OSError as e:
            ok, e = False, e
            fail("%s: %s" % (name, e))
            return
        if not ok:
            fail("%s: the daemon did not close the connection in time" % name)
            return
        with lock:
            counts[name] += 1


def half_sent():
    # A 1.13 SET whose key never arrives: closed after the idle timeout.
    s = socket.create_connection((HOST, PORT), timeout=10)
    t0 = time.monotonic()
    s.sendall(b"\x00" + u64(5) + b"ab")
    ok = closed_within(s, IDLE_MS / 1000.0 + SLACK)
    if ok and time.monotonic() - t0 < IDLE_MS / 1000.0 * 0.9:
        fail("half-sent: closed before the idle timeout")
    s.close()
    return ok


def never_reads():
    # GET a 64 KiB value over and over, never read: a slow reader, closed
    # once the unsent replies pass --max-output.
    s = socket.create_connection((HOST, PORT), timeout=10)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(b"\x00" + B(b"/abuse/big") + B(b"x" * 65536))
    req = (b"\x02" + B(b"/abuse/big")) * 256
    end = time.monotonic() + SLACK * 3
    s.settimeout(0.2)
    while time.monotonic() < end:
        try:
            s.sendall(req)
        except (BrokenPipeError, ConnectionResetError):
            s.close()
            return True
        except socket.timeout:
            # the daemon stopped reading us or we filled our send buffer
            break
    s.settimeout(SLACK)
    # Now read: the daemon must have dropped us (EOF/RST after at most
    # max-output plus the socket buffers of data).
    total = 0
    try:
        while True:
            b = s.recv(1 << 20)
            if not b:
                break
            total += len(b)
            if total > 256 << 20:
                s.close()
                return False
    except ConnectionResetError:
        pass
    except socket.timeout:
        s.close()
        return False
    s.close()
    return True


def huge_length():
    # A key length of 2^62: refused as soon as the length arrives.
    s = socket.create_connection((HOST, PORT), timeout=10)
    s.sendall(random.choice([b"\x00", b"\x02", b"\x03"]) + u64(1 << 62))
    ok = closed_within(s, SLACK)
    s.close()
    return ok


def garbage():
    # Random bytes starting with an opcode no dialect has.
    s = socket.create_connection((HOST, PORT), timeout=10)
    s.sendall(bytes([0x7F]) + os.urandom(random.randint(0, 200)))
    ok = closed_within(s, SLACK)
    s.close()
    return ok


def main():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < NIDLE + 200:
        print("open-file hard limit %d < %d" % (hard, NIDLE + 200))
        sys.exit(77)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    t0 = time.monotonic()
    idle = []
    for i in range(NIDLE):
        idle.append(socket.create_connection((HOST, PORT), timeout=30))
    # Each one was accepted: the last answers (1.13 GETNUMKEYS).
    idle[-1].sendall(b"\x06")
    idle[-1].settimeout(30)
    if len(idle[-1].recv(8)) != 8:
        print("FAIL the last idle connection was not served")
        sys.exit(1)
    print("ok %d idle connections open in %.1fs" % (NIDLE, time.monotonic() - t0))
    threads = [threading.Thread(target=abuser, args=(n, f), daemon=True)
               for n, f in (("half-sent", half_sent), ("never-reads", never_reads),
                            ("huge-length", huge_length), ("garbage", garbage))]
    for t in threads:
        t.start()
    with open(READY + ".tmp", "w") as f:
        f.write("ready\n")
    os.rename(READY + ".tmp", READY)
    for t in threads:
        t.join()
    if failures:
        print("FAIL " + "; ".join(failures))
        sys.exit(1)
    for name, n in counts.items():
        if n == 0:
            print("FAIL no %s abuse completed while the job ran" % name)
            sys.exit(1)
    print("ok abusers dealt with: " + ", ".join("%s %d" % kv for kv in counts.items()))
    # The idle connections were never dropped: every one still answers.
    t0 = time.monotonic()
    for s in idle:
        s.sendall(b"\x06")
    for i, s in enumerate(idle):
        s.settimeout(30)
        got = b""
        while len(got) < 8:
            b = s.recv(8 - len(got))
            if not b:
                print("FAIL idle connection %d was closed" % i)
                sys.exit(1)
            got += b
    print("ok all %d idle connections still served (%.1fs)" % (NIDLE, time.monotonic() - t0))
    for s in idle:
        s.close()


main()
