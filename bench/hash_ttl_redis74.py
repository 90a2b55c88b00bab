"""Hash-field expiry, goblin-core beside a real redis-server 7.4 running the
same commands (bench/hash_ttl_bench.py --redis74 PATH; docs/benchmarks.md,
"Hash-field expiry (issue 28)").

Throughput rows (lean_load, 50 connections, pipeline 64, server on
SERVER_CORE, client on CLIENT_CORE; the two servers alternate within each
trial, each fresh with the same data: one hash `big` of 100,000 fields
f:N and 100,000 one-field hashes s:N; the rows run in this order on each):

  HPEXPIRE big 100000 FIELDS 1 f:N      a TTL on a field of the big hash
  HTTL big FIELDS 1 f:N                 reading it back
  HPERSIST big FIELDS 1 f:N             removing it (most fields have one)
  HSET big n:N v                        new fields into a hash with TTLs
  HEXPIRE s:N 100 FIELDS 1 f            a TTL in a small (listpack) hash
  HSETEX h:N PX 100000 FIELDS 1 f v     goblin-core; Redis 7.4 has no HSETEX
                                        (it came with 8.0), so its row is
                                        HSET h:N f v + HPEXPIRE h:N 100000
                                        FIELDS 1 f, two pipelined commands
                                        with the same effect, counted as one
                                        operation

Active expiry (one run per server, after the trials): 1,000,000 fields
(10,000 hashes x 100) all given the same deadline; from the deadline, the
time until the last is gone (DBSIZE 0), or when that takes more than 60 s
(Redis 7.4 expires about 10,000 fields a second per database,
HFE_DB_BASE_ACTIVE_EXPIRE_FIELDS_PER_SEC), the fields deleted in those 60 s
(all fields less those HLEN still counts); and the longest PING round trip
meanwhile (a stall of the loop).

With a third binary, "main" (--goblin-base: goblin-core built from another
commit), every row and table also runs it, interleaved with the other two,
so a change is measured against its base in the same run.

Memory: used_memory per field for 100,000 fields, in 1,000 hashes of 100
(listpack/listpackex) and in one hash (hashtable), without and with a TTL
on each field (HPEXPIREAT, the same command on both), and MEMORY USAGE of
one hash of each layout divided by its fields.
"""
import socket
import statistics
import sys
import time

from script_compare import run_lean_load
from socket_compare import Server

BIG = 100000
PIPELINE = 64
FAR_MS = b"4102444800000"  # 2100-01-01

# (label, goblin-core's command, redis-server 7.4's command, its commands per operation)
ROWS = [
    ("HPEXPIRE big 100000 FIELDS 1 f:N (hash of 100,000 fields)",
     ["HPEXPIRE", "big", "100000", "FIELDS", "1", "f:__rand_int__"], None, 1),
    ("HTTL big FIELDS 1 f:N", ["HTTL", "big", "FIELDS", "1", "f:__rand_int__"], None, 1),
    ("HPERSIST big FIELDS 1 f:N", ["HPERSIST", "big", "FIELDS", "1", "f:__rand_int__"], None, 1),
    ("HSET big n:N v (new fields, hash with TTLs)", ["HSET", "big", "n:__rand_int__", "v"], None, 1),
    ("HEXPIRE s:N 100 FIELDS 1 f (100,000 one-field hashes)",
     ["HEXPIRE", "s:__rand_int__", "100", "FIELDS", "1", "f"], None, 1),
    ("HSETEX h:N PX 100000 FIELDS 1 f v (goblin) / HSET h:N f v + HPEXPIRE h:N 100000 FIELDS 1 f, "
     "pipelined (redis 7.4; per pair)",
     ["HSETEX", "h:__rand_int__", "PX", "100000", "FIELDS", "1", "f", "v"],
     ["HSET", "h:__rand_int__", "f", "v", ";", "HPEXPIRE", "h:__rand_rep__", "100000", "FIELDS", "1", "f"], 2),
]


