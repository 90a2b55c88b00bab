#!/usr/bin/env python3
"""Hashes, sets and sorted sets: memory per element and throughput,
goblin-core vs redis-server in the same run.

    /usr/bin/python3 bench/types_memory.py [--goblin build-release/goblin-core]
        [--redis /usr/bin/redis-server] [--n 1000000] [--small 100000]
        [--requests 2000000] [--runs 3] [--no-memory] [--no-throughput]
        [--svg docs/img/types.svg]

Memory. For each structure a fresh server is started, its INFO memory
used_memory and its RSS (/proc/<pid>/status VmRSS) are read, the data is
loaded (pipelined, 1,000 elements per command), and both are read again.
Reported per element: the used_memory delta and the RSS delta.
  large: one key of n elements -- a hash (field:N -> value:N), a set
         (member:N) and a sorted set (member:N with a random integer score
         in [0, 10^9));
  small: `small` keys of 10 elements each, same element names (the keys'
         own records are included in the per-element figure).
Defaults everywhere (hash/zset-max-listpack-entries 128, ...).
redis-server 7.0 keeps small sets of strings in a hashtable (listpack sets
arrived in 7.2); goblin-core uses a listpack.

Throughput. Both servers run at the same time, pinned to CPU 0 (taskset,
all threads); redis-benchmark runs pinned to CPU 1 over the Unix socket,
pipeline 64, 50 clients, -r 100000. Each row runs `runs` times per server,
alternating servers, and the median is reported. Rows: HSET, SADD, ZADD
(redis-benchmark's -t tests), then on the sorted set ZADD filled:
ZSCORE myzset element:__rand_int__, ZRANK, ZRANGE myzset 0 9 WITHSCORES,
ZRANGEBYSCORE myzset __rand_int__ +inf LIMIT 0 10, and HGET.

Needs /usr/bin/python3 (the socket client is test/integration/gbtest.py's).
"""

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "integration"))

CHUNK = 1000


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--goblin", default=os.path.join(ROOT, "build-release", "goblin-core"))
    ap.add_argument("--redis", default=shutil.which("redis-server") or "/usr/bin/redis-server")
    ap.add_argument("--benchmark", default=shutil.which("redis-benchmark") or "/usr/bin/redis-benchmark")
    ap.add_argument("--n", type=int, default=1000000, help="elements of each large structure")
    ap.add_argument("--small", type=int, default=100000, help="number of 10-element keys")
    ap.add_argument("--requests", type=int, default=2000000, help="redis-benchmark -n per run")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--no-throughput", action="store_true")
    ap.add_argument("--svg", help="write a bar chart of the results here")
    return ap.parse_args()


ARGS = parse_args()
ARGS.goblin = os.path.abspath(ARGS.goblin)
os.environ["GOBLIN_SERVER"] = ARGS.goblin
os.environ["REDIS_SERVER"] = ARGS.redis

import gbtest  # noqa: E402
from gbtest import Raw, Server, encode  # noqa: E402

# Any redis-server version: this measures, it does not compare replies (gbtest
# only lets the tests compare with Redis 7.0).
gbtest.REDIS_SERVER = ARGS.redis


# ---- memory ------------------------------------------------------------------------

def send_all(srv, commands):
    """Sends the commands pipelined (32 in flight) and checks no error came back."""
    with Raw(srv, timeout=300) as r:
        pending = 0
        for cmd in commands:
            r.send(encode(*cmd))
            pending += 1
            if pending == 32:
                for _ in range(pending):
                    v, raw = r.read()
                    assert not isinstance(v, gbtest.Err), raw
                pending = 0
        for _ in range(pending):
            v, raw = r.read()
            assert not isinstance(v, gbtest.Err), raw


def settle(srv):
    """used_memory and RSS once they stop moving (allocator background work)."""
    last = None
    for _ in range(40):
        cur = (srv.used_memory(), srv.rss())
        if cur == last:
            break
        last = cur
        time.sleep(0.05)
    return last


def large_commands(kind, n, rng):
    for i in range(0, n, CHUNK):
        ids = range(i, min(n, i + CHUNK))
        if kind == "hash":
            args = [b"HSET", b"h"]
            for j in ids:
                args += [b"field:%d" % j, b"value:%d" % j]
        elif kind == "set":
            args = [b"SADD", b"s"] + [b"member:%d" % j for j in ids]
        else:
            args = [b"ZADD", b"z"]
            for j in ids:
                args += [b"%d" % rng.randrange(10 ** 9), b"member:%d" % j]
        yield args


