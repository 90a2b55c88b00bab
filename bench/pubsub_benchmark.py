#!/usr/bin/env python3
"""Pub/sub: goblin-core against redis-server in the same run, rounds
interleaved (goblin, redis, goblin, ...), medians over the rounds.

    GOBLIN_SERVER=build/goblin-core /usr/bin/python3 bench/pubsub_benchmark.py [--rounds 5] [--samples 2000]

Measures, over a Unix socket and TCP:
  latency   publish-to-receive of one subscriber: the time from sending
            PUBLISH to the subscriber's socket holding the whole message
            (p50, p99 of --samples messages, one at a time);
  fan-out   the same to the last of 1, 10 and 100 subscribers of a channel;
  publish   PUBLISH throughput at pipeline 64 (16-byte payloads) with one
            subscriber draining its socket on a thread: messages/s that the
            publisher got replies for.

The clients are Python raw sockets on this machine: absolute latencies
include the client's own cost (tens of microseconds) and are for the
comparison, which runs the same code against both servers. The ring
transport has no subscriber path yet (docs/pubsub.md), so no ring row.
"""
import argparse
import os
import select
import socket
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "integration"))
import gbtest  # noqa: E402
from gbtest import Server, encode  # noqa: E402


def connect(srv, tcp):
    if tcp:
        s = socket.create_connection(("127.0.0.1", srv.port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    else:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(srv.sock)
    return s


def recv_exact(s, n, buf=b""):
    while len(buf) < n:
        d = s.recv(1 << 16)
        if not d:
            raise EOFError
        buf += d
    return buf[n:]


def subscribe(srv, tcp, channel):
    s = connect(srv, tcp)
    s.sendall(encode("subscribe", channel))
    conf = b"*3\r\n$9\r\nsubscribe\r\n$%d\r\n%s\r\n:1\r\n" % (len(channel), channel)
    recv_exact(s, len(conf))
    return s


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100.0 * len(xs)))]


def fanout_latency(srv, tcp, nsubs, samples):
    ch = b"bench"
    subs = [subscribe(srv, tcp, ch) for _ in range(nsubs)]
    pub = connect(srv, tcp)
    payload = b"p" * 16
    msg = b"*3\r\n$7\r\nmessage\r\n$5\r\nbench\r\n$16\r\n" + payload + b"\r\n"
    reply = b":%d\r\n" % nsubs
    req = encode("publish", ch, payload)
    out = []
    pending = {s.fileno(): (s, b"") for s in subs}
    for _ in range(samples):
        t0 = time.perf_counter_ns()
        pub.sendall(req)
        left = {s.fileno(): s for s in subs}
        bufs = {}
        while left:
            r, _, _ = select.select(list(left.values()), [], [], 10)
            if not r:
                raise TimeoutError("no message within 10 s")
            for s in r:
                b = bufs.get(s.fileno(), b"") + s.recv(1 << 16)
                if len(b) >= len(msg):
                    del left[s.fileno()]
                else:
                    bufs[s.fileno()] = b
        out.append(time.perf_counter_ns() - t0)
        recv_exact(pub, len(reply))
    del pending
    for s in subs + [pub]:
        s.close()
    return out


def publish_throughput(srv, tcp, seconds=1.0, depth=64):
    ch = b"tp"
    sub = subscribe(srv, tcp, ch)
    stop = threading.Event()

    def drain():
        sub.settimeout(0.2)
        while not stop.is_set():
            try:
                if not sub.recv(1 << 20):
                    return
            except socket.timeout:
                pass
    th = threading.Thread(target=drain, daemon=True)
    th.start()
    pub = connect(srv, tcp)
    batch = encode("publish", ch, b"x" * 16) * depth
    reply = b":1\r\n" * depth
    n = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        pub.sendall(batch)
        recv_exact(pub, len(reply))
        n += depth
    rate = n / (time.perf_counter() - t0)
    stop.set()
    th.join()
    pub.close()
    sub.close()
    return rate


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--samples", type=int, default=2000)
    a = ap.parse_args()
    servers = {"goblin": Server("goblin"), "redis": Server("redis")}
    results = {}  # (metric, kind) -> [values per round]
    try:
        for rnd in range(a.rounds):
            for kind in ("goblin", "redis"):
                srv = servers[kind]
                for tcp in (False, True):
                    tname = "tcp" if tcp else "unix"
                    for nsubs in (1, 10, 100):
                        samples = a.samples if nsubs == 1 else max(200, a.samples // (nsubs // 5 + 1))
                        lat = fanout_latency(srv, tcp, nsubs, samples)
                        results.setdefault(("%s fan-out %d p50 us" % (tname, nsubs), kind), []).append(
                            pct(lat, 50) / 1000)
                        results.setdefault(("%s fan-out %d p99 us" % (tname, nsubs), kind), []).append(
                            pct(lat, 99) / 1000)
                    results.setdefault(("%s PUBLISH pipeline 64, msg/s" % tname, kind), []).append(
                        publish_throughput(srv, tcp))
            print("round %d/%d done" % (rnd + 1, a.rounds), file=sys.stderr)
    finally:
        for s in servers.values():
            s.cleanup()
    metrics = []
    for (m, _k) in results:
        if m not in metrics:
            metrics.append(m)
    print("| metric (median of %d rounds) | goblin-core | redis-server | goblin/redis |" % a.rounds)
    print("|---|---:|---:|---:|")
    for m in metrics:
        g = statistics.median(results[(m, "goblin")])
        r = statistics.median(results[(m, "redis")])
        print("| %s | %.1f | %.1f | %.2f |" % (m, g, r, g / r if r else float("nan")))


if __name__ == "__main__":
    main()
