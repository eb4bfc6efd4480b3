"""Helpers of the tests/daemon/t_service_*.sh scripts (python3, standard library).

  notify PATH OUT SECS      receive sd_notify datagrams on PATH, append
                            each (newlines as " | ") to OUT, for SECS
  store HOST PORT [N]       torch 1.13 dialect: SET, GET, ADD 5 to a counter
                            that must then read N (default 5); check replies
  http URL                  GET: print "STATUS", then the body
  wait FILE REGEX SECS      wait until a line of FILE matches; print it
  agent HOST PORT RUNID MODE  a native-protocol node (docs/protocol.md) that
                            joins RUNID (2 nodes wanted) and prints
                            "joined"; MODE close: on FAIL print
                            "FAIL reason text" and hang up; MODE hold: on
                            FAIL print it but keep the connection open
"""
import os
import re
import socket
import struct
import sys
import time
import urllib.error
import urllib.request


def notify(path, out, secs):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    s.settimeout(0.2)
    end = time.monotonic() + float(secs)
    with open(out, "a") as f:
        f.write("listening\n")
        f.flush()
        while time.monotonic() < end:
            try:
                msg = s.recv(4096)
            except socket.timeout:
                continue
            f.write(msg.decode(errors="replace").replace("\n", " | ") + "\n")
            f.flush()
    os.unlink(path)


def recv_exact(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise SystemExit("store: connection closed after %d of %d bytes" % (len(b), n))
        b += c
    return b


def field(b):
    return struct.pack("<Q", len(b)) + b


def store(host, port, want=5):
    s = socket.create_connection((host, int(port)), timeout=10)
    s.sendall(b"\x00" + field(b"/svc") + field(b"hello"))        # SET
    s.sendall(b"\x02" + field(b"/svc"))                           # GET
    n = struct.unpack("<Q", recv_exact(s, 8))[0]
    v = recv_exact(s, n)
    if v != b"hello":
        raise SystemExit("store: GET returned %r" % v)
    s.sendall(b"\x03" + field(b"/cnt") + struct.pack("<q", 5))    # ADD
    r = struct.unpack("<q", recv_exact(s, 8))[0]
    if r != int(want):
        raise SystemExit("store: ADD returned %d, not %s" % (r, want))
    s.close()
    print("store ok: SET GET ADD")


def http(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            print(r.status)
            print(r.headers.get("Content-Type"))
            sys.stdout.write(r.read().decode())
    except urllib.error.HTTPError as e:
        print(e.code)
        print(e.headers.get("Content-Type"))


def wait(path, regex, secs):
    end = time.monotonic() + float(secs)
    pat = re.compile(regex)
    while time.monotonic() < end:
        try:
            with open(path, errors="replace") as f:
                for line in f:
                    if pat.search(line):
                        sys.stdout.write(line)
                        return
        except FileNotFoundError:
            pass
        time.sleep(0.02)
    raise SystemExit("timed out after %s s waiting for /%s/ in %s" % (secs, regex, path))


def frame(op, body=b""):
    return struct.pack("<IB", 1 + len(body), op) + body


def nstr(b):
    return struct.pack("<H", len(b)) + b


def read_frame(s):
    n = struct.unpack("<I", recv_exact(s, 4))[0]
    b = recv_exact(s, n)
    return b[0], b[1:]


def agent(host, port, run_id, mode):
    s = socket.create_connection((host, int(port)), timeout=30)
    join = (nstr(run_id.encode()) + nstr(b"testnode") +
            struct.pack("<IIIiIIIIIIII", os.getpid(), 0, 1, -1, 2, 2, 0,
                        60000, 1000, 1000, 5000, 3) +
            nstr(b"127.0.0.1") + struct.pack("<H", 1))
    s.sendall(b"CGRN" + frame(0x80, struct.pack("<H", 1)) + frame(0x81, join))
    while True:
        try:
            op, body = read_frame(s)
        except (SystemExit, ConnectionResetError):
            print("closed", flush=True)     # the server closed (restart)
            return
        if op == 0xC1:          # STATUS: we wait in the round being formed
            print("joined", flush=True)
        elif op == 0xC5:        # FAIL
            n = struct.unpack("<H", body[1:3])[0]
            print("FAIL %d %s" % (body[0], body[3:3 + n].decode()), flush=True)
            if mode == "hold":
                time.sleep(3600)
            s.close()
            return
        elif op == 0xC6:
            raise SystemExit("agent: ERROR from server: %r" % body)


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"notify": notify, "store": store, "http": http,
     "wait": wait, "agent": agent}[cmd](*args)
