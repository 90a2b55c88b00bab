#!/usr/bin/env python3
"""Scaling with the process count (issue 30, many cores on one box): a
cluster of 1 process against a cluster of 2, for goblin-core and for
redis-server, all four measured in the same run with
`redis-benchmark --cluster` (SET and GET over random keys of every slot),
at pipeline 1 and 16, rounds interleaved (the order rotates), medians
reported with the 2-process/1-process ratio and the servers' CPU time per
request (user + system of every server process over the run, /proc).

The clusters are formed by hand (ADDSLOTSRANGE over an even split, MEET):
redis-cli --cluster create wants 3 primaries at least, and redis-benchmark
--cluster 2 nodes at least, so the 1-process cluster (it owns every slot:
no redirection) is driven by a plain redis-benchmark run. Every run uses 2
client threads (--cluster would start one per node, a plain run one: the
ratio would measure the client). With threads redis-benchmark sees the
end of a run on a 250 ms tick, so a run must last seconds: pipeline 16 runs
get 10 times the requests. Server i runs on CPU
i (taskset, for both kinds alike), the benchmark client on --client-cpu.
On a machine with fewer cores than processes + client the client shares a
core with a server: the ratio then measures the sharing as much as the
scaling (say so when quoting it).

  bench/cluster_scale.py --goblin build-release/goblin-core --requests 300000 --rounds 3
  bench/cluster_scale.py ... --server-cpus 0     # both processes on one core: CPU per request
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster_compare import bench, free_port_pair, stop_servers, wait_port  # noqa: E402

SLOTS = 16384
CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime


class SmallCluster:
    """nodes processes of one kind, server i on cpus[i % len(cpus)], one cluster."""

    def __init__(self, kind, exe, cli, nodes, cpus):
        self.kind, self.cli = kind, cli
        self.dir = tempfile.mkdtemp(prefix="cluster-scale-%s-" % kind)
        self.ports = [free_port_pair() for _ in range(nodes)]
        self.procs = []
        try:
            self._start(os.path.abspath(exe) if os.sep in exe else exe, cpus)
            self._form()
        except BaseException:
            self.stop()
            raise

    def _start(self, exe, cpus):
        for i, port in enumerate(self.ports):
            d = os.path.join(self.dir, str(port))
            os.makedirs(d)
            args = [exe, "--port", str(port), "--cluster-enabled", "yes", "--save", "", "--appendonly", "no"]
            args += ["--dir", d, "--daemonize", "no"] if self.kind == "redis" else ["--unixsocket", ""]
            log = open(os.path.join(d, "log"), "wb")
            self.procs.append(subprocess.Popen(["taskset", "-c", str(cpus[i % len(cpus)])] + args, cwd=d,
                                               stdout=log, stderr=subprocess.STDOUT))
        for port in self.ports:
            wait_port(port)

    def cli_call(self, port, *args):
        r = subprocess.run([self.cli, "-p", str(port)] + [str(a) for a in args], capture_output=True, text=True,
                           timeout=30)
        return r.stdout

    def _form(self):
        n = len(self.ports)
        for i, port in enumerate(self.ports):
            self.cli_call(port, "cluster", "set-config-epoch", i + 1)
            self.cli_call(port, "cluster", "addslotsrange", SLOTS * i // n, SLOTS * (i + 1) // n - 1)
        for port in self.ports[1:]:
            self.cli_call(self.ports[0], "cluster", "meet", "127.0.0.1", port)
        deadline = time.time() + 30
        while time.time() < deadline:
            infos = [self.cli_call(p, "cluster", "info") for p in self.ports]
            if all("cluster_state:ok" in s and "cluster_known_nodes:%d" % n in s for s in infos):
                return
            time.sleep(0.2)
        raise RuntimeError("%s cluster of %d never became ok" % (self.kind, n))

    def cpu_seconds(self):
        return sum(cpu_seconds(p.pid) for p in self.procs)

    def stop(self):
        stop_servers(self.procs, self.dir)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--goblin", default="build-release/goblin-core")
    ap.add_argument("--redis-server", default=shutil.which("redis-server") or "redis-server")
    ap.add_argument("--redis-cli", default=shutil.which("redis-cli") or "redis-cli")
    ap.add_argument("--redis-benchmark", default=shutil.which("redis-benchmark") or "redis-benchmark")
    ap.add_argument("--requests", type=int, default=200000, help="requests per run at pipeline 1")
    ap.add_argument("--pipelined-requests", type=int, default=0,
                    help="requests per run at pipeline 16 (default 10 x --requests)")
    ap.add_argument("--clients", type=int, default=12)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--server-cpus", default="0,1", help="CPUs for server 0, 1, ... (default 0,1)")
    ap.add_argument("--client-cpu", default="1", help="CPU of redis-benchmark (default 1)")
    a = ap.parse_args()
    cpus = [int(c) for c in a.server_cpus.split(",")]
    requests = {1: a.requests, 16: a.pipelined_requests or 10 * a.requests}
    shapes = [(kind, n) for kind in ("goblin", "redis") for n in (1, 2)]
    exe = {"goblin": a.goblin, "redis": a.redis_server}
    clusters = {}
    try:
        for kind, n in shapes:
            clusters[(kind, n)] = SmallCluster(kind, exe[kind], a.redis_cli, n, cpus)
        rps, cpu_us = {}, {}
        cases = [(t, p) for p in (1, 16) for t in ("set", "get")]
        for rnd in range(a.rounds):
            order = shapes[rnd % len(shapes):] + shapes[:rnd % len(shapes)]
            for test, pipeline in cases:
                for shape in order:
                    c = clusters[shape]
                    before = c.cpu_seconds()
                    n = requests[pipeline]
                    r = bench(a.redis_benchmark, c.ports[0], test, pipeline, n, a.clients, a.client_cpu,
                              cluster=len(c.ports) > 1, threads=2)
                    used = c.cpu_seconds() - before
                    rps.setdefault((test, pipeline) + shape, []).append(r)
                    cpu_us.setdefault((test, pipeline) + shape, []).append(used * 1e6 / n)
                    print("round %d %-4s P%-2d %-6s x%d %12.0f req/s %6.2f cpu us/req"
                          % (rnd + 1, test, pipeline, shape[0], shape[1], r, used * 1e6 / n),
                          file=sys.stderr)
        med = {k: statistics.median(v) for k, v in rps.items()}
        cpu = {k: statistics.median(v) for k, v in cpu_us.items()}
        print("| command | pipeline | goblin x1 req/s | goblin x2 req/s | x2/x1 | redis x1 req/s | redis x2 req/s "
              "| x2/x1 | goblin x2 / redis x2 | server CPU µs/req goblin x1 / x2 | redis x1 / x2 |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for test, pipeline in cases:
            g1, g2 = med[(test, pipeline, "goblin", 1)], med[(test, pipeline, "goblin", 2)]
            r1, r2 = med[(test, pipeline, "redis", 1)], med[(test, pipeline, "redis", 2)]
            print("| %s | %d | %.0f | %.0f | %.2f | %.0f | %.0f | %.2f | %.2f | %.2f / %.2f | %.2f / %.2f |"
                  % (test.upper(), pipeline, g1, g2, g2 / g1, r1, r2, r2 / r1, g2 / r2,
                     cpu[(test, pipeline, "goblin", 1)], cpu[(test, pipeline, "goblin", 2)],
                     cpu[(test, pipeline, "redis", 1)], cpu[(test, pipeline, "redis", 2)]))
    finally:
        for c in clusters.values():
            c.stop()


if __name__ == "__main__":
    main()
