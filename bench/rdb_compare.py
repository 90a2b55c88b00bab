#!/usr/bin/env python3
"""Loading a Redis dump.rdb: goblin-core against redis-server, side by side
(issue 29; docs/benchmarks.md, "Redis RDB files").

    /usr/bin/python3 bench/rdb_compare.py --goblin build-release/goblin-core \\
        [--redis /usr/bin/redis-server] [--trials 5] [--keys 1000000] [--collections 800] \\
        [--own-snapshot]

redis-server builds one dataset and SAVEs it (rdbcompression yes, as
Redis's default): --keys small strings `key:%08d` -> 16 bytes (DEBUG
POPULATE's shape) and --collections collections of 5,000 elements (lists,
hashes, sets and sorted sets in turn, so Redis writes quicklists and hash
tables, not only listpacks) -- the dataset issue 34 measured snapshot loads
on. Each trial then starts both servers on that same file (pinned to
SERVER_CORE, default 0; the order alternates between trials) and reads the
load time each reports in its log ("DB loaded from disk: N seconds" and
goblin-core's "DB loaded from a Redis RDB file ... in N s"), and the
used_memory and RSS after the load. Before measuring, the script checks
both servers hold the same number of keys and the same values for a sample
of them. Rows are medians over --trials.

--own-snapshot adds a third row: goblin-core loading its own snapshot of
the same dataset (goblin-core loads dump.rdb once and SAVEs it in its own
format as goblin.snap), in the same trials, the three starts interleaved
and their order rotating. The servers run under `taskset -c SERVER_CORE`,
so every thread of a server shares that one CPU: goblin-core's snapshot
read-ahead thread is not started on one CPU (the engine thread decodes
each block itself), and the figures compare one CPU with one CPU.
"""
import argparse
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

SERVER_CORE = os.environ.get("SERVER_CORE", "0")


