#!/usr/bin/env python3
"""What a cluster costs when it moves (issue 30): redirections, failover
and resharding, a goblin-core cluster beside a redis-server cluster of the
same shape, measured in the same run with the order alternating, medians.

  bench/cluster_ops.py --goblin build-release/goblin-core [--trials 3] [--only moved,failover,reshard]

* moved: the cost of a MOVED redirection. One connection sends --requests
  GETs of one key, all pipelined, to the node that owns its slot, then to
  a node that does not (every reply a MOVED error; redis-benchmark stops
  at the first error, so a small client of this script's own sends them).
  Reported: the node's CPU per request (user+system time from /proc) for
  both, and the request rate (bound by this Python client, not the
  server). A redirection should cost no more than a hit.
* failover: 3 primaries with a replica each, cluster-node-timeout
  --node-timeout ms (default 2000). One primary is SIGKILLed; reported is
  the time until its replica says ROLE master, and until a write to a key
  of one of its slots succeeds through that replica (a client that asks
  the promoted node directly). Redis's own bound is node-timeout plus the
  election delay (500-1000 ms plus rank): both should land there.
* reshard: 3 primaries, --keys keys (default 200,000, --value-size bytes
  each, default 32) written over all slots; then `redis-cli --cluster
  reshard` moves every slot of the first primary to the second (MIGRATE in
  batches of --pipeline keys, default 100). Reported: the wall time, keys
  and value megabytes moved per second, and where the CPU went: the
  source's, the target's and redis-cli's own user+system seconds during
  the move; every key is checked to be on the second node afterwards.
  `--keys 3000000 --value-size 1024` moves about 1 GB.

Pinning: every server on CPU 0, the tools on CPU 1 (the 2-core
development machine; SERVER_CORE/CLIENT_CORE change them).
"""
import argparse
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

from cluster_compare import Cluster

SERVER_CORE = os.environ.get("SERVER_CORE", "0")
CLIENT_CORE = os.environ.get("CLIENT_CORE", "1")


def cli(a, port, *args, timeout=60):
    r = subprocess.run([a.redis_cli, "-p", str(port)] + [str(x) for x in args], capture_output=True, text=True,
                       timeout=timeout)
    return r.stdout.strip()


def replica_read(a, port, key):
    """GET key on a replica (READONLY first, on the same connection)."""
    r = subprocess.run([a.redis_cli, "-p", str(port)], input="READONLY\nGET %s\n" % key, capture_output=True,
                       text=True, timeout=60)
    return r.stdout.strip().splitlines()[-1]


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def own_slots(a, port):
    """The slots the node at port serves, from its CLUSTER NODES line."""
    for line in cli(a, port, "cluster", "nodes").splitlines():
        f = line.split()
        if "myself" in f[2]:
            slots = []
            for rng in f[8:]:
                if not rng.startswith("["):  # not an open slot's [slot->-id]
                    lo, _, hi = rng.partition("-")
                    slots.extend(range(int(lo), int(hi or lo) + 1))
            return slots
    return []


def slot_owner(a, c, slot):
    """The port of the primary that serves slot."""
    for port in c.ports:
        if slot in own_slots(a, port):
            return port
    raise RuntimeError("no primary serves slot %d" % slot)


def server_pid(c, port):
    return c.procs[c.ports.index(port)].pid


# -- MOVED --------------------------------------------------------------------------------