def small_commands(kind, nkeys, rng):
    for k in range(nkeys):
        key = b"%s:%d" % (kind.encode(), k)
        if kind == "hash":
            args = [b"HSET", key]
            for j in range(10):
                args += [b"field:%d" % j, b"value:%d" % j]
        elif kind == "set":
            args = [b"SADD", key] + [b"member:%d" % j for j in range(10)]
        else:
            args = [b"ZADD", key]
            for j in range(10):
                args += [b"%d" % rng.randrange(10 ** 9), b"member:%d" % j]
        yield args


def measure(server_kind, kind, size):
    rng = random.Random(42)
    srv = Server(server_kind)
    try:
        with Raw(srv) as r:
            r.call("SET", "warm", "x")  # first allocations outside the delta
            r.call("DEL", "warm")
        um0, rss0 = settle(srv)
        if size == "large":
            send_all(srv, large_commands(kind, ARGS.n, rng))
            elements = ARGS.n
            key = {"hash": "h", "set": "s", "zset": "z"}[kind]
        else:
            send_all(srv, small_commands(kind, ARGS.small, rng))
            elements = ARGS.small * 10
            key = "%s:0" % kind
        um1, rss1 = settle(srv)
        with Raw(srv) as r:
            enc = r.call("OBJECT", "ENCODING", key)
        return {"used": (um1 - um0) / elements, "rss": (rss1 - rss0) / elements,
                "encoding": enc.decode() if isinstance(enc, bytes) else str(enc)}
    finally:
        srv.cleanup()


def memory_tables():
    rows = []
    for size in ("large", "small"):
        for kind in ("hash", "set", "zset"):
            g = measure("goblin", kind, size)
            r = measure("redis", kind, size)
            rows.append((size, kind, g, r))
            print("  %s %s: goblin %.1f B (%s), redis %.1f B (%s)" % (size, kind, g["used"], g["encoding"],
                                                                     r["used"], r["encoding"]), file=sys.stderr)
    out = ["| structure | goblin-core used_memory | redis-server used_memory | ratio | goblin-core RSS "
           "| redis-server RSS | ratio | encodings (goblin / redis) |",
           "|---|---:|---:|---:|---:|---:|---:|---|"]
    for size, kind, g, r in rows:
        label = ("one %s, %s elements" % (kind, format(ARGS.n, ","))) if size == "large" else \
            ("%s %s x 10" % (format(ARGS.small, ","), {"hash": "hashes", "set": "sets", "zset": "zsets"}[kind]))
        out.append("| %s | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f | %s / %s |" % (
            label, g["used"], r["used"], g["used"] / r["used"], g["rss"], r["rss"],
            g["rss"] / r["rss"] if r["rss"] else float("nan"), g["encoding"], r["encoding"]))
    return rows, "\n".join(out)


# ---- throughput ----------------------------------------------------------------------------

ROWS = [
    ("HSET", ["-t", "hset"]),
    ("SADD", ["-t", "sadd"]),
    ("ZADD", ["-t", "zadd"]),
    ("ZSCORE", ["ZSCORE", "myzset", "element:__rand_int__"]),
    ("ZRANK", ["ZRANK", "myzset", "element:__rand_int__"]),
    ("ZRANGE 0 9 WITHSCORES", ["ZRANGE", "myzset", "0", "9", "WITHSCORES"]),
    ("ZRANGEBYSCORE LIMIT 0 10", ["ZRANGEBYSCORE", "myzset", "__rand_int__", "+inf", "LIMIT", "0", "10"]),
    ("HGET", ["HGET", "myhash", "element:__rand_int__"]),
]


def pin(pid, cpu):
    subprocess.run(["taskset", "-a", "-p", "-c", str(cpu), str(pid)], check=True, stdout=subprocess.DEVNULL)


def bench_once(srv, args):
    cmd = ["taskset", "-c", "1", ARGS.benchmark, "-s", srv.sock, "-P", "64", "-c", "50", "-n",
           str(ARGS.requests), "-r", "100000", "--csv"] + args
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    # --csv: "test","rps",... (header line first in 7.0)
    for line in out.splitlines():
        m = re.match(r'"([^"]*)","([0-9.]+)"', line)
        if m:
            return float(m.group(2))
    raise RuntimeError("no result from redis-benchmark: %r" % out)


