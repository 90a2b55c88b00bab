#!/usr/bin/env python3
"""Cluster throughput side by side (issue 30): a 3-primary goblin-core
cluster against a 3-primary redis-server cluster of the same shape, both
formed by `redis-cli --cluster create`, measured in the same run with
`redis-benchmark --cluster` (SET and GET spread over all slots), at
pipeline 1 and 16, rounds interleaved (the order alternates), medians
and the goblin/redis ratio reported.

Pinning: every server on CPU 0, redis-benchmark on CPU 1 (this 2-core
machine), so both clusters get the same one core for their three engines.

  bench/cluster_compare.py --goblin build-release/goblin-core --requests 300000 --rounds 3
"""
import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time


def free_port_pair():
    """A port whose bus port (+10000) is free too."""
    while True:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        if port + 10000 > 65535:
            continue
        b = socket.socket()
        try:
            b.bind(("127.0.0.1", port + 10000))
            return port
        except OSError:
            pass
        finally:
            b.close()


def wait_port(port, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("nothing listens on %d" % port)


def stop_servers(procs, directory):
    """Terminates the server processes (killed after 10 s) and removes
    their directory."""
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
    shutil.rmtree(directory, ignore_errors=True)


class Cluster:
    """nodes servers of one kind pinned to cpu, formed by `redis-cli
    --cluster create` with `replicas` replicas per primary;
    node_timeout: cluster-node-timeout in ms (None: the default)."""

    def __init__(self, kind, exe, cli, nodes=3, cpu="0", replicas=0, node_timeout=None):
        self.kind = kind
        self.replicas = replicas
        self.node_timeout = node_timeout
        self.dir = tempfile.mkdtemp(prefix="cluster-bench-%s-" % kind)
        self.ports = [free_port_pair() for _ in range(nodes)]
        self.procs = []
        try:
            self._start(os.path.abspath(exe) if os.sep in exe else exe, cli, cpu)
        except BaseException:
            self.stop()
            raise

    def _start(self, exe, cli, cpu):
        for port in self.ports:
            d = os.path.join(self.dir, str(port))
            os.makedirs(d)
            args = [exe, "--port", str(port), "--cluster-enabled", "yes", "--save", "", "--appendonly", "no"]
            if self.node_timeout is not None:
                args += ["--cluster-node-timeout", str(self.node_timeout)]
            if self.kind == "redis":
                args += ["--dir", d, "--daemonize", "no"]
            else:
                args += ["--unixsocket", ""]
            log = open(os.path.join(d, "log"), "wb")
            self.procs.append(subprocess.Popen(["taskset", "-c", cpu] + args, cwd=d, stdout=log,
                                               stderr=subprocess.STDOUT))
        for port in self.ports:
            wait_port(port)
        r = subprocess.run([cli, "--cluster", "create"] + ["127.0.0.1:%d" % p for p in self.ports] +
                           ["--cluster-replicas", str(self.replicas), "--cluster-yes"], capture_output=True,
                           text=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError("%s cluster: %s" % (self.kind, r.stdout + r.stderr))
        deadline = time.time() + 30
        while time.time() < deadline:
            states = [subprocess.run([cli, "-p", str(p), "cluster", "info"], capture_output=True,
                                     text=True).stdout for p in self.ports]
            if all("cluster_state:ok" in s for s in states):
                return
            time.sleep(0.2)
        raise RuntimeError("%s cluster never became ok" % self.kind)

    def stop(self):
        stop_servers(self.procs, self.dir)


def bench(benchmark, port, test, pipeline, requests, clients, cpu="1", cluster=True, threads=0):
    """Requests per second of one redis-benchmark --cluster run (cluster
    False: a plain run, for a one-node cluster, which --cluster refuses;
    threads: client threads, 0 for redis-benchmark's choice: one per node
    with --cluster, else one)."""
    r = subprocess.run(["taskset", "-c", cpu, benchmark] + (["--cluster"] if cluster else []) +
                       (["--threads", str(threads)] if threads else []) +
                       ["-p", str(port), "-t", test, "-n", str(requests), "-c", str(clients), "-P", str(pipeline),
                        "-r", "1000000", "--csv"],
                       capture_output=True, text=True, timeout=600)
    for line in r.stdout.splitlines():
        fields = [f.strip('"') for f in line.split(",")]
        if fields and fields[0].upper() == test.upper():
            return float(fields[1])
    raise RuntimeError("no %s figure in: %s %s" % (test, r.stdout, r.stderr))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--goblin", default="build-release/goblin-core")
    ap.add_argument("--redis-server", default=shutil.which("redis-server") or "redis-server")
    ap.add_argument("--redis-cli", default=shutil.which("redis-cli") or "redis-cli")
    ap.add_argument("--redis-benchmark", default=shutil.which("redis-benchmark") or "redis-benchmark")
    ap.add_argument("--requests", type=int, default=200000)
    ap.add_argument("--clients", type=int, default=12)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    clusters = {}
    try:
        clusters["goblin"] = Cluster("goblin", a.goblin, a.redis_cli)
        clusters["redis"] = Cluster("redis", a.redis_server, a.redis_cli)
        results = {}
        cases = [(t, p) for p in (1, 16) for t in ("set", "get")]
        for rnd in range(a.rounds):
            order = ["goblin", "redis"] if rnd % 2 == 0 else ["redis", "goblin"]
            for test, pipeline in cases:
                for kind in order:
                    rps = bench(a.redis_benchmark, clusters[kind].ports[0], test, pipeline, a.requests, a.clients)
                    results.setdefault((test, pipeline, kind), []).append(rps)
                    print("round %d %-4s P%-2d %-6s %12.0f req/s" % (rnd + 1, test, pipeline, kind, rps),
                          file=sys.stderr)
        print("| command | pipeline | goblin req/s (median) | redis req/s (median) | goblin / redis |")
        print("|---|---|---|---|---|")
        for test, pipeline in cases:
            g = statistics.median(results[(test, pipeline, "goblin")])
            r = statistics.median(results[(test, pipeline, "redis")])
            print("| %s | %d | %.0f | %.0f | %.2f |" % (test.upper(), pipeline, g, r, g / r))
    finally:
        for c in clusters.values():
            c.stop()


if __name__ == "__main__":
    main()