def resp(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Conn:
    def __init__(self, sock):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(sock)
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.s.recv(1 << 20)
            if not chunk:
                raise OSError("connection closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def reply(self):
        line = self._line()
        if line[:1] == b"$":
            n = int(line[1:])
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self.buf += self.s.recv(1 << 20)
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data
        if line[:1] == b"*":
            return [self.reply() for _ in range(int(line[1:]))]
        if line[:1] == b"-":
            raise RuntimeError(line.decode())
        return line[1:]

    def call(self, *args):
        self.s.sendall(resp(*args))
        return self.reply()

    def pipeline(self, cmds):
        self.s.sendall(b"".join(resp(*c) for c in cmds))
        return [self.reply() for _ in cmds]


def start(binary, kind, d, dbfilename, extra=()):
    sock = os.path.join(d, "s.sock")
    log = os.path.join(d, kind + ".log")
    args = ["taskset", "-c", SERVER_CORE, binary, "--port", "0", "--unixsocket", sock, "--save", "",
            "--appendonly", "no", "--dir", d, "--dbfilename", dbfilename, "--logfile", log] + list(extra)
    if kind != "redis":
        args += ["--rings", "0"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(6000):
        try:
            c = Conn(sock)
            if c.call("PING") == b"PONG":
                return proc, c, log
        except (OSError, RuntimeError):
            pass
        time.sleep(0.02)
    raise RuntimeError("%s did not start" % binary)


def stop(proc):
    proc.terminate()
    proc.wait(60)


def build(redis, d, keys, collections, value_size=16, compression=True):
    proc, c, _ = start(redis, "redis", d, "dump.rdb", ["--enable-debug-command", "yes",
                                                       "--rdbcompression", "yes" if compression else "no"])
    try:
        c.call("DEBUG", "POPULATE", keys, "key", value_size)
        kinds = ["RPUSH", "HSET", "SADD", "ZADD"]
        for i in range(collections):
            kind = kinds[i % 4]
            key = "coll:%s:%d" % (kind.lower(), i)
            cmds = []
            for j in range(0, 5000, 500):
                args = [kind, key]
                for k in range(j, j + 500):
                    if kind == "HSET":
                        args += ["f%d" % k, "value-%d" % k]
                    elif kind == "ZADD":
                        args += [str(k * 1.5), "member-%d" % k]
                    else:
                        args += ["element-%d" % k]
                cmds.append(args)
            c.pipeline(cmds)
        c.call("SAVE")
    finally:
        stop(proc)
    return os.path.getsize(os.path.join(d, "dump.rdb"))


# The line each start logs when its load is done, by contestant.
LOAD_LINE = {
    "redis": r"DB loaded from disk: ([0-9.]+) seconds",
    "goblin": r"DB loaded from a Redis RDB file.* in ([0-9.]+) s",
    "goblin-own": r"DB loaded from disk: .* in ([0-9.]+) s",
}
ROW_NAME = {"goblin": "goblin-core, Redis's dump.rdb", "goblin-own": "goblin-core, its own snapshot",
            "redis": "redis-server 7.0, dump.rdb"}


OWN_SNAPSHOT = "goblin.snap"


def save_own_snapshot(goblin, d):
    """goblin-core loads dump.rdb once and SAVEs the dataset in its own
    format as OWN_SNAPSHOT; returns that file's size."""
    shutil.copyfile(os.path.join(d, "dump.rdb"), os.path.join(d, OWN_SNAPSHOT))
    proc, c, log = start(goblin, "goblin", d, OWN_SNAPSHOT)
    try:
        c.call("SAVE")
    finally:
        stop(proc)
        os.unlink(log)
    kept = os.path.join(d, OWN_SNAPSHOT + ".redis")  # the Redis original goblin-core keeps beside its first save
    if os.path.exists(kept):
        os.unlink(kept)
    return os.path.getsize(os.path.join(d, OWN_SNAPSHOT))


def loaded_seconds(kind, log):
    with open(log, errors="replace") as f:
        text = f.read()
    pat = LOAD_LINE[kind]
    m = re.search(pat, text)
    if not m:
        raise RuntimeError("%s did not report its load time:\n%s" % (kind, text[-2000:]))
    return float(m.group(1))


def memory(c, pid):
    info = c.call("INFO", "memory").decode()
    used = int(re.search(r"^used_memory:(\d+)", info, re.M).group(1))
    with open("/proc/%d/status" % pid) as f:
        rss = int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1)) * 1024
    return used, rss


def cpu_seconds(pid):
    """CPU time the server has used so far (start-up and the load: it
    answers PING only once loaded). On a machine other work shares, the
    steadier figure: the logged wall time also counts the time the load
    waited for the CPU."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def sample(c, keys):
    rng = random.Random(7)
    names = ["key:%d" % rng.randrange(keys) for _ in range(200)]
    names += ["coll:rpush:0", "coll:hset:1", "coll:sadd:2", "coll:zadd:3"]
    out = [c.call("DBSIZE")]
    for n in names:
        t = c.call("TYPE", n)
        out.append((n, t, {b"string": lambda: c.call("GET", n), b"list": lambda: c.call("LRANGE", n, 0, -1),
                           b"hash": lambda: sorted(c.call("HGETALL", n) or []),
                           b"set": lambda: sorted(c.call("SMEMBERS", n) or []),
                           b"zset": lambda: c.call("ZRANGE", n, 0, -1, "WITHSCORES")}.get(t, lambda: None)()))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--goblin", required=True)
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--keys", type=int, default=1000000)
    ap.add_argument("--collections", type=int, default=800)
    ap.add_argument("--value-size", type=int, default=16, help="bytes of each string value (DEBUG POPULATE)")
    ap.add_argument("--own-snapshot", action="store_true",
                    help="also goblin-core loading its own snapshot of the dataset (SAVEd once by goblin-core)")
    ap.add_argument("--no-compression", action="store_true",
                    help="the file saved with rdbcompression no: DEBUG POPULATE's zero-padded values would "
                         "otherwise shrink to nothing (the 2 GB row: --keys 12000000 --value-size 150)")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="gb-rdbbench-")
    try:
        size = build(a.redis, work, a.keys, a.collections, a.value_size, not a.no_compression)
        print("dataset: %d keys of %d bytes + %d collections of 5,000; dump.rdb %.1f MB"
              % (a.keys, a.value_size, a.collections, size / 1e6), file=sys.stderr)
        kinds = ["goblin", "redis"]
        files = {"goblin": "dump.rdb", "redis": "dump.rdb", "goblin-own": OWN_SNAPSHOT}
        sizes = {"goblin": size, "redis": size}
        if a.own_snapshot:
            sizes["goblin-own"] = save_own_snapshot(a.goblin, work)
            print("goblin-core's snapshot: %.1f MB" % (sizes["goblin-own"] / 1e6), file=sys.stderr)
            kinds.insert(1, "goblin-own")
        results = {k: [] for k in kinds}
        samples = {}
        for trial in range(a.trials):
            shift = trial % len(kinds)
            order = kinds[shift:] + kinds[:shift] if len(kinds) > 2 else kinds[::1 if trial % 2 == 0 else -1]
            for kind in order:
                binary = a.redis if kind == "redis" else a.goblin
                proc, c, log = start(binary, kind, work, files[kind])
                try:
                    secs = loaded_seconds(kind, log)
                    cpu = cpu_seconds(proc.pid)
                    used, rss = memory(c, proc.pid)
                    if trial == 0:
                        samples[kind] = sample(c, a.keys)
                finally:
                    stop(proc)
                    os.unlink(log)
                results[kind].append((secs, used, rss, cpu))
                print("trial %d %s: %.3f s (CPU %.2f s)" % (trial + 1, kind, secs, cpu), file=sys.stderr)
        if any(samples[k] != samples["redis"] for k in kinds):
            sys.exit("the servers loaded different data")
        med = {k: [statistics.median(r[i] for r in v) for i in range(4)] for k, v in results.items()}
        print("dump.rdb: %.1f MB (%d keys of %d bytes, %d collections of 5,000 elements%s), median of %d trials, "
              "server on CPU %s\n" % (size / 1e6, a.keys, a.value_size, a.collections,
                                      ", rdbcompression no" if a.no_compression else "", a.trials, SERVER_CORE))
        print("| server, file | file MB | load s | MB/s | load speed vs Redis | CPU s | CPU vs Redis "
              "| used_memory MB | RSS MB |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for kind in kinds:
            s, u, r, cpu = med[kind]
            print("| %s | %.1f | %.3f | %.0f | %.2fx | %.2f | %.2fx | %.0f | %.0f |"
                  % (ROW_NAME[kind], sizes[kind] / 1e6, s, sizes[kind] / 1e6 / s, med["redis"][0] / s, cpu,
                     med["redis"][3] / cpu, u / 1e6, r / 1e6))
        for kind in kinds[:-1]:
            print("\n%s / redis: load speed %.2fx (CPU %.2fx), used_memory %.2fx, RSS %.2fx (load s per trial: %s; "
                  "redis: %s)" % (ROW_NAME[kind], med["redis"][0] / med[kind][0], med["redis"][3] / med[kind][3],
                                  med[kind][1] / med["redis"][1], med[kind][2] / med["redis"][2],
                                  ", ".join("%.3f" % t[0] for t in results[kind]),
                                  ", ".join("%.3f" % t[0] for t in results["redis"])))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
