#!/usr/bin/env python3
"""Hash-field expiry throughput on goblin-core, beside redis-server 7.0's
nearest equivalents in the same run (issue 28; docs/benchmarks.md,
"Hash-field expiry").

    /usr/bin/python3 bench/hash_ttl_bench.py --goblin build-release/goblin-core \
        [--redis /usr/bin/redis-server] [--lean-load build-release/lean_load] [--trials 5]
        [--redis74 /work/redis-7.4.1/src/redis-server]

With --redis74 (a redis-server 7.4 built from Redis's 7.4.1 tag), every row
runs the same command on goblin-core and on Redis 7.4, which has field
TTLs: bench/hash_ttl_redis74.py says what each row measures. Without it,
the rows below put goblin-core beside redis-server 7.0.

redis-server 7.0 has no field TTLs, so the rows do not compare the same
command. What each puts side by side:

  HSETEX vs HSET      goblin-core: HSETEX h:<rand> PX 100000 FIELDS 1 f v (a
                      field with its TTL, one command); redis-server 7.0:
                      HSET h:<rand> f v, the same write without the TTL --
                      the most 7.0 can do in one command.
  HPEXPIRE vs PEXPIRE goblin-core: HPEXPIRE big 100000 FIELDS 1 f:<rand> on a
                      hash of 100,000 fields; redis-server 7.0: PEXPIRE
                      k:<rand> 100000 on 100,000 keys -- the TTL half of
                      "HSET + EXPIRE on a key per field", the 7.0 workaround.
  HSET vs HSET        the same command on both: the plain-hash baseline.

Then a memory table (--memory-only skips the throughput rows): INFO
used_memory per field for 100,000 fields -- in 1,000 hashes of 100
(listpack) and in one hash (hashtable) -- without TTLs on both servers,
with a TTL on each field on goblin-core, and, for redis-server 7.0, the
workaround's cost: a key per field with a TTL (SET k v PX).

Each row runs lean_load (bench/lean_load.c) with 50 connections, pipeline
64; the server is pinned to SERVER_CORE, the client to CLIENT_CORE; the two
servers alternate within every trial, each fresh with the same data; each
row is the median over --trials, with the server's CPU microseconds per
request (/proc/<pid>/stat).
"""
import argparse
import os
import socket
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from script_compare import run_lean_load  # noqa: E402
from socket_compare import CLIENT_CORE, SERVER_CORE, Server, cpu_model  # noqa: E402

KEYS = 100000
PIPELINE = 64
# (label, goblin-core's command, redis-server's command)
ROWS = [
    ("HSETEX PX (goblin) / HSET (redis)", ["HSETEX", "h:__rand_int__", "PX", "100000", "FIELDS", "1", "f", "v"],
     ["HSET", "h:__rand_int__", "f", "v"]),
    ("HPEXPIRE field (goblin) / PEXPIRE key (redis)", ["HPEXPIRE", "big", "100000", "FIELDS", "1", "f:__rand_int__"],
     ["PEXPIRE", "k:__rand_int__", "100000"]),
    ("HSET (both)", ["HSET", "p:__rand_int__", "f", "v"], ["HSET", "p:__rand_int__", "f", "v"]),
]


def load(srv, name):
    """100,000 fields of one hash (goblin-core) or 100,000 keys (redis-server),
    named as lean_load's __rand_int__ renders its numbers (12 digits), over
    one pipelined connection (every reply is one line: :1 or +OK)."""
    if name == "goblin":
        cmds = [(b"HSET", b"big", b"f:%012d" % i, b"v") for i in range(KEYS)]
    else:
        cmds = [(b"SET", b"k:%012d" % i, b"v") for i in range(KEYS)]
    pipelined(srv, cmds)


def pipelined(srv, cmds):
    """Sends cmds on one connection; waits for their one-line replies."""
    s = socket.socket(socket.AF_UNIX)
    s.connect(srv.sock)
    s.sendall(b"".join(b"*%d\r\n" % len(c) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in c) for c in cmds))
    lines, last = 0, b""
    while lines < len(cmds):
        chunk = s.recv(1 << 20)
        if not chunk:
            raise RuntimeError("the server closed the connection")
        lines += (last + chunk).count(b"\r\n") - last.count(b"\r\n")  # a CRLF may straddle two reads
        last = chunk[-1:]
    s.close()