def pipelined(srv, cmds, batch=5000):
    """Sends cmds over one connection in batches; waits for one-line replies."""
    s = socket.socket(socket.AF_UNIX)
    s.connect(srv.sock)
    for lo in range(0, len(cmds), batch):
        part = cmds[lo:lo + batch]
        s.sendall(b"".join(b"*%d\r\n" % len(c) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in c) for c in part))
        lines, last = 0, b""
        while lines < len(part):
            chunk = s.recv(1 << 20)
            if not chunk:
                raise RuntimeError("the server closed the connection")
            lines += (last + chunk).count(b"\r\n") - last.count(b"\r\n")
            last = chunk[-1:]
    s.close()


def load(srv):
    """The big hash and the small ones, named as lean_load renders __rand_int__."""
    pipelined(srv, [(b"HSET", b"big", b"f:%012d" % i, b"v") for i in range(BIG)])
    pipelined(srv, [(b"HSET", b"s:%012d" % i, b"f", b"v") for i in range(BIG)])


class Conn:
    """One blocking RESP connection for short replies (PING, DBSIZE)."""

    def __init__(self, srv):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(srv.sock)

    def call(self, *args):
        self.s.sendall(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args))
        data = b""
        while not data.endswith(b"\r\n"):
            data += self.s.recv(4096)
        return data

    def close(self):
        self.s.close()


def fields_left(c, hashes):
    """Fields not yet deleted (HLEN counts an expired field until it goes)."""
    return sum(int(c.call(b"HLEN", b"e:%d" % h)[1:-2]) for h in range(hashes))


def active_expiry(srv, hashes=10000, per=100, cap_s=60):
    """(seconds from the deadline until the last field is gone, or None when
    not within cap_s; the fields deleted per second; the longest PING round
    trip in ms meanwhile)."""
    cmds = []
    for h in range(hashes):
        key = b"e:%d" % h
        fields = [b"x%d" % i for i in range(per)]
        cmds.append([b"HSET", key] + [x for f in fields for x in (f, b"v")])
    pipelined(srv, cmds, batch=200)
    deadline = int(time.time() * 1000) + 1500
    pipelined(srv, [[b"HPEXPIREAT", b"e:%d" % h, b"%d" % deadline, b"FIELDS", b"%d" % per]
                    + [b"x%d" % i for i in range(per)] for h in range(hashes)], batch=200)
    c = Conn(srv)
    try:
        while time.time() * 1000 < deadline:
            time.sleep(0.005)
        worst, n = 0.0, 0
        while True:
            t0 = time.perf_counter()
            c.call(b"PING")
            worst = max(worst, time.perf_counter() - t0)
            n += 1
            if n % 20 == 0 and c.call(b"DBSIZE") == b":0\r\n":
                took = time.time() - deadline / 1000.0
                return took, hashes * per / took, worst * 1000
            if time.time() * 1000 > deadline + cap_s * 1000:
                return None, (hashes * per - fields_left(c, hashes)) / cap_s, worst * 1000
            time.sleep(0.001)
    finally:
        c.close()


NAMES = {"goblin": "goblin-core", "main": "goblin-core (base)", "redis74": "redis-server 7.4.1"}


def start(binaries, name):
    return Server(binaries[name], "redis" if name == "redis74" else "goblin")


def order_of(binaries, trial):
    """The servers of a trial, rotated so that each goes first in turn."""
    names = [n for n in ("goblin", "main", "redis74") if n in binaries]
    k = trial % len(names)
    return names[k:] + names[:k]


