#!/usr/bin/env python3
"""fake.py: endpoints that are not etcd, for cgrun's etcd tests.

    python3 tests/etcd/fake.py MODE...

Listens on 127.0.0.1, one free port per MODE, prints "MODE PORT" per line
(in the order given; MODE without its "=...") once all listen, and serves
until killed.  Modes (each request, after reading it):

  garbage  answers bytes that are not HTTP, then closes
  huge     HTTP 200 with a 3 MiB body (spaces after a "{")
  drip     HTTP 200, Content-Length 100000, then one byte every 100 ms
  silent   reads the request and never answers (the connection stays)
  deep     HTTP 200 with JSON nested 200 levels deep
  badjson  HTTP 200 with {"header":{"revision":"seven"}}
  brokenwatch=HOST:PORT
           passes every request to the etcd member HOST:PORT and its
           answer back, except watches (POST /v3/watch): those get an HTTP
           200 stream whose first line is not JSON, as a broken proxy or
           gateway in front of etcd might send
"""
import socket
import sys
import threading
import time

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"


def read_request(c, buf):
    """One request (head and body) from c after buf: (request, rest), or
    (None, b"") at the end."""
    while b"\r\n\r\n" not in buf:
        d = c.recv(65536)
        if not d:
            return None, b""
        buf += d
    head, rest = buf.split(b"\r\n\r\n", 1)
    n = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            n = int(line.split(b":", 1)[1])
    while len(rest) < n:
        d = c.recv(65536)
        if not d:
            return None, b""
        rest += d
    return head + b"\r\n\r\n" + rest[:n], rest[n:]


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


LINE = b"<html>not json</html>\n"
BROKEN = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
          b"Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n" % (len(LINE), LINE))


def pipe(src, dst):
    """Copy src to dst until either side closes."""
    try:
        while True:
            d = src.recv(65536)
            if not d:
                break
            dst.sendall(d)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def proxy(c, req, up, upstream):
    """Pass req to the member (connecting first); break a watch: False."""
    if req.startswith(b"POST /v3/watch "):
        c.sendall(BROKEN)
        time.sleep(0.2)
        return False, up
    if up is None:
        host, port = upstream.rsplit(":", 1)
        up = socket.create_connection((host, int(port)))
        threading.Thread(target=pipe, args=(up, c), daemon=True).start()
    up.sendall(req)
    return True, up


def serve_conn(mode, c):
    """Serve one connection until the client or the mode closes it."""
    buf, up, more = b"", None, True
    try:
        while more:
            req, buf = read_request(c, buf)
            if req is None:
                break
            if mode.startswith("brokenwatch="):
                more, up = proxy(c, req, up, mode.split("=", 1)[1])
            else:
                more = answer(mode, c)
    except OSError:
        pass
    for s in (c, up):
        if s is not None:
            s.close()


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
    print("\n".join("%s %d" % (m.split("=")[0], s.getsockname()[1]) for m, s in socks),
          flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
