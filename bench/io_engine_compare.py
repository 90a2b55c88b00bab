#!/usr/bin/env python3
"""goblin-core on io_uring, goblin-core on libuv and redis-server, side by
side at pipeline 1 (and 64), over the Unix socket and TCP (docs/io_uring.md,
docs/benchmarks.md "Socket I/O engines").

    /usr/bin/python3 bench/io_engine_compare.py --goblin build-release/goblin-core \\
        --lean-load build-release/lean_load [--redis /usr/bin/redis-server] [--rounds 3] \\
        [--requests 100000] [--conns 50,500] [--transports unix,tcp] [--commands get,set,...]

Each server is pinned to SERVER_CORE (default 0), lean_load (bench/lean_load.c)
to CLIENT_CORE (default 1). For every row the three servers run in turn,
round after round (interleaved, so drift hits all alike); the table shows
medians over the rounds of:
  req/s            lean_load's rate
  cpu us/req       the server's CPU (utime+stime from /proc/PID/stat) per request
  sys/req          the server's system calls per request (perf stat -e
                   raw_syscalls:sys_enter on the server's pid during the run;
                   "-" where perf cannot count them)
  client share     lean_load's CPU share of its core (near 1.0: the client
                   set the pace, and the server's CPU per request is the
                   figure to read)
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import socket_compare  # noqa: E402

SERVER_CORE = os.environ.get("SERVER_CORE", "0")
CLIENT_CORE = os.environ.get("CLIENT_CORE", "1")
SCRIPT = "return redis.call('GET', KEYS[1])"

COMMANDS = {
    "get": ["GET", "key:__rand_int__"],
    "set": ["SET", "key:__rand_int__", "xxx"],
    "incr": ["INCR", "counter:__rand_int__"],
    "lpush/rpop": ["LPUSH", "queue", "item", ";", "RPOP", "queue"],
    "evalsha": None,  # filled with the script's digest
}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server(socket_compare.Server):
    """socket_compare's server (cpu_seconds, stop) listening on TCP too."""

    def __init__(self, name, binary, args):
        self.name = name
        self.dir = tempfile.mkdtemp(prefix="gbio-")
        self.sock = os.path.join(self.dir, "s.sock")
        self.port = free_port()
        cmd = ["taskset", "-c", SERVER_CORE, binary, "--port", str(self.port), "--bind", "127.0.0.1",
               "--unixsocket", self.sock, "--save", "", "--appendonly", "no", "--dir", self.dir,
               "--maxclients", "2000"] + args
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(300):
            try:
                if self.call("PING") == b"+PONG\r\n":
                    return
            except OSError:
                pass
            time.sleep(0.02)
        raise RuntimeError("%s did not start" % name)

    def call(self, *args):
        s = socket.socket(socket.AF_UNIX)
        s.connect(self.sock)
        s.sendall(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a.encode()), a.encode()) for a in args))
        time.sleep(0.01)
        out = s.recv(1 << 16)
        s.close()
        return out



def count_syscalls_start(pid):
    if not shutil.which("perf"):
        return None
    return subprocess.Popen(["perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter", "-p", str(pid)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def count_syscalls_stop(p):
    if p is None:
        return None
    p.send_signal(2)
    _, err = p.communicate()
    for line in err.splitlines():
        parts = line.split(",")
        if len(parts) > 2 and "raw_syscalls:sys_enter" in parts[2] and parts[0].isdigit():
            return int(parts[0])
    return None


def one_run(srv, lean_load, transport, conns, pipeline, requests, argv):
    target = ["--socket", srv.sock] if transport == "unix" else ["--port", str(srv.port)]
    cmd = ["taskset", "-c", CLIENT_CORE, lean_load] + target + ["--clients", str(conns), "--pipeline",
                                                                   str(pipeline), "--requests", str(requests),
                                                                   "--"] + argv
    perf = count_syscalls_start(srv.proc.pid)
    time.sleep(0.1)  # perf attached
    cpu0 = srv.cpu_seconds()
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    cpu = srv.cpu_seconds() - cpu0
    calls = count_syscalls_stop(perf)
    m = re.search(r"requests=(\d+) seconds=([\d.]+) rate=([\d.]+) client_cpu_us_per_req=([\d.]+) "
                  r"client_cpu_share=([\d.]+)", out.stdout)
    if out.returncode != 0 or not m:
        raise RuntimeError("lean_load failed on %s: %s %s" % (srv.name, out.stdout[-300:], out.stderr[-300:]))
    n = int(m.group(1))
    return {"rate": float(m.group(3)), "cpu_us": cpu * 1e6 / n, "share": float(m.group(5)),
            "sys": None if calls is None else calls / n}


def med(rows, key):
    vals = [r[key] for r in rows if r[key] is not None]
    return statistics.median(vals) if vals else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--goblin", required=True)
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--lean-load", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--requests", type=int, default=100000)
    ap.add_argument("--conns", default="50,500")
    ap.add_argument("--transports", default="unix,tcp")
    ap.add_argument("--commands", default=",".join(COMMANDS))
    ap.add_argument("--pipeline64", action="store_true", help="also GET and SET at pipeline 64 (50 connections)")
    a = ap.parse_args()
    servers = [Server("goblin io_uring", a.goblin, ["--io-engine", "io_uring", "--rings", "0"]),
               Server("goblin libuv", a.goblin, ["--io-engine", "libuv", "--rings", "0"]),
               Server("redis-server", a.redis, ["--protected-mode", "no"])]
    try:
        sha = None
        for s in servers:
            reply = s.call("SCRIPT", "LOAD", SCRIPT)
            sha = reply.split(b"\r\n")[1].decode()
        commands = dict(COMMANDS)
        commands["evalsha"] = ["EVALSHA", sha, "1", "key:__rand_int__"]
        rows = []
        for transport in a.transports.split(","):
            for conns in [int(c) for c in a.conns.split(",")]:
                for name in a.commands.split(","):
                    rows.append((transport, conns, 1, name))
        if a.pipeline64:
            for transport in a.transports.split(","):
                for name in ("get", "set"):
                    rows.append((transport, 50, 64, name))
        print("machine: %s, server on CPU %s, lean_load on CPU %s; medians of %d rounds, %d requests each" %
              (platform_line(), SERVER_CORE, CLIENT_CORE, a.rounds, a.requests))
        print()
        print("| transport | conns | P | command | server | req/s | cpu us/req | sys/req | client share | cpu vs redis |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for transport, conns, pipeline, name in rows:
            results = {s.name: [] for s in servers}
            for _ in range(a.rounds):
                for s in servers:
                    requests = a.requests * (10 if pipeline > 1 else 1)
                    results[s.name].append(one_run(s, a.lean_load, transport, conns, pipeline, requests,
                                                   commands[name]))
            redis_cpu = med(results["redis-server"], "cpu_us")
            for s in servers:
                r = results[s.name]
                sysc = med(r, "sys")
                print("| %s | %d | %d | %s | %s | %.0f | %.2f | %s | %.2f | %.2f |" %
                      (transport, conns, pipeline, name, s.name, med(r, "rate"), med(r, "cpu_us"),
                       "-" if sysc is None else "%.2f" % sysc, med(r, "share"), med(r, "cpu_us") / redis_cpu))
            sys.stdout.flush()
    finally:
        for s in servers:
            s.stop()


def platform_line():
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"model name\s*:\s*(.*)", f.read())
        return "%s, %d CPUs, kernel %s" % (m.group(1) if m else "?", os.cpu_count(), os.uname().release)
    except OSError:
        return "unknown"


if __name__ == "__main__":
    main()
