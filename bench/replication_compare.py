#!/usr/bin/env python3
"""Replication side by side (issue 29): a goblin-core primary with a
goblin-core replica against a redis-server primary with a redis-server
replica, in the same run, rounds interleaved.

  full sync   N keys (--keys, 100-byte values) on the primary, then
              REPLICAOF on a fresh replica: seconds until the replica's
              master_link_status is up, and the primary's peak RSS meanwhile
              against its RSS before (redis-server forks: its child's
              copy-on-write pages are not in the parent's RSS, so the
              child's is sampled too and added), and the longest PING
              round trip on the primary meanwhile (a client on a kept
              connection pinging in a loop: how long the engine stalls)
  writes      redis-benchmark SET -P 16 -c 4 on the primary with the
              replica attached: requests per second
  lag         during that load, the primary's master_repl_offset minus the
              replica's slave_repl_offset, sampled every 10 ms: p50 / p99 bytes

Both primaries sync diskless (Redis 7.0's default) without the delay for
more replicas; --disk: both through a file (repl-diskless-sync no).

Pinning: primaries on CPU 0, replicas and clients on CPU 1 (2-core
machine). Usage:
  bench/replication_compare.py --goblin build-release/goblin-core --keys 1000000 --rounds 3
"""
import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def call(port, *args):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in
                                               (x if isinstance(x, bytes) else str(x).encode() for x in args)))
    data = b""
    while True:
        chunk = s.recv(1 << 20)
        data += chunk
        if not chunk or (data.startswith(b"$") and len(data) >= int(data[1:data.index(b"\r")]) + 5 + len(data[1:data.index(b"\r")])) \
                or (not data.startswith(b"$") and data.endswith(b"\r\n")):
            break
    s.close()
    return data


def info(port, section):
    text = call(port, "INFO", section).decode()
    return dict(l.split(":", 1) for l in text.splitlines() if ":" in l)


def rss_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))
    except (OSError, AttributeError):
        return 0


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


class Node:
    disk = False

    def __init__(self, binary, kind, cpu):
        self.dir = tempfile.mkdtemp(prefix="gbrepl-")
        self.port = free_port()
        args = ["taskset", "-c", str(cpu), binary, "--port", str(self.port), "--save", "", "--appendonly", "no",
                "--dir", self.dir, "--bind", "127.0.0.1"]
        args += ["--repl-diskless-sync", "no" if Node.disk else "yes", "--repl-diskless-sync-delay", "0"]
        if kind != "redis":
            args += ["--rings", "0", "--unixsocket", os.path.join(self.dir, "s.sock")]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(300):
            try:
                if call(self.port, "PING") == b"+PONG\r\n":
                    return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("%s did not start" % binary)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def load(port, keys):
    data = b"".join(b"*3\r\n$3\r\nSET\r\n$12\r\nkey:%08d\r\n$100\r\n%s\r\n" % (i, b"v" * 100) for i in range(keys))
    subprocess.run(["taskset", "-c", "1", "redis-cli", "-p", str(port), "--pipe"], input=data,
                   stdout=subprocess.DEVNULL, check=True)


def full_sync(binary, kind, keys):
    primary, replica = Node(binary, kind, 0), Node(binary, kind, 1)
    try:
        load(primary.port, keys)
        base = rss_kb(primary.proc.pid)
        peak, done = [base], threading.Event()

        def sample():
            while not done.is_set():
                peak.append(rss_kb(primary.proc.pid) + sum(rss_kb(c) for c in children(primary.proc.pid)))
                time.sleep(0.005)

        rtts = [0.0]

        def ping():
            s = socket.create_connection(("127.0.0.1", primary.port))
            while not done.is_set():
                t = time.perf_counter()
                s.sendall(b"PING\r\n")
                while not s.recv(64).endswith(b"\r\n"):
                    pass
                rtts.append(time.perf_counter() - t)
                time.sleep(0.001)
            s.close()

        threads = [threading.Thread(target=sample), threading.Thread(target=ping)]
        for t in threads:
            t.start()
        t0 = time.perf_counter()
        call(replica.port, "REPLICAOF", "127.0.0.1", primary.port)
        while info(replica.port, "replication").get("master_link_status") != "up":
            time.sleep(0.005)
        took = time.perf_counter() - t0
        done.set()
        for t in threads:
            t.join()
        return took, max(peak) / base, max(rtts) * 1000
    finally:
        primary.stop()
        replica.stop()


