#!/usr/bin/env python3
"""Memory per element of a 1M-item list: goblin-core (segmented, pma) vs redis-server.

    /usr/bin/python3 bench/list_memory.py [--goblin build-release/goblin-core]
        [--redis /usr/bin/redis-server] [--n 1000000] [--markdown] [--csv]

For each value kind (10-byte strings "v:00000000", integers 0..n-1) and each
server (goblin-core --list-implementation segmented, then pma, then
redis-server, default list-max-listpack-size -2 everywhere) a fresh server
is started, its INFO memory used_memory and its RSS (/proc/<pid>/status
VmRSS) are read, n values are RPUSHed onto one key (pipelined, 1,000 per
command), and both are read again. Reported per element: the used_memory
delta, the RSS delta and MEMORY USAGE <key> SAMPLES 0. Needs /usr/bin/python3
(the socket client is test/integration/gbtest.py's; redis-py is not needed).
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "test", "integration"))

import gbtest  # noqa: E402
from gbtest import Raw, Server, encode  # noqa: E402

CHUNK = 1000


def load(srv, key, values):
    with Raw(srv) as r:
        pending = 0
        for i in range(0, len(values), CHUNK):
            r.send(encode(b"RPUSH", key, *values[i:i + CHUNK]))
            pending += 1
            if pending == 32:
                for _ in range(pending):
                    r.read()
                pending = 0
        for _ in range(pending):
            r.read()
        return r.call("LLEN", key)


def settle(srv):
    """used_memory and RSS once they stop moving (allocator background work)."""
    last = None
    for _ in range(20):
        cur = (srv.used_memory(), srv.rss())
        if cur == last:
            break
        last = cur
        time.sleep(0.05)
    return last


def measure(kind, args, values, n):
    exe_kind = "redis" if kind == "redis" else "goblin"
    extra = [] if kind == "redis" else ["--list-implementation", kind]
    srv = Server(exe_kind, args=extra)
    try:
        with Raw(srv) as r:
            r.call("SET", "warm", "x")  # first allocations outside the delta
            r.call("DEL", "warm")
        um0, rss0 = settle(srv)
        got = load(srv, b"list", values)
        assert got == n, "LLEN %r != %d" % (got, n)
        um1, rss1 = settle(srv)
        with Raw(srv) as r:
            usage = r.call("MEMORY", "USAGE", "list", "SAMPLES", "0")
            enc = r.call("OBJECT", "ENCODING", "list")
        return {"used": (um1 - um0) / n, "rss": (rss1 - rss0) / n,
                "usage": usage / n if isinstance(usage, int) else float("nan"),
                "encoding": enc.decode() if isinstance(enc, bytes) else str(enc)}
    finally:
        srv.cleanup()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--goblin", default=None, help="goblin-core binary (default: GOBLIN_SERVER or newest build*/)")
    ap.add_argument("--redis", default=None, help="redis-server binary (default: on PATH)")
    ap.add_argument("--n", type=int, default=1000000)
    ap.add_argument("--csv", action="store_true")
    args = ap.parse_args()
    if args.goblin:
        gbtest.GOBLIN = os.path.abspath(args.goblin)
    if args.redis:
        gbtest.REDIS_SERVER = os.path.abspath(args.redis)

    n = args.n
    kinds = [("10-byte strings", [b"v:%08d" % i for i in range(n)]),
             ("integers 0..n-1", [str(i).encode() for i in range(n)])]
    servers = ["segmented", "pma", "redis"]
    rows = []
    for label, values in kinds:
        res = {s: measure(s, [], values, n) for s in servers}
        rows.append((label, res))

    if args.csv:
        print("values,server,encoding,used_memory_bytes_per_elem,rss_bytes_per_elem,memory_usage_bytes_per_elem")
        for label, res in rows:
            for s in servers:
                r = res[s]
                print("%s,%s,%s,%.2f,%.2f,%.2f" % (label, s, r["encoding"], r["used"], r["rss"], r["usage"]))
        return
    print("bytes per element, %d-item list, list-max-listpack-size -2 (used_memory delta / RSS delta / "
          "MEMORY USAGE)" % n)
    print()
    print("| values | goblin segmented | goblin pma | redis-server %s |" % redis_version())
    print("|---|---|---|---|")
    for label, res in rows:
        cells = ["%.2f / %.2f / %.2f" % (res[s]["used"], res[s]["rss"], res[s]["usage"]) for s in servers]
        print("| %s | %s |" % (label, " | ".join(cells)))
    print()
    print("encodings: " + ", ".join("%s=%s" % (s, rows[0][1][s]["encoding"]) for s in servers))


def redis_version():
    import subprocess
    try:
        out = subprocess.run([gbtest.REDIS_SERVER, "--version"], capture_output=True, text=True).stdout
        for tok in out.split():
            if tok.startswith("v="):
                return tok[2:]
    except OSError:
        pass
    return ""


if __name__ == "__main__":
    main()
