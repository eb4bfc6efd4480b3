#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/)
from the wire formats: valid requests and frames of every kind, so the
fuzzers start past the length checks.  Deterministic; run from anywhere:
    python3 tests/fuzz/mkcorpus.py
Regression seeds (inputs that once crashed) live beside these, named
crash-*, and are never overwritten."""
import os
import struct

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def put(target, name, data):
    d = os.path.join(TOP, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- TCPStore requests ----
def s(b):
    b = b.encode() if isinstance(b, str) else b
    return struct.pack("<Q", len(b)) + b


def keys(*ks):
    return struct.pack("<Q", len(ks)) + b"".join(s(k) for k in ks)


def i64(v):
    return struct.pack("<q", v)


MAGIC = struct.pack("<I", 0x3C85F7CE)
V2 = {
    "validate": b"\x00" + MAGIC,
    "set": b"\x01" + s("k") + s("v"),
    "cas": b"\x02" + s("k") + s("v") + s("w"),
    "get": b"\x03" + s("k"),
    "add": b"\x04" + s("cnt") + i64(5),
    "check": b"\x05" + keys("k", "cnt"),
    "wait": b"\x06" + keys("k"),
    "numkeys": b"\x07",
    "delete": b"\x08" + s("k"),
    "append": b"\x09" + s("k") + s("more"),
    "multiget": b"\x0a" + keys("k", "cnt"),
    "multiset": b"\x0b" + struct.pack("<Q", 2) + s("a") + s("1") + s("b") + s("2"),
    "cancel": b"\x0c",
    "ping": b"\x0d" + struct.pack("<I", 42),
    "qpush": b"\x0e" + s("q") + s("item"),
    "qpop": b"\x0f" + s("q"),
    "qlen": b"\x10" + s("q"),
    "listkeys": b"\x11",
    "barrier": b"\x12" + s("bar") + i64(1),
}
V1 = {
    "set": b"\x00" + s("k") + s("v"),
    "cas": b"\x01" + s("k") + s("v") + s("w"),
    "get": b"\x02" + s("k"),
    "add": b"\x03" + s("cnt") + i64(1),
    "check": b"\x04" + keys("k"),
    "wait": b"\x05" + keys("k"),
    "numkeys": b"\x06",
    "watch": b"\x07" + s("k"),
    "delete": b"\x08" + s("k"),
}

for name, req in V2.items():
    put("fuzz_wire", "v2-" + name, b"\x01" + req)
for name, req in V1.items():
    put("fuzz_wire", "v1-" + name, b"\x00" + req)
put("fuzz_wire", "v2-session", b"\x05" + b"".join(V2.values()))
put("fuzz_wire", "v1-session", b"\x04" + b"".join(V1.values()))
put("fuzz_wire", "v2-small-limits", b"\x03" + V2["validate"] + V2["multiset"] +
    b"\x01" + s("x" * 20) + s("v"))


# ---- native rendezvous frames ----
def frame(op, body=b""):
    return struct.pack("<IB", 1 + len(body), op) + body


def st(t):
    t = t.encode()
    return struct.pack("<H", len(t)) + t


def u32(*v):
    return b"".join(struct.pack("<I", x & 0xFFFFFFFF) for x in v)


def join(run="job", host="n0", pid=100, nproc=2, node_rank=-1, mn=2, mx=2,
         restarts=3, addr="127.0.0.1", port=29500):
    return frame(0x81, st(run) + st(host) + u32(pid, 0, nproc) +
                 struct.pack("<i", node_rank) +
                 u32(mn, mx, restarts, 60000, 0, 30000, 5000, 3) +
                 st(addr) + struct.pack("<H", port))


HELLO = frame(0x80, struct.pack("<H", 1))
KEEP, STOPPED, DONE, LEAVE = (frame(0x82), frame(0x84), frame(0x85), frame(0x86))
FAILED = frame(0x83, st("worker 1 exited 1"))
server = [
    frame(0xC0, struct.pack("<H", 1)),
    frame(0xC1, u32(1, 1, 2, 2, 0xFFFFFFFF) + b"\x00"),
    frame(0xC2, u32(1) + struct.pack("<i", 0) + u32(2, 0, 4, 0) +
          st("10.0.0.1") + struct.pack("<H", 29500)),
    frame(0xC3, u32(2) + st("node n1 failed")),
    frame(0xC4),
    frame(0xC5, b"\x01" + st("join timeout")),
    frame(0xC6, st("bad frame")),
]
for i, f in enumerate([HELLO, join(), KEEP, FAILED, STOPPED, DONE, LEAVE] + server):
    put("fuzz_rdzv_proto", "frame-%02d" % i, f)
put("fuzz_rdzv_proto", "agent-session", HELLO + join() + KEEP + FAILED + STOPPED + DONE)


def rec(peer, data, ctl=0):
    out = b""
    while True:   # records carry at most 255 bytes
        out += bytes([ctl | peer, min(len(data), 255)]) + data[:255]
        data = data[255:]
        if not data:
            return out


two_nodes = (rec(0, HELLO + join(host="a", pid=1)) +
             rec(1, HELLO + join(host="b", pid=2)))
put("fuzz_rdzv", "round", two_nodes)
put("fuzz_rdzv", "round-fail-restart", two_nodes + rec(0, FAILED) +
    rec(0, STOPPED) + rec(1, STOPPED) + rec(0, KEEP, 0x40))
put("fuzz_rdzv", "round-done", two_nodes + rec(0, DONE) + rec(1, DONE))
# A restarted daemon: the agents carry the restarts spent (SPENT, v3).
SPENT = frame(0x88, struct.pack("<I", 2))
put("fuzz_rdzv", "spent", two_nodes + rec(0, SPENT) + rec(1, SPENT) +
    rec(0, FAILED) + rec(0, STOPPED) + rec(1, STOPPED))
put("fuzz_rdzv_proto", "spent", SPENT)


# A restarted daemon, version 4: before JOIN each agent says what it
# carries from its last round (RESUME): round, restarts, its place, what
# its workers did (0 running .. 4 stopped) and a failure's text.
def resume(rnd, restarts, grank, workers, text=""):
    return frame(0x89, u32(rnd, restarts) + struct.pack("<i", grank) +
                 u32(2, 2 * grank, 4) + st("127.0.0.1") +
                 struct.pack("<H", 29500) + bytes([workers]) + st(text))


put("fuzz_rdzv_proto", "resume", resume(3, 1, 0, 2, "rank 1 exited 13"))
put("fuzz_rdzv", "resume-failed", rec(0, HELLO + resume(0, 0, 0, 2, "x") +
    join(host="a", pid=1)) + rec(1, HELLO + resume(0, 0, 1, 0) +
    join(host="b", pid=2)))
put("fuzz_rdzv", "resume-goes-on", rec(0, HELLO + resume(2, 1, 0, 1) +
    join(host="a", pid=1)) + rec(1, HELLO + resume(2, 1, 1, 0) +
    join(host="b", pid=2)) + rec(1, DONE))
put("fuzz_rdzv", "resume-known", two_nodes + rec(1, HELLO +
    resume(0, 0, 1, 2, "y") + join(host="b", pid=2), 0x80))
put("fuzz_rdzv", "reconnect", two_nodes + rec(1, HELLO + join(host="b", pid=2), 0x80) +
    rec(2, HELLO + join(host="c", pid=3, mn=1, mx=3)) + rec(2, LEAVE))
# Authenticated handshake (protocol version 2): HELLO v2, then AUTH with
# a client nonce and a wrong proof (the fuzzer finds its way from here).
HELLO2 = frame(0x80, struct.pack("<H", 2))
AUTH = frame(0x87, st("ab" * 32) + st("cd" * 32))
put("fuzz_rdzv", "auth", rec(0, HELLO2 + AUTH, 0x20) + rec(1, HELLO + join(host="b")))
put("fuzz_rdzv_proto", "auth", HELLO2 + AUTH)
put("fuzz_rdzv", "elastic", rec(0, HELLO + join(host="a", mn=1, mx=4)) +
    rec(1, HELLO + join(host="b", mn=1, mx=4, node_rank=1)) +
    rec(2, HELLO + join(run="other", host="c", mn=1, mx=1)) + rec(3, HELLO + join(host="d", mn=1, mx=4)))


# ---- whole store server, several clients ----
def srec(conn, data, ctl=0):
    return rec(conn, data, ctl)


put("fuzz_store", "v2-all-ops", srec(0, b"".join(V2.values())))
put("fuzz_store", "v1-all-ops", srec(0, b"".join(V1.values())))
put("fuzz_store", "wait-woken", srec(0, V2["validate"] + V2["wait"]) +
    srec(1, V2["validate"] + V2["set"]))
put("fuzz_store", "v1-watch", srec(0, V1["watch"]) + srec(1, V1["set"] + V1["delete"]))
put("fuzz_store", "barrier", srec(0, V2["validate"] + b"\x12" + s("b") + i64(2)) +
    srec(1, V2["validate"] + b"\x12" + s("b") + i64(2)))
put("fuzz_store", "native", srec(0, b"CGRN" + HELLO + join(host="a", pid=1)) +
    srec(1, b"CGRN" + HELLO + join(host="b", pid=2)) + srec(0, FAILED))
put("fuzz_store", "half-sent", srec(0, V2["validate"] + b"\x01" + s("key")[:5]))
# The same against the server with tiny limits (bit 5 of the first ctl).
for name in sorted(os.listdir(os.path.join(TOP, "fuzz_store"))):
    if name.startswith("tiny-") or name.startswith("crash-"):
        continue
    with open(os.path.join(TOP, "fuzz_store", name), "rb") as f:
        b = f.read()
    put("fuzz_store", "tiny-" + name, bytes([b[0] | 0x20]) + b[1:])
put("fuzz_store", "tiny-big", srec(0, V2["validate"] + b"\x01" + s("k" * 17) + s("v"), 0x20))

# ---- rdzvd configuration ----
CONF = """# rdzvd.conf
host = 127.0.0.1, ::1
port = 29400
max-key-size = 1M
max_value_size = 64M
max-keys-per-request = 131072
max-connections = 65536
max-output = 128M
max-input = 256M
idle-timeout = 30000
http-host = 127.0.0.1
http-port = off
log-level = info
shutdown-timeout = 2000
"""
put("fuzz_config", "full", CONF.encode())
put("fuzz_config", "quoted", b'host = "0.0.0.0"  # all\nlog-level = "debug"\nmax-input=4k\nmax-key-size=8k\n')
put("fuzz_config", "bad", b"max-connections = -1\n")
put("fuzz_config", "no-newline", b"port=0")
put("fuzz_config", "bounds", b"max-input-total = 64M\nrequest-timeout = 30000\n"
    b"max-jobs = 4096\nmax-jobs-per-address = 64\njob-orphan-timeout = 60000\n")

# ---- /status strings made valid UTF-8 (first byte: output room - 1) ----
put("fuzz_utf8", "ascii", b"\xff" + b"job-1")
put("fuzz_utf8", "hostile", b"\xff" + b"job\xff\xfe\xc3\xed\xa0\x80\xf4\x90\x80\x80\xc0\xaf\"}]")
put("fuzz_utf8", "multibyte-cut", b"\x04" + "h\u00e9\u20ac\U0001F600".encode())

# ---- cgrun command line (site file, NUL, arguments) ----
def argv(site, *args):
    return site.encode() + b"\0" + b"\0".join(a.encode() for a in args)


put("fuzz_options", "standalone", argv("", "--standalone", "--nproc-per-node=4", "train.py", "--lr", "1"))
put("fuzz_options", "c10d", argv("", "--nnodes=1:4", "--nproc_per_node", "2", "--rdzv-backend=c10d",
    "--rdzv-endpoint=[::1]:29400", "--rdzv-id=job7", "--rdzv-conf=join_timeout=60,is_host=1,keep_alive_interval=5",
    "--max-restarts=3", "--monitor-interval=0.5", "train.py"))
put("fuzz_options", "site", argv('rdzv_endpoint = "head:29400"\nrdzv_conf = read_timeout=10 # c\n',
    "--nnodes=2", "--nproc-per-node=gpu", "-m", "pkg.train"))
put("fuzz_options", "static", argv("", "--nnodes=2", "--node-rank=1", "--master-addr=10.0.0.1",
    "--master-port=1234", "--redirects=3", "--tee=0:1,1:2", "--log-dir=/tmp/x",
    "--local-ranks-filter=0,1", "--signals-to-handle=SIGTERM,SIGUSR1", "--no-python", "./a.out"))
put("fuzz_options", "static_endpoint", argv("", "--nnodes=1", "--rdzv-endpoint=[fe80::1]:29533", "--no-python", "true"))
put("fuzz_options", "bad", argv("junk", "--nnodes=3:2", "x"))

# ---- worker error files (torchelastic's error.json) ----
put("fuzz_errorfile", "record", b'{"message": {"message": "RuntimeError: boom", "extraInfo": '
    b'{"py_callstack": "Traceback (most recent call last):\\n  File \\"t.py\\"\\nRuntimeError: boom", '
    b'"timestamp": "1700000000"}}}')
put("fuzz_errorfile", "string", b'{"message": "plain text", "errorCode": 3}')
put("fuzz_errorfile", "nested", b'{"message": {"message": ["x", {"y": null}], "extraInfo": 7}}')
put("fuzz_errorfile", "empty", b"{}")

# ---- torch FileTimer request lines (the agent's FIFO) ----
put("fuzz_filetimer", "acquire", b'{"version": 1, "pid": 1234, "scope_id": "train.py#12", '
    b'"expiration_time": 1700000010.5, "signal": 9}')
put("fuzz_filetimer", "release", b'{"version": 1, "pid": 1234, "scope_id": "train.py#12", '
    b'"expiration_time": -1, "signal": 0}\n')
put("fuzz_filetimer", "lines", b'{"pid": 7, "scope_id": "a", "expiration_time": 1, "signal": 15}\n'
    b'not json\n{"version": 2, "pid": 1, "scope_id": 3}\n{"pid": 1.5}\n')
put("fuzz_filetimer", "deep", b'{"a": [[[[[1]]]]], "pid": 1, "scope_id": "s", "expiration_time": 1, "signal": 9}')

# ---- worker environment (NUL-separated NAME=value entries) ----
def envb(*kv):
    return b"\0".join(k.encode() for k in kv)


TORCHRUN_ENV = ("RANK=5", "WORLD_SIZE=8", "LOCAL_RANK=1", "LOCAL_WORLD_SIZE=4", "GROUP_RANK=1",
                "GROUP_WORLD_SIZE=2", "ROLE_RANK=5", "ROLE_WORLD_SIZE=8", "ROLE_NAME=trainer",
                "MASTER_ADDR=node0.example", "MASTER_PORT=29500", "TORCHELASTIC_RESTART_COUNT=2",
                "TORCHELASTIC_MAX_RESTARTS=3", "TORCHELASTIC_RUN_ID=job42",
                "TORCHELASTIC_USE_AGENT_STORE=True", "PATH=/usr/bin")
put("fuzz_rank", "torchrun", envb(*TORCHRUN_ENV))
put("fuzz_rank", "minimal", envb("RANK=0", "WORLD_SIZE=1", "LOCAL_RANK=0", "LOCAL_WORLD_SIZE=1",
                                 "MASTER_ADDR=127.0.0.1", "MASTER_PORT=1"))
put("fuzz_rank", "bad-values", envb("RANK=-1", "WORLD_SIZE=0x10", "LOCAL_RANK= 1", "LOCAL_WORLD_SIZE=99999999999",
                                    "MASTER_ADDR=", "MASTER_PORT=65536"))
put("fuzz_rank", "inconsistent", envb("RANK=8", "WORLD_SIZE=8", "LOCAL_RANK=0", "LOCAL_WORLD_SIZE=16",
                                      "GROUP_RANK=3", "GROUP_WORLD_SIZE=2", "MASTER_ADDR=h", "MASTER_PORT=2"))
put("fuzz_rank", "duplicates", envb("RANK=1", "RANK=9", "WORLD_SIZE=2", "LOCAL_RANK=0", "LOCAL_WORLD_SIZE=1",
                                    "MASTER_ADDR=a", "MASTER_PORT=3", "ROLE_NAME=" + "r" * 300))

# ---- barrier "arrived" markers (world_size u16 LE & 0xfff, buffer size, text) ----
def marker(world, blen, text):
    return struct.pack("<H", world - 1) + bytes([blen]) + text


put("fuzz_barrier", "all-arrived", marker(4, 0, b"0,1,2,3,"))
put("fuzz_barrier", "some-missing", marker(16, 0, b"3,0,7,"))
put("fuzz_barrier", "junk", marker(8, 10, b"1x2,,99999999999999999999,-3,5"))
put("fuzz_barrier", "many-missing", marker(4096, 0, b"0,"))


# ---- checkpoint files (mode byte, then header and payload) ----
def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def ckpt(step, payload, length=None, version=1):
    length = len(payload) if length is None else length
    h = b"CGRUNCKP" + struct.pack("<IIQQI", version, 64, step, length, crc32c(payload)) + bytes(24)
    return h + struct.pack("<I", crc32c(h)) + payload


put("fuzz_checkpoint", "valid", b"\0" + ckpt(7, b"model weights"))
put("fuzz_checkpoint", "empty", b"\0" + ckpt(0, b""))
put("fuzz_checkpoint", "torn", b"\0" + ckpt(3, b"0123456789")[:70])
put("fuzz_checkpoint", "huge-length", b"\0" + ckpt(1, b"x", length=1 << 40))
put("fuzz_checkpoint", "other-step", b"\4" + ckpt(9, b"abc"))
put("fuzz_checkpoint", "fix-crcs", b"\3" + ckpt(2, b"payload", version=2))

# ---- the NVIDIA driver's information file (room - 1, text) ----
H100_INFO = ("Model:           NVIDIA H100 80GB HBM3\nIRQ:             10\n"
             "GPU UUID:        GPU-9221d5d1-b60b-a624-bf14-0a1819cfda3b\n"
             "Video BIOS:      96.00.99.00.01\nBus Location:    0000:62:00.0\n"
             "Device Minor:    5\nGPU Excluded:    No\n")
put("fuzz_gpu_driver", "h100", b"\x5f" + H100_INFO.encode())
put("fuzz_gpu_driver", "not-initialised", b"\x5f" + H100_INFO.replace(
    "9221d5d1-b60b-a624-bf14-0a1819cfda3b",
    "????????-????-????-????-????????????").encode())
put("fuzz_gpu_driver", "small-room", b"\x10" + H100_INFO.encode())
put("fuzz_gpu_driver", "no-newline", b"\x5f" + b"GPU UUID:\tGPU-0a1b")

# ---- CUDA_VISIBLE_DEVICES, bus ids, placement options (GPUs, flags, room, text) ----
def cvd(ngpu, flags, room, text):
    return bytes([ngpu, flags, room - 1]) + text.encode()


put("fuzz_gpu", "indices", cvd(8, 0, 9, "3,1, 0 ,7"))
put("fuzz_gpu", "cut", cvd(4, 0, 9, "0,1,9,2"))
put("fuzz_gpu", "twice", cvd(4, 0, 9, "2,2"))
put("fuzz_gpu", "trailing-comma", cvd(4, 0, 9, "1,"))
put("fuzz_gpu", "empty", cvd(4, 0, 9, ""))
put("fuzz_gpu", "uuids", cvd(4, 1, 9, "GPU-1a,GPU-0b-7e57-0000,GPU-1"))
put("fuzz_gpu", "uuid-ambiguous", cvd(4, 1, 9, "GPU-0"))
put("fuzz_gpu", "uuid-unknown", cvd(4, 0, 9, "GPU-0a"))
put("fuzz_gpu", "mig", cvd(4, 5, 9, "MIG-21,MIG-GPU-0a-7e57-0000/1/0"))
put("fuzz_gpu", "small-room", cvd(8, 0, 2, "0,1,2"))
put("fuzz_gpu", "busid", cvd(0, 0, 1, "00000000:18:00.0"))
put("fuzz_gpu", "busid-short", cvd(0, 0, 1, "3b:1f.7"))
put("fuzz_gpu", "nproc", cvd(0, 0, 1, "4096"))
put("fuzz_gpu", "bind-mode", cvd(0, 0, 1, "core-complex"))

# ---- #! lines of worker scripts ----
put("fuzz_shebang", "env", b"#!/usr/bin/env python3\nimport os\n")
put("fuzz_shebang", "env-S", b"#!/usr/bin/env -S -u X A=1 python3.12 -u\n")
put("fuzz_shebang", "direct", b"#! /opt/venv/bin/python -E\r\n")
put("fuzz_shebang", "shell", b"#!/bin/sh\nexec python3 x\n")

# ---- templates (output room - 1, template) ----
put("fuzz_template", "prefix", b"\xff[${role_name}${local_rank}]:")
put("fuzz_template", "args", b"\xff--out=/tmp/r$local_rank/${rank}.log")
put("fuzz_template", "dollars", b"\xff$$rank $${rank} $ ${ ${rank $unknown $d $empty$")
put("fuzz_template", "cut", b"\x04[rank${rank}]: $group_rank")

# ---- auth token files (mode/role byte, token length LE16, token, snonce NUL cnonce NUL proof) ----
def auth(mode_role, token, sn=b"", cn=b"", got=b""):
    return bytes([mode_role]) + len(token).to_bytes(2, "little") + token + sn + b"\0" + cn + b"\0" + got


N1 = b"0123456789abcdef" * 4
N2 = b"fedcba9876543210" * 4
put("fuzz_auth", "token", auth(0, b"0123456789abcdef0123456789abcdef\n", N1, N2, b"00" * 32))
put("fuzz_auth", "server-role", auth(0x81, b"a-token-of-enough-bytes \r\n", N2, N1, N1))
put("fuzz_auth", "group-readable", auth(2, b"0123456789abcdef0123456789abcdef", N1, N2))
put("fuzz_auth", "world-readable", auth(3, b"0123456789abcdef0123456789abcdef"))
put("fuzz_auth", "short", auth(0, b"short token\n\n"))
put("fuzz_auth", "long", auth(0, b"x" * 1025))
put("fuzz_auth", "max", auth(1, b"y" * 1024, N1, N1))
put("fuzz_auth", "bad-nonce", auth(0, b"0123456789abcdef0123456789abcdef", N1.upper(), N2))

# ---- Slurm node lists (pick byte, list, NUL, tasks per node) ----
HOSTLISTS = {
    "scontrol": "tux[1-3]",
    "names": "alpha,beta,gamma",
    "ranges": "lx[15,18,32-33]",
    "groups": "rack[0-63]_blade[0-41]",
    "padded": "linux[0000-1023]",
    "suffix": "gpu-[01-16]-ib",
    "prefixes": "a[1-2],b3,c[5-6]",
    "widths": "n[08-10,7],n[8-10]",
    "spaces": "a b\tc\nd,,e",
    "bad-open": "n[1-3",
    "bad-back": "n[3-1]",
}
for name, text in HOSTLISTS.items():
    put("fuzz_hostlist", name, b"\x05" + text.encode())
put("fuzz_hostlist", "tasks", b"\x03n[1-4]\x002(x3),1")
put("fuzz_hostlist", "tasks-bad", b"\x01n1\x002(x")
put("fuzz_hostlist", "step", b"\x81n[01-04]\x001(x4)")
put("fuzz_hostlist", "step-2tasks", b"\x82gpu-[1-2]-ib\x002(x2)")

# ---- stack dumps (room/flag byte, then one dump per rank, NUL between) ----
FH = (b"Fatal Python error: Aborted\n\n"
      b"Thread 0x00007fb9f29976c0 (most recent call first):\n"
      b"  File \"/usr/lib/python3.11/threading.py\", line 320 in wait\n\n"
      b"Current thread 0x00007fb9f37dbb80 (most recent call first):\n"
      b"  File \"/w/hang.py\", line %d in %s\n"
      b"  File \"/w/hang.py\", line 60 in main\n"
      b"  File \"/w/hang.py\", line 70 in <module>\n\n"
      b"Extension modules: torch._C (total: 1)\n")
GDB = (b"Thread 2 (Thread 0x7ff441b5f6c0 (LWP 14131) \"hang\"):\n"
       b"#0  0x00007ff441c36df2 in __libc_pause () at pause.c:29\n"
       b"#1  0x000055d69b77015a in th (a=0x0) at /tmp/hang.c:3\n\n"
       b"Thread 1 (Thread 0x7ff441b60740 (LWP 1234) \"hang\"):\n"
       b"#0  0x00007ff441c36df2 in __libc_pause () at pause.c:29\n"
       b"#1  0x000055d69b770165 in hang_here () at /tmp/hang.c:4\n"
       b"#2  main () at /tmp/hang.c:5\n"
       b"#3  0x00007f0000000000 in gloo::wait(std::chrono::duration<long>) () from /lib/libgloo.so\n"
       b"#4  0x00007f0000000001 in ?? ()\n")
EU = b"PID 1234 - process\nTID 1234:\n#0  0x00007f3c5e8e3df2 __libc_pause\n#1  0x0 syscall:pause\nTID 78:\n#0  0x1 th\n"
PYSPY = (b"Process 1234: python3 hang.py\nPython v3.11.2 (/usr/bin/python3.11)\n\n"
         b"Thread 1234 (idle): \"MainThread\"\n    hang_here (hang.py:31)\n    <module> (hang.py:70)\n")
ok = FH % (12, b"backward")
put("fuzz_stackdump", "faulthandler-odd", b"\xff" + b"\0".join([ok, ok, FH % (31, b"hang_here"), ok]))
put("fuzz_stackdump", "faulthandler-flag", b"\x06" + b"\0".join([ok, FH % (31, b"hang_here")]))
put("fuzz_stackdump", "gdb", b"\x40" + GDB + b"\0" + GDB)
put("fuzz_stackdump", "eu-stack", b"\x80" + EU + b"\0" + b"\r\n".join(EU.split(b"\n")))
put("fuzz_stackdump", "py-spy", b"\xff" + PYSPY + b"\0\0" + PYSPY)
put("fuzz_stackdump", "stack-only", b"\x10Stack (most recent call first):\n  <no Python frame>\n  ...\n")

# ---- the round rule (job: phase round min max budget spent join_s started
#      armed over join_over pad; then per node: state rank/host nproc flags) ----
def djob(phase, mn, mx, budget=1, spent=0, started=0, armed=0, over=0,
         jover=0, rnd=0):
    return bytes([phase, rnd, mn - 1, mx - mn, budget, spent, 30, started,
                  armed, over, jover, 0])


def dnode(state, host, rank=None, nproc=1, member=None, offline=0, why=0):
    b1 = host | (0x80 | rank << 3 if rank is not None else 0)
    b3 = (0x80 | member if member is not None else 0) | offline | why << 1
    return bytes([state, b1, nproc - 1, b3])


W, STOP, RUN, DONE, FAIL, LOST, GONE = range(7)
put("fuzz_decide", "forming-max",
    djob(0, 2, 3) + dnode(W, 2) + dnode(W, 6, 1) + dnode(W, 7, 0) +
    dnode(W, 3) + dnode(W, 4))
put("fuzz_decide", "forming-restart",
    djob(0, 2, 3, started=1, rnd=2) + dnode(W, 0) + dnode(W, 1) +
    dnode(STOP, 2))
put("fuzz_decide", "running-failed",
    djob(1, 2, 3, budget=1) + dnode(RUN, 0, member=0) +
    dnode(FAIL, 1, member=1, why=1) + dnode(RUN, 2, member=2, offline=1))
put("fuzz_decide", "running-lost",
    djob(1, 2, 2) + dnode(DONE, 0, member=0) + dnode(LOST, 1, member=1) +
    dnode(W, 2))

# ---- what operators see (label room - 1, then the string) ----
put("fuzz_observe", "fd", b"\xff" + b"fd:3")
put("fuzz_observe", "fd-bad", b"\xff" + b"fd:99999999")
put("fuzz_observe", "port", b"\xff" + b"127.0.0.1:9100")
put("fuzz_observe", "port-v6", b"\xff" + b"[::1]:0")
put("fuzz_observe", "run-id", b"\x10" + b'job "42"\\\n\xc3\xa9\xff')