def writes_and_lag(binary, kind, n):
    primary, replica = Node(binary, kind, 0), Node(binary, kind, 1)
    try:
        call(replica.port, "REPLICAOF", "127.0.0.1", primary.port)
        while info(replica.port, "replication").get("master_link_status") != "up":
            time.sleep(0.01)
        lags, done = [], threading.Event()

        def sample():
            while not done.is_set():
                p = int(info(primary.port, "replication")["master_repl_offset"])
                r = int(info(replica.port, "replication")["slave_repl_offset"])
                lags.append(max(0, p - r))
                time.sleep(0.01)

        t = threading.Thread(target=sample)
        t.start()
        out = subprocess.run(["taskset", "-c", "1", "redis-benchmark", "-p", str(primary.port), "-t", "set", "-n",
                              str(n), "-P", "16", "-c", "4", "-r", "1000000", "-q"],
                             capture_output=True, text=True).stdout
        done.set()
        t.join()
        rps = float(re.findall(r"SET: ([\d.]+) requests per second", out.replace("\r", "\n"))[-1])
        lags.sort()
        return rps, lags[len(lags) // 2], lags[min(len(lags) - 1, int(len(lags) * 0.99))]
    finally:
        primary.stop()
        replica.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--goblin", required=True)
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--keys", type=int, default=1000000)
    ap.add_argument("--requests", type=int, default=2000000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--disk", action="store_true", help="both primaries sync through a file")
    ap.add_argument("--sync-only", action="store_true", help="only the full sync, not the write load")
    a = ap.parse_args()
    Node.disk = a.disk
    binaries = {"goblin": a.goblin, "redis": a.redis}
    res = {}
    for rnd in range(a.rounds):
        for kind in ("goblin", "redis") if rnd % 2 == 0 else ("redis", "goblin"):
            res.setdefault((kind, "sync"), []).append(full_sync(binaries[kind], kind, a.keys))
            load = (0.0, 0, 0) if a.sync_only else writes_and_lag(binaries[kind], kind, a.requests)
            res.setdefault((kind, "load"), []).append(load)
            print("round %d %s: sync %.2f s (peak RSS x%.2f, longest PING %.1f ms), %.0f SET/s, lag p50 %d p99 %d "
                  "bytes" % ((rnd + 1, kind) + res[(kind, "sync")][-1] + load), file=sys.stderr)
    med = {}
    for kind in ("goblin", "redis"):
        s, l = res[(kind, "sync")], res[(kind, "load")]
        med[kind] = (statistics.median(x[0] for x in s), statistics.median(x[1] for x in s),
                     statistics.median(x[0] for x in l), statistics.median(x[1] for x in l),
                     statistics.median(x[2] for x in l), statistics.median(x[2] for x in s))
    g, r = med["goblin"], med["redis"]
    print("%d keys of 100 bytes, %s sync; %d SETs at pipeline 16; median of %d rounds\n"
          % (a.keys, "disk-based" if a.disk else "diskless", a.requests, a.rounds))
    print("| | goblin-core | redis-server | goblin / redis |")
    print("|---|---|---|---|")
    print("| full sync to link up (s) | %.2f | %.2f | %.2fx |" % (g[0], r[0], g[0] / r[0]))
    print("| primary peak RSS during sync / before | %.2f | %.2f | %.2fx |" % (g[1], r[1], g[1] / r[1]))
    print("| longest PING on the primary during sync (ms) | %.1f | %.1f | |" % (g[5], r[5]))
    if a.sync_only:
        return
    print("| SET/s with a replica attached | %.0f | %.0f | %.2fx |" % (g[2], r[2], g[2] / r[2]))
    print("| replication lag p50 (bytes) | %d | %d | |" % (g[3], r[3]))
    print("| replication lag p99 (bytes) | %d | %d | |" % (g[4], r[4]))


if __name__ == "__main__":
    main()
