#!/usr/bin/env python3
"""Engine stalls a client can see (issue 34): goblin-core and redis-server
side by side, a probe client PINGing every 0.5 ms on its own connection
while a scenario runs, usually beside a steady pipelined write load; the
table gives each server's worst probe round trip and its p99.9.

Scenarios (N = --keys):
  flushall-async  N small keys, FLUSHALL ASYNC while writers keep writing
  flushall-sync   the same with FLUSHALL (lazyfree-lazy-user-flush no, the
                  default)
  growth          from empty to N keys written at pipeline 16 (table resizes)
  expiry-wave     N keys all expiring in the same second, then the wave
  unlink-zset     UNLINK of a sorted set of N/2 members, writers running
  del-zset        the same with DEL (lazyfree-lazy-user-del no, the default)
  del-stream      DEL of a stream of N/2 entries, every one pending in a
                  consumer group (read by XREADGROUP, never acknowledged)
  bgsave          BGSAVE of N keys (redis-server: fork; goblin: fork-less)
  aof-rewrite     appendonly turned on over N keys (and its first rewrite
                  waited for), then BGREWRITEAOF while writers keep writing
                  (everysec fsync)
  eviction        maxmemory 32mb and allkeys-lru, N keys written (it evicts
                  from the first few hundred thousand on), then the writers'
                  new keys each evict one; the probe GETs a 16-byte value
                  instead of PINGing (issue 36: p99.9 of GET at the limit)

Each server is started fresh per scenario and trial, pinned to SERVER_CORE
(socket_compare); the probe and the loaders run on the other core, the
order of the servers alternates between trials. Medians over --trials.

  bench/stall_probe.py --goblin build-release/goblin-core --keys 2000000 --trials 3
"""
import argparse
import multiprocessing
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from socket_compare import CLIENT_CORE, SERVER_CORE, Server, cpu_model

SERVERS = ("goblin", "redis")


def read_reply(s):
    """One reply of PING or GET: a line, or a bulk string whole."""
    buf = b""
    while not buf.endswith(b"\r\n"):
        buf += s.recv(4096)
    if buf.startswith(b"$") and not buf.startswith(b"$-1"):
        need = buf.index(b"\r\n") + 2 + int(buf[1:buf.index(b"\r\n")]) + 2
        while len(buf) < need:
            buf += s.recv(4096)
    return buf


def probe(sock_path, seconds, done, out, command=b"*1\r\n$4\r\nPING\r\n"):
    """`command` (PING) every 0.5 ms for `seconds` or until done is set; the
    round trips (s) into out."""
    os.sched_setaffinity(0, {int(CLIENT_CORE)})
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock_path)
    rtts = []
    end = time.perf_counter() + seconds
    while True:
        t0 = time.perf_counter()
        if t0 >= end or done.is_set():
            break
        s.sendall(command)
        read_reply(s)
        t1 = time.perf_counter()
        rtts.append(t1 - t0)
        pause = 0.0005 - (time.perf_counter() - t0)
        if pause > 0:
            time.sleep(pause)
    out.put(rtts)


class Probe:
    def __init__(self, srv, seconds, command=b"*1\r\n$4\r\nPING\r\n"):
        self.q = multiprocessing.Queue()
        self.done = multiprocessing.Event()
        self.p = multiprocessing.Process(target=probe, args=(srv.sock, seconds, self.done, self.q, command))
        self.p.start()
        time.sleep(0.2)

    def result(self, now=False):
        if now:
            self.done.set()
        rtts = sorted(self.q.get())
        self.p.join()
        return rtts[-1], rtts[min(len(rtts) - 1, int(len(rtts) * 0.999))]


def resp(*args):
    return b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args)


def pipe_file(path, commands):
    if not os.path.exists(path):
        with open(path, "wb") as f:
            for c in commands:
                f.write(c)
    return path


def pipe_in(srv, path):
    with open(path, "rb") as f:
        subprocess.run(["taskset", "-c", CLIENT_CORE, "redis-cli", "-s", srv.sock, "--pipe"], stdin=f,
                       stdout=subprocess.DEVNULL, check=True)


