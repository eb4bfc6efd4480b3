#!/usr/bin/env python3
"""flood.py: many revisions of a few keys, fast, for cgrun's etcd tests.

    python3 tests/etcd/flood.py HOST:PORT PREFIX COUNT SIZE [MEMBERS]

Puts up to COUNT values of SIZE bytes, round-robin over 8 keys
PREFIX0..PREFIX7, through the etcd v3 JSON gateway over one kept-alive
HTTP connection, so a watcher of PREFIX gets an event of about SIZE bytes
per put while the range of PREFIX stays at 8 keys.  With MEMBERS (a
comma-separated HOST:PORT list), it stops early, 25 puts after one of
them counts one more slow watcher than at the start (etcd's gauge
etcd_debugging_mvcc_slow_watcher_total at /metrics: a watcher whose
client stopped reading and whose buffers are full).  Prints the last
revision written, and the puts made to stderr.  Exits 1 with the reason
when etcd refuses or does not answer in 5 s.
"""
import base64
import http.client
import json
import sys


def slow_watchers(members):
    """The sum of the members' slow watcher gauges."""
    n = 0
    for m in members:
        host, port = m.rsplit(":", 1)
        c = http.client.HTTPConnection(host, int(port), timeout=5)
        c.request("GET", "/metrics")
        for line in c.getresponse().read().decode().splitlines():
            if line.startswith("etcd_debugging_mvcc_slow_watcher_total "):
                n += float(line.split()[1])
        c.close()
    return n


def main():
    if len(sys.argv) not in (5, 6):
        sys.exit("usage: flood.py HOST:PORT PREFIX COUNT SIZE [MEMBERS]")
    hostport, prefix, count, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    members = sys.argv[5].split(",") if len(sys.argv) == 6 else []
    host, port = hostport.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=5)
    slow0 = slow_watchers(members) if members else 0
    rev, stop = 0, count
    for i in range(count):
        if i >= stop:
            break
        key = base64.b64encode(("%s%d" % (prefix, i % 8)).encode()).decode()
        val = base64.b64encode((b"%08d" % i) * (size // 8)).decode()
        conn.request("POST", "/v3/kv/put", json.dumps({"key": key, "value": val}),
                     {"Content-Type": "application/json"})
        resp = conn.getresponse()
        body = resp.read()
        if resp.status != 200:
            sys.exit("flood.py: put %d: HTTP %d: %s" % (i, resp.status, body[:200]))
        rev = int(json.loads(body)["header"]["revision"])
        if members and stop == count and i % 25 == 24 and slow_watchers(members) > slow0:
            stop = i + 26
    print(rev)
    print("flood.py: %d puts" % min(stop, count), file=sys.stderr)


if __name__ == "__main__":
    main()
