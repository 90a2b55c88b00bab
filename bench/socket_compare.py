#!/usr/bin/env python3
"""goblin-core vs redis-server over the Unix socket, measured side by side.

    /usr/bin/python3 bench/socket_compare.py --goblin build-release/goblin-core \
        [--redis /usr/bin/redis-server] [--trials 3] [--svg docs/img/socket-throughput.svg]

1. redis-benchmark -t set,get,incr at pipeline 1 and 64 over the Unix socket,
   random keys (-r 100000), server pinned to SERVER_CORE (default 0) and the
   benchmark to CLIENT_CORE (default 1) with taskset. Each row is the median
   of --trials runs; the servers alternate so drift hits both alike.
2. Bytes per key for 1M small string keys ("key:00000001" -> "xxx"), from
   INFO used_memory and from RSS, each measured as the delta over an empty
   server.

Prints Markdown tables (and --csv rows); --svg writes a bar chart of the
goblin/redis throughput ratios.
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
import time

SERVER_CORE = os.environ.get("SERVER_CORE", "0")
CLIENT_CORE = os.environ.get("CLIENT_CORE", "1")


class Server:
    def __init__(self, binary, kind):
        self.dir = tempfile.mkdtemp(prefix="gbbench-")
        self.sock = os.path.join(self.dir, "s.sock")
        args = ["taskset", "-c", self.server_cores(), binary, "--port", "0", "--unixsocket", self.sock,
                "--save", "", "--appendonly", "no", "--dir", self.dir]
        if kind != "redis":
            args += ["--rings", "0"]
        args += self.start_args()
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(300):
            try:
                if self.call(b"PING") == b"+PONG\r\n":
                    return
            except OSError:
                pass
            time.sleep(0.02)
        raise RuntimeError("%s did not start" % binary)

    def start_args(self):
        """More arguments for the server (a subclass's: TLS ports)."""
        return []

    def server_cores(self):
        """The CPUs the server process may use (taskset -c)."""
        return SERVER_CORE

    def call(self, *args):
        s = socket.socket(socket.AF_UNIX)
        s.connect(self.sock)
        s.sendall(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args))
        data = b""
        while not data.endswith(b"\r\n") or (data.startswith(b"$") and len(data) < int(data[1:data.index(b"\r")]) + 5):
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            data += chunk
        s.close()
        return data

    def info(self, field):
        text = self.call(b"INFO", b"memory").decode()
        return int(re.search(r"^%s:(\d+)" % field, text, re.M).group(1))

    def rss(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1)) * 1024

    def cpu_seconds(self):
        """User + system CPU time of the server process so far."""
        with open("/proc/%d/stat" % self.proc.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def cpu_model():
    """The CPU's model name (/proc/cpuinfo), for the tables' machine line."""
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"model name\s*:\s*(.*)", f.read())
    except OSError:
        return "unknown"
    return m.group(1) if m else "unknown"


def redis_benchmark(sock, tests, pipeline, n):
    out = subprocess.run(["taskset", "-c", CLIENT_CORE, "redis-benchmark", "-s", sock, "-t", tests, "-P",
                          str(pipeline), "-n", str(n), "-r", "100000", "-q"], capture_output=True, text=True).stdout
    rates = {}
    for line in out.replace("\r", "\n").splitlines():
        m = re.match(r"^(\w+): ([\d.]+) requests per second", line.strip())
        if m:
            rates[m.group(1)] = float(m.group(2))
    return rates


def load_keys(server, n):
    s = socket.socket(socket.AF_UNIX)
    s.connect(server.sock)
    batch = 10000
    for start in range(0, n, batch):
        cmds = b"".join(b"*3\r\n$3\r\nSET\r\n$12\r\nkey:%08d\r\n$3\r\nxxx\r\n" % i for i in range(start, min(n, start + batch)))
        s.sendall(cmds)
        need = min(n, start + batch) - start
        got = b""
        while got.count(b"\r\n") < need:
            got += s.recv(1 << 20)
    s.close()


