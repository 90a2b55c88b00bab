#!/usr/bin/env python3
"""Persistence, goblin-core vs redis-server, side by side in one run.

    /usr/bin/python3 bench/persistence_benchmark.py --goblin build-release/goblin-core \
        [--redis /usr/bin/redis-server] [--gb 2] [--trials 3] [--csv out.csv]

A mixed dataset of about --gb GiB (Redis's used_memory): strings of 100-600
bytes, hashes of 20 fields, lists, sets and sorted sets of 40 elements,
values with the repetition real data has (words, numbers, JSON-like
fields). It is generated once as a RESP stream and loaded into each server
with redis-cli --pipe. Servers run pinned to SERVER_CORE (0), clients to
CLIENT_CORE (1).

Rows (each the median of --trials, the two servers alternating):
  file size                 SAVE's file (goblin: zstd level 1 snapshot; Redis: RDB with LZF)
  SAVE throughput           the dataset / SAVE's time; both servers hold the same keys, so the
                            dataset is measured once, as Redis's used_memory (goblin's own
                            used_memory is smaller and would understate its rate)
  load throughput           the dataset / the load time the server logs
  ... helper core           the same two with the server's background work allowed on CLIENT_CORE
                            (nothing else runs then): goblin-core --cpu SERVER_CORE (its snapshot
                            writer and read-ahead threads on the other CPU); redis-server
                            server_cpulist SERVER_CORE, bgsave/bio/aof_rewrite_cpulist the other
                            (its SAVE and load run on the main thread: it has nothing to move)
  BGSAVE peak memory        peak over the save of goblin's RSS / Redis's parent+child PSS,
                            divided by the RSS before it, while redis-benchmark writes
  write p99 during BGSAVE   redis-benchmark SET (8 clients, pipeline 1) p99 while BGSAVE runs,
                            divided by its p99 with no save in the same run
  AOF everysec / always     redis-benchmark SET -P 16 throughput, appendonly yes

Prints a Markdown table with the ratios and the goals of the persistence issue.
"""
import argparse
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

SERVER_CORE = os.environ.get("SERVER_CORE", "0")
CLIENT_CORE = os.environ.get("CLIENT_CORE", "1")