def pipelined_gets(port, key, n, lines_per_reply):
    """Sends n GETs of key on one connection, all pipelined (a writer
    thread), and reads until n replies have come (each lines_per_reply
    CRLF-ended lines). Returns the seconds it took."""
    cmd = b"*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n" % (len(key), key.encode())
    sock = socket.create_connection(("127.0.0.1", port))
    want = n * lines_per_reply
    start = time.monotonic()
    writer = threading.Thread(target=lambda: [sock.sendall(cmd * 1000) for _ in range(n // 1000)])
    writer.start()
    got, tail = 0, b""
    while got < want:
        data = sock.recv(1 << 20)
        if not data:
            raise RuntimeError("the server closed the connection")
        got += (tail + data).count(b"\r\n") - tail.count(b"\r\n")
        tail = data[-1:]
    took = time.monotonic() - start
    writer.join()
    sock.close()
    return took


def moved_round(a, c):
    """(cpu us/request, req/s) for GETs the node serves and GETs it redirects."""
    key = "bench:moved"
    slot = int(cli(a, c.ports[0], "cluster", "keyslot", key))
    owner = slot_owner(a, c, slot)
    other = next(p for p in c.ports if p != owner)
    cli(a, owner, "set", key, "x" * 32)
    if not cli(a, other, "get", key).startswith("MOVED"):
        raise RuntimeError("expected MOVED from %d" % other)
    out = {}
    for what, port, lines in (("served", owner, 2), ("moved", other, 1)):
        pid = server_pid(c, port)
        before = cpu_seconds(pid)
        took = pipelined_gets(port, key, a.requests, lines)
        used = cpu_seconds(pid) - before
        out[what] = (used / a.requests * 1e6, a.requests / took)
    return out


# -- failover -----------------------------------------------------------------------------

def replica_of(a, c, primary_port):
    """The port of primary_port's replica."""
    pid = cli(a, primary_port, "cluster", "myid")
    for port in c.ports:
        if port == primary_port:
            continue
        for line in cli(a, port, "cluster", "nodes").splitlines():
            f = line.split()
            if "myself" in f[2] and "slave" in f[2] and f[3] == pid:
                return port
    raise RuntimeError("no replica of %d" % primary_port)


def failover_round(a, c):
    """(seconds to promotion, seconds to the first accepted write)."""
    primary = c.ports[0]
    replica = replica_of(a, c, primary)
    key = next("k%d" % i for i in range(100000)
               if slot_owner(a, c, int(cli(a, primary, "cluster", "keyslot", "k%d" % i))) == primary)
    cli(a, primary, "set", key, "before")
    deadline = time.time() + 10
    while replica_read(a, replica, key) != "before":  # the replica has it
        if time.time() > deadline:
            raise RuntimeError("the replica never got the key")
        time.sleep(0.02)
    c.procs[c.ports.index(primary)].send_signal(signal.SIGKILL)
    killed = time.monotonic()
    promoted = written = None
    limit = killed + 60
    while time.monotonic() < limit and written is None:
        now = time.monotonic()
        if promoted is None and cli(a, replica, "role").startswith("master"):
            promoted = now - killed
        if promoted is not None and cli(a, replica, "set", key, "after") == "OK":
            written = time.monotonic() - killed
        time.sleep(0.01)
    if written is None:
        raise RuntimeError("%s: no failover within 60 s" % c.kind)
    return promoted, written


# -- reshard ------------------------------------------------------------------------------

def reshard_round(a, c):
    """(seconds, keys moved): every slot of the first primary to the second."""
    src, dst = c.ports[0], c.ports[1]
    subprocess.run(["taskset", "-c", CLIENT_CORE, a.redis_benchmark, "--cluster", "-p", str(src), "-t", "set",
                    "-n", str(a.keys * 3), "-r", str(a.keys), "-d", str(a.value_size), "-P", "16", "-q"],
                   capture_output=True, timeout=1800, check=True)
    moving = int(cli(a, src, "dbsize"))
    total = moving + int(cli(a, dst, "dbsize"))
    src_id, dst_id = cli(a, src, "cluster", "myid"), cli(a, dst, "cluster", "myid")
    mine = len(own_slots(a, src))
    cpu0 = (cpu_seconds(server_pid(c, src)), cpu_seconds(server_pid(c, dst)))
    tool0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    r = subprocess.run(["taskset", "-c", CLIENT_CORE, a.redis_cli, "--cluster", "reshard", "127.0.0.1:%d" % src,
                        "--cluster-from", src_id, "--cluster-to", dst_id, "--cluster-slots", str(mine),
                        "--cluster-yes", "--cluster-pipeline", str(a.pipeline)],
                       capture_output=True, text=True, timeout=1200)
    took = time.monotonic() - start
    tool1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = {"source": cpu_seconds(server_pid(c, src)) - cpu0[0], "target": cpu_seconds(server_pid(c, dst)) - cpu0[1],
           "redis-cli": tool1.ru_utime + tool1.ru_stime - tool0.ru_utime - tool0.ru_stime}
    if r.returncode != 0:
        raise RuntimeError("%s reshard failed: %s" % (c.kind, (r.stdout + r.stderr)[-2000:]))
    left, now_dst = int(cli(a, src, "dbsize")), int(cli(a, dst, "dbsize"))
    if left != 0 or now_dst != total or own_slots(a, src):
        raise RuntimeError("%s: after the reshard %d keys left on the source, %d on the target of %d" %
                           (c.kind, left, now_dst, total))
    return took, moving, cpu


def interleaved(a, results, name, round_fn, **cluster_args):
    """--trials rounds of round_fn(a, cluster) on a fresh cluster of each
    kind, goblin and redis in turn, the order alternating; each result
    appended to results[(name, kind)]."""
    for t in range(a.trials):
        order = ("goblin", "redis") if t % 2 == 0 else ("redis", "goblin")
        for kind in order:
            c = Cluster(kind, a.exe[kind], a.redis_cli, cpu=SERVER_CORE, **cluster_args)
            try:
                got = round_fn(a, c)
            finally:
                c.stop()
            results.setdefault((name, kind), []).append(got)
            print("%s trial %d %-6s %r" % (name, t + 1, kind, got), file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--goblin", default="build-release/goblin-core")
    ap.add_argument("--redis-server", default=shutil.which("redis-server") or "redis-server")
    ap.add_argument("--redis-cli", default=shutil.which("redis-cli") or "redis-cli")
    ap.add_argument("--redis-benchmark", default=shutil.which("redis-benchmark") or "redis-benchmark")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--requests", type=int, default=400000, help="GETs per MOVED measurement")
    ap.add_argument("--node-timeout", type=int, default=2000)
    ap.add_argument("--keys", type=int, default=200000)
    ap.add_argument("--value-size", type=int, default=32, help="bytes per value written for the reshard")
    ap.add_argument("--pipeline", type=int, default=100)
    ap.add_argument("--only", default="moved,failover,reshard")
    a = ap.parse_args()
    a.exe = {"goblin": a.goblin, "redis": a.redis_server}
    only = a.only.split(",")
    results = {}
    if "moved" in only:
        interleaved(a, results, "moved", moved_round, nodes=3)
    if "failover" in only:
        interleaved(a, results, "failover", failover_round, nodes=6, replicas=1, node_timeout=a.node_timeout)
    if "reshard" in only:
        interleaved(a, results, "reshard", reshard_round, nodes=3)
    med = statistics.median
    if "moved" in only:
        print("\n| GET, one pipelined connection | goblin CPU us/req | redis CPU us/req | goblin req/s | redis req/s |")
        print("|---|---|---|---|---|")
        for what in ("served", "moved"):
            g = [x[what] for x in results[("moved", "goblin")]]
            r = [x[what] for x in results[("moved", "redis")]]
            print("| %s | %.2f | %.2f | %.0f | %.0f |" % (what, med(x[0] for x in g), med(x[0] for x in r),
                                                         med(x[1] for x in g), med(x[1] for x in r)))
    if "failover" in only:
        print("\n| SIGKILL of a primary (node timeout %d ms) | goblin s | redis s |" % a.node_timeout)
        print("|---|---|---|")
        for i, what in enumerate(("replica promoted", "first write accepted")):
            g, r = results[("failover", "goblin")], results[("failover", "redis")]
            print("| %s | %.2f | %.2f |" % (what, med(x[i] for x in g), med(x[i] for x in r)))
    if "reshard" in only:
        g, r = results[("reshard", "goblin")], results[("reshard", "redis")]
        print("\n| reshard of every slot of one primary | goblin | redis | goblin / redis |")
        print("|---|---|---|---|")
        gs, rs = med(x[0] for x in g), med(x[0] for x in r)
        gk, rk = med(x[1] for x in g), med(x[1] for x in r)
        print("| seconds | %.2f | %.2f | %.2f |" % (gs, rs, gs / rs))
        print("| keys moved per second | %.0f | %.0f | %.2f |" % (gk / gs, rk / rs, (gk / gs) / (rk / rs)))
        mb = a.value_size / 1e6
        print("| value MB moved (per second) | %.0f (%.1f) | %.0f (%.1f) | |" % (gk * mb, gk * mb / gs, rk * mb, rk * mb / rs))
        for who in ("source", "target", "redis-cli"):
            gc, rc = med(x[2][who] for x in g), med(x[2][who] for x in r)
            print("| %s CPU seconds | %.2f | %.2f | %.2f |" % (who, gc, rc, gc / rc if rc else float("nan")))


if __name__ == "__main__":
    main()