def svg_bars(path, rows, title, left=150):
    """rows: [(label, ratio)]; a horizontal bar chart with a 1.0x line
    (`left`: the room for the labels, in pixels)."""
    w, bar_h = 640 + left - 150, 26
    h = 60 + bar_h * len(rows)
    scale = (w - left - 40) / max(2.0, max(r for _, r in rows) * 1.1)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="13">' % (w, h),
           '<text x="10" y="22" font-size="15">%s</text>' % title]
    for i, (label, ratio) in enumerate(rows):
        y = 40 + i * bar_h
        color = "#2e7d32" if ratio >= 1.0 else "#c62828"
        out.append('<text x="10" y="%d">%s</text>' % (y + 17, label))
        out.append('<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>' % (left, y + 4, ratio * scale, bar_h - 8, color))
        out.append('<text x="%.1f" y="%d">%.2fx</text>' % (left + ratio * scale + 5, y + 17, ratio))
    x1 = left + scale
    out.append('<line x1="%.1f" y1="34" x2="%.1f" y2="%d" stroke="#555" stroke-dasharray="4 3"/>' % (x1, x1, h - 10))
    out.append('<text x="%.1f" y="%d" fill="#555">redis = 1.0x</text>' % (x1 + 4, h - 12))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--goblin", required=True)
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--keys", type=int, default=1000000)
    ap.add_argument("--svg")
    ap.add_argument("--csv", action="store_true")
    a = ap.parse_args()

    servers = {"goblin": a.goblin, "redis": a.redis}
    results = {}  # (server, pipeline, test) -> [rates]
    cpu = {}  # (server, pipeline, test) -> [server CPU microseconds per request]
    for trial in range(a.trials):
        order = ["goblin", "redis"] if trial % 2 == 0 else ["redis", "goblin"]
        for name in order:
            srv = Server(servers[name], name)
            try:
                for pipeline, n in ((1, 200000), (64, 2000000)):
                    for test in ("set", "get", "incr"):
                        c0 = srv.cpu_seconds()
                        for t, rate in redis_benchmark(srv.sock, test, pipeline, n).items():
                            results.setdefault((name, pipeline, t), []).append(rate)
                            cpu.setdefault((name, pipeline, t), []).append((srv.cpu_seconds() - c0) * 1e6 / n)
            finally:
                srv.stop()
            print("trial %d %s done" % (trial + 1, name), file=sys.stderr)

    mem = {}
    for name in ("goblin", "redis"):
        srv = Server(servers[name], name)
        try:
            used0, rss0 = srv.info("used_memory"), srv.rss()
            load_keys(srv, a.keys)
            time.sleep(0.5)
            used1, rss1 = srv.info("used_memory"), srv.rss()
            mem[name] = ((used1 - used0) / a.keys, (rss1 - rss0) / a.keys)
        finally:
            srv.stop()

    model = cpu_model()
    if a.csv:
        print("test,pipeline,goblin_rps,redis_rps,ratio")
    else:
        print("Machine: %d CPUs, %s, kernel %s; server on CPU %s, redis-benchmark on CPU %s; median of %d trials\n"
              % (os.cpu_count(), model, os.uname().release, SERVER_CORE, CLIENT_CORE, a.trials))
        print("| test | pipeline | goblin-core req/s | redis-server req/s | goblin / redis "
              "| goblin CPU µs/req | redis CPU µs/req | CPU redis / goblin |")
        print("|---|---|---|---|---|---|---|---|")
    bars = []
    for pipeline in (1, 64):
        for test in ("SET", "GET", "INCR"):
            g = statistics.median(results.get(("goblin", pipeline, test), [0]))
            r = statistics.median(results.get(("redis", pipeline, test), [0]))
            gc = statistics.median(cpu.get(("goblin", pipeline, test), [0]))
            rc = statistics.median(cpu.get(("redis", pipeline, test), [0]))
            ratio = g / r if r else 0
            bars.append(("%s -P %d" % (test, pipeline), ratio))
            if a.csv:
                print("%s,%d,%.0f,%.0f,%.3f" % (test, pipeline, g, r, ratio))
            else:
                print("| %s | %d | %.0f | %.0f | %.2fx | %.2f | %.2f | %.2fx |"
                      % (test, pipeline, g, r, ratio, gc, rc, rc / gc if gc else 0))
    if not a.csv:
        print("\n| server | bytes/key (used_memory) | bytes/key (RSS) |")
        print("|---|---|---|")
        for name in ("goblin", "redis"):
            print("| %s | %.1f | %.1f |" % (name, mem[name][0], mem[name][1]))
        g, r = mem["goblin"], mem["redis"]
        print("\ngoblin/redis memory per key: %.2fx (used_memory), %.2fx (RSS)" % (g[0] / r[0], g[1] / r[1]))
    if a.svg:
        svg_bars(a.svg, bars, "goblin-core / redis-server throughput, Unix socket (redis-benchmark)")


if __name__ == "__main__":
    main()
