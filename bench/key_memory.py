#!/usr/bin/env python3
"""Bytes per key for small string keys: goblin-core beside redis-server.

Issue 34's memory workloads, each on a fresh server:
  small     1M keys `key:%08d` -> 16-byte values
  small-ttl the same keys, each with an expiry (SET ... EX 100000)
  value100  1M keys `key:%08d` -> 100-byte values
Each trial starts the server (bench/socket_compare.py's Server: its own
Unix socket and directory, pinned to SERVER_CORE, default 0) and first
warms it with as many ECHO commands as the load has SETs, each as long as
a SET's key and value: what a server allocates once for its clients and
keeps (goblin-core's io_uring receive buffers, 8 MB counted in used_memory
from the start but not resident until requests land in them; Redis's query
and reply buffers) is then resident before the first reading, not charged
to the keys. It asks for MEMORY PURGE (both servers hand their free pages
back to the system), waits --settle seconds, reads INFO memory
(used_memory) and the process's VmRSS, loads the keys with `redis-cli
--pipe` (on CLIENT_CORE, default 1), reads the RSS at once (printed per
trial), waits --settle seconds again, reads both again, and divides the
deltas by the key count. Servers alternate within each trial so that both
see the same machine; the table gives the median over trials of the
settled figures.

  /usr/bin/python3 bench/key_memory.py --goblin build-release/goblin-core \
      [--goblin-base OTHER_BINARY] [--trials 3] [--keys 1000000] [--settle 12]

--goblin-base adds a second goblin-core column (an earlier commit's build),
measured in the same trials, for before/after comparisons.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from socket_compare import CLIENT_CORE, Server  # noqa: E402

WORKLOADS = {
    "small": (16, None),
    "small-ttl": (16, 100000),
    "value100": (100, None),
}


def payload(path, keys, vlen, ttl):
    val = "v" * vlen
    with open(path, "w") as f:
        w = f.write
        for i in range(keys):
            k = "key:%08d" % i
            if ttl is None:
                w("*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, vlen, val))
            else:
                t = str(ttl)
                w("*5\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$2\r\nEX\r\n$%d\r\n%s\r\n" % (len(k), k, vlen, val, len(t), t))


def warmup_payload(path, keys, vlen):
    """ECHO commands as many and as long as the load's SETs: they store nothing."""
    arg = "w" * (len("key:%08d" % 0) + vlen)
    with open(path, "w") as f:
        f.write(("*2\r\n$4\r\nECHO\r\n$%d\r\n%s\r\n" % (len(arg), arg)) * keys)


def pipe(srv, path):
    with open(path, "rb") as f:
        subprocess.run(["taskset", "-c", CLIENT_CORE, "redis-cli", "-s", srv.sock, "--pipe"], stdin=f,
                       stdout=subprocess.DEVNULL, check=True)


def measure(kind, binary, warm_path, load_path, keys, settle):
    srv = Server(binary, kind)
    try:
        pipe(srv, warm_path)
        srv.call(b"MEMORY", b"PURGE")
        time.sleep(settle)
        used0, rss0 = srv.info("used_memory"), srv.rss()
        pipe(srv, load_path)
        n = int(srv.call(b"DBSIZE")[1:])
        if n != keys:
            raise RuntimeError("%s holds %d keys, expected %d" % (binary, n, keys))
        rss_at_once = srv.rss()
        time.sleep(settle)
        used1, rss1 = srv.info("used_memory"), srv.rss()
        alloc = re.search(r"^mem_allocator:(\S+)", srv.call(b"INFO", b"memory").decode(), re.M).group(1)
        return (used1 - used0) / keys, (rss1 - rss0) / keys, (rss_at_once - rss0) / keys, alloc
    finally:
        srv.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--goblin", required=True)
    ap.add_argument("--goblin-base", help="a second goblin-core binary (an earlier commit) measured alongside")
    ap.add_argument("--redis", default=shutil.which("redis-server") or "redis-server")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--keys", type=int, default=1000000)
    ap.add_argument("--only", help="comma-separated workloads (%s)" % ",".join(WORKLOADS))
    ap.add_argument("--settle", type=float, default=12.0,
                    help="seconds to wait after the warm-up and after the load before reading (default 12)")
    args = ap.parse_args()

    servers = [("goblin", args.goblin)]
    if args.goblin_base:
        servers.append(("goblin-base", args.goblin_base))
    servers.append(("redis", args.redis))
    names = args.only.split(",") if args.only else list(WORKLOADS)
    rows = []
    tmp = tempfile.mkdtemp(prefix="keymem-load-")
    try:
        for name in names:
            vlen, ttl = WORKLOADS[name]
            load = os.path.join(tmp, name + ".resp")
            warm = os.path.join(tmp, name + ".warm.resp")
            payload(load, args.keys, vlen, ttl)
            warmup_payload(warm, args.keys, vlen)
            res = {s: ([], []) for s, _ in servers}
            for t in range(args.trials):
                order = servers if t % 2 == 0 else list(reversed(servers))
                for label, binary in order:
                    used, rss, rss_at_once, alloc = measure("redis" if label == "redis" else "goblin", binary, warm,
                                                            load, args.keys, args.settle)
                    res[label][0].append(used)
                    res[label][1].append(rss)
                    print("%-10s trial %d %-12s used %6.1f B/key  rss %6.1f B/key (%.1f at once)  (%s)" %
                          (name, t + 1, label, used, rss, rss_at_once, alloc), file=sys.stderr, flush=True)
            os.unlink(load)
            os.unlink(warm)
            rows.append((name, vlen, ttl, {s: (statistics.median(u), statistics.median(r)) for s, (u, r) in res.items()}))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    labels = [s for s, _ in servers]
    head = "| workload | payload B/key |"
    sep = "|---|---:|"
    for s in labels:
        head += " %s used | %s RSS |" % (s, s)
        sep += "---:|---:|"
    head += " goblin/redis used | goblin/redis RSS |"
    sep += "---:|---:|"
    print(head)
    print(sep)
    for name, vlen, ttl, med in rows:
        line = "| %s | %d |" % (name, 12 + vlen)
        for s in labels:
            line += " %.1f | %.1f |" % med[s]
        line += " %.2fx | %.2fx |" % (med["goblin"][0] / med["redis"][0], med["goblin"][1] / med["redis"][1])
        print(line)


if __name__ == "__main__":
    main()
