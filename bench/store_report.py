"""Turn bench/store.sh's raw loadgen lines into bench/results/store.md.

usage: python3 store_report.py RAW < header-lines > store.md
"""
import shlex
import sys

SERVERS = ["cgrun", "torch113", "torch26", "floor", "floor-uring"]
NAMES = {"cgrun": "cgrun-rdzvd", "torch113": "torch 1.13", "torch26": "torch 2.6",
         "floor": "floor (epoll)", "floor-uring": "floor (io_uring)"}
FLOORS = ["floor", "floor-uring"]


def parse(path):
    rows = []
    for line in open(path):
        d = {}
        for tok in shlex.split(line):
            if "=" in tok:
                k, v = tok.split("=", 1)
                d[k] = v
            else:
                d[tok] = ""	# a bare word: "run" starts a run's header line
        rows.append(d)
    return rows


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def fmt(v, nd=0):
    if v is None:
        return "—"
    return ("%%.%df" % nd) % v


def find(rows, server, **kw):
    """The last matching row (a re-run appended to RAW wins)."""
    for r in reversed(rows):
        if r.get("server") == server and all(r.get(k) == str(v) for k, v in kw.items()):
            return r
    return None


def ops_cell(rows, server, op, n):
    """The median (by server CPU per op) of the cell's repeats in the newest
    run that measured it; a failure line if that run has no good line."""
    block, found = 0, []
    for r in rows:
        if "run" in r:
            block += 1
        if r.get("server") != server:
            continue
        if (r.get("mode") == "ops" and r.get("op") == op and r.get("conns") == str(n)) \
                or r.get("args") == "ops,%s,%d" % (op, n):
            found.append((block, r))
    if not found:
        return None
    newest = found[-1][0]
    cell = [r for b, r in found if b == newest]
    good = sorted((r for r in cell if not r.get("failed") and num(r.get("cpu_us_per_op")) is not None),
                  key=lambda r: num(r["cpu_us_per_op"]))
    return good[(len(good) - 1) // 2] if good else cell[-1]


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def main():
    rows = parse(sys.argv[1])
    present = [s for s in SERVERS if any(r.get("server") == s and "mode" in r for r in rows)]
    torches = [s for s in present if s.startswith("torch")]
    floors = [s for s in present if s in FLOORS]
    stores = [s for s in present if s not in FLOORS]
    out = ["# Store benchmark: cgrun-rdzvd vs torch's own TCPStore servers", ""]
    out += ["- " + l.strip() for l in sys.stdin if l.strip()]
    out += ["- raw loadgen output: `bench/results/store.raw`; runs that wrote it "
            "(operations: the median, by server CPU per operation, of a cell's repeats in the newest "
            "run that measured it; other tables: the last line of each cell):"]
    out += ["  - %s" % ", ".join("%s=%s" % kv for kv in sorted(r.items()) if kv[0] != "run")
            for r in rows if "run" in r]
    out += [""]
    out += ["Load generator: `bench/loadgen.c`, one thread, epoll, N connections with one "
            "request in flight each; client and server share the machine's cores, so on a "
            "2-core machine the load generator bounds ops/s and latency.  Server CPU is "
            "utime+stime of the server process (/proc/PID/stat, all threads, 10 ms ticks) "
            "over the measured interval divided by the operations completed.  `set` is "
            "SET + an empty CHECK in one segment (SET has no reply); `tget` is torch's "
            "client get(): WAIT then GET.  torch 1.13 is driven in its own dialect, the "
            "others in the 2.x dialect.  The floor servers (`bench/floor.c`) are not stores: they "
            "answer each request with canned bytes of the right shape, one recv and one send per "
            "readable connection (epoll) or the same as io_uring submissions, so their CPU per "
            "operation is what the kernel charges any server for reading a request and sending "
            "its reply on loopback.", ""]
    for s in [s for s in SERVERS if s not in present]:
        why = ("built without liburing-dev, or left out by BENCH_FLOORS" if s == "floor-uring"
               else "left out by BENCH_FLOORS" if s in FLOORS
               else "unavailable, or left out by BENCH_SERVERS")
        out += ["**%s: not measured in this run (%s).**" % (NAMES[s], why), ""]

    out += ["## Operations", "",
            "ops/s · p50/p99 latency (µs) · server CPU µs per operation", ""]
    hdr = "| op | conns | " + " | ".join(NAMES[s] for s in present) + " | CPU/op cgrun ÷ best torch |"
    if floors:
        hdr += " CPU/op floor ÷ best torch |"
    out += [hdr, "|" + "---|" * (3 + len(present) + (1 if floors else 0))]
    worst_cpu = None
    floor_rt = []
    for op in ["set", "get", "add", "cas", "tget"]:
        for n in [1, 16, 256, 1024]:
            cells, cpu = [], {}
            for s in present:
                r = ops_cell(rows, s, op, n)
                if r is None or r.get("failed"):
                    cells.append("failed: %s" % (r or {}).get("error", "missing")[:60])
                    continue
                cpu[s] = num(r.get("cpu_us_per_op"))
                cells.append("%s · %s/%s · %s" % (fmt(num(r["ops_per_s"])), r["p50_us"],
                                                  r["p99_us"], fmt(cpu[s], 2)))
            best = min([cpu[t] for t in torches if cpu.get(t)] or [None]) if torches else None
            rt = ratio(cpu.get("cgrun"), best)
            if rt is not None:
                worst_cpu = rt if worst_cpu is None else max(worst_cpu, rt)
            line = "| %s | %d | %s | %s |" % (op, n, " | ".join(cells), fmt(rt, 2))
            if floors:
                fl = min([cpu[f] for f in floors if cpu.get(f)] or [None])
                frt = ratio(fl, best)
                if frt is not None:
                    floor_rt.append(frt)
                line += " %s |" % fmt(frt, 2)
            out.append(line)
    out.append("")

    def table(mode, title, cols):
        o = ["## " + title, "",
             "| N | " + " | ".join(NAMES[s] for s in stores) + " | cgrun ÷ best torch (time) |",
             "|" + "---|" * (2 + len(stores))]
        res = {}
        sizes = sorted({int(r["conns"]) for r in rows if r.get("mode") == mode and "conns" in r})
        for n in sizes:
            cells, ms = [], {}
            for s in stores:
                r = find(rows, s, mode=mode, conns=n)
                if r is None:
                    cells.append("failed")
                    continue
                ok = r.get("ok") == "1"
                ms[s] = num(r["ms"]) if ok else None
                cells.append(("%s ms" % r["ms"] if ok else "did not finish (%s ms)" % r["ms"])
                             + "".join(", %s %s" % (r.get(c, "?"), c.replace("_", " ")) for c in cols))
            best = min([ms[t] for t in torches if ms.get(t)] or [None]) if torches else None
            rt = ratio(ms.get("cgrun"), best)
            res[n] = (rt, ms)
            o.append("| %d | %s | %s |" % (n, " | ".join(cells), fmt(rt, 3)))
        return o + [""], res

    t, barrier = table("barrier", "Store barrier, burst pattern (one loadgen process, N pre-connected "
                       "sockets, every ADD written at once, then WAIT on the last-worker key)", [])
    out += t + ["This pattern measures a server receiving N requests at once; with real torch "
                     "clients, whose arrivals are spread, the servers come much closer: see "
                     "bench/results/store_barrier.md.", ""]
    t, storm = table("storm", "Connect storm (N clients connect at once, handshake, ADD)",
                     ["retries", "listen_overflows"])
    out += t

    out += ["## 10,000 idle connections, one healthy client (200 sequential ADDs)", "",
            "| server | connect ms | p50 µs | p99 µs | max µs | timeouts (2 s) |", "|---|---|---|---|---|---|"]
    idle = {}
    for s in stores:
        r = find(rows, s, mode="idle")
        if r is None or r.get("failed"):
            out.append("| %s | failed: %s |  |  |  |  |" % (NAMES[s], (r or {}).get("error", "missing")))
            continue
        idle[s] = r
        out.append("| %s | %s | %s | %s | %s | %s |" % (NAMES[s], r["connect_ms"], r.get("p50_us", "—"),
                                                     r.get("p99_us", "—"), r.get("max_us", "—"), r["timeouts"]))
    out.append("")

    out += ["## Targets", ""]
    b = barrier.get(8192, (None, {}))[0]
    st = storm.get(8192, (None, {}))[0]
    sr = find(rows, "cgrun", mode="storm", conns=8192)
    ov = int(sr["listen_overflows"]) if sr and sr.get("listen_overflows", "-1").lstrip("-").isdigit() else None
    ir = idle.get("cgrun")
    healthy = None
    if ir and ir.get("max_us") and ir["timeouts"] == "0":
        healthy = max(float(ir["connect_ms"]), float(ir["max_us"]) / 1000)

    def verdict(ok, value=0):
        if value is None:
            return "not measured"
        return "**met**" if ok else "**not met**"

    out.append("- server CPU per operation ≤ 1/3 of torch's best: worst cell ratio %s → %s"
               % (fmt(worst_cpu, 2), verdict(worst_cpu is not None and worst_cpu <= 1 / 3, worst_cpu)))
    if floor_rt:
        out.append("  - the floor servers, which only read each request and send its reply, "
                   "spend %s–%s of torch's best CPU per operation (median %s): the kernel's share "
                   "alone is above 1/3 in %d of %d cells"
                   % (fmt(min(floor_rt), 2), fmt(max(floor_rt), 2),
                      fmt(sorted(floor_rt)[(len(floor_rt) - 1) // 2], 2),
                      sum(1 for x in floor_rt if x > 1 / 3), len(floor_rt)))
    out.append("- barrier of 8,192 clients ≤ 1/3 of torch's best time, burst pattern only "
               "(not real torch clients: bench/results/store_barrier.md): ratio %s → %s"
               % (fmt(b, 3), verdict(b is not None and b <= 1 / 3, b)))
    out.append("- connect storm of 8,192 ≤ 1/10 of torch's best time: ratio %s → %s; "
               "listen-queue overflows during cgrun's storm: %s → %s"
               % (fmt(st, 3), verdict(st is not None and st <= 0.1, st), ov, verdict(ov == 0, ov)))
    out.append("- healthy client with 10,000 idle connections served in < 10 ms (connect and every op): "
               "worst %s ms → %s" % (fmt(healthy, 2), verdict(healthy is not None and healthy < 10, healthy)))
    print("\n".join(out))


if __name__ == "__main__":
    main()
