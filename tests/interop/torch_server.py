"""Run torch's own TCPStore server (whatever torch this python has).

usage: python torch_server.py PORTFILE [--until-key KEY] [--timeout SECS]

Binds port 0 (torch 2.x: legacy backend, use_libuv=False, since Debian
builds torch without libuv), writes the bound port to PORTFILE, then either
waits for KEY to be set by a client (--until-key; exit 1 on timeout) or
serves until killed.
"""
import argparse
import datetime
import os
import signal
import sys
import time

import torch.distributed as dist


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("portfile")
    ap.add_argument("--until-key")
    ap.add_argument("--timeout", type=float, default=120.0)
    a = ap.parse_args()
    kw = {}
    if "use_libuv" in (dist.TCPStore.__init__.__doc__ or ""):
        kw["use_libuv"] = False
    st = dist.TCPStore("127.0.0.1", 0, None, True,
                       datetime.timedelta(seconds=a.timeout),
                       wait_for_workers=False, **kw)
    tmp = a.portfile + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % st.port)
    os.rename(tmp, a.portfile)
    if a.until_key:
        try:
            st.wait([a.until_key], datetime.timedelta(seconds=a.timeout))
        except Exception as e:  # noqa: BLE001  (any timeout error type)
            print("torch_server: no %r within %ss: %s" % (a.until_key, a.timeout, e),
                  file=sys.stderr)
            sys.exit(1)
        return
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
