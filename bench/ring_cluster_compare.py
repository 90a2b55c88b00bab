#!/usr/bin/env python3
"""The cluster ring client's cost (issue 30, docs/ring_cluster.md): p50 and
p99 of one synchronous SET and GET (16-byte values, keys of one hash tag,
so every call goes to the same node) through

  direct         gb_ring_client on that node's Unix socket (SBE ring)
  cluster        gb_ring_cluster, SBE rings (the routing's own cost)
  cluster-sock   gb_ring_cluster with GOBLIN_RING_CLUSTER_SOCKETS=1 (TCP)
  redis-sock     gb_ring_cluster against a redis-server 7.0 cluster (TCP)

and redis-benchmark --cluster -c 1 (its p50, over all slots) against both
clusters. Two 3-primary clusters, formed by redis-cli --cluster create,
every server on CPU 0, the client on CPU 1; rounds interleaved (the order
rotates), medians reported.

  bench/ring_cluster_compare.py --build build-release --requests 20000 --rounds 5
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster_compare import free_port_pair, stop_servers, wait_port  # noqa: E402


def crc16(data):
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


class Cluster:
    """Three primaries with Unix sockets (the ring client claims there)."""

    def __init__(self, kind, exe, cli):
        self.kind, self.cli = kind, cli
        self.dir = tempfile.mkdtemp(prefix="ringcl-bench-%s-" % kind)
        self.ports = [free_port_pair() for _ in range(3)]
        self.socks = [os.path.join(self.dir, "%d.sock" % p) for p in self.ports]
        self.procs = []
        try:
            self._start(os.path.abspath(exe) if os.sep in exe else exe)
        except BaseException:
            self.stop()
            raise

    def _start(self, exe):
        cli, kind = self.cli, self.kind
        for port, sock in zip(self.ports, self.socks):
            d = os.path.join(self.dir, str(port))
            os.makedirs(d)
            args = [exe, "--port", str(port), "--unixsocket", sock, "--cluster-enabled", "yes", "--save", "",
                    "--appendonly", "no"]
            if kind == "redis":
                args += ["--dir", d, "--daemonize", "no"]
            self.procs.append(subprocess.Popen(["taskset", "-c", "0"] + args, cwd=d,
                                               stdout=open(os.path.join(d, "log"), "wb"),
                                               stderr=subprocess.STDOUT))
        for port in self.ports:
            wait_port(port)
        r = subprocess.run([cli, "--cluster", "create"] + ["127.0.0.1:%d" % p for p in self.ports] +
                           ["--cluster-yes"], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError(r.stdout + r.stderr)
        for port in self.ports:
            for _ in range(300):
                out = subprocess.run([cli, "-p", str(port), "cluster", "info"], capture_output=True, text=True)
                if "cluster_state:ok" in out.stdout:
                    break
                subprocess.run(["sleep", "0.1"])

    def tag_on_first_node(self):
        """A hash tag whose slot the first node serves."""
        out = subprocess.run([self.cli, "-p", str(self.ports[0]), "cluster", "slots"], capture_output=True,
                             text=True).stdout.split()
        # redis-cli prints each range as start, end, ip, port, id, ...
        ranges = [(int(out[i]), int(out[i + 1])) for i in range(len(out) - 3)
                  if out[i + 3] == str(self.ports[0]) and out[i].isdigit() and out[i + 1].isdigit()]
        for n in range(100000):
            tag = "t%d" % n
            slot = crc16(tag.encode()) & 16383
            if any(a <= slot <= b for a, b in ranges):
                return tag
        raise RuntimeError("no tag for node 0")

    def stop(self):
        stop_servers(self.procs, self.dir)


def ring_bench(tool, mode, target, tag, n, env=None):
    r = subprocess.run([tool, mode, target, "sbe", tag, str(n)], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, CLIENT_CORE="1", **(env or {})))
    if r.returncode != 0:
        raise RuntimeError(r.stdout + r.stderr)
    w = r.stdout.split()
    return {"set": (float(w[1]), float(w[2])), "get": (float(w[4]), float(w[5]))}


def redis_benchmark_p50(exe, port, n):
    """redis-benchmark --cluster -c 1: p50 (ns) of SET and GET."""
    r = subprocess.run(["taskset", "-c", "1", exe, "--cluster", "-p", str(port), "-t", "set,get", "-n", str(n),
                        "-c", "1", "-r", "100000", "--csv"], capture_output=True, text=True, timeout=600)
    out = {}
    for line in r.stdout.splitlines():
        f = [x.strip('"') for x in line.split(",")]
        if f and f[0] in ("SET", "GET"):
            out[f[0].lower()] = (float(f[4]) * 1e6, float(f[6]) * 1e6)  # p50, p99 in ms
    if len(out) != 2:
        raise RuntimeError(r.stdout + r.stderr)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build-release")
    ap.add_argument("--redis-server", default=shutil.which("redis-server") or "redis-server")
    ap.add_argument("--redis-cli", default=shutil.which("redis-cli") or "redis-cli")
    ap.add_argument("--redis-benchmark", default=shutil.which("redis-benchmark") or "redis-benchmark")
    ap.add_argument("--requests", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    tool = os.path.join(a.build, "ring_cluster_bench")
    clusters = {}
    try:
        clusters["goblin"] = Cluster("goblin", os.path.join(a.build, "goblin-core"), a.redis_cli)
        clusters["redis"] = Cluster("redis", a.redis_server, a.redis_cli)
        g, r = clusters["goblin"], clusters["redis"]
        gtag, rtag = g.tag_on_first_node(), r.tag_on_first_node()
        seed = "127.0.0.1:%d" % g.ports[0]
        cases = {
            "direct": lambda: ring_bench(tool, "direct", g.socks[0], gtag, a.requests),
            "cluster": lambda: ring_bench(tool, "cluster", seed, gtag, a.requests),
            "cluster-sock": lambda: ring_bench(tool, "cluster", seed, gtag, a.requests,
                                               {"GOBLIN_RING_CLUSTER_SOCKETS": "1"}),
            "redis-sock": lambda: ring_bench(tool, "cluster", "127.0.0.1:%d" % r.ports[0], rtag, a.requests),
            "redis-benchmark goblin": lambda: redis_benchmark_p50(a.redis_benchmark, g.ports[0], a.requests),
            "redis-benchmark redis": lambda: redis_benchmark_p50(a.redis_benchmark, r.ports[0], a.requests),
        }
        names = list(cases)
        results = {}
        for rnd in range(a.rounds):
            order = names[rnd % len(names):] + names[:rnd % len(names)]
            for name in order:
                res = cases[name]()
                for op, (p50, p99) in res.items():
                    results.setdefault((name, op), []).append((p50, p99))
                print("round %d %-22s set p50 %7.0f ns  get p50 %7.0f ns" % (rnd + 1, name, res["set"][0],
                                                                             res["get"][0]), file=sys.stderr)
        print("| path | SET p50 ns | SET p99 ns | GET p50 ns | GET p99 ns |")
        print("|---|---|---|---|---|")
        for name in names:
            row = [statistics.median(x[i] for x in results[(name, op)]) for op in ("set", "get") for i in (0, 1)]
            print("| %s | %.0f | %.0f | %.0f | %.0f |" % (name, *row))
    finally:
        for c in clusters.values():
            c.stop()


if __name__ == "__main__":
    main()
