#!/usr/bin/env python3
"""flood.py: many revisions of a few keys, fast, for cgrun's etcd tests.

    python3 tests/etcd/flood.py HOST:PORT PREFIX COUNT SIZE

Puts COUNT values of SIZE bytes, round-robin over 8 keys PREFIX0..PREFIX7,
through the etcd v3 JSON gateway over one kept-alive HTTP connection, so
a watcher of PREFIX gets COUNT events of about SIZE bytes each while the
range of PREFIX stays at 8 keys.  Prints the last revision written.
Exits 1 with the reason when etcd refuses or does not answer in 5 s.
"""
import base64
import http.client
import json
import sys


def main():
    if len(sys.argv) != 5:
        sys.exit("usage: flood.py HOST:PORT PREFIX COUNT SIZE")
    hostport, prefix, count, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    host, port = hostport.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=5)
    rev = 0
    for i in range(count):
        key = base64.b64encode(("%s%d" % (prefix, i % 8)).encode()).decode()
        val = base64.b64encode((b"%08d" % i) * (size // 8)).decode()
        conn.request("POST", "/v3/kv/put", json.dumps({"key": key, "value": val}),
                     {"Content-Type": "application/json"})
        resp = conn.getresponse()
        body = resp.read()
        if resp.status != 200:
            sys.exit("flood.py: put %d: HTTP %d: %s" % (i, resp.status, body[:200]))
        rev = int(json.loads(body)["header"]["revision"])
    print(rev)


if __name__ == "__main__":
    main()
