#!/usr/bin/env python3
"""Streams (issue 17): goblin-core vs redis-server in the same run.

    /usr/bin/python3 bench/streams_benchmark.py [--goblin build-release/goblin-core]
        [--redis /usr/bin/redis-server] [--requests 200000] [--runs 5]
        [--entries 1000000] [--wakes 300] [--rows xack,xreadgroup,...]

Both servers run at the same time, pinned to CPU 0 (taskset, all threads);
redis-benchmark runs pinned to CPU 1 over the Unix socket, 50 clients.
Each row runs `runs` times per server, the servers alternating, and the
median is reported with the ratio goblin/redis.

Throughput rows (requests per second):
  XADD (pipeline 64)     XADD s * f1 <12 digits> f2 <12 digits> f3 <12 digits>
  XRANGE of 100 (P 16)   XRANGE s - + COUNT 100 over the stream XADD built
  XREADGROUP (P 64)      XREADGROUP GROUP g c COUNT 1 STREAMS q >, on a
                         stream preloaded with enough entries (IDs 1-0 ...)
  XACK (P 64)            XACK q g <random preloaded ID>, on the pending list
                         the XREADGROUP row left (ones already acked ack 0)
  consumer loop          entries read and acknowledged per second,
                         1 / (1/XREADGROUP + 1/XACK)
Latency row:
  park-to-wake           a consumer parked in XREADGROUP ... BLOCK 0, a
                         producer's XADD: microseconds from sending the
                         XADD to the consumer's reply (median of `wakes`,
                         the same Python clients for both servers)
Memory row:
  memory per entry       INFO used_memory delta / entries after `entries`
                         XADDs of three small fields (values 12 digits)
Queue table (stream queue vs the list reliable-queue pattern, pipeline 64):
  produce   XADD q2 * job <v>              vs LPUSH lq <v>
  take      XREADGROUP ... COUNT 1 ... >   vs LMOVE lq processing RIGHT LEFT
  ack       XACK q g <id>                  vs LREM inflight 1 <v> on a worker's
                                              10-entry in-flight list (a value
                                              not there: the whole list is
                                              scanned, the cost of the worst hit)
  wake      XREADGROUP BLOCK park-to-wake  vs BLMOVE park-to-wake

--rows measures only the named groups of rows, comma-separated, of:
  xadd xrange xreadgroup xack wake queue memory (the default: all). The
consumer loop is printed when both xreadgroup and xack are measured.

Needs /usr/bin/python3 (the socket client is test/integration/gbtest.py's),
redis-benchmark and taskset.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "integration"))


def want(group):
    return group in ARGS.rows


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--goblin", default=os.path.join(ROOT, "build-release", "goblin-core"))
    ap.add_argument("--redis", default=shutil.which("redis-server") or "/usr/bin/redis-server")
    ap.add_argument("--benchmark", default=shutil.which("redis-benchmark") or "/usr/bin/redis-benchmark")
    ap.add_argument("--requests", type=int, default=200000, help="redis-benchmark -n per run")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--entries", type=int, default=1000000, help="entries for the memory row")
    ap.add_argument("--wakes", type=int, default=300, help="park-to-wake rounds per run")
    ap.add_argument("--rows", default=",".join(ROWS),
                    help="comma-separated groups of rows to measure, of: %s (default: all)" % " ".join(ROWS))
    a = ap.parse_args()
    a.rows = [r.strip() for r in a.rows.split(",") if r.strip()]
    unknown = [r for r in a.rows if r not in ROWS]
    if unknown or not a.rows:
        ap.error("--rows: unknown %s; choose from %s" % (" ".join(unknown) or "(none given)", " ".join(ROWS)))
    return a


ROWS = ("xadd", "xrange", "xreadgroup", "xack", "wake", "queue", "memory")


ARGS = parse_args()
ARGS.goblin = os.path.abspath(ARGS.goblin)  # servers start in their own directories
os.environ["GOBLIN_SERVER"] = ARGS.goblin
import gbtest  # noqa: E402  (reads GOBLIN_SERVER at import)
from gbtest import Raw, Server, encode  # noqa: E402

gbtest.REDIS_SERVER = ARGS.redis
KINDS = ("goblin", "redis")


def pin(pid, cpu):
    subprocess.run(["taskset", "-a", "-p", "-c", str(cpu), str(pid)], check=True, stdout=subprocess.DEVNULL)


def bench(srv, args, pipeline=64, n=None, r=100000):
    cmd = ["taskset", "-c", "1", ARGS.benchmark, "-s", srv.sock, "-P", str(pipeline), "-c", "50", "-n",
           str(n or ARGS.requests), "-r", str(r), "--csv"] + [str(a) for a in args]
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    for line in out.splitlines():
        m = re.match(r'"([^"]*)","([0-9.]+|inf)"', line)
        if m:
            return float(m.group(2))
    raise RuntimeError("no result from redis-benchmark: %r" % out)


def preload(srv, key, n, group=None):
    """key gets entries 1-0 .. n-0 (one field), and a group at 0 if asked."""
    with Raw(srv, timeout=300) as c:
        c.call("DEL", key)
        batch = 1000
        for i in range(1, n + 1, batch):
            cmds = [encode("XADD", key, "%d-0" % j, "job", "payload-%d" % j) for j in range(i, min(n + 1, i + batch))]
            c.send(b"".join(cmds))
            for _ in cmds:
                c.read()
        if group:
            c.call("XGROUP", "CREATE", key, group, "0")


def park_to_wake(srv, rounds, kind="stream"):
    """Median microseconds from a producer's write to a parked consumer's reply."""
    samples = []
    with Raw(srv) as prod, Raw(srv) as cons:
        if kind == "stream":
            prod.call("DEL", "w")
            prod.call("XGROUP", "CREATE", "w", "g", "$", "MKSTREAM")
        else:
            prod.call("DEL", "wl", "wp")
        for i in range(rounds):
            if kind == "stream":
                cons.send_cmd("XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "COUNT", 1, "STREAMS", "w", ">")
            else:
                cons.send_cmd("BLMOVE", "wl", "wp", "RIGHT", "LEFT", 0)
            while int(srv.info("clients")["blocked_clients"]) != 1:
                time.sleep(0.0005)
            t0 = time.perf_counter()
            if kind == "stream":
                prod.send_cmd("XADD", "w", "*", "job", i)
            else:
                prod.send_cmd("LPUSH", "wl", i)
            cons.read()
            samples.append((time.perf_counter() - t0) * 1e6)
            prod.read()
    return statistics.median(samples)


def memory_per_entry(kind):
    srv = Server(kind)
    try:
        with Raw(srv) as c:
            c.call("XADD", "warm", "*", "a", "1")
            c.call("DEL", "warm")
        before = srv.used_memory()
        bench(srv, ["XADD", "m", "*", "f1", "__rand_int__", "f2", "__rand_int__", "f3", "__rand_int__"],
              n=ARGS.entries, r=1000000)
        with Raw(srv) as c:
            n = c.call("XLEN", "m")
        return (srv.used_memory() - before) / n
    finally:
        srv.cleanup()


def row(name, fn, servers, results):
    vals = {k: [] for k in KINDS}
    for _ in range(ARGS.runs):
        for k in KINDS:
            vals[k].append(fn(servers[k]))
    results[name] = {k: statistics.median(v) for k, v in vals.items()}
    g, r = results[name]["goblin"], results[name]["redis"]
    print("  %-28s goblin %12.1f   redis %12.1f   ratio %.2f" % (name, g, r, g / r), flush=True)


def reset_group(srv, n):
    preload(srv, "q", n, group="g")


def queue_table(servers, results, readgroup, ack):
    N = ARGS.requests
    print("\nQueue: stream vs list reliable queue on the same servers (requests/s, P 64):")
    row("list produce LPUSH", lambda s: bench(s, ["LPUSH", "lq", "job-__rand_int__"]), servers, results)
    row("stream produce XADD", lambda s: bench(s, ["XADD", "q2", "*", "job", "job-__rand_int__"]), servers,
        results)

    def lmove(s):
        with Raw(s) as c:
            c.call("DEL", "lq", "processing")
        bench(s, ["LPUSH", "lq", "job-__rand_int__"], n=N + 100000)
        return bench(s, ["LMOVE", "lq", "processing", "RIGHT", "LEFT"])
    row("list take LMOVE", lmove, servers, results)
    row("stream take XREADGROUP", readgroup, servers, results)
    def lrem(s):
        with Raw(s) as c:
            c.call("DEL", "inflight")
            c.call("RPUSH", "inflight", *["job-%d" % i for i in range(10)])
        return bench(s, ["LREM", "inflight", "1", "job-absent"])
    row("list ack LREM", lrem, servers, results)
    row("stream ack XACK", ack, servers, results)
    row("list BLMOVE park-to-wake (us)", lambda s: park_to_wake(s, ARGS.wakes, "list"), servers, results)
    row("stream XREADGROUP wake (us)", lambda s: park_to_wake(s, ARGS.wakes), servers, results)


def main():
    for tool in (ARGS.goblin, ARGS.redis, ARGS.benchmark):
        if not os.path.exists(tool):
            sys.exit("missing %s" % tool)
    servers = {k: Server(k, args=["--save", ""] if k == "goblin" else []) for k in KINDS}
    results = {}
    try:
        for s in servers.values():
            pin(s.pid, 0)
        N = ARGS.requests
        print("Throughput (requests/s), redis-benchmark -c 50 -n %d, median of %d runs, servers alternating:"
              % (N, ARGS.runs), flush=True)
        if want("xadd") or want("xrange"):
            row("XADD (P 64)", lambda s: bench(s, ["XADD", "s", "*", "f1", "__rand_int__", "f2", "__rand_int__",
                                                   "f3", "__rand_int__"]), servers, results)
        if want("xrange"):
            row("XRANGE of 100 (P 16)", lambda s: bench(s, ["XRANGE", "s", "-", "+", "COUNT", "100"], pipeline=16,
                                                        n=N // 4), servers, results)

        def readgroup(s):
            reset_group(s, N)
            return bench(s, ["XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "q", ">"])

        def ack(s):
            reset_group(s, N)
            bench(s, ["XREADGROUP", "GROUP", "g", "c", "COUNT", "100", "STREAMS", "q", ">"], n=N // 100 + 50)
            return bench(s, ["XACK", "q", "g", "__rand_int__-0"], r=N)
        if want("xreadgroup"):
            row("XREADGROUP COUNT 1 (P 64)", readgroup, servers, results)
        if want("xack"):
            row("XACK (P 64)", ack, servers, results)
        if want("xreadgroup") and want("xack"):
            for k in KINDS:
                a, b = results["XREADGROUP COUNT 1 (P 64)"][k], results["XACK (P 64)"][k]
                results.setdefault("consumer loop (entries/s)", {})[k] = 1 / (1 / a + 1 / b)
            lp = results["consumer loop (entries/s)"]
            print("  %-28s goblin %12.1f   redis %12.1f   ratio %.2f"
                  % ("consumer loop (entries/s)", lp["goblin"], lp["redis"], lp["goblin"] / lp["redis"]))
        if want("wake"):
            print("\nLatency (microseconds, lower is better), median of %d wakes, median of runs:" % ARGS.wakes)
            row("XREADGROUP park-to-wake", lambda s: park_to_wake(s, ARGS.wakes), servers, results)

        if want("queue"):
            queue_table(servers, results, readgroup, ack)
    finally:
        for s in servers.values():
            s.cleanup()

    if not want("memory"):
        return
    print("\nMemory: used_memory delta per entry, %d XADDs of 3 fields (12-digit values):" % ARGS.entries)
    mem = {k: memory_per_entry(k) for k in KINDS}
    print("  %-28s goblin %12.1f   redis %12.1f   ratio %.2f" % ("bytes per entry", mem["goblin"], mem["redis"],
                                                                   mem["goblin"] / mem["redis"]))


if __name__ == "__main__":
    main()
