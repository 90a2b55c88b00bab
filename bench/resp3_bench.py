#!/usr/bin/env python3
"""RESP3 vs RESP2 reply cost, goblin-core and redis-server in the same run.

    /usr/bin/python3 bench/resp3_bench.py --goblin build-release/goblin-core \
        [--redis /usr/bin/redis-server] [--trials 5] [--requests 200000] [--pipeline 16]

Each server gets a 100-field hash and a 100-member sorted set; then
redis-benchmark (over the Unix socket, one connection, pipelined) runs
HGETALL h and ZRANGE z 0 -1 WITHSCORES in RESP2 and with -3 (HELLO 3 on
connect). Servers and protocols alternate within every trial so drift hits
all rows alike; each cell is the median of --trials runs (requests/s).
The server runs on SERVER_CORE (default 0), the benchmark on CLIENT_CORE
(default 1). Prints a Markdown table: throughput, RESP3/RESP2 per server,
goblin-core/redis-server per protocol.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

SERVER_CORE = os.environ.get("SERVER_CORE", "0")
CLIENT_CORE = os.environ.get("CLIENT_CORE", "1")
CLI = os.environ.get("REDIS_CLI", "redis-cli")
BENCH = os.environ.get("REDIS_BENCHMARK", "redis-benchmark")

WORKLOADS = [("HGETALL (100 fields)", ["HGETALL", "h"]),
             ("ZRANGE 0 -1 WITHSCORES (100 members)", ["ZRANGE", "z", "0", "-1", "WITHSCORES"])]


class Server:
    def __init__(self, binary, kind):
        self.kind = kind
        self.dir = tempfile.mkdtemp(prefix="gbbench-")
        self.sock = os.path.join(self.dir, "s.sock")
        args = ["taskset", "-c", SERVER_CORE, binary, "--port", "0", "--unixsocket", self.sock,
                "--save", "", "--appendonly", "no", "--dir", self.dir]
        if kind != "redis":
            args += ["--rings", "0"]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(300):
            if os.path.exists(self.sock) and self.cli("PING").strip() == "PONG":
                break
            time.sleep(0.02)
        else:
            raise RuntimeError("%s did not start" % binary)
        pipe = []
        for i in range(100):
            pipe.append("HSET h field:%03d value-%03d" % (i, i))
            pipe.append("ZADD z %s member:%03d" % (repr(i * 1.1 + 0.5), i))
        subprocess.run([CLI, "-s", self.sock], input="\n".join(pipe).encode(), stdout=subprocess.DEVNULL, check=True)

    def cli(self, *args):
        r = subprocess.run([CLI, "-s", self.sock] + list(args), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        return r.stdout.decode()

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def bench(srv, argv, resp3, n, pipeline):
    cmd = ["taskset", "-c", CLIENT_CORE, BENCH, "-s", srv.sock, "-c", "1", "-n", str(n), "-P", str(pipeline),
           "--csv"] + (["-3"] if resp3 else []) + argv
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True).stdout.decode()
    row = [l for l in out.splitlines() if l and not l.startswith('"test"')][-1]
    return float(row.split(",")[1].strip('"'))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--goblin", required=True)
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--requests", type=int, default=200000)
    ap.add_argument("--pipeline", type=int, default=16)
    a = ap.parse_args()
    servers = [Server(a.goblin, "goblin"), Server(a.redis, "redis")]
    try:
        for s in servers:  # same replies from both (a sanity check, not a test)
            assert s.cli("HLEN", "h").strip() == "100" and s.cli("ZCARD", "z").strip() == "100"
        res = {}
        for t in range(a.trials):
            for name, argv in WORKLOADS:
                for resp3 in (False, True):
                    order = servers if t % 2 == 0 else servers[::-1]
                    for s in order:
                        res.setdefault((name, s.kind, resp3), []).append(bench(s, argv, resp3, a.requests, a.pipeline))
        med = {k: statistics.median(v) for k, v in res.items()}
        print("| workload | server | RESP2 req/s | RESP3 req/s | RESP3/RESP2 |")
        print("|---|---|---:|---:|---:|")
        for name, _ in WORKLOADS:
            for kind in ("goblin", "redis"):
                r2, r3 = med[(name, kind, False)], med[(name, kind, True)]
                print("| %s | %s | %.0f | %.0f | %.2f |" % (name, "goblin-core" if kind == "goblin" else "redis-server",
                                                           r2, r3, r3 / r2))
        print()
        print("| workload | goblin-core/redis-server RESP2 | goblin-core/redis-server RESP3 |")
        print("|---|---:|---:|")
        for name, _ in WORKLOADS:
            print("| %s | %.2f | %.2f |" % (name, med[(name, "goblin", False)] / med[(name, "redis", False)],
                                             med[(name, "goblin", True)] / med[(name, "redis", True)]))
        print("\n(%d trials, medians; %d requests per run, pipeline %d, one connection, Unix socket)"
              % (a.trials, a.requests, a.pipeline))
    finally:
        for s in servers:
            s.stop()


if __name__ == "__main__":
    sys.exit(main())