def pin_harness():
    """This script polls the servers (INFO, memory) while they work: it is a
    client, so it runs on CLIENT_CORE, not beside the server it measures."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {int(CLIENT_CORE)})
REDIS_CLI = shutil.which("redis-cli") or "redis-cli"
REDIS_BENCH = shutil.which("redis-benchmark") or "redis-benchmark"

WORDS = ("alpha beta gamma delta order user session cart item price status pending shipped "
         "paid error retry queue worker job result payload token region zone").split()


def resp(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if not isinstance(a, bytes):
            a = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def text(rng, n):
    """Words and numbers, n bytes or so: compressible as real values are."""
    parts, size = [], 0
    while size < n:
        w = rng.choice(WORDS) if rng.random() < 0.7 else str(rng.randrange(10 ** 6))
        parts.append(w)
        size += len(w) + 1
    return " ".join(parts)[:n]


def generate(path, gib, seed=1):
    """Writes the RESP stream of a dataset of about gib GiB into path."""
    rng = random.Random(seed)
    target = int(gib * (1 << 30) * 0.62)  # payload bytes; Redis adds ~60% of overhead
    done, i = 0, 0
    with open(path, "wb", buffering=1 << 22) as f:
        while done < target:
            kind = i % 10
            if kind < 6:
                v = '{"user":%d,"status":"%s","note":"%s"}' % (i, rng.choice(WORDS), text(rng, rng.randrange(60, 560)))
                # redis-benchmark's key names ("key:%012d" under -r): the
                # writers during BGSAVE overwrite these, so a save must keep
                # their old values (copy-on-write in Redis's fork, per key here)
                f.write(resp("SET", "key:%012d" % i, v))
                done += len(v) + 12
            elif kind == 6:
                args = ["HSET", "hash:%d" % i]
                for j in range(20):
                    v = text(rng, 16)
                    args += ["field%d" % j, v]
                    done += 24
                f.write(resp(*args))
            elif kind == 7:
                vals = [text(rng, 24) for _ in range(40)]
                f.write(resp("RPUSH", "list:%d" % i, *vals))
                done += 40 * 26
            elif kind == 8:
                vals = ["member:%d" % rng.randrange(10 ** 7) for _ in range(40)]
                f.write(resp("SADD", "set:%d" % i, *vals))
                done += 40 * 16
            else:
                args = ["ZADD", "zset:%d" % i]
                for _ in range(40):
                    args += [rng.randrange(10 ** 6), "player:%d" % rng.randrange(10 ** 7)]
                f.write(resp(*args))
                done += 40 * 24
            i += 1
    return i


class Server:
    def __init__(self, kind, binary, extra=(), dirpath=None, helper_core=None):
        """helper_core: None, the server on SERVER_CORE alone; a CPU, the
        server's main thread on SERVER_CORE and its background work allowed
        on helper_core (goblin: --cpu, its helper threads get the rest;
        Redis: server_cpulist, with bgsave/bio/aof-rewrite on the helper)."""
        self.kind = kind
        self.dir = dirpath or tempfile.mkdtemp(prefix="gbpersist-")
        self.sock = os.path.join(self.dir, "s.sock")
        self.logpath = os.path.join(self.dir, "server.log")
        cpus = SERVER_CORE if helper_core is None else "%s,%s" % (SERVER_CORE, helper_core)
        args = ["taskset", "-c", cpus, binary, "--port", "0", "--unixsocket", self.sock, "--dir", self.dir,
                "--save", ""]
        if kind == "redis":
            args += ["--dbfilename", "dump.rdb", "--logfile", self.logpath]
            if helper_core is not None:
                args += ["--server_cpulist", SERVER_CORE, "--bio_cpulist", helper_core,
                         "--aof_rewrite_cpulist", helper_core, "--bgsave_cpulist", helper_core]
        else:
            args += ["--rings", "0", "--logfile", self.logpath]
            if helper_core is not None:
                args += ["--cpu", SERVER_CORE]
        args += list(extra)
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 600
        while time.time() < deadline:
            try:
                if self.call("PING") == b"+PONG\r\n":
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("%s did not start" % binary)

    def call(self, *args, timeout=600):
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(timeout)
        s.connect(self.sock)
        s.sendall(resp(*args))
        data = b""
        while True:
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            data += chunk
            if data.endswith(b"\r\n") and (not data.startswith(b"$") or
                                            len(data) >= int(data[1:data.index(b"\r")]) + 5):
                break
        s.close()
        return data

    def info(self, field, section="all"):
        text = self.call("INFO", section).decode()
        m = re.search(r"^%s:(\S+)" % re.escape(field), text, re.M)
        return m.group(1) if m else None

    def rss(self, pid=None):
        with open("/proc/%d/status" % (pid or self.proc.pid)) as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1)) * 1024

    def log(self):
        with open(self.logpath, errors="replace") as f:
            return f.read()

    def stop(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()


def pss(pid):
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            return int(re.search(r"^Pss:\s+(\d+)", f.read(), re.M).group(1)) * 1024
    except (OSError, AttributeError):
        return 0


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def load(srv, path):
    with open(path, "rb") as f:
        subprocess.run(["taskset", "-c", CLIENT_CORE, REDIS_CLI, "-s", srv.sock, "--pipe"], stdin=f,
                       stdout=subprocess.DEVNULL, check=True)


def bench_set(srv, n, pipeline=1, clients=8, keyspace="bench"):
    """redis-benchmark SET on keys of its own; returns (rps, p99 ms)."""
    out = subprocess.run(["taskset", "-c", CLIENT_CORE, REDIS_BENCH, "-s", srv.sock, "-t", "set", "-n", str(n),
                          "-c", str(clients), "-P", str(pipeline), "-r", "1000000", "-d", "64", "--csv"],
                         capture_output=True, text=True, check=True).stdout
    row = [l for l in out.splitlines() if l.startswith('"SET"')][0]
    cols = [c.strip('"') for c in row.split(",")]
    return float(cols[1]), float(cols[6])


def wait_bgsave(srv, sample=None):
    while True:
        if sample:
            sample()
        busy = srv.info("rdb_bgsave_in_progress", "persistence")
        if busy == "0":
            return
        time.sleep(0.05)


def measure(kind, binary, data, dataset_dir):
    """One trial for one server: every row."""
    r = {}
    srv = Server(kind, binary, dirpath=tempfile.mkdtemp(prefix="gbpersist-%s-" % kind, dir=dataset_dir))
    try:
        load(srv, data)
        used = int(srv.info("used_memory", "memory"))
        r["used_memory"] = used
        t0 = time.time()
        assert srv.call("SAVE") == b"+OK\r\n"
        r["save_s"] = time.time() - t0
        fname = os.path.join(srv.dir, "dump.rdb" if kind == "redis" else "dump.gdb")
        r["file"] = os.path.getsize(fname)
        # BGSAVE while writers write: peak memory and their p99
        _, p99_base = bench_set(srv, 200000)
        rss0 = srv.rss()
        peak = [rss0]

        def sample():
            if kind == "redis":
                total = pss(srv.proc.pid) + sum(pss(c) for c in children(srv.proc.pid))
            else:
                total = srv.rss()
            peak[0] = max(peak[0], total)

        stop = threading.Event()

        def sampler():
            while not stop.is_set():
                sample()
                time.sleep(0.02)

        th = threading.Thread(target=sampler, daemon=True)
        th.start()
        res = {}

        def writers():
            res["rps"], res["p99"] = bench_set(srv, 400000)

        wt = threading.Thread(target=writers)
        wt.start()
        time.sleep(0.3)
        assert srv.call("BGSAVE").startswith(b"+Background saving started")
        wait_bgsave(srv)
        wt.join()
        stop.set()
        th.join()
        r["peak_ratio"] = peak[0] / rss0
        r["p99_base"] = p99_base
        r["p99_bgsave"] = res["p99"]
        r["p99_ratio"] = res["p99"] / p99_base
    finally:
        srv.stop()
    # load: a fresh server over the file just saved; then the same with a
    # helper core (load, then SAVE of the loaded dataset)
    try:
        srv2 = Server(kind, binary, dirpath=srv.dir)
        try:
            r["load_s"] = load_seconds(srv2)
        finally:
            srv2.stop()
        srv3 = Server(kind, binary, dirpath=srv.dir, helper_core=CLIENT_CORE)
        try:
            r["load2_s"] = load_seconds(srv3)
            t0 = time.time()
            assert srv3.call("SAVE") == b"+OK\r\n"
            r["save2_s"] = time.time() - t0
        finally:
            srv3.stop()
    finally:
        shutil.rmtree(srv.dir, ignore_errors=True)
    return r


def load_seconds(srv):
    """The load time the server logged at start-up (the last one in the log:
    the servers started over the same directory append to one log file)."""
    log = srv.log()
    found = re.findall(r"DB loaded from disk: ([0-9.]+) seconds", log) if srv.kind == "redis" else \
        re.findall(r"DB loaded from disk: .* in ([0-9.]+) s", log)
    return float(found[-1])


def aof_rate(kind, binary, fsync):
    srv = Server(kind, binary, extra=["--appendonly", "yes", "--appendfsync", fsync])
    try:
        time.sleep(0.5)
        rps, _ = bench_set(srv, 1000000 if fsync != "always" else 300000, pipeline=16, clients=16)
        return rps
    finally:
        srv.stop()
        shutil.rmtree(srv.dir, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--goblin", required=True)
    ap.add_argument("--redis", default=shutil.which("redis-server") or "/usr/bin/redis-server")
    ap.add_argument("--gb", type=float, default=2.0)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--data", default=None, help="RESP file of the dataset (generated if missing)")
    ap.add_argument("--csv", default=None)
    a = ap.parse_args()
    pin_harness()
    workdir = tempfile.mkdtemp(prefix="gbpersist-data-")
    data = a.data or os.path.join(workdir, "dataset.resp")
    if not os.path.exists(data):
        t0 = time.time()
        n = generate(data, a.gb)
        print("generated %d keys, %.2f GB of RESP in %.0f s" % (n, os.path.getsize(data) / 1e9, time.time() - t0),
              file=sys.stderr)
    rows = {"goblin": [], "redis": []}
    for t in range(a.trials):
        for kind, binary in (("goblin", a.goblin), ("redis", a.redis)) if t % 2 == 0 else \
                (("redis", a.redis), ("goblin", a.goblin)):
            r = measure(kind, binary, data, workdir)
            print("trial %d %s: %s" % (t, kind, r), file=sys.stderr)
            rows[kind].append(r)
    aof = {}
    for fsync in ("everysec", "always"):
        runs = {"goblin": [], "redis": []}
        for t in range(a.trials):  # interleaved, the order alternating
            order = (("goblin", a.goblin), ("redis", a.redis))
            for kind, binary in order if t % 2 == 0 else order[::-1]:
                runs[kind].append(aof_rate(kind, binary, fsync))
        for kind in runs:
            aof[(kind, fsync)] = statistics.median(runs[kind])
            print("aof %s %s: %.0f (runs %s)" % (kind, fsync, aof[(kind, fsync)], runs[kind]), file=sys.stderr)

    def med(kind, f):
        return statistics.median(f(r) for r in rows[kind])

    used = {k: med(k, lambda r: r["used_memory"]) for k in rows}
    dataset = used["redis"]  # the same keys in both: one yardstick for both rates
    save_mbs = {k: dataset / med(k, lambda r: r["save_s"]) / 1e6 for k in rows}
    load_mbs = {k: dataset / med(k, lambda r: r["load_s"]) / 1e6 for k in rows}
    save2_mbs = {k: dataset / med(k, lambda r: r["save2_s"]) / 1e6 for k in rows}
    load2_mbs = {k: dataset / med(k, lambda r: r["load2_s"]) / 1e6 for k in rows}
    file_mb = {k: med(k, lambda r: r["file"] / 1e6) for k in rows}
    peak = {k: med(k, lambda r: r["peak_ratio"]) for k in rows}
    p99 = {k: med(k, lambda r: r["p99_ratio"]) for k in rows}
    p99abs = {k: (med(k, lambda r: r["p99_base"]), med(k, lambda r: r["p99_bgsave"])) for k in rows}
    print("\nDataset: %.2f GB (goblin used_memory), %.2f GB (redis used_memory); medians of %d trials\n"
          % (used["goblin"] / 1e9, used["redis"] / 1e9, a.trials))
    print("| row | goblin-core | redis-server | goblin / redis | goal |")
    print("|---|---|---|---|---|")
    print("| snapshot file | %.0f MB | %.0f MB | %.2fx | <= 0.6x |" % (file_mb["goblin"], file_mb["redis"],
                                                                    file_mb["goblin"] / file_mb["redis"]))
    print("| SAVE throughput | %.0f MB/s | %.0f MB/s | %.2fx | >= 2x |" % (save_mbs["goblin"], save_mbs["redis"],
                                                                        save_mbs["goblin"] / save_mbs["redis"]))
    print("| load throughput | %.0f MB/s | %.0f MB/s | %.2fx | >= 2x |" % (load_mbs["goblin"], load_mbs["redis"],
                                                                        load_mbs["goblin"] / load_mbs["redis"]))
    print("| SAVE throughput, helper core | %.0f MB/s | %.0f MB/s | %.2fx | >= 2x |"
          % (save2_mbs["goblin"], save2_mbs["redis"], save2_mbs["goblin"] / save2_mbs["redis"]))
    print("| load throughput, helper core | %.0f MB/s | %.0f MB/s | %.2fx | >= 2x |"
          % (load2_mbs["goblin"], load2_mbs["redis"], load2_mbs["goblin"] / load2_mbs["redis"]))
    print("| BGSAVE peak memory / before | %.2fx | %.2fx | | goblin <= 1.1x |" % (peak["goblin"], peak["redis"]))
    print("| write p99 during BGSAVE / without | %.2fx (%.2f -> %.2f ms) | %.2fx (%.2f -> %.2f ms) | | goblin <= 2x |"
          % (p99["goblin"], p99abs["goblin"][0], p99abs["goblin"][1], p99["redis"], p99abs["redis"][0],
             p99abs["redis"][1]))
    for fsync in ("everysec", "always"):
        g, r = aof[("goblin", fsync)], aof[("redis", fsync)]
        print("| AOF %s SET -P 16 | %.0f/s | %.0f/s | %.2fx | >= %s |" % (fsync, g, r, g / r,
                                                                        "1.0x (aim 1.3x)" if fsync == "everysec"
                                                                        else "1.0x"))
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("row,goblin,redis\n")
            f.write("file_mb,%.1f,%.1f\n" % (file_mb["goblin"], file_mb["redis"]))
            f.write("save_mbs,%.1f,%.1f\n" % (save_mbs["goblin"], save_mbs["redis"]))
            f.write("load_mbs,%.1f,%.1f\n" % (load_mbs["goblin"], load_mbs["redis"]))
            f.write("save2_mbs,%.1f,%.1f\n" % (save2_mbs["goblin"], save2_mbs["redis"]))
            f.write("load2_mbs,%.1f,%.1f\n" % (load2_mbs["goblin"], load2_mbs["redis"]))
            f.write("peak_ratio,%.3f,%.3f\n" % (peak["goblin"], peak["redis"]))
            f.write("p99_ratio,%.3f,%.3f\n" % (p99["goblin"], p99["redis"]))
            for fsync in ("everysec", "always"):
                f.write("aof_%s,%.0f,%.0f\n" % (fsync, aof[("goblin", fsync)], aof[("redis", fsync)]))
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