def memory_rows(binaries, n=100000):
    """(label, server, bytes per field) by INFO used_memory, and by MEMORY USAGE."""
    layouts = {"1,000 hashes x 100 fields": (lambda i: b"h:%d" % (i // 100), b"h:0", 100),
               "1 hash x 100,000 fields": (lambda i: b"h", b"h", n)}
    rows = []
    for layout, (key, probe, probe_fields) in layouts.items():
        for ttl in (False, True):
            for name in order_of(binaries, 0):
                srv = start(binaries, name)
                try:
                    before = srv.info("used_memory")
                    pipelined(srv, [(b"HSET", key(i), b"field:%d" % i, b"v") for i in range(n)])
                    if ttl:
                        pipelined(srv, [(b"HPEXPIREAT", key(i), FAR_MS, b"FIELDS", b"1", b"field:%d" % i)
                                        for i in range(n)])
                    per = (srv.info("used_memory") - before) / n
                    usage = int(srv.call(b"MEMORY", b"USAGE", probe, b"SAMPLES", b"0").split(b"\r\n")[0][1:])
                    label = "%s, %s" % (layout, "a TTL on each field" if ttl else "no TTL")
                    rows.append((label, name, per, usage / probe_fields))
                finally:
                    srv.stop()
    return rows


def run(binaries, lean, trials, n, memory_only=False):
    print("| 100,000 fields | server | used_memory bytes/field | MEMORY USAGE bytes/field |\n|---|---|---|---|")
    for label, name, per, usage in memory_rows(binaries):
        print("| %s | %s | %.1f | %.1f |" % (label, NAMES[name], per, usage))
    print()
    if memory_only:
        return
    rates, cpu, expiry = {}, {}, {}
    for trial in range(trials):
        for name in order_of(binaries, trial):
            srv = start(binaries, name)
            try:
                load(srv)
                for label, gcmd, rcmd, per_op in ROWS:
                    cmd = gcmd if name != "redis74" or rcmd is None else rcmd
                    ops = per_op if name == "redis74" else 1
                    c0 = srv.cpu_seconds()
                    rate, _ = run_lean_load(lean, srv.sock, cmd, PIPELINE, n * ops)
                    rates.setdefault((name, label), []).append(rate / ops)
                    cpu.setdefault((name, label), []).append((srv.cpu_seconds() - c0) * 1e6 / n)
            finally:
                srv.stop()
            print("trial %d %s done" % (trial + 1, name), file=sys.stderr)
    for name in order_of(binaries, 0):  # once: Redis 7.4 does not finish in the minute allowed
        srv = start(binaries, name)
        try:
            expiry[name] = [active_expiry(srv)]
        finally:
            srv.stop()
    print("| row (the same command on both unless the row says) | goblin-core op/s | redis-server 7.4.1 op/s "
          "| goblin / redis | goblin CPU us/op | redis CPU us/op |")
    print("|---|---|---|---|---|---|")
    for label, _, _, _ in ROWS:
        g, r = (statistics.median(rates[(s, label)]) for s in ("goblin", "redis74"))
        gc, rc = (statistics.median(cpu[(s, label)]) for s in ("goblin", "redis74"))
        print("| %s | %.0f | %.0f | %.2fx | %.2f | %.2f |" % (label, g, r, g / r, gc, rc))
    print()
    if "main" in binaries:
        print("| row | base op/s | base CPU us/op | goblin CPU us/op | CPU base / goblin | CPU redis / goblin |")
        print("|---|---|---|---|---|---|")
        for label, _, _, _ in ROWS:
            m, mc, gc, rc = (statistics.median(rates[("main", label)]),
                             *(statistics.median(cpu[(s, label)]) for s in ("main", "goblin", "redis74")))
            print("| %s | %.0f | %.2f | %.2f | %.2fx | %.2fx |" % (label, m, mc, gc, mc / gc, rc / gc))
        print()
    print("| active expiry, 1,000,000 fields (10,000 hashes x 100), one deadline | goblin-core | redis-server 7.4.1 "
          "| goblin / redis |\n|---|---|---|---|")
    (g_s, g_rate, g_w), (r_s, r_rate, r_w) = expiry["goblin"][0], expiry["redis74"][0]
    show = lambda took: "%.2f" % took if took is not None else "not done in 60"
    print("| seconds from the deadline until all are gone | %s | %s | |" % (show(g_s), show(r_s)))
    print("| fields deleted per second | %.0f | %.0f | %.1fx |" % (g_rate, r_rate, g_rate / r_rate))
    print("| longest PING round trip meanwhile (ms) | %.2f | %.2f | |" % (g_w, r_w))
    if "main" in expiry:
        print("(base: %r)" % (expiry["main"][0],))
    print("\nall trials: expiry %r" % expiry)
