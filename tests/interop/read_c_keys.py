"""The Python half of tests/interop/t_client_vs_torch26.sh: read what the C client
wrote through torch's own PrefixStore, then answer through one.

usage: python read_c_keys.py PORT
"""
import datetime
import sys

import torch.distributed as dist


def main():
    port = int(sys.argv[1])
    kw = {"use_libuv": False} if "use_libuv" in (dist.TCPStore.__init__.__doc__ or "") else {}
    st = dist.TCPStore("127.0.0.1", port, None, False,
                       datetime.timedelta(seconds=60), **kw)
    c2py = dist.PrefixStore("c2py", st)
    inner = dist.PrefixStore("inner", c2py)
    got = {
        "c2py/k": c2py.get("k"),
        "c2py/inner/k2": inner.get("k2"),
        "c2py/bin": c2py.get("bin"),
    }
    want = {"c2py/k": b"from-c", "c2py/inner/k2": b"nested",
            "c2py/bin": b"\x00\xff\x00a"}
    if got != want:
        print("FAIL python read %r, want %r" % (got, want))
        sys.exit(1)
    print("ok python read C's keys through PrefixStore:", got)
    dist.PrefixStore("py", st).set("k", "from-py")


if __name__ == "__main__":
    main()
