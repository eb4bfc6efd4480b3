#!/usr/bin/python3
"""Hostile rendezvous clients against cgrun-rdzvd's job bounds and /status
(tests/daemon/t_daemon_jobs.sh).

Usage: abuse_jobs.py CASE PORT HTTP_PORT PID LOGFILE

  flood    unauthenticated JOINs from 127.0.0.1 create jobs as fast as they
           can (2000 tries): at most max-jobs-per-address (64) exist, the
           rest get ERROR; a healthy agent from 127.0.0.2 still creates its
           job and hears STATUS; /status and a TCPStore client stay fast;
           RSS stays small.  The daemon runs with --max-jobs=100: agents
           from 127.0.0.3 and .4 then fill the total and the next is
           refused by max-jobs.
  orphan   (--job-orphan-timeout=1000) a job whose only agent asked for a
           7-day keep-alive and hung up is forgotten within ~1 s; a job
           whose agent stays connected is kept.
  status   (--max-jobs-per-address=0) 300 jobs with hostile run ids and
           host names (invalid UTF-8, quotes, control bytes): /status is
           valid UTF-8 JSON, pages with ?offset=&limit=, says jobs_total
           and truncated, and its size does not grow with the jobs beyond
           the page.

Standard library only; all traffic on loopback.
"""
import json
import os
import socket
import struct
import sys
import time
import urllib.request

CASE, PORT, HPORT, PID, LOG = (sys.argv[1], int(sys.argv[2]), int(sys.argv[3]),
                               int(sys.argv[4]), sys.argv[5])
WEEK_MS = 604800000


def fail(msg):
    print("FAIL", msg)
    sys.exit(1)


def nstr(b):
    return struct.pack("<H", len(b)) + b


def frame(op, body=b""):
    return struct.pack("<I", 1 + len(body)) + bytes([op]) + body


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        c = s.recv(n - len(buf))
        if not c:
            raise EOFError("closed")
        buf += c
    return buf


def read_frame(s):
    n = struct.unpack("<I", recv_exact(s, 4))[0]
    b = recv_exact(s, n)
    return b[0], b[1:]


def join(run_id, host=b"attacker", src="127.0.0.1", ka_ms=WEEK_MS, ka_max=1):
    """HELLO + JOIN; returns (socket, 'status' | 'error: TEXT')."""
    s = socket.socket()
    s.settimeout(5)
    s.bind((src, 0))
    s.connect(("127.0.0.1", PORT))
    body = (nstr(run_id) + nstr(host) +
            struct.pack("<IIIiIIIIIIII", os.getpid(), 0, 1, -1, 2, 2, 0,
                        WEEK_MS, 1000, 1000, ka_ms, ka_max) +
            nstr(b"127.0.0.1") + struct.pack("<H", 1))
    s.sendall(b"CGRN" + frame(0x80, struct.pack("<H", 1)) + frame(0x81, body))
    while True:
        op, b = read_frame(s)
        if op == 0xC1:
            return s, "status"
        if op == 0xC6:
            n = struct.unpack("<H", b[:2])[0]
            return s, "error: " + b[2:2 + n].decode(errors="replace")
        if op != 0xC0:
            fail("unexpected op 0x%x" % op)


def http(path):
    t0 = time.monotonic()
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (HPORT, path),
                                timeout=10) as r:
        body = r.read()
    return body, time.monotonic() - t0


def status(query=""):
    body, secs = http("/status" + query)
    try:
        text = body.decode("utf-8", errors="strict")
    except UnicodeDecodeError as e:
        fail("/status is not valid UTF-8: %s" % e)
    try:
        return json.loads(text), len(body), secs
    except ValueError as e:
        fail("/status is not valid JSON: %s" % e)


def store_rt():
    t0 = time.monotonic()
    s = socket.create_connection(("127.0.0.1", PORT), timeout=5)
    s.sendall(b"\x00" + struct.pack("<Q", 2) + b"/k" + struct.pack("<Q", 1) +
              b"v" + b"\x02" + struct.pack("<Q", 2) + b"/k")
    if recv_exact(s, 9)[8:] != b"v":
        fail("store client: wrong GET")
    s.close()
    return time.monotonic() - t0


def rss_mib():
    with open("/proc/%d/status" % PID) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def log_has(text):
    with open(LOG, errors="replace") as f:
        return text in f.read()