def throughput_table():
    servers = {"goblin": Server("goblin"), "redis": Server("redis")}
    try:
        for s in servers.values():
            pin(s.pid, 0)
        results = {}
        for name, args in ROWS:
            vals = {"goblin": [], "redis": []}
            for _ in range(ARGS.runs):
                for kind in ("goblin", "redis"):
                    vals[kind].append(bench_once(servers[kind], args))
            results[name] = {k: statistics.median(v) for k, v in vals.items()}
            print("  %s: goblin %.0f/s, redis %.0f/s" % (name, results[name]["goblin"], results[name]["redis"]),
                  file=sys.stderr)
        with Raw(servers["goblin"]) as r:
            zcard = r.call("ZCARD", "myzset")
            enc = r.call("OBJECT", "ENCODING", "myzset")
    finally:
        for s in servers.values():
            s.cleanup()
    out = ["| command | goblin-core req/s | redis-server req/s | ratio |", "|---|---:|---:|---:|"]
    for name, _ in ROWS:
        g, r = results[name]["goblin"], results[name]["redis"]
        out.append("| %s | %s | %s | %.2f |" % (name, format(int(g), ","), format(int(r), ","), g / r))
    note = "(myzset: %s members, %s)" % (zcard, enc.decode() if isinstance(enc, bytes) else enc)
    return results, "\n".join(out), note


# ---- chart ---------------------------------------------------------------------------------

def svg_chart(mem_rows, tput, path):
    """Two grouped bar charts, hand-written SVG: memory per element
    (used_memory) and throughput, goblin-core vs redis-server."""
    groups = []
    if mem_rows:
        groups.append(("Bytes per element (INFO used_memory delta; lower is better)",
                       [("%s %s" % ("1M" if size == "large" else "100k x10", kind), g["used"], r["used"])
                        for size, kind, g, r in mem_rows], "%.1f"))
    if tput:
        groups.append(("Requests per second, pipeline 64 (higher is better)",
                       [(name, tput[name]["goblin"], tput[name]["redis"]) for name, _ in ROWS], "%.2gM"))
    width, bar_h, gap, left = 760, 11, 8, 190
    y = 30
    parts = []
    for title, items, fmt in groups:
        parts.append('<text x="10" y="%d" font-size="14" font-weight="bold">%s</text>' % (y, title))
        y += 14
        vmax = max(max(a, b) for _, a, b in items) or 1
        scale = (width - left - 80) / vmax
        for label, a, b in items:
            parts.append('<text x="%d" y="%d" font-size="11" text-anchor="end">%s</text>' % (
                left - 6, y + bar_h + 4, label))
            for i, (v, color) in enumerate(((a, "#2e7d32"), (b, "#c62828"))):
                yy = y + i * bar_h
                txt = fmt % (v / 1e6) if fmt.endswith("M") else fmt % v
                parts.append('<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>' % (
                    left, yy, v * scale, bar_h - 1, color))
                parts.append('<text x="%.1f" y="%d" font-size="10">%s</text>' % (
                    left + v * scale + 4, yy + bar_h - 2, txt))
            y += 2 * bar_h + gap
        y += 24
    legend = ('<rect x="%d" y="8" width="10" height="10" fill="#2e7d32"/><text x="%d" y="17" font-size="11">'
              'goblin-core</text><rect x="%d" y="8" width="10" height="10" fill="#c62828"/>'
              '<text x="%d" y="17" font-size="11">redis-server 7.0</text>') % (
        width - 230, width - 215, width - 130, width - 115)
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif">\n'
           '<rect width="100%%" height="100%%" fill="white"/>\n%s\n%s\n</svg>\n') % (
        width, y, legend, "\n".join(parts))
    with open(path, "w") as f:
        f.write(svg)


def main():
    for tool in (ARGS.goblin, ARGS.redis, ARGS.benchmark):
        if not os.path.exists(tool):
            sys.exit("not found: %s" % tool)
    print("goblin-core: %s\nredis-server: %s" % (ARGS.goblin, ARGS.redis))
    mem_rows = tput = None
    if not ARGS.no_memory:
        mem_rows, table = memory_tables()
        print("\nMemory per element (bytes):\n")
        print(table)
    if not ARGS.no_throughput:
        tput, table, note = throughput_table()
        print("\nThroughput, redis-benchmark -P 64 -c 50 -r 100000 -n %d, median of %d %s:\n" % (
            ARGS.requests, ARGS.runs, note))
        print(table)
    if ARGS.svg:
        svg_chart(mem_rows, tput, ARGS.svg)
        print("\nchart: %s" % ARGS.svg)


if __name__ == "__main__":
    main()
