#!/usr/bin/env python3
"""fake.py: endpoints that are not etcd, for cgrun's etcd tests.

    python3 tests/etcd/fake.py MODE...

Listens on 127.0.0.1, one free port per MODE, prints "MODE PORT" per line
once all listen, and serves until killed.  Modes (each request, after
reading it):

  garbage  answers bytes that are not HTTP, then closes
  huge     HTTP 200 with a 3 MiB body (spaces after a "{")
  drip     HTTP 200, Content-Length 100000, then one byte every 100 ms
  silent   reads the request and never answers (the connection stays)
  deep     HTTP 200 with JSON nested 200 levels deep
  badjson  HTTP 200 with {"header":{"revision":"seven"}}
"""
import socket
import sys
import threading
import time

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"


def read_request(c):
    """Read up to the end of the headers and the body they announce."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = c.recv(65536)
        if not d:
            return False
        buf += d
    head, body = buf.split(b"\r\n\r\n", 1)
    n = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            n = int(line.split(b":", 1)[1])
    while len(body) < n:
        d = c.recv(65536)
        if not d:
            return False
        body += d
    return True


def answer(mode, c):
    """Answer one request the way mode says; False to close."""
    if mode == "garbage":
        c.sendall(b"\x00\x01SSH-2.0-not-etcd\r\n\xff\xfe" * 64)
        return False
    if mode == "huge":
        size = 3 << 20
        c.sendall(HEAD % size + b"{")
        chunk = b" " * 65536
        left = size - 1
        while left > 0:
            c.sendall(chunk[:left])
            left -= min(left, len(chunk))
        return True
    if mode == "drip":
        c.sendall(HEAD % 100000 + b"{")
        for _ in range(100000):
            time.sleep(0.1)
            c.sendall(b" ")
        return True
    if mode == "silent":
        while c.recv(65536):
            pass
        return False
    if mode == "deep":
        body = b'{"a":' * 200 + b"1" + b"}" * 200
    else:
        body = b'{"header":{"revision":"seven"}}'
    c.sendall(HEAD % len(body) + body)
    return True


def serve_conn(mode, c):
    """Serve one connection until the client or the mode closes it."""
    try:
        while read_request(c) and answer(mode, c):
            pass
    except OSError:
        pass
    c.close()


def serve(mode, s):
    """Accept forever."""
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve_conn, args=(mode, c), daemon=True).start()


def main():
    socks = []
    for mode in sys.argv[1:]:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen(16)
        socks.append((mode, s))
    for mode, s in socks:
        threading.Thread(target=serve, args=(mode, s), daemon=True).start()
    print("\n".join("%s %d" % (m, s.getsockname()[1]) for m, s in socks), flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