def flood():
    made, refused, t0 = 0, 0, time.monotonic()
    for i in range(2000):
        s, r = join(b"flood-%d" % i)
        s.close()
        if r == "status":
            made += 1
        elif "max-jobs-per-address" in r:
            refused += 1
        else:
            fail("flood JOIN %d: %s" % (i, r))
    took = time.monotonic() - t0
    st, size, secs = status()
    print("flood: 2000 JOINs in %.1f s: %d jobs made, %d refused; /status %d "
          "bytes in %.1f ms; jobs_total=%d rss=%.0fMiB" %
          (took, made, refused, size, secs * 1000, st.get("jobs_total", -1), rss_mib()))
    if made != 64:
        fail("%d jobs from one address, want max-jobs-per-address=64" % made)
    if not log_has("max-jobs-per-address=64 reached"):
        fail("no log line for max-jobs-per-address")
    if b"cgrun_rdzvd_jobs_refused_total 1936\n" not in http("/metrics")[0]:
        fail("/metrics does not count 1936 refused JOINs")
    healthy, r = join(b"healthy-job", host=b"good", src="127.0.0.2")
    if r != "status":
        fail("a healthy agent from another address was refused: %s" % r)
    rt = store_rt()
    print("ok flood: 64 jobs from 127.0.0.1, then refused; healthy agent "
          "joined; store round trip %.1f ms" % (rt * 1000))
    socks = []
    for src in ("127.0.0.3", "127.0.0.4"):
        for i in range(64):
            s, r = join(b"fill-%s-%d" % (src.encode(), i), src=src)
            socks.append(s)
            if r != "status":
                break
    if "max-jobs=100 reached" not in r:
        fail("over max-jobs=100 the JOIN got: %s" % r)
    st, _, _ = status("?limit=0")
    if st["jobs_total"] != 100:
        fail("jobs_total=%d, want max-jobs=100" % st["jobs_total"])
    print("ok flood: max-jobs=100 refuses the 101st job")


def orphan():
    s, r = join(b"orphan-job")
    if r != "status":
        fail("orphan JOIN: %s" % r)
    keep, r = join(b"kept-job", src="127.0.0.2")
    if r != "status":
        fail("kept JOIN: %s" % r)
    s.close()
    t0 = time.monotonic()
    while True:
        ids = [j["run_id"] for j in status()[0]["jobs"]]
        if "orphan-job" not in ids:
            break
        if time.monotonic() - t0 > 5:
            fail("job with no agent still there after 5 s (7-day keep-alive)")
        time.sleep(0.1)
    took = time.monotonic() - t0
    if took < 0.8:
        fail("orphan forgotten after %.1f s, before job-orphan-timeout" % took)
    time.sleep(1.5)
    ids = [j["run_id"] for j in status()[0]["jobs"]]
    if "kept-job" not in ids:
        fail("a job with a connected agent was forgotten")
    if not log_has("forgotten: no agent connected"):
        fail("no log line for job-orphan-timeout")
    print("ok orphan: forgotten after %.1f s; the connected job kept" % took)


HOSTILE = [b"\xff\xfe", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80",
           b"\xc0\xaf", b'"}]', b"\x01\x1b[31m", b"\\u0000", "é".encode()]


def status_case():
    socks = []
    for i in range(300):
        h = HOSTILE[i % len(HOSTILE)]
        s, r = join(b"job" + h + b"%d" % i, host=b"host" + h)
        if r != "status":
            fail("JOIN %d: %s" % (i, r))
        socks.append(s)
    st, size_default, secs = status()
    if st["jobs_total"] != 300 or len(st["jobs"]) != 100 or not st["truncated"]:
        fail("default page: total=%s jobs=%d truncated=%s" %
             (st.get("jobs_total"), len(st["jobs"]), st.get("truncated")))
    if not any("\ufffd" in j["run_id"] for j in st["jobs"]):
        fail("invalid UTF-8 in run ids not replaced by U+FFFD")
    if not any(j["run_id"].startswith('job"}]') for j in st["jobs"]):
        fail("quotes in a run id not kept")
    seen = set()
    for off in range(0, 300, 50):
        page = status("?offset=%d&limit=50" % off)[0]
        seen.update(j["run_id"] for j in page["jobs"])
        if page["truncated"] != (off + 50 < 300):
            fail("offset=%d: truncated=%s" % (off, page["truncated"]))
    if len(seen) != 300:
        fail("pages of 50 showed %d distinct jobs, want 300" % len(seen))
    last = status("?offset=290&limit=50")[0]
    if len(last["jobs"]) != 10 or last["truncated"]:
        fail("last page: %d jobs truncated=%s" % (len(last["jobs"]), last["truncated"]))
    try:
        http("/status?limit=100000")
        fail("limit=100000 accepted")
    except urllib.error.HTTPError as e:
        if e.code != 400:
            fail("limit=100000: HTTP %d, want 400" % e.code)
    for i in range(300, 600):
        s, r = join(b"more%d" % i)
        socks.append(s)
    st2, size2, secs2 = status()
    if st2["jobs_total"] != 600 or size2 > size_default * 1.2:
        fail("/status grew from %d to %d bytes with the jobs beyond the page"
             % (size_default, size2))
    metrics, _ = http("/metrics")
    metrics.decode("utf-8")
    print("ok status: valid UTF-8 JSON with hostile names; pages; %d bytes at "
          "300 jobs, %d at 600 (%.1f ms)" % (size_default, size2, secs2 * 1000))


{"flood": flood, "orphan": orphan, "status": status_case}[CASE]()