def writers(srv, n=10 ** 9, keyspace=1000000):
    """A steady pipelined SET load on the client core until stopped."""
    return subprocess.Popen(["taskset", "-c", CLIENT_CORE, "redis-benchmark", "-s", srv.sock, "-t", "set",
                             "-n", str(n), "-P", "16", "-c", "4", "-r", str(keyspace), "-q"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop(p):
    p.terminate()
    p.wait()


def keys_file(a):
    return pipe_file(os.path.join(a.cache, "keys-%d.resp" % a.keys),
                     (resp(b"SET", b"key:%08d" % i, b"v" * 16) for i in range(a.keys)))


def during_writes(srv, seconds, *command):
    """The probe's worst and p99.9 while `command` runs beside the steady
    write load (sent 0.3 s into the probe's window)."""
    w = writers(srv)
    pr = Probe(srv, seconds)
    time.sleep(0.3)
    srv.call(*command)
    r = pr.result()
    stop(w)
    return r


def sc_flushall_async(a, srv):
    pipe_in(srv, keys_file(a))
    return during_writes(srv, 2.0, b"FLUSHALL", b"ASYNC")


def sc_flushall_sync(a, srv):
    pipe_in(srv, keys_file(a))
    return during_writes(srv, 2.0, b"FLUSHALL")


def sc_growth(a, srv):
    pr = Probe(srv, 600.0)
    subprocess.run(["taskset", "-c", CLIENT_CORE, "redis-benchmark", "-s", srv.sock, "-t", "set", "-n",
                    str(a.keys), "-P", "16", "-r", str(a.keys * 4), "-q"], stdout=subprocess.DEVNULL, check=True)
    return pr.result(now=True)


def sc_expiry_wave(a, srv):
    at = int(time.time() * 1000) + 4000 + a.keys // 1000
    path = os.path.join(a.cache, "expire-%d.resp" % a.keys)
    with open(path, "wb") as f:
        for i in range(a.keys):
            f.write(resp(b"SET", b"key:%08d" % i, b"v" * 16, b"PXAT", b"%d" % at))
    pipe_in(srv, path)
    os.unlink(path)
    wait = at / 1000.0 - time.time() - 0.5
    if wait > 0:
        time.sleep(wait)
    pr = Probe(srv, 3.0)
    return pr.result()


def big_zset_removed(a, srv, command):
    members = a.keys // 2
    path = pipe_file(os.path.join(a.cache, "zset-%d.resp" % members),
                     (resp(b"ZADD", b"z", *[x for i in range(b, min(b + 1000, members))
                                             for x in (b"%d" % i, b"m%09d" % i)])
                      for b in range(0, members, 1000)))
    pipe_in(srv, path)
    return during_writes(srv, 2.0, command, b"z")


def sc_unlink_zset(a, srv):
    return big_zset_removed(a, srv, b"UNLINK")


def sc_del_zset(a, srv):
    return big_zset_removed(a, srv, b"DEL")


def sc_del_stream(a, srv):
    entries = a.keys // 2
    build = [resp(b"XADD", b"s", b"%d-1" % (i + 1), b"f", b"v") for i in range(entries)]
    build += [resp(b"XGROUP", b"CREATE", b"s", b"g", b"0"),
              resp(b"XREADGROUP", b"GROUP", b"g", b"c", b"COUNT", b"%d" % entries, b"STREAMS", b"s", b">")]
    pipe_in(srv, pipe_file(os.path.join(a.cache, "stream-%d.resp" % entries), build))
    return during_writes(srv, 2.0, b"DEL", b"s")


def sc_bgsave(a, srv):
    pipe_in(srv, keys_file(a))
    return during_writes(srv, 3.0, b"BGSAVE")


def wait_aof_rewrite(srv):
    for _ in range(6000):
        text = srv.call(b"INFO", b"persistence")
        if b"aof_rewrite_in_progress:0" in text and b"aof_rewrite_scheduled:0" in text:
            return
        time.sleep(0.01)
    raise RuntimeError("the AOF rewrite did not finish in 60 s")


def sc_aof_rewrite(a, srv):
    pipe_in(srv, keys_file(a))
    srv.call(b"CONFIG", b"SET", b"appendonly", b"yes")  # starts a rewrite of its own, in both servers
    wait_aof_rewrite(srv)
    return during_writes(srv, 3.0, b"BGREWRITEAOF")


def sc_eviction(a, srv):
    for name, value in ((b"maxmemory-policy", b"allkeys-lru"), (b"maxmemory", b"32mb")):
        srv.call(b"CONFIG", b"SET", name, value)
    srv.call(b"SET", b"probe:key", b"p" * 16)
    pipe_in(srv, keys_file(a))  # past 32mb: every later write evicts
    w = writers(srv)
    pr = Probe(srv, 3.0, resp(b"GET", b"probe:key"))  # read every 0.5 ms: the most recent key, never evicted
    r = pr.result()
    stop(w)
    return r


SCENARIOS = {
    "flushall-async": sc_flushall_async,
    "flushall-sync": sc_flushall_sync,
    "growth": sc_growth,
    "expiry-wave": sc_expiry_wave,
    "unlink-zset": sc_unlink_zset,
    "del-zset": sc_del_zset,
    "del-stream": sc_del_stream,
    "bgsave": sc_bgsave,
    "aof-rewrite": sc_aof_rewrite,
    "eviction": sc_eviction,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--goblin", required=True)
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--keys", type=int, default=1000000)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--only", help="comma list of scenarios")
    a = ap.parse_args()
    a.cache = tempfile.mkdtemp(prefix="gbstall-")
    names = a.only.split(",") if a.only else list(SCENARIOS)
    binaries = {"goblin": a.goblin, "redis": a.redis}
    res = {}
    for trial in range(a.trials):
        for name in names:
            for kind in SERVERS if trial % 2 == 0 else reversed(SERVERS):
                srv = Server(binaries[kind], kind)
                try:
                    res.setdefault((name, kind), []).append(SCENARIOS[name](a, srv))
                finally:
                    srv.stop()
                print("trial %d %s %s: worst %.2f ms" % (trial + 1, name, kind, res[(name, kind)][-1][0] * 1e3),
                      file=sys.stderr)
    subprocess.run(["rm", "-rf", a.cache])
    print("Machine: %d CPUs, %s; servers on CPU %s, probe and load on CPU %s; %d keys; median of %d trials\n"
          % (os.cpu_count(), cpu_model(), SERVER_CORE, CLIENT_CORE, a.keys, a.trials))
    print("| scenario | goblin worst ms | redis worst ms | goblin p99.9 ms | redis p99.9 ms |")
    print("|---|---|---|---|---|")
    for name in names:
        med = {k: (statistics.median(w for w, _ in res[(name, k)]), statistics.median(p for _, p in res[(name, k)]))
               for k in SERVERS}
        print("| %s | %.2f | %.2f | %.2f | %.2f |" % (name, med["goblin"][0] * 1e3, med["redis"][0] * 1e3,
                                                       med["goblin"][1] * 1e3, med["redis"][1] * 1e3))


if __name__ == "__main__":
    main()
