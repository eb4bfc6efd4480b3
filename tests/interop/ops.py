"""Every TCPStore operation this torch's Python exposes, as a client
(is_master=False) of a server at 127.0.0.1:PORT, with exact results.

usage: python ops.py PORT

Works with torch 1.13 (Debian bookworm) and 2.6 (Debian trixie).  The
server must be fresh (no keys): key counts are asserted exactly.  The same
script passes against torch's own server of the same version, which is how
the expected values were checked.
"""
import datetime
import sys
import threading
import time

import torch
import torch.distributed as dist

V2 = not torch.__version__.startswith("1.")
KW = {"use_libuv": False} if "use_libuv" in (dist.TCPStore.__init__.__doc__ or "") else {}
PORT = int(sys.argv[1])
checks = 0


def client(world_size=None, timeout=30.0):
    """A new TCPStore client connection."""
    return dist.TCPStore("127.0.0.1", PORT, world_size, False,
                         datetime.timedelta(seconds=timeout), **KW)


def eq(what, got, want):
    """Assert got == want, counting checks."""
    global checks
    if got != want:
        print("FAIL %s: got %r, want %r" % (what, got, want))
        sys.exit(1)
    checks += 1
    print("ok %s" % what)


def raises_after(what, fn, secs):
    """fn must raise RuntimeError (store errors derive from it) after about secs."""
    t0 = time.monotonic()
    try:
        fn()
    except RuntimeError as e:
        dt = time.monotonic() - t0
        if secs is not None and not (secs * 0.9 <= dt <= secs + 10):
            print("FAIL %s: raised after %.2fs, want ~%.1fs: %s" % (what, dt, secs, e))
            sys.exit(1)
        eq("%s raises (%.2fs: %s)" % (what, dt, str(e).splitlines()[0][:70]), True, True)
        return
    print("FAIL %s: did not raise" % what)
    sys.exit(1)


def basic(st):
    """set/get/add/compare_set/delete_key/num_keys/wait."""
    eq("fresh store has no keys", st.num_keys(), 0)
    st.set("k", "v")
    eq("set+get", st.get("k"), b"v")
    st.set("k", b"\x00\xffbin")
    eq("overwrite with binary", st.get("k"), b"\x00\xffbin")
    st.set("empty", "")
    eq("empty value", st.get("empty"), b"")
    big = bytes(range(256)) * 16384
    st.set("big", big)
    eq("4 MiB value", st.get("big") == big, True)
    eq("add creates", st.add("cnt", 5), 5)
    eq("add negative", st.add("cnt", -7), -2)
    eq("add 0 reads", st.add("cnt", 0), -2)
    eq("counter stored as text", st.get("cnt"), b"-2")
    st.set("lenient", " -7")
    eq("add parses like stoll (leading space, sign)", st.add("lenient", 2), -5)
    st.set("junk", "12abc")
    eq("add ignores trailing junk", st.add("junk", 1), 13)
    eq("compare_set missing+empty creates", st.compare_set("cs", "", "d"), b"d")
    eq("compare_set missing+nonempty echoes expected", st.compare_set("cs2", "x", "d"), b"x")
    eq("compare_set match swaps", st.compare_set("cs", "d", "e"), b"e")
    eq("compare_set mismatch returns current", st.compare_set("cs", "zz", "f"), b"e")
    eq("value after compare_set", st.get("cs"), b"e")
    eq("num_keys", st.num_keys(), 7)
    eq("delete existing", st.delete_key("k"), True)
    eq("delete missing", st.delete_key("k"), False)
    eq("num_keys after delete", st.num_keys(), 6)
    st.wait(["cnt", "cs"])
    st.wait(["cnt"], datetime.timedelta(seconds=1))
    eq("wait on present keys", True, True)


def waits(st):
    """wait/get timeouts, and a wait released by another client's set/add."""
    raises_after("wait timeout", lambda: st.wait(["never"], datetime.timedelta(seconds=1)), 1.0)
    if V2:
        # 2.x cancels the wait on the server: the connection stays in step.
        eq("connection usable after wait timeout", st.get("cnt"), b"-2")
    st.set_timeout(datetime.timedelta(seconds=1))
    raises_after("get timeout", lambda: st.get("never2"), 1.0)
    st.set_timeout(datetime.timedelta(seconds=30))
    if V2:
        eq("connection usable after get timeout", st.get("cnt"), b"-2")
    other = client()
    got = {}

    def waiter():
        w = client()
        w.wait(["w1", "w2"])
        got["w"] = w.get("w2")
        got["g"] = w.get("w3")

    th = threading.Thread(target=waiter)
    th.start()
    other.set("w1", "1")
    other.add("w2", 7)
    other.set("w3", "three")
    th.join(30)
    eq("wait on two keys released by set and add; blocked get released", got,
       {"w": b"7", "g": b"three"})


def prefix(st):
    """PrefixStore joins keys as prefix + '/' + key, nesting."""
    p = dist.PrefixStore("pre", st)
    p.set("k", "pv")
    eq("PrefixStore key seen raw", st.get("pre/k"), b"pv")
    pp = dist.PrefixStore("in", p)
    pp.add("c", 3)
    eq("nested PrefixStore", st.get("pre/in/c"), b"3")


def concurrency():
    """Eight clients adding at once."""
    def adder():
        c = client()
        for _ in range(100):
            c.add("par", 1)

    ths = [threading.Thread(target=adder) for _ in range(8)]
    for t in ths:
        t.start()
    for t in ths:
        t.join(60)
    eq("8 clients x 100 adds", client().add("par", 0), 800)


def v2_only(st):
    """check/append/multi_get/multi_set (2.x Python only)."""
    eq("check present", st.check(["cnt", "cs"]), True)
    eq("check one missing", st.check(["cnt", "nope"]), False)
    eq("check no keys", st.check([]), True)
    st.append("ap", "po")
    st.append("ap", "tato")
    eq("append creates then appends", st.get("ap"), b"potato")
    st.multi_set(["m1", "m2"], ["x", b"yy"])
    eq("multi_get in key order", st.multi_get(["m2", "m1", "m2"]), [b"yy", b"x", b"yy"])
    eq("has_extended_api", st.has_extended_api(), True)
    eq("libuvBackend", st.libuvBackend, False)


def world_size_counter():
    """A client given world_size sends ADD init/ 1 (raw key) on creation."""
    st = client()
    before = st.num_keys()
    client(world_size=4)
    eq("world_size client counts in init/", st.num_keys(), before + 1)


def broken_requests():
    """Server closes a connection on ADD of a non-number; data survives."""
    st = client()
    st.set("txt", "abc")
    bad = client(timeout=5)
    raises_after("add on non-numeric value", lambda: bad.add("txt", 1), None)
    eq("store survives a closed connection", st.get("txt"), b"abc")


def main():
    st = client()
    eq("client host/port", (st.host, st.port), ("127.0.0.1", PORT))
    basic(st)
    waits(st)
    prefix(st)
    concurrency()
    if V2:
        v2_only(st)
    world_size_counter()
    broken_requests()
    print("ALL OK: %d checks, torch %s" % (checks, torch.__version__))


if __name__ == "__main__":
    main()
