#!/usr/bin/env python3
"""proxy.py: etcd members whose watches are broken, for cgrun's tests.

    python3 tests/etcd/proxy.py HOST:PORT...

One proxy per member on a free port of 127.0.0.1 (printed one per line,
in the members' order, once all listen).  Every request is passed to its
member and the answer back, except watches (POST /v3/watch): those get
an HTTP 200 stream whose first line is not JSON, as a broken proxy or
gateway in front of etcd might send.  Serves until killed.
"""
import socket
import sys
import threading
import time

LINE = b"<html>not json</html>\n"
BROKEN = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
          b"Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n" % (len(LINE), LINE))


def read_request(c, buf):
    """One request (head and body) from c after buf; (request, rest)."""
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


def serve_conn(c, upstream):
    """Pass requests to the member; break the watches."""
    host, port = upstream.rsplit(":", 1)
    u = None
    buf = b""
    try:
        while True:
            req, buf = read_request(c, buf)
            if req is None:
                break
            if req.startswith(b"POST /v3/watch "):
                c.sendall(BROKEN)
                time.sleep(0.2)
                break
            if u is None:
                u = socket.create_connection((host, int(port)))
                threading.Thread(target=pipe, args=(u, c), daemon=True).start()
            u.sendall(req)
    except OSError:
        pass
    for s in (c, u):
        if s is not None:
            s.close()


def serve(s, upstream):
    """Accept forever."""
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve_conn, args=(c, upstream), daemon=True).start()


def main():
    socks = []
    for up in sys.argv[1:]:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen(64)
        socks.append((s, up))
    for s, up in socks:
        threading.Thread(target=serve, args=(s, up), daemon=True).start()
    print("\n".join("127.0.0.1:%d" % s.getsockname()[1] for s, _ in socks), flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