def memory_rows(binaries):
    """(label, bytes per field) on each server: INFO used_memory before and after."""
    far = b"4102444800000"
    layouts = {"1,000 hashes x 100 fields": lambda i: b"h:%d" % (i // 100), "1 hash x 100,000 fields": lambda i: b"h"}
    rows = []
    for layout, key in layouts.items():
        cases = [("no TTL", "goblin", lambda i: [(b"HSET", key(i), b"field:%d" % i, b"v")]),
                 ("no TTL", "redis", lambda i: [(b"HSET", key(i), b"field:%d" % i, b"v")]),
                 ("a TTL on each field", "goblin",
                  lambda i: [(b"HSETEX", key(i), b"PXAT", far, b"FIELDS", b"1", b"field:%d" % i, b"v")])]
        for label, name, cmds in cases:
            srv = Server(binaries[name], name)
            try:
                before = srv.info("used_memory")
                for lo in range(0, KEYS, 5000):
                    pipelined(srv, [c for i in range(lo, lo + 5000) for c in cmds(i)])
                rows.append(("%s, %s" % (layout, label), name, (srv.info("used_memory") - before) / KEYS))
            finally:
                srv.stop()
    srv = Server(binaries["redis"], "redis")
    try:
        before = srv.info("used_memory")
        for lo in range(0, KEYS, 5000):
            pipelined(srv, [(b"SET", b"field:%d" % i, b"v", b"PXAT", far) for i in range(lo, lo + 5000)])
        rows.append(("a key per field with a TTL (the 7.0 workaround)", "redis",
                     (srv.info("used_memory") - before) / KEYS))
    finally:
        srv.stop()
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--goblin", required=True)
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--lean-load", help="the lean_load binary (default: next to --goblin)")
    ap.add_argument("--n", type=int, default=1000000, help="requests per row and run")
    ap.add_argument("--memory-only", action="store_true", help="only the memory table")
    ap.add_argument("--redis74", help="a redis-server 7.4: compare the same commands with it instead of 7.0")
    ap.add_argument("--goblin-base", help="with --redis74: a second goblin-core (another commit) in the same run")
    a = ap.parse_args()
    lean = a.lean_load or os.path.join(os.path.dirname(os.path.abspath(a.goblin)), "lean_load")
    if not os.access(lean, os.X_OK):
        sys.exit("no lean_load at %s: build it (cmake --build build-release --target lean_load) or pass --lean-load"
                 % lean)
    if a.redis74:
        import hash_ttl_redis74
        binaries = {"goblin": a.goblin, "redis74": a.redis74}
        if a.goblin_base:
            binaries["main"] = a.goblin_base
        hash_ttl_redis74.run(binaries, lean, a.trials, a.n, a.memory_only)
        return
    binaries = {"goblin": a.goblin, "redis": a.redis}
    print("| used_memory per field, 100,000 fields | server | bytes/field |\n|---|---|---|")
    for label, name, per in memory_rows(binaries):
        print("| %s | %s | %.1f |" % (label, "goblin-core" if name == "goblin" else "redis-server 7.0", per))
    print()
    if a.memory_only:
        return
    rates, cpu = {}, {}
    for trial in range(a.trials):
        order = ["goblin", "redis"] if trial % 2 == 0 else ["redis", "goblin"]
        for name in order:
            srv = Server(binaries[name], name)
            try:
                load(srv, name)
                for label, gcmd, rcmd in ROWS:
                    c0 = srv.cpu_seconds()
                    rate, _ = run_lean_load(lean, srv.sock, gcmd if name == "goblin" else rcmd, PIPELINE, a.n)
                    rates.setdefault((name, label), []).append(rate)
                    cpu.setdefault((name, label), []).append((srv.cpu_seconds() - c0) * 1e6 / a.n)
                if name == "goblin":  # the TTLs were really set
                    probe = srv.call(b"HPTTL", b"big", b"FIELDS", b"1", b"f:000000000001")
                    if b":-2" in probe:
                        sys.exit("HPEXPIRE did not find its field: %r" % probe)
            finally:
                srv.stop()
            print("trial %d %s done" % (trial + 1, name), file=sys.stderr)
    print("Machine: %d CPUs, %s, kernel %s; server on CPU %s, the client on CPU %s; pipeline %d, 50 connections; "
          "median of %d trials\n" % (os.cpu_count(), cpu_model(), os.uname().release, SERVER_CORE, CLIENT_CORE,
                                     PIPELINE, a.trials))
    print("| row (different commands: see the script) | goblin-core req/s | redis-server 7.0 req/s | goblin / redis "
          "| goblin CPU us/req | redis CPU us/req |")
    print("|---|---|---|---|---|---|")
    for label, _, _ in ROWS:
        g, r = (statistics.median(rates[(s, label)]) for s in ("goblin", "redis"))
        gc, rc = (statistics.median(cpu[(s, label)]) for s in ("goblin", "redis"))
        print("| %s | %.0f | %.0f | %.2fx | %.2f | %.2f |" % (label, g, r, g / r, gc, rc))


if __name__ == "__main__":
    main()
