"""Helpers of the tests/t_service_*.sh scripts (python3, standard library).

  notify PATH OUT SECS      receive sd_notify datagrams on PATH, append
                            each (newlines as " | ") to OUT, for SECS
  store HOST PORT [N]       torch 1.13 dialect: SET, GET, ADD 5 to a counter
                            that must then read N (default 5); check replies
  http URL                  GET: print "STATUS", then the body
  freeport                  print a free TCP port on 127.0.0.1
  wait FILE REGEX SECS      wait until a line of FILE matches; print it
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


def freeport():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    print(s.getsockname()[1])
    s.close()


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


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"notify": notify, "store": store, "http": http, "freeport": freeport,
     "wait": wait}[cmd](*args)
